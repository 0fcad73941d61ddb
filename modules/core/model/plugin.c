/* Plugin loading with GModule; see plugin.h. */
#include "plugin.h"

#include <gmodule.h>

GQuark wh_plugin_error_quark(void)
{
  return g_quark_from_static_string("wh-plugin-error");
}

gboolean wh_plugin_load(const char *path, GError **error)
{
  static GHashTable *loaded; /* canonical path -> GModule* */
  if (!g_module_supported()) {
    g_set_error(error, WH_PLUGIN_ERROR, 0, "%s: this platform cannot load plugins", path);
    return FALSE;
  }
  g_autofree char *canon = g_canonicalize_filename(path, NULL);
  if (loaded == NULL)
    loaded = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  if (g_hash_table_contains(loaded, canon))
    return TRUE;
  GModule *mod = g_module_open(canon, G_MODULE_BIND_LOCAL);
  if (mod == NULL) {
    g_set_error(error, WH_PLUGIN_ERROR, 0, "%s: cannot load plugin: %s", path, g_module_error());
    return FALSE;
  }
  gpointer sym = NULL;
  if (!g_module_symbol(mod, "wh_plugin_init", &sym) || sym == NULL) {
    g_set_error(error, WH_PLUGIN_ERROR, 0, "%s: not a wormhole-sim plugin (no wh_plugin_init)",
                path);
    g_module_close(mod);
    return FALSE;
  }
  GError *err = NULL;
  if (!((WhPluginInitFn)sym)(&err)) {
    g_set_error(error, WH_PLUGIN_ERROR, 0, "%s: plugin init failed: %s", path,
                err ? err->message : "no reason given");
    g_clear_error(&err);
    g_module_close(mod);
    return FALSE;
  }
  g_module_make_resident(mod);
  g_hash_table_insert(loaded, g_steal_pointer(&canon), mod);
  return TRUE;
}
