/*
 * stackcpu: where a real stack's CPU goes, per component. scripts/realstack/stack.sh writes
 * STACK_DIR/<component>.pid (hub-apiserver, hub-etcd, hub-kueue, cluster1-kwok, ...); a
 * snapshot holds each component's CPU seconds (user + system, /proc/<pid>/stat) at one
 * moment, and the difference of two snapshots is what each used in between.
 */
#ifndef KKS_BENCH_DISPATCH_STACKCPU_H
#define KKS_BENCH_DISPATCH_STACKCPU_H

#include <stdio.h>
#include <sys/types.h>

#define STACKCPU_MAX 32

struct stackcpu {
    int n;
    char name[STACKCPU_MAX][48];
    pid_t pid[STACKCPU_MAX];
};

struct stackcpu_snap {
    double s[STACKCPU_MAX]; /* CPU seconds of component i, -1 if unknown */
    double busy, all;       /* the machine's busy and all CPU seconds (every core, /proc/stat) */
};

/* The components of the stack in `dir` (its *.pid files, sorted by name); 0 or -errno. */
int stackcpu_open(struct stackcpu *sc, const char *dir);
/* CPU seconds (user + system) process `pid` has used so far; -1 if unknown. */
double stackcpu_pid_s(pid_t pid);
void stackcpu_take(const struct stackcpu *sc, struct stackcpu_snap *out);
/* The CPU milliseconds from `a` to `b` divided by `per` of the components whose name starts
 * with `prefix` ("hub-"). */
double stackcpu_sum(const struct stackcpu *sc, const struct stackcpu_snap *a,
                    const struct stackcpu_snap *b, double per, const char *prefix);
/* How busy the machine was from `a` to `b`: busy over all CPU time (0..1), -1 if unknown. */
double stackcpu_busy(const struct stackcpu_snap *a, const struct stackcpu_snap *b);
/* Writes `"name":ms,...` (no braces): each component's CPU milliseconds from `a` to `b`
 * divided by `per` (per dispatch, per write), components that used none left out;
 * returns their sum in the same unit. */
double stackcpu_print(FILE *f, const struct stackcpu *sc, const struct stackcpu_snap *a,
                      const struct stackcpu_snap *b, double per);

#endif
