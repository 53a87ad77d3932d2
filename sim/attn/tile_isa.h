/*
 * tile_isa.h - private to the tile_*.c files (tile_fast.h is the public
 * side): each build's table, the generic functions a vector build falls
 * back to where it has nothing faster (as ggml's per-arch files fall back
 * to its *_generic functions), and the plain C bodies the generic build
 * is made of, always inlined so that tile_avx2.c and tile_avx512.c can
 * compile the same loops again under their target attribute.
 *
 * A body compiled under a wider target gives the same bits: its loops run
 * independent elements side by side (different d, different keys), each
 * with the same IEEE operations in the same order, and -ffp-contract=off
 * forbids fusing a multiply and an add.
 */
#ifndef TILE_ISA_H
#define TILE_ISA_H

#include <math.h>
#include <string.h>

#include "tile_fast.h"

/* `omp simd` asks for vector code. At -O1 with sanitizers (make fuzz)
 * clang cannot always give it and warns; the loop computes the same
 * either way, so that warning is not an error here. */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

/* Each build's table (whether this CPU runs it: tile_fast.c asks). */
const struct tile_ops *tile_generic_ops(void);
const struct tile_ops *tile_avx2_ops(void);	/* NULL off x86 */
const struct tile_ops *tile_avx512_ops(void);	/* NULL off x86 */

/* The generic build's entries, for the fallbacks of the others. */
void tile_generic_pv(float *o, int R, int D, const float *vn, int N,
		     const float *p, const uint16_t *vis, uint16_t upd,
		     const float *alpha);
void tile_generic_pv_i8(float *o, int R, int D, const int8_t *v, int ld,
			const float *scale, const float *p, const uint16_t *vis,
			uint16_t upd, const float *alpha, void *scratch);
void tile_generic_scores16(int R, const int32_t *dot, const float *sq,
			   const float *ksc, float ss, const int *lo,
			   const int *hi, float *ws);
uint16_t tile_generic_softmax16(int R, uint16_t valid,
				const struct tile_order *ord, const float *ws,
				float *p, float *m, float *l, float *alpha,
				uint16_t *vis);

/* ---- the plain C bodies ---------------------------------------------- */

static inline __attribute__((always_inline)) void
tile_qk_body(const int8_t *q, int R, const int8_t *k, size_t cstride, int N,
	     int D, int32_t *dot)
{
	for (int r = 0; r < R; r++)
		for (int n = 0; n < N; n++) {
			int32_t s = 0;

			for (int c = 0; c < D / TILE_CHUNK; c++) {
				const int8_t *kp = &k[c * cstride + (size_t)n * TILE_CHUNK];
				const int8_t *qp = &q[(size_t)r * D + c * TILE_CHUNK];

				for (int j = 0; j < TILE_CHUNK; j++)
					s += (int32_t)qp[j] * (int32_t)kp[j];
			}
			dot[r * N + n] = s;
		}
}

static inline __attribute__((always_inline)) void
tile_pv_body(float *o, int R, int D, const float *vn, int N, const float *p,
	     const uint16_t *vis, uint16_t upd, const float *alpha)
{
	for (int r = 0; r < R; r++) {
		float *orow = &o[(size_t)r * D];

		if (!(upd >> r & 1))
			continue;
#pragma omp simd
		for (int d = 0; d < D; d++)
			orow[d] = orow[d] * alpha[r];
		for (int n = 0; n < N; n++) {
			const float *v = &vn[(size_t)n * D];
			float pn = p[r * N + n];

			if (!(vis[n] >> r & 1))
				continue;
			/* orow and v never overlap: lanes are independent */
#pragma omp simd
			for (int d = 0; d < D; d++)
				orow[d] = fmaf(pn, v[d], orow[d]);	/* fused, as the spec */
		}
	}
}

static inline __attribute__((always_inline)) void
tile_vconv_body(const int8_t *v, int ld, int D, int N, const float *scale,
		float *vn)
{
	for (int n = 0; n < N; n++)
		for (int d = 0; d < D; d++)
			vn[(size_t)n * D + d] = (float)v[(size_t)d * ld + n] * scale[n];
}

/* INT8 PV's product: rows of c over d side by side, keys of zero P skipped. */
static inline __attribute__((always_inline)) void
tile_pvq_body(int R, int K, int D, const int8_t *a, const int8_t *b4, int32_t *c)
{
	for (int r = 0; r < R; r++) {
		int32_t *cr = &c[(size_t)r * D];

		memset(cr, 0, (size_t)D * sizeof(int32_t));
		for (int j = 0; j < K; j++) {
			const int8_t *bj = &b4[(size_t)(j / 4) * D * 4 + j % 4];
			int32_t p = a[r * K + j];

			if (!p)
				continue;
#pragma omp simd
			for (int d = 0; d < D; d++)
				cr[d] += p * bj[4 * d];
		}
	}
}

/* INT8 PV's B planes, quad by quad, 4 bytes a d. */
static inline __attribute__((always_inline)) void
tile_vquad_body(const int8_t *v, int ld, int D, int nq, int8_t *b4)
{
	for (int q = 0; q < nq; q++)
		for (int d = 0; d < D; d++)
			memcpy(&b4[((size_t)q * D + d) * 4], &v[(size_t)d * ld + 4 * q], 4);
}

/*
 * INT8 PV's group steps (tile_fast.h: gmax, gsum, gscale): in gmax and
 * gsum lane r is row r's own sequence of operations, in its order.
 * ws [GT][M][16] scores, p and ex [R][GT * 16].
 */
static inline __attribute__((always_inline)) void
tile_gmax_body(int R, int GT, int M, const struct tile_order *ord, uint16_t act,
	       const float *ws, float *mx)
{
	for (int t = 0; t < GT; t++)
		for (int i = 0; i < TILE_KEYS; i++) {
			const float *w = &ws[((size_t)t * M) * TILE_KEYS + ord->col[i]];

#pragma omp simd
			for (int r = 0; r < R; r++) {
				float v = w[r * TILE_KEYS];

				mx[r] = (act >> r & 1) && v > mx[r] ? v : mx[r];
			}
		}
}

static inline __attribute__((always_inline)) void
tile_gsum_body(int R, int GT, int M, const struct tile_order *ord, uint16_t act,
	       const float *ws, const float *ex, float *p, float *sum)
{
	int GK = GT * TILE_KEYS;
	float part[TILE_ROWS];

	for (int t = 0; t < GT; t++) {
		for (int r = 0; r < R; r++)
			part[r] = 0.0f;
		for (int i = 0; i < TILE_KEYS; i++) {
			int n = ord->col[i], j = t * TILE_KEYS + n;
			const float *w = &ws[((size_t)t * M) * TILE_KEYS + n];

			if (ord->brk >> i & 1) {	/* a new lane: its part into the sum */
#pragma omp simd
				for (int r = 0; r < R; r++) {
					sum[r] += part[r];
					part[r] = 0.0f;
				}
			}
#pragma omp simd
			for (int r = 0; r < R; r++) {
				float v = w[r * TILE_KEYS] == -INFINITY ? 0.0f : ex[r * GK + j];

				if (act >> r & 1) {
					p[r * GK + j] = v;
					part[r] += v;
				}
			}
		}
#pragma omp simd
		for (int r = 0; r < R; r++)
			sum[r] += part[r];
	}
}

static inline __attribute__((always_inline)) void
tile_gscale_body(int R, int GT, int M, uint16_t act, const float *ws, const float *sv,
		 float *p, float *mx)
{
	int GK = GT * TILE_KEYS;

	/* row by row: P' a select per key across the row (independent
	 * elements), then the max in key order, scalar (its NaN rule) */
	for (int r = 0; r < R; r++) {
		float *pr = &p[r * GK], m = mx[r];

		if (!(act >> r & 1))
			continue;
		for (int t = 0; t < GT; t++) {
			const float *w = &ws[((size_t)t * M + r) * TILE_KEYS];
			float *pt = &pr[t * TILE_KEYS];
			const float *st = &sv[t * TILE_KEYS];

#pragma omp simd
			for (int n = 0; n < TILE_KEYS; n++)
				pt[n] = w[n] == -INFINITY ? 0.0f : pt[n] * st[n];
		}
		for (int t = 0; t < GT; t++) {
			const float *w = &ws[((size_t)t * M + r) * TILE_KEYS];

			for (int n = 0; n < TILE_KEYS; n++)
				/* NaN propagates: fmaxf would drop it */
				if (w[n] != -INFINITY && !(pr[t * TILE_KEYS + n] <= m))
					m = pr[t * TILE_KEYS + n];
		}
		mx[r] = m;
	}
}

/* INT8 PV's O update, row by row. */
static inline __attribute__((always_inline)) void
tile_pvo_body(int R, int D, float *const *o, uint16_t act, const float *alpha,
	      const float *sp, const int32_t *c)
{
	for (int r = 0; r < R; r++) {
		float *orow = o[r], al = alpha[r], s = sp[r];
		const int32_t *cr = &c[(size_t)r * D];

		if (!(act >> r & 1))
			continue;
#pragma omp simd
		for (int d = 0; d < D; d++)
			orow[d] = fmaf((float)cr[d], s, orow[d] * al);
	}
}

/* One segment's share of the split-K merge, d by d. */
static inline __attribute__((always_inline)) void
tile_merge_body(float *out, const float *o, float l, float w, int D)
{
#pragma omp simd
	for (int d = 0; d < D; d++)
		out[d] = fmaf(o[d] / l, w, out[d]);
}

/* A row's max in slot order, as softmax_pv takes it. */
static inline float tile_max16_body(const struct tile_order *ord, const float *w)
{
	float tmax = -INFINITY;

	for (int j = 0; j < TILE_KEYS; j++)
		if (w[ord->col[j]] > tmax)
			tmax = w[ord->col[j]];
	return tmax;
}

#endif
