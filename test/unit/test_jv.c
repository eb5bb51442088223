/* Unit tests for controllers/workload/jv: the exact `kueue-ks explain` text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/workload/jv.h"
#include "pkg/json/jsonx.h"
#include "test/support/tjson.h"

#define J(s) tjson(s)
#define T0   1795341600000LL /* 2026-11-22T10:00:00Z */

#define CMS                                                                                        \
    "{'items':["                                                                                   \
    "{'metadata':{'name':'cluster2'},'status':{'lastUpdated':'2026-11-22T09:59:55Z','nodes':["     \
    "{'name':'a','labels':{'instance':'h100'},'allocatableResources':{'cpu':'8','memory':'32Gi',"  \
    "'nvidia.com/gpu':'2'},'allocatedResourceRequests':{'cpu':'5'}}]}},"                           \
    "{'metadata':{'name':'cluster1'},'status':{'lastUpdated':'2026-11-22T09:59:55Z','nodes':["     \
    "{'name':'a','labels':{'instance':'spot'},'allocatableResources':{'cpu':'8','memory':'32Gi'}," \
    "'allocatedResourceRequests':{'cpu':'1'}},"                                                    \
    "{'name':'b','labels':{'instance':'spot'},'allocatableResources':{'cpu':'8','memory':'32Gi'}," \
    "'allocatedResourceRequests':{'cpu':'8','memory':'16Gi'}}]}},"                                 \
    "{'metadata':{'name':'cluster3'},'status':{'lastUpdated':'2026-11-22T09:00:00Z','nodes':["     \
    "{'name':'a','allocatableResources':{'cpu':'64'}}]}}]}"

#define FLAVORS                                                                                    \
    "{'items':[{'metadata':{'name':'spot'},'spec':{'nodeLabels':{'instance':'spot'}}},"            \
    "{'metadata':{'name':'h100'},'spec':{'nodeLabels':{'instance':'h100'}}}]}"

#define ACS                                                                                        \
    "{'items':[{'metadata':{'name':'other'},'spec':{'controllerName':'x'}},"                       \
    "{'metadata':{'name':'kubestellar-admc'},'spec':{'controllerName':"                            \
    "'kubestellar.io/ks-kueue'}}]}"

#define FREE_NOTE                                                                                  \
    "  (free: allocatable minus the requests ClusterMetrics reports on the node; jobs placed "     \
    "since its last report are not subtracted)\n"

static void assert_text(const char *got, const char *want)
{
    if (strcmp(got, want) != 0) {
        /* whole texts: cmocka's message buffer cuts them */
        fprintf(stderr, "got:\n%s\nwant:\n%s\n", got, want);
        fail_msg("the text differs (both printed above)");
    }
}

static void assert_render(const struct jv_input *in, const char *want)
{
    struct buf b;
    buf_init(&b, 1 << 20);
    assert_int_equal(jv_render(in, &b), 0);
    assert_text(buf_str(&b), want);
    buf_free(&b);
}

/* jv_render of `job` and `wl` (borrowed) against the fixtures' ClusterMetrics, flavors and
 * checks: the text (caller frees). */
static char *render_std(json_t *job, json_t *wl)
{
    json_t *cms = J(CMS), *fl = J(FLAVORS), *acs = J(ACS);
    struct jv_input in = {.job = job,
                          .workload = wl,
                          .cluster_metrics = cms,
                          .flavors = fl,
                          .admission_checks = acs,
                          .now_ms = T0};
    struct buf b;
    buf_init(&b, 1 << 20);
    assert_int_equal(jv_render(&in, &b), 0);
    char *out = strdup(buf_str(&b));
    assert_non_null(out);
    buf_free(&b);
    json_decref(cms);
    json_decref(fl);
    json_decref(acs);
    return out;
}

/* Kueue holds it (quota), no check yet; cluster3's metrics are an hour old. */
static void test_not_admitted(void **state)
{
    (void)state;
    json_t *job = J("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'big','namespace':"
                    "'default','uid':'u1','labels':{'kueue.x-k8s.io/queue-name':'user-queue'}}}");
    json_t *wl = J("{'metadata':{'name':'job-big-1'},'spec':{'queueName':'user-queue',"
                   "'priority':-100,'priorityClassName':'low-priority','podSets':[{'name':'main',"
                   "'count':2,'template':{'spec':{'containers':[{'name':'c','resources':"
                   "{'requests':{'cpu':'4'}}}]}}}]},'status':{'conditions':[{'type':"
                   "'QuotaReserved','status':'False','reason':'Pending','message':'insufficient "
                   "unused quota for cpu in flavor spot'}]}}");
    json_t *lq = J("{'metadata':{'name':'user-queue'},'spec':{'clusterQueue':'cq'}}");
    json_t *cms = J(CMS), *fl = J(FLAVORS), *acs = J(ACS);
    struct jv_input in = {.job = job,
                          .workload = wl,
                          .local_queue = lq,
                          .cluster_metrics = cms,
                          .flavors = fl,
                          .admission_checks = acs,
                          .now_ms = T0};
    assert_render(
        &in,
        "Job default/big (batch/v1)\n"
        "\n"
        "Kueue\n"
        "  Queue:        user-queue (ClusterQueue cq)\n"
        "  Workload:     job-big-1\n"
        "  Priority:     -100 (class low-priority)\n"
        "  Reservation:  no: Pending: insufficient unused quota for cpu in flavor spot\n"
        "\n"
        "kueue-ks\n"
        "  Check:        kubestellar-admc: not on the Workload yet (Kueue adds it with the quota "
        "reservation)\n"
        "  Placed on:    not placed\n"
        "  Worker copy:  none\n"
        "\n"
        "Fit per cluster\n"
        "  CLUSTER   FLAVOR  FIT              POD SET  RESOURCE  NEEDED/POD  BEST NODE FREE/ALLOC  "
        "ALL MATCHING NODES FREE/ALLOC\n"
        "  cluster1  spot    fits when empty  main     cpu       4           7 / 8                 "
        "7 / 16\n"
        "  cluster2  h100    fits when empty  main     cpu       4           3 / 8                 "
        "3 / 8\n"
        "  cluster3  -       unknown          main     cpu       4           64 / 64               "
        "64 / 64\n" FREE_NOTE "\n"
        "not placed: Kueue has not admitted it: Pending: insufficient unused quota for cpu in "
        "flavor spot; kueue-ks places a job only once Kueue has reserved its quota\n"
        "capacity once admitted: waiting for capacity: pod set main needs 2 pods, cpu 4 per pod; "
        "cluster1: 2 matching nodes cannot hold all 2 pods of pod set main now; cluster2: 3 of 4 "
        "cpu free on a matching node (h100); cluster3: no fresh metrics (stale or unreachable): "
        "cannot tell\n");
    json_decref(job);
    json_decref(wl);
    json_decref(lq);
    json_decref(cms);
    json_decref(fl);
    json_decref(acs);
}

/* Workload job-j-1 (1 pod, cpu 2, memory 1Gi) reserved in flavor spot, our check Pending with
 * `msg`. */
#define WL_SPOT_RESERVED(msg)                                                                      \
    "{'metadata':{'name':'job-j-1'},'spec':{'queueName':'q','podSets':[{'name':'main','count':1,"  \
    "'template':{'spec':{'containers':[{'name':'c','resources':{'requests':{'cpu':'2','memory':"   \
    "'1Gi'}}}]}}}]},'status':{'admission':{'clusterQueue':'cq','podSetAssignments':[{'name':"      \
    "'main','flavors':{'cpu':'spot','memory':'spot'}}]},'conditions':[{'type':'QuotaReserved',"    \
    "'status':'True','lastTransitionTime':'2026-11-22T09:58:00Z'}],'admissionChecks':[{'name':"    \
    "'kubestellar-admc','state':'Pending','message':'" msg "'}]}}"

/* Placed by kueue-ks on cluster1, running there; no LocalQueue object needed
 * (the admission names the ClusterQueue). */
static void test_placed_running(void **state)
{
    (void)state;
    json_t *job = J(
        "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j','namespace':'team',"
        "'uid':'u2','labels':{'kueue.x-k8s.io/queue-name':'q','kubestellar.io/cluster':"
        "'cluster1'},'annotations':{'kueue-ks.io/placed-by':'kueue-ks','kueue-ks.io/remote-status':"
        "'{\\\"cluster\\\":\\\"cluster1\\\",\\\"active\\\":2,\\\"ready\\\":1,\\\"succeeded\\\":0,"
        "\\\"failed\\\":0}'}}}");
    json_t *wl = J(WL_SPOT_RESERVED("running on cluster cluster1"));
    char *got = render_std(job, wl);
    assert_text(got, "Job team/j (batch/v1)\n"
                     "\n"
                     "Kueue\n"
                     "  Queue:        q (ClusterQueue cq)\n"
                     "  Workload:     job-j-1\n"
                     "  Priority:     0\n"
                     "  Reservation:  yes, since 2026-11-22T09:58:00Z\n"
                     "\n"
                     "kueue-ks\n"
                     "  Check:        kubestellar-admc: Pending: running on cluster cluster1\n"
                     "  Placed on:    cluster1\n"
                     "  Worker copy:  on cluster1: active 2, ready 1, succeeded 0, failed 0\n"
                     "\n"
                     "Fit per cluster\n"
                     "  CLUSTER   FLAVOR  FIT       POD SET  RESOURCE  NEEDED/POD  BEST NODE "
                     "FREE/ALLOC  ALL MATCHING NODES FREE/ALLOC\n"
                     "  cluster1  spot    fits now  main     cpu       2           7 / 8       "
                     "          7 / 16\n"
                     "                                       memory    1Gi         32Gi / 32Gi "
                     "          48Gi / 64Gi\n"
                     "  cluster2  spot    never     main     cpu       2           no spot node\n"
                     "                                       memory    1Gi         no spot node\n"
                     "  cluster3  spot    unknown   main     cpu       2           no spot node\n"
                     "                                       memory    1Gi         no spot "
                     "node\n" FREE_NOTE "\n"
                     "fits now: pod set main needs cpu 2, memory 1Gi per pod; cluster1: fits now "
                     "(spot); cluster2: no node of flavor spot (instance=spot), the flavor Kueue "
                     "reserved the quota in; cluster3: no fresh metrics (stale or unreachable): "
                     "cannot tell\n");
    free(got);
    json_decref(job);
    json_decref(wl);
}

/* A finished job (issue: explain said "Pending ... fits now" for it): the check line says what
 * happened, the verdict that it finished and where it ran; the fit, for a new run, after it. */
static void test_finished(void **state)
{
    (void)state;
    for (int failed = 0; failed <= 1; failed++) {
        json_t *job =
            J("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j','namespace':'team',"
              "'uid':'u2','labels':{'kueue.x-k8s.io/queue-name':'q','kubestellar.io/cluster':"
              "'cluster1'},'annotations':{'kueue-ks.io/placed-by':'kueue-ks','kueue-ks.io/"
              "remote-status':'{\\\"cluster\\\":\\\"cluster1\\\",\\\"active\\\":0,\\\"ready\\\":0,"
              "\\\"succeeded\\\":1,\\\"failed\\\":0}'}},'status':{'conditions':[{'type':'Complete',"
              "'status':'True'}]}}");
        if (failed)
            jx_set_new(job, "status", J("{'conditions':[{'type':'Failed','status':'True'}]}"),
                       NULL);
        json_t *wl =
            J("{'metadata':{'name':'job-j-1'},'spec':{'queueName':'q','podSets':[{'name':"
              "'main','count':1,'template':{'spec':{'containers':[{'name':'c','resources':"
              "{'requests':{'cpu':'2'}}}]}}}]},'status':{'admission':{'clusterQueue':'cq',"
              "'podSetAssignments':[{'name':'main','flavors':{'cpu':'spot'}}]},'conditions':[{"
              "'type':'QuotaReserved','status':'True','lastTransitionTime':'2026-11-22T09:58:00Z'},"
              "{'type':'Finished','status':'True','message':'done'}],'admissionChecks':[{'name':"
              "'kubestellar-admc','state':'Pending','message':'finished on cluster cluster1: "
              "succeeded'}]}}");
        char *out = render_std(job, wl);
        assert_non_null(strstr(out,
                               "  Check:        kubestellar-admc: finished on cluster cluster1: "
                               "succeeded (state Pending to the end: Kueue never runs the "
                               "hub copy)\n"));
        const char *tail =
            failed ? FREE_NOTE "\nfinished: Failed on cluster cluster1\ncapacity now, for a new "
                               "run: fits now: pod set main needs cpu 2 per pod; cluster1: fits "
                               "now (spot); cluster2: no node of flavor spot (instance=spot), the "
                               "flavor Kueue reserved the quota in; cluster3: no fresh metrics "
                               "(stale or unreachable): cannot tell\n"
                   : FREE_NOTE "\nfinished: Succeeded on cluster cluster1\ncapacity now, for a "
                               "new run: fits now: pod set main needs cpu 2 per pod; cluster1: "
                               "fits now (spot); cluster2: no node of flavor spot (instance=spot), "
                               "the flavor Kueue reserved the quota in; cluster3: no fresh "
                               "metrics (stale or unreachable): cannot tell\n";
        size_t ol = strlen(out), tl = strlen(tail);
        if (ol < tl || strcmp(out + ol - tl, tail) != 0)
            fail_msg("the text does not end with the finish:\n%s", out);
        assert_null(strstr(out, "\nfits now"));  /* not the verdict */
        assert_null(strstr(out, ": Pending: ")); /* the check line */
        free(out);
        json_decref(job);
        json_decref(wl);
    }
}

/* Deactivated by Kueue because our check Rejected it: kueue-ks's verdict with the advice, not
 * "Kueue has not admitted it: deactivated". */
static void test_rejected_deactivated(void **state)
{
    (void)state;
    json_t *job = J("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'big','namespace':"
                    "'default','uid':'u3','labels':{'kueue.x-k8s.io/queue-name':'q'}}}");
    json_t *wl =
        J("{'metadata':{'name':'job-big-1'},'spec':{'active':false,'queueName':'q','podSets':[{"
          "'name':'main','count':1,'template':{'spec':{'containers':[{'name':'c','resources':{"
          "'requests':{'cpu':'12'}}}]}}}]},'status':{'conditions':[{'type':'QuotaReserved',"
          "'status':'False','reason':'Pending','message':'The workload is deactivated due to "
          "Admission check(s): kubestellar-admc, were rejected'},{'type':'Evicted','status':'True',"
          "'reason':'DeactivatedDueToAdmissionCheck','message':'The workload is deactivated due to "
          "Admission check(s): kubestellar-admc, were rejected'}],'admissionChecks':[{'name':"
          "'kubestellar-admc','state':'Pending','message':'Reset to Pending after eviction. "
          "Previously: Rejected'}]}}");
    char *out = render_std(job, wl);
    assert_non_null(strstr(out,
                           "\nkueue-ks rejected it: no worker cluster can hold it, even empty; "
                           "Kueue deactivated its Workload (spec.active=false); shrink the "
                           "job's requests"));
    assert_null(strstr(out, "Kueue has not admitted it"));
    free(out);
    json_decref(job);
    json_decref(wl);
}

/* Placed on a cluster whose metrics are stale (cluster3: an hour old): the kueue-ks part says
 * that what its copy reported may be old and what the operator does next; a finished job, or
 * one placed on a fresh cluster (test_placed_running), gets no such line. */
static void test_placed_on_stale_worker(void **state)
{
    (void)state;
    json_t *cms = J(CMS);
    for (int finished = 0; finished <= 1; finished++) {
        json_t *job = J("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j','namespace':"
                        "'team','uid':'u2','labels':{'kubestellar.io/cluster':'cluster3'},"
                        "'annotations':{'kueue-ks.io/placed-by':'kueue-ks'}}}");
        if (finished)
            json_object_set_new(job, "status",
                                J("{'conditions':[{'type':'Complete','status':'True'}]}"));
        struct jv_input in = {.job = job, .cluster_metrics = cms, .now_ms = T0};
        struct buf b;
        buf_init(&b, 1 << 20);
        assert_int_equal(jv_render(&in, &b), 0);
        const char *want = "  Worker:       cluster3: no fresh metrics since 2026-11-22T09:00:00Z "
                           "(unreachable, or its agent stopped): what its copy reported may be "
                           "old; the job is placed again once the worker is lost for "
                           "--worker-lost-timeout (5m by default)\n";
        if (finished)
            assert_null(strstr(buf_str(&b), "  Worker:  "));
        else
            assert_non_null(strstr(buf_str(&b), want));
        buf_free(&b);
        json_decref(job);
    }
    json_decref(cms);
}

/* A worker reports the job's copy as making no progress (issue 15, point 4):
 * a "No progress" line per reporting cluster, after the worker copy; another
 * job's entry, or one in another namespace, is not shown. */
static void test_no_progress_line(void **state)
{
    (void)state;
    json_t *job = J("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j','namespace':"
                    "'team','uid':'u2','labels':{'kubestellar.io/cluster':'cluster1'},"
                    "'annotations':{'kueue-ks.io/placed-by':'kueue-ks'}}}");
    json_t *cms =
        J("{'items':[{'metadata':{'name':'cluster1'},'status':{'unschedulableJobs':["
          "{'namespace':'other','name':'j','cause':'no-pods','reason':'NoPods','message':'x',"
          "'since':'2026-11-22T09:00:00Z','pods':0},"
          "{'namespace':'team','name':'j','cause':'not-started','reason':'ErrImagePull',"
          "'message':'failed to pull image \\\"x\\\"','since':'2026-11-22T09:58:00Z','pods':2},"
          "{'namespace':'team','name':'k','cause':'unschedulable','reason':'Unschedulable',"
          "'message':'y','since':'2026-11-22T09:00:00Z','pods':1}]}},"
          "{'metadata':{'name':'cluster2'},'status':{'unschedulableJobs':[{'namespace':'team',"
          "'name':'j','reason':'Unschedulable','since':'2026-11-22T09:50:00Z','pods':1}]}}]}");
    struct jv_input in = {.job = job, .cluster_metrics = cms, .now_ms = T0};
    struct buf b;
    buf_init(&b, 1 << 20);
    assert_int_equal(jv_render(&in, &b), 0);
    const char *want = "  Worker copy:  no status reported yet\n"
                       "  No progress:  on cluster1 since 2026-11-22T09:58:00Z (not-started, 2 "
                       "pods): ErrImagePull: failed to pull image \"x\"\n"
                       "  No progress:  on cluster2 since 2026-11-22T09:50:00Z (unschedulable, 1 "
                       "pod): Unschedulable\n";
    if (!strstr(buf_str(&b), want))
        fail_msg("no No progress lines in:\n%s", buf_str(&b));
    assert_null(strstr(buf_str(&b), "NoPods"));
    assert_null(strstr(buf_str(&b), ": y\n"));
    buf_free(&b);
    json_decref(job);
    json_decref(cms);
}

/* The ClusterQueue's cluster selector leaves cluster3 out, cluster1 is excluded
 * for a while after its pods could not be scheduled there (point 4), cluster2's
 * nodes do not match the job's required node affinity: each says so. */
/* A PyTorchJob has no remote-status annotation: its copy's whole status is returned onto the
 * hub object, and its replicaStatuses are the copy's progress. */
static void test_pytorchjob_progress(void **state)
{
    (void)state;
    json_t *job = J("{'apiVersion':'kubeflow.org/v1','kind':'PyTorchJob','metadata':{'name':'p',"
                    "'namespace':'team','uid':'u3','labels':{'kubestellar.io/cluster':'cluster1'},"
                    "'annotations':{'kueue-ks.io/placed-by':'kueue-ks'}},'status':{"
                    "'replicaStatuses':{'Master':{'active':1},'Worker':{'active':1,"
                    "'succeeded':1}}}}");
    struct jv_input in = {.job = job, .now_ms = T0};
    struct buf b;
    buf_init(&b, 1 << 20);
    assert_int_equal(jv_render(&in, &b), 0);
    const char *want = "  Worker copy:  on cluster1: Master active 1, succeeded 0, failed 0; "
                       "Worker active 1, succeeded 1, failed 0\n";
    if (!strstr(buf_str(&b), want))
        fail_msg("no replica progress in:\n%s", buf_str(&b));
    buf_free(&b);
    /* none reported yet */
    json_object_del(job, "status");
    buf_init(&b, 1 << 20);
    assert_int_equal(jv_render(&in, &b), 0);
    assert_non_null(strstr(buf_str(&b), "  Worker copy:  no status reported yet\n"));
    buf_free(&b);
    json_decref(job);
}

static void test_selector_affinity_exclusion(void **state)
{
    (void)state;
    json_t *job = J("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'moved','namespace':"
                    "'default','uid':'u3','labels':{'kueue.x-k8s.io/queue-name':'user-queue'},"
                    "'annotations':{'kueue-ks.io/excluded-clusters':"
                    "'cluster1=2026-11-22T10:10:00Z,cluster2=2026-11-22T09:00:00Z'}}}");
    json_t *wl = J("{'metadata':{'name':'job-moved-1'},'spec':{'queueName':'user-queue',"
                   "'podSets':[{'name':'main','count':1,'template':{'spec':{'affinity':{"
                   "'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"
                   "'nodeSelectorTerms':[{'matchExpressions':[{'key':'instance','operator':'In',"
                   "'values':['spot']}]}]}}},'containers':[{'name':'c','resources':{'requests':"
                   "{'cpu':'1'}}}]}}}]}}");
    json_t *lq = J("{'metadata':{'name':'user-queue'},'spec':{'clusterQueue':'cq'}}");
    json_t *cqs = J("{'items':[{'metadata':{'name':'other'}},{'metadata':{'name':'cq',"
                    "'annotations':{'kueue-ks.io/cluster-selector':'name!=cluster3'}}}]}");
    json_t *cms = J(CMS), *fl = J(FLAVORS), *acs = J(ACS);
    struct jv_input in = {.job = job,
                          .workload = wl,
                          .local_queue = lq,
                          .cluster_metrics = cms,
                          .flavors = fl,
                          .admission_checks = acs,
                          .cluster_queues = cqs,
                          .now_ms = T0};
    assert_render(
        &in,
        "Job default/moved (batch/v1)\n"
        "\n"
        "Kueue\n"
        "  Queue:        user-queue (ClusterQueue cq)\n"
        "  Workload:     job-moved-1\n"
        "  Priority:     0\n"
        "  Reservation:  no\n"
        "\n"
        "kueue-ks\n"
        "  Check:        kubestellar-admc: not on the Workload yet (Kueue adds it with the quota "
        "reservation)\n"
        "  Placed on:    not placed\n"
        "  Worker copy:  none\n"
        "\n"
        "Fit per cluster\n"
        "  CLUSTER   FLAVOR  FIT       POD SET  RESOURCE  NEEDED/POD  BEST NODE FREE/ALLOC  ALL "
        "MATCHING NODES FREE/ALLOC\n"
        "  cluster1  spot    excluded  main     cpu       1           7 / 8                 7 / "
        "16\n"
        "  cluster2  -       never     main     cpu       1           no matching node\n"
        "  cluster3  -       excluded  main     cpu       1           no matching node\n" FREE_NOTE
        "\n"
        "not placed: Kueue has not admitted it: no quota reserved yet; kueue-ks places a job only "
        "once Kueue has reserved its quota\n"
        "capacity once admitted: no cluster fits among those with fresh metrics: pod set main "
        "needs cpu 1 per pod; cluster1: excluded until 2026-11-22T10:10:00Z: its pods could not be "
        "scheduled there (kueue-ks.io/excluded-clusters); cluster2: never: no node matches the "
        "required node affinity (instance In [spot]) of pod set main; cluster3: excluded by the "
        "cluster selector \"name!=cluster3\" (from the ClusterQueue)\n");
    json_decref(job);
    json_decref(wl);
    json_decref(lq);
    json_decref(cqs);
    json_decref(cms);
    json_decref(fl);
    json_decref(acs);
}

/* A namespace without the LocalQueue: the capacity would do, Kueue's reason
 * is the verdict; a job no cluster can ever hold leads with "never fits". */
static void test_no_local_queue(void **state)
{
    (void)state;
    json_t *job = J("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j','namespace':"
                    "'other','uid':'u3','labels':{'kueue.x-k8s.io/queue-name':'user-queue'}}}");
    json_t *wl = J("{'metadata':{'name':'job-j-2'},'spec':{'queueName':'user-queue','podSets':[{"
                   "'name':'main','count':1,'template':{'spec':{'containers':[{'name':'c',"
                   "'resources':{'requests':{'cpu':'1'}}}]}}}]},'status':{'conditions':[{'type':"
                   "'QuotaReserved','status':'False','reason':'Inadmissible','message':'LocalQueue "
                   "user-queue doesn\\u0027t exist'}]}}");
    json_t *cms = J(CMS), *fl = J(FLAVORS), *acs = J(ACS);
    struct jv_input in = {.job = job,
                          .workload = wl,
                          .cluster_metrics = cms,
                          .flavors = fl,
                          .admission_checks = acs,
                          .now_ms = T0};
    assert_render(
        &in, "Job other/j (batch/v1)\n"
             "\n"
             "Kueue\n"
             "  Queue:        user-queue (no such LocalQueue in namespace other; kubectl get "
             "localqueues -A lists them)\n"
             "  Workload:     job-j-2\n"
             "  Priority:     0\n"
             "  Reservation:  no: Inadmissible: LocalQueue user-queue doesn't exist\n"
             "\n"
             "kueue-ks\n"
             "  Check:        kubestellar-admc: not on the Workload yet (Kueue adds it with "
             "the quota reservation)\n"
             "  Placed on:    not placed\n"
             "  Worker copy:  none\n"
             "\n"
             "Fit per cluster\n"
             "  CLUSTER   FLAVOR  FIT       POD SET  RESOURCE  NEEDED/POD  BEST NODE "
             "FREE/ALLOC  ALL MATCHING NODES FREE/ALLOC\n"
             "  cluster1  spot    fits now  main     cpu       1           7 / 8                "
             " 7 / 16\n"
             "  cluster2  h100    fits now  main     cpu       1           3 / 8                "
             " 3 / 8\n"
             "  cluster3  -       unknown   main     cpu       1           64 / 64              "
             " 64 / 64\n" FREE_NOTE "\n"
             "not placed: Kueue has not admitted it: Inadmissible: LocalQueue user-queue "
             "doesn't exist; kueue-ks places a job only once Kueue has reserved its quota\n"
             "capacity once admitted: fits now: pod set main needs cpu 1 per pod; cluster1: "
             "fits now (spot); cluster2: fits now (h100); cluster3: no fresh metrics (stale or "
             "unreachable): cannot tell\n");
    /* 100 cpu: no fresh cluster can ever hold it (cluster3 is left out) */
    json_object_set_new(
        json_object_get(json_object_get(json_array_get(jx_arr(wl, "spec.podSets"), 0), "template"),
                        "spec"),
        "containers", J("[{'name':'c','resources':{'requests':{'cpu':'100'}}}]"));
    json_array_remove(json_object_get(cms, "items"), 2);
    struct buf b;
    buf_init(&b, 1 << 20);
    assert_int_equal(jv_render(&in, &b), 0);
    const char *tail = "\nnever fits: pod set main needs cpu 100 per pod; cluster1: largest node 8 "
                       "cpu (spot); cluster2: largest node 8 cpu (h100)\nKueue has not admitted it "
                       "either: Inadmissible: LocalQueue user-queue doesn't exist\n";
    const char *got = buf_str(&b);
    if (strlen(got) < strlen(tail) || strcmp(got + strlen(got) - strlen(tail), tail) != 0)
        fail_msg("the text does not end with the never verdict:\n%s", got);
    buf_free(&b);
    json_decref(job);
    json_decref(wl);
    json_decref(cms);
    json_decref(fl);
    json_decref(acs);
}

/* A job pinned by the user to a cluster that is not a worker: not placed (it read "Placed on:
 * cluster9"), and no other cluster is a candidate (it read "cluster1: fits now"). */
static void test_pinned_unknown_cluster(void **state)
{
    (void)state;
    json_t *job = J("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j','namespace':"
                    "'team','uid':'u2','labels':{'kueue.x-k8s.io/queue-name':'q',"
                    "'kubestellar.io/cluster':'cluster9'}}}");
    json_t *wl = J(WL_SPOT_RESERVED("pinned cluster cluster9 is not a registered worker"));
    char *out = render_std(job, wl);
    static const char *const want[] = {
        "  Placed on:    not placed; pinned by the user to cluster9 (kubestellar.io/cluster "
        "label)\n",
        "  Worker copy:  none\n",
        "\nno cluster is a candidate for the job: pod set main needs cpu 2, memory 1Gi per pod; "
        "cluster1: not the cluster the job is pinned to (cluster9, its kubestellar.io/cluster "
        "label); cluster2: not the cluster the job is pinned to"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(out, want[i]))
            fail_msg("no \"%s\" in:\n%s", want[i], out);
    assert_null(strstr(out, "fits now ("));
    free(out);
    json_decref(job);
    json_decref(wl);
}

static void test_no_workload_no_queue(void **state)
{
    (void)state;
    json_t *job = J("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'plain'}}");
    struct jv_input in = {.job = job};
    assert_render(&in,
                  "Job default/plain (batch/v1)\n"
                  "\n"
                  "Kueue\n"
                  "  Queue:        none: the job has no kueue.x-k8s.io/queue-name label, Kueue "
                  "does not manage it\n"
                  "\n"
                  "not handled: neither Kueue nor kueue-ks manages a job without a "
                  "kueue.x-k8s.io/queue-name label: it stays on the hub (suspended, or with its "
                  "pods on the hub's own nodes, if any); create it with the label set to a "
                  "LocalQueue of namespace default (kubectl get localqueues -n default) to have "
                  "it queued and placed on a worker\n");
    struct buf b;
    buf_init(&b, 1024);
    assert_int_equal(jv_render(NULL, &b), -EINVAL);
    buf_free(&b);
    json_decref(job);
    /* a job of a parent (a JobSet's child) is its parent's Workload's: not "not handled" */
    job = J("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'child','ownerReferences':"
            "[{'apiVersion':'jobset.x-k8s.io/v1alpha2','kind':'JobSet','name':'js','uid':'p1',"
            "'controller':true}]}}");
    char *out = render_std(job, NULL);
    assert_null(strstr(out, "not handled"));
    free(out);
    json_decref(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_admitted),
        cmocka_unit_test(test_placed_running),
        cmocka_unit_test(test_finished),
        cmocka_unit_test(test_rejected_deactivated),
        cmocka_unit_test(test_no_local_queue),
        cmocka_unit_test(test_no_workload_no_queue),
        cmocka_unit_test(test_pinned_unknown_cluster),
        cmocka_unit_test(test_selector_affinity_exclusion),
        cmocka_unit_test(test_no_progress_line),
        cmocka_unit_test(test_pytorchjob_progress),
        cmocka_unit_test(test_placed_on_stale_worker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
