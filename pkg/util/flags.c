#include "pkg/util/flags.h"
#include "pkg/util/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int flags_parse_duration(const char *s, double *out)
{
    if (!s || !*s)
        return -EINVAL;
    if (!strcmp(s, "0")) {
        *out = 0;
        return 0;
    }
    double total = 0;
    int sign = 1;
    const char *p = s;
    if (*p == '-' || *p == '+') {
        sign = *p == '-' ? -1 : 1;
        p++;
    }
    if (!*p)
        return -EINVAL;
    while (*p) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno || v < 0 || *p == '+' || *p == '-')
            return -EINVAL;
        p = end;
        double unit;
        if (!strncmp(p, "ns", 2)) {
            unit = 1e-9;
            p += 2;
        } else if (!strncmp(p, "us", 2)) {
            unit = 1e-6;
            p += 2;
        } else if (!strncmp(p, "ms", 2)) {
            unit = 1e-3;
            p += 2;
        } else if (*p == 's') {
            unit = 1;
            p++;
        } else if (*p == 'm') {
            unit = 60;
            p++;
        } else if (*p == 'h') {
            unit = 3600;
            p++;
        } else {
            return -EINVAL; /* a unit is required, like Go */
        }
        total += v * unit;
    }
    if (!isfinite(total))
        return -EINVAL;
    *out = sign * total;
    return 0;
}

static const struct flag *find_flag(const struct flag *fl, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(fl[i].name) == len && !strncmp(fl[i].name, name, len))
            return &fl[i];
    for (size_t i = 0; len == 1 && i < n; i++)
        if (fl[i].shorthand && fl[i].shorthand == name[0])
            return &fl[i];
    return NULL;
}

void flags_strv_free(struct flag_strv *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->v[i]);
    free(v->v);
    v->v = NULL;
    v->n = 0;
}

static int set_value(const struct flag *f, const char *val, struct err *e)
{
    char *end;
    switch (f->type) {
    case FLAG_STRING: {
        char **t = f->target;
        free(*t);
        *t = xstrdup(val);
        return 0;
    }
    case FLAG_BOOL: {
        bool *t = f->target;
        if (!strcmp(val, "true") || !strcmp(val, "1") || !strcmp(val, "t") ||
            !strcmp(val, "TRUE") || !strcmp(val, "True"))
            *t = true;
        else if (!strcmp(val, "false") || !strcmp(val, "0") || !strcmp(val, "f") ||
                 !strcmp(val, "FALSE") || !strcmp(val, "False"))
            *t = false;
        else
            return err_set(e, -EINVAL, "invalid value \"%s\" for flag --%s: expected true or false",
                           val, f->name);
        return 0;
    }
    case FLAG_INT: {
        errno = 0;
        long v = strtol(val, &end, 10);
        if (!*val || *end || errno || v < -2147483647L || v > 2147483647L)
            return err_set(e, -EINVAL, "invalid value \"%s\" for flag --%s: expected an integer",
                           val, f->name);
        *(int *)f->target = (int)v;
        return 0;
    }
    case FLAG_DOUBLE: {
        errno = 0;
        double v = strtod(val, &end);
        if (!*val || *end || errno || !isfinite(v))
            return err_set(e, -EINVAL, "invalid value \"%s\" for flag --%s: expected a number", val,
                           f->name);
        *(double *)f->target = v;
        return 0;
    }
    case FLAG_DURATION: {
        double v;
        if (flags_parse_duration(val, &v) < 0 || v < 0)
            return err_set(e, -EINVAL,
                           "invalid value \"%s\" for flag --%s: expected a duration such as 30s, "
                           "5m or 1h30m",
                           val, f->name);
        *(double *)f->target = v;
        return 0;
    }
    case FLAG_STRINGS: {
        struct flag_strv *t = f->target;
        t->v = xrealloc(t->v, (t->n + 1) * sizeof(char *));
        t->v[t->n++] = xstrdup(val);
        return 0;
    }
    }
    return -EINVAL;
}

int flags_set_defaults(const struct flag *fl, size_t n, struct err *e)
{
    for (size_t i = 0; i < n; i++) {
        if (!fl[i].defval)
            continue;
        if (fl[i].type == FLAG_STRINGS)
            continue; /* list defaults are documentation only */
        int rc = set_value(&fl[i], fl[i].defval, e);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int flags_parse(const struct flag *fl, size_t n, int argc, char **argv, const char ***pos,
                size_t *npos, bool *help, struct err *e)
{
    if (npos)
        *npos = 0;
    if (help)
        *help = false;
    bool only_pos = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || !a[1]) {
            if (!pos)
                return err_set(e, -EINVAL, "unexpected argument \"%s\"", a);
            *pos = xrealloc(*pos, (*npos + 1) * sizeof(char *));
            (*pos)[(*npos)++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_pos = true;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (help)
                *help = true;
            continue;
        }
        const char *name = a + 1;
        if (*name == '-')
            name++; /* accept -flag and --flag like pflag/klog */
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const struct flag *f = find_flag(fl, n, name, len);
        if (!f)
            return err_set(e, -EINVAL, "unknown flag: %.*s (see --help)",
                           (int)(name - a + (ptrdiff_t)len), a); /* as written: -o, --nope */
        const char *val;
        if (eq) {
            val = eq + 1;
        } else if (f->type == FLAG_BOOL) {
            val = "true";
        } else {
            if (i + 1 >= argc)
                return err_set(e, -EINVAL, "flag needs an argument: --%s", f->name);
            val = argv[++i];
        }
        int rc = set_value(f, val, e);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static const char *type_name(enum flag_type t)
{
    switch (t) {
    case FLAG_STRING:
        return "string";
    case FLAG_BOOL:
        return "";
    case FLAG_INT:
        return "int";
    case FLAG_DOUBLE:
        return "float";
    case FLAG_DURATION:
        return "duration";
    case FLAG_STRINGS:
        return "strings";
    }
    return "";
}

static void usage_head(const struct flag *f, char *head, size_t n)
{
    const char *t = type_name(f->type);
    if (f->shorthand)
        snprintf(head, n, "-%c, --%s%s%s", f->shorthand, f->name, *t ? " " : "", t);
    else
        snprintf(head, n, "    --%s%s%s", f->name, *t ? " " : "", t);
}

void flags_usage(FILE *out, const struct flag *fl, size_t n)
{
    int width = 0;
    char head[160];
    for (size_t i = 0; i < n; i++) {
        usage_head(&fl[i], head, sizeof head);
        if ((int)strlen(head) > width)
            width = (int)strlen(head);
    }
    for (size_t i = 0; i < n; i++) {
        usage_head(&fl[i], head, sizeof head);
        fprintf(out, "  %-*s   %s", width, head, fl[i].help);
        if (fl[i].defval && *fl[i].defval && fl[i].type != FLAG_BOOL)
            fprintf(out, " (default %s)", fl[i].defval);
        else if (fl[i].type == FLAG_BOOL && fl[i].defval && !strcmp(fl[i].defval, "true"))
            fprintf(out, " (default true)");
        fputc('\n', out);
    }
}

void flags_free(const struct flag *fl, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (fl[i].type == FLAG_STRING) {
            char **t = fl[i].target;
            FREE_AND_NULL(*t);
        } else if (fl[i].type == FLAG_STRINGS) {
            flags_strv_free(fl[i].target);
        }
    }
}
