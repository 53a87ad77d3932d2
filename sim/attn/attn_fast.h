/*
 * attn_fast.h - the fast executor (attn_fast.c): the same work unit as
 * the scalar executor (attn_spec.c), for the correct kernel on its own
 * hardware map, with the register round trip taken out. Called by the
 * driver (attn.c) only; it calls attn_common.c and the vector kernels
 * (tile_fast.h), never the driver or the scalar executor.
 */
#ifndef ATTN_FAST_H
#define ATTN_FAST_H

#include "attn_int.h"
#include "tile_fast.h"
#include "../common/slab.h"

/*
 * The fast path (attn_fast.c): the same unit, for the correct kernel on
 * its own hardware map, with the register round trip taken out.
 *
 * Why it gives the scalar executor's bytes:
 *   - For the correct kernel, load_q/load_k put A[m][kk] = Qq[row m][dim]
 *     and B[kk][n] = K[key kb + n][dim] into the registers through lm, and
 *     mmac_read reads them back through the same map (hw == lm): the
 *     identity on the matrices. So C = Q K^T exactly, computed here as
 *     int32 dot products (the qk kernel), and the C registers kept in acc
 *     are the profile's scatter of C (attn_acc_store). K is staged from the paged
 *     cache under load_k's rule: a key inside the last block loads its
 *     slot, a key past the block table loads 0.
 *   - Scores, masks and the workspace column are the profile's column,
 *     so ws[m][n] is recover_scores' value for every (m, n): the same
 *     f32 products in the same order.
 *   - Softmax walks each row's slots in the scalar order (rowslots: the
 *     max, then p summed in register order within a lane, lanes in
 *     order); only the exps are computed ahead, by the exp kernel, which
 *     is fs_expf bit for bit.
 *   - PV: per (row, d) the same o * alpha, then o + p * vf per visible
 *     key in key order (the pv kernel); vf = (float)v * v_scale is a
 *     function of the key alone, so computing it once per tile changes
 *     nothing.
 *   - Decode: rows r and r' with the same q head have the same Q, so the
 *     same C row, scores, masks; if their slot orders also agree (checked
 *     once, attn_fast_rows_agree, else the scalar executor runs) every state
 *     is the same, so only the G distinct rows are computed and
 *     replica_mismatch is 0 by construction.
 * Rows are processed in groups of at most TILE_ROWS (16: the bits of the
 * vector kernels' row masks): decode the distinct rows, prefill one row
 * tile each.
 */
struct fscratch {
	int8_t *kst;		/* [D/16][N][16]: K staged when not in one block */
	int8_t *qb;		/* [ng][TILE_ROWS][D] */
	int32_t *qsum;		/* [ng][TILE_ROWS] */
	int32_t *dot;		/* [ksteps_in_acc][ng][TILE_ROWS][N] */
	int32_t *creg;		/* [ksteps_in_acc][slots] */
	float *ws, *ex;		/* [TILE_ROWS][N]: scores; exps (P), then the alphas */
	uint16_t *vis;		/* [N]: bit r, key n visible to row r */
	float *vn;		/* [N][D] */
	float *ksc, *vsc;	/* [ksteps][N], [N] */
	float *ot;		/* [ng][TILE_ROWS][D] */
	float *gm, *gl;		/* [ng][TILE_ROWS] */
	int *needed;		/* [nrt] */
};

/* Carve f for ng row groups and nrt row tiles from s (attn_spec.h's
 * attn_scratch_carve says how); qb, qsum and vn start zeroed. */
int attn_fast_carve(const struct kern *k, int ng, int nrt, struct fscratch *f,
		    struct slab *s);
/* Fill k->ord, k->ord_ok: do all C rows sum TILE_KEYS columns in one order? */
void attn_fast_order(struct kern *k);
/* Do decode's replica rows sum their slots in their primary's order? */
int attn_fast_rows_agree(const struct kern *k);
/*
 * Split-K segments [sg0, sg1) of a unit on the fast path, their first
 * executed tile numbered tile; segment sg's row states into
 * sts[sg * rows + i] (rows: decode the G distinct rows, prefill
 * u->nrt * M). Each segment's state depends on that segment alone, so any
 * split of the segments gives the same bytes.
 */
int attn_fast_segs(const struct kern *k, const struct unit *u,
		   const struct tile_ops *ops, int sg0, int sg1, size_t tile,
		   struct rstate *sts, struct scratch *x, struct fscratch *f);
/* Merge a unit's rows i0 .. i1 - 1 from their segment states (segment
 * order); rows past the unit's are ignored. */
void attn_fast_merge(const struct kern *k, const struct unit *u,
		     const struct tile_ops *ops, struct rstate *sts, struct scratch *x,
		     int i0, int i1);
/* One unit on the fast path: segs over all segments, then merge. */
int attn_fast_unit(const struct kern *k, const struct unit *u,
		   const struct tile_ops *ops, struct scratch *x, struct fscratch *f);

/*
 * attn_fast.c's K staging and per-K-step dots, for pv_fast.c: the tile
 * at kb's K chunk-major under load_k's rule (in place or in kst; the
 * chunk stride returned, *kp the first chunk), and per_block32's
 * dot[ks * kstride + r * N + n].
 */
size_t attn_fast_tile_k(const struct kern *k, const struct unit *u, int kb,
			int8_t *kst, const int8_t **kp);
/* The K scales of keys kb .. min(kb + N, hi) - 1 into ksc[ks * N + n]
 * (attn_k_scale's values; ks < ksteps under per_block32, else 0). */
void attn_fast_kscales(const struct kern *k, const struct unit *u, int kb,
		       int hi, float *ksc);
/* Prefetch K, int8 V and their scales of the block starting at kb (a
 * block's start inside [.., hi), blocks of at most 64 slots; else
 * nothing): the next block's, while this one is computed. */
void attn_fast_prefetch(const struct kern *k, const struct unit *u, int kb, int hi);
void attn_fast_qk_ksteps(const struct kern *k, const int8_t *q, int R,
			 const int8_t *kt, size_t cstride, int32_t *dot, size_t kstride);

/*
 * The fast executor of INT8 PV (pv_fast.c, whose head says why it gives
 * pv_int8.c's bytes): a thread's scratch beside struct pv_scratch.
 */
struct pv_fscratch {
	int8_t *kst;		/* [GT][D/16][N][16]: K staged when not in one block */
	const int8_t **kp;	/* [GT]: each tile's K, in place or in kst */
	size_t *kcs;		/* [GT]: its chunk stride */
	int8_t *qb;		/* [nrt][M][D]: Q of the unit's rows, 0 if invalid */
	int32_t *qsum;		/* [nrt][M] */
	int32_t *dot;		/* [ksteps][M][N] */
	int8_t *a8;		/* [M][K]: PV's A matrix */
	int8_t *b4;		/* [K/4][D][4]: V of each A column's key, 4 keys a d */
	int32_t *c;		/* [M][D]: A B */
	float *ksc;		/* [GT][ksteps][N]: the group's tiles' K scales */
	float *sv;		/* [K]: the group's keys' V scales (vcol's) */
	struct pv_vkey {	/* [K]: the group's keys' V columns, what B reads */
		const int8_t *i8;	/* element d at i8[d * stride], d < n */
		size_t stride;
		int n;
	} *vk;
	float *sq;		/* [M]: a row tile's Q scales, for scores16 */
	int *lo, *hi;		/* [M]: each row's visible keys of a tile */
	float *ex;		/* [M][K] + [M]: exps' arguments, then P and alpha */
	int *bkey;		/* [K]: the key whose V B row c holds (the plan's) */
	int *arow, *aidx;	/* [M*K]: A entry i's slot's P row, and its Pq index */
	uint8_t *rcol, *rbrk;	/* [M][rowcap]: row m's slots' columns, lane starts */
	uint16_t aid;		/* bit m: A row m is Pq row m in key order */
	int ordok;		/* the computed rows share one slot order, ord */
	struct tile_order ord;
	int mr;			/* rows computed per row tile: G for decode's
				 * replicas, else M (pv_fast.c) */
};

/* Does the fast INT8 PV executor serve k (the driver also asks for the
 * correct kernel)? Its profile's operands are int8 (C int32) and M at
 * most TILE_ROWS, hw is lm, K a multiple of 4, and each B row names one key. */
int pv_fast_ok(const struct kern *k);
/* Carve f from s (as attn_fast_carve; nrt: the most row tiles of a
 * unit); -1 also when k->N > 256. */
int pv_fast_carve(const struct kern *k, int nrt, struct pv_fscratch *f, struct slab *s);
/*
 * Split-K segments [sg0, sg1) of a unit, their first tile and group
 * numbered tile and gi; segment sg's row states into sts[sg * rst + i],
 * rst nrt * M (every row, replicas copied from their primaries) or
 * less, pv_fast_state_rows (the computed rows only: decode's distinct
 * rows, the replicas' states left out). A segment's states and goldens depend on
 * that segment alone, so any split gives the same bytes.
 */
int pv_fast_segs(const struct kern *k, const struct unit *u, const struct tile_ops *ops,
		 int sg0, int sg1, size_t tile, size_t gi, struct rstate *sts, int rst,
		 struct scratch *x, struct pv_scratch *px, struct pv_fscratch *f);
/* The states per segment pv_fast_segs keeps for units of nrt row tiles:
 * G for decode whose replica rows are copies of their primaries (one row
 * tile, rows 0 .. G - 1 the primaries: nothing to check), else nrt * M. */
int pv_fast_state_rows(const struct kern *k, int nrt);
/* One unit, pv_int8_unit's bytes: segs over all segments, then
 * attn_spec_finish. 0, or -1 if the A map cannot be read. */
int pv_fast_unit(const struct kern *k, const struct unit *u, const struct tile_ops *ops,
		 struct scratch *x, struct pv_scratch *px, struct pv_fscratch *f,
		 long *replica_bad);

#endif
