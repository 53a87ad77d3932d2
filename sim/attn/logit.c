/*
 * logit.c - soft cap and ALiBi on the recovered scores (see logit.h).
 *
 * Why our own tanh: a golden must not change with the libm that built
 * fragsim, and every executor must give the same bits, so tanh is
 * computed here from IEEE double additions, multiplications, one
 * division and an exact scaling, then rounded once to float:
 *
 *   |x| >= 9.5      1 (tanh is within 2e-8 of 1, below half a float ulp)
 *   |x| <  2^-10    x (1 - x^2/3 + 2x^4/15), the Taylor series; the next
 *                   term is 17 x^7 / 315, below 2^-62 relative
 *   otherwise       (1 - e) / (1 + e), e = exp(-2|x|) in double by
 *                   fs_expf's steps (x = n ln2 + r, degree-13 Taylor)
 *                   without its final rounding to float
 *
 * with the sign of x (tanh(-0) = -0, tanh(NaN) = NaN). In the third
 * branch 1 - e is at least about 2^-9, so the ~3e-16 error of e is at
 * most 2e-13 of it: the one rounding to float decides the result
 * (within half an ulp, but for inputs that close to a midpoint), which
 * tests/test_attn.c checks against libm's double tanh.
 * Example: logit_tanhf(0.5f) = 0x1.d9353ep-2 (0.46211717).
 *
 * ALiBi slopes are powers of two with exponents -8a/m, m a power of two:
 * 2^(-f/2^q) is a product of the square-root chain 2^(-1/2), 2^(-1/4),
 * ... (IEEE sqrt is correctly rounded), so the slopes are the same bits
 * everywhere. Example, 12 heads (n = 8): 2^-1 ... 2^-8, then 2^-0.5,
 * 2^-1.5, 2^-2.5, 2^-3.5.
 */
#include "logit.h"

#include <math.h>

#include "../common/fexp.h"

/* e^y in double for -19 < y < 0: fs_expf's reduction and polynomial. */
static double exp_neg(double y)
{
	double t = y * FEXP_LOG2E, r, p;
	int n = (int)(t - 0.5);		/* round half away (t < 0) */

	r = (y - n * FEXP_LN2_HI) - n * FEXP_LN2_LO;
	p = fexp_coef[FEXP_DEG];
	for (int k = FEXP_DEG - 1; k >= 0; k--)
		p = p * r + fexp_coef[k];
	return ldexp(p, n);		/* exact: -28 <= n <= 0 */
}

float logit_tanhf(float xf)
{
	double x = fabs((double)xf), t;

	if (xf != xf)
		return xf;
	if (x >= 9.5) {
		t = 1.0;
	} else if (x < 0x1p-10) {
		double x2 = x * x;

		t = x * (1.0 - x2 * (1.0 / 3.0 - x2 * (2.0 / 15.0)));
	} else {
		double e = exp_neg(-2.0 * x);

		t = (1.0 - e) / (1.0 + e);
	}
	return (float)copysign(t, (double)xf);
}

float logit_alibi_slope(int h, int H)
{
	int n = 1, num, den, ip, fr, q = 0;
	double v = 1.0, root = 0.5;

	while (n * 2 <= H)
		n *= 2;
	if (h < n) {
		num = 8 * (h + 1);
		den = n;
	} else {
		num = 8 * (2 * (h - n) + 1);
		den = 2 * n;
	}
	while (den > 1 && num % 2 == 0)
		num /= 2, den /= 2;
	while (1 << q < den)
		q++;
	ip = num / den;
	fr = num % den;
	/* 2^(-fr / 2^q): bit b of fr contributes 2^(-1 / 2^(q - b)). */
	for (int j = 1; j <= q; j++) {
		root = sqrt(root);	/* 2^(-1 / 2^j) */
		if (fr >> (q - j) & 1)
			v *= root;
	}
	return (float)ldexp(v, -ip);
}

void logit_init(struct logit_mod *m, const struct fs_case *c)
{
	m->cap = (float)c->soft_cap;
	m->alibi = c->alibi;
	m->on = m->cap > 0.0f || m->alibi;
	for (int h = 0; h < CASE_MAX_HEADS; h++)
		m->slope[h] = m->alibi && h < c->q_heads ?
			      logit_alibi_slope(h, c->q_heads) : 0.0f;
}
