/*
 * test_junit.c - lib/junit.c: the XML a suite's outcome becomes, written
 * out by hand from the JUnit schema's elements (testsuites, testsuite,
 * testcase, failure, error) and XML 1.0's escaping rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>

#include "testutil.h"
#include "../lib/junit.h"

/* Write cases to a scratch file through junit_write; its text. */
static char *write_cases(const struct junit_case *c, size_t n, time_t started,
			 double seconds)
{
	char dir[64], path[128];
	struct outdir_file f = { 0 };
	struct fs_err err = { 0 };
	char *text;

	assert_non_null(tu_scratch_new(dir, sizeof(dir), "junit"));
	snprintf(path, sizeof(path), "%s/j.xml", dir);
	assert_int_equal(outdir_file_open(&f, path, &err), FS_OK);
	if (junit_write(&f, c, n, started, seconds, &err))
		fail_msg("junit_write: %s", err.msg);
	text = tu_slurp(path);
	tu_scratch_free(dir);
	return text;
}

static void pass_fail_error(void **state)
{
	const struct junit_case c[] = {
		{ "cases/edge/one-token.yaml", "edge-one-token", JUNIT_PASS, "", NULL, 0.25, NULL },
		{ "./x/y/fail.yaml", "fail", JUNIT_FAIL, "acc 3 mismatches", "acc[0,1] got 2 want 3", 1.5, NULL },
		{ "bad.yaml", "", JUNIT_ERROR, "bad.yaml:3:12: not a list", NULL, 0.001, NULL },
	};
	char *xml = write_cases(c, 3, 0, 2.0);

	(void)state;
	assert_string_equal(xml,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuites name=\"fragsim\" tests=\"3\" failures=\"1\" errors=\"1\" skipped=\"0\" time=\"2.000\">\n"
		"<testsuite name=\"fragsim\" tests=\"3\" failures=\"1\" errors=\"1\" skipped=\"0\" time=\"2.000\" timestamp=\"1970-01-01T00:00:00\">\n"
		"  <testcase classname=\"cases.edge\" name=\"edge-one-token\" file=\"cases/edge/one-token.yaml\" time=\"0.250\"/>\n"
		"  <testcase classname=\"x.y\" name=\"fail\" file=\"./x/y/fail.yaml\" time=\"1.500\">\n"
		"    <failure message=\"acc 3 mismatches\" type=\"mismatch\">acc[0,1] got 2 want 3</failure>\n"
		"  </testcase>\n"
		"  <testcase classname=\".\" name=\"bad.yaml\" file=\"bad.yaml\" time=\"0.001\">\n"
		"    <error message=\"bad.yaml:3:12: not a list\" type=\"input\">bad.yaml:3:12: not a list</error>\n"
		"  </testcase>\n"
		"</testsuite>\n</testsuites>\n");
	free(xml);
}

/* The five specials escaped; a control character dropped; a lone
 * continuation byte, an overlong '/' (C0 AF) and a surrogate (ED A0 80)
 * each become U+FFFD; valid UTF-8 (e-acute, C3 A9) kept. */
static void escapes(void **state)
{
	const struct junit_case c[] = {
		{ "/abs/d/<a>&'\".yaml", "n\x01" "a\xc3\xa9\x80\xc0\xaf\xed\xa0\x80", JUNIT_PASS,
		  "", NULL, 0, NULL },
	};
	char *xml = write_cases(c, 1, 86400, 0);

	(void)state;
	if (!strstr(xml, "<testcase classname=\"abs.d\" name=\"na\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd"
			 "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\" "
			 "file=\"/abs/d/&lt;a&gt;&amp;&apos;&quot;.yaml\" time=\"0.000\"/>\n"))
		fail_msg("%s", xml);
	assert_non_null(strstr(xml, "timestamp=\"1970-01-02T00:00:00\""));
	free(xml);
}

/* Names in dir that contain part, counted (a leftover temporary). */
static int count_names(const char *dir, const char *part)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += strstr(de->d_name, part) != NULL;
	closedir(d);
	return n;
}

/*
 * Issue 21 point 13: ^C during `check --junit j.xml` left j.xml.tmp.PID
 * behind on every run (the file was opened under its temporary name
 * before the suite and never removed). Now nothing is created until the
 * suite is done: SIGINT in the middle of a suite (qwen35-27b, about 5 s
 * here) kills check by SIGINT, and the directory holds nothing.
 */
static void sigint_during_the_suite_leaves_nothing(void **state)
{
	char dir[64], junit[128];
	pid_t pid;
	int st;

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "junit"));
	snprintf(junit, sizeof(junit), "%s/j.xml", dir);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null < 0 || dup2(null, 1) < 0 || chdir(FRAGSIM_SRC) != 0)
			_exit(120);
		execl(FRAGSIM_BIN, "fragsim", "check", "cases/qwen35-27b", "--junit",
		      junit, (char *)NULL);
		_exit(121);
	}
	usleep(500 * 1000);
	assert_int_equal(kill(pid, SIGINT), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));	/* still running when ^C came */
	assert_int_equal(WTERMSIG(st), SIGINT);
	assert_int_equal(count_names(dir, "j.xml"), 0);
	assert_int_equal(tu_scratch_free(dir), 0);
}

/*
 * ^C while the JUnit file itself is being written (the test hook raises
 * SIGINT once it is written and synced, before the rename): the
 * temporary is removed, j.xml not created, and check dies by SIGINT.
 * An older j.xml stays as it was.
 */
static void sigint_during_the_write_removes_the_temporary(void **state)
{
	char dir[64], junit[128];
	struct run_result r;
	char *text;

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "junit"));
	snprintf(junit, sizeof(junit), "%s/j.xml", dir);
	r = tu_run("check cases/edge/one-token.yaml --junit %s", junit);
	assert_int_equal(r.status, 0);
	tu_free(&r);

	setenv("FRAGSIM_OUTDIR_CRASH", "file-written:INT", 1);
	r = tu_run("check cases/edge/one-token.yaml cases/edge/zero-q-rows.yaml "
		   "--junit %s", junit);
	unsetenv("FRAGSIM_OUTDIR_CRASH");
	assert_int_equal(r.status, 128 + SIGINT);
	tu_free(&r);
	assert_int_equal(count_names(dir, ".tmp."), 0);
	text = tu_slurp(junit);
	assert_non_null(text);
	assert_non_null(strstr(text, " tests=\"1\""));	/* the older one */
	free(text);

	/* --report, the same way, by SIGTERM */
	setenv("FRAGSIM_OUTDIR_CRASH", "file-written:TERM", 1);
	r = tu_run("check cases/edge/zero-q-rows.yaml --report %s/r.html", dir);
	unsetenv("FRAGSIM_OUTDIR_CRASH");
	assert_int_equal(r.status, 128 + SIGTERM);
	tu_free(&r);
	assert_int_equal(count_names(dir, "r.html"), 0);
	assert_int_equal(tu_scratch_free(dir), 0);
}

/*
 * Issue 21 point 1 through check: `--junit FIFO` with a reader at the
 * other end (cat) gets the XML through the pipe, and the FIFO stays a
 * FIFO. Before, the file was renamed over the FIFO, and the reader
 * waited for a writer that never came (here cut short by timeout).
 */
static void junit_into_a_fifo(void **state)
{
	char dir[64], cmd[1024];
	struct stat st;
	char *got;

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "junit"));
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && mkfifo %s/p && { timeout 20 cat %s/p > %s/got & } && "
		 "'%s' check cases/edge/one-token.yaml --junit %s/p > /dev/null; "
		 "rc=$?; wait; exit $rc", FRAGSIM_SRC, dir, dir, dir, FRAGSIM_BIN, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/p", dir);
	assert_int_equal(lstat(cmd, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	snprintf(cmd, sizeof(cmd), "%s/got", dir);
	got = tu_slurp(cmd);
	assert_non_null(got);
	assert_non_null(strstr(got, "<testcase classname=\"cases.edge\" name=\"edge-one-token\""));
	assert_non_null(strstr(got, "</testsuites>\n"));
	free(got);
	assert_int_equal(tu_scratch_free(dir), 0);
}

/* Issue 21 point 8: a failure carries its type (a threshold is not a
 * mismatch); an error stays "input" whatever type it is given. */
static void failure_types(void **state)
{
	const struct junit_case c[] = {
		{ "t.yaml", "t", JUNIT_FAIL, "out cosine", NULL, 0, "threshold" },
		{ "u.yaml", "u", JUNIT_FAIL, "unseen", NULL, 0, "uncaught" },
		{ "e.yaml", "e", JUNIT_ERROR, "bad", NULL, 0, "threshold" },
	};
	char *xml = write_cases(c, 3, 0, 0);

	(void)state;
	assert_non_null(strstr(xml, "<failure message=\"out cosine\" type=\"threshold\">"));
	assert_non_null(strstr(xml, "<failure message=\"unseen\" type=\"uncaught\">"));
	assert_non_null(strstr(xml, "<error message=\"bad\" type=\"input\">"));
	free(xml);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pass_fail_error),
		cmocka_unit_test(escapes),
		cmocka_unit_test(sigint_during_the_suite_leaves_nothing),
		cmocka_unit_test(sigint_during_the_write_removes_the_temporary),
		cmocka_unit_test(junit_into_a_fifo),
		cmocka_unit_test(failure_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
