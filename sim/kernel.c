/*
 * kernel.c - the kernel's assumptions and the bug class table (kernel.h).
 * The table is the one place a bug class is named: the case schema,
 * fragsim mutate, fragsim diff and README.md all use these spellings.
 */
#include "kernel.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"

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
		"logical block used as the physical one: the block table is ignored" },
	[BUG_TRANSPOSE] = { "transpose", "profile", "none",
		"workspace written in register order, without the 4x4 transpose" },
	[BUG_Q_POSITION] = { "q_position", "absolute", "chunk",
		"causal mask compares keys with the chunk-local query index" },
	[BUG_SPLIT_MERGE] = { "split_merge", "rescale", "no_rescale",
		"split-K partials summed without the e^(m_i - m) weights" },
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
	case BUG_SCALE_RECOVERY: k->scale_after_softmax = 1; return 0;
	case BUG_K_SCALE_INDEX: k->k_scale_per_tile = 1; return 0;
	case BUG_GQA_MAP: k->gqa_modulo = 1; return 0;
	case BUG_TAIL_MASK: k->tail_mask = KCOLS_CONTIGUOUS; return 0;
	case BUG_PAGE_WALK: k->page_walk_none = 1; return 0;
	case BUG_TRANSPOSE: k->transpose = KCOLS_CONTIGUOUS; return 0;
	case BUG_Q_POSITION: k->q_pos_chunk = 1; return 0;
	case BUG_SPLIT_MERGE: k->merge_no_rescale = 1; return 0;
	case BUG_COUNT: break;
	}
	return -1;
}

unsigned kernel_bugs(const struct fs_kernel *k, int head_dim)
{
	unsigned b = 0;

	b |= (unsigned)(k->c_columns != KCOLS_PROFILE) << BUG_C_COLUMNS;
	b |= (unsigned)(k->operand_kq != 0) << BUG_OPERAND_ORDER;
	b |= (unsigned)(k->head_dim_loaded > 0 && k->head_dim_loaded < head_dim)
	     << BUG_HEAD_DIM_LOADED;
	b |= (unsigned)(k->scale_after_softmax != 0) << BUG_SCALE_RECOVERY;
	b |= (unsigned)(k->k_scale_per_tile != 0) << BUG_K_SCALE_INDEX;
	b |= (unsigned)(k->gqa_modulo != 0) << BUG_GQA_MAP;
	b |= (unsigned)(k->tail_mask != KCOLS_PROFILE) << BUG_TAIL_MASK;
	b |= (unsigned)(k->page_walk_none != 0) << BUG_PAGE_WALK;
	b |= (unsigned)(k->transpose != KCOLS_PROFILE) << BUG_TRANSPOSE;
	b |= (unsigned)(k->q_pos_chunk != 0) << BUG_Q_POSITION;
	b |= (unsigned)(k->merge_no_rescale != 0) << BUG_SPLIT_MERGE;
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
int kernel_contiguous_cols(const struct lanemap *lm, int *out)
{
	const struct lanemap_operand *oc = &lm->op[LM_C];
	int W = lm->wave, EC = oc->elems;

	for (int s = 0; s < W * EC; s++) {
		int L = s / EC, m = oc->row[s], g = 0, idx = 0, lo = INT32_MAX;
		int rank = 0, lanes = 0;

		for (int e = 0; e < EC; e++) {
			int t = L * EC + e;

			if (oc->row[t] != m)
				continue;
			g++;
			idx += oc->col[t] < oc->col[s];
			if (oc->col[t] < lo)
				lo = oc->col[t];
		}
		for (int L2 = 0; L2 < W; L2++) {
			int g2 = 0, lo2 = INT32_MAX;

			for (int e = 0; e < EC; e++) {
				int t = L2 * EC + e;

				if (oc->row[t] == m) {
					g2++;
					if (oc->col[t] < lo2)
						lo2 = oc->col[t];
				}
			}
			if (!g2)
				continue;
			if (g2 != g)
				return -1;
			lanes++;
			rank += lo2 < lo;
		}
		if (lanes * g != lm->n)
			return -1;
		out[s] = rank * g + idx;
	}
	return 0;
}

int kernel_bug_applies(enum kern_bug b, const struct lanemap *lm, int segments)
{
	const struct lanemap_operand *oc = &lm->op[LM_C];
	int slots = lm->wave * oc->elems, *cc, differs = 0;

	switch (b) {
	case BUG_C_COLUMNS:
	case BUG_TAIL_MASK:
	case BUG_TRANSPOSE:
		cc = malloc((size_t)slots * sizeof(int));
		if (!cc || kernel_contiguous_cols(lm, cc)) {
			free(cc);
			return 0;
		}
		for (int s = 0; s < slots; s++)
			differs |= cc[s] != oc->col[s];
		free(cc);
		return differs;
	case BUG_OPERAND_ORDER:
		return lm->m == lm->n && lm->op[LM_A].type == lm->op[LM_B].type;
	case BUG_SPLIT_MERGE:
		return segments > 1;
	default:
		return (unsigned)b < BUG_COUNT;
	}
}
