/* Simulation time: an unsigned 64-bit count of picoseconds (about 213 days of
 * simulated time). Integer time keeps event ordering exact and runs bit-for-bit
 * reproducible; helpers here convert to and from seconds for reporting only. */
#ifndef WH_TIME_H
#define WH_TIME_H

#include <stdint.h>

typedef uint64_t WhTime;

#define WH_PS ((WhTime)1)
#define WH_NS ((WhTime)1000)
#define WH_US ((WhTime)1000000)
#define WH_MS ((WhTime)1000000000)
#define WH_S ((WhTime)1000000000000)

/* The time horizon: no time a scenario gives (start, delay, timeout, stop) may exceed
 * it, and the simulator refuses to schedule past it, so a sum of two scenario times
 * never wraps. 10^6 s, about 11.6 days of simulated time. */
#define WH_TIME_HORIZON (1000000 * WH_S)
#define WH_TIME_MAX UINT64_MAX

static inline double wh_time_to_s(WhTime t)
{
  return (double)t * 1e-12;
}

/* Serialization time of `bytes` at `rate_bps`, rounded up to a whole picosecond. Frames
 * (bytes < 2^21) at rates below 2^60 b/s fit the dividend in 64 bits (< 1.68e19 +
 * 1.16e18): one 64-bit division instead of a call to the 128-bit one, same result. */
static inline WhTime wh_time_tx(uint64_t bytes, uint64_t rate_bps)
{
  if (((bytes | (rate_bps >> 39)) >> 21) == 0)
    return (bytes * 8u * WH_S + rate_bps - 1) / rate_bps;
  return (WhTime)(((unsigned __int128)bytes * 8u * WH_S + rate_bps - 1) / rate_bps);
}

#endif
