/*
 * gen.h - counter-based random numbers: element i of stream s under seed
 * k is a pure function gen_u64(k, s, i), so any element can be computed
 * on its own, in any order, on any thread, with the same bits on every
 * machine. No libm: the normal distribution is built from integer
 * arithmetic and exact float operations only (see gen.c).
 */
#ifndef GEN_H
#define GEN_H

#include <stdint.h>

/* Streams: one per tensor, so Q and K never share numbers. */
enum gen_stream {
	GEN_Q = 1, GEN_K = 2, GEN_V = 3,
	GEN_ROWS = 4,		/* zero / constant row choices */
	GEN_BLOCKS = 5,		/* shuffled block placement */
};

uint64_t gen_u64(uint64_t seed, uint64_t stream, uint64_t index);
/* The same numbers with the (seed, stream) key worked out once, for
 * loops over many indices: gen_u64(s, t, i) == gen_u64_key(gen_key(s, t), i). */
uint64_t gen_key(uint64_t seed, uint64_t stream);
uint64_t gen_u64_key(uint64_t key, uint64_t index);
double gen_normal_key(uint64_t key, uint64_t index);
/* Uniform in [0, 1), 53 bits. */
double gen_uniform(uint64_t seed, uint64_t stream, uint64_t index);
/* Mean 0, standard deviation 1, bell-shaped (see gen.c for the shape). */
double gen_normal(uint64_t seed, uint64_t stream, uint64_t index);

#endif
