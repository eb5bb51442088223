/*
 * table: the `meta.k8s.io/v1 Table` response body that `kubectl get` asks
 * for (Accept: application/json;as=Table;v=v1;g=meta.k8s.io), built the way
 * the apiserver builds it:
 *
 *   - built-in kinds use the apiserver's printers (pkg/printers/internalversion):
 *     Namespace, Node, Pod, Job, Deployment, Secret, ConfigMap, ServiceAccount,
 *     Service, Event (core and events.k8s.io), Lease, RoleBinding and
 *     ClusterRoleBinding. Columns with priority 1
 *     are the ones `-o wide` adds; the server always sends every column;
 *   - other built-ins get the default convertor: Name, Created At (RFC 3339);
 *   - custom resources use the CRD version's additionalPrinterColumns
 *     (name/type/format/description/priority/jsonPath); with none, Name and Age.
 *     Cells: string -> text, integer/number/boolean -> JSON values, date -> age;
 *     a path with no result gives a null cell.
 *   - ages use apimachinery's duration.HumanDuration ("45s", "2m30s", "5m",
 *     "3h20m", "2d3h", "1y30d"); a missing timestamp is "<unknown>".
 *   - each row carries `object`: a PartialObjectMetadata (includeObject=Metadata,
 *     the default), the whole object (Object) or nothing (None).
 *
 * The jsonPath subset: `.a.b`, `.a[0].b`, `.a[-1]`, `.a[*].b`, slices `.a[-1:].b`
 * `.a[1:3]`, `.a['k.with.dots']`,
 * `.a.k\.with\.dots`, `.a[?(@.type=="Ready")].status` (== and != against a
 * quoted string, a number, true/false), optional `{...}` braces and leading `$`.
 */
#ifndef KKS_DEVHUB_TABLE_H
#define KKS_DEVHUB_TABLE_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

#include "pkg/util/err.h"

enum table_include {
    TABLE_INCLUDE_METADATA = 0, /* default */
    TABLE_INCLUDE_NONE,
    TABLE_INCLUDE_OBJECT,
};

struct table_opts {
    enum table_include include;
    time_t now;                   /* reference time for ages (wall clock, injected for tests) */
    const char *resource_version; /* list resourceVersion for metadata, may be NULL */
    const char *continue_token;   /* metadata.continue when paging, may be NULL */
    /* With includeObject=Object: the kind and apiVersion set on each row's object when the
     * item lacks them (list items of built-in kinds do), as kube-apiserver embeds whole
     * objects; kubectl --sort-by decodes them. May be NULL. */
    const char *kind, *api_version;
};

/* How one resource prints; opaque. */
struct table_printer;

/*
 * Parse the includeObject query parameter: NULL or "" -> Metadata;
 * "None" | "Metadata" | "Object". 0 or -EINVAL (the apiserver answers 400).
 */
int table_parse_include(const char *s, enum table_include *out, struct err *e);

/*
 * The built-in printer of group/kind ("" for core), or the default
 * (Name, Created At) convertor when the kind has none. Never NULL.
 */
struct table_printer *table_printer_builtin(const char *group, const char *kind);

/*
 * A printer from a CRD version's `additionalPrinterColumns` array (borrowed;
 * NULL or empty -> Name and Age). Returns NULL with -EINVAL in `e` when a
 * column lacks name/type/jsonPath or the type is unknown.
 */
struct table_printer *table_printer_crd(const json_t *columns, struct err *e);

void table_printer_free(struct table_printer *p);

/*
 * Build the Table for `items` (a JSON array of objects, borrowed; a single
 * get is an array of one). Returns a new reference.
 */
json_t *table_build(const struct table_printer *p, const json_t *items, const struct table_opts *o);

/* duration.HumanDuration of `seconds` into buf ("<invalid>" below -1 s). Returns buf. */
char *table_human_duration(double seconds, char *buf, size_t n);

/*
 * The age of RFC 3339 timestamp `ts` at `now` as HumanDuration; "<unknown>"
 * when ts is NULL, empty or unparsable. Returns buf.
 */
char *table_age(const char *ts, time_t now, char *buf, size_t n);

/*
 * Evaluate the jsonPath subset on `obj` (borrowed). On success *out is a new
 * JSON array of the matches (borrowed values copied by reference, possibly
 * empty). -EINVAL for a syntax error.
 */
int table_jsonpath(const char *expr, const json_t *obj, json_t **out, struct err *e);

#endif
