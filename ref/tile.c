/*
 * tile.c - the reference's double passes as register tiles (see tile.h).
 *
 * Why tiles: a PV sum of one row does one fused multiply-add per loaded
 * element of V, so one row at a time the loads, not the FMA units, set
 * the pace, and the QK dot products of 4 rows x 8 keys used a quarter
 * of the registers. Here one load serves several rows: QK holds 6 rows
 * x 16 keys of sums (12 of the 32 zmm registers), quantized PV 2 rows x
 * 32 dims x {o, sum p |v|} (16, |v| made from v in a register rather
 * than loaded), float PV 4 rows x 32 dims (16). The sums in one tile
 * are independent: each has its own operands in its own order, exactly
 * the plain loop's (tile.h), so a tile changes no bit.
 *
 * Fusing is written out (_mm512_fmadd_pd, fma()): the project builds
 * with -ffp-contract=off. Which CPU: sim/common/cpu.h, as dot.c. The
 * builds: AVX-512, AVX2 + FMA (smaller tiles: 16 registers of 4
 * doubles), and the plain loops, which are the definition.
 *
 * Example: with D = 2, q[0] = {1, 2} and key 0's k = {3, 5} (kt[0][0] =
 * 3, kt[1][0] = 5), out[0][0] = fma(2, 5, fma(1, 3, 0)) = 13.
 */
#include "tile.h"

#include <math.h>

#include "../sim/common/cpu.h"

#ifdef CPU_X86
#include <immintrin.h>
#endif

static void qk_plain(int nr, const double *const q[TILE_QK_ROWS],
		     const double *kt, int D,
		     double out[TILE_QK_ROWS][TILE_QK_KEYS])
{
	for (int r = 0; r < nr; r++)
		for (int i = 0; i < TILE_QK_KEYS; i++) {
			double acc = 0;

			for (int d = 0; d < D; d++)
				acc = fma(q[r][d], kt[(size_t)d * TILE_QK_KEYS + i], acc);
			out[r][i] = acc;
		}
}

static void i8_plain(int nr, const int8_t *const q[TILE_QK_ROWS], const int32_t *sumq,
		     const uint8_t *kt, int D, int32_t out[TILE_QK_ROWS][TILE_QK_KEYS])
{
	(void)sumq;
	for (int r = 0; r < nr; r++)
		for (int i = 0; i < TILE_QK_KEYS; i++) {
			int32_t acc = 0;

			for (int d = 0; d < D; d++)
				acc += (int32_t)q[r][d] *
				       ((int32_t)kt[(size_t)(d / 4) * 4 * TILE_QK_KEYS +
						    4 * i + d % 4] - 128);
			out[r][i] = acc;
		}
}

static void pvq_plain(int nr, int nk, int n, const double *const p[TILE_PVQ_ROWS],
		      const double *v, size_t stride, double *const o[TILE_PVQ_ROWS],
		      double *const oa[TILE_PVQ_ROWS])
{
	for (int r = 0; r < nr; r++)
		for (int j = 0; j < nk; j++)
			for (int d = 0; d < n; d++) {
				double x = v[(size_t)j * stride + d];

				o[r][d] = fma(p[r][j], x, o[r][d]);
				oa[r][d] = fma(p[r][j], fabs(x), oa[r][d]);
			}
}

static void pvf_plain(int nr, int nk, int n, const double *const p[TILE_PVF_ROWS],
		      const double *v, size_t stride, double *const o[TILE_PVF_ROWS])
{
	for (int r = 0; r < nr; r++)
		for (int j = 0; j < nk; j++)
			for (int d = 0; d < n; d++)
				o[r][d] = fma(p[r][j], v[(size_t)j * stride + d], o[r][d]);
}

#ifdef CPU_X86
#define LD _mm512_loadu_pd
#define ST _mm512_storeu_pd
#define FMA _mm512_fmadd_pd
#define B1 _mm512_set1_pd

/* 6 rows x 16 keys: two zmm of sums per row, one broadcast of q[r][d]
 * for both. A row past nr repeats row 0 and is not stored. */
__attribute__((target("avx512f")))
static void qk_avx512(int nr, const double *const q[TILE_QK_ROWS],
		      const double *kt, int D, double out[TILE_QK_ROWS][TILE_QK_KEYS])
{
	const double *q0 = q[0], *q1 = nr > 1 ? q[1] : q0, *q2 = nr > 2 ? q[2] : q0,
		     *q3 = nr > 3 ? q[3] : q0, *q4 = nr > 4 ? q[4] : q0,
		     *q5 = nr > 5 ? q[5] : q0;
	__m512d a0 = _mm512_setzero_pd(), b0 = a0, a1 = a0, b1 = a0, a2 = a0,
		b2 = a0, a3 = a0, b3 = a0, a4 = a0, b4 = a0, a5 = a0, b5 = a0;

	for (int d = 0; d < D; d++) {
		__m512d k = LD(kt + (size_t)d * TILE_QK_KEYS),
			l = LD(kt + (size_t)d * TILE_QK_KEYS + 8), x;

		x = B1(q0[d]); a0 = FMA(x, k, a0); b0 = FMA(x, l, b0);
		x = B1(q1[d]); a1 = FMA(x, k, a1); b1 = FMA(x, l, b1);
		x = B1(q2[d]); a2 = FMA(x, k, a2); b2 = FMA(x, l, b2);
		x = B1(q3[d]); a3 = FMA(x, k, a3); b3 = FMA(x, l, b3);
		x = B1(q4[d]); a4 = FMA(x, k, a4); b4 = FMA(x, l, b4);
		x = B1(q5[d]); a5 = FMA(x, k, a5); b5 = FMA(x, l, b5);
	}
	ST(out[0], a0); ST(out[0] + 8, b0);
	if (nr > 1) { ST(out[1], a1); ST(out[1] + 8, b1); }
	if (nr > 2) { ST(out[2], a2); ST(out[2] + 8, b2); }
	if (nr > 3) { ST(out[3], a3); ST(out[3] + 8, b3); }
	if (nr > 4) { ST(out[4], a4); ST(out[4] + 8, b4); }
	if (nr > 5) { ST(out[5], a5); ST(out[5] + 8, b5); }
}

/* 6 rows x 16 keys of int32 sums, a zmm each: per 4 dims one load of the
 * 16 keys' bytes and a broadcast of each row's 4 q bytes. */
__attribute__((target("avx512f,avx512vnni")))
static void i8_vnni(int nr, const int8_t *const q[TILE_QK_ROWS], const int32_t *sumq,
		    const uint8_t *kt, int D, int32_t out[TILE_QK_ROWS][TILE_QK_KEYS])
{
	const int8_t *q0 = q[0], *q1 = nr > 1 ? q[1] : q0, *q2 = nr > 2 ? q[2] : q0,
		     *q3 = nr > 3 ? q[3] : q0, *q4 = nr > 4 ? q[4] : q0,
		     *q5 = nr > 5 ? q[5] : q0;
	__m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
	int32_t w;

#define QW(P) (__builtin_memcpy(&w, (P) + d, 4), _mm512_set1_epi32(w))
	for (int d = 0; d < D; d += 4) {
		__m512i k = _mm512_loadu_si512((const void *)(kt + (size_t)d * TILE_QK_KEYS));

		a0 = _mm512_dpbusd_epi32(a0, k, QW(q0));
		a1 = _mm512_dpbusd_epi32(a1, k, QW(q1));
		a2 = _mm512_dpbusd_epi32(a2, k, QW(q2));
		a3 = _mm512_dpbusd_epi32(a3, k, QW(q3));
		a4 = _mm512_dpbusd_epi32(a4, k, QW(q4));
		a5 = _mm512_dpbusd_epi32(a5, k, QW(q5));
	}
#undef QW
#define OUT(R, A) _mm512_storeu_si512((void *)out[R], \
		_mm512_sub_epi32(A, _mm512_set1_epi32(128 * sumq[R])))
	OUT(0, a0);
	if (nr > 1) OUT(1, a1);
	if (nr > 2) OUT(2, a2);
	if (nr > 3) OUT(3, a3);
	if (nr > 4) OUT(4, a4);
	if (nr > 5) OUT(5, a5);
#undef OUT
}

/* One row's quantized sums over a 32-dim slice, 8 zmm, named R. */
#define PVQ_LOAD(R, O, A) \
	__m512d o##R##0 = LD(O), o##R##1 = LD(O + 8), o##R##2 = LD(O + 16), \
		o##R##3 = LD(O + 24), a##R##0 = LD(A), a##R##1 = LD(A + 8), \
		a##R##2 = LD(A + 16), a##R##3 = LD(A + 24)
#define PVQ_STEP(R, P) do { \
		__m512d pj = B1(P); \
		o##R##0 = FMA(pj, v0, o##R##0); a##R##0 = FMA(pj, w0, a##R##0); \
		o##R##1 = FMA(pj, v1, o##R##1); a##R##1 = FMA(pj, w1, a##R##1); \
		o##R##2 = FMA(pj, v2, o##R##2); a##R##2 = FMA(pj, w2, a##R##2); \
		o##R##3 = FMA(pj, v3, o##R##3); a##R##3 = FMA(pj, w3, a##R##3); \
	} while (0)
#define PVQ_STORE(R, O, A) do { \
		ST(O, o##R##0); ST(O + 8, o##R##1); ST(O + 16, o##R##2); \
		ST(O + 24, o##R##3); ST(A, a##R##0); ST(A + 8, a##R##1); \
		ST(A + 16, a##R##2); ST(A + 24, a##R##3); \
	} while (0)
/* v's 32 elements of key j and their |v| (the sign bit cleared: fabs). */
#define PV_V(X) \
	__m512d v0 = LD(X), v1 = LD(X + 8), v2 = LD(X + 16), v3 = LD(X + 24)
#define PV_ABS \
	__m512d w0 = _mm512_abs_pd(v0), w1 = _mm512_abs_pd(v1), \
		w2 = _mm512_abs_pd(v2), w3 = _mm512_abs_pd(v3)

__attribute__((target("avx512f")))
static void pvq1_avx512(int nk, const double *p0, const double *v, size_t stride,
			double *o0, double *oa0)
{
	PVQ_LOAD(0, o0, oa0);

	for (int j = 0; j < nk; j++) {
		PV_V(v + (size_t)j * stride);
		PV_ABS;

		PVQ_STEP(0, p0[j]);
	}
	PVQ_STORE(0, o0, oa0);
}

__attribute__((target("avx512f")))
static void pvq2_avx512(int nk, const double *p0, const double *p1,
			const double *v, size_t stride, double *o0, double *oa0,
			double *o1, double *oa1)
{
	PVQ_LOAD(0, o0, oa0);
	PVQ_LOAD(1, o1, oa1);

	for (int j = 0; j < nk; j++) {
		PV_V(v + (size_t)j * stride);
		PV_ABS;

		PVQ_STEP(0, p0[j]);
		PVQ_STEP(1, p1[j]);
	}
	PVQ_STORE(0, o0, oa0);
	PVQ_STORE(1, o1, oa1);
}

static void pvq_avx512(int nr, int nk, int n, const double *const p[TILE_PVQ_ROWS],
		       const double *v, size_t stride, double *const o[TILE_PVQ_ROWS],
		       double *const oa[TILE_PVQ_ROWS])
{
	if (n != TILE_SLICE)
		pvq_plain(nr, nk, n, p, v, stride, o, oa);
	else if (nr == 2)
		pvq2_avx512(nk, p[0], p[1], v, stride, o[0], oa[0], o[1], oa[1]);
	else
		pvq1_avx512(nk, p[0], v, stride, o[0], oa[0]);
}

/* Float PV: one row's 32-dim slice is 4 zmm, named R. */
#define PVF_LOAD(R, O) \
	__m512d f##R##0 = LD(O), f##R##1 = LD(O + 8), f##R##2 = LD(O + 16), \
		f##R##3 = LD(O + 24)
#define PVF_STEP(R, P) do { \
		__m512d pj = B1(P); \
		f##R##0 = FMA(pj, v0, f##R##0); f##R##1 = FMA(pj, v1, f##R##1); \
		f##R##2 = FMA(pj, v2, f##R##2); f##R##3 = FMA(pj, v3, f##R##3); \
	} while (0)
#define PVF_STORE(R, O) do { \
		ST(O, f##R##0); ST(O + 8, f##R##1); ST(O + 16, f##R##2); \
		ST(O + 24, f##R##3); \
	} while (0)

__attribute__((target("avx512f")))
static void pvf1_avx512(int nk, const double *p0, const double *v, size_t stride,
			double *o0)
{
	PVF_LOAD(0, o0);

	for (int j = 0; j < nk; j++) {
		PV_V(v + (size_t)j * stride);

		PVF_STEP(0, p0[j]);
	}
	PVF_STORE(0, o0);
}

__attribute__((target("avx512f")))
static void pvf2_avx512(int nk, const double *p0, const double *p1,
			const double *v, size_t stride, double *o0, double *o1)
{
	PVF_LOAD(0, o0);
	PVF_LOAD(1, o1);

	for (int j = 0; j < nk; j++) {
		PV_V(v + (size_t)j * stride);

		PVF_STEP(0, p0[j]);
		PVF_STEP(1, p1[j]);
	}
	PVF_STORE(0, o0);
	PVF_STORE(1, o1);
}

__attribute__((target("avx512f")))
static void pvf4_avx512(int nk, const double *const p[4], const double *v,
			size_t stride, double *const o[4])
{
	const double *p0 = p[0], *p1 = p[1], *p2 = p[2], *p3 = p[3];
	PVF_LOAD(0, o[0]);
	PVF_LOAD(1, o[1]);
	PVF_LOAD(2, o[2]);
	PVF_LOAD(3, o[3]);

	for (int j = 0; j < nk; j++) {
		PV_V(v + (size_t)j * stride);

		PVF_STEP(0, p0[j]);
		PVF_STEP(1, p1[j]);
		PVF_STEP(2, p2[j]);
		PVF_STEP(3, p3[j]);
	}
	PVF_STORE(0, o[0]);
	PVF_STORE(1, o[1]);
	PVF_STORE(2, o[2]);
	PVF_STORE(3, o[3]);
}

static void pvf_avx512(int nr, int nk, int n, const double *const p[TILE_PVF_ROWS],
		       const double *v, size_t stride, double *const o[TILE_PVF_ROWS])
{
	int r = 0;

	if (n != TILE_SLICE) {
		pvf_plain(nr, nk, n, p, v, stride, o);
		return;
	}
	if (nr == 4) {
		pvf4_avx512(nk, p, v, stride, o);
		return;
	}
	for (; r + 2 <= nr; r += 2)
		pvf2_avx512(nk, p[r], p[r + 1], v, stride, o[r], o[r + 1]);
	if (r < nr)
		pvf1_avx512(nk, p[r], v, stride, o[r]);
}

__attribute__((target("avx512f")))
static void dequant_avx512(const int8_t *x, double scale, double *y)
{
	__m512i w = _mm512_cvtepi8_epi32(_mm_loadu_si128((const void *)x));
	__m512d sc = B1(scale);

	ST(y, _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(w)), sc));
	ST(y + 8, _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(w, 1)), sc));
}

__attribute__((target("avx512f")))
static double max_avx512(const double *x, int n)
{
	__m512d m = B1(-INFINITY);
	double l[8], r = -INFINITY;
	int i = 0;

	for (; i + 8 <= n; i += 8) {
		__m512d v = LD(x + i);

		m = _mm512_mask_mov_pd(m, _mm512_cmp_pd_mask(v, m, _CMP_GT_OQ), v);
	}
	ST(l, m);
	for (int k = 0; k < 8; k++)
		if (l[k] > r)
			r = l[k];
	for (; i < n; i++)
		if (x[i] > r)
			r = x[i];
	return r;
}

__attribute__((target("avx512f")))
static void unmask_avx512(const double *sc, double *p, int n)
{
	int i = 0;

	for (; i + 8 <= n; i += 8) {
		__mmask8 k = _mm512_cmp_pd_mask(LD(sc + i), B1(-INFINITY), _CMP_EQ_OQ);

		ST(p + i, _mm512_mask_mov_pd(LD(p + i), k, _mm512_setzero_pd()));
	}
	for (; i < n; i++)
		if (sc[i] == -INFINITY)
			p[i] = 0;
}

__attribute__((target("avx512f")))
static void div_avx512(double *p, int n, double z)
{
	int i = 0;

	for (; i + 8 <= n; i += 8)
		ST(p + i, _mm512_div_pd(LD(p + i), B1(z)));
	for (; i < n; i++)
		p[i] = p[i] / z;
}
/*
 * AVX2 + FMA: 16 ymm registers, 4 doubles each, so smaller tiles: q.k as
 * 6 rows x 8 keys twice (12 sums), the quantized PV one row x 16 dims
 * x {o, sum p |v|} per half slice (8 sums), the float PV 2 rows x 16 dims
 * (8). Every sum is still its own chain in the plain loop's order.
 */
#define LD2 _mm256_loadu_pd
#define ST2 _mm256_storeu_pd
#define FMA2 _mm256_fmadd_pd
#define B2 _mm256_set1_pd

__attribute__((target("avx2,fma")))
static void qk_avx2(int nr, const double *const q[TILE_QK_ROWS],
		    const double *kt, int D, double out[TILE_QK_ROWS][TILE_QK_KEYS])
{
	const double *q0 = q[0], *q1 = nr > 1 ? q[1] : q0, *q2 = nr > 2 ? q[2] : q0,
		     *q3 = nr > 3 ? q[3] : q0, *q4 = nr > 4 ? q[4] : q0,
		     *q5 = nr > 5 ? q[5] : q0;

	for (int h = 0; h < TILE_QK_KEYS; h += 8) {
		__m256d a0 = _mm256_setzero_pd(), b0 = a0, a1 = a0, b1 = a0, a2 = a0,
			b2 = a0, a3 = a0, b3 = a0, a4 = a0, b4 = a0, a5 = a0, b5 = a0;

		for (int d = 0; d < D; d++) {
			__m256d k = LD2(kt + (size_t)d * TILE_QK_KEYS + h),
				l = LD2(kt + (size_t)d * TILE_QK_KEYS + h + 4), x;

			x = B2(q0[d]); a0 = FMA2(x, k, a0); b0 = FMA2(x, l, b0);
			x = B2(q1[d]); a1 = FMA2(x, k, a1); b1 = FMA2(x, l, b1);
			x = B2(q2[d]); a2 = FMA2(x, k, a2); b2 = FMA2(x, l, b2);
			x = B2(q3[d]); a3 = FMA2(x, k, a3); b3 = FMA2(x, l, b3);
			x = B2(q4[d]); a4 = FMA2(x, k, a4); b4 = FMA2(x, l, b4);
			x = B2(q5[d]); a5 = FMA2(x, k, a5); b5 = FMA2(x, l, b5);
		}
		ST2(out[0] + h, a0); ST2(out[0] + h + 4, b0);
		if (nr > 1) { ST2(out[1] + h, a1); ST2(out[1] + h + 4, b1); }
		if (nr > 2) { ST2(out[2] + h, a2); ST2(out[2] + h + 4, b2); }
		if (nr > 3) { ST2(out[3] + h, a3); ST2(out[3] + h + 4, b3); }
		if (nr > 4) { ST2(out[4] + h, a4); ST2(out[4] + h + 4, b4); }
		if (nr > 5) { ST2(out[5] + h, a5); ST2(out[5] + h + 4, b5); }
	}
}

/* One row, 16 dims (n = 16 or 32: one or two halves). */
__attribute__((target("avx2,fma")))
static void pvq_avx2(int nr, int nk, int n, const double *const p[TILE_PVQ_ROWS],
		     const double *v, size_t stride, double *const o[TILE_PVQ_ROWS],
		     double *const oa[TILE_PVQ_ROWS])
{
	const __m256d sign = B2(-0.0);

	for (int r = 0; r < nr; r++)
		for (int h = 0; h < n; h += 16) {
			double *x = o[r] + h, *y = oa[r] + h;
			const double *pr = p[r];
			__m256d o0 = LD2(x), o1 = LD2(x + 4), o2 = LD2(x + 8), o3 = LD2(x + 12);
			__m256d a0 = LD2(y), a1 = LD2(y + 4), a2 = LD2(y + 8), a3 = LD2(y + 12);

			for (int j = 0; j < nk; j++) {
				const double *w = v + (size_t)j * stride + h;
				__m256d pj = B2(pr[j]), v0 = LD2(w), v1 = LD2(w + 4),
					v2 = LD2(w + 8), v3 = LD2(w + 12);

				o0 = FMA2(pj, v0, o0);
				a0 = FMA2(pj, _mm256_andnot_pd(sign, v0), a0);
				o1 = FMA2(pj, v1, o1);
				a1 = FMA2(pj, _mm256_andnot_pd(sign, v1), a1);
				o2 = FMA2(pj, v2, o2);
				a2 = FMA2(pj, _mm256_andnot_pd(sign, v2), a2);
				o3 = FMA2(pj, v3, o3);
				a3 = FMA2(pj, _mm256_andnot_pd(sign, v3), a3);
			}
			ST2(x, o0); ST2(x + 4, o1); ST2(x + 8, o2); ST2(x + 12, o3);
			ST2(y, a0); ST2(y + 4, a1); ST2(y + 8, a2); ST2(y + 12, a3);
		}
}

/* Two rows (or one), 16 dims at a time. */
__attribute__((target("avx2,fma")))
static void pvf2_avx2(int nk, int n, const double *p0, const double *p1,
		      const double *v, size_t stride, double *x0, double *x1)
{
	for (int h = 0; h < n; h += 16) {
		double *x = x0 + h, *y = x1 ? x1 + h : NULL;
		__m256d f0 = LD2(x), f1 = LD2(x + 4), f2 = LD2(x + 8), f3 = LD2(x + 12);
		__m256d g0 = f0, g1 = f1, g2 = f2, g3 = f3;

		if (y) {
			g0 = LD2(y); g1 = LD2(y + 4); g2 = LD2(y + 8); g3 = LD2(y + 12);
		}
		for (int j = 0; j < nk; j++) {
			const double *w = v + (size_t)j * stride + h;
			__m256d v0 = LD2(w), v1 = LD2(w + 4), v2 = LD2(w + 8), v3 = LD2(w + 12);
			__m256d pj = B2(p0[j]), qj = B2(p1 ? p1[j] : 0);

			f0 = FMA2(pj, v0, f0); f1 = FMA2(pj, v1, f1);
			f2 = FMA2(pj, v2, f2); f3 = FMA2(pj, v3, f3);
			if (y) {
				g0 = FMA2(qj, v0, g0); g1 = FMA2(qj, v1, g1);
				g2 = FMA2(qj, v2, g2); g3 = FMA2(qj, v3, g3);
			}
		}
		ST2(x, f0); ST2(x + 4, f1); ST2(x + 8, f2); ST2(x + 12, f3);
		if (y) {
			ST2(y, g0); ST2(y + 4, g1); ST2(y + 8, g2); ST2(y + 12, g3);
		}
	}
}

static void pvf_avx2(int nr, int nk, int n, const double *const p[TILE_PVF_ROWS],
		     const double *v, size_t stride, double *const o[TILE_PVF_ROWS])
{
	int r = 0;

	for (; r + 2 <= nr; r += 2)
		pvf2_avx2(nk, n, p[r], p[r + 1], v, stride, o[r], o[r + 1]);
	if (r < nr)
		pvf2_avx2(nk, n, p[r], NULL, v, stride, o[r], NULL);
}
#else
#define qk_avx2 qk_plain
#define pvq_avx2 pvq_plain
#define pvf_avx2 pvf_plain
#define i8_vnni i8_plain
#define qk_avx512 qk_plain
#define pvq_avx512 pvq_plain
#define pvf_avx512 pvf_plain
#endif

static void kt_plain(const float *const k[TILE_QK_KEYS], int D, double *kt)
{
	for (int d = 0; d < D; d++)
		for (int i = 0; i < TILE_QK_KEYS; i++)
			kt[(size_t)d * TILE_QK_KEYS + i] = k[i][d];
}

#ifdef CPU_X86
/* r[e] becomes column e of the 8 x 8 floats r[0..7] (AVX moves). */
__attribute__((target("avx")))
static inline void kt_t8(__m256 r[8])
{
	__m256 t[8], u[8];

	for (int i = 0; i < 4; i++) {
		t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
	}
	for (int h = 0; h < 2; h++) {	/* rows 0-3, then 4-7 */
		u[4 * h + 0] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0x44);
		u[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0xee);
		u[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0x44);
		u[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0xee);
	}
	for (int e = 0; e < 4; e++) {
		r[e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x20);
		r[4 + e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x31);
	}
}

__attribute__((target("avx512f")))
static void kt_avx512(const float *const k[TILE_QK_KEYS], int D, double *kt)
{
	for (int d = 0; d < D; d += 8)
		for (int i0 = 0; i0 < TILE_QK_KEYS; i0 += 8) {
			__m256 r[8];

			for (int i = 0; i < 8; i++)
				r[i] = _mm256_loadu_ps(k[i0 + i] + d);
			kt_t8(r);
			for (int e = 0; e < 8; e++)
				_mm512_storeu_pd(kt + (size_t)(d + e) * TILE_QK_KEYS + i0,
						 _mm512_cvtps_pd(r[e]));
		}
}

__attribute__((target("avx2")))
static void kt_avx2(const float *const k[TILE_QK_KEYS], int D, double *kt)
{
	for (int d = 0; d < D; d += 8)
		for (int i0 = 0; i0 < TILE_QK_KEYS; i0 += 8) {
			__m256 r[8];

			for (int i = 0; i < 8; i++)
				r[i] = _mm256_loadu_ps(k[i0 + i] + d);
			kt_t8(r);
			for (int e = 0; e < 8; e++) {
				double *o = kt + (size_t)(d + e) * TILE_QK_KEYS + i0;

				_mm256_storeu_pd(o, _mm256_cvtps_pd(_mm256_castps256_ps128(r[e])));
				_mm256_storeu_pd(o + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(r[e], 1)));
			}
		}
}
#endif

void tile_kt_isa(enum tile_isa isa, const float *const k[TILE_QK_KEYS], int D,
		 double *kt)
{
#ifdef CPU_X86
	if (isa == TILE_AVX512) {
		kt_avx512(k, D, kt);
		return;
	}
	if (isa == TILE_AVX2) {
		kt_avx2(k, D, kt);
		return;
	}
#endif
	(void)isa;
	kt_plain(k, D, kt);
}

void tile_kt(const float *const k[TILE_QK_KEYS], int D, double *kt)
{
	tile_kt_isa(tile_isa_supported(TILE_AVX512) ? TILE_AVX512 :
		    tile_isa_supported(TILE_AVX2) ? TILE_AVX2 : TILE_PLAIN, k, D, kt);
}

/* (tile_i8's AVX512 build needs VNNI too: tile_i8_fast.) */
int tile_isa_supported(enum tile_isa isa)
{
	if (isa == TILE_AVX512)
		return cpu_has(CPU_AVX512F);
	if (isa == TILE_AVX2)	/* vfmadd is FMA's, not AVX2's */
		return cpu_has(CPU_AVX2) && cpu_has(CPU_FMA);
	return isa == TILE_PLAIN;
}

void tile_qk_isa(enum tile_isa isa, int nr, const double *const q[TILE_QK_ROWS],
		 const double *kt, int D, double out[TILE_QK_ROWS][TILE_QK_KEYS])
{
	(isa == TILE_AVX512 ? qk_avx512 : isa == TILE_AVX2 ? qk_avx2 : qk_plain)
		(nr, q, kt, D, out);
}

void tile_i8_isa(enum tile_isa isa, int nr, const int8_t *const q[TILE_QK_ROWS],
		 const int32_t *sumq, const uint8_t *kt, int D,
		 int32_t out[TILE_QK_ROWS][TILE_QK_KEYS])
{
	(isa == TILE_AVX512 ? i8_vnni : i8_plain)(nr, q, sumq, kt, D, out);
}

int tile_i8_fast(void)
{
	return cpu_has(CPU_AVX512F) && cpu_has(CPU_AVX512VNNI);
}

void tile_i8(int nr, const int8_t *const q[TILE_QK_ROWS], const int32_t *sumq,
	     const uint8_t *kt, int D, int32_t out[TILE_QK_ROWS][TILE_QK_KEYS])
{
	tile_i8_isa(tile_i8_fast() ? TILE_AVX512 : TILE_PLAIN, nr, q, sumq, kt, D, out);
}

void tile_pvq_isa(enum tile_isa isa, int nr, int nk, int n,
		  const double *const p[TILE_PVQ_ROWS], const double *v,
		  size_t stride, double *const o[TILE_PVQ_ROWS],
		  double *const oa[TILE_PVQ_ROWS])
{
	(isa == TILE_AVX512 ? pvq_avx512 : isa == TILE_AVX2 ? pvq_avx2 : pvq_plain)
		(nr, nk, n, p, v, stride, o, oa);
}

void tile_pvf_isa(enum tile_isa isa, int nr, int nk, int n,
		  const double *const p[TILE_PVF_ROWS], const double *v,
		  size_t stride, double *const o[TILE_PVF_ROWS])
{
	(isa == TILE_AVX512 ? pvf_avx512 : isa == TILE_AVX2 ? pvf_avx2 : pvf_plain)
		(nr, nk, n, p, v, stride, o);
}

void tile_dequant(const int8_t *x, double scale, double *y)
{
#ifdef CPU_X86
	if (cpu_has(CPU_AVX512F)) {
		dequant_avx512(x, scale, y);
		return;
	}
#endif
	for (int i = 0; i < 16; i++)
		y[i] = x[i] * scale;
}

static double max_plain(const double *x, int n)
{
	double m = -INFINITY;

	for (int j = 0; j < n; j++)
		if (x[j] > m)
			m = x[j];
	return m;
}

double tile_max(const double *x, int n)
{
#ifdef CPU_X86
	if (cpu_has(CPU_AVX512F)) {
		double m = max_avx512(x, n);

		return m == 0 ? max_plain(x, n) : m;
	}
#endif
	return max_plain(x, n);
}

void tile_unmask(const double *s, double *p, int n)
{
#ifdef CPU_X86
	if (cpu_has(CPU_AVX512F)) {
		unmask_avx512(s, p, n);
		return;
	}
#endif
	for (int j = 0; j < n; j++)
		if (s[j] == -INFINITY)
			p[j] = 0;
}

void tile_div(double *p, int n, double z)
{
#ifdef CPU_X86
	if (cpu_has(CPU_AVX512F)) {
		div_avx512(p, n, z);
		return;
	}
#endif
	for (int j = 0; j < n; j++)
		p[j] = p[j] / z;
}

/* cpu_has is a test of a bit set once at load time: cheap per call. */
static enum tile_isa best(void)
{
	return tile_isa_supported(TILE_AVX512) ? TILE_AVX512 :
	       tile_isa_supported(TILE_AVX2)   ? TILE_AVX2 : TILE_PLAIN;
}

void tile_qk(int nr, const double *const q[TILE_QK_ROWS], const double *kt,
	     int D, double out[TILE_QK_ROWS][TILE_QK_KEYS])
{
	tile_qk_isa(best(), nr, q, kt, D, out);
}

void tile_pvq(int nr, int nk, int n, const double *const p[TILE_PVQ_ROWS],
	      const double *v, size_t stride, double *const o[TILE_PVQ_ROWS],
	      double *const oa[TILE_PVQ_ROWS])
{
	tile_pvq_isa(best(), nr, nk, n, p, v, stride, o, oa);
}

void tile_pvf(int nr, int nk, int n, const double *const p[TILE_PVF_ROWS],
	      const double *v, size_t stride, double *const o[TILE_PVF_ROWS])
{
	tile_pvf_isa(best(), nr, nk, n, p, v, stride, o);
}
