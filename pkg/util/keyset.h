/*
 * keyset: a hash set of pointers to elements that carry their own C-string key (open
 * addressing, linear probing, backward-shift deletion), looked up by that key.
 *
 * Why: a store's key map (pkg/kube/store) holds one entry per cached object, and its key lives
 * inside the entry. A strmap slot (key, hash, value: 24 bytes, about 48 per object at its
 * load) repeats what the entry holds; a keyset slot is the element's pointer alone (8 bytes,
 * about 16 per object), the key read through key_of() and the hash computed again when the
 * table grows or an element moves back after a deletion.
 *
 * Elements are the caller's (NULL is not one); an element's key must not change while it is
 * in the set. The order of keyset_foreach() is that of a strmap filled the same way (the same
 * hash, probing and growth). Not thread-safe.
 */
#ifndef KKS_UTIL_KEYSET_H
#define KKS_UTIL_KEYSET_H

#include <stddef.h>

struct keyset {
    void **v; /* cap slots (a power of two), NULL = free; NULL while empty */
    size_t cap, n;
    const char *(*key_of)(const void *elem);
};

/* An empty set whose elements' keys key_of() reads. */
void keyset_init(struct keyset *s, const char *(*key_of)(const void *elem));
/* Free the table (not the elements). The set is empty afterwards and can be reused. */
void keyset_free(struct keyset *s);
/* Call free_elem on every element, then keyset_free(). */
void keyset_free_elems(struct keyset *s, void (*free_elem)(void *elem));
/* A key_of for elements that begin with their key: a C string, or a record whose first bytes
 * are the key and its NUL. */
const char *keyset_str_key(const void *elem);
/* The element whose key is `key`, or NULL. */
void *keyset_get(const struct keyset *s, const char *key);
/* Add elem (not NULL), replacing the element with the same key: returns that one, or NULL. */
void *keyset_put(struct keyset *s, void *elem);
/* Remove the element whose key is `key`: returns it, or NULL when absent. */
void *keyset_del(struct keyset *s, const char *key);
static inline size_t keyset_len(const struct keyset *s)
{
    return s->n;
}
/* Call fn on every element until it returns non-zero, which is returned. The set must not be
 * modified meanwhile. */
int keyset_foreach(const struct keyset *s, int (*fn)(void *elem, void *ud), void *ud);

#endif
