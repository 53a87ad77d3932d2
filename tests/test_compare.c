/*
 * test_compare.c - the comparison of a kernel result with the reference.
 *
 * A correct result is built by hand from ref/'s values for a tiny case
 * (gfx936 registers labelled through the profile's C table), so the
 * comparison must report 0 mismatches; then one value is planted wrong
 * and exactly one mismatch must be reported, at the right place. The
 * tolerances are driven to their boundary both ways, the quantization
 * metrics are checked on 2-key rows worked by hand, and the report must
 * be the same bytes for 1 and 3 OpenMP threads.
 *
 * Worked example (the main world, decode, Hq 2 / Hkv 1 so G = 2): gfx936
 * lane 19, e 0 holds C[3][1] (row = lane % 16, col = lane / 16 + 4e), so
 * in tile (s 0, kv head 0, row_base 0, token_base 0) it is q head 3 % 2
 * = 1 against key 1: ref_acc = 3.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/compare.h"
#include "../ref/ref.h"
#include "../lib/profile.h"
#include "testutil.h"

#include "refworld.h"	/* the hand-built world both tests share */

/* ---- the main world ---------------------------------------------------- */

/* ---- a result built from the reference ----------------------------------- */

#define GARBAGE 0x5eed5eed	/* what tail columns of a tile hold */

static struct lanemap *gfx936(void)
{
	struct fs_err err;
	struct lm_report rep;
	struct lanemap *lm = profile_builtin("gfx936", &err);

	assert_non_null(lm);
	assert_int_equal(lanemap_validate(lm, &rep), FS_OK);
	return lm;
}

/* Tiles as the kernel would emit them (decode: per s, t, kv head and key
 * tile; prefill: per s, q head, row tile and key tile), register order. */
static void fake_acc(const struct world *w, const struct lanemap *lm,
		     struct attn_result *r)
{
	const struct fs_case *c = &w->c;
	const struct fs_inputs *in = &w->in;
	const struct lanemap_operand *C = &lm->op[LM_C];
	int M = lm->m, N = lm->n, slots = lm->wave * C->elems, G = in->Hq / in->Hkv;
	int nks = c->k_scale == KSCALE_PER_BLOCK32 ? in->D / 32 : 1;
	size_t cap = 0, i = 0;

	/* decode: a group of G > M q heads takes G / M row tiles */
	int grt = (G + M - 1) / M;

	for (int s = 0; s < in->S; s++) {
		int kt = (c->seqs[s].context + N - 1) / N;
		int rt = (c->seqs[s].tokens + M - 1) / M;

		cap += c->mode == MODE_DECODE
		       ? (size_t)c->seqs[s].tokens * grt * in->Hkv * kt
		       : (size_t)in->Hq * rt * kt;
	}
	r->acc = xalloc(cap * nks * slots, sizeof(int32_t));
	r->acc_tiles = xalloc(cap * ATTN_TILE_COLS, sizeof(int32_t));
	r->n_tiles = cap;
	r->ksteps_in_acc = nks;
	r->wave = lm->wave;
	r->ec = C->elems;
	for (int s = 0; s < in->S; s++) {
		int ctx = c->seqs[s].context, T_s = c->seqs[s].tokens;
		int nh = c->mode == MODE_DECODE ? in->Hkv : in->Hq;
		int nr = c->mode == MODE_DECODE ? T_s * grt : (T_s + M - 1) / M;

		for (int h = 0; h < nh; h++)
		for (int ri = 0; ri < nr; ri++)
		for (int kb = 0; kb < ctx; kb += N, i++) {
			int rb = c->mode == MODE_DECODE ? ri / grt : ri * M;
			int rt = c->mode == MODE_DECODE ? ri % grt : ri;

			r->acc_tiles[i * 5 + 0] = s;
			r->acc_tiles[i * 5 + 1] = h;
			r->acc_tiles[i * 5 + 2] = rb;
			r->acc_tiles[i * 5 + 3] = kb;
			r->acc_tiles[i * 5 + 4] = rt;
			for (int ks = 0; ks < nks; ks++)
			for (int sl = 0; sl < slots; sl++) {
				int row = C->row[sl], j = kb + C->col[sl];
				/* decode row m of row tile rt: q head h*G + (rt*M + m) % G */
				int qh = c->mode == MODE_DECODE ? h * G + (rt * M + row) % G : h;
				int t = c->mode == MODE_DECODE ? rb : rb + row;
				int32_t *a = &r->acc[(i * nks + ks) * slots + sl];

				*a = t < T_s && j < ctx
				     ? ref_acc(c, in, s, t, qh, j, nks > 1 ? ks : -1)
				     : GARBAGE;
			}
		}
	}
	assert_true(i == cap);
}

/* Scores, row stats, out and split-K states rounded to f32 from ref. */
static void fake_from_ref(const struct world *w, const struct lanemap *lm,
			  struct attn_result *r)
{
	const struct fs_case *c = &w->c;
	const struct fs_inputs *in = &w->in;
	size_t rows = (size_t)in->S * in->T * in->Hq;
	struct ref_row rr;

	memset(r, 0, sizeof(*r));
	r->S = in->S, r->T = in->T, r->Hq = in->Hq, r->D = in->D;
	r->MAXCTX = in->MAXCTX;
	r->scores = xalloc(rows * in->MAXCTX, sizeof(float));
	r->out = xalloc(rows * in->D, sizeof(float));
	r->row_max = xalloc(rows, sizeof(float));
	r->row_sum = xalloc(rows, sizeof(float));
	r->nseg = case_segments_max(c);
	if (r->nseg > 1) {
		r->seg_max = xalloc(rows * r->nseg, sizeof(float));
		r->seg_sum = xalloc(rows * r->nseg, sizeof(float));
	}
	for (size_t i = 0; i < rows * in->MAXCTX; i++)
		r->scores[i] = -INFINITY;
	assert_int_equal(ref_row_alloc(&rr, in->MAXCTX, in->D), 0);
	for (int s = 0; s < in->S; s++)
	for (int t = 0; t < c->seqs[s].tokens; t++)
	for (int qh = 0; qh < in->Hq; qh++) {
		size_t row = row_of(w, s, t, qh);
		float *sc = &r->scores[row * in->MAXCTX];
		float m = -INFINITY;
		double sum = 0;

		ref_row_compute(c, in, s, t, qh, &rr);
		for (int j = 0; j < rr.n; j++) {
			sc[j] = (float)rr.score[j];
			m = sc[j] > m ? sc[j] : m;
		}
		for (int j = 0; j < rr.n; j++)
			if (sc[j] > -INFINITY)
				sum += exp((double)sc[j] - m);
		r->row_max[row] = m;
		r->row_sum[row] = (float)sum;
		for (int d = 0; d < in->D; d++)
			r->out[row * in->D + d] = (float)rr.out[d];
		for (int g = 0; g < case_segments_of(c, s) && r->nseg > 1; g++) {
			int lo = g * c->segment, hi = lo + c->segment;
			float sm = -INFINITY;
			double ss = 0;

			hi = hi < rr.n ? hi : rr.n;
			for (int j = lo; j < hi; j++)
				sm = sc[j] > sm ? sc[j] : sm;
			for (int j = lo; j < hi; j++)
				if (sc[j] > -INFINITY)
					ss += exp((double)sc[j] - sm);
			r->seg_max[row * r->nseg + g] = sm;
			r->seg_sum[row * r->nseg + g] = (float)ss;
		}
	}
	ref_row_free(&rr);
	if (lm)
		fake_acc(w, lm, r);
}

static enum fs_rc run(const struct world *w, const struct lanemap *lm,
		      const struct attn_result *r, struct compare_report *rep)
{
	struct fs_err err;
	enum fs_rc rc = compare_run(&w->c, lm, &w->in, r, rep, &err);

	if (rc != FS_OK && rc != FS_MISMATCH)
		fail_msg("compare_run: %d %s", rc, err.msg);
	return rc;
}

/* ---- exact agreement, and one planted error at a time ------------------- */

static void correct_result_matches(void **state)
{
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;
	struct compare_report rep;

	(void)state;
	main_world(&w, &main_spec);
	fake_from_ref(&w, lm, &r);
	assert_int_equal(run(&w, lm, &r, &rep), FS_OK);
	assert_int_equal(rep.mismatches, 0);
	assert_int_equal(rep.rows, 2);
	/* 16 rows x 3 keys; the 13 tail columns hold garbage, unread. */
	assert_int_equal(rep.stat[CMP_ACC].compared, 48);
	assert_int_equal(rep.stat[CMP_SCORES].compared, 2 * 3);
	assert_int_equal(rep.stat[CMP_PROBS].compared, 2 * 3);
	assert_int_equal(rep.stat[CMP_OUT].compared, 2 * 32);
	for (int k = CMP_ACC; k <= CMP_OUT; k++)
		assert_int_equal(rep.stat[k].ran, 1);
	assert_int_equal(rep.stat[CMP_SEG_MAX].ran, 0);
	assert_int_equal(rep.stat[CMP_ACC].first.lane, -1);
	assert_true(rep.stat[CMP_SCORES].max_err_tol <= 1);
	assert_int_equal(rep.n_failed, 0);
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

static void wrong_acc_is_located(void **state)
{
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;
	struct compare_report rep;
	const struct compare_loc *l = &rep.stat[CMP_ACC].first;

	(void)state;
	main_world(&w, &main_spec);
	fake_from_ref(&w, lm, &r);
	assert_int_equal(r.acc[19 * 4 + 0], 3);	/* C[3][1]: head 1, key 1 */
	r.acc[19 * 4 + 0] = 4;
	r.acc[20 * 4 + 3] = 77;	/* C[4][13]: key 13, past the context */
	assert_int_equal(run(&w, lm, &r, &rep), FS_MISMATCH);
	assert_int_equal(rep.mismatches, 1);
	assert_int_equal(rep.stat[CMP_ACC].mismatches, 1);
	assert_int_equal(l->tile, 0);
	assert_int_equal(l->kstep, 0);
	assert_int_equal(l->lane, 19);
	assert_int_equal(l->elem, 0);
	assert_int_equal(l->row, 3);
	assert_int_equal(l->col, 1);
	assert_int_equal(l->s, 0);
	assert_int_equal(l->t, 0);
	assert_int_equal(l->qh, 1);
	assert_int_equal(l->key, 1);
	assert_true(l->got == 4 && l->want == 3 && l->tol == 0);
	assert_true(rep.stat[CMP_ACC].max_abs_err == 1);
	assert_true(isinf(rep.stat[CMP_ACC].max_err_tol));
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

static void wrong_score_is_located(void **state)
{
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;
	struct compare_report rep;
	const struct compare_loc *l = &rep.stat[CMP_SCORES].first;
	float *sc;

	(void)state;
	main_world(&w, &main_spec);
	fake_from_ref(&w, lm, &r);
	sc = &r.scores[row_of(&w, 0, 0, 1) * 3 + 2];
	*sc *= 1 + 0x1p-20f;	/* 4x the tolerance; p moves by 2e-7 only */
	assert_int_equal(run(&w, lm, &r, &rep), FS_MISMATCH);
	assert_int_equal(rep.mismatches, 1);
	assert_int_equal(rep.stat[CMP_SCORES].mismatches, 1);
	assert_int_equal(l->s, 0);
	assert_int_equal(l->t, 0);
	assert_int_equal(l->qh, 1);
	assert_int_equal(l->key, 2);
	assert_int_equal(l->dim, -1);
	assert_int_equal(l->lane, -1);
	assert_true(l->got == *sc);
	assert_close(l->want, 8 * 0.25 * 0.5 / sqrt(32.0));
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

static void wrong_out_is_located(void **state)
{
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;
	struct compare_report rep;
	const struct compare_loc *l = &rep.stat[CMP_OUT].first;

	(void)state;
	main_world(&w, &main_spec);
	fake_from_ref(&w, lm, &r);
	r.out[row_of(&w, 0, 0, 1) * 32 + 5] += 1e-3f;
	assert_int_equal(run(&w, lm, &r, &rep), FS_MISMATCH);
	assert_int_equal(rep.mismatches, 1);
	assert_int_equal(rep.stat[CMP_OUT].mismatches, 1);
	assert_int_equal(l->qh, 1);
	assert_int_equal(l->dim, 5);
	assert_int_equal(l->key, -1);
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

/* NaN anywhere is a mismatch, with an infinite error. */
static void nan_is_a_mismatch(void **state)
{
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;
	struct compare_report rep;

	(void)state;
	main_world(&w, &main_spec);
	fake_from_ref(&w, lm, &r);
	r.out[7] = NAN;
	assert_int_equal(run(&w, lm, &r, &rep), FS_MISMATCH);
	assert_int_equal(rep.stat[CMP_OUT].mismatches, 1);
	assert_int_equal(rep.stat[CMP_OUT].first.dim, 7);
	assert_true(isinf(rep.stat[CMP_OUT].max_abs_err));
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

/*
 * Prefill, two sequences: (0, t 0) at position 1 cannot see key 2;
 * sequence 1 has 2 keys, so its key 2 is past the end. Both must be -inf.
 */
static void masked_and_past_end_scores_are_minus_inf(void **state)
{
	struct spec sp = main_spec;
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;
	struct compare_report rep;
	float *masked, *past;

	(void)state;
	sp.mode = MODE_PREFILL;
	sp.S = 2;
	sp.NB = 5;
	sp.tokens[0] = 2;
	sp.context[1] = 2;
	sp.tokens[1] = 2;
	sp.table[1][0] = 3;
	main_world(&w, &sp);
	fake_from_ref(&w, lm, &r);
	assert_int_equal(run(&w, lm, &r, &rep), FS_OK);
	/* acc: seq 0 2 heads x 2 tokens x 3 keys, seq 1 2 x 2 x 2 */
	assert_int_equal(rep.stat[CMP_ACC].compared, 12 + 8);
	assert_int_equal(rep.stat[CMP_SCORES].compared, 8 * 3);
	masked = &r.scores[row_of(&w, 0, 0, 0) * 3 + 2];
	past = &r.scores[row_of(&w, 1, 1, 1) * 3 + 2];
	assert_true(*masked == -INFINITY && *past == -INFINITY);

	*masked = 0;
	assert_int_equal(run(&w, lm, &r, &rep), FS_MISMATCH);
	assert_int_equal(rep.mismatches, 1);
	assert_int_equal(rep.stat[CMP_SCORES].first.key, 2);
	assert_int_equal(rep.stat[CMP_SCORES].first.t, 0);
	assert_true(rep.stat[CMP_SCORES].first.want == -INFINITY);
	assert_true(isinf(rep.stat[CMP_SCORES].max_abs_err));
	*masked = -INFINITY;

	*past = 0;
	assert_int_equal(run(&w, lm, &r, &rep), FS_MISMATCH);
	assert_int_equal(rep.mismatches, 1);
	assert_int_equal(rep.stat[CMP_SCORES].first.s, 1);
	assert_int_equal(rep.stat[CMP_SCORES].first.t, 1);
	assert_int_equal(rep.stat[CMP_SCORES].first.qh, 1);
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

/* ---- tolerances at their boundary --------------------------------------- */

/*
 * Softmax scale 1/8: head 1, key 2 scores 8 * 0.25 * 0.5 / 8 = 0.125
 * exactly, so tol = 2^-22 * 0.125 = 2^-25 (+1e-30): 2 ulps of f32 above
 * 0.125, 4 ulps below.
 */
static void score_tolerance_boundary(void **state)
{
	static const struct {
		float v;
		int bad;
	} cases[] = {
		{ 0.125f + 0x1p-25f, 0 },	/* err == tol: holds */
		{ 0.125f + 0x1.8p-25f, 1 },	/* one ulp more */
		{ 0.125f - 0x1p-25f, 0 },
		{ 0.125f - 0x1.4p-25f, 1 },
	};
	struct spec sp = main_spec;
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;
	struct compare_report rep;
	float *sc;

	(void)state;
	sp.scale = 0.125;
	main_world(&w, &sp);
	fake_from_ref(&w, lm, &r);
	sc = &r.scores[row_of(&w, 0, 0, 1) * 3 + 2];
	assert_true(*sc == 0.125f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct compare_stat *st = &rep.stat[CMP_SCORES];

		*sc = cases[i].v;
		run(&w, lm, &r, &rep);
		assert_int_equal(rep.mismatches, cases[i].bad);
		if (!cases[i].bad) {
			assert_true(st->max_err_tol <= 1 && st->max_err_tol > 0.99);
			continue;
		}
		assert_true(st->first.tol == 0x1p-25 + 1e-30);
		assert_close(st->max_err_tol,
			     fabs((double)cases[i].v - 0.125) / (0x1p-25 + 1e-30));
	}
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

/*
 * Soft cap 1 and ALiBi (2 heads: head 1's slope 2^-8), scale 0.125: row
 * (0, 0, q head 1), key 0 has the raw score -5 * 0.25 * 1 * 0.125, capped
 * c = tanh(-0.15625), bias b = 2^-8 * (0 - 2); the score is y = c + b and
 * its tolerance 2^-22 |c| + 2^-20 (|c| + |b|) + 1e-30, by hand.
 */
static void soft_cap_alibi_score_tolerance(void **state)
{
	struct spec sp = main_spec;
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;
	struct compare_report rep;
	double c = tanh(-0.15625), b = -2 * 0x1p-8, y = c + b;
	double tol = 0x1p-22 * fabs(c) + 0x1p-20 * (fabs(c) + fabs(b)) + 1e-30;
	float *sc;

	(void)state;
	sp.scale = 0.125;
	main_world(&w, &sp);
	w.c.soft_cap = 1;
	w.c.alibi = 1;
	fake_from_ref(&w, lm, &r);
	sc = &r.scores[row_of(&w, 0, 0, 1) * 3 + 0];
	assert_true(*sc == (float)y);
	assert_int_equal(run(&w, lm, &r, &rep), FS_OK);
	*sc = (float)(y + 0.9 * tol);
	assert_int_equal(run(&w, lm, &r, &rep), FS_OK);
	*sc = (float)(y - 1.1 * tol);
	assert_int_equal(run(&w, lm, &r, &rep), FS_MISMATCH);
	assert_int_equal(rep.stat[CMP_SCORES].mismatches, 1);
	assert_int_equal(rep.stat[CMP_SCORES].first.key, 0);
	assert_close(rep.stat[CMP_SCORES].first.tol, tol);
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

/* out tol = ((16 + 4 sqrt(3)) 2^-24 + 2^-21 max|s|) * out_abs + 1e-30. */
static void out_tolerance_boundary(void **state)
{
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;
	struct compare_report rep;
	struct ref_row rr;
	double tol, want;
	float in, out;

	(void)state;
	main_world(&w, &main_spec);
	fake_from_ref(&w, lm, &r);
	assert_int_equal(ref_row_alloc(&rr, 3, 32), 0);
	ref_row_compute(&w.c, &w.in, 0, 0, 0, &rr);
	tol = ((16 + 4 * sqrt(3.0)) * 0x1p-24 + 0x1p-21 * rr.max_abs_score) *
		      rr.out_abs + 1e-30;
	want = rr.out[0];
	in = (float)(want + 0.75 * tol);
	out = (float)(want + 1.25 * tol);
	assert_true(fabs(in - want) <= tol);
	assert_true(fabs(out - want) > tol);

	r.out[0] = in;
	assert_int_equal(run(&w, lm, &r, &rep), FS_OK);
	r.out[0] = out;
	assert_int_equal(run(&w, lm, &r, &rep), FS_MISMATCH);
	assert_int_equal(rep.mismatches, 1);
	assert_int_equal(rep.stat[CMP_OUT].first.dim, 0);
	assert_close(rep.stat[CMP_OUT].first.tol, tol);
	ref_row_free(&rr);
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

/* Probabilities are rebuilt from the sim's row_max and row_sum. */
static void probs_follow_sim_row_sum(void **state)
{
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;
	struct compare_report rep;

	(void)state;
	main_world(&w, &main_spec);
	fake_from_ref(&w, lm, &r);
	r.row_sum[1] *= 1.001f;
	assert_int_equal(run(&w, lm, &r, &rep), FS_MISMATCH);
	assert_int_equal(rep.mismatches, 3);
	assert_int_equal(rep.stat[CMP_PROBS].mismatches, 3);
	assert_int_equal(rep.stat[CMP_PROBS].first.qh, 1);
	assert_int_equal(rep.stat[CMP_PROBS].first.key, 0);
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

/* ---- split-K and per_block32 -------------------------------------------- */

/* Context 5 in segments of 2: segments {0,1}, {2,3}, {4}. */
static void split_k_states(void **state)
{
	struct spec sp = main_spec;
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;
	struct compare_report rep;

	(void)state;
	sp.context[0] = 5;
	sp.NB = 4;
	sp.table[0][2] = 3;
	main_world(&w, &sp);
	put_k(&w, 0, 4, 0, 0, 9);
	w.c.segment = 2;
	fake_from_ref(&w, lm, &r);
	assert_int_equal(r.nseg, 3);
	assert_int_equal(run(&w, lm, &r, &rep), FS_OK);
	assert_int_equal(rep.stat[CMP_SEG_MAX].compared, 2 * 3);
	assert_int_equal(rep.stat[CMP_SEG_SUM].compared, 2 * 3);

	r.seg_max[1 * 3 + 2] += 1;
	assert_int_equal(run(&w, lm, &r, &rep), FS_MISMATCH);
	assert_int_equal(rep.mismatches, 1);
	assert_int_equal(rep.stat[CMP_SEG_MAX].first.qh, 1);
	assert_int_equal(rep.stat[CMP_SEG_MAX].first.seg, 2);
	r.seg_max[1 * 3 + 2] -= 1;

	r.seg_sum[0 * 3 + 1] *= 1.01f;
	assert_int_equal(run(&w, lm, &r, &rep), FS_MISMATCH);
	assert_int_equal(rep.mismatches, 1);
	assert_int_equal(rep.stat[CMP_SEG_SUM].first.qh, 0);
	assert_int_equal(rep.stat[CMP_SEG_SUM].first.seg, 1);
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

/* A random f16 scale: sign, exponent 2^-4..2^-1, any mantissa. */
static uint16_t rand_f16(uint64_t *seed)
{
	uint64_t x = tu_rand(seed);

	return (uint16_t)(((x & 1) << 15) | ((11 + (x >> 1) % 4) << 10) |
			  ((x >> 8) & 0x3ff));
}

static void per_block32_acc_by_kstep(void **state)
{
	struct spec sp = main_spec;
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;
	struct compare_report rep;
	uint64_t seed = 32;

	(void)state;
	sp.D = 64;
	sp.ks = KSCALE_PER_BLOCK32;
	world_init(&w, &sp);
	for (int qh = 0; qh < 2; qh++) {
		for (int d = 0; d < 64; d++)
			put_q(&w, 0, 0, qh, d, (int)(tu_rand(&seed) % 255) - 127);
		w.in.q_scale[qh] = 0.01f * (float)(1 + qh);
	}
	for (int j = 0; j < 3; j++) {
		for (int d = 0; d < 64; d++)
			put_k(&w, 0, j, 0, d, (int)(tu_rand(&seed) % 255) - 127);
		for (int kb = 0; kb < 2; kb++)
			w.in.k_scale16[s_at(&w, 0, j, 0) * 2 + kb] = rand_f16(&seed);
	}
	fake_from_ref(&w, lm, &r);
	assert_int_equal(r.ksteps_in_acc, 2);
	assert_int_equal(run(&w, lm, &r, &rep), FS_OK);
	assert_int_equal(rep.stat[CMP_ACC].compared, 16 * 3 * 2);

	r.acc[(0 * 2 + 1) * 256 + 19 * 4 + 0] += 1;
	assert_int_equal(run(&w, lm, &r, &rep), FS_MISMATCH);
	assert_int_equal(rep.mismatches, 1);
	assert_int_equal(rep.stat[CMP_ACC].first.kstep, 1);
	assert_int_equal(rep.stat[CMP_ACC].first.lane, 19);
	assert_true(rep.stat[CMP_ACC].first.want ==
		    ref_acc(&w.c, &w.in, 0, 0, 1, 1, 1));
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

/* ---- quantization metrics, by hand --------------------------------------- */

/*
 * Four rows of two keys. Float path: q = k0 = e0, k1 = 0, scale 1, so
 * s_float = (1, 0) in every row: p_float = (e/(1+e), 1/(1+e)).
 * The sim's scores are (a, 0) with a = 0, 1, 2, -1 per q head, its out
 * (p_sim0, p_sim1, 0, ...) against out_float = (p_float0, p_float1, 0...).
 */
static const double metric_a[4] = { 0, 1, 2, -1 };

static void metric_world(struct world *w, struct attn_result *r)
{
	struct spec sp = main_spec;

	sp.Hq = 4;
	sp.context[0] = 2;
	sp.NB = 1;
	sp.table[0][0] = 0;
	sp.scale = 1;
	world_init(w, &sp);
	w->c.buckets = 2;
	for (int qh = 0; qh < 4; qh++)
		w->in.q[row_of(w, 0, 0, qh) * 32] = 1;
	w->in.k[l_at(w, 0, 0, 0)] = 1;
	w->in.v[l_at(w, 0, 0, 0) + 0] = 1;
	w->in.v[l_at(w, 0, 1, 0) + 1] = 1;
	fake_from_ref(w, NULL, r);
	for (int qh = 0; qh < 4; qh++) {
		double p0 = 1 / (1 + exp(-metric_a[qh]));

		r->scores[row_of(w, 0, 0, qh) * 2 + 0] = (float)metric_a[qh];
		r->scores[row_of(w, 0, 0, qh) * 2 + 1] = 0;
		r->out[row_of(w, 0, 0, qh) * 32 + 0] = (float)p0;
		r->out[row_of(w, 0, 0, qh) * 32 + 1] = (float)(1 - p0);
	}
}

static void assert_near(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol))
		fail_msg("got %.17g, want %.17g (tol %g)", got, want, tol);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void metrics_on_two_key_rows(void **state)
{
	struct world w;
	struct attn_result r;
	struct compare_report rep;
	const struct compare_quant *q = &rep.quant;
	double pf0 = exp(1) / (1 + exp(1)), pf1 = 1 - pf0;
	double kl[4], dp2 = 0, dpmax = 0, cmin = 1, csum = 0, klsum = 0;

	(void)state;
	metric_world(&w, &r);
	/* The sim's (unquantized-looking) scores differ from ref's: a mismatch,
	 * but the metrics are about sim vs float. */
	assert_int_equal(run(&w, NULL, &r, &rep), FS_MISMATCH);
	for (int h = 0; h < 4; h++) {
		double ps0 = (float)(1 / (1 + exp(-metric_a[h])));
		double ps1 = (float)(1 - 1 / (1 + exp(-metric_a[h])));
		double p0 = 1 / (1 + exp(-metric_a[h])), p1 = 1 - p0;
		double cs = (ps0 * pf0 + ps1 * pf1) /
			    (sqrt(ps0 * ps0 + ps1 * ps1) * sqrt(pf0 * pf0 + pf1 * pf1));

		kl[h] = pf0 * log(pf0 / p0) + pf1 * log(pf1 / p1);
		klsum += kl[h];
		dp2 += (p0 - pf0) * (p0 - pf0) + (p1 - pf1) * (p1 - pf1);
		dpmax = fmax(dpmax, fmax(fabs(ps0 - pf0), fabs(ps1 - pf1)));
		cmin = fmin(cmin, cs);
		csum += cs;
	}
	qsort(kl, 4, sizeof(double), cmp_dbl);
	assert_int_equal(q->rows, 4);
	assert_int_equal(q->keys, 8);
	assert_near(q->score_max_abs, 2, 0);
	assert_near(q->score_nmse, (1.0 + 0 + 1 + 4) / 4, 1e-15);
	assert_near(q->kld_mean, klsum / 4, 1e-15);
	assert_near(q->kld_median, (kl[1] + kl[2]) / 2, 1e-15);
	assert_near(q->kld_p99, kl[3], 1e-15);	/* ceil(0.99 * 4) - 1 = 3 */
	assert_near(q->top1, 0.75, 0);		/* a = 0 ties: key 0 wins */
	assert_near(q->rms_dp, sqrt(dp2 / 8), 1e-15);
	assert_near(q->out_cos_min, cmin, 1e-15);
	assert_near(q->out_cos_mean, csum / 4, 1e-15);
	assert_near(q->out_max_abs, dpmax, 1e-15);
	assert_int_equal(q->n_buckets, 2);
	assert_int_equal(q->bucket[0].lo, 0);
	assert_int_equal(q->bucket[0].hi, 1);
	assert_int_equal(q->bucket[1].lo, 1);
	assert_int_equal(q->bucket[1].hi, 2);
	assert_int_equal(q->bucket[0].keys, 4);
	assert_near(q->bucket[0].score_max_abs, 2, 0);
	assert_near(q->bucket[1].score_max_abs, 0, 0);
	assert_near(q->bucket[0].rms_dp, sqrt(dp2 / 8), 1e-15);
	assert_near(q->bucket[1].rms_dp, sqrt(dp2 / 8), 1e-15);
	assert_int_equal(rep.n_failed, 0);
	attn_free(&r);
	world_free(&w);
}

static void threshold_failures_say_why(void **state)
{
	struct world w;
	struct attn_result r;
	struct compare_report rep;
	char want[160];

	(void)state;
	metric_world(&w, &r);
	w.c.check.kld_p99_max = 0;
	w.c.check.top1_min = 1;
	w.c.check.score_max_abs_max = 2;	/* equal to the limit: holds */
	w.c.check.out_cosine_min = 0;
	run(&w, NULL, &r, &rep);
	assert_int_equal(rep.n_failed, 2);
	assert_string_equal(rep.failed[0].name, "kld_p99_max");
	snprintf(want, sizeof(want), "kld p99 %.9g > kld_p99_max 0",
		 rep.quant.kld_p99);
	assert_string_equal(rep.failed[0].reason, want);
	assert_string_equal(rep.failed[1].name, "top1_min");
	assert_string_equal(rep.failed[1].reason, "top-1 rate 0.75 < top1_min 1");

	/* Without out, the cosine cannot be measured: that fails too. */
	free(r.out);
	r.out = NULL;
	w.c.check.kld_p99_max = w.c.check.top1_min = NAN;
	w.c.check.out_cosine_min = 0.999;
	run(&w, NULL, &r, &rep);
	assert_int_equal(rep.stat[CMP_OUT].ran, 0);
	assert_true(isnan(rep.quant.out_cos_min));
	assert_int_equal(rep.n_failed, 1);
	assert_string_equal(rep.failed[0].reason,
			    "out cosine not measured, out_cosine_min 0.999");
	attn_free(&r);
	world_free(&w);
}

/* ---- determinism --------------------------------------------------------- */

static float rand_unit(uint64_t *seed)
{
	return (float)((double)(tu_rand(seed) >> 11) * 0x1p-53 * 2 - 1);
}

/* Random values in every used slot, q row and logical tensor. */
static void random_world(struct world *w, const struct spec *sp, uint64_t seed)
{
	struct fs_inputs *in;

	world_init(w, sp);
	in = &w->in;
	for (int s = 0; s < in->S; s++) {
		for (int t = 0; t < w->c.seqs[s].tokens; t++)
			for (int qh = 0; qh < in->Hq; qh++) {
				size_t row = row_of(w, s, t, qh);

				in->q_scale[row] = 0.01f + 0.05f * (1 + rand_unit(&seed));
				for (int d = 0; d < in->D; d++) {
					put_q(w, s, t, qh, d,
					      (int)(tu_rand(&seed) % 255) - 127);
					in->q[row * in->D + d] = rand_unit(&seed);
				}
			}
		for (int j = 0; j < w->c.seqs[s].context; j++)
			for (int g = 0; g < in->Hkv; g++) {
				in->k_scale[s_at(w, s, j, g)] = 0.02f + 0.01f * rand_unit(&seed);
				in->v_scale[s_at(w, s, j, g)] = 0.02f + 0.01f * rand_unit(&seed);
				for (int d = 0; d < in->D; d++) {
					put_k(w, s, j, g, d, (int)(tu_rand(&seed) % 255) - 127);
					put_v(w, s, j, g, d, (int)(tu_rand(&seed) % 255) - 127);
					in->k[l_at(w, s, j, g) + d] = rand_unit(&seed);
					in->v[l_at(w, s, j, g) + d] = rand_unit(&seed);
				}
			}
	}
}

static int same_bits(const void *a, const void *b, size_t n)
{
	return memcmp(a, b, n) == 0;
}

static void assert_same_stat(const struct compare_stat *a,
			     const struct compare_stat *b)
{
	const struct compare_loc *x = &a->first, *y = &b->first;

	assert_int_equal(a->ran, b->ran);
	assert_int_equal(a->compared, b->compared);
	assert_int_equal(a->mismatches, b->mismatches);
	assert_true(same_bits(&a->max_abs_err, &b->max_abs_err, sizeof(double)));
	assert_true(same_bits(&a->max_err_tol, &b->max_err_tol, sizeof(double)));
	assert_true(x->s == y->s && x->t == y->t && x->qh == y->qh &&
		    x->key == y->key && x->dim == y->dim && x->seg == y->seg &&
		    x->tile == y->tile && x->kstep == y->kstep &&
		    x->lane == y->lane && x->elem == y->elem &&
		    x->row == y->row && x->col == y->col);
	assert_true(same_bits(&x->got, &y->got, sizeof(double)));
	assert_true(same_bits(&x->want, &y->want, sizeof(double)));
	assert_true(same_bits(&x->tol, &y->tol, sizeof(double)));
}

static void assert_same_report(const struct compare_report *a,
			       const struct compare_report *b)
{
	const struct compare_quant *p = &a->quant, *q = &b->quant;
	const double pa[] = { p->score_max_abs, p->score_nmse, p->out_cos_min,
			      p->out_cos_mean, p->out_max_abs, p->kld_mean,
			      p->kld_median, p->kld_p99, p->top1, p->rms_dp };
	const double qa[] = { q->score_max_abs, q->score_nmse, q->out_cos_min,
			      q->out_cos_mean, q->out_max_abs, q->kld_mean,
			      q->kld_median, q->kld_p99, q->top1, q->rms_dp };

	assert_int_equal(a->rows, b->rows);
	assert_int_equal(a->mismatches, b->mismatches);
	for (int w = 0; w < CMP_NWHAT; w++)
		assert_same_stat(&a->stat[w], &b->stat[w]);
	assert_int_equal(p->rows, q->rows);
	assert_int_equal(p->keys, q->keys);
	assert_true(same_bits(pa, qa, sizeof(pa)));
	assert_int_equal(p->n_buckets, q->n_buckets);
	for (int i = 0; i < p->n_buckets; i++) {
		assert_int_equal(p->bucket[i].lo, q->bucket[i].lo);
		assert_int_equal(p->bucket[i].hi, q->bucket[i].hi);
		assert_int_equal(p->bucket[i].keys, q->bucket[i].keys);
		assert_true(same_bits(&p->bucket[i].score_max_abs,
				      &q->bucket[i].score_max_abs, sizeof(double)));
		assert_true(same_bits(&p->bucket[i].rms_dp, &q->bucket[i].rms_dp,
				      sizeof(double)));
	}
	assert_int_equal(a->n_failed, b->n_failed);
	for (int i = 0; i < a->n_failed; i++) {
		assert_string_equal(a->failed[i].name, b->failed[i].name);
		assert_string_equal(a->failed[i].reason, b->failed[i].reason);
	}
}

static void same_report_for_1_and_3_threads_one(const struct spec *sp,
						int segment, long want_keys)
{
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;
	struct compare_report one, three;
	size_t rows;

	random_world(&w, sp, 99);
	w.c.segment = segment;
	w.c.buckets = 3;
	w.c.check.kld_mean_max = 0;
	w.c.check.out_cosine_min = 1;
	fake_from_ref(&w, lm, &r);
	rows = (size_t)w.in.S * w.in.T * w.in.Hq;
	/* Errors in several chunks of rows and tiles: "first" must not move. */
	for (size_t i = 3; i < rows; i += rows / 3 + 1) {
		r.scores[i * w.in.MAXCTX] += 1;
		r.out[i * w.in.D + i % w.in.D] += 1;
	}
	for (size_t i = 1; i < r.n_tiles; i += 7)
		r.acc[i * 256 + 40] += 1;
	omp_set_num_threads(1);
	assert_int_equal(run(&w, lm, &r, &one), FS_MISMATCH);
	/* Chunks that share out evenly (the prefill's 10 and the decode's 2
	 * on 2 threads) go as whole chunks; otherwise the rows are shared
	 * out one by one and folded into their chunks (compare.c,
	 * cmp_fold_row): at 3 threads (10 and 2 chunks) and 16. */
	omp_set_num_threads(2);
	assert_int_equal(run(&w, lm, &r, &three), FS_MISMATCH);
	assert_same_report(&one, &three);
	omp_set_num_threads(3);
	assert_int_equal(run(&w, lm, &r, &three), FS_MISMATCH);
	assert_same_report(&one, &three);
	omp_set_num_threads(16);
	assert_int_equal(run(&w, lm, &r, &three), FS_MISMATCH);
	assert_same_report(&one, &three);
	if (want_keys) {	/* no row lost or counted twice in the folds */
		assert_int_equal(one.rows, (long)rows);
		assert_int_equal(one.quant.rows, (long)rows);
		assert_int_equal(one.quant.keys, want_keys);
		assert_int_equal(one.stat[CMP_OUT].compared, (long)rows * w.in.D);
		assert_int_equal(one.stat[CMP_SCORES].compared, (long)rows * w.in.MAXCTX);
	}
	assert_true(one.stat[CMP_ACC].mismatches > 1);
	assert_true(one.stat[CMP_SCORES].mismatches > 1);
	assert_int_equal(one.stat[CMP_SCORES].first.s, 0);
	assert_int_equal(one.stat[CMP_SCORES].first.t, 0);
	assert_int_equal(one.stat[CMP_SCORES].first.qh, 3);
	assert_true(one.n_failed == 2);
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

static void same_report_for_1_and_3_threads(void **state)
{
	/* Prefill: 2 x 20 x 4 = 160 rows (10 chunks), 20 tiles. */
	const struct spec prefill = {
		.mode = MODE_PREFILL, .S = 2, .Hq = 4, .Hkv = 2, .D = 64, .BS = 4,
		.NB = 14, .context = { 30, 16 }, .tokens = { 20, 13 },
		.table = { { 13, 2, 7, 0, 11, 5, 9, 1 }, { 3, 12, 6, 10 } },
		.ks = KSCALE_PER_TOKEN_HEAD, .vd = VDT_INT8,
	};
	/* Decode, split-K in segments of 16: 3 x 8 rows, G = 4. */
	const struct spec decode = {
		.mode = MODE_DECODE, .S = 3, .Hq = 8, .Hkv = 2, .D = 64, .BS = 8,
		.NB = 15, .context = { 37, 50, 9 }, .tokens = { 1, 1, 1 },
		.table = { { 4, 0, 9, 2, 14 }, { 1, 3, 5, 6, 7, 8, 10 }, { 12, 11 } },
		.ks = KSCALE_PER_TOKEN_HEAD, .vd = VDT_INT8,
	};

	/* Long rows (65000 keys): blocks of 30 rows, whole kv groups of 6,
	 * not whole chunks of 16 (compare_block_rows), so chunk 1 (rows
	 * 16-31) is folded from two blocks. */
	const struct spec longrows = {
		.mode = MODE_DECODE, .S = 4, .Hq = 12, .Hkv = 2, .D = 16, .BS = 16384,
		.NB = 17, .context = { 65000, 64000, 65000, 50000 },
		.tokens = { 1, 1, 1, 1 },
		.table = { { 3, 0, 9, 12 }, { 1, 4, 5, 6 }, { 2, 7, 8, 10 }, { 11, 13, 16, 14 } },
		.ks = KSCALE_PER_TOKEN_HEAD, .vd = VDT_INT8,
	};
	int chunks;

	(void)state;
	same_report_for_1_and_3_threads_one(&prefill, 0, 0);
	same_report_for_1_and_3_threads_one(&decode, 16, 0);
	assert_int_equal(compare_block_rows(48, 65000, 6, &chunks), 30);
	assert_int_equal(chunks, 0);
	same_report_for_1_and_3_threads_one(&longrows, 4096,
					    12L * (65000 + 64000 + 65000 + 50000));
}

/* ---- what does not fit is an input error ---------------------------------- */

static void expect_input_error(const struct world *w, const struct lanemap *lm,
			       const struct attn_result *r, const char *part)
{
	struct compare_report rep;
	struct fs_err err;

	assert_int_equal(compare_run(&w->c, lm, &w->in, r, &rep, &err), FS_EINPUT);
	if (!strstr(err.msg, part))
		fail_msg("'%s' does not say '%s'", err.msg, part);
	assert_int_equal(rep.mismatches, 0);
}

static void misfits_are_input_errors(void **state)
{
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;

	(void)state;
	main_world(&w, &main_spec);
	fake_from_ref(&w, lm, &r);
	r.D = 16;
	expect_input_error(&w, lm, &r, "result shape");
	r.D = 32;
	r.acc_tiles[1] = 5;
	expect_input_error(&w, lm, &r, "acc_tiles[0] = (0, 5, 0, 0, 0) is out of range");
	r.acc_tiles[1] = 0;
	r.acc_tiles[4] = 1;	/* G = 2 <= 16 rows: one row tile per kv head */
	expect_input_error(&w, lm, &r, "acc_tiles[0] = (0, 0, 0, 0, 1) is out of range");
	r.acc_tiles[4] = 0;
	r.ksteps_in_acc = 2;
	expect_input_error(&w, lm, &r, "k-steps");
	r.ksteps_in_acc = 1;
	r.wave = 32;
	expect_input_error(&w, lm, &r, "acc holds 32 lanes");
	r.wave = 64;
	expect_input_error(&w, NULL, &r, "need a lane map");
	r.nseg = 2;
	expect_input_error(&w, lm, &r, "split-K");
	r.nseg = 1;
	w.c.q_heads = 3;
	expect_input_error(&w, lm, &r, "inputs do not match the case");
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

/*
 * MQA, 32 q heads over 1 kv head: the group fills two 16-row tiles per
 * kv head, told apart by row_tile. Tile (0, 0, 0, 0, rt 1) row 3 is q
 * head 16 + 3 = 19; the same registers labelled row tile 0 would be q
 * head 3, so swapping two tiles' row_tile must show as acc mismatches.
 */
static void decode_group_of_two_row_tiles(void **state)
{
	const struct spec mqa = {
		.mode = MODE_DECODE, .S = 1, .Hq = 32, .Hkv = 1, .D = 32, .BS = 2,
		.NB = 3, .context = { 3 }, .tokens = { 1 }, .table = { { 2, 0 } },
		.ks = KSCALE_PER_TOKEN_HEAD, .vd = VDT_INT8,
	};
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;
	struct compare_report rep;

	(void)state;
	random_world(&w, &mqa, 9);
	fake_from_ref(&w, lm, &r);
	assert_int_equal(r.n_tiles, 2);
	assert_int_equal(r.acc_tiles[5 + 4], 1);
	/* lane 3 e 0 holds C[3][0]: q head 19 against key 0 */
	assert_int_equal(r.acc[(64 + 3) * 4 + 0], ref_acc(&w.c, &w.in, 0, 0, 19, 0, -1));
	assert_int_equal(run(&w, lm, &r, &rep), FS_OK);
	assert_int_equal(rep.mismatches, 0);
	assert_int_equal(rep.stat[CMP_ACC].compared, 2 * 16 * 3);
	r.acc_tiles[4] = 1;
	r.acc_tiles[5 + 4] = 0;
	assert_int_equal(run(&w, lm, &r, &rep), FS_MISMATCH);
	assert_true(rep.stat[CMP_ACC].mismatches > 0);
	assert_int_equal(rep.stat[CMP_ACC].first.qh, 16);	/* row 0 of tile 0 */
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

static void replica_disagreement_fails(void **state)
{
	struct lanemap *lm = gfx936();
	struct world w;
	struct attn_result r;
	struct compare_report rep;

	(void)state;
	main_world(&w, &main_spec);
	fake_from_ref(&w, lm, &r);
	r.replica_mismatch = 2;
	assert_int_equal(run(&w, lm, &r, &rep), FS_MISMATCH);
	assert_int_equal(rep.mismatches, 0);
	assert_int_equal(rep.replica_mismatch, 2);
	attn_free(&r);
	world_free(&w);
	lanemap_free(lm);
}

static void what_names(void **state)
{
	(void)state;
	assert_string_equal(compare_what_name(CMP_ACC), "acc");
	assert_string_equal(compare_what_name(CMP_SEG_SUM), "seg_sum");
	assert_string_equal(compare_what_name(CMP_NWHAT), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(correct_result_matches),
		cmocka_unit_test(wrong_acc_is_located),
		cmocka_unit_test(wrong_score_is_located),
		cmocka_unit_test(wrong_out_is_located),
		cmocka_unit_test(nan_is_a_mismatch),
		cmocka_unit_test(masked_and_past_end_scores_are_minus_inf),
		cmocka_unit_test(score_tolerance_boundary),
		cmocka_unit_test(soft_cap_alibi_score_tolerance),
		cmocka_unit_test(out_tolerance_boundary),
		cmocka_unit_test(probs_follow_sim_row_sum),
		cmocka_unit_test(split_k_states),
		cmocka_unit_test(per_block32_acc_by_kstep),
		cmocka_unit_test(metrics_on_two_key_rows),
		cmocka_unit_test(threshold_failures_say_why),
		cmocka_unit_test(same_report_for_1_and_3_threads),
		cmocka_unit_test(misfits_are_input_errors),
		cmocka_unit_test(decode_group_of_two_row_tiles),
		cmocka_unit_test(replica_disagreement_fails),
		cmocka_unit_test(what_names),
	};

	/* The largest team first (same_report_for_1_and_3_threads asks for
	 * 16): clang's libomp, growing its hot team past the size it first
	 * had, loses the old team's arrays to LeakSanitizer (make asan
	 * CC=clang); a team made at 16 up front is only ever shrunk. */
	omp_set_num_threads(16);
#pragma omp parallel
	{
	}
	return cmocka_run_group_tests_name("compare", tests, NULL, NULL);
}
