/*
 * stret: bench-dispatch's status-return figures (issue 12 goal 6), from watch events only.
 *
 * Per job i: every change of its worker copy's status counts (active, ready, succeeded,
 * failed), as the worker's watch delivers the copy (the first event sets the starting
 * counts: a new copy is not a change), is returned when the hub job's
 * kueue-ks.io/remote-status annotation shows those counts or a later change's (the hub
 * may skip intermediate counts: a later state covers the earlier ones); the latency is from
 * the worker event to the hub event. The copy turning terminal (condition Complete or
 * Failed True) is returned when the hub job's own status shows Complete or Failed True.
 * Times are the caller's (monotonic seconds).
 */
#ifndef KKS_BENCH_DISPATCH_STRET_H
#define KKS_BENCH_DISPATCH_STRET_H

#include <jansson.h>

struct stret;

/* For jobs 0..n-1. */
struct stret *stret_new(int n);
void stret_free(struct stret *s);
/* A watch event (added or modified) of job i's copy on a worker, at time t. */
void stret_copy(struct stret *s, int i, const json_t *copy, double t);
/* A watch event of hub job i at time t. */
void stret_hub(struct stret *s, int i, const json_t *job, double t);
/* How many terminal copies the hub job shows final. */
int stret_finals(const struct stret *s);
/* Copy changes the hub has not shown yet. */
int stret_unreturned(const struct stret *s);
/* Copies seen terminal on the workers. */
int stret_terminal(const struct stret *s);
/* Until when (the caller's time) to wait for the hub's final statuses: `cap` while some copy
 * has not finished on its worker (the worker's lag is not the hub's: on a real stack the
 * worker's kube-controller-manager marks copies Complete tens of seconds after their pods
 * end); once every copy finished, `grace` after the last one did (at most `cap`). */
double stret_wait_until(const struct stret *s, double cap, double grace);

struct stret_fig {
    int changes;  /* copy count changes seen */
    int returned; /* of those, shown by the hub annotation */
    int terminal; /* copies seen terminal */
    int finals;   /* of those, shown final by the hub job */
    /* ms; all = every returned change and every final together */
    double all_p50, all_p99, all_max, prog_p50, prog_p99, fin_p50, fin_p99;
};
void stret_figures(const struct stret *s, struct stret_fig *out);

#endif
