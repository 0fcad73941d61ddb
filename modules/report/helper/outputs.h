/* The files whsim writes into an output directory, kept in one list (outputs.c), and
 * how one run's set of them is put in place: each file is first written into a
 * staging directory inside the output directory; once all are written they are
 * renamed over their final names, and the listed files this run did not produce (left
 * by an earlier run with other options) are removed. A file not in the list is never
 * written, renamed or removed. The staging directory (".whsim-XXXXXX") is locked (flock)
 * while its set lives; one left by a killed run, whose lock is gone with its process,
 * is removed by the next set made in the same directory, while those of runs still
 * writing there are left alone. Cost: one write and one rename per file. */
#ifndef WH_OUTPUTS_H
#define WH_OUTPUTS_H

#include <glib.h>
#include <stdio.h>

/* Every file name whsim may write into an output directory, NULL-terminated. A
 * feature that adds an output appends its name here. */
extern const char *const wh_output_files[];

/* Checks that `dir` can hold outputs and creates it: a non-empty path that is a
 * directory or can be created as one, in which a file can be created (probed), and in
 * which every name of wh_output_files is missing or a regular file (a device, FIFO,
 * directory or symbolic link there is refused, never replaced). */
gboolean wh_output_dir_prepare(const char *dir, GError **error);
/* The same for the NULL-terminated list `files` (transfer none: it must outlive the sets
 * made with it) of another tool's outputs (whsim export-hpcc), kept apart so that a run
 * never removes them and they never remove a run's. */
gboolean wh_output_dir_prepare_for(const char *dir, const char *const *files, GError **error);

typedef struct WhOutputSet WhOutputSet;

/* Starts a set in `dir` (created if missing). (transfer full) */
WhOutputSet *wh_output_set_new(const char *dir, GError **error);
/* A set of the names in `files` (as wh_output_dir_prepare_for); add, commit and free as
 * for a run's. */
WhOutputSet *wh_output_set_new_for(const char *dir, const char *const *files, GError **error);
/* Stages `text` as `name`, which must be in wh_output_files. */
gboolean wh_output_set_add(WhOutputSet *set, const char *name, const char *text, GError **error);

/* Writes the content of an output to `f`; FALSE with an error to give the file up. */
typedef gboolean (*WhOutputWriter)(FILE *f, const void *data, GError **error);
/* Stages `name` (in wh_output_files) as `write` writes it, straight to the file (for
 * outputs too large to build in memory first). A failed write (a full disk, a file-size
 * limit: the error says which) or a writer's error gives the file up. */
gboolean wh_output_set_add_stream(WhOutputSet *set, const char *name, WhOutputWriter write,
                                  const void *data, GError **error);
/* Puts the staged files in place and removes the listed files not staged. */
gboolean wh_output_set_commit(WhOutputSet *set, GError **error);
/* Frees the set; files staged and not committed are deleted. */
void wh_output_set_free(WhOutputSet *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhOutputSet, wh_output_set_free)

#endif
