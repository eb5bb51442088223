/*
 * jsplit: a Kubernetes list body ({"kind":..,"metadata":..,"items":[..]}) split into its
 * items as it arrives, without holding the whole text or a tree of it.
 *
 * A list held whole before it is read costs its size once more for every list in flight
 * (10,000 Workloads are 40 MB of JSON and more, 20,000 real pods 100 MB); a tree of it ten
 * times that. An informer keeps only a projection of each item, so it needs one item's text
 * at a time. The text is fed in pieces (jsplit_feed(): a response body as libcurl hands it
 * over); each element of the top-level object's "items" array goes to the callback as soon as
 * its last byte is in, and the rest of the text (the list without its items, small) is
 * loaded at the end (jsplit_finish()).
 *
 * What is accepted is what jscan_load() (json_loadb) accepts for the whole text, when the
 * callback loads each item (nesting depth counts from the item, 2 levels less than from the
 * top), with one exception: a list whose items were split and whose top level names a member
 * twice is refused ("items" twice would make the split items the wrong ones; jansson keeps
 * the last). The array's punctuation is checked here, each item by whoever loads it, the
 * rest by jscan_load() at the end. Anything not split (an "items" key written with escapes,
 * "items" not an array, a top level that is not an object) stays in the rest, loaded as a
 * tree: the caller reads rest's "items" as it would a tree.
 *
 * Items are handed over with the members that came before the array (`list`): the list's
 * kind and apiVersion, which the items need. When a member named in `needed` comes only
 * after the items, the items are held (their text) and handed over from jsplit_finish() with
 * the whole rest instead, in order.
 */
#ifndef KKS_JSON_JSPLIT_H
#define KKS_JSON_JSPLIT_H

#include <jansson.h>
#include <stddef.h>

#include "pkg/util/err.h"

struct jsplit;

/* Item i's text (n bytes, borrowed for the call); list: the top level as far as it is
 * known without the items (borrowed). 0, or negative with `e` set to stop the split. */
typedef int (*jsplit_item_cb)(void *ud, const json_t *list, size_t i, const char *text, size_t n,
                              struct err *e);

/*
 * A splitter. needed: NULL-terminated top-level member names the callback reads from
 * `list` (may be NULL); max_hold: the most bytes held at once for one item or for the rest
 * (beyond: -EFBIG). Never NULL.
 */
struct jsplit *jsplit_new(const char *const *needed, size_t max_hold, jsplit_item_cb cb, void *ud);
/*
 * The next n bytes of the text. 0; -EBADMSG with a message ("invalid JSON at byte P: what",
 * P counted from the text's start) when the items array's punctuation is wrong or what came
 * before it is not JSON; -EFBIG when an item or the rest exceeds max_hold; or the callback's
 * code. After an error every call returns it again.
 */
int jsplit_feed(struct jsplit *s, const char *data, size_t n, struct err *e);
/*
 * The text has ended: the top level without the split items (a new reference; no "items"
 * member when they were split), after handing over any items held. NULL with -EBADMSG
 * when the text is not JSON (or ends early: "invalid JSON at byte P", P counted in the
 * text without its items), or the error of a feed or the callback. Once per splitter:
 * after it every call returns -EINVAL.
 */
json_t *jsplit_finish(struct jsplit *s, struct err *e);
/* Items handed over so far. */
size_t jsplit_count(const struct jsplit *s);
/* Whether an items array was split out of the text (so far). */
int jsplit_did_split(const struct jsplit *s);
void jsplit_free(struct jsplit *s);

#endif
