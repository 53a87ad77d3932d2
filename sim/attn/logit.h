/*
 * logit.h - the score modifiers a case may ask for (model: soft_cap,
 * alibi), as the emulated kernel applies them to a recovered score s:
 *
 *   s = cap * tanh(s / cap)            soft cap, when cap > 0
 *   s = s + slope[qh] * (key - q_pos)  ALiBi, when alibi
 *
 * in that order, after scale recovery and before masking (a masked key
 * is -inf whatever the modifiers say). Every executor calls logit_apply,
 * so their bytes agree; tanh is logit_tanhf, not libm's.
 */
#ifndef LOGIT_H
#define LOGIT_H

#include "case.h"

struct logit_mod {
	int on;			/* 0: scores are left as recovered */
	float cap;		/* (float)soft_cap; 0 = no soft cap */
	int alibi;
	float slope[CASE_MAX_HEADS];	/* per q head, when alibi */
};

/* tanh(x) rounded once to float, the same bits on every machine. */
float logit_tanhf(float x);

/*
 * The ALiBi slope of q head h of H (1 <= H <= CASE_MAX_HEADS), rounded
 * once to float: with n the largest power of two <= H, head h < n has
 * 2^(-8(h+1)/n) and head n + i has 2^(-4(2i+1)/n) (the slopes of 2n
 * heads at odd positions), as in the ALiBi paper's reference code.
 */
float logit_alibi_slope(int h, int H);

/* The modifiers of case c. */
void logit_init(struct logit_mod *m, const struct fs_case *c);

/* s modified for q head qh and key - q_pos = dist (see the top). */
static inline float logit_apply(const struct logit_mod *m, float s, int qh,
				int dist)
{
	if (m->cap > 0.0f)
		s = m->cap * logit_tanhf(s / m->cap);
	if (m->alibi)
		s = s + m->slope[qh] * (float)dist;
	return s;
}

#endif
