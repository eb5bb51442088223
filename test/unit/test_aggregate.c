/* Unit tests for controllers/quota/aggregate. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controllers/quota/aggregate.h"
#include "pkg/util/buf.h"
#include "pkg/util/xalloc.h"
#include "test/support/tjson.h"

#define T0 1795341600000LL /* 2026-11-22T10:00:00Z */

/* JSON from a literal written with single quotes. */
/* Single-quoted JSON literals (test/support/tjson). */
#define J(s) tjson(s)

/* ClusterMetrics `name` updated at T0 + offset_s, with the nodes given as a
 * JSON array body (single quotes). */
static json_t *cm(const char *name, int offset_s, const char *nodes)
{
    char ts[32];
    int64_t s = T0 / 1000 + offset_s;
    struct tm tm;
    time_t tt = (time_t)s;
    gmtime_r(&tt, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char *t = xasprintf("{'metadata':{'name':'%s'},'status':{'lastUpdated':'%s','nodes':[%s]}}",
                        name, ts, nodes);
    json_t *j = J(t);
    free(t);
    return j;
}

static void update(struct agg *a, json_t *j)
{
    struct vocab_warnings w = {0};
    struct err e = {0};
    assert_int_equal(agg_update_cluster(a, j, &w, &e), 0);
    if (w.n)
        fail_msg("unexpected warning: %s", w.msg[0]);
    json_decref(j);
}

static void set_queue(struct agg *a, const char *json)
{
    json_t *j = J(json);
    struct err e = {0};
    int rc = agg_set_queue(a, j, &e);
    if (rc)
        fail_msg("set_queue: %s", e.msg);
    json_decref(j);
}

static void set_flavor(struct agg *a, const char *json)
{
    json_t *j = J(json);
    assert_int_equal(agg_set_flavor(a, j, NULL), 0);
    json_decref(j);
}

static void assert_total(struct agg *a, const char *flavor, const char *res, const char *want)
{
    char b[64];
    assert_int_equal(agg_total(a, flavor, res, b, sizeof b), 0);
    if (strcmp(b, want) != 0)
        fail_msg("%s/%s: total %s, want %s", flavor, res, b, want);
}

/* The value in result r for flavor/resource, or NULL. */
static const char *change(const struct agg_result *r, const char *flavor, const char *res)
{
    for (size_t i = 0; i < r->n_changes; i++)
        if (strcmp(r->changes[i].flavor, flavor) == 0 && strcmp(r->changes[i].resource, res) == 0)
            return r->changes[i].value;
    return NULL;
}

#define CQ_DEFAULT                                                                                 \
    "{'metadata':{'name':'cq','resourceVersion':'7'},'spec':{'resourceGroups':[{"                  \
    "'coveredResources':['cpu','memory'],'flavors':[{'name':'default-flavor','resources':["        \
    "{'name':'cpu','nominalQuota':'0'},{'name':'memory','nominalQuota':'0'}]}]}]}}"

static struct agg *agg_plain(void)
{
    struct agg_cfg cfg;
    agg_cfg_default(&cfg);
    return agg_new(&cfg);
}

/* The breakdown lists clusters by name whatever order their ClusterMetrics arrived in (the
 * stores iterate in hash order: the annotation would change with nothing else changed). */
static void test_breakdown_sorted_by_cluster(void **state)
{
    (void)state;
    struct agg *a = agg_plain();
    set_queue(a, CQ_DEFAULT);
    update(a, cm("c3", 0, "{'name':'n3','allocatableResources':{'cpu':'3'}}"));
    update(a, cm("c1", 0, "{'name':'n1','allocatableResources':{'cpu':'1'}}"));
    update(a, cm("c2", 0, "{'name':'n2','allocatableResources':{'cpu':'2'}}"));
    struct agg_result r;
    assert_int_equal(agg_compute(a, T0, &r), 0);
    assert_non_null(strstr(r.breakdown, "default-flavor/cpu=6: c1=1 c2=2 c3=3"));
    agg_result_free(&r);
    agg_free(a);
}

static void test_exact_sums(void **state)
{
    (void)state;
    struct agg *a = agg_plain();
    set_queue(a, CQ_DEFAULT);
    update(a, cm("c1", 0,
                 "{'name':'n1','allocatableResources':{'cpu':'500m','memory':'1.5Gi'}},"
                 "{'name':'n2','allocatableResources':{'cpu':'500m','memory':'512Mi'}},"
                 "{'name':'n3','allocatableResources':{'cpu':'500m'}}"));
    struct agg_result r;
    assert_int_equal(agg_compute(a, T0, &r), 0);
    assert_total(a, "default-flavor", "cpu", "1500m");
    assert_total(a, "default-flavor", "memory", "2Gi");
    assert_int_equal(r.n_changes, 2);
    assert_string_equal(change(&r, "default-flavor", "cpu"), "1500m");
    assert_string_equal(change(&r, "default-flavor", "memory"), "2Gi");
    assert_non_null(strstr(r.breakdown, "default-flavor/cpu=1500m: c1=1500m"));
    assert_int_equal(r.next_check_ms, T0 + 60000 + 1);
    /* The patch carries the whole resourceGroups array, the rv guard and the annotation. */
    json_t *cq = J(CQ_DEFAULT);
    json_t *p = agg_build_patch(cq, &r);
    assert_non_null(p);
    json_t *want = J("{'metadata':{'resourceVersion':'7'},'spec':{'resourceGroups':[{"
                     "'coveredResources':['cpu','memory'],'flavors':[{'name':'default-flavor',"
                     "'resources':[{'name':'cpu','nominalQuota':'1500m'},{'name':'memory',"
                     "'nominalQuota':'2Gi'}]}]}]}}");
    json_t *ann = json_object_get(json_object_get(json_object_get(p, "metadata"), "annotations"),
                                  AGG_SOURCE_ANNOTATION);
    assert_true(json_is_string(ann));
    json_object_del(json_object_get(p, "metadata"), "annotations");
    assert_true(json_equal(p, want));
    json_decref(p);
    json_decref(want);
    json_decref(cq);
    agg_result_free(&r);
    /* Once the queue carries the values, nothing is left to write. */
    set_queue(a, "{'metadata':{'name':'cq'},'spec':{'resourceGroups':[{'coveredResources':["
                 "'cpu','memory'],'flavors':[{'name':'default-flavor','resources':[{'name':'cpu',"
                 "'nominalQuota':1.5},{'name':'memory','nominalQuota':'2048Mi'}]}]}]}}");
    assert_int_equal(agg_compute(a, T0 + 1000, &r), 0);
    assert_int_equal(r.n_changes, 0);
    assert_null(agg_build_patch(cq, &r));
    agg_result_free(&r);
    agg_free(a);
}

static void test_flavors_default_alias_taints(void **state)
{
    (void)state;
    struct agg_cfg cfg;
    agg_cfg_default(&cfg);
    struct agg_alias al;
    assert_int_equal(agg_alias_parse("gpu=nvidia.com/gpu", &al, NULL), 0);
    cfg.aliases = &al;
    cfg.n_aliases = 1;
    struct agg *a = agg_new(&cfg);
    agg_alias_free(&al);
    set_flavor(a, "{'metadata':{'name':'h100'},'spec':{'nodeLabels':{'instance':'h100'},"
                  "'nodeTaints':[{'key':'gpu','value':'true','effect':'NoSchedule'}]}}");
    set_flavor(a, "{'metadata':{'name':'a100'},'spec':{'nodeLabels':{'instance':'a100'},"
                  "'tolerations':[{'key':'gpu','operator':'Exists'}]}}");
    set_flavor(a, "{'metadata':{'name':'default-flavor'},'spec':{}}");
    set_queue(a, "{'metadata':{'name':'cq'},'spec':{'resourceGroups':[{'coveredResources':["
                 "'cpu','gpu'],'flavors':["
                 "{'name':'h100','resources':[{'name':'cpu','nominalQuota':'0'},{'name':'gpu',"
                 "'nominalQuota':'0'}]},"
                 "{'name':'a100','resources':[{'name':'cpu','nominalQuota':'0'},{'name':'gpu',"
                 "'nominalQuota':'0'}]},"
                 "{'name':'default-flavor','resources':[{'name':'cpu','nominalQuota':'0'},"
                 "{'name':'gpu','nominalQuota':'0'}]}]}]}}");
    update(a, cm("c1", 0,
                 /* h100 node with the flavor's own taint: counts for h100 */
                 "{'name':'h1','labels':{'instance':'h100'},'taints':[{'key':'gpu','value':"
                 "'true','effect':'NoSchedule'}],'allocatableResources':{'cpu':'8',"
                 "'nvidia.com/gpu':'4'}},"
                 /* h100 label, foreign taint: not h100; default does not tolerate: nowhere */
                 "{'name':'h2','labels':{'instance':'h100'},'taints':[{'key':'other','effect':"
                 "'NoExecute'}],'allocatableResources':{'cpu':'8','nvidia.com/gpu':'4'}},"
                 /* a100 tolerates any gpu taint */
                 "{'name':'a1','labels':{'instance':'a100'},'taints':[{'key':'gpu','value':"
                 "'x','effect':'NoSchedule'}],'allocatableResources':{'cpu':'16',"
                 "'nvidia.com/gpu':'8'}},"
                 /* PreferNoSchedule does not matter; no flavor label: default */
                 "{'name':'p1','labels':{'instance':'cpu'},'taints':[{'key':'k','effect':"
                 "'PreferNoSchedule'}],'allocatableResources':{'cpu':'32'}},"
                 "{'name':'p2','allocatableResources':{'cpu':'2','gpu':'9'}}"));
    struct agg_result r;
    assert_int_equal(agg_compute(a, T0, &r), 0);
    assert_total(a, "h100", "cpu", "8");
    assert_total(a, "h100", "gpu", "4");
    assert_total(a, "a100", "cpu", "16");
    assert_total(a, "a100", "gpu", "8");
    assert_total(a, "default-flavor", "cpu", "34");
    assert_total(a, "default-flavor", "gpu", "0"); /* `gpu` itself is not read: aliased */
    assert_int_equal(r.warnings.n, 0);
    agg_result_free(&r);
    /* Changing a flavor recomputes: h100 now also needs zone=a, so h1 falls to nowhere
     * (default does not tolerate its taint). */
    set_flavor(a, "{'metadata':{'name':'h100'},'spec':{'nodeLabels':{'instance':'h100','zone':"
                  "'a'},'nodeTaints':[{'key':'gpu','value':'true','effect':'NoSchedule'}]}}");
    assert_total(a, "h100", "cpu", "0");
    assert_total(a, "default-flavor", "cpu", "34");
    /* Removing a100 sends a1 nowhere (default does not tolerate gpu taints) and warns. */
    agg_remove_flavor(a, "a100");
    assert_total(a, "a100", "cpu", "0");
    assert_int_equal(agg_compute(a, T0, &r), 0);
    assert_int_equal(r.warnings.n, 1);
    assert_non_null(strstr(r.warnings.msg[0], "flavor a100: no such ResourceFlavor"));
    agg_result_free(&r);
    agg_free(a);
}

static void test_unschedulable_notready_stale(void **state)
{
    (void)state;
    struct agg *a = agg_plain();
    set_queue(a, CQ_DEFAULT);
    update(a, cm("c1", 0,
                 "{'name':'n1','allocatableResources':{'cpu':'4'}},"
                 "{'name':'n2','allocatableResources':{'cpu':'4'},'unschedulable':true},"
                 "{'name':'n3','allocatableResources':{'cpu':'4'},'ready':false}"));
    update(a, cm("c2", 30, "{'name':'n1','allocatableResources':{'cpu':'8'}}"));
    json_t *nr = J("{'metadata':{'name':'c3'},'status':{'conditions':[{'type':'Ready','status':"
                   "'False'}],'nodes':[{'name':'n1','allocatableResources':{'cpu':'100'}}]}}");
    update(a, nr);
    /* Galaxy format (no lastUpdated): always counted. */
    update(a, J("{'metadata':{'name':'g'},'status':{'nodes':[{'name':'n1',"
                "'allocatableResources':{'cpu':'1'}}]}}"));
    /* No status yet (its agent's first status write pending): not a
     * cluster with 0 nodes, not counted until it reports. */
    update(a, J("{'metadata':{'name':'c4'}}"));
    struct agg_result r;
    assert_int_equal(agg_compute(a, T0 + 10000, &r), 0);
    assert_total(a, "default-flavor", "cpu", "13");
    assert_string_equal(change(&r, "default-flavor", "cpu"), "13");
    assert_non_null(strstr(r.breakdown, "stale: c3,c4"));
    assert_string_equal(r.left_out, "c3,c4");
    assert_int_equal(r.next_check_ms, T0 + 60001);
    agg_result_free(&r);
    /* 61 s after c1's update it is stale: out; c2 (30 s later) still in. */
    assert_int_equal(agg_compute(a, T0 + 61000, &r), 0);
    assert_total(a, "default-flavor", "cpu", "9");
    assert_int_equal(r.next_check_ms, T0 + 90001);
    agg_result_free(&r);
    /* A fresh update of c1 brings it back. */
    update(a, cm("c1", 62, "{'name':'n1','allocatableResources':{'cpu':'4'}}"));
    assert_int_equal(agg_compute(a, T0 + 62000, &r), 0);
    assert_total(a, "default-flavor", "cpu", "13");
    assert_string_equal(r.left_out, "c3,c4");
    agg_result_free(&r);
    agg_remove_cluster(a, "c2");
    agg_remove_cluster(a, "nosuch");
    assert_total(a, "default-flavor", "cpu", "5");
    agg_free(a);
}

static void test_shrink_delay(void **state)
{
    (void)state;
    struct agg *a = agg_plain();
    set_queue(a, "{'metadata':{'name':'cq'},'spec':{'resourceGroups':[{'coveredResources':["
                 "'cpu'],'flavors':[{'name':'default-flavor','resources':[{'name':'cpu',"
                 "'nominalQuota':'10'}]}]}]}}");
    struct agg_result r;
    const char *nodes[] = {"{'name':'n','allocatableResources':{'cpu':'12'}}",
                           "{'name':'n','allocatableResources':{'cpu':'6'}}",
                           "{'name':'n','allocatableResources':{'cpu':'8'}}",
                           "{'name':'n','allocatableResources':{'cpu':'5'}}"};
    /* t=0: 12 > 10: applies at once. */
    update(a, cm("c1", 0, nodes[0]));
    assert_int_equal(agg_compute(a, T0, &r), 0);
    assert_string_equal(change(&r, "default-flavor", "cpu"), "12");
    agg_result_free(&r);
    /* t=10: 6 < 12: held, a check is due at t=70. */
    update(a, cm("c1", 10, nodes[1]));
    assert_int_equal(agg_compute(a, T0 + 10000, &r), 0);
    assert_string_equal(change(&r, "default-flavor", "cpu"), "12"); /* queue still says 10 */
    assert_int_equal(r.next_check_ms, T0 + 70000);
    assert_non_null(strstr(r.breakdown, "shrinking-since=0s-ago"));
    agg_result_free(&r);
    /* t=40: 8, still lower; t=69: nothing yet. */
    update(a, cm("c1", 40, nodes[2]));
    assert_int_equal(agg_compute(a, T0 + 40000, &r), 0);
    assert_string_equal(change(&r, "default-flavor", "cpu"), "12");
    agg_result_free(&r);
    update(a, cm("c1", 60, nodes[3]));
    assert_int_equal(agg_compute(a, T0 + 69999, &r), 0);
    assert_string_equal(change(&r, "default-flavor", "cpu"), "12");
    agg_result_free(&r);
    /* t=70: the highest value of the window (8) applies; 5 starts a new window. */
    assert_int_equal(agg_compute(a, T0 + 70000, &r), 0);
    assert_string_equal(change(&r, "default-flavor", "cpu"), "8");
    assert_int_equal(r.next_check_ms, T0 + 120001); /* c1 goes stale before the window ends */
    agg_result_free(&r);
    /* Back up before the window ends: cancelled, the increase applies at once. */
    update(a, cm("c1", 80, nodes[0]));
    assert_int_equal(agg_compute(a, T0 + 80000, &r), 0);
    assert_string_equal(change(&r, "default-flavor", "cpu"), "12");
    agg_result_free(&r);
    update(a, cm("c1", 90, nodes[3]));
    assert_int_equal(agg_compute(a, T0 + 90000, &r), 0);
    assert_string_equal(change(&r, "default-flavor", "cpu"), "12");
    agg_result_free(&r);
    update(a, cm("c1", 100, nodes[0]));
    assert_int_equal(agg_compute(a, T0 + 149000, &r), 0);
    assert_string_equal(change(&r, "default-flavor", "cpu"), "12");
    agg_result_free(&r);
    agg_free(a);
}

static void test_requests_reserved_scale(void **state)
{
    (void)state;
    /* Subtract requests, add back the queue's reservation, never below it. */
    struct agg *a = agg_plain();
    const char *cq = "{'metadata':{'name':'cq'},'spec':{'resourceGroups':[{'coveredResources':["
                     "'cpu'],'flavors':[{'name':'default-flavor','resources':[{'name':'cpu',"
                     "'nominalQuota':'0'}]}]}]},'status':{'flavorsReservation':[{'name':"
                     "'default-flavor','resources':[{'name':'cpu','total':'3'}]}]}}";
    set_queue(a, cq);
    update(a, cm("c1", 0,
                 "{'name':'n1','allocatableResources':{'cpu':'8'},"
                 "'allocatedResourceRequests':{'cpu':'5500m'}},"
                 "{'name':'n2','allocatableResources':{'cpu':'2'},"
                 "'allocatedResourceRequests':{'cpu':'3'}}"));
    struct agg_result r;
    assert_int_equal(agg_compute(a, T0, &r), 0);
    assert_total(a, "default-flavor", "cpu", "2500m");                 /* 2.5 + max(0, -1) */
    assert_string_equal(change(&r, "default-flavor", "cpu"), "5500m"); /* + 3 reserved */
    assert_non_null(strstr(r.breakdown, "reserved=3"));
    agg_result_free(&r);
    agg_free(a);
    /* Without add-back the reservation is the floor; scale 0.9 rounds to milli. */
    struct agg_cfg cfg;
    agg_cfg_default(&cfg);
    cfg.add_back_reserved = false;
    assert_int_equal(agg_scale_parse("0.9", &cfg.scale_ppm, NULL), 0);
    assert_int_equal(cfg.scale_ppm, 900000);
    a = agg_new(&cfg);
    set_queue(a, cq);
    update(a, cm("c1", 0,
                 "{'name':'n1','allocatableResources':{'cpu':'8'},"
                 "'allocatedResourceRequests':{'cpu':'5500m'}}"));
    assert_int_equal(agg_compute(a, T0, &r), 0);
    assert_string_equal(change(&r, "default-flavor", "cpu"), "3"); /* max(2.25, 3) */
    agg_result_free(&r);
    update(a, cm("c1", 1, "{'name':'n1','allocatableResources':{'cpu':'8333m'}}"));
    assert_int_equal(agg_compute(a, T0 + 1000, &r), 0);
    assert_string_equal(change(&r, "default-flavor", "cpu"), "7499m"); /* 8.333 * 0.9 */
    agg_result_free(&r);
    agg_free(a);
    /* subtract_requests off: the plain allocatable sum. */
    agg_cfg_default(&cfg);
    cfg.subtract_requests = false;
    a = agg_new(&cfg);
    set_queue(a, CQ_DEFAULT);
    update(a, cm("c1", 0,
                 "{'name':'n1','allocatableResources':{'cpu':'8','memory':'1Gi'},"
                 "'allocatedResourceRequests':{'cpu':'5500m','memory':'bad'}}"));
    assert_int_equal(agg_compute(a, T0, &r), 0);
    assert_string_equal(change(&r, "default-flavor", "cpu"), "8");
    assert_string_equal(change(&r, "default-flavor", "memory"), "1Gi");
    agg_result_free(&r);
    agg_free(a);
    int64_t ppm;
    assert_int_equal(agg_scale_parse("1", &ppm, NULL), 0);
    assert_int_equal(ppm, 1000000);
    const char *bad[] = {"0", "1.5", "-0.5", "abc", "", "0.0000001"};
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(agg_scale_parse(bad[i], &ppm, NULL), -EINVAL);
    struct agg_alias al;
    struct err e = {0};
    assert_int_equal(agg_alias_parse("gpu", &al, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "gpu=nvidia.com/gpu"));
    assert_int_equal(agg_alias_parse("=x", &al, NULL), -EINVAL);
    assert_int_equal(agg_alias_parse("a=b=c", &al, NULL), -EINVAL);
}

/* One flavor, cpu only, with `reserved` cpu in status.flavorsReservation. */
static void set_queue_reserved(struct agg *a, const char *reserved)
{
    char *cq = xasprintf("{'metadata':{'name':'cq'},'spec':{'resourceGroups':[{"
                         "'coveredResources':['cpu'],'flavors':[{'name':'default-flavor',"
                         "'resources':[{'name':'cpu','nominalQuota':'0'}]}]}]},'status':{"
                         "'flavorsReservation':[{'name':'default-flavor','resources':[{'name':"
                         "'cpu','total':'%s'}]}]}}",
                         reserved);
    set_queue(a, cq);
    free(cq);
}

/* Two 8-cpu nodes; n1 with `req1` requested of which `man1` by hub work, n2
 * with `req2` requested (no hub work). */
static json_t *cm16(const char *name, int offset_s, const char *req1, const char *man1,
                    const char *req2)
{
    char *nodes = xasprintf("{'name':'n1','allocatableResources':{'cpu':'8'},"
                            "'allocatedResourceRequests':{'cpu':'%s'},"
                            "'managedResourceRequests':{'cpu':'%s'}},"
                            "{'name':'n2','allocatableResources':{'cpu':'8'},"
                            "'allocatedResourceRequests':{'cpu':'%s'},"
                            "'managedResourceRequests':{}}",
                            req1, man1, req2);
    json_t *j = cm(name, offset_s, nodes);
    free(nodes);
    return j;
}

/* The value agg_compute applies for default-flavor/cpu at T0 + s (the queue's
 * nominalQuota stays 0, so it is always a change); `breakdown` gets a copy. */
static void assert_cpu_at(struct agg *a, int s, const char *want, char **breakdown)
{
    struct agg_result r;
    assert_int_equal(agg_compute(a, T0 + (int64_t)s * 1000, &r), 0);
    const char *got = change(&r, "default-flavor", "cpu");
    if (!got || strcmp(got, want) != 0)
        fail_msg("at +%ds: cpu quota %s, want %s (%s)", s, got ? got : "unchanged", want,
                 r.breakdown);
    if (breakdown)
        *breakdown = xstrdup(r.breakdown);
    agg_result_free(&r);
}

/* Defaults without the shrink delay: every step shows its target. */
static struct agg *agg_nodelay(void)
{
    struct agg_cfg cfg;
    agg_cfg_default(&cfg);
    cfg.shrink_delay_ms = 0;
    return agg_new(&cfg);
}

static void test_reserved_before_pods_reported(void **state)
{
    (void)state;
    /* The overshoot of issue "16 -> 18 -> 16 cpu": a reservation whose pods
     * the agent has not reported yet is not added back (the workers' free
     * capacity still holds room for it); once its pods are reported it is. */
    struct agg *a = agg_nodelay();
    char *bd = NULL;
    set_queue_reserved(a, "0");
    update(a, cm16("c1", 0, "0", "0", "0"));
    assert_cpu_at(a, 0, "16", NULL);
    /* Reserve 2: the pods are not reported yet. Exactly 16, not 18. */
    set_queue_reserved(a, "2");
    assert_cpu_at(a, 1, "16", &bd);
    assert_non_null(strstr(bd, "reserved=2 not-yet-reported=2"));
    FREE_AND_NULL(bd);
    /* The agent reports the pods (bound, Pending): 14 free + 2 added back. */
    update(a, cm16("c1", 5, "2", "2", "0"));
    assert_cpu_at(a, 6, "16", &bd);
    assert_null(strstr(bd, "not-yet-reported"));
    FREE_AND_NULL(bd);
    /* Half of a second reservation reported (1 of 2 pods): 13 free + 3. */
    set_queue_reserved(a, "4");
    update(a, cm16("c1", 7, "3", "3", "0"));
    assert_cpu_at(a, 8, "16", &bd);
    assert_non_null(strstr(bd, "reserved=4 not-yet-reported=1"));
    FREE_AND_NULL(bd);
    /* Local work (not the queue's) is subtracted and never added back. */
    update(a, cm16("c1", 9, "4", "4", "3"));
    set_queue_reserved(a, "4");
    assert_cpu_at(a, 10, "13", NULL);
    agg_free(a);

    /* With other work already running when the reservation comes, the rule
     * still adds back nothing until the queue's pods are reported. */
    a = agg_nodelay();
    set_queue_reserved(a, "0");
    update(a, cm16("c1", 0, "0", "0", "3"));
    assert_cpu_at(a, 0, "13", NULL);
    set_queue_reserved(a, "2");
    assert_cpu_at(a, 1, "13", NULL);
    update(a, cm16("c1", 5, "2", "2", "3"));
    assert_cpu_at(a, 6, "13", NULL);
    /* Counted requests above the reservation (e.g. another queue's hub work)
     * add back the reservation only. */
    update(a, cm16("c1", 7, "6", "6", "3"));
    assert_cpu_at(a, 8, "9", NULL); /* 16 - 9 + min(2, 6) */
    agg_free(a);

    /* A cluster whose ClusterMetrics lack managedResourceRequests (an older
     * agent, another producer): the whole reservation is added back, as before. */
    a = agg_nodelay();
    set_queue_reserved(a, "2");
    update(a, cm16("c1", 0, "0", "0", "0"));
    assert_cpu_at(a, 0, "16", NULL);
    update(a, cm("c2", 0,
                 "{'name':'m1','allocatableResources':{'cpu':'4'},"
                 "'allocatedResourceRequests':{'cpu':'1'}}"));
    assert_cpu_at(a, 1, "21", &bd); /* 16 + 3 + 2 */
    assert_null(strstr(bd, "not-yet-reported"));
    FREE_AND_NULL(bd);
    /* It goes stale (c1 reported since): exact again. */
    update(a, cm16("c1", 30, "0", "0", "0"));
    assert_cpu_at(a, 61, "16", NULL);
    agg_free(a);
}

static void test_several_groups(void **state)
{
    (void)state;
    struct agg *a = agg_plain();
    set_flavor(a, "{'metadata':{'name':'spot'},'spec':{'nodeLabels':{'spot':'true'}}}");
    set_flavor(a, "{'metadata':{'name':'gpu'},'spec':{'nodeLabels':{'gpu':'yes'}}}");
    set_queue(a, "{'metadata':{'name':'cq'},'spec':{'resourceGroups':["
                 "{'coveredResources':['cpu','memory'],'flavors':["
                 "{'name':'spot','resources':[{'name':'cpu','nominalQuota':'0'},{'name':'memory',"
                 "'nominalQuota':'0'}]},"
                 "{'name':'default-flavor','resources':[{'name':'cpu','nominalQuota':'0'},"
                 "{'name':'memory','nominalQuota':'0'}]}]},"
                 "{'coveredResources':['nvidia.com/gpu'],'flavors':[{'name':'gpu','resources':"
                 "[{'name':'nvidia.com/gpu','nominalQuota':'0'}]}]}]}}");
    update(a, cm("c1", 0,
                 "{'name':'s','labels':{'spot':'true','gpu':'yes'},'allocatableResources':{"
                 "'cpu':'4','memory':'8Gi','nvidia.com/gpu':'2'}},"
                 "{'name':'d','labels':{'gpu':'yes'},'allocatableResources':{"
                 "'cpu':'2','memory':'4Gi','nvidia.com/gpu':'1'}},"
                 "{'name':'x','allocatableResources':{'cpu':'1','nvidia.com/gpu':'7'}}"));
    struct agg_result r;
    assert_int_equal(agg_compute(a, T0, &r), 0);
    assert_total(a, "spot", "cpu", "4");
    assert_total(a, "spot", "memory", "8Gi");
    assert_total(a, "default-flavor", "cpu", "3");
    assert_total(a, "default-flavor", "memory", "4Gi");
    assert_total(a, "gpu", "nvidia.com/gpu", "3"); /* x has no gpu label: counted nowhere */
    assert_int_equal(r.n_changes, 5);
    /* Patch indexes: group 1, flavor 0, resource 0. */
    json_t *cq = J("{'metadata':{'name':'cq'},'spec':{'resourceGroups':["
                   "{'flavors':[{'name':'spot','resources':[{'name':'cpu'},{'name':'memory'}]},"
                   "{'name':'default-flavor','resources':[{'name':'cpu'},{'name':'memory'}]}]},"
                   "{'flavors':[{'name':'gpu','resources':[{'name':'nvidia.com/gpu'}]}]}]}}");
    json_t *p = agg_build_patch(cq, &r);
    json_t *v = json_object_get(
        json_array_get(
            json_object_get(
                json_array_get(
                    json_object_get(
                        json_array_get(
                            json_object_get(json_object_get(p, "spec"), "resourceGroups"), 1),
                        "flavors"),
                    0),
                "resources"),
            0),
        "nominalQuota");
    assert_string_equal(json_string_value(v), "3");
    json_decref(p);
    json_decref(cq);
    agg_result_free(&r);
    /* Queue without the gpu group: structure change, recomputed, state kept for the rest. */
    set_queue(a, "{'metadata':{'name':'cq'},'spec':{'resourceGroups':["
                 "{'coveredResources':['cpu'],'flavors':["
                 "{'name':'default-flavor','resources':[{'name':'cpu','nominalQuota':'3'}]}]}]}}");
    assert_total(a, "default-flavor", "cpu", "7");
    char b[64];
    assert_int_equal(agg_total(a, "gpu", "nvidia.com/gpu", b, sizeof b), -ENOENT);
    agg_free(a);
}

static void test_bad_data(void **state)
{
    (void)state;
    struct agg *a = agg_plain();
    set_queue(a, CQ_DEFAULT);
    json_t *j = cm("c1", 0,
                   "{'name':'n1','allocatableResources':{'cpu':'4x','memory':'1Gi'}},"
                   "{'name':'n2','allocatableResources':{'cpu':'-2','memory':'1Gi'}},"
                   "{'name':'n3','allocatableResources':{'cpu':'1'},"
                   "'allocatedResourceRequests':{'cpu':[1]}},"
                   "{'name':'n4','allocatableResources':{'cpu':'1e20'}},"
                   "{'name':'n5','labels':{'a':3},'allocatableResources':{'cpu':'1'}},"
                   "{'name':'n6','taints':'no','allocatableResources':{'cpu':'1'}},"
                   "{'allocatableResources':{'cpu':'1'}},"
                   "{'name':'ok','allocatableResources':{'cpu':'2'}}");
    struct vocab_warnings w = {0};
    assert_int_equal(agg_update_cluster(a, j, &w, NULL), 0);
    json_decref(j);
    struct agg_result r;
    assert_int_equal(agg_compute(a, T0, &r), 0);
    assert_total(a, "default-flavor", "cpu", "2");
    assert_total(a, "default-flavor", "memory", "2Gi");
    agg_result_free(&r);
    assert_int_equal(w.n, 7);
    assert_non_null(strstr(w.msg[0], "cluster c1: node n1: allocatableResources.cpu:"));
    assert_non_null(strstr(w.msg[1], "cluster c1: node n2: allocatableResources.cpu: negative"));
    assert_non_null(strstr(w.msg[2], "node n3: allocatedResourceRequests.cpu"));
    assert_non_null(strstr(w.msg[3], "node n4: allocatableResources.cpu: implausibly large"));
    assert_non_null(strstr(w.msg[4], "node n5"));
    assert_non_null(strstr(w.msg[5], "node n6"));
    assert_non_null(strstr(w.msg[6], "status.nodes[6]: no name"));
    vocab_warnings_free(&w);
    /* An unusable object keeps the previous contribution. */
    struct err e = {0};
    j = J("{'metadata':{'name':'c1'},'status':{'nodes':{}}}");
    assert_int_equal(agg_update_cluster(a, j, NULL, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "c1"));
    json_decref(j);
    j = J("{'status':{}}");
    assert_int_equal(agg_update_cluster(a, j, NULL, NULL), -EINVAL);
    json_decref(j);
    assert_total(a, "default-flavor", "cpu", "2");
    /* Malformed queues are refused, the previous one kept. */
    const char *bad[] = {
        "[]", "{'spec':{'resourceGroups':{}}}",
        "{'spec':{'resourceGroups':[{'flavors':[{'resources':[]}]}]}}",
        "{'spec':{'resourceGroups':[{'flavors':[{'name':'f','resources':[{}]}]}]}}",
        "{'spec':{'resourceGroups':[{'flavors':[{'name':'f','resources':[]}]}]}}"};
    for (size_t i = 0; i < 5; i++) {
        j = J(bad[i]);
        if (agg_set_queue(a, j, NULL) != -EINVAL)
            fail_msg("bad queue %zu accepted", i);
        json_decref(j);
    }
    assert_total(a, "default-flavor", "cpu", "2");
    struct agg *empty = agg_plain();
    assert_int_equal(agg_compute(empty, T0, &r), -EINVAL);
    agg_free(empty);
    agg_free(a);
}

/* Deterministic pseudo-random numbers (xorshift). */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static json_t *random_cm(uint64_t *s, int c, int t)
{
    static const char *cpu[] = {"500m", "1", "2", "3500m", "8", "16", "250m", "1.5"};
    static const char *mem[] = {"512Mi", "1Gi", "1.5Gi", "3G", "64Gi", "100Mi", "1000Mi"};
    struct buf b;
    buf_init(&b, 1 << 20);
    int n = (int)(rnd(s) % 12);
    for (int i = 0; i < n; i++) {
        uint64_t r = rnd(s);
        buf_printf(&b,
                   "%s{'name':'n%d','labels':{'tier':'%s'},'allocatableResources':{'cpu':'%s',"
                   "'memory':'%s'},'allocatedResourceRequests':{'cpu':'%s'}%s}",
                   i ? "," : "", i, r % 3 == 0 ? "fast" : "slow", cpu[r % 8], mem[(r >> 8) % 7],
                   cpu[(r >> 16) % 8], (r >> 24) % 5 == 0 ? ",'unschedulable':true" : "");
    }
    char name[16];
    snprintf(name, sizeof name, "c%d", c);
    json_t *j = cm(name, t, buf_str(&b));
    buf_free(&b);
    return j;
}

static void test_incremental_equals_full(void **state)
{
    (void)state;
    const char *cq = "{'metadata':{'name':'cq'},'spec':{'resourceGroups':[{'coveredResources':["
                     "'cpu','memory'],'flavors':["
                     "{'name':'fast','resources':[{'name':'cpu','nominalQuota':'0'},{'name':"
                     "'memory','nominalQuota':'0'}]},"
                     "{'name':'default-flavor','resources':[{'name':'cpu','nominalQuota':'0'},"
                     "{'name':'memory','nominalQuota':'0'}]}]}]}}";
    const char *fast = "{'metadata':{'name':'fast'},'spec':{'nodeLabels':{'tier':'fast'}}}";
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    for (int round = 0; round < 20; round++) {
        struct agg *inc = agg_plain();
        set_flavor(inc, fast);
        set_queue(inc, cq);
        json_t *last[8] = {0};
        for (int step = 0; step < 60; step++) {
            int c = (int)(rnd(&seed) % 8);
            json_t *j = random_cm(&seed, c, step);
            json_decref(last[c]);
            last[c] = json_incref(j);
            if (rnd(&seed) % 10 == 0) {
                char name[16];
                snprintf(name, sizeof name, "c%d", c);
                agg_remove_cluster(inc, name);
                json_decref(last[c]);
                last[c] = NULL;
                json_decref(j);
            } else {
                update(inc, j);
            }
            struct agg_result r;
            assert_int_equal(agg_compute(inc, T0 + step * 1000, &r), 0);
            agg_result_free(&r);
        }
        /* A fresh aggregator fed only the final objects must agree exactly. */
        struct agg *full = agg_plain();
        set_queue(full, cq);
        for (int c = 0; c < 8; c++)
            if (last[c])
                update(full, json_incref(last[c]));
        set_flavor(full, fast); /* flavor last: exercises the full recompute path */
        struct agg_result r;
        assert_int_equal(agg_compute(full, T0 + 59000, &r), 0);
        agg_result_free(&r);
        const char *cells[4][2] = {{"fast", "cpu"},
                                   {"fast", "memory"},
                                   {"default-flavor", "cpu"},
                                   {"default-flavor", "memory"}};
        for (int k = 0; k < 4; k++) {
            char x[64], y[64];
            assert_int_equal(agg_total(inc, cells[k][0], cells[k][1], x, sizeof x), 0);
            assert_int_equal(agg_total(full, cells[k][0], cells[k][1], y, sizeof y), 0);
            if (strcmp(x, y) != 0)
                fail_msg("round %d %s/%s: incremental %s != full %s", round, cells[k][0],
                         cells[k][1], x, y);
        }
        agg_recompute_all(inc);
        for (int k = 0; k < 4; k++) {
            char x[64], y[64];
            agg_total(inc, cells[k][0], cells[k][1], x, sizeof x);
            agg_total(full, cells[k][0], cells[k][1], y, sizeof y);
            assert_string_equal(x, y);
        }
        for (int c = 0; c < 8; c++)
            json_decref(last[c]);
        agg_free(inc);
        agg_free(full);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_sums),
        cmocka_unit_test(test_breakdown_sorted_by_cluster),
        cmocka_unit_test(test_flavors_default_alias_taints),
        cmocka_unit_test(test_unschedulable_notready_stale),
        cmocka_unit_test(test_shrink_delay),
        cmocka_unit_test(test_requests_reserved_scale),
        cmocka_unit_test(test_reserved_before_pods_reported),
        cmocka_unit_test(test_several_groups),
        cmocka_unit_test(test_bad_data),
        cmocka_unit_test(test_incremental_equals_full),
    };
    return cmocka_run_group_tests_name("aggregate", tests, NULL, NULL);
}
