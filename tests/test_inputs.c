/*
 * test_inputs.c - the paged inputs, checked the way a kernel reads them.
 *
 * For every placement (contiguous, reversed, shuffled, explicit table)
 * and block sizes 1, 8, 16 and 64, every K and V element of every valid
 * token is looked up through the block table with this file's own
 * address formula and compared with the logical row quantized here, by
 * quant_scale / quant_apply (the shared quantizer, not inputs.c's
 * addressing). Every physical block belongs to one sequence or none,
 * every slot nobody owns is poison with NaN scales, and the tail slot
 * past a context is poison. Then: Q padding and all-zero rows,
 * per_block32 f16 scales, the per_tensor scale, float V, generated
 * values against gen directly, given arrays, determinism, and each error
 * path (too large, too few blocks, bad tables, bad shapes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../sim/common/gen.h"
#include "../sim/attn/inputs.h"
#include "../sim/attn/quant.h"

#define D_MAX 256

/* Qwen3.5-27B heads, decode, per_token_head K, int8 V, seed 1234. */
static void base_case(struct fs_case *c, int bs, enum case_placement p,
		      int n, const int *ctx, const int *tokens)
{
	memset(c, 0, sizeof(*c));
	c->mode = MODE_DECODE;
	c->q_heads = 24;
	c->kv_heads = 4;
	c->head_dim = 256;
	c->block_size = bs;
	c->placement = p;
	c->k_scale = KSCALE_PER_TOKEN_HEAD;
	c->v_dtype = VDT_INT8;
	c->n_seqs = n;
	for (int s = 0; s < n; s++) {
		c->seqs[s].context = ctx[s];
		c->seqs[s].tokens = tokens ? tokens[s] : 1;
		c->seqs[s].history = ctx[s] - c->seqs[s].tokens;
	}
	c->spare_blocks = 3;
	c->num_blocks = case_blocks_needed(c) + c->spare_blocks;
	c->rounding = ROUND_HALF_AWAY;
	c->clip = 127;
	c->seed = 1234;
	c->q.dist = c->k.dist = c->v.dist = DIST_NORMAL;
	c->q.scale = c->k.scale = c->v.scale = 1.0;
}

/*
 * An explicit table that interleaves the sequences in the pool:
 * logical block b of sequence s is physical block b * S + s. Pool size
 * MAXB * S + 1, so the blocks of shorter sequences' gaps and the last
 * one are spare.
 */
static void interleaved_table(struct fs_case *c)
{
	int S = c->n_seqs;

	c->placement = PLACE_TABLE;
	c->num_blocks = case_table_width(c) * S + 1;
	for (int s = 0; s < S; s++) {
		int nb = case_blocks_of(c, s);

		c->seqs[s].blocks = malloc((size_t)(nb ? nb : 1) * sizeof(int));
		c->seqs[s].n_blocks = nb;
		for (int b = 0; b < nb; b++)
			c->seqs[s].blocks[b] = b * S + s;
	}
}

static void build_ok(const struct fs_case *c, const struct inputs_given *g,
		     struct fs_inputs *in)
{
	struct fs_err err;

	memset(&err, 0, sizeof(err));
	if (inputs_build(c, g, in, &err) != FS_OK)
		fail_msg("inputs_build: %s", err.msg);
}

static int is_nan(float x)
{
	return x != x;
}

/* This file's own address formulas (docs/design.md 3.2). */
static size_t k_addr(const struct fs_inputs *in, int blk, int h, int d, int slot)
{
	return ((((size_t)blk * in->Hkv + h) * (in->D / 16) + d / 16) * in->BS +
		slot) * 16 + d % 16;
}

static size_t v_addr(const struct fs_inputs *in, int blk, int h, int d, int slot)
{
	return (((size_t)blk * in->Hkv + h) * in->D + d) * in->BS + slot;
}

static size_t scale_addr(const struct fs_inputs *in, int blk, int slot, int h)
{
	return ((size_t)blk * in->BS + slot) * in->Hkv + h;
}

static const float *k_row(const struct fs_inputs *in, int s, int t, int h)
{
	return in->k + (((size_t)s * in->MAXCTX + t) * in->Hkv + h) * in->D;
}

static const float *v_row(const struct fs_inputs *in, int s, int t, int h)
{
	return in->v + (((size_t)s * in->MAXCTX + t) * in->Hkv + h) * in->D;
}

static int phys_block(const struct fs_inputs *in, int s, int t)
{
	return in->block_table[(size_t)s * in->MAXB + t / in->BS];
}

/* Block table: right shape, each block used at most once, per placement. */
static void check_table(const struct fs_case *c, const struct fs_inputs *in)
{
	int *owner = malloc((size_t)in->NB * sizeof(int));
	int next = 0, used = 0, in_order = 1;

	for (int i = 0; i < in->NB; i++)
		owner[i] = -1;
	for (int s = 0; s < in->S; s++) {
		int nb = (c->seqs[s].context + in->BS - 1) / in->BS;

		assert_int_equal(in->context_lens[s], c->seqs[s].context);
		for (int b = 0; b < in->MAXB; b++) {
			int id = in->block_table[(size_t)s * in->MAXB + b];

			if (b >= nb) {
				assert_int_equal(id, -1);
				continue;
			}
			assert_true(id >= 0 && id < in->NB);
			assert_int_equal(owner[id], -1);
			owner[id] = s;
			used++;
			switch (c->placement) {
			case PLACE_CONTIGUOUS: assert_int_equal(id, next); break;
			case PLACE_REVERSED: assert_int_equal(id, in->NB - 1 - next); break;
			case PLACE_TABLE: assert_int_equal(id, c->seqs[s].blocks[b]); break;
			case PLACE_SHUFFLED: in_order &= id == next; break;
			}
			next++;
		}
	}
	assert_int_equal(used, case_blocks_needed(c));
	if (c->placement == PLACE_SHUFFLED)
		assert_false(in_order);
	free(owner);
}

/*
 * Every valid K and V element through the block table against the
 * logical row quantized here; every slot nobody owns is poison.
 * Returns the number of elements checked.
 */
static long check_paged(const struct fs_case *c, const struct fs_inputs *in)
{
	int D = in->D;
	char *owned = calloc((size_t)in->NB * in->BS, 1);
	int8_t kq[D_MAX], vq[D_MAX];
	long checked = 0;

	check_table(c, in);
	for (int s = 0; s < in->S; s++)
		for (int t = 0; t < c->seqs[s].context; t++) {
			int blk = phys_block(in, s, t), slot = t % in->BS;

			owned[(size_t)blk * in->BS + slot] = 1;
			for (int h = 0; h < in->Hkv; h++) {
				float ks = quant_scale(k_row(in, s, t, h), D, c->clip);
				float vs = quant_scale(v_row(in, s, t, h), D, c->clip);

				quant_apply(k_row(in, s, t, h), D, ks, c->clip, c->rounding, kq);
				quant_apply(v_row(in, s, t, h), D, vs, c->clip, c->rounding, vq);
				assert_true(in->k_scale[scale_addr(in, blk, slot, h)] == ks);
				assert_true(in->v_scale[scale_addr(in, blk, slot, h)] == vs);
				assert_true(inputs_k_scale(c, in, blk, slot, h, D - 1) == ks);
				for (int d = 0; d < D; d++) {
					if (in->k_cache[k_addr(in, blk, h, d, slot)] != kq[d] ||
					    in->v_cache_i8[v_addr(in, blk, h, d, slot)] != vq[d])
						fail_msg("seq %d token %d head %d dim %d: k %d (want %d) v %d (want %d)",
							 s, t, h, d,
							 in->k_cache[k_addr(in, blk, h, d, slot)], kq[d],
							 in->v_cache_i8[v_addr(in, blk, h, d, slot)], vq[d]);
					checked++;
				}
			}
		}
	for (int blk = 0; blk < in->NB; blk++)
		for (int slot = 0; slot < in->BS; slot++) {
			if (owned[(size_t)blk * in->BS + slot])
				continue;
			for (int h = 0; h < in->Hkv; h++) {
				assert_true(is_nan(in->k_scale[scale_addr(in, blk, slot, h)]));
				assert_true(is_nan(in->v_scale[scale_addr(in, blk, slot, h)]));
				for (int d = 0; d < D; d++) {
					assert_int_equal(in->k_cache[k_addr(in, blk, h, d, slot)],
							 INPUTS_POISON);
					assert_int_equal(in->v_cache_i8[v_addr(in, blk, h, d, slot)],
							 INPUTS_POISON);
				}
			}
		}
	/* the slot just past each context, when it is inside the last block */
	for (int s = 0; s < in->S; s++) {
		int ctx = c->seqs[s].context;

		if (ctx % in->BS == 0)
			continue;
		for (int h = 0; h < in->Hkv; h++) {
			int blk = phys_block(in, s, ctx - 1);

			assert_int_equal(in->k_cache[k_addr(in, blk, h, 0, ctx % in->BS)],
					 INPUTS_POISON);
			assert_true(is_nan(in->k_scale[scale_addr(in, blk, ctx % in->BS, h)]));
		}
	}
	free(owned);
	return checked;
}

/* This file's own stored row of physical block blk: a linear scan of
 * pool_blocks (sim/ halves it), or blk itself in a dense pool; -1 none. */
static int stored_row(const struct fs_inputs *in, int blk)
{
	if (!in->pool_blocks)
		return blk;
	for (int m = 0; m < in->NM; m++)
		if (in->pool_blocks[m] == blk)
			return m;
	return -1;
}

/*
 * A sparse pool: 4,194,304 blocks of 16 KiB of K and as much of V (128
 * GiB dense) with two sequences of 37 and 20 keys, shuffled over the
 * whole pool. Only their 3 + 2 blocks are stored, ascending in
 * pool_blocks; the table is the one the dense pool's Fisher-Yates gives
 * (drawn here again from GEN_BLOCKS); every key's K, V and scales sit in
 * its block's stored row; a slot past a context and any block not named
 * read as poison (inputs_k_scale NaN).
 */
static void sparse_pool_stores_named_blocks(void **state)
{
	static const int ctx[] = { 37, 20 };
	const int NB = 1 << 22;
	struct fs_case c;
	struct fs_inputs in;
	int8_t kq[D_MAX], vq[D_MAX];
	int *perm = malloc((size_t)NB * sizeof(int));

	(void)state;
	base_case(&c, 16, PLACE_SHUFFLED, 2, ctx, NULL);
	c.num_blocks = NB;
	assert_true(inputs_pool_sparse(&c));
	assert_int_equal(inputs_pool_stored(&c), 5);
	build_ok(&c, NULL, &in);
	assert_int_equal(in.NB, NB);
	assert_int_equal(in.NM, 5);
	assert_non_null(in.pool_blocks);
	for (int m = 1; m < in.NM; m++)
		assert_true(in.pool_blocks[m - 1] < in.pool_blocks[m]);
	/* the dense pool's permutation, drawn here */
	for (int i = 0; i < NB; i++)
		perm[i] = i;
	for (int i = NB - 1; i > 0; i--) {
		int j = (int)(gen_u64(c.seed, GEN_BLOCKS, (uint64_t)i) % (uint64_t)(i + 1));
		int t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	assert_int_equal(in.block_table[0], perm[0]);
	assert_int_equal(in.block_table[1], perm[1]);
	assert_int_equal(in.block_table[2], perm[2]);
	assert_int_equal(in.block_table[in.MAXB], perm[3]);
	assert_int_equal(in.block_table[in.MAXB + 1], perm[4]);
	assert_int_equal(in.block_table[in.MAXB + 2], -1);
	for (int s = 0; s < 2; s++)
		for (int t = 0; t < ctx[s]; t++) {
			int blk = phys_block(&in, s, t), m = stored_row(&in, blk), slot = t % 16;

			assert_true(m >= 0);
			for (int h = 0; h < in.Hkv; h++) {
				float ks = quant_scale(k_row(&in, s, t, h), in.D, c.clip);
				float vs = quant_scale(v_row(&in, s, t, h), in.D, c.clip);

				quant_apply(k_row(&in, s, t, h), in.D, ks, c.clip, c.rounding, kq);
				quant_apply(v_row(&in, s, t, h), in.D, vs, c.clip, c.rounding, vq);
				assert_true(in.k_scale[scale_addr(&in, m, slot, h)] == ks);
				assert_true(in.v_scale[scale_addr(&in, m, slot, h)] == vs);
				/* inputs_k_scale takes the physical block */
				assert_true(inputs_k_scale(&c, &in, blk, slot, h, 0) == ks);
				for (int d = 0; d < in.D; d++) {
					assert_int_equal(in.k_cache[k_addr(&in, m, h, d, slot)], kq[d]);
					assert_int_equal(in.v_cache_i8[v_addr(&in, m, h, d, slot)], vq[d]);
				}
			}
		}
	/* slot 37 % 16 = 5 of sequence 0's last block, and blocks never named */
	{
		int m = stored_row(&in, phys_block(&in, 0, 36));

		assert_int_equal(in.k_cache[k_addr(&in, m, 0, 0, 5)], INPUTS_POISON);
		assert_true(is_nan(in.k_scale[scale_addr(&in, m, 5, 0)]));
	}
	for (int i = 5; i < 20; i++)
		if (stored_row(&in, perm[i]) < 0)
			assert_true(is_nan(inputs_k_scale(&c, &in, perm[i], 0, 0, 0)));
	assert_int_equal(inputs_block_at(&in, perm[3]), stored_row(&in, perm[3]));
	assert_int_equal(inputs_block_at(&in, NB), -1);
	inputs_free(&in);
	free(perm);

	/* two table entries naming one block: found by the sort */
	{
		static const int one[] = { 16, 16 };
		static int b0[] = { 4194000 }, b1[] = { 4194000 };
		struct fs_err err;

		base_case(&c, 16, PLACE_TABLE, 2, one, NULL);
		c.num_blocks = NB;
		c.seqs[0].blocks = b0, c.seqs[0].n_blocks = 1;
		c.seqs[1].blocks = b1, c.seqs[1].n_blocks = 1;
		assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EINPUT);
		assert_string_equal(err.msg, "sequence 1 block 0: physical block 4194000 is already used by sequence 0");
		assert_null(in.k_cache);
	}
}

/*
 * Which pools are stored sparse, worked by hand for Qwen3.5-27B's shape
 * (4 kv heads x 256 dims x 16 slots: 16384 bytes of K and of V a block,
 * 64 slots x 8 bytes of scales, 33280 bytes; 256 MiB is 8065.97 blocks).
 * Past the limits a pool is sparse only when its unnamed blocks are more
 * than its named ones or take over 256 MiB; a long decode's default
 * pool (its blocks and spares) stays dense, as every pool under them.
 */
static void which_pools_are_sparse(void **state)
{
	static const int one[] = { 131072 }, half[] = { 65536 },
			 two[] = { 131072, 131072 };
	struct fs_case c;

	(void)state;
	base_case(&c, 16, PLACE_SHUFFLED, 1, one, NULL);
	assert_int_equal(c.num_blocks, 8192 + 3);	/* 272.7 MB: over */
	assert_false(inputs_pool_sparse(&c));
	assert_int_equal(inputs_pool_stored(&c), 8195);
	/* 4096 named: 4097 unnamed are the most, 4096 not (136 MB) */
	base_case(&c, 16, PLACE_SHUFFLED, 1, half, NULL);
	c.num_blocks = 8193;
	assert_true(inputs_pool_sparse(&c));
	assert_int_equal(inputs_pool_stored(&c), 4096);
	c.num_blocks = 8192;
	assert_false(inputs_pool_sparse(&c));
	assert_int_equal(inputs_pool_stored(&c), 8192);
	/* 16384 named: 8066 unnamed blocks are 268436480 bytes, past
	 * 268435456; 8065 are 268403200 */
	base_case(&c, 16, PLACE_SHUFFLED, 2, two, NULL);
	c.num_blocks = 16384 + 8066;
	assert_true(inputs_pool_sparse(&c));
	assert_int_equal(inputs_pool_stored(&c), 16384);
	c.num_blocks = 16384 + 8065;
	assert_false(inputs_pool_sparse(&c));
	/* under both limits, dense however few blocks are named */
	base_case(&c, 16, PLACE_SHUFFLED, 1, (const int[]){ 16 }, NULL);
	c.num_blocks = 8000;
	assert_false(inputs_pool_sparse(&c));
	assert_int_equal(inputs_pool_stored(&c), 8000);
}

/*
 * q4_0 and q8_0 V in the paged V layout, by hand, from a given V whose
 * row (key 0, kv head 0) is {-2, 1, 0.5, 0...} in dims 0..31 and zeros
 * after: q4_0 stores {0, 12, 10, 8...} at v_cache[blk][0][d][0], one
 * byte a dim, with fp16 0x3400 (0.25) for dims 0..31 and 0x8000 (-0,
 * ggml's 0 / -8) for each zero block; q8_0 stores round(x * 63.5) =
 * {-127, 64, 32, 0...} (d = 2 / 127, 1/d = 63.5) with fp16(2 / 127) =
 * 0x2408. Slots no key owns keep poison and a NaN scale.
 */
static void v_blocks_stored_by_hand(void **state)
{
	static const int ctx[] = { 5 };
	static const int8_t q4[3] = { 0, 12, 10 }, q8[3] = { -127, 64, 32 };
	struct fs_case c;
	struct fs_inputs in;
	struct inputs_given g;
	float *v;

	(void)state;
	for (int i = 0; i < 2; i++) {
		base_case(&c, 16, PLACE_CONTIGUOUS, 1, ctx, NULL);
		c.v_dtype = i ? VDT_Q8_0 : VDT_Q4_0;
		v = calloc((size_t)5 * 4 * 256, sizeof(float));
		v[0] = -2, v[1] = 1, v[2] = 0.5f;
		memset(&g, 0, sizeof(g));
		g.v = v;
		build_ok(&c, &g, &in);
		assert_null(in.v_scale);
		for (int d = 0; d < 256; d++) {
			int8_t want = d < 3 ? (i ? q8[d] : q4[d]) : (i ? 0 : 8);

			assert_int_equal(in.v_cache_i8[v_addr(&in, 0, 0, d, 0)], want);
		}
		assert_int_equal(in.v_scale16[scale_addr(&in, 0, 0, 0) * 8], i ? 0x2408 : 0x3400);
		for (int kb = 1; kb < 8; kb++)
			assert_int_equal(in.v_scale16[scale_addr(&in, 0, 0, 0) * 8 + kb],
					 i ? 0x0000 : 0x8000);
		/* slot 5, past the context: poison and a NaN fp16 */
		assert_int_equal(in.v_cache_i8[v_addr(&in, 0, 0, 0, 5)], INPUTS_POISON);
		assert_int_equal(in.v_scale16[scale_addr(&in, 0, 5, 0) * 8], 0x7e00);
		inputs_free(&in);
		free(v);
	}
}

static void paging_every_placement_and_block_size(void **state)
{
	static const int ctx[] = { 37, 16, 1, 70 };
	static const int bss[] = { 1, 8, 16, 64 };
	static const enum case_placement places[] = {
		PLACE_CONTIGUOUS, PLACE_REVERSED, PLACE_SHUFFLED, PLACE_TABLE,
	};

	(void)state;
	for (size_t i = 0; i < 4; i++)
		for (size_t j = 0; j < 4; j++) {
			struct fs_case c;
			struct fs_inputs in;

			base_case(&c, bss[j], places[i], 4, ctx, NULL);
			if (places[i] == PLACE_TABLE)
				interleaved_table(&c);
			c.rounding = j % 2 ? ROUND_HALF_EVEN : ROUND_HALF_AWAY;
			build_ok(&c, NULL, &in);
			assert_int_equal(in.MAXB, (70 + bss[j] - 1) / bss[j]);
			assert_int_equal(in.MAXCTX, 70);
			assert_int_equal(check_paged(&c, &in), (37 + 16 + 1 + 70) * 4 * 256);
			inputs_free(&in);
			case_free(&c);
		}
}

/* The worked example at the top of inputs.c, address by hand. */
static void hand_worked_address(void **state)
{
	static const int ctx[] = { 20, 5 };
	struct fs_case c;
	struct fs_inputs in;
	int8_t q[D_MAX];
	float sc;

	(void)state;
	base_case(&c, 16, PLACE_CONTIGUOUS, 2, ctx, NULL);
	c.num_blocks = 4;
	build_ok(&c, NULL, &in);
	assert_int_equal(in.block_table[0], 0);
	assert_int_equal(in.block_table[1], 1);
	assert_int_equal(in.block_table[2], 2);
	assert_int_equal(in.block_table[3], -1);
	/* seq 0, token 17, head 2, dim 37: k_cache[1][2][2][1][5] =
	 * ((((1*4 + 2)*16 + 2)*16 + 1)*16 + 5 = 25109 */
	sc = quant_scale(k_row(&in, 0, 17, 2), 256, 127);
	quant_apply(k_row(&in, 0, 17, 2), 256, sc, 127, ROUND_HALF_AWAY, q);
	assert_int_equal(in.k_cache[25109], q[37]);
	assert_true(in.k_scale[(1 * 16 + 1) * 4 + 2] == sc);
	/* slots 4..15 of block 1 and all of block 3 are poison */
	assert_int_equal(in.k_cache[((((1 * 4 + 2) * 16 + 2) * 16 + 4) * 16 + 5)],
			 INPUTS_POISON);
	assert_int_equal(in.k_cache[3 * 4 * 256 * 16], INPUTS_POISON);
	assert_true(is_nan(in.k_scale[(1 * 16 + 4) * 4]));
	/* reversed: the pool walked downwards, block 0 spare */
	inputs_free(&in);
	c.placement = PLACE_REVERSED;
	build_ok(&c, NULL, &in);
	assert_int_equal(in.block_table[0], 3);
	assert_int_equal(in.block_table[1], 2);
	assert_int_equal(in.block_table[2], 1);
	assert_int_equal(in.k_cache[0], INPUTS_POISON);
	inputs_free(&in);
}

/*
 * docs/generator.md's element draws, restated here from the document
 * in plain scalar C (gen.c computes them in vector lanes): word j of a
 * row, and draw d of each distribution.
 */
static uint32_t doc_h32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	return x ^ (x >> 16);
}

static uint32_t doc_word(uint64_t key, uint32_t j)
{
	return doc_h32(doc_h32((uint32_t)key + j * 0x9e3779b9u) ^ (uint32_t)(key >> 32));
}

static float doc_draw(uint64_t key, int d, enum case_dist dist)
{
	uint32_t w0 = doc_word(key, 2u * (uint32_t)d), w1;
	long sum;

	if (dist == DIST_UNIFORM)
		return (float)(w0 >> 8) / 8388608.0f - 1.0f;
	if (dist == DIST_SIGN)
		return (w0 & 0x80000000u) ? 1.0f : -1.0f;
	w1 = doc_word(key, 2u * (uint32_t)d + 1u);
	sum = (long)(w0 & 0xffff) + (long)(w0 >> 16) + (long)(w1 & 0xffff) + (long)(w1 >> 16);
	return (float)(sum - 131070) * (float)(1.7320508075688772 / 65536.0);
}

/* Logical values are the generator's draws, element by element, with
 * mean, scale and outliers applied in float32, BF16-rounded. */
static void generated_values_match_gen(void **state)
{
	static const int ctx[] = { 33, 7 };
	static const int tok[] = { 3, 2 };
	struct fs_case c;
	struct fs_inputs in;
	int8_t q[D_MAX];

	(void)state;
	base_case(&c, 16, PLACE_SHUFFLED, 2, ctx, tok);
	c.k.n_outliers = 2;
	c.k.outliers[0] = 3;
	c.k.outliers[1] = 77;
	c.k.outlier_scale = 10.0;
	c.v.dist = DIST_UNIFORM;
	c.v.scale = 2.0;
	c.v.mean = 0.5;
	c.q.dist = DIST_SIGN;
	c.q.scale = 0.75;
	build_ok(&c, NULL, &in);
	for (int s = 0; s < 2; s++)
		for (int t = 0; t < in.MAXCTX; t++)
			for (int h = 0; h < 4; h++) {
				uint64_t kk = gen_row_key(1234, GEN_K, (uint64_t)s, (uint64_t)t, (uint64_t)h);
				uint64_t kv = gen_row_key(1234, GEN_V, (uint64_t)s, (uint64_t)t, (uint64_t)h);

				for (int d = 0; d < 256; d++) {
					size_t i = (((size_t)s * in.MAXCTX + t) * 4 + h) * 256 + d;
					float g = doc_draw(kk, d, DIST_NORMAL);
					float want_k, want_v;

					if (d == 3 || d == 77)
						g *= 10.0f;
					want_k = t < ctx[s] ? quant_bf16_round(g) : 0.0f;
					want_v = t < ctx[s] ? quant_bf16_round(0.5f + 2.0f * doc_draw(kv, d, DIST_UNIFORM)) : 0.0f;
					assert_true(in.k[i] == want_k);
					assert_true(in.v[i] == want_v);
				}
			}
	/* Q: sign distribution, padding tokens past T_s, q_pos */
	for (int s = 0; s < 2; s++)
		for (int t = 0; t < in.T; t++) {
			assert_int_equal(in.q_pos[s * in.T + t], t < tok[s] ? ctx[s] - tok[s] + t : -1);
			for (int h = 0; h < 24; h++) {
				size_t row = ((size_t)s * in.T + t) * 24 + h;
				const float *x = in.q + row * 256;
				uint64_t kq = gen_row_key(1234, GEN_Q, (uint64_t)s, (uint64_t)t, (uint64_t)h);

				if (t >= tok[s]) {
					assert_true(in.q_scale[row] == 0.0f);
					for (int d = 0; d < 256; d++)
						assert_true(x[d] == 0.0f && in.q_int8[row * 256 + d] == 0);
					continue;
				}
				for (int d = 0; d < 256; d++)
					assert_true(x[d] == 0.75f * doc_draw(kq, d, DIST_SIGN));
				assert_true(in.q_scale[row] == 0.75f / 127.0f);
				quant_apply(x, 256, in.q_scale[row], 127, ROUND_HALF_AWAY, q);
				assert_memory_equal(in.q_int8 + row * 256, q, 256);
			}
		}
	inputs_free(&in);
}

/*
 * A sequence's data is a function of its own (sequence, token, head)
 * only: lengthening the other sequence (which changes MAXCTX and T, the
 * padded shapes) or adding a third leaves sequence 0's Q, K and V alone.
 * With 0.1.0's flat index over [S][MAXCTX] this failed.
 */
static void sequences_do_not_depend_on_each_other(void **state)
{
	static const int ctx_a[] = { 33, 7 }, tok_a[] = { 3, 2 };
	static const int ctx_b[] = { 33, 300, 5 }, tok_b[] = { 3, 9, 1 };
	struct fs_case a, b;
	struct fs_inputs ia, ib;

	(void)state;
	base_case(&a, 16, PLACE_CONTIGUOUS, 2, ctx_a, tok_a);
	base_case(&b, 16, PLACE_CONTIGUOUS, 3, ctx_b, tok_b);
	build_ok(&a, NULL, &ia);
	build_ok(&b, NULL, &ib);
	assert_int_not_equal(ia.MAXCTX, ib.MAXCTX);
	assert_int_not_equal(ia.T, ib.T);
	for (int j = 0; j < 33; j++)
		for (int h = 0; h < 4; h++) {
			assert_memory_equal(k_row(&ia, 0, j, h), k_row(&ib, 0, j, h), 256 * sizeof(float));
			assert_memory_equal(v_row(&ia, 0, j, h), v_row(&ib, 0, j, h), 256 * sizeof(float));
		}
	for (int t = 0; t < 3; t++)
		assert_memory_equal(ia.q + (size_t)t * 24 * 256, ib.q + (size_t)t * 24 * 256,
				    24 * 256 * sizeof(float));
	/* and sequence 1's first 7 keys are the same in both */
	for (int j = 0; j < 7; j++)
		assert_memory_equal(k_row(&ia, 1, j, 2), k_row(&ib, 1, j, 2), 256 * sizeof(float));
	inputs_free(&ia);
	inputs_free(&ib);
}

static void zero_and_constant_rows(void **state)
{
	static const int ctx[] = { 40, 9 };
	struct fs_case c;
	struct fs_inputs in;
	long qz = 0, kz = 0, both = 0, rows = 0;

	(void)state;
	/* every Q row zero: scale 0, int8 0, never NaN */
	base_case(&c, 16, PLACE_CONTIGUOUS, 2, ctx, NULL);
	c.q.zero_rows = 1.0;
	build_ok(&c, NULL, &in);
	for (size_t i = 0; i < (size_t)in.S * in.T * in.Hq; i++)
		assert_true(in.q_scale[i] == 0.0f);
	for (size_t i = 0; i < (size_t)in.S * in.T * in.Hq * in.D; i++)
		assert_true(in.q_int8[i] == 0 && in.q[i] == 0.0f);
	inputs_free(&in);

	/*
	 * Half the rows of Q and K zero, chosen independently. With 4 q
	 * heads and T = MAXCTX = 40 (prefill of the whole context), Q row
	 * (s, t, h) and K row (s, t, h) have the same row number, so only
	 * the tensor id in the GEN_ROWS index keeps their choices apart.
	 */
	c.q_heads = 4;
	c.q.zero_rows = 0.5;
	c.k.zero_rows = 0.5;
	c.seqs[0].tokens = 40;
	c.seqs[0].history = 0;
	build_ok(&c, NULL, &in);
	assert_int_equal(in.T, in.MAXCTX);
	for (int t = 0; t < 40; t++)
		for (int h = 0; h < 4; h++) {
			int zq = in.q_scale[(size_t)t * 4 + h] == 0.0f;
			int zk = quant_scale(k_row(&in, 0, t, h), 256, 1) == 0.0f;
			int blk = phys_block(&in, 0, t);

			qz += zq;
			kz += zk;
			both += zq == zk;
			rows++;
			if (zk) {	/* a zero K row: scale 0, zeros, not poison */
				assert_true(in.k_scale[scale_addr(&in, blk, t % 16, h)] == 0.0f);
				assert_int_equal(in.k_cache[k_addr(&in, blk, h, 100, t % 16)], 0);
			}
		}
	/* 160 rows: each count ~80, and agreement ~80, not 160 */
	assert_true(qz > 40 && qz < 120);
	assert_true(kz > 40 && kz < 120);
	assert_true(both > 40 && both < 120);
	inputs_free(&in);

	/* every K row constant: each quantizes to all +127 or all -127 */
	c.q.zero_rows = c.k.zero_rows = 0.0;
	c.k.constant_rows = 1.0;
	c.k.n_outliers = 1;
	c.k.outliers[0] = 5;
	c.k.outlier_scale = 8.0;	/* a constant row stays constant */
	build_ok(&c, NULL, &in);
	for (int t = 0; t < 40; t++)
		for (int h = 0; h < 4; h++) {
			const float *x = k_row(&in, 0, t, h);
			int blk = phys_block(&in, 0, t);
			int8_t q0 = in.k_cache[k_addr(&in, blk, h, 0, t % 16)];

			assert_true(q0 == 127 || q0 == -127);
			for (int d = 0; d < 256; d++) {
				assert_true(x[d] == x[0]);
				assert_int_equal(in.k_cache[k_addr(&in, blk, h, d, t % 16)], q0);
			}
		}
	inputs_free(&in);
}

static void per_block32_scales_are_f16(void **state)
{
	static const int ctx[] = { 50, 17 };
	struct fs_case c;
	struct fs_inputs in;
	char owned[8 * 16] = { 0 };
	long differs = 0;

	(void)state;
	base_case(&c, 16, PLACE_REVERSED, 2, ctx, NULL);
	c.k_scale = KSCALE_PER_BLOCK32;
	c.num_blocks = 8;
	build_ok(&c, NULL, &in);
	assert_null(in.k_scale);
	assert_non_null(in.k_scale16);
	for (int s = 0; s < 2; s++)
		for (int t = 0; t < ctx[s]; t++) {
			int blk = phys_block(&in, s, t), slot = t % 16;

			owned[blk * 16 + slot] = 1;
			for (int h = 0; h < 4; h++)
				for (int kb = 0; kb < 8; kb++) {
					const float *x = k_row(&in, s, t, h) + 32 * kb;
					float f32s = quant_scale(x, 32, 127);
					uint16_t h16 = quant_f32_to_f16(f32s);
					float used = quant_f16_to_f32(h16);
					int8_t q[32], q32[32];

					assert_int_equal(in.k_scale16[scale_addr(&in, blk, slot, h) * 8 + kb], h16);
					assert_true(inputs_k_scale(&c, &in, blk, slot, h, 32 * kb + 31) == used);
					quant_apply(x, 32, used, 127, c.rounding, q);
					quant_apply(x, 32, f32s, 127, c.rounding, q32);
					for (int d = 0; d < 32; d++)
						assert_int_equal(in.k_cache[k_addr(&in, blk, h, 32 * kb + d, slot)], q[d]);
					differs += memcmp(q, q32, 32) != 0;
				}
		}
	/* the f16 rounding of the scale mattered somewhere */
	assert_true(differs > 0);
	for (int i = 0; i < 8 * 16; i++)
		if (!owned[i])
			for (int h = 0; h < 4; h++)
				for (int kb = 0; kb < 8; kb++)
					assert_int_equal(in.k_scale16[((size_t)i * 4 + h) * 8 + kb], 0x7e00);
	inputs_free(&in);
}

static void per_tensor_one_scale(void **state)
{
	static const int ctx[] = { 30, 45 };
	struct fs_case c;
	struct fs_inputs in;
	float amax = 0.0f, sc;
	int8_t q[D_MAX];

	(void)state;
	base_case(&c, 8, PLACE_SHUFFLED, 2, ctx, NULL);
	c.k_scale = KSCALE_PER_TENSOR;
	c.k.n_outliers = 1;
	c.k.outliers[0] = 200;
	c.k.outlier_scale = 30.0;
	build_ok(&c, NULL, &in);
	for (int s = 0; s < 2; s++)
		for (int t = 0; t < ctx[s]; t++)
			for (int h = 0; h < 4; h++)
				for (int d = 0; d < 256; d++) {
					float a = k_row(&in, s, t, h)[d];

					a = a < 0 ? -a : a;
					amax = a > amax ? a : amax;
				}
	sc = amax / 127.0f;
	assert_true(in.k_scale[0] == sc);
	for (int s = 0; s < 2; s++)
		for (int t = 0; t < ctx[s]; t++)
			for (int h = 0; h < 4; h++) {
				int blk = phys_block(&in, s, t);

				assert_true(inputs_k_scale(&c, &in, blk, t % 8, h, 0) == sc);
				quant_apply(k_row(&in, s, t, h), 256, sc, 127, c.rounding, q);
				for (int d = 0; d < 256; d++)
					assert_int_equal(in.k_cache[k_addr(&in, blk, h, d, t % 8)], q[d]);
			}
	inputs_free(&in);
}

/*
 * per_head: one scale per kv head, the absmax of that head's valid K over
 * every sequence and key / 127 (computed here from the logical K), and
 * every K byte quantized with its head's scale. A K outlier channel is
 * made large in every head, so heads differ by their own data only.
 */
static void per_head_one_scale_per_head(void **state)
{
	static const int ctx[] = { 30, 45 };
	struct fs_case c;
	struct fs_inputs in;
	float amax[4] = { 0 };
	int8_t q[D_MAX];

	(void)state;
	base_case(&c, 8, PLACE_SHUFFLED, 2, ctx, NULL);
	c.k_scale = KSCALE_PER_HEAD;
	build_ok(&c, NULL, &in);
	for (int s = 0; s < 2; s++)
		for (int t = 0; t < ctx[s]; t++)
			for (int h = 0; h < 4; h++)
				for (int d = 0; d < 256; d++) {
					float a = k_row(&in, s, t, h)[d];

					a = a < 0 ? -a : a;
					amax[h] = a > amax[h] ? a : amax[h];
				}
	for (int h = 0; h < 4; h++)
		assert_true(in.k_scale[h] == amax[h] / 127.0f);
	assert_true(in.k_scale[0] != in.k_scale[1]);
	for (int s = 0; s < 2; s++)
		for (int t = 0; t < ctx[s]; t++)
			for (int h = 0; h < 4; h++) {
				int blk = phys_block(&in, s, t);
				float sc = amax[h] / 127.0f;

				assert_true(inputs_k_scale(&c, &in, blk, t % 8, h, 7) == sc);
				/* a static scale: the same outside the pool */
				assert_true(inputs_k_scale(&c, &in, -1, 0, h, 7) == sc);
				quant_apply(k_row(&in, s, t, h), 256, sc, 127, c.rounding, q);
				for (int d = 0; d < 256; d++)
					assert_int_equal(in.k_cache[k_addr(&in, blk, h, d, t % 8)], q[d]);
			}
	inputs_free(&in);
}

/*
 * cache.block_stride: block b of k_cache and v_cache starts at b * BSTR,
 * the block's own bytes laid out as in a dense pool (k_addr / v_addr of
 * block 0), the rest of its BSTR poison; the scales do not move. BS 8,
 * Hkv 4, D 256: a dense block is 8192 elements, BSTR 12288 leaves 4096
 * of padding after each. Checked against the dense build of the same
 * case, for int8 and f32 V.
 */
static void block_stride_pads_every_block(void **state)
{
	static const int ctx[] = { 30, 45 };
	static const enum case_vdtype vt[] = { VDT_INT8, VDT_F32 };

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct fs_case c;
		struct fs_inputs dn, pd;
		size_t B = 12288, dense = 8192;

		base_case(&c, 8, PLACE_SHUFFLED, 2, ctx, NULL);
		c.v_dtype = vt[i];
		build_ok(&c, NULL, &dn);
		c.block_stride = (int)B;
		build_ok(&c, NULL, &pd);
		assert_int_equal(pd.NB, dn.NB);
		assert_memory_equal(pd.block_table, dn.block_table,
				    (size_t)pd.S * pd.MAXB * sizeof(int32_t));
		for (int blk = 0; blk < pd.NB; blk++) {
			for (int h = 0; h < 4; h++)
				for (int d = 0; d < 256; d++)
					for (int slot = 0; slot < 8; slot++) {
						size_t kp = blk * B + k_addr(&dn, 0, h, d, slot);
						size_t vp = blk * B + v_addr(&dn, 0, h, d, slot);

						assert_int_equal(pd.k_cache[kp],
								 dn.k_cache[k_addr(&dn, blk, h, d, slot)]);
						if (vt[i] == VDT_INT8)
							assert_int_equal(pd.v_cache_i8[vp],
									 dn.v_cache_i8[v_addr(&dn, blk, h, d, slot)]);
						else
							assert_memory_equal(&pd.v_cache_f[vp],
									    &dn.v_cache_f[v_addr(&dn, blk, h, d, slot)],
									    sizeof(float));
					}
			for (size_t e = dense; e < B; e++) {
				assert_int_equal(pd.k_cache[blk * B + e], INPUTS_POISON);
				if (vt[i] == VDT_INT8)
					assert_int_equal(pd.v_cache_i8[blk * B + e], INPUTS_POISON);
				else
					assert_true(is_nan(pd.v_cache_f[blk * B + e]));
			}
		}
		assert_memory_equal(pd.k_scale, dn.k_scale,
				    (size_t)pd.NB * 8 * 4 * sizeof(float));
		inputs_free(&dn);
		inputs_free(&pd);
	}
}

/* A block_stride below one block, or off a 16-element boundary, is
 * refused by inputs_build too (the library API bypasses the loader). */
static void block_stride_below_a_block_is_refused(void **state)
{
	static const int ctx[] = { 30 };
	static const int bad[] = { 8176, 8200 };

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct fs_case c;
		struct fs_inputs in;
		struct fs_err err;

		base_case(&c, 8, PLACE_SHUFFLED, 1, ctx, NULL);
		c.block_stride = bad[i];
		memset(&err, 0, sizeof(err));
		assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EINPUT);
		assert_non_null(strstr(err.msg, "block_stride"));
	}
}

/*
 * The K scale of a block a buggy kernel reads outside the pool (a table
 * entry of -1, or an index past NB) is what a poisoned spare slot holds,
 * NaN, for per-token and per-32-block scales; a per-tensor scale is one
 * number whatever the key, so the kernel reads it. It used to abort.
 * Two sequences of 7 and 40 keys, block size 8: 1 + 5 blocks + 3 spare,
 * so NB = 9 and sequence 0's second table entry is -1.
 */
static void k_scale_outside_the_pool_is_poison(void **state)
{
	static const int ctx[] = { 7, 40 };
	static const enum case_kscale ks[] = {
		KSCALE_PER_TOKEN_HEAD, KSCALE_PER_BLOCK32, KSCALE_PER_TENSOR,
	};
	struct fs_case c;
	struct fs_inputs in;

	(void)state;
	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		const int outside[][2] = { { -1, 0 }, { 9, 0 }, { 100, 3 }, { 0, 8 }, { 0, -1 } };

		base_case(&c, 8, PLACE_SHUFFLED, 2, ctx, NULL);
		c.k_scale = ks[i];
		build_ok(&c, NULL, &in);
		assert_int_equal(in.NB, 9);
		assert_int_equal(in.block_table[1], -1);
		for (size_t j = 0; j < sizeof(outside) / sizeof(outside[0]); j++) {
			float x = inputs_k_scale(&c, &in, outside[j][0], outside[j][1], 3, 255);

			if (ks[i] == KSCALE_PER_TENSOR)
				assert_true(x == in.k_scale[0]);
			else
				assert_true(is_nan(x));
		}
		inputs_free(&in);
	}
}

static void float_v_caches(void **state)
{
	static const int ctx[] = { 21, 3 };
	static const enum case_vdtype types[] = { VDT_BF16, VDT_F32 };

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct fs_case c;
		struct fs_inputs in;
		char owned[16 * 16] = { 0 };

		base_case(&c, 16, PLACE_SHUFFLED, 2, ctx, NULL);
		c.v_dtype = types[i];
		build_ok(&c, NULL, &in);
		assert_null(in.v_cache_i8);
		assert_null(in.v_scale);
		for (int s = 0; s < 2; s++)
			for (int t = 0; t < ctx[s]; t++) {
				int blk = phys_block(&in, s, t);

				owned[blk * 16 + t % 16] = 1;
				for (int h = 0; h < 4; h++)
					for (int d = 0; d < 256; d++) {
						float x = v_row(&in, s, t, h)[d];

						assert_true(in.v_cache_f[v_addr(&in, blk, h, d, t % 16)] == x);
						assert_true(quant_bf16_round(x) == x);
					}
			}
		for (int blk = 0; blk < in.NB; blk++)
			for (int slot = 0; slot < 16; slot++)
				if (!owned[blk * 16 + slot])
					assert_true(is_nan(in.v_cache_f[v_addr(&in, blk, 3, 255, slot)]));
		inputs_free(&in);
	}
}

static void builds_are_deterministic(void **state)
{
	static const int ctx[] = { 77, 12, 130 };
	struct fs_case c;
	struct fs_inputs a, b;
	size_t nq, nkv, ncache, nslots;

	(void)state;
	base_case(&c, 16, PLACE_SHUFFLED, 3, ctx, NULL);
	c.k.zero_rows = 0.1;
	c.v.constant_rows = 0.1;
	build_ok(&c, NULL, &a);
	build_ok(&c, NULL, &b);
	nq = (size_t)a.S * a.T * a.Hq * a.D;
	nkv = (size_t)a.S * a.MAXCTX * a.Hkv * a.D;
	ncache = (size_t)a.NB * a.Hkv * a.D * a.BS;
	nslots = (size_t)a.NB * a.BS * a.Hkv;
	assert_memory_equal(a.q, b.q, nq * sizeof(float));
	assert_memory_equal(a.k, b.k, nkv * sizeof(float));
	assert_memory_equal(a.v, b.v, nkv * sizeof(float));
	assert_memory_equal(a.q_int8, b.q_int8, nq);
	assert_memory_equal(a.q_scale, b.q_scale, (size_t)a.S * a.T * a.Hq * sizeof(float));
	assert_memory_equal(a.k_cache, b.k_cache, ncache);
	assert_memory_equal(a.v_cache_i8, b.v_cache_i8, ncache);
	assert_memory_equal(a.k_scale, b.k_scale, nslots * sizeof(float));
	assert_memory_equal(a.v_scale, b.v_scale, nslots * sizeof(float));
	assert_memory_equal(a.block_table, b.block_table, (size_t)a.S * a.MAXB * 4);
	inputs_free(&b);

	/* another seed: other data and another shuffle */
	c.seed = 1235;
	build_ok(&c, NULL, &b);
	assert_true(memcmp(a.k, b.k, nkv * sizeof(float)) != 0);
	assert_true(memcmp(a.block_table, b.block_table, (size_t)a.S * a.MAXB * 4) != 0);
	inputs_free(&a);
	inputs_free(&b);
}

/*
 * caches_only (an emulation alone) builds the same Q, caches and scales
 * without keeping the logical K and V: for every K scale granularity,
 * float V, zero/constant rows and outlier channels, and given arrays.
 */
static void caches_only_builds_the_same_caches(void **state)
{
	static const int ctx[] = { 37, 16 };
	size_t nkv = 2 * 37 * 4 * 256;
	float *kv = malloc(nkv * sizeof(float));

	(void)state;
	for (size_t i = 0; i < nkv; i++)
		kv[i] = (float)((int)(i % 211) - 105) * 0.021f;
	for (int variant = 0; variant < 5; variant++) {
		struct inputs_given g = { NULL, NULL, NULL, 0 }, h;
		struct fs_inputs a, b;
		struct fs_case c;
		size_t cache, slots;

		base_case(&c, 16, PLACE_SHUFFLED, 2, ctx, NULL);
		c.k_scale = variant == 1 ? KSCALE_PER_TENSOR :
			    variant == 2 ? KSCALE_PER_BLOCK32 : KSCALE_PER_TOKEN_HEAD;
		c.v_dtype = variant == 3 ? VDT_BF16 : VDT_INT8;
		c.k.zero_rows = c.v.constant_rows = 0.2;
		c.k.n_outliers = 1;
		c.k.outliers[0] = 7;
		c.k.outlier_scale = 10.0;
		if (variant == 4)
			g.k = g.v = kv;
		h = g;
		h.caches_only = 1;
		build_ok(&c, &g, &a);
		build_ok(&c, &h, &b);
		assert_null(b.k);
		assert_null(b.v);
		cache = (size_t)a.NB * a.Hkv * a.D * a.BS;
		slots = (size_t)a.NB * a.BS * a.Hkv;
		assert_memory_equal(a.q_int8, b.q_int8, (size_t)a.S * a.T * a.Hq * a.D);
		assert_memory_equal(a.k_cache, b.k_cache, cache);
		if (a.k_scale)
			assert_memory_equal(a.k_scale, b.k_scale,
					    (variant == 1 ? 1 : slots) * sizeof(float));
		else
			assert_memory_equal(a.k_scale16, b.k_scale16,
					    slots * (a.D / 32) * sizeof(uint16_t));
		if (a.v_cache_i8) {
			assert_memory_equal(a.v_cache_i8, b.v_cache_i8, cache);
			assert_memory_equal(a.v_scale, b.v_scale, slots * sizeof(float));
		} else {
			assert_memory_equal(a.v_cache_f, b.v_cache_f, cache * sizeof(float));
		}
		inputs_free(&a);
		inputs_free(&b);
	}
	free(kv);
}

/*
 * inputs_kv_row: with only the caches built, a logical K or V row (or a
 * slice of one) made again is the kept row's bits, for every
 * distribution, outliers and zero / constant rows (the reference reads
 * K and V this way in a full check, 0.2.0).
 */
static void kv_rows_made_again_equal_kept(void **state)
{
	static const int ctx[] = { 37, 9 };
	struct inputs_given only = { NULL, NULL, NULL, 1 };
	struct fs_case c;
	struct fs_inputs kept, caches;
	float buf[D_MAX];

	(void)state;
	base_case(&c, 16, PLACE_SHUFFLED, 2, ctx, NULL);
	c.k.n_outliers = 1;
	c.k.outliers[0] = 200;
	c.k.outlier_scale = 10.0;
	c.k.zero_rows = 0.2;
	c.v.dist = DIST_UNIFORM;
	c.v.constant_rows = 0.3;
	build_ok(&c, NULL, &kept);
	build_ok(&c, &only, &caches);
	assert_null(caches.k);
	assert_null(caches.v);
	for (int s = 0; s < 2; s++)
		for (int j = 0; j < ctx[s]; j++)
			for (int h = 0; h < 4; h++) {
				assert_memory_equal(inputs_kv_row(&c, &caches, 0, s, j, h, 0, 256, buf),
						    k_row(&kept, s, j, h), 256 * sizeof(float));
				assert_memory_equal(inputs_kv_row(&c, &caches, 1, s, j, h, 128, 128, buf),
						    v_row(&kept, s, j, h) + 128, 128 * sizeof(float));
				assert_ptr_equal(inputs_kv_row(&c, &kept, 1, s, j, h, 16, 32, buf),
						 v_row(&kept, s, j, h) + 16);
				/* slices made alone: the outlier dim 200 inside one */
				assert_memory_equal(inputs_kv_row(&c, &caches, 0, s, j, h, 192, 32, buf),
						    k_row(&kept, s, j, h) + 192, 32 * sizeof(float));
				assert_memory_equal(inputs_kv_row(&c, &caches, 1, s, j, h, 16, 48, buf),
						    v_row(&kept, s, j, h) + 16, 48 * sizeof(float));
			}
	/* inputs_kv_keys and inputs_kv_get, the reader of many rows: the
	 * same bits, keys made for runs that start anywhere, a kept tensor
	 * read in place */
	for (int which = 0; which < 2; which++) {
		struct inputs_kv kv, kk;
		uint64_t keys[16];

		inputs_kv_init(&kv, &c, &caches, which);
		inputs_kv_init(&kk, &c, &kept, which);
		for (int s = 0; s < 2; s++)
			for (int j0 = 0; j0 < ctx[s]; j0 += 5)
				for (int h = 0; h < 4; h++) {
					int n = ctx[s] - j0 < 16 ? ctx[s] - j0 : 16;

					inputs_kv_keys(&kv, s, j0, n, h, keys);
					for (int i = 0; i < n; i++) {
						const float *want = (which ? v_row : k_row)(&kept, s,
											  j0 + i, h);

						assert_memory_equal(inputs_kv_get(&kv, keys[i], s, j0 + i,
										  h, 0, 256, buf),
								    want, 256 * sizeof(float));
						assert_memory_equal(inputs_kv_get(&kv, keys[i], s, j0 + i,
										  h, 192, 32, buf),
								    want + 192, 32 * sizeof(float));
						assert_ptr_equal(inputs_kv_get(&kk, keys[i], s, j0 + i,
									       h, 32, 64, buf),
								 want + 32);
					}
				}
	}
	inputs_free(&kept);
	inputs_free(&caches);
}

static void given_arrays_are_used_and_rounded(void **state)
{
	static const int ctx[] = { 18, 4 };
	struct fs_case c;
	struct fs_inputs in;
	struct inputs_given g = { 0 };
	size_t nq = 2 * 1 * 24 * 256, nkv = 2 * 18 * 4 * 256;
	float *q = malloc(nq * sizeof(float)), *k = malloc(nkv * sizeof(float));
	int8_t want[D_MAX];

	(void)state;
	for (size_t i = 0; i < nq; i++)
		q[i] = (float)((int)(i % 97) - 48) * 0.01f;
	q[0] = 1.00390625f;	/* tie: BF16 keeps 1.0 */
	q[1] = 1.01171875f;	/* tie: BF16 goes to 1.015625 */
	for (size_t d = 0; d < 256; d++)	/* seq 0, head 5: a zero row */
		q[5 * 256 + d] = 0.0f;
	for (size_t i = 0; i < nkv; i++)
		k[i] = (float)((int)(i % 251) - 125) * 0.037f;
	for (size_t i = (18 + 4) * 4 * 256; i < nkv; i++)
		k[i] = 99.0f;	/* seq 1 tokens 4..17: past its context */
	g.q = q;
	g.k = k;
	base_case(&c, 8, PLACE_REVERSED, 2, ctx, NULL);
	build_ok(&c, &g, &in);
	assert_true(in.q[0] == 1.0f);
	assert_true(in.q[1] == 1.015625f);
	for (size_t i = 0; i < nq; i++)
		assert_true(in.q[i] == quant_bf16_round(q[i]));
	assert_true(in.q_scale[5] == 0.0f);
	for (int d = 0; d < 256; d++)
		assert_int_equal(in.q_int8[5 * 256 + d], 0);
	quant_apply(in.q, 256, in.q_scale[0], 127, ROUND_HALF_AWAY, want);
	assert_memory_equal(in.q_int8, want, 256);
	for (int s = 0; s < 2; s++)
		for (int t = 0; t < 18; t++)
			for (int h = 0; h < 4; h++) {
				const float *x = k_row(&in, s, t, h);
				const float *gx = k + (x - in.k);

				for (int d = 0; d < 256; d++)
					assert_true(x[d] == (t < ctx[s] ? quant_bf16_round(gx[d]) : 0.0f));
				if (t >= ctx[s])
					continue;
				quant_apply(x, 256, quant_scale(x, 256, 127), 127, ROUND_HALF_AWAY, want);
				for (int d = 0; d < 256; d++)
					assert_int_equal(in.k_cache[k_addr(&in, phys_block(&in, s, t), h, d, t % 8)],
							 want[d]);
			}
	/* V was not given: generated */
	assert_true(in.v[7] == quant_bf16_round(doc_draw(gen_row_key(1234, GEN_V, 0, 0, 0), 7,
							     DIST_NORMAL)));
	inputs_free(&in);
	free(q);
	free(k);
}

/*
 * The case's rounding mode reaches Q, K and V: rows whose absmax is 127
 * have scale exactly 1, so x / scale = x and the ties are known by hand.
 */
static void rounding_mode_reaches_every_tensor(void **state)
{
	static const int ctx[] = { 3 };
	static const float tie[] = { 127.0f, 2.5f, -0.5f, 126.5f, -1.5f };
	static const int8_t away[] = { 127, 3, -1, 127, -2 };
	static const int8_t even[] = { 127, 2, 0, 126, -2 };
	float q[24 * 256] = { 0 }, kv[3 * 4 * 256] = { 0 };
	struct inputs_given g = { q, kv, kv, 0 };

	(void)state;
	for (int i = 0; i < 5; i++) {
		q[i] = tie[i];
		kv[(1 * 4 + 2) * 256 + 16 * 3 + i] = tie[i];	/* token 1, head 2 */
	}
	for (int mode = 0; mode < 2; mode++) {
		struct fs_case c;
		struct fs_inputs in;
		const int8_t *want = mode ? even : away;

		base_case(&c, 16, PLACE_REVERSED, 1, ctx, NULL);
		c.rounding = mode ? ROUND_HALF_EVEN : ROUND_HALF_AWAY;
		build_ok(&c, &g, &in);
		assert_true(in.q_scale[0] == 1.0f);
		assert_true(in.k_scale[scale_addr(&in, in.NB - 1, 1, 2)] == 1.0f);
		assert_true(in.v_scale[scale_addr(&in, in.NB - 1, 1, 2)] == 1.0f);
		for (int i = 0; i < 5; i++) {
			assert_int_equal(in.q_int8[i], want[i]);
			assert_int_equal(in.k_cache[k_addr(&in, in.NB - 1, 2, 48 + i, 1)], want[i]);
			assert_int_equal(in.v_cache_i8[v_addr(&in, in.NB - 1, 2, 48 + i, 1)], want[i]);
		}
		inputs_free(&in);
	}
}

static void too_large_is_refused_before_allocating(void **state)
{
	struct fs_case c;
	struct fs_inputs in;
	struct fs_err err;
	int ctx[CASE_MAX_SEQS];

	(void)state;
	for (int s = 0; s < CASE_MAX_SEQS; s++)
		ctx[s] = CASE_MAX_CONTEXT;
	/* 64 sequences of 1M keys: K and V alone are 2 * 256 GiB */
	base_case(&c, 16, PLACE_CONTIGUOUS, CASE_MAX_SEQS, ctx, NULL);
	memset(&in, 0x5a, sizeof(in));
	assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EBUDGET);
	assert_non_null(strstr(err.msg, "the case needs "));
	assert_non_null(strstr(err.msg, ", over the limit of 16.0 GiB (INPUTS_MAX_BYTES"));
	assert_null(in.q);
	assert_null(in.k);
	assert_null(in.k_cache);
	assert_null(in.block_table);
	/* just over: one sequence whose K and V are 8 GiB each */
	{
		int one = 1 << 20;

		base_case(&c, 16, PLACE_CONTIGUOUS, 1, &one, NULL);
		c.kv_heads = 8;	/* 1M * 8 * 256 * 4 B = 8 GiB each */
		assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EBUDGET);
		assert_null(in.k);
	}
}

static void bad_cases_are_refused(void **state)
{
	static const int ctx[] = { 20, 9 };
	struct fs_case c;
	struct fs_inputs in;
	struct fs_err err;

	(void)state;
	base_case(&c, 16, PLACE_CONTIGUOUS, 2, ctx, NULL);
	c.num_blocks = 2;	/* needs 3 */
	assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "cache has 2 blocks, the sequences need 3"));
	assert_null(in.k);

	base_case(&c, 16, PLACE_CONTIGUOUS, 2, ctx, NULL);
	interleaved_table(&c);
	c.seqs[1].blocks[0] = c.seqs[0].blocks[1];	/* reuse */
	assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "already used by sequence 0"));
	assert_null(in.k);
	c.seqs[1].blocks[0] = c.num_blocks;	/* out of the pool */
	assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "is not in 0.."));
	c.seqs[1].n_blocks = 0;	/* too short */
	assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "block table has 0 blocks"));
	case_free(&c);
	assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EINPUT);	/* none */

	base_case(&c, 16, PLACE_CONTIGUOUS, 2, ctx, NULL);
	c.head_dim = 100;
	assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "head_dim 100"));
	c.head_dim = 48;
	c.k_scale = KSCALE_PER_BLOCK32;
	assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "per_block32"));
	c.k_scale = KSCALE_PER_TOKEN_HEAD;
	c.v_dtype = VDT_Q8_0;
	assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "needed by q8_0 and q4_0 V"));

	base_case(&c, 16, PLACE_CONTIGUOUS, 2, ctx, NULL);
	c.clip = 128;
	assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EINPUT);
	base_case(&c, 16, PLACE_CONTIGUOUS, 2, ctx, NULL);
	c.block_size = 0;
	assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EINPUT);
	base_case(&c, 16, PLACE_CONTIGUOUS, 2, ctx, NULL);
	c.n_seqs = 0;
	assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EINPUT);
	base_case(&c, 16, PLACE_CONTIGUOUS, 2, ctx, NULL);
	c.seqs[1].context = -1;
	assert_int_equal(inputs_build(&c, NULL, &in, &err), FS_EINPUT);
	assert_null(in.q);
	/* inputs_free on a zeroed struct is harmless */
	inputs_free(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(paging_every_placement_and_block_size),
		cmocka_unit_test(sparse_pool_stores_named_blocks),
		cmocka_unit_test(which_pools_are_sparse),
		cmocka_unit_test(v_blocks_stored_by_hand),
		cmocka_unit_test(hand_worked_address),
		cmocka_unit_test(generated_values_match_gen),
		cmocka_unit_test(sequences_do_not_depend_on_each_other),
		cmocka_unit_test(kv_rows_made_again_equal_kept),
		cmocka_unit_test(zero_and_constant_rows),
		cmocka_unit_test(per_block32_scales_are_f16),
		cmocka_unit_test(per_tensor_one_scale),
		cmocka_unit_test(per_head_one_scale_per_head),
		cmocka_unit_test(block_stride_pads_every_block),
		cmocka_unit_test(block_stride_below_a_block_is_refused),
		cmocka_unit_test(k_scale_outside_the_pool_is_poison),
		cmocka_unit_test(float_v_caches),
		cmocka_unit_test(builds_are_deterministic),
		cmocka_unit_test(given_arrays_are_used_and_rounded),
		cmocka_unit_test(caches_only_builds_the_same_caches),
		cmocka_unit_test(rounding_mode_reaches_every_tensor),
		cmocka_unit_test(too_large_is_refused_before_allocating),
		cmocka_unit_test(bad_cases_are_refused),
	};

	return cmocka_run_group_tests_name("inputs", tests, NULL, NULL);
}
