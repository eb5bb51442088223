#include "test/support/tdir.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

int tdir_make(char *buf, size_t n, const char *prefix)
{
    if (snprintf(buf, n, "/tmp/%s-XXXXXX", prefix) >= (int)n)
        return -1;
    return mkdtemp(buf) ? 0 : -1;
}

void tdir_remove(const char *dir)
{
    nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}
