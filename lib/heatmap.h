/*
 * heatmap.h - a device dump's mismatches counted on a grid, for the
 * pictures of `fragsim diff --report`: by (lane, register) of the C
 * operand, which shows a lane map or register-order bug as stripes, and
 * by (key, attention row), which shows a page-walk or mask bug as
 * columns or a triangle. Data only: cli/ draws it.
 *
 *   lane x register (gfx936, C is 64 lanes x 4 registers):
 *              r0 r1 r2 r3
 *   lane  0  [  0  0  0  0 ]
 *   lane 16  [ 12 12 12 12 ]   <- every slot of lane 16 wrong
 *
 * Large axes are binned: a cell covers [i*step, (i+1)*step) of its axis,
 * with at most HEAT_MAX_BINS bins per axis.
 */
#ifndef HEATMAP_H
#define HEATMAP_H

#include "diffcase.h"

#define HEAT_MAX_BINS 64

struct heatmap {
	int rows, cols;			/* bins, 1..HEAT_MAX_BINS each */
	int row_step, col_step;		/* axis values per bin, >= 1 */
	int row_n, col_n;		/* axis lengths before binning */
	long count[HEAT_MAX_BINS * HEAT_MAX_BINS];	/* [row * cols + col] */
	long max;			/* the largest count */
	long placed;			/* mismatches counted */
	long seen;			/* mismatches listed in the report */
};

/*
 * Mismatches of the C operand's registers (acc, and scores, which
 * diffcase places in C) by lane (rows, 0..wave-1) and register (cols,
 * 0..regs-1), from the mismatches rep lists (diff_stat.shown).
 */
void heatmap_lane_reg(struct heatmap *h, const struct diff_report *rep,
		      const struct lanemap *lm);

/*
 * Mismatches by key token (cols, 0..the longest context - 1) and
 * attention row (rows: (first token of sequence s + t) * q_heads + qh),
 * from every listed mismatch that has a key.
 */
void heatmap_key_row(struct heatmap *h, const struct diff_report *rep,
		     const struct fs_case *c);

#endif
