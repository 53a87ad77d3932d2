/*
 * dmath.c - exp, log and tanh for the reference (see dmath.h for why).
 *
 * exp: x = k ln2 + r with k = nearest(x / ln2), |r| <= ln2 / 2, ln2 in
 * two parts (Cody and Waite): LN2_HI has 32 significant bits, so k *
 * LN2_HI is exact for |k| < 2^11 and x - k * LN2_HI loses nothing. Then
 * e^r - 1 = r + r^2/2! + ... + r^13/13! by Horner (the first term left
 * out is below 2^-60 relative for |r| <= 0.35), e^x = 2^k (1 + that).
 *
 * log: x = 2^e m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), s =
 * f / (2 + f). log(1 + f) = 2 atanh(s) = 2s + 2s^3/3 + 2s^5/5 + ..., and
 * since 2s = f - s f, it is f - (f^2/2 - s (f^2/2 + R)) with R = 2z/3
 * + 2z^2/5 + ... (z = s^2 <= 0.0295: 11 terms): the small correction is
 * added to f last, which keeps log near 1 accurate. Then e ln2 in two
 * parts as for exp.
 *
 * tanh(x) = -expm1(-2|x|) / (2 + expm1(-2|x|)) with the sign of x, which
 * has no cancellation near 0.
 *
 * Example: dm_exp(1) = 0x1.5bf0a8b14576ap+1, one ulp above e rounded
 * (0x1.5bf0a8b145769p+1); dm_log(2) = 0x1.62e42fefa39efp-1, ln 2 rounded.
 */
#include "dmath.h"

#include <math.h>
#include <stdint.h>

#include "../sim/common/cpu.h"

#ifdef CPU_X86
#include <immintrin.h>
#endif

#define LN2_HI 0x1.62e42feep-1		/* 32 bits of ln 2 */
#define LN2_LO 0x1.a39ef35793c76p-33	/* ln 2 - LN2_HI */
#define INV_LN2 0x1.71547652b82fep+0	/* 1 / ln 2 */
#define EXP_MAX 0x1.62e42fefa39efp+9	/* 709.78: e^x overflows above */
#define EXP_MIN -0x1.74910d52d3051p+9	/* -745.13: e^x is 0 below */

/* e^r - 1 for |r| <= ln2 / 2 + a little: Taylor to r^13 / 13!. */
static double expm1_small(double r)
{
	static const double inv_fact[] = {	/* 1/2!, 1/3!, ..., 1/13! */
		1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
		1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800,
		1.0 / 479001600, 1.0 / 6227020800.0,
	};
	double q = inv_fact[11];

	for (int i = 10; i >= 0; i--)
		q = q * r + inv_fact[i];
	return r + r * (r * q);
}

/* nearest(x), ties to even, for |x| < 2^51: adding 1.5 * 2^52 leaves no
 * fraction bits, so the add rounds (in the default mode) and the
 * subtract is exact. A libm call less in the hot loop. */
static double nearest(double x)
{
	return (x + 0x1.8p52) - 0x1.8p52;
}

/* y 2^k: one exact multiply while 2^k and the result are normal; ldexp
 * (the same value, slower) at the ends of the range. */
static double scale2(double y, int k)
{
	union { uint64_t u; double d; } t;

	if (k < -1021 || k > 1023)
		return ldexp(y, k);
	t.u = (uint64_t)(k + 1023) << 52;
	return y * t.d;
}

/* x = k ln2 + *r, |*r| <= ln2 / 2 (x finite, in exp's range). */
static int reduce(double x, double *r)
{
	double k = nearest(x * INV_LN2);

	*r = (x - k * LN2_HI) - k * LN2_LO;
	return (int)k;
}

double dm_exp(double x)
{
	double r;
	int k;

	if (isnan(x))
		return x + x;
	if (x > EXP_MAX)
		return INFINITY;
	if (x < EXP_MIN)
		return 0.0;
	k = reduce(x, &r);
	return scale2(1.0 + expm1_small(r), k);
}

#ifdef CPU_X86
/*
 * dm_exp on 8 lanes: the same operations in the same order (nearest by
 * the 1.5 * 2^52 add and subtract, the two-part reduction, Horner with
 * a multiply then an add, 2^k from its bits), so the same bits. Only
 * x in [-707, 708] is done here, where k is in [-1020, 1021] and 2^k
 * and the result are normal (scale2's fast branch); a lane outside,
 * NaN included, is done again by dm_exp.
 */
__attribute__((target("avx512f")))
static void exp_n_avx512(const double *x, double *y, int n)
{
	static const double inv_fact[] = {
		1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
		1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800,
		1.0 / 479001600, 1.0 / 6227020800.0,
	};
	const __m512d magic = _mm512_set1_pd(0x1.8p52);
	const __m512i mbits = _mm512_set1_epi64(0x4338000000000000LL);
	int i = 0;

	for (; i + 8 <= n; i += 8) {
		__m512d v = _mm512_loadu_pd(x + i), kb, k, r, q, e;
		__m512i kk;
		__mmask8 in = _mm512_cmp_pd_mask(v, _mm512_set1_pd(-707.0), _CMP_GE_OQ) &
			      _mm512_cmp_pd_mask(v, _mm512_set1_pd(708.0), _CMP_LE_OQ);

		kb = _mm512_add_pd(_mm512_mul_pd(v, _mm512_set1_pd(INV_LN2)), magic);
		k = _mm512_sub_pd(kb, magic);
		r = _mm512_sub_pd(_mm512_sub_pd(v, _mm512_mul_pd(k, _mm512_set1_pd(LN2_HI))),
				  _mm512_mul_pd(k, _mm512_set1_pd(LN2_LO)));
		q = _mm512_set1_pd(inv_fact[11]);
		for (int c = 10; c >= 0; c--)
			q = _mm512_add_pd(_mm512_mul_pd(q, r), _mm512_set1_pd(inv_fact[c]));
		e = _mm512_add_pd(r, _mm512_mul_pd(r, _mm512_mul_pd(r, q)));
		e = _mm512_add_pd(_mm512_set1_pd(1.0), e);
		/* the integer k is kb's low bits: 2^k = (k + 1023) << 52 */
		kk = _mm512_sub_epi64(_mm512_castpd_si512(kb), mbits);
		kk = _mm512_slli_epi64(_mm512_add_epi64(kk, _mm512_set1_epi64(1023)), 52);
		if (in != 0xff) {	/* x before y is written: y may be x */
			double xs[8], ys[8];

			_mm512_storeu_pd(xs, v);
			_mm512_storeu_pd(ys, _mm512_mul_pd(e, _mm512_castsi512_pd(kk)));
			for (int l = 0; l < 8; l++)
				y[i + l] = in >> l & 1 ? ys[l] : dm_exp(xs[l]);
			continue;
		}
		_mm512_storeu_pd(y + i, _mm512_mul_pd(e, _mm512_castsi512_pd(kk)));
	}
	for (; i < n; i++)
		y[i] = dm_exp(x[i]);
}
#endif

void dm_exp_n(const double *x, double *y, int n)
{
#ifdef CPU_X86
	if (cpu_has(CPU_AVX512F)) {
		exp_n_avx512(x, y, n);
		return;
	}
#endif
	for (int i = 0; i < n; i++)
		y[i] = dm_exp(x[i]);
}

double dm_exp2(double x)
{
	double k, f;

	if (isnan(x))
		return x + x;
	if (x >= 1024)
		return INFINITY;
	if (x < -1075)
		return 0.0;
	k = nearest(x);
	f = x - k;		/* exact, |f| <= 1/2 */
	return scale2(f == 0 ? 1.0 : dm_exp(f * LN2_HI + f * LN2_LO), (int)k);
}

double dm_expm1(double x)
{
	double r, t;
	int k;

	if (isnan(x))
		return x + x;
	if (x > 40)		/* e^x above 2^57: the 1 is below half an ulp */
		return dm_exp(x);
	if (x < -40)		/* e^x below 2^-57: -1 rounded */
		return -1.0;
	if (fabs(x) <= 0.34657359027997264)	/* ln2 / 2: no reduction */
		return expm1_small(x);
	k = reduce(x, &r);
	t = scale2(1.0, k);	/* 2^k (1 + p) - 1 = (2^k - 1) + 2^k p */
	return (t - 1.0) + t * expm1_small(r);
}

double dm_log(double x)
{
	static const double lg[] = {	/* 2/3, 2/5, ..., 2/23 */
		2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11, 2.0 / 13,
		2.0 / 15, 2.0 / 17, 2.0 / 19, 2.0 / 21, 2.0 / 23,
	};
	double m, f, s, z, R, hfsq, lm;
	int e;

	if (isnan(x))
		return x + x;
	if (x < 0)
		return NAN;
	if (x == 0)
		return -INFINITY;
	if (isinf(x))
		return x;
	m = frexp(x, &e);	/* x = m 2^e, m in [1/2, 1) */
	if (m < 0.70710678118654752440) {
		m *= 2;
		e--;
	}
	f = m - 1.0;
	s = f / (2.0 + f);
	z = s * s;
	R = lg[10];
	for (int i = 9; i >= 0; i--)
		R = R * z + lg[i];
	R *= z;
	hfsq = 0.5 * f * f;
	lm = f - (hfsq - s * (hfsq + R));
	if (e == 0)
		return lm;
	return e * LN2_HI + (e * LN2_LO + lm);
}

double dm_tanh(double x)
{
	double a = fabs(x), t;

	if (isnan(x))
		return x + x;
	if (a > 22)		/* 1 - tanh below 2^-63 */
		return copysign(1.0, x);
	if (a < 0x1p-28)	/* x^3 / 3 below half an ulp of x */
		return x;
	t = dm_expm1(-2.0 * a);
	return copysign(-t / (2.0 + t), x);
}
