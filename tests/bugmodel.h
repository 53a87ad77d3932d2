/*
 * bugmodel.h - a small model of a buggy INT8 attention kernel, written
 * for the tests from the cache layouts of docs/formats.md alone: it
 * reads the case's tensors (q_int8, q_scale, the paged K and V caches,
 * their scales, the block table), computes each visible key's score and
 * each row's output in double, logically (no lanes, no tiles), and lets
 * a test change one addressing or scale rule at a time, as one bug class
 * does. It calls nothing of sim/'s kernel: no lane map, no block walk,
 * no offset helper. Header-only, shared by test_kernel.c (the wrong
 * values by hand), test_diffcase.c and test_diffmatrix.c (dumps `fragsim
 * diff` must name) and test_pv_int8.c (its cache readers).
 *
 * What it models: decode or prefill, per_token_head K scales, int8 V,
 * no window, soft cap or ALiBi, no split-K; the bugs of the fields of
 * struct bugmodel (walks, block size, scales, kv head maps, loads, row
 * and column beliefs, the tail mask, the workspace's transpose, the
 * operand order, scales after the softmax, dims loaded, which keys a
 * query sees). Addresses, written out:
 *   K[j][g][d]  k_cache[(((p*Hkv + g)*(D/16) + d/16)*BS + j%BS)*16 + d%16]
 *   sK[j][g]    k_scale[(p*BS + j%BS)*Hkv + g]
 *   V[j][g][d]  v_cache[((p*Hkv + g)*D + d)*BS + j%BS], scale as sK's
 * with p the physical block of key j's logical block j / BS. A bug moves
 * p (or BS, or g) for one of them; an address outside a tensor, or a
 * block -1, reads poison: K -128, a NaN scale, V -128.
 */
#ifndef BUGMODEL_H
#define BUGMODEL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/runcase.h"

/* Which block a read takes: the table's, the logical index itself, or
 * where a packed cache puts it: first(s) + b, first(s) the blocks of the
 * sequences before s (ceil(context / BS) each). */
enum bm_walk { BM_TABLE, BM_LOGICAL, BM_PACKED };

struct bugmodel {
	enum bm_walk k_walk, ks_walk, v_walk;	/* K bytes, K scale, V (+ scale) */
	int bs;			/* block size the kernel computes with; 0: the cache's */
	int no_sq, no_sk;	/* the Q or K scale left out of the score */
	int first_key;		/* every key takes key 0's K scale */
	int kv_divide;		/* kv head = q head / Hkv; decode: of the group's
				 * first q head, (h / G) * G / Hkv */
	int grid;		/* prefill: unit b serves q head (b % G)*G + b / G;
				 * a head no unit serves: out and scores NaN */
	int swap_halves;	/* K element d read as d's twin in the other half
				 * of its K-step (K = the instruction's) */
	int unswizzled;		/* K chunk c of key j read as chunk c ^ (j % N)
				 * within groups of w (bugmodel_chunk) */
	/* c_rows: the row of its M-row tile whose accumulators a query's
	 * row gets (NULL: its own). Prefill: token t scores with the Q of
	 * token M*(t/M) + row_src[t % M] (0 past the chunk: a zero A row);
	 * decode: q head h of kv head g, the group's row R = h % G, with the
	 * Q of q head g*G + (M*(R/M) + row_src[R % M]) % G. Its own Q scale
	 * and mask. */
	const int *row_src;
	int spill;		/* decode: q head h reads the kv head of the first
				 * head of its tile of M, (h / M) * M / G */
	int gqa_modulo;		/* kv head = q head % Hkv */
	int half_dims;		/* only dims d < D / 2 enter a score */
	int per_tile;		/* key j takes the K scale of key j / N * N, its
				 * tile's first (N the instruction's; no split-K) */
	/* Which keys query t at p = q_pos sees, j < context always:
	 * q_local: j <= t (the chunk-local index); q_future: j <= context - 1;
	 * q_off_by_one: j <= p + 1; q_chunk_keys: p - t <= j <= p (the
	 * history never visited). */
	int q_local, q_future, q_off_by_one, q_chunk_keys;
	/* c_columns: the score of key j, in its tile of N keys from kb, is
	 * computed with the K bytes of key kb + col_src[j - kb] (its own K
	 * scale and mask): the column the accumulator written there truly
	 * holds. A source key past the sequence's blocks loads 0, as the
	 * kernel's loop over its own blocks does. NULL: its own. */
	const int *col_src;
	/* The classes that move or mask a whole score (test_diffmatrix.c
	 * names them from these dumps in decode):
	 * transpose none: the score stored at key kb + n of a tile of N is
	 * the score (its scales and mask with it) the correct kernel gives
	 * key kb + sc_src[n]; it is paired with key kb + n's V. NULL: its own. */
	const int *sc_src;
	/* tail_mask contiguous: in a tile of N keys from kb, the mask tests
	 * column mask_col[n] for the key at column n: key kb + n passes iff
	 * kb + mask_col[n] is below the query's limit (the context, or its
	 * causal edge), even past the context (its K, scale and V then read
	 * where the walk puts them: a poisoned slot's NaN). */
	const int *mask_col;
	/* operand_order kq: C = K Q^T read as Q K^T. The entry read as
	 * (row R of q head h, key kb + n) holds K[kb + R] . Q[the group's row
	 * n]: rows are the group's heads, R = h % G, row n the head
	 * g*G + n % G. Its own scales (head h's, key kb + n's) and mask. */
	int kq;
	/* scale_recovery after_softmax: the score is acc * softmax_scale;
	 * P = e^(s - max) * sQ * sK, the sum l of e^(s - max) alone. */
	int after_softmax;
};

/*
 * The chunk an unswizzling-free read of chunk c of tile row n gets, for
 * rows of nc 16-byte chunks: groups of w = min(8, the largest power of
 * two <= nc) chunks, XOR with n % w inside each whole group. Example,
 * head_dim 64 (nc 4, w 4): row 1 reads chunks 1, 0, 3, 2; row 5 too.
 */
static inline int bugmodel_chunk(int c, int n, int nc)
{
	int w = nc >= 8 ? 8 : nc >= 4 ? 4 : nc >= 2 ? 2 : 1;
	int group = c / w * w;

	return group + w > nc ? c : group + ((c - group) ^ (n % w));
}

/* Physical block of key j of sequence s, by walk w and block size bs;
 * -1 outside the table's row or the pool. */
static inline int bm_block(const struct runcase *r, int s, int j, enum bm_walk w, int bs)
{
	const struct fs_inputs *in = &r->in;
	int b = j / bs, p;

	if (w == BM_LOGICAL) {
		p = b;
	} else if (w == BM_PACKED) {
		p = b;
		for (int s2 = 0; s2 < s; s2++)
			p += (r->c.seqs[s2].context + in->BS - 1) / in->BS;
	} else
		p = b < in->MAXB ? in->block_table[s * in->MAXB + b] : -1;
	return p >= 0 && p < in->NB ? p : -1;
}

static inline double bm_kbyte(const struct runcase *r, int p, int g, int j, int d, int bs)
{
	const struct fs_inputs *in = &r->in;
	size_t n = (size_t)in->NB * in->Hkv * in->D * in->BS, a;

	if (p < 0)
		return -128;
	a = ((((size_t)p * in->Hkv + g) * (in->D / 16) + d / 16) * bs + j % bs) * 16 + d % 16;
	return a < n ? in->k_cache[a] : -128;
}

/* A per-token scale ([NB][BS][Hkv]) at block p: NaN outside. */
static inline double bm_scale(const struct runcase *r, const float *t, int p, int g, int j, int bs)
{
	const struct fs_inputs *in = &r->in;
	size_t n = (size_t)in->NB * in->BS * in->Hkv, a;

	if (p < 0)
		return NAN;
	a = ((size_t)p * bs + j % bs) * in->Hkv + g;
	return a < n ? t[a] : NAN;
}

static inline double bm_vbyte(const struct runcase *r, int p, int g, int j, int d, int bs)
{
	const struct fs_inputs *in = &r->in;
	size_t n = (size_t)in->NB * in->Hkv * in->D * in->BS, a;

	if (p < 0)
		return -128;
	a = (((size_t)p * in->Hkv + g) * in->D + d) * bs + j % bs;
	return a < n ? in->v_cache_i8[a] : -128;
}

/*
 * scores [S][T][Hq][MAXCTX] (-inf where a key is not visible) and out
 * [S][T][Hq][D] of r's case under the bugs in m, in double.
 */
static inline void bugmodel_run(const struct runcase *r, const struct bugmodel *m,
				double *scores, double *out)
{
	const struct fs_case *c = &r->c;
	const struct fs_inputs *in = &r->in;
	int S = in->S, T = in->T, Hq = in->Hq, Hkv = in->Hkv, D = in->D, X = in->MAXCTX;
	int G = Hq / Hkv, bs = m->bs ? m->bs : in->BS;

	for (size_t i = 0; i < (size_t)S * T * Hq * X; i++)
		scores[i] = -INFINITY;
	memset(out, 0, (size_t)S * T * Hq * D * sizeof(double));
	for (int s = 0; s < S; s++)
		for (int t = 0; t < c->seqs[s].tokens; t++)
			for (int h = 0; h < Hq; h++) {
				size_t row = ((size_t)s * T + t) * Hq + h;
				const int8_t *q = &in->q_int8[row * D];
				int qzero = 0;
				int g = m->spill ? h / r->lm->m * r->lm->m / G :
					m->gqa_modulo ? h % Hkv :
					!m->kv_divide ? h / G :
					c->mode == MODE_DECODE ? h / G * G / Hkv : h / Hkv;
				int qp = m->q_local ? t : m->q_future ? c->seqs[s].context - 1 :
					 in->q_pos[s * T + t];
				int jlo = m->q_chunk_keys ? in->q_pos[s * T + t] - t : 0;
				int served = !m->grid;
				double sq = m->no_sq ? 1.0 : in->q_scale[row], mx = -INFINITY, l = 0;
				double *sc = &scores[row * X], *o = &out[row * D];
				int M = r->lm->m;

				if (m->row_src && c->mode == MODE_DECODE) {
					int R = h % G, src = (M * (R / M) + m->row_src[R % M]) % G;

					q = &in->q_int8[(((size_t)s * T + t) * Hq + h / G * G + src) * D];
				} else if (m->row_src) {
					int ts = M * (t / M) + m->row_src[t % M];

					qzero = ts >= c->seqs[s].tokens;
					q = &in->q_int8[(((size_t)s * T + (qzero ? t : ts)) * Hq + h) * D];
				}

				for (int b = 0; b < Hq && !served; b++)
					served = b % G * G + b / G == h;
				if (!served) {
					for (int j = 0; j < X; j++)
						sc[j] = NAN;
					for (int d = 0; d < D; d++)
						o[d] = NAN;
					continue;
				}

				if (m->q_off_by_one)
					qp++;
				{
					int N = r->lm->n, ctx = c->seqs[s].context;
					int lim = qp + 1 < ctx ? qp + 1 : ctx;
					int jmax = (ctx + N - 1) / N * N;
					double *w = malloc((size_t)jmax * sizeof(double));
					double *wsk = malloc((size_t)jmax * sizeof(double));

					for (int j = 0; j < jmax; j++) {
						int kb = j / N * N, n = j % N;
						int vis = m->mask_col ? kb + m->mask_col[n] < lim : j < lim;
						int jk = m->col_src ? kb + m->col_src[n] :
							 m->kq ? kb + h % G : j;
						int pk = bm_block(r, s, jk, m->k_walk, bs);
						int kzero = jk / bs >= (ctx + bs - 1) / bs;
						int js = m->first_key ? 0 : m->per_tile ? kb : j;
						int ps = bm_block(r, s, js, m->ks_walk, bs);
						const int8_t *qj = q;
						double acc = 0, sk;

						w[j] = -INFINITY, wsk[j] = 0;
						if (j < jlo || !vis)
							continue;
						if (m->kq)
							qj = &in->q_int8[(((size_t)s * T + t) * Hq + h / G * G + n % G) * D];
						for (int d = 0; d < D; d++) {
							int K = r->lm->k, src = d;

							if (m->swap_halves)
								src = d / K * K + (d % K + K / 2) % K;
							if (m->unswizzled)
								src = 16 * bugmodel_chunk(d / 16, j % N, D / 16) +
								      d % 16;
							/* past head_dim: the last K-step's zero padding */
							if (m->half_dims && d >= D / 2)
								break;
							acc += src < D && !qzero && !kzero ?
							       qj[d] * bm_kbyte(r, pk, g, jk, src, bs) : 0;
						}
						sk = m->no_sk ? 1.0 : bm_scale(r, in->k_scale, ps, g, js, bs);
						wsk[j] = sk;
						w[j] = m->after_softmax ? acc * c->softmax_scale :
						       acc * sq * sk * c->softmax_scale;
					}
					if (m->sc_src) {
						double *tw = malloc((size_t)jmax * sizeof(double));

						for (int j = 0; j < jmax; j++)
							tw[j] = w[j / N * N + m->sc_src[j % N]];
						memcpy(w, tw, (size_t)jmax * sizeof(double));
						free(tw);
					}
					for (int j = 0; j < jmax; j++) {
						if (j < X)
							sc[j] = w[j];
						/* a NaN (a poisoned scale) stays the max: the row is NaN */
						if (!isnan(mx) && (isnan(w[j]) || w[j] > mx))
							mx = w[j];
					}
					for (int j = 0; j < jmax; j++) {
						int pv = bm_block(r, s, j, m->v_walk, bs);
						double p, vs;

						if (w[j] == -INFINITY)
							continue;
						p = exp(w[j] - mx);
						vs = bm_scale(r, in->v_scale, pv, g, j, bs);
						l += p;
						if (m->after_softmax)
							p *= sq * wsk[j];
						for (int d = 0; d < D; d++)
							o[d] += p * bm_vbyte(r, pv, g, j, d, bs) * vs;
					}
					free(w), free(wsk);
				}
				for (int d = 0; d < D; d++)
					o[d] /= l;
			}
}

#endif
