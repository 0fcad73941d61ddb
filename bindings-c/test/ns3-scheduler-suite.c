/* Tests of ns3::WhCScheduler (wh-ns3-scheduler.h): one dumbbell scenario (two DCTCP
 * flows through a RED/ECN bottleneck, a UDP stream the other way, ~88k events) runs in
 * three forked children, one per event list: ns-3's own MapScheduler, the project's
 * 4-ary heap and its calendar queue. Each child sends its flow times, event count, link
 * traversals and scheduler counts through a pipe; the parent asserts the runs are
 * bit-identical and that the C schedulers really carried every event (pops == events
 * executed, inserts == pops + removes + pending). The conformance check drives both C
 * classes and a deliberately wrong one (a stack) against MapScheduler with removals,
 * which the scenario never does; the API checks run one small simulation. About 2 s
 * in all, the three children in parallel. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "test-util.h"
#include "wh-ns3-scheduler.h"
#include "wh-ns3.h"

#define RATE 10000000000ULL
#define NFLOWS 3

typedef struct {
  int rc;   /* first failing wh_ns3_* call's code, or WH_NS3_OK */
  int step; /* which call failed */
  int flow_rc[NFLOWS];
  uint64_t start[NFLOWS], finish[NFLOWS];
  WhNs3Stats stats;
  int counts_rc, counts_end_rc;
  WhNs3SchedulerCounts counts;     /* after the run */
  WhNs3SchedulerCounts counts_end; /* after wh_ns3_sim_free drained the leftovers */
} RunResult;

#define TRY(r, n, call)                                                                            \
  do {                                                                                             \
    int rc_ = (call);                                                                              \
    if (rc_ != WH_NS3_OK) {                                                                        \
      (r)->rc = rc_;                                                                               \
      (r)->step = (n);                                                                             \
      return;                                                                                      \
    }                                                                                              \
  } while (0)

/* Senders 0, 1 -> switch 2 -> (bottleneck, RED/ECN K = 20) -> switch 3 -> receivers
 * 4, 5; 2 MB DCTCP 0 -> 4 and 1 -> 5 (the second 20 us later), 1 MB UDP at 2 Gb/s
 * 5 -> 1 against the ACKs. `klass` NULL: ns-3's default scheduler. */
static void run_dumbbell(const WhSchedulerClass *klass, RunResult *r)
{
  WhNs3TcpConfig tcp = {.segment_size = 1000,
                        .initial_cwnd = 10,
                        .socket_buffer = 1 << 20,
                        .delack_count = 1,
                        .min_rto_ps = 200000000000ULL,
                        .sack = 0,
                        .timestamps = 0};
  WhNs3Sim *sim = NULL;
  TRY(r, 1, wh_ns3_sim_new(&tcp, &sim));
  if (klass) /* early, before any node: the events scheduled later go straight in */
    TRY(r, 2, wh_ns3_use_c_scheduler(klass));
  TRY(r, 3, wh_ns3_add_nodes(sim, 6, NULL));
  WhNs3QueueConfig edge = {.kind = WH_NS3_QUEUE_FIFO, .limit_packets = 1000};
  WhNs3QueueConfig red = {
      .kind = WH_NS3_QUEUE_RED_ECN, .limit_packets = 1000, .ecn_threshold_pkts = 20};
  TRY(r, 4, wh_ns3_add_link(sim, 0, 2, RATE, 1000000, &edge));
  TRY(r, 5, wh_ns3_add_link(sim, 1, 2, RATE, 1000000, &edge));
  TRY(r, 6, wh_ns3_add_link(sim, 2, 3, RATE, 4000000, &red));
  TRY(r, 7, wh_ns3_add_link(sim, 3, 4, RATE, 1000000, &edge));
  TRY(r, 8, wh_ns3_add_link(sim, 3, 5, RATE, 1000000, &edge));
  TRY(r, 9, wh_ns3_finalize(sim));
  TRY(r, 10, wh_ns3_add_tcp_flow(sim, 0, 4, 2000000, 0, WH_NS3_TCP_DCTCP, NULL));
  TRY(r, 11, wh_ns3_add_tcp_flow(sim, 1, 5, 2000000, 20000000, WH_NS3_TCP_DCTCP, NULL));
  TRY(r, 12, wh_ns3_add_udp_flow(sim, 5, 1, 1000000, 10000000, 2000000000ULL, 1000, NULL));
  TRY(r, 13, wh_ns3_run(sim, 0));
  for (uint32_t f = 0; f < NFLOWS; f++)
    r->flow_rc[f] = wh_ns3_flow_times(sim, f, &r->start[f], &r->finish[f]);
  TRY(r, 14, wh_ns3_stats(sim, &r->stats));
  r->counts_rc = wh_ns3_c_scheduler_counts(&r->counts);
  wh_ns3_sim_free(sim);
  r->counts_end_rc = wh_ns3_c_scheduler_counts(&r->counts_end);
}

static void run_child(const void *klass, void *out)
{
  run_dumbbell(klass, out);
}

static WhTestChild spawn(const WhSchedulerClass *klass)
{
  return wh_test_fork(run_child, klass, sizeof(RunResult));
}

static void collect(WhTestChild c, const char *name, RunResult *r)
{
  wh_test_join(c, name, r);
  ck_assert_msg(r->rc == WH_NS3_OK, "%s child: step %d: %s", name, r->step, wh_ns3_strerror(r->rc));
}

static void same_run(const char *name, const RunResult *a, const RunResult *ref)
{
  for (int f = 0; f < NFLOWS; f++) {
    ck_assert_msg(a->flow_rc[f] == ref->flow_rc[f], "%s flow %d rc", name, f);
    ck_assert_msg(a->start[f] == ref->start[f], "%s flow %d start", name, f);
    ck_assert_msg(a->finish[f] == ref->finish[f], "%s flow %d: finish %llu ps vs %llu ps", name, f,
                  (unsigned long long)a->finish[f], (unsigned long long)ref->finish[f]);
  }
  ck_assert_msg(a->stats.events == ref->stats.events, "%s: %llu events vs %llu", name,
                (unsigned long long)a->stats.events, (unsigned long long)ref->stats.events);
  ck_assert_uint_eq(a->stats.link_traversals, ref->stats.link_traversals);
  ck_assert_uint_eq(a->stats.end_ps, ref->stats.end_ps);
}

static void carried_everything(const char *name, const RunResult *r)
{
  const WhNs3SchedulerCounts *c = &r->counts, *e = &r->counts_end;
  fprintf(stderr,
          "ns-3 on %s: %llu events; inserts %llu, pops %llu, removes %llu, peeks %llu, "
          "max %llu, pending %llu at the end\n",
          name, (unsigned long long)r->stats.events, (unsigned long long)c->inserts,
          (unsigned long long)c->pops, (unsigned long long)c->removes, (unsigned long long)c->peeks,
          (unsigned long long)c->max_size, (unsigned long long)c->pending);
  ck_assert_int_eq(r->counts_rc, WH_NS3_OK);
  ck_assert_uint_gt(c->inserts, 0);
  ck_assert_uint_gt(c->max_size, 0);
  /* every event ns-3 executed was popped from the C scheduler, and nothing else was */
  ck_assert_uint_eq(c->pops, r->stats.events);
  ck_assert_uint_eq(c->inserts, c->pops + c->removes + c->pending);
  ck_assert_uint_le(c->max_size, c->inserts);
  /* the run stops at the last flow's end with events pending (mostly cancelled TCP
   * timers, which ns-3 leaves in the list); teardown pops them */
  ck_assert_uint_gt(c->pending, 0);
  ck_assert_int_eq(r->counts_end_rc, WH_NS3_OK);
  ck_assert_uint_eq(e->pending, 0);
  ck_assert_uint_eq(e->inserts, c->inserts);
  ck_assert_uint_eq(e->pops, c->pops + c->pending);
  ck_assert_uint_eq(e->inserts, e->pops + e->removes);
}

START_TEST(test_c_schedulers_match_map_scheduler)
{
  WhTestChild map = spawn(NULL);
  WhTestChild heap = spawn(&wh_heap_scheduler_class);
  WhTestChild cal = spawn(&wh_calendar_scheduler_class);
  RunResult ref, rh, rc;
  collect(map, "MapScheduler", &ref);
  collect(heap, "heap", &rh);
  collect(cal, "calendar", &rc);

  for (int f = 0; f < NFLOWS; f++) {
    ck_assert_msg(ref.flow_rc[f] == WH_NS3_OK, "flow %d did not complete", f);
    fprintf(stderr, "ns-3 dumbbell flow %d: %.3f us\n", f, (ref.finish[f] - ref.start[f]) * 1e-6);
  }
  ck_assert_uint_gt(ref.stats.link_traversals, 2000);
  ck_assert_int_eq(ref.counts_rc, WH_NS3_ESTATE); /* the reference never saw a C scheduler */
  same_run("heap", &rh, &ref);
  same_run("calendar", &rc, &ref);
  carried_everything("heap", &rh);
  carried_everything("calendar", &rc);
}
END_TEST

/* A deliberately wrong scheduler: a stack (LIFO), for the conformance check to catch. */
typedef struct {
  WhScheduler parent;
  WhEvent *top;
  size_t n;
} Stack;

static const WhSchedulerClass stack_class;

static WhScheduler *stack_create(void)
{
  Stack *s = g_new0(Stack, 1);
  s->parent.klass = &stack_class;
  return &s->parent;
}

static void stack_destroy(WhScheduler *self)
{
  g_free(self);
}

static void stack_insert(WhScheduler *self, WhEvent *ev)
{
  Stack *s = (Stack *)self;
  ev->prev = NULL;
  ev->next = s->top;
  if (s->top)
    s->top->prev = ev;
  s->top = ev;
  s->n++;
}

static WhEvent *stack_peek(WhScheduler *self)
{
  return ((Stack *)self)->top;
}

static void stack_remove(WhScheduler *self, WhEvent *ev)
{
  Stack *s = (Stack *)self;
  if (ev->prev)
    ev->prev->next = ev->next;
  else
    s->top = ev->next;
  if (ev->next)
    ev->next->prev = ev->prev;
  s->n--;
}

static WhEvent *stack_pop(WhScheduler *self)
{
  WhEvent *ev = ((Stack *)self)->top;
  if (ev)
    stack_remove(self, ev);
  return ev;
}

static size_t stack_size(const WhScheduler *self)
{
  return ((const Stack *)self)->n;
}

static const WhSchedulerClass stack_class = {
    .name = "stack",
    .type_name = "test::Stack",
    .help = "LIFO: wrong on purpose",
    .create = stack_create,
    .destroy = stack_destroy,
    .insert = stack_insert,
    .peek = stack_peek,
    .pop = stack_pop,
    .remove = stack_remove,
    .size = stack_size,
};

START_TEST(test_conformance_check)
{
  /* heap and calendar agree with MapScheduler on 400k random operations (inserts with
   * many ties, pops, removals by handle: the removal path the scenario does not take) */
  for (uint64_t seed = 1; seed <= 2; seed++) {
    ck_assert_int_eq(wh_ns3_c_scheduler_check(&wh_heap_scheduler_class, 200000, seed), WH_NS3_OK);
    ck_assert_int_eq(wh_ns3_c_scheduler_check(&wh_calendar_scheduler_class, 200000, seed),
                     WH_NS3_OK);
  }
  int bad = wh_ns3_c_scheduler_check(&stack_class, 1000, 1);
  ck_assert_int_gt(bad, 0);
  ck_assert_int_le(bad, 1000);
  ck_assert_int_eq(wh_ns3_c_scheduler_check(NULL, 10, 1), WH_NS3_EINVAL);
  WhNs3SchedulerCounts c; /* the check does not select a scheduler */
  ck_assert_int_eq(wh_ns3_c_scheduler_counts(&c), WH_NS3_ESTATE);
}
END_TEST

START_TEST(test_api_checks)
{
  WhNs3SchedulerCounts c;
  ck_assert_int_eq(wh_ns3_c_scheduler_counts(NULL), WH_NS3_EINVAL);
  ck_assert_int_eq(wh_ns3_c_scheduler_counts(&c), WH_NS3_ESTATE);
  /* before wh_ns3_sim_new */
  ck_assert_int_eq(wh_ns3_use_c_scheduler(&wh_heap_scheduler_class), WH_NS3_ESTATE);
  WhNs3Sim *sim = NULL;
  ck_assert_int_eq(wh_ns3_sim_new(NULL, &sim), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_use_c_scheduler(NULL), WH_NS3_EINVAL);
  WhSchedulerClass partial = wh_heap_scheduler_class;
  partial.remove = NULL;
  ck_assert_int_eq(wh_ns3_use_c_scheduler(&partial), WH_NS3_EINVAL);
  ck_assert_int_eq(wh_ns3_add_nodes(sim, 2, NULL), WH_NS3_OK);
  WhNs3QueueConfig q = {.kind = WH_NS3_QUEUE_FIFO, .limit_packets = 100};
  ck_assert_int_eq(wh_ns3_add_link(sim, 0, 1, RATE, 1000000, &q), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_finalize(sim), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_add_udp_flow(sim, 0, 1, 10000, 0, RATE / 2, 1000, NULL), WH_NS3_OK);
  /* late (after the flows), so Simulator::SetScheduler moves the pending events over */
  ck_assert_int_eq(wh_ns3_use_c_scheduler(&wh_heap_scheduler_class), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_c_scheduler_counts(&c), WH_NS3_OK);
  ck_assert_uint_gt(c.inserts, 0); /* the moved events */
  ck_assert_uint_eq(c.pending, c.inserts);
  ck_assert_int_eq(wh_ns3_run(sim, 0), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_flow_times(sim, 0, NULL, NULL), WH_NS3_OK);
  WhNs3Stats st;
  ck_assert_int_eq(wh_ns3_stats(sim, &st), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_c_scheduler_counts(&c), WH_NS3_OK);
  ck_assert_uint_eq(c.pops, st.events);
  ck_assert_uint_eq(c.inserts, c.pops + c.removes + c.pending);
  /* after the run */
  ck_assert_int_eq(wh_ns3_use_c_scheduler(&wh_calendar_scheduler_class), WH_NS3_ESTATE);
  wh_ns3_sim_free(sim);
}
END_TEST

Suite *wh_ns3_scheduler_suite(void)
{
  Suite *s = suite_create("ns3-scheduler");
  TCase *tc = tcase_create("c-scheduler");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_c_schedulers_match_map_scheduler);
  tcase_add_test(tc, test_conformance_check);
  tcase_add_test(tc, test_api_checks);
  suite_add_tcase(s, tc);
  return s;
}
