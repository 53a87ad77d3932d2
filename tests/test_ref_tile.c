/*
 * test_ref_tile.c - ref/tile.c and dm_exp_n against the plain loops they
 * stand for, bit for bit, in every build this CPU runs and through the
 * dispatching entries: the double tiles (tile_qk, tile_pvq, tile_pvf) on
 * values whose sums round at every step (mixed magnitudes and signs),
 * with each row count a tile takes, rows of one tile over different
 * keys' counts, a head-dim slice of 16 (head_dim 80, 112) and -0 in V
 * (|-0| is +0); the exact int8 tile at the int8 extremes (-128
 * included); operands where a fused multiply-add and a multiply then an
 * add differ, so a build that does not fuse cannot pass; and dm_exp_n
 * against dm_exp over the fast range, its edges, and the lanes it hands
 * back (NaN, infinities, beyond +-707); and the softmax's max, masking
 * and division.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../ref/dmath.h"
#include "../ref/tile.h"

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

/* isa 3 is the dispatching entry; 0 .. 2 the builds, when supported. */
static int isa_absent(int isa)
{
	return isa < 3 && !tile_isa_supported((enum tile_isa)isa);
}

static void test_tile_qk(void **state)
{
	enum { D = 96 };
	double q[TILE_QK_ROWS][D], kt[D * TILE_QK_KEYS];
	double out[TILE_QK_ROWS][TILE_QK_KEYS];
	uint64_t x = 7;

	(void)state;
	for (int r = 0; r < TILE_QK_ROWS; r++)
		for (int d = 0; d < D; d++)
			q[r][d] = (float)wide(&x);
	for (int i = 0; i < D * TILE_QK_KEYS; i++)
		kt[i] = (float)wide(&x);
	for (int isa = 0; isa <= 3; isa++)
		for (int nr = 1; nr <= TILE_QK_ROWS; nr++) {
			const double *qp[TILE_QK_ROWS];

			if (isa_absent(isa))
				continue;
			for (int r = 0; r < TILE_QK_ROWS; r++)
				qp[r] = q[r < nr ? r : 0];
			memset(out, 0xff, sizeof(out));
			if (isa == 3)
				tile_qk(nr, qp, kt, D, out);
			else
				tile_qk_isa((enum tile_isa)isa, nr, qp, kt, D, out);
			for (int r = 0; r < TILE_QK_ROWS; r++)
				for (int i = 0; i < TILE_QK_KEYS; i++) {
					double want = 0;
					uint64_t untouched;

					for (int d = 0; d < D; d++)
						want = fma(q[r][d], kt[d * TILE_QK_KEYS + i], want);
					if (r < nr) {
						assert_memory_equal(&out[r][i], &want, sizeof(double));
						continue;
					}
					memcpy(&untouched, &out[r][i], sizeof(untouched));
					assert_true(untouched == UINT64_MAX);	/* left as it was */
				}
		}
}

static void test_tile_i8(void **state)
{
	enum { D = 256 };
	int8_t q[TILE_QK_ROWS][D], k[TILE_QK_KEYS][D];
	uint8_t kt[D * TILE_QK_KEYS];
	int32_t sumq[TILE_QK_ROWS], out[TILE_QK_ROWS][TILE_QK_KEYS];
	const int8_t *qp[TILE_QK_ROWS];
	uint64_t x = 42;

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		for (int r = 0; r < TILE_QK_ROWS; r++)
			for (int d = 0; d < D; d++)	/* pass 1: the extremes */
				q[r][d] = (int8_t)(pass ? (r & 1 ? -128 : 127)
							: (int)(next(&x) & 0xff));
		for (int i = 0; i < TILE_QK_KEYS; i++)
			for (int d = 0; d < D; d++)
				k[i][d] = (int8_t)(pass ? -128 : (int)(next(&x) & 0xff));
		for (int i = 0; i < TILE_QK_KEYS; i++)
			for (int d = 0; d < D; d++)
				kt[(d / 4) * 4 * TILE_QK_KEYS + 4 * i + d % 4] =
					(uint8_t)(k[i][d] ^ 0x80);
		for (int r = 0; r < TILE_QK_ROWS; r++) {
			sumq[r] = 0;
			for (int d = 0; d < D; d++)
				sumq[r] += q[r][d];
			qp[r] = q[r];
		}
		for (int isa = 0; isa <= 3; isa++) {
			if (isa == TILE_AVX512 && !tile_i8_fast())
				continue;
			for (int nr = 1; nr <= TILE_QK_ROWS; nr++) {
				memset(out, 0, sizeof(out));
				if (isa == 3)
					tile_i8(nr, qp, sumq, kt, D, out);
				else
					tile_i8_isa((enum tile_isa)isa, nr, qp, sumq, kt, D, out);
				for (int r = 0; r < nr; r++)
					for (int i = 0; i < TILE_QK_KEYS; i++) {
						int32_t want = 0;

						for (int d = 0; d < D; d++)
							want += q[r][d] * k[i][d];
						assert_int_equal(out[r][i], want);
					}
			}
		}
	}
	/* 256 * (-128)^2 = 2^22: the row of -128s against keys of -128s */
	assert_int_equal(out[1][0], 1 << 22);
}

/* PV: rows over different key counts and both slice widths. */
static void test_tile_pv(void **state)
{
	enum { NK = 37, STRIDE = 40, R = TILE_PVF_ROWS };
	double p[R][NK], v[NK * STRIDE];
	uint64_t x = 99;

	(void)state;
	for (int r = 0; r < R; r++)
		for (int j = 0; j < NK; j++)
			p[r][j] = fabs(wide(&x));
	for (int i = 0; i < NK * STRIDE; i++)
		v[i] = wide(&x);
	v[3] = -0.0;	/* |-0| is +0 */
	for (int isa = 0; isa <= 3; isa++)
		for (int n = 16; n <= TILE_SLICE; n += 16)
			for (int nr = 1; nr <= R; nr++)
				for (int nk = 0; nk <= NK; nk += 12) {
					double o[R][TILE_SLICE], oa[R][TILE_SLICE];
					double wo[R][TILE_SLICE], wa[R][TILE_SLICE];
					const double *pp[R];
					double *op[R], *oap[R];

					if (isa_absent(isa))
						continue;
					for (int r = 0; r < R; r++) {
						for (int d = 0; d < TILE_SLICE; d++) {
							o[r][d] = wide(&x);
							oa[r][d] = fabs(o[r][d]);
						}
						pp[r] = p[r];
						op[r] = o[r];
						oap[r] = oa[r];
					}
					memcpy(wo, o, sizeof(o));
					memcpy(wa, oa, sizeof(oa));
					for (int r = 0; r < nr; r++)
						for (int j = 0; j < nk; j++)
							for (int d = 0; d < n; d++) {
								double y = v[j * STRIDE + d];

								wo[r][d] = fma(p[r][j], y, wo[r][d]);
								if (nr <= TILE_PVQ_ROWS)
									wa[r][d] = fma(p[r][j], fabs(y),
										       wa[r][d]);
							}
					if (nr <= TILE_PVQ_ROWS) {
						if (isa == 3)
							tile_pvq(nr, nk, n, pp, v, STRIDE, op, oap);
						else
							tile_pvq_isa((enum tile_isa)isa, nr, nk, n, pp,
								     v, STRIDE, op, oap);
						assert_memory_equal(o, wo, sizeof(o));
						assert_memory_equal(oa, wa, sizeof(oa));
						memcpy(o, wo, sizeof(o));	/* the float path next */
						for (int r = 0; r < nr; r++)
							for (int j = 0; j < nk; j++)
								for (int d = 0; d < n; d++)
									wo[r][d] = fma(p[r][j], v[j * STRIDE + d],
										       wo[r][d]);
					}
					if (isa == 3)
						tile_pvf(nr, nk, n, pp, v, STRIDE, op);
					else
						tile_pvf_isa((enum tile_isa)isa, nr, nk, n, pp, v,
							     STRIDE, op);
					assert_memory_equal(o, wo, sizeof(o));
				}
}

/*
 * The fusing is real: a = 1 + 2^-30, b = 1 - 2^-30, c = -1. a * b is
 * 1 - 2^-60, which rounds to 1, so a * b + c is 0; fma(a, b, c) rounds
 * once, at the end: -2^-60. For tile_qk the first term, q = 1 times
 * k = -1, then q = a times k = b: a fused sum ends at -2^-60 too.
 */
static void test_tile_fused(void **state)
{
	volatile double a = 1 + 0x1p-30, b = 1 - 0x1p-30, c = -1;
	const double want = -0x1p-60;
	enum { D = 2 };
	double q[D] = { 1, a }, kt[D * TILE_QK_KEYS], out[TILE_QK_ROWS][TILE_QK_KEYS];
	double p[1] = { a }, v[TILE_SLICE];
	double o[TILE_PVF_ROWS][TILE_SLICE], oa[TILE_PVQ_ROWS][TILE_SLICE];

	(void)state;
	assert_true(a * b + c == 0);
	assert_true(fma(a, b, c) == want);
	for (int i = 0; i < TILE_QK_KEYS; i++) {
		kt[i] = -1;
		kt[TILE_QK_KEYS + i] = b;
	}
	for (int d = 0; d < TILE_SLICE; d++)
		v[d] = b;
	for (int isa = 0; isa <= 3; isa++) {
		const double *qp[TILE_QK_ROWS], *pp[TILE_PVF_ROWS];
		double *op[TILE_PVF_ROWS], *oap[TILE_PVQ_ROWS];

		if (isa_absent(isa))
			continue;
		for (int r = 0; r < TILE_QK_ROWS; r++)
			qp[r] = q;
		for (int r = 0; r < TILE_PVF_ROWS; r++) {
			pp[r] = p;
			op[r] = o[r];
			if (r < TILE_PVQ_ROWS)
				oap[r] = oa[r];
		}
		for (int k = 0; k < 2; k++) {	/* pvq, then pvf */
			for (int r = 0; r < TILE_PVF_ROWS; r++)
				for (int d = 0; d < TILE_SLICE; d++)
					o[r][d] = c;
			for (int r = 0; r < TILE_PVQ_ROWS; r++)
				for (int d = 0; d < TILE_SLICE; d++)
					oa[r][d] = c;
			if (k == 0 && isa == 3)
				tile_pvq(TILE_PVQ_ROWS, 1, TILE_SLICE, pp, v, TILE_SLICE, op, oap);
			else if (k == 0)
				tile_pvq_isa((enum tile_isa)isa, TILE_PVQ_ROWS, 1, TILE_SLICE,
					     pp, v, TILE_SLICE, op, oap);
			else if (isa == 3)
				tile_pvf(TILE_PVF_ROWS, 1, TILE_SLICE, pp, v, TILE_SLICE, op);
			else
				tile_pvf_isa((enum tile_isa)isa, TILE_PVF_ROWS, 1, TILE_SLICE,
					     pp, v, TILE_SLICE, op);
			for (int r = 0; r < (k ? TILE_PVF_ROWS : TILE_PVQ_ROWS); r++)
				for (int d = 0; d < TILE_SLICE; d++) {
					assert_true(o[r][d] == want);
					if (!k)
						assert_true(oa[r][d] == want);
				}
		}
		memset(out, 0, sizeof(out));
		if (isa == 3)
			tile_qk(TILE_QK_ROWS, qp, kt, D, out);
		else
			tile_qk_isa((enum tile_isa)isa, TILE_QK_ROWS, qp, kt, D, out);
		for (int r = 0; r < TILE_QK_ROWS; r++)
			for (int i = 0; i < TILE_QK_KEYS; i++)
				assert_true(out[r][i] == want);
	}
}

static void test_tile_dequant(void **state)
{
	int8_t q[16];
	double y[16];

	(void)state;
	for (int i = 0; i < 16; i++)
		q[i] = (int8_t)(i * 17 - 128);
	tile_dequant(q, 0.0123f, y);
	for (int i = 0; i < 16; i++)
		assert_true(y[i] == q[i] * (double)0.0123f);
}

/* tile_kt, every build: kt[d][i] is key i's dim d in double, bytes as
 * the plain conversion (signed zeros, infinities, subnormal floats),
 * head dims 8 to 1024, each key's row anywhere in memory. */
static void test_tile_kt(void **state)
{
	static float rows[TILE_QK_KEYS][1024 + 3];
	static double kt[1024 * TILE_QK_KEYS];
	const int dims[] = { 8, 16, 24, 256, 1024 };
	const float *k[TILE_QK_KEYS];
	uint32_t x = 7;

	(void)state;
	for (int i = 0; i < TILE_QK_KEYS; i++) {
		for (int d = 0; d < 1024 + 3; d++) {
			x = x * 1664525u + 1013904223u;
			rows[i][d] = (float)((int32_t)x >> 8) * 0x1p-20f;
		}
		/* unaligned starts, so the loads are the unaligned kind */
		k[i] = rows[i] + i % 4;
	}
	rows[3][5] = -0.0f;
	rows[4][6] = INFINITY;
	rows[5][7] = -INFINITY;
	rows[6][8] = 0x1p-140f;	/* subnormal */
	for (int isa = TILE_PLAIN; isa <= TILE_AVX512; isa++) {
		if (!tile_isa_supported((enum tile_isa)isa))
			continue;
		for (size_t n = 0; n < sizeof(dims) / sizeof(dims[0]); n++) {
			int D = dims[n];

			memset(kt, 0x5a, sizeof(kt));
			tile_kt_isa((enum tile_isa)isa, k, D, kt);
			for (int d = 0; d < D; d++)
				for (int i = 0; i < TILE_QK_KEYS; i++) {
					double want = k[i][d];

					assert_memory_equal(&kt[d * TILE_QK_KEYS + i], &want,
							    sizeof(double));
				}
			/* nothing past D x TILE_QK_KEYS written */
			if (D < 1024)
				assert_true(((unsigned char *)kt)[D * TILE_QK_KEYS *
							    sizeof(double)] == 0x5a);
		}
	}
}

/* dm_exp_n is dm_exp, bit for bit, across its lanes and what it hands
 * back: a million values over [-720, 720], the fast range's edges and
 * the values beyond them, and the specials, in every lane position. */
static void test_exp_n(void **state)
{
	enum { N = 1 << 20 };
	static double x[N], y[N];
	const double edge[] = {	/* not static: nextafter is a call */
		-707.0, 708.0, nextafter(-707.0, -800), nextafter(708.0, 800), -745.2,
		709.9, 0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-310, -1e-310, 1.0,
		-1.0, 0.5 * 0.6931471805599453,
	};
	uint64_t r = 5;

	(void)state;
	for (int i = 0; i < N; i++)
		x[i] = ((double)(next(&r) >> 11) * 0x1p-53 - 0.5) * 1440;
	for (int i = 0; i < N; i += 97)	/* small ones, where exp is near 1 */
		x[i] = wide(&r) * 0x1p-20;
	for (size_t k = 0; k < sizeof(edge) / sizeof(edge[0]); k++)
		for (int l = 0; l < 9; l++)
			x[1000 + 9 * (int)k + l] = edge[k];
	dm_exp_n(x, y, N - 3);	/* a length that leaves a tail */
	for (int i = 0; i < N - 3; i++) {
		double want = dm_exp(x[i]);

		if (isnan(want))
			assert_true(isnan(y[i]));
		else
			assert_memory_equal(&y[i], &want, sizeof(double));
	}
	dm_exp_n(x, x, N - 3);	/* in place, as ref_softmax calls it */
	assert_memory_equal(x, y, (N - 3) * sizeof(double));
}

/* The softmax's loops against theirs: the max with NaNs, infinities and
 * both zeros in every lane position (the first 0 wins in the plain
 * loop: -0 then +0 gives -0), the masking and the division. */
static void test_tile_softmax_loops(void **state)
{
	enum { N = 203 };
	double x[N], p[N], q[N];
	uint64_t r = 11;

	(void)state;
	for (int pass = 0; pass < 64; pass++) {
		double want = -INFINITY;

		for (int i = 0; i < N; i++) {
			uint64_t k = next(&r) % 16;

			x[i] = k == 0 ? NAN : k == 1 ? -INFINITY : k == 2 ? -0.0 :
			       k == 3 ? 0.0 : pass % 2 ? -fabs(wide(&r)) : wide(&r);
		}
		if (pass == 5)
			x[N - 1] = INFINITY;
		for (int i = 0; i < N; i++)
			if (x[i] > want)
				want = x[i];
		for (int n = 0; n <= N; n += 29) {
			double m = tile_max(x, n), w = -INFINITY;

			for (int i = 0; i < n; i++)
				if (x[i] > w)
					w = x[i];
			assert_memory_equal(&m, &w, sizeof(double));
		}
		assert_memory_equal(&(double){ tile_max(x, N) }, &want, sizeof(double));
		for (int i = 0; i < N; i++)
			p[i] = q[i] = fabs(wide(&r));
		tile_unmask(x, p, N);
		for (int i = 0; i < N; i++)
			if (x[i] == -INFINITY)
				q[i] = 0;
		assert_memory_equal(p, q, sizeof(p));
		tile_div(p, N, 3.0000000000000004);
		for (int i = 0; i < N; i++)
			q[i] = q[i] / 3.0000000000000004;
		assert_memory_equal(p, q, sizeof(p));
	}
	/* -0 first, then +0: the plain loop keeps -0 */
	x[0] = -INFINITY;
	x[1] = -0.0;
	x[2] = 0.0;
	for (int i = 3; i < 16; i++)
		x[i] = -1;
	assert_true(signbit(tile_max(x, 16)));
	x[1] = 0.0;
	x[9] = -0.0;
	assert_false(signbit(tile_max(x, 16)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tile_qk),
		cmocka_unit_test(test_tile_i8),
		cmocka_unit_test(test_tile_pv),
		cmocka_unit_test(test_tile_fused),
		cmocka_unit_test(test_tile_dequant),
		cmocka_unit_test(test_tile_kt),
		cmocka_unit_test(test_exp_n),
		cmocka_unit_test(test_tile_softmax_loops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
