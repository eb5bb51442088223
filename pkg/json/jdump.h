/*
 * jdump: compact JSON text of a jansson tree, faster than json_dumps.
 *
 * Every request body is serialised once (kube_client_do); jansson's dumper goes through a
 * callback per token and per escaped run and checks each string's UTF-8 as it goes, about a
 * tenth of the operator's instructions per dispatch. jdump_compact() writes into one growing
 * buffer, copies unescaped runs whole, and gives the same bytes as
 * json_dumps(v, JSON_COMPACT): keys in the object's order, the same escapes, integers as
 * "%lld". What it does not write itself it hands to jansson, so the result stays identical:
 * reals (jansson's own formatting), and the whole value when a string is not valid UTF-8
 * (jansson then fails), nesting is deeper than JDUMP_MAX_DEPTH (a loop, which jansson
 * refuses, or a very deep tree) or the top level is not an object or an array.
 * test/fuzz/fuzz_jscan.c compares the two on arbitrary trees.
 */
#ifndef KKS_JSON_JDUMP_H
#define KKS_JSON_JDUMP_H

#include <jansson.h>
#include <stddef.h>

#define JDUMP_MAX_DEPTH 2048

/* json_dumps(v, JSON_COMPACT): a new string (the caller frees) and its length in *len (may be
 * NULL), or NULL where jansson returns NULL. */
char *jdump_compact(const json_t *v, size_t *len);

#endif
