/*
 * Fuzz target for pkg/kube/store: arbitrary JSON (as an API server list or
 * watch object could carry) must never crash the store, its indexes, the
 * projection helper or replace().
 *
 * Input: JSON. An array is used as a list for store_replace() (twice, then
 * against an emptied list); any other value is upserted, looked up through
 * every index, and deleted. The input is also read as a list's items from
 * their texts (store_list_add_text, packed as scanned) against the same items
 * as trees: any difference in verdicts, events, objects or index answers traps; and each
 * item built without what the lean projection drops must project as the whole item does.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jpack.h"
#include "pkg/json/jscan.h"
#include "pkg/json/jsplit.h"
#include "pkg/kube/store.h"

static json_t *project(json_t *obj, void *ud)
{
    static const char *const paths[] = {"spec.nodeName", "metadata.labels", "status.a.b", NULL};
    return store_project_fields(obj, paths);
}

static void on_event(enum store_event_type t, json_t *old, json_t *new_obj, void *ud)
{
    size_t *n = ud;
    (*n)++;
}

static void query_all(struct store *s)
{
    static const char *const values[] = {"", "a", "n1", "u1", NULL};
    for (size_t i = 0; values[i]; i++) {
        json_decref(store_by_index(s, "label", values[i], NULL));
        json_decref(store_index_keys(s, "owner", values[i], NULL));
        json_decref(store_by_index(s, "node", values[i], NULL));
    }
    json_decref(store_keys(s));
}

/* ---- a list read from its items' texts against the same items as trees ---- */

struct evlog {
    char *s;
    size_t n;
};

static void log_event(enum store_event_type t, json_t *old, json_t *new_obj, void *ud)
{
    struct evlog *l = ud;
    char *k = store_key_of(new_obj ? new_obj : old, NULL);
    char *d = json_dumps(new_obj ? new_obj : old, JSON_COMPACT | JSON_SORT_KEYS);
    size_t add = strlen(k ? k : "") + strlen(d ? d : "") + 8;
    l->s = realloc(l->s, l->n + add);
    if (!l->s)
        abort();
    l->n += (size_t)snprintf(l->s + l->n, add, "%d %s %s;", (int)t, k ? k : "", d ? d : "");
    free(k);
    free(d);
}

/* A custom index reading inside its declared view: a view or the tree must give the same. */
static void index_node_view(json_t *obj, struct store_values *vals, void *ud)
{
    (void)ud;
    store_values_add(vals,
                     json_string_value(json_object_get(json_object_get(obj, "spec"), "nodeName")));
}

static void add_indexes(struct store *s)
{
    static const char *const view[] = {"spec.nodeName", NULL};
    store_add_index(s, "label", store_index_by_label, "app", NULL);
    store_add_index(s, "owner", store_index_by_owner_uid, NULL, NULL);
    store_add_index(s, "node", store_index_by_field, "spec.nodeName", NULL);
    store_add_index(s, "nodeview", index_node_view, NULL, NULL);
    store_index_view(s, "nodeview", view);
}

static bool same_index(struct store *a, struct store *b, const char *index, const char *v)
{
    json_t *x = store_index_keys(a, index, v, NULL), *y = store_index_keys(b, index, v, NULL);
    bool same = json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return same;
}

/* Every stored object of a is b's, and every index answers the same for a few values and for
 * the values the objects carry. */
static bool same_stores(struct store *a, struct store *b)
{
    json_t *ka = store_keys(a), *kb = store_keys(b);
    bool same = json_array_size(ka) == json_array_size(kb);
    size_t i;
    json_t *k;
    json_array_foreach(ka, i, k)
    {
        const char *key = json_string_value(k);
        json_t *x = store_get(a, key), *y = store_get(b, key);
        if (!same || !x || !y || !json_equal(x, y)) {
            same = false;
            break;
        }
        json_t *md = json_object_get(x, "metadata");
        const char *lab = json_string_value(json_object_get(json_object_get(md, "labels"), "app"));
        const char *node =
            json_string_value(json_object_get(json_object_get(x, "spec"), "nodeName"));
        const char *own = json_string_value(
            json_object_get(json_array_get(json_object_get(md, "ownerReferences"), 0), "uid"));
        same = (!lab || same_index(a, b, "label", lab)) &&
               (!node || (same_index(a, b, "node", node) && same_index(a, b, "nodeview", node))) &&
               (!own || same_index(a, b, "owner", own));
    }
    static const char *const values[] = {"", "a", "n1", "u1", NULL};
    for (size_t v = 0; same && values[v]; v++)
        same = same_index(a, b, "label", values[v]) && same_index(a, b, "owner", values[v]) &&
               same_index(a, b, "node", values[v]);
    json_decref(ka);
    json_decref(kb);
    return same;
}

/* The text built without the store's drops (store_drops) projects as the whole tree `t` does:
 * what the informer's watch events and a lean store's parsed items rely on. */
static void same_lean(const char *text, size_t n, json_t *t, const char *const *drops)
{
    struct jscan_paths *ps = NULL;
    if (jscan_paths_new_drop(NULL, drops, &ps, NULL) < 0)
        __builtin_trap();
    json_t *d = jscan_load_with(text, n, ps, NULL);
    jscan_paths_free(ps);
    if (!d)
        __builtin_trap(); /* jscan_load took it */
    store_item_typed(d, "Pod", "v1");
    json_t *pw = store_project_lean(t, NULL), *pd = store_project_lean(d, NULL);
    char *a = json_dumps(pw, JSON_COMPACT | JSON_ENCODE_ANY);
    char *b = json_dumps(pd, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!a || !b || strcmp(a, b) != 0)
        __builtin_trap();
    free(a);
    free(b);
    json_decref(pw);
    json_decref(pd);
    json_decref(d);
}

/* data as a list's items: each item's text through store_list_add_text, and through
 * jscan_load + store_item_typed + store_list_add (what the informer did before), twice (the
 * second a re-list of the first): the same verdicts, events, objects and index answers. */

/* The items' texts as jsplit hands them over (copies: a text is the callback's only). */
struct spans {
    char **text;
    size_t *len;
    size_t n;
    bool not_object;
};

static int take_span(void *ud, const json_t *list, size_t i, const char *text, size_t n,
                     struct err *e)
{
    struct spans *sp = ud;
    (void)list;
    (void)i;
    (void)e;
    sp->text = realloc(sp->text, (sp->n + 1) * sizeof(*sp->text));
    sp->len = realloc(sp->len, (sp->n + 1) * sizeof(*sp->len));
    if (!sp->text || !sp->len)
        abort();
    sp->text[sp->n] = malloc(n ? n : 1);
    if (!sp->text[sp->n])
        abort();
    memcpy(sp->text[sp->n], text, n);
    sp->len[sp->n++] = n;
    if (!n || text[0] != '{')
        sp->not_object = true;
    return 0;
}

static void spans_free(struct spans *sp)
{
    for (size_t i = 0; i < sp->n; i++)
        free(sp->text[i]);
    free(sp->text);
    free(sp->len);
}

static void text_vs_tree(const uint8_t *data, size_t size, bool lean)
{
    static const char head[] = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"items\":";
    size_t n = sizeof head - 1 + size + 1;
    char *text = malloc(n);
    if (!text)
        abort();
    memcpy(text, head, sizeof head - 1);
    memcpy(text + sizeof head - 1, data, size);
    text[n - 1] = '}';
    struct spans sp = {0};
    struct jsplit *js = jsplit_new(NULL, n, take_span, &sp);
    json_t *rest = jsplit_feed(js, text, n, NULL) == 0 ? jsplit_finish(js, NULL) : NULL;
    jsplit_free(js);
    json_decref(rest);
    if (!rest || !sp.n || sp.not_object) { /* as before: only lists of objects */
        spans_free(&sp);
        free(text);
        return;
    }
    struct jpack_tab *tab = jpack_tab_new();
    struct store_opts o = {.project = lean ? store_project_lean : NULL, .packed = true, .tab = tab};
    struct store *a = store_new(&o), *b = store_new(&o);
    add_indexes(a);
    add_indexes(b);
    for (int round = 0; round < 2; round++) {
        struct store_list *la = store_list_new(a), *lb = store_list_new(b);
        for (size_t i = 0; i < sp.n; i++) {
            const char *it = sp.text[i];
            size_t len = sp.len[i];
            int ra = store_list_add_text(la, it, len, "Pod", "v1", NULL);
            json_t *t = jscan_load(it, len, NULL);
            store_item_typed(t, "Pod", "v1");
            int rb = t ? store_list_add(lb, t, NULL) : -EBADMSG;
            if (t && round == 0)
                same_lean(it, len, t, store_drops(a));
            json_decref(t);
            if (ra != rb)
                __builtin_trap();
        }
        struct evlog ea = {0}, eb = {0};
        int ca = store_list_commit(la, log_event, &ea, NULL);
        int cb = store_list_commit(lb, log_event, &eb, NULL);
        store_list_free(la);
        store_list_free(lb);
        if (ca != cb || ea.n != eb.n || (ea.n && memcmp(ea.s, eb.s, ea.n) != 0))
            __builtin_trap();
        free(ea.s);
        free(eb.s);
        if (!same_stores(a, b))
            __builtin_trap();
    }
    store_free(a);
    store_free(b);
    if (jpack_tab_len(tab) != 0)
        __builtin_trap(); /* every reference the texts' packing took went back */
    jpack_tab_free(tab);
    spans_free(&sp);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    text_vs_tree(data, size, true);
    text_vs_tree(data, size, false);
    json_error_t jerr;
    json_t *in = json_loadb((const char *)data, size, JSON_DECODE_ANY, &jerr);
    if (!in)
        return 0;
    for (int mode = 0; mode < 4; mode++) { /* projected or not, packed or not */
        bool packed = mode & 2;
        struct jpack_tab *tab = packed ? jpack_tab_new() : NULL;
        struct store_opts o = {.project = mode & 1 ? project : NULL, .packed = packed, .tab = tab};
        struct store *s = store_new(&o);
        store_add_index(s, "label", store_index_by_label, "app", NULL);
        store_add_index(s, "owner", store_index_by_owner_uid, NULL, NULL);
        store_add_index(s, "node", store_index_by_field, "spec.nodeName", NULL);
        size_t events = 0;
        if (json_is_array(in)) {
            if (packed) { /* watch events first (packed at their trim), then lists over them */
                for (size_t i = 0; i < json_array_size(in); i++)
                    store_upsert(s, json_array_get(in, i), NULL, NULL, NULL);
                store_trim(s, false);
                store_trim(s, false);
                query_all(s);
            }
            store_replace(s, in, on_event, &events, NULL);
            store_replace(s, in, on_event, &events, NULL);
            query_all(s);
            json_t *empty = json_array();
            store_replace(s, empty, on_event, &events, NULL);
            json_decref(empty);
        } else {
            json_t *stored = NULL, *old = NULL;
            if (store_upsert(s, in, &stored, &old, NULL) == 0) {
                json_decref(stored);
                json_decref(old);
                store_trim(s, true);
                store_upsert(s, in, NULL, NULL, NULL);
                query_all(s);
                store_trim(s, true);
                query_all(s);
                store_delete(s, in, &old, NULL);
                json_decref(old);
            }
            char *key = store_key_of(in, NULL);
            free(key);
        }
        if (store_len(s) != 0 && json_is_array(in))
            abort(); /* replace with an empty list must empty the store */
        store_free(s);
        if (tab && jpack_tab_len(tab) != 0)
            abort(); /* every interned string goes back with its objects */
        jpack_tab_free(tab);
    }
    json_decref(in);
    return 0;
}
