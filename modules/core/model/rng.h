/* Random streams: one xoshiro256** generator per entity, seeded by splitmix64 from
 * (run seed, entity id). Streams are independent of each other and of the order in
 * which entities draw, so adding an entity or an observer never perturbs another
 * entity's draws. 32 bytes per stream; a draw is a handful of instructions. */
#ifndef WH_RNG_H
#define WH_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint64_t s[4];
} WhRng;

void wh_rng_init(WhRng *rng, uint64_t seed, uint64_t entity);

static inline uint64_t wh_rng_rotl(uint64_t x, int k)
{
  return (x << k) | (x >> (64 - k));
}

static inline uint64_t wh_rng_next(WhRng *r)
{
  uint64_t *s = r->s;
  uint64_t result = wh_rng_rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = wh_rng_rotl(s[3], 45);
  return result;
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double wh_rng_uniform(WhRng *r)
{
  return (double)(wh_rng_next(r) >> 11) * 0x1.0p-53;
}

/* FNV-1a, 64 bits, of n bytes at p, continuing from h (WH_FNV1A_INIT to start): the
 * configuration digest, the memo file's checksum, the memo keys' signatures. */
#define WH_FNV1A_INIT 0xcbf29ce484222325ULL
static inline uint64_t wh_fnv1a(uint64_t h, const void *p, size_t n)
{
  const uint8_t *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}

/* A well-mixed 64-bit hash (splitmix64 finalizer), also used for ECMP. */
static inline uint64_t wh_mix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

#endif
