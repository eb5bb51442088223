/*
 * kueue-ks: entry point. Subcommands: run (default), agent, status, version.
 */
#include <stdio.h>
#include <string.h>

#include "pkg/util/log.h"

static int usage(FILE *out)
{
    fprintf(out,
            "kueue-ks %s: multi-cluster batch jobs with Kueue\n\n"
            "Usage: kueue-ks <command> [flags]\n\n"
            "Commands:\n"
            "  run       run the controllers against a hub cluster (default)\n"
            "  version   print the version\n\n"
            "Run 'kueue-ks <command> --help' for a command's flags.\n",
            KKS_VERSION);
    return out == stderr ? 2 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("kueue-ks %s\n", KKS_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help"))
        return usage(stdout);
    fprintf(stderr, "kueue-ks: unknown command %s\n", cmd);
    return usage(stderr);
}
