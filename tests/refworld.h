/*
 * refworld.h - a hand-built world for the reference and comparison tests:
 * a tiny case and its tensors written directly in the docs/design.md 3.2 layouts
 * (block tables by hand, every unread byte poisoned), with helpers to put
 * single Q, K and V values at logical positions. Header-only, shared by
 * tests/test_ref.c and tests/test_compare.c.
 */
#ifndef REFWORLD_H
#define REFWORLD_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ref/ref.h"
#include "../sim/attn/inputs.h"

struct spec {
	enum case_mode mode;
	int S, Hq, Hkv, D, BS, NB;
	int context[4], tokens[4];
	int table[4][8];	/* block tables, by hand */
	enum case_kscale ks;
	enum case_vdtype vd;
	double scale;		/* 0: 1 / sqrt(D) */
	int window;
	int bstr;		/* cache.block_stride in elements; 0 = dense */
};

struct world {
	struct fs_case c;
	struct fs_inputs in;
};

static inline size_t row_of(const struct world *w, int s, int t, int qh)
{
	return ((size_t)s * w->in.T + t) * w->in.Hq + qh;
}

static inline void page(const struct world *w, int s, int j, int *blk, int *slot)
{
	*blk = w->in.block_table[s * w->in.MAXB + j / w->in.BS];
	*slot = j % w->in.BS;
}

/* Elements from one block's start to the next (block_stride, or dense). */
static inline size_t blk_elems(const struct world *w)
{
	return w->c.block_stride ? (size_t)w->c.block_stride :
	       (size_t)w->in.Hkv * w->in.D * w->in.BS;
}

/* Byte of K[j][g][d]: [blk][g][d / 16][slot][d % 16], block blk at
 * blk * blk_elems. */
static inline size_t k_at(const struct world *w, int s, int j, int g, int d)
{
	const struct fs_inputs *in = &w->in;
	int blk, slot;

	page(w, s, j, &blk, &slot);
	return (size_t)blk * blk_elems(w) +
	       (((size_t)g * (in->D / 16) + d / 16) * in->BS + slot) * 16 + d % 16;
}

/* V[j][g][d]: [blk][g][d][slot]. */
static inline size_t v_at(const struct world *w, int s, int j, int g, int d)
{
	int blk, slot;

	page(w, s, j, &blk, &slot);
	return (size_t)blk * blk_elems(w) + ((size_t)g * w->in.D + d) * w->in.BS + slot;
}

/* Scale of (j, g): [blk][slot][g]. */
static inline size_t s_at(const struct world *w, int s, int j, int g)
{
	int blk, slot;

	page(w, s, j, &blk, &slot);
	return ((size_t)blk * w->in.BS + slot) * w->in.Hkv + g;
}

/* Logical k / v row of (s, j, g). */
static inline size_t l_at(const struct world *w, int s, int j, int g)
{
	return (((size_t)s * w->in.MAXCTX + j) * w->in.Hkv + g) * w->in.D;
}

static inline void *xalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	assert_non_null(p);
	return p;
}

static inline void world_init(struct world *w, const struct spec *sp)
{
	struct fs_case *c = &w->c;
	struct fs_inputs *in = &w->in;
	size_t nq, nl, nk, ns;

	memset(w, 0, sizeof(*w));
	c->mode = sp->mode;
	c->q_heads = sp->Hq;
	c->kv_heads = sp->Hkv;
	c->head_dim = sp->D;
	c->softmax_scale = sp->scale ? sp->scale : 1 / sqrt((double)sp->D);
	c->sliding_window = sp->window;
	c->block_size = sp->BS;
	c->num_blocks = sp->NB;
	c->block_stride = sp->bstr;
	c->k_scale = sp->ks;
	c->v_dtype = sp->vd;
	c->n_seqs = sp->S;
	c->clip = 127;
	for (int s = 0; s < sp->S; s++) {
		c->seqs[s].context = sp->context[s];
		c->seqs[s].tokens = sp->tokens[s];
		c->seqs[s].history = sp->context[s] - sp->tokens[s];
	}
	c->check.out_cosine_min = c->check.out_max_abs_max = NAN;
	c->check.score_max_abs_max = c->check.score_nmse_max = NAN;
	c->check.kld_mean_max = c->check.kld_median_max = NAN;
	c->check.kld_p99_max = c->check.top1_min = c->check.rms_dp_max = NAN;

	in->S = sp->S;
	in->T = case_tokens_max(c);
	in->Hq = sp->Hq;
	in->Hkv = sp->Hkv;
	in->D = sp->D;
	in->BS = sp->BS;
	in->NB = sp->NB;
	in->NM = sp->NB;	/* a dense pool: every block stored */
	in->BSTR = (size_t)sp->bstr;
	in->MAXB = case_table_width(c);
	in->MAXCTX = case_context_max(c);
	nq = (size_t)in->S * in->T * in->Hq;
	nl = (size_t)in->S * in->MAXCTX * in->Hkv * in->D;
	nk = (size_t)in->NB * blk_elems(w);
	ns = (size_t)in->NB * in->BS * in->Hkv;
	in->q = xalloc(nq * in->D, sizeof(float));
	in->k = xalloc(nl, sizeof(float));
	in->v = xalloc(nl, sizeof(float));
	in->q_int8 = xalloc(nq * in->D, 1);
	in->q_scale = xalloc(nq, sizeof(float));
	in->k_cache = xalloc(nk, 1);
	in->k_scale = xalloc(ns, sizeof(float));
	in->k_scale16 = xalloc(ns * (in->D / 32 ? in->D / 32 : 1), 2);
	in->v_cache_i8 = xalloc(nk, 1);
	in->v_scale = xalloc(ns, sizeof(float));
	in->v_cache_f = xalloc(nk, sizeof(float));
	in->block_table = xalloc((size_t)in->S * in->MAXB, sizeof(int32_t));
	in->context_lens = xalloc((size_t)in->S, sizeof(int32_t));
	in->q_pos = xalloc((size_t)in->S * in->T, sizeof(int32_t));

	/* Poison everything, then clear what the sequences use. */
	memset(in->k_cache, 0x80, nk);
	memset(in->v_cache_i8, 0x80, nk);
	for (size_t i = 0; i < ns; i++)
		in->k_scale[i] = in->v_scale[i] = NAN;
	for (size_t i = 0; i < ns * (in->D / 32 ? in->D / 32 : 1); i++)
		in->k_scale16[i] = 0x7e00;	/* f16 NaN */
	for (size_t i = 0; i < nk; i++)
		in->v_cache_f[i] = NAN;
	for (int s = 0; s < in->S; s++) {
		in->context_lens[s] = sp->context[s];
		for (int b = 0; b < in->MAXB; b++)
			in->block_table[s * in->MAXB + b] =
				b < case_blocks_of(c, s) ? sp->table[s][b] : -1;
		for (int t = 0; t < in->T; t++)
			in->q_pos[s * in->T + t] = case_q_pos(c, s, t);
		for (int j = 0; j < sp->context[s]; j++) {
			for (int g = 0; g < in->Hkv; g++) {
				for (int d = 0; d < in->D; d++) {
					in->k_cache[k_at(w, s, j, g, d)] = 0;
					in->v_cache_i8[v_at(w, s, j, g, d)] = 0;
					in->v_cache_f[v_at(w, s, j, g, d)] = 0;
				}
				in->v_scale[s_at(w, s, j, g)] = 1;
				in->k_scale[s_at(w, s, j, g)] =
					sp->ks == KSCALE_PER_TENSOR ||
					sp->ks == KSCALE_PER_HEAD ? NAN : 1;
				for (int kb = 0; kb < in->D / 32; kb++)
					in->k_scale16[s_at(w, s, j, g) * (in->D / 32) +
						      kb] = 0x3c00;	/* 1.0 */
			}
		}
	}
	if (sp->ks == KSCALE_PER_TENSOR)
		in->k_scale[0] = 1;
	if (sp->ks == KSCALE_PER_HEAD)
		for (int g = 0; g < in->Hkv; g++)
			in->k_scale[g] = 1;
	for (size_t i = 0; i < nq; i++)
		in->q_scale[i] = 1;
}

static inline void world_free(struct world *w)
{
	inputs_free(&w->in);	/* the world's tensors are plain calloc'd buffers */
}

static inline void put_q(struct world *w, int s, int t, int qh, int d, int v)
{
	w->in.q_int8[row_of(w, s, t, qh) * w->in.D + d] = (int8_t)v;
}

static inline void put_k(struct world *w, int s, int j, int g, int d, int v)
{
	w->in.k_cache[k_at(w, s, j, g, d)] = (int8_t)v;
}

static inline void put_v(struct world *w, int s, int j, int g, int d, int v)
{
	w->in.v_cache_i8[v_at(w, s, j, g, d)] = (int8_t)v;
}

/*
 * assert_close needs cmocka (fail_msg): include this header after it.
 */
static inline void assert_close(double got, double want)
{
	if (!(fabs(got - want) <= 1e-12 * fabs(want) + 1e-300))
		fail_msg("got %.17g, want %.17g", got, want);
}

/*
 * Decode, Hq 2, Hkv 1, D 32, BS 2, context 3, block table {2, 0}:
 * key 0 -> block 2 slot 0, key 1 -> block 2 slot 1, key 2 -> block 0 slot 0.
 *
 *   Q int8       head 0: d0 = 1, d17 = 2      head 1: d1 = -1, d31 = 3
 *   K int8       key 0: d0 = 2, d1 = 5, d17 = -1
 *                key 1: d0 = 1, d17 = 3, d31 = 1
 *                key 2: d0 = -4, d1 = -2, d31 = 2
 *   acc          head 0: 2 - 2 = 0,  1 + 6 = 7,  -4
 *                head 1: -5,         3,          2 + 6 = 8
 *   sQ 0.5, 0.25;  sK 1, 0.25, 0.5
 *   V int8 (x v_scale 0.5, 0.25, 1)   d0: 10, 20, 30   d5: -1, 2, 0
 */
static const struct spec main_spec = {
	.mode = MODE_DECODE, .S = 1, .Hq = 2, .Hkv = 1, .D = 32, .BS = 2,
	.NB = 3, .context = { 3 }, .tokens = { 1 }, .table = { { 2, 0 } },
	.ks = KSCALE_PER_TOKEN_HEAD, .vd = VDT_INT8,
};

static inline void main_world(struct world *w, const struct spec *sp)
{
	world_init(w, sp);
	put_q(w, 0, 0, 0, 0, 1);
	put_q(w, 0, 0, 0, 17, 2);
	put_q(w, 0, 0, 1, 1, -1);
	put_q(w, 0, 0, 1, 31, 3);
	put_k(w, 0, 0, 0, 0, 2);
	put_k(w, 0, 0, 0, 1, 5);
	put_k(w, 0, 0, 0, 17, -1);
	put_k(w, 0, 1, 0, 0, 1);
	put_k(w, 0, 1, 0, 17, 3);
	put_k(w, 0, 1, 0, 31, 1);
	put_k(w, 0, 2, 0, 0, -4);
	put_k(w, 0, 2, 0, 1, -2);
	put_k(w, 0, 2, 0, 31, 2);
	w->in.q_scale[0] = 0.5f;
	w->in.q_scale[1] = 0.25f;
	w->in.k_scale[s_at(w, 0, 0, 0)] = 1;
	w->in.k_scale[s_at(w, 0, 1, 0)] = 0.25f;
	w->in.k_scale[s_at(w, 0, 2, 0)] = 0.5f;
	put_v(w, 0, 0, 0, 0, 10);
	put_v(w, 0, 1, 0, 0, 20);
	put_v(w, 0, 2, 0, 0, 30);
	put_v(w, 0, 0, 0, 5, -1);
	put_v(w, 0, 1, 0, 5, 2);
	w->in.v_scale[s_at(w, 0, 0, 0)] = 0.5f;
	w->in.v_scale[s_at(w, 0, 1, 0)] = 0.25f;
	w->in.v_scale[s_at(w, 0, 2, 0)] = 1;
}

#endif
