/*
 * lease: leader election on a coordination.k8s.io/v1 Lease, with client-go's
 * semantics (tools/leaderelection, resourcelock/leaselock.go):
 *
 *   - tryAcquireOrRenew: when we lead and our view of the lease is still
 *     valid, PUT a renewed record straight away (fast path); otherwise GET
 *     the Lease, POST it when absent, and PUT our record only when it has no
 *     holder, is ours, or has expired. Every PUT carries the resourceVersion
 *     of the last Lease the server returned, so concurrent candidates race
 *     through optimistic concurrency: a 409 means we lost this round.
 *   - Expiry is judged on the local monotonic clock: a record is valid for
 *     its leaseDurationSeconds counted from when *we* last saw it change
 *     (never from its renewTime), so the candidates' clocks need not agree.
 *   - leaseTransitions is incremented when the holder changes; acquireTime
 *     is kept while we renew; times are MicroTime ("...T14:33:56.123456Z").
 *   - acquire loop: a try every RetryPeriod plus jitter (up to 1.2 x
 *     RetryPeriod more), until it succeeds -> on_started_leading;
 *   - renew loop: a try every RetryPeriod; when tries keep failing for
 *     RenewDeadline, leadership is lost -> on_stopped_leading (the elector
 *     then stops for good; the operator exits, as client-go users do);
 *   - on_new_leader(identity) whenever the observed holder changes to a
 *     non-empty identity (ourselves included);
 *   - lease_elector_stop() releases the Lease (empty holder,
 *     leaseDurationSeconds=1) if, and only if, we hold it, so a successor
 *     need not wait out the full duration.
 *
 * Requests are made without client retries (the loops retry) and with a
 * per-request timeout that never outlasts the renew deadline.
 * All callbacks run on the loop thread; they must not free the elector.
 */
#ifndef KKS_KUBE_LEASE_H
#define KKS_KUBE_LEASE_H

#include <stdbool.h>

#include "pkg/kube/client.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"

#define LEASE_DEFAULT_DURATION_S       15.0
#define LEASE_DEFAULT_RENEW_DEADLINE_S 10.0
#define LEASE_DEFAULT_RETRY_PERIOD_S   2.0
#define LEASE_JITTER_FACTOR            1.2

struct lease_elector;

struct lease_callbacks {
    void (*on_started_leading)(void *ud);
    /* Called once when leadership is lost or, after having led, when stopped. */
    void (*on_stopped_leading)(void *ud);
    /* identity is borrowed for the call. */
    void (*on_new_leader)(void *ud, const char *identity);
    void *ud;
};

struct lease_config {
    const char *namespace_; /* required; copied */
    const char *name;       /* required; copied */
    const char *identity;   /* NULL: lease_default_identity(); copied */
    /*
     * Durations in seconds (fractions allowed, tests use milliseconds);
     * 0 = default (15 / 10 / 2). Must satisfy
     * LeaseDuration > RenewDeadline > 1.2 x RetryPeriod > 0.
     * The Lease stores whole seconds: leaseDurationSeconds = ceil(LeaseDuration).
     */
    double lease_duration_s;
    double renew_deadline_s;
    double retry_period_s;
    bool release_on_cancel; /* lease_elector_stop releases a held Lease */
    struct lease_callbacks cb;
};

/* Apply defaults to zero durations and check the relations above. 0 or -EINVAL with a message. */
int lease_config_validate(struct lease_config *cfg, struct err *e);

/* "<hostname>_<random uuid>", like the identities client-go users build. New string. */
char *lease_default_identity(void);

/*
 * Create an elector (not started). `client` and `lg` are borrowed and must
 * outlive it. Returns 0 and *out, or -EINVAL (see lease_config_validate).
 */
int lease_elector_new(struct kube_client *client, const struct lease_config *cfg,
                      const struct logger *lg, struct lease_elector **out, struct err *e);

/* Start the acquire loop (first try immediately). 0, or -EALREADY. */
int lease_elector_start(struct lease_elector *le);

/* True while we hold the lease (between on_started_leading and on_stopped_leading). */
bool lease_elector_is_leader(const struct lease_elector *le);
/* The last observed holder ("" when none). Borrowed, valid until the next loop iteration. */
const char *lease_elector_leader(const struct lease_elector *le);
/* Our identity. Borrowed. */
const char *lease_elector_identity(const struct lease_elector *le);

/*
 * Stop the loops. A request in flight is allowed to finish (it may have
 * changed the Lease); then, if we lead and release_on_cancel is set, the
 * release record is PUT with the current resourceVersion. `done` (optional)
 * is called exactly once from the loop afterwards, with 0 or the release's
 * error code; on_stopped_leading runs before it when we were leading.
 * Also fine after leadership was lost (then nothing is released).
 * Returns 0, or -EALREADY when called a second time.
 */
int lease_elector_stop(struct lease_elector *le, void (*done)(void *ud, int rc), void *ud);

/* Free; cancels anything in flight without calling callbacks. NULL is fine.
 * Free the elector before its client. */
void lease_elector_free(struct lease_elector *le);

#endif
