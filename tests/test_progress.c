/*
 * test_progress.c - cli/progress.c: what a long run or case of check
 * says on stderr while it runs (issue 25 points 8, 9), through the
 * command line as a user sees it:
 *
 *   a pipe        one line per stage seen, the stages in order, no \r
 *   a terminal    one line redrawn with \r and cleared at the end
 *                 (a pseudo-terminal from script(1))
 *   --quiet       nothing; stdout the same bytes as without it
 *   a short run   nothing (under PROGRESS_AFTER, 2 s)
 *   JSON, JUnit   stdout and the XML hold no progress
 *   a case predicted over a minute: the note, before its emulation,
 *                 then the run is stopped (SIGPIPE once sed quits)
 *
 * FRAGSIM_PROGRESS_AFTER=0 shows progress from the start, so a run of
 * a second (decode-32768, one thread) has stages to show. What the
 * lines say is checked by their form, not their figures: the figures
 * are times of this machine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#define LONG_CASE "cases/qwen35-27b/decode-32768.yaml"
#define LONG_NAME "qwen35-27b-decode-32768"

/* by enum fs_stage, as cli/progress.c names them */
static const char *const stages[] = { "inputs", "emulation", "reference", "exact acc" };

/* The stage a line names after "fragsim: NAME: ", or -1. */
static int stage_of(const char *line)
{
	const char *p = line + strlen("fragsim: " LONG_NAME ": ");

	if (strncmp(line, "fragsim: " LONG_NAME ": ", strlen("fragsim: " LONG_NAME ": ")))
		return -1;
	for (int i = 3; i >= 0; i--)
		if (!strncmp(p, stages[i], strlen(stages[i])))
			return i;
	return -1;
}

/* tu_run with progress shown from the start (FRAGSIM_PROGRESS_AFTER=0). */
static struct run_result run_shown(const char *args)
{
	struct run_result r;

	setenv("FRAGSIM_PROGRESS_AFTER", "0", 1);
	r = tu_run("%s", args);
	unsetenv("FRAGSIM_PROGRESS_AFTER");
	return r;
}

/* stdout of a run without its time line (the one line whose figures
 * are this machine's), for comparing two runs. */
static void drop_time_line(char *out)
{
	char *t = strstr(out, "\ntime ");
	char *end;

	if (!t)
		return;
	end = strchr(t + 1, '\n');
	memmove(t, end, strlen(end) + 1);
}

/* A pipe: one line per stage, in order, each "fragsim: NAME: STAGE"
 * then " at T" (when it was printed); no \r, no escape; stdout
 * unchanged. With the threshold at 0 each stage has its line as it
 * starts: inputs, emulation, reference, exact acc (decode-32768 keeps
 * its accumulators), whatever the machine's speed. */
static void pipe_gets_a_line_per_stage(void **state)
{
	struct run_result a, q;
	int last = -1, lines = 0;

	(void)state;
	a = run_shown("run " LONG_CASE " --threads 1");
	q = tu_run("run " LONG_CASE " --threads 1 --quiet");
	assert_int_equal(a.status, 0);
	assert_int_equal(q.status, 0);
	assert_null(strchr(a.err, '\r'));
	assert_null(strchr(a.err, '\033'));
	for (char *l = a.err, *nl; *l; l = nl + 1) {
		int s;

		nl = strchr(l, '\n');
		assert_non_null(nl);
		*nl = '\0';
		s = stage_of(l);
		if (s < 0)
			fail_msg("not a progress line: '%s'", l);
		assert_int_equal(s, last + 1);	/* each stage once, in order */
		assert_non_null(strstr(l, " at "));
		last = s;
		lines++;
	}
	assert_int_equal(lines, 4);
	assert_string_equal(q.err, "");
	drop_time_line(a.out);
	drop_time_line(q.out);
	assert_string_equal(a.out, q.out);
	tu_free(&a);
	tu_free(&q);
}

/* Under PROGRESS_AFTER (2 s) a run shows nothing, on a pipe as on a
 * terminal; and --quiet nothing however long. */
static void short_run_and_quiet_show_nothing(void **state)
{
	struct run_result r = tu_run("run cases/qwen35-27b/decode-17.yaml");

	(void)state;
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	tu_free(&r);
	r = run_shown("check " LONG_CASE " --quiet");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_string_equal(r.out, LONG_NAME "(decode,S=1,ctx=32768,bs=16,shuffled,gfx936): OK\n"
			    "1 passed, 0 failed\n");
	tu_free(&r);
}

/* A typescript t: the last drawing is cleared, and no newline ends a
 * drawn line (each "\rfragsim: " is followed by another \r first). */
static void drawn_then_cleared(const char *t)
{
	const char *last = strstr(t, "\rfragsim: ");

	assert_non_null(last);
	for (const char *p = last; p; p = strstr(p + 1, "\rfragsim: "))
		last = p;
	assert_non_null(strstr(last, "\r\033[K"));
	for (const char *p = strstr(t, "\rfragsim: "); p; p = strstr(p + 1, "\rfragsim: ")) {
		const char *nl = strchr(p, '\n'), *cr = strchr(p + 1, '\r');

		assert_true(!nl || (cr && cr < nl));
	}
}

/*
 * A pseudo-terminal (script(1) gives fragsim one on stderr; stdout goes
 * to a file): the line is drawn with "\r...\033[K", redrawn in place,
 * never ended by a newline, and cleared ("\r\033[K") before the run
 * ends, so the terminal holds no progress afterwards.
 */
static void terminal_gets_one_line_redrawn(void **state)
{
	char dir[128], ts[256], out[256], *t, *o;
	struct run_result q;

	(void)state;
	if (tu_sh("command -v script >/dev/null 2>&1")) {
		fail_msg("script(1) (util-linux) is needed for the terminal test");
		return;
	}
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "progress"));
	snprintf(ts, sizeof(ts), "%s/typescript", dir);
	snprintf(out, sizeof(out), "%s/stdout", dir);
	assert_int_equal(tu_sh("cd '%s' && script -qec \"FRAGSIM_PROGRESS_AFTER=0 '%s' run "
			       LONG_CASE " --threads 1 > '%s'\" '%s' >/dev/null 2>&1",
			       FRAGSIM_SRC, FRAGSIM_BIN, out, ts), 0);
	t = tu_slurp(ts);
	o = tu_slurp(out);
	assert_non_null(t);
	assert_non_null(o);
	assert_non_null(strstr(t, "\rfragsim: " LONG_NAME ": "));
	assert_non_null(strstr(t, "\033[K"));
	drawn_then_cleared(t);
	/* stdout, a file, is what a quiet run prints */
	q = tu_run("run " LONG_CASE " --threads 1 --quiet");
	drop_time_line(o);
	drop_time_line(q.out);
	assert_string_equal(o, q.out);
	tu_free(&q);
	free(t);
	free(o);
	tu_scratch_free(dir);
}

/* check --json and --junit: the documents hold no progress (it is on
 * stderr), and stderr has its lines per case. */
static void json_and_junit_unchanged(void **state)
{
	char dir[128];
	struct run_result r;
	char *x, args[512], xml[256];

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "progress"));
	snprintf(args, sizeof(args), "check " LONG_CASE " --json --junit %s/j.xml", dir);
	r = run_shown(args);
	assert_int_equal(r.status, 0);
	assert_int_equal(strncmp(r.out, "{\n", 2), 0);
	assert_null(strstr(r.out, "fragsim: " LONG_NAME ": "));
	assert_true(stage_of(r.err) >= 0);	/* its first line: a stage of the case */
	snprintf(xml, sizeof(xml), "%s/j.xml", dir);
	x = tu_slurp(xml);
	assert_non_null(x);
	assert_null(strstr(x, "fragsim: " LONG_NAME ": "));
	assert_null(strstr(x, " left"));
	free(x);
	tu_free(&r);
	tu_scratch_free(dir);
}

/*
 * A case predicted over a minute says so before its emulation: a
 * prefill of 4096 tokens after 16384 (Qwen3.5-27B's shape), whose full
 * check takes minutes on one thread of any machine this runs on. With
 * progress from the start, sed quits at the note and the run ends at its
 * next line, a quarter second later (SIGPIPE), so the test takes seconds
 * however slow the machine (a sanitizer build).
 */
static void long_case_predicted_before_it_runs(void **state)
{
	char *p = tu_write_temp(".yaml",
		"fragsim: 1\nname: long-prefill\nmode: prefill\n"
		"model: {q_heads: 24, kv_heads: 4, head_dim: 256}\n"
		"cache: {block_size: 16, placement: shuffled, v_dtype: int8}\n"
		"sequences:\n  - {history: 16384, chunk: 4096}\n"
		"data: {seed: 2048}\ngolden: [inputs, out]\n");
	char *note, errp[64], outp[64];
	const char *want = "fragsim: note: long-prefill: predicted to take about ";
	struct run_result r;

	(void)state;
	assert_non_null(p);
	/* The note comes before the emulation, which is long by design (a
	 * minute here, many under a sanitizer): stop the run as soon as
	 * the note is there rather than wait for it. */
	snprintf(errp, sizeof(errp), "/tmp/fragsim-progress-%d.err", (int)getpid());
	snprintf(outp, sizeof(outp), "/tmp/fragsim-progress-%d.out", (int)getpid());
	assert_int_equal(tu_sh("cd '%s' && { FRAGSIM_PROGRESS_AFTER=0 '%s' run %s --threads 1 "
			       "2>%s >/dev/null & pid=$!; "
			       "while kill -0 $pid 2>/dev/null && ! grep -q '^fragsim: note: ' %s; "
			       "do sleep 0.05; done; kill $pid 2>/dev/null; wait $pid; "
			       "sed -n '/^fragsim: note: /{p;q}' %s >%s; }",
			       FRAGSIM_SRC, FRAGSIM_BIN, p, errp, errp, errp, outp), 0);
	r.out = tu_slurp(outp);
	r.err = NULL;
	unlink(errp);
	unlink(outp);
	assert_non_null(r.out);
	note = r.out;
	assert_int_equal(strncmp(note, want, strlen(want)), 0);
	assert_true(strstr(note, " min ") || strstr(note, " h "));
	assert_non_null(strstr(note, " here (emulation "));
	assert_non_null(strstr(note, ", reference "));
	assert_non_null(strstr(note, "), from the rates of a smaller case of its shape, timed "
			       "just now in "));
	assert_non_null(strstr(note, " s; --emulate-only runs the emulation alone\n"));
	tu_free(&r);
	unlink(p);
	free(p);
}

/*
 * mutate: on a pipe one line a case, "fragsim: mutate: case I of N
 * (NAME), K class(es) not caught yet, at T", I rising from 1 and K not
 * rising; on a terminal the line drawn over itself, naming the class it
 * is at, and cleared at the end; stdout the same as --quiet's, which
 * prints nothing on stderr.
 */
#define MUTATE_CASES "cases/edge/one-token.yaml cases/edge/decode-context-0.yaml"

static void mutate_says_where_it_is(void **state)
{
	struct run_result a, q;
	char dir[128], ts[256], out[256], *t;
	int lines = 0, prev_k = 1 << 30;

	(void)state;
	a = run_shown("mutate " MUTATE_CASES);
	q = tu_run("mutate " MUTATE_CASES " --quiet");
	assert_int_equal(a.status, q.status);
	assert_string_equal(q.err, "");
	assert_string_equal(a.out, q.out);
	assert_null(strchr(a.err, '\r'));
	for (char *l = a.err, *nl; *l; l = nl + 1) {
		int i, n, k, used = 0;

		nl = strchr(l, '\n');
		assert_non_null(nl);
		*nl = '\0';
		if (sscanf(l, "fragsim: mutate: case %d of %d (%*[^)]), %d class(es) not caught yet, at %n",
			   &i, &n, &k, &used) != 3 || !used)
			fail_msg("not a mutate progress line: '%s'", l);
		assert_int_equal(i, lines + 1);
		assert_int_equal(n, 2);
		assert_true(k <= prev_k);
		prev_k = k;
		lines++;
	}
	assert_true(lines >= 1);
	tu_free(&a);
	tu_free(&q);

	assert_non_null(tu_scratch_new(dir, sizeof(dir), "progress"));
	snprintf(ts, sizeof(ts), "%s/typescript", dir);
	snprintf(out, sizeof(out), "%s/stdout", dir);
	/* 200 columns: the line is cut to the terminal's width */
	tu_sh("cd '%s' && script -qec \"stty cols 200; FRAGSIM_PROGRESS_AFTER=0 '%s' mutate "
	      MUTATE_CASES " > '%s'\" '%s' >/dev/null 2>&1", FRAGSIM_SRC, FRAGSIM_BIN, out, ts);
	t = tu_slurp(ts);
	assert_non_null(t);
	assert_non_null(strstr(t, "\rfragsim: mutate: case 1 of 2, c_columns=contiguous, 51 class(es) not caught yet, edge-"));
	drawn_then_cleared(t);
	free(t);
	tu_scratch_free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pipe_gets_a_line_per_stage),
		cmocka_unit_test(short_run_and_quiet_show_nothing),
		cmocka_unit_test(terminal_gets_one_line_redrawn),
		cmocka_unit_test(json_and_junit_unchanged),
		cmocka_unit_test(long_case_predicted_before_it_runs),
		cmocka_unit_test(mutate_says_where_it_is),
	};

	return cmocka_run_group_tests_name("progress", tests, NULL, NULL);
}
