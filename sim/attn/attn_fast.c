/*
 * attn_fast.c - the fast executor (see attn_fast.h for why it gives the
 * scalar executor's bytes): per unit, K read in place from the paged
 * cache, QK^T as int32 dot products, scores and softmax in the scalar
 * order with the exps ahead, PV over d; the vector kernels are
 * sim/attn/tile_fast.h's. It calls attn_common.c for the layout and the
 * merge, never the driver (attn.c) or the scalar executor (attn_spec.c).
 */
#include "attn_fast.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/fexp.h"

/*
 * The prefetch of the next block (tile_prefetch) goes a cache line at a
 * time, and only for blocks of at most 64 slots: that bounds one prefetch
 * to 2 x 64 x D bytes of K and V (32 KiB at D 256, an L1 data cache); a
 * larger block is not prefetched.
 */
#define CACHE_LINE 64
#define PREFETCH_MAX_BS 64

_Static_assert(TILE_CHUNK == INPUTS_K_CHUNK,
	       "the vector kernels read K chunks in place from the cache");

int attn_fast_carve(const struct kern *k, int ng, int nrt, struct fscratch *f,
		    struct slab *s)
{
	size_t N = (size_t)k->N, D = (size_t)k->D, G = (size_t)ng * TILE_ROWS;
	size_t ks = (size_t)k->ksteps;

	f->kst = slab_take(s, D * N);
	f->qb = slab_take(s, G * D);
	f->qsum = slab_take(s, G * sizeof(int32_t));
	f->dot = slab_take(s, ks * G * N * sizeof(int32_t));
	f->creg = slab_take(s, ks * k->W * k->EC * sizeof(int32_t));
	f->ws = slab_take(s, TILE_ROWS * N * sizeof(float));
	f->ex = slab_take(s, (TILE_ROWS * N + TILE_ROWS) * sizeof(float));
	f->vis = slab_take(s, N * sizeof(uint16_t));
	f->vn = slab_take(s, D * N * sizeof(float));
	f->ksc = slab_take(s, ks * N * sizeof(float));
	f->vsc = slab_take(s, N * sizeof(float));
	f->ot = slab_take(s, G * D * sizeof(float));
	f->gm = slab_take(s, G * sizeof(float));
	f->gl = slab_take(s, G * sizeof(float));
	f->needed = slab_take(s, (size_t)nrt * sizeof(int));
	if (!s->base || s->used > s->cap)
		return s->base ? -1 : 0;
	memset(f->qb, 0, G * D);
	memset(f->qsum, 0, G * sizeof(int32_t));
	memset(f->vn, 0, D * N * sizeof(float));
	return 0;
}

/*
 * Do replica rows sum their slots in their primary's order? (decode)
 * Row ri of a unit's ceil(G / M) row tiles is C row ri % M holding q
 * head ri % G; its primary is row ri % G, C row (ri % G) % M. Packed
 * rows (kernel: decode_rows) have no replicas: rows past G are invalid.
 */
int attn_fast_rows_agree(const struct kern *k)
{
	int rows = (k->G + k->M - 1) / k->M * k->M;

	/* Packed: rows past G are padding (invalid rows, acc 0), no replica. */
	if (k->c->decode_rows == ROWS_PACKED)
		return 1;
	for (int ri = k->G; ri < rows; ri++)
		if (!attn_rows_same_order(k, ri % k->M, ri % k->G % k->M))
			return 0;
	return 1;
}

void attn_fast_order(struct kern *k)
{
	const int *col = k->col_write;

	k->ord_ok = k->N == TILE_KEYS && !k->per_block32;
	for (int m = 0; k->ord_ok && m < k->M; m++) {
		const int *sl = &k->rowslots[m * k->rowcap];
		unsigned seen = 0;

		if (k->rowcount[m] != TILE_KEYS) {
			k->ord_ok = 0;
			break;
		}
		for (int j = 0; j < TILE_KEYS; j++) {
			int brk = j == 0 || sl[j] / k->EC != sl[j - 1] / k->EC;

			seen |= 1u << col[sl[j]];
			if (m == 0) {
				k->ord.col[j] = (uint8_t)col[sl[j]];
				k->ord.brk |= (uint16_t)(brk << j);
			} else if (k->ord.col[j] != col[sl[j]] || (k->ord.brk >> j & 1) != brk) {
				k->ord_ok = 0;
			}
		}
		if (seen != (1u << TILE_KEYS) - 1)
			k->ord_ok = 0;
	}
}

/*
 * The stored block of key tok (inputs_block_at): the fast executor runs
 * the correct kernel only, whose block is the table's, stored in a
 * sparse pool as in a dense one; every offset below is of the stored
 * arrays, blocks apart as in the pool (the same numbers when dense).
 */
static int fast_block(const struct kern *k, int s, int tok)
{
	return inputs_block_at(k->in, attn_block(k, s, tok));
}

/*
 * The tile's K, chunk-major, under load_k's rule (a key inside the last
 * block loads its slot, one past the block table or in a freed block,
 * window_blocks, loads 0): in place in the cache when the N keys are
 * consecutive slots of one block, else staged in kst. Returns the chunk
 * stride in bytes; *kp the first chunk.
 */
size_t attn_fast_tile_k(const struct kern *k, const struct unit *u, int kb,
			int8_t *kst, const int8_t **kp)
{
	const int8_t *kc = k->in->k_cache;
	int g = attn_kv_head(k, u), nblk = case_blocks_of(k->c, u->s), C = k->D / TILE_CHUNK;

	if (kb % k->BS + k->N <= k->BS && kb / k->BS < nblk && fast_block(k, u->s, kb) >= 0) {
		*kp = &kc[attn_k_offset(k, fast_block(k, u->s, kb), g, kb, 0)];
		return (size_t)k->BS * TILE_CHUNK;
	}
	for (int n = 0; n < k->N; n++) {
		int tok = kb + n;

		for (int c = 0; c < C; c++) {
			int8_t *dst = &kst[((size_t)c * k->N + n) * TILE_CHUNK];

			if (tok / k->BS < nblk && fast_block(k, u->s, tok) >= 0)
				memcpy(dst, &kc[attn_k_offset(k, fast_block(k, u->s, tok), g,
							      tok, c * TILE_CHUNK)], TILE_CHUNK);
			else
				memset(dst, 0, TILE_CHUNK);
		}
	}
	*kp = kst;
	return (size_t)k->N * TILE_CHUNK;
}

/* Prefetch the K and V of the unit's block at kb (the next one). */
void attn_fast_prefetch(const struct kern *k, const struct unit *u, int kb, int hi)
{
	size_t a, bytes = (size_t)k->D * k->BS;
	const int8_t *kp, *vp;

	if (kb >= hi || kb % k->BS || k->c->v_dtype != VDT_INT8 || k->BS > PREFETCH_MAX_BS ||
	    fast_block(k, u->s, kb) < 0)
		return;
	/* Block and head start at the same offset in K and in int8 V: each
	 * holds D * BS bytes per (block, head). */
	a = attn_k_offset(k, fast_block(k, u->s, kb), attn_kv_head(k, u), 0, 0);
	kp = &k->in->k_cache[a];
	vp = &k->in->v_cache_i8[a];
	for (size_t i = 0; i < bytes; i += CACHE_LINE) {
		__builtin_prefetch(kp + i);
		__builtin_prefetch(vp + i);
	}
	/* The block's scales ([NB][BS][Hkv]): a miss each otherwise. */
	a = (size_t)fast_block(k, u->s, kb) * k->BS * k->Hkv;
	for (size_t i = 0; i < (size_t)k->BS * k->Hkv; i += CACHE_LINE / sizeof(float)) {
		if (k->c->k_scale == KSCALE_PER_TOKEN_HEAD)
			__builtin_prefetch(&k->in->k_scale[a + i]);
		if (k->in->v_scale)	/* NULL per_channel: no offset on it */
			__builtin_prefetch(&k->in->v_scale[a + i]);
	}
}

/* Are the tile's nv keys all N keys, int8, in consecutive slots of one
 * block? */
static int tile_v_whole(const struct kern *k, const struct unit *u, int kb, int nv)
{
	return k->c->v_dtype == VDT_INT8 && nv == k->N && kb % k->BS + k->N <= k->BS &&
	       fast_block(k, u->s, kb) >= 0;
}

/*
 * When tile_v_whole and V's scales are per token: their V (element d of
 * key n at v[d * BS + n]) and the scales in f->vsc; else NULL. V
 * per_channel (a scale per dim, not per key) is staged by stage_v.
 */
static const int8_t *tile_v_i8(const struct kern *k, const struct unit *u, int kb,
			       int nv, struct fscratch *f)
{
	const float *vs;

	if (!tile_v_whole(k, u, kb, nv) || k->c->v_scale != VSCALE_PER_TOKEN_HEAD)
		return NULL;
	/* v_scale [NB][BS][Hkv]: the N slots of one block, stride Hkv */
	vs = &k->in->v_scale[((size_t)fast_block(k, u->s, kb) * k->BS + kb % k->BS) *
			     k->Hkv + attn_kv_head(k, u)];
	for (int n = 0; n < k->N; n++)
		f->vsc[n] = vs[(size_t)n * k->Hkv];
	return attn_v_col(k, u, kb).i8;
}

/* The tile's V as f32 for keys kb .. kb + nv - 1 (all inside the context). */
static void stage_v(const struct kern *k, const struct unit *u, const struct tile_ops *ops,
		    int kb, int nv, struct fscratch *f)
{
	const int8_t *v8 = tile_v_i8(k, u, kb, nv, f);
	const float *sv = k->in->v_scale_ch ? attn_v_chan(k, u) : NULL;

	if (v8) {
		ops->vconv(v8, k->BS, k->D, k->N, f->vsc, f->vn);
		return;
	}
	if (sv && tile_v_whole(k, u, kb, nv)) {
		/* per_channel: (float)q * 1 is exact, then times sV[d], one
		 * rounding: attn_v_elem's bits */
		for (int n = 0; n < k->N; n++)
			f->vsc[n] = 1.0f;
		ops->vconv(attn_v_col(k, u, kb).i8, k->BS, k->D, k->N, f->vsc, f->vn);
		for (int n = 0; n < k->N; n++)
			for (int d = 0; d < k->D; d++)
				f->vn[(size_t)n * k->D + d] *= sv[d];
		return;
	}
	for (int n = 0; n < nv; n++) {
		struct vcol v = attn_v_col(k, u, kb + n);

		/* attn_v_elem: the spec's value (q8_0, q4_0 dequantized) */
		for (int d = 0; d < k->D; d++)
			f->vn[(size_t)n * k->D + d] = attn_v_elem(&v, d);
	}
}

/*
 * The K scales of keys kb .. min(kb + N, hi) - 1: attn_k_scale's values;
 * per-token scales of one block read in place (stride Hkv), since a call
 * per key was ~6 % of a decode run.
 */
void attn_fast_kscales(const struct kern *k, const struct unit *u, int kb,
		       int hi, float *ksc)
{
	const struct fs_inputs *in = k->in;
	int N = k->N;

	if (k->c->k_scale == KSCALE_PER_TOKEN_HEAD && kb % k->BS + N <= k->BS &&
	    kb + N <= hi && fast_block(k, u->s, kb) >= 0) {
		const float *s = &in->k_scale[((size_t)fast_block(k, u->s, kb) * k->BS +
					       kb % k->BS) * k->Hkv + attn_kv_head(k, u)];

		for (int n = 0; n < N; n++)
			ksc[n] = s[(size_t)n * k->Hkv];
		return;
	}
	for (int n = 0; n < N && kb + n < hi; n++)
		for (int ks = 0; ks < (k->per_block32 ? k->ksteps : 1); ks++)
			ksc[ks * N + n] = attn_k_scale(k, u, kb + n, ks);
}

/* Per-K-step dots (per_block32): dotk[ks][r][n], plain C. */
void attn_fast_qk_ksteps(const struct kern *k, const int8_t *q, int R,
			 const int8_t *kt, size_t cstride, int32_t *dot, size_t kstride)
{
	int cper = k->K / TILE_CHUNK;

	for (int ks = 0; ks < k->ksteps; ks++)
		for (int r = 0; r < R; r++)
			for (int n = 0; n < k->N; n++) {
				int32_t s = 0;

				for (int c = ks * cper; c < (ks + 1) * cper; c++)
					for (int j = 0; j < TILE_CHUNK; j++)
						s += (int32_t)q[(size_t)r * k->D + c * TILE_CHUNK + j] *
						     (int32_t)kt[c * cstride + (size_t)n * TILE_CHUNK + j];
				dot[ks * kstride + (size_t)r * k->N + n] = s;
			}
}

/* The keys kb + [*a, *b) that row w sees: key_visible as a range. */
static void vis_range(const struct kern *k, const struct row *w, int kb, int hi,
		      int *a, int *b)
{
	int lo = kb, up = kb + k->N;

	*a = *b = 0;
	if (!w->valid)
		return;
	if (k->c->sliding_window > 0 && lo < w->q_pos - k->c->sliding_window + 1)
		lo = w->q_pos - k->c->sliding_window + 1;
	if (up > hi)
		up = hi;
	if (up > w->q_pos + 1)
		up = w->q_pos + 1;
	if (lo < up)
		*a = lo - kb, *b = up - kb;
}

/* tile_needed, by ranges. */
static int fast_needed(const struct kern *k, const struct row *rows, int kb, int hi)
{
	for (int m = 0; m < k->M; m++) {
		int a, b;

		vis_range(k, &rows[m], kb, hi, &a, &b);
		if (a < b)
			return 1;
	}
	return 0;
}

/*
 * The workspace rows of the primary rows into scores, when kept: keys
 * kb .. hi - 1 only. A tile's keys past its segment's end are -inf in ws
 * and belong to the next segment, which may run on another thread
 * (fast_split); the scalar executor writes them too, and the next
 * segment's tile overwrites them after it, so its final bytes are these.
 */
static void fast_scores_out(const struct kern *k, const struct unit *u,
			    const struct row *rows, int gn, int kb, int hi,
			    const float *ws)
{
	float *sc = k->r->scores;

	for (int i = 0; sc && i < gn; i++) {
		const struct row *w = &rows[i];
		size_t ri = ((size_t)u->s * k->T + w->t) * k->Hq + w->qh;

		if (!w->primary)
			continue;
		for (int n = 0; n < k->N && kb + n < hi; n++)
			sc[ri * k->MAXCTX + kb + n] = ws[i * k->N + n];
	}
}

/*
 * Scores and softmax of one row group on one tile in any slot order
 * (rowslots of C rows m0 + i mod M): max in slot order, the exps ahead,
 * sums in slot order. P in f->ex, vis in f->vis; returns the updated rows.
 */
static uint16_t fast_softmax_slots(const struct kern *k, const struct unit *u,
				   const struct tile_ops *ops, const struct row *rows,
				   int m0, int gn, const int32_t *dot,
				   size_t kstride, int kb, int hi, float *gm,
				   float *gl, float *alpha, struct fscratch *f)
{
	const int *col = k->col_write;
	float ss = (float)k->c->softmax_scale, gm_old[TILE_ROWS];
	uint16_t upd = 0;
	int N = k->N;

	for (int i = 0; i < gn; i++) {
		const struct row *w = &rows[i];
		int a, b;

		vis_range(k, w, kb, hi, &a, &b);
		for (int n = 0; n < N; n++) {
			float sc;

			if (n < a || n >= b) {
				f->ws[i * N + n] = -INFINITY;
				continue;
			}
			if (k->per_block32) {
				float acc = 0.0f;

				for (int ks = 0; ks < k->ksteps; ks++)
					acc += (float)dot[ks * kstride + (size_t)i * N + n] *
					       f->ksc[ks * N + n];
				sc = acc * w->sq * ss;
			} else {
				sc = (float)dot[(size_t)i * N + n] * w->sq * f->ksc[n] * ss;
			}
			if (k->lmod.on)
				sc = logit_apply(&k->lmod, sc, w->qh, kb + n - w->q_pos);
			f->ws[i * N + n] = sc;
		}
	}
	fast_scores_out(k, u, rows, gn, kb, hi, f->ws);
	/* Softmax: max in slot order, exps ahead, sums in slot order. */
	for (int i = 0; i < gn; i++) {
		const int *sl = &k->rowslots[((m0 + i) % k->M) * k->rowcap];
		int cnt = k->rowcount[(m0 + i) % k->M];
		float tmax = -INFINITY, mnew;

		if (!rows[i].valid)
			continue;
		for (int j = 0; j < cnt; j++) {
			float v = f->ws[i * N + col[sl[j]]];

			if (v > tmax)
				tmax = v;
		}
		mnew = tmax > gm[i] ? tmax : gm[i];
		if (mnew == -INFINITY)
			continue;
		/* alpha = fs_expf(m - mnew), or 0 when m is -inf: below. */
		f->ex[gn * N + i] = gm[i] - mnew;
		upd |= (uint16_t)(1u << i);
		for (int n = 0; n < N; n++)
			f->ex[i * N + n] = f->ws[i * N + n] - mnew;
		gm_old[i] = gm[i];
		gm[i] = mnew;
	}
	for (int i = 0; i < gn; i++)
		if (!(upd >> i & 1)) {
			f->ex[gn * N + i] = 0.0f;
			for (int n = 0; n < N; n++)
				f->ex[i * N + n] = -INFINITY;
		}
	ops->exp(f->ex, gn * N + gn);
	for (int i = 0; i < gn; i++)
		alpha[i] = (upd >> i & 1) && gm_old[i] != -INFINITY ? f->ex[gn * N + i] :
			   (upd >> i & 1) ? 0.0f : 1.0f;
	for (int n = 0; n < N; n++)
		f->vis[n] = 0;
	for (int i = 0; i < gn; i++) {
		const int *sl = &k->rowslots[((m0 + i) % k->M) * k->rowcap];
		int cnt = k->rowcount[(m0 + i) % k->M], lane = -1;
		float sum = 0.0f, part = 0.0f;

		if (!(upd >> i & 1))
			continue;
		for (int j = 0; j < cnt; j++) {
			int n = col[sl[j]];
			float p = f->ws[i * N + n] == -INFINITY ? 0.0f : f->ex[i * N + n];

			if (sl[j] / k->EC != lane) {
				sum += part;
				part = 0.0f;
				lane = sl[j] / k->EC;
			}
			part += p;
		}
		sum += part;
		gl[i] = fmaf(gl[i], alpha[i], sum);	/* the spec's fused update */
		for (int n = 0; n < N; n++)
			if (f->ws[i * N + n] != -INFINITY)
				f->vis[n] |= (uint16_t)(1u << i);
	}
	return upd;
}

/*
 * One row group (rows[0 .. gn - 1], C rows m0 + i mod M) on one
 * executed tile: scores, softmax, PV. st: the group's state (ot, gm, gl).
 */
static void fast_group_tile(const struct kern *k, const struct unit *u,
			    const struct tile_ops *ops, const struct row *rows, int m0, int gn,
			    const int32_t *dot, size_t kstride, int kb, int hi,
			    float *ot, float *gm, float *gl, struct fscratch *f,
			    int *vstaged, int fuse)
{
	float alpha[TILE_ROWS];
	uint16_t upd;
	int N = k->N, nv = hi - kb < N ? hi - kb : N;

	/* Rows sharing one slot order of TILE_KEYS columns: vectors (tile_fast). */
	if (k->ord_ok) {
		int lo16[TILE_ROWS] = { 0 }, hi16[TILE_ROWS] = { 0 };
		float sq[TILE_ROWS] = { 0 };
		uint16_t valid = 0;

		for (int i = 0; i < gn; i++) {
			vis_range(k, &rows[i], kb, hi, &lo16[i], &hi16[i]);
			sq[i] = rows[i].sq;
			valid |= (uint16_t)(rows[i].valid << i);
		}
		ops->scores16(gn, dot, sq, f->ksc, (float)k->c->softmax_scale,
			      lo16, hi16, f->ws);
		/* Soft cap and ALiBi: the scalar executor's call, per visible
		 * score, so the same bits (a plain loop: they are rare). */
		for (int i = 0; k->lmod.on && i < gn; i++)
			for (int n = lo16[i]; n < hi16[i]; n++)
				f->ws[i * N + n] = logit_apply(&k->lmod, f->ws[i * N + n],
							       rows[i].qh,
							       kb + n - rows[i].q_pos);
		fast_scores_out(k, u, rows, gn, kb, hi, f->ws);
		upd = ops->softmax16(gn, valid, &k->ord, f->ws, f->ex, gm, gl,
				     alpha, f->vis);
	} else {
		upd = fast_softmax_slots(k, u, ops, rows, m0, gn, dot, kstride, kb, hi,
					 gm, gl, alpha, f);
	}
	if (!upd)
		return;
	/* One row group (decode): int8 V converted inside PV, never staged. */
	if (fuse && k->N == TILE_KEYS) {
		const int8_t *v8 = tile_v_i8(k, u, kb, nv, f);

		if (v8) {
			ops->pv_i8(ot, gn, k->D, v8, k->BS, f->vsc, f->ex, f->vis,
				   upd, alpha, f->vn);
			return;
		}
	}
	if (!*vstaged && nv > 0) {
		stage_v(k, u, ops, kb, nv, f);
		*vstaged = 1;
	}
	ops->pv(ot, gn, k->D, f->vn, N, f->ex, f->vis, upd, alpha);
}

int attn_fast_segs(const struct kern *k, const struct unit *u,
		   const struct tile_ops *ops, int sg0, int sg1, size_t tile,
		   struct rstate *sts, struct scratch *x, struct fscratch *f)
{
	struct attn_result *r = k->r;
	int R = u->nrt * k->M, N = k->N;
	int dec = k->c->mode == MODE_DECODE, slots = k->W * k->EC;
	int nrows = dec ? k->G : R, ng = (nrows + TILE_ROWS - 1) / TILE_ROWS;
	size_t kstride = (size_t)ng * TILE_ROWS * N;
	const struct lanemap_operand *oc = &k->lm->op[LM_C];

	/* Group j holds rows x->rows[j * TILE_ROWS ...]; prefill: one row tile. */
	if (!dec)
		ng = u->nrt;
	attn_unit_rows(k, u, x->rows);
	for (int j = 0; j < ng; j++) {
		int g0 = dec ? j * TILE_ROWS : j * k->M;
		int gn = dec ? (nrows - g0 < TILE_ROWS ? nrows - g0 : TILE_ROWS) : k->M;

		for (int i = 0; i < TILE_ROWS; i++) {
			int8_t *qd = &f->qb[((size_t)j * TILE_ROWS + i) * k->D];
			int32_t s = 0;

			if (i < gn && x->rows[g0 + i].valid)
				memcpy(qd, x->rows[g0 + i].q, (size_t)k->D);
			else
				memset(qd, 0, (size_t)k->D);
			for (int d = 0; d < k->D; d++)
				s += qd[d];
			f->qsum[j * TILE_ROWS + i] = s;
		}
	}
	for (int sg = sg0; sg < sg1; sg++) {
		struct rstate *st = &sts[(size_t)sg * nrows];
		int lo, hi;

		attn_seg_bounds(k, u->s, sg, &lo, &hi);
		for (size_t i = 0; i < (size_t)ng * TILE_ROWS; i++) {
			f->gm[i] = -INFINITY;
			f->gl[i] = 0.0f;
		}
		memset(f->ot, 0, (size_t)ng * TILE_ROWS * k->D * sizeof(float));
		for (int kb = lo; kb < hi; kb += N) {
			int any = 0, vstaged = 0;
			const int8_t *kt;
			size_t cstride;

			for (int i = 0; i < u->nrt; i++)
				any |= f->needed[i] = fast_needed(k, &x->rows[i * k->M], kb, hi);
			if (!any)
				continue;
			cstride = attn_fast_tile_k(k, u, kb, f->kst, &kt);
			if (kb % k->BS == 0 && k->BS >= N)
				attn_fast_prefetch(k, u, kb + k->BS, hi);
			attn_fast_kscales(k, u, kb, hi, f->ksc);
			for (int j = 0; j < ng; j++) {
				int gn = dec ? (nrows - j * TILE_ROWS < TILE_ROWS ? nrows - j * TILE_ROWS : TILE_ROWS) : k->M;
				const int8_t *q = &f->qb[(size_t)j * TILE_ROWS * k->D];

				if (!(dec ? f->needed[0] : f->needed[j]))
					continue;
				if (k->per_block32)
					attn_fast_qk_ksteps(k, q, gn, kt, cstride,
						  &f->dot[(size_t)j * TILE_ROWS * N], kstride);
				else
					ops->qk(q, &f->qsum[j * TILE_ROWS], gn, kt, cstride, N,
						k->D, &f->dot[(size_t)j * TILE_ROWS * N]);
			}
			/* The C registers of each executed tile, in the scalar order. */
			for (int i = 0; i < u->nrt; i++) {
				if (!f->needed[i])
					continue;
				if (r->acc) {
					for (int ks = 0; ks < r->ksteps_in_acc; ks++)
						for (int sl = 0; sl < slots; sl++) {
							int m = oc->row[sl], ri = i * k->M + m;
							int row = dec ? ri % k->G : i * TILE_ROWS + m;
							int32_t v = x->rows[ri].valid ?
								f->dot[ks * kstride + (size_t)row * N + oc->col[sl]] : 0;

							f->creg[ks * slots + sl] = v;
						}
					attn_acc_store(k, u, tile, u->rt0 + i, kb, f->creg);
				}
				tile++;
			}
			for (int j = 0; j < ng; j++) {
				int g0 = j * TILE_ROWS;
				int gn = dec ? (nrows - g0 < TILE_ROWS ? nrows - g0 : TILE_ROWS) : k->M;

				if (!(dec ? f->needed[0] : f->needed[j]))
					continue;
				fast_group_tile(k, u, ops, &x->rows[dec ? g0 : j * k->M],
						dec ? g0 : 0, gn,
						&f->dot[(size_t)g0 * N], kstride, kb, hi,
						&f->ot[(size_t)g0 * k->D], &f->gm[g0], &f->gl[g0],
						f, &vstaged, ng == 1 && dec);
			}
		}
		/* The segment's states, in the scalar layout, for attn_merge_row. */
		for (int j = 0; j < ng; j++) {
			int gn = dec ? (nrows - j * TILE_ROWS < TILE_ROWS ? nrows - j * TILE_ROWS : TILE_ROWS) : k->M;
			int g0 = dec ? j * TILE_ROWS : j * k->M;

			for (int i = 0; i < gn; i++) {
				struct rstate *s = &st[g0 + i];

				s->m = f->gm[j * TILE_ROWS + i];
				s->l = f->gl[j * TILE_ROWS + i];
				memcpy(s->o, &f->ot[((size_t)j * TILE_ROWS + i) * k->D],
				       (size_t)k->D * sizeof(float));
			}
		}
	}
	return 0;
}

void attn_fast_merge(const struct kern *k, const struct unit *u,
		     const struct tile_ops *ops, struct rstate *sts, struct scratch *x,
		     int i0, int i1)
{
	int nseg = case_segments_of(k->c, u->s), R = u->nrt * k->M;
	int nrows = k->c->mode == MODE_DECODE ? k->G : R;

	attn_unit_rows(k, u, x->rows);
	for (int i = i0; i < i1 && i < nrows; i++) {
		struct rstate *segs[ATTN_MAX_SEGMENTS];

		if (!x->rows[i].valid)
			continue;
		for (int sg = 0; sg < nseg; sg++)
			segs[sg] = &sts[(size_t)sg * nrows + i];
		attn_merge_row(k, u, &x->rows[i], segs, nseg, ops->merge);
	}
}

int attn_fast_unit(const struct kern *k, const struct unit *u,
		   const struct tile_ops *ops, struct scratch *x, struct fscratch *f)
{
	if (attn_fast_segs(k, u, ops, 0, case_segments_of(k->c, u->s), u->tile0,
			   x->st, x, f))
		return -1;
	attn_fast_merge(k, u, ops, x->st, x, 0, u->nrt * k->M);
	return 0;
}