/*
 * yaml2json: the project's one YAML reader. Converts YAML (libyaml event
 * API) into jansson trees, the way Kubernetes' sigs.k8s.io/yaml YAMLToJSON
 * does it, so a manifest or kubeconfig means here what it means to kubectl.
 *
 * Scalar resolution (plain, untagged scalars), checked against
 * sigs.k8s.io/yaml, whose YAMLToJSON decodes with its goyaml.v2 fork:
 *   - "", "~", null, Null, NULL                 -> null
 *   - true/True/TRUE, false/False/FALSE          -> bool
 *   - YAML 1.1 booleans y/Y/yes/Yes/YES/on/On/ON and n/N/no/No/NO/off/Off/OFF
 *     -> bool as well. goyaml.v2 resolves them so, hence `kubectl apply` sends
 *     `value: yes` as true (the "Norway problem"). Quote them to get strings.
 *   - integers as Go's strconv.ParseInt(s, 0, 64) after removing '_':
 *     decimal, 0x hex, 0o or leading-0 octal, 0b binary, optional sign.
 *     Values beyond int64 but within uint64 become JSON reals (jansson has no
 *     uint64); anything bigger stays a string.
 *   - floats: [-+]?(.d+|d+(.d*)?)([eE][-+]?d+)?; ".inf"/".nan" are errors
 *     (JSON cannot represent them, as with Go's json.Marshal).
 *   - everything else, including timestamps, is a string.
 * Quoted scalars and scalars tagged `!` or `!!str` are always strings;
 * `!!int`, `!!float`, `!!bool` and `!!null` tags force that type (an error if
 * the text does not fit); other tags are ignored.
 *
 * Mapping keys become strings: ints are printed in decimal, booleans as
 * "true"/"false" (so a plain `on:` key is "true", like kubectl), floats keep
 * their text; null or collection keys are an error. A repeated key: the last
 * value wins (non-strict decoding, as kubectl). Merge keys (`<<: *base`, also
 * a sequence of mappings) are applied; explicit keys win over merged ones.
 *
 * Anchors and aliases are resolved by copying (the result is a tree, never a
 * DAG); an alias to an undefined anchor is an error. Copies count against
 * max_alias_nodes (billion-laughs guard); nesting is capped by max_depth
 * (including the depth an alias expands to), the total node count by
 * max_nodes and the input by max_input.
 *
 * Errors: negative errno-style codes (-EINVAL bad input, -E2BIG a cap was
 * hit). Messages that refer to a place in the input start with
 * "LINE:COLUMN: " (1-based), so a caller can print "FILE:LINE:COLUMN: ..."
 * by prepending "FILE:". Syntax errors read "L:C: YAML syntax error: ...".
 */
#ifndef KKS_YAML_YAML2JSON_H
#define KKS_YAML_YAML2JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pkg/util/err.h"

#define YAML_DEFAULT_MAX_INPUT       (64u << 20) /* 64 MiB: large CRD bundles */
#define YAML_DEFAULT_MAX_DEPTH       512
#define YAML_DEFAULT_MAX_NODES       (4u << 20)
#define YAML_DEFAULT_MAX_ALIAS_NODES 100000

/* Caps; a zero field means the YAML_DEFAULT_* value. */
struct yaml_limits {
    size_t max_input;       /* bytes of input */
    unsigned max_depth;     /* nested mappings/sequences */
    size_t max_nodes;       /* scalars + collections in the result, alias copies included */
    size_t max_alias_nodes; /* nodes produced by expanding aliases */
};

/*
 * Convert a single-document YAML text of `len` bytes (need not be
 * NUL-terminated). An empty stream or empty document gives JSON null. A
 * stream with more than one document is an error (use yaml_to_json_all).
 * `lim` may be NULL (defaults). Returns a new reference, or NULL with `e`
 * filled.
 */
json_t *yaml_to_json(const char *data, size_t len, const struct yaml_limits *lim, struct err *e);

/*
 * Convert a multi-document stream ("---" separated) into a JSON array with
 * one element per document, in order. Documents that are empty or null are
 * skipped, as kubectl does. Returns a new reference (possibly an empty array),
 * or NULL with `e` filled. Caps apply to the whole stream.
 */
json_t *yaml_to_json_all(const char *data, size_t len, const struct yaml_limits *lim,
                         struct err *e);

/*
 * Read the file `path` and convert it like yaml_to_json_all (multi = true)
 * or yaml_to_json (multi = false). Messages start with "PATH: " or
 * "PATH:LINE:COLUMN: ". The file size is capped by lim->max_input. Returns a
 * new reference or NULL (-ENOENT and friends when the file cannot be read).
 */
json_t *yaml_file_to_json(const char *path, bool multi, const struct yaml_limits *lim,
                          struct err *e);

#endif
