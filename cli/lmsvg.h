/*
 * lmsvg.h - lane maps as pictures: `lanemap --format svg` and `lanemap
 * diff --format svg|html` (the drawing is lmsvg.c, the primitives svg.h).
 */
#ifndef LMSVG_H
#define LMSVG_H

#include <stdio.h>

#include "../sim/lanemap/lanediff.h"
#include "../sim/lanemap/lanemap.h"

#define LMSVG_SAMPLES 4	/* differing (lane, element) slots listed per operand */

/* The operands in mask (bit 1 << op) as one standalone SVG. lm valid. */
void lmsvg_map(FILE *f, const struct lanemap *lm, unsigned mask);

/*
 * X and Y side by side per operand (Y under X where side by side would
 * not fit a 1400 px window; lmsvg.c), entries whose owners differ outlined
 * in red, d's verdict and bits as the caption and up to LMSVG_SAMPLES
 * differing slots listed: a standalone SVG, or (html) an HTML page with
 * the same pictures inline. Both maps valid; d from lanediff_compare.
 */
void lmsvg_diff(FILE *f, const struct lanemap *x, const struct lanemap *y,
		const struct lanediff *d, int html);

/*
 * The slots (lane * elems + e) of op that hold a different entry in x
 * and y, the first max of them into slots[]; returns how many differ in
 * all (0 when the operands' lanes or elements do not line up).
 */
int lmsvg_diff_slots(const struct lanemap *x, const struct lanemap *y,
		     enum lm_operand op, int *slots, int max);

/* "C lane 1 e 0: X C[1][0], Y C[0][1]" for slot s, into buf. */
void lmsvg_slot_line(const struct lanemap *x, const struct lanemap *y,
		     enum lm_operand op, int s, char *buf, size_t len);

#endif
