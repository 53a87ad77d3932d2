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

static size_t unit_tiles(const struct kern *k, const struct unit *u,
			 const struct row *rows)
{
	size_t n = 0;

	for (int sg = 0; sg < case_segments_of(k->c, u->s); sg++)
		n += attn_seg_tiles(k, u, rows, sg);
	return n;
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
			return fs_fail(err, FS_EINPUT,
				       "kernel: adjacent-column beliefs need lanes holding equal shares of each C row; %s does not",
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
			return fs_fail(err, FS_EINPUT,
				       "kernel: c_rows interleaved needs lanes holding equal shares of each C column; %s does not",
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

static enum fs_rc check_profile(const struct fs_case *c,
				const struct lanemap *lm, const struct lanemap *hw,
				struct fs_err *err)
{
	if (!lm->valid)
		return fs_fail(err, FS_EINPUT, "profile %s is not valid", lm->name);
	if (lm->op[LM_C].type != LM_I32 || lm_dtype_size(lm->op[LM_A].type) != 1 ||
	    lm_dtype_size(lm->op[LM_B].type) != 1)
		return fs_fail(err, FS_EINPUT,
			       "profile %s: the INT8 kernel needs 8-bit A and B and i32 C",
			       lm->name);
	/* Q and K are symmetric int8 ([-clip, clip], poison -128): a u8
	 * operand reads -1 as 255, so no correct kernel runs on one, and the
	 * reference's mismatch would be reported as a mapping bug. */
	for (int op = LM_A; op <= LM_B; op++)
		if (lm->op[op].type == LM_U8)
			return fs_fail_at(err, FS_EINPUT, c->file[0] ? c->file : NULL, 0, 0,
					  "isa: profile %s: %s is u8, but the kernel's Q and K are signed int8 (a u8 operand reads -1 as 255); the INT8 kernel needs i8 A and B",
					  lm->name, op == LM_A ? "a" : "b");
	if (c->k_scale == KSCALE_PER_BLOCK32 && lm->k != 32)
		return fs_fail(err, FS_EINPUT,
			       "k_scale per_block32 needs a K-step of 32 head-dim elements; %s has K = %d",
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
		return fs_fail(err, FS_EINPUT,
			       "kernel: operand_order kq needs a square tile with A and B of one type; %s is %dx%d",
			       lm->name, lm->m, lm->n);
	if (c->kernel.gqa == KGQA_GRID) {
		int G = case_group(c);

		if (c->mode == MODE_DECODE)
			return fs_fail_at(err, FS_EINPUT, c->file[0] ? c->file : NULL, 0, 0,
				       "kernel: gqa_map grid_permuted is a prefill grid (one q head a work unit); decode units serve a kv head's group");
		for (int b = 0; b < c->q_heads; b++)
			if (kernel_grid_head(b, G) >= c->q_heads)
				return fs_fail_at(err, FS_EINPUT, c->file[0] ? c->file : NULL, 0, 0,
					       "kernel: gqa_map grid_permuted: work unit %d would serve q head %d of %d (G %d > kv_heads %d); its writes fall outside out",
					       b, kernel_grid_head(b, G), c->q_heads, G, c->kv_heads);
	}
	if (case_segments_max(c) > ATTN_MAX_SEGMENTS)
		return fs_fail(err, FS_EINPUT,
			       "split_k.segment %d cuts a context into %d segments; at most %d",
			       c->segment, case_segments_max(c), ATTN_MAX_SEGMENTS);
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
 * on one thread before its emulation, 15 % of it at 16 threads.
 */
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
static enum fs_rc check_range(const struct fs_case *c, const struct fs_inputs *in,
			      struct fs_err *err)
{
	const char *f = c->file[0] ? c->file : NULL;
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
	if (isinf(sq) || isinf(sk) || isinf(v))
		return fs_fail_at(err, FS_EINPUT, f, 0, 0,
				  "%s: a value is past f32's range as the kernel stores it (BF16 rounds |x| > 3.39e+38 to inf%s)",
				  isinf(sq) ? "data.q" : isinf(sk) ? "data.k" : "data.v",
				  isinf(sk) && c->k_scale == KSCALE_PER_BLOCK32 ?
				  "; per_block32's fp16 K scale overflows past 65504, |K| > 65504 x clip" : "");
	bound = a * fmax(c->k_scale == KSCALE_PER_BLOCK32 ? sk : sq,
			 fmax(sq * sk, sq * sk * sc));
	if (bound > RANGE_MAX)
		return fs_fail_at(err, FS_EINPUT, f, 0, 0,
				  "data.q, data.k: the f32 score products can reach %.3g (head_dim %d x clip %d^2 x the largest of sQ, sQ sK, sQ sK softmax_scale; max sQ %.3g, max sK %.3g, softmax_scale %.3g), past 2^127 = 1.7e+38: the kernel's f32 arithmetic would overflow; scale Q or K down",
				  bound, in->D, c->clip, sq, sk, sc);
	if ((double)in->MAXCTX * v > RANGE_MAX)
		return fs_fail_at(err, FS_EINPUT, f, 0, 0,
				  "data.v: the f32 PV sums can reach %.3g (%d keys x max |V| %.3g), past 2^127 = 1.7e+38: the kernel's f32 arithmetic would overflow; scale V down",
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

/* A thread's scratch, and the fast path's when fast; 0, or -1 out of
 * memory with nothing held. */
static int thread_alloc(const struct kern *k, int nrt, int nseg, int fast, int ng,
			struct scratch *x, struct fscratch *f)
{
	if (attn_scratch_alloc(k, nrt, nseg, x))
		return -1;
	if (fast && attn_fast_alloc(k, ng, nrt, f)) {
		attn_scratch_free(x);
		return -1;
	}
	return 0;
}

/*
 * Did any thread of the team fail thread_alloc? Every thread must take
 * the same branch after it: a worksharing loop ends in a barrier that
 * waits for the whole team, so a thread that skipped the loop alone
 * would leave the others waiting for ever. Hence the barrier here, and
 * the flag read only after it.
 */
static int team_nomem(int mine, int *flag)
{
	int any;

	if (mine) {
#pragma omp atomic write
		*flag = 1;
	}
#pragma omp barrier
#pragma omp atomic read
	any = *flag;
	return any;
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
	int failed = 0, nomem = 0;
	long bad = 0;

#pragma omp parallel reduction(+ : bad, failed)
	{
		struct scratch x;
		struct fscratch f;
		struct pv_scratch px;
		struct pv_fscratch pf;
		int ng = c->mode == MODE_DECODE ? (k->G + TILE_ROWS - 1) / TILE_ROWS : maxrt;
		/* INT8 PV's fast path has its own scratch (pf), not f */
		int mine = thread_alloc(k, maxrt, case_segments_max(c), fast && !k->pv.on, ng,
					&x, &f);

		if (!mine && k->pv.on && pv_scratch_alloc(k, &px)) {
			attn_scratch_free(&x);
			mine = -1;
		}
		if (!mine && k->pv.on && fast && pv_fast_alloc(k, maxrt, &pf)) {
			attn_scratch_free(&x);
			pv_scratch_free(&px);
			mine = -1;
		}
		if (!team_nomem(mine, &nomem)) {
#pragma omp for schedule(dynamic, 1)
			for (size_t i = 0; i < nunits; i++) {
				if (k->pv.on && fast ? pv_fast_unit(k, &units[i], ops, &x, &px, &pf, &bad) :
				    k->pv.on ? pv_int8_unit(k, &units[i], &x, &px, &bad) :
				    fast ? attn_fast_unit(k, &units[i], ops, &x, &f) :
					   attn_spec_unit(k, &units[i], &x, &bad))
					failed++;
				fs_progress_add(k->prog, (long long)((i + 1 < nunits ?
					units[i + 1].tile0 : k->r->n_tiles) - units[i].tile0));
			}
		}
		if (!mine) {
			attn_scratch_free(&x);
			if (fast && !k->pv.on)
				attn_fast_free(&f);
			if (k->pv.on)
				pv_scratch_free(&px);
			if (k->pv.on && fast)
				pv_fast_free(&pf);
		}
	}
	*badp = bad;
	*nomemp = nomem;
	return failed;
}

/* A piece of fast_split: segments [sg0, sg1) of a unit. */
struct segpiece {
	size_t tile0;
	int sg0, sg1;
};

#define SPLIT_SEGS 4	/* segments per piece: 64 pieces per 256 segments */

/*
 * Decode, fast path, few units: one unit after the other, its pieces of
 * SPLIT_SEGS segments on any thread, each writing its segments' states
 * into one shared array (and its pre-numbered acc tiles); then the
 * unit's rows merge in segment order, spread over the threads. A
 * segment's state depends on that segment only, so the bytes are those of
 * attn_fast_unit for any thread count. The array holds one unit's states
 * (1.5 MiB at 131072 keys), not all units' (6 MiB): fresh memory costs
 * ~2.3 ms per MiB to fault in on this machine, more than the merge's
 * barriers. Returns the number of failures; *nomem as run_units.
 */
static int fast_split(const struct kern *k, const struct unit *units,
		      size_t nunits, const struct tile_ops *ops, int maxrt, int *nomemp)
{
	/* States of the G distinct rows only (attn_fast_segs' stride). */
	size_t R = (size_t)k->G, nst = (size_t)case_segments_max(k->c) * R, np = 0, *p0;
	struct segpiece *pc;
	struct rstate *sts;
	float *obuf;
	struct row *rows;
	int failed = 0, nomem = 0;

	*nomemp = 0;
	p0 = malloc((nunits + 1) * sizeof(*p0));
	rows = malloc((size_t)maxrt * k->M * sizeof(*rows));
	if (!p0 || !rows) {
		free(p0);
		free(rows);
		*nomemp = 1;
		return 0;
	}
	for (size_t i = 0; i < nunits; i++)
		np += (size_t)(case_segments_of(k->c, units[i].s) + SPLIT_SEGS - 1) / SPLIT_SEGS;
	pc = malloc(np * sizeof(*pc));
	sts = malloc(nst * sizeof(*sts));
	obuf = malloc(nst * k->D * sizeof(float));
	if (!pc || !sts || !obuf) {
		free(p0), free(rows), free(pc), free(sts), free(obuf);
		*nomemp = 1;
		return 0;
	}
	for (size_t i = 0; i < nst; i++)
		sts[i].o = &obuf[i * k->D];
	np = 0;
	for (size_t i = 0; i < nunits; i++) {
		int nseg = case_segments_of(k->c, units[i].s);
		size_t tile = units[i].tile0;

		p0[i] = np;
		attn_unit_rows(k, &units[i], rows);
		for (int sg = 0; sg < nseg; sg += SPLIT_SEGS) {
			pc[np] = (struct segpiece){ tile, sg,
						    sg + SPLIT_SEGS < nseg ? sg + SPLIT_SEGS : nseg };
			for (int j = sg; j < pc[np].sg1; j++)
				tile += attn_seg_tiles(k, &units[i], rows, j);
			np++;
		}
	}
	p0[nunits] = np;
#pragma omp parallel reduction(+ : failed)
	{
		struct scratch x;
		struct fscratch f;
		int mine = thread_alloc(k, maxrt, 1, 1, (k->G + TILE_ROWS - 1) / TILE_ROWS,
					&x, &f);

		if (!team_nomem(mine, &nomem)) {
			for (size_t i = 0; i < nunits; i++) {
#pragma omp for schedule(dynamic, 1)
				for (size_t p = p0[i]; p < p0[i + 1]; p++) {
					if (attn_fast_segs(k, &units[i], ops, pc[p].sg0, pc[p].sg1,
							   pc[p].tile0, sts, &x, &f))
						failed++;
					fs_progress_add(k->prog, (long long)((p + 1 < np ?
						pc[p + 1].tile0 : k->r->n_tiles) - pc[p].tile0));
				}
				/* the barrier above: every state of unit i is written */
#pragma omp for schedule(static)
				for (int row = 0; row < k->G; row++)
					attn_fast_merge(k, &units[i], ops, sts, &x, row, row + 1);
				/* and here: merged before the next unit's states */
			}
		}
		if (!mine) {
			attn_scratch_free(&x);
			attn_fast_free(&f);
		}
	}
	free(p0), free(rows), free(pc), free(sts), free(obuf);
	*nomemp = nomem;
	return failed;
}

/* A piece of pv_split: segments [sg0, sg1) of a unit, its first tile and group. */
struct pvpiece {
	size_t tile0, group0;
	int sg0, sg1;
};

/*
 * INT8 PV, fast path, decode with few units: as fast_split, a unit's
 * pieces of SPLIT_SEGS segments on any thread (pv_fast_segs, their tiles
 * and groups numbered before), into one shared array of states; then the
 * unit's merge. Where the fast executor computes the G distinct rows only
 * (pv_fast_state_rows: its replicas are copies of their primaries, so the
 * replica check cannot fail), the array holds those rows' states, as
 * fast_split's does, and the rows merge spread over the threads;
 * otherwise every row's, merged and checked on one thread
 * (attn_spec_finish). Each segment's states and goldens depend on it
 * alone, so the bytes are pv_fast_unit's for any thread count. Returns
 * the number of failures; *nomem as run_units, *badp the replica count.
 */
static int pv_split(const struct kern *k, const struct unit *units, size_t nunits,
		    const struct tile_ops *ops, int maxrt, long *badp, int *nomemp)
{
	size_t R = (size_t)pv_fast_state_rows(k, maxrt);
	int compact = R < (size_t)maxrt * k->M;
	size_t nst = (size_t)case_segments_max(k->c) * R, np = 0, *p0;
	struct pvpiece *pc;
	struct rstate *sts;
	float *obuf;
	struct row *rows;
	int failed = 0, nomem = 0;
	long bad = 0;

	*nomemp = 0;
	p0 = malloc((nunits + 1) * sizeof(*p0));
	rows = malloc((size_t)maxrt * k->M * sizeof(*rows));
	for (size_t i = 0; p0 && i < nunits; i++)
		np += (size_t)(case_segments_of(k->c, units[i].s) + SPLIT_SEGS - 1) / SPLIT_SEGS;
	pc = malloc((np ? np : 1) * sizeof(*pc));
	sts = malloc(nst * sizeof(*sts));
	obuf = malloc(nst * k->D * sizeof(float));
	if (!p0 || !rows || !pc || !sts || !obuf) {
		free(p0), free(rows), free(pc), free(sts), free(obuf);
		*nomemp = 1;
		return 0;
	}
	for (size_t i = 0; i < nst; i++)
		sts[i].o = &obuf[i * k->D];
	np = 0;
	for (size_t i = 0; i < nunits; i++) {
		int nseg = case_segments_of(k->c, units[i].s);
		size_t tile = units[i].tile0, gi = units[i].group0, nt, ngr;

		p0[i] = np;
		attn_unit_rows(k, &units[i], rows);
		for (int sg = 0; sg < nseg; sg += SPLIT_SEGS) {
			pc[np] = (struct pvpiece){ tile, gi, sg,
						   sg + SPLIT_SEGS < nseg ? sg + SPLIT_SEGS : nseg };
			for (int j = sg; j < pc[np].sg1; j++) {
				pv_fast_seg_counts(k, &units[i], rows, j, &nt, &ngr);
				tile += nt, gi += ngr;
			}
			np++;
		}
	}
	p0[nunits] = np;
#pragma omp parallel reduction(+ : failed, bad)
	{
		struct scratch x;
		struct pv_scratch px;
		struct pv_fscratch pf;
		int mine = attn_scratch_alloc(k, maxrt, 1, &x);

		if (!mine && pv_scratch_alloc(k, &px)) {
			attn_scratch_free(&x);
			mine = -1;
		}
		if (!mine && pv_fast_alloc(k, maxrt, &pf)) {
			attn_scratch_free(&x);
			pv_scratch_free(&px);
			mine = -1;
		}
		if (!team_nomem(mine, &nomem)) {
			for (size_t i = 0; i < nunits; i++) {
#pragma omp for schedule(dynamic, 1)
				for (size_t p = p0[i]; p < p0[i + 1]; p++) {
					if (pv_fast_segs(k, &units[i], ops, pc[p].sg0, pc[p].sg1,
							 pc[p].tile0, pc[p].group0, sts, (int)R,
							 &x, &px, &pf))
						failed++;
					fs_progress_add(k->prog, (long long)((p + 1 < np ?
						pc[p + 1].tile0 : k->r->n_tiles) - pc[p].tile0));
				}
				/* the barrier above: every state of unit i is written */
				if (compact) {
#pragma omp for schedule(static)
					for (int row = 0; row < k->G; row++)
						attn_fast_merge(k, &units[i], ops, sts, &x, row, row + 1);
					continue;	/* its barrier: merged before the next unit */
				}
#pragma omp single
				{
					struct rstate *own = x.st;

					x.st = sts;
					attn_unit_rows(k, &units[i], x.rows);
					attn_spec_finish(k, &units[i], &x, &bad);
					x.st = own;
				}
				/* and single's: merged before the next unit's states */
			}
		}
		if (!mine) {
			attn_scratch_free(&x);
			pv_scratch_free(&px);
			pv_fast_free(&pf);
		}
	}
	free(p0), free(rows), free(pc), free(sts), free(obuf);
	*badp = bad;
	*nomemp = nomem;
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
	struct row *rows;
	size_t nunits = 0, rows_n;
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
	rc = check_profile(c, lm, k.hw, err);
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
	rows_n = (size_t)maxrt * k.M;
	rows = malloc(rows_n * sizeof(*rows));
	if (!units || !rows) {
		free(units);
		free(rows);
		c_row_slots_free(&k);
		return fs_nomem(err, "the emulation's work units", 0);
	}
	for (size_t i = 0; i < nunits; i++) {
		attn_unit_rows(&k, &units[i], rows);
		units[i].tile0 = r->n_tiles;
		r->n_tiles += unit_tiles(&k, &units[i], rows);
		units[i].group0 = r->n_groups;
		if (k.pv.on)
			r->n_groups += pv_unit_groups(&k, &units[i], rows);
	}
	free(rows);

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
		failed = k.pv.on ? pv_split(&k, units, nunits, ops, maxrt, &bad, &nomem) :
			 fast_split(&k, units, nunits, ops, maxrt, &nomem);
	else
		failed = run_units(&k, units, nunits, fast, ops, maxrt, &bad, &nomem);
	free(units);
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
