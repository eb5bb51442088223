/* keyset: see keyset.h. */
#include "pkg/util/keyset.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/strmap.h"
#include "pkg/util/xalloc.h"

void keyset_init(struct keyset *s, const char *(*key_of)(const void *elem))
{
    memset(s, 0, sizeof *s);
    s->key_of = key_of;
}

void keyset_free(struct keyset *s)
{
    free(s->v);
    s->v = NULL;
    s->cap = s->n = 0;
}

void keyset_free_elems(struct keyset *s, void (*free_elem)(void *elem))
{
    for (size_t i = 0; i < s->cap; i++)
        if (s->v[i])
            free_elem(s->v[i]);
    keyset_free(s);
}

const char *keyset_str_key(const void *elem)
{
    return elem;
}

/* The slot holding `key`, or the free slot where it would go. */
static size_t find_slot(const struct keyset *s, const char *key, uint32_t h)
{
    size_t mask = s->cap - 1;
    size_t i = h & mask;
    while (s->v[i] && strcmp(s->key_of(s->v[i]), key) != 0)
        i = (i + 1) & mask;
    return i;
}

void *keyset_get(const struct keyset *s, const char *key)
{
    if (s->n == 0)
        return NULL;
    return s->v[find_slot(s, key, strmap_hash(key))];
}

static void grow(struct keyset *s)
{
    size_t ncap = s->cap ? s->cap * 2 : 8;
    void **old = s->v;
    size_t ocap = s->cap;
    s->v = xcalloc(ncap, sizeof *s->v);
    s->cap = ncap;
    for (size_t i = 0; i < ocap; i++) {
        if (!old[i])
            continue;
        size_t j = strmap_hash(s->key_of(old[i])) & (ncap - 1);
        while (s->v[j])
            j = (j + 1) & (ncap - 1);
        s->v[j] = old[i];
    }
    free(old);
}

void *keyset_put(struct keyset *s, void *elem)
{
    const char *key = s->key_of(elem);
    uint32_t h = strmap_hash(key);
    size_t i = s->cap ? find_slot(s, key, h) : 0;
    if (s->cap && s->v[i]) { /* a replacement never grows the table */
        void *prev = s->v[i];
        s->v[i] = elem;
        return prev;
    }
    if ((s->n + 1) * 4 > s->cap * 3) { /* load factor <= 3/4 */
        grow(s);
        i = find_slot(s, key, h);
    }
    s->v[i] = elem;
    s->n++;
    return NULL;
}

void *keyset_del(struct keyset *s, const char *key)
{
    if (s->n == 0)
        return NULL;
    size_t mask = s->cap - 1;
    size_t i = find_slot(s, key, strmap_hash(key));
    void *elem = s->v[i];
    if (!elem)
        return NULL;
    s->v[i] = NULL;
    s->n--;
    /* Backward shift: move later elements of the run into the hole when their home slot is
     * not between the hole and where they sit. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; s->v[j]; j = (j + 1) & mask) {
        size_t home = strmap_hash(s->key_of(s->v[j])) & mask;
        bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
        if (movable) {
            s->v[hole] = s->v[j];
            s->v[j] = NULL;
            hole = j;
        }
    }
    return elem;
}

int keyset_foreach(const struct keyset *s, int (*fn)(void *elem, void *ud), void *ud)
{
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->v[i])
            continue;
        int rc = fn(s->v[i], ud);
        if (rc)
            return rc;
    }
    return 0;
}
