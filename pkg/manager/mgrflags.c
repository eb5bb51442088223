/*
 * mgrflags: the manager flags of `kueue-ks run` and `kueue-ks agent`.
 */
#include "pkg/manager/mgrflags.h"

#include <errno.h>
#include <string.h>

/* What differs between the commands. */
struct mgr_flags_text {
    const char *kubeconfig;
    const char *context;
    const char *leader_elect;
    const char *le_namespace;
    const char *le_id;
    const char *qps;
    const char *burst;
    bool lease_timing;
};

static const struct mgr_flags_text mgr_flags_texts[] = {
    [MGR_FLAGS_RUN] =
        {
            .kubeconfig =
                "Path to the hub kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)",
            .context = "Kubeconfig context to use",
            .leader_elect =
                "Run controllers only while holding the leader Lease (for several replicas)",
            .le_namespace = "Namespace of the leader Lease (default: the kubeconfig context's "
                            "namespace, else kueue-ks-system)",
            .le_id = "kueue-ks-leader",
            .qps = "Client-side request rate limit to the API server",
            .burst = "Client-side request burst to the API server",
            .lease_timing = true,
        },
    [MGR_FLAGS_AGENT] =
        {
            .kubeconfig = "Kubeconfig of the cluster to watch (default: $KUBECONFIG, "
                          "~/.kube/config, in-cluster)",
            .context = "Kubeconfig context of the watched cluster",
            .leader_elect = "Report only while holding the leader Lease (for several replicas)",
            .le_namespace = "Namespace of the leader Lease (default: the kubeconfig context's "
                            "namespace)",
            .le_id = "kueue-ks-agent",
            .qps = "Client-side request rate limit to the API servers",
            .burst = "Client-side request burst to the API servers",
            .lease_timing = false,
        },
};

size_t mgr_flags(struct mgr_flag_values *o, enum mgr_flags_cmd cmd, struct flag *fl)
{
    const struct mgr_flags_text *t = &mgr_flags_texts[cmd == MGR_FLAGS_AGENT];
    size_t n = 0;
    fl[n++] = (struct flag){"kubeconfig", FLAG_STRING, &o->kubeconfig, t->kubeconfig, NULL};
    fl[n++] = (struct flag){"context", FLAG_STRING, &o->context, t->context, NULL};
    fl[n++] = (struct flag){"metrics-bind-address", FLAG_STRING, &o->metrics_bind,
                            "Address the /metrics endpoint binds to; 0 disables it", ":8080"};
    fl[n++] = (struct flag){"health-probe-bind-address", FLAG_STRING, &o->health_bind,
                            "Address the /healthz and /readyz endpoints bind to; 0 disables them",
                            ":8081"};
    fl[n++] = (struct flag){"leader-elect", FLAG_BOOL, &o->leader_elect, t->leader_elect, "false"};
    fl[n++] = (struct flag){"leader-election-namespace", FLAG_STRING, &o->le_namespace,
                            t->le_namespace, ""};
    fl[n++] = (struct flag){"leader-election-id", FLAG_STRING, &o->le_id,
                            "Name of the leader Lease", t->le_id};
    if (t->lease_timing) {
        fl[n++] = (struct flag){"leader-election-lease-duration", FLAG_DURATION, &o->lease_duration,
                                "How long a leader's Lease is valid without renewal", "15s"};
        fl[n++] = (struct flag){"leader-election-renew-deadline", FLAG_DURATION, &o->renew_deadline,
                                "How long the leader retries renewing before giving up", "10s"};
        fl[n++] = (struct flag){"leader-election-retry-period", FLAG_DURATION, &o->retry_period,
                                "Interval between leader election attempts", "2s"};
    }
    fl[n++] = (struct flag){"startup-timeout", FLAG_DURATION, &o->startup_timeout,
                            "Give up (exit 1) when the API server cannot be reached at start for "
                            "this long; 0 keeps retrying with backoff",
                            "0s"};
    fl[n++] = (struct flag){"qps", FLAG_DOUBLE, &o->qps, t->qps, "1000"};
    fl[n++] = (struct flag){"burst", FLAG_INT, &o->burst, t->burst, "1000"};
    fl[n++] = (struct flag){"http2", FLAG_BOOL, &o->http2,
                            "Multiplex requests and watches over one HTTP/2 connection per API "
                            "server where it speaks h2 (TLS); false: HTTP/1.1, a connection each",
                            "true"};
    fl[n++] = (struct flag){"v", FLAG_INT, &o->verbosity,
                            "Log verbosity (0 = info; higher is more detail)", "0"};
    fl[n++] = (struct flag){"log-format", FLAG_STRING, &o->log_format,
                            "Log format: text (key=value) or json", "text"};
    return n;
}

void mgr_flags_options(const struct mgr_flag_values *o, struct mgr_options *out)
{
    memset(out, 0, sizeof *out);
    out->kubeconfig = o->kubeconfig;
    out->context = o->context;
    out->metrics_bind = o->metrics_bind;
    out->health_bind = o->health_bind;
    out->leader_elect = o->leader_elect;
    out->le_namespace = o->le_namespace;
    out->le_id = o->le_id;
    out->lease_duration_s = o->lease_duration;
    out->renew_deadline_s = o->renew_deadline;
    out->retry_period_s = o->retry_period;
    out->startup_timeout_s = o->startup_timeout;
    out->qps = o->qps;
    out->burst = o->burst;
    out->http1_only = !o->http2;
}

int mgr_flags_log_init(const struct mgr_flag_values *o, struct logger *lg, FILE *out, struct err *e)
{
    enum log_format lf;
    if (!o->log_format || log_parse_format(o->log_format, &lf) < 0)
        return err_set(e, -EINVAL, "--log-format must be text or json");
    log_init(lg, out, o->verbosity, lf);
    return 0;
}
