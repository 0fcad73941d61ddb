/* Scenario loading; see scenario.h. Order of checks: size and encoding of the raw
 * bytes, a scan for DTD/entity declarations, a well-formedness parse (no network, no
 * entity substitution, no DTD loading), an XInclude check, schema validation, then
 * the values: units, bounds, types and parameters through the registry. */
#include "scenario.h"

#include <libxml/parser.h>
#include <libxml/relaxng.h>
#include <libxml/xmlerror.h>
#include <string.h>

#include "file-read.h"
#include "topology.h"
#include "topology-preset.h"
#include "workload.h"
#include "units.h"
#include "wh-error.h"

extern const char wh_scenario_schema_rng[];
extern const size_t wh_scenario_schema_rng_len;

#define XINCLUDE_NS "http://www.w3.org/2001/XInclude"
#define MAX_FILE_BYTES (256u << 20)

GQuark wh_scenario_error_quark(void)
{
  return g_quark_from_static_string("wh-scenario-error");
}

static void set_free(gpointer p)
{
  WhScenarioSet *s = p;
  g_free(s->key);
  g_free(s->value);
  g_free(s->origin);
  g_free(s);
}

static void flow_free(gpointer p)
{
  WhScenarioFlow *f = p;
  g_free(f->id);
  g_free(f->src);
  g_free(f->dst);
  g_free(f);
}

static void link_free(gpointer p)
{
  WhScenarioLink *l = p;
  g_free(l->a);
  g_free(l->b);
  g_free(l);
}

static void op_free(gpointer p)
{
  WhScenarioOp *o = p;
  g_free(o->id);
  g_free(o->ranks);
  g_free(o->matrix);
  g_free(o->matrix_path);
  g_free(o->deps);
  g_free(o);
}

static void node_free(gpointer p)
{
  WhScenarioNode *n = p;
  g_free(n->id);
  g_free(n);
}

WhScenario *wh_scenario_new(const char *name, const char *topology)
{
  WhScenario *sc = g_new0(WhScenario, 1);
  sc->path = g_strdup(name);
  sc->name = g_strdup(name);
  sc->topology = g_strdup(topology);
  sc->sets = g_ptr_array_new_with_free_func(set_free);
  sc->nodes = g_ptr_array_new_with_free_func(node_free);
  sc->links = g_ptr_array_new_with_free_func(link_free);
  sc->flows = g_ptr_array_new_with_free_func(flow_free);
  sc->ops = g_ptr_array_new_with_free_func(op_free);
  sc->patterns = g_ptr_array_new_with_free_func(g_free);
  sc->iterations = 1;
  return sc;
}

void wh_scenario_free(WhScenario *sc)
{
  if (sc == NULL)
    return;
  g_free(sc->path);
  g_free(sc->name);
  g_free(sc->cc);
  g_free(sc->scheduler);
  g_free(sc->topology);
  g_free(sc->topology_preset);
  g_ptr_array_unref(sc->sets);
  g_ptr_array_unref(sc->nodes);
  g_ptr_array_unref(sc->links);
  g_ptr_array_unref(sc->flows);
  g_ptr_array_unref(sc->ops);
  g_ptr_array_unref(sc->patterns);
  g_free(sc->simai_path);
  g_free(sc->routing_path);
  g_free(sc->placement_nodes);
  g_free(sc);
}

static WhScenarioSet *new_set(const char *key, const char *value, const char *origin)
{
  WhScenarioSet *s = g_new0(WhScenarioSet, 1);
  s->key = g_strdup(key);
  s->value = g_strdup(value);
  s->origin = g_strdup(origin);
  return s;
}

static void add_set(WhScenario *sc, const char *key, const char *value, const char *origin)
{
  g_ptr_array_add(sc->sets, new_set(key, value, origin));
}

/* A set before every other: the lowest priority. */
static void insert_set(WhScenario *sc, const char *key, const char *value, const char *origin)
{
  g_ptr_array_insert(sc->sets, 0, new_set(key, value, origin));
}

void wh_scenario_add_set(WhScenario *sc, const char *key, const char *value)
{
  add_set(sc, key, value, "program");
}

void wh_scenario_add_flow(WhScenario *sc, uint32_t src, uint32_t dst, uint64_t size, WhTime start)
{
  WhScenarioFlow *f = g_new0(WhScenarioFlow, 1);
  f->src = g_strdup_printf("%u", src);
  f->dst = g_strdup_printf("%u", dst);
  f->size = size;
  f->start = start;
  g_ptr_array_add(sc->flows, f);
}

/* ---- libxml2 error capture ---- */

typedef struct {
  GString *msg;
  int line;
  int count;
} ErrorSink;

static void collect_error(void *data, xmlErrorPtr err)
{
  ErrorSink *sink = data;
  if (sink->count++ > 0)
    return;
  sink->line = err->line;
  g_autofree char *m = g_strdup(err->message ? err->message : "unknown error");
  g_strstrip(m);
  const xmlNode *node = err->node;
  if (node && node->type == XML_ELEMENT_NODE && sink->line <= 0)
    sink->line = (int)xmlGetLineNo(node);
  g_string_assign(sink->msg, m);
}

static int line_of(const char *data, const char *at)
{
  int line = 1;
  for (const char *p = data; p < at; p++)
    line += *p == '\n';
  return line;
}

/* Raw-byte checks before any parsing. */
static gboolean check_raw(const char *data, gsize len, const char *name, GError **error)
{
  const char *p = data;
  while (p < data + len && g_ascii_isspace(*p))
    p++;
  if (p == data + len)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_XML, name, 0,
                           "the file is empty");
  if (len > MAX_FILE_BYTES)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_REFUSED, name, 0,
                           "the file is larger than %u MiB", MAX_FILE_BYTES >> 20);
  const char *bad = NULL;
  if (!g_utf8_validate(data, (gssize)len, &bad))
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_REFUSED, name, line_of(data, bad),
        "the file is not valid UTF-8 (byte 0x%02x at offset %ld); the project's XML "
        "files must be UTF-8",
        (unsigned char)*bad, (long)(bad - data));
  static const char *refused[] = {"<!DOCTYPE", "<!ENTITY"};
  for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
    const char *hit = g_strstr_len(data, (gssize)len, refused[i]);
    if (hit)
      return wh_error_set_at(
          error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_REFUSED, name, line_of(data, hit),
          "%s declarations are refused: the project's XML files may not use DTDs or "
          "entities "
          "(no external entities, no entity expansion)",
          refused[i] + 2);
  }
  return TRUE;
}

static const xmlNode *find_xinclude(const xmlNode *n)
{
  for (; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE)
      continue;
    if (n->ns && n->ns->href && strcmp((const char *)n->ns->href, XINCLUDE_NS) == 0)
      return n;
    const xmlNode *c = find_xinclude(n->children);
    if (c)
      return c;
  }
  return NULL;
}

/* The attributes each element requires and allows, mirroring scenario.rng; used only
 * to turn libxml2's terse "failed to validate attributes" into a message that names
 * the line and the attribute. */
typedef struct {
  const char *element;
  const char *required[5];
  const char *optional[7];
} AttrRule;

static const AttrRule attr_rules[] = {
    {"scenario", {NULL}, {"name", "seed", "cc", "scheduler", "stop", "sample-period", NULL}},
    {"set", {"param", "value", NULL}, {NULL}},
    {"topology", {NULL}, {"type", "preset", "groups", NULL}},
    {"param", {"name", "value", NULL}, {NULL}},
    {"host", {"id", NULL}, {NULL}},
    {"switch", {"id", NULL}, {NULL}},
    {"link", {"a", "b", NULL}, {"rate", "delay", NULL}},
    {"flow", {"src", "dst", "size", NULL}, {"id", "start", NULL}},
    {"permutation", {"size", NULL}, {"start", NULL}},
    {"shift", {"size", "offset", NULL}, {"hosts", "start", NULL}},
    {"uniform", {"size", "flows", NULL}, {"hosts", "start", NULL}},
    {"workload", {NULL}, {"iterations", "simai", "keep-tp", "model", "gpus", "routing", NULL}},
    {"compute", {"id", "rank", "duration", NULL}, {"deps", NULL}},
    {"send", {"id", "src", "dst", "size", NULL}, {"deps", NULL}},
    {"collective", {"id", "kind", "ranks", NULL}, {"size", "matrix", "algorithm", "deps", NULL}},
    {"matrix", {NULL}, {NULL}},
    {"placement", {"policy", NULL}, {"nodes", "seed", NULL}},
};

static gboolean in_list(const char *const *list, const char *name)
{
  for (; *list; list++) {
    if (strcmp(*list, name) == 0)
      return TRUE;
  }
  return FALSE;
}

static gboolean diagnose_attributes(const xmlNode *n, const char *name, GError **error)
{
  for (; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE)
      continue;
    for (size_t i = 0; i < G_N_ELEMENTS(attr_rules); i++) {
      const AttrRule *r = &attr_rules[i];
      if (strcmp(r->element, (const char *)n->name) != 0)
        continue;
      for (const char *const *a = r->required; *a; a++) {
        if (!xmlHasProp(n, (const xmlChar *)*a))
          return wh_error_set_at(error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_SCHEMA, name,
                                 (int)xmlGetLineNo(n), "<%s> lacks the required attribute \"%s\"",
                                 r->element, *a);
      }
      for (const xmlAttr *a = n->properties; a; a = a->next) {
        const char *an = (const char *)a->name;
        if (!in_list(r->required, an) && !in_list(r->optional, an))
          return wh_error_set_at(error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_SCHEMA, name,
                                 (int)xmlGetLineNo(n), "<%s> has an unknown attribute \"%s\"",
                                 r->element, an);
      }
    }
    if (!diagnose_attributes(n->children, name, error))
      return FALSE;
  }
  return TRUE;
}

static const xmlNode *child_named(const xmlNode *n, const char *name)
{
  for (n = n->children; n; n = n->next) {
    if (n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0)
      return n;
  }
  return NULL;
}

/* Validates `doc` against the RELAX NG schema `rng` (rng_len bytes), which messages
 * call `what`; the scenario schema's failures are diagnosed further (a missing
 * topology, a missing or unknown attribute). */
static gboolean validate(xmlDocPtr doc, const char *name, const char *rng, gsize rng_len,
                         const char *what, GError **error)
{
  const xmlNode *root = xmlDocGetRootElement(doc);
  gboolean scenario = rng == wh_scenario_schema_rng;
  if (scenario && root && strcmp((const char *)root->name, "scenario") == 0 &&
      child_named(root, "topology") == NULL)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_SCHEMA, name,
                           (int)xmlGetLineNo(root),
                           "<scenario> lacks its <topology> element (every scenario needs one)");
  ErrorSink sink = {g_string_new(NULL), 0, 0};
  xmlRelaxNGParserCtxtPtr pctx = xmlRelaxNGNewMemParserCtxt(rng, (int)rng_len);
  xmlRelaxNGPtr schema = xmlRelaxNGParse(pctx);
  xmlRelaxNGFreeParserCtxt(pctx);
  g_assert(schema != NULL);
  xmlRelaxNGValidCtxtPtr vctx = xmlRelaxNGNewValidCtxt(schema);
  xmlRelaxNGSetValidStructuredErrors(vctx, collect_error, &sink);
  int rc = xmlRelaxNGValidateDoc(vctx, doc);
  xmlRelaxNGFreeValidCtxt(vctx);
  xmlRelaxNGFree(schema);
  gboolean ok = rc == 0;
  if (!ok && scenario && !diagnose_attributes(root, name, error)) {
    g_string_free(sink.msg, TRUE);
    return FALSE;
  }
  if (!ok)
    wh_error_set_at(error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_SCHEMA, name, sink.line,
                    "does not match %s: %s", what, sink.count ? sink.msg->str : "invalid document");
  g_string_free(sink.msg, TRUE);
  return ok;
}

/* ---- value extraction ---- */

typedef struct {
  const char *file;
  WhScenario *sc;
  GError **error;
} Loader;

static char *attr(const xmlNode *n, const char *name)
{
  xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
  if (v == NULL)
    return NULL;
  char *s = g_strdup((const char *)v);
  xmlFree(v);
  return g_strstrip(s);
}

static gboolean attr_present(const xmlNode *n, const char *name)
{
  return xmlHasProp(n, (const xmlChar *)name) != NULL;
}

static int node_line(const xmlNode *n)
{
  return (int)xmlGetLineNo(n);
}

/* Parses attribute `name` of `n` with a unit parser; absent -> *out = def. */
typedef gboolean (*UnitParser)(const char *, uint64_t *, GError **);

static gboolean unit_attr(Loader *ld, const xmlNode *n, const char *name, UnitParser parse,
                          gboolean positive, uint64_t def, uint64_t *out)
{
  g_autofree char *v = attr(n, name);
  if (v == NULL) {
    *out = def;
    return TRUE;
  }
  g_autoptr(GError) err = NULL;
  if (!parse(v, out, &err))
    return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                           node_line(n), "<%s> attribute \"%s\": %s", (const char *)n->name, name,
                           err->message);
  if (positive && *out == 0)
    return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                           node_line(n),
                           "<%s> attribute \"%s\" = \"%s\": must be greater than zero",
                           (const char *)n->name, name, v);
  return TRUE;
}

static gboolean load_set(Loader *ld, WhConfig *check, const xmlNode *n, const char *key_attr,
                         const char *prefix)
{
  g_autofree char *key = attr(n, key_attr);
  g_autofree char *value = attr(n, "value");
  g_autofree char *full = prefix ? g_strdup_printf("%s::%s", prefix, key) : g_strdup(key);
  g_autofree char *origin = g_strdup_printf("%s:%d", ld->file, node_line(n));
  g_autoptr(GError) err = NULL;
  if (!wh_config_set(check, full, value, origin, &err))
    return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                           node_line(n), "<%s %s=\"%s\">: %s", (const char *)n->name, key_attr, key,
                           err->message);
  add_set(ld->sc, full, value, origin);
  return TRUE;
}

/* <topology preset=...>: the preset's settings (topology-preset.h) become the
 * lowest-priority sets of the scenario, before every set of its own; the sets then
 * read: the preset's head, its groups, its settings (each in the preset's order), the
 * scenario's own. */
static gboolean load_preset(Loader *ld, const xmlNode *t, const char *name)
{
  WhScenario *sc = ld->sc;
  int line = node_line(t);
  const WhTopologyPreset *p = wh_topology_preset_lookup(name);
  if (p == NULL)
    return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                           line,
                           "<topology> attribute \"preset\": unknown preset \"%s\" (known: %s)",
                           name, wh_topology_preset_names());
  g_autofree char *groups = attr(t, "groups");
  int64_t g = p->groups_default;
  if (groups && (!wh_units_parse_int(groups, &g, NULL) || g < p->groups_min || g > p->groups_max))
    return wh_error_set_at(
        ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file, line,
        "<topology preset=\"%s\"> attribute \"groups\" = \"%s\": expected %u..%u (%s)", p->name,
        groups, p->groups_min, p->groups_max, p->groups_limit);
  g_autofree char *origin = g_strdup_printf("%s:%d (preset %s)", ld->file, line, p->name);
  g_autofree char *groups_key = g_strdup_printf("%s::%s", p->topology, p->groups_param);
  g_autofree char *gv = g_strdup_printf("%" G_GINT64_FORMAT, g);
  /* each inserted at the front: the last first */
  for (size_t i = p->n_settings; i-- > 0;)
    insert_set(sc, p->settings[i].key, p->settings[i].value, origin);
  insert_set(sc, groups_key, gv, origin);
  for (size_t i = p->n_head; i-- > 0;)
    insert_set(sc, p->head[i].key, p->head[i].value, origin);
  sc->topology_preset = g_strdup(p->name);
  return TRUE;
}

/* Loads a custom topology's <host>, <switch> or <link> element `n` (named `el`); `ids`
 * holds the node ids declared so far. */
static gboolean load_custom_element(Loader *ld, const xmlNode *n, const char *el, GHashTable *ids)
{
  WhScenario *sc = ld->sc;
  if (strcmp(el, "host") == 0 || strcmp(el, "switch") == 0) {
    WhScenarioNode *nd = g_new0(WhScenarioNode, 1);
    nd->id = attr(n, "id");
    nd->is_switch = el[0] == 's';
    nd->line = node_line(n);
    g_ptr_array_add(sc->nodes, nd);
    if (g_hash_table_contains(ids, nd->id))
      return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                             nd->line, "<%s> attribute \"id\": duplicate node id \"%s\"", el,
                             nd->id);
    g_hash_table_add(ids, nd->id);
  } else {
    WhScenarioLink *l = g_new0(WhScenarioLink, 1);
    g_ptr_array_add(sc->links, l);
    l->a = attr(n, "a");
    l->b = attr(n, "b");
    l->line = node_line(n);
    const char *ends[2] = {l->a, l->b};
    for (int i = 0; i < 2; i++) {
      if (!g_hash_table_contains(ids, ends[i]))
        return wh_error_set_at(
            ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file, l->line,
            "<link> attribute \"%s\": no host or switch \"%s\" declared before it", i ? "b" : "a",
            ends[i]);
    }
    uint64_t delay;
    if (!unit_attr(ld, n, "rate", wh_units_parse_rate, TRUE, 0, &l->rate))
      return FALSE;
    g_autofree char *d = attr(n, "delay");
    l->has_delay = d != NULL;
    if (!unit_attr(ld, n, "delay", wh_units_parse_time, FALSE, 0, &delay))
      return FALSE;
    l->delay = delay;
  }
  return TRUE;
}

static gboolean load_topology(Loader *ld, WhConfig *check, const xmlNode *t)
{
  WhScenario *sc = ld->sc;
  g_autofree char *type = attr(t, "type");
  g_autofree char *preset = attr(t, "preset");
  g_autofree char *groups = attr(t, "groups");
  if ((type == NULL) == (preset == NULL))
    return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                           node_line(t),
                           "<topology>: give either a \"type\" or a \"preset\" attribute");
  if (groups && preset == NULL)
    return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                           node_line(t),
                           "<topology> attribute \"groups\": only with preset=\"frontier\"");
  if (preset) {
    if (!load_preset(ld, t, preset))
      return FALSE;
    type = g_strdup(wh_topology_preset_lookup(preset)->topology);
  }
  gboolean custom = g_strcmp0(type, WH_CUSTOM_TOPOLOGY) == 0;
  const WhTypeInfo *info = custom ? NULL : wh_registry_lookup(type);
  if (!custom && (info == NULL || g_strcmp0(info->kind, "topology") != 0)) {
    g_autoptr(GString) known = g_string_new(WH_CUSTOM_TOPOLOGY);
    for (const WhTopologyClass *const *c = wh_topology_classes(); *c; c++)
      g_string_append_printf(known, ", %s", (*c)->type->name);
    return wh_error_set_at(
        ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file, node_line(t),
        "<topology> attribute \"type\": unknown topology type \"%s\" (known: %s)", type,
        known->str);
  }
  sc->topology = g_strdup(type);
  sc->topology_line = node_line(t);
  g_autoptr(GHashTable) ids = g_hash_table_new(g_str_hash, g_str_equal);
  for (const xmlNode *n = t->children; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE)
      continue;
    const char *el = (const char *)n->name;
    if (strcmp(el, "param") == 0) {
      if (custom)
        return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                               node_line(n), "<param>: a %s topology has no parameters",
                               WH_CUSTOM_TOPOLOGY);
      if (!load_set(ld, check, n, "name", type))
        return FALSE;
      continue;
    }
    if (!custom)
      return wh_error_set_at(
          ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file, node_line(n),
          "<%s>: only a %s topology lists hosts, switches and links", el, WH_CUSTOM_TOPOLOGY);
    if (!load_custom_element(ld, n, el, ids))
      return FALSE;
  }
  return TRUE;
}

/* A positive integer attribute (required). */
static gboolean count_attr(Loader *ld, const xmlNode *n, const char *name, int64_t max,
                           uint32_t *out)
{
  g_autofree char *v = attr(n, name);
  int64_t x;
  if (v == NULL || !wh_units_parse_int(v, &x, NULL) || x < 1 || x > max)
    return wh_error_set_at(
        ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file, node_line(n),
        "<%s> attribute \"%s\" = \"%s\": expected an integer in 1..%" G_GINT64_FORMAT,
        (const char *)n->name, name, v ? v : "", max);
  *out = (uint32_t)x;
  return TRUE;
}

static gboolean load_pattern(Loader *ld, const xmlNode *n)
{
  WhScenarioPattern *p = g_new0(WhScenarioPattern, 1);
  g_ptr_array_add(ld->sc->patterns, p);
  p->line = node_line(n);
  p->kind = strcmp((const char *)n->name, "shift") == 0 ? WH_PATTERN_SHIFT : WH_PATTERN_UNIFORM;
  uint64_t start;
  if (!unit_attr(ld, n, "size", wh_units_parse_bytes, TRUE, 0, &p->size) ||
      !unit_attr(ld, n, "start", wh_units_parse_time, FALSE, 0, &start))
    return FALSE;
  p->start = start;
  if (p->kind == WH_PATTERN_SHIFT ? !count_attr(ld, n, "offset", 1 << 24, &p->offset)
                                  : !count_attr(ld, n, "flows", 4096, &p->flows))
    return FALSE;
  g_autofree char *hosts = attr(n, "hosts");
  if (hosts) {
    /* FIRST:COUNT */
    g_auto(GStrv) parts = g_strsplit(hosts, ":", 3);
    int64_t first, count;
    if (g_strv_length(parts) != 2 || !wh_units_parse_int(parts[0], &first, NULL) ||
        !wh_units_parse_int(parts[1], &count, NULL) || first < 0 || count < 2 ||
        first + count > (1 << 24))
      return wh_error_set_at(
          ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file, p->line,
          "<%s> attribute \"hosts\" = \"%s\": expected FIRST:COUNT (host indices "
          "FIRST .. FIRST+COUNT-1, COUNT >= 2)",
          (const char *)n->name, hosts);
    p->first = (uint32_t)first;
    p->count = (uint32_t)count;
  }
  return TRUE;
}

static gboolean load_flows(Loader *ld, const xmlNode *fl)
{
  WhScenario *sc = ld->sc;
  g_autoptr(GHashTable) ids = g_hash_table_new(g_str_hash, g_str_equal);
  for (const xmlNode *n = fl->children; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE)
      continue;
    if (strcmp((const char *)n->name, "permutation") == 0) {
      if (sc->permutation)
        return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                               node_line(n), "<permutation>: only one permutation per scenario");
      sc->permutation = TRUE;
      sc->perm_line = node_line(n);
      uint64_t start;
      if (!unit_attr(ld, n, "size", wh_units_parse_bytes, TRUE, 0, &sc->perm_size) ||
          !unit_attr(ld, n, "start", wh_units_parse_time, FALSE, 0, &start))
        return FALSE;
      sc->perm_start = start;
      continue;
    }
    if (strcmp((const char *)n->name, "shift") == 0 ||
        strcmp((const char *)n->name, "uniform") == 0) {
      if (!load_pattern(ld, n))
        return FALSE;
      continue;
    }
    WhScenarioFlow *f = g_new0(WhScenarioFlow, 1);
    g_ptr_array_add(sc->flows, f);
    f->id = attr(n, "id");
    f->src = attr(n, "src");
    f->dst = attr(n, "dst");
    f->line = node_line(n);
    uint64_t start;
    if (!unit_attr(ld, n, "size", wh_units_parse_bytes, TRUE, 0, &f->size) ||
        !unit_attr(ld, n, "start", wh_units_parse_time, FALSE, 0, &start))
      return FALSE;
    f->start = start;
    if (f->id) {
      if (g_hash_table_contains(ids, f->id))
        return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                               f->line, "<flow> attribute \"id\": duplicate flow id \"%s\"", f->id);
      g_hash_table_add(ids, f->id);
    }
  }
  return TRUE;
}

static gboolean int_attr(Loader *ld, const xmlNode *n, const char *name, uint32_t *out)
{
  g_autofree char *v = attr(n, name);
  int64_t x;
  if (!wh_units_parse_int(v, &x, NULL) || x < 0 || x > G_MAXUINT32)
    return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                           node_line(n), "<%s> attribute \"%s\" = \"%s\": not a rank number",
                           (const char *)n->name, name, v ? v : "");
  *out = (uint32_t)x;
  return TRUE;
}

/* "0-7", "0,2,4", "0-3,8-11" */
static gboolean ranks_attr(Loader *ld, const xmlNode *n, WhScenarioOp *o)
{
  g_autofree char *v = attr(n, "ranks");
  g_auto(GStrv) parts = g_strsplit(v, ",", -1);
  GArray *r = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (char **p = parts; *p; p++) {
    char *dash = strchr(*p, '-');
    int64_t a, b;
    gboolean ok;
    if (dash) {
      *dash = '\0';
      ok = wh_units_parse_int(g_strstrip(*p), &a, NULL) &&
           wh_units_parse_int(g_strstrip(dash + 1), &b, NULL);
    } else {
      ok = wh_units_parse_int(g_strstrip(*p), &a, NULL);
      b = a;
    }
    if (!ok || a < 0 || b < a || b - a > 1000000) {
      g_array_free(r, TRUE);
      return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                             node_line(n),
                             "<collective> attribute \"ranks\" = \"%s\": expected ranks such as "
                             "\"0-7\" or \"0,2,4\"",
                             v);
    }
    for (int64_t x = a; x <= b; x++) {
      uint32_t u = (uint32_t)x;
      g_array_append_val(r, u);
    }
  }
  o->n_ranks = r->len;
  o->ranks = (uint32_t *)g_array_free(r, FALSE);
  return TRUE;
}

/* Refuses any child element of a <workload> whose ops come from elsewhere: `what` is
 * its attribute, `why` where its ops come from. */
static gboolean no_op_elements(Loader *ld, const xmlNode *wl, const char *what, const char *why)
{
  for (const xmlNode *n = wl->children; n; n = n->next) {
    if (n->type == XML_ELEMENT_NODE)
      return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                             node_line(n), "<%s>: a <workload %s=...> %s", (const char *)n->name,
                             what, why);
  }
  return TRUE;
}

/* <workload model="...">: a model preset; its parameters are wh::ModelPreset::* (set
 * elements). */
static gboolean load_workload_model(Loader *ld, const xmlNode *wl, const char *model)
{
  WhScenario *sc = ld->sc;
  g_autoptr(WhConfig) check = wh_config_new();
  g_autofree char *origin = g_strdup_printf("%s:%d", ld->file, node_line(wl));
  g_autoptr(GError) err = NULL;
  if (!wh_config_set_param(check, "wh::ModelPreset", "Model", model, origin, &err))
    return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                           node_line(wl), "<workload> attribute \"model\": %s", err->message);
  add_set(sc, "wh::ModelPreset::Model", model, origin);
  sc->model_preset = TRUE;
  g_autofree char *routing = attr(wl, "routing");
  if (routing) { /* relative to the scenario file's directory */
    g_autofree char *dir = g_path_get_dirname(ld->file);
    sc->routing_path =
        g_path_is_absolute(routing) ? g_strdup(routing) : g_build_filename(dir, routing, NULL);
  }
  if (!no_op_elements(ld, wl, "model", "generates its ops from the preset"))
    return FALSE;
  if (attr_present(wl, "simai"))
    return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                           node_line(wl), "<workload>: \"model\" and \"simai\" exclude each other");
  return TRUE;
}

/* <workload simai="...">: the path is relative to the scenario file's directory. */
static gboolean load_workload_simai(Loader *ld, const xmlNode *wl, const char *simai)
{
  WhScenario *sc = ld->sc;
  g_autofree char *dir = g_path_get_dirname(ld->file);
  sc->simai_path = g_path_is_absolute(simai) ? g_strdup(simai) : g_build_filename(dir, simai, NULL);
  g_autofree char *keep = attr(wl, "keep-tp");
  sc->simai_keep_tp = keep && (strcmp(keep, "true") == 0 || strcmp(keep, "1") == 0);
  g_autofree char *gpus = attr(wl, "gpus");
  int64_t g = 0;
  if (gpus && (!wh_units_parse_int(gpus, &g, NULL) || g < 1 || g > G_MAXUINT32))
    return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                           node_line(wl),
                           "<workload> attribute \"gpus\" = \"%s\": expected a GPU count", gpus);
  sc->simai_gpus = (uint32_t)g;
  return no_op_elements(ld, wl, "simai", "takes its ops from the SimAI file only");
}

gboolean wh_scenario_parse_matrix(const char *text, uint32_t n, const char *file, int line,
                                  uint64_t **out, GError **error)
{
  g_autofree uint64_t *m = g_new0(uint64_t, (uint64_t)n * n);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  uint32_t rows = 0;
  for (char **l = lines; *l; l++, line++) {
    char *hash = strchr(*l, '#');
    if (hash)
      *hash = '\0';
    g_auto(GStrv) parts = g_strsplit(*l, ";", -1);
    for (char **p = parts; *p; p++) {
      g_auto(GStrv) tok = g_strsplit_set(*p, " \t\r,", -1);
      uint32_t k = 0;
      for (char **t = tok; *t; t++) {
        if (**t == '\0')
          continue;
        if (rows >= n)
          return wh_error_set_at(error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, file, line,
                                 "<matrix>: more than %u rows (one per rank of the group)", n);
        if (k >= n)
          return wh_error_set_at(error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, file, line,
                                 "<matrix> row %u: more than %u entries (the group has %u ranks)",
                                 rows, n, n);
        g_autoptr(GError) err = NULL;
        if (**t == '-' ||
            (strcmp(*t, "0") != 0 && !wh_units_parse_bytes(*t, &m[(uint64_t)rows * n + k], &err)))
          return wh_error_set_at(error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, file, line,
                                 "<matrix> row %u, entry %u = \"%s\": %s", rows, k, *t,
                                 **t == '-' ? "a negative size (entries are bytes sent, 0 or more)"
                                            : err->message);
        k++;
      }
      if (k > 0 && k < n)
        return wh_error_set_at(
            error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, file, line,
            "<matrix> row %u: %u entries; the group has %u ranks (expected %u x %u)", rows, k, n, n,
            n);
      rows += k > 0;
    }
  }
  if (rows != n)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, file, line - 1,
                           "<matrix>: %u rows; the group has %u ranks (expected %u x %u)", rows, n,
                           n, n);
  *out = g_steal_pointer(&m);
  return TRUE;
}

/* The size matrix of an all-to-allv: inline (<matrix> rows </matrix>) or from the
 * file its "matrix" attribute names (read when the run is built); never a "size". */
static gboolean load_matrix(Loader *ld, const xmlNode *n, WhScenarioOp *o)
{
  const xmlNode *m = child_named(n, "matrix");
  g_autofree char *path = attr(n, "matrix");
  if (o->n_ranks > WH_SCENARIO_MAX_MATRIX_RANKS)
    return wh_error_set_at(
        ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file, o->line,
        "<collective kind=\"all-to-allv\"> attribute \"ranks\": %u ranks; a size "
        "matrix covers at most %u (%u MB of sizes)",
        o->n_ranks, WH_SCENARIO_MAX_MATRIX_RANKS,
        (WH_SCENARIO_MAX_MATRIX_RANKS * WH_SCENARIO_MAX_MATRIX_RANKS / 1024) * 8 / 1024);
  if (attr_present(n, "size") || (m != NULL) == (path != NULL))
    return wh_error_set_at(
        ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file, o->line,
        "<collective kind=\"all-to-allv\">: takes its sizes from a matrix, either a "
        "<matrix> child or a \"matrix\" attribute naming a file (not both, and no "
        "\"size\")");
  if (path) {
    g_autofree char *dir = g_path_get_dirname(ld->file);
    o->matrix_path = g_path_is_absolute(path) ? g_strdup(path) : g_build_filename(dir, path, NULL);
    return TRUE;
  }
  xmlChar *content = xmlNodeGetContent(m);
  g_autofree char *text = g_strdup(content ? (const char *)content : "");
  xmlFree(content);
  return wh_scenario_parse_matrix(text, o->n_ranks, ld->file, node_line(m), &o->matrix, ld->error);
}

/* The kind-specific attributes of op element `n` (compute, send or collective). */
static gboolean load_op_kind(Loader *ld, const xmlNode *n, WhScenarioOp *o)
{
  const char *el = (const char *)n->name;
  uint64_t v = 0;
  if (strcmp(el, "compute") == 0) {
    o->kind = WH_OP_COMPUTE;
    if (!int_attr(ld, n, "rank", &o->rank) ||
        !unit_attr(ld, n, "duration", wh_units_parse_time, FALSE, 0, &v))
      return FALSE;
    o->duration = v;
    return TRUE;
  }
  if (strcmp(el, "send") == 0) {
    o->kind = WH_OP_SEND;
    return int_attr(ld, n, "src", &o->rank) && int_attr(ld, n, "dst", &o->dst) &&
           unit_attr(ld, n, "size", wh_units_parse_bytes, FALSE, 0, &o->bytes);
  }
  o->kind = WH_OP_COLLECTIVE;
  g_autofree char *kind = attr(n, "kind");
  g_autofree char *algo = attr(n, "algorithm");
  WhCollKind ck;
  WhCollAlgo ca;
  if (!wh_coll_kind_parse(kind, &ck))
    return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                           o->line,
                           "<collective> attribute \"kind\" = \"%s\": expected all-reduce, "
                           "reduce-scatter, all-gather, all-to-all or all-to-allv",
                           kind);
  gboolean a2a = ck == WH_COLL_ALL_TO_ALL || ck == WH_COLL_ALL_TO_ALLV;
  if (algo == NULL && a2a)
    ca = (WhCollAlgo)-1; /* wh::Workload::AllToAll, resolved when the run is built */
  else if (algo == NULL)
    ca = WH_ALGO_RING;
  else if (!wh_coll_algo_parse(algo, &ca))
    return wh_error_set_at(
        ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file, o->line,
        "<collective> attribute \"algorithm\" = \"%s\": expected ring, pairwise, "
        "direct, rccl or halo",
        algo);
  o->coll = ck;
  o->algo = ca;
  if (!ranks_attr(ld, n, o))
    return FALSE;
  if (ck == WH_COLL_ALL_TO_ALLV)
    return load_matrix(ld, n, o);
  if (!attr_present(n, "size") || attr_present(n, "matrix") || child_named(n, "matrix"))
    return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                           o->line,
                           "<collective kind=\"%s\">: needs a \"size\" attribute and no matrix (a "
                           "size matrix is for kind=\"all-to-allv\")",
                           kind);
  return unit_attr(ld, n, "size", wh_units_parse_bytes, FALSE, 0, &o->bytes);
}

/* The "deps" attribute of op element `n`: ids of ops defined before it (`ids`: id ->
 * index + 1). */
static gboolean load_op_deps(Loader *ld, const xmlNode *n, WhScenarioOp *o, GHashTable *ids)
{
  g_autofree char *deps = attr(n, "deps");
  if (deps == NULL)
    return TRUE;
  g_auto(GStrv) names = g_strsplit_set(deps, " ,\t\n", -1);
  GArray *d = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (char **p = names; *p; p++) {
    if (**p == '\0')
      continue;
    gpointer idx = g_hash_table_lookup(ids, *p);
    if (idx == NULL) {
      g_array_free(d, TRUE);
      return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                             o->line,
                             "<%s> attribute \"deps\": \"%s\" is not an op defined before this one",
                             (const char *)n->name, *p);
    }
    uint32_t u = GPOINTER_TO_UINT(idx) - 1;
    g_array_append_val(d, u);
  }
  o->n_deps = d->len;
  o->deps = (uint32_t *)g_array_free(d, FALSE);
  return TRUE;
}

static gboolean load_workload(Loader *ld, const xmlNode *wl)
{
  WhScenario *sc = ld->sc;
  sc->workload_line = node_line(wl);
  g_autofree char *it = attr(wl, "iterations");
  if (it) {
    int64_t v;
    if (!wh_units_parse_int(it, &v, NULL) || v < 1 || v > 100000)
      return wh_error_set_at(
          ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file, node_line(wl),
          "<workload> attribute \"iterations\" = \"%s\": expected 1..100000", it);
    sc->iterations = (uint32_t)v;
  }
  g_autofree char *model = attr(wl, "model");
  if (model)
    return load_workload_model(ld, wl, model);
  if (attr_present(wl, "routing"))
    return wh_error_set_at(
        ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file, node_line(wl),
        "<workload> attribute \"routing\": applies to a model preset (model=...) only");
  g_autofree char *simai = attr(wl, "simai");
  if (!simai && attr_present(wl, "gpus"))
    return wh_error_set_at(
        ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file, node_line(wl),
        "<workload> attribute \"gpus\": applies to a SimAI file (simai=...) only");
  if (simai)
    return load_workload_simai(ld, wl, simai);
  g_autoptr(GHashTable) ids = g_hash_table_new(g_str_hash, g_str_equal); /* id -> index+1 */
  for (const xmlNode *n = wl->children; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE)
      continue;
    WhScenarioOp *o = g_new0(WhScenarioOp, 1);
    g_ptr_array_add(sc->ops, o);
    o->id = attr(n, "id");
    o->line = node_line(n);
    if (g_hash_table_contains(ids, o->id))
      return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                             o->line, "<%s> attribute \"id\": duplicate op id \"%s\"",
                             (const char *)n->name, o->id);
    if (!load_op_kind(ld, n, o) || !load_op_deps(ld, n, o, ids))
      return FALSE;
    g_hash_table_insert(ids, o->id, GUINT_TO_POINTER(sc->ops->len));
  }
  return TRUE;
}

/* <placement policy="contiguous|per-switch|random|nodes" [nodes="N N ..."] [seed]>. */
static gboolean load_placement(Loader *ld, const xmlNode *n)
{
  WhScenario *sc = ld->sc;
  int line = node_line(n);
  static const char *const names[] = {"contiguous", "per-switch", "random", "nodes", NULL};
  g_autofree char *policy = attr(n, "policy");
  g_autofree char *nodes = attr(n, "nodes");
  g_autofree char *seed = attr(n, "seed");
  int k = 0;
  while (names[k] && strcmp(names[k], policy) != 0)
    k++;
  if (names[k] == NULL)
    return wh_error_set_at(
        ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file, line,
        "<placement> attribute \"policy\" = \"%s\": expected contiguous, per-switch, "
        "random or nodes",
        policy);
  sc->placement = (WhPlacement)k;
  sc->placement_line = line;
  if ((nodes != NULL) != (sc->placement == WH_PLACEMENT_NODES))
    return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                           line, "<placement> attribute \"nodes\": %s",
                           nodes ? "only with policy=\"nodes\""
                                 : "policy=\"nodes\" needs the node list");
  if (seed && sc->placement != WH_PLACEMENT_RANDOM)
    return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                           line, "<placement> attribute \"seed\": only with policy=\"random\"");
  if (seed) {
    int64_t v;
    if (!wh_units_parse_int(seed, &v, NULL) || v < 0)
      return wh_error_set_at(
          ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file, line,
          "<placement> attribute \"seed\": \"%s\" is not a non-negative integer", seed);
    sc->placement_seed = (uint64_t)v;
    sc->has_placement_seed = TRUE;
  }
  if (nodes == NULL)
    return TRUE;
  g_auto(GStrv) tok = g_strsplit_set(nodes, " \t\n,", -1);
  g_autoptr(GArray) list = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (char **t = tok; *t; t++) {
    if (**t == '\0')
      continue;
    int64_t v;
    if (!wh_units_parse_int(*t, &v, NULL) || v < 0 || v >= (1 << 24))
      return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                             line, "<placement> attribute \"nodes\": \"%s\" is not a node index",
                             *t);
    if (!g_hash_table_add(seen, GUINT_TO_POINTER((guint)v + 1)))
      return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                             line, "<placement> attribute \"nodes\": node %s is listed twice", *t);
    uint32_t u = (uint32_t)v;
    g_array_append_val(list, u);
  }
  if (list->len == 0)
    return wh_error_set_at(ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file,
                           line, "<placement> attribute \"nodes\": the list is empty");
  sc->n_placement_nodes = list->len;
  sc->placement_nodes = (uint32_t *)g_array_free(g_steal_pointer(&list), FALSE);
  return TRUE;
}

static gboolean load_root(Loader *ld, const xmlNode *root)
{
  WhScenario *sc = ld->sc;
  g_autoptr(WhConfig) check = wh_config_new();
  sc->name = attr(root, "name");
  g_autofree char *seed = attr(root, "seed");
  if (seed) {
    g_autoptr(GError) err = NULL;
    int64_t v;
    if (!wh_units_parse_int(seed, &v, &err) || v < 0)
      return wh_error_set_at(
          ld->error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_VALUE, ld->file, node_line(root),
          "<scenario> attribute \"seed\": \"%s\" is not a non-negative integer", seed);
    sc->seed = (uint64_t)v;
    sc->has_seed = TRUE;
  }
  sc->root_line = node_line(root);
  sc->cc = attr(root, "cc");
  sc->scheduler = attr(root, "scheduler");
  uint64_t stop;
  if (!unit_attr(ld, root, "stop", wh_units_parse_time, TRUE, 0, &stop))
    return FALSE;
  uint64_t sample;
  if (!unit_attr(ld, root, "sample-period", wh_units_parse_time, TRUE, 0, &sample))
    return FALSE;
  sc->sample_period = sample;
  sc->stop = stop;
  for (const xmlNode *n = root->children; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE)
      continue;
    const char *el = (const char *)n->name;
    gboolean ok = TRUE;
    if (strcmp(el, "set") == 0)
      ok = load_set(ld, check, n, "param", NULL);
    else if (strcmp(el, "topology") == 0)
      ok = load_topology(ld, check, n);
    else if (strcmp(el, "flows") == 0)
      ok = load_flows(ld, n);
    else if (strcmp(el, "workload") == 0)
      ok = load_workload(ld, n);
    else if (strcmp(el, "placement") == 0)
      ok = load_placement(ld, n);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

gpointer wh_xml_read_validated(const char *data, gsize len, const char *name, const char *rng,
                               gsize rng_len, const char *what, GError **error)
{
  if (!check_raw(data, len, name, error))
    return NULL;
  ErrorSink sink = {g_string_new(NULL), 0, 0};
  xmlSetStructuredErrorFunc(&sink, collect_error);
  int opts = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES |
             XML_PARSE_NOCDATA;
  xmlDocPtr doc = xmlReadMemory(data, (int)len, name, NULL, opts);
  xmlSetStructuredErrorFunc(NULL, NULL);
  if (doc == NULL) {
    if (strstr(sink.msg->str, "XML_PARSE_HUGE"))
      g_string_assign(sink.msg, "elements nested too deeply (more than 256 levels)");
    wh_error_set_at(error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_XML, name, sink.line,
                    "malformed XML: %s", sink.count ? sink.msg->str : "cannot parse");
    g_string_free(sink.msg, TRUE);
    return NULL;
  }
  g_string_free(sink.msg, TRUE);
  const xmlNode *root = xmlDocGetRootElement(doc);
  const xmlNode *xi = find_xinclude(root);
  gboolean ok = FALSE;
  if (doc->encoding && g_ascii_strcasecmp((const char *)doc->encoding, "UTF-8") != 0) {
    wh_error_set_at(error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_REFUSED, name, 1,
                    "the file declares encoding \"%s\"; the project's XML files must be UTF-8",
                    (const char *)doc->encoding);
  } else if (doc->intSubset || doc->extSubset) {
    wh_error_set_at(error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_REFUSED, name, 0,
                    "DTDs are refused in the project's XML files");
  } else if (xi) {
    wh_error_set_at(error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_REFUSED, name, node_line(xi),
                    "XInclude is refused: the file must be self-contained");
  } else {
    ok = validate(doc, name, rng, rng_len, what, error);
  }
  if (!ok)
    g_clear_pointer(&doc, xmlFreeDoc);
  return doc;
}

WhScenario *wh_scenario_load_memory(const char *data, gsize len, const char *name, GError **error)
{
  wh_registry_init();
  xmlDocPtr doc = wh_xml_read_validated(data, len, name, wh_scenario_schema_rng,
                                        wh_scenario_schema_rng_len, "the scenario schema", error);
  if (doc == NULL)
    return NULL;
  WhScenario *sc = wh_scenario_new(name, NULL);
  g_clear_pointer(&sc->name, g_free);
  Loader ld = {name, sc, error};
  if (!load_root(&ld, xmlDocGetRootElement(doc)))
    g_clear_pointer(&sc, wh_scenario_free);
  else if (sc->name == NULL)
    sc->name = g_path_get_basename(name);
  xmlFreeDoc(doc);
  return sc;
}

WhScenario *wh_scenario_load(const char *path, GError **error)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autoptr(GError) err = NULL;
  if (!wh_file_read(path, MAX_FILE_BYTES, &data, &len, &err)) {
    wh_error_set_at(error, WH_SCENARIO_ERROR, (int)WH_SCENARIO_ERROR_IO, path, 0, "%s",
                    err->message);
    return NULL;
  }
  return wh_scenario_load_memory(data, len, path, error);
}
