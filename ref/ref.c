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
 *   V[j][g][d]            v_cache[blk][g][d][slot]   (* v_scale[blk][slot][g];
 *                          per_channel: * v_scale_ch[g][d], pvpass.c)
 *                         (q8_0, q4_0: (v - 0 or 8) * f16
 *                          v_scale16[blk][slot][g][d / 32], ref_pool_vq)
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
 * and kv head are done together, in passes, each an "omp for" over
 * independent pieces, each timed (ref_stage_seconds, for make bench):
 *   exact    key pieces: gather each key's int8 K once and take its
 *            exact int32 product with every row that sees it, 16 keys x
 *            6 rows at a time by vpdpbusd (tile_i8; dot_i8 per pair for
 *            per_block32 scales or without VNNI);
 *   q.k      key pieces: each key's float K made once (kept, or made
 *            again: inputs_kv_get, the pass's multipliers and a run's
 *            row keys worked out once) and transposed into doubles 8 x 8
 *            in registers (tile_kt), then
 *            fused double dot products, 6 rows x 16 keys a call
 *            (tile_qk), d in order;
 *   softmax  rows: max, exp and the sum in key order;
 *   PV       head-dim pieces, twice: the quantized V (its int8 times its
 *            scale, exact in double) for o and sum p |v|, 2 rows a call
 *            (tile_pvq), then the float V for the float path's o, 4 rows
 *            a call (tile_pvf); each row adds fma(p, v, o) in key order
 *            (ref/pvpass.c).
 * Rows of a PV tile whose visible keys differ are cut where a run starts
 * or ends (ref_segments), so a tile never adds a key a row does not see
 * and each row's keys still come in order. No pass sums across the
 * pieces it splits, and a tile only chooses which independent sums share
 * a load, so every number is the one the plain loops give, with any
 * number of threads.
 *
 * The float path is in double, not f32, though f32 would halve its
 * time: it is the baseline the INT8 error is measured against, and an
 * f32 PV over n keys may be off by n * 2^-24 relative in the worst case
 * (2^-7 at 131072 keys), the size of the INT8 errors it measures; and
 * the reports' figures (cosines, KLD, tolerances) would move.
 */
#include "ref.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "dmath.h"
#include "dot.h"
#include "pool.h"
#include "pvpass.h"
#include "tile.h"

#define REF_MAX_D 1024	/* largest head_dim a case may have */
#define REF_SCORE_KEYS 256	/* keys per piece of the scores passes */

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
size_t ref_blk0(const struct fs_inputs *in, int blk)
{
	size_t dense = (size_t)in->Hkv * (size_t)in->D * (size_t)in->BS;

	return (size_t)blk * (in->BSTR ? in->BSTR : dense);
}

/* Block and slot of key j of sequence s: *blk is the row of the stored
 * arrays that holds its physical block (pool.h; the block itself in a
 * dense pool), so every [blk] (here and in pvpass.c) indexes what is
 * stored. */
void ref_page(const struct fs_inputs *in, int s, int j, int *blk, int *slot)
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

/* K of kv head g in slot `slot` of stored block blk: k[D]. */
static void ref_k_copy(const struct fs_inputs *in, int g, int blk, int slot,
		       int8_t *k)
{
	int D = in->D, BS = in->BS;
	const int8_t *src = in->k_cache + ref_blk0(in, blk) +
			    ((size_t)g * (D / 16) * BS + slot) * 16;

	for (int d16 = 0; d16 < D / 16; d16++)
		memcpy(k + 16 * d16, src + (size_t)d16 * BS * 16, 16);
}

void ref_k_row(const struct fs_inputs *in, int s, int g, int j, int8_t *k)
{
	int blk, slot;

	if (ref_pool_freed(in, s, j)) {
		memset(k, 0, (size_t)in->D);	/* a freed block: loads 0 */
		return;
	}
	ref_page(in, s, j, &blk, &slot);
	ref_k_copy(in, g, blk, slot, k);
}

void ref_k_rows(const struct fs_inputs *in, int s, int g, int j0, int n,
		int8_t *k)
{
	int plb = -1, blk = 0;

	for (int i = 0; i < n; i++) {
		int j = j0 + i, slot;

		if (ref_pool_freed(in, s, j)) {
			memset(k + (size_t)i * in->D, 0, (size_t)in->D);
			continue;
		}
		/* one lookup a block: a sparse pool's is a binary search */
		if (j / in->BS != plb) {
			ref_page(in, s, j, &blk, &slot);
			plb = j / in->BS;
		}
		ref_k_copy(in, g, blk, j % in->BS, k + (size_t)i * in->D);
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
void ref_range(const struct fs_case *c, const struct fs_inputs *in, int s,
	       int t, int *lo, int *hi)
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

/* Quantized score from the exact product acc, scale index ts, for one
 * scale per key (all but per_block32). */
static double ref_score_acc(const struct fs_case *c, const struct fs_inputs *in,
			    int32_t acc, size_t ts, double sq)
{
	/* ts = (blk * BS + slot) * Hkv + g, so g = ts % Hkv */
	double sk = c->k_scale == KSCALE_PER_TENSOR ? in->k_scale[0]
		  : c->k_scale == KSCALE_PER_HEAD ? in->k_scale[ts % (size_t)in->Hkv]
						  : in->k_scale[ts];

	return (double)acc * sq * sk * c->softmax_scale;
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
	return ref_score_acc(c, in, dot_i8(q, k, D), ts, sq);
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

/* Seconds each stage has taken, over every call (ref.h); only the master
 * thread adds, after the barrier that ends the stage's loop. The master
 * thread of a team is the thread that called ref_groups_compute, so a
 * thread-local total is the caller's own: two programs' threads that
 * run cases side by side through the library never share it. */
static _Thread_local double ref_stage_s[REF_NSTAGE];

static double ref_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void ref_stage_end(enum ref_stage st, double *t)
{
	double now = ref_now();

	ref_stage_s[st] += now - *t;
	*t = now;
}

/* The master thread's own time inside a stage (REGEN_K, REGEN_V), from
 * ref_sub_begin to ref_sub_end; 0 from another thread: not timed. */
double ref_sub_begin(void)
{
#ifdef _OPENMP
	if (omp_get_thread_num() != 0)
		return 0;
#endif
	return ref_now();
}

void ref_sub_end(enum ref_stage st, double t0)
{
	if (t0 != 0)
		ref_stage_s[st] += ref_now() - t0;
}

/*
 * Exact scores, keys [j0, j1): the quantized score of every row of grp
 * (the int32 products, the scales, then the logit), -inf where the row
 * does not see the key. Each key's K row is gathered from its page once
 * for every row.
 */
static void ref_pass_exact_pairs(const struct fs_case *c, const struct fs_inputs *in,
				 const struct ref_group *grp, int j0, int j1)
{
	int BS = in->BS, s = grp->s, g = grp->g;
	/* Without soft cap and ALiBi ref_logit is the identity: skip it. */
	int logit = c->soft_cap > 0 || c->alibi;
	int8_t kq[REF_MAX_D];

	for (int j = j0; j < j1; j++) {
		int blk, slot;
		size_t ts;

		ref_page(in, s, j, &blk, &slot);
		ts = ((size_t)blk * BS + slot) * in->Hkv + g;
		ref_k_row(in, s, g, j, kq);
		for (int r = 0; r < grp->rows; r++) {
			struct ref_row *rr = &grp->row[r];
			size_t qrow = ((size_t)s * in->T + grp->t[r]) * in->Hq + grp->qh[r];
			int qpos = in->q_pos[(size_t)s * in->T + grp->t[r]];
			int lo, hi;

			ref_range(c, in, s, grp->t[r], &lo, &hi);
			if (j < lo || j >= hi) {
				rr->score[j] = -INFINITY;
				continue;
			}
			rr->score[j] = ref_score_row(c, in, in->q_int8 + qrow * in->D, kq,
						     ts, in->q_scale[qrow]);
			if (logit)
				rr->score[j] = ref_logit(c, rr->score[j], c->alibi ?
							 ref_alibi_slope(grp->qh[r], in->Hq)
							 : 0, j - qpos);
		}
	}
}

/*
 * The same, TILE_QK_KEYS keys by TILE_QK_ROWS rows at a time through
 * tile_i8 (the CPU's int8 dot instruction), for one K scale per key:
 * the keys' bytes gathered once as k + 128, four dims to a dword.
 */
static void ref_pass_exact_tiles(const struct fs_case *c, const struct fs_inputs *in,
				 const struct ref_group *grp, int j0, int j1)
{
	int D = in->D, BS = in->BS, s = grp->s, g = grp->g;
	int logit = c->soft_cap > 0 || c->alibi;
	int8_t kq[REF_MAX_D];
	uint8_t kt[REF_MAX_D * TILE_QK_KEYS];
	size_t ts[TILE_QK_KEYS];
	int32_t *sq_all = malloc((size_t)grp->rows * sizeof(int32_t));
	int plb = -1, blk = 0;	/* the logical block last looked up, its page */

	if (!sq_all) {	/* no room for the row sums: the pairs one by one */
		ref_pass_exact_pairs(c, in, grp, j0, j1);
		return;
	}
	for (int r = 0; r < grp->rows; r++) {
		const int8_t *q = in->q_int8 + (((size_t)s * in->T + grp->t[r]) * in->Hq +
						grp->qh[r]) * D;
		int32_t sum = 0;

		for (int d = 0; d < D; d++)
			sum += q[d];
		sq_all[r] = sum;
	}
	for (int jb = j0; jb < j1; jb += TILE_QK_KEYS) {
		int nk = j1 - jb < TILE_QK_KEYS ? j1 - jb : TILE_QK_KEYS;

		for (int i = 0; i < TILE_QK_KEYS; i++) {
			int slot;

			if (i >= nk) {	/* a short last block: unused */
				memset(kq, 0, (size_t)D);
				ts[i] = 0;
			} else {
				/* the page once a block (ref_page: a sparse
				 * pool's lookup is a binary search), then the
				 * key's bytes from it (ref_k_row without the
				 * second lookup) */
				if ((jb + i) / BS != plb) {
					ref_page(in, s, jb + i, &blk, &slot);
					plb = (jb + i) / BS;
				}
				slot = (jb + i) % BS;
				ts[i] = ((size_t)blk * BS + slot) * in->Hkv + g;
				if (ref_pool_freed(in, s, jb + i))
					memset(kq, 0, (size_t)D);
				else
					ref_k_copy(in, g, blk, slot, kq);
			}
			for (int d = 0; d < D; d += 4) {
				uint32_t w4;

				memcpy(&w4, kq + d, 4);
				w4 ^= 0x80808080u;
				memcpy(kt + (size_t)d * TILE_QK_KEYS + 4 * i, &w4, 4);
			}
		}
		for (int r0 = 0; r0 < grp->rows; r0 += TILE_QK_ROWS) {
			int nr = grp->rows - r0 < TILE_QK_ROWS ? grp->rows - r0 : TILE_QK_ROWS;
			const int8_t *qr[TILE_QK_ROWS];
			int32_t sumq[TILE_QK_ROWS], acc[TILE_QK_ROWS][TILE_QK_KEYS];

			for (int u = 0; u < TILE_QK_ROWS; u++) {
				int r = r0 + (u < nr ? u : 0);
				size_t qrow = ((size_t)s * in->T + grp->t[r]) * in->Hq + grp->qh[r];

				qr[u] = in->q_int8 + qrow * D;
				sumq[u] = sq_all[r];
			}
			tile_i8(nr, qr, sumq, kt, D, acc);
			for (int u = 0; u < nr; u++) {
				int r = r0 + u;
				struct ref_row *rr = &grp->row[r];
				size_t qrow = ((size_t)s * in->T + grp->t[r]) * in->Hq + grp->qh[r];
				int qpos = in->q_pos[(size_t)s * in->T + grp->t[r]];
				double sq = in->q_scale[qrow], slope = c->alibi ?
					ref_alibi_slope(grp->qh[r], in->Hq) : 0;
				int lo, hi;

				ref_range(c, in, s, grp->t[r], &lo, &hi);
				for (int i = 0; i < nk; i++) {
					int j = jb + i;

					if (j < lo || j >= hi) {
						rr->score[j] = -INFINITY;
						continue;
					}
					rr->score[j] = ref_score_acc(c, in, acc[u][i], ts[i], sq);
					if (logit)
						rr->score[j] = ref_logit(c, rr->score[j], slope,
									 j - qpos);
				}
			}
		}
	}
	free(sq_all);
}

static void ref_pass_exact(const struct fs_case *c, const struct fs_inputs *in,
			   const struct ref_group *grp, int j0, int j1)
{
	if (c->k_scale != KSCALE_PER_BLOCK32 && tile_i8_fast())
		ref_pass_exact_tiles(c, in, grp, j0, j1);
	else
		ref_pass_exact_pairs(c, in, grp, j0, j1);
}

/*
 * Float-path scores, keys [j0, j1): q . k in double from the logical
 * BF16-rounded q and k (d in order, fused), TILE_QK_KEYS keys at a time:
 * their float K rows made once (kept, or made again by inputs_kv_get)
 * and transposed into doubles, then tile_qk over the rows six at a time.
 * qd holds the group's q rows in double, [rows][D], made by the caller.
 */
static void ref_pass_qk_f(const struct fs_case *c, const struct fs_inputs *in,
			  const struct ref_group *grp, const double *qd, int j0,
			  int j1)
{
	int D = in->D, s = grp->s, g = grp->g;
	int logit = c->soft_cap > 0 || c->alibi;
	float kbuf[TILE_QK_KEYS * REF_MAX_D];	/* [TILE_QK_KEYS][D] */
	const float *kf[TILE_QK_KEYS];
	double kt[REF_MAX_D * TILE_QK_KEYS];
	uint64_t keys[TILE_QK_KEYS];
	struct inputs_kv kv;	/* K's multipliers and stream key, once */

	inputs_kv_init(&kv, c, in, 0);
	for (int jb = j0; jb < j1; jb += TILE_QK_KEYS) {
		int nk = j1 - jb < TILE_QK_KEYS ? j1 - jb : TILE_QK_KEYS;

		double t0 = ref_sub_begin();

		inputs_kv_keys(&kv, s, jb, nk, g, keys);
		for (int i = 0; i < TILE_QK_KEYS; i++) {
			float *row = kbuf + (size_t)i * D;	/* D apart: few stack pages */

			if (i < nk) {
				kf[i] = inputs_kv_get(&kv, keys[i], s, jb + i, g, 0, D, row);
			} else {	/* a short last block: zeros, unused */
				memset(row, 0, (size_t)D * sizeof(float));
				kf[i] = row;
			}
		}
		tile_kt(kf, D, kt);	/* transposed in registers, 8 x 8 */
		ref_sub_end(REF_STAGE_REGEN_K, t0);
		for (int r0 = 0; r0 < grp->rows; r0 += TILE_QK_ROWS) {
			int nr = grp->rows - r0 < TILE_QK_ROWS ? grp->rows - r0 : TILE_QK_ROWS;
			const double *qr[TILE_QK_ROWS];
			double fo[TILE_QK_ROWS][TILE_QK_KEYS];

			for (int u = 0; u < TILE_QK_ROWS; u++)
				qr[u] = qd + (size_t)(r0 + (u < nr ? u : 0)) * D;
			tile_qk(nr, qr, kt, D, fo);
			for (int u = 0; u < nr; u++) {
				struct ref_row *rr = &grp->row[r0 + u];
				int t = grp->t[r0 + u];
				double slope = c->alibi ? ref_alibi_slope(grp->qh[r0 + u],
									  in->Hq) : 0;
				int qpos = in->q_pos[(size_t)s * in->T + t];
				int lo, hi;

				ref_range(c, in, s, t, &lo, &hi);
				for (int i = 0; i < nk; i++) {
					int j = jb + i;

					if (j < lo || j >= hi) {
						rr->score_f[j] = -INFINITY;
						continue;
					}
					rr->score_f[j] = fo[u][i] * c->softmax_scale;
					if (logit)
						rr->score_f[j] = ref_logit(c, rr->score_f[j],
									   slope, j - qpos);
				}
			}
		}
	}
}

/* prob = softmax(score) over the finite entries of score[0..n); the max
 * and the sum through *max and *sum. Only [lo, hi) can be finite: the
 * rest adds exact zeros to the sum, so it is skipped. The max, the exps,
 * the masking and the division go 8 at a time (tile.h, dm_exp_n: the
 * plain loops' bits); the sum stays one chain in key order. */
static void ref_softmax(const double *score, double *prob, int n, int lo,
			int hi, double *max, double *sum)
{
	double m = tile_max(score + lo, hi - lo), z = 0;

	for (int j = 0; j < lo; j++)
		prob[j] = 0;
	for (int j = hi; j < n; j++)
		prob[j] = 0;
	for (int j = lo; j < hi; j++)
		prob[j] = score[j] - m;
	dm_exp_n(prob + lo, prob + lo, hi - lo);
	/* masked: 0, even when m is -inf */
	tile_unmask(score + lo, prob + lo, hi - lo);
	for (int j = lo; j < hi; j++)
		z += prob[j];
	/* z is 0 only when no key is visible; a NaN in z stays NaN. */
	if (z == 0)
		for (int j = lo; j < hi; j++)
			prob[j] = 0;
	else
		tile_div(prob + lo, hi - lo, z);
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

void ref_stage_seconds(double out[REF_NSTAGE])
{
	for (int i = 0; i < REF_NSTAGE; i++)
		out[i] = ref_stage_s[i];
}

/* Threads of the team this call runs in (1 outside any). */
static int ref_team(void)
{
#ifdef _OPENMP
	return omp_get_num_threads();
#else
	return 1;
#endif
}

void ref_groups_compute(const struct fs_case *c, const struct fs_inputs *in,
			struct ref_group *grp, int n)
{
	int D = in->D, npiece, nrow, pvw, nslice;
	double t = ref_now();
	double *qd = NULL;	/* every row's float q in double, [nrow][D] */
	int oom = 0;

	assert(D <= REF_MAX_D && D % 16 == 0);
	if (n <= 0)
		return;
	/* PV pieces of 128 head-dim elements, or of 32 when that leaves
	 * fewer than 4 pieces a thread (a decode: 4 groups). The piece
	 * width decides only who computes a sum, never its terms or their
	 * order, so the thread count may choose it. */
	pvw = n * ((D + REF_PV_DIMS - 1) / REF_PV_DIMS) >= 4 * ref_team() ? REF_PV_DIMS
									  : TILE_SLICE;
	nslice = (D + pvw - 1) / pvw;
#pragma omp single copyprivate(qd, oom)
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
		qd = malloc((size_t)row * D * sizeof(double));
		oom = qd == NULL;
	}
	npiece = grp[n - 1].piece0 + (grp[n - 1].jhi - grp[n - 1].jlo +
				       REF_SCORE_KEYS - 1) / REF_SCORE_KEYS;
	nrow = grp[n - 1].row0 + grp[n - 1].rows;

#pragma omp for schedule(static)
	for (int p = 0; p < npiece; p++) {
		const struct ref_group *gr = &grp[ref_find(grp, n, p, 0)];
		int j0 = gr->jlo + (p - gr->piece0) * REF_SCORE_KEYS;

		ref_pass_exact(c, in, gr, j0, gr->jhi - j0 < REF_SCORE_KEYS
					      ? gr->jhi : j0 + REF_SCORE_KEYS);
	}
#pragma omp master
	ref_stage_end(REF_STAGE_EXACT, &t);

	/* q rows in double for tile_qk: exact, made once, not per key. */
#pragma omp for schedule(static)
	for (int i = 0; i < nrow; i++) {
		const struct ref_group *gr = &grp[ref_find(grp, n, i, 1)];
		int r = i - gr->row0;
		const float *q = in->q + (((size_t)gr->s * in->T + gr->t[r]) * in->Hq +
					  gr->qh[r]) * D;

		for (int d = 0; !oom && d < D; d++)
			qd[(size_t)i * D + d] = q[d];
	}
#pragma omp for schedule(static)
	for (int p = 0; p < npiece; p++) {
		const struct ref_group *gr = &grp[ref_find(grp, n, p, 0)];
		int j0 = gr->jlo + (p - gr->piece0) * REF_SCORE_KEYS;

		if (!oom)
			ref_pass_qk_f(c, in, gr, qd + (size_t)gr->row0 * D, j0,
				      gr->jhi - j0 < REF_SCORE_KEYS ? gr->jhi
								    : j0 + REF_SCORE_KEYS);
		else	/* no room for qd: the rows one at a time */
			for (int r = 0; r < gr->rows; r++) {
				struct ref_group one = *gr;
				double q1[REF_MAX_D];
				const float *q = in->q + (((size_t)gr->s * in->T + gr->t[r]) *
							  in->Hq + gr->qh[r]) * D;

				for (int d = 0; d < D; d++)
					q1[d] = q[d];
				one.rows = 1;
				one.t = gr->t + r;
				one.qh = gr->qh + r;
				one.row = gr->row + r;
				ref_pass_qk_f(c, in, &one, q1, j0, gr->jhi - j0 < REF_SCORE_KEYS
							       ? gr->jhi : j0 + REF_SCORE_KEYS);
			}
	}
#pragma omp master
	ref_stage_end(REF_STAGE_QK_F, &t);
#pragma omp for schedule(static)
	for (int i = 0; i < nrow; i++) {
		const struct ref_group *gr = &grp[ref_find(grp, n, i, 1)];

		ref_pass_softmax(c, in, gr, i - gr->row0);
	}
#pragma omp master
	ref_stage_end(REF_STAGE_SOFTMAX, &t);
#pragma omp for schedule(static)
	for (int p = 0; p < n * nslice; p++) {
		const struct ref_group *gr = &grp[p / nslice];
		int d0 = p % nslice * pvw;

		pvpass_quant(c, in, gr, d0, D - d0 < pvw ? D : d0 + pvw);
	}
#pragma omp master
	ref_stage_end(REF_STAGE_PV_Q, &t);
#pragma omp for schedule(static)
	for (int p = 0; p < n * nslice; p++) {
		const struct ref_group *gr = &grp[p / nslice];
		int d0 = p % nslice * pvw;

		pvpass_float(c, in, gr, d0, D - d0 < pvw ? D : d0 + pvw);
	}
#pragma omp master
	ref_stage_end(REF_STAGE_PV_F, &t);
#pragma omp for schedule(static)
	for (int i = 0; i < nrow; i++) {
		const struct ref_group *gr = &grp[ref_find(grp, n, i, 1)];
		struct ref_row *r = &gr->row[i - gr->row0];

		r->out_abs = 0;
		for (int d = 0; d < D; d++)
			if (r->out_absd[d] > r->out_abs)
				r->out_abs = r->out_absd[d];
	}
#pragma omp single
	free(qd);
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
