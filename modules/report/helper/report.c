/* A run's summary, for the file (summary.json) and for the terminal (the printed report,
 * the warnings, validate's sizes): both are made here from the same numbers, the run's
 * totals (wh_run_totals) and Wormhole's summary (WormholeSummary), so that they cannot
 * disagree. The summary is a json-glib object written by its generator
 * (wh_json_text, core: every JSON file's layout). Costs one pass over the ports
 * (link tiers), the flows (FCT) or the ops (iterations, migration, validate's sizes). */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-text.h"
#include "presets.h"
#include "run-private.h"
#include "units.h"

/* What Wormhole did, for the summary and the report. */
typedef struct {
  WhWormholeMode mode;
  uint32_t partitions;
  uint64_t events_rate, events_idle; /* events steady partitions ran, by the rule found */
  gboolean skips;                    /* the mode fast-forwards (skip, memo) */
  WhWormholeSkipSummary skip;        /* with skips, else zero */
  gboolean patterns;                 /* contention patterns on */
  WhWormholeMemoSummary memo;        /* with patterns, else zero */
} WormholeSummary;

/* Fills `out` for a run with Wormhole. */
static void wormhole_summary(const WhRun *run, WormholeSummary *out)
{
  const WhWormholeParams *wp = wh_wormhole_params(run->wormhole);
  const WhDetector *d = wh_wormhole_detector(run->wormhole);
  WhDetectorStats st;
  wh_detector_stats(d, &st);
  memset(out, 0, sizeof *out);
  out->mode = wp->mode;
  out->partitions = wh_partitions_n_records(wh_detector_partitions(d));
  out->events_rate = st.events[WH_STEADY_RATE];
  out->events_idle = st.events[WH_STEADY_IDLE];
  out->skips = wh_wormhole_mode_skips(wp->mode);
  if (out->skips)
    wh_wormhole_skip_summary(run->wormhole, &out->skip);
  out->patterns = wp->patterns;
  if (out->patterns)
    wh_wormhole_memo_summary(run->wormhole, &out->memo);
}

/* `v` as a JSON integer: every count, byte total and time in ps of a summary is far
 * below G_MAXINT64 (2^63 ps is 106 days of simulated time). */
static void set_u64(JsonObject *o, const char *key, uint64_t v)
{
  json_object_set_int_member(o, key, (gint64)MIN(v, (uint64_t)G_MAXINT64));
}

/* `v` as it was reported, to six decimals. */
static void set_fixed6(JsonObject *o, const char *key, double v)
{
  json_object_set_double_member(o, key, wh_units_round(v, "%.6f"));
}

/* The summary's per-iteration times of a workload run that completed. */
static void add_iterations(JsonObject *o, const WhRun *run)
{
  JsonArray *its = json_array_new(), *comp = json_array_new(), *exp = json_array_new();
  WhTime total = 0;
  for (uint32_t i = 0; i < run->iterations; i++) {
    WhIterationStats st;
    wh_run_iteration_stats(run, i, &st);
    total += st.time;
    json_array_add_int_element(its, (gint64)st.time);
    json_array_add_int_element(comp, (gint64)st.compute);
    json_array_add_int_element(exp, (gint64)st.exposed_comm);
  }
  json_object_set_array_member(o, "iterations", its);
  set_u64(o, "iteration_time_ps", total / run->iterations);
  json_object_set_array_member(o, "compute_ps", comp);
  json_object_set_array_member(o, "exposed_comm_ps", exp);
}

/* The summary's "migration" object (wh::ModelPreset::Migration): every check with its
 * max/mean GPU token load before and after the swaps, the bytes and flows moved, and
 * its time: from the first migration send's start to the last one's end (0 when none
 * moved). Migration ops are the ones named "i<it>/migrate/...". Cost: one pass over
 * the ops. */
static void add_migration(JsonObject *o, const WhRun *run)
{
  GArray *c = run->migration_checks;
  g_autofree WhTime *first = g_new(WhTime, c->len), *last = g_new0(WhTime, c->len);
  for (guint k = 0; k < c->len; k++)
    first[k] = G_MAXUINT64;
  for (uint32_t i = 0; i < wh_workload_n_ops(run->workload); i++) {
    WhOpInfo op;
    wh_workload_op_info(run->workload, i, &op);
    const char *slash = strchr(op.name, '/');
    if (op.kind != WH_OP_SEND || slash == NULL || !g_str_has_prefix(slash, "/migrate/"))
      continue;
    uint32_t it = (uint32_t)g_ascii_strtoull(op.name + 1, NULL, 10);
    for (guint k = 0; k < c->len; k++) {
      if (g_array_index(c, WhMigrationCheck, k).iteration == it) {
        first[k] = MIN(first[k], op.start);
        last[k] = MAX(last[k], op.end);
      }
    }
  }
  JsonArray *list = json_array_new();
  uint64_t bytes = 0, swaps = 0;
  WhTime time = 0;
  for (guint k = 0; k < c->len; k++) {
    const WhMigrationCheck *m = &g_array_index(c, WhMigrationCheck, k);
    WhTime t = last[k] > first[k] && first[k] != G_MAXUINT64 ? last[k] - first[k] : 0;
    time += t;
    bytes += m->bytes;
    swaps += m->swaps;
    JsonObject *x = json_object_new();
    json_object_set_int_member(x, "iteration", m->iteration);
    set_fixed6(x, "imbalance_before", m->imbalance_before);
    set_fixed6(x, "imbalance_after", m->imbalance_after);
    json_object_set_int_member(x, "swaps", m->swaps);
    set_u64(x, "bytes", m->bytes);
    json_object_set_int_member(x, "flows", m->flows);
    set_u64(x, "time_ps", t);
    json_array_add_object_element(list, x);
  }
  JsonObject *mig = json_object_new();
  json_object_set_int_member(mig, "checks", c->len);
  set_u64(mig, "swaps", swaps);
  set_u64(mig, "bytes", bytes);
  set_u64(mig, "time_ps", time);
  json_object_set_array_member(mig, "per_check", list);
  json_object_set_object_member(o, "migration", mig);
}

/* The summary's per-tier link statistics: for each tier present, its directed ports,
 * those that carried a frame, their frames and bytes, mean and largest busy fraction
 * over the ports that carried a frame, PFC pause time and the largest egress queue. */
static void add_link_tiers(JsonObject *o, const WhRun *run)
{
  const WhNet *net = run->net;
  struct TierSum {
    uint32_t ports, active;
    uint64_t frames, bytes, max_queue;
    WhTime busy, busy_max, paused;
  } t[WH_N_TIERS];
  memset(t, 0, sizeof t);
  for (uint32_t i = 0; i < net->n_ports; i++) {
    const WhPort *p = &net->port[i];
    struct TierSum *x = &t[p->tier];
    x->ports++;
    x->active += p->frames > 0;
    x->frames += p->frames;
    x->bytes += p->bytes;
    x->busy += p->st.busy;
    x->busy_max = MAX(x->busy_max, p->st.busy);
    x->paused += wh_net_port_paused_time(net, p);
    x->max_queue = MAX(x->max_queue, p->qd.max_bytes);
  }
  double end = run->sim->now ? (double)run->sim->now : 1.0;
  JsonObject *tiers = json_object_new();
  for (int k = 0; k < WH_N_TIERS; k++) {
    if (t[k].ports == 0)
      continue;
    JsonObject *x = json_object_new();
    json_object_set_int_member(x, "ports", t[k].ports);
    json_object_set_int_member(x, "active_ports", t[k].active);
    set_u64(x, "frames", t[k].frames);
    set_u64(x, "bytes", t[k].bytes);
    set_fixed6(x, "busy_mean", t[k].active ? (double)t[k].busy / t[k].active / end : 0.0);
    set_fixed6(x, "busy_max", (double)t[k].busy_max / end);
    set_u64(x, "pause_ps", t[k].paused);
    set_u64(x, "max_queue_bytes", t[k].max_queue);
    json_object_set_object_member(tiers, wh_net_tier_name((WhLinkTier)k), x);
  }
  json_object_set_object_member(o, "link_tiers", tiers);
}

/* A string member, or null for NULL. */
static void set_string_or_null(JsonObject *o, const char *key, const char *value)
{
  if (value)
    json_object_set_string_member(o, key, value);
  else
    json_object_set_null_member(o, key);
}

/* The Wormhole fields of the summary: mode, what it found and, by mode, what it skipped
 * and the memo's counts. */
static void add_wormhole(JsonObject *o, const WhRun *run)
{
  WormholeSummary w;
  wormhole_summary(run, &w);
  json_object_set_string_member(o, "scheduler", "wormhole");
  json_object_set_string_member(o, "wormhole_inner_scheduler", run->sched->name);
  json_object_set_string_member(o, "wormhole_mode", wh_wormhole_mode_name(w.mode));
  json_object_set_int_member(o, "wormhole_partitions", w.partitions);
  set_u64(o, "wormhole_events_skippable_est", w.events_rate + w.events_idle);
  if (w.skips) {
    set_u64(o, "fast_forwards", w.skip.fast_forwards);
    set_u64(o, "skip_backs", w.skip.skip_backs);
    set_u64(o, "advanced_bytes", w.skip.advanced_bytes);
    set_fixed6(o, "time_steady_fraction", w.skip.time_steady_fraction);
    set_u64(o, "events_skipped_est", w.skip.events_skipped_est);
  }
  if (!w.patterns)
    return;
  const WhWormholeMemoSummary *m = &w.memo;
  const struct {
    const char *key;
    uint64_t v;
  } memo[] = {{"memo_lookups", m->lookups},
              {"memo_hits", m->hits},
              {"memo_hits_from_file", m->hits_from_file},
              {"memo_hits_seen", m->hits_seen},
              {"memo_hits_converged", m->hits_converged},
              {"memo_hits_completed", m->hits_completed},
              {"memo_replays_converged", m->replays_converged},
              {"memo_replays_completed", m->replays_completed},
              {"memo_replays_drained", m->replays_drained},
              {"memo_distinct", m->distinct},
              {"memo_db_bytes", m->db_bytes}};
  for (size_t i = 0; i < G_N_ELEMENTS(memo); i++)
    set_u64(o, memo[i].key, memo[i].v);
  set_string_or_null(o, "memo_file", run->memo_file);
  set_string_or_null(o, "memo_file_status", run->memo_file ? run->memo_status : NULL);
}

/* The summary's counters of the network, the transport and the flows. */
static void add_counters(JsonObject *o, const WhRun *run, const WhRunTotals *t)
{
  const WhTransportCounters *c = &run->tp->c;
  const WhNetCounters *nc = &run->net->c;
  const struct {
    const char *key;
    uint64_t v;
  } fields[] = {{"sim_end_ps", t->sim_end},
                {"events_executed", t->events},
                {"packets_delivered", nc->packets_delivered},
                {"link_traversals", t->link_traversals},
                {"link_bytes", wh_net_link_bytes(run->net)},
                {"pfc_pauses", t->pfc_pauses},
                {"pfc_resumes", nc->pfc_resumes},
                {"ecn_marks", t->ecn_marks},
                {"cnps", t->cnps},
                {"nacks", c->nacks},
                {"timeouts", c->timeouts},
                {"drops", t->drops},
                {"data_bytes_sent", c->data_bytes_sent},
                {"data_bytes_delivered", c->data_bytes_arrived},
                {"data_bytes_dropped", nc->drop_data_payload},
                {"data_bytes_reclaimed", nc->reclaimed_data_payload},
                {"retransmitted_bytes", c->retx_bytes},
                {"reroutes", c->reroutes},
                {"out_of_order_packets", c->out_of_order},
                {"flows_completed", t->flows_completed}};
  for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
    set_u64(o, fields[i].key, fields[i].v);
}

/* How a run that stopped early ended: why, a deadlock's state, the ops done. */
static void add_stop(JsonObject *o, const WhRun *run)
{
  json_object_set_string_member(o, "stopped_early", wh_run_stop_reason(run));
  const WhNetDeadlock *d = &run->net->deadlock;
  if (d->detected) {
    JsonObject *x = json_object_new();
    set_u64(x, "detected_at_ps", d->at);
    set_u64(x, "no_packet_moved_since_ps", d->still_since);
    set_u64(x, "buffered_bytes", d->buffered_bytes);
    json_object_set_int_member(x, "switches_holding_packets", d->switches);
    json_object_set_int_member(x, "paused_ports", d->paused_ports);
    json_object_set_object_member(o, "deadlock", x);
  }
  if (run->workload)
    json_object_set_int_member(o, "ops_done", wh_run_ops_done(run));
}

/* The workload's size and what of an imported or generated one is not simulated. */
static void add_workload(JsonObject *o, const WhRun *run)
{
  json_object_set_int_member(o, "ranks", wh_workload_n_ranks(run->workload));
  json_object_set_int_member(o, "ops", wh_workload_n_ops(run->workload));
  if (run->sc->simai_path)
    json_object_set_int_member(o, "tp_collectives_not_modelled", run->simai_dropped_tp);
  if (run->simai_gpus_from_hosts)
    json_object_set_boolean_member(o, "gpus_from_hosts", TRUE);
  if (run->sc->simai_path) {
    const WhSimaiStats *st = &run->simai_stats;
    JsonObject *x = json_object_new();
    json_object_set_int_member(x, "comm_fields_not_issued", st->ignored_comms);
    json_object_set_int_member(x, "trivial_collectives", st->skipped_trivial);
    json_object_set_string_member(x, "header_keys", st->unmodelled_keys);
    json_object_set_object_member(o, "simai_not_simulated", x);
  }
  if (run->sc->simai_path || run->sc->model_preset)
    set_u64(o, "tp_bytes_not_modelled", run->tp_bytes_not_modelled);
}

JsonObject *wh_run_summary_object(const WhRun *run, gboolean with_wall)
{
  WhRunTotals t;
  wh_run_totals(run, &t);
  JsonObject *o = json_object_new();
  json_object_set_string_member(o, "scenario", run->sc->name ? run->sc->name : "");
  if (run->seed <= G_MAXINT64) {
    json_object_set_int_member(o, "seed", (gint64)run->seed);
  } else { /* a seed set through the library; JSON integers stop at 2^63 - 1 */
    g_autofree char *seed = g_strdup_printf("%" G_GUINT64_FORMAT, run->seed);
    json_object_set_string_member(o, "seed", seed);
  }
  if (run->wormhole)
    add_wormhole(o, run);
  else
    json_object_set_string_member(o, "scheduler", run->sched->name);
  json_object_set_string_member(o, "cc", run->cc->name);
  char digest[24];
  g_snprintf(digest, sizeof digest, "%016" G_GINT64_MODIFIER "x",
             (guint64)wh_run_config_digest(run));
  json_object_set_string_member(o, "config_digest", digest);
  if (run->sc->topology_preset) {
    json_object_set_string_member(o, "topology_preset", run->sc->topology_preset);
    g_autofree char *note = g_strdup_printf(
        "Slingshot's congestion control is not public; %s stands in for it", run->cc->name);
    json_object_set_string_member(o, "cc_note", note);
  }
  json_object_set_int_member(o, "hosts", t.hosts);
  json_object_set_int_member(o, "switches", t.switches);
  add_counters(o, run, &t);
  if (wh_run_stopped_early(run))
    add_stop(o, run);
  if (run->workload)
    add_workload(o, run);
  if (run->workload && !wh_run_stopped_early(run))
    add_iterations(o, run);
  if (run->migration_checks)
    add_migration(o, run);
  add_link_tiers(o, run);
  if (with_wall)
    set_fixed6(o, "wall_s", run->wall_s);
  json_object_set_int_member(o, "flows", t.flows);
  return o;
}

char *wh_run_summary_json(const WhRun *run, gboolean with_wall)
{
  g_autoptr(JsonObject) o = wh_run_summary_object(run, with_wall);
  return wh_json_text(o);
}

char **wh_run_warnings(const WhRun *run)
{
  GPtrArray *w = g_ptr_array_new();
  const WhSimaiStats *st = &run->simai_stats;
  const char *file = run->sc->simai_path;
  if (file && st->ignored_comms)
    g_ptr_array_add(w, g_strdup_printf("%s: %u comm fields per iteration are not simulated: the "
                                       "%s policy never issues them",
                                       file, st->ignored_comms, wh_simai_policy_name(st->policy)));
  if (file && st->skipped_trivial)
    g_ptr_array_add(w, g_strdup_printf("%s: %u collectives per iteration move nothing (size 0 or "
                                       "one rank) and are left out",
                                       file, st->skipped_trivial));
  if (file && st->unmodelled_keys[0])
    g_ptr_array_add(w, g_strdup_printf("%s: header keys not simulated (%s): pipeline sends, "
                                       "virtual stages, gradient accumulation and checkpoint "
                                       "recomputation are not made",
                                       file, st->unmodelled_keys));
  if (run->simai_gpus_from_hosts)
    g_ptr_array_add(w, g_strdup_printf("%s: the SimAI file gives no all_gpus: and the scenario "
                                       "no <workload gpus=\"N\">: the job takes all %u hosts as "
                                       "GPUs",
                                       file, wh_workload_n_ranks(run->workload)));
  g_ptr_array_add(w, NULL);
  return (char **)g_ptr_array_free(w, FALSE);
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The Wormhole line: what the mode skipped (skip: fast-forwards; memo: fast-forwards
 * and replays of memo hits) or, in observe mode, what it found and could have skipped at
 * most (details in wormhole.json). */
static void append_wormhole(GString *t, const WhRun *run, const WhRunTotals *tot)
{
  WormholeSummary w;
  wormhole_summary(run, &w);
  double ev = tot->events ? (double)tot->events : 1;
  const char *plural = w.partitions == 1 ? "" : "s";
  if (!w.skips) {
    g_string_append_printf(t,
                           "wormhole   observe: %u partition%s; steady partitions ran %.1f%% of "
                           "the events (rate rule %.1f%%, idle rule %.1f%%): what a fast-forward "
                           "could skip at most; nothing was skipped\n",
                           w.partitions, plural, (double)(w.events_rate + w.events_idle) / ev * 100,
                           (double)w.events_rate / ev * 100, (double)w.events_idle / ev * 100);
    return;
  }
  const WhWormholeSkipSummary *sk = &w.skip;
  g_string_append_printf(
      t, "wormhole   %s: %" G_GUINT64_FORMAT " fast-forwards (%" G_GUINT64_FORMAT " ended early)",
      wh_wormhole_mode_name(w.mode), sk->fast_forwards, sk->skip_backs);
  if (w.mode == WH_WORMHOLE_MEMO) {
    const WhWormholeMemoSummary *m = &w.memo;
    g_string_append_printf(t,
                           ", %" G_GUINT64_FORMAT " replays (%" G_GUINT64_FORMAT
                           " converged, %" G_GUINT64_FORMAT " completed, %" G_GUINT64_FORMAT
                           " drained) of %" G_GUINT64_FORMAT " memo hits in %" G_GUINT64_FORMAT
                           " lookups (%" G_GUINT64_FORMAT " hits from the memo file)",
                           m->replays_converged + m->replays_completed + m->replays_drained,
                           m->replays_converged, m->replays_completed, m->replays_drained, m->hits,
                           m->lookups, m->hits_from_file);
  }
  g_string_append_printf(
      t,
      ", %.1f MB advanced instead of simulated, %.1f%% of flow time skipped, about %.0f%% of "
      "the events; %u partition%s\n",
      (double)sk->advanced_bytes / 1e6, sk->time_steady_fraction * 100,
      (double)sk->events_skipped_est / ((double)sk->events_skipped_est + ev) * 100, w.partitions,
      plural);
}

/* ": D of N ops done" after a line on a stopped run with a workload. */
static void append_ops_done(GString *t, const WhRun *run)
{
  if (run->workload)
    g_string_append_printf(t, ": %u of %u ops done", wh_run_ops_done(run),
                           wh_workload_n_ops(run->workload));
  g_string_append_c(t, '\n');
}

/* The workload line of a run that completed: the mean iteration time and its split. */
static void append_workload(GString *t, const WhRun *run)
{
  double sum = 0, comp = 0, exp = 0;
  for (uint32_t i = 0; i < run->iterations; i++) {
    WhIterationStats st;
    wh_run_iteration_stats(run, i, &st);
    sum += (double)st.time;
    comp += (double)st.compute;
    exp += (double)st.exposed_comm;
  }
  double n = run->iterations;
  g_string_append_printf(t,
                         "workload   %u ranks, %u ops, %u iteration%s: iteration time %.3f us "
                         "(compute %.3f us, exposed communication %.3f us)\n",
                         wh_workload_n_ranks(run->workload), wh_workload_n_ops(run->workload),
                         run->iterations, run->iterations == 1 ? "" : "s", sum / n * 1e-6,
                         comp / n * 1e-6, exp / n * 1e-6);
}

/* Why the run stopped before its end, when it did: a deadlock or a limit. */
static void append_stop(GString *t, const WhRun *run, const WhRunTotals *tot)
{
  const WhNetDeadlock *dl = &run->net->deadlock;
  if (dl->detected) {
    g_string_append_printf(t,
                           "stopped    DEADLOCK detected at %.3f us: no packet crossed a link "
                           "since %.3f us while %u switches hold %.3f MB; %u ports paused by PFC",
                           wh_time_to_s(dl->at) * 1e6, wh_time_to_s(dl->still_since) * 1e6,
                           dl->switches, (double)dl->buffered_bytes / 1e6, dl->paused_ports);
    append_ops_done(t, run);
  } else if (wh_run_stopped_early(run)) {
    g_string_append_printf(t, "stopped    %s%s after %.1f s of wall time, %.3f ms of network time",
                           run->sim->interrupted ? "" : "at the ", wh_run_stop_reason(run),
                           run->wall_s, wh_time_to_s(tot->sim_end) * 1e3);
    append_ops_done(t, run);
  }
}

char *wh_run_report_text(const WhRun *run, const char *out_dir)
{
  WhRunTotals tot;
  wh_run_totals(run, &tot);
  GString *t = g_string_new(NULL);
  uint64_t bytes = 0;
  g_autofree uint64_t *fct = g_new(uint64_t, tot.flows ? tot.flows : 1);
  uint32_t n = 0;
  WhRunFlow f;
  for (uint32_t i = 0; wh_run_flow(run, i, &f); i++) {
    bytes += f.bytes;
    if (f.finish)
      fct[n++] = f.finish - f.start;
  }
  qsort(fct, n, sizeof *fct, cmp_u64);
  double ev = (double)tot.events;
  double w = run->wall_s > 0 ? run->wall_s : 1e-9;
  const char *name = run->sc->name ? run->sc->name : "";
  if (run->wormhole)
    g_string_append_printf(
        t, "scenario   %s (seed %" G_GUINT64_FORMAT ", wormhole (%s) on the %s scheduler, %s)\n",
        name, run->seed, wh_wormhole_mode_name(wh_wormhole_params(run->wormhole)->mode),
        run->sched->name, run->cc->name);
  else
    g_string_append_printf(t, "scenario   %s (seed %" G_GUINT64_FORMAT ", %s scheduler, %s)\n",
                           name, run->seed, run->sched->name, run->cc->name);
  g_string_append_printf(t, "network    %u hosts, %u switches, %u directed ports\n", tot.hosts,
                         tot.switches, tot.ports);
  if (run->sc->topology_preset)
    g_string_append_printf(t,
                           "note       Frontier-like network (preset \"%s\"): Slingshot's "
                           "congestion control is not public; %s stands in for it\n",
                           run->sc->topology_preset, run->cc->name);
  g_string_append_printf(t, "simulated  %u flows, %.3f MB, %.3f us of network time\n", tot.flows,
                         (double)bytes / 1e6, wh_time_to_s(tot.sim_end) * 1e6);
  if (n)
    g_string_append_printf(
        t, "FCT        min %.3f us, median %.3f us, max %.3f us (%u of %u flows completed)\n",
        (double)fct[0] * 1e-6, (double)fct[n / 2] * 1e-6, (double)fct[n - 1] * 1e-6, n, tot.flows);
  if (run->preset_facts) {
    size_t len = strlen(run->preset_facts);
    g_string_append_printf(t, "%s%s", run->preset_facts,
                           len && run->preset_facts[len - 1] != '\n' ? "\n" : "");
  }
  if (run->simai_dropped_tp)
    g_string_append_printf(t,
                           "TP         %u tensor-parallel collectives (%.1f MB) stay inside "
                           "servers and are not put on the network\n",
                           run->simai_dropped_tp, (double)run->simai_dropped_tp_bytes / 1e6);
  append_stop(t, run, &tot);
  if (run->workload && !wh_run_stopped_early(run))
    append_workload(t, run);
  g_string_append_printf(t,
                         "congestion %" G_GUINT64_FORMAT " ECN marks, %" G_GUINT64_FORMAT
                         " CNPs, %" G_GUINT64_FORMAT " PFC pauses, %" G_GUINT64_FORMAT " drops\n",
                         tot.ecn_marks, tot.cnps, tot.pfc_pauses, tot.drops);
  g_string_append_printf(
      t, "engine     %.0f events in %.3f s (%.2f M events/s, %.2f M link traversals/s)\n", ev,
      run->wall_s, ev / w * 1e-6, (double)tot.link_traversals / w * 1e-6);
  if (run->wormhole)
    append_wormhole(t, run, &tot);
  if (out_dir)
    g_string_append_printf(t, "outputs    %s/summary.json, %s/flows.csv, links.csv%s%s%s\n",
                           out_dir, out_dir, run->workload ? ", ops.csv, trace.json" : "",
                           run->sampler ? ", rates.csv, queues.csv" : "",
                           run->wormhole ? ", wormhole.json, wormhole-flows.csv" : "");
  return g_string_free(t, FALSE);
}

static int cmp_str_ptr(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A workload's size for `validate`: ranks and ops, then per kind of op and group size
 * the count of ops and the bytes they move. */
static void append_workload_size(GString *t, const WhRun *run)
{
  WhWorkload *w = run->workload;
  uint32_t n = wh_workload_n_ops(w);
  g_autoptr(GHashTable) groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  for (uint32_t i = 0; i < n; i++) {
    WhOpInfo op;
    wh_workload_op_info(w, i, &op);
    const char *kind = wh_op_kind_name(op.kind, op.coll);
    char *key = op.kind == WH_OP_COLLECTIVE ? g_strdup_printf("%s over %u ranks", kind, op.group_n)
                                            : g_strdup(kind);
    uint64_t *acc = g_hash_table_lookup(groups, key);
    if (acc == NULL) {
      acc = g_new0(uint64_t, 2);
      g_hash_table_insert(groups, key, acc);
    } else {
      g_free(key);
    }
    acc[0]++;
    acc[1] += op.kind == WH_OP_COMPUTE ? 0 : op.bytes;
  }
  g_string_append_printf(t, "workload   %u ranks, %u ops (%u per iteration x %u)\n",
                         wh_workload_n_ranks(w), n, run->ops_per_iteration, run->iterations);
  g_autofree gpointer *keys = g_hash_table_get_keys_as_array(groups, NULL);
  guint n_keys = g_hash_table_size(groups);
  qsort(keys, n_keys, sizeof *keys, cmp_str_ptr);
  for (guint i = 0; i < n_keys; i++) {
    const uint64_t *acc = g_hash_table_lookup(groups, keys[i]);
    g_autofree char *bytes = wh_units_format_bytes(acc[1]);
    g_string_append_printf(t, "  %-28s %8" G_GUINT64_FORMAT " ops  %s\n", (const char *)keys[i],
                           acc[0], acc[1] ? bytes : "-");
  }
}

char *wh_run_validate_text(const WhRun *run, const char *path)
{
  WhRunTotals tot;
  wh_run_totals(run, &tot);
  GString *t = g_string_new(NULL);
  g_string_append_printf(t, "%s: valid (%u hosts, %u switches, %u flows)\n", path, tot.hosts,
                         tot.switches, tot.flows);
  if (run->workload)
    append_workload_size(t, run);
  return g_string_free(t, FALSE);
}
