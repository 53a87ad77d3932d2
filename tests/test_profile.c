/*
 * test_profile.c - the profile loader (lib/profile.c): YAML and
 * expression errors name file:line:col exactly, tables load, and every
 * rejected input is an error value, never a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../lib/profile.h"
#include "testutil.h"

/* A valid tiny profile; tests splice one line in to break it. */
#define HEAD "fragsim_profile: 1\nname: t\ninstruction: x\nwave: 32\nm: 4\nn: 4\nk: 8\n"
#define A_OK "a: {type: i8, elements: 1, row: \"lane / 8\", col: \"lane % 8\"}\n"
#define B_OK "b: {type: i8, elements: 1, row: \"lane % 8\", col: \"lane / 8\"}\n"
#define C_OK "c: {type: i32, elements: 1, replicas: 2, row: \"lane % 16 / 4\", col: \"lane % 4\"}\n"

static struct lanemap *load(const char *text, struct fs_err *err)
{
	memset(err, 0, sizeof(*err));
	return profile_load_text(text, strlen(text), "t.yaml", NULL, err);
}

/* Load must fail at line:col with a message containing `want`. */
static void expect_error(const char *text, int line, int col, const char *want)
{
	struct fs_err err;
	struct lanemap *lm = load(text, &err);

	if (lm)
		fail_msg("loaded, expected an error containing '%s'", want);
	assert_string_equal(err.file, "t.yaml");
	if (err.line != line || err.col != col || !strstr(err.msg, want))
		fail_msg("got %d:%d: %s; expected %d:%d: ...%s...", err.line,
			 err.col, err.msg, line, col, want);
}

static void valid_profile_loads_and_validates(void **state)
{
	struct fs_err err;
	struct lanemap *lm = load(HEAD A_OK B_OK C_OK, &err);
	struct lm_report rep;

	(void)state;
	assert_non_null(lm);
	assert_string_equal(lm->name, "t");
	assert_int_equal(lm->wave, 32);
	assert_int_equal(lm->op[LM_C].replicas, 2);
	assert_int_equal(lm->op[LM_A].row[17], 2);
	assert_int_equal(lm->op[LM_A].col[17], 1);
	assert_int_equal(lanemap_validate(lm, &rep), FS_OK);
	lanemap_free(lm);
}

static void expression_errors_point_at_the_character(void **state)
{
	(void)state;
	/* col: "lane % 8 +" -> quote at column 50, expression column 11. */
	expect_error(HEAD "a: {type: i8, elements: 1, row: \"lane / 8\", col: \"lane % 8 +\"}\n"
		     B_OK C_OK, 8, 50 + 1 + 11 - 1, "a.col: at column 11 of the expression");
	/* Plain (unquoted) scalar at column 48: no quote to skip; 'ee' is at
	 * column 8 of it. */
	expect_error(HEAD A_OK "b: {type: i8, elements: 1, row: lane % 8, col: lane + ee}\n"
		     C_OK, 9, 48 + 8 - 1, "unknown name 'ee'");
	/* Evaluation error at the '/' (quote at 47, expression column 6). */
	expect_error(HEAD A_OK B_OK
		     "c: {type: i32, elements: 1, replicas: 2, row: \"lane / (e - e)\", col: \"0\"}\n",
		     10, 47 + 1 + 6 - 1, "division by zero at lane=0 e=0");
}

static void yaml_syntax_error_has_position(void **state)
{
	(void)state;
	expect_error(HEAD "a: {type: i8, elements: 1\n", 9, 1, "invalid YAML");
}

static void schema_errors(void **state)
{
	(void)state;
	expect_error("fragsim_profile: 2\n", 1, 18, "fragsim_profile: must be between 1 and 1");
	expect_error(HEAD "lanes: 4\n" A_OK B_OK C_OK, 8, 1, "unknown key 'lanes'");
	expect_error(HEAD A_OK B_OK, 1, 1, "missing key 'c'");
	expect_error(HEAD "name: u\n" A_OK B_OK C_OK, 8, 1, "key 'name' given twice (first at line 2)");
	expect_error("fragsim_profile: 1\nname: t\ninstruction: x\nwave: 48\nm: 4\nn: 4\nk: 8\n"
		     A_OK B_OK C_OK, 4, 7, "wave: must be 32 or 64");
	expect_error(HEAD "a: {type: i4, elements: 1, row: \"0\", col: \"0\"}\n" B_OK C_OK,
		     8, 11, "a.type: must be one of i8, u8, i32, f16, bf16, f32, not 'i4'");
	expect_error(HEAD "a: {type: i8, elements: 65, row: \"0\", col: \"0\"}\n" B_OK C_OK,
		     8, 25, "a.elements: must be between 1 and 64");
	expect_error(HEAD "a: {type: i8, elements: 1, row: \"0\"}\n" B_OK C_OK,
		     8, 4, "a: missing key 'col'");
	expect_error(HEAD "a: {type: i8, elements: 1, row: \"0\", col: \"0\", table: \"0,0,0,0\"}\n"
		     B_OK C_OK, 8, 4, "give either row and col, or table, or table_file");
	expect_error(HEAD "a: [1, 2]\n" B_OK C_OK, 8, 4, "a: expected a mapping, found a list");
	expect_error("- 1\n", 1, 1, "expected a mapping, found a list");
	expect_error(HEAD "m: x\n", 8, 1, "key 'm' given twice");
}

static void empty_document_is_an_error(void **state)
{
	struct fs_err err;

	(void)state;
	assert_null(load("", &err));
	assert_non_null(strstr(err.msg, "empty document"));
	assert_null(load("# only a comment\n", &err));
}

static void inline_table(void **state)
{
	char text[8192];
	size_t at;
	struct fs_err err;
	struct lanemap *lm;
	struct lm_report rep;

	(void)state;
	at = (size_t)snprintf(text, sizeof(text), "%s%s",  HEAD A_OK B_OK,
			      "c:\n  type: i32\n  elements: 1\n  replicas: 2\n  table: |\n    lane,e,row,col\n");
	for (int l = 0; l < 32; l++)
		at += (size_t)snprintf(text + at, sizeof(text) - at, "    %d,0,%d,%d\n",
				       l, (l % 16) / 4, l % 4);
	lm = load(text, &err);
	assert_non_null(lm);
	assert_int_equal(lanemap_validate(lm, &rep), FS_OK);
	assert_int_equal(lm->op[LM_C].row[13], 3);
	lanemap_free(lm);
	/* A missing slot is named. */
	snprintf(text, sizeof(text), "%s%s", HEAD A_OK B_OK,
		 "c: {type: i32, elements: 1, replicas: 2, table: \"0,0,0,0\"}\n");
	assert_null(load(text, &err));
	assert_non_null(strstr(err.msg, "c.table: no entry for lane 1 e 0"));
	/* A malformed line is named with its file line. */
	snprintf(text, sizeof(text), "%s%s", HEAD A_OK B_OK,
		 "c:\n  type: i32\n  elements: 1\n  table: |\n    0,0,0,0\n    1,0,x,0\n");
	assert_null(load(text, &err));
	assert_int_equal(err.line, 15);
	assert_non_null(strstr(err.msg, "expected 'lane,e,row,col'"));
}

/*
 * A table in a one-line scalar used to be located one line above the
 * 'table:' line (line0 = line - 1 for every non-block style), and a
 * folded multi-line scalar's lines were counted as file lines.
 */
static void inline_table_errors_point_at_the_table(void **state)
{
	(void)state;
	/* HEAD is 7 lines, A and B 2: c is line 10, table line 13. */
	expect_error(HEAD A_OK B_OK "c:\n  type: i32\n  elements: 1\n  table: 0,0,0,0\n",
		     13, 10, "c.table: no entry for lane 1 e 0");
	/* Quoted over lines 10-12: YAML folds it, so the error names the
	 * table's line 2 at the scalar's first character. */
	expect_error(HEAD A_OK B_OK "c: {type: i32, elements: 1, table: \"0,0,0,0\n\n  1,0,x,0\"}\n",
		     10, 36, "c.table: line 2 of the table: expected 'lane,e,row,col'");
	/* Past long: an error that says so (sscanf's %ld was undefined). */
	expect_error(HEAD A_OK B_OK "c:\n  type: i32\n  elements: 1\n  table: |\n    0,0,0,0\n    1,0,99999999999999999999,0\n",
		     15, 10, "c.table: a number out of range in '1,0,99999999999999999999,0'");
	/* A literal block keeps one text line per file line. */
	expect_error(HEAD A_OK B_OK "c:\n  type: i32\n  elements: 1\n  table: |\n    0,0,0,0\n    1,0,x,0\n",
		     15, 10, "c.table: expected 'lane,e,row,col'");
}

/* "e\0 + 99" read as "e" before: the tail of the expression was lost. */
static void nul_in_an_expression_is_refused(void **state)
{
	(void)state;
	expect_error(HEAD A_OK B_OK "c: {type: i32, elements: 1, replicas: 2, row: \"lane % 16 / 4\", "
		     "col: \"lane / 16 + 4 * e\\0 + 99\"}\n", 10, 69,
		     "c.col: a NUL character (\\0) inside a value");
}

/*
 * An empty name was accepted before: `lanemap --format c` then made the
 * identifiers fs__a_row and the guard FRAGSIM_LANEMAP__H, and `lanemap
 * list`, reports and goldens named the profile with nothing.
 */
static void empty_name_is_refused(void **state)
{
	(void)state;
	expect_error("fragsim_profile: 1\nname: \"\"\ninstruction: x\nwave: 32\nm: 4\nn: 4\nk: 8\n"
		     A_OK B_OK C_OK, 2, 7, "name: must not be empty");
	expect_error("fragsim_profile: 1\nname: \"  \"\ninstruction: x\nwave: 32\nm: 4\nn: 4\nk: 8\n"
		     A_OK B_OK C_OK, 2, 7, "name: must not be empty");
}

/*
 * The profile's texts are printed as they are (lists, reports, every
 * case's line): a tab, a BEL or a newline in them (YAML escapes) broke
 * lines and reached the terminal (a soak found "v\nfoo" split `lanemap
 * check`'s line in two).
 */
static void control_characters_are_refused(void **state)
{
	(void)state;
	expect_error("fragsim_profile: 1\nname: \"x\\ty\"\ninstruction: x\nwave: 32\nm: 4\nn: 4\nk: 8\n"
		     A_OK B_OK C_OK, 2, 7,
		     "name: holds a control character (0x09 at character 2); the text is printed as it is");
	expect_error("fragsim_profile: 1\nname: x\ninstruction: \"v\\nfoo\"\nwave: 32\nm: 4\nn: 4\nk: 8\n"
		     A_OK B_OK C_OK, 3, 14, "instruction: holds a control character (0x0a at character 2)");
	expect_error("fragsim_profile: 1\nname: x\ninstruction: x\ndescription: \"a\\e[31m\"\n"
		     "wave: 32\nm: 4\nn: 4\nk: 8\n" A_OK B_OK C_OK, 4, 14,
		     "description: holds a control character (0x1b at character 2)");
}

static void table_file_relative_to_profile(void **state)
{
	char csv[4096], yaml[4096], want[1200], *csv_path, *yaml_path;
	const char *base;
	size_t at = 0;
	struct fs_err err;
	struct lanemap *lm;

	(void)state;
	for (int l = 0; l < 32; l++)
		at += (size_t)snprintf(csv + at, sizeof(csv) - at, "%d,0,%d,%d\n", l,
				       (l % 16) / 4, l % 4);
	csv_path = tu_write_temp(".csv", csv);
	base = strrchr(csv_path, '/') + 1;
	snprintf(yaml, sizeof(yaml), "%s%s%s}\n", HEAD A_OK B_OK,
		 "c: {type: i32, elements: 1, replicas: 2, table_file: ", base);
	yaml_path = tu_write_temp(".yaml", yaml);
	lm = profile_load_file(yaml_path, &err);
	assert_non_null(lm);
	assert_int_equal(lm->op[LM_C].col[31], 3);
	lanemap_free(lm);
	/* A NUL in the table file would end the text early: refused. */
	{
		FILE *f = fopen(csv_path, "wb");

		assert_non_null(f);
		fwrite(csv, 1, strlen(csv), f);
		fwrite("\0" "99,0,0,0\n", 1, 10, f);
		fclose(f);
		assert_null(profile_load_file(yaml_path, &err));
		if (!strstr(err.msg, "c.table_file: a NUL byte at offset"))
			fail_msg("got '%s'", err.msg);
	}
	unlink(csv_path);
	/* The file is gone now: the error names the path, at the profile's
	 * table_file key (it named the table file alone, with no line). */
	assert_null(profile_load_file(yaml_path, &err));
	snprintf(want, sizeof(want), "c.table_file: %s: cannot open", csv_path);
	if (!strstr(err.msg, want) || strcmp(err.file, yaml_path) || err.line <= 0)
		fail_msg("got %s:%d: '%s'", err.file, err.line, err.msg);
	unlink(yaml_path);
	free(csv_path);
	free(yaml_path);
}

static void resolve_names_and_paths(void **state)
{
	struct fs_err err;
	struct lanemap *lm;

	(void)state;
	lm = profile_resolve("gfx936", &err);
	assert_non_null(lm);
	lanemap_free(lm);
	assert_null(profile_resolve("gfx937", &err));
	assert_non_null(strstr(err.msg, "unknown profile 'gfx937'"));
	assert_null(profile_resolve("/nonexistent/p.yaml", &err));
	assert_string_equal(err.file, "/nonexistent/p.yaml");
}

/* Issue 21 point 14: `isa: gfx942` (the MI300's target, what build.sh
 * takes) said only "unknown profile". A target names no instruction,
 * but the builtins whose description names it are the answer: both
 * CDNA3 profiles say "(gfx942)", and gfx940/941 are the same ISA; the
 * CDNA4 one says gfx950, the RDNA4 one gfx12 (gfx1200, gfx1201). A word
 * that names no profile keeps the plain message. */
static void unknown_target_names_its_profiles(void **state)
{
	static const char *const want[][3] = {
		{ "gfx942", "the builtin profiles for gfx942: cdna3-mfma-i32-16x16x32-i8, "
			    "cdna3-mfma-i32-32x32x16-i8 (", NULL },
		{ "gfx940", "cdna3-mfma-i32-16x16x32-i8, cdna3-mfma-i32-32x32x16-i8", NULL },
		{ "gfx950", "the builtin profile for gfx950: cdna4-mfma-i32-16x16x64-i8 (", NULL },
		{ "gfx1201", "rdna4-wmma-i32-16x16x16-iu8-w32", NULL },
		{ "gfx1100", "the builtin profiles for gfx1100: rdna3-wmma-i32-16x16x16-iu8-w32, "
			     "rdna3-wmma-i32-16x16x16-iu8-w64 (", NULL },
		{ "gfx1151", "rdna3-wmma-i32-16x16x16-iu8-w32", "rdna4" },
		{ "sm90", "sm80-mma-m16n8k16-s8, sm80-mma-m16n8k32-s8", NULL },
		{ "sm86", "sm80-mma-m16n8k32-s8", NULL },
		{ "sm70", "unknown profile 'sm70' (not a builtin name", "sm80" },
		{ "nope", "unknown profile 'nope' (not a builtin name nor a .yaml file", "cdna" },
		{ "gfx90a", "unknown profile 'gfx90a' (not a builtin name", "cdna" },
	};
	struct fs_err err;

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		memset(&err, 0, sizeof(err));
		assert_null(profile_resolve(want[i][0], &err));
		if (!strstr(err.msg, want[i][1]) || (want[i][2] && strstr(err.msg, want[i][2])))
			fail_msg("%s: '%s'", want[i][0], err.msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(valid_profile_loads_and_validates),
		cmocka_unit_test(expression_errors_point_at_the_character),
		cmocka_unit_test(yaml_syntax_error_has_position),
		cmocka_unit_test(schema_errors),
		cmocka_unit_test(empty_document_is_an_error),
		cmocka_unit_test(inline_table),
		cmocka_unit_test(inline_table_errors_point_at_the_table),
		cmocka_unit_test(nul_in_an_expression_is_refused),
		cmocka_unit_test(table_file_relative_to_profile),
		cmocka_unit_test(resolve_names_and_paths),
		cmocka_unit_test(unknown_target_names_its_profiles),
		cmocka_unit_test(empty_name_is_refused),
		cmocka_unit_test(control_characters_are_refused),
	};

	return cmocka_run_group_tests_name("profile", tests, NULL, NULL);
}
