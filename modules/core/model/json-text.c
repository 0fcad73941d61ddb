/* JSON text of the project's files; see json-text.h. */
#include "json-text.h"

char *wh_json_text(JsonObject *object)
{
  g_autoptr(JsonNode) root = json_node_init_object(json_node_alloc(), object);
  g_autoptr(JsonGenerator) gen = json_generator_new();
  json_generator_set_pretty(gen, TRUE);
  json_generator_set_indent(gen, 2);
  json_generator_set_root(gen, root);
  g_autofree char *text = json_generator_to_data(gen, NULL);
  return g_strconcat(text, "\n", NULL);
}
