/*
 * test_case.c - the case loader (lib/casefile.c, driven by the schema
 * table of lib/caseschema.c) and printer (lib/caseprint.c): every
 * default as the schema lists it, every key read, every error at its
 * exact file:line:col with its key path, relative paths resolved against
 * the case file, and print -> load giving back the same case and the
 * same text.
 *
 * Line and column numbers in the expectations are counted by hand from
 * the texts beside them (columns are 1-based, like an editor's).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <sys/stat.h>

#include "../lib/casefile.h"
#include "testutil.h"

#define BASE "fragsim: 1\nname: t\n"		/* lines 1-2 */
#define SEQ "sequences:\n  - {context: 100}\n"	/* 7 blocks of 16 */

static enum fs_rc load(const char *text, struct fs_case *c, struct fs_err *err)
{
	memset(err, 0, sizeof(*err));
	return case_load_text(text, strlen(text), "case.yaml", NULL, c, err);
}

/* Load must fail at line:col with a message containing `want`. */
static void expect_error_at(const char *text, int line, int col,
			    const char *want, const char *file, int src_line)
{
	struct fs_case c;
	struct fs_err err;
	enum fs_rc rc = load(text, &c, &err);

	if (rc == FS_OK) {
		case_free(&c);
		_fail(file, src_line);
	}
	if (rc != FS_EINPUT || strcmp(err.file, "case.yaml") != 0 ||
	    err.line != line || err.col != col || !strstr(err.msg, want)) {
		print_error("got rc %d %s:%d:%d: %s\nwant %d:%d: ...%s...\n",
			    rc, err.file, err.line, err.col, err.msg, line, col,
			    want);
		_fail(file, src_line);
	}
	/* A failed load leaves nothing to free. */
	for (int s = 0; s < CASE_MAX_SEQS; s++)
		assert_null(c.seqs[s].blocks);
	assert_int_equal(c.n_seqs, 0);
}
#define expect_error(text, line, col, want) \
	expect_error_at(text, line, col, want, __FILE__, __LINE__)

static void expect_default_tensor(const struct case_tensor *t)
{
	assert_string_equal(t->npy, "");
	assert_int_equal(t->dist, DIST_NORMAL);
	assert_true(t->scale == 1.0);
	assert_true(t->mean == 0.0);
	assert_true(t->zero_rows == 0.0);
	assert_true(t->constant_rows == 0.0);
	assert_int_equal(t->n_outliers, 0);
	assert_true(t->outlier_scale == 10.0);
}

static void minimal_case_has_every_default(void **state)
{
	struct fs_case c;
	struct fs_err err;

	(void)state;
	assert_int_equal(load(BASE "sequences:\n  - {context: 4097}\n", &c, &err),
			 FS_OK);
	assert_string_equal(c.file, "case.yaml");
	assert_string_equal(c.name, "t");
	assert_string_equal(c.description, "");
	assert_string_equal(c.isa, "gfx936");
	assert_int_equal(c.mode, MODE_DECODE);
	assert_int_equal(c.route, ROUTE_REPORT);
	assert_int_equal(c.q_heads, 24);
	assert_int_equal(c.kv_heads, 4);
	assert_int_equal(c.head_dim, 256);
	assert_int_equal(c.softmax_scale_auto, 1);
	assert_true(c.softmax_scale == 0.0625);	/* 1/sqrt(256), exact */
	assert_int_equal(c.sliding_window, 0);
	assert_int_equal(c.alibi, 0);
	assert_true(c.soft_cap == 0.0);
	assert_int_equal(c.block_size, 16);
	assert_int_equal(c.num_blocks, 257 + 2);	/* ceil(4097/16) + spare */
	assert_int_equal(c.spare_blocks, 2);
	assert_int_equal(c.placement, PLACE_SHUFFLED);
	assert_int_equal(c.k_scale, KSCALE_PER_TOKEN_HEAD);
	assert_int_equal(c.v_dtype, VDT_INT8);
	assert_int_equal(c.shuffle_cache, 0);
	assert_int_equal(c.n_seqs, 1);
	assert_int_equal(c.seqs[0].context, 4097);
	assert_int_equal(c.seqs[0].tokens, 1);
	assert_int_equal(c.seqs[0].history, 4096);
	assert_null(c.seqs[0].blocks);
	assert_int_equal(c.seqs[0].n_blocks, 0);
	assert_int_equal(case_q_pos(&c, 0, 0), 4096);
	assert_int_equal(c.rounding, ROUND_HALF_AWAY);
	assert_int_equal(c.clip, 127);
	assert_int_equal(c.segment, 0);
	assert_int_equal(c.seed, 0);
	expect_default_tensor(&c.q);
	expect_default_tensor(&c.k);
	expect_default_tensor(&c.v);
	assert_true(isnan(c.check.out_cosine_min));
	assert_true(isnan(c.check.out_max_abs_max));
	assert_true(isnan(c.check.score_max_abs_max));
	assert_true(isnan(c.check.score_nmse_max));
	assert_true(isnan(c.check.kld_mean_max));
	assert_true(isnan(c.check.kld_median_max));
	assert_true(isnan(c.check.kld_p99_max));
	assert_true(isnan(c.check.top1_min));
	assert_true(isnan(c.check.rms_dp_max));
	assert_int_equal(c.buckets, 4);
	assert_int_equal(c.golden, GOLD_INPUTS | GOLD_ACC | GOLD_OUT);
	case_free(&c);
}

static const char full_text[] =
	"fragsim: 1\n"
	"name: full-case_1.x\n"
	"description: \"every key: \\\"quoted\\\"\"\n"
	"isa: gfx936-quad\n"
	"mode: decode\n"
	"route: strict\n"
	"model:\n"
	"  q_heads: 32\n"
	"  kv_heads: 8\n"
	"  head_dim: 128\n"
	"  softmax_scale: 0.125\n"
	"  sliding_window: 4096\n"
	"  alibi: true\n"
	"  soft_cap: 30.5\n"
	"cache:\n"
	"  block_size: 64\n"
	"  num_blocks: 100\n"
	"  placement: reversed\n"
	"  k_scale: per_block32\n"
	"  v_dtype: bf16\n"
	"  shuffle_cache: true\n"
	"sequences:\n"
	"  - {context: 1000, tokens: 4}\n"
	"  - {context: 65}\n"
	"quant:\n"
	"  rounding: half_to_even\n"
	"  clip: 120\n"
	"split_k:\n"
	"  segment: 512\n"
	"data:\n"
	"  seed: 9223372036854775807\n"
	"  q: {dist: uniform, scale: 2.5, mean: -0.5, zero_rows: 0.25, constant_rows: 0.125,\n"
	"      outlier_channels: [3, 77], outlier_scale: 50}\n"
	"  k: {dist: sign, scale: 0.5}\n"
	"  v: {npy: v.npy}\n"
	"check:\n"
	"  out_cosine_min: 0.999\n"
	"  out_max_abs_max: 0.01\n"
	"  score_max_abs_max: 0.05\n"
	"  score_nmse_max: 1e-4\n"
	"  kld_mean_max: 1.0e-3\n"
	"  kld_median_max: 5e-4\n"
	"  kld_p99_max: 0.02\n"
	"  top1_min: 0.99\n"
	"  rms_dp_max: 0.002\n"
	"  buckets: 8\n"
	"golden: all\n";

static void full_case_reads_every_key(void **state)
{
	struct fs_case c;
	struct fs_err err;

	(void)state;
	assert_int_equal(load(full_text, &c, &err), FS_OK);
	assert_string_equal(c.name, "full-case_1.x");
	assert_string_equal(c.description, "every key: \"quoted\"");
	assert_string_equal(c.isa, "gfx936-quad");
	assert_int_equal(c.mode, MODE_DECODE);
	assert_int_equal(c.route, ROUTE_STRICT);
	assert_int_equal(c.q_heads, 32);
	assert_int_equal(c.kv_heads, 8);
	assert_int_equal(case_group(&c), 4);
	assert_int_equal(c.head_dim, 128);
	assert_int_equal(c.softmax_scale_auto, 0);
	assert_true(c.softmax_scale == 0.125);
	assert_int_equal(c.sliding_window, 4096);
	assert_int_equal(c.alibi, 1);
	assert_true(c.soft_cap == 30.5);
	assert_int_equal(c.block_size, 64);
	assert_int_equal(c.num_blocks, 100);
	/* ceil(1000/64) + ceil(65/64) = 16 + 2 needed: the rest is spare. */
	assert_int_equal(case_blocks_needed(&c), 18);
	assert_int_equal(c.spare_blocks, 82);
	assert_int_equal(c.placement, PLACE_REVERSED);
	assert_int_equal(c.k_scale, KSCALE_PER_BLOCK32);
	assert_int_equal(c.v_dtype, VDT_BF16);
	assert_int_equal(c.shuffle_cache, 1);
	assert_int_equal(c.n_seqs, 2);
	assert_int_equal(c.seqs[0].context, 1000);
	assert_int_equal(c.seqs[0].tokens, 4);
	assert_int_equal(c.seqs[0].history, 996);
	assert_int_equal(c.seqs[1].context, 65);
	assert_int_equal(c.seqs[1].tokens, 1);
	assert_int_equal(c.rounding, ROUND_HALF_EVEN);
	assert_int_equal(c.clip, 120);
	assert_int_equal(c.segment, 512);
	assert_int_equal(case_segments_of(&c, 0), 2);
	assert_true(c.seed == 9223372036854775807ull);
	assert_int_equal(c.q.dist, DIST_UNIFORM);
	assert_true(c.q.scale == 2.5);
	assert_true(c.q.mean == -0.5);
	assert_true(c.q.zero_rows == 0.25);
	assert_true(c.q.constant_rows == 0.125);
	assert_int_equal(c.q.n_outliers, 2);
	assert_int_equal(c.q.outliers[0], 3);
	assert_int_equal(c.q.outliers[1], 77);
	assert_true(c.q.outlier_scale == 50.0);
	assert_int_equal(c.k.dist, DIST_SIGN);
	assert_true(c.k.scale == 0.5);
	assert_string_equal(c.k.npy, "");
	assert_string_equal(c.v.npy, "v.npy");
	assert_int_equal(c.v.dist, DIST_NORMAL);
	assert_true(c.check.out_cosine_min == 0.999);
	assert_true(c.check.out_max_abs_max == 0.01);
	assert_true(c.check.score_max_abs_max == 0.05);
	assert_true(c.check.score_nmse_max == 1e-4);
	assert_true(c.check.kld_mean_max == 1e-3);
	assert_true(c.check.kld_median_max == 5e-4);
	assert_true(c.check.kld_p99_max == 0.02);
	assert_true(c.check.top1_min == 0.99);
	assert_true(c.check.rms_dp_max == 0.002);
	assert_int_equal(c.buckets, 8);
	assert_int_equal(c.golden, GOLD_INPUTS | GOLD_ACC | GOLD_SCORES |
				   GOLD_OUT | GOLD_SPLITK);
	case_free(&c);
}

static const char prefill_text[] =
	BASE
	"mode: prefill\n"
	"cache: {spare_blocks: 0}\n"
	"sequences:\n"
	"  - {history: 1000, chunk: 300}\n"
	"  - {history: 0, chunk: 17}\n"
	"golden: [out, scores]\n";

static void prefill_sequences(void **state)
{
	struct fs_case c;
	struct fs_err err;

	(void)state;
	assert_int_equal(load(prefill_text, &c, &err), FS_OK);
	assert_int_equal(c.mode, MODE_PREFILL);
	assert_int_equal(c.seqs[0].history, 1000);
	assert_int_equal(c.seqs[0].tokens, 300);
	assert_int_equal(c.seqs[0].context, 1300);
	assert_int_equal(c.seqs[1].history, 0);
	assert_int_equal(c.seqs[1].tokens, 17);
	assert_int_equal(c.seqs[1].context, 17);
	assert_int_equal(case_q_pos(&c, 0, 0), 1000);
	assert_int_equal(case_q_pos(&c, 0, 299), 1299);
	assert_int_equal(case_q_pos(&c, 1, 16), 16);
	assert_int_equal(case_tokens_max(&c), 300);
	/* ceil(1300/16) + ceil(17/16) = 82 + 2, and no spare. */
	assert_int_equal(c.num_blocks, 84);
	assert_int_equal(c.spare_blocks, 0);
	assert_int_equal(c.golden, GOLD_SCORES | GOLD_OUT);
	case_free(&c);
}

static const char table_text[] =
	BASE
	"cache: {placement: table, num_blocks: 8}\n"
	"sequences:\n"
	"  - {context: 33, blocks: [7, 0, 3]}\n"
	"  - {context: 16, blocks: [5]}\n"
	"golden: []\n";

static void explicit_table(void **state)
{
	struct fs_case c;
	struct fs_err err;

	(void)state;
	assert_int_equal(load(table_text, &c, &err), FS_OK);
	assert_int_equal(c.placement, PLACE_TABLE);
	assert_int_equal(c.num_blocks, 8);
	assert_int_equal(c.spare_blocks, 4);
	assert_int_equal(c.seqs[0].n_blocks, 3);
	assert_int_equal(c.seqs[0].blocks[0], 7);
	assert_int_equal(c.seqs[0].blocks[1], 0);
	assert_int_equal(c.seqs[0].blocks[2], 3);
	assert_int_equal(c.seqs[1].n_blocks, 1);
	assert_int_equal(c.seqs[1].blocks[0], 5);
	assert_int_equal(c.golden, 0);
	case_free(&c);
	assert_null(c.seqs[0].blocks);
}

static void the_documented_example_error(void **state)
{
	struct fs_case c;
	struct fs_err err;
	char buf[1024];

	(void)state;
	/* Line 7, and "   block_size: " is 15 characters. */
	assert_int_equal(load("fragsim: 1\nname: t\ndescription: x\nisa: gfx936\n"
			      "mode: decode\ncache:\n   block_size: 48\n" SEQ,
			      &c, &err), FS_EINPUT);
	assert_string_equal(fs_err_str(&err, buf, sizeof(buf)),
			    "case.yaml:7:16: cache.block_size: must be a power "
			    "of two between 1 and 1024");
}

static void unknown_and_repeated_keys(void **state)
{
	(void)state;
	expect_error(BASE "colour: red\n" SEQ, 3, 1,
		     "unknown key 'colour' (expected one of: fragsim, name,");
	expect_error(BASE "model:\n  q_heads: 24\n  kv_head: 4\n" SEQ, 5, 3,
		     "model: unknown key 'kv_head' (expected one of: q_heads, kv_heads,");
	/* "  - {context: 100, " is 19 characters. */
	expect_error(BASE "sequences:\n  - {context: 100, token: 1}\n", 4, 20,
		     "sequences[0]: unknown key 'token'");
	expect_error(BASE SEQ "data:\n  q: {std: 1.0}\n", 6, 7,
		     "data.q: unknown key 'std'");
	expect_error(BASE "check: {kld_max: 1}\n" SEQ, 3, 9,
		     "check: unknown key 'kld_max'");
	expect_error(BASE SEQ "name: u\n", 5, 1,
		     "key 'name' given twice (first at line 2)");
	expect_error(BASE "cache: {block_size: 16, block_size: 32}\n" SEQ, 3, 25,
		     "cache: key 'block_size' given twice");
}

static void wrong_types(void **state)
{
	(void)state;
	expect_error(BASE "model: 5\n" SEQ, 3, 8,
		     "model: expected a mapping, found a scalar");
	/* "  q_heads: " is 11 characters. */
	expect_error(BASE "model:\n  q_heads: [24]\n" SEQ, 4, 12,
		     "model.q_heads: expected a value, found a list");
	expect_error(BASE "model:\n  q_heads: \"24\"\n" SEQ, 4, 12,
		     "model.q_heads: expected an integer, found '24'");
	expect_error(BASE "model:\n  alibi: yes\n" SEQ, 4, 10,
		     "model.alibi: must be one of false, true, not 'yes'");
	expect_error(BASE "model:\n  soft_cap: big\n" SEQ, 4, 13,
		     "model.soft_cap: expected a number, found 'big'");
	expect_error(BASE "model:\n  softmax_scale: automatic\n" SEQ, 4, 18,
		     "model.softmax_scale: expected a number, found 'automatic'");
	expect_error(BASE "sequences: {context: 1}\n", 3, 12,
		     "sequences: expected a list of sequences");
	expect_error(BASE "sequences:\n  - 100\n", 4, 5,
		     "sequences[0]: expected a mapping, found a scalar");
	expect_error(BASE "mode: both\n" SEQ, 3, 7,
		     "mode: must be one of decode, prefill, not 'both'");
	expect_error(BASE "cache: {placement: random}\n" SEQ, 3, 20,
		     "cache.placement: must be one of contiguous, shuffled, reversed, table");
	expect_error(BASE SEQ "data: {q: {outlier_channels: 3}}\n", 5, 30,
		     "data.q.outlier_channels: expected a list of head-dim channels");
	expect_error(BASE SEQ "golden: some\n", 5, 9,
		     "golden: must be a list of inputs, acc, scores, out, splitk, or the word all");
	expect_error(BASE SEQ "golden: [inputs, outs]\n", 5, 18,
		     "golden[1]: must be one of inputs, acc, scores, out, splitk, not 'outs'");
	expect_error(BASE SEQ "golden: [out, out]\n", 5, 15,
		     "golden[1]: 'out' is listed twice");
	expect_error("- 1\n", 1, 1, "expected a mapping, found a list");
	/* 010 was octal 8 (and 08 an error): integers are decimal, and a
	 * leading zero, which YAML 1.1 and 1.2 read differently, is refused. */
	expect_error(BASE "sequences:\n  - {context: 010}\n", 4, 15,
		     "sequences[0].context: '010': leading zeros are not allowed");
	expect_error(BASE "sequences:\n  - {context: 0x40}\n", 4, 15,
		     "sequences[0].context: '0x40': integers are decimal");
	/* The tail after a NUL used to be dropped silently. */
	expect_error("fragsim: 1\nname: \"t\\0rest\"\n" SEQ, 2, 7,
		     "name: a NUL character (\\0) inside a value");
}

static void out_of_range(void **state)
{
	(void)state;
	expect_error(BASE "cache:\n  block_size: 0\n" SEQ, 4, 15,
		     "cache.block_size: must be a power of two between 1 and 1024");
	expect_error(BASE "cache:\n  block_size: 2048\n" SEQ, 4, 15,
		     "cache.block_size: must be a power of two between 1 and 1024");
	expect_error(BASE "model:\n  q_heads: 300\n" SEQ, 4, 12,
		     "model.q_heads: must be between 1 and 256, not 300");
	expect_error(BASE "model:\n  head_dim: 100\n" SEQ, 4, 13,
		     "model.head_dim: must be a multiple of 16 between 16 and 1024");
	expect_error(BASE "model:\n  head_dim: 1056\n" SEQ, 4, 13,
		     "model.head_dim: must be a multiple of 16 between 16 and 1024");
	expect_error(BASE "model:\n  head_dim: 8\n" SEQ, 4, 13,
		     "model.head_dim: must be a multiple of 16 between 16 and 1024");
	/* 80 is a shape (zero-padded last K-step), but not per_block32's */
	expect_error(BASE "model:\n  head_dim: 80\ncache:\n  k_scale: per_block32\n" SEQ,
		     6, 12, "cache.k_scale: per_block32 needs a head_dim that is a "
		     "multiple of 32 (one fp16 scale per 32 elements), not 80");
	/* "  block_stride: " is 16 characters; one block of 24 x 4 x 256 x
	 * 16 (the defaults) is 16384 elements */
	expect_error(BASE "cache:\n  block_stride: 16390\n" SEQ, 4, 17,
		     "cache.block_stride: must be a multiple of 16 (one 128-bit load)");
	expect_error(BASE "cache:\n  block_stride: 8192\n" SEQ, 4, 17,
		     "cache.block_stride: must be 0 or at least one block's 16384 elements "
		     "(kv_heads 4 x head_dim 256 x block_size 16), not 8192");
	expect_error(BASE "model:\n  softmax_scale: 0\n" SEQ, 4, 18,
		     "model.softmax_scale: must be auto or a number greater than 0, not 0");
	expect_error(BASE "model:\n  sliding_window: -1\n" SEQ, 4, 19,
		     "model.sliding_window: must be between 0 and 1048576, not -1");
	expect_error(BASE "model:\n  soft_cap: -1\n" SEQ, 4, 13,
		     "model.soft_cap: must be at least 0, not -1");
	expect_error(BASE "cache: {window_blocks: free}\n" SEQ, 3, 24,
		     "cache.window_blocks: free needs a sliding window (model.sliding_window), and the case has none");
	expect_error(BASE "cache: {window_blocks: maybe}\n" SEQ, 3, 24,
		     "cache.window_blocks: must be one of keep, free, not 'maybe'");
	expect_error(BASE "model: {head_dim: 80}\ncache: {v_dtype: q4_0}\n" SEQ, 4, 18,
		     "cache.v_dtype: q4_0 needs a head_dim that is a multiple of 32 (one fp16 scale per 32 elements), not 80");
	expect_error(BASE "cache: {spare_blocks: 1025}\n" SEQ, 3, 23,
		     "cache.spare_blocks: must be between 0 and 1024, not 1025");
	expect_error(BASE "cache: {num_blocks: 4194305}\n" SEQ, 3, 21,
		     "cache.num_blocks: must be at most 4194304, not 4194305");
	expect_error(BASE "sequences:\n  - {context: -1}\n", 4, 15,
		     "sequences[0].context: must be between 0 and 1048576, not -1");
	/* context 0 (a padded batch entry) has its one query row, no more */
	expect_error(BASE "sequences:\n  - {context: 0, tokens: 2}\n", 4, 26,
		     "sequences[0].tokens: must be between 1 and 1, not 2");
	expect_error(BASE "mode: prefill\nsequences:\n  - {history: 4, chunk: 0}\n", 5, 3,
		     "sequences: no sequence has a query token (every chunk is 0)");
	/* tokens is bounded by the context. "  - {context: 100, tokens: " = 27. */
	expect_error(BASE "sequences:\n  - {context: 100, tokens: 101}\n", 4, 28,
		     "sequences[0].tokens: must be between 1 and 100, not 101");
	expect_error(BASE "mode: prefill\nsequences:\n  - {history: 5, chunk: 8193}\n",
		     5, 25, "sequences[0].chunk: must be between 0 and 8192, not 8193");
	expect_error(BASE "mode: prefill\nsequences:\n  - {history: 1048570, chunk: 7}\n",
		     5, 5, "sequences[0]: history + chunk is 1048577 keys, more than 1048576");
	expect_error(BASE SEQ "quant: {clip: 128}\n", 5, 15,
		     "quant.clip: must be between 1 and 127, not 128");
	expect_error(BASE SEQ "split_k: {segment: -4}\n", 5, 20,
		     "split_k.segment: must be between 0 and 1048576, not -4");
	expect_error(BASE SEQ "data: {seed: -1}\n", 5, 14,
		     "data.seed: must be between 0 and 9223372036854775807, not -1");
	/* Past int64: still a range error, with the bounds. */
	expect_error(BASE SEQ "data: {seed: 9223372036854775808}\n", 5, 14,
		     "data.seed: must be between 0 and 9223372036854775807, "
		     "not 9223372036854775808");
	expect_error(BASE SEQ "data:\n  k: {scale: 0}\n", 6, 14,
		     "data.k.scale: must be greater than 0 and at most 1e+06, not 0");
	expect_error(BASE SEQ "data:\n  k: {mean: -2e6}\n", 6, 13,
		     "data.k.mean: must be at least -1e+06 and at most 1e+06, not -2e6");
	expect_error(BASE SEQ "data:\n  v: {zero_rows: 1.5}\n", 6, 18,
		     "data.v.zero_rows: must be at least 0 and at most 1, not 1.5");
	expect_error(BASE SEQ "data:\n  v: {outlier_scale: 0.5}\n", 6, 22,
		     "data.v.outlier_scale: must be at least 1 and at most 10000, not 0.5");
	/* "  q: {outlier_channels: [3, " is 28 characters. */
	expect_error(BASE SEQ "data:\n  q: {outlier_channels: [3, 256]}\n", 6, 29,
		     "data.q.outlier_channels[1]: must be between 0 and 255, not 256");
	expect_error(BASE SEQ "data:\n  q: {outlier_channels: [3, 3]}\n", 6, 29,
		     "data.q.outlier_channels[1]: channel 3 is listed twice");
	expect_error(BASE SEQ "data:\n  q: {outlier_channels: [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}\n",
		     6, 25, "data.q.outlier_channels: at most 16 channels, found 17");
	expect_error(BASE SEQ "check: {top1_min: 1.5}\n", 5, 19,
		     "check.top1_min: must be at least 0 and at most 1, not 1.5");
	expect_error(BASE SEQ "check: {rms_dp_max: -0.1}\n", 5, 21,
		     "check.rms_dp_max: must be at least 0, not -0.1");
	expect_error(BASE SEQ "check: {buckets: 17}\n", 5, 18,
		     "check.buckets: must be between 1 and 16, not 17");
	expect_error(BASE SEQ "check: {kld_mean_max: .nan}\n", 5, 23,
		     "check.kld_mean_max: expected a number, found '.nan'");
}

/* 500000 nested lists took libyaml minutes to load; refused at once at
 * the 65th level: "sequences: " is 11 columns, the mapping level 1. */
static void deep_nesting_is_refused(void **state)
{
	size_t n = 500000, at = strlen(BASE "sequences: ");
	char *t = malloc(at + 2 * n + 2);

	(void)state;
	memcpy(t, BASE "sequences: ", at);
	memset(t + at, '[', n);
	memset(t + at + n, ']', n);
	strcpy(t + at + 2 * n, "\n");
	expect_error(t, 3, 12 + 63, "nested deeper than 64 levels (fragsim's limit)");
	free(t);
}

static void names_versions_and_documents(void **state)
{
	(void)state;
	expect_error("fragsim: 1\n" SEQ, 1, 1, "name: missing required key");
	expect_error("name: t\n" SEQ, 1, 1, "fragsim: missing required key");
	expect_error(BASE "model: {q_heads: 8}\n", 1, 1,
		     "sequences: missing required key");
	expect_error("fragsim: 2\nname: t\n" SEQ, 1, 10,
		     "fragsim: unsupported schema version 2 (this fragsim reads version 1)");
	expect_error("fragsim: one\nname: t\n" SEQ, 1, 10,
		     "fragsim: expected an integer, found 'one'");
	expect_error("fragsim: 1\nname: a b\n" SEQ, 2, 7,
		     "name: must be 1 to 127 characters from A-Z a-z 0-9 . _ -");
	expect_error("fragsim: 1\nname: \"\"\n" SEQ, 2, 7, "name: must be 1 to 127");
	expect_error("fragsim: 1\nname: "
		     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
		     SEQ, 2, 7, "name: too long (at most 127 characters)");
	expect_error(BASE "isa: \"\"\n" SEQ, 3, 6,
		     "isa: must name a builtin profile or a profile .yaml file");
	expect_error(BASE SEQ "---\nname: x\n", 5, 1,
		     "more than one YAML document (one per file)");
	expect_error(BASE SEQ "---\nname: [x\n", 7, 1, "invalid YAML");
	expect_error(BASE "sequences: [\n", 4, 1, "invalid YAML");
	expect_error("", 1, 1, "empty document");
	expect_error(BASE "sequences: []\n", 3, 12,
		     "sequences: must list between 1 and 64 sequences, found 0");
}

static void heads_must_group(void **state)
{
	(void)state;
	/* "model: {q_heads: 24, kv_heads: " is 31 characters. */
	expect_error(BASE "model: {q_heads: 24, kv_heads: 5}\n" SEQ, 3, 32,
		     "model.kv_heads: must divide q_heads (24), not 5");
	/* Only q_heads given: the default kv_heads (4) does not divide 10. */
	expect_error(BASE "model: {q_heads: 10}\n" SEQ, 3, 18,
		     "model.q_heads: must be a multiple of kv_heads (4, the default), not 10");
}

static void sequence_keys_follow_the_mode(void **state)
{
	(void)state;
	/* "  - {context: 33, " is 18 characters. */
	expect_error(BASE "sequences:\n  - {context: 33, chunk: 4}\n", 4, 19,
		     "sequences[0].chunk: not a decode key (decode sequences take context and tokens)");
	expect_error(BASE "sequences:\n  - {context: 33}\n  - {history: 4, context: 9}\n",
		     5, 6, "sequences[1].history: not a decode key");
	expect_error(BASE "mode: prefill\nsequences:\n  - {history: 3, context: 4}\n", 5, 18,
		     "sequences[0].context: not a prefill key (prefill sequences take history and chunk)");
	expect_error(BASE "mode: prefill\nsequences:\n  - {history: 3}\n", 5, 5,
		     "sequences[0].chunk: missing required key");
	expect_error(BASE "mode: prefill\nsequences:\n  - {chunk: 3}\n", 5, 5,
		     "sequences[0].history: missing required key");
	expect_error(BASE "sequences:\n  - {tokens: 3}\n", 4, 5,
		     "sequences[0].context: missing required key");
}

static void sums_over_sequences(void **state)
{
	char text[4096];
	size_t at;

	(void)state;
	/* Five sequences of 2^20 keys: 5242880 > 4194304. */
	at = (size_t)snprintf(text, sizeof(text), "%s", BASE "cache: {block_size: 1024}\nsequences:\n");
	for (int s = 0; s < 5; s++)
		at += (size_t)snprintf(text + at, sizeof(text) - at,
				       "  - {context: 1048576}\n");
	expect_error(text, 5, 3, "sequences: contexts add up to 5242880 keys, more than 4194304");
	/* Nine prefill chunks of 8192: 73728 > 65536 query tokens. */
	at = (size_t)snprintf(text, sizeof(text), "%s", BASE "mode: prefill\nsequences:\n");
	for (int s = 0; s < 9; s++)
		at += (size_t)snprintf(text + at, sizeof(text) - at,
				       "  - {history: 0, chunk: 8192}\n");
	expect_error(text, 5, 3, "sequences: query tokens add up to 73728, more than 65536");
	/* 65 sequences. */
	at = (size_t)snprintf(text, sizeof(text), "%s", BASE "sequences:\n");
	for (int s = 0; s < 65; s++)
		at += (size_t)snprintf(text + at, sizeof(text) - at, "  - {context: 1}\n");
	expect_error(text, 4, 3, "sequences: must list between 1 and 64 sequences, found 65");
}

static void num_blocks_rules(void **state)
{
	struct fs_case c;
	struct fs_err err;

	(void)state;
	/* context 100 needs 7 blocks. "cache: {num_blocks: " is 20 characters. */
	expect_error(BASE "cache: {num_blocks: 6}\n" SEQ, 3, 21,
		     "cache.num_blocks: must be at least 7 (the blocks the sequences need), not 6");
	expect_error(BASE "cache: {num_blocks: 9, spare_blocks: 2}\n" SEQ, 3, 24,
		     "cache.spare_blocks: only allowed with num_blocks: auto (num_blocks is given at line 3)");
	expect_error(BASE "cache: {num_blocks: lots}\n" SEQ, 3, 21,
		     "cache.num_blocks: expected an integer, found 'lots'");
	/* Exactly enough, and auto with its spare. */
	assert_int_equal(load(BASE "cache: {num_blocks: 7}\n" SEQ, &c, &err), FS_OK);
	assert_int_equal(c.num_blocks, 7);
	assert_int_equal(c.spare_blocks, 0);
	assert_int_equal(load(BASE "cache: {num_blocks: auto, spare_blocks: 5}\n" SEQ,
			      &c, &err), FS_OK);
	assert_int_equal(c.num_blocks, 12);
	assert_int_equal(c.spare_blocks, 5);
	/* block_size 1 and 2^22 keys: auto would pass the pool's limit. */
	assert_int_equal(load(BASE "cache: {block_size: 1}\nsequences:\n"
			      "  - {context: 1048576}\n  - {context: 1048576}\n"
			      "  - {context: 1048576}\n  - {context: 1048576}\n",
			      &c, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "cache.num_blocks: auto gives 4194306 blocks"));
	/* Every context 0: no block needed, yet a pool holds one (auto with
	 * no spare gave 0 and the input stage refused it, naming no key). */
	assert_int_equal(load(BASE "cache: {spare_blocks: 0}\nsequences:\n  - {context: 0}\n",
			      &c, &err), FS_OK);
	assert_int_equal(c.num_blocks, 1);
	expect_error(BASE "cache: {placement: table, num_blocks: 0}\nsequences:\n"
		     "  - {context: 0, blocks: []}\n", 3, 39,
		     "cache.num_blocks: must be at least 1 (a pool holds a block, though "
		     "no sequence has a key), not 0");
}

/* A threshold needs a row that sees a key: a decode case of nothing but
 * context 0 has none, and refusing beats failing "not measured". */
static void thresholds_need_a_key(void **state)
{
	struct fs_case c;
	struct fs_err err;

	(void)state;
	/* "check: {buckets: 2, kld_mean_max: " is 34 characters */
	expect_error(BASE "check: {buckets: 2, kld_mean_max: 1}\nsequences:\n"
		     "  - {context: 0}\n  - {context: 0}\n", 3, 35,
		     "check.kld_mean_max: nothing to measure: no query of the case "
		     "sees a key (every context is 0), so a threshold could only "
		     "fail; leave it out or give a sequence a key");
	/* One sequence with a key, or no threshold, or prefill (a row sees
	 * its own key): accepted. */
	assert_int_equal(load(BASE "check: {out_cosine_min: 0.9}\nsequences:\n"
			      "  - {context: 0}\n  - {context: 1}\n", &c, &err), FS_OK);
	assert_int_equal(load(BASE "check: {buckets: 2}\nsequences:\n  - {context: 0}\n",
			      &c, &err), FS_OK);
	assert_int_equal(load(BASE "mode: prefill\ncheck: {out_cosine_min: 0.9}\n"
			      "sequences:\n  - {history: 0, chunk: 1}\n", &c, &err), FS_OK);
}

#define TABLE_HEAD BASE "cache: {placement: table}\nsequences:\n"	/* lines 1-4 */

static void table_errors(void **state)
{
	(void)state;
	/* "  - {context: 33, blocks: " is 26 characters: '[' at 27. */
	expect_error(TABLE_HEAD "  - {context: 33, blocks: [0, 1]}\n", 5, 27,
		     "sequences[0].blocks: must list exactly 3 block ids "
		     "(ceil(context 33 / block_size 16)), found 2");
	expect_error(TABLE_HEAD "  - {context: 33, blocks: [0, 1, 2, 3]}\n", 5, 27,
		     "must list exactly 3 block ids");
	expect_error(TABLE_HEAD "  - {context: 33, blocks: 0}\n", 5, 27,
		     "sequences[0].blocks: expected a list of block ids");
	/* auto: 3 + 2 = 5 blocks, ids 0..4; the third id is at column 34. */
	expect_error(TABLE_HEAD "  - {context: 33, blocks: [0, 1, 5]}\n", 5, 34,
		     "sequences[0].blocks[2]: must be between 0 and 4, not 5");
	expect_error(TABLE_HEAD "  - {context: 33, blocks: [0, 1, -1]}\n", 5, 34,
		     "sequences[0].blocks[2]: must be between 0 and 4, not -1");
	expect_error(TABLE_HEAD "  - {context: 33, blocks: [0, 0, 1]}\n", 5, 31,
		     "sequences[0].blocks[1]: block 0 is listed twice in this sequence");
	expect_error(TABLE_HEAD "  - {context: 33, blocks: [0, 1, 2]}\n"
		     "  - {context: 20, blocks: [3, 1]}\n", 6, 31,
		     "sequences[1].blocks[1]: block 1 is already used by sequences[0]");
	expect_error(TABLE_HEAD "  - {context: 33}\n", 5, 5,
		     "sequences[0].blocks: missing required key (cache.placement is table)");
	/* "  - {context: 33, " is 18 characters: the key 'blocks' at 19. */
	expect_error(BASE "sequences:\n  - {context: 33, blocks: [0, 1, 2]}\n", 4, 19,
		     "sequences[0].blocks: only allowed with cache.placement: table (placement is shuffled)");
}

static void npy_excludes_the_generator(void **state)
{
	struct fs_case c;
	struct fs_err err;

	(void)state;
	/* "  k: {npy: k.npy, " is 18 characters. */
	expect_error(BASE SEQ "data:\n  k: {npy: k.npy, dist: uniform}\n", 6, 19,
		     "data.k.dist: cannot be combined with npy (the tensor is read from the file)");
	expect_error(BASE SEQ "data:\n  q:\n    outlier_channels: [1]\n    npy: q.npy\n", 7, 5,
		     "data.q.outlier_channels: cannot be combined with npy");
	/* npy: "" means generate, so the generator keys are fine. */
	assert_int_equal(load(BASE SEQ "data:\n  q: {npy: \"\", dist: sign}\n",
			      &c, &err), FS_OK);
	assert_int_equal(c.q.dist, DIST_SIGN);
	assert_string_equal(c.q.npy, "");
}

static void failed_load_frees_block_tables(void **state)
{
	(void)state;
	/* Tables are allocated before quant/data/check are read: an error
	 * there, or in the second table, must free the first (ASan checks). */
	expect_error(TABLE_HEAD "  - {context: 33, blocks: [0, 1, 2]}\n"
		     "check: {buckets: 0}\n", 6, 18, "check.buckets");
	expect_error(TABLE_HEAD "  - {context: 33, blocks: [0, 1, 2]}\n"
		     "  - {context: 1, blocks: [x]}\n", 6, 27,
		     "sequences[1].blocks[0]: expected an integer, found 'x'");
}

/* ---- print / load round trip ---------------------------------------- */

static char *print_to_string(const struct fs_case *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	case_print(f, c);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Field-for-field equality, block lists compared by content. */
static void assert_same_case(const struct fs_case *a, const struct fs_case *b)
{
	struct fs_case x, y;

	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	assert_int_equal(x.n_seqs, y.n_seqs);
	for (int s = 0; s < x.n_seqs; s++) {
		assert_int_equal(x.seqs[s].n_blocks, y.seqs[s].n_blocks);
		if (x.seqs[s].n_blocks)
			assert_memory_equal(x.seqs[s].blocks, y.seqs[s].blocks,
					    (size_t)x.seqs[s].n_blocks * sizeof(int));
		x.seqs[s].blocks = y.seqs[s].blocks = NULL;
	}
	memset(x.file, 0, sizeof(x.file));
	memset(y.file, 0, sizeof(y.file));
	/* where each key sat in the text: the printed text lays them out anew */
	memset(x.at, 0, sizeof(x.at)), x.n_at = 0;
	memset(y.at, 0, sizeof(y.at)), y.n_at = 0;
	assert_memory_equal(&x, &y, sizeof(x));
}

static void round_trip(const char *text)
{
	struct fs_case c1, c2, c3;
	struct fs_err err;
	char *t1, *t2;

	if (load(text, &c1, &err))
		fail_msg("%d:%d: %s", err.line, err.col, err.msg);
	t1 = print_to_string(&c1);
	if (case_load_text(t1, strlen(t1), "printed.yaml", NULL, &c2, &err))
		fail_msg("printed text does not load: %d:%d: %s\n%s", err.line,
			 err.col, err.msg, t1);
	t2 = print_to_string(&c2);
	assert_string_equal(t1, t2);
	assert_same_case(&c1, &c2);
	/* And once more, from the second text. */
	assert_int_equal(case_load_text(t2, strlen(t2), "p2.yaml", NULL, &c3, &err),
			 FS_OK);
	assert_same_case(&c1, &c3);
	free(t1);
	free(t2);
	case_free(&c1);
	case_free(&c2);
	case_free(&c3);
}

static void print_load_round_trip(void **state)
{
	char big[8192];
	size_t at;

	(void)state;
	round_trip(BASE SEQ);
	round_trip(full_text);
	round_trip(prefill_text);
	round_trip(table_text);
	round_trip(BASE "description: \"tab\\there, newline\\n, quote \\\" and \\\\, \\u00e9\"\n"
		   "isa: profiles/gfx936.yaml\n" SEQ
		   "data: {q: {mean: -0.0, scale: 0.1}, k: {npy: \"dir with space/k.npy\"}}\n"
		   "check: {score_nmse_max: 3.3333333333333335e-7, top1_min: 0}\n");
	round_trip("fragsim: 1\nname: -lead.dash\n" SEQ);
	/* Characters a reader folds (NEL, LS, PS) or refuses (C1, DEL). */
	round_trip(BASE "description: \"a\\Nb\\Lc\\Pd\\x80e\\x9f\\x7f\\x01 \u00e9\u4e2d\"\n" SEQ);
	/* A table long enough to wrap the printed list. */
	at = (size_t)snprintf(big, sizeof(big), "%s",
			      BASE "cache: {placement: table, block_size: 1, num_blocks: 100}\n"
			      "sequences:\n  - {context: 40, blocks: [");
	for (int i = 0; i < 40; i++)
		at += (size_t)snprintf(big + at, sizeof(big) - at, "%s%d", i ? ", " : "",
				       99 - 2 * i);
	snprintf(big + at, sizeof(big) - at, "]}\n  - {context: 3, blocks: [0, 2, 4]}\n");
	round_trip(big);
}

static void printed_defaults_are_explicit(void **state)
{
	struct fs_case c;
	struct fs_err err;
	char *t;

	(void)state;
	assert_int_equal(load(BASE SEQ, &c, &err), FS_OK);
	t = print_to_string(&c);
	assert_non_null(strstr(t, "  softmax_scale: auto  # 0.0625\n"));
	assert_non_null(strstr(t, "  num_blocks: 9  # 7 needed + 2 spare\n"));
	assert_non_null(strstr(t, "  - {context: 100, tokens: 1}\n"));
	assert_non_null(strstr(t, "    outlier_scale: 10\n"));
	assert_non_null(strstr(t, "  # kld_p99_max: not checked\n"));
	assert_non_null(strstr(t, "golden: [inputs, acc, out]\n"));
	free(t);
	case_free(&c);
}

/* ---- files and paths ------------------------------------------------ */

static void paths_resolve_against_the_case_directory(void **state)
{
	char dir[] = "/tmp/fragsim-case-XXXXXX", path[512], want[600];
	const char *t;
	struct fs_case c;
	struct fs_err err;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/case.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(BASE "isa: prof.yaml\n" SEQ
	      "data:\n  q: {npy: q.npy}\n  k: {npy: /abs/k.npy}\n  v: {npy: sub/v.npy}\n", f);
	fclose(f);
	assert_int_equal(case_load_file(path, &c, &err), FS_OK);
	assert_string_equal(c.file, path);
	snprintf(want, sizeof(want), "%s/prof.yaml", dir);
	assert_string_equal(c.isa, want);
	snprintf(want, sizeof(want), "%s/q.npy", dir);
	assert_string_equal(c.q.npy, want);
	assert_string_equal(c.k.npy, "/abs/k.npy");
	snprintf(want, sizeof(want), "%s/sub/v.npy", dir);
	assert_string_equal(c.v.npy, want);
	case_free(&c);
	unlink(path);
	rmdir(dir);

	/* Builtin names are not paths; .yml is; dir NULL or "." leaves them. */
	t = BASE "isa: gfx936-quad\n" SEQ;
	assert_int_equal(case_load_text(t, strlen(t), "x", "cases/edge", &c, &err),
			 FS_OK);
	assert_string_equal(c.isa, "gfx936-quad");
	t = BASE "isa: my/p.yml\n" SEQ;
	assert_int_equal(case_load_text(t, strlen(t), "x", "cases/edge", &c, &err),
			 FS_OK);
	assert_string_equal(c.isa, "cases/edge/my/p.yml");
	assert_int_equal(case_load_text(t, strlen(t), "x", ".", &c, &err), FS_OK);
	assert_string_equal(c.isa, "my/p.yml");
	assert_int_equal(case_load_text(t, strlen(t), "x", NULL, &c, &err), FS_OK);
	assert_string_equal(c.isa, "my/p.yml");
}

static void file_errors(void **state)
{
	struct fs_case c;
	struct fs_err err;
	char *path, *big;

	(void)state;
	assert_int_equal(case_load_file("/nonexistent/case.yaml", &c, &err), FS_EINPUT);
	assert_string_equal(err.file, "/nonexistent/case.yaml");
	assert_non_null(strstr(err.msg, "cannot open"));
	/* Over 1 MiB: refused before parsing. */
	big = malloc(CASE_MAX_FILE_BYTES + 2);
	memset(big, '#', CASE_MAX_FILE_BYTES + 1);
	big[CASE_MAX_FILE_BYTES + 1] = '\0';
	path = tu_write_temp(".yaml", big);
	assert_int_equal(case_load_file(path, &c, &err), FS_EBUDGET);
	assert_non_null(strstr(err.msg, "the file needs 1048577 bytes, over the limit of 1048576 bytes ("));
	assert_int_equal(case_load_text(big, CASE_MAX_FILE_BYTES + 1, "b.yaml", NULL,
					&c, &err), FS_EBUDGET);
	assert_non_null(strstr(err.msg, "the case file needs 1048577 bytes, over the limit of 1048576 bytes ("));
	unlink(path);
	free(path);
	free(big);
	/* A good file loads, and err is untouched by success. */
	path = tu_write_temp(".yaml", BASE SEQ);
	assert_int_equal(case_load_file(path, &c, &err), FS_OK);
	assert_int_equal(c.num_blocks, 9);
	case_free(&c);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(minimal_case_has_every_default),
		cmocka_unit_test(full_case_reads_every_key),
		cmocka_unit_test(prefill_sequences),
		cmocka_unit_test(explicit_table),
		cmocka_unit_test(the_documented_example_error),
		cmocka_unit_test(unknown_and_repeated_keys),
		cmocka_unit_test(wrong_types),
		cmocka_unit_test(out_of_range),
		cmocka_unit_test(deep_nesting_is_refused),
		cmocka_unit_test(names_versions_and_documents),
		cmocka_unit_test(heads_must_group),
		cmocka_unit_test(sequence_keys_follow_the_mode),
		cmocka_unit_test(sums_over_sequences),
		cmocka_unit_test(num_blocks_rules),
		cmocka_unit_test(thresholds_need_a_key),
		cmocka_unit_test(table_errors),
		cmocka_unit_test(npy_excludes_the_generator),
		cmocka_unit_test(failed_load_frees_block_tables),
		cmocka_unit_test(print_load_round_trip),
		cmocka_unit_test(printed_defaults_are_explicit),
		cmocka_unit_test(paths_resolve_against_the_case_directory),
		cmocka_unit_test(file_errors),
	};

	return cmocka_run_group_tests_name("case", tests, NULL, NULL);
}
