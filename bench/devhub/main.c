/*
 * bench-devhub: figures for the embedded API server, in-process (no HTTP, no
 * TLS) against an in-memory devhub: create/s, update/s, list time for 10k
 * objects (JSON and Table), watch fan-out events/s. Printed, not asserted.
 * Usage: bench-devhub [N objects, default 10000] [W watchers, default 100]
 */
#include <ev.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/hub.h"
#include "pkg/util/clock.h"
#include "pkg/json/jsonx.h"

static int call(struct hub *h, const char *method, const char *path, const char *ctype,
                const char *body, const struct hub_kv *q, size_t nq, size_t *len)
{
    struct hub_req req = {.method = method,
                          .path = path,
                          .query = q,
                          .nquery = nq,
                          .content_type = ctype,
                          .accept = NULL,
                          .body = body,
                          .body_len = body ? strlen(body) : 0};
    struct hub_resp resp;
    hub_handle(h, &req, &resp);
    if (len)
        *len = resp.body ? strlen(resp.body) : 0;
    int code = resp.code;
    hub_resp_release(&resp);
    return code;
}

int main(int argc, char **argv)
{
    jx_use_xalloc();
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
    long nw = argc > 2 ? strtol(argv[2], NULL, 10) : 100;
    if (n <= 0 || nw <= 0) {
        fprintf(stderr, "usage: bench-devhub [objects] [watchers]\n");
        return 2;
    }
    struct ev_loop *loop = ev_loop_new(0);
    struct hub *h = NULL;
    struct hub_opts o = {.loop = loop, .compact_keep = 1000000};
    struct err e = {0};
    if (hub_new(&h, &o, &e)) {
        fprintf(stderr, "bench-devhub: %s\n", e.msg);
        return 1;
    }
    const char *coll = "/api/v1/namespaces/default/configmaps";
    char body[512], path[256];

    double t0 = clock_mono_s();
    for (long i = 0; i < n; i++) {
        snprintf(body, sizeof(body),
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-%ld\","
                 "\"labels\":{\"app\":\"bench\",\"shard\":\"%ld\"}},\"data\":{\"k\":\"v%ld\"}}",
                 i, i % 10, i);
        if (call(h, "POST", coll, "application/json", body, NULL, 0, NULL) != 201) {
            fprintf(stderr, "create %ld failed\n", i);
            return 1;
        }
    }
    double dt = clock_mono_s() - t0;
    printf("create:  %ld objects in %.3f s = %.0f creates/s\n", n, dt, (double)n / dt);

    t0 = clock_mono_s();
    for (long i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/cm-%ld", coll, i);
        if (call(h, "PATCH", path, "application/merge-patch+json", "{\"data\":{\"k\":\"u\"}}", NULL,
                 0, NULL) != 200) {
            fprintf(stderr, "update %ld failed\n", i);
            return 1;
        }
    }
    dt = clock_mono_s() - t0;
    printf("update:  %ld merge patches in %.3f s = %.0f updates/s\n", n, dt, (double)n / dt);

    size_t len = 0;
    t0 = clock_mono_s();
    call(h, "GET", coll, NULL, NULL, NULL, 0, &len);
    dt = clock_mono_s() - t0;
    printf("list:    %ld objects in %.1f ms (%.1f MB JSON)\n", n, dt * 1000, (double)len / 1e6);
    struct hub_kv sel[] = {{"labelSelector", "shard=3"}};
    t0 = clock_mono_s();
    call(h, "GET", coll, NULL, NULL, sel, 1, &len);
    dt = clock_mono_s() - t0;
    printf("list -l: shard=3 of %ld objects in %.1f ms\n", n, dt * 1000);
    struct hub_kv page[] = {{"limit", "500"}};
    t0 = clock_mono_s();
    call(h, "GET", coll, NULL, NULL, page, 1, &len);
    dt = clock_mono_s() - t0;
    printf("list:    first page of 500 in %.1f ms\n", dt * 1000);

    /* Watch fan-out: nw watchers, each update delivered to all of them. */
    struct hub_watch **ws = calloc((size_t)nw, sizeof(*ws));
    struct hub_kv wq[] = {{"watch", "1"}, {"resourceVersion", "999999999"}};
    char rv[32];
    snprintf(rv, sizeof(rv), "%lld", (long long)hub_rv(h));
    wq[1].value = rv;
    for (long i = 0; i < nw; i++) {
        struct hub_req req = {.method = "GET", .path = coll, .query = wq, .nquery = 2};
        struct hub_resp resp;
        hub_handle(h, &req, &resp);
        ws[i] = resp.watch;
        hub_resp_release(&resp);
        if (!ws[i]) {
            fprintf(stderr, "watch %ld failed\n", i);
            return 1;
        }
    }
    long updates = n < 2000 ? n : 2000;
    char *sink = malloc(1 << 20);
    long bytes = 0, events = 0;
    t0 = clock_mono_s();
    for (long i = 0; i < updates; i++) {
        snprintf(path, sizeof(path), "%s/cm-%ld", coll, i);
        snprintf(body, sizeof(body), "{\"data\":{\"k\":\"w%ld\"}}", i);
        call(h, "PATCH", path, "application/merge-patch+json", body, NULL, 0, NULL);
        for (long k = 0; k < nw; k++) {
            ssize_t got;
            while ((got = hub_watch_read(ws[k], sink, 1 << 20)) > 0) {
                bytes += got;
                for (ssize_t j = 0; j < got; j++)
                    events += sink[j] == '\n';
            }
        }
    }
    dt = clock_mono_s() - t0;
    printf("watch:   %ld updates x %ld watchers = %ld events in %.3f s = %.0f events/s (%.1f MB)\n",
           updates, nw, events, dt, (double)events / dt, (double)bytes / 1e6);
    for (long i = 0; i < nw; i++)
        hub_watch_release(ws[i]);

    /* Garbage collection next to the 10k objects: 500 owners, one dependent each. */
    long ng = 500;
    for (long i = 0; i < ng; i++) {
        snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"own-%ld\",\"uid\":\"x\"}}", i);
        call(h, "POST", coll, "application/json", body, NULL, 0, NULL);
    }
    for (long i = 0; i < ng; i++) {
        /* The owner's uid is server-assigned: read it back. */
        snprintf(path, sizeof(path), "%s/own-%ld", coll, i);
        struct hub_req req = {.method = "GET", .path = path};
        struct hub_resp resp;
        hub_handle(h, &req, &resp);
        json_t *own = json_loads(resp.body, 0, NULL);
        hub_resp_release(&resp);
        snprintf(body, sizeof(body),
                 "{\"metadata\":{\"name\":\"dep-%ld\",\"ownerReferences\":[{\"apiVersion\":"
                 "\"v1\",\"kind\":\"ConfigMap\",\"name\":\"own-%ld\",\"uid\":\"%s\"}]}}",
                 i, i, json_string_value(json_object_get(json_object_get(own, "metadata"), "uid")));
        json_decref(own);
        call(h, "POST", coll, "application/json", body, NULL, 0, NULL);
    }
    t0 = clock_mono_s();
    for (long i = 0; i < ng; i++) {
        snprintf(path, sizeof(path), "%s/own-%ld", coll, i);
        call(h, "DELETE", path, NULL, NULL, NULL, 0, NULL);
    }
    ev_run(loop, EVRUN_ONCE); /* the GC timer (50 ms) fires and collects everything */
    snprintf(path, sizeof(path), "%s/dep-%ld", coll, ng - 1);
    int left = call(h, "GET", path, NULL, NULL, NULL, 0, NULL);
    dt = clock_mono_s() - t0;
    printf("gc:      %ld owner deletes + background GC of %ld dependents in %.3f s (%s)\n", ng, ng,
           dt, left == 404 ? "all collected" : "NOT collected");
    free(ws);
    free(sink);
    hub_free(h);
    ev_loop_destroy(loop);
    return 0;
}
