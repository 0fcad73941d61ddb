/* Network and traffic-control tests: queue-disc hooks see every packet on switch
 * ports and host NICs and change nothing (a run with an observer equals a run
 * without, events included); PFC frames cross the link and every PAUSE is undone;
 * the shared buffer and PFC ingress counters return to zero; dynamic PFC thresholds
 * keep an incast lossless that static ones do not; ECMP spreads flows
 * over equal-cost paths with shortest routes. */
#include <check.h>
#include <string.h>

#include "test-util.h"

typedef struct {
  uint64_t enq_switch, enq_nic, deq, drops, marks;
  const WhNet *net;
} Counts;

static void on_enqueue(void *data, const WhQueueDisc *qd, const WhPacket *pkt)
{
  Counts *c = data;
  (void)pkt;
  if (c->net->node[c->net->port[qd->port].node].is_switch)
    c->enq_switch++;
  else
    c->enq_nic++;
}

static void on_dequeue(void *data, const WhQueueDisc *qd, const WhPacket *pkt)
{
  (void)qd;
  (void)pkt;
  ((Counts *)data)->deq++;
}

static void on_drop(void *data, const WhQueueDisc *qd, const WhPacket *pkt)
{
  (void)qd;
  (void)pkt;
  ((Counts *)data)->drops++;
}

static void on_mark(void *data, const WhQueueDisc *qd, const WhPacket *pkt)
{
  (void)qd;
  ck_assert(pkt->ecn);
  ((Counts *)data)->marks++;
}

static const WhQueueHooks counting_hooks = {on_enqueue, on_dequeue, on_drop, on_mark};

static WhRun *build(const char *file, const WhRunOptions *opts)
{
  g_autofree char *path = wh_test_source_path(file);
  g_autoptr(GError) err = NULL;
  WhScenario *sc = wh_scenario_load(path, &err);
  ck_assert_msg(sc != NULL, "%s", err ? err->message : "");
  WhRun *run = wh_run_new(sc, opts, &err);
  ck_assert_msg(run != NULL, "%s", err ? err->message : "");
  wh_run_take_scenario(run, sc);
  return run;
}

static void check_hooks(const char *file, const WhRunOptions *opts)
{
  g_autoptr(WhRun) plain = build(file, opts);
  wh_run_execute(plain);
  g_autoptr(WhRun) observed = build(file, opts);
  Counts c = {.net = observed->net};
  wh_net_add_hooks(observed->net, &counting_hooks, &c);
  wh_run_execute(observed);
  wh_test_assert_clean_end(observed);
  g_autofree char *a = wh_run_summary_json(plain, FALSE);
  g_autofree char *b = wh_run_summary_json(observed, FALSE);
  ck_assert_str_eq(a, b);
  for (uint32_t i = 0; i < plain->tp->n_flows; i++)
    ck_assert_uint_eq(wh_transport_flow(plain->tp, i)->finish,
                      wh_transport_flow(observed->tp, i)->finish);
  ck_assert_uint_gt(c.enq_switch, 0);
  ck_assert_uint_gt(c.enq_nic, 0);
  /* every queued or passed-through packet left its queue, none is stuck */
  ck_assert_uint_eq(c.enq_switch + c.enq_nic, c.deq);
  ck_assert_uint_eq(c.drops, observed->net->c.drops);
  ck_assert_uint_eq(c.marks, wh_net_ecn_marks(observed->net));
  /* every packet started at a NIC: delivered or dropped, each exactly once */
  ck_assert_uint_eq(c.enq_nic, observed->net->c.packets_delivered + observed->net->c.drops);
}

START_TEST(test_hooks_observe_without_changing)
{
  check_hooks("tests/scenarios/fattree-k4-mixed.xml", NULL);
}
END_TEST

START_TEST(test_hooks_see_drops)
{
  char *sets[] = {"wh::Switch::PfcEnabled=false", "wh::Switch::BufferSize=300KB", NULL};
  WhRunOptions opts = {.sets = sets};
  check_hooks("scenarios/incast-16to1.xml", &opts);
}
END_TEST

static void check_buffers_empty(const WhNet *net)
{
  for (uint32_t i = 0; i < net->n_nodes; i++)
    ck_assert_uint_eq(net->buffer_used[i], 0);
  for (uint32_t p = 0; p < net->n_ports; p++) {
    const WhPort *port = &net->port[p];
    ck_assert_uint_eq(port->qd.total_bytes, 0);
    ck_assert_uint_eq(port->paused, 0);
    ck_assert_uint_eq(port->pfc_state, 0);
    for (int q = 0; q < WH_NPRIO; q++)
      ck_assert_uint_eq(port->ingress_bytes[q], 0);
  }
}

START_TEST(test_pfc_pause_and_resume)
{
  g_autoptr(WhRun) run = wh_test_run_file("scenarios/incast-16to1.xml", NULL);
  ck_assert_uint_gt(run->net->c.pfc_pauses, 0);
  ck_assert_uint_eq(run->net->c.pfc_pauses, run->net->c.pfc_resumes);
  check_buffers_empty(run->net);
  /* PFC frames are not link traversals: traversals = data + control packets x hops */
  ck_assert_uint_eq(run->net->c.link_traversals, run->net->c.packets_delivered * 2);
}
END_TEST

/* Dynamic PFC's books, checked every microsecond: each switch's shared pool holds the
 * shared bytes of its ports (ingress less headroom) and stays within its size, each
 * port's headroom within its own, and the buffer within the switch's. */
static void check_dynamic_pfc(WhSim *sim, void *ctx, uint64_t arg)
{
  WhNet *net = ctx;
  (void)arg;
  for (uint32_t i = 0; i < net->n_nodes; i++) {
    const WhNode *n = &net->node[i];
    if (!n->is_switch)
      continue;
    const WhNodePfc *sw = &net->pfc_node[i];
    uint64_t shared = 0;
    for (uint32_t k = 0; k < n->nports; k++) {
      /* the books of what arrives at the switch's port are on the link's other end */
      const WhPort *p = &net->port[net->port[n->ports[k]].peer];
      const WhPortPfc *pp = &net->pfc_port[p->id];
      for (int q = 0; q < WH_NPRIO; q++) {
        ck_assert_uint_le(pp->hdrm_bytes[q], p->ingress_bytes[q]);
        ck_assert_uint_le(pp->hdrm_bytes[q], pp->headroom);
        shared += p->ingress_bytes[q] - pp->hdrm_bytes[q];
      }
      ck_assert_uint_gt(pp->headroom, 0);
    }
    ck_assert_uint_eq(shared, sw->shared_used);
    ck_assert_uint_le(sw->shared_used, sw->shared_cap);
    ck_assert_uint_le(net->buffer_used[i], net->p.buffer_bytes);
  }
  if (net->pkt_live > 0 || sim->now < 20 * WH_US)
    wh_sim_schedule_at(sim, sim->now + WH_US, check_dynamic_pfc, net, 0, 0);
}

/* A 16:1 incast into a 1 MB switch buffer: PAUSE at a static 200 KB per port lets 16
 * ports overflow it, where thresholds that shrink as the shared pool fills, with
 * headroom per port for what its link still brings, keep it lossless. */
START_TEST(test_pfc_dynamic_thresholds)
{
  char *fixed[] = {"wh::Switch::BufferSize=1MB", NULL};
  WhRunOptions opts = {.sets = fixed};
  g_autoptr(WhRun) lossy = wh_test_run_file("scenarios/incast-16to1.xml", &opts);
  ck_assert_uint_gt(lossy->net->c.drops, 0);

  char *dynamic[] = {"wh::Switch::BufferSize=1MB", "wh::Switch::PfcThreshold=dynamic", NULL};
  opts.sets = dynamic;
  g_autoptr(WhRun) run = build("scenarios/incast-16to1.xml", &opts);
  WhNet *net = run->net;
  uint32_t swi = net->port[net->port[wh_net_host_port(net, 0)].peer].node;
  const WhNode *sw = &net->node[swi];
  const WhNodePfc *pool = &net->pfc_node[swi];
  /* 17 ports of 100 Gb/s, 1 us each way: 25,000 B on the wire, 3 frames of 1,062 B and
   * the PAUSE frame of 64 B each */
  ck_assert_uint_eq(sw->nports, 17);
  ck_assert_uint_eq(pool->shared_cap, 1000000 - 17 * (25000 + 3 * 1062 + 64));
  wh_sim_schedule_at(run->sim, 0, check_dynamic_pfc, net, 0, 0);
  wh_run_execute(run);
  wh_test_assert_clean_end(run);
  ck_assert_uint_eq(net->c.drops, 0);
  ck_assert_uint_gt(net->c.pfc_pauses, 0);
  ck_assert_uint_eq(net->c.pfc_pauses, net->c.pfc_resumes);
  check_buffers_empty(net);
  for (uint32_t p = 0; p < net->n_ports; p++)
    for (int q = 0; q < WH_NPRIO; q++)
      ck_assert_uint_eq(net->pfc_port[p].hdrm_bytes[q], 0);
  ck_assert_uint_eq(pool->shared_used, 0);
  for (uint32_t i = 0; i < run->tp->n_flows; i++)
    ck_assert_uint_gt(wh_transport_flow(run->tp, i)->finish, 0);
}
END_TEST

/* Headroom that leaves nothing to share is refused before the run. */
START_TEST(test_pfc_dynamic_needs_shared_buffer)
{
  g_autofree char *path = wh_test_source_path("scenarios/incast-16to1.xml");
  g_autoptr(GError) err = NULL;
  g_autoptr(WhScenario) sc = wh_scenario_load(path, &err);
  ck_assert_msg(sc != NULL, "%s", err ? err->message : "");
  char *sets[] = {"wh::Switch::BufferSize=400KB", "wh::Switch::PfcThreshold=dynamic", NULL};
  WhRunOptions opts = {.sets = sets};
  WhRun *run = wh_run_new(sc, &opts, &err);
  ck_assert(run == NULL);
  ck_assert_msg(strstr(err->message, "PfcThreshold=dynamic") &&
                    strstr(err->message, "BufferSize") && strstr(err->message, "headroom"),
                "%s", err->message);
  /* a share above the whole free buffer is refused with the parameter */
  g_clear_error(&err);
  char *alpha[] = {"wh::Switch::PfcThreshold=dynamic", "wh::Switch::PfcAlpha=2", NULL};
  opts.sets = alpha;
  ck_assert(wh_run_new(sc, &opts, &err) == NULL);
  ck_assert_msg(strstr(err->message, "PfcAlpha"), "%s", err->message);
}
END_TEST

START_TEST(test_ecmp_spreads_and_routes_are_shortest)
{
  g_autoptr(WhScenario) sc = wh_scenario_new("ecmp", "wh::FatTree");
  wh_scenario_add_set(sc, "wh::FatTree::K", "4");
  /* hosts 0..3 in pod 0, 12..15 in pod 3: 16 inter-pod flows, 4 core switches */
  for (uint32_t s = 0; s < 4; s++)
    for (uint32_t d = 12; d < 16; d++)
      wh_scenario_add_flow(sc, s, d, 100000, 0);
  wh_scenario_add_flow(sc, 0, 1, 100000, 0); /* same edge switch */
  wh_scenario_add_flow(sc, 0, 2, 100000, 0); /* same pod, other edge */
  g_autoptr(WhRun) run = wh_test_run(sc, NULL);
  wh_test_assert_clean_end(run);
  for (uint32_t i = 0; i < 16; i++)
    ck_assert_uint_eq(wh_transport_flow(run->tp, i)->fwd_hops, 6);
  ck_assert_uint_eq(wh_transport_flow(run->tp, 16)->fwd_hops, 2);
  ck_assert_uint_eq(wh_transport_flow(run->tp, 17)->fwd_hops, 4);
  /* core switches are the last (k/2)^2 = 4 switch nodes; count those that carried data */
  const WhNet *net = run->net;
  unsigned used = 0;
  for (uint32_t n = net->n_nodes - 4; n < net->n_nodes; n++) {
    uint64_t bytes = 0;
    for (uint32_t k = 0; k < net->node[n].nports; k++)
      bytes += net->port[net->node[n].ports[k]].tx_bytes;
    used += bytes > 0;
  }
  ck_assert_uint_ge(used, 3);
  check_buffers_empty(net);
}
END_TEST

Suite *wh_network_suite(void)
{
  Suite *s = suite_create("network");
  TCase *tc = tcase_create("hooks");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_hooks_observe_without_changing);
  tcase_add_test(tc, test_hooks_see_drops);
  suite_add_tcase(s, tc);
  tc = tcase_create("switching");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_pfc_pause_and_resume);
  tcase_add_test(tc, test_pfc_dynamic_thresholds);
  tcase_add_test(tc, test_pfc_dynamic_needs_shared_buffer);
  tcase_add_test(tc, test_ecmp_spreads_and_routes_are_shortest);
  suite_add_tcase(s, tc);
  return s;
}
