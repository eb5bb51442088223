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

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pkg/labels/sel.h"

#define EXCL_ANNOTATION "kueue-ks.io/excluded-clusters"
#define EXCL_MAX_VALUE  8192 /* longer values are read up to here */

/* Until when `cluster` is excluded by annotation value `v` (may be NULL), in
 * ms since the epoch; 0 when it is not (no entry, or until <= now_ms). With
 * several entries for the cluster, the latest time counts. */
int64_t excl_until(const char *v, const char *cluster, int64_t now_ms);

/* The annotation value after excluding `cluster` until until_ms: the new
 * entry first, then the entries of v still in force for other clusters, in
 * their order (expired, unparseable and older entries of `cluster` are
 * dropped). New string. */
char *excl_with(const char *v, const char *cluster, int64_t until_ms, int64_t now_ms);

/* Why `cluster` (labels: clsel_cluster_labels, borrowed) is not a candidate
 * for a job, as `kueue-ks explain` and the check message say it, or NULL when
 * it is one. `sel` (may be NULL: every cluster) is the job's cluster selector,
 * `sel_text` / `sel_from` as clsel_for() returns them; `excl_value` the job's
 * EXCL_ANNOTATION (may be NULL). The selector first:
 *   excluded by the cluster selector "<text>" (from the <from>)
 *   excluded until <RFC 3339>: its pods could not be scheduled there
 * (kueue-ks.io/excluded-clusters) *temporary: the second form. New string. */
char *excl_explain(const char *excl_value, const struct sel *sel, const char *sel_text,
                   const char *sel_from, const char *cluster, const json_t *labels, int64_t now_ms,
                   bool *temporary);

/* RFC 3339 (UTC, seconds) of ms since the epoch into buf (>= 32 bytes). */
const char *excl_fmt_time(char *buf, size_t n, int64_t ms);

#endif
