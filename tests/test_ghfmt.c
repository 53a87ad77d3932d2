/*
 * test_ghfmt.c - cli/ghfmt.c and `check --format github`: GitHub's
 * workflow-command escaping, worked by hand from its rules ('%' CR LF
 * as %25 %0D %0A in a message; ':' ',' also, as %3A %2C, in a property
 * value: the toolkit's escapeData and escapeProperty), and the
 * annotations check writes for a case that fails and one that cannot be
 * run, at the line and column the text output names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "testutil.h"
#include "../cli/ghfmt.h"

/* What fn wrote into a memory stream. */
static char *written(void (*fn)(FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void escaped_lines(FILE *f)
{
	ghfmt_error(f, "s/a,b:c%.yaml", 3, 12, "t: x, y", "50% done\r\nnext: a, b\n\n");
	ghfmt_error(f, NULL, 0, 0, NULL, "plain");
	ghfmt_error(f, "x.yaml", 0, 4, "", "");
	ghfmt_data(f, "%:,\n");
	fputc('|', f);
	ghfmt_prop(f, "%:,\r=");
}

static void escaping_follows_github(void **state)
{
	char *s = written(escaped_lines);

	(void)state;
	assert_string_equal(s,
		"::error file=s/a%2Cb%3Ac%25.yaml,line=3,col=12,title=t%3A x%2C y::"
		"50%25 done%0D%0Anext: a, b\n"
		"::error::plain\n"
		"::error file=x.yaml,col=4::\n"
		"%25:,%0A|%25%3A%2C%0D=");
	free(s);
}

static void case_lines(FILE *f)
{
	struct fs_err err = { "p.yaml", 4, 2, "a: bad, 100%", FS_EINPUT };
	struct fs_err nofile = { "", 0, 0, "out of memory: x, 8 bytes", FS_ENOMEM };

	ghfmt_case(f, "c.yaml", "one", &err, NULL);
	ghfmt_case(f, "c.yaml", "", &nofile, NULL);
	ghfmt_case(f, "c.yaml", "one", NULL, "one(...): FAIL x\nx: 1 of 2\n");
}

static void case_annotations(void **state)
{
	char *s = written(case_lines);

	(void)state;
	assert_string_equal(s,
		"::error file=p.yaml,line=4,col=2,title=fragsim check%3A one::a: bad, 100%25\n"
		"::error file=c.yaml,title=fragsim check%3A c.yaml::out of memory: x, 8 bytes\n"
		"::error file=c.yaml,line=1,title=fragsim check%3A one::one(...): FAIL x%0Ax: 1 of 2\n");
	free(s);
}

/*
 * End to end, on docs/check-output.md's suite: a pass, a case that does
 * not load (sequences: 3, at 3:12) and one whose kernel maps q heads by
 * modulo (no expect: mismatch, so it fails), the last in a file with a
 * comma in its name. Each case that did not pass is its line, then its
 * annotation, one line.
 */
static void check_writes_annotations(void **state)
{
	char dir[64], path[512], want[1024];
	struct run_result r;
	const char *fail_line = "fail(decode,S=1,ctx=40,bs=16,shuffled,gfx936): FAIL acc: 2360 of 2560 mismatch";
	char *p;

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "ghfmt"));
	snprintf(path, sizeof(path), "%s/bad.yaml", dir);
	assert_int_equal(tu_put(path, "fragsim: 1\nname: bad\nsequences: 3\n"), 0);
	snprintf(path, sizeof(path), "%s/f,1.yaml", dir);
	assert_int_equal(tu_put(path, "fragsim: 1\nname: fail\nsequences:\n  - {context: 40}\n"
				      "kernel: {gqa_map: modulo}\n"), 0);
	r = tu_run("check cases/edge/one-token.yaml %s --format github", dir);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.err, "");
	/* The pass (last: /tmp sorts first): its line and no annotation. */
	p = strstr(r.out, "edge-one-token(prefill,S=1,ctx=1,bs=16,shuffled,gfx936): OK\n");
	assert_non_null(p);
	assert_string_equal(strchr(p, '\n') + 1, "1 passed, 1 failed, 1 could not be run\n");
	snprintf(want, sizeof(want), "%s/bad.yaml: ERROR %s/bad.yaml:3:12: sequences: expected a list of sequences\n"
		 "::error file=%s/bad.yaml,line=3,col=12,title=fragsim check%%3A %s/bad.yaml::"
		 "sequences: expected a list of sequences\n", dir, dir, dir, dir);
	assert_non_null(strstr(r.out, want));
	/* The failure: its line, then the annotation at line 1 of the file
	 * (',' as %2C), the details' lines joined by %0A. */
	p = strstr(r.out, fail_line);
	assert_non_null(p);
	p = strchr(p, '\n');
	assert_non_null(p);
	snprintf(want, sizeof(want), "\n::error file=%s/f%%2C1.yaml,line=1,title=fragsim check%%3A fail::%s",
		 dir, fail_line);
	assert_true(!strncmp(p, want, strlen(want)));
	p = strchr(p + 1, '\n');
	assert_non_null(p);
	*p = '\0';
	assert_non_null(strstr(r.out, "%0Aacc: 2360 of 2560 mismatch"));
	assert_non_null(strstr(r.out, "%0Aout: 4608 of 6144 mismatch"));
	assert_non_null(strstr(p + 1, "edge-one-token"));
	tu_free(&r);

	/* text, the default, has no annotation; --json and github conflict. */
	r = tu_run("check %s --format text", dir);
	assert_int_equal(r.status, 2);
	assert_null(strstr(r.out, "::error"));
	tu_free(&r);
	r = tu_run("check %s --format github --json", dir);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	assert_non_null(strstr(r.err, "fragsim: error: --format github annotates the lines, "
				      "which --json replaces: give one of them\n"));
	tu_free(&r);
	r = tu_run("check %s --format xml", dir);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--format must be text or github, not 'xml'"));
	tu_free(&r);
	assert_int_equal(tu_scratch_free(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(escaping_follows_github),
		cmocka_unit_test(case_annotations),
		cmocka_unit_test(check_writes_annotations),
	};

	return cmocka_run_group_tests_name("ghfmt", tests, NULL, NULL);
}
