/* SimAI import tests: the two hand-written examples in scenarios/workloads/ load; the
 * DAG of dp-allreduce-8gpu.txt matches, op by op, the table written out below; both
 * run to completion in the simulator (a star of 8 hosts; a rail-optimized fat tree of
 * 2 servers x 8 GPUs) with every op starting after its dependencies end and
 * non-blocking weight-grad comms overlapping the next compute; groups (TP, DP, EP,
 * DP_EP, pp > 1), iterations, MICRO, CRLF input and the import API are checked on
 * in-memory files; every file in tests/bad-inputs/simai/ fails with "FILE:LINE:" and
 * the expected field. The examples, for reference:
 *   dp-allreduce-8gpu.txt: DATA, 8 GPUs, 3 layers of a small CNN-like model: forward
 *     150/200/50 us, input and weight grads the same, weight grads all-reduced over
 *     all 8 GPUs (2, 8 and 16 MiB); fc_head has a 100 ns update delay.
 *   gpt-tp8-dp2-16gpu.txt: HYBRID_TRANSFORMER_FWD_IN_BCKWD, TP 8 x DP 2 (EP 2) on 16
 *     GPUs, a transformer slice with hidden 2048, sequence 2048, bf16: embedding (TP
 *     all-reduce of 8 MiB activations, DP all-reduce of 25 MiB embedding grads),
 *     attention (86 us per pass, TP all-reduces, 4 MiB DP grads), an MoE MLP (115 us,
 *     4 MiB EP all-to-alls; expert grads over DP_EP, a group of one here, so skipped),
 *     lm_head (358 us, TP all-gather / reduce-scatter); 100 ns update delays. */
#include <check.h>
#include <string.h>

#include "simai-import.h"
#include "test-util.h"

/* ---- helpers ---- */

static WhSimaiPlan *load_example(const char *file, uint32_t ranks, const WhSimaiOptions *opts)
{
  g_autofree char *rel = g_build_filename("scenarios", "workloads", file, NULL);
  g_autofree char *path = wh_test_source_path(rel);
  g_autoptr(GError) err = NULL;
  WhSimaiPlan *plan = wh_simai_plan_load(path, ranks, opts, &err);
  ck_assert_msg(plan != NULL, "%s: %s", file, err ? err->message : "?");
  return plan;
}

static WhSimaiPlan *parse_text(const char *text, uint32_t ranks, const WhSimaiOptions *opts)
{
  g_autoptr(GError) err = NULL;
  WhSimaiPlan *plan = wh_simai_plan_parse(text, strlen(text), "mem.txt", ranks, opts, &err);
  ck_assert_msg(plan != NULL, "%s", err ? err->message : "?");
  return plan;
}

static WhSimaiOp op_at(const WhSimaiPlan *plan, guint i)
{
  ck_assert_uint_lt(i, wh_simai_plan_n_ops(plan));
  WhSimaiOp o;
  wh_simai_plan_op(plan, i, &o);
  return o;
}

/* The index of the op named `name` (on `rank` for compute ops; any rank: UINT32_MAX). */
static guint find_op(const WhSimaiPlan *plan, const char *name, uint32_t rank)
{
  for (guint i = 0; i < wh_simai_plan_n_ops(plan); i++) {
    WhSimaiOp o = op_at(plan, i);
    if (strcmp(o.name, name) == 0 && (rank == UINT32_MAX || o.rank == rank))
      return i;
  }
  ck_abort_msg("no op %s on rank %u", name, rank);
  return 0;
}

static void check_group(WhSimaiOp o, const uint32_t *expect, uint32_t n)
{
  ck_assert_uint_eq(o.n_group, n);
  for (uint32_t i = 0; i < n; i++)
    ck_assert_msg(o.group[i] == expect[i], "%s: member %u is %u, expected %u", o.name, i,
                  o.group[i], expect[i]);
}

typedef struct {
  WhScenario *sc;
  WhRun *run;
  WhWorkload *w;
} Job;

static void job_open(Job *j, const char *topology, const char *const *sets, uint32_t ranks)
{
  j->sc = wh_scenario_new("simai", topology);
  for (const char *const *s = sets; *s; s += 2)
    wh_scenario_add_set(j->sc, s[0], s[1]);
  g_autoptr(GError) err = NULL;
  j->run = wh_run_new(j->sc, NULL, &err);
  ck_assert_msg(j->run != NULL, "%s", err ? err->message : "");
  j->w = wh_workload_new(j->run->tp, ranks);
}

/* Runs the plan to completion; checks every op ended, compute ops took exactly their
 * duration and no op started before one of its dependencies ended. */
static void job_run(Job *j, const WhSimaiPlan *plan)
{
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wh_simai_plan_apply(plan, j->w, &err), "%s", err ? err->message : "");
  ck_assert_uint_eq(wh_workload_n_ops(j->w), wh_simai_plan_n_ops(plan));
  wh_workload_start(j->w);
  wh_sim_run(j->run->sim);
  ck_assert(wh_workload_done(j->w));
  ck_assert_msg(wh_run_check(j->run, &err), "%s", err ? err->message : "");
  for (guint i = 0; i < wh_simai_plan_n_ops(plan); i++) {
    WhSimaiOp o = op_at(plan, i);
    WhOpInfo info;
    wh_workload_op_info(j->w, i, &info);
    ck_assert_uint_gt(info.end, 0);
    if (o.kind == WH_OP_COMPUTE)
      ck_assert_uint_eq(info.end - info.start, o.duration);
    for (uint32_t d = 0; d < info.n_deps; d++) {
      WhOpInfo dep;
      wh_workload_op_info(j->w, info.deps[d], &dep);
      ck_assert_msg(info.start >= dep.end, "op %u (%s) starts before dep %u ends", i, o.name,
                    info.deps[d]);
    }
  }
}

static WhOpInfo info_of(const Job *j, guint op)
{
  WhOpInfo info;
  wh_workload_op_info(j->w, op, &info);
  return info;
}

static void job_close(Job *j)
{
  wh_workload_free(j->w);
  wh_run_free(j->run);
  wh_scenario_free(j->sc);
}

/* ---- the DATA example, op by op ---- */

/* `count` consecutive ops from `first`: compute ops on ranks rank0, rank0 + 1, ...;
 * or one collective over ranks 0..7. Op k's dependencies: `n_deps` consecutive ids
 * from dep + k * dep_step (dep -1: none). */
typedef struct {
  uint32_t first, count;
  WhOpKind kind;
  const char *name;
  uint32_t rank0;
  uint64_t bytes;
  uint64_t ns;
  int32_t dep;
  uint32_t dep_step, n_deps;
} Family;

#define C WH_OP_COMPUTE
#define AR WH_OP_COLLECTIVE
static const Family data_dag[] = {
    /* forward: layer by layer, each rank's compute after its previous one */
    {0, 8, C, "L0.conv_block1.fwd", 0, 0, 150000, -1, 0, 0},
    {8, 8, C, "L1.conv_block2.fwd", 0, 0, 200000, 0, 1, 1},
    {16, 8, C, "L2.fc_head.fwd", 0, 0, 50000, 8, 1, 1},
    /* backward from the last layer: weight grad first (SimAI's DATA order) */
    {24, 8, C, "L2.fc_head.wg", 0, 0, 50000, 16, 1, 1},
    {32, 1, AR, "L2.fc_head.wg-comm.all0", 0, 16777216, 0, 24, 0, 8},
    {33, 8, C, "L2.fc_head.wg-update", 0, 0, 100, 32, 0, 1}, /* 100 ns after the comm */
    {41, 8, C, "L2.fc_head.ig", 0, 0, 50000, 24, 1, 1},      /* not after the comm */
    {49, 8, C, "L1.conv_block2.wg", 0, 0, 200000, 41, 1, 1},
    {57, 1, AR, "L1.conv_block2.wg-comm.all0", 0, 8388608, 0, 49, 0, 8},
    {58, 8, C, "L1.conv_block2.ig", 0, 0, 200000, 49, 1, 1},
    {66, 8, C, "L0.conv_block1.wg", 0, 0, 150000, 58, 1, 1}, /* layer 0: no input grad */
    {74, 1, AR, "L0.conv_block1.wg-comm.all0", 0, 2097152, 0, 66, 0, 8},
};
#undef C
#undef AR

START_TEST(test_data_example_dag)
{
  g_autoptr(WhSimaiPlan) plan = load_example("dp-allreduce-8gpu.txt", 8, NULL);
  const WhSimaiStats *st = &plan->stats;
  ck_assert_int_eq(st->policy, WH_SIMAI_POLICY_DATA);
  ck_assert_uint_eq(st->n_layers, 3);
  ck_assert_uint_eq(st->n_gpus, 8);
  ck_assert_uint_eq(st->dp, 8);
  ck_assert_uint_eq(st->ops_per_iteration, 75);
  ck_assert_uint_eq(st->n_compute, 72);
  ck_assert_uint_eq(st->n_update, 8);
  ck_assert_uint_eq(st->n_collectives, 3);
  ck_assert_uint_eq(st->dropped_tp + st->skipped_trivial + st->ignored_comms, 0);
  ck_assert_uint_eq(wh_simai_plan_n_ops(plan), 75);
  static const uint32_t all8[] = {0, 1, 2, 3, 4, 5, 6, 7};
  guint checked = 0;
  for (size_t f = 0; f < G_N_ELEMENTS(data_dag); f++) {
    const Family *e = &data_dag[f];
    for (uint32_t k = 0; k < e->count; k++) {
      WhSimaiOp o = op_at(plan, e->first + k);
      ck_assert_msg(checked == e->first + k, "table gap before op %u", e->first + k);
      checked++;
      ck_assert_str_eq(o.name, e->name);
      ck_assert_int_eq(o.kind, e->kind);
      if (e->kind == WH_OP_COMPUTE) {
        ck_assert_uint_eq(o.rank, e->rank0 + k);
        ck_assert_uint_eq(o.duration, e->ns * WH_NS);
      } else {
        ck_assert_int_eq(o.coll, WH_COLL_ALL_REDUCE);
        ck_assert_int_eq(o.algo, WH_ALGO_RING);
        ck_assert_int_eq(o.group_kind, WH_SIMAI_GROUP_ALL);
        check_group(o, all8, 8);
        ck_assert_uint_eq(o.bytes, e->bytes);
      }
      uint32_t n_deps = e->dep < 0 ? 0 : e->n_deps;
      ck_assert_msg(o.n_deps == n_deps, "op %u (%s): %u deps, expected %u", e->first + k, o.name,
                    o.n_deps, n_deps);
      for (uint32_t d = 0; d < n_deps; d++)
        ck_assert_uint_eq(o.deps[d], (uint32_t)e->dep + k * e->dep_step + d);
    }
  }
  ck_assert_uint_eq(checked, wh_simai_plan_n_ops(plan));
}
END_TEST

START_TEST(test_data_example_runs)
{
  g_autoptr(WhSimaiPlan) plan = load_example("dp-allreduce-8gpu.txt", 8, NULL);
  static const char *const sets[] = {"wh::Star::Hosts", "8", NULL};
  Job j;
  job_open(&j, "wh::Star", sets, 8);
  job_run(&j, plan);
  /* the weight-grad all-reduce of fc_head (op 32) starts when the last rank's weight
   * grad ends and overlaps the input-grad computes (41..48), which start at once */
  WhTime wg_end = 0;
  for (guint r = 0; r < 8; r++)
    wg_end = MAX(wg_end, info_of(&j, 24 + r).end);
  WhOpInfo ar = info_of(&j, 32);
  ck_assert_uint_eq(ar.start, wg_end);
  for (guint r = 0; r < 8; r++) {
    WhOpInfo ig = info_of(&j, 41 + r);
    ck_assert_uint_eq(ig.start, info_of(&j, 24 + r).end);
    ck_assert_uint_lt(ig.start, ar.end);
    ck_assert_uint_eq(info_of(&j, 33 + r).start, ar.end); /* the update follows the comm */
  }
  /* one rank's compute chain: 150 + 200 + 50 forward, 50 + 50 + 200 + 200 + 150 back */
  ck_assert_uint_eq(info_of(&j, 66).end, 1050 * WH_US);
  ck_assert_uint_gt(info_of(&j, 74).end, info_of(&j, 66).end);
  job_close(&j);
}
END_TEST

/* ---- the hybrid example ---- */

START_TEST(test_hybrid_example)
{
  WhSimaiStats stats;
  WhSimaiOptions opts = {.stats = &stats};
  g_autoptr(WhSimaiPlan) plan = load_example("gpt-tp8-dp2-16gpu.txt", 16, &opts);
  ck_assert_int_eq(stats.policy, WH_SIMAI_POLICY_HYBRID_TRANSFORMER_FWD_IN_BCKWD);
  ck_assert_uint_eq(stats.n_gpus, 16);
  ck_assert_uint_eq(stats.tp, 8);
  ck_assert_uint_eq(stats.dp, 2);
  ck_assert_uint_eq(stats.ep, 2);
  /* 4 layers x 3 phases x 16 computes; EP all-to-alls (fwd, ig) and DP all-reduces
   * (embedding, attention) over 8 groups each, every one followed by 2 updates */
  ck_assert_uint_eq(stats.n_compute, 192 + 64);
  ck_assert_uint_eq(stats.n_update, 64);
  ck_assert_uint_eq(stats.n_collectives, 32);
  ck_assert_uint_eq(stats.ops_per_iteration, 288);
  /* TP comms dropped, 2 groups each: embedding, attention and lm_head forward,
   * attention input grad and lm_head reduce-scatter */
  ck_assert_uint_eq(stats.dropped_tp, 10);
  ck_assert_uint_eq(stats.dropped_tp_bytes, 10 * (uint64_t)8388608);
  ck_assert_uint_eq(stats.skipped_trivial, 16); /* DP_EP groups of one rank */
  ck_assert_uint_eq(stats.ignored_comms, 0);
  ck_assert_uint_eq(memcmp(&stats, &plan->stats, sizeof stats), 0);

  /* DP groups have stride TP: {k, k + 8} */
  for (uint32_t k = 0; k < 8; k++) {
    g_autofree char *name = g_strdup_printf("L1.attention_layer.wg-comm.dp%u", k);
    WhSimaiOp o = op_at(plan, find_op(plan, name, UINT32_MAX));
    uint32_t g[] = {k, k + 8};
    check_group(o, g, 2);
    ck_assert_int_eq(o.coll, WH_COLL_ALL_REDUCE);
    ck_assert_uint_eq(o.bytes, 4194304);
    g_free(name);
    name = g_strdup_printf("L2.mlp_moelayer.fwd-comm.ep%u", k);
    o = op_at(plan, find_op(plan, name, UINT32_MAX));
    check_group(o, g, 2);
    ck_assert_int_eq(o.coll, WH_COLL_ALL_TO_ALL);
    ck_assert_int_eq(o.algo, WH_ALGO_PAIRWISE);
  }
  /* a dropped TP comm leaves the stream on the compute: L1 fwd after L0 fwd */
  guint f0 = find_op(plan, "L0.embedding_layer.fwd", 3);
  guint f1 = find_op(plan, "L1.attention_layer.fwd", 3);
  ck_assert_uint_eq(op_at(plan, f1).n_deps, 1);
  ck_assert_uint_eq(op_at(plan, f1).deps[0], f0);

  static const char *const sets[] = {"wh::RailFatTree::Servers",
                                     "2",
                                     "wh::RailFatTree::GpusPerServer",
                                     "8",
                                     "wh::RailFatTree::Spines",
                                     "2",
                                     NULL};
  Job j;
  job_open(&j, "wh::RailFatTree", sets, 16);
  job_run(&j, plan);
  /* blocking: rank 3's lm_head forward waits for its update op after the EP all-to-all */
  guint a2a = find_op(plan, "L2.mlp_moelayer.fwd-comm.ep3", UINT32_MAX);
  guint upd = find_op(plan, "L2.mlp_moelayer.fwd-update", 3);
  guint head = find_op(plan, "L3.lm_head.fwd", 3);
  ck_assert_uint_eq(info_of(&j, upd).start, info_of(&j, a2a).end);
  ck_assert_uint_eq(info_of(&j, head).start, info_of(&j, upd).end);
  /* non-blocking: the embedding's DP all-reduce, issued last, overlaps nothing after it
   * but ends the iteration after the last compute */
  WhTime end = 0, compute_end = 0;
  for (guint i = 0; i < wh_simai_plan_n_ops(plan); i++) {
    WhOpInfo info = info_of(&j, i);
    end = MAX(end, info.end);
    if (op_at(plan, i).kind == WH_OP_COMPUTE && !strstr(info.name, "-update"))
      compute_end = MAX(compute_end, info.end);
  }
  WhOpInfo last = info_of(&j, wh_simai_plan_n_ops(plan) - 1);
  ck_assert_str_eq(last.name, "L0.embedding_layer.wg-update");
  ck_assert_uint_eq(last.end, end);
  ck_assert_uint_gt(end, compute_end);
  fprintf(stderr, "simai gpt-tp8-dp2-16gpu: iteration %.1f us (computes end at %.1f us), %u ops\n",
          (double)end / WH_US, (double)compute_end / WH_US, wh_simai_plan_n_ops(plan));
  job_close(&j);
}
END_TEST

START_TEST(test_hybrid_keep_tp)
{
  WhSimaiOptions opts = {.keep_tp = TRUE};
  g_autoptr(WhSimaiPlan) plan = load_example("gpt-tp8-dp2-16gpu.txt", 16, &opts);
  ck_assert_uint_eq(plan->stats.dropped_tp, 0);
  ck_assert_uint_eq(plan->stats.n_collectives, 32 + 10);
  ck_assert_uint_eq(plan->stats.ops_per_iteration, 288 + 10 + 80);
  static const uint32_t tp0[] = {0, 1, 2, 3, 4, 5, 6, 7}, tp1[] = {8, 9, 10, 11, 12, 13, 14, 15};
  WhSimaiOp o = op_at(plan, find_op(plan, "L0.embedding_layer.fwd-comm.tp0", UINT32_MAX));
  check_group(o, tp0, 8);
  ck_assert_int_eq(o.coll, WH_COLL_ALL_REDUCE);
  ck_assert_uint_eq(o.n_deps, 8); /* the forward computes of ranks 0..7 */
  o = op_at(plan, find_op(plan, "L3.lm_head.ig-comm.tp1", UINT32_MAX));
  check_group(o, tp1, 8);
  ck_assert_int_eq(o.coll, WH_COLL_REDUCE_SCATTER);
  o = op_at(plan, find_op(plan, "L3.lm_head.fwd-comm.tp1", UINT32_MAX));
  ck_assert_int_eq(o.coll, WH_COLL_ALL_GATHER);
}
END_TEST

/* ---- groups, iterations, policies, input forms ---- */

static char *groups_file(const char *header)
{
  GString *s = g_string_new(header);
  g_string_append(s, "\n3\n");
  const char *types[] = {"ALLREDUCE", "ALLGATHER_EP", "REDUCESCATTER_DP_EP"};
  for (int i = 0; i < 3; i++)
    g_string_append_printf(s, "layer%d\t-1\t1000\tNONE\t0\t1000\tNONE\t0\t1000\t%s\t1048576\t0\n",
                           i, types[i]);
  return g_string_free(s, FALSE);
}

START_TEST(test_groups)
{
  /* TP 2, EP 2, 16 GPUs: DP 8 with stride 2, EP groups of 2, DP_EP groups of 4 */
  g_autofree char *text = groups_file("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 2 "
                                      "all_gpus: 16");
  g_autoptr(WhSimaiPlan) plan = parse_text(text, 16, NULL);
  ck_assert_uint_eq(plan->stats.dp, 8);
  static const uint32_t dp1[] = {1, 3, 5, 7, 9, 11, 13, 15}, ep[] = {5, 7}, dpep[] = {1, 5, 9, 13};
  check_group(op_at(plan, find_op(plan, "L0.layer0.wg-comm.dp1", UINT32_MAX)), dp1, 8);
  /* rank 5: TP group 2, member 1; EP block of TP groups 2 and 3 (SimAI's loop) */
  WhSimaiOp o = {.name = NULL};
  for (guint i = 0; i < wh_simai_plan_n_ops(plan); i++) {
    WhSimaiOp x = op_at(plan, i);
    if (x.kind == WH_OP_COLLECTIVE && x.group_kind == WH_SIMAI_GROUP_EP && x.rank == 5)
      o = x;
  }
  ck_assert_ptr_nonnull(o.name);
  check_group(o, ep, 2);
  ck_assert_int_eq(o.coll, WH_COLL_ALL_GATHER);
  o.name = NULL;
  for (guint i = 0; i < wh_simai_plan_n_ops(plan); i++) {
    WhSimaiOp x = op_at(plan, i);
    if (x.kind == WH_OP_COLLECTIVE && x.group_kind == WH_SIMAI_GROUP_DP_EP && x.rank == 1)
      o = x;
  }
  ck_assert_ptr_nonnull(o.name);
  check_group(o, dpep, 4);
  ck_assert_int_eq(o.coll, WH_COLL_REDUCE_SCATTER);
  /* 2 DP groups of 8, 8 EP groups of 2, 4 DP_EP groups of 4 */
  ck_assert_uint_eq(plan->stats.n_collectives, 2 + 8 + 4);

  /* pp 2 widens the DP stride to TP x PP = 4 */
  g_autofree char *text2 = groups_file("HYBRID_TRANSFORMER_FWD_IN_BCKWD "
                                       "model_parallel_NPU_group: 2 pp: 2 all_gpus: 16 pp_comm: "
                                       "1048576");
  g_autoptr(WhSimaiPlan) plan2 = parse_text(text2, 16, NULL);
  ck_assert_uint_eq(plan2->stats.dp, 4);
  static const uint32_t dp5[] = {1, 5, 9, 13};
  check_group(op_at(plan2, find_op(plan2, "L0.layer0.wg-comm.dp1", UINT32_MAX)), dp5, 4);
}
END_TEST

START_TEST(test_iterations)
{
  /* 4 GPUs, TP 2 kept, 2 layers, update delays; 2 iterations */
  const char *text = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 all_gpus: 4\n"
                     "2\n"
                     "a -1 10000 ALLREDUCE 65536 10000 ALLREDUCE 65536 10000 ALLREDUCE 262144 50\n"
                     "b -1 20000 NONE 0 20000 ALLGATHER 65536 20000 ALLREDUCE 262144 0\n";
  WhSimaiOptions one = {.keep_tp = TRUE}, two = {.keep_tp = TRUE, .iterations = 2};
  g_autoptr(WhSimaiPlan) p1 = parse_text(text, 4, &one);
  g_autoptr(WhSimaiPlan) p2 = parse_text(text, 4, &two);
  uint32_t n = wh_simai_plan_n_ops(p1);
  ck_assert_uint_eq(wh_simai_plan_n_ops(p2), 2 * n);
  ck_assert_uint_eq(p2->stats.ops_per_iteration, n);
  ck_assert_uint_eq(memcmp(&p1->stats, &p2->stats, sizeof p1->stats), 0);
  /* iteration 1's first forward on rank 2 waits for its last backward compute and for
   * layer a's weight-grad update on rank 2 (after the DP all-reduce) of iteration 0 */
  guint wg_a = find_op(p1, "L0.a.wg", 2), upd = UINT32_MAX;
  for (guint i = 0; i < n; i++) {
    WhSimaiOp o = op_at(p1, i);
    if (strcmp(o.name, "L0.a.wg-update") == 0 && o.rank == 2)
      upd = i;
  }
  ck_assert_uint_ne(upd, UINT32_MAX);
  WhSimaiOp dp = op_at(p1, op_at(p1, upd).deps[0]);
  ck_assert_str_eq(dp.name, "L0.a.wg-comm.dp0");
  WhSimaiOp f = op_at(p2, n + find_op(p1, "L0.a.fwd", 2));
  ck_assert_str_eq(f.name, "L0.a.fwd");
  ck_assert_uint_eq(f.n_deps, 2);
  ck_assert_uint_eq(f.deps[0], wg_a);
  ck_assert_uint_eq(f.deps[1], upd);
  /* iteration 0's ops match the single-iteration plan */
  for (uint32_t i = 0; i < n; i++)
    ck_assert_str_eq(op_at(p2, i).name, op_at(p1, i).name);

  static const char *const sets[] = {"wh::Star::Hosts", "4", NULL};
  Job j;
  job_open(&j, "wh::Star", sets, 4);
  job_run(&j, p2);
  ck_assert_uint_ge(info_of(&j, n + find_op(p1, "L0.a.fwd", 2)).start, info_of(&j, upd).end);
  job_close(&j);
}
END_TEST

START_TEST(test_micro_and_crlf)
{
  /* MICRO: layer 0's weight-grad comm only, once per iteration, all at once; the
   * header without all_gpus takes the rank count; CRLF and blank lines are fine */
  const char *text = "MICRO\r\n2\r\n\r\n"
                     "ar -1 5 ALLREDUCE 100 5 NONE 0 5 ALLREDUCE 1048576 0\r\n"
                     "x -1 5 ALLTOALL 100 5 NONE 0 5 ALLGATHER 4096 0\r\n\r\n";
  WhSimaiOptions opts = {.iterations = 3};
  g_autoptr(WhSimaiPlan) plan = parse_text(text, 4, &opts);
  ck_assert_uint_eq(plan->stats.n_gpus, 4);
  ck_assert_uint_eq(plan->stats.ops_per_iteration, 1);
  ck_assert_uint_eq(plan->stats.ignored_comms, 3);
  ck_assert_uint_eq(wh_simai_plan_n_ops(plan), 3);
  for (guint i = 0; i < 3; i++) {
    WhSimaiOp o = op_at(plan, i);
    ck_assert_str_eq(o.name, "L0.ar.wg-comm.all0");
    ck_assert_uint_eq(o.n_deps, 0);
    ck_assert_uint_eq(o.n_group, 4);
  }
  /* the DATA example with CRLF line ends gives the same plan */
  g_autofree char *path = wh_test_source_path("scenarios/workloads/dp-allreduce-8gpu.txt");
  g_autofree char *lf = NULL;
  ck_assert(g_file_get_contents(path, &lf, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(lf, "\n", -1);
  g_autofree char *crlf = g_strjoinv("\r\n", lines);
  g_autoptr(WhSimaiPlan) a = parse_text(lf, 8, NULL);
  g_autoptr(WhSimaiPlan) b = parse_text(crlf, 8, NULL);
  ck_assert_uint_eq(wh_simai_plan_n_ops(a), wh_simai_plan_n_ops(b));
  for (guint i = 0; i < wh_simai_plan_n_ops(a); i++)
    ck_assert_str_eq(op_at(a, i).name, op_at(b, i).name);
}
END_TEST

START_TEST(test_import_api)
{
  static const char *const sets[] = {"wh::Star::Hosts", "8", NULL};
  Job j;
  job_open(&j, "wh::Star", sets, 8);
  g_autofree char *dp = wh_test_source_path("scenarios/workloads/dp-allreduce-8gpu.txt");
  g_autofree char *gpt = wh_test_source_path("scenarios/workloads/gpt-tp8-dp2-16gpu.txt");
  WhSimaiStats stats = {0};
  WhSimaiOptions opts = {.stats = &stats};
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wh_simai_import(j.w, dp, &opts, &err), "%s", err ? err->message : "");
  ck_assert_uint_eq(stats.ops_per_iteration, 75);
  ck_assert_uint_eq(wh_workload_n_ops(j.w), 75);
  /* a second import goes after the first; its dependencies are shifted */
  const char *text = "DATA\n1\nx -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 65536 0\n";
  ck_assert(wh_simai_import_memory(j.w, text, strlen(text), "extra.txt", NULL, &err));
  ck_assert_uint_eq(wh_workload_n_ops(j.w), 75 + 8 + 8 + 1);
  WhOpInfo info;
  wh_workload_op_info(j.w, 75 + 8, &info); /* x's weight grad on rank 0 */
  ck_assert_str_eq(info.name, "L0.x.wg");
  ck_assert_uint_eq(info.n_deps, 1);
  ck_assert_uint_eq(info.deps[0], 75);
  /* 16 GPUs on an 8-rank workload */
  ck_assert(!wh_simai_import(j.w, gpt, NULL, &err));
  g_autofree char *prefix = g_strdup_printf("%s:1: ", gpt);
  ck_assert_msg(g_str_has_prefix(err->message, prefix), "%s", err->message);
  ck_assert_ptr_nonnull(strstr(err->message, "16 GPUs but only 8 ranks"));
  g_clear_error(&err);
  /* a plan made without a limit is refused when applied */
  g_autoptr(WhSimaiPlan) big = wh_simai_plan_load(gpt, 0, NULL, &err);
  ck_assert_ptr_nonnull(big);
  ck_assert(!wh_simai_plan_apply(big, j.w, &err));
  ck_assert_msg(g_str_has_prefix(err->message, prefix), "%s", err->message);
  g_clear_error(&err);
  /* unreadable file */
  ck_assert(!wh_simai_import(j.w, "/nonexistent/w.txt", NULL, &err));
  ck_assert(g_error_matches(err, WH_SIMAI_ERROR, WH_SIMAI_ERROR_IO));
  ck_assert(g_str_has_prefix(err->message, "/nonexistent/w.txt: "));
  job_close(&j);
}
END_TEST

/* ---- malformed files ---- */

typedef struct {
  const char *file; /* in tests/bad-inputs/simai/ */
  int line;
  const char *phrase; /* in the message after "FILE:LINE: " */
} BadFile;

/* Loaded with 16 ranks available. */
static const BadFile bad_files[] = {
    {"empty.txt", 1, "empty file"},
    {"whitespace-only.txt", 1, "empty file"},
    {"policy-unknown.txt", 1, "field 1 (parallelism policy): \"PIPELINE\" is not a known policy"},
    {"policy-unsupported.txt", 1, "HYBRID_DLRM policy is not supported"},
    {"header-not-a-number.txt", 1, "field 3 (model_parallel_NPU_group): \"eight\" is not a number"},
    {"header-unknown-key.txt", 1, "field 4: \"tp:\" is not a known key"},
    {"header-duplicate-key.txt", 1, "field 8: key ep given twice (first as field 4)"},
    {"header-missing-all-gpus.txt", 1, "missing all_gpus:"},
    {"gpus-not-multiple-of-tp.txt", 1, "field 13 (all_gpus): 12 is not a multiple"},
    {"ep-not-dividing-dp.txt", 1, "field 5 (ep): 3 does not divide the data-parallel size 4"},
    {"gpus-more-than-ranks.txt", 1, "field 13 (all_gpus): 64 GPUs but only 16 ranks"},
    {"checkpoint-beyond-layers.txt", 1, "field 16 (checkpoint layer): 5 is not a layer"},
    {"layer-count-missing.txt", 2, "missing the layer count"},
    {"layer-count-not-a-number.txt", 2, "field 1 (layer count): \"two\" is not a number"},
    {"layer-count-zero.txt", 2, "field 1 (layer count): \"0\" must be at least 1"},
    {"layer-wrong-field-count.txt", 4, "layer 1 (\"mlp\"): expected 12 fields"},
    {"layer-comment-line.txt", 3, "layer 0 (\"#\"): expected 12 fields"},
    {"layers-too-few.txt", 5, "end of file after 2 of the 3 layers"},
    {"layers-too-many.txt", 4, "beyond the 1 layers"},
    {"compute-not-a-number.txt", 3, "field 3 (forward compute time): \"abc\" is not a number"},
    {"compute-decimal.txt", 4, "field 6 (input-grad compute time): \"1.5e5\" is not a number"},
    {"size-negative.txt", 5, "field 11 (weight-grad comm size): \"-4194304\" is negative"},
    {"size-overflow.txt", 3, "field 5 (forward comm size): \"99999999999999999999999\" is out"},
    {"update-time-negative.txt", 4, "field 12 (update time): \"-100\" is negative"},
    {"comm-type-unknown.txt", 3,
     "field 4 (forward comm type): \"ALLREDUCE_TP\" is not a known comm type"},
    {"comm-type-allreducealltoall.txt", 4,
     "field 7 (input-grad comm type): "
     "\"ALLREDUCEALLTOALL\" is not supported"},
    {"dependency-negative.txt", 4, "field 2 (dependency): \"-2\" is negative"},
    {"data-ep-group.txt", 4, "field 10 (weight-grad comm type): \"ALLREDUCE_EP\""},
    {"nul-byte.txt", 4, "NUL byte"},
};

START_TEST(test_bad_file)
{
  const BadFile *b = &bad_files[_i];
  g_autofree char *rel = g_build_filename("tests", "bad-inputs", "simai", b->file, NULL);
  g_autofree char *path = wh_test_source_path(rel);
  ck_assert_msg(g_file_test(path, G_FILE_TEST_IS_REGULAR), "missing %s", path);
  g_autoptr(GError) err = NULL;
  g_autoptr(WhSimaiPlan) plan = wh_simai_plan_load(path, 16, NULL, &err);
  ck_assert_msg(plan == NULL, "%s loads", b->file);
  ck_assert(err != NULL && err->domain == WH_SIMAI_ERROR);
  g_autofree char *prefix = g_strdup_printf("%s:%d: ", path, b->line);
  ck_assert_msg(g_str_has_prefix(err->message, prefix), "%s: expected \"%s...\", got: %s", b->file,
                prefix, err->message);
  ck_assert_msg(strstr(err->message + strlen(prefix), b->phrase) != NULL,
                "%s: expected \"%s\" in: %s", b->file, b->phrase, err->message);
}
END_TEST

/* Every file in tests/bad-inputs/simai/ has an entry in the table, and vice versa. */
START_TEST(test_bad_files_listed)
{
  g_autofree char *dir_path = wh_test_source_path("tests/bad-inputs/simai");
  g_autoptr(GError) err = NULL;
  GDir *dir = g_dir_open(dir_path, 0, &err);
  ck_assert_msg(dir != NULL, "%s", err ? err->message : "?");
  guint n = 0;
  const char *name;
  while ((name = g_dir_read_name(dir)) != NULL) {
    gboolean listed = FALSE;
    for (size_t i = 0; i < G_N_ELEMENTS(bad_files); i++)
      listed |= strcmp(bad_files[i].file, name) == 0;
    ck_assert_msg(listed, "%s/%s has no entry in bad_files[]", dir_path, name);
    n++;
  }
  g_dir_close(dir);
  ck_assert_uint_eq(n, G_N_ELEMENTS(bad_files));
}
END_TEST

Suite *wh_simai_suite(void)
{
  Suite *s = suite_create("simai");
  TCase *tc = tcase_create("import");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_data_example_dag);
  tcase_add_test(tc, test_data_example_runs);
  tcase_add_test(tc, test_hybrid_example);
  tcase_add_test(tc, test_hybrid_keep_tp);
  tcase_add_test(tc, test_groups);
  tcase_add_test(tc, test_iterations);
  tcase_add_test(tc, test_micro_and_crlf);
  tcase_add_test(tc, test_import_api);
  tcase_add_loop_test(tc, test_bad_file, 0, G_N_ELEMENTS(bad_files));
  tcase_add_test(tc, test_bad_files_listed);
  suite_add_tcase(s, tc);
  return s;
}
