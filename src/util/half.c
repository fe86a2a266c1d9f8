/*
 * half.c — float16 / bfloat16 conversions (include/onnxparity/half.h).
 *
 * Upcasts build the float32 bit pattern directly, so they are exact.
 * Downcasts from float64 go straight to the 16-bit format (never through
 * float32, which would round twice).  Rounding is to nearest, ties to even,
 * done on the integer bit patterns.
 */
#include <string.h>

#include "onnxparity/half.h"

static float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static uint64_t f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

float onp_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) return f32_from_bits(sign | 0x7f800000u | (man << 13)); /* Inf / NaN */
    if (exp == 0) {
        if (man == 0) return f32_from_bits(sign);
        /* subnormal: value = man * 2^-24; normalise */
        int e = -1;
        do {
            man <<= 1;
            e++;
        } while (!(man & 0x400u));
        man &= 0x3ffu;
        return f32_from_bits(sign | ((uint32_t)(127 - 15 - e) << 23) | (man << 13));
    }
    return f32_from_bits(sign | ((exp + 127 - 15) << 23) | (man << 13));
}

/* float32 -> float64 by bits: a C conversion would quiet signalling NaNs. */
static double f64_from_f32_bits(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7f800000u) != 0x7f800000u || !(u & 0x7fffffu)) return (double)f;
    uint64_t b =
        (uint64_t)(u >> 31) << 63 | 0x7ff0000000000000ull | (uint64_t)(u & 0x7fffffu) << 29;
    double d;
    memcpy(&d, &b, 8);
    return d;
}

double onp_f16_to_f64(uint16_t h)
{
    return f64_from_f32_bits(onp_f16_to_f32(h));
}

float onp_bf16_to_f32(uint16_t b)
{
    return f32_from_bits((uint32_t)b << 16);
}

double onp_bf16_to_f64(uint16_t b)
{
    return f64_from_f32_bits(onp_bf16_to_f32(b));
}

/* Round a binary floating value, given as sign, unbiased exponent and a
 * 64-bit significand with the leading 1 at bit 63 (normalised), to a format
 * with `mbits` stored mantissa bits, exponent bias `bias` and all-ones
 * exponent `emax_field`.  Returns the bit pattern without sign.  Shared by
 * the float16 and bfloat16 downcasts from both float32 and float64. */
static uint32_t round_to_small(int exp, uint64_t sig, int mbits, int bias, uint32_t emax_field)
{
    int e_field = exp + bias;
    int shift; /* how many low bits of sig are dropped */
    if (e_field >= 1) {
        shift = 63 - mbits; /* keep the implicit 1 plus mbits */
    } else {
        /* subnormal in the target: denormalise */
        shift = 63 - mbits + (1 - e_field);
        e_field = 0;
        if (shift > 64) return 0; /* far below the smallest subnormal: ±0 */
    }
    uint64_t kept, rem, half;
    if (shift == 64) {
        kept = 0;
        rem = sig;
        half = (uint64_t)1 << 63;
    } else {
        kept = sig >> shift;
        rem = sig & (((uint64_t)1 << shift) - 1);
        half = (uint64_t)1 << (shift - 1);
    }
    if (rem > half || (rem == half && (kept & 1))) kept++;
    /* kept holds the implicit bit at position mbits (normal) or not
     * (subnormal).  Carry can move a subnormal to normal, or bump the
     * exponent. */
    uint32_t out;
    if (e_field == 0) {
        out = (uint32_t)kept; /* a carry into bit mbits makes it the smallest normal */
    } else {
        if (kept >> (mbits + 1)) { /* mantissa overflowed: 10.000 -> 1.000, exp+1 */
            kept >>= 1;
            e_field++;
        }
        if ((uint32_t)e_field >= emax_field) return emax_field << mbits; /* Inf */
        out = ((uint32_t)e_field << mbits) | (uint32_t)(kept & (((uint64_t)1 << mbits) - 1));
    }
    return out;
}

/* Decompose a finite non-zero double into exponent and normalised 64-bit
 * significand. */
static void decompose64(uint64_t bits, int *exp, uint64_t *sig)
{
    int e = (int)((bits >> 52) & 0x7ff);
    uint64_t m = bits & 0xfffffffffffffull;
    if (e == 0) { /* subnormal double */
        int lz = __builtin_clzll(m);
        *sig = m << lz;
        *exp = -1022 - (lz - 11);
        return;
    }
    *sig = (m | (1ull << 52)) << 11;
    *exp = e - 1023;
}

static uint16_t f64_to_small(double d, int mbits, int bias, uint32_t emax_field)
{
    uint64_t bits = f64_bits(d);
    uint16_t sign = (uint16_t)((bits >> 63) << 15);
    uint32_t e = (uint32_t)((bits >> 52) & 0x7ff);
    uint64_t m = bits & 0xfffffffffffffull;
    if (e == 0x7ff) {
        if (!m) return sign | (uint16_t)(emax_field << mbits);
        /* NaN: keep the top payload bits; if none survive, set the quiet
         * bit so the result stays NaN instead of becoming Inf. */
        uint32_t payload = (uint32_t)(m >> (52 - mbits));
        if (!payload) payload = 1u << (mbits - 1);
        return sign | (uint16_t)(emax_field << mbits) | (uint16_t)payload;
    }
    if (e == 0 && m == 0) return sign;
    int exp;
    uint64_t sig;
    decompose64(bits, &exp, &sig);
    return sign | (uint16_t)round_to_small(exp, sig, mbits, bias, emax_field);
}

uint16_t onp_f64_to_f16(double d)
{
    return f64_to_small(d, 10, 15, 0x1f);
}

uint16_t onp_f64_to_bf16(double d)
{
    return f64_to_small(d, 7, 127, 0xff);
}

/* NaN from float32 bits, payload kept as it is (so float16 -> float32 ->
 * float16 is the identity on every pattern, signalling NaNs included). */
static uint16_t f32_nan_to_small(uint32_t u, int mbits, uint32_t emax_field)
{
    uint16_t sign = (uint16_t)((u >> 31) << 15);
    uint32_t payload = (u & 0x7fffffu) >> (23 - mbits);
    if (!payload) payload = 1u << (mbits - 1);
    return sign | (uint16_t)(emax_field << mbits) | (uint16_t)payload;
}

uint16_t onp_f32_to_f16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) return f32_nan_to_small(u, 10, 0x1f);
    /* float32 -> float64 is exact, so one rounding happens, in f64_to_small. */
    return onp_f64_to_f16((double)f);
}

uint16_t onp_f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) return f32_nan_to_small(u, 7, 0xff);
    return onp_f64_to_bf16((double)f);
}
