/*
 * test_rows.c - kernel: decode_rows: packed, a kernel that packs a GQA
 * group into its rows without replicating it.
 *
 * Packed, row m of row tile i of kv head g holds q head g*G + 16*i + m
 * while 16*i + m < G; the rows past G are padding the kernel zero-fills,
 * so their acc is 0. The acc is checked here against Q.K computed from
 * the case's own inputs by hand (the gfx936 C map, row = lane % 16,
 * column = lane / 16 + 4 * register, written out below, and the paged
 * cache [NB][Hkv][D/16][BS][16] through the block table), never from
 * sim's row code. Scores and out are those of the replicated run (same
 * math, other rows); the fast executor gives the scalar one's bytes;
 * `diff` on the packed case's own goldens says match, and on a dump with
 * replicated rows says mismatch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/device/qk_tile.h"
#include "../lib/runcase.h"
#include "testutil.h"

static const char *const yaml_fmt =
	"fragsim: 1\nname: rows\nisa: gfx936\nmode: decode\n"
	"model: {q_heads: %d, kv_heads: %d, head_dim: 64}\n"
	"cache: {block_size: 16, placement: shuffled}\n"
	"sequences:\n  - {context: 40}\n%s"
	"data: {seed: 7}\ngolden: all\n";

static void load(struct runcase *r, int hq, int hkv, int packed, enum attn_exec ex)
{
	char text[1024], *path;
	struct fs_err err;

	snprintf(text, sizeof(text), yaml_fmt, hq, hkv,
		 packed ? "kernel: {decode_rows: packed}\n" : "");
	path = tu_write_temp(".yaml", text);
	assert_non_null(path);
	assert_int_equal(runcase_load(path, r, &err), FS_OK);
	unlink(path);
	free(path);
	r->exec = ex;
	assert_int_equal(runcase_exec(r, &err), FS_OK);
	assert_int_equal(runcase_status(r), FS_OK);
}

/* Q.K of q head qh and key j of sequence 0, token 0, from the cache. */
static int32_t dot_by_hand(const struct fs_inputs *in, int qh, int g, int j)
{
	const int8_t *q = &in->q_int8[(size_t)qh * in->D];
	int b = in->block_table[j / in->BS], C = in->D / 16;
	int32_t s = 0;

	for (int d = 0; d < in->D; d++)
		s += q[d] * in->k_cache[((((size_t)b * in->Hkv + g) * C + d / 16) * in->BS +
					 j % in->BS) * 16 + d % 16];
	return s;
}

static void acc_by_hand(int hq, int hkv)
{
	struct runcase r;
	int G = hq / hkv, seen_pad = 0;

	load(&r, hq, hkv, 1, ATTN_EXEC_SCALAR);
	assert_int_equal(r.sim.wave, 64);
	assert_int_equal(r.sim.ec, 4);
	for (size_t i = 0; i < r.sim.n_tiles; i++) {
		const int32_t *tl = &r.sim.acc_tiles[i * ATTN_TILE_COLS];
		int g = tl[1], tb = tl[3], rt = tl[4];

		for (int lane = 0; lane < 64; lane++)
			for (int e = 0; e < 4; e++) {
				int row = lane % 16, col = lane / 16 + 4 * e, local = 16 * rt + row;
				int32_t got = r.sim.acc[(i * 64 + lane) * 4 + e];

				if (tb + col >= 40)
					continue;	/* past the context: not compared */
				if (local >= G) {
					seen_pad++;
					assert_int_equal(got, 0);
				} else {
					assert_int_equal(got, dot_by_hand(&r.in, g * G + local, g,
									  tb + col));
				}
			}
	}
	/* G = 6: 10 padding rows per tile; G = 24: 8 in row tile 1. */
	assert_true(seen_pad > 0);
	runcase_free(&r);
}

static void acc_g6(void **state)
{
	(void)state;
	acc_by_hand(12, 2);
}

static void acc_g24(void **state)
{
	(void)state;
	acc_by_hand(48, 2);
}

static void same_scores_out_and_fast_is_scalar(int hq, int hkv)
{
	struct runcase rep, pk, pkf;
	size_t ns = (size_t)hq * 40, no = (size_t)hq * 64;

	load(&rep, hq, hkv, 0, ATTN_EXEC_SCALAR);
	load(&pk, hq, hkv, 1, ATTN_EXEC_SCALAR);
	load(&pkf, hq, hkv, 1, ATTN_EXEC_AUTO);
	assert_string_not_equal(pkf.sim.exec, "scalar");
	assert_int_equal(rep.sim.MAXCTX, 40);
	assert_memory_equal(rep.sim.scores, pk.sim.scores, ns * sizeof(float));
	assert_memory_equal(rep.sim.out, pk.sim.out, no * sizeof(float));
	/* the rows differ: replicas in one, zero padding in the other */
	assert_int_equal(rep.sim.n_tiles, pk.sim.n_tiles);
	assert_memory_not_equal(rep.sim.acc, pk.sim.acc,
				pk.sim.n_tiles * 256 * sizeof(int32_t));
	assert_int_equal(pkf.sim.n_tiles, pk.sim.n_tiles);
	assert_memory_equal(pkf.sim.acc, pk.sim.acc, pk.sim.n_tiles * 256 * sizeof(int32_t));
	assert_memory_equal(pkf.sim.acc_tiles, pk.sim.acc_tiles,
			    pk.sim.n_tiles * ATTN_TILE_COLS * sizeof(int32_t));
	assert_memory_equal(pkf.sim.scores, pk.sim.scores, ns * sizeof(float));
	assert_memory_equal(pkf.sim.out, pk.sim.out, no * sizeof(float));
	runcase_free(&rep);
	runcase_free(&pk);
	runcase_free(&pkf);
}

static void same_math_g6(void **state)
{
	(void)state;
	same_scores_out_and_fast_is_scalar(12, 2);
}

static void same_math_g24(void **state)
{
	(void)state;
	same_scores_out_and_fast_is_scalar(48, 2);
}

/*
 * tools/device/qk_tile.h with packed_rows: the device header's rows give
 * the packed case's acc (tile by tile, Q.K over its fsq_q and fsq_k),
 * and without packed_rows they do not (its replica rows).
 */
static void qk_tile_follows_packed_rows(void **state)
{
	struct runcase r;
	struct fsq_case c;
	struct fsq_bufs b;
	int32_t tokens = 1, block0 = 0;
	long differ = 0;

	(void)state;
	load(&r, 48, 2, 1, ATTN_EXEC_SCALAR);
	memset(&c, 0, sizeof(c));
	memset(&b, 0, sizeof(b));
	c.S = 1, c.T = 1, c.Hq = 48, c.Hkv = 2, c.D = 64, c.G = 24, c.NB = r.in.NB;
	c.BS = 16, c.MAXB = r.in.MAXB, c.MAXCTX = 40, c.rows = 16;
	b.q_int8 = r.in.q_int8, b.k_cache = r.in.k_cache, b.block_table = r.in.block_table;
	b.context_lens = r.in.context_lens, b.q_pos = r.in.q_pos, b.tokens = &tokens;
	b.seq_block0 = &block0, b.tiles = r.sim.acc_tiles;
	for (int packed = 1; packed >= 0; packed--) {
		c.packed_rows = packed;
		for (size_t i = 0; i < r.sim.n_tiles; i++)
			for (int lane = 0; lane < 64; lane++)
				for (int e = 0; e < 4; e++) {
					int row = lane % 16, col = lane / 16 + 4 * e;
					struct fsq_row w = fsq_row_of(&c, &b, (int)i, row);
					int key = r.sim.acc_tiles[i * ATTN_TILE_COLS + 3] + col;
					int32_t s = 0;

					if (key >= 40)
						continue;
					for (int d = 0; d < 64; d++)
						s += fsq_q(&c, &b, &w, d) * fsq_k(&c, &b, 0, w.g, key, d);
					if (packed)
						assert_int_equal(s, r.sim.acc[(i * 64 + lane) * 4 + e]);
					else
						differ += s != r.sim.acc[(i * 64 + lane) * 4 + e];
				}
	}
	assert_true(differ > 0);
	runcase_free(&r);
}

/* diff follows the case's row mapping: its own goldens match, a dump of
 * replicated rows does not (the padding rows' acc is not 0). */
static void diff_follows_rows(void **state)
{
	const char *pk = "cases/edge/decode-packed-rows-48-2.yaml";
	const char *rep = "cases/edge/decode-gqa-48-2.yaml";
	char dir[64];
	struct run_result x;

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "rows"));
	x = tu_run("run %s --out %s/p", pk, dir);
	assert_int_equal(x.status, 0);
	tu_free(&x);
	x = tu_run("run %s --out %s/r", rep, dir);
	assert_int_equal(x.status, 0);
	tu_free(&x);
	x = tu_run("diff %s --dump %s/p", pk, dir);
	assert_int_equal(x.status, 0);
	tu_free(&x);
	x = tu_run("diff %s --dump %s/r", pk, dir);
	assert_int_equal(x.status, 1);
	assert_non_null(strstr(x.out, "acc "));
	assert_non_null(strstr(x.out, "q head -1"));	/* a padding row */
	assert_non_null(strstr(x.out, "diagnosis: matches kernel layout "
				      "decode_rows=replicated exactly"));
	tu_free(&x);
	/* and the other way: a packed dump against the replicated case */
	x = tu_run("diff %s --dump %s/p", rep, dir);
	assert_int_equal(x.status, 1);
	assert_non_null(strstr(x.out, "diagnosis: matches kernel layout "
				      "decode_rows=packed exactly"));
	tu_free(&x);
	x = tu_run("check %s", pk);
	assert_int_equal(x.status, 0);
	tu_free(&x);
	assert_int_equal(tu_scratch_free(dir), 0);
}

static void bad_values(void **state)
{
	struct run_result x;
	char *p;

	(void)state;
	p = tu_write_temp(".yaml", "fragsim: 1\nname: x\nmode: decode\n"
			  "model: {q_heads: 4, kv_heads: 2, head_dim: 64}\n"
			  "sequences:\n  - {context: 4}\nkernel: {decode_rows: packd}\n");
	x = tu_run("check %s", p);
	assert_int_equal(x.status, 2);
	assert_non_null(strstr(x.out, "kernel.decode_rows: must be one of replicated, packed"));
	tu_free(&x);
	unlink(p);
	free(p);
	p = tu_write_temp(".yaml", "fragsim: 1\nname: x\nmode: prefill\n"
			  "model: {q_heads: 4, kv_heads: 2, head_dim: 64}\n"
			  "sequences:\n  - {history: 0, chunk: 4}\nkernel: {decode_rows: packed}\n");
	x = tu_run("check %s", p);
	assert_int_equal(x.status, 2);
	assert_non_null(strstr(x.out, "decode only"));
	tu_free(&x);
	unlink(p);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(acc_g6),
		cmocka_unit_test(acc_g24),
		cmocka_unit_test(same_math_g6),
		cmocka_unit_test(same_math_g24),
		cmocka_unit_test(qk_tile_follows_packed_rows),
		cmocka_unit_test(diff_follows_rows),
		cmocka_unit_test(bad_values),
	};

	return cmocka_run_group_tests_name("rows", tests, NULL, NULL);
}
