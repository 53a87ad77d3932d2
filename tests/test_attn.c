/*
 * test_attn.c - the emulated kernel's own steps, against independent
 * arithmetic written here:
 *   - the transpose: accumulator (lane, e) of a gfx936 tile lands at key
 *     token_base + lane/16 + 4e of row lane%16 (the published layout,
 *     written out here, not read from the profile), with its score
 *     recovered there as float(acc) * sQ * sK * scale;
 *   - the split-K merge against a one-pass softmax: the same case run with
 *     segments of 96 keys and with none gives outputs equal within f32
 *     rounding, and both equal a one-pass softmax computed here in double
 *     from the sim's scores;
 *   - the merge keeps NaN: a row that NaN reached gives NaN, only a row
 *     that sees nothing gives 0 (hand-worked segment states);
 *   - the paged-K offset through the block table (attn_block,
 *     attn_k_offset) against addresses worked out by hand;
 *   - soft cap and ALiBi: logit_tanhf against libm's double tanh, the
 *     slopes against the ALiBi paper's values for 8, 12 and 24 heads,
 *     and a case's scores against cap * tanh(s / cap) + slope * (j - q_pos)
 *     computed here in double from the same case run without them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>

#include "../sim/attn/attn_int.h"
#include "../sim/common/fexp.h"
#include "../sim/attn/logit.h"
#include "../sim/attn/tile_fast.h"
#include "../lib/runcase.h"
#include "testutil.h"

static void load_run(const char *rel, struct runcase *r)
{
	char path[1024];
	struct fs_err err;

	snprintf(path, sizeof(path), "%s/%s", FRAGSIM_SRC, rel);
	assert_int_equal(runcase_load(path, r, &err), FS_OK);
	assert_int_equal(runcase_exec(r, &err), FS_OK);
	assert_int_equal(runcase_status(r), FS_OK);
}

static void transpose_follows_published_layout(void **state)
{
	struct runcase r;
	long checked = 0;

	(void)state;
	load_run("cases/qwen35-27b/decode-17.yaml", &r);
	for (size_t tile = 0; tile < r.sim.n_tiles; tile++) {
		const int32_t *tt = &r.sim.acc_tiles[tile * ATTN_TILE_COLS];
		int h = tt[1], t = tt[2], kb = tt[3];

		for (int lane = 0; lane < 64; lane++) {
			for (int e = 0; e < 4; e++) {
				int row = lane % 16, col = lane / 16 + 4 * e, key = kb + col;
				int qh = h * 6 + row % 6, blk, slot;
				int32_t acc = r.sim.acc[(tile * 64 + lane) * 4 + e];
				float sq, sk, want;
				size_t ri;

				if (key >= 17 || row >= 6)
					continue;	/* tail; replica rows */
				blk = r.in.block_table[key / 16];
				slot = key % 16;
				ri = ((size_t)t * 24 + qh);
				sq = r.in.q_scale[ri];
				sk = r.in.k_scale[(blk * 16 + slot) * 4 + h];
				want = (float)acc * sq * sk * (float)r.c.softmax_scale;
				assert_true(r.sim.scores[ri * r.sim.MAXCTX + key] == want);
				checked++;
			}
		}
	}
	assert_int_equal(checked, 4 * 6 * 17);	/* kv heads x q heads x keys */
	runcase_free(&r);
}

static void splitk_merge_equals_one_pass(void **state)
{
	const char *body =
		"fragsim: 1\nname: merge\nsequences:\n  - {context: 1000}\n"
		"data: {seed: 3}\nsplit_k: {segment: %d}\n";
	char text[512], *p1, *p2;
	struct runcase a, b;
	struct fs_err err;
	size_t rows;

	(void)state;
	snprintf(text, sizeof(text), body, 0);
	p1 = tu_write_temp(".yaml", text);
	snprintf(text, sizeof(text), body, 96);
	p2 = tu_write_temp(".yaml", text);
	assert_int_equal(runcase_load(p1, &a, &err), FS_OK);
	assert_int_equal(runcase_exec(&a, &err), FS_OK);
	assert_int_equal(runcase_load(p2, &b, &err), FS_OK);
	assert_int_equal(runcase_exec(&b, &err), FS_OK);
	assert_int_equal(b.sim.nseg, 11);
	rows = (size_t)a.sim.S * a.sim.T * a.sim.Hq;
	for (size_t ri = 0; ri < rows; ri++) {
		const float *sc = &a.sim.scores[ri * a.sim.MAXCTX];
		int qh = (int)(ri % 24), g = qh / 6;
		double mx = -INFINITY, l = 0.0;

		/* Scores do not depend on segmentation. */
		assert_memory_equal(sc, &b.sim.scores[ri * b.sim.MAXCTX],
				    1000 * sizeof(float));
		for (int j = 0; j < 1000; j++)
			mx = sc[j] > mx ? sc[j] : mx;
		for (int j = 0; j < 1000; j++)
			l += exp((double)sc[j] - mx);
		for (int d = 0; d < 256; d++) {
			double o = 0.0, scale = 0.0;
			float oa = a.sim.out[ri * 256 + d], ob = b.sim.out[ri * 256 + d];

			for (int j = 0; j < 1000; j++) {
				int blk = a.in.block_table[j / 16], slot = j % 16;
				double v = (double)a.in.v_cache_i8[((blk * 4 + g) * 256 + d) * 16 + slot] *
					   a.in.v_scale[(blk * 16 + slot) * 4 + g];
				double pj = exp((double)sc[j] - mx) / l;

				o += pj * v;
				scale += pj * fabs(v);
			}
			/* f32 online softmax vs double one pass: a few hundred
			 * roundings of 2^-24, as ref/compare.c bounds them. */
			if (fabs(oa - o) > 1e-4 * scale || fabs(ob - o) > 1e-4 * scale)
				fail_msg("row %zu dim %d: one pass %.9g, no split %.9g, split %.9g",
					 ri, d, o, oa, ob);
		}
	}
	runcase_free(&a);
	runcase_free(&b);
	unlink(p1);
	unlink(p2);
	free(p1);
	free(p2);
}

/*
 * attn_merge_row on segment states written by hand (D = 2). Both
 * executors merge through it (the fast path in attn_fast_merge, with its
 * table's merge step for the loop over d).
 *   row 0: segment 0 m 1, l 2, o = 2 * (3, -1); segment 1 sees nothing
 *          (m -inf, l 0): out (3, -1), row_sum 2, row_max 1
 *   row 1: segment 1 was reached by a NaN (l and o NaN): out NaN, as an
 *          unguarded kernel's o / l gives, not 0
 *   row 2: no segment sees anything: out exactly (0, 0), row_sum 0
 */
static void merge_keeps_nan(void **state)
{
	struct fs_case c;
	struct attn_result r;
	struct kern k;
	struct unit u;
	struct row w;
	float out[2], rmax, rsum;
	float o0[2] = { 6, -2 }, onan[2] = { NAN, NAN }, oz[2] = { 0, 0 };
	struct rstate a = { 1, 2, o0 }, e = { -INFINITY, 0, oz };
	struct rstate p = { 0.5f, NAN, onan };
	struct rstate *segs[2];

	(void)state;
	memset(&c, 0, sizeof(c));
	memset(&r, 0, sizeof(r));
	memset(&k, 0, sizeof(k));
	memset(&u, 0, sizeof(u));
	memset(&w, 0, sizeof(w));
	kernel_default(&c.kernel);
	r.out = out, r.row_max = &rmax, r.row_sum = &rsum;
	k.c = &c, k.kn = &c.kernel, k.r = &r, k.T = 1, k.Hq = 1, k.D = 2;
	w.valid = 1;

	/* the plain loop (scalar executor), then the fast path's step */
	for (int i = 0; i < 2; i++) {
		attn_merge_fn step = i ? tile_ops_best()->merge : NULL;

		segs[0] = &a, segs[1] = &e;
		attn_merge_row(&k, &u, &w, segs, 2, step);
		assert_true(out[0] == 3 && out[1] == -1 && rsum == 2 && rmax == 1);

		segs[1] = &p;
		attn_merge_row(&k, &u, &w, segs, 2, step);
		assert_true(isnan(out[0]) && isnan(out[1]) && isnan(rsum));

		segs[0] = &e, segs[1] = &e;
		attn_merge_row(&k, &u, &w, segs, 2, step);
		assert_true(out[0] == 0 && out[1] == 0 && rsum == 0 && rmax == -INFINITY);
		assert_false(signbit(out[0]) || signbit(out[1]));
	}
}

/*
 * PV and the l update are fused multiply-adds, as HIP and CUDA contract
 * a * b + c (0.2.0). One tile of 16 keys, one segment, so by the spec's
 * definition (docs/design.md 1.4), written out here from the sim's
 * scores and the V cache, per row and dim:
 *   p_j = fs_expf(s_j - max), v_j = (float)V8 * v_scale (one rounding)
 *   o   = fmaf(p_15, v_15, ... fmaf(p_0, v_0, 0))      keys in order
 *   out = fmaf(o / l, l, 0) / l                        the merge, l = row_sum
 * Every executor must give these bytes; and some element must differ from
 * the unfused o + p * v, or the case would not tell the two apart.
 */
static void pv_is_fused(void **state)
{
	static const enum attn_exec exec[] = { ATTN_EXEC_SCALAR, ATTN_EXEC_AUTO };
	char *path = tu_write_temp(".yaml", "fragsim: 1\nname: fused\nsequences:\n"
				   "  - {context: 16}\ndata: {seed: 5}\n");
	long differ = 0;

	(void)state;
	for (int e = 0; e < 2; e++) {
		struct runcase a;
		struct fs_err err;

		assert_int_equal(runcase_load(path, &a, &err), FS_OK);
		a.exec = exec[e];
		assert_int_equal(runcase_exec(&a, &err), FS_OK);
		for (int ri = 0; ri < 24; ri++) {
			const float *sc = &a.sim.scores[(size_t)ri * a.sim.MAXCTX];
			int g = ri / 6, blk = a.in.block_table[0];
			float mx = -INFINITY, l = a.sim.row_sum[ri];

			for (int j = 0; j < 16; j++)
				mx = sc[j] > mx ? sc[j] : mx;
			for (int d = 0; d < 256; d++) {
				float o = 0.0f, u = 0.0f, want, unfused;

				for (int j = 0; j < 16; j++) {
					float pj = fs_expf(sc[j] - mx);
					float v = (float)a.in.v_cache_i8[((size_t)(blk * 4 + g) * 256 + d) * 16 + j] *
						  a.in.v_scale[(blk * 16 + j) * 4 + g];

					o = fmaf(pj, v, o);
					u = u + pj * v;
				}
				want = fmaf(o / l, l, 0.0f) / l;
				unfused = fmaf(u / l, l, 0.0f) / l;
				differ += tu_f32_bits(want) != tu_f32_bits(unfused);
				if (tu_f32_bits(a.sim.out[ri * 256 + d]) != tu_f32_bits(want))
					fail_msg("%s: row %d dim %d: out %.9g, fused spec %.9g", a.sim.exec,
						 ri, d, a.sim.out[ri * 256 + d], want);
			}
		}
		runcase_free(&a);
	}
	assert_true(differ > 100);
	unlink(path);
	free(path);
}

/*
 * The paged-K offset (attn_block, then attn_k_offset) against addresses
 * worked out by hand. k_cache is [NB][Hkv][D/16][BS][16]; here Hkv 4,
 * D 256 (16 chunks), BS 16, so one (block, head) is 16 * 16 * 16 = 4096
 * bytes and one block 16384. Sequence 0's block table is {5, 2, 9}.
 *   key 0,  head 0, dim 0:   block 5, slot 0:  5 * 16384           = 81920
 *   key 15, head 3, dim 255: block 5, the last byte of head 3,
 *                            (5 * 4 + 4) * 4096 - 1                = 98303
 *   key 16, head 1, dim 17:  block 2, slot 0, chunk 1, byte 1:
 *                            (2*4 + 1) * 4096 + 1 * 256 + 0 * 16 + 1 = 37121
 *   key 37, head 2, dim 100: block 9, slot 5, chunk 6, byte 4:
 *                            (9*4 + 2) * 4096 + 6 * 256 + 5 * 16 + 4
 *                            = 155648 + 1536 + 80 + 4              = 157268
 * With D 80 (5 chunks; one (block, head) 5 * 16 * 16 = 1280 bytes):
 *   key 37, head 2, dim 79:  block 9, slot 5, chunk 4, byte 15:
 *                            (9*4 + 2) * 1280 + 4 * 256 + 5 * 16 + 15
 *                            = 48640 + 1024 + 80 + 15              = 49759
 * A key past the table (key 48: entry 3 of 3) has no block: -1.
 */
static void paged_k_offset_by_hand(void **state)
{
	struct fs_case c;
	struct fs_inputs in;
	struct kern k;
	int32_t table[3] = { 5, 2, 9 };

	(void)state;
	memset(&c, 0, sizeof(c));
	memset(&in, 0, sizeof(in));
	memset(&k, 0, sizeof(k));
	kernel_default(&c.kernel);
	in.block_table = table, in.NB = 12, in.MAXB = 3;
	k.c = &c, k.kn = &c.kernel, k.in = &in;
	k.Hkv = 4, k.D = 256, k.BS = 16, k.MAXB = 3;
	k.KBS = 16;	/* the block size the kernel's arithmetic uses */
	assert_int_equal(attn_k_offset(&k, attn_block(&k, 0, 0), 0, 0, 0), 81920);
	assert_int_equal(attn_k_offset(&k, attn_block(&k, 0, 15), 3, 15, 255), 98303);
	assert_int_equal(attn_k_offset(&k, attn_block(&k, 0, 16), 1, 16, 17), 37121);
	assert_int_equal(attn_k_offset(&k, attn_block(&k, 0, 37), 2, 37, 100), 157268);
	assert_int_equal(attn_block(&k, 0, 48), -1);
	k.D = 80;
	assert_int_equal(attn_k_offset(&k, attn_block(&k, 0, 37), 2, 37, 79), 49759);
	/* cache.block_stride 32768 (two dense blocks of 4 x 256 x 16): block 5
	 * starts at 5 * 32768 = 163840, block 9's key 37 at 9 * 32768 + (2 *
	 * 16 + 6) * 256 + 5 * 16 + 4 = 304724; block_offset dense ignores it */
	k.D = 256;
	in.BSTR = 32768;
	assert_int_equal(attn_k_offset(&k, attn_block(&k, 0, 0), 0, 0, 0), 163840);
	assert_int_equal(attn_k_offset(&k, attn_block(&k, 0, 37), 2, 37, 100), 304724);
	c.kernel.block_offset = KBOFF_DENSE;
	assert_int_equal(attn_k_offset(&k, attn_block(&k, 0, 0), 0, 0, 0), 81920);
	assert_int_equal(attn_k_offset(&k, attn_block(&k, 0, 37), 2, 37, 100), 157268);
}

/*
 * The shipped tail_mask mutation (1000 keys, 1000 % 16 = 8): the kernel
 * unmasks poison slots of the last block, whose K scale is NaN, so each
 * of the 24 rows gets a NaN score, a NaN softmax sum and, through the
 * merge, a NaN output in every dimension (docs/bug-classes.md).
 */
static void poison_read_gives_nan_rows(void **state)
{
	struct runcase r;
	struct fs_err err;
	char path[1024];

	(void)state;
	snprintf(path, sizeof(path), "%s/cases/mutations/tail-mask-contiguous.yaml",
		 FRAGSIM_SRC);
	assert_int_equal(runcase_load(path, &r, &err), FS_OK);
	assert_int_equal(runcase_exec(&r, &err), FS_OK);
	for (int i = 0; i < 24 * 256; i++)
		if (!isnan(r.sim.out[i]))
			fail_msg("out[%d] = %g, want NaN", i, (double)r.sim.out[i]);
	runcase_free(&r);
}

static void tanh_is_libm_tanh_rounded(void **state)
{
	uint64_t seed = 7;
	long off = 0;

	(void)state;
	assert_true(tu_f32_bits(logit_tanhf(0.5f)) == tu_f32_bits(0x1.d9353ep-2f));
	assert_true(logit_tanhf(0.0f) == 0 && !signbit(logit_tanhf(0.0f)));
	assert_true(logit_tanhf(-0.0f) == 0 && signbit(logit_tanhf(-0.0f)));
	assert_true(logit_tanhf(INFINITY) == 1 && logit_tanhf(-INFINITY) == -1);
	assert_true(logit_tanhf(20.0f) == 1 && logit_tanhf(-9.5f) == -1);
	assert_true(isnan(logit_tanhf(NAN)));
	assert_true(logit_tanhf(1e-30f) == 1e-30f);
	for (long i = 0; i < 3000000; i++) {
		/* A grid over [-12, 12], then random bit patterns. */
		float x = i < 2400000 ? (float)((i - 1200000) * 1e-5) :
			  tu_f32_from_bits((uint32_t)tu_rand(&seed));
		double t = tanh((double)x);
		float got = logit_tanhf(x), want = (float)t;

		if (x != x)
			continue;
		if (got == want)
			continue;
		/* Only an input whose tanh lies within 2^-40 relative of a
		 * float midpoint may round the other way. */
		if (fabs((double)got - t) > 0.5 * fabs((double)got - (double)want) *
						(1 + 0x1p-16))
			fail_msg("tanh(%a): %a, libm %a rounds to %a", (double)x,
				 (double)got, t, (double)want);
		off++;
	}
	assert_true(off < 10);
}

/* The ALiBi paper's slopes (its get_slopes), written out. */
static void alibi_slopes_published(void **state)
{
	static const double h12[12] = {
		0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125,
		0.00390625, 0.7071067811865476, 0.3535533905932738,
		0.1767766952966369, 0.08838834764831845,
	};
	static const double h24[24] = {
		0.7071067811865476, 0.5, 0.3535533905932738, 0.25,
		0.1767766952966369, 0.125, 0.08838834764831845, 0.0625,
		0.04419417382415922, 0.03125, 0.02209708691207961, 0.015625,
		0.011048543456039806, 0.0078125, 0.005524271728019903,
		0.00390625, 0.8408964152537145, 0.5946035575013605,
		0.42044820762685725, 0.29730177875068026, 0.21022410381342863,
		0.14865088937534013, 0.10511205190671431, 0.07432544468767006,
	};

	(void)state;
	for (int h = 0; h < 8; h++)
		assert_true(logit_alibi_slope(h, 8) == (float)ldexp(1, -(h + 1)));
	for (int h = 0; h < 12; h++)
		assert_true(logit_alibi_slope(h, 12) == (float)h12[h]);
	for (int h = 0; h < 24; h++)
		assert_true(logit_alibi_slope(h, 24) == (float)h24[h]);
	assert_true(logit_alibi_slope(0, 1) == 1.0f / 256);
	assert_true(logit_alibi_slope(2, 3) == 0.25f);	/* 4 heads: 2^-2, 2^-4, ... at odd 1 */
}

/*
 * A case with soft cap 2 and ALiBi over 12 q heads against the same case
 * without them: every visible score must be 2 tanh(s / 2) + slope (j -
 * q_pos) of the plain case's score s, within the f32 steps' rounding
 * (ref/compare.c's 2^-20 (|c| + |b|)); masked keys stay -inf.
 */
static void scores_get_soft_cap_and_alibi(void **state)
{
	static const double slope[12] = {
		0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125,
		0.00390625, 0.7071067811865476, 0.3535533905932738,
		0.1767766952966369, 0.08838834764831845,
	};
	const char *body =
		"fragsim: 1\nname: logit\nmodel: {q_heads: 12, kv_heads: 2, %s}\n"
		"sequences:\n  - {context: 70, tokens: 3}\ndata: {seed: 9, q: {scale: 3.0}}\n"
		"split_k: {segment: 32}\n";
	char text[512], *p1, *p2;
	struct runcase a, b;
	struct fs_err err;
	long capped = 0;

	(void)state;
	snprintf(text, sizeof(text), body, "head_dim: 64");
	p1 = tu_write_temp(".yaml", text);
	snprintf(text, sizeof(text), body, "head_dim: 64, soft_cap: 2.0, alibi: true");
	p2 = tu_write_temp(".yaml", text);
	assert_int_equal(runcase_load(p1, &a, &err), FS_OK);
	assert_int_equal(runcase_exec(&a, &err), FS_OK);
	assert_int_equal(runcase_load(p2, &b, &err), FS_OK);
	assert_int_equal(runcase_exec(&b, &err), FS_OK);
	assert_int_equal(runcase_status(&b), FS_OK);
	for (int t = 0; t < 3; t++)
		for (int qh = 0; qh < 12; qh++) {
			size_t ri = (size_t)t * 12 + qh;
			int qpos = 67 + t;

			for (int j = 0; j < 70; j++) {
				float s = a.sim.scores[ri * 70 + j], got = b.sim.scores[ri * 70 + j];
				double cs = 2 * tanh(s / 2.0), bias = slope[qh] * (j - qpos);

				if (j > qpos) {
					assert_true(s == -INFINITY && got == -INFINITY);
					continue;
				}
				capped += fabs(s) > 2;
				if (fabs(got - (cs + bias)) > 0x1p-20 * (fabs(cs) + fabs(bias)))
					fail_msg("t %d q head %d key %d: %.9g, want %.9g", t, qh, j,
						 (double)got, cs + bias);
			}
		}
	assert_true(capped > 100);	/* the cap did bite */
	runcase_free(&a);
	runcase_free(&b);
	unlink(p1);
	unlink(p2);
	free(p1);
	free(p2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(transpose_follows_published_layout),
		cmocka_unit_test(splitk_merge_equals_one_pass),
		cmocka_unit_test(merge_keeps_nan),
		cmocka_unit_test(pv_is_fused),
		cmocka_unit_test(paged_k_offset_by_hand),
		cmocka_unit_test(poison_read_gives_nan_rows),
		cmocka_unit_test(tanh_is_libm_tanh_rounded),
		cmocka_unit_test(alibi_slopes_published),
		cmocka_unit_test(scores_get_soft_cap_and_alibi),
	};

	return cmocka_run_group_tests_name("attn", tests, NULL, NULL);
}
