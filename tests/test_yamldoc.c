/*
 * test_yamldoc.c - the YAML loader's bounds and tree checks
 * (lib/yamldoc.c): nesting, anchors and aliases are refused fast and at
 * the right character, repeated keys and NUL characters are refused in
 * every mapping and scalar (manifests are read through it as JSON), and
 * the typed accessors read numbers by one documented rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <float.h>
#include <time.h>

#include "../lib/yamldoc.h"
#include "testutil.h"

/* Load must fail at line:col with a message containing want. */
static void expect_refused(const char *text, size_t len, int line, int col,
			   const char *want)
{
	struct ydoc d;
	struct fs_err err = { 0 };
	enum fs_rc rc = ydoc_load(&d, text, len, "t.yaml", &err);

	if (rc == FS_OK) {
		ydoc_free(&d);
		fail_msg("loaded, expected '%s'", want);
	}
	if (rc != FS_EINPUT || strcmp(err.file, "t.yaml") || err.line != line ||
	    err.col != col || !strstr(err.msg, want))
		fail_msg("got rc %d %s:%d:%d: %s; want %d:%d: ...%s...", rc,
			 err.file, err.line, err.col, err.msg, line, col, want);
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* "x: " then n opens then n closes: the mapping is level 1, the i-th
 * open (from 1) is level 1 + i, at column 3 + i. */
static char *nested(size_t n, char open, char close, size_t *len)
{
	char *s = malloc(2 * n + 8);

	memcpy(s, "x: ", 3);
	memset(s + 3, open, n);
	memset(s + 3 + n, close, n);
	s[3 + 2 * n] = '\n';
	*len = 4 + 2 * n;
	return s;
}

/*
 * libyaml's scanner costs O(depth) per token: 80000 levels took 17 s
 * and 500000 (under 1 MiB) over 120 s before this check. Both are now
 * refused at the 65th level, well under a second.
 */
static void deep_nesting_is_refused_fast(void **state)
{
	static const size_t levels[] = { 80000, 500000 };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		size_t len;
		char *s = nested(levels[i], '[', ']', &len);
		double t0 = seconds();

		expect_refused(s, len, 1, 3 + YDOC_MAX_DEPTH,
			       "nested deeper than 64 levels");
		assert_true(seconds() - t0 < 1.0);
		free(s);
		s = nested(levels[i], '{', '}', &len);
		t0 = seconds();
		expect_refused(s, len, 1, 3 + YDOC_MAX_DEPTH,
			       "nested deeper than 64 levels");
		assert_true(seconds() - t0 < 1.0);
		free(s);
	}
}

static void block_nesting_is_refused(void **state)
{
	char s[2 * 100 + 4];
	size_t n = 0;

	(void)state;
	/* "- - - ... x": block sequences, two bytes a level. */
	for (int i = 0; i < 100; i++) {
		s[n++] = '-';
		s[n++] = ' ';
	}
	s[n++] = 'x';
	s[n++] = '\n';
	expect_refused(s, n, 1, 1 + 2 * YDOC_MAX_DEPTH, "nested deeper than 64");
}

static void exactly_the_limit_loads(void **state)
{
	size_t len;
	char *s = nested(YDOC_MAX_DEPTH - 1, '[', ']', &len);	/* + the top map */
	struct ydoc d;
	struct fs_err err;

	(void)state;
	assert_int_equal(ydoc_load(&d, s, len, "t.yaml", &err), FS_OK);
	ydoc_free(&d);
	free(s);
}

static void aliases_are_bounded(void **state)
{
	char s[4096];
	size_t n;

	(void)state;
	/* Ten aliases a level, eleven levels: 10^11 nodes if expanded. */
	n = (size_t)snprintf(s, sizeof(s), "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (int i = 1; i < 12; i++) {
		n += (size_t)snprintf(s + n, sizeof(s) - n, "a%d: &a%d [", i, i);
		for (int k = 0; k < 10; k++)
			n += (size_t)snprintf(s + n, sizeof(s) - n, "%s*a%d",
					      k ? ", " : "", i - 1);
		n += (size_t)snprintf(s + n, sizeof(s) - n, "]\n");
	}
	/*
	 * By hand: a0 stands for 11 nodes, a_i for 1 + 10 a_(i-1), so a5 for
	 * 1111111. Inside a6's list the count is 1 + 1111111 per alias:
	 * the 4th (4444445 > 4194304) is at column 9 + 3 * 5 + 1 = 25.
	 */
	expect_refused(s, n, 7, 25, "more than 4194304 nodes with aliases expanded");
	expect_refused("a: &x [1, *x]\n", 14, 1, 11,
		       "alias '*x' is inside the node it names");
	expect_refused("a: *x\n", 6, 1, 4, "alias '*x' names no anchor before it");
	/* A few aliases are fine. */
	{
		struct ydoc d;
		struct fs_err err;
		const char *t = "a: &x [1, 2]\nb: *x\n";

		assert_int_equal(ydoc_load(&d, t, strlen(t), "t.yaml", &err), FS_OK);
		ydoc_free(&d);
	}
}

/*
 * A plan manifest is JSON read as YAML. A repeated key used to load,
 * and ydoc_get took the first while Python's json takes the last.
 */
static void repeated_keys_anywhere_are_refused(void **state)
{
	const char *json = "{\n  \"fragsim_probe\": 1,\n  \"waves\": 2,\n"
			   "  \"isa\": \"gfx936\",\n  \"waves\": 3\n}\n";
	const char *nested_map = "files:\n  - {name: a, sha256: x, name: b}\n";

	(void)state;
	expect_refused(json, strlen(json), 5, 3,
		       "key 'waves' given twice (first at line 3)");
	/* "  - {" is 5, "name: a, " 9, "sha256: x, " 11: column 26. */
	expect_refused(nested_map, strlen(nested_map), 2, 26,
		       "files[0]: key 'name' given twice (first at line 2)");
}

/* "e\0 + 99" used to read as "e": C strings end at the NUL. */
static void nul_in_a_scalar_is_refused(void **state)
{
	const char *v = "c:\n  col: \"lane / 16 + 4 * e\\0 + 99\"\n";
	const char *k = "\"co\\0l\": 1\n";

	(void)state;
	expect_refused(v, strlen(v), 2, 8, "c.col: a NUL character (\\0) inside a value");
	expect_refused(k, strlen(k), 1, 1, "a NUL character (\\0) inside a key");
}

/* ydoc_int / ydoc_double on the one scalar of "v: <text>". */
static enum fs_rc read_int(const char *text, int64_t min, int64_t max,
			   int64_t *out, struct fs_err *err)
{
	char s[128];
	struct ydoc d;
	enum fs_rc rc;

	snprintf(s, sizeof(s), "v: %s\n", text);
	assert_int_equal(ydoc_load(&d, s, strlen(s), "t.yaml", err), FS_OK);
	rc = ydoc_int(&d, ydoc_get(&d, ydoc_root(&d), "v"), "v", min, max, out, err);
	ydoc_free(&d);
	return rc;
}

static enum fs_rc read_double(const char *text, double *out, struct fs_err *err)
{
	char s[128];
	struct ydoc d;
	enum fs_rc rc;

	snprintf(s, sizeof(s), "v: %s\n", text);
	assert_int_equal(ydoc_load(&d, s, strlen(s), "t.yaml", err), FS_OK);
	rc = ydoc_double(&d, ydoc_get(&d, ydoc_root(&d), "v"), "v", -DBL_MAX,
			 DBL_MAX, out, err);
	ydoc_free(&d);
	return rc;
}

static void expect_int_error(const char *text, const char *want)
{
	struct fs_err err = { 0 };
	int64_t v;

	if (read_int(text, 0, 1000, &v, &err) != FS_EINPUT ||
	    !strstr(err.msg, want))
		fail_msg("'%s': got '%s', want ...%s...", text, err.msg, want);
	assert_int_equal(err.line, 1);
	assert_int_equal(err.col, 4);
}

/*
 * One rule: decimal. 010 was octal 8 (strtoll base 0) while 08 was an
 * error; YAML 1.2 says 10. Refusing it leaves nothing ambiguous.
 */
static void integers_are_decimal(void **state)
{
	struct fs_err err;
	int64_t v;

	(void)state;
	assert_int_equal(read_int("10", 0, 1000, &v, &err), FS_OK);
	assert_int_equal(v, 10);
	assert_int_equal(read_int("0", 0, 1000, &v, &err), FS_OK);
	assert_int_equal(v, 0);
	assert_int_equal(read_int("+7", 0, 1000, &v, &err), FS_OK);
	assert_int_equal(v, 7);
	expect_int_error("010", "'010': leading zeros are not allowed");
	expect_int_error("08", "'08': leading zeros are not allowed");
	expect_int_error("0x10", "'0x10': integers are decimal");
	expect_int_error("0o10", "'0o10': integers are decimal");
	expect_int_error("1e3", "expected an integer, found '1e3'");
	expect_int_error("\"10\"", "expected an integer, found '10'");
	expect_int_error("1001", "v: must be between 0 and 1000, not 1001");
	/* Past int64 it is still a range error with the bounds. */
	expect_int_error("99999999999999999999",
			 "v: must be between 0 and 1000, not 99999999999999999999");
	expect_int_error("-99999999999999999999",
			 "v: must be between 0 and 1000, not -99999999999999999999");
}

static void numbers_are_decimal_and_finite(void **state)
{
	struct fs_err err = { 0 };
	double v;

	(void)state;
	assert_int_equal(read_double("0.125", &v, &err), FS_OK);
	assert_true(v == 0.125);
	assert_int_equal(read_double(".5e1", &v, &err), FS_OK);
	assert_true(v == 5.0);
	/* A subnormal is a valid double: read, not "expected a number". */
	assert_int_equal(read_double("1e-310", &v, &err), FS_OK);
	assert_true(v > 0 && v < DBL_MIN);
	assert_int_equal(read_double("0e-999", &v, &err), FS_OK);
	assert_true(v == 0);
	assert_int_equal(read_double("1e-400", &v, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "v: 1e-400 is too small for a double"));
	assert_int_equal(read_double("-1e400", &v, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "v: -1e400 out of range"));
	assert_int_equal(read_double("0x1p3", &v, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "expected a number, found '0x1p3'"));
	assert_int_equal(read_double("inf", &v, &err), FS_EINPUT);
	assert_int_equal(read_double("nan", &v, &err), FS_EINPUT);
	assert_int_equal(read_double("1.", &v, &err), FS_OK);
	assert_int_equal(read_double(".", &v, &err), FS_EINPUT);
	assert_int_equal(read_double("1e", &v, &err), FS_EINPUT);
}

/* Issue 21 point 14: a tab indenting a line said libyaml's "found
 * character that cannot start any token" (or "a tab character that
 * violates indentation"); it says what is wrong now, at the tab. A tab
 * where YAML allows one (before a comment, inside a quoted scalar)
 * still loads. */
static void tabs_in_indentation_are_named(void **state)
{
	static const char *const tabbed[] = {
		"a:\n\t- 1\n",
		"a:\n  b: 1\n\tc: 2\n",
	};
	static const int line[] = { 2, 3 };
	struct ydoc d;
	struct fs_err err = { 0 };

	(void)state;
	for (int i = 0; i < 2; i++)
		expect_refused(tabbed[i], strlen(tabbed[i]), line[i], 1,
			       "invalid YAML: a tab in the indentation (YAML does not allow "
			       "tabs there; indent with spaces)");
	assert_int_equal(ydoc_load(&d, "a: 1\t# c\nb: \"x\ty\"\n", 18, "t.yaml", &err), FS_OK);
	ydoc_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(deep_nesting_is_refused_fast),
		cmocka_unit_test(block_nesting_is_refused),
		cmocka_unit_test(exactly_the_limit_loads),
		cmocka_unit_test(aliases_are_bounded),
		cmocka_unit_test(repeated_keys_anywhere_are_refused),
		cmocka_unit_test(nul_in_a_scalar_is_refused),
		cmocka_unit_test(integers_are_decimal),
		cmocka_unit_test(numbers_are_decimal_and_finite),
		cmocka_unit_test(tabs_in_indentation_are_named),
	};

	return cmocka_run_group_tests_name("yamldoc", tests, NULL, NULL);
}
