/*
 * test_readfile.c - what fragsim will open (lib/readfile.c) and which
 * case files a directory stands for (lib/caselist.c): FIFOs and
 * devices are refused without blocking, symlink loops end, each file is
 * listed once, and nothing is skipped without an error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sys/stat.h>

#include "../lib/caselist.h"
#include "../lib/readfile.h"
#include "testutil.h"

/* A fresh empty scratch directory; free() the name. */
static char *temp_dir(void)
{
	char *d = malloc(64);

	assert_non_null(tu_scratch_new(d, 64, "readfile"));
	return d;
}

static void put(const char *dir, const char *name, const char *text)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_int_equal(tu_put(p, text), 0);
}

static void rm_rf(const char *dir)
{
	assert_int_equal(tu_scratch_free(dir), 0);
}

/* fopen on a FIFO with no writer waited forever; now it is refused at
 * once (the alarm turns a hang into a failed test). */
static void fifo_and_devices_are_refused(void **state)
{
	char *d = temp_dir(), p[1024], *buf;
	size_t len;
	struct fs_err err;

	(void)state;
	snprintf(p, sizeof(p), "%s/case.yaml", d);
	assert_int_equal(mkfifo(p, 0600), 0);
	alarm(10);
	assert_int_equal(readfile(p, 1 << 20, &buf, &len, &err), FS_EINPUT);
	alarm(0);
	assert_string_equal(err.file, p);
	assert_non_null(strstr(err.msg, "not a regular file (a FIFO)"));
	assert_null(buf);
	assert_int_equal(readfile("/dev/null", 1 << 20, &buf, &len, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "not a regular file (a device)"));
	assert_int_equal(readfile(d, 1 << 20, &buf, &len, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "not a regular file (a directory)"));
	put(d, "x.yaml", "abc");
	snprintf(p, sizeof(p), "%s/x.yaml", d);
	assert_int_equal(readfile(p, 1 << 20, &buf, &len, &err), FS_OK);
	assert_int_equal(len, 3);
	assert_string_equal(buf, "abc");
	free(buf);
	assert_int_equal(readfile(p, 2, &buf, &len, &err), FS_EBUDGET);
	assert_non_null(strstr(err.msg, "the file needs 3 bytes, over the limit of 2 bytes ("));
	rm_rf(d);
	free(d);
}

/*
 * A symlink to '.' was followed until the depth cap: one case listed
 * 17 times; with two such links 2^17 paths. Each file is listed once.
 */
static void links_to_dot_list_each_case_once(void **state)
{
	char *d = temp_dir(), p[1024], q[1024];
	struct caselist l = { 0 };

	(void)state;
	put(d, "a.yaml", "x");
	snprintf(p, sizeof(p), "%s/self", d);
	assert_int_equal(symlink(".", p), 0);
	snprintf(p, sizeof(p), "%s/again", d);
	assert_int_equal(symlink(".", p), 0);
	snprintf(p, sizeof(p), "%s/sub", d);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/sub/up", d);
	assert_int_equal(symlink("..", p), 0);
	snprintf(p, sizeof(p), "%s/b.yml", d);
	snprintf(q, sizeof(q), "%s/a.yaml", d);
	assert_int_equal(symlink(q, p), 0);	/* a second name for a.yaml */
	alarm(10);
	assert_int_equal(caselist_add(&l, d), 0);
	alarm(0);
	caselist_sort(&l);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.p[0], q);
	/* The same file named twice on the command line: once. */
	assert_int_equal(caselist_add(&l, q), 0);
	assert_int_equal(l.n, 1);
	caselist_free(&l);
	rm_rf(d);
	free(d);
}

/* The same through `fragsim check`: the case runs once, not 17 times. */
static void check_runs_a_linked_case_once(void **state)
{
	char *d = temp_dir();
	struct run_result r;

	(void)state;
	assert_int_equal(tu_sh("cd '%s' && cp cases/edge/constant-rows.yaml "
			       "'%s/' && ln -s . '%s/self' && ln -s . '%s/again'",
			       FRAGSIM_SRC, d, d, d), 0);
	r = tu_run("check '%s'", d);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "1 passed, 0 failed"));
	tu_free(&r);
	rm_rf(d);
	free(d);
}

/* A case 20 directories down was skipped (depth cap 16), "0 passed". */
static void deep_cases_are_found(void **state)
{
	char *d = temp_dir(), p[2048];
	struct caselist l = { 0 };
	size_t at = (size_t)snprintf(p, sizeof(p), "%s", d);

	(void)state;
	for (int i = 0; i < 40; i++) {
		at += (size_t)snprintf(p + at, sizeof(p) - at, "/d%d", i);
		assert_int_equal(mkdir(p, 0700), 0);
	}
	put(p, "deep.yaml", "x");
	assert_int_equal(caselist_add(&l, d), 0);
	assert_int_equal(l.n, 1);
	assert_non_null(strstr(l.p[0], "/d39/deep.yaml"));
	caselist_free(&l);
	rm_rf(d);
	free(d);
}

/* What cannot be looked at is an error that names it, not a skip. */
static void unreadable_entries_are_errors(void **state)
{
	char *d = temp_dir(), p[1024];
	struct caselist l = { 0 };

	(void)state;
	put(d, "a.yaml", "x");
	snprintf(p, sizeof(p), "%s/gone.yaml", d);
	assert_int_equal(symlink("nowhere.yaml", p), 0);
	assert_int_equal(caselist_add(&l, d), -2);
	assert_non_null(strstr(l.why, "/gone.yaml: No such file or directory"));
	caselist_free(&l);
	assert_int_equal(caselist_add(&l, "/nonexistent/x"), -2);
	assert_string_equal(l.why, "/nonexistent/x: No such file or directory");
	caselist_free(&l);
	/* A dangling link that is not a case is nothing to run. */
	assert_int_equal(unlink(p), 0);
	snprintf(p, sizeof(p), "%s/notes.txt", d);
	assert_int_equal(symlink("nowhere.txt", p), 0);
	assert_int_equal(caselist_add(&l, d), 0);
	assert_int_equal(l.n, 1);
	caselist_free(&l);
	rm_rf(d);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fifo_and_devices_are_refused),
		cmocka_unit_test(links_to_dot_list_each_case_once),
		cmocka_unit_test(check_runs_a_linked_case_once),
		cmocka_unit_test(deep_cases_are_found),
		cmocka_unit_test(unreadable_entries_are_errors),
	};

	return cmocka_run_group_tests_name("readfile", tests, NULL, NULL);
}
