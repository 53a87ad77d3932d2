/*
 * lanediff.h - compare two lane maps entry by entry, and name the
 * difference when it is a simple transform.
 *
 * For each operand, an entry differs when the set of (lane, element)
 * owners differs. The verdict, per operand, is the first that fits:
 *   identical; transpose; rows permuted; columns permuted; lanes
 *   permuted; elements permuted within each lane; a transpose followed
 *   by a row or column permutation; unstructured.
 * A permutation is named when it is a reversal, a rotation, an
 * interleave ("columns interleaved by 4": Y's column j is X's column
 * (j % 4) * (n / 4) + j / 4) or an XOR, and listed otherwise.
 *
 * When both maps of an operand are linear over GF(2), the relation is
 * also given bit by bit (gf2_relate): which of X's lane and element bits
 * each of Y's stands for, and the same for row and column bits.
 */
#ifndef LANEDIFF_H
#define LANEDIFF_H

#include "gf2.h"
#include "lanemap.h"

enum lanediff_kind {
	LD_IDENTICAL, LD_TRANSPOSE, LD_ROWS, LD_COLS, LD_LANES, LD_ELEMS,
	LD_TRANSPOSE_PERM, LD_UNSTRUCTURED, LD_INCOMPARABLE,
};

struct lanediff_op {
	enum lanediff_kind kind;
	int entries;		/* entries compared */
	int differ;		/* entries whose owners differ */
	char verdict[256];	/* one line, e.g. "lanes interleaved by 16 (...)" */
	struct gf2_relation rel;	/* the same at bit level (gf2.h) */
	char bits[320];		/* rel in one line */
};

struct lanediff {
	struct lanediff_op op[LM_NOPERANDS];
	int differ;		/* total over operands */
};

/* Both maps must be validated, else FS_EINPUT. */
enum fs_rc lanediff_compare(const struct lanemap *x, const struct lanemap *y,
			    struct lanediff *d, struct fs_err *err);

#endif
