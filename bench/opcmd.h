/*
 * opcmd: the `kueue-ks run` command line the benches start (a hub and two workers), optionally
 * behind a valgrind prefix, with room for the bench's own extra arguments. Header only: each
 * bench is one directory linked alone.
 */
#ifndef KKS_BENCH_OPCMD_H
#define KKS_BENCH_OPCMD_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#define OPCMD_MAX 64

struct opcmd {
    char *argv[OPCMD_MAX + 1]; /* NULL-terminated */
    size_t n;
    size_t op; /* index of the operator binary in argv: argv + op skips the prefix */
    char bin[PATH_MAX + 32], w1[PATH_MAX + 16], w2[PATH_MAX + 16];
};

/* Append one argument (borrowed: it must outlive the exec); aborts past OPCMD_MAX, a bench's
 * own bug (its option parsing bounds what it appends). */
static inline void opcmd_push(struct opcmd *c, const char *arg)
{
    if (c->n >= OPCMD_MAX) {
        fputs("bench: too many operator arguments\n", stderr);
        abort();
    }
    c->argv[c->n++] = (char *)arg;
    c->argv[c->n] = NULL;
}

/*
 * Start `c` as: prefix... ROOT/bin/kueue-ks run --kubeconfig HUB --metrics-bind-address 0
 * --health-probe-bind-address HEALTH --worker cluster1=K1 --worker cluster2=K2. `prefix` is a
 * NULL-terminated list (a valgrind command line) or NULL; its strings and the paths are
 * borrowed except root, k1 and k2, which are copied. Push the rest with opcmd_push().
 */
static inline void opcmd_init(struct opcmd *c, const char *const *prefix, const char *root,
                              const char *hub, const char *health, const char *k1, const char *k2)
{
    c->n = 0;
    c->argv[0] = NULL;
    for (size_t i = 0; prefix && prefix[i]; i++)
        opcmd_push(c, prefix[i]);
    c->op = c->n;
    snprintf(c->bin, sizeof c->bin, "%s/bin/kueue-ks", root);
    snprintf(c->w1, sizeof c->w1, "cluster1=%s", k1);
    snprintf(c->w2, sizeof c->w2, "cluster2=%s", k2);
    const char *const rest[] = {c->bin,
                                "run",
                                "--kubeconfig",
                                hub,
                                "--metrics-bind-address",
                                "0",
                                "--health-probe-bind-address",
                                health,
                                "--worker",
                                c->w1,
                                "--worker",
                                c->w2,
                                NULL};
    for (size_t i = 0; rest[i]; i++)
        opcmd_push(c, rest[i]);
}

#endif
