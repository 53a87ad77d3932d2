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

#include "../lanemap/lanemap.h"

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
 * A physical index outside the pool reads poison (sim/attn/attn_int.h).
 */
enum kern_walk {
	KWALK_TABLE,
	KWALK_NONE,
	KWALK_IDENTITY,
};

/*
 * h-bugs-a: the softmax and mask bugs (issue 22). Each enum's 0 is the
 * correct kernel.
 *   KMASK_FINITE     a masked score is KERNEL_MASK_FINITE, not -inf
 *   KMASK_ADDITIVE   the mask is added, s + (-inf): a NaN score stays NaN
 */
enum kern_maskval {
	KMASK_INF,
	KMASK_FINITE,
	KMASK_ADDITIVE,
};

/* The finite sentinel of mask_value: finite: -65504, FP16's lowest. */
#define KERNEL_MASK_FINITE (-65504.0f)

/*
 * q_position beside chunk (q_pos_chunk), h = history (the position of
 * the chunk's first query), T the chunk's tokens, N the tile's keys:
 *   KQPOS_CHUNK_KEYS    keys before h are never visited (the key loop
 *                       starts at the chunk)
 *   KQPOS_FUTURE        every query taken at the sequence's last
 *                       position, context - 1: the chunk's later keys seen
 *   KQPOS_OFF_BY_ONE    key q_pos + 1 visible too
 *   KQPOS_TILE_ROUNDED  q_pos = N * (ceil(context / N) - ceil(T / N)) + t:
 *                       the causal offset counted in whole tiles
 */
enum kern_qpos {
	KQPOS_ABSOLUTE,
	KQPOS_CHUNK_KEYS,
	KQPOS_FUTURE,
	KQPOS_OFF_BY_ONE,
	KQPOS_TILE_ROUNDED,
};

/*
 * soft_cap_apply, for a case with soft_cap c:
 *   KCAP_DROPPED    never applied
 *   KCAP_AFTER_MASK applied after the mask: a masked key is c tanh(-inf)
 *                   = -c, not -inf (visible keys as the correct kernel)
 *   KCAP_EXP_TANH   tanh(x) as (e^x - e^-x) / (e^x + e^-x) in float:
 *                   inf / inf = NaN once |s / c| passes 88.72
 */
enum kern_softcap {
	KCAP_APPLIED,
	KCAP_DROPPED,
	KCAP_AFTER_MASK,
	KCAP_EXP_TANH,
};

/*
 * alibi_bias, the bias of key j for a query at q (correct: slope (j - q)):
 *   KALIBI_IGNORED       0
 *   KALIBI_SIGN_FLIPPED  slope (q - j)
 *   KALIBI_NO_LOG2E      slope (j - q) ln 2: added in an exp2 kernel's
 *                        log2 domain without the log2(e) factor
 *   KALIBI_OFFSET        slope (j - q + 1)
 */
enum kern_alibi {
	KALIBI_ADDED,
	KALIBI_IGNORED,
	KALIBI_SIGN_FLIPPED,
	KALIBI_NO_LOG2E,
	KALIBI_OFFSET,
};

/*
 * split_merge beside no_rescale (merge_no_rescale), for a segment that
 * saw no key (m = -inf, l = 0):
 *   KMERGE_EMPTY_NAN   the merge has no guard for it: e^(-inf - m) and
 *                      its o / l = 0 / 0 enter the sums (NaN)
 *   KMERGE_STALE_LSE   it stores nothing, and the merge reads what its
 *                      slot still holds: the row's previous segment's
 *                      (max, sum, partial out), zeros for segment 0
 */
enum kern_merge {
	KMERGE_GUARDED,
	KMERGE_EMPTY_NAN,
	KMERGE_STALE_LSE,
};

/*
 * Where a physical block starts in k_cache and v_cache:
 *   KBOFF_POOL   block * the pool's block stride (cache.block_stride), in
 *                size_t (the correct kernel)
 *   KBOFF_DENSE  block * one block's elements (Hkv * D * BS): a kernel
 *                that assumes a dense pool, on padded pages or K and V
 *                interleaved; right when the stride is one block
 *   KBOFF_INT32  the pool's offset in bytes (of K, V and the scales)
 *                computed in 32-bit signed arithmetic: it wraps once a
 *                block starts past 2 GiB, to an address before the pool
 *                (poison) or to another block's bytes
 *   KBOFF_U16    the block id kept in 16 bits: block 65,536 + b is read
 *                as block b (a descriptor field's limit)
 */
enum kern_boff {
	KBOFF_POOL,
	KBOFF_DENSE,
	KBOFF_INT32,
	KBOFF_U16,
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
	/* h-bugs-a: the softmax and mask classes (issue 22); 0 is correct */
	int pv_unmasked;		/* 1: PV over every slot, masked ones too */
	enum kern_maskval mask_value;	/* what a masked score becomes */
	int window_edge;		/* +1: W + 1 keys in the window, -1: W - 1 */
	enum kern_qpos q_position;	/* the other q_position bugs (not chunk) */
	enum kern_softcap soft_cap_apply;	/* how the soft cap is applied */
	enum kern_alibi alibi_bias;	/* how the ALiBi bias is added */
	int exp2_no_log2e;		/* 1: p = 2^(s - m) on natural-log scores */
	enum kern_merge split_merge;	/* empty segments in the merge */
	/* h-bugs-c: case features' classes */
	enum kern_boff block_offset;	/* where a block starts in the caches */
	/* h-bugs-b: mapping and addressing classes (issue 22) */
	int k_scale_walk_identity;	/* 1: K scales read at the logical block */
	int v_walk_identity;		/* 1: V (and its scale) read at the logical block */
	int block_size_assumed;		/* 0: the cache's; else the block size used */
	enum kern_scale_drop scale_drop;	/* a scale left out of the logits */
	int k_scale_first_key;		/* 1: every key takes key 0's K scale */
	enum kern_gqa gqa;		/* gqa_map's values beside modulo */
	enum kern_load operand_load;	/* how K's bytes reach its registers */
	int c_rows_interleaved;		/* 1: kernel_interleaved_rows' belief */
	/* pv8: the second product's classes (issue 23), pv.mode int8 only */
	int p_regroup_none;		/* 1: C registers fed as A, no exchange */
	int pv_group_max_per_tile;	/* 1: a tile's P before the group's max */
	int v_scale_after_product;	/* 1: the group's first key's V scale after */
	int p_scale_per_tile;		/* 1: one sP for every row of the tile */
	int pv_rescale_missing;		/* 1: O not rescaled when the max grows */
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
	/* h-bugs-a: softmax and mask classes (issue 22) */
	BUG_PV_MASK,		/* pv_mask: none */
	BUG_MASK_FINITE,	/* mask_value: finite */
	BUG_MASK_ADDITIVE,	/* mask_value: additive */
	BUG_WINDOW_INCLUSIVE,	/* window_edge: inclusive */
	BUG_WINDOW_EXCLUSIVE,	/* window_edge: exclusive */
	BUG_Q_CHUNK_KEYS,	/* q_position: chunk_keys */
	BUG_Q_FUTURE,		/* q_position: future */
	BUG_Q_OFF_BY_ONE,	/* q_position: off_by_one */
	BUG_Q_TILE_ROUNDED,	/* q_position: tile_rounded */
	BUG_CAP_DROPPED,	/* soft_cap_apply: dropped */
	BUG_CAP_AFTER_MASK,	/* soft_cap_apply: after_mask */
	BUG_CAP_EXP_TANH,	/* soft_cap_apply: exp_tanh */
	BUG_ALIBI_IGNORED,	/* alibi_bias: ignored */
	BUG_ALIBI_SIGN,		/* alibi_bias: sign_flipped */
	BUG_ALIBI_NO_LOG2E,	/* alibi_bias: no_log2e */
	BUG_ALIBI_OFFSET,	/* alibi_bias: offset */
	BUG_EXP2_NO_LOG2E,	/* exp_base: exp2_no_log2e */
	BUG_MERGE_EMPTY_NAN,	/* split_merge: empty_nan */
	BUG_MERGE_STALE_LSE,	/* split_merge: stale_lse */
	/* h-bugs-c: classes of the case features (block stride, big pools) */
	BUG_BLOCK_OFFSET,	/* block_offset: dense */
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
	/* pv8: the second product's classes (issue 23), pv.mode int8 */
	BUG_P_REGROUP_NONE,	/* p_regroup: none */
	BUG_PV_GROUP_MAX,	/* pv_group_max: per_tile */
	BUG_V_SCALE_APPLY,	/* v_scale_apply: after_product */
	BUG_P_SCALE_INDEX,	/* p_scale_index: per_tile */
	BUG_PV_RESCALE,		/* pv_rescale: missing */
	/* paging: pools past 2 GiB and 65,536 blocks (sparse, inputs.h) */
	BUG_BLOCK_OFFSET_INT32,	/* block_offset: int32 */
	BUG_BLOCK_OFFSET_U16,	/* block_offset: u16 */
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
/* moved[e], e = 0..n: 1 when a mask edge at column e of a tile (keys
 * from e on masked, or before e) masks another set of slots under that
 * belief than under lm's columns (tail_mask can show there); 0 and n
 * never do. On gfx936 an edge at column 1 or 15 masks the same slots
 * (the belief keeps columns 0 and 15 in place), at 2 .. 14 others.
 * Returns -1 (moved all 0) when the belief cannot be held. moved holds
 * n + 1 entries. */
int kernel_contiguous_edges(const struct lanemap *lm, unsigned char *moved);
/* moved[j], j = 0..k - 1: 1 when p_regroup none (a lane's QK C
 * registers fed as its A operand in place) puts the P of key j of a PV
 * group where the A map reads another key. On gfx936 keys 0 and 31 stay
 * (lane 48 + r's last C register of the second tile is A's key 31 of row
 * r), the others move. -1 (moved all 0) where the class cannot be
 * planted (pv_bug_na). moved holds k entries. */
int kernel_regroup_none_moves(const struct lanemap *lm, unsigned char *moved);

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
 *   k_scale_index                    K scales per token (not per_tensor,
 *                                    not per_head)
 *   gqa_map                          G > 1 and kv_heads > 1
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
 *   block_offset (dense)             cache.block_stride past one block
 *   block_offset int32               a pool block whose K or V bytes, or
 *                                    scales, start past 2^31 - 1 bytes
 *                                    (kernel_top_block)
 *   block_offset u16                 a pool of more than 65,536 blocks
 *   scale_recovery, q_position       always
 * and (h-bugs-a):
 *   pv_mask, mask_value finite       always (a suite whose contexts all
 *                                    end on a tile boundary has no
 *                                    masked slot in an executed tile)
 *   mask_value additive              K scales per token (a poisoned
 *                                    slot's NaN scale makes a NaN score)
 *   window_edge                      a sliding window
 *   q_position chunk_keys,           always
 *     tile_rounded
 *   q_position future, off_by_one    a sequence of more than one query
 *                                    token (one token is the last
 *                                    position; its key q + 1 is past
 *                                    the context)
 *   soft_cap_apply                   a soft cap
 *   alibi_bias                       ALiBi
 *   exp_base                         always
 *   split_merge empty_nan, stale_lse split-K segments, and a query that
 *                                    sees no key of one of them (read
 *                                    from the contexts, token counts
 *                                    and window, as split_merge's rule
 *                                    reads the contexts)
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
/* 1: the belief moves an accumulator of some row tile of c into a row
 * holding another query (mutate: a case that can show c_rows). */
int kernel_interleaved_moves_read(const struct fs_case *c, const struct lanemap *lm);

/* operand_load unswizzled: the chunk read for chunk c of tile row n of a
 * row of `chunks` 16-byte chunks (kern_load above). An involution. */
int kernel_unswizzled_chunk(int c, int n, int chunks);

/* gqa_map grid_permuted: the q head work unit b serves, (b % G)*G + b / G. */
int kernel_grid_head(int b, int G);

/* The pool's last block, num_blocks - 1: block_offset int32 and u16
 * apply by the pool's size, a shape, as page_walk does; a suite whose
 * tables never name a far block lets them survive (its weakness). */
long kernel_top_block(const struct fs_case *c);

const char *kernel_bug_na(enum kern_bug b, const struct fs_case *c,
			  const struct lanemap *lm, char *buf, size_t len);

#endif
