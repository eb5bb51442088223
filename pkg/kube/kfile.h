/*
 * kfile: read a whole small file (kubeconfig, certificate, key, token) into
 * memory with a size cap. Used by the kubeconfig and in-cluster loaders.
 */
#ifndef KKS_KUBE_KFILE_H
#define KKS_KUBE_KFILE_H

#include <stddef.h>

#include "pkg/util/err.h"

/*
 * Read `path` (a regular file, symlinks followed) into a new NUL-terminated
 * buffer (*data, caller frees; *len excludes the NUL). Returns 0, -ENOENT
 * when it does not exist, -E2BIG when larger than `max`, -EISDIR / -EINVAL
 * for a directory / FIFO or device, or another negative errno; the message
 * names the file ("cannot read PATH: reason").
 */
int kfile_read(const char *path, size_t max, char **data, size_t *len, struct err *e);

/* Free a buffer that may hold secrets: wipe `len` bytes first. NULL is fine. */
void kfile_wipe_free(char *data, size_t len);

#endif
