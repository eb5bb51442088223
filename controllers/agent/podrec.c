/*
 * podrec: see podrec.h. Layout of a record (varints: LEB128, 7 bits a byte, low first):
 *
 *   'P' 2 | flags (1 byte) | layout (1 byte) | nreq varint | nlim varint |
 *   ns NUL | node NUL | job: 16 bytes (L_UID) or text NUL |
 *   with a note (PODREC_UNSCHED or PODREC_STALL): job NUL reason NUL message NUL since NUL |
 *   nreq times, then nlim times unless L_LIM_SAME: a resource:
 *     name: its code (1 byte, 1..NAMES: the common names) or 0 and the name NUL;
 *     nano: the zigzag varint of the 128-bit value; format (1 byte)
 *
 * A string that is absent is written empty (ns and job are absent when empty: Kubernetes
 * never sets either to ""). The uid of a Job in its canonical form (lowercase) is kept as 16
 * bytes, and limits equal to the requests are not repeated: a record of a pod of a Job with
 * cpu and memory is about 60 bytes instead of 165 (bench-store "compact_bytes").
 */
#include "controllers/agent/podrec.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/agent/agent.h"
#include "pkg/json/jsonx.h"
#include "pkg/util/uid.h"
#include "pkg/util/xalloc.h"

#define MAGIC0     'P'
#define MAGIC1     2
#define HEADER_LEN 4 /* magic, flags, layout */

/* layout */
#define L_UID      0x01u /* the job is 16 bytes */
#define L_LIM_SAME 0x02u /* the limits are the requests */

/* Resource names kept as a code (1 + index). */
static const char *const names[] = {"cpu", "memory", "pods", "ephemeral-storage", "nvidia.com/gpu"};
#define NAMES (sizeof names / sizeof names[0])

/* ---- reading the pod --------------------------------------------------------- */

/* The pod's controller reference when it is a batch/v1 Job, else NULL (borrowed). */
static json_t *controller_job(const json_t *obj)
{
    json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
    for (size_t i = 0; i < json_array_size(refs); i++) {
        json_t *r = json_array_get(refs, i);
        const char *kind = json_string_value(json_object_get(r, "kind"));
        const char *av = json_string_value(json_object_get(r, "apiVersion"));
        if (json_is_true(json_object_get(r, "controller")) && kind && !strcmp(kind, "Job") && av &&
            !strcmp(av, "batch/v1"))
            return r;
    }
    return NULL;
}

/* msg cut to PODREC_MESSAGE_MAX bytes on a UTF-8 character boundary: its length. */
static size_t msg_len(const char *msg)
{
    size_t len = msg ? strnlen(msg, PODREC_MESSAGE_MAX) : 0;
    while (msg && len > 0 && msg[len] && ((unsigned char)msg[len] & 0xC0) == 0x80)
        len--;
    return len;
}

/* An unbound pod the scheduler could not place (PodScheduled=False, reason Unschedulable,
 * as kube-scheduler writes it): fills `n` (reason, message, since), or false. Only string
 * fields of the condition are taken (hostile objects). */
static bool pod_unschedulable(const json_t *obj, struct podrec_note *n)
{
    json_t *spec = json_object_get(obj, "spec"), *st = json_object_get(obj, "status");
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    const char *phase = json_string_value(json_object_get(st, "phase"));
    if ((node && *node) || (phase && strcmp(phase, "Pending") != 0))
        return false;
    json_t *c = jx_conds_find(json_object_get(st, "conditions"), "PodScheduled");
    const char *cst = json_string_value(json_object_get(c, "status"));
    const char *reason = json_string_value(json_object_get(c, "reason"));
    const char *since = json_string_value(json_object_get(c, "lastTransitionTime"));
    if (!cst || strcmp(cst, "False") != 0 || !reason || strcmp(reason, "Unschedulable") != 0 ||
        !since)
        return false;
    const char *msg = json_string_value(json_object_get(c, "message"));
    *n = (struct podrec_note){.reason = reason, .message = msg ? msg : "", .since = since};
    return true;
}

/* Waiting reasons that say the kubelet cannot start the container (it tried and failed), as
 * opposed to a start under way (ContainerCreating, PodInitializing: a slow volume or image,
 * a long init container), which is not a stall however long it takes. */
static bool start_failed(const char *reason)
{
    static const char *const failed[] = {
        "ErrImagePull",     "ImagePullBackOff",           "ErrImageNeverPull",
        "InvalidImageName", "CreateContainerConfigError", "CreateContainerError",
        "RunContainerError"};
    for (size_t i = 0; reason && i < sizeof failed / sizeof *failed; i++)
        if (strcmp(reason, failed[i]) == 0)
            return true;
    return false;
}

/* The first container of `statuses` (array) waiting with a start_failed reason: its
 * state.waiting (borrowed), or NULL. */
static json_t *first_failed_start(const json_t *statuses)
{
    for (size_t i = 0; i < json_array_size(statuses); i++) {
        json_t *st = json_object_get(json_array_get(statuses, i), "state");
        json_t *w = json_object_get(st, "waiting");
        if (start_failed(json_string_value(json_object_get(w, "reason"))))
            return w;
    }
    return NULL;
}

/* A bound pod that the kubelet cannot start (phase Pending and a container, init containers
 * first, waiting with a start_failed reason): fills `n`, or false. A pod still starting
 * (ContainerCreating, PodInitializing, no status yet) is not reported. since: when it was
 * scheduled (PodScheduled=True), else its creationTimestamp. */
static bool pod_not_started(const json_t *obj, struct podrec_note *n)
{
    json_t *spec = json_object_get(obj, "spec"), *st = json_object_get(obj, "status");
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    const char *phase = json_string_value(json_object_get(st, "phase"));
    if (!node || !*node || !phase || strcmp(phase, "Pending") != 0)
        return false;
    json_t *c = jx_conds_find(json_object_get(st, "conditions"), "PodScheduled");
    const char *since = json_string_value(json_object_get(c, "lastTransitionTime"));
    if (!since)
        since = json_string_value(
            json_object_get(json_object_get(obj, "metadata"), "creationTimestamp"));
    if (!since)
        return false;
    json_t *w = first_failed_start(json_object_get(st, "initContainerStatuses"));
    if (!w)
        w = first_failed_start(json_object_get(st, "containerStatuses"));
    if (!w)
        return false;
    const char *msg = json_string_value(json_object_get(w, "message"));
    *n = (struct podrec_note){.reason = json_string_value(json_object_get(w, "reason")),
                              .message = msg ? msg : "",
                              .since = since};
    return true;
}

/* Pods of the kinds whose copies the agent cannot tell from local work (their pods belong
 * to a JobSet's or Kubeflow job's children): assumed managed. */
static bool pod_of_unresolved_kind(const json_t *obj)
{
    json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    return json_object_get(labels, AGENT_JOBSET_LABEL) ||
           json_object_get(labels, AGENT_KUBEFLOW_LABEL);
}

/* ---- writing the record ------------------------------------------------------ */

struct wbuf {
    unsigned char *p;
    size_t n, cap;
};

static void put(struct wbuf *w, const void *src, size_t len)
{
    if (w->n + len > w->cap) {
        while (w->n + len > w->cap)
            w->cap = w->cap ? w->cap * 2 : 256;
        w->p = xrealloc(w->p, w->cap);
    }
    memcpy(w->p + w->n, src, len);
    w->n += len;
}

static void put_varint(struct wbuf *w, unsigned __int128 v)
{
    unsigned char b[19];
    size_t n = 0;
    do {
        b[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            b[n] |= 0x80;
        n++;
    } while (v);
    put(w, b, n);
}

/* s (NULL = "") up to len bytes, cut at a NUL, then a NUL. */
static void put_str(struct wbuf *w, const char *s, size_t len)
{
    size_t n = s ? strnlen(s, len) : 0;
    put(w, s ? s : "", n);
    put(w, "", 1);
}

static void put_list(struct wbuf *w, const struct podres_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        unsigned char code = 0;
        for (size_t k = 0; k < NAMES && !code; k++)
            if (!strcmp(l->v[i].name, names[k]))
                code = (unsigned char)(k + 1);
        put(w, &code, 1);
        if (!code)
            put_str(w, l->v[i].name, SIZE_MAX);
        unsigned __int128 u = (unsigned __int128)l->v[i].q.nano;
        put_varint(w, (u << 1) ^ (unsigned __int128)(l->v[i].q.nano >> 127)); /* zigzag */
        unsigned char f = (unsigned char)l->v[i].q.format;
        put(w, &f, 1);
    }
}

static bool same_list(const struct podres_list *a, const struct podres_list *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i].name, b->v[i].name) || a->v[i].q.nano != b->v[i].q.nano ||
            a->v[i].q.format != b->v[i].q.format)
            return false;
    return true;
}

/* req and lim as the canonical JSON the agent used to keep would parse back (identical
 * sums); false when they do not. */
static bool canonical(const struct podres_list *req, const struct podres_list *lim,
                      struct podres_list *r, struct podres_list *l)
{
    json_t *rj = podres_to_json(req), *lj = podres_to_json(lim);
    bool ok = podres_add_json(r, rj, "requests", NULL) == 0 &&
              podres_add_json(l, lj, "limits", NULL) == 0;
    json_decref(rj);
    json_decref(lj);
    return ok;
}

/* The controller Job's progress: PODREC_PROGRESS and the note's flag into *flags, the note
 * into `n`. */
static void job_progress(const json_t *pod, const char *jname, unsigned *flags,
                         struct podrec_note *n)
{
    const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    if (pod_unschedulable(pod, n))
        *flags |= PODREC_UNSCHED;
    else if (pod_not_started(pod, n))
        *flags |= PODREC_STALL;
    if (*flags & (PODREC_UNSCHED | PODREC_STALL))
        n->job = jname;
    if (phase &&
        (!strcmp(phase, "Running") || !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
        *flags |= PODREC_PROGRESS;
}

const char *const podrec_reads[] = {"metadata.namespace",
                                    "metadata.labels",
                                    "metadata.ownerReferences",
                                    "metadata.creationTimestamp",
                                    "spec.nodeName",
                                    "spec.containers.resources",
                                    "spec.initContainers.resources",
                                    "spec.initContainers.restartPolicy",
                                    "spec.resources",
                                    "spec.overhead",
                                    "status.phase",
                                    "status.conditions",
                                    "status.containerStatuses.state",
                                    "status.initContainerStatuses.state",
                                    "containers.resources",
                                    "initContainers.resources",
                                    "initContainers.restartPolicy",
                                    "resources",
                                    "overhead",
                                    NULL};

json_t *podrec_new(const json_t *pod, struct err *e)
{
    unsigned flags = 0;
    struct podres_list req = {0}, lim = {0}, r = {0}, l = {0};
    struct podrec_note n = {0};
    struct err own;
    err_clear(&own);
    /* never NULL: err_prefix(NULL, ...) returns 0, which podres_pod would pass on as success */
    if (podres_pod(pod, &req, &lim, e ? e : &own) < 0)
        flags |= PODREC_BAD;
    if (!canonical(&req, &lim, &r, &l)) {
        flags |= PODREC_NOSUMS;
        podres_free(&r);
        podres_free(&l);
    }
    if (podres_pod_counts(pod))
        flags |= PODREC_COUNTS;
    if (pod_of_unresolved_kind(pod))
        flags |= PODREC_ASSUMED;
    json_t *ref = controller_job(pod);
    const char *job = json_string_value(json_object_get(ref, "uid"));
    const char *jname = json_string_value(json_object_get(ref, "name"));
    if (job && jname)
        job_progress(pod, jname, &flags, &n);
    json_t *md = json_object_get(pod, "metadata");
    unsigned char uid[16];
    /* a job's uid cut at a NUL reads as its text up to there (podrec.h) */
    unsigned layout = (job && uid_to_bytes(job, strlen(job), uid) ? L_UID : 0) |
                      (same_list(&r, &l) ? L_LIM_SAME : 0);
    struct wbuf w = {0};
    put(&w, (const unsigned char[]){MAGIC0, MAGIC1, (unsigned char)flags, (unsigned char)layout},
        HEADER_LEN);
    put_varint(&w, r.n);
    put_varint(&w, l.n);
    put_str(&w, json_string_value(json_object_get(md, "namespace")), SIZE_MAX);
    put_str(&w, json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName")),
            SIZE_MAX);
    if (layout & L_UID)
        put(&w, uid, 16);
    else
        put_str(&w, job, SIZE_MAX);
    if (flags & (PODREC_UNSCHED | PODREC_STALL)) {
        put_str(&w, n.job, SIZE_MAX);
        put_str(&w, n.reason, SIZE_MAX);
        put_str(&w, n.message, msg_len(n.message));
        put_str(&w, n.since, SIZE_MAX);
    }
    put_list(&w, &r);
    if (!(layout & L_LIM_SAME))
        put_list(&w, &l);
    json_t *out = json_stringn_nocheck((const char *)w.p, w.n);
    free(w.p);
    podres_free(&req);
    podres_free(&lim);
    podres_free(&r);
    podres_free(&l);
    return out;
}

/* ---- reading the record ------------------------------------------------------ */

/* A varint of at most `bits` bits at *p (before end) into *v: *p moved past it; false when
 * it runs past end or is longer. */
static bool take_varint(const unsigned char **p, const unsigned char *end, unsigned bits,
                        unsigned __int128 *v)
{
    unsigned __int128 x = 0;
    for (unsigned shift = 0; shift < bits; shift += 7) {
        if (*p == end)
            return false;
        unsigned char b = *(*p)++;
        x |= (unsigned __int128)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (shift + 7 > bits && (b >> (bits - shift)))
                return false; /* more bits than fit */
            *v = x;
            return true;
        }
    }
    return false;
}

/* The NUL-terminated string at *p (before end): returned, *p moved past it; NULL when
 * there is no NUL before end. */
static const char *take_str(const unsigned char **p, const unsigned char *end)
{
    const unsigned char *z = memchr(*p, 0, (size_t)(end - *p));
    if (!z)
        return NULL;
    const char *s = (const char *)*p;
    *p = z + 1;
    return s;
}

int podrec_read(const json_t *rec, struct podrec *out)
{
    memset(out, 0, sizeof *out);
    const unsigned char *p = (const unsigned char *)json_string_value(rec);
    size_t len = json_string_length(rec);
    if (!p || len < HEADER_LEN || p[0] != MAGIC0 || p[1] != MAGIC1)
        return -EINVAL;
    const unsigned char *end = p + len;
    out->flags = p[2];
    unsigned layout = p[3];
    p += HEADER_LEN;
    unsigned __int128 nreq, nlim;
    if (!take_varint(&p, end, 32, &nreq) || !take_varint(&p, end, 32, &nlim))
        return -EINVAL;
    out->nreq = (uint32_t)nreq;
    out->nlim = (uint32_t)nlim;
    const char *ns = take_str(&p, end), *node = ns ? take_str(&p, end) : NULL;
    if (!node)
        return -EINVAL;
    out->ns = ns[0] ? ns : NULL;
    out->node = node;
    if (layout & L_UID) {
        if (end - p < 16)
            return -EINVAL;
        uid_from_bytes(p, out->uid);
        out->uid[UID_TEXT_LEN] = '\0';
        out->job = out->uid;
        p += 16;
    } else {
        const char *job = take_str(&p, end);
        if (!job)
            return -EINVAL;
        out->job = job[0] ? job : NULL;
    }
    if (out->flags & (PODREC_UNSCHED | PODREC_STALL)) {
        const char *s[4];
        for (int i = 0; i < 4; i++)
            if (!(s[i] = take_str(&p, end)))
                return -EINVAL;
        out->note =
            (struct podrec_note){.job = s[0], .reason = s[1], .message = s[2], .since = s[3]};
    }
    out->res = p;
    out->lim_same = (layout & L_LIM_SAME) != 0;
    out->end = end;
    return 0;
}

/* n resources from *p into l (may be NULL: skipped). 0 or -EINVAL. */
static int take_list(const unsigned char **p, const unsigned char *end, uint32_t n,
                     struct podres_list *l)
{
    for (uint32_t i = 0; i < n; i++) {
        if (*p == end)
            return -EINVAL;
        unsigned code = *(*p)++;
        const char *name = code ? (code <= NAMES ? names[code - 1] : NULL) : take_str(p, end);
        unsigned __int128 u;
        if (!name || !take_varint(p, end, 128, &u) || *p == end)
            return -EINVAL;
        unsigned fmt = *(*p)++;
        if (fmt > QTY_DECIMAL_EXP)
            return -EINVAL;
        struct qty q = {.nano = (__int128)((u >> 1) ^ (0 - (u & 1))),
                        .format = (enum qty_format)fmt};
        if (l)
            podres_set(l, name, &q);
    }
    return 0;
}

int podrec_resources(const struct podrec *r, struct podres_list *req, struct podres_list *lim)
{
    if (req)
        podres_free(req);
    if (lim)
        podres_free(lim);
    const unsigned char *p = r->res, *again = r->res;
    /* limits equal to the requests are read from the same bytes; the record ends with them */
    if (!p || take_list(&p, r->end, r->nreq, req) < 0 ||
        (r->lim_same ? r->nlim != r->nreq || take_list(&again, r->end, r->nlim, lim) < 0
                     : take_list(&p, r->end, r->nlim, lim) < 0) ||
        p != r->end) {
        if (req)
            podres_free(req);
        if (lim)
            podres_free(lim);
        return -EINVAL;
    }
    return 0;
}
