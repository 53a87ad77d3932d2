/*
 * attn_spec.c - the scalar executor: the emulated kernel (attn.h) lane
 * by lane. It is the specification: the fast executor (attn_fast.c) must
 * give its bytes. Paged INT8 QK^T on a matrix instruction, then
 * per-element scale recovery, masks, online softmax, the workspace
 * transpose, split-K and PV. The layout helpers it shares with the fast
 * executor (block walk, scales, merge) are attn_common.c's; the driver
 * (attn.c) makes the work units and runs them on threads.
 *
 * One work unit is what one workgroup of the real kernel does:
 *   decode   (sequence, query token, kv head): ceil(G / M) row tiles of
 *            M rows over the G q heads of the group, row r of row tile
 *            i holding q head h*G + (i*M + r) % G (acc_tiles' row_tile);
 *            kernel: decode_rows: packed holds h*G + i*M + r while
 *            i*M + r < G, and zero rows (padding, acc 0) after
 *   prefill  (sequence, q head, 8 row tiles): 8 waves x M rows = 128
 *            query rows sharing every K tile they load
 * For each split-K segment, for each key tile of N keys, for each of the
 * ceil(D / K) K-steps (dims past D are zero: the last one's padding):
 *
 *   lane L, A element e  <- Qq[row(L,e)][kstep*K + kcol(L,e)]     (profile A)
 *   lane L, B element e  <- k_cache[block_table[s][tok/BS]][h][dim/16]
 *                                  [tok%BS][dim%16],
 *                           tok = tile + n(L,e), dim = kstep*K + k(L,e)
 *   C registers         += the instruction, executed by sim/lanemap/mmac
 *
 * then each accumulator (L, e) finds its real (row, column) in the C
 * profile: key = tile + column. That one look-up drives the K scale, the
 * masks and the workspace write; getting it wrong is the bug class the
 * article describes (a lane's 4 accumulators are columns c0 + {0,4,8,12}).
 *
 * Reads past a context: a key inside the sequence's last block loads that
 * slot (poison); a key past the block table loads 0 (the kernel guards
 * the load). Either way the correct kernel masks the column, its P is 0
 * and its V is not read. A buggy mask may let such a key through: its K
 * scale and V then come from a block outside the block table, which
 * reads as poison (NaN scale, INPUTS_POISON bytes), never as a crash.
 * Tiles whose keys are all causally masked for every row are not
 * executed, as the kernel's loop bound stops before them.
 */
#include "attn_spec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/fexp.h"
#include "../lanemap/mmac.h"

/*
 * The operands. Q goes into A and K into B (MMAC(Q, K)); with
 * operand_order kq the kernel swaps them. Either way a slot of operand op
 * has a free index (A's row, B's column) naming the query row or the key,
 * and a reduction index (A's column, B's row) naming the head-dim element.
 */
static int op_free(const struct lanemap_operand *o, enum lm_operand op, int slot)
{
	return op == LM_A ? o->row[slot] : o->col[slot];
}

static int op_red(const struct lanemap_operand *o, enum lm_operand op, int slot)
{
	return op == LM_A ? o->col[slot] : o->row[slot];
}

enum lm_operand attn_spec_q_operand(const struct kern *k)
{
	return k->kn->operand_kq ? LM_B : LM_A;
}

enum lm_operand attn_spec_k_operand(const struct kern *k)
{
	return k->kn->operand_kq ? LM_A : LM_B;
}

/* K's registers for one K-step, loaded from the paged cache. */
void attn_spec_load_k(const struct kern *k, const struct unit *u, int kb,
		      int ks, uint8_t *reg)
{
	enum lm_operand op = attn_spec_k_operand(k);
	const struct lanemap_operand *o = &k->lm->op[op];
	const struct fs_inputs *in = k->in;
	int g = attn_kv_head(k, u);
	/* the kernel's own count of the sequence's blocks (its block size) */
	int nblk = (k->c->seqs[u->s].context + k->KBS - 1) / k->KBS;

	(void)in;
	for (int slot = 0; slot < k->W * o->elems; slot++) {
		int n = op_free(o, op, slot), tok = kb + n, kk = op_red(o, op, slot);
		int dim = ks * k->K + kk;
		int8_t v = 0;

		/* operand_load (kernel.h): the element the kernel fetches for dim */
		if (k->kn->operand_load == KLOAD_SWAP_K_HALVES)
			dim = ks * k->K + (kk + k->K / 2) % k->K;
		else if (k->kn->operand_load == KLOAD_UNSWIZZLED && dim < k->D)
			dim = 16 * kernel_unswizzled_chunk(dim / 16, n, k->D / 16) + dim % 16;
		/* dims past those loaded: the zero padding of the last K-step;
		 * a freed block (window_blocks): 0, never read */
		if (tok / k->KBS < nblk && dim < k->dims && !attn_block_freed(k, u->s, tok)) {
			int blk = attn_block(k, u->s, tok);

			v = blk < 0 ? INPUTS_POISON : attn_k_byte(k, blk, g, tok, dim);
		}
		reg[slot] = (uint8_t)v;
	}
}

/* Q's registers for one K-step from the rows' quantized Q. */
void attn_spec_load_q(const struct kern *k, const struct row *rows, int ks,
		      uint8_t *reg)
{
	enum lm_operand op = attn_spec_q_operand(k);
	const struct lanemap_operand *o = &k->lm->op[op];

	for (int slot = 0; slot < k->W * o->elems; slot++) {
		const struct row *w = &rows[op_free(o, op, slot)];
		int dim = ks * k->K + op_red(o, op, slot);

		reg[slot] = w->valid && dim < k->dims ? (uint8_t)w->q[dim] : 0;
	}
}

/* tanh(x) as (e^x - e^-x) / (e^x + e^-x) in float (soft_cap_apply
 * exp_tanh): e^x is inf past 88.72, and inf / inf is NaN. */
static float tanh_by_exp(float x)
{
	float a = fs_expf(x), b = fs_expf(-x);

	return (a - b) / (a + b);
}

/*
 * logit_apply (logit.h) as the kernel applies it: the correct kernel's
 * call itself, or a soft_cap_apply or alibi_bias bug (kernel.h).
 */
static float kern_logit(const struct kern *k, float s, int qh, int dist)
{
	const struct logit_mod *lm = &k->lmod;
	float cap = lm->cap;

	if (k->kn->soft_cap_apply == KCAP_APPLIED && k->kn->alibi_bias == KALIBI_ADDED)
		return logit_apply(lm, s, qh, dist);
	if (cap > 0.0f && k->kn->soft_cap_apply != KCAP_DROPPED)
		s = cap * (k->kn->soft_cap_apply == KCAP_EXP_TANH ? tanh_by_exp(s / cap) :
				logit_tanhf(s / cap));
	if (!lm->alibi)
		return s;
	switch (k->kn->alibi_bias) {
	case KALIBI_ADDED: return s + lm->slope[qh] * (float)dist;
	case KALIBI_IGNORED: return s;
	case KALIBI_SIGN_FLIPPED: return s + lm->slope[qh] * (float)-dist;
	case KALIBI_NO_LOG2E:
		/* The bias meant for s log2(e), added to it unscaled: in
		 * the natural domain, bias / log2(e) = bias ln 2. */
		return s + lm->slope[qh] * (float)dist * ATTN_LN2F;
	case KALIBI_OFFSET: return s + lm->slope[qh] * (float)(dist + 1);
	}
	return s;
}

/*
 * Scores of one executed tile from its accumulators, into the workspace
 * ws[m * N + n] (the transpose: register order in, column order out).
 * The kernel's belief of each slot's column picks the K scale (col_scale),
 * the mask (col_mask) and the workspace column (col_write); all three are
 * the profile's column in a correct kernel. With scale_recovery
 * after_softmax, ws holds the unscaled logit and ps[m * N + n] the
 * sQ * sK that PV multiplies P by.
 */
void attn_spec_recover(const struct kern *k, const struct unit *u,
		       const struct row *rows, const int32_t *creg, int kb,
		       int seg_end, float *ws, float *ps)
{
	const struct lanemap_operand *oc = &k->lm->op[LM_C];
	int slots = k->W * k->EC, after = k->kn->scale_after_softmax;

	/* scale_recovery no_k_scale / no_q_scale: that scale is taken as 1 */
	int no_k = k->kn->scale_drop == KDROP_K, no_q = k->kn->scale_drop == KDROP_Q;

	for (int slot = 0; slot < slots; slot++) {
		/* c_rows: the row the kernel believes the slot holds picks the
		 * query (Q scale, mask, ALiBi) and the workspace row */
		int m = k->row_read[slot], n = k->col_write[slot];
		/* k_scale_index: per_tile, the tile's first key; first_key, the
		 * sequence's key 0, a scale loaded once before the key loop */
		int js = k->kn->k_scale_first_key ? 0 :
			 k->kn->k_scale_per_tile ? kb : kb + k->col_scale[slot];
		const struct row *w = &rows[m];
		float sc, sq = no_q ? 1.0f : w->sq;
		int visible;

		if (!attn_c_primary(oc, slot))
			continue;	/* a replica: its entry is read once */
		visible = attn_key_visible(k, w, seg_end, kb + k->col_mask[slot]);
		/* mask_value: the correct kernel writes -inf and nothing else;
		 * finite writes its sentinel; additive computes the score and
		 * adds -inf below, so a NaN score (a poisoned slot's K scale)
		 * stays NaN. */
		if (!visible && k->kn->mask_value != KMASK_ADDITIVE) {
			ws[m * k->N + n] = k->kn->mask_value == KMASK_FINITE ?
					   KERNEL_MASK_FINITE : -INFINITY;
			/* soft_cap_apply after_mask: cap tanh(-inf / cap) */
			if (k->kn->soft_cap_apply == KCAP_AFTER_MASK && k->lmod.cap > 0.0f)
				ws[m * k->N + n] = -k->lmod.cap;
			continue;
		}
		if (after) {
			float acc = 0.0f;

			for (int ks = 0; ks < k->r->ksteps_in_acc; ks++)
				acc += (float)creg[ks * slots + slot];
			sc = acc * (float)k->c->softmax_scale;
			ps[m * k->N + n] = w->sq * attn_k_scale(k, u, js, 0);
		} else if (k->per_block32) {
			float acc = 0.0f;

			for (int ks = 0; ks < k->ksteps; ks++)
				acc += (float)creg[ks * slots + slot] *
				       (no_k ? 1.0f : attn_k_scale(k, u, js, ks));
			sc = acc * sq * (float)k->c->softmax_scale;
		} else {
			sc = (float)creg[slot] * sq * (no_k ? 1.0f : attn_k_scale(k, u, js, 0)) *
			     (float)k->c->softmax_scale;
		}
		/* Soft cap, then ALiBi at the key the mask tested. */
		if (k->lmod.on)
			sc = kern_logit(k, sc, w->qh, kb + k->col_mask[slot] - w->q_pos);
		ws[m * k->N + n] = visible ? sc : sc + -INFINITY;
	}
}

/*
 * The workspace as the kernel leaves it, into scores: in a correct kernel
 * -inf exactly where a key is not visible.
 */
void attn_spec_store_scores(const struct kern *k, const struct unit *u,
			    const struct row *rows, int kb, const float *ws)
{
	struct attn_result *r = k->r;

	for (int m = 0; r->scores && m < k->M; m++) {
		const struct row *w = &rows[m];
		size_t ri;

		if (!w->primary)
			continue;
		ri = ((size_t)u->s * k->T + w->t) * k->Hq + w->qh;
		for (int n = 0; n < k->N && kb + n < k->MAXCTX; n++)
			r->scores[ri * k->MAXCTX + kb + n] = ws[m * k->N + n];
	}
}

/* Is workspace value v a masked key's, as the kernel tells? */
int attn_spec_masked(const struct kern *k, float v)
{
	return v == -INFINITY ||
	       (k->kn->mask_value == KMASK_FINITE && v == KERNEL_MASK_FINITE);
}

/* Online softmax and PV of one tile for every valid row. */
static void softmax_pv(const struct kern *k, const struct unit *u,
		       const struct row *rows, const float *ws, const float *ps,
		       int kb, struct rstate *st, float *p)
{
	const int *col = k->col_write;

	for (int m = 0; m < k->M; m++) {
		const int *sl = &k->rowslots[m * k->rowcap];
		struct rstate *x = &st[m];
		float tmax = -INFINITY, mnew, alpha, sum = 0.0f, part = 0.0f;
		int lane = -1;

		if (!rows[m].valid)
			continue;
		for (int i = 0; i < k->rowcount[m]; i++) {
			float v = ws[m * k->N + col[sl[i]]];

			if (v > tmax)
				tmax = v;
		}
		mnew = tmax > x->m ? tmax : x->m;
		if (mnew == -INFINITY)
			continue;	/* nothing visible yet */
		alpha = x->m == -INFINITY ? 0.0f : attn_exp(k, x->m - mnew);
		/* p in register order within a lane, lanes in order. */
		for (int i = 0; i < k->rowcount[m]; i++) {
			int n = col[sl[i]];
			float v = ws[m * k->N + n];

			if (sl[i] / k->EC != lane) {
				sum += part;
				part = 0.0f;
				lane = sl[i] / k->EC;
			}
			p[n] = v == -INFINITY ? 0.0f : attn_exp(k, v - mnew);
			part += p[n];
		}
		sum += part;
		/* Fused, as HIP and CUDA contract a * b + c (docs/design.md 1.4,
		 * the online softmax): l * alpha + sum, o + p * v per key below. */
		x->l = fmaf(x->l, alpha, sum);
		x->m = mnew;
		for (int d = 0; d < k->D; d++)
			x->o[d] *= alpha;
		for (int n = 0; n < k->N; n++) {
			struct vcol v;
			float pn = p[n];

			/* Masked: P is 0 and V is not read. The kernel knows a
			 * masked key by its mask value (finite: the sentinel).
			 * pv_mask none reads V anyway: 0 * V, which is NaN where
			 * the slot is poisoned (past the context). */
			if (attn_spec_masked(k, ws[m * k->N + n])) {
				if (!k->kn->pv_unmasked)
					continue;
			} else if (k->kn->scale_after_softmax) {
				pn *= ps[m * k->N + n];
			}
			v = attn_v_col(k, u, kb + n);
			/* elements past v.n lie outside the V cache: poison;
			 * per_channel V scales each element by its dim's */
			if (v.gather || v.qblocks || v.sch)
				for (int d = 0; d < k->D; d++)
					x->o[d] = fmaf(pn, attn_v_elem(&v, d), x->o[d]);
			else if (v.i8)
				for (int d = 0; d < k->D; d++)
					x->o[d] = fmaf(pn, (float)(d < v.n ? v.i8[(size_t)d * v.stride] :
									     INPUTS_POISON) * v.scale,
						       x->o[d]);
			else
				for (int d = 0; d < k->D; d++)
					x->o[d] = fmaf(pn, d < v.n ? v.f[(size_t)d * v.stride] : NAN,
						       x->o[d]);
		}
	}
}

int attn_scratch_carve(const struct kern *k, int nrt, int nseg, struct scratch *x,
		       struct slab *s)
{
	size_t rows = (size_t)nrt * k->M;
	/* Q and K each fill A or B (operand_order): size for the larger. */
	size_t regs = (size_t)k->W * (k->EA > k->EB ? k->EA : k->EB);
	size_t mat = (size_t)(k->M > k->N ? k->M : k->N) * k->K;

	x->areg = slab_take(s, regs);
	x->breg = slab_take(s, regs);
	x->am = slab_take(s, (size_t)nrt * k->ksteps * mat * sizeof(int32_t));
	x->bm = slab_take(s, (size_t)k->ksteps * mat * sizeof(int32_t));
	x->creg = slab_take(s, (size_t)k->ksteps * k->W * k->EC * sizeof(int32_t));
	x->ws = slab_take(s, (size_t)k->M * k->N * sizeof(float));
	x->ps = slab_take(s, (size_t)k->M * k->N * sizeof(float));
	x->p = slab_take(s, (size_t)k->N * sizeof(float));
	x->rows = slab_take(s, rows * sizeof(struct row));
	x->st = slab_take(s, (size_t)nseg * rows * sizeof(struct rstate));
	x->obuf = slab_take(s, (size_t)nseg * rows * k->D * sizeof(float));
	if (!s->base || s->used > s->cap)
		return s->base ? -1 : 0;
	for (size_t i = 0; i < (size_t)nseg * rows; i++)
		x->st[i].o = &x->obuf[i * k->D];
	return 0;
}

int attn_spec_unit_q(const struct kern *k, const struct unit *u,
		     struct scratch *x)
{
	size_t mat = (size_t)(k->M > k->N ? k->M : k->N) * k->K;

	/* Q's fragments stay in registers across the unit; the hardware
	 * reads them through its own map (k->hw), as it does K's. */
	attn_unit_rows(k, u, x->rows);
	for (int i = 0; i < u->nrt; i++)
		for (int ks = 0; ks < k->ksteps_run; ks++) {
			attn_spec_load_q(k, &x->rows[i * k->M], ks, x->areg);
			if (mmac_read(k->hw, attn_spec_q_operand(k), x->areg,
				      &x->am[((size_t)i * k->ksteps + ks) * mat], NULL))
				return -1;
		}
	return 0;
}

void attn_spec_seg_reset(const struct kern *k, struct rstate *st, int R)
{
	for (int i = 0; i < R; i++) {
		st[i].m = -INFINITY;
		st[i].l = 0.0f;
		memset(st[i].o, 0, (size_t)k->D * sizeof(float));
	}
}

/*
 * One work unit, lane by lane: Q's registers once, then per split-K
 * segment, per key tile that some row sees, K's registers, the
 * instruction per K-step, scale recovery, the workspace, online softmax
 * and PV; last the merge and the replica check.
 */
int attn_spec_unit(const struct kern *k, const struct unit *u,
		    struct scratch *x, long *replica_bad)
{
	struct attn_result *r = k->r;
	int nseg = case_segments_of(k->c, u->s), R = u->nrt * k->M;
	int slots = k->W * k->EC;
	size_t tile = u->tile0, mat = (size_t)(k->M > k->N ? k->M : k->N) * k->K;
	enum lm_operand qop = attn_spec_q_operand(k), kop = attn_spec_k_operand(k);

	if (attn_spec_unit_q(k, u, x))
		return -1;
	for (int sg = 0; sg < nseg; sg++) {
		struct rstate *st = &x->st[(size_t)sg * R];
		int lo, hi;

		attn_seg_bounds(k, u->s, sg, &lo, &hi);
		attn_spec_seg_reset(k, st, R);
		for (int kb = lo; kb < hi; kb += k->N) {
			int loaded = 0;

			for (int i = 0; i < u->nrt; i++) {
				const struct row *rows = &x->rows[i * k->M];

				if (!attn_tile_needed(k, rows, kb, hi))
					continue;
				if (!loaded) {
					for (int ks = 0; ks < k->ksteps_run; ks++) {
						attn_spec_load_k(k, u, kb, ks, x->breg);
						if (mmac_read(k->hw, kop, x->breg,
							      &x->bm[(size_t)ks * mat], NULL))
							return -1;
					}
					loaded = 1;
				}
				memset(x->creg, 0, (size_t)k->ksteps * slots * sizeof(int32_t));
				for (int ks = 0; ks < k->ksteps_run; ks++) {
					const int32_t *qm = &x->am[((size_t)i * k->ksteps + ks) * mat];
					const int32_t *km = &x->bm[(size_t)ks * mat];

					mmac_product(k->hw, qop == LM_A ? qm : km,
						     qop == LM_A ? km : qm,
						     &x->creg[k->per_block32 ? (size_t)ks * slots : 0]);
				}
				if (r->acc)
					attn_acc_store(k, u, tile, u->rt0 + i, kb, x->creg);
				tile++;
				attn_spec_recover(k, u, rows, x->creg, kb, hi, x->ws, x->ps);
				attn_spec_store_scores(k, u, rows, kb, x->ws);
				softmax_pv(k, u, rows, x->ws, x->ps, kb, &st[i * k->M], x->p);
			}
		}
	}
	attn_spec_finish(k, u, x, replica_bad);
	return 0;
}

/*
 * Do a replica's state a and its primary's b differ by more than the
 * order of n additions can? The max is one of the same values either
 * way: equal. l adds the same n non-negative terms, o the same n terms
 * per dim, in two orders: each order is within about n u of the exact
 * sum (u = 2^-24), so they stay within 2 n u of each other, on l's
 * magnitude and, for o, on the row's largest |o| (a bound that holds
 * where no dim cancels far below the row's scale; a kernel that gives a
 * replica another q head's data misses it by far more).
 */
static int beyond_rounding(const struct rstate *a, const struct rstate *b, int D, int n)
{
	double e = 2.0 * (n + 1) * 0x1p-24, om = 0.0;

	if (!(a->m == b->m || (isnan(a->m) && isnan(b->m))) ||
	    isnan(a->l) != isnan(b->l) ||
	    fabs((double)a->l - b->l) > e * (fabs((double)a->l) + fabs((double)b->l)))
		return 1;
	for (int d = 0; d < D; d++)
		om = fmax(om, fabs((double)a->o[d]) + fabs((double)b->o[d]));
	for (int d = 0; d < D; d++)
		if (isnan(a->o[d]) != isnan(b->o[d]) ||
		    fabs((double)a->o[d] - b->o[d]) > e * om)
			return 1;
	return 0;
}

void attn_spec_finish(const struct kern *k, const struct unit *u,
		      struct scratch *x, long *replica_bad)
{
	int nseg = case_segments_of(k->c, u->s), R = u->nrt * k->M, exact;

	/* Merge, then check that replica rows agree with their primary. */
	for (int i = 0; i < R; i++) {
		const struct row *w = &x->rows[i];
		struct rstate *segs[ATTN_MAX_SEGMENTS];
		int primary = i;

		if (!w->valid)
			continue;
		for (int sg = 0; sg < nseg; sg++)
			segs[sg] = &x->st[(size_t)sg * R + i];
		if (w->primary) {
			attn_merge_row(k, u, w, segs, nseg, NULL);
			continue;
		}
		for (int j = 0; j < i; j++)
			if (x->rows[j].primary && x->rows[j].qh == w->qh)
				primary = j;
		/* bit for bit where the two rows sum in one order (every
		 * shipped map); within rounding where the map orders them
		 * apart (a C row map such as (lane % 16) ^ e) */
		exact = attn_rows_same_order(k, i % k->M, primary % k->M);
		for (int sg = 0; sg < nseg; sg++) {
			const struct rstate *a = &x->st[(size_t)sg * R + i];
			const struct rstate *b = &x->st[(size_t)sg * R + primary];
			int lo, hi;

			attn_seg_bounds(k, u->s, sg, &lo, &hi);
			if (exact ? a->m != b->m || a->l != b->l ||
				    memcmp(a->o, b->o, (size_t)k->D * sizeof(float)) :
				    beyond_rounding(a, b, k->D, hi - lo)) {
				(*replica_bad)++;
				break;
			}
		}
	}
}
