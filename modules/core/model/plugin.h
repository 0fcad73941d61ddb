/* Plugins: shared libraries loaded by path with GModule that add model types
 * (congestion controls, ...) without rebuilding the engine. A plugin exports
 *   gboolean wh_plugin_init(GError **error);
 * which registers its types (e.g. with wh_cc_register). The engine's own modules are
 * linked in, not loaded: plugins cost nothing on the hot path beyond their own code. */
#ifndef WH_PLUGIN_H
#define WH_PLUGIN_H

#include <glib.h>

#define WH_PLUGIN_ERROR (wh_plugin_error_quark())
GQuark wh_plugin_error_quark(void);

typedef gboolean (*WhPluginInitFn)(GError **error);

/* Loads the plugin at `path` and runs its init; a plugin stays loaded for the life of
 * the process. Loading the same path twice is a no-op. */
gboolean wh_plugin_load(const char *path, GError **error);

#endif
