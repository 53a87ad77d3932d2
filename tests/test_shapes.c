/*
 * test_shapes.c - shapes and inputs that used to be refused, or reported
 * as kernel bugs when they were not, through the fragsim binary:
 *   - a C map holding each entry twice: read once, the case matches;
 *   - a u8 operand, and Q/K/V past f32's range: exit 2, naming them;
 *   - sequences of context 0 (decode) and chunk 0 (prefill): no tiles,
 *     output rows exactly 0, as the reference says;
 *   - head_dim 80 and 112: the last K-step zero-padded, acc exact;
 *   - decode groups of 32 and 24 q heads: two row tiles per kv head,
 *     told apart by acc_tiles' row_tile, diffed down to the register.
 * Expected values are worked by hand from the published gfx936 layout
 * (C row = lane % 16, col = lane / 16 + 4 * reg), or come from the
 * reference through `run`'s check.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../lib/npy.h"
#include "testutil.h"

#define TMP "/tmp/fragsim-shapes"	/* this test only */

static void expect_run(const char *args, int status, const char *in_err)
{
	struct run_result r = tu_run("%s", args);

	if (r.status != status || (in_err && !strstr(r.err, in_err)))
		fail_msg("%s: exit %d (want %d)\nstdout: %s\nstderr: %s\nwant in stderr: %s",
			 args, r.status, status, r.out, r.err, in_err ? in_err : "");
	tu_free(&r);
}

/* Every .npy of two golden directories, byte for byte. */
static void same_npy(const char *a, const char *b)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "cd %s && for f in *.npy; do cmp -s $f %s/$f || exit 1; done", a, b);
	assert_int_equal(system(cmd), 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void setup_dir(void)
{
	assert_int_equal(system("rm -rf " TMP " && mkdir -p " TMP), 0);
}

/* ---- 6a: a C entry held twice ------------------------------------------ */

/*
 * gfx936 with 8 C registers per lane, e and e + 4 holding the same entry.
 * Before, each replica's p went into the softmax sum: l doubled, every
 * probability and output halved, a "kernel bug" on a correct kernel.
 */
static void replicated_c_is_read_once(void **state)
{
	(void)state;
	setup_dir();
	write_file(TMP "/c-twice.yaml",
		   "fragsim_profile: 1\nname: gfx936-c-twice\n"
		   "instruction: v_mmac_i32_16x16x32_i8\n"
		   "wave: 64\nm: 16\nn: 16\nk: 32\n"
		   "a: {type: i8, elements: 8, row: \"lane % 16\", col: \"8 * (lane / 16) + e\"}\n"
		   "b: {type: i8, elements: 8, row: \"8 * (lane / 16) + e\", col: \"lane % 16\"}\n"
		   "c: {type: i32, elements: 8, replicas: 2, row: \"lane % 16\", "
		   "col: \"lane / 16 + 4 * (e % 4)\"}\n");
	write_file(TMP "/decode.yaml",
		   "fragsim: 1\nname: c-twice-decode\nisa: c-twice.yaml\n"
		   "model: {q_heads: 8, kv_heads: 2, head_dim: 64}\n"
		   "sequences:\n  - {context: 40}\n  - {context: 7, tokens: 2}\n"
		   "split_k: {segment: 16}\ngolden: all\n");
	write_file(TMP "/prefill.yaml",
		   "fragsim: 1\nname: c-twice-prefill\nisa: c-twice.yaml\nmode: prefill\n"
		   "model: {q_heads: 4, kv_heads: 2, head_dim: 64}\n"
		   "sequences:\n  - {history: 20, chunk: 20}\ngolden: all\n");
	expect_run("run " TMP "/decode.yaml --exec scalar --out " TMP "/s", 0, NULL);
	expect_run("run " TMP "/decode.yaml --out " TMP "/f", 0, NULL);
	same_npy(TMP "/s", TMP "/f");
	expect_run("run " TMP "/prefill.yaml --exec scalar", 0, NULL);
	expect_run("run " TMP "/prefill.yaml", 0, NULL);
}

/* ---- 6b: u8 operands ----------------------------------------------------- */

/*
 * Before, scalar read the u8 B as 0..255 (a mismatch, "kernel bug") while
 * the fast path multiplied signed (a match): two answers for one case.
 */
static void u8_operand_is_refused(void **state)
{
	(void)state;
	setup_dir();
	write_file(TMP "/u8.yaml",
		   "fragsim_profile: 1\nname: gfx936-u8\n"
		   "instruction: v_mmac_i32_16x16x32_iu8\n"
		   "wave: 64\nm: 16\nn: 16\nk: 32\n"
		   "a: {type: i8, elements: 8, row: \"lane % 16\", col: \"8 * (lane / 16) + e\"}\n"
		   "b: {type: u8, elements: 8, row: \"8 * (lane / 16) + e\", col: \"lane % 16\"}\n"
		   "c: {type: i32, elements: 4, row: \"lane % 16\", col: \"lane / 16 + 4 * e\"}\n");
	write_file(TMP "/case.yaml",
		   "fragsim: 1\nname: u8\nisa: u8.yaml\n"
		   "model: {q_heads: 8, kv_heads: 2, head_dim: 64}\n"
		   "sequences:\n  - {context: 40}\n");
	expect_run("run " TMP "/case.yaml", 2,
		   TMP "/case.yaml: isa: profile gfx936-u8: b is u8, but the kernel's Q and K are signed int8");
	expect_run("run " TMP "/case.yaml --exec scalar", 2, "b is u8");
	/* the lane map itself is fine: only the attention kernel refuses it */
	expect_run("lanemap check " TMP "/u8.yaml", 0, NULL);
}

/* ---- 6c: inputs past f32's range ----------------------------------------- */

/* A logical tensor of n floats, all small but element 0 = big. */
static void write_npy(const char *path, int ndim, const size_t *shape, float big)
{
	size_t n = 1;
	float *x;
	uint64_t seed = 5;
	struct fs_err err;

	for (int i = 0; i < ndim; i++)
		n *= shape[i];
	x = malloc(n * sizeof(float));
	for (size_t i = 0; i < n; i++)
		x[i] = (float)((double)(tu_rand(&seed) >> 11) * 0x1p-53 - 0.5);
	x[0] = big;
	assert_int_equal(npy_write(path, NPY_F32, ndim, shape, x, NULL, &err), FS_OK);
	free(x);
}

/*
 * One element of 3e38 (finite, and a BF16) in Q, K or V. Before, the f32
 * scores (or PV sums) overflowed to inf while the reference's doubles did
 * not: "FAIL scores ... got -inf", a mapping failure that was not one.
 */
static void huge_inputs_are_refused(void **state)
{
	static const char *const body =
		"fragsim: 1\nname: huge\nmodel: {q_heads: 8, kv_heads: 2, head_dim: 64}\n"
		"sequences:\n  - {context: 20}\ndata: {%s: {npy: %s.npy}}\n";
	const size_t qs[4] = { 1, 1, 8, 64 }, ks[4] = { 1, 20, 2, 64 };
	char text[512];

	(void)state;
	setup_dir();
	write_npy(TMP "/q.npy", 4, qs, 3e38f);
	write_npy(TMP "/k.npy", 4, ks, 3e38f);
	write_npy(TMP "/v.npy", 4, ks, 3e38f);
	write_npy(TMP "/qinf.npy", 4, qs, 3.4e38f);	/* BF16 rounds it to inf */
	write_npy(TMP "/vok.npy", 4, ks, 1e36f);	/* 20 keys x 1e36 fits */
	snprintf(text, sizeof(text), body, "q", "q");
	write_file(TMP "/q.yaml", text);
	snprintf(text, sizeof(text), body, "k", "k");
	write_file(TMP "/k.yaml", text);
	snprintf(text, sizeof(text), body, "v", "v");
	write_file(TMP "/v.yaml", text);
	snprintf(text, sizeof(text), body, "q", "qinf");
	write_file(TMP "/qinf.yaml", text);
	snprintf(text, sizeof(text), body, "v", "vok");
	write_file(TMP "/vok.yaml", text);
	/* sQ = 3e38 / 127 = 2.36e36: float(acc) * sQ can reach
	 * 64 x 127^2 x 2.36e36 = 2.44e42, far past 2^127 */
	expect_run("run " TMP "/q.yaml", 2,
		   TMP "/q.yaml: data.q, data.k: the f32 score products can reach 2.44e+42");
	/* sK = 2.36e36 and sQ ~ 0.004: sQ sK ~ 1e34, times 64 x 127^2 */
	expect_run("run " TMP "/k.yaml --exec scalar", 2,
		   "data.q, data.k: the f32 score products can reach ");
	/* 20 keys x 3e38 */
	expect_run("run " TMP "/v.yaml", 2, "data.v: the f32 PV sums can reach 6.0");
	expect_run("run " TMP "/qinf.yaml", 2, "data.q: a value is past f32's range");
	expect_run("run " TMP "/vok.yaml", 0, NULL);
}

/* ---- 7: context 0 -------------------------------------------------------- */

static void read_f32(const char *path, struct npy_array *a)
{
	struct fs_err err;

	assert_int_equal(npy_read(path, a, &err), FS_OK);
	assert_int_equal(a->dtype, NPY_F32);
}

/*
 * A padded batch entry: decode context 0 is one query row that sees no
 * key; its out row is exactly +0 (l == 0 gives 0, as in the split-K
 * merge), its scores -inf, and the reference agrees (the run checks).
 */
static void context_zero_rows_are_zero(void **state)
{
	struct npy_array out, sc;

	(void)state;
	setup_dir();
	write_file(TMP "/d.yaml",
		   "fragsim: 1\nname: ctx0\nmodel: {q_heads: 8, kv_heads: 2, head_dim: 64}\n"
		   "sequences:\n  - {context: 0}\n  - {context: 40}\n  - {context: 0}\n"
		   "split_k: {segment: 16}\ngolden: all\n");
	expect_run("run " TMP "/d.yaml --exec scalar --out " TMP "/s", 0, NULL);
	expect_run("run " TMP "/d.yaml --out " TMP "/f", 0, NULL);
	same_npy(TMP "/s", TMP "/f");
	read_f32(TMP "/f/out.npy", &out);
	read_f32(TMP "/f/scores.npy", &sc);
	assert_int_equal(out.shape[0], 3);
	for (size_t i = 0; i < 8 * 64; i++) {
		assert_int_equal(tu_f32_bits(((float *)out.data)[i]), 0);		/* seq 0 */
		assert_int_equal(tu_f32_bits(((float *)out.data)[2 * 512 + i]), 0);	/* seq 2 */
	}
	assert_true(((float *)out.data)[512] != 0.0f);	/* seq 1 sees 40 keys */
	for (size_t i = 0; i < 8 * 40; i++)
		assert_true(((float *)sc.data)[i] == -INFINITY);
	npy_free(&out);
	npy_free(&sc);
	/* nothing but padding: no tile, still one row per q head */
	write_file(TMP "/z.yaml",
		   "fragsim: 1\nname: ctx0-only\nmodel: {q_heads: 8, kv_heads: 2, head_dim: 64}\n"
		   "sequences:\n  - {context: 0}\n");
	expect_run("run " TMP "/z.yaml", 0, NULL);
	/* prefill: chunk 0 has no query rows; the case still runs */
	write_file(TMP "/p.yaml",
		   "fragsim: 1\nname: chunk0\nmode: prefill\n"
		   "model: {q_heads: 4, kv_heads: 2, head_dim: 64}\n"
		   "sequences:\n  - {history: 0, chunk: 0}\n  - {history: 30, chunk: 0}\n"
		   "  - {history: 10, chunk: 20}\n");
	expect_run("run " TMP "/p.yaml", 0, NULL);
	expect_run("run " TMP "/p.yaml --exec scalar", 0, NULL);
	write_file(TMP "/e.yaml",
		   "fragsim: 1\nname: chunk0-only\nmode: prefill\n"
		   "sequences:\n  - {history: 10, chunk: 0}\n");
	expect_run("run " TMP "/e.yaml", 2,
		   "sequences: no sequence has a query token (every chunk is 0)");
	write_file(TMP "/t.yaml",
		   "fragsim: 1\nname: t\nsequences:\n  - {context: 0, tokens: 2}\n");
	expect_run("run " TMP "/t.yaml", 2, "tokens: must be between 1 and 1, not 2");
}

/* ---- 8: head_dim 80 and 112 ---------------------------------------------- */

/*
 * Before: "model.head_dim: must be a multiple of 32". Now the last K-step
 * of 32 holds 16 dims and 16 zeros; acc must equal the reference's exact
 * dot products (the run checks every accumulator).
 */
static void head_dim_not_a_multiple_of_k(void **state)
{
	struct run_result r;

	(void)state;
	r = tu_run("run cases/edge/head-dim-80.yaml");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "exact     acc "));
	tu_free(&r);
	expect_run("run cases/edge/head-dim-112-prefill.yaml --exec scalar", 0, NULL);
	setup_dir();
	/* K = 16 (no padding) and sm80's 8-key tiles */
	write_file(TMP "/r.yaml",
		   "fragsim: 1\nname: hd80-rdna3\nisa: rdna3-wmma-i32-16x16x16-iu8-w32\n"
		   "model: {q_heads: 8, kv_heads: 2, head_dim: 80}\n"
		   "sequences:\n  - {context: 40}\n");
	expect_run("run " TMP "/r.yaml", 0, NULL);
	write_file(TMP "/m.yaml",
		   "fragsim: 1\nname: hd112-sm80\nisa: sm80-mma-m16n8k32-s8\n"
		   "model: {q_heads: 8, kv_heads: 2, head_dim: 112}\n"
		   "sequences:\n  - {context: 40}\n");
	expect_run("run " TMP "/m.yaml", 0, NULL);
	/* the half-loaded kernel of head_dim 80 loads 40 dims and is caught */
	expect_run("mutate cases/edge/head-dim-80.yaml", 0, NULL);
}

/* ---- 9: decode groups of more than 16 rows ------------------------------- */

/*
 * MQA 32/1: row tile 1 of kv head 0 holds q heads 16..31. In a tile with
 * row_tile 1, gfx936 lane 3 register 0 holds C[3][0]: q head 16 + 3 = 19,
 * key token_base + 0. Planting a wrong value there must be labelled so.
 */
static void mqa_dump_is_diffed(void **state)
{
	struct npy_array t, a;
	struct fs_err err;
	struct run_result r;
	long pick = -1;
	char want[256];
	int rt1 = 0;

	(void)state;
	setup_dir();
	expect_run("run cases/edge/decode-mqa-32-1.yaml --emulate-only --out " TMP "/d", 0, NULL);
	expect_run("diff cases/edge/decode-mqa-32-1.yaml --dump " TMP "/d", 0, NULL);
	assert_int_equal(npy_read(TMP "/d/acc_tiles.npy", &t, &err), FS_OK);
	assert_int_equal(t.ndim, 2);
	assert_int_equal(t.shape[1], 5);
	for (size_t i = 0; i < t.shape[0]; i++) {
		const int32_t *p = &((int32_t *)t.data)[i * 5];

		rt1 += p[4] == 1;
		if (pick < 0 && p[4] == 1 && p[0] == 0)
			pick = (long)i;
	}
	assert_int_equal(rt1 * 2, (int)t.shape[0]);	/* half the tiles */
	assert_true(pick >= 0);
	assert_int_equal(npy_read(TMP "/d/acc.npy", &a, &err), FS_OK);
	((int32_t *)a.data)[((size_t)pick * 64 + 3) * 4 + 0] += 1;
	assert_int_equal(npy_write(TMP "/d/acc.npy", NPY_I32, a.ndim, a.shape, a.data,
				   NULL, &err), FS_OK);
	npy_free(&a);
	r = tu_run("diff cases/edge/decode-mqa-32-1.yaml --dump " TMP "/d --max 1");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "acc       "));
	assert_non_null(strstr(r.out, " 1 mismatches"));
	snprintf(want, sizeof(want), "| seq 0, token 0, q head 19, kv head 0, key %d (block ",
		 ((int32_t *)t.data)[pick * 5 + 3]);
	if (!strstr(r.out, want) || !strstr(r.out, "C[3][0] lane 3 reg 0"))
		fail_msg("want '%s' and C[3][0] lane 3 reg 0 in:\n%s", want, r.out);
	tu_free(&r);
	/* Four columns cannot say which row tile a row is. */
	{
		size_t n = t.shape[0], shape[2] = { n, 4 };
		int32_t *four = malloc(n * 4 * sizeof(int32_t));

		for (size_t i = 0; i < n; i++)
			memcpy(&four[i * 4], &((int32_t *)t.data)[i * 5], 4 * sizeof(int32_t));
		assert_int_equal(npy_write(TMP "/d/acc_tiles.npy", NPY_I32, 2, shape, four,
					   NULL, &err), FS_OK);
		free(four);
	}
	expect_run("diff cases/edge/decode-mqa-32-1.yaml --dump " TMP "/d", 2,
		   "acc_tiles.npy: row 0 (seq 0, head 0, row_base 0, token_base 0) names 2 row tiles of the case");
	npy_free(&t);
	/* G = 24: row tile 1 is q heads 16..23, then replicas of 0..7 */
	expect_run("run cases/edge/decode-gqa-48-2.yaml --emulate-only --out " TMP "/g", 0, NULL);
	expect_run("diff cases/edge/decode-gqa-48-2.yaml --dump " TMP "/g", 0, NULL);
	system("rm -rf " TMP);
}

int main(void)
{
	/* fixed /tmp paths: one run of this test at a time on this machine */
	tu_lock("shapes");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replicated_c_is_read_once),
		cmocka_unit_test(u8_operand_is_refused),
		cmocka_unit_test(huge_inputs_are_refused),
		cmocka_unit_test(context_zero_rows_are_zero),
		cmocka_unit_test(head_dim_not_a_multiple_of_k),
		cmocka_unit_test(mqa_dump_is_diffed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
