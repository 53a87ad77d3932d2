/*
 * test_lmloads.c - lane maps composed with memory layouts (sim/lanemap/lmloads.c).
 *
 * Expected offsets are worked out here from the published maps and the
 * layout's own row-major formula, not from fragsim's tables:
 *   gfx936 B (Hygon CK port, as CDNA3's v_mfma_i32_16x16x32_i8): B[k][n]
 *   is held by lane n + 16*(k/8) at element k % 8;
 *   gfx936 A: A[m][k] by lane m + 16*(k/8), element k % 8.
 *   [NB, Hkv, D/16, BS, 16]: byte ((h*(D/16) + d/16)*BS + t)*16 + d%16.
 * So lane l of K-step s reads key l % 16, dims 32*s + 8*(l/16) .. +7.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../sim/lanemap/lmloads.h"
#include "tuprofile.h"

/* Each test gets the gfx936 map and room for one fragment. */
struct fix {
	struct lanemap *lm;
	struct lml_frag *f;
};

static int setup(void **state)
{
	struct fix *x = calloc(1, sizeof(*x));

	if (!x || !(x->f = malloc(sizeof(*x->f))) || !(x->lm = tu_builtin_valid("gfx936")))
		return -1;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fix *x = *state;

	lanemap_free(x->lm);
	free(x->f);
	free(x);
	return 0;
}

static void layout(const char *s, int hkv, int bs, int d, struct lml_layout *l)
{
	struct fs_err err;

	assert_int_equal(lml_parse(s, hkv, bs, d, l, &err), FS_OK);
}

/* The shipped cache: every lane one aligned 8-byte load, at the hand-
 * worked offsets, for every K-step of a 256-dim head. */
static void gfx936_b_on_the_shipped_cache(void **state)
{
	struct fix *x = *state;
	struct lanemap *lm = x->lm;
	struct lml_frag *f = x->f;
	struct lml_layout l;
	struct fs_err err;

	layout("paged16", 4, 16, 256, &l);
	assert_string_equal(l.text, "[NB, Hkv, D/16, BS, 16]");
	for (int s = 0; s < 8; s++) {
		assert_int_equal(lml_k_frag(lm, &l, 1, s, f, &err), FS_OK);
		assert_int_equal(f->loads, 64);
		assert_int_equal(f->widest, 8);
		assert_int_equal(f->lanes_one_load, 64);
		for (int lane = 0; lane < 64; lane++) {
			int t = lane % 16, d = 32 * s + 8 * (lane / 16);
			long want = ((1L * 16 + d / 16) * 16 + t) * 16 + d % 16;

			assert_int_equal(f->lane[lane].nrun, 1);
			assert_int_equal(f->lane[lane].run[0].off, want);
			assert_int_equal(f->lane[lane].run[0].bytes, 8);
			assert_int_equal(f->lane[lane].run[0].key, t);
			assert_int_equal(f->lane[lane].run[0].dim, d);
		}
	}
	/* Two rows by hand: head 1 starts at 16 groups * 16 tokens * 16 B. */
	assert_int_equal(lml_k_frag(lm, &l, 1, 0, f, &err), FS_OK);
	assert_int_equal(f->lane[0].run[0].off, 4096);
	assert_int_equal(f->lane[33].run[0].off, 4096 + (1 * 16 + 1) * 16);
}

/* Dims outermost, tokens innermost: a lane's 8 dims are BS bytes apart,
 * eight 1-byte loads; groups of 4 dims: two aligned 4-byte loads. */
static void layouts_that_break_vector_loads(void **state)
{
	struct fix *x = *state;
	struct lanemap *lm = x->lm;
	struct lml_frag *f = x->f;
	struct lml_layout l;
	struct fs_err err;

	layout("[NB, Hkv, D, BS]", 4, 16, 256, &l);
	assert_int_equal(lml_k_frag(lm, &l, 0, 0, f, &err), FS_OK);
	assert_int_equal(f->lane[17].nrun, 8);
	assert_int_equal(f->lane[17].run[1].off, (8 + 1) * 16 + 1);	/* dim 9, key 1 */
	assert_int_equal(f->loads, 64 * 8);
	assert_int_equal(f->widest, 1);
	assert_int_equal(f->lanes_one_load, 0);

	layout("[NB, Hkv, D/4, BS, 4]", 4, 16, 256, &l);
	assert_int_equal(lml_k_frag(lm, &l, 0, 0, f, &err), FS_OK);
	assert_int_equal(f->lane[1].nrun, 2);
	assert_int_equal(f->lane[1].run[0].off, 1 * 4);		/* dims 0..3, key 1 */
	assert_int_equal(f->lane[1].run[1].off, (16 + 1) * 4);	/* dims 4..7 */
	assert_int_equal(f->loads, 128);
	assert_int_equal(f->widest, 4);

	/* Contiguous but misaligned: with one 36-byte head row per token
	 * (nhd, Hkv 1, D 36: layout arithmetic, not a real head_dim), key 1
	 * starts at +36, so lane 1's 8 bytes are two aligned 4-byte loads
	 * and lane 0's (at +0) one 8-byte load. */
	layout("nhd", 1, 16, 36, &l);
	assert_int_equal(lml_k_frag(lm, &l, 0, 0, f, &err), FS_OK);
	assert_int_equal(f->lane[0].loads, 1);
	assert_int_equal(f->lane[1].nrun, 1);
	assert_int_equal(f->lane[1].run[0].off, 36);
	assert_int_equal(f->lane[1].run[0].loads, 2);
}

/* vLLM's [NB, BS, Hkv, D]: a token's dims are contiguous too. */
static void nhd_is_one_load_per_lane(void **state)
{
	struct fix *x = *state;
	struct lanemap *lm = x->lm;
	struct lml_frag *f = x->f;
	struct lml_layout l;
	struct fs_err err;

	layout("nhd", 4, 16, 256, &l);
	assert_int_equal(lml_k_frag(lm, &l, 2, 1, f, &err), FS_OK);
	assert_int_equal(f->lanes_one_load, 64);
	/* lane 50: key 2, dims 32 + 24 = 56..63 of head 2 */
	assert_int_equal(f->lane[50].run[0].off, (2L * 4 + 2) * 256 + 56);
}

/* Block size 4: the tile's 16 keys lie in four blocks; key 5 is token 1
 * of block 1. */
static void keys_cross_blocks(void **state)
{
	struct fix *x = *state;
	struct lanemap *lm = x->lm;
	struct lml_frag *f = x->f;
	struct lml_layout l;
	struct fs_err err;

	layout("paged16", 4, 4, 256, &l);
	assert_int_equal(lml_k_frag(lm, &l, 0, 0, f, &err), FS_OK);
	assert_int_equal(f->lane[5].run[0].block, 1);
	assert_int_equal(f->lane[5].run[0].off, 1 * 16);
	assert_int_equal(f->lane[21].run[0].off, 1 * 16 + 8);
}

/* head_dim 80: K-step 2 covers dims 64..95, so lanes 32..63 (dims 80..)
 * hold only zero padding and load nothing. */
static void padding_loads_nothing(void **state)
{
	struct fix *x = *state;
	struct lanemap *lm = x->lm;
	struct lml_frag *f = x->f;
	struct lml_layout l;
	struct fs_err err;

	layout("paged16", 4, 16, 80, &l);
	assert_int_equal(lml_k_frag(lm, &l, 0, 2, f, &err), FS_OK);
	assert_int_equal(f->lane[0].nrun, 1);
	assert_int_equal(f->lane[32].nrun, 0);
	assert_int_equal(f->lane[32].padded, 8);
	assert_int_equal(f->loads, 32);
	assert_int_equal(lml_k_frag(lm, &l, 0, 3, f, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "K-steps 0 to 2"));
}

/* Q [T, Hq, D], decode, Qwen3.5's 24/4 heads: rows are the 6 heads of
 * kv head 1's group, q heads 6..11; rows 6..15 of A hold nothing. */
static void q_decode_and_prefill(void **state)
{
	struct fix *x = *state;
	struct lanemap *lm = x->lm;
	struct lml_frag *f = x->f;
	struct fs_err err;

	assert_int_equal(lml_q_frag(lm, 24, 256, 6, 0, 1, 0, f, &err), FS_OK);
	assert_int_equal(f->lane[0].run[0].off, 6 * 256);
	assert_int_equal(f->lane[21].run[0].off, 11 * 256 + 8);	/* m 5, k 8 */
	assert_int_equal(f->lane[6].nrun, 0);
	assert_int_equal(f->lane[6].padded, 8);
	assert_int_equal(f->loads, 4 * 6);
	/* prefill: row m is token m of q head 3: m*24*256 + 3*256 + k */
	assert_int_equal(lml_q_frag(lm, 24, 256, 6, 1, 3, 1, f, &err), FS_OK);
	assert_int_equal(f->lane[18].run[0].off, 2L * 24 * 256 + 3 * 256 + 32 + 8);
	assert_int_equal(f->lanes_one_load, 64);
}

static void bad_layouts_are_named(void **state)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "[Hkv, NB, BS, D]", "NB must come first" },
		{ "[NB, Hkv, BS, D/16, 8]", "D/16 wants its 16" },
		{ "[NB, Hkv, BS]", "want D, or D/n and n" },
		{ "[NB, Hkv, BS, X]", "unknown factor 'X'" },
		{ "[NB, Hkv, BS, D/3, 3]", "D/3 does not divide head_dim 256" },
		{ "[NB, Hkv, Hkv, BS, D]", "'Hkv' appears twice" },
		{ "paged", "want a name (paged16, nhd, hnd)" },
		{ "[NB, BS, D/0, 0, Hkv]", "'D/0'" },
	};
	struct lml_layout l;
	struct fs_err err;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(lml_parse(bad[i].text, 4, 16, 256, &l, &err), FS_EINPUT);
		if (!strstr(err.msg, bad[i].want))
			fail_msg("%s: got '%s', want '%s'", bad[i].text, err.msg, bad[i].want);
	}
}

/* The K-step bound and the head bounds are errors, not reads past the
 * cache. */
static void out_of_range_is_refused(void **state)
{
	struct fix *x = *state;
	struct lanemap *lm = x->lm;
	struct lml_frag *f = x->f;
	struct lml_layout l;
	struct fs_err err;

	layout("paged16", 4, 16, 256, &l);
	assert_int_equal(lml_k_frag(lm, &l, 4, 0, f, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "heads 0 to 3"));
	assert_int_equal(lml_k_frag(lm, &l, 0, -1, f, &err), FS_EINPUT);
	assert_int_equal(lml_q_frag(lm, 24, 256, 6, 0, 4, 0, f, &err), FS_EINPUT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(gfx936_b_on_the_shipped_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(layouts_that_break_vector_loads, setup, teardown),
		cmocka_unit_test_setup_teardown(nhd_is_one_load_per_lane, setup, teardown),
		cmocka_unit_test_setup_teardown(keys_cross_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(padding_loads_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(q_decode_and_prefill, setup, teardown),
		cmocka_unit_test(bad_layouts_are_named),
		cmocka_unit_test_setup_teardown(out_of_range_is_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
