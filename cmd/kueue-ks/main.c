/*
 * kueue-ks: entry point. Subcommands: run (default), agent, status, explain, version.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cmd/kueue-ks/cmds.h"
#include "pkg/json/jsonx.h"
#include "pkg/util/mtune.h"
#include "pkg/util/slab.h"

/* The sanitizer and valgrind builds keep malloc's blocks, whose misuse those tools see. */
#ifndef __has_feature
#define __has_feature(x) 0 /* gcc: __SANITIZE_ADDRESS__ says it */
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer) || defined(KKS_NO_SLAB)
#define USE_SLAB 0
#else
#define USE_SLAB 1
#endif

#if USE_SLAB
/*
 * jansson's allocator hooks take no context argument, so the pool its trees are built in is
 * the one global of the process, set once here before any JSON value exists and never freed
 * (trees may be released until exit).
 */
static struct slab_pool *json_pool;

/* Set by json_lifetime while a long-lived value is made (jsonx.h). */
static bool json_long;

static void *json_pool_alloc(size_t n)
{
    return json_long ? slab_alloc_long(json_pool, n) : slab_alloc(json_pool, n);
}

static void json_pool_release(void *p)
{
    slab_release(json_pool, p);
}
#endif

/* The commands' allocator hint (jx_lifetime_fn): long-lived values in slabs of their own. */
static void json_lifetime(bool long_lived)
{
#if USE_SLAB
    json_long = long_lived;
#else
    (void)long_lived;
#endif
}

/* The commands' give-back hook (cmds.h): the pool is main's. */
static void json_give_back(void *ud)
{
    (void)ud;
#if USE_SLAB
    if (json_pool)
        slab_give_back(json_pool);
#endif
}

/* JSON trees in a slab pool (pkg/util/slab.h); malloc's when the range cannot be reserved. */
static void use_json_pool(void)
{
    jx_use_xalloc();
#if USE_SLAB
    /* On failure (no room for the range: docs/operations.md) the trees stay malloc's, which
     * `--v 2` shows (json_trees="malloc"). */
    if (slab_pool_new(0, SLAB_KEEP_EMPTY_DEFAULT, &json_pool) == 0)
        json_set_alloc_funcs(json_pool_alloc, json_pool_release);
#endif
}

static int usage(FILE *out)
{
    fprintf(out,
            "kueue-ks %s: multi-cluster batch jobs with Kueue\n\n"
            "Usage: kueue-ks <command> [flags]\n\n"
            "Commands:\n"
            "  run       run the controllers against a hub cluster (default)\n"
            "  agent     report a cluster's nodes and pod requests as ClusterMetrics\n"
            "  status    summarise the hub's clusters, quotas and workloads\n"
            "  explain   why a job runs where it does, or why it does not (per cluster)\n"
            "  version   print the version\n\n"
            "Run 'kueue-ks <command> --help' for a command's flags.\n",
            KKS_VERSION);
    return out == stderr ? 2 : 0;
}

int main(int argc, char **argv)
{
    use_json_pool();
    if (argc < 2 || argv[1][0] == '-') {
        if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
            return usage(stdout);
        if (argc >= 2 && !strcmp(argv[1], "--version")) {
            printf("kueue-ks %s\n", KKS_VERSION);
            return 0;
        }
        /* No subcommand: run, like the Go operator's single-command binary. */
        mtune_reexec(argv);
        return cmd_run(argc - 1, argv + 1, json_give_back, json_lifetime);
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "version")) {
        printf("kueue-ks %s\n", KKS_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "help"))
        return usage(stdout);
    if (!strcmp(cmd, "run") || !strcmp(cmd, "agent"))
        mtune_reexec(argv); /* returns when it is not needed or not possible */
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 2, argv + 2, json_give_back, json_lifetime);
    if (!strcmp(cmd, "agent"))
        return cmd_agent(argc - 2, argv + 2, json_give_back, json_lifetime);
    if (!strcmp(cmd, "status"))
        return cmd_status(argc - 2, argv + 2);
    if (!strcmp(cmd, "explain"))
        return cmd_explain(argc - 2, argv + 2);
    fprintf(stderr, "kueue-ks: unknown command \"%s\"\n\n", cmd);
    return usage(stderr);
}
