/*
 * slab: a size-class allocator for the small blocks of JSON trees, kept apart from malloc's heap.
 *
 * Why: a watch event or a pass builds a jansson tree of hundreds of blocks of 16 to 256 bytes
 * that live for milliseconds to seconds; about 2,200 of them per dispatch in the operator
 * (bin/bench-dispatch --callgrind), at about 80 instructions per malloc and 100 per free with
 * glibc, a sixth of the operator's instructions. The same blocks, freed between the long-lived
 * packed objects of the stores in glibc's one heap, leave pages that glibc cannot return (the
 * settled RSS of docs/performance.md "The decoded-tree cache against goal 5"). Here a block is
 * taken from and given back to a per-class free list in a few instructions, and a slab
 * (SLAB_BYTES of one class) whose blocks are all free is returned to the system.
 *
 * How: one range of address space is reserved at creation (pages are committed by the kernel
 * when first touched); it is cut into slabs as needed. A block is found to be ours by its
 * address alone, so slab_release() also takes blocks of malloc's: larger requests, and all
 * requests once the range is used up, are passed to xmalloc. Empty slabs are kept for reuse up
 * to keep_empty, further ones are given back with madvise(MADV_DONTNEED).
 *
 * Not thread-safe: one pool per loop (the process has one). Blocks are 16-byte aligned. A
 * release of a block that is not handed out (twice, or never) or of an address inside a block
 * aborts (a bit per block); a block written after its release is not detected: the sanitizer
 * and valgrind builds do not use a pool (cmd/kueue-ks/main.c).
 */
#ifndef KKS_UTIL_SLAB_H
#define KKS_UTIL_SLAB_H

#include <stddef.h>

/* 16 KB, not 64: a slab that a few long-lived blocks pin (the unpacked stores' and the maps'
 * trees, a few dozen per class, allocated among a restart's short-lived ones) keeps a quarter
 * as much resident (docs/performance.md "Smaller slabs") */
#define SLAB_SHIFT           14
#define SLAB_BYTES           ((size_t)1 << SLAB_SHIFT) /* 16 KB: 1,024 blocks of 16 bytes, 64 of 256 */
#define SLAB_MAX             256                       /* larger requests go to malloc */
#define SLAB_RESERVE_DEFAULT ((size_t)1 << 30)
/* 2 MB of empty slabs kept resident for the next burst, until slab_give_back */
#define SLAB_KEEP_EMPTY_DEFAULT 128

struct slab_pool;

/*
 * A pool over `reserve` bytes of address space (0: SLAB_RESERVE_DEFAULT; rounded down to whole
 * slabs, at least one), keeping at most keep_empty empty slabs resident (the rest go back to
 * the system), in *out. 0, or -errno of mmap when the range cannot be reserved (a `ulimit -v`,
 * or vm.overcommit_memory=2 without room for it).
 */
int slab_pool_new(size_t reserve, unsigned keep_empty, struct slab_pool **out);
/* Unmap the range: every block of the pool is gone (blocks of malloc's stay). NULL is fine. */
void slab_pool_free(struct slab_pool *p);

/* A block of at least n bytes. Never NULL (out of memory aborts, as xmalloc does). */
void *slab_alloc(struct slab_pool *p, size_t n);
/*
 * The same for a block that will outlive the bursts around it (a cached record): taken from
 * slabs that hold only such blocks, so that the short-lived blocks' slabs empty and go back
 * whole when their trees are freed, instead of each being pinned by a few long-lived ones
 * (the agents' 30,000 pod records of a restart on the real stack kept the pool's slabs
 * half empty: docs/performance.md). Released with slab_release like any block.
 */
void *slab_alloc_long(struct slab_pool *p, size_t n);
/* Give back a block of slab_alloc(p, ...) or of malloc. NULL is fine. */
void slab_release(struct slab_pool *p, void *block);

/*
 * Give back to the system the pages of every empty slab kept for the next burst and of each
 * class's slab being filled when none of its blocks is in use: when the process goes idle
 * (the manager's heap trims), where the kept ones would stay resident for nothing (up to
 * keep_empty slabs: 2 MB by default). Returns how many slabs went. Blocks in use are not
 * touched.
 */
size_t slab_give_back(struct slab_pool *p);

struct slab_stats {
    size_t blocks;       /* blocks handed out and not released */
    size_t bytes;        /* their bytes (class sizes) */
    size_t slabs_live;   /* slabs holding a block or being filled */
    size_t slabs_empty;  /* empty, kept resident */
    size_t slabs_given;  /* empty, given back to the system */
    size_t slabs_carved; /* cut from the range so far */
    size_t fallbacks;    /* requests passed to malloc because the range was used up */
    size_t returns;      /* madvise calls made */
};
/* Counts walked from the slabs (O(slabs carved)): for logs, tests and benches. */
void slab_stats(const struct slab_pool *p, struct slab_stats *out);
/* Walk every slab and list and check the pool's invariants (tests): 0, or -EFAULT with *why
 * (when why is not NULL) naming the first one broken. */
int slab_check(const struct slab_pool *p, const char **why);

#endif
