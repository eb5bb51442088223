/*
 * strmap: a hash map from C strings to pointers (open addressing, linear
 * probing, backward-shift deletion: no tombstones). Keys are copied (or
 * borrowed: strmap_init_borrowed); values
 * are borrowed pointers the caller owns (NULL is not a valid value: it means
 * "absent" in the answers). Lookups, inserts and deletes are O(1) on average.
 * Not thread-safe.
 */
#ifndef KKS_UTIL_STRMAP_H
#define KKS_UTIL_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strmap_ent {
    char *key; /* owned (a borrowed map's: the caller's); NULL = free slot */
    uint32_t hash;
    void *val;
};

struct strmap {
    struct strmap_ent *v; /* cap slots (a power of two), or NULL while empty */
    size_t cap, n;
    bool borrowed; /* the keys are the caller's (strmap_init_borrowed) */
};

/* The hash of a key (FNV-1a), which places it in the table (pkg/util/keyset uses it too). */
uint32_t strmap_hash(const char *s);
/* An empty map (a zeroed struct is one too). */
void strmap_init(struct strmap *m);
/* An empty map that does not copy its keys: each key must stay valid and unchanged while it is
 * in the map (a key stored inside its value, say); strmap_put() of a present key takes the new
 * pointer, so the old one may go after it. strmap_del() and strmap_free() free no key. */
void strmap_init_borrowed(struct strmap *m);
/* Free the keys and the table; free_val (may be NULL) is called on each value. */
void strmap_free(struct strmap *m, void (*free_val)(void *));
/* The value under `key`, or NULL. */
void *strmap_get(const struct strmap *m, const char *key);
/* Set `key` (copied) to `val` (not NULL). Returns the value it replaced, or NULL. */
void *strmap_put(struct strmap *m, const char *key, void *val);
/* Remove `key`. Returns its value, or NULL when absent. */
void *strmap_del(struct strmap *m, const char *key);
static inline size_t strmap_len(const struct strmap *m)
{
    return m->n;
}
/* Call fn on every entry (unspecified order) until it returns non-zero, which
 * is returned. The map must not be modified meanwhile. */
int strmap_foreach(const struct strmap *m, int (*fn)(const char *key, void *val, void *ud),
                   void *ud);

#endif
