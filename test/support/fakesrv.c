#include "test/support/fakesrv.h"

#include <stdlib.h>

/* First commit: API only; the implementation follows. */
struct fakesrv *fakesrv_start(const struct fakesrv_opts *opts)
{
    abort();
}
