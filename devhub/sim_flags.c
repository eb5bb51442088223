/* sim_flags: --run-jobs / --kueue / --job-duration / --time-scale for kueue-ks-devhub. */
#include "devhub/sim_flags.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/sim_jobs.h"
#include "devhub/sim_kueue.h"
#include "pkg/util/xalloc.h"

struct simflags_run {
    struct simjobs *jobs;
    struct simkueue *kueue;
};

/* "--name" or "--name=value": NULL when argv[i] is not this flag, else the
 * value (possibly NULL when it must come from the next argument). */
static bool match(const char *arg, const char *name, const char **inline_val)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n))
        return false;
    if (arg[n] == '=') {
        *inline_val = arg + n + 1;
        return true;
    }
    if (!arg[n]) {
        *inline_val = NULL;
        return true;
    }
    return false;
}

int simflags_extract(int *argc, char **argv, struct simflags *f, struct err *e)
{
    memset(f, 0, sizeof(*f));
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, "--")) { /* keep the rest as is */
            while (i < *argc)
                argv[out++] = argv[i++];
            break;
        }
        if (match(a, "--run-jobs", &v) && !v) {
            f->run_jobs = true;
            continue;
        }
        if (match(a, "--kueue", &v) && !v) {
            f->kueue = true;
            continue;
        }
        bool dur = match(a, "--job-duration", &v), scale = !dur && match(a, "--time-scale", &v);
        if (!dur && !scale) {
            argv[out++] = argv[i];
            continue;
        }
        if (!v) {
            if (i + 1 >= *argc)
                return err_set(e, -EINVAL, "%s needs a value", a);
            v = argv[++i];
        }
        if (dur) {
            if (simjobs_parse_duration(v, &f->job_duration) || f->job_duration <= 0)
                return err_set(e, -EINVAL,
                               "--job-duration %s: want a positive duration such as 10s or 1m", v);
        } else {
            char *end;
            errno = 0;
            f->time_scale = strtod(v, &end);
            if (*end || errno || !isfinite(f->time_scale) || f->time_scale <= 0)
                return err_set(e, -EINVAL, "--time-scale %s: want a number > 0 such as 0.1", v);
        }
    }
    *argc = out;
    argv[out] = NULL;
    return 0;
}

void simflags_usage(FILE *out)
{
    fputs("  --run-jobs             worker mode: run Jobs and PyTorchJobs as pods on the nodes\n"
          "  --job-duration D       pod run time when its command names none (default 10s)\n"
          "  --time-scale F         multiply every pod run time by F (e.g. 0.1)\n"
          "  --kueue                hub mode: emulate Kueue (Workloads, quota, admission checks,\n"
          "                         preemption) for Jobs labelled kueue.x-k8s.io/queue-name\n",
          out);
}

int simflags_start(struct simflags_run **out, const struct simflags *f, struct ev_loop *loop,
                   struct hub *hub, const struct logger *lg, struct err *e)
{
    *out = NULL;
    if (!f->run_jobs && !f->kueue)
        return 0;
    struct simflags_run *r = xcalloc(1, sizeof(*r));
    int ret = 0;
    if (f->run_jobs) {
        struct simjobs_opts o = {.loop = loop,
                                 .hub = hub,
                                 .lg = lg,
                                 .default_duration = f->job_duration,
                                 .time_scale = f->time_scale};
        ret = simjobs_start(&r->jobs, &o, e);
    }
    if (!ret && f->kueue) {
        struct simkueue_opts o = {.loop = loop, .hub = hub, .lg = lg};
        ret = simkueue_start(&r->kueue, &o, e);
    }
    if (ret) {
        simflags_stop(r);
        return ret;
    }
    *out = r;
    return 0;
}

void simflags_stop(struct simflags_run *r)
{
    if (!r)
        return;
    simjobs_stop(r->jobs);
    simkueue_stop(r->kueue);
    free(r);
}
