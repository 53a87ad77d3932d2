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
 * Work is done one attention row (s, t, q head) at a time, so memory is
 * O(MAXCTX + D) per thread, whatever the case size.
 */
#ifndef REF_H
#define REF_H

#include <stdint.h>

#include "../sim/case.h"
#include "../sim/inputs.h"

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
	double out_abs;		/* sum_j prob[j] * |v_j| per dim, max over dims */
	double max_abs_score;	/* max |score| over visible keys */
};

/* Exact accumulator of the quantized dot product of (s, t, q head) with
 * key j; with per_block32 K scales, only head-dim block `kb` (else -1). */
int32_t ref_acc(const struct fs_case *c, const struct fs_inputs *in, int s,
		int t, int qh, int j, int kb);

/* Buffers for one row; ref_row_compute fills them. */
int ref_row_alloc(struct ref_row *r, int maxctx, int d);
void ref_row_free(struct ref_row *r);
void ref_row_compute(const struct fs_case *c, const struct fs_inputs *in,
		     int s, int t, int qh, struct ref_row *r);

#endif
