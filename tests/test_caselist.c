/*
 * test_caselist.c - lib/caselist.c's sharding: which cases shard K of N
 * runs (worked by hand: K, K+N, K+2N, ... of the sorted list), and the
 * strict "K/N" reader.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "testutil.h"
#include "../lib/caselist.h"

/* A list of n names "c00".."c<n-1>", as caselist_add would leave it. */
static void make_list(struct caselist *l, int n)
{
	memset(l, 0, sizeof(*l));
	l->p = calloc((size_t)n + 1, sizeof(*l->p));
	assert_non_null(l->p);
	for (int i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "c%02d", i);
		l->p[i] = strdup(name);
	}
	l->n = l->cap = (size_t)n;
}

static void shards_partition_the_list(void **state)
{
	static const char *const want[][4] = {
		{ "c00", "c03", "c06", "c09" },	/* 1/3 */
		{ "c01", "c04", "c07", NULL },	/* 2/3 */
		{ "c02", "c05", "c08", NULL },	/* 3/3 */
	};

	(void)state;
	for (int k = 1; k <= 3; k++) {
		struct caselist l;
		size_t i;

		make_list(&l, 10);
		caselist_shard(&l, k, 3);
		for (i = 0; i < 4 && want[k - 1][i]; i++) {
			assert_true(i < l.n);
			assert_string_equal(l.p[i], want[k - 1][i]);
		}
		assert_int_equal(l.n, i);
		caselist_free(&l);
	}
}

/* 1/1 keeps all; a shard past the end is empty. */
static void shard_edges(void **state)
{
	struct caselist l;

	(void)state;
	make_list(&l, 3);
	caselist_shard(&l, 1, 1);
	assert_int_equal(l.n, 3);
	caselist_free(&l);
	make_list(&l, 3);
	caselist_shard(&l, 5, 7);
	assert_int_equal(l.n, 0);
	caselist_free(&l);
}

static void shard_parse(void **state)
{
	static const char *const bad[] = {
		"", "1", "/2", "1/", "0/2", "3/2", "1/0", "+1/2", "-1/2", " 1/2", "1/2 ",
		"1/2junk", "1/2/3", "a/b", "1/99999999999999999999", "1/2147483648",
	};
	long k = -5, n = -5;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!caselist_shard_parse(bad[i], &k, &n))
			fail_msg("'%s' was taken as %ld/%ld", bad[i], k, n);
		assert_int_equal(k, -5);
		assert_int_equal(n, -5);
	}
	assert_int_equal(caselist_shard_parse("2/3", &k, &n), 0);
	assert_int_equal(k, 2);
	assert_int_equal(n, 3);
	assert_int_equal(caselist_shard_parse("2147483647/2147483647", &k, &n), 0);
	assert_int_equal(k, 2147483647);
	assert_int_equal(caselist_shard_parse("007/010", &k, &n), 0);
	assert_int_equal(k, 7);
	assert_int_equal(n, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shards_partition_the_list),
		cmocka_unit_test(shard_edges),
		cmocka_unit_test(shard_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
