/*
 * jpack: see jpack.h. The intern table is an array of entries indexed by id
 * (freed ids are reused) and an open-addressing hash of ids (linear probing,
 * backward-shift deletion). Every reader of packed bytes checks bounds, ids
 * and depth: jpack_decode() of garbage returns NULL.
 */
#include "pkg/json/jpack.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/uid.h"
#include "pkg/util/xalloc.h"

enum {
    T_NULL,
    T_TRUE,
    T_FALSE,
    T_INT,
    T_REAL,
    T_STR,
    T_SID,
    T_OBJ,
    T_ARR,
    T_UUID,
    T_TIME,
    T_SHR, /* a shared container: its id in the table's second set */
    T_REF, /* the string of one of the object's own fields (enum jp_ref) */
    T_MAX
};

/* What a T_REF names: the root object's metadata.uid and metadata.name, and those of its first
 * owner reference. Any later string value equal to one is packed as a reference to it (one
 * byte): a Job's controller-uid and job-name labels in its selector and pod template, and a
 * Workload's pod template labels naming its job, repeat them, and with them as references the
 * template is the same bytes across the objects of a sweep, so it is shared
 * (docs/performance.md "Own fields as references"). */
enum jp_ref { REF_UID, REF_NAME, REF_OWNER_UID, REF_OWNER_NAME, JP_REFS };

/* A field longer than this is not referred to (Kubernetes names are at most 253 bytes). */
#define JP_REF_MAX 253

/* Where a container is, for the fields a T_REF names: the root object, its metadata, the
 * metadata's ownerReferences, their first element; anywhere else. */
enum jp_at { AT_OTHER, AT_ROOT, AT_META, AT_OWNERS, AT_OWNER0 };

/* The referable fields packed so far (in the order of packing: a reference only follows the
 * field it names). */
struct jp_self {
    bool set[JP_REFS];
    size_t len[JP_REFS];
    char s[JP_REFS][JP_REF_MAX];
};

/* A string value longer than this is interned only once it repeats (long_str_ref): long values
 * (messages, commands) are often unique, but a status message or an annotation holding JSON
 * may repeat across thousands of objects. */
#define JP_INTERN_MAX 64

/* A nested object or array of this many packed bytes or more is shared once it repeats: below
 * it the shared copy (an entry, a slot) costs more than the bytes a repeat saves. Above the
 * maximum it is not looked at: hashing it at every level would cost more than it saves. */
#define JP_SHARE_MIN 16
#define JP_SHARE_MAX 16384
/* How many recent hashes of containers and long strings are remembered (a direct-mapped
 * filter): one is shared or interned on its second sighting within that window, so one seen
 * once costs nothing. */
#define JP_SEEN_BITS 14

/* In a list of references taken: a shared container's id, not a string's. */
#define JP_SHR_BIT 0x80000000u

struct jp_ent {
    uint32_t hash, refs, len;
    char s[]; /* len bytes + NUL */
};

/* Entries by id (freed ids are reused) and an open-addressing hash of ids. */
struct jp_set {
    struct jp_ent **ents; /* by id; NULL = free id */
    uint32_t nents, cap_ents;
    uint32_t *free_ids;
    uint32_t nfree, cap_free;
    uint32_t *slots; /* id + 1; 0 = empty */
    uint32_t nslots, used;
};

struct jpack_tab {
    struct jp_set strs;   /* interned strings */
    struct jp_set shared; /* shared containers: packed bytes that hold their own references */
    uint32_t *seen; /* hashes | 1 of containers and long strings packed lately, 1 << JP_SEEN_BITS
                       (lazily) */
};

/* The references a packed value holds, in the order they were taken (JP_SHR_BIT: a shared
 * container's). */
struct refs {
    uint32_t *v;
    size_t n, cap;
};

/* ---- table ------------------------------------------------------------------ */

/* Packed bytes or a string's, 8 at a time: a container is hashed at each level it is nested
 * in, and every key and interned string of a listed object once (FNV-1a a byte at a time
 * before: tab_ref 467 -> 420 x 10^6 instructions in a bench-scale restart, callgrind). */
static uint32_t jp_hash_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ n, v;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&v, p + i, 8);
        h = (h ^ v) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    v = 0;
    memcpy(&v, p + i, n - i);
    h = (h ^ v) * 0xc4ceb9fe1a85ec53u;
    h ^= h >> 29;
    return (uint32_t)h;
}

static uint32_t jp_hash(const char *s, size_t n)
{
    return jp_hash_bytes((const uint8_t *)s, n);
}

static void set_free(struct jp_set *s)
{
    for (uint32_t i = 0; i < s->nents; i++)
        free(s->ents[i]);
    free(s->ents);
    free(s->free_ids);
    free(s->slots);
}

static size_t set_bytes(const struct jp_set *s)
{
    size_t b = (size_t)s->cap_ents * sizeof(*s->ents) + (size_t)s->cap_free * sizeof(*s->free_ids) +
               (size_t)s->nslots * sizeof(*s->slots);
    for (uint32_t i = 0; i < s->nents; i++)
        if (s->ents[i]) /* malloc's 16-byte granularity and header */
            b += ((sizeof(struct jp_ent) + s->ents[i]->len + 1 + 8 + 15) & ~(size_t)15);
    return b;
}

static void set_place(struct jp_set *s, uint32_t id)
{
    uint32_t mask = s->nslots - 1, i = s->ents[id]->hash & mask;
    while (s->slots[i])
        i = (i + 1) & mask;
    s->slots[i] = id + 1;
}

static void set_grow(struct jp_set *s)
{
    uint32_t *old = s->slots, n = s->nslots;
    s->nslots = n ? n * 2 : 64;
    s->slots = xcalloc(s->nslots, sizeof(*s->slots));
    for (uint32_t i = 0; i < n; i++)
        if (old[i])
            set_place(s, old[i] - 1);
    free(old);
}

/* The id of the entry holding s[0..n) (hash h), or UINT32_MAX when absent. */
static uint32_t set_lookup(const struct jp_set *s, const void *p, size_t n, uint32_t h)
{
    if (!s->nslots)
        return UINT32_MAX;
    uint32_t mask = s->nslots - 1;
    for (uint32_t i = h & mask; s->slots[i]; i = (i + 1) & mask) {
        const struct jp_ent *e = s->ents[s->slots[i] - 1];
        if (e->hash == h && e->len == n && memcmp(e->s, p, n) == 0)
            return s->slots[i] - 1;
    }
    return UINT32_MAX;
}

/* A new entry for p[0..n) (absent; hash h) with one reference: its id. */
static uint32_t set_add(struct jp_set *s, const void *p, size_t n, uint32_t h)
{
    if ((s->used + 1) * 4 > s->nslots * 3)
        set_grow(s);
    uint32_t id;
    if (s->nfree) {
        id = s->free_ids[--s->nfree];
    } else {
        if (s->nents == s->cap_ents) {
            s->cap_ents = s->cap_ents ? s->cap_ents * 2 : 64;
            s->ents = xrealloc(s->ents, s->cap_ents * sizeof(*s->ents));
        }
        id = s->nents++;
    }
    struct jp_ent *e = xmalloc(sizeof(*e) + n + 1);
    e->hash = h;
    e->refs = 1;
    e->len = (uint32_t)n;
    memcpy(e->s, p, n);
    e->s[n] = '\0';
    s->ents[id] = e;
    s->used++;
    set_place(s, id);
    return id;
}

/* Drop one reference of entry `id`: NULL while others remain, else the entry, taken out of the
 * set (the caller frees it). */
static struct jp_ent *set_drop(struct jp_set *s, uint32_t id)
{
    struct jp_ent *e = s->ents[id];
    if (--e->refs)
        return NULL;
    uint32_t mask = s->nslots - 1, i = e->hash & mask;
    while (s->slots[i] != id + 1)
        i = (i + 1) & mask;
    /* backward-shift deletion: move later members of the probe run into the hole */
    for (uint32_t j = (i + 1) & mask; s->slots[j]; j = (j + 1) & mask) {
        uint32_t k = s->ents[s->slots[j] - 1]->hash & mask;
        bool move = i <= j ? (k <= i || k > j) : (k <= i && k > j);
        if (move) {
            s->slots[i] = s->slots[j];
            i = j;
        }
    }
    s->slots[i] = 0;
    s->used--;
    s->ents[id] = NULL;
    if (s->nfree == s->cap_free) {
        s->cap_free = s->cap_free ? s->cap_free * 2 : 64;
        s->free_ids = xrealloc(s->free_ids, s->cap_free * sizeof(*s->free_ids));
    }
    s->free_ids[s->nfree++] = id;
    return e;
}

static const struct jp_ent *set_get(const struct jp_set *s, uint64_t id)
{
    return id < s->nents ? s->ents[id] : NULL;
}

struct jpack_tab *jpack_tab_new(void)
{
    return xcalloc(1, sizeof(struct jpack_tab));
}

void jpack_tab_free(struct jpack_tab *t)
{
    if (!t)
        return;
    set_free(&t->strs);
    set_free(&t->shared);
    free(t->seen);
    free(t);
}

size_t jpack_tab_len(const struct jpack_tab *t)
{
    return t->strs.used + t->shared.used;
}

size_t jpack_tab_shared(const struct jpack_tab *t)
{
    return t->shared.used;
}

size_t jpack_tab_bytes(const struct jpack_tab *t)
{
    return sizeof(*t) + set_bytes(&t->strs) + set_bytes(&t->shared) +
           (t->seen ? sizeof(*t->seen) << JP_SEEN_BITS : 0);
}

/* The id of string s (taking one reference), adding it when absent. */
static uint32_t tab_ref(struct jpack_tab *t, const char *s, size_t n)
{
    uint32_t h = jp_hash(s, n);
    uint32_t found = set_lookup(&t->strs, s, n, h);
    if (found != UINT32_MAX) {
        t->strs.ents[found]->refs++;
        return found;
    }
    return set_add(&t->strs, s, n, h);
}

/*
 * The ids a build took last, by their order in the value (keys and interned strings apart): the
 * objects of a list share their shape, so the n-th key of one is the n-th key of the one before,
 * nearly always. A guess that matches the bytes is that string's entry (the table holds each
 * string once) and spares the hash and the probe: 1.84 million keys in a restart's lists
 * (bench-scale, docs/performance.md "Placements before the agents' Pods, quantities in 64 bits,
 * keys by their place"). A guess may be stale (an id given back, or taken by other bytes since):
 * the bytes decide.
 */
struct seq {
    uint32_t *id;
    size_t n, cap, at; /* ids noted; the next one's place */
};

static uint32_t seq_ref(struct jpack_tab *t, struct seq *q, const char *s, size_t n)
{
    size_t at = q->at++;
    if (at < q->n) {
        struct jp_ent *e = q->id[at] < t->strs.nents ? t->strs.ents[q->id[at]] : NULL;
        if (e && e->len == n && memcmp(e->s, s, n) == 0) {
            e->refs++;
            return q->id[at];
        }
    }
    uint32_t id = tab_ref(t, s, n);
    if (at >= q->cap) {
        q->cap = q->cap ? q->cap * 2 : 64;
        q->id = xrealloc(q->id, q->cap * sizeof(*q->id));
    }
    if (at >= q->n)
        q->n = at + 1;
    q->id[at] = id;
    return id;
}

static void tab_unref(struct jpack_tab *t, uint32_t id)
{
    free(set_drop(&t->strs, id));
}

static const struct jp_ent *tab_get(const struct jpack_tab *t, uint64_t id)
{
    return set_get(&t->strs, id);
}

static void shared_unref(struct jpack_tab *t, uint32_t id, int depth);

/* Give back the references refs->v[from..) (a value dropped, or packed again as shared). */
static void refs_give_back(struct jpack_tab *t, struct refs *r, size_t from)
{
    for (size_t i = from; i < r->n; i++) {
        if (r->v[i] & JP_SHR_BIT)
            shared_unref(t, r->v[i] & ~JP_SHR_BIT, 0);
        else
            tab_unref(t, r->v[i]);
    }
    r->n = from;
}

static void refs_push(struct refs *r, uint32_t id)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->v = xrealloc(r->v, r->cap * sizeof(*r->v));
    }
    r->v[r->n++] = id;
}

/* ---- encode ------------------------------------------------------------------ */

struct wr {
    uint8_t *p;
    size_t len, cap;
};

static void wr_need(struct wr *w, size_t n)
{
    if (w->len + n <= w->cap)
        return;
    while (w->len + n > w->cap)
        w->cap = w->cap ? w->cap * 2 : 256;
    w->p = xrealloc(w->p, w->cap);
}

static void wr_varint(struct wr *w, uint64_t v)
{
    wr_need(w, 10);
    while (v >= 0x80) {
        w->p[w->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    w->p[w->len++] = (uint8_t)v;
}

static void wr_tag(struct wr *w, unsigned type, uint64_t arg)
{
    wr_need(w, 11);
    if (arg < 15) {
        w->p[w->len++] = (uint8_t)(type | (arg << 4));
        return;
    }
    w->p[w->len++] = (uint8_t)(type | 0xf0);
    wr_varint(w, arg);
}

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Whether a string value goes into the table. Values that look unique (uids, timestamps,
 * resourceVersions and other numbers) cost more there (an entry, a slot) than inline, and
 * very short ones are as short inline as an id (measured with bench-store). */
static bool should_intern(const char *s, size_t n)
{
    if (n <= 2 || n > JP_INTERN_MAX)
        return false;
    size_t digits = 0;
    while (digits < n && s[digits] >= '0' && s[digits] <= '9')
        digits++;
    if (digits == n)
        return false;
    if (n >= 20 && digits == 4 && s[4] == '-' && s[7] == '-' && s[10] == 'T')
        return false; /* RFC 3339 */
    if (n == 36 && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-') {
        for (size_t i = 0; i < n; i++)
            if (i != 8 && i != 13 && i != 18 && i != 23 && !is_hex(s[i]))
                return true;
        return false; /* a uid */
    }
    return true;
}

/* ---- own fields as references -------------------------------------------------- */

/* The field (enum jp_ref) a member `k` of a container at `at` is, or -1. */
static int member_ref(enum jp_at at, const char *k, size_t n)
{
    if (at != AT_META && at != AT_OWNER0)
        return -1;
    int base = at == AT_META ? REF_UID : REF_OWNER_UID;
    if (n == 3 && memcmp(k, "uid", 3) == 0)
        return base;
    if (n == 4 && memcmp(k, "name", 4) == 0)
        return base + 1;
    return -1;
}

/* Where the container value of member `k` of a container at `at` is. */
static enum jp_at member_at(enum jp_at at, const char *k, size_t n, bool obj)
{
    if (at == AT_ROOT && obj && n == 8 && memcmp(k, "metadata", 8) == 0)
        return AT_META;
    if (at == AT_META && !obj && n == 15 && memcmp(k, "ownerReferences", 15) == 0)
        return AT_OWNERS;
    return AT_OTHER;
}

/* Where the container at index i of an array at `at` is. */
static enum jp_at elem_at(enum jp_at at, uint64_t i, bool obj)
{
    return at == AT_OWNERS && i == 0 && obj ? AT_OWNER0 : AT_OTHER;
}

/* The field s[0..n) equals, or -1. */
static int self_match(const struct jp_self *cx, const char *s, size_t n)
{
    for (int k = 0; k < JP_REFS; k++)
        if (cx->set[k] && cx->len[k] == n && memcmp(cx->s[k], s, n) == 0)
            return k;
    return -1;
}

/* Field `k` (or none, -1) is s[0..n): note it for the values that follow. */
static void self_note(struct jp_self *cx, int k, const char *s, size_t n)
{
    if (k < 0 || n == 0 || n > JP_REF_MAX || cx->set[k])
        return;
    memcpy(cx->s[k], s, n);
    cx->len[k] = n;
    cx->set[k] = true;
}

/* ---- uids and timestamps ------------------------------------------------------ */

/* The two string shapes every Kubernetes object repeats and that do not repeat across
 * objects: uids (an object's own, its owner's, its controller's in labels and selectors) and
 * RFC 3339 timestamps in seconds. Packed as 16 bytes and as a varint of seconds instead of
 * 38 and 22 bytes: a third of a packed Workload or Job (docs/performance.md "Uids and
 * timestamps packed as numbers"). Only the canonical forms, which decode to the very same
 * text: a lowercase uid, and "YYYY-MM-DDTHH:MM:SSZ" that formatting its seconds gives back. */

/* Days since 1970-01-01 of a proleptic Gregorian date (m 1..12), and back. Not
 * pkg/util/clock's parse and format: those go through libc's timegm and gmtime_r, and these
 * run for every timestamp of every object packed and decoded (the hot path of a dispatch). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* Seconds 0000-01-01T00:00:00Z .. 9999-12-31T23:59:59Z, the years of four digits. */
#define JP_TIME_MIN (-62167219200LL)
#define JP_TIME_MAX 253402300799LL

/* The text of `secs` (within JP_TIME_MIN..JP_TIME_MAX). */
static void time_text(int64_t secs, char out[20])
{
    int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
    int64_t rem = secs - days * 86400, y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    int v[6] = {(int)y, m, d, (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60)};
    static const char sep[] = "--T::Z";
    size_t o = 0;
    for (int i = 0; i < 6; i++) {
        if (i == 0) {
            out[o++] = (char)('0' + v[0] / 1000);
            out[o++] = (char)('0' + v[0] / 100 % 10);
        }
        out[o++] = (char)('0' + v[i] / 10 % 10);
        out[o++] = (char)('0' + v[i] % 10);
        out[o++] = sep[i];
    }
}

static bool time_secs(const char *s, size_t n, int64_t *secs)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
    if (n != 20)
        return false;
    for (size_t i = 0; i < 20; i++)
        if (shape[i] == 'd' ? s[i] < '0' || s[i] > '9' : s[i] != shape[i])
            return false;
#define D2(i) ((s[i] - '0') * 10 + (s[(i) + 1] - '0'))
    int y = D2(0) * 100 + D2(2), m = D2(5), d = D2(8), h = D2(11), mi = D2(14), sec = D2(17);
#undef D2
    if (m < 1 || m > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
        return false;
    *secs = days_from_civil(y, m, d) * 86400 + h * 3600 + mi * 60 + sec;
    char back[20];
    time_text(*secs, back);
    return memcmp(back, s, 20) == 0; /* February 30th and the like stay text */
}

static uint64_t zigzag(int64_t v)
{
    uint64_t u = (uint64_t)v;
    return (u << 1) ^ (0 - (u >> 63));
}

static int64_t unzigzag(uint64_t u)
{
    return (int64_t)((u >> 1) ^ (0 - (u & 1)));
}

/* The scalars as enc() and jpack_build write them. */
static void wr_int(struct wr *w, long long v)
{
    wr_tag(w, T_INT, zigzag(v));
}

static void wr_real(struct wr *w, double d)
{
    wr_tag(w, T_REAL, 0);
    wr_need(w, 8);
    memcpy(w->p + w->len, &d, 8);
    w->len += 8;
}

/* How a string value is packed (wr_str, for the encoder and the builder alike). */
enum str_form { SF_UUID, SF_TIME, SF_SID, SF_INLINE };

static enum str_form str_form(const char *s, size_t n, uint8_t uid[16], int64_t *secs)
{
    if (uid_to_bytes(s, n, uid))
        return SF_UUID;
    if (time_secs(s, n, secs))
        return SF_TIME;
    return should_intern(s, n) ? SF_SID : SF_INLINE;
}

/* Whether the hash h was seen lately (the window of share()), noting it when not. */
static bool seen_before(struct jpack_tab *t, uint32_t h)
{
    if (!t->seen)
        t->seen = xcalloc((size_t)1 << JP_SEEN_BITS, sizeof(*t->seen));
    uint32_t *slot = &t->seen[h & ((1u << JP_SEEN_BITS) - 1)];
    if (*slot == (h | 1u))
        return true;
    *slot = h | 1u;
    return false;
}

/* A long string (over JP_INTERN_MAX) as an interned one, a reference taken, when the table
 * holds it or it was packed lately (its second sighting within the window); else UINT32_MAX: it
 * stays inline. Workloads' admission check messages ("placed on cluster ... percent of its
 * capacity free") and the hub jobs' remote-status annotation repeat whole across objects
 * (docs/performance.md "Index records, long strings, pod records in the stores"). */
static uint32_t long_str_ref(struct jpack_tab *t, const char *s, size_t n)
{
    if (n > JP_SHARE_MAX)
        return UINT32_MAX;
    uint32_t h = jp_hash(s, n);
    uint32_t id = set_lookup(&t->strs, s, n, h);
    if (id != UINT32_MAX) {
        t->strs.ents[id]->refs++;
        return id;
    }
    return seen_before(t, h) ? set_add(&t->strs, s, n, h) : UINT32_MAX;
}

/* A string value: interned (its id, a reference taken) or not (UINT32_MAX). A name (`name`) is
 * never interned: an object's name is unique to it and the few objects that name it (a Job, its
 * copies, its Workload's owner reference), where an entry and its slot cost more than the bytes
 * inline (docs/performance.md "Names inline"). */
static uint32_t wr_str(struct jpack_tab *t, struct wr *w, struct seq *q, const char *s, size_t n,
                       bool name)
{
    uint8_t uid[16];
    int64_t secs = 0;
    enum str_form f = str_form(s, n, uid, &secs);
    if (f == SF_INLINE && n > JP_INTERN_MAX) {
        uint32_t id = long_str_ref(t, s, n);
        if (id != UINT32_MAX) {
            wr_tag(w, T_SID, id);
            return id;
        }
    }
    if (f == SF_UUID) {
        wr_tag(w, T_UUID, 0);
        wr_need(w, 16);
        memcpy(w->p + w->len, uid, 16);
        w->len += 16;
        return UINT32_MAX;
    }
    if (f == SF_TIME) {
        wr_tag(w, T_TIME, zigzag(secs));
        return UINT32_MAX;
    }
    if (f == SF_SID && !name) {
        uint32_t id = q ? seq_ref(t, q, s, n) : tab_ref(t, s, n);
        wr_tag(w, T_SID, id);
        return id;
    }
    wr_tag(w, T_STR, n);
    wr_need(w, n);
    memcpy(w->p + w->len, s, n);
    w->len += n;
    return UINT32_MAX;
}

/* A string value that may be one of the object's own fields (a reference then), and may be one
 * (`field`, -1 = not): interned (its id, a reference taken) or not (UINT32_MAX). */
static uint32_t wr_str_self(struct jpack_tab *t, struct wr *w, struct seq *q, struct jp_self *cx,
                            int field, const char *s, size_t n)
{
    int k = n ? self_match(cx, s, n) : -1;
    uint32_t id = UINT32_MAX;
    if (k >= 0)
        wr_tag(w, T_REF, (uint64_t)k);
    else
        id = wr_str(t, w, q, s, n, field == REF_NAME || field == REF_OWNER_NAME);
    self_note(cx, field, s, n);
    return id;
}

/*
 * The object or array just written at w->p[pos..w->len), nested in another, with the
 * references tk->v[tk0..): replaced by a reference to a shared copy when the table holds one
 * (its own references are given back), or when one with its hash was packed lately (the copy
 * is made then, and takes them). Pod templates, resource lists, label sets and owner
 * references repeat across the Jobs, their copies and their Workloads (docs/performance.md
 * "Shared containers").
 */
static void share(struct jpack_tab *t, struct wr *w, size_t pos, struct refs *tk, size_t tk0)
{
    size_t n = w->len - pos;
    if (n < JP_SHARE_MIN || n > JP_SHARE_MAX)
        return;
    const uint8_t *p = w->p + pos;
    uint32_t h = jp_hash_bytes(p, n);
    uint32_t id = set_lookup(&t->shared, p, n, h);
    if (id != UINT32_MAX) {
        t->shared.ents[id]->refs++;
        refs_give_back(t, tk, tk0);
    } else {
        if (!seen_before(t, h))
            return;
        id = set_add(&t->shared, p, n, h);
        tk->n = tk0; /* the copy's now */
    }
    w->len = pos;
    wr_tag(w, T_SHR, id);
    refs_push(tk, id | JP_SHR_BIT);
}

/* Encode v, a container at `at` when it is one, and the field `field` (-1: none) when a string. */
static int enc(struct jpack_tab *t, struct wr *w, struct refs *tk, struct jp_self *cx,
               const json_t *v, int depth, enum jp_at at, int field)
{
    if (depth > JPACK_MAX_DEPTH)
        return -1;
    switch (json_typeof(v)) {
    case JSON_NULL:
        wr_tag(w, T_NULL, 0);
        return 0;
    case JSON_TRUE:
        wr_tag(w, T_TRUE, 0);
        return 0;
    case JSON_FALSE:
        wr_tag(w, T_FALSE, 0);
        return 0;
    case JSON_INTEGER:
        wr_int(w, json_integer_value(v));
        return 0;
    case JSON_REAL:
        wr_real(w, json_real_value(v));
        return 0;
    case JSON_STRING: {
        uint32_t id =
            wr_str_self(t, w, NULL, cx, field, json_string_value(v), json_string_length(v));
        if (id != UINT32_MAX)
            refs_push(tk, id);
        return 0;
    }
    case JSON_OBJECT: {
        size_t pos = w->len, tk0 = tk->n;
        wr_tag(w, T_OBJ, json_object_size(v));
        const char *key;
        size_t klen;
        json_t *m;
        json_object_keylen_foreach((json_t *)v, key, klen, m)
        {
            uint32_t id = tab_ref(t, key, klen);
            refs_push(tk, id);
            wr_varint(w, id);
            if (enc(t, w, tk, cx, m, depth + 1, member_at(at, key, klen, json_is_object(m)),
                    member_ref(at, key, klen)) < 0)
                return -1;
        }
        if (depth)
            share(t, w, pos, tk, tk0);
        return 0;
    }
    case JSON_ARRAY: {
        size_t pos = w->len, tk0 = tk->n;
        wr_tag(w, T_ARR, json_array_size(v));
        size_t i;
        json_t *m;
        json_array_foreach(v, i, m)
        {
            if (enc(t, w, tk, cx, m, depth + 1, elem_at(at, i, json_is_object(m)), -1) < 0)
                return -1;
        }
        if (depth)
            share(t, w, pos, tk, tk0);
        return 0;
    }
    }
    return -1;
}

/* ---- build ------------------------------------------------------------------ */

struct jp_frame {
    size_t pos;   /* where the container's tag goes: its members follow */
    uint64_t n;   /* members so far */
    size_t key0;  /* objects: its keys' ids start at kids.v[key0] */
    size_t tk0;   /* its references start at taken.v[tk0] */
    uint64_t ids; /* objects: a bit per key id modulo 64: a key whose bit is clear is new */
    bool obj;
    bool keyed;      /* objects: a key came, its value not yet */
    uint8_t at;      /* enum jp_at */
    int8_t field;    /* objects: the field (enum jp_ref) the keyed member is, -1 = none */
    uint8_t kat_obj; /* objects: where the keyed member is when an object / an array */
    uint8_t kat_arr;
};

struct jpack_build {
    struct jpack_tab *t;
    struct wr w;
    struct jp_frame *st;
    size_t depth, cap_st;
    struct refs kids;      /* the key ids of the open objects, innermost last (no references) */
    struct refs taken;     /* every reference the value holds, to give back if it is dropped */
    bool done;             /* a whole value is built */
    struct jp_self cx;     /* the value's referable fields so far */
    struct seq keys, sids; /* the ids the value before took, by place (seq_ref) */
};

struct jpack_build *jpack_build_new(struct jpack_tab *t)
{
    struct jpack_build *b = xcalloc(1, sizeof(*b));
    b->t = t;
    return b;
}

void jpack_build_reset(struct jpack_build *b)
{
    refs_give_back(b->t, &b->taken, 0);
    b->kids.n = b->depth = b->w.len = 0;
    b->keys.at = b->sids.at = 0;
    b->done = false;
    memset(b->cx.set, 0, sizeof b->cx.set);
}

void jpack_build_free(struct jpack_build *b)
{
    if (!b)
        return;
    jpack_build_reset(b);
    free(b->w.p);
    free(b->st);
    free(b->kids.v);
    free(b->taken.v);
    free(b->keys.id);
    free(b->sids.id);
    free(b);
}

/* A value may come here: the top (once) or inside a container (after its key in an object). */
static int b_value(struct jpack_build *b)
{
    if (b->done)
        return -EINVAL;
    if (!b->depth)
        return 0;
    struct jp_frame *f = &b->st[b->depth - 1];
    if (!f->obj)
        f->n++;
    else if (!f->keyed)
        return -EINVAL; /* a member's value without its key */
    f->keyed = false;
    return 0;
}

/* After a value: the top one ends the build. */
static void b_after(struct jpack_build *b)
{
    if (!b->depth)
        b->done = true;
}

int jpack_build_open(struct jpack_build *b, bool obj)
{
    if (b->depth >= JPACK_MAX_DEPTH)
        return -E2BIG;
    enum jp_at at = AT_ROOT;
    if (b->depth) {
        const struct jp_frame *p = &b->st[b->depth - 1];
        at = p->obj ? (enum jp_at)(obj ? p->kat_obj : p->kat_arr) : elem_at(p->at, p->n, obj);
    } else if (!obj) {
        at = AT_OTHER;
    }
    int rc = b_value(b);
    if (rc < 0)
        return rc;
    if (b->depth == b->cap_st) {
        b->cap_st = b->cap_st ? b->cap_st * 2 : 16;
        b->st = xrealloc(b->st, b->cap_st * sizeof(*b->st));
    }
    b->st[b->depth++] = (struct jp_frame){.pos = b->w.len,
                                          .key0 = b->kids.n,
                                          .tk0 = b->taken.n,
                                          .obj = obj,
                                          .at = (uint8_t)at,
                                          .field = -1};
    return 0;
}

int jpack_build_close(struct jpack_build *b)
{
    if (!b->depth || b->st[b->depth - 1].keyed)
        return -EINVAL; /* nothing open, or a key without its value */
    struct jp_frame f = b->st[--b->depth];
    /* the tag with the count goes before the members, now that it is known */
    struct wr h = {0};
    uint8_t hb[11];
    h.p = hb;
    h.cap = sizeof hb;
    wr_tag(&h, f.obj ? T_OBJ : T_ARR, f.n);
    wr_need(&b->w, h.len);
    memmove(b->w.p + f.pos + h.len, b->w.p + f.pos, b->w.len - f.pos);
    memcpy(b->w.p + f.pos, hb, h.len);
    b->w.len += h.len;
    if (f.obj)
        b->kids.n = f.key0;
    if (b->depth) /* nested: as enc() shares it */
        share(b->t, &b->w, f.pos, &b->taken, f.tk0);
    b_after(b);
    return 0;
}

int jpack_build_key(struct jpack_build *b, const char *k, size_t n)
{
    if (!b->depth || !b->st[b->depth - 1].obj)
        return -EINVAL;
    struct jp_frame *f = &b->st[b->depth - 1];
    if (f->keyed)
        return -EINVAL; /* two keys in a row */
    if (b->kids.n - f->key0 >= JPACK_BUILD_MAX_KEYS)
        return -E2BIG; /* the repeat check is linear: a big object goes by its tree */
    uint32_t id = seq_ref(b->t, &b->keys, k, n);
    refs_push(&b->taken, id);
    uint64_t bit = (uint64_t)1 << (id & 63);
    for (size_t i = f->key0; (f->ids & bit) && i < b->kids.n; i++)
        if (b->kids.v[i] == id)
            return -EEXIST;
    f->ids |= bit;
    refs_push(&b->kids, id);
    f->n++;
    f->keyed = true;
    f->field = (int8_t)member_ref(f->at, k, n);
    f->kat_obj = (uint8_t)member_at(f->at, k, n, true);
    f->kat_arr = (uint8_t)member_at(f->at, k, n, false);
    wr_varint(&b->w, id);
    return 0;
}

int jpack_build_str(struct jpack_build *b, const char *s, size_t n)
{
    int field = b->depth && b->st[b->depth - 1].obj ? b->st[b->depth - 1].field : -1;
    int rc = b_value(b);
    if (rc < 0)
        return rc;
    uint32_t id = wr_str_self(b->t, &b->w, &b->sids, &b->cx, field, s, n);
    if (id != UINT32_MAX)
        refs_push(&b->taken, id);
    b_after(b);
    return 0;
}

int jpack_build_int(struct jpack_build *b, long long v)
{
    int rc = b_value(b);
    if (rc < 0)
        return rc;
    wr_int(&b->w, v);
    b_after(b);
    return 0;
}

int jpack_build_real(struct jpack_build *b, double d)
{
    int rc = b_value(b);
    if (rc < 0)
        return rc;
    wr_real(&b->w, d);
    b_after(b);
    return 0;
}

int jpack_build_lit(struct jpack_build *b, char which)
{
    int rc = b_value(b);
    if (rc < 0)
        return rc;
    wr_tag(&b->w, which == 't' ? T_TRUE : which == 'f' ? T_FALSE : T_NULL, 0);
    b_after(b);
    return 0;
}

size_t jpack_build_take(struct jpack_build *b, const uint8_t **out)
{
    *out = NULL;
    if (!b->done)
        return 0;
    size_t n = b->w.len;
    *out = b->w.p;
    b->taken.n = 0; /* the references are the bytes' now */
    jpack_build_reset(b);
    return n;
}

/* ---- readers ------------------------------------------------------------------ */

/* The fields T_REFs name, each looked up in the whole packed value when first needed
 * (ref_text): a reader of part of a value (jpack_get, a shared container) finds them too. */
struct jp_res {
    const uint8_t *root, *root_end;
    uint8_t state[JP_REFS]; /* RES_* */
    const char *s[JP_REFS];
    size_t n[JP_REFS];
    char scratch[JP_REFS][JPACK_SCRATCH]; /* the text of a uid or a timestamp */
};
enum { RES_UNKNOWN, RES_FOUND, RES_LOOKING, RES_ABSENT };

struct rd {
    const uint8_t *p, *end;
    const struct jpack_tab *t;
    struct jp_res *res; /* NULL: a reader that resolves no T_REF (skip) */
};

static void res_init(struct jp_res *res, const uint8_t *p, size_t len)
{
    res->root = p;
    res->root_end = p + len;
    memset(res->state, RES_UNKNOWN, sizeof res->state);
}

static bool rd_varint(struct rd *r, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (r->p == r->end)
            return false;
        uint8_t b = *r->p++;
        if (shift == 63 && b > 1)
            return false;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

static bool rd_tag(struct rd *r, unsigned *type, uint64_t *arg)
{
    if (r->p == r->end)
        return false;
    uint8_t b = *r->p++;
    *type = b & 0x0f;
    if (*type >= T_MAX)
        return false;
    if ((b >> 4) < 15) {
        *arg = b >> 4;
        return true;
    }
    return rd_varint(r, arg);
}

static size_t rd_left(const struct rd *r)
{
    return (size_t)(r->end - r->p);
}

static const struct jp_ent *rd_ent(struct rd *r)
{
    uint64_t id;
    return rd_varint(r, &id) ? tab_get(r->t, id) : NULL;
}

static bool time_ok(uint64_t arg)
{
    int64_t secs = unzigzag(arg);
    return secs >= JP_TIME_MIN && secs <= JP_TIME_MAX;
}

/* The text of a T_UUID or T_TIME value whose tag r just read (into out: 36 or 20 bytes);
 * its length, or 0 when the bytes are not one. */
static size_t rd_shaped(struct rd *r, unsigned type, uint64_t arg, char out[JPACK_SCRATCH])
{
    if (type == T_UUID) {
        if (arg || rd_left(r) < 16)
            return 0;
        uid_from_bytes(r->p, out);
        r->p += 16;
        return 36;
    }
    if (type != T_TIME || !time_ok(arg))
        return 0;
    time_text(unzigzag(arg), out);
    return 20;
}

/*
 * Skip one value, checking it. When `unref` is set, drop one reference for every interned
 * string in it, up to the first invalid byte.
 */
static bool skip(struct rd *r, int depth, struct jpack_tab *unref)
{
    unsigned type;
    uint64_t arg;
    if (depth > JPACK_MAX_DEPTH || !rd_tag(r, &type, &arg))
        return false;
    switch (type) {
    case T_REAL:
        if (rd_left(r) < 8)
            return false;
        r->p += 8;
        return true;
    case T_STR:
        if (arg > rd_left(r))
            return false;
        r->p += arg;
        return true;
    case T_UUID:
        if (arg || rd_left(r) < 16)
            return false;
        r->p += 16;
        return true;
    case T_TIME:
        return time_ok(arg);
    case T_REF:
        return arg < JP_REFS;
    case T_SID:
        if (!tab_get(r->t, arg))
            return false;
        if (unref)
            tab_unref(unref, (uint32_t)arg);
        return true;
    case T_SHR:
        if (!set_get(&r->t->shared, arg))
            return false;
        if (unref)
            shared_unref(unref, (uint32_t)arg, depth);
        return true;
    case T_OBJ:
        if (arg > rd_left(r))
            return false;
        for (uint64_t i = 0; i < arg; i++) {
            uint64_t id;
            if (!rd_varint(r, &id) || !tab_get(r->t, id))
                return false;
            if (unref)
                tab_unref(unref, (uint32_t)id);
            if (!skip(r, depth + 1, unref))
                return false;
        }
        return true;
    case T_ARR:
        if (arg > rd_left(r))
            return false;
        for (uint64_t i = 0; i < arg; i++)
            if (!skip(r, depth + 1, unref))
                return false;
        return true;
    default:
        return true;
    }
}

/* Drop a reference of shared container `id`; with the last one, the references it holds. */
static void shared_unref(struct jpack_tab *t, uint32_t id, int depth)
{
    struct jp_ent *e = set_drop(&t->shared, id);
    if (!e)
        return;
    struct rd r = {(const uint8_t *)e->s, (const uint8_t *)e->s + e->len, t};
    skip(&r, depth, t); /* the container is at the reference's depth */
    free(e);
}

/* rd_tag, reading through shared containers: what follows is the container's own bytes. */
static bool rd_tag_in(struct rd *r, unsigned *type, uint64_t *arg)
{
    for (int hops = 0; hops <= JPACK_MAX_DEPTH; hops++) {
        if (!rd_tag(r, type, arg))
            return false;
        if (*type != T_SHR)
            return true;
        const struct jp_ent *e = set_get(&r->t->shared, *arg);
        if (!e)
            return false;
        r->p = (const uint8_t *)e->s;
        r->end = r->p + e->len;
    }
    return false;
}

static const char *ref_text(const struct jpack_tab *t, struct jp_res *res, uint64_t k, size_t *n);

static json_t *dec(struct rd *r, int depth)
{
    unsigned type;
    uint64_t arg;
    if (depth > JPACK_MAX_DEPTH || !rd_tag(r, &type, &arg))
        return NULL;
    switch (type) {
    case T_NULL:
        return json_null();
    case T_TRUE:
        return json_true();
    case T_FALSE:
        return json_false();
    case T_INT:
        return json_integer((json_int_t)unzigzag(arg));
    case T_UUID:
    case T_TIME: {
        char text[JPACK_SCRATCH];
        size_t n = rd_shaped(r, type, arg, text);
        return n ? json_stringn_nocheck(text, n) : NULL;
    }
    case T_REAL: {
        if (rd_left(r) < 8)
            return NULL;
        double d;
        memcpy(&d, r->p, 8);
        r->p += 8;
        return json_real(d); /* NULL for NaN/inf: not something we encode */
    }
    case T_STR: {
        if (arg > rd_left(r))
            return NULL;
        const char *s = (const char *)r->p;
        r->p += arg;
        return json_stringn(s, arg); /* checks UTF-8 */
    }
    case T_SID: {
        const struct jp_ent *e = tab_get(r->t, arg);
        return e ? json_stringn_nocheck(e->s, e->len) : NULL;
    }
    case T_REF: {
        size_t n = 0;
        const char *s = ref_text(r->t, r->res, arg, &n);
        return s ? json_stringn(s, n) : NULL; /* inline bytes: UTF-8 checked here */
    }
    case T_SHR: {
        const struct jp_ent *e = set_get(&r->t->shared, arg);
        if (!e)
            return NULL;
        struct rd in = {(const uint8_t *)e->s, (const uint8_t *)e->s + e->len, r->t, r->res};
        json_t *v = dec(&in, depth); /* at the reference's depth: what the encoder counted */
        if (v && in.p != in.end) {
            json_decref(v);
            return NULL;
        }
        return v;
    }
    case T_OBJ: {
        if (arg > rd_left(r))
            return NULL;
        json_t *o = json_object();
        for (uint64_t i = 0; i < arg; i++) {
            const struct jp_ent *k = rd_ent(r);
            json_t *m = k ? dec(r, depth + 1) : NULL;
            if (!m || json_object_setn_new_nocheck(o, k->s, k->len, m) < 0) {
                json_decref(o);
                return NULL;
            }
        }
        return o;
    }
    case T_ARR: {
        if (arg > rd_left(r))
            return NULL;
        json_t *a = json_array();
        for (uint64_t i = 0; i < arg; i++) {
            json_t *m = dec(r, depth + 1);
            if (!m || json_array_append_new(a, m) < 0) {
                json_decref(a);
                return NULL;
            }
        }
        return a;
    }
    }
    return NULL;
}

/* ---- API ------------------------------------------------------------------------ */

size_t jpack_encode(struct jpack_tab *t, const json_t *v, uint8_t **out)
{
    *out = NULL;
    if (!v)
        return 0;
    struct wr w = {0};
    struct refs tk = {0};
    struct jp_self cx;
    memset(cx.set, 0, sizeof cx.set);
    int rc = enc(t, &w, &tk, &cx, v, 0, AT_ROOT, -1);
    if (rc < 0)
        refs_give_back(t, &tk, 0); /* those taken before the depth limit */
    free(tk.v);
    if (rc < 0) {
        free(w.p);
        return 0;
    }
    *out = xrealloc(w.p, w.len ? w.len : 1);
    return w.len;
}

json_t *jpack_decode(const struct jpack_tab *t, const uint8_t *p, size_t len)
{
    if (!p)
        return NULL;
    struct jp_res res;
    res_init(&res, p, len);
    struct rd r = {p, p + len, t, &res};
    json_t *v = dec(&r, 0);
    if (v && r.p != r.end) {
        json_decref(v);
        return NULL;
    }
    return v;
}

void jpack_release(struct jpack_tab *t, const uint8_t *p, size_t len)
{
    if (!p)
        return;
    struct rd r = {p, p + len, t};
    skip(&r, 0, t);
}

/* Move r to the value at `path` of the packed value it reads. false when absent or invalid. */
static bool seek_path(struct rd *r, const char *const *path)
{
    for (size_t d = 0; path[d]; d++) {
        unsigned type;
        uint64_t cnt;
        if (!rd_tag_in(r, &type, &cnt) || type != T_OBJ || cnt > rd_left(r))
            return false;
        size_t want = strlen(path[d]);
        uint64_t i = 0;
        for (; i < cnt; i++) {
            const struct jp_ent *k = rd_ent(r);
            if (!k)
                return false;
            if (want == k->len && memcmp(path[d], k->s, k->len) == 0)
                break;
            if (!skip(r, 1, NULL))
                return false;
        }
        if (i == cnt)
            return false;
    }
    return true;
}

const char *jpack_get_str(const struct jpack_tab *t, const uint8_t *p, size_t len,
                          const char *const *path, size_t *n, char scratch[JPACK_SCRATCH])
{
    if (!p || !path || !path[0])
        return NULL;
    struct rd r = {p, p + len, t, NULL};
    if (!seek_path(&r, path))
        return NULL;
    unsigned type;
    uint64_t arg;
    if (!rd_tag(&r, &type, &arg))
        return NULL;
    if (type == T_REF) {
        struct jp_res res;
        res_init(&res, p, len);
        const char *s = ref_text(t, &res, arg, n);
        for (int k = 0; s && k < JP_REFS; k++)
            if (s == res.scratch[k]) { /* a uid or a timestamp, written out */
                memcpy(scratch, s, *n);
                return scratch;
            }
        return s;
    }
    if (type == T_STR) {
        if (arg > rd_left(&r))
            return NULL;
        *n = arg;
        return (const char *)r.p;
    }
    if (type == T_SID) {
        const struct jp_ent *e = tab_get(t, arg);
        if (e)
            *n = e->len;
        return e ? e->s : NULL;
    }
    size_t sn = rd_shaped(&r, type, arg, scratch);
    if (!sn)
        return NULL;
    *n = sn;
    return scratch;
}

json_t *jpack_get(const struct jpack_tab *t, const uint8_t *p, size_t len, const char *const *path)
{
    if (!p || !path)
        return NULL;
    struct jp_res res;
    res_init(&res, p, len);
    struct rd r = {p, p + len, t, &res};
    return seek_path(&r, path) ? dec(&r, 0) : NULL;
}

/* ---- views: the members at several paths, one walk ----------------------------------- */

/* The paths of a view still looked for below the current member: path i's text from offs[i]
 * on, lens[i] bytes long in all. */
struct vw {
    const char *const *paths;
    const size_t *lens;
};

static json_t *view_val(struct rd *r, int depth, const struct vw *w, const size_t *idx,
                        const size_t *offs, size_t n, bool *bad);

/* The members of the object r is in (its `cnt` members next) at the paths idx/offs: an object
 * of those found (NULL: none). `open` (the root's): the paths whose first member has not come
 * yet, as bits; the walk ends once none is left, without reading the rest. */
static json_t *view_obj(struct rd *r, int depth, uint64_t cnt, const struct vw *w,
                        const size_t *idx, const size_t *offs, size_t n, uint64_t *open, bool *bad)
{
    if (cnt > rd_left(r)) {
        *bad = true;
        return NULL;
    }
    json_t *out = NULL;
    for (uint64_t i = 0; i < cnt && !*bad && (!open || *open); i++) {
        const struct jp_ent *k = rd_ent(r);
        if (!k) {
            *bad = true;
            break;
        }
        size_t sub[JPACK_VIEW_MAX], subo[JPACK_VIEW_MAX], ns = 0;
        bool whole = false;
        for (size_t j = 0; j < n; j++) {
            const char *seg = w->paths[idx[j]] + offs[j];
            size_t rem = w->lens[idx[j]] - offs[j];
            if (k->len > rem || memcmp(seg, k->s, k->len) != 0)
                continue;
            if (k->len == rem)
                whole = true;
            else if (seg[k->len] == '.') {
                sub[ns] = idx[j];
                subo[ns++] = offs[j] + k->len + 1;
            } else {
                continue;
            }
            if (open)
                *open &= ~((uint64_t)1 << idx[j]);
        }
        json_t *v = NULL;
        if (whole) {
            if (!(v = dec(r, depth + 1)))
                *bad = true;
        } else if (ns) {
            v = view_val(r, depth + 1, w, sub, subo, ns, bad);
        } else if (!skip(r, depth + 1, NULL)) {
            *bad = true;
        }
        if (v && !*bad) {
            if (!out)
                out = json_object();
            if (json_object_setn_new_nocheck(out, k->s, k->len, v) < 0)
                *bad = true;
        } else {
            json_decref(v);
        }
    }
    if (*bad) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* The value r is at, read for the paths idx/offs below it: what view_obj finds when it is an
 * object (through a shared container), else nothing (skipped). */
static json_t *view_val(struct rd *r, int depth, const struct vw *w, const size_t *idx,
                        const size_t *offs, size_t n, bool *bad)
{
    const uint8_t *at = r->p;
    unsigned type;
    uint64_t arg;
    if (depth > JPACK_MAX_DEPTH || !rd_tag(r, &type, &arg)) {
        *bad = true;
        return NULL;
    }
    if (type == T_OBJ)
        return view_obj(r, depth, arg, w, idx, offs, n, NULL, bad);
    if (type == T_SHR) {
        const struct jp_ent *e = set_get(&r->t->shared, arg);
        if (!e) {
            *bad = true;
            return NULL;
        }
        struct rd in = {(const uint8_t *)e->s, (const uint8_t *)e->s + e->len, r->t, r->res};
        return view_val(&in, depth, w, idx, offs, n, bad); /* at the reference's depth */
    }
    r->p = at;
    if (!skip(r, depth, NULL))
        *bad = true;
    return NULL;
}

json_t *jpack_view(const struct jpack_tab *t, const uint8_t *p, size_t len,
                   const char *const *paths)
{
    size_t lens[JPACK_VIEW_MAX], idx[JPACK_VIEW_MAX], offs[JPACK_VIEW_MAX], n = 0;
    if (!p || !paths)
        return NULL;
    for (; paths[n]; n++) {
        if (n == JPACK_VIEW_MAX)
            return NULL;
        lens[n] = strlen(paths[n]);
        idx[n] = n;
        offs[n] = 0;
    }
    struct jp_res res;
    res_init(&res, p, len);
    struct rd r = {p, p + len, t, &res};
    struct vw w = {paths, lens};
    bool bad = false;
    unsigned type;
    uint64_t arg;
    if (!rd_tag_in(&r, &type, &arg) || type != T_OBJ)
        return NULL;
    uint64_t open = ((uint64_t)1 << n) - 1; /* n <= JPACK_VIEW_MAX < 64 */
    json_t *out = view_obj(&r, 0, arg, &w, idx, offs, n, &open, &bad);
    if (bad)
        return NULL;
    return out ? out : json_object();
}

/* The text of field k (enum jp_ref) of the value res->root: where the encoder found it (a
 * T_REF only follows its field), looked up once per reader. NULL when absent, not a string,
 * invalid, or a loop of references (hostile bytes). */
static const char *ref_text(const struct jpack_tab *t, struct jp_res *res, uint64_t k, size_t *n)
{
    if (!res || k >= JP_REFS)
        return NULL;
    if (res->state[k] == RES_FOUND) {
        *n = res->n[k];
        return res->s[k];
    }
    if (res->state[k] != RES_UNKNOWN)
        return NULL;
    res->state[k] = RES_LOOKING;
    struct rd r = {res->root, res->root_end, t, res};
    bool ok;
    if (k == REF_UID || k == REF_NAME) {
        const char *const path[] = {"metadata", k == REF_UID ? "uid" : "name", NULL};
        ok = seek_path(&r, path);
    } else {
        const char *const owners[] = {"metadata", "ownerReferences", NULL};
        const char *const field[] = {k == REF_OWNER_UID ? "uid" : "name", NULL};
        unsigned type;
        uint64_t cnt;
        ok = seek_path(&r, owners) && rd_tag_in(&r, &type, &cnt) && type == T_ARR && cnt > 0 &&
             seek_path(&r, field);
    }
    const char *s = NULL;
    size_t len = 0;
    unsigned type;
    uint64_t arg;
    if (ok && rd_tag(&r, &type, &arg)) {
        if (type == T_STR) {
            if (arg <= rd_left(&r)) {
                s = (const char *)r.p;
                len = arg;
            }
        } else if (type == T_SID) {
            const struct jp_ent *e = tab_get(t, arg);
            if (e) {
                s = e->s;
                len = e->len;
            }
        } else if (type == T_REF) {
            s = ref_text(t, res, arg, &len);
        } else {
            len = rd_shaped(&r, type, arg, res->scratch[k]);
            s = len ? res->scratch[k] : NULL;
        }
    }
    res->state[k] = s ? RES_FOUND : RES_ABSENT;
    res->s[k] = s;
    res->n[k] = len;
    *n = len;
    return s;
}
