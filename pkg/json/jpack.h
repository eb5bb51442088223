/*
 * jpack: a jansson tree as one compact byte string, and back.
 *
 * What the informer stores of the big kinds keep instead of json_t trees
 * (docs/performance.md "Cached object size"): a jansson tree costs about 10
 * bytes of heap per byte of JSON (a hash table per object, an allocation per
 * key, string and number); a packed object is one allocation of about the
 * JSON's size or less.
 *
 * Format: one tag byte per value (type in the low 4 bits, a small argument
 * 0..14 in the high 4 bits, 15 = a varint follows): null, true, false,
 * integer (zigzag), real (8 bytes, the double's bits), string inline (length
 * then bytes), string interned (id), object (count, then key id + value per
 * member, in jansson's iteration order, which is insertion order), array
 * (count, values), and two string shapes as numbers: a lowercase uid (16
 * bytes) and an RFC 3339 timestamp in whole seconds, "YYYY-MM-DDTHH:MM:SSZ"
 * (zigzag seconds since 1970; only where formatting them gives the same text),
 * a shared container (id), and a reference to one of the object's own fields.
 *
 * Own fields: the root object's metadata.uid and metadata.name and those of its first owner
 * reference (metadata.ownerReferences[0]) are packed as any string; a string value packed
 * after one of them and equal to it is a one-byte reference (a Job's uid and name in its
 * selector and template labels, a Workload's template labels naming its job). A reader finds
 * the field where it is (jpack_get and jpack_get_str of a path too). So a Job's template is the
 * same bytes across the Jobs of a sweep, and shared.
 *
 * Sharing: an object or array nested in another, of JP_SHARE_MIN (jpack.c) packed bytes or
 * more, whose packed bytes were seen lately (a filter of recent hashes) or are in the table
 * already, is kept once in the table with a count of references, and each copy is its id:
 * a pod template repeats in a Job, its copies on the workers and its Workload, and across the
 * Jobs of a sweep. One seen once stays inline. So equal values may pack to different bytes
 * (compare decoded trees, never packed bytes).
 *
 * Interning: object keys always, and string values that are likely to repeat
 * across objects (see jpack.c: values that look unique by shape — uids and
 * timestamps that are not packed as numbers, all-digit strings such as
 * resourceVersions — stay inline: in the table they would cost more than their
 * bytes; so do names, metadata.name and the first owner reference's name, which
 * only their object and the few naming it hold). A value over 64 bytes is interned only once it
 * repeats (in the table already, or seen lately in the filter the shared containers use), so a
 * unique message stays inline and a repeated one is kept once.
 * The table (struct jpack_tab) counts one reference per occurrence in a
 * packed string; jpack_release() drops them, and a string goes from the table
 * when its last reference does. The creator owns the table; it can be shared
 * by several stores on one loop. Not thread-safe.
 *
 * The round trip is exact: json_equal() holds, integers stay integers (all of
 * json_int_t), reals keep their bits, strings may hold NUL bytes, object
 * member order is kept. jpack_decode() of any byte string (corrupted, hostile)
 * returns NULL instead of crashing or reading out of bounds.
 */
#ifndef KKS_JSON_JPACK_H
#define KKS_JSON_JPACK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jpack_tab;

/* An empty intern table. Never NULL. */
struct jpack_tab *jpack_tab_new(void);
/* Free the table (strings still referenced go with it). NULL is fine. */
void jpack_tab_free(struct jpack_tab *t);
/* Number of entries held: strings and shared containers. */
size_t jpack_tab_len(const struct jpack_tab *t);
/* Number of shared containers held. */
size_t jpack_tab_shared(const struct jpack_tab *t);
/* Approximate heap bytes held by the table (entries, slots). */
size_t jpack_tab_bytes(const struct jpack_tab *t);

/*
 * Encode `v` (borrowed) into a new byte string (*out, caller frees with free()
 * after jpack_release()), taking table references for its interned strings.
 * Returns the length, or 0 (*out = NULL) when v is NULL or nested deeper than
 * JPACK_MAX_DEPTH.
 */
#define JPACK_MAX_DEPTH 1024
size_t jpack_encode(struct jpack_tab *t, const json_t *v, uint8_t **out);

/* Decode `len` bytes into a new tree (new reference), or NULL when the bytes
 * are not a valid packed value for this table. */
json_t *jpack_decode(const struct jpack_tab *t, const uint8_t *p, size_t len);

/* Drop the table references a packed string took (call once per encode,
 * before freeing it). Meant for what jpack_encode() made: other bytes are
 * read safely, but release references up to their first invalid byte. */
void jpack_release(struct jpack_tab *t, const uint8_t *p, size_t len);

/*
 * The string at `path` (member names from the root, NULL-terminated) of a
 * packed object without decoding it: a pointer into the blob or the table
 * (valid while both are), or to its text written into `scratch` (a uid or a
 * timestamp, which are packed as numbers; valid while scratch is), its length
 * in *n. NULL when absent, not a string or the bytes are invalid.
 */
#define JPACK_SCRATCH 36
const char *jpack_get_str(const struct jpack_tab *t, const uint8_t *p, size_t len,
                          const char *const *path, size_t *n, char scratch[JPACK_SCRATCH]);
/* The value at `path` (as for jpack_get_str; an empty path is the whole value) decoded alone:
 * a new reference, or NULL when absent or the bytes are invalid. */
json_t *jpack_get(const struct jpack_tab *t, const uint8_t *p, size_t len, const char *const *path);

/*
 * A view of a packed object: a new object holding the members at the dotted `paths`
 * ("metadata.name", "status.conditions"; NULL-terminated, at most JPACK_VIEW_MAX) that it has,
 * each decoded whole, with the objects on their way (and nothing else of them), read in one
 * walk over the bytes, which ends once every path's first member has been read. A member
 * named by a path and by a longer one is decoded whole. A path is member names joined by '.',
 * as they are (a name with a '.' in it matches the path it spells, "a..b" names the member ""
 * of a). A path through something that is not an object finds nothing. {} when none is there;
 * NULL when `p` is not an object, the bytes read are invalid, or there are too many paths.
 */
#define JPACK_VIEW_MAX 32
json_t *jpack_view(const struct jpack_tab *t, const uint8_t *p, size_t len,
                   const char *const *paths);

/*
 * Packing without a tree: a value given piece by piece (what a text scanner reads, jscan.h's
 * jscan_walk) comes out as the bytes jpack_encode() makes of the tree it would build (given
 * the same table: what is shared depends on what the table has seen).
 * open/close frame an object (obj) or an array; in an object, key() before each value.
 * Each returns 0, -EINVAL when out of order (a second top-level value, a key outside an
 * object, two keys in a row, a value in an object without its key, a close with nothing
 * open or after a key without its value), -E2BIG past JPACK_MAX_DEPTH or past
 * JPACK_BUILD_MAX_KEYS members in one object (the repeat check is a linear scan: a huge
 * object would make it quadratic), or -EEXIST when a key repeats in an object (jansson keeps
 * the last value at the first one's place). After an error the builder must be reset, and
 * such a value be built from its tree (jpack_encode).
 */
#define JPACK_BUILD_MAX_KEYS 256
struct jpack_build;
/* A builder taking references in `t` (borrowed). Never NULL. */
struct jpack_build *jpack_build_new(struct jpack_tab *t);
/* Free it, dropping the references of a value not taken. NULL is fine. */
void jpack_build_free(struct jpack_build *b);
/* Drop the value being built (or built and not taken) and its references. */
void jpack_build_reset(struct jpack_build *b);
int jpack_build_open(struct jpack_build *b, bool obj);
int jpack_build_close(struct jpack_build *b);
int jpack_build_key(struct jpack_build *b, const char *k, size_t n);
int jpack_build_str(struct jpack_build *b, const char *s, size_t n);
int jpack_build_int(struct jpack_build *b, long long v);
int jpack_build_real(struct jpack_build *b, double d);
/* 't' true, 'f' false, anything else null. */
int jpack_build_lit(struct jpack_build *b, char which);
/*
 * The whole value built: its length, and its bytes in *out (the builder's: valid until the
 * builder's next call; copy them). Their table references go with them (jpack_release() them
 * when the copy goes), and the builder is ready for the next value. 0 (*out NULL) while the
 * value is not complete.
 */
size_t jpack_build_take(struct jpack_build *b, const uint8_t **out);

#endif
