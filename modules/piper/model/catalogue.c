/* The Piper model catalogue: GLib key files, one group per model (format in
 * modules/piper/data/models.ini, which is embedded as the built-in catalogue). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "file-read.h"
#include "piper.h"
#include "wh-error.h"

extern const char wh_piper_models_ini[];
extern const size_t wh_piper_models_ini_len;

G_DEFINE_QUARK(wh - piper - error - quark, wh_piper_error)

/* A required non-negative integer field (at least `min`). */
static gboolean get_uint(GKeyFile *kf, const char *file, const char *group, const char *key,
                         uint32_t min, uint32_t *out, GError **error)
{
  g_autofree char *v = g_key_file_get_value(kf, group, key, NULL);
  if (v == NULL)
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "%s: model [%s]: field %s is missing", file, group, key);
  g_strstrip(v);
  char *end = NULL;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (*v == '\0' || *end != '\0' || errno)
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "%s: model [%s]: field %s = \"%s\" is not an integer", file, group, key, v);
  if (x < 0)
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "%s: model [%s]: field %s = %lld is negative", file, group, key, x);
  if (x < min || x > (1ll << 24))
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "%s: model [%s]: field %s = %lld is out of range (%u..%d)", file, group,
                        key, x, min, 1 << 24);
  *out = (uint32_t)x;
  return TRUE;
}

/* An optional non-negative number (0 when absent). */
static gboolean get_double(GKeyFile *kf, const char *file, const char *group, const char *key,
                           double *out, GError **error)
{
  *out = 0;
  g_autofree char *v = g_key_file_get_value(kf, group, key, NULL);
  if (v == NULL)
    return TRUE;
  g_strstrip(v);
  char *end = NULL;
  double x = g_ascii_strtod(v, &end);
  if (*v == '\0' || *end != '\0' || !isfinite(x) || x < 0)
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "%s: model [%s]: field %s = \"%s\" is not a non-negative number", file,
                        group, key, v);
  *out = x;
  return TRUE;
}

static void model_clear(WhPiperModel *m)
{
  g_free(m->name);
  g_free(m->title);
  g_free(m->source);
  g_strfreev(m->sets);
  g_strfreev(m->unmodelled);
}

static gboolean parse_model(GKeyFile *kf, const char *file, const char *group, WhPiperModel *m,
                            GError **error)
{
  m->name = g_strdup(group);
  struct {
    const char *key;
    uint32_t min;
    uint32_t *dst;
  } f[] = {{"Hidden", 1, &m->hidden},       {"Layers", 1, &m->layers}, {"Experts", 1, &m->experts},
           {"TopK", 1, &m->top_k},          {"FfnSize", 1, &m->ffn},   {"Heads", 1, &m->heads},
           {"KvHeads", 1, &m->kv_heads},    {"SeqLength", 1, &m->seq}, {"Vocab", 0, &m->vocab},
           {"FfnMatrices", 2, &m->ffn_mats}};
  for (size_t i = 0; i < G_N_ELEMENTS(f); i++) {
    if (!get_uint(kf, file, group, f[i].key, f[i].min, f[i].dst, error))
      return FALSE;
  }
  if (m->ffn_mats > 3)
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "%s: model [%s]: field FfnMatrices = %u: expected 2 or 3", file, group,
                        m->ffn_mats);
  if (m->top_k > m->experts)
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "%s: model [%s]: field TopK = %u is more than the %u experts", file, group,
                        m->top_k, m->experts);
  if (m->hidden % m->heads || m->heads % m->kv_heads)
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "%s: model [%s]: fields Hidden %u, Heads %u and KvHeads %u do not divide",
                        file, group, m->hidden, m->heads, m->kv_heads);
  m->title = g_key_file_get_string(kf, group, "Title", NULL);
  m->source = g_key_file_get_string(kf, group, "Source", NULL);
  m->sets = g_key_file_get_string_list(kf, group, "Sets", NULL, NULL);
  m->unmodelled = g_key_file_get_string_list(kf, group, "Unmodelled", NULL, NULL);
  if (!m->sets)
    m->sets = g_new0(char *, 1);
  if (!m->unmodelled)
    m->unmodelled = g_new0(char *, 1);
  double gcds = 0;
  if (!get_double(kf, file, group, "SingleLayerTflops", &m->single_layer_tflops, error) ||
      !get_double(kf, file, group, "FullModelTflops", &m->full_model_tflops, error) ||
      !get_double(kf, file, group, "WeakScalingTflops", &m->weak_tflops, error) ||
      !get_double(kf, file, group, "WeakScalingGcds", &gcds, error))
    return FALSE;
  m->weak_gcds = (uint32_t)gcds;
  m->full_model_recompute = g_key_file_get_boolean(kf, group, "FullModelRecompute", NULL);
  return TRUE;
}

WhPiperCatalogue *wh_piper_catalogue_parse(const char *text, size_t len, const char *file,
                                           GError **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new();
  g_autoptr(GError) err = NULL;
  if (!g_key_file_load_from_data(kf, text, len, G_KEY_FILE_NONE, &err)) {
    wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID, "%s: not a key file: %s", file,
                 err->message);
    return NULL;
  }
  gsize n = 0;
  g_auto(GStrv) groups = g_key_file_get_groups(kf, &n);
  if (n == 0) {
    wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                 "%s: no model (a key file with one [name] group per model)", file);
    return NULL;
  }
  WhPiperCatalogue *c = g_new0(WhPiperCatalogue, 1);
  c->models = g_new0(WhPiperModel, n);
  for (gsize i = 0; i < n; i++) {
    c->n++;
    if (!parse_model(kf, file, groups[i], &c->models[i], error)) {
      wh_piper_catalogue_free(c);
      return NULL;
    }
  }
  return c;
}

WhPiperCatalogue *wh_piper_catalogue_load(const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr(GError) err = NULL;
  if (!wh_file_read(path, WH_PIPER_MAX_MODEL_FILE_BYTES, &text, &len, &err)) {
    wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID, "%s: %s", path, err->message);
    return NULL;
  }
  return wh_piper_catalogue_parse(text, len, path, error);
}

void wh_piper_catalogue_free(WhPiperCatalogue *c)
{
  if (!c)
    return;
  for (uint32_t i = 0; i < c->n; i++)
    model_clear(&c->models[i]);
  g_free(c->models);
  g_free(c);
}

const WhPiperCatalogue *wh_piper_catalogue(void)
{
  static WhPiperCatalogue *builtin;
  if (g_once_init_enter(&builtin)) {
    g_autoptr(GError) err = NULL;
    WhPiperCatalogue *c = wh_piper_catalogue_parse(wh_piper_models_ini, wh_piper_models_ini_len,
                                                   "models.ini (built in)", &err);
    if (!c)
      g_error("%s", err->message); /* the build embeds a file its tests parse */
    g_once_init_leave(&builtin, c);
  }
  return builtin;
}

const WhPiperModel *wh_piper_find(const WhPiperCatalogue *c, const char *name)
{
  for (uint32_t i = 0; c && i < c->n; i++) {
    if (g_strcmp0(c->models[i].name, name) == 0)
      return &c->models[i];
  }
  return NULL;
}

gboolean wh_piper_in_set(const WhPiperModel *m, const char *set)
{
  return g_strv_contains((const char *const *)m->sets, set);
}

static double kv_dim(const WhPiperModel *m)
{
  return (double)m->hidden / m->heads * m->kv_heads;
}

double wh_piper_expert_params(const WhPiperModel *m)
{
  return (double)m->layers * m->ffn_mats * m->experts * m->hidden * (double)m->ffn;
}

double wh_piper_params(const WhPiperModel *m)
{
  double d = m->hidden;
  return m->layers * (2 * d * d + 2 * d * kv_dim(m)) + wh_piper_expert_params(m) +
         2.0 * m->vocab * d;
}
