/*
 * sha256.c — SHA-256 through libcrypto's EVP interface (sha256.h).
 */
#include <openssl/evp.h>
#include <string.h>

#include "util/sha256.h"

void onp_sha256_init(onp_sha256 *s)
{
    s->failed = 0;
    s->ctx = EVP_MD_CTX_new();
    if (!s->ctx || EVP_DigestInit_ex(s->ctx, EVP_sha256(), NULL) != 1) s->failed = 1;
}

void onp_sha256_update(onp_sha256 *s, const void *p, size_t n)
{
    if (!s->failed && n && EVP_DigestUpdate(s->ctx, p, n) != 1) s->failed = 1;
}

int onp_sha256_final(onp_sha256 *s, uint8_t out[32])
{
    unsigned int len = 0;
    if (s->failed || EVP_DigestFinal_ex(s->ctx, out, &len) != 1 || len != 32) {
        memset(out, 0, 32);
        s->failed = 1;
    }
    EVP_MD_CTX_free(s->ctx);
    s->ctx = NULL;
    return s->failed ? -1 : 0;
}

void onp_sha256_tohex(const uint8_t d[32], char hex[65])
{
    static const char x[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = x[d[i] >> 4];
        hex[2 * i + 1] = x[d[i] & 15];
    }
    hex[64] = '\0';
}

void onp_sha256_hex(const void *p, size_t n, char hex[65])
{
    uint8_t d[32];
    unsigned int len = 0;
    if (EVP_Digest(p, n, d, &len, EVP_sha256(), NULL) != 1 || len != 32) memset(d, 0, sizeof d);
    onp_sha256_tohex(d, hex);
}
