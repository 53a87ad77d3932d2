/*
 * test_bugclasses.c - every bug class of sim/attn/kernel.c's table has a
 * test in which `fragsim diff` names it from a dump written by a model of
 * the buggy kernel that is not fragsim's emulation (issue 22). The list
 * is tests/bugclasses.h; this file holds it to the catalogue (a class
 * without a row fails, so a new class must bring its model), to the
 * tests it names (the file exists and defines and registers the
 * function) and to docs/bug-classes.md's table (one row per class,
 * naming the same test).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../sim/attn/kernel.h"
#include "bugclasses.h"
#include "testutil.h"

/* Row i of the list names class b (key=value). */
static int row_is(size_t i, enum kern_bug b)
{
	const struct kern_bug_info *bi = kernel_bug(b);
	size_t n = strlen(bi->key);
	const char *c = bugclass_models[i].cls;

	return !strncmp(c, bi->key, n) && c[n] == '=' && !strcmp(c + n + 1, bi->bad);
}

static void every_class_has_a_model_row(void **state)
{
	char missing[4096] = "";
	size_t nm = 0;

	(void)state;
	for (int b = 0; b < BUG_COUNT; b++) {
		int rows = 0;

		for (size_t i = 0; i < FS_ARRAY_LEN(bugclass_models); i++)
			rows += row_is(i, (enum kern_bug)b);
		if (rows != 1) {
			int n = snprintf(missing + nm, sizeof(missing) - nm, "%s=%s: %d rows\n",
					 kernel_bug((enum kern_bug)b)->key,
					 kernel_bug((enum kern_bug)b)->bad, rows);

			if (n > 0 && nm + (size_t)n < sizeof(missing))
				nm += (size_t)n;
		}
	}
	if (nm)
		fail_msg("classes of sim/attn/kernel.c without exactly one row in "
			 "tests/bugclasses.h (a new class needs a model that diff names "
			 "it from):\n%s", missing);
	/* and no row for a class the catalogue does not have */
	for (size_t i = 0; i < FS_ARRAY_LEN(bugclass_models); i++) {
		int b;

		for (b = 0; b < BUG_COUNT && !row_is(i, (enum kern_bug)b); b++)
			;
		if (b == BUG_COUNT)
			fail_msg("tests/bugclasses.h: '%s' is no class of sim/attn/kernel.c",
				 bugclass_models[i].cls);
	}
}

/* The named test exists: defined in its file and run by its main. */
static void every_row_names_a_test_that_runs(void **state)
{
	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(bugclass_models); i++) {
		const struct bugclass_model *m = &bugclass_models[i];
		char path[512], def[160], reg[160];
		char *src;

		snprintf(path, sizeof(path), "%s/tests/%s", FRAGSIM_SRC, m->file);
		src = tu_slurp(path);
		snprintf(def, sizeof(def), "static void %s(void **state)", m->test);
		snprintf(reg, sizeof(reg), "cmocka_unit_test(%s)", m->test);
		if (!strstr(src, def) || !strstr(src, reg))
			fail_msg("%s: tests/%s has no test %s (defined and registered)",
				 m->cls, m->file, m->test);
		free(src);
	}
}

/* docs/bug-classes.md's table: one row per class, naming the list's test. */
static void the_doc_table_is_the_list(void **state)
{
	char path[512];
	char *doc;
	int rows = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/docs/bug-classes.md", FRAGSIM_SRC);
	doc = tu_slurp(path);
	for (size_t i = 0; i < FS_ARRAY_LEN(bugclass_models); i++) {
		const struct bugclass_model *m = &bugclass_models[i];
		char want[512];

		snprintf(want, sizeof(want), "| `%s` | `tests/%s`: `%s` |", m->cls, m->file, m->test);
		if (!strstr(doc, want))
			fail_msg("docs/bug-classes.md has no row '%s'", want);
	}
	for (const char *p = strstr(doc, "\n| `"); p; p = strstr(p + 1, "\n| `")) {
		const char *close = strchr(p + 4, '`');

		rows += close && !strncmp(close, "` | `tests/", 11);
	}
	assert_int_equal(rows, (int)FS_ARRAY_LEN(bugclass_models));
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_class_has_a_model_row),
		cmocka_unit_test(every_row_names_a_test_that_runs),
		cmocka_unit_test(the_doc_table_is_the_list),
	};

	return cmocka_run_group_tests_name("bugclasses", tests, NULL, NULL);
}
