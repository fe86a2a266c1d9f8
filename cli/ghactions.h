/*
 * ghactions.h — what CI systems show beside a log: GitHub Actions workflow
 * commands (`::error title=T::message` lines on stdout, shown as
 * annotations on the run) and a Markdown job summary (appended to a file,
 * `$GITHUB_STEP_SUMMARY` on GitHub).  Used by check and gate
 * (`--annotations`, `--summary FILE`; docs/gate.md).
 *
 * Escaping: workflow-command data has '%', CR and LF percent-encoded,
 * property values also ':' and ','; Markdown table cells have '|' escaped
 * and line breaks as spaces.  The writers decide nothing: they format what
 * the command measured.
 */
#ifndef ONP_CLI_GHACTIONS_H
#define ONP_CLI_GHACTIONS_H

#include <stdio.h>

#include "onnxparity/causes.h"

/* One workflow command: `::LEVEL title=TITLE::MESSAGE` on `to`; LEVEL is
 * "error", "warning" or "notice".  `file` (may be NULL) adds file=FILE. */
void gh_command(FILE *to, const char *level, const char *file, const char *title,
                const char *message);

/* One ::error per cause (most likely first), titled with its id and
 * confidence, the first evidence and the fix as message. */
void gh_causes_commands(FILE *to, const onp_causes *cs, const char *model);

/* Text as a Markdown table cell (or inline text). */
void gh_md_text(FILE *to, const char *s);

/* The causes as a Markdown list ("" when there are none). */
void gh_md_causes(FILE *to, const onp_causes *cs);

/* Open `path` for appending a summary into *out: 0, or the exit code after
 * the one-line error.  The output rule of outpath.h holds for it as for
 * every file written: a file the run has read (the model, a fixture, the
 * criteria), or a path inside a fixture folder, is refused (exit 2) before
 * anything is appended; a folder, socket or block device too (exit 2).
 * The open never waits: a regular file (made when missing) or a character
 * device is appended to; a FIFO only when a process reads it already (else
 * exit 3, "a FIFO that no process reads"); a file that cannot be opened is
 * exit 3.
 *
 * *out collects the text in memory (at most 16 MiB); fclose(*out) appends
 * it with one write(2) loop, O_APPEND, and returns EOF after one line
 * naming the file when that or close(2) fails (a full disk, /dev/full, a
 * size limit: "cannot append the summary: REASON"); a regular file that
 * took part of the text is cut back to its old end, "(nothing appended)".
 * So a caller writes with stdio and checks fclose alone: `return fclose(f)
 * ? EXIT_IO : 0;` prints nothing more. */
int gh_summary_open(const char *path, FILE **out);

#endif
