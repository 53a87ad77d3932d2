/*
 * dump.h - a device dump directory: the tensors a kernel on a real GPU
 * wrote, under the golden file names (docs/design.md 3.3), any subset of them.
 *
 *   dump/
 *     acc.npy acc_tiles.npy          i32 [n][(ksteps)][wave][EC], i32 [n][5]
 *     scores.npy out.npy             f32 [S][T][Hq][MAXCTX], [S][T][Hq][D]
 *     q_int8.npy q_scale.npy         i8 [S][T][Hq][D], f32 [S][T][Hq]
 *     splitk_max.npy splitk_sum.npy  f32 [S][T][Hq][NSEG]
 *     splitk_out.npy                 f32 [S][T][Hq][NSEG][D]
 *     p_int8.npy p_scale.npy         pv.mode int8: i8 [g][wave][EA], f32 [g][M]
 *     pv_acc.npy pv_tiles.npy        i32 [g][D/N][wave][EC], i32 [g][5]
 *
 * Or the same tensors, by the same names, in one .safetensors file: DIR
 * may be that file, or a directory holding one *.safetensors and no dump
 * .npy files (what `run --format safetensors` writes). There scores, out
 * and splitk_* may also be BF16, what a bf16 kernel writes: read as f32
 * exactly, with bf16[t] set, so that diff rounds the simulation's value
 * to BF16 before comparing. Integers (acc, acc_tiles, q_int8) may not,
 * nor q_scale: it scales acc into scores, so it must be the f32 value
 * the kernel multiplied by.
 *
 * Any other file (manifest.json, the input tensors) is not read. The acc
 * dump may hold any subset of the simulation's tiles, in any order: each
 * acc_tiles row (seq, head, row_base, token_base, row_tile) names the
 * tile, and must be one the simulation of the case executes, once. An
 * acc_tiles of 4 columns (without row_tile, as fragsim wrote it before)
 * is read when each of its rows names one tile: not for a decode group
 * of more than M q heads, whose row tiles share the other four.
 *
 * Everything wrong with a file - unreadable, truncated, another dtype or
 * shape, acc without acc_tiles, an unknown tile - is FS_EINPUT with
 * err->file naming the file.
 */
#ifndef DUMP_H
#define DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "npy.h"
#include "runcase.h"
#include "../sim/attn/attn.h"

enum dump_tensor {
	DUMP_ACC,
	DUMP_ACC_TILES,
	DUMP_SCORES,
	DUMP_OUT,
	DUMP_Q_INT8,
	DUMP_Q_SCALE,
	DUMP_SPLITK_MAX,
	DUMP_SPLITK_SUM,
	DUMP_SPLITK_OUT,
	/* pv.mode int8 (docs/dump-format.md): rows named by pv_tiles */
	DUMP_P_INT8,
	DUMP_P_SCALE,
	DUMP_PV_ACC,
	DUMP_PV_TILES,
	DUMP_COUNT
};

struct dump {
	char dir[1024];
	char st[1024];			/* the .safetensors read, or "" for .npy files */
	struct npy_array t[DUMP_COUNT];	/* t[i].data NULL: not in the dump */
	int bf16[DUMP_COUNT];		/* t[i] was stored as BF16 (widened) */
	size_t n_tiles;			/* rows of acc_tiles (0 without acc) */
	int32_t *tiles;			/* [n_tiles][ATTN_TILE_COLS]: acc_tiles,
					 * row_tile filled in for 4 columns */
	size_t n_groups;		/* rows of pv_tiles (0 without it) */
};

/* The file's name without ".npy", e.g. "acc_tiles". */
const char *dump_name(enum dump_tensor t);

/* Does the dump hold tensor t? */
int dump_has(const struct dump *d, enum dump_tensor t);

/*
 * Read every known tensor in dir (a directory or a .safetensors file)
 * and check it against r->sim, the simulation of the case r the dump
 * claims to be (shapes, tile coordinates). An acc tile the case does not
 * execute is taken when it is a key tile of one of the case's row tiles
 * inside its sequence's context (a kernel that runs tiles its mask
 * should skip: diff compares it and names the bug); any other is bad
 * input. At least one tensor must be there. On failure d is empty.
 */
enum fs_rc dump_load(const char *dir, const struct runcase *r, struct dump *d,
		     struct fs_err *err);
void dump_free(struct dump *d);

/*
 * Tiles by coordinates: a sorted copy of an acc_tiles table, to find the
 * simulation's tile for a dumped one in O(log n).
 */
struct dump_tile_index {
	size_t n;
	int32_t *rows;		/* [n][6]: the ATTN_TILE_COLS coordinates, index */
};

enum fs_rc dump_tile_index_build(const int32_t *tiles, size_t n,
				 struct dump_tile_index *ix, struct fs_err *err);
/* The index of the tile with coordinates xy[ATTN_TILE_COLS], or -1. */
long dump_tile_find(const struct dump_tile_index *ix, const int32_t *xy);
void dump_tile_index_free(struct dump_tile_index *ix);

#endif
