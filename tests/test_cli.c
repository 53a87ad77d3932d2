/*
 * test_cli.c - the fragsim command line, run as a user would run it:
 * output text, exit codes (docs/design.md 3.5) and error messages. Expected
 * lines are worked out by hand from the published layouts (gfx936 C:
 * lane = m + 16*(n % 4), reg = n / 4), not captured from the program.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include "testutil.h"
#include "../cli/cli.h"
#include "../lib/clock.h"
#include "../lib/runcase.h"

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The line of `text` that starts with `prefix`, copied into out. */
static int find_line(const char *text, const char *prefix, char *out, size_t len)
{
	const char *p = text;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);

		if (!strncmp(p, prefix, strlen(prefix)) && n < len) {
			memcpy(out, p, n);
			out[n] = '\0';
			return 1;
		}
		p = eol ? eol + 1 : NULL;
	}
	return 0;
}

static void lanemap_gfx936_c_grid(void **state)
{
	struct run_result r = tu_run("lanemap --isa gfx936 --matrix C");
	char line[512];

	(void)state;
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "C (16 x 16, i32), cell = lane:reg"));
	/* Row 1: C[1][n] lives in lane 1 + 16*(n % 4), register n / 4. */
	assert_true(find_line(r.out, "   1 ", line, sizeof(line)));
	assert_string_equal(line,
		"   1  1:0 17:0 33:0 49:0  1:1 17:1 33:1 49:1  1:2 17:2 33:2 49:2  1:3 17:3 33:3 49:3");
	/* Per-lane view: lane 2 holds columns 2, 6, 10, 14 of row 2 (the
	 * article's own example of lane_col = 2). */
	assert_true(find_line(r.out, "   2  [", line, sizeof(line)));
	assert_string_equal(line, "   2  [2][0] [2][4] [2][8] [2][12]");
	assert_true(find_line(r.out, "  34  [", line, sizeof(line)));
	assert_string_equal(line, "  34  [2][2] [2][6] [2][10] [2][14]");
	tu_free(&r);
}

static void lanemap_entry_and_lane(void **state)
{
	struct run_result r = tu_run("lanemap --isa gfx936 --entry 'C[3][10]'");

	(void)state;
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out,
		"C[3][10] is held by lane 35, element 2 (register 2, byte 0)\n");
	tu_free(&r);
	/* RDNA3 wave32 holds A twice: lanes 5 and 21. */
	r = tu_run("lanemap --isa rdna3-wmma-i32-16x16x16-iu8-w32 --entry 'A[5][6]' --format csv");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "matrix,lane,e,reg,byte,row,col\n"
				   "A,5,6,1,2,5,6\nA,21,6,1,2,5,6\n");
	tu_free(&r);
	r = tu_run("lanemap --isa gfx936 --lane 17");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "  A e7  reg 1 byte 3  A[1][15]\n"));
	assert_non_null(strstr(r.out, "  B e0  reg 0 byte 0  B[8][1]\n"));
	assert_non_null(strstr(r.out, "  C e2  reg 2 byte 0  C[1][9]\n"));
	tu_free(&r);
}

static void lanemap_csv_has_every_slot(void **state)
{
	struct run_result r = tu_run("lanemap --isa gfx936 --format csv");

	(void)state;
	assert_int_equal(r.status, 0);
	assert_int_equal(strncmp(r.out, "matrix,lane,e,reg,byte,row,col\n", 31), 0);
	assert_int_equal(count_lines(r.out), 1 + 64 * 8 + 64 * 8 + 64 * 4);
	assert_non_null(strstr(r.out, "\nC,17,2,2,0,1,9\n"));
	assert_non_null(strstr(r.out, "\nA,33,5,1,1,1,21\n"));
	tu_free(&r);
}

static void lanemap_md_and_json(void **state)
{
	struct run_result r = tu_run("lanemap --isa gfx936 --matrix C --format md");

	(void)state;
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "| 1 | 1:0 | 17:0 | 33:0 | 49:0 | 1:1 |"));
	tu_free(&r);
	r = tu_run("lanemap --isa gfx936 --matrix C --format json");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"profile\": \"gfx936\""));
	tu_free(&r);
	if (system("/usr/bin/python3 -c 'import json' 2>/dev/null") == 0) {
		r = tu_run("lanemap --isa gfx936 --format json | /usr/bin/python3 -c "
			   "'import json,sys; d=json.load(sys.stdin); "
			   "s=[x for o in d[\"operands\"] if o[\"matrix\"]==\"C\" for x in o[\"slots\"] "
			   "if x[\"lane\"]==17 and x[\"e\"]==2][0]; print(s[\"row\"], s[\"col\"])'");
		assert_int_equal(r.status, 0);
		assert_string_equal(r.out, "1 9\n");
		tu_free(&r);
	}
}

static void lanemap_list(void **state)
{
	struct run_result r = tu_run("lanemap list --names");

	(void)state;
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out,
		"cdna3-mfma-i32-16x16x32-i8\ncdna3-mfma-i32-32x32x16-i8\n"
		"cdna4-mfma-i32-16x16x64-i8\ngfx936-article\ngfx936-quad\ngfx936\n"
		"rdna3-wmma-i32-16x16x16-iu8-w32\nrdna3-wmma-i32-16x16x16-iu8-w64\n"
		"rdna4-wmma-i32-16x16x16-iu8-w32\nsm80-mma-m16n8k16-s8\n"
		"sm80-mma-m16n8k32-s8\n");
	tu_free(&r);
	r = tu_run("lanemap list");
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines(r.out), 11);
	tu_free(&r);
}

static void check_article_profile_fails(void **state)
{
	struct run_result r = tu_run("lanemap check gfx936-article");

	(void)state;
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "gfx936-article: invalid:"));
	/* The first bad column: lane 4, register 3, col = 4 % 16 + 4*3 = 16. */
	assert_non_null(strstr(r.out,
		"\n  C lane 4 e 3 (reg 3, byte 0): col = 16, outside 0..15\n"));
	tu_free(&r);
	r = tu_run("lanemap check gfx936 profiles/sm80-mma-m16n8k32-s8.yaml");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "gfx936: valid: v_mmac_i32_16x16x32_i8, wave64"));
	tu_free(&r);
	/* Invalid beats valid; unreadable beats both. */
	r = tu_run("lanemap check gfx936 gfx936-article");
	assert_int_equal(r.status, 1);
	tu_free(&r);
	r = tu_run("lanemap check gfx936-article /nonexistent.yaml");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "fragsim: error: /nonexistent.yaml: cannot open"));
	tu_free(&r);
}

static void diff_gfx936_quad(void **state)
{
	struct run_result r = tu_run("lanemap diff gfx936 gfx936-quad");

	(void)state;
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out,
		"A: 0 of 512 entries differ: identical\n"
		"B: 0 of 512 entries differ: identical\n"
		"C: 240 of 256 entries differ: lanes interleaved by 4: Y lane i is X lane 16*(i % 4) + i / 4\n"
		"   bits: lane bits permuted: lane' = (l2, l3, l4, l5, l0, l1)  e' = (e0, e1); "
		"entries: row' = (r2, r3, c0, c1)  col' = (r0, r1, c2, c3)\n"
		/* Sample slots, by hand: lane 0 holds C[0][4e] in both maps;
		 * lane 1 is row 1, col 0 + 4e in gfx936 (row = lane % 16,
		 * col = lane / 16 + 4e), row 0, col 1 + 4e in quad (row =
		 * lane / 4, col = lane % 4 + 4e). 240 slots move in all. */
		"  C lane 1 e 0: gfx936 C[1][0], gfx936-quad C[0][1]\n"
		"  C lane 1 e 1: gfx936 C[1][4], gfx936-quad C[0][5]\n"
		"  C lane 1 e 2: gfx936 C[1][8], gfx936-quad C[0][9]\n"
		"  C lane 1 e 3: gfx936 C[1][12], gfx936-quad C[0][13]\n"
		"  ... 236 more\n"
		"gfx936 and gfx936-quad differ in 240 entries\n");
	tu_free(&r);
	r = tu_run("lanemap diff gfx936 profiles/gfx936.yaml");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "are identical"));
	tu_free(&r);
	r = tu_run("lanemap diff gfx936 gfx936-article");
	assert_int_equal(r.status, 2);
	tu_free(&r);
}

static void usage_errors_exit_2(void **state)
{
	static const char *const bad[] = {
		"", "frobnicate", "lanemap", "lanemap --isa", "lanemap --isa nope",
		"lanemap --isa gfx936 --matrix D", "lanemap --isa gfx936 --format xml",
		"lanemap --isa gfx936 --lane 64", "lanemap --isa gfx936 --entry 'C[16][0]'",
		"lanemap --isa gfx936 --entry 'Q[1][1]'", "lanemap diff gfx936",
		"lanemap check", "lanemap --isa gfx936 --bogus",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct run_result r = tu_run("%s", bad[i]);

		if (r.status != 2 || !strstr(r.err, "fragsim: error: "))
			fail_msg("'fragsim %s': status %d, stderr '%s'", bad[i], r.status, r.err);
		tu_free(&r);
	}
}

static void yaml_error_location_reaches_the_user(void **state)
{
	char *p = tu_write_temp(".yaml",
		"fragsim_profile: 1\nname: t\ninstruction: x\nwave: 64\nm: 16\nn: 16\nk: 32\n"
		"a: {type: i8, elements: 8, row: \"lane % 16\", col: \"8 * (lane / 16 + e\"}\n");
	struct run_result r = tu_run("lanemap check %s", p);
	char want[512];

	(void)state;
	assert_int_equal(r.status, 2);
	/* The quote is at column 51; the unclosed '(' leaves the error at the
	 * end of the expression, expression column 19, file column 70. */
	snprintf(want, sizeof(want), "fragsim: error: %s:8:70: a.col: at column 19 of the expression: expected ')'", p);
	if (strncmp(r.err, want, strlen(want)))
		fail_msg("stderr '%s', expected it to start with '%s'", r.err, want);
	tu_free(&r);
	unlink(p);
	free(p);
}

static void help_and_version(void **state)
{
	struct run_result r = tu_run("--version");

	(void)state;
	assert_int_equal(r.status, 0);
	assert_int_equal(strncmp(r.out, "fragsim ", 8), 0);
	tu_free(&r);
	r = tu_run("lanemap --help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage: fragsim lanemap"));
	tu_free(&r);
	r = tu_run("--help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "lanemap"));
	tu_free(&r);
	/* A full stdout is an internal error, not success. */
	if (access("/dev/full", W_OK) == 0) {
		int st = system("'" FRAGSIM_BIN "' lanemap --isa gfx936 >/dev/full 2>/dev/null");

		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 3);
	}
}


/* Issue 9 point 15: every number on the command line goes through one
 * strict parser. Each of these was accepted before (exit 0: "1/2junk"
 * read as 1/2, 99999999999999999999 clamped, C[4294967299][0] wrapped to
 * C[3][0]); now each is exit 2 and the message names option and value. */
static void numeric_options_reject_garbage(void **state)
{
	static const char *const bad[][3] = {
		{ "check cases/edge/one-token.yaml --shard 1/2junk", "--shard", "'1/2junk'" },
		{ "check cases/edge/one-token.yaml --shard 1/99999999999999999999", "--shard",
		  "'1/99999999999999999999'" },
		{ "check cases/edge/one-token.yaml --shard ' 1/2'", "--shard", "' 1/2'" },
		{ "check cases/edge/one-token.yaml --shard +1/2", "--shard", "'+1/2'" },
		{ "check cases/edge/one-token.yaml --shard 1/", "--shard", "'1/'" },
		{ "check cases/edge/one-token.yaml --shard 0/2", "--shard", "'0/2'" },
		{ "run cases/edge/one-token.yaml --threads 2x", "--threads", "'2x'" },
		{ "run cases/edge/one-token.yaml --threads 99999999999999999999", "--threads",
		  "'99999999999999999999'" },
		{ "diff cases/edge/one-token.yaml --dump /nonexistent --max 3junk", "--max", "'3junk'" },
		{ "diff cases/edge/one-token.yaml --dump /nonexistent --tol ' 1'", "--tol", "' 1'" },
		{ "diff cases/edge/one-token.yaml --dump /nonexistent --tol nan", "--tol", "'nan'" },
		{ "diff cases/edge/one-token.yaml --dump /nonexistent --tol 1e999", "--tol", "'1e999'" },
		{ "diff cases/edge/one-token.yaml --dump /nonexistent --tol 0x10", "--tol", "'0x10'" },
		{ "lanemap --isa gfx936 --lane +3", "--lane", "'+3'" },
		{ "lanemap --isa gfx936 --lane 3x", "--lane", "'3x'" },
		{ "lanemap --isa gfx936 --entry 'C[4294967299][0]'", "--entry", "C[4294967299][0]" },
		{ "lanemap --isa gfx936 --entry 'C[3x][0]'", "--entry", "'C[3x][0]'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct run_result r = tu_run("%s", bad[i][0]);

		if (r.status != 2 || !strstr(r.err, bad[i][1]) || !strstr(r.err, bad[i][2]) ||
		    strncmp(r.err, "fragsim: error: ", 16) || r.out[0])
			fail_msg("'fragsim %s': status %d, stdout '%s', stderr '%s'", bad[i][0],
				 r.status, r.out, r.err);
		tu_free(&r);
	}
	/* The strict parser still takes what it should. */
	{
		struct run_result r = tu_run("lanemap --isa gfx936 --entry ' c[ 3 ][10] '");

		assert_int_equal(r.status, 0);
		assert_string_equal(r.out, "C[3][10] is held by lane 35, element 2 (register 2, byte 0)\n");
		tu_free(&r);
	}
}

/* Issue 11 point 2: every command reads its options through one table
 * parser, so each misuse gets one message naming the option, on every
 * command alike. Before, `--json=1` was "unexpected argument
 * '--json=1'", lanemap check took `--bogus` for a profile file, and
 * after `--` nothing was a word. */
static void option_errors_name_the_option(void **state)
{
	static const char *const bad[][2] = {
		{ "run cases/edge/one-token.yaml --bogus", "unknown option '--bogus'" },
		{ "run cases/edge/one-token.yaml --out", "--out needs a value" },
		{ "run cases/edge/one-token.yaml --json=1", "--json takes no value, not '1'" },
		{ "run cases/edge/one-token.yaml --exec fast",
		  "--exec must be auto, scalar, portable, avx2 or avx512, not 'fast'" },
		{ "run cases/edge/one-token.yaml --format=xml",
		  "--format must be npy or safetensors, not 'xml'" },
		{ "check cases/edge/one-token.yaml --exec=x", "--exec must be auto, scalar," },
		{ "lanemap --isa gfx936 --matrix D", "--matrix must be A, B or C, not 'D'" },
		{ "lanemap check gfx936 --bogus", "unknown option '--bogus'" },
		{ "lanemap diff gfx936 gfx936 --format md", "--format must be text, json, svg or html, not 'md'" },
		{ "probe plan --isa gfx936 --out p --plan q", "unknown option '--plan'" },
		{ "mutate cases/edge --jsn", "unknown option '--jsn'" },
		{ "route -- --bogus.yaml", "--bogus.yaml" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct run_result r = tu_run("%s", bad[i][0]);

		if (r.status != 2 || r.out[0] || strncmp(r.err, "fragsim: error: ", 16) ||
		    !strstr(r.err, bad[i][1]))
			fail_msg("'fragsim %s': status %d, stdout '%s', stderr '%s'", bad[i][0],
				 r.status, r.out, r.err);
		tu_free(&r);
	}
	/* after `--` an argument is a word, not an option: route reads the
	 * file "--bogus.yaml" (and says so) rather than refusing an option */
	{
		struct run_result r = tu_run("route -- --bogus.yaml");

		assert_null(strstr(r.err, "unknown option"));
		tu_free(&r);
	}
	/* --x=V is --x V */
	{
		struct run_result r = tu_run("lanemap --isa=gfx936 --entry=C[3][10]");

		assert_int_equal(r.status, 0);
		assert_string_equal(r.out, "C[3][10] is held by lane 35, element 2 (register 2, byte 0)\n");
		tu_free(&r);
	}
}

static int have_python(void)
{
	return system("/usr/bin/python3 -c 'import json, xml.etree.ElementTree' 2>/dev/null") == 0;
}

/* Run a Python script (text) with `input` on stdin and argv[1] = arg;
 * returns what it printed (stdout and stderr, malloc'd), *status its exit. */
static char *python(const char *script, const char *input, const char *arg, int *status)
{
	char *sp = tu_write_temp(".py", script), *ip = tu_write_temp(".txt", input);
	char cmd[1024], out[64], *text;
	int st;

	snprintf(out, sizeof(out), "/tmp/fragsim-py-%d.out", (int)getpid());
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s '%s' <%s >%s 2>&1", sp, arg, ip, out);
	st = system(cmd);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	text = tu_slurp(out);
	unlink(out);
	unlink(sp);
	unlink(ip);
	free(sp);
	free(ip);
	return text;
}

/* A directory of three cases: one that passes (a copy of the shipped
 * one-token case), one that cannot load and one that fails. Returns its
 * malloc'd path. */
static char *three_case_dir(void)
{
	char *dir = malloc(64), path[512];

	assert_non_null(tu_scratch_new(dir, 64, "check"));
	assert_int_equal(tu_sh("cp '%s/cases/edge/one-token.yaml' %s/a-good.yaml",
			       FRAGSIM_SRC, dir), 0);
	snprintf(path, sizeof(path), "%s/b-bad.yaml", dir);
	/* "sequences: 3": a number where the list goes, line 3 column 12 */
	assert_int_equal(tu_put(path, "fragsim: 1\nname: bad\nsequences: 3\n"), 0);
	snprintf(path, sizeof(path), "%s/c-fail.yaml", dir);
	/* kv head = q head % kv_heads, no expect: mismatch: q head 1 reads kv
	 * head 1 (docs/bug-classes.md), so the accumulators differ */
	assert_int_equal(tu_put(path, "fragsim: 1\nname: fail\nsequences:\n"
				"  - {context: 40}\nkernel: {gqa_map: modulo}\n"), 0);
	return dir;
}

static void rm_dir(char *dir)
{
	assert_int_equal(tu_scratch_free(dir), 0);
	free(dir);
}

/* Issue 9 point 20: --json lists every case, the one that could not be
 * run included (before, it was left out and only counted), as one
 * document in the shape docs/check-output.md gives. */
static void check_json_lists_every_case(void **state)
{
	char *dir = three_case_dir(), *out;
	struct run_result r;
	int st;

	(void)state;
	if (!have_python()) {
		rm_dir(dir);
		skip();
	}
	r = tu_run("check %s --json", dir);
	/* exit 2: a case could not be run, which beats a failure */
	assert_int_equal(r.status, 2);
	assert_string_equal(r.err, "");
	out = python(
		"import json, sys\n"
		"d = json.load(sys.stdin)\n"
		"assert d['fragsim_check'] == 1 and d['shard'] == {'k': 1, 'n': 1}, d['shard']\n"
		"assert [d[k] for k in ('total', 'passed', 'failed', 'errors')] == [3, 1, 1, 1]\n"
		"for c in d['cases']:\n"
		"    assert set(c) >= {'file', 'case', 'status', 'reason', 'seconds'}, c\n"
		"    assert ('error' in c) == (c['status'] == 'error') == ('result' not in c), c\n"
		"    assert c['file'].startswith(sys.argv[1] + '/'), c['file']\n"
		"    why = '' if c['status'] == 'error' else c['reason'].split(' ')[0]\n"
		"    print(c['file'][len(sys.argv[1]):], c['case'], c['status'], why)\n"
		"e = d['cases'][1]['error']\n"
		"print(e['file'] == d['cases'][1]['file'], e['line'], e['col'], e['message'])\n"
		"print(d['cases'][1]['reason'] == '%s:3:12: %s' % (e['file'], e['message']))\n"
		"print(d['cases'][2]['result']['exact']['acc']['mismatches'] > 0)\n",
		r.out, dir, &st);
	if (st)
		fail_msg("python: %s\non:\n%s", out, r.out);
	assert_string_equal(out,
		"/a-good.yaml edge-one-token pass \n"
		"/b-bad.yaml None error \n"
		"/c-fail.yaml fail fail acc:\n"
		"True 3 12 sequences: expected a list of sequences\n"
		"True\nTrue\n");
	free(out);
	tu_free(&r);
	rm_dir(dir);
}

/* Issue 9 point 20: the JUnit file is well-formed XML with the schema's
 * attributes, a classname per directory, a timestamp, skipped counts,
 * and failure and error elements with a body that says why. Before: no
 * body, one classname "fragsim", no timestamp, no skipped. */
static void check_junit_is_wellformed(void **state)
{
	char *dir = three_case_dir(), *out, xml[64], *text, want[512];
	struct run_result r;
	int st;

	(void)state;
	if (!have_python()) {
		rm_dir(dir);
		skip();
	}
	snprintf(xml, sizeof(xml), "/tmp/fragsim-junit-cli-%d.xml", (int)getpid());
	r = tu_run("check %s --junit %s", dir, xml);
	assert_int_equal(r.status, 2);
	tu_free(&r);
	text = tu_slurp(xml);
	out = python(
		"import re, sys, xml.etree.ElementTree as ET\n"
		"root = ET.fromstring(sys.stdin.read())\n"
		"assert root.tag == 'testsuites'\n"
		"for s in [root] + root.findall('testsuite'):\n"
		"    print(s.tag, *[s.get(a) for a in ('tests', 'failures', 'errors', 'skipped')])\n"
		"    float(s.get('time'))\n"
		"s = root.find('testsuite')\n"
		"assert re.fullmatch(r'\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d', s.get('timestamp')), s.get('timestamp')\n"
		"cls = sys.argv[1].strip('/').replace('/', '.')\n"
		"for c in s.findall('testcase'):\n"
		"    assert c.get('classname') == cls, c.get('classname')\n"
		"    float(c.get('time'))\n"
		"    bad = [e for e in c if e.tag in ('failure', 'error')]\n"
		"    print(c.get('name').split('/')[-1], *[e.tag + ' ' + e.get('type') for e in bad])\n"
		"    for e in bad:\n"
		"        assert e.get('message') and e.get('message') in e.text, e.text\n"
		"        print(' ', '|'.join(l.split(':')[0].split(' ')[0] for l in e.text.splitlines()))\n",
		text, dir, &st);
	if (st)
		fail_msg("python: %s\non:\n%s", out, text);
	/* the failing case's body: its verdict line, then each tensor's first
	 * mismatch (acc; scores, probs and out follow from the acc) */
	snprintf(want, sizeof(want),
		 "testsuites 3 1 1 0\n"
		 "testsuite 3 1 1 0\n"
		 "edge-one-token\n"
		 "b-bad.yaml error input\n"
		 "  %s/b-bad.yaml\n"
		 "fail failure mismatch\n"
		 "  fail(decode,S=1,ctx=40,bs=16,shuffled,gfx936)|acc|scores|probs|out\n",
		 dir);
	assert_string_equal(out, want);
	free(text);
	unlink(xml);
	free(out);
	rm_dir(dir);
}

/* Issue 9 point 20: usage problems of check are exit 2 before any case
 * runs (stdout stays empty). Before: a directory with no case was
 * "0 passed, 0 failed", exit 0; a --junit file that could not be
 * created was exit 3 after the whole suite had run. */
static void check_usage_errors_before_running(void **state)
{
	char dir[64];
	static const char *const bad[][2] = {
		{ "check %s", "no *.yaml case there" },
		{ "check cases/edge/one-token.yaml %s", "no *.yaml case there" },
		{ "check cases/edge/one-token.yaml --junit %s/no/such/dir/j.xml", "cannot be written" },
		{ "check cases/edge/one-token.yaml --junit %s", "is a directory" },
		{ "check cases/edge/one-token.yaml --shard 2/1%.0s", "--shard" },
	};

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "empty"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct run_result r = tu_run(bad[i][0], dir);

		if (r.status != 2 || r.out[0] || !strstr(r.err, bad[i][1]) ||
		    strncmp(r.err, "fragsim: error: ", 16))
			fail_msg("'%s' (%s): status %d, stdout '%s', stderr '%s'", bad[i][0], dir,
				 r.status, r.out, r.err);
		tu_free(&r);
	}
	/* nothing was left behind in the directory */
	assert_int_equal(rmdir(dir), 0);
}

/* Issue 9 point 20: a failed threshold prints the limit as written and
 * the value with enough digits to be on its side. Before: "out cosine
 * 1 < out_cosine_min 1" (%.6g of 0.99999999 and of a value above
 * 0.9999995). The case: 40 keys, the shipped defaults, whose out cosine
 * is below 1 - 1e-8 (int8 costs more than that). */
static void threshold_failure_prints_its_digits(void **state)
{
	char *p = tu_write_temp(".yaml", "fragsim: 1\nname: thr\nsequences:\n  - {context: 40}\n"
					 "check: {out_cosine_min: 0.99999999}\n");
	struct run_result r = tu_run("check %s", p);
	const char *v;
	double got;

	(void)state;
	assert_int_equal(r.status, 1);
	v = strstr(r.out, ": FAIL out cosine ");
	if (!v || !strstr(v, " < out_cosine_min 0.99999999\n"))
		fail_msg("stdout '%s'", r.out);
	/* the value printed must itself read as below the limit */
	got = strtod(v + strlen(": FAIL out cosine "), NULL);
	assert_true(got < 0.99999999);
	tu_free(&r);
	unlink(p);
	free(p);
}

/* Issue 9 point 21: manifest.json's "golden" lists the groups written.
 * A case without split-K segments asks for splitk (golden: all) and
 * gets no splitk file; before, the manifest listed it all the same. */
static void manifest_lists_only_what_was_written(void **state)
{
	char *p = tu_write_temp(".yaml", "fragsim: 1\nname: nosplit\nsequences:\n  - {context: 40}\n"
					 "golden: all\n");
	char out[64], mpath[128], *m;
	struct run_result r;

	(void)state;
	assert_non_null(tu_scratch_new(out, sizeof(out), "man"));
	r = tu_run("run %s --out %s/g", p, out);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	snprintf(mpath, sizeof(mpath), "%s/g/manifest.json", out);
	m = tu_slurp(mpath);
	assert_non_null(strstr(m, "\n  \"golden\": [\"inputs\", \"acc\", \"scores\", \"out\"],\n"));
	/* (the case echo in case_yaml still says what was asked) */
	assert_null(strstr(m, "splitk_"));
	free(m);
	assert_int_equal(tu_scratch_free(out), 0);
	unlink(p);
	free(p);
}

/* Issue 9 point 21: the doc-test is a checker, so it has must-fail
 * cases: a wrong output and an unshown exit status 2 each fail, and the
 * masks (times, `...` lines and `...` inside a line) match only what
 * they say, and progress lines are dropped only when they are progress
 * lines. The expected counts are worked out from the document. */
static void doctest_catches_a_wrong_document(void **state)
{
	char *md = tu_write_temp(".md",
		"# t\n\n```yaml file=x.txt\nfrom a file\n```\n\n"
		"```console\n"
		"$ echo 'took 0.25 s, then 12ms'\n"	/* 1 pass: times masked */
		"took 9 s, then 1 ms\n"
		"$ printf 'a\\nb\\nc\\nd\\n'\n"		/* 2 pass: `...` lines */
		"a\n...\nd\n"
		"$ echo 'exec (avx2) done'\n"		/* 3 pass: `...` in a line */
		"exec (...) done\n"
		"$ cat x.txt\n"				/* 4 pass: file= block */
		"from a file\n"
		"$ echo right\n"			/* 5 FAIL: output differs */
		"wrong\n"
		"$ fragsim lanemap --isa nope\n"	/* 6 FAIL: exit 2 unshown */
		"...\n"
		"$ fragsim lanemap --isa nope\n"	/* 7 pass: shown by echo */
		"...\n"
		"$ echo $?\n"				/* 8 pass */
		"2\n"
		"$ printf 'a\\nb\\n'\n"			/* 9 FAIL: `...` needs a line */
		"a\n...x\n"
		/* 10 pass: a progress line (a slow machine's) dropped */
		"$ printf 'fragsim: c: reference 25%% (1 of 4 rows) at 2.1 s\\nok\\n'\n"
		"ok\n"
		/* 11 pass: kept, and masked, where the document shows one */
		"$ printf 'fragsim: c: emulation at 2.1 s\\nok\\n'\n"
		"fragsim: c: emulation at 3 s\nok\n"
		/* 12 FAIL: an error that looks like one is not dropped */
		"$ printf 'fragsim: c: reference: bad at 2\\nok\\n'\n"
		"ok\n"
		"```\n\n```sh\nexit 3\n```\n");		/* not run */
	char cmd[1024], out[64], *text;
	int st;

	(void)state;
	if (!have_python()) {
		unlink(md);
		free(md);
		skip();
	}
	snprintf(out, sizeof(out), "/tmp/fragsim-doctest-%d.out", (int)getpid());
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 '%s/tests/doctest.py' --fragsim '%s' %s >%s 2>&1",
		 FRAGSIM_SRC, FRAGSIM_BIN, md, out);
	st = system(cmd);
	text = tu_slurp(out);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 1 || !strstr(text, "\n8 passed, 4 failed\n"))
		fail_msg("doctest: status %d, output:\n%s", st, text);
	assert_non_null(strstr(text, ":18: $ echo right\n  output differs\n"));
	assert_non_null(strstr(text, ":20: $ fragsim lanemap --isa nope\n  exit status 2"));
	assert_non_null(strstr(text, ":26: $ printf 'a\\nb\\n'\n  output differs\n"));
	assert_non_null(strstr(text, ":34: $ printf 'fragsim: c: reference: bad"));
	free(text);
	unlink(out);
	unlink(md);
	free(md);
}

/* JUnit stays well-formed whatever a path holds: a case file whose name
 * has a control character and a byte that is not UTF-8 (both legal in a
 * Linux file name) and that cannot be run, so the name is in the
 * message, the body and the attributes. Before, both bytes went through
 * as they were and no XML parser would read the file. */
static void check_junit_survives_odd_bytes(void **state)
{
	char dir[64], path[128], xml[160], *text, *out;
	int st;

	(void)state;
	if (!have_python())
		skip();
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "odd"));
	snprintf(path, sizeof(path), "%s/a\x01" "b\xff" "c.yaml", dir);
	assert_int_equal(tu_put(path, "fragsim: 1\nname: odd\nsequences: 3\n"), 0);
	snprintf(xml, sizeof(xml), "%s/j.xml", dir);
	{
		struct run_result r = tu_run("check '%s' --junit %s", dir, xml);

		assert_int_equal(r.status, 2);
		tu_free(&r);
	}
	text = tu_slurp(xml);
	out = python("import sys, xml.etree.ElementTree as ET\n"
		     "root = ET.fromstring(sys.stdin.buffer.read())\n"
		     "e = root.find('testsuite/testcase/error')\n"
		     "print(ascii(e.get('message').split('/')[-1]))\n",
		     text, "", &st);
	if (st)
		fail_msg("python: %s\non:\n%s", out, text);
	/* \x01 dropped, \xff as U+FFFD */
	assert_string_equal(out, "'ab\\ufffdc.yaml:3:12: sequences: expected a list of sequences'\n");
	free(out);
	free(text);
	assert_int_equal(tu_scratch_free(dir), 0);
}

/* --out tests (docs/output-dir.md): a scratch directory, and a case
 * small enough to run in milliseconds. */
#define OUT_CASE "cases/qwen35-27b/decode-1.yaml"

/*
 * A directory of the user's that merely holds a manifest.json is not a
 * golden: `run --out` refuses it with exit 2 before running (nothing on
 * stdout: the summary comes after the run) and leaves it as it was; so
 * does a path under a file.
 */
static void out_refuses_before_the_run(void **state)
{
	char dir[64], p[200];
	struct run_result r;
	char *text;

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "cli"));
	snprintf(p, sizeof(p), "%s/mine", dir);
	assert_int_equal(mkdir(p, 0777), 0);
	snprintf(p, sizeof(p), "%s/mine/manifest.json", dir);
	assert_int_equal(tu_put(p, "{\"results\": [1, 2]}\n"), 0);
	snprintf(p, sizeof(p), "%s/mine/notes.txt", dir);
	assert_int_equal(tu_put(p, "mine\n"), 0);

	r = tu_run("run " OUT_CASE " --out %s/mine", dir);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	snprintf(p, sizeof(p), "fragsim: error: %s/mine: exists and is not a "
		 "fragsim output (no manifest.json with \"tool\": \"fragsim\"); "
		 "refusing to replace it\n", dir);
	assert_string_equal(r.err, p);
	tu_free(&r);
	snprintf(p, sizeof(p), "%s/mine/notes.txt", dir);
	text = tu_slurp(p);
	assert_string_equal(text, "mine\n");
	free(text);

	r = tu_run("run " OUT_CASE " --out %s/mine/notes.txt/g", dir);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	snprintf(p, sizeof(p), "fragsim: error: %s/mine/notes.txt: is not a directory\n", dir);
	assert_string_equal(r.err, p);
	tu_free(&r);
	assert_int_equal(tu_scratch_free(dir), 0);
}

/* Names in dir starting with prefix. */
static int count_named(const char *dir, const char *prefix)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		n += !strncmp(de->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

/*
 * A run SIGKILLed while publishing (test hook FRAGSIM_OUTDIR_CRASH, see
 * docs/output-dir.md) leaves the goldens whole: before the swap the
 * previous ones, after it the new ones; the next run sweeps its temp
 * directory.
 */
static void out_killed_run_leaves_whole_goldens(void **state)
{
	static const char *const points[] = { "written", "exchanged" };
	char dir[64];
	struct run_result r;

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "cli"));
	r = tu_run("run " OUT_CASE " --out %s/g", dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	assert_int_equal(tu_sh("cp -r %s/g %s/before", dir, dir), 0);
	for (int i = 0; i < 2; i++) {
		setenv("FRAGSIM_OUTDIR_CRASH", points[i], 1);
		r = tu_run("run " OUT_CASE " --out %s/g", dir);
		unsetenv("FRAGSIM_OUTDIR_CRASH");
		assert_int_equal(r.status, 128 + SIGKILL);
		tu_free(&r);
		/* Same case, same bytes: old or new, g is the whole golden. */
		assert_int_equal(tu_sh("diff -r %s/g %s/before", dir, dir), 0);
		assert_int_equal(count_named(dir, ".g.fragsim-tmp."), 1);
	}
	r = tu_run("run " OUT_CASE " --out %s/g", dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	assert_int_equal(count_named(dir, ".g.fragsim-"), 0);
	assert_int_equal(tu_scratch_free(dir), 0);
}

/*
 * Every file is fsync'ed before the rename that publishes it, and the
 * directory before the rename that publishes it; the parent after
 * (strace -y names each fsync'ed descriptor's path). Skipped where
 * strace is missing or not allowed to trace.
 */
static void out_synced_before_renames(void **state)
{
	char dir[64], cmd[600], trace[100], synced[64][300], line[1024];
	int n = 0, renames = 0, parent_synced = 0;
	FILE *f;

	(void)state;
	if (system("strace -o /dev/null true >/dev/null 2>&1") != 0)
		skip();
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "cli"));
	snprintf(trace, sizeof(trace), "%s/trace", dir);
	snprintf(cmd, sizeof(cmd),
		 /* LeakSanitizer cannot run under ptrace (make asan) */
		 "cd '%s' && ASAN_OPTIONS=detect_leaks=0 strace -f -qq -y -o %s "
		 "-e trace=fsync,rename,renameat,renameat2 "
		 "'%s' run " OUT_CASE " --out %s/g >/dev/null",
		 FRAGSIM_SRC, trace, FRAGSIM_BIN, dir);
	assert_int_equal(system(cmd), 0);
	f = fopen(trace, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *a = strstr(line, "fsync("), *b;

		if (a && (a = strchr(a, '<')) && (b = strchr(a, '>'))) {
			assert_true(n < 64);
			snprintf(synced[n++], sizeof(synced[0]), "%.*s", (int)(b - a - 1), a + 1);
			parent_synced |= renames && !strcmp(synced[n - 1], dir);
			continue;
		}
		if (!strstr(line, "rename") || !(a = strchr(line, '"')) ||
		    !(b = strchr(a + 1, '"')))
			continue;
		*b = '\0';
		renames++;
		parent_synced = 0;
		for (int i = 0; i < n; i++)
			if (!strcmp(synced[i], a + 1))
				goto found;
		fail_msg("renamed '%s' without an fsync before", a + 1);
found:		;
	}
	fclose(f);
	assert_true(renames > 10);	/* each .npy, the manifest, the directory */
	assert_true(parent_synced);
	assert_int_equal(tu_scratch_free(dir), 0);
}

/*
 * Limits refused when the case is read, at the key that drives them: a
 * split-K segment that cuts a context into more than 1024 segments
 * (1024 is the emulation's limit; 2048 / 2 = 1024 is fine, ceil(2049 / 2)
 * = 1025 is not, and ceil(2049 / 1024) = 3 is the least segment that
 * fits).
 */
static void splitk_limit_at_parse_time(void **state)
{
	static const char ok[] =
		"fragsim: 1\nname: seg\nsequences:\n  - {context: 40}\n  - {context: 2048}\n"
		"split_k:\n  segment: 2\n";
	static const char bad[] =
		"fragsim: 1\nname: seg\nsequences:\n  - {context: 40}\n  - {context: 2049}\n"
		"split_k:\n  segment: 2\n";
	char *p = tu_write_temp(".yaml", ok), want[512];
	struct run_result r;

	(void)state;
	assert_non_null(p);
	r = tu_run("show %s", p);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	unlink(p);
	free(p);
	p = tu_write_temp(".yaml", bad);
	assert_non_null(p);
	r = tu_run("show %s", p);
	assert_int_equal(r.status, 2);
	snprintf(want, sizeof(want), "fragsim: error: %s:7:12: split_k.segment: 2 cuts "
		 "sequences[1] (context 2049) into 1025 segments, more than 1024; "
		 "use at least 3\n", p);
	assert_string_equal(r.err, want);
	tu_free(&r);
	unlink(p);
	free(p);
}

/*
 * `show` prints paths absolute: the loader resolves a relative npy or
 * profile path against the case's directory, which leaves it relative
 * to the working directory, and a shown case saved elsewhere read
 * another file. (What show refuses: test_runcase.c
 * late_checks_name_file_line_key.)
 */
static void show_paths_load_back_anywhere(void **state)
{
	char dir[256], p[512], *text, want[1024];

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "show"));
	snprintf(p, sizeof(p), "%s/sub", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/sub/c.yaml", dir);
	assert_int_equal(tu_put(p, "fragsim: 1\nname: s\nsequences:\n  - {context: 3}\n"
			 "data:\n  q: {npy: q.npy}\n"), 0);
	/* from dir, by a relative path; then loaded back from sub */
	assert_int_equal(tu_sh("cd '%s' && '%s' show sub/c.yaml > sub/full.yaml",
			       dir, FRAGSIM_BIN), 0);
	snprintf(p, sizeof(p), "%s/sub/full.yaml", dir);
	text = tu_slurp(p);
	assert_non_null(text);
	snprintf(want, sizeof(want), "    npy: %s/sub/q.npy\n", dir);
	assert_non_null(strstr(text, want));
	free(text);
	/* loaded from another directory, it is the same case */
	assert_int_equal(tu_sh("cd '%s/sub' && '%s' show full.yaml | cmp -s - full.yaml",
			       dir, FRAGSIM_BIN), 0);
	assert_int_equal(tu_scratch_free(dir), 0);
}

/*
 * The quant lines print no NaN: with every context 0 no row sees a key
 * (a line of nan read as a broken metric), and a context shorter than
 * check.buckets leaves buckets that hold no key ("keys [1, 1): ... nan
 * (0 keys)"), which are left out.
 */
static void quant_prints_no_nan(void **state)
{
	static const char *const yaml[2] = {
		"fragsim: 1\nname: z\nsequences:\n  - {context: 0}\n",
		"fragsim: 1\nname: z\nsequences:\n  - {context: 2}\n",
	};

	(void)state;
	for (int i = 0; i < 2; i++) {
		char *p = tu_write_temp(".yaml", yaml[i]);
		struct run_result r = tu_run("run %s", p);

		assert_int_equal(r.status, 0);
		if (strstr(r.out, "nan") || strstr(r.out, "(0 keys)") ||
		    !strstr(r.out, i ? "          keys [1, 2): " :
			    "\nquant     not measured: no query sees a key\n"))
			fail_msg("case %d: '%s'", i, r.out);
		tu_free(&r);
		unlink(p);
		free(p);
	}
}

/*
 * A case far larger than any machine is refused before anything is
 * allocated (so at once), saying what it needs, for which tensor, and the
 * keys that drive it. Scores of 4 x 8192 query tokens x 256 q heads over
 * 1048576 keys, 4 bytes each, are 32 TiB (by hand: 2^2 x 2^13 x 2^8 x
 * 2^20 x 2^2 = 2^45 B), and the rest (q 1.25 GiB, logical K and V 1 GiB,
 * caches 0.25 GiB, out 1.06 GiB, the reference's rows 0.5 GiB, ...) does
 * not move the total's first decimal; its inputs stay under the 16 GiB
 * cap, so what is refused is the machine's memory.
 */
static void memory_refused_before_allocating(void **state)
{
	char *p = tu_write_temp(".yaml",
		"fragsim: 1\nname: scores\nmode: prefill\n"
		"model: {q_heads: 256, kv_heads: 1, head_dim: 32}\nsequences:\n"
		"  - {history: 1040384, chunk: 8192}\n  - {history: 1040384, chunk: 8192}\n"
		"  - {history: 1040384, chunk: 8192}\n  - {history: 1040384, chunk: 8192}\n"
		"golden: [scores]\n");
	double t0 = clock_seconds();
	struct run_result r;
	char want[512];

	(void)state;
	assert_non_null(p);
	r = tu_run("run %s", p);
	assert_true(clock_seconds() - t0 < 5.0);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	snprintf(want, sizeof(want), "fragsim: error: %s: the case needs 32.0 TiB, over "
		 "the limit of ", p);
	assert_int_equal(strncmp(r.err, want, strlen(want)), 0);
	assert_non_null(strstr(r.err, " (the memory this machine has available; 32.0 TiB "
			       "of it for the scores: sequences 4 x tokens 8192 x q_heads "
			       "256 x context 1048576 x 4 bytes; shrink the case, or free "
			       "memory (MemAvailable, a cgroup's memory.max))\n"));
	tu_free(&r);
	unlink(p);
	free(p);
}

/*
 * The estimate, to the byte, for cases/qwen35-27b/decode-1.yaml (S 1,
 * T 1, Hq 24, Hkv 4, D 256, context 1, 3 blocks of 16), by hand:
 *   inputs: q 24 x 256 x 5 = 30720 (the logical K and V are generated,
 *   so not kept: the reference makes their rows again, 0.2.0), caches
 *   3 x 16 x 4 x 256 x 2 = 98304, scales and tables 192 x 8
 *   + 24 x 4 + 1 x (1 + 1 + 1) x 4 = 1644;
 *   then out 24 x 258 x 4 = 24768, scores 24 x 1 x 4 = 96, acc 4 tiles x
 *   (64 x 4 + 4) x 4 = 4160, the reference's rows 32 x (4 + 768) x 8 =
 *   197632: 357324 bytes (348.9 KiB), the reference's rows the largest.
 */
static void memory_estimate_hand_worked(void **state)
{
	struct fs_err err = { 0 };
	struct runcase r;

	(void)state;
	assert_int_equal(runcase_load(FRAGSIM_SRC "/cases/qwen35-27b/decode-1.yaml", &r, &err),
			 FS_OK);
	r.mem_avail = 300 * 1024;
	assert_int_equal(runcase_inputs(&r, &err), FS_EBUDGET);
	assert_string_equal(err.msg, "the case needs 348.9 KiB, over the limit of 300.0 KiB "
			    "(the memory this machine has available; 193.0 KiB of it for "
			    "the reference's rows: 32 rows x (4 x context 1 + 3 x head_dim "
			    "256) x 8 bytes; shrink the case, or free memory (MemAvailable, "
			    "a cgroup's memory.max))");
	assert_int_equal(r.have_inputs, 0);
	r.mem_avail = 357323;
	assert_int_equal(runcase_inputs(&r, &err), FS_EBUDGET);
	r.mem_avail = 357324;
	assert_int_equal(runcase_inputs(&r, &err), FS_OK);
	runcase_free(&r);
}

/*
 * A sparse pool is estimated by what it stores: cases/edge/sparse-pool.yaml
 * has 4,194,304 blocks of 16 KiB of K and 16 KiB of V (128 GiB dense) and
 * its tables name 5 + 2 of them, 7 x 32 KiB = 224 KiB of caches. It fits
 * 8 MiB; 200 KiB is too little, by an estimate in KiB.
 */
static void memory_estimate_of_a_sparse_pool(void **state)
{
	struct fs_err err = { 0 };
	struct runcase r;

	(void)state;
	assert_int_equal(runcase_load(FRAGSIM_SRC "/cases/edge/sparse-pool.yaml", &r, &err),
			 FS_OK);
	r.mem_avail = 8 << 20;
	assert_int_equal(runcase_inputs(&r, &err), FS_OK);
	assert_int_equal(r.in.NM, 7);
	runcase_free(&r);
	assert_int_equal(runcase_load(FRAGSIM_SRC "/cases/edge/sparse-pool.yaml", &r, &err),
			 FS_OK);
	r.mem_avail = 200 * 1024;
	assert_int_equal(runcase_inputs(&r, &err), FS_EBUDGET);
	/* under a MiB in all, not the dense pool's 128 GiB */
	if (strncmp(err.msg, "the case needs ", 15) || !strstr(err.msg, " KiB, over the limit"))
		fail_msg("%s", err.msg);
	runcase_free(&r);
}

/*
 * INT8 PV on a sparse pool (blocks 4194000, 3 and 70000 of 4,194,304)
 * and on freed blocks: the reference's PV reads the stored rows (it
 * crashed on the physical block before ref/pv_int8.c asked ref/pool.c).
 */
static void int8_pv_on_sparse_and_freed_pools(void **state)
{
	static const char *const cases[] = {
		"fragsim: 1\nname: pv-sparse\ncache: {placement: table, num_blocks: 4194304}\n"
		"pv: {mode: int8}\nsequences:\n  - {context: 40, blocks: [4194000, 3, 70000]}\n",
		"fragsim: 1\nname: pv-freed\nmodel: {sliding_window: 20}\n"
		"cache: {window_blocks: free, block_size: 8}\npv: {mode: int8}\n"
		"sequences:\n  - {context: 100}\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *path = tu_write_temp(".yaml", cases[i]);
		struct run_result r = tu_run("check %s", path);

		if (r.status != 0 || !strstr(r.out, "1 passed, 0 failed"))
			fail_msg("case %zu: exit %d\n%s%s", i, r.status, r.out, r.err);
		tu_free(&r);
		unlink(path);
		free(path);
	}
}

/* check --junit to a path that cannot be written fails before the suite
 * runs (nothing on stdout), with exit 2, naming the path. */
static void junit_path_checked_first(void **state)
{
	struct run_result r = tu_run("check " OUT_CASE " --junit /nonexistent-fragsim-dir/j.xml");

	(void)state;
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "fragsim: error: /nonexistent-fragsim-dir/j.xml: "
			    "cannot be written: No such file or directory\n");
	tu_free(&r);
	r = tu_run("check " OUT_CASE " --junit /tmp");
	assert_int_equal(r.status, 2);
	assert_string_equal(r.err, "fragsim: error: /tmp: is a directory\n");
	tu_free(&r);
}

/*
 * Over the inputs' 16 GiB cap (sim/attn/inputs.h), whatever the machine: now
 * refused before any .npy is read or any tensor allocated, naming the
 * largest. By hand: logical K and V 2 x 1048576 x 8 x 256 x 4 B = 16 GiB
 * (counted by the cap even for an emulation alone), caches 65538 x 16 x
 * 8 x 256 x 2 B = 4.0 GiB, scales 65538 x 16 x 8 x 8 B = 64 MiB: 20.1 GiB.
 */
static void inputs_cap_before_allocating(void **state)
{
	char *p = tu_write_temp(".yaml",
		"fragsim: 1\nname: cap\nmodel: {q_heads: 8, kv_heads: 8, head_dim: 256}\n"
		"sequences:\n  - {context: 1048576}\n");
	static const char *const modes[] = { "", " --emulate-only" };
	char want[512];

	(void)state;
	assert_non_null(p);
	snprintf(want, sizeof(want), "fragsim: error: %s: the case needs 20.1 GiB, over "
		 "the limit of 16.0 GiB (the input tensors' cap, INPUTS_MAX_BYTES in "
		 "sim/attn/inputs.h; 16.0 GiB of it for the logical K and V: sequences 1 x "
		 "context 1048576 x kv_heads 8 x head_dim 256 x 4 bytes x 2; shrink "
		 "the case)\n", p);
	for (int i = 0; i < 2; i++) {
		struct run_result r = tu_run("run %s%s", p, modes[i]);

		assert_int_equal(r.status, 2);
		assert_string_equal(r.err, want);
		tu_free(&r);
	}
	unlink(p);
	free(p);
}

/* Each command of bad[i][0] exits 2, prints nothing on stdout and
 * exactly bad[i][1] on stderr. */
static void expect_usage_errors(const char *const (*bad)[2], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct run_result r = tu_run("%s", bad[i][0]);

		assert_int_equal(r.status, 2);
		assert_string_equal(r.out, "");
		assert_string_equal(r.err, bad[i][1]);
		tu_free(&r);
	}
}

/* ---- issue 21 (points 8, 9, 10, 14): verdicts, suites, options, messages ---- */

/* Issue 21 point 8: a failed threshold is not a mismatch. The case of
 * threshold_failure_prints_its_digits (every exact comparison holds, the
 * out cosine of INT8 is below 1 - 1e-8) said "the emulation disagrees
 * with the reference" on `run --out`, and JUnit type="mismatch"; JSON
 * had no way to tell it from a mapping bug. A planted gqa_map bug is the
 * mismatch; an `expect: mismatch` case with no bug is "uncaught". */
static void threshold_is_not_a_mismatch(void **state)
{
	static const char *const yaml[3] = {
		("fragsim: 1\nname: thr\nsequences:\n  - {context: 40}\n"
		 "check: {out_cosine_min: 0.99999999}\n"),
		"fragsim: 1\nname: bug\nsequences:\n  - {context: 40}\nkernel: {gqa_map: modulo}\n",
		"fragsim: 1\nname: unc\nexpect: mismatch\nsequences:\n  - {context: 40}\n",
	};
	static const char *const verdict[3] = { "threshold", "mismatch", "match" };
	static const char *const type[3] = { "threshold", "mismatch", "uncaught" };
	static const char *const why[3] = {
		"fragsim: goldens not written: a quality threshold failed (out cosine ",
		"fragsim: goldens not written: the emulation differs from the reference (acc: ",
		"fragsim: goldens not written: the case plants a bug (expect: mismatch)\n",
	};
	char dir[64], want[128];

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "verdict"));
	for (int i = 0; i < 3; i++) {
		char *p = tu_write_temp(".yaml", yaml[i]), *x;
		struct run_result r = tu_run("run %s --out %s/g", p, dir);

		assert_int_equal(r.status, 1);
		if (strncmp(r.err, why[i], strlen(why[i])) || strstr(r.err, "disagrees"))
			fail_msg("case %d: stderr '%s'", i, r.err);
		if (i == 0 && !strstr(r.err, "); every exact comparison with the reference holds\n"))
			fail_msg("stderr '%s'", r.err);
		tu_free(&r);
		if (i == 2) {	/* nor the emulation's tensors of a planted bug */
			r = tu_run("run %s --emulate-only --out %s/g", p, dir);
			assert_int_equal(r.status, 0);
			assert_string_equal(r.err, why[2]);
			tu_free(&r);
		}
		snprintf(want, sizeof(want), "%s/g", dir);
		assert_int_equal(access(want, F_OK), -1);
		r = tu_run("run %s --json", p);
		snprintf(want, sizeof(want), "\"verdict\": \"%s\",", verdict[i]);
		if (!strstr(r.out, want) || !strstr(r.out, i == 2 ? "\"matched_reference\": true"
							 : "\"matched_reference\": false"))
			fail_msg("case %d: no %s in '%s'", i, want, r.out);
		tu_free(&r);
		r = tu_run("check %s --junit %s/j.xml", p, dir);
		assert_int_equal(r.status, 1);
		tu_free(&r);
		snprintf(want, sizeof(want), "%s/j.xml", dir);
		x = tu_slurp(want);
		snprintf(want, sizeof(want), "\" type=\"%s\">", type[i]);
		if (!strstr(x, want))
			fail_msg("case %d: no %s in '%s'", i, want, x);
		free(x);
		unlink(p);
		free(p);
	}
	tu_scratch_free(dir);
}

/* A case given twice (`check X X`, `check dir dir/X`, `check X ./X`)
 * runs once, with a note; it said "X: no *.yaml case there", exit 2,
 * which is false of a case file (a soak found it). */
static void check_runs_a_case_given_twice_once(void **state)
{
	static const char *const args[3] = {
		"cases/edge/one-token.yaml cases/edge/one-token.yaml",
		"cases/edge cases/edge/one-token.yaml --exclude '[!o]*' --exclude 'o[!n]*'",
		"cases/edge/one-token.yaml ./cases/edge/one-token.yaml",
	};
	static const char *const again[3] = {
		"fragsim: note: cases/edge/one-token.yaml: listed already; each case runs once\n",
		"fragsim: note: cases/edge/one-token.yaml: listed already; each case runs once\n",
		"fragsim: note: ./cases/edge/one-token.yaml: listed already; each case runs once\n",
	};

	(void)state;
	for (int i = 0; i < 3; i++) {
		struct run_result r = tu_run("check %s", args[i]);

		if (r.status != 0 || !strstr(r.err, again[i]) || !strstr(r.out, "\n1 passed, 0 failed\n"))
			fail_msg("%s: exit %d\n%s%s", args[i], r.status, r.out, r.err);
		tu_free(&r);
	}
}

/* Issue 21 point 9: `check DIR` took every *.yaml for a case, so the
 * profile `probe solve --yaml` writes beside the cases (docs/dcu.md) and
 * a CI workflow.yml made the suite exit 2. Now each is skipped with a
 * note that names it; a YAML with a case key but no `fragsim:` is still
 * a case (an error), and --exclude drops files by relative path or base
 * name. */
static void check_skips_what_is_not_a_case(void **state)
{
	char dir[64], want[256];
	struct run_result r;

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "skip"));
	assert_int_equal(tu_sh("mkdir %s/sub && cp cases/edge/one-token.yaml %s/ && "
			       "cp profiles/gfx936.yaml %s/found.yaml && "
			       "printf 'name: CI\\non: [push]\\njobs:\\n  b: {runs-on: x}\\n' >%s/workflow.yml && "
			       "printf -- '- a\\n- b\\n' >%s/sub/list.yaml", dir, dir, dir, dir, dir), 0);
	r = tu_run("check %s", dir);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "edge-one-token(prefill,S=1,ctx=1,bs=16,shuffled,gfx936): OK\n"
				   "1 passed, 0 failed\n");
	snprintf(want, sizeof(want), "fragsim: note: %s/found.yaml: a lane-map profile "
		 "(fragsim_profile:), not a case; skipped\n", dir);
	if (!strstr(r.err, want))
		fail_msg("no '%s' in '%s'", want, r.err);
	snprintf(want, sizeof(want), "fragsim: note: %s/workflow.yml: not a fragsim file "
		 "(no case key); skipped\n", dir);
	if (!strstr(r.err, want))
		fail_msg("no '%s' in '%s'", want, r.err);
	snprintf(want, sizeof(want), "fragsim: note: %s/sub/list.yaml: not a fragsim file "
		 "(not a mapping); skipped\n", dir);
	if (!strstr(r.err, want))
		fail_msg("no '%s' in '%s'", want, r.err);
	tu_free(&r);
	r = tu_run("check %s --json", dir);
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof(want), "\"%s/found.yaml: a lane-map profile (fragsim_profile:), "
		 "not a case\"", dir);
	if (!strstr(r.out, "\"skipped\": [") || !strstr(r.out, want))
		fail_msg("no '%s' in '%s'", want, r.out);
	tu_free(&r);
	/* a case that forgot `fragsim: 1` is a case, and an error */
	assert_int_equal(tu_sh("printf 'name: nover\\nsequences:\\n  - {context: 8}\\n' "
			       ">%s/sub/nover.yaml", dir), 0);
	r = tu_run("check %s", dir);
	assert_int_equal(r.status, 2);
	snprintf(want, sizeof(want), "%s/sub/nover.yaml: ERROR ", dir);
	if (!strstr(r.out, want))
		fail_msg("no '%s' in '%s'", want, r.out);
	tu_free(&r);
	/* --exclude: the relative path, or the base name */
	r = tu_run("check %s --exclude 'sub/*'", dir);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "nover"));
	assert_null(strstr(r.err, "list.yaml"));
	tu_free(&r);
	r = tu_run("check %s --exclude nover.yaml --exclude 'one-*'", dir);
	assert_int_equal(r.status, 2);
	snprintf(want, sizeof(want), "fragsim: error: %s: no *.yaml case there (only files "
		 "skipped or excluded)\n", dir);
	if (!strstr(r.err, want))
		fail_msg("no '%s' in '%s'", want, r.err);
	assert_string_equal(r.out, "");
	tu_free(&r);
	/* a file named on the command line is a case whatever it holds */
	r = tu_run("check %s/found.yaml", dir);
	assert_int_equal(r.status, 2);
	tu_free(&r);
	tu_scratch_free(dir);
}

/* Issue 21 point 10: an option that only matters with another was
 * accepted and ignored: `run C --format safetensors --bf16` without
 * --out exited 0 and wrote nothing; `lanemap loads --mode prefill`
 * without --q printed the K view. Each is now exit 2 naming the missing
 * (or the excluding) option, before any work: nothing on stdout. */
static void options_that_need_another(void **state)
{
	static const char *const bad[][2] = {
		{ "run cases/edge/one-token.yaml --format safetensors --bf16",
		  "fragsim: error: --format needs --out (" },
		{ "run cases/edge/one-token.yaml --format npy", "fragsim: error: --format needs --out (" },
		{ "run cases/edge/one-token.yaml --bf16", "fragsim: error: --bf16 needs --out (" },
		{ "lanemap loads --isa gfx936 --mode prefill", "fragsim: error: --mode needs --q (" },
		{ "lanemap loads --isa gfx936 --q-heads 8", "fragsim: error: --q-heads needs --q (" },
		{ "lanemap loads --isa gfx936 --q --cache nhd",
		  "fragsim: error: --cache describes the K cache: not with --q (" },
		{ "lanemap loads --isa gfx936 --q --block-size 8",
		  "fragsim: error: --block-size describes the K cache: not with --q (" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct run_result r = tu_run("%s", bad[i][0]);

		if (r.status != 2 || r.out[0] || strncmp(r.err, bad[i][1], strlen(bad[i][1])))
			fail_msg("'%s': status %d, stdout '%s', stderr '%s'", bad[i][0], r.status,
				 r.out, r.err);
		tu_free(&r);
	}
}

/* Issue 21 point 14: a usage error printed its line and then the
 * command's whole help (40 lines for lanemap), burying it. Now the line
 * and where the help is, nothing more; `-h` there prints the help. */
static void usage_error_points_at_the_help(void **state)
{
	static const char *const bad[][2] = {
		{ "check cases/edge --shard 1/2junk",
		  "fragsim: error: --shard must be K/N with 1 <= K <= N, not '1/2junk'\n"
		  "see 'fragsim check -h'\n" },
		{ "lanemap --isa gfx936 --bogus",
		  "fragsim: error: unknown option '--bogus'\nsee 'fragsim lanemap -h'\n" },
		{ "lanemap loads --isa gfx936 --step x",
		  "fragsim: error: --step must be an integer from 0 to 4095, not 'x'\n"
		  "see 'fragsim lanemap loads -h'\n" },
		{ "probe plan --isa gfx936 --out p --plan q",
		  "fragsim: error: unknown option '--plan'\nsee 'fragsim probe plan -h'\n" },
		/* no command, or an unknown one: not the 40-line command list */
		{ "", "fragsim: error: missing command\nsee 'fragsim --help' for the commands\n" },
		{ "nope", "fragsim: error: unknown command 'nope'\n"
		  "see 'fragsim --help' for the commands\n" },
	};

	(void)state;
	expect_usage_errors(bad, sizeof(bad) / sizeof(bad[0]));
	/* and where it points is the help */
	{
		struct run_result r = tu_run("lanemap loads -h");

		assert_int_equal(r.status, 0);
		assert_non_null(strstr(r.out, "lanemap loads --isa <name|file>"));
		tu_free(&r);
	}
}

/* Issue 21 point 14: a missing `npy:` file said only "DIR/k.npy:
 * cannot open: ...", naming neither the case nor the key; now the case
 * file with the key's line and column, the key, then the file's own
 * error. */
static void missing_npy_names_its_key(void **state)
{
	char dir[64], want[512];
	struct run_result r;

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "npy"));
	snprintf(want, sizeof(want), "%s/c.yaml", dir);
	tu_put(want, "fragsim: 1\nname: x\nsequences:\n  - {context: 8}\ndata:\n  k: {npy: k.npy}\n");
	r = tu_run("run %s/c.yaml", dir);
	assert_int_equal(r.status, 2);
	snprintf(want, sizeof(want), "fragsim: error: %s/c.yaml:6:12: data.k.npy: %s/k.npy: cannot "
		 "open: No such file or directory\n", dir, dir);
	assert_string_equal(r.err, want);
	tu_free(&r);
	tu_scratch_free(dir);
}

/* Issue 21 point 14: `run DIR` said "DIR: not a regular file (a
 * directory)"; it points at check now. `diff --dump` on a path that does
 * not exist said "not a directory or a .safetensors file"; it says it
 * does not exist. Both exit 2 with nothing on stdout. */
static void wrong_kind_of_path_says_what_to_do(void **state)
{
	static const char *const bad[][2] = {
		{ "run cases/edge",
		  "fragsim: error: cases/edge: is a directory; run takes one case file "
		  "('fragsim check cases/edge' runs every case under it)\n" },
		{ "diff cases/edge --dump tests/data/dumps/clean",
		  "fragsim: error: cases/edge: is a directory; diff takes one case file\n" },
		{ "diff cases/edge/one-token.yaml --dump /nonexistent/dump",
		  "fragsim: error: /nonexistent/dump: --dump: does not exist\n" },
	};

	(void)state;
	expect_usage_errors(bad, sizeof(bad) / sizeof(bad[0]));
}

/* The OpenMP environment is checked before any parallel region, with
 * --threads' bounds. Before, libgomp kept OMP_NUM_THREADS=100000 and
 * crashed starting the team (SIGSEGV, 139); 40000 ended in its "Thread
 * creation failed" and exit 1, the mismatch code; 0, -1 and abc drew
 * libgomp's warning and ran on all cores. */
static void omp_environment_checked_first(void **state)
{
	static const char *const bad[] = { "100000", "40000", "1025", "0", "-1",
					   "abc", "", "4,0", "4,", "2x" };
	static const char *const good[] = { "1", "4,2", " 3 " };
	static const char *const limit_bad[] = { "0", "-3", "abc", "9223372036854775808" };
	char want[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct run_result r;

		assert_int_equal(setenv("OMP_NUM_THREADS", bad[i], 1), 0);
		r = tu_run("run cases/edge/one-token.yaml");
		snprintf(want, sizeof(want), "fragsim: error: OMP_NUM_THREADS must be an "
			 "integer from 1 to 1024 (or a list of them, as 4,2), not '%s'\n", bad[i]);
		assert_int_equal(r.status, 2);
		assert_string_equal(r.out, "");
		/* libgomp's own warning may come first, for what it dropped */
		assert_true(strlen(r.err) >= strlen(want));
		assert_string_equal(r.err + strlen(r.err) - strlen(want), want);
		tu_free(&r);
	}
	/* Every command that computes: check too, before its first case. */
	assert_int_equal(setenv("OMP_NUM_THREADS", "100000", 1), 0);
	{
		struct run_result r = tu_run("check cases/edge");

		assert_int_equal(r.status, 2);
		assert_string_equal(r.out, "");
		tu_free(&r);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct run_result r;

		assert_int_equal(setenv("OMP_NUM_THREADS", good[i], 1), 0);
		r = tu_run("run cases/edge/one-token.yaml");
		assert_int_equal(r.status, 0);
		tu_free(&r);
	}
	assert_int_equal(unsetenv("OMP_NUM_THREADS"), 0);
	for (size_t i = 0; i < sizeof(limit_bad) / sizeof(limit_bad[0]); i++) {
		struct run_result r;

		assert_int_equal(setenv("OMP_THREAD_LIMIT", limit_bad[i], 1), 0);
		r = tu_run("run cases/edge/one-token.yaml");
		snprintf(want, sizeof(want), "fragsim: error: OMP_THREAD_LIMIT must be a "
			 "positive integer up to 9223372036854775807 (libgomp ignores a larger "
			 "one), not '%s'\n", limit_bad[i]);
		assert_int_equal(r.status, 2);
		assert_true(strlen(r.err) >= strlen(want));
		assert_string_equal(r.err + strlen(r.err) - strlen(want), want);
		tu_free(&r);
	}
	/* A limit of any size libgomp takes is only a cap. */
	for (int i = 0; i < 2; i++) {
		struct run_result r;

		assert_int_equal(setenv("OMP_THREAD_LIMIT", i ? "9223372036854775807" : "100000",
					1), 0);
		r = tu_run("run cases/edge/one-token.yaml");
		assert_int_equal(r.status, 0);
		tu_free(&r);
	}
	assert_int_equal(unsetenv("OMP_THREAD_LIMIT"), 0);

	/* A worker's stack of 96K overflowed (SIGSEGV); below 1M is refused,
	 * OpenMP's units read as libgomp reads them. */
	{
		static const char *const small_stack[] = { "96k", "1023K", "64", "abc",
							   "", "4MB" };
		static const char *const stack_ok[] = { "1M", " 1 m ", "1048576B", "2g" };

		assert_int_equal(setenv("OMP_NUM_THREADS", "2", 1), 0);
		for (size_t i = 0; i < sizeof(small_stack) / sizeof(small_stack[0]); i++) {
			struct run_result r;

			assert_int_equal(setenv("OMP_STACKSIZE", small_stack[i], 1), 0);
			r = tu_run("run cases/edge/one-token.yaml");
			snprintf(want, sizeof(want), "fragsim: error: OMP_STACKSIZE must be a "
				 "size of 1M or more (fragsim's threads need it), not '%s'\n",
				 small_stack[i]);
			assert_int_equal(r.status, 2);
			assert_true(strlen(r.err) >= strlen(want));
			assert_string_equal(r.err + strlen(r.err) - strlen(want), want);
			tu_free(&r);
		}
		for (size_t i = 0; i < sizeof(stack_ok) / sizeof(stack_ok[0]); i++) {
			struct run_result r;

			assert_int_equal(setenv("OMP_STACKSIZE", stack_ok[i], 1), 0);
			r = tu_run("run cases/edge/one-token.yaml");
			assert_int_equal(r.status, 0);
			tu_free(&r);
		}
	}

	/* A stack of 2^57 bytes, past any address space: libgomp cannot
	 * create the threads and exits 1 itself; fragsim makes that 3.
	 * clang's libomp aborts instead ("OMP: Error #34", SIGABRT), which
	 * no exit handler sees: never 1 either way. */
	assert_int_equal(setenv("OMP_NUM_THREADS", "2", 1), 0);
	assert_int_equal(setenv("OMP_STACKSIZE", "200000000G", 1), 0);
	{
		struct run_result r = tu_run("run cases/edge/one-token.yaml");

		if (strstr(r.err, "libgomp: Thread creation failed")) {
			assert_int_equal(r.status, 3);
			assert_non_null(strstr(r.err, "fragsim: error: the OpenMP runtime "
					       "stopped fragsim (its message is above)\n"));
		} else if (strstr(r.err, "OMP: Error #34")) {
			assert_int_equal(r.status, 128 + 6);
		} else {
			assert_int_equal(r.status, 0);
		}
		tu_free(&r);
	}
	assert_int_equal(unsetenv("OMP_STACKSIZE"), 0);
	assert_int_equal(unsetenv("OMP_NUM_THREADS"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lanemap_gfx936_c_grid),
		cmocka_unit_test(lanemap_entry_and_lane),
		cmocka_unit_test(lanemap_csv_has_every_slot),
		cmocka_unit_test(lanemap_md_and_json),
		cmocka_unit_test(lanemap_list),
		cmocka_unit_test(check_article_profile_fails),
		cmocka_unit_test(diff_gfx936_quad),
		cmocka_unit_test(usage_errors_exit_2),
		cmocka_unit_test(yaml_error_location_reaches_the_user),
		cmocka_unit_test(help_and_version),
		cmocka_unit_test(option_errors_name_the_option),
		cmocka_unit_test(numeric_options_reject_garbage),
		cmocka_unit_test(check_json_lists_every_case),
		cmocka_unit_test(check_junit_is_wellformed),
		cmocka_unit_test(check_junit_survives_odd_bytes),
		cmocka_unit_test(check_usage_errors_before_running),
		cmocka_unit_test(threshold_failure_prints_its_digits),
		cmocka_unit_test(manifest_lists_only_what_was_written),
		cmocka_unit_test(doctest_catches_a_wrong_document),
		cmocka_unit_test(out_refuses_before_the_run),
		cmocka_unit_test(out_killed_run_leaves_whole_goldens),
		cmocka_unit_test(out_synced_before_renames),
		cmocka_unit_test(splitk_limit_at_parse_time),
		cmocka_unit_test(show_paths_load_back_anywhere),
		cmocka_unit_test(quant_prints_no_nan),
		cmocka_unit_test(check_runs_a_case_given_twice_once),
		cmocka_unit_test(memory_refused_before_allocating),
		cmocka_unit_test(memory_estimate_hand_worked),
		cmocka_unit_test(memory_estimate_of_a_sparse_pool),
		cmocka_unit_test(int8_pv_on_sparse_and_freed_pools),
		cmocka_unit_test(junit_path_checked_first),
		cmocka_unit_test(inputs_cap_before_allocating),
		/* issue 21 */
		cmocka_unit_test(threshold_is_not_a_mismatch),
		cmocka_unit_test(check_skips_what_is_not_a_case),
		cmocka_unit_test(options_that_need_another),
		cmocka_unit_test(usage_error_points_at_the_help),
		cmocka_unit_test(missing_npy_names_its_key),
		cmocka_unit_test(wrong_kind_of_path_says_what_to_do),
		cmocka_unit_test(omp_environment_checked_first),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
