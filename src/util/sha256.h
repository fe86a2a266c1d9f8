/*
 * sha256.h — SHA-256 (FIPS 180-4), streaming.  Used for model fingerprints
 * in result documents and by tests to compare tensor bytes.  Internal.
 */
#ifndef ONP_UTIL_SHA256_H
#define ONP_UTIL_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct onp_sha256 {
    uint32_t h[8];
    uint64_t len;    /* bytes hashed so far */
    uint8_t blk[64]; /* pending partial block */
    size_t n;        /* bytes in blk */
} onp_sha256;

void onp_sha256_init(onp_sha256 *s);
void onp_sha256_update(onp_sha256 *s, const void *p, size_t n);
void onp_sha256_final(onp_sha256 *s, uint8_t out[32]);
/* Hex digest of a buffer into hex[65]. */
void onp_sha256_hex(const void *p, size_t n, char hex[65]);
void onp_sha256_tohex(const uint8_t d[32], char hex[65]);

#endif
