/*
 * test_dot.c - ref/dot.c against the plain loops it stands for, bit for
 * bit: int8 dot products at the int8 extremes (-128 included, which the
 * quantizer never makes), and the fused double sums (fma(a, b, acc)) of
 * dot_f64_keys and dot_pv on values whose sums round at every step (mixed
 * magnitudes and signs). A lane that summed in another order, or a
 * multiply and add rounded apart, shows here as a differing bit; and
 * test_dot_fused picks operands where the two answers differ, so a build
 * that does not fuse cannot pass. The double sums are checked in each
 * build this CPU runs (plain, AVX2 + FMA, AVX-512), and through the
 * dispatching entry.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../ref/dot.h"

/* A small deterministic generator (xorshift64). */
static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A value whose magnitude spans 2^-20 .. 2^20, either sign. */
static double wide(uint64_t *x)
{
	double m = (double)(next(x) >> 11) * 0x1p-53;
	int e = (int)(next(x) % 41) - 20;

	return (next(x) & 1 ? -1 : 1) * ldexp(0.5 + m, e);
}

static void test_dot_i8(void **state)
{
	int8_t a[1024], b[1024];
	uint64_t x = 42;

	(void)state;
	for (int i = 0; i < 1024; i++) {
		a[i] = (int8_t)(next(&x) & 0xff);
		b[i] = (int8_t)(next(&x) & 0xff);
	}
	for (int n = 0; n <= 1024; n += 32) {
		int32_t want = 0;

		for (int i = 0; i < n; i++)
			want += a[i] * b[i];
		assert_int_equal(dot_i8(a, b, n), want);
	}
	/* The extremes: 1024 * (-128)^2 = 2^24. */
	memset(a, 0x80, sizeof(a));
	memset(b, 0x80, sizeof(b));
	assert_int_equal(dot_i8(a, b, 1024), 1 << 24);
	b[5] = 127;
	assert_int_equal(dot_i8(a, b, 32), 31 * 16384 - 128 * 127);
	assert_int_equal(dot_i8(a, b, 7), 6 * 16384 - 128 * 127);
}

static void test_dot_f64_keys(void **state)
{
	enum { D = 96 };
	float q[4][D];
	double kt[D * DOT_KEYS], out[4][DOT_KEYS];
	const float *qp[4] = { q[0], q[1], q[2], q[3] };
	uint64_t x = 7;

	(void)state;
	for (int r = 0; r < 4; r++)
		for (int d = 0; d < D; d++)
			q[r][d] = (float)wide(&x);
	for (int i = 0; i < D * DOT_KEYS; i++)
		kt[i] = (float)wide(&x);
	/* isa == 3: the dispatching entry */
	for (int isa = DOT_PLAIN; isa <= 3; isa++) {
		if (isa < 3 && !dot_isa_supported((enum dot_isa)isa))
			continue;
		memset(out, 0xff, sizeof(out));
		if (isa == 3)
			dot_f64_keys(qp, kt, D, out);
		else
			dot_f64_keys_isa((enum dot_isa)isa, qp, kt, D, out);
		for (int r = 0; r < 4; r++) {
			for (int i = 0; i < DOT_KEYS; i++) {
				double want = 0;

				for (int d = 0; d < D; d++)
					want = fma((double)q[r][d],
						   kt[d * DOT_KEYS + i], want);
				assert_memory_equal(&out[r][i], &want, sizeof(double));
			}
		}
	}
}

static void test_dot_pv(void **state)
{
	enum { NK = 37, STRIDE = 40 };
	double p[NK], pf[NK], v[NK * STRIDE], vabs[NK * STRIDE];
	double vfd[NK * STRIDE];
	double o[DOT_SLICE], oa[DOT_SLICE], of[DOT_SLICE];
	uint64_t x = 99;

	(void)state;
	for (int j = 0; j < NK; j++) {
		p[j] = fabs(wide(&x));
		pf[j] = fabs(wide(&x));
	}
	for (int i = 0; i < NK * STRIDE; i++) {
		v[i] = wide(&x);
		vfd[i] = (float)wide(&x);	/* as the float V, in double */
	}
	v[3] = -0.0;	/* |-0| is +0 */
	for (int i = 0; i < NK * STRIDE; i++)
		vabs[i] = fabs(v[i]);
	/* isa == 3: the dispatching entry */
	for (int isa = DOT_PLAIN; isa <= 3; isa++) {
		double wo[DOT_SLICE], wa[DOT_SLICE], wf[DOT_SLICE];

		if (isa < 3 && !dot_isa_supported((enum dot_isa)isa))
			continue;
		x = 12345;
		for (int d = 0; d < DOT_SLICE; d++) {
			o[d] = wide(&x);
			oa[d] = fabs(o[d]);
			of[d] = -o[d];
		}
		memcpy(wo, o, sizeof(o));
		memcpy(wa, oa, sizeof(oa));
		memcpy(wf, of, sizeof(of));
		for (int j = 0; j < NK; j++) {
			for (int d = 0; d < DOT_SLICE; d++) {
				wo[d] = fma(p[j], v[j * STRIDE + d], wo[d]);
				wa[d] = fma(p[j], vabs[j * STRIDE + d], wa[d]);
				wf[d] = fma(pf[j], vfd[j * STRIDE + d], wf[d]);
			}
		}
		if (isa == 3)
			dot_pv(NK, p, pf, v, vabs, vfd, STRIDE, o, oa, of);
		else
			dot_pv_isa((enum dot_isa)isa, NK, p, pf, v, vabs, vfd,
				   STRIDE, o, oa, of);
		assert_memory_equal(o, wo, sizeof(o));
		assert_memory_equal(oa, wa, sizeof(oa));
		assert_memory_equal(of, wf, sizeof(of));
	}
}

/*
 * The fusing is real: a = 1 + 2^-30, b = 1 - 2^-30, c = -1. a * b is
 * 1 - 2^-60, which rounds to 1, so a * b + c is 0; fma(a, b, c) rounds
 * once, at the end: -2^-60. dot_f64_keys takes q in float, so there
 * q = 1 + 2^-23 (a float) and k = 1 + 2^-52: q * k = 1 + 2^-23 + 2^-52
 * + 2^-75, whose 2^-75 a separate rounding drops; after -1 (the first
 * term, q = 1 times k = -1) the fused sum keeps it. Every lane and row
 * is checked, in every build this CPU runs and through the dispatch.
 */
static void test_dot_fused(void **state)
{
	volatile double a = 1 + 0x1p-30, b = 1 - 0x1p-30, c = -1;
	volatile double qk = (double)(float)(1 + 0x1p-23), k1 = 1 + 0x1p-52;
	const double pv_want = -0x1p-60;
	const double keys_want = 0x1p-23 + 0x1p-52 + 0x1p-75;
	enum { D = 2 };
	float q[4][D];
	const float *qp[4] = { q[0], q[1], q[2], q[3] };
	double kt[D * DOT_KEYS], out[4][DOT_KEYS];
	double p[1] = { a }, v[DOT_SLICE], vabs[DOT_SLICE], vfd[DOT_SLICE];
	double o[DOT_SLICE], oa[DOT_SLICE], of[DOT_SLICE];

	(void)state;
	/* The premise: the two answers differ, and fma is the exact one. */
	assert_true(a * b + c == 0);
	assert_true(fma(a, b, c) == pv_want);
	assert_true(qk * k1 + c == 0x1p-23 + 0x1p-52);
	assert_true(fma(qk, k1, c) == keys_want);
	for (int r = 0; r < 4; r++) {
		q[r][0] = 1;
		q[r][1] = (float)qk;
	}
	for (int i = 0; i < DOT_KEYS; i++) {
		kt[i] = -1;
		kt[DOT_KEYS + i] = k1;
	}
	for (int d = 0; d < DOT_SLICE; d++) {
		v[d] = vfd[d] = b;
		vabs[d] = b;
	}
	/* isa == 3: the dispatching entry */
	for (int isa = DOT_PLAIN; isa <= 3; isa++) {
		if (isa < 3 && !dot_isa_supported((enum dot_isa)isa))
			continue;
		memset(out, 0, sizeof(out));
		for (int d = 0; d < DOT_SLICE; d++)
			o[d] = oa[d] = of[d] = c;
		if (isa == 3) {
			dot_f64_keys(qp, kt, D, out);
			dot_pv(1, p, p, v, vabs, vfd, DOT_SLICE, o, oa, of);
		} else {
			dot_f64_keys_isa((enum dot_isa)isa, qp, kt, D, out);
			dot_pv_isa((enum dot_isa)isa, 1, p, p, v, vabs, vfd,
				   DOT_SLICE, o, oa, of);
		}
		for (int r = 0; r < 4; r++)
			for (int i = 0; i < DOT_KEYS; i++)
				assert_true(out[r][i] == keys_want);
		for (int d = 0; d < DOT_SLICE; d++) {
			assert_true(o[d] == pv_want);
			assert_true(oa[d] == pv_want);
			assert_true(of[d] == pv_want);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dot_i8),
		cmocka_unit_test(test_dot_f64_keys),
		cmocka_unit_test(test_dot_pv),
		cmocka_unit_test(test_dot_fused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
