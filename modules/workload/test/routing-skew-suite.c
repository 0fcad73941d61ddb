/* Routing-skew tests on the pure functions: the hill climb against a brute force over
 * every placement of 16 experts on 8 GPUs (2 each) for many seeded random loads (it
 * never raises max/mean, never beats the optimum, and stops only where no swap of the
 * most and least loaded GPU narrows their gap); Zipf counts (their sum, their order
 * along the ranking, their distance from the exact share); the drift walk; the
 * dispatch matrix's conservation; the routing file parser's refusals. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "routing-skew.h"
#include "workload.h"

#define G 8
#define E 16

static uint64_t max_load(const uint64_t *load, uint32_t n)
{
  uint64_t m = 0;
  for (uint32_t i = 0; i < n; i++)
    m = MAX(m, load[i]);
  return m;
}

/* The least max GPU load over every way to pair the experts not yet in `used` onto
 * GPUs (2 experts each, GPUs interchangeable), given the pairs so far reached `cur`;
 * branches that cannot beat `*best` are cut. */
static void brute(const uint64_t *w, gboolean *used, uint64_t cur, uint64_t *best)
{
  if (cur >= *best)
    return;
  uint32_t a = 0;
  while (a < E && used[a])
    a++;
  if (a == E) {
    *best = cur;
    return;
  }
  used[a] = TRUE;
  for (uint32_t b = a + 1; b < E; b++) {
    if (used[b])
      continue;
    used[b] = TRUE;
    brute(w, used, MAX(cur, w[a] + w[b]), best);
    used[b] = FALSE;
  }
  used[a] = FALSE;
}

START_TEST(test_hill_climb_brute_force)
{
  uint32_t optimal = 0, seeds = 300;
  for (uint32_t seed = 1; seed <= seeds; seed++) {
    WhRng rng;
    wh_rng_init(&rng, seed, 0x68696c6cULL);
    uint64_t w[E], load[G], sum = 0;
    uint32_t gcd_of[E];
    for (uint32_t e = 0; e < E; e++) {
      /* heavy-tailed loads: a few popular experts, as under Zipf routing */
      w[e] = 1 + (uint64_t)(1000.0 * pow(wh_rng_uniform(&rng), 3.0));
      gcd_of[e] = e / (E / G);
      sum += w[e];
    }
    wh_routing_gcd_load(w, E, gcd_of, G, load);
    double before = wh_routing_imbalance(load, G), prev = before;
    /* one round at a time: max/mean never rises from round to round */
    WhExpertSwap sw[1];
    uint32_t rounds = 0;
    while (rounds < 64 && wh_routing_hill_climb(w, E, G, gcd_of, 1, sw) == 1) {
      rounds++;
      wh_routing_gcd_load(w, E, gcd_of, G, load);
      double now = wh_routing_imbalance(load, G);
      ck_assert_msg(now <= prev, "seed %u round %u: max/mean %.6f after %.6f", seed, rounds, now,
                    prev);
      prev = now;
    }
    ck_assert_uint_lt(rounds, 64); /* it stops by itself */
    uint32_t per[G] = {0};
    for (uint32_t e = 0; e < E; e++)
      per[gcd_of[e]]++;
    for (uint32_t g = 0; g < G; g++)
      ck_assert_uint_eq(per[g], E / G); /* swaps keep 2 experts on every GPU */
    /* stopped: no swap between the most and least loaded GPU narrows their gap */
    uint32_t hi = 0, lo = 0;
    for (uint32_t g = 1; g < G; g++) {
      hi = load[g] > load[hi] ? g : hi;
      lo = load[g] < load[lo] ? g : lo;
    }
    for (uint32_t a = 0; a < E; a++) {
      for (uint32_t b = 0; b < E; b++) {
        if (gcd_of[a] == hi && gcd_of[b] == lo)
          ck_assert_msg(!(w[a] > w[b] && w[a] - w[b] < load[hi] - load[lo]),
                        "seed %u: swap %u, %u would still help", seed, a, b);
      }
    }
    gboolean used[E] = {FALSE};
    uint64_t best = UINT64_MAX;
    brute(w, used, 0, &best);
    double opt = (double)best * G / (double)sum, after = wh_routing_imbalance(load, G);
    ck_assert_msg(after <= before, "seed %u: %.6f > %.6f", seed, after, before);
    ck_assert_msg(after >= opt - 1e-12, "seed %u: %.6f beats the optimum %.6f", seed, after, opt);
    ck_assert_uint_ge(max_load(load, G), best);
    optimal += max_load(load, G) == best;
  }
  fprintf(stderr, "hill climb: optimal max load in %u of %u seeded cases (8 GPUs x 16 experts)\n",
          optimal, seeds);
}
END_TEST

START_TEST(test_zipf_counts)
{
  uint32_t order[E];
  uint64_t c[E];
  for (uint32_t e = 0; e < E; e++)
    order[e] = (e * 7 + 3) % E; /* a ranking that is not the identity */
  const double s_values[] = {0, 0.5, 1.0, 2.0};
  const uint64_t totals[] = {1, 17, 4096 * 2, 1000003};
  for (size_t i = 0; i < G_N_ELEMENTS(s_values); i++) {
    for (size_t t = 0; t < G_N_ELEMENTS(totals); t++) {
      double s = s_values[i], h = 0;
      wh_routing_zipf_counts(order, E, s, totals[t], c);
      uint64_t sum = 0;
      for (uint32_t k = 0; k < E; k++)
        h += pow(k + 1, -s);
      for (uint32_t k = 0; k < E; k++) {
        sum += c[order[k]];
        double exact = (double)totals[t] * pow(k + 1, -s) / h;
        ck_assert_msg(fabs((double)c[order[k]] - exact) < 1.0, "s %g rank %u: %lu vs %.3f", s, k,
                      (unsigned long)c[order[k]], exact);
        if (k > 0)
          ck_assert_msg(c[order[k]] <= c[order[k - 1]], "s %g: rank %u above rank %u", s, k, k - 1);
      }
      ck_assert_uint_eq(sum, totals[t]);
    }
  }
  /* 512 tokens per GPU x 8 GPUs x top-2, s = 1: the top expert takes 1 / H(16) */
  wh_routing_zipf_counts(order, E, 1.0, 8192, c);
  fprintf(stderr, "zipf s=1 over 16 experts, 8192 token slots: top %lu, last %lu\n",
          (unsigned long)c[order[0]], (unsigned long)c[order[E - 1]]);
}
END_TEST

START_TEST(test_drift)
{
  uint32_t order[E], start[E];
  for (uint32_t e = 0; e < E; e++)
    order[e] = start[e] = e;
  WhRng rng;
  wh_rng_init(&rng, 5, 1);
  wh_routing_drift(order, E, 0, &rng);
  ck_assert_mem_eq(order, start, sizeof order);
  /* p = 1: every adjacent swap in turn carries the first expert to the end */
  wh_routing_drift(order, E, 1, &rng);
  for (uint32_t k = 0; k + 1 < E; k++)
    ck_assert_uint_eq(order[k], k + 1);
  ck_assert_uint_eq(order[E - 1], 0);
  /* small p: a permutation that moves slowly (Kendall distance per step ~ p (E - 1)) */
  for (uint32_t e = 0; e < E; e++)
    order[e] = e;
  uint32_t moved = 0;
  for (int it = 0; it < 100; it++) {
    wh_routing_drift(order, E, 0.01, &rng);
    gboolean seen[E] = {FALSE};
    for (uint32_t k = 0; k < E; k++) {
      ck_assert(!seen[order[k]]);
      seen[order[k]] = TRUE;
    }
  }
  for (uint32_t k = 0; k < E; k++)
    moved += order[k] != k;
  ck_assert_uint_lt(moved, E); /* after 100 steps at 1%, most experts keep their rank */
}
END_TEST

START_TEST(test_dispatch_conservation)
{
  uint64_t counts[E], load[G], m[G * G];
  uint32_t gcd_of[E];
  WhRng rng;
  wh_rng_init(&rng, 9, 2);
  uint64_t total = 0;
  for (uint32_t e = 0; e < E; e++) {
    counts[e] = wh_rng_next(&rng) % 5000;
    gcd_of[e] = (uint32_t)(wh_rng_next(&rng) % G); /* any placement */
    total += counts[e];
  }
  const uint64_t tb = 8192; /* hidden 4096 x 2 bytes */
  wh_routing_gcd_load(counts, E, gcd_of, G, load);
  wh_routing_dispatch_matrix(counts, E, gcd_of, G, tb, m);
  uint64_t all = 0;
  for (uint32_t j = 0; j < G; j++) {
    uint64_t col = 0;
    for (uint32_t i = 0; i < G; i++)
      col += m[i * G + j];
    ck_assert_uint_eq(col, tb * load[j]);
    all += col;
  }
  ck_assert_uint_eq(all, tb * total);
  /* every member sends each expert its share: rows differ by at most one token an expert */
  for (uint32_t i = 0; i < G; i++) {
    uint64_t row = 0;
    for (uint32_t j = 0; j < G; j++)
      row += m[i * G + j];
    ck_assert_uint_le(row, tb * (total / G + E));
    ck_assert_uint_ge(row + tb * E, tb * (total / G));
  }
}
END_TEST

START_TEST(test_file_parse)
{
  g_autoptr(GError) err = NULL;
  uint64_t *c = NULL;
  uint32_t rows = 0;
  ck_assert(wh_routing_file_parse("# two iterations\n1 2 3 4\n\n 4\t3 2 1 # tail\n", 4, "f.txt", &c,
                                  &rows, &err));
  ck_assert_uint_eq(rows, 2);
  ck_assert_uint_eq(c[0], 1);
  ck_assert_uint_eq(c[7], 1);
  g_free(c);
  const struct {
    const char *text, *expect;
  } bad[] = {{"1 2 3\n", "f.txt:1: 3 expert counts but the model has 4 experts"},
             {"1 2 3 4\n1 2 3 4 5\n", "f.txt:2: 5 expert counts"},
             {"1 2 -3 4\n", "f.txt:1: expert count \"-3\""},
             {"1 2 x 4\n", "expert count \"x\""},
             {"0 0 0 0\n", "f.txt:1: every expert count is 0"},
             {"# nothing\n", "f.txt: no rows"}};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_clear_error(&err);
    ck_assert(!wh_routing_file_parse(bad[i].text, 4, "f.txt", &c, &rows, &err));
    ck_assert_msg(strstr(err->message, bad[i].expect), "%s", err->message);
  }
}
END_TEST

Suite *wh_routing_skew_suite(void)
{
  Suite *s = suite_create("routing-skew");
  TCase *tc = tcase_create("hill-climb");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_hill_climb_brute_force);
  suite_add_tcase(s, tc);
  tc = tcase_create("counts");
  tcase_add_test(tc, test_zipf_counts);
  tcase_add_test(tc, test_drift);
  tcase_add_test(tc, test_dispatch_conservation);
  tcase_add_test(tc, test_file_parse);
  suite_add_tcase(s, tc);
  return s;
}
