/*
 * jscan: read one field of a JSON text without building a tree.
 *
 * A caller that needs only metadata.resourceVersion of a server's answer (a
 * write whose result is compared by resourceVersion) pays for a whole jansson
 * tree when it parses the body: an allocation per value and a hash per key,
 * then the frees. jscan_rv() walks the text once, allocating nothing but the
 * answer, and checks it as it goes.
 *
 * What it accepts is what jansson's json_loadb(data, n, 0, ...) accepts, so
 * a caller that switches to it sees the same bodies rejected: the top level
 * is an object or an array; strict UTF-8; no control characters in strings;
 * escapes \" \\ \/ \b \f \n \r \t \uXXXX with surrogate pairs matched and
 * no \u0000; numbers in JSON's grammar, integers within long long and reals
 * that do not overflow a double (strtod); true/false/null; at most
 * JSCAN_MAX_DEPTH nested values (jansson's JSON_PARSER_MAX_DEPTH); only
 * whitespace after the value. Duplicate keys: the last wins, as in jansson.
 * test/fuzz/fuzz_jscan.c checks both the verdict and the value against
 * jansson on arbitrary input.
 */
#ifndef KKS_JSON_JSCAN_H
#define KKS_JSON_JSCAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pkg/util/err.h"

#define JSCAN_MAX_DEPTH 2048

/*
 * Check the JSON text data[0..n) and find the string at metadata.resourceVersion of its
 * top-level object. Returns 0 with *rv a new string (escapes decoded; the caller frees), or
 * *rv NULL when the top level is not an object, metadata is absent or not an object, or
 * resourceVersion is absent or not a string. Returns -EBADMSG with *rv NULL and a message
 * in `e` ("invalid JSON at byte P: what") when the text is not JSON.
 */
int jscan_rv(const char *data, size_t n, char **rv, struct err *e);
/*
 * jscan_rv() for a server's answer to a write, which is read for its resourceVersion alone:
 * back as soon as the first string at the top level's metadata.resourceVersion is read (the
 * text up to there checked as jscan_rv() checks it, the rest not read: a truncated answer
 * ends the request in error before it gets here). The first of duplicate keys wins, where
 * jscan_rv() takes the last as jansson does. The answer's resourceVersion comes before its
 * spec and status (and before managedFields on a real API server), so most of the text is
 * not scanned.
 */
int jscan_rv_head(const char *data, size_t n, char **rv, struct err *e);

/*
 * Parse the JSON text data[0..n) into a jansson tree: what json_loadb(data, n, 0, ...)
 * returns (same values, same key order, the last of duplicate keys), for less: one pass over
 * the text, strings copied once, no per-character lexer calls. A new reference, or NULL with
 * -EBADMSG and a message in `e` ("invalid JSON at byte P: what").
 */
json_t *jscan_load(const char *data, size_t n, struct err *e);

/*
 * A consumer of jscan_walk()'s values, in the text's order. Each callback returns 0 to go on,
 * or a negative code that stops the walk and is what jscan_walk() returns. open/close frame an
 * object (obj = true) or an array; inside an object each value comes after its key(). key()
 * may also return 1: that member's value is still checked but nothing in it is reported (a
 * projection that drops it pays no more than the scan). Strings are decoded (escapes), not
 * NUL-terminated when they point into the text; a key stays valid until the next key(), a
 * string only during its call. literal() gets 't', 'f' or 'n'.
 */
struct jscan_sink {
    int (*open)(void *ud, bool obj);
    int (*close)(void *ud, bool obj);
    int (*key)(void *ud, const char *k, size_t n);
    int (*string)(void *ud, const char *s, size_t n);
    int (*integer)(void *ud, long long v);
    int (*real)(void *ud, double v);
    int (*literal)(void *ud, char which);
};

/*
 * Check data[0..n) as jscan_load() does and report its values to `k` as they are read: what
 * builds a tree (jscan_load) or a packed object (jpack_build) without the other. 0; -EBADMSG
 * with a message in `e` when the text is not JSON (what was reported before the error is
 * the text's up to there); or a callback's negative code (e untouched: the callback's to set).
 */
int jscan_walk(const char *data, size_t n, const struct jscan_sink *k, void *ud, struct err *e);

/*
 * jscan_load() keeping only the members at `paths` (dotted, NULL-terminated: "metadata.name",
 * "spec.containers.resources"; at most JSCAN_PATHS_MAX paths of at most JSCAN_PATH_SEGS_MAX
 * segments): a member named by a path's last segment is kept whole, one on the way to it
 * keeps only what the paths name below it, the rest is checked as jscan_load() checks it but
 * not built. Arrays are transparent: their elements are matched against the same segments
 * ("spec.containers.resources" keeps each container's resources). A member on the way whose
 * value is not an object or array is kept as it is. The text is accepted or refused exactly
 * as by jscan_load(). paths NULL: jscan_load(). A new reference, or NULL with -EBADMSG (not
 * JSON) or -EINVAL (paths beyond the limits) and a message in `e`.
 */
#define JSCAN_PATHS_MAX     64
#define JSCAN_PATH_SEGS_MAX 8
json_t *jscan_load_paths(const char *data, size_t n, const char *const *paths, struct err *e);
/* 0 when jscan_load_paths() takes `paths` (NULL is fine), else -EINVAL with a message. */
int jscan_paths_check(const char *const *paths, struct err *e);

/*
 * `paths` split once, for a caller that loads many texts with them (a store, a watch): a new
 * set in *out (NULL for paths NULL), or -EINVAL as jscan_paths_check(). The set owns copies
 * of the strings. Free with jscan_paths_free() (NULL is fine). In a path a backslash makes
 * the next character part of the segment, as in jsonx.h's paths (in C source:
 * "metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration"); a path
 * ending in one is refused. jsonx.h's "[N]" indexes are not jscan paths: arrays are
 * transparent.
 */
struct jscan_paths;
int jscan_paths_new(const char *const *paths, struct jscan_paths **out, struct err *e);
/*
 * jscan_paths_new() with members left out: a member at one of `drop`'s paths is checked but
 * not built, also inside a member kept whole ("metadata.managedFields": what a real API server
 * adds to every object and a lean store drops, the larger part of its tree). Drop paths go
 * through objects only: inside an array nothing is dropped. keep NULL: all the rest; drop
 * NULL: as jscan_paths_new(keep). At most JSCAN_PATHS_MAX drop paths, of the same shape.
 */
int jscan_paths_new_drop(const char *const *keep, const char *const *drop, struct jscan_paths **out,
                         struct err *e);
void jscan_paths_free(struct jscan_paths *ps);
/* jscan_load_paths() with a set from jscan_paths_new() or _new_drop() (NULL: jscan_load()). */
json_t *jscan_load_with(const char *data, size_t n, const struct jscan_paths *ps, struct err *e);
/*
 * jscan_load_with() that ends at the first top-level key after every path's top-level member
 * was read (the answer's "spec" for paths under "metadata"): the text after it is not read
 * (not checked either), so a top-level key given again after that point is not read. For a
 * server's answer to a write whose metadata alone is read. ps NULL or without keep paths:
 * jscan_load_with().
 */
json_t *jscan_load_head(const char *data, size_t n, const struct jscan_paths *ps, struct err *e);

#endif
