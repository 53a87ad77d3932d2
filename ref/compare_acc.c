/*
 * compare_acc.c - the comparison's exact checks (see compare.h): the
 * result's shape against the case, every accumulator slot of the acc
 * tiles in register order against ref_acc, and pv.mode int8's p_int8
 * and pv_acc against ref/pv_int8.c.
 */
#include "compare_int.h"

#include <stdlib.h>

#include "dot.h"
#include "pv_int8.h"
#include "ref.h"

void cmp_tile_buf_free(struct cmp_tile_buf *b)
{
	free(b->k);
	free(b->want);
	free(b->t);
	free(b->qh);
	memset(b, 0, sizeof(*b));
}

int cmp_tile_buf_alloc(const struct cmp_ctx *x, struct cmp_tile_buf *b)
{
	int M = x->lm ? x->lm->m : 1, N = x->lm ? x->lm->n : 1;
	int nks = x->r->ksteps_in_acc > 0 ? x->r->ksteps_in_acc : 1;

	b->k = malloc((size_t)N * (x->D > 0 ? x->D : 1));
	b->want = malloc((size_t)nks * M * N * sizeof(int32_t));
	b->t = malloc((size_t)M * sizeof(int));
	b->qh = malloc((size_t)M * sizeof(int));
	if (!b->k || !b->want || !b->t || !b->qh) {
		cmp_tile_buf_free(b);
		return -1;
	}
	return 0;
}

/*
 * Every accumulator slot of tile i whose key and query exist. The wanted
 * values are ref_acc's, computed per (C row, column) first - each key's K
 * gathered once, rows that repeat a (token, q head) copied - then the
 * slots are checked in register order.
 */
void cmp_tile(const struct cmp_ctx *x, size_t i, struct compare_stat *st,
	      struct cmp_tile_buf *b)
{
	const struct attn_result *r = x->r;
	const struct lanemap_operand *C = &x->lm->op[LM_C];
	const int32_t *tl = r->acc_tiles + ATTN_TILE_COLS * i;
	int s = tl[0], head = tl[1], rb = tl[2], tb = tl[3], rt = tl[4];
	int W = x->lm->wave, EC = C->elems, nks = r->ksteps_in_acc;
	int M = x->lm->m, N = x->lm->n, D = x->D;
	int n = x->in->context_lens[s], len = nks > 1 ? 32 : D;
	int ncol = n - tb < N ? n - tb : N;

	for (int row = 0; row < M; row++) {
		if (x->c->mode == MODE_DECODE) {
			int local = rt * M + row;

			/* packed: q head -1 marks a padding row past the group */
			if (x->c->decode_rows == ROWS_PACKED)
				b->qh[row] = local < x->G ? head * x->G + local : -1;
			else
				b->qh[row] = head * x->G + local % x->G;
			b->t[row] = rb;
		} else {
			b->qh[row] = head;
			b->t[row] = rb + row;
		}
	}
	if (ncol > 0)	/* one page lookup a block, not a key */
		ref_k_rows(x->in, s, x->c->mode == MODE_DECODE ? head : head / x->G, tb,
			   ncol, b->k);
	for (int row = 0; row < M; row++) {
		const int8_t *q;
		int same = -1;

		if (b->t[row] >= x->c->seqs[s].tokens)
			continue;
		if (b->qh[row] < 0) {	/* a zero A row: acc 0 */
			for (int ks = 0; ks < nks; ks++)
				memset(b->want + ((size_t)ks * M + row) * N, 0,
				       (size_t)N * sizeof(*b->want));
			continue;
		}
		for (int e = 0; e < row && same < 0; e++)
			if (b->t[e] == b->t[row] && b->qh[e] == b->qh[row])
				same = e;
		q = x->in->q_int8 + (((size_t)s * x->T + b->t[row]) * x->Hq +
				     b->qh[row]) * D;
		for (int ks = 0; ks < nks; ks++) {
			int32_t *w = b->want + ((size_t)ks * M + row) * N;
			int d0 = nks > 1 ? 32 * ks : 0;

			for (int col = 0; col < ncol; col++)
				w[col] = same >= 0
				       ? b->want[((size_t)ks * M + same) * N + col]
				       : dot_i8(q + d0, b->k + (size_t)col * D + d0, len);
		}
	}
	for (int ks = 0; ks < nks; ks++) {
		for (int lane = 0; lane < W; lane++) {
			for (int e = 0; e < EC; e++) {
				int slot = lane * EC + e;
				int row = C->row[slot], col = C->col[slot];
				int qh = b->qh[row], t = b->t[row], j = tb + col;
				size_t at = (((size_t)i * nks + ks) * W + lane) * EC + e;

				if (t >= x->c->seqs[s].tokens || j >= n)
					continue;
				if (!stat_note(st, r->acc[at],
					       b->want[((size_t)ks * M + row) * N + col], 0))
					continue;
				loc_row(&st->first, s, t, qh);
				st->first.key = j;
				st->first.tile = (long)i;
				st->first.kstep = ks;
				st->first.lane = lane;
				st->first.elem = e;
				st->first.row = row;
				st->first.col = col;
			}
		}
	}
}

/* Does r fit c and in? FS_OK, or FS_EINPUT with err saying what not. */
enum fs_rc cmp_validate(const struct cmp_ctx *x, struct fs_err *err)
{
	const struct fs_case *c = x->c;
	const struct fs_inputs *in = x->in;
	const struct attn_result *r = x->r;

	if (r->S != in->S || r->T != in->T || r->Hq != in->Hq ||
	    r->D != in->D || r->MAXCTX != in->MAXCTX)
		return fs_fail(err, FS_EINPUT,
			       "result shape [S %d, T %d, Hq %d, D %d, MAXCTX %d] "
			       "does not match the inputs [%d, %d, %d, %d, %d]",
			       r->S, r->T, r->Hq, r->D, r->MAXCTX, in->S, in->T,
			       in->Hq, in->D, in->MAXCTX);
	if (in->S != c->n_seqs || in->Hq != c->q_heads ||
	    in->Hkv != c->kv_heads || in->D != c->head_dim || in->Hkv <= 0 ||
	    in->Hq % in->Hkv != 0)
		return fs_fail(err, FS_EINPUT, "inputs do not match the case");
	if (c->k_scale == KSCALE_PER_BLOCK32 && in->D % 32 != 0)
		return fs_fail(err, FS_EINPUT,
			       "per_block32 k scales need head_dim %% 32 == 0, "
			       "not %d", in->D);
	if (r->nseg > 1 && (c->segment <= 0 ||
			    r->nseg < case_segments_max(c)))
		return fs_fail(err, FS_EINPUT,
			       "result has %d split-K segments, the case %d",
			       r->nseg, case_segments_max(c));
	if (!r->acc || r->n_tiles == 0)
		return FS_OK;
	if (!x->lm || !r->acc_tiles)
		return fs_fail(err, FS_EINPUT,
			       "accumulators need a lane map and acc_tiles");
	if (r->wave != x->lm->wave || r->ec != x->lm->op[LM_C].elems)
		return fs_fail(err, FS_EINPUT,
			       "acc holds %d lanes x %d elements, the profile "
			       "%s %d x %d", r->wave, r->ec, x->lm->name,
			       x->lm->wave, x->lm->op[LM_C].elems);
	if (r->ksteps_in_acc != 1 &&
	    !(c->k_scale == KSCALE_PER_BLOCK32 &&
	      r->ksteps_in_acc == in->D / 32))
		return fs_fail(err, FS_EINPUT,
			       "acc holds %d k-steps per tile; compare needs 1, "
			       "or head_dim/32 with per_block32 k scales",
			       r->ksteps_in_acc);
	for (size_t i = 0; i < r->n_tiles; i++) {
		const int32_t *tl = r->acc_tiles + ATTN_TILE_COLS * i;
		int heads = c->mode == MODE_DECODE ? in->Hkv : in->Hq;
		int M = x->lm->m;
		/* decode: G/M row tiles per kv head (one when G <= M);
		 * prefill: the row tile that starts at row_base */
		int rt_ok = c->mode == MODE_DECODE ?
			    tl[4] >= 0 && tl[4] < (x->G + M - 1) / M :
			    tl[2] % M == 0 && tl[4] == tl[2] / M;

		if (tl[0] < 0 || tl[0] >= in->S || tl[1] < 0 ||
		    tl[1] >= heads || tl[2] < 0 || tl[2] >= in->T || tl[3] < 0 ||
		    tl[3] >= in->MAXCTX || !rt_ok)
			return fs_fail(err, FS_EINPUT,
				       "acc_tiles[%zu] = (%d, %d, %d, %d, %d) is out "
				       "of range", i, tl[0], tl[1], tl[2], tl[3], tl[4]);
	}
	return FS_OK;
}

/* A ref/pv_int8.c stat as a compare_stat: its first mismatch with the
 * tolerance it was judged by (pv_acc exact, p_int8 per entry). */
static void pv_stat(struct compare_stat *st, const struct ref_pv_stat *p)
{
	memset(st, 0, sizeof(*st));
	st->ran = 1;
	st->compared = p->compared;
	st->mismatches = p->mismatches;
	st->max_abs_err = p->max_abs_err;
	st->max_err_tol = p->max_err_tol;
	st->first = (struct compare_loc){ p->s, p->t, p->qh, p->key, p->dim, -1, p->group,
					  0, p->lane, p->elem, p->row, p->col, p->got,
					  p->want, p->tol };
}

/* pv.mode int8: p_int8 and pv_acc against ref/pv_int8.c. */
enum fs_rc cmp_pv(const struct cmp_ctx *x, struct compare_report *rep,
		  struct fs_err *err)
{
	const struct attn_result *r = x->r;
	struct ref_pv_golden g = {
		r->p_int8, r->pv_acc, r->pv_tiles, r->n_groups, r->wave, r->rows,
		x->lm ? x->lm->n : 0, r->pv_gk, r->pv_ea, r->ec, r->pv_dt,
		x->lm ? x->lm->op[LM_A].row : NULL, x->lm ? x->lm->op[LM_A].col : NULL,
		x->lm ? x->lm->op[LM_C].row : NULL, x->lm ? x->lm->op[LM_C].col : NULL,
	};
	struct ref_pv_stat pq, acc;
	char msg[200];

	if (!x->lm)
		return fs_fail(err, FS_EINPUT, "pv_acc needs a lane map");
	if (ref_pv_check(x->c, x->in, &g, &pq, &acc, msg, sizeof(msg)))
		return fs_fail(err, FS_EINPUT, "%s", msg);
	pv_stat(&rep->stat[CMP_P_INT8], &pq);
	pv_stat(&rep->stat[CMP_PV_ACC], &acc);
	rep->p_int8_one_step = pq.off_by_one;
	return FS_OK;
}
