/* JSON text of the project's files: a json-glib object written by JsonGenerator,
 * pretty-printed with two spaces of indentation and a final newline, the one layout of
 * every JSON file whsim writes (summary.json, compare.json, wormhole.json). Cost: one
 * pass over the object. */
#ifndef WH_JSON_TEXT_H
#define WH_JSON_TEXT_H

#include <json-glib/json-glib.h>

/* `object` as the text of a JSON file (transfer full); takes a reference of `object`. */
char *wh_json_text(JsonObject *object);

#endif
