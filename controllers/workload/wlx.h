/*
 * wlx: carry out the actions of one wl_decide() pass (wl.h),
 * asynchronously, on the event loop. This is the only part of the workload
 * controller that talks to API servers; the reconcile path calls it and
 * returns at once (nothing here blocks).
 *
 * Per action:
 *   PATCH_JOB         PATCH <job>            application/merge-patch+json  (hub);
 *                     PATCH <job>/status when it writes labels and annotations only and
 *                     ops->job_meta_via_status holds for a kind with meta_in_status
 *   PATCH_JOB_STATUS  PATCH <job>/status     application/merge-patch+json  (hub;
 *                     PATCH <job> for a kind without a status subresource)
 *   PATCH_WL_STATUS   PATCH <workload>/status merge patch (the `patch` document), or
 *                     with server_side_apply the `apply` document as
 *                     application/apply-patch+yaml, ?fieldManager=<fm>&force=true (hub)
 *   CREATE_COPY       POST <collection> on the worker's client; 409 AlreadyExists
 *                     counts as success (copies are created only if absent)
 *   DELETE_COPY       DELETE <object> on the worker's client with
 *                     propagationPolicy Background (a Job's pods go too) and,
 *                     when the action names the copy's uid, preconditions.uid
 *                     (a stale view never deletes a newer object of the same
 *                     name); 404, and 409 with a uid precondition (the copy
 *                     meant is gone), count as success
 *   EVENT             evrec_event() on the job or the workload (queued by the
 *                     recorder, not awaited); skipped when there is no recorder
 *   RESERVE/UNRESERVE the ops hooks (synchronous)
 *   REQUEUE           reported in the result (the smallest delay wins)
 * The API calls run concurrently, but for the actions marked after_job (the
 * copy of a job placed by the same pass and its Dispatched Event): those are
 * kept until the pass's PATCH_JOB (the placement) answers 2xx, carried out then,
 * and dropped if it fails; such a copy whose worker has no client then is
 * dropped without failing the pass (the next pass makes it), and so is the
 * Event with it (copy_dropped). Only a CREATE_COPY and an EVENT on the job
 * are carried out this way. `done` runs once
 * when every call has completed, with which hub objects the writes changed
 * (wl_changed, job_changed), and with the first error; a worker without a
 * client (not registered or not connected) fails any other copy action with
 * -ENOTCONN. `done` may run before wlx_perform returns (when there is no API
 * call).
 */
#ifndef KKS_CONTROLLERS_WORKLOAD_WLX_H
#define KKS_CONTROLLERS_WORKLOAD_WLX_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "controllers/workload/wl.h"
#include "controllers/workload/kinds.h"
#include "pkg/kube/client.h"
#include "pkg/kube/evrec.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"

#define WLX_CT_APPLY "application/apply-patch+yaml"

struct wlx_ops {
    struct kube_client *hub; /* borrowed, required */
    struct evrec *events;    /* borrowed, may be NULL */
    /* The client of worker `cluster` (borrowed), or NULL. May be NULL itself. */
    struct kube_client *(*worker)(void *ud, const char *cluster);
    void *ud; /* for worker() */
    /* Reservation hooks (placement.h place_resv_*), may be NULL; called with resv_ud. */
    void (*reserve)(void *resv_ud, const char *wl_key, const char *cluster);
    void (*unreserve)(void *resv_ud, const char *wl_key);
    void *resv_ud;
    const char *kueue_version; /* "v1beta1" (default when NULL) or "v1beta2" */
    bool server_side_apply;    /* workload status via SSA instead of merge patch */
    const char *field_manager; /* NULL = "kueue-ks" */
    const struct logger *lg;   /* may be NULL */
    /* A PATCH_JOB that writes only labels and annotations (the status relay, the placement
     * without a spec change, the exclusion) of a kind whose server keeps metadata written
     * through /status (kinds.h, meta_in_status: batch/v1 Job) goes to <job>/status: the
     * same write without the admission webhooks of `jobs` (real Kueue's validating one
     * answers each update on the hub: about a quarter of a job patch's CPU there,
     * docs/performance.md). The answer must show the labels and annotations written, else
     * the call fails with meta_status_dropped set in the result. */
    bool job_meta_via_status;
};

struct wlx_result {
    int rc;             /* 0, or the first failed call's code */
    struct err err;     /* its message ("PATCH /apis/...: 409 Conflict: ...") */
    unsigned calls;     /* API calls made */
    unsigned failed;    /* of which failed */
    int64_t requeue_ms; /* smallest REQUEUE delay, -1 when none */
    /* A WL_ACT_PATCH_JOB (the placement patch of the hub job) succeeded: it
     * was written even when another call of the batch failed. */
    bool job_patched;
    /* A WL_ACT_PATCH_JOB_STATUS (the status returned onto the hub job) succeeded, even
     * when another call of the batch failed. */
    bool job_status_written;
    /* The WL_ACT_CREATE_COPY made the copy (201): `copy_created`; or found the copy an earlier
     * pass made (409 AlreadyExists, the object there ours): `copy_found`. Either way the copy
     * is on the worker even when another call of the batch failed. */
    bool copy_created;
    bool copy_found;
    /* an after_job copy was never sent: the job patch failed, or its worker had no client */
    bool copy_dropped;
    /* The workload status apply got 415 Unsupported Media Type: the server has
     * no server-side apply (the devhub); use the merge patch form. */
    bool apply_unsupported;
    /* A job patch sent through /status (job_meta_via_status) was answered without the labels
     * or annotations it wrote: this server drops them there; write through the job itself. */
    bool meta_status_dropped;
    /* A write was refused as invalid, too large or forbidden (400, 403, 413, 422): the same
     * request will be refused again (e.g. a job whose annotations are near the 256 KiB limit
     * when kueue-ks adds its own). A Warning Event (WriteRejected) with the server's message
     * was sent on the hub job; the caller logs it and retries with backoff. */
    bool refused;
    struct err refused_err; /* the refused write's message, when refused */
    /* A write to the Workload (status) / the hub job (or its status) succeeded
     * and changed it: the response's metadata.resourceVersion differs from the
     * one of the object passed to wlx_perform (or the response has none). The
     * informers will deliver that change as an event; until they do, the
     * stores show the object as this pass read it. */
    bool wl_changed;
    bool job_changed;
    /* job_changed: the hub job's resourceVersion in the last answer (in the order answered) of
     * a write that changed it (NULL: the answer had none): exact for a pass with one job write,
     * the only use (controller.c, the status relay's echo). Borrowed, valid during the done
     * callback. */
    const char *job_rv_new;
};

typedef void (*wlx_done_fn)(void *ud, const char *wl_key, const struct wlx_result *r);

/*
 * Perform `acts` for workload `wl_key`. `workload` and `job` (borrowed, either
 * may be NULL when gone) are the objects the snapshot held: they give the
 * paths and the Events' involved objects; `k` is the job's kind. The actions
 * are not consumed (the caller frees them after the call; documents are
 * serialised at submit). Returns 0 (done will run), or -EINVAL for missing
 * arguments (done will not run).
 */
int wlx_perform(const struct wlx_ops *ops, const char *wl_key, const json_t *workload,
                const json_t *job, const struct kind_def *k, const struct wl_actions *acts,
                wlx_done_fn done, void *ud, struct err *e);

#endif
