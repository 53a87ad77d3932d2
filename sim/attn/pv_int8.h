/*
 * pv_int8.h - the second product in INT8 (pv.mode: int8), private to
 * sim/attn: the plan the driver (attn.c) builds once from the profile,
 * and the unit executor (pv_int8.c) that runs a work unit with it.
 * docs/design.md's PV section draws one lane's regroup on gfx936.
 */
#ifndef PV_INT8_H
#define PV_INT8_H

#include <stddef.h>
#include <stdint.h>

#include "../common/fs.h"
#include "../common/slab.h"

struct kern;
struct unit;
struct row;
struct scratch;
struct vcol;

#define PV_TILE_COLS 5	/* pv_tiles: seq, head, row_base, key_base, row_tile */

/*
 * Where every register of PV's operands comes from, per slot of the
 * kernel's map (slot = lane * elems + e), keys counted from the group's
 * first key. GK = the instruction's K: the keys of one group and of one
 * PV K-step, GT = GK / N QK tiles of it, DT = D / N column tiles of O.
 *   a_row[W*EA], a_key[W*EA]  the P entry the kernel puts in A slot s:
 *                  regroup lds, P[A.row][A.col] read back from LDS;
 *                  v_permuted (and the bug p_regroup none), the C
 *                  register of the same lane that holds that row's i-th
 *                  entry, tiles in order, for the lane's i-th A slot of
 *                  that row
 *   b_key[W*EB]    the key whose V the kernel loads into B slot s: B.row,
 *                  or under v_permuted the key that A column B.row
 *                  holds (the permutation that keeps the product right)
 */
struct pv_plan {
	int on;			/* pv.mode int8 */
	int GK, GT, DT;
	int *a_row, *a_key, *b_key;
};

/*
 * Build k's plan (k->pv) from the case and the kernel's map. A profile
 * the case's regroup cannot run on (v_permuted where a lane's C registers
 * do not hold its A row, as RDNA3's) is FS_EINPUT with the reason; so is
 * a head_dim that N does not divide. pv_plan_free releases the tables.
 */
enum fs_rc pv_plan_build(struct kern *k, struct fs_err *err);
void pv_plan_free(struct pv_plan *p);

/* 1 when QK tile kt (keys [kt, kt + N) below hi) has a key that a row of
 * one of unit u's row tiles (rows, u->nrt tiles of M) sees: the group's
 * tiles both executors compute. */
int pv_tile_needed(const struct kern *k, const struct unit *u, const struct row *rows,
		   int kt, int hi);

/* Groups (one per group of GK keys and row tile that some row sees) of
 * split-K segment sg of unit u, whose rows are rows: fixes the pv golden
 * indices up front. */
size_t pv_seg_groups(const struct kern *k, const struct unit *u,
		     const struct row *rows, int sg);

/*
 * kernel_bug_na for the INT8 PV classes (kernel.h's BUG_P_REGROUP_NONE
 * .. BUG_PV_RESCALE, passed as int): NULL when the class can change case
 * c's result on lm, else why not, in buf.
 */
struct fs_case;
struct lanemap;
const char *pv_bug_na(int bug, const struct fs_case *c, const struct lanemap *lm,
		      char *buf, size_t len);

/* kernel_regroup_none_moves (kernel.h). */
int pv_regroup_none_moves(const struct lanemap *lm, unsigned char *moved);

/* A thread's INT8 PV scratch, beside struct scratch. */
struct pv_scratch {
	int32_t *bm;		/* [GT][ksteps] K matrices of a group's tiles */
	int32_t *creg;		/* [GT][ksteps][W*EC] its QK C registers */
	float *ws, *ps;		/* [GT][M*N] workspaces */
	float *p;		/* [M][GK] f32 P */
	int8_t *pq;		/* [M][GK] quantized P */
	float *sp, *alpha;	/* [M] */
	uint8_t *areg, *breg;
	int32_t *am, *vm, *pvc;
	int *needed;		/* [GT] */
	int *active;		/* [M] rows with a visible key so far */
	struct vcol *vc;	/* [GK] the group's V columns */
};

/* Carve x from s (as attn_spec.h's attn_scratch_carve). */
int pv_scratch_carve(const struct kern *k, struct pv_scratch *x, struct slab *s);

/*
 * Run unit u with INT8 PV: QK as attn_spec_unit does, then per group of
 * GK keys one softmax step, P quantized, regrouped into A, V loaded into
 * B from the paged cache, the instruction per column tile and the
 * rescaled O. Writes the unit's acc and pv goldens from u->tile0 and
 * u->group0. Returns 0, or -1 if the hardware map cannot be read.
 */
int pv_int8_unit(const struct kern *k, const struct unit *u, struct scratch *x,
		 struct pv_scratch *px, long *replica_bad);

/*
 * For the fast executor (pv_fast.c): group gi's golden rows, p_int8 from
 * x->areg, p_scale from x->sp and its pv_tiles row, as pv_int8_unit
 * writes them.
 */
void pv_int8_store_group(const struct kern *k, const struct unit *u, size_t gi,
			 int rt, int kb, const struct pv_scratch *x);

#endif
