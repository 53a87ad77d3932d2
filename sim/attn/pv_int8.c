/*
 * pv_int8.c - the second product through the instruction (pv.mode:
 * int8), lane by lane: O[rows, D] += P[rows, keys] x V[keys, D] with
 * A = P (M rows x K keys), B = V (K keys x N dims), C = M x N int32, one
 * instruction per (group of K keys, column tile of N dims). On gfx936
 * (16x16x32, wave64) head_dim 256 takes 16 instructions per group, all
 * sharing one A operand; sm80 m16n8k32 takes 32 (N = 8); RDNA3
 * 16x16x16 groups 16 keys.
 *
 * One group, in the kernel's order (docs/design.md, "The second
 * product"):
 *
 *   1. QK of the group's GT = K / N tiles (attn_spec.c's pieces, the
 *      same bytes), scores into each tile's workspace
 *   2. one softmax step for the whole group: the running max takes
 *      every key of the group before any P is computed; P in f32,
 *      l = l * alpha + sum of the f32 P (the normaliser sees P before
 *      quantization)
 *   3. P quantized per (row, group) with V's per-token scale folded in,
 *      P' = P * sV(key) in f32, sP = max P' / clip, Pq = round(P' / sP)
 *      (quant.rounding); sV cannot be applied after the product, as it
 *      varies along PV's reduction. V per_channel (cache.v_scale): no
 *      key's scale, P' = clip * P in f32, Pq = round(P'), the fixed
 *      sP = 1 / clip; sV[d] varies along O's columns, so it comes after
 *      the product, in the segment's epilogue (attn_merge_row)
 *   4. the regroup: A's registers from Pq through the plan (pv_int8.h):
 *      lds reads P back in A order; v_permuted keeps the C registers
 *      and loads V in the matching key order
 *   5. per column tile: B from the paged V cache, v_cache[blk][g][d]
 *      [slot], no dequantized V; the instruction (sim/lanemap/mmac)
 *   6. O = O * alpha + float(acc) * sP, fused, per C slot; per_channel
 *      the partial out is (O / l) * sV[d] (attn_merge_row)
 *
 * Worked example, gfx936, regroup v_permuted: lane 17 holds C row 1,
 * columns 1 + {0,4,8,12} of each QK tile, so its A bytes 0-3 are
 * P[1][1, 5, 9, 13] and bytes 4-7 P[1][17, 21, 25, 29]; the hardware
 * reads them as A[1][8..15], so B row 8 + e must hold V of key
 * 16 (e / 4) + 1 + 4 (e % 4): b_key[8..15] = 1 5 9 13 17 21 25 29.
 *
 * Masked keys have P = 0, so Pq = 0 and their V bytes (poison or not)
 * add nothing; their V scales are not read (the correct kernel knows
 * them by the mask value).
 */
#include "attn_spec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "../lanemap/mmac.h"
#include "quant.h"

void pv_plan_free(struct pv_plan *p)
{
	free(p->a_row);
	free(p->a_key);
	free(p->b_key);
	memset(p, 0, sizeof(*p));
}

/*
 * A slots from the C registers of the same lane: the lane's i-th A slot
 * of row r takes its i-th C entry of row r, tiles in order, registers in
 * order; key[s] = tile * N + its column. 0, or -1 when a lane's C
 * registers do not hold the A entries its A map asks for (*lane_bad,
 * *row_bad say where).
 */
static int keys_from_c(const struct lanemap *lm, int *key, int *lane_bad, int *row_bad)
{
	const struct lanemap_operand *oa = &lm->op[LM_A], *oc = &lm->op[LM_C];
	int EA = oa->elems, EC = oc->elems, GT = lm->k / lm->n;

	for (int L = 0; L < lm->wave; L++)
		for (int e = 0; e < EA; e++) {
			int s = L * EA + e, r = oa->row[s], i = 0;

			key[s] = -1;
			for (int j = 0; j < e; j++)
				i += oa->row[L * EA + j] == r;
			for (int t = 0; t < GT && key[s] < 0; t++)
				for (int c = 0; c < EC && key[s] < 0; c++)
					if (oc->row[L * EC + c] == r && i-- == 0)
						key[s] = t * lm->n + oc->col[L * EC + c];
			if (key[s] < 0) {
				*lane_bad = L, *row_bad = r;
				return -1;
			}
		}
	return 0;
}

static int plan_from_c(const struct kern *k, int *lane_bad, int *row_bad)
{
	struct pv_plan *p = (struct pv_plan *)&k->pv;

	if (keys_from_c(k->lm, p->a_key, lane_bad, row_bad))
		return -1;
	for (int s = 0; s < k->W * k->EA; s++)
		p->a_row[s] = k->lm->op[LM_A].row[s];
	return 0;
}

int pv_regroup_none_moves(const struct lanemap *lm, unsigned char *moved)
{
	const struct lanemap_operand *oa = &lm->op[LM_A];
	int key[LM_MAX_SLOTS], lane, row;

	memset(moved, 0, (size_t)lm->k);
	if (lm->k % lm->n || keys_from_c(lm, key, &lane, &row))
		return -1;
	/* slot s holds key[s]'s P and the A map reads it as key col[s] */
	for (int s = 0; s < lm->wave * oa->elems; s++)
		if (key[s] != oa->col[s])
			moved[key[s]] = 1;
	return 0;
}

int pv_tile_needed(const struct kern *k, const struct unit *u, const struct row *rows,
		   int kt, int hi)
{
	for (int i = 0; kt < hi && i < u->nrt; i++)
		if (attn_tile_needed(k, &rows[i * k->M], kt, hi))
			return 1;
	return 0;
}

const char *pv_bug_na(int bug, const struct fs_case *c, const struct lanemap *lm,
		      char *buf, size_t len)
{
	int n = lm->wave * lm->op[LM_A].elems, lane, row, same = 1, longest = 0, cut = 0;
	int key[LM_MAX_SLOTS];

	if (c->pv_mode != PV_INT8) {
		snprintf(buf, len, "pv.mode f32: P does not go through the instruction");
		return buf;
	}
	if (lm->k % lm->n) {
		snprintf(buf, len, "%s: a group of K = %d keys is not whole QK tiles", lm->name, lm->k);
		return buf;
	}
	for (int s = 0; s < c->n_seqs; s++) {
		int keys = c->segment > 0 && c->segment < c->seqs[s].context ? c->segment :
			   c->seqs[s].context;

		if (keys > longest)
			longest = keys;
		cut |= keys < c->seqs[s].context;
	}
	switch (bug) {
	case BUG_P_REGROUP_NONE:
		if (keys_from_c(lm, key, &lane, &row)) {
			snprintf(buf, len, "%s: a lane's C registers do not hold its A rows (lane %d, row %d): no kernel feeds them in place",
				 lm->name, lane, row);
			return buf;
		}
		for (int s = 0; s < n; s++)
			same &= key[s] == lm->op[LM_A].col[s];
		if (!same)
			return NULL;
		snprintf(buf, len, "%s: the C registers already are the A operand", lm->name);
		return buf;
	case BUG_PV_GROUP_MAX:
		if (lm->k / lm->n > 1)
			return NULL;
		snprintf(buf, len, "%s: a group of %d keys is one QK tile", lm->name, lm->k);
		return buf;
	case BUG_PV_RESCALE:
		if (longest > lm->k)
			return NULL;
		if (cut)	/* a segment's first group sets its max */
			snprintf(buf, len, "every split-K segment's keys (%d) fit one group of %d: the max never grows after a segment's first group",
				 c->segment, lm->k);
		else
			snprintf(buf, len, "every row's keys fit one group of %d: the max never grows after it",
				 lm->k);
		return buf;
	case BUG_P_SCALE_INDEX:
		if (c->v_scale == VSCALE_PER_CHANNEL) {
			snprintf(buf, len, "v_scale per_channel: every row's P scale is the fixed 1/clip already");
			return buf;
		}
		if (c->mode != MODE_DECODE || case_group(c) > 1)
			return NULL;
		snprintf(buf, len, "GQA group of 1: every row of a decode tile is the same q head");
		return buf;
	case BUG_V_SCALE_APPLY:
		if (c->v_scale != VSCALE_PER_CHANNEL)
			return NULL;
		snprintf(buf, len, "v_scale per_channel: the correct kernel too quantizes P without V's scale and applies sV after the product, per output column");
		return buf;
	}
	snprintf(buf, len, "not a bug class");
	return buf;
}

enum fs_rc pv_plan_build(struct kern *k, struct fs_err *err)
{
	const struct lanemap_operand *oa = &k->lm->op[LM_A], *ob = &k->lm->op[LM_B];
	struct pv_plan *p = &k->pv;
	int from_c = k->c->pv_regroup == PV_REGROUP_V_PERMUTED || k->kn->p_regroup_none;
	int *perm = NULL, lane = 0, row = 0;

	memset(p, 0, sizeof(*p));
	if (k->c->pv_mode != PV_INT8)
		return FS_OK;
	p->on = 1;
	p->GK = k->K, p->GT = k->K / k->N, p->DT = k->D / k->N;
	if (k->K % k->N || k->D % k->N)
		return case_fail_key(err, k->c, "pv.mode",
				     "int8 on isa %s: a group of K = %d keys must be whole QK tiles of N = %d keys, and head_dim %d whole column tiles of N",
				     k->lm->name, k->K, k->N, k->D);
	if (k->M != oa->rows || oa->cols != k->K || ob->rows != k->K)
		return case_fail_key(err, k->c, "pv.mode", "int8 on isa %s: the A operand is not M x K",
				     k->lm->name);
	p->a_row = malloc((size_t)k->W * k->EA * sizeof(int));
	p->a_key = malloc((size_t)k->W * k->EA * sizeof(int));
	p->b_key = malloc((size_t)k->W * k->EB * sizeof(int));
	perm = malloc((size_t)k->K * sizeof(int));
	if (!p->a_row || !p->a_key || !p->b_key || !perm) {
		free(perm);
		pv_plan_free(p);
		return fs_nomem(err, "the PV plan", 0);
	}
	if (!from_c) {
		for (int s = 0; s < k->W * k->EA; s++)
			p->a_row[s] = oa->row[s], p->a_key[s] = oa->col[s];
	} else if (plan_from_c(k, &lane, &row)) {
		free(perm);
		pv_plan_free(p);
		return case_fail_key(err, k->c, k->kn->p_regroup_none ? "kernel.p_regroup" : "pv.regroup",
				     "%s on isa %s: lane %d's C registers do not hold the row-%d entries its A registers take (P cannot stay in place on this map%s)",
				     k->kn->p_regroup_none ? "none" : "v_permuted",
				     k->lm->name, lane, row,
				     k->kn->p_regroup_none ? "" : "; use regroup lds");
	}
	/* perm[c]: the key that A column c holds, one key per column */
	for (int c = 0; c < k->K; c++)
		perm[c] = -1;
	for (int s = 0; s < k->W * k->EA; s++) {
		int c = oa->col[s];

		if (perm[c] < 0)
			perm[c] = p->a_key[s];
		else if (perm[c] != p->a_key[s] && k->c->pv_regroup == PV_REGROUP_V_PERMUTED &&
			 !k->kn->p_regroup_none) {
			int k0 = perm[c], k1 = p->a_key[s];

			free(perm);
			pv_plan_free(p);
			return case_fail_key(err, k->c, "pv.regroup",
					     "v_permuted on isa %s: A column %d holds keys %d and %d in different lanes, so no V order fits (use regroup lds)",
					     k->lm->name, c, k0, k1);
		}
	}
	for (int s = 0; s < k->W * k->EB; s++)
		p->b_key[s] = k->c->pv_regroup == PV_REGROUP_V_PERMUTED && !k->kn->p_regroup_none ?
			      perm[ob->row[s]] : ob->row[s];
	free(perm);
	return FS_OK;
}

size_t pv_seg_groups(const struct kern *k, const struct unit *u,
		     const struct row *rows, int sg)
{
	size_t n = 0;
	int lo, hi;

	attn_seg_bounds(k, u->s, sg, &lo, &hi);
	for (int kb = lo; kb < hi; kb += k->pv.GK)
		for (int i = 0; i < u->nrt; i++)
			for (int t = 0; t < k->pv.GT; t++)
				if (kb + t * k->N < hi &&
				    attn_tile_needed(k, &rows[i * k->M], kb + t * k->N, hi)) {
					n++;
					break;
				}
	return n;
}

int pv_scratch_carve(const struct kern *k, struct pv_scratch *x, struct slab *s)
{
	size_t GT = (size_t)k->pv.GT, mat = (size_t)(k->M > k->N ? k->M : k->N) * k->K;
	size_t slots = (size_t)k->W * k->EC, tile = (size_t)k->M * k->N;

	x->bm = slab_take(s, GT * k->ksteps * mat * sizeof(int32_t));
	x->creg = slab_take(s, GT * k->ksteps * slots * sizeof(int32_t));
	x->ws = slab_take(s, GT * tile * sizeof(float));
	x->ps = slab_take(s, GT * tile * sizeof(float));
	x->p = slab_take(s, (size_t)k->M * k->K * sizeof(float));
	x->pq = slab_take(s, (size_t)k->M * k->K);
	x->sp = slab_take(s, (size_t)k->M * sizeof(float));
	x->alpha = slab_take(s, (size_t)k->M * sizeof(float));
	x->areg = slab_take(s, (size_t)k->W * k->EA);
	x->breg = slab_take(s, (size_t)k->W * k->EB);
	x->am = slab_take(s, (size_t)k->M * k->K * sizeof(int32_t));
	x->vm = slab_take(s, (size_t)k->K * k->N * sizeof(int32_t));
	x->pvc = slab_take(s, slots * sizeof(int32_t));
	x->needed = slab_take(s, GT * sizeof(int));
	x->active = slab_take(s, (size_t)k->M * sizeof(int));
	x->vc = slab_take(s, (size_t)k->K * sizeof(struct vcol));
	return s->base && s->used > s->cap ? -1 : 0;
}

/*
 * Step 2: one softmax step over the group's GT workspaces for row tile
 * rows, into x->p, x->alpha and the rows' states. The sum runs as
 * attn_spec.c's, in register order within a lane, lanes in order, tile
 * by tile. pv_group_max per_tile: tile t's P uses the max of tiles 0..t
 * only (computed before the later tiles' scores are known), and is not
 * rescaled when a later tile raises it.
 */
static void group_softmax(const struct kern *k, const struct row *rows,
			  struct pv_scratch *x, struct rstate *st)
{
	const int *col = k->col_write;
	int N = k->N, GT = k->pv.GT, GK = k->pv.GK;

	for (int m = 0; m < k->M; m++) {
		const int *sl = &k->rowslots[m * k->rowcap];
		struct rstate *w = &st[m];
		float mx = -INFINITY, run = w->m, sum = 0.0f;

		x->active[m] = 0;
		for (int j = 0; j < GK; j++)
			x->p[m * GK + j] = 0.0f;
		if (!rows[m].valid)
			continue;
		for (int t = 0; t < GT; t++)
			for (int i = 0; i < k->rowcount[m]; i++) {
				float v = x->ws[(size_t)t * k->M * N + m * N + col[sl[i]]];

				if (v > mx)
					mx = v;
			}
		if (mx < w->m)
			mx = w->m;
		if (mx == -INFINITY)
			continue;	/* nothing visible yet */
		x->active[m] = 1;
		x->alpha[m] = w->m == -INFINITY ? 0.0f : attn_exp(k, w->m - mx);
		for (int t = 0; t < GT; t++) {
			const float *ws = &x->ws[(size_t)t * k->M * N];
			float part = 0.0f, tm = run;
			int lane = -1;

			if (k->kn->pv_group_max_per_tile) {
				for (int i = 0; i < k->rowcount[m]; i++)
					if (ws[m * N + col[sl[i]]] > tm)
						tm = ws[m * N + col[sl[i]]];
				run = tm;
			} else {
				tm = mx;
			}
			for (int i = 0; i < k->rowcount[m]; i++) {
				int n = col[sl[i]];
				float v = ws[m * N + n];

				if (sl[i] / k->EC != lane) {
					sum += part;
					part = 0.0f;
					lane = sl[i] / k->EC;
				}
				x->p[m * GK + t * N + n] = v == -INFINITY ? 0.0f :
							   attn_exp(k, v - tm);
				part += x->p[m * GK + t * N + n];
			}
			sum += part;
		}
		w->l = fmaf(w->l, x->alpha[m], sum);	/* fused, as attn_spec.c */
		w->m = mx;
	}
}

/*
 * Step 3: P' = P sV(key), sP = max P' / clip and Pq per row, into x->sp
 * and x->pq. A masked key's P' is 0 without reading its V scale (pv_mask
 * none reads it: a poisoned scale makes P' NaN). v_scale_apply
 * after_product: P' = P, sV applied after the product. p_scale_index
 * per_tile: one sP, the tile's largest, for every row. V per_channel:
 * P' = clip P, Pq = round(P') (quant_apply with scale 1: x / 1 is x),
 * sP = 1 / clip for a row that sees a key; neither class changes that.
 */
static void group_quantize(const struct kern *k, const struct row *rows,
			   struct pv_scratch *x)
{
	int GK = k->pv.GK, N = k->N;
	/* V per_channel: no key's scale to fold in; P' = clip P and Pq =
	 * round(P'), the fixed scale sP = 1 / clip (sV comes after the
	 * product, attn_merge_row) */
	int chan = k->in->v_scale_ch != NULL;
	float tile_max = 0.0f;

	for (int m = 0; m < k->M; m++) {
		float *pm = &x->p[m * GK], mx = 0.0f;

		x->sp[m] = 0.0f;
		if (!x->active[m])
			continue;
		for (int j = 0; j < GK; j++) {
			const float *ws = &x->ws[(size_t)(j / N) * k->M * N];
			int msk = attn_spec_masked(k, ws[m * N + j % N]);

			if (msk && !k->kn->pv_unmasked) {
				pm[j] = 0.0f;
				continue;
			}
			if (k->kn->scale_after_softmax && !msk)
				pm[j] *= x->ps[(size_t)(j / N) * k->M * N + m * N + j % N];
			if (chan)
				pm[j] *= (float)k->c->clip;
			else if (!k->kn->v_scale_after_product)
				pm[j] *= x->vc[j].scale;
			/* NaN propagates: fmaxf would drop it */
			if (!(pm[j] <= mx))
				mx = pm[j];
		}
		x->sp[m] = chan ? 1.0f / (float)k->c->clip : mx / (float)k->c->clip;
		if (!(x->sp[m] <= tile_max) && rows[m].valid)
			tile_max = x->sp[m];
	}
	for (int m = 0; m < k->M; m++) {
		if (k->kn->p_scale_per_tile && x->active[m])
			x->sp[m] = tile_max;
		quant_apply(&x->p[m * GK], GK, chan && x->active[m] ? 1.0f : x->sp[m],
			    k->c->clip, k->c->rounding, &x->pq[m * GK]);
	}
}

/* The PV golden rows of group gi (steps 4-6 write into them). */
static void group_store_tile(const struct kern *k, const struct unit *u, size_t gi,
			     int rt, int kb)
{
	int32_t *tl = &k->r->pv_tiles[gi * ATTN_TILE_COLS];

	tl[0] = u->s;
	tl[1] = u->h;
	tl[2] = k->c->mode == MODE_DECODE ? u->t : rt * k->M;
	tl[3] = kb;
	tl[4] = k->kn->gqa == KGQA_SPILL && k->c->mode == MODE_DECODE ?
		rt * k->M % k->G / k->M : rt;
}

/*
 * Steps 4-6 for row tile rows: A from Pq through the plan, then per
 * column tile B from the V cache, the instruction and O's update.
 */
static int group_product(const struct kern *k, const struct unit *u,
			 const struct row *rows, int rt, int kb, size_t gi,
			 struct pv_scratch *x, struct rstate *st)
{
	const struct pv_plan *p = &k->pv;
	const struct lanemap_operand *ob = &k->lm->op[LM_B], *oc = &k->lm->op[LM_C];
	struct attn_result *r = k->r;
	int GK = p->GK, slots = k->W * k->EC;

	for (int s = 0; s < k->W * k->EA; s++)
		x->areg[s] = rows[p->a_row[s]].valid ?
			     (uint8_t)x->pq[p->a_row[s] * GK + p->a_key[s]] : 0;
	if (mmac_read(k->hw, LM_A, x->areg, x->am, NULL))
		return -1;
	if (r->p_int8) {
		memcpy(&r->p_int8[gi * k->W * k->EA], x->areg, (size_t)k->W * k->EA);
		memcpy(&r->p_scale[gi * k->M], x->sp, (size_t)k->M * sizeof(float));
		group_store_tile(k, u, gi, rt, kb);
	}
	for (int m = 0; m < k->M; m++)
		if (x->active[m] && !k->kn->pv_rescale_missing)
			for (int d = 0; d < k->D; d++)
				st[m].o[d] *= x->alpha[m];
	for (int dt = 0; dt < p->DT; dt++) {
		for (int s = 0; s < k->W * k->EB; s++) {
			const struct vcol *v = &x->vc[p->b_key[s]];
			int d = dt * k->N + ob->col[s];

			/* attn_v_byte: a sparse pool's column that leaves its
			 * block (block_offset) is gathered, not read past the
			 * one poison byte v->i8 then points at */
			x->breg[s] = (uint8_t)attn_v_byte(v, d);
		}
		if (mmac_read(k->hw, LM_B, x->breg, x->vm, NULL))
			return -1;
		memset(x->pvc, 0, (size_t)slots * sizeof(int32_t));
		mmac_product(k->hw, x->am, x->vm, x->pvc);
		if (r->pv_acc)
			memcpy(&r->pv_acc[(gi * p->DT + dt) * slots], x->pvc,
			       (size_t)slots * sizeof(int32_t));
		for (int s = 0; s < slots; s++) {
			int m = oc->row[s], d = dt * k->N + oc->col[s];
			/* v_scale_apply after_product: the group's first key's
			 * scale for all of it */
			float sc = k->kn->v_scale_after_product && !k->in->v_scale_ch ?
				   x->sp[m] * x->vc[0].scale : x->sp[m];

			if (!attn_c_primary(oc, s) || !x->active[m])
				continue;
			st[m].o[d] = fmaf((float)x->pvc[s], sc, st[m].o[d]);
		}
	}
	return 0;
}

int pv_int8_unit(const struct kern *k, const struct unit *u, struct scratch *x,
		 struct pv_scratch *px, long *replica_bad)
{
	const struct pv_plan *p = &k->pv;
	int nseg = case_segments_of(k->c, u->s), R = u->nrt * k->M;
	int slots = k->W * k->EC, N = k->N;
	size_t tile = u->tile0, gi = u->group0;
	size_t mat = (size_t)(k->M > k->N ? k->M : k->N) * k->K;
	size_t cstride = (size_t)k->ksteps * slots, tsz = (size_t)k->M * N;
	/* QK's operands as attn_spec.c places them (operand_order) */
	enum lm_operand qop = attn_spec_q_operand(k), kop = attn_spec_k_operand(k);

	if (attn_spec_unit_q(k, u, x))
		return -1;
	for (int sg = 0; sg < nseg; sg++) {
		struct rstate *st = &x->st[(size_t)sg * R];
		int lo, hi;

		attn_seg_bounds(k, u->s, sg, &lo, &hi);
		attn_spec_seg_reset(k, st, R);
		for (int kb = lo; kb < hi; kb += p->GK) {
			/* K of every tile of the group that some row tile needs,
			 * loaded once for all of them */
			for (int t = 0; t < p->GT; t++) {
				int kt = kb + t * N;

				px->needed[t] = pv_tile_needed(k, u, x->rows, kt, hi);
				for (int ks = 0; px->needed[t] && ks < k->ksteps_run; ks++) {
					attn_spec_load_k(k, u, kt, ks, x->breg);
					if (mmac_read(k->hw, kop, x->breg,
						      &px->bm[((size_t)t * k->ksteps + ks) * mat], NULL))
						return -1;
				}
			}
			for (int j = 0; j < p->GK; j++)
				px->vc[j] = attn_v_col(k, u, kb + j);
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
					memset(creg, 0, cstride * sizeof(int32_t));
					for (int ks = 0; ks < k->ksteps_run; ks++) {
						const int32_t *qm = &x->am[((size_t)i * k->ksteps + ks) * mat];
						const int32_t *km = &px->bm[((size_t)t * k->ksteps + ks) * mat];

						mmac_product(k->hw, qop == LM_A ? qm : km,
							     qop == LM_A ? km : qm,
							     &creg[k->per_block32 ? (size_t)ks * slots : 0]);
					}
					if (k->r->acc)
						attn_acc_store(k, u, tile, u->rt0 + i, kt, creg);
					tile++;
					attn_spec_recover(k, u, rows, creg, kt, hi, ws, &px->ps[t * tsz]);
					attn_spec_store_scores(k, u, rows, kt, ws);
				}
				if (!any)
					continue;
				group_softmax(k, rows, px, &st[i * k->M]);
				group_quantize(k, rows, px);
				if (group_product(k, u, rows, u->rt0 + i, kb, gi, px, &st[i * k->M]))
					return -1;
				gi++;
			}
		}
	}
	attn_spec_finish(k, u, x, replica_bad);
	return 0;
}

/*
 * A group's p_int8, p_scale and pv_tiles rows, for the fast executor
 * (pv_fast.c): this file's layout of them, written by one code.
 */
void pv_int8_store_group(const struct kern *k, const struct unit *u, size_t gi,
			 int rt, int kb, const struct pv_scratch *x)
{
	struct attn_result *r = k->r;

	memcpy(&r->p_int8[gi * k->W * k->EA], x->areg, (size_t)k->W * k->EA);
	memcpy(&r->p_scale[gi * k->M], x->sp, (size_t)k->M * sizeof(float));
	group_store_tile(k, u, gi, rt, kb);
}
