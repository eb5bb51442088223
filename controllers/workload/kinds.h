/*
 * kinds: the job kinds kueue-ks places, as a table of data (docs/design.md §5).
 *
 * Each entry says, for one (group, version, kind):
 *   - the REST resource plural and the prefix Kueue uses in Workload names
 *     ("job" -> "job-<name>-<hash5>");
 *   - where the pod templates are, in one of three shapes:
 *       KIND_TMPL_SINGLE: one template at `tmpl_path`            (Job: spec.template,
 *                         pod set "main");
 *       KIND_TMPL_MAP:    an object at `tmpl_path` whose every member holds a template
 *                         at `tmpl_sub`; the pod set is the member name in lower case
 *                         (PyTorchJob: spec.pytorchReplicaSpecs.<Type>.template);
 *       KIND_TMPL_LIST:   an array at `tmpl_path` whose every element holds a template
 *                         at `tmpl_sub`; the pod set is the element's "name"
 *                         (JobSet: spec.replicatedJobs[i].template.spec.template);
 *   - where the replica count of a template is (relative to the job for SINGLE,
 *     to the member/element otherwise; absent = 1);
 *   - the suspend field (spec.suspend, spec.runPolicy.suspend) and the managedBy
 *     field;
 *   - which status conditions (status True) mean "finished, succeeded" and
 *     "finished, failed". A Job is finished only with Complete or Failed: the
 *     SuccessCriteriaMet / FailureTarget conditions (Kubernetes >= 1.31) only
 *     announce them while pods terminate, so they are listed separately as
 *     `pre_success` / `pre_failure` (xf.c writes them before the final
 *     ones, as the Job controller's validation requires).
 *
 * Adding a kind is one entry in the table in kinds.c. A kind that is not in
 * the table gets the generic entry (kind_generic()): no templates (placement
 * by label only), no suspend field, finished never known from conditions,
 * status copied whole.
 *
 * All entries are static and immutable: pointers returned here are borrowed
 * for the life of the process.
 */
#ifndef KKS_CONTROLLERS_WORKLOAD_KINDS_H
#define KKS_CONTROLLERS_WORKLOAD_KINDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pkg/util/err.h"

enum kind_tmpl_shape { KIND_TMPL_NONE = 0, KIND_TMPL_SINGLE, KIND_TMPL_MAP, KIND_TMPL_LIST };

enum kind_status_rule {
    KIND_STATUS_JOB = 0, /* batch/v1 Job rules: remote-status annotation, final status */
    KIND_STATUS_COPY     /* copy the worker's .status whole */
};

struct kind_def {
    const char *group;     /* "batch", "kubeflow.org"; "" for the generic entry */
    const char *version;   /* "v1" */
    const char *kind;      /* "Job" */
    const char *resource;  /* "jobs" */
    const char *wl_prefix; /* lower-case kind, Kueue's Workload name prefix */
    enum kind_tmpl_shape shape;
    const char *tmpl_path;       /* jsonx path of the template / map / list */
    const char *tmpl_sub;        /* MAP/LIST: path of the template inside a member/element */
    const char *replicas;        /* path of the replica count (see above) or NULL */
    const char *suspend_path;    /* NULL: the kind has no suspend field */
    const char *managed_by_path; /* NULL: no managedBy field */
    const char *const *success;  /* NULL-terminated condition types */
    const char *const *failure;
    const char *pre_success; /* condition written before a success one, or NULL */
    const char *pre_failure;
    enum kind_status_rule status_rule;
    bool generic;
    /* The resource has no /status subresource (a CRD without
     * subresources.status): status is written through the object itself. */
    bool no_status_subresource;
    /* The server keeps labels and annotations written through the /status subresource
     * (Kubernetes' Job status strategy resets the spec only; a CRD's /status drops every
     * change outside status), and admission webhooks registered for the resource alone (not
     * for <resource>/status or a wildcard) are not called for it: kueue-ks's own metadata goes that
     * way (wlx.h, job_meta_via_status). */
    bool meta_in_status;
};

/* The entry for apiVersion ("batch/v1", "v1" = core) and kind, or NULL. */
const struct kind_def *kind_lookup(const char *api_version, const char *kind);
/* Same, by API group (without version; any served version matches) and kind. */
const struct kind_def *kind_lookup_gk(const char *group, const char *kind);
/* The entry for an ownerReference object ({apiVersion, kind, ...}); the generic
 * entry when the kind is unknown; NULL when ref is not an object with both fields. */
const struct kind_def *kind_for_owner(const json_t *ref);
/* The generic entry. */
const struct kind_def *kind_generic(void);
/*
 * A generic entry for a kind outside the table, from the hub's discovery
 * document of its group-version (an APIResourceList, borrowed): the resource
 * whose "kind" is `kind` (subresources skipped) must be namespaced (Workloads
 * and their owners share a namespace) and support get, list, watch, create,
 * patch and delete. Its /status subresource is used when listed. Returns a
 * new entry (free with kind_dynamic_free; generic = true, status copied
 * whole, no templates, no suspend field), or NULL with -ENOENT (the kind is
 * not served) / -EINVAL (served but unusable, or a malformed document) and a
 * message in e.
 */
struct kind_def *kind_dynamic_new(const json_t *resource_list, const char *group,
                                  const char *version, const char *kind, struct err *e);
void kind_dynamic_free(struct kind_def *k);
/* True when k is (group, version, kind) = apiVersion + kind. */
bool kind_is(const struct kind_def *k, const char *api_version, const char *kind);
/* Split apiVersion "group/version" (or "v1" = core) into new strings. -EINVAL
 * for an empty or malformed value. */
int kind_split_api_version(const char *api_version, char **group, char **version);

/* The entries of the table (not the generic one), for building informers. */
const struct kind_def *kind_table(size_t *n);
/* "group/version", or "version" for the core group. Writes into buf (size n). */
const char *kind_api_version(const struct kind_def *k, char *buf, size_t n);

/* One pod template of a job object. */
struct kind_tmpl {
    char *podset; /* owned: Kueue's pod set name ("main", "master", "worker") */
    char *path;   /* owned: jsonx path of the template, escaped ("spec.template") */
    json_t *tmpl; /* borrowed from the job: the PodTemplateSpec object */
    int64_t replicas;
};

/*
 * The pod templates of `job` in document order (MAP: sorted by member name).
 * Members or elements without an object template are skipped. *out is a new
 * array (free with kind_tmpls_free), NULL when *n is 0. Never fails.
 */
void kind_templates(const struct kind_def *k, const json_t *job, struct kind_tmpl **out, size_t *n);
void kind_tmpls_free(struct kind_tmpl *t, size_t n);

enum kind_result { KIND_RUNNING = 0, KIND_SUCCEEDED = 1, KIND_FAILED = 2 };

/* Whether `job` is finished, from its status conditions (True). */
enum kind_result kind_result(const struct kind_def *k, const json_t *job);
/* The suspend flag (false when absent or the kind has none). */
bool kind_suspended(const struct kind_def *k, const json_t *job);
/* The managedBy value or NULL. Borrowed. */
const char *kind_managed_by(const struct kind_def *k, const json_t *job);

#endif
