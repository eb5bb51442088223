/*
 * flags: a small command-line flag parser in the style of Go's pflag, which
 * Kubernetes users know: `--name=value` or `--name value`, booleans as
 * `--flag` / `--flag=false`, repeatable string lists, durations (`5s`,
 * `1m30s`, `500ms`), integers and floats. The flag table is data, so --help
 * output (and the docs check) comes from one place.
 */
#ifndef KKS_UTIL_FLAGS_H
#define KKS_UTIL_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "pkg/util/err.h"

enum flag_type {
    FLAG_STRING,   /* char ** (owned by the caller; replaced value is freed) */
    FLAG_BOOL,     /* bool * */
    FLAG_INT,      /* int * */
    FLAG_DOUBLE,   /* double * */
    FLAG_DURATION, /* double * seconds */
    FLAG_STRINGS,  /* struct flag_strv *, repeatable */
};

struct flag_strv {
    char **v; /* owned */
    size_t n;
};

struct flag {
    const char *name; /* without the leading dashes */
    enum flag_type type;
    void *target;
    const char *help;
    const char *defval; /* shown in --help and applied by flags_set_defaults; NULL = none */
    char shorthand;     /* one-letter alias (-o for --output), 0 = none */
};

/* Apply every flag's defval to its target (call before flags_parse). */
int flags_set_defaults(const struct flag *fl, size_t n, struct err *e);

/*
 * Parse argv[0..argc). Positional arguments are collected in order into
 * `pos` (borrowed pointers into argv; may be NULL when none are allowed).
 * `--help`/`-h` sets *help. Returns 0 or -EINVAL with a message naming the flag.
 */
int flags_parse(const struct flag *fl, size_t n, int argc, char **argv, const char ***pos,
                size_t *npos, bool *help, struct err *e);

/* Print "  -s, --name type   help (default x)" lines, in table order, the help
 * texts in one column however long the longest flag is. */
void flags_usage(FILE *out, const struct flag *fl, size_t n);

/* Parse a Go duration ("1h2m3.5s", "500ms", "0"); seconds into *out. 0 or -EINVAL. */
int flags_parse_duration(const char *s, double *out);

/* Free string targets and lists (call at exit). */
void flags_free(const struct flag *fl, size_t n);
void flags_strv_free(struct flag_strv *v);

#endif
