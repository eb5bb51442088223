/* strmap: see strmap.h. */
#include "pkg/util/strmap.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/xalloc.h"

/* FNV-1a: short keys (names), good enough spread for linear probing. */
uint32_t strmap_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

void strmap_init(struct strmap *m)
{
    memset(m, 0, sizeof *m);
}

void strmap_init_borrowed(struct strmap *m)
{
    strmap_init(m);
    m->borrowed = true;
}

void strmap_free(struct strmap *m, void (*free_val)(void *))
{
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->v[i].key)
            continue;
        if (!m->borrowed)
            free(m->v[i].key);
        if (free_val)
            free_val(m->v[i].val);
    }
    free(m->v);
    bool borrowed = m->borrowed;
    memset(m, 0, sizeof *m);
    m->borrowed = borrowed;
}

/* The slot holding `key`, or the free slot where it would go. */
static size_t find_slot(const struct strmap *m, const char *key, uint32_t h)
{
    size_t mask = m->cap - 1;
    size_t i = h & mask;
    while (m->v[i].key && (m->v[i].hash != h || strcmp(m->v[i].key, key) != 0))
        i = (i + 1) & mask;
    return i;
}

void *strmap_get(const struct strmap *m, const char *key)
{
    if (m->n == 0)
        return NULL;
    size_t i = find_slot(m, key, strmap_hash(key));
    return m->v[i].key ? m->v[i].val : NULL;
}

static void grow(struct strmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 8;
    struct strmap_ent *old = m->v;
    size_t ocap = m->cap;
    m->v = xcalloc(ncap, sizeof *m->v);
    m->cap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].key)
            m->v[find_slot(m, old[i].key, old[i].hash)] = old[i];
    free(old);
}

void *strmap_put(struct strmap *m, const char *key, void *val)
{
    uint32_t h = strmap_hash(key);
    size_t i = m->cap ? find_slot(m, key, h) : 0;
    if (m->cap && m->v[i].key) { /* a replacement never grows the table */
        void *prev = m->v[i].val;
        m->v[i].val = val;
        if (m->borrowed)
            m->v[i].key = (char *)key; /* the old one may go with its value */
        return prev;
    }
    if ((m->n + 1) * 4 > m->cap * 3) { /* load factor <= 3/4 */
        grow(m);
        i = find_slot(m, key, h);
    }
    m->v[i] =
        (struct strmap_ent){.key = m->borrowed ? (char *)key : xstrdup(key), .hash = h, .val = val};
    m->n++;
    return NULL;
}

void *strmap_del(struct strmap *m, const char *key)
{
    if (m->n == 0)
        return NULL;
    size_t mask = m->cap - 1;
    size_t i = find_slot(m, key, strmap_hash(key));
    if (!m->v[i].key)
        return NULL;
    void *val = m->v[i].val;
    if (!m->borrowed)
        free(m->v[i].key);
    m->v[i].key = NULL;
    m->n--;
    /* Backward shift: move later entries of the run into the hole when their
     * home slot is not between the hole and where they sit. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->v[j].key; j = (j + 1) & mask) {
        size_t home = m->v[j].hash & mask;
        bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
        if (movable) {
            m->v[hole] = m->v[j];
            m->v[j].key = NULL;
            hole = j;
        }
    }
    return val;
}

int strmap_foreach(const struct strmap *m, int (*fn)(const char *key, void *val, void *ud),
                   void *ud)
{
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->v[i].key)
            continue;
        int rc = fn(m->v[i].key, m->v[i].val, ud);
        if (rc)
            return rc;
    }
    return 0;
}
