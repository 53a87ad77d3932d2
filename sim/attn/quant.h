/*
 * quant.h - the number formats and the quantizer shared by sim/ and ref/
 * (docs/design.md 2.5 allows sharing it): BF16 and FP16 rounding, and symmetric
 * absmax INT8 quantization.
 *
 *   scale = absmax(x) / clip            (f32 arithmetic)
 *   q     = clamp(round(x / scale), -clip, clip)
 *   absmax 0 gives scale 0 and q = 0 (never NaN)
 */
#ifndef QUANT_H
#define QUANT_H

#include <stdint.h>

#include "case.h"

float quant_bf16_round(float x);	/* round to nearest even */
uint16_t quant_f32_to_f16(float x);	/* round to nearest even, IEEE binary16 */
float quant_f16_to_f32(uint16_t h);

/* absmax of n values / clip, in f32. */
float quant_scale(const float *x, int n, int clip);
/* Quantize n values with a given scale (0 gives zeros; a NaN x gives 0). */
void quant_apply(const float *x, int n, float scale, int clip,
		 enum case_rounding r, int8_t *q);
/* quant_apply with element i's own scale[i] (V scaled per channel). */
void quant_apply_each(const float *x, int n, const float *scale, int clip,
		      enum case_rounding r, int8_t *q);
/* Round one value per the case's rounding mode. */
float quant_round(float v, enum case_rounding r);

/*
 * llama.cpp's V block formats (ggml's block_q8_0 and block_q4_0), one
 * block of QUANT_QBLOCK values along head_dim, with one fp16 scale. Both
 * compute the scale d in f32, store fp16(d), and quantize with the f32
 * 1/d (0 when d is 0), as ggml's reference quantizers do:
 *   q8_0  d = absmax / 127, q = round(x / d) half away from zero, in
 *         -127..127; the value is q * fp16(d)
 *   q4_0  d = m / -8, m the element of largest magnitude (the first of
 *         ties) with its sign; q = min(15, trunc(x / d + 8.5)), in 0..15
 *         (4 bits, offset 8); the value is (q - 8) * fp16(d)
 * Example q4_0: x = {-2, 1, 0.5, 0...}: m = -2, d = 0.25, 1/d = 4: q =
 * {trunc(-8 + 8.5), trunc(4 + 8.5), trunc(2 + 8.5), 8...} = {0, 12, 10,
 * 8...}: values -2, 1, 0.5, 0. The block's q go to q[0..31], one a byte
 * (q4_0 too: the paged layout puts a token's dims BS bytes apart, so
 * ggml's pairing of dims j and j + 16 in one byte has no place there).
 */
#define QUANT_QBLOCK 32
void quant_q8_0_block(const float *x, uint16_t *d16, int8_t *q);
void quant_q4_0_block(const float *x, uint16_t *d16, int8_t *q);

#endif
