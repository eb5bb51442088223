/* Unit tests for controllers/workload/placement. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/workload/placement.h"
#include "pkg/util/buf.h"
#include "pkg/util/xalloc.h"
#include "test/support/tjson.h"

/* JSON from a literal written with single quotes. */
/* Single-quoted JSON literals (test/support/tjson). */
#define J(s) tjson(s)

/* A ClusterMetrics named `name` with `n` identical nodes "<name>-n<i>" whose
 * allocatable is `alloc` (a JSON object body in single quotes, e.g.
 * "'cpu':'8','memory':'32Gi'"), requests `req` and extra node fields `extra`. */
static void cluster_init(struct place_cluster *c, const char *name, int n, const char *alloc,
                         const char *req, const char *extra)
{
    struct buf b;
    buf_init(&b, 1 << 20);
    buf_printf(&b,
               "{'metadata':{'name':'%s'},'status':{'lastUpdated':'2026-11-22T10:00:00Z',"
               "'nodes':[",
               name);
    for (int i = 0; i < n; i++)
        buf_printf(&b,
                   "%s{'name':'%s-n%d','allocatableResources':{%s},"
                   "'allocatedResourceRequests':{%s}%s%s}",
                   i ? "," : "", name, i, alloc, req ? req : "", extra ? "," : "",
                   extra ? extra : "");
    buf_puts(&b, "]}}");
    json_t *j = J(buf_str(&b));
    struct vocab_warnings w = {0};
    struct err e = {0};
    assert_int_equal(place_cluster_from_json(j, c, &w, &e), 0);
    assert_int_equal(w.n, 0);
    json_decref(j);
    buf_free(&b);
}

/* A workload with one pod set: count pods with the given container requests
 * (JSON object body) and an optional extra template.spec fields string. */
static void workload_init(struct place_workload *w, const char *name, int count,
                          const char *requests, const char *extra_spec, const char *flavor)
{
    char *s = xasprintf("{'metadata':{'name':'%s','namespace':'ns'},'spec':{'podSets':[{'name':"
                        "'main','count':%d,'template':{'spec':{'containers':[{'name':'c',"
                        "'resources':{'requests':{%s}}}]%s%s}}}]},"
                        "'status':{'admission':{'podSetAssignments':[{'name':'main','flavors':"
                        "{'cpu':'%s'}}]}}}",
                        name, count, requests, extra_spec ? "," : "", extra_spec ? extra_spec : "",
                        flavor ? flavor : "default-flavor");
    json_t *j = J(s);
    struct err e = {0};
    int rc = place_workload_from_json(j, w, &e);
    if (rc != 0)
        fail_msg("workload_from_json: %s", e.msg);
    json_decref(j);
    free(s);
}

static void flavor_init(struct vocab_flavor *f, const char *json)
{
    json_t *j = J(json);
    struct err e = {0};
    assert_int_equal(vocab_flavor_from_json(j, f, &e), 0);
    json_decref(j);
}

static struct vocab_flavor g_default_flavor;

static int setup(void **state)
{
    (void)state;
    flavor_init(&g_default_flavor, "{'metadata':{'name':'default-flavor'},'spec':{}}");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    vocab_flavor_free(&g_default_flavor);
    return 0;
}

static int64_t replicas_on(const struct place_result *r, const char *node)
{
    int64_t n = 0;
    for (size_t i = 0; i < r->n_assign; i++)
        if (strcmp(r->assign[i].node, node) == 0)
            n += r->assign[i].replicas;
    return n;
}

static void test_replicas_across_nodes(void **state)
{
    (void)state;
    struct place_cluster c;
    cluster_init(&c, "c1", 2, "'cpu':'8','memory':'32Gi'", NULL, NULL);
    struct place_workload w;
    struct place_result r;
    /* 3 pods of 3 cpu on two 8-cpu nodes: 2 + 1. */
    workload_init(&w, "fits", 3, "'cpu':'3'", NULL, NULL);
    assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_string_equal(r.cluster, "c1");
    assert_int_equal(replicas_on(&r, "c1-n0"), 2);
    assert_int_equal(replicas_on(&r, "c1-n1"), 1);
    assert_int_equal(r.n_nodes, 2);
    assert_int_equal(place_reslist_get(&r.node_totals[0], "cpu"), 6000);
    /* free after: 2 + 5 of 16 cpu = 7/16 = 437500 ppm */
    assert_int_equal(r.score_ppm, 437500);
    place_result_free(&r);
    place_workload_free(&w);
    /* 4 pods of 5 cpu: one per node, never more: never fits. */
    workload_init(&w, "big", 4, "'cpu':'5'", NULL, NULL);
    assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    assert_null(r.cluster);
    assert_non_null(strstr(r.message, "2 of 4 pods"));
    assert_non_null(strstr(r.message, "c1"));
    assert_non_null(strstr(r.message, "cpu"));
    place_result_free(&r);
    place_workload_free(&w);
    place_cluster_free(&c);
}

static void test_init_containers_overhead_limits(void **state)
{
    (void)state;
    json_t *j = J("{'metadata':{'name':'w','namespace':'ns'},'spec':{'podSets':[{'name':'main',"
                  "'count':2,'template':{'spec':{"
                  "'containers':[{'name':'a','resources':{'requests':{'cpu':'1','memory':'1Gi'}}},"
                  "{'name':'b','resources':{'requests':{'cpu':'500m'},'limits':{'cpu':'2',"
                  "'nvidia.com/gpu':'1'}}}],"
                  "'initContainers':[{'name':'i1','resources':{'requests':{'cpu':'3'}}},"
                  "{'name':'i2','resources':{'requests':{'memory':'512Mi','cpu':'100m'}}}],"
                  "'overhead':{'cpu':'250m'}}}}]}}");
    struct place_workload w;
    struct err e = {0};
    assert_int_equal(place_workload_from_json(j, &w, &e), 0);
    json_decref(j);
    assert_string_equal(w.key, "ns/w");
    assert_int_equal(w.n_podsets, 1);
    const struct place_reslist *rl = &w.podsets[0].per_pod;
    /* cpu: max(1 + 0.5, 3) + 0.25 = 3.25; memory: max(1Gi, 512Mi); gpu from the limit. */
    assert_int_equal(place_reslist_get(rl, "cpu"), 3250);
    assert_int_equal(place_reslist_get(rl, "memory"), 1073741824000LL);
    assert_int_equal(place_reslist_get(rl, "nvidia.com/gpu"), 1000);
    assert_int_equal(w.podsets[0].count, 2);
    /* No flavor admitted: matches nodes without constraints. 2 pods of 3.25 cpu on 6-cpu
     * nodes with 1 gpu: one per node. */
    struct place_cluster c;
    cluster_init(&c, "c1", 2, "'cpu':'6','memory':'8Gi','nvidia.com/gpu':'1'", NULL, NULL);
    struct place_result r;
    assert_int_equal(place_decide(&w, &c, 1, NULL, 0, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_int_equal(replicas_on(&r, "c1-n0"), 1);
    assert_int_equal(replicas_on(&r, "c1-n1"), 1);
    place_result_free(&r);
    place_cluster_free(&c);
    place_workload_free(&w);
    /* Pod-level resources replace the container sum for what they name. */
    j = J("{'metadata':{'name':'w'},'spec':{'podSets':[{'template':{'spec':{"
          "'resources':{'requests':{'cpu':'2'},'limits':{'memory':'3Gi'}},"
          "'containers':[{'resources':{'requests':{'cpu':'500m','memory':'1Gi',"
          "'example.com/fpga':'1'}}}]}}}]}}");
    assert_int_equal(place_workload_from_json(j, &w, &e), 0);
    json_decref(j);
    assert_int_equal(place_reslist_get(&w.podsets[0].per_pod, "cpu"), 2000);
    assert_int_equal(place_reslist_get(&w.podsets[0].per_pod, "memory"), 3221225472000LL);
    assert_int_equal(place_reslist_get(&w.podsets[0].per_pod, "example.com/fpga"), 1000);
    assert_int_equal(w.podsets[0].count, 1);
    place_workload_free(&w);
    /* Sidecars (restartPolicy Always, pkg/podres rule): they add to the containers and to
     * the init containers started after them. cpu: max(1 + 0.5, 0.5 + 2) = 2.5. */
    j = J("{'metadata':{'name':'w'},'spec':{'podSets':[{'template':{'spec':{"
          "'initContainers':[{'name':'side','restartPolicy':'Always','resources':{'requests':"
          "{'cpu':'500m'}}},{'name':'i','resources':{'requests':{'cpu':'2'}}}],"
          "'containers':[{'resources':{'requests':{'cpu':'1'}}}]}}}]}}");
    assert_int_equal(place_workload_from_json(j, &w, &e), 0);
    json_decref(j);
    assert_int_equal(place_reslist_get(&w.podsets[0].per_pod, "cpu"), 2500);
    place_workload_free(&w);
}

static void test_toleration_table(void **state)
{
    (void)state;
    struct {
        const char *tol; /* toleration JSON */
        const char *taint;
        bool want;
    } cases[] = {
        {"{'key':'k','operator':'Equal','value':'v','effect':'NoSchedule'}",
         "{'key':'k','value':'v','effect':'NoSchedule'}", true},
        {"{'key':'k','value':'v'}", "{'key':'k','value':'v','effect':'NoExecute'}", true},
        {"{'key':'k','value':'v'}", "{'key':'k','value':'w','effect':'NoSchedule'}", false},
        {"{'key':'k','operator':'Exists'}", "{'key':'k','value':'any','effect':'NoSchedule'}",
         true},
        {"{'key':'k','operator':'Exists','effect':'NoExecute'}",
         "{'key':'k','value':'x','effect':'NoSchedule'}", false},
        {"{'operator':'Exists'}", "{'key':'anything','value':'x','effect':'NoExecute'}", true},
        {"{'key':'other','operator':'Exists'}", "{'key':'k','effect':'NoSchedule'}", false},
        {"{'key':'k','operator':'Equal','value':''}", "{'key':'k','effect':'NoSchedule'}", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *ta = xasprintf("[%s]", cases[i].tol);
        char *tb = xasprintf("[%s]", cases[i].taint);
        json_t *ja = J(ta), *jb = J(tb);
        struct vocab_toleration *tol;
        struct vocab_taint *taint;
        size_t nt, nx;
        assert_int_equal(vocab_tolerations_from_json(ja, "t", &tol, &nt, NULL), 0);
        assert_int_equal(vocab_taints_from_json(jb, "t", &taint, &nx, NULL), 0);
        if (vocab_toleration_matches(&tol[0], &taint[0]) != cases[i].want)
            fail_msg("case %zu: %s vs %s", i, cases[i].tol, cases[i].taint);
        vocab_tolerations_free(tol, nt);
        vocab_taints_free(taint, nx);
        json_decref(ja);
        json_decref(jb);
        free(ta);
        free(tb);
    }
    /* PreferNoSchedule never blocks; a bad operator is an error. */
    struct vocab_taint soft = {"k", "v", "PreferNoSchedule"};
    assert_true(vocab_taint_tolerated(&soft, NULL, 0, NULL, 0));
    struct vocab_taint hard = {"k", "v", "NoSchedule"};
    assert_false(vocab_taint_tolerated(&hard, NULL, 0, NULL, 0));
    json_t *bad = J("[{'key':'k','operator':'Maybe'}]");
    struct vocab_toleration *tol;
    size_t nt;
    struct err e = {0};
    assert_int_equal(vocab_tolerations_from_json(bad, "spec.tolerations", &tol, &nt, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "spec.tolerations[0]"));
    json_decref(bad);
}

static void test_taints_in_placement(void **state)
{
    (void)state;
    /* Both nodes tainted gpu=true:NoSchedule; the flavor tolerates it, the pod does not. */
    struct place_cluster c;
    cluster_init(&c, "c1", 2, "'cpu':'8'", NULL,
                 "'taints':[{'key':'gpu','value':'true','effect':'NoSchedule'}]");
    struct place_workload w;
    workload_init(&w, "w", 1, "'cpu':'1'", NULL, "gpu-flavor");
    struct vocab_flavor fl;
    flavor_init(&fl, "{'metadata':{'name':'gpu-flavor'},'spec':{}}");
    struct place_result r;
    assert_int_equal(place_decide(&w, &c, 1, &fl, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    /* "Never" judges the cluster as it could become: no readiness words. */
    assert_non_null(strstr(r.message, "no node matches the flavor's nodeLabels"));
    place_result_free(&r);
    vocab_flavor_free(&fl);
    flavor_init(&fl, "{'metadata':{'name':'gpu-flavor'},'spec':{'tolerations':[{'key':'gpu',"
                     "'operator':'Exists','effect':'NoSchedule'}]}}");
    assert_int_equal(place_decide(&w, &c, 1, &fl, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    place_result_free(&r);
    place_workload_free(&w);
    /* The pod's own toleration works as well. */
    workload_init(&w, "w2", 1, "'cpu':'1'",
                  "'tolerations':[{'key':'gpu','operator':'Equal','value':'true'}]", NULL);
    assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    place_result_free(&r);
    place_workload_free(&w);
    vocab_flavor_free(&fl);
    place_cluster_free(&c);
}

static void test_labels_and_selector(void **state)
{
    (void)state;
    /* c1 has plain nodes, c2 has h100 nodes in zone a. */
    struct place_cluster cs[2];
    cluster_init(&cs[0], "c1", 2, "'cpu':'64'", NULL, "'labels':{'instance':'a100'}");
    cluster_init(&cs[1], "c2", 1, "'cpu':'8'", NULL, "'labels':{'instance':'h100','zone':'a'}");
    struct vocab_flavor fl[2];
    flavor_init(&fl[0], "{'metadata':{'name':'h100'},'spec':{'nodeLabels':{'instance':'h100'}}}");
    flavor_init(&fl[1], "{'metadata':{'name':'default-flavor'}}");
    struct place_workload w;
    struct place_result r;
    workload_init(&w, "w", 1, "'cpu':'1'", NULL, "h100");
    assert_int_equal(place_decide(&w, cs, 2, fl, 2, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_string_equal(r.cluster, "c2");
    place_result_free(&r);
    place_workload_free(&w);
    /* nodeSelector zone=b matches no node anywhere: never. */
    workload_init(&w, "w", 1, "'cpu':'1'", "'nodeSelector':{'zone':'b'}", "h100");
    assert_int_equal(place_decide(&w, cs, 2, fl, 2, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    place_result_free(&r);
    place_workload_free(&w);
    /* Default flavor (no labels) + selector instance=a100: c1. */
    workload_init(&w, "w", 1, "'cpu':'1'", "'nodeSelector':{'instance':'a100'}", NULL);
    assert_int_equal(place_decide(&w, cs, 2, fl, 2, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_string_equal(r.cluster, "c1");
    place_result_free(&r);
    place_workload_free(&w);
    /* Unknown flavor: never, and the message says so. */
    workload_init(&w, "w", 1, "'cpu':'1'", NULL, "nosuch");
    assert_int_equal(place_decide(&w, cs, 2, fl, 2, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    assert_non_null(strstr(r.message, "flavor nosuch is not a known ResourceFlavor"));
    place_result_free(&r);
    place_workload_free(&w);
    vocab_flavor_free(&fl[0]);
    vocab_flavor_free(&fl[1]);
    place_cluster_free(&cs[0]);
    place_cluster_free(&cs[1]);
}

static void test_unready_unschedulable_skipped(void **state)
{
    (void)state;
    json_t *j = J("{'metadata':{'name':'c1'},'status':{'nodes':["
                  "{'name':'a','allocatableResources':{'cpu':'8'},'ready':false},"
                  "{'name':'b','allocatableResources':{'cpu':'8'},'unschedulable':true},"
                  "{'name':'c','allocatableResources':{'cpu':'2'}}]}}");
    struct place_cluster c;
    assert_int_equal(place_cluster_from_json(j, &c, NULL, NULL), 0);
    json_decref(j);
    assert_int_equal(c.n_nodes, 3);
    assert_false(c.nodes[0].ready);
    assert_true(c.nodes[1].unschedulable);
    assert_true(c.nodes[2].ready);
    struct place_workload w;
    struct place_result r;
    /* 4 cpu fits only on the unready or the cordoned node: not now, but not never either
     * (both states pass; a Rejected check would lose the job for good). */
    workload_init(&w, "w", 1, "'cpu':'4'", NULL, NULL);
    assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NOT_NOW);
    place_result_free(&r);
    place_workload_free(&w);
    /* Larger than every node, usable or not: never. */
    workload_init(&w, "w", 1, "'cpu':'9'", NULL, NULL);
    assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    place_result_free(&r);
    place_workload_free(&w);
    workload_init(&w, "w", 1, "'cpu':'2'", NULL, NULL);
    assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_int_equal(replicas_on(&r, "c"), 1);
    place_result_free(&r);
    place_workload_free(&w);
    place_cluster_free(&c);
}

/* Nodes as a real API server creates them carry node.kubernetes.io/not-ready:NoSchedule
 * (TaintNodesByCondition) until the node lifecycle controller sees them Ready: placement waits,
 * says why, and never Rejects because of it. A taint of the admin's stays final. */
static void test_transient_taints_wait(void **state)
{
    (void)state;
    struct place_cluster c;
    cluster_init(&c, "c1", 2, "'cpu':'8'", NULL,
                 "'taints':[{'key':'node.kubernetes.io/not-ready','effect':'NoSchedule'}]");
    struct place_workload w;
    struct place_result r;
    workload_init(&w, "w", 1, "'cpu':'1'", NULL, NULL);
    assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NOT_NOW);
    assert_non_null(strstr(r.message, "the 2 nodes that match"));
    assert_non_null(strstr(r.message, "not usable now"));
    place_result_free(&r);
    place_workload_free(&w);
    /* Too large even without the taint: never, and the message says so plainly. */
    workload_init(&w, "w", 1, "'cpu':'9'", NULL, NULL);
    assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    assert_non_null(strstr(r.message, "even with the cluster empty"));
    place_result_free(&r);
    place_workload_free(&w);
    place_cluster_free(&c);
    const char *transient[] = {"node.kubernetes.io/unreachable", "node.kubernetes.io/unschedulable",
                               "node.kubernetes.io/disk-pressure",
                               "node.cloudprovider.kubernetes.io/uninitialized"};
    for (size_t i = 0; i < sizeof transient / sizeof transient[0]; i++) {
        char *extra = xasprintf("'taints':[{'key':'%s','effect':'NoSchedule'}]", transient[i]);
        cluster_init(&c, "c1", 1, "'cpu':'8'", NULL, extra);
        workload_init(&w, "w", 1, "'cpu':'1'", NULL, NULL);
        assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
        if (r.status != PLACE_NOT_NOW)
            fail_msg("taint %s: status %d, want not now", transient[i], (int)r.status);
        place_result_free(&r);
        place_workload_free(&w);
        place_cluster_free(&c);
        free(extra);
    }
    /* Not a kube-managed key: the admin's taint excludes the node for good. */
    cluster_init(&c, "c1", 1, "'cpu':'8'", NULL,
                 "'taints':[{'key':'node.kubernetes.io-like/dedicated','effect':'NoSchedule'}]");
    workload_init(&w, "w", 1, "'cpu':'1'", NULL, NULL);
    assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    place_result_free(&r);
    place_workload_free(&w);
    place_cluster_free(&c);
}

/* 100 identical jobs on 2 equal clusters: spread alternates, binpack fills c1 first. */
static void burst(enum place_policy pol, int *on_a, int *on_b, int *first_b)
{
    struct place_cluster cs[2];
    cluster_init(&cs[0], "a", 4, "'cpu':'16','memory':'64Gi'", NULL, NULL);
    cluster_init(&cs[1], "b", 4, "'cpu':'16','memory':'64Gi'", NULL, NULL);
    struct place_resv rv;
    place_resv_init(&rv);
    struct place_opts o = {.policy = pol};
    *on_a = *on_b = 0;
    *first_b = -1;
    for (int i = 0; i < 100; i++) {
        char name[32];
        snprintf(name, sizeof name, "job%d", i);
        struct place_workload w;
        workload_init(&w, name, 1, "'cpu':'1','memory':'1Gi'", NULL, NULL);
        struct place_result r;
        assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, &rv, &o, &r), 0);
        assert_int_equal(r.status, PLACE_OK);
        if (strcmp(r.cluster, "a") == 0) {
            (*on_a)++;
        } else {
            (*on_b)++;
            if (*first_b < 0)
                *first_b = i;
        }
        assert_int_equal(place_resv_add(&rv, w.key, &r, 1000), 0);
        place_result_free(&r);
        place_workload_free(&w);
    }
    assert_int_equal(rv.n, 100);
    assert_int_equal(
        place_resv_held(&rv, "a", "a-n0", "cpu") + place_resv_held(&rv, "b", "b-n0", "cpu") +
            place_resv_held(&rv, "a", "a-n1", "cpu") + place_resv_held(&rv, "b", "b-n1", "cpu") +
            place_resv_held(&rv, "a", "a-n2", "cpu") + place_resv_held(&rv, "b", "b-n2", "cpu") +
            place_resv_held(&rv, "a", "a-n3", "cpu") + place_resv_held(&rv, "b", "b-n3", "cpu"),
        100000);
    place_resv_free(&rv);
    place_cluster_free(&cs[0]);
    place_cluster_free(&cs[1]);
}

static void test_burst_spread_and_binpack(void **state)
{
    (void)state;
    int a, b, first_b;
    burst(PLACE_SPREAD, &a, &b, &first_b);
    assert_int_equal(a, 50);
    assert_int_equal(b, 50);
    assert_int_equal(first_b, 1); /* tie -> a, then b is emptier */
    burst(PLACE_BINPACK, &a, &b, &first_b);
    assert_int_equal(a, 64); /* 4 nodes x 16 cpu */
    assert_int_equal(b, 36);
    assert_int_equal(first_b, 64);
}

static void test_deterministic_ties(void **state)
{
    (void)state;
    struct place_cluster cs[3];
    cluster_init(&cs[0], "zeta", 1, "'cpu':'8'", NULL, NULL);
    cluster_init(&cs[1], "alpha", 1, "'cpu':'8'", NULL, NULL);
    cluster_init(&cs[2], "mid", 1, "'cpu':'8'", NULL, NULL);
    struct place_workload w;
    workload_init(&w, "w", 1, "'cpu':'1'", NULL, NULL);
    for (int pol = 0; pol < 2; pol++) {
        struct place_opts o = {.policy = (enum place_policy)pol};
        for (int rep = 0; rep < 3; rep++) {
            struct place_result r;
            assert_int_equal(place_decide(&w, cs, 3, &g_default_flavor, 1, NULL, &o, &r), 0);
            assert_string_equal(r.cluster, "alpha");
            place_result_free(&r);
        }
    }
    place_workload_free(&w);
    for (int i = 0; i < 3; i++)
        place_cluster_free(&cs[i]);
}

/* Memory in the message the way Kubernetes prints it (1Gi, 512Mi), as explain and the quota
 * lines do, not in raw bytes next to explain's "1Gi" (issue: "memory=1073741824"). */
static void test_message_units(void **state)
{
    (void)state;
    struct place_cluster cs[1];
    cluster_init(&cs[0], "c1", 1, "'cpu':'8','memory':'512Mi'", NULL, NULL);
    struct place_workload w;
    struct place_result r;
    workload_init(&w, "w", 1, "'cpu':'12','memory':'1Gi'", NULL, NULL);
    assert_int_equal(place_decide(&w, cs, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    assert_non_null(strstr(r.message, "(each cpu=12, memory=1Gi) fit; "));
    assert_null(strstr(r.message, "1073741824"));
    place_result_free(&r);
    place_workload_free(&w);
    /* memory the short one: its amounts in binary SI too */
    workload_init(&w, "w", 1, "'cpu':'1','memory':'1Gi'", NULL, NULL);
    assert_int_equal(place_decide(&w, cs, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_non_null(strstr(r.message, "memory: at most 512Mi left on a matching node even with "
                                      "the cluster empty, a pod needs 1Gi"));
    place_result_free(&r);
    place_workload_free(&w);
    place_cluster_free(&cs[0]);
}

static void test_never_vs_not_now(void **state)
{
    (void)state;
    struct place_cluster cs[2];
    /* c1: 8 cpu nodes, 7 cpu requested on each; c2: 4 cpu nodes, empty. */
    cluster_init(&cs[0], "c1", 2, "'cpu':'8'", "'cpu':'7'", NULL);
    cluster_init(&cs[1], "c2", 2, "'cpu':'4'", NULL, NULL);
    struct place_workload w;
    struct place_result r;
    workload_init(&w, "w", 1, "'cpu':'6'", NULL, NULL);
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NOT_NOW);
    assert_non_null(strstr(r.message, "c1: pod set main: 0 of 1 pod (each cpu=6) fit"));
    assert_non_null(strstr(r.message, "cpu: at most 1 left on a matching node, a pod needs 6"));
    assert_non_null(strstr(r.message, "c2:"));
    place_result_free(&r);
    place_workload_free(&w);
    workload_init(&w, "w", 1, "'cpu':'9'", NULL, NULL);
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    assert_non_null(strstr(r.message, "even empty"));
    assert_non_null(strstr(
        r.message, "c1: pod set main: 0 of 1 pod (each cpu=9) fit; cpu: "
                   "at most 8 left on a matching node even with the cluster empty, a pod needs 9"));
    place_result_free(&r);
    /* No clusters at all: not now. */
    assert_int_equal(place_decide(&w, NULL, 0, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NOT_NOW);
    place_result_free(&r);
    place_workload_free(&w);
    place_cluster_free(&cs[0]);
    place_cluster_free(&cs[1]);
}

/* The messages name clusters in name order whatever order the caller collected them in (the
 * controller collects them in store hash order, unrelated to names). */
static void test_messages_in_name_order(void **state)
{
    (void)state;
    struct place_cluster cs[3], others[2];
    /* 8 cpu nodes, 7 requested: a 6 cpu pod fits none now, every one empty */
    cluster_init(&cs[0], "zeta", 1, "'cpu':'8'", "'cpu':'7'", NULL);
    cluster_init(&cs[1], "alpha", 1, "'cpu':'8'", "'cpu':'7'", NULL);
    cluster_init(&cs[2], "mid", 1, "'cpu':'8'", "'cpu':'7'", NULL);
    cluster_init(&others[0], "yak", 1, "'cpu':'2'", NULL, NULL);
    cluster_init(&others[1], "bee", 1, "'cpu':'2'", NULL, NULL);
    struct place_workload w;
    struct place_result r;
    workload_init(&w, "w", 1, "'cpu':'6'", NULL, NULL);
    assert_int_equal(place_decide(&w, cs, 3, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NOT_NOW);
    const char *a = strstr(r.message, "alpha: "), *m = strstr(r.message, "mid: "),
               *z = strstr(r.message, "zeta: ");
    assert_true(a && m && z && a < m && m < z);
    place_result_free(&r);
    place_workload_free(&w);
    /* too big even empty: the candidates (zeta, alpha), then the others, each in name order (4
     * listed at most); the unknown ones too */
    workload_init(&w, "w", 1, "'cpu':'9'", NULL, NULL);
    const char *unknown[] = {"uu", "cc", "kk"};
    struct place_opts o = {.others = others, .n_others = 2, .unknown = unknown, .n_unknown = 3};
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, &o, &r), 0);
    assert_int_equal(r.status, PLACE_NOT_NOW);
    a = strstr(r.message, "alpha: ");
    z = strstr(r.message, "zeta: ");
    const char *b = strstr(r.message, "bee: "), *y = strstr(r.message, "yak: ");
    assert_true(a && z && b && y && a < z && z < b && b < y);
    assert_non_null(strstr(r.message, "waiting for the metrics of clusters cc, kk, uu ("));
    place_result_free(&r);
    place_workload_free(&w);
    for (int i = 0; i < 3; i++)
        place_cluster_free(&cs[i]);
    place_cluster_free(&others[0]);
    place_cluster_free(&others[1]);
}

/* "Never fits" only from a complete view of the registered clusters. */
static void test_never_needs_every_cluster(void **state)
{
    (void)state;
    struct place_cluster small, big;
    cluster_init(&small, "small", 1, "'cpu':'4'", NULL, NULL);
    cluster_init(&big, "big", 1, "'cpu':'64'", NULL, NULL);
    struct place_workload w;
    struct place_result r;
    workload_init(&w, "w", 1, "'cpu':'8'", NULL, NULL);
    /* big is registered and known but not a candidate now (unreachable):
     * the workload fits it empty, so it waits. */
    struct place_opts o = {.others = &big, .n_others = 1};
    assert_int_equal(place_decide(&w, &small, 1, &g_default_flavor, 1, NULL, &o, &r), 0);
    assert_int_equal(r.status, PLACE_NOT_NOW);
    place_result_free(&r);
    /* A registered cluster whose capacity is not known yet: never Rejected,
     * the message names it. */
    const char *unknown[] = {"later"};
    o = (struct place_opts){.unknown = unknown, .n_unknown = 1};
    assert_int_equal(place_decide(&w, &small, 1, &g_default_flavor, 1, NULL, &o, &r), 0);
    assert_int_equal(r.status, PLACE_NOT_NOW);
    assert_non_null(strstr(r.message, "waiting for the metrics of cluster later"));
    assert_non_null(strstr(r.message, "small: pod set main"));
    place_result_free(&r);
    /* No candidate at all, only unknown ones: still waiting. */
    assert_int_equal(place_decide(&w, NULL, 0, &g_default_flavor, 1, NULL, &o, &r), 0);
    assert_int_equal(r.status, PLACE_NOT_NOW);
    place_result_free(&r);
    /* Every cluster known and too small even empty: never. */
    o = (struct place_opts){.others = &small, .n_others = 1};
    assert_int_equal(place_decide(&w, NULL, 0, &g_default_flavor, 1, NULL, &o, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    assert_non_null(strstr(r.message, "small: pod set main"));
    place_result_free(&r);
    /* With a pin only the pinned cluster counts. */
    o = (struct place_opts){.pinned = "small", .unknown = unknown, .n_unknown = 1};
    assert_int_equal(place_decide(&w, &small, 1, &g_default_flavor, 1, NULL, &o, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    place_result_free(&r);
    place_workload_free(&w);
    place_cluster_free(&small);
    place_cluster_free(&big);
}

/* A ClusterMetrics created without status has reported nothing: not usable
 * (it used to count as a Ready cluster with 0 nodes that never went stale). */
static void test_no_status_not_usable(void **state)
{
    (void)state;
    const char *docs[] = {"{'metadata':{'name':'c'}}", "{'metadata':{'name':'c'},'status':{}}",
                          "{'metadata':{'name':'c'},'status':null}",
                          "{'metadata':{'name':'c'},'status':{'conditions':[]}}"};
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
        json_t *j = J(docs[i]);
        struct place_cluster c;
        assert_int_equal(place_cluster_from_json(j, &c, NULL, NULL), 0);
        assert_false(c.reported);
        assert_false(place_cluster_usable(&c, 0, 60000));
        place_cluster_free(&c);
        json_decref(j);
    }
    /* Galaxy format: nodes without lastUpdated is a report. */
    json_t *j = J("{'metadata':{'name':'c'},'status':{'nodes':[]}}");
    struct place_cluster c;
    assert_int_equal(place_cluster_from_json(j, &c, NULL, NULL), 0);
    assert_true(place_cluster_usable(&c, 0, 60000));
    place_cluster_free(&c);
    json_decref(j);
}

static void test_gpu_and_quantities(void **state)
{
    (void)state;
    struct place_cluster cs[2];
    cluster_init(&cs[0], "cpu-only", 2, "'cpu':'32','memory':'128Gi'", NULL, NULL);
    cluster_init(&cs[1], "gpu", 2, "'cpu':'8','memory':'16Gi','nvidia.com/gpu':'2'",
                 "'cpu':'500m','memory':'1.5Gi'", NULL);
    struct place_workload w;
    struct place_result r;
    /* 4 pods x (1 gpu, 1500m cpu, 1.5Gi): 2 per gpu node. */
    workload_init(&w, "w", 4, "'nvidia.com/gpu':'1','cpu':'1500m','memory':'1.5Gi'", NULL, NULL);
    assert_int_equal(w.podsets[0].per_pod.n, 3);
    assert_int_equal(place_reslist_get(&w.podsets[0].per_pod, "memory"), 1610612736000LL);
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_string_equal(r.cluster, "gpu");
    assert_int_equal(replicas_on(&r, "gpu-n0"), 2);
    assert_int_equal(replicas_on(&r, "gpu-n1"), 2);
    place_result_free(&r);
    place_workload_free(&w);
    /* Memory is the limit: 16Gi - 1.5Gi = 14.5Gi free, pods of 5Gi: 2 per node. */
    workload_init(&w, "w", 5, "'nvidia.com/gpu':'0','memory':'5Gi'", NULL, NULL);
    struct place_opts pin = {.pinned = "gpu"};
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, &pin, &r), 0);
    assert_int_equal(r.status, PLACE_NOT_NOW);
    assert_non_null(strstr(r.message, "pinned cluster gpu"));
    assert_non_null(strstr(r.message, "4 of 5 pods"));
    place_result_free(&r);
    place_workload_free(&w);
    place_cluster_free(&cs[0]);
    place_cluster_free(&cs[1]);
}

static void test_pinned(void **state)
{
    (void)state;
    struct place_cluster cs[2];
    cluster_init(&cs[0], "big", 1, "'cpu':'64'", NULL, NULL);
    cluster_init(&cs[1], "small", 1, "'cpu':'4'", NULL, NULL);
    struct place_workload w;
    struct place_result r;
    workload_init(&w, "w", 1, "'cpu':'2'", NULL, NULL);
    /* Spread would pick big; the pin wins, and the message says it was the pin (and what
     * pinned it), not the policy */
    struct place_opts o = {.pinned = "small", .pinned_by = "the job's label x/cluster"};
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, &o, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_string_equal(r.cluster, "small");
    assert_non_null(strstr(
        r.message, "placed on cluster small (pinned by the job's label x/cluster: 50.0 percent"));
    assert_null(strstr(r.message, "spread"));
    place_result_free(&r);
    o.pinned_by = NULL;
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, &o, &r), 0);
    assert_non_null(strstr(r.message, "placed on cluster small (pinned by the job: "));
    place_result_free(&r);
    o.pinned_by = "the job's label x/cluster";
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_string_equal(r.cluster, "big");
    assert_non_null(strstr(r.message, "placed on cluster big (spread, the most free wins: "));
    place_result_free(&r);
    o.pinned = "nosuch";
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, &o, &r), 0);
    assert_int_equal(r.status, PLACE_PIN_UNKNOWN);
    assert_non_null(strstr(r.message, "nosuch"));
    place_result_free(&r);
    place_workload_free(&w);
    /* Pinned to a cluster it can never fit (fits big): never, naming the pin. */
    workload_init(&w, "w", 1, "'cpu':'8'", NULL, NULL);
    o.pinned = "small";
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, &o, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    assert_non_null(strstr(r.message, "pinned cluster small can never fit"));
    place_result_free(&r);
    place_workload_free(&w);
    place_cluster_free(&cs[0]);
    place_cluster_free(&cs[1]);
}

/* A reservation whose copy's pods were seen running goes with the first metrics written
 * seen_margin_ms after that, not settle_ms after the placement; the quick skip of
 * place_resv_sync honours it; a later sighting never delays a drop. */
static void test_reservation_pods_seen(void **state)
{
    (void)state;
    struct place_cluster c;
    cluster_init(&c, "c1", 1, "'cpu':'4'", NULL, NULL);
    const int64_t lu = c.last_updated_ms;
    struct place_resv rv;
    place_resv_init(&rv);
    struct place_workload w1, w2;
    struct place_result r;
    workload_init(&w1, "w1", 1, "'cpu':'3'", NULL, NULL);
    workload_init(&w2, "w2", 1, "'cpu':'1'", NULL, NULL);
    assert_int_equal(place_decide(&w1, &c, 1, &g_default_flavor, 1, &rv, NULL, &r), 0);
    assert_int_equal(place_resv_add(&rv, w1.key, &r, lu), 0);
    place_result_free(&r);
    assert_int_equal(place_decide(&w2, &c, 1, &g_default_flavor, 1, &rv, NULL, &r), 0);
    assert_int_equal(place_resv_add(&rv, w2.key, &r, lu), 0);
    place_result_free(&r);
    assert_int_equal(place_resv_pods_seen(&rv, "ns/nope", lu + 3000), 0);
    assert_int_equal(place_resv_pods_seen(&rv, w1.key, lu + 3000), 1);
    assert_int_equal(place_resv_pods_seen(&rv, w1.key, lu + 4000), 0); /* not later */
    assert_int_equal(place_resv_pods_seen(&rv, w1.key, lu + 2000), 1); /* earlier is */
    /* metrics written before seen + margin: both kept */
    c.last_updated_ms = lu + 2000 + rv.seen_margin_ms - 1;
    assert_int_equal(place_resv_sync(&rv, &c, lu + 5000), 0);
    /* at seen + margin: w1 goes, w2 (pods not seen) stays until the settle time */
    c.last_updated_ms = lu + 2000 + rv.seen_margin_ms;
    assert_int_equal(place_resv_sync(&rv, &c, lu + 5000), 1);
    const char *where = NULL;
    assert_false(place_resv_lookup(&rv, w1.key, &where));
    assert_true(place_resv_lookup(&rv, w2.key, &where));
    /* a sighting after the settle time changes nothing */
    assert_int_equal(place_resv_pods_seen(&rv, w2.key, lu + rv.settle_ms), 0);
    c.last_updated_ms = lu + rv.settle_ms;
    assert_int_equal(place_resv_sync(&rv, &c, lu + rv.settle_ms), 1);
    assert_int_equal(rv.n, 0);
    place_resv_free(&rv);
    place_workload_free(&w1);
    place_workload_free(&w2);
    place_cluster_free(&c);
}

/* A ClusterMetrics object of cluster `name` with status.countedJobs `list` (JSON in single
 * quotes, or NULL: no list). New reference. */
static json_t *counted_cm(const char *name, const char *list)
{
    char *s = xasprintf("{'metadata':{'name':'%s'},'status':{'nodes':[]%s%s}}", name,
                        list ? ",'countedJobs':" : "", list ? list : "");
    json_t *j = J(s);
    free(s);
    return j;
}

/* place_resv_counted of `list` on cluster `name`: how many reservations it ended. */
static size_t counted_drop(struct place_resv *rv, const char *name, const char *list)
{
    json_t *cm = counted_cm(name, list);
    size_t n = place_resv_counted(rv, name, cm);
    json_decref(cm);
    return n;
}

/* Hostile countedJobs: not a list, entries past PLACE_COUNTED_MAX (not read), a uid longer
 * than PLACE_UID_MAX, a count beyond 32 bits (read as it is). */
static void test_counted_hostile(struct place_resv *rv, const char *key)
{
    assert_int_equal(place_resv_copy(rv, key, "u-late"), 1);
    assert_int_equal(counted_drop(rv, "c1", "{'uid':'u-late','pods':9}"), 0);
    json_t *cm = counted_cm("c1", "[]");
    json_t *l = json_object_get(json_object_get(cm, "status"), "countedJobs");
    for (int i = 0; i < PLACE_COUNTED_MAX; i++)
        json_array_append_new(l, json_pack("{s:s, s:i}", "uid", "other", "pods", 1));
    json_array_append_new(l, json_pack("{s:s, s:i}", "uid", "u-late", "pods", 9));
    assert_int_equal(place_resv_counted(rv, "c1", cm), 0); /* past the cap */
    json_decref(cm);
    char *long_uid = xcalloc(PLACE_UID_MAX + 2, 1);
    memset(long_uid, 'u', PLACE_UID_MAX + 1);
    assert_int_equal(place_resv_copy(rv, key, long_uid), 1);
    cm = counted_cm("c1", "[]");
    json_array_append_new(json_object_get(json_object_get(cm, "status"), "countedJobs"),
                          json_pack("{s:s, s:i}", "uid", long_uid, "pods", 9));
    assert_int_equal(place_resv_counted(rv, "c1", cm), 0); /* malformed: too long */
    json_decref(cm);
    free(long_uid);
    assert_int_equal(place_resv_copy(rv, key, "u-big"), 1);
    assert_int_equal(counted_drop(rv, "c1", "[{'uid':'u-big','pods':5000000000}]"), 1);
}

/* A reservation whose copy a ClusterMetrics event of its cluster lists in countedJobs with all
 * the placement's pods goes at once, before its settle time; a partial count keeps it, as do a
 * copy not listed, another cluster's metrics and metrics without the list (the old rule then);
 * malformed entries are ignored. */
static void test_reservation_counted(void **state)
{
    (void)state;
    struct place_cluster c;
    cluster_init(&c, "c1", 4, "'cpu':'4'", NULL, NULL);
    const int64_t lu = c.last_updated_ms;
    struct place_resv rv;
    place_resv_init(&rv);
    struct place_workload w[4];
    const char *names[] = {"w1", "w2", "w3", "w4"};
    for (int i = 0; i < 4; i++) {
        workload_init(&w[i], names[i], 2, "'cpu':'1'", NULL, NULL);
        struct place_result r;
        assert_int_equal(place_decide(&w[i], &c, 1, &g_default_flavor, 1, &rv, NULL, &r), 0);
        assert_int_equal(place_resv_add(&rv, w[i].key, &r, lu), 0);
        place_result_free(&r);
    }
    assert_int_equal(place_resv_copy(&rv, w[0].key, "uid-1"), 1);
    assert_int_equal(place_resv_copy(&rv, w[0].key, "uid-1"), 0); /* the same */
    assert_int_equal(place_resv_copy(&rv, w[1].key, "uid-old"), 1);
    assert_int_equal(place_resv_copy(&rv, w[1].key, "uid-2"), 1); /* the copy made again */
    assert_int_equal(place_resv_copy(&rv, "ns/nope", "uid-9"), 0);
    assert_int_equal(place_resv_copy(&rv, w[2].key, ""), -EINVAL);
    /* no list, another cluster's list, the old uid: all kept */
    assert_int_equal(counted_drop(&rv, "c1", NULL), 0);
    assert_int_equal(counted_drop(&rv, "c2", "[{'uid':'uid-1','pods':2}]"), 0);
    assert_int_equal(counted_drop(&rv, "c1", "[{'uid':'uid-old','pods':2}]"), 0);
    /* uid-1 with both pods: w1 goes; uid-2 with one of two: kept; malformed entries ignored */
    assert_int_equal(
        counted_drop(&rv, "c1",
                     "[{'uid':'uid-2','pods':1},{'uid':'uid-1','pods':2},"
                     "{'uid':5,'pods':2},{'uid':'uid-3','pods':-1},'x',"
                     "{'uid':'uid-4'},{'uid':'uid-2','pods':'2'},{'uid':'','pods':2}]"),
        1);
    const char *where = NULL;
    assert_false(place_resv_lookup(&rv, w[0].key, &where));
    assert_true(place_resv_lookup(&rv, w[1].key, &where));
    /* uid-1 again (w1 gone, its uid with it): nothing; uid-2 with both pods: w2 goes */
    assert_int_equal(counted_drop(&rv, "c1", "[{'uid':'uid-1','pods':2},{'uid':'uid-2','pods':2}]"),
                     1);
    assert_false(place_resv_lookup(&rv, w[1].key, &where));
    assert_true(place_resv_lookup(&rv, w[2].key, &where));
    int64_t held = 0;
    for (int n = 0; n < 4; n++) {
        char node[16];
        snprintf(node, sizeof node, "c1-n%d", n);
        held += place_resv_held(&rv, "c1", node, "cpu");
    }
    assert_int_equal(held, 4000); /* w3's and w4's two pods each */
    /* w3 by the old rule: metrics settle_ms after it */
    assert_int_equal(place_resv_sync(&rv, &c, lu + 1000), 0);
    test_counted_hostile(&rv, w[3].key);
    assert_false(place_resv_lookup(&rv, w[3].key, &where));
    c.last_updated_ms = lu + rv.settle_ms;
    assert_int_equal(place_resv_sync(&rv, &c, lu + rv.settle_ms), 1);
    assert_int_equal(rv.n, 0);
    place_cluster_free(&c);
    place_resv_free(&rv);
    for (int i = 0; i < 4; i++)
        place_workload_free(&w[i]);
}

static void test_reservation_lifecycle(void **state)
{
    (void)state;
    struct place_cluster c;
    cluster_init(&c, "c1", 1, "'cpu':'4'", NULL, NULL);
    /* lastUpdated in cluster_init is 2026-11-22T10:00:00Z. */
    const int64_t lu = c.last_updated_ms;
    assert_true(c.has_last_updated);
    assert_int_equal(lu, 1795341600000LL);
    struct place_resv rv;
    place_resv_init(&rv);
    struct place_workload w1, w2;
    struct place_result r;
    workload_init(&w1, "w1", 1, "'cpu':'3'", NULL, NULL);
    workload_init(&w2, "w2", 1, "'cpu':'3'", NULL, NULL);
    assert_int_equal(place_decide(&w1, &c, 1, &g_default_flavor, 1, &rv, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_int_equal(place_resv_add(&rv, w1.key, &r, lu - 1000), 0);
    place_result_free(&r);
    /* w2 does not fit beside w1's reservation, but would when the cluster drains. */
    assert_int_equal(place_decide(&w2, &c, 1, &g_default_flavor, 1, &rv, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NOT_NOW);
    place_result_free(&r);
    /* Re-deciding w1 itself ignores its own reservation. */
    assert_int_equal(place_decide(&w1, &c, 1, &g_default_flavor, 1, &rv, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    place_result_free(&r);
    const char *where = NULL;
    assert_true(place_resv_lookup(&rv, "ns/w1", &where));
    assert_string_equal(where, "c1");
    /* Metrics from 1 s after the reservation: within the settle time, kept. */
    assert_int_equal(place_resv_sync(&rv, &c, lu + 5000), 0);
    /* Metrics updated settle_ms after it: dropped. */
    c.last_updated_ms = lu - 1000 + rv.settle_ms;
    assert_int_equal(place_resv_sync(&rv, &c, lu + 40000), 1);
    assert_int_equal(rv.n, 0);
    /* TTL: dropped even without newer metrics. */
    assert_int_equal(place_decide(&w1, &c, 1, &g_default_flavor, 1, &rv, NULL, &r), 0);
    assert_int_equal(place_resv_add(&rv, w1.key, &r, c.last_updated_ms + 100000), 0);
    assert_int_equal(place_resv_add(&rv, w1.key, &r, c.last_updated_ms + 100000), 0);
    assert_int_equal(rv.n, 1); /* replaced, not duplicated */
    place_result_free(&r);
    assert_int_equal(place_resv_sync(&rv, &c, c.last_updated_ms + 100000 + rv.ttl_ms - 1), 0);
    assert_int_equal(place_resv_sync(&rv, &c, c.last_updated_ms + 100000 + rv.ttl_ms), 1);
    /* Explicit removal. */
    assert_int_equal(place_decide(&w2, &c, 1, &g_default_flavor, 1, &rv, NULL, &r), 0);
    assert_int_equal(place_resv_add(&rv, w2.key, &r, 0), 0);
    place_result_free(&r);
    assert_int_equal(place_resv_remove(&rv, "ns/w2"), 1);
    assert_int_equal(place_resv_remove(&rv, "ns/w2"), 0);
    struct place_result notok = {.status = PLACE_NOT_NOW};
    assert_int_equal(place_resv_add(&rv, "x", &notok, 0), -EINVAL);
    place_resv_free(&rv);
    place_workload_free(&w1);
    place_workload_free(&w2);
    place_cluster_free(&c);
}

/* Brute-force sum of what the entries hold on (cluster, node, resource). */
static int64_t held_brute(const struct place_resv *rv, const char *cluster, const char *node,
                          const char *res)
{
    int64_t sum = 0;
    for (size_t i = 0; i < rv->n; i++)
        for (size_t k = 0; strcmp(rv->v[i].cluster, cluster) == 0 && k < rv->v[i].n_nodes; k++)
            if (strcmp(rv->v[i].node_names[k], node) == 0)
                sum += place_reslist_get(&rv->v[i].per_node[k], res);
    return sum;
}

static void check_resv_index(const struct place_resv *rv, const struct place_cluster *cs, size_t nc)
{
    for (size_t c = 0; c < nc; c++)
        for (size_t i = 0; i < cs[c].n_nodes; i++)
            assert_int_equal(place_resv_held(rv, cs[c].name, cs[c].nodes[i].name, "cpu"),
                             held_brute(rv, cs[c].name, cs[c].nodes[i].name, "cpu"));
    for (size_t i = 0; i < rv->n; i++) {
        const char *where = NULL;
        assert_true(place_resv_lookup(rv, rv->v[i].key, &where));
        assert_string_equal(where, rv->v[i].cluster);
    }
}

/* The per-node sums and the key index follow adds, replacements, removals
 * (which move entries) and syncs; a decision sees exactly the sums. */
static void test_reservation_index(void **state)
{
    (void)state;
    struct place_cluster cs[2];
    cluster_init(&cs[0], "c1", 3, "'cpu':'10'", NULL, NULL);
    cluster_init(&cs[1], "c2", 3, "'cpu':'10'", NULL, NULL);
    const int64_t lu = cs[0].last_updated_ms;
    struct place_resv rv;
    place_resv_init(&rv);
    struct place_workload w[30];
    for (int i = 0; i < 30; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        workload_init(&w[i], name, 1 + i % 2, "'cpu':'1'", NULL, NULL);
        struct place_result r;
        assert_int_equal(place_decide(&w[i], cs, 2, &g_default_flavor, 1, &rv, NULL, &r), 0);
        if (r.status == PLACE_OK) /* reserved at lu - 60 s + i s */
            assert_int_equal(place_resv_add(&rv, w[i].key, &r, lu - 60000 + i * 1000), 0);
        place_result_free(&r);
        if (i % 7 == 3) /* a removal moves the last entry into the hole */
            assert_int_equal(place_resv_remove(&rv, w[i / 2].key), 1);
        check_resv_index(&rv, cs, 2);
    }
    /* On c1, exactly the cpu the sums leave free fits, one pod more does not. */
    int64_t left = 0;
    for (size_t i = 0; i < 3; i++)
        left += (10000 - place_resv_held(&rv, "c1", cs[0].nodes[i].name, "cpu")) / 1000;
    assert_true(left > 0 && left < 30);
    struct place_opts pin = {.pinned = "c1"};
    struct place_workload fit, more;
    struct place_result r;
    workload_init(&fit, "fit", (int)left, "'cpu':'1'", NULL, NULL);
    workload_init(&more, "more", (int)left + 1, "'cpu':'1'", NULL, NULL);
    assert_int_equal(place_decide(&fit, cs, 2, &g_default_flavor, 1, &rv, &pin, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    place_result_free(&r);
    assert_int_equal(place_decide(&more, cs, 2, &g_default_flavor, 1, &rv, &pin, &r), 0);
    assert_int_equal(r.status, PLACE_NOT_NOW);
    place_result_free(&r);
    place_workload_free(&fit);
    place_workload_free(&more);
    /* Sync at lastUpdated = lu - 30 s + settle: the entries made up to lu - 30 s go. */
    size_t due = 0;
    for (size_t i = 0; i < rv.n; i++)
        due += strcmp(rv.v[i].cluster, "c1") == 0 && rv.v[i].at_ms <= lu - 30000;
    cs[0].last_updated_ms = lu - 30000 + rv.settle_ms;
    assert_int_equal(place_resv_sync(&rv, &cs[0], lu), due);
    assert_int_equal(place_resv_sync(&rv, &cs[0], lu), 0);
    check_resv_index(&rv, cs, 2);
    for (size_t i = 0; i < rv.n; i++)
        assert_false(strcmp(rv.v[i].cluster, "c1") == 0 && rv.v[i].at_ms <= lu - 30000);
    /* Later metrics drop the rest of c1; c2 is untouched. */
    size_t on_c2 = 0;
    for (size_t i = 0; i < rv.n; i++)
        on_c2 += strcmp(rv.v[i].cluster, "c2") == 0;
    cs[0].last_updated_ms = lu + rv.settle_ms;
    place_resv_sync(&rv, &cs[0], lu);
    assert_int_equal(rv.n, on_c2);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(place_resv_held(&rv, "c1", cs[0].nodes[i].name, "cpu"), 0);
    check_resv_index(&rv, cs, 2);
    place_resv_free(&rv);
    for (int i = 0; i < 30; i++)
        place_workload_free(&w[i]);
    place_cluster_free(&cs[0]);
    place_cluster_free(&cs[1]);
}

static void test_bad_input(void **state)
{
    (void)state;
    struct vocab_warnings w = {0};
    struct place_cluster c;
    struct err e = {0};
    /* Bad nodes are skipped with a warning naming cluster, node index and field. */
    json_t *j = J("{'metadata':{'name':'c1'},'status':{'lastUpdated':'yesterday','nodes':["
                  "{'name':'a','allocatableResources':{'cpu':'lots'}},"
                  "{'name':'b','allocatableResources':{'cpu':'-1'}},"
                  "{'name':'c','allocatableResources':{'cpu':'2'},'labels':{'x':1}},"
                  "{'allocatableResources':{'cpu':'2'}},"
                  "{'name':'e','allocatableResources':{'cpu':'2'},'taints':[{'effect':'x'}]},"
                  "{'name':'f','allocatableResources':{'cpu':'2'},'ready':'yes'},"
                  "{'name':'ok','allocatableResources':{'cpu':'2'}},"
                  "{'name':'ok','allocatableResources':{'cpu':'3'}}, 7]}}");
    assert_int_equal(place_cluster_from_json(j, &c, &w, &e), 0);
    json_decref(j);
    assert_int_equal(c.n_nodes, 1);
    assert_string_equal(c.nodes[0].name, "ok");
    assert_int_equal(place_reslist_get(&c.nodes[0].alloc, "cpu"), 2000);
    assert_false(c.has_last_updated);
    assert_int_equal(w.n, 9);
    assert_non_null(strstr(w.msg[0], "lastUpdated"));
    assert_non_null(strstr(w.msg[1], "cluster c1: status.nodes[0]: allocatableResources.cpu"));
    assert_non_null(strstr(w.msg[2], "status.nodes[1]: allocatableResources.cpu: negative"));
    assert_non_null(strstr(w.msg[3], "labels.x"));
    assert_non_null(strstr(w.msg[4], "name"));
    assert_non_null(strstr(w.msg[5], "taints[0]"));
    assert_non_null(strstr(w.msg[6], "ready"));
    assert_non_null(strstr(w.msg[7], "status.nodes[8]"));
    assert_non_null(strstr(w.msg[8], "node ok listed twice"));
    vocab_warnings_free(&w);
    place_cluster_free(&c);
    /* Unusable objects. */
    const char *bad_clusters[] = {"[]", "{}", "{'metadata':{'name':'x'},'status':{'nodes':{}}}",
                                  "{'metadata':{'name':'x'},'status':7}"};
    for (size_t i = 0; i < 4; i++) {
        j = J(bad_clusters[i]);
        assert_int_equal(place_cluster_from_json(j, &c, &w, &e), -EINVAL);
        json_decref(j);
    }
    /* Workloads: bad quantity names the pod set and field. */
    struct place_workload wl;
    j = J("{'metadata':{'name':'w','namespace':'ns'},'spec':{'podSets':[{'name':'main',"
          "'template':{'spec':{'containers':[{'resources':{'requests':{'cpu':'1.5.5'}}}]}}}]}}");
    assert_int_equal(place_workload_from_json(j, &wl, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "Workload ns/w"));
    assert_non_null(strstr(e.msg, "containers[0].resources.requests.cpu"));
    json_decref(j);
    const char *bad_wl[] = {
        "{}",
        "{'metadata':{'name':'w'},'spec':{'podSets':[]}}",
        "{'metadata':{'name':'w'},'spec':{'podSets':[{'count':-1,'template':{'spec':{}}}]}}",
        "{'metadata':{'name':'w'},'spec':{'podSets':[{'count':1}]}}",
        "{'metadata':{'name':'w'},'spec':{'podSets':[{'template':{'spec':{'containers':{}}}}]}}",
        "{'metadata':{'name':'w'},'spec':{'podSets':[{'template':{'spec':{}}}]},"
        "'status':{'admission':{'podSetAssignments':[{'name':'other'}]}}}",
        "{'metadata':{'name':'w'},'spec':{'podSets':[{'template':{'spec':{}}}]},"
        "'status':{'admission':{'podSetAssignments':[{'name':'main','flavors':{'cpu':3}}]}}}",
        "{'metadata':{'name':'w'},'spec':{'podSets':[{'template':{'spec':{'nodeSelector':"
        "{'a':1}}}}]}}",
    };
    for (size_t i = 0; i < sizeof bad_wl / sizeof bad_wl[0]; i++) {
        j = J(bad_wl[i]);
        err_clear(&e);
        if (place_workload_from_json(j, &wl, &e) != -EINVAL)
            fail_msg("case %zu accepted", i);
        assert_true(e.msg[0] != '\0');
        json_decref(j);
    }
    /* Partial admission: the assignment's count wins; two flavors are both kept. */
    j = J("{'metadata':{'name':'w'},'spec':{'podSets':[{'count':10,'template':{'spec':{}}}]},"
          "'status':{'admission':{'podSetAssignments':[{'name':'main','count':4,'flavors':"
          "{'cpu':'b','memory':'a','gpu':'b'}}]}}}");
    assert_int_equal(place_workload_from_json(j, &wl, &e), 0);
    assert_int_equal(wl.podsets[0].count, 4);
    assert_int_equal(wl.podsets[0].n_flavors, 2);
    assert_string_equal(wl.podsets[0].flavors[0], "a");
    assert_string_equal(wl.podsets[0].flavors[1], "b");
    place_workload_free(&wl);
    json_decref(j);
    enum place_policy p;
    assert_int_equal(place_policy_parse("binpack", &p), 0);
    assert_int_equal(p, PLACE_BINPACK);
    assert_int_equal(place_policy_parse("spread", &p), 0);
    assert_int_equal(p, PLACE_SPREAD);
    assert_int_equal(place_policy_parse("random", &p), -EINVAL);
}

static void test_multi_podset_ffd(void **state)
{
    (void)state;
    /* Two pod sets: 1 driver of 6 cpu, 4 workers of 2 cpu, on two 8-cpu nodes.
     * Largest first puts the driver on n0 (6), workers 1 on n0 and 3 on n1... all fit. */
    json_t *j = J("{'metadata':{'name':'w','namespace':'ns'},'spec':{'podSets':["
                  "{'name':'workers','count':4,'template':{'spec':{'containers':[{'resources':"
                  "{'requests':{'cpu':'2'}}}]}}},"
                  "{'name':'driver','count':1,'template':{'spec':{'containers':[{'resources':"
                  "{'requests':{'cpu':'6'}}}]}}}]}}");
    struct place_workload w;
    assert_int_equal(place_workload_from_json(j, &w, NULL), 0);
    json_decref(j);
    struct place_cluster c;
    cluster_init(&c, "c1", 2, "'cpu':'8'", NULL, NULL);
    struct place_result r;
    assert_int_equal(place_decide(&w, &c, 1, NULL, 0, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_int_equal(replicas_on(&r, "c1-n0"), 2); /* driver + 1 worker */
    assert_int_equal(replicas_on(&r, "c1-n1"), 3);
    assert_int_equal(r.score_ppm, 125000); /* 2 of 16 cpu left */
    place_result_free(&r);
    place_cluster_free(&c);
    place_workload_free(&w);
}

static void test_pod_slots(void **state)
{
    (void)state;
    /* n0 has 3 pod slots with 1 used, n1 reports no "pods" (unlimited). */
    json_t *j = J("{'metadata':{'name':'c1'},'status':{'nodes':["
                  "{'name':'n0','allocatableResources':{'cpu':'64','pods':'3'},"
                  "'allocatedResourceRequests':{'pods':'1'}},"
                  "{'name':'n1','allocatableResources':{'cpu':'64'}}]}}");
    struct place_cluster c;
    assert_int_equal(place_cluster_from_json(j, &c, NULL, NULL), 0);
    json_decref(j);
    struct place_workload w;
    struct place_result r;
    workload_init(&w, "w", 200, "'cpu':'100m'", NULL, NULL);
    assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_int_equal(replicas_on(&r, "n0"), 2);
    assert_int_equal(replicas_on(&r, "n1"), 198);
    assert_int_equal(place_reslist_get(&r.node_totals[0], "pods"), 2000);
    /* Score counts cpu only: 128 - 20 = 108 of 128 cpu free. */
    assert_int_equal(r.score_ppm, 843750);
    place_result_free(&r);
    place_workload_free(&w);
    place_cluster_free(&c);
    /* Only n0: 3 pods never fit (3 slots), 2 do not fit now (1 slot used). */
    j = J("{'metadata':{'name':'c1'},'status':{'nodes':[{'name':'n0','allocatableResources':"
          "{'cpu':'64','pods':'2'},'allocatedResourceRequests':{'pods':'1'}}]}}");
    assert_int_equal(place_cluster_from_json(j, &c, NULL, NULL), 0);
    json_decref(j);
    workload_init(&w, "w", 3, "'cpu':'100m'", NULL, NULL);
    assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    assert_non_null(strstr(r.message, "2 of 3 pods (each cpu=100m) fit; pods: at most 0 left on a "
                                      "matching node even with the cluster empty"));
    place_result_free(&r);
    place_workload_free(&w);
    workload_init(&w, "w", 2, "'cpu':'100m'", NULL, NULL);
    assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NOT_NOW);
    assert_non_null(strstr(r.message, "pods: at most 0 left on a matching node, a pod needs 1"));
    place_result_free(&r);
    place_workload_free(&w);
    place_cluster_free(&c);
}

static void test_cluster_readiness(void **state)
{
    (void)state;
    json_t *j = J("{'metadata':{'name':'down'},'status':{'lastUpdated':'2026-11-22T10:00:00Z',"
                  "'conditions':[{'type':'Ready','status':'False'}],'nodes':[{'name':'n',"
                  "'allocatableResources':{'cpu':'64'}}]}}");
    struct place_cluster cs[2];
    assert_int_equal(place_cluster_from_json(j, &cs[0], NULL, NULL), 0);
    json_decref(j);
    cluster_init(&cs[1], "up", 1, "'cpu':'4'", NULL, NULL);
    const int64_t t0 = 1795341600000LL;
    assert_false(place_cluster_usable(&cs[0], t0, 60000));
    assert_true(place_cluster_usable(&cs[1], t0 + 60000, 60000));
    assert_false(place_cluster_usable(&cs[1], t0 + 60001, 60000));
    struct place_workload w;
    struct place_result r;
    workload_init(&w, "w", 1, "'cpu':'2'", NULL, NULL);
    /* The bigger cluster is not ready: skipped. */
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_string_equal(r.cluster, "up");
    place_result_free(&r);
    struct place_opts o = {.pinned = "down"};
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, &o, &r), 0);
    assert_int_equal(r.status, PLACE_NOT_NOW);
    assert_string_equal(r.message, "pinned cluster down is not ready");
    place_result_free(&r);
    place_workload_free(&w);
    place_cluster_free(&cs[0]);
    place_cluster_free(&cs[1]);
}

#define NA_REQ(expr)                                                                               \
    "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"               \
    "'nodeSelectorTerms':[" expr "]}}}"

/* Required and preferred node affinity (pkg/sched/affinity) filter and rank. */
static void test_node_affinity(void **state)
{
    (void)state;
    struct place_cluster cs[2];
    cluster_init(&cs[0], "c1", 2, "'cpu':'64'", NULL, "'labels':{'instance':'a100'}");
    cluster_init(&cs[1], "c2", 1, "'cpu':'8'", NULL, "'labels':{'instance':'h100','zone':'a'}");
    struct place_workload w;
    struct place_result r;
    /* without affinity spread picks the bigger c1; In [h100] only fits c2 */
    workload_init(&w, "w", 1, "'cpu':'1'",
                  NA_REQ("{'matchExpressions':[{'key':'instance','operator':'In','values':["
                         "'h100']}]}"),
                  NULL);
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_string_equal(r.cluster, "c2");
    place_result_free(&r);
    place_workload_free(&w);
    /* a label no node has: never, and the message names the affinity */
    workload_init(&w, "w", 1, "'cpu':'1'",
                  NA_REQ("{'matchExpressions':[{'key':'no-such-label','operator':'In','values':["
                         "'x']}]}"),
                  NULL);
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    assert_non_null(strstr(r.message, "c1: pod set main: the required node affinity "
                                      "(no-such-label In [x]) excludes the 2 nodes"));
    assert_non_null(strstr(r.message, "c2: pod set main: the required node affinity"));
    place_result_free(&r);
    place_workload_free(&w);
    /* matchFields on the node name: all 3 pods on c1-n1 */
    workload_init(&w, "w", 3, "'cpu':'1'",
                  NA_REQ("{'matchFields':[{'key':'metadata.name','operator':'In','values':["
                         "'c1-n1']}]}"),
                  NULL);
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_string_equal(r.cluster, "c1");
    assert_int_equal(replicas_on(&r, "c1-n1"), 3);
    assert_int_equal(replicas_on(&r, "c1-n0"), 0);
    place_result_free(&r);
    place_workload_free(&w);
    /* an invalid operator: the term never matches, the message says why */
    workload_init(&w, "w", 1, "'cpu':'1'",
                  NA_REQ("{'matchExpressions':[{'key':'instance','operator':'Like','values':["
                         "'h100']}]}"),
                  NULL);
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    assert_non_null(strstr(r.message, "invalid node affinity: nodeSelectorTerms[0]."
                                      "matchExpressions[0].operator: \"Like\" is not one of"));
    place_result_free(&r);
    place_workload_free(&w);
    /* preferred: c2's h100 wins over the emptier c1 (spread) */
    workload_init(&w, "w", 2, "'cpu':'1'",
                  "'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
                  "[{'weight':10,'preference':{'matchExpressions':[{'key':'instance','operator':"
                  "'In','values':['h100']}]}}]}}",
                  NULL);
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_string_equal(r.cluster, "c2");
    assert_int_equal(r.preferred_ppm, 1000000);
    assert_non_null(strstr(r.message, "preferred node affinity 100.0 percent met"));
    place_result_free(&r);
    place_workload_free(&w);
    /* ...but a preference never overrides the required fit: 9 cpu do not fit c2 */
    workload_init(&w, "w", 9, "'cpu':'1'",
                  "'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
                  "[{'weight':10,'preference':{'matchExpressions':[{'key':'instance','operator':"
                  "'In','values':['h100']}]}}]}}",
                  NULL);
    assert_int_equal(place_decide(&w, cs, 2, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_string_equal(r.cluster, "c1");
    assert_int_equal(r.preferred_ppm, 0);
    place_result_free(&r);
    place_workload_free(&w);
    /* affinity of the wrong type: the workload is refused with the field named */
    json_t *j = J("{'metadata':{'name':'w','namespace':'ns'},'spec':{'podSets':[{'name':'main',"
                  "'template':{'spec':{'containers':[],'affinity':{'nodeAffinity':7}}}}]}}");
    struct err e = {0};
    assert_int_equal(place_workload_from_json(j, &w, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "pod set main: template.spec.affinity.nodeAffinity: not an "
                                  "object"));
    json_decref(j);
    place_cluster_free(&cs[0]);
    place_cluster_free(&cs[1]);
}

static void pc_workload(struct place_workload *w, int count, const char *spec_extra)
{
    char *s = xasprintf("{'metadata':{'name':'w','namespace':'ns'},'spec':{'podSets':[{'name':"
                        "'main','count':%d,'template':{'metadata':{'labels':{'app':'t'}},'spec':{"
                        "'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}],%s}}}]}}",
                        count, spec_extra);
    json_t *j = J(s);
    struct err e = {0};
    if (place_workload_from_json(j, w, &e) != 0)
        fail_msg("%s", e.msg);
    json_decref(j);
    free(s);
}

/* Inter-pod constraints: self anti-affinity on the hostname is one pod per
 * node; the rest is placed on capacity and named as left to the worker. */
static void test_pod_constraints(void **state)
{
    (void)state;
    struct place_cluster c;
    cluster_init(&c, "c1", 2, "'cpu':'64'", NULL, NULL);
    const char *anti = "'affinity':{'podAntiAffinity':{'requiredDuringSchedulingIgnoredDuring"
                       "Execution':[{'topologyKey':'kubernetes.io/hostname','labelSelector':{"
                       "'matchLabels':{'app':'t'}}}]}}";
    struct place_workload w;
    struct place_result r;
    pc_workload(&w, 2, anti);
    assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_int_equal(replicas_on(&r, "c1-n0"), 1);
    assert_int_equal(replicas_on(&r, "c1-n1"), 1);
    assert_null(r.left_to_worker);
    place_result_free(&r);
    place_workload_free(&w);
    pc_workload(&w, 3, anti); /* 3 pods, 2 nodes: never, and why */
    assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_NEVER);
    assert_non_null(strstr(r.message, "2 of 3 pods (each cpu=1) fit on the 2 matching nodes (one "
                                      "per node: required pod anti-affinity on "
                                      "kubernetes.io/hostname)"));
    place_result_free(&r);
    place_workload_free(&w);
    /* topology spread: placed on capacity (all on one node), said */
    pc_workload(&w, 3,
                "'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'zone',"
                "'whenUnsatisfiable':'DoNotSchedule'}]");
    assert_int_equal(place_decide(&w, &c, 1, &g_default_flavor, 1, NULL, NULL, &r), 0);
    assert_int_equal(r.status, PLACE_OK);
    assert_int_equal(replicas_on(&r, "c1-n0"), 3);
    assert_string_equal(r.left_to_worker, "pod set main: topology spread (topologyKey zone)");
    assert_non_null(strstr(r.message, "; left to the worker's scheduler: pod set main: topology "
                                      "spread (topologyKey zone)"));
    place_result_free(&r);
    place_workload_free(&w);
    place_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas_across_nodes),
        cmocka_unit_test(test_init_containers_overhead_limits),
        cmocka_unit_test(test_toleration_table),
        cmocka_unit_test(test_taints_in_placement),
        cmocka_unit_test(test_labels_and_selector),
        cmocka_unit_test(test_unready_unschedulable_skipped),
        cmocka_unit_test(test_transient_taints_wait),
        cmocka_unit_test(test_burst_spread_and_binpack),
        cmocka_unit_test(test_deterministic_ties),
        cmocka_unit_test(test_never_vs_not_now),
        cmocka_unit_test(test_message_units),
        cmocka_unit_test(test_never_needs_every_cluster),
        cmocka_unit_test(test_messages_in_name_order),
        cmocka_unit_test(test_no_status_not_usable),
        cmocka_unit_test(test_gpu_and_quantities),
        cmocka_unit_test(test_pinned),
        cmocka_unit_test(test_reservation_lifecycle),
        cmocka_unit_test(test_reservation_pods_seen),
        cmocka_unit_test(test_reservation_counted),
        cmocka_unit_test(test_reservation_index),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_multi_podset_ffd),
        cmocka_unit_test(test_pod_slots),
        cmocka_unit_test(test_cluster_readiness),
        cmocka_unit_test(test_node_affinity),
        cmocka_unit_test(test_pod_constraints),
    };
    return cmocka_run_group_tests_name("placement", tests, setup, teardown);
}
