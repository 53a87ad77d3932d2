/*
 * heatmap.c - mismatch counts on a grid (see heatmap.h). Counting only:
 * a mismatch the report did not list (past diff_opts.max_show) is not
 * seen, and h->seen against the report's total says how many were.
 */
#include "heatmap.h"

#include <string.h>

/* Bins of at most HEAT_MAX_BINS over n values: the step. */
static int step_for(int n)
{
	return n <= HEAT_MAX_BINS ? 1 : (n + HEAT_MAX_BINS - 1) / HEAT_MAX_BINS;
}

static void heat_init(struct heatmap *h, int rows, int cols)
{
	memset(h, 0, sizeof(*h));
	h->row_n = rows < 1 ? 1 : rows;
	h->col_n = cols < 1 ? 1 : cols;
	h->row_step = step_for(h->row_n);
	h->col_step = step_for(h->col_n);
	h->rows = (h->row_n + h->row_step - 1) / h->row_step;
	h->cols = (h->col_n + h->col_step - 1) / h->col_step;
}

static void heat_add(struct heatmap *h, int row, int col)
{
	long *cell;

	if (row < 0 || col < 0 || row >= h->row_n || col >= h->col_n)
		return;
	cell = &h->count[(row / h->row_step) * h->cols + col / h->col_step];
	if (++*cell > h->max)
		h->max = *cell;
	h->placed++;
}

void heatmap_lane_reg(struct heatmap *h, const struct diff_report *rep,
		      const struct lanemap *lm)
{
	int regs = 1, reg, byte;

	/* Registers of C: the last element's register, plus one. */
	lanemap_reg_byte(lm, LM_C, lm->op[LM_C].elems - 1, &reg, &byte);
	regs = reg + 1;
	heat_init(h, lm->wave, regs);
	for (int t = 0; t < DUMP_COUNT; t++) {
		const struct diff_stat *st = &rep->stat[t];

		for (int i = 0; i < st->n_shown; i++) {
			const struct diff_loc *l = &st->shown[i];

			if (l->operand != 'C' || l->lane < 0 || l->elem < 0)
				continue;
			h->seen++;
			lanemap_reg_byte(lm, LM_C, l->elem, &reg, &byte);
			heat_add(h, l->lane, reg);
		}
	}
}

void heatmap_key_row(struct heatmap *h, const struct diff_report *rep,
		     const struct fs_case *c)
{
	int first[CASE_MAX_SEQS], tokens = 0, keys = 0;

	for (int s = 0; s < c->n_seqs; s++) {
		first[s] = tokens;
		tokens += c->seqs[s].tokens;
		if (c->seqs[s].context > keys)
			keys = c->seqs[s].context;
	}
	heat_init(h, tokens * c->q_heads, keys);
	for (int t = 0; t < DUMP_COUNT; t++) {
		const struct diff_stat *st = &rep->stat[t];

		for (int i = 0; i < st->n_shown; i++) {
			const struct diff_loc *l = &st->shown[i];

			if (l->key < 0 || l->s < 0 || l->s >= c->n_seqs || l->t < 0 || l->qh < 0)
				continue;
			h->seen++;
			heat_add(h, (first[l->s] + l->t) * c->q_heads + l->qh, l->key);
		}
	}
}
