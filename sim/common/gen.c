/*
 * gen.c - counter-based random numbers (see gen.h).
 *
 * Why counter-based: the inputs of a case are made element by element,
 * and any one element (say K[s=2][token=4096][h=3][d=77]) must be
 * computable on its own, by any thread, in any order, with the same bits
 * on every machine. So there is no state: a draw is a pure function of
 * (seed, stream, index).
 *
 * The mix, in three bijective steps of the splitmix64 finalizer
 * (mix64: xor-shift, multiply, xor-shift, multiply, xor-shift):
 *
 *   seed ──mix64(seed + A)──> ks
 *   ks, stream ──mix64(ks ^ (stream * B + C))──> key     one key per
 *                                                          (seed, stream)
 *   key, index ──mix64(key + index * GOLDEN)──> x         splitmix64 step
 *   x ──mix64(x ^ rotl(key, 32))──> result                 second round
 *
 *   For a fixed (seed, stream), index -> result is a bijection (every
 *   step is), so one stream never repeats itself. For a fixed index,
 *   seed -> key and stream -> key are bijections, so (seed 1, stream 0)
 *   and (seed 0, stream 1) get unrelated keys instead of colliding the
 *   way seed + stream would. The second round, keyed again, breaks the
 *   one structural weakness of plain splitmix64 with per-stream offsets:
 *   two streams' counters are the same sequence shifted, so without it
 *   stream a at index i could equal stream b at index i + delta.
 *
 * Uniform: the top 53 bits times 2^-53, so [0, 1) with every double a
 * multiple of 2^-53 (0 possible, 1 not).
 *
 * Normal: no libm. exp, log, sin and sqrt differ in their last bit
 * between libcs, and the goldens must be byte-identical everywhere, so
 * Box-Muller is out. Instead one 64-bit draw is split into four 16-bit
 * integers b0..b3 and (Irwin-Hall, n = 4):
 *
 *   u_i = (b_i + 0.5) / 65536          uniform on (0, 1), exact in double
 *   x   = (u_0 + u_1 + u_2 + u_3 - 2) * sqrt(3)
 *
 * Each u_i has variance 1/12 (times 1 - 2^-32 for the discreteness), the
 * sum has mean 2 and variance 1/3, so x has mean 0 and variance 1. The
 * sum and the subtraction are exact (multiples of 2^-17 below 4); the
 * only rounding is the final multiply by the compile-time constant
 * sqrt(3), one IEEE operation, the same everywhere.
 *
 * Shape: a piecewise cubic bell, bounded by +-2 sqrt(3) = +-3.4641
 * (a true normal passes 3.46 sigma once in ~1900 draws), excess kurtosis
 * -0.3. Tails are thin, which is fine for attention inputs: outliers are
 * made on purpose, by the case's outlier channels, not by chance.
 *
 * Worked example of the normal: b = 0x8000 0x8000 0x8000 0x8000 gives
 * u_i = 32768.5/65536 each, sum - 2 = 4 * 0.5/65536 = 2^-15,
 * x = 2^-15 * sqrt(3) = 5.2857e-5.
 */
#include "gen.h"

#include "cpu.h"

/* `omp simd` asks for vector code. At -O1 with sanitizers (make fuzz)
 * clang cannot always give it and warns; the loop computes the same
 * either way, so that warning is not an error here. */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

#define GEN_SEED_ADD 0x243f6a8885a308d3ull	/* pi, hex digits */
#define GEN_STREAM_MUL 0xd1b54a32d192ed03ull	/* odd */
#define GEN_STREAM_ADD 0x13198a2e03707344ull	/* pi, more digits */
#define GEN_GOLDEN 0x9e3779b97f4a7c15ull	/* 2^64 / phi, odd */
#define GEN_SQRT3 1.7320508075688772935274463415058723

/* The splitmix64 finalizer: a bijection of 64-bit words. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t gen_key(uint64_t seed, uint64_t stream)
{
	uint64_t ks = mix64(seed + GEN_SEED_ADD);

	return mix64(ks ^ (stream * GEN_STREAM_MUL + GEN_STREAM_ADD));
}

uint64_t gen_u64_key(uint64_t key, uint64_t index)
{
	uint64_t x = mix64(key + index * GEN_GOLDEN);

	return mix64(x ^ ((key << 32) | (key >> 32)));
}

uint64_t gen_u64(uint64_t seed, uint64_t stream, uint64_t index)
{
	return gen_u64_key(gen_key(seed, stream), index);
}

double gen_uniform(uint64_t seed, uint64_t stream, uint64_t index)
{
	return (double)(gen_u64(seed, stream, index) >> 11) * 0x1.0p-53;
}

double gen_normal(uint64_t seed, uint64_t stream, uint64_t index)
{
	return gen_normal_key(gen_key(seed, stream), index);
}

double gen_normal_key(uint64_t key, uint64_t index)
{
	uint64_t bits = gen_u64_key(key, index);
	double sum = 0.0;

	for (int i = 0; i < 4; i++) {
		uint64_t b = (bits >> (16 * i)) & 0xffffu;

		sum += ((double)b + 0.5) * 0x1.0p-16;
	}
	return (sum - 2.0) * GEN_SQRT3;
}

/* ---- rows of the logical tensors ---------------------------------------
 *
 * The element draws are 32-bit, so they vectorise (vpmulld) where the
 * 64-bit mix above would not: the row key r (three more splitmix steps
 * over sequence, token and head, once per row) is split into a = low and
 * b = high 32 bits, and word j of the row is
 *
 *   w(j) = h32(h32(a + j * 0x9e3779b9) ^ b)      (mod 2^32)
 *
 * with h32 the "lowbias32" finalizer (xor-shift 16, multiply 0x7feb352d,
 * xor-shift 15, multiply 0x846ca68b, xor-shift 16), a bijection. The
 * second, keyed round is there for the reason gen_u64_key has one: two
 * rows whose a differ by a multiple of the step would otherwise be the
 * same words shifted. Element d draws from w(2d) and w(2d + 1):
 *
 *   normal   n = the four 16-bit halves of w(2d), w(2d+1) summed - 131070
 *            g = (float)n * (float)(sqrt(3) * 2^-16)   Irwin-Hall n = 4,
 *            the same shape as gen_normal: (sum of (b_i + 0.5) / 65536
 *            - 2) * sqrt(3) = (sum b_i - 131070) * 2^-16 * sqrt(3)
 *   uniform  g = (float)(w(2d) >> 8) * 2^-23 - 1     exact, in [-1, 1)
 *   sign     g = top bit of w(2d) ? 1 : -1
 *
 * then x = bf16(((mean + scale * g) * mult[d]) in float32, one rounding
 * per operation, none fused (-ffp-contract=off), so every build and
 * numpy give the same bits.
 */
#define GEN_W_STEP 0x9e3779b9u
#define GEN_CHOICE 0x8000000000000000ull	/* the choice word's index */
#define GEN_NORMAL_K ((float)(GEN_SQRT3 * 0x1.0p-16))

uint64_t gen_row_key(uint64_t seed, uint64_t stream, uint64_t seq,
		     uint64_t token, uint64_t head)
{
	uint64_t k = gen_key(seed, stream);

	return gen_u64_key(gen_u64_key(gen_u64_key(k, seq), token), head);
}

uint64_t gen_row_choice(uint64_t row_key)
{
	return gen_u64_key(row_key, GEN_CHOICE);
}

static inline __attribute__((always_inline)) uint32_t h32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	return x ^ (x >> 16);
}

static inline __attribute__((always_inline)) uint32_t
word(uint32_t a, uint32_t b, uint32_t j)
{
	return h32(h32(a + j * GEN_W_STEP) ^ b);
}

static inline __attribute__((always_inline)) float
draw_of(uint32_t a, uint32_t b, uint32_t d, enum gen_dist dist)
{
	uint32_t w0 = word(a, b, 2 * d), w1;
	int32_t n;

	if (dist == GEN_DIST_UNIFORM)
		return (float)(w0 >> 8) * 0x1.0p-23f - 1.0f;
	if (dist == GEN_DIST_SIGN)
		return (w0 >> 31) ? 1.0f : -1.0f;
	w1 = word(a, b, 2 * d + 1);
	n = (int32_t)((w0 & 0xffffu) + (w0 >> 16) + (w1 & 0xffffu) + (w1 >> 16)) -
	    131070;
	return (float)n * GEN_NORMAL_K;
}

/* Round to BF16, nearest even, as quant_bf16_round (no NaN here: the
 * inputs are finite). */
static inline __attribute__((always_inline)) float bf16_of(float x)
{
	union { float f; uint32_t u; } v = { .f = x };

	v.u += 0x7fffu + ((v.u >> 16) & 1u);
	v.u &= 0xffff0000u;
	return v.f;
}

float gen_row_draw0(uint64_t row_key, enum gen_dist dist)
{
	return draw_of((uint32_t)row_key, (uint32_t)(row_key >> 32), 0, dist);
}

/* The loop, written once; dist is a constant in each instance, so the
 * branches fold and the body is straight vector code. */
static inline __attribute__((always_inline)) void
row_body(uint64_t row_key, enum gen_dist dist, float mean, float scale,
	 const float *mult, int d0, int n, float *x)
{
	uint32_t a = (uint32_t)row_key, b = (uint32_t)(row_key >> 32);

#pragma omp simd
	for (int i = 0; i < n; i++)
		x[i] = bf16_of((mean + scale * draw_of(a, b, (uint32_t)(d0 + i), dist)) *
			       mult[d0 + i]);
}

#define GEN_ROW_VARIANT(name, attr)					\
	attr static void name(uint64_t k, enum gen_dist dist, float mean, \
			      float scale, const float *mult, int d0, int n, \
			      float *x)					\
	{								\
		switch (dist) {						\
		case GEN_DIST_UNIFORM:					\
			row_body(k, GEN_DIST_UNIFORM, mean, scale, mult, d0, n, x); \
			break;						\
		case GEN_DIST_SIGN:					\
			row_body(k, GEN_DIST_SIGN, mean, scale, mult, d0, n, x); \
			break;						\
		case GEN_DIST_NORMAL:					\
		default:						\
			row_body(k, GEN_DIST_NORMAL, mean, scale, mult, d0, n, x); \
			break;						\
		}							\
	}

GEN_ROW_VARIANT(row_plain, )
#ifdef CPU_X86
GEN_ROW_VARIANT(row_avx2, __attribute__((target("avx2"))))
GEN_ROW_VARIANT(row_avx512, __attribute__((target("avx512f"))))
#endif

void gen_row_part(uint64_t row_key, enum gen_dist dist, float mean,
		  float scale, const float *mult, int d0, int n, float *x)
{
	/* Integer and IEEE float32 operations only: every variant gives
	 * the same bits, the vector ones just more per instruction. */
#ifdef CPU_X86
	if (cpu_has(CPU_AVX512F))
		row_avx512(row_key, dist, mean, scale, mult, d0, n, x);
	else if (cpu_has(CPU_AVX2))
		row_avx2(row_key, dist, mean, scale, mult, d0, n, x);
	else
#endif
		row_plain(row_key, dist, mean, scale, mult, d0, n, x);
}

void gen_row(uint64_t row_key, enum gen_dist dist, float mean, float scale,
	     const float *mult, int n, float *x)
{
	gen_row_part(row_key, dist, mean, scale, mult, 0, n, x);
}
