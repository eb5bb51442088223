#include "devhub/hub.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "devhub/kstatus.h"
#include "devhub/kproto.h"
#include "devhub/patch.h"
#include "devhub/registry.h"
#include "devhub/route.h"
#include "devhub/hstore.h"
#include "devhub/listtext.h"
#include "devhub/table.h"
#include "devhub/validate.h"
#include "devhub/defaults.h"
#include "devhub/fields.h"
#include "pkg/json/jscan.h"
#include "pkg/json/jsonx.h"
#include "pkg/labels/sel.h"
#include "pkg/util/b64.h"
#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

#define WATCH_BUF_MAX (64u << 20)

struct hub_watch {
    struct hub *h;
    struct hub_watch *next, *prev;
    char *prefix;      /* storage key prefix (resource + namespace) */
    char *api_version; /* written into every object */
    char *kind;
    struct sel *labels;            /* NULL = everything */
    struct sel_field *fields;      /* NULL = everything */
    char *name;                    /* watch of one object: its name */
    struct table_printer *printer; /* Table output (kubectl get -w), or NULL */
    int include;                   /* enum table_include */
    bool bookmarks;
    bool ended;
    struct buf out;
    ev_timer timeout;
    ev_tstamp started;
    double timeout_s; /* requested timeoutSeconds */
    void (*notify)(void *);
    void *userdata;
};

struct hub {
    struct ev_loop *loop;
    const struct logger *lg;
    struct hstore *st;
    struct registry *reg;
    struct hub_watch *watches;
    size_t nwatches;
    ev_timer bookmark_timer;
    ev_timer compact_timer;
    ev_timer gc_timer;
    double gc_delay;
    double watch_cut;   /* fault injection: seconds, 0 = never */
    hub_admit_fn admit; /* mutating admission on create (an emulator's webhook), may be NULL */
    void *admit_ud;
};

void hub_set_admit(struct hub *h, hub_admit_fn fn, void *userdata)
{
    h->admit = fn;
    h->admit_ud = userdata;
}

/* ---- small helpers ------------------------------------------------------ */

static json_t *meta(json_t *obj)
{
    json_t *md = json_object_get(obj, "metadata");
    if (!json_is_object(md)) {
        md = json_object();
        json_object_set_new(obj, "metadata", md);
    }
    return md;
}

static const char *mstr(json_t *obj, const char *k)
{
    return jx_field_str(json_object_get(obj, "metadata"), k);
}

static const char *query(const struct hub_req *req, const char *key)
{
    for (size_t i = 0; i < req->nquery; i++)
        if (req->query[i].key && !strcmp(req->query[i].key, key))
            return req->query[i].value ? req->query[i].value : "";
    return NULL;
}

static bool qbool(const struct hub_req *req, const char *key)
{
    const char *v = query(req, key);
    return v && (!strcmp(v, "true") || !strcmp(v, "1"));
}

static char *make_key(const struct reg_resource *r, const char *ns, const char *name)
{
    return xasprintf("%s.%s/%s/%s", r->resource, r->group, r->namespaced ? ns : "", name);
}

static void random_uid(char out[37])
{
    unsigned char b[16];
    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
        uint64_t t = clock_mono_ns();
        for (int i = 0; i < 16; i++)
            b[i] = (unsigned char)(t >> ((i % 8) * 8)) ^ (unsigned char)(i * 37);
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

static void random_suffix(char out[6])
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned char b[5];
    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
        memset(b, (int)(clock_mono_ns() & 0xff), sizeof(b));
    for (int i = 0; i < 5; i++)
        out[i] = alphabet[b[i] % (sizeof(alphabet) - 1)];
    out[5] = '\0';
}

static void set_json_resp(struct hub_resp *resp, int code, json_t *body)
{
    resp->code = code;
    resp->body = json_dumps(body, JSON_COMPACT);
    if (!resp->body)
        resp->body = xstrdup("{}");
    resp->content_type = "application/json";
    json_decref(body);
}

static void set_status(struct hub_resp *resp, json_t *status)
{
    int code = (int)json_integer_value(json_object_get(status, "code"));
    set_json_resp(resp, code ? code : 500, status);
}

static void fail(struct hub_resp *resp, int code, const char *reason, json_t *details,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void fail(struct hub_resp *resp, int code, const char *reason, json_t *details,
                 const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    set_status(resp, kstatus_new(code, reason, msg, details));
}

void hub_resp_release(struct hub_resp *resp)
{
    free(resp->body);
    resp->body = NULL;
    free(resp->warnings);
    resp->warnings = NULL;
}

int64_t hub_rv(const struct hub *h)
{
    return hstore_rv(h->st);
}

static char *rv_string(int64_t rv)
{
    return xasprintf("%" PRId64, rv);
}

/* The object as served for resource version r (CRD versions share storage). */
static void set_type(json_t *obj, const struct reg_resource *r)
{
    char *av = reg_api_version(r);
    json_object_set_new(obj, "apiVersion", json_string(av));
    json_object_set_new(obj, "kind", json_string(r->kind));
    free(av);
}

/* ---- watches ------------------------------------------------------------- */

static void watch_push_line(struct hub_watch *w, const char *type, json_t *obj)
{
    if (w->ended)
        return;
    json_t *ev = json_pack("{s:s, s:O}", "type", type, "object", obj);
    char *line = json_dumps(ev, JSON_COMPACT);
    json_decref(ev);
    if (!line)
        return;
    if (buf_puts(&w->out, line) || buf_puts(&w->out, "\n")) {
        /* A client that does not read: end its watch rather than grow forever. */
        w->ended = true;
    }
    free(line);
    if (w->notify)
        w->notify(w->userdata);
}

static void watch_push_bookmark(struct hub_watch *w, int64_t rv, bool initial_end)
{
    char *rvs = rv_string(rv);
    json_t *o = json_pack("{s:s, s:s, s:{s:s}}", "kind", w->kind, "apiVersion", w->api_version,
                          "metadata", "resourceVersion", rvs);
    if (initial_end)
        json_object_set_new(json_object_get(o, "metadata"), "annotations",
                            json_pack("{s:s}", "k8s.io/initial-events-end", "true"));
    watch_push_line(w, "BOOKMARK", o);
    json_decref(o);
    free(rvs);
}

static void watch_end(struct hub_watch *w)
{
    if (w->ended)
        return;
    w->ended = true;
    ev_timer_stop(w->h->loop, &w->timeout);
    if (w->notify)
        w->notify(w->userdata);
}

static bool watch_matches(struct hub_watch *w, json_t *obj)
{
    if (!obj)
        return false;
    if (w->labels && !sel_matches(w->labels, json_object_get(meta(obj), "labels")))
        return false;
    if (w->fields && !sel_field_matches(w->fields, obj))
        return false;
    if (w->name && strcmp(w->name, mstr(obj, "name")))
        return false;
    return true;
}

static void watch_send_obj(struct hub_watch *w, const char *type, json_t *obj)
{
    json_t *copy = json_copy(obj);
    json_object_set_new(copy, "apiVersion", json_string(w->api_version));
    json_object_set_new(copy, "kind", json_string(w->kind));
    if (w->printer) {
        /* Watch in Table form (kubectl get -w): each event carries a one-row Table. */
        json_t *items = json_pack("[O]", copy);
        struct table_opts to = {.include = (enum table_include)w->include, .now = time(NULL)};
        json_t *tbl = table_build(w->printer, items, &to);
        json_decref(items);
        json_decref(copy);
        copy = tbl;
    }
    watch_push_line(w, type, copy);
    json_decref(copy);
}

/* Serialised watch lines of one change, shared by the watchers that want the
 * same event type and apiVersion in plain JSON (the common case): one dump per
 * change instead of one per watcher. */
struct line_cache {
    const char *type;
    const char *api_version;
    char *line;
};

static void watch_send_cached(struct hub_watch *w, const char *type, json_t *obj,
                              struct line_cache *cache, size_t *ncache)
{
    if (w->printer || w->ended) {
        watch_send_obj(w, type, obj);
        return;
    }
    char *line = NULL;
    bool owned = false;
    for (size_t i = 0; i < *ncache; i++)
        if (cache[i].type == type && !strcmp(cache[i].api_version, w->api_version))
            line = cache[i].line;
    if (!line) {
        json_t *copy = json_copy(obj);
        json_object_set_new(copy, "apiVersion", json_string(w->api_version));
        json_object_set_new(copy, "kind", json_string(w->kind));
        json_t *ev = json_pack("{s:s, s:o}", "type", type, "object", copy);
        char *txt = json_dumps(ev, JSON_COMPACT);
        json_decref(ev);
        if (!txt)
            return;
        line = xasprintf("%s\n", txt);
        free(txt);
        if (*ncache < 8) {
            cache[*ncache] = (struct line_cache){type, w->api_version, line};
            (*ncache)++;
        } else {
            owned = true;
        }
    }
    if (buf_puts(&w->out, line))
        w->ended = true;
    if (owned)
        free(line);
    if (w->notify)
        w->notify(w->userdata);
}

/* Fan a change out to every watcher of its resource. old is the previous state
 * (NULL for ADDED). */
static void emit(struct hub *h, const char *key, enum hstore_event ev, json_t *old, json_t *obj)
{
    struct line_cache cache[8];
    size_t ncache = 0;
    static const char *const t_added = "ADDED", *const t_modified = "MODIFIED",
                             *const t_deleted = "DELETED";
    for (struct hub_watch *w = h->watches; w; w = w->next) {
        if (w->ended || strncmp(key, w->prefix, strlen(w->prefix)))
            continue;
        bool mnew = ev != HSTORE_DELETED && watch_matches(w, obj);
        bool mold =
            ev == HSTORE_DELETED ? watch_matches(w, old ? old : obj) : watch_matches(w, old);
        const char *type = NULL;
        if (ev == HSTORE_DELETED)
            type = mold ? t_deleted : NULL;
        else if (mnew && mold)
            type = t_modified;
        else if (mnew)
            type = t_added;
        else if (mold)
            type = t_deleted;
        if (type)
            watch_send_cached(w, type, obj, cache, &ncache);
    }
    for (size_t i = 0; i < ncache; i++)
        free(cache[i].line);
}

static void watch_timeout_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    struct hub_watch *w = (struct hub_watch *)((char *)t - offsetof(struct hub_watch, timeout));
    if (w->bookmarks)
        watch_push_bookmark(w, hstore_rv(w->h->st), false);
    watch_end(w);
}

static void bookmark_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    struct hub *h = (struct hub *)((char *)t - offsetof(struct hub, bookmark_timer));
    for (struct hub_watch *w = h->watches; w; w = w->next)
        if (w->bookmarks && !w->ended)
            watch_push_bookmark(w, hstore_rv(h->st), false);
}

void hub_watch_set_notify(struct hub_watch *w, void (*notify)(void *), void *userdata)
{
    w->notify = notify;
    w->userdata = userdata;
}

ssize_t hub_watch_read(struct hub_watch *w, char *dst, size_t max)
{
    if (w->out.len == 0)
        return w->ended ? -1 : 0;
    size_t n = w->out.len < max ? w->out.len : max;
    memcpy(dst, w->out.data, n);
    buf_consume(&w->out, n);
    return (ssize_t)n;
}

static void watch_free(struct hub_watch *w)
{
    ev_timer_stop(w->h->loop, &w->timeout);
    buf_free(&w->out);
    free(w->prefix);
    free(w->api_version);
    free(w->kind);
    sel_free(w->labels);
    sel_field_free(w->fields);
    free(w->name);
    table_printer_free(w->printer);
    free(w);
}

void hub_watch_release(struct hub_watch *w)
{
    if (!w)
        return;
    struct hub *h = w->h;
    if (w->prev)
        w->prev->next = w->next;
    else
        h->watches = w->next;
    if (w->next)
        w->next->prev = w->prev;
    h->nwatches--;
    watch_free(w);
}

size_t hub_watch_count(const struct hub *h)
{
    return h->nwatches;
}

void hub_close_watches(struct hub *h)
{
    for (struct hub_watch *w = h->watches; w; w = w->next)
        watch_end(w);
}

/* ---- lifecycle ------------------------------------------------------------ */

static void compact_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    struct hub *h = (struct hub *)((char *)t - offsetof(struct hub, compact_timer));
    struct err e = {0};
    long n = hstore_compact(h->st, &e);
    if (n < 0)
        log_warn(h->lg, "compaction failed", "error", e.msg);
    else if (n > 0)
        log_v(h->lg, 2, "compacted change log", "removed", LOG_INT(n), "compacted_rv",
              LOG_INT(hstore_compacted_rv(h->st)));
}

static void gc_cb(struct ev_loop *loop, ev_timer *t, int revents);

static int reload_crd(const char *key, json_t *obj, void *userdata)
{
    struct hub *h = userdata;
    struct err e = {0};
    (void)key;
    if (reg_add_crd(h->reg, obj, &e))
        log_warn(h->lg, "stored CRD not served", "crd", mstr(obj, "name"), "error", e.msg);
    return 0;
}

static void ensure_namespace(struct hub *h, const char *name)
{
    json_t *ns = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                           "metadata", "name", name);
    struct err e = {0};
    if (hub_apply_object(h, ns, &e))
        log_warn(h->lg, "cannot create namespace", "namespace", name, "error", e.msg);
    json_decref(ns);
}

int hub_new(struct hub **out, const struct hub_opts *o, struct err *e)
{
    struct hub *h = xcalloc(1, sizeof(*h));
    h->loop = o->loop;
    h->lg = o->lg;
    h->gc_delay = o->gc_delay > 0 ? o->gc_delay : 0.05;
    int ret = hstore_open(&h->st, o->data_path, o->compact_keep, e);
    if (ret) {
        free(h);
        *out = NULL;
        return ret;
    }
    h->reg = reg_new();
    /* CRDs stored by an earlier run are served again. */
    const struct reg_resource *crdres =
        reg_find(h->reg, "apiextensions.k8s.io", "v1", "customresourcedefinitions");
    char *prefix = reg_storage_prefix(crdres);
    hstore_list(h->st, prefix, NULL, reload_crd, h, NULL);
    free(prefix);
    double bi = o->bookmark_interval > 0 ? o->bookmark_interval : 15;
    ev_timer_init(&h->bookmark_timer, bookmark_cb, bi, bi);
    ev_timer_start(h->loop, &h->bookmark_timer);
    ev_unref(h->loop);
    ev_timer_init(&h->compact_timer, compact_cb, 5, 5);
    ev_timer_start(h->loop, &h->compact_timer);
    ev_unref(h->loop);
    ev_timer_init(&h->gc_timer, gc_cb, h->gc_delay, 0);
    static const char *const initial_ns[] = {"default", "kube-system", "kube-public",
                                             "kube-node-lease"};
    for (size_t i = 0; i < sizeof(initial_ns) / sizeof(initial_ns[0]); i++)
        ensure_namespace(h, initial_ns[i]);
    *out = h;
    return 0;
}

void hub_free(struct hub *h)
{
    if (!h)
        return;
    hub_close_watches(h);
    while (h->watches)
        hub_watch_release(h->watches);
    ev_ref(h->loop);
    ev_timer_stop(h->loop, &h->bookmark_timer);
    ev_ref(h->loop);
    ev_timer_stop(h->loop, &h->compact_timer);
    ev_timer_stop(h->loop, &h->gc_timer);
    reg_free(h->reg);
    hstore_close(h->st);
    free(h);
}

/* ---- object semantics ------------------------------------------------------- */

static bool uses_generation(const struct reg_resource *r)
{
    return r->crd || !strcmp(r->resource, "jobs") || !strcmp(r->resource, "deployments") ||
           !strcmp(r->resource, "customresourcedefinitions");
}

/* Everything but metadata and status: a change bumps metadata.generation. */
static bool spec_equal(json_t *a, json_t *b)
{
    json_t *ca = json_copy(a), *cb = json_copy(b);
    json_object_del(ca, "metadata");
    json_object_del(ca, "status");
    json_object_del(cb, "metadata");
    json_object_del(cb, "status");
    bool eq = json_equal(ca, cb);
    json_decref(ca);
    json_decref(cb);
    return eq;
}

static void schedule_gc(struct hub *h)
{
    if (!ev_is_active(&h->gc_timer)) {
        ev_timer_set(&h->gc_timer, h->gc_delay, 0);
        ev_timer_start(h->loop, &h->gc_timer);
    }
}

static void crd_set_status(json_t *crd)
{
    char now[40];
    clock_now_rfc3339(now, sizeof(now), 0);
    json_t *spec = json_object_get(crd, "spec");
    json_t *stored = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(spec, "versions"), i, v)
    {
        if (json_is_true(json_object_get(v, "storage")))
            json_array_append_new(stored, json_string(jx_field_str(v, "name")));
    }
    json_t *status = json_pack(
        "{s:[{s:s, s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:s}], s:O, s:o}", "conditions",
        "type", "NamesAccepted", "status", "True", "lastTransitionTime", now, "reason",
        "NoConflicts", "message", "no conflicts found", "type", "Established", "status", "True",
        "lastTransitionTime", now, "reason", "InitialNamesAccepted", "message",
        "the initial names have been accepted", "acceptedNames",
        json_object_get(spec, "names") ? json_object_get(spec, "names") : json_null(),
        "storedVersions", stored);
    json_object_set_new(crd, "status", status);
}

static bool is_crd_res(const struct reg_resource *r)
{
    return !strcmp(r->resource, "customresourcedefinitions") &&
           !strcmp(r->group, "apiextensions.k8s.io");
}

/* Store a new/updated/deleted object and tell the watchers. old may be NULL. */
static int commit(struct hub *h, const char *key, enum hstore_event ev, json_t *old, json_t *obj,
                  struct err *e)
{
    int ret = hstore_write(h->st, ev, key, obj, NULL, e);
    if (ret)
        return ret;
    emit(h, key, ev, old, obj);
    return 0;
}

static void internal_error(struct hub_resp *resp, struct err *e)
{
    fail(resp, 500, "InternalError", NULL, "Internal error occurred: %s", e->msg);
}

/* Fill server-owned fields of a new object. */
static void init_new(struct hub *h, const struct reg_resource *r, json_t *obj, const char *ns)
{
    (void)h;
    json_t *md = meta(obj);
    char uid[37], now[40];
    random_uid(uid);
    clock_now_rfc3339(now, sizeof(now), 0);
    json_object_set_new(md, "uid", json_string(uid));
    json_object_set_new(md, "creationTimestamp", json_string(now));
    json_object_del(md, "deletionTimestamp");
    json_object_del(md, "deletionGracePeriodSeconds");
    json_object_del(md, "resourceVersion");
    if (r->namespaced)
        json_object_set_new(md, "namespace", json_string(ns));
    else
        json_object_del(md, "namespace");
    if (uses_generation(r))
        json_object_set_new(md, "generation", json_integer(1));
    if (r->has_status && !is_crd_res(r) && strcmp(r->resource, "nodes"))
        json_object_del(obj, "status");
    if (!strcmp(r->resource, "namespaces") && !r->crd)
        json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Active"));
    if (is_crd_res(r))
        crd_set_status(obj);
}

/* The Warning header value the apiserver writes for a message (RFC 7234, agent "-"). */
static void add_warning(struct hub_resp *resp, const char *text)
{
    json_t *q = json_string(text);
    char *quoted = json_dumps(q, JSON_ENCODE_ANY);
    json_decref(q);
    char *line = xasprintf("%s%s299 - %s", resp->warnings ? resp->warnings : "",
                           resp->warnings ? "\n" : "", quoted ? quoted : "\"\"");
    free(quoted);
    free(resp->warnings);
    resp->warnings = line;
}

/*
 * Field validation (devhub/fields.h): unknown fields are dropped from obj;
 * with Strict they fail the request (400 as a decode error on create and
 * update, 422 on the patched object for PATCH), with Warn each becomes a
 * Warning header. false + resp on error.
 */
static bool check_fields(const struct reg_resource *r, json_t *obj, const struct hub_req *req,
                         bool create, bool patch, struct hub_resp *resp)
{
    enum fields_mode mode;
    const char *q = query(req, "fieldValidation");
    if (fields_mode_parse(q, &mode)) {
        struct valid_result *vr = xcalloc(1, sizeof(*vr));
        char *m = xasprintf("Unsupported value: \"%.100s\": supported values: \"Ignore\", "
                            "\"Strict\", \"Warn\"",
                            q);
        valid_fail_field(vr, "meta.k8s.io",
                         patch ? "PatchOptions" : (create ? "CreateOptions" : "UpdateOptions"), "",
                         "FieldValueNotSupported", "fieldValidation", m);
        set_status(resp, valid_status_body(vr));
        free(m);
        free(vr);
        return false;
    }
    char *before = patch && mode == FIELDS_STRICT ? json_dumps(obj, JSON_COMPACT) : NULL;
    json_t *paths = json_array();
    size_t n = r->crd ? fields_prune_schema(r->schema, obj, paths)
                      : fields_prune_builtin(r->group, r->kind, obj, paths);
    bool ok = true;
    if (n && mode == FIELDS_STRICT) {
        char *why = fields_strict_message(paths);
        if (patch) {
            /* NewInvalid(GroupKind{}, "", patch: Invalid value: <patched object>: ...);
             * built here, not in a valid_result: the object may be long. */
            json_t *pj = json_string(before ? before : "");
            char *pq = json_dumps(pj, JSON_ENCODE_ANY);
            json_decref(pj);
            char *cm = xasprintf("Invalid value: %s: %s", pq ? pq : "\"\"", why);
            char *m = xasprintf(" \"\" is invalid: patch: %s", cm);
            json_t *det = json_pack("{s:[{s:s, s:s, s:s}]}", "causes", "reason",
                                    "FieldValueInvalid", "message", cm, "field", "patch");
            set_status(resp, kstatus_new(422, "Invalid", m, det));
            free(m);
            free(cm);
            free(pq);
        } else {
            char *m = xasprintf("%s in version \"%s\" cannot be handled as a %s: %s", r->kind,
                                r->version, r->kind, why);
            set_status(resp, kstatus_new(400, "BadRequest", m, NULL));
            free(m);
        }
        free(why);
        ok = false;
    } else if (n && mode == FIELDS_WARN) {
        size_t i;
        json_t *p;
        json_array_foreach(paths, i, p)
        {
            char *w = xasprintf("unknown field \"%s\"", json_string_value(p));
            add_warning(resp, w);
            free(w);
        }
    }
    free(before);
    json_decref(paths);
    return ok;
}

/* Validation of a body against the URL (devhub/validate.h) and field
 * validation, in the apiserver's order: decode errors (400), unknown fields,
 * then field validation (422). Fills resp and returns false on error.
 * url_name is NULL on create. */
static bool check_body(const struct reg_resource *r, json_t *obj, const char *url_ns,
                       const char *url_name, bool create, bool patch, const struct hub_req *req,
                       struct hub_resp *resp)
{
    struct valid_target t = {.group = r->group,
                             .version = r->version,
                             .kind = r->kind,
                             .namespace = r->namespaced ? url_ns : NULL,
                             .name = url_name,
                             .namespaced = r->namespaced,
                             .builtin = r->crd == NULL};
    struct valid_result *vr = xcalloc(1, sizeof(*vr));
    bool ok = valid_check(&t, create ? VALID_CREATE : VALID_UPDATE, obj, vr) == 0;
    if (!ok && vr->code != 422) {
        set_status(resp, valid_status_body(vr));
    } else if (!check_fields(r, obj, req, create, patch, resp)) {
        ok = false;
    } else if (!ok) {
        /* Keep the warnings of the field check with the 422. */
        char *w = resp->warnings;
        resp->warnings = NULL;
        set_status(resp, valid_status_body(vr));
        resp->warnings = w;
    }
    free(vr);
    return ok;
}

static void invalid(struct hub_resp *resp, const struct reg_resource *r, const char *name,
                    const char *field, const char *type, const char *value, const char *detail)
{
    json_t *det = kstatus_details(name, r->group, r->kind);
    json_t *cause = json_pack("{s:s, s:s, s:s}", "reason", type, "message", "", "field", field);
    char *cmsg = value ? xasprintf("%s: \"%s\": %s", type, value, detail)
                       : xasprintf("%s: %s", type, detail);
    json_object_set_new(cause, "message", json_string(cmsg));
    json_object_set_new(det, "causes", json_pack("[o]", cause));
    char *msg = xasprintf("%s \"%s\" is invalid: %s: %s", r->kind, name, field, cmsg);
    set_status(resp, kstatus_new(422, "Invalid", msg, det));
    free(msg);
    free(cmsg);
}

static bool namespace_exists(struct hub *h, const char *ns)
{
    const struct reg_resource *nsr = reg_find(h->reg, "", "v1", "namespaces");
    char *key = make_key(nsr, "", ns);
    json_t *o = NULL;
    int rc = hstore_get(h->st, key, &o, NULL);
    json_decref(o);
    free(key);
    return rc == 0;
}

/* create: obj is borrowed and modified (server fields set). */
static void do_create(struct hub *h, const struct reg_resource *r, const char *ns, json_t *obj,
                      bool dry_run, struct hub_resp *resp)
{
    json_t *md = meta(obj);
    char *key = NULL;
    struct err e = {0};
    const char *name = mstr(obj, "name");
    char genbuf[300];
    if (!*name) {
        const char *gen = mstr(obj, "generateName");
        if (!*gen) {
            invalid(resp, r, "", "metadata.name", "Required value", NULL,
                    "name or generateName is required");
            return;
        }
        char sfx[6];
        random_suffix(sfx);
        snprintf(genbuf, sizeof(genbuf), "%.*s%s", 58, gen, sfx);
        json_object_set_new(md, "name", json_string(genbuf));
        name = mstr(obj, "name");
    }
    if (r->namespaced && !namespace_exists(h, ns)) {
        set_status(resp, kstatus_not_found("namespaces", "", "Namespace", ns));
        return;
    }
    if (is_crd_res(r)) {
        const char *plural =
            jx_field_str(json_object_get(json_object_get(obj, "spec"), "names"), "plural");
        const char *group = jx_field_str(json_object_get(obj, "spec"), "group");
        char *want = xasprintf("%s.%s", plural, group);
        if (strcmp(want, name)) {
            invalid(resp, r, name, "metadata.name", "Invalid value", name,
                    "must be spec.names.plural+\".\"+spec.group");
            free(want);
            return;
        }
        free(want);
    }
    init_new(h, r, obj, ns);
    dflt_meta(obj);
    if (!r->crd) {
        struct valid_result *vr = xcalloc(1, sizeof(*vr));
        int drc = dflt_create(r->group, r->kind, obj, vr);
        if (drc)
            set_status(resp, valid_status_body(vr));
        free(vr);
        if (drc)
            return;
    }
    if (h->admit)
        h->admit(h->admit_ud, r->group, r->kind, obj);
    key = make_key(r, ns, name);
    json_t *old = NULL;
    if (hstore_get(h->st, key, &old, NULL) == 0) {
        json_decref(old);
        set_status(resp, kstatus_already_exists(r->resource, r->group, r->kind, name));
        goto out;
    }
    if (is_crd_res(r) && !dry_run) {
        if (reg_add_crd(h->reg, obj, &e)) {
            invalid(resp, r, name, "spec", "Invalid value", NULL, e.msg);
            goto out;
        }
    }
    set_type(obj, r);
    if (dry_run) {
        set_json_resp(resp, 201, json_incref(obj));
        goto out;
    }
    if (commit(h, key, HSTORE_ADDED, NULL, obj, &e)) {
        internal_error(resp, &e);
        goto out;
    }
    set_json_resp(resp, 201, json_incref(obj));
out:
    free(key);
}

enum write_mode { WRITE_MAIN, WRITE_STATUS };

static int really_delete(struct hub *h, const struct reg_resource *r, const char *key, json_t *obj,
                         struct err *e);

/*
 * Update: cand is the proposed full object (borrowed, modified). Applies the
 * subresource rules, optimistic concurrency, generation, finalizer-driven
 * deletion. On success resp holds the stored object.
 */
static void do_update(struct hub *h, const struct reg_resource *r, const char *key, json_t *old,
                      json_t *cand, enum write_mode mode, bool dry_run, struct hub_resp *resp)
{
    struct err e = {0};
    const char *name = mstr(old, "name");
    json_t *next = NULL;
    const char *crv = mstr(cand, "resourceVersion");
    if (*crv && strcmp(crv, mstr(old, "resourceVersion"))) {
        set_status(resp, kstatus_conflict(r->resource, r->group, r->kind, name,
                                          "the object has been modified; please apply your "
                                          "changes to the latest version and try again"));
        return;
    }
    if (mode == WRITE_STATUS) {
        next = jx_deep_copy(old);
        json_t *st = json_object_get(cand, "status");
        if (st)
            json_object_set(next, "status", st);
        else
            json_object_del(next, "status");
        /* kube-apiserver's Job status strategy resets the spec only: metadata written through
         * jobs/status is kept (kueue-ks writes its labels and annotations there). Other
         * resources keep their metadata here: a custom resource's /status drops every change
         * outside status; built-ins differ (a Pod's resets its ownerReferences, a
         * Deployment's its labels) and nothing writes metadata through theirs. */
        json_t *cmd = json_object_get(cand, "metadata");
        if (!r->crd && !strcmp(r->group, "batch") && !strcmp(r->resource, "jobs") &&
            json_is_object(cmd))
            json_object_set_new(next, "metadata", jx_deep_copy(cmd));
    } else {
        next = jx_deep_copy(cand);
        if (r->has_status) {
            json_t *st = json_object_get(old, "status");
            if (st)
                json_object_set(next, "status", st);
            else
                json_object_del(next, "status");
        }
    }
    /* Server-owned metadata never changes through an update. */
    json_t *md = meta(next), *omd = meta(old);
    static const char *const keep[] = {"name",
                                       "namespace",
                                       "uid",
                                       "creationTimestamp",
                                       "deletionTimestamp",
                                       "deletionGracePeriodSeconds",
                                       "generation",
                                       "resourceVersion"};
    for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
        json_t *v = json_object_get(omd, keep[i]);
        if (v)
            json_object_set(md, keep[i], v);
        else
            json_object_del(md, keep[i]);
    }
    set_type(next, r);
    dflt_meta(next);
    if (mode == WRITE_MAIN && !r->crd) {
        struct valid_result *vr = xcalloc(1, sizeof(*vr));
        int drc = dflt_update(r->group, r->kind, next, vr);
        if (drc)
            set_status(resp, valid_status_body(vr));
        free(vr);
        if (drc) {
            json_decref(next);
            return;
        }
    }
    if (uses_generation(r) && !spec_equal(old, next)) {
        json_int_t g = json_integer_value(json_object_get(omd, "generation"));
        json_object_set_new(md, "generation", json_integer(g + 1));
    }
    if (is_crd_res(r))
        crd_set_status(next);
    json_t *oldcmp = json_copy(old);
    set_type(oldcmp, r);
    if (is_crd_res(r))
        json_object_set(oldcmp, "status", json_object_get(next, "status"));
    bool same = json_equal(oldcmp, next);
    json_decref(oldcmp);
    if (same || dry_run) {
        if (same)
            set_type(old, r);
        set_json_resp(resp, 200, same ? json_incref(old) : json_incref(next));
        goto out;
    }
    if (is_crd_res(r) && reg_add_crd(h->reg, next, &e)) {
        invalid(resp, r, name, "spec", "Invalid value", NULL, e.msg);
        goto out;
    }
    json_t *fin = json_object_get(md, "finalizers");
    if (json_object_get(md, "deletionTimestamp") && json_array_size(fin) == 0) {
        if (really_delete(h, r, key, next, &e)) {
            internal_error(resp, &e);
            goto out;
        }
        set_json_resp(resp, 200, json_incref(next));
        goto out;
    }
    if (commit(h, key, HSTORE_MODIFIED, old, next, &e)) {
        internal_error(resp, &e);
        goto out;
    }
    set_json_resp(resp, 200, json_incref(next));
out:
    json_decref(next);
}

/* ---- delete and garbage collection -------------------------------------------- */

static bool has_finalizer(json_t *obj, const char *f)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(meta(obj), "finalizers"), i, v)
    {
        if (!strcmp(json_string_value(v) ? json_string_value(v) : "", f))
            return true;
    }
    return false;
}

static void remove_finalizer(json_t *obj, const char *f)
{
    json_t *fin = json_object_get(meta(obj), "finalizers");
    for (size_t i = json_array_size(fin); i-- > 0;) {
        const char *s = json_string_value(json_array_get(fin, i));
        if (s && !strcmp(s, f))
            json_array_remove(fin, i);
    }
    if (fin && json_array_size(fin) == 0)
        json_object_del(meta(obj), "finalizers");
}

struct ns_purge {
    struct hub *h;
    const struct reg_resource *r;
    json_t *keys;
};

static int collect_key(const char *key, json_t *obj, void *userdata)
{
    json_t *arr = userdata;
    json_array_append_new(arr, json_pack("{s:s, s:O}", "key", key, "obj", obj));
    return 0;
}

/* Remove the object now (DELETED event). Namespaces take their contents with
 * them; CRDs take their custom resources and stop being served. */
static int really_delete(struct hub *h, const struct reg_resource *r, const char *key, json_t *obj,
                         struct err *e)
{
    json_t *old = jx_deep_copy(obj);
    int ret = 0;
    if (!strcmp(r->resource, "namespaces") && !*r->group) {
        const char *ns = mstr(obj, "name");
        for (size_t i = 0; i < reg_count(h->reg); i++) {
            const struct reg_resource *rr = reg_at(h->reg, i);
            if (!rr->namespaced || !rr->storage)
                continue;
            char *prefix = xasprintf("%s.%s/%s/", rr->resource, rr->group, ns);
            json_t *items = json_array();
            hstore_list(h->st, prefix, NULL, collect_key, items, NULL);
            size_t k;
            json_t *it;
            json_array_foreach(items, k, it)
            {
                json_t *o = json_object_get(it, "obj");
                json_t *prev = jx_deep_copy(o);
                commit(h, jx_field_str(it, "key"), HSTORE_DELETED, prev, o, NULL);
                json_decref(prev);
            }
            json_decref(items);
            free(prefix);
        }
    }
    if (is_crd_res(r)) {
        const char *name = mstr(obj, "name");
        char *prefix = xasprintf("%s/", name); /* plural.group/ */
        json_t *items = json_array();
        hstore_list(h->st, prefix, NULL, collect_key, items, NULL);
        size_t k;
        json_t *it;
        json_array_foreach(items, k, it)
        {
            json_t *o = json_object_get(it, "obj");
            json_t *prev = jx_deep_copy(o);
            commit(h, jx_field_str(it, "key"), HSTORE_DELETED, prev, o, NULL);
            json_decref(prev);
        }
        json_decref(items);
        free(prefix);
        reg_remove_crd(h->reg, name);
    }
    ret = commit(h, key, HSTORE_DELETED, old, obj, e);
    json_decref(old);
    schedule_gc(h);
    return ret;
}

/* Strip owner references to uid from its dependents (orphan propagation). */
static void orphan_dependents(struct hub *h, const char *uid)
{
    json_t *items = json_array();
    hstore_list_dependents(h->st, uid, collect_key, items, NULL);
    size_t k;
    json_t *it;
    json_array_foreach(items, k, it)
    {
        json_t *o = json_object_get(it, "obj");
        json_t *prev = jx_deep_copy(o);
        json_t *refs = json_object_get(meta(o), "ownerReferences");
        for (size_t i = json_array_size(refs); i-- > 0;) {
            if (!strcmp(jx_field_str(json_array_get(refs, i), "uid"), uid))
                json_array_remove(refs, i);
        }
        if (json_array_size(refs) == 0)
            json_object_del(meta(o), "ownerReferences");
        commit(h, jx_field_str(it, "key"), HSTORE_MODIFIED, prev, o, NULL);
        json_decref(prev);
    }
    json_decref(items);
}

enum propagation { PROP_DEFAULT, PROP_ORPHAN, PROP_BACKGROUND, PROP_FOREGROUND };

/* Delete with options; fills resp. obj is the current object (borrowed). */
static void do_delete(struct hub *h, const struct reg_resource *r, const char *key, json_t *obj,
                      json_t *opts, bool dry_run, struct hub_resp *resp)
{
    struct err e = {0};
    const char *name = mstr(obj, "name");
    json_t *pre = json_object_get(opts, "preconditions");
    const char *puid = jx_field_str(pre, "uid"), *prv = jx_field_str(pre, "resourceVersion");
    if (*puid && strcmp(puid, mstr(obj, "uid"))) {
        char *why =
            xasprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s", puid,
                      mstr(obj, "uid"));
        set_status(resp, kstatus_conflict(r->resource, r->group, r->kind, name, why));
        free(why);
        return;
    }
    if (*prv && strcmp(prv, mstr(obj, "resourceVersion"))) {
        char *why = xasprintf("Precondition failed: ResourceVersion in precondition: %s, "
                              "ResourceVersion in object meta: %s",
                              prv, mstr(obj, "resourceVersion"));
        set_status(resp, kstatus_conflict(r->resource, r->group, r->kind, name, why));
        free(why);
        return;
    }
    const char *pp = jx_field_str(opts, "propagationPolicy");
    enum propagation prop = PROP_DEFAULT;
    if (!strcmp(pp, "Orphan"))
        prop = PROP_ORPHAN;
    else if (!strcmp(pp, "Background"))
        prop = PROP_BACKGROUND;
    else if (!strcmp(pp, "Foreground"))
        prop = PROP_FOREGROUND;
    else if (*pp) {
        json_t *det = kstatus_details(name, r->group, r->kind);
        char *msg = xasprintf("DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: "
                              "Unsupported value: \"%s\": supported values: \"Foreground\", "
                              "\"Background\", \"Orphan\", \"nil\"",
                              pp);
        set_status(resp, kstatus_new(422, "Invalid", msg, det));
        free(msg);
        return;
    } else if (json_is_true(json_object_get(opts, "orphanDependents"))) {
        prop = PROP_ORPHAN;
    } else if (!strcmp(r->resource, "jobs") && !strcmp(r->group, "batch")) {
        prop = PROP_ORPHAN; /* batch/v1 Jobs default to orphaning their pods */
    }
    if (dry_run) {
        set_json_resp(resp, 200, json_incref(obj));
        return;
    }
    json_t *next = jx_deep_copy(obj);
    json_t *md = meta(next);
    bool terminating = json_object_get(md, "deletionTimestamp") != NULL;
    if (prop == PROP_ORPHAN)
        orphan_dependents(h, mstr(obj, "uid"));
    if (prop == PROP_FOREGROUND && !has_finalizer(next, "foregroundDeletion")) {
        json_t *fin = json_object_get(md, "finalizers");
        if (!json_is_array(fin)) {
            fin = json_array();
            json_object_set_new(md, "finalizers", fin);
        }
        json_array_append_new(fin, json_string("foregroundDeletion"));
    }
    if (json_array_size(json_object_get(md, "finalizers")) > 0) {
        if (!terminating) {
            char now[40];
            clock_now_rfc3339(now, sizeof(now), 0);
            json_object_set_new(md, "deletionTimestamp", json_string(now));
            json_object_set_new(md, "deletionGracePeriodSeconds", json_integer(0));
        }
        if (!json_equal(next, obj) && commit(h, key, HSTORE_MODIFIED, obj, next, &e)) {
            internal_error(resp, &e);
            goto out;
        }
        if (prop == PROP_FOREGROUND)
            schedule_gc(h);
        set_type(next, r);
        set_json_resp(resp, 200, json_incref(next));
        goto out;
    }
    if (really_delete(h, r, key, next, &e)) {
        internal_error(resp, &e);
        goto out;
    }
    set_type(next, r);
    set_json_resp(resp, 200, json_incref(next));
out:
    json_decref(next);
}

static const struct reg_resource *res_for_key(struct hub *h, const char *key)
{
    for (size_t i = 0; i < reg_count(h->reg); i++) {
        const struct reg_resource *r = reg_at(h->reg, i);
        if (!r->storage)
            continue;
        size_t nr = strlen(r->resource), ng = strlen(r->group);
        if (!strncmp(key, r->resource, nr) && key[nr] == '.' &&
            !strncmp(key + nr + 1, r->group, ng) && key[nr + 1 + ng] == '/')
            return r;
    }
    return NULL;
}

/* One GC pass: delete dependents whose owners are all gone (or are being
 * deleted in the foreground), and finish foreground deletions whose
 * dependents are gone. Uses the store's owner/uid indexes, so the cost is
 * proportional to the objects that have owners, not to all objects.
 * Returns the number of writes made. */
static int gc_pass(struct hub *h)
{
    json_t *owned = json_array(), *fg = json_array();
    int writes = 0;
    hstore_list_owned(h->st, collect_key, owned, NULL);
    hstore_list_foreground(h->st, collect_key, fg, NULL);
    json_t *fg_uids = json_object();
    size_t k;
    json_t *it;
    json_array_foreach(fg, k, it)
    {
        json_object_set_new(fg_uids, mstr(json_object_get(it, "obj"), "uid"), json_true());
    }
    json_array_foreach(owned, k, it)
    {
        json_t *o = json_object_get(it, "obj");
        const char *key = jx_field_str(it, "key");
        const struct reg_resource *r = res_for_key(h, key);
        if (!r || json_object_get(meta(o), "deletionTimestamp"))
            continue;
        bool alive = false, owner_fg = false;
        size_t i;
        json_t *ref;
        json_array_foreach(json_object_get(meta(o), "ownerReferences"), i, ref)
        {
            const char *ouid = jx_field_str(ref, "uid");
            if (hstore_uid_exists(h->st, ouid))
                alive = true;
            if (json_object_get(fg_uids, ouid))
                owner_fg = true;
        }
        if (alive && !owner_fg)
            continue;
        struct hub_resp resp = {0};
        json_t *opts = json_pack("{s:s}", "propagationPolicy", "Background");
        do_delete(h, r, key, o, opts, false, &resp);
        json_decref(opts);
        hub_resp_release(&resp);
        writes++;
    }
    json_array_foreach(fg, k, it)
    {
        json_t *o = json_object_get(it, "obj");
        const char *key = jx_field_str(it, "key");
        const struct reg_resource *r = res_for_key(h, key);
        if (!r || hstore_has_dependents(h->st, mstr(o, "uid")))
            continue;
        json_t *next = jx_deep_copy(o);
        remove_finalizer(next, "foregroundDeletion");
        struct err e = {0};
        if (json_array_size(json_object_get(meta(next), "finalizers")) == 0)
            really_delete(h, r, key, next, &e);
        else
            commit(h, key, HSTORE_MODIFIED, o, next, &e);
        json_decref(next);
        writes++;
    }
    json_decref(fg_uids);
    json_decref(owned);
    json_decref(fg);
    return writes;
}

static void gc_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    struct hub *h = (struct hub *)((char *)t - offsetof(struct hub, gc_timer));
    for (int i = 0; i < 20; i++)
        if (gc_pass(h) == 0)
            break;
    ev_timer_stop(h->loop, &h->gc_timer); /* really_delete re-armed it; all done */
}

/* ---- list / watch ------------------------------------------------------------ */

static char *unb64(const char *s)
{
    size_t n = strlen(s), m;
    char *out;
    if (n == 0 || n % 4 || n > 8192 || b64_decode(s, n, &out, &m) < 0)
        return NULL;
    return out;
}

static char *make_continue(int64_t rv, const char *last_key, const char *prefix)
{
    json_t *t = json_pack("{s:s, s:I, s:s}", "v", "meta.k8s.io/v1", "rv", (json_int_t)rv, "start",
                          last_key + strlen(prefix));
    char *txt = json_dumps(t, JSON_COMPACT);
    json_decref(t);
    char *tok = b64_encode(txt, strlen(txt));
    free(txt);
    return tok;
}

static bool wants_table(const struct hub_req *req)
{
    return req->accept && strstr(req->accept, "as=Table") && strstr(req->accept, "meta.k8s.io");
}

static struct table_printer *printer_for(const struct reg_resource *r, struct err *e)
{
    if (r->crd)
        return table_printer_crd(r->columns, e);
    return table_printer_builtin(r->group, r->kind);
}

/* The Table form of a list (borrowed; its items and metadata are used). NULL + resp on error. */
static json_t *as_table(const struct reg_resource *r, json_t *list, const struct hub_req *req,
                        struct hub_resp *resp)
{
    struct err e = {0};
    struct table_opts to = {.now = time(NULL)};
    if (table_parse_include(query(req, "includeObject"), &to.include, &e)) {
        fail(resp, 400, "BadRequest", NULL, "%s", e.msg);
        return NULL;
    }
    struct table_printer *p = printer_for(r, &e);
    if (!p) {
        internal_error(resp, &e);
        return NULL;
    }
    json_t *md = json_object_get(list, "metadata");
    to.resource_version = json_string_value(json_object_get(md, "resourceVersion"));
    to.continue_token = json_string_value(json_object_get(md, "continue"));
    char *av = reg_api_version(r);
    to.kind = r->kind;
    to.api_version = av;
    json_t *tbl = table_build(p, json_object_get(list, "items"), &to);
    free(av);
    table_printer_free(p);
    return tbl;
}

/* A list response's cap (kube-apiserver has none; a devhub holding more than this in one
 * collection is not what it is for). */
#define HUB_LIST_MAX_BYTES ((size_t)1 << 30)

struct list_ctx {
    struct hub_watch *w; /* for filtering (labels/fields) */
    json_t *items;       /* the items as trees (Table requests) */
    struct buf text;     /* or as text: the items joined by commas (JSON requests) */
    long count;
    long limit;
    char *last_key;
    bool more;
    bool filtered; /* a selector: objects are parsed to be matched */
    const struct reg_resource *r;
    char *av; /* the served apiVersion (custom resources' items carry it) */
};

/* As kube-apiserver: items of a built-in list carry no apiVersion/kind (the list does);
 * custom resources, served as unstructured, keep theirs. */
static void list_item_type(const struct list_ctx *c, json_t *obj)
{
    if (c->r->crd) {
        set_type(obj, c->r);
    } else {
        json_object_del(obj, "apiVersion");
        json_object_del(obj, "kind");
    }
}

/* Whether the list is full (then `more`: a matching object is left for the next page). */
static bool list_full(struct list_ctx *c)
{
    if (c->limit > 0 && c->count >= c->limit) {
        c->more = true;
        return true;
    }
    return false;
}

static void list_count(struct list_ctx *c, const char *key)
{
    c->count++;
    free(c->last_key);
    c->last_key = xstrdup(key);
}

static int list_cb(const char *key, json_t *obj, void *userdata)
{
    struct list_ctx *c = userdata;
    if (!watch_matches(c->w, obj))
        return 0;
    if (list_full(c))
        return 1;
    list_count(c, key);
    list_item_type(c, obj);
    json_array_append(c->items, obj);
    return 0;
}

/* The JSON form: each item's text from the stored text (devhub/listtext.h), parsed only to
 * match a selector or when the text cannot be used as it is. A stored text that does not
 * parse is skipped, as hstore_list skips it. */
static int list_text_cb(const char *key, const char *txt, size_t n, void *userdata)
{
    struct list_ctx *c = userdata;
    json_t *obj = NULL;
    if (c->filtered) {
        obj = jscan_load(txt, n, NULL);
        bool match = obj && watch_matches(c->w, obj);
        if (!match) {
            json_decref(obj);
            return 0;
        }
    }
    if (list_full(c)) {
        json_decref(obj);
        return 1;
    }
    size_t mark = c->text.len;
    int rc = c->count > 0 ? buf_append(&c->text, ",", 1) : 0;
    if (rc == 0 && listtext_item(txt, n, !c->r->crd, c->av, c->r->kind, &c->text) < 0) {
        if (!obj)
            obj = jscan_load(txt, n, NULL);
        if (!obj) {
            c->text.len = mark;
            if (c->text.data)
                c->text.data[mark] = 0;
            return 0;
        }
        list_item_type(c, obj);
        char *item = json_dumps(obj, JSON_COMPACT);
        rc = item ? buf_puts(&c->text, item) : -ENOMEM;
        free(item);
    }
    json_decref(obj);
    if (rc < 0)
        return -E2BIG;
    list_count(c, key);
    return 0;
}

/* Parse selectors into a (not registered) watch-like filter. false + resp on error. */
static bool parse_filter(const struct hub_req *req, struct hub_watch *w, struct hub_resp *resp)
{
    struct err e = {0};
    const char *ls = query(req, "labelSelector");
    const char *fs = query(req, "fieldSelector");
    if (ls && *ls && sel_parse(ls, &w->labels, &e)) {
        fail(resp, 400, "BadRequest", NULL, "%s", e.msg);
        return false;
    }
    if (fs && *fs && sel_field_parse(fs, &w->fields, &e)) {
        fail(resp, 400, "BadRequest", NULL, "%s", e.msg);
        return false;
    }
    return true;
}

static char *list_prefix(const struct reg_resource *r, const char *ns)
{
    if (r->namespaced && ns && *ns)
        return xasprintf("%s.%s/%s/", r->resource, r->group, ns);
    return xasprintf("%s.%s/", r->resource, r->group);
}

static void do_list(struct hub *h, const struct reg_resource *r, const char *ns,
                    const struct hub_req *req, struct hub_resp *resp)
{
    struct hub_watch filt = {0};
    struct list_ctx c = {.w = &filt, .r = r};
    buf_init(&c.text, HUB_LIST_MAX_BYTES);
    char *prefix = list_prefix(r, ns);
    char *after = NULL;
    int64_t rv = hstore_rv(h->st);
    struct err e = {0};
    if (!parse_filter(req, &filt, resp))
        goto out;
    const char *lim = query(req, "limit");
    if (lim && *lim) {
        char *end = NULL;
        long v = strtol(lim, &end, 10);
        if (*end || v < 0) {
            fail(resp, 400, "BadRequest", NULL, "limit: Invalid value: \"%s\"", lim);
            goto out;
        }
        c.limit = v;
    }
    const char *cont = query(req, "continue");
    const char *lrv = query(req, "resourceVersion");
    if (lrv && strcmp(lrv, "0") == 0 && !(cont && *cont))
        c.limit = 0; /* as kube-apiserver 1.34 from its watch cache: whole, `limit` ignored */
    if (cont && *cont) {
        char *txt = unb64(cont);
        json_t *tok = txt ? json_loads(txt, 0, NULL) : NULL;
        free(txt);
        const char *start = jx_field_str(tok, "start");
        json_int_t trv = json_integer_value(json_object_get(tok, "rv"));
        if (!tok || !*start || trv <= 0) {
            json_decref(tok);
            fail(resp, 400, "BadRequest", NULL,
                 "continue key is not valid: incorrect encoded start resourceVersion (version "
                 "meta.k8s.io/v1)");
            goto out;
        }
        if (trv < hstore_compacted_rv(h->st)) {
            json_decref(tok);
            set_status(resp,
                       kstatus_expired("The provided continue parameter is too old to display a "
                                       "consistent list result. You can start a new list without "
                                       "the continue parameter, or use the continue token in "
                                       "this response to retrieve the remainder of the results. "
                                       "Continuing with the provided token results in an "
                                       "inconsistent list - objects that were created, modified, "
                                       "or deleted between the time the first chunk was returned "
                                       "and now may show up in the list."));
            goto out;
        }
        after = xasprintf("%s%s", prefix, start);
        rv = trv;
        json_decref(tok);
    }
    c.filtered = filt.labels || filt.fields;
    c.av = reg_api_version(r);
    bool table = wants_table(req);
    int lrc;
    if (table) {
        c.items = json_array();
        lrc = hstore_list(h->st, prefix, after, list_cb, &c, &e);
    } else {
        lrc = hstore_list_text(h->st, prefix, after, list_text_cb, &c, &e);
        if (lrc == -E2BIG)
            err_set(&e, -E2BIG, "list: the response would exceed %zu bytes", c.text.max);
    }
    if (lrc < 0) {
        internal_error(resp, &e);
        goto out;
    }
    char *rvs = rv_string(rv);
    json_t *md = json_pack("{s:s}", "resourceVersion", rvs);
    free(rvs);
    if (c.more && c.last_key) {
        char *tok = make_continue(rv, c.last_key, prefix);
        json_object_set_new(md, "continue", json_string(tok));
        free(tok);
    }
    if (!table) {
        /* The same document as the tree below would dump to, items spliced in as text. A
         * custom resource's list is written as kube-apiserver writes it (an unstructured
         * list: its keys sorted, so the kind after the items); a built-in kind's list has
         * kind, apiVersion, metadata, items (its Go struct's order). */
        char *mds = json_dumps(md, JSON_COMPACT | (r->crd ? JSON_SORT_KEYS : 0));
        json_t *kind = json_string(r->list_kind), *av = json_string(c.av);
        char *kinds = json_dumps(kind, JSON_ENCODE_ANY), *avs = json_dumps(av, JSON_ENCODE_ANY);
        json_decref(kind);
        json_decref(av);
        json_decref(md);
        struct buf doc;
        buf_init(&doc, c.text.len + 4096 + strlen(mds) + strlen(kinds) + strlen(avs));
        if (r->crd)
            buf_printf(&doc, "{\"apiVersion\":%s,\"items\":[", avs);
        else
            buf_printf(&doc, "{\"kind\":%s,\"apiVersion\":%s,\"metadata\":%s,\"items\":[", kinds,
                       avs, mds);
        buf_append(&doc, c.text.data ? c.text.data : "", c.text.len);
        if (r->crd)
            buf_printf(&doc, "],\"kind\":%s,\"metadata\":%s}", kinds, mds);
        else
            buf_puts(&doc, "]}");
        free(mds);
        free(kinds);
        free(avs);
        resp->code = 200;
        resp->body = buf_detach(&doc);
        resp->content_type = "application/json";
        goto out;
    }
    json_t *list = json_pack("{s:s, s:s, s:o, s:O}", "kind", r->list_kind, "apiVersion", c.av,
                             "metadata", md, "items", c.items);
    json_t *tbl = as_table(r, list, req, resp);
    json_decref(list);
    if (!tbl)
        goto out;
    set_json_resp(resp, 200, tbl);
out:
    json_decref(c.items);
    buf_free(&c.text);
    free(c.av);
    free(c.last_key);
    free(after);
    free(prefix);
    sel_free(filt.labels);
    sel_field_free(filt.fields);
}

struct replay_ctx {
    struct hub *h;
    struct hub_watch *w;
};

static int replay_initial(const char *key, json_t *obj, void *userdata)
{
    struct hub_watch *w = userdata;
    (void)key;
    if (watch_matches(w, obj))
        watch_send_obj(w, "ADDED", obj);
    return 0;
}

static int replay_change(int64_t rv, enum hstore_event ev, const char *key, json_t *obj,
                         void *userdata)
{
    struct hub_watch *w = userdata;
    (void)rv;
    (void)key;
    /* The previous state is not kept in the log: a change is reported when the
     * new state matches (DELETED when the final state matched). */
    if (watch_matches(w, obj))
        watch_send_obj(w, hstore_event_name(ev), obj);
    return 0;
}

/* (Re)arm the end-of-watch timer: timeoutSeconds, or the fault-injection cut. */
static void watch_arm(struct hub_watch *w)
{
    double left = w->timeout_s;
    if (w->h->watch_cut > 0 && w->h->watch_cut < left)
        left = w->h->watch_cut;
    left -= ev_now(w->h->loop) - w->started;
    if (left < 0)
        left = 0;
    ev_timer_stop(w->h->loop, &w->timeout);
    ev_timer_set(&w->timeout, left, 0);
    ev_timer_start(w->h->loop, &w->timeout);
}

static void do_watch(struct hub *h, const struct reg_resource *r, const char *ns, const char *name,
                     const struct hub_req *req, struct hub_resp *resp)
{
    struct hub_watch *w = xcalloc(1, sizeof(*w));
    struct err e = {0};
    w->h = h;
    buf_init(&w->out, WATCH_BUF_MAX);
    ev_timer_init(&w->timeout, watch_timeout_cb, 0, 0);
    if (!parse_filter(req, w, resp)) {
        watch_free(w);
        return;
    }
    if (name && *name)
        w->name = xstrdup(name);
    w->prefix = list_prefix(r, ns);
    w->api_version = reg_api_version(r);
    w->kind = xstrdup(r->kind);
    w->bookmarks = qbool(req, "allowWatchBookmarks");
    if (wants_table(req)) {
        enum table_include inc = TABLE_INCLUDE_METADATA;
        if (table_parse_include(query(req, "includeObject"), &inc, &e)) {
            fail(resp, 400, "BadRequest", NULL, "%s", e.msg);
            watch_free(w);
            return;
        }
        w->include = (int)inc;
        w->printer = printer_for(r, &e);
    }
    const char *to = query(req, "timeoutSeconds");
    double timeout = 1800;
    if (to && *to) {
        char *end = NULL;
        long v = strtol(to, &end, 10);
        if (!*end && v > 0)
            timeout = (double)v;
    }
    const char *rvq = query(req, "resourceVersion");
    bool initial = !rvq || !*rvq || !strcmp(rvq, "0") || qbool(req, "sendInitialEvents");
    /* Link first so the replay reaches the client through the normal path. */
    w->next = h->watches;
    if (h->watches)
        h->watches->prev = w;
    h->watches = w;
    h->nwatches++;
    resp->code = 200;
    resp->content_type = "application/json";
    resp->watch = w;
    if (initial) {
        hstore_list(h->st, w->prefix, NULL, replay_initial, w, &e);
        if (qbool(req, "sendInitialEvents") && w->bookmarks)
            watch_push_bookmark(w, hstore_rv(h->st), true);
    } else {
        char *end = NULL;
        long long from = strtoll(rvq, &end, 10);
        if (*end || from < 0) {
            resp->watch = NULL;
            hub_watch_release(w);
            fail(resp, 400, "BadRequest", NULL, "resourceVersion: Invalid value: \"%s\"", rvq);
            return;
        }
        int rc = hstore_changes(h->st, from, w->prefix, replay_change, w, &e);
        if (rc == -ERANGE) {
            char msg[128];
            snprintf(msg, sizeof(msg), "too old resource version: %lld (%" PRId64 ")", from,
                     hstore_compacted_rv(h->st) + 1);
            json_t *st = kstatus_expired(msg);
            watch_push_line(w, "ERROR", st);
            json_decref(st);
            watch_end(w);
            return;
        }
    }
    w->started = ev_now(h->loop);
    w->timeout_s = timeout;
    watch_arm(w);
}

void hub_set_watch_cut(struct hub *h, double seconds)
{
    h->watch_cut = seconds > 0 ? seconds : 0;
    for (struct hub_watch *w = h->watches; w; w = w->next)
        if (!w->ended)
            watch_arm(w);
}

/* ---- request handling ------------------------------------------------------------ */

static json_t *parse_body(const struct reg_resource *r, const struct hub_req *req,
                          struct hub_resp *resp)
{
    (void)r;
    if (kproto_is_media_type(req->content_type)) {
        struct err e = {0};
        json_t *obj = NULL;
        int rc = kproto_decode(req->body ? req->body : "", req->body_len, &obj, &e);
        if (rc == -ENOTSUP)
            fail(resp, 415, "UnsupportedMediaType", NULL,
                 "%s (use 'kubectl create -f' or 'kubectl apply -f' with a manifest)", e.msg);
        else if (rc == -E2BIG)
            fail(resp, 413, "RequestEntityTooLarge", NULL, "%s", e.msg);
        else if (rc < 0)
            fail(resp, 400, "BadRequest", NULL, "%s", e.msg);
        return rc < 0 ? NULL : obj;
    }
    if (req->content_type && *req->content_type &&
        strncmp(req->content_type, "application/json", 16) &&
        strncmp(req->content_type, "*/*", 3)) {
        bool pb = strstr(req->content_type, "protobuf") != NULL;
        fail(resp, 415, "UnsupportedMediaType", NULL,
             "the body of the request was in an unknown format - accepted media types include: "
             "application/json (kueue-ks-devhub does not accept %s%s)",
             req->content_type,
             pb ? "; kubectl's generator commands such as 'kubectl create namespace|configmap|"
                  "deployment' and 'kubectl auth' send protobuf: use 'kubectl create -f' or "
                  "'kubectl apply -f' with a manifest"
                : "");
        return NULL;
    }
    json_t *obj = NULL;
    struct valid_result *vr = xcalloc(1, sizeof(*vr));
    if (valid_parse_body(req->body ? req->body : "", req->body_len, HUB_MAX_BODY, &obj, vr)) {
        set_status(resp, valid_status_body(vr));
        obj = NULL;
    }
    free(vr);
    return obj;
}

static bool is_write(const char *m)
{
    return !strcmp(m, "POST") || !strcmp(m, "PUT") || !strcmp(m, "PATCH") || !strcmp(m, "DELETE");
}

static json_t *scale_of(const struct reg_resource *r, json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");
    json_t *status = json_object_get(obj, "status");
    json_int_t want = json_integer_value(json_object_get(spec, "replicas"));
    json_int_t have = json_integer_value(json_object_get(status, "replicas"));
    json_t *md = json_pack("{s:s, s:s, s:s, s:s}", "name", mstr(obj, "name"), "namespace",
                           mstr(obj, "namespace"), "uid", mstr(obj, "uid"), "resourceVersion",
                           mstr(obj, "resourceVersion"));
    json_object_set(md, "creationTimestamp", json_object_get(meta(obj), "creationTimestamp"));
    (void)r;
    return json_pack("{s:s, s:s, s:o, s:{s:I}, s:{s:I}}", "kind", "Scale", "apiVersion",
                     "autoscaling/v1", "metadata", md, "spec", "replicas", want, "status",
                     "replicas", have);
}

static void patch_error(struct hub_resp *resp, struct err *e)
{
    int code = e->http_status ? e->http_status : 422;
    const char *reason = e->reason[0] ? e->reason : "Invalid";
    set_status(resp, kstatus_new(code, reason, e->msg, NULL));
}

/* The request's patch type, or false + resp when the devhub does not take it
 * (415 for server-side apply). */
static bool patch_type_of(const struct hub_req *req, enum patch_type *pt, struct hub_resp *resp)
{
    struct err e = {0};
    if (patch_type_from_content_type(req->content_type, pt, &e)) {
        patch_error(resp, &e);
        return false;
    }
    if (*pt == PATCH_TYPE_APPLY) {
        fail(resp, 415, "UnsupportedMediaType", NULL,
             "server-side apply (application/apply-patch+yaml) is not supported by the devhub; "
             "use client-side kubectl apply (--server-side=false) or a merge patch");
        return false;
    }
    return true;
}

/* Apply the request's patch to target (borrowed); NULL + resp on error. */
static json_t *apply_patch(const struct reg_resource *r, const char *kind, json_t *target,
                           const struct hub_req *req, struct hub_resp *resp)
{
    struct err e = {0};
    enum patch_type pt;
    json_t *out = NULL;
    if (!patch_type_of(req, &pt, resp))
        return NULL;
    if (patch_apply(pt, kind, r->crd == NULL, target, req->body ? req->body : "", req->body_len,
                    &out, &e)) {
        patch_error(resp, &e);
        return NULL;
    }
    if (!json_is_object(out)) {
        json_decref(out);
        fail(resp, 422, "Invalid", NULL, "the patch must produce a JSON object");
        return NULL;
    }
    return out;
}

/*
 * pods/log. There is no kubelet: a pod not bound to a node has an empty log
 * (the apiserver returns no location for it), a bound pod whose container has
 * not started gets the kubelet's "waiting to start" answer, any other pod an
 * empty log (the simulated containers write nothing). follow returns at once.
 */
static void pod_log(const struct reg_resource *r, json_t *pod, const struct hub_req *req,
                    struct hub_resp *resp)
{
    const char *name = mstr(pod, "name");
    json_t *cs = json_object_get(json_object_get(pod, "spec"), "containers");
    const char *want = query(req, "container");
    const char *c = NULL;
    if (!want || !*want) {
        if (json_array_size(cs) == 1) {
            c = jx_field_str(json_array_get(cs, 0), "name");
        } else {
            struct buf names;
            buf_init(&names, 1 << 16);
            size_t i;
            json_t *x;
            json_array_foreach(cs, i, x)
                buf_printf(&names, "%s%s", i ? " " : "", jx_field_str(x, "name"));
            fail(resp, 400, "BadRequest", NULL,
                 "a container name must be specified for pod %s, choose one of: [%s]", name,
                 buf_str(&names));
            buf_free(&names);
            return;
        }
    } else {
        static const char *const lists[] = {"containers", "initContainers", "ephemeralContainers"};
        for (size_t l = 0; l < 3 && !c; l++) {
            json_t *arr = json_object_get(json_object_get(pod, "spec"), lists[l]);
            size_t i;
            json_t *x;
            json_array_foreach(arr, i, x) if (!strcmp(jx_field_str(x, "name"), want)) c = want;
        }
        if (!c) {
            fail(resp, 400, "BadRequest", NULL, "container %s is not valid for pod %s", want, name);
            return;
        }
    }
    (void)r;
    json_t *spec = json_object_get(pod, "spec");
    const char *phase = jx_field_str(json_object_get(pod, "status"), "phase");
    if (*jx_field_str(spec, "nodeName") && !strcmp(phase, "Pending")) {
        fail(resp, 400, "BadRequest", NULL,
             "container \"%s\" in pod \"%s\" is waiting to start: ContainerCreating", c, name);
        return;
    }
    resp->code = 200;
    resp->body = xstrdup("");
    resp->content_type = "text/plain";
}

static void handle_object(struct hub *h, const struct reg_resource *r, const struct route *rt,
                          const struct hub_req *req, bool dry_run, struct hub_resp *resp)
{
    char *key = make_key(r, rt->ns, rt->name);
    json_t *cur = NULL, *body = NULL, *cand = NULL;
    const char *m = req->method;
    bool status = !strcmp(rt->sub, "status");
    bool scale = !strcmp(rt->sub, "scale");
    bool log = !strcmp(rt->sub, "log") && !strcmp(r->resource, "pods") && !r->crd;
    if (*rt->sub && !(status && r->has_status) && !(scale && r->has_scale) && !log) {
        fail(resp, 404, "NotFound", NULL, "the server could not find the requested resource");
        goto out;
    }
    /* the patch type before the object, as the apiserver checks it: an apply
     * to a missing object is 415 too (the operator's start-up SSA probe) */
    enum patch_type pt;
    if (!strcmp(m, "PATCH") && !patch_type_of(req, &pt, resp))
        goto out;
    if (hstore_get(h->st, key, &cur, NULL)) {
        if (!strcmp(m, "PUT") && !*rt->sub) {
            /* Update of a missing object: 404 like the apiserver (no create-on-update). */
        }
        set_status(resp, kstatus_not_found(r->resource, r->group, r->kind, rt->name));
        goto out;
    }
    if (log) {
        if (strcmp(m, "GET"))
            fail(resp, 405, "MethodNotAllowed", NULL,
                 "the server does not allow this method on the requested resource");
        else
            pod_log(r, cur, req, resp);
        goto out;
    }
    if (!strcmp(m, "GET")) {
        set_type(cur, r);
        if (!scale && wants_table(req)) {
            json_t *one =
                json_pack("{s:s, s:{}, s:[O]}", "kind", r->list_kind, "metadata", "items", cur);
            json_t *tbl = as_table(r, one, req, resp);
            json_decref(one);
            if (tbl)
                set_json_resp(resp, 200, tbl);
            goto out;
        }
        set_json_resp(resp, 200, scale ? scale_of(r, cur) : json_incref(cur));
        goto out;
    }
    if (!strcmp(m, "DELETE")) {
        json_t *opts = NULL;
        if (req->body_len > 0) {
            opts = json_loadb(req->body, req->body_len, 0, NULL);
            if (!json_is_object(opts)) {
                json_decref(opts);
                fail(resp, 400, "BadRequest", NULL,
                     "the body of the request must be a DeleteOptions JSON object");
                goto out;
            }
        } else {
            opts = json_object();
        }
        const char *pp = query(req, "propagationPolicy");
        if (pp && *pp)
            json_object_set_new(opts, "propagationPolicy", json_string(pp));
        do_delete(h, r, key, cur, opts, dry_run, resp);
        json_decref(opts);
        goto out;
    }
    json_t *target = scale ? scale_of(r, cur) : json_incref(cur);
    if (!strcmp(m, "PUT")) {
        body = parse_body(NULL, req, resp);
        if (!body) {
            json_decref(target);
            goto out;
        }
        if (!scale && !check_body(r, body, rt->ns, rt->name, false, false, req, resp)) {
            json_decref(target);
            goto out;
        }
        cand = json_incref(body);
    } else if (!strcmp(m, "PATCH")) {
        cand = apply_patch(r, scale ? "Scale" : r->kind, target, req, resp);
        if (!cand) {
            json_decref(target);
            goto out;
        }
        if (!scale && !check_body(r, cand, rt->ns, rt->name, false, true, req, resp)) {
            json_decref(target);
            goto out;
        }
    } else {
        json_decref(target);
        fail(resp, 405, "MethodNotAllowed", NULL,
             "the server does not allow this method on the requested resource");
        goto out;
    }
    json_decref(target);
    if (scale) {
        json_t *rep = json_object_get(json_object_get(cand, "spec"), "replicas");
        if (!json_is_integer(rep) || json_integer_value(rep) < 0) {
            invalid(resp, r, rt->name, "spec.replicas", "Invalid value", NULL,
                    "must be greater than or equal to 0");
            goto out;
        }
        json_t *next = jx_deep_copy(cur);
        json_t *spec = json_object_get(next, "spec");
        if (!json_is_object(spec)) {
            spec = json_object();
            json_object_set_new(next, "spec", spec);
        }
        json_object_set(spec, "replicas", rep);
        const char *crv = mstr(cand, "resourceVersion");
        json_object_set_new(meta(next), "resourceVersion", json_string(crv));
        struct hub_resp inner = {0};
        do_update(h, r, key, cur, next, WRITE_MAIN, dry_run, &inner);
        json_decref(next);
        if (inner.code == 200) {
            json_t *stored = json_loads(inner.body, 0, NULL);
            set_json_resp(resp, 200, scale_of(r, stored));
            json_decref(stored);
            hub_resp_release(&inner);
        } else {
            *resp = inner;
        }
        goto out;
    }
    do_update(h, r, key, cur, cand, status ? WRITE_STATUS : WRITE_MAIN, dry_run, resp);
out:
    json_decref(cand);
    json_decref(body);
    json_decref(cur);
    free(key);
}

static void handle_collection(struct hub *h, const struct reg_resource *r, const struct route *rt,
                              const struct hub_req *req, bool dry_run, struct hub_resp *resp)
{
    const char *m = req->method;
    if (!strcmp(m, "GET")) {
        if (qbool(req, "watch"))
            do_watch(h, r, rt->ns, NULL, req, resp);
        else
            do_list(h, r, rt->ns, req, resp);
        return;
    }
    if (!strcmp(m, "POST")) {
        if (r->namespaced && !*rt->ns) {
            fail(resp, 405, "MethodNotAllowed", NULL,
                 "the server does not allow this method on the requested resource");
            return;
        }
        json_t *obj = parse_body(r, req, resp);
        if (!obj)
            return;
        if (check_body(r, obj, rt->ns, NULL, true, false, req, resp))
            do_create(h, r, rt->ns, obj, dry_run, resp);
        json_decref(obj);
        return;
    }
    if (!strcmp(m, "DELETE")) {
        struct hub_watch filt = {0};
        struct list_ctx c = {.w = &filt, .r = r};
        if (!parse_filter(req, &filt, resp))
            return;
        char *prefix = list_prefix(r, rt->ns);
        c.items = json_array();
        json_t *keys = json_array();
        hstore_list(h->st, prefix, NULL, collect_key, keys, NULL);
        size_t i;
        json_t *it;
        json_t *opts = json_object();
        json_array_foreach(keys, i, it)
        {
            json_t *o = json_object_get(it, "obj");
            if (!watch_matches(&filt, o))
                continue;
            struct hub_resp one = {0};
            do_delete(h, r, jx_field_str(it, "key"), o, opts, dry_run, &one);
            set_type(o, r);
            json_array_append(c.items, o);
            hub_resp_release(&one);
        }
        json_decref(opts);
        json_decref(keys);
        char *av = reg_api_version(r);
        char *rvs = rv_string(hstore_rv(h->st));
        set_json_resp(resp, 200,
                      json_pack("{s:s, s:s, s:{s:s}, s:O}", "kind", r->list_kind, "apiVersion", av,
                                "metadata", "resourceVersion", rvs, "items", c.items));
        free(av);
        free(rvs);
        free(prefix);
        json_decref(c.items);
        sel_free(filt.labels);
        sel_field_free(filt.fields);
        return;
    }
    fail(resp, 405, "MethodNotAllowed", NULL,
         "the server does not allow this method on the requested resource");
}

/* Self-reviews: no authorization in the devhub, so everything is allowed and
 * the user is the authenticated one. */
static void handle_review(const struct reg_resource *r, const struct hub_req *req,
                          struct hub_resp *resp)
{
    if (strcmp(req->method, "POST")) {
        fail(resp, 405, "MethodNotAllowed", NULL,
             "the server does not allow this method on the requested resource");
        return;
    }
    json_t *obj = parse_body(r, req, resp);
    if (!obj)
        return;
    set_type(obj, r);
    if (!strcmp(r->kind, "SelfSubjectReview")) {
        json_object_set_new(obj, "status",
                            json_pack("{s:{s:s, s:[ss]}}", "userInfo", "username",
                                      req->user ? req->user : "", "groups", "system:masters",
                                      "system:authenticated"));
    } else if (!strcmp(r->kind, "SelfSubjectRulesReview")) {
        json_object_set_new(obj, "status",
                            json_pack("{s:[{s:[s], s:[s], s:[s]}], s:[{s:[s], s:[s]}], s:b}",
                                      "resourceRules", "verbs", "*", "apiGroups", "*", "resources",
                                      "*", "nonResourceRules", "verbs", "*", "nonResourceURLs", "*",
                                      "incomplete", 0));
    } else {
        json_object_set_new(obj, "status",
                            json_pack("{s:b, s:s}", "allowed", 1, "reason",
                                      "kueue-ks-devhub has no authorization: allowed"));
    }
    set_json_resp(resp, 201, obj);
}

static void handle_resource(struct hub *h, const struct route *rt, const struct hub_req *req,
                            struct hub_resp *resp)
{
    const struct reg_resource *r = reg_find(h->reg, rt->group, rt->version, rt->resource);
    if (!r) {
        fail(resp, 404, "NotFound", NULL, "the server could not find the requested resource");
        return;
    }
    if (!r->namespaced && *rt->ns) {
        fail(resp, 404, "NotFound", NULL, "the server could not find the requested resource");
        return;
    }
    if (r->review) {
        handle_review(r, req, resp);
        return;
    }
    const char *dr = query(req, "dryRun");
    bool dry_run = dr && !strcmp(dr, "All");
    if (*rt->name) {
        if (!strcmp(req->method, "GET") && qbool(req, "watch")) {
            do_watch(h, r, rt->ns, rt->name, req, resp);
            return;
        }
        if (!strcmp(req->method, "POST")) {
            fail(resp, 405, "MethodNotAllowed", NULL,
                 "the server does not allow this method on the requested resource");
            return;
        }
        handle_object(h, r, rt, req, dry_run, resp);
    } else {
        handle_collection(h, r, rt, req, dry_run, resp);
    }
}

static void handle_version(struct hub_resp *resp)
{
    set_json_resp(resp, 200,
                  json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "major", "1", "minor",
                            "32", "gitVersion", "v1.32.0", "gitCommit", "devhub", "gitTreeState",
                            "clean", "buildDate", "2026-01-01T00:00:00Z", "goVersion", "go1.23.0",
                            "compiler", "gc", "platform", "linux/amd64"));
}

static void handle_admin(struct hub *h, const struct route *rt, const struct hub_req *req,
                         struct hub_resp *resp)
{
    struct err e = {0};
    if (!strcmp(rt->rest, "compact") && !strcmp(req->method, "POST")) {
        long n = hstore_compact_to(h->st, hstore_rv(h->st), &e);
        if (n < 0) {
            internal_error(resp, &e);
            return;
        }
        char *rvs = rv_string(hstore_compacted_rv(h->st));
        set_json_resp(resp, 200,
                      json_pack("{s:I, s:s}", "removed", (json_int_t)n, "compactedRV", rvs));
        free(rvs);
        return;
    }
    if (!strcmp(rt->rest, "stats") && !strcmp(req->method, "GET")) {
        set_json_resp(resp, 200,
                      json_pack("{s:I, s:I, s:I}", "resourceVersion", (json_int_t)hstore_rv(h->st),
                                "compactedRV", (json_int_t)hstore_compacted_rv(h->st), "watches",
                                (json_int_t)h->nwatches));
        return;
    }
    fail(resp, 404, "NotFound", NULL, "the server could not find the requested resource");
}

/*
 * Minimal OpenAPI v3: one document per group-version whose PATCH operations
 * carry x-kubernetes-group-version-kind and the fieldValidation parameter.
 * That is what kubectl (1.27+) checks before `apply`/`create` to rely on
 * server-side field validation instead of downloading schemas; kubectl then
 * computes strategic merge patches from its compiled-in types.
 */
static char *gv_path(const struct reg_resource *r)
{
    return *r->group ? xasprintf("apis/%s/%s", r->group, r->version)
                     : xasprintf("api/%s", r->version);
}

static uint32_t fnv(uint32_t hsh, const char *s)
{
    for (; *s; s++)
        hsh = (hsh ^ (unsigned char)*s) * 16777619u;
    return hsh;
}

static json_t *openapi_root(struct hub *h)
{
    json_t *paths = json_object();
    json_t *hashes = json_object();
    for (size_t i = 0; i < reg_count(h->reg); i++) {
        const struct reg_resource *r = reg_at(h->reg, i);
        char *p = gv_path(r);
        json_int_t hv = json_integer_value(json_object_get(hashes, p));
        uint32_t x = fnv((uint32_t)(hv ? hv : 2166136261u), r->resource);
        json_object_set_new(hashes, p, json_integer(x));
        free(p);
    }
    const char *k;
    json_t *v;
    json_object_foreach(hashes, k, v)
    {
        char *url = xasprintf("/openapi/v3/%s?hash=%08X", k, (unsigned)json_integer_value(v));
        json_object_set_new(paths, k, json_pack("{s:s}", "serverRelativeURL", url));
        free(url);
    }
    json_decref(hashes);
    return json_pack("{s:o}", "paths", paths);
}

static json_t *openapi_gv(struct hub *h, const char *rest)
{
    json_t *paths = json_object();
    for (size_t i = 0; i < reg_count(h->reg); i++) {
        const struct reg_resource *r = reg_at(h->reg, i);
        char *p = gv_path(r);
        bool match = !strcmp(p, rest);
        free(p);
        if (!match)
            continue;
        char *path = r->namespaced
                         ? xasprintf("/%s/namespaces/{namespace}/%s/{name}", rest, r->resource)
                         : xasprintf("/%s/%s/{name}", rest, r->resource);
        json_t *op = json_pack("{s:{s:s, s:s, s:s}, s:[{s:s, s:s, s:{s:s}}], s:s, s:{s:{s:s}}}",
                               "x-kubernetes-group-version-kind", "group", r->group, "version",
                               r->version, "kind", r->kind, "parameters", "name", "fieldValidation",
                               "in", "query", "schema", "type", "string", "operationId",
                               r->resource, "responses", "200", "description", "OK");
        json_object_set_new(paths, path, json_pack("{s:o}", "patch", op));
        free(path);
    }
    if (!json_object_size(paths)) {
        json_decref(paths);
        return NULL;
    }
    return json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:{}}}", "openapi", "3.0.0", "info", "title",
                     "Kubernetes (kueue-ks-devhub)", "version", "v1.32.0", "paths", paths,
                     "components", "schemas");
}

void hub_handle(struct hub *h, const struct hub_req *req, struct hub_resp *resp)
{
    struct route rt;
    memset(resp, 0, sizeof(*resp));
    int rc = route_parse(req->path, &rt);
    if (rc || rt.kind == ROUTE_NOT_FOUND) {
        fail(resp, 404, "NotFound", NULL, "the server could not find the requested resource");
        goto out;
    }
    if (rt.kind != ROUTE_RESOURCE && rt.kind != ROUTE_ADMIN && strcmp(req->method, "GET") &&
        strcmp(req->method, "HEAD")) {
        fail(resp, 405, "MethodNotAllowed", NULL,
             "the server does not allow this method on the requested resource");
        goto out;
    }
    json_t *doc = NULL;
    switch (rt.kind) {
    case ROUTE_VERSION:
        handle_version(resp);
        break;
    case ROUTE_HEALTH:
        resp->code = 200;
        resp->body = xstrdup("ok");
        resp->content_type = "text/plain; charset=utf-8";
        break;
    case ROUTE_API:
        set_json_resp(resp, 200, reg_doc_api(h->reg));
        break;
    case ROUTE_APIS:
        set_json_resp(resp, 200, reg_doc_apis(h->reg));
        break;
    case ROUTE_GROUP:
        doc = reg_doc_group(h->reg, rt.group);
        if (doc)
            set_json_resp(resp, 200, doc);
        else
            fail(resp, 404, "NotFound", NULL, "the server could not find the requested resource");
        break;
    case ROUTE_GROUP_VERSION:
        if (!*rt.group && strcmp(req->path, "/api/v1") && strncmp(req->path, "/api/", 5) == 0 &&
            strcmp(rt.version, "v1")) {
            fail(resp, 404, "NotFound", NULL, "the server could not find the requested resource");
            break;
        }
        doc = reg_doc_resources(h->reg, rt.group, rt.version);
        if (doc)
            set_json_resp(resp, 200, doc);
        else
            fail(resp, 404, "NotFound", NULL, "the server could not find the requested resource");
        break;
    case ROUTE_OPENAPI_V3:
        doc = *rt.rest ? openapi_gv(h, rt.rest) : openapi_root(h);
        if (doc)
            set_json_resp(resp, 200, doc);
        else
            fail(resp, 404, "NotFound", NULL, "the server could not find the requested resource");
        break;
    case ROUTE_OPENAPI_V2:
        fail(resp, 404, "NotFound", NULL, "the server could not find the requested resource");
        break;
    case ROUTE_ADMIN:
        handle_admin(h, &rt, req, resp);
        break;
    case ROUTE_RESOURCE:
        handle_resource(h, &rt, req, resp);
        break;
    default:
        fail(resp, 404, "NotFound", NULL, "the server could not find the requested resource");
        break;
    }
out:
    if (resp->code >= 500 || (h->lg && log_v_enabled(h->lg, 3)))
        log_info(h->lg, "request", "method", req->method, "path", req->path, "code",
                 LOG_INT(resp->code), "user", req->user);
    (void)is_write;
}

int hub_apply_object(struct hub *h, json_t *obj, struct err *e)
{
    const char *av = jx_field_str(obj, "apiVersion");
    const char *kind = jx_field_str(obj, "kind");
    char group[256] = "", version[256] = "";
    const char *slash = strchr(av, '/');
    if (slash) {
        snprintf(group, sizeof(group), "%.*s", (int)(slash - av), av);
        snprintf(version, sizeof(version), "%s", slash + 1);
    } else {
        snprintf(version, sizeof(version), "%s", av);
    }
    const struct reg_resource *r = NULL;
    for (size_t i = 0; i < reg_count(h->reg); i++) {
        const struct reg_resource *c = reg_at(h->reg, i);
        if (!strcmp(c->group, group) && !strcmp(c->version, version) && !strcmp(c->kind, kind))
            r = c;
    }
    if (!r)
        return err_set(e, -ENOENT, "no resource of kind %s in %s is served", kind, av);
    const char *name = mstr(obj, "name");
    const char *ns = r->namespaced ? mstr(obj, "namespace") : "";
    if (r->namespaced && !*ns)
        ns = "default";
    char *key = make_key(r, ns, name);
    json_t *cur = NULL;
    struct hub_resp resp = {0};
    json_t *copy = jx_deep_copy(obj);
    if (hstore_get(h->st, key, &cur, NULL) == 0) {
        json_object_set(meta(copy), "resourceVersion",
                        json_object_get(meta(cur), "resourceVersion"));
        do_update(h, r, key, cur, copy, WRITE_MAIN, false, &resp);
        if (resp.code == 200 && r->has_status && json_object_get(obj, "status") && !is_crd_res(r)) {
            json_t *stored = json_loads(resp.body, 0, NULL);
            hub_resp_release(&resp);
            do_update(h, r, key, stored, copy, WRITE_STATUS, false, &resp);
            json_decref(stored);
        }
    } else {
        do_create(h, r, ns, copy, false, &resp);
        if (resp.code == 201 && r->has_status && json_object_get(obj, "status") && !is_crd_res(r)) {
            json_t *stored = json_loads(resp.body, 0, NULL);
            hub_resp_release(&resp);
            json_t *st = jx_deep_copy(stored);
            json_object_set(st, "status", json_object_get(obj, "status"));
            do_update(h, r, key, stored, st, WRITE_STATUS, false, &resp);
            json_decref(st);
            json_decref(stored);
        }
    }
    int ret = 0;
    if (resp.code >= 300) {
        json_t *st = json_loads(resp.body ? resp.body : "{}", 0, NULL);
        ret = err_set(e, -EINVAL, "%s %s: %s", kind, name, jx_field_str(st, "message"));
        json_decref(st);
    }
    hub_resp_release(&resp);
    json_decref(copy);
    json_decref(cur);
    free(key);
    return ret;
}
