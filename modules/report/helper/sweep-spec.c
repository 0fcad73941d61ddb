/* Sweep specifications; see sweep-spec.h. Order of checks: the file (regular, at most
 * WH_SWEEP_MAX_SPEC_BYTES), the XML and the schema (as scenarios are read), the modes,
 * each parameter and value against the registry, the seeds, the size of the grid, then
 * the scenarios (loaded, hashed, and with WH_SWEEP_LOAD_CHECK_RUNS built), and last the
 * expansion into cells. */
#include "sweep-spec.h"

#include <libxml/tree.h>
#include <math.h>
#include <string.h>

#include "file-read.h"
#include "registry.h"
#include "run.h"
#include "scenario.h"
#include "units.h"
#include "wh-error.h"

extern const char wh_sweep_schema_rng[];
extern const size_t wh_sweep_schema_rng_len;
extern const char wh_build_commit[];

G_DEFINE_QUARK(wh - sweep - error - quark, wh_sweep_error)

static const char *const mode_names[] = {"run", "wormhole", "compare"};

const char *wh_sweep_mode_name(WhSweepMode mode)
{
  return mode_names[mode];
}

const char *wh_build_id(void)
{
  static char *id;
  if (g_once_init_enter(&id))
    g_once_init_leave(&id, g_strdup_printf("%s+%s", WH_VERSION, wh_build_commit));
  return id;
}

static void scenario_free(gpointer p)
{
  WhSweepScenario *s = p;
  g_free(s->file);
  g_free(s->path);
  g_free(s->name);
  g_free(s);
}

static void param_free(gpointer p)
{
  WhSweepParam *x = p;
  g_free(x->name);
  g_ptr_array_unref(x->values);
  g_free(x);
}

void wh_sweep_free(WhSweep *sw)
{
  if (sw == NULL)
    return;
  for (guint i = 0; i < sw->n_cells; i++)
    g_free(sw->cells[i].values);
  g_free(sw->cells);
  g_free(sw->path);
  g_free(sw->name);
  g_free(sw->build_id);
  g_ptr_array_unref(sw->scenarios);
  g_ptr_array_unref(sw->params);
  g_array_unref(sw->blocks);
  g_array_unref(sw->seeds);
  g_array_unref(sw->modes);
  g_free(sw);
}

static char *attr(const xmlNode *n, const char *name)
{
  xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
  if (v == NULL)
    return NULL;
  char *s = g_strdup((const char *)v);
  xmlFree(v);
  return g_strstrip(s);
}

static gboolean is_element(const xmlNode *n, const char *name)
{
  return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

/* The values of a range from..to by step, `unit` appended to each. */
static gboolean range_values(const xmlNode *n, const char *file, GPtrArray *out, GError **error)
{
  g_autofree char *from = attr(n, "from"), *to = attr(n, "to"), *step = attr(n, "step");
  g_autofree char *unit = attr(n, "unit");
  int line = (int)xmlGetLineNo(n);
  double a = g_ascii_strtod(from, NULL), b = g_ascii_strtod(to, NULL);
  double d = g_ascii_strtod(step, NULL);
  if (!(d > 0) || !isfinite(a) || !isfinite(b))
    return wh_error_set_at(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, file, line,
                           "<param> range: step must be greater than zero and from, to "
                           "finite numbers");
  double count = b < a ? 0 : floor((b - a) / d + 1e-9) + 1;
  if (count > WH_SWEEP_MAX_CELLS)
    return wh_error_set_at(
        error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, file, line,
        "<param> range %s..%s by %s has %.0f values, more than the cell limit of %d", from, to,
        step, count, WH_SWEEP_MAX_CELLS);
  for (guint i = 0; i < (guint)count; i++) {
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, "%.12g", a + i * d);
    g_ptr_array_add(out, g_strconcat(buf, unit ? unit : "", NULL));
  }
  return TRUE;
}

/* Reads one <param>: its name and values, each checked against the registry. */
static gboolean load_param(WhSweep *sw, const xmlNode *n, GError **error)
{
  const char *file = sw->path;
  WhSweepParam *p = g_new0(WhSweepParam, 1);
  p->name = attr(n, "name");
  p->values = g_ptr_array_new_with_free_func(g_free);
  p->line = (int)xmlGetLineNo(n);
  g_ptr_array_add(sw->params, p);
  for (guint i = 0; i + 1 < sw->params->len; i++)
    if (strcmp(((WhSweepParam *)sw->params->pdata[i])->name, p->name) == 0)
      return wh_error_set_at(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, file, p->line,
                             "<param name=\"%s\">: varied twice (first on line %d)", p->name,
                             ((WhSweepParam *)sw->params->pdata[i])->line);
  g_autofree char *values = attr(n, "values");
  if (values) {
    g_auto(GStrv) v = g_strsplit_set(values, " \t\r\n", -1);
    for (char **s = v; *s; s++)
      if (**s)
        g_ptr_array_add(p->values, g_strdup(*s));
  } else if (!range_values(n, file, p->values, error)) {
    return FALSE;
  }
  if (p->values->len == 0)
    return wh_error_set_at(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, file, p->line,
                           "<param name=\"%s\">: no values: the grid would be empty (no cells)",
                           p->name);
  g_autoptr(WhConfig) cfg = wh_config_new();
  for (guint i = 0; i < p->values->len; i++) {
    g_autoptr(GError) err = NULL;
    if (!wh_config_set(cfg, p->name, p->values->pdata[i], NULL, &err))
      return wh_error_set_at(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, file, p->line,
                             "<param name=\"%s\"> value \"%s\": %s", p->name,
                             (char *)p->values->pdata[i], err->message);
  }
  return TRUE;
}

/* Reads a <grid> or <zip> block. */
static gboolean load_block(WhSweep *sw, const xmlNode *n, GError **error)
{
  WhSweepBlock b = {is_element(n, "zip"), sw->params->len, 0, (int)xmlGetLineNo(n)};
  for (const xmlNode *c = n->children; c; c = c->next) {
    if (!is_element(c, "param"))
      continue;
    if (!load_param(sw, c, error))
      return FALSE;
    b.n++;
  }
  if (b.n == 0)
    return wh_error_set_at(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, sw->path, b.line,
                           "<%s> varies no parameter: the grid is empty (no cells)",
                           b.zip ? "zip" : "grid");
  for (guint i = 1; b.zip && i < b.n; i++) {
    WhSweepParam *p0 = sw->params->pdata[b.first], *p = sw->params->pdata[b.first + i];
    if (p->values->len != p0->values->len)
      return wh_error_set_at(
          error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, sw->path, p->line,
          "<zip>: \"%s\" has %u values but \"%s\" has %u: zipped lists must be of "
          "equal length",
          p->name, p->values->len, p0->name, p0->values->len);
  }
  g_array_append_val(sw->blocks, b);
  return TRUE;
}

static gboolean load_seeds(WhSweep *sw, const xmlNode *n, GError **error)
{
  int line = (int)xmlGetLineNo(n);
  g_autofree char *values = attr(n, "values");
  if (values) {
    g_auto(GStrv) v = g_strsplit_set(values, " \t\r\n", -1);
    for (char **s = v; *s; s++) {
      int64_t x;
      if (!**s)
        continue;
      if (!wh_units_parse_int(*s, &x, NULL) || x < 0)
        return wh_error_set_at(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, sw->path, line,
                               "<seeds> value \"%s\": not a non-negative integer", *s);
      uint64_t u = (uint64_t)x;
      g_array_append_val(sw->seeds, u);
    }
  } else {
    g_autofree char *first = attr(n, "first"), *count = attr(n, "count");
    uint64_t f = g_ascii_strtoull(first, NULL, 10), c = g_ascii_strtoull(count, NULL, 10);
    if (c > WH_SWEEP_MAX_CELLS)
      return wh_error_set_at(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, sw->path, line,
                             "<seeds count=\"%s\">: more than the cell limit of %d", count,
                             WH_SWEEP_MAX_CELLS);
    for (uint64_t i = 0; i < c; i++) {
      uint64_t u = f + i;
      g_array_append_val(sw->seeds, u);
    }
  }
  if (sw->seeds->len == 0)
    return wh_error_set_at(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, sw->path, line,
                           "<seeds>: no seeds: the grid would be empty (no cells)");
  return TRUE;
}

static gboolean load_modes(WhSweep *sw, const xmlNode *root, GError **error)
{
  g_autofree char *modes = attr(root, "modes");
  g_auto(GStrv) v = g_strsplit_set(modes ? modes : "run", " \t\r\n", -1);
  for (char **s = v; *s; s++) {
    for (guint m = 0; **s && m < G_N_ELEMENTS(mode_names); m++) {
      if (strcmp(*s, mode_names[m]) != 0)
        continue;
      for (guint k = 0; k < sw->modes->len; k++)
        if (g_array_index(sw->modes, WhSweepMode, k) == m)
          return wh_error_set_at(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, sw->path,
                                 (int)xmlGetLineNo(root), "modes: \"%s\" given twice", *s);
      WhSweepMode mode = m;
      g_array_append_val(sw->modes, mode);
    }
  }
  return TRUE;
}

/* The number of cells, refused over WH_SWEEP_MAX_CELLS at the line that passes it. */
static gboolean count_cells(WhSweep *sw, guint n_scenarios, int root_line, int seeds_line, guint *n,
                            GError **error)
{
  uint64_t total = n_scenarios * (uint64_t)sw->modes->len;
  for (guint b = 0; b < sw->blocks->len; b++) {
    const WhSweepBlock *k = &g_array_index(sw->blocks, WhSweepBlock, b);
    for (guint i = 0; i < (k->zip ? 1 : k->n); i++) {
      total *= ((WhSweepParam *)sw->params->pdata[k->first + i])->values->len;
      if (total > WH_SWEEP_MAX_CELLS)
        return wh_error_set_at(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, sw->path, k->line,
                               "the sweep has more than %d cells (the cell limit) by this <%s>",
                               WH_SWEEP_MAX_CELLS, k->zip ? "zip" : "grid");
    }
  }
  total *= MAX(sw->seeds->len, 1);
  if (total > WH_SWEEP_MAX_CELLS)
    return wh_error_set_at(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, sw->path,
                           sw->seeds->len ? seeds_line : root_line,
                           "the sweep has %" G_GUINT64_FORMAT
                           " cells, more than the cell limit of %d",
                           total, WH_SWEEP_MAX_CELLS);
  *n = (guint)total;
  return TRUE;
}

/* Hashes a file into `sum`; a file that cannot be read is an error naming `what`. */
static gboolean hash_file(GChecksum *sum, const char *path, GError **error)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  if (!wh_file_read(path, WH_MAX_INPUT_BYTES, &data, &len, error))
    return FALSE;
  char head[64];
  g_snprintf(head, sizeof head, "\nfile %" G_GSIZE_FORMAT "\n", len);
  g_checksum_update(sum, (const guchar *)head, -1);
  g_checksum_update(sum, (const guchar *)data, (gssize)len);
  return TRUE;
}

/* Loads one <scenario>: the file through the scenario loader, its digest over the file
 * and every file it references, and with CHECK_RUNS its run. */
static gboolean load_scenario(WhSweep *sw, const xmlNode *n, unsigned flags, GError **error)
{
  WhSweepScenario *s = g_new0(WhSweepScenario, 1);
  g_ptr_array_add(sw->scenarios, s);
  s->file = attr(n, "file");
  s->line = (int)xmlGetLineNo(n);
  g_autofree char *dir = g_path_get_dirname(sw->path);
  s->path = g_path_is_absolute(s->file) ? g_strdup(s->file) : g_build_filename(dir, s->file, NULL);
  g_autoptr(GError) err = NULL;
  g_autoptr(WhScenario) sc = wh_scenario_load(s->path, &err);
  WhRunOptions opts = {0};
  g_autoptr(WhRun) run =
      sc && (flags & WH_SWEEP_LOAD_CHECK_RUNS) ? wh_run_new(sc, &opts, &err) : NULL;
  if (sc == NULL || (run == NULL && (flags & WH_SWEEP_LOAD_CHECK_RUNS)))
    return wh_error_set_at(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, sw->path, s->line,
                           "<scenario file=\"%s\">: %s", s->file, err->message);
  s->name = g_strdup(sc->name);
  s->seed = sc->has_seed ? sc->seed : 1;
  g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
  gboolean ok = hash_file(sum, s->path, &err);
  const char *refs[] = {sc->simai_path, sc->routing_path};
  for (guint i = 0; ok && i < G_N_ELEMENTS(refs); i++)
    ok = refs[i] == NULL || hash_file(sum, refs[i], &err);
  for (guint i = 0; ok && sc->ops && i < sc->ops->len; i++) {
    const WhScenarioOp *op = sc->ops->pdata[i];
    ok = op->matrix_path == NULL || hash_file(sum, op->matrix_path, &err);
  }
  if (!ok)
    return wh_error_set_at(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, sw->path, s->line,
                           "<scenario file=\"%s\">: %s", s->file, err->message);
  g_strlcpy(s->digest, g_checksum_get_string(sum), sizeof s->digest);
  return TRUE;
}

/* The id of a cell: see sweep-spec.h. */
static void cell_id(const WhSweep *sw, WhSweepCell *c)
{
  g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
  const WhSweepScenario *s = sw->scenarios->pdata[c->scenario];
  g_autoptr(GString) t = g_string_new("whsim-sweep-cell 1\n");
  g_string_append_printf(t, "build %s\nscenario %s\n", sw->build_id, s->digest);
  for (guint i = 0; i < sw->params->len; i++)
    g_string_append_printf(t, "set %s=%s\n", ((WhSweepParam *)sw->params->pdata[i])->name,
                           c->values[i]);
  if (c->seed_set)
    g_string_append_printf(t, "seed %" G_GUINT64_FORMAT "\n", c->seed);
  g_string_append_printf(t, "mode %s\n", mode_names[c->mode]);
  g_checksum_update(sum, (const guchar *)t->str, (gssize)t->len);
  g_strlcpy(c->id, g_checksum_get_string(sum), sizeof c->id);
}

/* Expands the cells: scenarios, blocks (the last fastest), seeds, modes. */
static void expand(WhSweep *sw, guint n)
{
  sw->cells = g_new0(WhSweepCell, n);
  guint nb = sw->blocks->len, np = sw->params->len;
  g_autofree guint *pos = g_new0(guint, np + 1); /* the odometer, one digit per param */
  guint n_seeds = MAX(sw->seeds->len, 1);
  guint k = 0;
  for (guint s = 0; s < sw->scenarios->len; s++) {
    memset(pos, 0, sizeof(guint) * (np + 1));
    for (gboolean more = TRUE; more;) {
      for (guint e = 0; e < n_seeds; e++)
        for (guint m = 0; m < sw->modes->len; m++, k++) {
          WhSweepCell *c = &sw->cells[k];
          c->scenario = s;
          c->values = g_new0(const char *, MAX(np, 1));
          for (guint i = 0; i < np; i++)
            c->values[i] = ((WhSweepParam *)sw->params->pdata[i])->values->pdata[pos[i]];
          c->seed_set = sw->seeds->len > 0;
          c->seed = c->seed_set ? g_array_index(sw->seeds, uint64_t, e)
                                : ((WhSweepScenario *)sw->scenarios->pdata[s])->seed;
          c->mode = g_array_index(sw->modes, WhSweepMode, m);
          cell_id(sw, c);
        }
      /* advance the odometer: a zip block moves all its params together */
      more = FALSE;
      for (guint b = nb; b-- > 0 && !more;) {
        const WhSweepBlock *bk = &g_array_index(sw->blocks, WhSweepBlock, b);
        for (guint i = bk->n; i-- > 0 && !more;) {
          guint p = bk->first + (bk->zip ? 0 : i);
          guint len = ((WhSweepParam *)sw->params->pdata[p])->values->len;
          guint next = (pos[p] + 1) % len;
          for (guint z = 0; z < (bk->zip ? bk->n : 1); z++)
            pos[bk->zip ? bk->first + z : p] = next;
          more = next != 0;
          if (bk->zip)
            break;
        }
      }
    }
  }
  sw->n_cells = k;
  g_assert(k == n);
}

static gboolean load_root(WhSweep *sw, const xmlNode *root, unsigned flags, GError **error)
{
  g_autofree char *name = attr(root, "name");
  if (name) {
    g_free(sw->name);
    sw->name = g_steal_pointer(&name);
  }
  if (!load_modes(sw, root, error))
    return FALSE;
  int seeds_line = 0;
  guint n_scenarios = 0;
  for (const xmlNode *n = root->children; n; n = n->next) {
    gboolean ok = TRUE;
    n_scenarios += is_element(n, "scenario");
    if (is_element(n, "grid") || is_element(n, "zip"))
      ok = load_block(sw, n, error);
    else if (is_element(n, "seeds"))
      ok = load_seeds(sw, n, error), seeds_line = (int)xmlGetLineNo(n);
    if (!ok)
      return FALSE;
  }
  guint count = 0;
  if (!count_cells(sw, n_scenarios, (int)xmlGetLineNo(root), seeds_line, &count, error))
    return FALSE;
  for (const xmlNode *n = root->children; n; n = n->next)
    if (is_element(n, "scenario") && !load_scenario(sw, n, flags, error))
      return FALSE;
  expand(sw, count);
  return TRUE;
}

WhSweep *wh_sweep_load(const char *path, const char *build_id, unsigned flags, GError **error)
{
  wh_registry_init();
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autoptr(GError) err = NULL;
  if (!wh_file_read(path, WH_SWEEP_MAX_SPEC_BYTES, &data, &len, &err)) {
    g_set_error(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, "%s: %s", path, err->message);
    return NULL;
  }
  xmlDocPtr doc = wh_xml_read_validated(data, len, path, wh_sweep_schema_rng,
                                        wh_sweep_schema_rng_len, "the sweep schema", &err);
  if (doc == NULL) {
    g_set_error_literal(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, err->message);
    return NULL;
  }
  g_autoptr(WhSweep) sw = g_new0(WhSweep, 1);
  sw->path = g_strdup(path);
  g_autofree char *base = g_path_get_basename(path);
  if (g_str_has_suffix(base, ".xml"))
    base[strlen(base) - 4] = '\0';
  sw->name = g_steal_pointer(&base);
  sw->build_id = g_strdup(build_id);
  sw->scenarios = g_ptr_array_new_with_free_func(scenario_free);
  sw->params = g_ptr_array_new_with_free_func(param_free);
  sw->blocks = g_array_new(FALSE, FALSE, sizeof(WhSweepBlock));
  sw->seeds = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  sw->modes = g_array_new(FALSE, FALSE, sizeof(WhSweepMode));
  gboolean ok = load_root(sw, xmlDocGetRootElement(doc), flags, error);
  xmlFreeDoc(doc);
  return ok ? g_steal_pointer(&sw) : NULL;
}

gint wh_sweep_find(const WhSweep *sw, const char *id)
{
  for (guint i = 0; i < sw->n_cells; i++)
    if (strcmp(sw->cells[i].id, id) == 0)
      return (gint)i;
  return -1;
}

char **wh_sweep_cell_options(const WhSweep *sw, guint cell)
{
  const WhSweepCell *c = &sw->cells[cell];
  GPtrArray *v = g_ptr_array_new();
  for (guint i = 0; i < sw->params->len; i++)
    g_ptr_array_add(v, g_strdup_printf("--set=%s=%s", ((WhSweepParam *)sw->params->pdata[i])->name,
                                       c->values[i]));
  if (c->seed_set)
    g_ptr_array_add(v, g_strdup_printf("--seed=%" G_GUINT64_FORMAT, c->seed));
  g_ptr_array_add(v, NULL);
  return (char **)g_ptr_array_free(v, FALSE);
}
