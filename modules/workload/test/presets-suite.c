/* Model-preset tests: small GPT-like and MoE jobs (TP1 PP2 DP2; PP4 with 6
 * micro-batches; 4 layers with 2 buckets over 2 iterations; TP2 PP2 DP4 EP2) on a
 * small wh::RailFatTree, checked against closed-form op counts, compute durations
 * (FLOPs / (peak x efficiency) with the Megatron-LM formula 24 s h^2 (1 + s / 6h) of
 * Narayanan et al., SC'21), the 1F1B order of every stage as dependencies, all-reduces
 * after the last backward (or their bucket's part) and message sizes, then run to
 * completion with every op starting after its dependencies end and exactly the
 * predicted bytes on the network. The 128-GPU GPT-13B (TP8 PP2 DP8) and MoE-8x7B (TP8
 * PP2 DP8 EP8) presets are only built and checked (counts, ranks, sizes, rail
 * alignment of groups), not run; the facts of every preset are printed; the
 * wh::ModelPreset parameters fill a spec. The routing-skew case runs a tiny MoE with
 * expert counts from a file (every all-to-allv flow and expert time against the
 * counts), with Zipf routing and migration (the migration flows against the moved
 * experts' bytes) and twice with one seed (identical ops.csv). */
#include <check.h>
#include <math.h>
#include <string.h>

#include "presets.h"
#include "test-util.h"

typedef struct {
  WhScenario *sc;
  WhRun *run;
  WhWorkload *w;
  GHashTable *by_name; /* op name -> id + 1 */
} Job;

/* Flow f of the job's workload and the op it belongs to. */
static const WhFlow *job_flow(Job *j, uint32_t f, WhOpInfo *info)
{
  uint32_t id, index;
  ck_assert(wh_workload_flow_origin(j->w, f, &id, &index));
  wh_workload_op_info(j->w, id, info);
  return wh_transport_flow(j->run->tp, f);
}

static void job_open(Job *j, uint32_t servers, uint32_t gpus, uint32_t ranks)
{
  j->sc = wh_scenario_new("presets", "wh::RailFatTree");
  g_autofree char *s = g_strdup_printf("%u", servers), *g = g_strdup_printf("%u", gpus);
  wh_scenario_add_set(j->sc, "wh::RailFatTree::Servers", s);
  wh_scenario_add_set(j->sc, "wh::RailFatTree::GpusPerServer", g);
  wh_scenario_add_set(j->sc, "wh::RailFatTree::Spines", "2");
  g_autoptr(GError) err = NULL;
  j->run = wh_run_new(j->sc, NULL, &err);
  ck_assert_msg(j->run != NULL, "%s", err ? err->message : "");
  j->w = wh_workload_new(j->run->tp, ranks);
  j->by_name = NULL;
}

static void job_build(Job *j, const WhPresetSpec *spec)
{
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wh_preset_build(j->w, spec, &err), "%s", err ? err->message : "");
  j->by_name = g_hash_table_new(g_str_hash, g_str_equal);
  for (uint32_t i = 0; i < wh_workload_n_ops(j->w); i++) {
    WhOpInfo info;
    wh_workload_op_info(j->w, i, &info);
    ck_assert_msg(!g_hash_table_contains(j->by_name, info.name), "duplicate name %s", info.name);
    g_hash_table_insert(j->by_name, (gpointer)info.name, GUINT_TO_POINTER(i + 1));
  }
}

/* Builds a skewed MoE spec on 8 servers x 2 GPUs (16 ranks) and runs it to the end. */
static void job_run_skewed(Job *j, const WhPresetSpec *spec)
{
  job_open(j, 8, 2, 16);
  job_build(j, spec);
  wh_workload_start(j->w);
  wh_sim_run(j->run->sim);
  ck_assert(wh_workload_done(j->w));
}

static void job_close(Job *j)
{
  if (j->by_name)
    g_hash_table_unref(j->by_name);
  wh_workload_free(j->w);
  wh_run_free(j->run);
  wh_scenario_free(j->sc);
}

/* The op named exactly `name`, or the only one whose name starts with `name/` (for
 * communication ops, whose names end in their size). */
static uint32_t op(Job *j, const char *name)
{
  gpointer v = g_hash_table_lookup(j->by_name, name);
  if (v)
    return GPOINTER_TO_UINT(v) - 1;
  g_autofree char *prefix = g_strconcat(name, "/", NULL);
  uint32_t found = UINT32_MAX, n = 0;
  GHashTableIter it;
  gpointer k;
  g_hash_table_iter_init(&it, j->by_name);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    if (g_str_has_prefix(k, prefix) && strchr((const char *)k + strlen(prefix), '/') == NULL) {
      found = GPOINTER_TO_UINT(v) - 1;
      n++;
    }
  }
  ck_assert_msg(n == 1, "%u ops named %s", n, name);
  return found;
}

static uint64_t op_bytes(Job *j, uint32_t id)
{
  WhOpInfo info;
  wh_workload_op_info(j->w, id, &info);
  const char *slash = strrchr(info.name, '/');
  ck_assert(slash && g_str_has_suffix(info.name, "B"));
  return g_ascii_strtoull(slash + 1, NULL, 10);
}

static gboolean has_dep(Job *j, uint32_t id, uint32_t dep)
{
  WhOpInfo info;
  wh_workload_op_info(j->w, id, &info);
  for (uint32_t i = 0; i < info.n_deps; i++) {
    if (info.deps[i] == dep)
      return TRUE;
  }
  return FALSE;
}

static uint32_t n_deps(Job *j, uint32_t id)
{
  WhOpInfo info;
  wh_workload_op_info(j->w, id, &info);
  return info.n_deps;
}

#define DEP(j, a, b) ck_assert_msg(has_dep(j, op(j, a), op(j, b)), "%s does not wait for %s", a, b)

/* Ops per kind from ops.csv: compute, send, all-reduce, all-to-all. */
static void count_kinds(Job *j, uint32_t out[4])
{
  static const char *kinds[] = {"compute", "send", "all-reduce", "all-to-all"};
  memset(out, 0, 4 * sizeof(uint32_t));
  g_autofree char *csv = wh_workload_ops_csv(j->w);
  g_autoptr(GPtrArray) rows = wh_test_csv_rows(csv, "op_id,rank,kind,name,start_ps,end_ps,deps");
  for (guint i = 0; i < rows->len; i++) {
    char **f = rows->pdata[i];
    for (int k = 0; k < 4; k++) {
      if (strcmp(f[2], kinds[k]) == 0)
        out[k]++;
    }
  }
}

static void check_counts(Job *j, const WhPresetFacts *f, uint32_t iterations, uint32_t compute,
                         uint32_t sends, uint32_t all_reduce, uint32_t all_to_all)
{
  uint32_t got[4];
  count_kinds(j, got);
  fprintf(stderr, "ops: %u compute, %u send, %u all-reduce, %u all-to-all (formula: %u %u %u %u)\n",
          got[0], got[1], got[2], got[3], compute * iterations, sends * iterations,
          all_reduce * iterations, all_to_all * iterations);
  ck_assert_uint_eq(got[0], compute * iterations);
  ck_assert_uint_eq(got[1], sends * iterations);
  ck_assert_uint_eq(got[2], all_reduce * iterations);
  ck_assert_uint_eq(got[3], all_to_all * iterations);
  ck_assert_uint_eq(f->n_compute, compute);
  ck_assert_uint_eq(f->n_send, sends);
  ck_assert_uint_eq(f->n_all_reduce, all_reduce);
  ck_assert_uint_eq(f->n_all_to_all, all_to_all);
  ck_assert_uint_eq(wh_workload_n_ops(j->w), f->ops * iterations);
}

/* Runs the job; checks it ends, the DAG order, and the bytes on the network and the
 * busiest rank's compute time against the test's own formulas (`bytes`, and
 * `compute` ps within one ps of rounding per op), which the builder's facts must match
 * too. */
static void job_run(Job *j, const WhPresetFacts *f, uint32_t iterations, double compute,
                    uint64_t bytes)
{
  wh_workload_start(j->w);
  wh_sim_run(j->run->sim);
  ck_assert(wh_workload_done(j->w));
  wh_test_assert_clean_end(j->run);
  uint32_t n = wh_workload_n_ops(j->w), ranks = wh_workload_n_ranks(j->w);
  g_autofree WhTime *busy = g_new0(WhTime, ranks);
  g_autofree uint32_t *ops = g_new0(uint32_t, ranks);
  WhTime end = 0;
  for (uint32_t i = 0; i < n; i++) {
    WhOpInfo info;
    wh_workload_op_info(j->w, i, &info);
    ck_assert(info.end >= info.start);
    end = MAX(end, info.end);
    for (uint32_t d = 0; d < info.n_deps; d++) {
      WhOpInfo dep;
      wh_workload_op_info(j->w, info.deps[d], &dep);
      ck_assert_msg(info.start >= dep.end, "%s starts before %s ends", info.name, dep.name);
    }
    if (info.kind == WH_OP_COMPUTE) {
      busy[info.rank] += info.end - info.start;
      ops[info.rank]++;
    }
  }
  uint32_t busiest = 0;
  for (uint32_t r = 0; r < ranks; r++)
    busiest = busy[r] > busy[busiest] ? r : busiest;
  uint64_t on_network = 0;
  WhTransport *tp = j->run->tp;
  for (uint32_t i = 0; i < tp->n_flows; i++)
    on_network += wh_transport_flow(tp, i)->size;
  fprintf(stderr,
          "ran %u ops to %.3f us: %u flows, %" G_GUINT64_FORMAT " bytes (formula %" G_GUINT64_FORMAT
          "), busiest compute %.6f us (formula %.6f us)\n",
          n, (double)end * 1e-6, tp->n_flows, on_network, bytes, (double)busy[busiest] * 1e-6,
          compute * 1e-6);
  ck_assert_msg(fabs((double)busy[busiest] - compute) <= ops[busiest], "compute %.0f vs %.1f ps",
                (double)busy[busiest], compute);
  ck_assert_uint_eq(on_network, bytes);
  ck_assert_uint_eq(busy[busiest], f->compute_time * iterations);
  ck_assert_uint_eq(bytes, (f->dp_bytes + f->pp_bytes + f->ep_bytes) * iterations);
}

/* A compute op's duration (after the run) against `flops` at `rate` FLOP/s. */
static void check_duration(Job *j, const char *name, double flops, double rate)
{
  WhOpInfo info;
  wh_workload_op_info(j->w, op(j, name), &info);
  double expect = flops / rate * 1e12, got = (double)(info.end - info.start);
  fprintf(stderr, "%s: %.0f ps, FLOPs/(peak x eff) = %.1f ps\n", name, got, expect);
  ck_assert_msg(fabs(got - expect) <= 1, "%s: %.0f vs %.1f ps", name, got, expect);
}

static void small_gpt(WhPresetSpec *s, uint32_t layers)
{
  g_autoptr(GError) err = NULL;
  ck_assert(wh_preset_spec_init(s, "gpt-7b", &err));
  s->model = "tiny-gpt";
  s->shape.layers = layers;
  s->shape.hidden = 256;
  s->shape.ffn = 1024;
  s->shape.heads = 4;
  s->shape.kv_heads = 4;
  s->shape.seq = 128;
  s->shape.vocab = 1000;
  s->tp = 1;
  s->pp = 2;
  s->dp = 2;
  s->peak_flops = 10e12;
  s->efficiency = 0.5;
}

/* GPT layer params (Narayanan et al. eq. 2 per layer: 12 h^2 + 13 h). */
static uint64_t gpt_layer_params(uint64_t h)
{
  return 12 * h * h + 13 * h;
}

/* GPT layer forward FLOPs for one sequence (Narayanan et al.): 24 s h^2 (1 + s / 6h). */
static double gpt_layer_flops(double h, double sq)
{
  return 24.0 * sq * h * h * (1 + sq / (6.0 * h));
}

START_TEST(test_small_gpt)
{
  WhPresetSpec s;
  small_gpt(&s, 2);
  WhPresetFacts f;
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wh_preset_facts(&s, &f, &err), "%s", err ? err->message : "");
  g_autofree char *text = wh_preset_facts_text(&s, &f);
  fprintf(stderr, "%s\n", text);
  Job j;
  job_open(&j, 2, 2, 4);
  job_build(&j, &s);
  /* n ranks, m = PP micro-batches: n 2m computes, 2 m (P - 1) D T sends, P T ARs */
  uint32_t n = 4, m = 2;
  check_counts(&j, &f, 1, n * 2 * m, 2 * m * 1 * 2 * 1, 2 * 1, 0);
  ck_assert_uint_eq(f.ranks, 4);
  ck_assert_uint_eq(f.global_batch, 4);
  /* 1F1B: stage 0 (ranks 0, 1): F0 F1 B0 B1; stage 1 (ranks 2, 3): F0 B0 F1 B1 */
  for (uint32_t d = 0; d < 2; d++) {
    uint32_t r0 = wh_preset_rank(&s, 0, d, 0), r1 = wh_preset_rank(&s, 1, d, 0);
    ck_assert_uint_eq(r0, d);
    ck_assert_uint_eq(r1, 2 + d);
    g_autofree char *f0 = g_strdup_printf("i0/s0/r%u/F0", r0),
                    *f1 = g_strdup_printf("i0/s0/r%u/F1", r0),
                    *b0 = g_strdup_printf("i0/s0/r%u/B0", r0),
                    *b1 = g_strdup_printf("i0/s0/r%u/B1", r0),
                    *g0 = g_strdup_printf("i0/s1/r%u/F0", r1),
                    *g1 = g_strdup_printf("i0/s1/r%u/F1", r1),
                    *c0 = g_strdup_printf("i0/s1/r%u/B0", r1),
                    *c1 = g_strdup_printf("i0/s1/r%u/B1", r1),
                    *sf0 = g_strdup_printf("i0/pp/F0/r%u>r%u", r0, r1),
                    *sf1 = g_strdup_printf("i0/pp/F1/r%u>r%u", r0, r1),
                    *sb0 = g_strdup_printf("i0/pp/B0/r%u>r%u", r1, r0),
                    *sb1 = g_strdup_printf("i0/pp/B1/r%u>r%u", r1, r0);
    ck_assert_uint_eq(n_deps(&j, op(&j, f0)), 0);
    DEP(&j, f1, f0);
    DEP(&j, b0, f1);
    DEP(&j, b0, sb0);
    DEP(&j, b1, b0);
    DEP(&j, b1, sb1);
    DEP(&j, sf0, f0);
    DEP(&j, sf1, f1);
    DEP(&j, g0, sf0);
    DEP(&j, c0, g0);
    DEP(&j, g1, c0);
    DEP(&j, g1, sf1);
    DEP(&j, c1, g1);
    DEP(&j, sb0, c0);
    DEP(&j, sb1, c1);
    ck_assert_uint_eq(op_bytes(&j, op(&j, sf0)), 128 * 256 * 2);
    ck_assert_uint_eq(op_bytes(&j, op(&j, sb1)), 128 * 256 * 2);
  }
  /* the DP all-reduce of each stage waits for exactly its ranks' last backward */
  const char *ar[] = {"i0/dp/s0/tp0/b0", "i0/dp/s1/tp0/b0"};
  const char *last[2][2] = {{"i0/s0/r0/B1", "i0/s0/r1/B1"}, {"i0/s1/r2/B1", "i0/s1/r3/B1"}};
  uint64_t h = 256, V = 1000, sq = 128;
  uint64_t ar_bytes[] = {(gpt_layer_params(h) + V * h + sq * h) * 2, /* + embedding, positions */
                         (gpt_layer_params(h) + V * h) * 2};         /* + tied head copy */
  for (int p = 0; p < 2; p++) {
    ck_assert_uint_eq(n_deps(&j, op(&j, ar[p])), 2);
    DEP(&j, ar[p], last[p][0]);
    DEP(&j, ar[p], last[p][1]);
    ck_assert_uint_eq(op_bytes(&j, op(&j, ar[p])), ar_bytes[p]);
  }
  ck_assert_uint_eq(f.pp_bytes, 8 * 128 * 256 * 2);
  ck_assert_uint_eq(f.dp_bytes, 2 * ar_bytes[0] + 2 * ar_bytes[1]); /* ring of 2: 2 S each */
  /* durations: a layer's forward is 24 s h^2 (1 + s / 6h); the last stage adds the
   * logits 2 s h V; backward is twice the forward; the busiest rank is on the last
   * stage: m forwards and m backwards of its layer and the head */
  double layer = gpt_layer_flops((double)h, (double)sq), head = 2.0 * sq * h * V;
  double rate = 10e12 * 0.5;
  job_run(&j, &f, 1, m * 3 * (layer + head) / rate * 1e12,
          8 * 128 * 256 * 2 + 2 * ar_bytes[0] + 2 * ar_bytes[1]);
  check_duration(&j, "i0/s0/r0/F0", layer, rate);
  check_duration(&j, "i0/s0/r1/B1", 2 * layer, rate);
  check_duration(&j, "i0/s1/r2/F1", layer + head, rate);
  check_duration(&j, "i0/s1/r3/B0", 2 * (layer + head), rate);
  job_close(&j);
}
END_TEST

START_TEST(test_1f1b_order)
{
  /* PP 4, 6 micro-batches, DP 1: stage p runs min(3 - p, 6) warm-up forwards, then
   * F/B pairs, then the remaining backwards, as a chain of dependencies */
  WhPresetSpec s;
  small_gpt(&s, 4);
  s.pp = 4;
  s.dp = 1;
  s.micro_batches = 6;
  WhPresetFacts f;
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wh_preset_facts(&s, &f, &err), "%s", err ? err->message : "");
  Job j;
  job_open(&j, 2, 2, 4);
  job_build(&j, &s);
  check_counts(&j, &f, 1, 4 * 2 * 6, 2 * 6 * 3, 0, 0);
  static const char *order[4] = {
      "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5", "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5",
      "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5", "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5"};
  for (uint32_t p = 0; p < 4; p++) {
    fprintf(stderr, "stage %u: %s\n", p, order[p]);
    g_auto(GStrv) steps = g_strsplit(order[p], " ", -1);
    for (int k = 1; steps[k]; k++) {
      g_autofree char *a = g_strdup_printf("i0/s%u/r%u/%s", p, p, steps[k]),
                      *b = g_strdup_printf("i0/s%u/r%u/%s", p, p, steps[k - 1]);
      DEP(&j, a, b);
    }
  }
  DEP(&j, "i0/s2/r2/F3", "i0/pp/F3/r1>r2");
  DEP(&j, "i0/s2/r2/B1", "i0/pp/B1/r3>r2");
  /* the last stage (one layer and the head) is the busiest: 6 x 3 x its forward;
   * 2 m (P - 1) sends of s h 2 bytes, no all-reduce (DP 1) */
  job_run(&j, &f, 1, 6 * 3 * (gpt_layer_flops(256, 128) + 2.0 * 128 * 256 * 1000) / 5e12 * 1e12,
          2 * 6 * 3 * (128 * 256 * 2));
  job_close(&j);
}
END_TEST

START_TEST(test_buckets_iterations)
{
  WhPresetSpec s;
  small_gpt(&s, 4);
  s.buckets = 2;
  s.iterations = 2;
  WhPresetFacts f;
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wh_preset_facts(&s, &f, &err), "%s", err ? err->message : "");
  Job j;
  job_open(&j, 2, 2, 4);
  job_build(&j, &s);
  /* the last backward of each rank is B = 2 parts: n 2m + n (B - 1) computes; P T B ARs */
  uint32_t n = 4, m = 2, B = 2;
  check_counts(&j, &f, 2, n * 2 * m + n * (B - 1), 2 * m * 2, 2 * B, 0);
  /* bucket j waits for part j of both ranks' last backward; parts are chained */
  DEP(&j, "i0/s0/r0/B1/part0", "i0/s0/r0/B0");
  DEP(&j, "i0/s0/r0/B1/part1", "i0/s0/r0/B1/part0");
  DEP(&j, "i0/dp/s0/tp0/b0", "i0/s0/r0/B1/part0");
  DEP(&j, "i0/dp/s0/tp0/b0", "i0/s0/r1/B1/part0");
  DEP(&j, "i0/dp/s0/tp0/b1", "i0/s0/r1/B1/part1");
  DEP(&j, "i0/dp/s1/tp0/b0", "i0/s1/r2/B1/part0");
  ck_assert(!has_dep(&j, op(&j, "i0/s0/r0/B1/part1"), op(&j, "i0/dp/s0/tp0/b0")));
  /* stage 0: bucket 0 = layer 1; bucket 1 = layer 0 + embedding + positions */
  uint64_t h = 256;
  ck_assert_uint_eq(op_bytes(&j, op(&j, "i0/dp/s0/tp0/b0")), gpt_layer_params(h) * 2);
  ck_assert_uint_eq(op_bytes(&j, op(&j, "i0/dp/s0/tp0/b1")),
                    (gpt_layer_params(h) + 1000 * h + 128 * h) * 2);
  ck_assert_uint_eq(op_bytes(&j, op(&j, "i0/dp/s1/tp0/b0")), (gpt_layer_params(h) + 1000 * h) * 2);
  /* the next iteration waits for the rank's last op and its all-reduces */
  DEP(&j, "i1/s0/r0/F0", "i0/s0/r0/B1/part1");
  DEP(&j, "i1/s0/r0/F0", "i0/dp/s0/tp0/b0");
  DEP(&j, "i1/s0/r0/F0", "i0/dp/s0/tp0/b1");
  DEP(&j, "i1/s1/r3/F0", "i0/dp/s1/tp0/b1");
  ck_assert_uint_eq(op(&j, "i1/s0/r0/F0"), f.ops); /* iterations are contiguous */
  /* per iteration: the last stage (two layers and the head) computes m x 3 x its
   * forward (the parts of the last backward add up to one); 2 m (P - 1) D sends of
   * s h 2 bytes; each bucket's ring of 2 moves 2 x its bytes */
  uint64_t L = gpt_layer_params(h), Vh = 1000 * h, sh = 128 * h;
  double fwd = 2 * gpt_layer_flops(h, 128) + 2.0 * 128 * h * 1000;
  uint64_t pp = 2 * 2 * 1 * 2 * (128 * h * 2), dp = 2 * ((2 * L + Vh + sh) * 2 + (2 * L + Vh) * 2);
  job_run(&j, &f, 2, 2 * m * 3 * fwd / 5e12 * 1e12, 2 * (pp + dp));
  job_close(&j);
}
END_TEST

START_TEST(test_small_moe)
{
  WhPresetSpec s;
  g_autoptr(GError) err = NULL;
  ck_assert(wh_preset_spec_init(&s, "moe-8x7b", &err));
  s.model = "tiny-moe";
  s.shape = (WhModelShape){WH_FAMILY_MIXTRAL, 4, 256, 512, 4, 2, 128, 1000, 4, 2};
  s.tp = 2;
  s.pp = 2;
  s.dp = 4;
  s.ep = 2;
  s.peak_flops = 10e12;
  WhPresetFacts f;
  ck_assert_msg(wh_preset_facts(&s, &f, &err), "%s", err ? err->message : "");
  g_autofree char *text = wh_preset_facts_text(&s, &f);
  fprintf(stderr, "%s\n", text);
  Job j;
  job_open(&j, 8, 2, 16); /* GPU index = tp: every DP/EP/PP group on one rail */
  job_build(&j, &s);
  /* D T (4 m L + 2 m) computes (attn + expert per layer and pass, head on the last
   * stage), 4 m L T (D / EP) all-to-alls, 2 m (P - 1) D T sends, P T B dense and
   * P T EP B expert all-reduces */
  uint32_t D = 4, T = 2, m = 2, L = 4, P = 2, EP = 2;
  check_counts(&j, &f, 1, D * T * (4 * m * L + 2 * m), 2 * m * (P - 1) * D * T, P * T + P * T * EP,
               4 * m * L * T * (D / EP));
  /* rank (pp 0, dp 1, tp 1) = 3; its EP group (dp 0, 1) at tp 1: ranks 1 and 3 */
  ck_assert_uint_eq(wh_preset_rank(&s, 0, 1, 1), 3);
  const char *disp = "i0/ep/s0/tp1/g0/F0/L0/dispatch";
  ck_assert_uint_eq(n_deps(&j, op(&j, disp)), 2);
  DEP(&j, disp, "i0/s0/r1/F0/L0/attn");
  DEP(&j, disp, "i0/s0/r3/F0/L0/attn");
  DEP(&j, "i0/s0/r3/F0/L0/expert", disp);
  DEP(&j, "i0/ep/s0/tp1/g0/F0/L0/combine", "i0/s0/r1/F0/L0/expert");
  DEP(&j, "i0/s0/r1/F0/L1/attn", "i0/ep/s0/tp1/g0/F0/L0/combine");
  DEP(&j, "i0/s0/r1/F1/L0/attn", "i0/ep/s0/tp1/g0/F0/L1/combine");
  DEP(&j, "i0/s1/r9/F0/L2/attn", "i0/pp/F0/r1>r9");
  DEP(&j, "i0/s1/r9/F0/head", "i0/ep/s1/tp1/g0/F0/L3/combine");
  DEP(&j, "i0/s1/r9/B0/head", "i0/s1/r9/F0/head");
  DEP(&j, "i0/ep/s1/tp1/g0/B0/L3/combine-grad", "i0/s1/r9/B0/head");
  DEP(&j, "i0/s1/r9/B0/L3/expert", "i0/ep/s1/tp1/g0/B0/L3/combine-grad");
  DEP(&j, "i0/ep/s1/tp1/g0/B0/L3/dispatch-grad", "i0/s1/r9/B0/L3/expert");
  DEP(&j, "i0/s1/r9/B0/L3/attn", "i0/ep/s1/tp1/g0/B0/L3/dispatch-grad");
  DEP(&j, "i0/ep/s1/tp1/g0/B0/L2/combine-grad", "i0/s1/r9/B0/L3/attn");
  /* stage 0 backward starts with the gradient from stage 1 */
  DEP(&j, "i0/ep/s0/tp1/g0/B0/L1/combine-grad", "i0/pp/B0/r9>r1");
  /* sizes: all-to-all buffer n/TP tokens x k x h x 2; PP send n h 2 / TP */
  uint64_t a2a = 128 / 2 * 2 * 256 * 2;
  ck_assert_uint_eq(op_bytes(&j, op(&j, disp)), a2a);
  ck_assert_uint_eq(f.a2a_bytes, a2a);
  ck_assert_uint_eq(op_bytes(&j, op(&j, "i0/pp/F1/r3>r11")), 128 * 256 * 2 / 2);
  /* expert all-reduce: dp mod EP groups {0, 2}, {1, 3}; 2 layers x E/EP experts x 3hf
   * / TP, bf16 */
  const char *edp = "i0/edp/s0/tp1/e1/b0";
  ck_assert_uint_eq(op_bytes(&j, op(&j, edp)), 2ull * (4 / 2) * 3 * 256 * 512 / 2 * 2);
  DEP(&j, edp, "i0/s0/r3/B1/L0/attn");
  DEP(&j, edp, "i0/s0/r7/B1/L0/attn");
  ck_assert_uint_eq(n_deps(&j, op(&j, edp)), 2);
  uint64_t ep_bytes = 4 * m * L * T * (D / EP) * EP * (EP - 1) * (a2a / EP);
  ck_assert_uint_eq(f.ep_bytes, ep_bytes);
  /* attention + router: 2 n h (2h + 2 kv) + 4 s^2 h + 2 n h E; experts 6 n h f k;
   * both / TP */
  double n = 128, h = 256, kv = 128, rate = 10e12 * 0.5;
  double attn = 2 * n * h * (2 * h + 2 * kv) + 4 * n * n * h + 2 * n * h * 4;
  double expert = 6 * n * h * 512 * 2;
  /* the busiest rank is on the last stage: m x 3 x (L / P layers and the head) / TP;
   * bytes: 2 m (P - 1) D T sends of n h 2 / TP; a dense ring of D per stage and TP
   * rank (2 (D - 1) x S: 2 (h^2 + h kv) + h E + 2h per layer, + V h embedding or
   * head, / TP, bf16) and an expert ring of D / EP = 2 per stage, TP rank and EP
   * group (2 x S); and the all-to-alls */
  double busiest = m * 3 * ((L / P) * (attn + expert) + 2 * n * h * 1000) / T / rate * 1e12;
  uint64_t hh = 256,
           dense = (2 * (2 * hh * hh + 2 * hh * 128 + hh * 4 + 2 * hh) + 1000 * hh) / T * 2;
  uint64_t sends = 2 * m * (P - 1) * D * T * (128 * 256 * 2 / T);
  uint64_t dp =
      P * T * 2 * (D - 1) * dense + P * T * EP * 2 * (2ull * (4 / 2) * 3 * 256 * 512 / 2 * 2);
  job_run(&j, &f, 1, busiest, sends + dp + ep_bytes);
  check_duration(&j, "i0/s0/r5/F1/L0/attn", attn / 2, rate);
  check_duration(&j, "i0/s0/r5/F1/L0/expert", expert / 2, rate);
  check_duration(&j, "i0/s1/r12/B1/L3/expert", 2 * expert / 2, rate);
  check_duration(&j, "i0/s1/r12/F0/head", 2 * n * h * 1000 / 2, rate);
  job_close(&j);
}
END_TEST

/* Every dependency of `id` is an op of a rank with the same GPU index (rail). */
static void check_rail(Job *j, uint32_t id, uint32_t tp, uint32_t gpus, uint32_t n)
{
  WhOpInfo info;
  wh_workload_op_info(j->w, id, &info);
  ck_assert_uint_eq(info.n_deps, n);
  for (uint32_t i = 0; i < info.n_deps; i++) {
    WhOpInfo dep;
    wh_workload_op_info(j->w, info.deps[i], &dep);
    ck_assert_uint_eq(dep.rank % gpus, tp);
  }
}

START_TEST(test_gpt13b_build)
{
  WhPresetSpec s;
  g_autoptr(GError) err = NULL;
  ck_assert(wh_preset_spec_init(&s, "gpt-13b", &err));
  WhPresetFacts f;
  ck_assert(wh_preset_facts(&s, &f, &err));
  g_autofree char *text = wh_preset_facts_text(&s, &f);
  fprintf(stderr, "%s\n", text);
  ck_assert_uint_eq(wh_preset_ranks(&s), 128);
  ck_assert_uint_eq(f.ranks, 128);
  ck_assert(fabs((double)f.params - 12.85e9) < 0.01e9);
  Job j;
  job_open(&j, 16, 8, 128);
  job_build(&j, &s);
  /* TP8 PP2 DP8, m = 2: 128 x 4 computes, 2 x 2 x 1 x 8 x 8 sends, 2 x 8 ARs */
  check_counts(&j, &f, 1, 128 * 4, 2 * 2 * 8 * 8, 2 * 8, 0);
  uint64_t h = 5120;
  ck_assert_uint_eq(op_bytes(&j, op(&j, "i0/pp/F1/r13>r77")), 2048 * h * 2 / 8);
  uint64_t stage0 = (20 * gpt_layer_params(h) + 50257 * h + 2048 * h + 7) / 8 * 2;
  uint64_t stage1 = (20 * gpt_layer_params(h) + 50257 * h + 7) / 8 * 2;
  ck_assert_uint_eq(op_bytes(&j, op(&j, "i0/dp/s0/tp3/b0")), stage0);
  ck_assert_uint_eq(op_bytes(&j, op(&j, "i0/dp/s1/tp5/b0")), stage1);
  check_rail(&j, op(&j, "i0/dp/s1/tp5/b0"), 5, 8, 8);
  ck_assert_uint_eq(f.dp_rank_bytes, MAX(stage0, stage1));
  /* byte totals: a ring of D = 8 per stage and TP rank moves 2 (D - 1) x S (each of D
   * ranks sends 2 (D - 1) chunks of S / D, rounded up); 2 m (P - 1) D T sends of
   * s h 2 / TP */
  ck_assert_uint_eq(f.dp_bytes, 8 * 8 * 2 * 7 * ((stage0 + 7) / 8 + (stage1 + 7) / 8));
  ck_assert_uint_eq(f.pp_bytes, 2 * 2 * 1 * 8 * 8 * (2048 * h * 2 / 8));
  ck_assert_uint_eq(f.ep_bytes, 0);
  ck_assert_uint_eq(f.tp_bytes, 8ull * 2 * 40 * 7 * 4 * (2048 * h * 2) * 2);
  job_close(&j);
}
END_TEST

START_TEST(test_moe8x7b_build)
{
  WhPresetSpec s;
  g_autoptr(GError) err = NULL;
  ck_assert(wh_preset_spec_init(&s, "moe-8x7b", &err));
  WhPresetFacts f;
  ck_assert(wh_preset_facts(&s, &f, &err));
  g_autofree char *text = wh_preset_facts_text(&s, &f);
  fprintf(stderr, "%s\n", text);
  ck_assert_uint_eq(f.ranks, 128);
  ck_assert(fabs((double)f.params - 46.70e9) < 0.01e9);
  Job j;
  job_open(&j, 16, 8, 128);
  job_build(&j, &s);
  /* D T (4 m L + 2 m) computes, 2 m (P - 1) D T sends, 4 m L T (D / EP) all-to-alls,
   * P T dense all-reduces (EP = DP: no expert all-reduce) */
  uint32_t D = 8, T = 8, m = 2, L = 32;
  check_counts(&j, &f, 1, D * T * (4 * m * L + 2 * m), 2 * m * D * T, 2 * T, 4 * m * L * T);
  ck_assert_uint_eq(f.ops, 16640 + 256 + 2048 + 16);
  /* a2a: 4096 / 8 tokens x top-2 x 4096 x 2 bytes = 8 MiB; PP send 4096 x 4096 x 2 / 8 */
  const char *a2a = "i0/ep/s1/tp6/g0/B1/L20/dispatch-grad";
  ck_assert_uint_eq(op_bytes(&j, op(&j, a2a)), 8u << 20);
  ck_assert_uint_eq(op_bytes(&j, op(&j, "i0/pp/B0/r70>r6")), 4u << 20);
  check_rail(&j, op(&j, a2a), 6, 8, 8);
  /* stage 0: 16 layers x (2h^2 + 2h kv + h E + 2h) + embedding V h, / TP, bf16 */
  uint64_t h = 4096, kv = 1024;
  uint64_t dense0 = (16 * (2 * h * h + 2 * h * kv + h * 8 + 2 * h) + 32000 * h) / 8 * 2;
  ck_assert_uint_eq(op_bytes(&j, op(&j, "i0/dp/s0/tp2/b0")), dense0);
  check_rail(&j, op(&j, "i0/dp/s0/tp2/b0"), 2, 8, 8);
  job_close(&j);
}
END_TEST

START_TEST(test_all_presets_facts)
{
  /* published sizes: GPT-3 6.7B, 13B, 175B; Mixtral 8x7B 46.7B; 32x22B assumed */
  const double params[] = {6.7e9, 12.9e9, 175e9, 46.7e9, 546e9};
  const char *const *names = wh_preset_model_names();
  for (int i = 0; names[i]; i++) {
    WhPresetSpec s;
    WhPresetFacts f;
    g_autoptr(GError) err = NULL;
    ck_assert(wh_preset_spec_init(&s, names[i], &err));
    ck_assert_msg(wh_preset_facts(&s, &f, &err), "%s", err ? err->message : "");
    g_autofree char *text = wh_preset_facts_text(&s, &f);
    fprintf(stderr, "%s\n\n", text);
    ck_assert_msg(fabs((double)f.params - params[i]) / params[i] < 0.01, "%s: %.4g params",
                  names[i], (double)f.params);
    ck_assert(strstr(text, "TP traffic not modelled: ") != NULL);
    ck_assert_uint_eq(f.global_batch, s.dp * s.pp);
    ck_assert(f.tp_bytes > 0 && f.dp_bytes > 0 && f.pp_bytes > 0);
    ck_assert((f.ep_bytes > 0) == (s.ep > 1));
  }
}
END_TEST

/* `*err` is set, in `domain` with `code`, and its message contains `text`; clears it. */
static void expect_error(GError **err, GQuark domain, int code, const char *text)
{
  ck_assert_msg(*err != NULL, "no error set (expected \"%s\")", text);
  fprintf(stderr, "error: %s\n", (*err)->message);
  ck_assert_msg(g_error_matches(*err, domain, code), "error %s:%d, expected %s:%d",
                g_quark_to_string((*err)->domain), (*err)->code, g_quark_to_string(domain), code);
  ck_assert_msg(strstr((*err)->message, text) != NULL, "error \"%s\" does not say \"%s\"",
                (*err)->message, text);
  g_clear_error(err);
}

/* wh::ModelPreset::FfnMatrices: 2-matrix experts on the Mixtral 8x7B preset remove
 * L E h f parameters. */
START_TEST(test_preset_ffn_matrices)
{
  WhPresetSpec s;
  g_autoptr(GError) err = NULL;
  ck_assert(wh_preset_spec_init(&s, "moe-8x7b", &err));
  WhPresetFacts f3, f2;
  ck_assert(wh_preset_facts(&s, &f3, &err));
  s.shape.ffn_mats = 2;
  ck_assert(wh_preset_facts(&s, &f2, &err));
  ck_assert_uint_eq(f3.params - f2.params, 32ull * 8 * 4096 * 14336);
  ck_assert(f2.model_flops < f3.model_flops);
  s.shape.ffn_mats = 4;
  ck_assert(!wh_preset_facts(&s, &f2, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "FfnMatrices"));
}
END_TEST

/* FixedTimes: the busiest stage (the last, with the head) of moe-8x7b, PP 2: m x (16
 * layers x (F + 2F) + head x 3), 4x with recomputation; dense models refuse it. */
START_TEST(test_preset_fixed_times)
{
  WhPresetSpec s;
  g_autoptr(GError) err = NULL;
  ck_assert(wh_preset_spec_init(&s, "moe-8x7b", &err));
  s.fixed_times = TRUE;
  s.attn_time = 1000;
  s.expert_time = 2000;
  s.head_time = 500;
  WhPresetFacts f;
  ck_assert(wh_preset_facts(&s, &f, &err));
  ck_assert_uint_eq(f.compute_time, 2 * (16 * 3 * 3000 + 3 * 500));
  s.recompute = TRUE;
  ck_assert(wh_preset_facts(&s, &f, &err));
  ck_assert_uint_eq(f.compute_time, 2 * (16 * 4 * 3000 + 4 * 500));
  g_autofree char *text = wh_preset_facts_text(&s, &f);
  ck_assert_ptr_nonnull(strstr(text, "fixed forward times per layer 0.001 us attention"));
  ck_assert(wh_preset_spec_init(&s, "gpt-7b", &err));
  s.fixed_times = TRUE;
  ck_assert(!wh_preset_facts(&s, &f, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "FixedTimes applies to MoE models only"));
}
END_TEST

START_TEST(test_config_and_errors)
{
  if (wh_registry_lookup(wh_model_preset_type.name) == NULL)
    ck_assert(wh_registry_register(&wh_model_preset_type, NULL));
  g_autoptr(WhConfig) cfg = wh_config_new();
  g_autoptr(GError) err = NULL;
  WhPresetSpec s;
  ck_assert(wh_preset_spec_from_config(&s, cfg, &err)); /* defaults: gpt-13b */
  ck_assert_str_eq(s.model, "gpt-13b");
  ck_assert_uint_eq(wh_preset_ranks(&s), 128);
  const char *sets[] = {"wh::ModelPreset::Model=moe-8x7b", "wh::ModelPreset::EP=4",
                        "wh::ModelPreset::Buckets=4",      "wh::ModelPreset::SeqLength=2048",
                        "wh::ModelPreset::Efficiency=0.4", "wh::ModelPreset::AllToAll=pairwise"};
  for (size_t i = 0; i < G_N_ELEMENTS(sets); i++)
    ck_assert_msg(wh_config_set_assignment(cfg, sets[i], "test", &err), "%s", err->message);
  ck_assert(wh_preset_spec_from_config(&s, cfg, &err));
  ck_assert_str_eq(s.model, "moe-8x7b");
  ck_assert_uint_eq(s.ep, 4);
  ck_assert_uint_eq(s.dp, 8);
  ck_assert_uint_eq(s.buckets, 4);
  ck_assert_uint_eq(s.shape.seq, 2048);
  ck_assert_uint_eq(s.shape.hidden, 4096);
  ck_assert(s.efficiency == 0.4);
  ck_assert_int_eq(s.all_to_all, WH_ALGO_PAIRWISE);
  ck_assert(wh_config_set_assignment(cfg, "wh::ModelPreset::EP=3", "test", &err));
  ck_assert(!wh_preset_spec_from_config(&s, cfg, &err));
  expect_error(&err, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
               "wh::ModelPreset: moe-8x7b: EP 3 must divide DP 8 and the 8 experts");
  ck_assert(!wh_config_set_assignment(cfg, "wh::ModelPreset::Model=gpt-3", "test", &err));
  expect_error(&err, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
               "wh::ModelPreset::Model = \"gpt-3\": not one of gpt-7b");
  ck_assert(!wh_preset_spec_init(&s, "gpt-3", &err));
  expect_error(&err, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
               "unknown model preset \"gpt-3\" (one of gpt-7b");
  /* a dense model with EP > 1; a workload of the wrong size; too few hosts */
  ck_assert(wh_preset_spec_init(&s, "gpt-13b", NULL));
  s.ep = 2;
  ck_assert(!wh_preset_spec_check(&s, &err));
  expect_error(&err, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
               "gpt-13b: EP 2 on a dense model (EP must be 1)");
  small_gpt(&s, 2);
  Job j;
  job_open(&j, 1, 2, 3);
  ck_assert(!wh_preset_build(j.w, &s, &err));
  expect_error(&err, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
               "tiny-gpt: TP 1 x PP 2 x DP 2 needs 4 ranks but the workload has 3");
  ck_assert_uint_eq(wh_workload_n_ops(j.w), 0);
  job_close(&j);
  job_open(&j, 1, 2, 4);
  ck_assert(!wh_preset_build(j.w, &s, &err));
  expect_error(&err, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
               "tiny-gpt needs 4 hosts: rank 2 -> host 2: no such rank or host");
  job_close(&j);
}
END_TEST

/* ---- routing skew and migration ---- */

/* A tiny MoE on 8 servers x 2 GPUs: 4 layers, hidden 256, TP 2 PP 2 DP 4 EP 4, fixed
 * forward times (attention 2 us, experts 1 us, head 3 us). */
static void skew_moe(WhPresetSpec *s, uint32_t experts)
{
  g_autoptr(GError) err = NULL;
  ck_assert(wh_preset_spec_init(s, "moe-8x7b", &err));
  s->model = "tiny-moe";
  s->shape = (WhModelShape){WH_FAMILY_MIXTRAL, 4, 256, 512, 4, 2, 128, 1000, experts, 2};
  s->tp = 2;
  s->pp = 2;
  s->dp = 4;
  s->ep = 4;
  s->fixed_times = TRUE;
  s->attn_time = 2000000;
  s->expert_time = 1000000;
  s->head_time = 3000000;
}

/* The EP member of rank r (its dp index mod EP) and its EP group key (stage, tp, dp /
 * EP). */
static uint32_t member_of(const WhPresetSpec *s, uint32_t r)
{
  return (r / s->tp) % s->dp % s->ep;
}

static uint32_t group_key(const WhPresetSpec *s, uint32_t r)
{
  return (r / (s->tp * s->dp)) * 1000 + (r % s->tp) * 100 + (r / s->tp) % s->dp / s->ep;
}

/* Routing from a file of expert counts summing to the group's tokens x top-k (64
 * tokens on each of 4 GPUs, top-2: 512), one expert per GPU: every all-to-allv flow
 * carries its pair's tokens x hidden x 2 bytes (dispatch and combine-grad from each
 * GPU to the experts, combine and dispatch-grad back), no flow for an empty pair, and
 * each expert op lasts 1 us (2 us backward) x its GPU's token share x EP. */
START_TEST(test_skew_file_conservation)
{
  WhPresetSpec s;
  skew_moe(&s, 4);
  static const uint64_t rows[] = {200, 100, 112, 100, 20, 40, 52, 400};
  s.routing = WH_ROUTING_FILE;
  s.routing_counts = rows;
  s.routing_rows = 2;
  s.iterations = 2;
  Job j;
  job_run_skewed(&j, &s);
  const uint64_t tb = 256 * 2, EP = 4;
  WhTransport *tp = j.run->tp;
  uint64_t a2a_bytes = 0, expected_total = 0;
  for (uint32_t f = 0; f < tp->n_flows; f++) {
    WhOpInfo info;
    const WhFlow *fl = job_flow(&j, f, &info);
    if (info.kind != WH_OP_COLLECTIVE || info.coll != WH_COLL_ALL_TO_ALLV)
      continue;
    uint32_t it = info.name[1] - '0';
    const uint64_t *c = rows + it * 4;
    gboolean to_experts = strstr(info.name, "/dispatch/") || strstr(info.name, "/combine-grad/");
    uint32_t i = member_of(&s, fl->src), k = member_of(&s, fl->dst);
    ck_assert_uint_eq(group_key(&s, fl->src), group_key(&s, fl->dst));
    /* expert e sits on member e; a GPU sends expert e c_e / EP tokens (+1 for the first
     * c_e mod EP members) */
    uint32_t sender = to_experts ? i : k, expert = to_experts ? k : i;
    uint64_t want = tb * (c[expert] / EP + (sender < c[expert] % EP));
    ck_assert_msg(fl->size == want, "%s: flow %u>%u %lu bytes, counts give %lu", info.name, fl->src,
                  fl->dst, (unsigned long)fl->size, (unsigned long)want);
    a2a_bytes += fl->size;
  }
  /* every pair off the diagonal is a flow: 16 all-to-allvs a micro-batch per stage and
   * TP rank, each moving tb x (tokens - the diagonal) */
  for (uint32_t it = 0; it < 2; it++) {
    uint64_t off = 0;
    for (uint32_t e = 0; e < 4; e++)
      off += rows[it * 4 + e] - (rows[it * 4 + e] / EP + (e < rows[it * 4 + e] % EP));
    expected_total +=
        off * tb * 4 /* kinds */ * 2 /* layers */ * 2 /* mb */ * 2 /* stages */ * 2 /* tp */;
  }
  fprintf(stderr, "skew file: all-to-allv flows carry %lu bytes, the counts give %lu\n",
          (unsigned long)a2a_bytes, (unsigned long)expected_total);
  ck_assert_uint_eq(a2a_bytes, expected_total);
  for (uint32_t it = 0; it < 2; it++) {
    for (uint32_t r = 0; r < 8; r++) { /* stage 0 */
      for (int fwd = 0; fwd < 2; fwd++) {
        g_autofree char *name = g_strdup_printf("i%u/s0/r%u/%c1/L1/expert", it, r, fwd ? 'F' : 'B');
        WhOpInfo info;
        wh_workload_op_info(j.w, op(&j, name), &info);
        double want = (fwd ? 1e6 : 2e6) * (double)rows[it * 4 + member_of(&s, r)] * 4 / 512;
        ck_assert_msg(info.end - info.start == (WhTime)llround(want), "%s: %lu ps, want %.0f", name,
                      (unsigned long)(info.end - info.start), want);
      }
    }
  }
  job_close(&j);
}
END_TEST

/* Zipf routing with migration at every iteration: the migration sends are flows
 * inside one EP group carrying exactly the moved experts' state (16 x 3 x h x f per
 * layer and expert, 2 layers a stage, over TP 2), two per swap (one each way) for
 * every stage, TP rank and EP group; max/mean never rises. */
START_TEST(test_skew_migration_flows)
{
  WhPresetSpec s;
  skew_moe(&s, 8);
  s.routing = WH_ROUTING_ZIPF;
  s.zipf_s = 0.8;
  s.migrate = TRUE;
  s.migrate_threshold = 1.0;
  s.iterations = 3;
  s.seed = 3;
  Job j;
  job_open(&j, 8, 2, 16);
  g_autoptr(GError) err = NULL;
  g_autoptr(GArray) checks = g_array_new(FALSE, FALSE, sizeof(WhMigrationCheck));
  ck_assert_msg(wh_preset_build_checks(j.w, &s, checks, &err), "%s", err ? err->message : "");
  wh_workload_start(j.w);
  wh_sim_run(j.run->sim);
  ck_assert(wh_workload_done(j.w));
  ck_assert_uint_eq(checks->len, 2); /* before iterations 1 and 2 */
  const uint64_t per_expert = 2ull * 16 * 3 * 256 * 512 / 2;
  uint64_t swaps = 0, check_bytes = 0;
  for (guint k = 0; k < checks->len; k++) {
    const WhMigrationCheck *c = &g_array_index(checks, WhMigrationCheck, k);
    fprintf(stderr, "migration before iteration %u: max/mean %.4f -> %.4f, %u swaps, %lu bytes\n",
            c->iteration, c->imbalance_before, c->imbalance_after, c->swaps,
            (unsigned long)c->bytes);
    ck_assert(c->imbalance_after <= c->imbalance_before);
    swaps += c->swaps;
    check_bytes += c->bytes;
    ck_assert_uint_eq(c->flows, c->swaps * 2 * 2 /* stages */ * 2 /* tp */);
  }
  ck_assert_uint_gt(swaps, 0);
  WhTransport *tp = j.run->tp;
  uint64_t moved = 0, n = 0;
  for (uint32_t f = 0; f < tp->n_flows; f++) {
    WhOpInfo info;
    const WhFlow *fl = job_flow(&j, f, &info);
    if (!strstr(info.name, "/migrate/"))
      continue;
    ck_assert_uint_eq(info.kind, WH_OP_SEND);
    ck_assert_uint_eq(fl->size, per_expert);
    ck_assert_uint_eq(group_key(&s, fl->src), group_key(&s, fl->dst));
    ck_assert_uint_ne(member_of(&s, fl->src), member_of(&s, fl->dst));
    moved += fl->size;
    n++;
  }
  ck_assert_uint_eq(n, swaps * 2 * 2 * 2);
  ck_assert_uint_eq(moved, swaps * 2 * 2 * 2 * per_expert);
  ck_assert_uint_eq(moved, check_bytes);
  job_close(&j);
}
END_TEST

/* The ops (names, times, dependencies) of a skewed run with migration as ops.csv. */
static char *skew_ops_csv(uint64_t seed)
{
  WhPresetSpec s;
  skew_moe(&s, 8);
  s.routing = WH_ROUTING_ZIPF;
  s.migrate = TRUE;
  s.migrate_threshold = 1.0;
  s.drift = 0.3;
  s.iterations = 3;
  s.seed = seed;
  Job j;
  job_run_skewed(&j, &s);
  char *csv = wh_workload_ops_csv(j.w);
  job_close(&j);
  return csv;
}

START_TEST(test_skew_deterministic)
{
  g_autofree char *a = skew_ops_csv(11), *b = skew_ops_csv(11), *c = skew_ops_csv(12);
  ck_assert_str_eq(a, b);
  ck_assert_str_ne(a, c); /* the seed sets the ranking and its drift */
}
END_TEST

Suite *wh_presets_suite(void)
{
  Suite *s = suite_create("presets");
  TCase *tc = tcase_create("presets");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_small_gpt);
  tcase_add_test(tc, test_1f1b_order);
  tcase_add_test(tc, test_buckets_iterations);
  tcase_add_test(tc, test_small_moe);
  tcase_add_test(tc, test_gpt13b_build);
  tcase_add_test(tc, test_moe8x7b_build);
  tcase_add_test(tc, test_all_presets_facts);
  tcase_add_test(tc, test_config_and_errors);
  tcase_add_test(tc, test_preset_ffn_matrices);
  tcase_add_test(tc, test_preset_fixed_times);
  suite_add_tcase(s, tc);
  tc = tcase_create("routing-skew");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_skew_file_conservation);
  tcase_add_test(tc, test_skew_migration_flows);
  tcase_add_test(tc, test_skew_deterministic);
  suite_add_tcase(s, tc);
  return s;
}
