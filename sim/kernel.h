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
 * other value is a bug seen in real INT8 attention kernels
 * (docs/bug-classes.md).
 */
#ifndef KERNEL_H
#define KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "lanemap.h"

struct fs_case;		/* case.h, which includes this file */

/* Which C column the kernel believes an accumulator holds. */
enum kern_cols {
	KCOLS_PROFILE,		/* the profile's: c0 + {0,4,8,12} on gfx936 */
	KCOLS_CONTIGUOUS,	/* a lane's accumulators as adjacent columns */
};

/*
 * How a key finds its physical block. Logical block b = key / block_size
 * of sequence s:
 *   KWALK_TABLE     block_table[s][b] (the correct kernel)
 *   KWALK_NONE      first(s) + b, first(s) = the blocks of sequences 0..s-1
 *                   summed: a kernel written for a packed, contiguous cache
 *                   (sequences back to back); right on contiguous pages
 *   KWALK_IDENTITY  b itself, whatever the sequence: a kernel that never
 *                   reads the table (tested with one sequence, where it
 *                   is the same as KWALK_NONE); with two sequences on
 *                   contiguous pages sequence 1 reads sequence 0's blocks
 * A physical index outside the pool reads poison (sim/attn_int.h).
 */
enum kern_walk {
	KWALK_TABLE,
	KWALK_NONE,
	KWALK_IDENTITY,
};

/* scale_recovery's other bad values: a scale the logits never get. */
enum kern_scale_drop {
	KDROP_NONE,
	KDROP_K,		/* no_k_scale: acc * sQ * softmax_scale */
	KDROP_Q,		/* no_q_scale: acc * sK * softmax_scale */
};

/*
 * gqa_map's other bad values (G = q_heads / kv_heads):
 *   KGQA_KV_DIVIDE  kv head = q head / kv_heads; in decode, where a work
 *                   unit serves the G q heads of kv head g, it takes its
 *                   kv head from its first q head: g*G / kv_heads
 *   KGQA_SPILL      decode: the q heads of a token are cut into row tiles
 *                   of M consecutive heads (tile i: heads i*M .. i*M+M-1,
 *                   rows past q_heads zero), and a tile that holds q heads
 *                   of two groups uses the kv head of its first, i*M / G,
 *                   for all of them; acc_tiles names it (head i*M / G,
 *                   row_tile (i*M % G) / M), its rows being heads i*M + m
 *   KGQA_GRID       prefill: work unit b (grid index b < q_heads) serves
 *                   q head (b % G)*G + b / G; two units serving one head
 *                   compute the same bytes, a head no unit serves is
 *                   never written (out and scores NaN: poison)
 * A kv head at or past kv_heads is read where its offset falls, as a
 * device does: in the next block's memory, or poison past the tensor.
 */
enum kern_gqa {
	KGQA_DIVIDE,
	KGQA_KV_DIVIDE,
	KGQA_GRID,
	KGQA_SPILL,
};

/*
 * operand_load: which head-dim element the kernel puts where it means
 * element d = ks*K + kk (kk < K, the K-step's reduction index) of key
 * n (n < N, the key's column in its tile) of the K operand:
 *   KLOAD_SWAP_K_HALVES  ks*K + (kk + K/2) % K: the lane's bytes of the
 *                        two halves of the K-step exchanged
 *   KLOAD_UNSWIZZLED     16-byte chunk c = d / 16 of the key's row read
 *                        at kernel_unswizzled_chunk(c, n, D/16): the
 *                        tile was stored in shared memory with chunk c
 *                        of row n at c XOR (n mod w) (w = 8 for rows of
 *                        8 chunks or more, head_dim >= 128; else the
 *                        largest power of two <= D/16; a last, partial
 *                        group of w chunks is not swizzled) and read back
 *                        as if it were not
 * Q (the other operand) is loaded right: swapping both would leave
 * every dot product the same.
 */
enum kern_load {
	KLOAD_DIRECT,
	KLOAD_SWAP_K_HALVES,
	KLOAD_UNSWIZZLED,
};

struct fs_kernel {
	enum kern_cols c_columns;	/* scale index, masks and workspace write */
	int operand_kq;			/* 1: MMAC(K, Q) with no transpose after */
	int head_dim_loaded;		/* 0 = all of head_dim */
	int scale_after_softmax;	/* 1: sQ * sK applied to P, not the logits */
	int k_scale_per_tile;		/* 1: the K scale of a tile's first key */
	int gqa_modulo;			/* 1: kv head = q head % kv_heads */
	enum kern_cols tail_mask;	/* column the masks test */
	enum kern_walk page_walk;	/* how a key finds its block */
	enum kern_cols transpose;	/* KCOLS_CONTIGUOUS: written in register order */
	int q_pos_chunk;		/* 1: causal mask uses the chunk-local index */
	int merge_no_rescale;		/* 1: split-K partials merged without e^(m-M) */
	/* h-bugs-b: mapping and addressing classes (issue 22) */
	int k_scale_walk_identity;	/* 1: K scales read at the logical block */
	int v_walk_identity;		/* 1: V (and its scale) read at the logical block */
	int block_size_assumed;		/* 0: the cache's; else the block size used */
	enum kern_scale_drop scale_drop;	/* a scale left out of the logits */
	int k_scale_first_key;		/* 1: every key takes key 0's K scale */
	enum kern_gqa gqa;		/* gqa_map's values beside modulo */
	enum kern_load operand_load;	/* how K's bytes reach its registers */
	int c_rows_interleaved;		/* 1: kernel_interleaved_rows' belief */
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
	BUG_PAGE_WALK,		/* page_walk: none */
	BUG_PAGE_IDENTITY,	/* page_walk: identity (same key, another value) */
	BUG_TRANSPOSE,
	BUG_Q_POSITION,
	BUG_SPLIT_MERGE,
	/* h-bugs-b: mapping and addressing classes (issue 22) */
	BUG_K_SCALE_WALK,	/* k_scale_walk: identity */
	BUG_V_PAGE_WALK,	/* v_page_walk: identity */
	BUG_BLOCK_SIZE,		/* block_size_assumed: 16 */
	BUG_SCALE_NO_K,		/* scale_recovery: no_k_scale */
	BUG_SCALE_NO_Q,		/* scale_recovery: no_q_scale */
	BUG_K_SCALE_FIRST,	/* k_scale_index: first_key */
	BUG_GQA_KV_DIVIDE,	/* gqa_map: kv_divide */
	BUG_GQA_GRID,		/* gqa_map: grid_permuted */
	BUG_GQA_SPILL,		/* gqa_map: spill */
	BUG_LOAD_SWAP_K,	/* operand_load: swap_k_halves */
	BUG_LOAD_UNSWIZZLED,	/* operand_load: unswizzled */
	BUG_C_ROWS,		/* c_rows: interleaved */
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
 * The values a kernel: key takes, for the first class b that has the key
 * (page_walk is two classes, one key): names[0] the correct value,
 * names[i] (i >= 1) the bad value of class bugs[i]; names[n] = NULL.
 * Returns n, or 0 when b is not the first class of its key (its values
 * are listed under that one). names and bugs hold KERNEL_MAX_VALUES + 1.
 */
#define KERNEL_MAX_VALUES 8
int kernel_key_values(enum kern_bug b, const char **names, enum kern_bug *bugs);

/*
 * Plant bug b into k (for head_dim_loaded: half of head_dim). Returns 0,
 * or -1 when the bug cannot be expressed for this head_dim.
 */
int kernel_plant(struct fs_kernel *k, enum kern_bug b, int head_dim);

/* Which bugs k carries, as bits (UINT64_C(1) << enum kern_bug). */
uint64_t kernel_bugs(const struct fs_kernel *k, int head_dim);

/*
 * The "adjacent columns" belief behind c_columns, tail_mask and
 * transpose: out[slot] is the C column the kernel takes slot (lane, e) to
 * hold. Returns -1 when the lanes holding a row hold unequal shares of it.
 */
int kernel_contiguous_cols(const struct lanemap *lm, int *out);

/*
 * Why bug b cannot apply to case c run by a kernel written for map lm,
 * or cannot be seen in it: a reason in buf (returned), or NULL when b
 * applies. Decided from the case's shape before anything runs: the
 * model, the cache and the instruction, never the data, the block
 * placement or the context lengths (a suite whose contexts never end
 * inside a tile lets tail_mask survive: that is the suite's weakness,
 * not the class's). The rules (docs/bug-classes.md):
 *   c_columns, tail_mask, transpose  lm's lanes do not already hold
 *                                    adjacent columns, in equal shares
 *   operand_order                    a square tile, A and B of one type
 *   head_dim_loaded                  head_dim / 2 whole K-steps of lm
 *   k_scale_index (per_tile,         K scales per token (not per_tensor)
 *     first_key)
 *   gqa_map modulo                   G > 1 and kv_heads > 1
 *   gqa_map kv_divide                some work unit gets another kv
 *                                    head (prefill: G != kv_heads;
 *                                    decode: g*G/kv_heads != g for a g)
 *   gqa_map grid_permuted            prefill, every served head inside
 *                                    q_heads, and some head unserved
 *   gqa_map spill                    decode, and a tile of M consecutive
 *                                    q heads spans two groups (G % M != 0,
 *                                    kv_heads > 1)
 *   operand_load swap_k_halves       always
 *   operand_load unswizzled          head_dim of two 16-byte chunks or more
 *   c_rows                           lm's lanes hold the entries of each C
 *                                    column in equal shares, and not
 *                                    already interleaved (gfx936, sm80,
 *                                    RDNA3 are: n/a)
 *   page_walk (none, identity)       a pool of more than one block
 *   k_scale_walk                     a pool of more than one block and
 *                                    K scales per token (not per_tensor)
 *   v_page_walk                      a pool of more than one block
 *   block_size_assumed               a cache block size other than 16
 *   split_merge                      a context cut into split-K segments
 *   scale_recovery, q_position       always
 */
/*
 * The "interleaved rows" belief behind c_rows: out[slot] is the C row the
 * kernel takes slot (lane, e) to hold. A lane holding g entries of column
 * n, the idx-th of them by row, ranked r among the `lanes` lanes holding
 * column n (by the lowest row each holds), believes that entry is row
 * idx * lanes + r: its accumulators strided by the lane count, where the
 * map may hold them as a block. CDNA3 16x16 (row 4*(L/16) + e, column
 * L % 16): four lanes hold each column, so lane L's accumulator e is
 * taken as row 4e + L/16; lane 17, e 0 holds C[4][1] and is taken for
 * C[1][1]. Returns -1 when the lanes holding a column hold unequal
 * shares of it.
 */
int kernel_interleaved_rows(const struct lanemap *lm, int *out);

/* operand_load unswizzled: the chunk read for chunk c of tile row n of a
 * row of `chunks` 16-byte chunks (kern_load above). An involution. */
int kernel_unswizzled_chunk(int c, int n, int chunks);

/* gqa_map grid_permuted: the q head work unit b serves, (b % G)*G + b / G. */
int kernel_grid_head(int b, int G);

const char *kernel_bug_na(enum kern_bug b, const struct fs_case *c,
			  const struct lanemap *lm, char *buf, size_t len);

#endif
