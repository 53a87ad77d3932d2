/*
 * case.h - a resolved case: everything one run needs, every default
 * filled in. Pure data and derived sizes, no YAML: lib/casefile.c
 * builds it from a case file, with the keys, ranges and defaults of the
 * schema table in lib/caseschema.c (docs/case-schema.md); sim/ and
 * ref/ read it.
 *
 * Shapes, in the names used everywhere (docs/design.md 3.1):
 *   S   sequences            T   query tokens per sequence (max over seqs)
 *   Hq  q heads, Hkv kv heads, G = Hq / Hkv (the GQA group)
 *   D   head_dim             BS  block_size   NB  physical blocks
 *   MAXB  block-table width = max over seqs of ceil(context / BS)
 *   MAXCTX max context
 *
 * A sequence's keys are tokens 0..context-1. Query token t of sequence s
 * sits at absolute position q_pos[s][t] and sees keys j <= q_pos:
 *   decode   context = history + T, q_pos = context - T + t  (T = 1 usually)
 *   prefill  context = history + chunk, T = chunk, q_pos = history + t
 * Padded batch entries: a decode sequence of context 0 has T = 1 and
 * history -1, so its one query row sits at q_pos -1 and sees no key
 * (output 0); a prefill sequence of chunk 0 has no query rows.
 * head_dim D is a multiple of 16 (the K cache's chunk), not necessarily
 * of the instruction's K: the last K-step is then zero-padded.
 */
#ifndef CASE_H
#define CASE_H

#include <stdint.h>

#include "../common/fs.h"
#include "kernel.h"

#define CASE_MAX_SEQS 64
#define CASE_MAX_CONTEXT (1 << 20)	/* keys per sequence */
#define CASE_MAX_TOKENS 8192		/* query tokens per sequence */
#define CASE_MAX_HEADS 256
#define CASE_MAX_HEAD_DIM 1024
#define CASE_MAX_OUTLIERS 16
#define CASE_MAX_BUCKETS 16
#define CASE_MAX_SEGMENTS 1024	/* split-K segments per context: attn_int.h's ATTN_MAX_SEGMENTS */
#define CASE_PATH_MAX 512
#define CASE_AT_MAX 192		/* keys whose place in the file is kept */

enum case_mode { MODE_DECODE, MODE_PREFILL };
enum case_placement { PLACE_CONTIGUOUS, PLACE_SHUFFLED, PLACE_REVERSED, PLACE_TABLE };
enum case_kscale {
	KSCALE_PER_TOKEN_HEAD,	/* f32 [NB,BS,Hkv]: the article's choice */
	KSCALE_PER_BLOCK32,	/* f16 [NB,BS,Hkv,D/32]: RDNA3 packed-K note */
	KSCALE_PER_TENSOR,	/* f32 [1]: one scale for all of K */
	KSCALE_PER_HEAD,	/* f32 [Hkv]: one static scale per kv head (FP8-style) */
};
/* q8_0, q4_0: llama.cpp's V blocks (sim/attn/quant.h), for the f32 PV */
enum case_vdtype { VDT_INT8, VDT_BF16, VDT_F32, VDT_Q8_0, VDT_Q4_0 };
/*
 * The int8 V cache's scales (cache.v_scale; other V types have their own):
 *   VSCALE_PER_TOKEN_HEAD  f32 [NB][BS][Hkv], absmax of each (token, kv
 *                          head) row / clip, written with the row
 *   VSCALE_PER_CHANNEL     f32 [Hkv][D], one static scale per (kv head,
 *                          dim): absmax over every valid token of every
 *                          sequence / clip, as deployed static V scales
 *                          are calibrated; a channel zero everywhere has
 *                          scale 0 and stores 0
 */
enum case_vscale { VSCALE_PER_TOKEN_HEAD, VSCALE_PER_CHANNEL };

/* V stored one byte an element (int8, q8_0, q4_0), not as floats. */
static inline int case_v_bytes(enum case_vdtype t)
{
	return t == VDT_INT8 || t == VDT_Q8_0 || t == VDT_Q4_0;
}

/* V with one fp16 scale per 32 dims of a token (q8_0, q4_0). */
static inline int case_v_blocks(enum case_vdtype t)
{
	return t == VDT_Q8_0 || t == VDT_Q4_0;
}
enum case_rounding { ROUND_HALF_AWAY, ROUND_HALF_EVEN };
enum case_dist { DIST_NORMAL, DIST_UNIFORM, DIST_SIGN };
enum case_route { ROUTE_REPORT, ROUTE_STRICT };
/*
 * Which q head a decode row holds (kernel: decode_rows), a layout the
 * kernel chose, not a bug. Row m of row tile i of kv head g:
 *   ROWS_REPLICATED  q head g*G + (M*i + m) % G: the G heads repeated
 *                    over every row (the article's kernel)
 *   ROWS_PACKED      q head g*G + M*i + m while M*i + m < G; the rows
 *                    past G are padding whose A rows the kernel fills
 *                    with zeros, so their acc is 0 and they have no
 *                    scores
 */
enum case_rows { ROWS_REPLICATED, ROWS_PACKED };
/*
 * The second product, PV (pv:). f32: P in f32 times dequantized V, key by
 * key (every case before issue 23). int8: P quantized per (row, 32-key
 * group) with V's per-token scale folded in (V per_channel: with the
 * fixed scale 1/clip, sV applied per output column after the product),
 * times the INT8 V cache through the same matrix instruction as QK
 * (sim/attn/pv_int8.c).
 */
enum case_pv { PV_F32, PV_INT8 };
/*
 * How the QK accumulators' P reaches PV's A operand (pv.regroup, int8):
 *   PV_REGROUP_LDS         written to LDS in C order, read back in A order
 *                          (the article's "4x4 transpose")
 *   PV_REGROUP_V_PERMUTED  P stays in the C registers; V is loaded in the
 *                          matching permuted key order
 */
enum case_regroup { PV_REGROUP_LDS, PV_REGROUP_V_PERMUTED };

/* Golden tensors to write, as bits. */
enum case_golden {
	GOLD_INPUTS = 1 << 0,	/* q, q_int8, q_scale, caches, tables, lens, q_pos */
	GOLD_ACC = 1 << 1,	/* acc, acc_tiles */
	GOLD_SCORES = 1 << 2,	/* scores */
	GOLD_OUT = 1 << 3,	/* out */
	GOLD_SPLITK = 1 << 4,	/* split-K states */
};

struct case_seq {
	int context;	/* keys */
	int history;	/* keys before the first query token: context - tokens */
	int tokens;	/* query tokens T_s (decode: default 1; prefill: chunk) */
	int *blocks;	/* PLACE_TABLE only: ceil(context/BS) physical blocks */
	int n_blocks;
};

/* How one input tensor (Q, K or V) is made. */
struct case_tensor {
	char npy[CASE_PATH_MAX];	/* "" = generate; else a logical .npy */
	enum case_dist dist;
	double scale;		/* normal: std; uniform: half-width; sign: magnitude */
	double mean;
	double zero_rows;	/* fraction of (token, head) rows set to 0 */
	double constant_rows;	/* fraction of rows set to one constant value */
	int outliers[CASE_MAX_OUTLIERS];	/* head-dim channels scaled up */
	int n_outliers;
	double outlier_scale;	/* multiplier of outlier channels */
};

/* Thresholds on quantization error (check:); NaN = not checked. */
struct case_check {
	double out_cosine_min;
	double out_max_abs_max;
	double score_max_abs_max;
	double score_nmse_max;
	double kld_mean_max;
	double kld_median_max;
	double kld_p99_max;
	double top1_min;	/* same-top-1-key rate, 0..1 */
	double rms_dp_max;
};

struct fs_case {
	char file[CASE_PATH_MAX];	/* where it came from */
	char name[128];
	char description[512];
	char isa[CASE_PATH_MAX];	/* builtin profile name or profile path */
	enum case_mode mode;
	enum case_route route;
	int expect_mismatch;	/* expect: mismatch - a case that plants a bug */

	/* model */
	int q_heads, kv_heads, head_dim;
	int softmax_scale_auto;	/* 1: 1/sqrt(head_dim) */
	double softmax_scale;	/* resolved value, always set */
	int sliding_window;	/* 0 = none (the INT8 path needs none) */
	int alibi;		/* 0/1: ALiBi bias on the scores (sim/attn/logit.h) */
	double soft_cap;	/* 0 = none, else cap * tanh(s / cap) (sim/attn/logit.h) */

	/* cache */
	int block_size;
	int num_blocks;		/* resolved: blocks needed + spare */
	int spare_blocks;	/* unused blocks in the pool, poisoned */
	enum case_placement placement;
	enum case_kscale k_scale;
	enum case_vdtype v_dtype;
	enum case_vscale v_scale;	/* int8 V only (casefile refuses it else) */
	int shuffle_cache;	/* pre-permuted K layout: refused by the route */
	int block_stride;	/* elements from one block's start to the next in
				 * k_cache and v_cache; 0 = dense, Hkv*D*BS */
	int window_free;	/* cache.window_blocks: 0 keep, 1 free (blocks
				 * wholly behind the sliding window unmapped:
				 * their table entries -1, inputs.h) */

	/* sequences */
	int n_seqs;
	struct case_seq seqs[CASE_MAX_SEQS];

	/* quant */
	enum case_rounding rounding;
	int clip;		/* 127 */

	/* split-K: segment length in keys, 0 = one segment */
	int segment;

	/* data */
	uint64_t seed;
	struct case_tensor q, k, v;

	/* What the kernel under test assumes (kernel:); default correct. */
	struct fs_kernel kernel;
	enum case_rows decode_rows;	/* a layout, not a bug: not in kernel */

	/* pv: the second product (default f32: the goldens of before) */
	enum case_pv pv_mode;
	enum case_regroup pv_regroup;

	struct case_check check;
	unsigned golden;	/* enum case_golden bits */
	int buckets;		/* key-position buckets for error metrics */

	/* Where the file gave each key (its value's line and column), in
	 * the order the loader met them: a check that needs the profile or
	 * the executor, made after the load, names the key at its place as
	 * the loader's own errors do (case_fail_key). */
	struct case_at {
		char path[48];	/* "cache.k_scale"; longer paths are not kept */
		int line, col;
	} at[CASE_AT_MAX];
	int n_at;
};

/* Derived sizes (see the top of this file). */
int case_tokens_max(const struct fs_case *c);		/* T */
int case_context_max(const struct fs_case *c);		/* MAXCTX */
int case_blocks_of(const struct fs_case *c, int s);	/* ceil(context/BS) */
int case_table_width(const struct fs_case *c);		/* MAXB */
int case_blocks_needed(const struct fs_case *c);	/* sum over seqs */
/* Absolute position of query token t of sequence s; -1 if t >= T_s. */
int case_q_pos(const struct fs_case *c, int s, int t);
int case_group(const struct fs_case *c);		/* G = Hq / Hkv */
/* Split-K segments of sequence s (1 when segment == 0). */
int case_segments_of(const struct fs_case *c, int s);
int case_segments_max(const struct fs_case *c);

/* Where the file gave key path (its value's place), or NULL: not given,
 * or a path the loader does not keep. */
const struct case_at *case_key_at(const struct fs_case *c, const char *path);

/*
 * FS_EINPUT for key path of c: "FILE:LINE:COL: path: <message>" where the
 * file gave the key, "FILE: path: <message>" where it did not (a default
 * that the profile cannot run), as the loader's errors read.
 */
enum fs_rc case_fail_key(struct fs_err *err, const struct fs_case *c,
			 const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Free what the case owns (the explicit block tables). */
void case_free(struct fs_case *c);

#endif
