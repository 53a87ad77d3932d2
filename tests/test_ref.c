/*
 * test_ref.c - the oracle on tiny cases worked by hand.
 *
 * Each world is built here, by hand, in the docs/design.md 3.2 layouts: a few
 * keys in a paged cache whose block table is written out (e.g. {2, 0}:
 * key 0 and 1 in block 2, key 2 in block 0, block 1 unused). Every byte
 * and scale nobody should read is poisoned (-128, NaN), so a wrong gather
 * shows as a wrong or NaN result. Expected accumulators, scores, softmax
 * and outputs are written as the arithmetic a person would do on paper.
 *
 * Worked example (the main world): Q row of head 0 is 1 at d 0 and 2 at
 * d 17; key 1 has K 1 at d 0 and 3 at d 17 (byte 177 of k_cache), so acc
 * = 1 + 6 = 7 and the score is 7 * sQ 0.5 * sK 0.25 / sqrt(32).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/ref.h"

#include "refworld.h"	/* the hand-built world both tests share */

/* softmax of n values into p, by the textbook formula. */
static void softmax(const double *x, double *p, int n)
{
	double m = -INFINITY, sum = 0;

	for (int j = 0; j < n; j++)
		m = x[j] > m ? x[j] : m;
	for (int j = 0; j < n; j++)
		sum += x[j] == -INFINITY ? 0 : exp(x[j] - m);
	for (int j = 0; j < n; j++)
		p[j] = x[j] == -INFINITY ? 0 : exp(x[j] - m) / sum;
}

static void acc_walks_shuffled_block_table(void **state)
{
	struct world w;
	static const int want[2][3] = { { 0, 7, -4 }, { -5, 3, 8 } };

	(void)state;
	main_world(&w, &main_spec);
	/* The header's example: K[1][0][17] is byte 177, written by hand. */
	assert_int_equal(w.in.k_cache[177], 3);
	assert_int_equal(w.in.k_cache[(((2 * 1 + 0) * 2 + 0) * 2 + 1) * 16 + 0],
			 1);
	for (int qh = 0; qh < 2; qh++)
		for (int j = 0; j < 3; j++) {
			assert_int_equal(ref_acc(&w.c, &w.in, 0, 0, qh, j, -1),
					 want[qh][j]);
			/* D = 32: K-block 0 is the whole row. */
			assert_int_equal(ref_acc(&w.c, &w.in, 0, 0, qh, j, 0),
					 want[qh][j]);
		}
	world_free(&w);
}

static void extremes_are_exact(void **state)
{
	struct world w;

	(void)state;
	main_world(&w, &main_spec);
	for (int d = 0; d < 32; d++) {
		put_q(&w, 0, 0, 0, d, -127);
		put_k(&w, 0, 1, 0, d, -127);
	}
	assert_int_equal(ref_acc(&w.c, &w.in, 0, 0, 0, 1, -1), 32 * 127 * 127);
	world_free(&w);
}

static void decode_row_with_int8_v(void **state)
{
	struct world w;
	struct ref_row r;
	double sc = 1 / sqrt(32.0), s[3], p[3], o0, o5, oa0, oa5;

	(void)state;
	main_world(&w, &main_spec);
	assert_int_equal(ref_row_alloc(&r, 3, 32), 0);

	ref_row_compute(&w.c, &w.in, 0, 0, 0, &r);
	s[0] = 0 * 0.5 * 1 * sc;
	s[1] = 7 * 0.5 * 0.25 * sc;
	s[2] = -4 * 0.5 * 0.5 * sc;
	softmax(s, p, 3);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.visible, 3);
	for (int j = 0; j < 3; j++) {
		assert_close(r.score[j], s[j]);
		assert_close(r.prob[j], p[j]);
	}
	assert_close(r.max_abs_score, 1 * sc);
	/* V dequantized: d0 = 5, 5, 30; d5 = -0.5, 0.5, 0. */
	o0 = p[0] * 5 + p[1] * 5 + p[2] * 30;
	o5 = p[0] * -0.5 + p[1] * 0.5;
	oa0 = o0;
	oa5 = p[0] * 0.5 + p[1] * 0.5;
	assert_close(r.out[0], o0);
	assert_close(r.out[5], o5);
	for (int d = 0; d < 32; d++)
		if (d != 0 && d != 5)
			assert_true(r.out[d] == 0);
	assert_close(r.out_abs, oa0 > oa5 ? oa0 : oa5);

	ref_row_compute(&w.c, &w.in, 0, 0, 1, &r);
	s[0] = -5 * 0.25 * 1 * sc;
	s[1] = 3 * 0.25 * 0.25 * sc;
	s[2] = 8 * 0.25 * 0.5 * sc;
	softmax(s, p, 3);
	for (int j = 0; j < 3; j++)
		assert_close(r.prob[j], p[j]);
	assert_close(r.max_abs_score, 1.25 * sc);
	ref_row_free(&r);
	world_free(&w);
}

/* Float path from the logical tensors, and V stored as float. */
static void float_path_and_float_v(void **state)
{
	struct spec sp = main_spec;
	struct world w;
	struct ref_row r;
	double sc = 1 / sqrt(32.0), s[3], p[3], sf[3], pf[3];
	float *q, *k0, *k1, *k2;

	(void)state;
	sp.vd = VDT_F32;
	main_world(&w, &sp);
	/* Float V: 1.5, -2, 0.25 at d3 of keys 0, 1, 2. */
	w.in.v_cache_f[v_at(&w, 0, 0, 0, 3)] = 1.5f;
	w.in.v_cache_f[v_at(&w, 0, 1, 0, 3)] = -2;
	w.in.v_cache_f[v_at(&w, 0, 2, 0, 3)] = 0.25f;
	/* Logical: q = (0.5, 0, ..., 1 at d17); k rows; v d7 = 1, 2, 3. */
	q = w.in.q + row_of(&w, 0, 0, 0) * 32;
	k0 = w.in.k + l_at(&w, 0, 0, 0);
	k1 = w.in.k + l_at(&w, 0, 1, 0);
	k2 = w.in.k + l_at(&w, 0, 2, 0);
	q[0] = 0.5f;
	q[17] = 1;
	k0[0] = 1, k0[17] = -1;		/* 0.5 - 1 = -0.5 */
	k1[0] = 2, k1[17] = 0.75f;	/* 1 + 0.75 = 1.75 */
	k2[0] = -2, k2[5] = 9;		/* -1 */
	for (int j = 0; j < 3; j++)
		w.in.v[l_at(&w, 0, j, 0) + 7] = (float)(j + 1);

	assert_int_equal(ref_row_alloc(&r, 3, 32), 0);
	ref_row_compute(&w.c, &w.in, 0, 0, 0, &r);
	s[0] = 0;
	s[1] = 7 * 0.5 * 0.25 * sc;
	s[2] = -4 * 0.5 * 0.5 * sc;
	softmax(s, p, 3);
	sf[0] = -0.5 * sc;
	sf[1] = 1.75 * sc;
	sf[2] = -1 * sc;
	softmax(sf, pf, 3);
	for (int j = 0; j < 3; j++) {
		assert_close(r.score_f[j], sf[j]);
		assert_close(r.prob_f[j], pf[j]);
	}
	assert_close(r.out[3], p[0] * 1.5 - p[1] * 2 + p[2] * 0.25);
	assert_true(r.out[0] == 0);	/* int8 V is not read */
	assert_close(r.out_abs, p[0] * 1.5 + p[1] * 2 + p[2] * 0.25);
	assert_close(r.out_f[7], pf[0] * 1 + pf[1] * 2 + pf[2] * 3);
	assert_true(r.out_f[3] == 0);
	ref_row_free(&r);
	world_free(&w);
}

/*
 * Prefill, history 1, chunk 2 (context 3): token 0 sits at position 1 and
 * sees keys 0, 1; token 1 at position 2 sees all three.
 */
static void prefill_causal_mask(void **state)
{
	struct spec sp = main_spec;
	struct world w;
	struct ref_row r;
	double sc = 1 / sqrt(32.0), s[2], p[2];

	(void)state;
	sp.mode = MODE_PREFILL;
	sp.tokens[0] = 2;
	main_world(&w, &sp);
	/* Token 1 of head 0: copy of token 0's Q. */
	put_q(&w, 0, 1, 0, 0, 1);
	put_q(&w, 0, 1, 0, 17, 2);
	w.in.q_scale[row_of(&w, 0, 1, 0)] = 0.5f;
	w.in.q_scale[row_of(&w, 0, 0, 0)] = 0.5f;
	assert_int_equal(w.in.q_pos[0], 1);
	assert_int_equal(w.in.q_pos[1], 2);

	assert_int_equal(ref_row_alloc(&r, 3, 32), 0);
	ref_row_compute(&w.c, &w.in, 0, 0, 0, &r);
	assert_int_equal(r.visible, 2);
	assert_true(r.score[2] == -INFINITY);
	assert_true(r.score_f[2] == -INFINITY);
	assert_true(r.prob[2] == 0 && r.prob_f[2] == 0);
	s[0] = 0;
	s[1] = 7 * 0.5 * 0.25 * sc;
	softmax(s, p, 2);
	assert_close(r.prob[0], p[0]);
	assert_close(r.prob[1], p[1]);
	/* Key 2's V (30 at d0) must not leak in. */
	assert_close(r.out[0], p[0] * 5 + p[1] * 5);

	ref_row_compute(&w.c, &w.in, 0, 1, 0, &r);
	assert_int_equal(r.visible, 3);
	assert_close(r.score[2], -4 * 0.5 * 0.5 * sc);
	ref_row_free(&r);
	world_free(&w);
}

/* sQ = 0 (an all-zero Q row): every score 0, uniform softmax. */
static void zero_scale_q_row(void **state)
{
	struct world w;
	struct ref_row r;

	(void)state;
	main_world(&w, &main_spec);
	w.in.q_scale[0] = 0;
	assert_int_equal(ref_row_alloc(&r, 3, 32), 0);
	ref_row_compute(&w.c, &w.in, 0, 0, 0, &r);
	for (int j = 0; j < 3; j++) {
		assert_true(r.score[j] == 0);
		assert_close(r.prob[j], 1.0 / 3);
	}
	assert_true(r.max_abs_score == 0);
	assert_close(r.out[0], (5.0 + 5 + 30) / 3);
	ref_row_free(&r);
	world_free(&w);
}

/*
 * per_block32, D 64: two K-blocks with f16 scales. Key 0 block scales
 * 1.0 (0x3c00) and 0.5 (0x3800); key 1 -2.0 (0xc000) and 2^-24 (0x0001,
 * the smallest subnormal).
 */
static void per_block32_scales(void **state)
{
	struct spec sp = main_spec;
	struct world w;
	struct ref_row r;
	double sc = 1 / sqrt(64.0), s[2], p[2];

	(void)state;
	sp.D = 64;
	sp.context[0] = 2;
	sp.table[0][0] = 1;
	sp.ks = KSCALE_PER_BLOCK32;
	world_init(&w, &sp);
	put_q(&w, 0, 0, 0, 3, 2);
	put_q(&w, 0, 0, 0, 40, -3);
	put_k(&w, 0, 0, 0, 3, 5);	/* block 0: 10 */
	put_k(&w, 0, 0, 0, 40, 4);	/* block 1: -12 */
	put_k(&w, 0, 1, 0, 3, -1);	/* block 0: -2 */
	put_k(&w, 0, 1, 0, 40, -7);	/* block 1: 21 */
	w.in.q_scale[0] = 0.5f;
	w.in.k_scale16[s_at(&w, 0, 0, 0) * 2 + 0] = 0x3c00;
	w.in.k_scale16[s_at(&w, 0, 0, 0) * 2 + 1] = 0x3800;
	w.in.k_scale16[s_at(&w, 0, 1, 0) * 2 + 0] = 0xc000;
	w.in.k_scale16[s_at(&w, 0, 1, 0) * 2 + 1] = 0x0001;

	assert_int_equal(ref_acc(&w.c, &w.in, 0, 0, 0, 0, 0), 10);
	assert_int_equal(ref_acc(&w.c, &w.in, 0, 0, 0, 0, 1), -12);
	assert_int_equal(ref_acc(&w.c, &w.in, 0, 0, 0, 0, -1), -2);
	assert_int_equal(ref_acc(&w.c, &w.in, 0, 0, 0, 1, 1), 21);
	assert_int_equal(ref_row_alloc(&r, 2, 64), 0);
	ref_row_compute(&w.c, &w.in, 0, 0, 0, &r);
	s[0] = (10 * 1.0 + -12 * 0.5) * 0.5 * sc;
	s[1] = (-2 * -2.0 + 21 * ldexp(1, -24)) * 0.5 * sc;
	softmax(s, p, 2);
	assert_close(r.score[0], s[0]);
	assert_close(r.score[1], s[1]);
	assert_close(r.prob[1], p[1]);
	ref_row_free(&r);
	world_free(&w);
}

static void per_tensor_scale(void **state)
{
	struct spec sp = main_spec;
	struct world w;
	struct ref_row r;
	double sc = 1 / sqrt(32.0);

	(void)state;
	sp.ks = KSCALE_PER_TENSOR;
	main_world(&w, &sp);
	/* main_world's per-token scales land in k_scale[] but only [0] counts. */
	w.in.k_scale[0] = 0.125f;
	w.in.k_scale[s_at(&w, 0, 1, 0)] = NAN;
	assert_int_equal(ref_row_alloc(&r, 3, 32), 0);
	ref_row_compute(&w.c, &w.in, 0, 0, 1, &r);
	assert_close(r.score[0], -5 * 0.25 * 0.125 * sc);
	assert_close(r.score[1], 3 * 0.25 * 0.125 * sc);
	assert_close(r.score[2], 8 * 0.25 * 0.125 * sc);
	ref_row_free(&r);
	world_free(&w);
}

/*
 * per_head: the score of q head qh uses k_scale[g], g = qh / G, whatever
 * the key's block and slot. Hq 4, Hkv 2 (G 2), D 32, context 3: q heads
 * 0 and 2 hold 3 at d 9; key 1 holds 10 (kv head 0) and -20 (kv head 1)
 * at d 9, so acc = 30 and -60. With sQ 1, sK {0.125, 0.5} and scale
 * 1/sqrt(32): 30 * 0.125 / sqrt(32) and -60 * 0.5 / sqrt(32). The
 * per-slot scales are NaN (refworld), so reading one would show.
 */
static void per_head_scale(void **state)
{
	struct spec sp = main_spec;
	struct world w;
	struct ref_row r;
	double sc = 1 / sqrt(32.0);

	(void)state;
	sp.Hq = 4;
	sp.Hkv = 2;
	sp.ks = KSCALE_PER_HEAD;
	world_init(&w, &sp);
	put_q(&w, 0, 0, 0, 9, 3);
	put_q(&w, 0, 0, 2, 9, 3);
	put_k(&w, 0, 1, 0, 9, 10);
	put_k(&w, 0, 1, 1, 9, -20);
	w.in.k_scale[0] = 0.125f;
	w.in.k_scale[1] = 0.5f;
	assert_int_equal(ref_row_alloc(&r, 3, 32), 0);
	ref_row_compute(&w.c, &w.in, 0, 0, 0, &r);
	assert_close(r.score[1], 30 * 0.125 * sc);
	assert_close(r.score[0], 0);
	ref_row_compute(&w.c, &w.in, 0, 0, 2, &r);
	assert_close(r.score[1], -60 * 0.5 * sc);
	ref_row_free(&r);
	world_free(&w);
}

/*
 * cache.block_stride: the worked example at the top of ref.c with blocks
 * 1024 elements apart instead of 64 (Hkv 1 x D 32 x BS 2): K[1][0][17]
 * of block 2, slot 1, is byte 2 * 1024 + ((0 * 2 + 1) * 2 + 1) * 16 + 1
 * = 2097, not 177. The byte at 177 (now padding of block 0) is set to 99
 * and must not count: acc(key 1) = 1 * 1 + 2 * 3 = 7 as in the dense
 * example.
 */
static void block_stride_moves_every_block(void **state)
{
	struct spec sp = main_spec;
	struct world w;

	(void)state;
	sp.bstr = 1024;
	world_init(&w, &sp);
	put_q(&w, 0, 0, 0, 0, 1);
	put_q(&w, 0, 0, 0, 17, 2);
	put_k(&w, 0, 1, 0, 0, 1);
	put_k(&w, 0, 1, 0, 17, 3);
	assert_int_equal(k_at(&w, 0, 1, 0, 17), 2097);
	assert_int_equal(w.in.k_cache[2097], 3);
	w.in.k_cache[177] = 99;
	assert_int_equal(ref_acc(&w.c, &w.in, 0, 0, 0, 1, -1), 7);
	{
		int8_t k[32];

		ref_k_row(&w.in, 0, 0, 1, k);
		assert_int_equal(k[17], 3);
		assert_int_equal(k[0], 1);
	}
	world_free(&w);
}

/* Hq 4, Hkv 2: q heads 2 and 3 read kv head 1. */
static void gqa_head_mapping(void **state)
{
	struct spec sp = main_spec;
	struct world w;

	(void)state;
	sp.Hq = 4;
	sp.Hkv = 2;
	world_init(&w, &sp);
	for (int qh = 0; qh < 4; qh++)
		put_q(&w, 0, 0, qh, 9, qh + 1);
	put_k(&w, 0, 1, 0, 9, 10);
	put_k(&w, 0, 1, 1, 9, -20);
	assert_int_equal(ref_acc(&w.c, &w.in, 0, 0, 0, 1, -1), 10);
	assert_int_equal(ref_acc(&w.c, &w.in, 0, 0, 1, 1, -1), 20);
	assert_int_equal(ref_acc(&w.c, &w.in, 0, 0, 2, 1, -1), -60);
	assert_int_equal(ref_acc(&w.c, &w.in, 0, 0, 3, 1, -1), -80);
	world_free(&w);
}

/* Window 2 at position 2: keys 1 and 2 visible, key 0 masked. */
static void sliding_window_masks_old_keys(void **state)
{
	struct spec sp = main_spec;
	struct world w;
	struct ref_row r;

	(void)state;
	sp.window = 2;
	main_world(&w, &sp);
	assert_int_equal(ref_row_alloc(&r, 3, 32), 0);
	ref_row_compute(&w.c, &w.in, 0, 0, 0, &r);
	assert_int_equal(r.visible, 2);
	assert_true(r.score[0] == -INFINITY && r.prob[0] == 0);
	assert_true(r.score[1] > -INFINITY && r.score[2] > -INFINITY);
	ref_row_free(&r);
	world_free(&w);
}

/* Sequence 0 has 1 query token, sequence 1 has 2: row (0, 1) is padding. */
static void row_without_visible_keys(void **state)
{
	struct spec sp = main_spec;
	struct world w;
	struct ref_row r;

	(void)state;
	sp.mode = MODE_PREFILL;
	sp.S = 2;
	sp.NB = 5;
	sp.context[1] = 2;
	sp.tokens[1] = 2;
	sp.table[1][0] = 3;
	world_init(&w, &sp);
	assert_int_equal(w.in.q_pos[1], -1);
	assert_int_equal(ref_row_alloc(&r, 3, 32), 0);
	ref_row_compute(&w.c, &w.in, 0, 1, 0, &r);
	assert_int_equal(r.visible, 0);
	for (int j = 0; j < 3; j++)
		assert_true(r.score[j] == -INFINITY && r.prob[j] == 0 &&
			    r.prob_f[j] == 0);
	for (int d = 0; d < 32; d++)
		assert_true(r.out[d] == 0 && r.out_f[d] == 0);
	assert_true(r.out_abs == 0 && r.max_abs_score == 0);
	/* Sequence 1, token 0 (position 0) sees key 0 only. */
	ref_row_compute(&w.c, &w.in, 1, 0, 0, &r);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.visible, 1);
	assert_true(r.prob[0] == 1);
	ref_row_free(&r);
	world_free(&w);
}

/*
 * Soft cap 0.1 and ALiBi on the main world (2 q heads: slopes 2^-4 and
 * 2^-8, query at position 2): head 0's scores 0, 7/32 sc, -1 sc
 * (sc = 1/sqrt(32)) become 0.1 tanh(s / 0.1) + 2^-4 (j - 2).
 */
static void soft_cap_then_alibi(void **state)
{
	struct world w;
	struct ref_row r;
	double sc = 1 / sqrt(32.0), raw[3] = { 0, 7 * 0.125 * sc, -1 * sc };
	double s[3], p[3];

	(void)state;
	main_world(&w, &main_spec);
	w.c.soft_cap = 0.1;
	w.c.alibi = 1;
	assert_int_equal(ref_row_alloc(&r, 3, 32), 0);
	ref_row_compute(&w.c, &w.in, 0, 0, 0, &r);
	for (int j = 0; j < 3; j++)
		s[j] = 0.1 * tanh(raw[j] / 0.1) + 0.0625 * (j - 2);
	softmax(s, p, 3);
	for (int j = 0; j < 3; j++) {
		assert_close(r.score[j], s[j]);
		assert_close(r.prob[j], p[j]);
	}
	/* The float path gets them too: its logical q and k are 0 here. */
	for (int j = 0; j < 3; j++)
		assert_close(r.score_f[j], 0.0625 * (j - 2));
	/* Head 1: slope 2^-8, and cap only. */
	ref_row_compute(&w.c, &w.in, 0, 0, 1, &r);
	assert_close(r.score[0], 0.1 * tanh(-5 * 0.25 * sc / 0.1) - 2 * 0x1p-8);
	w.c.alibi = 0;
	ref_row_compute(&w.c, &w.in, 0, 0, 1, &r);
	assert_close(r.score[0], 0.1 * tanh(-5 * 0.25 * sc / 0.1));
	ref_row_free(&r);
	world_free(&w);
}

/* The ALiBi authors' get_slopes for 12 heads, and for 24 (16 + 8). */
static void alibi_slopes_published(void **state)
{
	static const double h12[12] = {
		0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125,
		0.00390625, 0.7071067811865476, 0.3535533905932738,
		0.1767766952966369, 0.08838834764831845,
	};

	(void)state;
	for (int h = 0; h < 12; h++)
		assert_close(ref_alibi_slope(h, 12), h12[h]);
	assert_close(ref_alibi_slope(0, 24), 0.7071067811865476);
	assert_close(ref_alibi_slope(16, 24), 0.8408964152537145);
	assert_close(ref_alibi_slope(23, 24), 0.07432544468767006);
	assert_close(ref_alibi_slope(7, 8), 0.00390625);
}

/*
 * A NaN K scale on visible key 1 (a kernel that read poison): the row's
 * score there is NaN, so the softmax sum is NaN and every probability
 * and output is NaN, as the formula gives - not 0, which a "z > 0"
 * guard made of it. The float path (logical K) is untouched.
 */
static void nan_reaching_a_row_stays_nan(void **state)
{
	struct world w;
	struct ref_row r;

	(void)state;
	main_world(&w, &main_spec);
	w.in.k_scale[s_at(&w, 0, 1, 0)] = NAN;
	assert_int_equal(ref_row_alloc(&r, 3, 32), 0);
	ref_row_compute(&w.c, &w.in, 0, 0, 0, &r);
	assert_true(isnan(r.score[1]));
	for (int j = 0; j < 3; j++)
		assert_true(isnan(r.prob[j]));
	for (int d = 0; d < 32; d++)
		assert_true(isnan(r.out[d]) && !isnan(r.out_f[d]));
	ref_row_free(&r);
	world_free(&w);
}

static void row_alloc_and_free(void **state)
{
	struct ref_row r;

	(void)state;
	assert_int_equal(ref_row_alloc(&r, 0, 0), 0);
	ref_row_free(&r);
	assert_null(r.score);
	ref_row_free(&r);	/* twice is harmless */
}

/*
 * The PV pass against the plain loop it stands for, bit for bit: out[d] =
 * fma(p[j], v[j][d], out[d]) over the keys in order, out_absd the same
 * with |v|, out_f with pf and the float V. Head dim 80 (two 32-wide
 * slices and a 16-wide tail), 70 keys in shuffled pages (three blocks of
 * keys in the pass), random V of both signs, so a sum that rounded apart,
 * changed order or lost a key would show.
 */
static void pv_pass_is_the_plain_fma_loop(void **state)
{
	static const struct spec sp = {
		.mode = MODE_DECODE, .S = 1, .Hq = 2, .Hkv = 1, .D = 80,
		.BS = 16, .NB = 6, .context = { 70 }, .tokens = { 1 },
		.table = { { 4, 1, 5, 0, 2 } },
		.ks = KSCALE_PER_TOKEN_HEAD, .vd = VDT_INT8,
	};
	struct world w;
	struct ref_row r;
	uint64_t x = 2024;

	(void)state;
	world_init(&w, &sp);
	for (int qh = 0; qh < 2; qh++)
		for (int d = 0; d < 80; d++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			put_q(&w, 0, 0, qh, d, (int)(x >> 60) - 8);
			w.in.q[row_of(&w, 0, 0, qh) * 80 + d] =
				(float)((int)(x >> 52 & 0xff) - 128) / 64;
		}
	for (int j = 0; j < 70; j++) {
		for (int d = 0; d < 80; d++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			put_k(&w, 0, j, 0, d, (int)(x >> 60) - 8);
			put_v(&w, 0, j, 0, d, (int)(x >> 40 & 0xff) - 128);
			w.in.k[l_at(&w, 0, j, 0) + d] =
				(float)((int)(x >> 24 & 0xff) - 128) / 64;
			w.in.v[l_at(&w, 0, j, 0) + d] =
				(float)((int)(x >> 8 & 0xffff) - 32768) / 3e4f;
		}
		w.in.v_scale[s_at(&w, 0, j, 0)] = 1.0f / (float)(j + 3);
		w.in.k_scale[s_at(&w, 0, j, 0)] = 0.125f;
	}
	assert_int_equal(ref_row_alloc(&r, 70, 80), 0);
	for (int qh = 0; qh < 2; qh++) {
		ref_row_compute(&w.c, &w.in, 0, 0, qh, &r);
		assert_int_equal(r.visible, 70);
		for (int d = 0; d < 80; d++) {
			double o = 0, oa = 0, of = 0;

			for (int j = 0; j < 70; j++) {
				double v = w.in.v_cache_i8[v_at(&w, 0, j, 0, d)] *
					   (double)w.in.v_scale[s_at(&w, 0, j, 0)];

				o = fma(r.prob[j], v, o);
				oa = fma(r.prob[j], fabs(v), oa);
				of = fma(r.prob_f[j],
					 (double)w.in.v[l_at(&w, 0, j, 0) + d], of);
			}
			assert_memory_equal(&r.out[d], &o, sizeof(double));
			assert_memory_equal(&r.out_absd[d], &oa, sizeof(double));
			assert_memory_equal(&r.out_f[d], &of, sizeof(double));
		}
	}
	ref_row_free(&r);
	world_free(&w);
}

/*
 * A sparse pool (sim/attn/inputs.h): 4,194,304 blocks, the table {4194000,
 * 3}, so only blocks 3 and 4194000 are stored, as rows 0 and 1. Key 5
 * lives in block 4194000 (row 1, slot 5), key 17 in block 3 (row 0, slot
 * 1). ref_acc and ref_k_row read them through ref/pool.c; the dot
 * products are made here from k_cache [2][1][2][16][16] directly.
 */
static void sparse_pool_read_by_its_stored_rows(void **state)
{
	static int blocks[] = { 4194000, 3 };
	static const int key[2] = { 5, 17 }, row[2] = { 1, 0 };
	struct fs_case c;
	struct fs_inputs in;
	struct fs_err err;
	int8_t k[32];

	(void)state;
	memset(&c, 0, sizeof(c));
	c.mode = MODE_DECODE;
	c.q_heads = 2, c.kv_heads = 1, c.head_dim = 32, c.block_size = 16;
	c.placement = PLACE_TABLE, c.num_blocks = 1 << 22;
	c.k_scale = KSCALE_PER_TOKEN_HEAD, c.v_dtype = VDT_INT8;
	c.n_seqs = 1;
	c.seqs[0].context = 20, c.seqs[0].tokens = 1, c.seqs[0].history = 19;
	c.seqs[0].blocks = blocks, c.seqs[0].n_blocks = 2;
	c.rounding = ROUND_HALF_AWAY, c.clip = 127, c.seed = 77;
	c.q.dist = c.k.dist = c.v.dist = DIST_NORMAL;
	c.q.scale = c.k.scale = c.v.scale = 1.0;
	c.softmax_scale = 1.0;
	assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_OK);
	assert_int_equal(in.NM, 2);
	assert_int_equal(in.pool_blocks[0], 3);
	assert_int_equal(in.pool_blocks[1], 4194000);
	for (int i = 0; i < 2; i++) {
		int slot = key[i] % 16;

		ref_k_row(&in, 0, 0, key[i], k);
		for (int qh = 0; qh < 2; qh++) {
			int32_t want = 0;

			for (int d = 0; d < 32; d++) {
				int8_t kb = in.k_cache[(((size_t)row[i] * 2 + d / 16) * 16 + slot) * 16 + d % 16];

				assert_int_equal(k[d], kb);
				want += in.q_int8[qh * 32 + d] * kb;
			}
			assert_int_equal(ref_acc(&c, &in, 0, 0, qh, key[i], -1), want);
		}
	}
	inputs_free(&in);
}

/*
 * q8_0 and q4_0 V (llama.cpp's blocks) read by the reference: one decode
 * row over a context of 3 keys (Hq 1, Hkv 1, D 64: two blocks of 32 dims
 * a key). Its output is made here from ref's own probabilities and the
 * stored bytes and fp16 scales, v_cache[blk][0][d][slot] and
 * v_scale16[blk][slot][0][d / 32], in double: (q - 0 or 8) * scale
 * (the fp16 decoded by this file's own shift, not quant.c's).
 */
static double f16_here(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);

	return h & 0x8000 ? -v : v;
}

static void v_blocks_read_by_the_reference(void **state)
{
	static const enum case_vdtype types[] = { VDT_Q8_0, VDT_Q4_0 };

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct fs_case c;
		struct fs_inputs in;
		struct fs_err err;
		struct ref_row r;

		memset(&c, 0, sizeof(c));
		c.mode = MODE_DECODE;
		c.q_heads = 1, c.kv_heads = 1, c.head_dim = 64, c.block_size = 16;
		c.placement = PLACE_REVERSED, c.num_blocks = 3;
		c.k_scale = KSCALE_PER_TOKEN_HEAD, c.v_dtype = types[i];
		c.n_seqs = 1;
		c.seqs[0].context = 3, c.seqs[0].tokens = 1, c.seqs[0].history = 2;
		c.rounding = ROUND_HALF_AWAY, c.clip = 127, c.seed = 5;
		c.q.dist = c.k.dist = c.v.dist = DIST_NORMAL;
		c.q.scale = c.k.scale = c.v.scale = 1.0;
		c.softmax_scale = 0.125;
		assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_OK);
		assert_null(in.v_scale);
		assert_non_null(in.v_scale16);
		assert_int_equal(ref_row_alloc(&r, 3, 64), 0);
		ref_row_compute(&c, &in, 0, 0, 0, &r);
		for (int d = 0; d < 64; d++) {
			double want = 0;

			for (int j = 0; j < 3; j++) {
				int blk = in.block_table[0];	/* reversed: block 2 */
				int q = in.v_cache_i8[((size_t)blk * 64 + d) * 16 + j];

				assert_int_equal(blk, 2);
				if (types[i] == VDT_Q4_0) {
					assert_true(q >= 0 && q <= 15);
					q -= 8;
				}
				want += r.prob[j] * q *
					f16_here(in.v_scale16[((size_t)blk * 16 + j) * 2 + d / 32]);
			}
			assert_true(fabs(r.out[d] - want) <= 1e-12 * (1 + fabs(want)));
		}
		ref_row_free(&r);
		inputs_free(&in);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(acc_walks_shuffled_block_table),
		cmocka_unit_test(sparse_pool_read_by_its_stored_rows),
		cmocka_unit_test(v_blocks_read_by_the_reference),
		cmocka_unit_test(extremes_are_exact),
		cmocka_unit_test(decode_row_with_int8_v),
		cmocka_unit_test(float_path_and_float_v),
		cmocka_unit_test(prefill_causal_mask),
		cmocka_unit_test(zero_scale_q_row),
		cmocka_unit_test(per_block32_scales),
		cmocka_unit_test(per_tensor_scale),
		cmocka_unit_test(per_head_scale),
		cmocka_unit_test(block_stride_moves_every_block),
		cmocka_unit_test(gqa_head_mapping),
		cmocka_unit_test(sliding_window_masks_old_keys),
		cmocka_unit_test(row_without_visible_keys),
		cmocka_unit_test(soft_cap_then_alibi),
		cmocka_unit_test(alibi_slopes_published),
		cmocka_unit_test(nan_reaching_a_row_stays_nan),
		cmocka_unit_test(row_alloc_and_free),
		cmocka_unit_test(pv_pass_is_the_plain_fma_loop),
	};

	return cmocka_run_group_tests_name("ref", tests, NULL, NULL);
}
