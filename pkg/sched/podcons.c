/* podcons: inter-pod constraints placement can and cannot judge (see podcons.h). */
#include "pkg/sched/podcons.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/labels/sel.h"
#include "pkg/util/buf.h"

static void note(struct buf *b, const char *what)
{
    if (strstr(buf_str(b), what)) /* once each */
        return;
    buf_printf(b, "%s%s", buf_str(b)[0] ? ", " : "", what);
}

static bool empty_list(const json_t *j)
{
    return !j || json_is_null(j) || (json_is_array(j) && json_array_size(j) == 0);
}

/* A required anti-affinity term placement can honour: one pod per node. */
static bool self_hostname_term(const json_t *term, const json_t *labels)
{
    const char *tk = json_string_value(json_object_get(term, "topologyKey"));
    if (!tk || strcmp(tk, PODCONS_HOSTNAME_KEY) != 0)
        return false;
    if (!empty_list(json_object_get(term, "namespaces")) ||
        (json_object_get(term, "namespaceSelector") &&
         !json_is_null(json_object_get(term, "namespaceSelector"))) ||
        !empty_list(json_object_get(term, "mismatchLabelKeys")))
        return false;
    struct sel *s = NULL;
    if (sel_from_label_selector(json_object_get(term, "labelSelector"), &s, NULL) < 0)
        return false;
    bool self = sel_matches(s, labels);
    sel_free(s);
    return self;
}

void podcons_from_template(const json_t *tmpl, struct podcons *out)
{
    memset(out, 0, sizeof *out);
    const json_t *labels = json_object_get(json_object_get(tmpl, "metadata"), "labels");
    const json_t *spec = json_object_get(tmpl, "spec");
    const json_t *aff = json_object_get(spec, "affinity");
    struct buf b;
    buf_init(&b, 1024);
    const json_t *pa = json_object_get(aff, "podAffinity");
    if (!empty_list(json_object_get(pa, "requiredDuringSchedulingIgnoredDuringExecution")))
        note(&b, "required pod affinity");
    if (!empty_list(json_object_get(pa, "preferredDuringSchedulingIgnoredDuringExecution")))
        note(&b, "preferred pod affinity");
    const json_t *paa = json_object_get(aff, "podAntiAffinity");
    const json_t *req = json_object_get(paa, "requiredDuringSchedulingIgnoredDuringExecution");
    if (req && !json_is_null(req) && !json_is_array(req))
        note(&b, "required pod anti-affinity (malformed)");
    size_t i;
    const json_t *t;
    json_array_foreach(req, i, t)
    {
        if (self_hostname_term(t, labels)) {
            out->one_per_node = true;
            continue;
        }
        const char *tk = json_string_value(json_object_get(t, "topologyKey"));
        char what[200];
        snprintf(what, sizeof what, "required pod anti-affinity (topologyKey %.120s)",
                 tk ? tk : "?");
        note(&b, what);
    }
    if (!empty_list(json_object_get(paa, "preferredDuringSchedulingIgnoredDuringExecution")))
        note(&b, "preferred pod anti-affinity");
    const json_t *tsc = json_object_get(spec, "topologySpreadConstraints");
    if (tsc && !json_is_null(tsc) && !json_is_array(tsc))
        note(&b, "topology spread (malformed)");
    json_array_foreach(tsc, i, t)
    {
        const char *tk = json_string_value(json_object_get(t, "topologyKey"));
        char what[200];
        snprintf(what, sizeof what, "topology spread (topologyKey %.120s)", tk ? tk : "?");
        note(&b, what);
    }
    if (buf_str(&b)[0])
        out->left = buf_detach(&b);
    else
        buf_free(&b);
}

void podcons_free(struct podcons *pc)
{
    if (!pc)
        return;
    free(pc->left);
    memset(pc, 0, sizeof *pc);
}
