/* Type registry and configuration store; see registry.h. The registry is a process-
 * wide table filled once at start-up; configurations are per run. */
#include "registry.h"

#include <string.h>
#include "rng.h"
#include "units.h"

GQuark wh_config_error_quark(void)
{
  return g_quark_from_static_string("wh-config-error");
}

static GHashTable *types; /* name -> const WhTypeInfo* */

gboolean wh_registry_register(const WhTypeInfo *info, GError **error)
{
  g_return_val_if_fail(info != NULL && info->name != NULL, FALSE);
  if (types == NULL)
    types = g_hash_table_new(g_str_hash, g_str_equal);
  if (g_hash_table_contains(types, info->name)) {
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_UNKNOWN_TYPE,
                "type \"%s\" is already registered", info->name);
    return FALSE;
  }
  for (const WhParamSpec *p = info->params; p && p->name; p++) {
    WhParamValue v;
    g_autoptr(GError) err = NULL;
    if (!wh_param_parse(p, p->def, &v, &err)) {
      g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                  "type \"%s\": the default of %s does not parse: %s", info->name, p->name,
                  err->message);
      return FALSE;
    }
  }
  g_hash_table_insert(types, (gpointer)info->name, (gpointer)info);
  return TRUE;
}

const WhTypeInfo *wh_registry_lookup(const char *type_name)
{
  return types ? g_hash_table_lookup(types, type_name) : NULL;
}

const WhParamSpec *wh_type_find_param(const WhTypeInfo *type, const char *param)
{
  for (const WhParamSpec *p = type->params; p && p->name; p++) {
    if (strcmp(p->name, param) == 0)
      return p;
  }
  return NULL;
}

static gint compare_type_names(gconstpointer a, gconstpointer b)
{
  const WhTypeInfo *x = *(const WhTypeInfo *const *)a;
  const WhTypeInfo *y = *(const WhTypeInfo *const *)b;
  return strcmp(x->name, y->name);
}

GPtrArray *wh_registry_types(void)
{
  GPtrArray *arr = g_ptr_array_new();
  if (types) {
    GHashTableIter it;
    gpointer v;
    g_hash_table_iter_init(&it, types);
    while (g_hash_table_iter_next(&it, NULL, &v))
      g_ptr_array_add(arr, v);
  }
  g_ptr_array_sort(arr, compare_type_names);
  return arr;
}

const char *wh_param_kind_unit(WhParamKind kind)
{
  switch (kind) {
  case WH_PARAM_INT:
    return "integer";
  case WH_PARAM_DOUBLE:
    return "number";
  case WH_PARAM_BOOL:
    return "boolean";
  case WH_PARAM_RATE:
    return "rate (bps, kbps/Kbps, Mbps, Gbps, Tbps; or b/s, Kb/s, Mb/s, Gb/s, Tb/s)";
  case WH_PARAM_BYTES:
    return "size (B, KB/kB, MB, GB, TB; KiB, MiB, GiB, TiB)";
  case WH_PARAM_TIME:
    return "time (ps, ns, us, ms, s)";
  case WH_PARAM_CHOICE:
    return "choice";
  }
  return "?";
}

static gboolean check_bounds(const WhParamSpec *spec, const char *text, double v, GError **error)
{
  if ((spec->check & WH_CHECK_POSITIVE) && !(v > 0)) {
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                "%s = \"%s\": must be greater than zero", spec->name, text);
    return FALSE;
  }
  if ((spec->check & WH_CHECK_MIN) && v < spec->min) {
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                "%s = \"%s\": must be at least %g", spec->name, text, spec->min);
    return FALSE;
  }
  if ((spec->check & WH_CHECK_MAX) && v > spec->max) {
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                "%s = \"%s\": must be at most %g", spec->name, text, spec->max);
    return FALSE;
  }
  return TRUE;
}

gboolean wh_param_parse(const WhParamSpec *spec, const char *text, WhParamValue *out,
                        GError **error)
{
  GError *err = NULL;
  gboolean ok = FALSE;
  double num = 0;
  switch (spec->kind) {
  case WH_PARAM_INT:
    ok = wh_units_parse_int(text, &out->i, &err);
    num = (double)out->i;
    break;
  case WH_PARAM_DOUBLE:
    ok = wh_units_parse_double(text, &out->d, &err);
    num = out->d;
    break;
  case WH_PARAM_BOOL:
    ok = wh_units_parse_bool(text, &out->b, &err);
    num = out->b;
    break;
  case WH_PARAM_RATE:
    ok = wh_units_parse_rate(text, &out->u, &err);
    num = (double)out->u;
    break;
  case WH_PARAM_BYTES:
    ok = wh_units_parse_bytes(text, &out->u, &err);
    num = (double)out->u;
    break;
  case WH_PARAM_TIME:
    ok = wh_units_parse_time(text, &out->t, &err);
    num = (double)out->t;
    break;
  case WH_PARAM_CHOICE:
    for (int i = 0; spec->choices[i]; i++) {
      if (g_strcmp0(text, spec->choices[i]) == 0) {
        out->choice = i;
        return TRUE;
      }
    }
    {
      g_autofree char *list = g_strjoinv(", ", (char **)spec->choices);
      g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE, "%s = \"%s\": not one of %s",
                  spec->name, text ? text : "", list);
    }
    return FALSE;
  }
  if (!ok) { /* the units error, its domain and code kept, prefixed with the name */
    g_propagate_prefixed_error(error, err, "%s: ", spec->name);
    return FALSE;
  }
  return check_bounds(spec, text, num, error);
}

/* Parameter tables, printed by `whsim list`. */
void wh_registry_print(FILE *out)
{
  g_autoptr(GPtrArray) arr = wh_registry_types();
  for (guint i = 0; i < arr->len; i++) {
    const WhTypeInfo *t = arr->pdata[i];
    fprintf(out, "%s  [%s]\n    %s\n", t->name, t->kind, t->help);
    for (const WhParamSpec *p = t->params; p && p->name; p++) {
      fprintf(out, "    %-22s default %-12s %s\n", p->name, p->def, wh_param_kind_unit(p->kind));
      fprintf(out, "    %-22s %s\n", "", p->help);
      if (p->kind == WH_PARAM_CHOICE) {
        g_autofree char *list = g_strjoinv(", ", (char **)p->choices);
        fprintf(out, "    %-22s one of: %s\n", "", list);
      }
    }
    fputc('\n', out);
  }
}

typedef struct {
  WhParamValue value;
  char *text;
  char *origin;
} ConfigEntry;

struct WhConfig {
  GHashTable *values; /* "Type::Param" -> ConfigEntry* */
};

static void config_entry_free(gpointer p)
{
  ConfigEntry *e = p;
  g_free(e->text);
  g_free(e->origin);
  g_free(e);
}

WhConfig *wh_config_new(void)
{
  WhConfig *cfg = g_new0(WhConfig, 1);
  cfg->values = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, config_entry_free);
  return cfg;
}

WhConfig *wh_config_copy(const WhConfig *cfg)
{
  WhConfig *copy = wh_config_new();
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, cfg->values);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    const ConfigEntry *e = value;
    ConfigEntry *c = g_new0(ConfigEntry, 1);
    c->value = e->value;
    c->text = g_strdup(e->text);
    c->origin = g_strdup(e->origin);
    g_hash_table_insert(copy->values, g_strdup(key), c);
  }
  return copy;
}

void wh_config_free(WhConfig *cfg)
{
  if (cfg == NULL)
    return;
  g_hash_table_unref(cfg->values);
  g_free(cfg);
}

gboolean wh_config_set_param(WhConfig *cfg, const char *type, const char *param, const char *value,
                             const char *origin, GError **error)
{
  const WhTypeInfo *info = wh_registry_lookup(type);
  if (info == NULL) {
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_UNKNOWN_TYPE,
                "unknown type \"%s\" (see `whsim list`)", type);
    return FALSE;
  }
  const WhParamSpec *spec = wh_type_find_param(info, param);
  for (const WhParamGone *g = info->gone; spec == NULL && g && g->name; g++) {
    if (strcmp(g->name, param) == 0) {
      g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_UNKNOWN_PARAM, "%s::%s %s", type, param,
                  g->instead);
      return FALSE;
    }
  }
  if (spec == NULL) {
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_UNKNOWN_PARAM,
                "type %s has no parameter \"%s\" (see `whsim list`)", type, param);
    return FALSE;
  }
  ConfigEntry *e = g_new0(ConfigEntry, 1);
  GError *err = NULL;
  if (!wh_param_parse(spec, value, &e->value, &err)) {
    g_propagate_prefixed_error(error, err, "%s::", type);
    g_free(e);
    return FALSE;
  }
  e->text = g_strdup(value);
  e->origin = g_strdup(origin);
  g_hash_table_replace(cfg->values, g_strdup_printf("%s::%s", type, param), e);
  return TRUE;
}

gboolean wh_config_set(WhConfig *cfg, const char *key, const char *value, const char *origin,
                       GError **error)
{
  const char *sep = g_strrstr(key, "::");
  if (sep == NULL || sep == key || sep[2] == '\0') {
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_SYNTAX,
                "\"%s\" is not of the form Type::Param (e.g. wh::DcqcnCc::Kmin)", key);
    return FALSE;
  }
  g_autofree char *type = g_strndup(key, (gsize)(sep - key));
  return wh_config_set_param(cfg, type, sep + 2, value, origin, error);
}

gboolean wh_config_set_assignment(WhConfig *cfg, const char *assignment, const char *origin,
                                  GError **error)
{
  const char *eq = strchr(assignment, '=');
  if (eq == NULL) {
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_SYNTAX,
                "\"%s\" is not of the form Type::Param=value", assignment);
    return FALSE;
  }
  g_autofree char *key = g_strndup(assignment, (gsize)(eq - assignment));
  g_autofree char *value = g_strstrip(g_strdup(eq + 1));
  return wh_config_set(cfg, g_strstrip(key), value, origin, error);
}

const char *wh_config_origin(const WhConfig *cfg, const char *type, const char *param)
{
  g_autofree char *key = g_strdup_printf("%s::%s", type, param);
  ConfigEntry *e = g_hash_table_lookup(cfg->values, key);
  return e ? e->origin : NULL;
}

static WhParamValue get(const WhConfig *cfg, const char *type, const char *param, WhParamKind kind)
{
  const WhTypeInfo *info = wh_registry_lookup(type);
  if (info == NULL)
    g_error("unregistered type %s", type);
  const WhParamSpec *spec = wh_type_find_param(info, param);
  if (spec == NULL || spec->kind != kind)
    g_error("type %s has no parameter %s of the requested kind", type, param);
  g_autofree char *key = g_strdup_printf("%s::%s", type, param);
  ConfigEntry *e = g_hash_table_lookup(cfg->values, key);
  if (e)
    return e->value;
  WhParamValue v;
  wh_param_parse(spec, spec->def, &v, NULL);
  return v;
}

int64_t wh_config_int(const WhConfig *cfg, const char *type, const char *param)
{
  return get(cfg, type, param, WH_PARAM_INT).i;
}

double wh_config_double(const WhConfig *cfg, const char *type, const char *param)
{
  return get(cfg, type, param, WH_PARAM_DOUBLE).d;
}

gboolean wh_config_bool(const WhConfig *cfg, const char *type, const char *param)
{
  return get(cfg, type, param, WH_PARAM_BOOL).b;
}

uint64_t wh_config_rate(const WhConfig *cfg, const char *type, const char *param)
{
  return get(cfg, type, param, WH_PARAM_RATE).u;
}

uint64_t wh_config_bytes(const WhConfig *cfg, const char *type, const char *param)
{
  return get(cfg, type, param, WH_PARAM_BYTES).u;
}

WhTime wh_config_time(const WhConfig *cfg, const char *type, const char *param)
{
  return get(cfg, type, param, WH_PARAM_TIME).t;
}

const char *wh_config_choice(const WhConfig *cfg, const char *type, const char *param)
{
  const WhTypeInfo *info = wh_registry_lookup(type);
  const WhParamSpec *spec = info ? wh_type_find_param(info, param) : NULL;
  g_return_val_if_fail(spec != NULL && spec->kind == WH_PARAM_CHOICE, NULL);
  return spec->choices[get(cfg, type, param, WH_PARAM_CHOICE).choice];
}

/* Whether `v` is the value of `s`'s default. */
static gboolean at_default(const WhParamSpec *s, const WhParamValue *v)
{
  WhParamValue d;
  wh_param_parse(s, s->def, &d, NULL);
  switch (s->kind) {
  case WH_PARAM_INT:
    return d.i == v->i;
  case WH_PARAM_DOUBLE:
    return memcmp(&d.d, &v->d, sizeof d.d) == 0;
  case WH_PARAM_BOOL:
    return !d.b == !v->b;
  case WH_PARAM_RATE:
  case WH_PARAM_BYTES:
    return d.u == v->u;
  case WH_PARAM_TIME:
    return d.t == v->t;
  case WH_PARAM_CHOICE:
    return d.choice == v->choice;
  }
  return FALSE;
}

uint64_t wh_config_digest(const WhConfig *cfg, const char *const *kinds)
{
  uint64_t h = WH_FNV1A_INIT;
  g_autoptr(GPtrArray) types = wh_registry_types();
  for (guint i = 0; i < types->len; i++) {
    const WhTypeInfo *t = types->pdata[i];
    if (!g_strv_contains((const char *const *)kinds, t->kind))
      continue;
    h = wh_fnv1a(h, t->name, strlen(t->name) + 1);
    for (const WhParamSpec *s = t->params; s && s->name; s++) {
      WhParamValue v = get(cfg, t->name, s->name, s->kind);
      if ((s->flags & WH_PARAM_DIGEST_OMITS_DEFAULT) && at_default(s, &v))
        continue;
      h = wh_fnv1a(h, s->name, strlen(s->name) + 1);
      uint64_t bits = 0;
      switch (s->kind) {
      case WH_PARAM_INT:
        bits = (uint64_t)v.i;
        break;
      case WH_PARAM_DOUBLE:
        memcpy(&bits, &v.d, sizeof bits);
        break;
      case WH_PARAM_BOOL:
        bits = v.b != 0;
        break;
      case WH_PARAM_RATE:
      case WH_PARAM_BYTES:
        bits = v.u;
        break;
      case WH_PARAM_TIME:
        bits = (uint64_t)v.t;
        break;
      case WH_PARAM_CHOICE:
        h = wh_fnv1a(h, s->choices[v.choice], strlen(s->choices[v.choice]) + 1);
        break;
      }
      h = wh_fnv1a(h, &bits, sizeof bits);
    }
  }
  return h;
}
