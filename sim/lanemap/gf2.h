/*
 * gf2.h - a lane map seen as a linear map over GF(2).
 *
 * With power-of-two sizes, an operand's map takes the bits of (lane,
 * element) to the bits of (row, col). It is linear over GF(2) when every
 * output bit is an XOR of input bits: then the map is its basis, the
 * image of each one-hot input, and
 *
 *   f(lane, e) = XOR of basis[i] over the set bits i of (lane, e)
 *
 * which is how Triton's LinearLayout describes layouts. Every published
 * INT8 map fragsim ships is of this kind; a map that is affine (a
 * constant XORed in) or not linear at all is told apart, with the input
 * bits that break linearity.
 *
 * Bits: input bit i < lane_bits is lane bit l_i, the rest are element
 * bits e_j (j = i - lane_bits; element e sits in register e*s/4, byte
 * e*s%4, so for i8 e0 and e1 pick the byte and e2.. the register).
 * Output vectors pack row bits low and column bits above them:
 * v = row | col << row_bits.
 */
#ifndef GF2_H
#define GF2_H

#include <stddef.h>
#include <stdint.h>

#include "lanemap.h"

/* lane bits (<= 6) + element bits (<= 6) */
#define GF2_MAX_IN 12

enum gf2_kind {
	GF2_LINEAR,	/* f(x) = XOR of basis over x's bits */
	GF2_AFFINE,	/* f(x) = offset ^ linear part, offset != 0 */
	GF2_NONLINEAR,	/* no basis reproduces every slot */
	GF2_NOT_POW2,	/* a size is not a power of two: no bit structure */
};

struct gf2_map {
	enum gf2_kind kind;
	int lane_bits, elem_bits;	/* inputs */
	int row_bits, col_bits;		/* outputs */
	uint32_t basis[GF2_MAX_IN];	/* image of input bit i, less offset */
	uint32_t offset;		/* f(0): 0 unless affine */
	uint32_t breaking;		/* NONLINEAR: input bits i with some x
					   where f(x ^ 1<<i) != f(x) ^ basis[i]
					   ^ offset */
	int bad_slot;			/* NONLINEAR: first slot the basis
					   misses, -1 otherwise */
};

/* Log2 of n when n is a power of two (n >= 1), else -1. */
int gf2_log2(int n);

/*
 * The GF(2) view of operand op of a valid map. Total: the kind says what
 * was found. Needs only the forward tables.
 */
void gf2_of(const struct lanemap *lm, enum lm_operand op, struct gf2_map *g);

/* Row and column of output vector v. */
static inline int gf2_row(const struct gf2_map *g, uint32_t v)
{
	return (int)(v & ((1u << g->row_bits) - 1));
}

static inline int gf2_col(const struct gf2_map *g, uint32_t v)
{
	return (int)(v >> g->row_bits);
}

/* The map's value at (lane, e) from the basis and offset. */
uint32_t gf2_apply(const struct gf2_map *g, int lane, int e);

/*
 * How map Y relates to map X bit by bit, both linear with the same bit
 * counts and the same broadcast bits:
 *   slot   R = X^-1 o Y: Y's (lane, e) holds what X's R(lane, e) holds;
 *          slot[i] is the image of input bit i (in X's input bits)
 *   entry  S = Y o X^-1: the slot that holds entry E in X holds S(E) in
 *          Y; entry[k] is the image of output bit k (row bits, then
 *          column bits)
 * Broadcast bits (image 0 in both) map to themselves in R. Affine maps
 * relate affinely: R(s) = slot-part(s) ^ slot_offset, and likewise S
 * (with X(s) = Bx s ^ ox: R(s) = Bx^-1 By s ^ Bx^-1 (oy ^ ox)).
 */
enum gf2_rel_kind {
	GF2R_NONE,		/* not comparable bit by bit: see why */
	GF2R_IDENTITY,		/* the same map (offsets may differ) */
	GF2R_TRANSPOSE,		/* S exchanges row and column bits */
	GF2R_PACKING,		/* R permutes element bits only */
	GF2R_LANES,		/* R permutes lane bits only */
	GF2R_LANE_ELEM,		/* R permutes bits across lane and element */
	GF2R_SWIZZLE,		/* R is not a permutation: XOR terms */
};

struct gf2_relation {
	enum gf2_rel_kind kind;
	int lane_bits, in_bits, row_bits, out_bits;
	uint32_t slot[GF2_MAX_IN], slot_offset;
	uint32_t entry[GF2_MAX_IN], entry_offset;
	char why[96];		/* GF2R_NONE */
};

void gf2_relate(const struct gf2_map *x, const struct gf2_map *y, struct gf2_relation *r);

/*
 * The relation in one line, e.g. "lane bits permuted: lane' = (l2, l3,
 * l4, l5, l0, l1)  e' = (e0, e1); entries: row' = (r2, r3, c0, c1)  col'
 * = (r0, r1, c2, c3)", or why there is none.
 */
void gf2_relation_text(const struct gf2_relation *r, char *out, size_t len);

/*
 * A subspace of GF(2)^64, kept as one vector per leading (highest) bit,
 * for sets of bit vectors that must be closed under XOR (the products a
 * linear device computes, sim/lanemap/probe.c). A vector is in the span when
 * reducing it by the pivots from the top bit down leaves 0.
 *
 *   add 0b110, 0b011:  pivot[2] = 0b110, pivot[1] = 0b011, dim 2
 *   reduce 0b101:      ^ pivot[2] -> 0b011, ^ pivot[1] -> 0: in the span
 *   reduce 0b100:      ^ pivot[2] -> 0b010, ^ pivot[1] -> 0b001, and
 *                      there is no pivot[0]: not in the span
 *
 * The 2^dim elements are the XORs of subsets of the nonzero pivots.
 */
#define GF2_SPAN_BITS 64

struct gf2_span {
	int dim;			/* pivots held, 0..64 */
	uint64_t pivot[GF2_SPAN_BITS];	/* [b]: leading bit b, or 0 when none */
};

/* The empty span, {0}. */
void gf2_span_init(struct gf2_span *s);

/* x less the pivots its bits lead to: 0 iff x is in the span. */
uint64_t gf2_span_reduce(const struct gf2_span *s, uint64_t x);

/* Add x: 1 when the span grew (dim + 1), 0 when x was in it already. */
int gf2_span_add(struct gf2_span *s, uint64_t x);

#endif
