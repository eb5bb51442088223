/*
 * discovery: API discovery GETs that are retried until the answer is
 * definitive, and the one rule for picking the Kueue API version. Used by
 * the workload controller, the quota controller and `kueue-ks status`, so
 * the three read the hub the same way.
 *
 * Why: a choice made at start-up from one GET (the Kueue version, the
 * origin from kube-system's uid, whether a job kind is served) lasts for the
 * life of the process. Taking a transient error (timeout, 403 while RBAC is
 * being applied, 5xx, connection refused during an apiserver restart) as the
 * answer makes a wrong choice permanent. So:
 *   - definitive: a 2xx (the document) and, unless retry_not_found, a 404
 *     (the resource is not there: rc -ENOENT);
 *   - everything else is transient: the GET is repeated after a jittered
 *     exponential backoff (backoff_s doubling up to backoff_max_s) for as
 *     long as the caller keeps the handle; on_retry reports each failure
 *     (for logs and readiness: the caller stays not-ready meanwhile);
 *   - `accept` (optional) judges a 2xx document: a negative return makes it
 *     transient too (e.g. Kueue serving neither version we know, yet).
 * The client's own retries still apply inside each attempt.
 */
#ifndef KKS_KUBE_DISCOVERY_H
#define KKS_KUBE_DISCOVERY_H

#include <jansson.h>
#include <stdbool.h>

#include "pkg/kube/client.h"
#include "pkg/util/err.h"

#define DISC_KUEUE_GROUP      "kueue.x-k8s.io"
#define DISC_KUEUE_GROUP_PATH "/apis/" DISC_KUEUE_GROUP

/*
 * The Kueue API version to use from the APIGroup document of
 * kueue.x-k8s.io: "v1beta2" when served, else "v1beta1" when served (static
 * strings). 0, or -ENOTSUP with a message when neither is served.
 */
int disc_kueue_version(const json_t *group_doc, const char **version, struct err *e);

/*
 * How a failed discovery GET reads: 1 = definitive (-ENOENT: not there),
 * 0 = transient (retry). For one-shot users (the CLI) that report instead
 * of retrying.
 */
bool disc_definitive(int rc);

struct disc;

struct disc_opts {
    struct kube_client *client; /* borrowed, required */
    const char *path;           /* required, copied */
    bool retry_not_found;       /* a 404 is transient too (e.g. Kueue not installed yet) */
    double backoff_s;           /* first retry delay; 0 = 1 s */
    double backoff_max_s;       /* 0 = 30 s */
    /* 2xx document check (may be NULL = any document). < 0 with e: transient. */
    int (*accept)(void *ud, const json_t *body, struct err *e);
    /* The definitive answer, once: rc 0 with the document (borrowed), or
     * -ENOENT with body NULL. Never called after disc_free. Required. */
    void (*done)(void *ud, int rc, const json_t *body);
    /* A transient failure; the next attempt is in delay_s. May be NULL. */
    void (*on_retry)(void *ud, const struct err *e, double delay_s);
    void *ud;
};

/* Start (first GET at once). 0, or -EINVAL without client/path/done. */
int disc_start(const struct disc_opts *o, struct disc **out, struct err *e);
/* Cancel (no callback after this) and free. NULL is fine; may be called
 * from inside this discovery's own callbacks. */
void disc_free(struct disc *d);
/* The last transient failure ("" when none yet), for readiness messages. */
const char *disc_last_error(const struct disc *d);

#endif
