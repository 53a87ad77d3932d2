/*
 * attn.c - the emulated kernel (see attn.h): paged INT8 QK^T on a matrix
 * instruction, lane by lane, then per-element scale recovery, masks,
 * online softmax, the workspace transpose, split-K and PV.
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
 *   C registers         += the instruction, executed by sim/mmac
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
#include "attn.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attn_int.h"
#include "fexp.h"
#include "mmac.h"
#include "quant.h"
#include "tile_fast.h"

#define WAVES_PER_GROUP 8	/* prefill: 8 waves x M rows per workgroup */



static void rows_of_tile(const struct kern *k, const struct unit *u, int rt,
			 struct row *rows)
{
	const struct fs_inputs *in = k->in;

	for (int m = 0; m < k->M; m++) {
		struct row *w = &rows[m];

		memset(w, 0, sizeof(*w));
		if (k->c->mode == MODE_DECODE) {
			int local = (rt * k->M + m) % k->G;

			/* Packed rows past the group: the kernel zero-fills
			 * their A rows, as a padding row's (acc 0). */
			if (k->c->decode_rows == ROWS_PACKED && rt * k->M + m >= k->G) {
				w->valid = w->primary = 0;
				continue;
			}
			w->t = u->t;
			w->qh = k->kn->gqa_modulo ? u->h + local * k->Hkv :
						    u->h * k->G + local;
			/* The first occurrence of a head writes the results;
			 * its replicas must agree with it. */
			w->primary = rt * k->M + m == local;
		} else {
			w->t = rt * k->M + m;
			w->qh = u->h;
			w->primary = 1;
		}
		w->valid = w->t < k->c->seqs[u->s].tokens;
		if (!w->valid) {
			w->primary = 0;
			continue;
		}
		w->q_pos = k->kn->q_pos_chunk ? w->t : in->q_pos[u->s * k->T + w->t];
		{
			size_t qi = ((size_t)u->s * k->T + w->t) * k->Hq + w->qh;

			w->sq = in->q_scale[qi];
			w->q = &in->q_int8[qi * k->D];
		}
	}
}

static int key_visible(const struct kern *k, const struct row *w, int seg_end,
		       int j)
{
	if (!w->valid || j >= seg_end || j > w->q_pos)
		return 0;
	if (k->c->sliding_window > 0 && j <= w->q_pos - k->c->sliding_window)
		return 0;
	return 1;
}

/* Does any row of the tile see any key of [kb, kb + N)? */
static int tile_needed(const struct kern *k, const struct row *rows, int kb,
		       int seg_end)
{
	for (int m = 0; m < k->M; m++)
		for (int n = 0; n < k->N && kb + n < seg_end; n++)
			if (key_visible(k, &rows[m], seg_end, kb + n))
				return 1;
	return 0;
}

void attn_seg_bounds(const struct kern *k, int s, int sg, int *lo, int *hi)
{
	int ctx = k->c->seqs[s].context;

	if (k->c->segment <= 0) {
		*lo = 0;
		*hi = ctx;
		return;
	}
	*lo = sg * k->c->segment;
	*hi = *lo + k->c->segment < ctx ? *lo + k->c->segment : ctx;
}

/* The unit's row tiles' rows: rows[rt * M + m]. */
void attn_unit_rows(const struct kern *k, const struct unit *u, struct row *rows)
{
	for (int i = 0; i < u->nrt; i++)
		rows_of_tile(k, u, u->rt0 + i, &rows[i * k->M]);
}

/* Executed tiles of segment sg of a unit. */
static size_t seg_tiles(const struct kern *k, const struct unit *u,
			const struct row *rows, int sg)
{
	size_t n = 0;
	int lo, hi;

	attn_seg_bounds(k, u->s, sg, &lo, &hi);
	for (int kb = lo; kb < hi; kb += k->N)
		for (int i = 0; i < u->nrt; i++)
			n += tile_needed(k, &rows[i * k->M], kb, hi);
	return n;
}

static size_t unit_tiles(const struct kern *k, const struct unit *u,
			 const struct row *rows)
{
	size_t n = 0;

	for (int sg = 0; sg < case_segments_of(k->c, u->s); sg++)
		n += seg_tiles(k, u, rows, sg);
	return n;
}

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

static enum lm_operand q_operand(const struct kern *k)
{
	return k->kn->operand_kq ? LM_B : LM_A;
}

static enum lm_operand k_operand(const struct kern *k)
{
	return k->kn->operand_kq ? LM_A : LM_B;
}

/* K's registers for one K-step, loaded from the paged cache. */
static void load_k(const struct kern *k, const struct unit *u, int kb,
		   int ks, uint8_t *reg)
{
	enum lm_operand op = k_operand(k);
	const struct lanemap_operand *o = &k->lm->op[op];
	const struct fs_inputs *in = k->in;
	int g = attn_kv_head(k, u), nblk = case_blocks_of(k->c, u->s);

	for (int slot = 0; slot < k->W * o->elems; slot++) {
		int tok = kb + op_free(o, op, slot);
		int dim = ks * k->K + op_red(o, op, slot);
		int8_t v = 0;

		/* dims past those loaded: the zero padding of the last K-step */
		if (tok / k->BS < nblk && dim < k->dims) {
			int blk = attn_block(k, u->s, tok);
			size_t a = ((((size_t)blk * k->Hkv + g) * (k->D / 16) +
				     dim / 16) * k->BS + tok % k->BS) * 16 + dim % 16;

			v = blk < 0 ? INPUTS_POISON : in->k_cache[a];
		}
		reg[slot] = (uint8_t)v;
	}
}

/* Q's registers for one K-step from the rows' quantized Q. */
static void load_q(const struct kern *k, const struct row *rows, int ks,
		   uint8_t *reg)
{
	enum lm_operand op = q_operand(k);
	const struct lanemap_operand *o = &k->lm->op[op];

	for (int slot = 0; slot < k->W * o->elems; slot++) {
		const struct row *w = &rows[op_free(o, op, slot)];
		int dim = ks * k->K + op_red(o, op, slot);

		reg[slot] = w->valid && dim < k->dims ? (uint8_t)w->q[dim] : 0;
	}
}

float attn_k_scale(const struct kern *k, const struct unit *u, int tok, int ks)
{
	const struct fs_inputs *in = k->in;
	int blk = attn_block(k, u->s, tok);

	return inputs_k_scale(k->c, in, blk, tok % k->BS, attn_kv_head(k, u),
			      ks * k->K);
}

/*
 * Key tok's V column (attn_int.h). A block outside the pool (attn_block
 * -1) reads as a poisoned spare slot does: INPUTS_POISON with a NaN
 * scale, or NaN for float V.
 */
struct vcol attn_v_col(const struct kern *k, const struct unit *u, int tok)
{
	static const int8_t poison_i8 = INPUTS_POISON;
	static const float poison_f = NAN;
	const struct fs_inputs *in = k->in;
	int g = attn_kv_head(k, u);
	int blk = attn_block(k, u->s, tok), slot = tok % k->BS;
	size_t a = ((size_t)blk * k->Hkv + g) * k->D * k->BS + slot;
	struct vcol v = { NULL, NULL, 0.0f, (size_t)k->BS };

	if (blk < 0) {
		v.stride = 0;
		v.i8 = k->c->v_dtype == VDT_INT8 ? &poison_i8 : NULL;
		v.f = v.i8 ? NULL : &poison_f;
		v.scale = NAN;
		return v;
	}
	if (k->c->v_dtype == VDT_INT8) {
		v.i8 = &in->v_cache_i8[a];
		v.scale = in->v_scale[((size_t)blk * k->BS + slot) * k->Hkv + g];
	} else {
		v.f = &in->v_cache_f[a];
	}
	return v;
}

/*
 * Is C slot s the one the kernel reads its entry from? A profile may hold
 * a C entry in several (lane, register) slots (replicas: N); the hardware
 * writes the same sum into each, and the kernel consumes the entry once,
 * from its first slot in register order (lane-major), as the RDNA3
 * kernels read their replicated A and B from the first lanes. Reading
 * every replica would count the entry N times in the softmax sum.
 */
static int c_primary(const struct lanemap_operand *oc, int s)
{
	return oc->owner[(oc->row[s] * oc->cols + oc->col[s]) * oc->replicas] == s;
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
static void recover_scores(const struct kern *k, const struct unit *u,
			   const struct row *rows, const int32_t *creg, int kb,
			   int seg_end, float *ws, float *ps)
{
	const struct lanemap_operand *oc = &k->lm->op[LM_C];
	int slots = k->W * k->EC, after = k->kn->scale_after_softmax;

	for (int slot = 0; slot < slots; slot++) {
		int m = oc->row[slot], n = k->col_write[slot];
		int js = k->kn->k_scale_per_tile ? kb : kb + k->col_scale[slot];
		const struct row *w = &rows[m];
		float sc;

		if (!c_primary(oc, slot))
			continue;	/* a replica: its entry is read once */
		if (!key_visible(k, w, seg_end, kb + k->col_mask[slot])) {
			ws[m * k->N + n] = -INFINITY;
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
				       attn_k_scale(k, u, js, ks);
			sc = acc * w->sq * (float)k->c->softmax_scale;
		} else {
			sc = (float)creg[slot] * w->sq * attn_k_scale(k, u, js, 0) *
			     (float)k->c->softmax_scale;
		}
		/* Soft cap, then ALiBi at the key the mask tested. */
		if (k->lmod.on)
			sc = logit_apply(&k->lmod, sc, w->qh,
					 kb + k->col_mask[slot] - w->q_pos);
		ws[m * k->N + n] = sc;
	}
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
		alpha = x->m == -INFINITY ? 0.0f : fs_expf(x->m - mnew);
		/* p in register order within a lane, lanes in order. */
		for (int i = 0; i < k->rowcount[m]; i++) {
			int n = col[sl[i]];
			float v = ws[m * k->N + n];

			if (sl[i] / k->EC != lane) {
				sum += part;
				part = 0.0f;
				lane = sl[i] / k->EC;
			}
			p[n] = v == -INFINITY ? 0.0f : fs_expf(v - mnew);
			part += p[n];
		}
		sum += part;
		x->l = x->l * alpha + sum;
		x->m = mnew;
		for (int d = 0; d < k->D; d++)
			x->o[d] *= alpha;
		for (int n = 0; n < k->N; n++) {
			struct vcol v;
			float pn = p[n];

			if (ws[m * k->N + n] == -INFINITY)
				continue;	/* masked: P is 0 and V is not read */
			if (k->kn->scale_after_softmax)
				pn *= ps[m * k->N + n];
			v = attn_v_col(k, u, kb + n);
			if (v.i8)
				for (int d = 0; d < k->D; d++)
					x->o[d] += pn * ((float)v.i8[(size_t)d * v.stride] * v.scale);
			else
				for (int d = 0; d < k->D; d++)
					x->o[d] += pn * v.f[(size_t)d * v.stride];
		}
	}
}


static void scratch_free(struct scratch *x)
{
	free(x->areg);
	free(x->breg);
	free(x->am);
	free(x->bm);
	free(x->creg);
	free(x->ws);
	free(x->ps);
	free(x->p);
	free(x->rows);
	free(x->st);
	free(x->obuf);
	memset(x, 0, sizeof(*x));
}

static int scratch_alloc(const struct kern *k, int nrt, int nseg,
			 struct scratch *x)
{
	size_t rows = (size_t)nrt * k->M;

	memset(x, 0, sizeof(*x));
	{
	/* Q and K each fill A or B (operand_order): size for the larger. */
	size_t regs = (size_t)k->W * (k->EA > k->EB ? k->EA : k->EB);
	size_t mat = (size_t)(k->M > k->N ? k->M : k->N) * k->K;

	x->areg = malloc(regs);
	x->breg = malloc(regs);
	x->am = malloc((size_t)nrt * k->ksteps * mat * sizeof(int32_t));
	x->bm = malloc((size_t)k->ksteps * mat * sizeof(int32_t));
	}
	x->creg = malloc((size_t)k->ksteps * k->W * k->EC * sizeof(int32_t));
	x->ws = malloc((size_t)k->M * k->N * sizeof(float));
	x->ps = malloc((size_t)k->M * k->N * sizeof(float));
	x->p = malloc((size_t)k->N * sizeof(float));
	x->rows = malloc(rows * sizeof(struct row));
	x->st = malloc((size_t)nseg * rows * sizeof(struct rstate));
	x->obuf = malloc((size_t)nseg * rows * k->D * sizeof(float));
	if (!x->areg || !x->breg || !x->am || !x->bm || !x->creg || !x->ws || !x->ps ||
	    !x->p || !x->rows || !x->st || !x->obuf) {
		scratch_free(x);
		return -1;
	}
	for (size_t i = 0; i < (size_t)nseg * rows; i++)
		x->st[i].o = &x->obuf[i * k->D];
	return 0;
}

/* Merge a row's segment states into its output and stats (segment order). */
void attn_merge_row(const struct kern *k, const struct unit *u,
		    const struct row *w, struct rstate *const *segs, int nseg)
{
	struct attn_result *r = k->r;
	size_t ri = ((size_t)u->s * k->T + w->t) * k->Hq + w->qh;
	float mx = -INFINITY, l = 0.0f;
	float *out = &r->out[ri * k->D];

	for (int i = 0; i < nseg; i++)
		if (segs[i]->m > mx)
			mx = segs[i]->m;
	for (int d = 0; d < k->D; d++)
		out[d] = 0.0f;
	for (int i = 0; i < nseg; i++) {
		const struct rstate *x = segs[i];
		float wgt;

		if (x->m == -INFINITY)
			continue;
		wgt = k->kn->merge_no_rescale ? x->l : x->l * fs_expf(x->m - mx);
		l += wgt;
		/* Partial outputs are kept normalized, as split-K kernels
		 * store them: o / l, weighted by l * e^(m - M). */
		for (int d = 0; d < k->D; d++)
			out[d] += (x->o[d] / x->l) * wgt;
		if (r->seg_max) {
			size_t si = ri * r->nseg + i;

			r->seg_max[si] = x->m;
			r->seg_sum[si] = x->l;
			for (int d = 0; d < k->D; d++)
				r->seg_out[si * k->D + d] = x->o[d] / x->l;
		}
	}
	/* Only a row that sees nothing (every segment empty, l exactly 0)
	 * gives 0; a NaN that reached l stays NaN, as in an unguarded
	 * kernel's division. */
	for (int d = 0; d < k->D; d++)
		out[d] = l == 0.0f ? 0.0f : out[d] / l;
	r->row_max[ri] = mx;
	r->row_sum[ri] = l;
}

/* One executed tile's C registers (per K-step with per_block32). */
void attn_acc_store(const struct kern *k, const struct unit *u, size_t tile,
		    int rt, int kb, const int32_t *creg)
{
	struct attn_result *r = k->r;
	size_t n = (size_t)r->ksteps_in_acc * k->W * k->EC;
	int32_t *tl = &r->acc_tiles[tile * ATTN_TILE_COLS];

	memcpy(&r->acc[tile * n], creg, n * sizeof(int32_t));
	tl[0] = u->s;
	tl[1] = u->h;
	tl[2] = k->c->mode == MODE_DECODE ? u->t : rt * k->M;
	tl[3] = kb;
	tl[4] = rt;
}

static int run_unit(const struct kern *k, const struct unit *u,
		    struct scratch *x, long *replica_bad)
{
	struct attn_result *r = k->r;
	int nseg = case_segments_of(k->c, u->s), R = u->nrt * k->M;
	int slots = k->W * k->EC;
	size_t tile = u->tile0, mat = (size_t)(k->M > k->N ? k->M : k->N) * k->K;
	enum lm_operand qop = q_operand(k), kop = k_operand(k);

	/* Q's fragments stay in registers across the unit; the hardware
	 * reads them through its own map (k->hw), as it does K's. */
	attn_unit_rows(k, u, x->rows);
	for (int i = 0; i < u->nrt; i++)
		for (int ks = 0; ks < k->ksteps_run; ks++) {
			load_q(k, &x->rows[i * k->M], ks, x->areg);
			if (mmac_read(k->hw, qop, x->areg,
				      &x->am[((size_t)i * k->ksteps + ks) * mat], NULL))
				return -1;
		}
	for (int sg = 0; sg < nseg; sg++) {
		struct rstate *st = &x->st[(size_t)sg * R];
		int lo, hi;

		attn_seg_bounds(k, u->s, sg, &lo, &hi);
		for (int i = 0; i < R; i++) {
			st[i].m = -INFINITY;
			st[i].l = 0.0f;
			memset(st[i].o, 0, (size_t)k->D * sizeof(float));
		}
		for (int kb = lo; kb < hi; kb += k->N) {
			int loaded = 0;

			for (int i = 0; i < u->nrt; i++) {
				const struct row *rows = &x->rows[i * k->M];

				if (!tile_needed(k, rows, kb, hi))
					continue;
				if (!loaded) {
					for (int ks = 0; ks < k->ksteps_run; ks++) {
						load_k(k, u, kb, ks, x->breg);
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
				recover_scores(k, u, rows, x->creg, kb, hi, x->ws, x->ps);
				/* The workspace as the kernel leaves it: in a correct
				 * kernel -inf exactly where a key is not visible. */
				for (int m = 0; r->scores && m < k->M; m++) {
					const struct row *w = &rows[m];
					size_t ri;

					if (!w->primary)
						continue;
					ri = ((size_t)u->s * k->T + w->t) * k->Hq + w->qh;
					for (int n = 0; n < k->N && kb + n < k->MAXCTX; n++)
						r->scores[ri * k->MAXCTX + kb + n] =
							x->ws[m * k->N + n];
				}
				softmax_pv(k, u, rows, x->ws, x->ps, kb, &st[i * k->M], x->p);
			}
		}
	}
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
			attn_merge_row(k, u, w, segs, nseg);
			continue;
		}
		for (int j = 0; j < i; j++)
			if (x->rows[j].primary && x->rows[j].qh == w->qh)
				primary = j;
		for (int sg = 0; sg < nseg; sg++) {
			const struct rstate *a = &x->st[(size_t)sg * R + i];
			const struct rstate *b = &x->st[(size_t)sg * R + primary];

			if (a->m != b->m || a->l != b->l ||
			    memcmp(a->o, b->o, (size_t)k->D * sizeof(float))) {
				(*replica_bad)++;
				break;
			}
		}
	}
	return 0;
}

static void c_row_slots_free(struct kern *k)
{
	free(k->rowslots);
	free(k->rowcount);
	free(k->col_contig);
	free(k->seq_block0);
}

/* The kernel's column tables and page walk from its assumptions. */
static enum fs_rc kernel_tables(struct kern *k, struct fs_err *err)
{
	const struct fs_kernel *kn = k->kn;
	const int *prof = k->lm->op[LM_C].col;
	int slots = k->W * k->EC, b0 = 0;

	k->col_scale = k->col_mask = k->col_write = prof;
	if (kn->c_columns || kn->tail_mask || kn->transpose) {
		k->col_contig = malloc((size_t)slots * sizeof(int));
		if (!k->col_contig)
			return fs_fail(err, FS_EINTERNAL, "out of memory");
		if (kernel_contiguous_cols(k->lm, k->col_contig))
			return fs_fail(err, FS_EINPUT,
				       "kernel: adjacent-column beliefs need lanes holding equal shares of each C row; %s does not",
				       k->lm->name);
		if (kn->c_columns)
			k->col_scale = k->col_contig;
		if (kn->c_columns || kn->tail_mask)
			k->col_mask = k->col_contig;
		if (kn->c_columns || kn->transpose)
			k->col_write = k->col_contig;
	}
	k->seq_block0 = malloc((size_t)k->c->n_seqs * sizeof(int));
	if (!k->seq_block0)
		return fs_fail(err, FS_EINTERNAL, "out of memory");
	for (int s = 0; s < k->c->n_seqs; s++) {
		k->seq_block0[s] = b0;
		b0 += case_blocks_of(k->c, s);
	}
	return FS_OK;
}

static int c_row_slots(struct kern *k)
{
	const struct lanemap_operand *oc = &k->lm->op[LM_C];
	int slots = k->W * k->EC;

	k->rowcap = slots;
	k->rowslots = malloc((size_t)k->M * slots * sizeof(int));
	k->rowcount = calloc((size_t)k->M, sizeof(int));
	if (!k->rowslots || !k->rowcount)
		return -1;
	for (int s = 0; s < slots; s++) {
		int m = oc->row[s];

		if (!c_primary(oc, s))
			continue;
		k->rowslots[m * k->rowcap + k->rowcount[m]++] = s;
	}
	return 0;
}

void attn_free(struct attn_result *r)
{
	free(r->out);
	free(r->scores);
	free(r->row_max);
	free(r->row_sum);
	free(r->acc);
	free(r->acc_tiles);
	free(r->seg_max);
	free(r->seg_sum);
	free(r->seg_out);
	memset(r, 0, sizeof(*r));
}

static void *alloc_n(size_t n, size_t size, size_t *total)
{
	size_t b;

	if (fs_size_mul(n, size, &b) || fs_size_add(*total, b, total) ||
	    *total > INPUTS_MAX_BYTES)
		return NULL;
	return calloc(n ? n : 1, size);
}

static enum fs_rc check_profile(const struct fs_case *c,
				const struct lanemap *lm, const struct lanemap *hw,
				struct fs_err *err)
{
	if (!lm->valid)
		return fs_fail(err, FS_EINPUT, "profile %s is not valid", lm->name);
	if (lm->op[LM_C].type != LM_I32 || lm_dtype_size(lm->op[LM_A].type) != 1 ||
	    lm_dtype_size(lm->op[LM_B].type) != 1)
		return fs_fail(err, FS_EINPUT,
			       "profile %s: the INT8 kernel needs 8-bit A and B and i32 C",
			       lm->name);
	/* Q and K are symmetric int8 ([-clip, clip], poison -128): a u8
	 * operand reads -1 as 255, so no correct kernel runs on one, and the
	 * reference's mismatch would be reported as a mapping bug. */
	for (int op = LM_A; op <= LM_B; op++)
		if (lm->op[op].type == LM_U8)
			return fs_fail_at(err, FS_EINPUT, c->file[0] ? c->file : NULL, 0, 0,
					  "isa: profile %s: %s is u8, but the kernel's Q and K are signed int8 (a u8 operand reads -1 as 255); the INT8 kernel needs i8 A and B",
					  lm->name, op == LM_A ? "a" : "b");
	if (c->k_scale == KSCALE_PER_BLOCK32 && lm->k != 32)
		return fs_fail(err, FS_EINPUT,
			       "k_scale per_block32 needs a K-step of 32 head-dim elements; %s has K = %d",
			       lm->name, lm->k);
	if (hw != lm && (!hw->valid || hw->wave != lm->wave || hw->m != lm->m ||
			 hw->n != lm->n || hw->k != lm->k ||
			 hw->op[LM_A].type != lm->op[LM_A].type ||
			 hw->op[LM_B].type != lm->op[LM_B].type ||
			 hw->op[LM_C].type != lm->op[LM_C].type ||
			 hw->op[LM_A].elems != lm->op[LM_A].elems ||
			 hw->op[LM_B].elems != lm->op[LM_B].elems ||
			 hw->op[LM_C].elems != lm->op[LM_C].elems))
		return fs_fail(err, FS_EINPUT,
			       "hardware map %s does not have the shape of %s",
			       hw->name, lm->name);
	if (c->kernel.operand_kq && (lm->m != lm->n || lm->op[LM_A].type != lm->op[LM_B].type))
		return fs_fail(err, FS_EINPUT,
			       "kernel: operand_order kq needs a square tile with A and B of one type; %s is %dx%d",
			       lm->name, lm->m, lm->n);
	if (case_segments_max(c) > ATTN_MAX_SEGMENTS)
		return fs_fail(err, FS_EINPUT,
			       "split_k.segment %d cuts a context into %d segments; at most %d",
			       c->segment, case_segments_max(c), ATTN_MAX_SEGMENTS);
	return FS_OK;
}

#define RANGE_MAX 0x1p127	/* half of f32's largest: room for rounding */

/* The largest of n floats (stride 1), NaN (poison) skipped; inf counts. */
static double max_abs(const float *x, size_t n)
{
	double m = 0.0;

	for (size_t i = 0; i < n; i++)
		if (fabsf(x[i]) > m)
			m = fabsf(x[i]);
	return m;
}

/*
 * Can the kernel's f32 arithmetic overflow on these inputs? A real kernel
 * would overflow as the emulation does, while the reference (double)
 * would not, and the difference would be reported as a mapping bug; so an
 * input past f32's range is refused, naming the tensor. Bounds, with A =
 * head_dim * clip^2 the largest |acc|:
 *   scores  every intermediate of ((float(acc) * sQ) * sK) * scale is at
 *           most A * max(sQ, sQ sK, sQ sK scale), maxima over the inputs
 *           (per_block32 sums acc_kb * sK_kb first: A * max(sK, ...));
 *   PV      o and the merged out sum at most (keys) p |v| <= MAXCTX max|v|
 *           (p <= 1; the row's max has p = 1, so every l >= 1).
 * Both must stay within 2^127. Example: one Q element of 3e38 makes
 * sQ = 3e38 / 127 = 2.4e36, and with head_dim 64 the first product
 * float(acc) * sQ can reach 64 * 127^2 * 2.4e36 = 2.4e42: refused.
 */
static enum fs_rc check_range(const struct fs_case *c, const struct fs_inputs *in,
			      struct fs_err *err)
{
	const char *f = c->file[0] ? c->file : NULL;
	size_t nks = (size_t)in->NB * in->BS * in->Hkv;
	double sq = max_abs(in->q_scale, (size_t)in->S * in->T * in->Hq), sk = 0.0, v;
	double a = (double)in->D * c->clip * c->clip, sc = c->softmax_scale, bound;

	if (c->k_scale == KSCALE_PER_TENSOR)
		sk = fabsf(in->k_scale[0]);
	else if (c->k_scale == KSCALE_PER_TOKEN_HEAD)
		sk = max_abs(in->k_scale, nks);
	else
		for (size_t i = 0; i < nks * (size_t)(in->D / 32); i++) {
			float x = quant_f16_to_f32(in->k_scale16[i]);

			if (fabsf(x) > sk)
				sk = fabsf(x);
		}
	if (c->v_dtype == VDT_INT8)
		v = 127.0 * max_abs(in->v_scale, nks);
	else
		v = max_abs(in->v_cache_f, nks * (size_t)in->D);
	if (isinf(sq) || isinf(sk) || isinf(v))
		return fs_fail_at(err, FS_EINPUT, f, 0, 0,
				  "%s: a value is past f32's range as the kernel stores it (BF16 rounds |x| > 3.39e+38 to inf%s)",
				  isinf(sq) ? "data.q" : isinf(sk) ? "data.k" : "data.v",
				  isinf(sk) && c->k_scale == KSCALE_PER_BLOCK32 ?
				  "; per_block32's fp16 K scale overflows past 65504, |K| > 65504 x clip" : "");
	bound = a * fmax(c->k_scale == KSCALE_PER_BLOCK32 ? sk : sq,
			 fmax(sq * sk, sq * sk * sc));
	if (bound > RANGE_MAX)
		return fs_fail_at(err, FS_EINPUT, f, 0, 0,
				  "data.q, data.k: the f32 score products can reach %.3g (head_dim %d x clip %d^2 x the largest of sQ, sQ sK, sQ sK softmax_scale; max sQ %.3g, max sK %.3g, softmax_scale %.3g), past 2^127 = 1.7e+38: the kernel's f32 arithmetic would overflow; scale Q or K down",
				  bound, in->D, c->clip, sq, sk, sc);
	if ((double)in->MAXCTX * v > RANGE_MAX)
		return fs_fail_at(err, FS_EINPUT, f, 0, 0,
				  "data.v: the f32 PV sums can reach %.3g (%d keys x max |V| %.3g), past 2^127 = 1.7e+38: the kernel's f32 arithmetic would overflow; scale V down",
				  (double)in->MAXCTX * v, in->MAXCTX, v);
	return FS_OK;
}

int attn_exec_parse(const char *s, enum attn_exec *e)
{
	static const char *const names[] = { "auto", "scalar", "portable", "avx2", "avx512" };

	for (int i = 0; i < 5; i++)
		if (!strcmp(s, names[i])) {
			*e = (enum attn_exec)i;
			return 0;
		}
	return -1;
}

enum fs_rc attn_run(const struct fs_case *c, const struct lanemap *lm,
		    const struct fs_inputs *in, struct attn_result *r,
		    struct fs_err *err)
{
	return attn_run_opts(c, lm, NULL, in, r, err);
}

/*
 * Units in any order on any thread: each writes only its own rows and
 * tiles, so the bytes do not depend on the thread count. Returns the
 * number of failures; *bad counts replica disagreements.
 */
static int run_units(const struct kern *k, const struct unit *units,
		     size_t nunits, int fast, enum tile_isa isa, int maxrt,
		     long *badp)
{
	const struct fs_case *c = k->c;
	int failed = 0;
	long bad = 0;

#pragma omp parallel reduction(+ : bad, failed)
	{
		struct scratch x;
		struct fscratch f;
		int ng = c->mode == MODE_DECODE ? (k->G + 15) / 16 : maxrt;

		if (scratch_alloc(k, maxrt, case_segments_max(c), &x)) {
			failed++;
		} else if (fast && attn_fast_alloc(k, ng, maxrt, &f)) {
			scratch_free(&x);
			failed++;
		} else {
#pragma omp for schedule(dynamic, 1)
			for (size_t i = 0; i < nunits; i++)
				if (fast ? attn_fast_unit(k, &units[i], isa, &x, &f) :
					   run_unit(k, &units[i], &x, &bad))
					failed++;
			scratch_free(&x);
			if (fast)
				attn_fast_free(&f);
		}
	}
	*badp = bad;
	return failed;
}

/* A piece of fast_split: segments [sg0, sg1) of a unit. */
struct segpiece {
	size_t tile0;
	int sg0, sg1;
};

#define SPLIT_SEGS 4	/* segments per piece: 64 pieces per 256 segments */

/*
 * Decode, fast path, few units: one unit after the other, its pieces of
 * SPLIT_SEGS segments on any thread, each writing its segments' states
 * into one shared array (and its pre-numbered acc tiles); then the
 * unit's rows merge in segment order, spread over the threads. A
 * segment's state depends on that segment only, so the bytes are those of
 * attn_fast_unit for any thread count. The array holds one unit's states
 * (1.5 MiB at 131072 keys), not all units' (6 MiB): fresh memory costs
 * ~2.3 ms per MiB to fault in on this machine, more than the merge's
 * barriers. Returns the number of failures.
 */
static int fast_split(const struct kern *k, const struct unit *units,
		      size_t nunits, enum tile_isa isa, int maxrt)
{
	/* States of the G distinct rows only (attn_fast_segs' stride). */
	size_t R = (size_t)k->G, nst = (size_t)case_segments_max(k->c) * R, np = 0, *p0;
	struct segpiece *pc;
	struct rstate *sts;
	float *obuf;
	struct row *rows;
	int failed = 0;

	p0 = malloc((nunits + 1) * sizeof(*p0));
	rows = malloc((size_t)maxrt * k->M * sizeof(*rows));
	if (!p0 || !rows) {
		free(p0);
		free(rows);
		return 1;
	}
	for (size_t i = 0; i < nunits; i++)
		np += (size_t)(case_segments_of(k->c, units[i].s) + SPLIT_SEGS - 1) / SPLIT_SEGS;
	pc = malloc(np * sizeof(*pc));
	sts = malloc(nst * sizeof(*sts));
	obuf = malloc(nst * k->D * sizeof(float));
	if (!pc || !sts || !obuf) {
		free(p0), free(rows), free(pc), free(sts), free(obuf);
		return 1;
	}
	for (size_t i = 0; i < nst; i++)
		sts[i].o = &obuf[i * k->D];
	np = 0;
	for (size_t i = 0; i < nunits; i++) {
		int nseg = case_segments_of(k->c, units[i].s);
		size_t tile = units[i].tile0;

		p0[i] = np;
		attn_unit_rows(k, &units[i], rows);
		for (int sg = 0; sg < nseg; sg += SPLIT_SEGS) {
			pc[np] = (struct segpiece){ tile, sg,
						    sg + SPLIT_SEGS < nseg ? sg + SPLIT_SEGS : nseg };
			for (int j = sg; j < pc[np].sg1; j++)
				tile += seg_tiles(k, &units[i], rows, j);
			np++;
		}
	}
	p0[nunits] = np;
#pragma omp parallel reduction(+ : failed)
	{
		struct scratch x;
		struct fscratch f;

		if (scratch_alloc(k, maxrt, 1, &x)) {
			failed++;
		} else if (attn_fast_alloc(k, (k->G + 15) / 16, maxrt, &f)) {
			scratch_free(&x);
			failed++;
		} else {
			for (size_t i = 0; i < nunits; i++) {
#pragma omp for schedule(dynamic, 1)
				for (size_t p = p0[i]; p < p0[i + 1]; p++)
					if (attn_fast_segs(k, &units[i], isa, pc[p].sg0, pc[p].sg1,
							   pc[p].tile0, sts, &x, &f))
						failed++;
				/* the barrier above: every state of unit i is written */
#pragma omp for schedule(static)
				for (int row = 0; row < k->G; row++)
					attn_fast_merge(k, &units[i], sts, &x, row, row + 1);
				/* and here: merged before the next unit's states */
			}
			scratch_free(&x);
			attn_fast_free(&f);
		}
	}
	free(p0), free(rows), free(pc), free(sts), free(obuf);
	return failed;
}

enum fs_rc attn_run_opts(const struct fs_case *c, const struct lanemap *lm,
			 const struct attn_opts *opts, const struct fs_inputs *in,
			 struct attn_result *r, struct fs_err *err)
{
	struct kern k;
	struct unit *units = NULL;
	struct row *rows;
	size_t nunits = 0, total = 0, rows_n;
	long bad = 0;
	int failed, maxrt = 1, fast;
	enum attn_exec want = opts ? opts->exec : ATTN_EXEC_AUTO;
	enum tile_isa isa = TILE_PORTABLE;
	unsigned drop = opts ? opts->drop : 0;
	enum fs_rc rc;

	memset(r, 0, sizeof(*r));
	memset(&k, 0, sizeof(k));
	k.c = c, k.kn = &c->kernel, k.lm = lm, k.in = in, k.r = r;
	k.hw = opts && opts->hw ? opts->hw : lm;
	rc = check_profile(c, lm, k.hw, err);
	if (!rc)
		rc = check_range(c, in, err);
	if (rc)
		return rc;
	k.M = lm->m, k.N = lm->n, k.K = lm->k, k.W = lm->wave;
	k.EA = lm->op[LM_A].elems, k.EB = lm->op[LM_B].elems, k.EC = lm->op[LM_C].elems;
	/* A head_dim that K does not divide (80, 112 with K = 32) takes one
	 * more K-step, zero-padded past head_dim, as a kernel pads it. */
	k.D = c->head_dim, k.ksteps = (k.D + k.K - 1) / k.K, k.G = case_group(c);
	k.BS = c->block_size, k.MAXB = in->MAXB, k.Hq = c->q_heads, k.Hkv = c->kv_heads;
	k.T = in->T, k.MAXCTX = in->MAXCTX;
	k.per_block32 = c->k_scale == KSCALE_PER_BLOCK32;
	logit_init(&k.lmod, c);
	k.dims = c->kernel.head_dim_loaded ? c->kernel.head_dim_loaded : k.D;
	k.ksteps_run = (k.dims + k.K - 1) / k.K;
	if (c_row_slots(&k)) {
		c_row_slots_free(&k);
		return fs_fail(err, FS_EINTERNAL, "out of memory");
	}
	rc = kernel_tables(&k, err);
	if (rc) {
		c_row_slots_free(&k);
		return rc;
	}
	if (want != ATTN_EXEC_SCALAR && want != ATTN_EXEC_AUTO &&
	    want != ATTN_EXEC_PORTABLE) {
		isa = want == ATTN_EXEC_AVX2 ? TILE_AVX2 : TILE_AVX512;
		if (!tile_isa_supported(isa)) {
			c_row_slots_free(&k);
			return fs_fail(err, FS_EINPUT, "exec %s: this CPU does not have it",
				       tile_isa_name(isa));
		}
	} else if (want == ATTN_EXEC_AUTO) {
		isa = tile_isa_best();
	}
	fast = want != ATTN_EXEC_SCALAR && kernel_is_default(&c->kernel) &&
	       k.hw == lm && k.M <= 16 &&
	       (c->mode == MODE_DECODE ? attn_fast_rows_agree(&k) : 1);
	if (fast)
		attn_fast_order(&k);

	/* Work units, then their tile counts, so tile indices are fixed
	 * before any thread runs. */
	if (c->mode == MODE_DECODE) {
		int nrt = (k.G + k.M - 1) / k.M;

		maxrt = nrt;
		units = calloc((size_t)c->n_seqs * k.T * k.Hkv, sizeof(*units));
		for (int s = 0; units && s < c->n_seqs; s++)
			for (int t = 0; t < c->seqs[s].tokens; t++)
				for (int h = 0; h < k.Hkv; h++)
					units[nunits++] = (struct unit){ s, t, h, 0, nrt, 0 };
	} else {
		int per = WAVES_PER_GROUP, cap = 0;

		for (int s = 0; s < c->n_seqs; s++)
			cap += k.Hq * ((c->seqs[s].tokens + k.M * per - 1) / (k.M * per));
		maxrt = per;
		units = calloc((size_t)cap, sizeof(*units));
		for (int s = 0; units && s < c->n_seqs; s++) {
			int nrt = (c->seqs[s].tokens + k.M - 1) / k.M;

			for (int h = 0; h < k.Hq; h++)
				for (int rt = 0; rt < nrt; rt += per)
					units[nunits++] = (struct unit){
						s, 0, h, rt, nrt - rt < per ? nrt - rt : per, 0 };
		}
	}
	rows_n = (size_t)maxrt * k.M;
	rows = malloc(rows_n * sizeof(*rows));
	if (!units || !rows) {
		free(units);
		free(rows);
		c_row_slots_free(&k);
		return fs_fail(err, FS_EINTERNAL, "out of memory");
	}
	for (size_t i = 0; i < nunits; i++) {
		attn_unit_rows(&k, &units[i], rows);
		units[i].tile0 = r->n_tiles;
		r->n_tiles += unit_tiles(&k, &units[i], rows);
	}
	free(rows);

	r->S = c->n_seqs, r->T = k.T, r->Hq = k.Hq, r->D = k.D, r->MAXCTX = k.MAXCTX;
	r->wave = k.W, r->ec = k.EC, r->rows = k.M;
	r->ksteps_in_acc = k.per_block32 ? k.ksteps : 1;
	r->nseg = case_segments_max(c);
	{
		size_t rows_all = (size_t)c->n_seqs * k.T * k.Hq;
		size_t acc_n = r->n_tiles * (size_t)r->ksteps_in_acc * k.W * k.EC;

		int want_scores = !(drop & ATTN_DROP_SCORES), want_acc = !(drop & ATTN_DROP_ACC);
		int want_seg = r->nseg > 1 && !(drop & ATTN_DROP_SPLITK);

		r->out = alloc_n(rows_all * k.D, sizeof(float), &total);
		if (want_scores)
			r->scores = alloc_n(rows_all * k.MAXCTX, sizeof(float), &total);
		r->row_max = alloc_n(rows_all, sizeof(float), &total);
		r->row_sum = alloc_n(rows_all, sizeof(float), &total);
		if (want_acc) {
			r->acc = alloc_n(acc_n, sizeof(int32_t), &total);
			r->acc_tiles = alloc_n(r->n_tiles * ATTN_TILE_COLS, sizeof(int32_t),
					       &total);
		}
		if (want_seg) {
			r->seg_max = alloc_n(rows_all * r->nseg, sizeof(float), &total);
			r->seg_sum = alloc_n(rows_all * r->nseg, sizeof(float), &total);
			r->seg_out = alloc_n(rows_all * r->nseg * k.D, sizeof(float), &total);
		}
		if (!r->out || (want_scores && !r->scores) || !r->row_max || !r->row_sum ||
		    (want_acc && (!r->acc || !r->acc_tiles)) ||
		    (want_seg && (!r->seg_max || !r->seg_sum || !r->seg_out))) {
			attn_free(r);
			free(units);
			c_row_slots_free(&k);
			return fs_fail(err, FS_EINPUT,
				       "the emulation's outputs need more than %zu GiB",
				       INPUTS_MAX_BYTES >> 30);
		}
		for (size_t i = 0; r->scores && i < rows_all * k.MAXCTX; i++)
			r->scores[i] = -INFINITY;
		if (r->seg_max)
			for (size_t i = 0; i < rows_all * r->nseg; i++)
				r->seg_max[i] = -INFINITY;
	}
	{
		/* decode: G q heads over ceil(G / M) row tiles of M rows */
		int distinct = k.G / ((k.G + k.M - 1) / k.M);

		r->distinct_rows = c->mode == MODE_DECODE ? distinct : k.M;
	}

	r->exec = fast ? tile_isa_name(isa) : "scalar";

	/* Decode with fewer units than threads: split the units' split-K
	 * segments over the threads instead (fast_split). */
	if (fast && c->mode == MODE_DECODE && r->nseg > 1 &&
	    nunits < 4 * (size_t)omp_get_max_threads())
		failed = fast_split(&k, units, nunits, isa, maxrt);
	else
		failed = run_units(&k, units, nunits, fast, isa, maxrt, &bad);
	free(units);
	c_row_slots_free(&k);
	r->replica_mismatch = bad;
	if (failed) {
		attn_free(r);
		return fs_fail(err, FS_EINTERNAL,
			       "emulation failed (out of memory or replica disagreement)");
	}
	return FS_OK;
}
