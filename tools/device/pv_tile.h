/*
 * pv_tile.h - the per-lane logic of the PV half of a paged INT8 attention
 * kernel with INT8 PV (case pv: {mode: int8}), the sibling of qk_tile.h:
 * shared by the CUDA harness (attn_sm80.cu: mma.m16n8k32 for PV as for
 * QK), the HIP one (hip/attn_mmac.hip) and the CPU twin (qk_cpu.c). Only
 * the matrix instruction differs between them; each calls these phases
 * in the order below, with a barrier where the line says so.
 *
 * The work: one wave per PV unit, a (sequence, head, row_base, row_tile)
 * of the golden's pv_tiles, walking its groups in key order. A group is
 * K keys (the instruction's K: 32 on gfx936, CDNA3 and sm80, 16 on
 * RDNA3), GT = K / N QK tiles. Per group:
 *
 *   qk       GT QK tiles, the instruction per K-step (the harness's own
 *            code, qk_tile.h's operands), accumulators into qk_acc
 *   scores   fsp_scores: each lane's C entries to scores in the LDS
 *            workspace ws[GT][M][N] (qk_tile.h's recovery and masks, keys
 *            at or past the split-K segment's end masked)   -- barrier
 *   softmax  fsp_row, one lane per row: one max for the whole group
 *            (every key of its GT tiles, then the running max), P in f32
 *            as e^(s - max), l = fmaf(l, alpha, sum of the f32 P) with the
 *            sum in the kernel's order (per tile, lanes in order, a
 *            lane's C entries of the row summed first), then P with the
 *            V per-token scale folded in, P' = P * sV(key), and
 *            sP = max P' / clip                                -- barrier
 *   quantize fsp_pq: each lane its own C entries, Pq = round(P' / sP)
 *            (quant.rounding, clamped to +-clip), in registers
 *   regroup  lds: fsp_lds_put writes Pq in C order to LDS  -- barrier --
 *            and fsp_a reads A in A order (the lane map's a_row, a_col);
 *            v_permuted: fsp_a takes A from the lane's own C registers
 *            (a lane's i-th A slot of row r is its i-th C entry of row r,
 *            tiles in order, registers in order) and fsp_b loads V in the
 *            key order that A's columns then hold (fsp_plan)
 *   product  per column tile dt (D / N of them: 16 on gfx936 at head_dim
 *            256, 32 on sm80): fsp_b, B straight from the paged V cache
 *            v_cache[blk][g][d][slot] through the block table; the
 *            instruction with C = 0; fsp_o: pv_acc, and O = fmaf(acc, sP,
 *            O * alpha) per C entry                            -- barrier
 * and after the unit's last group, fsp_finish, one lane per row: the
 * split-K merge, out = fmaf(o / l, w, out) segment by segment with
 * w = l e^(m - max), then out / (the sum of the w), into out for the row
 * that owns its q head.
 *
 * Planted (FSQ_BUG_P_REGROUP_NONE, p_regroup: none): the C registers fed
 * as A without the exchange, V loaded in plain key order.
 *
 * Worked example, gfx936, v_permuted: lane 17 holds C row 1, columns
 * 1 + 4e of each QK tile, so its A bytes 0-3 are Pq[1][1, 5, 9, 13] and
 * 4-7 Pq[1][17, 21, 25, 29]; the instruction reads them as A[1][8..15],
 * so B row 8 + e holds V of keys 1 5 9 13 17 21 25 29 (b_key).
 *
 * exp: e^x is computed as (float)exp((double)x), the correctly rounded
 * float but where the double result lies within one double ulp of a
 * float midpoint (about 2^-28 of inputs). fragsim's exp is the correctly
 * rounded one (sim/common/fexp.c, measured), so a correct kernel's
 * p_int8, p_scale, pv_acc and out match the golden bit for bit and diff
 * demands no tolerance. The harness computes its own exps: it reads no
 * P from the golden.
 *
 * Keys past the sequence's blocks read V as -128, the byte fragsim's
 * pool holds in slots no sequence owns (a kernel loads the whole group):
 * their Pq is 0 in a correct kernel, and a planted p_regroup none
 * multiplies them as fragsim's model of it does.
 *
 * The includer defines W, M, N, K, EA, EB, EC and LM() (the generated
 * lane map) and includes qk_tile.h, as for qk_frag.h. C99, C++ and
 * HIP/CUDA (device and host).
 */
#ifndef FRAGSIM_PV_TILE_H
#define FRAGSIM_PV_TILE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qk_tile.h"

#define FSP_GT (K / N)		/* QK tiles a group */
#define FSP_V_PAD ((int8_t)-128)	/* V past the sequence's blocks */
#define FSP_P_POISON ((int8_t)-128)	/* p_int8 never written: no Pq is -128 */

struct fsp_case {
	int on;			/* the golden is pv.mode int8 */
	int DT;			/* column tiles: D / N */
	int from_c;		/* A from the lane's C registers: v_permuted,
				   or the planted p_regroup none */
	int segment, nseg;	/* split_k.segment (0 none), segments kept a row */
	int clip, even;		/* quant.clip, quant.rounding half_to_even */
	int n_units;
};

struct fsp_bufs {
	const int8_t *v_cache;		/* [NB][Hkv][D][BS] */
	const float *v_scale;		/* [NB][BS][Hkv] */
	const int32_t *groups;		/* pv_tiles [n_groups][5] */
	const int32_t *unit_first;	/* [n_units + 1]: a unit's run of unit_groups */
	const int32_t *unit_groups;	/* group indices, a unit's in key order */
	const int32_t *a_src;		/* [W][EA]: the C register t * EC + e an A
					   slot takes (from_c), else -1 */
	const int32_t *b_key;		/* [W][EB]: the group's key of a B slot */
	int32_t *qk_acc;		/* [n_units][GT][ksteps_acc][W][EC] */
	float *o;			/* [n_units][nseg][M][D]: O of a segment */
	float *m, *l;			/* [n_units][nseg][M]: -inf, 0 at start */
	int8_t *p_int8;			/* [n_groups][W][EA] */
	float *p_scale;			/* [n_groups][M] */
	int32_t *pv_acc;		/* [n_groups][DT][W][EC] */
	float *out;			/* [S][T][Hq][D] */
};

/* The wave's shared memory (LDS) of one group. */
struct fsp_lds {
	float ws[FSP_GT][M][N];		/* scores, for the row phase */
	int8_t pq[M][K];		/* regroup lds: Pq in C order */
	float mx[M], alpha[M], sp[M];	/* the rows' max, rescale, sP */
	int active[M];			/* something visible so far */
};

/* rint, round and fma as instructions on AMD devices: the builds
 * without a device library (RDNA3's -nogpulib) have no __ocml_ calls. */
#if defined(__HIP_DEVICE_COMPILE__)
#define FSP_RINTF __builtin_rintf
#define FSP_ROUNDF __builtin_roundf
#define FSP_FMAF __builtin_fmaf
#else
#define FSP_RINTF rintf
#define FSP_ROUNDF roundf
#define FSP_FMAF fmaf
#endif

FSQ_HD float fsp_exp(float x)
{
	return (float)exp((double)x);
}

/* Pq of x at scale sp: quant.rounding, clamped to +-clip; NaN is 0. */
FSQ_HD int8_t fsp_quant(float x, float sp, int clip, int even)
{
	float lim = (float)(clip + 1), v;

	if (sp == 0.0f)
		return 0;
	v = x / sp;
	v = v != v ? 0.0f : v;
	v = v > lim ? lim : v < -lim ? -lim : v;
	v = even ? FSP_RINTF(v) : FSP_ROUNDF(v);
	v = v > (float)clip ? (float)clip : v < -(float)clip ? -(float)clip : v;
	return (int8_t)v;
}

/* Group gi's key base, and the end of its split-K segment. */
FSQ_HD int fsp_hi(const struct fsq_case *c, const struct fsp_case *pc,
		  const struct fsq_bufs *q, const struct fsp_bufs *p, int gi)
{
	int s = p->groups[gi * FSQ_TILE_COLS], kb = p->groups[gi * FSQ_TILE_COLS + 3];
	int ctx = q->context_lens[s], lo;

	(void)c;
	if (pc->segment <= 0)
		return ctx;
	lo = kb / pc->segment * pc->segment;
	return lo + pc->segment < ctx ? lo + pc->segment : ctx;
}

/* The state of row m of unit u in group gi's segment: index of m, l. */
FSQ_HD long fsp_state(const struct fsp_case *pc, const struct fsp_bufs *p, int u, int gi,
		      int m)
{
	int seg = pc->segment > 0 ? p->groups[gi * FSQ_TILE_COLS + 3] / pc->segment : 0;

	return ((long)u * pc->nseg + seg) * M + m;
}

/* V's per-token scale of key (visible) of kv head g. V walks the blocks
 * as K does (fsq_block): a kernel that ignores the block table (planted
 * page_walk) ignores it for V and its scales too, as fragsim's
 * page_walk=none reads them; a block it computes past the pool reads
 * NaN, as fragsim's poison. */
FSQ_HD float fsp_v_scale(const struct fsq_case *c, const struct fsq_bufs *q,
			 const struct fsp_bufs *p, int s, int g, int key)
{
	int blk = fsq_block(c, q, s, key);

	if (blk < 0 || blk >= c->NB)
		return NAN;
	return p->v_scale[((long)blk * c->BS + key % c->BS) * c->Hkv + g];
}

/* V[key][dim] of kv head g, from v_cache[blk][g][dim][slot]. */
FSQ_HD int8_t fsp_v(const struct fsq_case *c, const struct fsq_bufs *q,
		    const struct fsp_bufs *p, int s, int g, int key, int dim)
{
	int blk;

	if (key / c->BS >= (q->context_lens[s] + c->BS - 1) / c->BS)
		return FSP_V_PAD;
	blk = fsq_block(c, q, s, key);
	if (blk < 0 || blk >= c->NB)
		return FSP_V_PAD;
	return p->v_cache[(((long)blk * c->Hkv + g) * c->D + dim) * c->BS + key % c->BS];
}

/*
 * Scores of lane's C entries of group gi into lds->ws: tile t is row
 * gi * GT + t of q->tiles (the group's QK tiles, key base kb + t N), its
 * accumulators at p->qk_acc for unit u as the QK kernel keeps them.
 */
FSQ_HD void fsp_scores(const struct fsq_case *c, const struct fsp_case *pc,
		       const struct fsq_bufs *q, const struct fsp_bufs *p, int u, int gi,
		       int lane, struct fsp_lds *lds)
{
	int kb = p->groups[gi * FSQ_TILE_COLS + 3], hi = fsp_hi(c, pc, q, p, gi);

	for (int t = 0; t < FSP_GT; t++) {
		const int32_t *acc = &p->qk_acc[((long)u * FSP_GT + t) * c->ksteps_acc * W * EC];

		for (int e = 0; e < EC; e++) {
			int m = LM(c_row)(lane, e), n = LM(c_col)(lane, e), key = kb + t * N + n;
			struct fsq_row r = fsq_row_of(c, q, gi * FSP_GT + t, m);

			lds->ws[t][m][n] = key >= hi ? -INFINITY :
					   fsq_score(c, q, &r, key, &acc[lane * EC + e], W * EC);
		}
	}
}

/*
 * The softmax step of row m for group gi of unit u (one lane a row):
 * lds->mx, alpha, sp, active for the lanes, the row's state (m, l), and
 * p_scale. Sums in the order the header states.
 */
FSQ_HD void fsp_row(const struct fsq_case *c, const struct fsp_case *pc,
		    const struct fsq_bufs *q, const struct fsp_bufs *p, int u, int gi, int m,
		    struct fsp_lds *lds)
{
	struct fsq_row r = fsq_row_of(c, q, gi * FSP_GT, m);
	int kb = p->groups[gi * FSQ_TILE_COLS + 3];
	long st = fsp_state(pc, p, u, gi, m);
	float mx = -INFINITY, sum = 0.0f, pmax = 0.0f;

	lds->active[m] = 0, lds->sp[m] = 0.0f, lds->mx[m] = -INFINITY, lds->alpha[m] = 0.0f;
	if (r.valid) {
		for (int t = 0; t < FSP_GT; t++)
			for (int n = 0; n < N; n++)
				if (lds->ws[t][m][n] > mx)
					mx = lds->ws[t][m][n];
		if (mx < p->m[st])
			mx = p->m[st];
	}
	if (mx != -INFINITY) {
		lds->active[m] = 1;
		lds->mx[m] = mx;
		lds->alpha[m] = p->m[st] == -INFINITY ? 0.0f : fsp_exp(p->m[st] - mx);
		for (int t = 0; t < FSP_GT; t++) {
			for (int l = 0; l < W; l++) {
				float part = 0.0f;

				for (int e = 0; e < EC; e++) {
					float v = lds->ws[t][m][LM(c_col)(l, e)];

					if (LM(c_row)(l, e) == m && v != -INFINITY)
						part += fsp_exp(v - mx);
				}
				sum += part;
			}
			for (int n = 0; n < N; n++) {
				float v = lds->ws[t][m][n], pv;

				if (v == -INFINITY)
					continue;	/* masked: P' 0, its V scale unread */
				pv = fsp_exp(v - mx) * fsp_v_scale(c, q, p, r.s, r.g, kb + t * N + n);
				if (!(pv <= pmax))
					pmax = pv;
			}
		}
		p->l[st] = FSP_FMAF(p->l[st], lds->alpha[m], sum);
		p->m[st] = mx;
		lds->sp[m] = pmax / (float)pc->clip;
	}
	p->p_scale[(long)gi * M + m] = lds->sp[m];
}

/* Lane's Pq of its C entries (t * EC + e), and with regroup lds in C
 * order into lds->pq. */
FSQ_HD void fsp_pq(const struct fsq_case *c, const struct fsp_case *pc,
		   const struct fsq_bufs *q, const struct fsp_bufs *p, int gi, int lane,
		   struct fsp_lds *lds, int8_t pq[FSP_GT * EC])
{
	int kb = p->groups[gi * FSQ_TILE_COLS + 3];

	for (int t = 0; t < FSP_GT; t++)
		for (int e = 0; e < EC; e++) {
			int m = LM(c_row)(lane, e), n = LM(c_col)(lane, e);
			float v = lds->ws[t][m][n];
			int8_t x = 0;

			if (lds->active[m] && v != -INFINITY) {
				struct fsq_row r = fsq_row_of(c, q, gi * FSP_GT + t, m);
				float pv = fsp_exp(v - lds->mx[m]) *
					   fsp_v_scale(c, q, p, r.s, r.g, kb + t * N + n);

				x = fsp_quant(pv, lds->sp[m], pc->clip, pc->even);
			}
			pq[t * EC + e] = x;
			if (!pc->from_c)
				lds->pq[m][t * N + n] = x;
		}
}

/*
 * Lane's A registers (P) of group gi: from lds->pq in A order, or from
 * its own C registers pq through a_src (every candidate register
 * compared, so the index stays a constant: no scratch on AMD). Written to
 * p_int8 in register order.
 */
FSQ_HD void fsp_a(const struct fsp_case *pc, const struct fsp_bufs *p, int gi, int lane,
		  const struct fsp_lds *lds, const int8_t pq[FSP_GT * EC], uint32_t a[EA / 4])
{
	for (int i = 0; i < EA / 4; i++)
		a[i] = 0;
	for (int i = 0; i < EA; i++) {
		int8_t x = 0;

		if (pc->from_c) {
			int src = p->a_src[lane * EA + i];

			for (int j = 0; j < FSP_GT * EC; j++)
				x = src == j ? pq[j] : x;
		} else {
			x = lds->pq[LM(a_row)(lane, i)][LM(a_col)(lane, i)];
		}
		p->p_int8[((long)gi * W + lane) * EA + i] = x;
		a[i / 4] |= (uint32_t)(uint8_t)x << (8 * (i % 4));
	}
}

/* Lane's B registers (V) of group gi, column tile dt. */
FSQ_HD void fsp_b(const struct fsq_case *c, const struct fsq_bufs *q,
		  const struct fsp_bufs *p, int gi, int lane, int dt, uint32_t b[EB / 4])
{
	const int32_t *xy = &p->groups[gi * FSQ_TILE_COLS];
	int g = fsq_row_of(c, q, gi * FSP_GT, 0).g;

	for (int i = 0; i < EB / 4; i++)
		b[i] = 0;
	for (int i = 0; i < EB; i++) {
		int8_t v = fsp_v(c, q, p, xy[0], g, xy[3] + p->b_key[lane * EB + i],
				 dt * N + LM(b_col)(lane, i));

		b[i / 4] |= (uint32_t)(uint8_t)v << (8 * (i % 4));
	}
}

/* Column tile dt's accumulators acc of lane: pv_acc, and O's update. */
FSQ_HD void fsp_o(const struct fsq_case *c, const struct fsp_case *pc,
		  const struct fsp_bufs *p, int u, int gi, int lane, int dt,
		  const int32_t acc[EC], const struct fsp_lds *lds)
{
	for (int e = 0; e < EC; e++) {
		int m = LM(c_row)(lane, e), d = dt * N + LM(c_col)(lane, e);
		float *o = &p->o[fsp_state(pc, p, u, gi, m) * c->D + d];

		p->pv_acc[(((long)gi * pc->DT + dt) * W + lane) * EC + e] = acc[e];
		if (lds->active[m])
			*o = FSP_FMAF((float)acc[e], lds->sp[m], *o * lds->alpha[m]);
	}
}

/* After unit u's last group, row m (one lane a row): the merge into out
 * for the row that owns its q head. */
FSQ_HD void fsp_finish(const struct fsq_case *c, const struct fsp_case *pc,
		       const struct fsq_bufs *q, const struct fsp_bufs *p, int u, int m)
{
	int gi = p->unit_groups[p->unit_first[u]];
	struct fsq_row r = fsq_row_of(c, q, gi * FSP_GT, m);
	long base = (long)u * pc->nseg * M + m;
	float *out;
	float mx = -INFINITY, l = 0.0f;

	if (!r.primary)
		return;
	out = &p->out[(((long)r.s * c->T + r.t) * c->Hq + r.qh) * c->D];
	for (int i = 0; i < pc->nseg; i++)
		if (p->m[base + (long)i * M] > mx)
			mx = p->m[base + (long)i * M];
	for (int d = 0; d < c->D; d++)
		out[d] = 0.0f;
	for (int i = 0; i < pc->nseg; i++) {
		long st = base + (long)i * M;
		float wgt;

		if (p->m[st] == -INFINITY)
			continue;
		wgt = p->l[st] * fsp_exp(p->m[st] - mx);
		l += wgt;
		for (int d = 0; d < c->D; d++)
			out[d] = FSP_FMAF(p->o[st * c->D + d] / p->l[st], wgt, out[d]);
	}
	/* a row that sees nothing (l exactly 0) is 0 */
	for (int d = 0; d < c->D; d++)
		out[d] = l == 0.0f ? 0.0f : out[d] / l;
}

/* ---- host ---- */

/*
 * The regroup's tables from the lane map: a_src (from_c) and b_key
 * (v_permuted: the key A's column holds; otherwise B's row). 0, or -1
 * with err naming the case key when this map cannot keep P in place.
 */
static inline int fsp_plan(int from_c, int permute_v, const char *what, int32_t *a_src,
			   int32_t *b_key, char *err, size_t errlen)
{
	int perm[K];

	for (int k = 0; k < K; k++)
		perm[k] = -1;
	for (int l = 0; l < W; l++)
		for (int i = 0; i < EA; i++) {
			int r = LM(a_row)(l, i), nth = 0, src = -1;

			a_src[l * EA + i] = -1;
			if (!from_c)
				continue;
			for (int j = 0; j < i; j++)
				nth += LM(a_row)(l, j) == r;
			for (int t = 0; t < FSP_GT && src < 0; t++)
				for (int e = 0; e < EC && src < 0; e++)
					if (LM(c_row)(l, e) == r && nth-- == 0)
						src = t * EC + e;
			if (src < 0) {
				snprintf(err, errlen,
					 "%s on %s: lane %d's C registers do not hold the row-%d entries its A registers take (P cannot stay in place on this map; use pv.regroup lds)",
					 what, LMU(NAME), l, r);
				return -1;
			}
			a_src[l * EA + i] = src;
			{
				int key = src / EC * N + LM(c_col)(l, src % EC), col = LM(a_col)(l, i);

				if (permute_v && perm[col] >= 0 && perm[col] != key) {
					snprintf(err, errlen,
						 "%s on %s: A column %d holds keys %d and %d in different lanes, so no V order fits (use pv.regroup lds)",
						 what, LMU(NAME), col, perm[col], key);
					return -1;
				}
				perm[col] = key;
			}
		}
	for (int l = 0; l < W; l++)
		for (int i = 0; i < EB; i++)
			b_key[l * EB + i] = permute_v ? perm[LM(b_row)(l, i)] : LM(b_row)(l, i);
	return 0;
}

struct fsp_sortkey {
	int32_t k[5];	/* seq, head, row_base, row_tile, key_base */
	int32_t gi;
};

static inline int fsp_sortkey_cmp(const void *pa, const void *pb)
{
	const struct fsp_sortkey *a = (const struct fsp_sortkey *)pa;
	const struct fsp_sortkey *b = (const struct fsp_sortkey *)pb;

	for (int i = 0; i < 5; i++)
		if (a->k[i] != b->k[i])
			return a->k[i] < b->k[i] ? -1 : 1;
	return a->gi < b->gi ? -1 : a->gi > b->gi;
}

/* The host side of a PV run: the case, tables and buffers (host memory). */
struct fsp_host {
	struct fsp_case pc;
	int32_t *unit_first, *unit_groups, *a_src, *b_key, *tiles, *qk_acc;
	float *o, *m, *l, *p_scale, *out;
	int8_t *p_int8;
	int32_t *pv_acc;
	size_t n_groups, n_tiles, n_qk_acc, n_state, n_p_int8, n_p_scale, n_pv_acc, n_out;
};

static inline void fsp_host_free(struct fsp_host *h)
{
	free(h->unit_first), free(h->unit_groups), free(h->a_src), free(h->b_key);
	free(h->tiles), free(h->qk_acc), free(h->o), free(h->m), free(h->l);
	free(h->p_scale), free(h->out), free(h->p_int8), free(h->pv_acc);
	memset(h, 0, sizeof(*h));
}

/*
 * out's rows that no unit owns are 0, as the launch zeroes them: a
 * sequence with no keys (context 0) has no PV group, so no unit, yet its
 * query rows are in out and the golden's are 0 (a row that sees nothing).
 * A row a unit owns stays poisoned until the unit writes it.
 */
static inline int fsp_zero_unowned(struct fsp_host *h, const struct fsq_case *c,
				   const struct fsg_golden *g)
{
	struct fsq_bufs b;
	size_t rows = (size_t)g->S * g->T * g->Hq;
	unsigned char *own = (unsigned char *)calloc(rows + 1, 1);

	if (!own)
		return -1;
	memset(&b, 0, sizeof(b));
	b.tokens = g->tokens, b.tiles = h->tiles;
	for (int u = 0; u < h->pc.n_units; u++)
		for (int m = 0; m < M; m++) {
			struct fsq_row r = fsq_row_of(c, &b, h->unit_groups[h->unit_first[u]] * FSP_GT, m);

			if (r.primary)
				own[((size_t)r.s * g->T + r.t) * g->Hq + r.qh] = 1;
		}
	for (size_t i = 0; i < rows; i++)
		if (!own[i])
			memset(&h->out[i * g->D], 0, sizeof(float) * g->D);
	free(own);
	return 0;
}

/*
 * Everything a PV run needs from golden g on case c (bugs: FSQ_BUG_*):
 * the units, the regroup's tables, the group's QK tile rows, the state
 * and the outputs, poisoned. 0; 2 with err set (the case cannot run:
 * named); 3 out of memory.
 */
static inline int fsp_host_make(struct fsp_host *h, const struct fsq_case *c,
				const struct fsg_golden *g, char *err, size_t errlen)
{
	int bug = (c->bugs & FSQ_BUG_P_REGROUP_NONE) != 0;
	struct fsp_case *pc = &h->pc;
	struct fsp_sortkey *sk;
	size_t nu = 0;

	memset(h, 0, sizeof(*h));
	if (!g->pv_int8)
		return 0;
	pc->on = 1;
	if (K % N || g->D % N) {
		snprintf(err, errlen, "case key pv.mode is int8: a group of K = %d keys must be whole QK tiles of N = %d, and head_dim %d whole column tiles (%s)",
			 K, N, g->D, LMU(NAME));
		return 2;
	}
	pc->DT = g->D / N;
	pc->from_c = g->pv_regroup == FSG_PV_V_PERMUTED || bug;
	pc->segment = g->segment;
	pc->nseg = g->segment > 0 ? (g->MAXCTX + g->segment - 1) / g->segment : 1;
	if (pc->nseg < 1)
		pc->nseg = 1;
	pc->clip = g->clip, pc->even = g->round_even;
	h->n_groups = g->n_groups;
	h->a_src = (int32_t *)malloc(sizeof(int32_t) * W * EA);
	h->b_key = (int32_t *)malloc(sizeof(int32_t) * W * EB);
	h->unit_first = (int32_t *)malloc(sizeof(int32_t) * (h->n_groups + 1));
	h->unit_groups = (int32_t *)malloc(sizeof(int32_t) * (h->n_groups + 1));
	h->n_tiles = h->n_groups * FSP_GT;
	h->tiles = (int32_t *)malloc(sizeof(int32_t) * (h->n_tiles * FSQ_TILE_COLS + 1));
	sk = (struct fsp_sortkey *)malloc(sizeof(*sk) * (h->n_groups + 1));
	if (!h->a_src || !h->b_key || !h->unit_first || !h->unit_groups || !h->tiles || !sk) {
		free(sk);
		fsp_host_free(h);
		return 3;
	}
	if (fsp_plan(pc->from_c, g->pv_regroup == FSG_PV_V_PERMUTED && !bug,
		     bug ? "p_regroup_none" : "case key pv.regroup is v_permuted", h->a_src,
		     h->b_key, err, errlen)) {
		free(sk);
		fsp_host_free(h);
		return 2;
	}
	for (size_t i = 0; i < h->n_groups; i++) {
		const int32_t *xy = &g->pv_tiles[i * FSG_TILE_COLS];

		sk[i].k[0] = xy[0], sk[i].k[1] = xy[1], sk[i].k[2] = xy[2];
		sk[i].k[3] = xy[4], sk[i].k[4] = xy[3], sk[i].gi = (int32_t)i;
		for (int t = 0; t < FSP_GT; t++) {
			int32_t *o = &h->tiles[(i * FSP_GT + t) * FSQ_TILE_COLS];

			memcpy(o, xy, sizeof(int32_t) * FSQ_TILE_COLS);
			o[3] = xy[3] + t * N;
		}
	}
	qsort(sk, h->n_groups, sizeof(*sk), fsp_sortkey_cmp);
	for (size_t i = 0; i < h->n_groups; i++) {
		if (!i || memcmp(sk[i].k, sk[i - 1].k, 4 * sizeof(int32_t)))
			h->unit_first[nu++] = (int32_t)i;
		h->unit_groups[i] = sk[i].gi;
	}
	h->unit_first[nu] = (int32_t)h->n_groups;
	free(sk);
	pc->n_units = (int)nu;
	h->n_qk_acc = nu * FSP_GT * (size_t)c->ksteps_acc * W * EC;
	h->n_state = nu * (size_t)pc->nseg * M;
	h->n_p_int8 = h->n_groups * W * EA;
	h->n_p_scale = h->n_groups * M;
	h->n_pv_acc = h->n_groups * (size_t)pc->DT * W * EC;
	h->n_out = (size_t)g->S * g->T * g->Hq * g->D;
	h->qk_acc = (int32_t *)malloc(sizeof(int32_t) * (h->n_qk_acc + 1));
	h->o = (float *)calloc(h->n_state * g->D + 1, sizeof(float));
	h->m = (float *)malloc(sizeof(float) * (h->n_state + 1));
	h->l = (float *)calloc(h->n_state + 1, sizeof(float));
	h->p_int8 = (int8_t *)malloc(h->n_p_int8 + 1);
	h->p_scale = (float *)malloc(sizeof(float) * (h->n_p_scale + 1));
	h->pv_acc = (int32_t *)malloc(sizeof(int32_t) * (h->n_pv_acc + 1));
	h->out = (float *)malloc(sizeof(float) * (h->n_out + 1));
	if (!h->qk_acc || !h->o || !h->m || !h->l || !h->p_int8 || !h->p_scale || !h->pv_acc ||
	    !h->out) {
		fsp_host_free(h);
		return 3;
	}
	for (size_t i = 0; i < h->n_state; i++)
		h->m[i] = -INFINITY;
	memset(h->p_int8, (uint8_t)FSP_P_POISON, h->n_p_int8);
	fsd_poison_f32(h->p_scale, h->n_p_scale);
	fsd_poison_i32(h->pv_acc, h->n_pv_acc);
	fsd_poison_f32(h->out, h->n_out);
	if (fsp_zero_unowned(h, c, g)) {
		fsp_host_free(h);
		return 3;
	}
	return 0;
}

/* p's pointers over h's host arrays and the golden's V (host harnesses). */
static inline void fsp_host_bufs(struct fsp_bufs *p, const struct fsp_host *h,
				 const struct fsg_golden *g)
{
	memset(p, 0, sizeof(*p));
	p->v_cache = g->v_cache, p->v_scale = g->v_scale, p->groups = g->pv_tiles;
	p->unit_first = h->unit_first, p->unit_groups = h->unit_groups;
	p->a_src = h->a_src, p->b_key = h->b_key, p->qk_acc = h->qk_acc;
	p->o = h->o, p->m = h->m, p->l = h->l;
	p->p_int8 = h->p_int8, p->p_scale = h->p_scale, p->pv_acc = h->pv_acc, p->out = h->out;
}

/* h's outputs into writer w: p_int8, p_scale, pv_acc, pv_tiles, out. */
static inline int fsp_dump_into(struct fsd_writer *w, const struct fsp_host *h,
				const struct fsg_golden *g)
{
	size_t s_p8[3] = { h->n_groups, W, EA }, s_ps[2] = { h->n_groups, M };
	size_t s_acc[4] = { h->n_groups, (size_t)h->pc.DT, W, EC };
	size_t s_t[2] = { h->n_groups, FSQ_TILE_COLS };
	size_t s_out[4] = { (size_t)g->S, (size_t)g->T, (size_t)g->Hq, (size_t)g->D };

	if (!h->pc.on)
		return 0;
	return fsd_tensor(w, "p_int8", FSD_I8, h->p_int8, 3, s_p8) ||
	       fsd_tensor(w, "p_scale", FSD_F32, h->p_scale, 2, s_ps) ||
	       fsd_tensor(w, "pv_acc", FSD_I32, h->pv_acc, 4, s_acc) ||
	       fsd_tensor(w, "pv_tiles", FSD_I32, g->pv_tiles, 2, s_t) ||
	       fsd_tensor(w, "out", FSD_F32, h->out, 4, s_out);
}

/* fsq_dump with h's PV tensors beside QK's (none when h is off). */
static inline int fsp_dump(const char *prog, const struct fsq_case *c,
			   const struct fsg_golden *g, const int32_t *acc, int wave, int ec,
			   const float *scores, const struct fsp_host *h, const char *dir)
{
	struct fsd_writer w;
	int rc = fsd_begin(&w, dir) ? 3 : 0;

	if (!rc && (fsq_dump_qk(&w, c, g, acc, wave, ec, scores) || fsp_dump_into(&w, h, g) ||
		    fsd_commit(&w)))
		rc = 3;
	if (rc) {
		fprintf(stderr, "%s: %s\n", prog, w.error);
		fsd_abort(&w);
	}
	return rc;
}

/* A harness that has no PV half refuses an INT8 PV golden by name; every
 * harness refuses a planted p_regroup_none without INT8 PV, and
 * c_columns (a QK-only plant) with it. 0 or 2. */
static inline int fsp_refuse(const char *prog, const struct fsg_golden *g, int bugs,
			     int has_pv, const char *why)
{
	if (g->pv_int8 && !has_pv) {
		fprintf(stderr, "%s: case key pv.mode is int8: %s; refusing the golden rather than ignoring the key\n",
			prog, why);
		return 2;
	}
	if (g->pv_int8 && (bugs & FSQ_BUG_C_COLUMNS)) {
		fprintf(stderr, "%s: c_columns is planted in QK^T's score recovery only, and the golden is pv.mode int8 (the PV half reads the C map as it is)\n",
			prog);
		return 2;
	}
	if (!g->pv_int8 && (bugs & FSQ_BUG_P_REGROUP_NONE)) {
		fprintf(stderr, "%s: p_regroup_none plants a bug in INT8 PV, and the golden is pv.mode f32\n",
			prog);
		return 2;
	}
	return 0;
}

#endif
