/* The command-line start shared by the subcommands: flags, --help, logging. */
#ifndef KKS_CMD_KUEUE_KS_CLI_H
#define KKS_CMD_KUEUE_KS_CLI_H

#include <ev.h>
#include <stddef.h>

#include "pkg/manager/mgrflags.h"
#include "pkg/util/flags.h"
#include "pkg/util/log.h"

/* cli_parse's answer when the command goes on. */
#define CLI_GO_ON (-1)

/*
 * Apply fl[0..n)'s defaults, then parse argv (no positional arguments).
 * Returns CLI_GO_ON, or the exit code for the command to return:
 *  - 0 after --help: `usage` (what the command does, a blank line and its
 *    "Usage:" line), "Flags:" and the flag list on stdout;
 *  - 2 after reporting a bad command line: through `lg` as "invalid command
 *    line" when lg is given, else as "kueue-ks <name>: <message>" on stderr.
 * `lg`, when given, is first initialised to text at verbosity 0 (stderr);
 * with `mf` (a manager command; lg required), --v and --log-format are then
 * applied to it (a bad format is a bad command line).
 */
int cli_parse(const struct flag *fl, size_t n, int argc, char **argv, const char *name,
              const char *usage, const struct mgr_flag_values *mf, struct logger *lg);

/*
 * The default loop into *loop and a manager with the options of `mf` into *m
 * (lg borrowed, must outlive it), with main's give-back hook (mgr_set_give_back;
 * NULL: none). 0, or -1 after logging "cannot start" (*loop is still set: destroy it).
 */
int cli_mgr_new(const struct mgr_flag_values *mf, const struct logger *lg,
                void (*give_back)(void *ud), struct ev_loop **loop, struct mgr **m);

/* Report a bad command line through `lg`; returns the exit code 2. */
int cli_invalid(const struct logger *lg, const char *msg);

#endif
