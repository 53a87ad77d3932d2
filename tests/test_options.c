/*
 * test_options.c - the option-table parser (cli/options.c) on tables
 * written here, and the help it renders: every value type, `--x=V`,
 * `--`, values that start with '-', each kind of bad value, and -h. The
 * expected help text is written out by hand from the layout options.c's
 * header draws. The error texts themselves are pinned through the
 * binary in test_cli.c (numeric_options_reject_garbage).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli/options.h"
#include "../sim/common/fs.h"

struct t_args {
	const char *str, *color, *m;
	long n;
	double tol;
	int flag;
};

#define OPT_ARGS struct t_args
static const char *const colors[] = { "red", "green", "blue", NULL };
static const char *const ab[] = { "A", "B", NULL };

static const struct opt t_opts[] = {
	OPT_ARG("<x>", "a thing"),
	OPT_STRING("--str", str, "<s>", "any text"),
	OPT_CHOICE("--color", color, NULL, colors, "a colour", .def = "red"),
	OPT_CHOICE("--m", m, NULL, ab, "A or B, any case", .flags = OPT_ICASE),
	OPT_INT("--n", n, "<n>", 1, 10, "a count\nof things"),
	OPT_NUMBER("--tol", tol, "<abs>", 0.0, "a tolerance"),
	OPT_FLAG("--flag", flag, "on or off"),
	OPT_END(),
};
#undef OPT_ARGS

static const char *const t_synopsis[] = { "t <x>... [--str <s>]", " [--n <n>]", NULL };

static const struct opt_cmd t_cmd = {
	.name = "t",
	.synopsis = t_synopsis,
	.opts = t_opts,
	.about = "About t.",
	.exit = "0 ok,\n2 bad usage",
};

/* opt_parse on the words (the first is the command's), with stdout and
 * stderr silenced: help and errors print, and the test only asserts on
 * what comes back. */
static int parse(struct t_args *a, int *rc, const char *first, ...)
{
	char *words[32];
	va_list ap;
	int argc = 0, out = dup(1), err = dup(2), devnull = open("/dev/null", O_WRONLY), n;
	const char *w;

	va_start(ap, first);
	for (w = first; w && argc < 31; w = va_arg(ap, const char *))
		words[argc++] = (char *)w;	/* opt_parse moves words, never writes them */
	va_end(ap);
	words[argc] = NULL;
	fflush(stdout);
	dup2(devnull, 1);
	dup2(devnull, 2);
	n = opt_parse(&t_cmd, a, argc, words, rc);
	fflush(stdout);
	fflush(stderr);
	dup2(out, 1);
	dup2(err, 2);
	close(out);
	close(err);
	close(devnull);
	return n;
}

static void values_of_every_type(void **state)
{
	struct t_args a = { .color = "red" };
	int rc = -7;
	int n = parse(&a, &rc, "t", "a", "--str", "x y", "--n=7", "b", "--tol", "0.5",
		      "--flag", "--color", "green", "--m", "b", NULL);

	(void)state;
	assert_int_equal(n, 2);
	assert_int_equal(rc, FS_OK);
	assert_string_equal(a.str, "x y");
	assert_int_equal(a.n, 7);
	assert_true(a.tol == 0.5);
	assert_int_equal(a.flag, 1);
	assert_string_equal(a.color, "green");
	assert_string_equal(a.m, "b");
}

/* The positionals come back in order at the front of argv. */
static void positionals_in_order(void **state)
{
	struct t_args a = { 0 };
	char w[][8] = { "t", "one", "--flag", "two", "--", "--str", "-", "-x" };
	char *argv[] = { w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], NULL };
	int rc, n = opt_parse(&t_cmd, &a, 8, argv, &rc);

	(void)state;
	assert_int_equal(n, 5);
	assert_string_equal(argv[0], "one");
	assert_string_equal(argv[1], "two");
	/* after `--`, options are words */
	assert_string_equal(argv[2], "--str");
	assert_string_equal(argv[3], "-");
	assert_string_equal(argv[4], "-x");
	assert_null(a.str);
	assert_int_equal(a.flag, 1);
}

/* A value may start with '-'; the last of two values wins. */
static void dash_values_and_repeats(void **state)
{
	struct t_args a = { 0 };
	int rc;

	(void)state;
	assert_int_equal(parse(&a, &rc, "t", "--str", "-x", NULL), 0);
	assert_string_equal(a.str, "-x");
	assert_int_equal(parse(&a, &rc, "t", "--n", "3", "--n", "4", NULL), 0);
	assert_int_equal(a.n, 4);
	assert_int_equal(parse(&a, &rc, "t", "--str=", NULL), 0);
	assert_string_equal(a.str, "");
	assert_int_equal(parse(&a, &rc, "t", "--str=a=b", NULL), 0);
	assert_string_equal(a.str, "a=b");
}

/* Each bad argument is exit 2 and leaves the value as it was. */
static void bad_arguments(void **state)
{
	static const char *const bad[][3] = {
		{ "--bogus", NULL },		/* unknown */
		{ "--st", "x" },		/* no prefixes */
		{ "-n", "3" },
		{ "--str", NULL },		/* missing value */
		{ "--n", "2x" }, { "--n", "11" }, { "--n", "0" }, { "--n", "+3" },
		{ "--n", " 3" }, { "--n", "" }, { "--n", "99999999999999999999" },
		{ "--tol", "nan" }, { "--tol", "inf" }, { "--tol", "1e999" },
		{ "--tol", "0x10" }, { "--tol", "-1" }, { "--tol", " 1" }, { "--tol", "1x" },
		{ "--color", "purple" }, { "--color", "RED" }, { "--color", "" },
		{ "--m", "c" }, { "--flag=1", NULL },
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(bad); i++) {
		struct t_args a = { .str = "keep", .color = "red", .n = 5, .tol = 9 };
		int rc = -7, n = parse(&a, &rc, "t", "x", bad[i][0], bad[i][1], NULL);

		if (n != -1 || rc != FS_EINPUT)
			fail_msg("'%s %s': n %d, rc %d", bad[i][0], bad[i][1] ? bad[i][1] : "", n, rc);
		assert_string_equal(a.str, "keep");
		assert_string_equal(a.color, "red");
		assert_int_equal(a.n, 5);
		assert_true(a.tol == 9);
	}
}

/* The edges the parser must take. */
static void good_edges(void **state)
{
	struct t_args a = { 0 };
	int rc;

	(void)state;
	assert_int_equal(parse(&a, &rc, "t", "--n", "1", "--tol", "0", NULL), 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(parse(&a, &rc, "t", "--n", "10", "--tol", ".25", NULL), 0);
	assert_int_equal(a.n, 10);
	assert_true(a.tol == 0.25);
	assert_int_equal(parse(&a, &rc, "t", "--tol", "1e3", "--m", "A", NULL), 0);
	assert_true(a.tol == 1000);
	assert_string_equal(a.m, "A");
}

/* -h anywhere before `--` is help, exit 0, even beside a bad option;
 * after `--` it is a word. */
static void help_anywhere(void **state)
{
	struct t_args a = { 0 };
	int rc = -7;

	(void)state;
	assert_int_equal(parse(&a, &rc, "t", "x", "--bogus", "-h", NULL), -1);
	assert_int_equal(rc, FS_OK);
	rc = -7;
	assert_int_equal(parse(&a, &rc, "t", "--str", "--help", NULL), -1);
	assert_int_equal(rc, FS_OK);
	assert_int_equal(parse(&a, &rc, "t", "--", "-h", NULL), 1);
	assert_int_equal(rc, FS_OK);
}

/* The help, written by hand: left column as wide as the widest row
 * ("--color red|green|blue", 22), help lines under each other, the
 * default after the last line, later exit lines under the first. */
static void help_text(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	opt_help(f, &t_cmd);
	fclose(f);
	assert_string_equal(buf,
		"usage: fragsim t <x>... [--str <s>]\n"
		"                 [--n <n>]\n"
		"\n"
		"  <x>                     a thing\n"
		"  --str <s>               any text\n"
		"  --color red|green|blue  a colour  [default: red]\n"
		"  --m A|B                 A or B, any case\n"
		"  --n <n>                 a count\n"
		"                          of things\n"
		"  --tol <abs>             a tolerance\n"
		"  --flag                  on or off\n"
		"\n"
		"About t.\n"
		"\n"
		"exit status: 0 ok,\n"
		"             2 bad usage\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(values_of_every_type),
		cmocka_unit_test(positionals_in_order),
		cmocka_unit_test(dash_values_and_repeats),
		cmocka_unit_test(bad_arguments),
		cmocka_unit_test(good_edges),
		cmocka_unit_test(help_anywhere),
		cmocka_unit_test(help_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
