/* slab: blocks of every size are distinct, aligned and kept; released blocks are reused last
 * first, a full slab's freed block before a new slab; empty slabs are kept up to the limit
 * (reused first) and given back beyond it (no longer resident); a used-up range passes
 * requests to malloc; releases of blocks not handed out abort; bursts of trees keep the
 * pool's invariants (slab_check) through full, partial, empty and reused slabs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pkg/util/slab.h"

/* The block size a request of n bytes takes (the classes are multiples of 16). */
static size_t class_size(size_t n)
{
    return n ? (n + 15) / 16 * 16 : 16;
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 31 + i);
}

static void check(const unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        assert_int_equal(b[i], (unsigned char)(seed * 31 + i));
}

static struct slab_pool *new_pool(size_t reserve, unsigned keep)
{
    struct slab_pool *p = NULL;
    assert_int_equal(slab_pool_new(reserve, keep, &p), 0);
    assert_non_null(p);
    return p;
}

static void assert_sound(const struct slab_pool *p)
{
    const char *why = NULL;
    if (slab_check(p, &why) != 0)
        fail_msg("slab_check: %s", why);
}

/* Whether the page holding b is resident. */
static bool resident(const void *b)
{
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char v = 0;
    void *page = (void *)((uintptr_t)b & ~(uintptr_t)(pg - 1));
    assert_int_equal(mincore(page, (size_t)pg, &v), 0);
    return v & 1;
}

static void test_every_size(void **state)
{
    (void)state;
    struct slab_pool *p = new_pool(0, SLAB_KEEP_EMPTY_DEFAULT);
    enum { N = SLAB_MAX + 64 };
    unsigned char *b[N + 1];
    size_t bytes = 0, blocks = 0;
    for (size_t n = 0; n <= N; n++) {
        b[n] = slab_alloc(p, n);
        assert_int_equal((uintptr_t)b[n] % 16, 0);
        fill(b[n], n, (unsigned)n);
        if (n <= SLAB_MAX) {
            bytes += class_size(n);
            blocks++;
        }
    }
    for (size_t n = 0; n <= N; n++) /* no block overlaps another */
        check(b[n], n, (unsigned)n);
    struct slab_stats st;
    slab_stats(p, &st);
    assert_int_equal(st.blocks, blocks); /* the larger ones are malloc's */
    assert_int_equal(st.bytes, bytes);
    assert_int_equal(st.slabs_live, SLAB_MAX / 16);
    assert_sound(p);
    for (size_t n = 0; n <= N; n++)
        slab_release(p, b[n]);
    slab_release(p, NULL);
    slab_stats(p, &st);
    assert_int_equal(st.blocks, 0);
    assert_int_equal(st.bytes, 0);
    assert_int_equal(st.fallbacks, 0);
    slab_pool_free(p);
    slab_pool_free(NULL);
}

static void test_reuse_order(void **state)
{
    (void)state;
    struct slab_pool *p = new_pool(0, 4);
    void *a = slab_alloc(p, 40), *b = slab_alloc(p, 48);
    assert_ptr_equal((char *)b, (char *)a + 48); /* one class: consecutive */
    slab_release(p, a);
    slab_release(p, b);
    assert_ptr_equal(slab_alloc(p, 33), b); /* the last released first */
    assert_ptr_equal(slab_alloc(p, 47), a);
    void *c = slab_alloc(p, 100);
    /* another class, another slab */
    assert_true((char *)c < (char *)a || (char *)c >= (char *)a + SLAB_BYTES);
    assert_sound(p);
    slab_release(p, a);
    slab_release(p, b);
    slab_release(p, c);
    assert_sound(p);
    slab_pool_free(p);
}

/* A full slab's released block is taken before a new slab is cut. */
static void test_full_slab_refilled(void **state)
{
    (void)state;
    struct slab_pool *p = new_pool(0, 4);
    size_t cap = SLAB_BYTES / 256;
    void **b = calloc(2 * cap, sizeof *b);
    for (size_t i = 0; i < cap; i++)
        b[i] = slab_alloc(p, 256);
    b[cap] = slab_alloc(p, 256); /* the first slab is full: the second one starts */
    struct slab_stats st;
    slab_stats(p, &st);
    assert_int_equal(st.slabs_carved, 2);
    assert_int_equal(st.bytes, (cap + 1) * 256); /* the full slab's blocks count */
    assert_sound(p);
    void *freed = b[7];
    slab_release(p, freed);
    for (size_t i = cap + 1; i < 2 * cap; i++)
        b[i] = slab_alloc(p, 256);
    slab_stats(p, &st);
    assert_int_equal(st.slabs_carved, 2);
    b[7] = slab_alloc(p, 256); /* the second is full now: the first one's freed block */
    assert_ptr_equal(b[7], freed);
    slab_stats(p, &st);
    assert_int_equal(st.slabs_carved, 2);
    assert_int_equal(st.blocks, 2 * cap);
    assert_int_equal(st.bytes, 2 * cap * 256);
    assert_sound(p);
    for (size_t i = 0; i < 2 * cap; i++)
        slab_release(p, b[i]);
    assert_sound(p);
    free(b);
    slab_pool_free(p);
}

/* Two partial slabs, the head taken as the current one, the other emptied: the list stays
 * linked (the taken head's successor must lose its link back to it). */
static void test_partial_list(void **state)
{
    (void)state;
    struct slab_pool *p = new_pool(0, 4);
    size_t cap = SLAB_BYTES / 256;
    void **b = calloc(3 * cap, sizeof *b);
    for (size_t i = 0; i < 2 * cap + 1; i++) /* A and B full, C current */
        b[i] = slab_alloc(p, 256);
    slab_release(p, b[0]);   /* A partial */
    slab_release(p, b[cap]); /* B partial, the list's head */
    b[0] = b[cap] = NULL;
    assert_sound(p);
    for (size_t i = 2 * cap + 1; i < 3 * cap; i++) /* C full */
        b[i] = slab_alloc(p, 256);
    void *x = slab_alloc(p, 256); /* B's freed block: B current, A alone on the list */
    struct slab_stats st;
    slab_stats(p, &st);
    assert_int_equal(st.slabs_carved, 3);
    assert_sound(p);
    for (size_t i = 1; i < cap; i++) /* A empties: off the list, kept */
        slab_release(p, b[i]);
    slab_stats(p, &st);
    assert_int_equal(st.slabs_empty, 1);
    assert_sound(p);
    slab_release(p, x);
    for (size_t i = cap + 1; i < 3 * cap; i++)
        slab_release(p, b[i]);
    slab_stats(p, &st);
    assert_int_equal(st.blocks, 0);
    assert_sound(p);
    free(b);
    slab_pool_free(p);
}

/* Empty slabs: up to keep_empty kept (resident), the rest given back (not resident); kept
 * ones are reused before given ones, and those before new ones are cut. */
static void test_empty_slabs(void **state)
{
    (void)state;
    struct slab_pool *p = new_pool(0, 1);
    size_t cap = SLAB_BYTES / 64;
    size_t n = 3 * cap;
    unsigned char **b = calloc(n, sizeof *b);
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < n; i++) {
            b[i] = slab_alloc(p, 64);
            fill(b[i], 64, (unsigned)i);
        }
        struct slab_stats st;
        slab_stats(p, &st);
        assert_int_equal(st.slabs_carved, 3);
        assert_int_equal(st.slabs_live, 3);
        assert_int_equal(st.slabs_empty, 0);
        unsigned char *first = b[0], *second = b[cap];
        for (size_t i = 0; i < n; i++) {
            check(b[i], 64, (unsigned)i);
            slab_release(p, b[i]);
        }
        slab_stats(p, &st);
        assert_int_equal(st.blocks, 0);
        assert_int_equal(st.slabs_live, 1);  /* the class's current slab stays */
        assert_int_equal(st.slabs_empty, 1); /* keep_empty, again in the second round */
        assert_int_equal(st.slabs_given, 1);
        assert_int_equal(st.returns, (size_t)round + 1);
        assert_true(resident(first));   /* kept */
        assert_false(resident(second)); /* given back */
        assert_sound(p);
    }
    /* another class takes the kept slab (the one the last round's first block was in: a new
     * class starts at its slab's first byte), then the given one, then new ones */
    unsigned char *kept = b[0];
    for (size_t i = 0; i < n; i++) {
        b[i] = slab_alloc(p, 128);
        fill(b[i], 128, (unsigned)i);
    }
    assert_true(b[0] <= kept && kept < b[0] + SLAB_BYTES);
    struct slab_stats st;
    slab_stats(p, &st);
    assert_int_equal(st.slabs_empty, 0);
    assert_int_equal(st.slabs_given, 0);
    assert_int_equal(st.slabs_carved, 3 + (n * 128 / SLAB_BYTES) - 2);
    assert_sound(p);
    for (size_t i = 0; i < n; i++) {
        check(b[i], 128, (unsigned)i);
        slab_release(p, b[i]);
    }
    assert_sound(p);
    free(b);
    slab_pool_free(p);
}

/* slab_give_back: the kept empty slabs and an unused current slab lose their pages, blocks in
 * use keep theirs, and every slab is used again afterwards. */
static void test_give_back(void **state)
{
    (void)state;
    struct slab_pool *p = new_pool(0, 4);
    size_t cap = SLAB_BYTES / 64;
    size_t n = 4 * cap;
    unsigned char **b = calloc(n, sizeof *b);
    for (size_t i = 0; i < n; i++) {
        b[i] = slab_alloc(p, 64);
        fill(b[i], 64, (unsigned)i);
    }
    unsigned char *live = slab_alloc(p, 32); /* another class, in use throughout */
    fill(live, 32, 7);
    unsigned char *in_empty = b[0], *in_cur = b[n - 1];
    for (size_t i = 0; i < n; i++)
        slab_release(p, b[i]);
    struct slab_stats st;
    slab_stats(p, &st);
    assert_int_equal(st.slabs_empty, 3); /* the fourth is the class's current one */
    assert_true(resident(in_empty));
    assert_true(resident(in_cur));
    assert_int_equal(slab_give_back(p), 4);
    slab_stats(p, &st);
    assert_int_equal(st.slabs_empty, 0);
    assert_int_equal(st.slabs_given, 3);
    assert_int_equal(st.blocks, 1);
    assert_false(resident(in_empty));
    assert_false(resident(in_cur));
    assert_true(resident(live));
    check(live, 32, 7);
    assert_sound(p);
    assert_int_equal(slab_give_back(p), 0); /* nothing left to give */
    /* all usable again: the current slab from its first block, then the given ones */
    for (size_t i = 0; i < n; i++) {
        b[i] = slab_alloc(p, 64);
        fill(b[i], 64, (unsigned)i);
    }
    slab_stats(p, &st);
    assert_int_equal(st.slabs_carved, 5);
    for (size_t i = 0; i < n; i++) {
        check(b[i], 64, (unsigned)i);
        slab_release(p, b[i]);
    }
    slab_release(p, live);
    assert_sound(p);
    free(b);
    slab_pool_free(p);
}

/* A range of two slabs: the third slab's requests go to malloc, and come back through
 * slab_release (ASan would see a malloc block lost or a slab block given to free()). */
static void test_range_used_up(void **state)
{
    (void)state;
    struct slab_pool *p = new_pool(2 * SLAB_BYTES + 100, 0);
    size_t cap = SLAB_BYTES / 32;
    size_t n = 3 * cap;
    unsigned char **b = calloc(n, sizeof *b);
    for (size_t i = 0; i < n; i++) {
        b[i] = slab_alloc(p, 32);
        fill(b[i], 32, (unsigned)i);
    }
    struct slab_stats st;
    slab_stats(p, &st);
    assert_int_equal(st.slabs_carved, 2);
    assert_int_equal(st.blocks, 2 * cap);
    assert_int_equal(st.fallbacks, cap);
    for (size_t i = 0; i < n; i++) {
        check(b[i], 32, (unsigned)i);
        slab_release(p, b[i]);
    }
    slab_stats(p, &st);
    assert_int_equal(st.blocks, 0);
    /* with keep_empty 0 both empty slabs were given back, and are taken again */
    assert_int_equal(st.slabs_given, 2);
    void *x = slab_alloc(p, 32);
    slab_stats(p, &st);
    assert_int_equal(st.slabs_given, 1);
    assert_int_equal(st.fallbacks, cap);
    slab_release(p, x);
    free(b);
    slab_pool_free(p);
    /* less than a slab: one slab */
    p = new_pool(1, 0);
    x = slab_alloc(p, 200);
    slab_stats(p, &st);
    assert_int_equal(st.slabs_carved, 1);
    assert_int_equal(st.fallbacks, 0);
    slab_release(p, x);
    slab_pool_free(p);
}

/* Runs release(p, block) in a child: it must abort. */
static void assert_release_aborts(struct slab_pool *p, void *block)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* no stderr noise from the expected abort in the test's output */
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, 2);
        slab_release(p, block);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
}

static void test_bad_releases(void **state)
{
    (void)state;
    struct slab_pool *p = new_pool(0, 1);
    char *a = slab_alloc(p, 24), *b = slab_alloc(p, 24), *c = slab_alloc(p, 24);
    slab_release(p, b);
    assert_release_aborts(p, b);      /* twice, its slab holding other blocks */
    assert_release_aborts(p, a + 16); /* inside a block */
    assert_release_aborts(p, c + 32); /* never handed out */
    slab_release(p, a);
    slab_release(p, c);
    assert_release_aborts(p, a); /* twice, its slab empty */
    assert_sound(p);
    slab_pool_free(p);
}

/* Bursts of trees: many blocks of a few classes, most released at once, some kept for
 * several rounds; the slabs go through every state, the invariants hold after each step. */
static void test_bursts(void **state)
{
    (void)state;
    struct slab_pool *p = new_pool(48 * SLAB_BYTES, 2);
    enum { SLOTS = 30000, ROUNDS = 40 };
    unsigned char **b = calloc(SLOTS, sizeof *b);
    size_t *len = calloc(SLOTS, sizeof *len);
    unsigned *seed = calloc(SLOTS, sizeof *seed);
    unsigned r = 777, given_seen = 0, empty_seen = 0;
    for (unsigned round = 0; round < ROUNDS; round++) {
        for (size_t i = 0; i < SLOTS; i++) {
            r = r * 1103515245u + 12345u;
            if (!b[i] && (r >> 16) % 4 != 0) {
                len[i] = 1 + (r >> 8) % 64; /* classes 16 to 64 */
                b[i] = slab_alloc(p, len[i]);
                seed[i] = (unsigned)(i + round);
                fill(b[i], len[i], seed[i]);
            }
        }
        assert_sound(p);
        bool keep = false;
        for (size_t i = 0; i < SLOTS; i++) {
            /* trees of 2,048 slots: one in 16 survives the burst whole */
            if (i % 2048 == 0) {
                r = r * 1103515245u + 12345u;
                keep = (r >> 16) % 16 == 0;
            }
            if (b[i] && !keep) {
                check(b[i], len[i], seed[i]);
                slab_release(p, b[i]);
                b[i] = NULL;
            }
        }
        assert_sound(p);
        struct slab_stats st;
        slab_stats(p, &st);
        given_seen += st.slabs_given > 0;
        empty_seen += st.slabs_empty > 0;
    }
    assert_true(given_seen > 0 && empty_seen > 0);
    for (size_t i = 0; i < SLOTS; i++)
        if (b[i]) {
            check(b[i], len[i], seed[i]);
            slab_release(p, b[i]);
        }
    struct slab_stats st;
    slab_stats(p, &st);
    assert_int_equal(st.blocks, 0);
    assert_sound(p);
    free(b);
    free(len);
    free(seed);
    slab_pool_free(p);
}

/* Records made among bursts of short-lived blocks of their size: with slab_alloc_long they
 * fill slabs of their own, so once the bursts are freed only their own slabs stay live; made
 * with slab_alloc they pin the bursts' slabs. */
static size_t live_slabs_after_bursts(bool long_lived)
{
    enum { RECORDS = 3000, SHORT_PER = 3, SIZE = 80 };
    struct slab_pool *p = new_pool(256 * SLAB_BYTES, 0);
    unsigned char **rec = calloc(RECORDS, sizeof *rec);
    unsigned char **tmp = calloc((size_t)RECORDS * SHORT_PER, sizeof *tmp);
    for (size_t i = 0; i < RECORDS; i++) {
        for (size_t j = 0; j < SHORT_PER; j++) {
            tmp[i * SHORT_PER + j] = slab_alloc(p, SIZE);
            fill(tmp[i * SHORT_PER + j], SIZE, 1);
        }
        rec[i] = long_lived ? slab_alloc_long(p, SIZE) : slab_alloc(p, SIZE);
        fill(rec[i], SIZE, (unsigned)i);
    }
    assert_sound(p);
    for (size_t i = 0; i < (size_t)RECORDS * SHORT_PER; i++)
        slab_release(p, tmp[i]);
    assert_sound(p);
    struct slab_stats st;
    slab_stats(p, &st);
    assert_int_equal(st.blocks, RECORDS);
    size_t live = st.slabs_live;
    for (size_t i = 0; i < RECORDS; i++) {
        check(rec[i], SIZE, (unsigned)i);
        slab_release(p, rec[i]);
    }
    slab_stats(p, &st);
    assert_int_equal(st.blocks, 0);
    assert_true(st.slabs_live <= 2); /* at most each kind's slab being filled, empty */
    assert_sound(p);
    free(rec);
    free(tmp);
    slab_pool_free(p);
    return live;
}

static void test_long_lived(void **state)
{
    (void)state;
    size_t per_slab = SLAB_BYTES / 80, need = (3000 + per_slab - 1) / per_slab;
    size_t apart = live_slabs_after_bursts(true), mixed = live_slabs_after_bursts(false);
    /* their own slabs, plus the short blocks' slab being filled (kept as cur, now empty) */
    assert_true(apart <= need + 1);
    assert_true(mixed >= 3 * need); /* a record in each burst's slabs */
}

/* Random sizes, random order: every live block keeps its bytes; the counts match a shadow. */
static void test_random(void **state)
{
    (void)state;
    struct slab_pool *p = new_pool(64 * SLAB_BYTES, 2);
    enum { SLOTS = 4096, STEPS = 200000 };
    unsigned char **b = calloc(SLOTS, sizeof *b);
    size_t *len = calloc(SLOTS, sizeof *len);
    unsigned *seed = calloc(SLOTS, sizeof *seed);
    unsigned r = 12345;
    for (unsigned step = 0; step < STEPS; step++) {
        r = r * 1103515245u + 12345u;
        size_t i = (r >> 8) % SLOTS;
        if (b[i]) {
            check(b[i], len[i], seed[i]);
            slab_release(p, b[i]);
            b[i] = NULL;
        } else {
            len[i] = (r >> 20) % (SLAB_MAX + 80);
            seed[i] = step;
            b[i] = slab_alloc(p, len[i]);
            fill(b[i], len[i], seed[i]);
        }
        if (step % 20000 == 0)
            assert_sound(p);
    }
    size_t live = 0, bytes = 0;
    for (size_t i = 0; i < SLOTS; i++)
        if (b[i] && len[i] <= SLAB_MAX) {
            live++;
            bytes += class_size(len[i]);
        }
    struct slab_stats st;
    slab_stats(p, &st);
    assert_int_equal(st.blocks, live);
    assert_int_equal(st.bytes, bytes);
    for (size_t i = 0; i < SLOTS; i++)
        if (b[i]) {
            check(b[i], len[i], seed[i]);
            slab_release(p, b[i]);
        }
    slab_stats(p, &st);
    assert_int_equal(st.blocks, 0);
    free(b);
    free(len);
    free(seed);
    slab_pool_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_size),         cmocka_unit_test(test_reuse_order),
        cmocka_unit_test(test_full_slab_refilled), cmocka_unit_test(test_empty_slabs),
        cmocka_unit_test(test_give_back),          cmocka_unit_test(test_range_used_up),
        cmocka_unit_test(test_bad_releases),       cmocka_unit_test(test_bursts),
        cmocka_unit_test(test_partial_list),       cmocka_unit_test(test_random),
        cmocka_unit_test(test_long_lived),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
