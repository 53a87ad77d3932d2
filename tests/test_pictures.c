/*
 * test_pictures.c - `lanemap --format svg` and `lanemap diff --format
 * svg|html` from the command line: what they refuse (exit 2, nothing on
 * stdout), an invalid profile (exit 1, no picture), and the lane palette;
 * `--report FILE.html` of run, check, diff and mutate: a path that cannot
 * be written is refused before the work, and a failed run leaves the
 * previous file whole. The pictures and pages themselves (XML, owners
 * against the published layouts, rendering in Chromium) are
 * tests/browser.py's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <sys/stat.h>

#include "testutil.h"
#include "../cli/svg.h"

static void svg_refuses_lane_and_entry(void **state)
{
	static const char *const bad[] = {
		"lanemap --isa gfx936 --format svg --lane 3",
		"lanemap --isa gfx936 --format svg --entry 'C[0][0]'",
		"lanemap diff gfx936 gfx936-quad --format xml",
		"lanemap check gfx936 --format svg",
		"lanemap check gfx936 --format html",
		"lanemap --isa gfx936 --format html",
	};
	static const char *const says[] = {
		"--format svg draws whole operands: no --lane or --entry",
		"--format svg draws whole operands: no --lane or --entry",
		"--format must be text, json, svg or html, not 'xml'",
		"--format must be text or json, not 'svg'",
		"--format must be text or json, not 'html'",
		"--format must be text, md, csv, json, c, basis, basis-json or svg, not 'html'",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct run_result r = tu_run("%s", bad[i]);

		if (r.status != 2 || r.out[0] || !strstr(r.err, says[i]))
			fail_msg("%s: exit %d, stdout '%.40s', stderr %s", bad[i], r.status,
				 r.out, r.err);
		tu_free(&r);
	}
}

static void invalid_profile_draws_nothing(void **state)
{
	struct run_result r = tu_run("lanemap --isa gfx936-article --format svg");

	(void)state;
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "");
	assert_non_null(strstr(r.err, "gfx936-article: invalid profile, no picture drawn"));
	tu_free(&r);
	/* diff refuses an invalid map whatever the format (exit 2). */
	r = tu_run("lanemap diff gfx936 gfx936-article --format svg");
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	tu_free(&r);
}

static void identical_maps_draw_no_grid(void **state)
{
	struct run_result r = tu_run("lanemap diff gfx936 profiles/gfx936.yaml --format html");

	(void)state;
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "gfx936 and gfx936 are identical"));
	assert_null(strstr(r.out, "class=\"cell"));
	tu_free(&r);
}

/* 16 hues x 4 lightness steps: 64 lanes, 64 colours; lane 1 and lane 17
 * share a hue, 17 is darker (hand: hue = bit-reversed low 4 bits). */
static void palette_keeps_64_lanes_apart(void **state)
{
	char fill[64][8], ink[8];

	(void)state;
	for (int l = 0; l < 64; l++) {
		svg_lane_colour(l, fill[l], ink);
		assert_int_equal(strlen(fill[l]), 7);
		for (int k = 0; k < l; k++)
			if (!strcmp(fill[l], fill[k]))
				fail_msg("lanes %d and %d are both %s", k, l, fill[l]);
	}
	/* The darkest step takes white text. */
	svg_lane_colour(63, fill[0], ink);
	assert_string_equal(ink, "#ffffff");
}

static const char *const report_cmds[] = {
	"run cases/edge/one-token.yaml",
	"check cases/edge/one-token.yaml",
	"diff tests/data/dumps/clean/case.yaml --dump tests/data/dumps/clean",
	"mutate cases/edge/one-token.yaml",
};

/* A report nobody could write is refused first: exit 2, the path named,
 * nothing run (no summary on stdout). */
static void report_path_refused_first(void **state)
{
	char dir[64];

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "report"));
	for (size_t i = 0; i < sizeof(report_cmds) / sizeof(report_cmds[0]); i++) {
		const char *bad[] = { "/no/such/dir/r.html", dir };
		struct run_result r;

		for (size_t k = 0; k < 2; k++) {
			r = tu_run("%s --report %s", report_cmds[i], bad[k]);
			if (r.status != 2 || r.out[0] || !strstr(r.err, bad[k]))
				fail_msg("%s --report %s: exit %d, stdout '%.60s', stderr %s",
					 report_cmds[i], bad[k], r.status, r.out, r.err);
			tu_free(&r);
		}
		r = tu_run("%s --report", report_cmds[i]);
		if (r.status != 2 || !strstr(r.err, "--report needs a value"))
			fail_msg("%s --report: exit %d, stderr %s", report_cmds[i], r.status, r.err);
		tu_free(&r);
	}
	assert_int_equal(tu_scratch_free(dir), 0);
}

/* Only r.html in dir: no temporary file left behind. */
static int only_report(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int others = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		others += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
			  strcmp(e->d_name, "r.html");
	closedir(d);
	return !others;
}

/* Each command replaces the report whole; a run that fails (a case that
 * does not load) leaves the previous one as it was. */
static void report_written_whole_or_not_at_all(void **state)
{
	char dir[64], path[128];

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "report"));
	snprintf(path, sizeof(path), "%s/r.html", dir);
	for (size_t i = 0; i < sizeof(report_cmds) / sizeof(report_cmds[0]); i++) {
		struct run_result r;
		char *text;

		assert_int_equal(tu_put(path, "OLD"), 0);
		r = tu_run("%s --report %s", report_cmds[i], path);
		text = tu_slurp(path);
		/* mutate on one case: some classes survive it (exit 1). */
		if (r.status > 1 || !text || strncmp(text, "<!DOCTYPE html>\n", 16) ||
		    !strstr(text, "</html>\n") || strstr(text, "<script") || !only_report(dir))
			fail_msg("%s --report: exit %d, file '%.40s', stderr %s", report_cmds[i],
				 r.status, text ? text : "(none)", r.err);
		free(text);
		tu_free(&r);
	}
	/* A case that does not load: exit 2, the old report untouched. */
	assert_int_equal(tu_put(path, "OLD"), 0);
	for (size_t i = 0; i < 2; i++) {
		struct run_result r = tu_run("%s tests/data/no-such-case.yaml --report %s",
					     i ? "check" : "run", path);
		char *text = tu_slurp(path);

		assert_int_equal(r.status, 2);
		assert_string_equal(text, "OLD");
		assert_true(only_report(dir));
		free(text);
		tu_free(&r);
	}
	assert_int_equal(tu_scratch_free(dir), 0);
}

/* Issue 21 point 14: `check --report` wrote a file name's bytes that
 * are not UTF-8 (a Latin-1 e-acute, 0xE9) raw into a page that says
 * charset=utf-8. Each such byte is U+FFFD now (as in JUnit); a valid
 * UTF-8 name (C3 A9) is kept. Decoded by Python, strictly. */
static void report_names_are_utf8(void **state)
{
	char dir[64], path[128];
	struct run_result r;
	char *html;

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "utf8"));
	/* two names: check refuses two cases of one name */
	assert_int_equal(tu_sh("cp cases/edge/one-token.yaml '%s/caf\351.yaml' && "
			       "sed 's/^name: .*/name: one-token-2/' cases/edge/one-token.yaml "
			       "> '%s/n\303\251.yaml'", dir, dir), 0);
	r = tu_run("check %s --report %s/r.html", dir, dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	snprintf(path, sizeof(path), "%s/r.html", dir);
	assert_int_equal(tu_sh("python3 -c 'import sys; open(sys.argv[1], \"rb\").read()"
			       ".decode(\"utf-8\")' %s", path), 0);
	html = tu_slurp(path);
	assert_non_null(strstr(html, "/caf\xef\xbf\xbd.yaml"));
	assert_non_null(strstr(html, "/n\xc3\xa9.yaml"));
	assert_null(strstr(html, "caf\xe9"));
	free(html);
	tu_scratch_free(dir);
}

/*
 * The <svg> elements of text: each one's width and height attributes and
 * viewBox size, and whether every cell's rect lies inside its viewBox.
 * Returns how many were read (at most max).
 */
struct svg_box { int w, h, vw, vh, cells_inside, cells; };

static int svg_boxes(const char *text, struct svg_box *b, int max)
{
	int n = 0;

	for (const char *p = strstr(text, "<svg "); p && n < max; p = strstr(p + 1, "<svg ")) {
		const char *end = strstr(p + 1, "</svg>");

		memset(&b[n], 0, sizeof(b[n]));
		assert_non_null(end);
		assert_int_equal(sscanf(strstr(p, " width=\""), " width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\"",
					&b[n].w, &b[n].h, &b[n].vw, &b[n].vh), 4);
		for (const char *r = strstr(p, "<rect x=\""); r && r < end; r = strstr(r + 1, "<rect x=\"")) {
			int x, y, w, h;

			assert_int_equal(sscanf(r, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"",
						&x, &y, &w, &h), 4);
			b[n].cells++;
			b[n].cells_inside += x >= 0 && y >= 0 && x + w <= b[n].vw && y + h <= b[n].vh;
		}
		n++;
	}
	return n;
}

/* Every picture of `cmd` at most max_w px wide on screen, whole (no cell
 * outside the viewBox) and not stretched; the count of pictures. */
static int expect_fits(const char *cmd, int status, int max_w, int cells)
{
	struct svg_box b[8];
	struct run_result r = tu_run("%s", cmd);
	int n, total = 0;

	assert_int_equal(r.status, status);
	n = svg_boxes(r.out, b, 8);
	assert_true(n >= 1);
	for (int i = 0; i < n; i++) {
		if (b[i].w > max_w)
			fail_msg("%s: picture %d is %d px wide, over %d", cmd, i, b[i].w, max_w);
		assert_int_equal(b[i].cells_inside, b[i].cells);
		/* Scaled, if at all, the same both ways: h/w = vh/vw to a pixel. */
		assert_true(abs(b[i].h * b[i].vw - b[i].vh * b[i].w) <= b[i].vw);
		total += b[i].cells;
	}
	assert_int_equal(total, cells);
	tu_free(&r);
	return n;
}

/*
 * Issue 21 (17): `lanemap diff gfx936 gfx936-quad --format svg` put the
 * two 16-column grids side by side, 1924 px wide, past a 1400 px window.
 * Now the grids stack when side by side is too wide, and a picture wider
 * still (one 32-column grid is 1822 px) is scaled to fit by its width:
 * every picture fits 1400 px, less an HTML page's 16 px margins when
 * inline, with every cell inside it.
 */
static void pictures_fit_a_1400_px_window(void **state)
{
	char *yaml = tu_slurp(FRAGSIM_SRC "/profiles/cdna3-mfma-i32-32x32x16-i8.yaml");
	const char *c, *col, *name = "name: cdna3-mfma-i32-32x32x16-i8\n";
	char text[8192], cmd[600], *path;

	(void)state;
	/* gfx936 and gfx936-quad differ in C only: 2 x 256 cells. */
	expect_fits("lanemap diff gfx936 gfx936-quad --format svg", 1, 1400, 512);
	expect_fits("lanemap diff gfx936 gfx936-quad --format html", 1, 1400 - 32, 512);
	/* One map, 32 x 32 C, and its diff with C's columns reversed. */
	expect_fits("lanemap --isa cdna3-mfma-i32-32x32x16-i8 --format svg --matrix C", 0, 1400, 1024);
	assert_non_null(yaml);
	c = strstr(yaml, "\nc: ");
	assert_non_null(c);
	col = strstr(c, "col: \"lane % 32\"");
	assert_non_null(col);
	assert_non_null(strstr(yaml, name));
	snprintf(text, sizeof(text), "%.*sname: reversed\n%.*scol: \"31 - lane %% 32\"%s",
		 (int)(strstr(yaml, name) - yaml), yaml,
		 (int)(col - strstr(yaml, name) - strlen(name)), strstr(yaml, name) + strlen(name),
		 col + strlen("col: \"lane % 32\""));
	path = tu_write_temp(".yaml", text);
	if (!path) {		/* a return the compiler sees (gcc -O1 at asan) */
		free(yaml);
		fail_msg("cannot write the reversed map");
		return;
	}
	snprintf(cmd, sizeof(cmd), "lanemap diff cdna3-mfma-i32-32x32x16-i8 '%s' --format svg", path);
	expect_fits(cmd, 1, 1400, 2048);
	snprintf(cmd, sizeof(cmd), "lanemap diff cdna3-mfma-i32-32x32x16-i8 '%s' --format html", path);
	expect_fits(cmd, 1, 1400 - 32, 2048);
	unlink(path);
	free(path);
	free(yaml);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(svg_refuses_lane_and_entry),
		cmocka_unit_test(invalid_profile_draws_nothing),
		cmocka_unit_test(identical_maps_draw_no_grid),
		cmocka_unit_test(palette_keeps_64_lanes_apart),
		cmocka_unit_test(report_path_refused_first),
		cmocka_unit_test(report_written_whole_or_not_at_all),
		cmocka_unit_test(report_names_are_utf8),
		cmocka_unit_test(pictures_fit_a_1400_px_window),
	};

	return cmocka_run_group_tests_name("pictures", tests, NULL, NULL);
}
