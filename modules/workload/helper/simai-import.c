/* SimAI workload importer; see simai-import.h for the grammar, the groups and the DAG
 * rules, with the SimAI sources they come from. The file is split into lines and
 * whitespace-separated tokens; the header and layers are checked field by field into
 * a Parsed record, then a Builder walks SimAI's schedule for the policy, keeping per
 * rank the op ids its next step waits for (its stream) and per layer and rank what
 * the next iteration's forward must wait for (the weight-grad comm), and appends ops
 * to the plan's op table (op-table.h), which wh_simai_plan_apply gives the workload
 * to share. Before that, the same schedule is walked for one rank standing for all
 * (Walk) to count the ops and bound the edges for the memory budget. Cost: O(ops +
 * dependency edges); a collective's group is computed arithmetically. */
#include "simai-import.h"

#include <stdarg.h>
#include <string.h>

#include "file-read.h"
#include "units.h"
#include "wh-error.h"

GQuark wh_simai_error_quark(void)
{
  return g_quark_from_static_string("wh-simai-error");
}

#define NONE_ID UINT32_MAX
#define MAX_LAYERS 1000000u
#define MAX_BYTES ((uint64_t)1 << 50)    /* 1 PiB: keeps the workload's chunk arithmetic safe */
#define MAX_NS (WH_TIME_HORIZON / WH_NS) /* a time within the horizon (10^6 s) */
#define N_FIELDS 12

static const char *const field_names[N_FIELDS] = {
    "layer name",
    "dependency",
    "forward compute time",
    "forward comm type",
    "forward comm size",
    "input-grad compute time",
    "input-grad comm type",
    "input-grad comm size",
    "weight-grad compute time",
    "weight-grad comm type",
    "weight-grad comm size",
    "update time",
};

typedef enum { SFX_PLAIN, SFX_EP, SFX_DP_EP } Suffix;

typedef struct {
  gboolean none;
  WhCollKind kind;
  Suffix suffix;
  uint64_t bytes;
} Comm;

typedef struct {
  char *name; /* sanitized */
  int line;
  uint64_t compute_ns[3]; /* fwd, ig, wg */
  Comm comm[3];
  uint64_t update_ns;
} Layer;

enum { K_TP, K_EP, K_PP, K_VPP, K_GA, K_ALL, K_CKPT, K_CKPT_INIT, K_PP_COMM, N_KEYS };

typedef struct {
  const char *file;
  WhSimaiPolicy policy;
  uint64_t value[N_KEYS];
  int field[N_KEYS]; /* 0: key absent */
  GArray *ckpt;      /* pairs (layer, field) of uint32 */
  uint32_t tp, ep, pp, dp, n_gpus;
  uint32_t gpus_given;      /* WhSimaiOptions.gpus */
  gboolean gpus_from_hosts; /* the count defaulted to the ranks available */
  GArray *layers;           /* Layer */
} Parsed;

/* ---- messages ---- */

/* A token for a message: quoted, escaped, at most 40 bytes of it. (transfer full) */
static char *quote(const char *tok)
{
  gsize len = strlen(tok);
  g_autofree char *cut = g_strndup(tok, MIN(len, 40));
  g_autofree char *esc = g_strescape(cut, NULL);
  return g_strdup_printf("\"%s\"%s", esc, len > 40 ? "..." : "");
}

/* ---- numbers ---- */

typedef enum { NUM_OK, NUM_NAN, NUM_NEG, NUM_RANGE } NumStatus;

static NumStatus parse_u64(const char *s, uint64_t max, uint64_t *out)
{
  gboolean neg = *s == '-';
  const char *p = neg ? s + 1 : s;
  if (*p == '\0')
    return NUM_NAN;
  uint64_t v = 0;
  gboolean range = FALSE;
  for (; *p; p++) {
    if (*p < '0' || *p > '9')
      return NUM_NAN;
    unsigned d = (unsigned)(*p - '0');
    if (v > (max - d) / 10)
      range = TRUE;
    else
      v = v * 10 + d;
  }
  if (neg)
    return NUM_NEG;
  if (range)
    return NUM_RANGE;
  *out = v;
  return NUM_OK;
}

/* A numeric field in [min, max]; names the field in any error. */
static gboolean num_field(const char *file, int line, int field, const char *what, const char *tok,
                          uint64_t min, uint64_t max, uint64_t *out, GError **error)
{
  g_autofree char *q = quote(tok);
  uint64_t v = 0;
  switch (parse_u64(tok, max, &v)) {
  case NUM_NAN:
    return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, file, line,
                           "field %d (%s): %s is not a number", field, what, q);
  case NUM_NEG:
    return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, file, line,
                           "field %d (%s): %s is negative", field, what, q);
  case NUM_RANGE:
    return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, file, line,
                           "field %d (%s): %s is out of range (at most %" G_GUINT64_FORMAT ")",
                           field, what, q, (guint64)max);
  case NUM_OK:
    break;
  }
  if (v < min)
    return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, file, line,
                           "field %d (%s): %s must be at least %" G_GUINT64_FORMAT, field, what, q,
                           (guint64)min);
  *out = v;
  return TRUE;
}

/* A size field: like num_field, and an integral float ("8388608.0", as AICB writes
 * sizes) is read as its integer. */
static gboolean size_field(const char *file, int line, int field, const char *what, const char *tok,
                           uint64_t min, uint64_t max, uint64_t *out, GError **error)
{
  const char *dot = strchr(tok, '.');
  if (dot == NULL || dot == tok || dot[1] == '\0' || strspn(dot + 1, "0") != strlen(dot + 1))
    return num_field(file, line, field, what, tok, min, max, out, error);
  g_autofree char *integral = g_strndup(tok, (gsize)(dot - tok));
  return num_field(file, line, field, what, integral, min, max, out, error);
}

/* ---- lines and tokens ---- */

typedef struct {
  const char *data;
  gsize len, pos;
  int line; /* of the last line returned */
} Lines;

/* The next line (without "\n" or "\r\n"), or NULL at the end. (transfer full) */
static char *next_line(Lines *l, const char *file, gboolean *nul, GError **error)
{
  *nul = FALSE;
  if (l->pos >= l->len)
    return NULL;
  const char *start = l->data + l->pos;
  const char *nl = memchr(start, '\n', l->len - l->pos);
  gsize n = nl ? (gsize)(nl - start) : l->len - l->pos;
  l->pos += n + (nl ? 1 : 0);
  l->line++;
  if (memchr(start, '\0', n)) {
    *nul = TRUE;
    wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, file, l->line,
                    "NUL byte: not a text file");
    return NULL;
  }
  if (n > 0 && start[n - 1] == '\r')
    n--;
  return g_strndup(start, n);
}

static gboolean is_sep(char c)
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Splits `line` in place; the array points into it. (transfer container) */
static GPtrArray *tokens(char *line)
{
  GPtrArray *t = g_ptr_array_new();
  char *p = line;
  while (*p) {
    while (*p && is_sep(*p))
      p++;
    if (!*p)
      break;
    g_ptr_array_add(t, p);
    while (*p && !is_sep(*p))
      p++;
    if (*p)
      *p++ = '\0';
  }
  return t;
}

/* ---- header ---- */

static const struct {
  const char *key;
  int id;
} header_keys[] = {
    {"model_parallel_NPU_group:", K_TP},
    {"ep:", K_EP},
    {"pp:", K_PP},
    {"vpp:", K_VPP},
    {"ga:", K_GA},
    {"all_gpus:", K_ALL},
    {"checkpoints:", K_CKPT},
    {"checkpoint_initiates:", K_CKPT_INIT},
    {"pp_comm", K_PP_COMM},
    {"pp_comm:", K_PP_COMM},
};

static const char *const key_what[N_KEYS] = {
    "model_parallel_NPU_group", "ep",      "pp", "vpp", "ga", "all_gpus", "checkpoints",
    "checkpoint_initiates",     "pp_comm",
};

#define SUPPORTED "DATA, MICRO, HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD"

static gboolean parse_policy(Parsed *p, const char *tok, GError **error)
{
  static const struct {
    const char *name;
    WhSimaiPolicy policy;
  } ok[] = {
      {"DATA", WH_SIMAI_POLICY_DATA},
      {"MICRO", WH_SIMAI_POLICY_MICRO},
      {"HYBRID_TRANSFORMER", WH_SIMAI_POLICY_HYBRID_TRANSFORMER},
      {"HYBRID_TRANSFORMER_FWD_IN_BCKWD", WH_SIMAI_POLICY_HYBRID_TRANSFORMER_FWD_IN_BCKWD},
  };
  static const char *const unsupported[] = {
      "HYBRID_DLRM",           "HYBRID_DLRM_ENHANCED", "MODEL",
      "HYBRID_DATA_MODEL",     "HYBRID_MODEL_DATA",    "HYBRID_CUSTOMIZED",
      "DISTRIBUTED_INFERENCE",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(ok); i++) {
    if (strcmp(tok, ok[i].name) == 0) {
      p->policy = ok[i].policy;
      return TRUE;
    }
  }
  for (size_t i = 0; i < G_N_ELEMENTS(unsupported); i++) {
    if (strcmp(tok, unsupported[i]) == 0)
      return wh_error_set_at(
          error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, 1,
          "field 1 (parallelism policy): SimAI's %s policy is not supported (supported: "
          "%s)",
          tok, SUPPORTED);
  }
  g_autofree char *q = quote(tok);
  return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, 1,
                         "field 1 (parallelism policy): %s is not a known policy (supported: %s)",
                         q, SUPPORTED);
}

static gboolean parse_header(Parsed *p, GPtrArray *t, GError **error)
{
  if (t->len == 0)
    return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, 1,
                           "field 1 (parallelism policy): missing (the first line is blank)");
  if (!parse_policy(p, t->pdata[0], error))
    return FALSE;
  for (guint i = 1; i < t->len;) {
    const char *key = t->pdata[i];
    int field = (int)i + 1, id = -1;
    for (size_t k = 0; k < G_N_ELEMENTS(header_keys); k++) {
      if (strcmp(key, header_keys[k].key) == 0)
        id = header_keys[k].id;
    }
    if (id < 0) {
      g_autofree char *q = quote(key);
      return wh_error_set_at(
          error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, 1,
          "field %d: %s is not a known key (model_parallel_NPU_group:, ep:, pp:, vpp:, "
          "ga:, all_gpus:, checkpoints:, checkpoint_initiates:, pp_comm)",
          field, q);
    }
    if (p->field[id])
      return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, 1,
                             "field %d: key %s given twice (first as field %d)", field,
                             key_what[id], p->field[id] - 1);
    if (i + 1 >= t->len)
      return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, 1,
                             "field %d (%s): missing value", field + 1, key_what[id]);
    gboolean is_list = id == K_CKPT || id == K_CKPT_INIT;
    uint64_t min = id == K_PP_COMM || is_list ? 0 : 1;
    uint64_t max = id == K_PP_COMM ? MAX_BYTES : UINT32_MAX;
    if (!(id == K_PP_COMM ? size_field : num_field)(
            p->file, 1, field + 1, key_what[id], t->pdata[i + 1], min, max, &p->value[id], error))
      return FALSE;
    p->field[id] = field + 1;
    i += 2;
    if (is_list) {
      g_autofree char *what = g_strdup_printf("%s layer", key_what[id]);
      for (uint64_t k = 0; k < p->value[id]; k++, i++) {
        if (i >= t->len)
          return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, 1,
                                 "field %u (%s): missing (%s lists %" G_GUINT64_FORMAT " layers)",
                                 i + 1, what, key_what[id], (guint64)p->value[id]);
        uint64_t layer;
        if (!num_field(p->file, 1, (int)i + 1, what, t->pdata[i], 0, UINT32_MAX, &layer, error))
          return FALSE;
        uint32_t pair[2] = {(uint32_t)layer, i + 1};
        g_array_append_vals(p->ckpt, pair, 2);
      }
    }
  }
  return TRUE;
}

/* Group sizes and the GPU count, right after the header (the checkpoint layers wait
 * for the layer count). */
static gboolean check_header(Parsed *p, uint32_t max_ranks, GError **error)
{
  const char *pol = wh_simai_policy_name(p->policy);
  int f_all = p->field[K_ALL];
  if (f_all && p->gpus_given && p->value[K_ALL] != p->gpus_given)
    return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_INVALID, p->file, 1,
                           "field %d (all_gpus): %u GPUs, but the scenario gives gpus=\"%u\"",
                           f_all, (unsigned)p->value[K_ALL], p->gpus_given);
  if (!f_all && p->gpus_given) {
    p->value[K_ALL] = p->gpus_given;
    f_all = p->field[K_ALL] = -1; /* given by the scenario */
  }
  if (p->policy == WH_SIMAI_POLICY_DATA || p->policy == WH_SIMAI_POLICY_MICRO) {
    p->tp = p->pp = p->ep = 1;
    if (f_all)
      p->n_gpus = (uint32_t)p->value[K_ALL];
    else if (max_ranks)
      p->n_gpus = max_ranks, p->gpus_from_hosts = TRUE;
    else
      return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_INVALID, p->file, 1,
                             "%s without all_gpus: needs the number of ranks from the workload",
                             pol);
    p->dp = p->n_gpus;
  } else {
    if (!p->field[K_TP])
      return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, 1,
                             "missing model_parallel_NPU_group: (%s needs the TP size)", pol);
    if (!f_all)
      return wh_error_set_at(
          error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, 1,
          "missing all_gpus: (%s needs the GPU count; or give <workload gpus=\"N\">)", pol);
    p->tp = (uint32_t)p->value[K_TP];
    p->pp = p->field[K_PP] ? (uint32_t)p->value[K_PP] : 1;
    p->ep = p->field[K_EP] ? (uint32_t)p->value[K_EP] : 1;
    p->n_gpus = (uint32_t)p->value[K_ALL];
    uint64_t s = (uint64_t)p->tp * p->pp;
    if (p->n_gpus % s != 0) {
      g_autofree char *what = f_all > 0 ? g_strdup_printf("field %d (all_gpus)", f_all)
                                        : g_strdup("the scenario's gpus=");
      return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_INVALID, p->file, 1,
                             "%s: %u is not a multiple of model_parallel_NPU_group x pp = %u x %u",
                             what, p->n_gpus, p->tp, p->pp);
    }
    p->dp = (uint32_t)(p->n_gpus / s);
    if (p->dp % p->ep != 0)
      return wh_error_set_at(
          error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_INVALID, p->file, 1,
          "field %d (ep): %u does not divide the data-parallel size %u = all_gpus / "
          "(model_parallel_NPU_group x pp)",
          p->field[K_EP], p->ep, p->dp);
  }
  if (max_ranks && p->n_gpus > max_ranks && f_all < 0)
    return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_INVALID, p->file, 1,
                           "gpus=\"%u\" (the scenario's): only %u ranks are available", p->n_gpus,
                           max_ranks);
  if (max_ranks && p->n_gpus > max_ranks) /* only when all_gpus: is given */
    return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_INVALID, p->file, 1,
                           "field %d (all_gpus): %u GPUs but only %u ranks are available", f_all,
                           p->n_gpus, max_ranks);
  return TRUE;
}

/* ---- layers ---- */

static char *sanitize(const char *name)
{
  gsize len = MIN(strlen(name), 64);
  char *s = g_strndup(name, len);
  for (char *c = s; *c; c++) {
    if (!g_ascii_isalnum(*c) && *c != '_' && *c != '-' && *c != '.')
      *c = '_';
  }
  return s;
}

static gboolean parse_comm(const Parsed *p, int line, int field, const char *tok, Comm *c,
                           GError **error)
{
  static const struct {
    const char *name;
    WhCollKind kind;
  } bases[] = {
      {"ALLREDUCE", WH_COLL_ALL_REDUCE},         {"ALLGATHER", WH_COLL_ALL_GATHER},
      {"REDUCESCATTER", WH_COLL_REDUCE_SCATTER}, {"ALLTOALL", WH_COLL_ALL_TO_ALL},
      {"BROADCAST", WH_COLL_BROADCAST},
  };
  const char *what = field_names[field - 1];
  g_autofree char *q = quote(tok);
  *c = (Comm){.none = TRUE};
  if (strcmp(tok, "NONE") == 0)
    return TRUE;
  if (g_str_has_prefix(tok, "ALLREDUCEALLTOALL"))
    return wh_error_set_at(
        error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, line,
        "field %d (%s): %s is not supported (SimAI itself reads it as an ALLREDUCE "
        "without a group)",
        field, what, q);
  for (size_t i = 0; i < G_N_ELEMENTS(bases); i++) {
    if (!g_str_has_prefix(tok, bases[i].name))
      continue;
    const char *rest = tok + strlen(bases[i].name);
    Suffix sfx;
    if (*rest == '\0')
      sfx = SFX_PLAIN;
    else if (strcmp(rest, "_EP") == 0)
      sfx = SFX_EP;
    else if (strcmp(rest, "_DP_EP") == 0)
      sfx = SFX_DP_EP;
    else
      break;
    *c = (Comm){.none = FALSE, .kind = bases[i].kind, .suffix = sfx};
    return TRUE;
  }
  return wh_error_set_at(
      error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, line,
      "field %d (%s): %s is not a known comm type (NONE, ALLREDUCE, ALLGATHER, "
      "REDUCESCATTER, ALLTOALL or BROADCAST, all but NONE optionally with _EP or "
      "_DP_EP)",
      field, what, q);
}

static gboolean parse_layer(Parsed *p, int line, GPtrArray *t, GError **error)
{
  uint32_t index = p->layers->len;
  if (t->len != N_FIELDS) {
    g_autofree char *q = quote(t->pdata[0]);
    return wh_error_set_at(
        error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, line,
        "layer %u (%s): expected %d fields (name, dependency, compute time, comm type "
        "and comm size for forward, input grad and weight grad, update time), found %u",
        index, q, N_FIELDS, t->len);
  }
  const char *const *f = (const char *const *)t->pdata;
  /* field 2: -1 (none) or a layer index; SimAI ignores it */
  if (strcmp(f[1], "-1") != 0) {
    uint64_t dep;
    if (!num_field(p->file, line, 2, field_names[1], f[1], 0, INT32_MAX, &dep, error))
      return FALSE;
  }
  Layer l = {.line = line};
  for (int k = 0; k < 3; k++) {
    int base = 3 + 3 * k; /* 1-based field of the compute time */
    if (!num_field(p->file, line, base, field_names[base - 1], f[base - 1], 0, MAX_NS,
                   &l.compute_ns[k], error) ||
        !parse_comm(p, line, base + 1, f[base], &l.comm[k], error) ||
        !size_field(p->file, line, base + 2, field_names[base + 1], f[base + 1], 0, MAX_BYTES,
                    &l.comm[k].bytes, error))
      return FALSE;
  }
  if (!num_field(p->file, line, 12, field_names[11], f[11], 0, MAX_NS, &l.update_ns, error))
    return FALSE;
  gboolean flat = p->policy == WH_SIMAI_POLICY_DATA || p->policy == WH_SIMAI_POLICY_MICRO;
  if (flat && !l.comm[2].none && l.comm[2].suffix != SFX_PLAIN) {
    g_autofree char *q = quote(f[9]);
    return wh_error_set_at(
        error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_INVALID, p->file, line,
        "field 10 (%s): %s: expert-parallel groups need a HYBRID_TRANSFORMER policy (%s "
        "reduces over all GPUs)",
        field_names[9], q, wh_simai_policy_name(p->policy));
  }
  l.name = sanitize(f[0]);
  g_array_append_val(p->layers, l);
  return TRUE;
}

static void parsed_clear(Parsed *p)
{
  if (p->layers) {
    for (guint i = 0; i < p->layers->len; i++)
      g_free(g_array_index(p->layers, Layer, i).name);
    g_array_unref(p->layers);
  }
  if (p->ckpt)
    g_array_unref(p->ckpt);
}

static gboolean parse_all(Parsed *p, const char *data, gsize len, uint32_t max_ranks,
                          GError **error)
{
  gboolean blank = TRUE;
  for (gsize i = 0; i < len && blank; i++)
    blank = data[i] == '\n' || is_sep(data[i]);
  if (blank)
    return wh_error_set_at(
        error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, 1,
        "empty file: expected the parallelism policy line (e.g. "
        "\"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ... all_gpus: "
        "16\")");
  Lines lines = {.data = data, .len = len};
  gboolean nul;
  g_autofree char *first = next_line(&lines, p->file, &nul, error);
  if (!first)
    return FALSE;
  g_autoptr(GPtrArray) ht = tokens(first);
  if (!parse_header(p, ht, error) || !check_header(p, max_ranks, error))
    return FALSE;

  g_autofree char *second = next_line(&lines, p->file, &nul, error);
  if (!second) {
    if (nul)
      return FALSE;
    return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, 2,
                           "missing the layer count (the file ends after line 1)");
  }
  g_autoptr(GPtrArray) ct = tokens(second);
  if (ct->len == 0)
    return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, 2,
                           "field 1 (layer count): missing (the line is blank)");
  if (ct->len > 1)
    return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, 2,
                           "expected 1 field (the layer count), found %u", ct->len);
  uint64_t n_layers;
  if (!num_field(p->file, 2, 1, "layer count", ct->pdata[0], 1, MAX_LAYERS, &n_layers, error))
    return FALSE;
  for (guint i = 0; i < p->ckpt->len; i += 2) {
    uint32_t layer = g_array_index(p->ckpt, uint32_t, i);
    int field = (int)g_array_index(p->ckpt, uint32_t, i + 1);
    if (layer >= n_layers)
      return wh_error_set_at(
          error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_INVALID, p->file, 1,
          "field %d (checkpoint layer): %u is not a layer (line 2 declares %u: 0..%u)", field,
          layer, (unsigned)n_layers, (unsigned)n_layers - 1);
  }

  for (;;) {
    g_autofree char *line = next_line(&lines, p->file, &nul, error);
    if (!line) {
      if (nul)
        return FALSE;
      break;
    }
    g_autoptr(GPtrArray) t = tokens(line);
    if (t->len == 0)
      continue;
    if (p->layers->len == n_layers)
      return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, lines.line,
                             "a layer line beyond the %u layers line 2 declares",
                             (unsigned)n_layers);
    if (!parse_layer(p, lines.line, t, error))
      return FALSE;
  }
  if (p->layers->len < n_layers)
    return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_PARSE, p->file, lines.line + 1,
                           "end of file after %u of the %u layers line 2 declares", p->layers->len,
                           (unsigned)n_layers);
  return TRUE;
}

/* ---- groups ---- */

typedef struct {
  uint32_t n, tp, pp, dp, ep;
} Shape;

/* The smallest rank of rank r's group of `kind`. */
static uint32_t leader_of(const Shape *s, WhSimaiGroup kind, uint32_t r)
{
  uint32_t stride = s->tp * s->pp, d = r % stride, j = r / stride;
  switch (kind) {
  case WH_SIMAI_GROUP_TP:
    return r / s->tp * s->tp;
  case WH_SIMAI_GROUP_DP:
    return d;
  case WH_SIMAI_GROUP_EP:
    return d + j / s->ep * s->ep * stride;
  case WH_SIMAI_GROUP_DP_EP:
    return d + j % s->ep * stride;
  case WH_SIMAI_GROUP_ALL:
    return 0;
  case WH_SIMAI_GROUP_NONE:
    break;
  }
  return r;
}

/* The members of rank r's group of `kind`, ascending, into `out` (room for n). */
static uint32_t group_of(const Shape *s, WhSimaiGroup kind, uint32_t r, uint32_t *out)
{
  uint32_t stride = s->tp * s->pp, d = r % stride, j = r / stride, k = 0;
  switch (kind) {
  case WH_SIMAI_GROUP_TP:
    for (uint32_t i = 0; i < s->tp; i++)
      out[k++] = r / s->tp * s->tp + i;
    break;
  case WH_SIMAI_GROUP_DP:
    for (uint32_t i = 0; i < s->dp; i++)
      out[k++] = d + i * stride;
    break;
  case WH_SIMAI_GROUP_EP:
    for (uint32_t e = 0; e < s->ep; e++)
      out[k++] = d + (j / s->ep * s->ep + e) * stride;
    break;
  case WH_SIMAI_GROUP_DP_EP:
    for (uint32_t i = 0; i < s->dp / s->ep; i++)
      out[k++] = d + (j % s->ep + i * s->ep) * stride;
    break;
  case WH_SIMAI_GROUP_ALL:
    for (uint32_t i = 0; i < s->n; i++)
      out[k++] = i;
    break;
  case WH_SIMAI_GROUP_NONE:
    out[k++] = r;
    break;
  }
  return k;
}

/* ---- schedule ---- */

typedef struct {
  WhSimaiPlan *plan;
  const Parsed *p;
  Shape shape;
  gboolean keep_tp;
  GArray **stream;   /* per rank: op ids (uint32) its next step waits for */
  uint32_t *wg_wait; /* [layer * n + rank]: what the next forward of the layer waits for */
  uint32_t *members; /* scratch, n entries */
  GArray *deps;      /* scratch */
  FILE *progress;    /* nullable */
  uint64_t total, next_report; /* ops the plan will have; when to report next */
} Builder;

static const char *const phase_names[3] = {"fwd", "ig", "wg"};

static int cmp_u32(gconstpointer a, gconstpointer b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Adds `o` with `deps` sorted and without duplicates; the plan's size was checked
 * against the op and edge limits before it was built. */
static uint32_t push_op(Builder *b, WhOpSpec *o, GArray *deps)
{
  g_array_sort(deps, cmp_u32);
  guint n = 0;
  for (guint i = 0; i < deps->len; i++) {
    uint32_t v = g_array_index(deps, uint32_t, i);
    if (n == 0 || g_array_index(deps, uint32_t, n - 1) != v)
      g_array_index(deps, uint32_t, n++) = v;
  }
  o->deps = (const uint32_t *)deps->data;
  o->n_deps = n;
  int64_t id = wh_op_table_add(b->plan->ops, o, NULL);
  g_assert(id >= 0);
  if (b->progress && (uint64_t)id + 1 >= b->next_report) {
    fprintf(b->progress, "\r  %s: %" G_GUINT64_FORMAT "%% of %" G_GUINT64_FORMAT " ops made",
            b->plan->name, (((uint64_t)id + 1) * 100 + b->total / 2) / b->total, b->total);
    fflush(b->progress);
    b->next_report = MIN(b->next_report + MAX(b->total / 10, 1), b->total);
  }
  return (uint32_t)id;
}

static void set_stream(Builder *b, uint32_t r, uint32_t id)
{
  g_array_set_size(b->stream[r], 0);
  g_array_append_val(b->stream[r], id);
}

static uint32_t add_compute(Builder *b, uint32_t r, const char *name, uint64_t ns,
                            const uint32_t *dep)
{
  WhOpSpec o = {.kind = WH_OP_COMPUTE,
                .tag = WH_SIMAI_GROUP_NONE,
                .name = name,
                .rank = r,
                .duration = (WhTime)ns * WH_NS};
  g_array_set_size(b->deps, 0);
  if (dep)
    g_array_append_val(b->deps, *dep);
  else
    g_array_append_vals(b->deps, b->stream[r]->data, b->stream[r]->len);
  b->plan->stats.n_compute++;
  return push_op(b, &o, b->deps);
}

/* The phase's compute on every rank; a time of 0 adds nothing. */
static void computes(Builder *b, uint32_t layer, int phase)
{
  const Layer *l = &g_array_index(b->p->layers, Layer, layer);
  uint64_t ns = l->compute_ns[phase];
  if (ns == 0)
    return;
  g_autofree char *name = g_strdup_printf("L%u.%s.%s", layer, l->name, phase_names[phase]);
  for (uint32_t r = 0; r < b->shape.n; r++)
    set_stream(b, r, add_compute(b, r, name, ns, NULL));
}

static WhSimaiGroup group_kind(const Builder *b, int phase, Suffix sfx)
{
  if (sfx == SFX_EP)
    return WH_SIMAI_GROUP_EP;
  if (sfx == SFX_DP_EP)
    return WH_SIMAI_GROUP_DP_EP;
  if (b->p->policy == WH_SIMAI_POLICY_DATA || b->p->policy == WH_SIMAI_POLICY_MICRO)
    return WH_SIMAI_GROUP_ALL;
  return phase == 2 ? WH_SIMAI_GROUP_DP : WH_SIMAI_GROUP_TP;
}

/* The phase's collective over every group of its kind. Blocking: the members' streams
 * move to it (or to their update ops); else it is what the layer's next forward waits
 * for. */
static void collectives(Builder *b, uint32_t layer, int phase, gboolean blocking)
{
  const Layer *l = &g_array_index(b->p->layers, Layer, layer);
  const Comm *c = &l->comm[phase];
  if (c->none)
    return;
  WhSimaiStats *st = &b->plan->stats;
  WhSimaiGroup kind = group_kind(b, phase, c->suffix);
  uint32_t n = b->shape.n, gid = 0;
  g_autofree char *upd = g_strdup_printf("L%u.%s.%s-update", layer, l->name, phase_names[phase]);
  for (uint32_t r = 0; r < n; r++) {
    if (leader_of(&b->shape, kind, r) != r)
      continue; /* not the group's first rank: done with it already */
    uint32_t m = group_of(&b->shape, kind, r, b->members), id_in_kind = gid++;
    if (c->bytes == 0 || m < 2) {
      st->skipped_trivial++;
      continue;
    }
    if (kind == WH_SIMAI_GROUP_TP && !b->keep_tp) {
      st->dropped_tp++;
      st->dropped_tp_bytes += c->bytes;
      continue;
    }
    g_autofree char *name =
        g_strdup_printf("L%u.%s.%s-comm.%s%u", layer, l->name, phase_names[phase],
                        wh_simai_group_name(kind), id_in_kind);
    WhOpSpec o = {.kind = WH_OP_COLLECTIVE,
                  .coll = c->kind,
                  .algo = c->kind == WH_COLL_ALL_TO_ALL ? WH_ALGO_PAIRWISE : WH_ALGO_RING,
                  .tag = (uint8_t)kind,
                  .name = name,
                  .rank = r,
                  .group = b->members,
                  .group_n = m,
                  .bytes = c->bytes};
    g_array_set_size(b->deps, 0);
    for (uint32_t i = 0; i < m; i++) {
      GArray *s = b->stream[b->members[i]];
      g_array_append_vals(b->deps, s->data, s->len);
    }
    uint32_t id = push_op(b, &o, b->deps);
    st->n_collectives++;
    for (uint32_t i = 0; i < m; i++) {
      uint32_t mr = b->members[i], after = id;
      if (l->update_ns > 0) {
        after = add_compute(b, mr, upd, l->update_ns, &id);
        st->n_update++;
      }
      if (blocking)
        set_stream(b, mr, after);
      else
        b->wg_wait[(size_t)layer * n + mr] = after;
    }
  }
}

/* Before a layer's forward: wait for its weight-grad comm of the previous iteration. */
static void wait_wg(Builder *b, uint32_t layer)
{
  for (uint32_t r = 0; r < b->shape.n; r++) {
    uint32_t *w = &b->wg_wait[(size_t)layer * b->shape.n + r];
    if (*w != NONE_ID)
      g_array_append_val(b->stream[r], *w);
    *w = NONE_ID;
  }
}

/* The steps of SimAI's schedule, made (Builder) or counted (Walk). */
typedef struct {
  void (*computes)(void *ctx, uint32_t layer, int phase);
  void (*collectives)(void *ctx, uint32_t layer, int phase, gboolean blocking);
  void (*wait_wg)(void *ctx, uint32_t layer);
} Steps;

/* One iteration of the policy's schedule; adds the comm fields it never issues to
 * *ignored. */
static void schedule(const Steps *s, void *ctx, const Parsed *p, uint32_t *ignored)
{
  uint32_t L = p->layers->len;
  switch (p->policy) {
  case WH_SIMAI_POLICY_HYBRID_TRANSFORMER:
  case WH_SIMAI_POLICY_HYBRID_TRANSFORMER_FWD_IN_BCKWD:
    for (uint32_t i = 0; i < L; i++) {
      s->wait_wg(ctx, i);
      s->computes(ctx, i, 0);
      s->collectives(ctx, i, 0, TRUE);
    }
    for (uint32_t i = L; i-- > 0;) {
      s->computes(ctx, i, 1);
      s->collectives(ctx, i, 1, TRUE);
      s->computes(ctx, i, 2);
      s->collectives(ctx, i, 2, FALSE);
    }
    break;
  case WH_SIMAI_POLICY_DATA:
    for (uint32_t i = 0; i < L; i++) {
      const Layer *l = &g_array_index(p->layers, Layer, i);
      *ignored += !l->comm[0].none + !l->comm[1].none;
      s->wait_wg(ctx, i);
      s->computes(ctx, i, 0);
    }
    for (uint32_t i = L; i-- > 0;) {
      s->computes(ctx, i, 2);
      s->collectives(ctx, i, 2, FALSE);
      if (i > 0)
        s->computes(ctx, i, 1);
    }
    break;
  case WH_SIMAI_POLICY_MICRO:
    for (uint32_t i = 0; i < L; i++) {
      const Layer *l = &g_array_index(p->layers, Layer, i);
      *ignored += !l->comm[0].none + !l->comm[1].none + (i > 0 && !l->comm[2].none);
    }
    s->collectives(ctx, 0, 2, FALSE);
    break;
  }
}

static void build_computes(void *b, uint32_t layer, int phase)
{
  computes(b, layer, phase);
}

static void build_collectives(void *b, uint32_t layer, int phase, gboolean blocking)
{
  collectives(b, layer, phase, blocking);
}

static void build_wait_wg(void *b, uint32_t layer)
{
  wait_wg(b, layer);
}

static const Steps build_steps = {build_computes, build_collectives, build_wait_wg};

static void iteration(Builder *b)
{
  schedule(&build_steps, b, b->p, &b->plan->stats.ignored_comms);
}

/* The header keys the plan does not simulate, with their values (pp shapes the
 * groups, but the sends between pipeline stages are not made). */
static void unmodelled_keys(const Parsed *p, char *out, gsize size)
{
  static const struct {
    int key;
    uint64_t neutral; /* a value that asks for nothing */
  } keys[] = {{K_PP, 1}, {K_PP_COMM, 0}, {K_VPP, 1}, {K_GA, 1}, {K_CKPT, 0}, {K_CKPT_INIT, 0}};
  g_autoptr(GString) s = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
    int k = keys[i].key;
    if (p->field[k] > 0 && p->value[k] != keys[i].neutral)
      g_string_append_printf(s, "%s%s: %" G_GUINT64_FORMAT, s->len ? ", " : "", key_what[k],
                             (guint64)p->value[k]);
  }
  g_strlcpy(out, s->str, size);
}

static void build(WhSimaiPlan *plan, const Parsed *p, const WhSimaiOptions *opts, uint64_t total)
{
  uint32_t iterations = opts && opts->iterations > 1 ? opts->iterations : 1;
  Builder b = {.plan = plan,
               .p = p,
               .shape = {.n = p->n_gpus, .tp = p->tp, .pp = p->pp, .dp = p->dp, .ep = p->ep},
               .keep_tp = opts ? opts->keep_tp : FALSE,
               .progress = opts && total >= WH_SIMAI_PROGRESS_OPS ? opts->progress : NULL,
               .total = total,
               .next_report = MIN(MAX(total / 10, 1), total)};
  uint32_t n = p->n_gpus, L = p->layers->len;
  b.stream = g_new(GArray *, n);
  for (uint32_t r = 0; r < n; r++)
    b.stream[r] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  b.wg_wait = g_new(uint32_t, (size_t)L * n);
  for (size_t i = 0; i < (size_t)L * n; i++)
    b.wg_wait[i] = NONE_ID;
  b.members = g_new(uint32_t, n);
  b.deps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (uint32_t it = 0; it < iterations; it++)
    iteration(&b);
  if (b.progress)
    fputc('\n', b.progress);
  WhSimaiStats acc = plan->stats, *st = &acc;
  plan->stats = (WhSimaiStats){.policy = p->policy,
                               .n_layers = L,
                               .n_gpus = n,
                               .tp = p->tp,
                               .dp = p->dp,
                               .ep = p->ep,
                               .pp = p->pp,
                               .ops_per_iteration = wh_op_table_len(plan->ops) / iterations,
                               .n_compute = st->n_compute / iterations,
                               .n_update = st->n_update / iterations,
                               .n_collectives = st->n_collectives / iterations,
                               .dropped_tp = st->dropped_tp / iterations,
                               .dropped_tp_bytes = st->dropped_tp_bytes / iterations,
                               .skipped_trivial = st->skipped_trivial / iterations,
                               .ignored_comms = st->ignored_comms / iterations,
                               .gpus_from_hosts = p->gpus_from_hosts};
  unmodelled_keys(p, plan->stats.unmodelled_keys, sizeof plan->stats.unmodelled_keys);
  for (uint32_t r = 0; r < n; r++)
    g_array_unref(b.stream[r]);
  g_free(b.stream);
  g_free(b.wg_wait);
  g_free(b.members);
  g_array_unref(b.deps);
}

/* ---- public ---- */

void wh_simai_plan_free(WhSimaiPlan *plan)
{
  if (plan == NULL)
    return;
  wh_op_table_unref(plan->ops);
  g_free(plan->name);
  g_free(plan);
}

uint32_t wh_simai_plan_n_ops(const WhSimaiPlan *plan)
{
  return wh_op_table_len(plan->ops);
}

void wh_simai_plan_op(const WhSimaiPlan *plan, uint32_t i, WhSimaiOp *out)
{
  WhOpSpec o;
  wh_op_table_get(plan->ops, i, &o);
  *out = (WhSimaiOp){.kind = o.kind,
                     .coll = o.coll,
                     .algo = o.algo,
                     .group_kind = (WhSimaiGroup)o.tag,
                     .name = o.name,
                     .rank = o.rank,
                     .group = o.group,
                     .n_group = o.group_n,
                     .bytes = o.kind == WH_OP_COMPUTE ? 0 : o.bytes,
                     .duration = o.kind == WH_OP_COMPUTE ? o.duration : 0,
                     .deps = o.deps,
                     .n_deps = o.n_deps};
}

/* ---- size ---- */

/* What a plan holds: ops, dependency edges (an upper bound: duplicates are removed
 * when the ops are made), distinct names, and its distinct groups and their ranks. */
typedef struct {
  uint64_t ops, edges, names, groups, group_ranks;
} Count;

/* The schedule walked for one rank standing for all: every rank runs the same steps
 * (groups of a kind have one size, and all or none are skipped), so one stream length
 * stands for every rank's, and per layer one flag for whether its weight-grad comm is
 * what the next forward waits for. O(layers) memory. */
typedef struct {
  const Builder *b;
  uint64_t stream;
  gboolean *wg;
  Count c;
} Walk;

static void walk_computes(void *ctx, uint32_t layer, int phase)
{
  Walk *k = ctx;
  const Layer *l = &g_array_index(k->b->p->layers, Layer, layer);
  if (l->compute_ns[phase] == 0)
    return;
  uint64_t n = k->b->shape.n;
  k->c.ops += n;
  k->c.edges += n * k->stream;
  k->c.names++;
  k->stream = 1;
}

static void walk_collectives(void *ctx, uint32_t layer, int phase, gboolean blocking)
{
  Walk *k = ctx;
  const Layer *l = &g_array_index(k->b->p->layers, Layer, layer);
  const Comm *c = &l->comm[phase];
  if (c->none || c->bytes == 0)
    return;
  const Shape *s = &k->b->shape;
  WhSimaiGroup kind = group_kind(k->b, phase, c->suffix);
  uint64_t m = kind == WH_SIMAI_GROUP_TP      ? s->tp
               : kind == WH_SIMAI_GROUP_DP    ? s->dp
               : kind == WH_SIMAI_GROUP_EP    ? s->ep
               : kind == WH_SIMAI_GROUP_DP_EP ? s->dp / s->ep
                                              : s->n;
  if (m < 2 || (kind == WH_SIMAI_GROUP_TP && !k->b->keep_tp))
    return;
  uint64_t n = s->n, groups = n / m;
  k->c.ops += groups;
  k->c.edges += n * k->stream; /* each group: its members' streams */
  k->c.names += groups;
  k->c.groups += groups;
  k->c.group_ranks += n;
  if (l->update_ns > 0) {
    k->c.ops += n;
    k->c.edges += n;
    k->c.names++;
  }
  if (blocking)
    k->stream = 1;
  else
    k->wg[layer] = TRUE;
}

static void walk_wait_wg(void *ctx, uint32_t layer)
{
  Walk *k = ctx;
  k->stream += k->wg[layer];
  k->wg[layer] = FALSE;
}

static const Steps walk_steps = {walk_computes, walk_collectives, walk_wait_wg};

/* Counts the plan of `p` over its iterations. Once an iteration ends in the state it
 * began with, every later one repeats it; a state that keeps changing grows the
 * streams, and so the edges, until they pass the limit. Names and groups are those of the first
 * iteration (later ones reuse them). */
static Count count_plan(const Parsed *p, const WhSimaiOptions *opts)
{
  uint32_t L = p->layers->len, ignored = 0;
  Builder b = {.p = p,
               .shape = {.n = p->n_gpus, .tp = p->tp, .pp = p->pp, .dp = p->dp, .ep = p->ep},
               .keep_tp = opts ? opts->keep_tp : FALSE};
  g_autofree gboolean *wg = g_new0(gboolean, L);
  g_autofree gboolean *wg_before = g_new0(gboolean, L);
  Walk k = {.b = &b, .wg = wg};
  Count total = {0};
  uint64_t it = opts && opts->iterations > 1 ? opts->iterations : 1;
  for (uint64_t i = 0; i < it; i++) {
    uint64_t stream_before = k.stream;
    memcpy(wg_before, wg, sizeof(gboolean) * L);
    k.c = (Count){0};
    schedule(&walk_steps, &k, p, &ignored);
    if (i == 0) {
      total = k.c;
      continue;
    }
    gboolean steady = k.stream == stream_before && memcmp(wg, wg_before, sizeof(gboolean) * L) == 0;
    uint64_t times = steady ? it - i : 1;
    total.ops += k.c.ops * times;
    total.edges += k.c.edges * times;
    if (steady || total.edges > UINT32_MAX)
      break; /* past the edge limit: refused, whatever follows */
  }
  return total;
}

/* The longest op name: "L<layer>." + a layer name (<= 64) + ".wg-comm.dpep<k>". */
#define NAME_BYTES 112u

/* The bytes the plan of `p` and the workload made of it take, from the parsed layers
 * alone: the ops and edges at the workload's bytes per op and edge (op table and run
 * state), the distinct names and groups, the builder's own arrays, and the run's
 * fixed part. */
static uint64_t estimate_bytes(const Parsed *p, const Count *c)
{
  uint64_t n = p->n_gpus, L = p->layers->len;
  return WH_WORKLOAD_BYTES_FIXED + c->ops * WH_WORKLOAD_BYTES_PER_OP +
         c->edges * WH_WORKLOAD_BYTES_PER_DEP +
         c->names * (WH_OP_TABLE_BYTES_PER_ENTRY + NAME_BYTES) +
         c->groups * (sizeof(uint32_t) + WH_OP_TABLE_BYTES_PER_ENTRY) +
         c->group_ranks * sizeof(uint32_t) + L * n * sizeof(uint32_t) +
         n * (2 * sizeof(uint32_t) + 64) + L * (sizeof(Layer) + 80);
}

WhSimaiPlan *wh_simai_plan_parse(const char *data, gsize len, const char *name, uint32_t max_ranks,
                                 const WhSimaiOptions *opts, GError **error)
{
  Parsed p = {.file = name,
              .gpus_given = opts ? opts->gpus : 0,
              .ckpt = g_array_new(FALSE, FALSE, sizeof(uint32_t)),
              .layers = g_array_new(FALSE, FALSE, sizeof(Layer))};
  if (!parse_all(&p, data, len, max_ranks, error)) {
    parsed_clear(&p);
    return NULL;
  }
  Count count = count_plan(&p, opts);
  uint64_t n_ops = count.ops, need = estimate_bytes(&p, &count);
  if (n_ops > UINT32_MAX - 1 || count.edges > UINT32_MAX) {
    g_set_error(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_TOO_LARGE,
                "%s: %u layers on %u GPUs make more than %u %s; a workload holds at most that",
                name, p.layers->len, p.n_gpus, n_ops > UINT32_MAX - 1 ? UINT32_MAX - 1 : UINT32_MAX,
                n_ops > UINT32_MAX - 1 ? "ops" : "dependency edges");
    parsed_clear(&p);
    return NULL;
  }
  if (opts && opts->max_bytes && need > opts->max_bytes) {
    g_autofree char *need_s = wh_units_format_bytes(need);
    g_autofree char *budget_s = wh_units_format_bytes(opts->max_bytes);
    g_set_error(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_TOO_LARGE,
                "%s: %u layers on %u GPUs make about %" G_GUINT64_FORMAT
                " ops needing about %s; the memory budget left after the network is %s "
                "(--max-memory)",
                name, p.layers->len, p.n_gpus, n_ops, need_s, budget_s);
    parsed_clear(&p);
    return NULL;
  }
  WhSimaiPlan *plan = g_new0(WhSimaiPlan, 1);
  plan->name = g_strdup(name);
  plan->ops = wh_op_table_new();
  wh_op_table_reserve(plan->ops, n_ops, 0);
  build(plan, &p, opts, n_ops);
  wh_op_table_trim(plan->ops);
  parsed_clear(&p);
  if (opts && opts->stats)
    *opts->stats = plan->stats;
  return plan;
}

WhSimaiPlan *wh_simai_plan_load(const char *path, uint32_t max_ranks, const WhSimaiOptions *opts,
                                GError **error)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autoptr(GError) err = NULL;
  if (!wh_file_read(path, WH_MAX_INPUT_BYTES, &data, &len, &err)) {
    g_set_error(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_IO, "%s: %s", path, err->message);
    return NULL;
  }
  return wh_simai_plan_parse(data, len, path, max_ranks, opts, error);
}

gboolean wh_simai_plan_apply(const WhSimaiPlan *plan, WhWorkload *w, GError **error)
{
  if (plan->stats.n_gpus > wh_workload_n_ranks(w))
    return wh_error_set_at(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_INVALID, plan->name, 1,
                           "%u GPUs but the workload has only %u ranks", plan->stats.n_gpus,
                           wh_workload_n_ranks(w));
  g_autoptr(GError) err = NULL;
  if (!wh_workload_add_table(w, plan->ops, &err)) {
    g_set_error(error, WH_SIMAI_ERROR, WH_SIMAI_ERROR_INVALID, "%s: %s", plan->name, err->message);
    return FALSE;
  }
  return TRUE;
}

static gboolean import_plan(WhWorkload *w, WhSimaiPlan *plan, GError **error)
{
  if (!plan)
    return FALSE;
  gboolean ok = wh_simai_plan_apply(plan, w, error);
  wh_simai_plan_free(plan);
  return ok;
}

gboolean wh_simai_import(WhWorkload *w, const char *path, const WhSimaiOptions *opts,
                         GError **error)
{
  return import_plan(w, wh_simai_plan_load(path, wh_workload_n_ranks(w), opts, error), error);
}

gboolean wh_simai_import_memory(WhWorkload *w, const char *data, gsize len, const char *name,
                                const WhSimaiOptions *opts, GError **error)
{
  return import_plan(w, wh_simai_plan_parse(data, len, name, wh_workload_n_ranks(w), opts, error),
                     error);
}

const char *wh_simai_policy_name(WhSimaiPolicy policy)
{
  switch (policy) {
  case WH_SIMAI_POLICY_DATA:
    return "DATA";
  case WH_SIMAI_POLICY_MICRO:
    return "MICRO";
  case WH_SIMAI_POLICY_HYBRID_TRANSFORMER:
    return "HYBRID_TRANSFORMER";
  case WH_SIMAI_POLICY_HYBRID_TRANSFORMER_FWD_IN_BCKWD:
    return "HYBRID_TRANSFORMER_FWD_IN_BCKWD";
  }
  return "?";
}

const char *wh_simai_group_name(WhSimaiGroup group)
{
  static const char *const names[] = {"rank", "tp", "dp", "ep", "dpep", "all"};
  return (unsigned)group < G_N_ELEMENTS(names) ? names[group] : "?";
}
