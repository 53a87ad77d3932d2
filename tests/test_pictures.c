/*
 * test_pictures.c - `lanemap --format svg` and `lanemap diff --format
 * svg|html` from the command line: what they refuse (exit 2, nothing on
 * stdout), an invalid profile (exit 1, no picture), and the lane palette.
 * The pictures themselves (XML, owners against the published layouts,
 * rendering in Chromium) are tests/browser.py's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

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
		"diff: --format must be text, json, svg or html",
		"check: --format must be text or json",
		"check: --format must be text or json",
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(svg_refuses_lane_and_entry),
		cmocka_unit_test(invalid_profile_draws_nothing),
		cmocka_unit_test(identical_maps_draw_no_grid),
		cmocka_unit_test(palette_keeps_64_lanes_apart),
	};

	return cmocka_run_group_tests_name("pictures", tests, NULL, NULL);
}
