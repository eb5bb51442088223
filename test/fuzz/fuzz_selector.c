/*
 * Fuzz target for pkg/labels: label selector and field selector parsing.
 * Properties: no crash; parse -> format -> parse succeeds and gives an equal
 * selector that matches the same label sets.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/labels/sel.h"
#include "pkg/util/xalloc.h"

static void check_labels(const char *in)
{
    struct sel *s = NULL, *s2 = NULL;
    if (sel_parse(in, &s, NULL) != 0)
        return;
    char *txt = sel_format(s);
    if (sel_parse(txt, &s2, NULL) != 0 || !sel_equal(s, s2))
        abort();
    struct sel_label kv[] = {{"a", "b"}, {"x", "1"}, {"example.com/k", ""}};
    for (size_t n = 0; n <= 3; n++)
        if (sel_matches_kv(s, kv, n) != sel_matches_kv(s2, kv, n))
            abort();
    free(txt);
    sel_free(s);
    sel_free(s2);
}

static void check_fields(const char *in)
{
    struct sel_field *f = NULL, *f2 = NULL;
    if (sel_field_parse(in, &f, NULL) != 0)
        return;
    char *txt = sel_field_format(f);
    if (sel_field_parse(txt, &f2, NULL) != 0 || !sel_field_equal(f, f2))
        abort();
    /* Field paths come from the client: matching must cope with any of them. */
    json_t *obj = json_loads("{\"metadata\":{\"name\":\"a\",\"namespace\":\"b\"},"
                             "\"spec\":{\"n\":1,\"ok\":true,\"l\":[\"x\"]}}",
                             0, NULL);
    if (sel_field_matches(f, obj) != sel_field_matches(f2, obj))
        abort();
    json_decref(obj);
    free(txt);
    sel_field_free(f);
    sel_field_free(f2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = xstrndup((const char *)data, size);
    check_labels(in);
    check_fields(in);
    free(in);
    return 0;
}
