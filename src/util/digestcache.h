/*
 * digestcache.h — a file's sha256, cached by its stat identity.  Internal.
 *
 * Hashing a big file on every command costs: the ONNX Runtime library
 * (the report's environment.ort_library_sha256) is 27 MiB, 15-20 ms of CPU,
 * a quarter of a 1 MiB check (issue 34).  So digests are kept in a small
 * cache file, $XDG_CACHE_HOME/onnxparity/NAME (else ~/.cache/onnxparity/
 * NAME), one line per file: device, inode, size, mtime and ctime
 * (nanoseconds), digest; the newest first, at most 32 lines.  A line is
 * used only when all five match the file opened now.  Writing a file's
 * bytes always moves its ctime, and no call lets a user set ctime back
 * (utimensat sets mtime and atime only), so a file whose bytes changed
 * never matches an older line: the digest stays the file's.
 *
 * The cache is best effort: no HOME, a read-only folder, a malformed line
 * — the file is hashed as if there were no cache.  ONNXPARITY_NO_CACHE
 * (set, not empty, not "0") turns it off.  Depends on fsio (the map) and
 * sha256 only.
 */
#ifndef ONP_UTIL_DIGESTCACHE_H
#define ONP_UTIL_DIGESTCACHE_H

#include "onnxparity/error.h"

/* The sha256 of the file at `path` into hex[65] (lowercase, NUL-ended):
 * from the cache file `name` (one folder level: "ort-sha256") when it holds
 * a line for this very file, else hashed (the file mapped) and added to it.
 * 0, or -1 with e naming path: ONP_ERR_IO "cannot open: REASON", the map's
 * errors (onp_map_fd), ONP_ERR_NOMEM "out of memory hashing"; hex is then
 * left as it was. */
int onp_file_sha256(const char *path, const char *name, char hex[65], onp_error *e);

#endif
