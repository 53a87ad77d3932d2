/*
 * pool.h - the reference's own reading of a sparse pool (sim/attn/inputs.h):
 * where a physical block's bytes are stored, written from that layout and
 * not from sim/'s lookup (inputs_block_at), so a fault in one cannot hide
 * in both sides of a comparison.
 */
#ifndef REF_POOL_H
#define REF_POOL_H

#include "../sim/attn/inputs.h"

/*
 * The row of the stored arrays ([NM][...]) that holds physical block
 * blk: blk itself for a dense pool (pool_blocks NULL), else its position
 * in the ascending pool_blocks. -1 when no row holds it; the reference
 * asks only for blocks its tables name, which a correct input stores.
 */
int ref_pool_row(const struct fs_inputs *in, int blk);

/*
 * 1 when key j of sequence s (j < its context) lies in a block that
 * cache.window_blocks free unmapped: its table entry is -1. The correct
 * kernel never reads such a block: the key loads 0, so its accumulator
 * is 0 (docs/design.md, freed blocks); it is behind every query's window.
 */
int ref_pool_freed(const struct fs_inputs *in, int s, int j);

/*
 * q8_0 or q4_0 V (llama.cpp's blocks, one byte an element, q4_0's 0..15
 * with offset 8), dequantized here in double: the byte at v_cache element
 * `at` less its offset, times the fp16 scale of its block of 32 dims,
 * v_scale16[ts][d / 32] with ts = (blk * BS + slot) * Hkv + g, decoded by
 * this file (not by sim's quant.c). Exact: a small integer times an fp16.
 */
double ref_pool_vq(const struct fs_case *c, const struct fs_inputs *in,
		   size_t at, size_t ts, int d);

#endif
