/* Unit tests for controllers/quota/controller against the scripted fake API server. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/quota/aggregate.h"
#include "controllers/quota/controller.h"
#include "pkg/kube/client.h"
#include "pkg/kube/restconfig.h"
#include "pkg/metrics/metrics.h"
#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"
#include "test/support/fakesrv.h"
#include "test/support/tloop.h"

#define KQ     "/apis/kueue.x-k8s.io"
#define CQS_B1 KQ "/v1beta1/clusterqueues"
#define RFS_B1 KQ "/v1beta1/resourceflavors"
#define CMS    "/apis/galaxy.kubestellar.io/v1alpha1/clustermetrics"
#define EVENTS "/api/v1/namespaces/default/events"

/* JSON text from a literal written with single quotes (new string). */
static char *Q(const char *s)
{
    char *d = xstrdup(s);
    for (char *p = d; *p; p++)
        if (*p == '\'')
            *p = '"';
    return d;
}

static json_t *J(const char *s)
{
    char *d = Q(s);
    json_error_t je;
    json_t *v = json_loads(d, 0, &je);
    if (!v)
        fail_msg("bad test JSON (%s): %s", je.text, d);
    free(d);
    return v;
}

/* A ClusterQueue "cq" (managed by label) with one group, default-flavor, cpu and memory. */
static char *cq_json(const char *rv, const char *cpu, const char *mem)
{
    char *t = xasprintf(
        "{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'ClusterQueue','metadata':{'name':'cq',"
        "'uid':'u-cq','resourceVersion':'%s','labels':{'kueue-ks.io/managed-quota':'true'}},"
        "'spec':{'resourceGroups':[{'coveredResources':['cpu','memory'],'flavors':[{'name':"
        "'default-flavor','resources':[{'name':'cpu','nominalQuota':'%s'},{'name':'memory',"
        "'nominalQuota':'%s'}]}]}]}}",
        rv, cpu, mem);
    char *r = Q(t);
    free(t);
    return r;
}

static char *list_json(const char *kind, const char *rv, const char *item)
{
    return xasprintf(
        "{\"kind\":\"%sList\",\"metadata\":{\"resourceVersion\":\"%s\"},\"items\":[%s]}", kind, rv,
        item ? item : "");
}

/* A ClusterMetrics in the galaxy format (no lastUpdated): one node per "cpu/mem" pair. */
static char *cm_json(const char *name, const char *rv, const char *nodes)
{
    char *t = xasprintf("{'apiVersion':'galaxy.kubestellar.io/v1alpha1','kind':'ClusterMetrics',"
                        "'metadata':{'name':'%s','resourceVersion':'%s'},'status':{'nodes':[%s]}}",
                        name, rv, nodes);
    char *r = Q(t);
    free(t);
    return r;
}

static char *watch_line(const char *type, const char *obj)
{
    return xasprintf("{\"type\":\"%s\",\"object\":%s}", type, obj);
}

struct fx {
    struct ev_loop *loop;
    struct fakesrv *srv;
    struct kube_rest_config *cfg;
    struct kube_client *client;
    struct metrics_registry *reg;
    struct quota_ctl *q;
    struct logger lg;
    bool capture; /* set before fx_start: the info log goes to logtext */
    FILE *logf;
    char *logtext;
    size_t loglen;
    struct quota_options o;
    struct flag fl[QUOTA_NFLAGS];
};

/* Discovery, the events sink and the lists; `cms_item` and `cq_item` may be NULL. */
static void fx_script_lists(struct fx *f, const char *versions, const char *cq_item,
                            const char *cm_item);
static void fx_script(struct fx *f, const char *versions, const char *cq_item, const char *cm_item)
{
    fx_script_lists(f, versions, cq_item, cm_item);
    const char *none[] = {NULL};
    fakesrv_push_watch(f->srv, CQS_B1, none, FAKESRV_HOLD);
}

/* The same without the ClusterQueue watch (the test scripts its own). */
static void fx_script_lists(struct fx *f, const char *versions, const char *cq_item,
                            const char *cm_item)
{
    char *disc = xasprintf("{\"kind\":\"APIGroup\",\"name\":\"kueue.x-k8s.io\",\"versions\":[%s]}",
                           versions);
    char *dq = Q(disc);
    fakesrv_push_json(f->srv, "GET", KQ, "watch=", 200, dq);
    free(dq);
    free(disc);
    struct fakesrv_resp ev = {
        .method = "POST", .path = EVENTS, .status = 201, .body = "{}", .times = -1};
    fakesrv_push(f->srv, &ev);
    struct fakesrv_resp evp = {
        .method = "PATCH", .path = EVENTS, .status = 200, .body = "{}", .times = -1};
    fakesrv_push(f->srv, &evp);
    char *l = list_json("ResourceFlavor", "10", NULL);
    fakesrv_push_json(f->srv, "GET", RFS_B1, "watch=", 200, l);
    free(l);
    const char *none[] = {NULL};
    fakesrv_push_watch(f->srv, RFS_B1, none, FAKESRV_HOLD);
    l = list_json("ClusterMetrics", "20", cm_item);
    fakesrv_push_json(f->srv, "GET", CMS, "watch=", 200, l);
    free(l);
    l = list_json("ClusterQueue", "30", cq_item);
    fakesrv_push_json(f->srv, "GET", CQS_B1, "watch=", 200, l);
    free(l);
}

/* A watch sending each of `lines` (NULL-terminated) `step` seconds apart, then holding. */
static void fx_watch_steps(struct fx *f, const char *path, double step, const char *const *lines)
{
    struct fakesrv_chunk ch[4] = {{0}};
    char *data[4];
    size_t n = 0;
    for (; lines[n] && n < 4; n++) {
        data[n] = xasprintf("%s\n", lines[n]);
        ch[n] = (struct fakesrv_chunk){.delay_s = step, .data = data[n]};
    }
    struct fakesrv_resp r = {.method = "GET",
                             .path = path,
                             .query_contains = "watch=",
                             .chunks = n ? ch : NULL,
                             .n_chunks = n,
                             .end = FAKESRV_HOLD};
    fakesrv_push(f->srv, &r);
    for (size_t i = 0; i < n; i++)
        free(data[i]);
}

/* A watch on `path` sending `line` (may be NULL) after `delay` seconds, then holding. */
static void fx_watch(struct fx *f, const char *path, double delay, const char *line)
{
    const char *lines[] = {line, NULL};
    fx_watch_steps(f, path, delay, lines);
}

static void fx_cm_watch(struct fx *f, double delay, const char *line)
{
    fx_watch(f, CMS, delay, line);
}

static void fx_init(struct fx *f, double shrink_s, const char *const *extra_args)
{
    memset(f, 0, sizeof *f);
    f->loop = ev_loop_new(EVFLAG_AUTO);
    f->srv = fakesrv_start(NULL);
    f->cfg = kube_rest_config_new();
    f->cfg->server = xstrdup(fakesrv_url(f->srv));
    struct kube_client_opts co = {.max_retries = -1, .backoff_s = 0.01};
    struct err e;
    err_clear(&e);
    assert_int_equal(kube_client_new(f->loop, f->cfg, &co, NULL, &f->client, &e), 0);
    f->reg = metrics_registry_new();
    quota_flags(&f->o, f->fl);
    assert_int_equal(flags_set_defaults(f->fl, QUOTA_NFLAGS, &e), 0);
    char sd[32];
    snprintf(sd, sizeof sd, "--shrink-delay=%gs", shrink_s);
    char *argv[8] = {sd};
    int argc = 1;
    for (size_t i = 0; extra_args && extra_args[i] && argc < 8; i++)
        argv[argc++] = (char *)extra_args[i];
    bool help = false;
    assert_int_equal(flags_parse(f->fl, QUOTA_NFLAGS, argc, argv, NULL, NULL, &help, &e), 0);
}

static void fx_start(struct fx *f)
{
    struct err e;
    err_clear(&e);
    struct quota_tuning t = {.retry_s = 0.05, .metrics_period_s = 0.05, .informer_backoff_s = 0.01};
    assert_int_equal(quota_ctl_new(&f->o, &t, &f->q, &e), 0);
    /* QTEST_LOG=1 shows the controller's log lines when debugging a failure. */
    if (f->capture)
        f->logf = open_memstream(&f->logtext, &f->loglen);
    log_init(&f->lg, f->logf ? f->logf : stderr, f->logf ? 0 : 4, LOG_FMT_TEXT);
    const struct logger *lg = getenv("QTEST_LOG") || f->logf ? &f->lg : NULL;
    if (quota_ctl_start(f->q, f->client, f->reg, NULL, lg, &e) != 0)
        fail_msg("start: %s", e.msg);
}

static void fx_free(struct fx *f)
{
    quota_ctl_free(f->q);
    kube_client_free(f->client);
    metrics_registry_free(f->reg);
    fakesrv_stop(f->srv);
    kube_rest_config_free(f->cfg);
    flags_free(f->fl, QUOTA_NFLAGS);
    ev_loop_destroy(f->loop);
    if (f->logf)
        fclose(f->logf);
    free(f->logtext);
}

/* The captured log so far. */
static const char *fx_log(struct fx *f)
{
    fflush(f->logf);
    return f->logtext ? f->logtext : "";
}

/* Requests with this method whose path starts with `path`, in arrival order. */
static size_t count_req(struct fx *f, const char *method, const char *path)
{
    size_t n = 0, tot = fakesrv_nreq(f->srv);
    for (size_t i = 0; i < tot; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->srv, i);
        if (strcmp(r->method, method) == 0 && strncmp(r->path, path, strlen(path)) == 0)
            n++;
        fakesrv_req_free(r);
    }
    return n;
}

/* The k-th (0-based) such request; caller frees. */
static struct fakesrv_req *nth_req(struct fx *f, const char *method, const char *path, size_t k)
{
    size_t tot = fakesrv_nreq(f->srv);
    for (size_t i = 0; i < tot; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->srv, i);
        if (strcmp(r->method, method) == 0 && strncmp(r->path, path, strlen(path)) == 0 && k-- == 0)
            return r;
        fakesrv_req_free(r);
    }
    fail_msg("no %s %s #%zu", method, path, k);
    return NULL;
}

struct waiter {
    struct fx *f;
    const char *method, *path;
    size_t want;
    bool ok;
};

static void poll_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    struct waiter *wt = w->data;
    if (count_req(wt->f, wt->method, wt->path) >= wt->want) {
        wt->ok = true;
        ev_break(loop, EVBREAK_ALL);
    }
}

static void deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/* Run the loop until `want` requests (method, path prefix) were received, or `timeout` s. */
static bool wait_req(struct fx *f, const char *method, const char *path, size_t want,
                     double timeout)
{
    struct waiter wt = {f, method, path, want, false};
    ev_timer poll, dl;
    ev_timer_init(&poll, poll_cb, 0.005, 0.005);
    poll.data = &wt;
    ev_timer_init(&dl, deadline_cb, timeout, 0);
    ev_timer_start(f->loop, &poll);
    ev_timer_start(f->loop, &dl);
    ev_run(f->loop, 0);
    ev_timer_stop(f->loop, &poll);
    ev_timer_stop(f->loop, &dl);
    return wt.ok;
}

/* The k-th PATCH must carry exactly `want` (single-quoted JSON). */
static void assert_patch(struct fx *f, size_t k, const char *want)
{
    struct fakesrv_req *r = nth_req(f, "PATCH", CQS_B1 "/cq", k);
    const char *ct = fakesrv_req_header(r, "content-type");
    assert_non_null(ct);
    assert_string_equal(ct, "application/merge-patch+json");
    json_error_t je;
    json_t *got = json_loads(r->body, 0, &je);
    assert_non_null(got);
    json_t *w = J(want);
    if (!json_equal(got, w)) {
        char *ws = json_dumps(w, JSON_SORT_KEYS);
        char *gs = json_dumps(got, JSON_SORT_KEYS);
        fail_msg("PATCH #%zu:\n got  %s\n want %s", k, gs, ws);
    }
    json_decref(w);
    json_decref(got);
    fakesrv_req_free(r);
}

#define NODE(n, cpu, mem)                                                                          \
    "{'name':'" n "','allocatableResources':{'cpu':'" cpu "','memory':'" mem "'}}"

#define PATCH_BODY(rv, cpu, mem, src)                                                              \
    "{'metadata':{'resourceVersion':'" rv "','annotations':{'kueue-ks.io/quota-source':'" src      \
    "'}},'spec':{'resourceGroups':[{'coveredResources':['cpu','memory'],'flavors':[{'name':"       \
    "'default-flavor','resources':[{'name':'cpu','nominalQuota':'" cpu "'},{'name':'memory',"      \
    "'nominalQuota':'" mem "'}]}]}]}}"

/* Is there an Event POST whose body has this reason and contains `text`? */
static bool has_event(struct fx *f, const char *type, const char *reason, const char *text)
{
    size_t n = count_req(f, "POST", EVENTS);
    for (size_t k = 0; k < n; k++) {
        struct fakesrv_req *r = nth_req(f, "POST", EVENTS, k);
        json_t *b = json_loads(r->body, 0, NULL);
        const char *t = json_string_value(json_object_get(b, "type"));
        const char *re = json_string_value(json_object_get(b, "reason"));
        const char *m = json_string_value(json_object_get(b, "message"));
        const char *kind =
            json_string_value(json_object_get(json_object_get(b, "involvedObject"), "kind"));
        bool ok = t && re && m && kind && strcmp(t, type) == 0 && strcmp(re, reason) == 0 &&
                  strstr(m, text) && strcmp(kind, "ClusterQueue") == 0;
        json_decref(b);
        fakesrv_req_free(r);
        if (ok)
            return true;
    }
    return false;
}

/* ---- tests ---------------------------------------------------------------------------- */

/* Initial write, then one ClusterMetrics update -> one PATCH with the new sum, then nothing. */
static void test_initial_then_update(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 60, NULL);
    f.capture = true;
    char *cq = cq_json("7", "0", "0");
    char *cm = cm_json("c1", "21", NODE("n1", "2", "4Gi") "," NODE("n2", "2", "4Gi"));
    fx_script(&f, "{'version':'v1beta1'}", cq, cm);
    char *cm2 = cm_json("c1", "22", NODE("n1", "2", "4Gi") "," NODE("n2", "4", "4Gi"));
    char *line = watch_line("MODIFIED", cm2);
    fx_cm_watch(&f, 0.8, line);
    char *cq8 = cq_json("8", "4", "8Gi");
    fakesrv_push_json(f.srv, "PATCH", CQS_B1 "/cq", NULL, 200, cq8);
    char *cq9 = cq_json("9", "6", "8Gi");
    fakesrv_push_json(f.srv, "PATCH", CQS_B1 "/cq", NULL, 200, cq9);
    fx_start(&f);

    assert_true(wait_req(&f, "PATCH", CQS_B1 "/cq", 1, 5.0));
    assert_string_equal(quota_ctl_kueue_version(f.q), "v1beta1");
    assert_patch(&f, 0,
                 PATCH_BODY("7", "4", "8Gi",
                            "default-flavor/cpu=4: c1=4; default-flavor/memory=8Gi: c1=8Gi"));
    assert_true(wait_req(&f, "PATCH", CQS_B1 "/cq", 2, 5.0));
    assert_patch(&f, 1,
                 PATCH_BODY("8", "6", "8Gi",
                            "default-flavor/cpu=6: c1=6; default-flavor/memory=8Gi: c1=8Gi"));
    /* Nothing changed since: no third write. */
    tloop_run_for(f.loop, 0.4);
    assert_int_equal(count_req(&f, "PATCH", CQS_B1), 2);
    assert_true(quota_ctl_synced(f.q));
    struct quota_stats st;
    quota_ctl_stats(f.q, &st);
    assert_int_equal(st.patches, 2);
    assert_int_equal(st.managed, 1);
    assert_int_equal(st.errors, 0);
    assert_true(wait_req(&f, "POST", EVENTS, 2, 5.0));
    assert_true(has_event(&f, "Normal", "QuotaUpdated",
                          "default-flavor/cpu 0 -> 4, default-flavor/memory 0 -> 8Gi"));
    assert_true(has_event(&f, "Normal", "QuotaUpdated", "default-flavor/cpu 4 -> 6"));
    /* the log: taken over (why), its first write replaces the quota it was
     * created with, later writes update it */
    const char *log = fx_log(&f);
    const char *l1 = strstr(log, "msg=\"managing ClusterQueue quota\" clusterqueue=cq by=\"label "
                                 "kueue-ks.io/managed-quota=true\"");
    const char *l2 = strstr(log, "msg=\"ClusterQueue quota replaced by the workers' capacity\" "
                                 "clusterqueue=cq changes=\"default-flavor/cpu 0 -> 4, "
                                 "default-flavor/memory 0 -> 8Gi\"");
    const char *l3 = strstr(log, "msg=\"quota updated\" clusterqueue=cq changes=\"default-flavor/"
                                 "cpu 4 -> 6\"");
    if (!l1 || !l2 || !l3 || l2 < l1 || l3 < l2 || strstr(l3, "replaced by"))
        fail_msg("log lines:\n%s", log);
    /* The quota gauge follows the written value. */
    tloop_run_for(f.loop, 0.1);
    struct buf b;
    buf_init(&b, 1 << 20);
    metrics_registry_write(f.reg, &b);
    assert_non_null(strstr(buf_str(&b),
                           "kueue_ks_quota{cluster_queue=\"cq\",flavor=\"default-flavor\","
                           "resource=\"cpu\"} 6\n"));
    assert_non_null(
        strstr(buf_str(&b), "kueue_ks_reconcile_errors_total{controller=\"quota\"} 0\n"));
    buf_free(&b);
    assert_int_equal(fakesrv_unmatched(f.srv), 0);
    free(cq);
    free(cm);
    free(cm2);
    free(line);
    free(cq8);
    free(cq9);
    fx_free(&f);
}

/* A node of 8 cpu and 32Gi with `req` cpu requested, `man` of it by hub work. */
#define NODE8(n, req, man)                                                                         \
    "{'name':'" n "','allocatableResources':{'cpu':'8','memory':'32Gi'},"                          \
    "'allocatedResourceRequests':{'cpu':'" req "'},'managedResourceRequests':{'cpu':'" man "'}}"

/* The overshoot of a reservation made before the agent reports its pods:
 * reserve 2 of 16 cpu -> pods not reported yet -> pods reported. The quota
 * stays 16 throughout (the old rule wrote 18, then 16 again); the first
 * write is the one a later local pod causes: 11 free + 2 added back. */
static void test_reservation_before_pods_reported(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 0, NULL);
    char *cq = cq_json("30", "16", "64Gi");
    char *cm = cm_json("c1", "21", NODE8("n1", "0", "0") "," NODE8("n2", "0", "0"));
    fx_script_lists(&f, "{'version':'v1beta1'}", cq, cm);
    /* The ClusterQueue reserves 2 cpu (status.flavorsReservation). */
    json_t *cqr = J(cq);
    json_object_set_new(cqr, "status",
                        J("{'flavorsReservation':[{'name':'default-flavor','resources':["
                          "{'name':'cpu','total':'2'}]}]}"));
    json_object_set_new(json_object_get(cqr, "metadata"), "resourceVersion", json_string("31"));
    char *cqr_s = json_dumps(cqr, JSON_COMPACT);
    char *cq_line = watch_line("MODIFIED", cqr_s);
    const char *cq_lines[] = {cq_line, NULL};
    fx_watch_steps(&f, CQS_B1, 0.3, cq_lines);
    /* Then the agent reports the pods (2 cpu on n1), then a local pod (3 on n2). */
    char *cm2 = cm_json("c1", "22", NODE8("n1", "2", "2") "," NODE8("n2", "0", "0"));
    char *cm3 = cm_json("c1", "23", NODE8("n1", "2", "2") "," NODE8("n2", "3", "0"));
    char *l2 = watch_line("MODIFIED", cm2), *l3 = watch_line("MODIFIED", cm3);
    const char *cm_lines[] = {l2, l3, NULL};
    fx_watch_steps(&f, CMS, 1.5, cm_lines);
    char *cq32 = cq_json("32", "13", "64Gi");
    fakesrv_push_json(f.srv, "PATCH", CQS_B1 "/cq", NULL, 200, cq32);
    fx_start(&f);

    assert_true(wait_req(&f, "PATCH", CQS_B1 "/cq", 1, 8.0));
    assert_patch(&f, 0,
                 PATCH_BODY("31", "13", "64Gi",
                            "default-flavor/cpu=13: c1=11 reserved=2; "
                            "default-flavor/memory=64Gi: c1=64Gi"));
    tloop_run_for(f.loop, 0.3);
    assert_int_equal(count_req(&f, "PATCH", CQS_B1), 1);
    assert_int_equal(fakesrv_unmatched(f.srv), 0);
    json_decref(cqr);
    free(cqr_s);
    free(cq_line);
    free(cq);
    free(cm);
    free(cm2);
    free(cm3);
    free(l2);
    free(l3);
    free(cq32);
    fx_free(&f);
}

/* A lower capacity is written only after the shrink delay. */
static void test_shrink_after_delay(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1.0, NULL);
    char *cq = cq_json("7", "4", "8Gi");
    char *cm = cm_json("c1", "21", NODE("n1", "4", "8Gi"));
    fx_script(&f, "{'version':'v1beta1'}", cq, cm);
    char *cm2 = cm_json("c1", "22", NODE("n1", "1", "8Gi"));
    char *line = watch_line("MODIFIED", cm2);
    fx_cm_watch(&f, 0.3, line);
    char *cq8 = cq_json("8", "1", "8Gi");
    fakesrv_push_json(f.srv, "PATCH", CQS_B1 "/cq", NULL, 200, cq8);
    fx_start(&f);

    /* The queue already holds the values: no write at start, nor right after the drop. */
    tloop_run_for(f.loop, 0.8);
    assert_int_equal(count_req(&f, "PATCH", CQS_B1), 0);
    assert_true(wait_req(&f, "PATCH", CQS_B1 "/cq", 1, 5.0));
    struct fakesrv_req *w = nth_req(&f, "GET", CMS, 1); /* the watch */
    assert_non_null(strstr(w->query, "watch="));
    struct fakesrv_req *p = nth_req(&f, "PATCH", CQS_B1 "/cq", 0);
    double waited = p->t - w->t;
    if (waited < 0.3 + 1.0 - 0.05)
        fail_msg("shrink applied after %.3f s, before the 1 s delay", waited);
    fakesrv_req_free(w);
    fakesrv_req_free(p);
    assert_patch(&f, 0,
                 PATCH_BODY("7", "1", "8Gi",
                            "default-flavor/cpu=1: c1=1; default-flavor/memory=8Gi: c1=8Gi"));
    free(cq);
    free(cm);
    free(cm2);
    free(line);
    free(cq8);
    fx_free(&f);
}

/* 409: the controller fetches the fresh ClusterQueue and writes again with its resourceVersion. */
static void test_conflict_retry(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 60, NULL);
    char *cq = cq_json("7", "0", "0");
    char *cm = cm_json("c1", "21", NODE("n1", "4", "8Gi"));
    fx_script(&f, "{'version':'v1beta1'}", cq, cm);
    fx_cm_watch(&f, 0, NULL);
    fakesrv_push_status(f.srv, "PATCH", CQS_B1 "/cq", 409, "Conflict",
                        "the object has been modified");
    /* Someone else set memory meanwhile (rv 12). */
    char *fresh = cq_json("12", "0", "8Gi");
    fakesrv_push_json(f.srv, "GET", CQS_B1 "/cq", "watch=", 200, fresh);
    char *done = cq_json("13", "4", "8Gi");
    fakesrv_push_json(f.srv, "PATCH", CQS_B1 "/cq", NULL, 200, done);
    fx_start(&f);

    assert_true(wait_req(&f, "PATCH", CQS_B1 "/cq", 2, 5.0));
    assert_patch(&f, 0,
                 PATCH_BODY("7", "4", "8Gi",
                            "default-flavor/cpu=4: c1=4; default-flavor/memory=8Gi: c1=8Gi"));
    assert_patch(&f, 1,
                 PATCH_BODY("12", "4", "8Gi",
                            "default-flavor/cpu=4: c1=4; default-flavor/memory=8Gi: c1=8Gi"));
    assert_int_equal(count_req(&f, "GET", CQS_B1 "/cq"), 1);
    tloop_run_for(f.loop, 0.3);
    assert_int_equal(count_req(&f, "PATCH", CQS_B1), 2);
    struct quota_stats st;
    quota_ctl_stats(f.q, &st);
    assert_int_equal(st.conflicts, 1);
    assert_int_equal(st.patches, 1);
    assert_true(has_event(&f, "Normal", "QuotaUpdated", "default-flavor/cpu 0 -> 4"));
    assert_int_equal(fakesrv_unmatched(f.srv), 0);
    free(cq);
    free(cm);
    free(fresh);
    free(done);
    fx_free(&f);
}

/* Bad node data: a Warning Event naming cluster, node and field; the value is not summed. */
static void test_bad_data_warning(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 60, NULL);
    char *cq = cq_json("7", "0", "0");
    char *cm = cm_json("c1", "21", NODE("n1", "abc", "4Gi") "," NODE("n2", "2", "-1Gi"));
    fx_script(&f, "{'version':'v1beta1'}", cq, cm);
    fx_cm_watch(&f, 0, NULL);
    char *cq8 = cq_json("8", "2", "4Gi");
    fakesrv_push_json(f.srv, "PATCH", CQS_B1 "/cq", NULL, 200, cq8);
    fx_start(&f);

    assert_true(wait_req(&f, "PATCH", CQS_B1 "/cq", 1, 5.0));
    assert_patch(&f, 0,
                 PATCH_BODY("7", "2", "4Gi",
                            "default-flavor/cpu=2: c1=2; default-flavor/memory=4Gi: c1=4Gi"));
    assert_true(wait_req(&f, "POST", EVENTS, 3, 5.0));
    assert_true(has_event(&f, "Warning", "BadClusterMetrics",
                          "cluster c1: node n1: allocatableResources.cpu"));
    assert_true(has_event(&f, "Warning", "BadClusterMetrics",
                          "cluster c1: node n2: allocatableResources.memory: negative"));
    free(cq);
    free(cm);
    free(cq8);
    fx_free(&f);
}

/* v1beta2 is preferred; queues neither labelled nor named are left alone; a queue named by
 * --cluster-queue is managed; equal values are not written. */
static void test_v1beta2_selection_no_write(void **state)
{
    (void)state;
    struct fx f;
    const char *args[] = {"--cluster-queue", "named", NULL};
    fx_init(&f, 60, args);
    const char *disc = "{\"kind\":\"APIGroup\",\"versions\":[{\"version\":\"v1beta2\"},"
                       "{\"version\":\"v1beta1\"}]}";
    fakesrv_push_json(f.srv, "GET", KQ, "watch=", 200, disc);
    const char *none[] = {NULL};
    fakesrv_push_json(f.srv, "GET", KQ "/v1beta2/resourceflavors", "watch=", 200,
                      "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}");
    fakesrv_push_watch(f.srv, KQ "/v1beta2/resourceflavors", none, FAKESRV_HOLD);
    char *cm = cm_json("c1", "21", NODE("n1", "4", "8Gi"));
    char *l = list_json("ClusterMetrics", "20", cm);
    fakesrv_push_json(f.srv, "GET", CMS, "watch=", 200, l);
    free(l);
    fx_cm_watch(&f, 0, NULL);
    char *t = Q("{'metadata':{'name':'named','resourceVersion':'3'},'spec':{'resourceGroups':[{"
                "'coveredResources':['cpu'],'flavors':[{'name':'default-flavor','resources':[{"
                "'name':'cpu','nominalQuota':'4'}]}]}]}},"
                "{'metadata':{'name':'other','resourceVersion':'4'},'spec':{'resourceGroups':[{"
                "'coveredResources':['cpu'],'flavors':[{'name':'default-flavor','resources':[{"
                "'name':'cpu','nominalQuota':'1'}]}]}]}}");
    l = list_json("ClusterQueue", "5", t);
    fakesrv_push_json(f.srv, "GET", KQ "/v1beta2/clusterqueues", "watch=", 200, l);
    free(l);
    free(t);
    fakesrv_push_watch(f.srv, KQ "/v1beta2/clusterqueues", none, FAKESRV_HOLD);
    fx_start(&f);

    for (int i = 0; i < 200 && !quota_ctl_synced(f.q); i++)
        tloop_run_for(f.loop, 0.01);
    assert_true(quota_ctl_synced(f.q));
    tloop_run_for(f.loop, 0.3);
    assert_string_equal(quota_ctl_kueue_version(f.q), "v1beta2");
    assert_int_equal(count_req(&f, "PATCH", KQ), 0);
    struct quota_stats st;
    quota_ctl_stats(f.q, &st);
    assert_int_equal(st.managed, 1);
    assert_true(st.reconciles >= 1);
    assert_int_equal(fakesrv_unmatched(f.srv), 0);
    free(cm);
    fx_free(&f);
}

/* Kueue missing: discovery 404 is retried, nothing crashes, not synced. */
static void test_no_kueue_retries(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 60, NULL);
    struct fakesrv_resp r = {.method = "GET",
                             .path = KQ,
                             .status = 404,
                             .body = "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}",
                             .times = -1};
    fakesrv_push(f.srv, &r);
    fx_start(&f);
    assert_true(wait_req(&f, "GET", KQ, 3, 5.0));
    assert_false(quota_ctl_synced(f.q));
    assert_string_equal(quota_ctl_kueue_version(f.q), "");
    fx_free(&f);
}

/* A cluster whose metrics go stale drops out (timer-driven, no event arrives), after the
 * stale window plus the shrink delay; the age gauge is exported. */
static void test_stale_cluster_drops_out(void **state)
{
    (void)state;
    struct fx f;
    const char *args[] = {"--metrics-stale-after=1s", NULL};
    fx_init(&f, 0.4, args);
    char *cq = cq_json("7", "4", "8Gi");
    char now[64];
    clock_now_rfc3339(now, sizeof now, 1);
    char *t = xasprintf("{'metadata':{'name':'c1','resourceVersion':'21'},'status':{"
                        "'lastUpdated':'%s','conditions':[{'type':'Ready','status':'True'}],"
                        "'nodes':[" NODE("n1", "4", "8Gi") "]}}",
                        now);
    char *cm = Q(t);
    free(t);
    fx_script(&f, "{'version':'v1beta1'}", cq, cm);
    fx_cm_watch(&f, 0, NULL);
    char *cq8 = cq_json("8", "0", "0");
    fakesrv_push_json(f.srv, "PATCH", CQS_B1 "/cq", NULL, 200, cq8);
    double t0 = clock_mono_s();
    fx_start(&f);

    tloop_run_for(f.loop, 0.5);
    assert_int_equal(count_req(&f, "PATCH", CQS_B1), 0); /* fresh: the queue already agrees */
    struct buf b;
    buf_init(&b, 1 << 20);
    metrics_registry_write(f.reg, &b);
    assert_non_null(strstr(buf_str(&b), "kueue_ks_cluster_metrics_age_seconds{cluster=\"c1\"} "));
    buf_free(&b);
    assert_true(wait_req(&f, "PATCH", CQS_B1 "/cq", 1, 5.0));
    struct fakesrv_req *p = nth_req(&f, "PATCH", CQS_B1 "/cq", 0);
    if (p->t - t0 < 1.0 + 0.4 - 0.1)
        fail_msg("stale cluster removed after %.3f s, before stale window + shrink delay",
                 p->t - t0);
    fakesrv_req_free(p);
    assert_patch(&f, 0,
                 PATCH_BODY("7", "0", "0",
                            "default-flavor/cpu=0: no clusters; default-flavor/memory=0: no "
                            "clusters; stale: c1"));
    /* the Event (and the log line) say why the quota fell: the stale cluster left out */
    const char *why = "; left out (metrics older than --metrics-stale-after, missing or not "
                      "ready): c1";
    for (int i = 0; i < 250 && !has_event(&f, "Normal", "QuotaUpdated", why); i++)
        tloop_run_for(f.loop, 0.02);
    assert_true(has_event(&f, "Normal", "QuotaUpdated", why));
    free(cq);
    free(cm);
    free(cq8);
    fx_free(&f);
}

/* A failed write (500) is counted and retried with the rate limiter, same resourceVersion. */
static void test_server_error_retried(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 60, NULL);
    char *cq = cq_json("7", "0", "0");
    char *cm = cm_json("c1", "21", NODE("n1", "4", "8Gi"));
    fx_script(&f, "{'version':'v1beta1'}", cq, cm);
    fx_cm_watch(&f, 0, NULL);
    fakesrv_push_status(f.srv, "PATCH", CQS_B1 "/cq", 500, "InternalError", "etcd is sad");
    char *cq8 = cq_json("8", "4", "8Gi");
    fakesrv_push_json(f.srv, "PATCH", CQS_B1 "/cq", NULL, 200, cq8);
    fx_start(&f);

    assert_true(wait_req(&f, "PATCH", CQS_B1 "/cq", 2, 5.0));
    const char *body = PATCH_BODY("7", "4", "8Gi",
                                  "default-flavor/cpu=4: c1=4; default-flavor/memory=8Gi: c1=8Gi");
    assert_patch(&f, 0, body);
    assert_patch(&f, 1, body);
    tloop_run_for(f.loop, 0.2);
    assert_int_equal(count_req(&f, "PATCH", CQS_B1), 2);
    struct quota_stats st;
    quota_ctl_stats(f.q, &st);
    assert_int_equal(st.errors, 1);
    assert_int_equal(st.patches, 1);
    struct buf b;
    buf_init(&b, 1 << 20);
    metrics_registry_write(f.reg, &b);
    assert_non_null(
        strstr(buf_str(&b), "kueue_ks_reconcile_errors_total{controller=\"quota\"} 1\n"));
    buf_free(&b);
    free(cq);
    free(cm);
    free(cq8);
    fx_free(&f);
}

static int dummy_check(void *ud, struct err *e)
{
    (void)ud;
    (void)e;
    return 0;
}

/* A queue that loses its label is left alone (no write, gauges gone); readiness is registered. */
static void test_unlabelled_queue_released(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 60, NULL);
    char *cq = cq_json("7", "4", "8Gi");
    char *cm = cm_json("c1", "21", NODE("n1", "4", "8Gi"));
    fx_script_lists(&f, "{'version':'v1beta1'}", cq, cm);
    char *t = Q("{'metadata':{'name':'cq','resourceVersion':'8','labels':{}},'spec':{"
                "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':"
                "'default-flavor','resources':[{'name':'cpu','nominalQuota':'4'}]}]}]}}");
    char *cql = watch_line("MODIFIED", t);
    fx_watch(&f, CQS_B1, 0.2, cql);
    char *cm2 = cm_json("c1", "22", NODE("n1", "8", "8Gi"));
    char *cml = watch_line("MODIFIED", cm2);
    fx_watch(&f, CMS, 0.8, cml);

    struct err e;
    err_clear(&e);
    struct httpd_config hc = {.bind_addr = "127.0.0.1:0"};
    struct httpd *h = httpd_new(f.loop, &hc, &e);
    assert_non_null(h);
    struct quota_tuning tun = {
        .retry_s = 0.05, .metrics_period_s = 0.05, .informer_backoff_s = 0.01};
    assert_int_equal(quota_ctl_new(&f.o, &tun, &f.q, &e), 0);
    assert_int_equal(quota_ctl_start(f.q, f.client, f.reg, h, NULL, &e), 0);
    assert_int_equal(httpd_add_readyz_check(h, "quota-informers-synced", dummy_check, NULL),
                     -EEXIST);

    for (int i = 0; i < 200 && !quota_ctl_synced(f.q); i++)
        tloop_run_for(f.loop, 0.01);
    struct quota_stats st;
    quota_ctl_stats(f.q, &st);
    assert_int_equal(st.managed, 1);
    struct buf b;
    buf_init(&b, 1 << 20);
    metrics_registry_write(f.reg, &b);
    assert_non_null(strstr(buf_str(&b), "kueue_ks_quota{cluster_queue=\"cq\""));
    buf_free(&b);
    tloop_run_for(f.loop, 1.5);
    quota_ctl_stats(f.q, &st);
    assert_int_equal(st.managed, 0);
    assert_int_equal(count_req(&f, "PATCH", CQS_B1), 0);
    buf_init(&b, 1 << 20);
    metrics_registry_write(f.reg, &b);
    assert_null(strstr(buf_str(&b), "kueue_ks_quota{cluster_queue=\"cq\""));
    buf_free(&b);
    assert_int_equal(fakesrv_unmatched(f.srv), 0);
    quota_ctl_free(f.q);
    f.q = NULL;
    httpd_free(h);
    free(cq);
    free(cm);
    free(t);
    free(cql);
    free(cm2);
    free(cml);
    fx_free(&f);
}

static void test_options(void **state)
{
    (void)state;
    struct quota_options o;
    memset(&o, 0, sizeof o);
    struct flag fl[QUOTA_NFLAGS];
    quota_flags(&o, fl);
    struct err e;
    err_clear(&e);
    assert_int_equal(flags_set_defaults(fl, QUOTA_NFLAGS, &e), 0);
    char *argv[] = {"--resource-alias",      "gpu=nvidia.com/gpu",
                    "--quota-scale",         "0.9",
                    "--metrics-stale-after", "30s"};
    bool help = false;
    assert_int_equal(flags_parse(fl, QUOTA_NFLAGS, 6, argv, NULL, NULL, &help, &e), 0);
    struct agg_cfg c;
    assert_int_equal(quota_options_to_cfg(&o, &c, &e), 0);
    assert_string_equal(c.default_flavor, "default-flavor");
    assert_int_equal(c.scale_ppm, 900000);
    assert_int_equal(c.stale_after_ms, 30000);
    assert_int_equal(c.shrink_delay_ms, 60000);
    assert_true(c.subtract_requests);
    assert_int_equal(c.n_aliases, 1);
    assert_string_equal(c.aliases[0].name, "gpu");
    assert_string_equal(c.aliases[0].node_name, "nvidia.com/gpu");
    quota_cfg_release(&c);

    char *bad[] = {"--resource-alias", "nogood"};
    assert_int_equal(flags_parse(fl, QUOTA_NFLAGS, 2, bad, NULL, NULL, &help, &e), 0);
    assert_int_equal(quota_options_to_cfg(&o, &c, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "--resource-alias"));
    struct quota_ctl *q = NULL;
    assert_int_equal(quota_ctl_new(&o, NULL, &q, &e), -EINVAL);
    assert_null(q);
    flags_free(fl, QUOTA_NFLAGS);

    memset(&o, 0, sizeof o);
    quota_flags(&o, fl);
    assert_int_equal(flags_set_defaults(fl, QUOTA_NFLAGS, &e), 0);
    char *bad2[] = {"--quota-scale", "2"};
    assert_int_equal(flags_parse(fl, QUOTA_NFLAGS, 2, bad2, NULL, NULL, &help, &e), 0);
    assert_int_equal(quota_options_to_cfg(&o, &c, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "--quota-scale"));
    flags_free(fl, QUOTA_NFLAGS);
}

/* ClusterMetrics listed after the ClusterQueue: no quota is computed before
 * every informer has synced (with --shrink-delay=0 the queue briefly got the
 * "no clusters" quota of 0 written, then its real value again). */
static void test_no_write_before_synced(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 0, NULL);
    char *cm = cm_json("c1", "21", NODE("n1", "8", "32Gi") "," NODE("n2", "8", "32Gi"));
    char *l = list_json("ClusterMetrics", "20", cm);
    char *lq = Q(l);
    /* matched before the prompt one fx_script queues (FIFO among matches) */
    fakesrv_push(
        f.srv,
        &(struct fakesrv_resp){
            .method = "GET", .path = CMS, .query_lacks = "watch=", .delay_s = 0.6, .body = lq});
    char *cq = cq_json("30", "16", "64Gi");
    fx_script(&f, "{'version':'v1beta1'}", cq, cm);
    fx_cm_watch(&f, 0, NULL);
    fx_start(&f);
    tloop_run_for(f.loop, 1.5);
    assert_true(quota_ctl_synced(f.q));
    assert_int_equal(count_req(&f, "PATCH", CQS_B1), 0); /* the queue already holds 16 */
    free(l);
    free(lq);
    free(cm);
    free(cq);
    fx_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_initial_then_update),
        cmocka_unit_test(test_no_write_before_synced),
        cmocka_unit_test(test_reservation_before_pods_reported),
        cmocka_unit_test(test_shrink_after_delay),
        cmocka_unit_test(test_conflict_retry),
        cmocka_unit_test(test_bad_data_warning),
        cmocka_unit_test(test_v1beta2_selection_no_write),
        cmocka_unit_test(test_no_kueue_retries),
        cmocka_unit_test(test_stale_cluster_drops_out),
        cmocka_unit_test(test_server_error_retried),
        cmocka_unit_test(test_unlabelled_queue_released),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
