/*
 * test_probe.c - the lane-map probe: a simulated device (the executor
 * under a builtin profile) answers the plan and solve must find that
 * profile again; a device under another profile must be named; answers
 * that no lane map explains must be refused, never crash. Then the same
 * through the fragsim binary: plan, simulate, solve, --yaml round trip,
 * and the malformed dumps a user will bring.
 *
 * The short plan the same way: it must find every builtin and name other
 * devices as the exhaustive plan does, refuse a device that is not linear
 * (tests/data/profiles/gfx936-c-rotated.yaml, which the exhaustive plan
 * then finds), and refuse a dump with any one C value changed.
 *
 * Expected maps are the profile files themselves (profile_builtin), and
 * the counts are worked by hand in the comments from their formulas.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "../sim/lanemap/lanediff.h"
#include "../sim/lanemap/mmac.h"
#include "../sim/lanemap/probe.h"
#include "../lib/npy.h"
#include "../lib/profile.h"
#include "testutil.h"
#include "tuprofile.h"

static void revalidate(struct lanemap *lm)
{
	struct lm_report rep;

	assert_int_equal(lanemap_validate(lm, &rep), FS_OK);
}

/* A plan for p and the answers of a device that follows dev. */
struct run {
	struct probe_layout pl;
	int waves;
	uint8_t *a, *b;
	int32_t *c;
	size_t nc;	/* int32s in c */
};

static void run_free(struct run *r)
{
	free(r->a);
	free(r->b);
	free(r->c);
}

static struct run plan_kind(const struct lanemap *p, const struct lanemap *dev,
			    enum probe_kind kind)
{
	struct run r;

	assert_int_equal(probe_layout(p, kind, &r.pl, NULL), FS_OK);
	r.waves = r.pl.waves;
	r.a = malloc((size_t)r.waves * (size_t)(p->wave * p->op[LM_A].elems));
	r.b = malloc((size_t)r.waves * (size_t)(p->wave * p->op[LM_B].elems));
	r.nc = (size_t)r.waves * (size_t)(p->wave * p->op[LM_C].elems);
	r.c = malloc(r.nc * sizeof(int32_t));
	assert_int_equal(probe_plan(p, &r.pl, r.a, r.b, NULL), FS_OK);
	assert_int_equal(probe_device(dev, r.waves, r.a, r.b, r.c, NULL), FS_OK);
	return r;
}

/* The exhaustive plan: every A slot lit alone. */
static struct run plan_and_answer(const struct lanemap *p, const struct lanemap *dev)
{
	return plan_kind(p, dev, PROBE_EXHAUSTIVE);
}

static void assert_same_tables(const struct lanemap *want, const struct lanemap *got)
{
	assert_int_equal(got->m, want->m);
	assert_int_equal(got->n, want->n);
	assert_int_equal(got->k, want->k);
	for (int op = 0; op < LM_NOPERANDS; op++) {
		const struct lanemap_operand *w = &want->op[op], *g = &got->op[op];

		assert_int_equal(g->replicas, w->replicas);
		for (int s = 0; s < want->wave * w->elems; s++)
			if (g->row[s] != w->row[s] || g->col[s] != w->col[s])
				fail_msg("%s %s lane %d e %d: found (%d, %d), expected (%d, %d)",
					 want->name, lm_operand_name((enum lm_operand)op),
					 s / w->elems, s % w->elems, g->row[s], g->col[s],
					 w->row[s], w->col[s]);
	}
}

static void every_valid_builtin_recovers_itself(void **state)
{
	int checked = 0, sm80 = 0, rdna3 = 0;

	(void)state;
	for (int i = 0; i < profile_builtin_count(); i++) {
		struct lanemap *lm = tu_builtin_valid(profile_builtin_name(i));
		struct probe_result res;
		struct fs_err err;
		struct run r;

		if (!lm)
			continue;
		r = plan_and_answer(lm, lm);
		if (probe_solve(lm, &r.pl, lm, r.a, r.b, r.c, &res, &err) != FS_OK)
			fail_msg("%s: %s", lm->name, err.msg);
		assert_same_tables(lm, res.found);
		assert_int_equal(res.terms, lm->m * lm->n * lm->k);
		sm80 += !strcmp(lm->name, "sm80-mma-m16n8k32-s8");
		rdna3 += !strncmp(lm->name, "rdna3-", 6);
		lanemap_free(res.found);
		run_free(&r);
		lanemap_free(lm);
		checked++;
	}
	/* gfx936-article is the one invalid builtin */
	assert_int_equal(checked, profile_builtin_count() - 1);
	assert_int_equal(sm80, 1);
	assert_int_equal(rdna3, 2);
}

/* The sm80 plan: 32 lanes x 16 A elements = 512 one-hot slots, 2 waves
 * each, 3 checks; 16 x 8 x 32 = 4096 products. */
static void sm80_plan_size(void **state)
{
	struct lanemap *lm = tu_builtin_valid("sm80-mma-m16n8k32-s8");
	struct probe_layout pl;

	(void)state;
	assert_int_equal(probe_layout(lm, PROBE_EXHAUSTIVE, &pl, NULL), FS_OK);
	assert_int_equal(pl.waves, 2 * 512 + 3);
	lanemap_free(lm);
}

/*
 * Worked in sim/lanemap/probe.h: gfx936 A lane 1 e 1 is A slot 9, lit in waves 18
 * and 19. B slot 9 (lane 1 e 1, B[1][1]) reads 9 % 100 + 1 = 10 in wave
 * 18 and 9 / 100 + 1 = 1 in wave 19. C lane 17 e 0 holds C[1][1] = A[1][1]
 * * B[1][1], so it reads 10 then 1. Check waves: ones gives K = 32;
 * extreme gives 32 * (-128 * 127) = -520192 in every C slot.
 */
static void gfx936_hand_worked(void **state)
{
	struct lanemap *lm = tu_builtin_valid("gfx936");
	struct run r = plan_and_answer(lm, lm);
	const int sa = 512, sb = 512, sc = 256;

	(void)state;
	assert_int_equal(r.waves, 1027);
	for (int x = 0; x < sa; x++)
		assert_int_equal(r.a[18 * sa + x], x == 9);
	assert_int_equal(r.b[18 * sb + 9], 10);
	assert_int_equal(r.b[19 * sb + 9], 1);
	assert_int_equal(r.b[18 * sb + 0], 1);
	assert_int_equal(r.b[19 * sb + 511], 6);	/* 511 / 100 + 1 */
	assert_int_equal(r.c[18 * sc + 17 * 4 + 0], 10);
	assert_int_equal(r.c[19 * sc + 17 * 4 + 0], 1);
	assert_int_equal(r.c[18 * sc + 18 * 4 + 0], 0);	/* C[2][1]: row 2 not lit */
	for (int x = 0; x < sc; x++) {
		assert_int_equal(r.c[1024 * sc + x], 32);
		assert_int_equal(r.c[1025 * sc + x], -520192);
	}
	run_free(&r);
	lanemap_free(lm);
}

/*
 * RDNA3 holds A[i][k] in lanes i and i + 16 (and i + 32, i + 48 in wave64,
 * profile comments). The simulated device reads the lowest copy, so the
 * never-read A slots are lanes 16..31 x 16 elements = 256 (wave32) and
 * lanes 16..63 x 16 = 768 (wave64); their entries are the profile's.
 */
static void replica_copies_reported(void **state)
{
	static const struct { const char *name; int unread; } t[] = {
		{ "rdna3-wmma-i32-16x16x16-iu8-w32", 256 },
		{ "rdna3-wmma-i32-16x16x16-iu8-w64", 768 },
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(t); i++) {
		struct lanemap *lm = tu_builtin_valid(t[i].name);
		struct run r = plan_and_answer(lm, lm);
		struct probe_result res;

		assert_int_equal(probe_solve(lm, &r.pl, lm, r.a, r.b, r.c, &res, NULL), FS_OK);
		assert_int_equal(res.unread[LM_A], t[i].unread);
		assert_int_equal(res.unread[LM_B], t[i].unread);
		assert_int_equal(res.read[LM_A][15 * 16 + 15], 1);	/* lane 15 */
		assert_int_equal(res.read[LM_A][16 * 16 + 0], 0);	/* lane 16 */
		assert_same_tables(lm, res.found);
		lanemap_free(res.found);
		run_free(&r);
		lanemap_free(lm);
	}
}

/* A device that reads the highest copy instead: lanes 0..15 go unread. */
static void device_reading_upper_copy(void **state)
{
	struct lanemap *lm = tu_builtin_valid("rdna3-wmma-i32-16x16x16-iu8-w32");
	struct run r = plan_and_answer(lm, lm);
	const struct lanemap_operand *oa = &lm->op[LM_A], *ob = &lm->op[LM_B];
	struct probe_result res;

	(void)state;
	for (int w = 0; w < r.waves; w++) {
		uint8_t ra[512], rb[512];

		memcpy(ra, &r.a[w * 512], 512);
		memcpy(rb, &r.b[w * 512], 512);
		for (int i = 0; i < 256; i++) {
			ra[oa->owner[2 * i]] = ra[oa->owner[2 * i + 1]];
			rb[ob->owner[2 * i]] = rb[ob->owner[2 * i + 1]];
		}
		memset(&r.c[w * 256], 0, 256 * sizeof(int32_t));
		assert_int_equal(mmac_exec(lm, ra, rb, &r.c[w * 256], NULL, NULL), FS_OK);
	}
	assert_int_equal(probe_solve(lm, &r.pl, lm, r.a, r.b, r.c, &res, NULL), FS_OK);
	assert_int_equal(res.unread[LM_A], 256);
	assert_int_equal(res.read[LM_A][0], 0);
	assert_int_equal(res.read[LM_A][16 * 16], 1);
	assert_same_tables(lm, res.found);
	lanemap_free(res.found);
	run_free(&r);
	lanemap_free(lm);
}

static struct lanemap *solve_other(const char *plan, const char *device,
				   struct lanediff *d)
{
	struct lanemap *p = tu_builtin_valid(plan), *dev = tu_builtin_valid(device);
	struct run r = plan_and_answer(p, dev);
	struct probe_result res;
	struct fs_err err;

	if (probe_solve(p, &r.pl, p, r.a, r.b, r.c, &res, &err) != FS_OK)
		fail_msg("%s on %s: %s", plan, device, err.msg);
	assert_same_tables(dev, res.found);
	assert_int_equal(lanediff_compare(p, res.found, d, NULL), FS_OK);
	run_free(&r);
	lanemap_free(p);
	lanemap_free(dev);
	return res.found;
}

/*
 * gfx936, gfx936-quad and cdna3 share A and B (profile files) and differ
 * in C. gfx936 holds C[i][j] in lane i + 16*(j%4), quad in lane
 * 4i + j%4 (both e = j/4): equal iff 15*(j%4) = 3i, i.e. i = 5*(j%4),
 * 4 rows x 4 values of j/4 = 16 entries; 240 of 256 differ.
 */
static void another_device_is_named(void **state)
{
	static const char *const pairs[][2] = {
		{ "gfx936", "gfx936-quad" },
		{ "gfx936", "cdna3-mfma-i32-16x16x32-i8" },
		{ "gfx936-quad", "gfx936" },
		{ "cdna3-mfma-i32-16x16x32-i8", "gfx936-quad" },
	};
	struct lanediff d;

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(pairs); i++) {
		struct lanemap *f = solve_other(pairs[i][0], pairs[i][1], &d);

		assert_int_equal(d.op[LM_A].differ, 0);
		assert_int_equal(d.op[LM_B].differ, 0);
		assert_true(d.op[LM_C].differ > 0);
		if (i == 0)
			assert_int_equal(d.op[LM_C].differ, 240);
		lanemap_free(f);
	}
}

/*
 * A plan with unsigned A and B (u8) answered by a device that reads them
 * as signed: the one-hot waves hold bytes below 128, alike either way,
 * so the products are found; the check waves ("extreme": 255 x 255, 16 a
 * C slot, reads 16 x 1 = 16 where unsigned predicts 16 x 65025) hold only
 * under the signed reading. Solve names that reading (read_signed, both
 * plans) and finds the lane map the same; a device reading only A signed
 * gives 1; a device reading u8 as u8 gives 0, as does a signed plan.
 */
static struct lanemap *with_types(const char *name, enum lm_dtype ta, enum lm_dtype tb)
{
	struct lanemap *lm = tu_builtin_valid(name);

	lm->op[LM_A].type = ta;
	lm->op[LM_B].type = tb;
	return lm;
}

static void unsigned_read_as_signed_is_named(void **state)
{
	static const struct { enum lm_dtype da, db; int want; } dev[] = {
		{ LM_I8, LM_I8, 3 }, { LM_I8, LM_U8, 1 }, { LM_U8, LM_I8, 2 }, { LM_U8, LM_U8, 0 },
	};
	const char *name = "rdna3-wmma-i32-16x16x16-iu8-w32";
	struct lanemap *plan = with_types(name, LM_U8, LM_U8);

	(void)state;
	for (int kind = 0; kind < 2; kind++)
		for (size_t i = 0; i < FS_ARRAY_LEN(dev); i++) {
			struct lanemap *d = with_types(name, dev[i].da, dev[i].db);
			struct run r = plan_kind(plan, d, kind ? PROBE_SHORT : PROBE_EXHAUSTIVE);
			struct probe_result res;
			struct fs_err err;

			if (probe_solve(plan, &r.pl, plan, r.a, r.b, r.c, &res, &err) != FS_OK)
				fail_msg("device %zu, %s plan: %s", i, kind ? "short" : "exhaustive",
					 err.msg);
			assert_int_equal(res.read_signed, dev[i].want);
			assert_same_tables(plan, res.found);
			/* the found map says what the device read */
			assert_int_equal(res.found->op[LM_A].type, dev[i].da);
			assert_int_equal(res.found->op[LM_B].type, dev[i].db);
			lanemap_free(res.found);
			lanemap_free(d);
			run_free(&r);
		}
	lanemap_free(plan);
}

/*
 * Renaming k the same way in A and B changes no register: a device with
 * k -> k ^ 16 in both is reported identical to sm80. Swapping C's e 0 and
 * e 1 (columns 2t and 2t+1) is observable: every one of the 128 C
 * entries moves, A and B do not.
 */
static void k_renaming_unobservable_c_swap_observable(void **state)
{
	struct lanemap *p = tu_builtin_valid("sm80-mma-m16n8k32-s8");
	struct lanemap *dev = tu_builtin_valid("sm80-mma-m16n8k32-s8");
	struct probe_result res;
	struct lanediff d;
	struct run r;

	(void)state;
	for (int s = 0; s < 32 * 16; s++)
		dev->op[LM_A].col[s] ^= 16;
	for (int s = 0; s < 32 * 8; s++)
		dev->op[LM_B].row[s] ^= 16;
	revalidate(dev);
	r = plan_and_answer(p, dev);
	assert_int_equal(probe_solve(p, &r.pl, p, r.a, r.b, r.c, &res, NULL), FS_OK);
	assert_same_tables(p, res.found);
	lanemap_free(res.found);
	run_free(&r);

	lanemap_free(dev);
	dev = tu_builtin_valid("sm80-mma-m16n8k32-s8");
	for (int s = 0; s < 32 * 4; s++)
		dev->op[LM_C].col[s] ^= 1;
	revalidate(dev);
	r = plan_and_answer(p, dev);
	assert_int_equal(probe_solve(p, &r.pl, p, r.a, r.b, r.c, &res, NULL), FS_OK);
	assert_same_tables(dev, res.found);
	assert_int_equal(lanediff_compare(p, res.found, &d, NULL), FS_OK);
	assert_int_equal(d.op[LM_A].differ, 0);
	assert_int_equal(d.op[LM_B].differ, 0);
	assert_int_equal(d.op[LM_C].differ, 128);
	lanemap_free(res.found);
	run_free(&r);
	lanemap_free(p);
	lanemap_free(dev);
}

/* Solve answers that have been tampered with; must fail with a message. */
static void expect_refused(const struct lanemap *p, const struct run *r,
			   const char *needle)
{
	struct probe_result res;
	struct fs_err err = { 0 };

	assert_int_equal(probe_solve(p, &r->pl, p, r->a, r->b, r->c, &res, &err), FS_EINPUT);
	assert_null(res.found);
	if (!strstr(err.msg, needle))
		fail_msg("'%s' not in '%s'", needle, err.msg);
}

static void answers_no_map_explains(void **state)
{
	struct lanemap *p = tu_builtin_valid("gfx936");
	struct run r = plan_and_answer(p, p);
	int32_t *good = malloc(r.nc * sizeof(int32_t));
	const int sc = 256;

	(void)state;
	memcpy(good, r.c, r.nc * sizeof(int32_t));

	r.c[18 * sc + 17 * 4] = 250;		/* not a digit */
	expect_refused(p, &r, "holds 250, not 0 and not one B value");
	memcpy(r.c, good, r.nc * sizeof(int32_t));

	r.c[18 * sc + 17 * 4] = 100;		/* B slot 99 + 100*0 is fine, */
	r.c[19 * sc + 17 * 4] = 100;		/* but 99 + 100*99 is not */
	expect_refused(p, &r, "names B slot 9999 of 512");
	memcpy(r.c, good, r.nc * sizeof(int32_t));

	memset(r.c, 0, r.nc * sizeof(int32_t));	/* a device that did nothing */
	expect_refused(p, &r, "no C slot is ever written");
	memcpy(r.c, good, r.nc * sizeof(int32_t));

	for (int w = 0; w < 1024; w++)		/* C lane 5 e 2 never answers */
		r.c[w * sc + 5 * 4 + 2] = 0;
	expect_refused(p, &r, "C lane 5 e 2 is never written");
	memcpy(r.c, good, r.nc * sizeof(int32_t));

	r.c[1026 * sc + 3] += 1;		/* random check wave off by one */
	expect_refused(p, &r, "check wave 1026 (random), C lane 0 e 3");
	memcpy(r.c, good, r.nc * sizeof(int32_t));

	/* C lane 18 e 0 (C[2][1]) also sums A slot 9's product: two rows merge */
	r.c[18 * sc + 18 * 4] = r.c[18 * sc + 17 * 4];
	r.c[19 * sc + 18 * 4] = r.c[19 * sc + 17 * 4];
	expect_refused(p, &r, "no lane map explains the dump");
	memcpy(r.c, good, r.nc * sizeof(int32_t));

	/* a device that drops the signs: -128 * 127 came back positive */
	for (int x = 0; x < sc; x++)
		r.c[1025 * sc + x] = 32 * 128 * 127;
	expect_refused(p, &r, "check wave 1025 (extreme)");

	free(good);
	run_free(&r);
	lanemap_free(p);
}

/* Random damage anywhere: a clean FS_EINPUT or (rarely) FS_OK, no crash. */
static void random_damage_never_crashes(void **state)
{
	struct lanemap *p = tu_builtin_valid("sm80-mma-m16n8k32-s8");
	struct run r = plan_and_answer(p, p);
	int32_t *good = malloc(r.nc * sizeof(int32_t));
	uint64_t seed = 42;
	int refused = 0;

	(void)state;
	memcpy(good, r.c, r.nc * sizeof(int32_t));
	for (int trial = 0; trial < 200; trial++) {
		struct probe_result res;
		struct fs_err err;
		int n = 1 + (int)(tu_rand(&seed) % 4);
		enum fs_rc rc;

		memcpy(r.c, good, r.nc * sizeof(int32_t));
		for (int i = 0; i < n; i++) {
			size_t at = tu_rand(&seed) % r.nc;
			uint64_t how = tu_rand(&seed) % 3;

			r.c[at] = how == 0 ? 0 : how == 1 ? r.c[at] + 1
				: (int32_t)(tu_rand(&seed) % 201) - 100;
		}
		rc = probe_solve(p, &r.pl, p, r.a, r.b, r.c, &res, &err);
		assert_true(rc == FS_OK || rc == FS_EINPUT);
		refused += rc == FS_EINPUT;
		lanemap_free(res.found);
	}
	assert_true(refused > 150);
	free(good);
	run_free(&r);
	lanemap_free(p);
}

/* ---- the short plan ---- */

#define ROTATED FRAGSIM_SRC "/tests/data/profiles/gfx936-c-rotated.yaml"

static struct lanemap *load_rotated(void)
{
	struct fs_err err;
	struct lanemap *lm = profile_load_file(ROTATED, &err);

	if (!lm)
		fail_msg("%s", err.msg);
	revalidate(lm);
	return lm;
}

/*
 * Probes: slot 0, one per bit of the A slot number, 6 mixes; waves:
 * 2 digits per pair of probes, 6 checks. A slots: 64 x 8 = 512 (9 bits)
 * for gfx936, gfx936-quad and both CDNA3, 32 x 16 = 512 for sm80 k32 and
 * RDNA3 wave32, 64 x 16 = 1024 (10 bits) for RDNA3 wave64 and CDNA4,
 * 32 x 8 = 256 (8 bits) for RDNA4 and sm80 k16:
 * 16 probes -> 8 pairs -> 16 + 6 = 22; 17 -> 9 pairs -> 24; 15 -> 8 -> 22.
 */
static void short_plan_wave_counts(void **state)
{
	static const struct { const char *name; int probes, waves; } t[] = {
		{ "gfx936", 16, 22 },
		{ "gfx936-quad", 16, 22 },
		{ "cdna3-mfma-i32-16x16x32-i8", 16, 22 },
		{ "sm80-mma-m16n8k32-s8", 16, 22 },
		{ "rdna3-wmma-i32-16x16x16-iu8-w32", 16, 22 },
		{ "rdna3-wmma-i32-16x16x16-iu8-w64", 17, 24 },
		{ "cdna3-mfma-i32-32x32x16-i8", 16, 22 },
		{ "cdna4-mfma-i32-16x16x64-i8", 17, 24 },
		{ "rdna4-wmma-i32-16x16x16-iu8-w32", 15, 22 },
		{ "sm80-mma-m16n8k16-s8", 15, 22 },
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(t); i++) {
		struct lanemap *lm = tu_builtin_valid(t[i].name);
		struct probe_layout pl;
		int bits = t[i].probes - 1 - PROBE_MIXES;

		assert_int_equal(probe_default_kind(lm, NULL, 0), PROBE_SHORT);
		assert_int_equal(probe_layout(lm, PROBE_SHORT, &pl, NULL), FS_OK);
		assert_int_equal(pl.probes, t[i].probes);
		assert_int_equal(pl.waves, t[i].waves);
		assert_int_equal(pl.basis, 1 + bits);
		assert_int_equal(pl.slot[0], 0);
		for (int b = 0; b < bits; b++)
			assert_int_equal(pl.slot[1 + b], 1 << b);
		for (int j = pl.basis; j < pl.probes; j++) {
			assert_true(pl.slot[j] < 1 << bits);
			assert_true(__builtin_popcount((unsigned)pl.slot[j]) >= 3);
			for (int q = pl.basis; q < j; q++)
				assert_int_not_equal(pl.slot[q], pl.slot[j]);
		}
		lanemap_free(lm);
	}
}

/*
 * gfx936, wave 0 lights A slot 0 (lane 0 e 0, A[0][0]) with 1 and A slot
 * 1 (lane 0 e 1, A[0][1]) with 101. C[0][1] is lane 16 e 0 (lane = m +
 * 16 * (n % 4), e = n / 4) and sums A[0][0] B[0][1] + A[0][1] B[1][1];
 * B[0][1] is lane 1 e 0 = B slot 8, B[1][1] lane 1 e 1 = B slot 9. Digit
 * 0: 9 + 101 * 10 = 1019; digit 1: 1 + 101 * 1 = 102. C[1][1] (lane 17
 * e 0): row 1 is not lit, 0.
 */
static void short_plan_hand_worked(void **state)
{
	struct lanemap *lm = tu_builtin_valid("gfx936");
	struct run r = plan_kind(lm, lm, PROBE_SHORT);
	const int sa = 512, sb = 512, sc = 256;

	(void)state;
	for (int x = 0; x < sa; x++)
		assert_int_equal(r.a[x], x == 0 ? 1 : x == 1 ? 101 : 0);
	assert_int_equal(r.b[8], 9);
	assert_int_equal(r.b[sb + 8], 1);
	assert_int_equal(r.c[16 * 4 + 0], 1019);
	assert_int_equal(r.c[sc + 16 * 4 + 0], 102);
	assert_int_equal(r.c[17 * 4 + 0], 0);
	/* wave 2 lights slots 2 and 4 (lane 0 e 2 and e 4) */
	assert_int_equal(r.a[2 * sa + 2], 1);
	assert_int_equal(r.a[2 * sa + 4], 101);
	/* the checks: ones gives K = 32, extreme 32 * (-128 * 127) */
	for (int x = 0; x < sc; x++) {
		assert_int_equal(r.c[16 * sc + x], 32);
		assert_int_equal(r.c[17 * sc + x], -520192);
	}
	run_free(&r);
	lanemap_free(lm);
}

/* The short plan finds what the exhaustive plan finds, for every builtin. */
static void short_plan_recovers_every_builtin(void **state)
{
	int checked = 0;

	(void)state;
	for (int i = 0; i < profile_builtin_count(); i++) {
		struct lanemap *lm = tu_builtin_valid(profile_builtin_name(i));
		struct probe_result rs, re;
		struct fs_err err;
		struct run s, e;

		if (!lm)
			continue;
		s = plan_kind(lm, lm, PROBE_SHORT);
		e = plan_and_answer(lm, lm);
		if (probe_solve(lm, &s.pl, lm, s.a, s.b, s.c, &rs, &err) != FS_OK)
			fail_msg("%s: %s", lm->name, err.msg);
		assert_int_equal(probe_solve(lm, &e.pl, lm, e.a, e.b, e.c, &re, NULL), FS_OK);
		assert_same_tables(lm, rs.found);
		assert_int_equal(rs.terms, lm->m * lm->n * lm->k);
		assert_int_equal(1 << rs.span_dim, rs.terms);
		assert_int_equal(rs.unread[LM_A], re.unread[LM_A]);
		assert_int_equal(rs.unread[LM_B], re.unread[LM_B]);
		assert_memory_equal(rs.read, re.read, sizeof(rs.read));
		for (int r = 0; r < 3; r++)
			assert_int_equal(rs.labels_anchored[r], re.labels_anchored[r]);
		lanemap_free(rs.found);
		lanemap_free(re.found);
		run_free(&s);
		run_free(&e);
		lanemap_free(lm);
		checked++;
	}
	assert_int_equal(checked, profile_builtin_count() - 1);
}

/* A plan for one profile, answered by a device with another: the same pairs
 * as another_device_is_named, through the short plan. */
static void short_plan_names_another_device(void **state)
{
	static const char *const pairs[][2] = {
		{ "gfx936", "gfx936-quad" },
		{ "gfx936", "cdna3-mfma-i32-16x16x32-i8" },
		{ "gfx936-quad", "gfx936" },
		{ "cdna3-mfma-i32-16x16x32-i8", "gfx936-quad" },
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(pairs); i++) {
		struct lanemap *p = tu_builtin_valid(pairs[i][0]);
		struct lanemap *dev = tu_builtin_valid(pairs[i][1]);
		struct run r = plan_kind(p, dev, PROBE_SHORT);
		struct probe_result res;
		struct lanediff d;
		struct fs_err err;

		if (probe_solve(p, &r.pl, p, r.a, r.b, r.c, &res, &err) != FS_OK)
			fail_msg("%s on %s: %s", pairs[i][0], pairs[i][1], err.msg);
		assert_same_tables(dev, res.found);
		assert_int_equal(lanediff_compare(p, res.found, &d, NULL), FS_OK);
		assert_int_equal(d.op[LM_A].differ, 0);
		assert_int_equal(d.op[LM_C].differ, i == 0 ? 240 : d.op[LM_C].differ);
		assert_true(d.op[LM_C].differ > 0);
		lanemap_free(res.found);
		run_free(&r);
		lanemap_free(p);
		lanemap_free(dev);
	}
}

/*
 * gfx936-c-rotated holds C[(lane + e) % 16][lane / 16 + 4e]: not linear
 * (lane 1 e 1 holds row 2, the XOR of lane 1's and e 1's rows is 0). Its
 * own plan is exhaustive; a short gfx936 plan on it is refused, pointing
 * at --exhaustive; the exhaustive gfx936 plan finds it exactly.
 */
static void short_plan_refuses_a_nonlinear_device(void **state)
{
	struct lanemap *p = tu_builtin_valid("gfx936"), *dev = load_rotated();
	struct probe_layout pl;
	struct probe_result res;
	struct fs_err err = { 0 };
	char why[128];
	struct run r;

	(void)state;
	assert_int_equal(probe_default_kind(dev, why, sizeof(why)), PROBE_EXHAUSTIVE);
	assert_string_equal(why, "C is not linear over GF(2)");
	assert_int_equal(probe_layout(dev, PROBE_SHORT, &pl, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "C is not linear over GF(2)"));

	r = plan_kind(p, dev, PROBE_SHORT);
	assert_int_equal(probe_solve(p, &r.pl, p, r.a, r.b, r.c, &res, &err), FS_EINPUT);
	assert_null(res.found);
	assert_non_null(strstr(err.msg, "no linear lane map explains the dump"));
	assert_non_null(strstr(err.msg, "plan again with --exhaustive"));
	run_free(&r);

	r = plan_and_answer(p, dev);
	if (probe_solve(p, &r.pl, p, r.a, r.b, r.c, &res, &err) != FS_OK)
		fail_msg("exhaustive: %s", err.msg);
	assert_same_tables(dev, res.found);
	lanemap_free(res.found);
	run_free(&r);
	lanemap_free(p);
	lanemap_free(dev);
}

/*
 * Any one C value of a short plan's dump changed (+1, -1, or 0 where it
 * was not 0), in every wave and every C slot: refused, never a map.
 */
static void short_plan_refuses_any_one_edit(void **state)
{
	static const char *const names[] = { "gfx936", "sm80-mma-m16n8k32-s8" };

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(names); i++) {
		struct lanemap *p = tu_builtin_valid(names[i]);
		struct run r = plan_kind(p, p, PROBE_SHORT);
		int tried = 0;

		for (size_t at = 0; at < r.nc; at++) {
			int32_t good = r.c[at];
			const int32_t edits[3] = { good + 1, good - 1, 0 };

			for (int k = 0; k < 3; k++) {
				struct probe_result res;
				struct fs_err err;

				if (edits[k] == good)
					continue;
				r.c[at] = edits[k];
				if (probe_solve(p, &r.pl, p, r.a, r.b, r.c, &res, &err) != FS_EINPUT)
					fail_msg("%s: C value %zu = %d (was %d) not refused", names[i],
						 at, edits[k], good);
				assert_null(res.found);
				assert_non_null(strstr(err.msg, "--exhaustive"));
				tried++;
			}
			r.c[at] = good;
		}
		assert_true(tried >= 2 * (int)r.nc);
		run_free(&r);
		lanemap_free(p);
	}
}

/* What each check of the short solve says, on answers made to fail it. */
static void short_plan_messages(void **state)
{
	struct lanemap *p = tu_builtin_valid("sm80-mma-m16n8k32-s8");
	struct run r = plan_kind(p, p, PROBE_SHORT);
	int32_t *good = malloc(r.nc * sizeof(int32_t));
	const int sc = 128;

	(void)state;
	memcpy(good, r.c, r.nc * sizeof(int32_t));
	r.c[5] = 20000;		/* above 100 + 101 * 100 */
	expect_refused(p, &r, "wave 0 (A lane 0 e 0 = 1, A lane 0 e 1 = 101, B digit 0), "
		       "C lane 1 e 1 holds 20000, not b1 + 101 * b2");
	memcpy(r.c, good, r.nc * sizeof(int32_t));

	/* probe 0's product in C slot 0 without its digit-1 half */
	assert_true(good[0] % 101 != 0 && good[sc] % 101 != 0);
	r.c[sc] -= good[sc] % 101;
	expect_refused(p, &r, "a product has both");
	memcpy(r.c, good, r.nc * sizeof(int32_t));

	/* digit 1 of 100: B slot 99 * 100 + ..., of 256 */
	r.c[sc] = r.c[sc] - good[sc] % 101 + 100;
	expect_refused(p, &r, "of 256 for A lane 0 e 0");
	memcpy(r.c, good, r.nc * sizeof(int32_t));

	/* slot 0 reads nothing: the plan has no origin */
	for (int x = 0; x < sc; x++) {
		r.c[x] -= r.c[x] % 101;
		r.c[sc + x] -= r.c[sc + x] % 101;
	}
	expect_refused(p, &r, "A lane 0 e 0 feeds no C slot");
	memcpy(r.c, good, r.nc * sizeof(int32_t));

	r.c[(size_t)(r.waves - 1) * sc + 7] += 1;	/* the last random check */
	expect_refused(p, &r, "check wave 21 (random4), C lane 1 e 3 holds");
	free(good);
	run_free(&r);
	lanemap_free(p);
}

static void geometry_must_match(void **state)
{
	struct lanemap *p = tu_builtin_valid("rdna3-wmma-i32-16x16x16-iu8-w32");
	struct lanemap *q = tu_builtin_valid("sm80-mma-m16n8k32-s8");
	struct fs_err err;

	(void)state;
	/* both 32 lanes of 16 A elements; B: 16 vs 8 elements per lane */
	assert_int_equal(probe_same_geometry(p, q, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "16 B elements per lane"));
	lanemap_free(p);
	lanemap_free(q);
}

/* ---- through the binary ---- */

static char dir[128];

static void cli_path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

static int setup_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/fragsim-probe-test-%d", (int)getpid());
	return mkdir(dir, 0755) == 0 ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void cli_plan_simulate_solve(void **state)
{
	struct run_result r;

	(void)state;
	r = tu_run("probe plan --isa sm80-mma-m16n8k32-s8 --out %s/p --exhaustive", dir);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "1027 waves"));
	assert_non_null(strstr(r.out, "probe_c.npy int32 [1027, 32, 4]"));
	tu_free(&r);
	/* a second plan replaces the first (it holds manifest.json) */
	r = tu_run("probe plan --isa sm80-mma-m16n8k32-s8 --out %s/p --exhaustive", dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	r = tu_run("probe simulate --plan %s/p --isa sm80-mma-m16n8k32-s8 --out %s/d", dir, dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	r = tu_run("probe solve --plan %s/p --dump %s/d", dir, dir);
	if (r.status != 0)
		fail_msg("solve: %d\n%s%s", r.status, r.out, r.err);
	assert_non_null(strstr(r.out, "found     16x8x32"));
	assert_non_null(strstr(r.out, "device matches sm80-mma-m16n8k32-s8\n"));
	tu_free(&r);
}

static void cli_names_the_difference(void **state)
{
	struct run_result r;

	(void)state;
	r = tu_run("probe plan --isa gfx936 --out %s/g", dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	r = tu_run("probe simulate --plan %s/g --isa gfx936-quad --out %s/gq", dir, dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	r = tu_run("probe solve --plan %s/g --dump %s/gq", dir, dir);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "A: 0 of 512 entries differ: identical\n"));
	assert_non_null(strstr(r.out, "C: 240 of 256 entries differ"));
	/* gfx936-quad: lane 1 = row 0, col 1 + 4e; gfx936: lane 1 = row 1, col 4e */
	assert_non_null(strstr(r.out, "C lane 1 e 0: device C[0][1], gfx936 C[1][0]\n"));
	assert_non_null(strstr(r.out, "device differs from gfx936 in 240 entries\n"));
	tu_free(&r);
	r = tu_run("probe solve --plan %s/g --dump %s/gq --isa gfx936-quad", dir, dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
}

/* The CLI's verdict for a u8 plan on a device that reads signed bytes
 * (tools/device/hip's unsigned RDNA3 profile, simulated by the signed
 * one): exit 1, the reading named, the lane map the same. */
static void cli_names_unsigned_read_as_signed(void **state)
{
	const char *u8 = FRAGSIM_SRC "/tools/device/hip/rdna3-wmma-i32-16x16x16-u8-w32.yaml";
	struct run_result r;

	(void)state;
	r = tu_run("probe plan --isa %s --out %s/u", u8, dir);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "probe_a.npy uint8 [22, 32, 16]"));
	tu_free(&r);
	r = tu_run("probe simulate --plan %s/u --isa rdna3-wmma-i32-16x16x16-iu8-w32 --out %s/us",
		   dir, dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	r = tu_run("probe solve --plan %s/u --dump %s/us", dir, dir);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "signed    A and B: the plan's bytes are unsigned (u8)"));
	assert_non_null(strstr(r.out, "C: 0 of 256 entries differ: identical\n"));
	assert_non_null(strstr(r.out, "device differs from rdna3-wmma-i32-16x16x16-u8-w32: device "
				      "reads unsigned operands as signed (A and B); the lane map is "
				      "the same\n"));
	tu_free(&r);
	r = tu_run("probe solve --plan %s/u --dump %s/us --yaml", dir, dir);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "# differs from the profile named above: device reads "
				      "unsigned operands as signed (A and B)\n"));
	assert_non_null(strstr(r.out, "type: i8"));
	tu_free(&r);
	r = tu_run("probe simulate --plan %s/u --isa %s --out %s/uu", dir, u8, dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	r = tu_run("probe solve --plan %s/u --dump %s/uu", dir, dir);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "device matches rdna3-wmma-i32-16x16x16-u8-w32\n"));
	tu_free(&r);
	/* Against the signed profile, by --isa: the device that reads the
	 * plan's bytes unsigned differs (it "matched": signedness is no
	 * entry of the map), the one that reads them signed matches. */
	r = tu_run("probe solve --plan %s/u --dump %s/uu --isa rdna3-wmma-i32-16x16x16-iu8-w32",
		   dir, dir);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "device differs from rdna3-wmma-i32-16x16x16-iu8-w32: device "
				      "reads signed operands as unsigned (A and B); the lane map is "
				      "the same\n"));
	tu_free(&r);
	r = tu_run("probe solve --plan %s/u --dump %s/us --isa rdna3-wmma-i32-16x16x16-iu8-w32",
		   dir, dir);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "device matches rdna3-wmma-i32-16x16x16-iu8-w32\n"));
	tu_free(&r);
}

/* --yaml prints a profile the loader takes back: the device's map. */
static void cli_yaml_round_trip(void **state)
{
	static const char *const t[][2] = {
		{ "gfx936", "gfx936-quad" },
		{ "rdna3-wmma-i32-16x16x16-iu8-w64", "rdna3-wmma-i32-16x16x16-iu8-w64" },
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(t); i++) {
		struct lanemap *want = tu_builtin_valid(t[i][1]), *got;
		struct run_result r;
		struct fs_err err;

		r = tu_run("probe plan --isa %s --out %s/y", t[i][0], dir);
		assert_int_equal(r.status, 0);
		tu_free(&r);
		r = tu_run("probe simulate --plan %s/y --isa %s --out %s/yd", dir, t[i][1], dir);
		assert_int_equal(r.status, 0);
		tu_free(&r);
		r = tu_run("probe solve --plan %s/y --dump %s/yd --isa %s --yaml", dir, dir,
			   t[i][1]);
		assert_int_equal(r.status, 0);
		got = profile_load_text(r.out, strlen(r.out), "stdout", NULL, &err);
		if (!got)
			fail_msg("%s: %s", t[i][1], err.msg);
		revalidate(got);
		assert_same_tables(want, got);
		assert_int_equal(got->wave, want->wave);
		assert_int_equal(got->op[LM_A].type, want->op[LM_A].type);
		lanemap_free(got);
		lanemap_free(want);
		tu_free(&r);
	}
}

static void write_c(const char *sub, enum npy_dtype dt, int ndim, const size_t *shape)
{
	char path[256];
	size_t n = 1, bytes;
	void *zero;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/probe_c.npy", dir, sub);
	for (int i = 0; i < ndim; i++)
		n *= shape[i];
	bytes = n * npy_dtype_size(dt);
	zero = calloc(1, bytes ? bytes : 1);
	assert_int_equal(npy_write(path, dt, ndim, shape, zero, NULL, NULL), FS_OK);
	free(zero);
}

static void expect_exit2(struct run_result r, const char *needle)
{
	if (r.status != 2 || !strstr(r.err, needle))
		fail_msg("exit %d, stderr '%s', wanted 2 and '%s'", r.status, r.err, needle);
	assert_non_null(strstr(r.err, "fragsim: error: "));
	tu_free(&r);
}

static void cli_malformed_dumps(void **state)
{
	size_t good[3] = { 1027, 32, 4 }, bad[3] = { 1027, 32, 8 }, two[2] = { 1027, 128 };
	char path[256], cmd[512];
	struct run_result r;

	(void)state;
	r = tu_run("probe plan --isa sm80-mma-m16n8k32-s8 --out %s/m --exhaustive", dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);

	write_c("i64", NPY_I64, 3, good);
	expect_exit2(tu_run("probe solve --plan %s/m --dump %s/i64", dir, dir),
		     "expected int32 [1027, 32, 4], found int64 [1027, 32, 4]");
	write_c("shape", NPY_I32, 3, bad);
	expect_exit2(tu_run("probe solve --plan %s/m --dump %s/shape", dir, dir),
		     "found int32 [1027, 32, 8]");
	write_c("flat", NPY_I32, 2, two);
	expect_exit2(tu_run("probe solve --plan %s/m --dump %s/flat", dir, dir),
		     "found int32 [1027, 128]");
	write_c("zero", NPY_I32, 3, good);
	expect_exit2(tu_run("probe solve --plan %s/m --dump %s/zero", dir, dir),
		     "no C slot is ever written");
	/* a real answer, cut short */
	r = tu_run("probe simulate --plan %s/m --isa sm80-mma-m16n8k32-s8 --out %s/cut", dir, dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	cli_path(path, sizeof(path), "cut/probe_c.npy");
	assert_int_equal(truncate(path, 4000), 0);
	expect_exit2(tu_run("probe solve --plan %s/m --dump %s/cut", dir, dir), "probe_c.npy");
	expect_exit2(tu_run("probe solve --plan %s/m --dump %s/none", dir, dir), "probe_c.npy");
	expect_exit2(tu_run("probe solve --plan %s/nothing --dump %s/zero", dir, dir),
		     "profile.yaml");
	/* a plan whose inputs were edited no longer matches its dump */
	snprintf(cmd, sizeof(cmd),
		 "cp -r %s/m %s/m2 && printf '\\007' | dd of=%s/m2/probe_a.npy bs=1 seek=200 conv=notrunc 2>/dev/null",
		 dir, dir, dir);
	assert_int_equal(system(cmd), 0);
	expect_exit2(tu_run("probe solve --plan %s/m2 --dump %s/zero", dir, dir),
		     "not the plan profile.yaml makes");
	/* a profile of another geometry cannot name this plan's answers */
	expect_exit2(tu_run("probe solve --plan %s/m --dump %s/zero --isa gfx936", dir, dir),
		     "has 32 lanes, gfx936 has 64");
	expect_exit2(tu_run("probe simulate --plan %s/m --isa rdna3-wmma-i32-16x16x16-iu8-w32 --out %s/x",
			    dir, dir), "8 B elements per lane");
}

/* The short plan through the binary: the default for a linear profile. */
static void cli_short_plan(void **state)
{
	struct run_result r;
	char cmd[1024];

	(void)state;
	r = tu_run("probe plan --isa gfx936 --out %s/s", dir);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "plan      gfx936, 22 waves, short: 16 one-hot A probes "
				      "(slot 0, 9 power-of-two slots, 6 mixes)"));
	assert_non_null(strstr(r.out, "probe_c.npy int32 [22, 64, 4]"));
	tu_free(&r);
	assert_int_equal(tu_sh("grep -q '\"plan\": \"short\"' %s/s/manifest.json", dir), 0);
	r = tu_run("probe simulate --plan %s/s --isa gfx936-quad --out %s/sq", dir, dir);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "answering a short plan for gfx936: 22 waves"));
	tu_free(&r);
	r = tu_run("probe solve --plan %s/s --dump %s/sq", dir, dir);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "probe     short plan for gfx936 (22 waves)"));
	assert_non_null(strstr(r.out, "linear    yes: the products of A slot 0 and the 9 "
				      "power-of-two A slots span 8192 (2^13)"));
	assert_non_null(strstr(r.out, "C: 240 of 256 entries differ"));
	tu_free(&r);

	/* a device that is not linear: refused, and told what to run */
	r = tu_run("probe simulate --plan %s/s --isa %s --out %s/sr", dir, ROTATED, dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	expect_exit2(tu_run("probe solve --plan %s/s --dump %s/sr", dir, dir),
		     "no linear lane map explains the dump");
	r = tu_run("probe solve --plan %s/s --dump %s/sr", dir, dir);
	assert_non_null(strstr(r.err, "plan again with --exhaustive"));
	tu_free(&r);
	/* ... whose own plan is exhaustive, and says why */
	r = tu_run("probe plan --isa %s --out %s/r", ROTATED, dir);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "1027 waves"));
	assert_non_null(strstr(r.out, "why       exhaustive: C is not linear over GF(2)"));
	tu_free(&r);

	/* one byte of a real answer changed (C lane 11 e 0 of wave 0) */
	snprintf(cmd, sizeof(cmd),
		 "cp -r %s/sq %s/st && printf '\\007' | dd of=%s/st/probe_c.npy bs=1 "
		 "seek=%d conv=notrunc 2>/dev/null", dir, dir, dir, 128 + 4 * 44);
	assert_int_equal(system(cmd), 0);
	expect_exit2(tu_run("probe solve --plan %s/s --dump %s/st", dir, dir),
		     "C lane 11 e 0");
	expect_exit2(tu_run("probe solve --plan %s/s --dump %s/sq --exhaustive", dir, dir),
		     "unknown option '--exhaustive'");	/* solve reads the kind from the plan */
}

/* A plan whose manifest says the wrong kind is refused with the key (the
 * plan and dump are cli_short_plan's). */
static void cli_short_manifest(void **state)
{
	(void)state;
	assert_int_equal(tu_sh("cp -r %s/s %s/k1 && sed -i 's/\"plan\": \"short\"/\"plan\": "
			       "\"bogus\"/' %s/k1/manifest.json", dir, dir, dir), 0);
	expect_exit2(tu_run("probe solve --plan %s/k1 --dump %s/sq", dir, dir),
		     "manifest.json:10:11: plan: must be one of exhaustive, short, not 'bogus'");
	/* without the plan key it reads as exhaustive, which has 1027 waves */
	assert_int_equal(tu_sh("cp -r %s/s %s/k2 && sed -i '/\"plan\": /d' %s/k2/manifest.json",
			       dir, dir, dir), 0);
	expect_exit2(tu_run("probe solve --plan %s/k2 --dump %s/sq", dir, dir),
		     "waves: must be between 1027 and 1027, not 22");
	/* a short plan's manifest with a profile that is not linear */
	assert_int_equal(tu_sh("cp -r %s/s %s/k3 && cp %s %s/k3/profile.yaml", dir, dir,
			       ROTATED, dir), 0);
	expect_exit2(tu_run("probe solve --plan %s/k3 --dump %s/sq", dir, dir),
		     "plan: 'short', but profile.yaml is not linear over GF(2)");
}

/*
 * The H200's answers to the exhaustive sm80 plan (tests/data/device/):
 * read against the short plan that `probe plan` now makes by default,
 * the wave count says which plan they answer; against --exhaustive's,
 * the device matches its profile.
 */
static void cli_device_answers_need_their_plan(void **state)
{
	const char *dump = "tests/data/device/probe-sm80-mma-m16n8k32-s8";
	struct run_result r;

	(void)state;
	r = tu_run("probe plan --isa sm80-mma-m16n8k32-s8 --out %s/h", dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	expect_exit2(tu_run("probe solve --plan %s/h --dump %s", dir, dump),
		     "expected int32 [22, 32, 4], found int32 [1027, 32, 4]: an exhaustive "
		     "plan's wave count, and this plan is short (make it with --exhaustive)");
	r = tu_run("probe plan --isa sm80-mma-m16n8k32-s8 --out %s/h --exhaustive", dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	r = tu_run("probe solve --plan %s/h --dump %s", dir, dump);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "device matches sm80-mma-m16n8k32-s8\n"));
	tu_free(&r);
	/* and the other way round: a short plan's answers, an exhaustive plan */
	r = tu_run("probe plan --isa sm80-mma-m16n8k32-s8 --out %s/h2", dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	r = tu_run("probe simulate --plan %s/h2 --isa sm80-mma-m16n8k32-s8 --out %s/h2d", dir, dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	expect_exit2(tu_run("probe solve --plan %s/h --dump %s/h2d", dir, dir),
		     "found int32 [22, 32, 4]: a short plan's wave count, and this plan is "
		     "exhaustive (make it without --exhaustive)");
}

/*
 * Issue 21 point 2, for probe outputs: a plan (its profile.yaml is not
 * in the manifest's files, but fragsim's own) and a simulated dump are
 * replaced by the next plan or simulate over them, of either kind; a
 * file a user added to either is named and refused, exit 2.
 */
static void cli_rerun_over_own_outputs(void **state)
{
	struct run_result r;

	(void)state;
	for (int i = 0; i < 3; i++) {
		r = tu_run("probe plan --isa gfx936 --out %s/rp%s", dir,
			   i == 1 ? " --exhaustive" : "");
		if (r.status != 0)
			fail_msg("plan %d: exit %d: %s", i, r.status, r.err);
		tu_free(&r);
		r = tu_run("probe simulate --plan %s/rp --isa gfx936 --out %s/rd", dir, dir);
		if (r.status != 0)
			fail_msg("simulate %d: exit %d: %s", i, r.status, r.err);
		tu_free(&r);
	}
	assert_int_equal(tu_sh("echo notes > %s/rp/README && echo x > %s/rd/notes.txt",
			       dir, dir), 0);
	expect_exit2(tu_run("probe plan --isa gfx936 --out %s/rp", dir),
		     "rp: a fragsim output, but it holds 'README', which its manifest.json "
		     "does not list");
	expect_exit2(tu_run("probe simulate --plan %s/rp --isa gfx936 --out %s/rd", dir, dir),
		     "rd: a fragsim output, but it holds 'notes.txt'");
	assert_int_equal(tu_sh("test -f %s/rp/README && test -f %s/rd/notes.txt", dir, dir), 0);
}

/*
 * Issue 21 point 11: `probe simulate --plan P --out P` replaced the plan
 * it reads with its dump. Refused now, exit 2, before any work, the plan
 * as it was; so are the same through another name (P/, P/../P). An
 * output inside the plan is not the plan: P/d is written.
 */
static void cli_out_is_not_the_plan(void **state)
{
	struct run_result r;

	(void)state;
	r = tu_run("probe plan --isa gfx936 --out %s/op", dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	expect_exit2(tu_run("probe simulate --plan %s/op --isa gfx936 --out %s/op", dir, dir),
		     "op: --out is also --plan, which this command reads; give --out a path "
		     "of its own");
	expect_exit2(tu_run("probe simulate --plan %s/op --isa gfx936 --out %s/op/", dir, dir),
		     "--out is also --plan");
	expect_exit2(tu_run("probe simulate --plan %s/op/ --isa gfx936 --out %s/op/../op",
			    dir, dir), "--out is also --plan");
	/* the plan is still a plan: it loads, and answers */
	r = tu_run("probe simulate --plan %s/op --isa gfx936 --out %s/op-d", dir, dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	assert_int_equal(tu_sh("grep -q '\"fragsim_probe\": 1' %s/op/manifest.json", dir), 0);
	/* a profile file given as --isa is an input too */
	assert_int_equal(tu_sh("cp %s/op/profile.yaml %s/op-isa.yaml", dir, dir), 0);
	expect_exit2(tu_run("probe plan --isa %s/op-isa.yaml --out %s/op-isa.yaml", dir, dir),
		     "--out is also --isa");
}

/*
 * The plan's manifest fields were taken unchecked: a tampered wave,
 * digit_base, probe_slots, tool or sha256 still solved. Each is now
 * checked against the plan profile.yaml makes (and the sha256 against
 * the file's bytes), and refused with its name and place. The places
 * are counted by hand in the manifest `probe plan --isa gfx936` writes
 * (pretty-printed, two-space indent: `  "wave": 64,` puts 64 at column
 * 11 of line 7).
 */
static void cli_plan_manifest_is_verified(void **state)
{
	static const char *const edits[][2] = {
		{ "s/\"wave\": 64/\"wave\": 32/",
		  "manifest.json:7:11: wave: 32, but the plan profile.yaml makes has 64" },
		{ "s/\"digit_base\": 100/\"digit_base\": 10/",
		  "manifest.json:9:17: digit_base: 10, but the plan profile.yaml makes has 100" },
		{ "s/452, 52\\]/452, 53]/",
		  "probe_slots[15]: 53, but the plan profile.yaml makes has 52" },
		{ "s/\"pair_values\": \\[1, 101\\]/\"pair_values\": [1, 100]/",
		  "pair_values[1]: 100, but the plan profile.yaml makes has 101" },
		{ "s/\"tool\": \"fragsim\"/\"tool\": \"other\"/",
		  "manifest.json:2:11: tool: 'other', but the plan profile.yaml makes has 'fragsim'" },
		{ "0,/\"sha256\": \"./s//\"sha256\": \"X/",
		  "files[0].sha256: 'X" },
		{ "s/\"instruction\": \"v_mmac/\"instruction\": \"v_mmacx/",
		  "instruction: 'v_mmacx_i32_16x16x32_i8', but the plan profile.yaml makes" },
		{ "s/\"random4\"\\]/\"random5\"]/",
		  "check_waves[5]: 'random5', but the plan profile.yaml makes has 'random4'" },
		{ "s/\"shape\": \\[22, 64, 4\\]/\"shape\": [22, 64, 8]/",
		  "files[2].shape[2]: 8, but the plan profile.yaml makes has 4" },
		{ "s/\"waves\": 22,/\"waves\": 22, \"extra\": 1,/",
		  "manifest.json:8:16: unknown key 'extra'" },
	};
	struct run_result r;

	(void)state;
	r = tu_run("probe plan --isa gfx936 --out %s/vp", dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	r = tu_run("probe simulate --plan %s/vp --isa gfx936 --out %s/vd", dir, dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		assert_int_equal(tu_sh("rm -rf %s/vx && cp -r %s/vp %s/vx && sed -i '%s' "
				       "%s/vx/manifest.json && ! cmp -s %s/vp/manifest.json "
				       "%s/vx/manifest.json", dir, dir, dir, edits[i][0], dir,
				       dir, dir), 0);
		expect_exit2(tu_run("probe solve --plan %s/vx --dump %s/vd", dir, dir),
			     edits[i][1]);
	}
	/* the message names what the bytes do hash to: sha256sum's value */
	assert_int_equal(tu_sh("rm -rf %s/vx && cp -r %s/vp %s/vx && sed -i '0,/\"sha256\": \"./s//"
			       "\"sha256\": \"X/' %s/vx/manifest.json", dir, dir, dir, dir), 0);
	r = tu_run("probe solve --plan %s/vx --dump %s/vd", dir, dir);
	assert_int_equal(r.status, 2);
	{
		char *sum, cmd[512], want[128];
		FILE *f;

		snprintf(cmd, sizeof(cmd), "sha256sum %s/vp/probe_a.npy", dir);
		f = popen(cmd, "r");
		assert_non_null(f);
		sum = fgets(want, sizeof(want), f);
		pclose(f);
		assert_non_null(sum);
		want[64] = '\0';
		assert_non_null(strstr(r.err, "but probe_a.npy's bytes hash to '"));
		assert_non_null(strstr(r.err, want));
	}
	tu_free(&r);
	r = tu_run("probe solve --plan %s/vp --dump %s/vd", dir, dir);
	assert_int_equal(r.status, 0);	/* the untouched plan solves */
	tu_free(&r);
}

static void cli_usage(void **state)
{
	struct run_result r;

	(void)state;
	r = tu_run("probe --help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage: fragsim probe plan"));
	tu_free(&r);
	expect_exit2(tu_run("probe"), "missing subcommand");
	expect_exit2(tu_run("probe plan --isa gfx936"), "plan takes --isa and --out");
	expect_exit2(tu_run("probe solve --plan x"), "solve takes --plan and --dump");
	expect_exit2(tu_run("probe guess"), "unknown subcommand 'guess'");
	expect_exit2(tu_run("probe plan --isa gfx936-article --out %s/bad", dir),
		     "profile is not valid");
	expect_exit2(tu_run("probe plan --isa nosuch --out %s/bad", dir), "unknown profile");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_valid_builtin_recovers_itself),
		cmocka_unit_test(sm80_plan_size),
		cmocka_unit_test(gfx936_hand_worked),
		cmocka_unit_test(replica_copies_reported),
		cmocka_unit_test(device_reading_upper_copy),
		cmocka_unit_test(another_device_is_named),
		cmocka_unit_test(unsigned_read_as_signed_is_named),
		cmocka_unit_test(k_renaming_unobservable_c_swap_observable),
		cmocka_unit_test(answers_no_map_explains),
		cmocka_unit_test(random_damage_never_crashes),
		cmocka_unit_test(geometry_must_match),
		cmocka_unit_test(short_plan_wave_counts),
		cmocka_unit_test(short_plan_hand_worked),
		cmocka_unit_test(short_plan_recovers_every_builtin),
		cmocka_unit_test(short_plan_names_another_device),
		cmocka_unit_test(short_plan_refuses_a_nonlinear_device),
		cmocka_unit_test(short_plan_refuses_any_one_edit),
		cmocka_unit_test(short_plan_messages),
		cmocka_unit_test(cli_plan_simulate_solve),
		cmocka_unit_test(cli_names_the_difference),
		cmocka_unit_test(cli_names_unsigned_read_as_signed),
		cmocka_unit_test(cli_yaml_round_trip),
		cmocka_unit_test(cli_malformed_dumps),
		cmocka_unit_test(cli_short_plan),
		cmocka_unit_test(cli_short_manifest),
		cmocka_unit_test(cli_device_answers_need_their_plan),
		cmocka_unit_test(cli_rerun_over_own_outputs),
		cmocka_unit_test(cli_out_is_not_the_plan),
		cmocka_unit_test(cli_plan_manifest_is_verified),
		cmocka_unit_test(cli_usage),
	};

	return cmocka_run_group_tests_name("probe", tests, setup_dir, remove_dir);
}
