/*
 * qk_frag.h - a lane's A (Q) and B (K) fragment for one K-step, as the
 * kernel loads it: 8 bytes packed little endian, element e in byte e
 * (register e / 4, byte e % 4). Shared by hip/attn_mmac.hip and
 * qk_cpu.c, so the CPU harness that make test runs checks the very
 * address arithmetic the device runs.
 *
 * When the lane map gives a lane 8 adjacent head-dim elements of one
 * query row (A) or one key (B), starting at a multiple of 8 - true of
 * gfx936 and CDNA3, whose lane L holds k = 8 * (L / 16) + e - the
 * fragment is one 8-byte load: from the quantized Q, or straight from
 * the paged cache, where the 8 dims sit inside one 16-dim chunk of one
 * key. Otherwise it is gathered byte by byte.
 *
 * The includer defines LM(x) (the generated lane map's functions), K,
 * W, EA and EB, and includes qk_tile.h first.
 */
#ifndef FRAGSIM_QK_FRAG_H
#define FRAGSIM_QK_FRAG_H

#include <string.h>

struct fsq_frag_flags {
	int a_adjacent, b_adjacent;
};

/* Are the 8-byte loads valid for this map? (Once, on the host.) */
static inline struct fsq_frag_flags fsq_frag_flags_of(void)
{
	struct fsq_frag_flags f = { EA == 8, EB == 8 };

	for (int l = 0; l < W; l++)
		for (int e = 0; e < 8 && (f.a_adjacent || f.b_adjacent); e++) {
			f.a_adjacent &= LM(a_row)(l, e) == LM(a_row)(l, 0) &&
					LM(a_col)(l, e) == LM(a_col)(l, 0) + e &&
					LM(a_col)(l, 0) % 8 == 0;
			f.b_adjacent &= LM(b_col)(l, e) == LM(b_col)(l, 0) &&
					LM(b_row)(l, e) == LM(b_row)(l, 0) + e &&
					LM(b_row)(l, 0) % 8 == 0;
		}
	return f;
}

/* 8 bytes at p (8-aligned by construction: D and 16-dim chunks). */
FSQ_HD int64_t fsq_load8(const int8_t *p)
{
#if defined(__HIP_DEVICE_COMPILE__) || defined(__CUDA_ARCH__)
	return *(const int64_t *)p;
#else
	int64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
#endif
}

FSQ_HD int64_t fsq_load_a(const struct fsq_case *c, const struct fsq_bufs *b,
			  int tile, int lane, int ks, struct fsq_frag_flags fl)
{
	int64_t v = 0;

	if (fl.a_adjacent) {
		struct fsq_row r = fsq_row_of(c, b, tile, LM(a_row)(lane, 0));

		/* 8 dims past head_dim: the last K-step's zero padding */
		if (r.valid && ks * K + LM(a_col)(lane, 0) < c->D)
			v = fsq_load8(&b->q_int8[(((long)r.s * c->T + r.t) * c->Hq + r.qh) *
						 c->D + ks * K + LM(a_col)(lane, 0)]);
		return v;
	}
	for (int e = 0; e < EA; e++) {
		struct fsq_row r = fsq_row_of(c, b, tile, LM(a_row)(lane, e));

		v |= (int64_t)(uint8_t)fsq_q(c, b, &r, ks * K + LM(a_col)(lane, e)) << (8 * e);
	}
	return v;
}

FSQ_HD int64_t fsq_load_b(const struct fsq_case *c, const struct fsq_bufs *b,
			  int tile, int lane, int ks, struct fsq_frag_flags fl)
{
	int s = b->tiles[tile * FSQ_TILE_COLS], kb = b->tiles[tile * FSQ_TILE_COLS + 3];
	int g = fsq_row_of(c, b, tile, 0).g;
	int64_t v = 0;

	if (fl.b_adjacent) {
		int key = kb + LM(b_col)(lane, 0), dim = ks * K + LM(b_row)(lane, 0);

		if (!fsq_key_loadable(c, b, s, key) || dim >= c->D ||
		    ((c->bugs & FSQ_BUG_HEAD_DIM_HALF) && dim >= c->D / 2))
			return 0;
		return fsq_load8(b->k_cache +
				 fsq_k_offset(c, fsq_block(c, b, s, key), g, key, dim));
	}
	for (int e = 0; e < EB; e++)
		v |= (int64_t)(uint8_t)fsq_k(c, b, s, g, kb + LM(b_col)(lane, e),
					     ks * K + LM(b_row)(lane, e)) << (8 * e);
	return v;
}

#endif
