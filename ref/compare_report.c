/*
 * compare_report.c - the comparison's chunks combined in order into the
 * report (see compare.h): the element stats, the quantization metrics,
 * the KLD order statistics, the buckets, and the case's check: limits.
 */
#include "compare_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void cmp_part_clear(struct cmp_part *p)
{
	memset(p, 0, sizeof(*p));
	for (int w = 0; w < CMP_NWHAT; w++)
		stat_clear(&p->st[w]);
	p->cos_min = INFINITY;
	p->pv_cos_min = INFINITY;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report_fail(struct compare_report *rep, const char *name,
			const char *fmt, ...)
{
	struct compare_fail *f;
	va_list ap;

	if (rep->n_failed >= COMPARE_MAX_FAILS)
		return;
	f = &rep->failed[rep->n_failed++];
	f->name = name;
	va_start(ap, fmt);
	vsnprintf(f->reason, sizeof(f->reason), fmt, ap);
	va_end(ap);
}

/* The shortest %.Ng text of v that reads back as v: a limit prints as
 * it was written (0.99999999, not %.6g's 1). */
static void fmt_shortest(char *buf, size_t len, double v)
{
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, len, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* value at 9 digits, or more until the text lies on value's side of
 * limit, so that a failure never reads "1 < 1". */
static void fmt_against(char *buf, size_t len, double value, double limit)
{
	for (int p = 9; p <= 17; p++) {
		double back;

		snprintf(buf, len, "%.*g", p, value);
		back = strtod(buf, NULL);
		if ((back < limit) == (value < limit) && (back > limit) == (value > limit))
			return;
	}
}

/* A lower bound (is_min) or an upper bound on a metric; NaN limit = off. */
static void check_limit(struct compare_report *rep, const char *name,
			const char *label, double value, double limit,
			int is_min)
{
	char v[32], l[32];

	if (isnan(limit))
		return;
	fmt_shortest(l, sizeof(l), limit);
	fmt_against(v, sizeof(v), value, limit);
	if (isnan(value))
		report_fail(rep, name, "%s not measured, %s %s", label, name, l);
	else if (is_min && value < limit)
		report_fail(rep, name, "%s %s < %s %s", label, v, name, l);
	else if (!is_min && value > limit)
		report_fail(rep, name, "%s %s > %s %s", label, v, name, l);
}

static void check_thresholds(const struct case_check *k,
			     struct compare_report *rep)
{
	const struct compare_quant *q = &rep->quant;

	check_limit(rep, "out_cosine_min", "out cosine", q->out_cos_min,
		    k->out_cosine_min, 1);
	check_limit(rep, "out_max_abs_max", "out max abs", q->out_max_abs,
		    k->out_max_abs_max, 0);
	check_limit(rep, "score_max_abs_max", "score max abs",
		    q->score_max_abs, k->score_max_abs_max, 0);
	check_limit(rep, "score_nmse_max", "score nmse", q->score_nmse,
		    k->score_nmse_max, 0);
	check_limit(rep, "kld_mean_max", "kld mean", q->kld_mean,
		    k->kld_mean_max, 0);
	check_limit(rep, "kld_median_max", "kld median", q->kld_median,
		    k->kld_median_max, 0);
	check_limit(rep, "kld_p99_max", "kld p99", q->kld_p99, k->kld_p99_max,
		    0);
	check_limit(rep, "top1_min", "top-1 rate", q->top1, k->top1_min, 1);
	check_limit(rep, "rms_dp_max", "rms dp", q->rms_dp, k->rms_dp_max, 0);
}

/* KLD mean, median, p99 of n per-row values, sorted in place. */
static void kld_stats(double *v, size_t n, struct compare_quant *q)
{
	double sum = 0;

	q->kld_mean = q->kld_median = q->kld_p99 = NAN;
	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (isnan(v[i]))
			return;
		sum += v[i];
	}
	q->kld_mean = sum / (double)n;
	qsort(v, n, sizeof(double), cmp_double);
	q->kld_median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	q->kld_p99 = v[(99 * n + 99) / 100 - 1];	/* ceil(0.99 n) - 1 */
}

/* Combine the chunks in order, then the metrics and thresholds. */
void cmp_finish(const struct cmp_ctx *x, const struct cmp_part *parts,
		size_t nparts, double *kld, size_t nkld,
		struct compare_report *rep)
{
	const struct attn_result *r = x->r;
	struct compare_quant *q = &rep->quant;
	struct cmp_part all;

	cmp_part_clear(&all);
	for (size_t i = 0; i < nparts; i++) {
		const struct cmp_part *p = &parts[i];

		for (int w = CMP_SCORES; w <= CMP_SEG_SUM; w++)
			stat_merge(&all.st[w], &p->st[w]);
		all.rows += p->rows;
		all.qrows += p->qrows;
		all.keys += p->keys;
		all.top1_same += p->top1_same;
		all.s_err2 += p->s_err2;
		all.s_ref2 += p->s_ref2;
		all.s_max = max_nan(all.s_max, p->s_max);
		all.cos_sum += p->cos_sum;
		all.cos_min = min_nan(all.cos_min, p->cos_min);
		all.o_max = max_nan(all.o_max, p->o_max);
		all.dp2 += p->dp2;
		all.pv_rows += p->pv_rows;
		all.pv_err2 += p->pv_err2;
		all.pv_ref2 += p->pv_ref2;
		all.pv_max = max_nan(all.pv_max, p->pv_max);
		all.pv_cos_min = min_nan(all.pv_cos_min, p->pv_cos_min);
		for (int b = 0; b < x->nb; b++) {
			all.b_pv_rows[b] += p->b_pv_rows[b];
			all.b_pv_err2[b] += p->b_pv_err2[b];
			all.b_pv_ref2[b] += p->b_pv_ref2[b];
			all.b_pv_max[b] = max_nan(all.b_pv_max[b], p->b_pv_max[b]);
			all.b_keys[b] += p->b_keys[b];
			all.b_max[b] = max_nan(all.b_max[b], p->b_max[b]);
			all.b_dp2[b] += p->b_dp2[b];
		}
	}
	for (int w = CMP_SCORES; w <= CMP_SEG_SUM; w++) {
		int ran = w == CMP_SCORES ? r->scores != NULL
			: w == CMP_PROBS ? r->scores && r->row_max && r->row_sum
			: w == CMP_OUT ? r->out != NULL
			: x->nseg > 1;

		rep->stat[w] = all.st[w];
		rep->stat[w].ran = ran;
	}
	rep->rows = all.rows;
	for (int w = 0; w < CMP_NWHAT; w++)
		rep->mismatches += rep->stat[w].mismatches;
	rep->replica_mismatch = r->replica_mismatch;

	q->rows = all.qrows;
	q->keys = all.keys;
	q->score_max_abs = q->score_nmse = q->rms_dp = q->top1 = NAN;
	q->out_cos_min = q->out_cos_mean = q->out_max_abs = NAN;
	if (r->scores && all.qrows > 0) {
		q->score_max_abs = all.s_max;
		q->score_nmse = all.s_ref2 > 0 ? all.s_err2 / all.s_ref2
			      : all.s_err2 == 0 ? 0 : INFINITY;
		q->rms_dp = sqrt(all.dp2 / (double)all.keys);
		q->top1 = (double)all.top1_same / (double)all.qrows;
	}
	if (r->out && all.qrows > 0) {
		q->out_cos_min = all.cos_min;
		q->out_cos_mean = all.cos_sum / (double)all.qrows;
		q->out_max_abs = all.o_max;
	}
	kld_stats(kld, nkld, q);
	q->n_buckets = x->nb;
	for (int b = 0; b < x->nb; b++) {
		struct compare_bucket *bk = &q->bucket[b];

		/* Key j is in bucket j * nb / MAXCTX (floor). */
		bk->lo = (int)(((long long)b * x->MAXCTX + x->nb - 1) / x->nb);
		bk->hi = (int)(((long long)(b + 1) * x->MAXCTX + x->nb - 1) / x->nb);
		bk->keys = all.b_keys[b];
		bk->score_max_abs = r->scores && bk->keys ? all.b_max[b] : NAN;
		bk->rms_dp = r->scores && bk->keys
			   ? sqrt(all.b_dp2[b] / (double)bk->keys) : NAN;
		bk->pv_rows = all.b_pv_rows[b];
		bk->pv_nmse = bk->pv_rows && all.b_pv_ref2[b] > 0 ?
			      all.b_pv_err2[b] / all.b_pv_ref2[b] : NAN;
		bk->pv_max_abs = bk->pv_rows ? all.b_pv_max[b] : NAN;
	}
	q->pv_cos_min = q->pv_nmse = q->pv_max_abs = NAN;
	if (all.pv_rows > 0) {
		q->pv_cos_min = all.pv_cos_min;
		q->pv_nmse = all.pv_ref2 > 0 ? all.pv_err2 / all.pv_ref2 : NAN;
		q->pv_max_abs = all.pv_max;
	}
	check_thresholds(&x->c->check, rep);
}
