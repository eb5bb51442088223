/*
 * bench-dispatch: end-to-end dispatch rate of `kueue-ks run` (direct
 * transport) on devhub instances started as child processes on ephemeral
 * loopback ports: a hub emulating Kueue (--kueue) and two workers with nodes
 * big enough for every job (no --run-jobs).
 *
 * N labelled Jobs (default 1000) are created on the hub as fast as the hub
 * takes them (16 requests in flight); the ClusterQueue's quota fits all of
 * them, so Kueue (the emulator) reserves every one at once. Watches (no polling) on the hub's
 * Workloads and on both workers' Jobs time, per workload, the moment its
 * QuotaReserved condition turned True (watch event) and the moment its copy
 * appeared on a worker (watch ADDED). Then the same Job objects are created
 * N times straight into a worker devhub with the REST client (16 requests in
 * flight, as on the hub) for the devhub's raw create rate in this run.
 *
 * --reserved-first: the operator is started (readiness: ClusterMetrics x2, the
 * AdmissionCheck Active), stopped, the N jobs are created and all N reserved
 * with no operator running, then the operator is started again and timed
 * alone: seconds runs from its first write seen (a hub job labelled) to the
 * last copy, start_to_first_s from its start to that first write, latencies
 * from each job's label to its copy.
 * --real STACK_DIR (implies --reserved-first): instead of devhubs, a real
 * stack started with `REAL_DIR=STACK_DIR REAL_NO_OPERATOR=1
 * scripts/realstack/stack.sh up` (kubeconfigs STACK_DIR/<cluster>.kubeconfig,
 * examples/setup applied, real Kueue reserving). The bench adds one kwok node
 * per worker with room for N pods (<cluster>-bench-node, kept), and the hub
 * jobs' pods run 600 s on the workers. After the dispatch the operator is
 * stopped and three raw rates are measured, WINDOW in flight: the copy
 * created suspended in cluster1, a condition applied (SSA, as the operator
 * writes) to each Workload's status, a label merge-patched onto each hub job.
 * --op-arg ARG (repeatable) passes ARG to `kueue-ks run`.
 * --pace R: the hub jobs are created R per second instead of 16 in flight, so that each
 * reservation comes alone and the latency is the dispatch's own, not a burst's queue (with
 * --real it times the operator running while real Kueue reserves: no --reserved-first).
 *
 * The ideal (issue 12 goal 1, "p99 from reservation to worker copy <= 2x the ideal"): after the
 * raw phase, with the operator stopped, the bench makes the writes on a dispatch's critical
 * path itself, IDEAL_CHAINS times one after the other on dispatched workloads: the Workload's
 * status (a condition: applied on a real server, merge-patched with every condition on the
 * devhub, as the operator writes) and a label on the hub job through its status, both at once,
 * then the copy created in cluster1. ideal_ms is the median chain; p99_ideal_ratio =
 * p99_ms / ideal_ms (meaningful with --pace; a burst's p99 is its queue).
 *
 * Status return (stret.h; not under --callgrind): on the real stack kwok starts each copy's
 * pod at once and ends it --job-seconds S after (default 30 + N/20, so after the last copy
 * is made); on the devhub (no pods) the bench writes each copy's status as the worker's Job
 * controller would: active 1 / ready 1 when the copy appears, and after the dispatch
 * succeeded 1 with Complete, the copies in the order and at the pace they appeared. Every
 * change of a copy's counts is timed to the hub job's kueue-ks.io/remote-status showing it,
 * every completion to the hub job's status showing it; the bench waits for all N final
 * statuses before the raw phase: while copies are unfinished on the workers (S + 240 s at most
 * on the real stack), then 30 s at most after the last one finished (status_wait).
 *
 * Prints one JSON line
 *   {"bench":"dispatch","mode":"devhub"|"real","reserved_first":..,"n":..,
 *    "placed":..,"duplicates":..,"cluster1":..,
 *    "cluster2":..,"seconds":..,"dispatch_per_s":..,"p50_ms":..,"p99_ms":..,
 *    "max_ms":..,"raw_seconds":..,"raw_creates_per_s":..,"raw_wl_status_per_s":..,
 *    "raw_job_patch_per_s":..,"raw_job_meta_status_per_s":..,"baseline_per_s":..,"ratio":..,
 *    "start_to_first_s":..,
 *    "reserve_seconds":..,"label_p50_ms":..,"label_p99_ms":..,"operator_qps":..,
 *    "job_seconds":..,"status_changes":..,"status_returned":..,"status_p50_ms":..,
 *    "status_p99_ms":..,"status_max_ms":..,"progress_p50_ms":..,"progress_p99_ms":..,
 *    "finished":..,"final_returned":..,"final_p50_ms":..,"final_p99_ms":..,
 *    "pace_per_s":..,"created_per_s":..,"ideal_ms":..,"p99_ideal_ratio":..}
 * (baseline_per_s: the goal's baseline of the same run, on the devhub half the
 * raw create rate (a dispatch is 2 writes), on a real stack the slowest of
 * the three raw rates; ratio = dispatch_per_s / baseline_per_s;
 * reserve_seconds: from the first hub job sent to the last QuotaReserved
 * seen, i.e. how fast the hub takes the jobs and the Kueue emulator reserves;
 * label_p50_ms / label_p99_ms: from a workload's reservation to the operator's
 * kubestellar.io/cluster label on its hub job, the first half of the dispatch
 * (null with --reserved-first, where that label write is the start of the timing);
 * operator_qps: --qps, null when the operator runs with its default;
 * status_*: copy count changes seen on the workers, how many the hub's annotation showed,
 * and the latency of those and of the completions together; progress_*: the count changes
 * alone; finished / final_returned / final_*: completions seen on the workers, shown by the
 * hub job's status, and their latency; pace_per_s: --pace, null without; created_per_s: the
 * rate the paced hub jobs were sent at (a busy loop falls behind the pace); ideal_ms,
 * p99_ideal_ratio: see above, null under --callgrind or when every chain failed),
 * a line with the CPU seconds each child used (where the time went), and
 * one human line. Options: --n N (default 1000), --timeout SECONDS
 * (default 60 + N/2), --v V (the operator's log verbosity, default 0), --keep
 * (keep the work directory with the children's logs), --callgrind (run the
 * operator under valgrind --tool=callgrind, keep the work directory and print
 * one more line {"bench":"dispatch-callgrind",..}: the repeatable CPU figure,
 * see report_callgrind); with --real one more line
 * {"bench":"dispatch-real-cost",..}: where the CPU and the hub's writes go, per component of
 * the stack (STACK_DIR/<component>.pid) and the operator, per dispatch (the operator's start
 * to the last copy) against per raw Workload status write of the same run, the machine's busy
 * share in both windows, the hub's processes alone (hub_cpu_ratio: its CPU per raw write
 * over per dispatch, the ratio a hub on its own machine would see), and over the jobs' whole
 * life (to the last final status)
 * cpu_ms_per_job / hub_writes_per_job (see report_real_cost). Exit 0 when all N were
 * placed, 1 otherwise (the work directory with the children's logs is then
 * kept and named on stderr).
 * Children get SIGTERM on exit (and SIGKILL if the bench dies: PDEATHSIG).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "bench/opcmd.h"
#include "bench/realstack.h"
#include "pkg/kube/client.h"
#include "pkg/kube/kubeconfig.h"
#include "pkg/kube/watch.h"
#include "pkg/util/clock.h"
#include "pkg/util/err.h"
#include "pkg/util/mtune.h"
#include "pkg/util/xalloc.h"
#include "pkg/json/jsonx.h"
#include "pkg/quantity/quantity.h"

#include "bench/dispatch/stackcpu.h"
#include "bench/dispatch/stret.h"

#define NCLUSTERS 3 /* hub, cluster1, cluster2 */
#define KUEUE_GV  "kueue.x-k8s.io", "v1beta2"

static const char *const cluster_names[NCLUSTERS] = {"hub", "cluster1", "cluster2"};

struct bench {
    int n;
    double timeout_s;
    bool keep;           /* --keep: keep the work directory (children's logs) */
    char v[16];          /* --v: the operator's log verbosity */
    long qps;            /* --qps: the operator's client QPS (burst 2x); 0 = its default */
    bool callgrind;      /* --callgrind: run the operator under valgrind's callgrind */
    int limit;           /* hub jobs are created up to this index (the callgrind baseline batch) */
    int n_base;          /* --callgrind: the first n_base jobs are the baseline batch */
    const char *real;    /* --real DIR: a running real stack (REAL_NO_OPERATOR=1), else devhubs */
    bool reserved_first; /* --reserved-first (with --real unless --pace): see the header */
    int pace;            /* --pace R: hub jobs created R per second, 0 = as fast as the hub
                            takes them */
    double pace_t0, pace_t1; /* --pace: when the first and the last hub job were sent */
    double ideal_ms;         /* the median of the ideal chains (ideal_phase), 0 = not measured */
    int n_ideal;             /* how many chains it is the median of */
    const char *op_args[16]; /* --op-arg: extra operator arguments */
    int n_op_args;
    char root[PATH_MAX];
    char work[64];
    pid_t pids[NCLUSTERS + 1];
    int npids;
    pid_t op_pid;       /* the operator (0 = not running) */
    double op_cpu_s;    /* CPU seconds of operator instances stopped before the timed one */
    double op_start;    /* --reserved-first: when the timed operator was started */
    double op_cpu0;     /* operator CPU seconds when the first job was created */
    double op_cpu_win;  /* operator CPU seconds from the first job created to the last placed */
    double raw_cpu_s;   /* CPU seconds of cluster1's devhub during the raw create phase */
    char **wl_names;    /* the Workload of hub job i (from the watch) */
    int reserved;       /* workloads seen QuotaReserved */
    bool wait_reserved; /* --reserved-first: the loop breaks when all N are reserved */
    int raw_kind;       /* enum raw_kind: what the raw phase writes */
    struct ev_loop *loop;
    struct kube_client *cl[NCLUSTERS];
    struct kube_rest_config *cfg[NCLUSTERS];
    /* measurement */
    double *reserved_t, *placed_t;
    double created_at; /* when the first hub job was sent */
    int *where;
    int placed, duplicates, per_cluster[NCLUSTERS];
    json_t *sample; /* the first worker copy (for the raw phase) */
    bool timed_out, failed, in_raw;
    struct kube_watch *w[NCLUSTERS + 1]; /* per cluster's Workloads/Jobs, + the hub's Jobs */
    /* what each watch is, to start it again where it ended when the server closes it (a
     * busy kube-apiserver closes a watch whose reader falls behind) */
    struct wslot {
        struct bench *b;
        int c, slot, restarts;
        char *path;
        kube_watch_event_cb cb;
    } ws[NCLUSTERS + 1];
    double *labelled_t; /* when the hub job got its cluster label (the operator placed it) */
    /* a synchronous call */
    bool done;
    int rc;
    json_t *body;
    char *raw_text; /* hub_writes: the /metrics text */
    char errmsg[512];
    double wl_patches, job_patches; /* --real: hub PATCHes during the timed dispatch */
    /* --real: where the CPU and the hub's writes go, over the timed dispatch (d) and over the
     * raw Workload status phase (r) */
    struct stackcpu sc;
    struct stackcpu_snap cpu_d0, cpu_d1, cpu_r0, cpu_r1, cpu_l1;
    /* --real: around the raw job patches, through the job and through its status */
    double raw_jp_ms, raw_js_ms; /* the hub's CPU over them (two phases of each) */
    int raw_round;               /* raw job phases so far: each writes another label value */
    double op_d1, op_l1;         /* the timed operator's CPU seconds at d1, l1 (its whole life) */
    json_t *writes_d0;           /* hub_writes() when the timed operator started */
    json_t *writes_d, *writes_r, *writes_l; /* hub_writes() differences; l: start to the
                                             * last final status seen (the jobs' whole life) */
    /* creates (hub jobs, then the raw phase) */
    char *jobs_path;
    int next, in_flight, create_failed;
    /* status return (stret.h); off under --callgrind */
    struct stret *st;
    int job_s;       /* --job-seconds: how long each job's pods run (real stack: kwok) */
    int *order;      /* devhub: job indices in the order their copies appeared */
    int n_order;     /* how many copies appeared (order[]) */
    int fin_next;    /* devhub: the next copy of order[] to finish */
    double fin_base; /* devhub: when finishing started (the dispatch's end) */
    int st_failed;   /* devhub: status writes that failed */
};

static void die_msg(const char *what, const char *detail)
{
    fprintf(stderr, "bench-dispatch: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
}

/* ---- child processes -------------------------------------------------- */

/* In a forked child: stdout and stderr to `out` (appended), then exec argv. */
static void child_exec(const char *out, char *const argv[])
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    execv(argv[0], argv);
    _exit(127);
}

static int spawn(struct bench *b, const char *log, char *const argv[])
{
    char *logpath = xasprintf("%s/%s", b->work, log);
    pid_t pid = fork();
    if (pid < 0) {
        free(logpath);
        return -errno;
    }
    if (pid == 0)
        child_exec(logpath, argv);
    free(logpath);
    b->pids[b->npids++] = pid;
    return 0;
}

static void stop_operator(struct bench *b);

static void stop_children(struct bench *b)
{
    stop_operator(b);
    for (int i = 0; i < b->npids; i++)
        kill(b->pids[i], SIGTERM);
    double deadline = clock_mono_s() + (b->callgrind ? 60 : 5); /* callgrind writes its profile */
    for (int i = 0; i < b->npids; i++) {
        while (waitpid(b->pids[i], NULL, WNOHANG) == 0) {
            if (clock_mono_s() > deadline) {
                kill(b->pids[i], SIGKILL);
                waitpid(b->pids[i], NULL, 0);
                break;
            }
            usleep(10000);
        }
    }
    b->npids = 0;
}

/* SIGTERM the operator and wait for it (SIGKILL after 10 s, 60 s under callgrind); its CPU
 * seconds are added to op_cpu_s. */
static void stop_operator(struct bench *b)
{
    if (!b->op_pid)
        return;
    double cpu = stackcpu_pid_s(b->op_pid);
    kill(b->op_pid, SIGTERM);
    double deadline = clock_mono_s() + (b->callgrind ? 60 : 10);
    while (waitpid(b->op_pid, NULL, WNOHANG) == 0) {
        if (clock_mono_s() > deadline) {
            kill(b->op_pid, SIGKILL);
            waitpid(b->op_pid, NULL, 0);
            break;
        }
        usleep(10000);
    }
    if (cpu > 0)
        b->op_cpu_s += cpu;
    b->op_pid = 0;
}

/* The kubeconfig of cluster c: the devhub's in the work directory, or the real stack's. */
static void kc_path(const struct bench *b, int c, char *out, size_t n)
{
    if (b->real)
        snprintf(out, n, "%s/%s.kubeconfig", b->real, cluster_names[c]);
    else
        snprintf(out, n, "%s/%s.kc", b->work, cluster_names[c]);
}

static void remove_work(struct bench *b)
{
    const char *files[] = {"hub.kc",       "cluster1.kc",  "cluster2.kc", "hub.log",
                           "cluster1.log", "cluster2.log", "op.log"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *p = xasprintf("%s/%s", b->work, files[i]);
        unlink(p);
        free(p);
    }
    rmdir(b->work);
}

static int start_devhub(struct bench *b, int c)
{
    char bin[PATH_MAX + 32], crd1[PATH_MAX + 32], crd2[PATH_MAX + 32], kc[128], log[32], nodes[128];
    snprintf(bin, sizeof bin, "%s/bin/kueue-ks-devhub", b->root);
    snprintf(crd1, sizeof crd1, "%s/devhub/crds", b->root);
    snprintf(crd2, sizeof crd2, "%s/config/crd", b->root);
    snprintf(kc, sizeof kc, "%s/%s.kc", b->work, cluster_names[c]);
    snprintf(log, sizeof log, "%s.log", cluster_names[c]);
    /* two nodes per worker, each able to hold every job (100m, 1Mi, one pod each): without
     * pods= a node takes 110 pods and placement waits for room beyond 440 jobs */
    snprintf(nodes, sizeof nodes, "2x cpu=%d,memory=%dGi,pods=%d;labels=instance=spot",
             b->n / 10 + 8, b->n / 100 + 8, b->n + 10);
    char *argv[16] = {bin,
                      "--listen",
                      "127.0.0.1:0",
                      "--name",
                      (char *)cluster_names[c],
                      "--kubeconfig-out",
                      kc,
                      "--crds",
                      crd1,
                      "--crds",
                      crd2};
    int k = 11;
    if (c == 0) {
        argv[k++] = "--kueue";
    } else {
        argv[k++] = "--nodes";
        argv[k++] = nodes;
    }
    argv[k] = NULL;
    return spawn(b, log, argv);
}

static int start_operator(struct bench *b)
{
    char hub[PATH_MAX], k1[PATH_MAX], k2[PATH_MAX], cgout[PATH_MAX + 32], qps[32], burst[32];
    kc_path(b, 0, hub, sizeof hub);
    kc_path(b, 1, k1, sizeof k1);
    kc_path(b, 2, k2, sizeof k2);
    snprintf(cgout, sizeof cgout, "--callgrind-out-file=%s/op.callgrind", b->work);
    const char *const vg[] = {"/usr/bin/valgrind", "--tool=callgrind",
                              "--instr-atstart=no", /* start-up excluded: instrumented per phase */
                              cgout, NULL};
    struct opcmd *c = xcalloc(1, sizeof *c);
    opcmd_init(c, b->callgrind ? vg : NULL, b->root, hub, "0", k1, k2);
    opcmd_push(c, "--v");
    opcmd_push(c, b->v);
    if (b->qps > 0) {
        snprintf(qps, sizeof qps, "%ld", b->qps);
        snprintf(burst, sizeof burst, "%ld", 2 * b->qps);
        opcmd_push(c, "--qps");
        opcmd_push(c, qps);
        opcmd_push(c, "--burst");
        opcmd_push(c, burst);
    }
    for (int i = 0; i < b->n_op_args; i++)
        opcmd_push(c, b->op_args[i]);
    /* valgrind does not follow the operator's exec of itself with glibc's tunables
     * (pkg/util/mtune.h): set them here, so the profile is of the operator as it runs */
    if (b->callgrind)
        setenv("GLIBC_TUNABLES", MTUNE_GLIBC_TUNABLES, 0);
    int rc = spawn(b, "op.log", c->argv);
    free(c);
    if (rc == 0)
        b->op_pid = b->pids[--b->npids];
    return rc;
}

/* ---- synchronous calls on the loop (set-up only) ------------------------ */

static void text_done(void *ud, const struct kube_result *r)
{
    struct bench *b = ud;
    b->done = true;
    /* a 2xx body that is not JSON completes with -EBADMSG: the text is in r->raw */
    b->raw_text = r->status == 200 && r->raw ? xstrdup(r->raw) : NULL;
}

static void sync_done(void *ud, const struct kube_result *r)
{
    struct bench *b = ud;
    b->done = true;
    b->rc = r->rc;
    b->body = r->body ? json_incref(r->body) : NULL;
    snprintf(b->errmsg, sizeof b->errmsg, "%s", r->rc ? r->err->msg : "");
    ev_break(b->loop, EVBREAK_ONE);
}

/* Run one request to completion; *out (optional) receives the body (new reference). */
static int sync_call(struct bench *b, int c, const char *method, const char *path, json_t *body,
                     json_t **out)
{
    struct kube_request req = {.method = method, .path = path, .body = body};
    struct err e = {0};
    b->done = false;
    b->body = NULL;
    int rc = kube_client_do(b->cl[c], &req, sync_done, b, NULL, &e);
    if (rc < 0) {
        snprintf(b->errmsg, sizeof b->errmsg, "%s", e.msg);
        return rc;
    }
    while (!b->done)
        ev_run(b->loop, EVRUN_ONCE);
    if (out)
        *out = b->body;
    else
        json_decref(b->body);
    return b->rc;
}

static int create(struct bench *b, int c, const char *group, const char *version,
                  const char *resource, const char *ns, json_t *obj)
{
    char *path = kube_path(group, version, resource, ns, NULL, NULL);
    int rc = sync_call(b, c, "POST", path, obj, NULL);
    if (rc < 0)
        die_msg("set-up object not created", b->errmsg);
    free(path);
    json_decref(obj);
    return rc;
}

static int setup_hub(struct bench *b)
{
    char cpu[32], mem[32];
    snprintf(cpu, sizeof cpu, "%dm", b->n * 100);
    snprintf(mem, sizeof mem, "%dMi", b->n);
    int rc = create(b, 0, KUEUE_GV, "resourceflavors", NULL,
                    json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s}}}", "apiVersion",
                              "kueue.x-k8s.io/v1beta2", "kind", "ResourceFlavor", "metadata",
                              "name", "spot", "spec", "nodeLabels", "instance", "spot"));
    if (!rc)
        rc =
            create(b, 0, KUEUE_GV, "admissionchecks", NULL,
                   json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "kueue.x-k8s.io/v1beta2",
                             "kind", "AdmissionCheck", "metadata", "name", "kubestellar-admc",
                             "spec", "controllerName", "kubestellar.io/ks-kueue"));
    if (!rc)
        rc = create(b, 0, KUEUE_GV, "clusterqueues", NULL,
                    json_pack("{s:s, s:s, s:{s:s}, s:{s:{}, s:{s:[{s:s}]}, s:[{s:[s,s], s:[{s:s, "
                              "s:[{s:s, s:s}, {s:s, s:s}]}]}]}}",
                              "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "ClusterQueue",
                              "metadata", "name", "cluster-queue-ks", "spec", "namespaceSelector",
                              "admissionChecksStrategy", "admissionChecks", "name",
                              "kubestellar-admc", "resourceGroups", "coveredResources", "cpu",
                              "memory", "flavors", "name", "spot", "resources", "name", "cpu",
                              "nominalQuota", cpu, "name", "memory", "nominalQuota", mem));
    if (!rc)
        rc = create(b, 0, KUEUE_GV, "localqueues", "default",
                    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion",
                              "kueue.x-k8s.io/v1beta2", "kind", "LocalQueue", "metadata", "name",
                              "user-queue-ks", "namespace", "default", "spec", "clusterQueue",
                              "cluster-queue-ks"));
    return rc;
}

/* --real: wait (start-up, the operator running) until the ClusterQueue's quota of flavor spot,
 * which the operator's quota controller sets from the workers' nodes, holds every job
 * (N x 100m CPU): real Kueue reserves only what fits. */
static int wait_quota(struct bench *b)
{
    char *path = kube_path(KUEUE_GV, "clusterqueues", NULL, "cluster-queue-ks", NULL);
    double deadline = clock_mono_s() + 60;
    int rc = -ETIMEDOUT;
    while (rc && clock_mono_s() < deadline) {
        json_t *cq = NULL;
        if (sync_call(b, 0, "GET", path, NULL, &cq) == 0 &&
            bench_spot_cpu_holds(cq, (int64_t)b->n * 100))
            rc = 0;
        json_decref(cq);
        if (rc)
            usleep(200000);
    }
    free(path);
    if (rc)
        die_msg("the ClusterQueue's spot CPU quota never held N x 100m", NULL);
    return rc;
}

/* --real: the hub API server's count of write requests so far (apiserver_request_total, every
 * client, from its /metrics), as an object {"VERB resource[/subresource]": count}; NULL if
 * unknown. A server-side apply counts as verb APPLY. */
static json_t *hub_writes(struct bench *b)
{
    struct kube_request req = {.method = "GET", .path = "/metrics"};
    b->done = false;
    b->raw_text = NULL;
    struct err e = {0};
    if (kube_client_do(b->cl[0], &req, text_done, b, NULL, &e) < 0)
        return NULL;
    while (!b->done)
        ev_run(b->loop, EVRUN_ONCE);
    if (!b->raw_text)
        return NULL;
    json_t *out = json_object();
    static const char *const verbs[] = {"POST", "PUT", "PATCH", "APPLY", "DELETE"};
    char *save = NULL;
    for (char *line = strtok_r(b->raw_text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "apiserver_request_total{", 24) != 0)
            continue;
        char verb[16] = "", res[64] = "", sub[64] = "";
        const char *v = strstr(line, "verb=\""), *r = strstr(line, "resource=\""),
                   *u = strstr(line, "subresource=\"");
        if (!v || !r || sscanf(v, "verb=\"%15[^\"]", verb) != 1 ||
            sscanf(r, "resource=\"%63[^\"]", res) != 1)
            continue;
        if (u)
            sscanf(u, "subresource=\"%63[^\"]", sub);
        bool write = false;
        for (size_t k = 0; k < sizeof verbs / sizeof verbs[0]; k++)
            write = write || strcmp(verb, verbs[k]) == 0;
        const char *sp = strrchr(line, ' ');
        if (!write || !sp)
            continue;
        char key[160];
        snprintf(key, sizeof key, "%s %s%s%s", verb, res, sub[0] ? "/" : "", sub);
        json_t *have = json_object_get(out, key);
        json_object_set_new(out, key,
                            json_real((have ? json_real_value(have) : 0) + strtod(sp + 1, NULL)));
    }
    free(b->raw_text);
    b->raw_text = NULL;
    return out;
}

/* b - a per key of two hub_writes() tables (new object; keys with no change left out; NULL
 * if either is). */
static json_t *writes_diff(const json_t *a, const json_t *b)
{
    if (!a || !b)
        return NULL;
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)b, k, v)
    {
        double d = json_real_value(v) - json_real_value(json_object_get(a, k));
        if (d > 0)
            json_object_set_new(out, k, json_real(d));
    }
    return out;
}

/* The sum of a writes table's PATCH and APPLY counts of `res` ("workloads/status"). */
static double writes_patches(const json_t *w, const char *res)
{
    char k1[96], k2[96];
    snprintf(k1, sizeof k1, "PATCH %s", res);
    snprintf(k2, sizeof k2, "APPLY %s", res);
    return json_real_value(json_object_get(w, k1)) + json_real_value(json_object_get(w, k2));
}

/* --real: one more kwok node per worker (the stack's 4 nodes take 110 pods each), as
 * scripts/realstack/stack.sh makes them, with room for every job; kept if already there. */
static int setup_real(struct bench *b)
{
    for (int c = 1; c < NCLUSTERS; c++) {
        char name[64];
        snprintf(name, sizeof name, "%s-bench-node", cluster_names[c]);
        json_t *node = bench_kwok_node(name, c == 1 ? "spot" : "h100", b->n / 10 + 8,
                                       b->n / 100 + 8, b->n + 10);
        int rc = sync_call(b, c, "POST", "/api/v1/nodes", node, NULL);
        json_decref(node);
        if (rc < 0 && rc != -EEXIST) {
            die_msg("bench node not created", b->errmsg);
            return rc;
        }
    }
    return 0;
}

/* Poll (start-up only) until the operator is ready: 2 ClusterMetrics, check Active. */
static int wait_operator(struct bench *b)
{
    double ready_s = b->callgrind ? 600 : 30; /* callgrind runs the operator ~50x slower */
    double deadline = clock_mono_s() + ready_s;
    char *cm = kube_path("galaxy.kubestellar.io", "v1alpha1", "clustermetrics", NULL, NULL, NULL);
    char *ac = kube_path(KUEUE_GV, "admissionchecks", NULL, "kubestellar-admc", NULL);
    int rc = -ETIMEDOUT;
    while (clock_mono_s() < deadline) {
        json_t *l = NULL, *a = NULL;
        bool ok = sync_call(b, 0, "GET", cm, NULL, &l) == 0 &&
                  json_array_size(json_object_get(l, "items")) == 2 &&
                  sync_call(b, 0, "GET", ac, NULL, &a) == 0;
        bool active = false;
        size_t i;
        json_t *cond;
        json_array_foreach(json_object_get(json_object_get(a, "status"), "conditions"), i, cond)
        {
            if (!strcmp(json_string_value(json_object_get(cond, "type")) ?: "", "Active") &&
                !strcmp(json_string_value(json_object_get(cond, "status")) ?: "", "True"))
                active = true;
        }
        json_decref(l);
        json_decref(a);
        if (ok && active) {
            rc = 0;
            break;
        }
        usleep(100000);
    }
    free(cm);
    free(ac);
    return rc;
}

/* ---- measurement -------------------------------------------------------- */

/* "bench-<i>" -> i, or -1. */
static int job_index(const struct bench *b, const char *name)
{
    if (!name || strncmp(name, "bench-", 6))
        return -1;
    char *end;
    errno = 0;
    long v = strtol(name + 6, &end, 10);
    if (errno || *end || end == name + 6 || v < 0 || v >= b->n)
        return -1;
    return (int)v;
}

static bool reserved(const json_t *wl)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(wl, "status"), "conditions"), i, c)
    {
        if (!strcmp(json_string_value(json_object_get(c, "type")) ?: "", "QuotaReserved"))
            return !strcmp(json_string_value(json_object_get(c, "status")) ?: "", "True");
    }
    return false;
}

static int on_workload(void *ud, const struct watch_event *ev)
{
    struct bench *b = ((struct wslot *)ud)->b;
    if (ev->type != WATCH_ADDED && ev->type != WATCH_MODIFIED)
        return 0;
    json_t *owner = json_array_get(
        json_object_get(json_object_get(ev->object, "metadata"), "ownerReferences"), 0);
    int i = job_index(b, json_string_value(json_object_get(owner, "name")));
    if (i >= 0 && !b->wl_names[i])
        b->wl_names[i] = xstrdup(
            json_string_value(json_object_get(json_object_get(ev->object, "metadata"), "name"))
                ?: "");
    if (i >= 0 && b->reserved_t[i] == 0 && reserved(ev->object)) {
        b->reserved_t[i] = clock_mono_s();
        if (++b->reserved == b->n && b->wait_reserved)
            ev_break(b->loop, EVBREAK_ONE);
    }
    return 0;
}

static int on_hub_job(void *ud, const struct watch_event *ev)
{
    struct bench *b = ((struct wslot *)ud)->b;
    json_t *md = json_object_get(ev->object, "metadata");
    int i = job_index(b, json_string_value(json_object_get(md, "name")));
    if (i >= 0 && (ev->type == WATCH_ADDED || ev->type == WATCH_MODIFIED))
        stret_hub(b->st, i, ev->object, clock_mono_s());
    if (i >= 0 && b->labelled_t[i] == 0 &&
        json_object_get(json_object_get(md, "labels"), "kubestellar.io/cluster"))
        b->labelled_t[i] = clock_mono_s();
    return 0;
}

static void status_done(void *ud, const struct kube_result *r)
{
    struct bench *b = ud;
    if (r->rc && b->st_failed++ == 0)
        die_msg("copy status write failed", r->err->msg);
}

/* Devhub: the bench plays the worker's Job controller for copy i (the devhubs run no
 * pods): its pod starts (active 1, ready 1) or it completes (succeeded 1, Complete). */
static void copy_status(struct bench *b, int i, bool finish)
{
    char name[32], now[40];
    snprintf(name, sizeof name, "bench-%d", i);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    clock_rfc3339(now, sizeof now, &ts, 0);
    json_t *st =
        finish
            ? json_pack("{s:i, s:i, s:i, s:s, s:[{s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s}]}",
                        "active", 0, "ready", 0, "succeeded", 1, "completionTime", now,
                        "conditions", "type", "SuccessCriteriaMet", "status", "True", "reason",
                        "CompletionsReached", "lastTransitionTime", now, "type", "Complete",
                        "status", "True", "reason", "CompletionsReached", "lastTransitionTime", now)
            : json_pack("{s:s, s:i, s:i}", "startTime", now, "active", 1, "ready", 1);
    json_t *body = json_pack("{s:o}", "status", st);
    char *path = kube_path("batch", "v1", "jobs", "default", name, "status");
    struct kube_request req = {
        .method = "PATCH", .path = path, .body = body, .content_type = KUBE_CT_MERGE_PATCH};
    struct err e = {0};
    if (kube_client_do(b->cl[b->where[i]], &req, status_done, b, NULL, &e) < 0 &&
        b->st_failed++ == 0)
        die_msg("copy status write not submitted", e.msg);
    free(path);
    json_decref(body);
}

static int on_copy(struct bench *b, int c, const struct watch_event *ev)
{
    if (ev->type != WATCH_ADDED && ev->type != WATCH_MODIFIED)
        return 0;
    int i = job_index(
        b, json_string_value(json_object_get(json_object_get(ev->object, "metadata"), "name")));
    if (i < 0)
        return 0;
    stret_copy(b->st, i, ev->object, clock_mono_s());
    if (ev->type != WATCH_ADDED)
        return 0;
    if (b->placed_t[i] != 0) {
        b->duplicates++;
        return 0;
    }
    b->placed_t[i] = clock_mono_s();
    b->where[i] = c;
    b->per_cluster[c]++;
    b->order[b->n_order++] = i;
    if (b->st && !b->real)
        copy_status(b, i, false);
    if (!b->sample)
        b->sample = json_deep_copy(ev->object);
    if (++b->placed == b->limit)
        ev_break(b->loop, EVBREAK_ONE);
    return 0;
}

static int on_copy1(void *ud, const struct watch_event *ev)
{
    return on_copy(((struct wslot *)ud)->b, 1, ev);
}

static int on_copy2(void *ud, const struct watch_event *ev)
{
    return on_copy(((struct wslot *)ud)->b, 2, ev);
}

static void on_close(void *ud, int rc, const struct err *e)
{
    struct wslot *ws = ud;
    struct bench *b = ws->b;
    if (rc == -ECANCELED)
        return;                /* kube_client_free */
    if (ws->restarts++ < 10) { /* again from the last event seen (valid until we return) */
        struct kube_watch_opts o = {.path = ws->path,
                                    .resource_version = kube_watch_last_rv(b->w[ws->slot]),
                                    .timeout_seconds = 3600};
        if (o.resource_version && !*o.resource_version)
            o.resource_version = NULL;
        struct err e2 = {0};
        if (kube_watch_start(b->cl[ws->c], &o, ws->cb, on_close, ws, &b->w[ws->slot], &e2) == 0)
            return;
        b->w[ws->slot] = NULL;
    }
    die_msg("watch closed", e->msg);
    b->failed = true;
    ev_break(b->loop, EVBREAK_ONE);
}

static void on_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    struct bench *b = t->data;
    b->timed_out = true;
    ev_break(loop, EVBREAK_ONE);
}

/* Creates are submitted WINDOW at a time (like a client with a connection pool). */
#define WINDOW 16

static void create_next(struct bench *b);

static void job_created(void *ud, const struct kube_result *r)
{
    struct bench *b = ud;
    if (r->rc) {
        b->create_failed++;
        if (b->create_failed == 1)
            die_msg(b->in_raw ? "raw write failed" : "create failed", r->err->msg);
    }
    b->in_flight--;
    create_next(b);
    if (b->in_flight == 0 && b->next >= b->n && b->in_raw)
        ev_break(b->loop, EVBREAK_ONE);
}

static json_t *hub_job(const struct bench *b, int i);

/* What the raw phase writes, WINDOW at a time (the baseline rates of one run). */
enum raw_kind {
    RAW_CREATE,    /* the worker copy, renamed raw-<i>, created in cluster1 */
    RAW_WL_STATUS, /* --real: a condition of Workload i applied (SSA, as the operator writes) */
    RAW_JOB_PATCH, /* --real: a label merge-patched onto hub job bench-<i> */
    /* --real: the same through the job's status subresource, as the operator writes its
     * labels and annotations (--job-metadata-through-status): not a baseline, its cost
     * against RAW_JOB_PATCH's */
    RAW_JOB_META_STATUS
};

/* Submit the i-th request of the raw phase. */
static int raw_submit(struct bench *b, int i, struct err *e)
{
    char name[32];
    if (b->raw_kind == RAW_CREATE) {
        snprintf(name, sizeof name, "raw-%d", i);
        json_object_set_new(json_object_get(b->sample, "metadata"), "name", json_string(name));
        return kube_client_post(b->cl[1], b->jobs_path, b->sample, job_created, b, NULL, e);
    }
    const char *q[] = {"fieldManager", "bench-dispatch", "force", "true", NULL};
    struct kube_request req = {.method = "PATCH"};
    char *path;
    json_t *body;
    if (b->raw_kind == RAW_WL_STATUS) {
        if (!b->wl_names[i])
            return err_set(e, -ENOENT, "the Workload of bench-%d was not seen", i);
        path = kube_path(KUEUE_GV, "workloads", "default", b->wl_names[i], "status");
        body = json_pack("{s:s, s:s, s:{s:[{s:s, s:s, s:s, s:s, s:s}]}}", "apiVersion",
                         "kueue.x-k8s.io/v1beta2", "kind", "Workload", "status", "conditions",
                         "type", "BenchRaw", "status", "True", "reason", "Bench", "message",
                         "raw write rate", "lastTransitionTime", "2026-01-01T00:00:00Z");
        req.content_type = "application/apply-patch+yaml";
        req.query = q;
    } else {
        bool st = b->raw_kind == RAW_JOB_META_STATUS;
        char v[16];
        snprintf(v, sizeof v, "%d", b->raw_round);
        snprintf(name, sizeof name, "bench-%d", i);
        path = kube_path("batch", "v1", "jobs", "default", name, st ? "status" : NULL);
        body = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "bench-raw", v);
        req.content_type = KUBE_CT_MERGE_PATCH;
    }
    req.path = path;
    req.body = body;
    int rc = kube_client_do(b->cl[0], &req, job_created, b, NULL, e);
    free(path);
    json_decref(body);
    return rc;
}

/* Submit creates until WINDOW are in flight: hub jobs bench-<i> (with --pace, pace_cb creates
 * them one at a time), or the raw phase's writes. */
static void create_one(struct bench *b);
static void create_next(struct bench *b)
{
    if (b->pace && !b->in_raw)
        return;
    while (b->in_flight < WINDOW && b->next < (b->in_raw ? b->n : b->limit))
        create_one(b);
}

static void create_one(struct bench *b)
{
    int i = b->next++;
    struct err e = {0};
    int rc;
    if (b->in_raw) {
        rc = raw_submit(b, i, &e);
    } else {
        json_t *obj = hub_job(b, i);
        rc = kube_client_post(b->cl[0], b->jobs_path, obj, job_created, b, NULL, &e);
        json_decref(obj);
    }
    if (rc < 0) {
        die_msg("create not submitted", e.msg);
        b->create_failed++;
    } else {
        b->in_flight++;
    }
}

/* --pace: one hub job per tick. */
static void pace_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    struct bench *b = t->data;
    if (b->next < b->limit) {
        if (b->next == 0)
            b->pace_t0 = clock_mono_s();
        create_one(b);
        b->pace_t1 = clock_mono_s();
    }
    if (b->next >= b->limit || b->create_failed) {
        ev_timer_stop(b->loop, t);
        if (b->create_failed)
            ev_break(b->loop, EVBREAK_ONE);
    }
}

static json_t *hub_job(const struct bench *b, int i)
{
    char name[32], dur[32];
    snprintf(name, sizeof name, "bench-%d", i);
    snprintf(dur, sizeof dur, "%ds", b->job_s);
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:i, s:i, s:b, s:{s:{s:s, "
                     "s:[{s:s, s:s, s:[s], s:{s:{s:s, s:s}}}]}}}}",
                     "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", name, "namespace",
                     "default", "labels", "kueue.x-k8s.io/queue-name", "user-queue-ks", "spec",
                     "parallelism", 1, "completions", 1, "suspend", 1, "template", "spec",
                     "restartPolicy", "Never", "containers", "name", "c", "image", "busybox",
                     "args", dur,
                     /* on the real stack kwok ends the pods after that (--job-seconds) */
                     "resources", "requests", "cpu", "100m", "memory", "1Mi");
}

/* Start a watch on `c` from the collection's current resourceVersion. */
static int watch_from_now(struct bench *b, int c, int slot, const char *group, const char *version,
                          const char *resource, kube_watch_event_cb cb)
{
    char *path = kube_path(group, version, resource, "default", NULL, NULL);
    json_t *l = NULL;
    int rc = sync_call(b, c, "GET", path, NULL, &l);
    if (!rc) {
        struct kube_watch_opts o = {
            .path = path,
            .resource_version = json_string_value(
                json_object_get(json_object_get(l, "metadata"), "resourceVersion")),
            .timeout_seconds = 3600,
        };
        struct err e = {0};
        b->ws[slot] = (struct wslot){.b = b, .c = c, .slot = slot, .path = xstrdup(path), .cb = cb};
        rc = kube_watch_start(b->cl[c], &o, cb, on_close, &b->ws[slot], &b->w[slot], &e);
        if (rc)
            snprintf(b->errmsg, sizeof b->errmsg, "%s", e.msg);
    }
    json_decref(l);
    free(path);
    return rc;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, c = *(const double *)y;
    return (a > c) - (a < c);
}

static double pct(const double *v, int n, double p)
{
    if (n == 0)
        return 0;
    int k = (int)(p * (n - 1) + 0.5);
    return v[k];
}

/* One raw phase: N writes of one kind (raw_kind), WINDOW in flight; *seconds it took. */
static int raw_run(struct bench *b, enum raw_kind kind, double *seconds)
{
    b->raw_kind = kind;
    b->in_raw = true; /* job_created breaks the loop after the last one */
    b->next = 0;
    b->create_failed = 0;
    double t0 = clock_mono_s();
    create_next(b);
    if (b->in_flight > 0)
        ev_run(b->loop, 0);
    *seconds = clock_mono_s() - t0;
    if (b->create_failed)
        fprintf(stderr, "bench-dispatch: %d of %d raw writes failed\n", b->create_failed, b->n);
    /* a rare transport failure (a kept-alive connection the server closed: not retried for a
     * write) does not void the rate; more than 1% does */
    return b->create_failed * 100 > b->n ? -EIO : 0;
}

/* The raw rate: N creates of the worker copy (renamed raw-<i>) straight into cluster1 (on the
 * real stack suspended: the worker runs no pods for them). */
static void sample_clean(struct bench *b)
{
    json_t *meta = json_object_get(b->sample, "metadata");
    const char *drop[] = {"uid", "resourceVersion", "creationTimestamp", "generation",
                          "managedFields"};
    for (size_t k = 0; k < sizeof drop / sizeof drop[0]; k++)
        json_object_del(meta, drop[k]);
    json_object_del(b->sample, "status");
    /* the server's Job defaults tie the selector and template labels to the
     * copy's uid: a new Job must not carry them (the server sets its own) */
    json_t *spec = json_object_get(b->sample, "spec");
    json_object_del(spec, "selector");
    json_t *tl =
        json_object_get(json_object_get(json_object_get(spec, "template"), "metadata"), "labels");
    const char *uid_labels[] = {"controller-uid", "batch.kubernetes.io/controller-uid", "job-name",
                                "batch.kubernetes.io/job-name"};
    for (size_t k = 0; k < sizeof uid_labels / sizeof uid_labels[0]; k++)
        json_object_del(tl, uid_labels[k]);
    if (b->real)
        json_object_set_new(spec, "suspend", json_true());
}

static int raw_phase(struct bench *b, double *seconds)
{
    sample_clean(b);
    return raw_run(b, RAW_CREATE, seconds);
}

/* ---- the ideal ---------------------------------------------------------- */

/* The writes on a dispatch's critical path, as the operator makes them, with nothing else in
 * flight: the placement's two hub writes at once (a condition applied to the Workload's status,
 * a label merge-patched onto the hub job through its status), then the copy created in
 * cluster1. What it leaves out (the watch events that tell the operator of the reservation
 * and of its own writes, its passes' CPU) is what goal 1's "p99 <= 2x the ideal" allows for. */
#define IDEAL_CHAINS 20

struct ideal_call {
    struct bench *b;
    int *left;
    int *failed;
};

static void ideal_done(void *ud, const struct kube_result *r)
{
    struct ideal_call *c = ud;
    if (r->rc && (*c->failed)++ == 0)
        snprintf(c->b->errmsg, sizeof c->b->errmsg, "%s", r->err->msg);
    if (--*c->left == 0)
        ev_break(c->b->loop, EVBREAK_ONE);
}

/* Submit one request of a chain; false (with errmsg) when it could not be. */
static bool ideal_submit(struct bench *b, int c, struct kube_request *req, struct ideal_call *call)
{
    struct err e = {0};
    if (kube_client_do(b->cl[c], req, ideal_done, call, NULL, &e) < 0) {
        snprintf(b->errmsg, sizeof b->errmsg, "%s", e.msg);
        return false;
    }
    return true;
}

/* One chain on workload i (dispatched: its Workload's name is known), k-th: its seconds, or a
 * negative value when a write failed. */
static double ideal_chain(struct bench *b, int i, int k)
{
    char job[32], copy[32], v[16];
    snprintf(job, sizeof job, "bench-%d", i);
    snprintf(copy, sizeof copy, "ideal-%d", k);
    snprintf(v, sizeof v, "%d", k);
    const char *q[] = {"fieldManager", "bench-dispatch", "force", "true", NULL};
    char *wl_path = kube_path(KUEUE_GV, "workloads", "default", b->wl_names[i], "status");
    char *job_path = kube_path("batch", "v1", "jobs", "default", job, "status");
    json_t *cond =
        json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "BenchIdeal", "status", "True", "reason",
                  "Bench", "message", v, "lastTransitionTime", "2026-01-01T00:00:00Z");
    json_t *wl_body = NULL;
    if (b->real) { /* applied, as the operator writes */
        wl_body = json_pack("{s:s, s:s, s:{s:[o]}}", "apiVersion", "kueue.x-k8s.io/v1beta2", "kind",
                            "Workload", "status", "conditions", cond);
    } else { /* the devhub has no apply: the operator's merge patch, every condition in it */
        json_t *cur = NULL;
        if (sync_call(b, 0, "GET", wl_path, NULL, &cur) < 0) {
            json_decref(cond);
            free(wl_path);
            free(job_path);
            return -1;
        }
        json_t *conds = json_array();
        size_t ci;
        json_t *c;
        json_array_foreach(json_object_get(json_object_get(cur, "status"), "conditions"), ci, c)
        {
            if (strcmp(json_string_value(json_object_get(c, "type")) ?: "", "BenchIdeal"))
                json_array_append(conds, c);
        }
        json_array_append_new(conds, cond);
        json_decref(cur);
        wl_body = json_pack("{s:{s:o}}", "status", "conditions", conds);
    }
    json_t *job_body = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "bench-ideal", v);
    json_object_set_new(json_object_get(b->sample, "metadata"), "name", json_string(copy));
    struct kube_request wl = {.method = "PATCH",
                              .path = wl_path,
                              .body = wl_body,
                              .content_type =
                                  b->real ? "application/apply-patch+yaml" : KUBE_CT_MERGE_PATCH,
                              .query = b->real ? q : NULL};
    struct kube_request jb = {
        .method = "PATCH", .path = job_path, .body = job_body, .content_type = KUBE_CT_MERGE_PATCH};
    struct kube_request cp = {.method = "POST", .path = b->jobs_path, .body = b->sample};
    int left = 0, failed = 0;
    struct ideal_call call = {b, &left, &failed};
    double t0 = clock_mono_s();
    struct kube_request *first[] = {&wl, &jb};
    for (int r = 0; r < 2; r++) {
        left++;
        if (!ideal_submit(b, 0, first[r], &call)) {
            left--;
            failed++;
        }
    }
    while (left > 0) /* what was submitted answers (call lives on this stack) */
        ev_run(b->loop, 0);
    if (!failed) {
        left = 1;
        if (!ideal_submit(b, 1, &cp, &call)) {
            left = 0;
            failed++;
        }
        while (left > 0)
            ev_run(b->loop, 0);
    }
    double secs = clock_mono_s() - t0;
    free(wl_path);
    free(job_path);
    json_decref(wl_body);
    json_decref(job_body);
    return failed ? -1 : secs;
}

/* ideal_ms: the median of IDEAL_CHAINS chains, one after the other, on the first workloads
 * dispatched (after the dispatch: the operator idle, the servers quiet). */
static int ideal_phase(struct bench *b)
{
    sample_clean(b);
    int n = b->n_order < IDEAL_CHAINS ? b->n_order : IDEAL_CHAINS;
    double t[IDEAL_CHAINS];
    int got = 0;
    for (int k = 0; k < n; k++) {
        int i = b->order[k];
        if (!b->wl_names[i])
            continue;
        double secs = ideal_chain(b, i, k);
        if (secs < 0) /* once more: a kept-alive connection the server closed is not retried
                         for a write (as the raw phase allows for) */
            secs = ideal_chain(b, i, k + IDEAL_CHAINS);
        if (secs < 0) {
            fprintf(stderr, "bench-dispatch: an ideal chain failed: %s\n", b->errmsg);
            continue;
        }
        t[got++] = secs;
    }
    if (got == 0)
        return 0;
    qsort(t, (size_t)got, sizeof(double), cmp_double);
    b->ideal_ms = pct(t, got, 0.5) * 1e3;
    b->n_ideal = got;
    return 0;
}

/* Create hub jobs up to index `limit` and wait until that many are placed; under callgrind
 * the loop then runs 2 s more, so the phase's trailing writes are counted in it. */
static int run_phase(struct bench *b, int limit)
{
    b->limit = limit;
    ev_timer pace;
    ev_timer_init(&pace, pace_cb, 0, 1.0 / (b->pace ? b->pace : 1));
    pace.data = b;
    if (b->pace)
        ev_timer_start(b->loop, &pace);
    create_next(b);
    if (b->create_failed) {
        ev_timer_stop(b->loop, &pace);
        return -EIO;
    }
    while (b->placed < b->limit && !b->timed_out && !b->failed && !b->create_failed)
        ev_run(b->loop, 0);
    ev_timer_stop(b->loop, &pace);
    if (b->create_failed)
        return -EIO;
    if (b->placed < b->limit)
        return -ETIMEDOUT;
    double until = clock_mono_s() + (b->callgrind ? 2.0 : 0.0);
    while (clock_mono_s() < until && !b->failed) {
        ev_run(b->loop, EVRUN_NOWAIT);
        usleep(10000);
    }
    return 0;
}

/* callgrind_control <op> [arg] <operator pid>: switch collection, dump the counters. */
static void cg_control(struct bench *b, const char *op, const char *arg)
{
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)b->op_pid);
    char *argv[] = {"/usr/bin/callgrind_control", (char *)op, (char *)(arg ? arg : pid),
                    arg ? pid : NULL, NULL};
    pid_t p = fork();
    if (p == 0)
        child_exec("/dev/null", argv);
    int st = 0;
    if (p < 0 || waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die_msg("callgrind_control failed", op);
}

/* --reserved-first: the operator is stopped, all N jobs are created and reserved (by the
 * Kueue emulator or real Kueue), then the operator is started again and timed alone. */
static int run_reserved_first(struct bench *b)
{
    stop_operator(b);
    b->limit = b->n;
    b->wait_reserved = true;
    create_next(b);
    if (b->create_failed)
        return -EIO;
    while (b->reserved < b->n && !b->timed_out && !b->failed)
        ev_run(b->loop, 0);
    b->wait_reserved = false;
    if (b->reserved < b->n) {
        fprintf(stderr, "bench-dispatch: %d of %d workloads reserved\n", b->reserved, b->n);
        return -ETIMEDOUT;
    }
    json_t *w0 = b->real ? hub_writes(b) : NULL;
    b->writes_d0 = json_incref(w0);
    if (b->real)
        stackcpu_take(&b->sc, &b->cpu_d0);
    b->op_start = clock_mono_s();
    int rc = start_operator(b);
    while (rc == 0 && b->placed < b->n && !b->timed_out && !b->failed)
        ev_run(b->loop, 0);
    if (b->real) {
        stackcpu_take(&b->sc, &b->cpu_d1);
        b->op_d1 = stackcpu_pid_s(b->op_pid);
        json_t *w1 = hub_writes(b);
        b->writes_d = writes_diff(w0, w1);
        json_decref(w1);
        b->wl_patches = writes_patches(b->writes_d, "workloads/status");
        /* kueue-ks's metadata writes on a batch/v1 Job go through its status subresource
         * (--job-metadata-through-status), the final status too */
        b->job_patches =
            writes_patches(b->writes_d, "jobs") + writes_patches(b->writes_d, "jobs/status");
    }
    json_decref(w0);
    return rc ? rc : b->placed < b->n ? -ETIMEDOUT : 0;
}

static void fin_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct bench *b = w->data;
    if (b->real || b->n_order == 0)
        return; /* kwok ends the pods */
    double now = clock_mono_s(), t0 = b->placed_t[b->order[0]];
    while (b->fin_next < b->n_order &&
           b->fin_base + (b->placed_t[b->order[b->fin_next]] - t0) <= now)
        copy_status(b, b->order[b->fin_next++], true);
}

/* After the dispatch: wait until the hub shows every copy's final status and its last counts
 * (5 s more at most). The wait follows the workers (stret_wait_until): while copies are still
 * unfinished there, up to the jobs' run time + STATUS_CAP_S in all (on a real stack the
 * workers' kube-controller-manager marks copies Complete up to ~50 s after their pods end, and
 * the pods are created over ~30 s); once the last copy finished, STATUS_GRACE_S more for the
 * hub. On the devhub the bench finishes the copies itself, from now, at the pace they appeared
 * (as kwok ends the pods their run time after they started). */
#define STATUS_CAP_S   240
#define STATUS_GRACE_S 30
static void status_wait(struct bench *b)
{
    double span = b->n_order ? b->placed_t[b->order[b->n_order - 1]] - b->placed_t[b->order[0]] : 0;
    double t0 = clock_mono_s();
    double cap = t0 + (b->real ? b->job_s : span) + STATUS_CAP_S;
    ev_timer fin;
    ev_timer_init(&fin, fin_cb, 0.02, 0.02);
    fin.data = b;
    b->fin_base = t0;
    ev_timer_start(b->loop, &fin);
    while (stret_finals(b->st) < b->n && !b->failed &&
           clock_mono_s() < stret_wait_until(b->st, cap, STATUS_GRACE_S))
        ev_run(b->loop, EVRUN_ONCE);
    /* the last annotations may come after the final statuses (one pass writes both) */
    double grace = clock_mono_s() + 5;
    while (stret_unreturned(b->st) > 0 && !b->failed && clock_mono_s() < grace)
        ev_run(b->loop, EVRUN_ONCE);
    ev_timer_stop(b->loop, &fin);
    int finals = stret_finals(b->st), unfinished = b->n - stret_terminal(b->st);
    if (finals < b->n && unfinished > 0)
        fprintf(stderr,
                "bench-dispatch: the hub showed %d of %d final statuses in %.0f s; %d copies had "
                "not finished on the workers by then (the workers' lag, not the hub's)\n",
                finals, b->n, clock_mono_s() - t0, unfinished);
    else if (finals < b->n)
        fprintf(stderr,
                "bench-dispatch: every copy finished on the workers, but the hub showed only %d of "
                "%d final statuses %d s after the last one did (the hub's lag)\n",
                finals, b->n, STATUS_GRACE_S);
}

static int run(struct bench *b)
{
    int rc;
    for (int c = 0; c < NCLUSTERS && !b->real; c++)
        if ((rc = start_devhub(b, c)) < 0)
            return rc;
    /* the devhubs write their kubeconfig once they listen */
    for (int c = 0; c < NCLUSTERS; c++) {
        char kc[PATH_MAX];
        kc_path(b, c, kc, sizeof kc);
        struct stat st;
        double deadline = clock_mono_s() + 15;
        while ((stat(kc, &st) || st.st_size == 0) && clock_mono_s() < deadline)
            usleep(20000);
        struct kubeconfig_opts o = {.explicit_path = kc};
        struct err e = {0};
        if ((rc = kubeconfig_load(&o, &b->cfg[c], NULL, &e)) < 0) {
            die_msg("devhub did not start (no kubeconfig)", e.msg);
            return rc;
        }
        struct kube_client_opts co = {.qps = -1};
        if ((rc = kube_client_new(b->loop, b->cfg[c], &co, NULL, &b->cl[c], &e)) < 0) {
            die_msg("client", e.msg);
            return rc;
        }
        if ((rc = sync_call(b, c, "GET", "/version", NULL, NULL)) < 0) {
            die_msg("devhub not ready", b->errmsg);
            return rc;
        }
    }
    if (b->real && stackcpu_open(&b->sc, b->real) < 0)
        fprintf(stderr, "bench-dispatch: no STACK_DIR/*.pid in %s: CPU per component not shown\n",
                b->real);
    if ((rc = b->real ? setup_real(b) : setup_hub(b)) < 0)
        return rc;
    if ((rc = start_operator(b)) < 0)
        return rc;
    if ((rc = wait_operator(b)) < 0) {
        die_msg("operator not ready in time (no ClusterMetrics x2 / AdmissionCheck Active)", NULL);
        return rc;
    }
    if (b->real && (rc = wait_quota(b)) < 0)
        return rc;
    if ((rc = watch_from_now(b, 0, 0, KUEUE_GV, "workloads", on_workload)) < 0 ||
        (rc = watch_from_now(b, 1, 1, "batch", "v1", "jobs", on_copy1)) < 0 ||
        (rc = watch_from_now(b, 2, 2, "batch", "v1", "jobs", on_copy2)) < 0 ||
        (rc = watch_from_now(b, 0, NCLUSTERS, "batch", "v1", "jobs", on_hub_job)) < 0) {
        die_msg("watch", b->errmsg);
        return rc;
    }
    /* N hub jobs; --callgrind: the first n_base alone (the baseline), then the rest, each
     * phase's operator instructions dumped by callgrind_control */
    b->created_at = clock_mono_s();
    b->op_cpu0 = stackcpu_pid_s(b->op_pid);
    ev_timer t;
    ev_timer_init(&t, on_timeout, b->timeout_s, 0);
    t.data = b;
    ev_timer_start(b->loop, &t);
    if (b->reserved_first) {
        rc = run_reserved_first(b);
    } else if (b->callgrind) {
        cg_control(b, "-i", "on");
        rc = run_phase(b, b->n_base);
        cg_control(b, "-d", NULL); /* op.callgrind.1: the baseline batch */
    }
    if (rc == 0 && !b->reserved_first)
        rc = run_phase(b, b->n);
    if (b->callgrind && !b->reserved_first) {
        cg_control(b, "-d", NULL); /* op.callgrind.2: the rest */
        cg_control(b, "-i", "off");
    }
    /* --reserved-first: the timed operator is a new process, all of its CPU counts */
    b->op_cpu_win = stackcpu_pid_s(b->op_pid) - (b->reserved_first ? 0 : b->op_cpu0);
    ev_timer_stop(b->loop, &t);
    if (rc == 0 && b->st)
        status_wait(b);
    if (rc == 0 && b->real && b->st && stret_finals(b->st) == b->n) {
        stackcpu_take(&b->sc, &b->cpu_l1);
        b->op_l1 = stackcpu_pid_s(b->op_pid);
        json_t *w1 = hub_writes(b);
        b->writes_l = writes_diff(b->writes_d0, w1);
        json_decref(w1);
    }
    for (int c = 0; c <= NCLUSTERS && !b->failed; c++) {
        kube_watch_stop(b->w[c]);
        b->w[c] = NULL;
    }
    return rc;
}

/* The instruction total of one callgrind dump, 0 if unknown. */
static unsigned long long cg_total(const struct bench *b, int dump)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/op.callgrind.%d", b->work, dump);
    FILE *f = fopen(path, "r");
    unsigned long long total = 0;
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "totals: %llu", &total) == 1 || sscanf(line, "summary: %llu", &total) == 1)
            break;
    if (f)
        fclose(f);
    return total;
}

/* --callgrind: the operator's instructions in each phase (start-up, the raw phase and
 * shutdown are not collected), per dispatch, and the burst's per-dispatch count as a
 * ratio to the baseline batch's of the same run: ~1 when the cost per dispatch does
 * not grow with the number of workloads. Instruction counts do not depend on the
 * machine's load, unlike CPU seconds. */
static void report_callgrind(const struct bench *b)
{
    unsigned long long base = cg_total(b, 1), rest = cg_total(b, 2);
    int n_rest = b->n - b->n_base;
    if (base == 0 || rest == 0 || b->placed < b->n) {
        fprintf(stderr, "bench-dispatch: no callgrind totals in %s/op.callgrind.{1,2}\n", b->work);
        return;
    }
    double per_base = (double)base / b->n_base, per_rest = (double)rest / n_rest;
    printf("{\"bench\":\"dispatch-callgrind\",\"n\":%d,\"base_n\":%d,"
           "\"base_instructions\":%llu,\"base_instr_per_dispatch\":%.0f,"
           "\"instructions\":%llu,\"instr_per_dispatch\":%.0f,\"per_dispatch_ratio\":%.2f,"
           "\"profiles\":\"%s/op.callgrind.{1,2}\"}\n",
           b->n, b->n_base, base, per_base, rest, per_rest, per_rest / per_base, b->work);
}

/* The raw rates of this run: creates on a worker; with --real also Workload status applies
 * and hub job patches (the operator stopped). */
struct raw_rates {
    double create_s, create, wl_status, job_patch, job_meta_status, slowest;
};

/* --real: until the hub's processes are quiet (under a tenth of a core over 0.2 s; 10 s at
 * most): Kueue and the controllers react to a raw phase's writes after their answers, and
 * that work belongs to the phase, not to the next one's CPU. */
static void hub_quiet(struct bench *b)
{
    struct stackcpu_snap a, z;
    stackcpu_take(&b->sc, &a);
    for (int i = 0; i < 50; i++) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
        stackcpu_take(&b->sc, &z);
        if (stackcpu_sum(&b->sc, &a, &z, 1, "hub-") < 20.0) /* ms in 200 ms */
            return;
        a = z;
    }
}

static int raw_all(struct bench *b, struct raw_rates *rr)
{
    if (b->real)
        stop_operator(b); /* the raw writes alone on the servers */
    double raw_cpu0 = b->real ? 0 : stackcpu_pid_s(b->pids[1]);
    int rc = raw_phase(b, &rr->create_s);
    b->raw_cpu_s = b->real ? 0 : stackcpu_pid_s(b->pids[1]) - raw_cpu0;
    rr->create = rr->create_s > 0 ? b->n / rr->create_s : 0;
    rr->slowest = rr->create;
    /* the Workload status, then the job patches through the job and through its status, in
     * turn and back (job, status, status, job): a phase's first changes of the jobs may cost
     * more than later ones, which must not count for one way only */
    static const enum raw_kind order[] = {RAW_WL_STATUS, RAW_JOB_PATCH, RAW_JOB_META_STATUS,
                                          RAW_JOB_META_STATUS, RAW_JOB_PATCH};
    for (size_t o = 0; rc == 0 && b->real && o < sizeof order / sizeof order[0]; o++) {
        enum raw_kind k = order[o];
        double secs = 0;
        json_t *w0 = k == RAW_WL_STATUS ? hub_writes(b) : NULL;
        struct stackcpu_snap s0, s1;
        if (k != RAW_WL_STATUS) { /* compared with each other: each with its aftermath */
            hub_quiet(b);
            b->raw_round++;
        }
        stackcpu_take(&b->sc, k == RAW_WL_STATUS ? &b->cpu_r0 : &s0);
        rc = raw_run(b, k, &secs);
        if (k != RAW_WL_STATUS)
            hub_quiet(b);
        stackcpu_take(&b->sc, k == RAW_WL_STATUS ? &b->cpu_r1 : &s1);
        if (k == RAW_WL_STATUS) {
            json_t *w1 = hub_writes(b);
            b->writes_r = writes_diff(w0, w1);
            json_decref(w1);
        } else {
            *(k == RAW_JOB_PATCH ? &b->raw_jp_ms : &b->raw_js_ms) +=
                stackcpu_sum(&b->sc, &s0, &s1, 1, "hub-");
        }
        json_decref(w0);
        double rate = secs > 0 ? b->n / secs : 0;
        double *r = k == RAW_WL_STATUS   ? &rr->wl_status
                    : k == RAW_JOB_PATCH ? &rr->job_patch
                                         : &rr->job_meta_status;
        *r = *r > 0 ? (*r + rate) / 2 : rate; /* the mean of the two phases */
    }
    /* the baseline: the slowest write a dispatch needs (the /status patch is an alternative) */
    const double need[] = {rr->wl_status, rr->job_patch};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (need[i] > 0 && need[i] < rr->slowest)
            rr->slowest = need[i];
    return rc;
}

/* Writes `"key":count/per,...` of a writes table (no braces); returns the sum. */
static double print_writes(const json_t *w, double per)
{
    double sum = 0;
    const char *sep = "", *k;
    json_t *v;
    json_object_foreach((json_t *)w, k, v)
    {
        printf("%s\"%s\":%.2f", sep, k, json_real_value(v) / per);
        sep = ",";
        sum += json_real_value(v) / per;
    }
    return sum;
}

/* --real: where a dispatch's CPU and hub writes go, against one raw Workload status write's
 * in the same run: CPU milliseconds per component of the stack (and the operator) per
 * dispatch and per raw write, the machine's busy share over each window, and the hub's write
 * requests (every client) per dispatch and per raw write. */
static void report_real_cost(struct bench *b)
{
    /* its windows are the timed operator's (--reserved-first); a paced run has none */
    if (!b->real || !b->reserved_first || b->sc.n == 0 || b->placed < b->n)
        return;
    double n = b->n;
    printf("{\"bench\":\"dispatch-real-cost\",\"n\":%d,\"cpu_ms_per_dispatch\":{", b->n);
    double d = stackcpu_print(stdout, &b->sc, &b->cpu_d0, &b->cpu_d1, n);
    printf(",\"operator\":%.3f},\"cpu_ms_per_dispatch_total\":%.3f,", b->op_d1 * 1e3 / n,
           d + b->op_d1 * 1e3 / n);
    printf("\"machine_busy_dispatch\":%.2f,\"cpu_ms_per_raw_wl_status\":{",
           stackcpu_busy(&b->cpu_d0, &b->cpu_d1));
    double r = stackcpu_print(stdout, &b->sc, &b->cpu_r0, &b->cpu_r1, n);
    printf("},\"cpu_ms_per_raw_wl_status_total\":%.3f,\"machine_busy_raw\":%.2f,", r,
           stackcpu_busy(&b->cpu_r0, &b->cpu_r1));
    /* the hub's own processes alone: what the ratio would be with the workers elsewhere */
    double hd = stackcpu_sum(&b->sc, &b->cpu_d0, &b->cpu_d1, n, "hub-"),
           hr = stackcpu_sum(&b->sc, &b->cpu_r0, &b->cpu_r1, n, "hub-");
    printf("\"hub_cpu_ms_per_dispatch\":%.3f,\"hub_cpu_ms_per_raw_wl_status\":%.3f,"
           "\"hub_cpu_ratio\":%.2f,",
           hd, hr, hd > 0 ? hr / hd : 0.0);
    /* a job's labels through the job and through its status (the hub's processes, Kueue
     * with its validating webhook among them) */
    double jp = b->raw_jp_ms / (2 * n), js = b->raw_js_ms / (2 * n);
    printf("\"hub_cpu_ms_per_raw_job_patch\":%.3f,\"hub_cpu_ms_per_raw_job_meta_status\":%.3f,"
           "\"job_meta_status_cpu_ratio\":%.2f,",
           jp, js, jp > 0 ? js / jp : 0.0);
    printf("\"hub_writes_per_dispatch\":{");
    double wd = b->writes_d ? print_writes(b->writes_d, n) : 0;
    printf("},\"hub_writes_per_dispatch_total\":%.2f,\"hub_writes_per_raw_wl_status\":{", wd);
    double wr = b->writes_r ? print_writes(b->writes_r, n) : 0;
    printf("},\"hub_writes_per_raw_wl_status_total\":%.2f", wr);
    if (b->writes_l) { /* every job's whole life: dispatch, status return, finish */
        printf(",\"cpu_ms_per_job\":{");
        double l = stackcpu_print(stdout, &b->sc, &b->cpu_d0, &b->cpu_l1, n);
        printf(",\"operator\":%.3f},\"cpu_ms_per_job_total\":%.3f,\"hub_writes_per_job\":{",
               b->op_l1 * 1e3 / n, l + b->op_l1 * 1e3 / n);
        double wl = print_writes(b->writes_l, n);
        printf("},\"hub_writes_per_job_total\":%.2f", wl);
    }
    printf("}\n");
}

/* Operator CPU per dispatch over the dispatch window (first hub job created to the
 * last copy placed, from /proc), and its baseline from the same run: the CPU one
 * raw create costs the worker devhub (devhub only). op_cpu_ratio = the first over
 * the second: how many raw creates' worth of server CPU a dispatch costs the
 * operator. Under --callgrind the CPU is valgrind's: read instructions instead. */
static void report_cpu(const struct bench *b)
{
    double op_ms = b->placed > 0 ? b->op_cpu_win * 1e3 / b->placed : 0;
    double raw_ms = b->raw_cpu_s > 0 ? b->raw_cpu_s * 1e3 / b->n : 0;
    printf("{\"bench\":\"dispatch-cpu\",\"n\":%d,\"placed\":%d,\"op_cpu_s\":%.3f,"
           "\"op_cpu_ms_per_dispatch\":%.3f,\"raw_cpu_ms_per_create\":%.3f,"
           "\"op_cpu_ratio\":%.2f,\"callgrind\":%s}\n",
           b->n, b->placed, b->op_cpu_win, op_ms, raw_ms, raw_ms > 0 ? op_ms / raw_ms : 0.0,
           b->callgrind ? "true" : "false");
}

static void report(struct bench *b, const struct raw_rates *rr)
{
    int placed = 0;
    double first = 0, last = 0, last_reserved = 0, first_label = 0;
    double *lat = xcalloc((size_t)b->n, sizeof(double));
    double *lab = xcalloc((size_t)b->n, sizeof(double)); /* reservation -> hub job labelled */
    int labelled = 0;
    for (int i = 0; i < b->n; i++) {
        if (b->labelled_t[i] > 0 && (first_label == 0 || b->labelled_t[i] < first_label))
            first_label = b->labelled_t[i];
        if (b->placed_t[i] == 0)
            continue;
        /* reserved first: from the operator's first write to the copy (all were reserved
         * before it started) */
        double r = b->reserved_first ? (b->labelled_t[i] ? b->labelled_t[i] : b->op_start)
                                     : (b->reserved_t[i] ? b->reserved_t[i] : b->placed_t[i]);
        if (r > b->placed_t[i])
            r = b->placed_t[i]; /* events raced: 0 latency */
        lat[placed++] = b->placed_t[i] - r;
        if (b->labelled_t[i] > 0)
            lab[labelled++] = b->labelled_t[i] > r ? b->labelled_t[i] - r : 0;
        if (b->reserved_t[i] > last_reserved)
            last_reserved = b->reserved_t[i];
        if (first == 0 || r < first)
            first = r;
        if (b->placed_t[i] > last)
            last = b->placed_t[i];
    }
    if (b->reserved_first && first_label > 0 && first_label < first)
        first = first_label;
    qsort(lat, (size_t)placed, sizeof(double), cmp_double);
    qsort(lab, (size_t)labelled, sizeof(double), cmp_double);
    double secs = last - first;
    double rate = secs > 0 ? placed / secs : 0;
    /* the goal's baseline: on the devhub half the raw create rate (a dispatch is 2 writes);
     * on a real server the slowest write a dispatch needs */
    double base = b->real ? rr->slowest : rr->create / 2;
    struct stret_fig sf = {0};
    if (b->st)
        stret_figures(b->st, &sf);
    /* null where a figure means nothing: with everything reserved before the operator
     * starts, its label write is where the dispatch is timed from (0 by construction);
     * the operator's QPS is its own default unless --qps was given */
    char lab50[32] = "null", lab99[32] = "null", qps_j[32] = "null";
    if (!b->reserved_first) {
        snprintf(lab50, sizeof lab50, "%.1f", pct(lab, labelled, 0.5) * 1e3);
        snprintf(lab99, sizeof lab99, "%.1f", pct(lab, labelled, 0.99) * 1e3);
    }
    if (b->qps)
        snprintf(qps_j, sizeof qps_j, "%ld", b->qps);
    /* goal 1's p99 against the ideal (ideal_phase); null where it was not measured */
    char pace_j[32] = "null", ideal_j[32] = "null", ideal_r[32] = "null";
    double p99 = pct(lat, placed, 0.99) * 1e3;
    char created_j[32] = "null"; /* the rate the paced creates came at */
    if (b->pace)
        snprintf(pace_j, sizeof pace_j, "%d", b->pace);
    if (b->pace && b->pace_t1 > b->pace_t0 && b->next > 1)
        snprintf(created_j, sizeof created_j, "%.1f", (b->next - 1) / (b->pace_t1 - b->pace_t0));
    if (b->ideal_ms > 0) {
        snprintf(ideal_j, sizeof ideal_j, "%.2f", b->ideal_ms);
        snprintf(ideal_r, sizeof ideal_r, "%.2f", p99 / b->ideal_ms);
    }
    printf("{\"bench\":\"dispatch\",\"mode\":\"%s\",\"reserved_first\":%s,\"n\":%d,\"placed\":%d,"
           "\"duplicates\":%d,\"cluster1\":%d,"
           "\"cluster2\":%d,\"seconds\":%.3f,\"dispatch_per_s\":%.1f,\"p50_ms\":%.1f,"
           "\"p99_ms\":%.1f,\"max_ms\":%.1f,\"raw_seconds\":%.3f,\"raw_creates_per_s\":%.1f,"
           "\"raw_wl_status_per_s\":%.1f,\"raw_job_patch_per_s\":%.1f,"
           "\"raw_job_meta_status_per_s\":%.1f,\"baseline_per_s\":%.1f,"
           "\"ratio\":%.3f,\"start_to_first_s\":%.3f,"
           "\"reserve_seconds\":%.3f,\"label_p50_ms\":%s,\"label_p99_ms\":%s,"
           "\"operator_qps\":%s,\"job_seconds\":%d,\"status_changes\":%d,"
           "\"status_returned\":%d,\"status_p50_ms\":%.1f,\"status_p99_ms\":%.1f,"
           "\"status_max_ms\":%.1f,\"progress_p50_ms\":%.1f,\"progress_p99_ms\":%.1f,"
           "\"finished\":%d,\"final_returned\":%d,\"final_p50_ms\":%.1f,\"final_p99_ms\":%.1f,"
           "\"pace_per_s\":%s,\"created_per_s\":%s,\"ideal_ms\":%s,\"p99_ideal_ratio\":%s}\n",
           b->real ? "real" : "devhub", b->reserved_first ? "true" : "false", b->n, placed,
           b->duplicates, b->per_cluster[1], b->per_cluster[2], secs, rate,
           pct(lat, placed, 0.5) * 1e3, pct(lat, placed, 0.99) * 1e3,
           placed ? lat[placed - 1] * 1e3 : 0.0, rr->create_s, rr->create, rr->wl_status,
           rr->job_patch, rr->job_meta_status, base, base > 0 ? rate / base : 0.0,
           b->reserved_first && first > 0 ? first - b->op_start : 0.0,
           last_reserved > 0 ? last_reserved - b->created_at : 0.0, lab50, lab99, qps_j, b->job_s,
           sf.changes, sf.returned, sf.all_p50, sf.all_p99, sf.all_max, sf.prog_p50, sf.prog_p99,
           sf.terminal, sf.finals, sf.fin_p50, sf.fin_p99, pace_j, created_j, ideal_j, ideal_r);
    char qps_s[32];
    if (b->qps)
        snprintf(qps_s, sizeof qps_s, "%ld", b->qps);
    else
        snprintf(qps_s, sizeof qps_s, "(its default)");
    /* where the time went: CPU of each child over the whole run */
    double op_cpu = b->op_cpu_s + (b->op_pid ? stackcpu_pid_s(b->op_pid) : 0);
    if (b->npids == NCLUSTERS)
        printf("cpu seconds: hub devhub %.2f, cluster1 %.2f, cluster2 %.2f, operator %.2f\n",
               stackcpu_pid_s(b->pids[0]), stackcpu_pid_s(b->pids[1]), stackcpu_pid_s(b->pids[2]),
               op_cpu);
    else if (b->reserved_first)
        printf("cpu seconds: operator %.2f; hub PATCHes during the dispatch (every client) per "
               "workload: Workload status %.2f, Job (and its status) %.2f\n",
               op_cpu, b->wl_patches / b->n, b->job_patches / b->n);
    else /* the hub's writes are counted around a timed operator (--reserved-first) only */
        printf("cpu seconds: operator %.2f\n", op_cpu);
    printf("dispatch: %d/%d workloads placed (cluster1 %d, cluster2 %d) in %.2f s = %.0f/s "
           "%s; latency p50 %.0f ms, p99 %.0f ms; baseline %.0f/s (%s) -> ratio %.2f; "
           "operator client QPS %s\n",
           placed, b->n, b->per_cluster[1], b->per_cluster[2], secs, rate,
           b->reserved_first ? "from the operator's first write to the last worker copy"
                             : "from quota reservation to worker copy",
           pct(lat, placed, 0.5) * 1e3, pct(lat, placed, 0.99) * 1e3, base,
           b->real ? "slowest raw write of a dispatch" : "half the raw create rate",
           base > 0 ? rate / base : 0.0, qps_s);
    if (b->ideal_ms > 0)
        printf("latency against the ideal: p99 %.1f ms = %.2fx the ideal %.2f ms (the median of %d "
               "chains: the placement's two hub writes at once, then the copy's create)%s\n",
               p99, p99 / b->ideal_ms, b->ideal_ms, b->n_ideal,
               b->pace ? "" : "; not paced: the p99 holds the burst's queue");
    if (b->st)
        printf("status return: %d of %d copy changes shown by the hub's remote-status "
               "annotation, p50 %.0f ms, p99 %.0f ms; %d of %d finished copies shown final by "
               "the hub job, p50 %.0f ms, p99 %.0f ms; together p50 %.0f ms, p99 %.0f ms\n",
               sf.returned, sf.changes, sf.prog_p50, sf.prog_p99, sf.finals, sf.terminal,
               sf.fin_p50, sf.fin_p99, sf.all_p50, sf.all_p99);
    free(lat);
    free(lab);
}

int main(int argc, char **argv)
{
    jx_use_xalloc();
    struct bench b = {.n = 1000, .v = "0"};
    bool asked_reserved_first = false;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        long v = 0;
        if (!strcmp(argv[i], "--keep")) {
            b.keep = true;
            continue;
        }
        if (!strcmp(argv[i], "--callgrind")) {
            b.callgrind = true;
            continue;
        }
        if (!strcmp(argv[i], "--reserved-first")) {
            b.reserved_first = asked_reserved_first = true;
            continue;
        }
        if (i + 1 < argc && !strcmp(argv[i], "--real")) {
            b.real = argv[++i];
            b.reserved_first = true;
            continue;
        }
        if (i + 1 < argc && !strcmp(argv[i], "--op-arg") &&
            b.n_op_args < (int)(sizeof b.op_args / sizeof b.op_args[0])) {
            b.op_args[b.n_op_args++] = argv[++i];
            continue;
        }
        if (i + 1 < argc && (!strcmp(argv[i], "--n") || !strcmp(argv[i], "--timeout") ||
                             !strcmp(argv[i], "--v") || !strcmp(argv[i], "--qps") ||
                             !strcmp(argv[i], "--job-seconds") || !strcmp(argv[i], "--pace"))) {
            errno = 0;
            v = strtol(argv[i + 1], &end, 10);
        }
        if (!end || errno || *end || v < (strcmp(argv[i], "--v") ? 1 : 0) || v > 1000000) {
            fprintf(stderr, "usage: bench-dispatch [--n N (default 1000)] [--timeout SECONDS] "
                            "[--v OPERATOR_LOG_VERBOSITY] [--qps OPERATOR_QPS (burst 2x; default: "
                            "the operator's)] [--keep] [--callgrind] [--reserved-first] "
                            "[--real STACK_DIR] [--op-arg OPERATOR_ARG]... [--job-seconds S] "
                            "[--pace JOBS_PER_S]\n");
            return 2;
        }
        if (!strcmp(argv[i], "--v"))
            snprintf(b.v, sizeof b.v, "%ld", v);
        else if (!strcmp(argv[i], "--n"))
            b.n = (int)v;
        else if (!strcmp(argv[i], "--qps"))
            b.qps = v;
        else if (!strcmp(argv[i], "--job-seconds"))
            b.job_s = (int)v;
        else if (!strcmp(argv[i], "--pace"))
            b.pace = (int)v;
        else
            b.timeout_s = (double)v;
        i++;
    }
    if (b.timeout_s == 0) /* paced: the creates alone take N / pace seconds */
        b.timeout_s = 60 + b.n / 2.0 + (b.pace ? (double)b.n / b.pace : 0);
    b.n_base = b.n >= 400 ? 200 : b.n / 2; /* --callgrind's baseline batch */
    if (b.job_s == 0) /* long enough that kwok's pods end after the last copy is made */
        b.job_s = b.callgrind ? 3600 : 30 + b.n / 20;
    if (b.callgrind && b.n_base < 1) {
        fprintf(stderr, "bench-dispatch: --callgrind needs --n 2 or more\n");
        return 2;
    }
    if (b.callgrind && b.reserved_first) {
        fprintf(stderr, "bench-dispatch: --callgrind does not go with --reserved-first/--real\n");
        return 2;
    }
    if (b.pace && b.real && !asked_reserved_first)
        b.reserved_first = false; /* paced: real Kueue reserves as the jobs come */
    if (b.pace && (b.reserved_first || b.callgrind)) {
        fprintf(stderr, "bench-dispatch: --pace does not go with --reserved-first or "
                        "--callgrind\n");
        return 2;
    }

    /* the repository root: bin/bench-dispatch -> .. */
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        die_msg("cannot find /proc/self/exe", strerror(errno));
        return 1;
    }
    self[len] = 0;
    for (int k = 0; k < 2; k++) { /* strip /bench-dispatch, then /bin */
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = 0;
    }
    memcpy(b.root, self, strlen(self) + 1);
    snprintf(b.work, sizeof b.work, "/tmp/bench-dispatch-XXXXXX");
    if (!mkdtemp(b.work)) {
        die_msg("mkdtemp", strerror(errno));
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    b.loop = ev_loop_new(EVFLAG_AUTO);
    b.reserved_t = xcalloc((size_t)b.n, sizeof(double));
    b.placed_t = xcalloc((size_t)b.n, sizeof(double));
    b.labelled_t = xcalloc((size_t)b.n, sizeof(double));
    b.where = xcalloc((size_t)b.n, sizeof(int));
    b.wl_names = xcalloc((size_t)b.n, sizeof(char *));
    b.order = xcalloc((size_t)b.n, sizeof(int));
    b.st = b.callgrind ? NULL : stret_new(b.n);
    b.jobs_path = kube_path("batch", "v1", "jobs", "default", NULL, NULL);

    int rc = run(&b);
    struct raw_rates rr = {0};
    if (rc == 0)
        rc = raw_all(&b, &rr);
    if (rc == 0 && !b.callgrind) { /* the operator stopped: nothing else on the servers */
        stop_operator(&b);
        rc = ideal_phase(&b);
    }

    if (b.placed > 0) {
        report(&b, &rr);
        report_cpu(&b);
        report_real_cost(&b);
    }
    if (b.timed_out)
        fprintf(stderr, "bench-dispatch: timed out after %.0f s with %d of %d placed\n",
                b.timeout_s, b.placed, b.n);

    for (int c = 0; c < NCLUSTERS; c++)
        kube_client_free(b.cl[c]);
    for (int c = 0; c < NCLUSTERS; c++)
        kube_rest_config_free(b.cfg[c]);
    stop_children(&b);
    if (b.callgrind)
        report_callgrind(&b);
    if (rc == 0 && !b.keep && !b.callgrind)
        remove_work(&b);
    else
        fprintf(stderr, "bench-dispatch: %s; logs kept in %s\n", rc ? "failed" : "done", b.work);
    json_decref(b.sample);
    json_decref(b.writes_d0);
    json_decref(b.writes_d);
    json_decref(b.writes_r);
    json_decref(b.writes_l);
    free(b.reserved_t);
    free(b.placed_t);
    free(b.labelled_t);
    free(b.where);
    free(b.order);
    for (int c = 0; c <= NCLUSTERS; c++)
        free(b.ws[c].path);
    stret_free(b.st);
    for (int i = 0; i < b.n; i++)
        free(b.wl_names[i]);
    free(b.wl_names);
    free(b.jobs_path);
    ev_loop_destroy(b.loop);
    return rc == 0 ? 0 : 1;
}
