/*
 * attn_int.h - what the two executors of sim/attn.c share: the kernel's
 * tables, work units, rows, per-row softmax state and the helpers that
 * define the data layout (block walk, K/V scales, the split-K merge).
 * attn.c holds the scalar per-lane executor (the spec) and the driver;
 * attn_fast.c the fast path. Private to those two files.
 */
#ifndef ATTN_INT_H
#define ATTN_INT_H

#include <stddef.h>
#include <stdint.h>

#include "attn.h"
#include "case.h"
#include "inputs.h"
#include "kernel.h"
#include "lanemap.h"
#include "logit.h"
#include "tile_fast.h"

#define ATTN_MAX_SEGMENTS 1024	/* split-K segments per context */

struct kern {
	const struct fs_case *c;
	const struct fs_kernel *kn;	/* the kernel's assumptions */
	const struct lanemap *lm;	/* the kernel's map: loads and C reads */
	const struct lanemap *hw;	/* the map the hardware executes */
	const struct fs_inputs *in;
	struct attn_result *r;
	int M, N, K, W, EA, EB, EC, ksteps, G, D, BS, MAXB, Hq, Hkv, T, MAXCTX;
	int per_block32;
	int dims;		/* head-dim elements loaded: D, or head_dim_loaded */
	int ksteps_run;		/* K-steps the kernel issues: ceil(dims / K) */
	/* Slots of each C row in slot order: rowslots[m*rowcap + i]. */
	int *rowslots, *rowcount, rowcap;
	/* The C column the kernel believes each slot holds, per use. */
	const int *col_scale, *col_mask, *col_write;
	int *col_contig;	/* the "adjacent columns" belief, when used */
	int *seq_block0;	/* page_walk none: first block of each sequence */
	/* Soft cap and ALiBi (logit.h), applied to every visible score. */
	struct logit_mod lmod;
	/* Fast path: the slot order of every C row, when they share one. */
	struct tile_order ord;
	int ord_ok;
};

/* One row of a row tile: which query it is. */
struct row {
	int valid;		/* 0: prefill padding row */
	int t, qh;		/* query token and q head */
	int q_pos;
	int primary;		/* writes scores/out (first replica in decode) */
	float sq;		/* q scale */
	const int8_t *q;	/* its D quantized values */
};

struct unit {
	int s, t, h;		/* decode: h = kv head; prefill: h = q head */
	int rt0, nrt;		/* prefill: first row tile and count */
	size_t tile0;		/* first acc tile index */
};

/* Softmax state of one row within one segment. */
struct rstate {
	float m, l;
	float *o;		/* [D], unnormalized */
};

static inline int attn_kv_head(const struct kern *k, const struct unit *u)
{
	if (k->c->mode == MODE_DECODE)
		return u->h;
	return k->kn->gqa_modulo ? u->h % k->Hkv : u->h / k->G;
}

/*
 * The physical block the kernel reads for key tok of sequence s (the
 * page_walk assumption, kernel.h), or -1 when that read falls outside
 * the pool: a block-table entry of -1 or past the table's row (a key
 * past the context that a buggy mask let through), or a walk that
 * ignores the table and runs off the end. Readers of -1 get poison, as
 * a device would read memory no sequence owns (attn.c: load_k,
 * attn_k_scale, attn_v_col).
 */
static inline int attn_block(const struct kern *k, int s, int tok)
{
	int b = tok / k->BS, p;

	if (k->kn->page_walk == KWALK_NONE)
		p = k->seq_block0[s] + b;
	else if (k->kn->page_walk == KWALK_IDENTITY)
		p = b;
	else
		p = b < k->MAXB ? k->in->block_table[s * k->MAXB + b] : -1;
	return p >= 0 && p < k->in->NB ? p : -1;
}

/*
 * Where key tok's V column lives: element d is base[d * stride] (stride
 * BS; 0 for the poison column of a block outside the pool), times scale
 * for int8 V (NULL for float V). Looked up once per key, not per element.
 */
struct vcol {
	const int8_t *i8;
	const float *f;
	float scale;
	size_t stride;
};

struct vcol attn_v_col(const struct kern *k, const struct unit *u, int tok);
/* Keys [*lo, *hi) of split-K segment sg of sequence s. */
void attn_seg_bounds(const struct kern *k, int s, int sg, int *lo, int *hi);
/* The unit's row tiles' rows: rows[rt * M + m]. */
void attn_unit_rows(const struct kern *k, const struct unit *u, struct row *rows);
/* K scale of key tok for K-step ks. */
float attn_k_scale(const struct kern *k, const struct unit *u, int tok, int ks);
/* Merge a row's segment states (segment order) into out, row_max/sum. */
void attn_merge_row(const struct kern *k, const struct unit *u,
		    const struct row *w, struct rstate *const *segs, int nseg);
/* Store one executed tile's C registers and its acc_tiles entry. */
void attn_acc_store(const struct kern *k, const struct unit *u, size_t tile,
		    int rt, int kb, const int32_t *creg);

/* The scalar executor's per-thread scratch (the fast path uses rows, st). */
struct scratch {
	uint8_t *areg, *breg;
	int32_t *am, *bm, *creg;
	float *ws, *ps, *p;
	struct row *rows;
	struct rstate *st;	/* [nseg][nrt*M] */
	float *obuf;
};

/* ---- the fast path (attn_fast.c) ---- */

/*
 * The fast path (attn_fast.c): the same unit, for the correct kernel on its own
 * hardware map, with the register round trip taken out.
 *
 * Why it gives the scalar executor's bytes:
 *   - For the correct kernel, load_q/load_k put A[m][kk] = Qq[row m][dim]
 *     and B[kk][n] = K[key kb + n][dim] into the registers through lm, and
 *     mmac_read reads them back through the same map (hw == lm): the
 *     identity on the matrices. So C = Q K^T exactly, computed here as
 *     int32 dot products (tile_qk), and the C registers kept in acc are the
 *     profile's scatter of C (attn_acc_store). K is staged from the paged
 *     cache under load_k's rule: a key inside the last block loads its
 *     slot, a key past the block table loads 0.
 *   - Scores, masks and the workspace column are the profile's column,
 *     so ws[m][n] is recover_scores' value for every (m, n): the same
 *     f32 products in the same order.
 *   - Softmax walks each row's slots in the scalar order (rowslots: the
 *     max, then p summed in register order within a lane, lanes in
 *     order); only the exps are computed ahead, by tile_exp, which is
 *     fs_expf bit for bit.
 *   - PV: per (row, d) the same o * alpha, then o + p * vf per visible
 *     key in key order (tile_pv); vf = (float)v * v_scale is a function of
 *     the key alone, so computing it once per tile changes nothing.
 *   - Decode: rows r and r' with the same q head have the same Q, so the
 *     same C row, scores, masks; if their slot orders also agree (checked
 *     once, attn_fast_rows_agree, else the scalar executor runs) every state
 *     is the same, so only the G distinct rows are computed and
 *     replica_mismatch is 0 by construction.
 * Rows are processed in groups of at most 16 (the lanes of tile_pv):
 * decode the distinct rows, prefill one row tile each.
 */
struct fscratch {
	int8_t *kst;		/* [D/16][N][16]: K staged when not in one block */
	int8_t *qb;		/* [ng][16][D] */
	int32_t *qsum;		/* [ng][16] */
	int32_t *dot;		/* [ksteps_in_acc][ng][16][N] */
	int32_t *creg;		/* [ksteps_in_acc][slots] */
	float *ws, *ex;		/* [16][N]: scores; exps (P), then the alphas */
	uint16_t *vis;		/* [N]: bit r, key n visible to row r */
	float *vn;		/* [N][D] */
	float *ksc, *vsc;	/* [ksteps][N], [N] */
	float *ot;		/* [ng][16][D] */
	float *gm, *gl;		/* [ng][16] */
	int *needed;		/* [nrt] */
};

int attn_fast_alloc(const struct kern *k, int ng, int nrt, struct fscratch *f);
void attn_fast_free(struct fscratch *f);
/* Fill k->ord, k->ord_ok: do all C rows sum 16 columns in one order? */
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
		   enum tile_isa isa, int sg0, int sg1, size_t tile,
		   struct rstate *sts, struct scratch *x, struct fscratch *f);
/* Merge a unit's rows i0 .. i1 - 1 from their segment states (segment
 * order); rows past the unit's are ignored. */
void attn_fast_merge(const struct kern *k, const struct unit *u,
		     struct rstate *sts, struct scratch *x, int i0, int i1);
/* One unit on the fast path: segs over all segments, then merge. */
int attn_fast_unit(const struct kern *k, const struct unit *u,
		   enum tile_isa isa, struct scratch *x, struct fscratch *f);

#endif
