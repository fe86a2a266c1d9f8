/*
 * sha256.h — SHA-256 for model fingerprints and for tests that compare
 * tensor bytes.  Backed by OpenSSL's libcrypto (a maintained library that
 * uses the CPU's SHA instructions: a 45 MB model hashes in tens of
 * milliseconds).  Internal.
 */
#ifndef ONP_UTIL_SHA256_H
#define ONP_UTIL_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct onp_sha256 {
    void *ctx; /* EVP_MD_CTX, owned; NULL after final or when allocation failed */
    int failed;
} onp_sha256;

/* Streaming use: init, update..., final (which releases the context).  A
 * failed allocation makes final produce all-zero bytes and return -1. */
void onp_sha256_init(onp_sha256 *s);
void onp_sha256_update(onp_sha256 *s, const void *p, size_t n);
int onp_sha256_final(onp_sha256 *s, uint8_t out[32]);
/* Hex digest of a buffer into hex[65]. */
void onp_sha256_hex(const void *p, size_t n, char hex[65]);
void onp_sha256_tohex(const uint8_t d[32], char hex[65]);

#endif
