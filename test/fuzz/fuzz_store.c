/*
 * Fuzz target for pkg/kube/store: arbitrary JSON (as an API server list or
 * watch object could carry) must never crash the store, its indexes, the
 * projection helper or replace().
 *
 * Input: JSON. An array is used as a list for store_replace() (twice, then
 * against an emptied list); any other value is upserted, looked up through
 * every index, and deleted.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "pkg/json/jpack.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
