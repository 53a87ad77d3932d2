/*
 * dot.c - the reference's inner loops (see dot.h), written so that the
 * compiler can use wide vectors without changing a result.
 *
 * Integer dot products: int8 x int8 products fit in int16, pairs of them
 * in int32 (vpmaddwd), and an int32 sum has one answer in any order. The
 * AVX-512BW and AVX2 versions are picked at run time (cpu_has); the plain
 * loop is the definition and the fallback.
 *
 * Double sums: GCC vector extensions (dot_v8d, 8 doubles) where each lane
 * is its own sum - a different key in dot_f64_keys, a different head-dim
 * element in dot_pv - so each sum sees the same operands in the same
 * order as the scalar loop, with one rounding per product and per add
 * (-ffp-contract=off forbids fusing them). Each body is one always-inline
 * function, compiled three times by thin wrappers that carry their
 * instruction set in __attribute__((target)) - AVX-512, AVX2, baseline -
 * and one dispatch picks a wrapper with cpu_has. (Not target_clones:
 * clang names its resolvers differently from gcc and the build did not
 * link.) All three compute the same IEEE operations.
 *
 * Which CPU: sim/cpu.h, the one place fragsim asks. It is a header of
 * basics (like sim/fs.h), not sim/'s mapping code, so the reference stays
 * independent of what it checks. Off x86 only the plain builds exist: the
 * intrinsics and target attributes are compiled on x86 alone.
 *
 * Example: with D = 2, q[0] = {1, 2}, kt = {{3, 0, ..}, {5, 0, ..}} (key 0
 * has k = {3, 5}), out[0][0] = (0 + 1*3) + 2*5 = 13, out[0][1..7] = 0.
 */
#include "dot.h"

#include "../sim/cpu.h"

#ifdef CPU_X86
#include <immintrin.h>
#endif

/* 8 doubles; dot_mem is the same at any 8-byte aligned address, dot_memf
 * 8 floats at any 4-byte aligned one. */
typedef double dot_v8d __attribute__((vector_size(64)));
typedef double dot_mem __attribute__((vector_size(64), aligned(8), may_alias));
typedef int64_t dot_v8l __attribute__((vector_size(64)));
typedef float dot_memf __attribute__((vector_size(32), aligned(4), may_alias));

static int32_t dot_i8_plain(const int8_t *a, const int8_t *b, int n)
{
	int32_t acc = 0;

	for (int i = 0; i < n; i++)
		acc += (int32_t)a[i] * (int32_t)b[i];
	return acc;
}

#ifdef CPU_X86
__attribute__((target("avx2")))
static int32_t dot_i8_avx2(const int8_t *a, const int8_t *b, int n)
{
	__m256i acc = _mm256_setzero_si256();
	__m128i h;

	for (int i = 0; i < n; i += 16) {
		__m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const void *)(a + i)));
		__m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128((const void *)(b + i)));

		acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, y));
	}
	h = _mm_add_epi32(_mm256_castsi256_si128(acc),
			  _mm256_extracti128_si256(acc, 1));
	h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
	h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xb1));
	return _mm_cvtsi128_si32(h);
}

__attribute__((target("avx512f,avx512bw")))
static int32_t dot_i8_avx512(const int8_t *a, const int8_t *b, int n)
{
	__m512i acc = _mm512_setzero_si512();

	for (int i = 0; i < n; i += 32) {
		__m512i x = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const void *)(a + i)));
		__m512i y = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const void *)(b + i)));

		acc = _mm512_add_epi32(acc, _mm512_madd_epi16(x, y));
	}
	return _mm512_reduce_add_epi32(acc);
}
#endif

int32_t dot_i8(const int8_t *a, const int8_t *b, int n)
{
	if (n % 32 != 0)
		return dot_i8_plain(a, b, n);
#ifdef CPU_X86
	if (cpu_has(CPU_AVX512BW))
		return dot_i8_avx512(a, b, n);
	if (cpu_has(CPU_AVX2))
		return dot_i8_avx2(a, b, n);
#endif
	return dot_i8_plain(a, b, n);
}

static inline __attribute__((always_inline)) void
f64_keys(const float *const q[4], const double *kt, int D,
	 double out[4][DOT_KEYS])
{
	dot_v8d a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 };
	const float *q0 = q[0], *q1 = q[1], *q2 = q[2], *q3 = q[3];

	for (int d = 0; d < D; d++) {
		dot_v8d k = *(const dot_mem *)(kt + (size_t)d * DOT_KEYS);

		a0 += (double)q0[d] * k;
		a1 += (double)q1[d] * k;
		a2 += (double)q2[d] * k;
		a3 += (double)q3[d] * k;
	}
	*(dot_mem *)(out[0]) = a0;
	*(dot_mem *)(out[1]) = a1;
	*(dot_mem *)(out[2]) = a2;
	*(dot_mem *)(out[3]) = a3;
}

static inline __attribute__((always_inline)) void
pv(int nk, const double *p, const double *pf, const double *v,
   size_t vstride, const float *vf, size_t fstride, double *o, double *oa,
   double *of)
{
	dot_v8d o0 = *(const dot_mem *)(o), o1 = *(const dot_mem *)(o + 8),
		o2 = *(const dot_mem *)(o + 16), o3 = *(const dot_mem *)(o + 24);
	dot_v8d a0 = *(const dot_mem *)(oa), a1 = *(const dot_mem *)(oa + 8),
		a2 = *(const dot_mem *)(oa + 16), a3 = *(const dot_mem *)(oa + 24);
	dot_v8d f0 = *(const dot_mem *)(of), f1 = *(const dot_mem *)(of + 8),
		f2 = *(const dot_mem *)(of + 16), f3 = *(const dot_mem *)(of + 24);
	/* |v| as fabs makes it: the sign bit cleared */
	const dot_v8l nosign = (dot_v8l){ 0 } + INT64_MAX;

	for (int j = 0; j < nk; j++) {
		const double *vj = v + (size_t)j * vstride;
		const float *fj = vf + (size_t)j * fstride;
		dot_v8d v0 = *(const dot_mem *)(vj), v1 = *(const dot_mem *)(vj + 8),
			v2 = *(const dot_mem *)(vj + 16),
			v3 = *(const dot_mem *)(vj + 24);
		double pj = p[j], fpj = pf[j];

		o0 += pj * v0;
		o1 += pj * v1;
		o2 += pj * v2;
		o3 += pj * v3;
		a0 += pj * (dot_v8d)((dot_v8l)v0 & nosign);
		a1 += pj * (dot_v8d)((dot_v8l)v1 & nosign);
		a2 += pj * (dot_v8d)((dot_v8l)v2 & nosign);
		a3 += pj * (dot_v8d)((dot_v8l)v3 & nosign);
		f0 += fpj * __builtin_convertvector(*(const dot_memf *)(fj), dot_v8d);
		f1 += fpj * __builtin_convertvector(*(const dot_memf *)(fj + 8), dot_v8d);
		f2 += fpj * __builtin_convertvector(*(const dot_memf *)(fj + 16), dot_v8d);
		f3 += fpj * __builtin_convertvector(*(const dot_memf *)(fj + 24), dot_v8d);
	}
	*(dot_mem *)(o) = o0;
	*(dot_mem *)(o + 8) = o1;
	*(dot_mem *)(o + 16) = o2;
	*(dot_mem *)(o + 24) = o3;
	*(dot_mem *)(oa) = a0;
	*(dot_mem *)(oa + 8) = a1;
	*(dot_mem *)(oa + 16) = a2;
	*(dot_mem *)(oa + 24) = a3;
	*(dot_mem *)(of) = f0;
	*(dot_mem *)(of + 8) = f1;
	*(dot_mem *)(of + 16) = f2;
	*(dot_mem *)(of + 24) = f3;
}

/* The three builds of each body. */
#define DOT_BUILDS(isa, tgt)                                                 \
	tgt static void f64_keys_##isa(const float *const q[4],              \
				       const double *kt, int D,              \
				       double out[4][DOT_KEYS])              \
	{                                                                    \
		f64_keys(q, kt, D, out);                                     \
	}                                                                    \
	tgt static void pv_##isa(int nk, const double *p, const double *pf,  \
				 const double *v, size_t vstride,            \
				 const float *vf, size_t fstride, double *o, \
				 double *oa, double *of)                     \
	{                                                                    \
		pv(nk, p, pf, v, vstride, vf, fstride, o, oa, of);           \
	}
DOT_BUILDS(plain, )
#ifdef CPU_X86
DOT_BUILDS(avx2, __attribute__((target("avx2"))))
DOT_BUILDS(avx512, __attribute__((target("avx512f"))))
#else
/* No x86 builds: dot_isa_supported says so and the plain one runs. */
#define f64_keys_avx2 f64_keys_plain
#define f64_keys_avx512 f64_keys_plain
#define pv_avx2 pv_plain
#define pv_avx512 pv_plain
#endif

int dot_isa_supported(enum dot_isa isa)
{
	if (isa == DOT_AVX512)
		return cpu_has(CPU_AVX512F);
	if (isa == DOT_AVX2)
		return cpu_has(CPU_AVX2);
	return isa == DOT_PLAIN;
}

/* A test of a bit libgcc set at load time: cheap enough per call, and
 * no global to hold a chosen pointer. */
static enum dot_isa best(void)
{
	return dot_isa_supported(DOT_AVX512) ? DOT_AVX512 :
	       dot_isa_supported(DOT_AVX2)   ? DOT_AVX2 :
					       DOT_PLAIN;
}

void dot_f64_keys_isa(enum dot_isa isa, const float *const q[4],
		      const double *kt, int D, double out[4][DOT_KEYS])
{
	if (isa == DOT_AVX512)
		f64_keys_avx512(q, kt, D, out);
	else if (isa == DOT_AVX2)
		f64_keys_avx2(q, kt, D, out);
	else
		f64_keys_plain(q, kt, D, out);
}

void dot_pv_isa(enum dot_isa isa, int nk, const double *p, const double *pf,
		const double *v, size_t vstride, const float *vf,
		size_t fstride, double *o, double *oa, double *of)
{
	if (isa == DOT_AVX512)
		pv_avx512(nk, p, pf, v, vstride, vf, fstride, o, oa, of);
	else if (isa == DOT_AVX2)
		pv_avx2(nk, p, pf, v, vstride, vf, fstride, o, oa, of);
	else
		pv_plain(nk, p, pf, v, vstride, vf, fstride, o, oa, of);
}

void dot_f64_keys(const float *const q[4], const double *kt, int D,
		  double out[4][DOT_KEYS])
{
	dot_f64_keys_isa(best(), q, kt, D, out);
}

void dot_pv(int nk, const double *p, const double *pf, const double *v,
	    size_t vstride, const float *vf, size_t fstride, double *o,
	    double *oa, double *of)
{
	dot_pv_isa(best(), nk, p, pf, v, vstride, vf, fstride, o, oa, of);
}
