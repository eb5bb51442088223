/* Unit tests for pkg/util/uid: only a canonical uid converts, and comes back exactly. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "pkg/util/uid.h"

static void test_round_trip(void **state)
{
    (void)state;
    static const char *const ok[] = {"027b6140-ca2c-4f81-90e0-b96b17951b22",
                                     "00000000-0000-0000-0000-000000000000",
                                     "ffffffff-ffff-ffff-ffff-ffffffffffff"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint8_t b[16];
        char back[UID_TEXT_LEN];
        assert_true(uid_to_bytes(ok[i], strlen(ok[i]), b));
        uid_from_bytes(b, back);
        assert_memory_equal(back, ok[i], UID_TEXT_LEN);
    }
    uint8_t b[16];
    assert_true(uid_to_bytes(ok[0], UID_TEXT_LEN, b));
    assert_int_equal(b[0], 0x02);
    assert_int_equal(b[15], 0x22);
}

static void test_not_canonical(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "027B6140-CA2C-4F81-90E0-B96B17951B22",  /* uppercase */
        "027b6140-ca2c-4f81-90e0-b96b17951b2",   /* short */
        "027b6140-ca2c-4f81-90e0-b96b17951b222", /* long */
        "027b6140ca2c-4f81-90e0-b96b17951b22-",  /* dashes elsewhere */
        "027b6140-ca2c-4f81-90e0-b96b17951b2g",  /* not hex */
        "027b6140-ca2c-4f81-90e0+b96b17951b22",  /* not a dash */
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t b[16];
        assert_false(uid_to_bytes(bad[i], strlen(bad[i]), b));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_not_canonical),
    };
    return cmocka_run_group_tests_name("uid", tests, NULL, NULL);
}
