/*
 * decode_int.h — what src/decode/ shares inside the library: the decode
 * bundle's manifest (generate.json, docs/decode.md) as read once.
 */
#ifndef ONP_DECODE_INT_H
#define ONP_DECODE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/decode.h"

#define ONP_DEC_SCHEMA "onnxparity.decode-bundle/1"
#define ONP_DEC_NAME 256

typedef struct onp_dec_batch {
    char dir[256];  /* folder inside the bundle (one name) */
    int rows;       /* prompts in it */
    int prompt_len; /* padded prompt length */
    int full;       /* logits.npy and logits64.npy present */
    int has_cache;  /* cache.npy and cache64.npy present (member "cache"; absent: = full) */
    int *lens;      /* [rows] real prompt lengths */
    int64_t *cache; /* [steps][4] the present key shape after each step */
} onp_dec_batch;

typedef struct onp_dec_manifest {
    char dir[1024];
    char model_type[64], exporter[32];
    int64_t vocab;
    int layers, steps, topk;
    int sample;         /* strategy "sample" (else "greedy") */
    double temperature; /* sample only */
    int64_t eos;        /* generation.eos_token_id, -1 none */
    int64_t pad;        /* generation.pad_token_id */
    char in_ids[ONP_DEC_NAME], in_mask[ONP_DEC_NAME], in_pos[ONP_DEC_NAME];
    char out_logits[ONP_DEC_NAME];
    char (*past)[ONP_DEC_NAME];    /* [2 * layers]: key_0, value_0, key_1, ... */
    char (*present)[ONP_DEC_NAME]; /* [2 * layers] */
    size_t n_batches;
    onp_dec_batch *batches;
} onp_dec_manifest;

/* The causes of r's defects from their pattern (causes.c; docs/generate.md):
 * every defect prompt gets one (prompt.cause), r->causes lists them. */
void onp_dec_causes(onp_decode_result *r);

/* Read dir/generate.json into *m (released on failure). */
int onp_dec_manifest_read(const char *dir, onp_dec_manifest *m, onp_error *e);
void onp_dec_manifest_release(onp_dec_manifest *m);

#endif
