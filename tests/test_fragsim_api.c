/*
 * test_fragsim_api.c - the public API (include/fragsim.h, lib/fragsim.c)
 * used as a program would use it: this file includes nothing of fragsim
 * but the public header.
 *
 * Expected lane maps are gfx936's published formulas written out here
 * (docs/design.md 1.1, from Hygon's CK port: "lane = m + 16 * (n % 4),
 * reg = n / 4"; A[m][k] at lane m + 16*(k/8), element k % 8):
 *
 *   A  lane l, e: row l % 16,          col 8*(l/16) + e   (8 x i8)
 *   B  lane l, e: row 8*(l/16) + e,    col l % 16         (8 x i8)
 *   C  lane l, e: row l % 16,          col l/16 + 4*e     (4 x i32)
 *
 * So C[1][9] is lane 17 (c0 = 1, row 1) element 2: column 1 + 4*2.
 */
#include <math.h>
#include <omp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "../include/fragsim.h"

static void gfx936_entry(int op, int l, int e, int *row, int *col)
{
	if (op == FRAGSIM_A)
		*row = l % 16, *col = 8 * (l / 16) + e;
	else if (op == FRAGSIM_B)
		*row = 8 * (l / 16) + e, *col = l % 16;
	else
		*row = l % 16, *col = l / 16 + 4 * e;
}

static const int gfx936_elems[3] = { 8, 8, 4 };

/* Every entry of lm is the formula's; and nothing past the wave or e. */
static void assert_gfx936(const struct fragsim_lanemap *lm)
{
	struct fragsim_lanemap_info in;
	int row, col, want_row, want_col;

	fragsim_lanemap_info(lm, &in);
	assert_int_equal(in.wave, 64);
	assert_int_equal(in.m, 16), assert_int_equal(in.n, 16), assert_int_equal(in.k, 32);
	assert_true(in.valid);
	for (int op = 0; op < 3; op++) {
		assert_int_equal(in.elems[op], gfx936_elems[op]);
		for (int l = 0; l < 64; l++)
			for (int e = 0; e < gfx936_elems[op]; e++) {
				assert_int_equal(fragsim_lanemap_entry(lm, op, l, e, &row, &col), 0);
				gfx936_entry(op, l, e, &want_row, &want_col);
				assert_int_equal(row, want_row);
				assert_int_equal(col, want_col);
			}
		assert_int_equal(fragsim_lanemap_entry(lm, op, 64, 0, &row, &col), -1);
		assert_int_equal(fragsim_lanemap_entry(lm, op, 0, gfx936_elems[op], &row, &col), -1);
	}
}

/* gfx936's map from its expressions, A and B of type ab, validated. */
static struct fragsim_lanemap *gfx936_exprs(const char *name, enum fragsim_dtype ab)
{
	struct fragsim_lanemap *lm;
	struct fragsim_err err;

	assert_int_equal(fragsim_lanemap_new(name, 64, 16, 16, 32, &lm, &err), FRAGSIM_OK);
	assert_int_equal(fragsim_lanemap_exprs(lm, FRAGSIM_A, ab, 8, 1, "lane % 16",
					       "8 * (lane / 16) + e", &err), FRAGSIM_OK);
	assert_int_equal(fragsim_lanemap_exprs(lm, FRAGSIM_B, ab, 8, 1,
					       "8 * (lane / 16) + e", "lane % 16", &err), FRAGSIM_OK);
	assert_int_equal(fragsim_lanemap_exprs(lm, FRAGSIM_C, FRAGSIM_I32, 4, 1, "lane % 16",
					       "lane / 16 + 4 * e", &err), FRAGSIM_OK);
	assert_int_equal(fragsim_lanemap_validate(lm, &err), FRAGSIM_OK);
	return lm;
}

static struct fragsim_lanemap *gfx936_from_exprs(void)
{
	return gfx936_exprs("gfx936-exprs", FRAGSIM_I8);
}

static void version_is_the_files(void **state)
{
	(void)state;
	/* FRAGSIM_VERSION: the build's -D, read from the file VERSION. */
	assert_string_equal(FRAGSIM_VERSION_STRING, FRAGSIM_VERSION);
	assert_string_equal(fragsim_version(), FRAGSIM_VERSION_STRING);
	assert_int_equal(fragsim_version_number(), FRAGSIM_VERSION_NUMBER);
}

/* Each kind exits as docs/design.md 3.5 says: a limit is the user's to
 * change (2), out of memory is not (3). */
static void exit_status_of_each_kind(void **state)
{
	(void)state;
	assert_int_equal(fragsim_exit_status(FRAGSIM_OK), 0);
	assert_int_equal(fragsim_exit_status(FRAGSIM_MISMATCH), 1);
	assert_int_equal(fragsim_exit_status(FRAGSIM_EINPUT), 2);
	assert_int_equal(fragsim_exit_status(FRAGSIM_EBUDGET), 2);
	assert_int_equal(fragsim_exit_status(FRAGSIM_EINTERNAL), 3);
	assert_int_equal(fragsim_exit_status(FRAGSIM_ENOMEM), 3);
}

static void builtin_and_exprs_are_the_published_gfx936(void **state)
{
	struct fragsim_lanemap *b, *x;
	struct fragsim_err err;
	int found = 0;

	(void)state;
	for (int i = 0; i < fragsim_builtin_count(); i++)
		found += !strcmp(fragsim_builtin_name(i), "gfx936");
	assert_int_equal(found, 1);
	assert_null(fragsim_builtin_name(-1));
	assert_null(fragsim_builtin_name(fragsim_builtin_count()));
	assert_int_equal(fragsim_lanemap_load("gfx936", &b, &err), FRAGSIM_OK);
	x = gfx936_from_exprs();
	assert_gfx936(b);
	assert_gfx936(x);
	fragsim_lanemap_free(b);
	fragsim_lanemap_free(x);
}

static void table_built_map(void **state)
{
	static int32_t row[3][64 * 8], col[3][64 * 8];
	static const enum fragsim_dtype type[3] = { FRAGSIM_I8, FRAGSIM_I8, FRAGSIM_I32 };
	struct fragsim_lanemap *lm;
	struct fragsim_err err;
	int r, c;

	(void)state;
	for (int op = 0; op < 3; op++)
		for (int l = 0; l < 64; l++)
			for (int e = 0; e < gfx936_elems[op]; e++)
				gfx936_entry(op, l, e, &row[op][l * gfx936_elems[op] + e],
					     &col[op][l * gfx936_elems[op] + e]);
	assert_int_equal(fragsim_lanemap_new("gfx936-table", 64, 16, 16, 32, &lm, &err), FRAGSIM_OK);
	for (int op = 0; op < 3; op++)
		assert_int_equal(fragsim_lanemap_table(lm, op, type[op], gfx936_elems[op], 1,
						       row[op], col[op], &err), FRAGSIM_OK);
	assert_int_equal(fragsim_lanemap_validate(lm, &err), FRAGSIM_OK);
	assert_gfx936(lm);
	/* C[1][9]: lane 17, element 2 (the header's example). */
	assert_int_equal(fragsim_lanemap_entry(lm, FRAGSIM_C, 17, 2, &r, &c), 0);
	assert_int_equal(r, 1), assert_int_equal(c, 9);

	/* Break it: lane 1 e 0 holds what lane 0 e 0 holds, C[0][0]; lane
	 * 1's own entry, C[1][0], is then held by no lane. */
	row[2][1 * 4] = row[2][0], col[2][1 * 4] = col[2][0];
	assert_int_equal(fragsim_lanemap_table(lm, FRAGSIM_C, FRAGSIM_I32, 4, 1,
					       row[2], col[2], &err), FRAGSIM_OK);
	assert_int_equal(fragsim_lanemap_validate(lm, &err), FRAGSIM_MISMATCH);
	/* Entry (1, 0) lost its only owner, (0, 0) has two. */
	assert_non_null(strstr(err.msg, "gfx936-table: not a valid lane map: 2 problems"));
	/* A refused table leaves the operand not given, not half set. */
	assert_int_equal(fragsim_lanemap_table(lm, FRAGSIM_B, FRAGSIM_I8, 8, 1, row[1], NULL,
					       &err), FRAGSIM_EINPUT);
	assert_string_equal(err.msg, "B: give both row and col tables");
	assert_int_equal(fragsim_lanemap_validate(lm, &err), FRAGSIM_MISMATCH);
	assert_string_equal(err.msg, "gfx936-table: operand B not given");
	fragsim_lanemap_free(lm);
}

static void bad_maps_are_refused_with_a_message(void **state)
{
	struct fragsim_lanemap *lm;
	struct fragsim_err err;

	(void)state;
	assert_int_equal(fragsim_lanemap_new("x", 48, 16, 16, 32, &lm, &err), FRAGSIM_EINPUT);
	assert_null(lm);
	assert_string_equal(err.msg, "wave must be 32 or 64, not 48");

	assert_int_equal(fragsim_lanemap_new("bad", 64, 16, 16, 32, &lm, &err), FRAGSIM_OK);
	/* 'ee' starts at column 17 of "lane / 16 + 4 * ee". */
	assert_int_equal(fragsim_lanemap_exprs(lm, FRAGSIM_C, FRAGSIM_I32, 4, 1, "lane % 16",
					       "lane / 16 + 4 * ee", &err), FRAGSIM_EINPUT);
	assert_string_equal(err.msg, "C.col: at column 17 of the expression: "
			    "unknown name 'ee' (names are lane and e)");
	assert_int_equal(fragsim_lanemap_exprs(lm, FRAGSIM_A, FRAGSIM_I8, 8, 1,
					       "lane % (e - 3)", "e", &err), FRAGSIM_EINPUT);
	assert_non_null(strstr(err.msg, "A.row: at column 6 of the expression: "));
	assert_non_null(strstr(err.msg, "lane=0 e=3"));
	assert_int_equal(fragsim_lanemap_exprs(lm, FRAGSIM_B, FRAGSIM_I8, 0, 1, "e", "e", &err),
			 FRAGSIM_EINPUT);
	assert_non_null(strstr(err.msg, "elements must be between 1 and 64"));
	/* The failed operands are not given, so the map is incomplete. */
	assert_int_equal(fragsim_lanemap_validate(lm, &err), FRAGSIM_MISMATCH);
	assert_string_equal(err.msg, "bad: operand A not given");
	/* a name is printed as it is: as a profile file's, no control
	 * character (a soak's tab and escape reached the manifests) */
	{
		struct fragsim_lanemap *x = NULL;

		assert_int_equal(fragsim_lanemap_new("tab\there", 64, 16, 16, 32, &x, &err),
				 FRAGSIM_EINPUT);
		assert_null(x);
		assert_string_equal(err.msg, "name holds a control character (0x09 at character 4)");
	}

	/* The article's literal C columns, lane % 16 + 4*e, reach 27. */
	assert_int_equal(fragsim_lanemap_exprs(lm, FRAGSIM_A, FRAGSIM_I8, 8, 1, "lane % 16",
					       "8 * (lane / 16) + e", &err), FRAGSIM_OK);
	assert_int_equal(fragsim_lanemap_exprs(lm, FRAGSIM_B, FRAGSIM_I8, 8, 1,
					       "8 * (lane / 16) + e", "lane % 16", &err), FRAGSIM_OK);
	assert_int_equal(fragsim_lanemap_exprs(lm, FRAGSIM_C, FRAGSIM_I32, 4, 1, "lane % 16",
					       "lane % 16 + 4 * e", &err), FRAGSIM_OK);
	assert_int_equal(fragsim_lanemap_validate(lm, &err), FRAGSIM_MISMATCH);
	assert_non_null(strstr(err.msg, "outside 0..15"));
	fragsim_lanemap_free(lm);

	assert_int_equal(fragsim_lanemap_load("gfx936-article", &lm, &err), FRAGSIM_MISMATCH);
	assert_null(lm);
	assert_int_equal(fragsim_lanemap_load("no-such-map", &lm, &err), FRAGSIM_EINPUT);
	assert_non_null(strstr(err.msg, "unknown profile 'no-such-map'"));
}

/* One small decode case: 6 q heads on 1 kv head, two sequences. */
static struct fragsim_case *small(void)
{
	struct fragsim_case_params p = { .name = "api", .q_heads = 6, .kv_heads = 1,
					 .head_dim = 64, .n_seqs = 2, .seed = 7,
					 .context = { 40, 17 } };
	struct fragsim_case *c;
	struct fragsim_err err;

	assert_int_equal(fragsim_case_build(&p, &c, &err), FRAGSIM_OK);
	assert_string_equal(fragsim_case_name(c), "api");
	return c;
}

static void run_and_summary(void **state)
{
	struct fragsim_summary s[3];
	struct fragsim_lanemap *x = gfx936_from_exprs();
	struct fragsim_case *c;
	struct fragsim_err err;

	(void)state;
	/* The scalar executor (the specification), the fast one, and the
	 * fast one on the map built from expressions: one result. */
	for (int i = 0; i < 3; i++) {
		c = small();
		assert_int_equal(fragsim_summary(c, &s[i]), FRAGSIM_EINPUT);
		if (i == 2)
			assert_int_equal(fragsim_case_set_lanemap(c, x, &err), FRAGSIM_OK);
		assert_int_equal(fragsim_run(c, i ? FRAGSIM_EXEC_AUTO : FRAGSIM_EXEC_SCALAR,
					     0, &err), FRAGSIM_OK);
		assert_int_equal(fragsim_run(c, FRAGSIM_EXEC_AUTO, 0, &err), FRAGSIM_EINPUT);
		assert_int_equal(fragsim_case_set_lanemap(c, x, &err), FRAGSIM_EINPUT);
		assert_int_equal(fragsim_summary(c, &s[i]), FRAGSIM_OK);
		fragsim_case_free(c);
		assert_true(s[i].checked);
		assert_int_equal(s[i].mismatches, 0);
		assert_int_equal(s[i].failed_checks, 0);
		assert_string_equal(s[i].first, "");
		/* 57 keys x 6 q heads of scores at least were compared. */
		assert_true(s[i].compared >= 57 * 6);
		assert_true(s[i].out_cos_min > 0.99 && s[i].out_cos_min <= 1.0 + 1e-12);
	}
	assert_int_equal(s[0].compared, s[1].compared);
	assert_memory_equal(&s[0].out_cos_min, &s[1].out_cos_min, sizeof(double));
	assert_memory_equal(&s[1].kld_mean, &s[2].kld_mean, sizeof(double));
	fragsim_lanemap_free(x);

	/* A valid map the kernel cannot run on (u8 A and B) is refused when
	 * it is set, naming it; at run it was refused at the case's isa:
	 * key, which names gfx936 (a soak). */
	x = gfx936_exprs("u8-map", FRAGSIM_U8);
	c = small();
	assert_int_equal(fragsim_case_set_lanemap(c, x, &err), FRAGSIM_EINPUT);
	assert_string_equal(err.msg, "fragsim_case_set_lanemap: profile u8-map: a is u8, but "
			    "the kernel's Q and K are signed int8 (a u8 operand reads -1 as 255); "
			    "the INT8 kernel needs i8 A and B");
	fragsim_case_free(c);
	fragsim_lanemap_free(x);

	/* expect: mismatch, as `fragsim run`: OK when a check caught the
	 * planted bug (it was FRAGSIM_MISMATCH), MISMATCH when none did */
	for (int i = 0; i < 2; i++) {
		char text[200];

		snprintf(text, sizeof(text), "fragsim: 1\nname: e\nexpect: mismatch\n"
			 "model: {q_heads: 4, kv_heads: 2, head_dim: 64}\n"
			 "sequences:\n  - {context: %d}\nkernel: {gqa_map: modulo}\n", i ? 0 : 40);
		assert_int_equal(fragsim_case_parse(text, strlen(text), "e", NULL, &c, &err),
				 FRAGSIM_OK);
		assert_int_equal(fragsim_run(c, FRAGSIM_EXEC_AUTO, 0, &err),
				 i ? FRAGSIM_MISMATCH : FRAGSIM_OK);
		if (i)
			assert_string_equal(err.msg, "e: expected a mismatch; the planted bug "
					    "went unseen");
		fragsim_case_free(c);
	}
}

static void cases_from_files_text_and_fields(void **state)
{
	static const char bad[] = "fragsim: 1\nname: t\nbogus: 1\nsequences:\n  - {context: 4}\n";
	static const char good[] = "fragsim: 1\nname: t\nsequences:\n  - {context: 4}\n";
	struct fragsim_case_params p = { .head_dim = 100, .n_seqs = 1, .context = { 8 } };
	struct fragsim_case *c;
	struct fragsim_err err;

	(void)state;
	assert_int_equal(fragsim_case_parse(bad, strlen(bad), "t.yaml", NULL, &c, &err),
			 FRAGSIM_EINPUT);
	assert_null(c);
	assert_non_null(strstr(err.msg, "t.yaml:3:1: "));
	assert_non_null(strstr(err.msg, "'bogus'"));
	assert_int_equal(fragsim_case_parse(good, strlen(good), "t.yaml", NULL, &c, &err),
			 FRAGSIM_OK);
	assert_string_equal(fragsim_case_name(c), "t");
	fragsim_case_free(c);

	assert_int_equal(fragsim_case_build(&p, &c, &err), FRAGSIM_EINPUT);
	assert_null(c);
	assert_non_null(strstr(err.msg, "model.head_dim"));
	p.head_dim = 0, p.n_seqs = 0;
	assert_int_equal(fragsim_case_build(&p, &c, &err), FRAGSIM_EINPUT);
	p.n_seqs = 1, p.tokens[0] = 9;
	assert_int_equal(fragsim_case_build(&p, &c, &err), FRAGSIM_EINPUT);
	assert_string_equal(err.msg, "tokens[0]: must be between 0 and context[0] (8), not 9");
	/* the field the caller set, named (a soak: -5 blamed tokens) */
	p.tokens[0] = 0, p.context[0] = -5;
	assert_int_equal(fragsim_case_build(&p, &c, &err), FRAGSIM_EINPUT);
	assert_string_equal(err.msg, "context[0]: must be at least 0, not -5");
	p.context[0] = 8, p.prefill = 2;	/* 0 or 1: 2 ran as prefill */
	assert_int_equal(fragsim_case_build(&p, &c, &err), FRAGSIM_EINPUT);
	assert_string_equal(err.msg, "prefill must be 0 (decode) or 1 (prefill), not 2");
	p.prefill = 0, p.tokens[0] = 9;
	p.name = "a\nb", p.tokens[0] = 0;
	assert_int_equal(fragsim_case_build(&p, &c, &err), FRAGSIM_EINPUT);

	assert_int_equal(fragsim_case_load(FRAGSIM_SRC "/cases/edge/one-token.yaml", &c, &err),
			 FRAGSIM_OK);
	fragsim_case_free(c);
	assert_int_equal(fragsim_case_load(FRAGSIM_SRC "/cases/edge/none.yaml", &c, &err),
			 FRAGSIM_EINPUT);
	assert_non_null(strstr(err.msg, "none.yaml"));
}

static void goldens(void **state)
{
	char dir[] = "/tmp/fragsim-api-XXXXXX", out[64], path[96];
	struct fragsim_case *c = small();
	struct fragsim_err err;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/golden", dir);
	assert_int_equal(fragsim_write_goldens(c, out, 0, &err), FRAGSIM_EINPUT);
	assert_int_equal(fragsim_run(c, FRAGSIM_EXEC_AUTO, 0, &err), FRAGSIM_OK);
	assert_int_equal(fragsim_write_goldens(c, out, 0, &err), FRAGSIM_OK);
	snprintf(path, sizeof(path), "%s/manifest.json", out);
	assert_int_equal(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/out.npy", out);
	assert_int_equal(stat(path, &st), 0);
	/* A file in the way is not fragsim's directory: not replaced. */
	snprintf(path, sizeof(path), "%s/file", dir);
	fclose(fopen(path, "w"));
	assert_int_equal(fragsim_write_goldens(c, path, 0, &err), FRAGSIM_EINPUT);
	fragsim_case_free(c);
	assert_int_equal(system(strcat(strcpy(path, "rm -rf "), dir)), 0);
}

/* The child of run_bounds_the_threads: 100000 threads asked, the run
 * done on at most FRAGSIM_THREADS_MAX, the setting given back. 0 when
 * all held. */
static int bounded_run(void)
{
	struct fragsim_case_params p = { .name = "api", .q_heads = 6, .kv_heads = 1,
					 .head_dim = 64, .n_seqs = 2, .seed = 7,
					 .context = { 40, 17 } };
	struct fragsim_summary s;
	struct fragsim_case *c;
	int bad;

	if (fragsim_case_build(&p, &c, NULL))
		return 1;
	omp_set_num_threads(100000);
	bad = fragsim_run(c, FRAGSIM_EXEC_AUTO, 0, NULL) != FRAGSIM_OK;
	bad |= omp_get_max_threads() != 100000;
	bad |= fragsim_summary(c, &s) != FRAGSIM_OK || s.mismatches != 0;
	fragsim_case_free(c);
	return bad;
}

/* fragsim_run starts at most FRAGSIM_THREADS_MAX threads, whatever the
 * program set, and gives the program its setting back. Before, 100000
 * threads (omp_set_num_threads or OMP_NUM_THREADS) crashed in libgomp
 * starting the first team (SIGSEGV). In a process of its own (this
 * binary again): clang's libomp, growing a team that far, leaves its
 * old team's memory unreachable, which LeakSanitizer would report as
 * this program's leak. */
static void run_bounds_the_threads(void **state)
{
	char self[4096], cmd[4200];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	assert_true(n > 0);
	self[n] = '\0';
	snprintf(cmd, sizeof(cmd), "ASAN_OPTIONS=detect_leaks=0 '%s' --bounded-run", self);
	assert_int_equal(system(cmd), 0);
}

/* The call must give FRAGSIM_EINPUT and this message. */
#define REFUSED(err, call, want) do { \
		memset(&(err), 0, sizeof(err)); \
		assert_int_equal((call), FRAGSIM_EINPUT); \
		assert_string_equal((err).msg, want); \
	} while (0)

/* Every public function with NULL in each pointer argument: an input
 * error naming it, or what the header says NULL does; err NULL is
 * always allowed. Before, 22 of these calls dereferenced the NULL
 * (SIGSEGV), fragsim_case_parse(NULL, 0, ...) aborted in libyaml's
 * assert and fragsim_case_name(NULL) returned a pointer near 0. */
static void null_arguments_are_input_errors(void **state)
{
	static const char good[] = "fragsim: 1\nname: t\nsequences:\n  - {context: 4}\n";
	static const int32_t tab[64 * 8];
	struct fragsim_case_params p = { .n_seqs = 1, .context = { 4 } };
	struct fragsim_lanemap *gfx = gfx936_from_exprs(), *m, *empty;
	struct fragsim_lanemap_info in;
	struct fragsim_summary s;
	struct fragsim_case *c;
	struct fragsim_err err;
	int r = 7, col = 7;

	(void)state;
	/* lane maps */
	m = gfx;
	REFUSED(err, fragsim_lanemap_load(NULL, &m, &err),
		"fragsim_lanemap_load: name_or_path is NULL");
	assert_null(m);
	REFUSED(err, fragsim_lanemap_load("gfx936", NULL, &err),
		"fragsim_lanemap_load: out is NULL");
	assert_int_equal(fragsim_lanemap_load("gfx936", &m, NULL), FRAGSIM_OK);
	fragsim_lanemap_free(m);
	assert_int_equal(fragsim_lanemap_load(NULL, &m, NULL), FRAGSIM_EINPUT);
	m = gfx;
	REFUSED(err, fragsim_lanemap_new(NULL, 64, 16, 16, 32, &m, &err),
		"name must have 1 to 63 bytes");
	assert_null(m);
	REFUSED(err, fragsim_lanemap_new("x", 64, 16, 16, 32, NULL, &err),
		"fragsim_lanemap_new: out is NULL");
	assert_int_equal(fragsim_lanemap_new("empty", 64, 16, 16, 32, &empty, NULL), FRAGSIM_OK);
	REFUSED(err, fragsim_lanemap_exprs(NULL, FRAGSIM_A, FRAGSIM_I8, 8, 1, "e", "e", &err),
		"fragsim_lanemap_exprs: lm is NULL");
	REFUSED(err, fragsim_lanemap_exprs(empty, FRAGSIM_A, FRAGSIM_I8, 8, 1, NULL, "e", &err),
		"A: give both row and col");
	REFUSED(err, fragsim_lanemap_exprs(empty, FRAGSIM_A, FRAGSIM_I8, 8, 1, "e", NULL, &err),
		"A: give both row and col");
	REFUSED(err, fragsim_lanemap_table(NULL, FRAGSIM_A, FRAGSIM_I8, 8, 1, tab, tab, &err),
		"fragsim_lanemap_table: lm is NULL");
	REFUSED(err, fragsim_lanemap_table(empty, FRAGSIM_A, FRAGSIM_I8, 8, 1, NULL, tab, &err),
		"A: give both row and col tables");
	REFUSED(err, fragsim_lanemap_table(empty, FRAGSIM_A, FRAGSIM_I8, 8, 1, tab, NULL, &err),
		"A: give both row and col tables");
	REFUSED(err, fragsim_lanemap_validate(NULL, &err), "fragsim_lanemap_validate: lm is NULL");
	assert_int_equal(fragsim_lanemap_validate(NULL, NULL), FRAGSIM_EINPUT);
	assert_int_equal(fragsim_lanemap_entry(NULL, FRAGSIM_C, 0, 0, &r, &col), -1);
	assert_int_equal(fragsim_lanemap_entry(gfx, FRAGSIM_C, 0, 0, NULL, &col), -1);
	assert_int_equal(fragsim_lanemap_entry(gfx, FRAGSIM_C, 0, 0, &r, NULL), -1);
	assert_int_equal(r, 7), assert_int_equal(col, 7);	/* untouched */
	memset(&in, 0xff, sizeof(in));
	fragsim_lanemap_info(NULL, &in);
	assert_null(in.name);
	assert_int_equal(in.wave, 0), assert_int_equal(in.valid, 0);
	fragsim_lanemap_info(gfx, NULL);
	fragsim_lanemap_free(NULL);
	fragsim_lanemap_free(empty);

	/* cases */
	c = (struct fragsim_case *)gfx;
	REFUSED(err, fragsim_case_load(NULL, &c, &err), "fragsim_case_load: path is NULL");
	assert_null(c);
	REFUSED(err, fragsim_case_load(FRAGSIM_SRC "/cases/edge/one-token.yaml", NULL, &err),
		"fragsim_case_load: out is NULL");
	c = (struct fragsim_case *)gfx;
	REFUSED(err, fragsim_case_parse(NULL, 5, "t.yaml", NULL, &c, &err),
		"fragsim_case_parse: text is NULL");
	assert_null(c);
	/* An empty buffer, NULL or not, is an empty document. */
	REFUSED(err, fragsim_case_parse(NULL, 0, "t.yaml", NULL, &c, &err),
		"t.yaml:1:1: empty document");
	REFUSED(err, fragsim_case_parse("", 0, "t.yaml", NULL, &c, &err),
		"t.yaml:1:1: empty document");
	REFUSED(err, fragsim_case_parse(good, 0, NULL, NULL, &c, &err),
		"<text>:1:1: empty document");
	REFUSED(err, fragsim_case_parse(good, strlen(good), "t.yaml", NULL, NULL, &err),
		"fragsim_case_parse: out is NULL");
	/* origin, dir and err NULL are allowed */
	assert_int_equal(fragsim_case_parse(good, strlen(good), NULL, NULL, &c, NULL), FRAGSIM_OK);
	assert_string_equal(fragsim_case_name(c), "t");
	fragsim_case_free(c);
	c = (struct fragsim_case *)gfx;
	REFUSED(err, fragsim_case_build(NULL, &c, &err), "fragsim_case_build: p is NULL");
	assert_null(c);
	REFUSED(err, fragsim_case_build(&p, NULL, &err), "fragsim_case_build: out is NULL");
	assert_int_equal(fragsim_case_build(&p, &c, NULL), FRAGSIM_OK);
	REFUSED(err, fragsim_case_set_lanemap(NULL, gfx, &err),
		"fragsim_case_set_lanemap: c is NULL");
	REFUSED(err, fragsim_case_set_lanemap(c, NULL, &err),
		"fragsim_case_set_lanemap: lm is NULL");
	assert_null(fragsim_case_name(NULL));
	assert_null(fragsim_case_lanemap(NULL));
	fragsim_case_free(NULL);

	/* running, summaries, goldens */
	REFUSED(err, fragsim_run(NULL, FRAGSIM_EXEC_AUTO, 0, &err), "fragsim_run: c is NULL");
	REFUSED(err, fragsim_write_goldens(NULL, "/tmp/none", 0, &err),
		"fragsim_write_goldens: c is NULL");
	REFUSED(err, fragsim_write_goldens(c, NULL, 0, &err), "fragsim_write_goldens: dir is NULL");
	memset(&s, 0xff, sizeof(s));
	assert_int_equal(fragsim_summary(NULL, &s), FRAGSIM_EINPUT);
	assert_int_equal(s.checked, 0), assert_int_equal(s.compared, 0);
	assert_int_equal(fragsim_summary(c, NULL), FRAGSIM_EINPUT);
	assert_int_equal(fragsim_run(c, FRAGSIM_EXEC_AUTO, 0, NULL), FRAGSIM_OK);
	assert_int_equal(fragsim_summary(c, NULL), FRAGSIM_EINPUT);
	assert_int_equal(fragsim_summary(c, &s), FRAGSIM_OK);
	assert_int_equal(s.mismatches, 0);
	REFUSED(err, fragsim_write_goldens(c, NULL, 0, &err), "fragsim_write_goldens: dir is NULL");
	fragsim_case_free(c);
	fragsim_lanemap_free(gfx);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(version_is_the_files),
		cmocka_unit_test(exit_status_of_each_kind),
		cmocka_unit_test(builtin_and_exprs_are_the_published_gfx936),
		cmocka_unit_test(table_built_map),
		cmocka_unit_test(bad_maps_are_refused_with_a_message),
		cmocka_unit_test(run_and_summary),
		cmocka_unit_test(cases_from_files_text_and_fields),
		cmocka_unit_test(goldens),
		cmocka_unit_test(run_bounds_the_threads),
		cmocka_unit_test(null_arguments_are_input_errors),
	};

	if (argc == 2 && !strcmp(argv[1], "--bounded-run"))
		return bounded_run();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
