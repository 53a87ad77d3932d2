/*
 * test_errors.c - errors keep their kind (sim/common/fs.h): out of memory, a
 * limit and bad input are three results with three texts, exiting 3, 2
 * and 2 (fs_rc_exit); and no allocation failure anywhere in a run, a
 * load or a diff crashes, hangs, gives a wrong answer or loses a diff
 * hypothesis.
 *
 * The failing allocator. This binary alone is linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup (the
 * Makefile's one line for it), so each such call in the library's
 * objects and in this file reaches __wrap_* below; armed with N, the
 * N-th call from then on returns NULL, once. Why --wrap: the library is
 * untouched (no fs_malloc threaded through its 130 call sites, nothing
 * a build of fragsim carries), nothing is preloaded at run time, and
 * the counting is the linker's, so no call site can be missed by hand.
 * libyaml, libgomp and libc's own stdio are shared libraries: their
 * allocations are not counted (a failure inside libyaml comes back as
 * a parse error, which is not what this tests).
 *
 * The counter and the armed index are file-scope state: a wrapper of
 * malloc has no caller to be handed a struct by. They are read and
 * bumped atomically: the emulation and the reference allocate inside
 * OpenMP threads.
 *
 * The loops: fail allocation 1, 2, 3, ... of a whole run until a run
 * makes fewer allocations than N (then nothing failed, and its answer
 * must be the unfailed one). Each failed run must return FS_ENOMEM
 * with "out of memory: " in its text, or FS_OK with the same verdict
 * and the same bytes (a failure some code can route around, e.g. a
 * table it can do without). Expected verdicts and bytes come from the
 * same run with nothing failing, not from a formula.
 */
#include <fcntl.h>
#include <omp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../cli/cmds.h"
#include "../lib/diffcase.h"
#include "../lib/casefile.h"
#include "../lib/dump.h"
#include "../lib/profile.h"
#include "../lib/runcase.h"
#include "testutil.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);

static long alloc_count;	/* allocations since arm() */
static long alloc_fail_at;	/* 0: none fails; N: the N-th fails */

static int alloc_fails(void)
{
	long n = __atomic_add_fetch(&alloc_count, 1, __ATOMIC_SEQ_CST);

	return n == __atomic_load_n(&alloc_fail_at, __ATOMIC_SEQ_CST);
}

void *__wrap_malloc(size_t n)
{
	return alloc_fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return alloc_fails() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return alloc_fails() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return alloc_fails() ? NULL : __real_strdup(s);
}

/* Count from 0 again; fail the n-th allocation (0: none). */
static void arm(long n)
{
	__atomic_store_n(&alloc_fail_at, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&alloc_count, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&alloc_fail_at, n, __ATOMIC_SEQ_CST);
}

/* Stop failing; returns the allocations made since arm(). */
static long disarm(void)
{
	__atomic_store_n(&alloc_fail_at, 0, __ATOMIC_SEQ_CST);
	return __atomic_load_n(&alloc_count, __ATOMIC_SEQ_CST);
}

#define RUN_CASE FRAGSIM_SRC "/cases/qwen35-27b/decode-1.yaml"
/* 6 decode units, split-K: the emulation splits segments over threads */
#define SPLIT_CASE FRAGSIM_SRC "/cases/edge/head-dim-80.yaml"
#define DIFF_DIR FRAGSIM_SRC "/tests/data/dumps/c-columns"

/* The mapping, from the issue: 0, 1, 2, 2 (budget), 3, 3 (memory). */
static void exit_codes_by_kind(void **state)
{
	(void)state;
	assert_int_equal(fs_rc_exit(FS_OK), 0);
	assert_int_equal(fs_rc_exit(FS_MISMATCH), 1);
	assert_int_equal(fs_rc_exit(FS_EINPUT), 2);
	assert_int_equal(fs_rc_exit(FS_EBUDGET), 2);
	assert_int_equal(fs_rc_exit(FS_EINTERNAL), 3);
	assert_int_equal(fs_rc_exit(FS_ENOMEM), 3);
	assert_int_equal(fs_rc_exit(77), 3);	/* unknown: never looks like success */
	assert_int_not_equal(FS_ENOMEM, FS_EINTERNAL);
	assert_int_not_equal(FS_EBUDGET, FS_EINPUT);
}

/* The texts, by hand: "out of memory: <what>, N bytes" and
 * "<what> needs N, over the limit of M (<how>)". */
static void kind_texts(void **state)
{
	struct fs_err err = { 0 };

	(void)state;
	assert_int_equal(fs_nomem(&err, "the scores", 4096), FS_ENOMEM);
	assert_string_equal(err.msg, "out of memory: the scores, 4096 bytes");
	assert_int_equal(err.rc, FS_ENOMEM);
	assert_int_equal(fs_budget(&err, "a.yaml", "the case", 3.0 * (1 << 20) + 50000,
				   1 << 20, "a cap; shrink it"), FS_EBUDGET);
	assert_string_equal(err.msg, "the case needs 3.0 MiB, over the limit of 1.0 MiB "
			    "(a cap; shrink it)");
	assert_string_equal(err.file, "a.yaml");
	assert_int_equal(fs_err_rc(&err, FS_EINPUT), FS_EBUDGET);
	fs_budget(&err, NULL, "the file", 1048577, 1048576, "a cap");
	assert_string_equal(err.msg, "the file needs 1048577 bytes, over the limit of "
			    "1048576 bytes (a cap)");
	assert_int_equal(fs_err_rc(NULL, FS_EINPUT), FS_EINPUT);
}

/* One failed outcome: FS_ENOMEM, said as out of memory. */
static void assert_nomem(long n, enum fs_rc rc, const struct fs_err *err)
{
	if (rc != FS_ENOMEM || !strstr(err->msg, "out of memory: ") ||
	    fs_rc_exit(rc) != 3)
		fail_msg("allocation %ld failed: rc %d, '%s' (want FS_ENOMEM, "
			 "'out of memory: ...')", n, (int)rc, err->msg);
}

/*
 * Loads alone, every allocation failed in turn: a case with a block table
 * (each sequence's block list is allocated, deep in the parse) and a
 * builtin profile. FS_ENOMEM or FS_OK, never another kind (the parse's
 * parents pass failures up as FS_EINPUT; the kind must survive them).
 */
static void loads_survive_every_failed_allocation(void **state)
{
	static const char *const cases[] = {
		FRAGSIM_SRC "/cases/qwen35-27b/prefill-multi-seq-table.yaml",
		RUN_CASE,
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(cases); i++) {
		struct fs_case c;
		struct fs_err err = { 0 };
		long total, n;

		arm(0);
		assert_int_equal(case_load_file(cases[i], &c, &err), FS_OK);
		total = disarm();
		case_free(&c);
		for (n = 1; n <= total; n++) {
			enum fs_rc rc;

			memset(&err, 0, sizeof(err));
			arm(n);
			rc = case_load_file(cases[i], &c, &err);
			disarm();
			if (rc == FS_OK)
				case_free(&c);
			else
				assert_nomem(n, rc, &err);
		}
	}
	for (int i = 0; i < profile_builtin_count(); i++) {
		const char *name = profile_builtin_name(i);
		struct fs_err err = { 0 };
		struct lanemap *lm;
		long total, n;

		arm(0);
		lm = profile_builtin(name, &err);
		total = disarm();
		assert_non_null(lm);
		lanemap_free(lm);
		for (n = 1; n <= total; n++) {
			memset(&err, 0, sizeof(err));
			arm(n);
			lm = profile_builtin(name, &err);
			disarm();
			if (lm)
				lanemap_free(lm);
			else
				assert_nomem(n, fs_err_rc(&err, FS_EINPUT), &err);
		}
	}
}

/* Load and run a case; *out gets a copy of the emulated out. */
static enum fs_rc run_case(const char *path, struct fs_err *err,
			   enum fs_rc *verdict, float **out, size_t *nout)
{
	struct runcase r;
	enum fs_rc rc = runcase_load(path, &r, err);

	if (!rc)
		rc = runcase_exec(&r, err);
	if (!rc) {
		*verdict = runcase_status(&r);
		*nout = (size_t)r.sim.S * r.sim.T * r.sim.Hq * r.sim.D;
		*out = __real_malloc(*nout * sizeof(float) + 1);
		memcpy(*out, r.sim.out, *nout * sizeof(float));
	}
	runcase_free(&r);
	return rc;
}

/*
 * Every allocation of loading and running case path fails in turn, on a
 * team of two threads: a thread that cannot allocate its scratch while
 * the other can must not leave the other waiting at a loop's barrier
 * (it did: the run hung for ever).
 */
static void run_loop(const char *path)
{
	struct fs_err err = { 0 };
	enum fs_rc want_v, v;
	float *want, *got;
	size_t nwant, ngot;
	long n, total, nomem = 0;

	omp_set_num_threads(2);
	arm(0);
	assert_int_equal(run_case(path, &err, &want_v, &want, &nwant), FS_OK);
	total = disarm();
	assert_int_equal(want_v, FS_OK);
	assert_true(total > 20);
	for (n = 1; n <= total + 1; n++) {
		enum fs_rc rc;

		memset(&err, 0, sizeof(err));
		got = NULL;
		arm(n);
		rc = run_case(path, &err, &v, &got, &ngot);
		if (disarm() < n) {	/* nothing failed: the plain answer */
			assert_int_equal(rc, FS_OK);
		}
		if (rc == FS_OK) {
			assert_int_equal(v, want_v);
			assert_int_equal(ngot, nwant);
			assert_memory_equal(got, want, nwant * sizeof(float));
			free(got);
		} else {
			assert_nomem(n, rc, &err);
			nomem++;
		}
	}
	free(want);
	/* most allocations are needed: failing them must say so */
	assert_true(nomem > total / 2);
}

static void run_survives_every_failed_allocation(void **state)
{
	(void)state;
	run_loop(RUN_CASE);	/* the units over the threads (run_units) */
}

static void split_run_survives_every_failed_allocation(void **state)
{
	(void)state;
	run_loop(SPLIT_CASE);	/* one unit's segments over the threads */
}

/* Run cmd(argv) in this process with stdout and stderr to files; returns
 * the exit status main would give, *out and *err what they got. */
static int cmd_in_process(int (*cmd)(int, char **), int argc, char **argv,
			  long fail_at, char **out, char **err)
{
	char po[] = "/tmp/fragsim-test-err-outXXXXXX", pe[] = "/tmp/fragsim-test-err-errXXXXXX";
	int fo = mkstemp(po), fe = mkstemp(pe), so, se, rc;

	fflush(stdout);
	fflush(stderr);
	so = dup(1), se = dup(2);
	dup2(fo, 1), dup2(fe, 2);
	arm(fail_at);
	rc = fs_rc_exit(cmd(argc, argv));
	disarm();
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1), dup2(se, 2);
	close(so), close(se), close(fo), close(fe);
	*out = tu_slurp(po);
	*err = tu_slurp(pe);
	unlink(po), unlink(pe);
	return rc;
}

/* The verdict line of a run's report (timings differ run to run). */
static const char *verdict_line(const char *out)
{
	const char *v = strstr(out, "verdict ");

	return v ? v : "";
}

static void cmd_run_out_of_memory_exits_3(void **state)
{
	char *argv[] = { "run", RUN_CASE, NULL };
	char *out0, *err0, *out, *err;
	long total, n;

	(void)state;
	omp_set_num_threads(2);
	assert_int_equal(cmd_in_process(cmd_run, 2, argv, 0, &out0, &err0), 0);
	total = __atomic_load_n(&alloc_count, __ATOMIC_SEQ_CST);
	assert_true(total > 20);
	for (n = 1; n <= total + 1; n++) {
		int st = cmd_in_process(cmd_run, 2, argv, n, &out, &err);

		if (st == 0) {
			assert_string_equal(verdict_line(out), verdict_line(out0));
		} else if (st != 3 || strncmp(err, "fragsim: error: ", 16) ||
			   !strstr(err, "out of memory: ")) {
			fail_msg("allocation %ld failed: exit %d, stderr '%s'", n, st, err);
		}
		free(out), free(err);
	}
	free(out0), free(err0);
}

/*
 * run --out: the goldens, the manifest and the publishing, every
 * allocation from the last 10 of the run on (the earlier ones are the
 * run's, failed one by one above; each try here writes files). Exit 3
 * with the text and no output directory, or exit 0 with it whole.
 */
static void cmd_run_out_dir_out_of_memory_exits_3(void **state)
{
	char dir[256], out_dir[300];
	char *argv[] = { "run", RUN_CASE, "--out", out_dir, NULL };
	char *plain[] = { "run", RUN_CASE, NULL };
	char *out, *err;
	long before, total, n;
	struct stat st;

	(void)state;
	omp_set_num_threads(2);
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "err-out"));
	snprintf(out_dir, sizeof(out_dir), "%s/g", dir);
	assert_int_equal(cmd_in_process(cmd_run, 2, plain, 0, &out, &err), 0);
	free(out), free(err);
	before = __atomic_load_n(&alloc_count, __ATOMIC_SEQ_CST);
	assert_int_equal(cmd_in_process(cmd_run, 4, argv, 0, &out, &err), 0);
	free(out), free(err);
	total = __atomic_load_n(&alloc_count, __ATOMIC_SEQ_CST);
	assert_true(total > before);
	for (n = before - 10; n <= total + 1; n++) {
		int rc;

		tu_rmtree(out_dir);
		rc = cmd_in_process(cmd_run, 4, argv, n, &out, &err);
		if (rc == 0)
			assert_int_equal(stat(out_dir, &st), 0);
		else if (rc != 3 || !strstr(err, "out of memory: "))
			fail_msg("allocation %ld failed: exit %d, stderr '%s'", n, rc, err);
		else if (stat(out_dir, &st) == 0)
			fail_msg("allocation %ld failed: exit 3 left %s", n, out_dir);
		free(out), free(err);
	}
	assert_int_equal(tu_scratch_free(dir), 0);
}

/* check: a case that ran out of memory is exit 3 (it was 2, "could not
 * be run" like a bad case file), with the text on its line. */
static void cmd_check_out_of_memory_exits_3(void **state)
{
	char *argv[] = { "check", RUN_CASE, NULL };
	char *out, *err;
	long total, n;

	(void)state;
	omp_set_num_threads(2);
	assert_int_equal(cmd_in_process(cmd_check, 2, argv, 0, &out, &err), 0);
	free(out), free(err);
	total = __atomic_load_n(&alloc_count, __ATOMIC_SEQ_CST);
	assert_true(total > 20);
	for (n = 1; n <= total + 1; n++) {
		int st = cmd_in_process(cmd_check, 2, argv, n, &out, &err);

		if (st != 0 && (st != 3 || (!strstr(out, "out of memory: ") &&
					    !strstr(err, "out of memory: "))))
			fail_msg("allocation %ld failed: exit %d, '%s' '%s'", n, st, out, err);
		free(out), free(err);
	}
}

/* A diagnosis, in order: names and counts of every hypothesis run, the
 * not-applicable list, the not-run list. */
static void assert_same_diagnosis(const struct diff_diagnosis *a,
				  const struct diff_diagnosis *b)
{
	assert_int_equal(a->n, b->n);
	for (int i = 0; i < a->n; i++) {
		assert_string_equal(a->h[i].name, b->h[i].name);
		assert_int_equal(a->h[i].matched, b->h[i].matched);
	}
	assert_int_equal(a->n_skipped, b->n_skipped);
	assert_string_equal(a->skipped, b->skipped);
	assert_int_equal(a->n_notrun, b->n_notrun);
}

/*
 * diff: the case's emulation and the dump are loaded once, unarmed; then
 * each allocation of the diagnosis (one emulation per hypothesis) fails
 * in turn, every one of them, on one thread: the team's paths are the
 * run loops' above, and one thread keeps 500-odd diagnoses to seconds
 * on a loaded machine (a team of two spends most of it in barriers). A hypothesis that could not allocate must stop the
 * diagnosis with FS_ENOMEM naming it, never be left out of a ranking
 * that then looks complete (before: attn's failed output calloc was
 * FS_EINPUT, which the diagnosis took for "not applicable").
 */
static void diff_never_drops_a_hypothesis(void **state)
{
	struct diff_opts o = { 0.0, 8 };
	struct diff_diagnosis *want = calloc(1, sizeof(*want));
	struct diff_diagnosis *dg = calloc(1, sizeof(*dg));
	struct fs_err err = { 0 };
	struct dump d = { 0 };
	struct runcase r;
	long total, n, nomem = 0, named = 0;

	(void)state;
	assert_non_null(want);
	assert_non_null(dg);
	omp_set_num_threads(1);
	assert_int_equal(runcase_load(DIFF_DIR "/case.yaml", &r, &err), FS_OK);
	assert_int_equal(runcase_inputs(&r, &err), FS_OK);
	assert_int_equal(runcase_emulate(&r, &r.c, NULL, &r.sim, &err), FS_OK);
	r.have_sim = 1;
	assert_int_equal(dump_load(DIFF_DIR, &r, &d, &err), FS_OK);
	arm(0);
	assert_int_equal(diffcase_diagnose(&r, &d, &o, want, &err), FS_OK);
	total = disarm();
	assert_true(want->n > 10);
	for (n = 1; n <= total + 1; n++) {
		enum fs_rc rc;

		memset(&err, 0, sizeof(err));
		arm(n);
		rc = diffcase_diagnose(&r, &d, &o, dg, &err);
		if (disarm() < n)
			assert_int_equal(rc, FS_OK);
		if (rc == FS_OK) {
			assert_same_diagnosis(dg, want);
			continue;
		}
		assert_nomem(n, rc, &err);
		nomem++;
		named += !strncmp(err.msg, "hypothesis ", 11);
	}
	/* every emulation allocates: most failures fall inside one */
	assert_true(nomem > total / 2);
	assert_true(named > nomem / 2);
	dump_free(&d);
	runcase_free(&r);
	free(want);
	free(dg);
}

/*
 * The whole of `fragsim diff` in process, loads included (case, builtin
 * profile, every .npy of the dump), on one thread as above: each of the
 * first 200 allocations (the loads, the first emulations) fails, then
 * every 5th (the diagnosis, failed one by one above). Exit 3 with
 * "out of memory: " on stderr, or the unfailed diagnosis line.
 */
static void cmd_diff_out_of_memory_exits_3(void **state)
{
	char *argv[] = { "diff", DIFF_DIR "/case.yaml", "--dump", DIFF_DIR, NULL };
	char *out0, *err0, *out, *err;
	long total;

	(void)state;
	omp_set_num_threads(1);
	assert_int_equal(cmd_in_process(cmd_diff, 4, argv, 0, &out0, &err0), 1);
	total = __atomic_load_n(&alloc_count, __ATOMIC_SEQ_CST);
	assert_true(total > 400);
	for (long n = 1; n <= total + 1; n += n < 200 ? 1 : 5) {
		int st = cmd_in_process(cmd_diff, 4, argv, n, &out, &err);

		if (st == 1) {
			assert_string_equal(strstr(out, "diagnosis:"), strstr(out0, "diagnosis:"));
		} else if (st != 3 || strncmp(err, "fragsim: error: ", 16) ||
			   !strstr(err, "out of memory: ")) {
			fail_msg("allocation %ld failed: exit %d, stderr '%s'", n, st, err);
		}
		free(out), free(err);
	}
	free(out0), free(err0);
}

/*
 * The three kinds side by side, from the real binary: over a limit (the
 * inputs' 16 GiB cap: K and V alone are 2 x 1048576 x 8 x 256 x 4 B =
 * 16 GiB, the whole 20.1 GiB), bad input (an unknown key), and out of
 * memory (in process, above). Each exit is its kind's; each text says
 * its own kind and not the others'.
 */
static void three_kinds_three_texts(void **state)
{
	char *over = tu_write_temp(".yaml",
		"fragsim: 1\nname: cap\nmodel: {q_heads: 8, kv_heads: 8, head_dim: 256}\n"
		"sequences:\n  - {context: 1048576}\n");
	char *bad = tu_write_temp(".yaml", "fragsim: 1\nname: bad\nlanes: 3\n");
	char *argv[] = { "run", RUN_CASE, NULL };
	struct run_result rb, ri;
	char *out, *err;
	int st;

	(void)state;
	rb = tu_run("run %s", over);
	ri = tu_run("run %s", bad);
	st = cmd_in_process(cmd_run, 2, argv, 3, &out, &err);
	assert_int_equal(rb.status, 2);
	assert_non_null(strstr(rb.err, ": the case needs 20.1 GiB, over the limit of 16.0 GiB ("));
	assert_int_equal(ri.status, 2);
	assert_non_null(strstr(ri.err, ":3:1: unknown key 'lanes'"));
	assert_int_equal(st, 3);
	assert_non_null(strstr(err, "out of memory: "));
	assert_null(strstr(rb.err, "out of memory"));
	assert_null(strstr(ri.err, "out of memory"));
	assert_null(strstr(ri.err, "over the limit"));
	assert_null(strstr(err, "over the limit"));
	assert_null(strstr(rb.err, "unknown key"));
	assert_null(strstr(err, "unknown key"));
	tu_free(&rb);
	tu_free(&ri);
	free(out), free(err);
	unlink(over), unlink(bad);
	free(over), free(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exit_codes_by_kind),
		cmocka_unit_test(kind_texts),
		cmocka_unit_test(loads_survive_every_failed_allocation),
		cmocka_unit_test(run_survives_every_failed_allocation),
		cmocka_unit_test(split_run_survives_every_failed_allocation),
		cmocka_unit_test(cmd_run_out_of_memory_exits_3),
		cmocka_unit_test(cmd_run_out_dir_out_of_memory_exits_3),
		cmocka_unit_test(cmd_check_out_of_memory_exits_3),
		cmocka_unit_test(diff_never_drops_a_hypothesis),
		cmocka_unit_test(cmd_diff_out_of_memory_exits_3),
		cmocka_unit_test(three_kinds_three_texts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
