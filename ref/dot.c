/*
 * dot.c - the reference's inner loops (see dot.h), on wide vectors
 * without changing a result.
 *
 * Integer dot products: int8 x int8 products fit in int16, pairs of them
 * in int32 (vpmaddwd), and an int32 sum has one answer in any order. The
 * AVX-512BW and AVX2 versions are picked at run time (cpu_has); the plain
 * loop is the definition and the fallback.
 *
 * Double sums: each vector lane is its own sum - a different key in
 * dot_f64_keys, a different head-dim element in dot_pv - so each sum sees
 * the same operands in the same order as the scalar loop, and each term
 * is one fused multiply-add (fma(a, b, acc), one rounding). Half the
 * operations of a multiply then an add, one rounding instead of two, and
 * the same bits on every CPU: fma is correctly rounded, in C99's fma()
 * as in vfmadd. The fusing is written out, never left to the compiler
 * (the project builds with -ffp-contract=off, which GCC's vector
 * extensions obey): the AVX-512 build with _mm512_fmadd_pd, the AVX2
 * build with _mm256_fmadd_pd (it needs the FMA extension too), the plain
 * build with fma(). One dispatch picks a build with cpu_has; the tests
 * hold all three to the plain loops, bit for bit.
 *
 * Which CPU: sim/common/cpu.h, the one place fragsim asks. It is a header of
 * basics (like sim/common/fs.h), not sim/'s mapping code, so the reference stays
 * independent of what it checks. Off x86 only the plain builds exist: the
 * intrinsics and target attributes are compiled on x86 alone.
 *
 * Example: with D = 2, q[0] = {1, 2}, kt = {{3, 0, ..}, {5, 0, ..}} (key 0
 * has k = {3, 5}), out[0][0] = fma(2, 5, fma(1, 3, 0)) = 13, out[0][1..7]
 * = 0.
 */
#include "dot.h"

#include <math.h>

#include "../sim/common/cpu.h"

#ifdef CPU_X86
#include <immintrin.h>
#endif

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

/*
 * The plain builds: the definition, and what runs on a CPU without
 * AVX2 and FMA (or off x86). fma() is C99's, correctly rounded wherever
 * it runs (glibc uses the instruction when the CPU has it).
 */
static void f64_keys_plain(const float *const q[4], const double *kt, int D,
			   double out[4][DOT_KEYS])
{
	for (int r = 0; r < 4; r++)
		for (int i = 0; i < DOT_KEYS; i++) {
			double acc = 0;

			for (int d = 0; d < D; d++)
				acc = fma((double)q[r][d],
					  kt[(size_t)d * DOT_KEYS + i], acc);
			out[r][i] = acc;
		}
}

void dot_pv_n(int nk, int n, const double *p, const double *pf,
	      const double *v, const double *vabs, const double *vfd,
	      size_t stride, double *o, double *oa, double *of)
{
	for (int j = 0; j < nk; j++)
		for (int d = 0; d < n; d++) {
			size_t x = (size_t)j * stride + d;

			o[d] = fma(p[j], v[x], o[d]);
			oa[d] = fma(p[j], vabs[x], oa[d]);
			of[d] = fma(pf[j], vfd[x], of[d]);
		}
}

static void pv_plain(int nk, const double *p, const double *pf,
		     const double *v, const double *vabs, const double *vfd,
		     size_t stride, double *o, double *oa, double *of)
{
	dot_pv_n(nk, DOT_SLICE, p, pf, v, vabs, vfd, stride, o, oa, of);
}

#ifdef CPU_X86
/*
 * AVX-512: a zmm holds the 8 keys of dot_f64_keys, or 8 head-dim
 * elements of dot_pv (the slice is 4 of them; 12 sums in registers).
 */
__attribute__((target("avx512f")))
static void f64_keys_avx512(const float *const q[4], const double *kt, int D,
			    double out[4][DOT_KEYS])
{
	__m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd(),
		a2 = _mm512_setzero_pd(), a3 = _mm512_setzero_pd();
	const float *q0 = q[0], *q1 = q[1], *q2 = q[2], *q3 = q[3];

	for (int d = 0; d < D; d++) {
		__m512d k = _mm512_loadu_pd(kt + (size_t)d * DOT_KEYS);

		a0 = _mm512_fmadd_pd(_mm512_set1_pd(q0[d]), k, a0);
		a1 = _mm512_fmadd_pd(_mm512_set1_pd(q1[d]), k, a1);
		a2 = _mm512_fmadd_pd(_mm512_set1_pd(q2[d]), k, a2);
		a3 = _mm512_fmadd_pd(_mm512_set1_pd(q3[d]), k, a3);
	}
	_mm512_storeu_pd(out[0], a0);
	_mm512_storeu_pd(out[1], a1);
	_mm512_storeu_pd(out[2], a2);
	_mm512_storeu_pd(out[3], a3);
}

__attribute__((target("avx512f")))
static void pv_avx512(int nk, const double *p, const double *pf,
		      const double *v, const double *vabs, const double *vfd,
		      size_t stride, double *o, double *oa, double *of)
{
	__m512d o0 = _mm512_loadu_pd(o), o1 = _mm512_loadu_pd(o + 8),
		o2 = _mm512_loadu_pd(o + 16), o3 = _mm512_loadu_pd(o + 24);
	__m512d a0 = _mm512_loadu_pd(oa), a1 = _mm512_loadu_pd(oa + 8),
		a2 = _mm512_loadu_pd(oa + 16), a3 = _mm512_loadu_pd(oa + 24);
	__m512d f0 = _mm512_loadu_pd(of), f1 = _mm512_loadu_pd(of + 8),
		f2 = _mm512_loadu_pd(of + 16), f3 = _mm512_loadu_pd(of + 24);

	for (int j = 0; j < nk; j++) {
		size_t x = (size_t)j * stride;
		__m512d pj = _mm512_set1_pd(p[j]), fj = _mm512_set1_pd(pf[j]);

		o0 = _mm512_fmadd_pd(pj, _mm512_loadu_pd(v + x), o0);
		o1 = _mm512_fmadd_pd(pj, _mm512_loadu_pd(v + x + 8), o1);
		o2 = _mm512_fmadd_pd(pj, _mm512_loadu_pd(v + x + 16), o2);
		o3 = _mm512_fmadd_pd(pj, _mm512_loadu_pd(v + x + 24), o3);
		a0 = _mm512_fmadd_pd(pj, _mm512_loadu_pd(vabs + x), a0);
		a1 = _mm512_fmadd_pd(pj, _mm512_loadu_pd(vabs + x + 8), a1);
		a2 = _mm512_fmadd_pd(pj, _mm512_loadu_pd(vabs + x + 16), a2);
		a3 = _mm512_fmadd_pd(pj, _mm512_loadu_pd(vabs + x + 24), a3);
		f0 = _mm512_fmadd_pd(fj, _mm512_loadu_pd(vfd + x), f0);
		f1 = _mm512_fmadd_pd(fj, _mm512_loadu_pd(vfd + x + 8), f1);
		f2 = _mm512_fmadd_pd(fj, _mm512_loadu_pd(vfd + x + 16), f2);
		f3 = _mm512_fmadd_pd(fj, _mm512_loadu_pd(vfd + x + 24), f3);
	}
	_mm512_storeu_pd(o, o0);
	_mm512_storeu_pd(o + 8, o1);
	_mm512_storeu_pd(o + 16, o2);
	_mm512_storeu_pd(o + 24, o3);
	_mm512_storeu_pd(oa, a0);
	_mm512_storeu_pd(oa + 8, a1);
	_mm512_storeu_pd(oa + 16, a2);
	_mm512_storeu_pd(oa + 24, a3);
	_mm512_storeu_pd(of, f0);
	_mm512_storeu_pd(of + 8, f1);
	_mm512_storeu_pd(of + 16, f2);
	_mm512_storeu_pd(of + 24, f3);
}

/*
 * AVX2 + FMA: a ymm holds 4 doubles, so the 8 keys are two of them per
 * row, and the PV slice is done as two halves of 16 elements (12 sums
 * in the 16 registers), each over all the keys.
 */
__attribute__((target("avx2,fma")))
static void f64_keys_avx2(const float *const q[4], const double *kt, int D,
			  double out[4][DOT_KEYS])
{
	__m256d a0 = _mm256_setzero_pd(), b0 = _mm256_setzero_pd(),
		a1 = _mm256_setzero_pd(), b1 = _mm256_setzero_pd(),
		a2 = _mm256_setzero_pd(), b2 = _mm256_setzero_pd(),
		a3 = _mm256_setzero_pd(), b3 = _mm256_setzero_pd();
	const float *q0 = q[0], *q1 = q[1], *q2 = q[2], *q3 = q[3];

	for (int d = 0; d < D; d++) {
		__m256d k = _mm256_loadu_pd(kt + (size_t)d * DOT_KEYS),
			l = _mm256_loadu_pd(kt + (size_t)d * DOT_KEYS + 4);
		__m256d x0 = _mm256_set1_pd(q0[d]), x1 = _mm256_set1_pd(q1[d]),
			x2 = _mm256_set1_pd(q2[d]), x3 = _mm256_set1_pd(q3[d]);

		a0 = _mm256_fmadd_pd(x0, k, a0);
		b0 = _mm256_fmadd_pd(x0, l, b0);
		a1 = _mm256_fmadd_pd(x1, k, a1);
		b1 = _mm256_fmadd_pd(x1, l, b1);
		a2 = _mm256_fmadd_pd(x2, k, a2);
		b2 = _mm256_fmadd_pd(x2, l, b2);
		a3 = _mm256_fmadd_pd(x3, k, a3);
		b3 = _mm256_fmadd_pd(x3, l, b3);
	}
	_mm256_storeu_pd(out[0], a0);
	_mm256_storeu_pd(out[0] + 4, b0);
	_mm256_storeu_pd(out[1], a1);
	_mm256_storeu_pd(out[1] + 4, b1);
	_mm256_storeu_pd(out[2], a2);
	_mm256_storeu_pd(out[2] + 4, b2);
	_mm256_storeu_pd(out[3], a3);
	_mm256_storeu_pd(out[3] + 4, b3);
}

__attribute__((target("avx2,fma")))
static void pv_avx2(int nk, const double *p, const double *pf,
		    const double *v, const double *vabs, const double *vfd,
		    size_t stride, double *o, double *oa, double *of)
{
	for (int h = 0; h < DOT_SLICE; h += 16) {
		__m256d o0 = _mm256_loadu_pd(o + h), o1 = _mm256_loadu_pd(o + h + 4),
			o2 = _mm256_loadu_pd(o + h + 8), o3 = _mm256_loadu_pd(o + h + 12);
		__m256d a0 = _mm256_loadu_pd(oa + h), a1 = _mm256_loadu_pd(oa + h + 4),
			a2 = _mm256_loadu_pd(oa + h + 8), a3 = _mm256_loadu_pd(oa + h + 12);
		__m256d f0 = _mm256_loadu_pd(of + h), f1 = _mm256_loadu_pd(of + h + 4),
			f2 = _mm256_loadu_pd(of + h + 8), f3 = _mm256_loadu_pd(of + h + 12);

		for (int j = 0; j < nk; j++) {
			size_t x = (size_t)j * stride + h;
			__m256d pj = _mm256_set1_pd(p[j]), fj = _mm256_set1_pd(pf[j]);

			o0 = _mm256_fmadd_pd(pj, _mm256_loadu_pd(v + x), o0);
			o1 = _mm256_fmadd_pd(pj, _mm256_loadu_pd(v + x + 4), o1);
			o2 = _mm256_fmadd_pd(pj, _mm256_loadu_pd(v + x + 8), o2);
			o3 = _mm256_fmadd_pd(pj, _mm256_loadu_pd(v + x + 12), o3);
			a0 = _mm256_fmadd_pd(pj, _mm256_loadu_pd(vabs + x), a0);
			a1 = _mm256_fmadd_pd(pj, _mm256_loadu_pd(vabs + x + 4), a1);
			a2 = _mm256_fmadd_pd(pj, _mm256_loadu_pd(vabs + x + 8), a2);
			a3 = _mm256_fmadd_pd(pj, _mm256_loadu_pd(vabs + x + 12), a3);
			f0 = _mm256_fmadd_pd(fj, _mm256_loadu_pd(vfd + x), f0);
			f1 = _mm256_fmadd_pd(fj, _mm256_loadu_pd(vfd + x + 4), f1);
			f2 = _mm256_fmadd_pd(fj, _mm256_loadu_pd(vfd + x + 8), f2);
			f3 = _mm256_fmadd_pd(fj, _mm256_loadu_pd(vfd + x + 12), f3);
		}
		_mm256_storeu_pd(o + h, o0);
		_mm256_storeu_pd(o + h + 4, o1);
		_mm256_storeu_pd(o + h + 8, o2);
		_mm256_storeu_pd(o + h + 12, o3);
		_mm256_storeu_pd(oa + h, a0);
		_mm256_storeu_pd(oa + h + 4, a1);
		_mm256_storeu_pd(oa + h + 8, a2);
		_mm256_storeu_pd(oa + h + 12, a3);
		_mm256_storeu_pd(of + h, f0);
		_mm256_storeu_pd(of + h + 4, f1);
		_mm256_storeu_pd(of + h + 8, f2);
		_mm256_storeu_pd(of + h + 12, f3);
	}
}
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
	if (isa == DOT_AVX2)	/* vfmadd is FMA's, not AVX2's */
		return cpu_has(CPU_AVX2) && cpu_has(CPU_FMA);
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
		const double *v, const double *vabs, const double *vfd,
		size_t stride, double *o, double *oa, double *of)
{
	if (isa == DOT_AVX512)
		pv_avx512(nk, p, pf, v, vabs, vfd, stride, o, oa, of);
	else if (isa == DOT_AVX2)
		pv_avx2(nk, p, pf, v, vabs, vfd, stride, o, oa, of);
	else
		pv_plain(nk, p, pf, v, vabs, vfd, stride, o, oa, of);
}

void dot_f64_keys(const float *const q[4], const double *kt, int D,
		  double out[4][DOT_KEYS])
{
	dot_f64_keys_isa(best(), q, kt, D, out);
}

void dot_pv(int nk, const double *p, const double *pf, const double *v,
	    const double *vabs, const double *vfd, size_t stride, double *o,
	    double *oa, double *of)
{
	dot_pv_isa(best(), nk, p, pf, v, vabs, vfd, stride, o, oa, of);
}
