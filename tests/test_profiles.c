/*
 * test_profiles.c - the builtin profiles (the YAML files in profiles/)
 * against the published register layouts.
 *
 * For every builtin profile:
 *   shape     wave, m, n, k, and per operand type, elements, replicas
 *   validity  all valid except gfx936-article, whose first problem must be
 *             C, lane 4, e 3: column 16 out of range
 *   entries   (lane, e) -> (row, col) facts copied by hand from the public
 *             source of each layout (never computed here by a formula)
 *   owners    for every (lane, e), lanemap_owners(row, col) holds that slot
 *             and exactly `replicas` owners exist
 *
 * Element e is the lane's fragment index in register order: for i8,
 * e = 4*reg + byte; for i32, e = reg. Slot = lane*elems + e.
 *
 * Where a source states a formula rather than a table, the facts below are
 * that formula worked out by hand for the given lane and register, and the
 * comment quotes the formula.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../sim/lanemap/lanemap.h"
#include "../lib/profile.h"

struct fact {
	int lane, e;	/* register slot */
	int row, col;	/* matrix entry it holds */
};

struct operand_case {
	enum lm_dtype type;
	int elems, replicas;
	const struct fact *facts;
	size_t nfacts;
};

struct profile_case {
	const char *name;
	const char *instr;
	int wave, m, n, k;
	struct operand_case op[LM_NOPERANDS];
	int valid;	/* 0: must fail validation (gfx936-article) */
};

/* One per test: the case, and the profile built by the setup. */
struct fixture {
	const struct profile_case *pc;
	struct lanemap *lm;
	struct lm_report rep;
	enum fs_rc rc;	/* of lanemap_validate */
};

/*
 * gfx936 / gfx936-quad / gfx936-article A and B.
 * HYGON-AI/composable_kernel-das
 * include/ck_tile/ops/gemm/warp/warp_gemm_attribute_mmac_impl.hpp,
 * WarpGemmAttributeMmacImplI8I8I32M16N16K32: kAMLane = 16, kBNLane = 16,
 * kABKLane = 4, kABKPerLane = 8 ("8 element per thread vec"), read through
 * WarpGemmAttributeMmacIterateK's A/BWarpDstrEncoding: A[m][k] is byte
 * k % 8 of lane m + 16 * (k / 8); B[k][n] is byte k % 8 of lane
 * n + 16 * (k / 8).
 */
static const struct fact gfx936_a[] = {
	{ 0, 0, 0, 0 },
	{ 17, 2, 1, 10 },	/* m 1, k-lane 1: k = 8 + 2 */
	{ 63, 7, 15, 31 },	/* m 15, k-lane 3: k = 24 + 7 */
	{ 32, 5, 0, 21 },	/* reg 1 byte 1: k = 16 + 5 */
	{ 15, 7, 15, 7 },
	{ 48, 0, 0, 24 },
	{ 33, 3, 1, 19 },
};

static const struct fact gfx936_b[] = {
	{ 0, 0, 0, 0 },
	{ 17, 2, 10, 1 },
	{ 63, 7, 31, 15 },
	{ 32, 5, 21, 0 },
	{ 15, 7, 7, 15 },
	{ 48, 4, 28, 0 },
};

/*
 * gfx936 C. HYGON-AI/composable_kernel-das
 * include/ck_tile/ops/gemm/warp/warp_gemm_attribute_mmac.hpp, comment of
 * WarpGemmAttributeMmacIterateKCRaw: "lane = m + 16 * (n % 4),
 * reg = n / 4 (i.e. col = c*16 + r*4 + lane/16)".
 */
static const struct fact gfx936_c[] = {
	{ 17, 2, 1, 9 },	/* m 1, n % 4 = 1, n / 4 = 2 */
	{ 0, 0, 0, 0 },
	{ 63, 3, 15, 15 },	/* m 15, n % 4 = 3, n / 4 = 3 */
	{ 16, 0, 0, 1 },
	{ 32, 1, 0, 6 },
	{ 5, 3, 5, 12 },
	{ 50, 2, 2, 11 },
};

/*
 * gfx936-quad C. Reference article 001 section 2.2: a lane holds columns
 * lane_col + {0, 4, 8, 12}; "lane_col=2 时，对应的是第 2、6、10、14 列".
 * The quad reading takes lane_col = lane % 4 and row = lane / 4
 * (docs/design.md 1.1), so lane 2 is row 0 with columns 2, 6, 10, 14.
 */
static const struct fact gfx936_quad_c[] = {
	{ 2, 0, 0, 2 },
	{ 2, 1, 0, 6 },
	{ 2, 2, 0, 10 },
	{ 2, 3, 0, 14 },
	{ 0, 0, 0, 0 },
	{ 17, 2, 4, 9 },	/* lane_col 1: 1 + 8 */
	{ 63, 3, 15, 15 },
	{ 45, 0, 11, 1 },
};

/*
 * gfx936-article C. Reference article 001 section 2.2, literal:
 * "lane_col = lane_id % 16", "int col = lane_col + 4 * i;", example
 * lane_col = 2 -> columns 2, 6, 10, 14. Row = lane / 16 is this profile's
 * assumption. Lane 63 reaches column 15 + 12 = 27.
 */
static const struct fact gfx936_article_c[] = {
	{ 2, 0, 0, 2 },
	{ 2, 1, 0, 6 },
	{ 2, 2, 0, 10 },
	{ 2, 3, 0, 14 },
	{ 18, 0, 1, 2 },
	{ 4, 3, 0, 16 },	/* the first out-of-range slot */
	{ 63, 3, 3, 27 },
	{ 0, 0, 0, 0 },
};

/*
 * CDNA3 v_mfma_i32_16x16x32_i8. AMD Matrix Instruction Calculator
 * (ROCm/amd_matrix_instruction_calculator), CDNA3 16x16x32 8-bit MFMA,
 * "Register to matrix element mapping with no modifiers":
 *   A i: (lane % 16)
 *   A k: 8 * floor(lane / 16) + 4 * GPR_num + floor(GPR_bits / 8)
 *   B j: (lane % 16)
 *   B k: 8 * floor(lane / 16) + 4 * GPR_num + floor(GPR_bits / 8)
 *   C or D i: 4 * floor(lane / 16) + (GPR_num % 4)   C or D j: (lane % 16)
 * and iree-org/iree IREEGPUAttrs.cpp MFMA_I32_16x16x32_I8 (Lhs thread
 * {16,4} element {1,8}; Acc thread {4,16} element {4,1}).
 */
static const struct fact cdna3_a[] = {
	{ 0, 0, 0, 0 },
	{ 17, 2, 1, 10 },
	{ 63, 7, 15, 31 },
	{ 32, 5, 0, 21 },	/* GPR 1, bits 15:8: k = 16 + 4 + 1 */
	{ 20, 4, 4, 12 },
	{ 47, 0, 15, 16 },
};

static const struct fact cdna3_b[] = {
	{ 0, 0, 0, 0 },
	{ 17, 2, 10, 1 },
	{ 63, 7, 31, 15 },
	{ 32, 5, 21, 0 },
	{ 20, 4, 12, 4 },
	{ 47, 0, 16, 15 },
};

/* Not gfx936's C: lane 17 GPR 2 is C[6][1] here, C[1][9] on gfx936. */
static const struct fact cdna3_c[] = {
	{ 0, 0, 0, 0 },
	{ 17, 2, 6, 1 },
	{ 63, 3, 15, 15 },
	{ 5, 1, 1, 5 },
	{ 32, 0, 8, 0 },
	{ 50, 3, 15, 2 },
};

/*
 * RDNA3 v_wmma_i32_16x16x16_iu8. AMD Matrix Instruction Calculator output
 * (matrix_calculator.py -a RDNA3 -i v_wmma_i32_16x16x16_iu8 -d):
 *   A[i][k] Lane: i and i+16. Also i+32 and i+48 in wave64.
 *   A k: 4 * GPR_num + floor(GPR_bits / 8)     (B likewise with j)
 *   C or D i: (wave_width / 16) * GPR_num + floor(lane / 16)
 *   C or D j: (lane % 16)
 */
static const struct fact rdna3_w32_a[] = {
	{ 0, 0, 0, 0 },
	{ 16, 0, 0, 0 },	/* the copy in lane i + 16 */
	{ 5, 7, 5, 7 },
	{ 21, 7, 5, 7 },
	{ 31, 15, 15, 15 },
	{ 10, 12, 10, 12 },
};

static const struct fact rdna3_w32_b[] = {
	{ 0, 0, 0, 0 },
	{ 16, 3, 3, 0 },
	{ 5, 7, 7, 5 },
	{ 31, 15, 15, 15 },
	{ 26, 9, 9, 10 },
	{ 3, 14, 14, 3 },
};

/* wave32: i = 2 * GPR_num + floor(lane / 16). */
static const struct fact rdna3_w32_c[] = {
	{ 0, 0, 0, 0 },
	{ 16, 0, 1, 0 },
	{ 17, 2, 5, 1 },
	{ 31, 7, 15, 15 },
	{ 3, 4, 8, 3 },
	{ 20, 6, 13, 4 },
};

static const struct fact rdna3_w64_a[] = {
	{ 0, 0, 0, 0 },
	{ 48, 0, 0, 0 },	/* the copy in lane i + 48 */
	{ 37, 7, 5, 7 },
	{ 63, 15, 15, 15 },
	{ 42, 12, 10, 12 },
	{ 21, 3, 5, 3 },
};

static const struct fact rdna3_w64_b[] = {
	{ 0, 0, 0, 0 },
	{ 48, 3, 3, 0 },
	{ 37, 7, 7, 5 },
	{ 63, 15, 15, 15 },
	{ 58, 9, 9, 10 },
	{ 35, 14, 14, 3 },
};

/* wave64: i = 4 * GPR_num + floor(lane / 16). */
static const struct fact rdna3_w64_c[] = {
	{ 0, 0, 0, 0 },
	{ 16, 0, 1, 0 },
	{ 32, 0, 2, 0 },
	{ 48, 0, 3, 0 },
	{ 17, 2, 9, 1 },
	{ 63, 3, 15, 15 },
	{ 35, 1, 6, 3 },
};

/*
 * sm_80 mma.m16n8k32 .s8. NVIDIA PTX ISA 9.7.14.5.10 "Matrix Fragments for
 * mma.m16n8k32": groupID = %laneid >> 2, threadID_in_group = %laneid % 4.
 *   A: row = groupID for ai where 0 <= i < 4 || 8 <= i < 12, else
 *      groupID + 8; col = (threadID_in_group * 4) + (i & 0x3), + 16 for
 *      i >= 8.
 */
static const struct fact sm80_a[] = {
	{ 0, 0, 0, 0 },
	{ 0, 4, 8, 0 },		/* a4: groupID + 8 */
	{ 0, 8, 0, 16 },	/* a8: + 16 */
	{ 0, 12, 8, 16 },
	{ 5, 3, 1, 7 },		/* groupID 1, threadID_in_group 1 */
	{ 31, 15, 15, 31 },
	{ 14, 9, 3, 25 },	/* groupID 3, tig 2: 8 + 1 + 16 */
	{ 22, 6, 13, 10 },	/* groupID 5 + 8, tig 2: 8 + 2 */
};

/*
 *   B: row = (threadID_in_group * 4) + (i & 0x3), + 16 for i >= 4;
 *      col = groupID.
 */
static const struct fact sm80_b[] = {
	{ 0, 0, 0, 0 },
	{ 0, 4, 16, 0 },
	{ 5, 3, 7, 1 },
	{ 31, 7, 31, 7 },
	{ 14, 5, 25, 3 },
	{ 22, 2, 10, 5 },
};

/*
 *   C: row = groupID for ci where i < 2, groupID + 8 for i >= 2;
 *      col = (threadID_in_group * 2) + (i & 0x1).
 */
static const struct fact sm80_c[] = {
	{ 0, 0, 0, 0 },
	{ 0, 2, 8, 0 },
	{ 5, 1, 1, 3 },
	{ 31, 3, 15, 7 },
	{ 14, 2, 11, 4 },
	{ 22, 1, 5, 5 },
};

/*
 * CDNA3 v_mfma_i32_32x32x16_i8. AMD Matrix Instruction Calculator
 * (--architecture cdna3 --instruction v_mfma_i32_32x32x16_i8 -d):
 *   A i: (lane % 32)  A k: 8 * floor(lane / 32) + 4 * GPR_num + floor(GPR_bits / 8)
 *   B j: (lane % 32)  B k: the same
 *   C or D i: (8 * floor(GPR_num / 4) % 32) + 4 * floor(lane / 32) + (GPR_num % 4)
 *   C or D j: (lane % 32)
 */
static const struct fact cdna3_32_a[] = {
	{ 0, 0, 0, 0 },
	{ 32, 0, 0, 8 },
	{ 31, 7, 31, 7 },
	{ 63, 7, 31, 15 },
	{ 45, 5, 13, 13 },	/* lane % 32 = 13, k = 8 + 5 */
	{ 7, 4, 7, 4 },
};

static const struct fact cdna3_32_b[] = {
	{ 0, 0, 0, 0 },
	{ 32, 3, 11, 0 },
	{ 63, 7, 15, 31 },
	{ 17, 6, 6, 17 },
	{ 40, 1, 9, 8 },
	{ 9, 2, 2, 9 },
};

static const struct fact cdna3_32_c[] = {
	{ 0, 0, 0, 0 },
	{ 0, 1, 1, 0 },
	{ 0, 4, 8, 0 },		/* GPR 4: 8 * 1 */
	{ 32, 0, 4, 0 },	/* lane 32: 4 * 1 */
	{ 33, 5, 13, 1 },	/* 8 + 4 + 1 */
	{ 63, 15, 31, 31 },	/* 24 + 4 + 3 */
	{ 10, 14, 26, 10 },	/* 24 + 0 + 2 */
};

/*
 * RDNA4 v_wmma_i32_16x16x16_iu8, wave32. AMD Matrix Instruction
 * Calculator (--architecture rdna4 ... -d), wave32:
 *   A i: (lane % 16)  A k: 8 * floor(lane / 16) + 4 * GPR_num + floor(GPR_bits / 8)
 *   B j: (lane % 16)  B k: the same
 *   C or D i: 8 * floor(lane / 16) + GPR_num  C or D j: (lane % 16)
 */
static const struct fact rdna4_a[] = {
	{ 0, 0, 0, 0 },
	{ 16, 0, 0, 8 },
	{ 31, 7, 15, 15 },
	{ 5, 3, 5, 3 },
	{ 20, 6, 4, 14 },
	{ 29, 4, 13, 12 },
};

static const struct fact rdna4_b[] = {
	{ 0, 0, 0, 0 },
	{ 16, 2, 10, 0 },
	{ 31, 7, 15, 15 },
	{ 9, 5, 5, 9 },
	{ 27, 1, 9, 11 },
	{ 2, 6, 6, 2 },
};

static const struct fact rdna4_c[] = {
	{ 0, 0, 0, 0 },
	{ 16, 0, 8, 0 },
	{ 0, 7, 7, 0 },
	{ 31, 7, 15, 15 },
	{ 21, 3, 11, 5 },
	{ 6, 5, 5, 6 },
};

/*
 * sm_80 mma.m16n8k16 .s8. NVIDIA PTX ISA "Matrix Fragments for
 * mma.m16n8k16 with integer type":
 *   A: row = groupID for ai where i < 4, groupID + 8 for i >= 4;
 *      col = (threadID_in_group * 4) + (i & 0x3).
 *   B: row = (threadID_in_group * 4) + i; col = groupID.
 *   C: as mma.m16n8k32 (sm80_c above).
 */
static const struct fact sm80_k16_a[] = {
	{ 0, 0, 0, 0 },
	{ 0, 4, 8, 0 },
	{ 5, 3, 1, 7 },		/* groupID 1, tig 1 */
	{ 31, 7, 15, 15 },	/* groupID 7 + 8, tig 3 */
	{ 14, 5, 11, 9 },	/* groupID 3 + 8, tig 2: 8 + 1 */
	{ 22, 2, 5, 10 },
};

static const struct fact sm80_k16_b[] = {
	{ 0, 0, 0, 0 },
	{ 5, 3, 7, 1 },
	{ 31, 3, 15, 7 },
	{ 14, 1, 9, 3 },
	{ 22, 2, 10, 5 },
	{ 3, 0, 12, 0 },		/* tig 3: row 12 */
};

/*
 * CDNA4 v_mfma_i32_16x16x64_i8. IREE IREEGPUAttrs.cpp,
 * MFMA_I32_16x16x64_I8: A thread {16,4} tstrides {1,16} element {1,16}
 * (A[i][k] at lane i + 16*(k/16), element k % 16); B the transpose;
 * C mfmaAcc16x16: thread {4,16} tstrides {16,1} element {4,1}
 * (C[i][j] at lane j + 16*(i/4), element i % 4).
 */
static const struct fact cdna4_a[] = {
	{ 0, 0, 0, 0 },
	{ 16, 0, 0, 16 },
	{ 63, 15, 15, 63 },
	{ 37, 9, 5, 41 },	/* k = 16 * 2 + 9 */
	{ 12, 4, 12, 4 },
	{ 50, 0, 2, 48 },
};

static const struct fact cdna4_b[] = {
	{ 0, 0, 0, 0 },
	{ 48, 1, 49, 0 },
	{ 25, 15, 31, 9 },
	{ 63, 15, 63, 15 },
	{ 33, 7, 39, 1 },
	{ 7, 15, 15, 7 },
};

static const struct fact cdna4_c[] = {
	{ 0, 0, 0, 0 },
	{ 16, 1, 5, 0 },
	{ 63, 3, 15, 15 },
	{ 34, 2, 10, 2 },
	{ 5, 3, 3, 5 },
	{ 47, 0, 8, 15 },
};

static const struct profile_case cases[] = {
	{
		.name = "gfx936", .instr = "v_mmac_i32_16x16x32_i8",
		.wave = 64, .m = 16, .n = 16, .k = 32, .valid = 1,
		.op = {
			{ LM_I8, 8, 1, gfx936_a, FS_ARRAY_LEN(gfx936_a) },
			{ LM_I8, 8, 1, gfx936_b, FS_ARRAY_LEN(gfx936_b) },
			{ LM_I32, 4, 1, gfx936_c, FS_ARRAY_LEN(gfx936_c) },
		},
	},
	{
		.name = "gfx936-quad", .instr = "v_mmac_i32_16x16x32_i8",
		.wave = 64, .m = 16, .n = 16, .k = 32, .valid = 1,
		.op = {
			{ LM_I8, 8, 1, gfx936_a, FS_ARRAY_LEN(gfx936_a) },
			{ LM_I8, 8, 1, gfx936_b, FS_ARRAY_LEN(gfx936_b) },
			{ LM_I32, 4, 1, gfx936_quad_c,
			  FS_ARRAY_LEN(gfx936_quad_c) },
		},
	},
	{
		.name = "gfx936-article", .instr = "v_mmac_i32_16x16x32_i8",
		.wave = 64, .m = 16, .n = 16, .k = 32, .valid = 0,
		.op = {
			{ LM_I8, 8, 1, gfx936_a, FS_ARRAY_LEN(gfx936_a) },
			{ LM_I8, 8, 1, gfx936_b, FS_ARRAY_LEN(gfx936_b) },
			{ LM_I32, 4, 1, gfx936_article_c,
			  FS_ARRAY_LEN(gfx936_article_c) },
		},
	},
	{
		.name = "cdna3-mfma-i32-16x16x32-i8",
		.instr = "v_mfma_i32_16x16x32_i8",
		.wave = 64, .m = 16, .n = 16, .k = 32, .valid = 1,
		.op = {
			{ LM_I8, 8, 1, cdna3_a, FS_ARRAY_LEN(cdna3_a) },
			{ LM_I8, 8, 1, cdna3_b, FS_ARRAY_LEN(cdna3_b) },
			{ LM_I32, 4, 1, cdna3_c, FS_ARRAY_LEN(cdna3_c) },
		},
	},
	{
		.name = "rdna3-wmma-i32-16x16x16-iu8-w32",
		.instr = "v_wmma_i32_16x16x16_iu8",
		.wave = 32, .m = 16, .n = 16, .k = 16, .valid = 1,
		.op = {
			{ LM_I8, 16, 2, rdna3_w32_a, FS_ARRAY_LEN(rdna3_w32_a) },
			{ LM_I8, 16, 2, rdna3_w32_b, FS_ARRAY_LEN(rdna3_w32_b) },
			{ LM_I32, 8, 1, rdna3_w32_c, FS_ARRAY_LEN(rdna3_w32_c) },
		},
	},
	{
		.name = "rdna3-wmma-i32-16x16x16-iu8-w64",
		.instr = "v_wmma_i32_16x16x16_iu8",
		.wave = 64, .m = 16, .n = 16, .k = 16, .valid = 1,
		.op = {
			{ LM_I8, 16, 4, rdna3_w64_a, FS_ARRAY_LEN(rdna3_w64_a) },
			{ LM_I8, 16, 4, rdna3_w64_b, FS_ARRAY_LEN(rdna3_w64_b) },
			{ LM_I32, 4, 1, rdna3_w64_c, FS_ARRAY_LEN(rdna3_w64_c) },
		},
	},
	{
		.name = "sm80-mma-m16n8k32-s8",
		.instr = "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
		.wave = 32, .m = 16, .n = 8, .k = 32, .valid = 1,
		.op = {
			{ LM_I8, 16, 1, sm80_a, FS_ARRAY_LEN(sm80_a) },
			{ LM_I8, 8, 1, sm80_b, FS_ARRAY_LEN(sm80_b) },
			{ LM_I32, 4, 1, sm80_c, FS_ARRAY_LEN(sm80_c) },
		},
	},
	{
		.name = "cdna3-mfma-i32-32x32x16-i8",
		.instr = "v_mfma_i32_32x32x16_i8",
		.wave = 64, .m = 32, .n = 32, .k = 16, .valid = 1,
		.op = {
			{ LM_I8, 8, 1, cdna3_32_a, FS_ARRAY_LEN(cdna3_32_a) },
			{ LM_I8, 8, 1, cdna3_32_b, FS_ARRAY_LEN(cdna3_32_b) },
			{ LM_I32, 16, 1, cdna3_32_c, FS_ARRAY_LEN(cdna3_32_c) },
		},
	},
	{
		.name = "rdna4-wmma-i32-16x16x16-iu8-w32",
		.instr = "v_wmma_i32_16x16x16_iu8",
		.wave = 32, .m = 16, .n = 16, .k = 16, .valid = 1,
		.op = {
			{ LM_I8, 8, 1, rdna4_a, FS_ARRAY_LEN(rdna4_a) },
			{ LM_I8, 8, 1, rdna4_b, FS_ARRAY_LEN(rdna4_b) },
			{ LM_I32, 8, 1, rdna4_c, FS_ARRAY_LEN(rdna4_c) },
		},
	},
	{
		.name = "sm80-mma-m16n8k16-s8",
		.instr = "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32",
		.wave = 32, .m = 16, .n = 8, .k = 16, .valid = 1,
		.op = {
			{ LM_I8, 8, 1, sm80_k16_a, FS_ARRAY_LEN(sm80_k16_a) },
			{ LM_I8, 4, 1, sm80_k16_b, FS_ARRAY_LEN(sm80_k16_b) },
			{ LM_I32, 4, 1, sm80_c, FS_ARRAY_LEN(sm80_c) },
		},
	},
	{
		.name = "cdna4-mfma-i32-16x16x64-i8",
		.instr = "v_mfma_i32_16x16x64_i8",
		.wave = 64, .m = 16, .n = 16, .k = 64, .valid = 1,
		.op = {
			{ LM_I8, 16, 1, cdna4_a, FS_ARRAY_LEN(cdna4_a) },
			{ LM_I8, 16, 1, cdna4_b, FS_ARRAY_LEN(cdna4_b) },
			{ LM_I32, 4, 1, cdna4_c, FS_ARRAY_LEN(cdna4_c) },
		},
	},
};

#define NCASES FS_ARRAY_LEN(cases)

static struct fixture fixtures[NCASES];

static int setup(void **state)
{
	struct fixture *f = *state;
	struct fs_err err;
	char buf[1200];

	memset(&err, 0, sizeof(err));
	f->lm = profile_builtin(f->pc->name, &err);
	if (!f->lm) {
		print_error("profile_builtin(%s): %s\n", f->pc->name,
			    fs_err_str(&err, buf, sizeof(buf)));
		return -1;
	}
	f->rc = lanemap_validate(f->lm, &f->rep);
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	lanemap_free(f->lm);
	f->lm = NULL;
	return 0;
}

/* Rows and columns of an operand's matrix: A M x K, B K x N, C M x N. */
static void op_dims(const struct profile_case *pc, int op, int *rows,
		    int *cols)
{
	*rows = op == LM_B ? pc->k : pc->m;
	*cols = op == LM_A ? pc->k : pc->n;
}

static void test_shape(void **state)
{
	const struct fixture *f = *state;
	const struct profile_case *pc = f->pc;
	const struct lanemap *lm = f->lm;

	assert_string_equal(lm->name, pc->name);
	assert_string_equal(lm->instr, pc->instr);
	assert_true(strlen(lm->desc) > 0);
	assert_true(strlen(lm->source) > 0);
	assert_int_equal(lm->wave, pc->wave);
	assert_int_equal(lm->m, pc->m);
	assert_int_equal(lm->n, pc->n);
	assert_int_equal(lm->k, pc->k);
	for (int op = 0; op < LM_NOPERANDS; op++) {
		const struct lanemap_operand *o = &lm->op[op];
		const struct operand_case *oc = &pc->op[op];
		int rows, cols;

		op_dims(pc, op, &rows, &cols);
		assert_int_equal(o->type, oc->type);
		assert_int_equal(o->elems, oc->elems);
		assert_int_equal(o->replicas, oc->replicas);
		assert_int_equal(o->rows, rows);
		assert_int_equal(o->cols, cols);
		/* Every entry held `replicas` times: the slots add up. */
		assert_int_equal(pc->wave * oc->elems, rows * cols * oc->replicas);
	}
}

static void test_validity(void **state)
{
	const struct fixture *f = *state;
	const struct lm_report *rep = &f->rep;

	if (f->pc->valid) {
		if (f->rc != FS_OK && rep->n > 0)
			fail_msg("%s: invalid, first problem: op %s kind %d "
				 "lane %d e %d row %d col %d", f->pc->name,
				 lm_operand_name(rep->p[0].op), rep->p[0].kind,
				 rep->p[0].lane, rep->p[0].e, rep->p[0].row,
				 rep->p[0].col);
		assert_int_equal(f->rc, FS_OK);
		assert_int_equal(rep->total, 0);
		assert_true(f->lm->valid);
		return;
	}
	/* gfx936-article: col = lane % 16 + 4*e leaves C at lane 4, e 3. */
	assert_int_equal(f->rc, FS_MISMATCH);
	assert_false(f->lm->valid);
	assert_true(rep->n > 0);
	assert_int_equal(rep->p[0].kind, LM_OUT_OF_RANGE);
	assert_int_equal(rep->p[0].op, LM_C);
	assert_int_equal(rep->p[0].lane, 4);
	assert_int_equal(rep->p[0].e, 3);
	assert_int_equal(rep->p[0].row, 0);
	assert_int_equal(rep->p[0].col, 16);
	assert_int_equal(rep->p[0].bad, 'c');
	/* A and B are the valid gfx936 ones. */
	for (int kind = 0; kind < 3; kind++) {
		assert_int_equal(rep->by_kind[LM_A][kind], 0);
		assert_int_equal(rep->by_kind[LM_B][kind], 0);
	}
	assert_true(rep->by_kind[LM_C][LM_OUT_OF_RANGE] > 0);
}

static void test_entries(void **state)
{
	const struct fixture *f = *state;

	for (int op = 0; op < LM_NOPERANDS; op++) {
		const struct lanemap_operand *o = &f->lm->op[op];
		const struct operand_case *oc = &f->pc->op[op];

		assert_true(oc->nfacts >= 6);
		for (size_t i = 0; i < oc->nfacts; i++) {
			const struct fact *x = &oc->facts[i];
			int slot = x->lane * o->elems + x->e;

			if (o->row[slot] != x->row || o->col[slot] != x->col)
				fail_msg("%s %s lane %d e %d: holds (%d, %d), "
					 "published (%d, %d)", f->pc->name,
					 lm_operand_name(op), x->lane, x->e,
					 o->row[slot], o->col[slot], x->row,
					 x->col);
		}
	}
}

static void test_owners(void **state)
{
	const struct fixture *f = *state;

	for (int op = 0; op < LM_NOPERANDS; op++) {
		const struct lanemap_operand *o = &f->lm->op[op];
		int slots = f->lm->wave * o->elems;
		int problems = 0;

		for (int kind = 0; kind < 3; kind++)
			problems += f->rep.by_kind[op][kind];
		if (problems)	/* gfx936-article C: no inverse to check */
			continue;
		for (int s = 0; s < slots; s++) {
			int owners[LM_MAX_REPLICAS + 1];
			int n = lanemap_owners(f->lm, op, o->row[s], o->col[s],
					       owners, LM_MAX_REPLICAS + 1);
			int found = 0;

			for (int r = 0; r < n; r++)
				found |= owners[r] == s;
			if (n != o->replicas || !found)
				fail_msg("%s %s lane %d e %d -> (%d, %d): %d "
					 "owners (want %d), slot %s", f->pc->name,
					 lm_operand_name(op), s / o->elems,
					 s % o->elems, o->row[s], o->col[s], n,
					 o->replicas, found ? "found" : "missing");
		}
	}
}

static void test_builtin_list(void **state)
{
	(void)state;
	assert_true(profile_builtin_count() >= (int)NCASES);
	for (size_t i = 0; i < NCASES; i++) {
		int seen = 0;

		for (int j = 0; j < profile_builtin_count(); j++)
			seen |= strcmp(profile_builtin_name(j),
				       cases[i].name) == 0;
		if (!seen)
			fail_msg("builtin '%s' not listed", cases[i].name);
	}
}

static void test_builtin_unknown(void **state)
{
	struct fs_err err;
	struct lanemap *lm;

	(void)state;
	memset(&err, 0, sizeof(err));
	lm = profile_builtin("gfx999-no-such-profile", &err);
	assert_null(lm);
	assert_true(strlen(err.msg) > 0);
}

static const char *const test_kinds[] = {
	"shape", "validity", "published entries", "owners invert slots",
};

static const CMUnitTestFunction test_fns[] = {
	test_shape, test_validity, test_entries, test_owners,
};

#define NKINDS FS_ARRAY_LEN(test_fns)

int main(void)
{
	static char names[NCASES][NKINDS][96];
	struct CMUnitTest tests[2 + NCASES * NKINDS];
	size_t n = 0;

	tests[n++] = (struct CMUnitTest){ "builtin list", test_builtin_list,
					  NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "builtin unknown name",
					  test_builtin_unknown, NULL, NULL,
					  NULL };
	for (size_t i = 0; i < NCASES; i++) {
		fixtures[i].pc = &cases[i];
		for (size_t j = 0; j < NKINDS; j++) {
			snprintf(names[i][j], sizeof(names[i][j]), "%s: %s",
				 cases[i].name, test_kinds[j]);
			tests[n++] = (struct CMUnitTest){
				names[i][j], test_fns[j], setup, teardown,
				&fixtures[i],
			};
		}
	}
	if (n != FS_ARRAY_LEN(tests))
		return 1;
	return cmocka_run_group_tests_name("profiles", tests, NULL, NULL);
}
