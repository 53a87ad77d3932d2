/*
 * fexp.c - a deterministic expf (see fexp.h).
 *
 *   x = n*ln2 + r,  n = nearest integer to x/ln2,  |r| <= ln2/2
 *   exp(x) = 2^n * exp(r),  exp(r) by its Taylor series to degree 13,
 *   in Horner form on the coefficients 1/k!:  p = p*r + 1/k!
 *
 * Only multiplications and additions: no division, so the vector kernels
 * run the same steps at full width (a division costs ~10x a multiply).
 * ln2 is split in a high part with trailing zero bits (n*LN2_HI is exact
 * for |n| < 2^11) and a low part, so r carries no cancellation error.
 * Degree 13 leaves a truncation error below 0.347^14/14! ~ 4e-18; the
 * 26 double roundings of Horner add ~2e-16 relative, far below a float
 * ulp (6e-8), so the one final rounding to float decides the result.
 *
 * Measured (tests/test_attn_fast.c, exp_is_correctly_rounded): against the
 * correctly rounded expf - the reference is expl() in x87 long double
 * (64-bit significand) rounded once to float, and an input counts as
 * undecided when that long double lies within 2^-58 relative of a float
 * midpoint - over 14,174,554 inputs in [-104, 88.72] (2^21 uniform
 * values, the 2^21 random bit patterns that fall in the range, every
 * 97th float of [-1, 0)): 0 not correctly rounded, 0 undecided, max
 * error 0.499999968 ulp (ulp of the exact value; 2^-149 for subnormal
 * results).
 * Example: fs_expf(-1.0f) = 0x1.78b564p-2 (0.36787945), as expf gives.
 */
#include "fexp.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

const double fexp_coef[FEXP_DEG + 1] = {
	0x1.0000000000000p+0, 0x1.0000000000000p+0, 0x1.0000000000000p-1,
	0x1.5555555555555p-3, 0x1.5555555555555p-5, 0x1.1111111111111p-7,
	0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-16,
	0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26,
	0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33,
};

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
	if (xf > FEXP_MAX)
		return INFINITY;
	if (xf < FEXP_MIN)
		return 0.0f;		/* below the smallest subnormal float */
	t = x * FEXP_LOG2E;
	n = (int)(t < 0 ? t - 0.5 : t + 0.5);	/* round half away: any n works */
	r = (x - n * FEXP_LN2_HI) - n * FEXP_LN2_LO;
	p = fexp_coef[FEXP_DEG];
	for (int k = FEXP_DEG - 1; k >= 0; k--)
		p = p * r + fexp_coef[k];
	/* n >= -150 here, inside pow2i's normal double range: one product,
	 * exact, then the one rounding to float. */
	return (float)(p * pow2i(n));
}
