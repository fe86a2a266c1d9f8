/*
 * tfile.h — tensor files: ONNX TensorProto .pb, numpy .npy and .npz, and the
 * ONNX test-data layout (test_data_set_N/input_K.pb, output_K.pb).
 *
 * Readers decode from memory (the fuzzers call these directly) or from a
 * path, which is memory-mapped; every size read from a file is checked
 * against the bytes really present before anything is allocated.  Writers
 * encode into an onp_buf, and the path writers are atomic (temporary file +
 * rename): a failed write leaves no partial file.
 *
 * Tensor specs on the command line: "X.pb", "X.npy", "X.npz:NAME".
 */
#ifndef ONNXPARITY_TFILE_H
#define ONNXPARITY_TFILE_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/buf.h"
#include "onnxparity/error.h"
#include "onnxparity/tensor.h"

typedef enum onp_tformat {
    ONP_TF_UNKNOWN = 0,
    ONP_TF_PB,  /* ONNX TensorProto */
    ONP_TF_NPY, /* numpy .npy v1/v2/v3 */
    ONP_TF_NPZ  /* numpy .npz (zip of .npy) */
} onp_tformat;

/* Options for writers. */
typedef struct onp_twrite_opts {
    int big_endian;    /* npy: write '>' byte order (default little) */
    int fortran_order; /* npy: write column-major data */
    int npy_version;   /* npy: 1, 2 or 3; 0 = smallest that fits */
    int deflate;       /* npz: compress members (default stored) */
    int pb_typed;      /* pb: use the typed *_data fields instead of raw_data */
} onp_twrite_opts;

/* Limits applied by readers (0 = default).  Defaults documented in
 * docs/formats.md: members of an .npz may not expand past max_bytes. */
typedef struct onp_tread_opts {
    size_t max_bytes; /* cap on one tensor's decoded bytes; default 16 GiB */
} onp_tread_opts;

/* The format implied by a file name (extension), or ONP_TF_UNKNOWN. */
onp_tformat onp_tformat_from_path(const char *path);

/* --- TensorProto (.pb) ------------------------------------------------ */

/* Decode a serialized TensorProto.  `file` names the source in errors and
 * `base_off` is the byte offset of buf[0] in it.  External-data tensors are
 * refused here (they need a model folder: see model.h).  The result owns its
 * data (a copy: .pb tensors are fixtures, not weights). */
int onp_pb_tensor_decode(const uint8_t *buf, size_t n, const char *file, int64_t base_off,
                         onp_tensor *out, onp_error *e);

/* Encode a tensor as a TensorProto (raw_data, or typed fields when asked). */
int onp_pb_tensor_encode(const onp_tensor *t, const onp_twrite_opts *o, onp_buf *out, onp_error *e);

/* --- .npy --------------------------------------------------------------- */

int onp_npy_decode(const uint8_t *buf, size_t n, const char *file, const onp_tread_opts *ro,
                   onp_tensor *out, onp_error *e);
int onp_npy_encode(const onp_tensor *t, const onp_twrite_opts *o, onp_buf *out, onp_error *e);

/* --- .npz --------------------------------------------------------------- */

typedef struct onp_npz onp_npz; /* an opened archive */

/* Open an archive held in memory (`buf` must outlive the handle) or a file.
 * Member names are checked: "..", absolute paths, NUL bytes and duplicates
 * are refused. */
int onp_npz_open_mem(const uint8_t *buf, size_t n, const char *file, const onp_tread_opts *ro,
                     onp_npz **out, onp_error *e);
int onp_npz_open(const char *path, const onp_tread_opts *ro, onp_npz **out, onp_error *e);
/* Number of members, and the array name of member i ("x" for "x.npy"). */
size_t onp_npz_count(const onp_npz *z);
const char *onp_npz_name(const onp_npz *z, size_t i);
/* Index of the member named `name`, or -1. */
long onp_npz_find(const onp_npz *z, const char *name);
/* Decode member i. */
int onp_npz_read(onp_npz *z, size_t i, onp_tensor *out, onp_error *e);
void onp_npz_close(onp_npz *z);

/* Write `n` tensors as an .npz; member names come from the tensors' names
 * (required, unique). */
int onp_npz_encode(const onp_tensor *const *ts, size_t n, const onp_twrite_opts *o, onp_buf *out,
                   onp_error *e);

/* --- by path ------------------------------------------------------------ */

/* Read a tensor spec: "X.pb", "X.npy" or "X.npz:NAME" (NAME may be omitted
 * when the archive holds exactly one array).  The tensor's name is set from
 * the TensorProto name, the npz member, or the file stem. */
int onp_tfile_read(const char *spec, const onp_tread_opts *ro, onp_tensor *out, onp_error *e);

/* Write one tensor by extension (.pb, .npy, or .npz with one member),
 * atomically. */
int onp_tfile_write(const char *path, const onp_tensor *t, const onp_twrite_opts *o, onp_error *e);

/* --- ONNX test-data layout --------------------------------------------- */

typedef struct onp_fixture {
    char *dir;       /* "…/test_data_set_3" */
    int index;       /* 3 */
    size_t n_inputs; /* input_0.pb … contiguous from 0 */
    char **inputs;   /* [n_inputs] paths */
    size_t n_outputs;
    char **outputs; /* [n_outputs] paths */
} onp_fixture;

typedef struct onp_testdata {
    size_t n;          /* fixtures, sorted by index */
    onp_fixture *sets; /* [n] */
} onp_testdata;

/* Scan `dir` for test_data_set_N folders holding input_K / output_K
 * tensor files (numbered contiguously from 0), each `.pb`, `.npy` or `.npz`
 * (an archive of one array; one file per K).  A `dir` with no
 * test_data_set_N folder that holds such files itself is one fixture (its
 * index N when it is named test_data_set_N, else 0).  An empty result is
 * not an error (onp_testdata_require says whether anything is compared). */
int onp_testdata_scan(const char *dir, onp_testdata *td, onp_error *e);
/* onp_testdata_scan over each of dirs[n], the fixtures in that order; with
 * more than one folder, each fixture's index becomes its position. */
int onp_testdata_scan_dirs(const char *const *dirs, size_t n, onp_testdata *td, onp_error *e);
/* 0 when some fixture of td holds an expected output; else ONP_ERR_USAGE
 * (exit 2) "nothing to compare", saying whether no fixture was found or
 * none holds an output_K file.  `where` names the folder(s) in the error. */
int onp_testdata_require(const onp_testdata *td, const char *where, onp_error *e);
void onp_testdata_free(onp_testdata *td);

/* The float64 eager reference of output k that the capture writes beside a
 * fixture (DIR/reference64/output_K.pb, docs/capture.md), read into *t:
 * 1 read (t owned), 0 no such file (t zeroed), -1 unreadable (e set). */
int onp_fixture_read_ref64(const onp_fixture *f, size_t k, onp_tensor *t, onp_error *e);
/* Whether that file exists (1) or not (0), nothing read. */
int onp_fixture_has_ref64(const onp_fixture *f, size_t k);
/* The path of output k's tie-ordered reference (DIR/tie_ordered/output_K.pb,
 * docs/formats.md) into path[n]: 1 when that file exists, else 0. */
int onp_fixture_tie_path(const onp_fixture *f, size_t k, char *path, size_t n);

#endif
