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

/*
 * Rows of the logical tensors (docs/generator.md is the exact
 * definition, tools/python/fragsim_gen.py its numpy twin). One row is
 * (tensor stream, sequence, token, head); its key is a pure function of
 * those and the seed, so a sequence's data does not depend on any other
 * sequence or on the padded shapes.
 */
enum gen_dist { GEN_DIST_NORMAL, GEN_DIST_UNIFORM, GEN_DIST_SIGN };

uint64_t gen_row_key(uint64_t seed, uint64_t stream, uint64_t seq,
		     uint64_t token, uint64_t head);
/* 64 bits for the row's zero / constant choices. */
uint64_t gen_row_choice(uint64_t row_key);
/*
 * x[d] = bf16((mean + scale * g_d) * mult[d]) for d < n, every operation
 * in float32 (round to nearest even), g_d the row's draw d of dist.
 */
void gen_row(uint64_t row_key, enum gen_dist dist, float mean, float scale,
	     const float *mult, int n, float *x);
/* Dims d0 .. d0 + n - 1 of that row alone: x[i] is the row's x[d0 + i]
 * (mult still indexed by dim), for a reader that needs a slice. */
void gen_row_part(uint64_t row_key, enum gen_dist dist, float mean,
		  float scale, const float *mult, int d0, int n, float *x);
/* The draw g_0 alone (a constant row's value). */
float gen_row_draw0(uint64_t row_key, enum gen_dist dist);

#endif
