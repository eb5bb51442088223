/* vocab: see vocab.h. */
#include "pkg/sched/vocab.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/sched/sched.h"
#include "pkg/util/xalloc.h"

/* ---- warnings --------------------------------------------------------------- */

void vocab_warnings_add(struct vocab_warnings *w, const char *fmt, ...)
{
    if (!w)
        return;
    if (w->n >= VOCAB_WARN_MAX) {
        w->dropped++;
        return;
    }
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (!w->msg)
        w->msg = xcalloc(VOCAB_WARN_MAX, sizeof *w->msg);
    w->msg[w->n++] = xstrdup(tmp);
}

void vocab_warnings_free(struct vocab_warnings *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n; i++)
        free(w->msg[i]);
    free(w->msg);
    w->msg = NULL;
    w->n = 0;
    w->dropped = 0;
}

/* ---- taints, tolerations, labels ----------------------------------------------- */

static struct sched_toleration tol_view(const struct vocab_toleration *t)
{
    return (struct sched_toleration){
        .key = t->key,
        .op = t->exists ? SCHED_OP_EXISTS : SCHED_OP_EQUAL,
        .value = t->value,
        .effect = t->effect,
    };
}

bool vocab_toleration_matches(const struct vocab_toleration *t, const struct vocab_taint *taint)
{
    struct sched_toleration tv = tol_view(t);
    struct sched_taint nv = {taint->key, taint->value, taint->effect};
    return sched_tolerates(&tv, &nv);
}

bool vocab_taint_tolerated(const struct vocab_taint *taint, const struct vocab_toleration *a,
                           size_t na, const struct vocab_toleration *b, size_t nb)
{
    if (!sched_effect_blocks(taint->effect))
        return true;
    for (size_t i = 0; i < na; i++)
        if (vocab_toleration_matches(&a[i], taint))
            return true;
    for (size_t i = 0; i < nb; i++)
        if (vocab_toleration_matches(&b[i], taint))
            return true;
    return false;
}

bool vocab_labels_match(const json_t *labels, const struct vocab_kv *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!sched_label_matches(labels, want[i].key, want[i].value))
            return false;
    return true;
}

static const char *str_field(const json_t *obj, const char *key, bool *bad)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return "";
    if (!json_is_string(v)) {
        *bad = true;
        return "";
    }
    return json_string_value(v);
}

void vocab_taints_free(struct vocab_taint *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].key);
        free(t[i].value);
        free(t[i].effect);
    }
    free(t);
}

int vocab_taints_from_json(const json_t *arr, const char *what, struct vocab_taint **out, size_t *n,
                           struct err *e)
{
    *out = NULL;
    *n = 0;
    if (!arr || json_is_null(arr))
        return 0;
    if (!json_is_array(arr))
        return err_set(e, -EINVAL, "%s: not an array", what);
    size_t cnt = json_array_size(arr);
    struct vocab_taint *t = xcalloc(cnt ? cnt : 1, sizeof *t);
    for (size_t i = 0; i < cnt; i++) {
        const json_t *it = json_array_get(arr, i);
        bool bad = !json_is_object(it);
        const char *k = bad ? "" : str_field(it, "key", &bad);
        const char *v = bad ? "" : str_field(it, "value", &bad);
        const char *ef = bad ? "" : str_field(it, "effect", &bad);
        if (bad || !k[0]) {
            vocab_taints_free(t, i);
            return err_set(e, -EINVAL, "%s[%zu]: malformed taint (needs a string key)", what, i);
        }
        t[i].key = xstrdup(k);
        t[i].value = xstrdup(v);
        t[i].effect = xstrdup(ef);
    }
    *out = t;
    *n = cnt;
    return 0;
}

void vocab_tolerations_free(struct vocab_toleration *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].key);
        free(t[i].value);
        free(t[i].effect);
    }
    free(t);
}

int vocab_tolerations_from_json(const json_t *arr, const char *what, struct vocab_toleration **out,
                                size_t *n, struct err *e)
{
    *out = NULL;
    *n = 0;
    if (!arr || json_is_null(arr))
        return 0;
    if (!json_is_array(arr))
        return err_set(e, -EINVAL, "%s: not an array", what);
    size_t cnt = json_array_size(arr);
    struct vocab_toleration *t = xcalloc(cnt ? cnt : 1, sizeof *t);
    for (size_t i = 0; i < cnt; i++) {
        const json_t *it = json_array_get(arr, i);
        bool bad = !json_is_object(it);
        const char *k = bad ? "" : str_field(it, "key", &bad);
        const char *op = bad ? "" : str_field(it, "operator", &bad);
        const char *v = bad ? "" : str_field(it, "value", &bad);
        const char *ef = bad ? "" : str_field(it, "effect", &bad);
        enum sched_op sop = sched_op_parse(op);
        bool exists = sop == SCHED_OP_EXISTS;
        if (sop == SCHED_OP_INVALID)
            bad = true;
        if (bad) {
            vocab_tolerations_free(t, i);
            return err_set(e, -EINVAL,
                           "%s[%zu]: malformed toleration (string fields, operator Exists or "
                           "Equal)",
                           what, i);
        }
        t[i].key = xstrdup(k);
        t[i].exists = exists;
        t[i].value = xstrdup(v);
        t[i].effect = xstrdup(ef);
    }
    *out = t;
    *n = cnt;
    return 0;
}

void vocab_kvs_free(struct vocab_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(kv[i].key);
        free(kv[i].value);
    }
    free(kv);
}

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const struct vocab_kv *)a)->key, ((const struct vocab_kv *)b)->key);
}

int vocab_kvs_from_json(const json_t *obj, const char *what, struct vocab_kv **out, size_t *n,
                        struct err *e)
{
    *out = NULL;
    *n = 0;
    if (!obj || json_is_null(obj))
        return 0;
    if (!json_is_object(obj))
        return err_set(e, -EINVAL, "%s: not an object", what);
    size_t cnt = json_object_size(obj);
    struct vocab_kv *kv = xcalloc(cnt ? cnt : 1, sizeof *kv);
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (!json_is_string(v)) {
            vocab_kvs_free(kv, i);
            return err_set(e, -EINVAL, "%s.%s: value is not a string", what, k);
        }
        kv[i].key = xstrdup(k);
        kv[i].value = xstrdup(json_string_value(v));
        i++;
    }
    qsort(kv, cnt, sizeof *kv, kv_cmp);
    *out = kv;
    *n = cnt;
    return 0;
}

/* ---- ResourceFlavor ----------------------------------------------------------- */

void vocab_flavor_free(struct vocab_flavor *f)
{
    if (!f)
        return;
    free(f->name);
    vocab_kvs_free(f->node_labels, f->n_node_labels);
    vocab_taints_free(f->node_taints, f->n_node_taints);
    vocab_tolerations_free(f->tolerations, f->n_tolerations);
    memset(f, 0, sizeof *f);
}

int vocab_flavor_from_json(const json_t *rf, struct vocab_flavor *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    const json_t *md = json_object_get(rf, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    if (!json_is_object(rf) || !name || !name[0])
        return err_set(e, -EINVAL, "ResourceFlavor: missing metadata.name");
    const json_t *spec = json_object_get(rf, "spec");
    if (spec && !json_is_null(spec) && !json_is_object(spec))
        return err_set(e, -EINVAL, "ResourceFlavor %s: spec is not an object", name);
    out->name = xstrdup(name);
    char what[320];
    int rc;
    snprintf(what, sizeof what, "ResourceFlavor %s: spec.nodeLabels", name);
    rc = vocab_kvs_from_json(json_object_get(spec, "nodeLabels"), what, &out->node_labels,
                             &out->n_node_labels, e);
    if (rc < 0)
        goto fail;
    snprintf(what, sizeof what, "ResourceFlavor %s: spec.nodeTaints", name);
    rc = vocab_taints_from_json(json_object_get(spec, "nodeTaints"), what, &out->node_taints,
                                &out->n_node_taints, e);
    if (rc < 0)
        goto fail;
    snprintf(what, sizeof what, "ResourceFlavor %s: spec.tolerations", name);
    rc = vocab_tolerations_from_json(json_object_get(spec, "tolerations"), what, &out->tolerations,
                                     &out->n_tolerations, e);
    if (rc < 0)
        goto fail;
    return 0;
fail:
    vocab_flavor_free(out);
    return rc;
}

bool vocab_status_reported(const json_t *status)
{
    return json_is_object(status) && (json_is_string(json_object_get(status, "lastUpdated")) ||
                                      json_is_array(json_object_get(status, "nodes")));
}
