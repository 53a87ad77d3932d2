/*
 * qk_tile.h - the per-lane logic of the QK^T half of a paged INT8
 * attention kernel, shared by the HIP harness (hip/attn_mmac.hip, one
 * wave per tile on the device), the CUDA one (attn_sm80.cu, one warp per
 * tile, its own PTX register layout) and the CPU harness (qk_cpu.c, the
 * same functions in loops). Only the matrix instruction and its lane map
 * differ between them.
 *
 * A tile is a row of acc_tiles (seq, head, row_base, token_base,
 * row_tile):
 *   decode   row m = q head head*G + (M*row_tile + m) % G of query token
 *            row_base (the replicated rows of the article when G < M;
 *            a group of G > M q heads, MQA 32/1, takes ceil(G/M) row
 *            tiles); the first occurrence, M*row_tile + m < G, writes
 *            the scores. packed_rows (the case's kernel: decode_rows:
 *            packed): row m = q head head*G + M*row_tile + m while that
 *            is < G; the rows past G are padding, zero A rows (acc 0)
 *   prefill  row m = query token row_base + m of q head `head`
 * Key token_base + n goes through the block table into the paged cache
 * [NB][Hkv][D/16][BS][16]; a key past the sequence's blocks loads 0.
 * Scores: s = float(acc) * sQ * sK * softmax_scale for the key that the
 * kernel believes the accumulator is, -inf when that key is not visible
 * (at or past the context, or after the query's position).
 *
 * Planted bugs (the bits of fsq_case.bugs) imitate broken kernels, each a
 * bug class fragsim diff names:
 *   FSQ_BUG_C_COLUMNS   a lane's accumulators taken as adjacent columns,
 *                       EC * (lane / 16) + e (the article's bug; on
 *                       gfx936 the truth is lane / 16 + 4 * e)
 *   FSQ_BUG_PAGE_WALK   the logical block used as the physical one
 *   FSQ_BUG_HEAD_DIM_HALF  only the first D/2 dims of K loaded
 *
 * C99, C++ and HIP/CUDA (device and host).
 */
#ifndef FRAGSIM_QK_TILE_H
#define FRAGSIM_QK_TILE_H

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__) || defined(__HIP__) || defined(__HIPCC__)
#define FSQ_HD static inline __host__ __device__
#else
#define FSQ_HD static inline
#endif

#define FSQ_BUG_C_COLUMNS 1
#define FSQ_BUG_PAGE_WALK 2
#define FSQ_BUG_HEAD_DIM_HALF 4

/* acc_tiles' columns: seq, head, row_base, token_base, row_tile. */
#define FSQ_TILE_COLS 5

struct fsq_case {
	int prefill, S, T, Hq, Hkv, D, G, NB, BS, MAXB, MAXCTX;
	int rows;		/* M, the instruction's rows (not named M: the
				   harnesses #define M as the lane map's) */
	float softmax_scale;	/* (float) of the manifest's double */
	int bugs;		/* FSQ_BUG_* */
	int packed_rows;	/* decode: 1 for kernel: decode_rows: packed
				   (the golden manifest's "decode_rows") */
};

/* The golden's tensors (device or host pointers) and the outputs. */
struct fsq_bufs {
	const int8_t *q_int8;		/* [S][T][Hq][D] */
	const float *q_scale;		/* [S][T][Hq] */
	const int8_t *k_cache;		/* [NB][Hkv][D/16][BS][16] */
	const float *k_scale;		/* [NB][BS][Hkv] */
	const int32_t *block_table;	/* [S][MAXB] */
	const int32_t *context_lens;	/* [S] */
	const int32_t *q_pos;		/* [S][T] */
	const int32_t *tokens;		/* [S] */
	const int32_t *seq_block0;	/* [S] */
	const int32_t *tiles;		/* [n][FSQ_TILE_COLS] */
	int32_t *acc;			/* [n][wave][EC] */
	float *scores;			/* [S][T][Hq][MAXCTX] */
};

/* The query row m of tile `tile` stands for. */
struct fsq_row {
	int s, t, qh, g;	/* sequence, query token, q head, kv head */
	int valid;		/* the sequence has query token t */
	int primary;		/* the row that writes this q head's scores */
};

FSQ_HD struct fsq_row fsq_row_of(const struct fsq_case *c,
				 const struct fsq_bufs *b, int tile, int m)
{
	const int32_t *xy = &b->tiles[tile * FSQ_TILE_COLS];
	struct fsq_row r;

	r.s = xy[0];
	if (c->prefill) {
		r.t = xy[2] + m, r.qh = xy[1], r.g = xy[1] / c->G, r.primary = 1;
	} else {
		int local = c->rows * xy[4] + m;

		r.t = xy[2], r.qh = xy[1] * c->G + local % c->G, r.g = xy[1];
		r.primary = local < c->G;
		/* packed: a row past the group is padding, a zero A row */
		if (c->packed_rows && local >= c->G) {
			r.qh = xy[1] * c->G, r.valid = r.primary = 0;
			return r;
		}
	}
	r.valid = r.t < b->tokens[r.s];
	r.primary &= r.valid;
	return r;
}

/* Physical block of key tok of sequence s. */
FSQ_HD int fsq_block(const struct fsq_case *c, const struct fsq_bufs *b, int s,
		     int tok)
{
	if (c->bugs & FSQ_BUG_PAGE_WALK)
		return b->seq_block0[s] + tok / c->BS;
	return b->block_table[s * c->MAXB + tok / c->BS];
}

/* Is key tok within the sequence's blocks (so a load may touch it)? */
FSQ_HD int fsq_key_loadable(const struct fsq_case *c, const struct fsq_bufs *b,
			    int s, int tok)
{
	return tok / c->BS < (b->context_lens[s] + c->BS - 1) / c->BS;
}

/* Byte offset of K[tok][dim] of kv head g in the paged cache. */
FSQ_HD long fsq_k_offset(const struct fsq_case *c, int blk, int g, int tok,
			 int dim)
{
	return ((((long)blk * c->Hkv + g) * (c->D / 16) + dim / 16) * c->BS +
		tok % c->BS) * 16 + dim % 16;
}

FSQ_HD int8_t fsq_q(const struct fsq_case *c, const struct fsq_bufs *b,
		    const struct fsq_row *r, int dim)
{
	if (!r->valid)
		return 0;
	return b->q_int8[(((long)r->s * c->T + r->t) * c->Hq + r->qh) * c->D + dim];
}

FSQ_HD int8_t fsq_k(const struct fsq_case *c, const struct fsq_bufs *b, int s,
		    int g, int tok, int dim)
{
	if (!fsq_key_loadable(c, b, s, tok))
		return 0;
	if ((c->bugs & FSQ_BUG_HEAD_DIM_HALF) && dim >= c->D / 2)
		return 0;
	return b->k_cache[fsq_k_offset(c, fsq_block(c, b, s, tok), g, tok, dim)];
}

/* The column the kernel believes accumulator (lane, e) is. */
FSQ_HD int fsq_belief_col(const struct fsq_case *c, int lane, int e, int ec,
			  int true_col)
{
	if (c->bugs & FSQ_BUG_C_COLUMNS)
		return ec * (lane / 16) + e;
	return true_col;
}

/* The recovered score of acc for key `key` of row r, or -inf if masked. */
FSQ_HD float fsq_score(const struct fsq_case *c, const struct fsq_bufs *b,
		       const struct fsq_row *r, int key, int32_t acc)
{
	int slot = key % c->BS;
	float sk, sq;

	if (!r->valid || key >= b->context_lens[r->s] ||
	    key > b->q_pos[r->s * c->T + r->t])
		return -INFINITY;
	sk = b->k_scale[((long)fsq_block(c, b, r->s, key) * c->BS + slot) * c->Hkv + r->g];
	sq = b->q_scale[((long)r->s * c->T + r->t) * c->Hq + r->qh];
	return (float)acc * sq * sk * c->softmax_scale;
}

/* Where score (row r, key) goes in scores.npy. */
FSQ_HD long fsq_score_index(const struct fsq_case *c, const struct fsq_row *r,
			    int key)
{
	return (((long)r->s * c->T + r->t) * c->Hq + r->qh) * c->MAXCTX + key;
}

#endif
