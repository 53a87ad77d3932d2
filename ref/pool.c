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

#include <math.h>

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

/* An fp16 as a double: (1024 + m) 2^(e - 25), subnormals m 2^-24. */
static double pool_f16(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	double v = e == 31 ? (m ? NAN : INFINITY) :
		   e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);

	return h & 0x8000 ? -v : v;
}

double ref_pool_vq(const struct fs_case *c, const struct fs_inputs *in,
		   size_t at, size_t ts, int d)
{
	int q = in->v_cache_i8[at] - (c->v_dtype == VDT_Q4_0 ? 8 : 0);

	return q * pool_f16(in->v_scale16[ts * (size_t)(in->D / 32) + (size_t)d / 32]);
}
