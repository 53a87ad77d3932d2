/*
 * ref.h - the oracle: plain loops over logical tensors, in double.
 *
 * ref/ never calls sim/'s mapping or addressing code (it shares only the
 * plain types and the quantizer): the K of token j is gathered through
 * the block table by ref's own few lines, dot products are exact int32
 * from the quantized data, and softmax and PV are in double. A second
 * reference from the unquantized (BF16-rounded) inputs measures what
 * quantization costs.
 *
 * Work is done for a group of attention rows (s, t, q head) that share
 * one kv head: each key's K and V are gathered from the pages once for
 * all of them. Memory is O(MAXCTX + D) per row of the group, whatever
 * the case size; a group of one row is the plain per-row reference.
 */
#ifndef REF_H
#define REF_H

#include <stdint.h>

#include "../sim/attn/case.h"
#include "../sim/attn/inputs.h"

/* One attention row of the quantized reference and the float one. */
struct ref_row {
	int n;			/* keys: context of the sequence */
	int visible;		/* keys not masked */
	double *score;		/* [n] quantized path, -inf where masked */
	double *prob;		/* [n] */
	double *score_f;	/* [n] float path from BF16-rounded inputs */
	double *prob_f;		/* [n] */
	double *out;		/* [D] */
	double *out_f;		/* [D] */
	double *out_absd;	/* [D] sum_j prob[j] * |v_j[d]| */
	double out_abs;		/* max over d of out_absd */
	double max_abs_score;	/* max |score| over visible keys */
	double max_f, sum_f;	/* softmax of score_f: max, sum of exp(s - max) */
};

/*
 * Rows that share sequence s and kv head g (any query tokens, any of the
 * group's q heads), computed together. row[i] is filled exactly as
 * ref_row_compute(c, in, s, t[i], qh[i], &row[i]) would fill it.
 */
struct ref_group {
	int s, g;
	int rows;
	const int *t, *qh;	/* [rows] */
	struct ref_row *row;	/* [rows], buffers of MAXCTX and D */
	/* Set by ref_groups_compute: */
	int jlo, jhi;		/* keys some row sees */
	int piece0, row0;	/* its first key piece and row over all groups */
};

/* Exact accumulator of the quantized dot product of (s, t, q head) with
 * key j; with per_block32 K scales, only head-dim block `kb` (else -1). */
int32_t ref_acc(const struct fs_case *c, const struct fs_inputs *in, int s,
		int t, int qh, int j, int kb);

/* ALiBi slope of q head h of H heads (the ALiBi authors' get_slopes). */
double ref_alibi_slope(int h, int H);

/* K of key j of sequence s, kv head g, gathered from its page: k[D]. */
void ref_k_row(const struct fs_inputs *in, int s, int g, int j, int8_t *k);
/* The same for keys j0 .. j0 + n - 1: k[n][D], one page lookup a block. */
void ref_k_rows(const struct fs_inputs *in, int s, int g, int j0, int n,
		int8_t *k);

/* Buffers for one row; ref_row_compute fills them. */
int ref_row_alloc(struct ref_row *r, int maxctx, int d);
void ref_row_free(struct ref_row *r);
void ref_row_compute(const struct fs_case *c, const struct fs_inputs *in,
		     int s, int t, int qh, struct ref_row *r);

/*
 * Fill every row of the n groups grp[]. The work is shared out with
 * orphaned "omp for" loops over all the groups at once: call it from
 * outside any parallel region, or from every thread of one (never from
 * one thread of a team). The results do not depend on the number of
 * threads.
 */
void ref_groups_compute(const struct fs_case *c, const struct fs_inputs *in,
			struct ref_group *grp, int n);

/*
 * The stages of ref_groups_compute, each one pass over every group:
 * the exact int32 products and quantized scores, the float path's q . k,
 * both softmaxes, the quantized PV (o and sum p |v|), the float path's
 * PV. ref_stage_seconds gives the wall seconds each has taken over every
 * call from the calling thread (summed by the master thread, after each pass's
 * barrier; REGEN_K and REGEN_V are the master thread's own time inside
 * two of them): what `make bench` holds against each stage's ceiling. It is
 * the reference's only state, written by timing alone: no result
 * depends on it.
 */
enum ref_stage {
	REF_STAGE_EXACT, REF_STAGE_QK_F, REF_STAGE_SOFTMAX, REF_STAGE_PV_Q,
	REF_STAGE_PV_F,
	/* Inside QK_F and PV_F: what the master thread spent making the
	 * float K and V rows again (inputs_kv_get) and laying them out,
	 * the price of not keeping them (docs/performance.md). */
	REF_STAGE_REGEN_K, REF_STAGE_REGEN_V, REF_NSTAGE
};
void ref_stage_seconds(double out[REF_NSTAGE]);

#endif
