/*
 * lanemap.h - lane maps of matrix instructions, as tables.
 *
 * A profile says, for each operand of one matrix instruction, which matrix
 * entry each (lane, element) holds. Element index e runs over a lane's
 * fragment in register order, so with element size s bytes it sits in
 * register e*s/4 at byte e*s%4 of that register.
 *
 *   operand  matrix   row index   col index
 *   A        M x K    m           k
 *   B        K x N    k           n
 *   C        M x N    m           n
 *
 * A profile is compiled once (lib/profile.c turns YAML into calls of
 * lanemap_set_operand and lanemap_eval_expr; a program calls
 * lanemap_set_exprs or lanemap_set_table) and then validated;
 * everything else reads the tables.
 * An operand may be replicated (RDNA3 WMMA holds A and B twice in wave32):
 * then every entry must be held exactly `replicas` times.
 */
#ifndef LANEMAP_H
#define LANEMAP_H

#include <stdint.h>

#include "../common/fs.h"

#define LM_MAX_LANES 64
#define LM_MAX_ELEMS 64		/* elements per lane, per operand */
#define LM_MAX_DIM 256		/* bound on M, N and K */
#define LM_MAX_REPLICAS 8
#define LM_MAX_SLOTS (LM_MAX_LANES * LM_MAX_ELEMS)
#define LM_NAME_MAX 64

enum lm_operand { LM_A = 0, LM_B = 1, LM_C = 2 };
#define LM_NOPERANDS 3

enum lm_dtype { LM_I8, LM_U8, LM_I32, LM_F16, LM_BF16, LM_F32 };

struct lanemap_operand {
	enum lm_dtype type;
	int elems;	/* elements per lane, 1..LM_MAX_ELEMS */
	int replicas;	/* times each entry is held, 1..LM_MAX_REPLICAS */
	int rows, cols;	/* matrix shape, from the table above */
	int32_t row[LM_MAX_SLOTS];	/* [lane*elems + e], as compiled */
	int32_t col[LM_MAX_SLOTS];
	/*
	 * Inverse, filled by lanemap_validate when the operand is valid:
	 * owner[(row*cols + col)*replicas + r] = lane*elems + e, replicas in
	 * increasing slot order.
	 */
	int16_t *owner;
};

struct lanemap {
	char name[LM_NAME_MAX];
	char instr[128];	/* mnemonic, e.g. v_mmac_i32_16x16x32_i8 */
	char desc[256];		/* one line for `lanemap list` */
	char source[512];	/* public source of the layout */
	int wave;		/* 32 or 64 */
	int m, n, k;
	struct lanemap_operand op[LM_NOPERANDS];
	int valid;		/* set by lanemap_validate */
};

/* What lanemap_validate found wrong, one record per problem. */
enum lm_problem_kind {
	LM_OUT_OF_RANGE,	/* lane, e and the bad value */
	LM_UNOWNED,		/* row, col held by nobody */
	LM_OWNED_WRONG,		/* row, col held count != replicas times */
};

struct lm_problem {
	enum lm_problem_kind kind;
	enum lm_operand op;
	int lane, e;		/* LM_OUT_OF_RANGE; for OWNED_WRONG the first owner */
	int row, col;		/* the entry, or the out-of-range values */
	char bad;		/* 'r' or 'c': which index is out of range */
	int count;		/* LM_OWNED_WRONG: how many times it is held */
};

#define LM_REPORT_MAX 64
struct lm_report {
	int total;			/* problems found */
	int by_kind[LM_NOPERANDS][3];	/* per operand, per kind */
	int n;				/* stored, <= LM_REPORT_MAX, first found first */
	struct lm_problem p[LM_REPORT_MAX];
};

/* Allocate a zeroed map; NULL on out of memory. */
struct lanemap *lanemap_new(void);
void lanemap_free(struct lanemap *lm);

/*
 * Set an operand's geometry (checks bounds: elems, replicas, lanes*elems
 * <= LM_MAX_SLOTS, dims <= LM_MAX_DIM). Needs wave, m, n, k set first.
 */
enum fs_rc lanemap_set_operand(struct lanemap *lm, enum lm_operand op,
			       enum lm_dtype type, int elems, int replicas,
			       struct fs_err *err);

/*
 * Build an operand's tables in code, the one way a map is compiled
 * (lib/profile.c uses these for YAML; include/fragsim.h for programs).
 * The operand's geometry must be set first (lanemap_set_operand).
 *
 * lanemap_eval_expr compiles src (sim/lanemap/expr.h: integers over `lane` and
 * `e`) and evaluates it at every lane < wave and e < elems into
 * dst[lane*elems + e]. On error FS_EINPUT with err->col the 1-based
 * column in src and a message such as "unknown name 'ee' (names are
 * lane and e)" or "value 4294967296 out of range at lane=0 e=0" (column
 * 1); dst is then partly written.
 */
enum fs_rc lanemap_eval_expr(const struct lanemap *lm, int elems,
			     const char *src, int32_t *dst, struct fs_err *err);

/*
 * Operand op from its row and col expressions, e.g. gfx936 A:
 * row "lane % 16", col "8 * (lane / 16) + e". Errors as
 * lanemap_eval_expr, the message saying where; for C's col
 * "lane / 16 + 4 * ee": "C.col: at column 17 of the expression: unknown
 * name 'ee' (names are lane and e)".
 */
enum fs_rc lanemap_set_exprs(struct lanemap *lm, enum lm_operand op,
			     const char *row, const char *col,
			     struct fs_err *err);

/* Operand op from tables row[lane*elems + e], col[...] (wave*elems each). */
enum fs_rc lanemap_set_table(struct lanemap *lm, enum lm_operand op,
			     const int32_t *row, const int32_t *col,
			     struct fs_err *err);

/*
 * Check that every (lane, e) is in range and every entry is held exactly
 * `replicas` times; build the inverse tables. Returns FS_OK when valid,
 * FS_MISMATCH when not (rep says why), FS_ENOMEM on out of memory
 * (rep has no room for a message: the caller names it).
 */
enum fs_rc lanemap_validate(struct lanemap *lm, struct lm_report *rep);

/* Owners of entry (row, col): up to max slots into slots[]; returns count. */
int lanemap_owners(const struct lanemap *lm, enum lm_operand op, int row,
		   int col, int *slots, int max);

/* Register and byte of element e (element size from the operand's type). */
void lanemap_reg_byte(const struct lanemap *lm, enum lm_operand op, int e,
		      int *reg, int *byte);

int lm_dtype_size(enum lm_dtype t);
const char *lm_dtype_name(enum lm_dtype t);
int lm_dtype_parse(const char *s, enum lm_dtype *out);	/* 0 ok, -1 unknown */
const char *lm_operand_name(enum lm_operand op);	/* "A", "B", "C" */

#endif
