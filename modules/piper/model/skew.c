/* Routing skew and expert migration in the plan (`whsim plan --skew zipf:S`): Zipf(S)
 * token shares over the experts ranked in index order (the workload builder's first
 * iteration: expert e on EP member e / (E / EP)), the busiest GCD's load over the mean,
 * the hill climbing of the paper's migration (swaps between the most and the least
 * loaded GCD of the EP group), and the paper's migration cost table. Cost: O(E log E +
 * rounds x (E / EP)^2). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "piper.h"
#include "wh-error.h"

gboolean wh_piper_skew_parse(const char *text, double *s, GError **error)
{
  char *end = NULL;
  if (!text || !g_str_has_prefix(text, "zipf:"))
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "--skew %s: expected zipf:S (S a number from 0 to %g)", text ? text : "",
                        WH_PIPER_MAX_ZIPF_S);
  double v = g_ascii_strtod(text + 5, &end);
  if (end == text + 5 || *end != '\0' || !isfinite(v))
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "--skew %s: S is not a number (expected zipf:S, S from 0 to %g)", text,
                        WH_PIPER_MAX_ZIPF_S);
  if (v < 0 || v > WH_PIPER_MAX_ZIPF_S)
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "--skew %s: S = %g is outside 0..%g", text, v, WH_PIPER_MAX_ZIPF_S);
  *s = v;
  return TRUE;
}

/* The busiest and the least loaded GCD of `load` (n). */
static void extremes(const double *load, uint32_t n, uint32_t *hi, uint32_t *lo)
{
  *hi = *lo = 0;
  for (uint32_t g = 1; g < n; g++) {
    if (load[g] > load[*hi])
      *hi = g;
    if (load[g] < load[*lo])
      *lo = g;
  }
}

void wh_piper_skew(const WhPiperModel *m, uint32_t ep, double s, uint32_t rounds, WhPiperSkew *out)
{
  uint32_t E = m->experts, per = E / ep;
  g_autofree double *p = g_new(double, E);
  g_autofree uint32_t *owner = g_new(uint32_t, E);
  g_autofree double *load = g_new0(double, ep);
  double sum = 0;
  for (uint32_t e = 0; e < E; e++)
    sum += p[e] = pow(e + 1.0, -s);
  for (uint32_t e = 0; e < E; e++) {
    p[e] /= sum;
    owner[e] = e / per;
    load[owner[e]] += p[e];
  }
  memset(out, 0, sizeof *out);
  uint32_t hi, lo;
  extremes(load, ep, &hi, &lo);
  out->before = load[hi] * ep;
  out->hottest = p[0] * ep; /* no placement goes below the hottest expert's share */
  for (uint32_t r = 0; r < rounds && ep > 1; r++) {
    extremes(load, ep, &hi, &lo);
    double best = load[hi];
    uint32_t ba = E, bb = E;
    for (uint32_t a = 0; a < E; a++) {
      if (owner[a] != hi)
        continue;
      for (uint32_t b = 0; b < E; b++) {
        if (owner[b] != lo)
          continue;
        double worse = MAX(load[hi] - p[a] + p[b], load[lo] + p[a] - p[b]);
        if (worse < best - 1e-15) {
          best = worse;
          ba = a;
          bb = b;
        }
      }
    }
    if (ba == E)
      break;
    load[hi] += p[bb] - p[ba];
    load[lo] += p[ba] - p[bb];
    owner[ba] = lo;
    owner[bb] = hi;
    out->swaps++;
  }
  extremes(load, ep, &hi, &lo);
  out->after = load[hi] * ep;
}

double wh_piper_expert_state_bytes(const WhPiperModel *m, uint32_t mats)
{
  /* parameters, gradients and optimizer state: 16 bytes per parameter */
  return 16.0 * mats * m->hidden * (double)m->ffn;
}
