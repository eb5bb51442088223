/*
 * The command-line start shared by the subcommands (cli.h).
 */
#include "cmd/kueue-ks/cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "pkg/util/mtune.h"
#include "pkg/util/xalloc.h"

int cli_invalid(const struct logger *lg, const char *msg)
{
    log_error(lg, "invalid command line", "error", msg);
    return 2;
}

int cli_parse(const struct flag *fl, size_t n, int argc, char **argv, const char *name,
              const char *usage, const struct mgr_flag_values *mf, struct logger *lg)
{
    struct err e;
    err_clear(&e);
    bool help = false;
    if (lg)
        log_init(lg, stderr, 0, LOG_FMT_TEXT);
    if (flags_set_defaults(fl, n, &e) < 0 ||
        flags_parse(fl, n, argc, argv, NULL, NULL, &help, &e) < 0 ||
        (!help && mf && mgr_flags_log_init(mf, lg, stderr, &e) < 0)) {
        if (lg)
            return cli_invalid(lg, e.msg);
        fprintf(stderr, "kueue-ks %s: %s\n", name, e.msg);
        return 2;
    }
    if (help) {
        printf("%s\n\nFlags:\n", usage);
        flags_usage(stdout, fl, n);
        return 0;
    }
    return CLI_GO_ON;
}

int cli_mgr_new(const struct mgr_flag_values *mf, const struct logger *lg,
                void (*give_back)(void *ud), struct ev_loop **loop, struct mgr **m)
{
    struct err e;
    err_clear(&e);
    /* What main's mtune_reexec() left in effect (pkg/util/mtune.h). Unset means it did not
     * execute the program again (privileged, started through the loader, or exec failed). */
    const char *tun = getenv("GLIBC_TUNABLES");
    /* main's JSON trees: a slab pool (pkg/util/slab.h) unless a sanitizer build or the
     * address range could not be reserved. */
    json_malloc_t jm;
    json_get_alloc_funcs(&jm, NULL);
    const char *trees = jm == xmalloc ? "malloc" : "slab pool";
    if (tun)
        log_v(lg, 2, "malloc settings", "GLIBC_TUNABLES", tun, "json_trees", trees);
    else
        log_info(lg, "malloc settings: glibc's defaults (could not execute itself with tuned ones)",
                 "hint", "set GLIBC_TUNABLES=" MTUNE_GLIBC_TUNABLES " in its environment",
                 "json_trees", trees);
    *loop = ev_default_loop(EVFLAG_AUTO);
    struct mgr_options mo;
    mgr_flags_options(mf, &mo);
    if (mgr_new(*loop, &mo, lg, m, &e) < 0) {
        log_error(lg, "cannot start", "error", e.msg);
        return -1;
    }
    mgr_set_give_back(*m, give_back, NULL);
    return 0;
}
