/*
 * ref.c - the oracle (see ref.h): one attention row at a time, plain
 * loops, exact int32 dot products, everything else in double; the double
 * dot products and PV sums are fused, one rounding per term
 * (fma(a, b, acc), in a fixed order), which is correctly rounded and so
 * the same on every CPU.
 *
 * It reads the paged caches through its own few lines, written from the
 * layout in docs/design.md 3.2 and nothing else:
 *
 *   key j of sequence s   blk  = block_table[s][j / BS]   slot = j % BS
 *   K[j][g][d]            k_cache[blk][g][d / 16][slot][d % 16]   int8
 *   K scale               k_scale[blk][slot][g]                   f32
 *                         (per_tensor: k_scale[0]; per_head:
 *                          k_scale[g]; per_block32:
 *                          k_scale16[blk][slot][g][d / 32]        f16)
 *   V[j][g][d]            v_cache[blk][g][d][slot]   (* v_scale[blk][slot][g])
 *                         (q8_0, q4_0: (v - 0 or 8) * f16
 *                          v_scale16[blk][slot][g][d / 32], ref_v_at)
 *   g = q_head / (Hq / Hkv)
 *   with cache.block_stride BSTR (in->BSTR, 0 = dense), [blk] of k_cache
 *   and v_cache is the BSTR elements from blk * BSTR (ref_blk0); the
 *   scales stay dense
 *   a sparse pool stores only the blocks the tables name: [blk] is then
 *   the stored row of the table's block (ref_pool_row, pool.c)
 *
 * Quantized score of (s, t, q head) against key j:
 *   per_token_head  acc * sQ * sK[blk][slot][g] * softmax_scale
 *   per_tensor      acc * sQ * sK[0] * softmax_scale
 *   per_head        acc * sQ * sK[g] * softmax_scale
 *   per_block32     (sum_kb acc_kb * sK16[blk][slot][g][kb]) * sQ * softmax_scale
 * then, when the case asks, soft cap and ALiBi (ref_logit):
 *   s = cap * tanh(s / cap);  s = s + slope(q head) * (j - q_pos)
 * masked (-inf) unless j <= q_pos and, with a sliding window w, j > q_pos - w.
 * Slopes follow the ALiBi authors' get_slopes (ref_alibi_slope): for 12
 * heads 2^-1 .. 2^-8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5.
 *
 * Worked example (ref's unit test): Hq 2, Hkv 1, D 32, BS 2, context 3,
 * block table {2, 0}. Key 2 lives in block 0, slot 0; key 1 in block 2,
 * slot 1, so K[1][0][17] is byte (((2*1 + 0)*2 + 1)*2 + 1)*16 + 1 = 177
 * of k_cache. With Q row (1, 0, ..., 0, 2 at d 17) and that byte 3, K[1][0][0]
 * = 1: acc = 1*1 + 2*3 = 7; with sQ 0.5, sK 0.25 and scale 1/sqrt(32) the
 * score is 7 * 0.125 / sqrt(32).
 *
 * The float path does the same from the logical BF16-rounded q, k, v
 * (dot products in double, fused): it is the baseline that measures what INT8
 * costs, not a check of the kernel.
 *
 * f16 scales are decoded here, not by sim/attn/quant.c, so a decoder bug there
 * cannot hide in both sides of the comparison.
 *
 * How the work is shared (ref_groups_compute): the rows of one sequence
 * and kv head are done together, in three passes, each an "omp for" over
 * independent pieces:
 *   scores   key blocks: gather each key's K once (the int8 row from its
 *            page, the float row transposed into doubles) and dot it with
 *            every row that sees it (ref/dot.c, exact int32 / the same
 *            fused double sums as the plain fma() loops, d in order);
 *   softmax  rows: max, exp and the sum in key order;
 *   PV       head-dim pieces: make each key's V piece once (v, |v| and
 *            the float V in double), then every row adds fma(p, v, o) in
 *            key order.
 * No pass sums across the pieces it splits, so every number is the one
 * the plain loops give, with any number of threads.
 */
#include "ref.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dmath.h"
#include "dot.h"
#include "pool.h"

#define REF_MAX_D 1024	/* largest head_dim a case may have */
#define REF_SCORE_KEYS 256	/* keys per piece of the scores pass */
#define REF_PV_KEYS 32		/* keys gathered at a time in the PV pass */
#define REF_PV_DIMS 128		/* head-dim elements per piece of the PV pass */

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

/* Where block blk starts in k_cache and v_cache, in elements: blk times
 * the case's block_stride, or times one dense block (Hkv * D * BS). */
static size_t ref_blk0(const struct fs_inputs *in, int blk)
{
	size_t dense = (size_t)in->Hkv * (size_t)in->D * (size_t)in->BS;

	return (size_t)blk * (in->BSTR ? in->BSTR : dense);
}

/* Block and slot of key j of sequence s: *blk is the row of the stored
 * arrays that holds its physical block (pool.h; the block itself in a
 * dense pool), so every [blk] below indexes what is stored. */
static void ref_page(const struct fs_inputs *in, int s, int j, int *blk,
		     int *slot)
{
	int phys = in->block_table[(size_t)s * in->MAXB + j / in->BS];

	assert(phys >= 0 && phys < in->NB);
	*blk = ref_pool_row(in, phys);
	*slot = j % in->BS;
	assert(*blk >= 0 && *blk < in->NM);
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
	if (ref_pool_freed(in, s, j))
		return 0;	/* a freed block: the kernel loads 0 (pool.h) */
	ref_page(in, s, j, &blk, &slot);
	q = in->q_int8 + (((size_t)s * in->T + t) * in->Hq + qh) * D;
	/* 16 dims at a time: one [blk][g][d / 16][slot][0..15] row each. */
	for (int d16 = d0 / 16; d16 < d1 / 16; d16++) {
		const int8_t *k = in->k_cache + ref_blk0(in, blk) +
			(((size_t)g * (D / 16) + d16) * BS + slot) * 16;

		for (int i = 0; i < 16; i++)
			acc += (int32_t)q[d16 * 16 + i] * (int32_t)k[i];
	}
	return acc;
}

void ref_k_row(const struct fs_inputs *in, int s, int g, int j, int8_t *k)
{
	int D = in->D, BS = in->BS, blk, slot;

	if (ref_pool_freed(in, s, j)) {
		memset(k, 0, (size_t)D);	/* a freed block: loads 0 */
		return;
	}
	ref_page(in, s, j, &blk, &slot);
	for (int d16 = 0; d16 < D / 16; d16++)
		memcpy(k + 16 * d16, in->k_cache + ref_blk0(in, blk) +
		       (((size_t)g * (D / 16) + d16) * BS + slot) * 16, 16);
}

/*
 * Element d of a key's V, dequantized here in double, its value at v_cache
 * element `at`: int8 times the slot's scale vs; float as stored; q8_0 and
 * q4_0 (llama.cpp's blocks: one byte an element, q4_0's 0..15 with offset
 * 8) times the fp16 scale of d's block of 32, v_scale16[ts][d / 32] with
 * ts = (blk * BS + slot) * Hkv + g, decoded by ref_f16 (not sim's
 * quant.c).
 */
static double ref_v_at(const struct fs_case *c, const struct fs_inputs *in,
		       size_t at, double vs, size_t ts, int d)
{
	int q;

	switch (c->v_dtype) {
	case VDT_INT8:
		return in->v_cache_i8[at] * vs;
	case VDT_Q8_0:
	case VDT_Q4_0:
		q = in->v_cache_i8[at] - (c->v_dtype == VDT_Q4_0 ? 8 : 0);
		return q * ref_f16(in->v_scale16[ts * (size_t)(in->D / 32) + (size_t)d / 32]);
	case VDT_BF16:
	case VDT_F32:
	default:
		return in->v_cache_f[at];
	}
}

int ref_row_alloc(struct ref_row *r, int maxctx, int d)
{
	size_t n = maxctx > 0 ? (size_t)maxctx : 1, nd = d > 0 ? (size_t)d : 1;

	memset(r, 0, sizeof(*r));
	r->score = calloc(n, sizeof(double));
	r->prob = calloc(n, sizeof(double));
	r->score_f = calloc(n, sizeof(double));
	r->prob_f = calloc(n, sizeof(double));
	r->out = calloc(nd, sizeof(double));
	r->out_f = calloc(nd, sizeof(double));
	r->out_absd = calloc(nd, sizeof(double));
	if (!r->score || !r->prob || !r->score_f || !r->prob_f || !r->out ||
	    !r->out_f || !r->out_absd) {
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
	free(r->out_absd);
	r->score = r->prob = r->score_f = r->prob_f = NULL;
	r->out = r->out_f = r->out_absd = NULL;
}

/*
 * Keys [*lo, *hi) visible to query token t of sequence s: key j is seen
 * iff qpos >= 0, j <= qpos and, with a sliding window w, j > qpos - w.
 * That is one run of keys; it is clipped to the context.
 */
static void ref_range(const struct fs_case *c, const struct fs_inputs *in,
		      int s, int t, int *lo, int *hi)
{
	int n = in->context_lens[s], qpos = in->q_pos[(size_t)s * in->T + t];

	*lo = 0;
	*hi = qpos < 0 ? 0 : qpos + 1 < n ? qpos + 1 : n;
	if (qpos >= 0 && c->sliding_window > 0 && qpos - c->sliding_window + 1 > 0)
		*lo = qpos - c->sliding_window + 1;
	if (*lo > *hi)
		*lo = *hi;
}

/* Keys any row of grp sees: [*lo, *hi). */
static void ref_group_range(const struct fs_case *c, const struct fs_inputs *in,
			    const struct ref_group *grp, int *lo, int *hi)
{
	*lo = in->context_lens[grp->s];
	*hi = 0;
	for (int i = 0; i < grp->rows; i++) {
		int a, b;

		ref_range(c, in, grp->s, grp->t[i], &a, &b);
		if (a < b && a < *lo)
			*lo = a;
		if (a < b && b > *hi)
			*hi = b;
	}
	if (*lo > *hi)
		*lo = *hi;
}

/* Quantized score of a visible key from its gathered int8 K row k, scale
 * index ts (the formulas at the top of this file, in that order). */
static double ref_score_row(const struct fs_case *c, const struct fs_inputs *in,
			    const int8_t *q, const int8_t *k, size_t ts,
			    double sq)
{
	int D = in->D;

	if (c->k_scale == KSCALE_PER_BLOCK32) {
		int nkb = D / 32;
		double sum = 0;

		for (int kb = 0; kb < nkb; kb++)
			sum += (double)dot_i8(q + 32 * kb, k + 32 * kb, 32) *
			       ref_f16(in->k_scale16[ts * nkb + kb]);
		return sum * sq * c->softmax_scale;
	}
	/* ts = (blk * BS + slot) * Hkv + g, so g = ts % Hkv */
	double sk = c->k_scale == KSCALE_PER_TENSOR ? in->k_scale[0]
		  : c->k_scale == KSCALE_PER_HEAD ? in->k_scale[ts % (size_t)in->Hkv]
						  : in->k_scale[ts];

	return (double)dot_i8(q, k, D) * sq * sk * c->softmax_scale;
}

/*
 * The ALiBi authors' get_slopes, in double: the n = 2^floor(log2 H)
 * slopes start^1 .. start^n, start = 2^(-2^-(log2 n - 3)) = 2^(-8/n),
 * then those of 2n heads at odd powers 1, 3, 5, ... until H. So slope h
 * is 2^(-8 (h + 1) / n), or 2^(-4 (2 (h - n) + 1) / n) past n: one exp2
 * of an exact exponent (n is a power of two), the same bits everywhere.
 */
double ref_alibi_slope(int h, int H)
{
	int n = 1;

	while (2 * n <= H)
		n *= 2;		/* 2^floor(log2 H), exactly */
	if (h < n)
		return dm_exp2(-8.0 * (h + 1) / n);
	return dm_exp2(-4.0 * (2 * (h - n) + 1) / n);
}

/* Soft cap, then ALiBi (slope of the row's q head, key j - q_pos = dist). */
static double ref_logit(const struct fs_case *c, double s, double slope,
			int dist)
{
	if (c->soft_cap > 0)
		s = c->soft_cap * dm_tanh(s / c->soft_cap);
	if (c->alibi)
		s += slope * dist;
	return s;
}

/*
 * Scores pass, keys [j0, j1): both paths for every row, -inf where the
 * row does not see the key. DOT_KEYS keys at a time: their K rows are
 * gathered once (int8 from the pages; float transposed for dot_f64_keys).
 */
static void ref_pass_scores(const struct fs_case *c, const struct fs_inputs *in,
			    const struct ref_group *grp, int j0, int j1)
{
	int D = in->D, BS = in->BS, s = grp->s, g = grp->g;
	/* Without soft cap and ALiBi ref_logit is the identity: skip it. */
	int logit = c->soft_cap > 0 || c->alibi;
	int8_t kq[DOT_KEYS][REF_MAX_D];
	float kbuf[REF_MAX_D];
	double kt[REF_MAX_D * DOT_KEYS];
	size_t ts[DOT_KEYS];

	for (int jb = j0; jb < j1; jb += DOT_KEYS) {
		int nk = j1 - jb < DOT_KEYS ? j1 - jb : DOT_KEYS;

		/* The next keys' float rows are a page apart: fetch them now
		 * (when kept; else inputs_kv_row makes them again). */
		for (int j = jb + DOT_KEYS; in->k && j < jb + 2 * DOT_KEYS && j < j1; j++)
			for (int d = 0; d < D; d += 16)
				__builtin_prefetch(in->k + (((size_t)s * in->MAXCTX + j) *
							    in->Hkv + g) * D + d);
		for (int i = 0; i < DOT_KEYS; i++) {
			const float *kf;
			int blk, slot;

			if (i >= nk) {	/* a short last block: zeros, unused */
				for (int d = 0; d < D; d++)
					kt[(size_t)d * DOT_KEYS + i] = 0;
				continue;
			}
			ref_page(in, s, jb + i, &blk, &slot);
			ts[i] = ((size_t)blk * BS + slot) * in->Hkv + g;
			ref_k_row(in, s, g, jb + i, kq[i]);
			kf = inputs_kv_row(c, in, 0, s, jb + i, g, 0, D, kbuf);
			for (int d = 0; d < D; d++)
				kt[(size_t)d * DOT_KEYS + i] = kf[d];
		}
		for (int r0 = 0; r0 < grp->rows; r0 += 4) {
			const float *qf[4];
			double fo[4][DOT_KEYS];

			for (int u = 0; u < 4; u++) {
				int r = r0 + u < grp->rows ? r0 + u : r0;

				qf[u] = in->q + (((size_t)s * in->T + grp->t[r]) *
						 in->Hq + grp->qh[r]) * D;
			}
			dot_f64_keys(qf, kt, D, fo);
			for (int u = 0; u < 4 && r0 + u < grp->rows; u++) {
				struct ref_row *rr = &grp->row[r0 + u];
				size_t qrow = ((size_t)s * in->T + grp->t[r0 + u]) *
					      in->Hq + grp->qh[r0 + u];
				const int8_t *q = in->q_int8 + qrow * D;
				double sq = in->q_scale[qrow];
				double slope = c->alibi ? ref_alibi_slope(grp->qh[r0 + u],
									  in->Hq) : 0;
				int qpos = in->q_pos[(size_t)s * in->T + grp->t[r0 + u]];
				int lo, hi;

				ref_range(c, in, s, grp->t[r0 + u], &lo, &hi);
				for (int i = 0; i < nk; i++) {
					int j = jb + i;

					if (j < lo || j >= hi) {
						rr->score[j] = rr->score_f[j] = -INFINITY;
						continue;
					}
					rr->score[j] = ref_score_row(c, in, q, kq[i], ts[i], sq);
					rr->score_f[j] = fo[u][i] * c->softmax_scale;
					if (logit) {
						rr->score[j] = ref_logit(c, rr->score[j], slope,
									 j - qpos);
						rr->score_f[j] = ref_logit(c, rr->score_f[j],
									   slope, j - qpos);
					}
				}
			}
		}
	}
}

/* prob = softmax(score) over the finite entries of score[0..n); the max
 * and the sum through *max and *sum. Only [lo, hi) can be finite: the
 * rest adds exact zeros to the sum, so it is skipped. */
static void ref_softmax(const double *score, double *prob, int n, int lo,
			int hi, double *max, double *sum)
{
	double m = -INFINITY, z = 0;

	for (int j = lo; j < hi; j++)
		if (score[j] > m)
			m = score[j];
	for (int j = 0; j < n; j++)
		prob[j] = 0;
	for (int j = lo; j < hi; j++) {
		prob[j] = score[j] == -INFINITY ? 0 : dm_exp(score[j] - m);
		z += prob[j];
	}
	/* z is 0 only when no key is visible; a NaN in z stays NaN. */
	for (int j = lo; j < hi; j++)
		prob[j] = z == 0 ? 0 : prob[j] / z;
	*max = m;
	*sum = z;
}

/* Softmax pass, one row. */
static void ref_pass_softmax(const struct fs_case *c, const struct fs_inputs *in,
			     const struct ref_group *grp, int i)
{
	struct ref_row *r = &grp->row[i];
	int n = in->context_lens[grp->s], lo, hi;
	double mq, zq;

	ref_range(c, in, grp->s, grp->t[i], &lo, &hi);
	for (int j = 0; j < lo; j++)
		r->score[j] = r->score_f[j] = -INFINITY;
	for (int j = hi; j < n; j++)
		r->score[j] = r->score_f[j] = -INFINITY;
	r->n = n;
	r->visible = hi - lo;
	r->max_abs_score = 0;
	for (int j = lo; j < hi; j++)
		if (fabs(r->score[j]) > r->max_abs_score)
			r->max_abs_score = fabs(r->score[j]);
	ref_softmax(r->score, r->prob, n, lo, hi, &mq, &zq);
	ref_softmax(r->score_f, r->prob_f, n, lo, hi, &r->max_f, &r->sum_f);
}

/*
 * PV pass, head-dim elements [d0, d1) (a multiple of 16; DOT_SLICE at a
 * time, the last 16 by dot_pv_n when DOT_SLICE does not divide it): out,
 * out_absd and out_f of every row. REF_PV_KEYS keys at a time, each
 * key's V made once for every row that sees it: dequantized (the int8
 * times its double scale is exact in double), its |v|, and the float V
 * in double. They are laid out by slice, then key: vb[e][u] holds key
 * u's v, |v| and float V of slice e, DOT_SLICE each, so that one slice
 * of the keys (REF_PV_KEYS x 3 x DOT_SLICE doubles, 24 KiB) is one
 * contiguous run that stays in L1 while every row goes over it; hence
 * slices outside, rows inside. vb is 96 KiB of stack, which an OpenMP
 * thread's default stack holds.
 */
#define REF_PV_SLICES (REF_PV_DIMS / DOT_SLICE)
#define REF_PV_AHEAD 2	/* rows ahead whose sums are fetched */
static void ref_pass_pv(const struct fs_case *c, const struct fs_inputs *in,
			const struct ref_group *grp, int d0, int d1)
{
	int D = in->D, BS = in->BS, s = grp->s, g = grp->g, w = d1 - d0;
	double vb[REF_PV_SLICES][REF_PV_KEYS][3][DOT_SLICE];
	float vfb[REF_PV_DIMS];

	assert(w % 16 == 0 && w <= REF_PV_DIMS);
	for (int i = 0; i < grp->rows; i++)
		for (int d = d0; d < d1; d++)
			grp->row[i].out[d] = grp->row[i].out_absd[d] =
				grp->row[i].out_f[d] = 0;
	for (int jb = grp->jlo; jb < grp->jhi; jb += REF_PV_KEYS) {
		int nk = grp->jhi - jb < REF_PV_KEYS ? grp->jhi - jb : REF_PV_KEYS;

		for (int u = 0; u < nk; u++) {
			int blk, slot;
			const float *vf;
			double vs = 0;	/* int8 V's scale */
			size_t at;	/* V[j][g][d] is at + d * BS */

			/* The next key's float row is a page away: fetch it
			 * now (when kept; else inputs_kv_row makes it). */
			for (int d = 0; in->v && u + 1 < nk && d < w; d += 16)
				__builtin_prefetch(in->v + (((size_t)s * in->MAXCTX +
							     jb + u + 1) * in->Hkv + g) *
								   D + d0 + d);
			ref_page(in, s, jb + u, &blk, &slot);
			at = ref_blk0(in, blk) + ((size_t)g * D + d0) * BS + slot;
			vf = inputs_kv_row(c, in, 1, s, jb + u, g, d0, w, vfb);
			if (c->v_dtype == VDT_INT8)
				vs = in->v_scale[((size_t)blk * BS + slot) * in->Hkv + g];

			for (int e = 0; e < w; e++) {
				double *x = vb[e / DOT_SLICE][u][0] + e % DOT_SLICE;

				x[0] = ref_v_at(c, in, at + (size_t)e * BS, vs,
						((size_t)blk * BS + slot) * in->Hkv + g, d0 + e);
				x[DOT_SLICE] = fabs(x[0]);
				x[2 * DOT_SLICE] = vf[e];
			}
		}
		for (int e = 0; e < w; e += DOT_SLICE) {
			for (int i = 0; i < grp->rows; i++) {
				struct ref_row *r = &grp->row[i];
				int lo, hi, a, b;
				const double *x;

				/* Each row's sums and p are elsewhere (3 x 256 and
				 * 2 x 256 bytes a call): fetch those of a later row
				 * while this one runs. */
				if (i + REF_PV_AHEAD < grp->rows) {
					struct ref_row *n = &grp->row[i + REF_PV_AHEAD];

					for (int k = 0; k < DOT_SLICE; k += 8) {
						__builtin_prefetch(n->out + d0 + e + k, 1);
						__builtin_prefetch(n->out_absd + d0 + e + k, 1);
						__builtin_prefetch(n->out_f + d0 + e + k, 1);
					}
					for (int k = 0; k < nk; k += 8) {
						__builtin_prefetch(n->prob + jb + k);
						__builtin_prefetch(n->prob_f + jb + k);
					}
				}
				ref_range(c, in, s, grp->t[i], &lo, &hi);
				a = lo > jb ? lo : jb;
				b = hi < jb + nk ? hi : jb + nk;
				if (a >= b)
					continue;
				x = vb[e / DOT_SLICE][a - jb][0];
				if (w - e < DOT_SLICE)	/* head_dim 80, 112: 16 left */
					dot_pv_n(b - a, w - e, r->prob + a, r->prob_f + a,
						 x, x + DOT_SLICE, x + 2 * DOT_SLICE,
						 3 * DOT_SLICE, r->out + d0 + e,
						 r->out_absd + d0 + e, r->out_f + d0 + e);
				else
					dot_pv(b - a, r->prob + a, r->prob_f + a, x,
					       x + DOT_SLICE, x + 2 * DOT_SLICE,
					       3 * DOT_SLICE, r->out + d0 + e,
					       r->out_absd + d0 + e, r->out_f + d0 + e);
			}
		}
	}
}

/* The group that flattened item p (a key piece, or a row) belongs to. */
static int ref_find(const struct ref_group *grp, int n, int p, int is_row)
{
	int lo = 0, hi = n - 1;

	while (lo < hi) {	/* the last group whose first item is <= p */
		int mid = (lo + hi + 1) / 2;

		if ((is_row ? grp[mid].row0 : grp[mid].piece0) <= p)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

void ref_groups_compute(const struct fs_case *c, const struct fs_inputs *in,
			struct ref_group *grp, int n)
{
	int D = in->D, nslice = (D + REF_PV_DIMS - 1) / REF_PV_DIMS;
	int npiece, nrow;

	assert(D <= REF_MAX_D && D % 16 == 0);
	if (n <= 0)
		return;
#pragma omp single
	{
		int piece = 0, row = 0;

		for (int k = 0; k < n; k++) {
			struct ref_group *gr = &grp[k];

			assert(gr->rows > 0);
			assert(in->context_lens[gr->s] <= in->MAXCTX);
			ref_group_range(c, in, gr, &gr->jlo, &gr->jhi);
			gr->piece0 = piece;
			gr->row0 = row;
			piece += (gr->jhi - gr->jlo + REF_SCORE_KEYS - 1) /
				 REF_SCORE_KEYS;
			row += gr->rows;
		}
	}
	npiece = grp[n - 1].piece0 + (grp[n - 1].jhi - grp[n - 1].jlo +
				       REF_SCORE_KEYS - 1) / REF_SCORE_KEYS;
	nrow = grp[n - 1].row0 + grp[n - 1].rows;

#pragma omp for schedule(static)
	for (int p = 0; p < npiece; p++) {
		const struct ref_group *gr = &grp[ref_find(grp, n, p, 0)];
		int j0 = gr->jlo + (p - gr->piece0) * REF_SCORE_KEYS;

		ref_pass_scores(c, in, gr, j0, gr->jhi - j0 < REF_SCORE_KEYS
					       ? gr->jhi : j0 + REF_SCORE_KEYS);
	}
#pragma omp for schedule(static)
	for (int i = 0; i < nrow; i++) {
		const struct ref_group *gr = &grp[ref_find(grp, n, i, 1)];

		ref_pass_softmax(c, in, gr, i - gr->row0);
	}
#pragma omp for schedule(static)
	for (int p = 0; p < n * nslice; p++) {
		const struct ref_group *gr = &grp[p / nslice];

		int d0 = p % nslice * REF_PV_DIMS;

		ref_pass_pv(c, in, gr, d0, D - d0 < REF_PV_DIMS ? D : d0 + REF_PV_DIMS);
	}
#pragma omp for schedule(static)
	for (int i = 0; i < nrow; i++) {
		const struct ref_group *gr = &grp[ref_find(grp, n, i, 1)];
		struct ref_row *r = &gr->row[i - gr->row0];

		r->out_abs = 0;
		for (int d = 0; d < D; d++)
			if (r->out_absd[d] > r->out_abs)
				r->out_abs = r->out_absd[d];
	}
}

void ref_row_compute(const struct fs_case *c, const struct fs_inputs *in,
		     int s, int t, int qh, struct ref_row *r)
{
	struct ref_group grp = {
		.s = s, .g = qh / (in->Hq / in->Hkv), .rows = 1,
		.t = &t, .qh = &qh, .row = r,
	};

	ref_groups_compute(c, in, &grp, 1);
}
