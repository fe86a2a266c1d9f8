/*
 * float8.h — the four 8-bit float types of ONNX (TensorProto 17-20), decoded.
 *
 * Each is a sign bit, E exponent bits and M mantissa bits with bias B:
 *
 *   type            E M  B   infinities   NaN                    largest
 *   FLOAT8E4M3FN    4 3  7   none         S.1111.111 (0x7f 0xff) 448
 *   FLOAT8E4M3FNUZ  4 3  8   none         0x80 only              240
 *   FLOAT8E5M2      5 2 15   S.11111.00   S.11111.{01,10,11}     57344
 *   FLOAT8E5M2FNUZ  5 2 16   none         0x80 only              57344
 *
 * A normal code (exponent field e > 0) is (-1)^S (1 + m / 2^M) 2^(e - B),
 * a subnormal one (e = 0) is (-1)^S (m / 2^M) 2^(1 - B); the "uz" types have
 * no negative zero (0x80 is their NaN).  Every value is exact in float32, so
 * a decode loses nothing.  Pure functions of their arguments; no tables.
 *
 * Example: onp_f8_to_f64(ONP_FLOAT8E4M3FN, 0x7e) == 448.0;
 *          onp_f8_steps(ONP_FLOAT8E4M3FN, 0x01, 0x81) == 2 (through zero).
 */
#ifndef ONNXPARITY_FLOAT8_H
#define ONNXPARITY_FLOAT8_H

#include <stdint.h>

/* 1 when `dtype` is one of ONP_FLOAT8E4M3FN .. ONP_FLOAT8E5M2FNUZ. */
int onp_f8_is(int32_t dtype);

/* The value of `code` in float8 type `dtype` (NaN for a NaN code, +-inf for
 * E5M2's infinities; NaN for a dtype that is not float8). */
double onp_f8_to_f64(int32_t dtype, uint8_t code);
float onp_f8_to_f32(int32_t dtype, uint8_t code);

/* How many representable values of `dtype` lie between codes a and b, each
 * end counted once (0: the same number, 1: neighbours; +0 and -0 are one
 * number; an infinity is the neighbour of the largest finite value).  -1
 * when either is NaN (or dtype is not float8). */
int onp_f8_steps(int32_t dtype, uint8_t a, uint8_t b);

/* The distance from |value of code| to the next representable magnitude
 * away from zero (to the one below it at the largest finite magnitude):
 * the value's own ulp.  NaN for NaN and infinite codes. */
double onp_f8_ulp(int32_t dtype, uint8_t code);

/* Relative precision 2^-M: 2^-3 (E4M3 types), 2^-2 (E5M2 types); 0 when
 * dtype is not float8. */
double onp_f8_eps(int32_t dtype);

#endif
