/*
 * test_lanediff.c - entry-wise diff of lane maps and the naming of simple
 * transforms. Each "Y" map is built by hand from gfx936's formulas with
 * one deliberate change, so the expected verdict is known in advance.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../sim/lanemap/lanediff.h"
#include "../lib/profile.h"

static struct lanemap *gfx936(void)
{
	struct fs_err err;
	struct lm_report rep;
	struct lanemap *lm = profile_builtin("gfx936", &err);

	assert_non_null(lm);
	assert_int_equal(lanemap_validate(lm, &rep), FS_OK);
	return lm;
}

static void revalidate(struct lanemap *lm)
{
	struct lm_report rep;

	assert_int_equal(lanemap_validate(lm, &rep), FS_OK);
}

static void diff(const struct lanemap *x, const struct lanemap *y,
		 struct lanediff *d)
{
	assert_int_equal(lanediff_compare(x, y, d, NULL), FS_OK);
}

static void identical(void **state)
{
	struct lanemap *x = gfx936(), *y = gfx936();
	struct lanediff d;

	(void)state;
	diff(x, y, &d);
	assert_int_equal(d.differ, 0);
	for (int op = 0; op < 3; op++) {
		assert_int_equal(d.op[op].kind, LD_IDENTICAL);
		assert_string_equal(d.op[op].verdict, "identical");
	}
	lanemap_free(x);
	lanemap_free(y);
}

/* gfx936 vs gfx936-quad: C lanes differ by l -> (l % 16) * 4 + l / 16.
 * Quad lane i holds what gfx936 lane 16*(i % 4) + i / 4 holds. */
static void gfx936_vs_quad(void **state)
{
	struct fs_err err;
	struct lanemap *x = gfx936(), *y = profile_builtin("gfx936-quad", &err);
	struct lanediff d;

	(void)state;
	revalidate(y);
	diff(x, y, &d);
	assert_int_equal(d.op[LM_A].differ, 0);
	assert_int_equal(d.op[LM_B].differ, 0);
	/* C[i][j]: gfx936 lane i + 16*(j%4), quad lane 4i + j%4: equal only
	 * when i + 16c == 4i + c, i.e. 15c == 3i: (i, c) = (0,0), (5,1),
	 * (10,2), (15,3), each for 4 columns -> 16 equal of 256. */
	assert_int_equal(d.op[LM_C].differ, 256 - 16);
	assert_int_equal(d.op[LM_C].kind, LD_LANES);
	assert_string_equal(d.op[LM_C].verdict,
			    "lanes interleaved by 4: Y lane i is X lane 16*(i % 4) + i / 4");
	lanemap_free(x);
	lanemap_free(y);
}

/* The contiguous-4 assumption: lane l holds C[l%16][4*(l/16) + e]. */
static void contiguous_columns_are_interleaved_by_4(void **state)
{
	struct lanemap *x = gfx936(), *y = gfx936();
	struct lanediff d;

	(void)state;
	for (int l = 0; l < 64; l++)
		for (int e = 0; e < 4; e++)
			y->op[LM_C].col[l * 4 + e] = 4 * (l / 16) + e;
	revalidate(y);
	diff(x, y, &d);
	assert_int_equal(d.op[LM_C].kind, LD_COLS);
	assert_string_equal(d.op[LM_C].verdict,
			    "columns interleaved by 4: Y column i is X column 4*(i % 4) + i / 4");
	/* Columns 0, 5, 10 and 15 keep their owners. */
	assert_int_equal(d.op[LM_C].differ, 16 * 12);
	lanemap_free(x);
	lanemap_free(y);
}

static void transpose_detected(void **state)
{
	struct lanemap *x = gfx936(), *y = gfx936();
	struct lanediff d;

	(void)state;
	for (int s = 0; s < 256; s++) {
		int r = y->op[LM_C].row[s];

		y->op[LM_C].row[s] = y->op[LM_C].col[s];
		y->op[LM_C].col[s] = r;
	}
	revalidate(y);
	diff(x, y, &d);
	assert_int_equal(d.op[LM_C].kind, LD_TRANSPOSE);
	assert_string_equal(d.op[LM_C].verdict, "transpose");
	lanemap_free(x);
	lanemap_free(y);
}

static void row_reversal_and_lane_rotation(void **state)
{
	struct lanemap *x = gfx936(), *y = gfx936(), *z = gfx936();
	struct lanediff d;

	(void)state;
	/* Y: A rows reversed (lane l holds row 15 - l%16). */
	for (int s = 0; s < 512; s++)
		y->op[LM_A].row[s] = 15 - y->op[LM_A].row[s];
	revalidate(y);
	diff(x, y, &d);
	assert_int_equal(d.op[LM_A].kind, LD_ROWS);
	assert_string_equal(d.op[LM_A].verdict,
			    "rows reversed: Y row i is X row 15 - i");
	/* Z: B lanes rotated by 3: Z lane l holds what X lane (l + 3) % 64 holds. */
	for (int l = 0; l < 64; l++)
		for (int e = 0; e < 8; e++) {
			z->op[LM_B].row[l * 8 + e] = x->op[LM_B].row[((l + 3) % 64) * 8 + e];
			z->op[LM_B].col[l * 8 + e] = x->op[LM_B].col[((l + 3) % 64) * 8 + e];
		}
	revalidate(z);
	diff(x, z, &d);
	assert_int_equal(d.op[LM_B].kind, LD_LANES);
	assert_string_equal(d.op[LM_B].verdict,
			    "lanes rotated by 3: Y lane i is X lane (i + 3) % 64");
	lanemap_free(x);
	lanemap_free(y);
	lanemap_free(z);
}

static void elements_swapped_and_unstructured(void **state)
{
	struct lanemap *x = gfx936(), *y = gfx936(), *z = gfx936();
	struct lanediff d;

	(void)state;
	/* Y: in every lane, C registers 1 and 2 swapped. That is also a
	 * column permutation (cols 4..7 <-> 8..11), which is found first. */
	for (int l = 0; l < 64; l++) {
		int32_t t = y->op[LM_C].col[l * 4 + 1];

		y->op[LM_C].col[l * 4 + 1] = y->op[LM_C].col[l * 4 + 2];
		y->op[LM_C].col[l * 4 + 2] = t;
	}
	revalidate(y);
	diff(x, y, &d);
	assert_int_equal(d.op[LM_C].kind, LD_COLS);
	/* Z: swap A elements 0 and 1 only in lane 5: no structure. */
	{
		int32_t t = z->op[LM_A].col[5 * 8];

		z->op[LM_A].col[5 * 8] = z->op[LM_A].col[5 * 8 + 1];
		z->op[LM_A].col[5 * 8 + 1] = t;
	}
	revalidate(z);
	diff(x, z, &d);
	assert_int_equal(d.op[LM_A].differ, 2);
	assert_int_equal(d.op[LM_A].kind, LD_UNSTRUCTURED);
	lanemap_free(x);
	lanemap_free(y);
	lanemap_free(z);
}

/* CDNA3 MFMA C: lane l holds rows 4*(l/16) + e of column l % 16, i.e.
 * C[i][j] in lane j + 16*(i/4), element i % 4. Transposed, that is lane
 * i + 16*(j/4), element j % 4; gfx936 holds C[i][j] in lane i + 16*(j%4),
 * element j / 4: so gfx936's column j is the transposed column
 * 4*(j % 4) + j / 4. */
static void mfma_vs_mmac_is_transpose_then_interleave(void **state)
{
	struct fs_err err;
	struct lanemap *x = profile_builtin("cdna3-mfma-i32-16x16x32-i8", &err);
	struct lanemap *y = gfx936();
	struct lanediff d;

	(void)state;
	revalidate(x);
	diff(x, y, &d);
	assert_int_equal(d.op[LM_A].kind, LD_IDENTICAL);
	assert_int_equal(d.op[LM_C].kind, LD_TRANSPOSE_PERM);
	assert_string_equal(d.op[LM_C].verdict,
			    "transpose, then columns interleaved by 4: Y column i is X column 4*(i % 4) + i / 4");
	lanemap_free(x);
	lanemap_free(y);
}

static void incomparable_shapes_and_invalid_maps(void **state)
{
	struct fs_err err;
	struct lanemap *x = gfx936(), *y = profile_builtin("sm80-mma-m16n8k32-s8", &err);
	struct lanemap *bad = profile_builtin("gfx936-article", &err);
	struct lm_report rep;
	struct lanediff d;

	(void)state;
	revalidate(y);
	diff(x, y, &d);
	assert_int_equal(d.op[LM_C].kind, LD_INCOMPARABLE);
	assert_int_equal(d.op[LM_C].differ, 16 * 8);
	lanemap_validate(bad, &rep);
	assert_int_equal(lanediff_compare(x, bad, &d, &err), FS_EINPUT);
	lanemap_free(x);
	lanemap_free(y);
	lanemap_free(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(identical),
		cmocka_unit_test(gfx936_vs_quad),
		cmocka_unit_test(contiguous_columns_are_interleaved_by_4),
		cmocka_unit_test(transpose_detected),
		cmocka_unit_test(row_reversal_and_lane_rotation),
		cmocka_unit_test(elements_swapped_and_unstructured),
		cmocka_unit_test(mfma_vs_mmac_is_transpose_then_interleave),
		cmocka_unit_test(incomparable_shapes_and_invalid_maps),
	};

	return cmocka_run_group_tests_name("lanediff", tests, NULL, NULL);
}
