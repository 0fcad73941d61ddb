/* Building, running and reporting one scenario; see run.h. */
#include "run-private.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "file-read.h"
#include "memo-db.h"
#include "units.h"
#include "presets.h"
#include "simai-import.h"
#include "dragonfly.h"
#include "topology.h"
#include "topology-preset.h"
#include "wh-error.h"

/* A text file a scenario references (`what` names the element for messages): confined
 * to `roots`, at most `max` bytes, no NUL byte. (transfer full; NULL with `error`) */
static char *read_text_file(const WhScenario *sc, int line, const char *what, const char *path,
                            const char *const *roots, gsize max, GError **error)
{
  g_autoptr(GError) err = NULL;
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!wh_file_check_inside(path, roots, &err) || !wh_file_read(path, max, &text, &len, &err)) {
    wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, line, "%s: %s: %s",
                    what, path, err->message);
    return NULL;
  }
  if (memchr(text, '\0', len)) {
    wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, line,
                    "%s: %s: not a text file", what, path);
    return NULL;
  }
  return g_steal_pointer(&text);
}

static gboolean apply_settings(WhRun *run, const WhRunOptions *opts, GError **error)
{
  WhScenario *sc = run->sc;
  for (guint i = 0; i < sc->sets->len; i++) {
    const WhScenarioSet *s = sc->sets->pdata[i];
    g_autoptr(GError) err = NULL;
    if (!wh_config_set(run->cfg, s->key, s->value, s->origin, &err)) {
      g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, "%s: %s", s->origin,
                  err->message);
      return FALSE;
    }
  }
  for (char **s = opts && opts->sets ? opts->sets : NULL; s && *s; s++) {
    g_autoptr(GError) err = NULL;
    if (!wh_config_set_assignment(run->cfg, *s, "command line", &err)) {
      g_propagate_prefixed_error(error, g_steal_pointer(&err), "--set %s: ", *s);
      return FALSE;
    }
  }
  run->seed = opts && opts->has_seed ? opts->seed : sc->has_seed ? sc->seed : 1;
  gboolean sched_cli = opts && opts->scheduler;
  const char *sched = sched_cli ? opts->scheduler : sc->scheduler;
  gboolean sched_wormhole = g_strcmp0(sched, "wormhole") == 0;
  run->sched = wh_scheduler_class_lookup(sched && !sched_wormhole ? sched : WH_SCHEDULER_DEFAULT);
  if (run->sched == NULL) {
    g_autoptr(GString) known = g_string_new(NULL);
    for (const WhSchedulerClass *const *k = wh_scheduler_classes(); *k; k++)
      g_string_append_printf(known, "%s, ", (*k)->name);
    g_string_append(known, "wormhole");
    if (sched_cli) {
      g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                  "--scheduler %s: unknown scheduler (known: %s)", sched, known->str);
      return FALSE;
    }
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, sc->root_line,
        "<scenario> attribute \"scheduler\": unknown scheduler \"%s\" (known: %s)", sched,
        known->str);
  }
  gboolean cc_cli = opts && opts->cc;
  const char *cc = cc_cli ? opts->cc : sc->cc;
  run->cc = wh_cc_class_lookup(cc ? cc : "dcqcn");
  if (run->cc == NULL) {
    g_autoptr(GString) known = g_string_new(NULL);
    for (const WhCcClass *const *c = wh_cc_classes(); *c; c++)
      g_string_append_printf(known, "%s%s", known->len ? ", " : "", (*c)->name);
    if (cc_cli) {
      g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                  "--cc %s: unknown congestion control (known: %s)", cc, known->str);
      return FALSE;
    }
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, sc->root_line,
        "<scenario> attribute \"cc\": unknown congestion control \"%s\" (known: %s)", cc,
        known->str);
  }
  return wh_wormhole_params_from_config(&run->wormhole_params, run->cfg, run->cc->name,
                                        sched_wormhole, error);
}

/* Custom topologies are checked here, by node id and line, before the network sees
 * them: each host on exactly one link, to a switch, and every node connected. */
static guint find_root(guint *parent, guint i)
{
  while (parent[i] != i)
    i = parent[i] = parent[parent[i]];
  return i;
}

static gboolean check_custom(const WhScenario *sc, GError **error)
{
  guint n = sc->nodes->len;
  g_autoptr(GHashTable) index = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < n; i++)
    g_hash_table_insert(index, ((WhScenarioNode *)sc->nodes->pdata[i])->id, GUINT_TO_POINTER(i));
  g_autofree guint *degree = g_new0(guint, n);
  g_autofree guint *parent = g_new(guint, n);
  for (guint i = 0; i < n; i++)
    parent[i] = i;
  for (guint i = 0; i < sc->links->len; i++) {
    const WhScenarioLink *l = sc->links->pdata[i];
    guint a = GPOINTER_TO_UINT(g_hash_table_lookup(index, l->a));
    guint b = GPOINTER_TO_UINT(g_hash_table_lookup(index, l->b));
    const WhScenarioNode *na = sc->nodes->pdata[a], *nb = sc->nodes->pdata[b];
    if (a == b)
      return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, l->line,
                             "<link>: links \"%s\" to itself", l->a);
    if (!na->is_switch && !nb->is_switch)
      return wh_error_set_at(
          error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, l->line,
          "<link>: links host \"%s\" to host \"%s\"; hosts must connect to a switch", l->a, l->b);
    const WhScenarioNode *ends[2] = {na, nb};
    guint idx[2] = {a, b};
    for (int k = 0; k < 2; k++) {
      if (!ends[k]->is_switch && ++degree[idx[k]] > 1)
        return wh_error_set_at(
            error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, l->line,
            "<link>: gives host \"%s\" a second link; a host has exactly one link", ends[k]->id);
    }
    parent[find_root(parent, a)] = find_root(parent, b);
  }
  for (guint i = 0; i < n; i++) {
    const WhScenarioNode *nd = sc->nodes->pdata[i];
    if (!nd->is_switch && degree[i] == 0)
      return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, nd->line,
                             "<host id=\"%s\">: the host has no link", nd->id);
    if (find_root(parent, i) != find_root(parent, 0)) {
      const WhScenarioNode *first = sc->nodes->pdata[0];
      return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, nd->line,
                             "the topology is disconnected: \"%s\" cannot reach \"%s\"", nd->id,
                             first->id);
    }
  }
  return TRUE;
}

/* Flows of one scenario (explicit and from patterns), at most: a flow costs a few
 * hundred bytes, so this bounds the memory a pattern can ask for. */
#define WH_MAX_SCENARIO_FLOWS (1u << 24)

/* A frame is at most WH_MAX_FRAME_BYTES (a packet's size is 16-bit). */
static gboolean check_frame_size(const WhRun *run, uint64_t frame, GError **error)
{
  uint64_t ctrl = wh_config_bytes(run->cfg, "wh::RdmaFlow", "ControlBytes");
  if (frame <= WH_MAX_FRAME_BYTES && ctrl <= WH_MAX_FRAME_BYTES)
    return TRUE;
  const char *o = wh_config_origin(run->cfg, "wh::RdmaFlow",
                                   frame > WH_MAX_FRAME_BYTES ? "Mtu" : "ControlBytes");
  g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
              "%s: a frame of %" G_GUINT64_FORMAT
              " B (wh::RdmaFlow::Mtu + HeaderBytes, or ControlBytes) is larger than %u B",
              o ? o : run->sc->path, MAX(frame, ctrl), WH_MAX_FRAME_BYTES);
  return FALSE;
}

/* A switch buffer or PFC threshold smaller than one data frame would drop that frame
 * at every try, and a larger frame than a packet holds cannot be sent: refused before
 * anything is built. */
static gboolean check_frame_fits(const WhRun *run, const WhNetParams *np, GError **error)
{
  const WhConfig *cfg = run->cfg;
  uint64_t frame = np->pfc_frame;
  const char *param = np->buffer_bytes < frame                              ? "BufferSize"
                      : np->pfc && !np->pfc_dynamic && np->pfc_xoff < frame ? "PfcXoff"
                                                                            : NULL;
  if (param == NULL)
    return check_frame_size(run, frame, error);
  const char *o = wh_config_origin(cfg, "wh::Switch", param);
  if (o == NULL)
    o = wh_config_origin(cfg, "wh::RdmaFlow", "Mtu");
  g_set_error(
      error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
      "%s: wh::Switch::%s (%" G_GUINT64_FORMAT
      " B) cannot hold one data frame of %" G_GUINT64_FORMAT " B (wh::RdmaFlow::Mtu + HeaderBytes)",
      o ? o : run->sc->path, param, param[0] == 'B' ? np->buffer_bytes : np->pfc_xoff, frame);
  return FALSE;
}

uint64_t wh_run_default_memory(void)
{
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0)
    return (uint64_t)4 << 30;
  return (uint64_t)pages * (uint64_t)page / 4 * 3;
}

/* The network's size from the scenario and the generator's parameters, before
 * anything is allocated; refused when it exceeds the memory budget. */
static gboolean check_network_memory(WhRun *run, const WhTopologyClass *t, GError **error)
{
  WhScenario *sc = run->sc;
  WhNetSize size = {0};
  g_autoptr(GError) err = NULL;
  if (t == NULL) {
    for (guint i = 0; i < sc->nodes->len; i++) {
      gboolean sw = ((WhScenarioNode *)sc->nodes->pdata[i])->is_switch;
      size.hosts += !sw;
      size.switches += sw;
    }
    size.links = sc->links->len;
    size.leaves = size.switches;
  } else if (t->size && !t->size(run->cfg, &size, &err)) {
    if (err->domain == WH_CONFIG_ERROR) {
      g_propagate_error(error, g_steal_pointer(&err));
      return FALSE;
    }
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path,
                           sc->topology_line, "<topology type=\"%s\">: %s", sc->topology,
                           err->message);
  }
  uint64_t flows = sc->flows->len + (sc->permutation ? size.hosts : 0);
  for (guint k = 0; k < sc->patterns->len; k++) {
    const WhScenarioPattern *p = sc->patterns->pdata[k];
    flows +=
        (uint64_t)(p->count ? p->count : size.hosts) * (p->kind == WH_PATTERN_SHIFT ? 1 : p->flows);
  }
  run->memory_network = wh_net_estimate_bytes(&size) + size.hosts * (sizeof(WhHostSched) + 64) +
                        flows * (sizeof(WhFlow) + 64);
  if (run->memory_network <= run->memory_budget)
    return TRUE;
  g_autofree char *need = wh_units_format_bytes(run->memory_network);
  g_autofree char *budget = wh_units_format_bytes(run->memory_budget);
  return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path,
                         sc->topology_line,
                         "the network (%" G_GUINT64_FORMAT " hosts, %" G_GUINT64_FORMAT
                         " switches, %" G_GUINT64_FORMAT " links) and its %" G_GUINT64_FORMAT
                         " flows need about %s; the memory budget is %s (--max-memory)",
                         size.hosts, size.switches, size.links, flows, need, budget);
}

/* The network's parameters from the configuration and the congestion control's ECN
 * settings (`cc_params`), checked. */
static gboolean net_params(const WhRun *run, void *cc_params, WhNetParams *out, GError **error)
{
  const WhConfig *cfg = run->cfg;
  WhEcnConfig ecn;
  run->cc->ecn(cc_params, &ecn);
  WhNetParams np = {
      .buffer_bytes = wh_config_bytes(cfg, "wh::Switch", "BufferSize"),
      .switch_delay = wh_config_time(cfg, "wh::Switch", "Delay"),
      .pfc = wh_config_bool(cfg, "wh::Switch", "PfcEnabled"),
      .pfc_xoff = wh_config_bytes(cfg, "wh::Switch", "PfcXoff"),
      .pfc_xon = wh_config_bytes(cfg, "wh::Switch", "PfcXon"),
      .pfc_dynamic = strcmp(wh_config_choice(cfg, "wh::Switch", "PfcThreshold"), "dynamic") == 0,
      .pfc_alpha = wh_config_double(cfg, "wh::Switch", "PfcAlpha"),
      .pfc_resume_offset = wh_config_bytes(cfg, "wh::Switch", "PfcResumeOffset"),
      .pfc_frame = wh_config_bytes(cfg, "wh::RdmaFlow", "Mtu") +
                   wh_config_bytes(cfg, "wh::RdmaFlow", "HeaderBytes"),
      .ecn = ecn.ecn && wh_config_bool(cfg, "wh::Switch", "EcnEnabled"),
      .kmin = ecn.kmin,
      .kmax = ecn.kmax,
      .pmax = ecn.pmax,
      .ecn_scale = ecn.scale,
      .ecn_ref_rate = ecn.ref_rate,
      .int_enabled = run->cc->uses_int,
      .seed = run->seed,
      .deadlock_timeout = wh_config_time(cfg, "wh::Switch", "DeadlockTimeout"),
      .delay_jitter = (uint64_t)wh_config_int(cfg, "wh::Link", "DelayJitter"),
  };
  if (np.pfc && !np.pfc_dynamic && np.pfc_xon > np.pfc_xoff) {
    const char *o = wh_config_origin(cfg, "wh::Switch", "PfcXon");
    if (o == NULL)
      o = wh_config_origin(cfg, "wh::Switch", "PfcXoff");
    g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                "%s: wh::Switch::PfcXon (%" G_GUINT64_FORMAT
                " B) must not exceed wh::Switch::PfcXoff (%" G_GUINT64_FORMAT " B)",
                o ? o : run->sc->path, np.pfc_xon, np.pfc_xoff);
    return FALSE;
  }
  *out = np;
  return TRUE;
}

/* Adds a custom topology's hosts, switches and links to the network. */
static gboolean build_custom(WhRun *run, GError **error)
{
  const WhScenario *sc = run->sc;
  const WhConfig *cfg = run->cfg;
  g_autoptr(GError) err = NULL;
  if (!check_custom(sc, error))
    return FALSE;
  g_autoptr(GHashTable) ids = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < sc->nodes->len; i++) {
    WhScenarioNode *n = sc->nodes->pdata[i];
    uint32_t id = n->is_switch ? wh_net_add_switch(run->net) : wh_net_add_host(run->net);
    g_hash_table_insert(ids, n->id, GUINT_TO_POINTER(id + 1));
  }
  uint64_t rate = wh_config_rate(cfg, "wh::Link", "Rate");
  WhTime delay = wh_config_time(cfg, "wh::Link", "Delay");
  for (guint i = 0; i < sc->links->len; i++) {
    WhScenarioLink *l = sc->links->pdata[i];
    uint32_t a = GPOINTER_TO_UINT(g_hash_table_lookup(ids, l->a)) - 1;
    uint32_t b = GPOINTER_TO_UINT(g_hash_table_lookup(ids, l->b)) - 1;
    if (!wh_net_add_link(run->net, a, b, l->rate ? l->rate : rate, l->has_delay ? l->delay : delay,
                         &err))
      return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, l->line,
                             "<link>: %s", err->message);
  }
  return TRUE;
}

/* Builds a generated topology (a registered type, or a preset's) into the network. */
static gboolean build_generated(WhRun *run, GError **error)
{
  const WhScenario *sc = run->sc;
  const WhConfig *cfg = run->cfg;
  g_autoptr(GError) err = NULL;
  const WhTopologyClass *t = wh_topology_lookup(sc->topology);
  if (t == NULL)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, 0,
                           "unknown topology type \"%s\"", sc->topology);
  const WhTopologyPreset *preset = wh_topology_preset_lookup(sc->topology_preset);
  const char *g = preset ? wh_config_origin(cfg, preset->topology, preset->groups_param) : NULL;
  if (g && strstr(g, "(preset ") == NULL)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path,
                           sc->topology_line,
                           "<topology preset=\"%s\">: %s::%s is also set (%s); give the number of "
                           "groups once, as the preset's \"groups\" attribute",
                           preset->name, preset->topology, preset->groups_param, g);
  if (!t->build(run->net, cfg, &err) && err->domain == WH_CONFIG_ERROR) {
    g_propagate_error(error, g_steal_pointer(&err));
    return FALSE;
  }
  if (err)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path,
                           sc->topology_line, "<topology type=\"%s\">: %s", sc->topology,
                           err->message);
  return TRUE;
}

static gboolean build_network(WhRun *run, void *cc_params, GError **error)
{
  const WhConfig *cfg = run->cfg;
  WhScenario *sc = run->sc;
  WhNetParams np;
  if (!net_params(run, cc_params, &np, error))
    return FALSE;
  gboolean custom = g_strcmp0(sc->topology, WH_CUSTOM_TOPOLOGY) == 0;
  const WhTopologyClass *topo = custom ? NULL : wh_topology_lookup(sc->topology);
  if (!custom && topo == NULL)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, 0,
                           "unknown topology type \"%s\"", sc->topology);
  if (!check_frame_fits(run, &np, error) || !check_network_memory(run, topo, error))
    return FALSE;
  run->net = wh_net_new(run->sim, &np);
  if (!(custom ? build_custom(run, error) : build_generated(run, error)))
    return FALSE;
  g_autoptr(GError) err = NULL;
  if (!wh_net_finalize(run->net, &err)) {
    if (g_error_matches(err, WH_NETWORK_ERROR, WH_NETWORK_ERROR_BUFFER)) {
      const char *o = wh_config_origin(cfg, "wh::Switch", "BufferSize");
      if (o == NULL)
        o = wh_config_origin(cfg, "wh::Switch", "PfcThreshold");
      if (o != NULL) {
        g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, "%s: %s", o, err->message);
        return FALSE;
      }
    }
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path,
                           sc->topology_line, "topology: %s", err->message);
  }
  return TRUE;
}

/* Resolves a host reference: a declared host id (custom topologies) or an index. */
static gboolean resolve_host(const WhRun *run, GHashTable *host_ids, const char *ref,
                             const char *field, int line, uint32_t *out, GError **error)
{
  const WhScenario *sc = run->sc;
  uint32_t n = run->net->n_hosts;
  if (host_ids) {
    gpointer v = g_hash_table_lookup(host_ids, ref);
    if (v == NULL)
      return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, line,
                             "<flow> attribute \"%s\": no host \"%s\" in the topology", field, ref);
    *out = GPOINTER_TO_UINT(v) - 1;
    return TRUE;
  }
  char *end = NULL;
  guint64 v = g_ascii_strtoull(ref, &end, 10);
  if (end == ref || *end != '\0' || v >= n)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, line,
                           "<flow> attribute \"%s\": no host \"%s\" (the topology has hosts 0..%u)",
                           field, ref, n - 1);
  *out = (uint32_t)v;
  return TRUE;
}

/* Adds the scenario's permutation: every host sends to another, in a random cyclic
 * permutation (Sattolo's shuffle), so no host sends to itself. */
static void add_permutation(WhRun *run, GPtrArray *ids)
{
  const WhScenario *sc = run->sc;
  uint32_t n = run->net->n_hosts;
  uint32_t *dst = g_new(uint32_t, n);
  WhRng rng;
  wh_rng_init(&rng, run->seed, 0x7065726d75746174ULL);
  for (uint32_t i = 0; i < n; i++)
    dst[i] = i;
  for (uint32_t i = n - 1; i > 0; i--) {
    uint32_t j = (uint32_t)(wh_rng_next(&rng) % i);
    uint32_t t = dst[i];
    dst[i] = dst[j];
    dst[j] = t;
  }
  for (uint32_t i = 0; i < n && n > 1; i++) {
    g_autoptr(GError) err = NULL;
    int64_t id = wh_transport_add_flow(run->tp, i, dst[i], sc->perm_size, sc->perm_start, &err);
    g_assert(id >= 0);
    g_ptr_array_add(ids, g_strdup_printf("%" G_GINT64_FORMAT, id));
  }
  g_free(dst);
}

/* Adds the flows of the scenario's `k`th traffic pattern (<shift> or <uniform>). */
static gboolean add_pattern(WhRun *run, guint k, GPtrArray *ids, GError **error)
{
  const WhScenario *sc = run->sc;
  const WhScenarioPattern *p = sc->patterns->pdata[k];
  const char *what = p->kind == WH_PATTERN_SHIFT ? "<shift>" : "<uniform>";
  uint32_t n = run->net->n_hosts;
  uint32_t first = p->first, count = p->count ? p->count : (first < n ? n - first : 0);
  if ((uint64_t)first + count > n || count < 2) {
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, p->line,
                           "%s: hosts %u..%u: the topology has %u hosts (and a pattern needs 2)",
                           what, first, first + count - 1, n);
  }
  if (p->kind == WH_PATTERN_SHIFT && p->offset % count == 0) {
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, p->line,
        "<shift>: offset %u is a multiple of the %u hosts: every host would send to "
        "itself",
        p->offset, count);
  }
  uint32_t per_host = p->kind == WH_PATTERN_SHIFT ? 1 : p->flows;
  if ((uint64_t)count * per_host + ids->len > WH_MAX_SCENARIO_FLOWS)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, p->line,
                           "%s: %u hosts x %u flows: more than %u flows in the scenario", what,
                           count, per_host, WH_MAX_SCENARIO_FLOWS);
  WhRng rng;
  wh_rng_init(&rng, run->seed, 0x756e69666f726d00ULL + k);
  for (uint32_t i = 0; i < count; i++)
    for (uint32_t j = 0; j < per_host; j++) {
      uint32_t dst;
      if (p->kind == WH_PATTERN_SHIFT) {
        dst = first + (uint32_t)((i + (uint64_t)p->offset) % count);
      } else {
        dst = (uint32_t)(wh_rng_next(&rng) % (count - 1)); /* any host but i */
        dst = first + (dst >= i ? dst + 1 : dst);
      }
      g_autoptr(GError) err = NULL;
      int64_t id = wh_transport_add_flow(run->tp, first + i, dst, p->size, p->start, &err);
      if (id < 0) {
        return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, p->line,
                               "%s: %s", what, err->message);
      }
      g_ptr_array_add(ids, g_strdup_printf("%" G_GINT64_FORMAT, id));
    }
  return TRUE;
}

/* The scenario's flows and patterns; `ids` receives each flow's label. */
static gboolean add_flows_into(WhRun *run, GPtrArray *ids, GError **error)
{
  WhScenario *sc = run->sc;
  g_autoptr(GHashTable) host_ids = NULL;
  if (g_strcmp0(sc->topology, WH_CUSTOM_TOPOLOGY) == 0) {
    host_ids = g_hash_table_new(g_str_hash, g_str_equal);
    uint32_t h = 0;
    for (guint i = 0; i < sc->nodes->len; i++) {
      WhScenarioNode *n = sc->nodes->pdata[i];
      if (!n->is_switch)
        g_hash_table_insert(host_ids, n->id, GUINT_TO_POINTER(++h));
    }
  }
  for (guint i = 0; i < sc->flows->len; i++) {
    WhScenarioFlow *f = sc->flows->pdata[i];
    uint32_t src, dst;
    g_autoptr(GError) err = NULL;
    if (!resolve_host(run, host_ids, f->src, "src", f->line, &src, error) ||
        !resolve_host(run, host_ids, f->dst, "dst", f->line, &dst, error)) {
      return FALSE;
    }
    int64_t id = wh_transport_add_flow(run->tp, src, dst, f->size, f->start, &err);
    if (id < 0) {
      return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, f->line,
                             "<flow>: %s", err->message);
    }
    g_ptr_array_add(ids, f->id ? g_strdup(f->id) : g_strdup_printf("%" G_GINT64_FORMAT, id));
  }
  if (sc->permutation)
    add_permutation(run, ids);
  for (guint k = 0; k < sc->patterns->len; k++)
    if (!add_pattern(run, k, ids, error))
      return FALSE;
  return TRUE;
}

static gboolean add_flows(WhRun *run, GError **error)
{
  GPtrArray *ids = g_ptr_array_new();
  gboolean ok = add_flows_into(run, ids, error);
  run->n_flow_ids = ids->len;
  g_ptr_array_add(ids, NULL);
  run->flow_ids = (char **)g_ptr_array_free(ids, FALSE);
  return ok;
}

/* The run's workload over `ranks` ranks, with the wh::Workload settings. */
static void new_workload(WhRun *run, uint32_t ranks)
{
  run->workload = wh_workload_new(run->tp, ranks);
  wh_workload_set_message_alpha(run->workload,
                                wh_config_time(run->cfg, "wh::Workload", "MessageAlpha"));
  wh_workload_set_rccl_window(run->workload,
                              (uint32_t)wh_config_int(run->cfg, "wh::Workload", "RcclWindow"));
  wh_workload_set_rccl_batch(
      run->workload,
      g_strcmp0(wh_config_choice(run->cfg, "wh::Workload", "RcclSchedule"), "batch") == 0);
  /* Frontier nodes, for HALO (any workload: an op, a model preset's all-to-all) */
  const WhDragonfly *df = run->net ? wh_dragonfly_of(run->net) : NULL;
  if (df && wh_dragonfly_get_shape(df)->frontier)
    wh_workload_set_gcds_per_node(run->workload, wh_dragonfly_get_shape(df)->gcds_per_node);
}

/* Adds the scenario's op DAG `iterations` times; the ops without dependencies of
 * iteration i + 1 wait for every op of iteration i that nothing else waits for. */
static gboolean add_simai(WhRun *run, const WhRunOptions *opts, GError **error)
{
  WhScenario *sc = run->sc;
  run->iterations = opts && opts->iterations ? opts->iterations : sc->iterations;
  WhSimaiOptions so = {.keep_tp = sc->simai_keep_tp,
                       .iterations = run->iterations,
                       .gpus = sc->simai_gpus,
                       .max_bytes = run->memory_budget > run->memory_network
                                        ? run->memory_budget - run->memory_network
                                        : 1,
                       .progress = isatty(STDERR_FILENO) ? stderr : NULL};
  g_autoptr(GError) err = NULL;
  g_autofree char *sc_dir = g_path_get_dirname(sc->path);
  const char *roots[] = {sc_dir, opts ? opts->data_dir : NULL, NULL};
  if (!wh_file_check_inside(sc->simai_path, roots, &err))
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path,
                           sc->workload_line, "<workload simai>: %s: %s", sc->simai_path,
                           err->message);
  g_autoptr(WhSimaiPlan) plan = wh_simai_plan_load(sc->simai_path, run->net->n_hosts, &so, &err);
  if (plan == NULL)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path,
                           sc->workload_line, "<workload simai>: %s", err->message);
  new_workload(run, plan->stats.n_gpus);
  run->ops_per_iteration = plan->stats.ops_per_iteration;
  run->simai_dropped_tp = plan->stats.dropped_tp;
  run->simai_dropped_tp_bytes = plan->stats.dropped_tp_bytes;
  run->simai_gpus_from_hosts = plan->stats.gpus_from_hosts;
  run->simai_stats = plan->stats;
  run->tp_bytes_not_modelled = plan->stats.dropped_tp_bytes;
  if (!wh_simai_plan_apply(plan, run->workload, &err))
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path,
                           sc->workload_line, "<workload simai>: %s", err->message);
  return TRUE;
}

/* A workload estimated at `need` bytes (`ops` ops over all iterations) must fit what
 * the network left of the memory budget. */
static gboolean check_workload_memory(const WhRun *run, uint64_t ops, uint64_t need,
                                      const char *what, int line, GError **error)
{
  uint64_t left =
      run->memory_budget > run->memory_network ? run->memory_budget - run->memory_network : 0;
  if (need <= left)
    return TRUE;
  g_autofree char *need_s = wh_units_format_bytes(need);
  g_autofree char *left_s = wh_units_format_bytes(left);
  return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, line,
                         "%s: %" G_GUINT64_FORMAT
                         " ops (%u iterations) need about %s; the memory budget "
                         "left after the network is %s (--max-memory)",
                         what, ops, run->iterations, need_s, left_s);
}

#define ROUTING_FILE_BYTES (256u << 20)

/* wh::ModelPreset::Routing file: the expert counts of <workload routing=FILE> into
 * `*counts` (transfer full) and the spec; a file without Routing file is refused. */
static gboolean load_routing(const WhRun *run, const WhRunOptions *opts, WhPresetSpec *spec,
                             uint64_t **counts, GError **error)
{
  const WhScenario *sc = run->sc;
  if (spec->routing != WH_ROUTING_FILE) {
    if (sc->routing_path)
      return wh_error_set_at(
          error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, sc->workload_line,
          "<workload routing>: %s: a routing file needs wh::ModelPreset::Routing file",
          sc->routing_path);
    return TRUE;
  }
  if (sc->routing_path == NULL)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path,
                           sc->workload_line,
                           "<workload model>: wh::ModelPreset::Routing file needs <workload "
                           "routing=FILE>");
  g_autofree char *sc_dir = g_path_get_dirname(sc->path);
  const char *roots[] = {sc_dir, opts ? opts->data_dir : NULL, NULL};
  g_autoptr(GError) err = NULL;
  g_autofree char *text = read_text_file(sc, sc->workload_line, "<workload routing>",
                                         sc->routing_path, roots, ROUTING_FILE_BYTES, error);
  if (!text)
    return FALSE;
  if (!wh_routing_file_parse(text, spec->shape.experts, sc->routing_path, counts,
                             &spec->routing_rows, &err))
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path,
                           sc->workload_line, "<workload routing>: %s", err->message);
  spec->routing_counts = *counts;
  return TRUE;
}

static gboolean add_preset(WhRun *run, const WhRunOptions *opts, GError **error)
{
  WhScenario *sc = run->sc;
  run->iterations = opts && opts->iterations ? opts->iterations : sc->iterations;
  WhPresetSpec spec;
  g_autoptr(GError) err = NULL;
  if (!wh_preset_spec_from_config(&spec, run->cfg, &err))
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path,
                           sc->workload_line, "<workload model>: %s", err->message);
  spec.iterations = run->iterations;
  spec.seed = run->seed;
  g_autofree uint64_t *routing_counts = NULL;
  if (!load_routing(run, opts, &spec, &routing_counts, error))
    return FALSE;
  WhPresetFacts facts;
  if (!wh_preset_facts(&spec, &facts, &err))
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path,
                           sc->workload_line, "<workload model>: %s", err->message);
  if (facts.ranks > run->net->n_hosts)
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, sc->workload_line,
        "<workload model>: the parallel config needs %u GPUs but the topology has %u "
        "hosts",
        facts.ranks, run->net->n_hosts);
  uint64_t preset_ops = (uint64_t)facts.ops * run->iterations, extra = 0;
  if (spec.routing != WH_ROUTING_UNIFORM) /* each all-to-allv keeps its EP x EP matrix */
    extra = (uint64_t)facts.n_all_to_all * run->iterations * spec.ep * spec.ep * sizeof(uint64_t);
  if (spec.migrate) { /* at most 2 sends per swap, stage, TP rank and EP group per check */
    uint64_t sends = (uint64_t)(run->iterations / spec.migrate_period) * spec.migrate_rounds * 2 *
                     spec.pp * spec.tp * (spec.dp / spec.ep);
    preset_ops += sends;
  }
  if (!check_workload_memory(run, preset_ops,
                             WH_WORKLOAD_BYTES_FIXED + preset_ops * WH_WORKLOAD_BYTES_PER_NAMED_OP +
                                 extra,
                             "<workload model>", sc->workload_line, error))
    return FALSE;
  new_workload(run, facts.ranks);
  if (spec.migrate)
    run->migration_checks = g_array_new(FALSE, FALSE, sizeof(WhMigrationCheck));
  if (!wh_preset_build_checks(run->workload, &spec, run->migration_checks, &err))
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path,
                           sc->workload_line, "<workload model>: %s", err->message);
  run->ops_per_iteration = facts.ops;
  run->preset_facts = wh_preset_facts_text(&spec, &facts);
  run->tp_bytes_not_modelled = facts.tp_bytes;
  return TRUE;
}

/* <placement>: maps the workload's ranks onto Frontier nodes of G = gcds_per_node GCDs
 * (rank r on GCD r mod G of the (r / G)-th node of the placement). Cost: O(nodes)
 * once. */
static gboolean place_ranks(WhRun *run, GError **error)
{
  const WhScenario *sc = run->sc;
  if (sc->placement_line == 0)
    return TRUE;
  const WhDragonfly *df = wh_dragonfly_of(run->net);
  const WhDragonflyShape *sh = df ? wh_dragonfly_get_shape(df) : NULL;
  if (sh == NULL || !sh->frontier)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path,
                           sc->placement_line,
                           "<placement>: needs a dragonfly of Frontier nodes (Node=frontier, e.g. "
                           "<topology preset=\"frontier\">)");
  if (run->workload == NULL)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path,
                           sc->placement_line,
                           "<placement>: places a workload's ranks; "
                           "this scenario has no workload");
  uint32_t G = sh->gcds_per_node;
  uint32_t nodes = sh->hosts / G, ranks = wh_workload_n_ranks(run->workload);
  uint32_t need = (ranks + G - 1) / G;
  g_autofree uint32_t *list = g_new(uint32_t, nodes);
  uint32_t n = 0;
  switch (sc->placement) {
  case WH_PLACEMENT_CONTIGUOUS:
  case WH_PLACEMENT_RANDOM:
    for (n = 0; n < nodes; n++)
      list[n] = n;
    if (sc->placement == WH_PLACEMENT_RANDOM) { /* the first `need` of a Fisher-Yates shuffle */
      WhRng rng;
      wh_rng_init(&rng, sc->has_placement_seed ? sc->placement_seed : run->seed, 0x91ace);
      for (uint32_t i = 0; i < need && i + 1 < nodes; i++) {
        uint32_t j = i + (uint32_t)(wh_rng_next(&rng) % (nodes - i));
        uint32_t t = list[i];
        list[i] = list[j];
        list[j] = t;
      }
    }
    break;
  case WH_PLACEMENT_PER_SWITCH:
    for (n = 0; n < sh->switches; n++)
      list[n] = n * sh->nodes_per_switch;
    break;
  case WH_PLACEMENT_NODES:
    for (n = 0; n < sc->n_placement_nodes; n++) {
      if (sc->placement_nodes[n] >= nodes)
        return wh_error_set_at(
            error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, sc->placement_line,
            "<placement> attribute \"nodes\": node %u is outside the machine (%u "
            "nodes: 0..%u)",
            sc->placement_nodes[n], nodes, nodes - 1);
      list[n] = sc->placement_nodes[n];
    }
    break;
  }
  if (need > n)
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, sc->placement_line,
        "<placement>: %u ranks need %u nodes of %u GCDs; the placement has %u (%u GCDs)", ranks,
        need, G, n, n * G);
  for (uint32_t r = 0; r < ranks; r++)
    if (!wh_workload_map_rank(run->workload, r, list[r / G] * G + r % G, error))
      return FALSE;
  return TRUE;
}

/* The largest all-to-allv matrix file read (4096 x 4096 sizes of a few characters). */
#define MATRIX_FILE_BYTES (256u << 20)

/* The size matrix of every all-to-allv of the <workload> (NULL for other ops) into
 * `out`: inline, or read from its file, which must lie below the scenario's directory
 * or the data directory. */
static gboolean load_matrix_files(const WhRun *run, const WhRunOptions *opts, GPtrArray *out,
                                  GError **error)
{
  const WhScenario *sc = run->sc;
  g_autofree char *sc_dir = g_path_get_dirname(sc->path);
  const char *roots[] = {sc_dir, opts ? opts->data_dir : NULL, NULL};
  for (guint i = 0; i < sc->ops->len; i++) {
    const WhScenarioOp *o = sc->ops->pdata[i];
    if (o->matrix_path == NULL) {
      g_ptr_array_add(
          out, o->matrix ? g_memdup2(o->matrix, sizeof(uint64_t) * o->n_ranks * o->n_ranks) : NULL);
      continue;
    }
    g_autoptr(GError) err = NULL;
    uint64_t *m = NULL;
    g_autofree char *text = read_text_file(sc, o->line, "<collective matrix>", o->matrix_path,
                                           roots, MATRIX_FILE_BYTES, error);
    if (!text)
      return FALSE;
    if (!wh_scenario_parse_matrix(text, o->n_ranks, o->matrix_path, 1, &m, &err))
      return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, o->line,
                             "<collective matrix>: %s", err->message);
    g_ptr_array_add(out, m);
  }
  return TRUE;
}

/* The ranks the scenario's ops use: one more than the largest named. */
static uint32_t scenario_ranks(const WhScenario *sc)
{
  uint32_t ranks = 0;
  for (guint i = 0; i < sc->ops->len; i++) {
    const WhScenarioOp *o = sc->ops->pdata[i];
    ranks = MAX(ranks, MAX(o->rank, o->dst) + 1);
    for (uint32_t k = 0; k < o->n_ranks; k++)
      ranks = MAX(ranks, o->ranks[k] + 1);
  }
  return ranks;
}

/* Adds one instance of scenario op `o` to the workload, after the ops of `deps`
 * (`matrix`: an all-to-allv's, else NULL). */
static gboolean add_scenario_op(WhRun *run, const WhScenarioOp *o, const uint64_t *matrix,
                                const GArray *deps, GError **error)
{
  g_autoptr(GError) err = NULL;
  int64_t id;
  const uint32_t *dv = (const uint32_t *)deps->data;
  WhCollAlgo algo = (WhCollAlgo)o->algo;
  if (o->algo < 0 &&
      !wh_coll_algo_parse(wh_config_choice(run->cfg, "wh::Workload", "AllToAll"), &algo))
    algo = WH_ALGO_PAIRWISE; /* the choices are checked when set */
  if (o->kind == WH_OP_COMPUTE)
    id = wh_workload_add_compute(run->workload, o->id, o->rank, o->duration, dv, deps->len, &err);
  else if (o->kind == WH_OP_SEND)
    id = wh_workload_add_send(run->workload, o->id, o->rank, o->dst, o->bytes, dv, deps->len, &err);
  else if (o->coll == WH_COLL_ALL_TO_ALLV)
    id = wh_workload_add_all_to_allv(run->workload, o->id, algo, o->ranks, o->n_ranks, matrix, dv,
                                     deps->len, &err);
  else
    id = wh_workload_add_collective(run->workload, o->id, (WhCollKind)o->coll, algo, o->ranks,
                                    o->n_ranks, o->bytes, dv, deps->len, &err);
  if (id < 0)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path,
                           o->line, "%s", err->message);
  return TRUE;
}

static gboolean add_workload(WhRun *run, const WhRunOptions *opts, GError **error)
{
  WhScenario *sc = run->sc;
  if (sc->simai_path)
    return add_simai(run, opts, error);
  if (sc->model_preset)
    return add_preset(run, opts, error);
  guint n = sc->ops->len;
  if (n == 0)
    return TRUE;
  uint32_t ranks = scenario_ranks(sc);
  if (ranks > run->net->n_hosts)
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, sc->workload_line,
        "<workload>: uses rank %u but the topology has %u hosts (one rank per host)", ranks - 1,
        run->net->n_hosts);
  run->iterations = opts && opts->iterations ? opts->iterations : sc->iterations;
  g_autofree gboolean *is_dep = g_new0(gboolean, n);
  uint64_t edges = 0, roots = 0, leaves = n, names = 0;
  for (guint i = 0; i < n; i++) {
    const WhScenarioOp *o = sc->ops->pdata[i];
    edges += o->n_deps;
    roots += o->n_deps == 0;
    names += strlen(o->id) + 1 + WH_OP_TABLE_BYTES_PER_ENTRY; /* and its group, if any */
    names += o->n_ranks ? (o->n_ranks + 1) * sizeof(uint32_t) + WH_OP_TABLE_BYTES_PER_ENTRY : 0;
    if (o->coll == WH_COLL_ALL_TO_ALLV) /* and its matrix */
      names += (uint64_t)o->n_ranks * o->n_ranks * sizeof(uint64_t) + WH_OP_TABLE_BYTES_PER_ENTRY;
    for (uint32_t d = 0; d < o->n_deps; d++) {
      leaves -= !is_dep[o->deps[d]];
      is_dep[o->deps[d]] = TRUE;
    }
  }
  /* iterations after the first: the roots also wait for the last iteration's leaves */
  uint64_t it = run->iterations, ops = (uint64_t)n * it;
  edges = edges * it + roots * leaves * (it - 1);
  uint64_t need = WH_WORKLOAD_BYTES_FIXED + ops * WH_WORKLOAD_BYTES_PER_OP +
                  edges * WH_WORKLOAD_BYTES_PER_DEP + names;
  if (!check_workload_memory(run, ops, need, "<workload>", sc->workload_line, error))
    return FALSE;
  run->ops_per_iteration = n;
  g_autoptr(GPtrArray) matrices = g_ptr_array_new_with_free_func(g_free);
  if (!load_matrix_files(run, opts, matrices, error))
    return FALSE;
  new_workload(run, ranks);
  GArray *deps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (uint32_t it = 0; it < run->iterations; it++) {
    uint32_t base = it * n, prev = base - n;
    for (guint i = 0; i < n; i++) {
      const WhScenarioOp *o = sc->ops->pdata[i];
      g_array_set_size(deps, 0);
      for (uint32_t d = 0; d < o->n_deps; d++) {
        uint32_t v = base + o->deps[d];
        g_array_append_val(deps, v);
      }
      if (it > 0 && o->n_deps == 0) {
        for (guint s = 0; s < n; s++) {
          if (!is_dep[s]) {
            uint32_t v = prev + s;
            g_array_append_val(deps, v);
          }
        }
      }
      if (!add_scenario_op(run, o, matrices->pdata[i], deps, error)) {
        g_array_free(deps, TRUE);
        return FALSE;
      }
    }
  }
  g_array_free(deps, TRUE);
  return TRUE;
}

void wh_run_iteration_stats(const WhRun *run, uint32_t it, WhIterationStats *out)
{
  uint32_t n = run->ops_per_iteration;
  WhTime begin = 0, end = 0;
  if (it > 0) {
    for (uint32_t i = (it - 1) * n; i < it * n; i++) {
      WhOpInfo info;
      wh_workload_op_info(run->workload, i, &info);
      begin = MAX(begin, info.end);
    }
  }
  g_autofree WhTime *compute = g_new0(WhTime, run->net->n_hosts);
  WhTime busiest = 0;
  for (uint32_t i = it * n; i < (it + 1) * n; i++) {
    WhOpInfo info;
    wh_workload_op_info(run->workload, i, &info);
    end = MAX(end, info.end);
    if (info.kind == WH_OP_COMPUTE) {
      compute[info.rank] += info.end - info.start;
      busiest = MAX(busiest, compute[info.rank]);
    }
  }
  out->time = end > begin ? end - begin : 0;
  out->compute = busiest;
  out->exposed_comm = out->time > busiest ? out->time - busiest : 0;
}

static const char *wormhole_label(void *ctx, uint32_t flow, char buf[24])
{
  return wh_run_flow_label(ctx, flow, buf);
}

/* The rate sampler, bounded by the memory budget the network leaves. Refused before
 * the run when the flows alone (each runs at least from its start until its bytes
 * crossed the fastest link) would need more periods than the budget holds. */
static gboolean start_sampler(WhRun *run, WhTime period, gboolean from_cli, GError **error)
{
  uint64_t left =
      run->memory_budget > run->memory_network ? run->memory_budget - run->memory_network : 0;
  uint64_t fastest = 1;
  for (uint32_t i = 0; i < run->net->n_ports; i++)
    fastest = MAX(fastest, run->net->port[i].rate_bps);
  WhTime lasts = 0;
  for (uint32_t i = 0; i < run->tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow(run->tp, i);
    lasts = MAX(lasts, f->start + (WhTime)((double)f->size * 8 / (double)fastest * 1e12));
  }
  /* as the sampler counts: 4 bytes per port per period, twice */
  double need = 8.0 * run->net->n_ports * (double)(lasts / period);
  if (need <= (double)left) {
    run->sampler = wh_rate_sampler_new(run->tp, period);
    wh_rate_sampler_set_budget(run->sampler, left);
    return TRUE;
  }
  g_autofree char *need_s = wh_units_format_bytes((uint64_t)MIN(need, 1e18));
  g_autofree char *left_s = wh_units_format_bytes(left);
  g_autofree char *period_s = wh_units_format_time(period);
  g_autofree char *lasts_s = wh_units_format_time(lasts);
  g_autofree char *min_s = wh_units_format_time(
      (WhTime)ceil(8.0 * run->net->n_ports * (double)lasts / MAX((double)left, 1)));
  g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
              "%s %s: the flows run for at least %s, %" G_GUINT64_FORMAT
              " periods; sampling %u ports that often needs about %s, more than the %s left "
              "of the memory budget (--max-memory): use a period of at least %s",
              from_cli ? "--sample-period" : "the scenario's sample period", period_s, lasts_s,
              (guint64)(lasts / period), run->net->n_ports, need_s, left_s, min_s);
  return FALSE;
}

/* --memo FILE, before anything is built (wh_memo_file_check): FILE may be missing (a
 * new database) but not a directory, another non-regular file, a link to nothing or a
 * file that is not a memo file; unless it is read-only, its directory must be writable
 * (the database is saved there through a temporary file). */
static gboolean check_memo_path(const char *path, GError **error)
{
  gboolean read_only;
  g_autoptr(GError) err = NULL;
  if (wh_memo_file_check(path, &read_only, &err))
    return TRUE;
  g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, "--memo %s", err->message);
  return FALSE;
}

/* --memo FILE, once Wormhole is attached: the run must look patterns up; an existing
 * file is loaded, as far as MemoMaxBytes and the memory budget the network and
 * Wormhole leave allow; one that cannot be loaded is ignored (the run goes on with an
 * empty database). A read-only file (no write permission in its mode bits) is never
 * written; neither is one found not to be a memo file. */
static gboolean open_memo(WhRun *run, const char *path, GError **error)
{
  if (run->wormhole == NULL || !run->wormhole_params.patterns) {
    g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                "--memo %s: the memo database holds contention patterns, which this run does "
                "not look up (wh::Wormhole::Mode=%s, Patterns=false): use Mode=memo, or "
                "Patterns=true with Mode=observe or skip",
                path, wh_wormhole_mode_name(run->wormhole_params.mode));
    return FALSE;
  }
  run->memo_file = g_strdup(path);
  GStatBuf st;
  if (g_stat(path, &st) != 0) {
    run->memo_status = g_strdup("new");
    return TRUE;
  }
  run->memo_keep_file = (st.st_mode & 0222) == 0;
  const char *read_only = run->memo_keep_file ? " (read-only: never written)" : "";
  uint64_t used = run->memory_network + wh_wormhole_memory(run->wormhole);
  uint64_t left = run->memory_budget > used ? run->memory_budget - used : 1;
  uint64_t loaded = 0, entries = 0;
  g_autoptr(GError) err = NULL;
  if (wh_wormhole_memo_load(run->wormhole, path, left, &loaded, &entries, &err)) {
    if (loaded == entries) {
      run->memo_status = g_strdup("loaded");
      if (run->memo_keep_file)
        run->memo_warning = g_strdup_printf("%s: read-only (no write permission in its mode): "
                                            "loaded, and not written at the end",
                                            path);
      return TRUE;
    }
    g_autofree char *max = wh_units_format_bytes(run->wormhole_params.memo_max_bytes);
    g_autofree char *left_s = wh_units_format_bytes(left);
    run->memo_status = g_strdup_printf(
        "loaded in part: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " entries", loaded, entries);
    run->memo_warning = g_strdup_printf(
        "%s: %" G_GUINT64_FORMAT " of its %" G_GUINT64_FORMAT
        " entries loaded, the first in the file's order: the others would take the database "
        "beyond wh::Wormhole::MemoMaxBytes (%s) or the memory budget left (%s, --max-memory); "
        "the file keeps them when it is written, as far as MemoMaxBytes allows%s",
        path, loaded, entries, max, left_s, read_only);
    return TRUE;
  }
  /* the message is "FILE: reason" */
  const char *reason = err->message;
  if (g_str_has_prefix(reason, path) && g_str_has_prefix(reason + strlen(path), ": "))
    reason += strlen(path) + 2;
  run->memo_keep_file |= err->code == WH_MEMO_ERROR_MAGIC || err->code == WH_MEMO_ERROR_IO;
  run->memo_status = g_strdup_printf("ignored: %s", reason);
  run->memo_warning = g_strdup_printf("%s: ignored%s%s", err->message,
                                      run->memo_keep_file ? ", and left as it is" : "", read_only);
  return TRUE;
}

/* The file written holds the union's first entries within MemoMaxBytes
 * (wh_wormhole_memo_save), the prefix a later run's load takes whole. */
gboolean wh_run_memo_save(const WhRun *run, GError **error)
{
  if (run->memo_file == NULL || run->memo_keep_file)
    return TRUE;
  return wh_wormhole_memo_save(run->wormhole, run->memo_file, NULL, NULL, error);
}

WhRun *wh_run_new(WhScenario *sc, const WhRunOptions *opts, GError **error)
{
  g_autoptr(WhRun) run = g_new0(WhRun, 1);
  wh_registry_init();
  run->sc = sc;
  run->cfg = wh_config_new();
  run->memory_budget = opts && opts->max_memory ? opts->max_memory : wh_run_default_memory();
  if (opts && opts->memo_file && !check_memo_path(opts->memo_file, error))
    return NULL;
  if (!apply_settings(run, opts, error))
    return NULL;
  g_autoptr(GError) err = NULL;
  void *cc_params = run->cc->configure(run->cfg, &err);
  if (cc_params == NULL) {
    if (err->message[0] && strstr(err->message, sc->path) == err->message)
      g_propagate_error(error, g_steal_pointer(&err));
    else
      wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, sc->path, 0, "%s",
                      err->message);
    return NULL;
  }
  if (wh_wormhole_mode_skips(run->wormhole_params.mode))
    run->sim = wh_sim_new_with_scheduler(wh_wormhole_scheduler_new(run->sched));
  else
    run->sim = wh_sim_new(run->sched);
  if (!build_network(run, cc_params, error)) {
    g_free(cc_params);
    return NULL;
  }
  WhTransportParams tpp;
  wh_transport_params_from_config(&tpp, run->cfg);
  run->tp = wh_transport_new(run->sim, run->net, &tpp, run->cc, cc_params);
  if (!add_flows(run, error) || !add_workload(run, opts, error) || !place_ranks(run, error))
    return NULL;
  run->stop = sc->stop;
  if (opts && opts->wall_limit_s > 0)
    run->sim->wall_limit_s = opts->wall_limit_s;
  if (opts) {
    run->sim->interrupt = opts->interrupt;
    run->progress = opts->progress;
    run->progress_data = opts->progress_data;
    run->progress_label = opts->progress_label;
  }
  WhTime sample = opts && opts->sample_period ? opts->sample_period : sc->sample_period;
  if (sample && !start_sampler(run, sample, opts && opts->sample_period, error))
    return NULL;
  if (run->wormhole_params.mode != WH_WORMHOLE_OFF)
    run->wormhole =
        wh_wormhole_new(run->sim, run->net, run->tp, &run->wormhole_params, wormhole_label, run);
  if (opts && opts->memo_file && !open_memo(run, opts->memo_file, error))
    return NULL;
  return g_steal_pointer(&run);
}

void wh_run_free(WhRun *run)
{
  if (run == NULL)
    return;
  wh_wormhole_free(run->wormhole);
  wh_rate_sampler_free(run->sampler);
  wh_workload_free(run->workload);
  g_free(run->preset_facts);
  if (run->migration_checks)
    g_array_unref(run->migration_checks);
  wh_transport_free(run->tp);
  wh_net_free(run->net);
  wh_sim_free(run->sim);
  wh_config_free(run->cfg);
  g_strfreev(run->flow_ids);
  wh_scenario_free(run->owned_sc);
  g_free(run->memo_file);
  g_free(run->memo_status);
  g_free(run->memo_warning);
  g_free(run);
}

void wh_run_take_scenario(WhRun *run, WhScenario *sc)
{
  g_return_if_fail(run->sc == sc && run->owned_sc == NULL);
  run->owned_sc = sc;
}

/* The simulator's progress callback: a reading for the options' progress (cold; O(1)
 * per sample). */
static void show_progress(WhSim *sim, double wall_s, void *data)
{
  WhRun *run = data;
  WhRunProgress s = {.label = run->progress_label,
                     .wall_s = wall_s,
                     .now = sim->now,
                     .events = sim->events_executed - run->progress_events0,
                     .fraction = -1};
  if (run->workload) {
    s.unit = "ops";
    s.done = wh_workload_ops_ended(run->workload);
    s.total = wh_workload_n_ops(run->workload);
    s.fraction = (double)s.done / (double)MAX(s.total, 1);
  } else {
    const WhTransportCounters *c = &run->tp->c;
    s.unit = "flows";
    s.done = c->flows_finished;
    s.total = run->tp->n_flows;
    uint64_t moved = MIN(c->data_bytes_arrived + c->advanced_bytes, run->progress_bytes);
    if (run->progress_bytes)
      s.fraction = (double)moved / (double)run->progress_bytes;
  }
  if (run->stop) /* the run ends at the stop time if the work is not done before */
    s.fraction = MAX(s.fraction, MIN(1.0, wh_time_to_s(sim->now) / wh_time_to_s(run->stop)));
  run->progress(WH_RUN_PROGRESS_UPDATE, &s, run->progress_data);
}

void wh_run_execute(WhRun *run)
{
  if (run->progress) {
    WhRunProgress start = {.label = run->progress_label};
    run->progress(WH_RUN_PROGRESS_START, &start, run->progress_data);
    run->progress_bytes = 0;
    for (uint32_t i = 0; i < run->tp->n_flows; i++)
      run->progress_bytes += wh_transport_flow(run->tp, i)->size;
    run->progress_events0 = run->sim->events_executed;
    run->sim->progress = show_progress;
    run->sim->progress_ctx = run;
  }
  if (run->stop)
    wh_sim_stop_at(run->sim, run->stop);
  gint64 t0 = g_get_monotonic_time();
  if (run->workload)
    wh_workload_start(run->workload);
  wh_net_start_watchdog(run->net);
  wh_sim_run(run->sim);
  run->wall_s = (double)(g_get_monotonic_time() - t0) * 1e-6;
  run->sim->progress = NULL;
  if (run->progress) {
    WhRunProgress end = {.label = run->progress_label, .wall_s = run->wall_s};
    run->progress(WH_RUN_PROGRESS_END, &end, run->progress_data);
  }
  if (!run->sim->wall_stopped && !run->sim->interrupted && run->net->p.pfc)
    wh_net_check_stuck(run->net);
  if (run->sampler)
    wh_rate_sampler_close(run->sampler, run->sim->now + wh_rate_sampler_period(run->sampler));
  if (run->wormhole)
    wh_wormhole_finish(run->wormhole);
}

gboolean wh_run_check(const WhRun *run, GError **error)
{
  const WhTransportCounters *c = &run->tp->c;
  const WhNetCounters *nc = &run->net->c;
  if (c->flows_finished != run->tp->n_flows) {
    g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                "%u of %u flows did not complete", run->tp->n_flows - c->flows_finished,
                run->tp->n_flows);
    return FALSE;
  }
  if (c->data_bytes_sent !=
      c->data_bytes_arrived + nc->drop_data_payload + nc->reclaimed_data_payload) {
    g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                "conservation: %" G_GUINT64_FORMAT " bytes sent != %" G_GUINT64_FORMAT
                " delivered + %" G_GUINT64_FORMAT " dropped + %" G_GUINT64_FORMAT " reclaimed",
                c->data_bytes_sent, c->data_bytes_arrived, nc->drop_data_payload,
                nc->reclaimed_data_payload);
    return FALSE;
  }
  if (run->workload && !wh_workload_done(run->workload)) {
    g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, "the workload did not finish");
    return FALSE;
  }
  if (run->wormhole && wh_wormhole_mode_skips(wh_wormhole_params(run->wormhole)->mode) &&
      !wh_wormhole_check_bytes(run->wormhole, error))
    return FALSE;
  if (run->net->pkt_live != 0 || run->sim->events_live != 0) {
    g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                "%" G_GUINT64_FORMAT " packets and %" G_GUINT64_FORMAT
                " events still allocated at the end",
                run->net->pkt_live, run->sim->events_live);
    return FALSE;
  }
  return TRUE;
}

gboolean wh_run_stopped_early(const WhRun *run)
{
  return run->sim->wall_stopped || run->sim->interrupted || run->net->deadlock.detected ||
         run->tp->gave_up >= 0 || run->sim->past_horizon || wh_run_sampler_full(run) ||
         (run->stop && wh_sim_pending(run->sim) > 0);
}

gboolean wh_run_sampler_full(const WhRun *run)
{
  return run->sampler && wh_rate_sampler_full(run->sampler, NULL);
}

const char *wh_run_stop_reason(const WhRun *run)
{
  if (run->net->deadlock.detected)
    return "deadlock";
  if (run->tp->gave_up >= 0)
    return "retry limit";
  if (run->sim->past_horizon)
    return "time horizon";
  if (wh_run_sampler_full(run))
    return "sample memory";
  if (run->sim->interrupted)
    return "interrupted";
  return run->sim->wall_stopped ? "wall-clock limit" : "stop time";
}

uint32_t wh_run_ops_done(const WhRun *run)
{
  uint32_t done = 0;
  for (uint32_t i = 0; run->workload && i < wh_workload_n_ops(run->workload); i++) {
    WhOpInfo op;
    wh_workload_op_info(run->workload, i, &op);
    done += op.end > 0;
  }
  return done;
}

void wh_run_set_interrupt(WhRun *run, const volatile sig_atomic_t *flag)
{
  run->sim->interrupt = flag;
}

void wh_run_totals(const WhRun *run, WhRunTotals *out)
{
  *out = (WhRunTotals){.hosts = run->net->n_hosts,
                       .switches = run->net->n_switches,
                       .ports = run->net->n_ports,
                       .flows = run->tp->n_flows,
                       .flows_completed = run->tp->c.flows_finished,
                       .iterations = run->workload ? run->iterations : 0,
                       .sim_end = run->sim->now,
                       .events = run->sim->events_executed,
                       .link_traversals = run->net->c.link_traversals,
                       .ecn_marks = wh_net_ecn_marks(run->net),
                       .cnps = run->tp->c.cnps,
                       .pfc_pauses = run->net->c.pfc_pauses,
                       .drops = run->net->c.drops};
}

gboolean wh_run_flow(const WhRun *run, uint32_t flow, WhRunFlow *out)
{
  if (flow >= run->tp->n_flows)
    return FALSE;
  const WhFlow *f = wh_transport_flow(run->tp, flow);
  *out = (WhRunFlow){
      .src = f->src, .dst = f->dst, .bytes = f->size, .start = f->start, .finish = f->finish};
  return TRUE;
}

/* What stopped a run that failed (deadlock, retry limit, time horizon, sample memory),
 * in one sentence; NULL when none did. (transfer full) */
static char *failure_message(const WhRun *run)
{
  char label[16];
  if (run->net->deadlock.detected)
    return g_strdup("the network deadlocked (PFC); see summary.json \"deadlock\"");
  if (run->tp->gave_up >= 0)
    return g_strdup_printf("flow %s made no progress through %u go-back-N retransmissions in a "
                           "row (wh::RdmaFlow::MaxRetries); the run stopped at %.3f us",
                           wh_run_flow_label(run, (uint32_t)run->tp->gave_up, label),
                           run->tp->p.max_retries, wh_time_to_s(run->sim->now) * 1e6);
  if (run->sim->past_horizon)
    return g_strdup_printf(
        "an event was due past the time horizon of %.0f s (%s); the run stopped at %.6f s",
        wh_time_to_s(WH_TIME_HORIZON),
        run->sim->past_horizon == WH_TIME_MAX ? "the sum of its times overflowed" : "too late",
        wh_time_to_s(run->sim->now));
  if (wh_run_sampler_full(run))
    return g_strdup_printf("the rate samples reached the memory budget at %.3f us of network "
                           "time (--max-memory); the run stopped there: use a longer "
                           "--sample-period",
                           wh_time_to_s(run->sim->now) * 1e6);
  return NULL;
}

void wh_run_status(const WhRun *run, WhRunStatus *out)
{
  char *message = failure_message(run);
  *out = (WhRunStatus){.stopped_early = wh_run_stopped_early(run),
                       .interrupted = run->sim->interrupted,
                       .failed = message != NULL,
                       .message = message};
}

void wh_run_status_clear(WhRunStatus *status)
{
  g_clear_pointer(&status->message, g_free);
}

const char *wh_run_memo_warning(const WhRun *run)
{
  return run->memo_warning;
}

static const char *const digest_kinds[] = {
    "network", "transport", "queue-disc", "congestion-control", "topology", "workload", NULL};

uint64_t wh_run_config_digest(const WhRun *run)
{
  return wh_config_digest(run->cfg, digest_kinds);
}

gboolean wh_run_config_digest_with(const WhRun *run, const char *assignment, uint64_t *digest,
                                   GError **error)
{
  g_autoptr(WhConfig) cfg = wh_config_copy(run->cfg);
  if (!wh_config_set_assignment(cfg, assignment, NULL, error))
    return FALSE;
  *digest = wh_config_digest(cfg, digest_kinds);
  return TRUE;
}

const char *wh_run_flow_label(const WhRun *run, uint32_t i, char buf[16])
{
  if (i < run->n_flow_ids)
    return run->flow_ids[i];
  g_snprintf(buf, 16, "%u", i);
  return buf;
}

const char *wh_run_flow_key(const WhRun *run, uint32_t i, char buf[WH_RUN_KEY_LEN])
{
  uint32_t op, index;
  if (run->workload && wh_workload_flow_origin(run->workload, i, &op, &index)) {
    g_snprintf(buf, WH_RUN_KEY_LEN, "op%u.%u", op, index);
    return buf;
  }
  return wh_run_flow_label(run, i, buf);
}

const WhWorkload *wh_run_workload(const WhRun *run)
{
  return run->workload;
}
