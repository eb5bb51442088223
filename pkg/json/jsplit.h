/*
 * jsplit: a Kubernetes list body ({"kind":..,"metadata":..,"items":[..]}) split into its
 * items without a tree of the whole.
 *
 * A list parsed whole holds every item's tree at once (about 10 bytes of heap per byte of
 * JSON: 10,000 Workloads are 100 MB and more); an informer that keeps only a projection of
 * each item needs one item's tree at a time. jsplit_list() walks the text once to find the
 * top-level object's "items" array and the span of each of its elements; the caller loads
 * them one by one (jsplit_item()).
 *
 * What is accepted is what jscan_load() (json_loadb) accepts for the whole text: the list
 * without its items (the text with the array replaced by []) is loaded by jscan_load(), each
 * item by jscan_load() when it is read, and the array's own punctuation is checked here; so a
 * caller that reads every item sees the same texts rejected (nesting depth counts from the
 * item, 2 levels less than from the top). Anything else (items not an array of objects, an
 * "items" key written with escapes or twice) is loaded whole into `rest` as before, with no
 * spans: the caller reads rest's "items" as it would a tree.
 */
#ifndef KKS_JSON_JSPLIT_H
#define KKS_JSON_JSPLIT_H

#include <jansson.h>
#include <stddef.h>

#include "pkg/util/err.h"

struct jsplit_span {
    size_t off, len;
};

struct jsplit {
    json_t *rest;              /* the top level without "items" when split (new reference) */
    struct jsplit_span *items; /* the items' spans in the text, in order (owned) */
    size_t n;                  /* items split out (0: none, or nothing was split: see rest) */
    const char *data;          /* the text (borrowed) */
};

/*
 * Split data[0..n) (borrowed: must outlive `out`). 0, or -EBADMSG with a message ("invalid
 * JSON at byte P: what") when the text outside the items is not JSON, or the whole when it
 * was not split (which is what a wrong punctuation of the items array leads to). `rest` has no
 * "items" when they were split. Release `out` in any case.
 */
int jsplit_list(const char *data, size_t n, struct jsplit *out, struct err *e);
/* Item i (< out->n) as a new tree, or NULL with -EBADMSG in `e` when it is not JSON. */
json_t *jsplit_item(const struct jsplit *l, size_t i, struct err *e);
/* Free what `l` holds. */
void jsplit_release(struct jsplit *l);

#endif
