/*
 * test_mmac.c - the per-lane executor against a plain int32 matrix
 * product, for every valid builtin profile: random A and B scattered into
 * lanes by the profile, executed, gathered back, compared entry by entry.
 * Also: sparse A, accumulation into existing C, replica disagreement, u8 operands,
 * and refusal of invalid or non-integer profiles.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../sim/lanemap/mmac.h"
#include "../lib/profile.h"
#include "testutil.h"
#include "tuprofile.h"

/* C = C0 + A * B with plain loops; the oracle. */
static void matmul(int m, int n, int k, const int8_t *a, const int8_t *b,
		   const int32_t *c0, int32_t *c)
{
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++) {
			int32_t s = c0[i * n + j];

			for (int x = 0; x < k; x++)
				s += (int32_t)a[i * k + x] * b[x * n + j];
			c[i * n + j] = s;
		}
}

static void check_profile(struct lanemap *lm, uint64_t seed)
{
	int m = lm->m, n = lm->n, k = lm->k;
	int8_t a[LM_MAX_SLOTS], b[LM_MAX_SLOTS];
	int32_t c0[LM_MAX_SLOTS], want[LM_MAX_SLOTS], got[LM_MAX_SLOTS];
	uint8_t ra[LM_MAX_SLOTS], rb[LM_MAX_SLOTS];
	int32_t rc[LM_MAX_SLOTS];

	for (int i = 0; i < m * k; i++)
		a[i] = (int8_t)(tu_rand(&seed) & 0xff);
	for (int i = 0; i < k * n; i++)
		b[i] = (int8_t)(tu_rand(&seed) & 0xff);
	for (int i = 0; i < m * n; i++)
		c0[i] = (int32_t)(tu_rand(&seed) % 2000001) - 1000000;
	/* Sparse A, as a masked or one-key P is (the executor skips its
	 * zeros): every third seed keeps one entry in eight, row 1 none. */
	for (int i = 0; seed % 3 == 0 && i < m * k; i++)
		if (i / k == 1 || tu_rand(&seed) % 8)
			a[i] = 0;
	/* Extremes: -128 * -128 summed over K must not be lost. */
	a[0] = -128, b[0] = -128;
	matmul(m, n, k, a, b, c0, want);

	mmac_scatter8(lm, LM_A, (const uint8_t *)a, ra);
	mmac_scatter8(lm, LM_B, (const uint8_t *)b, rb);
	mmac_scatter32(lm, LM_C, c0, rc);
	assert_int_equal(mmac_exec(lm, ra, rb, rc, NULL, NULL), FS_OK);
	mmac_gather32(lm, LM_C, rc, got);
	for (int i = 0; i < m * n; i++) {
		if (got[i] != want[i])
			fail_msg("%s: C[%d][%d] = %d, expected %d", lm->name, i / n,
				 i % n, got[i], want[i]);
	}
}

static void every_valid_builtin_matches_matmul(void **state)
{
	int checked = 0;

	(void)state;
	for (int i = 0; i < profile_builtin_count(); i++) {
		struct lanemap *lm = tu_builtin_valid(profile_builtin_name(i));

		if (!lm)
			continue;
		for (uint64_t seed = 1; seed <= 20; seed++)
			check_profile(lm, seed * 7919 + (uint64_t)i);
		lanemap_free(lm);
		checked++;
	}
	/* Six of the seven builtins are valid (gfx936-article is not). */
	assert_int_equal(checked, profile_builtin_count() - 1);
}

/* Hand-worked: gfx936, A all ones, B[k][j] = j: C[i][j] = 32 * j. Lane 17
 * holds C[1][1], C[1][5], C[1][9], C[1][13] in registers 0..3. */
static void gfx936_hand_worked(void **state)
{
	struct lanemap *lm = tu_builtin_valid("gfx936");
	uint8_t ra[64 * 8], rb[64 * 8];
	int32_t rc[64 * 4] = { 0 };

	(void)state;
	assert_non_null(lm);
	memset(ra, 1, sizeof(ra));
	for (int l = 0; l < 64; l++)
		for (int e = 0; e < 8; e++)
			rb[l * 8 + e] = (uint8_t)(l % 16);	/* B col = lane % 16 */
	assert_int_equal(mmac_exec(lm, ra, rb, rc, NULL, NULL), FS_OK);
	assert_int_equal(rc[17 * 4 + 0], 32 * 1);
	assert_int_equal(rc[17 * 4 + 1], 32 * 5);
	assert_int_equal(rc[17 * 4 + 2], 32 * 9);
	assert_int_equal(rc[17 * 4 + 3], 32 * 13);
	lanemap_free(lm);
}

static void replicas_must_agree(void **state)
{
	struct lanemap *lm = tu_builtin_valid("rdna3-wmma-i32-16x16x16-iu8-w32");
	uint8_t ra[LM_MAX_SLOTS] = { 0 }, rb[LM_MAX_SLOTS] = { 0 };
	int32_t rc[LM_MAX_SLOTS] = { 0 }, before;
	struct mmac_fault fault;
	struct fs_err err;
	int slots[8];

	(void)state;
	assert_non_null(lm);
	assert_int_equal(lm->op[LM_A].replicas, 2);
	/* Change one replica of A[3][5] only. */
	assert_int_equal(lanemap_owners(lm, LM_A, 3, 5, slots, 8), 2);
	ra[slots[1]] = 9;
	before = rc[0];
	assert_int_equal(mmac_exec(lm, ra, rb, rc, &fault, &err), FS_MISMATCH);
	assert_int_equal(fault.op, LM_A);
	assert_int_equal(fault.row, 3);
	assert_int_equal(fault.col, 5);
	assert_int_equal(fault.slot0, slots[0]);
	assert_int_equal(fault.slot1, slots[1]);
	assert_int_equal(fault.v0, 0);
	assert_int_equal(fault.v1, 9);
	assert_int_equal(rc[0], before);
	assert_non_null(strstr(err.msg, "replicas disagree"));
	lanemap_free(lm);
}

static void u8_operands_are_unsigned(void **state)
{
	struct lanemap *lm = tu_builtin_valid("gfx936");
	uint8_t ra[64 * 8], rb[64 * 8];
	int32_t rc[64 * 4] = { 0 };

	(void)state;
	memset(ra, 0xff, sizeof(ra));
	memset(rb, 0x01, sizeof(rb));
	assert_int_equal(mmac_exec(lm, ra, rb, rc, NULL, NULL), FS_OK);
	assert_int_equal(rc[0], -32);		/* i8: 32 * (-1 * 1) */
	lm->op[LM_A].type = LM_U8;
	rc[0] = 0;
	assert_int_equal(mmac_exec(lm, ra, rb, rc, NULL, NULL), FS_OK);
	assert_int_equal(rc[0], 32 * 255);	/* u8: 32 * (255 * 1) */
	lanemap_free(lm);
}

static void refuses_invalid_and_float_profiles(void **state)
{
	struct fs_err err;
	struct lanemap *lm = profile_builtin("gfx936-article", &err);
	struct lm_report rep;
	uint8_t r[LM_MAX_SLOTS] = { 0 };
	int32_t c[LM_MAX_SLOTS] = { 0 };

	(void)state;
	assert_int_equal(lanemap_validate(lm, &rep), FS_MISMATCH);
	assert_int_equal(mmac_exec(lm, r, r, c, NULL, &err), FS_EINPUT);
	lanemap_free(lm);
	lm = tu_builtin_valid("gfx936");
	lm->op[LM_A].type = LM_F16;
	assert_int_equal(mmac_exec(lm, r, r, c, NULL, &err), FS_EINPUT);
	lanemap_free(lm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_valid_builtin_matches_matmul),
		cmocka_unit_test(gfx936_hand_worked),
		cmocka_unit_test(replicas_must_agree),
		cmocka_unit_test(u8_operands_are_unsigned),
		cmocka_unit_test(refuses_invalid_and_float_profiles),
	};

	return cmocka_run_group_tests_name("mmac", tests, NULL, NULL);
}
