/* Queue-disc tests on the queue disc alone: strict priority and blocked priorities,
 * byte and packet accounting, RED marking (never below Kmin, always above Kmax, the
 * linear probability in between, data packets only), and the hooks. */
#include <check.h>
#include <math.h>

#include "queue-disc.h"

static WhPacket pkts[4096];

static WhPacket *mk(unsigned i, uint8_t prio, uint32_t size, uint8_t type)
{
  WhPacket *p = &pkts[i];
  *p = (WhPacket){.prio = prio, .size = size, .type = type, .seq = i};
  return p;
}

START_TEST(test_priority_and_accounting)
{
  WhQueueDisc qd;
  wh_queue_disc_init(&qd, &wh_fifo_queue_disc_class, 7);
  wh_queue_disc_enqueue(&qd, mk(0, 3, 1000, WH_PKT_DATA));
  wh_queue_disc_enqueue(&qd, mk(1, 3, 500, WH_PKT_DATA));
  wh_queue_disc_enqueue(&qd, mk(2, 0, 64, WH_PKT_ACK));
  wh_queue_disc_enqueue(&qd, mk(3, 5, 200, WH_PKT_DATA));
  ck_assert_uint_eq(qd.total_bytes, 1764);
  ck_assert_uint_eq(wh_queue_disc_band(&qd, 3)->bytes, 1500);
  ck_assert_uint_eq(wh_queue_disc_packets(&qd), 4);
  ck_assert_ptr_eq(wh_queue_disc_dequeue(&qd, 0), &pkts[2]); /* priority 0 first */
  /* priority 3 paused: priority 5 goes next */
  ck_assert_ptr_eq(wh_queue_disc_dequeue(&qd, 1u << 3), &pkts[3]);
  ck_assert_ptr_null(wh_queue_disc_dequeue(&qd, 1u << 3));
  ck_assert_ptr_eq(wh_queue_disc_dequeue(&qd, 0), &pkts[0]); /* FIFO within a priority */
  ck_assert_ptr_eq(wh_queue_disc_dequeue(&qd, 0), &pkts[1]);
  ck_assert_ptr_null(wh_queue_disc_dequeue(&qd, 0));
  ck_assert_uint_eq(qd.total_bytes, 0);
  ck_assert_uint_eq(qd.nonempty, 0);
  ck_assert_uint_eq(qd.marks, 0);
}
END_TEST

/* Fills the queue to `backlog` bytes of 1000-byte data packets, then dequeues one
 * and re-enqueues one many times at that level; returns the marked fraction. */
static double mark_fraction(uint64_t backlog, uint8_t type)
{
  WhQueueDisc qd;
  wh_queue_disc_init(&qd, &wh_red_queue_disc_class, 1);
  qd.kmin = 100000;
  qd.kmax = 300000;
  qd.pmax = 0.2;
  wh_rng_init(&qd.rng, 1, 2);
  unsigned n = (unsigned)(backlog / 1000) + 1, next = 0;
  for (unsigned i = 0; i < n; i++)
    wh_queue_disc_enqueue(&qd, mk(next++ % 4096, 3, 1000, type));
  unsigned marked = 0, trials = 20000;
  for (unsigned t = 0; t < trials; t++) {
    WhPacket *p = wh_queue_disc_dequeue(&qd, 0);
    marked += p->ecn;
    p->ecn = 0;
    wh_queue_disc_enqueue(&qd, p);
  }
  ck_assert_uint_eq(qd.marks, marked);
  return (double)marked / trials;
}

START_TEST(test_red_marking)
{
  ck_assert_double_eq(mark_fraction(50000, WH_PKT_DATA), 0.0);
  ck_assert_double_eq(mark_fraction(400000, WH_PKT_DATA), 1.0);
  /* halfway between Kmin and Kmax (after removal): p = Pmax / 2 = 0.1 */
  double f = mark_fraction(200000, WH_PKT_DATA);
  ck_assert_msg(fabs(f - 0.1) < 0.01, "marked fraction %.4f", f);
  ck_assert_double_eq(mark_fraction(400000, WH_PKT_ACK), 0.0);
}
END_TEST

typedef struct {
  unsigned enq, deq, drop, mark;
} Seen;

static void h_enq(void *d, const WhQueueDisc *q, const WhPacket *p)
{
  (void)q;
  (void)p;
  ((Seen *)d)->enq++;
}
static void h_deq(void *d, const WhQueueDisc *q, const WhPacket *p)
{
  (void)q;
  (void)p;
  ((Seen *)d)->deq++;
}
static void h_drop(void *d, const WhQueueDisc *q, const WhPacket *p)
{
  (void)q;
  (void)p;
  ((Seen *)d)->drop++;
}
static void h_mark(void *d, const WhQueueDisc *q, const WhPacket *p)
{
  (void)q;
  (void)p;
  ((Seen *)d)->mark++;
}

START_TEST(test_hooks)
{
  static const WhQueueHooks hooks = {h_enq, h_deq, h_drop, h_mark};
  Seen seen = {0};
  WhQueueDisc qd;
  wh_queue_disc_init(&qd, &wh_red_queue_disc_class, 1);
  qd.kmin = 0;
  qd.kmax = 1;
  wh_queue_disc_set_hooks(&qd, &hooks, &seen);
  wh_queue_disc_enqueue(&qd, mk(0, 3, 1000, WH_PKT_DATA));
  wh_queue_disc_enqueue(&qd, mk(1, 3, 1000, WH_PKT_DATA));
  wh_queue_disc_dequeue(&qd, 0); /* 1000 B left > Kmax: marked */
  wh_queue_disc_dequeue(&qd, 0); /* empty after removal: not marked */
  wh_queue_disc_report_drop(&qd, mk(2, 3, 1000, WH_PKT_DATA));
  wh_queue_disc_report_passthrough(&qd, mk(3, 3, 1000, WH_PKT_DATA));
  ck_assert_uint_eq(seen.enq, 3);
  ck_assert_uint_eq(seen.deq, 3);
  ck_assert_uint_eq(seen.drop, 1);
  ck_assert_uint_eq(seen.mark, 1);
  wh_queue_disc_set_hooks(&qd, NULL, &seen);
  wh_queue_disc_enqueue(&qd, mk(4, 3, 1000, WH_PKT_DATA));
  ck_assert_uint_eq(seen.enq, 3);
}
END_TEST

Suite *wh_traffic_control_suite(void)
{
  Suite *s = suite_create("traffic-control");
  TCase *tc = tcase_create("queue-disc");
  tcase_add_test(tc, test_priority_and_accounting);
  tcase_add_test(tc, test_red_marking);
  tcase_add_test(tc, test_hooks);
  suite_add_tcase(s, tc);
  return s;
}
