/* Unit tests for pkg/util/b64: RFC 4648 §10 vectors both ways, binary data,
 * whitespace between groups, and input that is not base64. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/b64.h"

static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
static const char *const coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};

static void test_rfc4648_vectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++) {
        char *enc = b64_encode(plain[i], strlen(plain[i]));
        assert_string_equal(enc, coded[i]);
        free(enc);
        char *dec;
        size_t n;
        assert_int_equal(b64_decode(coded[i], strlen(coded[i]), &dec, &n), 0);
        assert_int_equal(n, strlen(plain[i]));
        assert_memory_equal(dec, plain[i], n);
        assert_int_equal(dec[n], '\0');
        free(dec);
    }
}

static void test_binary_round_trip(void **state)
{
    (void)state;
    unsigned char bin[256];
    for (size_t i = 0; i < sizeof bin; i++)
        bin[i] = (unsigned char)(255 - i);
    char *enc = b64_encode(bin, sizeof bin);
    char *dec;
    size_t n;
    assert_int_equal(b64_decode(enc, strlen(enc), &dec, &n), 0);
    assert_int_equal(n, sizeof bin);
    assert_memory_equal(dec, bin, n);
    free(enc);
    free(dec);
}

static void test_whitespace_allowed(void **state)
{
    (void)state;
    const char *in = "Zm9v\nYmFy\n";
    char *dec;
    size_t n;
    assert_int_equal(b64_decode(in, strlen(in), &dec, &n), 0);
    assert_int_equal(n, 6);
    assert_memory_equal(dec, "foobar", 6);
    free(dec);
}

static void test_not_base64(void **state)
{
    (void)state;
    const char *bad[] = {"Zm9v!mFy", "Zm9", "Z===", "%%%%"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *dec = (char *)1;
        size_t n = 7;
        assert_int_equal(b64_decode(bad[i], strlen(bad[i]), &dec, &n), -EINVAL);
        assert_null(dec);
        assert_int_equal(n, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc4648_vectors),
        cmocka_unit_test(test_binary_round_trip),
        cmocka_unit_test(test_whitespace_allowed),
        cmocka_unit_test(test_not_base64),
    };
    return cmocka_run_group_tests_name("b64", tests, NULL, NULL);
}
