/*
 * test_kernel.c - the kernel's assumptions (sim/kernel.h) and fragsim
 * mutate. Each bug class is checked against arithmetic written here from
 * the published gfx936 layout (lane L, accumulator e holds C[L % 16]
 * [L / 16 + 4e]; A and B are not needed), never against the sim's own
 * mapping code:
 *   - the hardware side is untouched: bugs of the kernel's reading of C
 *     leave every accumulator bit as the correct kernel has it;
 *   - transpose none puts the right score at the wrong key, key
 *     kb + 4a + e getting the score of key kb + a + 4e;
 *   - head_dim_loaded 128 and operand_order kq give the accumulators
 *     computed here from Q, the block table and the paged K cache;
 *   - page_walk none cannot be seen on contiguous pages;
 * then the suites: the shipped one catches every class, the article's
 * weak one (contiguous pages, block-aligned contexts) lets exactly
 * tail_mask and page_walk through, and every cases/mutations/ case is
 * caught as it expects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>

#include "../tools/runcase.h"
#include "testutil.h"

#define CTX 64		/* keys: four whole tiles */
#define D 256
#define HKV 4
#define G 6

static const char base_case[] =
	"fragsim: 1\nname: kern\ncache: {placement: %s}\n"
	"sequences:\n  - {context: %d}\ndata: {seed: 21}\n";

/* Load the base case and build its inputs once. */
static void load(struct runcase *r, const char *placement, int ctx)
{
	char text[512], *path;
	struct fs_err err;

	snprintf(text, sizeof(text), base_case, placement, ctx);
	path = tu_write_temp(".yaml", text);
	assert_int_equal(runcase_load(path, r, &err), FS_OK);
	assert_int_equal(runcase_inputs(r, &err), FS_OK);
	unlink(path);
	free(path);
}

/* Emulate r's case with bug b planted (BUG_COUNT: none). */
static void emulate(const struct runcase *r, enum kern_bug b, struct attn_result *out)
{
	struct fs_case c = r->c;
	struct fs_err err;

	if (b != BUG_COUNT)
		assert_int_equal(kernel_plant(&c.kernel, b, c.head_dim), 0);
	assert_int_equal(runcase_emulate(r, &c, NULL, out, &err), FS_OK);
}

/* K[key][dim] of kv head g, from the paged layout [NB][Hkv][D/16][BS][16]. */
static int k_at(const struct runcase *r, int key, int g, int dim)
{
	int blk = r->in.block_table[key / 16];

	return r->in.k_cache[((((size_t)blk * HKV + g) * (D / 16) + dim / 16) * 16 +
			      key % 16) * 16 + dim % 16];
}

static int q_at(const struct runcase *r, int qh, int dim)
{
	return r->in.q_int8[(size_t)qh * D + dim];
}

static void hardware_side_untouched(void **state)
{
	const enum kern_bug reading[] = {
		BUG_C_COLUMNS, BUG_TAIL_MASK, BUG_TRANSPOSE, BUG_SCALE_RECOVERY,
		BUG_K_SCALE_INDEX, BUG_SPLIT_MERGE,
	};
	struct attn_result ok, bad;
	struct runcase r;

	(void)state;
	load(&r, "shuffled", 300);
	emulate(&r, BUG_COUNT, &ok);
	for (size_t i = 0; i < sizeof(reading) / sizeof(reading[0]); i++) {
		emulate(&r, reading[i], &bad);
		assert_int_equal(bad.n_tiles, ok.n_tiles);
		assert_memory_equal(bad.acc, ok.acc, ok.n_tiles * 64 * 4 * sizeof(int32_t));
		assert_memory_equal(bad.acc_tiles, ok.acc_tiles, ok.n_tiles * ATTN_TILE_COLS * sizeof(int32_t));
		attn_free(&bad);
	}
	attn_free(&ok);
	runcase_free(&r);
}

static void transpose_none_moves_scores(void **state)
{
	struct attn_result ok, bad;
	struct runcase r;
	long checked = 0;

	(void)state;
	load(&r, "shuffled", CTX);
	emulate(&r, BUG_COUNT, &ok);
	emulate(&r, BUG_TRANSPOSE, &bad);
	for (int qh = 0; qh < 24; qh++)
		for (int kb = 0; kb < CTX; kb += 16)
			for (int a = 0; a < 4; a++)
				for (int e = 0; e < 4; e++) {
					size_t row = (size_t)qh * CTX + kb;

					assert_true(bad.scores[row + 4 * a + e] ==
						    ok.scores[row + a + 4 * e]);
					checked++;
				}
	assert_int_equal(checked, 24 * CTX);
	/* The sum of each row's P is the same, its pairing with V is not. */
	assert_memory_not_equal(bad.out, ok.out, 24 * D * sizeof(float));
	attn_free(&ok);
	attn_free(&bad);
	runcase_free(&r);
}

/*
 * acc of tile (kv head g, keys kb..kb+15), lane L, accumulator e, with
 * the hardware computing sum over dims < dmax of A[row][dim] * B[dim][col].
 * kq: A is K (rows are keys), B is Q (columns are query rows).
 */
static int32_t want_acc(const struct runcase *r, int g, int kb, int lane, int e,
			int dmax, int kq)
{
	int row = lane % 16, col = lane / 16 + 4 * e;
	int32_t s = 0;

	for (int d = 0; d < dmax; d++)
		s += kq ? k_at(r, kb + row, g, d) * q_at(r, g * G + col % G, d) :
			  q_at(r, g * G + row % G, d) * k_at(r, kb + col, g, d);
	return s;
}

static void check_acc(const struct runcase *r, const struct attn_result *sim,
		      int dmax, int kq)
{
	assert_int_equal(sim->n_tiles, HKV * CTX / 16);
	for (size_t t = 0; t < sim->n_tiles; t++) {
		int g = sim->acc_tiles[t * ATTN_TILE_COLS + 1], kb = sim->acc_tiles[t * ATTN_TILE_COLS + 3];

		for (int lane = 0; lane < 64; lane++)
			for (int e = 0; e < 4; e++)
				assert_int_equal(sim->acc[(t * 64 + lane) * 4 + e],
						 want_acc(r, g, kb, lane, e, dmax, kq));
	}
}

static void head_dim_half_and_operand_order(void **state)
{
	struct attn_result sim;
	struct runcase r;

	(void)state;
	load(&r, "shuffled", CTX);
	emulate(&r, BUG_COUNT, &sim);
	check_acc(&r, &sim, D, 0);		/* the correct kernel, too */
	attn_free(&sim);
	emulate(&r, BUG_HEAD_DIM_LOADED, &sim);
	check_acc(&r, &sim, D / 2, 0);
	attn_free(&sim);
	emulate(&r, BUG_OPERAND_ORDER, &sim);
	check_acc(&r, &sim, D, 1);
	attn_free(&sim);
	runcase_free(&r);
}

static void page_walk_invisible_on_contiguous_pages(void **state)
{
	struct attn_result ok, bad;
	struct runcase r;

	(void)state;
	load(&r, "contiguous", 300);
	emulate(&r, BUG_COUNT, &ok);
	emulate(&r, BUG_PAGE_WALK, &bad);
	assert_memory_equal(bad.out, ok.out, 24 * D * sizeof(float));
	assert_memory_equal(bad.acc, ok.acc, ok.n_tiles * 64 * 4 * sizeof(int32_t));
	attn_free(&ok);
	attn_free(&bad);
	runcase_free(&r);

	load(&r, "shuffled", 300);
	emulate(&r, BUG_COUNT, &ok);
	emulate(&r, BUG_PAGE_WALK, &bad);
	assert_memory_not_equal(bad.acc, ok.acc, ok.n_tiles * 64 * 4 * sizeof(int32_t));
	attn_free(&ok);
	attn_free(&bad);
	runcase_free(&r);
}

static void kernel_section_errors(void **state)
{
	static const struct {
		const char *section, *msg;
	} bad[] = {
		{ "kernel: {c_columns: strided}", ":7:21: kernel.c_columns: must be one of profile, contiguous" },
		{ "kernel: {head_dim_loaded: 300}", ":7:27: kernel.head_dim_loaded: must be between 1 and 256" },
		{ "kernel: {lanes: 4}", ":7:10: kernel: unknown key 'lanes'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[512], *path;
		struct run_result res;

		snprintf(text, sizeof(text),
			 "fragsim: 1\nname: k\nsequences:\n  - {context: 16}\n"
			 "data: {seed: 1}\n\n%s\n", bad[i].section);
		path = tu_write_temp(".yaml", text);
		res = tu_run("run %s", path);
		assert_int_equal(res.status, 2);
		if (!strstr(res.err, bad[i].msg))
			fail_msg("%s: got '%s', want '%s'", bad[i].section, res.err, bad[i].msg);
		tu_free(&res);
		unlink(path);
		free(path);
	}
	{
		/* 80 is not a whole number of K-steps of 32: the kernel issues
		 * 3, the last zero-padded past dim 80, and misses dims 80..255,
		 * so the accumulators differ from the reference: caught. */
		char *path = tu_write_temp(".yaml",
			"fragsim: 1\nname: k\nsequences:\n  - {context: 16}\n"
			"kernel: {head_dim_loaded: 80}\n");
		struct run_result res = tu_run("run %s", path);

		assert_int_equal(res.status, 1);
		assert_non_null(strstr(res.out, "FAIL acc"));
		tu_free(&res);
		unlink(path);
		free(path);
	}
}

static void shipped_suite_catches_every_class(void **state)
{
	struct run_result res = tu_run("mutate cases/qwen35-27b cases/edge");

	(void)state;
	if (res.status != 0)
		fail_msg("mutate exit %d:\n%s%s", res.status, res.out, res.err);
	for (int b = 0; b < BUG_COUNT; b++) {
		const struct kern_bug_info *bi = kernel_bug((enum kern_bug)b);
		char want[96];
		const char *line;

		snprintf(want, sizeof(want), "%s=%s", bi->key, bi->bad);
		line = strstr(res.out, want);
		assert_non_null(line);
		assert_non_null(strstr(line, "caught by"));
	}
	assert_non_null(strstr(res.out, "0 of 11 bug classes survive"));
	tu_free(&res);
}

static void weak_suite_lets_page_walk_and_tail_through(void **state)
{
	struct run_result res = tu_run("mutate tests/data/weak-suite");

	(void)state;
	assert_int_equal(res.status, 1);
	for (int b = 0; b < BUG_COUNT; b++) {
		const struct kern_bug_info *bi = kernel_bug((enum kern_bug)b);
		int survives = b == BUG_TAIL_MASK || b == BUG_PAGE_WALK;
		char want[96];
		const char *line, *eol;

		snprintf(want, sizeof(want), "%s=%s", bi->key, bi->bad);
		line = strstr(res.out, want);
		assert_non_null(line);
		eol = strchr(line, '\n');
		assert_non_null(eol);
		if (survives != (strstr(line, "SURVIVED") && strstr(line, "SURVIVED") < eol))
			fail_msg("%s: %.*s", want, (int)(eol - line), line);
	}
	assert_non_null(strstr(res.out, "2 of 11 bug classes survive 2 case(s)"));
	tu_free(&res);

	/* The same verdicts as JSON, read back by Python's parser. */
	res = tu_run("mutate tests/data/weak-suite --json | /usr/bin/python3 -c '"
		     "import json, sys; d = json.load(sys.stdin); "
		     "print(sorted(c[\"bug\"] for c in d[\"classes\"] if c[\"verdict\"] == \"survived\"), "
		     "d[\"survived\"], d[\"cases\"])'");
	assert_int_equal(res.status, 0);
	assert_string_equal(res.out, "['page_walk', 'tail_mask'] 2 2\n");
	tu_free(&res);
}

static void mutation_cases_are_caught(void **state)
{
	struct run_result res = tu_run("check cases/mutations");

	(void)state;
	if (res.status != 0)
		fail_msg("check cases/mutations exit %d:\n%s", res.status, res.out);
	assert_non_null(strstr(res.out, "11 passed, 0 failed"));
	tu_free(&res);
	/* Without its bug a mutation case matches, and check says so. */
	{
		char *path = tu_write_temp(".yaml",
			"fragsim: 1\nname: unplanted\nexpect: mismatch\n"
			"sequences:\n  - {context: 16}\n");

		res = tu_run("check %s", path);
		assert_int_equal(res.status, 1);
		assert_non_null(strstr(res.out, "FAIL expected a mismatch; the planted bug went unseen"));
		tu_free(&res);
		unlink(path);
		free(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hardware_side_untouched),
		cmocka_unit_test(transpose_none_moves_scores),
		cmocka_unit_test(head_dim_half_and_operand_order),
		cmocka_unit_test(page_walk_invisible_on_contiguous_pages),
		cmocka_unit_test(kernel_section_errors),
		cmocka_unit_test(shipped_suite_catches_every_class),
		cmocka_unit_test(weak_suite_lets_page_walk_and_tail_through),
		cmocka_unit_test(mutation_cases_are_caught),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
