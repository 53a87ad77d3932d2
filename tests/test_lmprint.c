/*
 * test_lmprint.c - `fragsim lanemap --format c`: the generated header,
 * compiled by the C compiler (C99, -pedantic) and by the C++ compiler,
 * must give every entry of every builtin profile exactly as
 * `lanemap --format csv` does (the CSV path is the one test_cli checks
 * against hand-worked entries). Both directions are checked: the forward
 * functions (lane, e) -> (row, col) must print the CSV line for line, and
 * the inverse (row, col, r) -> (lane, e) must reach every CSV line once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "testutil.h"
#include "../lib/profile.h"
#include "../lib/sha256.h"

/*
 * The program that prints a header's map as CSV: the forward lines, a
 * line "inverse", then one line per (entry, replica) from the inverse.
 * P is the identifier prefix (fs_ + the name with '-' as '_', or the
 * hashed form of hashed_id below).
 */
static const char prog_fmt[] =
	"#include <stdio.h>\n"
	"#include \"lm.h\"\n"
	"#define OP(m, M) do { \\\n"
	"	for (int l = 0; l < %2$s_WAVE; l++) \\\n"
	"		for (int e = 0; e < %2$s_##M##_ELEMS; e++) \\\n"
	"			printf(#M \",%%d,%%d,%%d,%%d,%%d,%%d\\n\", l, e, %1$s_##m##_reg(e), \\\n"
	"			       %1$s_##m##_byte(e), %1$s_##m##_row(l, e), %1$s_##m##_col(l, e)); \\\n"
	"	} while (0)\n"
	"#define INV(m, M) do { \\\n"
	"	for (int r = 0; r < %2$s_##M##_ROWS; r++) \\\n"
	"		for (int c = 0; c < %2$s_##M##_COLS; c++) \\\n"
	"			for (int k = 0; k < %2$s_##M##_REPLICAS; k++) { \\\n"
	"				int l = %1$s_##m##_lane(r, c, k), e = %1$s_##m##_elem(r, c, k); \\\n"
	"				printf(#M \",%%d,%%d,%%d,%%d,%%d,%%d\\n\", l, e, %1$s_##m##_reg(e), \\\n"
	"				       %1$s_##m##_byte(e), r, c); \\\n"
	"			} \\\n"
	"	} while (0)\n"
	"int main(void)\n"
	"{\n"
	"	printf(\"matrix,lane,e,reg,byte,row,col\\n\");\n"
	"	OP(a, A); OP(b, B); OP(c, C);\n"
	"	printf(\"inverse\\n\");\n"
	"	INV(a, A); INV(b, B); INV(c, C);\n"
	"	return 0;\n"
	"}\n";

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text (modified in place), sorted; returns the count. */
static int sorted_lines(char *text, char **lines, int max)
{
	int n = 0;

	for (char *p = strtok(text, "\n"); p && n < max; p = strtok(NULL, "\n"))
		lines[n++] = p;
	qsort(lines, (size_t)n, sizeof(*lines), cmp_line);
	return n;
}

/* Compile dir/prog.c with compiler cmd, run it; its stdout, or NULL. */
static char *build_and_run(const char *dir, const char *cmd)
{
	char path[512];

	if (tu_sh("cd '%s' && %s -o prog prog.c && ./prog > out.txt", dir, cmd) != 0)
		return NULL;
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	return tu_slurp(path);
}

/* Forward part == csv; inverse part, sorted == csv body, sorted. */
static void check_output(const char *name, const char *csv, char *out)
{
	char *inv = strstr(out, "inverse\n");
	char *want = strdup(strchr(csv, '\n') + 1);
	static char *a[8192], *b[8192];
	int na, nb;

	assert_non_null(inv);
	*inv = '\0';
	if (strcmp(out, csv))
		fail_msg("%s: the header's forward map differs from --format csv", name);
	na = sorted_lines(inv + strlen("inverse\n"), a, 8192);
	nb = sorted_lines(want, b, 8192);
	assert_int_equal(na, nb);
	for (int i = 0; i < na; i++)
		if (strcmp(a[i], b[i]))
			fail_msg("%s: inverse gives '%s', csv has '%s'", name, a[i], b[i]);
	free(want);
}

static int have_cxx(void)
{
	return tu_sh("command -v %s >/dev/null 2>&1", FRAGSIM_CXX) == 0;
}

/*
 * The header of profile `isa` (a builtin name or a YAML path), compiled
 * as C99 and, when there is a C++ compiler, as C++, printed and compared
 * with the CSV. id is the identifier prefix the header must use.
 */
static void check_profile(const char *isa, const char *id, const char *ID)
{
	char dir[64], path[512];
	struct run_result csv = tu_run("lanemap --isa '%s' --format csv", isa);
	struct run_result hdr = tu_run("lanemap --isa '%s' --format c", isa);
	FILE *f;
	char *out;

	assert_int_equal(csv.status, 0);
	assert_int_equal(hdr.status, 0);
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "lmc"));
	snprintf(path, sizeof(path), "%s/lm.h", dir);
	assert_int_equal(tu_put(path, hdr.out), 0);
	snprintf(path, sizeof(path), "%s/prog.c", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, prog_fmt, id, ID);
	fclose(f);
	out = build_and_run(dir, FRAGSIM_CC " -std=c99 -pedantic -Wall -Wextra -Werror");
	if (!out)
		fail_msg("%s: the generated header does not compile as C99", isa);
	check_output(isa, csv.out, out);
	free(out);
	if (have_cxx()) {
		out = build_and_run(dir, FRAGSIM_CXX " -x c++ -pedantic -Wall -Wextra -Werror");
		if (!out)
			fail_msg("%s: the generated header does not compile as C++", isa);
		check_output(isa, csv.out, out);
		free(out);
	}
	assert_int_equal(tu_scratch_free(dir), 0);
	tu_free(&csv);
	tu_free(&hdr);
}

static void every_builtin_matches_csv(void **state)
{
	int checked = 0;

	(void)state;
	for (int i = 0; i < profile_builtin_count(); i++) {
		const char *name = profile_builtin_name(i);
		char id[128], ID[128];

		if (!strcmp(name, "gfx936-article")) {
			/* Invalid (col reaches 27): no header to give a kernel. */
			struct run_result hdr = tu_run("lanemap --isa %s --format c", name);

			assert_int_equal(hdr.status, 1);
			assert_string_equal(hdr.out, "");
			assert_non_null(strstr(hdr.err, "invalid profile, no header written"));
			tu_free(&hdr);
			continue;
		}
		/* The names of the builtins: letters, digits and '-'. */
		snprintf(id, sizeof(id), "fs_%s", name);
		snprintf(ID, sizeof(ID), "FS_%s", name);
		for (char *p = id; *p; p++)
			*p = *p == '-' ? '_' : *p;
		for (char *p = ID; *p; p++)
			*p = *p == '-' ? '_' : (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
		check_profile(name, id, ID);
		checked++;
	}
	assert_true(checked >= 6);
	if (!have_cxx())
		skip();	/* C checked; the C++ half needs a C++ compiler */
}

/*
 * The identifiers of a name that is not plain (lib: lower-case letters,
 * digits, single '-'): base, "_h", the first 8 hex digits of the name's
 * SHA-256 (lib/sha256.c, checked against FIPS 180-4 by test_sha256).
 */
static void hashed_id(const char *base, const char *name, char *id, char *ID)
{
	char hex[SHA256_HEX_LEN];

	sha256_hex(name, strlen(name), hex);
	snprintf(id, 128, "fs_%s%sh%.8s", base, base[0] ? "_" : "", hex);
	for (int i = 0; (ID[i] = id[i]); i++)
		if (ID[i] >= 'a' && ID[i] <= 'z')
			ID[i] = (char)(ID[i] - 'a' + 'A');
}

/*
 * A profile whose name is no identifier and whose text would break a
 * comment or a string literal ("*" "/", quotes, a backslash) still gives
 * a header that compiles and holds its map.
 */
static void awkward_names_and_text(void **state)
{
	char *yaml = tu_slurp(FRAGSIM_SRC "/profiles/gfx936.yaml"), *path;
	const char *body;
	char text[8192], id[128], ID[128];

	(void)state;
	body = strstr(yaml, "\nwave: ");
	assert_non_null(body);
	snprintf(text, sizeof(text),
		 "fragsim_profile: 1\n"
		 "name: \"My.map v2\"\n"
		 "instruction: \"v_mmac \\\"x\\\" */ y\"\n"
		 "description: \"ends a comment */ here, and \\\\ too\"\n"
		 "source: \"*/ #endif\"%s", body);
	path = tu_write_temp(".yaml", text);
	assert_non_null(path);
	hashed_id("my_map_v2", "My.map v2", id, ID);
	check_profile(path, id, ID);
	unlink(path);
	free(path);
	free(yaml);
}

static void c_format_usage(void **state)
{
	struct run_result r = tu_run("lanemap --isa gfx936 --format c --lane 3");

	(void)state;
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	assert_non_null(strstr(r.err, "--format c prints the whole map"));
	tu_free(&r);
	r = tu_run("lanemap check gfx936 --format c");
	assert_int_equal(r.status, 2);
	tu_free(&r);
	/* A name that is not an identifier becomes one. */
	r = tu_run("lanemap --isa cdna3-mfma-i32-16x16x32-i8 --format c");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "#ifndef FRAGSIM_LANEMAP_CDNA3_MFMA_I32_16X16X32_I8_H\n"));
	assert_non_null(strstr(r.out, "#define FS_CDNA3_MFMA_I32_16X16X32_I8_INSTRUCTION "
				      "\"v_mfma_i32_16x16x32_i8\"\n"));
	tu_free(&r);
}

/* gfx936's profile from "wave:" on, under the given head lines. */
static char *profile_with(const char *head)
{
	char *yaml = tu_slurp(FRAGSIM_SRC "/profiles/gfx936.yaml"), *path;
	const char *body = yaml ? strstr(yaml, "\nwave: ") : NULL;
	char text[8192];

	assert_non_null(body);
	snprintf(text, sizeof(text), "fragsim_profile: 1\n%s%s", head, body);
	path = tu_write_temp(".yaml", text);
	assert_non_null(path);
	free(yaml);
	return path;
}

/* The compilers a header must pass: trigraphs are on in -std=c99 and
 * -std=c++11, off (and warned of) in the GNU dialects. */
static const char *const strict_compilers[] = {
	FRAGSIM_CC " -std=c99 -pedantic -Wall -Wextra -Werror",
	FRAGSIM_CC " -std=gnu11 -Wall -Wextra -Werror",
	FRAGSIM_CXX " -x c++ -std=c++11 -pedantic -Wall -Wextra -Werror",
	FRAGSIM_CXX " -x c++ -Wall -Wextra -Werror",
};

/* dir/prog.c built by each compiler (C++ ones only if there is one)
 * must print `want`. */
static void expect_prog_output(const char *dir, const char *want)
{
	for (size_t i = 0; i < sizeof(strict_compilers) / sizeof(*strict_compilers); i++) {
		char *out;

		if (strstr(strict_compilers[i], FRAGSIM_CXX " ") == strict_compilers[i] &&
		    !have_cxx())
			continue;
		out = build_and_run(dir, strict_compilers[i]);
		if (!out)
			fail_msg("the header does not build with %s", strict_compilers[i]);
		assert_string_equal(out, want);
		free(out);
	}
}

/*
 * Issue 21 (12): "a?\?/" as a name made the string "a?\?/" in which the
 * trigraph ?\?/ is a backslash that eats the closing quote (C99, C++11),
 * and "/" "*" in a name or description is -Wcomment inside the header's
 * comment: neither header compiled under -Wall -Werror. The name and
 * instruction macros must still be the exact text, and the map there.
 */
static void c_header_survives_trigraphs_and_comment_marks(void **state)
{
	char *path = profile_with("name: \"a?\?/\"\n"
				  "instruction: \"v?\?=x /* y\"\n"
				  "description: \"d /* e ?\?/ \\\\\"\n"
				  "source: \"s ?\?/\"\n");
	struct run_result hdr = tu_run("lanemap --isa '%s' --format c", path);
	char dir[64], file[512], id[128], ID[128];
	FILE *f;

	(void)state;
	assert_int_equal(hdr.status, 0);
	hashed_id("a", "a?\?/", id, ID);
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "lmt"));
	snprintf(file, sizeof(file), "%s/lm.h", dir);
	assert_int_equal(tu_put(file, hdr.out), 0);
	snprintf(file, sizeof(file), "%s/prog.c", dir);
	f = fopen(file, "w");
	assert_non_null(f);
	/* gfx936 C: row = lane % 16, col = lane / 16 + 4 e (profiles/gfx936.yaml):
	 * lane 17, e 2 holds C[1][9]. */
	fprintf(f, "#include <stdio.h>\n#include \"lm.h\"\n"
		"int main(void)\n{\n\tputs(%s_NAME);\n\tputs(%s_INSTRUCTION);\n"
		"\tprintf(\"%%d %%d\\n\", %s_c_row(17, 2), %s_c_col(17, 2));\n"
		"\treturn 0;\n}\n", ID, ID, id, id);
	fclose(f);
	expect_prog_output(dir, "a?\?/\nv?\?=x /* y\n1 9\n");
	assert_int_equal(tu_scratch_free(dir), 0);
	tu_free(&hdr);
	unlink(path);
	free(path);
}

/*
 * Issue 21 (12): every name not a letter or digit became '_', so "a-b",
 * "a_b", "a.b", "A-B" and "a b" all made fs_a_b and one include guard:
 * a program that included two of the headers got the second one empty.
 * Each name now has its own prefix and guard, all in one program.
 */
static void different_names_get_different_identifiers(void **state)
{
	static const struct { const char *name, *yaml, *base; } names[] = {
		{ "a-b", "a-b", NULL },		/* plain: fs_a_b */
		{ "a_b", "a_b", "a_b" },
		{ "a.b", "a.b", "a_b" },
		{ "A-B", "A-B", "a_b" },
		{ "a b", "\"a b\"", "a_b" },
		/* plain, but ends as a hashed one would */
		{ "a-b-h0123abcd", "a-b-h0123abcd", "a_b_h0123abcd" },
		{ "\xc3\xa9", "\"\\u00e9\"", "" },	/* nothing alphanumeric */
	};
	enum { N = sizeof(names) / sizeof(*names) };
	char dir[64], file[512], id[N][128], ID[N][128], head[256], want[512] = "";
	FILE *f;

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "lmn"));
	snprintf(file, sizeof(file), "%s/prog.c", dir);
	f = fopen(file, "w");
	assert_non_null(f);
	fprintf(f, "#include <stdio.h>\n");
	for (int i = 0; i < N; i++) {
		char *path;
		struct run_result hdr;

		snprintf(head, sizeof(head), "name: %s\ninstruction: x\n", names[i].yaml);
		path = profile_with(head);
		hdr = tu_run("lanemap --isa '%s' --format c", path);
		assert_int_equal(hdr.status, 0);
		snprintf(file, sizeof(file), "%s/lm%d.h", dir, i);
		assert_int_equal(tu_put(file, hdr.out), 0);
		tu_free(&hdr);
		unlink(path);
		free(path);
		if (names[i].base) {
			hashed_id(names[i].base, names[i].name, id[i], ID[i]);
		} else {
			snprintf(id[i], 128, "fs_a_b");
			snprintf(ID[i], 128, "FS_A_B");
		}
		for (int j = 0; j < i; j++)
			assert_string_not_equal(id[i], id[j]);
		fprintf(f, "#include \"lm%d.h\"\n", i);
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s 1 9\n",
			 names[i].name);
	}
	fprintf(f, "int main(void)\n{\n");
	for (int i = 0; i < N; i++)
		fprintf(f, "\tprintf(\"%%s %%d %%d\\n\", %s_NAME, %s_c_row(17, 2), %s_c_col(17, 2));\n",
			ID[i], id[i], id[i]);
	fprintf(f, "\treturn 0;\n}\n");
	fclose(f);
	expect_prog_output(dir, want);
	assert_int_equal(tu_scratch_free(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_builtin_matches_csv),
		cmocka_unit_test(awkward_names_and_text),
		cmocka_unit_test(c_format_usage),
		cmocka_unit_test(c_header_survives_trigraphs_and_comment_marks),
		cmocka_unit_test(different_names_get_different_identifiers),
	};

	return cmocka_run_group_tests_name("lanemap_c", tests, NULL, NULL);
}
