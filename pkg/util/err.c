#include "pkg/util/err.h"

#include <stdio.h>
#include <string.h>

void err_clear(struct err *e)
{
    if (!e)
        return;
    e->code = 0;
    e->http_status = 0;
    e->reason[0] = '\0';
    e->msg[0] = '\0';
}

int err_vset(struct err *e, int code, const char *fmt, va_list ap)
{
    if (!e)
        return code;
    e->code = code;
    e->http_status = 0;
    e->reason[0] = '\0';
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    return code;
}

int err_set(struct err *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vset(e, code, fmt, ap);
    va_end(ap);
    return code;
}

int err_prefix(struct err *e, const char *fmt, ...)
{
    if (!e)
        return 0;
    char pre[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    char old[ERR_MSG_MAX];
    memcpy(old, e->msg, sizeof old);
    /* Truncation of an over-long message is acceptable. */
    if (snprintf(e->msg, sizeof e->msg, "%s: %s", pre, old) >= (int)sizeof e->msg)
        e->msg[sizeof e->msg - 1] = '\0';
    return e->code;
}
