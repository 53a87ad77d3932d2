/*
 * tile.h - the reference's double passes as register tiles: several
 * attention rows against several keys (QK) or several rows over one
 * slice of the head dim (PV) per call, each operand loaded once for
 * every sum that uses it, every sum still its own chain of fused
 * multiply-adds in its own fixed order.
 *
 * Each function computes exactly what the plain loop in its comment
 * computes (tests/test_ref_tile.c holds every build to those loops, bit
 * for bit): a tile only decides which independent sums share a load,
 * never the order of the terms inside one sum, so ref.c reads as the
 * plain loops and its results do not depend on the tile, the CPU or
 * the number of threads.
 */
#ifndef TILE_H
#define TILE_H

#include <stddef.h>
#include <stdint.h>

#define TILE_QK_ROWS 6	/* rows per tile_qk call (a GQA group of 6 heads) */
#define TILE_QK_KEYS 16	/* keys per tile_qk call */
#define TILE_SLICE 32	/* head-dim elements per tile_pvq / tile_pvf call */
#define TILE_PVQ_ROWS 2	/* rows per tile_pvq call, at most */
#define TILE_PVF_ROWS 4	/* rows per tile_pvf call, at most */

/*
 * nr <= TILE_QK_ROWS query rows (q[r], [D] doubles) against TILE_QK_KEYS
 * keys (kt [D][TILE_QK_KEYS], the keys transposed):
 *   acc = 0;  for d = 0, 1, .., D-1:  acc = fma(q[r][d], kt[d][i], acc)
 *   out[r][i] = acc
 * Rows nr .. TILE_QK_ROWS-1 of out are left as they were.
 */
void tile_qk(int nr, const double *const q[TILE_QK_ROWS], const double *kt,
	     int D, double out[TILE_QK_ROWS][TILE_QK_KEYS]);

/*
 * Quantized PV, nr <= TILE_PVQ_ROWS rows over one slice of n <= TILE_SLICE
 * head-dim elements, keys j < nk in order, x = j * stride + d:
 *   o[r][d]  = fma(p[r][j], v[x],       o[r][d])
 *   oa[r][d] = fma(p[r][j], fabs(v[x]), oa[r][d])
 * oa is sum p |v|, the output tolerance's scale.
 */
void tile_pvq(int nr, int nk, int n, const double *const p[TILE_PVQ_ROWS],
	      const double *v, size_t stride, double *const o[TILE_PVQ_ROWS],
	      double *const oa[TILE_PVQ_ROWS]);

/*
 * Float-path PV, nr <= TILE_PVF_ROWS rows, the same slice and order:
 *   o[r][d] = fma(p[r][j], v[x], o[r][d])
 */
void tile_pvf(int nr, int nk, int n, const double *const p[TILE_PVF_ROWS],
	      const double *v, size_t stride, double *const o[TILE_PVF_ROWS]);

/*
 * Exact int8 products, nr <= TILE_QK_ROWS query rows (q[r], [D] int8)
 * against TILE_QK_KEYS keys:
 *   out[r][i] = sum_{d < D} q[r][d] * k_i[d]      (int32, exact)
 * with the keys in kt as [D / 4][TILE_QK_KEYS][4] bytes holding k + 128
 * (k ^ 0x80), and sumq[r] = sum_d q[r][d]. The VNNI build sums
 * (k + 128) q four products at a time (vpdpbusd takes u8 x s8), then
 * subtracts 128 sumq: every partial sum is below 2^31 (D <= 1024), so
 * the answer is the plain loop's. D a multiple of 4; rows past nr of
 * out are left as they were. tile_i8_fast says whether the CPU has the
 * instruction (without it ref.c keeps its one-pair dot_i8).
 */
void tile_i8(int nr, const int8_t *const q[TILE_QK_ROWS], const int32_t *sumq,
	     const uint8_t *kt, int D, int32_t out[TILE_QK_ROWS][TILE_QK_KEYS]);
int tile_i8_fast(void);

/*
 * The keys of a tile_qk call as its kt: kt[d][i] = (double)k[i][d] for
 * i < TILE_QK_KEYS, d < D (a multiple of 8). Moves and exact
 * conversions only, so every build gives the plain loop's bytes; the
 * vector builds transpose 8 x 8 floats in registers (the plain loop's
 * 16 strided reads or writes a dim were a third of the float q.k's
 * time making K again).
 */
void tile_kt(const float *const k[TILE_QK_KEYS], int D, double *kt);

/* y[i] = x[i] * scale for i < 16, in double: V dequantized, one
 * multiply as the plain loop's (exact when scale is an f32, as the
 * caches' scales are: 8 + 24 significant bits fit in 53). */
void tile_dequant(const int8_t *x, double scale, double *y);

/*
 * The softmax's loops over a row, 8 lanes at a time where the CPU has
 * AVX-512, each the plain loop's bits:
 *   tile_max   m = -inf; for j < n: if (x[j] > m) m = x[j]  (NaN never
 *              wins; a max of 0, whose sign depends on which 0 came
 *              first, is found again by the plain loop)
 *   tile_unmask  p[j] = s[j] == -inf ? 0 : p[j]
 *   tile_div   p[j] = p[j] / z  (correctly rounded in any lane)
 */
double tile_max(const double *x, int n);
void tile_unmask(const double *s, double *p, int n);
void tile_div(double *p, int n, double z);

/* The builds, for tests that hold each to the plain loops; the calls
 * above run the best one this CPU supports. */
enum tile_isa { TILE_PLAIN, TILE_AVX2, TILE_AVX512 };	/* tile_i8: AVX512 is VNNI */
int tile_isa_supported(enum tile_isa isa);
void tile_qk_isa(enum tile_isa isa, int nr, const double *const q[TILE_QK_ROWS],
		 const double *kt, int D, double out[TILE_QK_ROWS][TILE_QK_KEYS]);
void tile_pvq_isa(enum tile_isa isa, int nr, int nk, int n,
		  const double *const p[TILE_PVQ_ROWS], const double *v,
		  size_t stride, double *const o[TILE_PVQ_ROWS],
		  double *const oa[TILE_PVQ_ROWS]);
void tile_i8_isa(enum tile_isa isa, int nr, const int8_t *const q[TILE_QK_ROWS],
		 const int32_t *sumq, const uint8_t *kt, int D,
		 int32_t out[TILE_QK_ROWS][TILE_QK_KEYS]);
void tile_pvf_isa(enum tile_isa isa, int nr, int nk, int n,
		  const double *const p[TILE_PVF_ROWS], const double *v,
		  size_t stride, double *const o[TILE_PVF_ROWS]);
void tile_kt_isa(enum tile_isa isa, const float *const k[TILE_QK_KEYS], int D,
		 double *kt);

#endif
