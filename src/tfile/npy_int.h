/*
 * npy_int.h — the .npy and .pb decoders' zero-copy entries, for readers
 * that hold the file's bytes in a reference-counted map (tfile.c).
 * Internal.
 */
#ifndef ONP_TFILE_NPY_INT_H
#define ONP_TFILE_NPY_INT_H

#include "onnxparity/tfile.h"

/* onp_npy_decode, except that when `borrow_owner` is non-NULL and the data
 * is numeric, little-endian, C-ordered and aligned, the tensor points into
 * `buf` instead of copying it: borrow_ref(owner) is called, and the tensor's
 * release calls borrow_unref(owner).  Otherwise it decodes into owned data,
 * exactly as onp_npy_decode. */
int onp_npy_decode_borrow(const uint8_t *buf, size_t n, const char *file, const onp_tread_opts *ro,
                          void *borrow_owner, void (*borrow_ref)(void *),
                          void (*borrow_unref)(void *), onp_tensor *out, onp_error *e);

/* onp_pb_tensor_decode, except that when `borrow_owner` is non-NULL and
 * the values are raw_data of a fixed-size numeric type other than bool,
 * aligned for the element, the tensor points into `buf` (borrow_ref and
 * borrow_unref as above).  Otherwise it decodes into owned data, exactly as
 * onp_pb_tensor_decode. */
int onp_pb_tensor_decode_borrow(const uint8_t *buf, size_t n, const char *file, int64_t base_off,
                                void *borrow_owner, void (*borrow_ref)(void *),
                                void (*borrow_unref)(void *), onp_tensor *out, onp_error *e);

/* onp_tfile_read for a .pb fixture that is only passed on, never read as
 * typed values here: an isolated session's input (src/judge/fixture.c).
 * Where its raw_data is a fixed-size numeric type other than bool, the
 * tensor views the file's map whatever the alignment (free_fn
 * onp_map_unref_view says so); read its bytes with memcpy only (an
 * isolated session's worker copies an unaligned one into aligned memory
 * of its own).  Anything else is read as onp_tfile_read reads it. */
int onp_tfile_read_view(const char *spec, onp_tensor *out, onp_error *e);

#endif
