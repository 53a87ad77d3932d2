/*
 * attn_int.h - what the two executors of the emulated kernel share: the
 * kernel's tables, work units, rows, per-row softmax state and the
 * helpers that define the data layout (block walk, K/V scales, the
 * split-K merge), defined in attn_common.c. Private to sim/attn/attn*.c:
 *   attn_common.c  these helpers
 *   attn_spec.c    the scalar per-lane executor, the specification
 *   attn_fast.c    the fast executor
 *   attn.c         the driver: checks, tables, work units, threads
 * docs/design-sim.md draws the order; nothing here calls upward.
 */
#ifndef ATTN_INT_H
#define ATTN_INT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "attn.h"
#include "case.h"
#include "../common/fexp.h"
#include "inputs.h"
#include "kernel.h"
#include "../lanemap/lanemap.h"
#include "logit.h"
#include "pv_int8.h"
#include "quant.h"
#include "tile_fast.h"	/* struct tile_order */

#define ATTN_MAX_SEGMENTS 1024	/* split-K segments per context */

struct kern {
	const struct fs_case *c;
	const struct fs_kernel *kn;	/* the kernel's assumptions */
	const struct lanemap *lm;	/* the kernel's map: loads and C reads */
	const struct lanemap *hw;	/* the map the hardware executes */
	const struct fs_inputs *in;
	struct attn_result *r;
	int M, N, K, W, EA, EB, EC, ksteps, G, D, BS, MAXB, Hq, Hkv, T, MAXCTX;
	/* The block size the kernel's address arithmetic uses: BS, or
	 * kernel: block_size_assumed. Every block, slot and offset below is
	 * computed with it; the tensors keep their true shapes (BS). */
	int KBS;
	int per_block32;
	int dims;		/* head-dim elements loaded: D, or head_dim_loaded */
	int ksteps_run;		/* K-steps the kernel issues: ceil(dims / K) */
	/* Slots of each C row in slot order: rowslots[m*rowcap + i]. */
	int *rowslots, *rowcount, rowcap;
	/* The C column the kernel believes each slot holds, per use. */
	const int *col_scale, *col_mask, *col_write;
	int *col_contig;	/* the "adjacent columns" belief, when used */
	/* The C row the kernel believes each slot holds: the profile's, or
	 * row_inter (c_rows interleaved, kernel_interleaved_rows). */
	const int *row_read;
	int *row_inter;
	int *seq_block0;	/* page_walk none: first block of each sequence */
	/* Soft cap and ALiBi (logit.h), applied to every visible score. */
	struct logit_mod lmod;
	/* Fast path: the slot order of every C row, when they share one. */
	struct tile_order ord;
	int ord_ok;
	/* Counts tiles done for a watcher (attn_opts.progress); NULL: none. */
	struct fs_progress *prog;
	/* pv.mode int8: where PV's registers come from (pv_int8.h) */
	struct pv_plan pv;
};

/* One row of a row tile: which query it is. */
struct row {
	int valid;		/* 0: prefill padding row */
	int t, qh;		/* query token and q head */
	int q_pos;
	int k_lo;		/* first key the kernel visits: 0 but for q_position chunk_keys */
	int primary;		/* writes scores/out (first replica in decode) */
	float sq;		/* q scale */
	const int8_t *q;	/* its D quantized values */
};

struct unit {
	int s, t, h;		/* decode: h = kv head; prefill: h = q head */
	int rt0, nrt;		/* prefill: first row tile and count */
	size_t tile0;		/* first acc tile index */
	size_t group0;		/* pv.mode int8: first pv group index */
};

/* Softmax state of one row within one segment. */
struct rstate {
	float m, l;
	float *o;		/* [D], unnormalized */
};

static inline int attn_kv_head(const struct kern *k, const struct unit *u)
{
	/* gqa_map kv_divide: q head / Hkv; decode, of the unit's first q
	 * head g*G. The result may pass Hkv: read where its offsets fall. */
	if (k->c->mode == MODE_DECODE)
		return k->kn->gqa == KGQA_KV_DIVIDE ? u->h * k->G / k->Hkv : u->h;
	if (k->kn->gqa == KGQA_KV_DIVIDE)
		return u->h / k->Hkv;
	return k->kn->gqa_modulo ? u->h % k->Hkv : u->h / k->G;
}

/* ln 2 rounded to float: the natural-domain factor of an exp2 kernel. */
#define ATTN_LN2F 0x1.62e430p-1f

/*
 * The kernel's softmax exponential: e^x, or, with exp_base
 * exp2_no_log2e, 2^x (an exp2 kernel whose scores lack the log2(e)
 * factor), computed as e^(x ln 2) with the product rounded to float.
 */
static inline float attn_exp(const struct kern *k, float x)
{
	return k->kn->exp2_no_log2e ? fs_expf(x * ATTN_LN2F) : fs_expf(x);
}

/*
 * The physical block the kernel reads for key tok of sequence s (the
 * page_walk assumption, kernel.h), or -1 when that read falls outside
 * the pool: a block-table entry of -1 or past the table's row (a key
 * past the context that a buggy mask let through), or a walk that
 * ignores the table and runs off the end. Readers of -1 get poison, as
 * a device would read memory no sequence owns (attn_spec.c: load_k;
 * attn_common.c: attn_k_scale, attn_v_col).
 */
static inline int attn_block_walk(const struct kern *k, int s, int tok,
				  enum kern_walk walk)
{
	int b = tok / k->KBS, p;

	if (walk == KWALK_NONE)
		p = k->seq_block0[s] + b;
	else if (walk == KWALK_IDENTITY)
		p = b;
	else
		p = b < k->MAXB ? k->in->block_table[s * k->MAXB + b] : -1;
	/* block_offset u16: the id kept in a 16-bit descriptor field, so
	 * block 65,536 + b reads block b */
	if (p >= 0 && k->kn->block_offset == KBOFF_U16)
		p &= 0xffff;
	return p >= 0 && p < k->in->NB ? p : -1;
}

static inline int attn_block(const struct kern *k, int s, int tok)
{
	return attn_block_walk(k, s, tok, k->kn->page_walk);
}

/*
 * Is key tok's block one cache.window_blocks free unmapped (a -1 entry
 * of the table inside the context, inputs_blocks_freed)? The kernel
 * walking the table checks the entry before it loads, as it does for a
 * key past the table, and loads 0: a freed block is never read. A walk
 * that ignores the table (page_walk none, identity) reads what lies at
 * the block it computes, as any other.
 */
static inline int attn_block_freed(const struct kern *k, int s, int tok)
{
	int b = tok / k->KBS;

	return k->kn->page_walk == KWALK_TABLE && b < k->MAXB &&
	       k->in->block_table[s * k->MAXB + b] < 0;
}

/*
 * The walks of the K scales and of V (kernel: k_scale_walk, v_page_walk):
 * the key's own walk (page_walk), unless the kernel computes that address
 * from the logical block index, as one that walks the table for K's bytes
 * and forgets it for the scales or for V does.
 */
static inline int attn_k_scale_block(const struct kern *k, int s, int tok)
{
	return attn_block_walk(k, s, tok, k->kn->k_scale_walk_identity ?
				KWALK_IDENTITY : k->kn->page_walk);
}

static inline int attn_v_block(const struct kern *k, int s, int tok)
{
	return attn_block_walk(k, s, tok, k->kn->v_walk_identity ?
				KWALK_IDENTITY : k->kn->page_walk);
}

/*
 * Where K[tok][g][dim] lives in k_cache, [NB][Hkv][D/16][BS][16]
 * (inputs.h), blk being tok's physical block (attn_block): byte
 * dim % 16 of chunk dim / 16 of slot tok % BS of kv head g of block blk.
 * The one place sim/ derives it; ref/ keeps its own on purpose, as the
 * independent check. Example (Hkv 4, D 256, BS 16): blk 9, g 2, tok 37,
 * dim 100 is (((9*4 + 2)*16 + 6)*16 + 5)*16 + 4 = 157268. Block blk
 * starts at blk * inputs_block_elems (cache.block_stride; dense: Hkv * D
 * * BS, as in the example).
 */
/* Elements from one block's start to the next as the kernel computes
 * them: the pool's stride, or (block_offset dense, or a dense pool) one
 * dense block of the kernel's block size (KBS: block_size_assumed). */
static inline size_t attn_block_elems(const struct kern *k)
{
	if (k->kn->block_offset == KBOFF_DENSE || !k->in->BSTR)
		return (size_t)k->Hkv * k->D * k->KBS;
	return k->in->BSTR;
}

/* Elements of k_cache (and of v_cache): what an offset must stay below. */
static inline size_t attn_pool_elems(const struct kern *k)
{
	return (size_t)k->in->NB * (k->in->BSTR ? k->in->BSTR : (size_t)k->Hkv * k->D * k->BS);
}

/*
 * Where physical block blk starts, in elements of esize bytes, in an
 * array whose blocks lie belems elements apart: blk * belems; or, with
 * block_offset int32, that offset in bytes computed in 32-bit signed
 * arithmetic as the kernel does. The product wraps modulo 2^32 and is
 * read as signed: SIZE_MAX (poison: an address before the array) when
 * negative, else the element it falls on. Example: 16 KiB blocks (Hkv 4,
 * D 256, BS 16), block 131,073: 2^31 + 16384 bytes wraps to -2^31 +
 * 16384, before the pool; block 262,145 wraps to 16384, block 1.
 */
static inline size_t attn_block_start(const struct kern *k, int blk, size_t belems,
				      size_t esize)
{
	uint64_t u;

	if (k->kn->block_offset != KBOFF_INT32)
		return (size_t)blk * belems;
	u = (uint64_t)blk * belems * esize & 0xffffffffu;
	return u >= 0x80000000u ? SIZE_MAX : (size_t)(u / esize);
}

/* The kernel's offset of K[tok][g][dim] of block blk; SIZE_MAX when its
 * block start is (block_offset int32). */
static inline size_t attn_k_offset(const struct kern *k, int blk, int g, int tok,
				   int dim)
{
	size_t b0 = attn_block_start(k, blk, attn_block_elems(k), 1);

	if (b0 == SIZE_MAX)
		return SIZE_MAX;
	return b0 + (((size_t)g * (k->D / INPUTS_K_CHUNK) + dim / INPUTS_K_CHUNK) * k->KBS +
		     tok % k->KBS) * INPUTS_K_CHUNK + dim % INPUTS_K_CHUNK;
}

/*
 * The stored element of element off of the physical pool (k_cache or
 * v_cache, blocks inputs_block_elems apart): off itself in a dense pool;
 * in a sparse one, the same place in its block's stored copy, or -1
 * where the pool stores no such block (poison). off < attn_pool_elems.
 */
static inline ptrdiff_t attn_stored(const struct fs_inputs *in, size_t off)
{
	size_t be;
	int m;

	if (!in->pool_blocks)
		return (ptrdiff_t)off;
	be = inputs_block_elems(in);
	m = inputs_block_at(in, (long)(off / be));
	return m < 0 ? -1 : (ptrdiff_t)((size_t)m * be + off % be);
}

/*
 * The K byte at that offset, or poison where it falls outside k_cache:
 * with block_size_assumed the kernel's offsets run on past the tensor
 * (block size 8 read as 16 doubles every block's stride), and a device
 * reads whatever lies there; the emulation reads poison, never past the
 * array. A block a sparse pool does not store is poison too.
 */
static inline int8_t attn_k_byte(const struct kern *k, int blk, int g, int tok, int dim)
{
	size_t off = attn_k_offset(k, blk, g, tok, dim);
	ptrdiff_t at = off < attn_pool_elems(k) ? attn_stored(k->in, off) : -1;

	return at >= 0 ? k->in->k_cache[at] : INPUTS_POISON;
}

/*
 * Where key tok's V column lives: element d is base[d * stride] (stride
 * BS; 0 for the poison column of a block outside the pool), times scale
 * for int8 V (NULL for float V). Looked up once per key, not per element.
 * A column of a sparse pool that runs past its block (block_size_assumed,
 * block_offset) is gathered instead: element d is pool element a + d *
 * stride, read through attn_stored (attn_v_elem).
 */
struct vcol {
	const int8_t *i8;
	const float *f;
	float scale;
	size_t stride;
	int n;		/* elements 0..n-1 inside the tensor; the rest poison
			 * (block_size_assumed: D for any other kernel) */
	const struct fs_inputs *gather;	/* non-NULL: gather from a */
	size_t a;
	/* q8_0, q4_0 (quant.h): the key's D/32 fp16 scales, element d's at
	 * s16[d / 32], replacing scale (NULL: a poisoned slot's, NaN); qoff
	 * the offset of the stored value, 8 for q4_0, else 0 */
	const uint16_t *s16;
	int qblocks, qoff;
	/* int8 V per_channel: kv head g's D scales, element d's at sch[d],
	 * replacing scale (NULL otherwise, and for a column outside the
	 * pool, whose scale is NaN; a kv head past Hkv, gqa_map's, reads
	 * NaN too) */
	const float *sch;
};

/* Element d of column v as the kernel reads it, scaled (int8 V: q times
 * the key's scale, or per_channel dim d's, one f32 product; q8_0 and
 * q4_0: (q - offset) * fp16 scale, rounded to f32 before PV as llama.cpp
 * dequantizes). */
/* The stored byte of element d of a one-byte V column (int8, q8_0,
 * q4_0), unscaled: what INT8 PV loads into B, and attn_v_elem scales. */
static inline int attn_v_byte(const struct vcol *v, int d)
{
	ptrdiff_t at;

	if (d >= v->n)
		return INPUTS_POISON;
	if (!v->gather)
		return v->i8[(size_t)d * v->stride];
	at = attn_stored(v->gather, v->a + (size_t)d * v->stride);
	return at < 0 ? INPUTS_POISON : v->gather->v_cache_i8[at];
}

static inline float attn_v_elem(const struct vcol *v, int d)
{
	ptrdiff_t at;
	int q;

	if (!v->i8) {	/* float V */
		if (d >= v->n)
			return NAN;
		if (!v->gather)
			return v->f[(size_t)d * v->stride];
		at = attn_stored(v->gather, v->a + (size_t)d * v->stride);
		return at < 0 ? NAN : v->gather->v_cache_f[at];
	}
	q = attn_v_byte(v, d);
	if (v->qblocks)
		return v->s16 ? (float)(q - v->qoff) * quant_f16_to_f32(v->s16[d / 32]) : NAN;
	if (v->sch)
		return (float)q * v->sch[d];
	return (float)q * v->scale;
}

struct vcol attn_v_col(const struct kern *k, const struct unit *u, int tok);
/*
 * V per_channel: the D scales of the kv head unit u reads V of, or NULL
 * (per-token V, or a kv head past Hkv: no scale there, NaN to its
 * readers). A static scale has no block: every key's is the same.
 */
const float *attn_v_chan(const struct kern *k, const struct unit *u);
/* Does row w see key j of a segment ending at seg_end (causal, window)? */
int attn_key_visible(const struct kern *k, const struct row *w, int seg_end,
		     int j);
/* Does any row of a row tile see any key of [kb, kb + N)? */
int attn_tile_needed(const struct kern *k, const struct row *rows, int kb,
		     int seg_end);
/* Executed tiles of segment sg of a unit whose rows are rows. */
size_t attn_seg_tiles(const struct kern *k, const struct unit *u,
		      const struct row *rows, int sg);
/*
 * Is C slot s the one the kernel reads its entry from (the first of its
 * replicas in register order)?
 */
int attn_c_primary(const struct lanemap_operand *oc, int s);
/* C rows a and b of a tile sum their slots in one order. */
int attn_rows_same_order(const struct kern *k, int a, int b);
/* Keys [*lo, *hi) of split-K segment sg of sequence s. */
void attn_seg_bounds(const struct kern *k, int s, int sg, int *lo, int *hi);
/* The unit's row tiles' rows: rows[rt * M + m]. */
void attn_unit_rows(const struct kern *k, const struct unit *u, struct row *rows);
/* K scale of key tok for K-step ks. */
float attn_k_scale(const struct kern *k, const struct unit *u, int tok, int ks);
/*
 * One segment's share of the split-K merge: out[d] = fmaf(o[d] / l, w,
 * out[d]) for d < D, a division and a fused multiply-add per d, which
 * vector code does with the same bits (tile_ops.merge).
 */
typedef void (*attn_merge_fn)(float *out, const float *o, float l, float w, int D);
/* Merge a row's segment states (segment order) into out, row_max/sum;
 * step: the fast path's vector share (NULL: the plain loop). */
void attn_merge_row(const struct kern *k, const struct unit *u,
		    const struct row *w, struct rstate *const *segs, int nseg,
		    attn_merge_fn step);
/* Store one executed tile's C registers and its acc_tiles entry. */
void attn_acc_store(const struct kern *k, const struct unit *u, size_t tile,
		    int rt, int kb, const int32_t *creg);

/*
 * A thread's scratch: the unit's rows and their segment states, which
 * both executors use, and the scalar executor's registers and workspace
 * (attn_spec.c carves it all: attn_scratch_carve; attn.c's team_alloc
 * gives each thread its part of one block).
 */
struct scratch {
	uint8_t *areg, *breg;
	int32_t *am, *bm, *creg;
	float *ws, *ps, *p;
	struct row *rows;
	struct rstate *st;	/* [nseg][nrt*M] */
	float *obuf;
};

#endif
