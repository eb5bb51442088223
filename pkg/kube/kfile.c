#include "pkg/kube/kfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pkg/util/xalloc.h"

int kfile_read(const char *path, size_t max, char **data, size_t *len, struct err *e)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return err_set(e, -errno, "cannot read %s: %s", path, strerror(errno));
    int rc = 0;
    char *buf = NULL;
    size_t n = 0;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        rc = err_set(e, -errno, "cannot read %s: %s", path, strerror(errno));
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        rc = err_set(e, -EISDIR, "cannot read %s: it is a directory", path);
        goto out;
    }
    if (!S_ISREG(st.st_mode)) { /* no FIFOs or devices: they could block or never end */
        rc = err_set(e, -EINVAL, "cannot read %s: not a regular file", path);
        goto out;
    }
    /* Read to EOF rather than trusting st_size (procfs, pipes, files being rewritten). */
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
    if (cap > max + 1)
        cap = max + 1;
    buf = xmalloc(cap + 1);
    for (;;) {
        if (n == cap) {
            if (n > max) {
                rc = err_set(e, -E2BIG, "cannot read %s: larger than %zu bytes", path, max);
                goto out;
            }
            size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *nb = xmalloc(ncap + 1);
            memcpy(nb, buf, n);
            kfile_wipe_free(buf, n);
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            rc = err_set(e, -errno, "cannot read %s: %s", path, strerror(errno));
            goto out;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (n > max) {
        rc = err_set(e, -E2BIG, "cannot read %s: larger than %zu bytes", path, max);
        goto out;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    buf = NULL;
out:
    kfile_wipe_free(buf, n);
    close(fd);
    return rc;
}

void kfile_wipe_free(char *data, size_t len)
{
    if (!data)
        return;
    explicit_bzero(data, len);
    free(data);
}
