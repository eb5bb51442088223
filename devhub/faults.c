/* faults: fault-injection settings and decisions. See faults.h. */
#include "devhub/faults.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/xalloc.h"

void faults_init(struct faults *f)
{
    memset(f, 0, sizeof *f);
    f->fail_codes[0] = 409;
    f->fail_codes[1] = 429;
    f->fail_codes[2] = 500;
    f->nfail_codes = 3;
    f->retry_after_sec = 1;
}

void faults_rng_seed(struct faults_rng *r, uint64_t seed)
{
    r->s = seed ? seed : 0x9E3779B97F4A7C15ull;
}

double faults_rng_next(struct faults_rng *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    uint64_t v = x * 0x2545F4914F6CDD1Dull;
    return (double)(v >> 11) / 9007199254740992.0; /* 2^53 */
}

static bool code_allowed(long c)
{
    return c == 409 || c == 429 || c == 500;
}

int faults_parse_codes(struct faults *f, const char *s, struct err *e)
{
    int codes[FAULTS_MAX_CODES];
    size_t n = 0;
    const char *p = s ? s : "";
    while (*p) {
        char *end = NULL;
        errno = 0;
        long c = strtol(p, &end, 10);
        if (end == p || errno || !code_allowed(c))
            return err_set(e, -EINVAL,
                           "invalid fail code list \"%.100s\": use a comma-separated subset of "
                           "409,429,500",
                           s);
        bool dup = false;
        for (size_t i = 0; i < n; i++)
            dup = dup || codes[i] == (int)c;
        if (!dup)
            codes[n++] = (int)c;
        p = end;
        if (*p == ',')
            p++;
        else if (*p)
            return err_set(e, -EINVAL,
                           "invalid fail code list \"%.100s\": use a comma-separated subset of "
                           "409,429,500",
                           s);
    }
    if (n == 0)
        return err_set(e, -EINVAL, "empty fail code list: use a subset of 409,429,500");
    memcpy(f->fail_codes, codes, n * sizeof codes[0]);
    f->nfail_codes = n;
    return 0;
}

static int get_uint(const json_t *j, const char *k, unsigned min, unsigned max, unsigned *out,
                    struct err *e)
{
    json_t *v = json_object_get(j, k);
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)min ||
        json_integer_value(v) > (json_int_t)max)
        return err_set(e, -EINVAL, "%s must be an integer between %u and %u", k, min, max);
    *out = (unsigned)json_integer_value(v);
    return 0;
}

int faults_update_json(struct faults *f, const json_t *j, struct err *e)
{
    if (!json_is_object(j))
        return err_set(e, -EINVAL, "fault settings must be a JSON object");
    static const char *const known[] = {"writeFailRate", "failCodes",          "retryAfterSeconds",
                                        "latencyMs",     "cutWatchesEverySec", "paused"};
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)j, k, v)
    {
        bool ok = false;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            ok = ok || !strcmp(k, known[i]);
        if (!ok)
            return err_set(e, -EINVAL,
                           "unknown field \"%.100s\" (known: writeFailRate, failCodes, "
                           "retryAfterSeconds, latencyMs, cutWatchesEverySec, paused)",
                           k);
    }
    struct faults n = *f;
    v = json_object_get(j, "writeFailRate");
    if (v) {
        double r = json_number_value(v);
        if (!json_is_number(v) || !(r >= 0.0 && r <= 1.0))
            return err_set(e, -EINVAL, "writeFailRate must be a number between 0 and 1");
        n.write_fail_rate = r;
    }
    v = json_object_get(j, "failCodes");
    if (v) {
        if (!json_is_array(v) || json_array_size(v) == 0)
            return err_set(e, -EINVAL, "failCodes must be a non-empty list of 409, 429, 500");
        n.nfail_codes = 0;
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *c = json_array_get(v, i);
            if (!json_is_integer(c) || !code_allowed((long)json_integer_value(c)))
                return err_set(e, -EINVAL, "failCodes must be a non-empty list of 409, 429, 500");
            bool dup = false;
            for (size_t x = 0; x < n.nfail_codes; x++)
                dup = dup || n.fail_codes[x] == (int)json_integer_value(c);
            if (!dup && n.nfail_codes < FAULTS_MAX_CODES)
                n.fail_codes[n.nfail_codes++] = (int)json_integer_value(c);
        }
    }
    int rc = get_uint(j, "retryAfterSeconds", 1, 3600, &n.retry_after_sec, e);
    if (!rc)
        rc = get_uint(j, "latencyMs", 0, FAULTS_MAX_LATENCY, &n.latency_ms, e);
    if (!rc)
        rc = get_uint(j, "cutWatchesEverySec", 0, 86400, &n.cut_watches_every_sec, e);
    if (rc)
        return rc;
    v = json_object_get(j, "paused");
    if (v) {
        if (!json_is_boolean(v))
            return err_set(e, -EINVAL, "paused must be true or false");
        n.paused = json_is_true(v);
    }
    *f = n;
    return 0;
}

json_t *faults_to_json(const struct faults *f)
{
    json_t *codes = json_array();
    for (size_t i = 0; i < f->nfail_codes; i++)
        json_array_append_new(codes, json_integer(f->fail_codes[i]));
    json_t *j = json_object();
    json_object_set_new(j, "writeFailRate", json_real(f->write_fail_rate));
    json_object_set_new(j, "failCodes", codes);
    json_object_set_new(j, "retryAfterSeconds", json_integer(f->retry_after_sec));
    json_object_set_new(j, "latencyMs", json_integer(f->latency_ms));
    json_object_set_new(j, "cutWatchesEverySec", json_integer(f->cut_watches_every_sec));
    json_object_set_new(j, "paused", json_boolean(f->paused));
    return j;
}

int faults_decide_write(const struct faults *f, struct faults_rng *rng)
{
    if (f->write_fail_rate <= 0.0 || f->nfail_codes == 0)
        return 0;
    if (faults_rng_next(rng) >= f->write_fail_rate)
        return 0;
    size_t i = (size_t)(faults_rng_next(rng) * (double)f->nfail_codes);
    if (i >= f->nfail_codes)
        i = f->nfail_codes - 1;
    return f->fail_codes[i];
}

unsigned faults_latency_ms(const struct faults *f)
{
    return f->latency_ms;
}

bool faults_paused(const struct faults *f)
{
    return f->paused;
}

double faults_watch_cut_in(const struct faults *f, double age_s)
{
    if (f->cut_watches_every_sec == 0)
        return -1.0;
    double left = (double)f->cut_watches_every_sec - age_s;
    return left > 0 ? left : 0.0;
}

static json_t *status(const char *message, const char *reason, json_t *details, int code)
{
    json_t *st = json_object();
    json_object_set_new(st, "kind", json_string("Status"));
    json_object_set_new(st, "apiVersion", json_string("v1"));
    json_object_set_new(st, "metadata", json_object());
    json_object_set_new(st, "status", json_string("Failure"));
    json_object_set_new(st, "message", json_string(message));
    json_object_set_new(st, "reason", json_string(reason));
    if (details)
        json_object_set_new(st, "details", details);
    json_object_set_new(st, "code", json_integer(code));
    return st;
}

json_t *faults_status_body(const struct faults *f, int code, const char *group,
                           const char *resource, const char *name, unsigned *retry_after)
{
    if (retry_after)
        *retry_after = 0;
    const char *g = group ? group : "";
    const char *res = resource ? resource : "";
    const char *nm = name ? name : "";
    if (code == 409) {
        char *qual = *g ? xasprintf("%s.%s", res, g) : xstrdup(res);
        char *msg = xasprintf("Operation cannot be fulfilled on %s \"%s\": the object has been "
                              "modified; please apply your changes to the latest version and try "
                              "again",
                              qual, nm);
        json_t *d = json_object();
        json_object_set_new(d, "name", json_string(nm));
        if (*g)
            json_object_set_new(d, "group", json_string(g));
        json_object_set_new(d, "kind", json_string(res));
        json_t *st = status(msg, "Conflict", d, 409);
        free(qual);
        free(msg);
        return st;
    }
    if (code == 429) {
        unsigned ra = f && f->retry_after_sec ? f->retry_after_sec : 1;
        if (retry_after)
            *retry_after = ra;
        json_t *d = json_object();
        json_object_set_new(d, "retryAfterSeconds", json_integer(ra));
        return status("Too many requests, please try again later.", "TooManyRequests", d, 429);
    }
    if (code == 500) {
        json_t *d = json_object();
        json_t *causes = json_array();
        json_array_append_new(causes,
                              json_pack("{s:s}", "message", "injected fault (kueue-ks-devhub)"));
        json_object_set_new(d, "causes", causes);
        return status("Internal error occurred: injected fault (kueue-ks-devhub)", "InternalError",
                      d, 500);
    }
    return NULL;
}
