/*
 * attn.c - the emulated kernel (see attn.h): paged INT8 QK^T on a matrix
 * instruction, lane by lane, then per-element scale recovery, masks,
 * online softmax, the workspace transpose, split-K and PV.
 *
 * One work unit is what one workgroup of the real kernel does:
 *   decode   (sequence, query token, kv head): M rows = the G q heads of
 *            the group, row r holding q head h*G + r % G
 *   prefill  (sequence, q head, 8 row tiles): 8 waves x M rows = 128
 *            query rows sharing every K tile they load
 * For each split-K segment, for each key tile of N keys, for each K-step:
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
 * the load). Either way the column is masked, its P is 0 and its V is not
 * read. Tiles whose keys are all causally masked for every row are not
 * executed, as the kernel's loop bound stops before them.
 */
#include "attn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fexp.h"
#include "mmac.h"
#include "tile_fast.h"

#define WAVES_PER_GROUP 8	/* prefill: 8 waves x M rows per workgroup */
#define ATTN_MAX_SEGMENTS 1024	/* split-K segments per context */

struct kern {
	const struct fs_case *c;
	const struct fs_kernel *kn;	/* the kernel's assumptions */
	const struct lanemap *lm;	/* the kernel's map: loads and C reads */
	const struct lanemap *hw;	/* the map the hardware executes */
	const struct fs_inputs *in;
	struct attn_result *r;
	int M, N, K, W, EA, EB, EC, ksteps, G, D, BS, MAXB, Hq, Hkv, T, MAXCTX;
	int per_block32;
	int ksteps_run;		/* K-steps the kernel issues (head_dim_loaded) */
	/* Slots of each C row in slot order: rowslots[m*rowcap + i]. */
	int *rowslots, *rowcount, rowcap;
	/* The C column the kernel believes each slot holds, per use. */
	const int *col_scale, *col_mask, *col_write;
	int *col_contig;	/* the "adjacent columns" belief, when used */
	int *seq_block0;	/* page_walk none: first block of each sequence */
};

/* One row of a row tile: which query it is. */
struct row {
	int valid;		/* 0: prefill padding row */
	int t, qh;		/* query token and q head */
	int q_pos;
	int primary;		/* writes scores/out (first replica in decode) */
	float sq;		/* q scale */
	const int8_t *q;	/* its D quantized values */
};

struct unit {
	int s, t, h;		/* decode: h = kv head; prefill: h = q head */
	int rt0, nrt;		/* prefill: first row tile and count */
	size_t tile0;		/* first acc tile index */
};

/* Softmax state of one row within one segment. */
struct rstate {
	float m, l;
	float *o;		/* [D], unnormalized */
};

static int kv_head_of(const struct kern *k, const struct unit *u)
{
	if (k->c->mode == MODE_DECODE)
		return u->h;
	return k->kn->gqa_modulo ? u->h % k->Hkv : u->h / k->G;
}

/* The physical block the kernel reads for key tok of sequence s. */
static int block_of(const struct kern *k, int s, int tok)
{
	if (k->kn->page_walk_none)
		return k->seq_block0[s] + tok / k->BS;
	return k->in->block_table[s * k->MAXB + tok / k->BS];
}

static void rows_of_tile(const struct kern *k, const struct unit *u, int rt,
			 struct row *rows)
{
	const struct fs_inputs *in = k->in;

	for (int m = 0; m < k->M; m++) {
		struct row *w = &rows[m];

		memset(w, 0, sizeof(*w));
		if (k->c->mode == MODE_DECODE) {
			int local = (rt * k->M + m) % k->G;

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

static void seg_bounds(const struct kern *k, int s, int sg, int *lo, int *hi)
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
static void unit_rows(const struct kern *k, const struct unit *u, struct row *rows)
{
	for (int i = 0; i < u->nrt; i++)
		rows_of_tile(k, u, u->rt0 + i, &rows[i * k->M]);
}

static size_t unit_tiles(const struct kern *k, const struct unit *u,
			 const struct row *rows)
{
	size_t n = 0;

	for (int sg = 0; sg < case_segments_of(k->c, u->s); sg++) {
		int lo, hi;

		seg_bounds(k, u->s, sg, &lo, &hi);
		for (int kb = lo; kb < hi; kb += k->N)
			for (int i = 0; i < u->nrt; i++)
				n += tile_needed(k, &rows[i * k->M], kb, hi);
	}
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
	int g = kv_head_of(k, u), nblk = case_blocks_of(k->c, u->s);

	for (int slot = 0; slot < k->W * o->elems; slot++) {
		int tok = kb + op_free(o, op, slot);
		int dim = ks * k->K + op_red(o, op, slot);
		int8_t v = 0;

		if (tok / k->BS < nblk) {
			int blk = block_of(k, u->s, tok);
			size_t a = ((((size_t)blk * k->Hkv + g) * (k->D / 16) +
				     dim / 16) * k->BS + tok % k->BS) * 16 + dim % 16;

			v = in->k_cache[a];
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

		reg[slot] = w->valid ?
			    (uint8_t)w->q[ks * k->K + op_red(o, op, slot)] : 0;
	}
}

static float k_scale_of(const struct kern *k, const struct unit *u, int tok,
			int ks)
{
	const struct fs_inputs *in = k->in;
	int blk = block_of(k, u->s, tok);

	return inputs_k_scale(k->c, in, blk, tok % k->BS, kv_head_of(k, u),
			      ks * k->K);
}

/*
 * Where key tok's V column lives: element d is base[d * BS], times *scale
 * for int8 V (NULL for float V). Looked up once per key, not per element.
 */
struct vcol {
	const int8_t *i8;
	const float *f;
	float scale;
};

static struct vcol v_col(const struct kern *k, const struct unit *u, int tok)
{
	const struct fs_inputs *in = k->in;
	int g = kv_head_of(k, u);
	int blk = block_of(k, u->s, tok), slot = tok % k->BS;
	size_t a = ((size_t)blk * k->Hkv + g) * k->D * k->BS + slot;
	struct vcol v = { NULL, NULL, 0.0f };

	if (k->c->v_dtype == VDT_INT8) {
		v.i8 = &in->v_cache_i8[a];
		v.scale = in->v_scale[((size_t)blk * k->BS + slot) * k->Hkv + g];
	} else {
		v.f = &in->v_cache_f[a];
	}
	return v;
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

		if (!key_visible(k, w, seg_end, kb + k->col_mask[slot])) {
			ws[m * k->N + n] = -INFINITY;
			continue;
		}
		if (after) {
			float acc = 0.0f;

			for (int ks = 0; ks < k->r->ksteps_in_acc; ks++)
				acc += (float)creg[ks * slots + slot];
			sc = acc * (float)k->c->softmax_scale;
			ps[m * k->N + n] = w->sq * k_scale_of(k, u, js, 0);
		} else if (k->per_block32) {
			float acc = 0.0f;

			for (int ks = 0; ks < k->ksteps; ks++)
				acc += (float)creg[ks * slots + slot] *
				       k_scale_of(k, u, js, ks);
			sc = acc * w->sq * (float)k->c->softmax_scale;
		} else {
			sc = (float)creg[slot] * w->sq * k_scale_of(k, u, js, 0) *
			     (float)k->c->softmax_scale;
		}
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
			v = v_col(k, u, kb + n);
			if (v.i8)
				for (int d = 0; d < k->D; d++)
					x->o[d] += pn * ((float)v.i8[(size_t)d * k->BS] * v.scale);
			else
				for (int d = 0; d < k->D; d++)
					x->o[d] += pn * v.f[(size_t)d * k->BS];
		}
	}
}

struct scratch {
	uint8_t *areg, *breg;
	int32_t *am, *bm, *creg;
	float *ws, *ps, *p;
	struct row *rows;
	struct rstate *st;	/* [nseg][nrt*M] */
	float *obuf;
};

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
static void merge_row(const struct kern *k, const struct unit *u,
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
	for (int d = 0; d < k->D; d++)
		out[d] = l > 0.0f ? out[d] / l : 0.0f;
	r->row_max[ri] = mx;
	r->row_sum[ri] = l;
}

/* One executed tile's C registers (per K-step with per_block32). */
static void acc_store(const struct kern *k, const struct unit *u, size_t tile,
		      int rt, int kb, const int32_t *creg)
{
	struct attn_result *r = k->r;
	size_t n = (size_t)r->ksteps_in_acc * k->W * k->EC;

	memcpy(&r->acc[tile * n], creg, n * sizeof(int32_t));
	r->acc_tiles[tile * 4 + 0] = u->s;
	r->acc_tiles[tile * 4 + 1] = u->h;
	r->acc_tiles[tile * 4 + 2] = k->c->mode == MODE_DECODE ? u->t : rt * k->M;
	r->acc_tiles[tile * 4 + 3] = kb;
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
	unit_rows(k, u, x->rows);
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

		seg_bounds(k, u->s, sg, &lo, &hi);
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
					acc_store(k, u, tile, u->rt0 + i, kb, x->creg);
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
			merge_row(k, u, w, segs, nseg);
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

/*
 * The fast path: the same unit, for the correct kernel on its own
 * hardware map, with the register round trip taken out.
 *
 * Why it gives the scalar executor's bytes:
 *   - For the correct kernel, load_q/load_k put A[m][kk] = Qq[row m][dim]
 *     and B[kk][n] = K[key kb + n][dim] into the registers through lm, and
 *     mmac_read reads them back through the same map (hw == lm): the
 *     identity on the matrices. So C = Q K^T exactly, computed here as
 *     int32 dot products (tile_qk), and the C registers kept in acc are the
 *     profile's scatter of C (acc_store). K is staged from the paged
 *     cache under load_k's rule: a key inside the last block loads its
 *     slot, a key past the block table loads 0.
 *   - Scores, masks and the workspace column are the profile's column,
 *     so ws[m][n] is recover_scores' value for every (m, n): the same
 *     f32 products in the same order.
 *   - Softmax walks each row's slots in the scalar order (rowslots: the
 *     max, then p summed in register order within a lane, lanes in
 *     order); only the exps are computed ahead, by tile_exp, which is
 *     fs_expf bit for bit.
 *   - PV: per (row, d) the same o * alpha, then o + p * vf per visible
 *     key in key order (tile_pv); vf = (float)v * v_scale is a function of
 *     the key alone, so computing it once per tile changes nothing.
 *   - Decode: rows r and r' with the same q head have the same Q, so the
 *     same C row, scores, masks; if their slot orders also agree (checked
 *     once, fast_rows_agree, else the scalar executor runs) every state
 *     is the same, so only the G distinct rows are computed and
 *     replica_mismatch is 0 by construction.
 * Rows are processed in groups of at most 16 (the lanes of tile_pv):
 * decode the distinct rows, prefill one row tile each.
 */
struct fscratch {
	int8_t *kst;		/* [D/16][N][16]: K staged when not in one block */
	int8_t *qb;		/* [ng][16][D] */
	int32_t *qsum;		/* [ng][16] */
	int32_t *dot;		/* [ksteps_in_acc][ng][16][N] */
	int32_t *creg;		/* [ksteps_in_acc][slots] */
	float *ws, *ex;		/* [16][N]: scores; exps (P), then the alphas */
	uint16_t *vis;		/* [N]: bit r, key n visible to row r */
	float *vn;		/* [N][D] */
	float *ksc, *vsc;	/* [ksteps][N], [N] */
	float *ot;		/* [ng][16][D] */
	float *gm, *gl;		/* [ng][16] */
	int *needed;		/* [nrt] */
};

static void fscratch_free(struct fscratch *f)
{
	free(f->kst);
	free(f->qb);
	free(f->qsum);
	free(f->dot);
	free(f->creg);
	free(f->ws);
	free(f->ex);
	free(f->vis);
	free(f->vn);
	free(f->ksc);
	free(f->vsc);
	free(f->ot);
	free(f->gm);
	free(f->gl);
	free(f->needed);
	memset(f, 0, sizeof(*f));
}

static int fscratch_alloc(const struct kern *k, int ng, int nrt, struct fscratch *f)
{
	size_t N = (size_t)k->N, D = (size_t)k->D, G = (size_t)ng * 16;
	size_t ks = (size_t)k->ksteps;

	memset(f, 0, sizeof(*f));
	f->kst = malloc(D * N);
	f->qb = calloc(G * D, 1);
	f->qsum = calloc(G, sizeof(int32_t));
	f->dot = malloc(ks * G * N * sizeof(int32_t));
	f->creg = malloc(ks * k->W * k->EC * sizeof(int32_t));
	f->ws = malloc(16 * N * sizeof(float));
	f->ex = malloc((16 * N + 16) * sizeof(float));
	f->vis = malloc(N * sizeof(uint16_t));
	f->vn = calloc(D * N, sizeof(float));
	f->ksc = malloc(ks * N * sizeof(float));
	f->vsc = malloc(N * sizeof(float));
	f->ot = malloc(G * D * sizeof(float));
	f->gm = malloc(G * sizeof(float));
	f->gl = malloc(G * sizeof(float));
	f->needed = malloc((size_t)nrt * sizeof(int));
	if (!f->kst || !f->qb || !f->qsum || !f->dot || !f->creg || !f->ws ||
	    !f->ex || !f->vis || !f->vn || !f->ksc || !f->vsc ||
	    !f->ot || !f->gm || !f->gl || !f->needed) {
		fscratch_free(f);
		return -1;
	}
	return 0;
}

/* Do replica rows sum their slots in their primary's order? (decode) */
static int fast_rows_agree(const struct kern *k)
{
	const int *col = k->col_write;

	for (int m = k->G; m < k->M; m++) {
		int p = m % k->G;
		const int *a = &k->rowslots[m * k->rowcap], *b = &k->rowslots[p * k->rowcap];

		if (k->rowcount[m] != k->rowcount[p])
			return 0;
		for (int i = 0; i < k->rowcount[m]; i++) {
			int na = i == 0 || a[i] / k->EC != a[i - 1] / k->EC;
			int nb = i == 0 || b[i] / k->EC != b[i - 1] / k->EC;

			if (col[a[i]] != col[b[i]] || na != nb)
				return 0;
		}
	}
	return 1;
}

/*
 * The tile's K, chunk-major, under load_k's rule (a key inside the last
 * block loads its slot, one past the block table loads 0): in place in
 * the cache when the N keys are consecutive slots of one block, else
 * staged in kst. Returns the chunk stride in bytes; *kp the first chunk.
 */
static size_t tile_k(const struct kern *k, const struct unit *u, int kb,
		     int8_t *kst, const int8_t **kp)
{
	const int8_t *kc = k->in->k_cache;
	int g = kv_head_of(k, u), nblk = case_blocks_of(k->c, u->s), C = k->D / 16;

	if (kb % k->BS + k->N <= k->BS && kb / k->BS < nblk) {
		*kp = &kc[(((size_t)block_of(k, u->s, kb) * k->Hkv + g) * C) *
			  k->BS * 16 + (size_t)(kb % k->BS) * 16];
		return (size_t)k->BS * 16;
	}
	for (int n = 0; n < k->N; n++) {
		int tok = kb + n;

		for (int c = 0; c < C; c++) {
			int8_t *dst = &kst[((size_t)c * k->N + n) * 16];

			if (tok / k->BS < nblk)
				memcpy(dst, &kc[((((size_t)block_of(k, u->s, tok) * k->Hkv + g) *
						 C + c) * k->BS + tok % k->BS) * 16], 16);
			else
				memset(dst, 0, 16);
		}
	}
	*kp = kst;
	return (size_t)k->N * 16;
}

/* Prefetch the K and V of the unit's tile at kb (the next one). */
static void tile_prefetch(const struct kern *k, const struct unit *u, int kb, int hi)
{
	size_t a, bytes = (size_t)k->D * k->BS;
	const int8_t *kp, *vp;

	if (kb >= hi || kb % k->BS || k->c->v_dtype != VDT_INT8 || k->BS > 64)
		return;
	a = ((size_t)block_of(k, u->s, kb) * k->Hkv + kv_head_of(k, u)) * bytes;
	kp = &k->in->k_cache[a];
	vp = &k->in->v_cache_i8[a];
	for (size_t i = 0; i < bytes; i += 64) {
		__builtin_prefetch(kp + i);
		__builtin_prefetch(vp + i);
	}
}

/* The tile's V as f32 for keys kb .. kb + nv - 1 (all inside the context). */
static void stage_v(const struct kern *k, const struct unit *u, enum tile_isa isa,
		    int kb, int nv, struct fscratch *f)
{
	if (k->c->v_dtype == VDT_INT8 && nv == k->N && kb % k->BS + k->N <= k->BS) {
		struct vcol v0 = v_col(k, u, kb);

		for (int n = 0; n < k->N; n++)
			f->vsc[n] = v_col(k, u, kb + n).scale;
		tile_vconv(isa, v0.i8, k->BS, k->D, k->N, f->vsc, f->vn);
		return;
	}
	for (int n = 0; n < nv; n++) {
		struct vcol v = v_col(k, u, kb + n);

		for (int d = 0; d < k->D; d++)
			f->vn[(size_t)n * k->D + d] =
				v.i8 ? (float)v.i8[(size_t)d * k->BS] * v.scale :
				       v.f[(size_t)d * k->BS];
	}
}

/* Per-K-step dots (per_block32): dotk[ks][r][n], plain C. */
static void qk_ksteps(const struct kern *k, const int8_t *q, int R,
		      const int8_t *kt, size_t cstride, int32_t *dot, size_t kstride)
{
	int cper = k->K / 16;

	for (int ks = 0; ks < k->ksteps; ks++)
		for (int r = 0; r < R; r++)
			for (int n = 0; n < k->N; n++) {
				int32_t s = 0;

				for (int c = ks * cper; c < (ks + 1) * cper; c++)
					for (int j = 0; j < 16; j++)
						s += (int32_t)q[(size_t)r * k->D + c * 16 + j] *
						     (int32_t)kt[c * cstride + (size_t)n * 16 + j];
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
 * One row group (rows[0 .. gn - 1], C rows m0 + i mod M) on one
 * executed tile: scores, softmax, PV. st: the group's state (ot, gm, gl).
 */
static void fast_group_tile(const struct kern *k, const struct unit *u,
			    enum tile_isa isa, const struct row *rows, int m0, int gn,
			    const int32_t *dot, size_t kstride, int kb, int hi,
			    float *ot, float *gm, float *gl, struct fscratch *f,
			    int *vstaged)
{
	struct attn_result *r = k->r;
	const int *col = k->col_write;
	float ss = (float)k->c->softmax_scale, alpha[16], gm_old[16];
	uint16_t upd = 0;
	int N = k->N, nv = hi - kb < N ? hi - kb : N;

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
			f->ws[i * N + n] = sc;
		}
		if (r->scores && w->primary) {
			size_t ri = ((size_t)u->s * k->T + w->t) * k->Hq + w->qh;

			for (int n = 0; n < N && kb + n < k->MAXCTX; n++)
				r->scores[ri * k->MAXCTX + kb + n] = f->ws[i * N + n];
		}
	}
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
	tile_exp(isa, f->ex, gn * N + gn);
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
		gl[i] = gl[i] * alpha[i] + sum;
		for (int n = 0; n < N; n++)
			if (f->ws[i * N + n] != -INFINITY)
				f->vis[n] |= (uint16_t)(1u << i);
	}
	if (!upd)
		return;
	if (!*vstaged && nv > 0) {
		stage_v(k, u, isa, kb, nv, f);
		*vstaged = 1;
	}
	tile_pv(isa, ot, gn, k->D, f->vn, N, f->ex, f->vis, upd, alpha);
}

static int run_unit_fast(const struct kern *k, const struct unit *u,
			 enum tile_isa isa, struct scratch *x, struct fscratch *f)
{
	struct attn_result *r = k->r;
	int nseg = case_segments_of(k->c, u->s), R = u->nrt * k->M, N = k->N;
	int dec = k->c->mode == MODE_DECODE, slots = k->W * k->EC;
	int nrows = dec ? k->G : R, ng = (nrows + 15) / 16;
	size_t tile = u->tile0, kstride = (size_t)ng * 16 * N;
	const struct lanemap_operand *oc = &k->lm->op[LM_C];

	/* Group j holds rows x->rows[j*16 ...]; prefill: one row tile. */
	if (!dec)
		ng = u->nrt;
	unit_rows(k, u, x->rows);
	for (int j = 0; j < ng; j++) {
		int g0 = dec ? j * 16 : j * k->M;
		int gn = dec ? (nrows - g0 < 16 ? nrows - g0 : 16) : k->M;

		for (int i = 0; i < 16; i++) {
			int8_t *qd = &f->qb[((size_t)j * 16 + i) * k->D];
			int32_t s = 0;

			if (i < gn && x->rows[g0 + i].valid)
				memcpy(qd, x->rows[g0 + i].q, (size_t)k->D);
			else
				memset(qd, 0, (size_t)k->D);
			for (int d = 0; d < k->D; d++)
				s += qd[d];
			f->qsum[j * 16 + i] = s;
		}
	}
	for (int sg = 0; sg < nseg; sg++) {
		struct rstate *st = &x->st[(size_t)sg * R];
		int lo, hi;

		seg_bounds(k, u->s, sg, &lo, &hi);
		for (size_t i = 0; i < (size_t)ng * 16; i++) {
			f->gm[i] = -INFINITY;
			f->gl[i] = 0.0f;
		}
		memset(f->ot, 0, (size_t)ng * 16 * k->D * sizeof(float));
		for (int kb = lo; kb < hi; kb += N) {
			int any = 0, vstaged = 0;
			const int8_t *kt;
			size_t cstride;

			for (int i = 0; i < u->nrt; i++)
				any |= f->needed[i] = fast_needed(k, &x->rows[i * k->M], kb, hi);
			if (!any)
				continue;
			cstride = tile_k(k, u, kb, f->kst, &kt);
			if (kb % k->BS == 0 && k->BS >= N)
				tile_prefetch(k, u, kb + k->BS, hi);
			for (int n = 0; n < N; n++) {
				int tok = kb + n;

				if (tok >= hi)
					continue;
				for (int ks = 0; ks < (k->per_block32 ? k->ksteps : 1); ks++)
					f->ksc[ks * N + n] = k_scale_of(k, u, tok, ks);
			}
			for (int j = 0; j < ng; j++) {
				int gn = dec ? (nrows - j * 16 < 16 ? nrows - j * 16 : 16) : k->M;
				const int8_t *q = &f->qb[(size_t)j * 16 * k->D];

				if (!(dec ? f->needed[0] : f->needed[j]))
					continue;
				if (k->per_block32)
					qk_ksteps(k, q, gn, kt, cstride,
						  &f->dot[(size_t)j * 16 * N], kstride);
				else
					tile_qk(isa, q, &f->qsum[j * 16], gn, kt, cstride, N,
						k->D, &f->dot[(size_t)j * 16 * N]);
			}
			/* The C registers of each executed tile, in the scalar order. */
			for (int i = 0; i < u->nrt; i++) {
				if (!f->needed[i])
					continue;
				if (r->acc) {
					for (int ks = 0; ks < r->ksteps_in_acc; ks++)
						for (int sl = 0; sl < slots; sl++) {
							int m = oc->row[sl], ri = i * k->M + m;
							int row = dec ? ri % k->G : i * 16 + m;
							int32_t v = x->rows[ri].valid ?
								f->dot[ks * kstride + (size_t)row * N + oc->col[sl]] : 0;

							f->creg[ks * slots + sl] = v;
						}
					acc_store(k, u, tile, u->rt0 + i, kb, f->creg);
				}
				tile++;
			}
			for (int j = 0; j < ng; j++) {
				int g0 = j * 16;
				int gn = dec ? (nrows - g0 < 16 ? nrows - g0 : 16) : k->M;

				if (!(dec ? f->needed[0] : f->needed[j]))
					continue;
				fast_group_tile(k, u, isa, &x->rows[dec ? g0 : j * k->M],
						dec ? g0 : 0, gn,
						&f->dot[(size_t)g0 * N], kstride, kb, hi,
						&f->ot[(size_t)g0 * k->D], &f->gm[g0], &f->gl[g0],
						f, &vstaged);
			}
		}
		/* The segment's states, in the scalar layout, for merge_row. */
		for (int j = 0; j < ng; j++) {
			int gn = dec ? (nrows - j * 16 < 16 ? nrows - j * 16 : 16) : k->M;
			int g0 = dec ? j * 16 : j * k->M;

			for (int i = 0; i < gn; i++) {
				struct rstate *s = &st[g0 + i];

				s->m = f->gm[j * 16 + i];
				s->l = f->gl[j * 16 + i];
				memcpy(s->o, &f->ot[((size_t)j * 16 + i) * k->D],
				       (size_t)k->D * sizeof(float));
			}
		}
	}
	for (int i = 0; i < (dec ? nrows : R); i++) {
		struct rstate *segs[ATTN_MAX_SEGMENTS];

		if (!x->rows[i].valid)
			continue;
		for (int sg = 0; sg < nseg; sg++)
			segs[sg] = &x->st[(size_t)sg * R + i];
		merge_row(k, u, &x->rows[i], segs, nseg);
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
	if (c->head_dim % lm->k)
		return fs_fail(err, FS_EINPUT,
			       "head_dim %d is not a multiple of the instruction's K (%d)",
			       c->head_dim, lm->k);
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
	if (c->kernel.head_dim_loaded && c->kernel.head_dim_loaded % lm->k)
		return fs_fail(err, FS_EINPUT,
			       "kernel: head_dim_loaded %d is not a multiple of the instruction's K (%d)",
			       c->kernel.head_dim_loaded, lm->k);
	if (case_segments_max(c) > ATTN_MAX_SEGMENTS)
		return fs_fail(err, FS_EINPUT,
			       "split_k.segment %d cuts a context into %d segments; at most %d",
			       c->segment, case_segments_max(c), ATTN_MAX_SEGMENTS);
	if (c->mode == MODE_DECODE && case_group(c) > lm->m &&
	    case_group(c) % lm->m)
		return fs_fail(err, FS_EINPUT,
			       "a GQA group of %d q heads does not fill whole %d-row tiles",
			       case_group(c), lm->m);
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

enum fs_rc attn_run_opts(const struct fs_case *c, const struct lanemap *lm,
			 const struct attn_opts *opts, const struct fs_inputs *in,
			 struct attn_result *r, struct fs_err *err)
{
	struct kern k;
	struct unit *units = NULL;
	struct row *rows;
	size_t nunits = 0, total = 0, rows_n;
	long bad = 0;
	int failed = 0, maxrt = 1, fast;
	enum attn_exec want = opts ? opts->exec : ATTN_EXEC_AUTO;
	enum tile_isa isa = TILE_PORTABLE;
	unsigned drop = opts ? opts->drop : 0;
	enum fs_rc rc;

	memset(r, 0, sizeof(*r));
	memset(&k, 0, sizeof(k));
	k.c = c, k.kn = &c->kernel, k.lm = lm, k.in = in, k.r = r;
	k.hw = opts && opts->hw ? opts->hw : lm;
	rc = check_profile(c, lm, k.hw, err);
	if (rc)
		return rc;
	k.M = lm->m, k.N = lm->n, k.K = lm->k, k.W = lm->wave;
	k.EA = lm->op[LM_A].elems, k.EB = lm->op[LM_B].elems, k.EC = lm->op[LM_C].elems;
	k.D = c->head_dim, k.ksteps = k.D / k.K, k.G = case_group(c);
	k.BS = c->block_size, k.MAXB = in->MAXB, k.Hq = c->q_heads, k.Hkv = c->kv_heads;
	k.T = in->T, k.MAXCTX = in->MAXCTX;
	k.per_block32 = c->k_scale == KSCALE_PER_BLOCK32;
	k.ksteps_run = c->kernel.head_dim_loaded ? c->kernel.head_dim_loaded / k.K :
						   k.ksteps;
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
	       (c->mode == MODE_DECODE ? fast_rows_agree(&k) : 1);

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
		unit_rows(&k, &units[i], rows);
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
			r->acc_tiles = alloc_n(r->n_tiles * 4, sizeof(int32_t), &total);
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
		int distinct = k.G < k.M ? k.G : k.M;

		r->distinct_rows = c->mode == MODE_DECODE ? distinct : k.M;
	}

	r->exec = fast ? tile_isa_name(isa) : "scalar";

	/* Units in any order on any thread: each writes only its own rows
	 * and tiles, so the bytes do not depend on the thread count. */
#pragma omp parallel reduction(+ : bad, failed)
	{
		struct scratch x;
		struct fscratch f;
		int ng = c->mode == MODE_DECODE ? (k.G + 15) / 16 : maxrt;

		if (scratch_alloc(&k, maxrt, case_segments_max(c), &x)) {
			failed++;
		} else if (fast && fscratch_alloc(&k, ng, maxrt, &f)) {
			scratch_free(&x);
			failed++;
		} else {
#pragma omp for schedule(dynamic, 1)
			for (size_t i = 0; i < nunits; i++)
				if (fast ? run_unit_fast(&k, &units[i], isa, &x, &f) :
					   run_unit(&k, &units[i], &x, &bad))
					failed++;
			scratch_free(&x);
			if (fast)
				fscratch_free(&f);
		}
	}
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
