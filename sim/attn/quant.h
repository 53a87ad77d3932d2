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
/* Round one value per the case's rounding mode. */
float quant_round(float v, enum case_rounding r);

#endif
