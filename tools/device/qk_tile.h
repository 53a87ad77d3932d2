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
 * [NB][Hkv][D/16][BS][16]; a key past the sequence's blocks, or in a block
 * the table does not map (-1), loads 0, and so do the dims of the last
 * K-step past head_dim (zero padding: any head_dim fragsim takes, a
 * multiple of 16, runs). Scores, for the key the kernel believes the
 * accumulator is, in fragsim's order and f32 rounding:
 *   s = float(acc) * sQ * sK * softmax_scale        (per_block32: the sum
 *       over K-steps of float(acc_ks) * sK(ks), then * sQ * softmax_scale)
 *   s = cap * tanh(s / cap)                          model: soft_cap
 *   s = s + slope(q head) * (key - query position)   model: alibi
 *   -inf when the key is not visible: at or past the context, after the
 *   query's position, or W or more keys behind it (model: sliding_window
 *   W: a query at position p sees keys p-W+1 .. p).
 * Device builds must not contract a * b + c into one fused rounding
 * (nvcc -fmad=false, hipcc -ffp-contract=off): the sums above are
 * fragsim's separate roundings.
 *
 * Planted bugs (the bits of fsq_case.bugs) imitate broken kernels, each a
 * bug class fragsim diff names:
 *   FSQ_BUG_C_COLUMNS   a lane's accumulators taken as adjacent columns,
 *                       EC * (lane / 16) + e (the article's bug; on
 *                       gfx936 the truth is lane / 16 + 4 * e)
 *   FSQ_BUG_PAGE_WALK   the logical block used as the physical one
 *   FSQ_BUG_HEAD_DIM_HALF  only the first D/2 dims of K loaded
 *   FSQ_BUG_P_REGROUP_NONE INT8 PV: the C registers fed as the PV A
 *                       operand without the exchange (pv_tile.h)
 *
 * C99, C++ and HIP/CUDA (device and host).
 */
#ifndef FRAGSIM_QK_TILE_H
#define FRAGSIM_QK_TILE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fragsim_dump.h"
#include "fragsim_golden.h"

#if defined(__CUDACC__) || defined(__HIP__) || defined(__HIPCC__)
#define FSQ_HD static inline __host__ __device__
#else
#define FSQ_HD static inline
#endif

#define FSQ_BUG_C_COLUMNS 1
#define FSQ_BUG_PAGE_WALK 2
#define FSQ_BUG_HEAD_DIM_HALF 4
#define FSQ_BUG_P_REGROUP_NONE 8	/* INT8 PV (pv_tile.h) */

/* The lane map is a header of `fragsim lanemap --format c`; the includer
 * names its prefixes in FSQ_LM and FSQ_LMU (fs_gfx936, FS_GFX936), and
 * LM(c_row) is then fs_gfx936_c_row, LMU(WAVE) FS_GFX936_WAVE. */
#define FSQ_CAT_(a, b) a##_##b
#define FSQ_CAT(a, b) FSQ_CAT_(a, b)
#define LM(x) FSQ_CAT(FSQ_LM, x)
#define LMU(x) FSQ_CAT(FSQ_LMU, x)

/* acc_tiles' columns: seq, head, row_base, token_base, row_tile. */
#define FSQ_TILE_COLS 5

struct fsq_case {
	int prefill, S, T, Hq, Hkv, D, G, NB, BS, MAXB, MAXCTX;
	int ksteps;		/* ceil(D / K): K-steps a tile issues */
	int ksteps_acc;		/* accumulators a tile keeps: ksteps for
				   per_block32 (one per K-step), else 1 */
	int kscale;		/* enum fsg_kscale */
	int window;		/* model: sliding_window, 0 = none */
	float soft_cap;		/* (float) model: soft_cap, 0 = none */
	int alibi;		/* model: alibi; the slopes are fsq_bufs' */
	int rows;		/* M, the instruction's rows (not named M: the
				   harnesses #define M as the lane map's) */
	float softmax_scale;	/* (float) of the manifest's double */
	int bugs;		/* FSQ_BUG_* */
	int packed_rows;	/* decode: 1 for kernel: decode_rows: packed
				   (the golden manifest's "decode_rows") */
};

/* The FSQ_BUG_* a harness's command line names ("none" or NULL: 0), -1
 * if unknown. */
static inline int fsq_bug_of(const char *name)
{
	if (!name || !strcmp(name, "none"))
		return 0;
	return !strcmp(name, "c_columns") ? FSQ_BUG_C_COLUMNS :
	       !strcmp(name, "page_walk") ? FSQ_BUG_PAGE_WALK :
	       !strcmp(name, "head_dim_half") ? FSQ_BUG_HEAD_DIM_HALF :
	       !strcmp(name, "p_regroup_none") ? FSQ_BUG_P_REGROUP_NONE : -1;
}

/* The case as the kernel sees it, from its golden (host code): rows and
 * k are the instruction's M and K, bugs the planted FSQ_BUG_*. */
static inline void fsq_case_of(struct fsq_case *c, const struct fsg_golden *g, int rows,
			       int k, int bugs)
{
	memset(c, 0, sizeof(*c));
	c->prefill = g->prefill, c->S = g->S, c->T = g->T, c->Hq = g->Hq;
	c->Hkv = g->Hkv, c->D = g->D, c->G = g->G, c->NB = g->NB, c->BS = g->BS;
	c->MAXB = g->MAXB, c->MAXCTX = g->MAXCTX;
	c->softmax_scale = (float)g->softmax_scale, c->bugs = bugs, c->rows = rows;
	c->packed_rows = !g->prefill && g->packed_rows;
	c->ksteps = (g->D + k - 1) / k;
	c->kscale = (int)g->kscale;
	c->ksteps_acc = g->kscale == FSG_KS_BLOCK32 ? c->ksteps : 1;
	c->window = g->window;
	c->soft_cap = (float)g->soft_cap;
	c->alibi = g->alibi;
}

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
	const float *alibi_slope;	/* [Hq] when alibi (a buffer, not a
					   kernel argument: indexed by row) */
	int32_t *acc;			/* [n][ksteps_acc][wave][EC] */
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

/* Is key tok within the sequence's blocks, in a block of the pool (so a
 * load may touch it)? A table entry of -1 is a block the cache freed. */
FSQ_HD int fsq_key_loadable(const struct fsq_case *c, const struct fsq_bufs *b,
			    int s, int tok)
{
	int blk;

	if (tok / c->BS >= (b->context_lens[s] + c->BS - 1) / c->BS)
		return 0;
	blk = fsq_block(c, b, s, tok);
	return blk >= 0 && blk < c->NB;
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
	if (!r->valid || dim >= c->D)
		return 0;	/* past head_dim: the last K-step's zero padding */
	return b->q_int8[(((long)r->s * c->T + r->t) * c->Hq + r->qh) * c->D + dim];
}

FSQ_HD int8_t fsq_k(const struct fsq_case *c, const struct fsq_bufs *b, int s,
		    int g, int tok, int dim)
{
	if (!fsq_key_loadable(c, b, s, tok) || dim >= c->D)
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

/* The K scale of key `key` of sequence s, kv head g, for K-step ks. */
FSQ_HD float fsq_k_scale(const struct fsq_case *c, const struct fsq_bufs *b, int s,
			 int g, int key, int ks)
{
	long at = ((long)fsq_block(c, b, s, key) * c->BS + key % c->BS) * c->Hkv + g;

	if (c->kscale == 1)		/* FSG_KS_TENSOR */
		return b->k_scale[0];
	if (c->kscale == 2)		/* FSG_KS_BLOCK32 */
		return b->k_scale[at * (c->D / 32) + ks];
	return b->k_scale[at];
}

/*
 * The recovered score of the accumulator(s) at acc for key `key` of row
 * r, or -inf if masked: acc[0] is the tile's accumulator, or with
 * per_block32 K-step ks's is acc[ks * kstride].
 */
FSQ_HD float fsq_score(const struct fsq_case *c, const struct fsq_bufs *b,
		       const struct fsq_row *r, int key, const int32_t *acc, long kstride)
{
	int qp = r->valid ? b->q_pos[r->s * c->T + r->t] : 0;
	float s, sq;

	if (!r->valid || key >= b->context_lens[r->s] || key > qp ||
	    (c->window > 0 && key <= qp - c->window) || !fsq_key_loadable(c, b, r->s, key))
		return -INFINITY;
	sq = b->q_scale[((long)r->s * c->T + r->t) * c->Hq + r->qh];
	if (c->kscale == 2) {		/* per_block32, even one K-step: fragsim's order */
		float a = 0.0f;

		for (int ks = 0; ks < c->ksteps_acc; ks++)
			a += (float)acc[ks * kstride] * fsq_k_scale(c, b, r->s, r->g, key, ks);
		s = a * sq * c->softmax_scale;
	} else {
		s = (float)acc[0] * sq * fsq_k_scale(c, b, r->s, r->g, key, 0) *
		    c->softmax_scale;
	}
	if (c->soft_cap > 0.0f)
		s = c->soft_cap * (float)tanh((double)(s / c->soft_cap));
	if (c->alibi)
		s = s + b->alibi_slope[r->qh] * (float)(key - qp);
	return s;
}

/* Where score (row r, key) goes in scores.npy. */
FSQ_HD long fsq_score_index(const struct fsq_case *c, const struct fsq_row *r,
			    int key)
{
	return (((long)r->s * c->T + r->t) * c->Hq + r->qh) * c->MAXCTX + key;
}

/* b over the golden's host arrays, scores to be filled (host harnesses). */
static inline void fsq_host_bufs(struct fsq_bufs *b, const struct fsg_golden *g, float *scores)
{
	memset(b, 0, sizeof(*b));
	b->q_int8 = g->q_int8, b->q_scale = g->q_scale, b->k_cache = g->k_cache;
	b->k_scale = g->k_scale, b->block_table = g->block_table;
	b->context_lens = g->context_lens, b->q_pos = g->q_pos, b->tokens = g->tokens;
	b->seq_block0 = g->seq_block0, b->tiles = g->acc_tiles, b->scores = scores;
	b->alibi_slope = g->alibi_slope;
}

/* Host buffers for a harness's outputs, poisoned (fragsim_dump.h) so
 * that what the kernel never writes reaches the dump as unwritten: acc
 * [n_tiles][ksteps_acc][wave][ec] and scores [S][T][Hq][MAXCTX]. 0, or
 * -1 out of memory (both freed). */
static inline int fsq_outputs(const struct fsq_case *c, const struct fsg_golden *g,
			      int wave, int ec, int32_t **acc, float **scores,
			      size_t *nacc, size_t *nscores)
{
	*nscores = (size_t)g->S * g->T * g->Hq * g->MAXCTX;
	*nacc = g->n_tiles * (size_t)c->ksteps_acc * wave * ec;
	*scores = (float *)malloc((*nscores ? *nscores : 1) * sizeof(float));
	*acc = (int32_t *)malloc((*nacc ? *nacc : 1) * sizeof(int32_t));
	if (!*scores || !*acc) {
		free(*scores);
		free(*acc);
		*scores = NULL, *acc = NULL;
		return -1;
	}
	fsd_poison_f32(*scores, *nscores);
	fsd_poison_i32(*acc, *nacc);
	return 0;
}

/*
 * A harness's QK results into writer w (host code): acc [n_tiles]
 * [ksteps_acc][wave][ec] in register order for the golden's tiles, the
 * tiles' coordinates, scores [S][T][Hq][MAXCTX] and the row mapping the
 * kernel used. 0, or -1 with w->error set.
 */
static inline int fsq_dump_qk(struct fsd_writer *w, const struct fsq_case *c,
			      const struct fsg_golden *g, const int32_t *acc, int wave, int ec,
			      const float *scores)
{
	size_t shape[4] = { (size_t)g->S, (size_t)g->T, (size_t)g->Hq, (size_t)g->MAXCTX };

	w->packed_rows = c->packed_rows;
	for (size_t i = 0; i < g->n_tiles; i++) {
		const int32_t *xy = &g->acc_tiles[i * FSG_TILE_COLS];
		struct fsd_tile t;

		t.seq = xy[0], t.head = xy[1], t.row_base = xy[2], t.key_base = xy[3];
		t.row_tile = xy[4];
		if (fsd_acc_tile(w, &t, wave, ec, c->ksteps_acc,
				 &acc[i * (size_t)c->ksteps_acc * wave * ec]))
			return -1;
	}
	return fsd_tensor(w, "scores", FSD_F32, scores, 4, shape);
}

/*
 * Write a harness's QK results to dir through fragsim_dump.h (host code,
 * fsq_dump_qk's tensors). 0, or 3 with the reason on stderr after
 * "prog: ".
 */
static inline int fsq_dump(const char *prog, const struct fsq_case *c,
			   const struct fsg_golden *g, const int32_t *acc, int wave, int ec,
			   const float *scores, const char *dir)
{
	struct fsd_writer w;
	int rc = fsd_begin(&w, dir) ? 3 : 0;

	if (!rc && (fsq_dump_qk(&w, c, g, acc, wave, ec, scores) || fsd_commit(&w)))
		rc = 3;
	if (rc) {
		fprintf(stderr, "%s: %s\n", prog, w.error);
		fsd_abort(&w);
	}
	return rc;
}

#endif
