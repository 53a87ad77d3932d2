/*
 * dot.c - the reference's one-pair int8 dot product (see dot.h), on wide
 * vectors without changing a result.
 *
 * int8 x int8 products fit in int16, pairs of them in int32 (vpmaddwd),
 * and an int32 sum has one answer in any order. The AVX-512BW and AVX2
 * versions are picked at run time (cpu_has); the plain loop is the
 * definition and the fallback. It serves the per_block32 scores (a sum
 * per 32 dims) and CPUs without VNNI; the tiles of many rows and keys
 * are in tile.c, the double sums too.
 *
 * Which CPU: sim/common/cpu.h, the one place fragsim asks. It is a header of
 * basics (like sim/common/fs.h), not sim/'s mapping code, so the reference stays
 * independent of what it checks. Off x86 only the plain builds exist: the
 * intrinsics and target attributes are compiled on x86 alone.
 */
#include "dot.h"

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
