/* Tests of the C API over ns-3 (one ns-3 simulation per process: Check forks every
 * test): a UDP stream and a one-segment TCP flow against their closed-form
 * completion times, a long DCTCP flow at close to line rate through a RED/ECN queue,
 * the API's argument and order checks, and a process whose ns-3 a C++ caller already
 * used directly. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ns3-direct.h"
#include "test-util.h"
#include "wh-ns3-wormhole.h"
#include "wh-ns3.h"

#define RATE 10000000000ULL
#define DELAY_PS 10000000ULL /* 10 us */

static WhNs3Sim *two_nodes_hooked(const WhNs3TcpConfig *tcp, WhNs3QueueKind kind,
                                  const WhNs3Hooks *hooks, uint32_t limit)
{
  WhNs3Sim *sim = NULL;
  ck_assert_int_eq(wh_ns3_sim_new(tcp, &sim), WH_NS3_OK);
  uint32_t first = 99;
  ck_assert_int_eq(wh_ns3_add_nodes(sim, 2, &first), WH_NS3_OK);
  ck_assert_uint_eq(first, 0);
  WhNs3QueueConfig q = {
      .kind = kind, .limit_packets = limit, .ecn_threshold_pkts = 20, .hooks = hooks};
  ck_assert_int_eq(wh_ns3_add_link(sim, 0, 1, RATE, DELAY_PS, &q), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_finalize(sim), WH_NS3_OK);
  return sim;
}

static WhNs3Sim *two_nodes(const WhNs3TcpConfig *tcp, WhNs3QueueKind kind)
{
  return two_nodes_hooked(tcp, kind, NULL, 1000);
}

static double tx_ps(double bytes)
{
  return bytes * 8 / (double)RATE * 1e12;
}

static void check_close(const char *what, double got, double expect, double tol)
{
  fprintf(stderr, "ns-3 %s: %.3f us, closed form %.3f us (%+.3f%%)\n", what, got * 1e-6,
          expect * 1e-6, (got - expect) / expect * 100);
  ck_assert_msg(fabs(got - expect) / expect < tol, "%s: %.0f vs %.0f ps", what, got, expect);
}

START_TEST(test_udp_closed_form)
{
  /* 100 datagrams of 1000 B, each 1030 B on the wire (UDP 8 + IPv4 20 + PPP 2), sent
   * back to back at the link rate; ns-3's OnOffApplication sends its first packet one
   * packet interval after it starts, so the last byte arrives after 101 packet times
   * and one delay */
  WhNs3Sim *sim = two_nodes(NULL, WH_NS3_QUEUE_FIFO);
  uint32_t flow;
  double rate = (double)RATE * 1000 / 1030;
  ck_assert_int_eq(wh_ns3_add_udp_flow(sim, 0, 1, 100000, 1000000, (uint64_t)rate, 1000, &flow),
                   WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_run(sim, 0), WH_NS3_OK);
  uint64_t start, finish;
  ck_assert_int_eq(wh_ns3_flow_times(sim, flow, &start, &finish), WH_NS3_OK);
  check_close("UDP 100 x 1000 B", (double)(finish - start), 101 * tx_ps(1030) + DELAY_PS, 0.01);
  WhNs3Stats st;
  ck_assert_int_eq(wh_ns3_stats(sim, &st), WH_NS3_OK);
  ck_assert_uint_ge(st.link_traversals, 100);
  ck_assert_uint_gt(st.events, 100);
  wh_ns3_sim_free(sim);
}
END_TEST

START_TEST(test_tcp_one_segment)
{
  /* handshake then one segment: SYN, SYN-ACK, then the data after the final ACK:
   * three one-way delays plus the (sub-microsecond) serializations */
  WhNs3TcpConfig tcp = {.segment_size = 1000,
                        .initial_cwnd = 10,
                        .socket_buffer = 1 << 20,
                        .delack_count = 1,
                        .min_rto_ps = 200000000000ULL,
                        .sack = 0,
                        .timestamps = 0};
  WhNs3Sim *sim = two_nodes(&tcp, WH_NS3_QUEUE_FIFO);
  uint32_t flow;
  ck_assert_int_eq(wh_ns3_add_tcp_flow(sim, 0, 1, 1000, 0, WH_NS3_TCP_NEWRENO, &flow), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_run(sim, 0), WH_NS3_OK);
  uint64_t start, finish;
  ck_assert_int_eq(wh_ns3_flow_times(sim, flow, &start, &finish), WH_NS3_OK);
  double expect = 3 * (double)DELAY_PS + tx_ps(64) + tx_ps(64) + tx_ps(42) + tx_ps(1042);
  check_close("TCP 1 segment", (double)(finish - start), expect, 0.01);
  wh_ns3_sim_free(sim);
}
END_TEST

START_TEST(test_dctcp_long_flow)
{
  /* 10 MB of DCTCP through a RED/ECN queue: close to line rate once slow start is
   * over (1040 B on the wire per 1000 B segment with timestamps off) */
  WhNs3TcpConfig tcp = {.segment_size = 1000,
                        .initial_cwnd = 10,
                        .socket_buffer = 4 << 20,
                        .delack_count = 1,
                        .min_rto_ps = 200000000000ULL,
                        .sack = 0,
                        .timestamps = 0};
  WhNs3Sim *sim = two_nodes(&tcp, WH_NS3_QUEUE_RED_ECN);
  uint32_t flow;
  ck_assert_int_eq(wh_ns3_add_tcp_flow(sim, 0, 1, 10000000, 0, WH_NS3_TCP_DCTCP, &flow), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_run(sim, 0), WH_NS3_OK);
  uint64_t start, finish;
  ck_assert_int_eq(wh_ns3_flow_times(sim, flow, &start, &finish), WH_NS3_OK);
  check_close("DCTCP 10 MB", (double)(finish - start), 10000 * tx_ps(1042) + 3 * DELAY_PS, 0.03);
  wh_ns3_sim_free(sim);
}
END_TEST

START_TEST(test_api_checks)
{
  WhNs3Sim *sim = NULL, *other = NULL;
  ck_assert_int_eq(wh_ns3_sim_new(NULL, &sim), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_sim_new(NULL, &other), WH_NS3_EBUSY);
  ck_assert_int_eq(wh_ns3_add_nodes(sim, 2, NULL), WH_NS3_OK);
  WhNs3QueueConfig q = {.kind = WH_NS3_QUEUE_FIFO, .limit_packets = 10};
  ck_assert_int_eq(wh_ns3_add_link(sim, 0, 0, RATE, 0, &q), WH_NS3_EINVAL);
  ck_assert_int_eq(wh_ns3_add_link(sim, 0, 5, RATE, 0, &q), WH_NS3_EINVAL);
  WhNs3QueueConfig nohooks = {.kind = WH_NS3_QUEUE_HOOK, .limit_packets = 10};
  ck_assert_int_eq(wh_ns3_add_link(sim, 0, 1, RATE, 0, &nohooks), WH_NS3_EINVAL);
  ck_assert_int_eq(wh_ns3_add_tcp_flow(sim, 0, 1, 10, 0, WH_NS3_TCP_NEWRENO, NULL), WH_NS3_ESTATE);
  ck_assert_int_eq(wh_ns3_add_link(sim, 0, 1, RATE, 0, &q), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_finalize(sim), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_add_link(sim, 0, 1, RATE, 0, &q), WH_NS3_ESTATE);
  ck_assert_int_eq(wh_ns3_add_udp_flow(sim, 0, 1, 0, 0, RATE, 100, NULL), WH_NS3_EINVAL);
  ck_assert_str_eq(wh_ns3_strerror(WH_NS3_EBUSY),
                   "an ns-3 simulation already exists in this process");
  wh_ns3_sim_free(sim);
  ck_assert_int_eq(wh_ns3_sim_new(NULL, &other), WH_NS3_EUNUSED);
}
END_TEST

/* ns-3 used directly (C++) in this process before the C API, in each way of
 * ns3-direct.h: wh_ns3_sim_new and wh_ns3_wormhole_observe refuse with
 * WH_NS3_EUNUSED (ns-3 cannot be switched to picoseconds any more) instead of
 * crashing or simulating on a wrong time base; ns-3 untouched, the API works. */
START_TEST(test_direct_use_refused)
{
  WhNs3Direct use = (WhNs3Direct)_i;
  uint64_t events = wh_ns3_direct_use(use);
  if (use == WH_NS3_DIRECT_DESTROYED || use == WH_NS3_DIRECT_KEPT)
    ck_assert_uint_ge(events, 2); /* the send and the frame's arrival */
  WhNs3WormholeParams p = {.theta = 0.05, .window = 100, .period_ps = 1000000};
  WhNs3Sim *sim = NULL;
  if (use != WH_NS3_DIRECT_NONE) {
    ck_assert_int_eq(wh_ns3_wormhole_observe(&p), WH_NS3_EUNUSED);
    ck_assert_int_eq(wh_ns3_sim_new(NULL, &sim), WH_NS3_EUNUSED);
    ck_assert_ptr_null(sim);
    ck_assert_int_eq(wh_ns3_sim_new(NULL, &sim), WH_NS3_EUNUSED);
    ck_assert_int_eq(wh_ns3_sim_phase(), WH_NS3_PHASE_NONE);
    return;
  }
  ck_assert_int_eq(wh_ns3_wormhole_observe(&p), WH_NS3_ESTATE); /* no simulation yet */
  sim = two_nodes(NULL, WH_NS3_QUEUE_FIFO);
  ck_assert_int_eq(wh_ns3_wormhole_observe(&p), WH_NS3_OK);
  uint32_t flow;
  ck_assert_int_eq(wh_ns3_add_udp_flow(sim, 0, 1, 10000, 0, RATE / 2, 1000, &flow), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_run(sim, 0), WH_NS3_OK);
  uint64_t finish = 0;
  ck_assert_int_eq(wh_ns3_flow_times(sim, flow, NULL, &finish), WH_NS3_OK);
  ck_assert_uint_gt(finish, DELAY_PS);
  ck_assert_uint_eq(wh_ns3_wormhole_n_flows(), 1);
  wh_ns3_sim_free(sim);
}
END_TEST

/* Hook queue discs: what the C side saw, per node (0, 1) and band (control, data). */
typedef struct {
  uint64_t enq[2][2], deq[2][2], drops[2][2], marks, hook_drops;
  uint32_t max_queue[2][2];
  uint64_t last_now;
  int bad;             /* a callback saw something inconsistent */
  uint32_t mark_above; /* on_dequeue marks data while more than this many packets wait */
  uint32_t drop_every; /* on_enqueue drops every n-th data packet (0: none) */
  uint32_t flow;       /* the flow id data packets must carry */
} HookLog;

static void hook_check(HookLog *log, const WhNs3HookPacket *p)
{
  if (p->link != 0 || p->node > 1 || p->band > 1 || p->now_ps < log->last_now || p->bytes == 0 ||
      (p->band == 1 && p->flow != log->flow) || p->queue_bytes < (uint64_t)p->queue_packets)
    log->bad++;
  log->last_now = p->now_ps;
}

static WhNs3HookVerdict hook_enqueue(void *ctx, const WhNs3HookPacket *p)
{
  HookLog *log = ctx;
  hook_check(log, p);
  uint64_t n = ++log->enq[p->node & 1][p->band & 1];
  if (p->queue_packets > log->max_queue[p->node & 1][p->band & 1])
    log->max_queue[p->node & 1][p->band & 1] = p->queue_packets;
  if (p->band == 1 && p->node == 0 && log->drop_every && n % log->drop_every == 0) {
    log->hook_drops++;
    return WH_NS3_HOOK_DROP;
  }
  return WH_NS3_HOOK_PASS;
}

static WhNs3HookVerdict hook_dequeue(void *ctx, const WhNs3HookPacket *p)
{
  HookLog *log = ctx;
  hook_check(log, p);
  log->deq[p->node & 1][p->band & 1]++;
  if (p->band == 1 && log->mark_above && p->queue_packets > log->mark_above) {
    if (!p->ecn_capable)
      log->bad++;
    log->marks++;
    return WH_NS3_HOOK_MARK;
  }
  return WH_NS3_HOOK_PASS;
}

static void hook_drop(void *ctx, const WhNs3HookPacket *p)
{
  HookLog *log = ctx;
  hook_check(log, p);
  log->drops[p->node & 1][p->band & 1]++;
}

static const WhNs3TcpConfig hook_tcp = {.segment_size = 1000,
                                        .initial_cwnd = 10,
                                        .socket_buffer = 4 << 20,
                                        .delack_count = 1,
                                        .min_rto_ps = 10000000000ULL,
                                        .sack = 0,
                                        .timestamps = 0};

START_TEST(test_hook_step_marking)
{
  /* DCTCP through a hook queue disc whose C dequeue hook marks data as a step at 20
   * packets: the marks reach the sender (without them its 4 MB window would fill the
   * 1000-packet queue), the flow runs at close to line rate, and every packet the hooks
   * saw enter left (none dropped) */
  HookLog log = {.mark_above = 20, .flow = 0};
  WhNs3Hooks hooks = {hook_enqueue, hook_dequeue, hook_drop, &log};
  WhNs3Sim *sim = two_nodes_hooked(&hook_tcp, WH_NS3_QUEUE_HOOK, &hooks, 1000);
  uint32_t flow;
  ck_assert_int_eq(wh_ns3_add_tcp_flow(sim, 0, 1, 10000000, 0, WH_NS3_TCP_DCTCP, &flow), WH_NS3_OK);
  ck_assert_uint_eq(flow, 0);
  ck_assert_int_eq(wh_ns3_run(sim, 0), WH_NS3_OK);
  uint64_t start, finish;
  ck_assert_int_eq(wh_ns3_flow_times(sim, flow, &start, &finish), WH_NS3_OK);
  fprintf(stderr,
          "ns-3 hook queue disc: %" G_GUINT64_FORMAT " data packets enqueued, %" G_GUINT64_FORMAT
          " marked at dequeue, longest data queue %u packets\n",
          log.enq[0][1], log.marks, log.max_queue[0][1]);
  check_close("DCTCP 10 MB, C step marking", (double)(finish - start),
              10000 * tx_ps(1042) + 3 * DELAY_PS, 0.03);
  ck_assert_int_eq(log.bad, 0);
  ck_assert_uint_ge(log.enq[0][1], 10000);
  ck_assert_uint_gt(log.enq[1][0], 0); /* ACKs in the control band of node 1 */
  ck_assert_uint_gt(log.marks, 0);
  ck_assert_uint_lt(log.max_queue[0][1], 100);
  for (int n = 0; n < 2; n++)
    for (int b = 0; b < 2; b++) {
      ck_assert_uint_eq(log.drops[n][b], 0);
      ck_assert_uint_eq(log.enq[n][b], log.deq[n][b]);
    }
  wh_ns3_sim_free(sim);
}
END_TEST

START_TEST(test_hook_drops)
{
  /* a C enqueue hook drops every 50th data packet of a NewReno flow: TCP recovers and
   * delivers every byte; on_drop saw exactly the hook's drops, and every other packet
   * that entered left */
  HookLog log = {.drop_every = 50, .flow = 0};
  WhNs3Hooks hooks = {hook_enqueue, hook_dequeue, hook_drop, &log};
  WhNs3Sim *sim = two_nodes_hooked(&hook_tcp, WH_NS3_QUEUE_HOOK, &hooks, 1000);
  uint32_t flow;
  ck_assert_int_eq(wh_ns3_add_tcp_flow(sim, 0, 1, 1000000, 0, WH_NS3_TCP_NEWRENO, &flow),
                   WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_run(sim, 0), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_flow_times(sim, flow, NULL, NULL), WH_NS3_OK);
  fprintf(stderr, "ns-3 hook drops: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " data packets\n",
          log.hook_drops, log.enq[0][1]);
  ck_assert_int_eq(log.bad, 0);
  ck_assert_uint_ge(log.hook_drops, 20);
  ck_assert_uint_eq(log.drops[0][1], log.hook_drops);
  ck_assert_uint_eq(log.enq[0][1], log.deq[0][1] + log.hook_drops);
  wh_ns3_sim_free(sim);
}
END_TEST

START_TEST(test_hook_queue_limit)
{
  /* UDP at twice the link rate into a 10-packet hook queue disc: the full queue drops
   * without asking the hook, on_drop is told, and what entered = what left + dropped */
  HookLog log = {.flow = 0};
  WhNs3Hooks hooks = {hook_enqueue, hook_dequeue, hook_drop, &log};
  WhNs3Sim *sim = two_nodes_hooked(NULL, WH_NS3_QUEUE_HOOK, &hooks, 10);
  ck_assert_int_eq(wh_ns3_add_udp_flow(sim, 0, 1, 200000, 0, 2 * RATE, 1000, NULL), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_run(sim, 1000000000ULL), WH_NS3_OK);
  fprintf(stderr,
          "ns-3 hook queue limit: %" G_GUINT64_FORMAT " datagrams admitted, %" G_GUINT64_FORMAT
          " dropped at 10 packets\n",
          log.enq[0][1], log.drops[0][1]);
  ck_assert_int_eq(log.bad, 0);
  ck_assert_uint_gt(log.drops[0][1], 50);
  ck_assert_uint_le(log.max_queue[0][1], 9);
  ck_assert_uint_eq(log.enq[0][1], log.deq[0][1]);
  ck_assert_uint_eq(log.enq[0][1] + log.drops[0][1], 200);
  ck_assert_int_eq(wh_ns3_flow_times(sim, 0, NULL, NULL), WH_NS3_ENOTDONE);
  wh_ns3_sim_free(sim);
}
END_TEST

static double mean_fct(const char *csv_path)
{
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(csv_path, &text, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  double sum = 0;
  int n = 0;
  for (int i = 1; lines[i] && *lines[i]; i++) {
    g_auto(GStrv) cols = g_strsplit(lines[i], ",", -1); /* fct_ps is the 7th of 8 */
    ck_assert_int_eq(g_strv_length(cols), 8);
    ck_assert(cols[6][0]);
    sum += g_ascii_strtod(cols[6], NULL);
    n++;
  }
  ck_assert_int_gt(n, 0);
  return sum / n;
}

/* The unsigned value of `"key": N` in the summary.json of run directory `dir`. */
static guint64 summary_uint(const char *dir, const char *key)
{
  g_autofree char *path = g_build_filename(dir, "summary.json", NULL), *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  g_autofree char *quoted = g_strdup_printf("\"%s\" : ", key);
  const char *at = strstr(text, quoted);
  ck_assert_msg(at != NULL, "%s has no %s", path, key);
  return g_ascii_strtoull(at + strlen(quoted), NULL, 10);
}

START_TEST(test_whsim_engine_ns3)
{
  /* the same DCTCP scenario on both engines: outputs in the same format, mean FCT
   * within 5%, with ns-3's RED marking and with the C dequeue marking; a DCQCN
   * scenario and an unknown marking are refused on ns-3 with exit status 2 */
  g_autofree char *scenario = wh_test_source_path("tests/scenarios/dctcp-dumbbell.xml");
  g_autofree char *tmp = g_dir_make_tmp("whsim-ns3-XXXXXX", NULL);
  g_autofree char *native = g_build_filename(tmp, "native", NULL);
  g_autofree char *ns3 = g_build_filename(tmp, "ns3", NULL);
  const char *a[] = {"run", scenario, "--out", native, "--quiet", NULL};
  const char *b[] = {"run", scenario, "--out", ns3, "--quiet", "--engine", "ns3", NULL};
  ck_assert_int_eq(wh_test_whsim(a, NULL, NULL), 0);
  ck_assert_int_eq(wh_test_whsim(b, NULL, NULL), 0);
  g_autofree char *fa = g_build_filename(native, "flows.csv", NULL);
  g_autofree char *fb = g_build_filename(ns3, "flows.csv", NULL);
  double ma = mean_fct(fa), mb = mean_fct(fb);
  fprintf(stderr, "dctcp-dumbbell mean FCT: native %.1f us, ns-3 %.1f us (%+.2f%%)\n", ma * 1e-6,
          mb * 1e-6, (mb - ma) / ma * 100);
  ck_assert_msg(fabs(mb - ma) / ma < 0.05, "mean FCT native %.0f vs ns-3 %.0f", ma, mb);
  /* --ns3-marking dequeue: the C hook queue disc marks at dequeue like the native
   * engine; also within 5%, and not the RED run (the marking point changed) */
  g_autofree char *deq = g_build_filename(tmp, "dequeue", NULL);
  const char *d[] = {"run",      scenario, "--out",         deq,       "--quiet",
                     "--engine", "ns3",    "--ns3-marking", "dequeue", NULL};
  ck_assert_int_eq(wh_test_whsim(d, NULL, NULL), 0);
  g_autofree char *fd = g_build_filename(deq, "flows.csv", NULL);
  double md = mean_fct(fd);
  fprintf(stderr,
          "dctcp-dumbbell mean FCT: native %.1f us, ns-3 dequeue marking %.1f us (%+.2f%%)\n",
          ma * 1e-6, md * 1e-6, (md - ma) / ma * 100);
  ck_assert_msg(fabs(md - ma) / ma < 0.05, "mean FCT native %.0f vs ns-3 dequeue %.0f", ma, md);
  /* the marks moved: the hook marked packets at dequeue, where the RED run marked
   * none there */
  guint64 red_marks = summary_uint(ns3, "ns3_hook_marks"),
          hook_marks = summary_uint(deq, "ns3_hook_marks");
  fprintf(stderr, "hook marks: %" G_GUINT64_FORMAT " with RED, %" G_GUINT64_FORMAT " at dequeue\n",
          red_marks, hook_marks);
  ck_assert_uint_eq(red_marks, 0);
  ck_assert_uint_gt(hook_marks, 0);
  /* refused with exit status 2: a DCQCN scenario, an unknown marking */
  g_autofree char *dcqcn = wh_test_source_path("scenarios/dumbbell-dcqcn.xml");
  const char *c[] = {"run", dcqcn, "--out", ns3, "--engine", "ns3", NULL};
  g_autofree char *err = NULL;
  ck_assert_int_eq(wh_test_whsim(c, NULL, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "cc=\"dctcp\""));
  const char *bad[] = {"run",      scenario, "--out",         deq,     "--quiet",
                       "--engine", "ns3",    "--ns3-marking", "codel", NULL};
  g_autofree char *err2 = NULL;
  ck_assert_int_eq(wh_test_whsim(bad, NULL, &err2), 2);
  ck_assert_ptr_nonnull(strstr(err2, "--ns3-marking codel"));
}
END_TEST

static char *without_wall(const char *dir, const char *file)
{
  g_autofree char *path = g_build_filename(dir, file, NULL);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  return wh_test_strip_wall(text);
}

/* On the validation scenarios, ns-3 on the project's C heap scheduler gives the
 * results of ns-3 on its MapScheduler, bit for bit (events included). */
START_TEST(test_c_heap_scheduler_on_validation_scenarios)
{
  static const char *files[] = {"validation/ns3/incast-8to1.xml", "validation/ns3/dumbbell-2.xml"};
  g_autofree char *scenario = wh_test_source_path(files[_i]);
  g_autofree char *tmp = g_dir_make_tmp("whsim-ns3s-XXXXXX", NULL);
  g_autofree char *map = g_build_filename(tmp, "map", NULL);
  g_autofree char *heap = g_build_filename(tmp, "heap", NULL);
  const char *a[] = {"run", scenario, "--out", map, "--quiet", "--engine", "ns3", NULL};
  const char *b[] = {"run",      scenario, "--out",           heap,   "--quiet",
                     "--engine", "ns3",    "--ns3-scheduler", "heap", NULL};
  ck_assert_int_eq(wh_test_whsim(a, NULL, NULL), 0);
  ck_assert_int_eq(wh_test_whsim(b, NULL, NULL), 0);
  g_autofree char *fa = without_wall(map, "flows.csv"), *fb = without_wall(heap, "flows.csv");
  g_autofree char *sa = without_wall(map, "summary.json"), *sb = without_wall(heap, "summary.json");
  ck_assert_str_eq(fa, fb);
  ck_assert_str_eq(sa, sb);
}
END_TEST

Suite *wh_ns3_suite(void)
{
  Suite *s = suite_create("ns3");
  TCase *tc = tcase_create("c-api");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_udp_closed_form);
  tcase_add_test(tc, test_tcp_one_segment);
  tcase_add_test(tc, test_dctcp_long_flow);
  tcase_add_test(tc, test_api_checks);
  tcase_add_loop_test(tc, test_direct_use_refused, WH_NS3_DIRECT_NONE,
                      WH_NS3_DIRECT_RESOLUTION + 1);
  tcase_add_test(tc, test_whsim_engine_ns3);
  tcase_add_loop_test(tc, test_c_heap_scheduler_on_validation_scenarios, 0, 2);
  suite_add_tcase(s, tc);
  TCase *hook = tcase_create("hook-queue-disc");
  tcase_set_timeout(hook, 120);
  tcase_add_test(hook, test_hook_step_marking);
  tcase_add_test(hook, test_hook_drops);
  tcase_add_test(hook, test_hook_queue_limit);
  suite_add_tcase(s, hook);
  return s;
}
