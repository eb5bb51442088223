/* slab: size-class blocks for short-lived JSON trees, apart from malloc's heap (see slab.h). */
#include "pkg/util/slab.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pkg/util/xalloc.h"

#define CLASS_STEP 16
#define CLASSES    (SLAB_MAX / CLASS_STEP)
/* Long-lived blocks (slab_alloc_long) have classes of their own, CLASSES above the others:
 * their slabs never hold a short-lived block. */
#define ALL_CLASSES (2 * CLASSES)
#define NONE        UINT32_MAX

/*
 * Where a slab is. CUR -> FULL when its last block is handed out and another is asked for;
 * FULL -> PARTIAL at its first release; PARTIAL -> CUR when its class needs blocks;
 * FULL or PARTIAL -> EMPTY (kept) or GIVEN (madvised) at its last release; EMPTY or GIVEN ->
 * CUR of any class. A CUR slab whose blocks are all released stays CUR.
 */
enum where {
    W_CUR = 1, /* its class's slab being filled: cur[cls] */
    W_PARTIAL, /* has free blocks, on partial[cls] */
    W_FULL,    /* no free block, on no list */
    W_EMPTY,   /* no block in use, pages kept: on the empty stack */
    W_GIVEN,   /* no block in use, pages given back: on the given stack */
};

struct slab {
    char *mem;
    uint64_t *map; /* a bit per block, set while handed out; NULL until carved */
    void *free;    /* released blocks, linked through their first word */
    uint32_t used; /* blocks handed out and not released */
    uint32_t bump; /* blocks [bump, cap) were never handed out */
    uint32_t cap;
    uint32_t prev, next; /* partial list (both) or a stack (next) */
    uint32_t inv;        /* ceil(2^32 / size): a block's index is (offset * inv) >> 32 */
    uint16_t size;
    uint8_t cls;
    uint8_t where;
};

/* A bit per block of a slab of the smallest class: set while the block is handed out. */
#define MAP_WORDS (SLAB_BYTES / CLASS_STEP / 64)

struct slab_pool {
    char *base;
    size_t reserved;
    uint32_t nslabs, carved;
    struct slab *slabs; /* nslabs entries, mapped: only the carved ones are touched */
    size_t slabs_bytes;
    uint64_t (*maps)[MAP_WORDS]; /* per slab, mapped alike */
    size_t maps_bytes;
    struct slab *cur[ALL_CLASSES];
    uint32_t partial[ALL_CLASSES];
    uint32_t empty, given; /* stacks */
    unsigned n_empty, keep_empty;
    size_t fallbacks, returns;
};

static void *map_range(size_t n)
{
    /* NORESERVE: address space only; the kernel commits a page when it is first touched. */
    void *m =
        mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

int slab_pool_new(size_t reserve, unsigned keep_empty, struct slab_pool **out)
{
    *out = NULL;
    if (!reserve)
        reserve = SLAB_RESERVE_DEFAULT;
    size_t n = reserve >> SLAB_SHIFT;
    if (n == 0)
        n = 1;
    if (n > NONE - 1)
        n = NONE - 1;
    reserve = n << SLAB_SHIFT;
    size_t meta = n * sizeof(struct slab), maps = n * sizeof(uint64_t[MAP_WORDS]);
    char *base = map_range(reserve);
    void *slabs = base ? map_range(meta) : NULL;
    void *bits = slabs ? map_range(maps) : NULL;
    if (!bits) {
        int rc = -errno;
        if (slabs)
            munmap(slabs, meta);
        if (base)
            munmap(base, reserve);
        return rc;
    }
    /* Huge pages would keep a 2 MB page resident for one live block of it, and undo the
     * slabs given back (THP "always"). Advice only: without it the pool still works. */
    madvise(base, reserve, MADV_NOHUGEPAGE);
    struct slab_pool *p = xcalloc(1, sizeof *p);
    p->base = base;
    p->reserved = reserve;
    p->nslabs = (uint32_t)n;
    p->slabs = slabs;
    p->slabs_bytes = meta;
    p->maps = bits;
    p->maps_bytes = maps;
    for (int c = 0; c < ALL_CLASSES; c++)
        p->partial[c] = NONE;
    p->empty = p->given = NONE;
    p->keep_empty = keep_empty;
    *out = p;
    return 0;
}

void slab_pool_free(struct slab_pool *p)
{
    if (!p)
        return;
    munmap(p->base, p->reserved);
    munmap(p->slabs, p->slabs_bytes);
    munmap(p->maps, p->maps_bytes);
    free(p);
}

static uint32_t idx_of(const struct slab_pool *p, const struct slab *s)
{
    return (uint32_t)(s - p->slabs);
}

static struct slab *pop(struct slab_pool *p, uint32_t *stack)
{
    if (*stack == NONE)
        return NULL;
    struct slab *s = &p->slabs[*stack];
    *stack = s->next;
    return s;
}

static void push(struct slab_pool *p, uint32_t *stack, struct slab *s)
{
    s->next = *stack;
    *stack = idx_of(p, s);
}

static void partial_add(struct slab_pool *p, struct slab *s)
{
    uint32_t i = idx_of(p, s);
    s->prev = NONE;
    s->next = p->partial[s->cls];
    if (s->next != NONE)
        p->slabs[s->next].prev = i;
    p->partial[s->cls] = i;
    s->where = W_PARTIAL;
}

static void partial_del(struct slab_pool *p, struct slab *s)
{
    if (s->prev != NONE)
        p->slabs[s->prev].next = s->next;
    else
        p->partial[s->cls] = s->next;
    if (s->next != NONE)
        p->slabs[s->next].prev = s->prev;
}

/* An empty slab's pages go back to the system: onto the given stack. */
static void give(struct slab_pool *p, struct slab *s)
{
    /* Private anonymous pages read as zero afterwards; nothing in them is kept. */
    madvise(s->mem, SLAB_BYTES, MADV_DONTNEED);
    p->returns++;
    s->where = W_GIVEN;
    push(p, &p->given, s);
}

/* An empty slab, kept or given back. */
static void retire(struct slab_pool *p, struct slab *s)
{
    /* free and bump are reset when the slab is taken again (alloc_slow) */
    if (p->n_empty < p->keep_empty) {
        s->where = W_EMPTY;
        p->n_empty++;
        push(p, &p->empty, s);
        return;
    }
    give(p, s);
}

size_t slab_give_back(struct slab_pool *p)
{
    size_t n = 0;
    struct slab *s;
    while ((s = pop(p, &p->empty))) {
        p->n_empty--;
        give(p, s);
        n++;
    }
    for (int c = 0; c < ALL_CLASSES; c++) {
        s = p->cur[c];
        if (!s || s->used || !s->bump) /* free blocks are below bump */
            continue;
        /* An unused slab being filled: its pages go too, and it starts afresh as a taken
         * slab does (its bits are all clear: none in use) */
        madvise(s->mem, SLAB_BYTES, MADV_DONTNEED);
        p->returns++;
        s->free = NULL;
        s->bump = 0;
        n++;
    }
    return n;
}

static struct slab *take_slab(struct slab_pool *p)
{
    struct slab *s = pop(p, &p->empty);
    if (s) {
        p->n_empty--;
        return s;
    }
    s = pop(p, &p->given);
    if (s)
        return s;
    if (p->carved == p->nslabs)
        return NULL;
    s = &p->slabs[p->carved];
    s->mem = p->base + ((size_t)p->carved << SLAB_SHIFT);
    s->map = p->maps[p->carved];
    p->carved++;
    return s;
}

/* A block of `s` (which has one free): its bit is set. */
static inline void *take_block(struct slab *s)
{
    char *b = s->free;
    uint32_t i;
    if (b) {
        s->free = *(void **)b;
        /* The next take reads that block's link: fetch it now. After a tree is freed its
         * blocks are cold, and the link's load was most of this function's time (perf). */
        __builtin_prefetch(s->free, 1);
        i = (uint32_t)(((uint64_t)(b - s->mem) * s->inv) >> 32);
    } else {
        i = s->bump++;
        b = s->mem + (size_t)i * s->size;
    }
    s->map[i / 64] |= (uint64_t)1 << (i % 64);
    s->used++;
    return b;
}

static void *alloc_slow(struct slab_pool *p, unsigned c, size_t n)
{
    struct slab *s = p->cur[c];
    if (s)
        s->where = W_FULL; /* cur has no free block left: the fast path found none */
    s = p->partial[c] != NONE ? &p->slabs[p->partial[c]] : NULL;
    if (s) {
        partial_del(p, s);
    } else {
        s = take_slab(p);
        if (!s) {
            p->cur[c] = NULL;
            p->fallbacks++;
            return xmalloc(n);
        }
        s->cls = (uint8_t)c;
        s->size = (uint16_t)((c % CLASSES + 1) * CLASS_STEP);
        s->inv = (uint32_t)((((uint64_t)1 << 32) + s->size - 1) / s->size);
        s->cap = (uint32_t)(SLAB_BYTES / s->size);
        s->used = 0;
        s->bump = 0;
        s->free = NULL;
    }
    s->where = W_CUR;
    p->cur[c] = s;
    return take_block(s);
}

void *slab_alloc(struct slab_pool *p, size_t n)
{
    if (n > SLAB_MAX)
        return xmalloc(n);
    unsigned c = n ? (unsigned)((n - 1) / CLASS_STEP) : 0;
    struct slab *s = p->cur[c];
    if (s && (s->free || s->bump < s->cap))
        return take_block(s);
    return alloc_slow(p, c, n);
}

void *slab_alloc_long(struct slab_pool *p, size_t n)
{
    if (n > SLAB_MAX)
        return xmalloc(n);
    unsigned c = CLASSES + (n ? (unsigned)((n - 1) / CLASS_STEP) : 0);
    struct slab *s = p->cur[c];
    if (s && (s->free || s->bump < s->cap))
        return take_block(s);
    return alloc_slow(p, c, n);
}

static void bad_release(void)
{
    static const char msg[] = "fatal: slab: a block released twice, or not a block's start\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    abort();
}

void slab_release(struct slab_pool *p, void *block)
{
    uintptr_t off = (uintptr_t)block - (uintptr_t)p->base; /* NULL wraps above the range */
    if (off >= p->reserved) {
        free(block);
        return;
    }
    struct slab *s = &p->slabs[off >> SLAB_SHIFT];
    uint32_t in = (uint32_t)(off & (SLAB_BYTES - 1));
    /* A block not handed out has its bit clear: twice, never, or in an empty slab (whose
     * size may be stale); a slab never cut has no map. */
    uint32_t i = (uint32_t)(((uint64_t)in * s->inv) >> 32);
    uint64_t bit = (uint64_t)1 << (i % 64);
    uint64_t *w = s->map ? &s->map[i / 64] : NULL;
    if (!w || (size_t)i * s->size != in || !(*w & bit))
        bad_release();
    *w &= ~bit;
    *(void **)block = s->free;
    s->free = block;
    s->used--;
    if (s->where == W_FULL) {
        /* Its first free block: it can be filled again, or it is empty already. */
        if (s->used)
            partial_add(p, s);
        else
            retire(p, s);
    } else if (s->used == 0 && s->where == W_PARTIAL) {
        partial_del(p, s);
        retire(p, s);
    }
}

void slab_stats(const struct slab_pool *p, struct slab_stats *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < p->carved; i++) {
        const struct slab *s = &p->slabs[i];
        switch (s->where) {
        case W_EMPTY:
            out->slabs_empty++;
            break;
        case W_GIVEN:
            out->slabs_given++;
            break;
        default:
            out->slabs_live++;
            out->blocks += s->used;
            out->bytes += (size_t)s->used * s->size;
            break;
        }
    }
    out->slabs_carved = p->carved;
    out->fallbacks = p->fallbacks;
    out->returns = p->returns;
}

/* ---- invariants (tests) ---------------------------------------------------------------- */

static int fail(const char **why, const char *what)
{
    if (why)
        *why = what;
    return -EFAULT;
}

/* A live slab's blocks: free list + handed out + never used = all of them, the bits agree. */
static int check_blocks(const struct slab_pool *p, const struct slab *s, const char **why)
{
    if (s->size != (s->cls % CLASSES + 1) * CLASS_STEP || s->cap != SLAB_BYTES / s->size ||
        s->bump > s->cap)
        return fail(why, "a live slab's class, capacity or bump is wrong");
    const uint64_t *map = s->map;
    if (map != p->maps[idx_of(p, s)])
        return fail(why, "a slab's map is another's");
    size_t set = 0;
    for (size_t w = 0; w < MAP_WORDS; w++)
        set += (size_t)__builtin_popcountll(map[w]);
    if (set != s->used)
        return fail(why, "a slab's bits do not count its blocks in use");
    size_t nfree = 0;
    for (const char *b = s->free; b; b = *(char *const *)b) {
        size_t in = (size_t)(b - s->mem);
        if (b < s->mem || in >= SLAB_BYTES || in % s->size || in / s->size >= s->bump)
            return fail(why, "a free block is not one of its slab's handed-out blocks");
        if (map[in / s->size / 64] & ((uint64_t)1 << (in / s->size % 64)))
            return fail(why, "a free block's bit is set");
        if (++nfree > s->cap)
            return fail(why, "a slab's free list loops");
    }
    if (nfree + s->used + (s->cap - s->bump) != s->cap)
        return fail(why, "free + used + never used is not a slab's capacity");
    return 0;
}

int slab_check(const struct slab_pool *p, const char **why)
{
    unsigned char *seen = xcalloc(p->carved ? p->carved : 1, 1);
    int rc = 0;
    for (unsigned c = 0; c < ALL_CLASSES && !rc; c++) {
        uint32_t prev = NONE, n = 0;
        for (uint32_t i = p->partial[c]; i != NONE && !rc; i = p->slabs[i].next) {
            const struct slab *s = &p->slabs[i];
            if (i >= p->carved || ++n > p->carved || s->where != W_PARTIAL || s->cls != c ||
                s->prev != prev || !s->free || !s->used)
                rc = fail(why, "a partial list is broken");
            else
                seen[i]++;
            prev = i;
        }
        const struct slab *s = p->cur[c];
        if (!rc && s) {
            if (s->where != W_CUR || s->cls != c)
                rc = fail(why, "a class's current slab is not marked so");
            else
                seen[idx_of(p, s)]++;
        }
    }
    const uint32_t *stacks[] = {&p->empty, &p->given};
    const uint8_t wheres[] = {W_EMPTY, W_GIVEN};
    for (int k = 0; k < 2 && !rc; k++) {
        uint32_t n = 0;
        for (uint32_t i = *stacks[k]; i != NONE && !rc; i = p->slabs[i].next) {
            if (i >= p->carved || ++n > p->carved || p->slabs[i].where != wheres[k])
                rc = fail(why, "a stack of empty slabs is broken");
            else
                seen[i]++;
        }
        if (!rc && k == 0 && n != p->n_empty)
            rc = fail(why, "the count of kept empty slabs is wrong");
    }
    for (uint32_t i = 0; i < p->carved && !rc; i++) {
        const struct slab *s = &p->slabs[i];
        if (seen[i] != (s->where == W_FULL ? 0 : 1)) {
            rc = fail(why, "a slab is on no list or on two");
        } else if (s->where == W_EMPTY || s->where == W_GIVEN) {
            for (size_t w = 0; w < MAP_WORDS && !rc; w++)
                if (s->map[w])
                    rc = fail(why, "an empty slab has a block's bit set");
        } else {
            if (s->where == W_FULL && (s->free || s->bump != s->cap))
                rc = fail(why, "a full slab has a free block");
            if (!rc)
                rc = check_blocks(p, s, why);
        }
    }
    free(seen);
    return rc;
}
