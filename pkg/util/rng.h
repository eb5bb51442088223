/*
 * rng: a small, fast, seedable pseudo-random generator (xorshift64*) for
 * backoff jitter, randomised watch timeouts and fault injection. Not for
 * anything security-relevant. One state per owner: no global state.
 */
#ifndef KKS_UTIL_RNG_H
#define KKS_UTIL_RNG_H

#include <stdint.h>

struct rng {
    uint64_t s; /* never zero */
};

/* Seed with any value (0 maps to a fixed non-zero constant): same seed, same sequence. */
void rng_seed(struct rng *r, uint64_t seed);
/* Seed from the monotonic clock mixed with `salt` (e.g. the owner's address). */
void rng_seed_entropy(struct rng *r, const void *salt);
uint64_t rng_u64(struct rng *r);
/* Uniform double in [0, 1). */
double rng_double(struct rng *r);

#endif
