/*
 * heaptrim: malloc_trim(0) requests of one process, coalesced on its loop.
 *
 * After a big list the informers give the freed heap pages back to the system
 * (pkg/kube/informer.h, INFORMER_TRIM_ITEMS). At a restart a dozen lists end
 * within a second or two, and each malloc_trim(0) walks and consolidates every
 * free chunk of the heap: tens of milliseconds each, a quarter of the
 * operator's CPU while its lists arrived at 10,000 workloads
 * (docs/performance.md "Start-up: passes and heap trims"). The trim is
 * process-wide, so one trim, made HEAPTRIM_DELAY_S after the first request of
 * a burst, does the work of all the requests that came meanwhile. A hook
 * (heaptrim_set_hook) runs after each trim, and alone for heaptrim_release:
 * memory kept apart from malloc's heap (main's JSON pool) goes back at the
 * same moments, or after a small drop that does not call for a trim.
 *
 * The manager creates one per loop (heaptrim_new attaches it to the loop's
 * libev userdata, which nothing else in the process uses); code that only has
 * the loop calls heaptrim_request(loop). A loop without one (unit tests,
 * tools) trims at once, as before. Not thread-safe: the loop's thread.
 */
#ifndef KKS_UTIL_HEAPTRIM_H
#define KKS_UTIL_HEAPTRIM_H

#include <ev.h>
#include <stddef.h>

/* The delay after a request during which later requests join it. */
#define HEAPTRIM_DELAY_S 0.3

struct heaptrim;

/*
 * A trimmer for `loop`, attached as its userdata (NULL when the userdata is
 * taken already: requests then trim at once). delay_s <= 0: HEAPTRIM_DELAY_S.
 */
struct heaptrim *heaptrim_new(struct ev_loop *loop, double delay_s);
/* Detach and free it; a pending trim is dropped. NULL is fine. */
void heaptrim_free(struct heaptrim *h);
/* Ask for a malloc_trim(0): delay_s after the first request not yet served
 * when the loop has a trimmer, else at once. */
void heaptrim_request(struct ev_loop *loop);
/* Call fn(ud) after each trim (fn NULL: none): memory kept apart from malloc's heap goes back
 * at the same moments (the JSON trees' slab pool, pkg/util/slab.h). NULL h is fine. */
void heaptrim_set_hook(struct heaptrim *h, void (*fn)(void *ud), void *ud);
/* Ask for the hook alone, coalesced like a request (with one pending, its trim runs the hook):
 * cheap enough after every burst, where a malloc_trim(0) walks every free chunk of the heap.
 * A request made while a release is pending is served at the release's time (less than the
 * delay after it). Nothing without a trimmer or a hook. */
void heaptrim_release(struct ev_loop *loop);
/* Requests received and trims made since heaptrim_new. */
void heaptrim_counts(const struct heaptrim *h, size_t *requests, size_t *trims);

#endif
