/* heaptrim: coalesced malloc_trim(0) requests (see heaptrim.h). */
#include "pkg/util/heaptrim.h"

#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "pkg/util/xalloc.h"

/* Tells our userdata from anything else's (heaptrim_new refuses a taken one, but a loop
 * someone else sets up later must not be read as ours). */
#define HEAPTRIM_MAGIC 0x68747269u /* "htri" */

struct heaptrim {
    uint32_t magic;
    struct ev_loop *loop;
    ev_timer timer;
    size_t requests, trims;
    bool full;              /* a pending request wants malloc_trim, not the hook alone */
    void (*hook)(void *ud); /* heaptrim_set_hook */
    void *hook_ud;
};

static void trim_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct heaptrim *h = w->data;
    if (h->full) {
        h->trims++;
        malloc_trim(0);
    }
    h->full = false;
    if (h->hook)
        h->hook(h->hook_ud);
}

struct heaptrim *heaptrim_new(struct ev_loop *loop, double delay_s)
{
    if (ev_userdata(loop))
        return NULL;
    struct heaptrim *h = xcalloc(1, sizeof *h);
    h->magic = HEAPTRIM_MAGIC;
    h->loop = loop;
    ev_timer_init(&h->timer, trim_cb, delay_s > 0 ? delay_s : HEAPTRIM_DELAY_S, 0.);
    h->timer.data = h;
    ev_set_userdata(loop, h);
    return h;
}

void heaptrim_free(struct heaptrim *h)
{
    if (!h)
        return;
    ev_timer_stop(h->loop, &h->timer);
    if (ev_userdata(h->loop) == h)
        ev_set_userdata(h->loop, NULL);
    free(h);
}

void heaptrim_request(struct ev_loop *loop)
{
    struct heaptrim *h = ev_userdata(loop);
    if (!h || h->magic != HEAPTRIM_MAGIC) {
        malloc_trim(0);
        return;
    }
    h->requests++;
    h->full = true;
    if (!ev_is_active(&h->timer))
        ev_timer_start(loop, &h->timer);
}

void heaptrim_release(struct ev_loop *loop)
{
    struct heaptrim *h = ev_userdata(loop);
    if (!h || h->magic != HEAPTRIM_MAGIC || !h->hook)
        return;
    if (!ev_is_active(&h->timer))
        ev_timer_start(loop, &h->timer);
}

void heaptrim_set_hook(struct heaptrim *h, void (*fn)(void *ud), void *ud)
{
    if (!h)
        return;
    h->hook = fn;
    h->hook_ud = ud;
}

void heaptrim_counts(const struct heaptrim *h, size_t *requests, size_t *trims)
{
    *requests = h ? h->requests : 0;
    *trims = h ? h->trims : 0;
}
