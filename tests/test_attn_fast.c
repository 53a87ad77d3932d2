/*
 * test_attn_fast.c - the fast executor (sim/attn/attn_fast.c and its vector
 * kernels, sim/attn/tile_*.c) against the scalar per-lane executor, which is
 * the spec:
 *   - the exp entry of every table this CPU runs (tile_ops_of) is fs_expf
 *     bit for bit, over a few million inputs and the edge values;
 *   - qk, pv, pv_i8 and merge agree with plain loops written here;
 *   - scores16 and softmax16 agree with the scalar executor's steps
 *     written out, on rows with NaN, +-0, +-inf, ties, masked rows;
 *   - the table chosen at start (tile_ops_best) is the best this CPU runs
 *     and gives the generic table's bits on each entry;
 *   - for shipped cases (soft cap and ALiBi among them), the goldens of
 *     --exec scalar and of every fast executor, at 1, 2 and 3 threads, are
 *     byte-identical (via the binary, --emulate-only, and for one case the
 *     checked run with its scores).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../sim/common/fexp.h"
#include "../sim/attn/tile_fast.h"
#include "testutil.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd32(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

static void check_exp(enum tile_isa isa, const float *x, int n)
{
	float *y = malloc((size_t)n * sizeof(float));

	memcpy(y, x, (size_t)n * sizeof(float));
	tile_ops_of(isa)->exp(y, n);
	for (int i = 0; i < n; i++) {
		uint32_t want = tu_f32_bits(fs_expf(x[i])), got = tu_f32_bits(y[i]);

		if (want != got && !(x[i] != x[i] && y[i] != y[i]))
			fail_msg("%s: exp(%a) = %a, fs_expf gives %a", tile_isa_name(isa),
				 (double)x[i], (double)y[i], (double)fs_expf(x[i]));
	}
	free(y);
}

static void exp_matches_fs_expf(void **state)
{
	static const float edge[] = {
		0.0f, -0.0f, 1.0f, -1.0f, 88.7228394f, 88.72284f, 88.7228317f, 89.0f,
		-104.0f, -103.99999f, -104.00001f, -87.3365f, -87.3366f, -100.0f,
		-103.5f, 0.34657359f, -0.34657359f, 1e-8f, -1e-8f, 1e-30f,
		-1e-45f, 0.5f, -0.5f, 20.0f, -20.0f, 3.4e38f, -3.4e38f,
	};
	enum { N = 1 << 20 };
	float *x = malloc(N * sizeof(float));
	int nedge = (int)(sizeof(edge) / sizeof(edge[0]));

	(void)state;
	for (int isa = TILE_PORTABLE; isa <= TILE_AVX512; isa++) {
		if (!tile_ops_of((enum tile_isa)isa))
			continue;
		memcpy(x, edge, sizeof(edge));
		x[nedge] = INFINITY;
		x[nedge + 1] = -INFINITY;
		x[nedge + 2] = NAN;
		check_exp((enum tile_isa)isa, x, nedge + 3);
		/* Softmax arguments: uniform in [-110, 90], then random bits. */
		for (int round = 0; round < 2; round++) {
			for (int i = 0; i < N; i++)
				x[i] = -110.0f + 200.0f * (float)(rnd32() >> 8) / (float)(1 << 24);
			check_exp((enum tile_isa)isa, x, N);
		}
		for (int i = 0; i < N; i++)
			x[i] = tu_f32_from_bits(rnd32() ^ (rnd32() << 16));
		check_exp((enum tile_isa)isa, x, N);
		/* Every float in [-1, 0): the most common range (x - max). */
		for (uint32_t b = tu_f32_bits(-1.0f), i = 0; b > 0x80000000u; b -= 97, i++) {
			x[i % N] = tu_f32_from_bits(b);
			if (i % N == N - 1)
				check_exp((enum tile_isa)isa, x, N);
		}
	}
	free(x);
}

/*
 * The correctly rounded expf(x), from expl in x87 long double (64-bit
 * significand, error < 1 of its ulps) rounded once to float. Returns 0,
 * undecided, when expl's value lies within 2^-58 relative of a float
 * rounding boundary (a midpoint), where that rounding could go wrong.
 */
static int expf_correct(float x, float *out)
{
	long double e = expl((long double)x), tol = e * 0x1p-58L;
	float f = (float)e;
	long double lo = ((long double)f + nextafterf(f, 0.0f)) / 2;
	long double hi = ((long double)f + nextafterf(f, INFINITY)) / 2;

	if (fabsl(e - lo) < tol || fabsl(e - hi) < tol)
		return 0;
	*out = f;
	return 1;
}

/* fs_expf's error in ulps of the float result (2^-149 below 2^-126). */
static double expf_err_ulps(float x)
{
	long double e = expl((long double)x), ulp;
	int ex;

	frexpl(e, &ex);		/* e = m * 2^ex, m in [0.5, 1) */
	ulp = ldexpl(1.0L, ex - 24 < -149 ? -149 : ex - 24);
	return (double)(fabsl((long double)fs_expf(x) - e) / ulp);
}

/*
 * fs_expf against the correctly rounded expf over softmax arguments in
 * [-104, 88.72]: uniform values, uniform bit patterns (small magnitudes),
 * every 97th float of [-1, 0). fexp.c's header quotes these figures.
 */
static void exp_is_correctly_rounded(void **state)
{
	enum { N = 1 << 21 };
	long n = 0, wrong = 0, undecided = 0;
	double maxerr = 0.0;
	float maxat = 0.0f;

	(void)state;
	for (long i = 0; i < 2L * N + 0x3f800000L / 97; i++) {
		float x, want;
		double err;

		if (i < N) {
			x = -104.0f + 192.72f * (float)(rnd32() >> 8) / (float)(1 << 24);
		} else if (i < 2L * N) {
			x = tu_f32_from_bits(rnd32() ^ (rnd32() << 16));
			if (!(x >= -104.0f && x <= 88.72f))
				continue;
		} else {
			x = tu_f32_from_bits(0x80000000u + (uint32_t)(i - 2L * N) * 97u + 1u);
		}
		n++;
		err = expf_err_ulps(x);
		if (err > maxerr)
			maxerr = err, maxat = x;
		if (!expf_correct(x, &want))
			undecided++;
		else if (tu_f32_bits(want) != tu_f32_bits(fs_expf(x)))
			wrong++;
	}
	print_message("fs_expf: %ld inputs, %ld not correctly rounded, %ld undecided, "
		      "max error %.9f ulp at %a\n", n, wrong, undecided, maxerr,
		      (double)maxat);
	assert_true(wrong == 0);
	assert_true(maxerr < 0.5 + 1e-6);
}

static void qk_and_pv_match_plain_loops(void **state)
{
	enum { R = 6, NK = 16, D = 256 };
	int8_t q[16 * D], k[D / 16 * NK * 16];
	int32_t qsum[16], dot[16 * NK], want[R * NK];
	float vn[NK * D], p[R * NK], alpha[16], o[R * D], ow[R * D];
	uint16_t vis[NK];

	(void)state;
	for (int i = 0; i < 16 * D; i++)
		q[i] = (int8_t)((int)(rnd32() % 255) - 127);
	for (int i = 0; i < D / 16 * NK * 16; i++)
		k[i] = (int8_t)(rnd32() & 0xff);	/* -128 included */
	for (int r = 0; r < 16; r++) {
		qsum[r] = 0;
		for (int d = 0; d < D; d++)
			qsum[r] += q[r * D + d];
	}
	for (int r = 0; r < R; r++)
		for (int n = 0; n < NK; n++) {
			int32_t s = 0;

			for (int d = 0; d < D; d++)
				s += q[r * D + d] * k[(d / 16 * NK + n) * 16 + d % 16];
			want[r * NK + n] = s;
		}
	for (int n = 0; n < NK * D; n++)
		vn[n] = (float)((int)(rnd32() % 255) - 127) * 0.01f;
	for (int i = 0; i < R * NK; i++)
		p[i] = (float)(rnd32() >> 8) / (float)(1 << 24);
	for (int i = 0; i < 16; i++)
		alpha[i] = (float)(rnd32() >> 8) / (float)(1 << 24);
	for (int n = 0; n < NK; n++)
		vis[n] = (uint16_t)(rnd32() & 0x3f);
	for (int isa = TILE_PORTABLE; isa <= TILE_AVX512; isa++) {
		if (!tile_ops_of((enum tile_isa)isa))
			continue;
		tile_ops_of((enum tile_isa)isa)->qk(q, qsum, R, k, NK * 16, NK, D, dot);
		for (int i = 0; i < R * NK; i++)
			assert_int_equal(dot[i], want[i]);
	}
	/* PV: the scalar executor's order, written out, from one start. */
	{
		float start[R * D];

		rng_state = 7;
		for (int i = 0; i < R * D; i++)
			start[i] = (float)(rnd32() >> 8) / (float)(1 << 20);
		memcpy(ow, start, sizeof(ow));
		for (int r = 0; r < R; r++) {
			if (!(0x2f >> r & 1))
				continue;
			for (int d = 0; d < D; d++)
				ow[r * D + d] *= alpha[r];
			for (int n = 0; n < NK; n++)
				if (vis[n] >> r & 1)
					for (int d = 0; d < D; d++)
						ow[r * D + d] = fmaf(p[r * NK + n], vn[n * D + d],
								     ow[r * D + d]);	/* fused (0.2.0) */
		}
		for (int isa = TILE_PORTABLE; isa <= TILE_AVX512; isa++) {
			if (!tile_ops_of((enum tile_isa)isa))
				continue;
			memcpy(o, start, sizeof(o));
			tile_ops_of((enum tile_isa)isa)->pv(o, R, D, vn, NK, p, vis, 0x2f, alpha);
			assert_memory_equal(o, ow, sizeof(o));
		}
	}
}

/* A value for merge's operands: random finite of all magnitudes, and
 * now and then an edge (NaN, +-inf, +-0, a subnormal). */
static float merge_value(void)
{
	static const float edge[] = { NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -3e-39f };
	uint32_t u = rnd32();
	float f;

	if (u % 16 == 0)
		return edge[(u >> 4) % (sizeof(edge) / sizeof(edge[0]))];
	u = (u & 0x807fffffu) | ((uint32_t)(1 + rnd32() % 253) << 23);
	memcpy(&f, &u, sizeof(f));
	return f;
}

/* merge, a segment's share of a row's split-K merge, against the loop of
 * attn_merge_row: D of 1 to 300 (vector bodies and tails), bit for bit
 * (NaN equal to any NaN, see pv's test). */
static void merge_matches_plain_loop(void **state)
{
	(void)state;
	for (int it = 0; it < 400; it++) {
		int D = 1 + (int)(rnd32() % 300);
		float o[300], start[300], want[300], got[300];
		float l = merge_value(), w = merge_value();

		if (it % 3)	/* mostly the l > 0, finite w a merge sees */
			l = fabsf(l) + 1.0f, w = (float)(rnd32() >> 8) / (float)(1 << 24);
		for (int d = 0; d < D; d++)
			o[d] = merge_value(), start[d] = merge_value();
		for (int d = 0; d < D; d++)
			want[d] = fmaf(o[d] / l, w, start[d]);
		for (int isa = TILE_PORTABLE; isa <= TILE_AVX512; isa++) {
			const struct tile_ops *ops = tile_ops_of((enum tile_isa)isa);

			if (!ops)
				continue;
			memcpy(got, start, (size_t)D * sizeof(float));
			ops->merge(got, o, l, w, D);
			for (int d = 0; d < D; d++)
				if (memcmp(&got[d], &want[d], sizeof(float)) &&
				    !(isnan(got[d]) && isnan(want[d])))
					fail_msg("%s: merge D %d d %d: %a, want %a", ops->name,
						 D, d, (double)got[d], (double)want[d]);
		}
	}
}

/* The scalar formulation of pv_i8, written out: pv of (float)v * scale. */
static void pv_i8_plain(float *o, int R, int D, const int8_t *v, int ld,
			const float *scale, const float *p, const uint16_t *vis,
			uint16_t upd, const float *alpha)
{
	for (int r = 0; r < R; r++) {
		if (!(upd >> r & 1))
			continue;
		for (int d = 0; d < D; d++)
			o[r * D + d] = o[r * D + d] * alpha[r];
		for (int n = 0; n < 16; n++)
			if (vis[n] >> r & 1)
				for (int d = 0; d < D; d++)
					o[r * D + d] = fmaf(p[r * 16 + n],
							    (float)v[d * ld + n] * scale[n],
							    o[r * D + d]);	/* fused */
	}
}

/*
 * pv_i8 on every ISA = the plain loops, bit for bit: row counts
 * around the 6-row blocks, all and some rows updated, all and some keys
 * visible, block strides 16 and 32, a NaN, an inf and a -0 in o.
 */
static void pv_i8_matches_plain_loops(void **state)
{
	enum { D = 256, LD = 32 };
	static const int rs[] = { 1, 5, 6, 7, 12, 16 };
	static int8_t v[D * LD];
	static float o[16 * D], ow[16 * D], start[16 * D], scratch[16 * D];
	float p[16 * 16], alpha[16], scale[16];
	uint16_t vis[16];

	(void)state;
	for (int i = 0; i < D * LD; i++)
		v[i] = (int8_t)(rnd32() & 0xff);
	for (int i = 0; i < 16 * D; i++)
		start[i] = (float)((int)(rnd32() % 2001) - 1000) / 64.0f;
	start[3] = NAN, start[D + 5] = INFINITY, start[2 * D + 7] = -0.0f;
	for (int i = 0; i < 16 * 16; i++)
		p[i] = (float)(rnd32() >> 8) / (float)(1 << 24);
	for (int i = 0; i < 16; i++) {
		alpha[i] = (float)(rnd32() >> 8) / (float)(1 << 24);
		scale[i] = (float)(rnd32() % 1000 + 1) / 4096.0f;
	}
	for (int ri = 0; ri < (int)(sizeof(rs) / sizeof(rs[0])); ri++)
		for (int mode = 0; mode < 4; mode++)
			for (int ld = 16; ld <= LD; ld += 16) {
				int R = rs[ri];
				uint16_t all = (uint16_t)((1u << R) - 1);
				uint16_t upd = mode & 1 ? (uint16_t)(rnd32() & all) : all;

				for (int n = 0; n < 16; n++)
					vis[n] = mode & 2 ? (uint16_t)(rnd32() & upd) : upd;
				memcpy(ow, start, sizeof(ow));
				pv_i8_plain(ow, R, D, v, ld, scale, p, vis, upd, alpha);
				for (int isa = TILE_PORTABLE; isa <= TILE_AVX512; isa++) {
					if (!tile_ops_of((enum tile_isa)isa))
						continue;
					memcpy(o, start, sizeof(o));
					tile_ops_of((enum tile_isa)isa)->pv_i8(o, R, D, v, ld, scale, p,
						   vis, upd, alpha, scratch);
					if (memcmp(o, ow, sizeof(o)))
						fail_msg("pv_i8 %s: R %d mode %d ld %d differs",
							 tile_isa_name((enum tile_isa)isa), R, mode, ld);
				}
			}
}

/* scores16's definition, written out. */
static void scores16_plain(int R, const int32_t *dot, const float *sq,
			   const float *ksc, float ss, const int *lo, const int *hi,
			   float *ws)
{
	for (int r = 0; r < R; r++)
		for (int n = 0; n < 16; n++) {
			float x = (float)dot[r * 16 + n] * sq[r];

			x = x * ksc[n];
			ws[r * 16 + n] = n < lo[r] || n >= hi[r] ? -INFINITY : x * ss;
		}
}

/*
 * The scalar executor's softmax step for one tile (sim/attn/attn_spec.c softmax_pv),
 * written out: max in slot order with v > tmax, rows whose new max is
 * -inf left alone, exps by fs_expf, sums within a lane then lanes in order.
 */
static uint16_t softmax16_plain(int R, uint16_t valid, const struct tile_order *ord,
				const float *ws, float *p, float *m, float *l,
				float *alpha, uint16_t *vis)
{
	uint16_t upd = 0;

	memset(vis, 0, 16 * sizeof(*vis));
	for (int r = 0; r < R; r++) {
		float tmax = -INFINITY, mnew, sum = 0.0f, part = 0.0f;

		for (int j = 0; j < 16; j++) {
			float x = ws[r * 16 + ord->col[j]];

			if (x > tmax)
				tmax = x;
		}
		mnew = tmax > m[r] ? tmax : m[r];
		alpha[r] = 1.0f;
		if (!(valid >> r & 1) || mnew == -INFINITY)
			continue;
		upd |= (uint16_t)(1u << r);
		alpha[r] = m[r] == -INFINITY ? 0.0f : fs_expf(m[r] - mnew);
		for (int j = 0; j < 16; j++) {
			int n = ord->col[j];
			float x = ws[r * 16 + n];

			p[r * 16 + n] = x == -INFINITY ? 0.0f : fs_expf(x - mnew);
			if (x != -INFINITY)
				vis[n] |= (uint16_t)(1u << r);
			if (ord->brk >> j & 1) {
				sum = sum + part;
				part = 0.0f;
			}
			part = part + p[r * 16 + n];
		}
		l[r] = fmaf(l[r], alpha[r], sum + part);	/* fused */
		m[r] = mnew;
	}
	return upd;
}

/*
 * Bit for bit, except that any NaN equals any NaN: IEEE 754 does not say
 * which operand's payload an operation on two NaNs returns, and a
 * compiler may commute a + b, so the sign of a NaN from inf - inf can
 * differ between -O1 and -O2 builds of the same source (make asan found
 * it). Every non-NaN value, -0 included, must match exactly.
 */
static int same_f32(const float *a, const float *b, int n)
{
	for (int i = 0; i < n; i++)
		if (!(isnan(a[i]) && isnan(b[i])) && memcmp(&a[i], &b[i], sizeof(float)))
			return 0;
	return 1;
}

/* A value for a score: ordinary, or one of the cases the max must get right. */
static float special_score(void)
{
	static const float sp[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.5f, -1.5f,
				    1e30f, -1e30f, 0x1p-140f };
	uint32_t u = rnd32();

	return u % 3 ? (float)((int)(rnd32() % 4001) - 2000) / 256.0f :
		       sp[rnd32() % (sizeof(sp) / sizeof(sp[0]))];
}

/*
 * scores16 and softmax16 on every ISA = the written-out scalar
 * steps, bit for bit (any NaN equal to any NaN), on rows with NaN, +-0 (alone
 * and as ties for the max, in both slot orders), +-inf, all-masked rows,
 * invalid rows, ties and a random lane layout; states m = -inf, +-0, finite.
 */
static void softmax16_matches_scalar(void **state)
{
	int32_t dot[16 * 16];
	float sq[16], ksc[16], ws[16 * 16], want_ws[16 * 16];
	int lo[16], hi[16];
	struct tile_order ord;

	(void)state;
	for (int iter = 0; iter < 3000; iter++) {
		int R = 1 + (int)(rnd32() % 16);
		uint16_t valid = (uint16_t)(rnd32() | (iter & 1 ? 0 : 0xffff));
		float m0[16], l0[16];

		/* A random slot order: a permutation, lanes of random length. */
		for (int j = 0; j < 16; j++)
			ord.col[j] = (uint8_t)j;
		for (int j = 15; j > 0; j--) {
			int i = (int)(rnd32() % (unsigned)(j + 1));
			uint8_t t = ord.col[j];

			ord.col[j] = ord.col[i], ord.col[i] = t;
		}
		ord.brk = (uint16_t)(rnd32() | 1u);
		for (int r = 0; r < 16; r++) {
			int a = (int)(rnd32() % 18) - 1, b = (int)(rnd32() % 18) - 1;

			lo[r] = a < 0 ? 0 : a;
			hi[r] = r % 5 == 0 ? 16 : b > 16 ? 16 : b < 0 ? 0 : b;
			sq[r] = (float)(rnd32() % 1000 + 1) / 1024.0f;
			m0[r] = r % 4 == 0 ? -INFINITY : r % 4 == 1 ? (rnd32() & 1 ? 0.0f : -0.0f) :
				(float)((int)(rnd32() % 201) - 100) / 16.0f;
			l0[r] = (float)(rnd32() % 100) / 8.0f;
		}
		for (int n = 0; n < 16; n++)
			ksc[n] = (float)(rnd32() % 1000 + 1) / 8192.0f;
		if (iter % 7 == 0)
			ksc[rnd32() % 16] = iter % 14 ? INFINITY : NAN;
		for (int i = 0; i < 16 * 16; i++)
			dot[i] = (int32_t)(rnd32() % 2000001) - 1000000;
		/* scores */
		scores16_plain(R, dot, sq, ksc, 0.0625f, lo, hi, want_ws);
		for (int isa = TILE_PORTABLE; isa <= TILE_AVX512; isa++) {
			if (!tile_ops_of((enum tile_isa)isa))
				continue;
			tile_ops_of((enum tile_isa)isa)->scores16(R, dot, sq, ksc, 0.0625f, lo, hi, ws);
			if (!same_f32(ws, want_ws, R * 16))
				fail_msg("scores16 %s differs (iter %d)",
					 tile_isa_name((enum tile_isa)isa), iter);
		}
		/* softmax on rows with the special values */
		for (int r = 0; r < R; r++) {
			int kind = (int)(rnd32() % 6);

			for (int n = 0; n < 16; n++)
				ws[r * 16 + n] = kind == 0 ? -INFINITY :	/* all masked */
						 kind == 1 ? (rnd32() & 1 ? 0.0f : -0.0f) :
						 kind == 2 ? (float)(rnd32() % 3) :	/* ties */
						 special_score();
			if (kind == 3)
				ws[r * 16 + rnd32() % 16] = NAN;
		}
		{
			float pw[256], mw[16], lw[16], aw[16], pg[256], mg[16], lg[16], ag[16];
			uint16_t vw[16], vg[16], uw, ug;

			memcpy(mw, m0, sizeof(mw)), memcpy(lw, l0, sizeof(lw));
			uw = softmax16_plain(R, valid, &ord, ws, pw, mw, lw, aw, vw);
			for (int isa = TILE_PORTABLE; isa <= TILE_AVX512; isa++) {
				const char *nm = tile_isa_name((enum tile_isa)isa);

				if (!tile_ops_of((enum tile_isa)isa))
					continue;
				memcpy(mg, m0, sizeof(mg)), memcpy(lg, l0, sizeof(lg));
				ug = tile_ops_of((enum tile_isa)isa)->softmax16(R, valid, &ord, ws, pg, mg,
						    lg, ag, vg);
				if (ug != uw || memcmp(vg, vw, sizeof(vg)) ||
				    !same_f32(mg, mw, R) || !same_f32(lg, lw, R) ||
				    !same_f32(ag, aw, R))
					fail_msg("softmax16 %s: state differs (iter %d)", nm, iter);
				for (int r = 0; r < R; r++)
					if ((uw >> r & 1) && !same_f32(&pg[r * 16], &pw[r * 16], 16))
						fail_msg("softmax16 %s: p of row %d differs (iter %d)",
							 nm, r, iter);
			}
		}
	}
}

/*
 * The table chosen on this machine (tile_ops_best) against the generic
 * one, bit for bit, entry by entry, on shapes that take each build's
 * vector code and its fallbacks: 16 keys, 8 and 32 (CDNA3's 32x32 tile),
 * head dims 256 and 80 (80 is no multiple of 64: pv_i8's AVX-512 code
 * falls back, pv's takes a 16-wide tail), 1, 5 and 16 rows (pv takes
 * rows in sixes), block strides 16, 32 and 48. And the choice is the best
 * table this CPU runs.
 */
static void best_table_equals_generic(void **state)
{
	static const int Ds[] = { 256, 80 }, Rs[] = { 1, 5, 16 }, Ns[] = { 16, 8, 32 };
	static int8_t q[16 * 256], k[256 * 32], v[256 * 48];
	static float vn[32 * 256], vg[32 * 256], o[16 * 256], og[16 * 256];
	static float start[16 * 256], scratch[16 * 256], scratch2[16 * 256];
	const struct tile_ops *best = tile_ops_best(), *gen = tile_ops_of(TILE_PORTABLE);
	int32_t qsum[16], dot[16 * 32], dg[16 * 32];
	float p[16 * 32], alpha[16], scale[32], x[64], xg[64];
	uint16_t vis[32];

	(void)state;
	assert_non_null(best);
	assert_non_null(gen);
	assert_ptr_equal(best, tile_ops_of(TILE_AVX512) ? tile_ops_of(TILE_AVX512) :
			       tile_ops_of(TILE_AVX2) ? tile_ops_of(TILE_AVX2) : gen);
	print_message("chosen table: %s\n", best->name);
	for (int i = 0; i < 16 * 256; i++) {
		q[i] = (int8_t)((int)(rnd32() % 255) - 127);
		k[i] = (int8_t)(rnd32() & 0xff);
		start[i] = (float)((int)(rnd32() % 2001) - 1000) / 64.0f;
	}
	for (int i = 0; i < 256 * 32; i++)
		k[i] = (int8_t)(rnd32() & 0xff);
	for (int i = 0; i < 256 * 48; i++)
		v[i] = (int8_t)(rnd32() & 0xff);
	for (int i = 0; i < 16 * 32; i++)
		p[i] = (float)(rnd32() >> 8) / (float)(1 << 24);
	for (int i = 0; i < 16; i++)
		alpha[i] = (float)(rnd32() >> 8) / (float)(1 << 24);
	for (int i = 0; i < 32; i++) {
		scale[i] = (float)(rnd32() % 1000 + 1) / 4096.0f;
		vis[i] = (uint16_t)rnd32();
	}
	for (int di = 0; di < 2; di++)
		for (int ri = 0; ri < 3; ri++)
			for (int ni = 0; ni < 3; ni++) {
				int D = Ds[di], R = Rs[ri], N = Ns[ni], ld = 16 * (ni + 1);
				uint16_t upd = (uint16_t)(rnd32() | 1u);

				for (int r = 0; r < R; r++) {
					qsum[r] = 0;
					for (int d = 0; d < D; d++)
						qsum[r] += q[r * D + d];
				}
				best->qk(q, qsum, R, k, (size_t)N * 16, N, D, dot);
				gen->qk(q, qsum, R, k, (size_t)N * 16, N, D, dg);
				assert_memory_equal(dot, dg, (size_t)R * N * sizeof(int32_t));
				best->vconv(v, ld, D, N, scale, vn);
				gen->vconv(v, ld, D, N, scale, vg);
				assert_memory_equal(vn, vg, (size_t)N * D * sizeof(float));
				memcpy(o, start, sizeof(o)), memcpy(og, start, sizeof(og));
				best->pv(o, R, D, vn, N, p, vis, upd, alpha);
				gen->pv(og, R, D, vg, N, p, vis, upd, alpha);
				assert_memory_equal(o, og, sizeof(o));
				memcpy(o, start, sizeof(o)), memcpy(og, start, sizeof(og));
				best->pv_i8(o, R, D, v, ld, scale, p, vis, upd, alpha, scratch);
				gen->pv_i8(og, R, D, v, ld, scale, p, vis, upd, alpha, scratch2);
				assert_memory_equal(o, og, sizeof(o));
			}
	for (int i = 0; i < 64; i++)
		x[i] = xg[i] = (float)((int)(rnd32() % 20001) - 15000) / 128.0f;
	x[5] = xg[5] = -INFINITY, x[9] = xg[9] = INFINITY, x[13] = xg[13] = -0.0f;
	best->exp(x, 61);
	gen->exp(xg, 61);
	assert_memory_equal(x, xg, sizeof(x));
	for (int iter = 0; iter < 200; iter++) {
		int R = 1 + (int)(rnd32() % 16), lo[16], hi[16];
		float sq[16], ksc[16], ws[256], wg[256], m[16], mg[16], l[16], lg[16];
		float pb[256], pg[256], ab[16], ag[16];
		uint16_t vb[16], vgn[16], ub, ug, valid = (uint16_t)rnd32();
		struct tile_order ord;

		for (int j = 0; j < 16; j++)
			ord.col[j] = (uint8_t)((j * 5 + iter) % 16);	/* 5 is prime to 16 */
		ord.brk = (uint16_t)(rnd32() | 1u);
		for (int r = 0; r < 16; r++) {
			lo[r] = (int)(rnd32() % 8);
			hi[r] = r % 3 ? 16 : (int)(rnd32() % 17);
			sq[r] = (float)(rnd32() % 1000 + 1) / 1024.0f;
			m[r] = mg[r] = r % 4 == 0 ? -INFINITY : (float)((int)(rnd32() % 201) - 100) / 16.0f;
			l[r] = lg[r] = (float)(rnd32() % 100) / 8.0f;
			ksc[r] = (float)(rnd32() % 1000 + 1) / 8192.0f;
		}
		for (int i = 0; i < 256; i++)
			dot[i] = (int32_t)(rnd32() % 2000001) - 1000000;
		best->scores16(R, dot, sq, ksc, 0.0625f, lo, hi, ws);
		gen->scores16(R, dot, sq, ksc, 0.0625f, lo, hi, wg);
		assert_memory_equal(ws, wg, (size_t)R * 16 * sizeof(float));
		ub = best->softmax16(R, valid, &ord, ws, pb, m, l, ab, vb);
		ug = gen->softmax16(R, valid, &ord, wg, pg, mg, lg, ag, vgn);
		assert_int_equal(ub, ug);
		assert_memory_equal(vb, vgn, sizeof(vb));
		assert_memory_equal(m, mg, (size_t)R * sizeof(float));
		assert_memory_equal(l, lg, (size_t)R * sizeof(float));
		assert_memory_equal(ab, ag, (size_t)R * sizeof(float));
		for (int r = 0; r < R; r++)
			if (ub >> r & 1)
				assert_memory_equal(&pb[r * 16], &pg[r * 16], 16 * sizeof(float));
	}
}

/*
 * Goldens of every executor and thread count equal those of scalar at 1.
 * The directories carry our pid: several test runs may share /tmp.
 */
static void same_goldens(const char *c, const char *extra)
{
	static const char *const execs[] = { "auto", "portable", "avx2", "avx512", "scalar" };
	static const int threads[] = { 1, 2, 3, 3, 2 };
	struct run_result a;
	char cmd[1024], s[64], x[64];

	/* per process: other test runs on the machine use /tmp too */
	snprintf(s, sizeof(s), "/tmp/fragsim-fast-s.%d", (int)getpid());
	snprintf(x, sizeof(x), "/tmp/fragsim-fast-x.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", s, x);
	system(cmd);
	a = tu_run("run %s %s --exec scalar --threads 1 --out %s", c, extra, s);
	assert_int_equal(a.status, 0);
	tu_free(&a);
	for (int i = 0; i < 5; i++) {
		if ((!strcmp(execs[i], "avx2") && !tile_ops_of(TILE_AVX2)) ||
		    (!strcmp(execs[i], "avx512") && !tile_ops_of(TILE_AVX512)))
			continue;
		for (int t = 1; t <= 3; t++) {
			if (i && t != threads[i])
				continue;
			snprintf(cmd, sizeof(cmd), "rm -rf %s", x);
			system(cmd);
			a = tu_run("run %s %s --exec %s --threads %d --out %s",
				   c, extra, execs[i], t, x);
			if (a.status)
				fail_msg("%s --exec %s --threads %d: exit %d: %s", c, execs[i], t,
					 a.status, a.err);
			tu_free(&a);
			snprintf(cmd, sizeof(cmd),
				 "cd %s && for f in *.npy; do cmp -s $f %s/$f || exit 1; done", s, x);
			if (system(cmd))
				fail_msg("%s: --exec %s --threads %d differs from --exec scalar",
					 c, execs[i], t);
		}
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", s, x);
	system(cmd);
}

static void fast_goldens_equal_scalar(void **state)
{
	static const char *const cases[] = {
		"cases/qwen35-27b/decode-17.yaml",
		"cases/qwen35-27b/decode-1000-bs8.yaml",
		"cases/qwen35-27b/decode-splitk-300.yaml",
		"cases/qwen35-27b/decode-multi-seq.yaml",
		"cases/qwen35-27b/prefill-128.yaml",
		"cases/qwen35-27b/prefill-multi-seq-table.yaml",
		"cases/edge/cdna3-decode-blocks1.yaml",
		"cases/edge/head-dim-64-gqa4.yaml",
		"cases/edge/head-dim-128-gqa8.yaml",
		"cases/edge/k-scale-per_block32.yaml",
		"cases/edge/k-scale-per_tensor.yaml",
		"cases/edge/k-scale-per_head.yaml",
		"cases/edge/block-stride.yaml",
		"cases/edge/one-token.yaml",
		"cases/edge/prefill-head-dim-128.yaml",
		"cases/edge/rdna3-w32-prefill.yaml",
		"cases/edge/sm80-decode.yaml",
		"cases/edge/v-bf16.yaml",
		"cases/edge/zero-q-rows.yaml",
		"cases/edge/saturate.yaml",
		"cases/edge/decode-mqa-32-1.yaml",
		"cases/edge/decode-gqa-48-2.yaml",
		"cases/edge/head-dim-80.yaml",
		"cases/edge/head-dim-112-prefill.yaml",
		"cases/edge/decode-context-0.yaml",
		"cases/edge/prefill-chunk-0.yaml",
		"cases/edge/soft-cap.yaml",
		"cases/edge/alibi-12-heads.yaml",
		"cases/edge/prefill-alibi-soft-cap.yaml",
		"cases/edge/cdna3-32x32-decode.yaml",
		"cases/edge/cdna3-32x32-prefill.yaml",
		"cases/edge/rdna4-w32-decode.yaml",
		"cases/edge/rdna4-w32-prefill.yaml",
		"cases/edge/sm80-k16-decode.yaml",
		"cases/edge/sm80-k16-prefill.yaml",
		"cases/edge/cdna4-k64-decode.yaml",
		"cases/edge/cdna4-k64-prefill.yaml",
		"cases/edge/cdna3-32x32-mqa.yaml",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		same_goldens(cases[i], "--emulate-only");
	/* A checked run keeps every tensor (scores included) for the
	 * reference; the goldens it writes must agree as well. */
	same_goldens("cases/qwen35-27b/decode-16.yaml", "");
	/* Split-K segments of 300 keys end inside a tile: the scores of the
	 * keys past a segment's end come from the next segment, on whichever
	 * thread runs it. */
	same_goldens("cases/qwen35-27b/decode-splitk-300.yaml", "");
	/* Soft cap and ALiBi where the fast path takes its per-slot scores
	 * (sm80: no shared 16-column slot order; per_block32 K scales). */
	{
		static const char *const extra[] = {
			"isa: sm80-mma-m16n8k32-s8\n",
			"cache: {k_scale: per_block32}\n",
		};

		for (int i = 0; i < 2; i++) {
			char text[512], *path;

			snprintf(text, sizeof(text),
				 "fragsim: 1\nname: fast-logit\n%s"
				 "model: {q_heads: 12, kv_heads: 2, head_dim: 128, soft_cap: 3.0, alibi: true}\n"
				 "sequences:\n  - {context: 200, tokens: 3}\n"
				 "split_k: {segment: 64}\ndata: {seed: 5, q: {scale: 3.0}}\ngolden: all\n",
				 extra[i]);
			path = tu_write_temp(".yaml", text);
			same_goldens(path, "");
			unlink(path);
			free(path);
		}
	}
}

static void exec_option(void **state)
{
	struct run_result r;

	(void)state;
	r = tu_run("run cases/qwen35-27b/decode-1.yaml --exec fastest");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--exec"));
	tu_free(&r);
	r = tu_run("run cases/qwen35-27b/decode-1.yaml --emulate-only --exec scalar --json");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"exec\": \"scalar\""));
	tu_free(&r);
	r = tu_run("run cases/qwen35-27b/decode-1.yaml --emulate-only --exec portable --json");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"exec\": \"portable\""));
	tu_free(&r);
	/* A kernel with a bug runs on the scalar executor whatever --exec says. */
	r = tu_run("check cases/edge/one-token.yaml --exec portable");
	assert_int_equal(r.status, 0);
	tu_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exp_matches_fs_expf),
		cmocka_unit_test(exp_is_correctly_rounded),
		cmocka_unit_test(qk_and_pv_match_plain_loops),
		cmocka_unit_test(pv_i8_matches_plain_loops),
		cmocka_unit_test(merge_matches_plain_loop),
		cmocka_unit_test(softmax16_matches_scalar),
		cmocka_unit_test(best_table_equals_generic),
		cmocka_unit_test(exec_option),
		cmocka_unit_test(fast_goldens_equal_scalar),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
