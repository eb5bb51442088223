/* Unit tests for controllers/workload/workers (pure helpers, registration from
 * files) and the configuration checks of controllers/workload/wlrun. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ev.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controllers/workload/wlrun.h"
#include "controllers/workload/workers.h"
#include "controllers/workload/xf.h"
#include "pkg/kube/client.h"
#include "pkg/util/err.h"
#include "pkg/util/xalloc.h"
#include "test/support/fakesrv.h"

/* "apiVersion: v1\nkind: Config\n" */
#define KC_B64 "YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCg=="

static void test_parse_spec(void **state)
{
    (void)state;
    struct err e;
    char *name, *path;
    err_clear(&e);
    assert_int_equal(workers_parse_spec("cluster1=/tmp/a=b.kc", &name, &path, &e), 0);
    assert_string_equal(name, "cluster1");
    assert_string_equal(path, "/tmp/a=b.kc"); /* split at the first '=' */
    free(name);
    free(path);
    const char *bad[] = {"cluster1", "=x", "c=", "", "Cluster1=x", "a b=x", "-a=x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err_clear(&e);
        assert_int_equal(workers_parse_spec(bad[i], &name, &path, &e), -EINVAL);
        assert_null(name);
        assert_null(path);
        assert_non_null(strstr(e.msg, "--worker"));
    }
    assert_int_equal(workers_parse_spec(NULL, &name, &path, &e), -EINVAL);
}

static void test_check_secure(void **state)
{
    (void)state;
    struct err e;
    struct kube_rest_config *c = kube_rest_config_new();
    c->server = xstrdup("https://127.0.0.1:6443");
    c->source = xstrdup("kubeconfig /k");
    err_clear(&e);
    assert_int_equal(workers_check_secure("w", c, false, &e), 0);
    c->insecure_skip_tls_verify = true;
    assert_int_equal(workers_check_secure("w", c, false, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "worker w"));
    assert_non_null(strstr(e.msg, "insecure-skip-tls-verify"));
    assert_non_null(strstr(e.msg, "--allow-insecure-workers"));
    assert_int_equal(workers_check_secure("w", c, true, &e), 0);
    c->insecure_skip_tls_verify = false;
    free(c->server);
    c->server = xstrdup("http://127.0.0.1:8080");
    err_clear(&e);
    assert_int_equal(workers_check_secure("w", c, false, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "not https://"));
    assert_int_equal(workers_check_secure("w", c, true, &e), 0);
    kube_rest_config_free(c);
}

static json_t *secret(const char *label, const char *data)
{
    json_t *s = json_pack("{s:{s:s, s:s, s:{}}, s:{}}", "metadata", "name", "w1", "namespace",
                          "kueue-ks-system", "labels", "data");
    if (label)
        json_object_set_new(json_object_get(json_object_get(s, "metadata"), "labels"), "name",
                            json_string(label));
    if (data)
        json_object_set_new(json_object_get(s, "data"), "kubeconfig", json_string(data));
    return s;
}

static void test_from_secret(void **state)
{
    (void)state;
    struct err e;
    char *name, *data;
    size_t len;
    err_clear(&e);
    json_t *s = secret("cluster7", KC_B64);
    assert_int_equal(workers_from_secret(s, &name, &data, &len, &e), 0);
    assert_string_equal(name, "cluster7");
    assert_int_equal(len, strlen("apiVersion: v1\nkind: Config\n"));
    assert_string_equal(data, "apiVersion: v1\nkind: Config\n");
    free(name);
    free(data);
    json_decref(s);

    /* one and two padding characters */
    s = secret("c", "YQ==");
    assert_int_equal(workers_from_secret(s, &name, &data, &len, &e), 0);
    assert_int_equal(len, 1);
    assert_string_equal(data, "a");
    free(name);
    free(data);
    json_decref(s);
    s = secret("c", "YWI=");
    assert_int_equal(workers_from_secret(s, &name, &data, &len, &e), 0);
    assert_int_equal(len, 2);
    assert_string_equal(data, "ab");
    free(name);
    free(data);
    json_decref(s);

    struct {
        const char *label, *data, *want;
    } bad[] = {
        {NULL, KC_B64, "label \"name\""}, {"Not_A_Label", KC_B64, "label \"name\""},
        {"c", NULL, "data.kubeconfig"},   {"c", "", "data.kubeconfig"},
        {"c", "abc", "base64"},           {"c", "!!!!", "base64"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        s = secret(bad[i].label, bad[i].data);
        err_clear(&e);
        assert_int_equal(workers_from_secret(s, &name, &data, &len, &e), -EINVAL);
        assert_null(name);
        assert_null(data);
        assert_non_null(strstr(e.msg, bad[i].want));
        assert_non_null(strstr(e.msg, "kueue-ks-system/w1"));
        json_decref(s);
    }
}

/* Hostile worker Secrets: wrong-typed fields, a 1 MiB kubeconfig that is
 * not base64, a name label longer than a DNS label, unicode: a clear error
 * naming the Secret, never a crash. */
static void test_hostile_secrets(void **state)
{
    (void)state;
    const char *docs[] = {
        "{\"metadata\":\"x\"}",
        "{\"metadata\":{\"name\":\"w1\",\"namespace\":\"kueue-ks-system\",\"labels\":[]},"
        "\"data\":{\"kubeconfig\":\"YQ==\"}}",
        "{\"metadata\":{\"name\":\"w1\",\"namespace\":\"kueue-ks-system\",\"labels\":{"
        "\"name\":7}},\"data\":{\"kubeconfig\":\"YQ==\"}}",
        "{\"metadata\":{\"name\":\"w1\",\"namespace\":\"kueue-ks-system\",\"labels\":{"
        "\"name\":\"c\"}},\"data\":[\"YQ==\"]}",
        "{\"metadata\":{\"name\":\"w1\",\"namespace\":\"kueue-ks-system\",\"labels\":{"
        "\"name\":\"c\"}},\"data\":{\"kubeconfig\":12}}",
        "{\"metadata\":{\"name\":\"w1\",\"namespace\":\"kueue-ks-system\",\"labels\":{"
        "\"name\":\"\xc3\xa9t\xc3\xa9\"}},\"data\":{\"kubeconfig\":\"YQ==\"}}",
    };
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
        json_t *sec = json_loads(docs[i], 0, NULL);
        assert_non_null(sec);
        char *name = NULL, *data = NULL;
        size_t len = 0;
        struct err e;
        err_clear(&e);
        assert_int_equal(workers_from_secret(sec, &name, &data, &len, &e), -EINVAL);
        assert_null(name);
        assert_null(data);
        assert_true(e.msg[0] != '\0');
        json_decref(sec);
    }
    /* a name label of 64 characters (DNS labels stop at 63) and a 1 MiB
     * value that is not base64 */
    char label[65];
    memset(label, 'l', 64);
    label[64] = '\0';
    json_t *sec = secret(label, "YQ==");
    char *name = NULL, *data = NULL;
    size_t len = 0;
    struct err e;
    err_clear(&e);
    assert_int_equal(workers_from_secret(sec, &name, &data, &len, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "label \"name\""));
    json_decref(sec);
    size_t n = 1 << 20;
    char *big = xmalloc(n + 1);
    memset(big, '*', n);
    big[n] = '\0';
    sec = secret("c", big);
    free(big);
    err_clear(&e);
    assert_int_equal(workers_from_secret(sec, &name, &data, &len, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "base64"));
    json_decref(sec);
}

static char *write_kc(const char *server, bool insecure)
{
    char *path = xstrdup("/tmp/test_workers_kc_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f,
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            "clusters:\n- name: c\n  cluster:\n    server: %s\n%s"
            "users:\n- name: u\n  user:\n    token: t\n"
            "contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n",
            server, insecure ? "    insecure-skip-tls-verify: true\n" : "");
    fclose(f);
    return path;
}

static void test_add_file(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    struct kube_rest_config *hc = kube_rest_config_new();
    hc->server = xstrdup("https://127.0.0.1:1");
    struct kube_client *hub = NULL;
    struct err e;
    err_clear(&e);
    assert_int_equal(kube_client_new(loop, hc, NULL, NULL, &hub, &e), 0);
    struct workers *w = NULL;
    struct workers_config cfg = {.hub = hub, .origin = "o1"};
    assert_int_equal(workers_new(&cfg, &w, &e), 0);

    char *good = write_kc("https://127.0.0.1:2", false);
    char *insecure = write_kc("https://127.0.0.1:3", true);
    char *spec = xasprintf("cluster1=%s", good);
    assert_int_equal(workers_add_file(w, spec, &e), 0);
    assert_non_null(workers_client(w, "cluster1"));
    assert_null(workers_client(w, "cluster2"));
    /* registered but never probed: not reachable, no copies store */
    assert_false(workers_reachable(w, "cluster1"));
    assert_null(workers_copies(w, "cluster1", kind_lookup("batch/v1", "Job")));
    assert_false(workers_all_reachable(w));
    err_clear(&e);
    assert_int_equal(workers_add_file(w, spec, &e), -EEXIST);
    assert_non_null(strstr(e.msg, "given twice"));
    free(spec);

    spec = xasprintf("cluster2=%s", insecure);
    err_clear(&e);
    assert_int_equal(workers_add_file(w, spec, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "insecure-skip-tls-verify"));
    free(spec);
    err_clear(&e);
    assert_true(workers_add_file(w, "cluster3=/nonexistent/kc", &e) < 0);
    assert_non_null(strstr(e.msg, "cluster3"));

    spec = xasprintf("abc=%s", good);
    assert_int_equal(workers_add_file(w, spec, &e), 0);
    free(spec);
    json_t *names = workers_names(w);
    assert_int_equal(json_array_size(names), 2);
    assert_string_equal(json_string_value(json_array_get(names, 0)), "abc");
    assert_string_equal(json_string_value(json_array_get(names, 1)), "cluster1");
    json_decref(names);

    workers_free(w);
    kube_client_free(hub);
    kube_rest_config_free(hc);
    ev_loop_destroy(loop);

    /* runner configuration checks */
    struct wlrun *r = NULL;
    struct wlrun_config rc = {.transport = "carrier-pigeon"};
    err_clear(&e);
    assert_int_equal(wlrun_new(&rc, &r, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "--transport"));
    rc = (struct wlrun_config){.placement = "random"};
    assert_int_equal(wlrun_new(&rc, &r, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "--placement"));
    rc = (struct wlrun_config){.ac_controller = "example.com/other"};
    assert_int_equal(wlrun_new(&rc, &r, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "--admission-check-controller"));
    char *ispec = xasprintf("w=%s", insecure);
    const char *specs[] = {ispec};
    rc = (struct wlrun_config){.workers = specs, .n_workers = 1};
    assert_int_equal(wlrun_new(&rc, &r, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "--allow-insecure-workers"));
    rc.allow_insecure_workers = true;
    assert_int_equal(wlrun_new(&rc, &r, &e), 0);
    struct mgr_runnable rn;
    wlrun_runnable(r, &rn);
    assert_string_equal(rn.name, "workload-controller");
    assert_ptr_equal(rn.ud, r);
    wlrun_release(r);
    wlrun_free(r);
    rc = (struct wlrun_config){.transport = "kubestellar", .workers = specs, .n_workers = 1};
    assert_int_equal(wlrun_new(&rc, &r, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "direct"));
    free(ispec);

    unlink(good);
    unlink(insecure);
    free(good);
    free(insecure);
}

/* ---- the reachability probe, against a scripted worker -------------------- */

#define EMPTY_JOBS "{\"kind\":\"JobList\",\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}"

struct probe_fx {
    struct ev_loop *loop;
    struct fakesrv *srv;
    char trans[16]; /* reachability transitions seen: "R" reachable, "U" unreachable */
    size_t ntrans;
    struct workers *w;
    struct kube_rest_config *hc;
    struct kube_client *hub;
    char *kc, *spec;
};

static void on_change(void *ud, const char *cluster)
{
    struct probe_fx *f = ud;
    assert_string_equal(cluster, "w1");
    if (f->ntrans + 1 < sizeof f->trans)
        f->trans[f->ntrans++] = workers_reachable(f->w, "w1") ? 'R' : 'U';
}

static size_t count_probes(struct fakesrv *s)
{
    size_t n = 0;
    for (size_t i = 0; i < fakesrv_nreq(s); i++) {
        struct fakesrv_req *r = fakesrv_req_get(s, i);
        n += strcmp(r->path, "/version") == 0;
        fakesrv_req_free(r);
    }
    return n;
}

static void probe_poll(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    struct probe_fx *f = t->data;
    /* 7 answered probes and one more tick to act on the last */
    if (count_probes(f->srv) >= 8)
        ev_break(loop, EVBREAK_ALL);
}

/* A loop and a scripted worker server (more responses pushed by the caller before
 * probe_start); with `jobs`, it lists no Job copies (the copies informer syncs). */
static void probe_init(struct probe_fx *f, bool jobs)
{
    *f = (struct probe_fx){.loop = ev_loop_new(EVFLAG_AUTO)};
    f->srv = fakesrv_start(NULL);
    if (jobs)
        fakesrv_push(f->srv, &(struct fakesrv_resp){.method = "GET",
                                                    .path = "/apis/batch/v1/jobs",
                                                    .query_lacks = "watch=",
                                                    .body = EMPTY_JOBS,
                                                    .times = -1});
}

/* Register worker w1 on the scripted server (probes every 10 ms, on_change
 * recording transitions) and start it; informer_backoff_s 0 = the default. */
static void probe_start(struct probe_fx *f, double informer_backoff_s)
{
    f->hc = kube_rest_config_new();
    f->hc->server = xstrdup("https://127.0.0.1:1");
    assert_int_equal(kube_client_new(f->loop, f->hc, NULL, NULL, &f->hub, NULL), 0);
    struct workers_config cfg = {.hub = f->hub,
                                 .origin = "o1",
                                 .allow_insecure = true,
                                 .probe_interval_s = 0.01,
                                 .informer_backoff_s = informer_backoff_s,
                                 .on_change = on_change,
                                 .ud = f};
    struct err e;
    err_clear(&e);
    assert_int_equal(workers_new(&cfg, &f->w, &e), 0);
    f->kc = write_kc(fakesrv_url(f->srv), false);
    f->spec = xasprintf("w1=%s", f->kc);
    assert_int_equal(workers_add_file(f->w, f->spec, &e), 0);
    assert_false(workers_known(f->w, "w1")); /* not heard from yet */
    assert_int_equal(workers_start(f->w, &e), 0);
}

static void probe_guard(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)t;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/* Run the loop until stop(f) breaks it (polled every 20 ms), `guard_s` at most. */
static void probe_run(struct probe_fx *f, double guard_s,
                      void (*stop)(struct ev_loop *, ev_timer *, int))
{
    ev_timer poll, guard;
    ev_timer_init(&poll, stop, 0.02, 0.02);
    poll.data = f;
    ev_timer_init(&guard, probe_guard, guard_s, 0);
    ev_timer_start(f->loop, &poll);
    ev_timer_start(f->loop, &guard);
    ev_run(f->loop, 0);
    ev_timer_stop(f->loop, &poll);
    ev_timer_stop(f->loop, &guard);
    f->trans[f->ntrans] = '\0';
}

static void probe_free(struct probe_fx *f)
{
    workers_free(f->w);
    kube_client_free(f->hub);
    kube_rest_config_free(f->hc);
    fakesrv_stop(f->srv);
    ev_loop_destroy(f->loop);
    unlink(f->kc);
    free(f->kc);
    free(f->spec);
}

/* One failed probe between good ones is a blip: the worker stays reachable;
 * two in a row make it unreachable until a probe succeeds again. */
static void test_probe_debounce(void **state)
{
    (void)state;
    struct probe_fx f;
    probe_init(&f, true);
    static const int codes[] = {200, 500, 200, 500, 500, 200};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        fakesrv_push(f.srv, &(struct fakesrv_resp){.method = "GET",
                                                   .path = "/version",
                                                   .status = codes[i],
                                                   .body = "{\"gitVersion\":\"v1.32.0\"}"});
    fakesrv_push(f.srv, &(struct fakesrv_resp){.method = "GET",
                                               .path = "/version",
                                               .body = "{\"gitVersion\":\"v1.32.0\"}",
                                               .times = -1});
    probe_start(&f, 0);
    probe_run(&f, 20.0, probe_poll);
    assert_true(count_probes(f.srv) >= 8);
    /* 200 R, 500 (blip), 200, 500, 500 -> U, 200 -> R */
    assert_string_equal(f.trans, "RUR");
    assert_true(workers_reachable(f.w, "w1"));
    probe_free(&f);
}

/* Breaks the loop once two reachability transitions were seen. */
static void two_trans(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    struct probe_fx *f = t->data;
    if (f->ntrans >= 2)
        ev_break(loop, EVBREAK_ALL);
}

/* The first probe after a start fails (a blip: the worker is slow, as a
 * devhub under load): still debounced, so the worker is reachable once its
 * copies informer synced, and known. It turns unreachable only at the
 * second failure in a row (the next probe is answered after 3 s with a 500).
 * A probe counted as an outage from the start made a restarted operator see
 * a healthy worker as lost. */
static void test_first_probe_failure_is_a_blip(void **state)
{
    (void)state;
    struct probe_fx f;
    probe_init(&f, true);
    fakesrv_push(f.srv, &(struct fakesrv_resp){.method = "GET", .path = "/version", .status = 500});
    fakesrv_push(
        f.srv,
        &(struct fakesrv_resp){
            .method = "GET", .path = "/version", .status = 500, .delay_s = 3.0, .times = -1});
    probe_start(&f, 0);
    assert_true(workers_known(f.w, "w9")); /* not registered: known to be gone */
    probe_run(&f, 30.0, two_trans);
    /* R: synced after the first, failed probe; U: the second failure */
    assert_string_equal(f.trans, "RU");
    assert_true(workers_known(f.w, "w1"));
    assert_false(workers_reachable(f.w, "w1"));
    probe_free(&f);
}

/* Probes that never succeed and copies that never sync: the worker becomes
 * known (to be down) at the second failed probe, and on_change tells. */
static void test_known_by_failed_probes(void **state)
{
    (void)state;
    struct probe_fx f;
    probe_init(&f, false);
    fakesrv_push(f.srv, &(struct fakesrv_resp){.status = 500, .times = -1});
    probe_start(&f, 0.05);
    probe_run(&f, 20.0, probe_poll);
    assert_true(count_probes(f.srv) >= 8);
    assert_string_equal(f.trans, "U"); /* one change: known, still unreachable */
    assert_true(workers_known(f.w, "w1"));
    assert_false(workers_reachable(f.w, "w1"));
    probe_free(&f);
}

/* ---- the agent and the copies informer share the worker's Jobs -------------------------- */

/* started by the worker's Job controller (status.startTime): without pods, a no-pods verdict */
#define JOB_RV(name, rv, labels)                                                                   \
    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"" name "\","           \
    "\"namespace\":\"ns\",\"uid\":\"uid-" name "\",\"resourceVersion\":\"" rv                      \
    "\",\"labels\":{" labels "}},\"status\":{\"startTime\":\"2026-11-24T09:58:01Z\"}}"
#define JOB(name, labels) JOB_RV(name, "5", labels)
/* the same with one pod active */
#define JOB_RV_ACTIVE(name, rv, labels)                                                            \
    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"" name "\","           \
    "\"namespace\":\"ns\",\"uid\":\"uid-" name "\",\"resourceVersion\":\"" rv                      \
    "\",\"labels\":{" labels                                                                       \
    "}},\"status\":{\"startTime\":\"2026-11-24T09:58:01Z\",\"active\":1}}"
#define HUB_WORK "\"kubestellar.io/cluster\":\"w1\""
#define COPY_OF(origin)                                                                            \
    HUB_WORK ",\"app.kubernetes.io/managed-by\":\"kueue-ks\",\"kueue-ks.io/origin\":\"" origin     \
             "\",\"kueue-ks.io/origin-uid\":\"h-" origin "\""
#define SHARED_JOBS_ITEMS                                                                          \
    JOB("ours", COPY_OF("o1")) "," JOB("theirs", COPY_OF("o2")) "," JOB("ks", HUB_WORK)
#define SHARED_JOBS                                                                                \
    "{\"kind\":\"JobList\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[" SHARED_JOBS_ITEMS \
    "]}"

#define POD(name, owner, cpu)                                                                      \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\",\"resourceVersion\":\"6\","         \
    "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"" owner "\","   \
    "\"uid\":\"uid-" owner "\",\"controller\":true}]},\"spec\":{\"nodeName\":\"n1\","              \
    "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"" cpu "\"}}}]},"                      \
    "\"status\":{\"phase\":\"Running\"}}"
#define CM_STATUS "/apis/galaxy.kubestellar.io/v1alpha1/clustermetrics/w1/status"

struct share_fx {
    json_t *seen;               /* "name how" of each on_copy */
    const char *jobs_events[3]; /* watch event lines of the worker's Jobs, NULL-terminated */
    const char *jobs_relist;    /* the Jobs list after the first (NULL: the same list) */
    struct fakesrv *srv;
    struct workers *w;
    struct kube_rest_config *hc;
    struct kube_client *hub;
    char *kc, *spec;
    bool hub_wait; /* the hub's lists are not in yet (cfg.agents_hold says true) */
};

static bool share_agents_hold(void *ud)
{
    return ((struct share_fx *)ud)->hub_wait;
}

/* "name how", and " on <cluster>" when not told on the fixture's worker w1 */
static void share_copy(void *ud, json_t *obj, const char *cluster, enum xf_copy_change how)
{
    struct share_fx *f = ud;
    static const char *const hows[] = {"listed", "added", "status", "other"};
    bool w1 = cluster && strcmp(cluster, "w1") == 0;
    json_array_append_new(
        f->seen,
        json_sprintf("%s %s%s%s",
                     json_string_value(json_object_get(json_object_get(obj, "metadata"), "name")),
                     hows[how], w1 ? "" : " on ", w1 ? "" : (cluster ? cluster : "(none)")));
}

/* Requests to `path`: lists (no watch= in the query) and watches. */
static void count_lw(struct fakesrv *s, const char *path, size_t *lists, size_t *watches)
{
    *lists = *watches = 0;
    for (size_t i = 0; i < fakesrv_nreq(s); i++) {
        struct fakesrv_req *r = fakesrv_req_get(s, i);
        if (strcmp(r->path, path) == 0) {
            if (strstr(r->query, "watch="))
                (*watches)++;
            else
                (*lists)++;
        }
        fakesrv_req_free(r);
    }
}

/* Every informer of the worker (the agent's nodes, pods and jobs) has its watch open. */
static void share_watching(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    struct share_fx *f = t->data;
    static const char *const paths[] = {"/api/v1/nodes", "/api/v1/pods", "/apis/batch/v1/jobs"};
    for (size_t i = 0; i < 3; i++) {
        size_t l, wa;
        count_lw(f->srv, paths[i], &l, &wa);
        if (wa == 0)
            return;
    }
    size_t patches = 0;
    for (size_t i = 0; i < fakesrv_nreq(f->srv); i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->srv, i);
        patches += strcmp(r->method, "PATCH") == 0 && strcmp(r->path, CM_STATUS) == 0;
        fakesrv_req_free(r);
    }
    if (workers_reachable(f->w, "w1") && patches > 0)
        ev_break(loop, EVBREAK_ALL);
}

static void share_guard(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)t;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

static void share_run(struct ev_loop *loop, struct share_fx *f, double guard_s,
                      void (*stop)(struct ev_loop *, ev_timer *, int))
{
    ev_timer poll, guard;
    ev_timer_init(&poll, stop ? stop : share_guard, 0.02, 0.02);
    poll.data = f;
    ev_timer_init(&guard, share_guard, guard_s, 0);
    if (stop)
        ev_timer_start(loop, &poll);
    ev_timer_start(loop, &guard);
    ev_run(loop, 0);
    ev_timer_stop(loop, &poll);
    ev_timer_stop(loop, &guard);
}

/* The worker w1 of a fake server (nodes, pods, Jobs), with the in-process agent writing
 * ClusterMetrics to the same server, its status PATCH answered after patch_delay_s; started. */
static void share_copies_in(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    struct share_fx *f = t->data;
    if (workers_copies(f->w, "w1", kind_lookup("batch/v1", "Job")))
        ev_break(loop, EVBREAK_ALL);
}

static void share_start(struct share_fx *f, struct ev_loop *loop, double patch_delay_s)
{
    f->seen = json_array();
    f->srv = fakesrv_start(NULL);
    fakesrv_push(f->srv, &(struct fakesrv_resp){.method = "GET",
                                                .path = "/version",
                                                .body = "{\"gitVersion\":\"v1.32.0\"}",
                                                .times = -1});
    fakesrv_push_json(f->srv, "GET", "/api/v1/nodes", "watch=", 200,
                      "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"3\"},"
                      "\"items\":[{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"2\"},"
                      "\"status\":{\"allocatable\":{\"cpu\":\"8\"}}}]}");
    /* pods of our copy, of KubeStellar's and of a Job that is no hub work */
    fakesrv_push_json(f->srv, "GET", "/api/v1/pods", "watch=", 200,
                      "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"4\"},"
                      "\"items\":[" POD("p1", "ours", "1") "," POD("p2", "ks", "500m") "," POD(
                          "p3", "local", "2") "]}");
    fakesrv_push(f->srv, &(struct fakesrv_resp){.method = "PATCH",
                                                .path = CM_STATUS,
                                                .body = "{}",
                                                .delay_s = patch_delay_s,
                                                .times = -1});
    fakesrv_push(f->srv, &(struct fakesrv_resp){.method = "GET",
                                                .path = "/apis/batch/v1/jobs",
                                                .query_lacks = "watch=",
                                                .body = SHARED_JOBS,
                                                .times = f->jobs_relist ? 1 : -1});
    if (f->jobs_relist)
        fakesrv_push(f->srv, &(struct fakesrv_resp){.method = "GET",
                                                    .path = "/apis/batch/v1/jobs",
                                                    .query_lacks = "watch=",
                                                    .body = f->jobs_relist,
                                                    .times = -1});
    if (f->jobs_events[0])
        fakesrv_push_watch(f->srv, "/apis/batch/v1/jobs", f->jobs_events, FAKESRV_HOLD);
    fakesrv_push(f->srv, &(struct fakesrv_resp){.method = "GET",
                                                .path = "/",
                                                .query_contains = "watch=",
                                                .end = FAKESRV_HOLD,
                                                .times = -1});
    f->hc = kube_rest_config_new();
    f->hc->server = xstrdup(fakesrv_url(f->srv)); /* the hub: ClusterMetrics is written there */
    assert_int_equal(kube_client_new(loop, f->hc, NULL, NULL, &f->hub, NULL), 0);
    struct workers_config cfg = {.hub = f->hub,
                                 .origin = "o1",
                                 .allow_insecure = true,
                                 .run_agents = true,
                                 .agent_min_interval_s = 0.05,
                                 .probe_interval_s = 0.01,
                                 .informer_backoff_s = 0.05,
                                 .on_copy = share_copy,
                                 .agents_hold = share_agents_hold,
                                 .ud = f};
    struct err e;
    err_clear(&e);
    assert_int_equal(workers_new(&cfg, &f->w, &e), 0);
    f->kc = write_kc(fakesrv_url(f->srv), false);
    f->spec = xasprintf("w1=%s", f->kc);
    assert_int_equal(workers_add_file(f->w, f->spec, &e), 0);
    assert_int_equal(workers_start(f->w, &e), 0);
}

static void share_free(struct share_fx *f, struct ev_loop *loop)
{
    workers_free(f->w);
    kube_client_free(f->hub);
    kube_rest_config_free(f->hc);
    fakesrv_stop(f->srv);
    ev_loop_destroy(loop);
    unlink(f->kc);
    free(f->kc);
    free(f->spec);
    json_decref(f->seen);
}

/* The worker's copies are in but the hub's lists are not: the agent waits (its Pod list would
 * hold the one loop ahead of the hub's lists a placement reads), then starts once they are. */
static void test_agent_waits_for_hub(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    struct share_fx f = {.hub_wait = true};
    share_start(&f, loop, 0);
    share_run(loop, &f, 10.0, share_copies_in);
    share_run(loop, &f, 0.5, NULL); /* ten fast ticks */
    size_t lists, watches;
    count_lw(f.srv, "/api/v1/pods", &lists, &watches);
    assert_int_equal(lists, 0);
    count_lw(f.srv, "/api/v1/nodes", &lists, &watches);
    assert_int_equal(lists, 0);
    f.hub_wait = false;
    share_run(loop, &f, 10.0, share_watching);
    count_lw(f.srv, "/api/v1/pods", &lists, &watches);
    assert_int_equal(lists, 1);
    share_free(&f, loop);
}

/* Run until `n` copies' changes were told (10 s at most); the first is the list's own copy. */
static void share_wait_seen(struct ev_loop *loop, struct share_fx *f, size_t n)
{
    for (int i = 0; i < 500 && json_array_size(f->seen) < n; i++)
        share_run(loop, f, 0.02, NULL);
    assert_int_equal(json_array_size(f->seen), n);
    assert_string_equal(json_string_value(json_array_get(f->seen, 0)), "ours listed");
}

/* A relist (the watch ended: 410 Expired) tells the copies' changes the watch missed as a
 * watch would have: a status change ("status", queued first by wlc_on_copy), not as the first
 * list's copies ("listed", queued behind every change), which would leave a worker's completed
 * jobs behind a busy hub's changes. A copy it adds is a status change too, not a first sight
 * ("added"): the relist's add carries a view of its metadata, not its status. */
static void test_relist_copies_told_as_changes(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    char *expired = fakesrv_watch_error_line(410);
    struct share_fx f = {
        .jobs_events = {expired, NULL},
        .jobs_relist =
            "{\"kind\":\"JobList\",\"metadata\":{\"resourceVersion\":\"9\"},"
            "\"items\":[" JOB_RV_ACTIVE("ours", "8", COPY_OF("o1")) "," JOB(
                "theirs", COPY_OF("o2")) "," JOB("ks", HUB_WORK) "," JOB("fresh",
                                                                         COPY_OF("o1")) "]}"};
    share_start(&f, loop, 0);
    share_run(loop, &f, 10.0, share_watching);
    share_wait_seen(loop, &f, 3); /* the relist comes after the watch's error */
    /* a copy the watch missed, added by the relist: a view of its metadata, no first sight */
    const char *a = json_string_value(json_array_get(f.seen, 1)),
               *b = json_string_value(json_array_get(f.seen, 2));
    bool ours_first = strcmp(a, "ours status") == 0;
    assert_string_equal(ours_first ? a : b, "ours status");
    assert_string_equal(ours_first ? b : a, "fresh status");
    free(expired);
    share_free(&f, loop);
}

/* A copy a watch adds is told as its first sight ("added", which may need no pass:
 * wlc_on_copy), with the worker's name; its deletion as a status change, never as an add. */
static void test_watch_add_told_apart(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    struct share_fx f = {
        .jobs_events = {"{\"type\":\"ADDED\",\"object\":" JOB_RV("new", "8", COPY_OF("o1")) "}",
                        "{\"type\":\"DELETED\",\"object\":" JOB_RV("new", "9", COPY_OF("o1")) "}",
                        NULL}};
    share_start(&f, loop, 0);
    share_run(loop, &f, 10.0, share_watching);
    share_wait_seen(loop, &f, 3);
    assert_string_equal(json_string_value(json_array_get(f.seen, 1)), "new added");
    assert_string_equal(json_string_value(json_array_get(f.seen, 2)), "new status");
    share_free(&f, loop);
}

/* An operator with the in-process agent on a worker lists and watches the worker's Jobs
 * once (the agent's informer and the copies informer are one, label kubestellar.io/cluster,
 * through the worker's informer cache), where it made two requests of each. The copies
 * store holds every hub-work Job; the controller is told of ours only (on_copy) and the
 * origin index lists ours. */
static void test_agent_shares_jobs(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    /* by watch: a label added (the status as listed), then the status changed */
    struct share_fx f = {.jobs_events = {"{\"type\":\"MODIFIED\",\"object\":" JOB_RV(
                                             "ours", "8", COPY_OF("o1") ",\"x\":\"y\"") "}",
                                         "{\"type\":\"MODIFIED\",\"object\":" JOB_RV_ACTIVE(
                                             "ours", "9", COPY_OF("o1") ",\"x\":\"y\"") "}",
                                         NULL}};
    share_start(&f, loop, 0);
    share_run(loop, &f, 10.0, share_watching);
    share_run(loop, &f, 0.3, NULL); /* a second list or watch would have come by now */

    size_t lists, watches;
    count_lw(f.srv, "/apis/batch/v1/jobs", &lists, &watches);
    assert_int_equal(lists, 1);
    assert_int_equal(watches, 1);
    struct fakesrv_req *r = fakesrv_req_get(f.srv, 0);
    for (size_t i = 0; strcmp(r->path, "/apis/batch/v1/jobs") != 0; i++) {
        fakesrv_req_free(r);
        r = fakesrv_req_get(f.srv, i + 1);
    }
    assert_non_null(strstr(r->query, "labelSelector=kubestellar.io%2Fcluster"));
    fakesrv_req_free(r);
    /* the agent's lists come after the copies' (its Pod list is the big one, read by no
     * placement): the Job list is the first list request */
    for (size_t i = 0; i < fakesrv_nreq(f.srv); i++) {
        r = fakesrv_req_get(f.srv, i);
        bool list = strcmp(r->method, "GET") == 0 && !strstr(r->query, "watch=") &&
                    strcmp(r->path, "/version") != 0;
        bool jobs = strcmp(r->path, "/apis/batch/v1/jobs") == 0;
        fakesrv_req_free(r);
        if (list) {
            assert_true(jobs);
            break;
        }
    }
    for (size_t i = 0; i < 2; i++) {
        const char *p = i ? "/api/v1/pods" : "/api/v1/nodes";
        count_lw(f.srv, p, &lists, &watches);
        assert_int_equal(lists, 1);
        assert_int_equal(watches, 1);
    }
    /* the controller sees our copy only, listed, then its changes by watch, told apart
     * (wlc_on_copy queues a status change first, the others in order) */
    assert_int_equal(json_array_size(f.seen), 3);
    assert_string_equal(json_string_value(json_array_get(f.seen, 0)), "ours listed");
    assert_string_equal(json_string_value(json_array_get(f.seen, 1)), "ours other");
    assert_string_equal(json_string_value(json_array_get(f.seen, 2)), "ours status");
    struct store *cs = workers_copies(f.w, "w1", kind_lookup("batch/v1", "Job"));
    assert_non_null(cs);
    assert_int_equal(store_len(cs), 3); /* the agent counts every hub-work Job */
    json_t *mine = store_by_index(cs, XF_INDEX_ORIGIN, "o1", NULL);
    assert_int_equal(json_array_size(mine), 1);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_array_get(mine, 0), "metadata"), "name")),
                        "ours");
    json_decref(mine);
    /* the agent's managedResourceRequests still counts every hub-work copy's pods, ours and
     * KubeStellar's, not the local Job's */
    struct fakesrv_req *pr = NULL;
    for (size_t i = 0; i < fakesrv_nreq(f.srv) && !pr; i++) {
        pr = fakesrv_req_get(f.srv, i);
        if (strcmp(pr->method, "PATCH") != 0 || strcmp(pr->path, CM_STATUS) != 0) {
            fakesrv_req_free(pr);
            pr = NULL;
        }
    }
    assert_non_null(pr);
    json_t *body = json_loads(pr->body, 0, NULL);
    fakesrv_req_free(pr);
    json_t *n1 = json_array_get(json_object_get(json_object_get(body, "status"), "nodes"), 0);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(n1, "allocatedResourceRequests"), "cpu")),
        "3500m");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(n1, "managedResourceRequests"), "cpu")),
        "1500m");
    /* and its no-pods verdict comes from the lean Job: the other kueue-ks's copy has no pod */
    json_t *u = json_object_get(json_object_get(body, "status"), "unschedulableJobs");
    assert_int_equal(json_array_size(u), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(u, 0), "name")), "theirs");
    assert_string_equal(json_string_value(json_object_get(json_array_get(u, 0), "cause")),
                        "no-pods");
    json_decref(body);

    share_free(&f, loop);
}

static size_t cm_patches(struct fakesrv *srv)
{
    size_t n = 0;
    for (size_t i = 0; i < fakesrv_nreq(srv); i++) {
        struct fakesrv_req *r = fakesrv_req_get(srv, i);
        n += strcmp(r->method, "PATCH") == 0 && strcmp(r->path, CM_STATUS) == 0;
        fakesrv_req_free(r);
    }
    return n;
}

static void reachable_patch_sent(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    struct share_fx *f = t->data;
    if (workers_reachable(f->w, "w1") && cm_patches(f->srv) > 0)
        ev_break(loop, EVBREAK_ALL);
}

static void w1_known(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    struct share_fx *f = t->data;
    if (workers_known(f->w, "w1"))
        ev_break(loop, EVBREAK_ALL);
}

/* With an in-process agent, a worker is known once the agent has written ClusterMetrics
 * (after an outage the hub's are stale until then), not when its copies are listed: here the
 * write is answered a second later, and the worker, reachable meanwhile, is not known. */
static void test_known_after_agent_report(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    struct share_fx f = {0};
    share_start(&f, loop, 1.0);
    share_run(loop, &f, 10.0, reachable_patch_sent);
    assert_true(workers_reachable(f.w, "w1"));
    assert_false(workers_known(f.w, "w1"));
    share_run(loop, &f, 10.0, w1_known);
    assert_true(workers_known(f.w, "w1"));
    share_free(&f, loop);
}

static void wx_known(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    if (workers_known(t->data, "wx"))
        ev_break(loop, EVBREAK_ALL);
}

/* A name no worker is registered for is known (to be gone) only once the workers' Secrets are
 * listed: before that it may be a Secret's worker not read yet, whose state is not known. */
static void test_unregistered_known_after_secrets(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    struct fakesrv *srv = fakesrv_start(NULL);
    fakesrv_push(srv, &(struct fakesrv_resp){.method = "GET",
                                             .path = "/api/v1/namespaces/ops/secrets",
                                             .query_lacks = "watch=",
                                             .delay_s = 0.2,
                                             .body = "{\"kind\":\"SecretList\",\"metadata\":{"
                                                     "\"resourceVersion\":\"1\"},\"items\":[]}"});
    fakesrv_push(srv, &(struct fakesrv_resp){.method = "GET",
                                             .path = "/",
                                             .query_contains = "watch=",
                                             .end = FAKESRV_HOLD,
                                             .times = -1});
    struct kube_rest_config *hc = kube_rest_config_new();
    hc->server = xstrdup(fakesrv_url(srv));
    struct kube_client *hub = NULL;
    assert_int_equal(kube_client_new(loop, hc, NULL, NULL, &hub, NULL), 0);
    struct workers_config cfg = {.hub = hub, .ns = "ops", .origin = "o1", .allow_insecure = true};
    struct workers *w = NULL;
    struct err e;
    err_clear(&e);
    assert_int_equal(workers_new(&cfg, &w, &e), 0);
    assert_int_equal(workers_start(w, &e), 0);
    assert_false(workers_known(w, "wx"));
    ev_timer poll, guard;
    ev_timer_init(&poll, wx_known, 0.02, 0.02);
    poll.data = w;
    ev_timer_init(&guard, probe_guard, 10.0, 0);
    ev_timer_start(loop, &poll);
    ev_timer_start(loop, &guard);
    ev_run(loop, 0);
    ev_timer_stop(loop, &poll);
    ev_timer_stop(loop, &guard);
    assert_true(workers_known(w, "wx"));
    workers_free(w);
    kube_client_free(hub);
    kube_rest_config_free(hc);
    fakesrv_stop(srv);
    ev_loop_destroy(loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_spec),
        cmocka_unit_test(test_check_secure),
        cmocka_unit_test(test_from_secret),
        cmocka_unit_test(test_hostile_secrets),
        cmocka_unit_test(test_add_file),
        cmocka_unit_test(test_probe_debounce),
        cmocka_unit_test(test_first_probe_failure_is_a_blip),
        cmocka_unit_test(test_known_by_failed_probes),
        cmocka_unit_test(test_agent_shares_jobs),
        cmocka_unit_test(test_relist_copies_told_as_changes),
        cmocka_unit_test(test_watch_add_told_apart),
        cmocka_unit_test(test_agent_waits_for_hub),
        cmocka_unit_test(test_known_after_agent_report),
        cmocka_unit_test(test_unregistered_known_after_secrets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
