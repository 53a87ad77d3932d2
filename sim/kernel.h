/*
 * kernel.h - what the kernel under test assumes (a case's kernel:
 * section), and the bug classes: one wrong assumption each.
 *
 * The emulation has two sides. The hardware side executes the matrix
 * instruction under the true profile and nothing can change it. The
 * kernel side - which Q/K element goes into which register, which K scale
 * and mask each accumulator gets, where it lands in the workspace, which
 * kv head serves a q head, how a token finds its page - follows these
 * assumptions. The default of every field is the correct kernel; each
 * other value is a bug seen in real INT8 attention kernels (README.md,
 * "Bug classes").
 */
#ifndef KERNEL_H
#define KERNEL_H

#include "lanemap.h"

/* Which C column the kernel believes an accumulator holds. */
enum kern_cols {
	KCOLS_PROFILE,		/* the profile's: c0 + {0,4,8,12} on gfx936 */
	KCOLS_CONTIGUOUS,	/* a lane's accumulators as adjacent columns */
};

struct fs_kernel {
	enum kern_cols c_columns;	/* scale index, masks and workspace write */
	int operand_kq;			/* 1: MMAC(K, Q) with no transpose after */
	int head_dim_loaded;		/* 0 = all of head_dim */
	int scale_after_softmax;	/* 1: sQ * sK applied to P, not the logits */
	int k_scale_per_tile;		/* 1: the K scale of a tile's first key */
	int gqa_modulo;			/* 1: kv head = q head % kv_heads */
	enum kern_cols tail_mask;	/* column the masks test */
	int page_walk_none;		/* 1: logical block used as physical */
	enum kern_cols transpose;	/* KCOLS_CONTIGUOUS: written in register order */
	int q_pos_chunk;		/* 1: causal mask uses the chunk-local index */
	int merge_no_rescale;		/* 1: split-K partials merged without e^(m-M) */
};

/* The correct kernel: every field at its default. */
void kernel_default(struct fs_kernel *k);
int kernel_is_default(const struct fs_kernel *k);

/* One bug class: its YAML spelling and what it does. */
enum kern_bug {
	BUG_C_COLUMNS,
	BUG_OPERAND_ORDER,
	BUG_HEAD_DIM_LOADED,
	BUG_SCALE_RECOVERY,
	BUG_K_SCALE_INDEX,
	BUG_GQA_MAP,
	BUG_TAIL_MASK,
	BUG_PAGE_WALK,
	BUG_TRANSPOSE,
	BUG_Q_POSITION,
	BUG_SPLIT_MERGE,
	BUG_COUNT
};

struct kern_bug_info {
	const char *key;	/* kernel: key, e.g. "c_columns" */
	const char *good;	/* its default spelling, e.g. "profile" */
	const char *bad;	/* the bug's spelling, e.g. "contiguous" */
	const char *what;	/* one line */
};

const struct kern_bug_info *kernel_bug(enum kern_bug b);

/*
 * Plant bug b into k (for head_dim_loaded: half of head_dim). Returns 0,
 * or -1 when the bug cannot be expressed for this head_dim.
 */
int kernel_plant(struct fs_kernel *k, enum kern_bug b, int head_dim);

/* Which bugs k carries, as bits (1 << enum kern_bug). */
unsigned kernel_bugs(const struct fs_kernel *k, int head_dim);

/*
 * The "adjacent columns" belief behind c_columns, tail_mask and
 * transpose: out[slot] is the C column the kernel takes slot (lane, e) to
 * hold. Returns -1 when the lanes holding a row hold unequal shares of it.
 */
int kernel_contiguous_cols(const struct lanemap *lm, int *out);

/*
 * Can bug b change anything on hardware lm, for a case cut into
 * `segments` split-K segments? 0 when the wrong belief coincides with the
 * truth (adjacent columns on a map that has them) or cannot be expressed
 * (operand_order kq on a non-square tile, split_merge with one segment).
 */
int kernel_bug_applies(enum kern_bug b, const struct lanemap *lm, int segments);

#endif
