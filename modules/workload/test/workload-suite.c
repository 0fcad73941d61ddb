/* Workload tests: every collective algorithm and a p2p send on an idle non-blocking
 * fabric (one switch) against its closed-form time within three frame times (and a
 * run without link latency off it), the DAG order of ops.csv: no op starts
 * before all its dependencies have ended, and each flow's origin (op and transfer
 * index). */
#include <check.h>
#include <math.h>
#include <string.h>

#include "simai-import.h"
#include "test-util.h"
#include "workload.h"

#define N 8
#define RATE 100e9

typedef struct {
  WhScenario *sc;
  WhRun *run;
  WhWorkload *w;
} Job;

static void job_open(Job *j, uint32_t hosts, char **sets)
{
  j->sc = wh_scenario_new("workload", "wh::Star");
  g_autofree char *h = g_strdup_printf("%u", hosts);
  wh_scenario_add_set(j->sc, "wh::Star::Hosts", h);
  WhRunOptions opts = {.sets = sets};
  g_autoptr(GError) err = NULL;
  j->run = wh_run_new(j->sc, &opts, &err);
  ck_assert_msg(j->run != NULL, "%s", err ? err->message : "");
  j->w = wh_workload_new(j->run->tp, hosts);
}

static void job_run(Job *j)
{
  wh_workload_start(j->w);
  wh_sim_run(j->run->sim);
  ck_assert(wh_workload_done(j->w));
  wh_test_assert_clean_end(j->run);
}

static void job_close(Job *j)
{
  wh_workload_free(j->w);
  wh_run_free(j->run);
  wh_scenario_free(j->sc);
}

/* Time for `bytes` to cross the star's two hops: every frame serialized at the
 * sender, the last one again at the switch, plus two propagation delays. With
 * `acks`, the sender's NIC also carries one ACK frame per data frame for the flow it
 * receives at the same time (every rank of a ring or all-to-all both sends and
 * receives), so each data frame costs its own and an ACK's serialization, except
 * that the first ACK only leaves once the first frame has arrived (two frame times and
 * two delays in): the ACKs of as many frame times trail the sender's last frame. */
static double step_ps_acks(const WhTransportParams *p, uint64_t bytes, gboolean acks)
{
  uint64_t full = bytes / p->mtu, rest = bytes % p->mtu;
  double ack = acks ? (double)p->ctrl_bytes : 0;
  double frame = (double)(p->mtu + p->header_bytes) * 8 / RATE * 1e12;
  double serial = (double)full * (p->mtu + p->header_bytes + ack) * 8 / RATE * 1e12 +
                  (rest ? (double)(rest + p->header_bytes + ack) * 8 / RATE * 1e12 : 0);
  double trailing = (2 * frame + 2e6) / frame * ack * 8 / RATE * 1e12;
  double last = (double)((rest ? rest : p->mtu) + p->header_bytes) * 8 / RATE * 1e12;
  return serial - trailing + last + 2 * 1e6;
}

static double step_ps(const WhTransportParams *p, uint64_t bytes)
{
  return step_ps_acks(p, bytes, FALSE);
}

/* The engine is deterministic and the closed forms count every frame: a time must
 * match within three frame times (255 ns at 100 Gb/s with 1000 B frames), far below
 * one step's latency (2 us of propagation), so a run that lost a latency term, a
 * frame per step or the ACKs' serialization fails. */
static gboolean close_to(const char *what, const WhTransportParams *p, WhTime got, double expect)
{
  double tol = 3.0 * (p->mtu + p->header_bytes) * 8 / RATE * 1e12;
  fprintf(stderr, "%s: %.3f us, closed form %.3f us (%+.1f ns, tolerance %.0f ns)\n", what,
          (double)got * 1e-6, expect * 1e-6, ((double)got - expect) * 1e-3, tol * 1e-3);
  return fabs((double)got - expect) <= tol;
}

static void check_time(const char *what, const WhTransportParams *p, WhTime got, double expect)
{
  ck_assert_msg(close_to(what, p, got, expect), "%s: %.0f ps vs %.0f ps", what, (double)got,
                expect);
}

static uint32_t group[N] = {0, 1, 2, 3, 4, 5, 6, 7};

/* Runs the collective on the star (with `sets` on top) and returns whether its time
 * matches the closed form for the default 1 us links. */
static gboolean run_collective_with(const char *what, WhCollKind kind, WhCollAlgo algo,
                                    uint64_t bytes, double steps_or_direct, char **sets)
{
  Job j;
  job_open(&j, N, sets);
  g_autoptr(GError) err = NULL;
  int64_t id = wh_workload_add_collective(j.w, what, kind, algo, group, N, bytes, NULL, 0, &err);
  ck_assert_msg(id == 0, "%s", err ? err->message : "");
  job_run(&j);
  WhOpInfo info;
  wh_workload_op_info(j.w, 0, &info);
  const WhTransportParams *p = &j.run->tp->p;
  uint64_t chunk = (bytes + N - 1) / N;
  double expect;
  if (steps_or_direct > 0) {
    expect = steps_or_direct * step_ps_acks(p, chunk, TRUE);
  } else {
    /* direct: each NIC interleaves its n - 1 flows (and the ACKs of the n - 1 it
     * receives); the last frame then crosses the switch */
    double frame = (double)(p->mtu + p->header_bytes) * 8 / RATE * 1e12;
    double serial = (N - 1) * (step_ps_acks(p, chunk, TRUE) - 2e6 - frame);
    double trailing = (N - 2) * (2 * frame + 2e6) / frame * p->ctrl_bytes * 8 / RATE * 1e12;
    expect = serial + trailing + frame + 2e6;
  }
  gboolean ok = close_to(what, p, info.end - info.start, expect);
  job_close(&j);
  return ok;
}

static void run_collective(const char *what, WhCollKind kind, WhCollAlgo algo, uint64_t bytes,
                           double steps_or_direct)
{
  ck_assert_msg(run_collective_with(what, kind, algo, bytes, steps_or_direct, NULL),
                "%s: off the closed form", what);
}

START_TEST(test_ring_all_reduce)
{
  /* 2 (n - 1) steps of S / n: 2 (n-1)/n x S/B plus 2 (n - 1) step latencies */
  run_collective("ring all-reduce 16 MB over 8", WH_COLL_ALL_REDUCE, WH_ALGO_RING, 16000000,
                 2 * (N - 1));
}
END_TEST

/* Negative control: the same all-reduce on links without propagation delay (a
 * simulator that dropped every latency term) misses the closed form. */
START_TEST(test_closed_form_sees_latency)
{
  char *sets[] = {"wh::Link::Delay=0ns", NULL};
  ck_assert(!run_collective_with("ring all-reduce 16 MB over 8, no link delay", WH_COLL_ALL_REDUCE,
                                 WH_ALGO_RING, 16000000, 2 * (N - 1), sets));
}
END_TEST

START_TEST(test_reduce_scatter)
{
  run_collective("ring reduce-scatter 16 MB over 8", WH_COLL_REDUCE_SCATTER, WH_ALGO_RING, 16000000,
                 N - 1);
}
END_TEST

START_TEST(test_all_gather)
{
  run_collective("ring all-gather 16 MB over 8", WH_COLL_ALL_GATHER, WH_ALGO_RING, 16000000, N - 1);
}
END_TEST

START_TEST(test_pairwise_all_to_all)
{
  run_collective("pairwise all-to-all 16 MB over 8", WH_COLL_ALL_TO_ALL, WH_ALGO_PAIRWISE, 16000000,
                 N - 1);
}
END_TEST

START_TEST(test_direct_all_to_all)
{
  run_collective("direct all-to-all 16 MB over 8", WH_COLL_ALL_TO_ALL, WH_ALGO_DIRECT, 16000000, 0);
}
END_TEST

START_TEST(test_p2p_and_dag_order)
{
  /* compute -> send -> compute on the receiver, and an all-reduce after both */
  Job j;
  job_open(&j, 4, NULL);
  g_autoptr(GError) err = NULL;
  uint32_t g4[] = {0, 1, 2, 3};
  ck_assert_int_eq(wh_workload_add_compute(j.w, "fwd0", 0, 50 * WH_US, NULL, 0, &err), 0);
  uint32_t d1[] = {0};
  ck_assert_int_eq(wh_workload_add_send(j.w, "act", 0, 1, 4000000, d1, 1, &err), 1);
  uint32_t d2[] = {1};
  ck_assert_int_eq(wh_workload_add_compute(j.w, "fwd1", 1, 30 * WH_US, d2, 1, &err), 2);
  uint32_t d3[] = {0, 2};
  ck_assert_int_eq(wh_workload_add_collective(j.w, "grad", WH_COLL_ALL_REDUCE, WH_ALGO_RING, g4, 4,
                                              8000000, d3, 2, &err),
                   3);
  uint32_t bad[] = {7};
  ck_assert_int_eq(wh_workload_add_compute(j.w, "x", 0, 1, bad, 1, NULL), -1);
  job_run(&j);
  WhOpInfo send;
  wh_workload_op_info(j.w, 1, &send);
  check_time("p2p 4 MB", &j.run->tp->p, send.end - send.start, step_ps(&j.run->tp->p, 4000000));
  /* ops.csv: every op starts at or after the end of each of its dependencies */
  g_autofree char *csv = wh_workload_ops_csv(j.w);
  ck_assert(g_str_has_prefix(csv, "op_id,rank,kind,name,start_ps,end_ps,deps\n"));
  g_autoptr(GPtrArray) rows = wh_test_csv_rows(csv, NULL);
  guint64 start[8] = {0}, end[8] = {0};
  int n = 0;
  for (guint i = 0; i < rows->len; i++, n++) {
    char **f = rows->pdata[i];
    ck_assert_uint_eq(g_strv_length(f), 7);
    start[n] = g_ascii_strtoull(f[4], NULL, 10);
    end[n] = g_ascii_strtoull(f[5], NULL, 10);
    ck_assert_uint_ge(end[n], start[n]);
    if (*f[6]) {
      g_auto(GStrv) deps = g_strsplit(f[6], ";", -1);
      for (char **d = deps; *d; d++)
        ck_assert_uint_ge(start[n], end[g_ascii_strtoull(*d, NULL, 10)]);
    }
  }
  ck_assert_int_eq(n, 4);
  ck_assert_uint_eq(start[3], MAX(end[0], end[2]));
  /* the trace: a span per op and rank (2 computes, the send on both ends, the
   * all-reduce on 4 ranks), one arrow (start and finish) for the send */
  g_autofree char *trace = wh_workload_trace_json(j.w);
  ck_assert(g_str_has_prefix(trace, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":["));
  ck_assert(g_str_has_suffix(trace, "]}\n"));
  unsigned spans = 0, arrows = 0;
  for (const char *p = trace; (p = strstr(p, "\"ph\":\"")) != NULL; p += 6) {
    spans += p[6] == 'X';
    arrows += p[6] == 's' || p[6] == 'f';
  }
  ck_assert_uint_eq(spans, 2 + 2 + 4);
  ck_assert_uint_eq(arrows, 2);
  ck_assert_ptr_nonnull(strstr(trace, "\"kind\":\"all-reduce\""));
  /* flow origins: the send's one transfer, and the all-reduce's 2 (n - 1) n transfers,
   * each index once whatever order their flows started in */
  uint32_t seen[24] = {0}, op, index;
  ck_assert_uint_eq(j.run->tp->n_flows, 1 + 24);
  for (uint32_t f = 0; f < j.run->tp->n_flows; f++) {
    ck_assert(wh_workload_flow_origin(j.w, f, &op, &index));
    ck_assert_msg(op == 1 ? index == 0 : op == 3 && index < 24, "flow %u: op %u.%u", f, op, index);
    seen[index] += op == 3;
  }
  for (uint32_t k = 0; k < 24; k++)
    ck_assert_uint_eq(seen[k], 1);
  ck_assert(!wh_workload_flow_origin(j.w, j.run->tp->n_flows, &op, &index));
  job_close(&j);
}
END_TEST

/* ---- memory ---- */

/* A SimAI DATA file of `layers` layers on 8 GPUs: three computes, an all-reduce and
 * an update per layer. (transfer full) */
static char *data_file(uint32_t layers)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "DATA all_gpus: 8\n%u\n", layers);
  for (uint32_t i = 0; i < layers; i++)
    g_string_append_printf(s, "layer%u -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 1048576 10\n", i);
  return g_string_free(s, FALSE);
}

/* The heap a plan of 66,000 ops takes (its op table), what applying it to a workload
 * adds (nothing: the workload shares the table) and what starting it adds (the run
 * state), against the bytes per op and edge the workload declares; and the importer's
 * estimate is at least the sum. */
START_TEST(test_simai_bytes_per_op)
{
  g_autofree char *text = data_file(8000);
  uint64_t h0 = wh_test_heap_bytes();
  g_autoptr(GError) err = NULL;
  g_autoptr(WhSimaiPlan) plan = wh_simai_plan_parse(text, strlen(text), "d.txt", 8, NULL, &err);
  ck_assert_msg(plan != NULL, "%s", err ? err->message : "");
  uint64_t h1 = wh_test_heap_bytes();
  uint32_t n = wh_simai_plan_n_ops(plan);
  uint64_t edges = wh_op_table_n_deps_total(plan->ops);
  ck_assert_uint_eq(n, 8000 * 33 - 8);
  Job j;
  job_open(&j, 8, NULL);
  uint64_t h2 = wh_test_heap_bytes();
  ck_assert(wh_simai_plan_apply(plan, j.w, &err));
  uint64_t h3 = wh_test_heap_bytes();
  wh_workload_start(j.w);
  uint64_t h4 = wh_test_heap_bytes();
  if (h1 == h0) { /* a sanitizer's allocator: nothing to measure */
    job_close(&j);
    return;
  }
  double table = (double)(h1 - h0) / n, run = (double)(h4 - h3) / n;
  fprintf(stderr,
          "simai plan: %u ops, %.2f edges per op: table %.1f B/op, apply %" G_GINT64_FORMAT
          " B, run state %.1f B/op, workload_op_bytes %.1f B/op\n",
          n, (double)edges / n, table, (gint64)(h3 - h2), run,
          (double)wh_workload_op_bytes(j.w) / n);
  /* the layout: 28 + 25 B per op, 4 + 4 per edge */
  ck_assert_uint_le(WH_WORKLOAD_BYTES_PER_OP, 53);
  ck_assert_uint_le(WH_WORKLOAD_BYTES_PER_DEP, 8);
  /* the table: bytes per op and edge, and 5 names per layer (3 computes, the
   * all-reduce, its update) of up to 160 B each with their hash entry */
  ck_assert_uint_le(h1 - h0, (uint64_t)n * WH_OP_TABLE_BYTES_PER_OP +
                                 edges * WH_OP_TABLE_BYTES_PER_DEP + 5 * 8000 * 160);
  ck_assert_int_le((int64_t)(h3 - h2), 4096); /* shared, not copied */
  /* the run state, plus the events of the first ops and the scheduler's pool */
  ck_assert_uint_le(h4 - h3, (uint64_t)n * WH_WORKLOAD_RUN_BYTES_PER_OP + edges * 4 + (512 << 10));
  /* this shape in all: about 77 B per op (it was 447 with an op struct, a name, a
   * dependency array and a successor array each) */
  ck_assert_uint_le(h4 - h3 + h1 - h0, (uint64_t)n * 80);
  /* the estimate is not below what was used */
  WhSimaiOptions tight = {.max_bytes = (h1 - h0) + (h4 - h3)};
  g_autoptr(WhSimaiPlan) refused =
      wh_simai_plan_parse(text, strlen(text), "d.txt", 8, &tight, &err);
  ck_assert_ptr_null(refused);
  ck_assert(g_error_matches(err, WH_SIMAI_ERROR, WH_SIMAI_ERROR_TOO_LARGE));
  fprintf(stderr, "%s\n", err->message);
  job_close(&j);
}
END_TEST

/* A workload that shares a plan's table copies it before it takes an op of its own;
 * the plan stays as it was. Once started, a workload takes no more ops. */
START_TEST(test_shared_table_copied_on_write)
{
  g_autofree char *text = data_file(10);
  g_autoptr(GError) err = NULL;
  g_autoptr(WhSimaiPlan) plan = wh_simai_plan_parse(text, strlen(text), "d.txt", 8, NULL, &err);
  ck_assert_msg(plan != NULL, "%s", err ? err->message : "");
  uint32_t n = wh_simai_plan_n_ops(plan);
  Job j;
  job_open(&j, 8, NULL);
  ck_assert(wh_simai_plan_apply(plan, j.w, &err));
  ck_assert(wh_op_table_is_shared(plan->ops));
  uint32_t dep = n - 1;
  ck_assert_int_eq(wh_workload_add_compute(j.w, "extra", 3, 1000, &dep, 1, &err), n);
  ck_assert(!wh_op_table_is_shared(plan->ops));
  ck_assert_uint_eq(wh_simai_plan_n_ops(plan), n);
  ck_assert_uint_eq(wh_workload_n_ops(j.w), n + 1);
  for (uint32_t i = 0; i < n; i++) {
    WhSimaiOp a;
    WhOpInfo b;
    wh_simai_plan_op(plan, i, &a);
    wh_workload_op_info(j.w, i, &b);
    ck_assert_str_eq(a.name, b.name);
    ck_assert_uint_eq(a.n_deps, b.n_deps);
    for (uint32_t d = 0; d < a.n_deps; d++)
      ck_assert_uint_eq(a.deps[d], b.deps[d]);
  }
  job_run(&j);
  ck_assert_int_lt(wh_workload_add_compute(j.w, "late", 0, 1000, NULL, 0, &err), 0);
  ck_assert_ptr_nonnull(strstr(err->message, "the workload has started"));
  job_close(&j);
}
END_TEST

/* Layers with no compute: nothing resets a rank's stream, so each iteration's ops wait
 * on more ops than the last; over 100,000 iterations the edges pass the 32-bit pool,
 * which is refused before any op is made. */
START_TEST(test_edge_limit_refused)
{
  const char *text = "DATA all_gpus: 8\n2\n"
                     "a -1 0 NONE 0 0 NONE 0 0 ALLREDUCE 1048576 0\n"
                     "b -1 0 NONE 0 0 NONE 0 0 ALLREDUCE 1048576 0\n";
  WhSimaiOptions opts = {.iterations = 100000};
  g_autoptr(GError) err = NULL;
  g_autoptr(WhSimaiPlan) plan = wh_simai_plan_parse(text, strlen(text), "g.txt", 8, &opts, &err);
  ck_assert_ptr_null(plan);
  ck_assert(g_error_matches(err, WH_SIMAI_ERROR, WH_SIMAI_ERROR_TOO_LARGE));
  ck_assert_str_eq(err->message, "g.txt: 2 layers on 8 GPUs make more than 4294967295 "
                                 "dependency edges; a workload holds at most that");
  opts.iterations = 10; /* a few iterations load, and their edges do grow */
  g_autoptr(WhSimaiPlan) small = wh_simai_plan_parse(text, strlen(text), "g.txt", 8, &opts, &err);
  ck_assert_msg(small != NULL, "%s", err ? err->message : "");
  WhSimaiOp first, last;
  wh_simai_plan_op(small, 2, &first);
  wh_simai_plan_op(small, wh_simai_plan_n_ops(small) - 1, &last);
  ck_assert_uint_lt(first.n_deps, last.n_deps);
}
END_TEST

/* A long load reports each tenth of the ops it makes, ending at 100%; a short one
 * says nothing. */
START_TEST(test_load_progress)
{
  uint32_t layers = WH_SIMAI_PROGRESS_OPS / 33 + 1, ops = layers * 33 - 8;
  g_autofree char *big = data_file(layers), *small = data_file(10);
  FILE *f = tmpfile();
  ck_assert_ptr_nonnull(f);
  WhSimaiOptions opts = {.progress = f};
  g_autoptr(GError) err = NULL;
  g_autoptr(WhSimaiPlan) none = wh_simai_plan_parse(small, strlen(small), "s.txt", 8, &opts, &err);
  ck_assert_ptr_nonnull(none);
  ck_assert_int_eq(ftell(f), 0);
  g_autoptr(WhSimaiPlan) plan = wh_simai_plan_parse(big, strlen(big), "b.txt", 8, &opts, &err);
  ck_assert_msg(plan != NULL, "%s", err ? err->message : "");
  ck_assert_uint_eq(wh_simai_plan_n_ops(plan), ops);
  long len = ftell(f);
  g_autofree char *text = g_malloc0((gsize)len + 1);
  rewind(f);
  ck_assert_uint_eq(fread(text, 1, (size_t)len, f), (size_t)len);
  fclose(f);
  g_autofree char *first = g_strdup_printf("\r  b.txt: 10%% of %u ops made", ops);
  g_autofree char *last = g_strdup_printf("\r  b.txt: 100%% of %u ops made\n", ops);
  ck_assert_msg(g_str_has_prefix(text, first), "%s", text);
  ck_assert_msg(g_str_has_suffix(text, last), "%s", text);
  unsigned reports = 0;
  for (const char *p = text; (p = strchr(p, '\r')) != NULL; p++)
    reports++;
  ck_assert_uint_ge(reports, 10);
  ck_assert_uint_le(reports, 11);
}
END_TEST

/* For a native DAG, a model preset and a SimAI file, each over many iterations: what
 * loading the scenario and starting its workload take from the heap is no more than
 * the budget check estimates (the network's and the workload's): a budget of exactly
 * that use is refused. */
static const struct {
  const char *file;
  uint32_t iterations;
} estimated[] = {
    {"scenarios/workload-dp-pp.xml", 20000},
    {"scenarios/presets/moe-8x7b-dcqcn.xml", 20},
    {"scenarios/simai-gpt-tp8-dp2.xml", 2000},
};

START_TEST(test_estimates_cover_use)
{
  g_autofree char *path = wh_test_source_path(estimated[_i].file);
  g_autoptr(GError) err = NULL;
  g_autoptr(WhScenario) sc = wh_scenario_load(path, &err);
  ck_assert_msg(sc != NULL, "%s", err ? err->message : "");
  uint64_t h0 = wh_test_heap_bytes();
  WhRunOptions opts = {.iterations = estimated[_i].iterations};
  WhRun *run = wh_run_new(sc, &opts, &err);
  ck_assert_msg(run != NULL, "%s", err ? err->message : "");
  wh_workload_start(run->workload);
  uint64_t used = wh_test_heap_bytes() - h0, ops = wh_workload_n_ops(run->workload);
  wh_run_free(run);
  if (used == 0 || h0 == 0)
    return; /* a sanitizer's allocator: nothing to measure */
  fprintf(stderr, "%s x %u: %" G_GUINT64_FORMAT " ops, %.1f B per op in use\n", estimated[_i].file,
          opts.iterations, (guint64)ops, (double)used / (double)ops);
  opts.max_memory = used;
  ck_assert_ptr_null(wh_run_new(sc, &opts, &err));
  ck_assert_msg(strstr(err->message, "(--max-memory)") != NULL, "%s", err->message);
  fprintf(stderr, "  %s\n", err->message);
}
END_TEST

Suite *wh_workload_suite(void)
{
  Suite *s = suite_create("workload");
  TCase *tc = tcase_create("collectives");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_ring_all_reduce);
  tcase_add_test(tc, test_closed_form_sees_latency);
  tcase_add_test(tc, test_reduce_scatter);
  tcase_add_test(tc, test_all_gather);
  tcase_add_test(tc, test_pairwise_all_to_all);
  tcase_add_test(tc, test_direct_all_to_all);
  tcase_add_test(tc, test_p2p_and_dag_order);
  suite_add_tcase(s, tc);
  TCase *mem = tcase_create("memory");
  tcase_set_timeout(mem, 60);
  tcase_add_test(mem, test_simai_bytes_per_op);
  tcase_add_test(mem, test_load_progress);
  tcase_add_test(mem, test_edge_limit_refused);
  tcase_add_test(mem, test_shared_table_copied_on_write);
  tcase_add_loop_test(mem, test_estimates_cover_use, 0, G_N_ELEMENTS(estimated));
  suite_add_tcase(s, mem);
  return s;
}
