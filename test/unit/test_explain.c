/* Unit tests for controllers/workload/explain: the per-cluster verdicts and
 * the exact message, for the dev environment's two clusters. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/workload/explain.h"
#include "pkg/util/xalloc.h"
#include "test/support/tjson.h"

#define J(s) tjson(s)

/* cluster1: 2 nodes cpu=8 instance=spot; cluster2: 2 nodes cpu=8 gpu=2 instance=h100.
 * `req1`/`req2`: the requests already on each node of cluster1/cluster2. */
static void clusters_init(struct place_cluster c[2], const char *req1, const char *req2)
{
    char *s1 = xasprintf(
        "{'metadata':{'name':'cluster1'},'status':{'nodes':["
        "{'name':'a','labels':{'instance':'spot'},'allocatableResources':{'cpu':'8','memory':"
        "'32Gi'},'allocatedResourceRequests':{%s}},"
        "{'name':'b','labels':{'instance':'spot'},'allocatableResources':{'cpu':'8','memory':"
        "'32Gi'},'allocatedResourceRequests':{%s}}]}}",
        req1, req1);
    char *s2 = xasprintf(
        "{'metadata':{'name':'cluster2'},'status':{'nodes':["
        "{'name':'a','labels':{'instance':'h100'},'allocatableResources':{'cpu':'8','memory':"
        "'32Gi','nvidia.com/gpu':'2'},'allocatedResourceRequests':{%s}},"
        "{'name':'b','labels':{'instance':'h100'},'allocatableResources':{'cpu':'8','memory':"
        "'32Gi','nvidia.com/gpu':'2'},'allocatedResourceRequests':{%s}}]}}",
        req2, req2);
    const char *src[2] = {s1, s2};
    for (int i = 0; i < 2; i++) {
        json_t *j = J(src[i]);
        struct err e = {0};
        assert_int_equal(place_cluster_from_json(j, &c[i], NULL, &e), 0);
        json_decref(j);
    }
    free(s1);
    free(s2);
}

static void flavors_init(struct vocab_flavor f[2])
{
    const char *src[2] = {"{'metadata':{'name':'spot'},'spec':{'nodeLabels':{'instance':'spot'}}}",
                          "{'metadata':{'name':'h100'},'spec':{'nodeLabels':{'instance':'h100'}}}"};
    for (int i = 0; i < 2; i++) {
        json_t *j = J(src[i]);
        struct err e = {0};
        assert_int_equal(vocab_flavor_from_json(j, &f[i], &e), 0);
        json_decref(j);
    }
}

/* A workload with pod set main: `count` pods with `requests`; `flavor` NULL =
 * not admitted by Kueue yet. */
static void workload_init(struct place_workload *w, int count, const char *requests,
                          const char *flavor)
{
    char *adm = flavor ? xasprintf(",'status':{'admission':{'podSetAssignments':[{'name':'main',"
                                   "'flavors':{'cpu':'%s'}}]}}",
                                   flavor)
                       : xstrdup("");
    char *s = xasprintf("{'metadata':{'name':'w','namespace':'ns'},'spec':{'podSets':[{'name':"
                        "'main','count':%d,'template':{'spec':{'containers':[{'name':'c',"
                        "'resources':{'requests':{%s}}}]}}}]}%s}",
                        count, requests, adm);
    json_t *j = J(s);
    struct err e = {0};
    if (place_workload_from_json(j, w, &e) != 0)
        fail_msg("workload: %s", e.msg);
    json_decref(j);
    free(s);
    free(adm);
}

struct fx {
    struct place_cluster c[2];
    struct vocab_flavor f[2];
    struct place_workload w;
    struct explain_report r;
};

static void run(struct fx *x, const char *req1, const char *req2, int count, const char *requests,
                const char *flavor, const bool *usable, bool now)
{
    clusters_init(x->c, req1, req2);
    flavors_init(x->f);
    workload_init(&x->w, count, requests, flavor);
    struct explain_input in = {.wl = &x->w,
                               .clusters = x->c,
                               .n_clusters = 2,
                               .usable = usable,
                               .flavors = x->f,
                               .n_flavors = 2,
                               .now = now};
    assert_int_equal(explain_fit(&in, &x->r), 0);
}

static void fx_free(struct fx *x)
{
    explain_report_free(&x->r);
    place_workload_free(&x->w);
    for (int i = 0; i < 2; i++) {
        place_cluster_free(&x->c[i]);
        vocab_flavor_free(&x->f[i]);
    }
}

static void assert_msg(const struct fx *x, const char *want)
{
    if (strcmp(x->r.message, want) != 0)
        fail_msg("got:  %s\nwant: %s", x->r.message, want);
}

/* The case: 100 cpu, not admitted by Kueue (its quota is smaller). */
static void test_never_fits_names_both_clusters(void **state)
{
    (void)state;
    struct fx x = {0};
    run(&x, "", "", 1, "'cpu':'100'", NULL, NULL, false);
    assert_int_equal(x.r.overall, EXPLAIN_NEVER);
    assert_int_equal(x.r.v[0].fit, EXPLAIN_NEVER);
    assert_int_equal(x.r.v[1].fit, EXPLAIN_NEVER);
    assert_msg(&x, "never fits: pod set main needs cpu 100 per pod; cluster1: largest node 8 cpu "
                   "(spot); cluster2: largest node 8 cpu (h100)");
    assert_int_equal(x.r.v[0].ps[0].matching, 2);
    assert_int_equal(x.r.v[0].ps[0].res[0].alloc_max, 8000);
    fx_free(&x);
}

/* Admitted to h100, 4 cpu and a gpu; cluster1 has no h100 node, cluster2 has
 * 3 cpu free on each node. */
static void test_waiting_with_free_amounts(void **state)
{
    (void)state;
    struct fx x = {0};
    run(&x, "", "'cpu':'5'", 1, "'cpu':'4','nvidia.com/gpu':'1'", "h100", NULL, true);
    assert_int_equal(x.r.overall, EXPLAIN_FITS_EMPTY);
    assert_int_equal(x.r.v[0].fit, EXPLAIN_NEVER);
    assert_int_equal(x.r.v[1].fit, EXPLAIN_FITS_EMPTY);
    assert_msg(&x, "waiting for capacity: pod set main needs cpu 4, nvidia.com/gpu 1 per pod; "
                   "cluster1: no node of flavor h100 (instance=h100), the flavor Kueue reserved "
                   "the quota in; cluster2: 3 of 4 cpu free on a matching node (h100)");
    assert_string_equal(x.r.v[0].ps[0].no_flavor_node, "h100");
    assert_null(x.r.v[1].ps[0].no_flavor_node);
    assert_int_equal(x.r.v[1].ps[0].res[0].free_max, 3000);
    /* both nodes of cluster2 counted: 3 + 3 of 8 + 8 */
    assert_int_equal(x.r.v[1].ps[0].res[0].free_sum, 6000);
    assert_int_equal(x.r.v[1].ps[0].res[0].alloc_sum, 16000);
    fx_free(&x);
}

/* Room held for a job placed since the cluster's last report (the controller's reservations)
 * is taken from the free amount, and the clause says how much: a user saw "0 of 5 cpu free"
 * where the metrics said 3 and could not tell why. */
static void test_free_amount_says_held(void **state)
{
    (void)state;
    struct fx x = {0};
    clusters_init(x.c, "", "'cpu':'5'"); /* cluster2: 3 cpu free on each node */
    flavors_init(x.f);
    struct place_resv rv;
    place_resv_init(&rv);
    struct place_workload placed;
    workload_init(&placed, 2, "'cpu':'2'", "h100"); /* one pod on each node */
    free(placed.key); /* another job than the one explained (its own hold is not subtracted) */
    placed.key = xstrdup("ns/placed");
    struct place_result pr;
    assert_int_equal(place_decide(&placed, &x.c[1], 1, x.f, 2, &rv, NULL, &pr), 0);
    assert_int_equal(pr.status, PLACE_OK);
    assert_int_equal(place_resv_add(&rv, placed.key, &pr, 0), 0);
    place_result_free(&pr);
    workload_init(&x.w, 1, "'cpu':'3'", "h100");
    struct explain_input in = {.wl = &x.w,
                               .clusters = x.c,
                               .n_clusters = 2,
                               .flavors = x.f,
                               .n_flavors = 2,
                               .resv = &rv,
                               .now = true};
    assert_int_equal(explain_fit(&in, &x.r), 0);
    assert_int_equal(x.r.v[1].fit, EXPLAIN_FITS_EMPTY);
    assert_msg(&x, "waiting for capacity: pod set main needs cpu 3 per pod; cluster1: no node of "
                   "flavor h100 (instance=h100), the flavor Kueue reserved the quota in; cluster2: "
                   "1 of 3 cpu free on a matching node (h100), after 2 cpu held for jobs placed "
                   "there since its last report");
    assert_int_equal(x.r.v[1].ps[0].res[0].held_max, 2000);
    explain_report_free(&x.r);
    /* held beyond what the metrics show free (the same pods held and reported): the two
     * figures still add up to the metrics' free amount, 3 = 0 + 3 */
    struct place_reslist tot[2] = {{0}, {0}};
    char *names[2] = {"a", "b"};
    place_reslist_add(&tot[0], "cpu", 3000);
    place_reslist_add(&tot[1], "cpu", 3000);
    struct place_result big = {.status = PLACE_OK,
                               .cluster = "cluster2",
                               .node_totals = tot,
                               .node_names = names,
                               .n_nodes = 2};
    assert_int_equal(place_resv_add(&rv, "ns/big", &big, 0), 0); /* 3 - 2 - 3 on each */
    place_reslist_free(&tot[0]);
    place_reslist_free(&tot[1]);
    assert_int_equal(explain_fit(&in, &x.r), 0);
    const struct explain_res *er = &x.r.v[1].ps[0].res[0];
    assert_int_equal(er->free_max, 0);
    assert_int_equal(er->held_max, 3000);
    fx_free(&x);
    place_workload_free(&placed);
    place_resv_free(&rv);
}

/* Without `now`, the same situation carries no free amounts (stable text). */
static void test_not_now_leaves_amounts_out(void **state)
{
    (void)state;
    struct fx x = {0};
    run(&x, "'cpu':'5'", "'cpu':'5'", 1, "'cpu':'4'", NULL, NULL, false);
    assert_int_equal(x.r.overall, EXPLAIN_FITS_EMPTY);
    assert_msg(&x, "fits when capacity frees: pod set main needs cpu 4 per pod; cluster1: fits "
                   "when capacity frees (spot); cluster2: fits when capacity frees (h100)");
    fx_free(&x);
}

static void test_fits_now(void **state)
{
    (void)state;
    struct fx x = {0};
    run(&x, "'cpu':'5'", "", 3, "'cpu':'2'", NULL, NULL, true);
    assert_int_equal(x.r.overall, EXPLAIN_FITS_NOW);
    assert_int_equal(x.r.v[0].fit, EXPLAIN_FITS_EMPTY);
    assert_msg(&x, "fits now: pod set main needs 3 pods, cpu 2 per pod; cluster1: 2 matching "
                   "nodes cannot hold all 3 pods of pod set main now; cluster2: fits now (h100)");
    fx_free(&x);
}

/* A cluster with stale metrics cannot be judged: not "never fits". */
static void test_unusable_cluster_is_not_never(void **state)
{
    (void)state;
    struct fx x = {0};
    bool usable[2] = {true, false};
    run(&x, "", "", 1, "'cpu':'100'", NULL, usable, false);
    assert_int_equal(x.r.overall, EXPLAIN_UNKNOWN);
    assert_int_equal(x.r.v[1].fit, EXPLAIN_UNKNOWN);
    assert_msg(&x, "no cluster fits among those with fresh metrics: pod set main needs cpu 100 "
                   "per pod; cluster1: largest node 8 cpu (spot); cluster2: no fresh metrics "
                   "(stale or unreachable): cannot tell");
    fx_free(&x);
}

/* Clusters come in store order; the report is in name order; bytes in binary units. */
static void test_name_order_and_memory_units(void **state)
{
    (void)state;
    struct fx x = {0};
    clusters_init(x.c, "", "");
    flavors_init(x.f);
    workload_init(&x.w, 1, "'cpu':'1','memory':'200Mi'", NULL);
    struct place_cluster rev[2] = {x.c[1], x.c[0]};
    struct explain_input in = {
        .wl = &x.w, .clusters = rev, .n_clusters = 2, .flavors = x.f, .n_flavors = 2};
    assert_int_equal(explain_fit(&in, &x.r), 0);
    assert_msg(&x, "fits now: pod set main needs cpu 1, memory 200Mi per pod; cluster1: fits now "
                   "(spot); cluster2: fits now (h100)");
    fx_free(&x);
}

/* A pod set of one pod with 1 cpu and the required node affinity `key` In [`value`]. */
static void affinity_workload_init(struct place_workload *w, const char *key, const char *value)
{
    char *s = xasprintf(
        "{'metadata':{'name':'w','namespace':'ns'},'spec':{'podSets':[{'name':'main','count':1,"
        "'template':{'spec':{'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuring"
        "Execution':{'nodeSelectorTerms':[{'matchExpressions':[{'key':'%s','operator':'In',"
        "'values':['%s']}]}]}}},'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}]}}"
        "}]}}",
        key, value);
    json_t *j = J(s);
    struct err e = {0};
    if (place_workload_from_json(j, w, &e) != 0)
        fail_msg("workload: %s", e.msg);
    json_decref(j);
    free(s);
}

/* The required node affinity is judged per cluster and named when it alone
 * leaves no node. */
static void test_affinity_verdict(void **state)
{
    (void)state;
    struct fx x = {0};
    clusters_init(x.c, "", "");
    flavors_init(x.f);
    affinity_workload_init(&x.w, "instance", "h100");
    struct explain_input in = {
        .wl = &x.w, .clusters = x.c, .n_clusters = 2, .flavors = x.f, .n_flavors = 2, .now = true};
    assert_int_equal(explain_fit(&in, &x.r), 0);
    assert_int_equal(x.r.v[0].fit, EXPLAIN_NEVER);
    assert_int_equal(x.r.v[0].ps[0].by_affinity, 2);
    assert_int_equal(x.r.v[1].fit, EXPLAIN_FITS_NOW);
    assert_msg(&x, "fits now: pod set main needs cpu 1 per pod; cluster1: never: no node matches "
                   "the required node affinity (instance In [h100]) of pod set main; cluster2: "
                   "fits now (h100)");
    explain_report_free(&x.r);
    place_workload_free(&x.w);
    /* matching no node anywhere: never fits, both clusters say why */
    affinity_workload_init(&x.w, "no-such-label", "x");
    assert_int_equal(explain_fit(&in, &x.r), 0);
    assert_int_equal(x.r.overall, EXPLAIN_NEVER);
    assert_msg(&x, "never fits: pod set main needs cpu 1 per pod; cluster1: never: no node matches "
                   "the required node affinity (no-such-label In [x]) of pod set main; cluster2: "
                   "never: no node matches the required node affinity (no-such-label In [x]) of "
                   "pod set main");
    fx_free(&x);
}

/* Clusters the caller excludes say why; outside the selector does not count
 * for the whole, an exclusion for a while does (not "never"). */
static void test_excluded_clusters(void **state)
{
    (void)state;
    struct fx x = {0};
    clusters_init(x.c, "", "");
    flavors_init(x.f);
    workload_init(&x.w, 1, "'nvidia.com/gpu':'1'", NULL);
    struct explain_excl ex[2] = {
        {.why = "excluded by the cluster selector \"location-group=eu\" (from the job)"}, {0}};
    struct explain_input in = {.wl = &x.w,
                               .clusters = x.c,
                               .n_clusters = 2,
                               .excluded = ex,
                               .flavors = x.f,
                               .n_flavors = 2,
                               .now = true};
    assert_int_equal(explain_fit(&in, &x.r), 0);
    assert_int_equal(x.r.v[0].fit, EXPLAIN_EXCLUDED);
    assert_string_equal(explain_fit_name(x.r.v[0].fit), "excluded");
    assert_int_equal(x.r.overall, EXPLAIN_FITS_NOW);
    assert_msg(&x, "fits now: pod set main needs nvidia.com/gpu 1 per pod; cluster1: excluded by "
                   "the cluster selector \"location-group=eu\" (from the job); cluster2: fits now "
                   "(h100)");
    explain_report_free(&x.r);
    /* cluster2 excluded for a while, cluster1 outside the selector: not never */
    ex[1] = (struct explain_excl){.why = "excluded until 2026-11-24T10:10:00Z: its pods could not "
                                         "be scheduled there (kueue-ks.io/excluded-clusters)",
                                  .temporary = true};
    assert_int_equal(explain_fit(&in, &x.r), 0);
    assert_int_equal(x.r.overall, EXPLAIN_UNKNOWN);
    assert_msg(&x, "no cluster fits among those with fresh metrics: pod set main needs "
                   "nvidia.com/gpu 1 per pod; cluster1: excluded by the cluster selector "
                   "\"location-group=eu\" (from the job); cluster2: excluded until "
                   "2026-11-24T10:10:00Z: its pods could not be scheduled there "
                   "(kueue-ks.io/excluded-clusters)");
    explain_report_free(&x.r);
    /* both outside the selector: no candidate, not never (placement waits for a cluster
     * labelled to match: "never fits" misled a user who then labelled one) */
    ex[1] = ex[0];
    assert_int_equal(explain_fit(&in, &x.r), 0);
    assert_int_equal(x.r.overall, EXPLAIN_EXCLUDED);
    assert_msg(&x, "no cluster is a candidate for the job: pod set main needs nvidia.com/gpu 1 "
                   "per pod; cluster1: excluded by the cluster selector \"location-group=eu\" "
                   "(from the job); cluster2: excluded by the cluster selector "
                   "\"location-group=eu\" (from the job)");
    fx_free(&x);
}

static void test_no_clusters(void **state)
{
    (void)state;
    struct place_workload w;
    workload_init(&w, 1, "'cpu':'1'", NULL);
    struct explain_input in = {.wl = &w};
    struct explain_report r;
    assert_int_equal(explain_fit(&in, &r), 0);
    assert_int_equal(r.overall, EXPLAIN_UNKNOWN);
    assert_string_equal(r.message,
                        "no worker cluster reports metrics yet: pod set main needs cpu 1 per pod");
    explain_report_free(&r);
    place_workload_free(&w);
    assert_int_equal(explain_fit(NULL, &r), -EINVAL);
    assert_string_equal(explain_fit_name(EXPLAIN_FITS_EMPTY), "fits when empty");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_never_fits_names_both_clusters),
        cmocka_unit_test(test_waiting_with_free_amounts),
        cmocka_unit_test(test_not_now_leaves_amounts_out),
        cmocka_unit_test(test_fits_now),
        cmocka_unit_test(test_unusable_cluster_is_not_never),
        cmocka_unit_test(test_name_order_and_memory_units),
        cmocka_unit_test(test_no_clusters),
        cmocka_unit_test(test_affinity_verdict),
        cmocka_unit_test(test_excluded_clusters),
        cmocka_unit_test(test_free_amount_says_held),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
