/* Unit tests for pkg/util/plural. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "pkg/util/plural.h"

static void test_counts(void **state)
{
    (void)state;
    assert_string_equal(plural_s(1), "");
    assert_string_equal(plural_s(-1), "");
    assert_string_equal(plural_s(0), "s");
    assert_string_equal(plural_s(2), "s");
    assert_string_equal(plural_s(110), "s");
    assert_string_equal(plural_of(1, "copy", "copies"), "copy");
    assert_string_equal(plural_of(0, "copy", "copies"), "copies");
    assert_string_equal(plural_of(3, "is", "are"), "are");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
