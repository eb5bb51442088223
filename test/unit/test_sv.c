/* Unit tests for cmd/kueue-ks/sv: exact rendered text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/kueue-ks/sv.h"
#include "pkg/util/xalloc.h"
#include "test/support/tjson.h"

#define T0 1795341600000LL /* 2026-11-22T10:00:00Z */

/* Single-quoted JSON literals (test/support/tjson). */
#define J(s) tjson(s)

#define RESERVED_NOTE                                                                              \
    "  (a job kueue-ks places stays quota-reserved, never Admitted: its check stays Pending and "  \
    "its hub Job suspended while a worker runs it; JOBS above counts them)\n"

static void assert_render(const struct sv_input *in, const char *want)
{
    struct buf b;
    buf_init(&b, 1 << 20);
    assert_int_equal(sv_render(in, &b), 0);
    if (strcmp(buf_str(&b), want) != 0)
        fail_msg("got:\n%s\nwant:\n%s", buf_str(&b), want);
    buf_free(&b);
}

#define CMS                                                                                        \
    "{'items':["                                                                                   \
    "{'metadata':{'name':'c2'},'status':{'lastUpdated':'2026-11-22T09:59:55Z',"                    \
    "'conditions':[{'type':'Ready','status':'True'}],'nodes':["                                    \
    "{'name':'n1','ready':true,'allocatableResources':{'cpu':'4','memory':'8Gi',"                  \
    "'nvidia.com/gpu':'2'},'allocatedResourceRequests':{'cpu':'1500m','memory':'1Gi',"             \
    "'nvidia.com/gpu':'1'}},"                                                                      \
    "{'name':'n2','ready':false,'unschedulable':true,'taints':[{'key':'k','effect':'NoSchedule'}]" \
    ","                                                                                            \
    "'allocatableResources':{'cpu':'2','memory':'1.5Gi'}}]}},"                                     \
    "{'metadata':{'name':'c1'},'status':{'nodes':["                                                \
    "{'name':'a','allocatableResources':{'cpu':'500m','memory':'bogus'},"                          \
    "'allocatedResourceRequests':{'cpu':'250m'}}]}}]}"

#define JOBS                                                                                       \
    "{'items':[{'metadata':{'name':'j1','labels':{'kubestellar.io/cluster':'c2'}}},"               \
    "{'metadata':{'name':'j2','labels':{'kubestellar.io/cluster':'c2'}}},"                         \
    "{'metadata':{'name':'j4','labels':{'kubestellar.io/cluster':'c2'}},'status':{'conditions':"   \
    "[{'type':'Complete','status':'True'}]}},"                                                     \
    "{'metadata':{'name':'j5','labels':{'kubestellar.io/cluster':'c1'}},'status':{'conditions':"   \
    "[{'type':'Succeeded','status':'True'}]}},"                                                    \
    "{'metadata':{'name':'j3'}}]}"

#define CQS                                                                                        \
    "{'items':[{'metadata':{'name':'team-b'},'spec':{'resourceGroups':[{'coveredResources':"       \
    "['cpu'],'flavors':[{'name':'default-flavor','resources':[{'name':'cpu','nominalQuota':"       \
    "'10'}]}]}]}},"                                                                                \
    "{'metadata':{'name':'team-a','annotations':{'kueue-ks.io/quota-source':"                      \
    "'default-flavor/cpu=6: c1=500m c2=5500m reserved=1; default-flavor/memory=8Gi: c2=8Gi; "      \
    "stale: c3'}},'spec':{'resourceGroups':[{'coveredResources':['cpu','memory'],'flavors':"       \
    "[{'name':'default-flavor','resources':[{'name':'cpu','nominalQuota':'6'},{'name':'memory',"   \
    "'nominalQuota':'8Gi'}]}]}]},'status':{'flavorsReservation':[{'name':'default-flavor',"        \
    "'resources':[{'name':'cpu','total':'1'}]}],'flavorsUsage':[{'name':'default-flavor',"         \
    "'resources':[{'name':'cpu','total':'500m'}]}]}}]}"

#define WLS                                                                                        \
    "{'items':[{'status':{'conditions':[{'type':'Finished','status':'True'},"                      \
    "{'type':'Admitted','status':'True'}]}},"                                                      \
    "{'status':{'conditions':[{'type':'Admitted','status':'True'}]}},"                             \
    "{'status':{'conditions':[{'type':'QuotaReserved','status':'True'},"                           \
    "{'type':'Admitted','status':'False'}]}},"                                                     \
    "{'status':{}},{}]}"

static void test_full(void **state)
{
    (void)state;
    json_t *cms = J(CMS), *jobs = J(JOBS), *cqs = J(CQS), *wls = J(WLS);
    struct sv_input in = {.cluster_metrics = cms,
                          .jobs = jobs,
                          .cluster_queues = cqs,
                          .workloads = wls,
                          .now_ms = T0};
    assert_render(
        &in,
        "CLUSTER   READY     NODES   CPU(used/cap)   MEMORY(used/cap)   GPU(used/cap)   "
        "METRICS-AGE   JOBS\n"
        "c1        Unknown   1/1     250m/500m       0/?                -               -        "
        "     0\n"
        "c2        True      1/2     1500m/6         1Gi/9728Mi         1/2             5s       "
        "     2\n"
        "\n"
        "CLUSTERQUEUE   FLAVOR           RESOURCE   QUOTA   RESERVED   SOURCE\n"
        "team-a         default-flavor   cpu        6       1          c1=500m c2=5500m "
        "reserved=1\n"
        "team-a         default-flavor   memory     8Gi     0          c2=8Gi\n"
        "team-b         default-flavor   cpu        10      0          -\n"
        "\n"
        "WORKLOADS: 5 (pending 2, quota-reserved 1, admitted 1, finished 1)\n" RESERVED_NOTE);

    in.wide = true;
    assert_render(
        &in,
        "CLUSTER   READY     NODES   CPU(used/cap)   MEMORY(used/cap)   GPU(used/cap)   "
        "METRICS-AGE   JOBS   UNSCHEDULABLE   TAINTED\n"
        "c1        Unknown   1/1     250m/500m       0/?                -               -        "
        "     0      0               0\n"
        "c2        True      1/2     1500m/6         1Gi/9728Mi         1/2             5s       "
        "     2      1               1\n"
        "\n"
        "CLUSTERQUEUE   FLAVOR           RESOURCE   QUOTA   RESERVED   IN-USE   SOURCE\n"
        "team-a         default-flavor   cpu        6       1          500m     c1=500m c2=5500m "
        "reserved=1 (stale: c3)\n"
        "team-a         default-flavor   memory     8Gi     0          0        c2=8Gi (stale: "
        "c3)\n"
        "team-b         default-flavor   cpu        10      0          0        -\n"
        "\n"
        "WORKLOADS: 5 (pending 2, quota-reserved 1, admitted 1, finished 1)\n" RESERVED_NOTE);

    /* -o json: every column (as wide), keyed by camelCase fields as kubectl's JSON; used/cap
     * and ready/total split, counts as numbers, "-" as null */
    in.wide = false;
    json_t *j = sv_render_json(&in);
    char *txt = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    const char *want =
        "{\"clusters\":[{\"cpu\":{\"capacity\":\"500m\",\"used\":\"250m\"},\"gpu\":null,"
        "\"jobs\":0,\"memory\":{\"capacity\":\"?\",\"used\":\"0\"},\"metricsAge\":\"-\","
        "\"name\":\"c1\",\"nodes\":{\"ready\":1,\"total\":1},\"ready\":\"Unknown\","
        "\"taintedNodes\":0,\"unschedulableNodes\":0},{\"cpu\":{\"capacity\":\"6\","
        "\"used\":\"1500m\"},\"gpu\":{\"capacity\":\"2\",\"used\":\"1\"},\"jobs\":2,"
        "\"memory\":{\"capacity\":\"9728Mi\",\"used\":\"1Gi\"},\"metricsAge\":\"5s\","
        "\"name\":\"c2\",\"nodes\":{\"ready\":1,\"total\":2},\"ready\":\"True\","
        "\"taintedNodes\":1,\"unschedulableNodes\":1}],"
        "\"queues\":[{\"clusterQueue\":\"team-a\",\"flavor\":\"default-flavor\","
        "\"inUse\":\"500m\",\"quota\":\"6\",\"reserved\":\"1\",\"resource\":\"cpu\","
        "\"source\":\"c1=500m c2=5500m reserved=1 (stale: c3)\"},"
        "{\"clusterQueue\":\"team-a\",\"flavor\":\"default-flavor\",\"inUse\":\"0\","
        "\"quota\":\"8Gi\",\"reserved\":\"0\",\"resource\":\"memory\","
        "\"source\":\"c2=8Gi (stale: c3)\"},{\"clusterQueue\":\"team-b\","
        "\"flavor\":\"default-flavor\",\"inUse\":\"0\",\"quota\":\"10\",\"reserved\":\"0\","
        "\"resource\":\"cpu\",\"source\":\"-\"}],\"workloads\":{\"admitted\":1,"
        "\"finished\":1,\"pending\":2,\"quotaReserved\":1,\"total\":5}}";
    if (strcmp(txt, want) != 0)
        fail_msg("json got:\n%s\nwant:\n%s", txt, want);
    free(txt);
    json_decref(j);
    json_decref(cms);
    json_decref(jobs);
    json_decref(cqs);
    json_decref(wls);
}

/* Missing CRDs print the caller's notes; empty lists say so; no jobs list shows "-". */
static void test_missing_and_empty(void **state)
{
    (void)state;
    struct sv_input in = {
        .cluster_metrics_note = "the ClusterMetrics CRD (galaxy.kubestellar.io/v1alpha1) is not "
                                "installed on the hub",
        .cluster_queues_note = "Kueue is not installed on the hub",
        .workloads_note = "Kueue is not installed on the hub",
        .now_ms = T0,
    };
    assert_render(&in, "CLUSTERS: the ClusterMetrics CRD (galaxy.kubestellar.io/v1alpha1) is not "
                       "installed on the hub\n\n"
                       "QUEUES: Kueue is not installed on the hub\n\n"
                       "WORKLOADS: Kueue is not installed on the hub\n");
    json_t *empty = J("{'items':[]}");
    json_t *cm = J("{'items':[{'metadata':{'name':'x'},'status':{'lastUpdated':"
                   "'2026-11-22T09:00:00Z'}}]}");
    struct sv_input in2 = {
        .cluster_metrics = empty, .cluster_queues = empty, .workloads = empty, .now_ms = T0};
    assert_render(&in2, "CLUSTERS: no ClusterMetrics found (is the agent running?)\n\n"
                        "QUEUES: no ClusterQueues found\n\n"
                        "WORKLOADS: 0 (pending 0, quota-reserved 0, admitted 0, finished 0)\n");
    in2.cluster_metrics = cm;
    assert_render(&in2, "CLUSTER   READY     NODES   CPU(used/cap)   MEMORY(used/cap)   "
                        "GPU(used/cap)   METRICS-AGE   JOBS\n"
                        "x         Unknown   0/0     0/0             0/0                -     "
                        "          60m           -\n\n"
                        "QUEUES: no ClusterQueues found\n\n"
                        "WORKLOADS: 0 (pending 0, quota-reserved 0, admitted 0, finished 0)\n");
    json_decref(empty);
    json_decref(cm);
}

/* Garbage in odd places never crashes and shows "?" or is skipped. */
static void test_garbage(void **state)
{
    (void)state;
    json_t *cms = J("{'items':[1,{'metadata':{'name':'g'},'status':{'nodes':[7,{'name':'n',"
                    "'allocatableResources':{'cpu':-3}}],'conditions':'x'}}]}");
    json_t *cqs = J("{'items':[{'metadata':{'name':'q','annotations':{'kueue-ks.io/quota-source':"
                    "'garbage'}},'spec':{'resourceGroups':[{'flavors':[{'name':'f','resources':"
                    "[{'name':'cpu','nominalQuota':'1x'},{'nominalQuota':'1'}]},{'resources':[]}]},"
                    "3]},'status':{'flavorsUsage':[{'name':'f','resources':[{'name':'cpu',"
                    "'total':{}}]}]}}]}");
    json_t *wls = J("{'items':'no'}");
    struct sv_input in = {
        .cluster_metrics = cms, .cluster_queues = cqs, .workloads = wls, .now_ms = T0};
    assert_render(&in, "CLUSTER   READY     NODES   CPU(used/cap)   MEMORY(used/cap)   "
                       "GPU(used/cap)   METRICS-AGE   JOBS\n"
                       "g         Unknown   1/1     0/?             0/0                -     "
                       "          -             -\n\n"
                       "CLUSTERQUEUE   FLAVOR   RESOURCE   QUOTA   RESERVED   SOURCE\n"
                       "q              f        cpu        ?       0          -\n\n"
                       "WORKLOADS: 0 (pending 0, quota-reserved 0, admitted 0, finished 0)\n");
    json_decref(cms);
    json_decref(cqs);
    json_decref(wls);
}

/* A worker whose metrics stopped coming (its agent cannot say False when it is unreachable):
 * READY shows Stale past the operator's default --metrics-stale-after, not the last True. */
static void test_stale(void **state)
{
    (void)state;
    json_t *cms = J("{'items':[{'metadata':{'name':'c1'},'status':{'lastUpdated':"
                    "'2026-11-22T09:50:00Z','conditions':[{'type':'Ready','status':'True'}],"
                    "'nodes':[]}},{'metadata':{'name':'c2'},'status':{'lastUpdated':"
                    "'2026-11-22T09:59:30Z','conditions':[{'type':'Ready','status':'True'}],"
                    "'nodes':[]}}]}");
    struct sv_input in = {.cluster_metrics = cms, .now_ms = T0};
    struct buf b;
    buf_init(&b, 1 << 20);
    assert_int_equal(sv_render(&in, &b), 0);
    const char *out = buf_str(&b);
    assert_non_null(strstr(out, "\nc1        Stale "));
    assert_non_null(strstr(out, "\nc2        True "));
    buf_free(&b);
    json_decref(cms);
}

static void test_age(void **state)
{
    (void)state;
    char b[16];
    assert_string_equal(sv_age(-1, b, sizeof b), "-");
    assert_string_equal(sv_age(0, b, sizeof b), "0s");
    assert_string_equal(sv_age(119999, b, sizeof b), "119s");
    assert_string_equal(sv_age(120000, b, sizeof b), "2m");
    assert_string_equal(sv_age(330000, b, sizeof b), "5m30s");
    assert_string_equal(sv_age(75 * 60000, b, sizeof b), "75m");
    assert_string_equal(sv_age((3 * 60 + 5) * 60000LL, b, sizeof b), "3h5m");
    assert_string_equal(sv_age(30 * 3600000LL, b, sizeof b), "30h");
    assert_string_equal(sv_age(53 * 3600000LL, b, sizeof b), "2d5h");
    assert_string_equal(sv_age(48 * 3600000LL, b, sizeof b), "2d");
    assert_string_equal(sv_age(10 * 24 * 3600000LL, b, sizeof b), "10d");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full),    cmocka_unit_test(test_missing_and_empty),
        cmocka_unit_test(test_garbage), cmocka_unit_test(test_age),
        cmocka_unit_test(test_stale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
