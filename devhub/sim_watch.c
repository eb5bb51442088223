/* sim_watch: a watch-maintained copy of one hub collection. */
#include "devhub/sim_watch.h"

#include <string.h>

#include "devhub/sim_api.h"
#include "pkg/json/jsonx.h"
#include "pkg/util/buf.h"
#include "pkg/util/xalloc.h"

#define LINE_MAX_BYTES (64u << 20)

struct simwatch {
    struct hub *hub;
    char *path;
    char *selector;
    struct hub_watch *watch; /* NULL: start one on the next sync */
    struct buf line;         /* a partly read event line */
    json_t *objs;            /* key -> object */
};

struct simwatch *simwatch_new(struct hub *h, const char *path, const char *label_selector)
{
    struct simwatch *w = xcalloc(1, sizeof(*w));
    w->hub = h;
    w->path = xstrdup(path);
    w->selector = label_selector ? xstrdup(label_selector) : NULL;
    buf_init(&w->line, LINE_MAX_BYTES);
    w->objs = json_object();
    return w;
}

void simwatch_free(struct simwatch *w)
{
    if (!w)
        return;
    hub_watch_release(w->watch);
    buf_free(&w->line);
    json_decref(w->objs);
    free(w->path);
    free(w->selector);
    free(w);
}

json_t *simwatch_objs(const struct simwatch *w)
{
    return w->objs;
}

void simwatch_put(struct simwatch *w, const char *key, json_t *obj)
{
    json_object_set(w->objs, key, obj);
}

static void stop(struct simwatch *w)
{
    hub_watch_release(w->watch);
    w->watch = NULL;
    buf_reset(&w->line);
}

/* One event line. false when the watch must be restarted (ERROR). */
static bool apply(struct simwatch *w, const char *text, bool quiet, simwatch_cb cb, void *ud)
{
    json_t *ev = json_loads(text, 0, NULL);
    const char *type = jx_str(ev, "type", "");
    json_t *obj = jx_obj(ev, "object");
    bool ok = true;
    if (!strcmp(type, "ERROR")) {
        ok = false;
    } else if (obj &&
               (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED") || !strcmp(type, "DELETED"))) {
        char *key = jx_obj_key(obj);
        if (key) {
            json_t *old = json_incref(json_object_get(w->objs, key));
            bool del = !strcmp(type, "DELETED");
            if (del)
                json_object_del(w->objs, key);
            else
                json_object_set(w->objs, key, obj);
            if (cb && !quiet && (old || !del))
                cb(key, old, del ? NULL : obj, ud);
            json_decref(old);
        }
        free(key);
    }
    json_decref(ev);
    return ok;
}

int simwatch_sync(struct simwatch *w, simwatch_cb cb, void *userdata)
{
    bool fresh = false;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!w->watch) {
            json_object_clear(w->objs);
            int code = simapi_watch(w->hub, w->path, w->selector, &w->watch);
            if (code != 200)
                return code ? code : 500;
            fresh = true;
        }
        char chunk[65536];
        ssize_t n;
        bool restart = false;
        while (!restart && (n = hub_watch_read(w->watch, chunk, sizeof(chunk))) > 0) {
            if (buf_append(&w->line, chunk, (size_t)n)) {
                restart = true;
                break;
            }
            size_t start = 0;
            char *d = w->line.data;
            for (size_t i = 0; i < w->line.len; i++) {
                if (d[i] != '\n')
                    continue;
                d[i] = '\0';
                if (i > start && !apply(w, d + start, fresh, cb, userdata)) {
                    restart = true;
                    break;
                }
                start = i + 1;
            }
            if (restart)
                break;
            buf_consume(&w->line, start);
        }
        if (!restart && n == 0)
            return fresh ? 1 : 0;
        stop(w); /* ended or failed: rebuild from a new watch */
    }
    /* A watch that ends at once twice in a row: serve what we have, retry next time. */
    return 1;
}
