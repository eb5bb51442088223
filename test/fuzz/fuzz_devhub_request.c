/*
 * Fuzz target: one whole devhub API request through hub_handle (routing,
 * query parsing, selectors, body parsing/validation, create/update/patch/
 * delete semantics, Status bodies), against a fresh in-memory hub.
 *
 * Input: byte 0 picks the method and content type; then the request target
 * (path[?query], query values already decoded) up to the first newline; the
 * rest is the body. Nothing may crash, leak or trip a sanitizer, and every
 * answer must be a JSON body (or a watch).
 */
#include <ev.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/hub.h"

static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"};
static const char *const ctypes[] = {"application/json",
                                     "application/merge-patch+json",
                                     "application/json-patch+json",
                                     "application/strategic-merge-patch+json",
                                     "application/apply-patch+yaml",
                                     "text/plain"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 65536)
        return 0;
    const char *method = methods[data[0] % 6];
    const char *ctype = ctypes[(data[0] / 6) % 6];
    const char *p = (const char *)data + 1;
    size_t left = size - 1;
    const char *nl = memchr(p, '\n', left);
    size_t tlen = nl ? (size_t)(nl - p) : left;
    char *target = malloc(tlen + 1);
    memcpy(target, p, tlen);
    target[tlen] = '\0';
    if (strlen(target) != tlen || target[0] != '/') {
        free(target);
        return 0;
    }
    const char *body = nl ? nl + 1 : "";
    size_t blen = nl ? left - tlen - 1 : 0;

    struct hub_kv kv[16];
    size_t nkv = 0;
    char *q = strchr(target, '?');
    if (q) {
        *q++ = '\0';
        while (q && *q && nkv < 16) {
            char *amp = strchr(q, '&');
            if (amp)
                *amp++ = '\0';
            char *eq = strchr(q, '=');
            if (eq)
                *eq++ = '\0';
            kv[nkv].key = q;
            kv[nkv].value = eq ? eq : "";
            nkv++;
            q = amp;
        }
    }

    struct ev_loop *loop = ev_loop_new(0);
    struct hub *h = NULL;
    struct hub_opts o = {.loop = loop};
    if (hub_new(&h, &o, NULL) == 0) {
        /* Something to act on: a ConfigMap with a finalizer and an owner. */
        struct hub_req seed = {.method = "POST",
                               .path = "/api/v1/namespaces/default/configmaps",
                               .content_type = "application/json",
                               .body = "{\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"y\"},"
                                       "\"finalizers\":[\"f/g\"]},\"data\":{\"k\":\"v\"}}"};
        seed.body_len = strlen(seed.body);
        struct hub_resp resp;
        hub_handle(h, &seed, &resp);
        hub_resp_release(&resp);

        struct hub_req req = {.method = method,
                              .path = target,
                              .query = kv,
                              .nquery = nkv,
                              .content_type = ctype,
                              .accept = (data[0] & 0x80) ? "application/json;as=Table;v=v1;"
                                                           "g=meta.k8s.io"
                                                         : NULL,
                              .body = body,
                              .body_len = blen};
        hub_handle(h, &req, &resp);
        if (resp.watch) {
            char buf[4096];
            while (hub_watch_read(resp.watch, buf, sizeof(buf)) > 0)
                ;
            hub_watch_release(resp.watch);
        } else if (resp.code != 200 || strncmp(target, "/healthz", 8)) {
            json_t *j = resp.body ? json_loads(resp.body, 0, NULL) : NULL;
            if (!j && resp.code != 200)
                abort(); /* every error must be a Status JSON body */
            json_decref(j);
        }
        hub_resp_release(&resp);
        hub_free(h);
    }
    ev_loop_destroy(loop);
    free(target);
    return 0;
}
