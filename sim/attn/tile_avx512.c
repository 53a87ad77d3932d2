/*
 * tile_avx512.c - the vector kernels for x86-64 AVX-512 F/BW/VL with
 * VNNI (tile_fast.h). Each function carries its instruction set in
 * __attribute__((target)), so the file builds with the project's flags;
 * off x86 it holds no code and tile_avx512_ops returns NULL. Where a
 * shape has no AVX-512 code (N other than 16 keys, D not a multiple of
 * 16 or 64) an entry runs the plain C body or the generic function.
 *
 * The 16s of this file are the 16 floats (or dwords) of one zmm register,
 * which hold the TILE_KEYS keys of a tile or the TILE_ROWS rows of a row
 * group (tile_fast.h); the kernels are written for that width.
 *
 * Why the results are the generic build's bits:
 *   qk        integer sums: any order gives the same int32. vpdpbusd
 *             multiplies u8 x s8, 4 products per dword: with k' = k + 128
 *             (u8), sum q*k = sum q*k' - 128 * sum q, exactly.
 *   exp       fs_expf's own steps on 8 lanes (see tile_avx2.c).
 *   pv, pv_i8 o = o * alpha, then o = o + p * v per key in key order, for
 *             each (row, d) element; lanes hold different d of one row,
 *             rows and keys the scalar path skips are skipped (masked).
 *   vconv     (float)v * scale per element, then moved (a transpose).
 *   scores16  the same three multiplies per element, left to right.
 *   softmax16 the max as a reduction (NaN-free, so any order), the sums
 *             transposed so that lane r adds row r's p in slot order.
 * The build uses -ffp-contract=off and no -ffast-math: no FMA and no
 * reassociation appear unless written, and none are written.
 */
#include "tile_isa.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <string.h>

#include "../common/fexp.h"

#define AVX512 "avx512f,avx512bw,avx512vl,avx512vnni,fma"

_Static_assert(TILE_ROWS == 16 && TILE_KEYS == 16,
	       "one zmm register holds a tile's keys or a row group's rows");

/* 16 x 16 floats: r[i][j] becomes r[j][i]. */
__attribute__((target(AVX512), always_inline))
static inline void transpose16(__m512 *r)
{
	__m512 t[16];

#pragma GCC unroll 8
	for (int i = 0; i < 8; i++) {
		t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
	}
#pragma GCC unroll 4
	for (int i = 0; i < 4; i++) {
		__m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
		__m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);

		r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
		r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
		r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
		r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
	}
#pragma GCC unroll 2
	for (int h = 0; h < 2; h++)
#pragma GCC unroll 4
		for (int i = 0; i < 4; i++) {
			t[8 * h + i] = _mm512_shuffle_f32x4(r[8 * h + i], r[8 * h + 4 + i], 0x88);
			t[8 * h + 4 + i] = _mm512_shuffle_f32x4(r[8 * h + i], r[8 * h + 4 + i], 0xdd);
		}
#pragma GCC unroll 8
	for (int i = 0; i < 8; i++) {
		r[i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);
		r[8 + i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xdd);
	}
}

/* 16 keys: per 16 d, convert [d][key] and transpose to [key][d]. */
__attribute__((target(AVX512))) static void
vconv_avx512_16(const int8_t *v, int ld, int D, const float *scale, float *vn)
{
	__m512 sc = _mm512_loadu_ps(scale);

	for (int d0 = 0; d0 < D; d0 += 16) {
		__m512 r[16];

#pragma GCC unroll 16
		for (int i = 0; i < 16; i++) {
			__m128i b = _mm_loadu_si128((const __m128i *)&v[(size_t)(d0 + i) * ld]);

			r[i] = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b)), sc);
		}
		transpose16(r);
#pragma GCC unroll 16
		for (int n = 0; n < 16; n++)
			_mm512_storeu_ps(&vn[(size_t)n * D + d0], r[n]);
	}
}

/* fs_expf on 8 lanes. */
__attribute__((target(AVX512))) static void
exp_avx512(float *x, int n)
{
	int i = 0;

	for (; i + 8 <= n; i += 8) {
		__m256 xf = _mm256_loadu_ps(&x[i]);
		__m512d xd = _mm512_cvtps_pd(xf), t, r, p, nd, two;
		__m256i ni;
		__m512i bits;
		__m256 y;
		__mmask8 neg, big, small, nan;

		t = _mm512_mul_pd(xd, _mm512_set1_pd(FEXP_LOG2E));
		neg = _mm512_cmp_pd_mask(t, _mm512_setzero_pd(), _CMP_LT_OQ);
		t = _mm512_mask_sub_pd(_mm512_add_pd(t, _mm512_set1_pd(0.5)), neg, t,
				       _mm512_set1_pd(0.5));
		t = _mm512_min_pd(_mm512_max_pd(t, _mm512_set1_pd(-200.0)),
				  _mm512_set1_pd(200.0));
		ni = _mm512_cvttpd_epi32(t);
		nd = _mm512_cvtepi32_pd(ni);
		r = _mm512_sub_pd(_mm512_sub_pd(xd, _mm512_mul_pd(nd, _mm512_set1_pd(FEXP_LN2_HI))),
				  _mm512_mul_pd(nd, _mm512_set1_pd(FEXP_LN2_LO)));
		p = _mm512_set1_pd(fexp_coef[FEXP_DEG]);
		for (int k = FEXP_DEG - 1; k >= 0; k--)
			p = _mm512_add_pd(_mm512_mul_pd(p, r),
					  _mm512_set1_pd(fexp_coef[k]));
		bits = _mm512_slli_epi64(_mm512_add_epi64(_mm512_cvtepi32_epi64(ni),
							  _mm512_set1_epi64(1023)), 52);
		two = _mm512_castsi512_pd(bits);
		y = _mm512_cvtpd_ps(_mm512_mul_pd(p, two));
		big = _mm256_cmp_ps_mask(xf, _mm256_set1_ps(FEXP_MAX), _CMP_GT_OQ);
		small = _mm256_cmp_ps_mask(xf, _mm256_set1_ps(FEXP_MIN), _CMP_LT_OQ);
		nan = _mm256_cmp_ps_mask(xf, xf, _CMP_UNORD_Q);
		y = _mm256_mask_mov_ps(y, big, _mm256_set1_ps(__builtin_inff()));
		y = _mm256_mask_mov_ps(y, small, _mm256_setzero_ps());
		y = _mm256_mask_mov_ps(y, nan, xf);
		_mm256_storeu_ps(&x[i], y);
	}
	for (; i < n; i++)
		x[i] = fs_expf(x[i]);
}


__attribute__((target(AVX512))) static void
scores16_avx512(int R, const int32_t *dot, const float *sq, const float *ksc,
		float ss, const int *lo, const int *hi, float *ws)
{
	__m512 k = _mm512_loadu_ps(ksc), s = _mm512_set1_ps(ss);

	for (int r = 0; r < R; r++) {
		__mmask16 in = (__mmask16)((hi[r] >= 16 ? 0xffffu : (1u << hi[r]) - 1) &
					   ~((1u << lo[r]) - 1));
		__m512 v = _mm512_cvtepi32_ps(_mm512_loadu_si512(&dot[r * 16]));

		v = _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(v, _mm512_set1_ps(sq[r])), k), s);
		_mm512_storeu_ps(&ws[r * 16], _mm512_mask_mov_ps(
					 _mm512_set1_ps(-__builtin_inff()), in, v));
	}
}

/*
 * The generic softmax16 on 16 lanes: the max per row as a vector
 * reduction (no NaN in it, so any order gives the same value; a 0 result
 * is redone in slot order for its sign), the exps of all rows and the
 * alphas in one exp_avx512 call, then P transposed so that lane r sums
 * row r: the sequence of adds per lane is the scalar one. ex holds the
 * rows' exps, [TILE_ROWS][TILE_KEYS], then the TILE_ROWS alphas at EX_ALPHA.
 */
#define EX_ALPHA (TILE_ROWS * TILE_KEYS)

__attribute__((target(AVX512))) static uint16_t
softmax16_avx512(int R, uint16_t valid, const struct tile_order *ord,
		 const float *ws, float *p, float *m, float *l, float *alpha,
		 uint16_t *vis)
{
	float ex[EX_ALPHA + TILE_ROWS], mold[TILE_ROWS], sums[TILE_ROWS];
	__m512 pr[16], sum = _mm512_setzero_ps(), part = _mm512_setzero_ps();
	const __m512 ninf = _mm512_set1_ps(-__builtin_inff());
	uint32_t rv[16];
	uint16_t upd = 0;

	for (int r = 0; r < 16; r++) {
		__m512 w;
		float tmax, mnew;

		rv[r] = 0;
		ex[EX_ALPHA + r] = 0.0f;
		_mm512_storeu_ps(&ex[r * 16], ninf);
		if (r >= R)
			continue;
		w = _mm512_loadu_ps(&ws[r * 16]);
		tmax = _mm512_reduce_max_ps(_mm512_mask_mov_ps(
			ninf, _mm512_cmp_ps_mask(w, w, _CMP_ORD_Q), w));
		if (tmax == 0.0f)
			tmax = tile_max16_body(ord, &ws[r * 16]);
		mnew = tmax > m[r] ? tmax : m[r];
		if (!(valid >> r & 1) || mnew == -__builtin_inff())
			continue;
		upd |= (uint16_t)(1u << r);
		mold[r] = m[r];
		m[r] = mnew;
		ex[EX_ALPHA + r] = mold[r] - mnew;
		_mm512_storeu_ps(&ex[r * 16], _mm512_sub_ps(w, _mm512_set1_ps(mnew)));
		rv[r] = _mm512_cmp_ps_mask(w, ninf, _CMP_NEQ_UQ);
	}
	/* Rows past R stay -inf (masked to 0 below): no exps for them. */
	exp_avx512(ex, R * 16);
	exp_avx512(&ex[EX_ALPHA], TILE_ROWS);
	for (int r = 0; r < 16; r++) {
		pr[r] = _mm512_maskz_mov_ps((__mmask16)rv[r], _mm512_loadu_ps(&ex[r * 16]));
		if (r < R) {
			_mm512_storeu_ps(&p[r * 16], pr[r]);
			alpha[r] = !(upd >> r & 1) ? 1.0f :
				   mold[r] == -__builtin_inff() ? 0.0f : ex[EX_ALPHA + r];
		}
	}
	transpose16(pr);
	for (int j = 0; j < 16; j++) {
		if (ord->brk >> j & 1) {
			sum = _mm512_add_ps(sum, part);
			part = _mm512_setzero_ps();
		}
		part = _mm512_add_ps(part, pr[ord->col[j]]);
	}
	_mm512_storeu_ps(sums, _mm512_add_ps(sum, part));
	for (int r = 0; r < R; r++)
		if (upd >> r & 1)
			l[r] = fmaf(l[r], alpha[r], sums[r]);
	{
		__m512i bits = _mm512_loadu_si512(rv);

		for (int n = 0; n < 16; n++)
			vis[n] = _mm512_test_epi32_mask(bits, _mm512_set1_epi32(1 << n));
	}
	return upd;
}

/*
 * QK^T for N = 16: four rows at a time, 4 x 4 accumulators (row, key
 * group of 4); chunk c of a row's q is broadcast to the four 128-bit
 * lanes, which meet the 4 keys x 16 bytes of one 64-byte load of kst.
 * Dword j of lane i then holds a partial sum of key 4g + i, folded below.
 */
__attribute__((target(AVX512))) static void
qk_avx512_16(const int8_t *q, const int32_t *qsum, int R, const int8_t *k,
	     size_t cstride, int D, int32_t *dot)
{
	const __m512i x80 = _mm512_set1_epi8((char)0x80);
	const __m512i pick = _mm512_setr_epi32(0, 4, 8, 12, 0, 4, 8, 12,
					       0, 4, 8, 12, 0, 4, 8, 12);

	for (int r0 = 0; r0 < R; r0 += 4) {
		int rb = R - r0 < 4 ? R - r0 : 4;
		__m512i acc[4][4];

#pragma GCC unroll 4
		for (int i = 0; i < 4; i++)
#pragma GCC unroll 4
			for (int g = 0; g < 4; g++)
				acc[i][g] = _mm512_setzero_si512();
		for (int c = 0; c < D / 16; c++) {
			const int8_t *kp = &k[c * cstride];
			__m512i k0 = _mm512_xor_si512(_mm512_loadu_si512(kp), x80);
			__m512i k1 = _mm512_xor_si512(_mm512_loadu_si512(kp + 64), x80);
			__m512i k2 = _mm512_xor_si512(_mm512_loadu_si512(kp + 128), x80);
			__m512i k3 = _mm512_xor_si512(_mm512_loadu_si512(kp + 192), x80);

#pragma GCC unroll 4
			for (int i = 0; i < 4; i++) {
				/* rows past R repeat the last one; not stored */
				int ri = r0 + (i < rb ? i : rb - 1);
				__m512i qb = _mm512_broadcast_i32x4(_mm_loadu_si128(
					(const __m128i *)&q[(size_t)ri * D + c * 16]));

				acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], k0, qb);
				acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], k1, qb);
				acc[i][2] = _mm512_dpbusd_epi32(acc[i][2], k2, qb);
				acc[i][3] = _mm512_dpbusd_epi32(acc[i][3], k3, qb);
			}
		}
		for (int i = 0; i < rb; i++) {
			__m512i out = _mm512_setzero_si512();

			for (int g = 0; g < 4; g++) {
				__m512i v = acc[i][g];

				v = _mm512_add_epi32(v, _mm512_shuffle_epi32(v, _MM_PERM_CDAB));
				v = _mm512_add_epi32(v, _mm512_shuffle_epi32(v, _MM_PERM_BADC));
				out = _mm512_mask_mov_epi32(out, (__mmask16)(0xF << (4 * g)),
							    _mm512_permutexvar_epi32(pick, v));
			}
			out = _mm512_sub_epi32(out, _mm512_set1_epi32(128 * qsum[r0 + i]));
			_mm512_storeu_si512(&dot[(size_t)(r0 + i) * 16], out);
		}
	}
}

/*
 * 16 keys x 16 d of int8 V, [d][key] (row stride ld) to [key][d] in 4
 * registers (keys 4j .. 4j + 3 in out[j], 16 bytes each): a 4 x 4
 * transpose of 4-byte blocks (lanes, then dwords) and of the bytes in
 * each block. Moves bytes only.
 */
__attribute__((target(AVX512), always_inline)) static inline void
vt16(const int8_t *v, int ld, __m512i *out)
{
	const __m512i tr4 = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13,
					      2, 6, 10, 14, 3, 7, 11, 15);
	const __m512i tb4 = _mm512_broadcast_i32x4(_mm_setr_epi8(
		0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
	__m512i x[4], t[4];

#pragma GCC unroll 4
	for (int c = 0; c < 4; c++) {
		/* lane a, byte n: d = 4c + a, key n */
		if (ld == 16) {
			x[c] = _mm512_loadu_si512(&v[(size_t)c * 64]);
		} else {
			/* Lane a by hand: the insert's lane is an immediate,
			 * which a loop index is only after unrolling (not at
			 * -O1, as make asan builds). */
			const int8_t *r = &v[(size_t)(4 * c) * ld];

			x[c] = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)r));
			x[c] = _mm512_inserti32x4(x[c], _mm_loadu_si128(
				(const __m128i *)(r + (size_t)ld)), 1);
			x[c] = _mm512_inserti32x4(x[c], _mm_loadu_si128(
				(const __m128i *)(r + 2 * (size_t)ld)), 2);
			x[c] = _mm512_inserti32x4(x[c], _mm_loadu_si128(
				(const __m128i *)(r + 3 * (size_t)ld)), 3);
		}
		/* lane N, dword b, byte a: d = 4c + a, key 4N + b */
		x[c] = _mm512_shuffle_epi8(_mm512_permutexvar_epi32(tr4, x[c]), tb4);
	}
	t[0] = _mm512_shuffle_i32x4(x[0], x[1], 0x44);
	t[1] = _mm512_shuffle_i32x4(x[0], x[1], 0xee);
	t[2] = _mm512_shuffle_i32x4(x[2], x[3], 0x44);
	t[3] = _mm512_shuffle_i32x4(x[2], x[3], 0xee);
	/* out[j] lane c holds x[c] lane j; then its dwords transposed */
	out[0] = _mm512_permutexvar_epi32(tr4, _mm512_shuffle_i32x4(t[0], t[2], 0x88));
	out[1] = _mm512_permutexvar_epi32(tr4, _mm512_shuffle_i32x4(t[0], t[2], 0xdd));
	out[2] = _mm512_permutexvar_epi32(tr4, _mm512_shuffle_i32x4(t[1], t[3], 0x88));
	out[3] = _mm512_permutexvar_epi32(tr4, _mm512_shuffle_i32x4(t[1], t[3], 0xdd));
}

/* Are the rows of rm all updated and all seeing keys 0 .. N-1? Then
 * every mask of theirs is all ones and the kernels run unmasked. */
static inline int rows_see_all(const uint16_t *vis, int N, uint16_t upd, uint16_t rm)
{
	int full = (upd & rm) == rm;

	for (int n = 0; full && n < N; n++)
		full = (vis[n] & rm) == rm;
	return full;
}

/* The masks of rows r0 .. r0 + 5 (rb of them real) for keys 0 .. N-1:
 * km[n * 16 + i] all ones when row r0 + i is updated and sees key n. */
static inline void rows6_masks(__mmask16 *km, const uint16_t *vis, int N,
			       uint16_t upd, int r0, int rb)
{
	for (int n = 0; n < N; n++)
		for (int i = 0; i < 6; i++)
			km[n * 16 + i] = (__mmask16)-(int)((vis[n] & upd) >> (r0 + i) & (i < rb));
}

/*
 * PV of up to 6 rows (r0 ..) over 64 d (chunks c0 .. c0 + 3) of the
 * transposed V vt ([D/16][16 keys][16] i8): each (key, 16 d) converted
 * once, (float)v * scale[n], and used by the 6 rows. full: every row
 * updated and every key visible to it (no masks).
 */
__attribute__((target(AVX512), always_inline)) static inline void
pv_i8_rows6(float *o, int D, int r0, int rb, int c0, const int8_t *vt,
	    const float *scale, const float *p, const __mmask16 *km,
	    uint16_t upd, const float *alpha, int full)
{
	__m512 acc[6][4];

#pragma GCC unroll 6
	for (int i = 0; i < 6; i++) {
		/* rows past rb repeat the last one, unmasked never, not stored */
		const float *orow = &o[(size_t)(r0 + (i < rb ? i : rb - 1)) * D + c0 * 16];
		__m512 al = _mm512_set1_ps(alpha[r0 + (i < rb ? i : rb - 1)]);
		__mmask16 um = full ? 0xffff : (__mmask16)-(int)(upd >> (r0 + i) & (i < rb));

#pragma GCC unroll 4
		for (int j = 0; j < 4; j++) {
			acc[i][j] = _mm512_loadu_ps(&orow[16 * j]);
			acc[i][j] = _mm512_mask_mul_ps(acc[i][j], um, acc[i][j], al);
		}
	}
	for (int n = 0; n < 16; n++) {
		__m512 vf[4], sc = _mm512_set1_ps(scale[n]);

#pragma GCC unroll 4
		for (int j = 0; j < 4; j++)
			vf[j] = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
				_mm_loadu_si128((const __m128i *)&vt[((size_t)(c0 + j) * 16 + n) * 16]))),
					      sc);
#pragma GCC unroll 6
		for (int i = 0; i < 6; i++) {
			__m512 pn = _mm512_set1_ps(p[(r0 + (i < rb ? i : rb - 1)) * 16 + n]);
			__mmask16 m = full ? 0xffff : km[n * 16 + i];

#pragma GCC unroll 4
			for (int j = 0; j < 4; j++)
				acc[i][j] = _mm512_mask3_fmadd_ps(pn, vf[j], acc[i][j], m);
		}
	}
#pragma GCC unroll 6
	for (int i = 0; i < 6; i++)
		if (i < rb)
#pragma GCC unroll 4
			for (int j = 0; j < 4; j++)
				_mm512_storeu_ps(&o[(size_t)(r0 + i) * D + (c0 + j) * 16], acc[i][j]);
}

/*
 * pv_i8: V transposed to [key][d] bytes once (vt16), then rows in
 * sixes over 64 d at a time, converting in registers. Per (row, d) the
 * operations and their order are pv_c's: o * alpha, then o + p * vf per
 * visible key in key order (a masked add skips a key exactly).
 */
__attribute__((target(AVX512))) static void
pv_i8_avx512(float *o, int R, int D, const int8_t *v, int ld,
	     const float *scale, const float *p, const uint16_t *vis,
	     uint16_t upd, const float *alpha, int8_t *vt)
{
	uint16_t all = (uint16_t)((1u << R) - 1);
	int full = rows_see_all(vis, 16, upd, all);
	__mmask16 km[16 * 16];

	for (int c = 0; c < D / 16; c++) {
		__m512i t[4];

		vt16(&v[(size_t)c * 16 * ld], ld, t);
#pragma GCC unroll 4
		for (int j = 0; j < 4; j++)
			_mm512_storeu_si512(&vt[(size_t)c * 256 + j * 64], t[j]);
	}
	for (int r0 = 0; r0 < R; r0 += 6) {
		int rb = R - r0 < 6 ? R - r0 : 6, f6 = full && rb == 6;

		if (!f6)
			rows6_masks(km, vis, 16, upd, r0, rb);
		for (int c0 = 0; c0 < D / 16; c0 += 4)
			if (f6)
				pv_i8_rows6(o, D, r0, 6, c0, vt, scale, p, km, upd, alpha, 1);
			else
				pv_i8_rows6(o, D, r0, rb, c0, vt, scale, p, km, upd, alpha, 0);
	}
}

/*
 * PV of up to 6 rows (r0 ..) over 16 * nj d from d0 (nj <= 4) of the
 * staged V vn ([N][D] floats): each (key, 16 d) is loaded once and used
 * by the 6 rows, so 6 * nj accumulators are in flight (one row at a time
 * kept 8 FMA chains waiting on each other and on a load per FMA). Per
 * (row, d) the operations and their order are tile_pv_body's: o * alpha,
 * then fma(p, v, o) per key the row sees, in key order; km[n * 16 + i]
 * is all ones when row r0 + i is updated and sees key n (a masked FMA
 * leaves the lane as it was, as the scalar path's skip does). Rows past
 * rb repeat the last one under zero masks and are not stored. full:
 * every row updated and every key visible to it, so no masks (and km
 * not read): each mask would be all ones, the same operations, and a
 * mask register filled from memory per row and key took one of the two
 * FMA ports' issue slots.
 */
__attribute__((target(AVX512), always_inline)) static inline void
pv_rows6(float *o, int D, int r0, int rb, int d0, int nj, const float *vn,
	 int N, const float *p, const __mmask16 *km, uint16_t upd,
	 const float *alpha, int full)
{
	__m512 acc[6][4];

#pragma GCC unroll 6
	for (int i = 0; i < 6; i++) {
		int r = r0 + (i < rb ? i : rb - 1);
		__m512 al = _mm512_set1_ps(alpha[r]);
		__mmask16 um = full ? 0xffff : (__mmask16)-(int)(upd >> (r0 + i) & (i < rb));

#pragma GCC unroll 4
		for (int j = 0; j < nj; j++) {
			acc[i][j] = _mm512_loadu_ps(&o[(size_t)r * D + d0 + 16 * j]);
			acc[i][j] = _mm512_mask_mul_ps(acc[i][j], um, acc[i][j], al);
		}
	}
	for (int n = 0; n < N; n++) {
		__m512 v[4];

#pragma GCC unroll 4
		for (int j = 0; j < nj; j++)
			v[j] = _mm512_loadu_ps(&vn[(size_t)n * D + d0 + 16 * j]);
#pragma GCC unroll 6
		for (int i = 0; i < 6; i++) {
			__m512 pn = _mm512_set1_ps(p[(r0 + (i < rb ? i : rb - 1)) * N + n]);
			__mmask16 m = full ? 0xffff : km[n * 16 + i];

#pragma GCC unroll 4
			for (int j = 0; j < nj; j++)
				acc[i][j] = _mm512_mask3_fmadd_ps(pn, v[j], acc[i][j], m);
		}
	}
#pragma GCC unroll 6
	for (int i = 0; i < 6; i++)
		if (i < rb && (upd >> (r0 + i) & 1))
#pragma GCC unroll 4
			for (int j = 0; j < nj; j++)
				_mm512_storeu_ps(&o[(size_t)(r0 + i) * D + d0 + 16 * j],
						 acc[i][j]);
}

/* Keys of one pv call the masks are kept for: N of the widest
 * instruction (CDNA3's 32x32); wider tiles take the generic kernel. */
#define PV_MAX_KEYS 32

/* PV, rows in sixes over 64 d at a time (16 for a tail). */
__attribute__((target(AVX512))) static void
pv_avx512(float *o, int R, int D, const float *vn, int N, const float *p,
	  const uint16_t *vis, uint16_t upd, const float *alpha)
{
	__mmask16 km[PV_MAX_KEYS * 16];

	for (int r0 = 0; r0 < R; r0 += 6) {
		int rb = R - r0 < 6 ? R - r0 : 6, d0 = 0, full;
		uint16_t rm = (uint16_t)(((1u << rb) - 1) << r0);

		if (!(upd & rm))
			continue;	/* none of the six is updated */
		/* the common tile: its rows all updated, all seeing every key */
		full = rows_see_all(vis, N, upd, rm);
		if (!full)
			rows6_masks(km, vis, N, upd, r0, rb);
		for (; d0 + 64 <= D; d0 += 64)	/* full a constant: two loops */
			if (full)
				pv_rows6(o, D, r0, rb, d0, 4, vn, N, p, km, upd, alpha, 1);
			else
				pv_rows6(o, D, r0, rb, d0, 4, vn, N, p, km, upd, alpha, 0);
		for (; d0 < D; d0 += 16)
			pv_rows6(o, D, r0, rb, d0, 1, vn, N, p, km, upd, alpha, full);
	}
}

/* ---- the table's entries: AVX-512 where the shape allows ------------- */

__attribute__((target(AVX512))) static void
qk_avx512(const int8_t *q, const int32_t *qsum, int R, const int8_t *k,
	  size_t cstride, int N, int D, int32_t *dot)
{
	if (N == TILE_KEYS)
		qk_avx512_16(q, qsum, R, k, cstride, D, dot);
	else
		tile_qk_body(q, R, k, cstride, N, D, dot);
}

__attribute__((target(AVX512))) static void
vconv_avx512(const int8_t *v, int ld, int D, int N, const float *scale, float *vn)
{
	if (N == TILE_KEYS && D % 16 == 0)
		vconv_avx512_16(v, ld, D, scale, vn);
	else
		tile_vconv_body(v, ld, D, N, scale, vn);
}

static void pv_avx512_any(float *o, int R, int D, const float *vn, int N,
			  const float *p, const uint16_t *vis, uint16_t upd,
			  const float *alpha)
{
	if (D % 16 == 0 && N <= PV_MAX_KEYS)
		pv_avx512(o, R, D, vn, N, p, vis, upd, alpha);
	else
		tile_generic_pv(o, R, D, vn, N, p, vis, upd, alpha);
}

static void pv_i8_avx512_any(float *o, int R, int D, const int8_t *v, int ld,
			     const float *scale, const float *p,
			     const uint16_t *vis, uint16_t upd, const float *alpha,
			     void *scratch)
{
	if (D % 64 == 0)
		pv_i8_avx512(o, R, D, v, ld, scale, p, vis, upd, alpha, scratch);
	else
		tile_generic_pv_i8(o, R, D, v, ld, scale, p, vis, upd, alpha, scratch);
}

/*
 * INT8 PV's product with vpdpbusd, which multiplies unsigned bytes by
 * signed ones. P is not negative in the correct kernel, so A's bytes are
 * most often their own unsigned values and go in as they are; when one is
 * negative, all go in as a + 128 (the sign bit flipped), each sum is then
 * sum a B + 128 sum B, and the column sums of B (the same instruction on
 * bytes of 1) are taken off. All int32, exact in any order: |(a + 128) B|
 * <= 2^15 per term, at most 64 keys here (16 registers of B).
 *
 * vpdpbusd is the bound (one port on some Xeons): each A dword is
 * broadcast from memory (a load, not a shuffle) and meets two column
 * tiles of B, when its 2 x 8 registers fit beside the accumulators.
 */
#define PVQ_QUADS 16

static inline __attribute__((always_inline, target(AVX512))) void
pvq_tiles(int nt, int R, int nq, int D, int d0, const uint32_t *au, int flip,
	  const int8_t *b4, int32_t *c)
{
	const __m512i ones = _mm512_set1_epi8(1);
	__m512i bq[2][PVQ_QUADS], cs[2];

	for (int t = 0; t < nt; t++) {
		cs[t] = _mm512_setzero_si512();
		for (int q = 0; q < nq; q++) {
			bq[t][q] = _mm512_loadu_si512(&b4[((size_t)q * D + d0 + 16 * t) * 4]);
			if (flip)
				cs[t] = _mm512_dpbusd_epi32(cs[t], ones, bq[t][q]);
		}
		cs[t] = _mm512_slli_epi32(cs[t], 7);
	}
	for (int r = 0; r < R; r++) {
		__m512i acc[2] = { _mm512_setzero_si512(), _mm512_setzero_si512() };

		for (int q = 0; q < nq; q++) {
			__m512i w = _mm512_set1_epi32((int)au[r * nq + q]);

			for (int t = 0; t < nt; t++)
				acc[t] = _mm512_dpbusd_epi32(acc[t], w, bq[t][q]);
		}
		for (int t = 0; t < nt; t++)
			_mm512_storeu_si512(&c[(size_t)r * D + d0 + 16 * t],
					    _mm512_sub_epi32(acc[t], cs[t]));
	}
}

__attribute__((target(AVX512))) static void
pvq_avx512(int R, int K, int D, const int8_t *a, const int8_t *b4, int32_t *c)
{
	uint32_t au[TILE_ROWS * PVQ_QUADS];
	int nq = K / 4, n = R * K, flip = 0, d0 = 0;

	if (nq > PVQ_QUADS || R > TILE_ROWS) {
		tile_pvq_body(R, K, D, a, b4, c);
		return;
	}
	for (int i = 0; i < n; i += 64) {
		__mmask64 in = n - i >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (n - i)) - 1;

		flip |= _mm512_movepi8_mask(_mm512_maskz_loadu_epi8(in, &a[i])) != 0;
	}
	memcpy(au, a, (size_t)n);
	for (int i = 0; flip && i < n / 4; i++)
		au[i] ^= 0x80808080u;
	if (nq <= PVQ_QUADS / 2)
		for (; d0 + 32 <= D; d0 += 32)
			pvq_tiles(2, R, nq, D, d0, au, flip, b4, c);
	for (; d0 < D; d0 += 16)
		pvq_tiles(1, R, nq, D, d0, au, flip, b4, c);
}

__attribute__((target(AVX512))) static void
pvo_avx512(int R, int D, float *const *o, uint16_t act, const float *alpha,
	   const float *sp, const int32_t *c)
{
	tile_pvo_body(R, D, o, act, alpha, sp, c);
}

__attribute__((target(AVX512))) static void
gmax_avx512(int R, int GT, int M, const struct tile_order *ord, uint16_t act,
	   const float *ws, float *mx)
{
	const __m512 ninf = _mm512_set1_ps(-__builtin_inff());

	/* a row's max by one reduction (NaN left out, as v > mx leaves it);
	 * a zero's sign is the first zero's in slot order: that row folds */
	for (int r = 0; r < R; r++) {
		__m512 best = ninf;
		float top, m = mx[r];

		if (!(act >> r & 1))
			continue;
		for (int t = 0; t < GT; t++) {
			__m512 w = _mm512_loadu_ps(&ws[((size_t)t * M + r) * TILE_KEYS]);

			best = _mm512_mask_max_ps(best, _mm512_cmp_ps_mask(w, w, _CMP_ORD_Q),
						  best, w);
		}
		top = _mm512_reduce_max_ps(best);
		if (top == 0.0f) {
			for (int t = 0; t < GT; t++)
				for (int i = 0; i < TILE_KEYS; i++) {
					float v = ws[((size_t)t * M + r) * TILE_KEYS + ord->col[i]];

					if (v > m)
						m = v;
				}
		} else if (top > m) {
			m = top;
		}
		mx[r] = m;
	}
}

/*
 * P row by row (the exp, 0 where the score is -inf: NaN is not), then
 * the sums with lane r row r's scalar sequence: the tile's P transposed
 * once, each slot's column one vector, taken in slot order.
 */
__attribute__((target(AVX512))) static void
gsum_avx512(int R, int GT, int M, const struct tile_order *ord, uint16_t act,
	   const float *ws, const float *ex, float *p, float *sum)
{
	const __m512 ninf = _mm512_set1_ps(-__builtin_inff());
	__mmask16 rm = (__mmask16)((1u << R) - 1), a = (__mmask16)(act & rm);
	__m512 s = _mm512_maskz_loadu_ps(rm, sum), e[16];
	size_t GK = (size_t)GT * TILE_KEYS;

	for (int t = 0; t < GT; t++) {
		__m512 part = _mm512_setzero_ps();

		for (int r = 0; r < 16; r++) {
			__m512 w;

			e[r] = _mm512_setzero_ps();
			if (r >= R)
				continue;
			w = _mm512_loadu_ps(&ws[((size_t)t * M + r) * TILE_KEYS]);
			e[r] = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(w, ninf, _CMP_NEQ_UQ),
						   _mm512_loadu_ps(&ex[r * GK + (size_t)t * TILE_KEYS]));
			if (a >> r & 1)
				_mm512_storeu_ps(&p[r * GK + (size_t)t * TILE_KEYS], e[r]);
		}
		transpose16(e);	/* e[n]: key n's column, lane r row r's P */
		for (int i = 0; i < TILE_KEYS; i++) {
			if (ord->brk >> i & 1) {	/* a new lane: its part into the sum */
				s = _mm512_add_ps(s, part);
				part = _mm512_setzero_ps();
			}
			part = _mm512_mask_add_ps(part, a, part, e[ord->col[i]]);
		}
		s = _mm512_add_ps(s, part);
	}
	_mm512_mask_storeu_ps(sum, rm, s);
}

/*
 * P' a row at a time; its max by one reduction where that must be the
 * scalar fold's value: no NaN among the row's visible P' or in mx, and
 * a maximum that is not a zero (whose sign the first in key order would
 * decide); otherwise the fold in key order, as the body does it.
 */
__attribute__((target(AVX512))) static void
gscale_avx512(int R, int GT, int M, uint16_t act, const float *ws, const float *sv,
	     float *p, float *mx)
{
	const __m512 ninf = _mm512_set1_ps(-__builtin_inff());
	int GK = GT * TILE_KEYS;

	for (int r = 0; r < R; r++) {
		float *pr = &p[r * GK], m = mx[r], top;
		__m512 best = ninf;
		int nan = m != m;

		if (!(act >> r & 1))
			continue;
		for (int t = 0; t < GT; t++) {
			__m512 w = _mm512_loadu_ps(&ws[((size_t)t * M + r) * TILE_KEYS]);
			__mmask16 vis = _mm512_cmp_ps_mask(w, ninf, _CMP_NEQ_UQ);
			__m512 pt = _mm512_maskz_mul_ps(vis, _mm512_loadu_ps(&pr[t * TILE_KEYS]),
							_mm512_loadu_ps(&sv[t * TILE_KEYS]));

			_mm512_storeu_ps(&pr[t * TILE_KEYS], pt);
			nan |= _mm512_mask_cmp_ps_mask(vis, pt, pt, _CMP_UNORD_Q) != 0;
			best = _mm512_mask_max_ps(best, vis, best, pt);
		}
		top = _mm512_reduce_max_ps(best);
		if (nan || top == 0.0f) {
			for (int t = 0; t < GT; t++) {
				const float *w = &ws[((size_t)t * M + r) * TILE_KEYS];

				for (int n = 0; n < TILE_KEYS; n++)
					/* NaN propagates: fmaxf would drop it */
					if (w[n] != -INFINITY && !(pr[t * TILE_KEYS + n] <= m))
						m = pr[t * TILE_KEYS + n];
			}
		} else if (top > m) {
			m = top;
		}
		mx[r] = m;
	}
}

/*
 * INT8 PV's B planes: four d rows of four quads (16 bytes each) are a
 * 4 x 4 matrix of int32, transposed in registers into four d of each
 * quad (SSE2 unpacks); the quads past a multiple of 4 byte-wise.
 */
__attribute__((target(AVX512))) static void
vquad_avx512(const int8_t *v, int ld, int D, int nq, int8_t *b4)
{
	int q0 = 0;

	for (; q0 + 4 <= nq; q0 += 4) {
		int8_t *o0 = &b4[(size_t)q0 * D * 4];
		int d = 0;

		/* a block of 16 keys (ld 16): its V is one run of D rows of
		 * 16 bytes, four rows a load; two permutes pick two quads of
		 * 8 dims from two loads, a shuffle joins two such halves */
		for (; ld == 16 && q0 == 0 && d + 16 <= D; d += 16) {
			const __m512i ia = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28,
							     1, 5, 9, 13, 17, 21, 25, 29);
			const __m512i ib = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30,
							     3, 7, 11, 15, 19, 23, 27, 31);
			__m512i l0 = _mm512_loadu_si512(&v[(size_t)d * 16]);
			__m512i l1 = _mm512_loadu_si512(&v[(size_t)(d + 4) * 16]);
			__m512i l2 = _mm512_loadu_si512(&v[(size_t)(d + 8) * 16]);
			__m512i l3 = _mm512_loadu_si512(&v[(size_t)(d + 12) * 16]);
			__m512i a01 = _mm512_permutex2var_epi32(l0, ia, l1);
			__m512i b01 = _mm512_permutex2var_epi32(l0, ib, l1);
			__m512i a23 = _mm512_permutex2var_epi32(l2, ia, l3);
			__m512i b23 = _mm512_permutex2var_epi32(l2, ib, l3);

			_mm512_storeu_si512(&o0[(size_t)d * 4], _mm512_shuffle_i64x2(a01, a23, 0x44));
			_mm512_storeu_si512(&o0[((size_t)D + d) * 4],
					    _mm512_shuffle_i64x2(a01, a23, 0xee));
			_mm512_storeu_si512(&o0[((size_t)2 * D + d) * 4],
					    _mm512_shuffle_i64x2(b01, b23, 0x44));
			_mm512_storeu_si512(&o0[((size_t)3 * D + d) * 4],
					    _mm512_shuffle_i64x2(b01, b23, 0xee));
		}
		/* 16 rows of 16 bytes (dwords q0 .. q0 + 3 each) in four
		 * registers, dword q of each row gathered by two permutes */
		for (; d + 16 <= D; d += 16) {
			__m512i z[4], lo, hi;

			for (int i = 0; i < 4; i++) {
				const int8_t *r = &v[(size_t)(d + 4 * i) * ld + 4 * q0];

				z[i] = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)r));
				z[i] = _mm512_inserti32x4(z[i], _mm_loadu_si128((const __m128i *)&r[ld]), 1);
				z[i] = _mm512_inserti32x4(z[i], _mm_loadu_si128((const __m128i *)&r[2 * ld]), 2);
				z[i] = _mm512_inserti32x4(z[i], _mm_loadu_si128((const __m128i *)&r[3 * ld]), 3);
			}
			for (int q = 0; q < 4; q++) {
				const __m512i ix = _mm512_setr_epi32(q, 4 + q, 8 + q, 12 + q, 16 + q,
								     20 + q, 24 + q, 28 + q, q, 4 + q,
								     8 + q, 12 + q, 16 + q, 20 + q,
								     24 + q, 28 + q);

				lo = _mm512_permutex2var_epi32(z[0], ix, z[1]);
				hi = _mm512_permutex2var_epi32(z[2], ix, z[3]);
				_mm512_storeu_si512(&o0[((size_t)q * D + d) * 4],
						    _mm512_shuffle_i64x2(lo, hi, 0x44));
			}
		}
		for (; d + 4 <= D; d += 4) {
			__m128i r0 = _mm_loadu_si128((const __m128i *)&v[(size_t)d * ld + 4 * q0]);
			__m128i r1 = _mm_loadu_si128((const __m128i *)&v[(size_t)(d + 1) * ld + 4 * q0]);
			__m128i r2 = _mm_loadu_si128((const __m128i *)&v[(size_t)(d + 2) * ld + 4 * q0]);
			__m128i r3 = _mm_loadu_si128((const __m128i *)&v[(size_t)(d + 3) * ld + 4 * q0]);
			__m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpackhi_epi32(r0, r1);
			__m128i t2 = _mm_unpacklo_epi32(r2, r3), t3 = _mm_unpackhi_epi32(r2, r3);

			_mm_storeu_si128((__m128i *)&o0[(size_t)d * 4], _mm_unpacklo_epi64(t0, t2));
			_mm_storeu_si128((__m128i *)&o0[((size_t)D + d) * 4], _mm_unpackhi_epi64(t0, t2));
			_mm_storeu_si128((__m128i *)&o0[((size_t)2 * D + d) * 4], _mm_unpacklo_epi64(t1, t3));
			_mm_storeu_si128((__m128i *)&o0[((size_t)3 * D + d) * 4], _mm_unpackhi_epi64(t1, t3));
		}
	}
	tile_vquad_body(&v[4 * q0], ld, D, nq - q0, &b4[(size_t)q0 * D * 4]);
}

__attribute__((target(AVX512))) static void
merge_avx512(float *out, const float *o, float l, float w, int D)
{
	tile_merge_body(out, o, l, w, D);
}

static const struct tile_ops avx512_ops = {
	.isa = TILE_AVX512,
	.name = "avx512-vnni",
	.qk = qk_avx512,
	.exp = exp_avx512,
	.vconv = vconv_avx512,
	.pv = pv_avx512_any,
	.pv_i8 = pv_i8_avx512_any,
	.scores16 = scores16_avx512,
	.pvq = pvq_avx512,
	.pvo = pvo_avx512,
	.gmax = gmax_avx512,
	.gsum = gsum_avx512,
	.gscale = gscale_avx512,
	.vquad = vquad_avx512,
	.softmax16 = softmax16_avx512,
	.merge = merge_avx512,
};

const struct tile_ops *tile_avx512_ops(void)
{
	return &avx512_ops;
}
#else
const struct tile_ops *tile_avx512_ops(void)
{
	return NULL;
}
#endif
