#include "pkg/util/rng.h"
#include "pkg/util/clock.h"

#define RNG_ZERO_SEED 0x9E3779B97F4A7C15ull

void rng_seed(struct rng *r, uint64_t seed)
{
    r->s = seed ? seed : RNG_ZERO_SEED;
}

void rng_seed_entropy(struct rng *r, const void *salt)
{
    rng_seed(r, clock_mono_ns() ^ (uint64_t)(uintptr_t)salt ^ RNG_ZERO_SEED);
}

uint64_t rng_u64(struct rng *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

double rng_double(struct rng *r)
{
    return (double)(rng_u64(r) >> 11) / 9007199254740992.0; /* 2^53 */
}
