/*
 * outpath.h — the one rule for every file onnxparity writes (reports,
 * criteria, tensors, models), applied by the library's writer
 * (onp_buf_write_file, onp_tfile_write) to every output path:
 *
 *   - an output that is the same file as anything the process has read
 *     (same device and inode: a model, its external data, a fixture, a
 *     criteria or result document), or that lies inside a fixture folder,
 *     is refused (ONP_ERR_USAGE, exit 2), the message naming both paths;
 *   - an existing character device or FIFO (/dev/null, `>(cmd)`) is
 *     written in place, never renamed over; a folder, socket or block
 *     device is refused (ONP_ERR_USAGE);
 *   - anything else is written to a temporary beside it (its name within
 *     NAME_MAX, mode from the umask), flushed and renamed into place; a
 *     failed or short write removes it and is ONP_ERR_IO (exit 3);
 *   - with onp_out_cleanup_on_signals(), SIGINT, SIGTERM and SIGHUP remove
 *     the temporaries being written before the process dies of the signal;
 *   - a folder of outputs (onp_out_mkdir_new) is made new, never reused,
 *     never through a link, never inside a folder the command reads.
 *
 * Files are noted as read by the library itself (every memory map; every
 * fixture folder scanned); a client notes what it reads by other means:
 *
 *     onp_out_note_read("criteria.json");  // after reading it
 *     onp_out_note_tree("bundle/test_data_set_0");
 *     if (onp_out_check("report.html", &e)) return cli_report(&e);
 *
 * The table is process-wide and thread-safe; it only grows.
 */
#ifndef ONNXPARITY_OUTPATH_H
#define ONNXPARITY_OUTPATH_H

#include "onnxparity/error.h"

/* Note `path` (a file the process reads) so that no output replaces it.
 * A path that cannot be stat'ed is ignored (nothing to protect). */
void onp_out_note_read(const char *path);
/* Note folder `dir`: no output may be written anywhere below it. */
void onp_out_note_tree(const char *dir);

/* 0 when `path` may be written under the rule above; -1 with `e` filled
 * otherwise.  The writers call it; a client calls it for a file another
 * program writes (ONNX Runtime's optimized model). */
int onp_out_check(const char *path, onp_error *e);

/* 0 when `dir` may be made as a new output folder (bisect's and
 * diagnose's --save-repro), the rule for a folder of outputs:
 *   - nothing exists at `dir`: no folder (empty or not), no file, no
 *     symbolic link (dangling or not) — never written into or through;
 *   - neither the folder that would hold it nor any folder above it is a
 *     fixture folder the process reads (onp_out_note_tree) or one of
 *     reads[0..n_reads): folders the command reads as a whole (a bundle,
 *     --data folders; those that are not folders are skipped; at most 16).
 * Links and relative paths resolve as the kernel resolves them.  -1 with
 * `e` otherwise: ONP_ERR_USAGE (exit 2) for the rule, the path named;
 * ONP_ERR_IO when the folder to hold it does not exist. */
int onp_out_check_new_dir(const char *dir, const char *const *reads, size_t n_reads, onp_error *e);

/* Check `dir` as above, then make it (mode from the umask).  mkdir never
 * follows a link in the last component and fails when anything appeared
 * there since the check (ONP_ERR_USAGE).  0: the caller owns the folder. */
int onp_out_mkdir_new(const char *dir, const char *const *reads, size_t n_reads, onp_error *e);

/* Install handlers for SIGINT, SIGTERM and SIGHUP (each only where the
 * disposition is still the default) that remove the temporaries being
 * written, then die by the same signal.  Call once, early, from main. */
void onp_out_cleanup_on_signals(void);

#endif
