/*
 * test_kernel.c - the kernel's assumptions (sim/attn/kernel.h) and fragsim
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
 *   - the three page walks (table, none, identity) give the accumulators
 *     computed here from the block table by hand;
 *   - keys a buggy mask lets through past the block table or the pool
 *     read poison (NaN), never abort;
 *   - the rules that make a class not applicable, and mutate's n/a;
 *   - the mapping and addressing classes of issue 22 (k_scale_walk,
 *     v_page_walk, block_size_assumed, scale_recovery no_k/no_q_scale,
 *     k_scale_index first_key, gqa_map kv_divide/spill/grid_permuted,
 *     operand_load, c_rows) against tests/bugmodel.h, a plain-loop
 *     model of the buggy kernel that shares no code with sim/;
 * then the suites: the shipped one catches every class, the article's
 * weak one (contiguous pages, block-aligned contexts) lets exactly
 * tail_mask, page_walk none, pv_mask none and mask_value finite and
 * additive through, and every cases/mutations/ case is caught as it
 * expects. The softmax and mask classes are checked against a model of
 * each buggy kernel in tests/test_softmax_bugs.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <glob.h>
#include <math.h>

#include "../lib/profile.h"
#include "../lib/runcase.h"
#include "bugmodel.h"
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

/* Load a case from YAML text and build its inputs. */
static void load_text(struct runcase *r, const char *text)
{
	char *path = tu_write_temp(".yaml", text);
	struct fs_err err;

	if (runcase_load(path, r, &err) != FS_OK || runcase_inputs(r, &err) != FS_OK)
		fail_msg("%s", err.msg);
	unlink(path);
	free(path);
}

/* K byte of (physical block, slot, kv head g, dim): [NB][Hkv][D/16][BS][16]. */
static int k_byte(const struct runcase *r, int blk, int slot, int g, int dim)
{
	return r->in.k_cache[((((size_t)blk * HKV + g) * (D / 16) + dim / 16) * r->in.BS +
			      slot) * 16 + dim % 16];
}

/*
 * The page walks by hand, for three sequences of 40, 23 and 16 keys
 * (blocks of 16: 3, 2 and 1 of them) and the block table written in the
 * case: {4, 0, 2}, {5, 1}, {3}, in a pool of 7 (block 6 unused, poison).
 * A kernel that takes a sequence's blocks as consecutive (none) starts
 * them at 0, 3 and 5; one that never reads the table (identity) reads
 * logical block b of every sequence as physical block b. Every
 * accumulator is the dot product of Q with the K bytes at that block (a
 * key past the table loads 0), so each walk's acc is computed here from
 * these tables and the paged cache alone.
 */
static void page_walks_by_hand(void **state)
{
	static const int ctx[] = { 40, 23, 16 };
	static const int blk[3][3][3] = {
		{ { 4, 0, 2 }, { 5, 1 }, { 3 } },	/* block_table */
		{ { 0, 1, 2 }, { 3, 4 }, { 5 } },	/* none */
		{ { 0, 1, 2 }, { 0, 1 }, { 0 } },	/* identity */
	};
	static const enum kern_bug plant[] = { BUG_COUNT, BUG_PAGE_WALK, BUG_PAGE_IDENTITY };
	struct runcase r;
	struct attn_result sim[3];
	long none_vs_id = 0;

	(void)state;
	load_text(&r, "fragsim: 1\nname: walks\ncache: {placement: table, num_blocks: 7}\n"
		  "sequences:\n  - {context: 40, blocks: [4, 0, 2]}\n"
		  "  - {context: 23, blocks: [5, 1]}\n  - {context: 16, blocks: [3]}\n"
		  "data: {seed: 8}\n");
	for (int w = 0; w < 3; w++) {
		emulate(&r, plant[w], &sim[w]);
		assert_int_equal(sim[w].n_tiles, HKV * (3 + 2 + 1));
		for (size_t t = 0; t < sim[w].n_tiles; t++) {
			int s = sim[w].acc_tiles[t * ATTN_TILE_COLS], g = sim[w].acc_tiles[t * ATTN_TILE_COLS + 1];
			int kb = sim[w].acc_tiles[t * ATTN_TILE_COLS + 3];

			for (int lane = 0; lane < 64; lane++)
				for (int e = 0; e < 4; e++) {
					int row = lane % 16, key = kb + lane / 16 + 4 * e;
					int b = key / 16, qh = g * G + row % G;
					int32_t want = 0;

					for (int d = 0; b < (ctx[s] + 15) / 16 && d < D; d++)
						want += r.in.q_int8[((size_t)s * 24 + qh) * D + d] *
							k_byte(&r, blk[w][s][b], key % 16, g, d);
					assert_int_equal(sim[w].acc[(t * 64 + lane) * 4 + e], want);
				}
		}
	}
	/* Not vacuous: the walks read other blocks, and none and identity
	 * part in sequences 1 and 2. */
	assert_memory_not_equal(sim[1].acc, sim[0].acc, sim[0].n_tiles * 256 * sizeof(int32_t));
	assert_memory_not_equal(sim[2].acc, sim[0].acc, sim[0].n_tiles * 256 * sizeof(int32_t));
	for (size_t i = 0; i < sim[0].n_tiles * 256; i++)
		none_vs_id += sim[1].acc[i] != sim[2].acc[i];
	assert_true(none_vs_id > 0);
	for (int w = 0; w < 3; w++)
		attn_free(&sim[w]);
	runcase_free(&r);
}

/*
 * block_offset dense on a pool whose blocks are two dense blocks apart
 * (block_stride 32768 = 2 x Hkv 4 x D 256 x BS 16): the kernel reads
 * block b's K at b * 16384, so block 1 reads block 0's padding (poison,
 * -128), block 2 reads block 1's start and block 3 block 1's padding.
 * Every acc of the table walk [3, 1, 2], computed here from the bytes
 * the kernel addresses (k_cache[b * 16384 + ((g * 16 + d / 16) * 16 +
 * slot) * 16 + d % 16]), and the correct kernel's from b * 32768.
 */
static void block_offset_dense_by_hand(void **state)
{
	static const int blocks[] = { 3, 1, 2 };
	struct runcase r;
	struct attn_result sim[2];

	(void)state;
	load_text(&r, "fragsim: 1\nname: boff\n"
		  "cache: {placement: table, num_blocks: 4, block_stride: 32768}\n"
		  "sequences:\n  - {context: 40, blocks: [3, 1, 2]}\n"
		  "data: {seed: 8}\n");
	emulate(&r, BUG_COUNT, &sim[0]);
	emulate(&r, BUG_BLOCK_OFFSET, &sim[1]);
	for (int w = 0; w < 2; w++) {
		size_t stride = w ? 16384 : 32768;

		assert_int_equal(sim[w].n_tiles, HKV * 3);
		for (size_t t = 0; t < sim[w].n_tiles; t++) {
			int g = sim[w].acc_tiles[t * ATTN_TILE_COLS + 1];
			int kb = sim[w].acc_tiles[t * ATTN_TILE_COLS + 3];

			for (int lane = 0; lane < 64; lane++)
				for (int e = 0; e < 4; e++) {
					int row = lane % 16, key = kb + lane / 16 + 4 * e;
					int qh = g * G + row % G;
					size_t b0 = (size_t)blocks[key / 16] * stride;
					int32_t want = 0;

					for (int d = 0; d < D; d++)
						want += r.in.q_int8[(size_t)qh * D + d] *
							r.in.k_cache[b0 + (((size_t)g * 16 + d / 16) * 16 +
									   key % 16) * 16 + d % 16];
					assert_int_equal(sim[w].acc[(t * 64 + lane) * 4 + e], want);
				}
		}
	}
	assert_memory_not_equal(sim[1].acc, sim[0].acc, sim[0].n_tiles * 256 * sizeof(int32_t));
	attn_free(&sim[0]);
	attn_free(&sim[1]);
	runcase_free(&r);
}

/*
 * block_offset int32 and u16 on a sparse pool of 4,194,304 blocks (16
 * KiB of K each: Hkv 4 x D 256 x BS 16) whose one sequence holds blocks
 * [262145, 1, 131073, 65537]. Only those four are stored, ascending: rows
 * 3, 0, 2, 1 of k_cache. By hand:
 *   int32: the byte offset b * 16384 taken modulo 2^32 as signed.
 *     262145 * 16384 = 2^32 + 16384 -> 16384: block 1;
 *     1 -> 16384: block 1;
 *     131073 * 16384 = 2^31 + 16384 -> negative: before the pool, every
 *     byte poison (-128);
 *     65537 * 16384 = 2^30 + 16384 < 2^31: block 65537 itself.
 *   u16: b & 0xffff: 262145 -> 1, 1 -> 1, 131073 -> 1, 65537 -> 1.
 * Every acc of each kernel, from the stored rows named here and the
 * paged layout, with the correct kernel's from the table.
 */
static void block_offset_int32_u16_by_hand(void **state)
{
	/* the stored row each kernel reads for logical blocks 0..3; -1 poison */
	static const int rows[3][4] = {
		{ 3, 0, 2, 1 },		/* correct: 262145, 1, 131073, 65537 */
		{ 0, 0, -1, 1 },	/* int32 */
		{ 0, 0, 0, 0 },		/* u16: every one is block 1 */
	};
	static const enum kern_bug plant[] = { BUG_COUNT, BUG_BLOCK_OFFSET_INT32,
					       BUG_BLOCK_OFFSET_U16 };
	static const int32_t stored[] = { 1, 65537, 131073, 262145 };
	struct runcase r;
	struct attn_result sim[3];

	(void)state;
	load_text(&r, "fragsim: 1\nname: wrap\n"
		  "cache: {placement: table, num_blocks: 4194304}\n"
		  "sequences:\n  - {context: 64, blocks: [262145, 1, 131073, 65537]}\n"
		  "data: {seed: 8}\n");
	assert_int_equal(r.in.NB, 4194304);
	assert_int_equal(r.in.NM, 4);
	assert_non_null(r.in.pool_blocks);
	assert_memory_equal(r.in.pool_blocks, stored, sizeof(stored));
	for (int w = 0; w < 3; w++) {
		emulate(&r, plant[w], &sim[w]);
		assert_int_equal(sim[w].n_tiles, HKV * 4);
		for (size_t t = 0; t < sim[w].n_tiles; t++) {
			int g = sim[w].acc_tiles[t * ATTN_TILE_COLS + 1];
			int kb = sim[w].acc_tiles[t * ATTN_TILE_COLS + 3];

			for (int lane = 0; lane < 64; lane++)
				for (int e = 0; e < 4; e++) {
					int row = lane % 16, key = kb + lane / 16 + 4 * e;
					int qh = g * G + row % G, m = rows[w][key / 16];
					int32_t want = 0;

					for (int d = 0; d < D; d++)
						want += r.in.q_int8[(size_t)qh * D + d] *
							(m < 0 ? -128 : k_byte(&r, m, key % 16, g, d));
					assert_int_equal(sim[w].acc[(t * 64 + lane) * 4 + e], want);
				}
		}
	}
	for (int w = 1; w < 3; w++) {
		assert_memory_not_equal(sim[w].acc, sim[0].acc, sim[0].n_tiles * 256 * sizeof(int32_t));
		assert_memory_not_equal(sim[w].out, sim[0].out, 24 * D * sizeof(float));
	}
	for (int w = 0; w < 3; w++)
		attn_free(&sim[w]);
	runcase_free(&r);
}

/*
 * cache.window_blocks free, by hand: a window of 25 keys, blocks of 8,
 * one decode sequence of 100 keys over the table [3, 12, 0, 7, 9, 1, 15,
 * 4, 11, 2, 6, 13, 8]. The query at 99 sees keys 75..99, so blocks 0..8
 * (keys 0..71) lie wholly behind: their entries are -1 and blocks 3, 12,
 * 0, 7, 9, 1, 15, 4, 11 hold poison. Tiles 64, 80 and 96 run; the
 * correct kernel loads 0 for keys 64..71 (a freed entry is checked, not
 * followed), so their accumulators are 0 exactly. A kernel that still
 * reads them (modelled here: K bytes -128, the poison of a block no one
 * wrote, so acc = -128 * sum of the Q row) is caught by the exact acc
 * check, at key 64.
 */
static void window_blocks_free_by_hand(void **state)
{
	static const int table[] = { 3, 12, 0, 7, 9, 1, 15, 4, 11, 2, 6, 13, 8 };
	struct runcase r;
	struct attn_result sim;
	struct compare_report rep;
	struct fs_err err;
	long freed_slots = 0;

	(void)state;
	load_text(&r, "fragsim: 1\nname: wfree\nmodel: {sliding_window: 25}\n"
		  "cache: {block_size: 8, placement: table, num_blocks: 16, window_blocks: free}\n"
		  "sequences:\n  - {context: 100, blocks: [3, 12, 0, 7, 9, 1, 15, 4, 11, 2, 6, 13, 8]}\n"
		  "data: {seed: 8}\n");
	for (int b = 0; b < 13; b++)
		assert_int_equal(r.in.block_table[b], b < 9 ? -1 : table[b]);
	for (int b = 0; b < 9; b++)
		for (int slot = 0; slot < 8; slot++)
			assert_int_equal(k_byte(&r, table[b], slot, 0, 0), -128);
	emulate(&r, BUG_COUNT, &sim);
	assert_int_equal(sim.n_tiles, HKV * 3);
	for (size_t t = 0; t < sim.n_tiles; t++) {
		int g = sim.acc_tiles[t * ATTN_TILE_COLS + 1];
		int kb = sim.acc_tiles[t * ATTN_TILE_COLS + 3];

		for (int lane = 0; lane < 64; lane++)
			for (int e = 0; e < 4; e++) {
				int row = lane % 16, key = kb + lane / 16 + 4 * e;
				int qh = g * G + row % G;
				int32_t want = 0;

				for (int d = 0; key / 8 >= 9 && key / 8 < 13 && d < D; d++)
					want += r.in.q_int8[(size_t)qh * D + d] *
						k_byte(&r, table[key / 8], key % 8, g, d);
				assert_int_equal(sim.acc[(t * 64 + lane) * 4 + e], want);
			}
	}
	assert_int_equal(runcase_compare(&r, &r.c, &sim, &rep, &err), FS_OK);
	/* the kernel that reads the freed blocks */
	for (size_t t = 0; t < sim.n_tiles; t++) {
		int g = sim.acc_tiles[t * ATTN_TILE_COLS + 1];
		int kb = sim.acc_tiles[t * ATTN_TILE_COLS + 3];

		for (int lane = 0; lane < 64; lane++)
			for (int e = 0; e < 4; e++) {
				int row = lane % 16, key = kb + lane / 16 + 4 * e;
				int qh = g * G + row % G;
				int32_t bad = 0;

				if (key / 8 >= 9)
					continue;
				for (int d = 0; d < D; d++)
					bad += r.in.q_int8[(size_t)qh * D + d] * -128;
				sim.acc[(t * 64 + lane) * 4 + e] = bad;
				freed_slots++;
			}
	}
	assert_int_equal(freed_slots, HKV * 64 * 2);	/* keys 64..71: e 0 and 1 */
	assert_int_equal(runcase_compare(&r, &r.c, &sim, &rep, &err), FS_MISMATCH);
	assert_true(rep.stat[CMP_ACC].mismatches > 0);
	assert_int_equal(rep.stat[CMP_ACC].first.key, 64);
	attn_free(&sim);
	runcase_free(&r);
}

/*
 * tail_mask contiguous lets keys past the context through, and their K
 * scale and V then come from outside the block table (a -1 entry, an
 * index past the table's row, or, ignoring the table, past the pool).
 * That read is poison, as on a device (NaN scale and V), not an abort.
 * By hand, on gfx936: column n of a tile sits in lane 16 * (n % 4),
 * register n / 4, which the contiguous belief takes for column
 * 4 * (n % 4) + n / 4; with v keys left in the tile, the mask passes
 * column n iff that is < v. So key kb + n scores as the correct kernel
 * when it is real and passed, -inf when not passed, NaN when passed but
 * past the context; and the NaN reaches the row's softmax sum.
 */
static void masked_reads_outside_the_table_are_poison(void **state)
{
	static const struct {
		const char *yaml;
		int plant_identity;
	} cs[] = {
		/* the case: block 1 of sequence 0 is -1 */
		{ "cache: {block_size: 8, placement: shuffled}\n"
		  "sequences:\n  - {context: 7}\n  - {context: 40}\n", 0 },
		/* block size 1: keys 8, 9, 12 are past the table's row of 7 */
		{ "cache: {block_size: 1, spare_blocks: 0, placement: contiguous}\n"
		  "sequences:\n  - {context: 7}\n", 0 },
		/* and, with the table ignored, past the pool of 7 blocks */
		{ "cache: {block_size: 1, spare_blocks: 0, placement: contiguous}\n"
		  "sequences:\n  - {context: 7}\n", 1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		struct attn_result ok, bad;
		struct runcase r;
		struct fs_case c;
		struct fs_err err;
		char text[512];
		long nan_scores = 0;

		snprintf(text, sizeof(text), "fragsim: 1\nname: leak\n%sdata: {seed: 9}\n", cs[i].yaml);
		load_text(&r, text);
		emulate(&r, BUG_COUNT, &ok);
		c = r.c;
		assert_int_equal(kernel_plant(&c.kernel, BUG_TAIL_MASK, D), 0);
		if (cs[i].plant_identity)
			assert_int_equal(kernel_plant(&c.kernel, BUG_PAGE_IDENTITY, D), 0);
		assert_int_equal(runcase_emulate(&r, &c, NULL, &bad, &err), FS_OK);
		for (int s = 0; s < r.c.n_seqs; s++) {
			int ctx = r.c.seqs[s].context, kb = (ctx - 1) / 16 * 16, left = ctx - kb;
			int maxctx = r.in.MAXCTX;

			for (int qh = 0; qh < 24; qh++) {
				size_t row = (size_t)s * 24 + qh;

				for (int key = 0; key < maxctx; key++) {
					int n = key - kb, pass = n < 0 ||
						   (n < 16 && 4 * (n % 4) + n / 4 < left);
					float got = bad.scores[row * maxctx + key];
					float want = ok.scores[row * maxctx + key];

					if (pass && key >= ctx) {
						assert_true(isnan(got));
						nan_scores++;
					} else if (!pass) {
						assert_true(got == -INFINITY);
					} else {
						assert_true(got == want);
					}
				}
				/* The leaked NaN is in the row's softmax sum; the
				 * output it leaves is not the correct one. */
				assert_true(isnan(bad.row_sum[row]));
				for (int d = 0; d < D; d++)
					assert_false(bad.out[row * D + d] == ok.out[row * D + d]);
			}
		}
		/* Keys 8, 9 and 12 of the 7-key sequence, where scores has
		 * room for them (40 keys in the first case, 7 in the others). */
		assert_int_equal(nan_scores, 24 * (i == 0 ? 3 : 0));
		attn_free(&ok);
		attn_free(&bad);
		runcase_free(&r);
	}
}

/*
 * When a class cannot apply to a case, or cannot change anything in it
 * (docs/bug-classes.md: the table of rules), worked out here per
 * rule: e.g. gqa_map modulo gives q head h kv head h % Hkv, divide gives
 * h / G; with Hkv = 1 both are 0, with G = 1 both are h. NULL: applies.
 */
static void inapplicable_classes_by_rule(void **state)
{
	static const struct {
		const char *yaml;	/* model, cache, isa, split_k lines */
		enum kern_bug b;
		const char *why;
	} t[] = {
		{ "", BUG_GQA_MAP, NULL },			/* 24 q, 4 kv */
		{ "model: {q_heads: 4, kv_heads: 1}\n", BUG_GQA_MAP, "kv_heads 1:" },
		{ "model: {q_heads: 4, kv_heads: 4}\n", BUG_GQA_MAP, "GQA group of 1" },
		{ "", BUG_HEAD_DIM_LOADED, NULL },		/* 128 = 4 K-steps */
		/* 48 dims: one K-step and one zero-padded past dim 48 */
		{ "model: {head_dim: 96}\n", BUG_HEAD_DIM_LOADED, NULL },
		{ "model: {head_dim: 32}\n", BUG_HEAD_DIM_LOADED, NULL },
		/* RDNA3's K-step is 16 wide: 16 of 32 dims is one */
		{ "model: {head_dim: 32}\nisa: rdna3-wmma-i32-16x16x16-iu8-w32\n",
		  BUG_HEAD_DIM_LOADED, NULL },
		{ "", BUG_K_SCALE_INDEX, NULL },
		{ "cache: {k_scale: per_block32}\n", BUG_K_SCALE_INDEX, NULL },
		{ "cache: {k_scale: per_tensor}\n", BUG_K_SCALE_INDEX, "per_tensor" },
		{ "cache: {k_scale: per_head}\n", BUG_K_SCALE_INDEX, "every key of a kv head" },
		{ "", BUG_C_COLUMNS, NULL },
		{ "isa: sm80-mma-m16n8k32-s8\n", BUG_C_COLUMNS, "already are adjacent columns" },
		{ "isa: sm80-mma-m16n8k32-s8\n", BUG_TAIL_MASK, "already are adjacent columns" },
		{ "isa: sm80-mma-m16n8k32-s8\n", BUG_TRANSPOSE, "already are adjacent columns" },
		{ "isa: sm80-mma-m16n8k32-s8\n", BUG_OPERAND_ORDER, "16x8 tile" },
		{ "", BUG_OPERAND_ORDER, NULL },
		{ "", BUG_PAGE_WALK, NULL },
		{ "cache: {spare_blocks: 0}\n", BUG_PAGE_WALK, "one block" },
		{ "cache: {spare_blocks: 0}\n", BUG_PAGE_IDENTITY, "one block" },
		{ "", BUG_SPLIT_MERGE, "no context is cut" },
		{ "split_k: {segment: 8}\n", BUG_SPLIT_MERGE, NULL },
		{ "cache: {k_scale: per_tensor}\n", BUG_SCALE_RECOVERY, NULL },
		{ "model: {q_heads: 4, kv_heads: 4}\n", BUG_Q_POSITION, NULL },
		/* h-bugs-a: a poisoned masked slot, a finite sentinel, a
		 * chunk start and a tile-rounded offset need no shape; NaN
		 * scores need K scales per token; a window edge a window;
		 * future and off_by_one a sequence of more than one token. */
		{ "", BUG_PV_MASK, NULL },
		{ "cache: {k_scale: per_tensor}\n", BUG_PV_MASK, NULL },
		{ "", BUG_MASK_FINITE, NULL },
		{ "", BUG_MASK_ADDITIVE, NULL },
		{ "cache: {k_scale: per_block32}\n", BUG_MASK_ADDITIVE, NULL },
		{ "cache: {k_scale: per_tensor}\n", BUG_MASK_ADDITIVE, "per_tensor" },
		{ "", BUG_WINDOW_INCLUSIVE, "no sliding window" },
		{ "", BUG_WINDOW_EXCLUSIVE, "no sliding window" },
		{ "model: {head_dim: 128, sliding_window: 4}\n", BUG_WINDOW_INCLUSIVE, NULL },
		{ "model: {head_dim: 128, sliding_window: 4}\n", BUG_WINDOW_EXCLUSIVE, NULL },
		{ "", BUG_Q_CHUNK_KEYS, NULL },
		{ "", BUG_Q_TILE_ROUNDED, NULL },
		{ "", BUG_Q_FUTURE, "one query token per sequence" },
		{ "", BUG_Q_OFF_BY_ONE, "one query token per sequence" },
		{ "", BUG_CAP_DROPPED, "no soft cap" },
		{ "", BUG_CAP_EXP_TANH, "no soft cap" },
		{ "model: {head_dim: 128, soft_cap: 5}\n", BUG_CAP_AFTER_MASK, NULL },
		{ "", BUG_ALIBI_SIGN, "no ALiBi" },
		{ "model: {head_dim: 128, alibi: true}\n", BUG_ALIBI_OFFSET, NULL },
		{ "", BUG_EXP2_NO_LOG2E, NULL },
		{ "", BUG_MERGE_EMPTY_NAN, "no context is cut" },
		{ "split_k: {segment: 8}\n", BUG_MERGE_EMPTY_NAN, "every query sees a key" },
		{ "split_k: {segment: 8}\n", BUG_MERGE_STALE_LSE, "every query sees a key" },
		{ "model: {head_dim: 128, sliding_window: 4}\nsplit_k: {segment: 8}\n",
		  BUG_MERGE_STALE_LSE, NULL },
		/* h-bugs-c */
		{ "", BUG_BLOCK_OFFSET, "the pool is dense" },
		/* int32: a pool block past 2^31 bytes (head_dim 128: blocks
		 * of 8 KiB, so past block 262,143); u16: past block 65,535.
		 * By the pool's size, whatever the placement names. */
		{ "", BUG_BLOCK_OFFSET_INT32, "no pool past 2 GiB" },
		{ "", BUG_BLOCK_OFFSET_U16, "no pool past 65,536 blocks" },
		{ "cache: {placement: reversed, num_blocks: 65536}\n", BUG_BLOCK_OFFSET_U16,
		  "no pool past 65,536 blocks" },
		{ "cache: {placement: reversed, num_blocks: 65537}\n", BUG_BLOCK_OFFSET_U16, NULL },
		{ "cache: {placement: reversed, num_blocks: 262144}\n", BUG_BLOCK_OFFSET_INT32,
		  "no pool past 2 GiB" },
		{ "cache: {placement: reversed, num_blocks: 262145}\n", BUG_BLOCK_OFFSET_INT32, NULL },
		{ "cache: {placement: contiguous, num_blocks: 4194304}\n", BUG_BLOCK_OFFSET_INT32, NULL },
		/* head_dim 128: one block is 4 x 128 x 16 = 8192 elements */
		{ "cache: {block_stride: 8192}\n", BUG_BLOCK_OFFSET, "the pool is dense" },
		{ "cache: {block_stride: 8208}\n", BUG_BLOCK_OFFSET, NULL },
		/* h-bugs-b */
		{ "", BUG_K_SCALE_WALK, NULL },
		{ "cache: {k_scale: per_tensor}\n", BUG_K_SCALE_WALK, "per_tensor" },
		{ "cache: {k_scale: per_head}\n", BUG_K_SCALE_WALK, "k_scale per_head: one scale a kv head" },
		{ "cache: {k_scale: per_head}\n", BUG_MASK_ADDITIVE, "k_scale per_head: no score is NaN" },
		{ "cache: {k_scale: per_token_head}\n", BUG_MASK_ADDITIVE, NULL },
		{ "cache: {spare_blocks: 0}\n", BUG_K_SCALE_WALK, "one block" },
		{ "cache: {spare_blocks: 0}\n", BUG_V_PAGE_WALK, "one block" },
		{ "cache: {k_scale: per_tensor}\n", BUG_V_PAGE_WALK, NULL },
		{ "", BUG_BLOCK_SIZE, "block_size 16" },
		{ "cache: {block_size: 8}\n", BUG_BLOCK_SIZE, NULL },
		{ "cache: {block_size: 1}\n", BUG_BLOCK_SIZE, NULL },
		{ "cache: {k_scale: per_tensor}\n", BUG_SCALE_NO_K, NULL },
		{ "cache: {k_scale: per_tensor}\n", BUG_SCALE_NO_Q, NULL },
		{ "", BUG_K_SCALE_FIRST, NULL },
		{ "cache: {k_scale: per_block32}\n", BUG_K_SCALE_FIRST, NULL },
		{ "cache: {k_scale: per_tensor}\n", BUG_K_SCALE_FIRST, "per_tensor" },
		/* kv_divide: prefill h / 4 vs h / 6; decode 6g / 4 = 0, 1, 3, 4 */
		{ "", BUG_GQA_KV_DIVIDE, NULL },
		{ "mode: prefill\nmodel: {q_heads: 16, kv_heads: 4}\n", BUG_GQA_KV_DIVIDE, "own kv head" },
		{ "model: {q_heads: 6, kv_heads: 2}\n", BUG_GQA_KV_DIVIDE, "own kv head" },	/* 3g / 2 = g */
		{ "model: {q_heads: 4, kv_heads: 1}\n", BUG_GQA_KV_DIVIDE, "own kv head" },
		{ "mode: prefill\nmodel: {q_heads: 4, kv_heads: 1}\n", BUG_GQA_KV_DIVIDE, NULL },
		{ "", BUG_GQA_GRID, "decode:" },
		{ "mode: prefill\nmodel: {q_heads: 8, kv_heads: 4}\n", BUG_GQA_GRID, NULL },
		{ "mode: prefill\nmodel: {q_heads: 16, kv_heads: 4}\n", BUG_GQA_GRID, "every q head once" },
		{ "mode: prefill\nmodel: {q_heads: 24, kv_heads: 4}\n", BUG_GQA_GRID, "passes q_heads" },
		{ "", BUG_GQA_SPILL, NULL },
		{ "model: {q_heads: 48, kv_heads: 2}\n", BUG_GQA_SPILL, NULL },	/* tile 1: heads 16..31 */
		{ "model: {q_heads: 64, kv_heads: 2}\n", BUG_GQA_SPILL, "lies in one group" },
		/* one group, G 4 < M 16: the kv head is right, but tile 0's rows
		 * past head 3 are zero where the replicated layout has replicas */
		{ "model: {q_heads: 4, kv_heads: 1}\n", BUG_GQA_SPILL, NULL },
		{ "model: {q_heads: 4, kv_heads: 1}\nkernel: {decode_rows: packed}\n", BUG_GQA_SPILL,
		  "lies in one group (G 4, kv_heads 1), and rows past the group are zero" },
		{ "mode: prefill\nmodel: {q_heads: 24, kv_heads: 4}\n", BUG_GQA_SPILL, "prefill:" },
		{ "model: {head_dim: 16}\n", BUG_LOAD_UNSWIZZLED, "one 16-byte chunk" },
		{ "model: {head_dim: 32}\n", BUG_LOAD_UNSWIZZLED, NULL },
		{ "model: {head_dim: 16}\n", BUG_LOAD_SWAP_K, NULL },
		/* c_rows: CDNA3 and RDNA4 hold rows of a column as a block */
		{ "", BUG_C_ROWS, "one entry of each C column" },
		{ "isa: cdna3-mfma-i32-16x16x32-i8\n", BUG_C_ROWS, NULL },
		{ "isa: cdna3-mfma-i32-32x32x16-i8\n", BUG_C_ROWS, NULL },
		{ "isa: rdna4-wmma-i32-16x16x16-iu8-w32\n", BUG_C_ROWS, NULL },
		{ "isa: rdna3-wmma-i32-16x16x16-iu8-w32\n", BUG_C_ROWS, "already are rows strided" },
		{ "isa: sm80-mma-m16n8k32-s8\n", BUG_C_ROWS, "already are rows strided" },
		/* ... but in a decode whose belief moves only replicas of the
		 * same q head or zero rows it is invisible: RDNA4 keeps row 0
		 * (r = 8(L/16) + e, believed 2e + L/16) */
		/* (a prefill's chunks are the suite's, not the model's: a chunk
		 * of one token is a survivor with a hint, see
		 * c_rows_survivor_hint) */
		{ "mode: prefill\nisa: rdna4-wmma-i32-16x16x16-iu8-w32\n"
		  "sequences:\n  - {history: 15, chunk: 1}\n", BUG_C_ROWS, NULL },
		{ "isa: rdna4-wmma-i32-16x16x16-iu8-w32\nmodel: {q_heads: 2, kv_heads: 2}\n",
		  BUG_C_ROWS, "G 1: every row the belief moves holds the same q head" },
		{ "isa: rdna4-wmma-i32-16x16x16-iu8-w32\nmodel: {q_heads: 4, kv_heads: 2}\n",
		  BUG_C_ROWS, NULL },
		/* packed, G 1: rows 1-15 are zero rows, row 0 stays */
		{ "isa: rdna4-wmma-i32-16x16x16-iu8-w32\nmodel: {q_heads: 2, kv_heads: 2}\n"
		  "kernel: {decode_rows: packed}\n", BUG_C_ROWS, "G 1" },
		{ "isa: cdna3-mfma-i32-32x32x16-i8\nmodel: {q_heads: 2, kv_heads: 2}\n",
		  BUG_C_ROWS, "G 1" },
		{ "isa: cdna3-mfma-i32-16x16x32-i8\n", BUG_C_COLUMNS, "rows of one column" },
		{ "isa: cdna3-mfma-i32-16x16x32-i8\n", BUG_TRANSPOSE, "rows of one column" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char text[512], buf[160], *path;
		struct runcase r;
		struct fs_err err;
		const char *why;

		snprintf(text, sizeof(text), "fragsim: 1\nname: na\n%s%s%s%s%s"
			 "data: {seed: 1}\n",
			 strstr(t[i].yaml, "model:") ? "" : "model: {head_dim: 128}\n", t[i].yaml,
			 strstr(t[i].yaml, "sequences:") ? "" : "sequences:\n  - ",
			 strstr(t[i].yaml, "sequences:") ? "" :
			 strstr(t[i].yaml, "prefill") ? "{history: 0, chunk: 16}" : "{context: 16}",
			 strstr(t[i].yaml, "sequences:") ? "" : "\n");
		path = tu_write_temp(".yaml", text);
		if (runcase_load(path, &r, &err) != FS_OK)
			fail_msg("%s: %s", t[i].yaml, err.msg);
		why = kernel_bug_na(t[i].b, &r.c, r.lm, buf, sizeof(buf));
		if (!t[i].why != !why || (why && !strstr(why, t[i].why)))
			fail_msg("%s%s: got '%s', want '%s'", t[i].yaml, kernel_bug(t[i].b)->key,
				 why ? why : "(applies)", t[i].why ? t[i].why : "(applies)");
		runcase_free(&r);
		unlink(path);
		free(path);
	}
}

/* The bytes of n elements of size z at a and b are the same (both NULL:
 * not made). */
static int same_bytes(const void *a, const void *b, size_t n, size_t z)
{
	return (!a && !b) || (a && b && memcmp(a, b, n * z) == 0);
}

/*
 * n tiles (or PV groups) named by rows of ATTN_TILE_COLS in ta and tb,
 * each of z bytes in xa and xb: the same set, tile by tile, in any order
 * (a kernel whose work units run in another order lists its tiles so; a
 * dump is read by its acc_tiles).
 */
static int same_tiles(const int32_t *ta, const int32_t *tb, size_t n,
		      const void *xa, const void *xb, size_t z)
{
	if (!ta || !tb || !xa || !xb)
		return !ta == !tb && !xa == !xb;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		while (j < n && memcmp(&ta[i * ATTN_TILE_COLS], &tb[j * ATTN_TILE_COLS],
				       ATTN_TILE_COLS * sizeof(int32_t)))
			j++;
		if (j == n || memcmp((const char *)xa + i * z, (const char *)xb + j * z, z))
			return 0;
	}
	return 1;
}

/* Which tensor of two emulations of head_dim hd differs first, or NULL
 * (hd passed: this file's D is a macro). */
static const char *first_difference(const struct attn_result *a, const struct attn_result *b,
				    size_t hd)
{
	size_t rows = (size_t)a->S * a->T * a->Hq;
	size_t acc = a->n_tiles * (size_t)a->ksteps_in_acc * a->wave * a->ec;
	size_t seg = rows * (size_t)a->nseg;

	if (a->n_tiles != b->n_tiles || a->n_groups != b->n_groups || a->nseg != b->nseg)
		return "the tile, group or segment count";
	if (!same_bytes(a->out, b->out, rows * hd, sizeof(float)))
		return "out";
	if (!same_bytes(a->scores, b->scores, rows * a->MAXCTX, sizeof(float)))
		return "scores";
	if (!same_tiles(a->acc_tiles, b->acc_tiles, a->n_tiles, a->acc, b->acc,
			acc / (a->n_tiles ? a->n_tiles : 1) * sizeof(int32_t)))
		return "acc (or acc_tiles)";
	if (!same_tiles(a->pv_tiles, b->pv_tiles, a->n_groups, a->p_int8, b->p_int8,
			(size_t)a->wave * a->pv_ea) ||
	    !same_tiles(a->pv_tiles, b->pv_tiles, a->n_groups, a->p_scale, b->p_scale,
			(size_t)a->rows * sizeof(float)) ||
	    !same_tiles(a->pv_tiles, b->pv_tiles, a->n_groups, a->pv_acc, b->pv_acc,
			(size_t)a->pv_dt * a->wave * a->ec * sizeof(int32_t)))
		return "p_int8, p_scale, pv_acc or pv_tiles";
	if (a->nseg > 1 && (!same_bytes(a->seg_max, b->seg_max, seg, sizeof(float)) ||
			    !same_bytes(a->seg_sum, b->seg_sum, seg, sizeof(float)) ||
			    !same_bytes(a->seg_out, b->seg_out, seg * hd, sizeof(float))))
		return "the split-K states";
	return NULL;
}

/*
 * n/a means the bug cannot change the case's result: on every edge case,
 * each class whose rule says n/a, planted (where it can be emulated at
 * all: operand_order kq on a 16x8 tile cannot), emulates to the correct
 * kernel's bytes in every tensor a dump can hold. A rule that said n/a
 * where the bytes differ would let mutate skip a class the case shows
 * (gqa_map spill with one group of G < 16 did: its tile's rows past the
 * group are zero, not replicas; k_scale_walk and mask_value additive were
 * not n/a on a per_head K scale, whose planted kernel is the same bytes).
 */
static void inapplicable_means_the_same_bytes(void **state)
{
	/* shapes no edge case has: one group of G < 16 rows, replicated (the
	 * spill), and K scales per kv head over contexts ending inside tiles */
	static const char *const more[] = {
		"fragsim: 1\nname: g4\nmodel: {q_heads: 4, kv_heads: 1, head_dim: 64}\n"
		"sequences:\n  - {context: 37}\n  - {context: 5, tokens: 2}\ndata: {seed: 5}\n",
		"fragsim: 1\nname: g17\nisa: rdna4-wmma-i32-16x16x16-iu8-w32\n"
		"model: {q_heads: 17, kv_heads: 1, head_dim: 32}\n"
		"cache: {block_size: 2, k_scale: per_tensor}\nsequences:\n  - {context: 21}\ndata: {seed: 6}\n",
		"fragsim: 1\nname: ph\nmodel: {q_heads: 8, kv_heads: 2, head_dim: 64}\n"
		"cache: {block_size: 8, placement: reversed, k_scale: per_head}\n"
		"sequences:\n  - {context: 45, tokens: 3}\ndata: {seed: 7}\n",
		"fragsim: 1\nname: php\nmode: prefill\nisa: sm80-mma-m16n8k32-s8\n"
		"model: {q_heads: 4, kv_heads: 1, head_dim: 128}\n"
		"cache: {placement: shuffled, k_scale: per_head}\n"
		"sequences:\n  - {history: 33, chunk: 19}\ndata: {seed: 8}\n",
		/* one-token chunks on RDNA4, and c_rows n/a on decode G 1,
		 * replicated (16 rows of one q head) and packed (zero rows) */
		"fragsim: 1\nname: pc1\nmode: prefill\nisa: rdna4-wmma-i32-16x16x16-iu8-w32\n"
		"model: {q_heads: 10, kv_heads: 2, head_dim: 32}\ncache: {k_scale: per_head}\n"
		"sequences:\n  - {history: 15, chunk: 1}\n  - {history: 40, chunk: 1}\ndata: {seed: 9}\n",
		"fragsim: 1\nname: dg1\nisa: cdna3-mfma-i32-32x32x16-i8\n"
		"model: {q_heads: 3, kv_heads: 3, head_dim: 64}\ncache: {block_size: 8}\n"
		"sequences:\n  - {context: 50}\n  - {context: 9, tokens: 2}\ndata: {seed: 10}\n",
		"fragsim: 1\nname: dg1p\nisa: rdna4-wmma-i32-16x16x16-iu8-w32\n"
		"model: {q_heads: 2, kv_heads: 2, head_dim: 32}\nkernel: {decode_rows: packed}\n"
		"sequences:\n  - {context: 33}\ndata: {seed: 11}\n",
	};
	char *tmp[sizeof(more) / sizeof(more[0])];
	glob_t g;
	int planted = 0;

	(void)state;
	assert_int_equal(glob("cases/edge/*.yaml", 0, NULL, &g), 0);
	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		tmp[i] = tu_write_temp(".yaml", more[i]);
	for (size_t i = 0; i < g.gl_pathc + sizeof(more) / sizeof(more[0]); i++) {
		const char *path = i < g.gl_pathc ? g.gl_pathv[i] : tmp[i - g.gl_pathc];
		struct runcase r;
		struct attn_result ok;
		struct fs_err err;

		if (runcase_load(path, &r, &err) != FS_OK ||
		    runcase_inputs(&r, &err) != FS_OK)
			fail_msg("%s: %s", path, err.msg);
		assert_int_equal(runcase_emulate(&r, &r.c, NULL, &ok, &err), FS_OK);
		for (int b = 0; b < BUG_COUNT; b++) {
			struct fs_case c = r.c;
			struct attn_result bad;
			const char *diff;
			char why[256];

			if (!kernel_bug_na((enum kern_bug)b, &r.c, r.lm, why, sizeof(why)) ||
			    kernel_plant(&c.kernel, (enum kern_bug)b, c.head_dim) ||
			    runcase_emulate(&r, &c, NULL, &bad, &err) != FS_OK)
				continue;
			diff = first_difference(&ok, &bad, (size_t)c.head_dim);
			if (diff)
				fail_msg("%s: %s=%s is n/a (%s), yet %s differs", path,
					 kernel_bug((enum kern_bug)b)->key, kernel_bug((enum kern_bug)b)->bad,
					 why, diff);
			attn_free(&bad);
			planted++;
		}
		attn_free(&ok);
		runcase_free(&r);
	}
	globfree(&g);
	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++) {
		unlink(tmp[i]);
		free(tmp[i]);
	}
	assert_true(planted > 100);
}

/*
 * mutate on a case where classes cannot apply: one kv head, a per-tensor
 * K scale, no split-K, no sliding window, no soft cap and no ALiBi. Those
 * are n/a with their reason, in text and JSON; the other 22 are caught
 * (two query tokens: the first has key 19 after it), head_dim_loaded=half
 * on head_dim 96 among them (48 dims: 1.5 K-steps of 32, the second
 * zero-padded), and gqa_map=spill: one group, but G 4 < 16 rows, so the
 * spilling kernel's tile has zero rows past head 3 where the case's
 * replicated layout has replicas (it was n/a, and its dump differs). It
 * used to exit 2 on head_dim_loaded and call gqa_map and k_scale_index
 * survivors.
 */
static void mutate_reports_inapplicable_classes(void **state)
{
	static const char *const na[] = {
		"head_dim_loaded=half           caught by hd96: acc",
		"k_scale_index=per_tile         n/a: k_scale per_tensor: every key has the same scale\n",
		"gqa_map=modulo                 n/a: kv_heads 1: both maps give every q head kv head 0\n",
		"split_merge=no_rescale         n/a: no context is cut into split-K segments\n",
		"mask_value=additive            n/a: k_scale per_tensor: no score is NaN, and s + -inf is -inf\n",
		"window_edge=inclusive          n/a: no sliding window\n",
		"window_edge=exclusive          n/a: no sliding window\n",
		"q_position=future              caught by hd96: scores",
		"q_position=off_by_one          caught by hd96: scores",
		"soft_cap_apply=exp_tanh        n/a: no soft cap\n",
		"alibi_bias=offset              n/a: no ALiBi\n",
		"split_merge=empty_nan          n/a: no context is cut into split-K segments\n",
		"exp_base=exp2_no_log2e         caught by hd96: ",
		"block_offset=dense             n/a: the pool is dense: each block starts one block after the last\n",
		"k_scale_walk=identity          n/a: k_scale per_tensor: one scale, read at no block\n",
		"block_size_assumed=16          n/a: block_size 16: the size the kernel assumes\n",
		"k_scale_index=first_key        n/a: k_scale per_tensor: every key has the same scale\n",
		"gqa_map=kv_divide              n/a: q head / kv_heads gives every work unit its own kv head (G 4, kv_heads 1, decode)\n",
		"gqa_map=grid_permuted          n/a: decode: a work unit serves a kv head's group, not one q head\n",
		"c_rows=interleaved             n/a: gfx936: a lane holds one entry of each C column (its accumulators are columns of one row): no row belief to get wrong\n",
		/* one group, but tile 0's rows past head 3 are zero, not replicas */
		"gqa_map=spill                  caught by hd96: acc s=0 t=0 q_head=0 key=0 (block 3 slot 0) lane 4 e 0 C[4][0]",
		"p_regroup=none                 n/a: pv.mode f32: P does not go through the instruction\n",
		"pv_rescale=missing             n/a: pv.mode f32: P does not go through the instruction\n",
		"block_offset=int32             n/a: no pool past 2 GiB: every block starts below 2^31 bytes\n",
		"block_offset=u16               n/a: no pool past 65,536 blocks: every block id fits 16 bits\n",
		"0 of 22 applicable bug classes survive 1 case(s), 29 not applicable\n",
	};
	char *path = tu_write_temp(".yaml",
		"fragsim: 1\nname: hd96\nmodel: {q_heads: 4, kv_heads: 1, head_dim: 96}\n"
		"cache: {k_scale: per_tensor, placement: reversed}\n"
		"sequences:\n  - {context: 20, tokens: 2}\ndata: {seed: 3}\n");
	struct run_result res = tu_run("mutate %s", path);

	(void)state;
	if (res.status != 0)
		fail_msg("mutate exit %d:\n%s%s", res.status, res.out, res.err);
	for (size_t i = 0; i < sizeof(na) / sizeof(na[0]); i++)
		if (!strstr(res.out, na[i]))
			fail_msg("want '%s' in:\n%s", na[i], res.out);
	assert_null(strstr(res.out, "SURVIVED"));
	tu_free(&res);

	res = tu_run("mutate %s --json | /usr/bin/python3 -c '"
		     "import json, sys; d = json.load(sys.stdin); "
		     "print([(c[\"bug\"], c[\"reason\"][:8]) for c in d[\"classes\"] "
		     "if c[\"verdict\"] == \"not_applicable\"], "
		     "d[\"survived\"], d[\"applicable\"], d[\"not_applicable\"])'", path);
	assert_int_equal(res.status, 0);
	/* the classes' n/a rules in table order: the original twelve's, then
	 * the softmax and mask classes', block_offset, the mapping classes' */
	assert_string_equal(res.out, "[('k_scale_index', 'k_scale '), "
			    "('gqa_map', 'kv_heads'), ('split_merge', 'no conte'), "
			    "('mask_value', 'k_scale '), ('window_edge', 'no slidi'), "
			    "('window_edge', 'no slidi'), ('soft_cap_apply', 'no soft '), "
			    "('soft_cap_apply', 'no soft '), ('soft_cap_apply', 'no soft '), "
			    "('alibi_bias', 'no ALiBi'), ('alibi_bias', 'no ALiBi'), "
			    "('alibi_bias', 'no ALiBi'), ('alibi_bias', 'no ALiBi'), "
			    "('split_merge', 'no conte'), ('split_merge', 'no conte'), "
			    "('block_offset', 'the pool'), "
			    "('k_scale_walk', 'k_scale '), ('block_size_assumed', 'block_si'), "
			    "('k_scale_index', 'k_scale '), ('gqa_map', 'q head /'), ('gqa_map', 'decode: '), "
			    "('c_rows', 'gfx936: '), ('p_regroup', 'pv.mode '), ('pv_group_max', 'pv.mode '), "
			    "('v_scale_apply', 'pv.mode '), ('p_scale_index', 'pv.mode '), "
			    "('pv_rescale', 'pv.mode '), ('block_offset', 'no pool '), "
			    "('block_offset', 'no pool ')] 0 22 29\n");
	tu_free(&res);
	unlink(path);
	free(path);
}

/* Two cases, two reasons for one class: the first case's (the cheaper)
 * is given, and the line says the others differ. */
static void mutate_na_with_mixed_reasons(void **state)
{
	char *a = tu_write_temp(".yaml", "fragsim: 1\nname: one-kv\nmodel: {q_heads: 4, kv_heads: 1}\n"
				"sequences:\n  - {context: 20}\n");
	char *b = tu_write_temp(".yaml", "fragsim: 1\nname: group-1\nmodel: {q_heads: 4, kv_heads: 4}\n"
				"sequences:\n  - {context: 40}\n");	/* costs more: second */
	struct run_result res = tu_run("mutate %s %s", a, b);

	(void)state;
	assert_non_null(strstr(res.out, "gqa_map=modulo                 n/a: kv_heads 1: both maps give "
			       "every q head kv head 0 (case one-kv; other cases give other reasons)\n"));
	/* gqa_map modulo and grid_permuted, block_size_assumed, c_rows
	 * (gfx936), block_offset (a dense pool; int32 and u16: a small
	 * one), the shape-bound softmax classes (no window, cap, ALiBi,
	 * split-K, one token), and the five INT8 PV classes (f32 PV) */
	assert_non_null(strstr(res.out, "26 not applicable\n"));
	tu_free(&res);
	unlink(a);
	unlink(b);
	free(a);
	free(b);
}

/*
 * A pool of 4,194,304 blocks (past 2 GiB and 65,536 blocks: both
 * block_offset classes apply) whose one sequence has the first three,
 * contiguous: no 32-bit offset wraps and no id passes 16 bits, so both
 * survive, each saying what case would catch it (cases/edge/
 * sparse-pool.yaml is one).
 */
static void block_offset_survives_on_a_pool_used_at_its_start(void **state)
{
	char *path = tu_write_temp(".yaml",
		"fragsim: 1\nname: low-pool\ncache: {placement: contiguous, num_blocks: 4194304}\n"
		"sequences:\n  - {context: 40}\ndata: {seed: 3}\n");
	struct run_result res = tu_run("mutate %s", path);

	(void)state;
	assert_int_equal(res.status, 1);
	assert_non_null(strstr(res.out, "block_offset=int32             SURVIVED 1 case(s): no pool past 2 GiB "
			       "(no block the tables name starts 2 GiB or more into its pool)\n"));
	assert_non_null(strstr(res.out, "block_offset=u16               SURVIVED 1 case(s): no pool past 65,536 "
			       "blocks (no block id past 65,535 in a table)\n"));
	tu_free(&res);
	unlink(path);
	free(path);
}

/*
 * A correct suite whose case has block size 8 and tails: planting
 * tail_mask there reads K scales outside the block table. mutate used to
 * abort (SIGABRT, exit 134); now every class is caught but split_merge,
 * which needs split-K (three), window_edge (two), which needs a sliding
 * window, q_position future and off_by_one, which need a sequence of
 * more than one query token, soft_cap_apply (three) and alibi_bias
 * (four).
 */
static void mutate_survives_reads_outside_the_table(void **state)
{
	char *path = tu_write_temp(".yaml",
		"fragsim: 1\nname: tail-7-40\ncache: {block_size: 8, placement: shuffled}\n"
		"sequences:\n  - {context: 7}\n  - {context: 40}\ndata: {seed: 3}\n");
	struct run_result res = tu_run("mutate %s", path);

	(void)state;
	if (res.status != 0)
		fail_msg("mutate exit %d:\n%s%s", res.status, res.out, res.err);
	assert_non_null(strstr(res.out, "tail_mask=contiguous           caught by tail-7-40: "));
	assert_non_null(strstr(res.out, "0 of 27 applicable bug classes survive 1 case(s), 24 not applicable\n"));
	tu_free(&res);
	unlink(path);
	free(path);
}

static void kernel_section_errors(void **state)
{
	static const struct {
		const char *section, *msg;
	} bad[] = {
		{ "kernel: {c_columns: strided}", ":7:21: kernel.c_columns: must be one of profile, contiguous" },
		{ "kernel: {head_dim_loaded: 300}", ":7:27: kernel.head_dim_loaded: must be between 1 and 256" },
		{ "kernel: {lanes: 4}", ":7:10: kernel: unknown key 'lanes'" },
		/* one key, two classes: both bad values are listed, once */
		{ "kernel: {page_walk: sideways}", ":7:21: kernel.page_walk: must be one of block_table, none, identity" },
		{ "kernel: {page_wal: none}", "page_walk, transpose" },
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
	/* 80 is not a whole number of K-steps of 32, nor is 48, half of
	 * head_dim 96: the kernel issues the K-steps that cover the dims it
	 * loads, the last zero-padded past them, and misses the rest, so the
	 * accumulators differ from the reference: caught. */
	for (int i = 0; i < 2; i++) {
		char *path = tu_write_temp(".yaml", i ?
			"fragsim: 1\nname: k\nmodel: {head_dim: 96}\nsequences:\n  - {context: 16}\n"
			"kernel: {head_dim_loaded: half}\n" :
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

/*
 * Issue 22 point 22: the whole shipped suite, cases/ (mutations/, whose
 * cases plant a bug of their own, skipped), catches every class. The
 * case count is the number of case files under cases/, counted here by
 * find, so a case added anywhere in cases/ is counted, not pasted.
 */
static void shipped_suite_catches_every_class(void **state)
{
	struct run_result res = tu_run("mutate cases/");

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
	{
		char want[96];

		const char *sum;
		int ncases = -1;

		snprintf(want, sizeof(want), "0 of %d applicable bug classes survive ", BUG_COUNT);
		sum = strstr(res.out, want);
		assert_non_null(sum);
		assert_int_equal(sscanf(sum + strlen(want), "%d case(s), 0 not applicable", &ncases), 1);
		if (tu_sh("test \"$(find '%s/cases' -name '*.yaml' | wc -l)\" -eq %d", FRAGSIM_SRC, ncases))
			fail_msg("mutate counted %d cases, find counts others under cases/", ncases);
		assert_non_null(strstr(sum, " case(s), 0 not applicable\n"));
	}
	tu_free(&res);
}

static void weak_suite_lets_page_walk_and_tail_through(void **state)
{
	struct run_result res = tu_run("mutate tests/data/weak-suite");

	(void)state;
	assert_int_equal(res.status, 1);
	for (int b = 0; b < BUG_COUNT; b++) {
		const struct kern_bug_info *bi = kernel_bug((enum kern_bug)b);
		/* and (h-bugs-a) what needs a context that ends inside a
		 * tile: a poisoned masked slot, a masked key in a tile that
		 * runs (decode of one token masks only keys past the end) */
		int survives = b == BUG_TAIL_MASK || b == BUG_PAGE_WALK ||
			       b == BUG_PV_MASK || b == BUG_MASK_FINITE ||
			       b == BUG_MASK_ADDITIVE;
		int na = b == BUG_WINDOW_INCLUSIVE || b == BUG_WINDOW_EXCLUSIVE ||
			 b == BUG_Q_FUTURE || b == BUG_Q_OFF_BY_ONE ||
			 (b >= BUG_CAP_DROPPED && b <= BUG_ALIBI_OFFSET) ||
			 b == BUG_MERGE_EMPTY_NAN || b == BUG_MERGE_STALE_LSE ||
			 /* gfx936 decode, blocks of 16, a dense pool */
			 b == BUG_BLOCK_OFFSET || b == BUG_BLOCK_SIZE || b == BUG_GQA_GRID ||
			 b == BUG_C_ROWS ||
			 /* pv8: f32 PV, no P through the instruction; and
			  * after them block_offset int32 and u16: a small pool */
			 b >= BUG_P_REGROUP_NONE;
		char want[96];
		const char *line, *eol;

		snprintf(want, sizeof(want), "%s=%s", bi->key, bi->bad);
		line = strstr(res.out, want);
		assert_non_null(line);
		eol = strchr(line, '\n');
		assert_non_null(eol);
		if (survives != (strstr(line, "SURVIVED") && strstr(line, "SURVIVED") < eol))
			fail_msg("%s: %.*s", want, (int)(eol - line), line);
		if (na != (strstr(line, "n/a:") && strstr(line, "n/a:") < eol))
			fail_msg("%s: %.*s", want, (int)(eol - line), line);
	}
	{
		char want[96];

		snprintf(want, sizeof(want), "5 of %d applicable bug classes survive 2 case(s), 24 not applicable",
			 BUG_COUNT - 24);
		assert_non_null(strstr(res.out, want));
	}
	/* Issue 22 point 20: what kind of case would catch each survivor,
	 * from the needs no case of the suite has (written from the weak
	 * suite's files: contexts 1024, 256 and 64, pages contiguous). */
	{
		static const char *const hints[] = {
			"tail_mask=contiguous           SURVIVED 2 case(s): no context in the suite ends inside a 16-key tile, nor does a causal, window or split-K segment edge fall inside one (tiles count from each segment's start)\n",
			"page_walk=none                 SURVIVED 2 case(s): no sequence in the suite has a page away from where a packed, contiguous cache puts it (first block + b)\n",
			"pv_mask=none                   SURVIVED 2 case(s): no masked slot in the suite reads its V as NaN in a 16-key tile that runs (a context ending inside a tile; with int8 V per channel and f32 PV, whose poisoned bytes are finite, a tile reaching past the sequence's blocks)\n",
			"mask_value=finite              SURVIVED 2 case(s): no masked key in the suite lies in a 16-key tile below the longest context, where scores are written (a causal or window edge inside a tile, or a shorter context ending inside one)\n",
			"mask_value=additive            SURVIVED 2 case(s): no context in the suite ends inside a 16-key tile\n",
		};

		for (size_t i = 0; i < FS_ARRAY_LEN(hints); i++)
			if (!strstr(res.out, hints[i]))
				fail_msg("want '%s' in:\n%s", hints[i], res.out);
	}
	tu_free(&res);
	res = tu_run("mutate tests/data/weak-suite --json | /usr/bin/python3 -c '"
		     "import json, sys; d = json.load(sys.stdin); "
		     "[print(c[\"bug\"], c[\"value\"], \"|\", c[\"hint\"]) for c in d[\"classes\"] "
		     "if c[\"verdict\"] == \"survived\"]'");
	assert_int_equal(res.status, 0);
	assert_string_equal(res.out,
		"tail_mask contiguous | no context in the suite ends inside a 16-key tile, nor does a causal, window or split-K segment edge fall inside one (tiles count from each segment's start)\n"
		"page_walk none | no sequence in the suite has a page away from where a packed, contiguous cache puts it (first block + b)\n"
		"pv_mask none | no masked slot in the suite reads its V as NaN in a 16-key tile that runs (a context ending inside a tile; with int8 V per channel and f32 PV, whose poisoned bytes are finite, a tile reaching past the sequence's blocks)\n"
		"mask_value finite | no masked key in the suite lies in a 16-key tile below the longest context, where scores are written (a causal or window edge inside a tile, or a shorter context ending inside one)\n"
		"mask_value additive | no context in the suite ends inside a 16-key tile\n");
	tu_free(&res);

	/* The same verdicts as JSON, read back by Python's parser. */
	res = tu_run("mutate tests/data/weak-suite --json | /usr/bin/python3 -c '"
		     "import json, sys; d = json.load(sys.stdin); "
		     "print(sorted(c[\"bug\"] + \"=\" + c[\"value\"] for c in d[\"classes\"] "
		     "if c[\"verdict\"] == \"survived\"), "
		     "d[\"survived\"], d[\"applicable\"] == %d, d[\"not_applicable\"], d[\"cases\"])'",
		     BUG_COUNT - 24);
	assert_int_equal(res.status, 0);
	assert_string_equal(res.out, "['mask_value=additive', 'mask_value=finite', 'page_walk=none', "
			    "'pv_mask=none', 'tail_mask=contiguous'] 5 True 24 2\n");
	tu_free(&res);
}

/*
 * Every class has a row in mutneeds.c's class_needs (a class added to
 * kernel.c without one says "unknown: ..." here), read from --json's
 * exposed_by, which every class carries, caught or not.
 */
static void every_class_says_what_exposes_it(void **state)
{
	struct run_result res = tu_run("mutate cases/edge/one-token.yaml --json | /usr/bin/python3 -c '"
				       "import json, sys; d = json.load(sys.stdin); "
				       "print(len(d[\"classes\"]), [c[\"bug\"] + \"=\" + c[\"value\"] "
				       "for c in d[\"classes\"] if not c[\"exposed_by\"] or "
				       "c[\"exposed_by\"].startswith(\"unknown\")])'");
	char want[64];

	(void)state;
	snprintf(want, sizeof(want), "%d []\n", BUG_COUNT);
	if (res.status != 0 || strcmp(res.out, want))
		fail_msg("exit %d: got '%s', want '%s'\n%s", res.status, res.out, want, res.err);
	tu_free(&res);
}

/*
 * The hints of a one-case suite: decode, 17 keys on one contiguous
 * page run. Its context ends one key into the second 16-key tile, which
 * is where tail_mask's belief masks the slots the true columns do (key
 * 16 is column 0 either way): the hint says that edge is where the
 * suite's are (it said "has what shows it" before the needs knew the
 * belief's columns; needs_count_from_segments has one key more). The pages are
 * where both walks guess, and N (ceil(17/16) - ceil(1/16)) = 16 is the
 * history, so the walks and tile_rounded are told what they lack.
 */
static void survivor_hints_from_the_suite(void **state)
{
	static const char *const want[] = {
		"tail_mask=contiguous           SURVIVED 1 case(s): every context, causal, window or split-K segment edge in the suite inside a 16-key tile falls at a column where the adjacent-column belief masks the same slots (one key into a tile, as split-K segments of one key make: the belief keeps column 0 in place)\n",
		"page_walk=none                 SURVIVED 1 case(s): no sequence in the suite has a page away from where a packed, contiguous cache puts it (first block + b)\n",
		"page_walk=identity             SURVIVED 1 case(s): no sequence in the suite has a logical block other than its physical block\n",
		"q_position=tile_rounded        SURVIVED 1 case(s): no sequence in the suite has a history other than N (ceil(context/N) - ceil(tokens/N)) on 16-key tiles\n",
		"v_page_walk=identity           SURVIVED 1 case(s): no sequence in the suite has a logical block other than its physical block\n",
		"pv_mask=none                   caught by tail-1: ",
		/* key 17, the one masked key in a tile that runs, lies past
		 * the longest context: no score shows the finite mask, and its
		 * P is 0 as -inf's (this said "has what shows it" before) */
		"mask_value=finite              SURVIVED 1 case(s): no masked key in the suite lies in a 16-key tile below the longest context, where scores are written (a causal or window edge inside a tile, or a shorter context ending inside one)\n",
	};
	char *path = tu_write_temp(".yaml",
		"fragsim: 1\nname: tail-1\nmodel: {q_heads: 4, kv_heads: 1, head_dim: 64}\n"
		"sequences:\n  - {context: 17}\ndata: {seed: 3}\n");
	struct run_result res = tu_run("mutate %s", path);

	(void)state;
	assert_int_equal(res.status, 1);
	for (size_t i = 0; i < FS_ARRAY_LEN(want); i++)
		if (!strstr(res.out, want[i]))
			fail_msg("want '%s' in:\n%s%s", want[i], res.out, res.err);
	tu_free(&res);
	unlink(path);
	free(path);
}

/* `mutate` of case text says each of want[] (NULL-terminated): a
 * survivor's or a catch's line. */
static void mutate_says_each(const char *text, const char *const *want)
{
	char *path = tu_write_temp(".yaml", text);
	struct run_result res = tu_run("mutate %s", path);

	for (; *want; want++)
		if (!strstr(res.out, *want))
			fail_msg("want '%s' in:\n%s%s", *want, res.out, res.err);
	tu_free(&res);
	unlink(path);
	free(path);
}

static void mutate_says(const char *text, const char *want)
{
	const char *const one[] = { want, NULL };

	mutate_says_each(text, one);
}

/*
 * A case that fails its checks with no bug planted (here a threshold no
 * INT8 kernel meets) "caught" every class planted in it, even those that
 * change no bit (a soak found tail_mask on a 512-key context counted as
 * caught): it is not used, and mutate says so.
 */
static void mutate_skips_a_case_that_fails(void **state)
{
	char *path = tu_write_temp(".yaml", "fragsim: 1\nname: strict\n"
				   "sequences:\n  - {context: 512}\n"
				   "check: {out_cosine_min: 0.99999999}\n");
	struct run_result res = tu_run("mutate %s --quiet", path);
	char want[512];

	(void)state;
	snprintf(want, sizeof(want), "fragsim: note: strict: fails its checks with no bug "
		 "planted ('fragsim check %s' says why); not used\n", path);
	if (res.status != 0 || strcmp(res.err, want) || strstr(res.out, "caught by") ||
	    !strstr(res.out, "0 of 0 applicable bug classes survive 1 case(s), 51 not "
			     "applicable; 1 failing with no bug planted, not used\n") ||
	    !strstr(res.out, "n/a: no case that passes its checks as written"))
		fail_msg("exit %d\n%s%s", res.status, res.out, res.err);
	tu_free(&res);
	unlink(path);
	free(path);
}

/*
 * c_rows on one-token prefill chunks: RDNA4 keeps row 0 in place, so the
 * planted kernel gives the correct bytes; the class applies (the model's
 * longer chunks show it) and the hint says what the suite lacks. Two
 * tokens put row 1 where the belief reads row 2: caught.
 */
static void c_rows_survivor_hint(void **state)
{
	static const char *const chunk[] = { "1", "2" };

	(void)state;
	for (int i = 0; i < 2; i++) {
		char text[512];

		snprintf(text, sizeof(text),
			 "fragsim: 1\nname: pc%s\nmode: prefill\nisa: rdna4-wmma-i32-16x16x16-iu8-w32\n"
			 "model: {q_heads: 10, kv_heads: 2, head_dim: 32}\ncache: {k_scale: per_head}\n"
			 "sequences:\n  - {history: 15, chunk: %s}\ndata: {seed: 9}\n", chunk[i], chunk[i]);
		mutate_says(text, i == 0 ?
			    "c_rows=interleaved             SURVIVED 1 case(s): no query in the suite sits in a C row the interleaved belief moves (prefill chunks of one token: CDNA3 and RDNA4 keep row 0 in place)\n" :
			    "c_rows=interleaved             caught by pc2: ");
	}
}

/*
 * A sliding window leaves blocks and split-K segments behind it that no
 * tile reads: 64 keys in blocks [2, 1, 0, 3], a window of 16 (the query
 * at 63 sees 48..63, block 3 alone, where every walk guesses right) and
 * segments of 32 (its keys all in segment 1: nothing to merge). The page
 * walks and split_merge survive, and say what the suite lacks (they said
 * "has what shows it": the moved pages and the second segment were
 * behind the window). A window of 17 reads key 47, in block 2 (physical
 * 0): the walks are caught; 47 is still segment 1's.
 */
static void window_hides_walks_and_merge(void **state)
{
	static const char *const want[][2] = {
		{ "16", "page_walk=none                 SURVIVED 1 case(s): no sequence in the suite has a page away from where a packed, contiguous cache puts it (first block + b)\n" },
		{ "16", "page_walk=identity             SURVIVED 1 case(s): no sequence in the suite has a logical block other than its physical block\n" },
		{ "16", "v_page_walk=identity           SURVIVED 1 case(s): no sequence in the suite has a logical block other than its physical block\n" },
		{ "16", "split_merge=no_rescale         SURVIVED 1 case(s): no query in the suite sees keys of two split-K segments (a sliding window inside one segment leaves nothing to merge)\n" },
		{ "17", "page_walk=none                 caught by behind: " },
		{ "17", "v_page_walk=identity           caught by behind: " },
		{ "17", "split_merge=no_rescale         SURVIVED 1 case(s): no query in the suite sees keys of two split-K segments" },
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(want); i++) {
		char text[400];

		snprintf(text, sizeof(text),
			 "fragsim: 1\nname: behind\nmodel: {q_heads: 4, kv_heads: 1, head_dim: 32, sliding_window: %s}\n"
			 "cache: {placement: table, num_blocks: 4}\n"
			 "sequences:\n  - {context: 64, blocks: [2, 1, 0, 3]}\n"
			 "split_k: {segment: 32}\ndata: {seed: 4}\n", want[i][0]);
		mutate_says(text, want[i][1]);
	}
}

/* q_position chunk takes a token's place in its chunk for its position:
 * with no history that is the position, the planted bytes the correct
 * ones; the survivor says the suite lacks a history (it said "has what
 * shows it"). Found by a soak of random cases. */
static void q_position_chunk_needs_history(void **state)
{
	(void)state;
	mutate_says("fragsim: 1\nname: h0\nmode: prefill\nmodel: {q_heads: 2, kv_heads: 1, head_dim: 32}\n"
		    "sequences:\n  - {history: 0, chunk: 7}\n",
		    "q_position=chunk               SURVIVED 1 case(s): no sequence in the suite has keys before its first query token\n");
}

/*
 * Shapes that cannot show a class, found by a soak of random cases: each
 * survivor said "a case it ran on has what shows it". Now each says what
 * the suite lacks, and one key more shows the class (caught).
 *   - int8 V per channel, f32 PV: a masked slot's poisoned V is finite
 *     (0 x it is 0); blocks of 16, context 17: no tile reads past the
 *     blocks. Blocks of 8: the tile reads a block the table lacks.
 *   - a prefill entry of chunk 0 runs no tile: its moved blocks show no
 *     walk.
 *   - split-K segments of one key: one key a tile, no column belief to
 *     get wrong; segments of 4 show it.
 *   - one key a row: P is 1 in any base.
 *   - tables naming block 0 only: dense and strided starts agree.
 */
static void shape_hides_the_class(void **state)
{
	static const char *const pc =
		"fragsim: 1\nname: pvm%s\nmodel: {q_heads: 1, kv_heads: 1, head_dim: 16}\n"
		"cache: {block_size: %s, placement: contiguous, v_scale: per_channel}\n"
		"sequences:\n  - {context: 17}\n";
	char text[512];

	(void)state;
	snprintf(text, sizeof(text), pc, "16", "16");
	mutate_says(text, "pv_mask=none                   SURVIVED 1 case(s): no masked slot in the suite reads its V as NaN");
	snprintf(text, sizeof(text), pc, "8", "8");
	mutate_says(text, "pv_mask=none                   caught by pvm8: ");
	mutate_says("fragsim: 1\nname: pw\nmode: prefill\nmodel: {q_heads: 1, kv_heads: 1, head_dim: 16}\n"
		    "cache: {block_size: 16, placement: contiguous}\nsequences:\n"
		    "  - {history: 16, chunk: 2}\n  - {history: 32, chunk: 0}\n",
		    "page_walk=identity             SURVIVED 1 case(s): no sequence in the suite has a logical block other than its physical block\n");
	mutate_says("fragsim: 1\nname: seg1\nmodel: {q_heads: 1, kv_heads: 1, head_dim: 16}\n"
		    "cache: {block_size: 16, placement: contiguous}\nsequences:\n  - {context: 2}\n"
		    "split_k: {segment: 1}\n",
		    "c_columns=contiguous           SURVIVED 1 case(s): no query in the suite sees two keys of one 16-key tile");
	mutate_says("fragsim: 1\nname: seg4\nmodel: {q_heads: 1, kv_heads: 1, head_dim: 16}\n"
		    "cache: {block_size: 16, placement: contiguous}\nsequences:\n  - {context: 2}\n"
		    "split_k: {segment: 4}\n",
		    "c_columns=contiguous           caught by seg4: ");
	mutate_says("fragsim: 1\nname: ctx1\nmodel: {q_heads: 4, kv_heads: 2, head_dim: 64}\n"
		    "sequences:\n  - {context: 1}\n",
		    "exp_base=exp2_no_log2e         SURVIVED 1 case(s): no query in the suite sees two keys or more");
	mutate_says("fragsim: 1\nname: bo\nmodel: {q_heads: 1, kv_heads: 1, head_dim: 16}\n"
		    "cache: {block_size: 16, placement: table, num_blocks: 2, block_stride: 512}\n"
		    "sequences:\n  - {context: 2, blocks: [0]}\n",
		    "block_offset=dense             SURVIVED 1 case(s): no table in the suite names a block other than block 0 where a tile runs");
	mutate_says("fragsim: 1\nname: bo1\nmodel: {q_heads: 1, kv_heads: 1, head_dim: 16}\n"
		    "cache: {block_size: 16, placement: table, num_blocks: 2, block_stride: 512}\n"
		    "sequences:\n  - {context: 2, blocks: [1]}\n",
		    "block_offset=dense             caught by bo1: ");
}

/*
 * Where a belief moves nothing, by hand from gfx936's published map (C:
 * lane L holds row L % 16, columns L / 16 + 4e; A: row L % 16, keys
 * 8 (L / 16) + e). The adjacent-column belief takes slot (L, e) for
 * column 4 (L / 16) + e: a mask edge at column 1 keeps slot (0..15, 0)
 * below it under both (column 0), one at 15 keeps column 15 (lanes
 * 48..63, e 3) alone above it; at 2 .. 14 they differ (column 1 is lane
 * 16's e 0, believed column 4). Fed in place, the second tile's C
 * register e of lane L holds key 16 + L / 16 + 4e, which A reads as key
 * 8 (L / 16) + 4 + e: key 31 (L / 16 = 3, e = 3) and key 0 alone stay.
 */
static void what_the_beliefs_move_on_gfx936(void **state)
{
	struct fs_err err = { 0 };
	struct lanemap *lm = profile_builtin("gfx936", &err);
	unsigned char edge[LM_MAX_DIM + 1], pmove[LM_MAX_DIM];

	(void)state;
	assert_non_null(lm);
	assert_int_equal(kernel_contiguous_edges(lm, edge), 0);
	for (int e = 0; e <= 16; e++)
		if (edge[e] != (e >= 2 && e <= 14))
			fail_msg("edge at column %d: moved %d", e, edge[e]);
	assert_int_equal(kernel_regroup_none_moves(lm, pmove), 0);
	for (int j = 0; j < 32; j++)
		if (pmove[j] != (j != 0 && j != 31))
			fail_msg("key %d of a group: moved %d", j, pmove[j]);
	lanemap_free(lm);
	/* cdna4's C has one entry of a row per lane, in column order of
	 * lanes: the belief is its map, and no edge moves anything */
	lm = profile_builtin("cdna4-mfma-i32-16x16x64-i8", &err);
	assert_non_null(lm);
	assert_int_equal(kernel_contiguous_edges(lm, edge), 0);
	for (int e = 0; e <= lm->n; e++)
		assert_int_equal(edge[e], 0);
	lanemap_free(lm);
}

/*
 * The needs count tiles and PV groups from each split-K segment's
 * start, and an edge or a key where the belief moves nothing is not
 * what shows the class: segments of one key (every key is its group's
 * first, every segment edge one key into a tile), a context one key
 * into a tile or one short of its end, a window whose two keys are the
 * last of one group and the first of the next (gfx936 keeps both in
 * place without the regroup), a one-token prefill (one row a tile).
 * The same shapes one key wider are caught.
 */
static void needs_count_from_segments(void **state)
{
	static const char *const base =
		"fragsim: 1\nname: %s\nmode: %s\nmodel: {q_heads: %d, kv_heads: 1, head_dim: 32%s}\n"
		"sequences:\n  - %s\n%s\ndata: {seed: 7}\n";
	static const struct {
		const char *name, *mode;
		int q_heads;
		const char *model, *seq, *rest;
		const char *want[7];
	} t[] = {
		{ "t17", "decode", 4, "", "{context: 17}", "",
		  { "tail_mask=contiguous           SURVIVED 1 case(s): every context, causal, window or split-K segment edge in the suite inside a 16-key tile falls at a column where the adjacent-column belief masks the same slots" } },
		{ "t31", "decode", 4, "", "{context: 31}", "",
		  { "tail_mask=contiguous           SURVIVED 1 case(s): every context" } },
		{ "t18", "decode", 4, "", "{context: 18}", "",
		  { "tail_mask=contiguous           caught by t18: " } },
		{ "s1", "decode", 4, "", "{context: 40}", "split_k: {segment: 1}\npv: {mode: int8}",
		  { "tail_mask=contiguous           SURVIVED 1 case(s): every context",
		    "p_regroup=none                 SURVIVED 1 case(s): no query in the suite sees a key other than the first of its 32-key PV group",
		    "pv_group_max=per_tile          SURVIVED 1 case(s): no query in the suite sees keys of two QK tiles of one 32-key PV group",
		    "v_scale_apply=after_product    SURVIVED 1 case(s): no query in the suite sees a key other than the first of its 32-key PV group",
		    "p_scale_index=per_tile         SURVIVED 1 case(s): no tile in the suite has two query rows with one seeing two keys of one 32-key PV group",
		    "pv_rescale=missing             n/a: every split-K segment's keys (1) fit one group of 32" } },
		{ "s33", "decode", 4, "", "{context: 40}", "split_k: {segment: 33}\npv: {mode: int8}",
		  { "p_regroup=none                 caught by s33: ",
		    "pv_group_max=per_tile          caught by s33: ",
		    "v_scale_apply=after_product    caught by s33: ",
		    "p_scale_index=per_tile         caught by s33: " } },
		{ "w2", "decode", 4, ", sliding_window: 2", "{context: 33}", "pv: {mode: int8}",
		  { "p_regroup=none                 SURVIVED 1 case(s): no query in the suite sees a key of a 32-key PV group whose P the C registers hold where the A operand reads another key",
		    "pv_rescale=missing             caught by w2: " } },
		{ "w2c", "decode", 4, ", sliding_window: 2", "{context: 34}", "pv: {mode: int8}",
		  { "p_regroup=none                 caught by w2c: " } },
		{ "p1", "prefill", 1, "", "{history: 40, chunk: 1}", "pv: {mode: int8}",
		  { "p_scale_index=per_tile         SURVIVED 1 case(s): no tile in the suite has two query rows" } },
		{ "p2", "prefill", 1, "", "{history: 40, chunk: 2}", "pv: {mode: int8}",
		  { "p_scale_index=per_tile         caught by p2: " } },
		/* found by a soak: no tile runs (every class, even those any
		 * case shows, says only that), and ALiBi under a window of one
		 * key (the bias is 0 at the query's own key) */
		{ "c0", "decode", 4, "", "{context: 0}", "",
		  { "operand_order=kq               SURVIVED 1 case(s): no query in the suite sees a key (every context 0: no tile runs",
		    "q_position=tile_rounded        SURVIVED 1 case(s): no query in the suite sees a key (every context 0" } },
		{ "al1", "decode", 4, ", alibi: true, sliding_window: 1", "{context: 20}", "",
		  { "alibi_bias=ignored             SURVIVED 1 case(s): no query in the suite sees two keys or more",
		    "alibi_bias=sign_flipped        SURVIVED 1 case(s): no query in the suite sees two keys or more",
		    "alibi_bias=no_log2e            SURVIVED 1 case(s): no query in the suite sees two keys or more",
		    "alibi_bias=offset              caught by al1: " } },
		{ "al2", "decode", 4, ", alibi: true, sliding_window: 2", "{context: 20}", "",
		  { "alibi_bias=ignored             caught by al2: " } },
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(t); i++) {
		char text[640];

		snprintf(text, sizeof(text), base, t[i].name, t[i].mode, t[i].q_heads,
			 t[i].model, t[i].seq, t[i].rest);
		mutate_says_each(text, t[i].want);
	}
}

static void mutation_cases_are_caught(void **state)
{
	struct run_result res = tu_run("check cases/mutations");

	(void)state;
	if (res.status != 0)
		fail_msg("check cases/mutations exit %d:\n%s", res.status, res.out);
	assert_non_null(strstr(res.out, "51 passed, 0 failed"));
	tu_free(&res);
	/* Without its bug a mutation case matches, and check says so; with
	 * one its shape cannot show, check says why, as mutate would. */
	{
		static const char *const text[2] = {
			"fragsim: 1\nname: unplanted\nexpect: mismatch\n"
			"sequences:\n  - {context: 16}\n",
			"fragsim: 1\nname: hidden\nexpect: mismatch\n"
			"sequences:\n  - {context: 16}\nkernel: {tail_mask: contiguous}\n",
		};
		static const char *const want[2] = {
			"): FAIL expected a mismatch, but kernel: plants no bug\n",
			"): FAIL expected a mismatch; the planted bug went unseen: "
			"tail_mask=contiguous: no context in the suite ends inside a 16-key tile",
		};

		for (int i = 0; i < 2; i++) {
			char *path = tu_write_temp(".yaml", text[i]);

			res = tu_run("check %s", path);
			assert_int_equal(res.status, 1);
			if (!strstr(res.out, want[i]))
				fail_msg("case %d: '%s'", i, res.out);
			tu_free(&res);
			unlink(path);
			free(path);
		}
	}
}

/*
 * h-bugs-b: the sim with bug b planted against tests/bugmodel.h's plain
 * loops with the same wrong rule m (scores and out within 1e-5 of the
 * double model), and, so that the check is not vacuous, against the
 * correct model, which must differ somewhere by more.
 */
static void sim_matches_model(const struct runcase *r, enum kern_bug b,
			      const struct bugmodel *m)
{
	const struct fs_inputs *in = &r->in;
	size_t ns = (size_t)in->S * in->T * in->Hq * in->MAXCTX;
	size_t no = (size_t)in->S * in->T * in->Hq * r->c.head_dim;
	double *sc = malloc(ns * sizeof(double)), *out = malloc(no * sizeof(double));
	double *sc0 = malloc(ns * sizeof(double)), *out0 = malloc(no * sizeof(double));
	struct bugmodel right = { 0 };
	struct attn_result sim;
	long off_right = 0;

	assert_non_null(sc && out && sc0 && out0);
	emulate(r, b, &sim);
	bugmodel_run(r, m, sc, out);
	bugmodel_run(r, &right, sc0, out0);
	for (size_t i = 0; i < ns; i++) {
		double got = sim.scores[i];

		if (isinf(sc[i]) || isnan(sc[i])) {
			if (!(got == sc[i] || (isnan(got) && isnan(sc[i]))))
				fail_msg("%s: scores[%zu] got %g want %g", kernel_bug(b)->bad, i, got, sc[i]);
		} else if (fabs(got - sc[i]) > 1e-5 * fmax(1.0, fabs(sc[i]))) {
			fail_msg("%s: scores[%zu] got %.9g want %.9g", kernel_bug(b)->bad, i, got, sc[i]);
		}
		off_right += !(fabs(got - sc0[i]) <= 1e-3 * fmax(1.0, fabs(sc0[i])));
	}
	if (getenv("BM_DEBUG"))
		for (size_t i = 0; i < ns; i++)
			if (!(sim.scores[i] == sc[i]) && !isinf(sc[i]))
				fprintf(stderr, "sc %zu sim %g model %g\n", i, sim.scores[i], sc[i]);
	for (size_t i = 0; i < no; i++) {
		double got = sim.out[i];

		if (isnan(out[i]) ? !isnan(got) : fabs(got - out[i]) > 1e-5)
			fail_msg("%s: out[%zu] got %.9g want %.9g", kernel_bug(b)->bad, i, got, out[i]);
		off_right += !(fabs(got - out0[i]) <= 1e-3);
	}
	assert_true(off_right > 0);
	attn_free(&sim);
	free(sc), free(out), free(sc0), free(out0);
}

/*
 * k_scale_walk and v_page_walk: one sequence of 40 keys on blocks
 * {4, 0, 2} of a pool of 7. K walks the table; the K scales (or V and
 * its scale) of key j are read at block j / 16 itself: key 20 takes the
 * scale of block 1 slot 4, a block of no sequence, so NaN.
 */
static void scale_and_v_walks_by_hand(void **state)
{
	struct bugmodel ks = { .ks_walk = BM_LOGICAL }, vw = { .v_walk = BM_LOGICAL };
	struct runcase r;

	(void)state;
	load_text(&r, "fragsim: 1\nname: walks\ncache: {placement: table, num_blocks: 7}\n"
		  "sequences:\n  - {context: 40, blocks: [4, 0, 2]}\ndata: {seed: 8}\n");
	sim_matches_model(&r, BUG_K_SCALE_WALK, &ks);
	sim_matches_model(&r, BUG_V_PAGE_WALK, &vw);
	runcase_free(&r);
	/* Blocks {1, 2, 0}: every logical block is some block of the
	 * sequence, so no read is poison; the scores still move. */
	load_text(&r, "fragsim: 1\nname: walks\ncache: {placement: table, num_blocks: 3}\n"
		  "sequences:\n  - {context: 40, blocks: [1, 2, 0]}\ndata: {seed: 8}\n");
	sim_matches_model(&r, BUG_K_SCALE_WALK, &ks);
	sim_matches_model(&r, BUG_V_PAGE_WALK, &vw);
	runcase_free(&r);
}

/*
 * block_size_assumed 16 on caches of 8 and 32 keys a block: block j / 16,
 * slot j % 16 and a 16-slot stride in every offset. Blocks of 8, the
 * tables {3, 0, 5, 1, 4} and {2, 6, 7} in a pool of 12: key 20 of
 * sequence 0 is read at block_table[0][1] = 0 as if its blocks held 16
 * slots, so its scale at index (0 * 16 + 4) * Hkv + g, which is true
 * block 0 slot 4: key 12's (block 0 holds the sequence's keys 8..15),
 * and its K bytes from offsets that interleave blocks 0 and 1; sequence 1's
 * keys 16.. read "block 6" of 16 slots, true blocks 12 and 13, past the
 * pool: poison. Blocks of 32: key 20 is slot 4 of block_table[1], the
 * sequence's keys 36.., and keys from 48 on are past its two-entry
 * table. (Every first tile here holds a key that is not NaN: the
 * emulation skips a tile whose scores are all NaN while its row has seen
 * nothing yet, where this model's row turns NaN.)
 */
static void block_size_assumed_by_hand(void **state)
{
	struct bugmodel m = { .bs = 16 };
	struct runcase r;

	(void)state;
	load_text(&r, "fragsim: 1\nname: bs8\ncache: {block_size: 8, placement: table, num_blocks: 12}\n"
		  "sequences:\n  - {context: 40, blocks: [3, 0, 5, 1, 4]}\n"
		  "  - {context: 23, blocks: [2, 6, 7]}\ndata: {seed: 8}\n");
	sim_matches_model(&r, BUG_BLOCK_SIZE, &m);
	runcase_free(&r);
	load_text(&r, "fragsim: 1\nname: bs32\ncache: {block_size: 32, placement: shuffled}\n"
		  "sequences:\n  - {context: 70}\ndata: {seed: 8}\n");
	sim_matches_model(&r, BUG_BLOCK_SIZE, &m);
	runcase_free(&r);
}

/*
 * scale_recovery no_k_scale / no_q_scale and k_scale_index first_key:
 * the score of key j is acc * sQ * softmax_scale, acc * sK[j] *
 * softmax_scale, or acc * sQ * sK[0] * softmax_scale (key 0's scale for
 * every key, split-K segments included), from the plain-loop model.
 */
static void scale_classes_by_hand(void **state)
{
	struct bugmodel nk = { .no_sk = 1 }, nq = { .no_sq = 1 }, fk = { .first_key = 1 };
	struct runcase r;

	(void)state;
	load_text(&r, "fragsim: 1\nname: scales\ncache: {placement: shuffled}\n"
		  "sequences:\n  - {context: 40}\n  - {context: 23}\ndata: {seed: 8}\n");
	sim_matches_model(&r, BUG_SCALE_NO_K, &nk);
	sim_matches_model(&r, BUG_SCALE_NO_Q, &nq);
	sim_matches_model(&r, BUG_K_SCALE_FIRST, &fk);
	runcase_free(&r);
}

/*
 * gqa_map kv_divide and grid_permuted. kv_divide, 24 q heads over 4 kv
 * heads (G 6): prefill q head 17 reads kv head 17 / 4 = 4, one past the
 * last, so block p's kv head 4 is block p + 1's kv head 0 (the K offset
 * ((p * 4 + 4) * 16 + ...) * 16), and its scales those of the next slot;
 * decode unit g reads kv head 6g / 4: 0, 1, 3, 4. grid_permuted, 8 q
 * heads over 4 (G 2): units 0..7 serve q heads 0, 2, 1, 3, 2, 4, 3, 5;
 * q heads 6 and 7 are never written (NaN).
 */
static void gqa_classes_by_hand(void **state)
{
	struct bugmodel kd = { .kv_divide = 1 }, gp = { .grid = 1 };
	struct runcase r;

	(void)state;
	assert_int_equal(kernel_grid_head(1, 2), 2);
	assert_int_equal(kernel_grid_head(5, 2), 4);
	assert_int_equal(kernel_grid_head(7, 2), 5);
	load_text(&r, "fragsim: 1\nname: kvd\nmode: prefill\ncache: {placement: shuffled}\n"
		  "sequences:\n  - {history: 10, chunk: 20}\ndata: {seed: 8}\n");
	sim_matches_model(&r, BUG_GQA_KV_DIVIDE, &kd);
	runcase_free(&r);
	load_text(&r, "fragsim: 1\nname: kvd\ncache: {placement: shuffled}\n"
		  "sequences:\n  - {context: 40}\n  - {context: 23}\ndata: {seed: 8}\n");
	sim_matches_model(&r, BUG_GQA_KV_DIVIDE, &kd);
	runcase_free(&r);
	/* spill, 24 q heads over 4 (G 6) in tiles of 16: tile 0 (heads
	 * 0..15) reads kv head 0 for all, tile 1 (16..23) kv head 16 / 6 = 2:
	 * q heads 6..11 and 12..15 read kv head 0, 18..23 kv head 2 */
	load_text(&r, "fragsim: 1\nname: spill\ncache: {placement: shuffled}\n"
		  "sequences:\n  - {context: 40}\n  - {context: 23}\ndata: {seed: 8}\n");
	{
		struct bugmodel sp = { .spill = 1 };

		sim_matches_model(&r, BUG_GQA_SPILL, &sp);
	}
	runcase_free(&r);
	load_text(&r, "fragsim: 1\nname: grid\nmode: prefill\nmodel: {q_heads: 8, kv_heads: 4}\n"
		  "cache: {placement: shuffled}\n"
		  "sequences:\n  - {history: 10, chunk: 20}\ndata: {seed: 8}\n");
	sim_matches_model(&r, BUG_GQA_GRID, &gp);
	runcase_free(&r);
}

/* gqa_map grid_permuted where it cannot be emulated: decode (no grid of
 * q heads), and G > kv_heads (a unit would write past q_heads). */
static void gqa_grid_refused(void **state)
{
	static const struct {
		const char *yaml, *msg;
	} bad[] = {
		{ "sequences:\n  - {context: 16}\n",
		  "kernel.gqa_map: grid_permuted is a prefill grid (one q head a work unit)" },
		{ "mode: prefill\nsequences:\n  - {history: 0, chunk: 16}\n",
		  "kernel.gqa_map: grid_permuted: work unit 4 would serve q head 24 of 24 (G 6 > kv_heads 4)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[512], *path;
		struct run_result res;

		snprintf(text, sizeof(text), "fragsim: 1\nname: g\n%skernel: {gqa_map: grid_permuted}\n",
			 bad[i].yaml);
		path = tu_write_temp(".yaml", text);
		res = tu_run("run %s", path);
		assert_int_equal(res.status, 2);
		if (!strstr(res.err, bad[i].msg) || !strstr(res.err, path))
			fail_msg("got '%s', want '%s'", res.err, bad[i].msg);
		tu_free(&res);
		unlink(path);
		free(path);
	}
}

/*
 * operand_load: swap_k_halves on gfx936 (K-steps of 32): Q's dim 0 meets
 * K's dim 16, Q's dim 16 K's dim 0, dim 40 dim 56; on head_dim 80 the last K-step's first half meets the zero padding
 * (dims 80..95). unswizzled, head_dim 256 (16 chunks, groups of 8): key
 * 3 of a tile reads its chunk 3 where it means chunk 0, chunk 11 for
 * chunk 8; key 8 of the tile reads every chunk right.
 */
static void operand_load_by_hand(void **state)
{
	struct bugmodel sw = { .swap_halves = 1 }, un = { .unswizzled = 1 };
	struct runcase r;

	(void)state;
	assert_int_equal(bugmodel_chunk(0, 3, 16), 3);
	assert_int_equal(bugmodel_chunk(8, 3, 16), 11);
	assert_int_equal(bugmodel_chunk(5, 8, 16), 5);
	assert_int_equal(bugmodel_chunk(4, 1, 5), 4);	/* head_dim 80: chunk 4 alone */
	for (int nc = 1; nc <= 16; nc++)
		for (int n = 0; n < 16; n++)
			for (int c = 0; c < nc; c++)
				assert_int_equal(kernel_unswizzled_chunk(c, n, nc), bugmodel_chunk(c, n, nc));
	load_text(&r, "fragsim: 1\nname: ld\ncache: {placement: shuffled}\n"
		  "sequences:\n  - {context: 40}\ndata: {seed: 8}\n");
	sim_matches_model(&r, BUG_LOAD_SWAP_K, &sw);
	sim_matches_model(&r, BUG_LOAD_UNSWIZZLED, &un);
	runcase_free(&r);
	load_text(&r, "fragsim: 1\nname: ld\nmodel: {q_heads: 8, kv_heads: 2, head_dim: 80}\n"
		  "sequences:\n  - {context: 40}\ndata: {seed: 8}\n");
	sim_matches_model(&r, BUG_LOAD_SWAP_K, &sw);
	sim_matches_model(&r, BUG_LOAD_UNSWIZZLED, &un);
	runcase_free(&r);
}

/*
 * c_rows interleaved on CDNA3 16x16 (C row 4*(L/16) + e, column L % 16,
 * from AMD's matrix instruction calculator): lane 17, e 0 holds C[4][1]
 * and the kernel takes it for C[1][1], so believed row p = 4e + L/16 gets
 * the accumulators of true row 4*(p % 4) + p / 4: row 1 those of row 4,
 * row 6 those of row 9. Prefill: token 1 is scored with token 4's Q
 * and its own Q scale and causal mask; in a chunk of 20 tokens, token 19
 * (row 3 of its tile) gets row 12 of that tile, token 28, past the
 * chunk: a zero A row, so its scores are 0. Decode (G 6): q head 1 of a
 * group gets the accumulators of row 4, q head 4.
 */
static void c_rows_by_hand(void **state)
{
	int src[16];
	struct bugmodel m = { .row_src = src };
	struct runcase r;

	(void)state;
	for (int p = 0; p < 16; p++)
		src[p] = 4 * (p % 4) + p / 4;
	assert_int_equal(src[1], 4);
	assert_int_equal(src[6], 9);
	load_text(&r, "fragsim: 1\nname: rows\nisa: cdna3-mfma-i32-16x16x32-i8\nmode: prefill\n"
		  "cache: {placement: shuffled}\n"
		  "sequences:\n  - {history: 10, chunk: 20}\ndata: {seed: 8}\n");
	sim_matches_model(&r, BUG_C_ROWS, &m);
	runcase_free(&r);
	load_text(&r, "fragsim: 1\nname: rows\nisa: cdna3-mfma-i32-16x16x32-i8\n"
		  "cache: {placement: shuffled}\n"
		  "sequences:\n  - {context: 40}\ndata: {seed: 8}\n");
	sim_matches_model(&r, BUG_C_ROWS, &m);
	runcase_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hardware_side_untouched),
		cmocka_unit_test(transpose_none_moves_scores),
		cmocka_unit_test(head_dim_half_and_operand_order),
		cmocka_unit_test(page_walk_invisible_on_contiguous_pages),
		cmocka_unit_test(page_walks_by_hand),
		cmocka_unit_test(block_offset_dense_by_hand),
		cmocka_unit_test(block_offset_int32_u16_by_hand),
		cmocka_unit_test(window_blocks_free_by_hand),
		cmocka_unit_test(block_offset_survives_on_a_pool_used_at_its_start),
		cmocka_unit_test(masked_reads_outside_the_table_are_poison),
		cmocka_unit_test(inapplicable_classes_by_rule),
		cmocka_unit_test(inapplicable_means_the_same_bytes),
		cmocka_unit_test(mutate_reports_inapplicable_classes),
		cmocka_unit_test(every_class_says_what_exposes_it),
		cmocka_unit_test(survivor_hints_from_the_suite),
		cmocka_unit_test(c_rows_survivor_hint),
		cmocka_unit_test(shape_hides_the_class),
		cmocka_unit_test(what_the_beliefs_move_on_gfx936),
		cmocka_unit_test(needs_count_from_segments),
		cmocka_unit_test(window_hides_walks_and_merge),
		cmocka_unit_test(q_position_chunk_needs_history),
		cmocka_unit_test(mutate_na_with_mixed_reasons),
		cmocka_unit_test(mutate_skips_a_case_that_fails),
		cmocka_unit_test(mutate_survives_reads_outside_the_table),
		cmocka_unit_test(kernel_section_errors),
		cmocka_unit_test(shipped_suite_catches_every_class),
		cmocka_unit_test(weak_suite_lets_page_walk_and_tail_through),
		cmocka_unit_test(mutation_cases_are_caught),
		/* h-bugs-b */
		cmocka_unit_test(scale_and_v_walks_by_hand),
		cmocka_unit_test(block_size_assumed_by_hand),
		cmocka_unit_test(scale_classes_by_hand),
		cmocka_unit_test(gqa_classes_by_hand),
		cmocka_unit_test(gqa_grid_refused),
		cmocka_unit_test(operand_load_by_hand),
		cmocka_unit_test(c_rows_by_hand),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
