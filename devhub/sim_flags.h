/*
 * sim_flags: the devhub binary's simulator flags, kept out of
 * cmd/kueue-ks-devhub/main.c so that file only needs three calls:
 *
 *   --run-jobs          run the job runner (devhub/sim_jobs.h): worker mode
 *   --kueue             run the Kueue emulator (devhub/sim_kueue.h): hub mode
 *   --job-duration D    default pod run time when a pod names none (Go
 *                       duration or seconds; default 10s)
 *   --time-scale F      multiply every pod run time by F > 0 (default 1)
 *
 * Both "--flag value" and "--flag=value" forms are accepted.
 */
#ifndef KKS_DEVHUB_SIM_FLAGS_H
#define KKS_DEVHUB_SIM_FLAGS_H

#include <ev.h>
#include <stdbool.h>
#include <stdio.h>

#include "devhub/hub.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"

struct simflags {
    bool run_jobs;
    bool kueue;
    double job_duration; /* seconds, 0 = default */
    double time_scale;   /* 0 = default */
};

/* Remove the simulator flags from argv (argc updated, argv[argc] stays NULL)
 * and record them in *f (zeroed first). 0, or -EINVAL with a message for a
 * missing or bad value. */
int simflags_extract(int *argc, char **argv, struct simflags *f, struct err *e);

/* The flags' lines for --help. */
void simflags_usage(FILE *out);

struct simflags_run;
/* Start the simulators f asks for on loop/hub. *out is NULL when none. */
int simflags_start(struct simflags_run **out, const struct simflags *f, struct ev_loop *loop,
                   struct hub *hub, const struct logger *lg, struct err *e);
void simflags_stop(struct simflags_run *r); /* NULL ok */

#endif
