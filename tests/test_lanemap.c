/*
 * test_lanemap.c - validation of lane maps: each problem kind is found and
 * reported precisely, replication counts are enforced, and the owner
 * look-up inverts the forward table. Maps here are built by hand with
 * lanemap_set_operand and direct table writes, so the loader is not
 * involved.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../sim/lanemap/lanemap.h"

/* A tiny valid instruction: wave32, M=N=4, K=8.
 * A 4x8 i8: 32 entries, 1 per lane; B 8x4 i8: 1 per lane; C 4x4 i32
 * replicated twice (32 slots for 16 entries). */
static struct lanemap *tiny(void)
{
	struct lanemap *lm = lanemap_new();

	lm->wave = 32;
	lm->m = 4, lm->n = 4, lm->k = 8;
	assert_int_equal(lanemap_set_operand(lm, LM_A, LM_I8, 1, 1, NULL), FS_OK);
	assert_int_equal(lanemap_set_operand(lm, LM_B, LM_I8, 1, 1, NULL), FS_OK);
	assert_int_equal(lanemap_set_operand(lm, LM_C, LM_I32, 1, 2, NULL), FS_OK);
	for (int l = 0; l < 32; l++) {
		lm->op[LM_A].row[l] = l / 8, lm->op[LM_A].col[l] = l % 8;
		lm->op[LM_B].row[l] = l % 8, lm->op[LM_B].col[l] = l / 8;
		lm->op[LM_C].row[l] = (l % 16) / 4, lm->op[LM_C].col[l] = l % 4;
	}
	return lm;
}

static void valid_map(void **state)
{
	struct lanemap *lm = tiny();
	struct lm_report rep;
	int slots[4];

	(void)state;
	assert_int_equal(lanemap_validate(lm, &rep), FS_OK);
	assert_true(lm->valid);
	assert_int_equal(rep.total, 0);
	/* C[2][3] is held by lanes 11 and 27 (l % 16 = 11). */
	assert_int_equal(lanemap_owners(lm, LM_C, 2, 3, slots, 4), 2);
	assert_int_equal(slots[0], 11);
	assert_int_equal(slots[1], 27);
	/* A[3][5] by lane 29 only. */
	assert_int_equal(lanemap_owners(lm, LM_A, 3, 5, slots, 4), 1);
	assert_int_equal(slots[0], 29);
	assert_int_equal(lanemap_owners(lm, LM_A, 4, 0, slots, 4), 0);
	lanemap_free(lm);
}

static void out_of_range_reported_with_lane_and_value(void **state)
{
	struct lanemap *lm = tiny();
	struct lm_report rep;

	(void)state;
	lm->op[LM_B].col[13] = 9;	/* B is 8x4: col 9 is out */
	assert_int_equal(lanemap_validate(lm, &rep), FS_MISMATCH);
	assert_false(lm->valid);
	assert_int_equal(rep.p[0].kind, LM_OUT_OF_RANGE);
	assert_int_equal(rep.p[0].op, LM_B);
	assert_int_equal(rep.p[0].lane, 13);
	assert_int_equal(rep.p[0].e, 0);
	assert_int_equal(rep.p[0].bad, 'c');
	assert_int_equal(rep.p[0].col, 9);
	/* The entry lane 13 should have held is now owned by nobody. */
	assert_int_equal(rep.p[1].kind, LM_UNOWNED);
	assert_int_equal(rep.p[1].row, 13 % 8);
	assert_int_equal(rep.p[1].col, 13 / 8);
	assert_int_equal(rep.total, 2);
	assert_int_equal(rep.by_kind[LM_B][LM_OUT_OF_RANGE], 1);
	assert_int_equal(rep.by_kind[LM_B][LM_UNOWNED], 1);
	lanemap_free(lm);
}

static void negative_row_is_out_of_range(void **state)
{
	struct lanemap *lm = tiny();
	struct lm_report rep;

	(void)state;
	lm->op[LM_A].row[0] = -1;
	assert_int_equal(lanemap_validate(lm, &rep), FS_MISMATCH);
	assert_int_equal(rep.p[0].kind, LM_OUT_OF_RANGE);
	assert_int_equal(rep.p[0].bad, 'r');
	assert_int_equal(rep.p[0].row, -1);
	lanemap_free(lm);
}

static void owned_twice_and_unowned(void **state)
{
	struct lanemap *lm = tiny();
	struct lm_report rep;

	(void)state;
	lm->op[LM_A].row[1] = 0, lm->op[LM_A].col[1] = 0; /* lane 1 copies lane 0 */
	assert_int_equal(lanemap_validate(lm, &rep), FS_MISMATCH);
	assert_int_equal(rep.total, 2);
	assert_int_equal(rep.p[0].kind, LM_OWNED_WRONG);
	assert_int_equal(rep.p[0].row, 0);
	assert_int_equal(rep.p[0].col, 0);
	assert_int_equal(rep.p[0].count, 2);
	assert_int_equal(rep.p[0].lane, 0);
	assert_int_equal(rep.p[1].kind, LM_UNOWNED);
	assert_int_equal(rep.p[1].col, 1);
	lanemap_free(lm);
}

static void replica_count_enforced(void **state)
{
	struct lanemap *lm = tiny();
	struct lm_report rep;

	(void)state;
	/* C must be held twice: move lane 27's copy of C[2][3] onto C[2][2]. */
	lm->op[LM_C].col[27] = 2;
	assert_int_equal(lanemap_validate(lm, &rep), FS_MISMATCH);
	assert_int_equal(rep.total, 2);
	assert_int_equal(rep.p[0].kind, LM_OWNED_WRONG);
	assert_int_equal(rep.p[0].col, 2);
	assert_int_equal(rep.p[0].count, 3);
	assert_int_equal(rep.p[1].kind, LM_OWNED_WRONG);
	assert_int_equal(rep.p[1].col, 3);
	assert_int_equal(rep.p[1].count, 1);
	lanemap_free(lm);
}

static void report_is_capped_but_counts_all(void **state)
{
	struct lanemap *lm = tiny();
	struct lm_report rep;

	(void)state;
	for (int l = 0; l < 32; l++)
		lm->op[LM_A].row[l] = 100;
	assert_int_equal(lanemap_validate(lm, &rep), FS_MISMATCH);
	assert_int_equal(rep.total, 64);	/* 32 out of range + 32 unowned */
	assert_int_equal(rep.n, LM_REPORT_MAX);
	lanemap_free(lm);
}

static void geometry_bounds(void **state)
{
	struct lanemap *lm = lanemap_new();
	struct fs_err err;

	(void)state;
	lm->wave = 48;
	lm->m = lm->n = lm->k = 16;
	assert_int_equal(lanemap_set_operand(lm, LM_A, LM_I8, 8, 1, &err), FS_EINPUT);
	lm->wave = 64;
	assert_int_equal(lanemap_set_operand(lm, LM_A, LM_I8, 0, 1, &err), FS_EINPUT);
	assert_int_equal(lanemap_set_operand(lm, LM_A, LM_I8, LM_MAX_ELEMS + 1, 1, &err),
			 FS_EINPUT);
	assert_int_equal(lanemap_set_operand(lm, LM_A, LM_I8, 8, 0, &err), FS_EINPUT);
	lm->k = LM_MAX_DIM + 1;
	assert_int_equal(lanemap_set_operand(lm, LM_A, LM_I8, 8, 1, &err), FS_EINPUT);
	lanemap_free(lm);
}

static void reg_and_byte_follow_element_size(void **state)
{
	struct lanemap *lm = tiny();
	int reg, byte;

	(void)state;
	lanemap_reg_byte(lm, LM_A, 7, &reg, &byte);	/* i8: e 7 = reg 1 byte 3 */
	assert_int_equal(reg, 1);
	assert_int_equal(byte, 3);
	lanemap_reg_byte(lm, LM_C, 3, &reg, &byte);	/* i32: e 3 = reg 3 */
	assert_int_equal(reg, 3);
	assert_int_equal(byte, 0);
	lm->op[LM_A].type = LM_F16;			/* f16: e 3 = reg 1 byte 2 */
	lanemap_reg_byte(lm, LM_A, 3, &reg, &byte);
	assert_int_equal(reg, 1);
	assert_int_equal(byte, 2);
	lanemap_free(lm);
}

static void dtype_names_round_trip(void **state)
{
	enum lm_dtype t;

	(void)state;
	assert_int_equal(lm_dtype_parse("i8", &t), 0);
	assert_int_equal(t, LM_I8);
	assert_string_equal(lm_dtype_name(LM_BF16), "bf16");
	assert_int_equal(lm_dtype_parse("int8", &t), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(valid_map),
		cmocka_unit_test(out_of_range_reported_with_lane_and_value),
		cmocka_unit_test(negative_row_is_out_of_range),
		cmocka_unit_test(owned_twice_and_unowned),
		cmocka_unit_test(replica_count_enforced),
		cmocka_unit_test(report_is_capped_but_counts_all),
		cmocka_unit_test(geometry_bounds),
		cmocka_unit_test(reg_and_byte_follow_element_size),
		cmocka_unit_test(dtype_names_round_trip),
	};

	return cmocka_run_group_tests_name("lanemap", tests, NULL, NULL);
}
