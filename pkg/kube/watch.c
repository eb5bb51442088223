#include "pkg/kube/watch.h"

#include <errno.h>

/* First commit: API only; the implementation follows. */
int watch_decoder_feed(struct watch_decoder *d, const char *data, size_t n, struct err *e)
{
    return err_set(e, -ENOSYS, "watch decoder: not implemented yet");
}
