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
#define NONE       UINT32_MAX

/* Where a slab is: the states a slab moves through (see the transitions below). */
enum where {
    W_CUR = 1, /* its class's slab being filled: cur[cls] */
    W_PARTIAL, /* has free blocks, on partial[cls] */
    W_FULL,    /* no free block, on no list */
    W_EMPTY,   /* no block in use, pages kept: on the empty stack */
    W_GIVEN,   /* no block in use, pages given back: on the given stack */
};

struct slab {
    char *mem;
    void *free;    /* released blocks, linked through their first word */
    uint32_t used; /* blocks handed out and not released */
    uint32_t bump; /* blocks [bump, cap) were never handed out */
    uint32_t cap;
    uint32_t prev, next; /* partial list (both) or a stack (next) */
    uint16_t size;
    uint8_t cls;
    uint8_t where;
};

struct slab_pool {
    char *base;
    size_t reserved;
    uint32_t nslabs, carved;
    struct slab *slabs; /* nslabs entries, mapped: only the carved ones are touched */
    size_t slabs_bytes;
    struct slab *cur[CLASSES];
    uint32_t partial[CLASSES];
    uint32_t empty, given; /* stacks */
    unsigned n_empty, keep_empty;
    size_t fallbacks, returns;
};

struct slab_pool *slab_pool_new(size_t reserve, unsigned keep_empty)
{
    if (!reserve)
        reserve = SLAB_RESERVE_DEFAULT;
    size_t n = reserve >> SLAB_SHIFT;
    if (n == 0)
        n = 1;
    if (n > NONE - 1)
        n = NONE - 1;
    reserve = n << SLAB_SHIFT;
    /* NORESERVE: the range is address space only; the kernel commits a page when touched. */
    void *base = mmap(NULL, reserve, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    size_t meta = n * sizeof(struct slab);
    void *slabs = mmap(NULL, meta, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (slabs == MAP_FAILED) {
        int saved = errno;
        munmap(base, reserve);
        errno = saved;
        return NULL;
    }
    struct slab_pool *p = xcalloc(1, sizeof *p);
    p->base = base;
    p->reserved = reserve;
    p->nslabs = (uint32_t)n;
    p->slabs = slabs;
    p->slabs_bytes = meta;
    for (int c = 0; c < CLASSES; c++)
        p->partial[c] = NONE;
    p->empty = p->given = NONE;
    p->keep_empty = keep_empty;
    return p;
}

void slab_pool_free(struct slab_pool *p)
{
    if (!p)
        return;
    munmap(p->base, p->reserved);
    munmap(p->slabs, p->slabs_bytes);
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

/* An empty slab, kept or given back. */
static void retire(struct slab_pool *p, struct slab *s)
{
    s->free = NULL;
    s->bump = 0;
    if (p->n_empty < p->keep_empty) {
        s->where = W_EMPTY;
        p->n_empty++;
        push(p, &p->empty, s);
        return;
    }
    /* Private anonymous pages read as zero afterwards; nothing in them is kept. */
    madvise(s->mem, SLAB_BYTES, MADV_DONTNEED);
    p->returns++;
    s->where = W_GIVEN;
    push(p, &p->given, s);
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
    p->carved++;
    return s;
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
        s->size = (uint16_t)((c + 1) * CLASS_STEP);
        s->cap = (uint32_t)(SLAB_BYTES / s->size);
        s->used = 0;
        s->bump = 0;
        s->free = NULL;
    }
    s->where = W_CUR;
    p->cur[c] = s;
    void *b = s->free;
    if (b)
        s->free = *(void **)b;
    else
        b = s->mem + (size_t)s->bump++ * s->size;
    s->used++;
    return b;
}

void *slab_alloc(struct slab_pool *p, size_t n)
{
    if (n > SLAB_MAX)
        return xmalloc(n);
    unsigned c = n ? (unsigned)((n - 1) / CLASS_STEP) : 0;
    struct slab *s = p->cur[c];
    if (s) {
        void *b = s->free;
        if (b) {
            s->free = *(void **)b;
            s->used++;
            return b;
        }
        if (s->bump < s->cap) {
            s->used++;
            return s->mem + (size_t)s->bump++ * s->size;
        }
    }
    return alloc_slow(p, c, n);
}

static void double_release(void)
{
    static const char msg[] = "fatal: slab: block released twice\n";
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
    if (s->used == 0 || s->where >= W_EMPTY)
        double_release();
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
