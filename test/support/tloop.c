/* tloop: event-loop helpers for unit tests. */
#include "test/support/tloop.h"

static void stop_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)t;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

void tloop_run_for(struct ev_loop *loop, double seconds)
{
    ev_timer t;
    ev_now_update(loop); /* the window starts now, not at the last loop iteration */
    ev_timer_init(&t, stop_cb, seconds, 0);
    ev_timer_start(loop, &t);
    ev_run(loop, 0);
    ev_timer_stop(loop, &t);
}
