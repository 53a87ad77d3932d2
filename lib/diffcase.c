/*
 * diffcase.c - a device dump against its case's simulation, and the
 * diagnosis of a mismatch (diffcase.h).
 *
 * Labels. Every mismatch is traced back to the kernel's work:
 *
 *   acc[i][ks][lane][e]     tile i = acc_tiles[i] = (s, head, rb, tb, rt);
 *                           C[row][col] = the profile's C map at (lane, e);
 *                           decode: q head = head*G + (rt*M + row) % G,
 *                           token rb (kernel: decode_rows: packed:
 *                           head*G + rt*M + row, -1 past G: padding);
 *                           prefill: q head = head, token rb + row;
 *                           key = tb + col -> block_table[s][key / BS],
 *                           slot key % BS
 *   scores[s][t][qh][key]   the same backwards: the tile that computed
 *                           it (tiles start every N keys from the start of
 *                           the key's split-K segment), its C entry and
 *                           the lane and register holding that entry
 *   q_int8[s][t][qh][d]     A[row][d % K] in K-step d / K
 *   out, q_scale, splitk_*  the attention row (and segment, dim)
 *   p_int8, p_scale, pv_acc pv.mode int8: group g = pv_tiles[g] as a tile
 *                           of acc; p_int8's A[row][col] is key
 *                           key_base + col, pv_acc's C[row][col] of column
 *                           tile dt is dim dt*N + col
 *
 * Example: decode, gfx936, scores[0][0][7][25] with 24 q / 4 kv heads: kv
 * head 1, row 7 % 6 = 1, tile keys 16..31, column 9, held by lane 33
 * register 2 (row = lane % 16, column = lane / 16 + 4 * reg).
 *
 * Diagnosis: every hypothesis is one more emulation of the same inputs
 * (runcase_inputs once), compared with the dump by the same rules; the
 * rank is the number of dumped elements it reproduces, and beside it
 * how many of the entries the case as written gets wrong (its share,
 * for "closest"). When no single one is exact, pairs of classes are
 * emulated too (try_pairs): a dump of two bugs is named as the pair.
 * Example: a kernel that reads K scales and V at the logical block is
 * no single class (k_scale_walk leaves out wrong, v_page_walk alone
 * gets nothing right), and is "kernel assumptions k_scale_walk=identity
 * and v_page_walk=identity together".
 */
#include "diffcase.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "safetensors.h"
#include "../sim/attn/kernel.h"

/*
 * The expectation's mismatches, element by element in compare order (the
 * order is the dump's, the same for every hypothesis): out set while
 * the case as written is compared, in read while a hypothesis is, to
 * count the entries it reproduces that the expectation gets wrong.
 */
struct marks {
	unsigned char *out;
	const unsigned char *in;
	size_t n, at;
	long fixed;
};

struct ctx {
	const struct runcase *r;
	const struct attn_result *sim;
	const struct dump *d;
	const struct diff_opts *o;
	struct dump_tile_index sim_tiles;	/* the compared result's tiles */
	struct dump_tile_index want_tiles;	/* the expectation's, for labels */
	int G, M, N, K, BS, MAXB;
	struct marks *mk;			/* NULL: none kept */
	struct dump_tile_index sim_groups;	/* pv.mode int8: pv_tiles */
};

static int same_value(double got, double want, int is_float, double tol)
{
	if (!is_float)
		return got == want;
	if (want != want)
		return got != got;
	if (got != got)
		return 0;
	if (isinf(got) || isinf(want) || tol <= 0.0)
		return got == want;
	return fabs(got - want) <= tol;
}

static void note_error(struct diff_stat *st, double got, double want)
{
	double a = isfinite(got) && isfinite(want) ? fabs(got - want) : INFINITY;
	double rel = a == 0.0 ? 0.0 :
		     want != 0.0 && isfinite(want) ? a / fabs(want) : INFINITY;

	if (a > st->max_abs)
		st->max_abs = a;
	if (rel > st->max_rel)
		st->max_rel = rel;
}

static void loc_init(struct diff_loc *l, const size_t *idx, int ndim)
{
	memset(l, 0xff, sizeof(*l));	/* every int field -1 */
	l->ndim = ndim;
	memcpy(l->idx, idx, (size_t)ndim * sizeof(size_t));
	l->operand = 0;
	l->no_tile = 0;
}

static void label_row(const struct ctx *x, struct diff_loc *l, int s, int t, int qh)
{
	l->s = s, l->t = t, l->qh = qh;
	l->kvh = qh / x->G;
}

static void label_key(const struct ctx *x, struct diff_loc *l, int s, int key)
{
	const struct fs_inputs *in = &x->r->in;
	int b = key / x->BS;

	l->key = key;
	l->slot = key % x->BS;
	l->block = b < x->MAXB ? in->block_table[(size_t)s * x->MAXB + b] : -1;
}

/*
 * The row of the tile an attention row sits in (its first, primary one),
 * and the tile's head, row_base and row_tile.
 */
static int tile_row(const struct ctx *x, int t, int qh, int *head, int *rb, int *rt)
{
	if (x->r->c.mode == MODE_DECODE) {
		*head = qh / x->G;
		*rb = t;
		*rt = qh % x->G / x->M;
		return (qh % x->G) % x->M;
	}
	*head = qh;
	*rb = t - t % x->M;
	*rt = t / x->M;
	return t % x->M;
}

static void label_operand(const struct ctx *x, struct diff_loc *l, enum lm_operand op,
			  int row, int col)
{
	int slot;

	if (lanemap_owners(x->r->lm, op, row, col, &slot, 1) != 1)
		return;
	l->operand = op == LM_A ? 'A' : 'C';
	l->lane = slot / x->r->lm->op[op].elems;
	l->elem = slot % x->r->lm->op[op].elems;
	l->row = row, l->col = col;
}

/* scores: the tile, C entry and register that computed key of the row. */
static void label_score(const struct ctx *x, struct diff_loc *l, int t, int qh, int key)
{
	const struct fs_case *c = &x->r->c;
	int head, rb, rt, row = tile_row(x, t, qh, &head, &rb, &rt);
	int lo = c->segment > 0 ? key / c->segment * c->segment : 0;
	int32_t xy[ATTN_TILE_COLS] = { l->s, 0, 0, 0, 0 };

	xy[1] = head, xy[2] = rb, xy[3] = lo + (key - lo) / x->N * x->N, xy[4] = rt;
	l->tile = dump_tile_find(&x->want_tiles, xy);
	label_operand(x, l, LM_C, row, key - xy[3]);
}

static void keep(const struct ctx *x, struct diff_stat *st, const struct diff_loc *l)
{
	if (st->n_shown < x->o->max_show)
		st->shown[st->n_shown++] = *l;
}

/* Compare one element; returns 1 when it should be labelled and kept.
 * poison: the dumped entry is the unwritten pattern (DIFF_POISON_*). */
static int element(const struct ctx *x, struct diff_stat *st, double got,
		   double want, int is_float, int poison)
{
	/* a masked key the kernel did not write is no mismatch */
	int bad = poison ? !(is_float && want == -INFINITY) :
		  !same_value(got, want, is_float, x->o->tol);

	st->compared++;
	if (x->mk && x->mk->at < x->mk->n) {
		if (x->mk->out)
			x->mk->out[x->mk->at] = (unsigned char)bad;
		if (x->mk->in && x->mk->in[x->mk->at] && !bad)
			x->mk->fixed++;
		x->mk->at++;
	}
	if (!bad)
		return 0;
	st->mismatches++;
	st->unwritten += poison;
	note_error(st, got, want);
	return st->n_shown < x->o->max_show;
}

static int f32_poison(const void *data, size_t i)
{
	uint32_t bits;

	memcpy(&bits, (const char *)data + 4 * i, 4);
	return bits == DIFF_POISON_F32_BITS;
}

/*
 * The q head of row `row` of tile (head, rt): decode follows the case's
 * kernel: decode_rows (replicated: the G heads repeated; packed: -1 for
 * a padding row past G, which the simulation holds at 0); prefill: head.
 */
static int acc_q_head(const struct ctx *x, int head, int rt, int row)
{
	int local = rt * x->M + row;

	if (x->r->c.mode != MODE_DECODE)
		return head;
	if (x->r->c.decode_rows == ROWS_PACKED)
		return local < x->G ? head * x->G + local : -1;
	return head * x->G + local % x->G;
}

static void cmp_acc(const struct ctx *x, struct diff_stat *st)
{
	const struct runcase *r = x->r;
	const struct lanemap_operand *C = &r->lm->op[LM_C];
	const int32_t *got = x->d->t[DUMP_ACC].data;
	const int32_t *xy = x->d->tiles;
	int W = r->lm->wave, EC = C->elems, nks = x->sim->ksteps_in_acc;

	for (size_t i = 0; i < x->d->n_tiles; i++) {
		const int32_t *tl = &xy[i * ATTN_TILE_COLS];
		long j = dump_tile_find(&x->sim_tiles, tl);
		int s = tl[0], head = tl[1], rb = tl[2], tb = tl[3], rt = tl[4];

		for (int ks = 0; ks < nks; ks++)
			for (int slot = 0; slot < W * EC; slot++) {
				int row = C->row[slot], col = C->col[slot];
				int qh = acc_q_head(x, head, rt, row);
				int t = r->c.mode == MODE_DECODE ? rb : rb + row;
				size_t at = ((i * nks + (size_t)ks) * W) * EC + (size_t)slot;
				double g = got[at], w = j < 0 ? NAN :
					x->sim->acc[(((size_t)j * nks + ks) * W) * EC + slot];
				size_t idx[4] = { i, (size_t)ks, (size_t)(slot / EC), (size_t)(slot % EC) };
				struct diff_loc l;

				if (t >= r->c.seqs[s].tokens || tb + col >= r->c.seqs[s].context)
					continue;
				/* A tile the hypothesis never executed: want is NaN,
				 * which no integer equals. */
				if (!element(x, st, g, w, 0, got[at] == DIFF_POISON_I32))
					continue;
				if (nks > 1)
					loc_init(&l, idx, 4);
				else
					loc_init(&l, (size_t[3]){ i, idx[2], idx[3] }, 3);
				label_row(x, &l, s, t, qh);
				if (qh < 0)
					l.kvh = head;	/* a packed padding row */
				label_key(x, &l, s, tb + col);
				l.tile = dump_tile_find(&x->want_tiles, tl);
				l.kstep = ks;
				l.operand = 'C';
				l.lane = slot / EC, l.elem = slot % EC, l.row = row, l.col = col;
				l.got = g, l.want = w, l.no_tile = j < 0;
				l.unwritten = got[at] == DIFF_POISON_I32;
				keep(x, st, &l);
			}
	}
}

/* f as a bf16 kernel stores it: the rounding `run --bf16` writes. */
static float as_bf16(float f)
{
	return safetensors_bf16_to_f32(safetensors_bf16_from_f32(f));
}

/*
 * The tensors indexed [S][T][Hq][inner]: scores (inner = keys), out and
 * q_int8 (head dim), q_scale (1), splitk_max/sum (segments), splitk_out
 * (segments x head dim). Rows of tokens a sequence does not have are
 * skipped. A tensor the dump stored as BF16 is compared with the
 * simulation's value rounded as `run --bf16` rounds it: a correct bf16
 * kernel matches bit for bit, and one BF16 ulp off is still a mismatch.
 */
static void cmp_rows(const struct ctx *x, enum dump_tensor t, struct diff_stat *st)
{
	const struct runcase *r = x->r;
	const struct attn_result *a = x->sim;
	const struct npy_array *dv = &x->d->t[t];
	size_t inner = 1, S = (size_t)a->S, T = (size_t)a->T, H = (size_t)a->Hq;
	const void *want;
	int is_float = t != DUMP_Q_INT8, bf16 = x->d->bf16[t];

	for (int i = 3; i < dv->ndim; i++)
		inner *= dv->shape[i];
	switch (t) {
	case DUMP_SCORES: want = a->scores; break;
	case DUMP_OUT: want = a->out; break;
	case DUMP_Q_INT8: want = r->in.q_int8; break;
	case DUMP_Q_SCALE: want = r->in.q_scale; break;
	case DUMP_SPLITK_MAX: want = a->seg_max; break;
	case DUMP_SPLITK_SUM: want = a->seg_sum; break;
	case DUMP_SPLITK_OUT: want = a->seg_out; break;
	default: return;
	}
	for (size_t s = 0; s < S; s++)
		for (size_t tk = 0; tk < T; tk++) {
			if ((int)tk >= r->c.seqs[s].tokens)
				continue;
			for (size_t qh = 0; qh < H; qh++) {
				size_t base = ((s * T + tk) * H + qh) * inner;

				for (size_t e = 0; e < inner; e++) {
					double g, w;
					struct diff_loc l;
					size_t idx[5] = { s, tk, qh, e, 0 };
					int poison = 0;

					if (t == DUMP_Q_INT8) {
						g = ((const int8_t *)dv->data)[base + e];
						w = ((const int8_t *)want)[base + e];
					} else {
						float f = ((const float *)want)[base + e];

						g = ((const float *)dv->data)[base + e];
						w = bf16 ? as_bf16(f) : f;
						poison = !bf16 && f32_poison(dv->data, base + e);
					}
					if (!element(x, st, g, w, is_float, poison))
						continue;
					if (t == DUMP_SPLITK_OUT)
						idx[3] = e / (size_t)a->D, idx[4] = e % (size_t)a->D;
					loc_init(&l, idx, dv->ndim);
					label_row(x, &l, (int)s, (int)tk, (int)qh);
					l.got = g, l.want = w, l.unwritten = poison;
					if (t == DUMP_SCORES) {
						label_key(x, &l, (int)s, (int)e);
						label_score(x, &l, (int)tk, (int)qh, (int)e);
					} else if (t == DUMP_OUT) {
						l.dim = (int)e;
					} else if (t == DUMP_Q_INT8) {
						int head, rb, rt, row = tile_row(x, (int)tk, (int)qh, &head, &rb, &rt);

						l.dim = (int)e;
						l.kstep = (int)e / x->K;
						label_operand(x, &l, LM_A, row, (int)e % x->K);
					} else if (t == DUMP_SPLITK_OUT) {
						l.seg = (int)idx[3], l.dim = (int)idx[4];
					} else if (t != DUMP_Q_SCALE) {
						l.seg = (int)e;
					}
					keep(x, st, &l);
				}
			}
		}
}

/*
 * pv.mode int8: p_int8 [g][lane][e] (A[row][col] of the group's PV
 * operand), p_scale [g][row], pv_acc [g][dt][lane][e] (C[row][col] of
 * column tile dt: dim dt*N + col), each group found by its pv_tiles row
 * (seq, head, row_base, key_base, row_tile). Integers exact; p_scale as
 * every float (--tol).
 */
static void cmp_pv(const struct ctx *x, enum dump_tensor t, struct diff_stat *st)
{
	const struct runcase *r = x->r;
	const struct lanemap_operand *op = &r->lm->op[t == DUMP_P_INT8 ? LM_A : LM_C];
	const int32_t *xy = x->d->t[DUMP_PV_TILES].data;
	const void *got = x->d->t[t].data;
	int W = r->lm->wave, E = t == DUMP_P_SCALE ? 1 : op->elems;
	int per = t == DUMP_P_SCALE ? x->M : W * E, DT = t == DUMP_PV_ACC ? x->sim->pv_dt : 1;

	for (size_t i = 0; i < x->d->n_groups; i++) {
		const int32_t *tl = &xy[i * ATTN_TILE_COLS];
		long j = dump_tile_find(&x->sim_groups, tl);
		int s = tl[0], head = tl[1], rb = tl[2], kb = tl[3], rt = tl[4];

		for (int dt = 0; dt < DT; dt++)
			for (int k = 0; k < per; k++) {
				int row = t == DUMP_P_SCALE ? k : op->row[k];
				int qh = acc_q_head(x, head, rt, row);
				int tok = r->c.mode == MODE_DECODE ? rb : rb + row;
				size_t at = (i * DT + (size_t)dt) * per + (size_t)k;
				size_t wt = ((size_t)j * DT + (size_t)dt) * per + (size_t)k;
				double g, w;
				int poison;
				struct diff_loc l;

				if (tok >= r->c.seqs[s].tokens)
					continue;
				if (t == DUMP_P_INT8) {
					g = ((const int8_t *)got)[at];
					w = j < 0 ? NAN : x->sim->p_int8[wt];
					poison = 0;
				} else if (t == DUMP_P_SCALE) {
					g = ((const float *)got)[at];
					w = j < 0 ? NAN : x->sim->p_scale[wt];
					poison = f32_poison(got, at);
				} else {
					g = ((const int32_t *)got)[at];
					w = j < 0 ? NAN : x->sim->pv_acc[wt];
					poison = ((const int32_t *)got)[at] == DIFF_POISON_I32;
				}
				if (!element(x, st, g, w, t == DUMP_P_SCALE, poison))
					continue;
				if (t == DUMP_PV_ACC)
					loc_init(&l, (size_t[4]){ i, (size_t)dt, (size_t)(k / E),
								  (size_t)(k % E) }, 4);
				else if (t == DUMP_P_INT8)
					loc_init(&l, (size_t[3]){ i, (size_t)(k / E), (size_t)(k % E) }, 3);
				else
					loc_init(&l, (size_t[2]){ i, (size_t)k }, 2);
				label_row(x, &l, s, tok, qh);
				if (qh < 0)
					l.kvh = head;
				label_key(x, &l, s, t == DUMP_P_INT8 ? kb + op->col[k] : kb);
				if (t == DUMP_PV_ACC)
					l.dim = dt * x->N + op->col[k];
				if (t != DUMP_P_SCALE) {
					l.operand = t == DUMP_P_INT8 ? 'A' : 'C';
					l.lane = k / E, l.elem = k % E, l.row = row, l.col = op->col[k];
				}
				l.got = g, l.want = w, l.no_tile = j < 0;
				l.unwritten = poison;
				keep(x, st, &l);
			}
	}
}

void diffcase_report_free(struct diff_report *rep)
{
	for (int t = 0; t < DUMP_COUNT; t++)
		free(rep->stat[t].shown);
	memset(rep, 0, sizeof(*rep));
}

static enum fs_rc compare_marked(const struct runcase *r, const struct attn_result *sim,
				 const struct dump *d, const struct diff_opts *o,
				 struct marks *mk, struct diff_report *rep, struct fs_err *err)
{
	struct ctx x = { r, sim, d, o, { 0, NULL }, { 0, NULL }, 0, 0, 0, 0, 0, 0, mk, { 0, NULL } };
	enum fs_rc rc = FS_OK;

	memset(rep, 0, sizeof(*rep));
	x.G = case_group(&r->c), x.M = r->lm->m, x.N = r->lm->n, x.K = r->lm->k;
	x.BS = r->c.block_size, x.MAXB = r->in.MAXB;
	rc = dump_tile_index_build(sim->acc_tiles, sim->n_tiles, &x.sim_tiles, err);
	if (!rc)
		rc = dump_tile_index_build(r->sim.acc_tiles, r->sim.n_tiles, &x.want_tiles, err);
	if (!rc && d->n_groups)
		rc = dump_tile_index_build(sim->pv_tiles, sim->n_groups, &x.sim_groups, err);
	for (int t = 0; t < DUMP_COUNT && !rc; t++) {
		struct diff_stat *st = &rep->stat[t];

		if (t == DUMP_ACC_TILES || t == DUMP_PV_TILES || !dump_has(d, (enum dump_tensor)t))
			continue;
		st->present = 1;
		st->bf16 = d->bf16[t];
		if (o->max_show > 0 &&
		    !(st->shown = calloc((size_t)o->max_show, sizeof(*st->shown)))) {
			rc = fs_nomem(err, "the mismatches shown",
				      (size_t)o->max_show * sizeof(*st->shown));
			break;
		}
		if (t == DUMP_ACC)
			cmp_acc(&x, st);
		else if (t >= DUMP_P_INT8)
			cmp_pv(&x, (enum dump_tensor)t, st);
		else
			cmp_rows(&x, (enum dump_tensor)t, st);
		rep->compared += st->compared;
		rep->mismatches += st->mismatches;
	}
	dump_tile_index_free(&x.sim_tiles);
	dump_tile_index_free(&x.want_tiles);
	dump_tile_index_free(&x.sim_groups);
	if (rc)
		diffcase_report_free(rep);
	return rc;
}

enum fs_rc diffcase_compare(const struct runcase *r, const struct attn_result *sim,
			    const struct dump *d, const struct diff_opts *o,
			    struct diff_report *rep, struct fs_err *err)
{
	return compare_marked(r, sim, d, o, NULL, rep, err);
}

/* Profiles whose instruction has the shape of lm, so attn can swap them. */
static int same_shape(const struct lanemap *a, const struct lanemap *b)
{
	if (!a->valid || !b->valid || a->wave != b->wave || a->m != b->m ||
	    a->n != b->n || a->k != b->k)
		return 0;
	for (int op = 0; op < LM_NOPERANDS; op++)
		if (a->op[op].type != b->op[op].type || a->op[op].elems != b->op[op].elems)
			return 0;
	return 1;
}

static void skip_note(struct diff_diagnosis *dg, const char *name)
{
	size_t n = strlen(dg->skipped), cap = sizeof(dg->skipped);

	dg->n_skipped++;
	if (n + 2 + strlen(name) + 5 < cap)	/* room for ", ..." after it */
		snprintf(dg->skipped + n, cap - n, "%s%s", n ? ", " : "", name);
	else if (!strstr(dg->skipped, ", ..."))
		snprintf(dg->skipped + n, cap - n, ", ...");
}

/* A hypothesis that applies but was not run: listed with its reason. */
static void notrun_note(struct diff_diagnosis *dg, const char *name, const char *why)
{
	struct diff_notrun *x;

	if (dg->n_notrun >= DIFF_MAX_HYP)
		return;	/* cannot happen: fewer hypotheses than slots */
	x = &dg->notrun[dg->n_notrun++];
	snprintf(x->name, sizeof(x->name), "%s", name);
	snprintf(x->why, sizeof(x->why), "%s", why);
}

/* Stop the diagnosis: err says which hypothesis failed, and how. */
static enum fs_rc hyp_fail(struct fs_err *err, const struct fs_err *e2,
			   enum fs_rc rc, const char *name)
{
	char prefix[300];

	if (err) {
		*err = *e2;
		err->rc = rc;
		snprintf(prefix, sizeof(prefix), "hypothesis %s", name);
		fs_err_prefix(err, prefix);
	}
	return rc;
}

/* One diagnosis's (or one hypothesis set's) state, for its hypotheses. */
struct hrun {
	const struct runcase *r;
	const struct dump *d;		/* NULL: keep, do not compare */
	const struct diff_opts *o;
	const unsigned char *miss;	/* the expectation's mismatches */
	size_t nmiss;
	struct diff_diagnosis *dg;	/* ranking, skipped, not run */
	struct diff_hypset *keep;	/* non-NULL: results kept here */
};

/* Count what result sim of hypothesis (name, bug, bug2) reproduces. */
static enum fs_rc rank_one(struct hrun *x, const struct attn_result *sim, const char *name,
			   int bug, int bug2, struct fs_err *err)
{
	struct marks mk = { NULL, x->miss, x->nmiss, 0, 0 };
	struct diff_opts quiet = *x->o;
	struct diff_report rep;
	struct fs_err e2 = { 0 };
	enum fs_rc rc;

	quiet.max_show = 0;
	rc = compare_marked(x->r, sim, x->d, &quiet, x->miss ? &mk : NULL, &rep, &e2);
	if (rc)
		return hyp_fail(err, &e2, rc, name);
	{
		struct diff_hyp *h = &x->dg->h[x->dg->n++];

		snprintf(h->name, sizeof(h->name), "%s", name);
		h->matched = rep.compared - rep.mismatches;
		h->fixed = mk.fixed;
		h->bug = bug, h->bug2 = bug2;
	}
	x->dg->compared = rep.compared;
	diffcase_report_free(&rep);
	return FS_OK;
}

/*
 * One hypothesis: emulate case c with kernel map lm (NULL: the case's)
 * and hardware map hw (NULL: the kernel's), and count what it reproduces
 * (or keep the result, x->keep). An emulation the case cannot express
 * (FS_EINPUT) is skipped, not an error: e.g. operand_order kq on a
 * non-square tile. One over a limit (FS_EBUDGET) is listed as not run,
 * with why; anything else (out of memory, internal) stops the diagnosis
 * (diffcase_diagnose).
 */
static enum fs_rc try_one(struct hrun *x, const struct fs_case *c,
			  const struct lanemap *lm, const struct lanemap *hw,
			  const char *name, int bug, int bug2, struct fs_err *err)
{
	struct attn_opts ao = { .hw = hw };
	struct attn_result sim;
	struct fs_err e2 = { 0 };
	int n = x->keep ? x->keep->n : x->dg->n;
	enum fs_rc rc;

	if (n >= DIFF_MAX_HYP) {	/* a table that grew past the array */
		notrun_note(x->dg, name, "more hypotheses than DIFF_MAX_HYP");
		return FS_OK;
	}
	rc = attn_run_opts(c, lm ? lm : x->r->lm, &ao, &x->r->in, &sim, &e2);
	/* Replica rows that disagree are no reason to skip: in a buggy
	 * kernel they may, and the primary row is what gets written. */
	if (rc == FS_EINPUT) {
		skip_note(x->dg, name);
		return FS_OK;
	}
	if (rc == FS_EBUDGET) {
		char why[1200];

		notrun_note(x->dg, name, fs_err_str(&e2, why, sizeof(why)));
		return FS_OK;
	}
	if (rc)
		return hyp_fail(err, &e2, rc, name);
	if (x->keep) {
		struct diff_hyp *h = &x->keep->h[x->keep->n];

		snprintf(h->name, sizeof(h->name), "%s", name);
		h->bug = bug, h->bug2 = bug2;
		x->keep->res[x->keep->n++] = sim;
		return FS_OK;
	}
	rc = rank_one(x, &sim, name, bug, bug2, err);
	attn_free(&sim);
	return rc;
}

static enum fs_rc try_profiles(struct hrun *x, struct fs_err *err)
{
	const struct runcase *r = x->r;
	enum fs_rc rc = FS_OK;

	for (int i = 0; i < profile_builtin_count() && !rc; i++) {
		const char *pn = profile_builtin_name(i);
		struct fs_err e2 = { 0 };
		struct lanemap *p;
		struct lm_report lr;
		char name[256];

		if (!strcmp(pn, r->lm->name))
			continue;
		p = profile_builtin(pn, &e2);
		if (!p)	/* a builtin parses: only memory can fail here */
			return fs_fail(err, fs_err_rc(&e2, FS_EINTERNAL),
				       "builtin profile %s: %s", pn, e2.msg);
		if (lanemap_validate(p, &lr) == FS_ENOMEM) {
			lanemap_free(p);
			return fs_nomem(err, "a builtin profile's inverse tables", 0);
		}
		if (same_shape(p, r->lm)) {
			snprintf(name, sizeof(name), "hardware map %s (kernel written for %s)",
				 p->name, r->lm->name);
			rc = try_one(x, &r->c, NULL, p, name, -1, -1, err);
			snprintf(name, sizeof(name), "lane map %s (kernel and hardware)", p->name);
			if (!rc)
				rc = try_one(x, &r->c, p, NULL, name, -1, -1, err);
		}
		lanemap_free(p);
	}
	return rc;
}

static int by_matched(const void *pa, const void *pb)
{
	const struct diff_hyp *a = pa, *b = pb;

	if (a->matched != b->matched)
		return a->matched > b->matched ? -1 : 1;
	return 0;
}

/* Insertion sort by matched, stable: ties keep the order tried (classes
 * first, in the table's order). */
static void rank(struct diff_diagnosis *dg)
{
	for (int i = 1; i < dg->n; i++)
		for (int j = i; j > 0 && by_matched(&dg->h[j - 1], &dg->h[j]) > 0; j--) {
			struct diff_hyp tmp = dg->h[j];

			dg->h[j] = dg->h[j - 1];
			dg->h[j - 1] = tmp;
		}
}

/*
 * Two bugs at once. A pair's classes each reproduce the entries the
 * other leaves alone, so both tend to rank high: every pair of the
 * DIFF_PAIR_TOP best single classes that reproduce some entry the case
 * as written gets wrong. But a bug downstream of another (a V walk after
 * a K scale walk) reproduces nothing alone, the upstream one having
 * changed every weight it meets: so the best class is also paired with
 * every other class that ran. Two values of one key cannot be planted
 * together (one key, one value).
 */
static enum fs_rc try_pairs(struct hrun *x, struct fs_err *err)
{
	int top[DIFF_PAIR_TOP], nt = 0, all[BUG_COUNT], na = 0;
	unsigned char tried[BUG_COUNT][BUG_COUNT];
	enum fs_rc rc = FS_OK;

	memset(tried, 0, sizeof(tried));
	for (int i = 0; i < x->dg->n; i++) {
		const struct diff_hyp *h = &x->dg->h[i];

		if (h->bug < 0 || h->bug2 >= 0)
			continue;
		if (nt < DIFF_PAIR_TOP && h->fixed > 0)
			top[nt++] = h->bug;
		all[na++] = h->bug;
	}
	for (int i = 0; i < nt && !rc; i++)
		for (int k = 0; k < (i ? nt : na) && !rc; k++) {
			int u = top[i], v = i ? top[k] : all[k];
			enum kern_bug a = (enum kern_bug)(u < v ? u : v);
			enum kern_bug b = (enum kern_bug)(u < v ? v : u);
			const struct kern_bug_info *ai = kernel_bug(a), *bi = kernel_bug(b);
			struct fs_case c = x->r->c;
			char name[256];

			if (a == b || tried[a][b])
				continue;
			tried[a][b] = 1;
			if (!strcmp(ai->key, bi->key) ||
			    kernel_plant(&c.kernel, a, c.head_dim) ||
			    kernel_plant(&c.kernel, b, c.head_dim))
				continue;
			snprintf(name, sizeof(name), "kernel assumptions %s=%s and %s=%s together",
				 ai->key, ai->bad, bi->key, bi->bad);
			rc = try_one(x, &c, NULL, NULL, name, a, b, err);
		}
	return rc;
}

/* Every single hypothesis, in the ranking's tie order: the classes, the
 * other decode row layout, the other lane maps. */
static enum fs_rc each_single(struct hrun *x, struct fs_err *err)
{
	const struct runcase *r = x->r;
	uint64_t have = kernel_bugs(&r->c.kernel, r->c.head_dim);
	enum fs_rc rc = FS_OK;

	for (int b = 0; b < BUG_COUNT && !rc; b++) {
		const struct kern_bug_info *bi = kernel_bug((enum kern_bug)b);
		struct fs_case c = r->c;	/* plain values: a shallow copy is whole */
		char name[256], why[160];

		snprintf(name, sizeof(name), "kernel assumption %s=%s", bi->key, bi->bad);
		if ((have >> b) & 1)
			continue;	/* that is the expectation itself */
		/* A class that cannot change this case would only tie with it. */
		if (kernel_bug_na((enum kern_bug)b, &c, r->lm, why, sizeof(why)) ||
		    kernel_plant(&c.kernel, (enum kern_bug)b, c.head_dim)) {
			skip_note(x->dg, name);
			continue;
		}
		rc = try_one(x, &c, NULL, NULL, name, b, -1, err);
	}
	/* The other decode row layout (kernel: decode_rows): not a bug, but
	 * a dump of it disagrees in the padding rows' acc alone. Only where
	 * it differs: G not a multiple of M leaves rows to pad or replicate. */
	if (!rc && r->c.mode == MODE_DECODE && case_group(&r->c) % r->lm->m) {
		struct fs_case c = r->c;

		c.decode_rows = c.decode_rows == ROWS_PACKED ? ROWS_REPLICATED : ROWS_PACKED;
		rc = try_one(x, &c, NULL, NULL, c.decode_rows == ROWS_PACKED ?
			     "kernel layout decode_rows=packed" :
			     "kernel layout decode_rows=replicated", -1, -1, err);
	}
	if (!rc)
		rc = try_profiles(x, err);
	return rc;
}

/*
 * The start of a diagnosis of dump d: the case as written compared, and
 * the mask of the entries it gets wrong (*miss, freed by the caller).
 */
static enum fs_rc diagnosis_begin(const struct runcase *r, const struct dump *d,
				  const struct diff_opts *o, struct diff_diagnosis *dg,
				  struct marks *mk, struct fs_err *err)
{
	struct diff_opts quiet = *o;
	struct diff_report rep;
	enum fs_rc rc;

	memset(dg, 0, sizeof(*dg));
	memset(mk, 0, sizeof(*mk));
	quiet.max_show = 0;
	rc = diffcase_compare(r, &r->sim, d, &quiet, &rep, err);
	if (rc)
		return rc;
	dg->compared = rep.compared;
	dg->expect_matched = rep.compared - rep.mismatches;
	diffcase_report_free(&rep);
	/* which entries the case as written gets wrong, for each
	 * hypothesis's share of them */
	mk->n = (size_t)dg->compared;
	if (!(mk->out = calloc(mk->n ? mk->n : 1, 1)))
		return fs_nomem(err, "the expectation's mismatches", mk->n);
	rc = compare_marked(r, &r->sim, d, &quiet, mk, &rep, err);
	if (rc) {
		free(mk->out);
		mk->out = NULL;
		return rc;
	}
	diffcase_report_free(&rep);
	return FS_OK;
}

/* Rank the singles; when none is exact, try the pairs and rank again. */
static enum fs_rc diagnosis_end(struct hrun *x, struct fs_err *err)
{
	enum fs_rc rc = FS_OK;

	rank(x->dg);
	if (x->dg->n && x->dg->h[0].matched < x->dg->compared) {
		struct diff_hypset *keep = x->keep;

		x->keep = NULL;		/* pairs are compared, never kept */
		rc = try_pairs(x, err);
		x->keep = keep;
		rank(x->dg);
	}
	return rc;
}

enum fs_rc diffcase_diagnose(const struct runcase *r, const struct dump *d,
			     const struct diff_opts *o, struct diff_diagnosis *dg,
			     struct fs_err *err)
{
	struct marks mk;
	struct hrun x = { r, d, o, NULL, 0, dg, NULL };
	enum fs_rc rc = diagnosis_begin(r, d, o, dg, &mk, err);

	if (rc)
		return rc;
	x.miss = mk.out, x.nmiss = mk.n;
	rc = each_single(&x, err);
	if (!rc)
		rc = diagnosis_end(&x, err);
	free(mk.out);
	return rc;
}

enum fs_rc diffcase_hypset_build(const struct runcase *r, struct diff_hypset **out,
				 struct fs_err *err)
{
	struct diff_hypset *hs = calloc(1, sizeof(*hs));
	struct diff_opts o = { 0.0, 0 };
	struct hrun x = { r, NULL, &o, NULL, 0, NULL, hs };
	enum fs_rc rc;

	*out = NULL;
	if (hs)
		hs->res = calloc(DIFF_MAX_HYP, sizeof(*hs->res));
	if (!hs || !hs->res) {
		free(hs);
		return fs_nomem(err, "a set of hypotheses", sizeof(*hs));
	}
	x.dg = &hs->notes;
	rc = each_single(&x, err);
	if (rc) {
		diffcase_hypset_free(hs);
		return rc;
	}
	*out = hs;
	return FS_OK;
}

enum fs_rc diffcase_diagnose_set(const struct runcase *r, const struct diff_hypset *hs,
				 const struct dump *d, const struct diff_opts *o,
				 struct diff_diagnosis *dg, struct fs_err *err)
{
	struct marks mk;
	struct hrun x = { r, d, o, NULL, 0, dg, NULL };
	enum fs_rc rc = diagnosis_begin(r, d, o, dg, &mk, err);

	if (rc)
		return rc;
	x.miss = mk.out, x.nmiss = mk.n;
	/* what each_single noted, as it would have */
	dg->n_skipped = hs->notes.n_skipped;
	memcpy(dg->skipped, hs->notes.skipped, sizeof(dg->skipped));
	dg->n_notrun = hs->notes.n_notrun;
	memcpy(dg->notrun, hs->notes.notrun, sizeof(dg->notrun));
	for (int i = 0; i < hs->n && !rc; i++)
		rc = rank_one(&x, &hs->res[i], hs->h[i].name, hs->h[i].bug, hs->h[i].bug2, err);
	if (!rc)
		rc = diagnosis_end(&x, err);
	free(mk.out);
	return rc;
}

void diffcase_hypset_free(struct diff_hypset *hs)
{
	if (!hs)
		return;
	for (int i = 0; hs->res && i < hs->n; i++)
		attn_free(&hs->res[i]);
	free(hs->res);
	free(hs);
}

void diffcase_verdict(const struct diff_diagnosis *dg, char *buf, size_t len)
{
	const struct diff_hyp *b = dg->n ? &dg->h[0] : NULL;
	long n = dg->compared, miss0 = n - dg->expect_matched;
	size_t o;

	if (b && b->matched == n) {
		o = (size_t)snprintf(buf, len, "diagnosis: matches %s exactly (%ld/%ld elements)",
				     b->name, b->matched, n);
		for (int i = 1; i < dg->n && dg->h[i].matched == n && o < len; i++)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", i == 1 ?
					      "; so do " : ", ", dg->h[i].name);
		return;
	}
	/* The closest single hypothesis (pairs are tried to be exact, not to
	 * be near), and its share of what the case as written gets wrong. */
	b = NULL;
	for (int i = 0; i < dg->n && !b; i++)
		if (dg->h[i].bug2 < 0)
			b = &dg->h[i];
	if (b && b->matched > dg->expect_matched && b->fixed > 0 && miss0 > 0) {
		snprintf(buf, len, "diagnosis: no exact match; closest single is %s: it reproduces %ld of the %ld mismatching entries (%.2f%%; %ld/%ld elements)",
			 b->name, b->fixed, miss0, 100.0 * (double)b->fixed / (double)miss0,
			 b->matched, n);
		return;
	}
	b = dg->n ? &dg->h[0] : NULL;
	snprintf(buf, len, "diagnosis: no hypothesis reproduces the dump (best: %s, %ld/%ld elements; the case as written: %ld)",
		 b ? b->name : "none", b ? b->matched : 0, n, dg->expect_matched);
}
