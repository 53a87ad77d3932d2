/*
 * pv_fast.c - the fast executor of INT8 PV (pv.mode: int8): the same
 * work unit as pv_int8.c, group by group in its order, for the correct
 * kernel on its own hardware map, with the register round trips of the
 * two products taken out. Called by the driver (attn.c) only; it calls
 * pv_int8.c for the layout of a group's golden rows, attn_spec.c for the
 * replica check and merge, attn_fast.c for K's staging and scales, and
 * the vector kernels (tile_fast.h: qk, exp, vquad, pvq, pvo). Its steps
 * 2 and 3 are pv_int8.c's for the correct kernel only (V per token or
 * per channel): a change to those (a new V scale, say) must be made in
 * both, or the case kept off this executor (pv_fast_ok).
 *
 * Why it gives the scalar executor's bytes (acc, scores, probs, out,
 * seg states, p_int8, p_scale, pv_acc, pv_tiles), group by group:
 *   - QK: as attn_fast.h argues for f32 PV, for the correct kernel on its
 *     own map (hw == lm) load_q, load_k and mmac_read are the identity on
 *     the matrices, so the C registers of a tile are the profile's
 *     scatter of C = Q K^T: computed here as int32 dot products (the qk
 *     kernel, K staged under load_k's rule by attn_fast_tile_k), then
 *     placed slot by slot for acc (C row invalid: 0, as its Q registers
 *     are), tile by tile in the scalar order; scores as fast_scores_out
 *     says.
 *   - Scores: for the correct kernel every column map is the profile's
 *     (col_scale = col_mask = col_write = col), so attn_spec_recover's
 *     ws[m][n] is (float)C[m][n] * sq * sK(kb + n) * scale (per_block32:
 *     the K-steps' (float)C * sK summed in K-step order, then * sq *
 *     scale), then logit_apply, where attn_key_visible says so, else
 *     -inf: computed here the same way, per (m, n), with the same K
 *     scales (attn_fast_kscales), attn_key_visible's conditions taken as
 *     one range of keys per row (fast_visible).
 *   - Softmax (fast_softmax): pv_int8.c's group_softmax for the correct
 *     kernel (one max for the group) with the exps computed ahead by the
 *     exp kernel, fs_expf bit for bit: the max and the sum walk each row's
 *     slots in its order, the sum split by lane as there, l fused as
 *     there. Quantization (fast_quantize) is group_quantize with every
 *     bug off, the same operations in its order, quant_apply's Pq.
 *     Where the computed rows share one slot order (ordok), the max and
 *     the sums run rows side by side (gmax, gsum: lane r is row r's
 *     sequence, no sum reassociated) and P' with its max by gscale.
 *   - V columns (fast_vcols): attn_v_col's, a block's run of keys read
 *     as f32 PV's tile_v_i8 reads them (next slots, scales Hkv apart).
 *   - The A registers are built from Pq through the plan as the scalar
 *     executor builds them (p_int8 is those bytes) and read through the
 *     map with mmac_read, as it does: A[m][c] for every (m, c). When A's
 *     registers are not kept and each entry has one slot (mmac_read
 *     cannot find replicas that disagree), A[m][c] is taken from its
 *     owner slot's Pq entry directly (arow, aidx): the same bytes.
 *   - PV: B[c][n] of column tile dt is the V byte of key bkey[c] (the plan's
 *     b_key of B row c: every slot of row c names the same key, checked
 *     by pv_fast_ok), element dt * N + n, poison past the column's end, as
 *     group_product loads it. So C = A B of each column tile is
 *     pv_acc[m][d] = sum over c of A[m][c] * Vb[c][d] with Vb[c][d] the
 *     byte of key bkey[c]: the pvq kernel computes that for all D at once
 *     in int32, exact (|A B| <= 2^14 per term, K terms: no wrap, so the
 *     scalar's wrapping sum is the same number), then it is scattered into
 *     the C register order the golden keeps.
 *   - O: group_product does o *= alpha per active row, then per C slot
 *     that is its entry's primary o = fmaf((float)C, sP, o). A valid map
 *     holds every entry (m, n), so that is one o = fmaf((float)C[m][d],
 *     sP, o * alpha) per (active row, d): the pvo kernel, the same floats.
 * Decode, one row tile (G < M), replica rows summing their slots in
 * their primary's order (attn_fast_rows_agree): a replica row has its
 * primary's Q, mask and slot order, so every step above gives it its
 * primary's values; only the f->mr = G distinct rows are computed, and a
 * replica's Pq, sP and C row are copied from its primary (packed rows
 * past G are invalid: zero A rows, C 0). replica_mismatch is then 0 by
 * construction, as attn_fast.h says for f32 PV, so the replicas' states
 * are not kept: pv_fast_unit and the driver's pv_split keep and merge the
 * G rows' only (pv_fast_segs' rst). Otherwise (prefill,
 * several row tiles, orders that differ) every row runs as its own.
 */
#include "attn_fast.h"
#include "attn_spec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lanemap/mmac.h"
#include "quant.h"

int pv_fast_ok(const struct kern *k)
{
	const struct lanemap_operand *oa = &k->lm->op[LM_A], *ob = &k->lm->op[LM_B];
	int key[LM_MAX_SLOTS];

	if (!k->pv.on || k->hw != k->lm ||
	    k->M > TILE_ROWS || k->D % TILE_CHUNK ||
	    oa->type != LM_I8 || ob->type != LM_I8 || k->lm->op[LM_C].type != LM_I32 ||
	    k->K > LM_MAX_SLOTS || k->K % 4)
		return 0;
	/* every B slot of row c loads the same key */
	for (int c = 0; c < k->K; c++)
		key[c] = -1;
	for (int s = 0; s < k->W * k->EB; s++) {
		int c = ob->row[s];

		if (key[c] >= 0 && key[c] != k->pv.b_key[s])
			return 0;
		key[c] = k->pv.b_key[s];
	}
	for (int c = 0; c < k->K; c++)
		if (key[c] < 0)
			return 0;
	return 1;
}

/* The rows computed of a row tile (f->mr): G for decode whose replica
 * rows agree with their primaries (see the head), else M. */
static int pv_fast_rows(const struct kern *k)
{
	return k->c->mode == MODE_DECODE && k->G < k->M && attn_fast_rows_agree(k) ?
	       k->G : k->M;
}

int pv_fast_state_rows(const struct kern *k, int nrt)
{
	return pv_fast_rows(k) < k->M && nrt == 1 ? k->G : nrt * k->M;
}

int pv_fast_carve(const struct kern *k, int nrt, struct pv_fscratch *f, struct slab *sb)
{
	const struct lanemap_operand *ob = &k->lm->op[LM_B];
	size_t M = (size_t)k->M, D = (size_t)k->D, K = (size_t)k->K;

	if (k->N > 256)
		return -1;
	f->kst = slab_take(sb, (size_t)k->pv.GT * D * k->N);
	f->kp = slab_take(sb, (size_t)k->pv.GT * sizeof(*f->kp));
	f->kcs = slab_take(sb, (size_t)k->pv.GT * sizeof(*f->kcs));
	f->qb = slab_take(sb, (size_t)nrt * M * D);
	f->qsum = slab_take(sb, (size_t)nrt * M * sizeof(int32_t));
	f->dot = slab_take(sb, (size_t)k->ksteps * M * k->N * sizeof(int32_t));
	f->a8 = slab_take(sb, M * K);
	f->b4 = slab_take(sb, K * D);
	f->c = slab_take(sb, M * D * sizeof(int32_t));
	f->bkey = slab_take(sb, K * sizeof(int));
	f->ksc = slab_take(sb, (size_t)k->pv.GT * k->ksteps * k->N * sizeof(float));
	f->ex = slab_take(sb, (M * K + M) * sizeof(float));
	f->sv = slab_take(sb, K * sizeof(float));
	f->vk = slab_take(sb, K * sizeof(*f->vk));
	f->sq = slab_take(sb, M * sizeof(float));
	f->lo = slab_take(sb, M * sizeof(int));
	f->hi = slab_take(sb, M * sizeof(int));
	f->arow = slab_take(sb, M * K * sizeof(int));
	f->aidx = slab_take(sb, M * K * sizeof(int));
	f->rcol = slab_take(sb, M * (size_t)k->rowcap);
	f->rbrk = slab_take(sb, M * (size_t)k->rowcap);
	if (!sb->base || sb->used > sb->cap)
		return sb->base ? -1 : 0;
	for (int s = 0; s < k->W * k->EB; s++)
		f->bkey[ob->row[s]] = k->pv.b_key[s];
	for (int i = 0; i < k->M * k->K; i++) {
		int s = k->lm->op[LM_A].owner[i * k->lm->op[LM_A].replicas];

		f->arow[i] = k->pv.a_row[s];
		f->aidx[i] = k->pv.a_row[s] * k->pv.GK + k->pv.a_key[s];
	}
	f->aid = 0;
	for (int m = 0; k->K == k->pv.GK && m < k->M; m++) {
		int same = 1;

		for (int c = 0; c < k->K; c++)
			same &= f->arow[m * k->K + c] == m && f->aidx[m * k->K + c] == m * k->pv.GK + c;
		f->aid |= (uint16_t)(same << m);
	}
	f->mr = pv_fast_rows(k);
	/* each row's slots in slot order: their column, and whether each
	 * starts a new lane (the softmax's sum breaks there) */
	for (int m = 0; m < k->M; m++)
		for (int i = 0; i < k->rowcount[m]; i++) {
			const int *sl = &k->rowslots[m * k->rowcap];

			f->rcol[m * k->rowcap + i] = (uint8_t)k->col_write[sl[i]];
			f->rbrk[m * k->rowcap + i] = (uint8_t)(i == 0 ||
							       sl[i] / k->EC != sl[i - 1] / k->EC);
		}
	/* one slot order for the computed rows: the group kernels' */
	f->ordok = k->N == TILE_KEYS && f->mr <= TILE_ROWS;
	for (int m = 0; f->ordok && m < f->mr; m++)
		f->ordok = k->rowcount[m] == TILE_KEYS &&
			   !memcmp(&f->rcol[m * k->rowcap], f->rcol, TILE_KEYS) &&
			   !memcmp(&f->rbrk[m * k->rowcap], f->rbrk, TILE_KEYS);
	memset(&f->ord, 0, sizeof(f->ord));
	for (int i = 0; f->ordok && i < TILE_KEYS; i++) {
		f->ord.col[i] = f->rcol[i];
		f->ord.brk |= (uint16_t)(f->rbrk[i] << i);
	}
	return 0;
}

/* The computed row whose values C row m takes (see the head), -1 for none. */
static int fast_src(const struct kern *k, const struct pv_fscratch *f,
		    const struct row *rows, int m)
{
	return m < f->mr ? m : rows[m].valid ? m % k->G : -1;
}

/* Copy a replica row's Pq, sP and softmax step from its primary. */
static void fast_replicas(const struct kern *k, const struct row *rows,
			  struct pv_scratch *x, const struct pv_fscratch *f)
{
	for (int m = f->mr; m < k->M; m++) {
		int p = fast_src(k, f, rows, m);

		if (p < 0)
			continue;
		memcpy(&x->pq[m * k->pv.GK], &x->pq[p * k->pv.GK], (size_t)k->pv.GK);
		x->sp[m] = x->sp[p];
		x->active[m] = x->active[p];
		x->alpha[m] = x->alpha[p];
	}
}

/* Q of the unit's row tiles, a row of zeros where invalid, and its sums. */
static void fast_q(const struct kern *k, const struct unit *u, const struct row *rows,
		   struct pv_fscratch *f)
{
	for (int r = 0; r < u->nrt * k->M; r++) {
		int8_t *qd = &f->qb[(size_t)r * k->D];
		int32_t s = 0;

		if (rows[r].valid)
			memcpy(qd, rows[r].q, (size_t)k->D);
		else
			memset(qd, 0, (size_t)k->D);
		for (int d = 0; d < k->D; d++)
			s += qd[d];
		f->qsum[r] = s;
	}
}

/*
 * The keys kt + [*a, *b) of a tile that row w sees: attn_key_visible's
 * conditions (valid, before the segment's end, at most its last key, from
 * k_lo, inside the window) are each a bound, so together one range.
 */
static void fast_visible(const struct kern *k, const struct row *w, int hi, int kt,
			 int *a, int *b)
{
	int lo = kt, up = kt + k->N;
	int last = w->q_pos + (k->kn->q_position == KQPOS_OFF_BY_ONE);

	*a = *b = 0;
	if (!w->valid)
		return;
	if (up > hi)
		up = hi;
	if (up > last + 1)
		up = last + 1;
	if (lo < w->k_lo)
		lo = w->k_lo;
	if (k->c->sliding_window > 0 &&
	    lo < w->q_pos - k->c->sliding_window - k->kn->window_edge + 1)
		lo = w->q_pos - k->c->sliding_window - k->kn->window_edge + 1;
	if (lo < up)
		*a = lo - kt, *b = up - kt;
}

/*
 * The group's tile t at kt, the same for each row tile: its K (in place
 * or staged) and its K scales.
 */
static void fast_tile_k(const struct kern *k, const struct unit *u, int t, int kt, int hi,
			struct pv_fscratch *f)
{
	f->kcs[t] = attn_fast_tile_k(k, u, kt, &f->kst[(size_t)t * k->D * k->N], &f->kp[t]);
	attn_fast_kscales(k, u, kt, hi, &f->ksc[(size_t)t * k->ksteps * k->N]);
}

/*
 * Row tile i on the group's tile t at kt (fast_tile_k's K): C as dots,
 * its C registers into creg when acc is kept, and the workspace ws
 * (attn_spec_recover's values, see the head).
 */
static void fast_tile(const struct kern *k, const struct tile_ops *ops,
		      const struct row *rows, int i, int t, int kt, int hi,
		      struct pv_fscratch *f, int32_t *creg, float *ws)
{
	const struct lanemap_operand *oc = &k->lm->op[LM_C];
	const int8_t *kp = f->kp[t], *q = &f->qb[(size_t)i * k->M * k->D];
	const float *ksc = &f->ksc[(size_t)t * k->ksteps * k->N];
	size_t cstride = f->kcs[t], kstride = (size_t)k->M * k->N;
	int slots = k->W * k->EC, nks = k->per_block32 ? k->ksteps : 1, N = k->N;
	float ss = (float)k->c->softmax_scale;

	if (k->per_block32)
		attn_fast_qk_ksteps(k, q, f->mr, kp, cstride, f->dot, kstride);
	else
		ops->qk(q, &f->qsum[i * k->M], f->mr, kp, cstride, N, k->D, f->dot);
	for (int ks = 0; creg && ks < nks; ks++)
		for (int sl = 0; sl < slots; sl++) {
			int m = fast_src(k, f, rows, oc->row[sl]);

			creg[ks * slots + sl] = m >= 0 && rows[m].valid ?
				f->dot[ks * kstride + (size_t)m * N + oc->col[sl]] : 0;
		}
	if (N == TILE_KEYS && !k->per_block32 && !k->lmod.on) {
		/* the same product left to right, rows side by side */
		for (int m = 0; m < f->mr; m++) {
			fast_visible(k, &rows[m], hi, kt, &f->lo[m], &f->hi[m]);
			f->sq[m] = rows[m].sq;
		}
		ops->scores16(f->mr, f->dot, f->sq, ksc, ss, f->lo, f->hi, ws);
		return;
	}
	for (int m = 0; m < f->mr; m++) {
		const struct row *w = &rows[m];
		int a, b;

		fast_visible(k, w, hi, kt, &a, &b);
		for (int n = 0; n < N; n++)
			if (n < a || n >= b)
				ws[m * N + n] = -INFINITY;
		for (int n = a; n < b; n++) {
			const int32_t *dt = &f->dot[(size_t)m * N + n];
			float sc;

			if (k->per_block32) {
				float acc = 0.0f;

				for (int ks = 0; ks < k->ksteps; ks++)
					acc += (float)dt[ks * kstride] * ksc[ks * N + n];
				sc = acc * w->sq * ss;
			} else {
				sc = (float)dt[0] * w->sq * ksc[n] * ss;
			}
			if (k->lmod.on)
				sc = logit_apply(&k->lmod, sc, w->qh, kt + n - w->q_pos);
			ws[m * N + n] = sc;
		}
	}
}

/*
 * attn_spec_store_scores for keys kt .. hi - 1 only. A tile that crosses
 * its segment's end holds -inf past it, which the scalar executor writes
 * and the next segment's tile then overwrites; that segment may run on
 * another thread here (pv_split), so only the segment's own keys are
 * written: the same final bytes (keys past the context stay -inf).
 */
static void fast_scores_out(const struct kern *k, const struct unit *u,
			    const struct row *rows, int kt, int hi, const float *ws)
{
	float *sc = k->r->scores;

	for (int m = 0; sc && m < k->M; m++) {
		const struct row *w = &rows[m];
		size_t ri;

		if (!w->primary)
			continue;
		ri = ((size_t)u->s * k->T + w->t) * k->Hq + w->qh;
		for (int n = 0; n < k->N && kt + n < hi && kt + n < k->MAXCTX; n++)
			sc[ri * k->MAXCTX + kt + n] = ws[m * k->N + n];
	}
}

/*
 * fast_softmax when the computed rows share one slot order (f->ordok):
 * the same operations, each row's in its order, rows side by side (the
 * gmax and gsum kernels).
 */
static void fast_softmax_rows(const struct kern *k, const struct tile_ops *ops,
			      const struct row *rows, struct pv_scratch *x,
			      struct pv_fscratch *f, struct rstate *st)
{
	int N = k->N, GT = k->pv.GT, GK = k->pv.GK, M = k->M;
	float *ex = f->ex, *ea = &f->ex[M * GK], mx[TILE_ROWS], sum[TILE_ROWS];
	uint16_t act = 0;

	for (int m = 0; m < M; m++) {
		x->active[m] = 0;
		ea[m] = 0.0f;
		if (m < f->mr && rows[m].valid)
			act |= (uint16_t)(1u << m);
		if (m < TILE_ROWS)
			mx[m] = -INFINITY, sum[m] = 0.0f;
	}
	ops->gmax(f->mr, GT, M, &f->ord, act, x->ws, mx);
	for (int m = 0; m < M; m++) {
		float *em = &ex[m * GK];

		if (act >> m & 1) {
			if (mx[m] < st[m].m)
				mx[m] = st[m].m;
			if (mx[m] == -INFINITY)
				act &= (uint16_t)~(1u << m);
		}
		if (!(act >> m & 1)) {
			/* rows past f->mr: no exps taken, none read */
			for (int j = 0; m < f->mr && j < GK; j++)
				em[j] = -INFINITY;
			continue;
		}
		x->active[m] = 1;
		ea[m] = st[m].m == -INFINITY ? 0.0f : st[m].m - mx[m];
		for (int t = 0; t < GT; t++) {
			const float *w = &x->ws[(size_t)t * M * N + m * N];

			for (int n = 0; n < N; n++)
				em[t * N + n] = w[n] - mx[m];
		}
		x->sp[m] = mx[m];	/* the new max, until the quantization's sP */
	}
	/* rows past f->mr are not computed: their exps are never read */
	ops->exp(ex, f->mr * GK);
	ops->exp(ea, M);
	/* P of the computed rows: the rest have sP 0 (fast_quantize), their
	 * Pq 0 or a primary's, and P never read */
	memset(x->p, 0, (size_t)f->mr * GK * sizeof(float));
	ops->gsum(f->mr, GT, M, &f->ord, act, x->ws, ex, x->p, sum);
	for (int m = 0; m < f->mr; m++) {
		if (!x->active[m])
			continue;
		x->alpha[m] = st[m].m == -INFINITY ? 0.0f : ea[m];
		st[m].l = fmaf(st[m].l, x->alpha[m], sum[m]);	/* fused, as pv_int8.c */
		st[m].m = x->sp[m];
	}
}

/*
 * Step 2 for the correct kernel: group_softmax's loops with the exps
 * ahead (f->ex: P's arguments [M][GK], then the alphas' [M]).
 */
static void fast_softmax(const struct kern *k, const struct tile_ops *ops,
			 const struct row *rows, struct pv_scratch *x,
			 struct pv_fscratch *f, struct rstate *st)
{
	int N = k->N, GT = k->pv.GT, GK = k->pv.GK, M = k->M;
	float *ex = f->ex, *ea = &f->ex[M * GK];

	if (f->ordok) {
		fast_softmax_rows(k, ops, rows, x, f, st);
		return;
	}
	for (int m = 0; m < M; m++) {
		const uint8_t *rc = &f->rcol[m * k->rowcap];
		float mx = -INFINITY;

		x->active[m] = 0;
		ea[m] = 0.0f;
		for (int j = 0; j < GK; j++)
			ex[m * GK + j] = -INFINITY;
		if (m >= f->mr || !rows[m].valid)
			continue;	/* not computed: a replica copies its primary */
		for (int t = 0; t < GT; t++)
			for (int i = 0; i < k->rowcount[m]; i++) {
				float v = x->ws[(size_t)t * M * N + m * N + rc[i]];

				if (v > mx)
					mx = v;
			}
		if (mx < st[m].m)
			mx = st[m].m;
		if (mx == -INFINITY)
			continue;
		x->active[m] = 1;
		ea[m] = st[m].m == -INFINITY ? 0.0f : st[m].m - mx;
		for (int t = 0; t < GT; t++)
			for (int i = 0; i < k->rowcount[m]; i++) {
				int n = rc[i];

				ex[m * GK + t * N + n] = x->ws[(size_t)t * M * N + m * N + n] - mx;
			}
		x->sp[m] = mx;	/* the new max, until the quantization's sP */
	}
	/* rows past f->mr are not computed: their exps are never read */
	ops->exp(ex, f->mr * GK);
	ops->exp(ea, M);
	for (int m = 0; m < M; m++) {
		const uint8_t *rc = &f->rcol[m * k->rowcap], *rb = &f->rbrk[m * k->rowcap];
		float sum = 0.0f;

		for (int j = 0; j < GK; j++)
			x->p[m * GK + j] = 0.0f;
		if (!x->active[m])
			continue;
		x->alpha[m] = st[m].m == -INFINITY ? 0.0f : ea[m];
		for (int t = 0; t < GT; t++) {
			const float *ws = &x->ws[(size_t)t * M * N];
			float part = 0.0f;

			for (int i = 0; i < k->rowcount[m]; i++) {
				int n = rc[i];

				if (rb[i]) {	/* a new lane: its part into the sum */
					sum += part;
					part = 0.0f;
				}
				x->p[m * GK + t * N + n] = ws[m * N + n] == -INFINITY ? 0.0f :
							   ex[m * GK + t * N + n];
				part += x->p[m * GK + t * N + n];
			}
			sum += part;
		}
		st[m].l = fmaf(st[m].l, x->alpha[m], sum);	/* fused, as pv_int8.c */
		st[m].m = x->sp[m];
	}
}

/*
 * Step 3 for the correct kernel (pv_int8.c's group_quantize with every
 * bug off): P' = P sV(key) where the key is not masked (ws -inf: its
 * scale is not read), 0 where it is; sP = the first largest P' (NaN
 * taken, as there) / clip; Pq = quant_apply's. Rows not active have sP
 * 0 and P 0, as there. V per_channel: P' = clip P, Pq = round(P'), sP
 * = 1 / clip, as there.
 */
static void fast_quantize(const struct kern *k, const struct tile_ops *ops,
			  struct pv_scratch *x, const struct pv_fscratch *f)
{
	int GK = k->pv.GK, N = k->N, M = k->M;
	/* V per_channel: P' = clip P where visible, Pq = round(P'), the fixed
	 * sP = 1 / clip (sV comes in the epilogue), as group_quantize */
	int chan = k->in->v_scale_ch != NULL;
	float clip = (float)k->c->clip;

	if (f->ordok && !chan) {
		/* the same operations (gscale) */
		float mx[TILE_ROWS];
		uint16_t act = 0;

		for (int m = 0; m < f->mr; m++) {
			mx[m] = 0.0f;
			act |= (uint16_t)((x->active[m] != 0) << m);
		}
		ops->gscale(f->mr, k->pv.GT, M, act, x->ws, f->sv, x->p, mx);
		for (int m = 0; m < M; m++) {
			x->sp[m] = act >> m & 1 ? mx[m] / (float)k->c->clip : 0.0f;
			quant_apply(&x->p[m * GK], GK, x->sp[m], k->c->clip, k->c->rounding,
				    &x->pq[m * GK]);
		}
		return;
	}
	for (int m = 0; m < M; m++) {
		float *pm = &x->p[m * GK], mx = 0.0f;

		x->sp[m] = 0.0f;
		if (x->active[m]) {
			/* by tiles: key t N + n's score at ws[t][m][n] */
			for (int t = 0; t < k->pv.GT; t++) {
				const float *ws = &x->ws[(size_t)t * M * N + m * N];
				float *pt = &pm[t * N];
				const float *sv = &f->sv[t * N];

				for (int n = 0; n < N; n++) {
					if (ws[n] == -INFINITY) {
						pt[n] = 0.0f;
						continue;
					}
					pt[n] *= chan ? clip : sv[n];
					/* NaN propagates: fmaxf would drop it */
					if (!(pt[n] <= mx))
						mx = pt[n];
				}
			}
			x->sp[m] = chan ? 1.0f / clip : mx / clip;
		}
		quant_apply(pm, GK, chan && x->active[m] ? 1.0f : x->sp[m], k->c->clip,
			    k->c->rounding, &x->pq[m * GK]);
	}
}

/*
 * The group's V columns (attn_v_col's: the bytes B reads, f->vk) and
 * their scales. Keys of one stored block inside the context are that
 * block's consecutive slots, as attn_fast.c's tile_v_i8 reads them for
 * f32 PV (the correct kernel: its block is the table's): the first key's
 * column and the next slots, scales [NB][BS][Hkv] Hkv apart, the same
 * values as a call per key, which a run of keys held to less (a column
 * gathered or poisoned, past the context, a first scale that is not the
 * slot's) still makes. Only a column's address, stride and length are
 * kept: a struct vcol a key cost a Xeon more than the product of B.
 */
static void fast_vcols(const struct kern *k, const struct unit *u, int kb,
		       struct pv_fscratch *f)
{
	int GK = k->pv.GK, BS = k->BS, ctx = k->c->seqs[u->s].context;
	size_t Hkv = (size_t)k->Hkv;

	for (int j = 0; j < GK;) {
		int tok = kb + j, len = BS - tok % BS, blk = -1;
		struct vcol v0 = attn_v_col(k, u, tok);
		const float *vs = NULL;

		if (len > GK - j)
			len = GK - j;
		f->vk[j] = (struct pv_vkey){ v0.i8, v0.stride, v0.n };
		f->sv[j] = v0.scale;
		if (len > 1 && tok + len <= ctx && k->KBS == BS &&
		    (k->in->v_scale || v0.sch) &&
		    k->c->v_dtype == VDT_INT8 && !v0.gather && v0.stride == (size_t)BS &&
		    v0.n == k->D && !v0.s16 && v0.i8)
			blk = inputs_block_at(k->in, attn_v_block(k, u->s, tok));
		if (blk >= 0 && !v0.sch) {
			vs = &k->in->v_scale[((size_t)blk * BS + tok % BS) * Hkv +
					     (size_t)attn_kv_head(k, u)];
			if (memcmp(&vs[0], &v0.scale, sizeof(float)))
				vs = NULL;
		}
		/* per_channel (v0.sch): the run's bytes, no slot's scale */
		if (blk < 0 || (!v0.sch && !vs))
			len = 1;
		for (int i = 1; i < len; i++) {
			f->vk[j + i] = (struct pv_vkey){ v0.i8 + i, v0.stride, v0.n };
			f->sv[j + i] = vs ? vs[(size_t)i * Hkv] : v0.scale;
		}
		j += len;
	}
}

/*
 * B of the group, four keys a d (tile_fast.h's b4): a run of quads of
 * keys in consecutive slots of one int8 column each (a block's keys of
 * the group) by the vquad kernel; any other quad byte by byte, as
 * group_product reads B (poison past a column's end).
 */
static int fast_quad_run(const struct kern *k, const struct pv_fscratch *f, int j0)
{
	const struct pv_vkey *v0 = &f->vk[f->bkey[j0]];
	int j = j0;

	if (v0->n < k->D || v0->stride == 0 || v0->stride > INT32_MAX)
		return 0;
	for (; j < k->pv.GK; j++) {
		const struct pv_vkey *v = &f->vk[f->bkey[j]];

		if (v->n < k->D || v->stride != v0->stride || v->i8 != v0->i8 + (j - j0))
			break;
	}
	return (j - j0) / 4;
}

static void fast_b4(const struct kern *k, const struct tile_ops *ops, struct pv_fscratch *f)
{
	int D = k->D;

	for (int q = 0; q < k->pv.GK / 4;) {
		int8_t *bq = &f->b4[(size_t)q * D * 4];
		int run = fast_quad_run(k, f, 4 * q);

		if (run) {
			const struct pv_vkey *v0 = &f->vk[f->bkey[4 * q]];

			ops->vquad(v0->i8, (int)v0->stride, D, run, bq);
			q += run;
			continue;
		}
		for (int i = 0; i < 4; i++) {
			const struct pv_vkey *v = &f->vk[f->bkey[4 * q + i]];

			for (int d = 0; d < D; d++)
				bq[d * 4 + i] = (int8_t)(d < v->n ? v->i8[(size_t)d * v->stride] :
							 INPUTS_POISON);
		}
		q++;
	}
}

/*
 * Steps 4-6 of one group (pv_int8.c's group_product, without the
 * registers of B and C), on the group's B (fast_b4, made once for all
 * its row tiles).
 */
static int fast_product(const struct kern *k, const struct unit *u, const struct tile_ops *ops,
			const struct row *rows, int rt, int kb, size_t gi,
			struct pv_scratch *x, struct pv_fscratch *f, struct rstate *st)
{
	const struct pv_plan *p = &k->pv;
	const struct lanemap_operand *oc = &k->lm->op[LM_C];
	struct attn_result *r = k->r;
	int GK = p->GK, D = k->D, N = k->N, slots = k->W * k->EC;
	float *orow[TILE_ROWS];
	uint16_t act = 0;

	if (r->p_int8 || k->lm->op[LM_A].replicas > 1) {
		for (int s = 0; s < k->W * k->EA; s++)
			x->areg[s] = rows[p->a_row[s]].valid ?
				     (uint8_t)x->pq[p->a_row[s] * GK + p->a_key[s]] : 0;
		if (mmac_read(k->hw, LM_A, x->areg, x->am, NULL))
			return -1;
		for (int i = 0; i < k->M * GK; i++)
			f->a8[i] = (int8_t)x->am[i];
		if (r->p_int8)
			pv_int8_store_group(k, u, gi, rt, kb, x);
	} else {
		/* one slot an entry: mmac_read cannot fail, A[i] is its slot's;
		 * only the f->mr computed rows are read by pvq, and a row that
		 * is Pq's in key order (aid) is copied whole */
		for (int m = 0; m < f->mr; m++) {
			int8_t *am = &f->a8[m * GK];

			if (f->aid >> m & 1) {
				if (rows[m].valid)
					memcpy(am, &x->pq[m * GK], (size_t)GK);
				else
					memset(am, 0, (size_t)GK);
				continue;
			}
			for (int i = m * GK; i < (m + 1) * GK; i++)
				f->a8[i] = rows[f->arow[i]].valid ? x->pq[f->aidx[i]] : 0;
		}
	}
	ops->pvq(f->mr, GK, D, f->a8, f->b4, f->c);
	for (int dt = 0; r->pv_acc && dt < p->DT; dt++) {
		int32_t *acc = &r->pv_acc[(gi * p->DT + dt) * slots];

		for (int s = 0; s < slots; s++) {
			int m = fast_src(k, f, rows, oc->row[s]);

			acc[s] = m < 0 ? 0 : f->c[(size_t)m * D + dt * N + oc->col[s]];
		}
	}
	for (int m = 0; m < f->mr; m++) {
		orow[m] = st[m].o;
		act |= (uint16_t)((x->active[m] != 0) << m);
	}
	ops->pvo(f->mr, D, orow, act, x->alpha, x->sp, f->c);
	return 0;
}

int pv_fast_segs(const struct kern *k, const struct unit *u, const struct tile_ops *ops,
		 int sg0, int sg1, size_t tile, size_t gi, struct rstate *sts, int rst,
		 struct scratch *x, struct pv_scratch *px, struct pv_fscratch *f)
{
	const struct pv_plan *p = &k->pv;
	int R = u->nrt * k->M;
	int slots = k->W * k->EC, N = k->N;
	size_t cstride = (size_t)k->ksteps * slots, tsz = (size_t)k->M * N;

	attn_unit_rows(k, u, x->rows);
	fast_q(k, u, x->rows, f);
	for (int sg = sg0; sg < sg1; sg++) {
		struct rstate *st = &sts[(size_t)sg * rst];
		int lo, hi;

		attn_seg_bounds(k, u->s, sg, &lo, &hi);
		attn_spec_seg_reset(k, st, rst);
		for (int kb = lo; kb < hi; kb += p->GK) {
			int gneed = 0;

			/* K and V of the group's blocks at a segment's start; then
			 * each tile fetches the block a group ahead (below): the
			 * pool's pages are anywhere, and QK and vquad wait on them
			 * otherwise. One block a tile, as attn_fast.c does: a
			 * group's blocks at once ran slower on a Xeon. */
			for (int b = (kb + k->BS - 1) / k->BS * k->BS; kb == lo && b < kb + p->GK;
			     b += k->BS)
				attn_fast_prefetch(k, u, b, hi);
			for (int t = 0; t < p->GT; t++) {
				int kt = kb + t * N;

				px->needed[t] = pv_tile_needed(k, u, x->rows, kt, hi);
				if (px->needed[t])
					fast_tile_k(k, u, t, kt, hi, f);
				gneed |= px->needed[t];
			}
			/* the group's V, the same for each row tile: a needed
			 * tile has a row tile that reaches fast_product */
			fast_vcols(k, u, kb, f);
			if (gneed)
				fast_b4(k, ops, f);
			for (int i = 0; i < u->nrt; i++) {
				const struct row *rows = &x->rows[i * k->M];
				int any = 0;

				for (int t = 0; t < p->GT; t++) {
					int kt = kb + t * N;
					int32_t *creg = &px->creg[t * cstride];
					float *ws = &px->ws[t * tsz];

					if (!px->needed[t] || !attn_tile_needed(k, rows, kt, hi)) {
						for (size_t j = 0; j < tsz; j++)
							ws[j] = -INFINITY;
						continue;
					}
					any = 1;
					if (i == 0 && (kb + p->GK + t * N) % k->BS == 0)
						attn_fast_prefetch(k, u, kb + p->GK + t * N, hi);
					fast_tile(k, ops, rows, i, t, kt, hi, f, k->r->acc ? creg : NULL, ws);
					if (k->r->acc)
						attn_acc_store(k, u, tile, u->rt0 + i, kt, creg);
					tile++;
					fast_scores_out(k, u, rows, kt, hi, ws);
				}
				if (!any)
					continue;
				fast_softmax(k, ops, rows, px, f, &st[i * k->M]);
				fast_quantize(k, ops, px, f);
				fast_replicas(k, rows, px, f);
				if (fast_product(k, u, ops, rows, u->rt0 + i, kb, gi, px, f,
						 &st[i * k->M]))
					return -1;
				gi++;
			}
		}
		/* the replicas' states: their primaries' (when kept) */
		for (int m = f->mr; rst == R && f->mr < k->M && m < k->M; m++) {
			int src = fast_src(k, f, x->rows, m);

			if (src < 0)
				continue;
			st[m].m = st[src].m, st[m].l = st[src].l;
			memcpy(st[m].o, st[src].o, (size_t)k->D * sizeof(float));
		}
	}
	return 0;
}

int pv_fast_unit(const struct kern *k, const struct unit *u, const struct tile_ops *ops,
		 struct scratch *x, struct pv_scratch *px, struct pv_fscratch *f,
		 long *replica_bad)
{
	/* decode's replicas are copies of their primaries (see the head):
	 * their states are not kept, and there is nothing to check */
	int rst = pv_fast_state_rows(k, u->nrt);

	if (pv_fast_segs(k, u, ops, 0, case_segments_of(k->c, u->s), u->tile0, u->group0,
			 x->st, rst, x, px, f))
		return -1;
	if (rst < u->nrt * k->M)
		attn_fast_merge(k, u, ops, x->st, x, 0, k->G);
	else
		attn_spec_finish(k, u, x, replica_bad);
	return 0;
}
