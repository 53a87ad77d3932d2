/*
 * fexp.h - the one exponential every emulated path uses.
 *
 * glibc's expf may differ between versions and machines in the last bit;
 * a golden tensor must not. fs_expf uses only IEEE double additions and
 * multiplications (built with -ffp-contract=off, so no FMA sneaks in) and
 * rounds once to float, so its bits are the same everywhere, and the
 * vector kernels (sim/attn/tile_avx2.c, sim/attn/tile_avx512.c) repeat the same
 * operations lane by lane from the constants below. Accuracy: see fexp.c.
 */
#ifndef FEXP_H
#define FEXP_H

#define FEXP_DEG 13		/* degree of the polynomial */

/* ln2 = FEXP_LN2_HI + FEXP_LN2_LO; FEXP_LN2_HI has 21 trailing zero bits. */
#define FEXP_LN2_HI 0x1.62e42fee00000p-1
#define FEXP_LN2_LO 0x1.a39ef35793c76p-33
#define FEXP_LOG2E 0x1.71547652b82fep+0
/* Arguments above FEXP_MAX give inf, below FEXP_MIN 0. */
#define FEXP_MAX 88.7228394f
#define FEXP_MIN -104.0f

/* fexp_coef[k] = 1/k! rounded to double, k = 0 .. FEXP_DEG. */
extern const double fexp_coef[FEXP_DEG + 1];

float fs_expf(float x);

#endif
