/*
 * sel: Kubernetes label selectors and field selectors.
 *
 * Label selector strings follow k8s.io/apimachinery/pkg/labels:
 *
 *   a=b, a==b, a!=b, a in (x,y), a notin (x), a, !a, a>3, a<3
 *
 * requirements separated by commas, whitespace allowed between tokens. Keys
 * are qualified names (optional DNS-subdomain prefix: "example.com/name",
 * name at most 63 characters of [A-Za-z0-9-_.] starting and ending
 * alphanumeric); values are at most 63 characters of the same alphabet
 * (empty allowed). "a in ()" and "a=" mean the empty value. The empty string
 * selects everything.
 *
 * Matching: = / in need the key present with one of the values; != / notin
 * match when the key is absent or has another value; "a" needs the key, "!a"
 * its absence; > / < need the key with an integer value. All requirements
 * must match.
 *
 * Canonical form (sel_format): requirements sorted by key (stable), values
 * sorted and de-duplicated, "==" written "=", no spaces except around
 * in/notin: "a=b,c!=d,e in (x,y),f notin (z),g,!h". It parses back to an
 * equal selector and is what a labelSelector= query parameter carries.
 *
 * Field selectors follow k8s.io/apimachinery/pkg/fields: terms
 * "path=value", "path==value", "path!=value" separated by commas; in values
 * a backslash escapes "\", "," and "=" (an unescaped "," or "=" in a value is
 * an error). Terms are matched against a JSON object by dotted path
 * ("metadata.name", "spec.nodeName"); an absent field reads as "", booleans
 * and integers as their decimal text.
 *
 * Errors name the input and the byte position:
 *   selector "a in (x": missing ")" at position 7
 * All parsers return 0, -EINVAL (syntax / validation) or -E2BIG (input longer
 * than SEL_MAX_LEN); they never crash on bad input.
 */
#ifndef KKS_LABELS_SEL_H
#define KKS_LABELS_SEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pkg/util/err.h"

#define SEL_MAX_LEN (64 * 1024)

enum sel_op {
    SEL_OP_EQ,         /* a=b, a==b, matchLabels */
    SEL_OP_NEQ,        /* a!=b */
    SEL_OP_IN,         /* a in (x,y) */
    SEL_OP_NOTIN,      /* a notin (x,y) */
    SEL_OP_EXISTS,     /* a */
    SEL_OP_NOT_EXISTS, /* !a */
    SEL_OP_GT,         /* a>3 */
    SEL_OP_LT,         /* a<3 */
};

struct sel_req {
    char *key;
    enum sel_op op;
    char **values; /* sorted, unique; 1 for EQ/NEQ/GT/LT, >= 1 for IN/NOTIN, 0 otherwise */
    size_t nvalues;
};

/* A parsed label selector. Read-only for users; free with sel_free. */
struct sel {
    struct sel_req *reqs; /* sorted by key */
    size_t n;
    bool nothing; /* matches no object (a nil LabelSelector) */
};

/* A label as a key/value pair (both borrowed). */
struct sel_label {
    const char *key;
    const char *value;
};

/* Parse a selector string. *out is a new selector (free with sel_free). */
int sel_parse(const char *s, struct sel **out, struct err *e);

/*
 * Convert a metav1.LabelSelector JSON object ({matchLabels, matchExpressions}).
 * NULL or JSON null gives a selector that matches nothing (Kubernetes' nil
 * selector); {} matches everything. Errors name the field:
 *   matchExpressions[1].values: must be non-empty for operator In
 */
int sel_from_label_selector(const json_t *ls, struct sel **out, struct err *e);

/* New selectors matching everything / nothing. */
struct sel *sel_everything(void);
struct sel *sel_nothing(void);
void sel_free(struct sel *s);

bool sel_is_everything(const struct sel *s);
bool sel_is_nothing(const struct sel *s);

/* Does the label set match? labels: a JSON object of strings (borrowed); NULL = no labels. */
bool sel_matches(const struct sel *s, const json_t *labels);
bool sel_matches_kv(const struct sel *s, const struct sel_label *labels, size_t n);

/*
 * Canonical string (see above). New string; "" for everything. A "nothing"
 * selector cannot be written as a string: it also formats as "", so check
 * sel_is_nothing() before using the text as a query.
 */
char *sel_format(const struct sel *s);

/* Same requirements (after canonicalisation)? */
bool sel_equal(const struct sel *a, const struct sel *b);

/* When the selector requires key=value (EQ, or IN with one value), that value (borrowed); else
 * NULL. Useful to look objects up in a label index instead of scanning. */
const char *sel_exact_value(const struct sel *s, const char *key);

/* Validation of label keys / values: 0 or -EINVAL with a message naming the input. */
int sel_validate_key(const char *key, struct err *e);
int sel_validate_value(const char *value, struct err *e);

/* ---- field selectors ---------------------------------------------------------- */

enum sel_field_op { SEL_FIELD_EQ, SEL_FIELD_NEQ };

struct sel_field_term {
    char *field; /* dotted path */
    enum sel_field_op op;
    char *value; /* unescaped */
};

struct sel_field {
    struct sel_field_term *terms; /* sorted by their canonical text */
    size_t n;
};

/* Parse "metadata.name=x,metadata.namespace!=y". "" selects everything. New selector. */
int sel_field_parse(const char *s, struct sel_field **out, struct err *e);
void sel_field_free(struct sel_field *f);
/* Does the object (borrowed) match every term? */
bool sel_field_matches(const struct sel_field *f, const json_t *obj);
/* Canonical text ("==" written "=", values escaped, sorted). New string. */
char *sel_field_format(const struct sel_field *f);
bool sel_field_equal(const struct sel_field *a, const struct sel_field *b);
/* Value required by a field=value term for `field` (borrowed), or NULL. */
const char *sel_field_exact_value(const struct sel_field *f, const char *field);

#endif
