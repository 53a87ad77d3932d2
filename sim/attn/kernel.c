/*
 * kernel.c - the kernel's assumptions and the bug class table (kernel.h).
 * The table is the one place a bug class is named: the case schema,
 * fragsim mutate, fragsim diff and docs/bug-classes.md all use these spellings.
 * A key may carry more than one class (page_walk: none, identity); the
 * schema lists its values once (kernel_key_values).
 */
#include "kernel.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "../common/fs.h"
#include "pv_int8.h"

static const struct kern_bug_info bugs[BUG_COUNT] = {
	[BUG_C_COLUMNS] = { "c_columns", "profile", "contiguous",
		"a lane's accumulators taken as adjacent columns (scale, masks, workspace)" },
	[BUG_OPERAND_ORDER] = { "operand_order", "qk", "kq",
		"MMAC(K, Q): C is K Q^T, read as if it were Q K^T" },
	[BUG_HEAD_DIM_LOADED] = { "head_dim_loaded", "all", "half",
		"only the first half of head_dim is loaded (K-steps stop early)" },
	[BUG_SCALE_RECOVERY] = { "scale_recovery", "before_softmax", "after_softmax",
		"softmax of raw accumulators; Q and K scales applied to P instead" },
	[BUG_K_SCALE_INDEX] = { "k_scale_index", "per_token", "per_tile",
		"one K scale per tile of keys (its first key's) instead of per key" },
	[BUG_GQA_MAP] = { "gqa_map", "divide", "modulo",
		"kv head = q head % kv_heads instead of q head / group" },
	[BUG_TAIL_MASK] = { "tail_mask", "column", "contiguous",
		"masks test a lane's register index, not the column it holds" },
	[BUG_PAGE_WALK] = { "page_walk", "block_table", "none",
		"the block table ignored: a sequence's blocks taken as consecutive from its first" },
	[BUG_PAGE_IDENTITY] = { "page_walk", "block_table", "identity",
		"the block table ignored: logical block index used as the physical block" },
	[BUG_TRANSPOSE] = { "transpose", "profile", "none",
		"workspace written in register order, without the 4x4 transpose" },
	[BUG_Q_POSITION] = { "q_position", "absolute", "chunk",
		"causal mask compares keys with the chunk-local query index" },
	[BUG_SPLIT_MERGE] = { "split_merge", "rescale", "no_rescale",
		"split-K partials summed without the e^(m_i - m) weights" },
	/* h-bugs-a: softmax and mask classes (issue 22) */
	[BUG_PV_MASK] = { "pv_mask", "correct", "none",
		"PV sums p * V over every slot of the tile: 0 * NaN from a poisoned masked slot" },
	[BUG_MASK_FINITE] = { "mask_value", "correct", "finite",
		"masked scores set to -65504, not -inf" },
	[BUG_MASK_ADDITIVE] = { "mask_value", "correct", "additive",
		"the mask added as s + (-inf): a NaN score stays NaN" },
	[BUG_WINDOW_INCLUSIVE] = { "window_edge", "correct", "inclusive",
		"a sliding window of W keys lets W + 1 through" },
	[BUG_WINDOW_EXCLUSIVE] = { "window_edge", "correct", "exclusive",
		"a sliding window of W keys lets W - 1 through" },
	[BUG_Q_CHUNK_KEYS] = { "q_position", "absolute", "chunk_keys",
		"the key loop starts at the chunk: the history is skipped" },
	[BUG_Q_FUTURE] = { "q_position", "absolute", "future",
		"every query taken at the sequence's last position: later keys seen" },
	[BUG_Q_OFF_BY_ONE] = { "q_position", "absolute", "off_by_one",
		"the causal mask lets key q + 1 through" },
	[BUG_Q_TILE_ROUNDED] = { "q_position", "absolute", "tile_rounded",
		"the causal offset computed from tile counts, N (ceil(ctx/N) - ceil(T/N))" },
	[BUG_CAP_DROPPED] = { "soft_cap_apply", "correct", "dropped",
		"the soft cap accepted and never applied" },
	[BUG_CAP_AFTER_MASK] = { "soft_cap_apply", "correct", "after_mask",
		"the soft cap applied after the mask: masked keys score -cap, not -inf" },
	[BUG_CAP_EXP_TANH] = { "soft_cap_apply", "correct", "exp_tanh",
		"tanh as (e^x - e^-x) / (e^x + e^-x) in float: NaN once |s/cap| > 88.7" },
	[BUG_ALIBI_IGNORED] = { "alibi_bias", "correct", "ignored",
		"ALiBi accepted and not added" },
	[BUG_ALIBI_SIGN] = { "alibi_bias", "correct", "sign_flipped",
		"ALiBi bias slope * (q - k) instead of slope * (k - q)" },
	[BUG_ALIBI_NO_LOG2E] = { "alibi_bias", "correct", "no_log2e",
		"ALiBi added in an exp2 kernel's log2 domain without log2(e): slope * (k - q) * ln 2" },
	[BUG_ALIBI_OFFSET] = { "alibi_bias", "correct", "offset",
		"ALiBi bias slope * (k - q + 1)" },
	[BUG_EXP2_NO_LOG2E] = { "exp_base", "correct", "exp2_no_log2e",
		"an exp2 softmax whose scale lacks log2(e): p = 2^(s - m)" },
	[BUG_MERGE_EMPTY_NAN] = { "split_merge", "rescale", "empty_nan",
		"no guard for an empty segment: e^(-inf - m) and 0 / 0 enter the merge" },
	[BUG_MERGE_STALE_LSE] = { "split_merge", "rescale", "stale_lse",
		"an empty segment stores nothing: the merge reads the previous segment's state" },
	/* h-bugs-c */
	[BUG_BLOCK_OFFSET] = { "block_offset", "pool", "dense",
		"a block's start taken as block * one block's bytes, ignoring the pool's block stride" },
	/* h-bugs-b: mapping and addressing classes (issue 22) */
	[BUG_K_SCALE_WALK] = { "k_scale_walk", "block_table", "identity",
		"K walks the block table, its scales are read at the logical block index" },
	[BUG_V_PAGE_WALK] = { "v_page_walk", "block_table", "identity",
		"K walks the block table, V and its scale are read at the logical block index" },
	[BUG_BLOCK_SIZE] = { "block_size_assumed", "cache", "16",
		"block and slot of a key computed with 16 keys a block, whatever the cache's" },
	[BUG_SCALE_NO_K] = { "scale_recovery", "before_softmax", "no_k_scale",
		"logits recovered as acc * sQ * softmax_scale: the K scale never applied" },
	[BUG_SCALE_NO_Q] = { "scale_recovery", "before_softmax", "no_q_scale",
		"logits recovered as acc * sK * softmax_scale: the Q scale never applied" },
	[BUG_K_SCALE_FIRST] = { "k_scale_index", "per_token", "first_key",
		"every key takes the K scale of the sequence's first key (loaded once)" },
	[BUG_GQA_KV_DIVIDE] = { "gqa_map", "divide", "kv_divide",
		"kv head = q head / kv_heads instead of q head / group" },
	[BUG_GQA_GRID] = { "gqa_map", "divide", "grid_permuted",
		"prefill work unit b serves q head (b % G)*G + b / G: heads collide, some are never written" },
	[BUG_GQA_SPILL] = { "gqa_map", "divide", "spill",
		"decode tiles of M consecutive q heads: one spanning two groups uses the first group's kv head" },
	[BUG_LOAD_SWAP_K] = { "operand_load", "direct", "swap_k_halves",
		"a lane's K bytes of the two halves of a K-step exchanged" },
	[BUG_LOAD_UNSWIZZLED] = { "operand_load", "direct", "unswizzled",
		"K read from an XOR-swizzled shared-memory tile without unswizzling" },
	[BUG_C_ROWS] = { "c_rows", "profile", "interleaved",
		"a lane's accumulators of one column taken as rows strided by the lane count (mask, Q scale, ALiBi, output row)" },
	/* pv8: INT8 PV (pv.mode int8, sim/attn/pv_int8.c) */
	[BUG_P_REGROUP_NONE] = { "p_regroup", "exchanged", "none",
		"INT8 PV: the QK C registers fed as the A operand without the exchange, V loaded in key order" },
	[BUG_PV_GROUP_MAX] = { "pv_group_max", "per_group", "per_tile",
		"INT8 PV: a tile's P computed before the group's later tiles raise the max, and not rescaled" },
	[BUG_V_SCALE_APPLY] = { "v_scale_apply", "folded", "after_product",
		"INT8 PV: P quantized without the V scale, the group's first key's scale applied after the product" },
	[BUG_P_SCALE_INDEX] = { "p_scale_index", "per_row", "per_tile",
		"INT8 PV: one P scale, the tile's largest, for every row" },
	[BUG_PV_RESCALE] = { "pv_rescale", "applied", "missing",
		"INT8 PV: O not rescaled by e^(m_old - m_new) when a group raises the max" },
	/* paging: pools past 2 GiB and 65,536 blocks */
	[BUG_BLOCK_OFFSET_INT32] = { "block_offset", "pool", "int32",
		"a block's byte offset (and its scales') computed in 32-bit signed arithmetic: it wraps past 2 GiB" },
	[BUG_BLOCK_OFFSET_U16] = { "block_offset", "pool", "u16",
		"the block id truncated to 16 bits: block 65,536 + b read as block b" },
};

void kernel_default(struct fs_kernel *k)
{
	memset(k, 0, sizeof(*k));
}

int kernel_is_default(const struct fs_kernel *k)
{
	struct fs_kernel d;

	kernel_default(&d);
	return !memcmp(k, &d, sizeof(d));
}

const struct kern_bug_info *kernel_bug(enum kern_bug b)
{
	return (unsigned)b < BUG_COUNT ? &bugs[b] : NULL;
}

int kernel_key_values(enum kern_bug b, const char **names, enum kern_bug *as)
{
	int n = 1;

	if ((unsigned)b >= BUG_COUNT)
		return 0;
	for (int a = 0; a < (int)b; a++)
		if (!strcmp(bugs[a].key, bugs[b].key))
			return 0;
	names[0] = bugs[b].good;
	as[0] = BUG_COUNT;
	for (int a = (int)b; a < BUG_COUNT && n < KERNEL_MAX_VALUES; a++)
		if (!strcmp(bugs[a].key, bugs[b].key)) {
			names[n] = bugs[a].bad;
			as[n++] = (enum kern_bug)a;
		}
	names[n] = NULL;
	return n;
}

int kernel_plant(struct fs_kernel *k, enum kern_bug b, int head_dim)
{
	switch (b) {
	case BUG_C_COLUMNS: k->c_columns = KCOLS_CONTIGUOUS; return 0;
	case BUG_OPERAND_ORDER: k->operand_kq = 1; return 0;
	case BUG_HEAD_DIM_LOADED:
		if (head_dim < 2)
			return -1;
		k->head_dim_loaded = head_dim / 2;
		return 0;
	case BUG_SCALE_RECOVERY: k->scale_after_softmax = 1; k->scale_drop = KDROP_NONE; return 0;
	case BUG_K_SCALE_INDEX: k->k_scale_per_tile = 1; k->k_scale_first_key = 0; return 0;
	case BUG_GQA_MAP: k->gqa_modulo = 1; k->gqa = KGQA_DIVIDE; return 0;
	case BUG_TAIL_MASK: k->tail_mask = KCOLS_CONTIGUOUS; return 0;
	case BUG_PAGE_WALK: k->page_walk = KWALK_NONE; return 0;
	case BUG_PAGE_IDENTITY: k->page_walk = KWALK_IDENTITY; return 0;
	case BUG_TRANSPOSE: k->transpose = KCOLS_CONTIGUOUS; return 0;
	case BUG_Q_POSITION: k->q_pos_chunk = 1; return 0;
	case BUG_SPLIT_MERGE: k->merge_no_rescale = 1; return 0;
	/* h-bugs-a */
	case BUG_PV_MASK: k->pv_unmasked = 1; return 0;
	case BUG_MASK_FINITE: k->mask_value = KMASK_FINITE; return 0;
	case BUG_MASK_ADDITIVE: k->mask_value = KMASK_ADDITIVE; return 0;
	case BUG_WINDOW_INCLUSIVE: k->window_edge = 1; return 0;
	case BUG_WINDOW_EXCLUSIVE: k->window_edge = -1; return 0;
	case BUG_Q_CHUNK_KEYS: k->q_position = KQPOS_CHUNK_KEYS; return 0;
	case BUG_Q_FUTURE: k->q_position = KQPOS_FUTURE; return 0;
	case BUG_Q_OFF_BY_ONE: k->q_position = KQPOS_OFF_BY_ONE; return 0;
	case BUG_Q_TILE_ROUNDED: k->q_position = KQPOS_TILE_ROUNDED; return 0;
	case BUG_CAP_DROPPED: k->soft_cap_apply = KCAP_DROPPED; return 0;
	case BUG_CAP_AFTER_MASK: k->soft_cap_apply = KCAP_AFTER_MASK; return 0;
	case BUG_CAP_EXP_TANH: k->soft_cap_apply = KCAP_EXP_TANH; return 0;
	case BUG_ALIBI_IGNORED: k->alibi_bias = KALIBI_IGNORED; return 0;
	case BUG_ALIBI_SIGN: k->alibi_bias = KALIBI_SIGN_FLIPPED; return 0;
	case BUG_ALIBI_NO_LOG2E: k->alibi_bias = KALIBI_NO_LOG2E; return 0;
	case BUG_ALIBI_OFFSET: k->alibi_bias = KALIBI_OFFSET; return 0;
	case BUG_EXP2_NO_LOG2E: k->exp2_no_log2e = 1; return 0;
	case BUG_MERGE_EMPTY_NAN: k->split_merge = KMERGE_EMPTY_NAN; return 0;
	case BUG_MERGE_STALE_LSE: k->split_merge = KMERGE_STALE_LSE; return 0;
	/* h-bugs-c */
	case BUG_BLOCK_OFFSET: k->block_offset = KBOFF_DENSE; return 0;
	case BUG_BLOCK_OFFSET_INT32: k->block_offset = KBOFF_INT32; return 0;
	case BUG_BLOCK_OFFSET_U16: k->block_offset = KBOFF_U16; return 0;
	/* h-bugs-b */
	case BUG_K_SCALE_WALK: k->k_scale_walk_identity = 1; return 0;
	case BUG_V_PAGE_WALK: k->v_walk_identity = 1; return 0;
	case BUG_BLOCK_SIZE: k->block_size_assumed = 16; return 0;
	/* one key, one value: a value replaces the key's other bad values */
	case BUG_SCALE_NO_K:
	case BUG_SCALE_NO_Q:
		k->scale_after_softmax = 0;
		k->scale_drop = b == BUG_SCALE_NO_K ? KDROP_K : KDROP_Q;
		return 0;
	case BUG_K_SCALE_FIRST: k->k_scale_first_key = 1; k->k_scale_per_tile = 0; return 0;
	case BUG_C_ROWS: k->c_rows_interleaved = 1; return 0;
	/* pv8 */
	case BUG_P_REGROUP_NONE: k->p_regroup_none = 1; return 0;
	case BUG_PV_GROUP_MAX: k->pv_group_max_per_tile = 1; return 0;
	case BUG_V_SCALE_APPLY: k->v_scale_after_product = 1; return 0;
	case BUG_P_SCALE_INDEX: k->p_scale_per_tile = 1; return 0;
	case BUG_PV_RESCALE: k->pv_rescale_missing = 1; return 0;
	case BUG_LOAD_SWAP_K: k->operand_load = KLOAD_SWAP_K_HALVES; return 0;
	case BUG_LOAD_UNSWIZZLED: k->operand_load = KLOAD_UNSWIZZLED; return 0;
	case BUG_GQA_KV_DIVIDE:
	case BUG_GQA_GRID:
	case BUG_GQA_SPILL:
		k->gqa_modulo = 0;
		k->gqa = b == BUG_GQA_KV_DIVIDE ? KGQA_KV_DIVIDE :
			 b == BUG_GQA_GRID ? KGQA_GRID : KGQA_SPILL;
		return 0;
	case BUG_COUNT: break;
	}
	return -1;
}

uint64_t kernel_bugs(const struct fs_kernel *k, int head_dim)
{
	uint64_t b = 0;

	b |= (uint64_t)(k->c_columns != KCOLS_PROFILE) << BUG_C_COLUMNS;
	b |= (uint64_t)(k->operand_kq != 0) << BUG_OPERAND_ORDER;
	b |= (uint64_t)(k->head_dim_loaded > 0 && k->head_dim_loaded < head_dim)
	     << BUG_HEAD_DIM_LOADED;
	b |= (uint64_t)(k->scale_after_softmax != 0) << BUG_SCALE_RECOVERY;
	b |= (uint64_t)(k->k_scale_per_tile != 0) << BUG_K_SCALE_INDEX;
	b |= (uint64_t)(k->gqa_modulo != 0) << BUG_GQA_MAP;
	b |= (uint64_t)(k->tail_mask != KCOLS_PROFILE) << BUG_TAIL_MASK;
	b |= (uint64_t)(k->page_walk == KWALK_NONE) << BUG_PAGE_WALK;
	b |= (uint64_t)(k->page_walk == KWALK_IDENTITY) << BUG_PAGE_IDENTITY;
	b |= (uint64_t)(k->transpose != KCOLS_PROFILE) << BUG_TRANSPOSE;
	b |= (uint64_t)(k->q_pos_chunk != 0) << BUG_Q_POSITION;
	b |= (uint64_t)(k->merge_no_rescale != 0) << BUG_SPLIT_MERGE;
	/* h-bugs-a */
	b |= (uint64_t)(k->pv_unmasked != 0) << BUG_PV_MASK;
	b |= (uint64_t)(k->mask_value == KMASK_FINITE) << BUG_MASK_FINITE;
	b |= (uint64_t)(k->mask_value == KMASK_ADDITIVE) << BUG_MASK_ADDITIVE;
	b |= (uint64_t)(k->window_edge > 0) << BUG_WINDOW_INCLUSIVE;
	b |= (uint64_t)(k->window_edge < 0) << BUG_WINDOW_EXCLUSIVE;
	b |= (uint64_t)(k->q_position == KQPOS_CHUNK_KEYS) << BUG_Q_CHUNK_KEYS;
	b |= (uint64_t)(k->q_position == KQPOS_FUTURE) << BUG_Q_FUTURE;
	b |= (uint64_t)(k->q_position == KQPOS_OFF_BY_ONE) << BUG_Q_OFF_BY_ONE;
	b |= (uint64_t)(k->q_position == KQPOS_TILE_ROUNDED) << BUG_Q_TILE_ROUNDED;
	b |= (uint64_t)(k->soft_cap_apply == KCAP_DROPPED) << BUG_CAP_DROPPED;
	b |= (uint64_t)(k->soft_cap_apply == KCAP_AFTER_MASK) << BUG_CAP_AFTER_MASK;
	b |= (uint64_t)(k->soft_cap_apply == KCAP_EXP_TANH) << BUG_CAP_EXP_TANH;
	b |= (uint64_t)(k->alibi_bias == KALIBI_IGNORED) << BUG_ALIBI_IGNORED;
	b |= (uint64_t)(k->alibi_bias == KALIBI_SIGN_FLIPPED) << BUG_ALIBI_SIGN;
	b |= (uint64_t)(k->alibi_bias == KALIBI_NO_LOG2E) << BUG_ALIBI_NO_LOG2E;
	b |= (uint64_t)(k->alibi_bias == KALIBI_OFFSET) << BUG_ALIBI_OFFSET;
	b |= (uint64_t)(k->exp2_no_log2e != 0) << BUG_EXP2_NO_LOG2E;
	b |= (uint64_t)(k->split_merge == KMERGE_EMPTY_NAN) << BUG_MERGE_EMPTY_NAN;
	b |= (uint64_t)(k->split_merge == KMERGE_STALE_LSE) << BUG_MERGE_STALE_LSE;
	/* h-bugs-c */
	b |= (uint64_t)(k->block_offset == KBOFF_DENSE) << BUG_BLOCK_OFFSET;
	b |= (uint64_t)(k->block_offset == KBOFF_INT32) << BUG_BLOCK_OFFSET_INT32;
	b |= (uint64_t)(k->block_offset == KBOFF_U16) << BUG_BLOCK_OFFSET_U16;
	/* h-bugs-b */
	b |= (uint64_t)(k->k_scale_walk_identity != 0) << BUG_K_SCALE_WALK;
	b |= (uint64_t)(k->v_walk_identity != 0) << BUG_V_PAGE_WALK;
	b |= (uint64_t)(k->block_size_assumed != 0) << BUG_BLOCK_SIZE;
	b |= (uint64_t)(k->scale_drop == KDROP_K) << BUG_SCALE_NO_K;
	b |= (uint64_t)(k->scale_drop == KDROP_Q) << BUG_SCALE_NO_Q;
	b |= (uint64_t)(k->k_scale_first_key != 0) << BUG_K_SCALE_FIRST;
	b |= (uint64_t)(k->gqa == KGQA_KV_DIVIDE) << BUG_GQA_KV_DIVIDE;
	b |= (uint64_t)(k->gqa == KGQA_GRID) << BUG_GQA_GRID;
	b |= (uint64_t)(k->gqa == KGQA_SPILL) << BUG_GQA_SPILL;
	b |= (uint64_t)(k->operand_load == KLOAD_SWAP_K_HALVES) << BUG_LOAD_SWAP_K;
	b |= (uint64_t)(k->operand_load == KLOAD_UNSWIZZLED) << BUG_LOAD_UNSWIZZLED;
	b |= (uint64_t)(k->c_rows_interleaved != 0) << BUG_C_ROWS;
	/* pv8 */
	b |= (uint64_t)(k->p_regroup_none != 0) << BUG_P_REGROUP_NONE;
	b |= (uint64_t)(k->pv_group_max_per_tile != 0) << BUG_PV_GROUP_MAX;
	b |= (uint64_t)(k->v_scale_after_product != 0) << BUG_V_SCALE_APPLY;
	b |= (uint64_t)(k->p_scale_per_tile != 0) << BUG_P_SCALE_INDEX;
	b |= (uint64_t)(k->pv_rescale_missing != 0) << BUG_PV_RESCALE;
	return b;
}

/*
 * The "adjacent columns" belief (c_columns, tail_mask, transpose bugs):
 * a lane holding g entries of row m believes they are columns r*g ..
 * r*g + g-1, r its rank among the lanes holding row m (by the lowest
 * column each truly holds). On gfx936 lane L, accumulator e then means
 * column 4*(L/16) + e instead of L/16 + 4*e. -1 when the lanes holding a
 * row do not hold equal shares of it.
 */
/*
 * Slot s's share of its line of C (the entries with its key[]: its row,
 * for the column beliefs; its column, for the row belief): g entries of
 * the line in s's lane, s the idx-th of them by order[]; lanes lanes hold
 * entries of the line, s's lane the rank-th by its lowest order[]. 0, or
 * -1 when the lanes hold unequal shares of the line.
 */
static int line_share(const struct lanemap *lm, const int32_t *key, const int32_t *order,
		      int s, int *g, int *idx, int *rank, int *lanes)
{
	int W = lm->wave, EC = lm->op[LM_C].elems, L = s / EC, lo = INT32_MAX;

	*g = *idx = *rank = *lanes = 0;
	for (int e = 0; e < EC; e++) {
		int t = L * EC + e;

		if (key[t] != key[s])
			continue;
		(*g)++;
		*idx += order[t] < order[s];
		if (order[t] < lo)
			lo = order[t];
	}
	for (int L2 = 0; L2 < W; L2++) {
		int g2 = 0, lo2 = INT32_MAX;

		for (int e = 0; e < EC; e++) {
			int t = L2 * EC + e;

			if (key[t] == key[s]) {
				g2++;
				if (order[t] < lo2)
					lo2 = order[t];
			}
		}
		if (!g2)
			continue;
		if (g2 != *g)
			return -1;
		(*lanes)++;
		*rank += lo2 < lo;
	}
	return 0;
}

int kernel_contiguous_cols(const struct lanemap *lm, int *out)
{
	const struct lanemap_operand *oc = &lm->op[LM_C];

	for (int s = 0; s < lm->wave * oc->elems; s++) {
		int g, idx, rank, lanes;

		if (line_share(lm, oc->row, oc->col, s, &g, &idx, &rank, &lanes) ||
		    lanes * g != lm->n)
			return -1;
		out[s] = rank * g + idx;
	}
	return 0;
}

int kernel_contiguous_edges(const struct lanemap *lm, unsigned char *moved)
{
	const struct lanemap_operand *oc = &lm->op[LM_C];
	int slots = lm->wave * oc->elems, cc[LM_MAX_SLOTS];

	memset(moved, 0, (size_t)lm->n + 1);
	if (kernel_contiguous_cols(lm, cc))
		return -1;
	/* the keys truly past e and those believed past it differ: some slot
	 * is on one side of e and believed on the other */
	for (int s = 0; s < slots; s++)
		for (int e = 1; e < lm->n; e++)
			moved[e] |= (oc->col[s] < e) != (cc[s] < e);
	return 0;
}

int kernel_regroup_none_moves(const struct lanemap *lm, unsigned char *moved)
{
	return pv_regroup_none_moves(lm, moved);	/* pv_int8.c has the regroup */
}

/* Does the adjacent-columns belief differ from lm's columns? -1: it
 * cannot be held (unequal shares). */
static int contiguous_differs(const struct lanemap *lm)
{
	const struct lanemap_operand *oc = &lm->op[LM_C];
	int slots = lm->wave * oc->elems, *cc, differs = 0;

	cc = malloc((size_t)slots * sizeof(int));
	if (!cc)
		return 1;	/* try it: the emulation reports the memory */
	if (kernel_contiguous_cols(lm, cc)) {
		free(cc);
		return -1;
	}
	for (int s = 0; s < slots; s++)
		differs |= cc[s] != oc->col[s];
	free(cc);
	return differs;
}

/*
 * Does some query see no key of some split-K segment (split_merge
 * empty_nan, stale_lse)? Query t of sequence s is at q = history + t and
 * sees keys max(0, q - W + 1) .. q (W the sliding window, if any); the
 * segments are [i S, min((i + 1) S, context)). The first query misses
 * the last segment when it starts past q; with a window, the last query
 * misses segment 0 when it ends at or before its first key. Like the
 * split_merge rule, this reads the contexts: they fix the segments.
 */
static int some_segment_empty(const struct fs_case *c)
{
	for (int s = 0; s < c->n_seqs; s++) {
		const struct case_seq *q = &c->seqs[s];
		int nseg = case_segments_of(c, s), h = q->context - q->tokens;
		int last = h + q->tokens - 1, W = c->sliding_window;

		if (nseg <= 1 || q->tokens < 1)
			continue;
		if ((nseg - 1) * c->segment > h)
			return 1;
		if (W > 0 && c->segment <= last - W + 1)
			return 1;
	}
	return 0;
}

int kernel_unswizzled_chunk(int c, int n, int chunks)
{
	int w = 1;

	while (w < 8 && 2 * w <= chunks)
		w *= 2;
	if ((c & ~(w - 1)) + w > chunks)
		return c;	/* a last, partial group: not swizzled */
	return (c & ~(w - 1)) | ((c ^ n) & (w - 1));
}

int kernel_grid_head(int b, int G)
{
	return b % G * G + b / G;
}

/*
 * Does gqa_map value v change what case c computes? 1 yes, 0 no;
 * KGQA_GRID: -1 when a served head passes q_heads (cannot be expressed).
 */
static int kernel_gqa_differs(const struct fs_case *c, enum kern_gqa v)
{
	int G = case_group(c), Hq = c->q_heads, Hkv = c->kv_heads, missing = 0;

	if (v == KGQA_KV_DIVIDE) {
		if (c->mode == MODE_DECODE) {
			for (int g = 0; g < Hkv; g++)
				if (g * G / Hkv != g)
					return 1;
			return 0;
		}
		for (int h = 0; h < Hq; h++)
			if (h / Hkv != h / G)
				return 1;
		return 0;
	}
	for (int b = 0; b < Hq; b++)
		if (kernel_grid_head(b, G) >= Hq)
			return -1;
	for (int h = 0; h < Hq; h++) {
		int served = 0;

		for (int b = 0; b < Hq && !served; b++)
			served = kernel_grid_head(b, G) == h;
		missing += !served;
	}
	return missing > 0;
}

/* The interleaved belief for one slot s (kernel.h), or -1 when the lanes
 * holding its column hold unequal shares of it. */
static int interleaved_row(const struct lanemap *lm, int s)
{
	const struct lanemap_operand *oc = &lm->op[LM_C];
	int g, idx, rank, lanes;

	if (line_share(lm, oc->col, oc->row, s, &g, &idx, &rank, &lanes))
		return -1;
	return lanes * g == lm->m ? idx * lanes + rank : -1;
}

int kernel_interleaved_rows(const struct lanemap *lm, int *out)
{
	for (int s = 0; s < lm->wave * lm->op[LM_C].elems; s++)
		if ((out[s] = interleaved_row(lm, s)) < 0)
			return -1;
	return 0;
}

/* Does the interleaved-rows belief differ from lm's rows? -1: it cannot
 * be held (unequal shares). No allocation: the answer must not depend
 * on memory (diff's hypotheses are the same with any allocation failing). */
static int interleaved_differs(const struct lanemap *lm)
{
	const struct lanemap_operand *oc = &lm->op[LM_C];
	int differs = 0;

	for (int s = 0; s < lm->wave * oc->elems; s++) {
		int r = interleaved_row(lm, s);

		if (r < 0)
			return -1;
		differs |= r != oc->row[s];
	}
	return differs;
}

/*
 * Does the interleaved-rows belief move an accumulator into a row that
 * holds another query? It only decides which workspace row an
 * accumulator lands in, read with that row's query (Q scale, mask,
 * ALiBi). A slot moved to a padding row is masked there, as the slot it
 * displaced was; one moved to a row holding the same query (a decode
 * replica: rows r and b of a tile with r = b mod G) changes nothing. 0:
 * every moved slot is one of those in every row tile the case runs
 * (decode with G 1; prefill chunks of one token on CDNA3 and RDNA4,
 * whose row 0 the belief keeps), and the planted kernel gives the
 * correct bytes. Also 0 where the belief cannot be held or moves nothing.
 */
int kernel_interleaved_moves_read(const struct fs_case *c, const struct lanemap *lm)
{
	const struct lanemap_operand *oc = &lm->op[LM_C];
	int M = lm->m, G = case_group(c), decode = c->mode == MODE_DECODE;
	int rows = decode ? G : case_tokens_max(c);	/* rows a unit has */

	if (interleaved_differs(lm) != 1)
		return 0;
	for (int rt = 0; rt * M < rows; rt++)
		for (int s = 0; s < lm->wave * oc->elems; s++) {
			int r = rt * M + oc->row[s], b = rt * M + interleaved_row(lm, s);

			if (r == b)
				continue;
			if (!decode) {
				if (b < rows)	/* a query token of some sequence */
					return 1;
				continue;
			}
			if (c->decode_rows == ROWS_PACKED) {
				if (b >= G)	/* a zero row, masked */
					continue;
				if (r >= G)
					return 1;
			}
			if (r % G != b % G)
				return 1;
		}
	return 0;
}

/* Does some lane hold more than one entry of a C row (by_col 0) or of a
 * C column (by_col 1)? */
static int lane_holds_two(const struct lanemap *lm, int by_col)
{
	const struct lanemap_operand *oc = &lm->op[LM_C];
	const int32_t *x = by_col ? oc->col : oc->row;

	for (int L = 0; L < lm->wave; L++)
		for (int e = 0; e < oc->elems; e++)
			for (int f = e + 1; f < oc->elems; f++)
				if (x[L * oc->elems + e] == x[L * oc->elems + f])
					return 1;
	return 0;
}

long kernel_top_block(const struct fs_case *c)
{
	return (long)c->num_blocks - 1;
}

/*
 * pv_mask none shows as 0 * NaN: a masked slot's poison read as NaN. INT8
 * PV with V per_channel reads no key's scale: a masked key's Pq is 0, and
 * 0 times its byte (poison or not) is 0 in int32, bit for bit the correct
 * kernel. (f32 PV per_channel still reads NaN where a tile reaches past a
 * sequence's blocks; whether a suite has such a tile is its weakness, as
 * for any context that ends on a tile boundary.)
 */
static const char *pv_mask_na(const struct fs_case *c, char *buf, size_t len)
{
	if (c->pv_mode != PV_INT8 || c->v_dtype != VDT_INT8 ||
	    c->v_scale != VSCALE_PER_CHANNEL)
		return NULL;
	snprintf(buf, len, "v_scale per_channel, INT8 PV: a masked key's Pq is 0, and 0 times its poisoned byte is 0 in int32");
	return buf;
}

const char *kernel_bug_na(enum kern_bug b, const struct fs_case *c,
			  const struct lanemap *lm, char *buf, size_t len)
{
	int G = case_group(c);

	switch (b) {
	case BUG_C_COLUMNS:
	case BUG_TAIL_MASK:
	case BUG_TRANSPOSE:
		switch (contiguous_differs(lm)) {
		case 0:
			if (!lane_holds_two(lm, 0))
				snprintf(buf, len, "%s: a lane holds one entry of each C row (its accumulators are rows of one column): no column belief to get wrong",
					 lm->name);
			else
				snprintf(buf, len, "%s: a lane's accumulators already are adjacent columns",
					 lm->name);
			return buf;
		case -1:
			snprintf(buf, len, "%s: the lanes holding a C row hold unequal shares of it",
				 lm->name);
			return buf;
		}
		return NULL;
	case BUG_OPERAND_ORDER:
		if (lm->m == lm->n && lm->op[LM_A].type == lm->op[LM_B].type)
			return NULL;
		snprintf(buf, len, "%s: a %dx%d tile cannot swap its operands",
			 lm->name, lm->m, lm->n);
		return buf;
	case BUG_HEAD_DIM_LOADED:
		/* A kernel that loads half the dims issues the K-steps that
		 * cover them, the last zero-padded past them (as for a head_dim
		 * the instruction's K does not divide), so the class applies to
		 * every head_dim: half of the smallest, 16, is 8 dims. */
		return NULL;
	case BUG_K_SCALE_INDEX:
	case BUG_K_SCALE_FIRST:
		if (c->k_scale == KSCALE_PER_HEAD) {
			snprintf(buf, len, "k_scale per_head: every key of a kv head has the same scale");
			return buf;
		}
		if (c->k_scale != KSCALE_PER_TENSOR)
			return NULL;
		snprintf(buf, len, "k_scale per_tensor: every key has the same scale");
		return buf;
	case BUG_GQA_MAP:
		if (c->kv_heads > 1 && G > 1)
			return NULL;
		if (c->kv_heads == 1)
			snprintf(buf, len, "kv_heads 1: both maps give every q head kv head 0");
		else
			snprintf(buf, len, "GQA group of 1 (q_heads = kv_heads): both maps give q head h kv head h");
		return buf;
	case BUG_PAGE_WALK:
	case BUG_PAGE_IDENTITY:
		if (c->num_blocks > 1)
			return NULL;
		snprintf(buf, len, "the cache has one block: every walk reads block 0");
		return buf;
	case BUG_SPLIT_MERGE:
		if (case_segments_max(c) > 1)
			return NULL;
		snprintf(buf, len, "no context is cut into split-K segments");
		return buf;
	case BUG_SCALE_RECOVERY:
	case BUG_Q_POSITION:
	case BUG_SCALE_NO_K:
	case BUG_SCALE_NO_Q:
		return NULL;
	/* h-bugs-a */
	case BUG_PV_MASK:
		return pv_mask_na(c, buf, len);
	case BUG_MASK_FINITE:
	case BUG_Q_CHUNK_KEYS:
	case BUG_Q_TILE_ROUNDED:
		return NULL;
	case BUG_Q_FUTURE:
	case BUG_Q_OFF_BY_ONE:
		/* A query with a later key in its context: prefill, or decode
		 * of more than one token. One token is the sequence's last
		 * position (future moves nothing) and its key q + 1 is past
		 * the context (which masks it anyway): bit for bit correct. */
		for (int s = 0; s < c->n_seqs; s++)
			if (c->seqs[s].tokens > 1)
				return NULL;
		snprintf(buf, len, "one query token per sequence: it is the last position, key q + 1 is past the context");
		return buf;
	case BUG_MASK_ADDITIVE:
		/* A score is NaN only where a poisoned slot's own K scale is
		 * (NaN): a scale per tensor or per kv head is read at no slot. */
		if (c->k_scale != KSCALE_PER_TENSOR && c->k_scale != KSCALE_PER_HEAD)
			return NULL;
		snprintf(buf, len, "k_scale %s: no score is NaN, and s + -inf is -inf",
			 c->k_scale == KSCALE_PER_TENSOR ? "per_tensor" : "per_head");
		return buf;
	case BUG_WINDOW_INCLUSIVE:
	case BUG_WINDOW_EXCLUSIVE:
		if (c->sliding_window > 0)
			return NULL;
		snprintf(buf, len, "no sliding window");
		return buf;
	case BUG_CAP_DROPPED:
	case BUG_CAP_AFTER_MASK:
	case BUG_CAP_EXP_TANH:
		if (c->soft_cap > 0.0)
			return NULL;
		snprintf(buf, len, "no soft cap");
		return buf;
	case BUG_ALIBI_IGNORED:
	case BUG_ALIBI_SIGN:
	case BUG_ALIBI_NO_LOG2E:
	case BUG_ALIBI_OFFSET:
		if (c->alibi)
			return NULL;
		snprintf(buf, len, "no ALiBi");
		return buf;
	case BUG_EXP2_NO_LOG2E:
		return NULL;
	case BUG_MERGE_EMPTY_NAN:
	case BUG_MERGE_STALE_LSE:
		/* An empty segment needs a row that sees none of it: a decode
		 * query of one token sees every key of its context. */
		if (case_segments_max(c) <= 1) {
			snprintf(buf, len, "no context is cut into split-K segments");
			return buf;
		}
		if (some_segment_empty(c))
			return NULL;
		snprintf(buf, len, "every query sees a key of every split-K segment");
		return buf;
	/* h-bugs-c */
	case BUG_BLOCK_OFFSET:
		if (c->block_stride != 0 &&
		    (long)c->block_stride != (long)c->kv_heads * c->head_dim * c->block_size)
			return NULL;
		snprintf(buf, len, "the pool is dense: each block starts one block after the last");
		return buf;
	/* h-bugs-b */
	case BUG_K_SCALE_WALK:
	case BUG_V_PAGE_WALK:
		if (c->num_blocks <= 1) {
			snprintf(buf, len, "the cache has one block: every walk reads block 0");
			return buf;
		}
		if (b == BUG_K_SCALE_WALK && c->k_scale == KSCALE_PER_TENSOR) {
			snprintf(buf, len, "k_scale per_tensor: one scale, read at no block");
			return buf;
		}
		if (b == BUG_K_SCALE_WALK && c->k_scale == KSCALE_PER_HEAD) {
			snprintf(buf, len, "k_scale per_head: one scale a kv head, read at no block");
			return buf;
		}
		return NULL;
	case BUG_GQA_KV_DIVIDE:
		if (kernel_gqa_differs(c, KGQA_KV_DIVIDE))
			return NULL;
		snprintf(buf, len, "q head / kv_heads gives every work unit its own kv head (G %d, kv_heads %d, %s)",
			 G, c->kv_heads, c->mode == MODE_DECODE ? "decode" : "prefill");
		return buf;
	case BUG_GQA_GRID:
		if (c->mode == MODE_DECODE) {
			snprintf(buf, len, "decode: a work unit serves a kv head's group, not one q head");
			return buf;
		}
		switch (kernel_gqa_differs(c, KGQA_GRID)) {
		case 0:
			snprintf(buf, len, "G %d, kv_heads %d: (b %% G)*G + b / G serves every q head once",
				 G, c->kv_heads);
			return buf;
		case -1:
			snprintf(buf, len, "G %d > kv_heads %d: (b %% G)*G + b / G passes q_heads, writes outside out",
				 G, c->kv_heads);
			return buf;
		}
		return NULL;
	case BUG_C_ROWS:
		switch (interleaved_differs(lm)) {
		case 0:
			if (!lane_holds_two(lm, 1))
				snprintf(buf, len, "%s: a lane holds one entry of each C column (its accumulators are columns of one row): no row belief to get wrong",
					 lm->name);
			else
				snprintf(buf, len, "%s: a lane's accumulators of a column already are rows strided by the lane count",
					 lm->name);
			return buf;
		case -1:
			snprintf(buf, len, "%s: the lanes holding a C column hold unequal shares of it",
				 lm->name);
			return buf;
		}
		/* Decode rows are the model's (its group), so a belief that
		 * moves no row holding another q head can never show; in a
		 * prefill that is the suite's chunks (mutate's needs). */
		if (c->mode != MODE_DECODE || kernel_interleaved_moves_read(c, lm))
			return NULL;
		snprintf(buf, len, "%s, decode, G %d: every row the belief moves holds the same q head as the row it takes, or a zero row",
			 lm->name, G);
		return buf;
	case BUG_GQA_SPILL:
		if (c->mode != MODE_DECODE) {
			snprintf(buf, len, "prefill: a row tile holds one q head's tokens");
			return buf;
		}
		for (int h = 0; h < c->q_heads; h++)
			if (h / G != h / lm->m * lm->m / G)
				return NULL;
		/* Every tile in one group: the kv heads are right, but a tile
		 * past the group's last head (G % M != 0) holds zero rows
		 * where the replicated layout holds replicas: the spilling
		 * kernel is a packed-rows one, and its acc shows it. */
		if (G % lm->m && c->decode_rows != ROWS_PACKED)
			return NULL;
		snprintf(buf, len, "%s: every tile of %d consecutive q heads lies in one group (G %d, kv_heads %d)%s",
			 lm->name, lm->m, G, c->kv_heads,
			 G % lm->m ? ", and rows past the group are zero, as decode_rows packed has them" : "");
		return buf;
	case BUG_LOAD_SWAP_K:
		return NULL;
	case BUG_LOAD_UNSWIZZLED:
		if (c->head_dim / 16 >= 2)
			return NULL;
		snprintf(buf, len, "head_dim %d: one 16-byte chunk a row, nothing to swizzle",
			 c->head_dim);
		return buf;
	case BUG_BLOCK_SIZE:
		if (c->block_size != 16)
			return NULL;
		snprintf(buf, len, "block_size 16: the size the kernel assumes");
		return buf;
	/* pv8: the second product's classes need it in INT8 */
	case BUG_P_REGROUP_NONE:
	case BUG_PV_GROUP_MAX:
	case BUG_V_SCALE_APPLY:
	case BUG_P_SCALE_INDEX:
	case BUG_PV_RESCALE:
		return pv_bug_na(b, c, lm, buf, len);
	case BUG_BLOCK_OFFSET_INT32: {
		long top = kernel_top_block(c);
		double blk = c->block_stride ? (double)c->block_stride :
			     (double)c->kv_heads * c->head_dim * c->block_size;
		/* the widest of the block's strides in bytes: float V's, K's
		 * and int8 V's, or the scales' (per_block32 f16 per 32 dims) */
		double per = blk * (case_v_bytes(c->v_dtype) ? 1.0 : 4.0);
		double ks = (double)c->block_size * c->kv_heads *
			    (c->k_scale == KSCALE_PER_BLOCK32 ? c->head_dim / 32 * 2.0 : 4.0);

		if (ks > per)
			per = ks;
		if ((double)top * per > 2147483647.0)
			return NULL;
		snprintf(buf, len, "no pool past 2 GiB: every block starts below 2^31 bytes");
		return buf;
	}
	case BUG_BLOCK_OFFSET_U16:
		if (kernel_top_block(c) > 65535)
			return NULL;
		snprintf(buf, len, "no pool past 65,536 blocks: every block id fits 16 bits");
		return buf;
	case BUG_COUNT:
		break;
	}
	snprintf(buf, len, "not a bug class");
	return buf;
}
