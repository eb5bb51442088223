/*
 * err: the error value carried out of fallible calls.
 *
 * Functions return 0 or a negative errno-style code; when the caller passes a
 * `struct err *`, it is filled with the code and a message a user can act on
 * (which file, which field, what the server said). Passing NULL is allowed.
 */
#ifndef KKS_UTIL_ERR_H
#define KKS_UTIL_ERR_H

#include <stdarg.h>

#define ERR_MSG_MAX 512

struct err {
    int code;        /* negative errno-style code, 0 = no error */
    int http_status; /* HTTP status when the error came from a server, else 0 */
    char reason[64]; /* Kubernetes Status reason (NotFound, Conflict...), or "" */
    char msg[ERR_MSG_MAX];
};

/* Reset to "no error". */
void err_clear(struct err *e);

/*
 * Record an error; returns `code` so callers can write `return err_set(e,
 * -EINVAL, "...")`. `e` may be NULL. `code` should be negative.
 */
int err_set(struct err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int err_vset(struct err *e, int code, const char *fmt, va_list ap);

/* Least room kept for a prefix when the message is cut. */
#define ERR_PREFIX_MIN 96

/* Prepend context: "ctx: old message". Returns e->code (0 if e is NULL: never
 * `return err_prefix(...)` from an error path, keep the code and return it;
 * test/checks/err_prefix_return.sh enforces this).
 * When the result does not fit ERR_MSG_MAX, the old message (the root
 * cause) is kept whole and the context is cut ("..."); only when even
 * ERR_PREFIX_MIN bytes of context do not fit is the middle of the old
 * message cut, keeping its start and its end (the server's words). */
int err_prefix(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
