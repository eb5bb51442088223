/*
 * Fuzz target for controllers/workload (kinds, transform, decide,
 * admissioncheck): job, workload and worker objects come from API servers and
 * users, so arbitrary JSON must never crash the transforms or the decision.
 *
 * Input: JSON. An object with members "job", "workload", "copy" and "flavors"
 * is used as those parts of a snapshot; any other value is used as all of
 * them. Every kind of the table (and the generic one) is exercised, and the
 * decision runs for several placement results and cluster states. The input
 * (or its "discovery" member) is also read as a discovery document
 * (kind_dynamic_new) for the job's kind, and a kind found there is exercised
 * too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "controllers/workload/acc.h"
#include "controllers/workload/wl.h"
#include "controllers/workload/xf.h"

static void run_kind(const struct kind_def *k, json_t *in, json_t *job, json_t *wl, json_t *copy,
                     json_t *flavors)
{
    struct kind_tmpl *t;
    size_t n;
    kind_templates(k, job, &t, &n);
    kind_tmpls_free(t, n);
    (void)kind_result(k, job);
    (void)kind_suspended(k, job);

    json_t *work = json_deep_copy(job);
    json_t *labels = wl_podset_labels(wl, flavors);
    if (json_is_object(work)) {
        /* the record a placement for the copy leaves, read back by the downsync */
        json_t *rec = json_deep_copy(work);
        xf_place(k, rec, "c1", labels, "tok", XF_INJECT_COPY, NULL);
        struct xf_origin ro = {.origin = "o", .origin_uid = "u"};
        json_decref(xf_downsync(k, rec, &ro, NULL));
        json_decref(rec);
        xf_place(k, work, "c1", labels, "tok", XF_INJECT_SPEC, NULL);
        xf_place(k, work, "c1", in, NULL, XF_INJECT_SPEC, NULL);
        xf_unplace(k, work);
        xf_unplace(k, work);
    }
    json_decref(labels);
    json_decref(work);
    struct xf_origin o = {.origin = "o", .origin_uid = "u"};
    json_t *d = xf_downsync(k, job, &o, NULL);
    if (d)
        (void)xf_is_ours(d, &o);
    json_decref(d);
    struct xf_status st;
    if (xf_status_return(k, copy, "c1", true, &st, NULL) == 0)
        xf_status_release(&st);
    if (xf_status_return(k, copy, "c1", false, &st, NULL) == 0)
        xf_status_release(&st);

    static const struct wl_placement places[] = {
        {.status = WL_PLACE_OK, .cluster = "c1", .message = "m"},
        {.status = WL_PLACE_NOT_NOW, .message = "m"},
        {.status = WL_PLACE_NEVER},
        {.status = WL_PLACE_PIN_UNKNOWN, .cluster = "c3"},
    };
    struct wl_copy copies[2] = {{.cluster = "c1", .obj = copy}, {.cluster = "c2", .obj = copy}};
    for (size_t i = 0; i <= 4; i++) {
        struct wl_snapshot s = {
            .workload = wl,
            .job = job,
            .kind = k,
            .check_name = "ks",
            .flavor_labels = flavors,
            .placement = i < 4 ? &places[i] : NULL,
            .copies = copies,
            .n_copies = copy ? 2 : 0,
            .placed = {.reachable = i % 2 == 0, .usable = i % 3 == 0, .unusable_since_ms = 0},
            .now_ms = 400000,
            .now = "T",
            .opts = {.direct = true,
                     .delete_on_completion = i % 2,
                     .worker_lost_timeout_ms = 300000,
                     .origin = "o"},
        };
        const char *pin;
        (void)wl_wants_placement(&s, &pin);
        struct wl_actions a;
        wl_actions_init(&a);
        wl_decide(&s, &a, NULL);
        free(wl_actions_describe(&a));
        wl_actions_free(&a);
    }
    free(wl_placement_token(wl));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *in = json_loadb((const char *)data, size, JSON_DECODE_ANY, &jerr);
    if (!in)
        return 0;
    json_t *job = in, *wl = in, *copy = in, *flavors = in;
    if (json_is_object(in) && json_object_get(in, "job")) {
        job = json_object_get(in, "job");
        wl = json_object_get(in, "workload");
        copy = json_object_get(in, "copy");
        flavors = json_object_get(in, "flavors");
    }
    size_t n;
    const struct kind_def *tab = kind_table(&n);
    for (size_t i = 0; i < n; i++)
        run_kind(&tab[i], in, job, wl, copy, flavors);
    run_kind(kind_generic(), in, job, wl, copy, flavors);
    json_t *disc = json_object_get(in, "discovery") ? json_object_get(in, "discovery") : in;
    const char *jk = json_string_value(json_object_get(job, "kind"));
    struct kind_def *dk = kind_dynamic_new(disc, "example.com", "v1", jk ? jk : "Widget", NULL);
    if (dk)
        run_kind(dk, in, job, wl, copy, flavors);
    kind_dynamic_free(dk);
    (void)kind_for_owner(in);
    json_t *p = NULL;
    if (acc_decide(in, 1, 2, "T", &p, NULL) > 0)
        json_decref(p);
    json_decref(in);
    return 0;
}
