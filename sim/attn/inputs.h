/*
 * inputs.h - the tensors of one run: logical data (generated or given),
 * its quantization, and the paged INT8 caches (docs/design.md 3.2 layouts).
 *
 *   k_cache [NB][Hkv][D/16][BS][16] int8: K[token][h][d] of sequence s is
 *           at block = block_table[s][token / BS], slot = token % BS,
 *           [block][h][d / 16][slot][d % 16]
 *   v_cache [NB][Hkv][D][BS]: int8 with v_scale [NB][BS][Hkv] (or, with
 *           cache.v_scale per_channel, v_scale_ch [Hkv][D]), or float;
 *           q8_0 and q4_0 (llama.cpp's blocks, quant.h): one byte an
 *           element, v_scale16 [NB][BS][Hkv][D/32] f16 per 32 dims
 *
 * With cache.block_stride, block b of k_cache and v_cache starts at
 * element b * BSTR instead of b * Hkv * D * BS (padded pages, or K and V
 * interleaved in one pool); the elements between one block's end and the
 * next block's start are poison too. The scales stay dense.
 *
 * Slots and blocks no sequence uses are poisoned (INPUTS_POISON in the
 * int8 caches, NaN in scales and float caches), and block-table entries
 * past a sequence's blocks are -1, so a read past a context's end shows.
 * With cache.window_blocks free the blocks behind the sliding window are
 * -1 too, their blocks never written (inputs_blocks_freed).
 *
 * A sparse pool (inputs_pool_sparse: past INPUTS_DENSE_BLOCKS blocks or
 * INPUTS_DENSE_POOL_BYTES of caches, and mostly, or by that many bytes,
 * named by no table) holds only the blocks a block table names: NM of
 * them, pool_blocks[m] the physical id of stored block m, ascending.
 * Every cache and scale array is then [NM][...] with stored block m
 * where physical block pool_blocks[m] would be; the NB - NM
 * blocks no table names are poison and cost no memory (a device's pool
 * of millions of blocks, a few of them at the far end). A dense pool has
 * NM = NB and pool_blocks NULL: stored block m is physical block m.
 * inputs_block_at maps a physical block to its stored one.
 */
#ifndef INPUTS_H
#define INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "case.h"
#include "../common/fs.h"

#define INPUTS_POISON ((int8_t)-128)	/* never produced by the quantizer */

struct fs_inputs {
	int S, T, Hq, Hkv, D, BS, NB, MAXB, MAXCTX;
	int NM;			/* blocks stored: NB, or those the tables name */
	int32_t *pool_blocks;	/* sparse pool: [NM] physical ids, ascending;
				 * NULL for a dense pool */
	size_t BSTR;		/* cache.block_stride; 0 = dense (inputs_block_elems) */

	/* Logical, BF16-rounded values (rows past a context are 0). */
	float *q;		/* [S][T][Hq][D] */
	float *k;		/* [S][MAXCTX][Hkv][D] */
	float *v;		/* [S][MAXCTX][Hkv][D] */

	int8_t *q_int8;		/* [S][T][Hq][D] */
	float *q_scale;		/* [S][T][Hq] */

	/* [NB] below is [NM] for a sparse pool (stored blocks) */
	int8_t *k_cache;	/* [NB][Hkv][D/16][BS][16] */
	float *k_scale;		/* per_token_head [NB][BS][Hkv]; per_tensor [1];
				 * per_head [Hkv] */
	uint16_t *k_scale16;	/* per_block32: f16 bits [NB][BS][Hkv][D/32] */

	int8_t *v_cache_i8;	/* int8 V: [NB][Hkv][D][BS]; q8_0 (-127..127)
				 * and q4_0 (0..15, offset 8) the same */
	float *v_scale;		/* int8 V: [NB][BS][Hkv]; NULL per_channel */
	float *v_scale_ch;	/* int8 V per_channel: [Hkv][D], static (no
				 * block, so nothing in it is poison) */
	uint16_t *v_scale16;	/* q8_0, q4_0: f16 bits [NB][BS][Hkv][D/32] */
	float *v_cache_f;	/* bf16/f32 V: [NB][Hkv][D][BS] (bf16 values rounded) */

	int32_t *block_table;	/* [S][MAXB], -1 past a sequence's blocks */
	int32_t *context_lens;	/* [S] */
	int32_t *q_pos;		/* [S][T], -1 for t >= T_s */
};

/*
 * Logical inputs given by the caller instead of generated (NULL fields
 * are generated): f32 arrays in the logical layouts above, e.g. loaded
 * from .npy by lib/. Values are BF16-rounded on the way in.
 */
struct inputs_given {
	const float *q, *k, *v;
	/* 1: build the caches without keeping the logical K and V (in->k and
	 * in->v stay NULL); an emulation alone never reads them, and at long
	 * contexts they are most of the memory (f32, 4x the int8 caches). */
	int caches_only;
};

/*
 * Build every tensor for case c. Sizes are overflow-checked against
 * INPUTS_MAX_BYTES; failure is FS_EBUDGET (over it), FS_EINPUT (a shape
 * or block table inputs cannot lay out) or FS_ENOMEM with
 * nothing left allocated and *in zeroed.
 */
/* Head-dim elements per K chunk: k_cache is [NB][Hkv][D/16][BS][16], so
 * one token's 16 consecutive dims are 16 bytes, one 128-bit load. */
#define INPUTS_K_CHUNK 16

#define INPUTS_MAX_BYTES ((size_t)16 << 30)

/* A pool is stored sparse past either limit, 65,536 blocks (a 16-bit
 * block id's reach) or 256 MiB of dense caches and scales (which no
 * shipped case before sparse pools came near: their goldens keep their
 * dense bytes), when the blocks its tables leave unnamed are most of it
 * or past 256 MiB themselves (inputs_pool_sparse). */
#define INPUTS_DENSE_BLOCKS 65536
#define INPUTS_DENSE_POOL_BYTES ((double)(256u << 20))

/*
 * cache.window_blocks free: the leading blocks of sequence s wholly
 * behind the sliding window of its first query (so of every query), as
 * vLLM frees them. Their block-table entries are -1 and nothing is
 * written to them; the placement still hands out their ids, so the
 * other blocks sit where they would with `keep`. First query at
 * position p, window W: keys j <= p - W are behind, so (p - W + 1) / BS
 * blocks (0 when that is not positive, or without free). Example: BS 8,
 * W 25, decode context 100 (p 99): keys 0..74 are behind, blocks 0..8
 * (keys 0..71) are freed, block 9 (72..79) holds keys still seen.
 */
int inputs_blocks_freed(const struct fs_case *c, int s);

/* 1 when case c's pool is stored sparse (inputs.h, top), else 0. */
int inputs_pool_sparse(const struct fs_case *c);
/* Blocks case c's pool stores: num_blocks, or for a sparse pool the
 * blocks its tables name, freed ones (window_blocks) not counted (what
 * a memory estimate counts). */
int inputs_pool_stored(const struct fs_case *c);
enum fs_rc inputs_build(const struct fs_case *c, const struct inputs_given *g,
			struct fs_inputs *in, struct fs_err *err);
void inputs_free(struct fs_inputs *in);

/* Elements from one block's start to the next in k_cache and v_cache:
 * BSTR, or Hkv * D * BS when it is 0 (dense). */
static inline size_t inputs_block_elems(const struct fs_inputs *in)
{
	return in->BSTR ? in->BSTR : (size_t)in->Hkv * (size_t)in->D * (size_t)in->BS;
}

/*
 * The stored block of physical block p (an index into the [NM] arrays),
 * or -1 when p is outside the pool or a sparse pool does not store it
 * (its every element is poison). A binary search of pool_blocks.
 */
static inline int inputs_block_at(const struct fs_inputs *in, long p)
{
	int lo = 0, hi;

	if (p < 0 || p >= in->NB)
		return -1;
	if (!in->pool_blocks)
		return (int)p;
	hi = in->NM;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (in->pool_blocks[mid] < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < in->NM && in->pool_blocks[lo] == p ? lo : -1;
}

/*
 * Elements d0 .. d0 + n - 1 of the logical K (which 0) or V (which 1)
 * row of sequence s, key j < its context, kv head h: a pointer into the
 * kept in->k / in->v, or, when only the caches were built, the row made
 * again into buf[n] (the same bits: generation is a pure function of the
 * row, docs/generator.md). A given K or V is always kept. For the
 * reference, which then needs no f32 copy of K and V (4x the caches).
 */
const float *inputs_kv_row(const struct fs_case *c, const struct fs_inputs *in,
			   int which, int s, int j, int h, int d0, int n, float *buf);

/*
 * The same rows for a reader of many of them (the reference, which makes
 * every K and V row again once or more per pass): what all rows of a
 * tensor share, the per-channel multipliers and the stream's key, worked
 * out once by inputs_kv_init, and the row keys of a run of keys made
 * together by inputs_kv_keys (two splitmix rounds a row, independent, so
 * that they overlap), instead of all of it at every call of
 * inputs_kv_row (its 256-float multiplier table and eight rounds cost
 * more than the 32 values of a PV slice). inputs_kv_get(kv, keys[i], s,
 * j0 + i, h, d0, n, buf) is inputs_kv_row(c, in, which, s, j0 + i, h,
 * d0, n, buf), the same bits. A kept (or given) tensor is read in place
 * and the keys are not used.
 */
struct inputs_kv {
	const struct fs_case *c;
	const struct fs_inputs *in;
	const float *kept;		/* in->k or in->v, or NULL: made again */
	const struct case_tensor *spec;
	int dist;			/* enum gen_dist */
	uint64_t key;			/* gen_key(seed, stream) */
	float mult[CASE_MAX_HEAD_DIM];	/* the outlier channels' multipliers */
};

void inputs_kv_init(struct inputs_kv *kv, const struct fs_case *c,
		    const struct fs_inputs *in, int which);
/* keys[i]: the row key of key j0 + i of sequence s, kv head h, i < n. */
void inputs_kv_keys(const struct inputs_kv *kv, int s, int j0, int n, int h,
		    uint64_t *keys);
const float *inputs_kv_get(const struct inputs_kv *kv, uint64_t key, int s,
			   int j, int h, int d0, int n, float *buf);

/*
 * Dequantized K scale of (physical block, slot, kv head) for head-dim
 * element d. A block or slot outside the pool, or a block a sparse pool
 * does not store, (a buggy kernel's walk) reads as a
 * poisoned slot: NaN, or the one scale of a per_tensor case (of head h
 * in a per_head one: a static scale does not depend on the block).
 */
float inputs_k_scale(const struct fs_case *c, const struct fs_inputs *in,
		     int block, int slot, int h, int d);

#endif
