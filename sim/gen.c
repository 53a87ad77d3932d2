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
