/*
 * quant.c - number formats and the symmetric INT8 quantizer (see quant.h).
 *
 * Everything here is integer operations on bit patterns plus single IEEE
 * float operations (one division, one subtraction), so the results are
 * the same on every machine and libc, and do not depend on the floating
 * point environment (no fenv rounding mode, no libm, no FMA: the build
 * has -ffp-contract=off).
 *
 * Bit layouts:
 *
 *   f32   s eeeeeeee mmmmmmmmmmmmmmmmmmmmmmm     bias 127
 *   bf16  s eeeeeeee mmmmmmm                     top half of an f32
 *   f16   s eeeee mmmmmmmmmm                     bias 15, subnormals
 *                                                below 2^-14, step 2^-24
 *
 * BF16, worked: 1.00390625f = 0x3f80_8000. The kept half is 0x3f80 (even)
 * and the dropped half is exactly 0x8000, a tie, so it stays 0x3f80 = 1.0.
 * 1.01171875f = 0x3f81_8000: a tie with an odd kept half, so it goes up
 * to 0x3f82 = 1.015625.
 *
 * F16, worked: 65520 = 0x477ff000 is half way between 65504 (0x7bff, the
 * largest f16, odd) and 65536 (not representable: exponent 31), so round
 * to even goes up and gives inf 0x7c00. 2^-25 is half way between 0 and
 * the smallest subnormal 2^-24 (0x0001, odd), so it gives 0.
 *
 * Quantizer, worked: x = {0.5, -2.0, 1.25}, clip 127: amax 2.0, scale =
 * 2.0f / 127.0f = 0.015748031f; 0.5 / scale = 31.75 -> 32; -2.0 / scale =
 * -127.0 -> -127; 1.25 / scale = 79.375 -> 79.
 */
#include "quant.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "../common/cpu.h"

#ifdef CPU_X86
#include <immintrin.h>
#endif

/* `omp simd` asks for vector code. At -O1 with sanitizers (make fuzz)
 * clang cannot always give it and warns; the loop computes the same
 * either way, so that warning is not an error here. */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

/* Bodies inlined into the vector builds below. */
#define QUANT_INLINE static inline __attribute__((always_inline))

QUANT_INLINE uint32_t f32_bits(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof(u));
	return u;
}

QUANT_INLINE float f32_from_bits(uint32_t u)
{
	float x;

	memcpy(&x, &u, sizeof(x));
	return x;
}

float quant_bf16_round(float x)
{
	uint32_t u = f32_bits(x);

	if ((u & 0x7fffffffu) > 0x7f800000u)	/* NaN: keep it a NaN */
		return f32_from_bits((u | 0x00400000u) & 0xffff0000u);
	/*
	 * Round to nearest even on the dropped 16 bits: add 0x7fff plus the
	 * lowest kept bit, then truncate. A carry out of the mantissa bumps
	 * the exponent, which is right (1.99.. -> 2.0, FLT_MAX -> inf); inf
	 * has zero low bits and stays inf.
	 */
	u += 0x7fffu + ((u >> 16) & 1u);
	return f32_from_bits(u & 0xffff0000u);
}

/* Shift m right by n (1..31) rounding to nearest, ties to even. */
static uint32_t shift_rne(uint32_t m, int n)
{
	uint32_t q = m >> n;
	uint32_t rem = m & ((1u << n) - 1u);
	uint32_t half = 1u << (n - 1);

	if (rem > half || (rem == half && (q & 1u)))
		q++;
	return q;
}

uint16_t quant_f32_to_f16(float x)
{
	uint32_t u = f32_bits(x);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
	uint32_t a = u & 0x7fffffffu;
	int e;			/* f16 biased exponent of x */
	uint32_t mant;		/* 24-bit significand with the hidden bit */

	if (a > 0x7f800000u)
		return (uint16_t)(sign | 0x7e00u);	/* quiet NaN */
	if (a >= 0x47800000u)
		return (uint16_t)(sign | 0x7c00u);	/* >= 2^16, or inf */
	e = (int)(a >> 23) - 127 + 15;
	mant = (a & 0x7fffffu) | 0x800000u;
	if (e >= 1) {
		/*
		 * Normal: keep 11 of the 24 significand bits. The hidden bit
		 * lands on bit 10, so adding (e - 1) << 10 forms exponent and
		 * mantissa at once, and a rounding carry (0x7ff -> 0x800)
		 * moves into the exponent, up to inf at 65520.
		 */
		return (uint16_t)(sign | (((uint32_t)(e - 1) << 10) +
					  shift_rne(mant, 13)));
	}
	if (e < -10)		/* below 2^-25, the half of 2^-24: zero */
		return sign;
	/* Subnormal: value / 2^-24 = mant * 2^(e - 14), shift 14..24. */
	return (uint16_t)(sign | shift_rne(mant, 14 - e));
}

float quant_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t e = (h >> 10) & 0x1fu;
	uint32_t m = h & 0x3ffu;

	if (e == 31)		/* inf, NaN (payload kept) */
		return f32_from_bits(sign | 0x7f800000u | (m << 13));
	if (e == 0) {
		if (m == 0)
			return f32_from_bits(sign);
		/* Subnormal: normalize m * 2^-24 into an f32 normal. */
		e = 127 - 15 + 1;
		while (!(m & 0x400u)) {
			m <<= 1;
			e--;
		}
		return f32_from_bits(sign | (e << 23) | ((m & 0x3ffu) << 13));
	}
	return f32_from_bits(sign | ((e - 15 + 127) << 23) | (m << 13));
}

/*
 * The two loops inputs run over every generated element (a hundred
 * million at long contexts) are written once as inline bodies and built
 * plain, for AVX2 and for AVX-512, picked by the CPU: integer and single
 * IEEE float operations lane by lane, so every build gives the same
 * bits, the vector ones just more per instruction (the -O2 build does
 * not vectorise them on its own).
 */
QUANT_INLINE uint32_t scale_body(const float *x, int n)
{
	uint32_t amax = 0;

	/* On the bits of |x|: for non-negative floats the integer order is
	 * the float order, and a NaN (above 0x7f800000) never wins, as it
	 * never compares greater. Integer max vectorises; float max with
	 * NaNs in play cannot. */
#pragma omp simd reduction(max : amax)
	for (int i = 0; i < n; i++) {
		uint32_t a = f32_bits(x[i]) & 0x7fffffffu;

		a = a > 0x7f800000u ? 0 : a;
		amax = a > amax ? a : amax;
	}
	return amax;
}

static uint32_t scale_plain(const float *x, int n)
{
	return scale_body(x, n);
}

#ifdef CPU_X86
__attribute__((target("avx2"))) static uint32_t scale_avx2(const float *x, int n)
{
	return scale_body(x, n);
}

__attribute__((target("avx512f"))) static uint32_t scale_avx512(const float *x, int n)
{
	return scale_body(x, n);
}
#endif

float quant_scale(const float *x, int n, int clip)
{
	uint32_t amax;

#ifdef CPU_X86
	if (cpu_has(CPU_AVX512F))
		amax = scale_avx512(x, n);
	else if (cpu_has(CPU_AVX2))
		amax = scale_avx2(x, n);
	else
#endif
		amax = scale_plain(x, n);
	return f32_from_bits(amax) / (float)clip;
}

float quant_round(float v, enum case_rounding r)
{
	float t, frac;

	/* NaN, inf and |v| >= 2^23 are already integers (or not numbers). */
	if (!(v > -8388608.0f && v < 8388608.0f))
		return v;
	t = (float)(int32_t)v;	/* truncation toward zero, exact here */
	frac = v - t;		/* exact: the low bits of v */
	if (r == ROUND_HALF_AWAY) {
		if (frac >= 0.5f)
			t += 1.0f;
		else if (frac <= -0.5f)
			t -= 1.0f;
	} else {
		int odd = (int32_t)t % 2 != 0;

		if (frac > 0.5f || (frac == 0.5f && odd))
			t += 1.0f;
		else if (frac < -0.5f || (frac == -0.5f && odd))
			t -= 1.0f;
	}
	if (t == 0.0f && v < 0.0f)	/* roundf(-0.4) is -0.0 */
		return -0.0f;
	return t;
}

/*
 * quant_round, then the clamp to [-clip, clip], NaN to 0, without a
 * branch so the compiler can vectorise it (inputs are generated by the
 * hundred million). The same result for every float: clamping v to
 * +-(clip + 1) first changes no outcome (whatever rounds beyond clip is
 * clamped to clip either way) and keeps the int conversion in range; the
 * sign of a zero is lost in int8 anyway. tests/test_quant.c checks it
 * against quant_round over every float pattern class.
 */
QUANT_INLINE int8_t quant_one(float x, float scale, int clip, int even)
{
	float lim = (float)(clip + 1), v = x / scale, t, frac;
	int32_t i, up, down, odd;

	v = v != v ? 0.0f : v;
	v = v > lim ? lim : v;
	v = v < -lim ? -lim : v;
	i = (int32_t)v;			/* toward zero, exact here */
	t = (float)i;
	frac = v - t;			/* exact */
	odd = i & 1;
	up = even ? (frac > 0.5f) | ((frac == 0.5f) & odd) : frac >= 0.5f;
	down = even ? (frac < -0.5f) | ((frac == -0.5f) & odd) : frac <= -0.5f;
	i += up - down;
	i = i > clip ? clip : i;
	i = i < -clip ? -clip : i;
	return (int8_t)i;
}

QUANT_INLINE void apply_loop(const float *x, int n, float scale, int clip,
			     int even, int8_t *q)
{
#pragma omp simd
	for (int i = 0; i < n; i++)
		q[i] = quant_one(x[i], scale, clip, even);
}

/* even a constant in each loop, so its selects fold away and the loop
 * body has no control flow left to stop the vectoriser. */
QUANT_INLINE void apply_body(const float *x, int n, float scale, int clip,
			     int even, int8_t *q)
{
	if (even)
		apply_loop(x, n, scale, clip, 1, q);
	else
		apply_loop(x, n, scale, clip, 0, q);
}

static void apply_plain(const float *x, int n, float scale, int clip, int even,
			int8_t *q)
{
	apply_body(x, n, scale, clip, even, q);
}

#ifdef CPU_X86
__attribute__((target("avx2"))) static void
apply_avx2(const float *x, int n, float scale, int clip, int even, int8_t *q)
{
	apply_body(x, n, scale, clip, even, q);
}

/*
 * quant_one on 16 lanes, written out: GCC vectorises apply_body for the
 * int8 result's width and runs it 4 floats a vector even here, which
 * made quantization a quarter of an emulation's input stage. The same
 * operations in the same order: x / scale, NaN to 0, clamp to
 * +-(clip + 1), truncate, the rounding rule on the exact fraction,
 * clamp to +-clip; masked loads and stores for a tail.
 */
__attribute__((target("avx512f"))) static void
apply_avx512(const float *x, int n, float scale, int clip, int even, int8_t *q)
{
	const __m512 sc = _mm512_set1_ps(scale), half = _mm512_set1_ps(0.5f);
	const __m512 nhalf = _mm512_set1_ps(-0.5f);
	const __m512 lim = _mm512_set1_ps((float)(clip + 1));
	const __m512 nlim = _mm512_set1_ps(-(float)(clip + 1));
	const __m512i one = _mm512_set1_epi32(1), cl = _mm512_set1_epi32(clip);
	const __m512i ncl = _mm512_set1_epi32(-clip);

	for (int i = 0; i < n; i += 16) {
		__mmask16 m = n - i >= 16 ? (__mmask16)0xffff
					  : (__mmask16)((1u << (n - i)) - 1);
		__m512 v = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), sc);
		__m512 t, frac;
		__m512i k;
		__mmask16 up, down;

		v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);
		v = _mm512_min_ps(v, lim);
		v = _mm512_max_ps(v, nlim);
		k = _mm512_cvttps_epi32(v);
		t = _mm512_cvtepi32_ps(k);
		frac = _mm512_sub_ps(v, t);
		if (even) {
			__mmask16 odd = _mm512_test_epi32_mask(k, one);

			up = _mm512_cmp_ps_mask(frac, half, _CMP_GT_OQ) |
			     (_mm512_cmp_ps_mask(frac, half, _CMP_EQ_OQ) & odd);
			down = _mm512_cmp_ps_mask(frac, nhalf, _CMP_LT_OQ) |
			       (_mm512_cmp_ps_mask(frac, nhalf, _CMP_EQ_OQ) & odd);
		} else {
			up = _mm512_cmp_ps_mask(frac, half, _CMP_GE_OQ);
			down = _mm512_cmp_ps_mask(frac, nhalf, _CMP_LE_OQ);
		}
		k = _mm512_mask_add_epi32(k, up, k, one);
		k = _mm512_mask_sub_epi32(k, down, k, one);
		k = _mm512_min_epi32(k, cl);
		k = _mm512_max_epi32(k, ncl);
		_mm512_mask_cvtepi32_storeu_epi8(q + i, m, k);
	}
}
#endif

void quant_apply(const float *x, int n, float scale, int clip,
		 enum case_rounding r, int8_t *q)
{
	int even = r == ROUND_HALF_EVEN;

	assert(clip >= 1 && clip <= 127);
	if (scale == 0.0f) {
		memset(q, 0, (size_t)(n > 0 ? n : 0));
		return;
	}
#ifdef CPU_X86
	if (cpu_has(CPU_AVX512F))
		apply_avx512(x, n, scale, clip, even, q);
	else if (cpu_has(CPU_AVX2))
		apply_avx2(x, n, scale, clip, even, q);
	else
#endif
		apply_plain(x, n, scale, clip, even, q);
}

/* quant_apply's rule element by element: a 0 scale gives 0, not x / 0 =
 * inf clamped to clip. Selects, not branches, so the loop vectorises. */
QUANT_INLINE void each_loop(const float *x, int n, const float *scale, int clip,
			    int even, int8_t *q)
{
#pragma omp simd
	for (int i = 0; i < n; i++) {
		float sc = scale[i];
		int8_t v = quant_one(x[i], sc == 0.0f ? 1.0f : sc, clip, even);

		q[i] = sc == 0.0f ? 0 : v;
	}
}

void quant_apply_each(const float *x, int n, const float *scale, int clip,
		      enum case_rounding r, int8_t *q)
{
	assert(clip >= 1 && clip <= 127);
	if (r == ROUND_HALF_EVEN)
		each_loop(x, n, scale, clip, 1, q);
	else
		each_loop(x, n, scale, clip, 0, q);
}

void quant_q8_0_block(const float *x, uint16_t *d16, int8_t *q)
{
	float amax = 0.0f, d, id;

	for (int j = 0; j < QUANT_QBLOCK; j++)
		if (fabsf(x[j]) > amax)
			amax = fabsf(x[j]);
	d = amax / 127.0f;
	id = d != 0.0f ? 1.0f / d : 0.0f;
	*d16 = quant_f32_to_f16(d);
	for (int j = 0; j < QUANT_QBLOCK; j++)
		q[j] = (int8_t)roundf(x[j] * id);	/* |x * id| <= 127 */
}

void quant_q4_0_block(const float *x, uint16_t *d16, int8_t *q)
{
	float amax = 0.0f, m = 0.0f, d, id;

	for (int j = 0; j < QUANT_QBLOCK; j++)
		if (fabsf(x[j]) > amax) {	/* strict: the first of ties */
			amax = fabsf(x[j]);
			m = x[j];
		}
	d = m / -8.0f;
	id = d != 0.0f ? 1.0f / d : 0.0f;
	*d16 = quant_f32_to_f16(d);
	for (int j = 0; j < QUANT_QBLOCK; j++) {
		/* x * id is in [-8, 8]: the sum is positive, so the cast
		 * truncates as ggml's (int8_t) does */
		int v = (int)(x[j] * id + 8.5f);

		q[j] = (int8_t)(v < 15 ? v : 15);
	}
}
