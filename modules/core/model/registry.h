/* The type registry and configuration store (ns-3 TypeId + attributes, reduced).
 * Every model type registers a name ("wh::DcqcnCc"), a kind and a parameter table
 * (name, type, default, unit, help, bounds). A WhConfig holds overrides keyed
 * "Type::Param"; each is parsed and checked against the table when it is set, so an
 * unknown type, unknown parameter, malformed number, bad unit or out-of-range value
 * is an error at load time, never a silent default. Models read their parameters
 * once, at build time; nothing here is on the hot path. */
#ifndef WH_REGISTRY_H
#define WH_REGISTRY_H

#include <glib.h>
#include <stdio.h>
#include "wh-time.h"

#define WH_CONFIG_ERROR (wh_config_error_quark())
GQuark wh_config_error_quark(void);

typedef enum {
  WH_CONFIG_ERROR_UNKNOWN_TYPE,
  WH_CONFIG_ERROR_UNKNOWN_PARAM,
  WH_CONFIG_ERROR_BAD_VALUE,
  WH_CONFIG_ERROR_SYNTAX,
} WhConfigError;

typedef enum {
  WH_PARAM_INT,
  WH_PARAM_DOUBLE,
  WH_PARAM_BOOL,
  WH_PARAM_RATE,  /* bits per second */
  WH_PARAM_BYTES, /* bytes */
  WH_PARAM_TIME,  /* picoseconds */
  WH_PARAM_CHOICE,
} WhParamKind;

/* Bound checks applied to the parsed value (in base units). */
enum {
  WH_CHECK_MIN = 1 << 0,
  WH_CHECK_MAX = 1 << 1,
  WH_CHECK_POSITIVE = 1 << 2,
};

/* WhParamSpec.flags */
enum {
  /* At its default value the parameter leaves wh_config_digest unchanged: for a
   * parameter added later whose default keeps the model exactly as it was before, so
   * that stored runs and memo files made before it existed stay comparable. */
  WH_PARAM_DIGEST_OMITS_DEFAULT = 1 << 0,
};

typedef struct {
  const char *name;
  WhParamKind kind;
  const char *def;
  const char *help;
  unsigned check;
  double min, max;
  const char *const *choices; /* WH_PARAM_CHOICE: NULL-terminated */
  unsigned flags;             /* WH_PARAM_DIGEST_OMITS_DEFAULT */
} WhParamSpec;

/* A parameter a type no longer has: setting it is refused with `instead`, so a scenario
 * written for an older version learns what replaced it rather than that the name is
 * unknown. */
typedef struct {
  const char *name;    /* the old parameter name */
  const char *instead; /* "was removed: ..." or "moved to wh::OtherType::Param" */
} WhParamGone;

typedef struct {
  const char *name; /* "wh::DcqcnCc" */
  const char *kind; /* "congestion-control", "topology", ... */
  const char *help;
  const WhParamSpec *params; /* terminated by an entry with name == NULL */
  const WhParamGone *gone;   /* (nullable) terminated by an entry with name == NULL */
} WhTypeInfo;

typedef union {
  int64_t i;
  double d;
  gboolean b;
  uint64_t u; /* rate (b/s), bytes */
  WhTime t;
  int choice; /* index into choices */
} WhParamValue;

/* Registers a type (transfer none: `info` must outlive the process). A name already
 * registered, or a default that does not parse, is an error (WH_CONFIG_ERROR). The
 * registry only stores: whoever assembles the modules (the scenario loader, the
 * CLI, a plugin's init) registers their types. */
gboolean wh_registry_register(const WhTypeInfo *info, GError **error);

/* (transfer none) (nullable) */
const WhTypeInfo *wh_registry_lookup(const char *type_name);
const WhParamSpec *wh_type_find_param(const WhTypeInfo *type, const char *param);

/* All registered types sorted by name (transfer container). */
GPtrArray *wh_registry_types(void);

const char *wh_param_kind_unit(WhParamKind kind);

/* Parses `text` as a value of `spec`, checking bounds. A value its unit parser refuses
 * keeps that WH_UNITS_ERROR (domain and code: syntax, unit, range), its message
 * prefixed with the parameter; a choice not on the list or a value out of bounds is
 * WH_CONFIG_ERROR_BAD_VALUE. */
gboolean wh_param_parse(const WhParamSpec *spec, const char *text, WhParamValue *out,
                        GError **error);

/* Prints every type with its parameters, defaults, units and help. */
void wh_registry_print(FILE *out);

typedef struct WhConfig WhConfig;

/* (transfer full) */
WhConfig *wh_config_new(void);
void wh_config_free(WhConfig *cfg);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhConfig, wh_config_free)
/* A copy holding the same values and origins (transfer full). */
WhConfig *wh_config_copy(const WhConfig *cfg);

/* Sets "Type::Param" (split at the last "::") to `value`. `origin` (nullable) says
 * where the value came from, for messages ("scenario.xml:12"). A later set of the
 * same key replaces the earlier one. A value that does not parse fails with the error
 * of wh_param_parse (its domain and code kept); a parameter on the type's `gone` list
 * fails with WH_CONFIG_ERROR_UNKNOWN_PARAM and what replaced it. */
gboolean wh_config_set(WhConfig *cfg, const char *key, const char *value, const char *origin,
                       GError **error);
gboolean wh_config_set_param(WhConfig *cfg, const char *type, const char *param, const char *value,
                             const char *origin, GError **error);
/* Parses "Type::Param=value" as given to --set. */
gboolean wh_config_set_assignment(WhConfig *cfg, const char *assignment, const char *origin,
                                  GError **error);

/* Where the value in force came from ("file.xml:12", "command line"), or NULL for a
 * default. (transfer none) */
const char *wh_config_origin(const WhConfig *cfg, const char *type, const char *param);
int64_t wh_config_int(const WhConfig *cfg, const char *type, const char *param);
double wh_config_double(const WhConfig *cfg, const char *type, const char *param);
gboolean wh_config_bool(const WhConfig *cfg, const char *type, const char *param);
uint64_t wh_config_rate(const WhConfig *cfg, const char *type, const char *param);
uint64_t wh_config_bytes(const WhConfig *cfg, const char *type, const char *param);
WhTime wh_config_time(const WhConfig *cfg, const char *type, const char *param);
/* The chosen string of a WH_PARAM_CHOICE parameter (transfer none). */
const char *wh_config_choice(const WhConfig *cfg, const char *type, const char *param);

/* A 64-bit digest of the values in force (set or default) of every parameter of every
 * registered type whose kind is in `kinds` (NULL-terminated: "network", "transport",
 * ...): type and parameter names with their parsed values, in name order, so it does
 * not depend on how or in which order values were set. A parameter flagged
 * WH_PARAM_DIGEST_OMITS_DEFAULT is left out while it holds its default. */
uint64_t wh_config_digest(const WhConfig *cfg, const char *const *kinds);

#endif
