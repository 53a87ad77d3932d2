/*
 * dot.h - the reference's inner loops, vectorized without changing a bit.
 *
 * Each function computes exactly what the plain loop in its comment
 * computes: integer sums are exact in any order, and every double sum
 * keeps its own order (the vector lanes are different sums, never parts
 * of one). A double sum is fused: each term is fma(a, b, acc), one
 * rounding, which C99's fma() and the vfmadd instructions both give
 * correctly rounded, so the answer is the same on every CPU. So ref.c
 * can be read as the plain loops, and dot.c checked against them
 * (tests/test_dot.c does).
 */
#ifndef DOT_H
#define DOT_H

#include <stddef.h>
#include <stdint.h>

#define DOT_KEYS 8	/* keys per dot_f64_keys call */
#define DOT_SLICE 32	/* head-dim elements per dot_pv call */

/* sum_{i < n} a[i] * b[i] in int32; n a multiple of 32 (exact:
 * |a[i] * b[i]| <= 2^14, n <= 1024, so no partial sum overflows). */
int32_t dot_i8(const int8_t *a, const int8_t *b, int n);

/*
 * Four query rows (q[0..3], each [D] f32) against DOT_KEYS keys at once:
 *   acc = 0;  for d = 0, 1, .., D-1:  acc = fma((double)q[r][d], kt[d][i], acc)
 *   out[r][i] = acc
 * with kt [D][DOT_KEYS] doubles (the keys transposed), summed in d order.
 * A missing row may repeat a real one.
 */
void dot_f64_keys(const float *const q[4], const double *kt, int D,
		  double out[4][DOT_KEYS]);

/*
 * PV over one DOT_SLICE-wide slice of the head dim, keys in order:
 *   for j < nk, d < DOT_SLICE, with x = j * stride + d:
 *       o[d]  = fma(p[j],  v[x],    o[d])
 *       oa[d] = fma(p[j],  vabs[x], oa[d])
 *       of[d] = fma(pf[j], vfd[x],  of[d])
 * The caller makes vabs = |v| and vfd = (double) of the float V once per
 * key, for every row that sees it. o, oa, of are one slice each, kept in
 * registers over the keys.
 */
void dot_pv(int nk, const double *p, const double *pf, const double *v,
	    const double *vabs, const double *vfd, size_t stride, double *o,
	    double *oa, double *of);

/* dot_pv's plain loop over the first n <= DOT_SLICE elements of a slice:
 * the tail a head dim that DOT_SLICE does not divide leaves (80, 112). */
void dot_pv_n(int nk, int n, const double *p, const double *pf,
	      const double *v, const double *vabs, const double *vfd,
	      size_t stride, double *o, double *oa, double *of);

/*
 * The builds of dot_f64_keys and dot_pv, for tests that hold each to the
 * plain loops: the functions above run the best one this CPU supports.
 * DOT_AVX2 is AVX2 with FMA (vfmadd is the FMA extension's).
 */
enum dot_isa { DOT_PLAIN, DOT_AVX2, DOT_AVX512 };
int dot_isa_supported(enum dot_isa isa);
void dot_f64_keys_isa(enum dot_isa isa, const float *const q[4],
		      const double *kt, int D, double out[4][DOT_KEYS]);
void dot_pv_isa(enum dot_isa isa, int nk, const double *p, const double *pf,
		const double *v, const double *vabs, const double *vfd,
		size_t stride, double *o, double *oa, double *of);

#endif
