/*
 * test_testutil.c - the scratch directories of testutil.h, which every
 * test that writes files stands on: a fresh empty directory under the
 * tag asked for; removal of everything under it, with a link removed
 * and never followed (a link to a directory outside keeps that
 * directory's files, a link to "." does not loop); a path that
 * tu_scratch_new did not make refused, so a wrong pointer removes
 * nothing; and the cmocka fixture pair.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "testutil.h"

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void scratch_is_fresh_and_named(void **state)
{
	char a[64], b[64], small[16];
	DIR *d;
	int n = 0;

	(void)state;
	assert_non_null(tu_scratch_new(a, sizeof(a), "tu"));
	assert_non_null(tu_scratch_new(b, sizeof(b), "tu"));
	assert_string_not_equal(a, b);
	assert_int_equal(strncmp(a, "/tmp/fragsim-tu-", 16), 0);
	assert_int_equal(strlen(a), strlen("/tmp/fragsim-tu-XXXXXX"));
	d = opendir(a);
	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	assert_int_equal(n, 2);		/* . and .. */
	/* a buffer too small for the name: refused, not truncated */
	assert_null(tu_scratch_new(small, sizeof(small), "tu"));
	assert_int_equal(tu_scratch_free(a), 0);
	assert_int_equal(tu_scratch_free(b), 0);
	assert_false(exists(a));
	assert_false(exists(b));
}

static void free_removes_all_and_follows_no_link(void **state)
{
	char dir[64], keep[64], p[256];

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "tu"));
	assert_non_null(tu_scratch_new(keep, sizeof(keep), "tu-keep"));
	snprintf(p, sizeof(p), "%s/precious", keep);
	assert_int_equal(tu_put(p, "not to be removed\n"), 0);
	/* nested directories, files, a link out, a loop, an odd name */
	snprintf(p, sizeof(p), "%s/a", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/a/b", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/a/b/f.txt", dir);
	assert_int_equal(tu_put(p, "x"), 0);
	snprintf(p, sizeof(p), "%s/a/out", dir);
	assert_int_equal(symlink(keep, p), 0);
	snprintf(p, sizeof(p), "%s/self", dir);
	assert_int_equal(symlink(".", p), 0);
	snprintf(p, sizeof(p), "%s/it's $(x) ;", dir);
	assert_int_equal(tu_put(p, "y"), 0);
	assert_int_equal(tu_scratch_free(dir), 0);
	assert_false(exists(dir));
	snprintf(p, sizeof(p), "%s/precious", keep);
	assert_true(exists(p));
	assert_int_equal(tu_scratch_free(keep), 0);
	/* a path that is gone already: nothing left, so 0 */
	assert_int_equal(tu_rmtree(dir), 0);
}

static void free_refuses_what_it_did_not_make(void **state)
{
	char dir[64], p[128];

	(void)state;
	assert_int_equal(tu_scratch_free("/"), -1);
	assert_int_equal(tu_scratch_free("/tmp"), -1);
	assert_int_equal(tu_scratch_free("relative/fragsim-x"), -1);
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "tu"));
	/* inside a scratch name, but climbing out of it */
	snprintf(p, sizeof(p), "%s/../..", dir);
	assert_int_equal(tu_scratch_free(p), -1);
	assert_true(exists(dir));
	assert_int_equal(tu_scratch_free(dir), 0);
}

static int setup(void **state)
{
	return tu_scratch_setup(state, "tu", "x.txt");
}

static void fixture_gives_a_scratch_per_test(void **state)
{
	struct tu_scratch *t = *state;
	char p[160];

	snprintf(p, sizeof(p), "%s/x.txt", t->dir);
	assert_string_equal(t->path, p);
	assert_false(exists(t->path));
	assert_int_equal(tu_put(t->path, "left for the teardown"), 0);
	snprintf(p, sizeof(p), "%s/sub", t->dir);
	assert_int_equal(mkdir(p, 0700), 0);
}

static void teardown_removes_it(void **state)
{
	char dir[64];
	void *s = NULL;

	(void)state;
	assert_int_equal(tu_scratch_setup(&s, "tu", "y"), 0);
	strcpy(dir, ((struct tu_scratch *)s)->dir);
	assert_int_equal(tu_put(((struct tu_scratch *)s)->path, "y"), 0);
	assert_int_equal(tu_scratch_teardown(&s), 0);
	assert_false(exists(dir));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scratch_is_fresh_and_named),
		cmocka_unit_test(free_removes_all_and_follows_no_link),
		cmocka_unit_test(free_refuses_what_it_did_not_make),
		cmocka_unit_test_setup_teardown(fixture_gives_a_scratch_per_test, setup,
						tu_scratch_teardown),
		cmocka_unit_test(teardown_removes_it),
	};

	return cmocka_run_group_tests_name("testutil", tests, NULL, NULL);
}
