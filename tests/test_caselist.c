/*
 * test_caselist.c - lib/caselist.c's sharding: which cases shard K of N
 * runs (worked by hand: K, K+N, K+2N, ... of the sorted list), and the
 * strict "K/N" reader; and that two cases of one suite never share a
 * name (caselist_unique_names, through `fragsim check`).
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

/*
 * Issue 21 (16): two case files with one `name:` ran as two JUnit test
 * cases alike in name (and in classname, in one directory), and two
 * --json entries CI could not tell apart. check now refuses the suite
 * before any case runs, naming both files at the line of their name, and
 * across shards: shard 2 of 2 holds only b.yaml here, a.yaml is in 1.
 */
static void duplicate_names_are_refused(void **state)
{
	char dir[64], path[512], other[64];
	struct run_result r;

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "dupname"));
	assert_non_null(tu_scratch_new(other, sizeof(other), "dupname2"));
	snprintf(path, sizeof(path), "%s/a.yaml", dir);
	assert_int_equal(tu_put(path, "fragsim: 1\nname: dup\nsequences:\n  - {context: 40}\n"), 0);
	snprintf(path, sizeof(path), "%s/b.yaml", dir);
	assert_int_equal(tu_put(path, "fragsim: 1\n# the same name, quoted\nname: \"dup\"\n"
				      "sequences:\n  - {context: 40}\n"), 0);
	snprintf(path, sizeof(path), "%s/c.yaml", dir);
	assert_int_equal(tu_put(path, "fragsim: 1\nname: other\nsequences:\n  - {context: 40}\n"), 0);
	/* A file that does not parse takes no part: the run reports it. */
	snprintf(path, sizeof(path), "%s/d.yaml", dir);
	assert_int_equal(tu_put(path, "fragsim: 1\nname: [dup\n"), 0);

	for (int shard = 0; shard <= 2; shard++) {
		char want[1024], opt[32] = "";

		if (shard)
			snprintf(opt, sizeof(opt), "--shard %d/2", shard);
		r = tu_run("check %s %s --junit %s/j.xml", dir, opt, dir);
		assert_int_equal(r.status, 2);
		assert_string_equal(r.out, "");
		snprintf(want, sizeof(want),
			 "fragsim: error: %s/b.yaml:3:7: name: 'dup' is also the name of "
			 "%s/a.yaml:2:7; the cases of a suite need names of their own "
			 "(JUnit and --json tell cases apart by name)\n", dir, dir);
		assert_string_equal(r.err, want);
		tu_free(&r);
		snprintf(path, sizeof(path), "%s/j.xml", dir);
		assert_int_not_equal(access(path, F_OK), 0);
	}

	/* The same across two paths given; order is the sorted list's. */
	snprintf(path, sizeof(path), "%s/x.yaml", other);
	assert_int_equal(tu_put(path, "fragsim: 1\nname: other\nsequences:\n  - {context: 40}\n"), 0);
	r = tu_run("check %s/x.yaml %s/c.yaml", other, dir);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "name: 'other' is also the name of "));
	tu_free(&r);

	/* Names of their own: the suite runs (d.yaml is an error there). */
	snprintf(path, sizeof(path), "%s/b.yaml", dir);
	assert_int_equal(unlink(path), 0);
	r = tu_run("check %s", dir);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "2 passed, 0 failed, 1 could not be run\n"));
	tu_free(&r);
	assert_int_equal(tu_scratch_free(dir), 0);
	assert_int_equal(tu_scratch_free(other), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shards_partition_the_list),
		cmocka_unit_test(shard_edges),
		cmocka_unit_test(shard_parse),
		cmocka_unit_test(duplicate_names_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
