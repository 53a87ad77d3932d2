/*
 * attn_common.c - what both executors of the emulated kernel share (see
 * attn_int.h): the rows of a work unit, which keys a row sees, the
 * split-K segment bounds, the block walk and the K and V scales read
 * through it, the split-K merge and the store of a tile's C registers.
 * These define the data layout and the order of the final sums; the
 * scalar executor (attn_spec.c) and the fast one (attn_fast.c) both call
 * them, so the two cannot disagree on any of it.
 *
 * Layout of the paged cache (inputs.h), through the block table:
 *   k_cache  [NB][Hkv][D/16][BS][16] i8   (attn_k_offset, attn_int.h)
 *   v_cache  [NB][Hkv][D][BS]             (attn_v_col)
 *   k_scale, v_scale  [NB][BS][Hkv]       (per-token-head)
 *   v_scale_ch        [Hkv][D]            (V per_channel: attn_v_chan)
 * Example (D = 256, BS = 16, Hkv = 4): key 37 of kv head 2, dim 100, with
 * block_table[s][2] = 9, is k_cache[9][2][6][5][4], byte 157268.
 *
 * Nothing here holds state: every function reads the kernel (struct
 * kern) and writes only the rows or tile it is given, so any thread may
 * call it for its own unit.
 */
#include "attn_int.h"

#include <math.h>
#include <string.h>

#include "../common/fexp.h"

/*
 * The q_position bugs beside chunk (kernel.h, enum kern_qpos), on a row
 * whose q_pos is the absolute one. With the history h = context - T (the
 * chunk's first position) and the tile's N keys:
 *   chunk_keys    the key loop starts at h (k_lo): the history is skipped
 *   future        q_pos = context - 1 for every query of the chunk
 *   tile_rounded  q_pos = N (ceil(context / N) - ceil(T / N)) + t: the
 *                 offset h counted in whole tiles (context 40, T 10, N 16:
 *                 16 (3 - 1) = 32, not 30)
 * off_by_one acts in attn_key_visible.
 */
static void row_q_position(const struct kern *k, int s, struct row *w)
{
	const struct case_seq *q = &k->c->seqs[s];
	int N = k->N;

	w->k_lo = 0;
	switch (k->kn->q_position) {
	case KQPOS_CHUNK_KEYS:
		w->k_lo = q->context - q->tokens;
		break;
	case KQPOS_FUTURE:
		w->q_pos = q->context - 1;
		break;
	case KQPOS_TILE_ROUNDED:
		w->q_pos = N * ((q->context + N - 1) / N - (q->tokens + N - 1) / N) + w->t;
		break;
	case KQPOS_ABSOLUTE:
	case KQPOS_OFF_BY_ONE:
		break;
	}
}

static void rows_of_tile(const struct kern *k, const struct unit *u, int rt,
			 struct row *rows)
{
	const struct fs_inputs *in = k->in;

	for (int m = 0; m < k->M; m++) {
		struct row *w = &rows[m];

		memset(w, 0, sizeof(*w));
		if (k->c->mode == MODE_DECODE && k->kn->gqa == KGQA_SPILL) {
			/* gqa_map spill: tile rt holds q heads rt*M + m; the
			 * unit reads kv head u->h, its first head's */
			w->t = u->t;
			w->qh = rt * k->M + m;
			w->primary = 1;
			if (w->qh >= k->Hq) {
				w->valid = w->primary = 0;
				w->qh = 0;
				continue;	/* past the heads: a zero A row */
			}
		} else if (k->c->mode == MODE_DECODE) {
			int local = (rt * k->M + m) % k->G;

			/* Packed rows past the group: the kernel zero-fills
			 * their A rows, as a padding row's (acc 0). */
			if (k->c->decode_rows == ROWS_PACKED && rt * k->M + m >= k->G) {
				w->valid = w->primary = 0;
				continue;
			}
			w->t = u->t;
			w->qh = k->kn->gqa_modulo ? u->h + local * k->Hkv :
						    u->h * k->G + local;
			/* The first occurrence of a head writes the results;
			 * its replicas must agree with it. */
			w->primary = rt * k->M + m == local;
		} else {
			w->t = rt * k->M + m;
			w->qh = u->h;
			w->primary = 1;
		}
		w->valid = w->t < k->c->seqs[u->s].tokens;
		if (!w->valid) {
			w->primary = 0;
			continue;
		}
		w->q_pos = k->kn->q_pos_chunk ? w->t : in->q_pos[u->s * k->T + w->t];
		row_q_position(k, u->s, w);
		{
			size_t qi = ((size_t)u->s * k->T + w->t) * k->Hq + w->qh;

			w->sq = in->q_scale[qi];
			w->q = &in->q_int8[qi * k->D];
		}
	}
}

int attn_key_visible(const struct kern *k, const struct row *w, int seg_end,
		       int j)
{
	/* q_position off_by_one lets key q_pos + 1 through; window_edge
	 * moves the window's left edge by one key (+1: W + 1 keys seen). */
	int last = w->q_pos + (k->kn->q_position == KQPOS_OFF_BY_ONE);

	if (!w->valid || j >= seg_end || j > last || j < w->k_lo)
		return 0;
	if (k->c->sliding_window > 0 &&
	    j <= w->q_pos - k->c->sliding_window - k->kn->window_edge)
		return 0;
	return 1;
}

int attn_tile_needed(const struct kern *k, const struct row *rows, int kb,
		       int seg_end)
{
	for (int m = 0; m < k->M; m++)
		for (int n = 0; n < k->N && kb + n < seg_end; n++)
			if (attn_key_visible(k, &rows[m], seg_end, kb + n))
				return 1;
	return 0;
}

void attn_seg_bounds(const struct kern *k, int s, int sg, int *lo, int *hi)
{
	int ctx = k->c->seqs[s].context;

	if (k->c->segment <= 0) {
		*lo = 0;
		*hi = ctx;
		return;
	}
	*lo = sg * k->c->segment;
	*hi = *lo + k->c->segment < ctx ? *lo + k->c->segment : ctx;
}

void attn_unit_rows(const struct kern *k, const struct unit *u, struct row *rows)
{
	for (int i = 0; i < u->nrt; i++)
		rows_of_tile(k, u, u->rt0 + i, &rows[i * k->M]);
}

size_t attn_seg_tiles(const struct kern *k, const struct unit *u,
			const struct row *rows, int sg)
{
	size_t n = 0;
	int lo, hi;

	attn_seg_bounds(k, u->s, sg, &lo, &hi);
	for (int kb = lo; kb < hi; kb += k->N)
		for (int i = 0; i < u->nrt; i++)
			n += attn_tile_needed(k, &rows[i * k->M], kb, hi);
	return n;
}

/*
 * The scale tensors are [NB][BS][Hkv] (per_block32: [NB][BS][Hkv][D/32]
 * f16): the kernel's index, its block start (attn_block_start: block *
 * KBS * Hkv scales, or that offset in bytes wrapped to int32) plus (slot
 * * Hkv + g), taken apart again with the true BS, is the (block, slot,
 * head) it reads; the same when KBS = BS. A block past the pool reads NaN
 * (inputs_k_scale).
 */
float attn_k_scale(const struct kern *k, const struct unit *u, int tok, int ks)
{
	const struct fs_inputs *in = k->in;
	int blk = attn_k_scale_block(k, u->s, tok), d = ks * k->K;
	size_t per = k->c->k_scale == KSCALE_PER_BLOCK32 ? (size_t)k->D / 32 : 1;
	size_t st = blk < 0 ? SIZE_MAX :
		    attn_block_start(k, blk, (size_t)k->KBS * k->Hkv * per, per > 1 ? 2 : 4);
	size_t e, si;

	if (st == SIZE_MAX)
		return inputs_k_scale(k->c, in, -1, 0, 0, d);
	e = st + ((size_t)(tok % k->KBS) * k->Hkv + attn_kv_head(k, u)) * per +
	    (per > 1 ? (size_t)d / 32 : 0);
	si = e / per;
	return inputs_k_scale(k->c, in, (int)(si / ((size_t)k->BS * k->Hkv)),
			      (int)(si / k->Hkv % k->BS), (int)(si % k->Hkv),
			      per > 1 ? (int)(e % per) * 32 : d);
}

const float *attn_v_chan(const struct kern *k, const struct unit *u)
{
	int g = attn_kv_head(k, u);

	if (!k->in->v_scale_ch || g < 0 || g >= k->Hkv)
		return NULL;
	return &k->in->v_scale_ch[(size_t)g * k->D];
}

/*
 * Key tok's V column (attn_int.h). A block outside the pool (attn_block
 * -1), or one a sparse pool does not store, reads as a poisoned spare
 * slot does: INPUTS_POISON with a NaN scale, or NaN for float V.
 */
struct vcol attn_v_col(const struct kern *k, const struct unit *u, int tok)
{
	static const int8_t poison_i8 = INPUTS_POISON;
	static const float poison_f = NAN;
	const struct fs_inputs *in = k->in;
	/* i8: one byte an element (int8, q8_0, q4_0) */
	int g = attn_kv_head(k, u), i8 = case_v_bytes(k->c->v_dtype);
	int qb = case_v_blocks(k->c->v_dtype);
	int blk = attn_v_block(k, u->s, tok), slot = tok % k->KBS;
	/* The kernel's offsets: its block start (block_offset: the pool's
	 * stride, one dense block, or wrapped to int32) and its block size
	 * (KBS); the tensors' sizes are the true ones. Elements from n on
	 * lie past v_cache. */
	size_t b0 = blk < 0 ? SIZE_MAX : attn_block_start(k, blk, attn_block_elems(k), i8 ? 1 : 4);
	/* V's scales: per slot one f32 (int8), or D/32 fp16 (q8_0, q4_0);
	 * si is the kernel's index of the key's first, sb the elements of
	 * one block's scales in the tensor */
	size_t per = qb ? (size_t)k->D / 32 : 1, sb = (size_t)k->BS * k->Hkv * per;
	size_t s0 = blk < 0 ? SIZE_MAX :
		    attn_block_start(k, blk, (size_t)k->KBS * k->Hkv * per, qb ? 2 : 4);
	size_t a = b0 + (size_t)g * k->D * k->KBS + slot;
	size_t vn = attn_pool_elems(k), sn = (size_t)in->NB * sb;
	size_t si = s0 + ((size_t)slot * k->Hkv + g) * per, be = inputs_block_elems(in);
	struct vcol v = { NULL, NULL, 0.0f, (size_t)k->KBS, k->D, NULL, 0, NULL, 0, 0, NULL };
	ptrdiff_t at;

	if (b0 == SIZE_MAX || a >= vn)
		blk = -1;	/* the whole column past the tensor */
	else if (a + (size_t)(k->D - 1) * k->KBS >= vn)
		v.n = (int)((vn - a + (size_t)k->KBS - 1) / k->KBS);
	at = blk < 0 ? -1 : attn_stored(in, a);
	if (blk >= 0 && in->pool_blocks &&
	    (at < 0 || a % be + (size_t)(v.n - 1) * k->KBS >= be)) {
		/* sparse, and the column leaves its block or starts in one
		 * not stored: element by element (attn_v_elem) */
		v.gather = in;
		v.a = a;
		at = 0;
	}
	v.qblocks = qb;
	v.qoff = k->c->v_dtype == VDT_Q4_0 ? 8 : 0;
	if (blk < 0 || at < 0) {
		v.stride = 0;
		v.i8 = i8 ? &poison_i8 : NULL;
		v.f = v.i8 ? NULL : &poison_f;
		v.scale = NAN;
		return v;
	}
	if (i8) {
		ptrdiff_t sat = -1;

		/* the scales' stored place; a key's D/32 fp16 scales must lie
		 * in one stored block (an int32-wrapped start may not: NaN) */
		if (s0 != SIZE_MAX && si < sn && si % sb + per <= sb) {
			int m = inputs_block_at(in, (long)(si / sb));

			if (m >= 0)
				sat = (ptrdiff_t)((size_t)m * sb + si % sb);
		}
		v.i8 = v.gather ? &poison_i8 : &in->v_cache_i8[at];
		if (qb)		/* the slot's D/32 fp16 scales, or none: NaN */
			v.s16 = sat >= 0 ? &in->v_scale16[sat] : NULL;
		else if (in->v_scale_ch)	/* per_channel: the head's, no slot's */
			v.sch = attn_v_chan(k, u);
		else
			v.scale = sat >= 0 ? in->v_scale[sat] : NAN;
		if (in->v_scale_ch && !v.sch)
			v.scale = NAN;
	} else {
		v.f = v.gather ? &poison_f : &in->v_cache_f[at];
	}
	return v;
}

/*
 * Is C slot s the one the kernel reads its entry from? A profile may hold
 * a C entry in several (lane, register) slots (replicas: N); the hardware
 * writes the same sum into each, and the kernel consumes the entry once,
 * from its first slot in register order (lane-major), as the RDNA3
 * kernels read their replicated A and B from the first lanes. Reading
 * every replica would count the entry N times in the softmax sum.
 */
int attn_c_primary(const struct lanemap_operand *oc, int s)
{
	return oc->owner[(oc->row[s] * oc->cols + oc->col[s]) * oc->replicas] == s;
}

/*
 * Do C rows a and b of a tile sum their slots in one order (the same
 * column at each step, a new lane at the same steps)? Then a replica
 * row's floats are its primary's bit for bit; otherwise the same terms
 * are added in another order and may round apart.
 */
int attn_rows_same_order(const struct kern *k, int a, int b)
{
	const int *col = k->col_write;
	const int *sa = &k->rowslots[a * k->rowcap], *sb = &k->rowslots[b * k->rowcap];

	if (k->rowcount[a] != k->rowcount[b])
		return 0;
	for (int i = 0; i < k->rowcount[a]; i++) {
		int na = i == 0 || sa[i] / k->EC != sa[i - 1] / k->EC;
		int nb = i == 0 || sb[i] / k->EC != sb[i - 1] / k->EC;

		if (col[sa[i]] != col[sb[i]] || na != nb)
			return 0;
	}
	return 1;
}

/* A segment's partial output of dim d: o / l, times sV[d] when chan. */
static inline float seg_norm(const struct rstate *x, int d, int chan, const float *sv)
{
	float o = x->o[d] / x->l;

	return chan ? o * (sv ? sv[d] : NAN) : o;
}

/*
 * The split-K merge of one row. The correct kernel skips a segment that
 * saw no key (m = -inf). split_merge empty_nan has no such guard: the
 * empty segment's e^(m - M) (NaN when every segment is empty: -inf -
 * -inf) and its o / l = 0 / 0 enter the sums. split_merge stale_lse:
 * the empty segment stores nothing, so the merge reads what its slot
 * holds, the state the row's previous segment stored (zeros before
 * segment 0).
 */
void attn_merge_row(const struct kern *k, const struct unit *u,
		    const struct row *w, struct rstate *const *segs, int nseg,
		    attn_merge_fn step)
{
	struct attn_result *r = k->r;
	size_t ri = ((size_t)u->s * k->T + w->t) * k->Hq + w->qh;
	float mx = -INFINITY, l = 0.0f;
	float *out = &r->out[ri * k->D];
	enum kern_merge bug = k->kn->split_merge;
	const struct rstate *as[ATTN_MAX_SEGMENTS];
	static const struct rstate zero = { 0.0f, 0.0f, NULL };
	/* INT8 PV with V per_channel: o sums acc / clip in V's int8 units;
	 * the segment's epilogue takes it to V's by sV[d] after normalising,
	 * (o / l) * sV[d], two f32 roundings, the partial the merge weighs
	 * (and seg_out) as f32 PV's o / l. No scale (a kv head past Hkv):
	 * NaN. */
	int chan = k->pv.on && k->in->v_scale_ch;
	const float *sv = chan ? attn_v_chan(k, u) : NULL;

	/* What the merge reads for each segment. */
	for (int i = 0; i < nseg; i++) {
		as[i] = segs[i];
		if (bug == KMERGE_STALE_LSE && segs[i]->m == -INFINITY)
			as[i] = i ? as[i - 1] : &zero;
	}
	for (int i = 0; i < nseg; i++)
		if (as[i]->m > mx)
			mx = as[i]->m;
	for (int d = 0; d < k->D; d++)
		out[d] = 0.0f;
	for (int i = 0; i < nseg; i++) {
		const struct rstate *x = as[i];
		float wgt;

		if (x->m == -INFINITY && bug != KMERGE_EMPTY_NAN)
			continue;
		if (!x->o) {	/* stale zeros: weight 0, out 0 */
			if (r->seg_max) {
				size_t si = ri * r->nseg + i;

				r->seg_max[si] = r->seg_sum[si] = 0.0f;
				memset(&r->seg_out[si * k->D], 0, (size_t)k->D * sizeof(float));
			}
			continue;
		}
		wgt = k->kn->merge_no_rescale ? x->l : x->l * attn_exp(k, x->m - mx);
		l += wgt;
		/* Partial outputs are kept normalized, as split-K kernels
		 * store them: o / l, weighted by l * e^(m - M). A libm call
		 * a d in the plain loop (fmaf, no FMA in the base ISA):
		 * 0.3 ms a row of a 256-segment decode */
		if (step && !chan)
			step(out, x->o, x->l, wgt, k->D);
		else
			for (int d = 0; d < k->D; d++)
				out[d] = fmaf(seg_norm(x, d, chan, sv), wgt, out[d]);	/* fused */
		if (r->seg_max) {
			size_t si = ri * r->nseg + i;

			r->seg_max[si] = x->m;
			r->seg_sum[si] = x->l;
			for (int d = 0; d < k->D; d++)
				r->seg_out[si * k->D + d] = seg_norm(x, d, chan, sv);
		}
	}
	/* Only a row that sees nothing (every segment empty, l exactly 0)
	 * gives 0; a NaN that reached l stays NaN, as in an unguarded
	 * kernel's division. */
	for (int d = 0; d < k->D; d++)
		out[d] = l == 0.0f ? 0.0f : out[d] / l;
	r->row_max[ri] = mx;
	r->row_sum[ri] = l;
}

void attn_acc_store(const struct kern *k, const struct unit *u, size_t tile,
		    int rt, int kb, const int32_t *creg)
{
	struct attn_result *r = k->r;
	size_t n = (size_t)r->ksteps_in_acc * k->W * k->EC;
	int32_t *tl = &r->acc_tiles[tile * ATTN_TILE_COLS];

	memcpy(&r->acc[tile * n], creg, n * sizeof(int32_t));
	tl[0] = u->s;
	tl[1] = u->h;
	tl[2] = k->c->mode == MODE_DECODE ? u->t : rt * k->M;
	tl[3] = kb;
	/* gqa_map spill (decode; prefill's row tiles are tokens, as the
	 * correct kernel's): the row tile of kv head u->h its first head
	 * would be */
	tl[4] = k->kn->gqa == KGQA_SPILL && k->c->mode == MODE_DECODE ?
		rt * k->M % k->G / k->M : rt;
}
