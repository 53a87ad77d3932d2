/*
 * test_dot.c - ref/dot.c against the plain loop it stands for: int8 dot
 * products at the int8 extremes (-128 included, which the quantizer
 * never makes). The double sums are ref/tile.c's, held to their plain
 * loops by tests/test_ref_tile.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dot_i8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
