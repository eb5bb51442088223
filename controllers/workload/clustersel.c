/* clustersel: the clusters a job may use, by their labels (see clustersel.h). */
#include "controllers/workload/clustersel.h"

#include <errno.h>
#include <string.h>

#include "pkg/json/jsonx.h"

int clsel_for(const json_t *job, const json_t *cq, struct sel **out, const char **text,
              const char **from, struct err *e)
{
    *out = NULL;
    *text = NULL;
    *from = NULL;
    const json_t *src = job;
    const char *s = jx_annotation(job, CLSEL_ANNOTATION);
    if (!s) {
        src = cq;
        s = cq ? jx_annotation(cq, CLSEL_ANNOTATION) : NULL;
    }
    if (!s || !s[0])
        return 0;
    *text = s;
    *from = src == job ? "job" : "ClusterQueue";
    struct err pe = {0};
    if (sel_parse(s, out, &pe) < 0) {
        *out = NULL;
        return err_set(e, -EINVAL, "annotation %s on the %s%s%s: %s", CLSEL_ANNOTATION, *from,
                       src == cq ? " " : "", src == cq && jx_name(cq) ? jx_name(cq) : "", pe.msg);
    }
    return 0;
}

static void add_strings(json_t *dst, const json_t *src)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)src, k, v) if (json_is_string(v)) json_object_set(dst, k, v);
}

json_t *clsel_cluster_labels(const char *name, const json_t *cm, const json_t *extra)
{
    json_t *l = json_object();
    add_strings(l, json_object_get(json_object_get(cm, "metadata"), "labels"));
    add_strings(l, extra);
    json_object_set_new(l, "name", json_string(name ? name : ""));
    return l;
}
