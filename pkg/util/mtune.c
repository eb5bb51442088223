/* mtune: set glibc's malloc tunables by executing the program again (see mtune.h). */
#include "pkg/util/mtune.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

int mtune_reexec(char *const argv[])
{
    if (getenv("GLIBC_TUNABLES"))
        return 0;
    /* A privileged (AT_SECURE) process may have GLIBC_TUNABLES removed at start, so the
     * variable could not stop a second exec; one started through the loader
     * (`ld.so ./kueue-ks`, no interpreter: AT_BASE 0) has the loader as /proc/self/exe. */
    if (getauxval(AT_SECURE) || getauxval(AT_BASE) == 0)
        return -EPERM;
    /* The path itself, not /proc/self/exe: the process name (ps, pgrep, top) is the last
     * component of the path executed. */
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        return n < 0 ? -errno : -ENOENT;
    path[n] = '\0';
    if (setenv("GLIBC_TUNABLES", MTUNE_GLIBC_TUNABLES, 0) < 0)
        return -errno;
    execv(path, argv);
    int rc = -errno;
    unsetenv("GLIBC_TUNABLES");
    return rc;
}
