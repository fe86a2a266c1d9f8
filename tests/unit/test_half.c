/*
 * test_half.c — float16 and bfloat16 conversions (include/onnxparity/half.h).
 *
 * Upcasts: all 65,536 patterns of each format against a reference computed
 * here from sign, exponent and mantissa with ldexp, NaN payloads checked bit
 * for bit, and 16 -> 32 -> 16 (and 16 -> 64 -> 16) the identity on every
 * pattern.  Downcasts: for every pair of adjacent finite values the exact
 * midpoint (a double) rounds to the even one and its neighbours just above and
 * below round to the nearer one, from float32 and from float64; overflow at
 * and beyond the midpoint above the largest finite value; subnormals, ±0,
 * NaN never becoming Inf; a float64 that would round twice through float32;
 * and random values against an independent nearest-even reference.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "onnxparity/half.h"
#include "testhelp.h"

// --- helpers -------------------------------------------------------------------

static uint32_t bits32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float from32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint64_t bits64(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

static double from64(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static uint64_t rng = 0x2545F4914F6CDD1Du;

static uint64_t rnd64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The value of a float16 pattern, from its fields (NaN: any NaN). */
static double ref_f16(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    double v;
    if (exp == 0x1f)
        v = man ? NAN : INFINITY;
    else if (exp == 0)
        v = ldexp(man, -24);
    else
        v = ldexp(1024 + man, exp - 25);
    return sign ? -v : v;
}

/* The value of a bfloat16 pattern, from its fields. */
static double ref_bf16(uint16_t b)
{
    int sign = b >> 15, exp = (b >> 7) & 0xff, man = b & 0x7f;
    double v;
    if (exp == 0xff)
        v = man ? NAN : INFINITY;
    else if (exp == 0)
        v = ldexp(man, -133);
    else
        v = ldexp(128 + man, exp - 134);
    return sign ? -v : v;
}

/* Round x to a binary format with `mbits` stored mantissa bits, smallest
 * normal exponent `emin`, to nearest even, by scaling to an integer count of
 * quanta and letting nearbyint (ties to even) do the work.  `limit` is the
 * midpoint above the largest finite value: at or above it the result is Inf. */
static double ref_round(double x, int mbits, int emin, double limit)
{
    if (isnan(x)) return x;
    double ax = fabs(x);
    if (ax >= limit) return copysign(INFINITY, x);
    int e;
    frexp(ax, &e); /* ax = m * 2^e, m in [0.5, 1) */
    int qexp = (e - 1 < emin ? emin : e - 1) - mbits;
    double n = nearbyint(ldexp(ax, -qexp));
    return copysign(ldexp(n, qexp), x);
}

static double ref_round_f16(double x)
{
    return ref_round(x, 10, -14, 65520.0);
}

static double ref_round_bf16(double x)
{
    return ref_round(x, 7, -126, ldexp(511, 119)); /* (2 - 2^-8) * 2^127 */
}

static int is_f16_nan(uint16_t h)
{
    return (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
}

static int is_bf16_nan(uint16_t b)
{
    return (b & 0x7f80) == 0x7f80 && (b & 0x7f);
}

// --- upcasts ---------------------------------------------------------------------

static void test_f16_upcast_all(void)
{
    int bad_val = 0, bad_nan = 0, bad_64 = 0, bad_rt32 = 0, bad_rt64 = 0, bad_nan64 = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t h = (uint16_t)i;
        double ref = ref_f16(h);
        float f = onp_f16_to_f32(h);
        double d = onp_f16_to_f64(h);
        if (is_f16_nan(h)) {
            /* payload kept: mantissa moves up by 13 bits, sign kept */
            uint32_t want =
                ((uint32_t)(h & 0x8000) << 16) | 0x7f800000u | ((uint32_t)(h & 0x3ff) << 13);
            if (bits32(f) != want) bad_nan++;
            if (!isnan(d)) bad_64++;
            uint64_t want64 = ((uint64_t)(h & 0x8000) << 48) | 0x7ff0000000000000ull |
                              ((uint64_t)(h & 0x3ff) << 42);
            if (bits64(d) != want64) bad_nan64++;
        } else {
            /* exact: compare bit patterns so -0 and +0 differ */
            if (bits32(f) != bits32((float)ref)) bad_val++;
            if (bits64(d) != bits64(ref)) bad_64++;
        }
        if (onp_f32_to_f16(f) != h) bad_rt32++;
        if (!is_f16_nan(h) && onp_f64_to_f16(d) != h) bad_rt64++;
    }
    CHECKF(bad_val == 0, "%d float16 patterns decode to the wrong float32", bad_val);
    CHECKF(bad_nan == 0, "%d float16 NaNs lose their payload in float32", bad_nan);
    CHECKF(bad_64 == 0, "%d float16 patterns decode to the wrong float64", bad_64);
    CHECKF(bad_rt32 == 0, "%d float16 patterns do not survive f16 -> f32 -> f16", bad_rt32);
    CHECKF(bad_rt64 == 0, "%d float16 patterns do not survive f16 -> f64 -> f16", bad_rt64);
    /* half.h: "Upcasts are exact for all 65,536 bit patterns (... NaN payloads
     * kept)": signalling NaNs must not gain the quiet bit in float64 either. */
    CHECKF(bad_nan64 == 0, "%d float16 NaNs change bits in float64 (signalling NaNs quieted)",
           bad_nan64);
    /* spot values */
    CHECK(onp_f16_to_f32(0x3c00) == 1.0f);
    CHECK(onp_f16_to_f32(0xc000) == -2.0f);
    CHECK(onp_f16_to_f32(0x7bff) == 65504.0f);
    CHECK(onp_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
    CHECK(onp_f16_to_f32(0x03ff) == ldexpf(1023.0f, -24));
    CHECK(onp_f16_to_f32(0x0400) == ldexpf(1.0f, -14));
    CHECK(bits32(onp_f16_to_f32(0x8000)) == 0x80000000u);
    CHECK(onp_f16_to_f32(0x7c00) == INFINITY);
    CHECK(onp_f16_to_f32(0xfc00) == -INFINITY);
    CHECK(onp_f16_to_f64(0x3555) == ldexp(1024 + 0x155, 13 - 25)); /* exp 13, man 0x155 */
}

static void test_bf16_upcast_all(void)
{
    int bad_val = 0, bad_nan = 0, bad_64 = 0, bad_rt32 = 0, bad_rt64 = 0, bad_nan64 = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t b = (uint16_t)i;
        double ref = ref_bf16(b);
        float f = onp_bf16_to_f32(b);
        double d = onp_bf16_to_f64(b);
        if (is_bf16_nan(b)) {
            if (bits32(f) != (uint32_t)b << 16) bad_nan++;
            if (!isnan(d)) bad_64++;
            uint64_t want64 = ((uint64_t)(b & 0x8000) << 48) | 0x7ff0000000000000ull |
                              ((uint64_t)(b & 0x7f) << 45);
            if (bits64(d) != want64) bad_nan64++;
        } else {
            if (bits32(f) != bits32((float)ref)) bad_val++;
            if (bits64(d) != bits64(ref)) bad_64++;
        }
        if (onp_f32_to_bf16(f) != b) bad_rt32++;
        if (!is_bf16_nan(b) && onp_f64_to_bf16(d) != b) bad_rt64++;
    }
    CHECKF(bad_val == 0, "%d bfloat16 patterns decode to the wrong float32", bad_val);
    CHECKF(bad_nan == 0, "%d bfloat16 NaNs lose their payload in float32", bad_nan);
    CHECKF(bad_64 == 0, "%d bfloat16 patterns decode to the wrong float64", bad_64);
    CHECKF(bad_rt32 == 0, "%d bfloat16 patterns do not survive bf16 -> f32 -> bf16", bad_rt32);
    CHECKF(bad_rt64 == 0, "%d bfloat16 patterns do not survive bf16 -> f64 -> bf16", bad_rt64);
    CHECKF(bad_nan64 == 0, "%d bfloat16 NaNs change bits in float64 (signalling NaNs quieted)",
           bad_nan64);
    CHECK(onp_bf16_to_f32(0x3f80) == 1.0f);
    CHECK(onp_bf16_to_f32(0xc040) == -3.0f);
    CHECK(onp_bf16_to_f32(0x7f7f) == from32(0x7f7f0000u));
    CHECK(onp_bf16_to_f32(0x0001) == from32(0x00010000u));
    CHECK(onp_bf16_to_f32(0x7f80) == INFINITY);
}

// --- downcasts: ties, neighbours, overflow --------------------------------------

/* For every pair of adjacent finite non-negative values (lo, lo+1) of a
 * 16-bit format: the midpoint goes to the even pattern, a hair above to hi, a
 * hair below to lo; same for the negatives; from float64 and float32. */
static void check_pairs(const char *what, uint16_t last, double (*ref)(uint16_t),
                        uint16_t (*down64)(double), uint16_t (*down32)(float))
{
    int bad_mid64 = 0, bad_mid32 = 0, bad_near64 = 0, bad_near32 = 0, bad_exact = 0;
    for (uint32_t lo = 0; lo < last; lo++) {
        uint16_t a = (uint16_t)lo, b = (uint16_t)(lo + 1);
        double va = ref(a), vb = ref(b);
        double mid = (va + vb) / 2; /* exact: 12 (9) significant bits */
        uint16_t even = (a & 1) ? b : a;
        for (int s = 0; s < 2; s++) {
            uint16_t sg = s ? 0x8000 : 0;
            double m = s ? -mid : mid;
            double up = nextafter(m, s ? -INFINITY : INFINITY);
            double down = nextafter(m, s ? INFINITY : -INFINITY);
            if (down64(m) != (sg | even)) bad_mid64++;
            if (down64(up) != (sg | b) || down64(down) != (sg | a)) bad_near64++;
            float mf = (float)m;
            if ((double)mf != m) bad_mid32++; /* the midpoint must be exact in float32 */
            if (down32(mf) != (sg | even)) bad_mid32++;
            float upf = nextafterf(mf, s ? -INFINITY : INFINITY);
            float downf = nextafterf(mf, s ? INFINITY : -INFINITY);
            if (down32(upf) != (sg | b) || down32(downf) != (sg | a)) bad_near32++;
            double va_s = s ? -va : va;
            if (down64(va_s) != (sg | a) || down32((float)va_s) != (sg | a)) bad_exact++;
        }
    }
    CHECKF(bad_mid64 == 0, "%s: %d midpoints from float64 not rounded to even", what, bad_mid64);
    CHECKF(bad_mid32 == 0, "%s: %d midpoints from float32 not rounded to even", what, bad_mid32);
    CHECKF(bad_near64 == 0, "%s: %d float64 neighbours of midpoints rounded the wrong way", what,
           bad_near64);
    CHECKF(bad_near32 == 0, "%s: %d float32 neighbours of midpoints rounded the wrong way", what,
           bad_near32);
    CHECKF(bad_exact == 0, "%s: %d exact values not converted exactly", what, bad_exact);
}

static void test_f16_ties_every_pair(void)
{
    check_pairs("float16", 0x7bff, ref_f16, onp_f64_to_f16, onp_f32_to_f16);
}

static void test_bf16_ties_every_pair(void)
{
    check_pairs("bfloat16", 0x7f7f, ref_bf16, onp_f64_to_bf16, onp_f32_to_bf16);
}

static void test_f16_overflow(void)
{
    /* 65504 is the largest finite float16 (0x7bff, odd); the midpoint to the
     * next step (65536) is 65520: a tie that rounds to even = Inf. */
    CHECK(onp_f64_to_f16(65504.0) == 0x7bff);
    CHECK(onp_f64_to_f16(65520.0) == 0x7c00);
    CHECK(onp_f32_to_f16(65520.0f) == 0x7c00);
    CHECK(onp_f64_to_f16(-65520.0) == 0xfc00);
    CHECK(onp_f64_to_f16(nextafter(65520.0, 0)) == 0x7bff);
    CHECK(onp_f32_to_f16(nextafterf(65520.0f, 0)) == 0x7bff);
    CHECK(onp_f64_to_f16(nextafter(65520.0, INFINITY)) == 0x7c00);
    CHECK(onp_f64_to_f16(65535.0) == 0x7c00);
    CHECK(onp_f64_to_f16(65536.0) == 0x7c00);
    CHECK(onp_f64_to_f16(1e10) == 0x7c00);
    CHECK(onp_f64_to_f16(-1e300) == 0xfc00);
    CHECK(onp_f64_to_f16(DBL_MAX) == 0x7c00);
    CHECK(onp_f32_to_f16(FLT_MAX) == 0x7c00);
    CHECK(onp_f32_to_f16(-FLT_MAX) == 0xfc00);
    CHECK(onp_f64_to_f16(INFINITY) == 0x7c00);
    CHECK(onp_f64_to_f16(-INFINITY) == 0xfc00);
    CHECK(onp_f32_to_f16(INFINITY) == 0x7c00);
    CHECK(onp_f32_to_f16(-INFINITY) == 0xfc00);
}

static void test_bf16_overflow(void)
{
    double max = ldexp(255, 120); /* 0x7f7f */
    double mid = ldexp(511, 119); /* halfway to 2^128 */
    CHECK(ref_bf16(0x7f7f) == max);
    CHECK(onp_f64_to_bf16(max) == 0x7f7f);
    CHECK(onp_f64_to_bf16(mid) == 0x7f80);
    CHECK(onp_f32_to_bf16((float)mid) == 0x7f80);
    CHECK(onp_f64_to_bf16(nextafter(mid, 0)) == 0x7f7f);
    CHECK(onp_f32_to_bf16(nextafterf((float)mid, 0)) == 0x7f7f);
    CHECK(onp_f32_to_bf16(FLT_MAX) == 0x7f80);
    CHECK(onp_f64_to_bf16(-DBL_MAX) == 0xff80);
    CHECK(onp_f64_to_bf16(ldexp(1, 128)) == 0x7f80);
    CHECK(onp_f32_to_bf16(INFINITY) == 0x7f80);
    CHECK(onp_f64_to_bf16(-INFINITY) == 0xff80);
}

static void test_subnormals_and_zero(void)
{
    double tiny = ldexp(1, -24); /* smallest float16 subnormal */
    CHECK(onp_f64_to_f16(0.0) == 0x0000);
    CHECK(onp_f64_to_f16(-0.0) == 0x8000);
    CHECK(onp_f32_to_f16(0.0f) == 0x0000);
    CHECK(onp_f32_to_f16(-0.0f) == 0x8000);
    CHECK(onp_f64_to_f16(tiny) == 0x0001);
    CHECK(onp_f64_to_f16(tiny / 2) == 0x0000);               /* tie to even: 0 */
    CHECK(onp_f64_to_f16(-tiny / 2) == 0x8000);              /* keeps the sign */
    CHECK(onp_f64_to_f16(nextafter(tiny / 2, 1)) == 0x0001); /* just above the tie */
    CHECK(onp_f32_to_f16(nextafterf((float)tiny / 2, 1)) == 0x0001);
    CHECK(onp_f64_to_f16(1.5 * tiny) == 0x0002); /* tie between 1 and 2 */
    CHECK(onp_f64_to_f16(2.5 * tiny) == 0x0002); /* tie between 2 and 3 */
    CHECK(onp_f64_to_f16(tiny / 4) == 0x0000);
    CHECK(onp_f64_to_f16(1e-300) == 0x0000);
    CHECK(onp_f64_to_f16(-1e-300) == 0x8000);
    CHECK(onp_f64_to_f16(from64(1)) == 0x0000); /* float64 subnormal */
    CHECK(onp_f64_to_f16(-from64(1)) == 0x8000);
    CHECK(onp_f32_to_f16(from32(1)) == 0x0000);          /* float32 subnormal */
    CHECK(onp_f64_to_f16(ldexp(1023, -24)) == 0x03ff);   /* largest subnormal */
    CHECK(onp_f64_to_f16(ldexp(1023.5, -24)) == 0x0400); /* tie: up to smallest normal */
    CHECK(onp_f64_to_f16(ldexp(1, -14)) == 0x0400);
    /* bfloat16 subnormals: the same exponent range as float32 */
    CHECK(onp_f32_to_bf16(from32(0x00010000u)) == 0x0001);
    CHECK(onp_f32_to_bf16(from32(0x00008000u)) == 0x0000); /* tie to even: 0 */
    CHECK(onp_f32_to_bf16(from32(0x00018000u)) == 0x0002); /* tie 1|2 -> 2 */
    CHECK(onp_f32_to_bf16(from32(0x00008001u)) == 0x0001);
    CHECK(onp_f32_to_bf16(from32(1)) == 0x0000);
    CHECK(onp_f64_to_bf16(-0.0) == 0x8000);
    CHECK(onp_f64_to_bf16(1e-300) == 0x0000);
    CHECK(onp_f64_to_bf16(ldexp(1, -133)) == 0x0001);
}

static void test_nan_stays_nan(void)
{
    int bad = 0;
    /* every float32 NaN mantissa shape: payload in low bits only, high only, both */
    uint32_t mans[] = {1,        2,        0x1fff,  0x2000,  0x400000,
                       0x7fffff, 0x3fffff, 0x12345, 0x10000, 0xffff};
    for (size_t i = 0; i < sizeof mans / sizeof mans[0]; i++)
        for (int s = 0; s < 2; s++) {
            uint32_t u = (s ? 0x80000000u : 0) | 0x7f800000u | mans[i];
            uint16_t h = onp_f32_to_f16(from32(u));
            uint16_t b = onp_f32_to_bf16(from32(u));
            if (!is_f16_nan(h) || (h >> 15) != (uint16_t)s) bad++;
            if (!is_bf16_nan(b) || (b >> 15) != (uint16_t)s) bad++;
        }
    uint64_t mans64[] = {1,
                         2,
                         0x3ffffffffffull,
                         0x40000000000ull,
                         0x8000000000000ull,
                         0xfffffffffffffull,
                         0x1fffffffffffull,
                         0x123456789ull};
    for (size_t i = 0; i < sizeof mans64 / sizeof mans64[0]; i++)
        for (int s = 0; s < 2; s++) {
            uint64_t u = (s ? 0x8000000000000000ull : 0) | 0x7ff0000000000000ull | mans64[i];
            uint16_t h = onp_f64_to_f16(from64(u));
            uint16_t b = onp_f64_to_bf16(from64(u));
            if (!is_f16_nan(h) || (h >> 15) != (uint16_t)s) bad++;
            if (!is_bf16_nan(b) || (b >> 15) != (uint16_t)s) bad++;
        }
    /* random NaNs */
    for (int i = 0; i < 100000; i++) {
        uint64_t r = rnd64();
        uint32_t u = 0x7f800000u | (uint32_t)(r & 0x807fffffu);
        if (!(u & 0x7fffff)) u |= 1;
        uint64_t v = 0x7ff0000000000000ull | (r & 0x800fffffffffffffull);
        if (!(v & 0xfffffffffffffull)) v |= 1;
        if (!is_f16_nan(onp_f32_to_f16(from32(u))) || !is_bf16_nan(onp_f32_to_bf16(from32(u))))
            bad++;
        if (!is_f16_nan(onp_f64_to_f16(from64(v))) || !is_bf16_nan(onp_f64_to_bf16(from64(v))))
            bad++;
    }
    CHECKF(bad == 0, "%d NaNs did not stay NaN (with their sign)", bad);
    /* the top payload bits survive a downcast */
    CHECK(onp_f32_to_f16(from32(0x7fc00000u)) == 0x7e00);
    CHECK(onp_f64_to_f16(from64(0x7ff8000000000000ull)) == 0x7e00);
    CHECK(onp_f64_to_f16(from64(0xfff4000000000000ull)) == 0xfd00);
    CHECK(onp_f64_to_bf16(from64(0x7ff8000000000000ull)) == 0x7fc0);
    CHECK(onp_f32_to_bf16(from32(0x7fa00000u)) == 0x7fa0);
}

static void test_f64_rounds_once(void)
{
    /* 1 + 2^-11 is the midpoint between float16 1.0 (0x3c00, even) and
     * 1 + 2^-10 (0x3c01).  A double a little above it must go up; through
     * float32 it would first become the exact midpoint and then tie to even
     * (down). */
    double d = 1.0 + ldexp(1, -11) + ldexp(1, -40);
    CHECK((double)(float)d == 1.0 + ldexp(1, -11)); /* float32 does lose the excess */
    CHECK(onp_f64_to_f16(d) == 0x3c01);
    CHECK(onp_f32_to_f16((float)d) == 0x3c00); /* what double rounding would give */
    /* odd below: 0x3c01 | 0x3c02, a little below their midpoint goes down */
    d = 1.0 + 3 * ldexp(1, -11) - ldexp(1, -40);
    CHECK(onp_f64_to_f16(d) == 0x3c01);
    CHECK(onp_f32_to_f16((float)d) == 0x3c02);
    d = -(1.0 + ldexp(1, -11) + ldexp(1, -40));
    CHECK(onp_f64_to_f16(d) == 0xbc01);
    /* subnormal range: midpoint of 0x0000|0x0001 is 2^-25 */
    d = ldexp(1, -25) + ldexp(1, -60);
    CHECK(onp_f64_to_f16(d) == 0x0001);
    /* bfloat16: 1.0 (0x3f80) | 0x3f81, midpoint 1 + 2^-8 */
    d = 1.0 + ldexp(1, -8) + ldexp(1, -40);
    CHECK((double)(float)d == 1.0 + ldexp(1, -8));
    CHECK(onp_f64_to_bf16(d) == 0x3f81);
    CHECK(onp_f32_to_bf16((float)d) == 0x3f80);
}

// --- random values against the reference -------------------------------------

static void test_random_against_reference(void)
{
    int bad16 = 0, bad16f = 0, badb = 0, badbf = 0;
    for (int i = 0; i < 400000; i++) {
        uint64_t r = rnd64();
        /* doubles with exponents around the float16 range and beyond */
        int e = (int)(r % 90) - 60;
        double x = ldexp(1.0 + (double)(rnd64() >> 11) * 0x1p-53, e);
        if (r & (1ull << 40)) x = -x;
        double got = onp_f16_to_f64(onp_f64_to_f16(x));
        double want = ref_round_f16(x);
        if (bits64(got) != bits64(want)) bad16++;
        /* float32: any finite pattern */
        uint32_t u = (uint32_t)(rnd64() >> 16);
        if ((u & 0x7f800000u) == 0x7f800000u) u &= 0xbfffffffu;
        float f = from32(u);
        if (bits64(onp_f16_to_f64(onp_f32_to_f16(f))) != bits64(ref_round_f16(f))) bad16f++;
        if (bits64(onp_bf16_to_f64(onp_f32_to_bf16(f))) != bits64(ref_round_bf16(f))) badbf++;
        /* doubles across the whole bfloat16 range */
        int eb = (int)(r % 300) - 150;
        double y = ldexp(1.0 + (double)(rnd64() >> 11) * 0x1p-53, eb);
        if (r & (1ull << 41)) y = -y;
        if (bits64(onp_bf16_to_f64(onp_f64_to_bf16(y))) != bits64(ref_round_bf16(y))) badb++;
    }
    CHECKF(bad16 == 0, "%d random doubles rounded to the wrong float16", bad16);
    CHECKF(bad16f == 0, "%d random floats rounded to the wrong float16", bad16f);
    CHECKF(badb == 0, "%d random doubles rounded to the wrong bfloat16", badb);
    CHECKF(badbf == 0, "%d random floats rounded to the wrong bfloat16", badbf);
}

TEST_MAIN(test_f16_upcast_all, test_bf16_upcast_all, test_f16_ties_every_pair,
          test_bf16_ties_every_pair, test_f16_overflow, test_bf16_overflow,
          test_subnormals_and_zero, test_nan_stays_nan, test_f64_rounds_once,
          test_random_against_reference)
