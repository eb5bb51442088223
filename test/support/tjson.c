/* tjson: single-quoted JSON literals for tests (see tjson.h). */
#include "test/support/tjson.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pkg/util/xalloc.h"

json_t *tjson(const char *single_quoted)
{
    char *s = xstrdup(single_quoted);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_error_t je;
    json_t *j = json_loads(s, JSON_DECODE_ANY, &je);
    free(s);
    if (!j)
        fail_msg("bad test JSON (%s): %s", je.text, single_quoted);
    return j;
}
