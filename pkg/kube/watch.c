/*
 * watch: incremental watch-line decoder and streaming watches.
 *
 * The decoder keeps only the incomplete tail of the stream. A complete line
 * that arrives inside one chunk is parsed straight from the chunk (no copy);
 * only a line split across chunks is assembled in the buffer. Each line is
 * parsed exactly once.
 */
#include "pkg/kube/watch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jscan.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

const char *watch_event_type_name(enum watch_event_type t)
{
    switch (t) {
    case WATCH_ADDED:
        return "ADDED";
    case WATCH_MODIFIED:
        return "MODIFIED";
    case WATCH_DELETED:
        return "DELETED";
    case WATCH_BOOKMARK:
        return "BOOKMARK";
    case WATCH_ERROR:
        return "ERROR";
    }
    return "?";
}

void watch_decoder_init(struct watch_decoder *d, size_t max_line, watch_event_cb cb, void *ud)
{
    memset(d, 0, sizeof *d);
    buf_init(&d->line, max_line ? max_line : WATCH_DEFAULT_MAX_LINE);
    d->cb = cb;
    d->ud = ud;
}

void watch_decoder_release(struct watch_decoder *d)
{
    buf_free(&d->line);
}

static int parse_type(const char *s, enum watch_event_type *t)
{
    static const struct {
        const char *name;
        enum watch_event_type type;
    } types[] = {
        {"ADDED", WATCH_ADDED},       {"MODIFIED", WATCH_MODIFIED}, {"DELETED", WATCH_DELETED},
        {"BOOKMARK", WATCH_BOOKMARK}, {"ERROR", WATCH_ERROR},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (!strcmp(s, types[i].name)) {
            *t = types[i].type;
            return 0;
        }
    }
    return -1;
}

/* watch_decode_line, building only `paths` of the line (NULL: all) but an ERROR event. */
static int decode_line(const char *line, size_t len, const struct jscan_paths *paths,
                       struct watch_event *ev, struct err *e)
{
    memset(ev, 0, sizeof *ev);
    /* jscan_load, not json_loadb: the same tree for about 0.3x the instructions (every event
     * of every informer goes through here; bench-dispatch) */
    json_t *root = jscan_load_with(line, len, paths, e);
    if (!root) {
        err_prefix(e, "watch event is not valid JSON");
        return -EBADMSG;
    }
    int rc = 0;
    if (!json_is_object(root)) {
        rc = err_set(e, -EBADMSG, "watch event is not a JSON object");
        goto out;
    }
    const char *type = json_string_value(json_object_get(root, "type"));
    if (paths && type && strcmp(type, "ERROR") == 0) {
        /* its Status is read whole (kube_status_to_err); the text was checked already */
        json_decref(root);
        return decode_line(line, len, NULL, ev, e);
    }
    if (!type) {
        rc = err_set(e, -EBADMSG, "watch event has no \"type\" string");
        goto out;
    }
    if (parse_type(type, &ev->type) < 0) {
        char t[40];
        size_t n = strlen(type);
        size_t k = 0;
        for (size_t i = 0; i < n && k + 1 < sizeof t; i++)
            t[k++] = (type[i] >= 0x20 && type[i] < 0x7f) ? type[i] : '?';
        t[k] = '\0';
        rc = err_set(e, -EBADMSG, "watch event has unknown type \"%s\"", t);
        goto out;
    }
    json_t *obj = json_object_get(root, "object");
    if (!json_is_object(obj)) {
        rc = err_set(e, -EBADMSG, "watch %s event has no \"object\" object", type);
        goto out;
    }
    ev->object = json_incref(obj);
    ev->resource_version =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
    if (ev->type == WATCH_ERROR)
        kube_status_to_err(&ev->status, "watch", "ERROR event", 0, obj, NULL, 0);
out:
    json_decref(root);
    return rc;
}

int watch_decode_line(const char *line, size_t len, struct watch_event *ev, struct err *e)
{
    return decode_line(line, len, NULL, ev, e);
}

static bool blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return false;
    return true;
}

static int handle_line(struct watch_decoder *d, const char *p, size_t n, uint64_t offset,
                       struct err *e)
{
    if (blank(p, n))
        return 0;
    struct watch_event ev;
    int rc = decode_line(p, n, d->paths, &ev, e);
    if (rc < 0) {
        err_prefix(e, "watch stream byte %llu", (unsigned long long)offset);
        return rc;
    }
    d->events++;
    rc = d->cb(d->ud, &ev);
    json_decref(ev.object);
    if (rc < 0 && e && !e->code)
        err_set(e, rc, "watch stream stopped by the event handler (%d)", rc);
    return rc;
}

static int too_long(struct watch_decoder *d, uint64_t offset, struct err *e)
{
    return err_set(e, -E2BIG, "watch stream byte %llu: event line longer than %zu bytes",
                   (unsigned long long)offset, d->line.max);
}

int watch_decoder_feed(struct watch_decoder *d, const char *data, size_t n, struct err *e)
{
    if (d->failed)
        return err_set(e, d->failed, "watch stream already failed (%d)", d->failed);
    if (e)
        err_clear(e);
    uint64_t base = d->bytes;
    d->bytes += n;
    const char *p = data;
    size_t rem = n;
    int rc = 0;
    while (rem > 0) {
        const char *nl = memchr(p, '\n', rem);
        uint64_t here = base + (uint64_t)(p - data);
        if (!nl) {
            if (buf_append(&d->line, p, rem) < 0)
                rc = too_long(d, here - d->line.len, e);
            break;
        }
        size_t seg = (size_t)(nl - p);
        if (d->line.len == 0) {
            if (seg > d->line.max) {
                rc = too_long(d, here, e);
                break;
            }
            rc = handle_line(d, p, seg, here, e);
        } else {
            uint64_t start = here - d->line.len;
            if (buf_append(&d->line, p, seg) < 0) {
                rc = too_long(d, start, e);
                break;
            }
            rc = handle_line(d, d->line.data, d->line.len, start, e);
            buf_reset(&d->line);
        }
        if (rc < 0)
            break;
        p = nl + 1;
        rem -= seg + 1;
    }
    if (rc < 0) {
        d->failed = rc;
        buf_free(&d->line);
    }
    return rc;
}

int watch_decoder_finish(struct watch_decoder *d, struct err *e)
{
    if (d->failed)
        return err_set(e, d->failed, "watch stream already failed (%d)", d->failed);
    if (d->line.len && !blank(d->line.data, d->line.len))
        return err_set(e, -EBADMSG, "watch stream ended inside an event (%zu bytes pending)",
                       d->line.len);
    return 0;
}

/* ---- streaming watch ---------------------------------------------------- */

struct kube_watch {
    struct kube_client *c;
    struct kube_call *call;
    struct watch_decoder dec;
    kube_watch_event_cb on_event;
    kube_watch_close_cb on_close;
    void *ud;
    ev_timer watchdog;
    char *path;
    char *last_rv;
    int in_cb;
    bool stopped;
    bool closing;
    int ev_rc; /* set by an ERROR event */
    struct err ev_err;
};

static void watch_free(struct kube_watch *w)
{
    ev_timer_stop(kube_client_loop(w->c), &w->watchdog);
    watch_decoder_release(&w->dec);
    free(w->path);
    free(w->last_rv);
    free(w);
}

static void watch_close(struct kube_watch *w, int rc, struct err *e)
{
    ev_timer_stop(kube_client_loop(w->c), &w->watchdog);
    w->closing = true;
    log_v(kube_client_logger(w->c), 4, "watch closed", "path", w->path, "rc", LOG_INT(rc), "error",
          rc ? e->msg : "");
    w->on_close(w->ud, rc, e);
    watch_free(w);
}

static int watch_event(void *ud, const struct watch_event *ev)
{
    struct kube_watch *w = ud;
    if (ev->type == WATCH_ERROR) {
        w->ev_rc = ev->status.code ? ev->status.code : -EPROTO;
        w->ev_err = ev->status;
        w->ev_err.code = w->ev_rc;
        return w->ev_rc;
    }
    if (ev->resource_version) {
        free(w->last_rv);
        w->last_rv = xstrdup(ev->resource_version);
    }
    int rc = w->on_event(w->ud, ev);
    if (w->stopped)
        return -ECANCELED;
    return rc < 0 ? rc : 0;
}

static int watch_data(void *ud, const char *data, size_t len, struct err *e)
{
    struct kube_watch *w = ud;
    ev_timer_again(kube_client_loop(w->c), &w->watchdog);
    w->in_cb++;
    int rc = watch_decoder_feed(&w->dec, data, len, e);
    w->in_cb--;
    if (w->stopped) {
        watch_free(w);
        return -ECANCELED;
    }
    if (rc < 0) {
        if (w->ev_rc) {
            *e = w->ev_err;
            err_prefix(e, "watch %s", w->path);
        } else {
            err_prefix(e, "watch %s", w->path);
        }
    }
    return rc;
}

static void watch_done(void *ud, const struct kube_result *r)
{
    struct kube_watch *w = ud;
    w->call = NULL;
    struct err e;
    int rc = r->rc;
    if (rc == 0) {
        err_clear(&e);
        rc = watch_decoder_finish(&w->dec, &e);
        if (rc < 0) {
            rc = -ECONNRESET;
            e.code = rc;
            err_prefix(&e, "watch %s", w->path);
        } else {
            err_set(&e, 0, "watch %s: closed by the server after %llu events", w->path,
                    (unsigned long long)w->dec.events);
        }
    } else {
        e = *r->err;
    }
    watch_close(w, rc, &e);
}

static void watchdog_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    struct kube_watch *w = t->data;
    kube_call_cancel(w->call);
    w->call = NULL;
    struct err e;
    err_set(&e, -ETIMEDOUT, "watch %s: no data from the server for %g s", w->path, t->repeat);
    watch_close(w, -ETIMEDOUT, &e);
}

int kube_watch_start(struct kube_client *c, const struct kube_watch_opts *o,
                     kube_watch_event_cb on_event, kube_watch_close_cb on_close, void *ud,
                     struct kube_watch **out, struct err *e)
{
    if (out)
        *out = NULL;
    if (!o || !o->path || !on_event || !on_close)
        return err_set(e, -EINVAL, "watch: path, event and close callbacks are required");
    int timeout = o->timeout_seconds;
    if (timeout <= 0)
        timeout = 300 + (int)((clock_mono_ns() / 1000) % 300);
    char tbuf[16];
    snprintf(tbuf, sizeof tbuf, "%d", timeout);

    size_t nuser = 0;
    while (o->query && o->query[nuser])
        nuser += 2;
    const char **q = xcalloc(nuser + 9, sizeof *q);
    size_t k = 0;
    q[k++] = "watch";
    q[k++] = "1";
    if (o->resource_version && *o->resource_version) {
        q[k++] = "resourceVersion";
        q[k++] = o->resource_version;
    }
    q[k++] = "timeoutSeconds";
    q[k++] = tbuf;
    if (!o->no_bookmarks) {
        q[k++] = "allowWatchBookmarks";
        q[k++] = "true";
    }
    for (size_t i = 0; i < nuser; i++)
        q[k++] = o->query[i];
    q[k] = NULL;

    struct kube_watch *w = xcalloc(1, sizeof *w);
    w->c = c;
    w->on_event = on_event;
    w->on_close = on_close;
    w->ud = ud;
    w->path = xstrdup(o->path);
    watch_decoder_init(&w->dec, o->max_line, watch_event, w);
    w->dec.paths = o->event_paths;
    double margin = o->watchdog_margin_s > 0 ? o->watchdog_margin_s : 30.0;
    ev_init(&w->watchdog, watchdog_cb);
    w->watchdog.data = w;
    w->watchdog.repeat = timeout + margin;

    struct kube_request req = {
        .method = "GET",
        .path = o->path,
        .query = q,
        .on_data = watch_data,
    };
    int rc = kube_client_do(c, &req, watch_done, w, &w->call, e);
    free(q);
    if (rc < 0) {
        watch_free(w);
        return rc;
    }
    ev_timer_again(kube_client_loop(c), &w->watchdog);
    if (out)
        *out = w;
    return 0;
}

void kube_watch_stop(struct kube_watch *w)
{
    if (!w || w->stopped)
        return;
    w->stopped = true;
    kube_call_cancel(w->call);
    w->call = NULL;
    ev_timer_stop(kube_client_loop(w->c), &w->watchdog);
    if (w->in_cb || w->closing)
        return; /* freed by watch_data / watch_close when they unwind */
    watch_free(w);
}

uint64_t kube_watch_events(const struct kube_watch *w)
{
    return w->dec.events;
}

const char *kube_watch_last_rv(const struct kube_watch *w)
{
    return w->last_rv ? w->last_rv : "";
}
