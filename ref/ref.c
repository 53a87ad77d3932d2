/*
 * ref.c - the oracle (see ref.h): one attention row at a time, plain
 * loops, exact int32 dot products, everything else in double.
 *
 * It reads the paged caches through its own few lines, written from the
 * layout in DESIGN.md 3 and nothing else:
 *
 *   key j of sequence s   blk  = block_table[s][j / BS]   slot = j % BS
 *   K[j][g][d]            k_cache[blk][g][d / 16][slot][d % 16]   int8
 *   K scale               k_scale[blk][slot][g]                   f32
 *                         (per_tensor: k_scale[0]; per_block32:
 *                          k_scale16[blk][slot][g][d / 32]        f16)
 *   V[j][g][d]            v_cache[blk][g][d][slot]   (* v_scale[blk][slot][g])
 *   g = q_head / (Hq / Hkv)
 *
 * Quantized score of (s, t, q head) against key j:
 *   per_token_head  acc * sQ * sK[blk][slot][g] * softmax_scale
 *   per_tensor      acc * sQ * sK[0] * softmax_scale
 *   per_block32     (sum_kb acc_kb * sK16[blk][slot][g][kb]) * sQ * softmax_scale
 * masked (-inf) unless j <= q_pos and, with a sliding window w, j > q_pos - w.
 *
 * Worked example (ref's unit test): Hq 2, Hkv 1, D 32, BS 2, context 3,
 * block table {2, 0}. Key 2 lives in block 0, slot 0; key 1 in block 2,
 * slot 1, so K[1][0][17] is byte (((2*1 + 0)*2 + 1)*2 + 1)*16 + 1 = 177
 * of k_cache. With Q row (1, 0, ..., 0, 2 at d 17) and that byte 3, K[1][0][0]
 * = 1: acc = 1*1 + 2*3 = 7; with sQ 0.5, sK 0.25 and scale 1/sqrt(32) the
 * score is 7 * 0.125 / sqrt(32).
 *
 * The float path does the same from the logical BF16-rounded q, k, v
 * (dot products in double): it is the baseline that measures what INT8
 * costs, not a check of the kernel.
 *
 * f16 scales are decoded here, not by sim/quant.c, so a decoder bug there
 * cannot hide in both sides of the comparison.
 */
#include "ref.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

/* Every f16 is exactly a double: sign * m * 2^(e - 25), subnormals m * 2^-24. */
static double ref_f16(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v;

	if (e == 0)
		v = ldexp(m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexp(m + 1024, e - 25);
	return (h & 0x8000) ? -v : v;
}

/* Physical block and slot of key j of sequence s. */
static void ref_page(const struct fs_inputs *in, int s, int j, int *blk,
		     int *slot)
{
	*blk = in->block_table[(size_t)s * in->MAXB + j / in->BS];
	*slot = j % in->BS;
	assert(*blk >= 0 && *blk < in->NB);
}

static int ref_visible(const struct fs_case *c, int qpos, int j)
{
	if (qpos < 0 || j > qpos)
		return 0;
	if (c->sliding_window > 0 && j <= qpos - c->sliding_window)
		return 0;
	return 1;
}

int32_t ref_acc(const struct fs_case *c, const struct fs_inputs *in, int s,
		int t, int qh, int j, int kb)
{
	int D = in->D, BS = in->BS, g = qh / (in->Hq / in->Hkv);
	int d0 = 0, d1 = D, blk, slot;
	const int8_t *q;
	int32_t acc = 0;

	(void)c;
	if (kb >= 0) {
		d0 = 32 * kb;
		d1 = d0 + 32;
		assert(d1 <= D);
	}
	ref_page(in, s, j, &blk, &slot);
	q = in->q_int8 + (((size_t)s * in->T + t) * in->Hq + qh) * D;
	/* 16 dims at a time: one [blk][g][d / 16][slot][0..15] row each. */
	for (int d16 = d0 / 16; d16 < d1 / 16; d16++) {
		const int8_t *k = in->k_cache +
			((((size_t)blk * in->Hkv + g) * (D / 16) + d16) * BS +
			 slot) * 16;

		for (int i = 0; i < 16; i++)
			acc += (int32_t)q[d16 * 16 + i] * (int32_t)k[i];
	}
	return acc;
}

int ref_row_alloc(struct ref_row *r, int maxctx, int d)
{
	size_t n = maxctx > 0 ? (size_t)maxctx : 1, nd = d > 0 ? (size_t)d : 1;

	r->score = calloc(n, sizeof(double));
	r->prob = calloc(n, sizeof(double));
	r->score_f = calloc(n, sizeof(double));
	r->prob_f = calloc(n, sizeof(double));
	r->out = calloc(nd, sizeof(double));
	r->out_f = calloc(nd, sizeof(double));
	if (!r->score || !r->prob || !r->score_f || !r->prob_f || !r->out ||
	    !r->out_f) {
		ref_row_free(r);
		return -1;
	}
	return 0;
}

void ref_row_free(struct ref_row *r)
{
	free(r->score);
	free(r->prob);
	free(r->score_f);
	free(r->prob_f);
	free(r->out);
	free(r->out_f);
	r->score = r->prob = r->score_f = r->prob_f = r->out = r->out_f = NULL;
}

/* Quantized score of key j (visible), before masking. */
static double ref_score(const struct fs_case *c, const struct fs_inputs *in,
			int s, int t, int qh, int j, double sq)
{
	int g = qh / (in->Hq / in->Hkv), blk, slot;
	size_t ts;

	ref_page(in, s, j, &blk, &slot);
	ts = ((size_t)blk * in->BS + slot) * in->Hkv + g;
	if (c->k_scale == KSCALE_PER_BLOCK32) {
		int nkb = in->D / 32;
		double sum = 0;

		for (int kb = 0; kb < nkb; kb++)
			sum += (double)ref_acc(c, in, s, t, qh, j, kb) *
			       ref_f16(in->k_scale16[ts * nkb + kb]);
		return sum * sq * c->softmax_scale;
	}
	double sk = c->k_scale == KSCALE_PER_TENSOR ? in->k_scale[0]
						    : in->k_scale[ts];

	return (double)ref_acc(c, in, s, t, qh, j, -1) * sq * sk *
	       c->softmax_scale;
}

/* prob = softmax(score) over the finite entries of score[0..n). */
static void ref_softmax(const double *score, double *prob, int n)
{
	double m = -INFINITY, sum = 0;

	for (int j = 0; j < n; j++)
		if (score[j] > m)
			m = score[j];
	for (int j = 0; j < n; j++) {
		prob[j] = score[j] == -INFINITY ? 0 : exp(score[j] - m);
		sum += prob[j];
	}
	for (int j = 0; j < n; j++)
		prob[j] = sum > 0 ? prob[j] / sum : 0;
}

/*
 * out[d] = sum over visible j of p[j] * V[j][g][d] (or |V|, when absolute),
 * V dequantized through the cache. Keys outermost, so each key's page is
 * looked up once; for each d the terms still add in key order.
 */
static void ref_pv(const struct fs_case *c, const struct fs_inputs *in, int s,
		   int g, int qpos, int n, const double *p, int absolute,
		   double *out)
{
	int D = in->D, BS = in->BS;

	for (int d = 0; d < D; d++)
		out[d] = 0;
	for (int j = 0; j < n; j++) {
		size_t at;	/* V[j][g][d] is at + d * BS */
		double vs = 1;
		int blk, slot;

		if (!ref_visible(c, qpos, j))
			continue;
		ref_page(in, s, j, &blk, &slot);
		at = ((size_t)blk * in->Hkv + g) * D * BS + slot;
		if (c->v_dtype == VDT_INT8)
			vs = in->v_scale[((size_t)blk * BS + slot) * in->Hkv + g];
		for (int d = 0; d < D; d++) {
			size_t a = at + (size_t)d * BS;
			double v = c->v_dtype == VDT_INT8 ? in->v_cache_i8[a] * vs
							  : in->v_cache_f[a];

			out[d] += p[j] * (absolute ? fabs(v) : v);
		}
	}
}

void ref_row_compute(const struct fs_case *c, const struct fs_inputs *in,
		     int s, int t, int qh, struct ref_row *r)
{
	int D = in->D, g = qh / (in->Hq / in->Hkv);
	int n = in->context_lens[s];
	int qpos = in->q_pos[(size_t)s * in->T + t];
	size_t qrow = ((size_t)s * in->T + t) * in->Hq + qh;
	const float *qf = in->q + qrow * D;
	double sq = in->q_scale[qrow];

	assert(n <= in->MAXCTX);
	r->n = n;
	r->visible = 0;
	r->max_abs_score = 0;
	r->out_abs = 0;
	for (int j = 0; j < n; j++) {
		const float *kf = in->k + (((size_t)s * in->MAXCTX + j) *
					   in->Hkv + g) * D;
		double dot = 0;

		if (!ref_visible(c, qpos, j)) {
			r->score[j] = r->score_f[j] = -INFINITY;
			continue;
		}
		r->visible++;
		r->score[j] = ref_score(c, in, s, t, qh, j, sq);
		if (fabs(r->score[j]) > r->max_abs_score)
			r->max_abs_score = fabs(r->score[j]);
		for (int d = 0; d < D; d++)
			dot += (double)qf[d] * kf[d];
		r->score_f[j] = dot * c->softmax_scale;
	}
	ref_softmax(r->score, r->prob, n);
	ref_softmax(r->score_f, r->prob_f, n);

	/* out_abs first, in out[] as scratch, then out itself. */
	ref_pv(c, in, s, g, qpos, n, r->prob, 1, r->out);
	for (int d = 0; d < D; d++)
		if (r->out[d] > r->out_abs)
			r->out_abs = r->out[d];
	ref_pv(c, in, s, g, qpos, n, r->prob, 0, r->out);
	for (int d = 0; d < D; d++)
		r->out_f[d] = 0;
	for (int j = 0; j < n; j++) {
		const float *vf = in->v + (((size_t)s * in->MAXCTX + j) * in->Hkv +
					   g) * D;

		if (!ref_visible(c, qpos, j))
			continue;
		for (int d = 0; d < D; d++)
			r->out_f[d] += r->prob_f[j] * vf[d];
	}
}
