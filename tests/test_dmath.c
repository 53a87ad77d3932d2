/*
 * test_dmath.c - ref/dmath.c against long double (x86-64's 64-bit
 * significand, 11 bits beyond double: its expl, logl and tanhl are
 * within an ulp of those 64 bits, far below a double's ulp), and at the
 * edges by hand. The error of a result y against the long double w is
 * |y - w| / ulp(w), ulp in double. Inputs: a deterministic spread over
 * each function's whole range, plus the points where a reduction
 * switches (multiples of ln2 / 2, powers of two, sqrt(1/2)).
 *
 * The bits themselves are the point of ref/dmath.c (the same on every
 * machine); tests/dmath-tunables.sh checks that the reports do not move
 * when glibc's FMA builds of libm are masked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "../ref/dmath.h"
#include "testutil.h"

#define ULP_MAX 3.0	/* what dmath.h promises */

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A uniform double in [lo, hi). */
static double in(uint64_t *x, double lo, double hi)
{
	return lo + (hi - lo) * ((double)(next(x) >> 11) * 0x1p-53);
}

/* |y - w| in ulps of w (as a double); 0 when both are the same inf. */
static double ulps(double y, long double w)
{
	double wd = (double)w;
	int e;

	if (isinf(wd) || isinf(y))
		return y == wd ? 0 : INFINITY;
	if (wd == 0)
		return y == 0 ? 0 : fabs(y) / 0x1p-1074;
	frexp(wd, &e);
	if (e - 53 < -1074)
		e = -1074 + 53;
	return (double)(fabsl((long double)y - w) / ldexpl(1.0L, e - 53));
}

struct worst {
	double ulps, x;
};

static void note(struct worst *w, double u, double x)
{
	if (u > w->ulps || isnan(u)) {
		w->ulps = isnan(u) ? INFINITY : u;
		w->x = x;
	}
}

static void check(const char *name, const struct worst *w, double max)
{
	printf("  %s: worst %.3f ulp at %a\n", name, w->ulps, w->x);
	if (!(w->ulps <= max))
		fail_msg("%s: %.3f ulp at %a (promised %.1f)", name, w->ulps, w->x, max);
}

static void test_exp(void **state)
{
	struct worst w = { 0, 0 };
	uint64_t s = 7;

	(void)state;
	for (int i = 0; i < 400000; i++) {
		double x = i % 4 ? in(&s, -40, 40) : in(&s, -745, 709.7);

		note(&w, ulps(dm_exp(x), expl((long double)x)), x);
	}
	for (int k = -2140; k <= 2047; k++) {	/* reduction boundaries */
		double x = k * 0.34657359027997264;

		if (x > -745 && x < 709.7)
			for (int d = -2; d <= 2; d++) {
				double y = nextafter(x, d < 0 ? -INFINITY : INFINITY);

				note(&w, ulps(dm_exp(d ? y : x), expl((long double)(d ? y : x))),
				     d ? y : x);
			}
	}
	check("dm_exp", &w, ULP_MAX);
	assert_true(dm_exp(0) == 1.0);
	assert_true(dm_exp(-0.0) == 1.0);
	assert_true(ulps(dm_exp(1), expl(1.0L)) <= 1);		/* e */
	assert_true(dm_exp(709.79) == INFINITY);
	assert_true(dm_exp(INFINITY) == INFINITY);
	assert_true(dm_exp(-INFINITY) == 0);
	assert_true(dm_exp(-746) == 0);
	assert_true(dm_exp(-745) > 0 && dm_exp(-745) < DBL_MIN);	/* subnormal */
	assert_true(isnan(dm_exp(NAN)));
}

static void test_exp2(void **state)
{
	struct worst w = { 0, 0 };
	uint64_t s = 11;

	(void)state;
	for (int i = 0; i < 200000; i++) {
		double x = in(&s, -64, 64);

		note(&w, ulps(dm_exp2(x), exp2l((long double)x)), x);
	}
	check("dm_exp2", &w, ULP_MAX);
	for (int k = -1074; k < 1024; k++)	/* integers: exact */
		assert_true(dm_exp2(k) == ldexp(1.0, k));
	/* ALiBi's slopes: 2^(-8/n) for n = 8 is 1/2, for n = 16 sqrt(1/2). */
	assert_true(dm_exp2(-1.0) == 0.5);
	assert_true(ulps(dm_exp2(-0.5), sqrtl(0.5L)) <= 1);
	assert_true(dm_exp2(1024) == INFINITY);
	assert_true(dm_exp2(-1076) == 0);
}

static void test_expm1_and_tanh(void **state)
{
	struct worst we = { 0, 0 }, wt = { 0, 0 };
	uint64_t s = 13;

	(void)state;
	for (int i = 0; i < 300000; i++) {
		double x = i % 3 == 0 ? in(&s, -1, 1) * ldexp(1, -(int)(next(&s) % 60))
			 : in(&s, -40, 5);

		note(&we, ulps(dm_expm1(x), expm1l((long double)x)), x);
		x = i % 2 ? x : in(&s, -23, 23);
		note(&wt, ulps(dm_tanh(x), tanhl((long double)x)), x);
	}
	check("dm_expm1", &we, ULP_MAX);
	check("dm_tanh", &wt, ULP_MAX);
	assert_true(dm_expm1(0) == 0);
	assert_true(dm_expm1(-50) == -1);
	assert_true(ulps(dm_expm1(709.7), expm1l((long double)709.7)) <= ULP_MAX);	/* 2^1024 would overflow */
	assert_true(dm_expm1(710) == INFINITY);
	assert_true(dm_tanh(0.0) == 0 && !signbit(dm_tanh(0.0)));
	assert_true(dm_tanh(-0.0) == 0 && signbit(dm_tanh(-0.0)));
	assert_true(dm_tanh(1e-300) == 1e-300);
	assert_true(dm_tanh(30) == 1 && dm_tanh(-30) == -1);
	assert_true(dm_tanh(INFINITY) == 1 && dm_tanh(-INFINITY) == -1);
	assert_true(isnan(dm_tanh(NAN)));
	for (int i = 0; i < 1000; i++) {	/* odd */
		double x = in(&s, 0, 25);

		assert_true(dm_tanh(-x) == -dm_tanh(x));
	}
}

static void test_log(void **state)
{
	struct worst w = { 0, 0 };
	uint64_t s = 17;

	(void)state;
	for (int i = 0; i < 400000; i++) {
		double x = i % 2 ? ldexp(in(&s, 0.5, 1), (int)(next(&s) % 2098) - 1074)
			 : in(&s, 0.5, 2);	/* near 1: the hard part */

		if (x > 0)
			note(&w, ulps(dm_log(x), logl((long double)x)), x);
	}
	for (int e = -1074; e < 1024; e++)	/* powers of two, and around */
		for (int d = -1; d <= 1; d++) {
			double x = ldexp(1, e);

			x = d < 0 ? nextafter(x, 0) : d > 0 ? nextafter(x, INFINITY) : x;
			if (x > 0 && !isinf(x))
				note(&w, ulps(dm_log(x), logl((long double)x)), x);
		}
	note(&w, ulps(dm_log(M_SQRT1_2), logl(M_SQRT1_2)), M_SQRT1_2);
	check("dm_log", &w, ULP_MAX);
	assert_true(dm_log(1) == 0 && !signbit(dm_log(1)));
	assert_true(ulps(dm_log(2), logl(2.0L)) <= 1);		/* ln 2 */
	assert_true(dm_log(0) == -INFINITY && dm_log(-0.0) == -INFINITY);
	assert_true(isnan(dm_log(-1)) && isnan(dm_log(NAN)));
	assert_true(dm_log(INFINITY) == INFINITY);
	assert_true(ulps(dm_log(0x1p-1074), logl(0x1p-1074L)) <= ULP_MAX);
}

/*
 * The point of it all: a case's report is the same bytes whether glibc
 * runs its FMA builds of libm or its SSE2 ones (GLIBC_TUNABLES masks the
 * CPU's FMA, AVX2 and AVX-512 from glibc; fragsim's own dispatch asks
 * the CPU itself, so nothing else changes). With libm's exp and log in
 * ref/, this failed: 52 numbers of the shipped suite's reports moved.
 * Cases with a soft cap (tanh), ALiBi (exp2) and the KLD (exp, log).
 */
static void test_reports_do_not_move_with_libm(void **state)
{
	static const char *const cases[] = {
		"cases/edge/prefill-alibi-soft-cap.yaml", "cases/edge/soft-cap.yaml",
		"cases/edge/alibi-12-heads.yaml", "cases/edge/saturate.yaml",
		"cases/qwen35-27b/decode-17.yaml",
	};
	struct tu_scratch *t = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static const char *const env[2] = {
			"", "GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F",
		};

		for (int k = 0; k < 2; k++)
			assert_int_equal(tu_sh("%s '%s' run '%s/%s' --json | grep -v seconds_ > %s/%d",
					       env[k], FRAGSIM_BIN, FRAGSIM_SRC, cases[i],
					       t->dir, k), 0);
		if (tu_sh("cmp -s %s/0 %s/1", t->dir, t->dir))
			fail_msg("%s: the report moved with glibc's libm build", cases[i]);
	}
}

static int scratch_setup(void **state)
{
	return tu_scratch_setup(state, "dmath", "unused");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exp),
		cmocka_unit_test(test_exp2),
		cmocka_unit_test(test_expm1_and_tanh),
		cmocka_unit_test(test_log),
		cmocka_unit_test_setup_teardown(test_reports_do_not_move_with_libm,
						scratch_setup, tu_scratch_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
