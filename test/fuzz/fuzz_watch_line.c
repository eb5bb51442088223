/*
 * Fuzz target for the watch line splitter + event decoder (pkg/kube/watch.h):
 * arbitrary bytes, fed in arbitrary chunkings derived from the input itself,
 * must never crash, leak or overrun; errors are returned, never aborted on. A line
 * built of some paths only (watch_decoder.paths) gives the whole line's verdict, type and
 * resourceVersion, and an ERROR event's object whole.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/kube/watch.h"

struct state {
    unsigned events;
    unsigned stop_at;
};

static int on_event(void *ud, const struct watch_event *ev)
{
    struct state *s = ud;
    s->events++;
    /* Touch what a consumer would read. */
    if (ev->resource_version)
        (void)strlen(ev->resource_version);
    (void)json_object_size(ev->object);
    if (ev->type == WATCH_ERROR)
        (void)kube_err_is_gone(&ev->status);
    return s->stop_at && s->events >= s->stop_at ? -EINTR : 0;
}

/* The one event a line built of some paths gave. */
struct path_state {
    int n;
    enum watch_event_type type;
    char *rv;
    json_t *obj;
};

static int path_event(void *ud, const struct watch_event *ev)
{
    struct path_state *s = ud;
    if (s->n++)
        return 0;
    s->type = ev->type;
    s->rv = ev->resource_version ? strdup(ev->resource_version) : NULL;
    s->obj = json_incref(ev->object);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    /* Byte 0: chunking seed; byte 1: line cap and early-stop choice. */
    uint32_t seed = data[0] * 2654435761u + 1;
    size_t max_line = (data[1] & 1) ? 64 + (size_t)(data[1] >> 1) * 16 : 0;
    struct state st = {.stop_at = (data[1] & 0x80) ? 3 : 0};
    const char *p = (const char *)data + 2;
    size_t n = size - 2;

    struct watch_decoder d;
    struct err e;
    watch_decoder_init(&d, max_line, on_event, &st);
    size_t off = 0;
    int rc = 0;
    while (off < n && rc == 0) {
        seed = seed * 1103515245u + 12345u;
        size_t len = 1 + (seed >> 16) % 97;
        if (len > n - off)
            len = n - off;
        rc = watch_decoder_feed(&d, p + off, len, &e);
        off += len;
    }
    if (rc == 0)
        (void)watch_decoder_finish(&d, &e);
    else if (watch_decoder_feed(&d, "x\n", 2, &e) != rc) /* errors are sticky */
        __builtin_trap();
    watch_decoder_release(&d);

    /* The whole input as one line. */
    struct watch_event ev;
    int whole = watch_decode_line(p, n, &ev, &e);

    /* Built of some paths only: the same verdict, type and resourceVersion; an ERROR event's
     * object whole. */
    static const char *const names[] = {"type", "object.metadata.resourceVersion", "object.spec.a",
                                        NULL};
    struct jscan_paths *paths = NULL;
    if (jscan_paths_new(names, &paths, NULL) < 0)
        __builtin_trap();
    struct path_state ps = {0};
    watch_decoder_init(&d, 0, path_event, &ps);
    d.paths = paths;
    int part = watch_decoder_feed(&d, p, n, &e);
    if (part == 0)
        part = watch_decoder_feed(&d, "\n", 1, &e);
    watch_decoder_release(&d);
    jscan_paths_free(paths);
    bool one_line = !memchr(p, '\n', n) && !memchr(p, '\r', n) && !memchr(p, '\0', n);
    if (one_line && n > 0 && !(ps.n == 0 && part == 0)) {
        if ((whole == 0) != (part == 0 && ps.n == 1))
            __builtin_trap();
        if (whole == 0 && (ev.type != ps.type || !ev.resource_version != !ps.rv ||
                           (ps.rv && strcmp(ev.resource_version, ps.rv) != 0) ||
                           (ev.type == WATCH_ERROR && !json_equal(ev.object, ps.obj))))
            __builtin_trap();
    }
    free(ps.rv);
    json_decref(ps.obj);
    if (whole == 0)
        json_decref(ev.object);
    return 0;
}
