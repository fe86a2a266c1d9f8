/*
 * half.h — float16 (IEEE binary16) and bfloat16 conversions.
 *
 * Upcasts are exact for all 65,536 bit patterns (subnormals, ±0, ±Inf, NaN
 * payloads kept).  Downcasts round to nearest, ties to even; overflow goes to
 * ±Inf; NaN stays NaN (quiet, payload truncated, never turned into Inf).
 * Pure functions of their argument; no tables, no global state.
 */
#ifndef ONNXPARITY_HALF_H
#define ONNXPARITY_HALF_H

#include <stdint.h>

float onp_f16_to_f32(uint16_t h);
double onp_f16_to_f64(uint16_t h);
uint16_t onp_f32_to_f16(float f);
uint16_t onp_f64_to_f16(double d);

float onp_bf16_to_f32(uint16_t b);
double onp_bf16_to_f64(uint16_t b);
uint16_t onp_f32_to_bf16(float f);
uint16_t onp_f64_to_bf16(double d);

#endif
