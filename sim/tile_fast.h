/*
 * tile_fast.h - the vector kernels of the executor fast path (attn.c's
 * fast units), one implementation per instruction set, chosen at run time.
 *
 * Every kernel gives the same bits on every instruction set: integers are
 * exact sums, and each float result is the same IEEE operations in the
 * same order as the scalar per-lane executor performs for that element
 * (sim/attn.c). Vectors only run independent elements side by side.
 *
 * Layouts (N keys of one tile, D head-dim elements, R <= 16 rows):
 *   k     [D/16][N][16] i8: K of the tile, chunk-major like the paged
 *         cache: chunk c of key n at k + c * cstride + n * 16
 *   q     [R][D] i8, qsum[R] = sum of the row's q
 *   dot   [R][N] i32 = sum_d q[r][d] * k[n][d]
 *   vn    [N][D] f32: (float)v * v_scale (int8 V) or v (float V)
 *   o     [R][D] f32: a row group's unnormalized outputs
 *   p     [R][N] f32: probabilities; vis[n] bit r: key n visible to row r
 */
#ifndef TILE_FAST_H
#define TILE_FAST_H

#include <stddef.h>
#include <stdint.h>

enum tile_isa {
	TILE_PORTABLE,		/* plain C: any machine */
	TILE_AVX2,		/* x86-64 AVX2 */
	TILE_AVX512,		/* x86-64 AVX-512 F/BW/VL + VNNI */
};

/* The best instruction set this CPU runs. */
enum tile_isa tile_isa_best(void);
/* 1 when this CPU can run isa. */
int tile_isa_supported(enum tile_isa isa);
/* "portable", "avx2", "avx512-vnni". */
const char *tile_isa_name(enum tile_isa isa);

/* dot[r][n] for r < R, n < N (D a multiple of 16). */
void tile_qk(enum tile_isa isa, const int8_t *q, const int32_t *qsum, int R,
	     const int8_t *k, size_t cstride, int N, int D, int32_t *dot);

/* x[i] = fs_expf(x[i]) for i < n, bit for bit. */
void tile_exp(enum tile_isa isa, float *x, int n);

/*
 * vn[n][d] = (float)v[d * ld + n] * scale[n] for d < D, n < N: the int8 V
 * of N keys in consecutive slots of one block (ld = block_size).
 */
void tile_vconv(enum tile_isa isa, const int8_t *v, int ld, int D, int N,
		const float *scale, float *vn);

/*
 * PV of one tile for R <= 16 rows:
 *   rows r with bit r of upd:  o[r][d] = o[r][d] * alpha[r]
 *   then for each key n < N in order, if bit r of vis[n]:
 *                              o[r][d] = o[r][d] + p[r][n] * vn[n][d]
 * which is sim/attn.c's softmax_pv for each (row, d), in its order.
 */
void tile_pv(enum tile_isa isa, float *o, int R, int D, const float *vn, int N,
	     const float *p, const uint16_t *vis, uint16_t upd,
	     const float *alpha);

#endif
