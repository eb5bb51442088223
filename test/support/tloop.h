/*
 * tloop: event-loop helpers for unit tests.
 */
#ifndef KKS_TEST_SUPPORT_TLOOP_H
#define KKS_TEST_SUPPORT_TLOOP_H

#include <ev.h>

/* Run `loop` for `seconds` (its timers and I/O fire), then return: bounded by
 * its own timer, so a test using it cannot hang here. */
void tloop_run_for(struct ev_loop *loop, double seconds);

#endif
