/*
 * fexp.c - a deterministic expf (see fexp.h).
 *
 *   x = n*ln2 + r,  n = nearest integer to x/ln2,  |r| <= ln2/2
 *   exp(x) = 2^n * exp(r),  exp(r) by its Taylor series to degree 13
 *
 * ln2 is split in a high part with trailing zero bits (n*LN2_HI is exact
 * for |n| < 2^11) and a low part, so r carries no cancellation error.
 * Degree 13 leaves a truncation error below 0.347^14/14! ~ 4e-18.
 * Example: fs_expf(-1.0f) = 0x1.78b564p-2 (0.36787945), as expf gives.
 */
#include "fexp.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static const double LN2_HI = 6.93147180369123816490e-01;	/* 0x3fe62e42fee00000 */
static const double LN2_LO = 1.90821492927058770002e-10;	/* ln2 - LN2_HI */
static const double LOG2E = 1.44269504088896338700e+00;

static double pow2i(int n)
{
	uint64_t bits = (uint64_t)(n + 1023) << 52;
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

float fs_expf(float xf)
{
	double x = xf, r, p, t;
	int n;

	if (xf != xf)
		return xf;		/* NaN */
	if (xf > 88.7228394f)
		return INFINITY;
	if (xf < -104.0f)
		return 0.0f;		/* below the smallest subnormal float */
	t = x * LOG2E;
	n = (int)(t < 0 ? t - 0.5 : t + 0.5);	/* round half away: any n works */
	r = (x - n * LN2_HI) - n * LN2_LO;
	/* Horner: 1 + r(1 + r/2(1 + r/3(...(1 + r/13)))) */
	p = 1.0;
	for (int k = 13; k >= 1; k--)
		p = 1.0 + p * r / k;
	/* 2^n in two steps: n can reach -150, below the normal double range
	 * of pow2i's single factor only for n < -1022, never here. */
	return (float)(p * pow2i(n));
}
