/* mtune: set glibc's malloc tunables by executing the program again (see mtune.h). */
#include "pkg/util/mtune.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

int mtune_reexec(char *const argv[])
{
    if (getenv("GLIBC_TUNABLES"))
        return 0;
    if (setenv("GLIBC_TUNABLES", MTUNE_GLIBC_TUNABLES, 0) < 0)
        return -errno;
    execv("/proc/self/exe", argv);
    int rc = -errno;
    unsetenv("GLIBC_TUNABLES");
    return rc;
}
