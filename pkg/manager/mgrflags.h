/*
 * mgrflags: the manager's command-line flags, defined once for every command
 * that runs a manager (`kueue-ks run`, `kueue-ks agent`): a fragment of a
 * pkg/util/flags table, in the way of quota_flags() (controllers/quota), plus
 * the conversion of the parsed values to struct mgr_options and a logger.
 *
 * Defaults and help texts differ per command where the commands differ (the
 * Lease name, what the kubeconfig points at, the Lease timing flags only for
 * run); everything else is the same text for both.
 *
 * Use: zero a struct mgr_flag_values, mgr_flags() into the command's table,
 * flags_set_defaults + flags_parse on the whole table, mgr_flags_options(),
 * and flags_free() on the table at exit (it frees the strings here).
 */
#ifndef KKS_MANAGER_MGRFLAGS_H
#define KKS_MANAGER_MGRFLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "pkg/manager/manager.h"
#include "pkg/util/err.h"
#include "pkg/util/flags.h"
#include "pkg/util/log.h"

/* The flag targets (strings owned by the flag table: flags_free). */
struct mgr_flag_values {
    char *kubeconfig;       /* --kubeconfig */
    char *context;          /* --context */
    char *metrics_bind;     /* --metrics-bind-address */
    char *health_bind;      /* --health-probe-bind-address */
    bool leader_elect;      /* --leader-elect */
    char *le_namespace;     /* --leader-election-namespace */
    char *le_id;            /* --leader-election-id */
    double lease_duration;  /* --leader-election-lease-duration (run only; agent: 0) */
    double renew_deadline;  /* --leader-election-renew-deadline (run only) */
    double retry_period;    /* --leader-election-retry-period (run only) */
    double startup_timeout; /* --startup-timeout (0: keep trying) */
    double qps;             /* --qps */
    int burst;              /* --burst */
    bool http2;             /* --http2 (false: HTTP/1.1 only) */
    int verbosity;          /* --v */
    char *log_format;       /* --log-format */
};

/* The command the flags are for. */
enum mgr_flags_cmd {
    MGR_FLAGS_RUN,   /* kueue-ks run: Lease kueue-ks-leader, Lease timing flags */
    MGR_FLAGS_AGENT, /* kueue-ks agent: Lease kueue-ks-agent, no Lease timing flags */
};

/* Room a table needs for the fragment (the largest command's count). */
#define MGR_FLAGS_MAX 16
/* The fragment's first MGR_FLAGS_NCONN entries are --kubeconfig and
 * --context: a command may list its own flags between them and the rest. */
#define MGR_FLAGS_NCONN 2

/*
 * Fill fl[0..n) with the manager flags of `cmd` targeting `o` (borrowed:
 * must outlive the table's use) and return n (<= MGR_FLAGS_MAX).
 */
size_t mgr_flags(struct mgr_flag_values *o, enum mgr_flags_cmd cmd, struct flag *fl);

/* The parsed values as manager options; out's strings are borrowed from `o`. */
void mgr_flags_options(const struct mgr_flag_values *o, struct mgr_options *out);

/* log_init(lg, out, --v, --log-format). 0, or -EINVAL (lg untouched) with
 * "--log-format must be text or json". */
int mgr_flags_log_init(const struct mgr_flag_values *o, struct logger *lg, FILE *out,
                       struct err *e);

#endif
