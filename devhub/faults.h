/*
 * faults: the devhub's fault-injection model. Pure data and decisions; the
 * server core owns one `struct faults`, changes it from flags and from the
 * admin endpoint (JSON below), and asks the decision functions on each
 * request. Randomness comes from a caller-owned, seedable RNG so tests are
 * deterministic.
 *
 * Admin JSON (every field optional on input; a PATCH-like partial update):
 *   {
 *     "writeFailRate": 0.2,           fraction of writes (create/update/patch/delete) that fail,
 * 0..1 "failCodes": [409, 429, 500],   codes to pick from, uniformly; subset of 409/429/500
 *     "retryAfterSeconds": 1,         Retry-After of injected 429s (1..3600)
 *     "latencyMs": 50,                added to every response (0..60000)
 *     "cutWatchesEverySec": 10,       watch streams are closed after this many seconds (0 = never)
 *     "paused": false                 true: accept connections but answer nothing until resumed
 *   }
 */
#ifndef KKS_DEVHUB_FAULTS_H
#define KKS_DEVHUB_FAULTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pkg/util/err.h"

#define FAULTS_MAX_CODES   3
#define FAULTS_MAX_LATENCY 60000

struct faults {
    double write_fail_rate;
    int fail_codes[FAULTS_MAX_CODES];
    size_t nfail_codes;
    unsigned retry_after_sec;
    unsigned latency_ms;
    unsigned cut_watches_every_sec;
    bool paused;
};

/* xorshift64* state; never zero. */
struct faults_rng {
    uint64_t s;
};

/* No faults; failCodes defaults to 409, 429, 500; Retry-After 1 s. */
void faults_init(struct faults *f);

/* Seed the RNG (any value; 0 is mapped to a fixed non-zero constant). */
void faults_rng_seed(struct faults_rng *r, uint64_t seed);
/* Uniform double in [0, 1). */
double faults_rng_next(struct faults_rng *r);

/*
 * Apply the fields present in `j` (borrowed JSON object) to `f`. All fields
 * are validated first: on error (-EINVAL, message names the field) `f` is
 * unchanged. Unknown fields are errors.
 */
int faults_update_json(struct faults *f, const json_t *j, struct err *e);
/* The current settings as the admin JSON above. New reference. */
json_t *faults_to_json(const struct faults *f);

/* Parse a flag value "409,429,500" into f->fail_codes. 0 or -EINVAL; f unchanged on error. */
int faults_parse_codes(struct faults *f, const char *s, struct err *e);

/*
 * Should this write fail? Returns 0 (no) or the HTTP code to inject. Draws
 * one number from `rng` for the rate and, when failing, one for the code.
 */
int faults_decide_write(const struct faults *f, struct faults_rng *rng);
/* Milliseconds to delay a response (0 = none). */
unsigned faults_latency_ms(const struct faults *f);
/* True when the server should hold requests unanswered. */
bool faults_paused(const struct faults *f);
/*
 * Seconds until a watch opened `age_s` seconds ago must be cut, or a negative
 * value when watches are never cut. 0 means cut it now.
 */
double faults_watch_cut_in(const struct faults *f, double age_s);

/*
 * The Status body of an injected error, as the apiserver writes it:
 *   409 Conflict  "Operation cannot be fulfilled on <resource>[.<group>] \"<name>\": the object
 *                  has been modified; please apply your changes to the latest version and try
 *                  again" (details name/group/kind=resource)
 *   429 TooManyRequests "Too many requests, please try again later." (details.retryAfterSeconds)
 *   500 InternalError "Internal error occurred: injected fault (kueue-ks-devhub)"
 * group/resource/name may be NULL (empty). *retry_after (optional) is set to
 * the Retry-After header value to send (0 = none). New reference, or NULL for
 * a code that is not one of the three.
 */
json_t *faults_status_body(const struct faults *f, int code, const char *group,
                           const char *resource, const char *name, unsigned *retry_after);

#endif
