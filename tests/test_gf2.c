/*
 * test_gf2.c - lane maps as linear maps over GF(2) (sim/lanemap/gf2.c) through
 * `fragsim lanemap --format basis|basis-json`, and the spans the probe
 * solves with, by hand.
 *
 * Expected bases are worked out by hand from each instruction's published
 * formula (quoted per row), not from fragsim's tables: write the formula
 * in bits and read off which lane bit (l_i) or element bit (e_j) lands in
 * each row and column bit. E.g. PTX mma.m16n8k32 C: groupID = lane >> 2
 * is (l2, l3, l4), threadID_in_group = lane % 4 is (l0, l1); row =
 * groupID + 8 * (e / 2) gives row = (l2, l3, l4, e1), and col = 2 * tig +
 * e % 2 gives col = (e0, l0, l1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../sim/lanemap/gf2.h"
#include "testutil.h"

static const struct {
	const char *isa, *matrix;
	const char *formula;	/* the published one, for the reader */
	const char *line;	/* what basis must print */
	const char *broadcast;	/* NULL: no broadcast line */
} bases[] = {
	/* gfx936 (Hygon CK port), A and B as CDNA3's (AMD Matrix Instruction
	 * Calculator, v_mfma_i32_16x16x32_i8) */
	{ "gfx936", "A", "row = lane % 16, col = 8 * (lane / 16) + e",
	  "row = (l0, l1, l2, l3)  col = (e0, e1, e2, l4, l5)", NULL },
	{ "gfx936", "B", "row = 8 * (lane / 16) + e, col = lane % 16",
	  "row = (e0, e1, e2, l4, l5)  col = (l0, l1, l2, l3)", NULL },
	{ "gfx936", "C", "row = lane % 16, col = lane / 16 + 4 * e",
	  "row = (l0, l1, l2, l3)  col = (l4, l5, e0, e1)", NULL },
	{ "gfx936-quad", "C", "row = lane / 4, col = lane % 4 + 4 * e",
	  "row = (l2, l3, l4, l5)  col = (l0, l1, e0, e1)", NULL },
	{ "cdna3-mfma-i32-16x16x32-i8", "A", "row = lane % 16, col = 8 * (lane / 16) + e",
	  "row = (l0, l1, l2, l3)  col = (e0, e1, e2, l4, l5)", NULL },
	{ "cdna3-mfma-i32-16x16x32-i8", "B", "row = 8 * (lane / 16) + e, col = lane % 16",
	  "row = (e0, e1, e2, l4, l5)  col = (l0, l1, l2, l3)", NULL },
	{ "cdna3-mfma-i32-16x16x32-i8", "C", "row = 4 * (lane / 16) + e, col = lane % 16",
	  "row = (e0, e1, l4, l5)  col = (l0, l1, l2, l3)", NULL },
	/* RDNA3 ISA guide, WMMA: A and B replicated in the upper lanes */
	{ "rdna3-wmma-i32-16x16x16-iu8-w32", "A", "row = lane % 16, col = e",
	  "row = (l0, l1, l2, l3)  col = (e0, e1, e2, e3)", "broadcast: l4 " },
	{ "rdna3-wmma-i32-16x16x16-iu8-w32", "B", "row = e, col = lane % 16",
	  "row = (e0, e1, e2, e3)  col = (l0, l1, l2, l3)", "broadcast: l4 " },
	{ "rdna3-wmma-i32-16x16x16-iu8-w32", "C", "row = 2 * e + lane / 16, col = lane % 16",
	  "row = (l4, e0, e1, e2)  col = (l0, l1, l2, l3)", NULL },
	{ "rdna3-wmma-i32-16x16x16-iu8-w64", "A", "row = lane % 16, col = e",
	  "row = (l0, l1, l2, l3)  col = (e0, e1, e2, e3)", "broadcast: l4 l5 " },
	{ "rdna3-wmma-i32-16x16x16-iu8-w64", "B", "row = e, col = lane % 16",
	  "row = (e0, e1, e2, e3)  col = (l0, l1, l2, l3)", "broadcast: l4 l5 " },
	{ "rdna3-wmma-i32-16x16x16-iu8-w64", "C", "row = 4 * e + lane / 16, col = lane % 16",
	  "row = (l4, l5, e0, e1)  col = (l0, l1, l2, l3)", NULL },
	/* PTX ISA, Matrix Fragments for mma.m16n8k32 */
	{ "sm80-mma-m16n8k32-s8", "A",
	  "row = groupID + 8 for a4..a7, a12..a15; col = 4 * tig + (i & 3) + 16 for i >= 8",
	  "row = (l2, l3, l4, e2)  col = (e0, e1, l0, l1, e3)", NULL },
	{ "sm80-mma-m16n8k32-s8", "B", "row = 4 * tig + (i & 3) + 16 for i >= 4, col = groupID",
	  "row = (e0, e1, l0, l1, e2)  col = (l2, l3, l4)", NULL },
	{ "sm80-mma-m16n8k32-s8", "C", "row = groupID + 8 for i >= 2, col = 2 * tig + (i & 1)",
	  "row = (l2, l3, l4, e1)  col = (e0, l0, l1)", NULL },
	/* PTX ISA, Matrix Fragments for mma.m16n8k16 with integer type */
	{ "sm80-mma-m16n8k16-s8", "A", "row = groupID + 8 for a4..a7, col = 4 * tig + (i & 3)",
	  "row = (l2, l3, l4, e2)  col = (e0, e1, l0, l1)", NULL },
	{ "sm80-mma-m16n8k16-s8", "B", "row = 4 * tig + i, col = groupID",
	  "row = (e0, e1, l0, l1)  col = (l2, l3, l4)", NULL },
	{ "sm80-mma-m16n8k16-s8", "C", "row = groupID + 8 for i >= 2, col = 2 * tig + (i & 1)",
	  "row = (l2, l3, l4, e1)  col = (e0, l0, l1)", NULL },
	/* AMD Matrix Instruction Calculator, CDNA3 v_mfma_i32_32x32x16_i8 */
	{ "cdna3-mfma-i32-32x32x16-i8", "A", "i = lane % 32, k = 8 * (lane / 32) + e",
	  "row = (l0, l1, l2, l3, l4)  col = (e0, e1, e2, l5)", NULL },
	{ "cdna3-mfma-i32-32x32x16-i8", "B", "k = 8 * (lane / 32) + e, j = lane % 32",
	  "row = (e0, e1, e2, l5)  col = (l0, l1, l2, l3, l4)", NULL },
	{ "cdna3-mfma-i32-32x32x16-i8", "C", "i = 8 * (GPR / 4) + 4 * (lane / 32) + GPR % 4, j = lane % 32",
	  "row = (e0, e1, l5, e2, e3)  col = (l0, l1, l2, l3, l4)", NULL },
	/* AMD Matrix Instruction Calculator, RDNA4 v_wmma_i32_16x16x16_iu8 wave32 */
	{ "rdna4-wmma-i32-16x16x16-iu8-w32", "A", "i = lane % 16, k = 8 * (lane / 16) + e",
	  "row = (l0, l1, l2, l3)  col = (e0, e1, e2, l4)", NULL },
	{ "rdna4-wmma-i32-16x16x16-iu8-w32", "B", "k = 8 * (lane / 16) + e, j = lane % 16",
	  "row = (e0, e1, e2, l4)  col = (l0, l1, l2, l3)", NULL },
	{ "rdna4-wmma-i32-16x16x16-iu8-w32", "C", "i = 8 * (lane / 16) + GPR, j = lane % 16",
	  "row = (e0, e1, e2, l4)  col = (l0, l1, l2, l3)", NULL },
	/* IREE's MFMA_I32_16x16x64_I8 (gfx950): 16 consecutive k a lane */
	{ "cdna4-mfma-i32-16x16x64-i8", "A", "i = lane % 16, k = 16 * (lane / 16) + e",
	  "row = (l0, l1, l2, l3)  col = (e0, e1, e2, e3, l4, l5)", NULL },
	{ "cdna4-mfma-i32-16x16x64-i8", "B", "k = 16 * (lane / 16) + e, j = lane % 16",
	  "row = (e0, e1, e2, e3, l4, l5)  col = (l0, l1, l2, l3)", NULL },
	{ "cdna4-mfma-i32-16x16x64-i8", "C", "i = 4 * (lane / 16) + e, j = lane % 16",
	  "row = (e0, e1, l4, l5)  col = (l0, l1, l2, l3)", NULL },
};

static void builtin_bases_match_published_formulas(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		struct run_result r = tu_run("lanemap --isa %s --format basis --matrix %s",
					     bases[i].isa, bases[i].matrix);

		if (r.status != 0 || !strstr(r.out, ": linear\n") || !strstr(r.out, bases[i].line) ||
		    (bases[i].broadcast != NULL) != (strstr(r.out, "broadcast: ") != NULL) ||
		    (bases[i].broadcast && !strstr(r.out, bases[i].broadcast)))
			fail_msg("%s %s (%s): want '%s'%s%s, got exit %d:\n%s%s", bases[i].isa,
				 bases[i].matrix, bases[i].formula, bases[i].line,
				 bases[i].broadcast ? " and " : "",
				 bases[i].broadcast ? bases[i].broadcast : "", r.status, r.out, r.err);
		tu_free(&r);
	}
}

/* The Triton-style bases of gfx936 C: images of lanes 1, 2, 4, ..., 32
 * (rows 1, 2, 4, 8, then columns 1, 2 from lane / 16) and of elements 1,
 * 2 (columns 4, 8 from 4 * e). */
static void json_gives_bases(void **state)
{
	struct run_result r = tu_run("lanemap --isa gfx936 --format basis-json --matrix C");

	(void)state;
	assert_int_equal(r.status, 0);
	if (!strstr(r.out, "\"kind\": \"linear\"") ||
	    !strstr(r.out, "\"row\": [\"l0\", \"l1\", \"l2\", \"l3\"]") ||
	    !strstr(r.out, "\"col\": [\"l4\", \"l5\", \"e0\", \"e1\"]") ||
	    !strstr(r.out, "\"lane\": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1], [0, 2]]") ||
	    !strstr(r.out, "\"element\": [[0, 4], [0, 8]]"))
		fail_msg("%s", r.out);
	tu_free(&r);
}

/* Write a gfx936-shaped profile whose operand X has the given row and col
 * formulas (and elements), the others gfx936's. */
static char *profile(const char *a, const char *c, const char *k)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "fragsim_profile: 1\nname: test-gf2\ninstruction: v_test\n"
		 "description: \"test\"\nsource: \"test\"\nwave: 64\nm: 16\nn: 16\nk: %s\n"
		 "a: {type: i8, %s}\n"
		 "b: {type: i8, elements: 8, row: \"8 * (lane / 16) + e\", col: \"lane %% 16\"}\n"
		 "c: {type: i32, %s}\n", k, a, c);
	return tu_write_temp(".yaml", text);
}

#define A_GFX936 "elements: 8, row: \"lane % 16\", col: \"8 * (lane / 16) + e\""
#define C_GFX936 "elements: 4, row: \"lane % 16\", col: \"lane / 16 + 4 * e\""

/*
 * A valid map that is not linear: C col = (lane / 16 + e) % 4 + 4 * e
 * tiles the matrix once, but adds q = lane / 16 to e modulo 4. Bit 0 of
 * the sum is q0 ^ e0 (linear); bit 1 is q1 ^ e1 ^ (q0 & e0), so flipping
 * l4 (q0) or e0 changes the result by an amount that depends on the
 * other: those two break linearity, l5 and e1 do not.
 */
static void nonlinear_map_names_its_bits(void **state)
{
	char *p = profile(A_GFX936, "elements: 4, row: \"lane % 16\", col: \"(lane / 16 + e) % 4 + 4 * e\"",
			  "32");
	struct run_result r;

	(void)state;
	assert_non_null(p);
	r = tu_run("lanemap --isa %s --format basis --matrix C", p);
	if (r.status != 0 || !strstr(r.out, "C 16x16 i32, 4 elements a lane: not linear\n") ||
	    !strstr(r.out, "bits that break linearity: l4 e0\n"))
		fail_msg("exit %d:\n%s%s", r.status, r.out, r.err);
	tu_free(&r);
	r = tu_run("lanemap --isa %s --format basis-json --matrix C", p);
	if (!strstr(r.out, "\"kind\": \"nonlinear\"") ||
	    !strstr(r.out, "\"breaking\": [\"l4\", \"e0\"]"))
		fail_msg("%s", r.out);
	tu_free(&r);
	unlink(p);
	free(p);
}

/* row = 15 - lane % 16 is lane % 16 with every bit flipped: linear plus
 * the constant 15, an affine map. */
static void affine_map_says_its_offset(void **state)
{
	char *p = profile("elements: 8, row: \"15 - lane % 16\", col: \"8 * (lane / 16) + e\"",
			  C_GFX936, "32");
	struct run_result r;

	(void)state;
	assert_non_null(p);
	r = tu_run("lanemap --isa %s --format basis --matrix A", p);
	if (r.status != 0 || !strstr(r.out, ": affine\n") ||
	    !strstr(r.out, "row = (1^l0, 1^l1, 1^l2, 1^l3)  col = (e0, e1, e2, l4, l5)") ||
	    !strstr(r.out, "offset: (15,0)"))
		fail_msg("exit %d:\n%s%s", r.status, r.out, r.err);
	tu_free(&r);
	unlink(p);
	free(p);
}

/* K = 24: 6 elements a lane and 24 columns have no bit structure. */
static void non_power_of_two_is_said(void **state)
{
	char *p = profile("elements: 6, row: \"lane % 16\", col: \"6 * (lane / 16) + e\"", C_GFX936,
			  "24");
	struct run_result r;
	char *text;

	(void)state;
	assert_non_null(p);
	/* B must be 24 x 16 too: rewrite its line. */
	text = tu_slurp(p);
	assert_non_null(text);
	{
		char *b = strstr(text, "b: {");
		FILE *f = fopen(p, "w");

		assert_non_null(b);
		*b = '\0';
		fprintf(f, "%sb: {type: i8, elements: 6, row: \"6 * (lane / 16) + e\", col: \"lane %% 16\"}\n%s",
			text, strstr(b + 1, "\nc: {") + 1);
		fclose(f);
	}
	free(text);
	r = tu_run("lanemap --isa %s --format basis", p);
	if (r.status != 0 || !strstr(r.out, "A 16x24 i8, 6 elements a lane: not a power of two\n") ||
	    !strstr(r.out, "B 24x16 i8, 6 elements a lane: not a power of two\n") ||
	    !strstr(r.out, "C 16x16 i32, 4 elements a lane: linear\n"))
		fail_msg("exit %d:\n%s%s", r.status, r.out, r.err);
	tu_free(&r);
	unlink(p);
	free(p);
}

/* The article's literal C (col = lane % 16 + 4 * e) is not even a valid
 * map; its carries show as lost linearity in l2 l3 e0 e1. */
static void article_literal_map_is_not_linear(void **state)
{
	struct run_result r = tu_run("lanemap --isa gfx936-article --format basis --matrix C");

	(void)state;
	assert_int_equal(r.status, 1);	/* invalid, as lanemap check says */
	if (!strstr(r.out, ": not linear\n") || !strstr(r.out, "bits that break linearity: l2 l3 e0 e1"))
		fail_msg("%s%s", r.out, r.err);
	tu_free(&r);
}

/*
 * Relations between the builtins, bit by bit. The comparable pairs (same
 * wave and shapes) are the three 16x16x32 wave64 maps, which differ in C
 * only; each line is worked out by hand from the formulas above. E.g.
 * gfx936 -> gfx936-quad: Y = quad's slot (lane, e) holds row (l2, l3, l4,
 * l5), col (l0, l1, e0, e1); gfx936 keeps that entry in lane bits (row
 * bits, then col bits 0-1) and element bits (col bits 2-3), so lane' =
 * (l2, l3, l4, l5, l0, l1), e' = (e0, e1); and the slot that holds entry
 * (r, c) in gfx936 (lane r + 16 (c % 4), e c / 4) holds row (r2, r3, c0,
 * c1), col (r0, r1, c2, c3) in quad.
 */
static const struct {
	const char *x, *y, *bits;
} relations[] = {
	{ "gfx936", "gfx936-quad",
	  "bits: lane bits permuted: lane' = (l2, l3, l4, l5, l0, l1)  e' = (e0, e1); "
	  "entries: row' = (r2, r3, c0, c1)  col' = (r0, r1, c2, c3)" },
	{ "gfx936-quad", "gfx936",
	  "bits: lane bits permuted: lane' = (l4, l5, l0, l1, l2, l3)  e' = (e0, e1); "
	  "entries: row' = (c0, c1, r0, r1)  col' = (r2, r3, c2, c3)" },
	{ "gfx936", "cdna3-mfma-i32-16x16x32-i8",
	  "bits: transpose (row and column bits exchanged): lane' = (e0, e1, l4, l5, l0, l1)  "
	  "e' = (l2, l3); entries: row' = (c2, c3, c0, c1)  col' = (r0, r1, r2, r3)" },
	{ "cdna3-mfma-i32-16x16x32-i8", "gfx936",
	  "bits: transpose (row and column bits exchanged): lane' = (l4, l5, e0, e1, l2, l3)  "
	  "e' = (l0, l1); entries: row' = (c0, c1, c2, c3)  col' = (r2, r3, r0, r1)" },
	{ "gfx936-quad", "cdna3-mfma-i32-16x16x32-i8",
	  "bits: lane and element bits exchanged: lane' = (l0, l1, e0, e1, l4, l5)  e' = (l2, l3); "
	  "entries: row' = (c2, c3, r2, r3)  col' = (c0, c1, r0, r1)" },
	{ "cdna3-mfma-i32-16x16x32-i8", "gfx936-quad",
	  "bits: lane and element bits exchanged: lane' = (l0, l1, e0, e1, l4, l5)  e' = (l2, l3); "
	  "entries: row' = (c2, c3, r2, r3)  col' = (c0, c1, r0, r1)" },
};

/* C of the wave64 16x16 maps, from their published formulas (as above). */
static void c_entry(const char *isa, int lane, int e, int *row, int *col)
{
	if (!strcmp(isa, "gfx936"))
		*row = lane % 16, *col = lane / 16 + 4 * e;
	else if (!strcmp(isa, "gfx936-quad"))
		*row = lane / 4, *col = lane % 4 + 4 * e;
	else if (!strcmp(isa, "cdna3-mfma-i32-16x16x32-i8"))
		*row = 4 * (lane / 16) + e, *col = lane % 16;
	else	/* rdna3-wmma-i32-16x16x16-iu8-w64 */
		*row = 4 * e + lane / 16, *col = lane % 16;
}

/* Evaluate "(l2, 1^l5, e0^l4, 0)" on the bits of in (names: p0 is the
 * lane/row letter, p1 the element/col letter, split at bit `split`):
 * returns the value whose bit k is term k. */
static int eval_bits(const char *t, char p0, char p1, int split, int in)
{
	int v = 0, k = 0, term = 0;

	assert_true(*t == '(');
	for (t++; *t && *t != ')'; t++) {
		if (*t == ',') {
			v |= term << k++;
			term = 0;
		} else if (*t == '1' && (t[1] == '^' || t[1] == ',' || t[1] == ')')) {
			term ^= 1;
		} else if (*t == p0 || *t == p1) {
			char *end;
			int bit = (int)strtol(t + 1, &end, 10) + (*t == p1 ? split : 0);

			term ^= in >> bit & 1;
			t = end - 1;	/* past the digits */
		}
	}
	return v | term << k;
}

/*
 * Every pair of valid builtins: where the shapes allow, the bits line must
 * hold on every slot and every entry, checked against the published
 * formulas (c_entry), not fragsim's tables: Y's slot (lane, e) holds what
 * X's (lane', e') holds, and the slot holding (r, c) in X holds (row',
 * col') in Y. Six of the lines are also written out above, by hand.
 */
static void every_builtin_pair_relates_bit_by_bit(void **state)
{
	static const char *const valid[] = {
		"gfx936", "gfx936-quad", "cdna3-mfma-i32-16x16x32-i8",
		"rdna3-wmma-i32-16x16x16-iu8-w64", "rdna3-wmma-i32-16x16x16-iu8-w32",
		"sm80-mma-m16n8k32-s8",
	};
	size_t nv = sizeof(valid) / sizeof(valid[0]);
	int checked = 0;

	(void)state;
	for (size_t i = 0; i < nv; i++)
		for (size_t k = 0; k < nv; k++) {
			struct run_result r = tu_run("lanemap diff %s %s", valid[i], valid[k]);
			const char *want = NULL, *b;
			int bits = 0, c_comparable = i != k && i < 4 && k < 4;

			for (size_t t = 0; t < sizeof(relations) / sizeof(relations[0]); t++)
				if (!strcmp(relations[t].x, valid[i]) && !strcmp(relations[t].y, valid[k]))
					want = relations[t].bits;
			for (const char *p = r.out; (p = strstr(p, "   bits: ")); p++)
				bits++;
			/* The wave64 16x16 C maps compare; A and B of the first
			 * three are one map; every other pair differs in shape. */
			if (r.status != (i != k) || bits != c_comparable || (want && !strstr(r.out, want)))
				fail_msg("%s %s: exit %d, want %d bits line %s:\n%s%s", valid[i],
					 valid[k], r.status, c_comparable, want ? want : "", r.out, r.err);
			if (c_comparable) {
				b = strstr(r.out, "lane' = ");
				assert_non_null(b);
				for (int lane = 0; lane < 64; lane++)
					for (int e = 0; e < 4; e++) {
						int s = lane | e << 6, xl, xe, yr, yc, xr, xc;

						xl = eval_bits(b + 8, 'l', 'e', 6, s);
						xe = eval_bits(strstr(b, "  e' = ") + 7, 'l', 'e', 6, s);
						c_entry(valid[k], lane, e, &yr, &yc);
						c_entry(valid[i], xl, xe, &xr, &xc);
						if (yr != xr || yc != xc)
							fail_msg("%s %s: slot %d %d\n%s", valid[i], valid[k],
								 lane, e, r.out);
						/* entries: the X entry (xr, xc) is Y's (yr, yc) */
						c_entry(valid[i], lane, e, &xr, &xc);
						c_entry(valid[k], lane, e, &yr, &yc);
						if (eval_bits(strstr(b, "row' = ") + 7, 'r', 'c', 4, xr | xc << 4) != yr ||
						    eval_bits(strstr(b, "col' = ") + 7, 'r', 'c', 4, xr | xc << 4) != yc)
							fail_msg("%s %s: entry %d %d\n%s", valid[i], valid[k],
								 xr, xc, r.out);
					}
				checked++;
			}
			tu_free(&r);
		}
	assert_int_equal(checked, 12);
}

/* Planted relations against gfx936, C changed, worked out by hand. */
static void planted_relations_are_named(void **state)
{
	static const struct {
		const char *c, *verdict, *bits;
	} planted[] = {
		/* row bit 0 flipped when lane / 16 is odd: r0 = l0 ^ l4 */
		{ "elements: 4, row: \"lane % 16 + (1 - 2 * (lane % 2)) * ((lane / 16) % 2)\", col: \"lane / 16 + 4 * e\"",
		  NULL,
		  "bits: XOR swizzle: lane' = (l0^l4, l1, l2, l3, l4, l5)  e' = (e0, e1); "
		  "entries: row' = (r0^c0, r1, r2, r3)  col' = (c0, c1, c2, c3)" },
		/* gfx936's C transposed */
		{ "elements: 4, row: \"lane / 16 + 4 * e\", col: \"lane % 16\"", NULL,
		  "bits: transpose (row and column bits exchanged): lane' = (l4, l5, e0, e1, l0, l1)  "
		  "e' = (l2, l3); entries: row' = (c0, c1, c2, c3)  col' = (r0, r1, r2, r3)" },
		/* lanes rotated by half the wave: lane + 32 mod 64 is lane ^ 32 */
		{ "elements: 4, row: \"lane % 16\", col: \"(lane / 16 + 2) % 4 + 4 * e\"",
		  "columns XOR-swizzled: Y column i is X column i ^ 2",
		  "bits: lane ^ 32, element ^ 0: lane' = (l0, l1, l2, l3, l4, 1^l5)  e' = (e0, e1); "
		  "entries: row' = (r0, r1, r2, r3)  col' = (c0, 1^c1, c2, c3)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(planted) / sizeof(planted[0]); i++) {
		char *p = profile(A_GFX936, planted[i].c, "32");
		struct run_result r;

		assert_non_null(p);
		r = tu_run("lanemap diff gfx936 %s", p);
		if (r.status != 1 || !strstr(r.out, planted[i].bits) ||
		    (planted[i].verdict && !strstr(r.out, planted[i].verdict)))
			fail_msg("%s: exit %d:\n%s%s", planted[i].c, r.status, r.out, r.err);
		tu_free(&r);
		r = tu_run("lanemap diff gfx936 %s --format json", p);
		if (!strstr(r.out, "\"bits\": \"") || !strstr(r.out, planted[i].bits + strlen("bits: ")))
			fail_msg("%s", r.out);
		tu_free(&r);
		unlink(p);
		free(p);
	}
}

static void basis_is_for_whole_operands(void **state)
{
	struct run_result r = tu_run("lanemap --isa gfx936 --format basis --lane 3");

	(void)state;
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--format basis describes whole operands: no --lane or --entry"));
	tu_free(&r);
}

/*
 * Spans (sim/lanemap/gf2.h), the header's example by hand: 0b110 and 0b011 span
 * {0, 0b011, 0b101, 0b110}; 0b101 is in it, 0b100 is not (it reduces to
 * 0b001). Adding a member changes nothing; bit 63 is a bit like any other.
 */
static void span_by_hand(void **state)
{
	struct gf2_span s;

	(void)state;
	gf2_span_init(&s);
	assert_int_equal(s.dim, 0);
	assert_int_equal(gf2_span_reduce(&s, 0), 0);
	assert_int_equal(gf2_span_add(&s, 0), 0);
	assert_int_equal(gf2_span_add(&s, 6), 1);
	assert_int_equal(gf2_span_add(&s, 3), 1);
	assert_int_equal(s.dim, 2);
	assert_int_equal(s.pivot[2], 6);
	assert_int_equal(s.pivot[1], 3);
	assert_int_equal(gf2_span_reduce(&s, 5), 0);
	assert_int_equal(gf2_span_reduce(&s, 4), 1);
	assert_int_equal(gf2_span_add(&s, 5), 0);
	assert_int_equal(s.dim, 2);
	assert_int_equal(gf2_span_add(&s, 1ull << 63 | 5), 1);
	assert_int_equal(gf2_span_reduce(&s, 1ull << 63), 0);
	assert_int_equal(s.dim, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(builtin_bases_match_published_formulas),
		cmocka_unit_test(json_gives_bases),
		cmocka_unit_test(nonlinear_map_names_its_bits),
		cmocka_unit_test(affine_map_says_its_offset),
		cmocka_unit_test(non_power_of_two_is_said),
		cmocka_unit_test(article_literal_map_is_not_linear),
		cmocka_unit_test(every_builtin_pair_relates_bit_by_bit),
		cmocka_unit_test(planted_relations_are_named),
		cmocka_unit_test(basis_is_for_whole_operands),
		cmocka_unit_test(span_by_hand),
	};

	return cmocka_run_group_tests_name("gf2", tests, NULL, NULL);
}
