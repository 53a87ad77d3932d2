/*
 * mmac.h - execute one matrix instruction, lane by lane, as the hardware
 * reads its registers: C += A * B with int32 accumulation.
 *
 * Registers are passed as flat per-lane arrays in register order:
 *   a[lane * elems_A + e], b[lane * elems_B + e], c[lane * elems_C + e]
 * A and B hold 8-bit integers (i8 or u8, per the profile); C holds i32.
 * Accumulation wraps modulo 2^32 as the hardware's does (it cannot for
 * any one instruction with K <= 256, but chained calls could).
 */
#ifndef MMAC_H
#define MMAC_H

#include <stdint.h>

#include "lanemap.h"

/* Where replicas of an operand disagree (the first such entry found). */
struct mmac_fault {
	enum lm_operand op;
	int row, col;		/* the matrix entry */
	int slot0, slot1;	/* slot = lane*elems + e of the two replicas */
	int v0, v1;		/* their values */
};

/*
 * Execute once. The profile must be validated and integer typed (A, B in
 * {i8, u8}, C i32), else FS_EINPUT. Replicated operands are checked: on a
 * disagreement returns FS_MISMATCH with *fault filled (if non-NULL) and
 * leaves c unchanged.
 */
enum fs_rc mmac_exec(const struct lanemap *lm, const uint8_t *a,
		     const uint8_t *b, int32_t *c, struct mmac_fault *fault,
		     struct fs_err *err);

/*
 * The two halves of mmac_exec, for callers that keep an operand in
 * registers across many instructions (a kernel's Q fragments): read an
 * 8-bit operand's registers into a dense row-major int32 matrix through
 * the profile (0, or -1 with *fault when replicas disagree), and
 * C += A * B from matrices so read. The profile must be validated.
 */
int mmac_read(const struct lanemap *lm, enum lm_operand op,
	      const uint8_t *regs, int32_t *mat, struct mmac_fault *fault);
void mmac_product(const struct lanemap *lm, const int32_t *am,
		  const int32_t *bm, int32_t *c);

/*
 * Scatter a dense row-major matrix (rows x cols of the operand) into
 * per-lane registers: every replica gets its copy. For A/B the values are
 * 8-bit (uint8_t, two's complement for i8); for C int32.
 */
void mmac_scatter8(const struct lanemap *lm, enum lm_operand op,
		   const uint8_t *mat, uint8_t *regs);
void mmac_scatter32(const struct lanemap *lm, enum lm_operand op,
		    const int32_t *mat, int32_t *regs);

/* Gather per-lane C registers back into a dense row-major M x N matrix. */
void mmac_gather32(const struct lanemap *lm, enum lm_operand op,
		   const int32_t *regs, int32_t *mat);

#endif
