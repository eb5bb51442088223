/* excl: clusters a job is kept away from for a while (see excl.h). */
#include "controllers/workload/excl.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

/* One entry of the list: name and time, both as spans of the value. */
struct ent {
    const char *name, *time;
    size_t name_len, time_len;
    int64_t until_ms; /* 0: does not parse */
};

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Parse the entry in [s, end) into *e (until_ms 0 when it does not parse). */
static void parse_ent(const char *s, const char *end, struct ent *e)
{
    *e = (struct ent){0};
    while (s < end && blank(*s))
        s++;
    while (end > s && blank(end[-1]))
        end--;
    const char *eq = memchr(s, '=', (size_t)(end - s));
    if (!eq || eq == s || end - eq - 1 <= 0 || end - eq - 1 > 63)
        return;
    e->name = s;
    e->name_len = (size_t)(eq - s);
    e->time = eq + 1;
    e->time_len = (size_t)(end - eq - 1);
    char tb[64];
    memcpy(tb, e->time, e->time_len);
    tb[e->time_len] = '\0';
    struct timespec ts;
    if (clock_parse_rfc3339(tb, &ts) < 0 || ts.tv_sec <= 0)
        return;
    e->until_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Call fn for every entry of v (bounded by EXCL_MAX_VALUE). */
static void each(const char *v, void (*fn)(const struct ent *e, void *ud), void *ud)
{
    if (!v)
        return;
    size_t len = strnlen(v, EXCL_MAX_VALUE);
    const char *p = v, *end = v + len;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        struct ent e;
        parse_ent(p, stop, &e);
        if (e.until_ms > 0)
            fn(&e, ud);
        p = comma ? comma + 1 : end;
    }
}

static bool ent_is(const struct ent *e, const char *cluster)
{
    return strlen(cluster) == e->name_len && memcmp(e->name, cluster, e->name_len) == 0;
}

struct until_walk {
    const char *cluster;
    int64_t now_ms, until_ms;
};

static void until_one(const struct ent *e, void *ud)
{
    struct until_walk *w = ud;
    if (ent_is(e, w->cluster) && e->until_ms > w->now_ms && e->until_ms > w->until_ms)
        w->until_ms = e->until_ms;
}

int64_t excl_until(const char *v, const char *cluster, int64_t now_ms)
{
    if (!cluster)
        return 0;
    struct until_walk w = {.cluster = cluster, .now_ms = now_ms};
    each(v, until_one, &w);
    return w.until_ms;
}

struct with_walk {
    const char *cluster;
    int64_t now_ms;
    struct buf *b;
};

static void keep_one(const struct ent *e, void *ud)
{
    struct with_walk *w = ud;
    if (ent_is(e, w->cluster) || e->until_ms <= w->now_ms)
        return;
    buf_printf(w->b, "%.*s=%.*s,", (int)e->name_len, e->name, (int)e->time_len, e->time);
}

const char *excl_fmt_time(char *buf, size_t n, int64_t ms)
{
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000)};
    return clock_rfc3339(buf, n, &ts, 0);
}

char *excl_with(const char *v, const char *cluster, int64_t until_ms, int64_t now_ms)
{
    struct buf b;
    buf_init(&b, 2 * EXCL_MAX_VALUE);
    struct with_walk w = {.cluster = cluster, .now_ms = now_ms, .b = &b};
    char t[40];
    /* first: whatever follows, a reader that stops at EXCL_MAX_VALUE sees it */
    buf_printf(&b, "%s=%s,", cluster, excl_fmt_time(t, sizeof t, until_ms));
    each(v, keep_one, &w);
    char *s = buf_detach(&b);
    s[strlen(s) - 1] = '\0'; /* the last comma */
    buf_free(&b);
    return s;
}

char *excl_explain(const char *excl_value, const struct sel *sel, const char *sel_text,
                   const char *sel_from, const char *cluster, const json_t *labels, int64_t now_ms,
                   bool *temporary)
{
    *temporary = false;
    if (sel && !sel_matches(sel, labels))
        return xasprintf("excluded by the cluster selector \"%s\" (from the %s)",
                         sel_text ? sel_text : "", sel_from ? sel_from : "job");
    int64_t until = excl_until(excl_value, cluster, now_ms);
    if (!until)
        return NULL;
    *temporary = true;
    char t[40];
    return xasprintf("excluded until %s: its pods could not be scheduled there (%s)",
                     excl_fmt_time(t, sizeof t, until), EXCL_ANNOTATION);
}
