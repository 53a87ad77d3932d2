/*
 * pv_int8.h - the reference of INT8 PV (pv.mode: int8), independent of
 * sim/'s lane-map and addressing code: it reads the golden's p_int8,
 * pv_acc and pv_tiles through plain tables of the profile (which P entry
 * each register slot holds, as data), gathers V through the block table
 * by its own lines, and computes in exact integers and double.
 *
 * Three checks (docs/formats.md, "INT8 PV"):
 *   pv_acc  exact: the int32 PV of the golden's own Pq and the INT8 V
 *           cache; this checks the PV lane maps, the regroup and the V
 *           addressing, bit for bit
 *   p_int8  within one quantization step of the reference's own Pq,
 *           round(clip * p_j sV_j / max over the group of p sV), from
 *           its own double scores (V per_channel: round(clip e^(s_j -
 *           M)), M the running max at the group's end); entries one step
 *           off are counted (rounding at a boundary), more than one is a
 *           mismatch
 *   out     ref_pv_out_slack: the bound P's quantization adds to the out
 *           tolerance, one step per key: sum over groups of
 *           max_group(p sV) / clip * sum_group |Vq[d]| (per_channel: the
 *           largest p of the segment so far / clip * sum_group |Vq[d]|
 *           sV[d])
 */
#ifndef REF_PV_INT8_H
#define REF_PV_INT8_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/attn/case.h"
#include "../sim/attn/inputs.h"

/* The golden's PV tensors and the profile's tables (slot = lane*elems + e). */
struct ref_pv_golden {
	const int8_t *p_int8;	/* [n][W*EA] */
	const int32_t *pv_acc;	/* [n][DT][W*EC] */
	const int32_t *pv_tiles;	/* [n][5]: seq, head, row_base, key_base, row_tile */
	size_t n;
	int W, M, N, K, EA, EC, DT;
	const int32_t *a_row, *a_col;	/* [W*EA] the A entry of each slot */
	const int32_t *c_row, *c_col;	/* [W*EC] the C entry of each slot */
};

/* What one check found; first: the lowest group, then slot. */
struct ref_pv_stat {
	long compared, mismatches;
	long off_by_one;	/* p_int8: entries one step from the reference */
	double max_abs_err;
	double max_err_tol;	/* max |got - want| / its tolerance (0: exact) */
	long group;		/* first mismatch: pv_tiles row */
	int lane, elem, row, col;	/* its slot and C (or A) entry */
	int s, t, qh, key, dim;
	double got, want, tol;
};

/*
 * Check the n PV groups of g against case c on inputs in: pq (p_int8)
 * and acc (pv_acc). 0, or -1 with msg filled when g does not fit the
 * case (a pv_tiles row out of range, a slot whose key cannot be told).
 * Does not depend on the number of threads.
 */
int ref_pv_check(const struct fs_case *c, const struct fs_inputs *in,
		 const struct ref_pv_golden *g, struct ref_pv_stat *pq,
		 struct ref_pv_stat *acc, char *msg, size_t msglen);

/*
 * Per (sequence, kv head, group of K keys from each split-K segment's
 * start) the sums over the group's stored keys of |Vq[j][d]|, made once
 * (one pass over V, in parallel) so that every row's slack reads D sums
 * a group instead of K x D bytes; about V's bytes x 2 / K. 0, or -1 out
 * of memory (vs zeroed: the slack then sums per row).
 */
struct ref_pv_vsum {
	int K;
	size_t *base;		/* [S] first group of sequence s */
	uint16_t *sum;		/* [groups][Hkv][D] */
};

int ref_pv_vsum_build(const struct fs_case *c, const struct fs_inputs *in, int K,
		      struct ref_pv_vsum *vs);
void ref_pv_vsum_free(struct ref_pv_vsum *vs);

/*
 * slack[d], d < D: the out bound that P's quantization adds for row
 * (s, q head qh) with reference probabilities prob[0..n) (0 where
 * masked), groups of K keys from each split-K segment's start; vs (from
 * ref_pv_vsum_build, or NULL) holds the groups' sums of |Vq|.
 */
void ref_pv_out_slack(const struct fs_case *c, const struct fs_inputs *in,
		      const struct ref_pv_vsum *vs, int s, int qh, const double *prob,
		      int n, int K, double *slack);

#endif
