/*
 * compare.c - the sim's attention result against ref/ (see compare.h).
 * This file plans the blocks and compares the rows; the exact checks
 * (acc tiles, INT8 PV, the shape) are compare_acc.c, the folding of the
 * chunks into the report compare_report.c (compare_int.h between them).
 *
 * What is read, and how each register is labelled:
 *
 *   acc        [tile][kstep][lane][EC] int32 in register order; slot
 *              lane*EC + e of tile i holds C[row][col] with row, col from
 *              the profile's forward table (lm->op[LM_C].row/col: data,
 *              not the sim's addressing code). acc_tiles[i] = (s, head,
 *              row_base, token_base, row_tile):
 *                decode   q head = head*G + (row_tile*M + row) % G,
 *                         t = row_base (a group of G > M q heads runs
 *                         G/M row tiles per kv head); with kernel:
 *                         decode_rows: packed, head*G + row_tile*M + row
 *                         while that is < G, and past G a padding row
 *                         (zero A row) whose acc must be 0
 *                prefill  q head = head,             t = row_base + row
 *              key j = token_base + col. Slots with j >= context or
 *              t >= T_s are not compared (the tail holds whatever the
 *              kernel loaded). want = ref_acc(), k-step kb for per_block32.
 *   scores     [S][T][Hq][MAXCTX] f32, row_max, row_sum [S][T][Hq]
 *   out        [S][T][Hq][D]
 *   seg_max, seg_sum  [S][T][Hq][NSEG]
 *
 * Worked example (gfx936, C row = lane % 16, col = lane / 16 + 4e): lane
 * 19, e 0 of decode tile (s 0, kv head 0, row_base 0, token_base 16) holds
 * C[3][1]; with G = 6 that is q head 3, query token 0, key 17, and must
 * equal ref_acc(c, in, 0, 0, 3, 17, -1) exactly.
 *
 * Tolerances, as implemented (u = 2^-24, the f32 unit roundoff; v = the
 * row's visible keys; all in double):
 *
 *   acc      exact. Integer dot products have one right answer.
 *   score    |s_sim - s_ref| <= 2^-22 |s_ref| + 1e-30. The sim computes
 *            float(acc) * sQ * sK * scale: float(acc) is exact (|acc| <
 *            2^24), then three products, each rounded by at most u
 *            relative: (1+u)^3 - 1 < 3.0000001u < 4u = 2^-22.
 *            per_block32: the sim sums D/32 partials in f32, so the bound
 *            is 2^-22 * (D/32) * sum_kb |acc_kb * sK_kb * sQ * scale|, the
 *            partials recomputed here from ref_acc (a sum of n terms has
 *            at most n-1 roundings of the running sum, each <= u times
 *            sum |partial|, plus the products' roundings).
 *            Soft cap and ALiBi add 2^-20 (|c| + |b|) (cmp_score_tol).
 *            Masked keys, and keys at or past the context, must be -inf.
 *   E        2 * max over visible keys of the score bound above: the worst
 *            error of s_j - s_max, the exponent of a probability. For
 *            per_token_head, per_tensor and per_head, E = 2^-21 * max_abs_score.
 *   probs    p_sim = exp(s_sim - row_max) / row_sum in double, from the
 *            sim's own row_max and row_sum;
 *            |p_sim - p_ref| <= p_ref * (E + (16 + 4 sqrt(v)) u) + 2^-40.
 *            exp turns an absolute exponent error e into a relative error
 *            of about e (E). row_sum is an f32 online sum: each term has
 *            a few u from fs_expf and the f32 subtraction; each rescale
 *            and addition adds u. Worst case grows like v u, but the
 *            roundings are independent and of either sign, so their sum
 *            is a random walk, ~sqrt(v) u; 4 sqrt(v) is four standard
 *            deviations and 16 u covers the fixed per-term part. 2^-40
 *            absolute covers probabilities that underflow.
 *   out      |o_sim - o_ref| <= ((16 + 4 sqrt(v)) u + E) * out_abs + 1e-30,
 *            out_abs = max over d of sum_j p_j |v_j[d]| (the scale of
 *            every term that was summed, so cancellation cannot make the
 *            bound vanish): the probabilities' relative error E, plus the
 *            f32 PV accumulation and V dequantization, a random walk again.
 *   seg_max  exact: the max of the sim's own scores over the segment's
 *            visible keys (-inf when it has none).
 *   seg_sum  the probs bound, with the segment's visible count, around
 *            sum over the segment of exp(s_sim - seg_max) in double from
 *            the sim's scores (0 when none are visible).
 *
 * A NaN, or an infinity where a finite value was wanted, is a mismatch
 * with error +inf. Example: s_ref = 3.5 allows |err| <= 2^-22 * 3.5 =
 * 8.34e-7, i.e. 3.5 f32 ulps; a sim score 4 ulps off (3.50000095, err
 * 9.54e-7) is a mismatch with max_err_tol 4 / 3.5 = 1.14.
 *
 * Determinism: rows (and acc tiles) are cut into fixed chunks of
 * CMP_CHUNK; OpenMP threads take whole chunks, each chunk sums its rows
 * in row order, and the chunks are combined serially in order. So every
 * sum has one order and "first" is the lowest row, whatever the threads.
 * Where a block has fewer chunks than threads, or is not whole chunks,
 * threads take rows instead: each row into a part of its own, whose
 * per-key terms of the chunk-wide sums stay in the row's arrays, then
 * folded into its chunk in row order (cmp_fold_row), the same additions
 * in the same order as the chunk's own walk.
 *
 * Memory and speed: rows go through in blocks of about CMP_BLOCK_KEYS
 * (row, key) pairs each (compare_block_rows): whole chunks, or for long
 * rows (a decode over 131072 keys: 12 rows) whole kv groups, so that no
 * group's keys are made twice. ref_groups_compute fills the
 * block's reference rows (grouped by sequence and kv head, so each key
 * is gathered once for its group), then the chunks are compared; only
 * the metrics stay. Peak memory is one block of reference rows, not
 * rows x context. Two exps are taken from work already done, both the
 * same expression on the same numbers: zf is ref's softmax sum when the
 * max is the same, and exp(s - row_max) is the e[j] of the sim's row
 * softmax when row_max is that max. No sum changes order.
 */
#include "compare_int.h"

#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "dmath.h"
#include "pool.h"
#include "pv_int8.h"
#include "ref.h"
#include "../sim/common/progress.h"

#define CMP_U 0x1p-24		/* f32 unit roundoff */
#define CMP_SCORE_REL 0x1p-22
#define CMP_LOGIT_REL 0x1p-20	/* soft cap and ALiBi steps (cmp_score_tol) */
#define CMP_P_ABS 0x1p-40
#define CMP_ABS 1e-30

static const char *const what_names[CMP_NWHAT] = {
	"acc", "scores", "probs", "out", "seg_max", "seg_sum", "p_int8", "pv_acc",
};

const char *compare_what_name(enum compare_what w)
{
	return (unsigned)w < CMP_NWHAT ? what_names[w] : "?";
}

/* Same rule as ref.c, written again: compare.c must not trust the sim's. */
static int cmp_visible(const struct fs_case *c, int qpos, int j)
{
	if (qpos < 0 || j > qpos)
		return 0;
	if (c->sliding_window > 0 && j <= qpos - c->sliding_window)
		return 0;
	return 1;
}

static double cmp_f16(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY)
						    : ldexp(m + 1024, e - 25);

	return (h & 0x8000) ? -v : v;
}

/*
 * Score tolerance of visible key j, less the absolute floor. With a soft
 * cap or ALiBi the reference score is y = c + b, c = cap * tanh(a / cap)
 * (or a), b = slope * (j - q_pos); b is recomputed here and c = y - b.
 * The recovered score's bound T_a propagates to c times tanh's slope
 * d = 1 - (c / cap)^2 <= 1; for the per-token bound 2^-22 |a| d <= 2^-22
 * |c| (since x (1 - tanh^2 x) <= tanh x). The f32 steps after it - a / cap,
 * tanh (half an ulp), cap * t and cap's own rounding to f32, slope * dist
 * with the f32 slope, c + b - add at most 8u |c| + 4u |b|; 2^-20
 * (|c| + |b|) is that with room to spare.
 */
static double cmp_score_tol(const struct cmp_ctx *x, int s, int t, int qh,
			    int j, double score)
{
	const struct fs_inputs *in = x->in;
	int nkb = x->D / 32, g = qh / x->G, blk, slot;
	double sq, sum = 0, b = 0, cs, d = 1, extra = 0;
	size_t ts;

	if (x->c->alibi)
		b = ref_alibi_slope(qh, x->Hq) *
		    (j - in->q_pos[(size_t)s * x->T + t]);
	cs = score - b;
	if (x->c->soft_cap > 0) {
		d = 1 - (cs / x->c->soft_cap) * (cs / x->c->soft_cap);
		d = d < 0 ? 0 : d;
	}
	if (x->c->soft_cap > 0 || x->c->alibi)
		extra = CMP_LOGIT_REL * (fabs(cs) + fabs(b));
	if (x->c->k_scale != KSCALE_PER_BLOCK32)
		return CMP_SCORE_REL * fabs(cs) + extra;
	sq = in->q_scale[((size_t)s * x->T + t) * x->Hq + qh];
	/* the stored row of the key's block (a sparse pool: ref/pool.c) */
	blk = ref_pool_row(in, in->block_table[(size_t)s * in->MAXB + j / in->BS]);
	slot = j % in->BS;
	ts = ((size_t)blk * in->BS + slot) * in->Hkv + g;
	for (int kb = 0; kb < nkb; kb++)
		sum += fabs((double)ref_acc(x->c, in, s, t, qh, j, kb) *
			    cmp_f16(in->k_scale16[ts * nkb + kb]));
	return CMP_SCORE_REL * nkb * sum * fabs(sq) * fabs(x->c->softmax_scale) * d +
	       extra;
}

/*
 * The visible keys of a row, [*lo, *hi) of its n: cmp_visible's rule as
 * one range (causal, and the sliding window's lower end).
 */
static void cmp_vis_range(const struct fs_case *c, int qpos, int n, int *lo,
			  int *hi)
{
	*lo = c->sliding_window > 0 && qpos - c->sliding_window + 1 > 0
	      ? qpos - c->sliding_window + 1 : 0;
	*hi = qpos < 0 ? 0 : qpos + 1 < n ? qpos + 1 : n;
	if (*hi < *lo)
		*hi = *lo;
}

/*
 * tolv[j] = cmp_score_tol(j) for every visible key of the row; returns E,
 * the max of 2 tolv[j]. The per-(row, key) loop of the whole comparison:
 * without per_block32 it is cmp_score_tol written out with the row's
 * constants (ALiBi slope, soft cap) read once, not reloaded at every key
 * (a store to tolv may alias them); the same expressions, the same bits.
 */
static double cmp_row_tol(const struct cmp_ctx *x, int s, int t, int qh,
			  int qpos, const struct ref_row *rr, double *tolv)
{
	const struct fs_case *c = x->c;
	const double *score = rr->score;
	int alibi = c->alibi, lo, hi;
	double cap = c->soft_cap, slope = alibi ? ref_alibi_slope(qh, x->Hq) : 0;
	double E = 0;

	cmp_vis_range(c, qpos, rr->n, &lo, &hi);
	if (c->k_scale == KSCALE_PER_BLOCK32) {
		for (int j = lo; j < hi; j++) {
			tolv[j] = cmp_score_tol(x, s, t, qh, j, score[j]);
			E = max_nan(E, 2 * tolv[j]);
		}
		return E;
	}
	for (int j = lo; j < hi; j++) {
		double b = 0, cs, extra = 0;

		if (alibi)
			b = slope * (j - qpos);
		cs = score[j] - b;
		if (cap > 0 || alibi)
			extra = CMP_LOGIT_REL * (fabs(cs) + fabs(b));
		tolv[j] = CMP_SCORE_REL * fabs(cs) + extra;
		E = max_nan(E, 2 * tolv[j]);
	}
	return E;
}

/*
 * The sim's scores of one row as a softmax in double: the top key (ties:
 * lowest), the max ms, e[j] = exp(s_j - ms) for visible j (else left as
 * is) and zs = their sum in key order.
 */
struct cmp_simrow {
	int as;
	double ms, zs;
};

static void cmp_sim_softmax(const struct cmp_ctx *x, const float *sc, int n,
			    int qpos, double *e, struct cmp_simrow *sr)
{
	int lo, hi;

	sr->as = -1;
	sr->ms = 0;
	sr->zs = 0;
	for (int j = 0; j < n; j++) {
		if (!cmp_visible(x->c, qpos, j))
			continue;
		if (sr->as < 0 || sc[j] > sr->ms) {
			sr->as = j;
			sr->ms = sc[j];
		}
	}
	/* the exps 8 at a time (dm_exp_n: dm_exp's bits), the sum in order */
	cmp_vis_range(x->c, qpos, n, &lo, &hi);
	for (int j = lo; j < hi; j++)
		e[j] = sc[j] - sr->ms;
	dm_exp_n(e + lo, e + lo, hi - lo);
	for (int j = lo; j < hi; j++)
		sr->zs += e[j];
}


/*
 * pv.mode int8: one row's out o against want, the reference's out of the
 * same quantized inputs with P unquantized (f32 PV's answer), into the
 * part and the bucket of the row's query position.
 */
static void cmp_pv_quant(const struct cmp_ctx *x, struct cmp_part *p, const float *o,
			 const double *want, int qpos)
{
	double e2 = 0, w2 = 0, mx = 0, dot = 0, na = 0, cs;
	int b = x->nb > 0 && qpos >= 0 ? (int)((long long)qpos * x->nb / x->MAXCTX) : -1;

	for (int d = 0; d < x->D; d++) {
		double a = o[d], f = want[d];

		e2 += (a - f) * (a - f);
		w2 += f * f;
		dot += a * f;
		na += a * a;
		mx = max_nan(mx, fabs(a - f));
	}
	cs = na == 0 && w2 == 0 ? 1 : na == 0 || w2 == 0 ? 0 : dot / (sqrt(na) * sqrt(w2));
	p->pv_rows++;
	p->pv_err2 += e2;
	p->pv_ref2 += w2;
	p->pv_max = max_nan(p->pv_max, mx);
	p->pv_cos_min = min_nan(p->pv_cos_min, cs);
	if (b >= 0) {
		p->b_pv_rows[b]++;
		p->b_pv_err2[b] += e2;
		p->b_pv_ref2[b] += w2;
		p->b_pv_max[b] = max_nan(p->b_pv_max[b], mx);
	}
}

/*
 * Quantization error of one row (visible > 0; sr from the sim's scores
 * when it has them); fills *kld. w: scratch of the row's n keys.
 * defer: the row's part is its own (cmp_walk_rows), and the terms of
 * the four sums that run over every key of a chunk's rows (s_err2,
 * s_ref2, dp2, b_dp2) are not added but left in the row's arrays, ds^2
 * in score[j], sf^2 in prob[j], dp^2 in prob_f[j] (each read for the
 * last time before), for cmp_fold_row to add in the chunk's order.
 */
static void cmp_quant_row(const struct cmp_ctx *x, long row, int qpos,
			  struct ref_row *rr, const struct cmp_simrow *sr,
			  struct cmp_part *p, double *kld, double *w, int defer)
{
	const struct attn_result *r = x->r;
	const float *sc = r->scores ? r->scores + row * x->MAXCTX : NULL;
	int n = rr->n;

	p->qrows++;
	p->keys += rr->visible;
	if (sc) {
		double ms = sr->ms, mf = 0, zs = sr->zs, zf = 0, lzs, lzf, kl = 0;
		int as = sr->as, af = -1, lo, hi;

		for (int j = 0; j < n; j++) {
			if (!cmp_visible(x->c, qpos, j))
				continue;
			if (af < 0 || rr->score_f[j] > mf) {
				af = j;
				mf = rr->score_f[j];
			}
		}
		/*
		 * zf = sum over visible j of exp(score_f[j] - mf) in key order:
		 * that is ref's softmax sum when its max is the same number
		 * (ref adds exact zeros for masked keys, which change nothing).
		 */
		if (isfinite(mf) && mf == rr->max_f) {
			zf = rr->sum_f;
		} else {
			for (int j = 0; j < n; j++)
				if (cmp_visible(x->c, qpos, j))
					zf += dm_exp(rr->score_f[j] - mf);
		}
		lzs = dm_log(zs);
		lzf = dm_log(zf);
		/* w[j] = exp(lps), the sim's probability, 8 at a time */
		cmp_vis_range(x->c, qpos, n, &lo, &hi);
		for (int j = lo; j < hi; j++)
			w[j] = sc[j] - ms - lzs;
		dm_exp_n(w + lo, w + lo, hi - lo);
		for (int j = 0; j < n; j++) {
			double sf = rr->score_f[j], ds, lps, lpf, pf, dp;
			int b;

			if (!cmp_visible(x->c, qpos, j))
				continue;
			ds = sc[j] - sf;
			p->s_max = max_nan(p->s_max, fabs(ds));
			lps = sc[j] - ms - lzs;
			lpf = sf - mf - lzf;
			pf = rr->prob_f[j];
			if (pf > 0)
				kl += pf * (lpf - lps);
			dp = w[j] - pf;
			if (defer) {
				rr->score[j] = ds * ds;
				rr->prob[j] = sf * sf;
				rr->prob_f[j] = dp * dp;
			} else {
				p->s_err2 += ds * ds;
				p->s_ref2 += sf * sf;
				p->dp2 += dp * dp;
			}
			if (x->nb > 0) {
				b = (int)((long long)j * x->nb / x->MAXCTX);
				p->b_keys[b]++;
				p->b_max[b] = max_nan(p->b_max[b], fabs(ds));
				if (!defer)
					p->b_dp2[b] += dp * dp;
			}
		}
		/* Rounding can leave -1e-17 where P_float == P_sim. */
		*kld = kl < 0 ? 0 : kl;
		if (as == af)
			p->top1_same++;
	}
	if (r->out) {
		const float *o = r->out + row * x->D;
		double dot = 0, na = 0, nf = 0, cs;

		for (int d = 0; d < x->D; d++) {
			double a = o[d], f = rr->out_f[d];

			dot += a * f;
			na += a * a;
			nf += f * f;
			p->o_max = max_nan(p->o_max, fabs(a - f));
		}
		/* Two zero vectors agree; one zero vector is orthogonal. */
		if (na == 0 && nf == 0)
			cs = 1;
		else if (na == 0 || nf == 0)
			cs = 0;
		else
			cs = dot / (sqrt(na) * sqrt(nf));
		p->cos_sum += cs;
		p->cos_min = min_nan(p->cos_min, cs);
		if (x->c->pv_mode == PV_INT8)
			cmp_pv_quant(x, p, o, rr->out, qpos);
	}
}

/*
 * One row into p. tolv: the row's scratch of MAXCTX doubles, one array
 * in turn the score tolerances, the sim's exps (e, the probabilities'
 * check), the split-K sums' exps and cmp_quant_row's: one per thread, so
 * a decode over 131072 keys at 16 threads keeps 16 MiB, not twice that.
 */
static void cmp_row(const struct cmp_ctx *x, long row,
		    struct ref_row *rr, double *tolv,
		    struct cmp_part *p, double *kld, unsigned char *kmeasured,
		    int defer)
{
	const struct fs_case *c = x->c;
	const struct attn_result *r = x->r;
	int s = (int)(row / ((long)x->T * x->Hq));
	int t = (int)(row / x->Hq % x->T), qh = (int)(row % x->Hq);
	const float *sc = r->scores ? r->scores + row * x->MAXCTX : NULL;
	struct compare_stat *st;
	struct cmp_simrow sr = { -1, 0, 0 };
	int n, v, qpos;
	double E = 0, walk;

	*kld = NAN;
	*kmeasured = 0;
	if (t >= c->seqs[s].tokens)
		return;
	p->rows++;
	n = rr->n;
	v = rr->visible;
	qpos = x->in->q_pos[(size_t)s * x->T + t];
	E = cmp_row_tol(x, s, t, qh, qpos, rr, tolv);
	walk = (16 + 4 * sqrt((double)v)) * CMP_U;
	if (sc) {
		st = &p->st[CMP_SCORES];
		for (int j = 0; j < x->MAXCTX; j++) {
			int first;

			if (j < n && cmp_visible(c, qpos, j))
				first = stat_note(st, sc[j], rr->score[j],
						  tolv[j] + CMP_ABS);
			else
				first = stat_note(st, sc[j], -INFINITY, 0);
			if (first) {
				loc_row(&st->first, s, t, qh);
				st->first.key = j;
			}
		}
	}
	/* the tolerances are read; their array holds e from here */
	if (sc && v > 0)
		cmp_sim_softmax(x, sc, n, qpos, tolv, &sr);
	if (sc && r->row_max && r->row_sum) {
		const double *e = tolv;
		double rm = r->row_max[row], rs = r->row_sum[row];
		/* exp(s_j - rm) is e[j] when rm is the max that e[j] used. */
		int same = v > 0 && (double)rm == sr.ms;

		st = &p->st[CMP_PROBS];
		for (int j = 0; j < n; j++) {
			double ps, tol;

			if (!cmp_visible(c, qpos, j))
				continue;
			ps = (same ? e[j] : dm_exp((double)sc[j] - rm)) / rs;
			tol = rr->prob[j] * (E + walk) + CMP_P_ABS;
			if (stat_note(st, ps, rr->prob[j], tol)) {
				loc_row(&st->first, s, t, qh);
				st->first.key = j;
			}
		}
	}
	if (r->out) {
		const float *o = r->out + row * x->D;
		double tol = (walk + E) * rr->out_abs + CMP_ABS;
		double slack[CASE_MAX_HEAD_DIM];
		int pv8 = c->pv_mode == PV_INT8;

		/* INT8 PV: P's quantization, one step a key (ref/pv_int8.h) */
		if (pv8)
			ref_pv_out_slack(c, x->in, x->vsum, s, qh, rr->prob, rr->n, r->pv_gk,
					 slack);
		st = &p->st[CMP_OUT];
		for (int d = 0; d < x->D; d++) {
			if (stat_note(st, o[d], rr->out[d], tol + (pv8 ? slack[d] : 0))) {
				loc_row(&st->first, s, t, qh);
				st->first.dim = d;
			}
		}
	}
	/* e is read: tolv is the split-K sums' and cmp_quant_row's exps */
	if (x->nseg > 1) {
		int vlo, vhi;

		cmp_vis_range(c, qpos, n, &vlo, &vhi);
		for (int g = 0; g < case_segments_of(c, s); g++) {
			int lo = g * c->segment, hi = lo + c->segment, vs = 0;
			size_t at = (size_t)row * x->nseg + g;
			float m = -INFINITY;
			double sum = 0, tol;

			if (hi > n)
				hi = n;
			for (int j = lo; j < hi; j++) {
				if (!cmp_visible(c, qpos, j))
					continue;
				vs++;
				if (sc[j] > m)
					m = sc[j];
			}
			if (m != -INFINITY) {	/* the exps 8 at a time, summed in order */
				int a = lo > vlo ? lo : vlo, z = hi < vhi ? hi : vhi;

				for (int j = a; j < z; j++)
					tolv[j] = (double)sc[j] - m;
				dm_exp_n(tolv + a, tolv + a, z > a ? z - a : 0);
				for (int j = a; j < z; j++)
					sum += tolv[j];
			}
			st = &p->st[CMP_SEG_MAX];
			if (stat_note(st, r->seg_max[at], m, 0)) {
				loc_row(&st->first, s, t, qh);
				st->first.seg = g;
			}
			tol = sum * (E + (16 + 4 * sqrt((double)vs)) * CMP_U) +
			      CMP_P_ABS;
			st = &p->st[CMP_SEG_SUM];
			if (stat_note(st, r->seg_sum[at], sum, tol)) {
				loc_row(&st->first, s, t, qh);
				st->first.seg = g;
			}
		}
	}
	if (v > 0) {
		cmp_quant_row(x, row, qpos, rr, &sr, p, kld, tolv, defer);
		*kmeasured = sc != NULL;
	}
}

/*
 * Row rp's part (cmp_row with defer) into its chunk's part p, the rows
 * of a chunk in order: what cmp_row would have added to p itself. The
 * counts, maxima, minima and stats combine in any grouping; cos_sum and
 * the pv sums get one term a row, so adding the row's (0 + that term,
 * exact) is adding the term; the four sums over keys get their terms
 * from the row's arrays one by one, keys in order, as cmp_quant_row
 * adds them. So the chunk's part has the same bits either way.
 */
static void cmp_fold_row(const struct cmp_ctx *x, long row,
			 const struct ref_row *rr, const struct cmp_part *rp,
			 struct cmp_part *p)
{
	int s = (int)(row / ((long)x->T * x->Hq)), t = (int)(row / x->Hq % x->T);
	int qpos = x->in->q_pos[(size_t)s * x->T + t], vlo, vhi;

	for (int w = CMP_SCORES; w <= CMP_SEG_SUM; w++)
		stat_merge(&p->st[w], &rp->st[w]);
	p->rows += rp->rows;
	p->qrows += rp->qrows;
	p->keys += rp->keys;
	p->top1_same += rp->top1_same;
	p->s_max = max_nan(p->s_max, rp->s_max);
	p->cos_sum += rp->cos_sum;
	p->cos_min = min_nan(p->cos_min, rp->cos_min);
	p->o_max = max_nan(p->o_max, rp->o_max);
	p->pv_rows += rp->pv_rows;
	p->pv_err2 += rp->pv_err2;
	p->pv_ref2 += rp->pv_ref2;
	p->pv_max = max_nan(p->pv_max, rp->pv_max);
	p->pv_cos_min = min_nan(p->pv_cos_min, rp->pv_cos_min);
	for (int b = 0; b < x->nb; b++) {
		p->b_pv_rows[b] += rp->b_pv_rows[b];
		p->b_pv_err2[b] += rp->b_pv_err2[b];
		p->b_pv_ref2[b] += rp->b_pv_ref2[b];
		p->b_pv_max[b] = max_nan(p->b_pv_max[b], rp->b_pv_max[b]);
		p->b_keys[b] += rp->b_keys[b];
		p->b_max[b] = max_nan(p->b_max[b], rp->b_max[b]);
	}
	/* cmp_quant_row's deferred terms: there when it saw the sim's scores */
	if (!x->r->scores || rp->qrows == 0)
		return;
	/* The visible keys in order, bucket by bucket (key j is in bucket
	 * j * nb / MAXCTX, floor: its keys start at ceil(b * MAXCTX / nb)),
	 * so no division a key; each sum still gets its terms in key order. */
	cmp_vis_range(x->c, qpos, rr->n, &vlo, &vhi);
	for (int b = 0; b < (x->nb > 0 ? x->nb : 1); b++) {
		int lo = vlo, hi = vhi;

		if (x->nb > 0) {
			int blo = (int)(((long long)b * x->MAXCTX + x->nb - 1) / x->nb);
			int bhi = (int)(((long long)(b + 1) * x->MAXCTX + x->nb - 1) / x->nb);

			lo = lo > blo ? lo : blo;
			hi = hi < bhi ? hi : bhi;
		}
		for (int j = lo; j < hi; j++) {
			p->s_err2 += rr->score[j];
			p->s_ref2 += rr->prob[j];
			p->dp2 += rr->prob_f[j];
			if (x->nb > 0)
				p->b_dp2[b] += rr->prob_f[j];
		}
	}
}

/*
 * The reference rows of one block: rows [r0, r1) of the report order,
 * a whole number of chunks, laid out group by group (rows of one
 * sequence and kv head together) so that ref_group_compute gathers each
 * key once for all of them. slot[row - r0] is where a row's reference
 * is; -1 for rows that do not exist (t >= T_s).
 */
struct cmp_block {
	long cap;		/* rows the buffers hold */
	struct ref_row *rr;	/* [cap], each over MAXCTX keys and D dims */
	double *buf;		/* the rows' arrays, one allocation */
	int *slot;		/* [cap] */
	int *t, *qh;		/* [cap] in slot order */
	struct ref_group *grp;	/* [cap] at most one group per row */
	int n_grp;
};

static void block_free(struct cmp_block *b)
{
	free(b->rr);
	free(b->buf);
	free(b->slot);
	free(b->t);
	free(b->qh);
	free(b->grp);
	memset(b, 0, sizeof(*b));
}

static int block_alloc(struct cmp_block *b, long cap, int maxctx, int d)
{
	size_t n = maxctx > 0 ? (size_t)maxctx : 1, nd = d > 0 ? (size_t)d : 1;
	size_t per = 4 * n + 3 * nd;

	memset(b, 0, sizeof(*b));
	b->cap = cap;
	b->rr = calloc((size_t)cap, sizeof(*b->rr));
	b->buf = malloc((size_t)cap * per * sizeof(double));
	if (b->buf)	/* tens of MiB, first touched by the scores pass */
		fs_advise_huge(b->buf, (size_t)cap * per * sizeof(double));
	b->slot = malloc((size_t)cap * sizeof(int));
	b->t = malloc((size_t)cap * sizeof(int));
	b->qh = malloc((size_t)cap * sizeof(int));
	b->grp = malloc((size_t)cap * sizeof(*b->grp));
	if (!b->rr || !b->buf || !b->slot || !b->t || !b->qh || !b->grp) {
		block_free(b);
		return -1;
	}
	for (long i = 0; i < cap; i++) {
		double *at = b->buf + (size_t)i * per;

		b->rr[i].score = at;
		b->rr[i].prob = at + n;
		b->rr[i].score_f = at + 2 * n;
		b->rr[i].prob_f = at + 3 * n;
		b->rr[i].out = at + 4 * n;
		b->rr[i].out_f = at + 4 * n + nd;
		b->rr[i].out_absd = at + 4 * n + 2 * nd;
	}
	return 0;
}

/* Group rows [r0, r1) by (sequence, kv head), in order of first row. */
static void block_plan(const struct cmp_ctx *x, struct cmp_block *b, long r0,
		       long r1)
{
	int used = 0;

	b->n_grp = 0;
	for (long row = r0; row < r1; row++)
		b->slot[row - r0] = -1;
	for (long row = r0; row < r1; row++) {
		int s = (int)(row / ((long)x->T * x->Hq));
		int g = (int)(row % x->Hq) / x->G;
		struct ref_group *gr;

		if (b->slot[row - r0] >= 0 ||
		    (int)(row / x->Hq % x->T) >= x->c->seqs[s].tokens)
			continue;
		gr = &b->grp[b->n_grp++];
		gr->s = s;
		gr->g = g;
		gr->rows = 0;
		gr->t = b->t + used;
		gr->qh = b->qh + used;
		gr->row = b->rr + used;
		for (long q = row; q < r1; q++) {
			int qs = (int)(q / ((long)x->T * x->Hq));
			int qt = (int)(q / x->Hq % x->T), qqh = (int)(q % x->Hq);

			if (qs != s || qqh / x->G != g ||
			    qt >= x->c->seqs[s].tokens)
				continue;
			b->slot[q - r0] = used;
			b->t[used] = qt;
			b->qh[used] = qqh;
			used++;
			gr->rows++;
		}
	}
}

/* Threads of the team this runs in (1 outside one), and of the team a
 * parallel region would have. */
static int cmp_team(void)
{
#ifdef _OPENMP
	return omp_get_num_threads();
#else
	return 1;
#endif
}

static int cmp_max_team(void)
{
#ifdef _OPENMP
	return omp_get_max_threads();
#else
	return 1;
#endif
}

/* Rows per block: about CMP_BLOCK_KEYS (row, key) pairs (compare.h). */
#define CMP_BLOCK_KEYS (1L << 21)

long compare_block_rows(long rows, int maxctx, int G, int *chunks)
{
	long b = CMP_BLOCK_KEYS / (maxctx > 0 ? maxctx : 1);

	if (chunks)
		*chunks = b >= 4 * CMP_CHUNK;
	if (b >= 4 * CMP_CHUNK) {	/* whole chunks */
		b = b / CMP_CHUNK * CMP_CHUNK;
		if (b > (rows + CMP_CHUNK - 1) / CMP_CHUNK * CMP_CHUNK)
			b = (rows + CMP_CHUNK - 1) / CMP_CHUNK * CMP_CHUNK;
		return b;
	}
	/* long rows: whole kv groups where one fits (G consecutive rows of
	 * a decode share a kv head, so none is split between two blocks
	 * and made twice), at least one row */
	if (b >= G && G > 0)
		b -= b % G;
	if (b > rows)
		b = rows;
	return b < 1 ? 1 : b;
}

enum fs_rc compare_run(const struct fs_case *c, const struct lanemap *lm,
		       const struct fs_inputs *in, const struct attn_result *r,
		       struct compare_report *rep, struct fs_err *err)
{
	return compare_run_progress(c, lm, in, r, NULL, rep, err);
}

enum fs_rc compare_run_progress(const struct fs_case *c, const struct lanemap *lm,
				const struct fs_inputs *in, const struct attn_result *r,
				struct fs_progress *prog, struct compare_report *rep,
				struct fs_err *err)
{
	struct cmp_ctx x = { .c = c, .lm = lm, .in = in, .r = r };
	long rows = (long)in->S * in->T * in->Hq;
	size_t nparts = (size_t)(rows + CMP_CHUNK - 1) / CMP_CHUNK;
	size_t ntc = r->acc ? (r->n_tiles + CMP_CHUNK - 1) / CMP_CHUNK : 0;
	struct cmp_part *parts;
	struct compare_stat *tstat;
	struct cmp_block blk = { 0 };
	double *kld;
	unsigned char *kmeas;
	enum fs_rc rc;
	int oom = 0;
	size_t nk = 0;
	long brows;
	int long_rows;
	struct cmp_part *rparts;
	struct ref_pv_vsum vsum = { 0 };

	memset(rep, 0, sizeof(*rep));
	for (int w = 0; w < CMP_NWHAT; w++)
		stat_clear(&rep->stat[w]);
	x.S = in->S;
	x.T = in->T;
	x.Hq = in->Hq;
	x.G = in->Hkv > 0 ? in->Hq / in->Hkv : 1;
	x.D = in->D;
	x.MAXCTX = in->MAXCTX;
	x.nseg = r->nseg > 1 && r->scores && r->seg_max && r->seg_sum ? r->nseg : 0;
	x.nb = c->buckets < 0 ? 0 : c->buckets > CASE_MAX_BUCKETS
		? CASE_MAX_BUCKETS : c->buckets;
	rc = cmp_validate(&x, err);
	if (rc != FS_OK)
		return rc;

	brows = compare_block_rows(rows, x.MAXCTX, x.G, &long_rows);
	long_rows = !long_rows;
	parts = malloc((nparts ? nparts : 1) * sizeof(*parts));
	tstat = malloc((ntc ? ntc : 1) * sizeof(*tstat));
	kld = malloc((rows ? (size_t)rows : 1) * sizeof(double));
	kmeas = malloc(rows ? (size_t)rows : 1);
	if (!parts || !tstat || !kld || !kmeas ||
	    block_alloc(&blk, brows > 0 ? brows : 1, x.MAXCTX, x.D)) {
		free(parts);
		free(tstat);
		free(kld);
		free(kmeas);
		block_free(&blk);
		return fs_fail(err, FS_ENOMEM, "out of memory: the comparison's "
			       "buffers for %ld rows", rows);
	}

	/* parts of single rows, one for each of a block's rows, for blocks
	 * of long rows and for blocks whose chunks do not share out evenly
	 * (about 1.5 KiB a row, 400 rows for a prefill over 5120 keys);
	 * without them (no memory) the latter share out their chunks as
	 * always */
	rparts = long_rows || cmp_max_team() > 1 ?
		 malloc((size_t)brows * sizeof(*rparts)) : NULL;
	if (long_rows && !rparts) {
		free(parts);
		free(tstat);
		free(kld);
		free(kmeas);
		block_free(&blk);
		return fs_fail(err, FS_ENOMEM, "out of memory: the comparison's "
			       "buffers for %ld rows", rows);
	}
	/* without the sums (no memory) each row sums its groups itself */
	if (c->pv_mode == PV_INT8 && r->out && r->pv_gk > 0 &&
	    !ref_pv_vsum_build(c, in, r->pv_gk, &vsum))
		x.vsum = &vsum;
	fs_progress_total(prog, rows);
#pragma omp parallel
	{
		double *tolv = malloc((x.MAXCTX > 0 ? (size_t)x.MAXCTX : 1) *
				      sizeof(double));
		struct cmp_tile_buf tb = { 0 };

		if (!tolv || (ntc > 0 && cmp_tile_buf_alloc(&x, &tb))) {
#pragma omp atomic write
			oom = 1;
		}
		/* Block by block: the reference of every row (all threads on
		 * each group), then the chunks, each in row order. */
		for (long r0 = 0; r0 < rows; r0 += brows) {
			long r1 = r0 + brows < rows ? r0 + brows : rows;
			long nch = (r1 + CMP_CHUNK - 1) / CMP_CHUNK - r0 / CMP_CHUNK;
			/*
			 * Blocks of long rows (not whole chunks), or chunks that
			 * do not share out evenly, fewer than threads among them
			 * (a decode: 24 rows of 131072 keys, two chunks; a
			 * prefill over 5120 keys: 25 chunks a block, which ran as
			 * 32 on 16 threads): the rows, not the chunks, are shared out,
			 * each into its own part, then folded into their chunk's
			 * in row order (cmp_fold_row: the same bits); a chunk
			 * that spans two blocks is folded in two goes, in order.
			 */
			int by_rows = long_rows || (rparts && nch % cmp_team());

#pragma omp single
			block_plan(&x, &blk, r0, r1);
			ref_groups_compute(c, in, blk.grp, blk.n_grp);
			if (by_rows) {
#pragma omp for schedule(dynamic, 1)
				for (long row = r0; row < r1; row++) {
					int sl = blk.slot[row - r0];

					kld[row] = NAN;
					kmeas[row] = 0;
					cmp_part_clear(&rparts[row - r0]);
					if (tolv && sl >= 0)
						cmp_row(&x, row, &blk.rr[sl], tolv,
							&rparts[row - r0],
							&kld[row], &kmeas[row], 1);
				}
#pragma omp for schedule(static)
				for (size_t i = (size_t)r0 / CMP_CHUNK;
				     i < ((size_t)r1 + CMP_CHUNK - 1) / CMP_CHUNK; i++) {
					long a = (long)i * CMP_CHUNK, b = a + CMP_CHUNK;

					if (a >= r0)	/* the chunk's first rows */
						cmp_part_clear(&parts[i]);
					a = a > r0 ? a : r0;
					b = b < r1 ? b : r1;
					for (long row = a; tolv && row < b; row++) {
						int sl = blk.slot[row - r0];

						if (sl >= 0)
							cmp_fold_row(&x, row, &blk.rr[sl],
								     &rparts[row - r0], &parts[i]);
					}
					fs_progress_add(prog, b - a);
				}
				continue;
			}
#pragma omp for schedule(static)
			for (size_t i = (size_t)r0 / CMP_CHUNK;
			     i < ((size_t)r1 + CMP_CHUNK - 1) / CMP_CHUNK; i++) {
				long end = (long)(i + 1) * CMP_CHUNK;

				cmp_part_clear(&parts[i]);
				for (long row = (long)i * CMP_CHUNK;
				     tolv && row < end && row < rows; row++) {
					int sl = blk.slot[row - r0];

					kld[row] = NAN;
					kmeas[row] = 0;
					if (sl >= 0)
						cmp_row(&x, row, &blk.rr[sl], tolv,
							&parts[i],
							&kld[row],
							&kmeas[row], 0);
				}
				fs_progress_add(prog, (end < rows ? end : rows) - (long)i * CMP_CHUNK);
			}
		}
#pragma omp single
		if (ntc) {
			fs_progress_stage(prog, FS_STAGE_EXACT_ACC);
			fs_progress_total(prog, (long long)r->n_tiles);
		}
#pragma omp for schedule(static)
		for (size_t i = 0; i < ntc; i++) {
			stat_clear(&tstat[i]);
			for (size_t k = i * CMP_CHUNK;
			     tb.k && k < (i + 1) * CMP_CHUNK && k < r->n_tiles; k++)
				cmp_tile(&x, k, &tstat[i], &tb);
			fs_progress_add(prog, (long long)((i + 1) * CMP_CHUNK < r->n_tiles ?
							  CMP_CHUNK : r->n_tiles - i * CMP_CHUNK));
		}
		free(tolv);
		cmp_tile_buf_free(&tb);
	}

	if (oom) {
		rc = fs_nomem(err, "a thread's comparison buffers", 0);
		memset(rep, 0, sizeof(*rep));
	} else {
		/* Per-row KLDs, compacted in row order. */
		for (long row = 0; row < rows; row++)
			if (kmeas[row])
				kld[nk++] = kld[row];
		for (size_t i = 0; i < ntc; i++)
			stat_merge(&rep->stat[CMP_ACC], &tstat[i]);
		rep->stat[CMP_ACC].ran = r->acc && r->n_tiles > 0;
		rc = FS_OK;
		if (r->pv_acc)
			rc = cmp_pv(&x, rep, err);
		if (!rc)
			cmp_finish(&x, parts, nparts, kld, nk, rep);
	}
	if (!rc && !oom) {
		rc = rep->mismatches || rep->replica_mismatch || rep->n_failed
		     ? FS_MISMATCH : FS_OK;
	}
	free(parts);
	free(rparts);
	free(tstat);
	free(kld);
	free(kmeas);
	ref_pv_vsum_free(&vsum);
	block_free(&blk);
	return rc;
}
