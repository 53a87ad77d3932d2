/*
 * tile_avx2.c - the vector kernels for x86-64 AVX2 (tile_fast.h): the
 * plain C bodies compiled for AVX2 (qk, vconv, pv, pv_i8; the compiler
 * widens their independent elements), exp on 4 lanes, and the generic
 * scores16 and softmax16. Each function carries its instruction set in
 * __attribute__((target)), so the file builds with the project's flags;
 * off x86 it holds no code and tile_avx2_ops returns NULL.
 *
 * PV's o + p * v is one fused multiply-add, as in the specification
 * (fmaf), so the set is AVX2 with FMA (tile_fast.c asks the CPU for both).
 *
 * exp: fs_expf's own steps on 4 lanes: float to double, the same
 * multiplies, subtractions, the Horner loop on 1/k! (mul then add, no
 * FMA), the 2^n scaling and one rounding to float. Each is one correctly
 * rounded IEEE operation, so each lane is fs_expf; the range cases are
 * blended in.
 */
#include "tile_isa.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "../common/fexp.h"

#define AVX2 "avx2,fma"

__attribute__((target(AVX2))) static void
qk_avx2(const int8_t *q, const int32_t *qsum, int R, const int8_t *k,
	size_t cstride, int N, int D, int32_t *dot)
{
	(void)qsum;
	tile_qk_body(q, R, k, cstride, N, D, dot);
}

__attribute__((target(AVX2))) static void
vconv_avx2(const int8_t *v, int ld, int D, int N, const float *scale, float *vn)
{
	tile_vconv_body(v, ld, D, N, scale, vn);
}

__attribute__((target(AVX2))) static void
pv_avx2(float *o, int R, int D, const float *vn, int N, const float *p,
	const uint16_t *vis, uint16_t upd, const float *alpha)
{
	tile_pv_body(o, R, D, vn, N, p, vis, upd, alpha);
}

/* vconv of the TILE_KEYS keys into scratch, then pv. */
__attribute__((target(AVX2))) static void
pv_i8_avx2(float *o, int R, int D, const int8_t *v, int ld,
	   const float *scale, const float *p, const uint16_t *vis,
	   uint16_t upd, const float *alpha, void *scratch)
{
	tile_vconv_body(v, ld, D, TILE_KEYS, scale, scratch);
	tile_pv_body(o, R, D, scratch, TILE_KEYS, p, vis, upd, alpha);
}


/* fs_expf on 4 lanes. */
__attribute__((target(AVX2))) static void exp_avx2(float *x, int n)
{
	int i = 0;

	for (; i + 4 <= n; i += 4) {
		__m128 xf = _mm_loadu_ps(&x[i]);
		__m256d xd = _mm256_cvtps_pd(xf), t, r, p, nd, two;
		__m128i ni;
		__m256i bits;
		__m128 y, big, small, nan;

		t = _mm256_mul_pd(xd, _mm256_set1_pd(FEXP_LOG2E));
		t = _mm256_blendv_pd(_mm256_add_pd(t, _mm256_set1_pd(0.5)),
				     _mm256_sub_pd(t, _mm256_set1_pd(0.5)),
				     _mm256_cmp_pd(t, _mm256_setzero_pd(), _CMP_LT_OQ));
		/* Out-of-range lanes are replaced below; keep their n sane. */
		t = _mm256_min_pd(_mm256_max_pd(t, _mm256_set1_pd(-200.0)),
				  _mm256_set1_pd(200.0));
		ni = _mm256_cvttpd_epi32(t);
		nd = _mm256_cvtepi32_pd(ni);
		r = _mm256_sub_pd(_mm256_sub_pd(xd, _mm256_mul_pd(nd, _mm256_set1_pd(FEXP_LN2_HI))),
				  _mm256_mul_pd(nd, _mm256_set1_pd(FEXP_LN2_LO)));
		p = _mm256_set1_pd(fexp_coef[FEXP_DEG]);
		for (int k = FEXP_DEG - 1; k >= 0; k--)
			p = _mm256_add_pd(_mm256_mul_pd(p, r),
					  _mm256_set1_pd(fexp_coef[k]));
		bits = _mm256_slli_epi64(_mm256_add_epi64(_mm256_cvtepi32_epi64(ni),
							  _mm256_set1_epi64x(1023)), 52);
		two = _mm256_castsi256_pd(bits);
		y = _mm256_cvtpd_ps(_mm256_mul_pd(p, two));
		big = _mm_cmp_ps(xf, _mm_set1_ps(FEXP_MAX), _CMP_GT_OQ);
		small = _mm_cmp_ps(xf, _mm_set1_ps(FEXP_MIN), _CMP_LT_OQ);
		nan = _mm_cmp_ps(xf, xf, _CMP_UNORD_Q);
		y = _mm_blendv_ps(y, _mm_set1_ps(__builtin_inff()), big);
		y = _mm_blendv_ps(y, _mm_setzero_ps(), small);
		y = _mm_blendv_ps(y, xf, nan);
		_mm_storeu_ps(&x[i], y);
	}
	for (; i < n; i++)
		x[i] = fs_expf(x[i]);
}

__attribute__((target(AVX2))) static void
pvq_avx2(int R, int K, int D, const int8_t *a, const int8_t *b4, int32_t *c)
{
	tile_pvq_body(R, K, D, a, b4, c);
}

__attribute__((target(AVX2))) static void
pvo_avx2(int R, int D, float *const *o, uint16_t act, const float *alpha,
	   const float *sp, const int32_t *c)
{
	tile_pvo_body(R, D, o, act, alpha, sp, c);
}

__attribute__((target(AVX2))) static void
gmax_avx2(int R, int GT, int M, const struct tile_order *ord, uint16_t act,
	   const float *ws, float *mx)
{
	tile_gmax_body(R, GT, M, ord, act, ws, mx);
}

__attribute__((target(AVX2))) static void
gsum_avx2(int R, int GT, int M, const struct tile_order *ord, uint16_t act,
	   const float *ws, const float *ex, float *p, float *sum)
{
	tile_gsum_body(R, GT, M, ord, act, ws, ex, p, sum);
}

__attribute__((target(AVX2))) static void
gscale_avx2(int R, int GT, int M, uint16_t act, const float *ws, const float *sv,
	     float *p, float *mx)
{
	tile_gscale_body(R, GT, M, act, ws, sv, p, mx);
}

/*
 * INT8 PV's B planes: four d rows of four quads (16 bytes each) are a
 * 4 x 4 matrix of int32, transposed in registers into four d of each
 * quad (SSE2 unpacks); the quads past a multiple of 4 byte-wise.
 */
__attribute__((target(AVX2))) static void
vquad_avx2(const int8_t *v, int ld, int D, int nq, int8_t *b4)
{
	int q0 = 0;

	for (; q0 + 4 <= nq; q0 += 4) {
		int8_t *o0 = &b4[(size_t)q0 * D * 4];

		for (int d = 0; d + 4 <= D; d += 4) {
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

__attribute__((target(AVX2))) static void
merge_avx2(float *out, const float *o, float l, float w, int D)
{
	tile_merge_body(out, o, l, w, D);
}

static const struct tile_ops avx2_ops = {
	.isa = TILE_AVX2,
	.name = "avx2",
	.qk = qk_avx2,
	.exp = exp_avx2,
	.vconv = vconv_avx2,
	.pv = pv_avx2,
	.pv_i8 = pv_i8_avx2,
	.scores16 = tile_generic_scores16,
	.pvq = pvq_avx2,
	.pvo = pvo_avx2,
	.gmax = gmax_avx2,
	.gsum = gsum_avx2,
	.gscale = gscale_avx2,
	.vquad = vquad_avx2,
	.softmax16 = tile_generic_softmax16,
	.merge = merge_avx2,
};

const struct tile_ops *tile_avx2_ops(void)
{
	return &avx2_ops;
}
#else
const struct tile_ops *tile_avx2_ops(void)
{
	return NULL;
}
#endif
