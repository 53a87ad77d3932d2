/*
 * attn.c - the driver of the emulated kernel (see attn.h): it checks the
 * case against the profile and f32's range, builds the kernel's column
 * tables, cuts the work into units (one workgroup of the real kernel
 * each), numbers their tiles, allocates the results, picks an executor
 * and runs the units on OpenMP threads.
 *
 * The files of the emulated kernel, each calling and including only
 * those below it (docs/design-sim.md):
 *
 *   attn.c                   driver and thread scheduler (this file)
 *    |-> attn_spec.c         the scalar executor: the specification
 *    |    |-> mmac.c         the instruction, lane by lane
 *    |    '-> attn_common.c
 *    |-> attn_fast.c         the fast executor: the same bytes
 *    |    |-> attn_common.c
 *    |    '-> tile_fast.c    one table of vector kernels, chosen once
 *    |         |-> cpu.h     which vector extensions this CPU has
 *    |         '-> tile_generic.c, tile_avx2.c, tile_avx512.c
 *    |-> pv_int8.c, pv_fast.c  pv.mode int8: its scalar and fast
 *    |                       executors (pv_fast.c on attn_fast.c's K
 *    |                       staging and the same table)
 *    '-> attn_common.c       what both executors share: rows, masks,
 *                            block walk, K offset, scales, merge
 *
 * Executors. The scalar executor is the definition; the fast one runs
 * only the correct kernel on its own map and gives the same bytes
 * (attn_fast.h says why; pv_fast.c for INT8 PV). Work units in any order on any thread: each
 * writes only its own rows and tiles, whose indices are fixed before any
 * thread starts, so the bytes do not depend on the thread count.
 */
#include "attn.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attn_fast.h"
#include "attn_int.h"
#include "attn_spec.h"
#include "../common/progress.h"
#include "quant.h"
#include "tile_fast.h"

#define WAVES_PER_GROUP 8	/* prefill: 8 waves x M rows per workgroup */

/*
 * The first tile and pv group of each unit's split-K segments: segment sg
 * of unit i starts at tile tile0[off[i] + sg] and group group0[off[i] +
 * sg]; off[nunits] entries, then the totals at tile0[off[nunits]]. Fixed
 * before any thread runs, so the golden indices do not depend on which
 * thread computes what.
 */
struct segnum {
	size_t *off, *tile0, *group0;
};

static void segnum_free(struct segnum *sn)
{
	free(sn->off), free(sn->tile0), free(sn->group0);
}

/*
 * Count each segment's tiles and groups on all threads, then number them
 * in unit and segment order. Counting asks attn_tile_needed of every
 * tile of every row tile: decode 131072 has 32768 tiles, and counted on
 * one thread it was 4 % of its 16-thread emulation. Returns 0, or -1 out
 * of memory.
 */
static int segnum_make(const struct kern *k, const struct unit *units, size_t nunits,
		       int maxrt, struct segnum *sn)
{
	size_t n = 0, nr = (size_t)maxrt * k->M;
	int nt = omp_get_max_threads();
	/* each thread's rows, allocated here: see team_alloc */
	struct row *rows = malloc((size_t)nt * nr * sizeof(*rows));

	sn->off = malloc((nunits + 1) * sizeof(*sn->off));
	if (!sn->off || !rows) {
		free(sn->off), free(rows);
		return -1;
	}
	for (size_t i = 0; i < nunits; i++) {
		sn->off[i] = n;
		n += (size_t)case_segments_of(k->c, units[i].s);
	}
	sn->off[nunits] = n;
	sn->tile0 = malloc((n + 1) * sizeof(*sn->tile0));
	sn->group0 = malloc((n + 1) * sizeof(*sn->group0));
	if (!sn->tile0 || !sn->group0) {
		free(rows);
		segnum_free(sn);
		return -1;
	}
#pragma omp parallel num_threads(nt)
	{
		struct row *mine = &rows[(size_t)omp_get_thread_num() * nr];
		size_t have = SIZE_MAX;	/* the unit whose rows mine holds */

		/* static: a thread's segments are consecutive, mostly one unit's */
#pragma omp for schedule(static)
		for (size_t j = 0; j < n; j++) {
			size_t i = have;

			if (i == SIZE_MAX || j >= sn->off[i + 1]) {
				size_t a = 0, b = nunits;	/* the unit with off[i] <= j < off[i + 1] */

				while (b - a > 1) {
					size_t m = a + (b - a) / 2;

					if (sn->off[m] <= j)
						a = m;
					else
						b = m;
				}
				i = have = a;
				attn_unit_rows(k, &units[i], mine);
			}
			sn->tile0[j] = attn_seg_tiles(k, &units[i], mine, (int)(j - sn->off[i]));
			sn->group0[j] = k->pv.on ?
				pv_seg_groups(k, &units[i], mine, (int)(j - sn->off[i])) : 0;
		}
	}
	free(rows);
	/* counts to first indices, in unit and segment order */
	for (size_t j = 0, t = 0, g = 0; j <= n; j++) {
		size_t ct = j < n ? sn->tile0[j] : 0, cg = j < n ? sn->group0[j] : 0;

		sn->tile0[j] = t, sn->group0[j] = g;
		t += ct, g += cg;
	}
	return 0;
}

static void c_row_slots_free(struct kern *k)
{
	free(k->rowslots);
	free(k->rowcount);
	free(k->col_contig);
	free(k->row_inter);
	free(k->seq_block0);
	pv_plan_free(&k->pv);
}

/* The kernel's column tables and page walk from its assumptions. */
static enum fs_rc kernel_tables(struct kern *k, struct fs_err *err)
{
	const struct fs_kernel *kn = k->kn;
	const int *prof = k->lm->op[LM_C].col;
	int slots = k->W * k->EC, b0 = 0;

	k->col_scale = k->col_mask = k->col_write = prof;
	if (kn->c_columns || kn->tail_mask || kn->transpose) {
		k->col_contig = malloc((size_t)slots * sizeof(int));
		if (!k->col_contig)
			return fs_nomem(err, "the kernel's column table",
					(size_t)slots * sizeof(int));
		if (kernel_contiguous_cols(k->lm, k->col_contig))
			return case_fail_key(err, k->c, kn->c_columns ? "kernel.c_columns" :
					     kn->tail_mask ? "kernel.tail_mask" : "kernel.transpose",
					     "adjacent-column beliefs need lanes holding equal shares of each C row; isa %s does not",
					     k->lm->name);
		if (kn->c_columns)
			k->col_scale = k->col_contig;
		if (kn->c_columns || kn->tail_mask)
			k->col_mask = k->col_contig;
		if (kn->c_columns || kn->transpose)
			k->col_write = k->col_contig;
	}
	k->row_read = k->lm->op[LM_C].row;
	if (kn->c_rows_interleaved) {
		k->row_inter = malloc((size_t)slots * sizeof(int));
		if (!k->row_inter)
			return fs_nomem(err, "the kernel's row table", (size_t)slots * sizeof(int));
		if (kernel_interleaved_rows(k->lm, k->row_inter))
			return case_fail_key(err, k->c, "kernel.c_rows",
					     "interleaved needs lanes holding equal shares of each C column; isa %s does not",
					     k->lm->name);
		k->row_read = k->row_inter;
	}
	k->seq_block0 = malloc((size_t)k->c->n_seqs * sizeof(int));
	if (!k->seq_block0)
		return fs_nomem(err, "the kernel's block offsets",
				(size_t)k->c->n_seqs * sizeof(int));
	for (int s = 0; s < k->c->n_seqs; s++) {
		k->seq_block0[s] = b0;
		b0 += case_blocks_of(k->c, s);
	}
	return FS_OK;
}

static int c_row_slots(struct kern *k)
{
	const struct lanemap_operand *oc = &k->lm->op[LM_C];
	int slots = k->W * k->EC;

	k->rowcap = slots;
	k->rowslots = malloc((size_t)k->M * slots * sizeof(int));
	k->rowcount = calloc((size_t)k->M, sizeof(int));
	if (!k->rowslots || !k->rowcount)
		return -1;
	for (int s = 0; s < slots; s++) {
		int m = oc->row[s];

		if (!attn_c_primary(oc, s))
			continue;
		k->rowslots[m * k->rowcap + k->rowcount[m]++] = s;
	}
	return 0;
}

void attn_free(struct attn_result *r)
{
	free(r->out);
	free(r->scores);
	free(r->row_max);
	free(r->row_sum);
	free(r->acc);
	free(r->acc_tiles);
	free(r->seg_max);
	free(r->seg_sum);
	free(r->seg_out);
	free(r->p_int8);
	free(r->p_scale);
	free(r->pv_acc);
	free(r->pv_tiles);
	memset(r, 0, sizeof(*r));
}

/*
 * calloc(n, size), counted into *total. NULL either because the outputs
 * so far pass INPUTS_MAX_BYTES (*over set: a limit, FS_EBUDGET; later
 * calls only count, so *total ends as the whole need) or
 * because calloc failed (*over left 0: out of memory).
 */
static void *alloc_n(size_t n, size_t size, double *total, int *over)
{
	void *p;

	*total += (double)n * (double)size;	/* a double cannot wrap */
	if (*over || *total > (double)INPUTS_MAX_BYTES) {
		*over = 1;
		return NULL;
	}
	/* Huge pages: the scores and accumulators of a long decode are
	 * first touched a 4 KiB fault at a time otherwise, which costs more
	 * than writing them (n * size cannot wrap: the total is capped). */
	p = calloc(n ? n : 1, size);
	if (p)
		fs_advise_huge(p, n * size);
	return p;
}

enum fs_rc attn_check_profile(const struct fs_case *c, const struct lanemap *lm,
			      const struct lanemap *hw, struct fs_err *err)
{
	if (!lm->valid)
		return case_fail_key(err, c, "isa", "profile %s is not valid", lm->name);
	if (lm->op[LM_C].type != LM_I32 || lm_dtype_size(lm->op[LM_A].type) != 1 ||
	    lm_dtype_size(lm->op[LM_B].type) != 1)
		return case_fail_key(err, c, "isa",
				     "profile %s: the INT8 kernel needs 8-bit A and B and i32 C",
				     lm->name);
	/* Q and K are symmetric int8 ([-clip, clip], poison -128): a u8
	 * operand reads -1 as 255, so no correct kernel runs on one, and the
	 * reference's mismatch would be reported as a mapping bug. */
	for (int op = LM_A; op <= LM_B; op++)
		if (lm->op[op].type == LM_U8)
			return case_fail_key(err, c, "isa",
					     "profile %s: %s is u8, but the kernel's Q and K are signed int8 (a u8 operand reads -1 as 255); the INT8 kernel needs i8 A and B",
					     lm->name, op == LM_A ? "a" : "b");
	if (c->k_scale == KSCALE_PER_BLOCK32 && lm->k != 32)
		return case_fail_key(err, c, "cache.k_scale",
				     "per_block32 needs a K-step of 32 head-dim elements; isa %s has K = %d",
				     lm->name, lm->k);
	if (hw != lm && (!hw->valid || hw->wave != lm->wave || hw->m != lm->m ||
			 hw->n != lm->n || hw->k != lm->k ||
			 hw->op[LM_A].type != lm->op[LM_A].type ||
			 hw->op[LM_B].type != lm->op[LM_B].type ||
			 hw->op[LM_C].type != lm->op[LM_C].type ||
			 hw->op[LM_A].elems != lm->op[LM_A].elems ||
			 hw->op[LM_B].elems != lm->op[LM_B].elems ||
			 hw->op[LM_C].elems != lm->op[LM_C].elems))
		return fs_fail(err, FS_EINPUT,
			       "hardware map %s does not have the shape of %s",
			       hw->name, lm->name);
	if (c->kernel.operand_kq && (lm->m != lm->n || lm->op[LM_A].type != lm->op[LM_B].type))
		return case_fail_key(err, c, "kernel.operand_order",
				     "kq needs a square tile with A and B of one type; isa %s is %dx%d",
				     lm->name, lm->m, lm->n);
	if (c->kernel.gqa == KGQA_GRID) {
		int G = case_group(c);

		if (c->mode == MODE_DECODE)
			return case_fail_key(err, c, "kernel.gqa_map",
					     "grid_permuted is a prefill grid (one q head a work unit); decode units serve a kv head's group");
		for (int b = 0; b < c->q_heads; b++)
			if (kernel_grid_head(b, G) >= c->q_heads)
				return case_fail_key(err, c, "kernel.gqa_map",
						     "grid_permuted: work unit %d would serve q head %d of %d (G %d > kv_heads %d); its writes fall outside out",
						     b, kernel_grid_head(b, G), c->q_heads, G, c->kv_heads);
	}
	if (case_segments_max(c) > ATTN_MAX_SEGMENTS)
		return case_fail_key(err, c, "split_k.segment",
				     "%d cuts a context into %d segments; at most %d",
				     c->segment, case_segments_max(c), ATTN_MAX_SEGMENTS);
	if (c->pv_mode == PV_INT8) {
		/* pv.mode and pv.regroup against the maps: the PV plan needs
		 * the instruction's shape and the case alone, no input */
		struct kern k;
		enum fs_rc rc;

		memset(&k, 0, sizeof(k));
		k.c = c, k.kn = &c->kernel, k.lm = lm, k.hw = hw;
		k.M = lm->m, k.N = lm->n, k.K = lm->k, k.W = lm->wave, k.D = c->head_dim;
		k.EA = lm->op[LM_A].elems, k.EB = lm->op[LM_B].elems, k.EC = lm->op[LM_C].elems;
		rc = pv_plan_build(&k, err);
		pv_plan_free(&k.pv);
		return rc;
	}
	return FS_OK;
}

#define RANGE_MAX 0x1p127	/* half of f32's largest: room for rounding */

/*
 * The largest |x[i]|, NaN skipped, 0 for none. On the bits: with the
 * sign cleared, the unsigned order of a float's bits is its order (inf
 * is 0x7f800000, NaNs above it, so skipped), and an integer max
 * vectorizes where a float compare, NaN-aware, does not; a max is the
 * same in any order, so the threads share it. A 131072-key decode's 1M
 * scales (4 MiB, out of cache after the 268 MB of K and V) took 1.7 ms
 * on one thread before its emulation, 15 % of it at 16 threads. simd:
 * gcc vectorizes the outlined loop only when asked; clang cannot here
 * and warns (hence the pragma, as in tile_isa.h): the same value either way.
 * It holds for the rest of the file: the warning comes from the backend on
 * the outlined loop, which a push / pop around max_abs does not cover.
 */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wpass-failed"
#endif
static double max_abs(const float *x, size_t n)
{
	uint32_t m = 0;
	float f;

#pragma omp parallel for simd reduction(max : m) schedule(static) if (n > 65536)
	for (size_t i = 0; i < n; i++) {
		uint32_t u;

		memcpy(&u, &x[i], sizeof(u));
		u &= 0x7fffffffu;
		u = u > 0x7f800000u ? 0 : u;
		m = u > m ? u : m;
	}
	memcpy(&f, &m, sizeof(f));
	return f;
}

/*
 * Can the kernel's f32 arithmetic overflow on these inputs? A real kernel
 * would overflow as the emulation does, while the reference (double)
 * would not, and the difference would be reported as a mapping bug; so an
 * input past f32's range is refused, naming the tensor. Bounds, with A =
 * head_dim * clip^2 the largest |acc|:
 *   scores  every intermediate of ((float(acc) * sQ) * sK) * scale is at
 *           most A * max(sQ, sQ sK, sQ sK scale), maxima over the inputs
 *           (per_block32 sums acc_kb * sK_kb first: A * max(sK, ...));
 *   PV      o and the merged out sum at most (keys) p |v| <= MAXCTX max|v|
 *           (p <= 1; the row's max has p = 1, so every l >= 1).
 * Both must stay within 2^127. Example: one Q element of 3e38 makes
 * sQ = 3e38 / 127 = 2.4e36, and with head_dim 64 the first product
 * float(acc) * sQ can reach 64 * 127^2 * 2.4e36 = 2.4e42: refused.
 */
/*
 * The key a range error names for tensor t ("data.q"): the one of its
 * keys the user would change, as the file gave it (its npy, its scale,
 * its mean, its outliers' scale), else the tensor; into buf.
 */
static const char *tensor_key(const struct fs_case *c, const char *t, char *buf, size_t len)
{
	static const char *const sub[] = { ".npy", ".scale", ".mean", ".outlier_scale" };
	size_t n = strlen(t);

	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++)
		if (n + strlen(sub[i]) < len) {
			memcpy(buf, t, n);
			memcpy(buf + n, sub[i], strlen(sub[i]) + 1);
			if (case_key_at(c, buf))
				return buf;
		}
	return t;
}

static enum fs_rc check_range(const struct fs_case *c, const struct fs_inputs *in,
			      struct fs_err *err)
{
	char key[48];
	size_t nks = (size_t)in->NM * in->BS * in->Hkv;	/* the stored blocks */
	double sq = max_abs(in->q_scale, (size_t)in->S * in->T * in->Hq), sk = 0.0, v;
	double a = (double)in->D * c->clip * c->clip, sc = c->softmax_scale, bound;

	if (c->k_scale == KSCALE_PER_TENSOR)
		sk = fabsf(in->k_scale[0]);
	else if (c->k_scale == KSCALE_PER_HEAD)
		sk = max_abs(in->k_scale, (size_t)in->Hkv);
	else if (c->k_scale == KSCALE_PER_TOKEN_HEAD)
		sk = max_abs(in->k_scale, nks);
	else
		for (size_t i = 0; i < nks * (size_t)(in->D / 32); i++) {
			float x = quant_f16_to_f32(in->k_scale16[i]);

			if (fabsf(x) > sk)
				sk = fabsf(x);
		}
	if (c->v_dtype == VDT_INT8 && in->v_scale_ch) {
		v = 127.0 * max_abs(in->v_scale_ch, (size_t)in->Hkv * in->D);
	} else if (c->v_dtype == VDT_INT8) {
		v = 127.0 * max_abs(in->v_scale, nks);
	} else if (case_v_blocks(c->v_dtype)) {
		/* |q - offset| <= 127 (q8_0) or 8 (q4_0) */
		double qmax = c->v_dtype == VDT_Q8_0 ? 127.0 : 8.0;

		v = 0.0;
		for (size_t i = 0; i < nks * (size_t)(in->D / 32); i++) {
			double x = fabs((double)quant_f16_to_f32(in->v_scale16[i])) * qmax;

			if (x > v)	/* a poisoned slot's NaN is no maximum */
				v = x;
		}
	} else {
		v = max_abs(in->v_cache_f, (size_t)in->NM * inputs_block_elems(in));
	}
	/* q8_0 and q4_0 hold a block's scale in fp16: it overflows long
	 * before BF16 does (llama.cpp's d = absmax / 127, or / 8) */
	if (!isinf(sq) && !isinf(sk) && isinf(v) && case_v_blocks(c->v_dtype)) {
		int qm = c->v_dtype == VDT_Q8_0 ? 127 : 8;

		return case_fail_key(err, c, tensor_key(c, "data.v", key, sizeof(key)),
				     "a %s block's fp16 scale overflows: |V| past about 65504 x %d = %d; scale V down",
				     qm == 127 ? "q8_0" : "q4_0", qm, 65504 * qm);
	}
	if (isinf(sq) || isinf(sk) || isinf(v))
		return case_fail_key(err, c, tensor_key(c, isinf(sq) ? "data.q" : isinf(sk) ?
							"data.k" : "data.v", key, sizeof(key)),
				     "a value is past f32's range as the kernel stores it (BF16 rounds |x| > 3.39e+38 to inf%s)",
				     isinf(sk) && c->k_scale == KSCALE_PER_BLOCK32 ?
				     "; per_block32's fp16 K scale overflows past 65504, |K| > 65504 x clip" : "");
	bound = a * fmax(c->k_scale == KSCALE_PER_BLOCK32 ? sk : sq,
			 fmax(sq * sk, sq * sk * sc));
	if (bound > RANGE_MAX) {
		/* name what drives the bound: a given softmax_scale past 1 that
		 * makes its term the largest, else the larger of Q's and K's */
		int by_scale = sc > 1 && sq * sk * sc >= (c->k_scale == KSCALE_PER_BLOCK32 ? sk : sq) &&
			       case_key_at(c, "model.softmax_scale");

		return case_fail_key(err, c, by_scale ? "model.softmax_scale" :
				     tensor_key(c, sq >= sk ? "data.q" : "data.k", key, sizeof(key)),
				     "the f32 score products of data.q and data.k can reach %.3g (head_dim %d x clip %d^2 x the largest of sQ, sQ sK, sQ sK softmax_scale; max sQ %.3g, max sK %.3g, softmax_scale %.3g), past 2^127 = 1.7e+38: the kernel's f32 arithmetic would overflow; %s",
				     bound, in->D, c->clip, sq, sk, sc,
				     by_scale ? "lower softmax_scale, or scale Q or K down" :
				     "scale Q or K down");
	}
	if ((double)in->MAXCTX * v > RANGE_MAX)
		return case_fail_key(err, c, tensor_key(c, "data.v", key, sizeof(key)),
				     "the f32 PV sums can reach %.3g (%d keys x max |V| %.3g), past 2^127 = 1.7e+38: the kernel's f32 arithmetic would overflow; scale V down",
				     (double)in->MAXCTX * v, in->MAXCTX, v);
	return FS_OK;
}

int attn_exec_parse(const char *s, enum attn_exec *e)
{
	static const char *const names[] = { "auto", "scalar", "portable", "avx2", "avx512" };

	for (int i = 0; i < 5; i++)
		if (!strcmp(s, names[i])) {
			*e = (enum attn_exec)i;
			return 0;
		}
	return -1;
}

enum fs_rc attn_run(const struct fs_case *c, const struct lanemap *lm,
		    const struct fs_inputs *in, struct attn_result *r,
		    struct fs_err *err)
{
	return attn_run_opts(c, lm, NULL, in, r, err);
}

/* What one thread of the team works in. */
struct thread_scratch {
	struct scratch x;	/* both executors */
	struct fscratch f;	/* the fast path, f32 PV */
	struct pv_scratch px;	/* INT8 PV */
	struct pv_fscratch pf;	/* INT8 PV's fast path */
};

/* The team: n threads' scratch, carved from one block (slab.h). */
struct team {
	int n;
	char *mem;
	size_t bytes;		/* of mem */
	struct thread_scratch t[];
};

static void team_free(struct team *tm)
{
	if (tm) {	/* a team always has its mem (team_alloc) */
		SLAB_UNPOISON(tm->mem, tm->bytes);	/* slab.h's gaps, under ASan */
		free(tm->mem);
	}
	free(tm);
}

/* One thread's scratch from s: the arrays its executor uses (fast:
 * the fast path's; INT8 PV has its own, px and pf, not f). */
static int team_carve(const struct kern *k, int nrt, int nseg, int fast, int ng,
		      struct thread_scratch *t, struct slab *s)
{
	if (attn_scratch_carve(k, nrt, nseg, &t->x, s))
		return -1;
	if (fast && !k->pv.on && attn_fast_carve(k, ng, nrt, &t->f, s))
		return -1;
	if (k->pv.on && pv_scratch_carve(k, &t->px, s))
		return -1;
	return k->pv.on && fast ? pv_fast_carve(k, nrt, &t->pf, s) : 0;
}

/*
 * Every thread's scratch for a team of omp_get_max_threads(): one block,
 * allocated here on the calling thread, a page-aligned part a thread,
 * each part carved and first written by its own thread in a parallel
 * region of the same size as the team's (libgomp gives team member i
 * the same pool thread from one region to the next; where it does not,
 * only the placement of pages differs, not what is computed). Two
 * costs avoided, both serial and both measured on the 16-core host: a
 * thread's first malloc maps it an arena of its own, and 16 threads
 * doing so at once took 0.5-3.7 ms of a 10 ms decode
 * (glibc.malloc.arena_max=1 showed it); a malloc an array on this
 * thread faulted in every page of the team's scratch from here, 0.3-0.7
 * ms of an 8 ms decode (slab.h). nrt, nseg: attn_scratch_carve's; fast:
 * the fast path's scratch too; ng: attn_fast_carve's row groups. NULL
 * out of memory, nothing held; team->n is the thread count to run with
 * (num_threads).
 */
static struct team *team_alloc(const struct kern *k, int nrt, int nseg, int fast, int ng)
{
	int n = omp_get_max_threads(), bad = 0;
	struct team *tm = calloc(1, sizeof(*tm) + (size_t)n * sizeof(tm->t[0]));
	struct slab count = { 0 };
	size_t part;

	if (!tm)
		return NULL;
	tm->n = n;
	if (team_carve(k, nrt, nseg, fast, ng, &tm->t[0], &count)) {
		free(tm);
		return NULL;
	}
	part = (count.used + 4095) & ~(size_t)4095;
	tm->bytes = part && (size_t)n <= SIZE_MAX / part ? (size_t)n * part : 0;
	tm->mem = tm->bytes ? aligned_alloc(4096, tm->bytes) : NULL;
	if (!tm->mem) {
		free(tm);
		return NULL;
	}
#pragma omp parallel num_threads(n) reduction(+ : bad)
	{
		int i = omp_get_thread_num();
		struct slab s = { tm->mem + (size_t)i * part, 0, part };

		bad += team_carve(k, nrt, nseg, fast, ng, &tm->t[i], &s) != 0;
	}
	if (bad) {
		team_free(tm);
		return NULL;
	}
	return tm;
}

/*
 * Units in any order on any thread: each writes only its own rows and
 * tiles, so the bytes do not depend on the thread count. Returns the
 * number of failures; *nomem is set when a thread could not allocate
 * its scratch (out of memory, not a failure of the emulation: no unit
 * runs), *bad counts replica disagreements.
 */
static int run_units(const struct kern *k, const struct unit *units,
		     size_t nunits, int fast, const struct tile_ops *ops, int maxrt,
		     long *badp, int *nomemp)
{
	const struct fs_case *c = k->c;
	int ng = c->mode == MODE_DECODE ? (k->G + TILE_ROWS - 1) / TILE_ROWS : maxrt;
	int failed = 0;
	long bad = 0;
	struct team *team = team_alloc(k, maxrt, case_segments_max(c), fast, ng);

	*nomemp = !team;
	if (!team)
		return 0;
#pragma omp parallel num_threads(team->n) reduction(+ : bad, failed)
	{
		struct thread_scratch *me = &team->t[omp_get_thread_num()];

#pragma omp for schedule(dynamic, 1)
		for (size_t i = 0; i < nunits; i++) {
			const struct unit *u = &units[i];

			if (k->pv.on && fast ? pv_fast_unit(k, u, ops, &me->x, &me->px, &me->pf, &bad) :
			    k->pv.on ? pv_int8_unit(k, u, &me->x, &me->px, &bad) :
			    fast ? attn_fast_unit(k, u, ops, &me->x, &me->f) :
				   attn_spec_unit(k, u, &me->x, &bad))
				failed++;
			fs_progress_add(k->prog, (long long)((i + 1 < nunits ?
				units[i + 1].tile0 : k->r->n_tiles) - u->tile0));
		}
	}
	team_free(team);
	*badp = bad;
	return failed;
}

/* A piece of a split decode: segments [sg0, sg1) of unit u, its first tile and group. */
struct segpiece {
	size_t u, tile0, group0;
	int sg0, sg1;
};

#define SPLIT_SEGS 4	/* segments per piece: 64 pieces per 256 segments */
#define SPLIT_PIECES_THREAD 16	/* pieces a thread a wave: see split_plan */
#define SPLIT_STATE_BYTES ((size_t)8 << 20)	/* states one wave of units may hold */

/*
 * The plan of fast_split and pv_split: the units' pieces in unit order,
 * and the units cut into waves, each wave's pieces run on any thread at
 * once into one shared array of states, unit after unit in it, then its
 * units' rows merged. A wave holds enough units for SPLIT_PIECES_THREAD
 * pieces a thread (the last pieces of a wave leave threads waiting at
 * its barrier), within SPLIT_STATE_BYTES of states, and at least one:
 * decode 131072 (4 units of 64 pieces, 1.5 MiB of states each) is one
 * wave at 16 threads (6 % faster than a unit a wave on the 16-core
 * host), a unit a wave at 1 to 4, where the extra states' first touch
 * (~2.3 ms a MiB on a 2-core VM) would cost more than the barriers.
 */
struct split_plan {
	struct segpiece *pc;	/* pieces, unit order */
	size_t *p0;		/* unit i's pieces: [p0[i], p0[i + 1]) */
	size_t np, nst;		/* pieces; states a unit (segments x R) */
	size_t wave;		/* units a wave */
	struct rstate *sts;	/* wave x nst */
	float *obuf;
};

static void split_plan_free(struct split_plan *sp)
{
	free(sp->pc), free(sp->p0), free(sp->sts), free(sp->obuf);
}

/* R: the state rows a unit keeps; sn: where each segment's tiles and
 * groups start. */
static int split_plan_make(const struct kern *k, size_t nunits, const struct segnum *sn,
			   size_t R, struct split_plan *sp)
{
	size_t np = 0, ubytes, want, cap;

	memset(sp, 0, sizeof(*sp));
	sp->nst = (size_t)case_segments_max(k->c) * R;
	ubytes = sp->nst * (sizeof(struct rstate) + (size_t)k->D * sizeof(float));
	sp->p0 = malloc((nunits + 1) * sizeof(*sp->p0));
	for (size_t i = 0; i < nunits; i++)
		np += (sn->off[i + 1] - sn->off[i] + SPLIT_SEGS - 1) / SPLIT_SEGS;
	/* enough pieces a wave to keep the threads busy, within the cap */
	want = (SPLIT_PIECES_THREAD * (size_t)omp_get_max_threads() * nunits + np - 1) /
	       (np ? np : 1);
	cap = ubytes ? SPLIT_STATE_BYTES / ubytes : nunits;
	sp->wave = want < cap ? want : cap;
	sp->wave = sp->wave < 1 ? 1 : sp->wave > nunits ? nunits : sp->wave;
	sp->pc = malloc((np ? np : 1) * sizeof(*sp->pc));
	sp->sts = malloc(sp->wave * sp->nst * sizeof(*sp->sts));
	sp->obuf = malloc(sp->wave * sp->nst * k->D * sizeof(float));
	if (!sp->p0 || !sp->pc || !sp->sts || !sp->obuf) {
		split_plan_free(sp);
		return -1;
	}
	for (size_t i = 0; i < sp->wave * sp->nst; i++)
		sp->sts[i].o = &sp->obuf[i * k->D];
	np = 0;
	for (size_t i = 0; i < nunits; i++) {
		int nseg = (int)(sn->off[i + 1] - sn->off[i]);

		sp->p0[i] = np;
		for (int sg = 0; sg < nseg; sg += SPLIT_SEGS) {
			size_t j = sn->off[i] + (size_t)sg;

			sp->pc[np++] = (struct segpiece){ i, sn->tile0[j], sn->group0[j], sg,
							  sg + SPLIT_SEGS < nseg ? sg + SPLIT_SEGS : nseg };
		}
	}
	sp->p0[nunits] = sp->np = np;
	return 0;
}

/* Unit i's states in its wave's array. */
static struct rstate *split_states(const struct split_plan *sp, size_t i)
{
	return &sp->sts[(i % sp->wave) * sp->nst];
}

/* The tiles piece p covers, for the progress count. */
static long long split_piece_tiles(const struct kern *k, const struct split_plan *sp,
				   size_t p)
{
	return (long long)((p + 1 < sp->np ? sp->pc[p + 1].tile0 : k->r->n_tiles) -
			   sp->pc[p].tile0);
}

/*
 * Decode, fast path, few units: per wave, its pieces of SPLIT_SEGS
 * segments on any thread, each writing its segments' states (of the G
 * distinct rows only: attn_fast_segs' stride) and its pre-numbered acc
 * tiles; then the wave's rows merge in segment order, spread over the
 * threads. A segment's state depends on that segment only, so the bytes
 * are those of attn_fast_unit for any thread count. Returns the number
 * of failures; *nomem as run_units.
 */
static int fast_split(const struct kern *k, const struct unit *units,
		      size_t nunits, const struct segnum *sn, const struct tile_ops *ops,
		      int maxrt, int *nomemp)
{
	struct split_plan sp;
	struct team *team;
	int failed = 0;

	*nomemp = 1;
	if (split_plan_make(k, nunits, sn, (size_t)k->G, &sp))
		return 0;
	team = team_alloc(k, maxrt, 1, 1, (k->G + TILE_ROWS - 1) / TILE_ROWS);
	if (!team) {
		split_plan_free(&sp);
		return 0;
	}
	*nomemp = 0;
#pragma omp parallel num_threads(team->n) reduction(+ : failed)
	{
		struct thread_scratch *me = &team->t[omp_get_thread_num()];

		for (size_t w0 = 0; w0 < nunits; w0 += sp.wave) {
			size_t w1 = w0 + sp.wave < nunits ? w0 + sp.wave : nunits;
			long nrows = (long)(w1 - w0) * k->G;

#pragma omp for schedule(dynamic, 1)
			for (size_t p = sp.p0[w0]; p < sp.p0[w1]; p++) {
				const struct segpiece *pc = &sp.pc[p];

				if (attn_fast_segs(k, &units[pc->u], ops, pc->sg0, pc->sg1,
						   pc->tile0, split_states(&sp, pc->u), &me->x, &me->f))
					failed++;
				fs_progress_add(k->prog, split_piece_tiles(k, &sp, p));
			}
			/* the barrier above: every state of the wave is written */
#pragma omp for schedule(dynamic, 1)
			for (long ir = 0; ir < nrows; ir++) {
				size_t i = w0 + (size_t)(ir / k->G);
				int row = (int)(ir % k->G);

				attn_fast_merge(k, &units[i], ops, split_states(&sp, i), &me->x,
						row, row + 1);
			}
			/* and here: merged before the next wave's states */
		}
	}
	team_free(team);
	split_plan_free(&sp);
	return failed;
}

/*
 * INT8 PV, fast path, decode with few units: as fast_split, a wave's
 * pieces on any thread (pv_fast_segs, their tiles and groups numbered
 * before), into one shared array of states; then the wave's merge. Where
 * the fast executor computes the G distinct rows only
 * (pv_fast_state_rows: its replicas are copies of their primaries, so
 * the replica check cannot fail), the array holds those rows' states, as
 * fast_split's does, and the rows merge spread over the threads;
 * otherwise every row's, each unit merged and checked on one thread
 * (attn_spec_finish). Each segment's states and goldens depend on it
 * alone, so the bytes are pv_fast_unit's for any thread count. Returns
 * the number of failures; *nomem as run_units, *badp the replica count.
 */
static int pv_split(const struct kern *k, const struct unit *units, size_t nunits,
		    const struct segnum *sn, const struct tile_ops *ops, int maxrt,
		    long *badp, int *nomemp)
{
	size_t R = (size_t)pv_fast_state_rows(k, maxrt);
	int compact = R < (size_t)maxrt * k->M;
	struct split_plan sp;
	struct team *team;
	int failed = 0;
	long bad = 0;

	*nomemp = 1;
	if (split_plan_make(k, nunits, sn, R, &sp))
		return 0;
	team = team_alloc(k, maxrt, 1, 1, 1);
	if (!team) {
		split_plan_free(&sp);
		return 0;
	}
	*nomemp = 0;
#pragma omp parallel num_threads(team->n) reduction(+ : failed, bad)
	{
		struct thread_scratch *me = &team->t[omp_get_thread_num()];

		for (size_t w0 = 0; w0 < nunits; w0 += sp.wave) {
			size_t w1 = w0 + sp.wave < nunits ? w0 + sp.wave : nunits;
			long nrows = (long)(w1 - w0) * (compact ? k->G : 1);

#pragma omp for schedule(dynamic, 1)
			for (size_t p = sp.p0[w0]; p < sp.p0[w1]; p++) {
				const struct segpiece *pc = &sp.pc[p];

				if (pv_fast_segs(k, &units[pc->u], ops, pc->sg0, pc->sg1,
						 pc->tile0, pc->group0, split_states(&sp, pc->u),
						 (int)R, &me->x, &me->px, &me->pf))
					failed++;
				fs_progress_add(k->prog, split_piece_tiles(k, &sp, p));
			}
			/* the barrier above: every state of the wave is written;
			 * compact: a (unit, row) an iteration, else a unit */
#pragma omp for schedule(dynamic, 1)
			for (long ir = 0; ir < nrows; ir++) {
				size_t i = w0 + (size_t)(compact ? ir / k->G : ir);
				struct rstate *own = me->x.st;

				if (compact) {
					int row = (int)(ir % k->G);

					attn_fast_merge(k, &units[i], ops, split_states(&sp, i), &me->x,
							row, row + 1);
					continue;
				}
				me->x.st = split_states(&sp, i);
				attn_unit_rows(k, &units[i], me->x.rows);
				attn_spec_finish(k, &units[i], &me->x, &bad);
				me->x.st = own;
			}
			/* and here: merged before the next wave's states */
		}
	}
	team_free(team);
	split_plan_free(&sp);
	*badp = bad;
	return failed;
}

/*
 * gqa_map grid_permuted (prefill): the q head work unit b serves, or -1
 * when an earlier unit serves it already (both would compute the same
 * bytes: one emulation of the two). The identity for a correct kernel.
 */
static int grid_served(const struct kern *k, int b)
{
	int h;

	if (k->kn->gqa != KGQA_GRID)
		return b;
	h = kernel_grid_head(b, k->G);
	for (int a = 0; a < b; a++)
		if (kernel_grid_head(a, k->G) == h)
			return -1;
	return h;
}

/* The rows of q heads no unit serves are never written: poison (NaN). */
static void grid_poison(const struct kern *k, struct attn_result *r)
{
	for (int h = 0; h < k->Hq; h++) {
		int served = 0;

		for (int b = 0; b < k->Hq && !served; b++)
			served = kernel_grid_head(b, k->G) == h;
		for (int s = 0; !served && s < k->c->n_seqs; s++)
			for (int t = 0; t < k->T; t++) {
				size_t ri = ((size_t)s * k->T + t) * k->Hq + h;

				for (int d = 0; d < k->D; d++)
					r->out[ri * k->D + d] = NAN;
				for (int j = 0; r->scores && j < k->MAXCTX; j++)
					r->scores[ri * k->MAXCTX + j] = NAN;
				r->row_max[ri] = r->row_sum[ri] = NAN;
			}
	}
}

enum fs_rc attn_run_opts(const struct fs_case *c, const struct lanemap *lm,
			 const struct attn_opts *opts, const struct fs_inputs *in,
			 struct attn_result *r, struct fs_err *err)
{
	struct kern k;
	struct unit *units = NULL;
	struct segnum sn = { 0 };
	size_t nunits = 0;
	double total = 0;
	long bad = 0;
	int failed, nomem = 0, over = 0, maxrt = 1, fast;
	enum attn_exec want = opts ? opts->exec : ATTN_EXEC_AUTO;
	const struct tile_ops *ops = tile_ops_of(TILE_PORTABLE);
	unsigned drop = opts ? opts->drop : 0;
	enum fs_rc rc;

	memset(r, 0, sizeof(*r));
	memset(&k, 0, sizeof(k));
	k.c = c, k.kn = &c->kernel, k.lm = lm, k.in = in, k.r = r;
	k.hw = opts && opts->hw ? opts->hw : lm;
	rc = attn_check_profile(c, lm, k.hw, err);
	if (!rc)
		rc = check_range(c, in, err);
	if (rc)
		return rc;
	k.M = lm->m, k.N = lm->n, k.K = lm->k, k.W = lm->wave;
	k.EA = lm->op[LM_A].elems, k.EB = lm->op[LM_B].elems, k.EC = lm->op[LM_C].elems;
	/* A head_dim that K does not divide (80, 112 with K = 32) takes one
	 * more K-step, zero-padded past head_dim, as a kernel pads it. */
	k.D = c->head_dim, k.ksteps = (k.D + k.K - 1) / k.K, k.G = case_group(c);
	k.BS = c->block_size, k.MAXB = in->MAXB, k.Hq = c->q_heads, k.Hkv = c->kv_heads;
	k.KBS = c->kernel.block_size_assumed ? c->kernel.block_size_assumed : k.BS;
	k.T = in->T, k.MAXCTX = in->MAXCTX;
	k.per_block32 = c->k_scale == KSCALE_PER_BLOCK32;
	logit_init(&k.lmod, c);
	k.dims = c->kernel.head_dim_loaded ? c->kernel.head_dim_loaded : k.D;
	k.ksteps_run = (k.dims + k.K - 1) / k.K;
	if (c_row_slots(&k)) {
		c_row_slots_free(&k);
		return fs_nomem(err, "the C rows' slot table",
				(size_t)k.M * k.W * k.EC * sizeof(int));
	}
	rc = kernel_tables(&k, err);
	if (!rc)
		rc = pv_plan_build(&k, err);
	if (rc) {
		c_row_slots_free(&k);
		return rc;
	}
	if (want != ATTN_EXEC_SCALAR && want != ATTN_EXEC_AUTO &&
	    want != ATTN_EXEC_PORTABLE) {
		enum tile_isa isa = want == ATTN_EXEC_AVX2 ? TILE_AVX2 : TILE_AVX512;

		ops = tile_ops_of(isa);
		if (!ops) {
			c_row_slots_free(&k);
			return fs_fail(err, FS_EINPUT, "exec %s: this CPU does not have it",
				       tile_isa_name(isa));
		}
	} else if (want == ATTN_EXEC_AUTO) {
		ops = tile_ops_best();
	}
	/* INT8 PV: its own executors, lane by lane (pv_int8.c) or fast
	 * (pv_fast.c), which runs replica rows as rows, so needs no
	 * agreement of their slot orders */
	fast = want != ATTN_EXEC_SCALAR && kernel_is_default(&c->kernel) &&
	       k.hw == lm && k.M <= TILE_ROWS &&
	       (k.pv.on ? pv_fast_ok(&k) :
		c->mode == MODE_DECODE ? attn_fast_rows_agree(&k) : 1);
	if (fast && !k.pv.on)
		attn_fast_order(&k);

	/* Work units, then their tile counts, so tile indices are fixed
	 * before any thread runs. */
	if (c->mode == MODE_DECODE && c->kernel.gqa == KGQA_SPILL) {
		/* gqa_map spill: one unit per tile of M consecutive q heads,
		 * reading the kv head of its first */
		int nt = (k.Hq + k.M - 1) / k.M;

		maxrt = 1;
		units = calloc((size_t)c->n_seqs * k.T * nt, sizeof(*units));
		for (int s = 0; units && s < c->n_seqs; s++)
			for (int t = 0; t < c->seqs[s].tokens; t++)
				for (int i = 0; i < nt; i++)
					units[nunits++] = (struct unit){ s, t, i * k.M / k.G, i, 1, 0, 0 };
	} else if (c->mode == MODE_DECODE) {
		int nrt = (k.G + k.M - 1) / k.M;

		maxrt = nrt;
		units = calloc((size_t)c->n_seqs * k.T * k.Hkv, sizeof(*units));
		for (int s = 0; units && s < c->n_seqs; s++)
			for (int t = 0; t < c->seqs[s].tokens; t++)
				for (int h = 0; h < k.Hkv; h++)
					units[nunits++] = (struct unit){ s, t, h, 0, nrt, 0, 0 };
	} else {
		int per = WAVES_PER_GROUP, cap = 0;

		for (int s = 0; s < c->n_seqs; s++)
			cap += k.Hq * ((c->seqs[s].tokens + k.M * per - 1) / (k.M * per));
		maxrt = per;
		units = calloc((size_t)cap, sizeof(*units));
		for (int s = 0; units && s < c->n_seqs; s++) {
			int nrt = (c->seqs[s].tokens + k.M - 1) / k.M;

			for (int b = 0; b < k.Hq; b++) {
				int h = grid_served(&k, b);

				if (h < 0)
					continue;	/* an earlier unit serves it: the same bytes */
				for (int rt = 0; rt < nrt; rt += per)
					units[nunits++] = (struct unit){
						s, 0, h, rt, nrt - rt < per ? nrt - rt : per, 0, 0 };
			}
		}
	}
	if (!units || segnum_make(&k, units, nunits, maxrt, &sn)) {
		free(units);
		c_row_slots_free(&k);
		return fs_nomem(err, "the emulation's work units", 0);
	}
	for (size_t i = 0; i < nunits; i++) {
		units[i].tile0 = sn.tile0[sn.off[i]];
		units[i].group0 = sn.group0[sn.off[i]];
	}
	r->n_tiles = sn.tile0[sn.off[nunits]];
	r->n_groups = sn.group0[sn.off[nunits]];

	r->S = c->n_seqs, r->T = k.T, r->Hq = k.Hq, r->D = k.D, r->MAXCTX = k.MAXCTX;
	r->wave = k.W, r->ec = k.EC, r->rows = k.M;
	r->ksteps_in_acc = k.per_block32 ? k.ksteps : 1;
	r->nseg = case_segments_max(c);
	{
		size_t rows_all = (size_t)c->n_seqs * k.T * k.Hq;
		size_t acc_n = r->n_tiles * (size_t)r->ksteps_in_acc * k.W * k.EC;

		int want_scores = !(drop & ATTN_DROP_SCORES), want_acc = !(drop & ATTN_DROP_ACC);
		int want_seg = r->nseg > 1 && !(drop & ATTN_DROP_SPLITK);

		r->out = alloc_n(rows_all * k.D, sizeof(float), &total, &over);
		if (want_scores)
			r->scores = alloc_n(rows_all * k.MAXCTX, sizeof(float), &total, &over);
		r->row_max = alloc_n(rows_all, sizeof(float), &total, &over);
		r->row_sum = alloc_n(rows_all, sizeof(float), &total, &over);
		if (want_acc) {
			r->acc = alloc_n(acc_n, sizeof(int32_t), &total, &over);
			r->acc_tiles = alloc_n(r->n_tiles * ATTN_TILE_COLS, sizeof(int32_t),
					       &total, &over);
		}
		r->pv_gk = k.pv.on ? k.pv.GK : 0;
		if (want_acc && k.pv.on) {
			r->pv_ea = k.EA, r->pv_dt = k.pv.DT;
			r->p_int8 = alloc_n(r->n_groups * k.W * k.EA, 1, &total, &over);
			r->p_scale = alloc_n(r->n_groups * k.M, sizeof(float), &total, &over);
			r->pv_acc = alloc_n(r->n_groups * k.pv.DT * k.W * k.EC, sizeof(int32_t),
					    &total, &over);
			r->pv_tiles = alloc_n(r->n_groups * ATTN_TILE_COLS, sizeof(int32_t),
					      &total, &over);
		}
		if (want_seg) {
			r->seg_max = alloc_n(rows_all * r->nseg, sizeof(float), &total, &over);
			r->seg_sum = alloc_n(rows_all * r->nseg, sizeof(float), &total, &over);
			r->seg_out = alloc_n(rows_all * r->nseg * k.D, sizeof(float), &total, &over);
		}
		if (!r->out || (want_scores && !r->scores) || !r->row_max || !r->row_sum ||
		    (want_acc && (!r->acc || !r->acc_tiles)) ||
		    (want_acc && k.pv.on && (!r->p_int8 || !r->p_scale || !r->pv_acc ||
					     !r->pv_tiles)) ||
		    (want_seg && (!r->seg_max || !r->seg_sum || !r->seg_out))) {
			attn_free(r);
			free(units);
			segnum_free(&sn);
			c_row_slots_free(&k);
			if (!over)
				return fs_nomem(err, "the emulation's outputs", (size_t)total);
			return fs_budget(err, NULL, "the emulation's output", total,
					 (double)INPUTS_MAX_BYTES,
					 "INPUTS_MAX_BYTES caps a case's tensors; shrink the case, or list fewer tensors under golden:");
		}
		for (size_t i = 0; r->scores && i < rows_all * k.MAXCTX; i++)
			r->scores[i] = -INFINITY;
		if (c->kernel.gqa == KGQA_GRID)
			grid_poison(&k, r);
		if (r->seg_max)
			for (size_t i = 0; i < rows_all * r->nseg; i++)
				r->seg_max[i] = -INFINITY;
	}
	{
		/* decode: G q heads over ceil(G / M) row tiles of M rows */
		int distinct = k.G / ((k.G + k.M - 1) / k.M);

		r->distinct_rows = c->mode == MODE_DECODE ? distinct : k.M;
	}

	r->exec = fast ? ops->name : "scalar";
	k.prog = opts ? opts->progress : NULL;
	fs_progress_total(k.prog, (long long)r->n_tiles);

	/* Decode with fewer units than threads: split the units' split-K
	 * segments over the threads instead (fast_split; pv_split for INT8
	 * PV). */
	if (fast && c->mode == MODE_DECODE && r->nseg > 1 &&
	    nunits < 4 * (size_t)omp_get_max_threads())
		failed = k.pv.on ? pv_split(&k, units, nunits, &sn, ops, maxrt, &bad, &nomem) :
			 fast_split(&k, units, nunits, &sn, ops, maxrt, &nomem);
	else
		failed = run_units(&k, units, nunits, fast, ops, maxrt, &bad, &nomem);
	free(units);
	segnum_free(&sn);
	c_row_slots_free(&k);
	r->replica_mismatch = bad;
	if (nomem) {
		attn_free(r);
		return fs_nomem(err, "a thread's emulation scratch", 0);
	}
	if (failed) {	/* a register read the validated profile cannot place */
		attn_free(r);
		return fs_fail(err, FS_EINTERNAL,
			       "emulation failed: %d work units could not read their registers",
			       failed);
	}
	return FS_OK;
}
