/*
 * podrec: the agent's compact record of a Pod (issue 12 goal 3): what the ClusterMetrics
 * agent reads of a pod, computed once per change of the pod and packed into one byte string,
 * so a cached pod costs one JSON string (two allocations) instead of a tree of objects.
 *
 * A record holds exactly what agent.c reads:
 *   - whether the pod counts on its node (podres_pod_counts: bound, not Succeeded/Failed)
 *     and the node's name;
 *   - its effective requests and limits (podres_pod), as canonical quantities would parse
 *     back (the sums of ClusterMetrics are the same as from the JSON projection before);
 *     none when they did not parse (PODREC_BAD: the pod counts as requesting nothing);
 *   - its namespace, the uid of its controller when that is a batch/v1 Job, and whether it
 *     is assumed hub work (AGENT_JOBSET_LABEL / AGENT_KUBEFLOW_LABEL);
 *   - for a pod of a Job: whether it ran (Running, Succeeded or Failed), and at most one
 *     note: unschedulable (Pending, unbound, PodScheduled False/Unschedulable) or not started
 *     (Pending, bound, a container whose start failed), with the Job's name, the reason,
 *     the message (first 1024 bytes, cut on a UTF-8 boundary) and since (agent.h).
 * Nothing else of the pod is kept (no resourceVersion, labels, spec, status). The namespace
 * and node names are copied into each record (not interned: a shared table would need a
 * reference count per string that the store's jansson values cannot drop).
 *
 * The record is a JSON string (json_stringn_nocheck: bytes, not UTF-8) that only this
 * module reads; the informer's store keeps it as the pod's projection. Two records are
 * equal (json_equal) exactly when everything above is equal, so an update that changes
 * nothing the agent reads compares equal. Strings of the pod that hold a NUL byte are cut
 * there, as json_string_value() reads them.
 *
 * Bad data never crashes: missing or wrong-typed fields count as absent; resources that do
 * not parse give PODREC_BAD and a message in `e`.
 */
#ifndef KKS_CONTROLLERS_AGENT_PODREC_H
#define KKS_CONTROLLERS_AGENT_PODREC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pkg/podres/podres.h"
#include "pkg/util/uid.h"
#include "pkg/util/err.h"

#define PODREC_MESSAGE_MAX 1024 /* bytes of a note's message kept */

/* flags */
#define PODREC_COUNTS   0x01u /* bound and not terminal: holds its requests on `node` */
#define PODREC_ASSUMED  0x02u /* a JobSet's or Kubeflow job's pod: assumed hub work */
#define PODREC_PROGRESS 0x04u /* a Job's pod that is or was running */
#define PODREC_UNSCHED  0x08u /* note: unschedulable */
#define PODREC_STALL    0x10u /* note: not started */
#define PODREC_BAD      0x20u /* its resources did not parse: none recorded */
#define PODREC_NOSUMS   0x40u /* its canonical resources did not parse back: left out of sums */

/* A note about a Job's pod (borrowed from the record). */
struct podrec_note {
    const char *job; /* the controller Job's name */
    const char *reason, *message, *since;
};

/* A decoded record; every pointer borrows the record's bytes (valid while it lives) or, for
 * job, the struct itself (do not copy a struct podrec and keep reading the copy's job). */
struct podrec {
    unsigned flags;
    const char *ns;          /* NULL when the pod had none */
    const char *node;        /* "" when unbound */
    const char *job;         /* the controller batch/v1 Job's uid, NULL when none */
    struct podrec_note note; /* all NULL unless PODREC_UNSCHED or PODREC_STALL */
    /* the packed resources (read with podrec_resources) */
    const unsigned char *res, *end;
    uint32_t nreq, nlim;
    bool lim_same;              /* the limits are the requests' bytes */
    char uid[UID_TEXT_LEN + 1]; /* job's text when the record keeps it as 16 bytes */
};

/*
 * Every member podrec_new() reads of a pod (dotted paths, arrays transparent; for
 * jscan_load_paths and the agent's pod store): a pod built with only these members has the
 * same record as the whole pod (test_podrec, fuzz_podres). The top-level containers,
 * initContainers, resources and overhead are for an object without a spec, which podres
 * reads as its own spec.
 */
extern const char *const podrec_reads[];

/*
 * The record of `pod` (borrowed). New reference, never NULL. When its resources do not
 * parse the record has PODREC_BAD and `e` (may be NULL) says why.
 */
json_t *podrec_new(const json_t *pod, struct err *e);

/* Decode a record made by podrec_new(). 0, or -EINVAL when `rec` is not one. */
int podrec_read(const json_t *rec, struct podrec *out);

/* The requests and limits of a decoded record into `req` and `lim` (freed and refilled;
 * either may be NULL). 0, or -EINVAL for a damaged record (the lists are then empty). */
int podrec_resources(const struct podrec *r, struct podres_list *req, struct podres_list *lim);

#endif
