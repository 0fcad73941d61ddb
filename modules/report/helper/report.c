/* A run's summary, for the file (summary.json) and for the terminal (the printed report,
 * the warnings, validate's sizes): both are made here from the same numbers, the run's
 * totals (wh_run_totals) and Wormhole's summary (WormholeSummary), so that they cannot
 * disagree. Costs one pass over the ports (link tiers), the flows (FCT) or the ops
 * (iterations, migration, validate's sizes). */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The summary's per-iteration times of a workload run that completed. */
static void append_iterations(GString *j, const WhRun *run)
{
  GString *its = g_string_new(NULL), *comp = g_string_new(NULL), *exp = g_string_new(NULL);
  WhTime total = 0;
  for (uint32_t i = 0; i < run->iterations; i++) {
    WhIterationStats st;
    wh_run_iteration_stats(run, i, &st);
    total += st.time;
    const char *sep = i ? ", " : "";
    g_string_append_printf(its, "%s%" G_GUINT64_FORMAT, sep, (guint64)st.time);
    g_string_append_printf(comp, "%s%" G_GUINT64_FORMAT, sep, (guint64)st.compute);
    g_string_append_printf(exp, "%s%" G_GUINT64_FORMAT, sep, (guint64)st.exposed_comm);
  }
  g_string_append_printf(j, "  \"iterations\": [%s],\n", its->str);
  g_string_append_printf(j, "  \"iteration_time_ps\": %" G_GUINT64_FORMAT ",\n",
                         (guint64)(total / run->iterations));
  g_string_append_printf(j, "  \"compute_ps\": [%s],\n", comp->str);
  g_string_append_printf(j, "  \"exposed_comm_ps\": [%s],\n", exp->str);
  g_string_free(its, TRUE);
  g_string_free(comp, TRUE);
  g_string_free(exp, TRUE);
}

/* The summary's "migration" object (wh::ModelPreset::Migration): every check with its
 * max/mean GPU token load before and after the swaps, the bytes and flows moved, and
 * its time: from the first migration send's start to the last one's end (0 when none
 * moved). Migration ops are the ones named "i<it>/migrate/...". Cost: one pass over
 * the ops. */
static void append_migration(GString *j, const WhRun *run)
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
  GString *list = g_string_new(NULL);
  uint64_t bytes = 0, swaps = 0;
  WhTime time = 0;
  for (guint k = 0; k < c->len; k++) {
    const WhMigrationCheck *m = &g_array_index(c, WhMigrationCheck, k);
    WhTime t = last[k] > first[k] && first[k] != G_MAXUINT64 ? last[k] - first[k] : 0;
    time += t;
    bytes += m->bytes;
    swaps += m->swaps;
    g_string_append_printf(list,
                           "%s\n    {\"iteration\": %u, \"imbalance_before\": %.6f, "
                           "\"imbalance_after\": %.6f, \"swaps\": %u, \"bytes\": %" G_GUINT64_FORMAT
                           ", \"flows\": %u, \"time_ps\": %" G_GUINT64_FORMAT "}",
                           k ? "," : "", m->iteration, m->imbalance_before, m->imbalance_after,
                           m->swaps, (guint64)m->bytes, m->flows, (guint64)t);
  }
  g_string_append_printf(j,
                         "  \"migration\": {\"checks\": %u, \"swaps\": %" G_GUINT64_FORMAT
                         ", \"bytes\": %" G_GUINT64_FORMAT ", \"time_ps\": %" G_GUINT64_FORMAT
                         ", \"per_check\": [%s%s]},\n",
                         c->len, (guint64)swaps, (guint64)bytes, (guint64)time, list->str,
                         c->len ? "\n  " : "");
  g_string_free(list, TRUE);
}

/* The summary's per-tier link statistics: for each tier present, its directed ports,
 * those that carried a frame, their frames and bytes, mean and largest busy fraction
 * over the ports that carried a frame, PFC pause time and the largest egress queue. */
static void append_link_tiers(GString *j, const WhRun *run)
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
    x->active += p->st.frames > 0;
    x->frames += p->st.frames;
    x->bytes += p->st.bytes;
    x->busy += p->st.busy;
    x->busy_max = MAX(x->busy_max, p->st.busy);
    x->paused += wh_net_port_paused_time(net, p);
    x->max_queue = MAX(x->max_queue, p->st.max_queue);
  }
  double end = run->sim->now ? (double)run->sim->now : 1.0;
  g_string_append(j, "  \"link_tiers\": {");
  const char *sep = "";
  for (int k = 0; k < WH_N_TIERS; k++) {
    if (t[k].ports == 0)
      continue;
    g_string_append_printf(
        j,
        "%s\n    \"%s\": {\"ports\": %u, \"active_ports\": %u, \"frames\": %" G_GUINT64_FORMAT
        ", \"bytes\": %" G_GUINT64_FORMAT ", \"busy_mean\": %.6f, \"busy_max\": %.6f, "
        "\"pause_ps\": %" G_GUINT64_FORMAT ", \"max_queue_bytes\": %" G_GUINT64_FORMAT "}",
        sep, wh_net_tier_name((WhLinkTier)k), t[k].ports, t[k].active, t[k].frames, t[k].bytes,
        t[k].active ? (double)t[k].busy / t[k].active / end : 0.0, (double)t[k].busy_max / end,
        (guint64)t[k].paused, t[k].max_queue);
    sep = ",";
  }
  g_string_append(j, "\n  },\n");
}

/* The memo fields of the summary (contention patterns on). */
static void memo_json(const WhRun *run, const WhWormholeMemoSummary *memo, GString *j)
{
  const WhWormholeMemoSummary m = *memo;
  g_string_append_printf(
      j,
      "  \"memo_lookups\": %" G_GUINT64_FORMAT ",\n  \"memo_hits\": %" G_GUINT64_FORMAT
      ",\n  \"memo_hits_from_file\": %" G_GUINT64_FORMAT
      ",\n  \"memo_hits_seen\": %" G_GUINT64_FORMAT
      ",\n  \"memo_hits_converged\": %" G_GUINT64_FORMAT
      ",\n  \"memo_hits_completed\": %" G_GUINT64_FORMAT
      ",\n  \"memo_replays_converged\": %" G_GUINT64_FORMAT
      ",\n  \"memo_replays_completed\": %" G_GUINT64_FORMAT
      ",\n  \"memo_distinct\": %" G_GUINT64_FORMAT ",\n  \"memo_db_bytes\": %" G_GUINT64_FORMAT
      ",\n",
      m.lookups, m.hits, m.hits_from_file, m.hits_seen, m.hits_converged, m.hits_completed,
      m.replays_converged, m.replays_completed, m.distinct, m.db_bytes);
  if (run->memo_file == NULL) {
    g_string_append(j, "  \"memo_file\": null,\n  \"memo_file_status\": null,\n");
    return;
  }
  g_autofree char *file = g_strescape(run->memo_file, NULL);
  g_autofree char *status = g_strescape(run->memo_status, NULL);
  g_string_append_printf(j, "  \"memo_file\": \"%s\",\n  \"memo_file_status\": \"%s\",\n", file,
                         status);
}

char *wh_run_summary_json(const WhRun *run, gboolean with_wall)
{
  const WhTransportCounters *c = &run->tp->c;
  const WhNetCounters *nc = &run->net->c;
  WhRunTotals t;
  wh_run_totals(run, &t);
  GString *j = g_string_new("{\n");
  g_autofree char *name = g_strescape(run->sc->name ? run->sc->name : "", NULL);
  g_string_append_printf(j, "  \"scenario\": \"%s\",\n", name);
  g_string_append_printf(j, "  \"seed\": %" G_GUINT64_FORMAT ",\n", run->seed);
  if (run->wormhole) {
    WormholeSummary w;
    wormhole_summary(run, &w);
    g_string_append_printf(j,
                           "  \"scheduler\": \"wormhole\",\n  \"wormhole_inner_scheduler\": "
                           "\"%s\",\n  \"wormhole_mode\": \"%s\",\n  \"wormhole_partitions\": %u,\n"
                           "  \"wormhole_events_skippable_est\": %" G_GUINT64_FORMAT ",\n",
                           run->sched->name, wh_wormhole_mode_name(w.mode), w.partitions,
                           w.events_rate + w.events_idle);
    if (w.skips) {
      const WhWormholeSkipSummary sk = w.skip;
      g_string_append_printf(
          j,
          "  \"fast_forwards\": %" G_GUINT64_FORMAT ",\n  \"skip_backs\": %" G_GUINT64_FORMAT
          ",\n  \"advanced_bytes\": %" G_GUINT64_FORMAT ",\n  \"time_steady_fraction\": %.6f,\n"
          "  \"events_skipped_est\": %" G_GUINT64_FORMAT ",\n",
          sk.fast_forwards, sk.skip_backs, sk.advanced_bytes, sk.time_steady_fraction,
          sk.events_skipped_est);
    }
    if (w.patterns)
      memo_json(run, &w.memo, j);
  } else {
    g_string_append_printf(j, "  \"scheduler\": \"%s\",\n", run->sched->name);
  }
  g_string_append_printf(j, "  \"cc\": \"%s\",\n", run->cc->name);
  g_string_append_printf(j, "  \"config_digest\": \"%016" G_GINT64_MODIFIER "x\",\n",
                         (guint64)wh_run_config_digest(run));
  if (run->sc->topology_preset)
    g_string_append_printf(
        j,
        "  \"topology_preset\": \"%s\",\n  \"cc_note\": \"Slingshot's congestion "
        "control is not public; %s stands in for it\",\n",
        run->sc->topology_preset, run->cc->name);
  g_string_append_printf(j, "  \"hosts\": %u,\n", t.hosts);
  g_string_append_printf(j, "  \"switches\": %u,\n", t.switches);
#define FIELD(k, v) g_string_append_printf(j, "  \"%s\": %" G_GUINT64_FORMAT ",\n", k, (guint64)(v))
  FIELD("sim_end_ps", t.sim_end);
  FIELD("events_executed", t.events);
  FIELD("packets_delivered", nc->packets_delivered);
  FIELD("link_traversals", t.link_traversals);
  FIELD("link_bytes", wh_net_link_bytes(run->net));
  FIELD("pfc_pauses", t.pfc_pauses);
  FIELD("pfc_resumes", nc->pfc_resumes);
  FIELD("ecn_marks", t.ecn_marks);
  FIELD("cnps", t.cnps);
  FIELD("nacks", c->nacks);
  FIELD("timeouts", c->timeouts);
  FIELD("drops", t.drops);
  FIELD("data_bytes_sent", c->data_bytes_sent);
  FIELD("data_bytes_delivered", c->data_bytes_arrived);
  FIELD("data_bytes_dropped", nc->drop_data_payload);
  FIELD("data_bytes_reclaimed", nc->reclaimed_data_payload);
  FIELD("retransmitted_bytes", c->retx_bytes);
  FIELD("reroutes", c->reroutes);
  FIELD("out_of_order_packets", c->out_of_order);
  FIELD("flows_completed", t.flows_completed);
#undef FIELD
  if (wh_run_stopped_early(run)) {
    g_string_append_printf(j, "  \"stopped_early\": \"%s\",\n", wh_run_stop_reason(run));
    const WhNetDeadlock *d = &run->net->deadlock;
    if (d->detected)
      g_string_append_printf(j,
                             "  \"deadlock\": {\"detected_at_ps\": %" G_GUINT64_FORMAT
                             ", \"no_packet_moved_since_ps\": %" G_GUINT64_FORMAT
                             ", \"buffered_bytes\": %" G_GUINT64_FORMAT
                             ", \"switches_holding_packets\": %u, \"paused_ports\": %u},\n",
                             (guint64)d->at, (guint64)d->still_since, (guint64)d->buffered_bytes,
                             d->switches, d->paused_ports);
    if (run->workload)
      g_string_append_printf(j, "  \"ops_done\": %u,\n", wh_run_ops_done(run));
  }
  if (run->workload) {
    g_string_append_printf(j, "  \"ranks\": %u,\n", wh_workload_n_ranks(run->workload));
    g_string_append_printf(j, "  \"ops\": %u,\n", wh_workload_n_ops(run->workload));
    if (run->sc->simai_path)
      g_string_append_printf(j, "  \"tp_collectives_not_modelled\": %u,\n", run->simai_dropped_tp);
    if (run->simai_gpus_from_hosts)
      g_string_append(j, "  \"gpus_from_hosts\": true,\n");
    if (run->sc->simai_path) {
      const WhSimaiStats *st = &run->simai_stats;
      g_autofree char *keys = g_strescape(st->unmodelled_keys, NULL);
      g_string_append_printf(j,
                             "  \"simai_not_simulated\": {\"comm_fields_not_issued\": %u, "
                             "\"trivial_collectives\": %u, \"header_keys\": \"%s\"},\n",
                             st->ignored_comms, st->skipped_trivial, keys);
    }
    if (run->sc->simai_path || run->sc->model_preset)
      g_string_append_printf(j, "  \"tp_bytes_not_modelled\": %" G_GUINT64_FORMAT ",\n",
                             (guint64)run->tp_bytes_not_modelled);
  }
  if (run->workload && !wh_run_stopped_early(run))
    append_iterations(j, run);
  if (run->migration_checks)
    append_migration(j, run);
  append_link_tiers(j, run);
  if (with_wall)
    g_string_append_printf(j, "  \"wall_s\": %.6f,\n", run->wall_s);
  g_string_append_printf(j, "  \"flows\": %u\n}\n", t.flows);
  return g_string_free(j, FALSE);
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
                           " converged, %" G_GUINT64_FORMAT " completed) of %" G_GUINT64_FORMAT
                           " memo hits in %" G_GUINT64_FORMAT " lookups (%" G_GUINT64_FORMAT
                           " hits from the memo file)",
                           m->replays_converged + m->replays_completed, m->replays_converged,
                           m->replays_completed, m->hits, m->lookups, m->hits_from_file);
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
                           run->wall_s, wh_time_to_s(tot.sim_end) * 1e3);
    append_ops_done(t, run);
  }
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
                           run->wormhole ? ", wormhole.json" : "");
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
