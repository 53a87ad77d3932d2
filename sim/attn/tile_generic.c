/*
 * tile_generic.c - the vector kernels in plain C (tile_fast.h): the
 * definition of each table entry, the build any machine runs, and what
 * the x86 builds fall back to. Each loop is the scalar executor's
 * arithmetic for one element (sim/attn/attn_spec.c), written once.
 *
 * Example: exp on {-1, 0, -inf, 89} gives {0x1.78b564p-2, 1, 0, inf}, as
 * fs_expf does, and so does every other build.
 */
#include "tile_isa.h"

#include "../common/fexp.h"

static void qk_generic(const int8_t *q, const int32_t *qsum, int R,
		       const int8_t *k, size_t cstride, int N, int D, int32_t *dot)
{
	(void)qsum;
	tile_qk_body(q, R, k, cstride, N, D, dot);
}

static void exp_generic(float *x, int n)
{
	for (int i = 0; i < n; i++)
		x[i] = fs_expf(x[i]);
}

static void vconv_generic(const int8_t *v, int ld, int D, int N,
			  const float *scale, float *vn)
{
	tile_vconv_body(v, ld, D, N, scale, vn);
}

void tile_generic_pv(float *o, int R, int D, const float *vn, int N,
		     const float *p, const uint16_t *vis, uint16_t upd,
		     const float *alpha)
{
	tile_pv_body(o, R, D, vn, N, p, vis, upd, alpha);
}

/* vconv then pv, which is pv_i8's definition. */
void tile_generic_pv_i8(float *o, int R, int D, const int8_t *v, int ld,
			const float *scale, const float *p, const uint16_t *vis,
			uint16_t upd, const float *alpha, void *scratch)
{
	tile_vconv_body(v, ld, D, TILE_KEYS, scale, scratch);
	tile_pv_body(o, R, D, scratch, TILE_KEYS, p, vis, upd, alpha);
}

void tile_generic_scores16(int R, const int32_t *dot, const float *sq,
			   const float *ksc, float ss, const int *lo,
			   const int *hi, float *ws)
{
	for (int r = 0; r < R; r++)
		for (int n = 0; n < TILE_KEYS; n++)
			ws[r * TILE_KEYS + n] = n < lo[r] || n >= hi[r] ? -INFINITY :
				(float)dot[r * TILE_KEYS + n] * sq[r] * ksc[n] * ss;
}

uint16_t tile_generic_softmax16(int R, uint16_t valid,
				const struct tile_order *ord, const float *ws,
				float *p, float *m, float *l, float *alpha,
				uint16_t *vis)
{
	uint16_t upd = 0;

	for (int n = 0; n < TILE_KEYS; n++)
		vis[n] = 0;
	for (int r = 0; r < R; r++) {
		const float *w = &ws[r * TILE_KEYS];
		float tmax = tile_max16_body(ord, w), mnew, sum = 0.0f, part = 0.0f;

		alpha[r] = 1.0f;
		mnew = tmax > m[r] ? tmax : m[r];
		if (!(valid >> r & 1) || mnew == -INFINITY)
			continue;
		upd |= (uint16_t)(1u << r);
		alpha[r] = m[r] == -INFINITY ? 0.0f : fs_expf(m[r] - mnew);
		for (int n = 0; n < TILE_KEYS; n++) {
			p[r * TILE_KEYS + n] = w[n] == -INFINITY ? 0.0f : fs_expf(w[n] - mnew);
			if (w[n] != -INFINITY)
				vis[n] |= (uint16_t)(1u << r);
		}
		for (int j = 0; j < TILE_KEYS; j++) {
			if (ord->brk >> j & 1) {
				sum += part;
				part = 0.0f;
			}
			part += p[r * TILE_KEYS + ord->col[j]];
		}
		sum += part;
		l[r] = fmaf(l[r], alpha[r], sum);	/* fused, as the spec */
		m[r] = mnew;
	}
	return upd;
}

static void
pvq_generic(int R, int K, int D, const int8_t *a, const int8_t *b4, int32_t *c)
{
	tile_pvq_body(R, K, D, a, b4, c);
}

static void
pvo_generic(int R, int D, float *const *o, uint16_t act, const float *alpha,
	   const float *sp, const int32_t *c)
{
	tile_pvo_body(R, D, o, act, alpha, sp, c);
}

static void
gmax_generic(int R, int GT, int M, const struct tile_order *ord, uint16_t act,
	   const float *ws, float *mx)
{
	tile_gmax_body(R, GT, M, ord, act, ws, mx);
}

static void
gsum_generic(int R, int GT, int M, const struct tile_order *ord, uint16_t act,
	   const float *ws, const float *ex, float *p, float *sum)
{
	tile_gsum_body(R, GT, M, ord, act, ws, ex, p, sum);
}

static void
gscale_generic(int R, int GT, int M, uint16_t act, const float *ws, const float *sv,
	     float *p, float *mx)
{
	tile_gscale_body(R, GT, M, act, ws, sv, p, mx);
}

static void
vquad_generic(const int8_t *v, int ld, int D, int nq, int8_t *b4)
{
	tile_vquad_body(v, ld, D, nq, b4);
}

static void
merge_generic(float *out, const float *o, float l, float w, int D)
{
	tile_merge_body(out, o, l, w, D);
}

static const struct tile_ops generic_ops = {
	.isa = TILE_PORTABLE,
	.name = "portable",
	.qk = qk_generic,
	.exp = exp_generic,
	.vconv = vconv_generic,
	.pv = tile_generic_pv,
	.pv_i8 = tile_generic_pv_i8,
	.scores16 = tile_generic_scores16,
	.pvq = pvq_generic,
	.pvo = pvo_generic,
	.gmax = gmax_generic,
	.gsum = gsum_generic,
	.gscale = gscale_generic,
	.vquad = vquad_generic,
	.softmax16 = tile_generic_softmax16,
	.merge = merge_generic,
};

const struct tile_ops *tile_generic_ops(void)
{
	return &generic_ops;
}
