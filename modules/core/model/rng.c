/* Seeding of per-entity random streams; see rng.h. */
#include "rng.h"

void wh_rng_init(WhRng *rng, uint64_t seed, uint64_t entity)
{
  uint64_t x = wh_mix64(seed ^ 0x9e3779b97f4a7c15ULL) ^ wh_mix64(entity + 0x632be59bd9b4e019ULL);
  for (int i = 0; i < 4; i++) {
    x += 0x9e3779b97f4a7c15ULL;
    rng->s[i] = wh_mix64(x);
  }
}
