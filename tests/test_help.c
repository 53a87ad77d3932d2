/*
 * test_help.c - `fragsim help`, the man page and the bash completion,
 * through the binary: the options each command's --help names are in
 * its man section and its completion, the page renders, and the
 * completion function completes (tests/completion.sh, driven by bash as
 * a shell would). Expected names are written by hand, not read from
 * the tables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "testutil.h"

static const char *const commands[] = {
	"run", "check", "diff", "show", "route", "lanemap", "mutate", "probe", "help",
};

/* `fragsim help CMD` is `fragsim CMD --help`, byte for byte. */
static void help_command_is_dash_dash_help(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		struct run_result a = tu_run("help %s", commands[i]);
		struct run_result b = tu_run("%s --help", commands[i]);

		assert_int_equal(a.status, 0);
		assert_int_equal(b.status, 0);
		assert_string_equal(a.out, b.out);
		if (strncmp(a.out, "usage: fragsim ", 15))
			fail_msg("help %s: '%s'", commands[i], a.out);
		tu_free(&a);
		tu_free(&b);
	}
}

static void help_usage_errors(void **state)
{
	static const char *const bad[][2] = {
		{ "help nope", "unknown command 'nope'" },
		{ "help --completion zsh", "--completion must be bash, not 'zsh'" },
		{ "help --man --completion bash", "give one command, --man or --completion" },
		{ "help run check", "give one command" },
		{ "help --bogus", "unknown option '--bogus'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct run_result r = tu_run("%s", bad[i][0]);

		if (r.status != 2 || r.out[0] || !strstr(r.err, bad[i][1]) ||
		    strncmp(r.err, "fragsim: error: ", 16))
			fail_msg("'%s': status %d, stderr '%s'", bad[i][0], r.status, r.err);
		tu_free(&r);
	}
}

/* The man page names every command, has the sections man-pages(7)
 * asks for, and says what each exit status means. */
static void man_page_sections(void **state)
{
	static const char *const want[] = {
		".TH FRAGSIM 1 ", ".SH NAME\n", ".SH SYNOPSIS\n", ".SH DESCRIPTION\n",
		".SH COMMANDS\n", ".SH \"EXIT STATUS\"\n", ".SH FILES\n", ".SH \"SEE ALSO\"\n",
		".TP\n.B 0\n", ".TP\n.B 1\n", ".TP\n.B 2\n", ".TP\n.B 3\n",
	};
	struct run_result r = tu_run("help --man");
	char ss[64];

	(void)state;
	assert_int_equal(r.status, 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(r.out, want[i]))
			fail_msg("man page: no '%s'", want[i]);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		snprintf(ss, sizeof(ss), ".SS \"fragsim %s\"\n", commands[i]);
		if (!strstr(r.out, ss))
			fail_msg("man page: no '%s'", ss);
	}
	tu_free(&r);
}

/* tests/completion.sh: every option of every --help in the man page and
 * the completion, man -l renders it, bash completes. */
static void man_and_completion_cover_help(void **state)
{
	(void)state;
	if (tu_sh("command -v bash >/dev/null 2>&1")) {
		printf("skipped: bash not installed\n");
		return;
	}
	assert_int_equal(tu_sh("bash '%s/tests/completion.sh' '%s'", FRAGSIM_SRC, FRAGSIM_BIN), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(help_command_is_dash_dash_help),
		cmocka_unit_test(help_usage_errors),
		cmocka_unit_test(man_page_sections),
		cmocka_unit_test(man_and_completion_cover_help),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
