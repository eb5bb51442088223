/*
 * Unit tests for controllers/agent/agent: the pure computation, then the
 * agent against fakesrv (nodes and pods listed and watched as scripted, the
 * ClusterMetrics writes recorded and asserted).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/agent/agent.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"
#include "test/support/fakesrv.h"

#define CM_PATH     "/apis/galaxy.kubestellar.io/v1alpha1/clustermetrics"
#define STATUS_PATH CM_PATH "/c1/status"

static double scaled(double s)
{
    return getenv("KKS_VALGRIND") ? s * 6 : s;
}

static json_t *load(const char *s)
{
    json_error_t je;
    json_t *j = json_loads(s, 0, &je);
    if (!j)
        fail_msg("bad test JSON: %s: %s", je.text, s);
    return j;
}

static void assert_json_eq(json_t *got, const char *want_s)
{
    json_t *want = load(want_s);
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
        char *w = json_dumps(want, JSON_SORT_KEYS | JSON_COMPACT);
        fail_msg("JSON differs:\n got:  %s\n want: %s", g, w);
    }
    json_decref(want);
}

/* ---- objects ------------------------------------------------------------------ */

#define NODE_N1                                                                                    \
    "{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"1\",\"labels\":{\"zone\":\"a\"}},"       \
    "\"spec\":{\"taints\":[{\"key\":\"gpu\",\"value\":\"yes\",\"effect\":\"NoSchedule\"}]},"       \
    "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"32Gi\",\"nvidia.com/gpu\":\"2\","     \
    "\"pods\":\"110\"},\"conditions\":[{\"type\":\"MemoryPressure\",\"status\":\"False\"},"        \
    "{\"type\":\"Ready\",\"status\":\"True\",\"lastHeartbeatTime\":\"2026-01-01T00:00:00Z\"}]}}"
#define NODE_N2                                                                                    \
    "{\"metadata\":{\"name\":\"n2\",\"resourceVersion\":\"2\"},"                                   \
    "\"spec\":{\"unschedulable\":true},"                                                           \
    "\"status\":{\"allocatable\":{\"cpu\":\"3500m\",\"memory\":\"16318440Ki\"},"                   \
    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}"

/* A pod with one container requesting cpu/memory (limits optional). */
static char *pod(const char *name, const char *rv, const char *node, const char *phase,
                 const char *cpu, const char *mem)
{
    return xasprintf("{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"resourceVersion\":"
                     "\"%s\"},\"spec\":{%s%s%s\"containers\":[{\"name\":\"c\",\"image\":\"x\","
                     "\"resources\":{\"requests\":{\"cpu\":\"%s\",\"memory\":\"%s\"}}}]},"
                     "\"status\":{\"phase\":\"%s\"}}",
                     name, rv, node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "",
                     cpu, mem, phase);
}

/* p1: Running on n1, 500m + 1.5Gi; p2: Pending but bound to n1, with an init
 * container larger than its containers and an overhead; p3: Succeeded on n1
 * (dropped); p4: not bound (dropped); p5: Failed on n2 (dropped). */
#define POD_P2                                                                                     \
    "{\"metadata\":{\"name\":\"p2\",\"namespace\":\"ns\",\"resourceVersion\":\"12\"},"             \
    "\"spec\":{\"nodeName\":\"n1\",\"overhead\":{\"cpu\":\"100m\"},"                               \
    "\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"2\"}}}],"                         \
    "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"250m\",\"memory\":\"512Mi\"},"        \
    "\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]},\"status\":{\"phase\":\"Pending\"}}"

static char *pod_list(void)
{
    char *p1 = pod("p1", "11", "n1", "Running", "500m", "1.5Gi");
    char *p3 = pod("p3", "13", "n1", "Succeeded", "4", "4Gi");
    char *p4 = pod("p4", "14", NULL, "Pending", "4", "4Gi");
    char *p5 = pod("p5", "15", "n2", "Failed", "1", "1Gi");
    char *l = xasprintf("{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},"
                        "\"items\":[%s,%s,%s,%s,%s]}",
                        p1, POD_P2, p3, p4, p5);
    free(p1);
    free(p3);
    free(p4);
    free(p5);
    return l;
}

/* status.nodes for NODE_N1, NODE_N2 and pod_list(). n1: requests cpu
 * 500m + max(250m, 2) + 100m = 2600m, memory 1.5Gi + 512Mi = 2Gi; limits
 * only p2's: cpu 1 + overhead 100m, memory 1Gi. */
#define WANT_NODES                                                                                 \
    "[{\"name\":\"n1\",\"allocatableResources\":{\"cpu\":\"8\",\"memory\":\"32Gi\","               \
    "\"nvidia.com/gpu\":\"2\",\"pods\":\"110\"},"                                                  \
    "\"allocatedResourceRequests\":{\"cpu\":\"2600m\",\"memory\":\"2Gi\"},"                        \
    "\"allocatedResourceLimits\":{\"cpu\":\"1100m\",\"memory\":\"1Gi\"},"                          \
    "\"managedResourceRequests\":{},"                                                              \
    "\"taints\":[{\"key\":\"gpu\",\"value\":\"yes\",\"effect\":\"NoSchedule\"}],"                  \
    "\"labels\":{\"zone\":\"a\"},\"unschedulable\":false,\"ready\":true},"                         \
    "{\"name\":\"n2\",\"allocatableResources\":{\"cpu\":\"3500m\",\"memory\":\"16318440Ki\"},"     \
    "\"allocatedResourceRequests\":{},\"allocatedResourceLimits\":{},"                             \
    "\"managedResourceRequests\":{},\"taints\":[],"                                                \
    "\"labels\":{},\"unschedulable\":true,\"ready\":false}]"

/* ---- pure computation ------------------------------------------------------------ */

static void test_compute_nodes(void **state)
{
    (void)state;
    json_t *nodes = load("[" NODE_N2 "," NODE_N1 "]");
    char *pl = pod_list();
    json_t *list = load(pl);
    json_t *w = json_array();
    json_t *got = agent_compute_nodes(nodes, json_object_get(list, "items"), w);
    assert_json_eq(got, WANT_NODES);
    assert_int_equal(json_array_size(w), 0);
    json_decref(got);
    json_decref(list);
    json_decref(nodes);
    json_decref(w);
    free(pl);
}

static void test_compute_bad_data(void **state)
{
    (void)state;
    /* An unparseable and a negative allocatable value are left out; a pod
     * with a bad quantity counts as requesting nothing; a pod bound to an
     * unknown node is ignored; nothing crashes. */
    json_t *nodes = load("[{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"taints\":\"x\"},"
                         "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"1Qi\","
                         "\"x\":\"-1\"}}},"
                         "{\"metadata\":{\"name\":\"n2\"},\"status\":{\"allocatable\":[]}}]");
    json_t *pods = load("[{\"metadata\":{\"name\":\"bad\",\"namespace\":\"ns\"},\"spec\":{"
                        "\"nodeName\":\"n1\",\"containers\":[{\"resources\":{\"requests\":"
                        "{\"cpu\":\"lots\"}}}]}},"
                        "{\"metadata\":{\"name\":\"ok\",\"namespace\":\"ns\"},\"spec\":{"
                        "\"nodeName\":\"n1\",\"containers\":[{\"resources\":{\"requests\":"
                        "{\"cpu\":\"1\"}}}]}},"
                        "{\"metadata\":{\"name\":\"lost\",\"namespace\":\"ns\"},\"spec\":{"
                        "\"nodeName\":\"n9\",\"containers\":[{\"resources\":{\"requests\":"
                        "{\"cpu\":\"1\"}}}]}}]");
    json_t *w = json_array();
    json_t *got = agent_compute_nodes(nodes, pods, w);
    assert_json_eq(got, "[{\"name\":\"n1\",\"allocatableResources\":{\"cpu\":\"4\"},"
                        "\"allocatedResourceRequests\":{\"cpu\":\"1\"},"
                        "\"allocatedResourceLimits\":{},\"managedResourceRequests\":{},"
                        "\"taints\":[],\"labels\":{},"
                        "\"unschedulable\":false,\"ready\":false},"
                        "{\"name\":\"n2\",\"allocatableResources\":{},"
                        "\"allocatedResourceRequests\":{},\"allocatedResourceLimits\":{},"
                        "\"managedResourceRequests\":{},\"taints\":[],\"labels\":{},"
                        "\"unschedulable\":false,\"ready\":false}]");
    assert_int_equal(json_array_size(w), 4);
    char *all = json_dumps(w, 0);
    assert_non_null(strstr(all, "node n1: status.allocatable.memory"));
    assert_non_null(strstr(all, "node n1: status.allocatable.x: negative"));
    assert_non_null(strstr(all, "node n2: status.allocatable: not an object"));
    assert_non_null(strstr(all, "pod ns/bad: spec.containers[0].resources.requests.cpu"));
    free(all);
    json_decref(got);
    json_decref(nodes);
    json_decref(pods);
    json_decref(w);
}

/* A pod on n1 in `phase` requesting `cpu`, whose controller is `owner_kind`
 * `owner_uid` (no owner when NULL), with optional labels (JSON members). */
static char *owned_pod(const char *name, const char *owner_kind, const char *owner_uid,
                       const char *labels, const char *cpu, const char *phase)
{
    char *owner = owner_kind ? xasprintf(",\"ownerReferences\":[{\"apiVersion\":\"%s\","
                                         "\"kind\":\"%s\",\"name\":\"j\",\"uid\":\"%s\","
                                         "\"controller\":true}]",
                                         strcmp(owner_kind, "Job") ? "x.io/v1" : "batch/v1",
                                         owner_kind, owner_uid)
                             : xstrdup("");
    char *p = xasprintf("{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\","
                        "\"labels\":{%s}%s},\"spec\":{\"nodeName\":\"n1\",\"containers\":"
                        "[{\"resources\":{\"requests\":{\"cpu\":\"%s\"}}}]},"
                        "\"status\":{\"phase\":\"%s\"}}",
                        name, labels ? labels : "", owner, cpu, phase);
    free(owner);
    return p;
}

/* A bad pod whose namespace and name are both 253 bytes: the warning
 * names it in full (the key buffer held 300 bytes and cut it). */
static void test_bad_data_longest_key(void **state)
{
    (void)state;
    char ns[254], name[254];
    memset(ns, 'n', 253);
    memset(name, 'p', 253);
    ns[253] = name[253] = '\0';
    json_t *nodes = load("[{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{"
                         "\"cpu\":\"4\"}}}]");
    json_t *pods = json_pack("[{s:{s:s,s:s},s:{s:s,s:[{s:{s:{s:s}}}]}}]", "metadata", "name", name,
                             "namespace", ns, "spec", "nodeName", "n1", "containers", "resources",
                             "requests", "cpu", "lots");
    json_t *w = json_array();
    json_t *got = agent_compute_nodes(nodes, pods, w);
    assert_int_equal(json_array_size(w), 1);
    char *want = xasprintf("pod %s/%s: ", ns, name);
    assert_non_null(strstr(json_string_value(json_array_get(w, 0)), want));
    free(want);
    json_decref(got);
    json_decref(w);
    json_decref(nodes);
    json_decref(pods);
}

static void test_compute_managed(void **state)
{
    (void)state;
    /* managedResourceRequests: pods whose controller is a worker copy of a
     * hub Job (a Job labelled kubestellar.io/cluster) and JobSet/Kubeflow
     * pods; not local Jobs' pods, not pods without an owner, not a Job's
     * pod when the Job is only named by a non-controller reference. */
    json_t *nodes = load("[" NODE_N1 "]");
    char *p[7] = {
        owned_pod("hub", "Job", "uid-hub", NULL, "1", "Running"),
        owned_pod("hub2", "Job", "uid-hub", NULL, "250m", "Pending"),
        owned_pod("local", "Job", "uid-local", NULL, "2", "Running"),
        owned_pod("bare", NULL, NULL, NULL, "4", "Running"),
        owned_pod("js", "Job", "uid-js-child", "\"jobset.sigs.k8s.io/jobset-name\":\"js\"", "100m",
                  "Running"),
        owned_pod("pt", "PyTorchJob", "uid-pt", "\"training.kubeflow.org/job-name\":\"pt\"", "10m",
                  "Running"),
        owned_pod("done", "Job", "uid-hub", NULL, "8", "Failed"),
    };
    /* "done" is terminal: neither requested nor managed. */
    char *pl = xasprintf("[%s,%s,%s,%s,%s,%s,%s]", p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
    json_t *pods = load(pl);
    json_t *jobs = load("[{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"uid\":"
                        "\"uid-hub\",\"labels\":{\"kubestellar.io/cluster\":\"c1\"}}},"
                        "{\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\",\"uid\":"
                        "\"uid-local\"}}]");
    json_t *got = agent_compute_nodes_jobs(nodes, pods, jobs, NULL);
    json_t *n1 = json_array_get(got, 0);
    assert_json_eq(json_object_get(n1, "allocatedResourceRequests"), "{\"cpu\":\"7360m\"}");
    assert_json_eq(json_object_get(n1, "managedResourceRequests"), "{\"cpu\":\"1360m\"}");
    json_decref(got);
    /* Without the Jobs only the assumed kinds count. */
    got = agent_compute_nodes(nodes, pods, NULL);
    assert_json_eq(json_object_get(json_array_get(got, 0), "managedResourceRequests"),
                   "{\"cpu\":\"110m\"}");
    json_decref(got);
    json_decref(jobs);
    json_decref(pods);
    json_decref(nodes);
    free(pl);
    for (size_t i = 0; i < 7; i++)
        free(p[i]);
}

/* A pod of Job `job` (uid `uid`) in ns, unbound, with the given PodScheduled condition. */
static char *sched_pod(const char *name, const char *job, const char *uid, const char *cond)
{
    return xasprintf("{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"ownerReferences\":[{"
                     "\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"%s\",\"uid\":\"%s\","
                     "\"controller\":true}]},\"spec\":{\"containers\":[{\"name\":\"c\"}]},"
                     "\"status\":{\"phase\":\"Pending\",\"conditions\":[%s]}}",
                     name, job, uid, cond);
}

static void test_compute_unschedulable(void **state)
{
    (void)state;
    /* Per hub-work copy, its earliest unschedulable pod (PodScheduled=False,
     * Unschedulable, unbound, Pending), with the pod count; not a local
     * Job's pods, not a pod waiting for another reason (SchedulingGated). */
#define UNSCHED(t, m)                                                                              \
    "{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\","                \
    "\"message\":\"" m "\",\"lastTransitionTime\":\"" t "\"}"
    char *p[6] = {
        sched_pod("a-1", "a", "uid-a", UNSCHED("2026-11-24T10:00:05Z", "0/2 nodes: affinity")),
        sched_pod("a-2", "a", "uid-a", UNSCHED("2026-11-24T10:00:01Z", "0/2 nodes: cpu")),
        sched_pod("b-1", "b", "uid-b", UNSCHED("2026-11-24T10:00:00Z", "local job")),
        sched_pod("c-1", "c", "uid-c",
                  "{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":"
                  "\"SchedulingGated\",\"lastTransitionTime\":\"2026-11-24T10:00:00Z\"}"),
        sched_pod("c-2", "c", "uid-c", "{\"type\":\"PodScheduled\",\"status\":\"True\"}"),
        sched_pod("c-3", "c", "uid-c", "{\"type\":\"PodScheduled\",\"status\":false}"),
    };
#undef UNSCHED
    char *pl = xasprintf("[%s,%s,%s,%s,%s,%s]", p[0], p[1], p[2], p[3], p[4], p[5]);
    json_t *pods = load(pl);
    json_t *jobs = load("[{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"uid\":"
                        "\"uid-a\",\"labels\":{\"kubestellar.io/cluster\":\"c1\"}}},"
                        "{\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\",\"uid\":\"uid-b\"}},"
                        "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"uid\":"
                        "\"uid-c\",\"labels\":{\"kubestellar.io/cluster\":\"c1\"}}}]");
    json_t *got = agent_compute_unschedulable(pods, jobs);
    assert_json_eq(got, "[{\"namespace\":\"ns\",\"name\":\"a\",\"uid\":\"uid-a\",\"reason\":"
                        "\"Unschedulable\",\"message\":\"0/2 nodes: cpu\",\"since\":"
                        "\"2026-11-24T10:00:01Z\",\"cause\":\"unschedulable\",\"pods\":2}]");
    json_decref(got);
    /* a bound pod is being started, not unschedulable; with no failed start it is not a
     * "not-started" copy either (test_compute_no_progress) */
    json_t *bound = load("[{\"metadata\":{\"name\":\"x\",\"namespace\":\"ns\","
                         "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
                         "\"name\":\"a\",\"uid\":\"uid-a\",\"controller\":true}]},\"spec\":{"
                         "\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Pending\",\"conditions\":"
                         "[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":"
                         "\"Unschedulable\",\"lastTransitionTime\":\"2026-11-24T10:00:00Z\"}]}}]");
    got = agent_compute_unschedulable(bound, jobs);
    assert_int_equal(json_array_size(got), 0);
    json_decref(got);
    json_decref(bound);
    json_decref(jobs);
    json_decref(pods);
    free(pl);
    for (size_t i = 0; i < 6; i++)
        free(p[i]);
}

/* A pod of Job `job` (uid) in ns bound to n1 in `phase`, with the given
 * status members after phase (e.g. conditions, containerStatuses). */
static char *bound_pod(const char *name, const char *job, const char *uid, const char *phase,
                       const char *status)
{
    return xasprintf("{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"creationTimestamp\":"
                     "\"2026-11-24T09:59:00Z\",\"ownerReferences\":[{\"apiVersion\":\"batch/v1\","
                     "\"kind\":\"Job\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true}]},"
                     "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\"}]},"
                     "\"status\":{\"phase\":\"%s\"%s%s}}",
                     name, job, uid, phase, *status ? "," : "", status);
}

/* A hub-work copy `name` (uid-<name>) created at 09:58 with the given status. */
static char *copy_job(const char *name, const char *status)
{
    return xasprintf("{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":\"uid-%s\","
                     "\"creationTimestamp\":\"2026-11-24T09:58:00Z\",\"labels\":{"
                     "\"kubestellar.io/cluster\":\"c1\"}},\"spec\":{},\"status\":%s}",
                     name, name, status);
}

static void test_compute_no_progress(void **state)
{
    (void)state;
    /* Not started: bound, Pending, no pod of the copy ran, and a container (init first) waits
     * with a reason that says its start failed (ErrImagePull, CreateContainerConfigError...):
     * the earliest-scheduled such pod names the reason; since = PodScheduled=True's time. A
     * copy with a Running pod is slow, not stuck (b); a pod still starting (no status: c, h;
     * ContainerCreating: i; an init container running, the rest PodInitializing: n) is not
     * reported. No pods: a copy the Job controller started (startTime, the since) whose
     * status counts none and that has no pod (d), not one that is suspended (e), finished
     * (f), counts an active pod the store has not shown yet (g), or was not started yet: a
     * resumed copy before the Job controller's sync (k). */
#define SCHED(t)                                                                                   \
    "\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":\"" t   \
    "\"}]"
#define WAITING(k, r, m)                                                                           \
    "\"" k "\":[{\"name\":\"c\",\"state\":{\"waiting\":{\"reason\":\"" r "\",\"message\":\"" m     \
    "\"}}}]"
    char *p[10] = {
        bound_pod("a-1", "a", "uid-a", "Pending",
                  SCHED("2026-11-24T10:00:03Z") "," WAITING("containerStatuses", "ImagePullBackOff",
                                                            "Back-off pulling image x")),
        bound_pod("a-2", "a", "uid-a", "Pending",
                  SCHED("2026-11-24T10:00:01Z") "," WAITING(
                      "initContainerStatuses", "ErrImagePull",
                      "pull x: not found") "," WAITING("containerStatuses", "PodInitializing", "")),
        bound_pod(
            "b-1", "b", "uid-b", "Pending",
            SCHED("2026-11-24T10:00:00Z") "," WAITING("containerStatuses", "ErrImagePull", "m")),
        bound_pod("b-2", "b", "uid-b", "Running", SCHED("2026-11-24T10:00:00Z")),
        bound_pod("c-1", "c", "uid-c", "Pending", ""),
        bound_pod("g-1", "g", "uid-g", "Succeeded", ""),
        bound_pod("h-1", "h", "uid-h", "Pending", SCHED("2026-11-24T10:00:00Z")),
        bound_pod("i-1", "i", "uid-i", "Pending",
                  SCHED("2026-11-24T09:00:00Z") "," WAITING("containerStatuses",
                                                            "ContainerCreating", "")),
        bound_pod("m-1", "m", "uid-m", "Pending",
                  SCHED("2026-11-24T10:00:02Z") "," WAITING("containerStatuses",
                                                            "CreateContainerConfigError",
                                                            "secret \\\"s\\\" not found")),
        bound_pod("n-1", "n", "uid-n", "Pending",
                  SCHED("2026-11-24T09:00:00Z") ",\"initContainerStatuses\":[{\"name\":\"i\","
                                                "\"state\":{\"running\":{}}}]," WAITING(
                                                    "containerStatuses", "PodInitializing", "")),
    };
#undef SCHED
#undef WAITING
    char *pl = xasprintf("[%s,%s,%s,%s,%s,%s,%s,%s,%s,%s]", p[0], p[1], p[2], p[3], p[4], p[5],
                         p[6], p[7], p[8], p[9]);
    char *j[12] = {
        copy_job("a", "{\"active\":2}"),
        copy_job("b", "{\"active\":2,\"ready\":1}"),
        copy_job("c", "{}"),
        copy_job("d", "{\"startTime\":\"2026-11-24T09:58:01Z\",\"ready\":0,\"terminating\":0}"),
        copy_job("e", "{\"startTime\":\"2026-11-24T09:58:01Z\"}"),
        copy_job("f", "{\"startTime\":\"2026-11-24T09:58:01Z\",\"conditions\":[{\"type\":"
                      "\"Complete\",\"status\":\"True\"}]}"),
        copy_job("g", "{\"startTime\":\"2026-11-24T09:58:01Z\"}"),
        copy_job("h", "{\"active\":1}"),
        copy_job("i", "{\"active\":1}"),
        copy_job("m", "{\"active\":1}"),
        copy_job("n", "{\"active\":1}"),
        copy_job("k", "{}"),
    };
    /* e is suspended */
    char *esusp = xasprintf("%.*s\"suspend\":true%s", (int)(strstr(j[4], "\"spec\":{}") - j[4] + 8),
                            j[4], strstr(j[4], "\"spec\":{}") + 8);
    char *jl = xasprintf("[%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s]", j[0], j[1], j[2], j[3], esusp,
                         j[5], j[6], j[7], j[8], j[9], j[10], j[11]);
    json_t *pods = load(pl), *jobs = load(jl);
    json_t *got = agent_compute_unschedulable(pods, jobs);
    assert_json_eq(
        got, "[{\"namespace\":\"ns\",\"name\":\"a\",\"uid\":\"uid-a\",\"reason\":\"ErrImagePull\","
             "\"message\":\"pull x: not found\",\"since\":\"2026-11-24T10:00:01Z\",\"cause\":"
             "\"not-started\",\"pods\":2},"
             "{\"namespace\":\"ns\",\"name\":\"d\",\"uid\":\"uid-d\",\"reason\":\"NoPods\","
             "\"message\":\"the worker's Job controller created no pod for it (a ResourceQuota, "
             "LimitRange or admission webhook refusing them? see the Job's FailedCreate events on "
             "the worker)\",\"since\":\"2026-11-24T09:58:01Z\",\"cause\":\"no-pods\",\"pods\":0},"
             "{\"namespace\":\"ns\",\"name\":\"m\",\"uid\":\"uid-m\",\"reason\":"
             "\"CreateContainerConfigError\",\"message\":\"secret \\\"s\\\" not found\",\"since\":"
             "\"2026-11-24T10:00:02Z\",\"cause\":\"not-started\",\"pods\":1}]");
    json_decref(got);
    json_decref(pods);
    json_decref(jobs);
    free(pl);
    free(jl);
    free(esusp);
    for (size_t i = 0; i < 10; i++)
        free(p[i]);
    for (size_t i = 0; i < 12; i++)
        free(j[i]);
}

/* ---- against fakesrv ----------------------------------------------------------------- */

struct fx {
    struct ev_loop *loop;
    struct fakesrv *srv;
    struct kube_rest_config *cfg;
    struct kube_client *c;
    struct agent *a;
    ev_timer tick;
    bool (*pred)(struct fx *f);
    int changes;         /* on_change calls */
    bool jobs_scripted;  /* the Job list and watch are scripted */
    double jobs_grace_s; /* agent_opts.jobs_grace_s for fx_agent */
    size_t counted_max;  /* agent_opts.counted_max for fx_agent */
};

static void on_change(void *ud, struct agent *a)
{
    struct fx *f = ud;
    assert_ptr_equal(a, f->a);
    f->changes++;
}

static struct fx *fx_new(void)
{
    struct fx *f = xcalloc(1, sizeof *f);
    f->loop = ev_loop_new(EVFLAG_AUTO);
    f->srv = fakesrv_start(NULL);
    f->cfg = kube_rest_config_new();
    f->cfg->server = xstrdup(fakesrv_url(f->srv));
    struct err e;
    assert_int_equal(kube_client_new(f->loop, f->cfg, NULL, NULL, &f->c, &e), 0);
    return f;
}

/* The worker copies of hub Jobs: `items` (a JSON array's members), listed as
 * often as asked, watches held. fx_agent scripts none when no test did. */
static void script_jobs(struct fx *f, const char *items)
{
    char *body = xasprintf(
        "{\"kind\":\"JobList\",\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[%s]}", items);
    struct fakesrv_resp jl = {.method = "GET",
                              .path = "/apis/batch/v1/jobs",
                              .query_lacks = "watch=",
                              .body = body,
                              .times = -1};
    fakesrv_push(f->srv, &jl);
    struct fakesrv_resp jw = {.method = "GET",
                              .path = "/apis/batch/v1/jobs",
                              .query_contains = "watch=",
                              .end = FAKESRV_HOLD,
                              .times = -1};
    fakesrv_push(f->srv, &jw);
    f->jobs_scripted = true;
    free(body);
}

static void fx_agent(struct fx *f, double min_interval, double heartbeat, bool write)
{
    if (!f->jobs_scripted)
        script_jobs(f, "");
    struct agent_opts o = {
        .min_interval_s = min_interval,
        .heartbeat_s = heartbeat,
        .on_change = on_change,
        .on_change_ud = f,
        .informer_backoff_s = 0.05,
        .jobs_grace_s = f->jobs_grace_s,
        .counted_max = f->counted_max,
    };
    struct err e;
    err_clear(&e);
    int rc = agent_new(f->c, write ? f->c : NULL, "c1", &o, &f->a, &e);
    if (rc)
        fail_msg("agent_new: %s", e.msg);
    assert_int_equal(agent_start(f->a, &e), 0);
    assert_int_equal(agent_start(f->a, &e), -EALREADY);
}

static void fx_free(struct fx *f)
{
    agent_free(f->a);
    fakesrv_release(f->srv);
    kube_client_free(f->c);
    fakesrv_stop(f->srv);
    kube_rest_config_free(f->cfg);
    ev_loop_destroy(f->loop);
    free(f);
}

static void tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    struct fx *f = w->data;
    if (f->pred && f->pred(f))
        ev_break(loop, EVBREAK_ALL);
}

static void guard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/* Run the loop until pred(f) holds (checked every 10 ms) or `timeout_s`
 * passes; returns whether pred held. pred NULL: run for timeout_s. */
static bool fx_run(struct fx *f, bool (*pred)(struct fx *f), double timeout_s)
{
    ev_timer guard;
    ev_timer_init(&guard, guard_cb, scaled(timeout_s), 0);
    ev_timer_start(f->loop, &guard);
    f->pred = pred;
    ev_timer_init(&f->tick, tick_cb, 0.01, 0.01);
    f->tick.data = f;
    ev_timer_start(f->loop, &f->tick);
    ev_run(f->loop, 0);
    ev_timer_stop(f->loop, &f->tick);
    ev_timer_stop(f->loop, &guard);
    bool ok = !pred || pred(f);
    f->pred = NULL;
    return ok;
}

/* Recorded requests with this method and path. */
static size_t count_req(struct fx *f, const char *method, const char *path)
{
    size_t n = 0, total = fakesrv_nreq(f->srv);
    for (size_t i = 0; i < total; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->srv, i);
        if (!strcmp(r->method, method) && !strcmp(r->path, path))
            n++;
        fakesrv_req_free(r);
    }
    return n;
}

/* The k-th (0-based) recorded request with this method and path (caller frees). */
static struct fakesrv_req *nth_req(struct fx *f, const char *method, const char *path, size_t k)
{
    size_t total = fakesrv_nreq(f->srv);
    for (size_t i = 0; i < total; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->srv, i);
        if (!strcmp(r->method, method) && !strcmp(r->path, path) && k-- == 0)
            return r;
        fakesrv_req_free(r);
    }
    fail_msg("no request %s %s #%zu", method, path, k);
    return NULL;
}

static size_t want_patches;
static bool have_patches(struct fx *f)
{
    return count_req(f, "PATCH", STATUS_PATH) >= want_patches;
}

static void script_lists(struct fx *f, const char *nodes_json, const char *pods_json)
{
    fakesrv_push_json(f->srv, "GET", "/api/v1/nodes", "watch=", 200, nodes_json);
    fakesrv_push_json(f->srv, "GET", "/api/v1/pods", "watch=", 200, pods_json);
}

static void script_patch_ok(struct fx *f)
{
    struct fakesrv_resp r = {.method = "PATCH", .path = STATUS_PATH, .body = "{}", .times = -1};
    fakesrv_push(f->srv, &r);
}

/* The last status write carries the burst's final sums (200 x 10m/1Mi halves -> 1 / 100Mi),
 * and the agent has its answer (the server records a request before it answers: the
 * agent's write counts lag the server's log until then). */
static bool burst_final_written(struct fx *f)
{
    size_t n = count_req(f, "PATCH", STATUS_PATH);
    struct agent_stats st;
    agent_stats(f->a, &st);
    if (!n || st.writes + st.failures < n)
        return false;
    struct fakesrv_req *r = nth_req(f, "PATCH", STATUS_PATH, n - 1);
    json_t *body = json_loads(r->body, 0, NULL);
    fakesrv_req_free(r);
    json_t *want = json_pack("{s:s,s:s}", "cpu", "1", "memory", "100Mi");
    json_t *node = json_array_get(json_object_get(json_object_get(body, "status"), "nodes"), 0);
    bool done = json_equal(json_object_get(node, "allocatedResourceRequests"), want);
    json_decref(want);
    json_decref(body);
    return done;
}

/* The status of a recorded PATCH body (new reference), with checks that hold
 * for every full write. */
static json_t *patch_status(struct fx *f, size_t k)
{
    struct fakesrv_req *r = nth_req(f, "PATCH", STATUS_PATH, k);
    assert_string_equal(fakesrv_req_header(r, "content-type"), "application/merge-patch+json");
    json_t *body = load(r->body);
    fakesrv_req_free(r);
    json_t *st = json_incref(json_object_get(body, "status"));
    assert_non_null(st);
    assert_int_equal(json_object_size(body), 1); /* only status */
    json_decref(body);
    return st;
}

static void check_full_status(json_t *st, size_t n_nodes)
{
    assert_int_equal(json_integer_value(json_object_get(st, "nodeCount")), n_nodes);
    assert_int_equal(json_array_size(json_object_get(st, "nodes")), n_nodes);
    assert_true(json_is_array(json_object_get(st, "unschedulableJobs")));
    assert_true(json_is_array(json_object_get(st, "countedJobs")));
    struct timespec ts;
    assert_int_equal(
        clock_parse_rfc3339(json_string_value(json_object_get(st, "lastUpdated")), &ts), 0);
    json_t *c = json_array_get(json_object_get(st, "conditions"), 0);
    assert_string_equal(json_string_value(json_object_get(c, "type")), "Ready");
    assert_string_equal(json_string_value(json_object_get(c, "status")), "True");
    assert_string_equal(json_string_value(json_object_get(c, "reason")), "AgentReporting");
    assert_int_equal(
        clock_parse_rfc3339(json_string_value(json_object_get(c, "lastTransitionTime")), &ts), 0);
}

/* List `node_items` (a NodeList's items) and `pods` (a PodList), hold the
 * watches, accept patches, start a writing agent (0.2 s interval, no
 * heartbeat) and wait for its first write. */
static void start_to_first_write(struct fx *f, const char *node_items, const char *pods)
{
    char *nl = xasprintf(
        "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"10\"},\"items\":[%s]}",
        node_items);
    script_lists(f, nl, pods);
    free(nl);
    fakesrv_push_watch(f->srv, "/api/v1/nodes", NULL, FAKESRV_HOLD);
    fakesrv_push_watch(f->srv, "/api/v1/pods", NULL, FAKESRV_HOLD);
    script_patch_ok(f);
    fx_agent(f, 0.2, -1, true);
    want_patches = 1;
    assert_true(fx_run(f, have_patches, 5));
}

static void test_writes_exact_status_once(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    char *pl = pod_list();
    start_to_first_write(f, NODE_N2 "," NODE_N1, pl);
    assert_true(agent_synced(f->a));
    /* Nothing changes: no further write (well past the interval). */
    fx_run(f, NULL, 0.8);
    assert_int_equal(count_req(f, "PATCH", STATUS_PATH), 1);
    json_t *st = patch_status(f, 0);
    check_full_status(st, 2);
    assert_json_eq(json_object_get(st, "nodes"), WANT_NODES);
    json_decref(st);
    /* The in-process hook sees the same data. */
    json_t *m = agent_metrics(f->a);
    assert_non_null(m);
    assert_string_equal(json_string_value(json_object_get(json_object_get(m, "metadata"), "name")),
                        "c1");
    assert_json_eq(json_object_get(json_object_get(m, "status"), "nodes"), WANT_NODES);
    check_full_status(json_object_get(m, "status"), 2);
    json_decref(m);
    assert_int_equal(f->changes, 1);
    struct agent_stats s;
    agent_stats(f->a, &s);
    assert_int_equal(s.writes, 1);
    assert_int_equal(s.creates, 0);
    assert_int_equal(s.failures, 0);
    assert_int_equal(fakesrv_unmatched(f->srv), 0);
    free(pl);
    fx_free(f);
}

/* The Job informer: only worker copies of hub Jobs are listed (label
 * selector), and their pods' requests are written as managedResourceRequests. */
static void test_writes_managed_requests(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    char *hub = owned_pod("hub", "Job", "uid-hub", NULL, "1500m", "Running");
    char *local = owned_pod("local", "Job", "uid-local", NULL, "2", "Running");
    char *pl = xasprintf("{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},"
                         "\"items\":[%s,%s]}",
                         hub, local);
    script_jobs(f, "{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"uid\":\"uid-hub\","
                   "\"labels\":{\"kubestellar.io/cluster\":\"c1\"}}}");
    start_to_first_write(f, NODE_N1, pl);
    json_t *st = patch_status(f, 0);
    json_t *n1 = json_array_get(json_object_get(st, "nodes"), 0);
    assert_json_eq(json_object_get(n1, "allocatedResourceRequests"), "{\"cpu\":\"3500m\"}");
    assert_json_eq(json_object_get(n1, "managedResourceRequests"), "{\"cpu\":\"1500m\"}");
    json_decref(st);
    struct fakesrv_req *r = nth_req(f, "GET", "/apis/batch/v1/jobs", 0);
    assert_non_null(r);
    assert_non_null(strstr(r->query, "labelSelector=kubestellar.io%2Fcluster"));
    fakesrv_req_free(r);
    free(pl);
    free(hub);
    free(local);
    fx_free(f);
}

/* Canonical uids (only those are listed in countedJobs), in this order. */
#define UID_A "00000000-0000-4000-8000-00000000000a"
#define UID_B "00000000-0000-4000-8000-00000000000b"
#define UID_C "00000000-0000-4000-8000-00000000000c"

/* A worker copy of a hub Job with this uid (a JobList item). */
#define COPY_JOB(name, uid)                                                                        \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\",\"uid\":\"" uid "\","               \
    "\"labels\":{\"kubestellar.io/cluster\":\"c1\"}}}"

/* status.countedJobs, pure: per copy of a hub Job, how many of its pods the node sums
 * include, sorted by uid; not a copy's unbound or terminal pods, nor local Jobs', Kubeflow
 * or bare pods, nor a copy whose uid is not canonical; nothing without the Jobs. */
static void counted_pure(void)
{
    json_t *nodes = load("[" NODE_N1 "]");
    char *p[9] = {
        owned_pod("b1", "Job", UID_B, NULL, "1", "Running"),
        owned_pod("b2", "Job", UID_B, NULL, "1", "Pending"),
        owned_pod("b3", "Job", UID_B, NULL, "1", "Failed"),
        owned_pod("a1", "Job", UID_A, NULL, "1", "Running"),
        sched_pod("a2", "a", UID_A, ""),
        owned_pod("local", "Job", UID_C, NULL, "2", "Running"),
        owned_pod("pt", "PyTorchJob", "uid-pt", "\"training.kubeflow.org/job-name\":\"pt\"", "10m",
                  "Running"),
        owned_pod("bare", NULL, NULL, NULL, "4", "Running"),
        owned_pod("odd", "Job", "uid-odd", NULL, "1", "Running"),
    };
    char *pl = xasprintf("[%s,%s,%s,%s,%s,%s,%s,%s,%s]", p[0], p[1], p[2], p[3], p[4], p[5], p[6],
                         p[7], p[8]);
    json_t *pods = load(pl);
    json_t *jobs = load("[" COPY_JOB("b", UID_B) "," COPY_JOB("a", UID_A) "," COPY_JOB(
        "odd", "uid-odd") ",{\"metadata\":{\"name\":\"l\",\"namespace\":\"ns\",\"uid\":\"" UID_C
                          "\"}}]");
    json_t *got = agent_compute_counted(nodes, pods, jobs);
    assert_json_eq(got, "[{\"uid\":\"" UID_A "\",\"pods\":1},{\"uid\":\"" UID_B "\",\"pods\":2}]");
    json_decref(got);
    got = agent_compute_counted(nodes, pods, NULL);
    assert_json_eq(got, "[]");
    json_decref(got);
    json_decref(jobs);
    json_decref(pods);
    json_decref(nodes);
    free(pl);
    for (size_t i = 0; i < 9; i++)
        free(p[i]);
}

/* More copies than AGENT_COUNTED_MAX (1000): the first 1000 by uid. */
static void counted_capped(void)
{
    json_t *nodes = load("[" NODE_N1 "]"), *pods = json_array(), *jobs = json_array();
    for (int i = 1004; i >= 0; i--) {
        char uid[40], name[32];
        snprintf(uid, sizeof uid, "00000000-0000-4000-8000-%012d", i);
        snprintf(name, sizeof name, "p%d", i);
        char *pd = owned_pod(name, "Job", uid, NULL, "1m", "Running");
        json_array_append_new(pods, load(pd));
        free(pd);
        json_array_append_new(jobs, json_pack("{s:{s:s, s:s, s:s, s:{s:s}}}", "metadata", "name",
                                              name, "namespace", "ns", "uid", uid, "labels",
                                              "kubestellar.io/cluster", "c1"));
    }
    json_t *got = agent_compute_counted(nodes, pods, jobs);
    assert_int_equal(json_array_size(got), AGENT_COUNTED_MAX);
    assert_string_equal(json_string_value(json_object_get(json_array_get(got, 0), "uid")),
                        "00000000-0000-4000-8000-000000000000");
    assert_string_equal(json_string_value(json_object_get(json_array_get(got, 999), "uid")),
                        "00000000-0000-4000-8000-000000000999");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(got, 999), "pods")), 1);
    json_decref(got);
    json_decref(jobs);
    json_decref(pods);
    json_decref(nodes);
}

/* The copies whose bound pods a write's node sums include are listed in that write's
 * status.countedJobs with their count: the workload controller ends their reservations. */
static void test_counted_jobs(void **state)
{
    (void)state;
    counted_pure();
    counted_capped();
    struct fx *f = fx_new();
    char *hub = owned_pod("hub", "Job", UID_A, NULL, "1500m", "Running");
    char *hub2 = owned_pod("hub2", "Job", UID_A, NULL, "500m", "Pending");
    char *local = owned_pod("local", "Job", UID_C, NULL, "2", "Running");
    char *pl = xasprintf("{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},"
                         "\"items\":[%s,%s,%s]}",
                         hub, hub2, local);
    script_jobs(f, COPY_JOB("a", UID_A));
    start_to_first_write(f, NODE_N1, pl);
    json_t *st = patch_status(f, 0);
    check_full_status(st, 1);
    /* the counts at the agent's start are taken as the hub's (counted_seed) */
    assert_json_eq(json_object_get(st, "countedJobs"), "[]");
    json_decref(st);
    json_t *m = agent_metrics(f->a);
    assert_json_eq(json_object_get(json_object_get(m, "status"), "countedJobs"),
                   "[{\"uid\":\"" UID_A "\",\"pods\":2}]");
    json_decref(m);
    free(pl);
    free(hub);
    free(hub2);
    free(local);
    fx_free(f);
}

/* A watch event line of `type` for pod `p` (owned_pod's JSON) at resourceVersion `rv`. New
 * string. */
static char *pod_event(const char *type, const char *p, const char *rv)
{
    const char *at = strstr(p, "\"namespace\":\"ns\"");
    assert_non_null(at);
    char *pv = xasprintf("%.*s\"resourceVersion\":\"%s\",%s", (int)(at - p), p, rv, at);
    char *line = xasprintf("{\"type\":\"%s\",\"object\":%s}\n", type, pv);
    free(pv);
    return line;
}

/* A watch event line for a pod of copy `uid` on n1 (1 cpu) in `phase`. New string. */
static char *counted_event(const char *type, const char *name, const char *uid, const char *phase,
                           const char *rv)
{
    char *p = owned_pod(name, "Job", uid, NULL, "1", phase);
    char *line = pod_event(type, p, rv);
    free(p);
    return line;
}

/* countedJobs of the k-th status write. */
static void assert_counted_write(struct fx *f, size_t k, const char *want)
{
    json_t *st = patch_status(f, k);
    check_full_status(st, 1);
    assert_json_eq(json_object_get(st, "countedJobs"), want);
    json_decref(st);
}

/* The lists of the countedJobs tests: the copies `jobs` (JobList items), node n1 and the pods
 * `items` (PodList items), and a node watch that brings nothing. */
static void counted_lists(struct fx *f, const char *jobs, const char *items)
{
    char *pl = xasprintf("{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},"
                         "\"items\":[%s]}",
                         items);
    script_jobs(f, jobs);
    script_lists(f,
                 "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"10\"},"
                 "\"items\":[" NODE_N1 "]}",
                 pl);
    fakesrv_push_watch(f->srv, "/api/v1/nodes", NULL, FAKESRV_HOLD);
    free(pl);
}

/* A pod watch that brings `ch` (n chunks, their delays) and then stays open. */
static void push_pod_watch(struct fx *f, const struct fakesrv_chunk *ch, size_t n)
{
    struct fakesrv_resp pr = {.method = "GET",
                              .path = "/api/v1/pods",
                              .query_contains = "watch=",
                              .chunks = ch,
                              .n_chunks = n,
                              .end = FAKESRV_HOLD};
    fakesrv_push(f->srv, &pr);
}

/*
 * countedJobs is the change since what the hub has from this agent (2 entries a write here).
 * The counts at the start (A's first pod) are taken as the hub's: the first write lists none.
 * Then, in one batch, A's second pod and the first pods of B and C: the write lists A and B
 * and fails, its retry lists them again, and C, past the cap, follows at once. A's pod
 * starting (no count moves) writes nothing; B's pod failing (B no longer counted) writes the
 * new sums with no list, and B's new pod lists B again.
 */
static void test_counted_delta(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    char *a1 = owned_pod("a1", "Job", UID_A, NULL, "1", "Running");
    counted_lists(f, COPY_JOB("a", UID_A) "," COPY_JOB("b", UID_B) "," COPY_JOB("c", UID_C), a1);
    char *ev[6] = {
        counted_event("ADDED", "a2", UID_A, "Pending", "30"),
        counted_event("ADDED", "b1", UID_B, "Running", "31"),
        counted_event("ADDED", "c1", UID_C, "Running", "32"),
        counted_event("MODIFIED", "a2", UID_A, "Running", "33"),
        counted_event("MODIFIED", "b1", UID_B, "Failed", "34"),
        counted_event("ADDED", "b2", UID_B, "Running", "35"),
    };
    char *batch = xasprintf("%s%s%s", ev[0], ev[1], ev[2]); /* one chunk: one compute */
    /* one write per chunk after the first write, the failed one's retry (1 s) and the cap's
     * follow-up: the delays leave seconds of margin on a loaded machine (ASan, CI's jobs) */
    struct fakesrv_chunk pch[] = {
        {2.0, batch, 0}, {3.5, ev[3], 0}, {1.5, ev[4], 0}, {1.5, ev[5], 0}};
    push_pod_watch(f, pch, 4);
    fakesrv_push_json(f->srv, "PATCH", STATUS_PATH, NULL, 200, "{}");
    fakesrv_push_status(f->srv, "PATCH", STATUS_PATH, 422, "Invalid", "status: bad");
    script_patch_ok(f);
    f->counted_max = 2;
    fx_agent(f, 0.2, -1, true);
    want_patches = 6;
    assert_true(fx_run(f, have_patches, 25));
    fx_run(f, NULL, 0.5);
    assert_int_equal(count_req(f, "PATCH", STATUS_PATH), 6);
    const char *ab = "[{\"uid\":\"" UID_A "\",\"pods\":2},{\"uid\":\"" UID_B "\",\"pods\":1}]";
    assert_counted_write(f, 0, "[]");
    assert_counted_write(f, 1, ab);
    assert_counted_write(f, 2, ab);
    assert_counted_write(f, 3, "[{\"uid\":\"" UID_C "\",\"pods\":1}]");
    assert_counted_write(f, 4, "[]");
    assert_counted_write(f, 5, "[{\"uid\":\"" UID_B "\",\"pods\":1}]");
    /* agent_metrics: every counted copy (the first 2) */
    json_t *m = agent_metrics(f->a);
    assert_json_eq(json_object_get(json_object_get(m, "status"), "countedJobs"),
                   "[{\"uid\":\"" UID_A "\",\"pods\":2},{\"uid\":\"" UID_B "\",\"pods\":1}]");
    json_decref(m);
    struct agent_stats s;
    agent_stats(f->a, &s);
    assert_int_equal(s.failures, 1);
    for (size_t i = 0; i < 6; i++)
        free(ev[i]);
    free(batch);
    free(a1);
    fx_free(f);
}

/* A copy no longer counted while the node sums stay the same (its pod failed as another
 * job's pod of the same requests was bound): a full write with the list replaced, not a
 * heartbeat that would leave the copy listed on the hub. */
static void test_counted_gone_rewrites(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    char *a1 = owned_pod("a1", "Job", UID_A, NULL, "1", "Running");
    counted_lists(f, COPY_JOB("a", UID_A) "," COPY_JOB("b", UID_B), a1);
    char *ev[3] = {
        counted_event("ADDED", "b1", UID_B, "Running", "30"),
        counted_event("MODIFIED", "b1", UID_B, "Failed", "31"),
        NULL,
    };
    /* a JobSet's pod: hub work too (the same managed requests), not a copy's */
    char *x1 =
        owned_pod("x1", "Job", UID_C, "\"jobset.sigs.k8s.io/jobset-name\":\"js\"", "1", "Running");
    ev[2] = pod_event("ADDED", x1, "32");
    free(x1);
    char *swap = xasprintf("%s%s", ev[1], ev[2]); /* one chunk: one compute */
    struct fakesrv_chunk pch[] = {{1.5, ev[0], 0}, {1.5, swap, 0}};
    push_pod_watch(f, pch, 2);
    script_patch_ok(f);
    fx_agent(f, 0.2, -1, true);
    want_patches = 3;
    assert_true(fx_run(f, have_patches, 15));
    fx_run(f, NULL, 0.5);
    assert_int_equal(count_req(f, "PATCH", STATUS_PATH), 3);
    assert_counted_write(f, 0, "[]");
    assert_counted_write(f, 1, "[{\"uid\":\"" UID_B "\",\"pods\":1}]");
    assert_counted_write(f, 2, "[]");
    json_t *s1 = patch_status(f, 1), *s2 = patch_status(f, 2);
    assert_true(json_equal(json_object_get(s1, "nodes"), json_object_get(s2, "nodes")));
    json_decref(s1);
    json_decref(s2);
    for (size_t i = 0; i < 3; i++)
        free(ev[i]);
    free(swap);
    free(a1);
    fx_free(f);
}

/* A status made anew on the hub has none of the listed counts: after a status wiped by
 * someone else (rewritten at once) and after the object was created again (its first write
 * is the last written data, with no list), the next full write lists every counted copy. */
static void test_counted_after_repair(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    char *a1 = owned_pod("a1", "Job", UID_A, NULL, "1", "Running");
    counted_lists(f, COPY_JOB("a", UID_A), a1);
    fakesrv_push_watch(f->srv, "/api/v1/pods", NULL, FAKESRV_HOLD);
    fakesrv_push_json(f->srv, "PATCH", STATUS_PATH, NULL, 200, "{}");
    fakesrv_push_json(f->srv, "PATCH", STATUS_PATH, NULL, 200,
                      "{\"metadata\":{\"name\":\"c1\"},\"status\":{\"lastUpdated\":"
                      "\"2026-01-01T00:00:00Z\"}}");
    fakesrv_push_json(f->srv, "PATCH", STATUS_PATH, NULL, 200, "{}");
    fakesrv_push_status(f->srv, "PATCH", STATUS_PATH, 404, "NotFound", "not found");
    fakesrv_push_json(f->srv, "POST", CM_PATH, NULL, 201, "{\"metadata\":{\"name\":\"c1\"}}");
    script_patch_ok(f);
    fx_agent(f, 0.1, 0.3, true);
    want_patches = 6;
    assert_true(fx_run(f, have_patches, 8));
    /* full, heartbeat (answer: wiped), full, heartbeat (404), POST, full, full */
    const char *a = "[{\"uid\":\"" UID_A "\",\"pods\":1}]";
    assert_counted_write(f, 0, "[]"); /* the counts at the start: the hub's (counted_seed) */
    assert_counted_write(f, 2, a);
    assert_counted_write(f, 4, "[]");
    assert_counted_write(f, 5, a);
    for (size_t k = 1; k < 4; k += 2) {
        json_t *st = patch_status(f, k);
        assert_int_equal(json_object_size(st), 1);
        json_decref(st);
    }
    assert_int_equal(count_req(f, "POST", CM_PATH), 1);
    free(a1);
    fx_free(f);
}

/* The object deleted behind the agent's back while a write listing a change is out (404):
 * created again, that write is sent again, and the next one lists every counted copy (the
 * new object has only the change). */
static void test_counted_after_create(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    char *a1 = owned_pod("a1", "Job", UID_A, NULL, "1", "Running");
    char *b1 = owned_pod("b1", "Job", UID_B, NULL, "1", "Running");
    char *items = xasprintf("%s,%s", a1, b1);
    counted_lists(f, COPY_JOB("a", UID_A) "," COPY_JOB("b", UID_B), items);
    free(items);
    char *ev = counted_event("ADDED", "a2", UID_A, "Running", "30");
    struct fakesrv_chunk pch[] = {{1.5, ev, 0}}; /* after the first write's answer */
    push_pod_watch(f, pch, 1);
    fakesrv_push_json(f->srv, "PATCH", STATUS_PATH, NULL, 200, "{}");
    fakesrv_push_status(f->srv, "PATCH", STATUS_PATH, 404, "NotFound", "not found");
    fakesrv_push_json(f->srv, "POST", CM_PATH, NULL, 201, "{\"metadata\":{\"name\":\"c1\"}}");
    script_patch_ok(f);
    fx_agent(f, 0.1, -1, true);
    want_patches = 4;
    assert_true(fx_run(f, have_patches, 8));
    fx_run(f, NULL, 0.4);
    assert_int_equal(count_req(f, "PATCH", STATUS_PATH), 4);
    const char *a2 = "[{\"uid\":\"" UID_A "\",\"pods\":2}]";
    assert_counted_write(f, 0, "[]"); /* the counts at the start: the hub's */
    assert_counted_write(f, 1, a2);
    assert_counted_write(f, 2, a2);
    assert_counted_write(f, 3,
                         "[{\"uid\":\"" UID_A "\",\"pods\":2},{\"uid\":\"" UID_B "\",\"pods\":1}]");
    assert_int_equal(count_req(f, "POST", CM_PATH), 1);
    free(ev);
    free(a1);
    free(b1);
    fx_free(f);
}

/* The no-pods verdict through the agent's own Job informer (its narrow projection and the
 * idle index): a started copy without pods is reported, a suspended one is not. */
static void test_writes_no_pods(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    script_jobs(f, "{\"metadata\":{\"name\":\"idle\",\"namespace\":\"ns\",\"uid\":\"uid-idle\","
                   "\"labels\":{\"kubestellar.io/cluster\":\"c1\"}},\"spec\":{\"parallelism\":1},"
                   "\"status\":{\"startTime\":\"2026-11-24T09:58:01Z\"}},"
                   "{\"metadata\":{\"name\":\"held\",\"namespace\":\"ns\",\"uid\":\"uid-held\","
                   "\"labels\":{\"kubestellar.io/cluster\":\"c1\"}},\"spec\":{\"suspend\":true},"
                   "\"status\":{\"startTime\":\"2026-11-24T09:58:01Z\"}}");
    start_to_first_write(f, NODE_N1,
                         "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},"
                         "\"items\":[]}");
    json_t *st = patch_status(f, 0);
    json_t *u = json_object_get(st, "unschedulableJobs");
    assert_int_equal(json_array_size(u), 1);
    json_t *j = json_array_get(u, 0);
    assert_string_equal(json_string_value(json_object_get(j, "name")), "idle");
    assert_string_equal(json_string_value(json_object_get(j, "uid")), "uid-idle");
    assert_string_equal(json_string_value(json_object_get(j, "cause")), "no-pods");
    assert_string_equal(json_string_value(json_object_get(j, "since")), "2026-11-24T09:58:01Z");
    json_decref(st);
    fx_free(f);
}

/* Refuse the Job list `times` times (403; -1 = always). */
static void refuse_jobs(struct fx *f, int times)
{
    struct fakesrv_resp r = {.method = "GET",
                             .path = "/apis/batch/v1/jobs",
                             .status = 403,
                             .body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":403,"
                                     "\"reason\":\"Forbidden\",\"message\":\"jobs is forbidden\"}",
                             .times = times};
    fakesrv_push(f->srv, &r);
}

/* A Job list that is refused (an older RBAC role): after the grace the agent
 * writes without managedResourceRequests, so the controller falls back to
 * adding back whole reservations; nothing else is missing. */
static void test_jobs_refused(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    refuse_jobs(f, -1);
    f->jobs_scripted = true;
    f->jobs_grace_s = 0.3;
    char *pl = pod_list();
    double t0 = clock_mono_s();
    start_to_first_write(f, NODE_N2 "," NODE_N1, pl);
    assert_true(clock_mono_s() - t0 >= 0.3);
    json_t *st = patch_status(f, 0);
    json_t *want = load(WANT_NODES);
    for (size_t i = 0; i < json_array_size(want); i++)
        json_object_del(json_array_get(want, i), "managedResourceRequests");
    json_t *nodes = json_object_get(st, "nodes");
    if (!json_equal(nodes, want))
        fail_msg("nodes differ from WANT_NODES without managedResourceRequests");
    json_decref(want);
    json_decref(st);
    free(pl);
    fx_free(f);
}

/* A Job list that arrives after the first write: the field follows. */
static void test_jobs_late(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    refuse_jobs(f, 3);
    script_jobs(f, "");
    f->jobs_grace_s = 0.01;
    char *pl = pod_list();
    start_to_first_write(f, NODE_N2 "," NODE_N1, pl);
    /* Three refusals back off at least 0.05 + 0.1 + 0.2 s: the first write
     * (right after the nodes and pods) is without the field; the next has it. */
    json_t *st = patch_status(f, 0);
    assert_null(json_object_get(json_array_get(json_object_get(st, "nodes"), 0),
                                "managedResourceRequests"));
    json_decref(st);
    want_patches = 2;
    assert_true(fx_run(f, have_patches, 5));
    st = patch_status(f, 1);
    assert_json_eq(json_object_get(st, "nodes"), WANT_NODES);
    json_decref(st);
    free(pl);
    fx_free(f);
}

/* Watch events: a change that moves no number writes nothing; a pod turning
 * terminal is dropped from the sums. */
static void test_watch_changes(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    char *p1 = pod("p1", "11", "n1", "Pending", "500m", "1.5Gi");
    char *l = xasprintf("{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},"
                        "\"items\":[%s]}",
                        p1);
    script_lists(f,
                 "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"10\"},"
                 "\"items\":[" NODE_N1 "]}",
                 l);
    /* Node: a heartbeat (new resourceVersion and heartbeat time only). */
    char *hb_node = xstrdup(NODE_N1);
    char *at = strstr(hb_node, "\"resourceVersion\":\"1\"");
    assert_non_null(at);
    at[strlen("\"resourceVersion\":\"")] = '7';
    at = strstr(hb_node, "2026-01-01");
    memcpy(at, "2027", 4);
    char *nev = xasprintf("{\"type\":\"MODIFIED\",\"object\":%s}\n", hb_node);
    struct fakesrv_chunk nch[] = {{0.3, nev, 0}};
    struct fakesrv_resp nr = {.method = "GET",
                              .path = "/api/v1/nodes",
                              .query_contains = "watch=",
                              .chunks = nch,
                              .n_chunks = 1,
                              .end = FAKESRV_HOLD};
    fakesrv_push(f->srv, &nr);
    /* Pods: Pending -> Running (same numbers), then Succeeded. */
    char *p1r = pod("p1", "21", "n1", "Running", "500m", "1.5Gi");
    char *p1s = pod("p1", "22", "n1", "Succeeded", "500m", "1.5Gi");
    char *ev1 = xasprintf("{\"type\":\"MODIFIED\",\"object\":%s}\n", p1r);
    char *ev2 = xasprintf("{\"type\":\"MODIFIED\",\"object\":%s}\n", p1s);
    struct fakesrv_chunk pch[] = {{0.5, ev1, 0}, {0.5, ev2, 0}};
    struct fakesrv_resp pr = {.method = "GET",
                              .path = "/api/v1/pods",
                              .query_contains = "watch=",
                              .chunks = pch,
                              .n_chunks = 2,
                              .end = FAKESRV_HOLD};
    fakesrv_push(f->srv, &pr);
    script_patch_ok(f);
    fx_agent(f, 0.2, -1, true);

    want_patches = 2;
    assert_true(fx_run(f, have_patches, 5));
    /* Settle: the Running update and the node heartbeat wrote nothing. */
    fx_run(f, NULL, 0.5);
    assert_int_equal(count_req(f, "PATCH", STATUS_PATH), 2);
    json_t *s0 = patch_status(f, 0), *s1 = patch_status(f, 1);
    json_t *n0 = json_array_get(json_object_get(s0, "nodes"), 0);
    json_t *n1 = json_array_get(json_object_get(s1, "nodes"), 0);
    assert_json_eq(json_object_get(n0, "allocatedResourceRequests"),
                   "{\"cpu\":\"500m\",\"memory\":\"1536Mi\"}");
    assert_json_eq(json_object_get(n1, "allocatedResourceRequests"), "{}");
    check_full_status(s1, 1);
    json_decref(s0);
    json_decref(s1);
    assert_int_equal(f->changes, 2);
    assert_int_equal(fakesrv_unmatched(f->srv), 0);
    free(p1);
    free(l);
    free(hb_node);
    free(nev);
    free(p1r);
    free(p1s);
    free(ev1);
    free(ev2);
    fx_free(f);
}

/* Node events: a pod bound to a node not yet known counts once the node is
 * added; a deleted node leaves the list. */
static void test_node_events(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    char *p = pod("p", "11", "n2", "Running", "1", "1Gi");
    char *pl = xasprintf("{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},"
                         "\"items\":[%s]}",
                         p);
    script_lists(f,
                 "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"10\"},"
                 "\"items\":[" NODE_N1 "]}",
                 pl);
    struct fakesrv_chunk nch[] = {
        {0.4, "{\"type\":\"ADDED\",\"object\":" NODE_N2 "}\n", 0},
        {0.4, "{\"type\":\"DELETED\",\"object\":" NODE_N1 "}\n", 0},
    };
    struct fakesrv_resp nr = {.method = "GET",
                              .path = "/api/v1/nodes",
                              .query_contains = "watch=",
                              .chunks = nch,
                              .n_chunks = 2,
                              .end = FAKESRV_HOLD};
    fakesrv_push(f->srv, &nr);
    fakesrv_push_watch(f->srv, "/api/v1/pods", NULL, FAKESRV_HOLD);
    script_patch_ok(f);
    fx_agent(f, 0.1, -1, true);
    want_patches = 3;
    assert_true(fx_run(f, have_patches, 5));
    fx_run(f, NULL, 0.3);
    assert_int_equal(count_req(f, "PATCH", STATUS_PATH), 3);
    static const char *const want[] = {
        "[\"n1\"]",
        "[\"n1\",\"n2\"]",
        "[\"n2\"]",
    };
    for (size_t k = 0; k < 3; k++) {
        json_t *st = patch_status(f, k);
        json_t *names = json_array();
        json_t *nodes = json_object_get(st, "nodes");
        for (size_t i = 0; i < json_array_size(nodes); i++)
            json_array_append(names, json_object_get(json_array_get(nodes, i), "name"));
        assert_json_eq(names, want[k]);
        if (k > 0) {
            json_t *n2 = json_array_get(nodes, json_array_size(nodes) - 1);
            assert_json_eq(json_object_get(n2, "allocatedResourceRequests"),
                           "{\"cpu\":\"1\",\"memory\":\"1Gi\"}");
        }
        json_decref(names);
        json_decref(st);
    }
    free(p);
    free(pl);
    fx_free(f);
}

/* 200 pod changes in about a second, min-interval 0.2 s: the writes are
 * coalesced (never two closer than the interval, at most window/interval + 1
 * in all) and the last one has the exact final sums. */
static void test_burst_coalesced(void **state)
{
    (void)state;
    enum { N = 200 };
    const double mi = 0.2, step = 0.005;
    struct fx *f = fx_new();
    script_lists(f,
                 "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"10\"},"
                 "\"items\":[" NODE_N1 "]}",
                 "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},\"items\":[]}");
    fakesrv_push_watch(f->srv, "/api/v1/nodes", NULL, FAKESRV_HOLD);
    struct fakesrv_chunk *ch = xcalloc(N, sizeof *ch);
    char **lines = xcalloc(N, sizeof *lines);
    for (int i = 0; i < N; i++) {
        char name[16], rv[16];
        snprintf(name, sizeof name, "b%d", i / 2);
        snprintf(rv, sizeof rv, "%d", 100 + i);
        /* Even: ADDED Pending-bound; odd: MODIFIED to Running (no change in sums). */
        char *p = pod(name, rv, "n1", i % 2 ? "Running" : "Pending", "10m", "1Mi");
        lines[i] = xasprintf("{\"type\":\"%s\",\"object\":%s}\n", i % 2 ? "MODIFIED" : "ADDED", p);
        free(p);
        ch[i].delay_s = i == 0 ? 0.3 : step;
        ch[i].data = lines[i];
    }
    struct fakesrv_resp pr = {.method = "GET",
                              .path = "/api/v1/pods",
                              .query_contains = "watch=",
                              .chunks = ch,
                              .n_chunks = N,
                              .end = FAKESRV_HOLD};
    fakesrv_push(f->srv, &pr);
    script_patch_ok(f);
    double t0 = clock_mono_s();
    fx_agent(f, mi, -1, true);
    /* Run until the write with the final sums lands (not for a fixed time: a loaded
     * machine may deliver the stream late, which must not fail the test). */
    assert_true(fx_run(f, burst_final_written, 0.3 + N * step + 3 * mi + 10));
    double window = clock_mono_s() - t0;
    size_t n = count_req(f, "PATCH", STATUS_PATH);
    assert_true(n >= 2);
    assert_true((double)n <= window / mi + 1);
    /* Spaced by the interval where the agent starts them (the server's arrival
     * times add each request's own latency, which a loaded machine stretches). */
    struct agent_stats s;
    agent_stats(f->a, &s);
    if (s.min_write_gap_s < mi)
        fail_msg("two writes started only %.3f s apart", s.min_write_gap_s);
    json_t *last = patch_status(f, n - 1);
    json_t *node = json_array_get(json_object_get(last, "nodes"), 0);
    assert_json_eq(json_object_get(node, "allocatedResourceRequests"),
                   "{\"cpu\":\"1\",\"memory\":\"100Mi\"}");
    json_decref(last);
    assert_int_equal(s.writes, n);
    /* Far fewer recomputations than events: the Running updates are filtered. */
    assert_true(s.computes < N / 2);
    for (int i = 0; i < N; i++)
        free(lines[i]);
    free(lines);
    free(ch);
    fx_free(f);
}

/* ClusterMetrics absent: created, then the status patched. */
static void test_creates_when_absent(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    script_lists(f,
                 "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"10\"},"
                 "\"items\":[" NODE_N1 "]}",
                 "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},\"items\":[]}");
    fakesrv_push_watch(f->srv, "/api/v1/nodes", NULL, FAKESRV_HOLD);
    fakesrv_push_watch(f->srv, "/api/v1/pods", NULL, FAKESRV_HOLD);
    fakesrv_push_status(f->srv, "PATCH", STATUS_PATH, 404, "NotFound",
                        "clustermetrics.galaxy.kubestellar.io \"c1\" not found");
    fakesrv_push_json(f->srv, "POST", CM_PATH, NULL, 201,
                      "{\"metadata\":{\"name\":\"c1\",\"resourceVersion\":\"30\"}}");
    script_patch_ok(f);
    fx_agent(f, 0.2, -1, true);
    want_patches = 2;
    assert_true(fx_run(f, have_patches, 5));
    /* Order: PATCH (404), POST, PATCH. */
    size_t total = fakesrv_nreq(f->srv);
    const char *seq[3] = {0};
    size_t ns = 0;
    for (size_t i = 0; i < total && ns < 3; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->srv, i);
        if (!strcmp(r->method, "PATCH"))
            seq[ns++] = "PATCH";
        else if (!strcmp(r->method, "POST")) {
            seq[ns++] = "POST";
            json_t *obj = load(r->body);
            assert_string_equal(json_string_value(json_object_get(obj, "kind")), "ClusterMetrics");
            assert_string_equal(json_string_value(json_object_get(obj, "apiVersion")),
                                "galaxy.kubestellar.io/v1alpha1");
            assert_string_equal(
                json_string_value(json_object_get(json_object_get(obj, "metadata"), "name")), "c1");
            assert_null(json_object_get(obj, "status"));
            json_decref(obj);
        }
        fakesrv_req_free(r);
    }
    assert_int_equal(ns, 3);
    assert_string_equal(seq[0], "PATCH");
    assert_string_equal(seq[1], "POST");
    assert_string_equal(seq[2], "PATCH");
    json_t *a = patch_status(f, 0), *b = patch_status(f, 1);
    assert_true(json_equal(a, b)); /* the same patch, re-sent */
    check_full_status(b, 1);
    json_decref(a);
    json_decref(b);
    struct agent_stats s;
    agent_stats(f->a, &s);
    assert_int_equal(s.creates, 1);
    assert_int_equal(s.writes, 1);
    assert_int_equal(fakesrv_unmatched(f->srv), 0);
    fx_free(f);
}

/* A rejected write is retried (not sooner than the backoff); heartbeats then
 * refresh lastUpdated only. */
static void test_retry_and_heartbeat(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    script_lists(f,
                 "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"10\"},"
                 "\"items\":[" NODE_N1 "]}",
                 "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},\"items\":[]}");
    fakesrv_push_watch(f->srv, "/api/v1/nodes", NULL, FAKESRV_HOLD);
    fakesrv_push_watch(f->srv, "/api/v1/pods", NULL, FAKESRV_HOLD);
    fakesrv_push_status(f->srv, "PATCH", STATUS_PATH, 422, "Invalid", "status.nodes: bad");
    script_patch_ok(f);
    fx_agent(f, 0.1, 0.3, true);
    want_patches = 4; /* rejected, retried, 2 heartbeats */
    assert_true(fx_run(f, have_patches, 6));
    struct fakesrv_req *r0 = nth_req(f, "PATCH", STATUS_PATH, 0);
    struct fakesrv_req *r1 = nth_req(f, "PATCH", STATUS_PATH, 1);
    assert_true(r1->t - r0->t >= 0.9); /* the 1 s initial retry backoff */
    fakesrv_req_free(r0);
    fakesrv_req_free(r1);
    /* The retry carries the same data (with a new lastUpdated). */
    json_t *s0 = patch_status(f, 0), *s1 = patch_status(f, 1);
    assert_true(json_equal(json_object_get(s0, "nodes"), json_object_get(s1, "nodes")));
    check_full_status(s1, 1);
    json_decref(s0);
    json_decref(s1);
    for (size_t k = 2; k < 4; k++) {
        json_t *st = patch_status(f, k);
        assert_int_equal(json_object_size(st), 1);
        assert_non_null(json_string_value(json_object_get(st, "lastUpdated")));
        json_decref(st);
    }
    struct agent_stats s;
    agent_stats(f->a, &s);
    assert_int_equal(s.failures, 1);
    assert_true(s.heartbeats >= 2);
    fx_free(f);
}

/* Heartbeats repair the object: a status wiped by someone else (the PATCH
 * response shows no nodes) and an object deleted behind the agent's back
 * (404: created again) both get the full status again. */
static void test_heartbeat_repairs(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    script_lists(f,
                 "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"10\"},"
                 "\"items\":[" NODE_N1 "]}",
                 "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},\"items\":[]}");
    fakesrv_push_watch(f->srv, "/api/v1/nodes", NULL, FAKESRV_HOLD);
    fakesrv_push_watch(f->srv, "/api/v1/pods", NULL, FAKESRV_HOLD);
    fakesrv_push_json(f->srv, "PATCH", STATUS_PATH, NULL, 200, "{}");
    fakesrv_push_json(f->srv, "PATCH", STATUS_PATH, NULL, 200,
                      "{\"metadata\":{\"name\":\"c1\"},\"status\":{\"lastUpdated\":"
                      "\"2026-01-01T00:00:00Z\"}}");
    fakesrv_push_json(f->srv, "PATCH", STATUS_PATH, NULL, 200, "{}");
    fakesrv_push_status(f->srv, "PATCH", STATUS_PATH, 404, "NotFound", "not found");
    fakesrv_push_json(f->srv, "POST", CM_PATH, NULL, 201, "{\"metadata\":{\"name\":\"c1\"}}");
    script_patch_ok(f);
    fx_agent(f, 0.1, 0.3, true);
    want_patches = 6;
    assert_true(fx_run(f, have_patches, 8));
    /* full, heartbeat (answer: wiped), full, heartbeat (404), POST, full, ... */
    static const bool full[] = {true, false, true, false, true};
    for (size_t k = 0; k < 5; k++) {
        json_t *st = patch_status(f, k);
        if (full[k]) {
            check_full_status(st, 1);
            assert_string_equal(json_string_value(json_object_get(
                                    json_array_get(json_object_get(st, "nodes"), 0), "name")),
                                "n1");
        } else {
            assert_int_equal(json_object_size(st), 1);
            assert_non_null(json_object_get(st, "lastUpdated"));
        }
        json_decref(st);
    }
    assert_int_equal(count_req(f, "POST", CM_PATH), 1);
    struct agent_stats s;
    agent_stats(f->a, &s);
    assert_int_equal(s.creates, 1);
    assert_int_equal(s.failures, 0);
    assert_int_equal(fakesrv_unmatched(f->srv), 0);
    fx_free(f);
}

/* No CRD on the target: the failure says what to install, and is retried. */
static void test_no_crd(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    script_jobs(f, "");
    script_lists(f,
                 "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"10\"},\"items\":[]}",
                 "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},\"items\":[]}");
    fakesrv_push_watch(f->srv, "/api/v1/nodes", NULL, FAKESRV_HOLD);
    fakesrv_push_watch(f->srv, "/api/v1/pods", NULL, FAKESRV_HOLD);
    struct fakesrv_resp nf = {.method = "PATCH",
                              .path = STATUS_PATH,
                              .status = 404,
                              .body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":404,"
                                      "\"reason\":\"NotFound\",\"message\":\"the server could not "
                                      "find the requested resource\"}",
                              .times = -1};
    fakesrv_push(f->srv, &nf);
    struct fakesrv_resp pf = nf;
    pf.method = "POST";
    pf.path = CM_PATH;
    fakesrv_push(f->srv, &pf);
    char logbuf[8192] = {0};
    FILE *lf = fmemopen(logbuf, sizeof logbuf - 1, "w");
    assert_non_null(lf);
    setvbuf(lf, NULL, _IONBF, 0);
    struct logger lg;
    log_init(&lg, lf, 0, LOG_FMT_TEXT);
    struct agent_opts o = {.min_interval_s = 0.1, .heartbeat_s = -1, .lg = &lg};
    struct err e;
    assert_int_equal(agent_new(f->c, f->c, "c1", &o, &f->a, &e), 0);
    assert_int_equal(agent_start(f->a, &e), 0);
    want_patches = 2; /* the first attempt and the retry after 1 s */
    assert_true(fx_run(f, have_patches, 5));
    struct agent_stats s;
    agent_stats(f->a, &s);
    assert_true(s.failures >= 1);
    assert_int_equal(s.writes, 0);
    assert_int_equal(s.creates, 0);
    agent_free(f->a);
    f->a = NULL;
    fclose(lf);
    assert_non_null(strstr(logbuf, "cannot write ClusterMetrics"));
    assert_non_null(strstr(logbuf, "is the ClusterMetrics CRD from config/crd installed?"));
    fx_free(f);
}

/* Without a hub client: computes and reports through the hook, writes nothing. */
static void test_compute_only(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    script_lists(f,
                 "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"10\"},"
                 "\"items\":[]}",
                 "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"20\"},\"items\":[]}");
    fakesrv_push_watch(f->srv, "/api/v1/nodes", NULL, FAKESRV_HOLD);
    fakesrv_push_watch(f->srv, "/api/v1/pods", NULL, FAKESRV_HOLD);
    fx_agent(f, 0.1, 0.2, false);
    assert_null(agent_metrics(f->a)); /* not synced yet */
    fx_run(f, NULL, 0.8);
    assert_int_equal(f->changes, 1);
    json_t *m = agent_metrics(f->a);
    assert_non_null(m);
    check_full_status(json_object_get(m, "status"), 0);
    json_decref(m);
    assert_int_equal(count_req(f, "PATCH", STATUS_PATH), 0);
    assert_int_equal(count_req(f, "POST", CM_PATH), 0);
    assert_string_equal(agent_cluster(f->a), "c1");
    fx_free(f);
}

static void test_new_errors(void **state)
{
    (void)state;
    struct fx *f = fx_new();
    struct agent *a = NULL;
    struct err e;
    assert_int_equal(agent_new(f->c, f->c, "", NULL, &a, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "--cluster-name"));
    assert_null(a);
    /* A hub client on another loop. */
    struct ev_loop *other = ev_loop_new(EVFLAG_AUTO);
    struct kube_client *c2 = NULL;
    assert_int_equal(kube_client_new(other, f->cfg, NULL, NULL, &c2, &e), 0);
    assert_int_equal(agent_new(f->c, c2, "c1", NULL, &a, &e), -EINVAL);
    assert_null(a);
    kube_client_free(c2);
    ev_loop_destroy(other);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compute_nodes),
        cmocka_unit_test(test_compute_bad_data),
        cmocka_unit_test(test_bad_data_longest_key),
        cmocka_unit_test(test_compute_managed),
        cmocka_unit_test(test_compute_unschedulable),
        cmocka_unit_test(test_compute_no_progress),
        cmocka_unit_test(test_writes_exact_status_once),
        cmocka_unit_test(test_writes_managed_requests),
        cmocka_unit_test(test_counted_jobs),
        cmocka_unit_test(test_counted_delta),
        cmocka_unit_test(test_counted_gone_rewrites),
        cmocka_unit_test(test_counted_after_repair),
        cmocka_unit_test(test_counted_after_create),
        cmocka_unit_test(test_writes_no_pods),
        cmocka_unit_test(test_jobs_refused),
        cmocka_unit_test(test_jobs_late),
        cmocka_unit_test(test_watch_changes),
        cmocka_unit_test(test_node_events),
        cmocka_unit_test(test_burst_coalesced),
        cmocka_unit_test(test_creates_when_absent),
        cmocka_unit_test(test_retry_and_heartbeat),
        cmocka_unit_test(test_heartbeat_repairs),
        cmocka_unit_test(test_no_crd),
        cmocka_unit_test(test_compute_only),
        cmocka_unit_test(test_new_errors),
    };
    return cmocka_run_group_tests_name("agent", tests, NULL, NULL);
}
