/*
 * select: label and field selectors as the devhub evaluates them for list,
 * watch and deletecollection.
 *
 * Labels: comma-separated requirements `k`, `!k`, `k=v`, `k==v`, `k!=v`,
 * `k in (a,b)`, `k notin (a,b)`; all must hold.
 * Fields: `path=v`, `path==v`, `path!=v`, comma-separated; path is a dotted
 * field path such as metadata.name, metadata.namespace, spec.nodeName,
 * status.phase, involvedObject.name. A missing field compares as "".
 *
 * TODO(values): switch the label parser to pkg/labels once the values branch
 * is merged; the API here stays the same.
 */
#ifndef KKS_DEVHUB_SELECT_H
#define KKS_DEVHUB_SELECT_H

#include <jansson.h>
#include <stdbool.h>

#include "pkg/util/err.h"

struct sel;

/* Parse; *out is a new selector (free with sel_free). -EINVAL with a message. */
int sel_parse_labels(const char *s, struct sel **out, struct err *e);
int sel_parse_fields(const char *s, struct sel **out, struct err *e);
/* labels: the object's metadata.labels (may be NULL). A NULL selector matches all. */
bool sel_match_labels(const struct sel *s, json_t *labels);
/* obj: the whole object. */
bool sel_match_fields(const struct sel *s, json_t *obj);
/* Move the requirements of b into a (b is freed). */
void sel_and(struct sel *a, struct sel *b);
void sel_free(struct sel *s);

#endif
