/*
 * float8.c — decoding the four ONNX float8 types (include/onnxparity/float8.h):
 * one parameter row per type (exponent and mantissa widths, bias, which
 * codes are NaN and infinite), one decoder from that row.  Depends on
 * dtype.h and libm only.
 */
#include "onnxparity/float8.h"

#include <math.h>

#include "onnxparity/dtype.h"

typedef struct f8_format {
    int mbits; /* mantissa bits (3 or 2) */
    int bias;
    int uz;   /* "fnuz": no negative zero, 0x80 the only NaN, no infinities */
    int ieee; /* E5M2: all-ones exponent is inf (m = 0) or NaN (m != 0) */
} f8_format;

/* NULL when dtype is not float8. */
static const f8_format *format_of(int32_t dtype)
{
    static const f8_format e4m3fn = {3, 7, 0, 0}, e4m3fnuz = {3, 8, 1, 0}, e5m2 = {2, 15, 0, 1},
                           e5m2fnuz = {2, 16, 1, 0};
    switch (dtype) {
    case ONP_FLOAT8E4M3FN: return &e4m3fn;
    case ONP_FLOAT8E4M3FNUZ: return &e4m3fnuz;
    case ONP_FLOAT8E5M2: return &e5m2;
    case ONP_FLOAT8E5M2FNUZ: return &e5m2fnuz;
    default: return NULL;
    }
}

int onp_f8_is(int32_t dtype)
{
    return format_of(dtype) != NULL;
}

double onp_f8_eps(int32_t dtype)
{
    const f8_format *f = format_of(dtype);
    return f ? ldexp(1.0, -f->mbits) : 0.0;
}

/* 1 for a NaN code of format f. */
static int is_nan(const f8_format *f, uint8_t code)
{
    if (f->uz) return code == 0x80;
    unsigned mag = code & 0x7fu, emax = 0x7fu >> f->mbits, e = mag >> f->mbits;
    if (f->ieee) return e == emax && (mag & ((1u << f->mbits) - 1)) != 0;
    return mag == 0x7f; /* E4M3FN: S.1111.111 */
}

/* 1 for an infinite code of format f (E5M2 only). */
static int is_inf(const f8_format *f, uint8_t code)
{
    return f->ieee && (code & 0x7fu) == (0x7fu >> f->mbits) << f->mbits;
}

/* |value| of the 7-bit magnitude `mag` (finite, not NaN) of format f. */
static double magnitude(const f8_format *f, unsigned mag)
{
    unsigned e = mag >> f->mbits, m = mag & ((1u << f->mbits) - 1);
    if (!e) return ldexp((double)m, 1 - f->bias - f->mbits);
    return ldexp((double)((1u << f->mbits) | m), (int)e - f->bias - f->mbits);
}

double onp_f8_to_f64(int32_t dtype, uint8_t code)
{
    const f8_format *f = format_of(dtype);
    if (!f || is_nan(f, code)) return NAN;
    double v = is_inf(f, code) ? INFINITY : magnitude(f, code & 0x7fu);
    return code & 0x80 ? -v : v;
}

float onp_f8_to_f32(int32_t dtype, uint8_t code)
{
    return (float)onp_f8_to_f64(dtype, code); /* exact: 5 exponent bits, 3 mantissa bits at most */
}

int onp_f8_steps(int32_t dtype, uint8_t a, uint8_t b)
{
    const f8_format *f = format_of(dtype);
    if (!f || is_nan(f, a) || is_nan(f, b)) return -1;
    /* within a sign the magnitude bits order the values (an infinity one
     * above the largest finite); zero is one point for both signs */
    int oa = a & 0x80 ? -(int)(a & 0x7f) : (int)(a & 0x7f);
    int ob = b & 0x80 ? -(int)(b & 0x7f) : (int)(b & 0x7f);
    return oa > ob ? oa - ob : ob - oa;
}

double onp_f8_ulp(int32_t dtype, uint8_t code)
{
    const f8_format *f = format_of(dtype);
    if (!f || is_nan(f, code) || is_inf(f, code)) return NAN;
    unsigned mag = code & 0x7fu;
    unsigned next = mag + 1;
    /* the largest finite magnitude: its step down */
    if (next > 0x7f || is_nan(f, (uint8_t)next) || is_inf(f, (uint8_t)next))
        return magnitude(f, mag) - magnitude(f, mag - 1);
    return magnitude(f, next) - magnitude(f, mag);
}
