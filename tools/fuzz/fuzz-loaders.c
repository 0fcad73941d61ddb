/* fuzz-loaders: a seeded mutation fuzzer for the two input loaders. It reads a corpus
 * (the scenario .xml and SimAI .txt files under the directories given), mutates
 * copies with a deterministic RNG and feeds each to its loader in-process: a scenario
 * to wh_scenario_load_memory and wh_run_new (what `whsim validate` does, under a
 * 64 MB memory budget), a SimAI file to wh_simai_plan_parse. A case passes when the
 * loader accepts its input or refuses it with a clear message: non-empty, valid
 * UTF-8, printable, starting with the file's name. A crash or a sanitizer report (the
 * sanitizer build aborts) or a GLib critical ends the process; an unclear message fails the run
 * (exit 1).
 * `--case N` replays one case and prints its input. Cost: about a millisecond a case. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "run.h"
#include "scenario.h"
#include "simai-import.h"

typedef struct {
  char *path;
  char *data;
  gsize len;
  gboolean simai;
} Seed;

static void seed_free(gpointer p)
{
  Seed *s = p;
  g_free(s->path);
  g_free(s->data);
  g_free(s);
}

static gint cmp_names(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void collect(const char *dir, GPtrArray *seeds)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  if (d == NULL)
    return;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  for (const char *n; (n = g_dir_read_name(d)) != NULL;)
    g_ptr_array_add(names, g_strdup(n));
  g_ptr_array_sort(names, cmp_names); /* deterministic corpus order */
  for (guint i = 0; i < names->len; i++) {
    const char *n = names->pdata[i];
    g_autofree char *path = g_build_filename(dir, n, NULL);
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
      collect(path, seeds);
      continue;
    }
    gboolean xml = g_str_has_suffix(n, ".xml"), txt = g_str_has_suffix(n, ".txt");
    if (!xml && !txt)
      continue;
    Seed *s = g_new0(Seed, 1);
    if (!g_file_get_contents(path, &s->data, &s->len, NULL) || s->len > (1u << 20)) {
      g_free(s->data);
      g_free(s);
      continue;
    }
    s->path = g_steal_pointer(&path);
    s->simai = txt;
    g_ptr_array_add(seeds, s);
  }
}

static const char *const tokens[] = {
    "<",
    ">",
    "\"",
    "&amp;",
    "&#0;",
    "]]>",
    "<!DOCTYPE x>",
    "</flows>",
    "<flow/>",
    "-1",
    "0",
    "4294967296",
    "1e308",
    "nan",
    "18446744073709551616",
    "99999999999999999999s",
    "0ps",
    "100Gbps",
    "ALLREDUCE",
    "BROADCAST",
    "NONE",
    "\t",
    "\n",
    "\r\n",
    "\xc3\xa9",
    "\xff",
    "all_gpus:",
    "pp_comm:",
    "8388608.0",
    " ",
    "wh::FatTree",
    "K",
    "=",
};
static const char *const numbers[] = {"0",          "1",          "-1", "65536", "4294967295",
                                      "4294967296", "1000000000", "7",  "128",   "2"};

static gsize pick(WhRng *r, gsize n)
{
  return n ? (gsize)(wh_rng_next(r) % n) : 0;
}

/* One to four mutations of `s`. */
static void mutate(GString *s, WhRng *r)
{
  int n = 1 + (int)pick(r, 4);
  for (int k = 0; k < n; k++) {
    gsize at = pick(r, s->len + 1);
    switch (pick(r, 7)) {
    case 0: /* replace a byte */
      if (s->len)
        s->str[pick(r, s->len)] = (char)(wh_rng_next(r) & 0xff);
      break;
    case 1: /* insert a token */
      g_string_insert(s, (gssize)at, tokens[pick(r, G_N_ELEMENTS(tokens))]);
      break;
    case 2: { /* delete a range */
      gsize len = 1 + pick(r, 16);
      g_string_erase(s, (gssize)at, (gssize)MIN(s->len - at, len));
      break;
    }
    case 3: { /* duplicate a range elsewhere */
      gsize len = 1 + pick(r, 64);
      len = MIN(s->len - at, len);
      g_autofree char *piece = g_strndup(s->str + at, len);
      g_string_insert(s, (gssize)pick(r, s->len + 1), piece);
      break;
    }
    case 4: { /* replace a number */
      gsize i = at;
      while (i < s->len && !g_ascii_isdigit(s->str[i]))
        i++;
      gsize j = i;
      while (j < s->len && g_ascii_isdigit(s->str[j]))
        j++;
      if (j > i) {
        g_string_erase(s, (gssize)i, (gssize)(j - i));
        g_string_insert(s, (gssize)i, numbers[pick(r, G_N_ELEMENTS(numbers))]);
      }
      break;
    }
    case 5: /* truncate */
      g_string_truncate(s, at);
      break;
    default: { /* repeat a line */
      const char *nl = memchr(s->str + at, '\n', s->len - at);
      if (nl) {
        const char *end = memchr(nl + 1, '\n', s->len - (gsize)(nl + 1 - s->str));
        gsize len = end ? (gsize)(end - nl) : s->len - (gsize)(nl - s->str);
        g_autofree char *line = g_strndup(nl, len);
        g_string_insert(s, (gssize)(nl - s->str), line);
      }
      break;
    }
    }
  }
}

/* NULL when `msg` is a clear refusal of `name`, else why not. */
static const char *unclear(const char *msg, const char *name)
{
  if (msg == NULL || msg[0] == '\0')
    return "empty message";
  if (!g_utf8_validate(msg, -1, NULL))
    return "not UTF-8";
  for (const char *p = msg; *p; p++)
    if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t')
      return "control character";
  if (!g_str_has_prefix(msg, name))
    return "does not start with the file name";
  if (strstr(msg, "(null)"))
    return "says (null)";
  return NULL;
}

/* Runs one case; NULL when it passes, else why (and *msg_out the message). */
static const char *run_case(const Seed *seed, const GString *input, char **msg_out)
{
  g_autoptr(GError) err = NULL;
  if (seed->simai) {
    WhSimaiOptions opts = {.max_bytes = 64u << 20};
    g_autoptr(WhSimaiPlan) plan =
        wh_simai_plan_parse(input->str, input->len, seed->path, 64, &opts, &err);
    if (plan)
      return NULL;
  } else {
    g_autoptr(WhScenario) sc = wh_scenario_load_memory(input->str, input->len, seed->path, &err);
    WhRunOptions opts = {.max_memory = 64u << 20};
    g_autoptr(WhRun) run = sc ? wh_run_new(sc, &opts, &err) : NULL;
    if (run)
      return NULL;
  }
  *msg_out = g_strdup(err ? err->message : NULL);
  return unclear(err ? err->message : NULL, seed->path);
}

int main(int argc, char **argv)
{
  gint cases = 5000, replay = -1;
  gboolean verbose = FALSE;
  gint64 seed_arg = 1;
  GOptionEntry entries[] = {
      {"cases", 0, 0, G_OPTION_ARG_INT, &cases, "number of cases (default 5000)", "N"},
      {"seed", 0, 0, G_OPTION_ARG_INT64, &seed_arg, "RNG seed (default 1)", "S"},
      {"case", 0, 0, G_OPTION_ARG_INT, &replay, "replay case N only, printing its input", "N"},
      {"verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "print each case's outcome", NULL},
      {NULL},
  };
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("DIR... - fuzz the scenario and SimAI loaders");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err) || argc < 2 || cases < 1) {
    fprintf(stderr, "fuzz-loaders: %s\n", err ? err->message : "give corpus directories");
    return 2;
  }
  wh_registry_init();
  g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING); /* a failed check: a bug */
  g_autoptr(GPtrArray) seeds = g_ptr_array_new_with_free_func(seed_free);
  for (int i = 1; i < argc; i++)
    collect(argv[i], seeds);
  if (seeds->len == 0) {
    fprintf(stderr, "fuzz-loaders: no .xml or .txt files in the corpus\n");
    return 2;
  }
  guint xml = 0, failed = 0, accepted = 0;
  for (guint i = 0; i < seeds->len; i++)
    xml += !((Seed *)seeds->pdata[i])->simai;
  gint first = replay >= 0 ? replay : 0, last = replay >= 0 ? replay + 1 : cases;
  for (gint c = first; c < last; c++) {
    const Seed *seed = seeds->pdata[(guint)c % seeds->len];
    WhRng rng;
    wh_rng_init(&rng, (uint64_t)seed_arg, (uint64_t)c);
    g_autoptr(GString) input = g_string_new_len(seed->data, (gssize)seed->len);
    mutate(input, &rng);
    if (replay >= 0)
      fprintf(stderr, "case %d from %s:\n%s\n---\n", c, seed->path, input->str);
    g_autofree char *msg = NULL;
    const char *why = run_case(seed, input, &msg);
    accepted += msg == NULL;
    if (verbose)
      printf("case %d: %s\n", c, msg ? msg : "accepted");
    if (why) {
      failed++;
      fprintf(stderr, "case %d (seed %" G_GINT64_FORMAT ", from %s): %s: %s\n", c, seed_arg,
              seed->path, why, msg ? msg : "");
    }
  }
  printf("fuzz-loaders: %d cases from %u files (%u scenarios, %u SimAI), seed %" G_GINT64_FORMAT
         ": %u accepted, %d refused, %u unclear\n",
         last - first, seeds->len, xml, seeds->len - xml, seed_arg, accepted,
         last - first - (gint)accepted, failed);
  return failed ? 1 : 0;
}
