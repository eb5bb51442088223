/* stret: bench-dispatch's status-return figures (see stret.h). */
#include "bench/dispatch/stret.h"

#include <stdlib.h>
#include <string.h>

#include "pkg/json/jsonx.h"
#include "pkg/util/xalloc.h"

#define ANN_REMOTE "kueue-ks.io/remote-status"

struct chg {
    double t;
    long long c[4]; /* active, ready, succeeded, failed */
};

struct job {
    bool seen; /* a copy event came: last holds its counts */
    long long last[4];
    struct chg *pend; /* changes not yet shown by the hub, oldest first */
    int npend, cap;
    double term_t, final_t; /* copy seen terminal / hub job seen final (0 = not yet) */
    /* what the hub showed last (its watch may deliver before the worker's) */
    bool hub_seen;
    long long hub[4];
    double hub_final_t;
};

struct samples {
    double *v;
    int n, cap;
};

struct stret {
    int n;
    struct job *j;
    struct samples prog, fin;
    int changes;
};

struct stret *stret_new(int n)
{
    struct stret *s = xcalloc(1, sizeof *s);
    s->n = n;
    s->j = xcalloc((size_t)n, sizeof *s->j);
    return s;
}

void stret_free(struct stret *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++)
        free(s->j[i].pend);
    free(s->j);
    free(s->prog.v);
    free(s->fin.v);
    free(s);
}

static void add(struct samples *sm, double v)
{
    if (sm->n == sm->cap) {
        sm->cap = sm->cap ? 2 * sm->cap : 256;
        sm->v = xrealloc(sm->v, (size_t)sm->cap * sizeof *sm->v);
    }
    sm->v[sm->n++] = v;
}

static void counts(const json_t *st, long long out[4])
{
    static const char *const f[] = {"active", "ready", "succeeded", "failed"};
    for (int k = 0; k < 4; k++)
        out[k] = jx_int(st, f[k], 0);
}

static bool terminal(const json_t *obj)
{
    return jx_cond_is_true(obj, "Complete") || jx_cond_is_true(obj, "Failed");
}

void stret_copy(struct stret *s, int i, const json_t *copy, double t)
{
    if (!s || i < 0 || i >= s->n)
        return;
    struct job *j = &s->j[i];
    long long c[4];
    counts(jx_obj(copy, "status"), c);
    if (j->seen && memcmp(c, j->last, sizeof c) != 0 && j->hub_seen &&
        memcmp(c, j->hub, sizeof c) == 0) {
        s->changes++; /* the hub's event came first: returned before the worker's was seen */
        add(&s->prog, 0);
    } else if (j->seen && memcmp(c, j->last, sizeof c) != 0) {
        if (j->npend == j->cap) {
            j->cap = j->cap ? 2 * j->cap : 4;
            j->pend = xrealloc(j->pend, (size_t)j->cap * sizeof *j->pend);
        }
        j->pend[j->npend].t = t;
        memcpy(j->pend[j->npend].c, c, sizeof c);
        j->npend++;
        s->changes++;
    }
    j->seen = true;
    memcpy(j->last, c, sizeof c);
    if (j->term_t == 0 && terminal(copy)) {
        j->term_t = t;
        if (j->hub_final_t > 0) { /* the hub's event came first */
            j->final_t = j->hub_final_t;
            add(&s->fin, 0);
        }
    }
}

/* The annotation's counts; false when absent or unreadable. */
static bool hub_counts(const json_t *job, long long out[4])
{
    const char *a = jx_annotation(job, ANN_REMOTE);
    if (!a)
        return false;
    json_t *v = jx_loadb(a, strlen(a), NULL);
    if (!json_is_object(v)) {
        json_decref(v);
        return false;
    }
    counts(v, out);
    json_decref(v);
    return true;
}

void stret_hub(struct stret *s, int i, const json_t *job, double t)
{
    if (!s || i < 0 || i >= s->n)
        return;
    struct job *j = &s->j[i];
    long long c[4];
    if (hub_counts(job, c)) {
        j->hub_seen = true;
        memcpy(j->hub, c, sizeof c);
    }
    if (j->npend > 0 && j->hub_seen) {
        int k = j->npend - 1;
        while (k >= 0 && memcmp(j->pend[k].c, j->hub, sizeof j->hub) != 0)
            k--;
        for (int m = 0; m <= k; m++)
            add(&s->prog, t - j->pend[m].t);
        if (k >= 0) {
            memmove(j->pend, j->pend + k + 1, (size_t)(j->npend - k - 1) * sizeof *j->pend);
            j->npend -= k + 1;
        }
    }
    if (j->hub_final_t == 0 && terminal(job))
        j->hub_final_t = t;
    if (j->term_t > 0 && j->final_t == 0 && terminal(job)) {
        j->final_t = t;
        add(&s->fin, t - j->term_t);
    }
}

int stret_finals(const struct stret *s)
{
    return s ? s->fin.n : 0;
}

int stret_unreturned(const struct stret *s)
{
    return s ? s->changes - s->prog.n : 0;
}

int stret_terminal(const struct stret *s)
{
    int n = 0;
    for (int i = 0; s && i < s->n; i++)
        n += s->j[i].term_t > 0;
    return n;
}

double stret_wait_until(const struct stret *s, double cap, double grace)
{
    double last = 0;
    for (int i = 0; s && i < s->n; i++) {
        if (s->j[i].term_t == 0)
            return cap; /* still running on its worker */
        if (s->j[i].term_t > last)
            last = s->j[i].term_t;
    }
    return last + grace < cap ? last + grace : cap;
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Nearest rank, in ms; sorts v. */
static double pct_ms(double *v, int n, double p)
{
    if (n == 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[(int)(p * (n - 1) + 0.5)] * 1e3;
}

void stret_figures(const struct stret *s, struct stret_fig *o)
{
    *o = (struct stret_fig){.changes = s->changes,
                            .returned = s->prog.n,
                            .terminal = stret_terminal(s),
                            .finals = s->fin.n};
    int n = s->prog.n + s->fin.n;
    double *all = xcalloc((size_t)n + 1, sizeof *all);
    memcpy(all, s->prog.v, (size_t)s->prog.n * sizeof *all);
    memcpy(all + s->prog.n, s->fin.v, (size_t)s->fin.n * sizeof *all);
    o->all_p50 = pct_ms(all, n, 0.5);
    o->all_p99 = pct_ms(all, n, 0.99);
    o->all_max = n ? all[n - 1] * 1e3 : 0;
    free(all);
    o->prog_p50 = pct_ms(s->prog.v, s->prog.n, 0.5);
    o->prog_p99 = pct_ms(s->prog.v, s->prog.n, 0.99);
    o->fin_p50 = pct_ms(s->fin.v, s->fin.n, 0.5);
    o->fin_p99 = pct_ms(s->fin.v, s->fin.n, 0.99);
}
