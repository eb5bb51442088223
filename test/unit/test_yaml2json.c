/* Unit tests for pkg/yaml/yaml2json. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pkg/util/buf.h"
#include "pkg/util/err.h"
#include "pkg/yaml/yaml2json.h"

static json_t *conv(const char *s, struct err *e)
{
    err_clear(e);
    return yaml_to_json(s, strlen(s), NULL, e);
}

/* Convert and compare with the compact, key-sorted JSON text. */
static void expect_json(const char *yaml, const char *want)
{
    struct err e;
    json_t *j = conv(yaml, &e);
    if (!j)
        fail_msg("yaml %s: %s", yaml, e.msg);
    char *got = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (strcmp(got, want) != 0)
        fail_msg("yaml %s: got %s want %s", yaml, got, want);
    free(got);
    json_decref(j);
}

/* Convert, expect failure with `code` and a message containing `needle`. */
static void expect_err(const char *yaml, int code, const char *needle)
{
    struct err e;
    json_t *j = conv(yaml, &e);
    if (j) {
        char *got = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
        fail_msg("yaml %s: expected an error, got %s", yaml, got);
    }
    assert_int_equal(e.code, code);
    if (!strstr(e.msg, needle))
        fail_msg("yaml %s: message \"%s\" lacks \"%s\"", yaml, e.msg, needle);
}

static void test_structure(void **state)
{
    (void)state;
    expect_json("a: 1\nb: [x, z, y]\nc:\n  d: e\n  f:\n  - 1\n  - {g: h}\n",
                "{\"a\":1,\"b\":[\"x\",\"z\",true],\"c\":{\"d\":\"e\",\"f\":[1,{\"g\":\"h\"}]}}");
    expect_json("", "null");
    expect_json("# only a comment\n", "null");
    expect_json("- a\n- - b\n  - c\n", "[\"a\",[\"b\",\"c\"]]");
    /* JSON is YAML. */
    expect_json("{\"a\": [1, 2.5, \"x\", null, true], \"b\": {}}",
                "{\"a\":[1,2.5,\"x\",null,true],\"b\":{}}");
    /* Block scalars keep their text. */
    expect_json("s: |\n  line1\n  line2\nf: >\n  a\n  b\n",
                "{\"f\":\"a b\\n\",\"s\":\"line1\\nline2\\n\"}");
    /* Repeated key: the last value wins, like kubectl's non-strict decoding. */
    expect_json("a: 1\na: 2\n", "{\"a\":2}");
}

static void test_scalars(void **state)
{
    (void)state;
    expect_json("[~, null, Null, NULL, '', \"\"]", "[null,null,null,null,\"\",\"\"]");
    expect_json("a:\nb: ", "{\"a\":null,\"b\":null}");
    expect_json("[true, True, TRUE, false, False, FALSE]", "[true,true,true,false,false,false]");
    /* YAML 1.1 booleans as goyaml.v2 (and so kubectl) resolves them. */
    expect_json("[yes, Yes, on, ON, y, no, off, n, N]",
                "[true,true,true,true,true,false,false,false,false]");
    expect_json("[\"yes\", 'on', tRue, yEs]", "[\"yes\",\"on\",\"tRue\",\"yEs\"]");
    expect_json("[0, 42, -7, +7, 0x1F, 0o17, 017, 0b101, 1_000, -0x10]",
                "[0,42,-7,7,31,15,15,5,1000,-16]");
    expect_json("[9223372036854775807, -9223372036854775808]",
                "[9223372036854775807,-9223372036854775808]");
    /* Beyond int64 but within uint64: a real; beyond uint64: a float too. */
    expect_json("[18446744073709551615, 99999999999999999999]", "[1.8446744073709552e19,1e20]");
    expect_json("[1.5, -0.25, .5, 1e3, 2.5E-1, 1.]", "[1.5,-0.25,0.5,1000.0,0.25,1.0]");
    /* Not numbers: strings ("08" is no octal, but a float to goyaml.v2). */
    expect_json("[08, 0x, 1.2.3, 2001-12-14, '12', 12:30, 1e, +, -, .]",
                "[8.0,\"0x\",\"1.2.3\",\"2001-12-14\",\"12\",\"12:30\",\"1e\",\"+\",\"-\",\".\"]");
    expect_json("\"a\\0b\"", "\"a\\u0000b\"");
    expect_json("\"caf\\u00e9 \\u2603\"", "\"caf\xc3\xa9 \xe2\x98\x83\"");
}

static void test_tags(void **state)
{
    (void)state;
    expect_json("[!!str 123, !!str true, !!int \"12\", !!float 1, !!bool 'yes', !!null '']",
                "[\"123\",\"true\",12,1.0,true,null]");
    expect_json("[! 12, !custom 5, !!binary aGk=, !!timestamp 2001-12-14]",
                "[\"12\",\"5\",\"aGk=\",\"2001-12-14\"]");
    expect_json("!!map {a: 1}", "{\"a\":1}");
    expect_err("!!int abc", -EINVAL, "1:1: cannot decode !!str `abc` as a !!int");
    expect_err("x: !!bool 3", -EINVAL, "1:4: cannot decode !!int `3` as a !!bool");
}

static void test_keys(void **state)
{
    (void)state;
    expect_json("1: a\n0x10: b\non: c\nfalse: d\n1.5: e\n",
                "{\"1\":\"a\",\"1.5\":\"e\",\"16\":\"b\",\"false\":\"d\",\"true\":\"c\"}");
    expect_err("~: a\n", -EINVAL, "1:1: unsupported map key: null");
    expect_err("? [a]\n: b\n", -EINVAL, "unsupported map key: a mapping or sequence");
    expect_err("a: 1\n? {b: c}\n: d\n", -EINVAL, "unsupported map key");
}

static void test_anchors_and_merge(void **state)
{
    (void)state;
    expect_json(
        "base: &b {x: 1, z: [1, 2]}\ncopy: *b\ns: &s str\nt: *s\n",
        "{\"base\":{\"x\":1,\"z\":[1,2]},\"copy\":{\"x\":1,\"z\":[1,2]},\"s\":\"str\",\"t\":"
        "\"str\"}");
    /* Aliases are copies, not shared nodes: a merge into one does not change the other. */
    expect_json("a: &a {k: 1}\nb:\n  <<: *a\n  k: 2\n  l: 3\nc: *a\n",
                "{\"a\":{\"k\":1},\"b\":{\"k\":2,\"l\":3},\"c\":{\"k\":1}}");
    /* Explicit keys win even when they come before the merge; earlier merge sources win. */
    expect_json(
        "a: &a {k: 1, m: 1}\nb: &b {k: 2, p: 2}\nc:\n  m: 9\n  <<: [*a, *b]\n",
        "{\"a\":{\"k\":1,\"m\":1},\"b\":{\"k\":2,\"p\":2},\"c\":{\"k\":1,\"m\":9,\"p\":2}}");
    /* A quoted "<<" is an ordinary key. */
    expect_json("'<<': 1\n", "{\"<<\":1}");
    expect_err("a: &a 1\nb:\n  <<: *a\n", -EINVAL, "3:7: map merge requires a map");
    expect_err("a: *nope\n", -EINVAL, "1:4: unknown anchor 'nope'");
    /* An anchor cannot be used inside itself. */
    expect_err("a: &x [1, *x]\n", -EINVAL, "unknown anchor 'x'");
}

static void test_billion_laughs(void **state)
{
    (void)state;
    const char *bomb =
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
        "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
        "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
        "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
        "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
        "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
        "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
        "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
        "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";
    expect_err(bomb, -E2BIG, "alias bomb");
    /* A custom, smaller cap applies. */
    struct err e;
    struct yaml_limits lim = {.max_alias_nodes = 5};
    const char *y = "a: &a [1, 2, 3]\nb: *a\nc: *a\n";
    assert_null(yaml_to_json(y, strlen(y), &lim, &e));
    assert_int_equal(e.code, -E2BIG);
    assert_non_null(strstr(e.msg, "3:4: aliases expand to more than 5 nodes"));
    lim.max_alias_nodes = 8;
    json_t *j = yaml_to_json(y, strlen(y), &lim, &e);
    assert_non_null(j);
    json_decref(j);
}

static void test_limits(void **state)
{
    (void)state;
    struct err e;
    /* Deep flow nesting: an error, no stack overflow. */
    struct buf b;
    buf_init(&b, 1 << 20);
    for (int i = 0; i < 100000; i++)
        buf_puts(&b, "[");
    json_t *j = yaml_to_json(b.data, b.len, NULL, &e);
    assert_null(j);
    assert_int_equal(e.code, -E2BIG);
    assert_non_null(strstr(e.msg, "1:513: nesting deeper than 512 levels"));
    buf_free(&b);
    /* Deep block nesting with a small cap. */
    struct yaml_limits lim = {.max_depth = 3};
    const char *deep = "a:\n  b:\n    c:\n      d: 1\n";
    assert_null(yaml_to_json(deep, strlen(deep), &lim, &e));
    assert_non_null(strstr(e.msg, "4:7: nesting deeper than 3 levels"));
    lim.max_depth = 4;
    j = yaml_to_json(deep, strlen(deep), &lim, &e);
    assert_non_null(j);
    json_decref(j);
    /* An alias cannot be used to exceed the depth cap. */
    lim.max_depth = 3;
    const char *via_alias = "x: &x {y: {z: 1}}\na:\n  b: *x\n";
    assert_null(yaml_to_json(via_alias, strlen(via_alias), &lim, &e));
    assert_non_null(strstr(e.msg, "3:6: nesting deeper than 3 levels"));
    /* Input size and node count. */
    struct yaml_limits small = {.max_input = 8};
    assert_null(yaml_to_json("a: 123456789", 12, &small, &e));
    assert_int_equal(e.code, -E2BIG);
    assert_non_null(strstr(e.msg, "larger than the limit of 8"));
    struct yaml_limits few = {.max_nodes = 4};
    assert_null(yaml_to_json("[1, 2, 3, 4]", 12, &few, &e));
    assert_non_null(strstr(e.msg, "more than 4 nodes"));
    j = yaml_to_json("[1, 2, 3]", 9, &few, &e);
    assert_non_null(j);
    json_decref(j);
}

static void test_syntax_errors(void **state)
{
    (void)state;
    expect_err("a: b\nc: [1, 2\n", -EINVAL,
               "3:1: YAML syntax error: did not find expected ',' or ']'");
    expect_err("a: b\n  c: d\n", -EINVAL, "2:4: YAML syntax error: mapping values are not allowed");
    expect_err("a:\n\t- b\n", -EINVAL,
               "2:1: YAML syntax error: found character that cannot start any token");
    expect_err("a: \"x\n", -EINVAL, "YAML syntax error: found unexpected end of stream");
    /* Invalid UTF-8 (reader error): position computed from the byte offset. */
    expect_err("a: 1\nb: \xff\n", -EINVAL, "2:4: YAML syntax error: invalid leading UTF-8 octet");
    expect_err("x: .inf\n", -EINVAL, "1:4: .inf cannot be represented in JSON");
    /* Arbitrary binary input gives an error, not a crash. */
    struct err e;
    const char bin[] = {'\x00', '\x01', 'a', ':', '\x00', '\x7f'};
    assert_null(yaml_to_json(bin, sizeof bin, NULL, &e));
    assert_int_equal(e.code, -EINVAL);
}

static void test_multi_document(void **state)
{
    (void)state;
    const char *s = "---\na: 1\n---\n# empty\n---\n~\n---\n- b\n...\n---\nc: &x 1\n";
    struct err e;
    json_t *docs = yaml_to_json_all(s, strlen(s), NULL, &e);
    if (!docs)
        fail_msg("%s", e.msg);
    char *got = json_dumps(docs, JSON_COMPACT);
    assert_string_equal(got, "[{\"a\":1},[\"b\"],{\"c\":1}]");
    free(got);
    json_decref(docs);
    /* Anchors do not carry over to the next document. */
    const char *s2 = "a: &x 1\n---\nb: *x\n";
    assert_null(yaml_to_json_all(s2, strlen(s2), NULL, &e));
    assert_non_null(strstr(e.msg, "3:4: unknown anchor 'x'"));
    /* The single-document API refuses a stream. */
    expect_err("a: 1\n---\nb: 2\n", -EINVAL, "2:1: expected a single YAML document");
    /* An empty stream is an empty array. */
    docs = yaml_to_json_all("", 0, NULL, &e);
    assert_non_null(docs);
    assert_int_equal(json_array_size(docs), 0);
    json_decref(docs);
    /* Errors in a later document are reported with their line. */
    const char *s3 = "a: 1\n---\nb: [\n";
    assert_null(yaml_to_json_all(s3, strlen(s3), NULL, &e));
    assert_non_null(strstr(e.msg, "4:1: YAML syntax error"));
}

static void test_file(void **state)
{
    (void)state;
    char path[] = "/tmp/kks-yaml-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *y = "kind: A\n---\nkind: B\n  bad: indent\n";
    assert_int_equal(write(fd, y, strlen(y)), (ssize_t)strlen(y));
    close(fd);
    struct err e;
    assert_null(yaml_file_to_json(path, true, NULL, &e));
    char *want = NULL;
    assert_true(asprintf(&want, "%s:4:6: YAML syntax error: mapping values are not allowed", path) >
                0);
    if (strncmp(e.msg, want, strlen(want)) != 0)
        fail_msg("got %s", e.msg);
    free(want);
    /* Valid content; single-document mode refuses two documents. */
    FILE *fp = fopen(path, "w");
    fputs("kind: A\n---\nkind: B\n", fp);
    fclose(fp);
    json_t *docs = yaml_file_to_json(path, true, NULL, &e);
    assert_non_null(docs);
    assert_int_equal(json_array_size(docs), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(docs, 1), "kind")), "B");
    json_decref(docs);
    assert_null(yaml_file_to_json(path, false, NULL, &e));
    assert_non_null(strstr(e.msg, ":2:1: expected a single YAML document"));
    struct yaml_limits small = {.max_input = 4};
    assert_null(yaml_file_to_json(path, true, &small, &e));
    assert_int_equal(e.code, -E2BIG);
    unlink(path);
    assert_null(yaml_file_to_json(path, true, NULL, &e));
    assert_int_equal(e.code, -ENOENT);
    assert_non_null(strstr(e.msg, "cannot read"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_structure),
        cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_tags),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_anchors_and_merge),
        cmocka_unit_test(test_billion_laughs),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_multi_document),
        cmocka_unit_test(test_file),
    };
    return cmocka_run_group_tests_name("yaml2json", tests, NULL, NULL);
}
