/*
 * tile_fast.h - the vector kernels of the fast executor (attn_fast.c),
 * one build per instruction set, behind one table of function pointers
 * (struct tile_ops) chosen once at program start, as ggml's CPU backend
 * chooses its kernels:
 *   tile_generic.c  plain C: the definition, and any machine
 *   tile_avx2.c     x86-64 AVX2
 *   tile_avx512.c   x86-64 AVX-512 F/BW/VL + VNNI
 *   tile_fast.c     the tables by instruction set and the one choice
 *
 * Every kernel gives the same bits on every instruction set: integers are
 * exact sums, and each float result is the same IEEE operations in the
 * same order as the scalar per-lane executor performs for that element
 * (sim/attn/attn_spec.c). Vectors only run independent elements side by side.
 *
 * Layouts (N keys of one tile, D head-dim elements, R <= TILE_ROWS rows):
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

/*
 * Rows per call: a row group's rows are the bits of a uint16_t mask
 * (vis, upd, valid), and one AVX-512 register holds 16 floats, one per
 * row, when softmax16 sums the rows side by side.
 */
#define TILE_ROWS 16
/* Keys of the 16-key kernels (scores16, softmax16, pv_i8): gfx936's N. */
#define TILE_KEYS 16
/* Head-dim bytes per K chunk: the cache's [D/16][BS][16] (inputs.h). */
#define TILE_CHUNK 16

/* The slot order every row of a tile shares (its 16 columns once each). */
struct tile_order {
	uint8_t col[TILE_KEYS];	/* the column of each slot, in slot order */
	uint16_t brk;		/* bit j: slot j starts a new lane */
};

enum tile_isa {
	TILE_PORTABLE,		/* plain C: any machine */
	TILE_AVX2,		/* x86-64 AVX2 */
	TILE_AVX512,		/* x86-64 AVX-512 F/BW/VL + VNNI */
};

/*
 * One build of the kernels. Each entry computes what its comment says,
 * bit for bit, in every table.
 */
struct tile_ops {
	enum tile_isa isa;
	const char *name;	/* tile_isa_name(isa) */

	/* dot[r][n] for r < R, n < N (D a multiple of 16). */
	void (*qk)(const int8_t *q, const int32_t *qsum, int R, const int8_t *k,
		   size_t cstride, int N, int D, int32_t *dot);

	/* x[i] = fs_expf(x[i]) for i < n, bit for bit. */
	void (*exp)(float *x, int n);

	/*
	 * vn[n][d] = (float)v[d * ld + n] * scale[n] for d < D, n < N: the
	 * int8 V of N keys in consecutive slots of one block (ld =
	 * block_size).
	 */
	void (*vconv)(const int8_t *v, int ld, int D, int N, const float *scale,
		      float *vn);

	/*
	 * PV of one tile for R <= TILE_ROWS rows:
	 *   rows r with bit r of upd:  o[r][d] = o[r][d] * alpha[r]
	 *   then for each key n < N in order, if bit r of vis[n]:
	 *                              o[r][d] = fma(p[r][n], vn[n][d], o[r][d])
	 * which is attn_spec.c's softmax_pv for each (row, d), in its order.
	 */
	void (*pv)(float *o, int R, int D, const float *vn, int N, const float *p,
		   const uint16_t *vis, uint16_t upd, const float *alpha);

	/*
	 * vconv then pv for N = TILE_KEYS keys of int8 V in consecutive
	 * slots of one block (v[d * ld + n], scale[n]), the same operations
	 * per (row, d): o = o * alpha, then o = o + p * ((float)v * scale)
	 * per visible key in key order. The conversion may run inside the
	 * PV loop (AVX-512, D a multiple of 64), so the f32 V is never
	 * stored. scratch: 64 * D bytes.
	 */
	void (*pv_i8)(float *o, int R, int D, const int8_t *v, int ld,
		      const float *scale, const float *p, const uint16_t *vis,
		      uint16_t upd, const float *alpha, void *scratch);

	/*
	 * Scores of one tile of TILE_KEYS keys for R <= TILE_ROWS rows, left
	 * to right as the scalar executor: ws[r][n] = (float)dot[r][n] *
	 * sq[r] * ksc[n] * ss for lo[r] <= n < hi[r], -inf elsewhere.
	 */
	void (*scores16)(int R, const int32_t *dot, const float *sq,
			 const float *ksc, float ss, const int *lo, const int *hi,
			 float *ws);

	/*
	 * Online softmax of one tile of TILE_KEYS keys for the rows r < R
	 * with bit r of valid, in the scalar executor's order (attn_spec.c
	 * softmax_pv) for rows sharing the slot order ord:
	 *   tmax = max of ws[r][*] (NaN skipped, the first of +-0 in slot order)
	 *   mnew = max(m[r], tmax); rows with mnew = -inf are not updated
	 *   p[r][n] = fs_expf(ws[r][n] - mnew), 0 where ws is -inf
	 *   alpha[r] = fs_expf(m[r] - mnew), 0 if m[r] was -inf, 1 if not updated
	 *   l[r] = l[r] * alpha[r] + (sum of p in ord: within a lane, lanes in order)
	 *   m[r] = mnew;  vis[n] bit r: ws[r][n] != -inf, for updated rows r
	 * Returns the updated rows' bits.
	 */
	/*
	 * INT8 PV's product (pv_fast.c), for R rows of A [R][K] and B held
	 * four keys a d, b4[((j / 4) * D + d) * 4 + j % 4] = B[j][d]:
	 *   c[r][d] = sum over j < K of a[r][j] * B[j][d], in int32
	 * exact in any order (|a B| <= 2^14, so K < 2^16 terms never wrap).
	 * K a multiple of 4, D of 16.
	 */
	void (*pvq)(int R, int K, int D, const int8_t *a, const int8_t *b4, int32_t *c);

	/*
	 * INT8 PV's B from the V cache (pv_fast.c): nq quads of keys in
	 * consecutive slots, element d of key j at v[d * ld + j], into the
	 * four-keys-a-d planes of pvq, b4[(q * D + d) * 4 + i] = v[d * ld +
	 * 4 q + i] for q < nq, i < 4, d < D. Byte copies, in any order.
	 */
	void (*vquad)(const int8_t *v, int ld, int D, int nq, int8_t *b4);

	/*
	 * INT8 PV's update of O, for rows r < R with bit r of act:
	 *   o[r][d] = fmaf((float)c[r][d], sp[r], o[r][d] * alpha[r])
	 * pv_int8.c's o *= alpha, then its fused o + acc sP, per (row, d).
	 */
	void (*pvo)(int R, int D, float *const *o, uint16_t act, const float *alpha,
		    const float *sp, const int32_t *c);

	/*
	 * INT8 PV's group steps (pv_fast.c) for rows r < R with bit r of
	 * act (gmax, gsum rows side by side, gscale row by row), when the
	 * rows share the slot order ord;
	 * ws [GT][M][TILE_KEYS] the group's scores, ex and p [R][GT *
	 * TILE_KEYS], each lane its row's scalar sequence:
	 *   gmax    mx[r] = v where v > mx[r], for v = ws[t][r][ord col i],
	 *           tiles in order, slots in order (NaN skipped, the first
	 *           of equals kept)
	 *   gsum    p[r][j] = ws -inf ? 0 : ex[r][j]; sum[r] += each lane's
	 *           part in slot order (part from 0 each tile, into sum at
	 *           each lane start and the tile's end)
	 *   gscale  keys j in order, visible: p[r][j] *= sv[j], mx[r] = it
	 *           where !(it <= mx[r]) (NaN taken); masked: p[r][j] = 0
	 */
	void (*gmax)(int R, int GT, int M, const struct tile_order *ord, uint16_t act,
		     const float *ws, float *mx);
	void (*gsum)(int R, int GT, int M, const struct tile_order *ord, uint16_t act,
		     const float *ws, const float *ex, float *p, float *sum);
	void (*gscale)(int R, int GT, int M, uint16_t act, const float *ws, const float *sv,
		       float *p, float *mx);

	uint16_t (*softmax16)(int R, uint16_t valid, const struct tile_order *ord,
			      const float *ws, float *p, float *m, float *l,
			      float *alpha, uint16_t *vis);

	/*
	 * One segment's share of a row's split-K merge (attn_merge_row):
	 *   out[d] = fmaf(o[d] / l, w, out[d]) for d < D
	 * independent d, each its division then its fused multiply-add.
	 */
	void (*merge)(float *out, const float *o, float l, float w, int D);
};

/* "portable", "avx2", "avx512-vnni". */
const char *tile_isa_name(enum tile_isa isa);

/*
 * The table of isa, or NULL when this CPU cannot run it (or the build
 * has no code for it: AVX2 and AVX-512 off x86).
 */
const struct tile_ops *tile_ops_of(enum tile_isa isa);

/*
 * The best table this CPU runs, chosen once at program start (tile_fast.c
 * says how, and why any thread may read it).
 */
const struct tile_ops *tile_ops_best(void);

#endif
