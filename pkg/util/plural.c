/* plural: see plural.h. */
#include "pkg/util/plural.h"

const char *plural_of(long long n, const char *one, const char *many)
{
    return n == 1 || n == -1 ? one : many;
}

const char *plural_s(long long n)
{
    return plural_of(n, "", "s");
}
