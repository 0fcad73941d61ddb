/* MoE routing skew and expert migration; see routing-skew.h. */
#include "routing-skew.h"

#include <math.h>
#include <string.h>

#include "workload.h"

void wh_routing_apportion(const double *weights, uint32_t E, uint64_t total, uint64_t *counts)
{
  double sum = 0;
  for (uint32_t e = 0; e < E; e++)
    sum += weights[e];
  g_return_if_fail(sum > 0);
  uint64_t given = 0;
  for (uint32_t e = 0; e < E; e++) {
    counts[e] = (uint64_t)floor((double)total * (weights[e] / sum));
    given += counts[e];
  }
  /* rounding may leave `given` a little above total on huge totals: take back first */
  for (uint32_t e = E; given > total && e-- > 0;) {
    uint64_t back = MIN(counts[e], given - total);
    counts[e] -= back;
    given -= back;
  }
  while (given < total) {
    uint32_t best = 0;
    double best_rem = -1;
    for (uint32_t e = 0; e < E; e++) {
      double rem = (double)total * (weights[e] / sum) - (double)counts[e];
      if (weights[e] > 0 && rem > best_rem) {
        best_rem = rem;
        best = e;
      }
    }
    counts[best]++;
    given++;
  }
}

void wh_routing_zipf_counts(const uint32_t *order, uint32_t E, double s, uint64_t total,
                            uint64_t *counts)
{
  /* apportioned in rank order, so that ties favour the more popular rank */
  g_autofree double *w = g_new(double, E);
  g_autofree uint64_t *by_rank = g_new(uint64_t, E);
  for (uint32_t k = 0; k < E; k++)
    w[k] = pow((double)(k + 1), -s);
  wh_routing_apportion(w, E, total, by_rank);
  for (uint32_t k = 0; k < E; k++)
    counts[order[k]] = by_rank[k];
}

void wh_routing_drift(uint32_t *order, uint32_t E, double p, WhRng *rng)
{
  for (uint32_t k = 0; k + 1 < E; k++) {
    if (wh_rng_uniform(rng) < p) {
      uint32_t t = order[k];
      order[k] = order[k + 1];
      order[k + 1] = t;
    }
  }
}

gboolean wh_routing_file_parse(const char *text, uint32_t E, const char *file, uint64_t **counts,
                               uint32_t *rows, GError **error)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  uint32_t n = 0;
  int line = 1;
  for (char **l = lines; *l; l++, line++) {
    char *hash = strchr(*l, '#');
    if (hash)
      *hash = '\0';
    g_auto(GStrv) tok = g_strsplit_set(g_strstrip(*l), " \t\r", -1);
    uint32_t k = 0;
    uint64_t sum = 0;
    for (char **t = tok; *t; t++) {
      if (**t == '\0')
        continue;
      guint64 v = 0;
      if (**t == '-' || **t == '+' ||
          !g_ascii_string_to_unsigned(*t, 10, 0, G_MAXUINT32, &v, NULL)) {
        g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                    "%s:%d: expert count \"%s\": expected an integer 0..%u", file, line, *t,
                    G_MAXUINT32);
        return FALSE;
      }
      g_array_append_val(out, v);
      sum += v;
      k++;
    }
    if (k == 0)
      continue;
    if (k != E) {
      g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                  "%s:%d: %u expert counts but the model has %u experts", file, line, k, E);
      return FALSE;
    }
    if (sum == 0) {
      g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                  "%s:%d: every expert count is 0", file, line);
      return FALSE;
    }
    n++;
  }
  if (n == 0) {
    g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID, "%s: no rows of expert counts",
                file);
    return FALSE;
  }
  *rows = n;
  *counts = (uint64_t *)g_array_free(g_steal_pointer(&out), FALSE);
  return TRUE;
}

void wh_routing_gcd_load(const uint64_t *counts, uint32_t E, const uint32_t *gcd_of, uint32_t G,
                         uint64_t *load)
{
  memset(load, 0, sizeof(uint64_t) * G);
  for (uint32_t e = 0; e < E; e++)
    load[gcd_of[e]] += counts[e];
}

double wh_routing_imbalance(const uint64_t *load, uint32_t G)
{
  uint64_t max = 0, sum = 0;
  for (uint32_t g = 0; g < G; g++) {
    max = MAX(max, load[g]);
    sum += load[g];
  }
  return sum ? (double)max * G / (double)sum : 1;
}

void wh_routing_dispatch_matrix(const uint64_t *counts, uint32_t E, const uint32_t *gcd_of,
                                uint32_t G, uint64_t token_bytes, uint64_t *m)
{
  memset(m, 0, sizeof(uint64_t) * G * G);
  for (uint32_t e = 0; e < E; e++) {
    uint32_t j = gcd_of[e];
    for (uint32_t i = 0; i < G; i++)
      m[i * G + j] += token_bytes * (counts[e] / G + (i < counts[e] % G));
  }
}

uint32_t wh_routing_hill_climb(const uint64_t *expert_load, uint32_t E, uint32_t G,
                               uint32_t *gcd_of, uint32_t rounds, WhExpertSwap *swaps)
{
  g_autofree uint64_t *load = g_new(uint64_t, G);
  wh_routing_gcd_load(expert_load, E, gcd_of, G, load);
  uint32_t n = 0;
  while (n < rounds) {
    uint32_t hi = 0, lo = 0;
    for (uint32_t g = 1; g < G; g++) {
      if (load[g] > load[hi])
        hi = g;
      if (load[g] < load[lo])
        lo = g;
    }
    uint64_t gap = load[hi] - load[lo];
    uint64_t best_after = gap;
    uint32_t ba = 0, bb = 0;
    for (uint32_t a = 0; a < E; a++) {
      if (gcd_of[a] != hi)
        continue;
      for (uint32_t b = 0; b < E; b++) {
        if (gcd_of[b] != lo || expert_load[a] <= expert_load[b] ||
            expert_load[a] - expert_load[b] >= gap)
          continue;
        uint64_t d2 = 2 * (expert_load[a] - expert_load[b]);
        uint64_t after = d2 > gap ? d2 - gap : gap - d2;
        if (after < best_after) {
          best_after = after;
          ba = a;
          bb = b;
        }
      }
    }
    if (best_after == gap)
      break;
    uint64_t d = expert_load[ba] - expert_load[bb];
    load[hi] -= d;
    load[lo] += d;
    gcd_of[ba] = lo;
    gcd_of[bb] = hi;
    swaps[n++] = (WhExpertSwap){.a = ba, .b = bb, .ga = hi, .gb = lo};
  }
  return n;
}
