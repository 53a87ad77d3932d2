/*
 * pv_int8.c - the reference of INT8 PV (see pv_int8.h). Plain loops over
 * logical keys, the golden's registers labelled by the profile's tables
 * (data, not sim/'s code) and by the documented regroup rule:
 *
 *   regroup lds          A slot s holds P[a_row[s]][a_col[s]]
 *   regroup v_permuted   lane L's i-th A slot of row r holds its i-th C
 *                        entry of row r, QK tiles in order, registers in
 *                        order: key t*N + c_col of that C slot
 *
 * Worked example (gfx936, v_permuted): lane 17, A byte 5 is its sixth
 * slot of row 1; the lane's C entries of row 1 are columns 1, 5, 9, 13 of
 * tile 0 then of tile 1, so byte 5 holds key 16 + 5 = 21. Its V is
 * v_cache[block_table[s][(kb + 21) / BS]][g][d][(kb + 21) % BS].
 *
 * The reference's own Pq of a group row: s_j = acc_j sQ sK scale in
 * double (ref_acc, exact), p'_j = exp(s_j - max s) sV_j over the visible
 * keys of the group, Pq_j = round(clip p'_j / max p') in the case's
 * rounding; the running max and normaliser of the kernel cancel in the
 * ratio, so this needs nothing of the kernel's state. With V per_channel
 * (cache.v_scale) nothing cancels: Pq_j = round(clip exp(s_j - M)), M
 * the max over the row's visible keys from its segment's start to the
 * group's end, the reference's own (pv_maxima, one pass over K); e.g.
 * clip 127, a group whose best key is 0.5 below an earlier key's score:
 * its Pq is round(127 e^-0.5) = round(77.03) = 77.
 */
#include "pv_int8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmath.h"
#include "dot.h"
#include "pool.h"
#include "ref.h"

/* `omp simd` asks for vector code. At -O1 with sanitizers (make asan,
 * make fuzz) clang cannot always give it and warns; the loop computes the
 * same either way, so that warning is not an error here (as in gen.c). */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

/* Block of key j of sequence s, by the table, as the row of the stored
 * arrays that holds it (a sparse pool: ref/pool.c; else the physical
 * block); -1 past the table or for a freed (window_blocks) entry. */
static int pv_block(const struct fs_inputs *in, int s, int j)
{
	int b = j / in->BS;

	return b < in->MAXB ? ref_pool_row(in, in->block_table[s * in->MAXB + b]) : -1;
}

/* (blk, slot, kv head) index of the per-token scale caches. */
static size_t pv_ts(const struct fs_inputs *in, int blk, int j, int g)
{
	return ((size_t)blk * in->BS + j % in->BS) * in->Hkv + g;
}

/* Group gi of sequence s's keys: segment gi / gps, group gi % gps of it,
 * gps = the groups a segment spans (groups start at each segment's
 * start). [*kb, *hi), or 0 when there is no such group. */
static int slack_group(const struct fs_case *c, int n, int K, int gi, int *kb, int *hi)
{
	int seg = c->segment > 0 ? c->segment : n, gps = (seg + K - 1) / K;
	int lo = gi / gps * seg;

	*kb = lo + gi % gps * K;
	*hi = *kb + K < lo + seg ? *kb + K : lo + seg;
	if (*hi > n)
		*hi = n;
	return *kb < *hi;
}

static int slack_groups(const struct fs_case *c, int n, int K)
{
	int seg = c->segment > 0 ? c->segment : n;

	return n > 0 ? (n + seg - 1) / seg * ((seg + K - 1) / K) : 0;
}

/* Per sequence, the first of its entries in a table of per entries a
 * group (slack_groups of them); *total all of them. NULL: no memory. */
static size_t *slack_bases(const struct fs_case *c, const struct fs_inputs *in, int K,
			   size_t per, size_t *total)
{
	size_t *base = malloc((size_t)(in->S > 0 ? in->S : 1) * sizeof(size_t));

	*total = 0;
	for (int s = 0; base && s < in->S; s++) {
		base[s] = *total;
		*total += per * slack_groups(c, in->context_lens[s], K);
	}
	return base;
}

static int8_t pv_v(const struct fs_inputs *in, int blk, int j, int g, int d)
{
	return in->v_cache_i8[(size_t)blk * inputs_block_elems(in) +
			      ((size_t)g * in->D + d) * in->BS + j % in->BS];
}

static double pv_round(double x, enum case_rounding r)
{
	return r == ROUND_HALF_EVEN ? nearbyint(x) : (x < 0 ? -floor(-x + 0.5) : floor(x + 0.5));
}

/* Key within the group that each A slot holds (key[W*EA]); 0 or -1. */
static int pv_labels(const struct fs_case *c, const struct ref_pv_golden *g, int *key)
{
	int GT = g->K / g->N;

	for (int L = 0; L < g->W; L++)
		for (int e = 0; e < g->EA; e++) {
			int s = L * g->EA + e, r = g->a_row[s], i = 0;

			key[s] = -1;
			if (c->pv_regroup == PV_REGROUP_LDS) {
				key[s] = g->a_col[s];
				continue;
			}
			for (int j = 0; j < e; j++)
				i += g->a_row[L * g->EA + j] == r;
			for (int t = 0; t < GT && key[s] < 0; t++)
				for (int x = 0; x < g->EC && key[s] < 0; x++)
					if (g->c_row[L * g->EC + x] == r && i-- == 0)
						key[s] = t * g->N + g->c_col[L * g->EC + x];
			if (key[s] < 0)
				return -1;
		}
	return 0;
}

/* The query row of C row m of a group: 0, or -1 for a padding row. */
static int pv_row_of(const struct fs_case *c, const int32_t *tl, int M, int m,
		     int *t, int *qh, int *kvh)
{
	int G = c->q_heads / c->kv_heads;

	if (c->mode == MODE_DECODE) {
		int local = tl[4] * M + m;

		if (c->decode_rows == ROWS_PACKED && local >= G)
			return -1;
		*t = tl[2], *qh = tl[1] * G + local % G, *kvh = tl[1];
	} else {
		*t = tl[2] + m, *qh = tl[1], *kvh = tl[1] / G;
	}
	return *t < c->seqs[tl[0]].tokens ? 0 : -1;
}

static int pv_visible(const struct fs_case *c, int qpos, int j)
{
	if (qpos < 0 || j > qpos)
		return 0;
	return !(c->sliding_window > 0 && j <= qpos - c->sliding_window);
}

static void pv_note(struct ref_pv_stat *st, long gi, int slot, int per, int row,
		    int col, int s, int t, int qh, int key, int dim, double got,
		    double want, double tol)
{
	double e = fabs(got - want), ratio = e > 0 ? (tol > 0 ? e / tol : INFINITY) : 0;

	st->compared++;
	if (e > st->max_abs_err)
		st->max_abs_err = e;
	if (ratio > st->max_err_tol)
		st->max_err_tol = ratio;
	if (e <= tol)
		return;
	if (!st->mismatches++) {
		st->group = gi, st->lane = slot / per, st->elem = slot % per;
		st->row = row, st->col = col, st->s = s, st->t = t, st->qh = qh;
		st->key = key, st->dim = dim, st->got = got, st->want = want;
		st->tol = tol;
	}
}

/* The K scale of key kj (stored block row blk) of kv head kvh. */
static double pv_sk(const struct fs_case *c, const struct fs_inputs *in, int blk, int kj,
		    int kvh)
{
	return c->k_scale == KSCALE_PER_TENSOR ? in->k_scale[0] :
	       c->k_scale == KSCALE_PER_HEAD ? in->k_scale[kvh] :
	       in->k_scale[pv_ts(in, blk, kj, kvh)];
}

/* The double score of query row qi from its exact accumulator. */
static double pv_sc(const struct fs_case *c, const struct fs_inputs *in, int32_t acc,
		    size_t qi, double sk)
{
	return (double)acc * in->q_scale[qi] * sk * c->softmax_scale;
}

/* Double score of row (s, t, qh) (kv head kvh, at qpos) against key kj,
 * -inf where it is masked or its block is not in the table. */
static double pv_score(const struct fs_case *c, const struct fs_inputs *in, int s,
		       int t, int qh, int kvh, int qpos, int kj)
{
	int blk = pv_block(in, s, kj);

	if (blk < 0 || !pv_visible(c, qpos, kj))
		return -INFINITY;
	return pv_sc(c, in, ref_acc(c, in, s, t, qh, kj, -1),
		     ((size_t)s * in->T + t) * in->Hq + qh, pv_sk(c, in, blk, kj, kvh));
}

/*
 * The running maxima the kernel quantizes under: V per_channel, where
 * Pq = round(clip e^(s - M)) and no ratio cancels M, and V per token
 * where P underflows (pv_range). Per (sequence, query row, group of K
 * keys from each segment's start, numbered as slack_group does) the max
 * of the row's visible double scores over its segment's keys before the
 * group, -inf for none. One pass over K, each group's K rows loaded once
 * and every row of its kv head scored, then a prefix max per row and
 * segment: rows x groups doubles, at most a quarter of p_int8's bytes (M
 * doubles a group against M x K bytes). It replaced a rescan from the
 * segment's start by each chunk's rows, quadratic in the context: a
 * decode over 32768 keys (Qwen3.5-27B, V per_channel, 64 chunks) scored
 * 6 million keys for its 786432.
 */
struct pv_maxima {
	int K;
	size_t *base;	/* [S] sequence s's first entry: [T][Hq][groups] */
	double *mx;
};

static void pv_maxima_free(struct pv_maxima *pm)
{
	free(pm->base), free(pm->mx);
	pm->base = NULL, pm->mx = NULL;
}

/* Each group's own max per row, for the groups of sequence s. */
static int pv_maxima_groups(const struct fs_case *c, const struct fs_inputs *in, int s,
			    struct pv_maxima *pm)
{
	int n = c->seqs[s].context, K = pm->K, ng = slack_groups(c, n, K), D = in->D;
	int G = c->q_heads / c->kv_heads, bad = 0;
	int kdot = D % 32 == 0 && D <= 1024;	/* dot_i8's domain */
	double *mx = &pm->mx[pm->base[s]];

#pragma omp parallel reduction(+ : bad)
	{
		int8_t *kg = malloc((size_t)K * D);
		int *blk = malloc((size_t)K * sizeof(int));

		bad += !kg || !blk;
#pragma omp for schedule(dynamic, 1)
		for (long x = 0; x < (long)ng * in->Hkv; x++) {
			int gi = (int)(x / in->Hkv), g = (int)(x % in->Hkv), kb = 0, hi = 0;

			if (!kg || !blk)
				continue;
			if (!slack_group(c, n, K, gi, &kb, &hi))
				hi = kb;
			for (int j = kb; j < hi; j++) {
				blk[j - kb] = pv_block(in, s, j);
				if (kdot && blk[j - kb] >= 0)
					ref_k_row(in, s, g, j, &kg[(size_t)(j - kb) * D]);
			}
			for (int t = 0; t < in->T; t++)
				for (int qh = g * G; qh < (g + 1) * G; qh++) {
					size_t qi = ((size_t)s * in->T + t) * in->Hq + qh;
					int qpos = t < c->seqs[s].tokens ? in->q_pos[s * in->T + t] : -1;
					double best = -INFINITY;

					for (int j = kb; j < hi; j++) {
						double v;

						if (blk[j - kb] < 0 || !pv_visible(c, qpos, j))
							continue;
						v = pv_sc(c, in, kdot ? dot_i8(&in->q_int8[qi * D],
									       &kg[(size_t)(j - kb) * D], D) :
								  ref_acc(c, in, s, t, qh, j, -1),
							  qi, pv_sk(c, in, blk[j - kb], j, g));
						if (v > best)
							best = v;
					}
					mx[((size_t)t * in->Hq + qh) * ng + gi] = best;
				}
		}
		free(kg), free(blk);
	}
	return bad ? -1 : 0;
}

static int pv_maxima_build(const struct fs_case *c, const struct fs_inputs *in, int K,
			   struct pv_maxima *pm)
{
	size_t total;

	pm->K = K;
	pm->mx = NULL;
	pm->base = slack_bases(c, in, K, (size_t)in->T * in->Hq, &total);
	if (!pm->base)
		return -1;
	pm->mx = malloc((total ? total : 1) * sizeof(double));
	if (!pm->mx)
		goto fail;
	for (int s = 0; s < in->S; s++) {
		int n = c->seqs[s].context, ng = slack_groups(c, n, K);
		int seg = c->segment > 0 ? c->segment : n, gps = (seg + K - 1) / K;

		if (pv_maxima_groups(c, in, s, pm))
			goto fail;
		/* each group's max -> the max of the groups before it */
#pragma omp parallel for schedule(static)
		for (long r = 0; r < (long)in->T * in->Hq; r++) {
			double *row = &pm->mx[pm->base[s] + (size_t)r * ng], run = -INFINITY;

			for (int gi = 0; gi < ng; gi++) {
				double v = row[gi];

				if (gi % gps == 0)
					run = -INFINITY;
				row[gi] = run;
				run = v > run ? v : run;
			}
		}
	}
	return 0;
fail:
	pv_maxima_free(pm);
	return -1;
}

/* The max of row (s, t, qh)'s visible scores over keys [lo, kb) of its
 * segment (lo its start): the table's at kb's group, and the keys of
 * that group before kb for a kb off the groups' grid (a dump may put
 * one there). */
static double pv_maxima_at(const struct fs_case *c, const struct fs_inputs *in,
			   const struct pv_maxima *pm, int s, int t, int qh, int kvh,
			   int qpos, int lo, int kb)
{
	int n = c->seqs[s].context, K = pm->K, ng = slack_groups(c, n, K);
	int seg = c->segment > 0 ? c->segment : n, gps = (seg + K - 1) / K;
	int gk = (kb - lo) / K;
	double m = pm->mx[pm->base[s] + ((size_t)t * in->Hq + qh) * ng + lo / seg * gps + gk];

	for (int j = lo + gk * K; j < kb; j++) {
		double x = pv_score(c, in, s, t, qh, kvh, qpos, j);

		if (x > m)
			m = x;
	}
	return m;
}

/* A thread's scratch for pv_group. */
struct pv_work {
	int8_t *P;	/* [M][K] the golden's Pq, by key */
	double *Wq;	/* [M][K] the reference's Pq (-1: masked) */
	double *Wlo, *Whi;	/* [M][K] the Pq range of f32 steps (pv_range) */
	int *qrow;	/* [M] */
	int *blk;	/* [K] stored block row of each key, -1 past the context */
	int8_t *vg;	/* [K][D] the group's V, 0 for a key with no block */
	int8_t *kg;	/* [K][D] the group's K rows (ref_k_row), for dot_i8 */
	int32_t *want;	/* [M][D] the exact product of P and vg */
	const struct pv_maxima *pm;	/* NULL: not built yet (V per token) */
	int redo;	/* a row needed pm, which was NULL: run the chunk again */
};

/*
 * want[m][d] = sum over keys j of P[m][j] * V[j][d], exact in int32
 * (|P V| <= 2^14, K <= 256 keys: below 2^22). V of the group's keys read
 * once into vg, [key][d], rather than once per C slot: the kv head is the
 * group's (every row of a decode or a prefill tile has the tile's), and
 * a key past the context or without a block adds nothing, as in the
 * per-slot sum this replaces (an int32 sum is the same in any order).
 */
static void pv_product(const struct fs_inputs *in, const struct ref_pv_golden *g,
		       int kb, int kvh, struct pv_work *w)
{
	int K = g->K, D = in->D;

	for (int j = 0; j < K; j++) {
		int8_t *vj = &w->vg[(size_t)j * D];

		if (w->blk[j] < 0) {
			memset(vj, 0, (size_t)D);
			continue;
		}
		for (int d = 0; d < D; d++)
			vj[d] = pv_v(in, w->blk[j], kb + j, kvh, d);
	}
	for (int m = 0; m < g->M; m++) {
		int32_t *wm = &w->want[(size_t)m * D];

		memset(wm, 0, (size_t)D * sizeof(int32_t));
		for (int j = 0; j < K; j++) {
			int32_t p = w->P[m * K + j];
			const int8_t *vj = &w->vg[(size_t)j * D];

			if (!p)
				continue;
			/* each d its own exact sum: vectors across d */
#pragma omp simd
			for (int d = 0; d < D; d++)
				wm[d] += p * vj[d];
		}
	}
}

/*
 * The Pq values the correct kernel's f32 steps can give each key of a
 * row, [lo[j], hi[j]], from the row's double scores sc (-inf: masked),
 * its keys' V scales sv (NULL: V per_channel, P' = clip P) and M, the
 * kernel's running max. Each step widens an interval around the exact
 * value (u = 2^-24; an f32 result that is subnormal also has an absolute
 * error of half its smallest step, 2^-150):
 *
 *   exponent  s_j - M: each score within 4u of itself (compare.c), their
 *             f32 difference rounded once: 4u (|s_j| + |M|) + u |s_j - M|
 *   P_j       fs_expf, half an ulp: (1 +- u) and +- 2^-150
 *   P'_j      P_j sV_j (or clip P_j) in f32: (1 +- u) and +- 2^-150
 *   sP        max P' / clip, the same (an sP of 0 gives Pq 0)
 *   Pq_j      round(P'_j / sP), the quotient (1 +- u), rounding monotone
 *
 * Where P' is normal the range is the exact value's step or the one
 * beside it. Where the running max is far above the row's keys (about
 * 87 for f32), P underflows and the range grows towards [0, clip]: e.g.
 * a group 171 below the max gives P = 0 in f32, all Pq 0, where the
 * exact ratio says 127.
 */
#define PV_U 0x1p-24
#define PV_TINY 0x1p-150

static double pv_clamp_round(double x, const struct fs_case *c)
{
	return pv_round(x < 0 ? 0 : x > c->clip ? c->clip : x, c->rounding);
}

static void pv_range(const struct fs_case *c, const double *sc, const double *sv,
		     int K, double M, double *lo, double *hi)
{
	const double u = PV_U, tiny = PV_TINY;
	double lmax = 0, hmax = 0, splo, sphi;

	for (int j = 0; j < K; j++) {
		double e, a, b, f;

		lo[j] = hi[j] = 0;
		if (sc[j] == -INFINITY)
			continue;
		e = 4 * u * (fabs(sc[j]) + fabs(M)) + u * fabs(sc[j] - M);
		a = dm_exp(sc[j] - M - e) * (1 - u) - tiny;
		b = dm_exp(sc[j] - M + e) * (1 + u) + tiny;
		f = sv ? sv[j] : c->clip;
		a = a * f * (1 - u) - tiny;
		lo[j] = a > 0 ? a : 0;
		hi[j] = b * f * (1 + u) + tiny;
		lmax = lo[j] > lmax ? lo[j] : lmax;
		hmax = hi[j] > hmax ? hi[j] : hmax;
	}
	splo = lmax / c->clip * (1 - u) - tiny;
	sphi = hmax / c->clip * (1 + u) + tiny;
	for (int j = 0; j < K; j++) {
		if (sc[j] == -INFINITY)
			continue;
		if (sv && splo <= 0) {		/* sP may be 0 or any tiny value */
			lo[j] = 0, hi[j] = c->clip;
			continue;
		}
		if (sv)
			lo[j] = lo[j] / sphi * (1 - u), hi[j] = hi[j] / splo * (1 + u);
		lo[j] = pv_clamp_round(lo[j], c);
		hi[j] = pv_clamp_round(hi[j], c);
	}
}

/* The tolerance of got around want: one step (a rounding boundary that
 * f32 P crossed), or to the edge of [lo, hi] on got's side. */
static double pv_tol(double got, double want, double lo, double hi)
{
	double t = got >= want ? hi - want : want - lo;

	return t > 1 ? t : 1;
}

/* Whether any unmasked key of a row's golden Pq is out of tolerance. */
static int pv_row_bad(const int8_t *P, const double *want, const double *lo,
		      const double *hi, int K)
{
	for (int j = 0; j < K; j++)
		if (want[j] >= 0 && fabs(P[j] - want[j]) > pv_tol(P[j], want[j], lo[j], hi[j]))
			return 1;
	return 0;
}

/* One group: its p_int8 and pv_acc against the reference. */
static void pv_group(const struct fs_case *c, const struct fs_inputs *in,
		     const struct ref_pv_golden *g, const int *key, size_t gi,
		     struct ref_pv_stat *pq, struct ref_pv_stat *acc, struct pv_work *w)
{
	const int32_t *tl = &g->pv_tiles[gi * 5];
	const int8_t *pa = &g->p_int8[gi * (size_t)g->W * g->EA];
	int s = tl[0], kb = tl[3], K = g->K, ctx = c->seqs[s].context;
	int hi = c->segment > 0 ? (kb / c->segment + 1) * c->segment : ctx;
	int8_t *P = w->P;
	double *Wq = w->Wq;
	int *qrow = w->qrow, kvg = c->mode == MODE_DECODE ? tl[1] :
				  tl[1] / (c->q_heads / c->kv_heads);
	int kdot = in->D % 32 == 0 && in->D <= 1024;	/* dot_i8's domain */
	int lo_key = c->segment > 0 ? kb / c->segment * c->segment : 0;

	if (hi > ctx)
		hi = ctx;
	/* the stored block of each key, looked up once per group */
	for (int j = 0; j < K; j++)
		w->blk[j] = kb + j < ctx ? pv_block(in, s, kb + j) : -1;
	/* K of the group's keys once, each row's acc then dot_i8 of its Q and
	 * a K row: ref_acc's exact int32, which it computes per (row, key)
	 * (dot_i8 takes whole 32s of dims, else ref_acc itself) */
	for (int j = 0; kdot && j < K; j++)
		if (kb + j < hi && w->blk[j] >= 0)
			ref_k_row(in, s, kvg, kb + j, &w->kg[(size_t)j * in->D]);
	for (int m = 0; m < g->M; m++) {
		int t = 0, qh = 0, kvh = 0, pad = pv_row_of(c, tl, g->M, m, &t, &qh, &kvh);
		int qpos = pad ? -1 : in->q_pos[s * in->T + t];
		double sc[256], pp[256], sv[256], mx = -INFINITY, pmax = 0;
		double *lo = &w->Wlo[m * K], *up = &w->Whi[m * K];
		int chan = in->v_scale_ch && !pad;	/* under the running max */
		size_t qi = ((size_t)s * in->T + t) * in->Hq + qh;

		/* the golden's Pq of row m, by the slots' labels */
		for (int j = 0; j < K; j++)
			P[m * K + j] = 0;
		for (int sl = 0; sl < g->W * g->EA; sl++)
			if (g->a_row[sl] == m)
				P[m * K + key[sl]] = pa[sl];
		/* a decode row repeating an earlier row's q head: its Pq */
		qrow[m] = pad ? -1 : t * in->Hq + qh;
		for (int m2 = 0; m2 < m && !pad; m2++)
			if (qrow[m2] == qrow[m]) {
				memcpy(&Wq[m * K], &Wq[m2 * K], (size_t)K * sizeof(double));
				memcpy(lo, &w->Wlo[m2 * K], (size_t)K * sizeof(double));
				memcpy(up, &w->Whi[m2 * K], (size_t)K * sizeof(double));
				pad = 2;	/* not a padding row: judged below */
				break;
			}
		for (int j = 0; j < K && pad != 2; j++) {
			int kj = kb + j, blk = kj < hi ? w->blk[j] : -1;

			sc[j] = -INFINITY;
			if (pad || blk < 0 || !pv_visible(c, qpos, kj))
				continue;
			sc[j] = pv_sc(c, in, kdot ? dot_i8(&in->q_int8[qi * in->D],
							   &w->kg[(size_t)j * in->D], in->D) :
					  ref_acc(c, in, s, t, qh, kj, -1),
				      qi, pv_sk(c, in, blk, kj, kvh));
			if (sc[j] > mx)
				mx = sc[j];
		}
		if (chan) {	/* the running max: before the group, and in it */
			double M = pv_maxima_at(c, in, w->pm, s, t, qh, kvh, qpos, lo_key, kb);

			if (M > mx)
				mx = M;
		}
		for (int j = 0; j < K && pad != 2; j++) {
			int kj = kb + j;

			pp[j] = 0;
			sv[j] = 1;
			if (sc[j] == -INFINITY)
				continue;
			/* per_channel: p itself, over the fixed scale 1 / clip */
			if (!in->v_scale_ch)
				sv[j] = in->v_scale[pv_ts(in, w->blk[j], kj, kvh)];
			pp[j] = dm_exp(sc[j] - mx) * sv[j];
			if (pp[j] > pmax)
				pmax = pp[j];
		}
		if (chan)
			pmax = 1;
		for (int j = 0; j < K && pad != 2; j++)
			/* -1 marks a masked key, for the rows that repeat this one */
			Wq[m * K + j] = sc[j] == -INFINITY ? -1 :
					pmax > 0 ? pv_round(c->clip * pp[j] / pmax, c->rounding) : 0;
		if (!pad) {
			pv_range(c, sc, chan ? NULL : sv, K, mx, lo, up);
			/* V per token: mx, the group's own max, stands for the
			 * kernel's running max, which cancels in P' / max P' until
			 * P underflows; a key out of range under it is judged
			 * again under the true running max (pv_maxima_at), which
			 * only underflow can make differ. Without the table yet,
			 * the chunk runs again once it is made. */
			if (!chan && kb > lo_key && pv_row_bad(P + m * K, Wq + m * K, lo, up, K)) {
				double M;

				if (!w->pm) {
					w->redo = 1;
					continue;
				}
				M = pv_maxima_at(c, in, w->pm, s, t, qh, kvh, qpos, lo_key, kb);
				if (M > mx)
					pv_range(c, sc, sv, K, M, lo, up);
			}
		}
		for (int j = 0; j < K && pad != 1; j++) {
			double want = Wq[m * K + j] < 0 ? 0 : Wq[m * K + j];
			double d = fabs(P[m * K + j] - want);

			/* a masked key or a padding row must be exactly 0; one
			 * step is a rounding boundary crossed by f32 P */
			pv_note(pq, (long)gi, 0, 1, m, j, s, t, qh, kb + j, -1, P[m * K + j], want,
				Wq[m * K + j] < 0 ? 0 : pv_tol(P[m * K + j], want, lo[j], up[j]));
			if (d == 1 && Wq[m * K + j] >= 0)
				pq->off_by_one++;
		}
		if (pad != 1)
			continue;
		for (int j = 0; j < K; j++) {
			pv_note(pq, (long)gi, 0, 1, m, j, s, t, qh, kb + j, -1, P[m * K + j], 0, 0);
			Wq[m * K + j] = -1;
			P[m * K + j] = 0;	/* padding rows: their acc must be 0 */
		}
	}
	/* the kv head of every row is the tile's (pv_row_of's kvh) */
	pv_product(in, g, kb, kvg, w);
	for (int dt = 0; dt < g->DT; dt++)
		for (int sl = 0; sl < g->W * g->EC; sl++) {
			int m = g->c_row[sl], d = dt * g->N + g->c_col[sl];
			int t = 0, qh = 0, kvh = 0, pad = pv_row_of(c, tl, g->M, m, &t, &qh, &kvh);
			int32_t want = w->want[(size_t)m * in->D + d];
			int32_t got = g->pv_acc[(gi * g->DT + dt) * g->W * g->EC + sl];

			pv_note(acc, (long)gi, sl, g->EC, m, g->c_col[sl], s, pad ? -1 : t,
				pad ? -1 : qh, kb, d, got, (double)want, got != want);
		}
}

static void stat_add(struct ref_pv_stat *a, const struct ref_pv_stat *b)
{
	if (b->mismatches && !a->mismatches) {
		long cm = a->compared, om = a->off_by_one;
		double mx = a->max_abs_err, mt = a->max_err_tol;

		*a = *b;
		a->compared += cm, a->off_by_one += om;
		a->max_abs_err = mx > b->max_abs_err ? mx : b->max_abs_err;
		a->max_err_tol = mt > b->max_err_tol ? mt : b->max_err_tol;
		return;
	}
	a->compared += b->compared;
	a->mismatches += b->mismatches;
	a->off_by_one += b->off_by_one;
	if (b->max_abs_err > a->max_abs_err)
		a->max_abs_err = b->max_abs_err;
	if (b->max_err_tol > a->max_err_tol)
		a->max_err_tol = b->max_err_tol;
}

#define PV_CHUNK 64	/* groups per chunk: chunks combine in order */

/* Chunk ch of the groups, into cp and ca: 0, 1 when a row needed pm
 * and pm is NULL, -1 out of memory. */
static int pv_chunk(const struct fs_case *c, const struct fs_inputs *in,
		    const struct ref_pv_golden *g, const int *key, const struct pv_maxima *pm,
		    size_t ch, struct ref_pv_stat *cp, struct ref_pv_stat *ca)
{
	struct pv_work w = { .pm = pm };
	int rc = -1;

	w.P = malloc((size_t)g->M * g->K);
	w.Wq = malloc((size_t)g->M * g->K * sizeof(double));
	w.Wlo = malloc((size_t)g->M * g->K * sizeof(double));
	w.Whi = malloc((size_t)g->M * g->K * sizeof(double));
	w.qrow = malloc((size_t)g->M * sizeof(int));
	w.blk = malloc((size_t)g->K * sizeof(int));
	w.vg = malloc((size_t)g->K * in->D);
	w.want = malloc((size_t)g->M * in->D * sizeof(int32_t));
	w.kg = malloc((size_t)g->K * in->D);
	if (w.P && w.Wq && w.Wlo && w.Whi && w.qrow && w.blk && w.vg && w.want && w.kg) {
		for (size_t i = ch * PV_CHUNK; i < g->n && i < (ch + 1) * PV_CHUNK && !w.redo; i++)
			pv_group(c, in, g, key, i, cp, ca, &w);
		rc = w.redo;
	}
	free(w.P), free(w.Wq), free(w.Wlo), free(w.Whi), free(w.qrow), free(w.blk), free(w.vg), free(w.want);
	free(w.kg);
	return rc;
}

int ref_pv_check(const struct fs_case *c, const struct fs_inputs *in,
		 const struct ref_pv_golden *g, struct ref_pv_stat *pq,
		 struct ref_pv_stat *acc, char *msg, size_t msglen)
{
	size_t nch = (g->n + PV_CHUNK - 1) / PV_CHUNK;
	struct ref_pv_stat *cp, *ca;
	struct pv_maxima pm = { 0 };
	int *key, bad = 0;
	unsigned char *redo;

	memset(pq, 0, sizeof(*pq));
	memset(acc, 0, sizeof(*acc));
	if (g->DT * g->N != in->D) {
		snprintf(msg, msglen, "pv: %d column tiles of %d are not head_dim %d",
			 g->DT, g->N, in->D);
		return -1;
	}
	if (g->K > 256 || g->K % g->N) {
		snprintf(msg, msglen, "pv: a group of %d keys is not whole tiles of %d (at most 256)",
			 g->K, g->N);
		return -1;
	}
	for (size_t i = 0; i < g->n; i++) {
		const int32_t *tl = &g->pv_tiles[i * 5];

		if (tl[0] < 0 || tl[0] >= c->n_seqs || tl[1] < 0 ||
		    tl[1] >= (c->mode == MODE_DECODE ? c->kv_heads : c->q_heads) ||
		    tl[3] < 0 || tl[3] >= c->seqs[tl[0]].context || tl[4] < 0) {
			snprintf(msg, msglen,
				 "pv_tiles[%zu] = (%d, %d, %d, %d, %d) is out of the case's range",
				 i, tl[0], tl[1], tl[2], tl[3], tl[4]);
			return -1;
		}
	}
	key = malloc((size_t)g->W * g->EA * sizeof(int));
	cp = calloc(nch ? nch : 1, sizeof(*cp));
	ca = calloc(nch ? nch : 1, sizeof(*ca));
	redo = calloc(nch ? nch : 1, 1);
	if (!key || !cp || !ca || !redo || pv_labels(c, g, key)) {
		snprintf(msg, msglen, key && cp && ca && redo ?
			 "pv: an A slot holds no key the regroup can name (the profile's C registers do not hold its A rows)" :
			 "pv: out of memory");
		free(key), free(cp), free(ca), free(redo);
		return -1;
	}
	/* V per_channel needs the running maxima for every row; V per token
	 * only where P underflows: chunks that found such a row (redo) run
	 * again once they are made, from a zeroed count (the same verdicts
	 * as a first pass with them: they are the same numbers) */
	if (in->v_scale_ch && pv_maxima_build(c, in, g->K, &pm))
		bad = 1;
	for (int pass = 0; pass < 2 && !bad; pass++) {
		int again = 0;

#pragma omp parallel for schedule(dynamic, 1) reduction(+ : bad, again)
		for (size_t ch = 0; ch < nch; ch++) {
			int rc;

			if (pass && !redo[ch])
				continue;
			memset(&cp[ch], 0, sizeof(cp[ch]));
			memset(&ca[ch], 0, sizeof(ca[ch]));
			rc = pv_chunk(c, in, g, key, pm.mx ? &pm : NULL, ch, &cp[ch], &ca[ch]);
			bad += rc < 0;
			redo[ch] = rc > 0;
			again += rc > 0;
		}
		if (!again || bad)
			break;
		if (pv_maxima_build(c, in, g->K, &pm))
			bad = 1;
	}
	pv_maxima_free(&pm);
	for (size_t ch = 0; ch < nch; ch++) {
		stat_add(pq, &cp[ch]);
		stat_add(acc, &ca[ch]);
	}
	free(key), free(cp), free(ca), free(redo);
	if (bad) {
		snprintf(msg, msglen, "pv: out of memory");
		return -1;
	}
	return 0;
}

/* V[j][g][0..D) of sequence s at stride BS from its first byte. */
static const int8_t *slack_v(const struct fs_inputs *in, int s, int j, int g)
{
	return &in->v_cache_i8[(size_t)pv_block(in, s, j) * inputs_block_elems(in) +
			       (size_t)g * in->D * in->BS + j % in->BS];
}

int ref_pv_vsum_build(const struct fs_case *c, const struct fs_inputs *in, int K,
		      struct ref_pv_vsum *vs)
{
	size_t total;

	memset(vs, 0, sizeof(*vs));
	vs->K = K;
	vs->base = slack_bases(c, in, K, 1, &total);
	if (!vs->base)
		return -1;
	vs->sum = malloc((total ? total : 1) * (size_t)in->Hkv * in->D * sizeof(uint16_t));
	if (!vs->sum) {
		ref_pv_vsum_free(vs);
		return -1;
	}
	for (int s = 0; s < in->S; s++) {
		int n = in->context_lens[s], ng = slack_groups(c, n, K);

#pragma omp parallel for schedule(static)
		for (long x = 0; x < (long)ng * in->Hkv; x++) {
			int gi = (int)(x / in->Hkv), g = (int)(x % in->Hkv), kb, hi;
			uint16_t *sum = &vs->sum[((vs->base[s] + gi) * in->Hkv + g) * in->D];

			memset(sum, 0, (size_t)in->D * sizeof(*sum));
			if (!slack_group(c, n, K, gi, &kb, &hi))
				continue;
			for (int j = kb; j < hi; j++) {
				const int8_t *v;

				if (pv_block(in, s, j) < 0)
					continue;
				v = slack_v(in, s, j, g);
				for (int d = 0; d < in->D; d++)
					sum[d] += (uint16_t)abs(v[(size_t)d * in->BS]);
			}
		}
	}
	return 0;
}

void ref_pv_vsum_free(struct ref_pv_vsum *vs)
{
	free(vs->base);
	free(vs->sum);
	memset(vs, 0, sizeof(*vs));
}

/*
 * Per group: step (its largest p sV over clip; per_channel the running
 * max's p over clip) times S[d] = sum of |Vq[j][d]| over the group's keys
 * with p > 0, an exact integer (at most K x 128 < 2^16), times sV[d] per
 * channel. A group whose keys all have p > 0 (every group away from a
 * mask's edge) takes S from vs, made once for all rows; a row then costs
 * D terms a group instead of K x D.
 */
void ref_pv_out_slack(const struct fs_case *c, const struct fs_inputs *in,
		      const struct ref_pv_vsum *vs, int s, int qh, const double *prob,
		      int n, int K, double *slack)
{
	int g = qh / (c->q_heads / c->kv_heads), D = in->D, BS = in->BS;
	int seg = c->segment > 0 ? c->segment : n, ng = slack_groups(c, n, K);
	const float *sv = in->v_scale_ch ? &in->v_scale_ch[(size_t)g * D] : NULL;
	uint32_t part[CASE_MAX_HEAD_DIM];
	double run = 0;	/* per_channel: the largest p so far in the segment */

	for (int d = 0; d < D; d++)
		slack[d] = 0;
	for (int gi = 0; gi < ng; gi++) {
		int kb, hi, all = 1;
		double step = 0;

		if (!slack_group(c, n, K, gi, &kb, &hi))
			continue;
		if (kb % seg == 0)
			run = 0;
		for (int j = kb; j < hi; j++)
			if (prob[j] > 0) {
				int blk = pv_block(in, s, j);
				double x = prob[j] * (in->v_scale_ch ? 1.0 :
						      in->v_scale[pv_ts(in, blk, j, g)]);

				if (x > step)
					step = x;
			} else {
				all = 0;
			}
		/* per_channel: a step of 1/clip in units of the running
		 * max's p, times |Vq| sV[d] */
		if (in->v_scale_ch && step < run)
			step = run;
		run = step;
		if (step == 0)
			continue;
		step /= c->clip;
		if (all && vs && vs->sum && vs->K == K) {
			const uint16_t *sum = &vs->sum[((vs->base[s] + gi) * in->Hkv + g) * D];

			for (int d = 0; d < D; d++)
				part[d] = sum[d];
		} else {
			for (int d = 0; d < D; d++)
				part[d] = 0;
			for (int j = kb; j < hi; j++)
				if (prob[j] > 0) {
					const int8_t *v = slack_v(in, s, j, g);

					for (int d = 0; d < D; d++)
						part[d] += (uint32_t)abs(v[(size_t)d * BS]);
				}
		}
		for (int d = 0; d < D; d++)
			slack[d] += step * (double)part[d] * (sv ? (double)sv[d] : 1.0);
	}
}
