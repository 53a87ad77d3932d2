/*
 * test_quant.c - number formats and the INT8 quantizer, from hand-worked
 * values: every rounding tie both ways, BF16 and FP16 bit patterns at
 * the edges (ties, overflow, subnormals, NaN), and the absmax quantizer
 * including the all-zero row. Where the compiler has _Float16, random
 * f32 values are also checked against its conversion, and BF16 against
 * a nearest-neighbour search done in double (an independent method).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include "../sim/common/fs.h"
#include "../sim/attn/quant.h"
#include "testutil.h"

static int is_nan(float x)
{
	return x != x;
}

/* Both rounding modes of v, as {away, even}. */
struct tie { float v, away, even; };

static void round_ties(void **state)
{
	static const struct tie ties[] = {
		{ 0.5f, 1.0f, 0.0f },     { -0.5f, -1.0f, -0.0f },
		{ 1.5f, 2.0f, 2.0f },     { -1.5f, -2.0f, -2.0f },
		{ 2.5f, 3.0f, 2.0f },     { -2.5f, -3.0f, -2.0f },
		{ 126.5f, 127.0f, 126.0f }, { -126.5f, -127.0f, -126.0f },
		{ 127.5f, 128.0f, 128.0f }, { -127.5f, -128.0f, -128.0f },
		/* not ties: the v + 0.5 trap (0.49999997 + 0.5 rounds to 1) */
		{ 0.49999997f, 0.0f, 0.0f }, { -0.49999997f, -0.0f, -0.0f },
		{ 2.4999998f, 2.0f, 2.0f }, { 2.5000002f, 3.0f, 3.0f },
		{ 0.0f, 0.0f, 0.0f },     { -0.4f, -0.0f, -0.0f },
		{ 3.0f, 3.0f, 3.0f },     { -7.75f, -8.0f, -8.0f },
		/* near 2^23, where f32 still has a .5 */
		{ 4194304.5f, 4194305.0f, 4194304.0f },
		{ 8388607.5f, 8388608.0f, 8388608.0f },
		{ 1e10f, 1e10f, 1e10f },  { -1e10f, -1e10f, -1e10f },
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(ties); i++) {
		float a = quant_round(ties[i].v, ROUND_HALF_AWAY);
		float e = quant_round(ties[i].v, ROUND_HALF_EVEN);

		if (tu_f32_bits(a) != tu_f32_bits(ties[i].away) || tu_f32_bits(e) != tu_f32_bits(ties[i].even))
			fail_msg("round(%.9g): away %.9g (want %.9g) even %.9g (want %.9g)",
				 (double)ties[i].v, (double)a, (double)ties[i].away,
				 (double)e, (double)ties[i].even);
	}
	assert_true(is_nan(quant_round(tu_f32_from_bits(0x7fc00000u), ROUND_HALF_AWAY)));
	assert_true(is_nan(quant_round(tu_f32_from_bits(0x7fc00000u), ROUND_HALF_EVEN)));
	assert_int_equal(tu_f32_bits(quant_round(tu_f32_from_bits(0xff800000u), ROUND_HALF_EVEN)),
			 0xff800000u);
}

static void bf16_known_patterns(void **state)
{
	static const struct { uint32_t in, out; } cases[] = {
		{ 0x3f800000u, 0x3f800000u },	/* 1.0 exact */
		{ 0x3f808000u, 0x3f800000u },	/* 1.00390625: tie, even stays */
		{ 0x3f818000u, 0x3f820000u },	/* 1.01171875: tie, odd goes up */
		{ 0x3f808001u, 0x3f810000u },	/* just above the tie */
		{ 0x3f807fffu, 0x3f800000u },	/* just below the tie */
		{ 0xbf818000u, 0xbf820000u },	/* negative tie, odd */
		{ 0x3fffffffu, 0x40000000u },	/* 1.99.. carries into 2.0 */
		{ 0x7f7fffffu, 0x7f800000u },	/* FLT_MAX rounds to inf */
		{ 0x7f7f7fffu, 0x7f7f0000u },	/* largest that stays finite */
		{ 0x7f800000u, 0x7f800000u },	/* inf */
		{ 0xff800000u, 0xff800000u },	/* -inf */
		{ 0x00000000u, 0x00000000u },
		{ 0x80000000u, 0x80000000u },	/* -0 */
		{ 0x00018000u, 0x00020000u },	/* subnormal tie, odd */
		{ 0x00008000u, 0x00000000u },	/* subnormal tie, even */
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(cases); i++) {
		uint32_t got = tu_f32_bits(quant_bf16_round(tu_f32_from_bits(cases[i].in)));

		if (got != cases[i].out)
			fail_msg("bf16(0x%08x) = 0x%08x, want 0x%08x", cases[i].in,
				 got, cases[i].out);
	}
	assert_true(quant_bf16_round(1.00390625f) == 1.0f);
	assert_true(quant_bf16_round(1.01171875f) == 1.015625f);
	/* NaN stays NaN, even one whose payload is only in the low half */
	assert_true(is_nan(quant_bf16_round(tu_f32_from_bits(0x7fc00000u))));
	assert_true(is_nan(quant_bf16_round(tu_f32_from_bits(0x7f800001u))));
	assert_true(is_nan(quant_bf16_round(tu_f32_from_bits(0xff800001u))));
}

/*
 * Independent BF16 rounding: take the two BF16 neighbours of x by
 * truncation, measure both distances in double (exact for f32 values),
 * pick the nearer, ties to the even mantissa.
 */
static float bf16_nearest(float x)
{
	uint32_t lo = tu_f32_bits(x) & 0xffff0000u, hi = lo + 0x10000u;
	double dl = (double)x - (double)tu_f32_from_bits(lo);
	double dh = (double)tu_f32_from_bits(hi) - (double)x;

	if (dl < 0)
		dl = -dl;
	if (dh < 0)
		dh = -dh;
	if (dl < dh || (dl == dh && !(lo & 0x10000u)))
		return tu_f32_from_bits(lo);
	return tu_f32_from_bits(hi);
}

static void bf16_random_against_nearest(void **state)
{
	uint64_t seed = 42;

	(void)state;
	for (int i = 0; i < 1000000; i++) {
		uint32_t u = (uint32_t)tu_rand(&seed);
		float x = tu_f32_from_bits(u);

		/* finite values whose upper neighbour is finite too */
		if ((u & 0x7f800000u) == 0x7f800000u || (u & 0x7fff0000u) == 0x7f7f0000u)
			continue;
		if (tu_f32_bits(quant_bf16_round(x)) != tu_f32_bits(bf16_nearest(x)))
			fail_msg("bf16(0x%08x) = 0x%08x, nearest 0x%08x", u,
				 tu_f32_bits(quant_bf16_round(x)), tu_f32_bits(bf16_nearest(x)));
	}
}

static void f16_known_values(void **state)
{
	static const struct { float in; uint16_t out; } cases[] = {
		{ 1.0f, 0x3c00 },
		{ -2.0f, 0xc000 },
		{ 0.1f, 0x2e66 },		/* 0.0999755859375 */
		{ 65504.0f, 0x7bff },		/* largest finite */
		{ 65519.996f, 0x7bff },		/* just under the tie */
		{ 65520.0f, 0x7c00 },		/* tie, odd 0x7bff -> inf */
		{ -65520.0f, 0xfc00 },
		{ 1e6f, 0x7c00 },
		{ 0x1p-14f, 0x0400 },		/* smallest normal */
		{ 0x1p-14f - 0x1p-25f, 0x0400 },	/* tie 0x3ff/0x400 -> even */
		{ 0x1p-24f, 0x0001 },		/* smallest subnormal */
		{ 0x1p-25f, 0x0000 },		/* tie with 0 -> 0 */
		{ -0x1p-25f, 0x8000 },
		{ 0x1.000002p-25f, 0x0001 },	/* just above the tie */
		{ 0x1.8p-24f, 0x0002 },		/* 1.5 ulp: tie, odd 1 -> 2 */
		{ 0x1.4p-23f, 0x0002 },		/* 2.5 ulp: tie, even 2 stays */
		{ 0x1p-26f, 0x0000 },
		{ 1.0f + 0x1p-11f, 0x3c00 },	/* tie, even stays */
		{ 1.0f + 0x3p-11f, 0x3c02 },	/* tie, odd goes up */
		{ 2047.5f, 0x6800 },		/* 2047.5 -> 2048 (tie, odd) */
		{ 0.0f, 0x0000 },
		{ -0.0f, 0x8000 },
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(cases); i++) {
		uint16_t got = quant_f32_to_f16(cases[i].in);

		if (got != cases[i].out)
			fail_msg("f16(%a) = 0x%04x, want 0x%04x",
				 (double)cases[i].in, got, cases[i].out);
	}
	assert_int_equal(quant_f32_to_f16(tu_f32_from_bits(0x7f800000u)), 0x7c00);
	assert_int_equal(quant_f32_to_f16(tu_f32_from_bits(0xff800000u)), 0xfc00);
	assert_int_equal(quant_f32_to_f16(tu_f32_from_bits(0x7fc00000u)) & 0x7c00, 0x7c00);
	assert_true(quant_f32_to_f16(tu_f32_from_bits(0x7f800001u)) & 0x03ff);
	assert_true(quant_f32_to_f16(tu_f32_from_bits(0xffc00000u)) & 0x03ff);

	assert_true(quant_f16_to_f32(0x0001) == 0x1p-24f);
	assert_true(quant_f16_to_f32(0x03ff) == 1023.0f * 0x1p-24f);
	assert_true(quant_f16_to_f32(0x0200) == 0x1p-15f);
	assert_true(quant_f16_to_f32(0x0400) == 0x1p-14f);
	assert_true(quant_f16_to_f32(0x7bff) == 65504.0f);
	assert_true(quant_f16_to_f32(0x3555) == 0.333251953125f);
	assert_true(quant_f16_to_f32(0xc000) == -2.0f);
	assert_int_equal(tu_f32_bits(quant_f16_to_f32(0x8000)), 0x80000000u);
	assert_int_equal(tu_f32_bits(quant_f16_to_f32(0x7c00)), 0x7f800000u);
	assert_int_equal(tu_f32_bits(quant_f16_to_f32(0xfc00)), 0xff800000u);
	assert_true(is_nan(quant_f16_to_f32(0x7e00)));
	assert_true(is_nan(quant_f16_to_f32(0x7c01)));
}

/* Every f16 bit pattern survives f16 -> f32 -> f16 (NaNs stay NaN). */
static void f16_round_trip_all(void **state)
{
	(void)state;
	for (uint32_t h = 0; h < 0x10000u; h++) {
		float f = quant_f16_to_f32((uint16_t)h);
		uint16_t back = quant_f32_to_f16(f);

		if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu)) {
			assert_true(is_nan(f));
			assert_int_equal(back & 0x7c00u, 0x7c00u);
			assert_true(back & 0x3ffu);
			continue;
		}
		if (back != h)
			fail_msg("f16 0x%04x -> %a -> 0x%04x", h, (double)f, back);
	}
}

#ifdef __FLT16_MANT_DIG__
/* The compiler's own conversion is an independent oracle. */
static void f16_random_against_compiler(void **state)
{
	uint64_t seed = 7;

	(void)state;
	for (int i = 0; i < 1000000; i++) {
		uint32_t u = (uint32_t)tu_rand(&seed);
		float x;
		_Float16 hx;
		uint16_t want;

		/* bias towards the f16 range: exponents 100..150 */
		if (i & 1)
			u = (u & 0x807fffffu) | ((100u + (u >> 23) % 51u) << 23);
		x = tu_f32_from_bits(u);
		if (x != x)
			continue;
		hx = (_Float16)x;
		memcpy(&want, &hx, sizeof(want));
		if (quant_f32_to_f16(x) != want)
			fail_msg("f16(%a): 0x%04x, compiler 0x%04x", (double)x,
				 quant_f32_to_f16(x), want);
		if (tu_f32_bits(quant_f16_to_f32(want)) != tu_f32_bits((float)hx))
			fail_msg("f32(0x%04x) differs from the compiler", want);
	}
}
#endif

static void scale_and_apply(void **state)
{
	const float x[] = { 0.5f, -2.0f, 1.25f };
	const float zero[] = { 0.0f, -0.0f, 0.0f, 0.0f };
	int8_t q[4] = { 9, 9, 9, 9 };
	float s;

	(void)state;
	/* the worked example in quant.c */
	s = quant_scale(x, 3, 127);
	assert_true(s == 2.0f / 127.0f);
	quant_apply(x, 3, s, 127, ROUND_HALF_AWAY, q);
	assert_int_equal(q[0], 32);	/* 31.75 */
	assert_int_equal(q[1], -127);
	assert_int_equal(q[2], 79);	/* 79.375 */

	/* all-zero row: scale 0, q 0, no NaN */
	s = quant_scale(zero, 4, 127);
	assert_true(s == 0.0f);
	quant_apply(zero, 4, s, 127, ROUND_HALF_EVEN, q);
	for (int i = 0; i < 4; i++)
		assert_int_equal(q[i], 0);

	/* ties through the division: 5 / 2 = 2.5, -3 / 2 = -1.5 */
	{
		const float t[] = { 5.0f, -3.0f, 1.0f, -5.0f };

		quant_apply(t, 4, 2.0f, 127, ROUND_HALF_AWAY, q);
		assert_int_equal(q[0], 3);
		assert_int_equal(q[1], -2);
		assert_int_equal(q[2], 1);	/* 0.5 */
		assert_int_equal(q[3], -3);
		quant_apply(t, 4, 2.0f, 127, ROUND_HALF_EVEN, q);
		assert_int_equal(q[0], 2);
		assert_int_equal(q[1], -2);
		assert_int_equal(q[2], 0);
		assert_int_equal(q[3], -2);
	}
	/* clamping: a value beyond the scale's range, and a smaller clip */
	{
		const float t[] = { 200.0f, -200.0f, 127.5f, -127.5f };

		quant_apply(t, 4, 1.0f, 127, ROUND_HALF_AWAY, q);
		assert_int_equal(q[0], 127);
		assert_int_equal(q[1], -127);
		assert_int_equal(q[2], 127);
		assert_int_equal(q[3], -127);	/* never -128, the poison */
		quant_apply(t, 4, 1.0f, 100, ROUND_HALF_EVEN, q);
		assert_int_equal(q[0], 100);
		assert_int_equal(q[3], -100);
	}
	/* NaN input gives 0, not undefined behaviour */
	{
		const float t[] = { tu_f32_from_bits(0x7fc00000u), 1.0f };

		quant_apply(t, 2, 1.0f, 127, ROUND_HALF_AWAY, q);
		assert_int_equal(q[0], 0);
		assert_int_equal(q[1], 1);
	}
	/* absmax of a row whose largest magnitude is negative */
	{
		const float t[] = { 1.0f, -127.0f, 3.0f };

		assert_true(quant_scale(t, 3, 127) == 1.0f);
		assert_true(quant_scale(t, 3, 1) == 127.0f);
		assert_true(quant_scale(t, 0, 127) == 0.0f);
	}
}

/*
 * quant_apply (branch-free) is quant_round of x / scale, clamped to
 * [-clip, clip] with NaN to 0, for random bit patterns (NaN, inf,
 * subnormals included), values near every tie, both roundings and
 * several clips, on lengths with vector tails.
 */
static void apply_matches_round_and_clamp(void **state)
{
	uint64_t seed = 99;
	float x[4096];
	int8_t q[4096];

	(void)state;
	for (int rep = 0; rep < 64; rep++) {
		float scale = rep % 4 == 0 ? 1.0f : (float)(tu_rand(&seed) % 1000 + 1) / 97.0f;
		int clip = rep % 3 == 0 ? 127 : (int)(tu_rand(&seed) % 127) + 1;
		enum case_rounding r = rep % 2 ? ROUND_HALF_EVEN : ROUND_HALF_AWAY;

		for (int i = 0; i < 4096; i++) {
			uint32_t u = (uint32_t)tu_rand(&seed);

			if (i % 3 == 0)		/* any bit pattern */
				memcpy(&x[i], &u, sizeof(float));
			else if (i % 3 == 1)	/* exact ties and neighbours */
				x[i] = ((float)((int)(u % 600) - 300) * 0.5f +
					(float)((int)(u >> 30) - 1) * 1e-6f) * scale;
			else
				x[i] = ((float)(int32_t)u / 2147483648.0f) * 200.0f;
		}
		/* lengths off a vector multiple too: a tail's bytes past n
		 * are not written */
		int n = 4096 - rep % 17;

		memset(q, 0x55, sizeof(q));
		quant_apply(x, n, scale, clip, r, q);
		for (int i = n; i < 4096; i++)
			assert_int_equal(q[i], 0x55);
		for (int i = 0; i < n; i++) {
			float v = quant_round(x[i] / scale, r);

			v = v != v ? 0.0f : v > (float)clip ? (float)clip :
			    v < (float)-clip ? (float)-clip : v;
			if (q[i] != (int8_t)v)
				fail_msg("x %a scale %a clip %d: got %d want %d", (double)x[i],
					 (double)scale, clip, q[i], (int)(int8_t)v);
		}
	}
}

/* The scale's absmax: a NaN never wins, -0 is 0, inf is inf. */
static void scale_absmax_edges(void **state)
{
	float a[4] = { NAN, -3.0f, 2.0f, -0.0f }, b[2] = { -0.0f, 0.0f };
	float c[3] = { 1.0f, -INFINITY, NAN };

	(void)state;
	assert_true(quant_scale(a, 4, 127) == 3.0f / 127.0f);
	assert_true(quant_scale(b, 2, 127) == 0.0f);
	assert_true(quant_scale(c, 3, 1) == INFINITY);
}

/* quant_apply of the row that set the scale reaches +-clip exactly. */
static void absmax_element_hits_clip(void **state)
{
	uint64_t seed = 3;
	float x[256];
	int8_t q[256];

	(void)state;
	for (int r = 0; r < 2000; r++) {
		int imax = 0;

		for (int i = 0; i < 256; i++) {
			x[i] = quant_bf16_round((float)((int64_t)(tu_rand(&seed) % 2000001) - 1000000) *
						1e-5f);
			if ((x[i] < 0 ? -x[i] : x[i]) > (x[imax] < 0 ? -x[imax] : x[imax]))
				imax = i;
		}
		quant_apply(x, 256, quant_scale(x, 256, 127), 127, ROUND_HALF_AWAY, q);
		assert_int_equal(q[imax] < 0 ? -q[imax] : q[imax], 127);
		for (int i = 0; i < 256; i++)
			assert_true(q[i] >= -127 && q[i] <= 127);
	}
}

/*
 * llama.cpp's V blocks by hand (ggml's reference quantizers' rules, as
 * quant.h states them).
 * q8_0: {127, -63.5, 0.5, 1, 0...}: absmax 127, d = 1 (fp16 0x3c00),
 * q = round half away: {127, -64, 1, 1, 0...}. All zeros: d 0, q 0.
 * q4_0: {-2, 1, 0.5, 0...}: m = -2, d = m / -8 = 0.25 (0x3400), 1/d = 4:
 * trunc(x * 4 + 8.5) = {0, 12, 10, 8...}, read back (q - 8) * d = x.
 * Ties on the magnitude take the first: {2, -2, 0...} gives m = 2, d =
 * -0.25 (0xb400), q = {trunc(-8 + 8.5), min(15, trunc(8 + 8.5))} = {0,
 * 15}, so -2 reads back as (15 - 8) * -0.25 = -1.75, as in llama.cpp.
 * All zeros: d = 0 / -8 = -0 (fp16 0x8000, as ggml's), every q 8 (the
 * value 0).
 */
static void llama_cpp_v_blocks(void **state)
{
	float x[QUANT_QBLOCK];
	int8_t q[QUANT_QBLOCK];
	uint16_t d;

	(void)state;
	memset(x, 0, sizeof(x));
	x[0] = 127, x[1] = -63.5f, x[2] = 0.5f, x[3] = 1;
	quant_q8_0_block(x, &d, q);
	assert_int_equal(d, 0x3c00);
	assert_int_equal(q[0], 127);
	assert_int_equal(q[1], -64);
	assert_int_equal(q[2], 1);
	assert_int_equal(q[3], 1);
	for (int j = 4; j < QUANT_QBLOCK; j++)
		assert_int_equal(q[j], 0);
	memset(x, 0, sizeof(x));
	quant_q8_0_block(x, &d, q);
	assert_int_equal(d, 0);
	assert_int_equal(q[0], 0);

	x[0] = -2, x[1] = 1, x[2] = 0.5f;
	quant_q4_0_block(x, &d, q);
	assert_int_equal(d, 0x3400);
	assert_int_equal(q[0], 0);
	assert_int_equal(q[1], 12);
	assert_int_equal(q[2], 10);
	for (int j = 3; j < QUANT_QBLOCK; j++)
		assert_int_equal(q[j], 8);
	for (int j = 0; j < 3; j++)
		assert_true((float)(q[j] - 8) * quant_f16_to_f32(d) == x[j]);
	memset(x, 0, sizeof(x));
	x[0] = 2, x[1] = -2;
	quant_q4_0_block(x, &d, q);
	assert_int_equal(d, 0xb400);
	assert_int_equal(q[0], 0);
	assert_int_equal(q[1], 15);
	assert_true((float)(q[1] - 8) * quant_f16_to_f32(d) == -1.75f);
	memset(x, 0, sizeof(x));
	quant_q4_0_block(x, &d, q);
	assert_int_equal(d, 0x8000);
	assert_int_equal(q[0], 8);
}

/*
 * quant_apply_each (V per channel): element i by its own scale, as
 * quant_apply of that one element with scale[i] would give. By hand:
 * x = {1.0, 1.0, -0.75, 5, NaN, 2.5}, scales {0.5, 0, 0.5, 0.02, 1, 1},
 * clip 127: 1 / 0.5 = 2; a zero scale stores 0 (not 1 / 0 = inf clamped
 * to 127); -0.75 / 0.5 = -1.5 -> -2 (half away) or -2 (half even, -2 is
 * even); 5 / 0.02 = 250 -> clipped 127; NaN -> 0; 2.5 -> 3 or 2.
 */
static void apply_each_by_hand_and_as_apply(void **state)
{
	const float x[6] = { 1.0f, 1.0f, -0.75f, 5.0f, NAN, 2.5f };
	const float sc[6] = { 0.5f, 0.0f, 0.5f, 0.02f, 1.0f, 1.0f };
	static const int8_t away[6] = { 2, 0, -2, 127, 0, 3 }, even[6] = { 2, 0, -2, 127, 0, 2 };
	float xs[300], ss[300];
	int8_t q[300];
	uint32_t seed = 7;

	(void)state;
	quant_apply_each(x, 6, sc, 127, ROUND_HALF_AWAY, q);
	assert_memory_equal(q, away, 6);
	quant_apply_each(x, 6, sc, 127, ROUND_HALF_EVEN, q);
	assert_memory_equal(q, even, 6);
	for (int i = 0; i < 300; i++) {
		seed = seed * 1103515245u + 12345u;
		xs[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 9.0f;
		ss[i] = i % 17 == 0 ? 0.0f : (float)(1 + i % 13) / 64.0f;
	}
	for (int r = 0; r < 2; r++)
		for (int clip = 1; clip <= 127; clip += 63) {
			quant_apply_each(xs, 300, ss, clip, r ? ROUND_HALF_EVEN : ROUND_HALF_AWAY, q);
			for (int i = 0; i < 300; i++) {
				int8_t one;

				quant_apply(&xs[i], 1, ss[i], clip, r ? ROUND_HALF_EVEN : ROUND_HALF_AWAY,
					    &one);
				assert_int_equal(q[i], one);
			}
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_ties),
		cmocka_unit_test(llama_cpp_v_blocks),
		cmocka_unit_test(bf16_known_patterns),
		cmocka_unit_test(bf16_random_against_nearest),
		cmocka_unit_test(f16_known_values),
		cmocka_unit_test(f16_round_trip_all),
#ifdef __FLT16_MANT_DIG__
		cmocka_unit_test(f16_random_against_compiler),
#endif
		cmocka_unit_test(scale_and_apply),
		cmocka_unit_test(absmax_element_hits_clip),
		cmocka_unit_test(apply_matches_round_and_clamp),
		cmocka_unit_test(scale_absmax_edges),
		cmocka_unit_test(apply_each_by_hand_and_as_apply),
	};

	return cmocka_run_group_tests_name("quant", tests, NULL, NULL);
}
