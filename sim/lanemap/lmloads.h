/*
 * lmloads.h - a lane map composed with a memory layout: for one K-step,
 * where in memory each lane's fragment comes from, and how many vector
 * loads it takes.
 *
 * A K cache layout names the order of a block's factors, outermost
 * first, as in `[NB, Hkv, D/16, BS, 16]` (the shipped paged cache: dims
 * in groups of 16, a group's 16 bytes per token contiguous). The byte of
 * (kv head h, token t of the block, dim d) then sits at a row-major
 * offset inside block b. The B operand of the instruction is K^T (k =
 * dim within the K-step, n = key), so lane l's element e of B is byte
 * offset(h, key n, dim s*K + k) of the block that holds key n.
 *
 *   gfx936 B: lane = n + 16*(k/8), element = k % 8
 *   layout [NB, Hkv, D/16, BS, 16], BS 16, K-step 0, head 0:
 *     lane  0: key 0, dims 0..7  -> bytes +0..+7      one 8-byte load
 *     lane 16: key 0, dims 8..15 -> bytes +8..+15     one 8-byte load
 *     lane 32: key 0, dims 16..23 -> bytes +256..+263 one 8-byte load
 *
 * A run is a stretch of a lane's elements, in element (register) order,
 * at consecutive addresses of one block; a run costs as many loads as it
 * has aligned power-of-two pieces of at most LML_MAX_LOAD bytes (an
 * 8-byte run at +4 is two 4-byte loads). Q (the A operand) is read the
 * same way from its layout: [T, Hq, D], one token's heads and dims.
 */
#ifndef LMLOADS_H
#define LMLOADS_H

#include <stdint.h>

#include "../common/fs.h"
#include "lanemap.h"

#define LML_MAX_FACTORS 8
#define LML_MAX_LOAD 16		/* bytes: the widest vector load (b128) */

/* What a layout factor indexes. */
enum lml_axis {
	LML_BLOCK,	/* NB: physical block (outermost, once) */
	LML_HEAD,	/* Hkv */
	LML_TOKEN,	/* BS: token within the block */
	LML_DIM,	/* D: the whole dim */
	LML_DIM_HI,	/* D/n: dim / n */
	LML_DIM_LO,	/* n: dim % n, after a D/n */
};

struct lml_layout {
	char text[96];		/* as given, normalised: "[NB, Hkv, D/16, BS, 16]" */
	int n;			/* factors, NB first */
	enum lml_axis axis[LML_MAX_FACTORS];
	int split;		/* n of D/n, 0 when D is whole */
	int hkv, bs, d;		/* the sizes the layout was built for */
};

/*
 * Parse a K cache layout: a name (`paged16` = [NB, Hkv, D/16, BS, 16],
 * `nhd` = [NB, BS, Hkv, D], `hnd` = [NB, Hkv, BS, D]) or a bracketed
 * list of NB, Hkv, BS, D, or D/n with its n. Each axis exactly once, NB
 * first; n must divide d. FS_EINPUT with a message naming the token.
 */
enum fs_rc lml_parse(const char *s, int hkv, int bs, int d,
		     struct lml_layout *out, struct fs_err *err);

/* Byte offset of (head h, token t, dim d) inside one block. */
int64_t lml_offset(const struct lml_layout *l, int h, int t, int d);

/* One run: elements e0..e0+ne-1 at bytes off..off+bytes-1 of block. */
struct lml_run {
	int e0, ne;
	int block;		/* logical block of the tile's keys (K); 0 for Q */
	int64_t off;
	int bytes;
	int loads;		/* aligned pieces of <= LML_MAX_LOAD bytes */
	int key, dim;		/* what its first element holds */
};

struct lml_lane {
	int nrun;
	struct lml_run run[LM_MAX_ELEMS];
	int loads;		/* sum over runs */
	int padded;		/* elements past head_dim: zeros, no load */
};

/* A whole fragment, one record per lane, and its totals. */
struct lml_frag {
	int lanes, elems, size;	/* size: bytes per element */
	struct lml_lane lane[LM_MAX_LANES];
	int loads;		/* over all lanes */
	int widest;		/* bytes of the widest piece */
	int lanes_one_load;	/* lanes whose whole fragment is one load */
};

/*
 * B (K) of K-step `step` for kv head `head`, the tile's keys starting at
 * key 0 of logical block 0 (a key n lies in block n / bs at token n % bs).
 * FS_EINPUT when the map's B is not K x N int8-like (1-byte elements),
 * or when head or step are out of range.
 */
enum fs_rc lml_k_frag(const struct lanemap *lm, const struct lml_layout *l,
		      int head, int step, struct lml_frag *out,
		      struct fs_err *err);

/*
 * A (Q) of K-step `step` from a Q laid out [T, Hq, D] (one token's heads
 * then dims). decode: row m is q head `head*group + m` of one token
 * (rows past the group hold nothing); prefill: row m is token m of q head
 * `head`. Offsets are from the first row's token.
 */
enum fs_rc lml_q_frag(const struct lanemap *lm, int q_heads, int d,
		      int group, int prefill, int head, int step,
		      struct lml_frag *out, struct fs_err *err);

#endif
