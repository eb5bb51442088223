/*
 * excl: the clusters a hub job must not be placed on for a while, because a
 * copy of it could not be scheduled there (docs/design.md §4, "Unschedulable
 * on the worker"). Pure.
 *
 * Remembered on the hub job, so an operator restart keeps it, in the
 * annotation kueue-ks.io/excluded-clusters: a comma-separated list of
 * "<cluster>=<RFC 3339 until-time>", e.g.
 *   cluster1=2026-11-24T10:05:00Z,cluster3=2026-11-24T10:07:30Z
 * An entry whose time has passed is no longer in force. The value comes
 * from an object anyone may edit: an entry that does not parse (no '=', an
 * empty name, a bad time) is ignored, never an error.
 */
#ifndef KKS_CONTROLLERS_WORKLOAD_EXCL_H
#define KKS_CONTROLLERS_WORKLOAD_EXCL_H

#include <stddef.h>
#include <stdint.h>

#define EXCL_ANNOTATION "kueue-ks.io/excluded-clusters"
#define EXCL_MAX_VALUE  8192 /* longer values are read up to here */

/* Until when `cluster` is excluded by annotation value `v` (may be NULL), in
 * ms since the epoch; 0 when it is not (no entry, or until <= now_ms). With
 * several entries for the cluster, the latest time counts. */
int64_t excl_until(const char *v, const char *cluster, int64_t now_ms);

/* The annotation value after excluding `cluster` until until_ms: the entries
 * of v still in force for other clusters, in their order, then the new one
 * (expired, unparseable and older entries of `cluster` are dropped). New
 * string. */
char *excl_with(const char *v, const char *cluster, int64_t until_ms, int64_t now_ms);

/* RFC 3339 (UTC, seconds) of ms since the epoch into buf (>= 32 bytes). */
const char *excl_fmt_time(char *buf, size_t n, int64_t ms);

#endif
