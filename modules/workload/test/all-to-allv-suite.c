/* All-to-allv tests on the Frontier preset (8 GCD hosts per node): scenarios with a
 * size matrix (drawn from a seeded generator, a quarter of the entries zero; inline, or
 * read from a file) run in-process, then their flows are checked. Conservation: every
 * flat algorithm moves each pair exactly its matrix entry in one flow, and no flow for
 * a zero entry; HALO delivers to each GCD its column sum (bytes received minus bytes
 * forwarded in Phase III). Ordering: each HALO Phase III transfer starts no earlier
 * than MessageAlpha after the last Phase II transfer it forwards from arrived, exactly
 * when its rank's serial issue puts it (max(ready, the rank's previous start) + alpha,
 * in flow order); Phases I and II overlap. rccl: no rank ever has more than W sends in flight, and
 * it does use W. */
#include <check.h>
#include <string.h>

#include "test-util.h"
#include "workload.h"

#define MAX_N 32
#define ALPHA_PS 200000u /* the Frontier preset's wh::Workload::MessageAlpha */

typedef struct {
  uint32_t n;
  uint64_t m[MAX_N][MAX_N];
  WhRun *run;
} A2a;

/* A matrix for n GCDs: entry (i, j) is 0 (a quarter of them, and the diagonal) or
 * 1..64 KB, from a fixed linear congruential sequence. */
static void fill_matrix(A2a *a, uint32_t n, uint32_t seed)
{
  static const uint64_t kb[] = {1, 2, 4, 8, 16, 64};
  uint64_t x = seed * 2654435761u + 1;
  a->n = n;
  for (uint32_t i = 0; i < n; i++) {
    for (uint32_t j = 0; j < n; j++) {
      x = x * 6364136223846793005u + 1442695040888963407u;
      uint32_t r = (uint32_t)(x >> 33);
      a->m[i][j] = i == j || r % 4 == 0 ? 0 : kb[(r / 4) % 6] * 1000;
    }
  }
}

/* Runs the all-to-allv of `a` (or, with `uniform`, an all-to-all of `uniform` bytes
 * per rank, which sets the matrix to its per-pair chunk) with `algo` on one Frontier
 * group, with `sets` (nullable). With `from_file`, the scenario and its matrix (rows
 * split by ';' and commas, with a comment) are written to a temporary directory and the
 * scenario names the matrix file. */
static void a2a_run_with(A2a *a, const char *algo, uint64_t uniform, char **sets,
                         gboolean from_file)
{
  GString *x = g_string_new("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                            "<scenario name=\"a2av\" seed=\"1\">\n"
                            "  <topology preset=\"frontier\"/>\n  <workload>\n");
  uint32_t n = a->n;
  /* no algo: the op names none (wh::Workload::AllToAll, the preset's default) */
  g_autofree char *attr = algo ? g_strdup_printf(" algorithm=\"%s\"", algo) : g_strdup("");
  if (uniform) {
    g_string_append_printf(x,
                           "    <collective id=\"a\" kind=\"all-to-all\" ranks=\"0-%u\" "
                           "%s size=\"%" G_GUINT64_FORMAT "B\"/>\n",
                           n - 1, attr, uniform);
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t j = 0; j < n; j++)
        a->m[i][j] = i == j ? 0 : (uniform + n - 1) / n;
  } else if (from_file) {
    g_string_append_printf(x,
                           "    <collective id=\"a\" kind=\"all-to-allv\" ranks=\"0-%u\" "
                           "%s matrix=\"sizes.txt\"/>\n",
                           n - 1, attr);
  } else {
    g_string_append_printf(x,
                           "    <collective id=\"a\" kind=\"all-to-allv\" ranks=\"0-%u\" "
                           "%s>\n      <matrix>\n",
                           n - 1, attr);
    for (uint32_t i = 0; i < n; i++) {
      g_string_append(x, "       ");
      for (uint32_t j = 0; j < n; j++)
        g_string_append_printf(x, " %" G_GUINT64_FORMAT "B", a->m[i][j]);
      g_string_append_c(x, '\n');
    }
    g_string_append(x, "      </matrix>\n    </collective>\n");
  }
  g_string_append(x, "  </workload>\n</scenario>\n");
  g_autoptr(GError) err = NULL;
  WhScenario *sc;
  if (from_file) {
    g_autofree char *dir = g_dir_make_tmp("wh-a2av-XXXXXX", &err);
    ck_assert_msg(dir != NULL, "%s", err ? err->message : "");
    GString *m = g_string_new("# bytes each rank sends each rank\n");
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t j = 0; j < n; j++)
        g_string_append_printf(m, "%" G_GUINT64_FORMAT "B%s", a->m[i][j],
                               j + 1 < n ? ", " : (i % 2 ? "\n" : "; "));
    g_autofree char *mpath = g_build_filename(dir, "sizes.txt", NULL);
    g_autofree char *spath = g_build_filename(dir, "a2av.xml", NULL);
    ck_assert(g_file_set_contents(mpath, m->str, -1, NULL));
    ck_assert(g_file_set_contents(spath, x->str, -1, NULL));
    g_string_free(m, TRUE);
    sc = wh_scenario_load(spath, &err);
    ck_assert_msg(sc != NULL, "%s", err ? err->message : "");
    a->run = wh_run_new(sc, &(WhRunOptions){.sets = sets}, &err);
    wh_test_remove_tree(dir); /* the run has read the matrix */
  } else {
    sc = wh_scenario_load_memory(x->str, x->len, "a2av.xml", &err);
    ck_assert_msg(sc != NULL, "%s", err ? err->message : "");
    a->run = wh_run_new(sc, &(WhRunOptions){.sets = sets}, &err);
  }
  g_string_free(x, TRUE);
  ck_assert_msg(a->run != NULL, "%s", err ? err->message : "");
  wh_run_take_scenario(a->run, sc);
  wh_run_execute(a->run);
  ck_assert(wh_workload_done(a->run->workload));
}

static void a2a_run(A2a *a, const char *algo, uint64_t uniform, char **sets)
{
  a2a_run_with(a, algo, uniform, sets, FALSE);
}

static WhFlow *flow(const A2a *a, uint32_t i)
{
  return wh_transport_flow(a->run->tp, i);
}

/* The transfer index of flow i inside the all-to-all (op 0). */
static uint32_t xfer_of(const A2a *a, uint32_t i)
{
  uint32_t op, index;
  ck_assert(wh_workload_flow_origin(a->run->workload, i, &op, &index));
  ck_assert_uint_eq(op, 0);
  return index;
}

/* the last one reads its matrix from a file */
static const char *const flat_algos[] = {"direct", "pairwise", "rccl", "pairwise"};

START_TEST(test_flat_conservation)
{
  static A2a a;
  fill_matrix(&a, 16, 7);
  a2a_run_with(&a, flat_algos[_i], 0, NULL, _i == G_N_ELEMENTS(flat_algos) - 1);
  static uint64_t got[MAX_N][MAX_N], flows[MAX_N][MAX_N];
  memset(got, 0, sizeof got);
  memset(flows, 0, sizeof flows);
  for (uint32_t i = 0; i < a.run->tp->n_flows; i++) {
    const WhFlow *f = flow(&a, i);
    ck_assert(f->finish > 0);
    got[f->src][f->dst] += f->size;
    flows[f->src][f->dst]++;
  }
  uint32_t zeros = 0;
  for (uint32_t i = 0; i < a.n; i++) {
    for (uint32_t j = 0; j < a.n; j++) {
      ck_assert_msg(got[i][j] == a.m[i][j],
                    "%s: %u -> %u moved %" G_GUINT64_FORMAT " bytes, "
                    "the matrix says %" G_GUINT64_FORMAT,
                    flat_algos[_i], i, j, got[i][j], a.m[i][j]);
      ck_assert_uint_eq(flows[i][j], a.m[i][j] ? 1 : 0);
      zeros += i != j && a.m[i][j] == 0;
    }
  }
  ck_assert_uint_gt(zeros, 0); /* the case has empty pairs to skip */
  wh_run_free(a.run);
}
END_TEST

/* HALO's phases, from the matrix: Phase I moves every non-zero entry inside a node,
 * Phase II one message per (GCD, other node) with a non-zero row block; transfers are
 * numbered Phase I, then II, then III. */
static void halo_counts(const A2a *a, uint32_t *n1, uint32_t *n2)
{
  *n1 = *n2 = 0;
  for (uint32_t i = 0; i < a->n; i++) {
    for (uint32_t k = 0; k < a->n / 8; k++) {
      uint64_t block = 0;
      for (uint32_t j = 8 * k; j < 8 * k + 8; j++)
        block += a->m[i][j];
      if (k == i / 8)
        for (uint32_t j = 8 * k; j < 8 * k + 8; j++)
          *n1 += a->m[i][j] > 0;
      else
        *n2 += block > 0;
    }
  }
}

static const struct {
  uint32_t n;
  uint64_t uniform;
} halo_cases[] = {{32, 0}, {16, 0}, {16, 256000}};

START_TEST(test_halo_column_sums)
{
  static A2a a;
  fill_matrix(&a, halo_cases[_i].n, 11);
  a2a_run(&a, "halo", halo_cases[_i].uniform, NULL);
  uint32_t n1, n2;
  halo_counts(&a, &n1, &n2);
  uint64_t in[MAX_N] = {0}, forwarded[MAX_N] = {0}, block[MAX_N][MAX_N / 8] = {{0}};
  uint32_t phase3 = 0;
  for (uint32_t i = 0; i < a.run->tp->n_flows; i++) {
    const WhFlow *f = flow(&a, i);
    uint32_t x = xfer_of(&a, i);
    in[f->dst] += f->size;
    if (x < n1) { /* Phase I: one entry, inside a node */
      ck_assert_uint_eq(f->src / 8, f->dst / 8);
      ck_assert_uint_eq(f->size, a.m[f->src][f->dst]);
    } else if (x < n1 + n2) { /* Phase II: to the same GCD of another node */
      ck_assert_uint_ne(f->src / 8, f->dst / 8);
      ck_assert_uint_eq(f->src % 8, f->dst % 8);
      block[f->src][f->dst / 8] += f->size;
    } else { /* Phase III: forwarded inside the node */
      ck_assert_uint_eq(f->src / 8, f->dst / 8);
      forwarded[f->src] += f->size;
      phase3++;
    }
  }
  ck_assert_uint_gt(phase3, 0);
  for (uint32_t i = 0; i < a.n; i++) {
    for (uint32_t k = 0; k < a.n / 8; k++) {
      uint64_t want = 0;
      for (uint32_t j = 8 * k; j < 8 * k + 8 && k != i / 8; j++)
        want += a.m[i][j];
      ck_assert_uint_eq(block[i][k], want); /* each row block packed once */
    }
  }
  for (uint32_t j = 0; j < a.n; j++) {
    uint64_t column = 0;
    for (uint32_t i = 0; i < a.n; i++)
      column += i == j ? 0 : a.m[i][j];
    ck_assert_msg(in[j] - forwarded[j] == column,
                  "GCD %u kept %" G_GUINT64_FORMAT " bytes, its column sums to %" G_GUINT64_FORMAT,
                  j, in[j] - forwarded[j], column);
  }
  wh_run_free(a.run);
}
END_TEST

START_TEST(test_halo_phase_order)
{
  static A2a a;
  fill_matrix(&a, 32, 5);
  a2a_run(&a, "halo", 0, NULL);
  uint32_t n1, n2, nf = a.run->tp->n_flows;
  halo_counts(&a, &n1, &n2);
  WhTime p1_first = G_MAXUINT64, p1_last = 0, p2_first = G_MAXUINT64, p2_last = 0;
  WhTime issued[MAX_N] = {0}; /* per rank (= host): the start of its last flow */
  uint32_t checked = 0, held = 0;
  for (uint32_t i = 0; i < nf; i++) { /* flows in the order they were issued */
    const WhFlow *f = flow(&a, i);
    uint32_t x = xfer_of(&a, i);
    WhTime prev = issued[f->src];
    issued[f->src] = f->start;
    if (x < n1 + n2) /* Phases II then I: ready at 0, issued one alpha after another */
      ck_assert_uint_eq(f->start, prev + ALPHA_PS);
    if (x < n1) {
      p1_first = MIN(p1_first, f->start);
      p1_last = MAX(p1_last, f->finish);
      continue;
    }
    if (x < n1 + n2) {
      p2_first = MIN(p2_first, f->start);
      p2_last = MAX(p2_last, f->finish);
      continue;
    }
    /* Phase III from relay q to d: after every Phase II message into q from a source
     * with bytes for d, MessageAlpha after the last of them or after q's previous
     * message, whichever is later */
    WhTime ready = 0;
    uint32_t waits = 0;
    for (uint32_t k = 0; k < nf; k++) {
      const WhFlow *p = flow(&a, k);
      uint32_t y = xfer_of(&a, k);
      if (y >= n1 && y < n1 + n2 && p->dst == f->src && a.m[p->src][f->dst] > 0) {
        ck_assert_msg(f->start >= p->finish,
                      "Phase III %u -> %u starts before its data from %u "
                      "arrived",
                      f->src, f->dst, p->src);
        ready = MAX(ready, p->finish);
        waits++;
      }
    }
    ck_assert_uint_gt(waits, 0);
    ck_assert_uint_eq(f->start, MAX(ready, prev) + ALPHA_PS);
    checked++;
    held += prev > ready; /* its rank's issue engine held it back */
  }
  ck_assert_uint_gt(checked, 0);
  ck_assert_uint_gt(held, 0);
  /* Phases I and II start together (each rank's Phase II messages first) and overlap */
  ck_assert_uint_eq(p2_first, ALPHA_PS);
  ck_assert_uint_gt(p1_first, ALPHA_PS);
  ck_assert(p1_first < p2_last && p2_first < p1_last);
  wh_run_free(a.run);
}
END_TEST

static const uint32_t windows[] = {1, 3, 8};

START_TEST(test_rccl_window)
{
  static A2a a;
  uint32_t W = windows[_i];
  fill_matrix(&a, 32, 3);
  g_autofree char *set = g_strdup_printf("wh::Workload::RcclWindow=%u", W);
  char *sets[] = {set, "wh::Workload::RcclSchedule=window", NULL};
  a2a_run(&a, "rccl", 0, sets);
  uint32_t nf = a.run->tp->n_flows, peak_all = 0;
  for (uint32_t r = 0; r < a.n; r++) {
    /* the most sends of r in flight at once: at the start of each of its sends */
    uint32_t peak = 0;
    for (uint32_t i = 0; i < nf; i++) {
      const WhFlow *f = flow(&a, i);
      if (f->src != r)
        continue;
      uint32_t in_flight = 0;
      for (uint32_t k = 0; k < nf; k++) {
        const WhFlow *g = flow(&a, k);
        in_flight += g->src == r && g->start <= f->start && f->start < g->finish;
      }
      peak = MAX(peak, in_flight);
    }
    ck_assert_msg(peak <= W, "rank %u had %u sends in flight; the window is %u", r, peak, W);
    peak_all = MAX(peak_all, peak);
  }
  ck_assert_uint_eq(peak_all, W); /* the window is used, not just respected */
  wh_run_free(a.run);
}
END_TEST

/* rccl in batches (the Frontier preset's all-to-all, here named by no algorithm): the
 * pairwise rounds i = 1..n - 1 (member r sends to (r + i) mod n) go in batches i / W;
 * a rank's send of batch b > 0 starts only after every send and every receive of that
 * rank in batch b - 1 has arrived, and (alpha 0) exactly when the last of them did or
 * when the batch before it had no transfer of that rank. */
static const uint32_t batch_windows[] = {3, 12};

START_TEST(test_rccl_batches)
{
  static A2a a;
  uint32_t W = batch_windows[_i];
  fill_matrix(&a, 32, 5);
  g_autofree char *set = g_strdup_printf("wh::Workload::RcclWindow=%u", W);
  char *sets[] = {set, "wh::Workload::MessageAlpha=0ns", NULL};
  a2a_run(&a, NULL, 0, sets);
  uint32_t nf = a.run->tp->n_flows, n = a.n, waited = 0;
  for (uint32_t i = 0; i < nf; i++) {
    const WhFlow *f = flow(&a, i);
    uint32_t b = ((f->dst + n - f->src) % n) / W;
    WhTime ready = 0;
    uint32_t before = 0;
    for (uint32_t k = 0; b > 0 && k < nf; k++) {
      const WhFlow *g = flow(&a, k);
      if (((g->dst + n - g->src) % n) / W != b - 1 || (g->src != f->src && g->dst != f->src))
        continue;
      ck_assert_msg(f->start >= g->finish, "%u -> %u (batch %u) starts before %u -> %u arrived",
                    f->src, f->dst, b, g->src, g->dst);
      ready = MAX(ready, g->finish);
      before++;
    }
    if (before) {
      ck_assert_uint_eq(f->start, ready);
      waited++;
    }
  }
  ck_assert_uint_gt(waited, 0);
  wh_run_free(a.run);
}
END_TEST

Suite *wh_all_to_allv_suite(void)
{
  Suite *s = suite_create("all-to-allv");
  TCase *tc = tcase_create("conservation");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_flat_conservation, 0, G_N_ELEMENTS(flat_algos));
  tcase_add_loop_test(tc, test_halo_column_sums, 0, G_N_ELEMENTS(halo_cases));
  suite_add_tcase(s, tc);
  TCase *order = tcase_create("ordering");
  tcase_set_timeout(order, 60);
  tcase_add_test(order, test_halo_phase_order);
  tcase_add_loop_test(order, test_rccl_window, 0, G_N_ELEMENTS(windows));
  tcase_add_loop_test(order, test_rccl_batches, 0, G_N_ELEMENTS(batch_windows));
  suite_add_tcase(s, order);
  return s;
}
