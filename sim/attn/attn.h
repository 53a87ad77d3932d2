/*
 * attn.h - the emulated kernel: paged INT8 QK^T on the matrix instruction
 * of a profile, lane by lane, then scale recovery, masks, online softmax,
 * the workspace transpose, split-K and PV (docs/design.md 1.4).
 *
 * Tiles. One tile is one instruction-shaped block of C: M query rows by N
 * keys (16 x 16 on gfx936), accumulated over D / K K-steps.
 *   decode   rows = the G q heads of one kv head, by q_head % G (repeated
 *            to fill M rows: 6 distinct of 16 for Qwen3.5-27B; G > M takes
 *            ceil(G / M) row tiles)
 *   prefill  rows = M consecutive query tokens of one q head
 * acc_tiles[i] = (seq, head, row_base, token_base, row_tile): head is the
 * kv head in decode and the q head in prefill; row_base the first query
 * token of the tile's rows (the query token in decode); token_base the
 * key of column 0; row_tile which M-row tile of the work unit's rows it
 * is. Decode: row m holds q head head*G + (row_tile*M + m) % G, so a
 * group of G > M q heads (MQA 32/1: G = 32) runs G/M row tiles per kv
 * head and row_tile tells them apart; prefill: row_tile = row_base / M.
 *
 * Numbers. Scores are f32: float(acc) * sQ * sK * softmax_scale, in that
 * order. Softmax uses fs_expf (sim/common/fexp.c), sums in register order then
 * lane order, and PV accumulates in f32 in key order within a tile.
 */
#ifndef ATTN_H
#define ATTN_H

#include <stddef.h>
#include <stdint.h>

#include "case.h"
#include "inputs.h"
#include "../lanemap/lanemap.h"

struct fs_progress;

#define ATTN_TILE_COLS 5	/* seq, head, row_base, token_base, row_tile */

struct attn_result {
	int S, T, Hq, D, MAXCTX;
	float *out;		/* [S][T][Hq][D] */
	float *scores;		/* [S][T][Hq][MAXCTX], -inf masked or past end */
	float *row_max;		/* [S][T][Hq] final softmax max (merged) */
	float *row_sum;		/* [S][T][Hq] final softmax sum (merged) */

	/* Accumulators, register order: [n_tiles][wave][EC]; with per_block32
	 * K scales one instruction per K-step: [n_tiles][ksteps][wave][EC]. */
	int32_t *acc;
	int32_t *acc_tiles;	/* [n_tiles][ATTN_TILE_COLS] */
	size_t n_tiles;
	int ksteps_in_acc;	/* 1, or D/K for per_block32 */
	int wave, ec;

	/*
	 * pv.mode int8 (sim/attn/pv_int8.c), one row per PV group (GK keys
	 * of one row tile): the A operand as the kernel filled it, in
	 * register order; P's scale per C row; the PV accumulators per
	 * column tile of D, register order; and pv_tiles[g] = (seq, head,
	 * row_base, key_base, row_tile) as acc_tiles, key_base the group's
	 * first key. NULL with pv f32.
	 */
	int8_t *p_int8;		/* [n_groups][wave][pv_ea] */
	float *p_scale;		/* [n_groups][rows] */
	int32_t *pv_acc;	/* [n_groups][pv_dt][wave][ec] */
	int32_t *pv_tiles;	/* [n_groups][ATTN_TILE_COLS] */
	size_t n_groups;
	int pv_ea, pv_dt, pv_gk;	/* A elements a lane, D / N, keys a group */

	/* Split-K partial states, [S][T][Hq][NSEG] (+[D] for out). */
	int nseg;
	float *seg_max, *seg_sum, *seg_out;

	const char *exec;	/* executor that ran: "scalar", "avx512-vnni", ... */

	/* Decode row facts. */
	int rows;		/* M */
	int distinct_rows;	/* distinct q heads among a tile's M rows (on
				 * average over a group of G > M: G / tiles) */
	long replica_mismatch;	/* replica rows that disagreed (must be 0) */
};

/*
 * Emulate case c on inputs in. The kernel side follows lm and c->kernel
 * (kernel.h); the hardware executes under lm too unless opts->hw names
 * another map of the same shape (a hypothesis: "the hardware is really
 * X"). opts may be NULL.
 */
enum attn_exec {
	ATTN_EXEC_AUTO,		/* the fastest executor that applies */
	ATTN_EXEC_SCALAR,	/* the per-lane executor: the specification */
	ATTN_EXEC_PORTABLE,	/* the fast path in plain C */
	ATTN_EXEC_AVX2,		/* the fast path with AVX2 (FS_EINPUT if absent) */
	ATTN_EXEC_AVX512,	/* the fast path with AVX-512 VNNI (likewise) */
};

/* Tensors a caller can do without (attn_opts.drop): left NULL. */
enum attn_drop {
	ATTN_DROP_SCORES = 1 << 0,	/* scores: [S][T][Hq][MAXCTX] */
	ATTN_DROP_ACC = 1 << 1,		/* acc, acc_tiles */
	ATTN_DROP_SPLITK = 1 << 2,	/* seg_max, seg_sum, seg_out */
};

/*
 * The fast path (exec other than scalar) runs only the correct kernel
 * (kernel_is_default) on the kernel's own hardware map; anything else
 * runs on the scalar executor, and r->exec says which ran. Both give the
 * same bytes (attn_fast.h says why; docs/design-sim.md draws the files).
 */
struct attn_opts {
	const struct lanemap *hw;	/* NULL: the hardware is lm */
	enum attn_exec exec;		/* 0: auto */
	unsigned drop;			/* enum attn_drop bits; 0 keeps all */
	/* Tiles done, for a watcher (sim/common/progress.h): the total is
	 * set once the work units are numbered; NULL: none. It only counts. */
	struct fs_progress *progress;
};

/* "auto", "scalar", "portable", "avx2", "avx512": 0, or -1 if unknown. */
int attn_exec_parse(const char *s, enum attn_exec *e);

/*
 * The rules between a case and its instruction's profile (an 8-bit A
 * and B, per_block32's K-step, kq's square tile, the prefill grid, the
 * segments, INT8 PV's groups and regroup): what attn_run checks first,
 * for a loader to check before any input is made. hw: the map the
 * kernel is planted on (lm if none).
 */
enum fs_rc attn_check_profile(const struct fs_case *c, const struct lanemap *lm,
			      const struct lanemap *hw, struct fs_err *err);

enum fs_rc attn_run(const struct fs_case *c, const struct lanemap *lm,
		    const struct fs_inputs *in, struct attn_result *r,
		    struct fs_err *err);
enum fs_rc attn_run_opts(const struct fs_case *c, const struct lanemap *lm,
			 const struct attn_opts *opts, const struct fs_inputs *in,
			 struct attn_result *r, struct fs_err *err);
void attn_free(struct attn_result *r);

#endif
