/*
 * pool.c - the stored row of a physical block (pool.h).
 *
 * A sparse pool keeps only the blocks the tables name, ascending in
 * pool_blocks: pool_blocks = {7, 4194300} puts physical block 4194300 in
 * row 1 of k_cache [2][Hkv][D/16][BS][16], of the scales and of v_cache.
 * Found by halving [lo, hi] on the sorted ids (the reference's own
 * search; sim/ has another).
 */
#include "pool.h"

int ref_pool_freed(const struct fs_inputs *in, int s, int j)
{
	return in->block_table[(size_t)s * in->MAXB + j / in->BS] < 0;
}

int ref_pool_row(const struct fs_inputs *in, int blk)
{
	long lo = 0, hi = (long)in->NM - 1;

	if (blk < 0 || blk >= in->NB)
		return -1;
	if (!in->pool_blocks)
		return blk;
	while (lo <= hi) {
		long mid = (lo + hi) / 2;
		int32_t id = in->pool_blocks[mid];

		if (id == blk)
			return (int)mid;
		if (id < blk)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}
