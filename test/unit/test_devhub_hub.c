/* Unit tests for devhub/hub: API semantics in-process (no HTTP). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/hub.h"
#include "pkg/json/jsonx.h"
#include "test/support/tloop.h"

struct fx {
    struct ev_loop *loop;
    struct hub *h;
    char *warnings; /* of the last call, NULL when none */
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->loop = ev_loop_new(0);
    struct hub_opts o = {.loop = f->loop, .gc_delay = 0.01, .compact_keep = 1000};
    struct err e = {0};
    if (hub_new(&f->h, &o, &e))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    hub_free(f->h);
    ev_loop_destroy(f->loop);
    free(f->warnings);
    free(f);
    return 0;
}

/* Perform a request; returns the status code, *out (optional) the parsed body. */
static int call(struct fx *f, const char *method, const char *path, const char *query,
                const char *ctype, const char *body, json_t **out)
{
    struct hub_kv kv[8];
    size_t n = 0;
    char qbuf[512];
    if (query) {
        snprintf(qbuf, sizeof(qbuf), "%s", query);
        char *save = NULL;
        for (char *p = strtok_r(qbuf, "&", &save); p && n < 8; p = strtok_r(NULL, "&", &save)) {
            char *eq = strchr(p, '=');
            if (eq)
                *eq++ = '\0';
            kv[n].key = p;
            kv[n].value = eq ? eq : "";
            n++;
        }
    }
    struct hub_req req = {.method = method,
                          .path = path,
                          .query = kv,
                          .nquery = n,
                          .content_type = ctype ? ctype : "application/json",
                          .body = body,
                          .body_len = body ? strlen(body) : 0,
                          .user = "test"};
    struct hub_resp resp;
    hub_handle(f->h, &req, &resp);
    assert_null(resp.watch);
    if (out)
        *out = resp.body ? json_loads(resp.body, 0, NULL) : NULL;
    int code = resp.code;
    free(f->warnings);
    f->warnings = resp.warnings;
    resp.warnings = NULL;
    hub_resp_release(&resp);
    return code;
}

static const char *S(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_string_value(v) ? json_string_value(v) : "";
}

#define CM "/api/v1/namespaces/default/configmaps"

static void test_crud_and_conflict(void **state)
{
    struct fx *f = *state;
    json_t *o = NULL;
    assert_int_equal(call(f, "POST", CM, NULL, NULL,
                          "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                          "\"a\",\"labels\":{\"x\":\"1\"}},\"data\":{\"k\":\"v\"}}",
                          &o),
                     201);
    assert_string_equal(S(o, "metadata", "namespace"), "default");
    assert_int_equal(strlen(S(o, "metadata", "uid")), 36);
    assert_true(strlen(S(o, "metadata", "creationTimestamp")) > 0);
    char rv1[32];
    snprintf(rv1, sizeof(rv1), "%s", S(o, "metadata", "resourceVersion"));
    json_decref(o);

    assert_int_equal(call(f, "POST", CM, NULL, NULL, "{\"metadata\":{\"name\":\"a\"}}", &o), 409);
    assert_string_equal(S(o, "reason", NULL), "AlreadyExists");
    json_decref(o);

    char body[256];
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"%s\"},\"data\":{\"k\":\"w\"}}",
             rv1);
    assert_int_equal(call(f, "PUT", CM "/a", NULL, NULL, body, &o), 200);
    assert_string_equal(S(o, "data", "k"), "w");
    json_decref(o);
    /* Same stale RV again: 409 with the apiserver's message. */
    assert_int_equal(call(f, "PUT", CM "/a", NULL, NULL, body, &o), 409);
    assert_string_equal(S(o, "message", NULL),
                        "Operation cannot be fulfilled on configmaps \"a\": the object has been "
                        "modified; please apply your changes to the latest version and try again");
    assert_string_equal(S(o, "reason", NULL), "Conflict");
    json_decref(o);

    assert_int_equal(call(f, "GET", CM "/nope", NULL, NULL, NULL, &o), 404);
    assert_string_equal(S(o, "message", NULL), "configmaps \"nope\" not found");
    json_decref(o);
    assert_int_equal(call(f, "POST", CM, NULL, NULL, "{bad json", &o), 400);
    assert_string_equal(S(o, "kind", NULL), "Status");
    json_decref(o);
    assert_int_equal(call(f, "GET", "/apis/nope.io/v1/things", NULL, NULL, NULL, NULL), 404);
    assert_int_equal(call(f, "POST", CM "/a", NULL, NULL, "{}", NULL), 405);
    assert_int_equal(call(f, "POST", "/api/v1/namespaces/missing/configmaps", NULL, NULL,
                          "{\"metadata\":{\"name\":\"b\"}}", &o),
                     404);
    assert_string_equal(S(o, "message", NULL), "namespaces \"missing\" not found");
    json_decref(o);

    /* generateName */
    assert_int_equal(
        call(f, "POST", CM, NULL, NULL, "{\"metadata\":{\"generateName\":\"g-\"}}", &o), 201);
    assert_int_equal(strlen(S(o, "metadata", "name")), 7);
    assert_memory_equal(S(o, "metadata", "name"), "g-", 2);
    json_decref(o);

    /* merge patch */
    assert_int_equal(call(f, "PATCH", CM "/a", NULL, "application/merge-patch+json",
                          "{\"data\":{\"z\":\"1\"}}", &o),
                     200);
    assert_string_equal(S(o, "data", "z"), "1");
    assert_string_equal(S(o, "data", "k"), "w");
    json_decref(o);
    assert_int_equal(
        call(f, "PATCH", CM "/a", NULL, "application/apply-patch+yaml", "data: {}", &o), 415);
    assert_non_null(strstr(S(o, "message", NULL), "not supported"));
    json_decref(o);
    /* the patch type is judged before the object is looked up, as the apiserver
     * does: an apply to a missing object is 415 too, not 404 (the operator's
     * start-up probe relies on it) */
    assert_int_equal(
        call(f, "PATCH", CM "/nope", "dryRun=All", "application/apply-patch+yaml", "data: {}", &o),
        415);
    json_decref(o);
    assert_int_equal(call(f, "PATCH", CM "/nope", NULL, "application/merge-patch+json", "{}", &o),
                     404);
    json_decref(o);
}

static void test_list_selectors_paging(void **state)
{
    struct fx *f = *state;
    for (int i = 0; i < 5; i++) {
        char body[128];
        snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"c%d\",\"labels\":{\"i\":\"%d\"}}}",
                 i, i % 2);
        assert_int_equal(call(f, "POST", CM, NULL, NULL, body, NULL), 201);
    }
    json_t *o = NULL;
    assert_int_equal(call(f, "GET", CM, "labelSelector=i=1", NULL, NULL, &o), 200);
    assert_string_equal(S(o, "kind", NULL), "ConfigMapList");
    assert_int_equal(json_array_size(json_object_get(o, "items")), 2);
    json_decref(o);
    assert_int_equal(call(f, "GET", CM, "fieldSelector=metadata.name=c3", NULL, NULL, &o), 200);
    assert_int_equal(json_array_size(json_object_get(o, "items")), 1);
    json_decref(o);
    assert_int_equal(call(f, "GET", CM, "labelSelector=a in (b", NULL, NULL, &o), 400);
    json_decref(o);

    /* Paging: 2 + 2 + 1. */
    char q[600];
    int seen = 0, pages = 0;
    snprintf(q, sizeof(q), "limit=2");
    for (;;) {
        assert_int_equal(call(f, "GET", CM, q, NULL, NULL, &o), 200);
        seen += (int)json_array_size(json_object_get(o, "items"));
        pages++;
        const char *cont = S(o, "metadata", "continue");
        if (!*cont) {
            json_decref(o);
            break;
        }
        snprintf(q, sizeof(q), "limit=2&continue=%s", cont);
        json_decref(o);
    }
    assert_int_equal(seen, 5);
    assert_int_equal(pages, 3);
    assert_int_equal(call(f, "GET", CM, "limit=2&continue=garbage", NULL, NULL, &o), 400);
    json_decref(o);

    /* A token from before a compaction is 410 Expired. */
    assert_int_equal(call(f, "GET", CM, "limit=2", NULL, NULL, &o), 200);
    snprintf(q, sizeof(q), "limit=2&continue=%s", S(o, "metadata", "continue"));
    json_decref(o);
    assert_int_equal(call(f, "POST", CM, NULL, NULL, "{\"metadata\":{\"name\":\"later\"}}", NULL),
                     201);
    assert_int_equal(call(f, "POST", "/devhub/compact", NULL, NULL, NULL, NULL), 200);
    assert_int_equal(call(f, "GET", CM, q, NULL, NULL, &o), 410);
    assert_string_equal(S(o, "reason", NULL), "Expired");
    json_decref(o);
}

/* The top-level keys of `o` in their order, comma-separated (into buf). */
static const char *key_order(const json_t *o, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        (void)v;
        len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "," : "", k);
        if (len >= n)
            break;
    }
    return buf;
}

/* List items are the stored objects as kube-apiserver lists them (built-in: no apiVersion/kind,
 * wherever the object's text had them; custom resources: the served apiVersion and kind), in
 * key order, every object once across pages (the items are spliced from the stored text, and
 * each page starts right after the previous one's last key). */
static void test_list_items_as_apiserver(void **state)
{
    struct fx *f = *state;
    char body[256], path[128];
    for (int i = 0; i < 30; i++) {
        /* apiVersion/kind first, last, or absent in the text the client sent */
        if (i % 3 == 0)
            snprintf(body, sizeof(body),
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                     "\"m%02d\"},\"data\":{\"k\":\"}\\\"{\"}}",
                     i);
        else if (i % 3 == 1)
            snprintf(body, sizeof(body),
                     "{\"metadata\":{\"name\":\"m%02d\"},\"data\":{\"k\":\"v\"},\"kind\":"
                     "\"ConfigMap\",\"apiVersion\":\"v1\"}",
                     i);
        else
            snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"m%02d\"}}", i);
        assert_int_equal(call(f, "POST", CM, NULL, NULL, body, NULL), 201);
    }
    json_t *o = NULL;
    assert_int_equal(call(f, "GET", CM, NULL, NULL, NULL, &o), 200);
    assert_string_equal(S(o, "kind", NULL), "ConfigMapList");
    char order[128];
    /* a built-in kind's list in its Go struct's order (kube-apiserver 1.34.4) */
    assert_string_equal(key_order(o, order, sizeof order), "kind,apiVersion,metadata,items");
    assert_string_equal(S(o, "apiVersion", NULL), "v1");
    json_t *items = json_object_get(o, "items");
    assert_int_equal(json_array_size(items), 30);
    for (int i = 0; i < 30; i++) {
        json_t *it = json_array_get(items, (size_t)i);
        snprintf(path, sizeof(path), "m%02d", i);
        assert_string_equal(S(it, "metadata", "name"), path);
        assert_null(json_object_get(it, "apiVersion"));
        assert_null(json_object_get(it, "kind"));
        /* the rest is the object as a GET returns it */
        json_t *g = NULL;
        snprintf(path, sizeof(path), CM "/m%02d", i);
        assert_int_equal(call(f, "GET", path, NULL, NULL, NULL, &g), 200);
        json_object_del(g, "apiVersion");
        json_object_del(g, "kind");
        assert_true(json_equal(g, it));
        json_decref(g);
    }
    json_decref(o);

    /* pages of 7: 7 + 7 + 7 + 7 + 2, in key order, none twice */
    char q[600];
    int seen = 0, pages = 0;
    snprintf(q, sizeof(q), "limit=7");
    for (;;) {
        assert_int_equal(call(f, "GET", CM, q, NULL, NULL, &o), 200);
        items = json_object_get(o, "items");
        for (size_t k = 0; k < json_array_size(items); k++) {
            snprintf(path, sizeof(path), "m%02d", seen++);
            assert_string_equal(S(json_array_get(items, k), "metadata", "name"), path);
        }
        pages++;
        const char *cont = S(o, "metadata", "continue");
        if (!*cont) {
            json_decref(o);
            break;
        }
        snprintf(q, sizeof(q), "limit=7&continue=%s", cont);
        json_decref(o);
    }
    assert_int_equal(seen, 30);
    assert_int_equal(pages, 5);
    /* resourceVersion=0 is answered whole, `limit` ignored (kube-apiserver 1.34.4 from its
     * watch cache; real_fidelity.sh cm-list-rv0) */
    assert_int_equal(call(f, "GET", CM, "resourceVersion=0&limit=7", NULL, NULL, &o), 200);
    assert_int_equal(json_array_size(json_object_get(o, "items")), 30);
    assert_string_equal(S(o, "metadata", "continue"), "");
    json_decref(o);

    /* a custom resource's items keep their type, the served one */
    json_t *crd = json_loads(
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
        "\"metadata\":{\"name\":\"things.ex.io\"},\"spec\":{\"group\":\"ex.io\",\"scope\":"
        "\"Namespaced\",\"names\":{\"plural\":\"things\",\"kind\":\"Thing\"},\"versions\":[{"
        "\"name\":\"v1\",\"served\":true,\"storage\":true}]}}",
        0, NULL);
    struct err e = {0};
    assert_int_equal(hub_apply_object(f->h, crd, &e), 0);
    json_decref(crd);
    assert_int_equal(call(f, "POST", "/apis/ex.io/v1/namespaces/default/things", NULL, NULL,
                          "{\"metadata\":{\"name\":\"t\"},\"spec\":{\"a\":1}}", NULL),
                     201);
    assert_int_equal(call(f, "GET", "/apis/ex.io/v1/things", NULL, NULL, NULL, &o), 200);
    assert_string_equal(S(o, "kind", NULL), "ThingList");
    /* an unstructured list: its keys sorted, the kind after the items (kube-apiserver 1.34.4,
     * `kubectl get --raw /apis/kueue.x-k8s.io/v1beta1/resourceflavors`) */
    assert_string_equal(key_order(o, order, sizeof order), "apiVersion,items,kind,metadata");
    json_t *t = json_array_get(json_object_get(o, "items"), 0);
    assert_string_equal(S(t, "apiVersion", NULL), "ex.io/v1");
    assert_string_equal(S(t, "kind", NULL), "Thing");
    assert_string_equal(S(t, "metadata", "name"), "t");
    json_decref(o);
}

/* Drain a watch's pending bytes into a string. */
static char *drain(struct hub_watch *w, ssize_t *last)
{
    static char buf[65536];
    size_t len = 0;
    ssize_t n;
    while ((n = hub_watch_read(w, buf + len, sizeof(buf) - 1 - len)) > 0)
        len += (size_t)n;
    buf[len] = '\0';
    if (last)
        *last = n;
    return buf;
}

static struct hub_watch *start_watch(struct fx *f, const char *path, struct hub_kv *kv, size_t n)
{
    struct hub_req req = {.method = "GET", .path = path, .query = kv, .nquery = n};
    struct hub_resp resp;
    hub_handle(f->h, &req, &resp);
    assert_int_equal(resp.code, 200);
    assert_non_null(resp.watch);
    hub_resp_release(&resp);
    return resp.watch;
}

static void test_watch(void **state)
{
    struct fx *f = *state;
    assert_int_equal(call(f, "POST", CM, NULL, NULL,
                          "{\"metadata\":{\"name\":\"w1\",\"labels\":{\"sel\":\"yes\"}}}", NULL),
                     201);
    char rv[32];
    snprintf(rv, sizeof(rv), "%lld", (long long)hub_rv(f->h));
    /* Initial state then changes, filtered by label: leaving the selector is a DELETED. */
    struct hub_kv kv[] = {{"watch", "1"}, {"labelSelector", "sel=yes"}};
    struct hub_watch *w = start_watch(f, CM, kv, 2);
    char *out = drain(w, NULL);
    assert_non_null(strstr(out, "{\"type\":\"ADDED\""));
    assert_non_null(strstr(out, "\"name\":\"w1\""));
    assert_int_equal(call(f, "PATCH", CM "/w1", NULL, "application/merge-patch+json",
                          "{\"data\":{\"a\":\"b\"}}", NULL),
                     200);
    out = drain(w, NULL);
    assert_non_null(strstr(out, "\"type\":\"MODIFIED\""));
    assert_int_equal(call(f, "PATCH", CM "/w1", NULL, "application/merge-patch+json",
                          "{\"metadata\":{\"labels\":{\"sel\":\"no\"}}}", NULL),
                     200);
    out = drain(w, NULL);
    assert_non_null(strstr(out, "\"type\":\"DELETED\""));
    assert_int_equal(hub_watch_count(f->h), 1);
    hub_watch_release(w);
    assert_int_equal(hub_watch_count(f->h), 0);

    /* From a resourceVersion: only later changes. */
    struct hub_kv kv2[] = {{"watch", "true"}, {"resourceVersion", rv}};
    w = start_watch(f, CM, kv2, 2);
    out = drain(w, NULL);
    assert_null(strstr(out, "ADDED"));
    assert_int_equal((int)(strstr(out, "MODIFIED") != NULL), 1);
    hub_watch_release(w);

    /* Compacted: HTTP 200, then an ERROR event with 410 Expired, then the end. */
    assert_int_equal(call(f, "POST", "/devhub/compact", NULL, NULL, NULL, NULL), 200);
    w = start_watch(f, CM, kv2, 2);
    ssize_t last = 0;
    out = drain(w, &last);
    assert_non_null(strstr(out, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\""));
    assert_non_null(strstr(out, "\"reason\":\"Expired\""));
    assert_non_null(strstr(out, "\"code\":410"));
    assert_int_equal(last, -1);
    hub_watch_release(w);
}

static void test_watch_timeout_and_bookmark(void **state)
{
    struct fx *f = *state;
    struct hub_kv kv[] = {{"watch", "1"}, {"timeoutSeconds", "1"}, {"allowWatchBookmarks", "true"}};
    struct hub_watch *w = start_watch(f, CM, kv, 3);
    drain(w, NULL);
    tloop_run_for(f->loop, 1.3);
    ssize_t last = 0;
    char *out = drain(w, &last);
    assert_non_null(strstr(out, "\"type\":\"BOOKMARK\""));
    assert_int_equal(last, -1);
    hub_watch_release(w);
}

static void test_finalizers_and_gc(void **state)
{
    struct fx *f = *state;
    json_t *o = NULL;
    assert_int_equal(call(f, "POST", CM, NULL, NULL,
                          "{\"metadata\":{\"name\":\"fin\",\"finalizers\":[\"x/y\"]}}", NULL),
                     201);
    assert_int_equal(call(f, "DELETE", CM "/fin", NULL, NULL, NULL, &o), 200);
    assert_true(strlen(S(o, "metadata", "deletionTimestamp")) > 0);
    json_decref(o);
    assert_int_equal(call(f, "GET", CM "/fin", NULL, NULL, NULL, &o), 200);
    assert_true(strlen(S(o, "metadata", "deletionTimestamp")) > 0);
    json_decref(o);
    assert_int_equal(call(f, "PATCH", CM "/fin", NULL, "application/json-patch+json",
                          "[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]", NULL),
                     200);
    assert_int_equal(call(f, "GET", CM "/fin", NULL, NULL, NULL, NULL), 404);

    /* Preconditions. */
    assert_int_equal(call(f, "POST", CM, NULL, NULL, "{\"metadata\":{\"name\":\"pre\"}}", NULL),
                     201);
    assert_int_equal(
        call(f, "DELETE", CM "/pre", NULL, NULL, "{\"preconditions\":{\"uid\":\"other\"}}", &o),
        409);
    assert_non_null(strstr(S(o, "message", NULL), "Precondition failed: UID in precondition"));
    json_decref(o);

    /* Background GC: the dependent goes once the owner is gone. */
    assert_int_equal(call(f, "POST", CM, NULL, NULL, "{\"metadata\":{\"name\":\"own\"}}", &o), 201);
    char body[512];
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"name\":\"dep\",\"ownerReferences\":[{\"apiVersion\":\"v1\","
             "\"kind\":\"ConfigMap\",\"name\":\"own\",\"uid\":\"%s\"}]}}",
             S(o, "metadata", "uid"));
    json_decref(o);
    assert_int_equal(call(f, "POST", CM, NULL, NULL, body, NULL), 201);
    assert_int_equal(call(f, "DELETE", CM "/own", NULL, NULL, NULL, NULL), 200);
    tloop_run_for(f->loop, 0.1);
    assert_int_equal(call(f, "GET", CM "/dep", NULL, NULL, NULL, NULL), 404);

    /* Orphan: the dependent stays and loses its owner reference. */
    assert_int_equal(call(f, "POST", CM, NULL, NULL, "{\"metadata\":{\"name\":\"own2\"}}", &o),
                     201);
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"name\":\"dep2\",\"ownerReferences\":[{\"apiVersion\":\"v1\","
             "\"kind\":\"ConfigMap\",\"name\":\"own2\",\"uid\":\"%s\"}]}}",
             S(o, "metadata", "uid"));
    json_decref(o);
    assert_int_equal(call(f, "POST", CM, NULL, NULL, body, NULL), 201);
    assert_int_equal(
        call(f, "DELETE", CM "/own2", NULL, NULL, "{\"propagationPolicy\":\"Orphan\"}", NULL), 200);
    tloop_run_for(f->loop, 0.1);
    assert_int_equal(call(f, "GET", CM "/dep2", NULL, NULL, NULL, &o), 200);
    assert_null(json_object_get(json_object_get(o, "metadata"), "ownerReferences"));
    json_decref(o);
    assert_int_equal(
        call(f, "DELETE", CM "/dep2", NULL, NULL, "{\"propagationPolicy\":\"Bad\"}", NULL), 422);
}

static void test_crd_and_status(void **state)
{
    struct fx *f = *state;
    json_t *crd = json_loads(
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
        "\"metadata\":{\"name\":\"things.ex.io\"},\"spec\":{\"group\":\"ex.io\",\"scope\":"
        "\"Namespaced\",\"names\":{\"plural\":\"things\",\"kind\":\"Thing\"},\"versions\":[{"
        "\"name\":\"v1\",\"served\":true,\"storage\":true,\"subresources\":{\"status\":{}}}]}}",
        0, NULL);
    struct err e = {0};
    assert_int_equal(hub_apply_object(f->h, crd, &e), 0);
    json_decref(crd);
    json_t *o = NULL;
    assert_int_equal(call(f, "GET", "/apis/ex.io/v1", NULL, NULL, NULL, &o), 200);
    assert_string_equal(S(json_array_get(json_object_get(o, "resources"), 1), "name", NULL),
                        "things/status");
    json_decref(o);
    assert_int_equal(call(f, "GET",
                          "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                          "things.ex.io",
                          NULL, NULL, NULL, &o),
                     200);
    assert_string_equal(
        S(json_array_get(json_object_get(json_object_get(o, "status"), "conditions"), 1), "type",
          NULL),
        "Established");
    json_decref(o);
#define TH "/apis/ex.io/v1/namespaces/default/things"
    assert_int_equal(call(f, "POST", TH, NULL, NULL,
                          "{\"apiVersion\":\"ex.io/v1\",\"kind\":\"Thing\",\"metadata\":{\"name\":"
                          "\"t\"},\"spec\":{\"a\":1},\"status\":{\"s\":\"ignored\"}}",
                          &o),
                     201);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(o, "metadata"), "generation")), 1);
    assert_null(json_object_get(o, "status"));
    json_decref(o);
    /* Status writes only change status (a custom resource's metadata neither, as with
     * kube-apiserver's apiextensions status strategy); main writes ignore status and bump
     * generation. */
    assert_int_equal(call(f, "PATCH", TH "/t/status", NULL, "application/merge-patch+json",
                          "{\"metadata\":{\"annotations\":{\"a\":\"b\"}},\"spec\":{\"a\":9},"
                          "\"status\":{\"s\":\"ok\"}}",
                          &o),
                     200);
    assert_string_equal(S(o, "status", "s"), "ok");
    assert_null(json_object_get(json_object_get(o, "metadata"), "annotations"));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "spec"), "a")), 1);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(o, "metadata"), "generation")), 1);
    json_decref(o);
    assert_int_equal(call(f, "PATCH", TH "/t", NULL, "application/merge-patch+json",
                          "{\"spec\":{\"a\":2},\"status\":{\"s\":\"x\"}}", &o),
                     200);
    assert_string_equal(S(o, "status", "s"), "ok");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(o, "metadata"), "generation")), 2);
    json_decref(o);
    /* Deleting the CRD removes its objects and stops serving it. */
    assert_int_equal(call(f, "DELETE",
                          "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.ex.io",
                          NULL, NULL, NULL, NULL),
                     200);
    assert_int_equal(call(f, "GET", TH "/t", NULL, NULL, NULL, NULL), 404);
    assert_int_equal(call(f, "GET", "/apis/ex.io/v1", NULL, NULL, NULL, NULL), 404);
}

static void test_discovery(void **state)
{
    struct fx *f = *state;
    json_t *o = NULL;
    assert_int_equal(call(f, "GET", "/version", NULL, NULL, NULL, &o), 200);
    assert_string_equal(S(o, "gitVersion", NULL), "v1.32.0");
    assert_string_equal(S(o, "minor", NULL), "32");
    json_decref(o);
    assert_int_equal(call(f, "GET", "/api", NULL, NULL, NULL, &o), 200);
    assert_string_equal(S(o, "kind", NULL), "APIVersions");
    json_decref(o);
    assert_int_equal(call(f, "GET", "/openapi/v3", NULL, NULL, NULL, &o), 200);
    assert_non_null(json_object_get(json_object_get(o, "paths"), "apis/batch/v1"));
    json_decref(o);
    assert_int_equal(call(f, "GET", "/openapi/v3/apis/batch/v1", NULL, NULL, NULL, &o), 200);
    assert_non_null(json_object_get(json_object_get(o, "paths"),
                                    "/apis/batch/v1/namespaces/{namespace}/jobs/{name}"));
    json_decref(o);
    assert_int_equal(call(f, "PUT", "/apis", NULL, NULL, "{}", NULL), 405);
    assert_int_equal(call(f, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", NULL,
                          NULL, "{\"spec\":{\"resourceAttributes\":{\"verb\":\"get\"}}}", &o),
                     201);
    assert_true(json_is_true(json_object_get(json_object_get(o, "status"), "allowed")));
    json_decref(o);
    assert_int_equal(call(f, "GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", NULL,
                          NULL, NULL, NULL),
                     405);
    assert_int_equal(call(f, "POST", "/api/v1/namespaces/default/configmaps", NULL,
                          "application/vnd.kubernetes.protobuf", "not protobuf", &o),
                     400);
    assert_non_null(strstr(S(o, "message", NULL), "magic"));
    json_decref(o);
    assert_int_equal(call(f, "GET", "/healthz", NULL, NULL, NULL, NULL), 200);
}

#define JOBS "/apis/batch/v1/namespaces/default/jobs"
#define JOB_BODY(spec_extra)                                                                       \
    "{\"apiVersion\":\"batch/"                                                                     \
    "v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\"},\"spec\":{" spec_extra                    \
    "\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":"               \
    "\"c\",\"image\":\"busybox\"}]}}}}"

/* fieldValidation: Strict fails (400 create/update, 422 patch), Warn warns, Ignore drops. */
static void test_field_validation(void **state)
{
    struct fx *f = *state;
    json_t *o = NULL;
    assert_int_equal(
        call(f, "POST", JOBS, "fieldValidation=Strict", NULL, JOB_BODY("\"paralelism\":2,"), &o),
        400);
    assert_string_equal(S(o, "reason", NULL), "BadRequest");
    assert_string_equal(S(o, "message", NULL),
                        "Job in version \"v1\" cannot be handled as a Job: strict decoding error: "
                        "unknown field \"spec.paralelism\"");
    json_decref(o);
    /* the decode error of a bad quantity comes before unknown fields */
    assert_int_equal(call(f, "POST", "/api/v1/namespaces/default/pods", "fieldValidation=Strict",
                          NULL,
                          "{\"metadata\":{\"name\":\"q\"},\"spec\":{\"containerz\":[],"
                          "\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{"
                          "\"limits\":{\"cpu\":\"1x\"}}}]}}",
                          &o),
                     400);
    assert_non_null(strstr(S(o, "message", NULL), "quantities must match"));
    json_decref(o);
    /* Warn (also the default): created without the field, one Warning per field */
    assert_int_equal(call(f, "POST", JOBS, "fieldValidation=Warn", NULL,
                          JOB_BODY("\"paralelism\":2,\"x\":1,"), &o),
                     201);
    assert_string_equal(f->warnings, "299 - \"unknown field \\\"spec.paralelism\\\"\"\n"
                                     "299 - \"unknown field \\\"spec.x\\\"\"");
    assert_null(json_object_get(json_object_get(o, "spec"), "paralelism"));
    json_decref(o);
    assert_int_equal(call(f, "DELETE", JOBS "/j", NULL, NULL, NULL, NULL), 200);
    assert_int_equal(call(f, "POST", JOBS, NULL, NULL, JOB_BODY("\"y\":1,"), NULL), 201);
    assert_non_null(f->warnings);
    assert_int_equal(call(f, "DELETE", JOBS "/j", NULL, NULL, NULL, NULL), 200);
    /* Ignore: dropped silently */
    assert_int_equal(
        call(f, "POST", JOBS, "fieldValidation=Ignore", NULL, JOB_BODY("\"paralelism\":2,"), &o),
        201);
    assert_null(f->warnings);
    assert_null(json_object_get(json_object_get(o, "spec"), "paralelism"));
    json_decref(o);
    /* PATCH with Strict: 422 on the patched object */
    assert_int_equal(call(f, "PATCH", JOBS "/j", "fieldValidation=Strict",
                          "application/merge-patch+json", "{\"spec\":{\"paralelism\":3}}", &o),
                     422);
    assert_string_equal(S(o, "reason", NULL), "Invalid");
    const char *m = S(o, "message", NULL);
    assert_true(strncmp(m, " \"\" is invalid: patch: Invalid value: \"{", 40) == 0);
    assert_non_null(strstr(m, "\": strict decoding error: unknown field \"spec.paralelism\""));
    json_decref(o);
    /* an unknown directive */
    assert_int_equal(call(f, "POST", JOBS, "fieldValidation=strict", NULL, JOB_BODY(""), &o), 422);
    assert_string_equal(S(o, "message", NULL),
                        "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported "
                        "value: \"strict\": supported values: \"Ignore\", \"Strict\", \"Warn\"");
    json_decref(o);
    /* a field error and an unknown field with Warn: 422 and the warning */
    assert_int_equal(
        call(f, "POST", CM, NULL, NULL, "{\"metadata\":{\"name\":\"Bad_Name\"},\"dat\":{}}", &o),
        422);
    assert_non_null(f->warnings);
    json_decref(o);
}

/* A Job gets the apiserver's defaults and its own selector; an update keeps them. */
static void test_job_defaults(void **state)
{
    struct fx *f = *state;
    json_t *o = NULL;
    assert_int_equal(call(f, "POST", JOBS, NULL, NULL, JOB_BODY(""), &o), 201);
    const char *uid = S(o, "metadata", "uid");
    json_t *ml =
        json_object_get(json_object_get(json_object_get(o, "spec"), "selector"), "matchLabels");
    assert_string_equal(
        json_string_value(json_object_get(ml, "batch.kubernetes.io/controller-uid")), uid);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(o, "spec"), "backoffLimit")), 6);
    char *cur = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    /* a replace of the stored object keeps everything (no generation bump) */
    assert_int_equal(call(f, "PUT", JOBS "/j", NULL, NULL, cur, &o), 200);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(o, "metadata"), "generation")), 1);
    json_decref(o);
    free(cur);
    /* a status write keeps the labels and annotations it brings (the Job status strategy
     * resets the spec only, as on kube-apiserver), never the spec; a custom resource's drops
     * them (test_crd_and_status) */
    assert_int_equal(call(f, "PATCH", JOBS "/j/status", NULL, "application/merge-patch+json",
                          "{\"metadata\":{\"labels\":{\"l\":\"v\"},\"annotations\":{\"a\":\"b\"}},"
                          "\"spec\":{\"parallelism\":5},\"status\":{\"active\":1}}",
                          &o),
                     200);
    assert_string_equal(jx_annotation(o, "a"), "b");
    assert_string_equal(jx_label(o, "l"), "v");
    assert_non_null(jx_uid(o));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "spec"), "parallelism")),
                     1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "status"), "active")),
                     1);
    json_decref(o);
    /* a replace without the selector: 422 Required */
    assert_int_equal(call(f, "PUT", JOBS "/j", NULL, NULL, JOB_BODY(""), &o), 422);
    assert_string_equal(S(o, "message", NULL),
                        "Job.batch \"j\" is invalid: spec.selector: Required value");
    json_decref(o);
}

static void admit_mark(void *ud, const char *group, const char *kind, json_t *obj)
{
    int *n = ud;
    (*n)++;
    if (!strcmp(group, "batch") && !strcmp(kind, "Job"))
        json_object_set_new(json_object_get(obj, "spec"), "suspend", json_true());
}

static void test_admit_hook(void **state)
{
    struct fx *f = *state;
    int n = 0;
    hub_set_admit(f->h, admit_mark, &n);
    json_t *o = NULL;
    assert_int_equal(call(f, "POST", JOBS, NULL, NULL, JOB_BODY(""), &o), 201);
    assert_true(json_is_true(json_object_get(json_object_get(o, "spec"), "suspend")));
    json_decref(o);
    assert_int_equal(n, 1);
    /* updates do not go through it; cleared, creates do not either */
    assert_int_equal(call(f, "PATCH", JOBS "/j", NULL, "application/merge-patch+json",
                          "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", NULL),
                     200);
    hub_set_admit(f->h, NULL, NULL);
    assert_int_equal(call(f, "POST", CM, NULL, NULL, "{\"metadata\":{\"name\":\"x\"}}", NULL), 201);
    assert_int_equal(n, 1);
}

#define PODS "/api/v1/namespaces/default/pods"

static void test_pod_log(void **state)
{
    struct fx *f = *state;
    json_t *o = NULL;
    assert_int_equal(call(f, "GET", PODS "/nope/log", NULL, NULL, NULL, &o), 404);
    assert_string_equal(S(o, "message", NULL), "pods \"nope\" not found");
    json_decref(o);
    assert_int_equal(call(f, "POST", PODS, NULL, NULL,
                          "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":"
                          "\"a\",\"image\":\"i\"},{\"name\":\"b\",\"image\":\"i\"}]}}",
                          NULL),
                     201);
    assert_int_equal(call(f, "GET", PODS "/p/log", NULL, NULL, NULL, &o), 400);
    assert_string_equal(S(o, "message", NULL),
                        "a container name must be specified for pod p, choose one of: [a b]");
    json_decref(o);
    assert_int_equal(call(f, "GET", PODS "/p/log", "container=z", NULL, NULL, &o), 400);
    assert_string_equal(S(o, "message", NULL), "container z is not valid for pod p");
    json_decref(o);
    /* not bound to a node: an empty log */
    struct hub_kv kv = {"container", "a"};
    struct hub_req req = {.method = "GET", .path = PODS "/p/log", .query = &kv, .nquery = 1};
    struct hub_resp resp;
    hub_handle(f->h, &req, &resp);
    assert_int_equal(resp.code, 200);
    assert_string_equal(resp.body, "");
    assert_string_equal(resp.content_type, "text/plain");
    hub_resp_release(&resp);
    /* bound, not started: the kubelet's answer */
    assert_int_equal(call(f, "PATCH", PODS "/p", NULL, "application/merge-patch+json",
                          "{\"spec\":{\"nodeName\":\"n1\"}}", NULL),
                     200);
    assert_int_equal(call(f, "GET", PODS "/p/log", "container=b", NULL, NULL, &o), 400);
    assert_string_equal(S(o, "message", NULL),
                        "container \"b\" in pod \"p\" is waiting to start: ContainerCreating");
    json_decref(o);
    assert_int_equal(call(f, "POST", PODS "/p/log", NULL, NULL, "{}", NULL), 405);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_crud_and_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_selectors_paging, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_items_as_apiserver, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_timeout_and_bookmark, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalizers_and_gc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crd_and_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discovery, setup, teardown),
        cmocka_unit_test_setup_teardown(test_field_validation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admit_hook, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_log, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
