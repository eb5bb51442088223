/*
 * kueue-ks: entry point. Subcommands: run (default), agent, status, explain, version.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/kueue-ks/cmds.h"
#include "pkg/json/jsonx.h"
#include "pkg/util/mtune.h"

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
    jx_use_xalloc();
    if (argc < 2 || argv[1][0] == '-') {
        if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
            return usage(stdout);
        if (argc >= 2 && !strcmp(argv[1], "--version")) {
            printf("kueue-ks %s\n", KKS_VERSION);
            return 0;
        }
        /* No subcommand: run, like the Go operator's single-command binary. */
        mtune_reexec(argv);
        return cmd_run(argc - 1, argv + 1);
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
        return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "agent"))
        return cmd_agent(argc - 2, argv + 2);
    if (!strcmp(cmd, "status"))
        return cmd_status(argc - 2, argv + 2);
    if (!strcmp(cmd, "explain"))
        return cmd_explain(argc - 2, argv + 2);
    fprintf(stderr, "kueue-ks: unknown command \"%s\"\n\n", cmd);
    return usage(stderr);
}
