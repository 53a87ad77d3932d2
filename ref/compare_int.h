/*
 * compare_int.h - private to the comparison (ref/compare*.c): its context,
 * one chunk's partial results, and the element counting every check
 * shares. compare.c plans the blocks and compares the rows,
 * compare_acc.c checks the accumulators exactly (acc tiles, INT8 PV),
 * compare_report.c folds the chunks into the report.
 */
#ifndef FRAGSIM_REF_COMPARE_INT_H
#define FRAGSIM_REF_COMPARE_INT_H

#include <math.h>
#include <string.h>

#include "compare.h"

struct ref_pv_vsum;

#define CMP_CHUNK 16		/* rows or tiles per reduction chunk */

struct cmp_ctx {
	const struct fs_case *c;
	const struct lanemap *lm;
	const struct fs_inputs *in;
	const struct attn_result *r;
	int S, T, Hq, G, D, MAXCTX;
	int nseg;		/* r->nseg when split-K states are compared, else 0 */
	int nb;			/* buckets */
	const struct ref_pv_vsum *vsum;	/* INT8 PV: groups' sums of |V|, or NULL */
};

/* Partial results of one chunk of rows. */
struct cmp_part {
	struct compare_stat st[CMP_NWHAT];
	long rows, qrows, keys, top1_same;
	double s_err2, s_ref2, s_max;
	double cos_sum, cos_min, o_max;
	double dp2;
	long b_keys[CASE_MAX_BUCKETS];
	double b_max[CASE_MAX_BUCKETS], b_dp2[CASE_MAX_BUCKETS];
	/* pv.mode int8: out against the f32-PV out (cmp_pv_quant) */
	long pv_rows, b_pv_rows[CASE_MAX_BUCKETS];
	double pv_err2, pv_ref2, pv_max, pv_cos_min;
	double b_pv_err2[CASE_MAX_BUCKETS], b_pv_ref2[CASE_MAX_BUCKETS];
	double b_pv_max[CASE_MAX_BUCKETS];
};

/* Max and min that keep a NaN once seen. */
static inline double max_nan(double m, double a)
{
	return isnan(m) || isnan(a) ? NAN : a > m ? a : m;
}

static inline double min_nan(double m, double a)
{
	return isnan(m) || isnan(a) ? NAN : a < m ? a : m;
}

static inline void stat_clear(struct compare_stat *st)
{
	struct compare_loc *l = &st->first;

	memset(st, 0, sizeof(*st));
	l->s = l->t = l->qh = l->key = l->dim = l->seg = -1;
	l->tile = -1;
	l->kstep = l->lane = l->elem = l->row = l->col = -1;
}

/*
 * Count one element. tol 0 means exact (-inf == -inf holds). Returns 1
 * when this is the stat's first mismatch: the caller then fills in where.
 */
static inline int stat_note(struct compare_stat *st, double got, double want,
			    double tol)
{
	double err = got == want ? 0 : fabs(got - want), ratio;
	int bad;

	if (isnan(err))
		err = INFINITY;
	if (tol == 0) {
		bad = err != 0;
		ratio = bad ? INFINITY : 0;
	} else {
		bad = !(err <= tol);
		ratio = err / tol;
	}
	st->compared++;
	if (err > st->max_abs_err)
		st->max_abs_err = err;
	if (ratio > st->max_err_tol)
		st->max_err_tol = ratio;
	if (!bad)
		return 0;
	if (st->mismatches++ > 0)
		return 0;
	st->first.got = got;
	st->first.want = want;
	st->first.tol = tol;
	return 1;
}

/* Fold src (later rows) into dst (earlier rows). */
static inline void stat_merge(struct compare_stat *dst,
			      const struct compare_stat *src)
{
	if (dst->mismatches == 0 && src->mismatches > 0)
		dst->first = src->first;
	dst->compared += src->compared;
	dst->mismatches += src->mismatches;
	if (src->max_abs_err > dst->max_abs_err)
		dst->max_abs_err = src->max_abs_err;
	if (src->max_err_tol > dst->max_err_tol)
		dst->max_err_tol = src->max_err_tol;
}

static inline void loc_row(struct compare_loc *l, int s, int t, int qh)
{
	l->s = s;
	l->t = t;
	l->qh = qh;
}


/* Scratch of cmp_tile: one tile's reference accumulators. */
struct cmp_tile_buf {
	int8_t *k;		/* [N][D] K of the tile's keys */
	int32_t *want;		/* [ksteps][M][N] */
	int *t, *qh;		/* [M] query token and q head of each C row */
};

/* compare_acc.c: the exact checks. */
enum fs_rc cmp_validate(const struct cmp_ctx *x, struct fs_err *err);
int cmp_tile_buf_alloc(const struct cmp_ctx *x, struct cmp_tile_buf *b);
void cmp_tile_buf_free(struct cmp_tile_buf *b);
void cmp_tile(const struct cmp_ctx *x, size_t i, struct compare_stat *st,
	      struct cmp_tile_buf *b);
enum fs_rc cmp_pv(const struct cmp_ctx *x, struct compare_report *rep,
		  struct fs_err *err);

/* compare_report.c: the chunks combined, the metrics and thresholds. */
void cmp_part_clear(struct cmp_part *p);
void cmp_finish(const struct cmp_ctx *x, const struct cmp_part *parts,
		size_t nparts, double *kld, size_t nkld,
		struct compare_report *rep);

#endif
