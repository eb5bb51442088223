/*
 * Fuzz target for the watch line splitter + event decoder (pkg/kube/watch.h):
 * arbitrary bytes, fed in arbitrary chunkings derived from the input itself,
 * must never crash, leak or overrun; errors are returned, never aborted on.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
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
    if (watch_decode_line(p, n, &ev, &e) == 0)
        json_decref(ev.object);
    return 0;
}
