/*
 * bench-scale: what `kueue-ks run` costs at scale (issue 12 goal 5): memory with many cached
 * objects, time to ready after its initial lists, time to the first dispatch after a restart.
 *
 * On devhub instances started as child processes on ephemeral loopback ports (a hub emulating
 * Kueue, two workers with two big nodes each):
 *
 *   1. the operator is started on the empty hub (run 1) and, once ready (ClusterMetrics x2,
 *      the AdmissionCheck Active), its RSS is taken: rss_empty_mb;
 *   2. P bare pods are created on each worker, bound to its nodes, with requests and an
 *      owner reference, about the size of a real pod spec (the agents cache every pod);
 *   3. N labelled Jobs are created on the hub; the Kueue emulator makes N Workloads and
 *      reserves them; run 1 dispatches all N (N Job copies on the workers);
 *   4. the operator is stopped, one more Job (scale-<N>) is created and reserved while it is
 *      down, and the bench lists what the operator will list (hub Workloads and Jobs, each
 *      worker's Pods, Jobs and Nodes), timed one after the other: lists_s and list_mb, the
 *      baselines of this run;
 *   5. the operator is started again (run 2, from exec). Polled every 10 ms: /readyz, and the
 *      copy of scale-<N> on either worker: first_dispatch_s = exec -> that copy seen;
 *      ready: /readyz answers 200 and both agents have written ClusterMetrics again (a new
 *      resourceVersion), i.e. the hub is synced and the workers' data computed; ready_s =
 *      ready - the end of the initial lists (the last "informer synced" line of run 2's log,
 *      every informer: hub, copies, agents); rss_mb: run 2's RSS at that point, rss_peak_mb
 *      the largest sample (every 10 ms) since its exec, rss_settled_mb its RSS SETTLE_S
 *      later (the operator gives free heap pages back every 5 s, pkg/manager).
 *
 * --real STACK_DIR: the same phases on a running real stack started with `REAL_DIR=STACK_DIR
 * REAL_NO_OPERATOR=1 scripts/realstack/stack.sh up` (kube-apiserver + etcd, real Kueue on the
 * hub, kwok workers; kubeconfigs STACK_DIR/<cluster>.kubeconfig, examples/setup applied), as
 * bench-dispatch --real uses it: the bench adds one kwok node per worker (<cluster>-bench-node,
 * kept) with room for the N copies' pods and the P bare pods, which are bound to it without
 * an owner (see worker_pod); once the operator has set the ClusterQueue's quota from the nodes
 * the N jobs are created and real Kueue reserves them (about 3/s on the development machine),
 * and kwok runs the copies' pods (one more cached pod per copy). Use a fresh stack per run: the
 * objects stay on it.
 *
 * Prints one JSON line
 *   {"bench":"scale","mode":"devhub"|"real","workloads":N,"jobs":N,"pods_per_worker":P,
 *    "copies":N,"objects":..,"rss_mb":..,
 *    "rss_peak_mb":..,"rss_settled_mb":..,"rss_empty_mb":..,"bytes_per_object":..,"ready_s":..,
 *    "first_dispatch_s":..,"lists_s":..,"list_mb":..,"rss_ratio":..,"ready_ratio":..,
 *    "first_dispatch_ratio":..,"ready_cpu_s":..,"first_dispatch_cpu_s":..,
 *    "packed_cache":true|false,"settled_heap_mb":..,"settled_pool_mb":..,
 *    "settled_files_mb":..,"settled_other_mb":..,"workload_list_s":..,"workload_list_mb":..,
 *    "first_dispatch_over_workload_list":..}
 * objects: the items of the baseline's lists but Nodes, what the operator caches (N + 1
 * Workloads and Jobs, 2P Pods, N copies, on the real stack also the copies' N pods);
 * bytes_per_object = (rss_mb - rss_empty_mb) / objects;
 * rss_ratio = rss_mb / list_mb (memory against the JSON the server sent for the same objects);
 * ready_ratio = ready_s / lists_s and first_dispatch_ratio = first_dispatch_s / lists_s (the
 * bench's own sequential lists of the same collections); ready_cpu_s and first_dispatch_cpu_s:
 * the CPU time (user + system) the restarted operator had used from its exec to ready and to
 * the first dispatch (wall-clock times follow the machine's load; these much less);
 * workload_list_s: the server's answer to the hub's Workload list alone, asked as the operator's
 * informer asks it (resourceVersion=0) while the operator is down, its body dropped as it
 * arrives (workload_list_mb): what a restart's first dispatch waits for at least, whatever the
 * client; first_dispatch_over_workload_list = first_dispatch_s / workload_list_s;
 * settled_*_mb: rss_settled_mb by mapping (/proc/PID/smaps): malloc's heap (the packed
 * stores), the JSON trees' slab pool (pkg/util/slab.h; 0 in a build without it), the binary
 * and its libraries, and the rest. And one human line.
 *
 * Options: --real STACK_DIR, --n N (default 10000; 1000 with --real), --pods P (default 10000;
 * 1000 with --real), --timeout SECONDS (per phase, default 120 + N/4 + P/100; with --real
 * 120 + N/2 + P/50), --keep (keep the work directory with the children's logs),
 * --op-v V (the operator's --v, for its request log in op<k>.log; default 0),
 * --op-arg ARG (repeatable, at most 8) passes ARG to both runs of `kueue-ks run`;
 * --packed-cache=false (the operator's decoded stores; packed, its default, otherwise), --massif
 * (run 2, the restarted operator, under `valgrind --tool=massif --vgdb=yes`: a detailed heap
 * snapshot at ready and one once settled, massif.ready and massif.settled, with massif.out, the
 * whole profile written at exit, kept in the work directory; read them with ms_print; the times and
 * the RSS are then valgrind's, not the operator's).
 * Exit 0 when every phase completed, 1 otherwise (the work directory is then kept and named).
 * Children get SIGTERM on exit (SIGKILL if the bench dies: PDEATHSIG).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "pkg/json/jsonx.h"
#include "bench/opcmd.h"
#include "bench/proc.h"
#include "bench/realstack.h"
#include "pkg/kube/client.h"
#include "pkg/kube/kubeconfig.h"
#include "pkg/quantity/quantity.h"
#include "pkg/util/clock.h"
#include "pkg/util/err.h"
#include "pkg/util/mtune.h"
#include "pkg/util/slab.h"
#include "pkg/util/xalloc.h"

#define NCLUSTERS      3 /* hub, cluster1, cluster2 */
#define KUEUE_GV       "kueue.x-k8s.io", "v1beta2"
#define WINDOW         16 /* creates in flight */
#define POLL_US        10000
#define SETTLE_S       6.0 /* after ready: one heap trim of the operator (every 5 s) has run */
#define BENCH_MAX_BODY ((size_t)1 << 30) /* the bench clients' response cap */

static const char *const cluster_names[NCLUSTERS] = {"hub", "cluster1", "cluster2"};

/* A process's resident set by kind of mapping (/proc/PID/smaps), in MB. */
struct rss_parts {
    double heap;  /* [heap]: malloc's arena (the packed stores, their indexes, buffers) */
    double pool;  /* the anonymous range of SLAB_RESERVE_DEFAULT bytes: the JSON trees' pool */
    double files; /* file-backed: the binary and its libraries */
    double other; /* the rest: malloc's mmapped chunks, stacks, the pool's bookkeeping */
};

struct bench {
    int n, pods;
    double timeout_s;
    bool keep;
    int op_v;               /* --op-v: the operator's --v */
    bool packed;            /* --packed-cache[=BOOL], passed to the operator (its default: true) */
    const char *op_args[8]; /* --op-arg: extra operator arguments, both runs */
    int n_op_args;
    bool massif;      /* --massif: run 2 under valgrind's massif */
    const char *real; /* --real DIR: a running real stack (REAL_NO_OPERATOR=1), else devhubs */
    char root[PATH_MAX];
    char work[64];
    pid_t pids[NCLUSTERS];
    int npids;
    pid_t op_pid;
    int op_run;      /* 1, 2: which op<k>.log */
    int health_port; /* the operator's, from its log once it listens (0: not yet) */
    struct ev_loop *loop;
    struct kube_client *cl[NCLUSTERS];
    struct kube_rest_config *cfg[NCLUSTERS];
    /* a synchronous call */
    bool done;
    int rc;
    json_t *body;
    size_t raw_len;
    char errmsg[512];
    /* creates */
    int c_target; /* cluster the creates go to */
    json_t *(*make)(const struct bench *b, int c, int i);
    int next, count, in_flight, failed;
    /* figures */
    double rss_empty_mb, rss_mb, rss_peak_mb, rss_settled_mb, lists_s, list_mb, ready_s, first_s;
    double wl_list_s; /* the hub's Workload list as the informer asks it, its body discarded */
    size_t wl_list_bytes;
    struct rss_parts settled;        /* rss_settled_mb by mapping */
    double ready_cpu_s, first_cpu_s; /* run 2's CPU time from its exec to ready / first dispatch */
    size_t objects; /* items of the baseline lists but Nodes: what the operator caches */
};

static void die_msg(const char *what, const char *detail)
{
    fprintf(stderr, "bench-scale: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
}

/* The kubeconfig of cluster c: the devhub's in the work directory, or the real stack's. */
static void kc_path(const struct bench *b, int c, char *out, size_t n)
{
    if (b->real)
        snprintf(out, n, "%s/%s.kubeconfig", b->real, cluster_names[c]);
    else
        snprintf(out, n, "%s/%s.kc", b->work, cluster_names[c]);
}

/* ---- child processes -------------------------------------------------- */

/* The child is returned once it has exec'd (or died): until then it is a copy of this
 * process, and its RSS (the pages it shares with the bench, which holds its own lists'
 * bodies) is not the operator's. A close-on-exec pipe says when: read() sees its end. */
static pid_t spawn(struct bench *b, const char *log, char *const argv[])
{
    char *logpath = xasprintf("%s/%s", b->work, log);
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        int rc = -errno;
        free(logpath);
        return rc;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int err = errno;
    close(p[1]);
    char c;
    while (pid > 0 && read(p[0], &c, 1) < 0 && errno == EINTR)
        ;
    close(p[0]);
    free(logpath);
    return pid < 0 ? -err : pid;
}

static void stop_pid(pid_t pid, double grace_s)
{
    kill(pid, SIGTERM);
    double deadline = clock_mono_s() + grace_s;
    while (waitpid(pid, NULL, WNOHANG) == 0) {
        if (clock_mono_s() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            return;
        }
        usleep(10000);
    }
}

static void stop_operator(struct bench *b)
{
    /* under massif the exit writes the profile: give it time */
    if (b->op_pid > 0)
        stop_pid(b->op_pid, b->massif ? 120 : 10);
    b->op_pid = 0;
}

/* Resident set of a process in MB (VmRSS), -1 if unknown. */
static double rss_mb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    double mb = -1;
    while (fgets(line, sizeof line, f)) {
        long kb;
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            mb = (double)kb / 1024.0;
    }
    fclose(f);
    return mb;
}

/* p's resident set split by mapping; all -1 if smaps cannot be read. */
static void rss_split(pid_t pid, struct rss_parts *out)
{
    char path[64], line[512];
    *out = (struct rss_parts){-1, -1, -1, -1};
    snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    *out = (struct rss_parts){0};
    double *cur = &out->other;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char name[256] = "";
        long kb;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255s", &lo, &hi, name) >= 2 &&
            strchr(line, '-') < strchr(line, ' ')) {
            if (!strcmp(name, "[heap]"))
                cur = &out->heap;
            else if (!name[0] && hi - lo == SLAB_RESERVE_DEFAULT)
                cur = &out->pool;
            else if (name[0] == '/')
                cur = &out->files;
            else
                cur = &out->other;
        } else if (sscanf(line, "Rss: %ld kB", &kb) == 1) {
            *cur += (double)kb / 1024.0;
        }
    }
    fclose(f);
}

static int start_devhub(struct bench *b, int c)
{
    char bin[PATH_MAX + 32], crd1[PATH_MAX + 32], crd2[PATH_MAX + 32], kc[128], log[32], nodes[160];
    snprintf(bin, sizeof bin, "%s/bin/kueue-ks-devhub", b->root);
    snprintf(crd1, sizeof crd1, "%s/devhub/crds", b->root);
    snprintf(crd2, sizeof crd2, "%s/config/crd", b->root);
    snprintf(kc, sizeof kc, "%s/%s.kc", b->work, cluster_names[c]);
    snprintf(log, sizeof log, "%s.log", cluster_names[c]);
    /* two nodes per worker, each able to hold every job and every pod of the bench */
    snprintf(nodes, sizeof nodes, "2x cpu=%d,memory=%dGi,pods=%d;labels=instance=spot",
             b->n / 10 + b->pods / 100 + 8, b->n / 100 + b->pods / 100 + 8, b->n + b->pods + 10);
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
    pid_t pid = spawn(b, log, argv);
    if (pid < 0)
        return (int)pid;
    b->pids[b->npids++] = pid;
    return 0;
}

static int start_operator(struct bench *b)
{
    char hub[PATH_MAX], k1[PATH_MAX], k2[PATH_MAX], log[32], v[16], out[PATH_MAX + 32];
    kc_path(b, 0, hub, sizeof hub);
    kc_path(b, 1, k1, sizeof k1);
    kc_path(b, 2, k2, sizeof k2);
    /* port 0: the operator binds a free port and logs it ("serving health probes" port=N); a
     * port picked here could be taken before the operator binds it */
    b->health_port = 0;
    snprintf(log, sizeof log, "op%d.log", ++b->op_run);
    snprintf(v, sizeof v, "--v=%d", b->op_v);
    snprintf(out, sizeof out, "--massif-out-file=%s/massif.out", b->work);
    /* massif for the restarted operator only: the first run is set-up */
    bool massif = b->massif && b->op_run == 2;
    const char *const vg[] = {"/usr/bin/valgrind",
                              "--tool=massif",
                              "--vgdb=yes",
                              "--threshold=0.1", /* the small holders add up: 0.1 % of the heap */
                              "--depth=40",
                              out,
                              NULL};
    struct opcmd *c = xcalloc(1, sizeof *c);
    opcmd_init(c, massif ? vg : NULL, b->root, hub, "127.0.0.1:0", k1, k2);
    opcmd_push(c, v);
    opcmd_push(c, b->packed ? "--packed-cache=true" : "--packed-cache=false");
    for (int i = 0; i < b->n_op_args; i++)
        opcmd_push(c, b->op_args[i]);
    /* valgrind does not follow the operator's exec of itself with glibc's tunables
     * (pkg/util/mtune.h): with them set it runs on under massif */
    if (massif)
        setenv("GLIBC_TUNABLES", MTUNE_GLIBC_TUNABLES, 0);
    pid_t pid = spawn(b, log, c->argv);
    free(c);
    if (pid < 0)
        return (int)pid;
    b->op_pid = pid;
    return 0;
}

/* The health port op<run>.log reports, 0 while it has not been logged yet. */
static int logged_health_port(const struct bench *b)
{
    char *path = xasprintf("%s/op%d.log", b->work, b->op_run);
    FILE *f = fopen(path, "r");
    free(path);
    if (!f)
        return 0;
    char line[1024];
    int port = 0;
    while (!port && fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "msg=\"serving health probes\"");
        p = p ? strstr(p, " port=") : NULL;
        if (p)
            port = (int)strtol(p + 6, NULL, 10);
    }
    fclose(f);
    return port;
}

/* 1 when the operator's /readyz answers 200, 0 otherwise. */
static int readyz(struct bench *b)
{
    if (!b->health_port)
        b->health_port = logged_health_port(b);
    if (!b->health_port)
        return 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)b->health_port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    char buf[64] = {0};
    const char req[] = "GET /readyz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    int ok = 0;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        write(fd, req, sizeof req - 1) == (ssize_t)(sizeof req - 1) &&
        read(fd, buf, sizeof buf - 1) > 12)
        ok = strncmp(buf + 9, "200", 3) == 0;
    close(fd);
    return ok;
}

/* ---- synchronous calls on the loop --------------------------------------- */

static void sync_done(void *ud, const struct kube_result *r)
{
    struct bench *b = ud;
    b->done = true;
    b->rc = r->rc;
    b->body = r->body ? json_incref(r->body) : NULL;
    b->raw_len = r->raw_len;
    snprintf(b->errmsg, sizeof b->errmsg, "%s", r->rc ? r->err->msg : "");
}

/* `req` on cluster c, waited for; *out (may be NULL): the answer's body. */
static int sync_req(struct bench *b, int c, const struct kube_request *req, json_t **out)
{
    struct err e = {0};
    b->done = false;
    b->body = NULL;
    int rc = kube_client_do(b->cl[c], req, sync_done, b, NULL, &e);
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

static int sync_call(struct bench *b, int c, const char *method, const char *path, json_t *body,
                     json_t **out)
{
    struct kube_request req = {.method = method, .path = path, .body = body};
    return sync_req(b, c, &req, out);
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
    snprintf(cpu, sizeof cpu, "%dm", (b->n + 1) * 100);
    snprintf(mem, sizeof mem, "%dMi", b->n + 1);
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

/* --real: one kwok node per worker (as scripts/realstack/stack.sh makes them; the stack's 4
 * nodes take 110 pods each) with room for every copy's pod and the worker's P bare pods, which
 * are bound to it; kept if already there. cluster1's is instance=spot, the flavor real Kueue
 * reserves first, cluster2's instance=h100, as their other nodes. */
static int setup_real(struct bench *b)
{
    for (int c = 1; c < NCLUSTERS; c++) {
        char name[64];
        snprintf(name, sizeof name, "%s-bench-node", cluster_names[c]);
        json_t *node = bench_kwok_node(name, c == 1 ? "spot" : "h100", b->n / 10 + b->pods / 50 + 8,
                                       b->n / 100 + b->pods / 100 + 8, b->n + b->pods + 10);
        int rc = sync_call(b, c, "POST", "/api/v1/nodes", node, NULL);
        json_decref(node);
        if (rc < 0 && rc != -EEXIST) {
            die_msg("bench node not created", b->errmsg);
            return rc;
        }
    }
    return 0;
}

/* --real: wait (the operator running) until the ClusterQueue's spot CPU quota, which the
 * operator's quota controller sets from the workers' nodes, holds the N + 1 jobs (100m each):
 * real Kueue reserves only what fits. */
static int wait_quota(struct bench *b)
{
    char *path = kube_path(KUEUE_GV, "clusterqueues", NULL, "cluster-queue-ks", NULL);
    double deadline = clock_mono_s() + 60;
    int rc = -ETIMEDOUT;
    while (rc && clock_mono_s() < deadline) {
        json_t *cq = NULL;
        if (sync_call(b, 0, "GET", path, NULL, &cq) == 0 &&
            bench_spot_cpu_holds(cq, (int64_t)(b->n + 1) * 100))
            rc = 0;
        json_decref(cq);
        if (rc)
            usleep(200000);
    }
    free(path);
    if (rc)
        die_msg("the ClusterQueue's spot CPU quota never held (N + 1) x 100m", NULL);
    return rc;
}

/* ---- objects -------------------------------------------------------------- */

static json_t *hub_job(const struct bench *b, int c, int i)
{
    (void)c;
    char name[32];
    snprintf(name, sizeof name, "scale-%d", i);
    /* on the real stack kwok ends a copy's pod after this (test/realstack/kwok-stages.yaml):
     * longer than any run, so the copies stay active */
    const char *dur = b->real ? "86400s" : "600s";
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:i, s:i, s:b, s:{s:{s:s, "
                     "s:[{s:s, s:s, s:[s], s:{s:{s:s, s:s}}}]}}}}",
                     "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", name, "namespace",
                     "default", "labels", "kueue.x-k8s.io/queue-name", "user-queue-ks", "spec",
                     "parallelism", 1, "completions", 1, "suspend", 1, "template", "spec",
                     "restartPolicy", "Never", "containers", "name", "c", "image", "busybox",
                     "args", dur, "resources", "requests", "cpu", "100m", "memory", "1Mi");
}

/* A bound pod with what a Job controller's pod carries (labels, owner, a container with
 * requests and limits, env, a volume mount, tolerations), on the devhub's nodes <cluster>-node-0/1.
 * On the real stack on the bench node (setup_real), where kwok runs it, and without the owner:
 * the garbage collector deletes a pod whose owner does not exist, and kwok ends a Job's pods. */
static json_t *worker_pod(const struct bench *b, int c, int i)
{
    char name[48], node[48], owner[48], job[32];
    snprintf(name, sizeof name, "load-%d-%c%c%c%c%c", i, 'a' + i % 26, 'a' + i / 26 % 26,
             'a' + i / 676 % 26, 'a' + c, 'x');
    if (b->real)
        snprintf(node, sizeof node, "%s-bench-node", cluster_names[c]);
    else
        snprintf(node, sizeof node, "%s-node-%d", cluster_names[c], i % 2);
    snprintf(job, sizeof job, "load-%d", i / 4);
    snprintf(owner, sizeof owner, "5f1d2c3b-%04x-4a5b-8c7d-%012d", (i / 4) & 0xffff, i / 4);
    json_t *pod = json_pack(
        "{s:s, s:s,"
        " s:{s:s, s:s, s:{s:s, s:s, s:s},"
        "    s:[{s:s, s:s, s:s, s:s, s:b, s:b}]},"
        " s:{s:s, s:s, s:s, s:i,"
        "    s:[{s:s, s:s, s:[s,s], s:{s:{s:s, s:s}, s:{s:s, s:s}},"
        "        s:[{s:s, s:s}], s:[{s:s, s:s, s:b}], s:s, s:s}],"
        "    s:[{s:s, s:{}}],"
        "    s:[{s:s, s:s, s:s, s:i}, {s:s, s:s, s:s, s:i}]}}",
        "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace", "default",
        "labels", "batch.kubernetes.io/job-name", job, "batch.kubernetes.io/controller-uid", owner,
        "app", "load", "ownerReferences", "apiVersion", "batch/v1", "kind", "Job", "name", job,
        "uid", owner, "controller", 1, "blockOwnerDeletion", 1, "spec", "nodeName", node,
        "restartPolicy", "Never", "schedulerName", "default-scheduler",
        "terminationGracePeriodSeconds", 30, "containers", "name", "main", "image",
        "registry.example.com/ml/trainer:1.2.3", "args", "--epochs", "10", "resources", "requests",
        "cpu", "10m", "memory", "1Mi", "limits", "cpu", "20m", "memory", "2Mi", "env", "name",
        "MODE", "value", "train", "volumeMounts", "name", "scratch", "mountPath", "/scratch",
        "readOnly", 0, "terminationMessagePath", "/dev/termination-log", "imagePullPolicy",
        "IfNotPresent", "volumes", "name", "scratch", "emptyDir", "tolerations", "key",
        "node.kubernetes.io/not-ready", "operator", "Exists", "effect", "NoExecute",
        "tolerationSeconds", 300, "key", "node.kubernetes.io/unreachable", "operator", "Exists",
        "effect", "NoExecute", "tolerationSeconds", 300);
    if (b->real)
        json_object_del(json_object_get(pod, "metadata"), "ownerReferences");
    return pod;
}

static void create_next(struct bench *b);

static void created(void *ud, const struct kube_result *r)
{
    struct bench *b = ud;
    if (r->rc && r->rc != -EEXIST && b->failed++ == 0)
        die_msg("create failed", r->err->msg);
    b->in_flight--;
    create_next(b);
}

static void create_next(struct bench *b)
{
    const char *g = b->make == hub_job ? "batch" : NULL;
    const char *res = b->make == hub_job ? "jobs" : "pods";
    while (b->in_flight < WINDOW && b->next < b->count) {
        json_t *obj = b->make(b, b->c_target, b->next++);
        char *path = kube_path(g, "v1", res, "default", NULL, NULL);
        struct err e = {0};
        if (kube_client_post(b->cl[b->c_target], path, obj, created, b, NULL, &e) < 0) {
            if (b->failed++ == 0)
                die_msg("create not submitted", e.msg);
        } else {
            b->in_flight++;
        }
        free(path);
        json_decref(obj);
    }
}

/* Create objects from..count-1 on cluster c, WINDOW in flight; 0 or -EIO. */
static int create_many(struct bench *b, int c, json_t *(*make)(const struct bench *, int, int),
                       int from, int count)
{
    b->c_target = c;
    b->make = make;
    b->next = from;
    b->count = count;
    b->failed = 0;
    create_next(b);
    while (b->in_flight > 0)
        ev_run(b->loop, EVRUN_ONCE);
    return b->failed ? -EIO : 0;
}

/* ---- waiting ---------------------------------------------------------------- */

static bool cond_true(const json_t *obj, const char *type)
{
    json_t *c = jx_conds_find(json_object_get(json_object_get(obj, "status"), "conditions"), type);
    const char *st = json_string_value(json_object_get(c, "status"));
    return st && !strcmp(st, "True");
}

/* Items of a list on cluster c (NULL on failure; new reference); *bytes: the response size. */
static json_t *list(struct bench *b, int c, const char *group, const char *version,
                    const char *resource, size_t *bytes)
{
    char *path = kube_path(group, version, resource, NULL, NULL, NULL);
    json_t *l = NULL;
    int rc = sync_call(b, c, "GET", path, NULL, &l);
    free(path);
    if (bytes)
        *bytes = b->raw_len;
    json_t *items = rc == 0 ? json_incref(json_object_get(l, "items")) : NULL;
    json_decref(l);
    return items;
}

/* The operator (run 1) is ready: ClusterMetrics x2 and the AdmissionCheck Active. */
static int wait_operator(struct bench *b)
{
    double deadline = clock_mono_s() + 60;
    while (clock_mono_s() < deadline) {
        json_t *cm = list(b, 0, "galaxy.kubestellar.io", "v1alpha1", "clustermetrics", NULL);
        json_t *ac = list(b, 0, KUEUE_GV, "admissionchecks", NULL);
        bool ok = json_array_size(cm) == 2 && cond_true(json_array_get(ac, 0), "Active");
        json_decref(cm);
        json_decref(ac);
        if (ok)
            return 0;
        usleep(100000);
    }
    die_msg("operator not ready in time (no ClusterMetrics x2 / AdmissionCheck Active)", NULL);
    return -ETIMEDOUT;
}

/* Number of Jobs on worker c named scale-<i> (the copies). */
static int copies(struct bench *b, int c)
{
    json_t *items = list(b, c, "batch", "v1", "jobs", NULL);
    int n = 0;
    size_t i;
    json_t *j;
    json_array_foreach(items, i, j)
    {
        const char *name =
            json_string_value(json_object_get(json_object_get(j, "metadata"), "name"));
        n += name && !strncmp(name, "scale-", 6);
    }
    json_decref(items);
    return n;
}

static int wait_copies(struct bench *b, int want)
{
    double deadline = clock_mono_s() + b->timeout_s;
    int have = 0;
    while (clock_mono_s() < deadline) {
        have = copies(b, 1) + copies(b, 2);
        if (have >= want)
            return 0;
        usleep(500000);
    }
    fprintf(stderr, "bench-scale: %d of %d copies after %.0f s\n", have, want, b->timeout_s);
    return -ETIMEDOUT;
}

/* The Workload of hub job `job` holds quota. */
static int wait_reserved(struct bench *b, const char *job)
{
    double deadline = clock_mono_s() + b->timeout_s;
    while (clock_mono_s() < deadline) {
        json_t *items = list(b, 0, KUEUE_GV, "workloads", NULL);
        bool ok = false;
        size_t i;
        json_t *w;
        json_array_foreach(items, i, w)
        {
            json_t *o = json_array_get(
                json_object_get(json_object_get(w, "metadata"), "ownerReferences"), 0);
            const char *name = json_string_value(json_object_get(o, "name"));
            if (name && !strcmp(name, job) && cond_true(w, "QuotaReserved"))
                ok = true;
        }
        json_decref(items);
        if (ok)
            return 0;
        usleep(500000);
    }
    die_msg("not reserved in time", job);
    return -ETIMEDOUT;
}

/* resourceVersion of ClusterMetrics cluster1 and cluster2 into rv[2] ("" when absent). */
static void cm_versions(struct bench *b, char rv[2][32])
{
    for (int k = 0; k < 2; k++) {
        char *path = kube_path("galaxy.kubestellar.io", "v1alpha1", "clustermetrics", NULL,
                               cluster_names[k + 1], NULL);
        json_t *o = NULL;
        rv[k][0] = 0;
        if (sync_call(b, 0, "GET", path, NULL, &o) == 0)
            snprintf(rv[k], 32, "%s",
                     json_string_value(
                         json_object_get(json_object_get(o, "metadata"), "resourceVersion"))
                         ?: "");
        json_decref(o);
        free(path);
    }
}

/* The baselines: the lists the operator makes, one after the other. */
static int baseline_lists(struct bench *b)
{
    struct {
        int c;
        const char *g, *v, *r;
    } ls[] = {{0, KUEUE_GV, "workloads"}, {0, "batch", "v1", "jobs"}, {1, NULL, "v1", "pods"},
              {2, NULL, "v1", "pods"},    {1, "batch", "v1", "jobs"}, {2, "batch", "v1", "jobs"},
              {1, NULL, "v1", "nodes"},   {2, NULL, "v1", "nodes"}};
    size_t bytes = 0;
    double t0 = clock_mono_s();
    for (size_t i = 0; i < sizeof ls / sizeof ls[0]; i++) {
        size_t n = 0;
        json_t *items = list(b, ls[i].c, ls[i].g, ls[i].v, ls[i].r, &n);
        if (!items) {
            die_msg("baseline list failed", b->errmsg);
            return -EIO;
        }
        if (strcmp(ls[i].r, "nodes"))
            b->objects += json_array_size(items);
        json_decref(items);
        bytes += n;
    }
    b->lists_s = clock_mono_s() - t0;
    b->list_mb = (double)bytes / (1024.0 * 1024.0);
    return 0;
}

static int count_body(void *ud, const char *data, size_t len, struct err *e)
{
    (void)data;
    (void)e;
    ((struct bench *)ud)->wl_list_bytes += len;
    return 0;
}

/* The first dispatch after a restart waits for the hub's Workload list: the server's own time
 * for it, asked as the informer asks it (resourceVersion=0: the watch cache, whole), the body
 * counted and dropped as it arrives (no parse). */
static int workload_list_baseline(struct bench *b)
{
    char *path = kube_path(KUEUE_GV, "workloads", NULL, NULL, NULL);
    const char *const query[] = {"resourceVersion", "0", NULL};
    struct kube_request req = {
        .method = "GET", .path = path, .query = query, .on_body = count_body};
    b->wl_list_bytes = 0;
    double t0 = clock_mono_s();
    int rc = sync_req(b, 0, &req, NULL);
    b->wl_list_s = clock_mono_s() - t0;
    free(path);
    if (rc < 0)
        die_msg("Workload list failed", b->errmsg);
    return rc;
}

/* The wall-clock time of the last "informer synced" line of op<run>.log, 0 if none. */
static double last_synced(const struct bench *b, int run)
{
    char *path = xasprintf("%s/op%d.log", b->work, run);
    FILE *f = fopen(path, "r");
    free(path);
    if (!f)
        return 0;
    char line[1024];
    double last = 0;
    while (fgets(line, sizeof line, f)) {
        struct tm tm = {0};
        int ms = 0;
        if (!strstr(line, "msg=\"informer synced\"") ||
            sscanf(line, "ts=%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7)
            continue;
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        double t = (double)timegm(&tm) + ms / 1000.0;
        if (t > last)
            last = t;
    }
    fclose(f);
    return last;
}

static double now_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 1 when hub job `name`'s copy exists on a worker. */
static bool copy_exists(struct bench *b, const char *name)
{
    for (int c = 1; c < NCLUSTERS; c++) {
        char *path = kube_path("batch", "v1", "jobs", "default", name, NULL);
        int rc = sync_call(b, c, "GET", path, NULL, NULL);
        free(path);
        if (rc == 0)
            return true;
    }
    return false;
}

/* --massif: a detailed snapshot of the restarted operator's heap into <work>/massif.<name>
 * (vgdb asks the valgrind gdbserver; a failure is reported, the run goes on). */
static void massif_snapshot(struct bench *b, const char *name)
{
    if (!b->massif)
        return;
    char pid[32], *file = xasprintf("%s/massif.%s", b->work, name);
    snprintf(pid, sizeof pid, "--pid=%d", (int)b->op_pid);
    char *argv[] = {"/usr/bin/vgdb", pid, "detailed_snapshot", file, NULL};
    pid_t p = spawn(b, "vgdb.log", argv);
    int st = 0;
    if (p < 0 || waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die_msg("vgdb detailed_snapshot failed (see vgdb.log)", name);
    free(file);
}

/* Run 2: restart and time it (see the header). */
static int restart(struct bench *b)
{
    char rv0[2][32], rv[2][32], extra[32];
    snprintf(extra, sizeof extra, "scale-%d", b->n);
    cm_versions(b, rv0);
    double t0 = now_wall(), m0 = clock_mono_s();
    int rc = start_operator(b);
    if (rc < 0)
        return rc;
    double ready_t = 0, first_t = 0, deadline = m0 + b->timeout_s;
    bool is_ready = false;
    while ((!is_ready || !first_t) && clock_mono_s() < deadline) {
        double rss = rss_mb(b->op_pid);
        if (rss > b->rss_peak_mb)
            b->rss_peak_mb = rss;
        if (!first_t && copy_exists(b, extra)) {
            first_t = now_wall();
            b->first_cpu_s = bench_cpu_s(b->op_pid);
        }
        if (!is_ready && readyz(b)) {
            cm_versions(b, rv);
            is_ready = rv[0][0] && rv[1][0] && strcmp(rv[0], rv0[0]) && strcmp(rv[1], rv0[1]);
            if (is_ready) {
                ready_t = now_wall();
                b->ready_cpu_s = bench_cpu_s(b->op_pid);
            }
        }
        usleep(POLL_US);
    }
    if (!is_ready || !first_t) {
        die_msg(is_ready ? "no first dispatch after the restart" : "not ready after the restart",
                NULL);
        return -ETIMEDOUT;
    }
    b->rss_mb = rss_mb(b->op_pid);
    if (b->rss_mb > b->rss_peak_mb)
        b->rss_peak_mb = b->rss_mb;
    massif_snapshot(b, "ready");
    /* the operator returns free heap pages every 5 s (pkg/manager): RSS once that ran */
    double settle = clock_mono_s() + SETTLE_S;
    while (clock_mono_s() < settle)
        usleep(POLL_US);
    b->rss_settled_mb = rss_mb(b->op_pid);
    rss_split(b->op_pid, &b->settled);
    massif_snapshot(b, "settled");
    double lists_end = last_synced(b, 2);
    b->ready_s = lists_end > 0 ? ready_t - lists_end : -1;
    b->first_s = first_t - t0;
    return 0;
}

static int start_cluster_clients(struct bench *b)
{
    int rc;
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
            die_msg(b->real ? "no kubeconfig in the stack directory (is the real stack up?)"
                            : "devhub did not start (no kubeconfig)",
                    e.msg);
            return rc;
        }
        /* The baseline lists are whole: a real worker's 20,000 pods at the goal's shape are
         * more than the client's default body cap of 64 MiB of JSON. */
        struct kube_client_opts co = {.qps = -1, .max_body = BENCH_MAX_BODY};
        if ((rc = kube_client_new(b->loop, b->cfg[c], &co, NULL, &b->cl[c], &e)) < 0) {
            die_msg("client", e.msg);
            return rc;
        }
        if ((rc = sync_call(b, c, "GET", "/version", NULL, NULL)) < 0) {
            die_msg(b->real ? "API server not answering" : "devhub not ready", b->errmsg);
            return rc;
        }
    }
    return 0;
}

/* Steps 1-2: the clusters (devhubs started, or the real stack's bench nodes), the operator
 * on the empty hub (rss_empty_mb), the pods on the workers. */
static int setup(struct bench *b)
{
    int rc = 0;
    for (int c = 0; c < NCLUSTERS && rc == 0 && !b->real; c++)
        rc = start_devhub(b, c);
    if (rc == 0)
        rc = start_cluster_clients(b);
    if (rc == 0)
        rc = b->real ? setup_real(b) : setup_hub(b);
    if (rc == 0)
        rc = start_operator(b);
    if (rc == 0)
        rc = wait_operator(b);
    if (rc < 0)
        return rc;
    b->rss_empty_mb = rss_mb(b->op_pid);
    for (int c = 1; c < NCLUSTERS && rc == 0; c++)
        rc = create_many(b, c, worker_pod, 0, b->pods);
    if (rc == 0 && b->real)
        rc = wait_quota(b);
    return rc;
}

static int run(struct bench *b)
{
    int rc = setup(b);
    if (rc == 0)
        rc = create_many(b, 0, hub_job, 0, b->n);
    if (rc == 0)
        rc = wait_copies(b, b->n);
    if (rc < 0)
        return rc;
    stop_operator(b);
    char extra[32];
    snprintf(extra, sizeof extra, "scale-%d", b->n);
    rc = create_many(b, 0, hub_job, b->n, b->n + 1);
    if (rc == 0)
        rc = wait_reserved(b, extra);
    if (rc == 0)
        rc = workload_list_baseline(b);
    if (rc == 0)
        rc = baseline_lists(b);
    if (rc == 0)
        rc = restart(b);
    return rc;
}

static void report(const struct bench *b)
{
    double bpo =
        b->objects ? (b->rss_mb - b->rss_empty_mb) * 1024.0 * 1024.0 / (double)b->objects : 0;
    printf("{\"bench\":\"scale\",\"mode\":\"%s\",\"workloads\":%d,\"jobs\":%d,"
           "\"pods_per_worker\":%d,\"copies\":%d,\"objects\":%zu,\"rss_mb\":%.1f,"
           "\"rss_peak_mb\":%.1f,\"rss_settled_mb\":%.1f,\"rss_empty_mb\":%.1f,\"bytes_per_"
           "object\":%.0f,"
           "\"ready_s\":%.3f,\"first_dispatch_s\":%.3f,\"lists_s\":%.3f,\"list_mb\":%.3f,"
           "\"rss_ratio\":%.2f,\"ready_ratio\":%.2f,\"first_dispatch_ratio\":%.2f,"
           "\"ready_cpu_s\":%.3f,\"first_dispatch_cpu_s\":%.3f,\"packed_cache\":%s,"
           "\"settled_heap_mb\":%.1f,\"settled_pool_mb\":%.1f,\"settled_files_mb\":%.1f,"
           "\"settled_other_mb\":%.1f,\"workload_list_s\":%.3f,\"workload_list_mb\":%.3f,"
           "\"first_dispatch_over_workload_list\":%.2f}\n",
           b->real ? "real" : "devhub", b->n + 1, b->n + 1, b->pods, b->n, b->objects, b->rss_mb,
           b->rss_peak_mb, b->rss_settled_mb, b->rss_empty_mb, bpo, b->ready_s, b->first_s,
           b->lists_s, b->list_mb, b->list_mb > 0 ? b->rss_mb / b->list_mb : 0,
           b->lists_s > 0 ? b->ready_s / b->lists_s : 0,
           b->lists_s > 0 ? b->first_s / b->lists_s : 0, b->ready_cpu_s, b->first_cpu_s,
           b->packed ? "true" : "false", b->settled.heap, b->settled.pool, b->settled.files,
           b->settled.other, b->wl_list_s, (double)b->wl_list_bytes / (1024.0 * 1024.0),
           b->wl_list_s > 0 ? b->first_s / b->wl_list_s : 0);
    printf("scale: %d workloads + jobs on the %s, %d copies, %d pods per worker: RSS %.1f MB "
           "(peak %.1f, %.1f settled, empty %.1f; %.0f B per cached object; %.2fx the %.1f MB "
           "listed), "
           "ready %.3f s after the lists, first dispatch %.3f s after the restart (the same "
           "lists by the bench: %.3f s; the server's answer to the Workload list alone: %.3f s)\n",
           b->n + 1, b->real ? "real stack" : "devhub", b->n, b->pods, b->rss_mb, b->rss_peak_mb,
           b->rss_settled_mb, b->rss_empty_mb, bpo, b->list_mb > 0 ? b->rss_mb / b->list_mb : 0,
           b->list_mb, b->ready_s, b->first_s, b->lists_s, b->wl_list_s);
}

static int parse_args(struct bench *b, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--keep")) {
            b->keep = true;
            continue;
        }
        if (!strcmp(argv[i], "--packed-cache") || !strcmp(argv[i], "--packed-cache=true")) {
            b->packed = true;
            continue;
        }
        if (!strcmp(argv[i], "--packed-cache=false")) {
            b->packed = false;
            continue;
        }
        if (!strcmp(argv[i], "--massif")) {
            b->massif = b->keep = true;
            continue;
        }
        if (!strcmp(argv[i], "--real") && i + 1 < argc) {
            b->real = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--op-arg") && i + 1 < argc &&
            b->n_op_args < (int)(sizeof b->op_args / sizeof b->op_args[0])) {
            b->op_args[b->n_op_args++] = argv[++i];
            continue;
        }
        char *end = NULL;
        long v = 0;
        if (i + 1 < argc && (!strcmp(argv[i], "--n") || !strcmp(argv[i], "--pods") ||
                             !strcmp(argv[i], "--timeout") || !strcmp(argv[i], "--op-v"))) {
            errno = 0;
            v = strtol(argv[i + 1], &end, 10);
        }
        if (!end || errno || *end || v < (strcmp(argv[i], "--op-v") ? 1 : 0) || v > 1000000) {
            fprintf(stderr,
                    "usage: bench-scale [--real STACK_DIR] [--n N (default 10000, 1000 with "
                    "--real)] [--pods P per worker (default 10000, 1000 with --real)] "
                    "[--timeout SECONDS per phase] [--keep] "
                    "[--op-v V (the operator's log verbosity, default 0)] [--packed-cache=false "
                    "(the operator's decoded stores; its default is packed)] [--massif (the "
                    "restarted operator's heap profile)] [--op-arg OPERATOR_ARG]...\n");
            return -EINVAL;
        }
        if (!strcmp(argv[i], "--n"))
            b->n = (int)v;
        else if (!strcmp(argv[i], "--pods"))
            b->pods = (int)v;
        else if (!strcmp(argv[i], "--op-v"))
            b->op_v = (int)v;
        else
            b->timeout_s = (double)v;
        i++;
    }
    if (b->n == 0)
        b->n = b->real ? 1000 : 10000;
    if (b->pods == 0)
        b->pods = b->real ? 1000 : 10000;
    /* real Kueue reserves about 3 workloads/s on the development machine */
    if (b->timeout_s == 0)
        b->timeout_s =
            b->real ? 120 + b->n / 2.0 + b->pods / 50.0 : 120 + b->n / 4.0 + b->pods / 100.0;
    return 0;
}

static void remove_work(struct bench *b)
{
    const char *files[] = {"hub.kc",       "cluster1.kc",  "cluster2.kc", "hub.log",
                           "cluster1.log", "cluster2.log", "op1.log",     "op2.log"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *p = xasprintf("%s/%s", b->work, files[i]);
        unlink(p);
        free(p);
    }
    rmdir(b->work);
}

int main(int argc, char **argv)
{
    jx_use_xalloc();
    struct bench b = {.packed = true}; /* the operator's default */
    if (parse_args(&b, argc, argv) < 0)
        return 2;
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        die_msg("cannot find /proc/self/exe", strerror(errno));
        return 1;
    }
    self[len] = 0;
    for (int k = 0; k < 2; k++) { /* strip /bench-scale, then /bin */
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = 0;
    }
    memcpy(b.root, self, strlen(self) + 1);
    snprintf(b.work, sizeof b.work, "/tmp/bench-scale-XXXXXX");
    if (!mkdtemp(b.work)) {
        die_msg("mkdtemp", strerror(errno));
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    b.loop = ev_loop_new(EVFLAG_AUTO);
    int rc = run(&b);
    if (rc == 0)
        report(&b);
    for (int c = 0; c < NCLUSTERS; c++) {
        kube_client_free(b.cl[c]);
        kube_rest_config_free(b.cfg[c]);
    }
    stop_operator(&b);
    for (int i = 0; i < b.npids; i++)
        stop_pid(b.pids[i], 5);
    if (rc == 0 && !b.keep)
        remove_work(&b);
    else
        fprintf(stderr, "bench-scale: %s; logs kept in %s\n", rc ? "failed" : "done", b.work);
    ev_loop_destroy(b.loop);
    return rc == 0 ? 0 : 1;
}
