/*
 * test_gen.c - the counter-based generator, by its properties, not by
 * pinned values (pinning gen's own output would only test gen against
 * itself): determinism, element independence (any index alone equals the
 * same index in a loop, in any order), uniform range and moments, the
 * normal's mean, variance, bound and symmetry, bit balance, avalanche,
 * and that seeds and streams give unrelated numbers.
 *
 * Statistical bounds are 5 sigma of the estimator, so a correct
 * generator fails them about once in 3.5 million runs; the seeds are
 * fixed, so a run that passes always passes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/common/gen.h"

#define N_DRAWS 1000000

static void deterministic(void **state)
{
	(void)state;
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t a = gen_u64(7, GEN_K, i * 977);
		double u = gen_uniform(7, GEN_K, i * 977);
		double n = gen_normal(7, GEN_Q, i);

		assert_true(a == gen_u64(7, GEN_K, i * 977));
		assert_true(memcmp(&u, &(double){ gen_uniform(7, GEN_K, i * 977) },
				   sizeof(u)) == 0);
		assert_true(memcmp(&n, &(double){ gen_normal(7, GEN_Q, i) },
				   sizeof(n)) == 0);
	}
}

/* Index i computed alone equals index i computed forwards or backwards. */
static void element_independence(void **state)
{
	enum { N = 4096 };
	uint64_t *fwd = malloc(N * sizeof(*fwd));
	double *nf = malloc(N * sizeof(*nf));

	(void)state;
	for (int i = 0; i < N; i++) {
		fwd[i] = gen_u64(11, GEN_V, (uint64_t)i);
		nf[i] = gen_normal(11, GEN_V, (uint64_t)i);
	}
	for (int i = N - 1; i >= 0; i--) {
		assert_true(gen_u64(11, GEN_V, (uint64_t)i) == fwd[i]);
		assert_true(gen_normal(11, GEN_V, (uint64_t)i) == nf[i]);
	}
	/* a far element alone, then again after other draws */
	{
		uint64_t far = gen_u64(11, GEN_V, 1ull << 40);

		for (int i = 0; i < 100; i++)
			(void)gen_u64(11, GEN_V, (uint64_t)i);
		assert_true(gen_u64(11, GEN_V, 1ull << 40) == far);
	}
	free(fwd);
	free(nf);
}

static void uniform_range_and_moments(void **state)
{
	double sum = 0, sq = 0, lag = 0, prev = 0.5, mean, var, cov;
	long below_quarter = 0;

	(void)state;
	for (uint64_t i = 0; i < N_DRAWS; i++) {
		double u = gen_uniform(3, GEN_Q, i);

		assert_true(u >= 0.0 && u < 1.0);
		/* a multiple of 2^-53 */
		assert_true(u * 0x1p53 == floor(u * 0x1p53));
		sum += u;
		sq += u * u;
		lag += (u - 0.5) * (prev - 0.5);
		prev = u;
		below_quarter += u < 0.25;
	}
	mean = sum / N_DRAWS;
	var = sq / N_DRAWS - mean * mean;
	cov = lag / N_DRAWS;
	/* sd of the mean: sqrt(1/12 / n); of the variance: sqrt(1/180 / n) */
	assert_true(fabs(mean - 0.5) < 5 * sqrt(1.0 / 12 / N_DRAWS));
	assert_true(fabs(var - 1.0 / 12) < 5 * sqrt(1.0 / 180 / N_DRAWS));
	/* lag-1 covariance: sd 1/12 / sqrt(n) */
	assert_true(fabs(cov) < 5 * (1.0 / 12) / sqrt(N_DRAWS));
	assert_true(labs(below_quarter - N_DRAWS / 4) <
		    5 * sqrt(N_DRAWS * 0.25 * 0.75));
}

static void normal_moments_and_shape(void **state)
{
	const double bound = 2 * sqrt(3.0);
	double sum = 0, sq = 0, quad = 0, mean, var, kurt;
	long pos = 0, within1 = 0;

	(void)state;
	for (uint64_t i = 0; i < N_DRAWS; i++) {
		double x = gen_normal(5, GEN_K, i);

		assert_true(x > -bound && x < bound);
		sum += x;
		sq += x * x;
		quad += x * x * x * x;
		pos += x > 0;
		within1 += fabs(x) < 1.0;
	}
	mean = sum / N_DRAWS;
	var = sq / N_DRAWS - mean * mean;
	kurt = quad / N_DRAWS;
	/* sd of the mean 1/sqrt(n); of the variance sqrt((m4 - 1) / n),
	 * m4 = 2.7 for Irwin-Hall n = 4 (a normal would give 3) */
	assert_true(fabs(mean) < 5 / sqrt(N_DRAWS));
	assert_true(fabs(var - 1.0) < 5 * sqrt(1.7 / N_DRAWS));
	/* sd of the fourth moment: sqrt((m8 - m4^2) / n), m8 = 55.8 */
	assert_true(fabs(kurt - 2.7) < 5 * sqrt((55.8 - 2.7 * 2.7) / N_DRAWS));
	assert_true(labs(pos - N_DRAWS / 2) < 5 * sqrt(N_DRAWS * 0.25));
	/*
	 * P(|x| < 1) for Irwin-Hall 4 scaled to unit variance: |s - 2| <
	 * 1/sqrt(3) for the sum s of 4 uniforms: 0.66928 from the piecewise
	 * quartic CDF (a normal gives 0.6827, a box 0.5774). 5 sd = 0.0024.
	 */
	assert_true(fabs((double)within1 / N_DRAWS - 0.66928) <
		    5 * sqrt(0.66928 * 0.33072 / N_DRAWS));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* No two (seed, stream, index) among a structured grid give one value. */
static void seeds_and_streams_do_not_collide(void **state)
{
	enum { SEEDS = 4, STREAMS = 6, IDX = 8192 };
	size_t n = (size_t)SEEDS * STREAMS * IDX, k = 0;
	uint64_t *all = malloc(n * sizeof(*all));

	(void)state;
	for (uint64_t s = 0; s < SEEDS; s++)
		for (uint64_t st = 0; st < STREAMS; st++)
			for (uint64_t i = 0; i < IDX; i++)
				all[k++] = gen_u64(s, st, i);
	qsort(all, n, sizeof(*all), cmp_u64);
	for (size_t i = 1; i < n; i++)
		assert_true(all[i] != all[i - 1]);
	free(all);

	/* swapped roles must not coincide */
	assert_true(gen_u64(1, 0, 0) != gen_u64(0, 1, 0));
	assert_true(gen_u64(0, 0, 1) != gen_u64(0, 1, 0));
	assert_true(gen_u64(1, 0, 0) != gen_u64(0, 0, 1));
	/* one stream is not another stream shifted: compare runs */
	for (uint64_t shift = 0; shift < 64; shift++) {
		int same = 0;

		for (uint64_t i = 0; i < 64; i++)
			same += gen_u64(9, GEN_Q, i) == gen_u64(9, GEN_K, i + shift);
		assert_int_equal(same, 0);
	}
}

/* Correlation between streams (and seeds) at the same index is ~0. */
static void streams_uncorrelated(void **state)
{
	double c1 = 0, c2 = 0;

	(void)state;
	for (uint64_t i = 0; i < N_DRAWS; i++) {
		c1 += gen_normal(1, GEN_Q, i) * gen_normal(1, GEN_K, i);
		c2 += gen_normal(1, GEN_Q, i) * gen_normal(2, GEN_Q, i);
	}
	assert_true(fabs(c1 / N_DRAWS) < 5 / sqrt(N_DRAWS));
	assert_true(fabs(c2 / N_DRAWS) < 5 / sqrt(N_DRAWS));
}

static void bit_balance_and_avalanche(void **state)
{
	enum { N = 200000 };
	long ones[64] = { 0 };
	double flips = 0;

	(void)state;
	for (uint64_t i = 0; i < N; i++) {
		uint64_t x = gen_u64(0, 0, i);

		for (int b = 0; b < 64; b++)
			ones[b] += (x >> b) & 1;
	}
	for (int b = 0; b < 64; b++)
		assert_true(labs(ones[b] - N / 2) < 5 * sqrt(N * 0.25));

	/* flipping one input bit flips half the output bits on average */
	for (uint64_t i = 0; i < 4096; i++) {
		int which = (int)(i % 3), bit = (int)((i / 3) % 64);
		uint64_t a[3] = { 100 + i, GEN_K, i * 31 }, b[3];

		memcpy(b, a, sizeof(a));
		b[which] ^= 1ull << bit;
		flips += __builtin_popcountll(gen_u64(a[0], a[1], a[2]) ^
					      gen_u64(b[0], b[1], b[2]));
	}
	flips /= 4096;
	/* sd of the mean of Binomial(64, 1/2): 4 / sqrt(4096) = 0.0625 */
	assert_true(fabs(flips - 32.0) < 5 * 0.0625);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(deterministic),
		cmocka_unit_test(element_independence),
		cmocka_unit_test(uniform_range_and_moments),
		cmocka_unit_test(normal_moments_and_shape),
		cmocka_unit_test(seeds_and_streams_do_not_collide),
		cmocka_unit_test(streams_uncorrelated),
		cmocka_unit_test(bit_balance_and_avalanche),
	};

	return cmocka_run_group_tests_name("gen", tests, NULL, NULL);
}
