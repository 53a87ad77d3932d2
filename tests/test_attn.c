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
 *     from the sim's scores.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>

#include "../tools/runcase.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(transpose_follows_published_layout),
		cmocka_unit_test(splitk_merge_equals_one_pass),
	};

	return cmocka_run_group_tests_name("attn", tests, NULL, NULL);
}
