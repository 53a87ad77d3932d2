// attn_mmac.hip - the QK^T half of the article's paged INT8 attention
// kernel on an AMD GPU or a Hygon DCU, one wave per tile, dumping acc,
// acc_tiles and scores through fragsim_dump.h for `fragsim diff`.
//
//   fragsim run CASE --emulate-only --out golden     (golden: [inputs, acc])
//   attn_mmac golden dump                            (built by build.sh)
//   fragsim diff CASE --dump dump
//
// Per tile (a row of the golden's acc_tiles) and lane, as the kernel does:
//   Q fragment   EA bytes of the quantized Q per K-step (8 on gfx936 and
//                CDNA3, 16 on RDNA3), the rows and dims the lane map's A
//                gives the lane (one 8-byte load per 8 adjacent dims of
//                one row)
//   K fragment   EB bytes straight from the paged cache [NB][Hkv][D/16]
//                [BS][16] through the block table (one 8-byte load per 8
//                dims, which sit in one 16-dim chunk of one key)
//   one instruction per K-step, ceil(D/K) of them, the last zero-padded
//                past head_dim; int32 accumulators (per_block32: one set per
//                K-step, each restarted at 0, as the golden keeps them)
//   scale recovery acc * sQ * sK * softmax_scale per element, the key
//                taken from the C map (qk_tile.h, shared with qk_cpu.c)
//   the 4x4 transpose: each lane writes its 4 scores into a 16x16 LDS
//                workspace at their (row, column), then the wave stores
//                the workspace row by row into scores; tail and causal
//                masks give -inf
// Build switches (build.sh): FSQ_TARGET_GFX936 / FSQ_TARGET_CDNA3 /
// FSQ_TARGET_RDNA3 pick the instruction and lane map (mmac.h);
// -DFSQ_BUGS=FSQ_BUG_C_COLUMNS plants the contiguous-columns bug (also
// FSQ_BUG_PAGE_WALK, FSQ_BUG_HEAD_DIM_HALF). head_dim comes from the
// golden at run time: the kernel qk_tiles<256 / K> (D = 256, the INT8
// path's head_dim: qk_tiles<8> for K = 32, qk_tiles<16> for RDNA3's
// K = 16) has its K-steps unrolled, qk_tiles<0> takes any head_dim in a
// loop (make hip-check counts the instructions of each). Exit status: 0
// written, 2 bad input, 3 the GPU or the write failed.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmac.h"
#include "qk_tile.h"
#include "fragsim_dump.h"
#include "fragsim_golden.h"

#ifndef FSQ_BUGS
#define FSQ_BUGS 0
#endif

#define W LMU(WAVE)
#define M LMU(M)
#define N LMU(N)
#define K LMU(K)
#define EA LMU(A_ELEMS)
#define EB LMU(B_ELEMS)
#define EC LMU(C_ELEMS)

#include "qk_frag.h"
#include "pv_tile.h"

static_assert(M == 16 && N == 16 && (K == 32 || K == 16) && EA % 8 == 0 && EB == EA,
	      "attn_mmac: a 16x16xK INT8 instruction, K 32 or 16, whole 8-byte pieces of A and B");

// The K-steps of D = 256 the unrolled kernel issues.
#define FSQ_UNROLL (256 / K)

// A lane's A or B fragment for one K-step as the instruction's registers.
// With 8 bytes a lane (gfx936, CDNA3) it is qk_frag.h's load, shared with
// the CPU harness that make test runs; with more (RDNA3's 16, k = e) it
// is EA / 8 pieces of 8 elements, each one 8-byte load when the lane map
// gives the piece 8 adjacent dims of one query row (A) or one key (B)
// from a multiple of 8, else gathered byte by byte (fl says which, for
// every piece alike). The loads are qk_frag.h's, at the piece's first
// element.
__device__ static inline int64_t qk_piece_a(const struct fsq_case *c, const struct fsq_bufs *b,
					    int tile, int lane, int ks, int e0, int adjacent)
{
	int64_t v = 0;

	if (adjacent) {
		struct fsq_row r = fsq_row_of(c, b, tile, LM(a_row)(lane, e0));
		int dim = ks * K + LM(a_col)(lane, e0);

		/* 8 dims past head_dim: the last K-step's zero padding */
		if (r.valid && dim < c->D)
			v = fsq_load8(&b->q_int8[(((long)r.s * c->T + r.t) * c->Hq + r.qh) * c->D +
						 dim]);
		return v;
	}
	for (int e = 0; e < 8; e++) {
		struct fsq_row r = fsq_row_of(c, b, tile, LM(a_row)(lane, e0 + e));

		v |= (int64_t)(uint8_t)fsq_q(c, b, &r, ks * K + LM(a_col)(lane, e0 + e)) << (8 * e);
	}
	return v;
}

__device__ static inline int64_t qk_piece_b(const struct fsq_case *c, const struct fsq_bufs *b,
					    int tile, int lane, int ks, int e0, int adjacent)
{
	int s = b->tiles[tile * FSQ_TILE_COLS], kb = b->tiles[tile * FSQ_TILE_COLS + 3];
	int g = fsq_row_of(c, b, tile, 0).g;
	int64_t v = 0;

	if (adjacent) {
		int key = kb + LM(b_col)(lane, e0), dim = ks * K + LM(b_row)(lane, e0);

		if (!fsq_key_loadable(c, b, s, key) || dim >= c->D ||
		    ((c->bugs & FSQ_BUG_HEAD_DIM_HALF) && dim >= c->D / 2))
			return 0;
		return fsq_load8(b->k_cache + fsq_k_offset(c, fsq_block(c, b, s, key), g, key, dim));
	}
	for (int e = 0; e < 8; e++)
		v |= (int64_t)(uint8_t)fsq_k(c, b, s, g, kb + LM(b_col)(lane, e0 + e),
					     ks * K + LM(b_row)(lane, e0 + e)) << (8 * e);
	return v;
}

struct qk_pieces {
	int64_t p[EA / 8];
};

__device__ static inline fsq_ab qk_frag_a(const struct fsq_case *c, const struct fsq_bufs *b,
					  int tile, int lane, int ks, struct fsq_frag_flags fl)
{
#if EA == 8
	return __builtin_bit_cast(fsq_ab, fsq_load_a(c, b, tile, lane, ks, fl));
#else
	struct qk_pieces v;

	for (int p = 0; p < EA / 8; p++)
		v.p[p] = qk_piece_a(c, b, tile, lane, ks, 8 * p, fl.a_adjacent);
	return __builtin_bit_cast(fsq_ab, v);
#endif
}

__device__ static inline fsq_ab qk_frag_b(const struct fsq_case *c, const struct fsq_bufs *b,
					  int tile, int lane, int ks, struct fsq_frag_flags fl)
{
#if EB == 8
	return __builtin_bit_cast(fsq_ab, fsq_load_b(c, b, tile, lane, ks, fl));
#else
	struct qk_pieces v;

	for (int p = 0; p < EB / 8; p++)
		v.p[p] = qk_piece_b(c, b, tile, lane, ks, 8 * p, fl.b_adjacent);
	return __builtin_bit_cast(fsq_ab, v);
#endif
}

// fl for qk_frag_*: qk_frag.h's for 8 bytes, else every piece's (host).
static struct fsq_frag_flags qk_flags_of(void)
{
	struct fsq_frag_flags f = fsq_frag_flags_of();

	if (EA == 8)
		return f;
	f.a_adjacent = f.b_adjacent = 1;
	for (int l = 0; l < W; l++)
		for (int e0 = 0; e0 < EA; e0 += 8)
			for (int e = 0; e < 8; e++) {
				f.a_adjacent &= LM(a_row)(l, e0 + e) == LM(a_row)(l, e0) &&
						LM(a_col)(l, e0 + e) == LM(a_col)(l, e0) + e &&
						LM(a_col)(l, e0) % 8 == 0;
				f.b_adjacent &= LM(b_col)(l, e0 + e) == LM(b_col)(l, e0) &&
						LM(b_row)(l, e0 + e) == LM(b_row)(l, e0) + e &&
						LM(b_row)(l, e0) % 8 == 0;
			}
	return f;
}

// One K-step's instruction, and where its accumulators go: per_block32
// keeps each K-step's own (restarted at 0), otherwise the tile's sum is
// stored after the last.
__device__ static inline fsq_acc qk_kstep(const struct fsq_case *c, const struct fsq_bufs *b,
					  int tile, int lane, int ks, struct fsq_frag_flags fl,
					  fsq_acc acc, int32_t *tile_acc)
{
	acc = fsq_mmac(qk_frag_a(c, b, tile, lane, ks, fl), qk_frag_b(c, b, tile, lane, ks, fl), acc);
	if (c->ksteps_acc > 1) {
		for (int e = 0; e < EC; e++)
			tile_acc[((long)ks * W + lane) * EC + e] = acc[e], acc[e] = 0;
	} else if (ks == c->ksteps - 1) {
		for (int e = 0; e < EC; e++)
			tile_acc[(long)lane * EC + e] = acc[e];
	}
	return acc;
}

// KS > 0: exactly KS K-steps, unrolled (the host launches it only when
// c.ksteps == KS); KS == 0: c.ksteps of them in a loop.
template <int KS>
__global__ void __launch_bounds__(W) qk_tiles(struct fsq_case c, struct fsq_bufs b,
					      struct fsq_frag_flags fl)
{
	__shared__ float ws[M][N];
	int tile = fsq_bid(), lane = fsq_tid();
	int kb = b.tiles[tile * FSQ_TILE_COLS + 3];
	int32_t *tile_acc = &b.acc[(long)tile * c.ksteps_acc * W * EC];
	fsq_acc acc = {};

	c.bugs = FSQ_BUGS;	// compile-time: the plant folds away
	if (KS > 0) {
#pragma unroll
		for (int ks = 0; ks < KS; ks++)
			acc = qk_kstep(&c, &b, tile, lane, ks, fl, acc, tile_acc);
	} else {
#pragma unroll 1
		for (int ks = 0; ks < c.ksteps; ks++)
			acc = qk_kstep(&c, &b, tile, lane, ks, fl, acc, tile_acc);
	}
	// Scale recovery in registers, then the transpose through LDS.
	for (int i = lane; i < M * N; i += W)
		ws[i / N][i % N] = -INFINITY;
	fsq_barrier();
	for (int e = 0; e < EC; e++) {
		int m = LM(c_row)(lane, e);
		int n = fsq_belief_col(&c, lane, e, EC, LM(c_col)(lane, e));
		struct fsq_row r = fsq_row_of(&c, &b, tile, m);

		ws[m][n] = fsq_score(&c, &b, &r, kb + n, &tile_acc[lane * EC + e], W * EC);
	}
	fsq_barrier();
	for (int i = lane; i < M * N; i += W) {
		int m = i / N, n = i % N;
		struct fsq_row r = fsq_row_of(&c, &b, tile, m);

		if (r.primary && kb + n < c.MAXCTX)
			b.scores[fsq_score_index(&c, &r, kb + n)] = ws[m][n];
	}
}

// pv_tile.h's registers as the instruction's operand.
__device__ static inline fsq_ab pv_ab(const uint32_t *r)
{
	fsq_ab v;

#pragma unroll
	for (int i = 0; i < EA / 4; i++)
		v[i] = (int)r[i];
	return v;
}

// INT8 PV, one wave per PV unit: pv_tile.h's phases with the barriers
// where it says. q.tiles are the groups' QK tiles, FSP_GT a group. KS >
// 0: QK's K-steps unrolled (c.ksteps == KS), DTU > 0: the PV column
// tiles unrolled (D / N == DTU, all sharing one A operand); 0: loops.
template <int KS, int DTU>
__global__ void __launch_bounds__(W) pv_units(struct fsq_case c, struct fsp_case pc,
					      struct fsq_bufs q, struct fsp_bufs p,
					      struct fsq_frag_flags fl)
{
	__shared__ struct fsp_lds lds;
	int u = fsq_bid(), lane = fsq_tid();

	c.bugs = FSQ_BUGS;	// compile-time, as qk_tiles's
	pc.from_c = pc.from_c || (FSQ_BUGS & FSQ_BUG_P_REGROUP_NONE);
	for (int j = p.unit_first[u]; j < p.unit_first[u + 1]; j++) {
		int gi = p.unit_groups[j];
		int8_t pq[FSP_GT * EC];
		uint32_t ar[EA / 4];
		fsq_ab a;

#pragma unroll
		for (int t = 0; t < FSP_GT; t++) {
			int32_t *tile_acc = &p.qk_acc[((long)u * FSP_GT + t) * c.ksteps_acc * W * EC];
			fsq_acc acc = {};

			if (KS > 0) {
#pragma unroll
				for (int ks = 0; ks < KS; ks++)
					acc = qk_kstep(&c, &q, gi * FSP_GT + t, lane, ks, fl, acc, tile_acc);
			} else {
#pragma unroll 1
				for (int ks = 0; ks < c.ksteps; ks++)
					acc = qk_kstep(&c, &q, gi * FSP_GT + t, lane, ks, fl, acc, tile_acc);
			}
		}
		fsp_scores(&c, &pc, &q, &p, u, gi, lane, &lds);
		fsq_barrier();
		for (int m = lane; m < M; m += W)
			fsp_row(&c, &pc, &q, &p, u, gi, m, &lds);
		fsq_barrier();
		fsp_pq(&c, &pc, &q, &p, gi, lane, &lds, pq);
		fsq_barrier();
		fsp_a(&pc, &p, gi, lane, &lds, pq, ar);
		a = pv_ab(ar);
		if (DTU > 0) {
#pragma unroll
			for (int dt = 0; dt < DTU; dt++) {
				uint32_t br[EB / 4];
				int32_t d[EC];
				fsq_acc z = {};

				fsp_b(&c, &q, &p, gi, lane, dt, br);
				z = fsq_mmac(a, pv_ab(br), z);
				for (int e = 0; e < EC; e++)
					d[e] = z[e];
				fsp_o(&c, &pc, &p, u, gi, lane, dt, d, &lds);
			}
		} else {
#pragma unroll 1
			for (int dt = 0; dt < pc.DT; dt++) {
				uint32_t br[EB / 4];
				int32_t d[EC];
				fsq_acc z = {};

				fsp_b(&c, &q, &p, gi, lane, dt, br);
				z = fsq_mmac(a, pv_ab(br), z);
				for (int e = 0; e < EC; e++)
					d[e] = z[e];
				fsp_o(&c, &pc, &p, u, gi, lane, dt, d, &lds);
			}
		}
		fsq_barrier();
	}
	for (int m = lane; m < M; m += W)
		fsp_finish(&c, &pc, &q, &p, u, m);
}

#define HIP_OK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
	fprintf(stderr, "attn_mmac: %s: %s\n", #x, hipGetErrorString(e_)); \
	exit(3); } } while (0)

// A device copy of n bytes of host data.
template <typename T> static T *to_device(const T *h, size_t n)
{
	void *d;

	HIP_OK(hipMalloc(&d, n ? n * sizeof(T) : 1));
	HIP_OK(hipMemcpy(d, h, n * sizeof(T), hipMemcpyHostToDevice));
	return (T *)d;
}

int main(int argc, char **argv)
{
	struct fsg_golden g;
	struct fsq_case c;
	struct fsq_bufs b;
	struct fsp_host h;
	char err[1400];
	size_t nscores, nacc;
	float *scores;
	int32_t *acc;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: attn_mmac GOLDEN DUMP\n");
		return 2;
	}
	if (fsg_load(&g, argv[1], err, sizeof(err)))
		return fprintf(stderr, "attn_mmac: %s\n", err), 2;
	if (strcmp(g.profile, LMU(NAME))) {
		fprintf(stderr, "attn_mmac: the golden's isa is %s; this build runs %s\n",
			g.profile, LMU(NAME));
		return 2;
	}
	if (g.kscale == FSG_KS_BLOCK32 && K != 32) {	/* fragsim refuses it too */
		fprintf(stderr, "attn_mmac: %s: cache.k_scale: per_block32 needs a K-step of 32 "
			"head-dim elements; %s has K = %d\n", argv[1], LMU(INSTRUCTION), K);
		return 2;
	}
#if defined(FSQ_NOGPULIB)
	if (g.soft_cap > 0) {	/* mmac.h: no device tanh in this build */
		fprintf(stderr, "attn_mmac: %s: model: soft_cap is not run by this build "
			"(-nogpulib: no device library, so no tanh)\n", argv[1]);
		return 2;
	}
#endif
	fsq_case_of(&c, &g, M, K, FSQ_BUGS);
#if defined(FSQ_NOGPULIB)
	/* mmac.h: no device exp in this build */
	rc = fsp_refuse("attn_mmac", &g, FSQ_BUGS, 0,
			"this build has no device library (-nogpulib), so no exp for the softmax");
#else
	rc = fsp_refuse("attn_mmac", &g, FSQ_BUGS, 1, NULL);
#endif
	if (rc)
		return rc;
	rc = fsp_host_make(&h, &c, &g, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "attn_mmac: %s: %s\n", argv[1], rc == 2 ? err : "out of memory");
		return rc;
	}
	memset(&b, 0, sizeof(b));
	if (fsq_outputs(&c, &g, W, EC, &acc, &scores, &nacc, &nscores)) {
		fprintf(stderr, "attn_mmac: out of memory\n");
		return 3;
	}
	b.q_int8 = to_device(g.q_int8, g.a[0].count);
	b.q_scale = to_device(g.q_scale, g.a[1].count);
	b.k_cache = to_device(g.k_cache, g.a[2].count);
	b.k_scale = to_device(g.k_scale, g.a[3].count);
	b.block_table = to_device(g.block_table, g.a[4].count);
	b.context_lens = to_device(g.context_lens, g.a[5].count);
	b.q_pos = to_device(g.q_pos, g.a[6].count);
	b.tiles = to_device(g.acc_tiles, g.a[7].count);
	b.tokens = to_device(g.tokens, (size_t)g.S);
	b.seq_block0 = to_device(g.seq_block0, (size_t)g.S);
	b.alibi_slope = to_device(g.alibi_slope, (size_t)g.Hq);
	b.scores = to_device(scores, nscores);
	b.acc = to_device(acc, nacc);
	if (g.n_tiles && c.ksteps == FSQ_UNROLL)
		hipLaunchKernelGGL(qk_tiles<FSQ_UNROLL>, dim3((unsigned)g.n_tiles), dim3(W), 0, 0, c,
				   b, qk_flags_of());
	else if (g.n_tiles)
		hipLaunchKernelGGL(qk_tiles<0>, dim3((unsigned)g.n_tiles), dim3(W), 0, 0, c, b,
				   qk_flags_of());
	HIP_OK(hipGetLastError());
	HIP_OK(hipDeviceSynchronize());
	HIP_OK(hipMemcpy(acc, b.acc, nacc * sizeof(int32_t), hipMemcpyDeviceToHost));
	HIP_OK(hipMemcpy(scores, b.scores, nscores * sizeof(float), hipMemcpyDeviceToHost));
	if (h.pc.on && h.pc.n_units) {
		struct fsq_bufs q = b;
		struct fsp_bufs p;

		memset(&p, 0, sizeof(p));
		q.tiles = to_device(h.tiles, h.n_tiles * FSQ_TILE_COLS);
		p.v_cache = to_device(g.v_cache, g.a[8].count);
		p.v_scale = to_device(g.v_scale, g.a[9].count);
		p.groups = to_device(g.pv_tiles, g.a[10].count);
		p.unit_first = to_device(h.unit_first, (size_t)h.pc.n_units + 1);
		p.unit_groups = to_device(h.unit_groups, h.n_groups);
		p.a_src = to_device(h.a_src, (size_t)W * EA);
		p.b_key = to_device(h.b_key, (size_t)W * EB);
		p.qk_acc = to_device(h.qk_acc, h.n_qk_acc);
		p.o = to_device(h.o, h.n_state * c.D);
		p.m = to_device(h.m, h.n_state);
		p.l = to_device(h.l, h.n_state);
		p.p_int8 = to_device(h.p_int8, h.n_p_int8);
		p.p_scale = to_device(h.p_scale, h.n_p_scale);
		p.pv_acc = to_device(h.pv_acc, h.n_pv_acc);
		p.out = to_device(h.out, h.n_out);
		// RDNA3 has the loop form only: unrolled, its 16 K-steps and 16
		// column tiles spill to scratch (and its build runs no PV).
		if (c.ksteps == FSQ_UNROLL && h.pc.DT == 256 / N && !FSQ_HAS_UNSIGNED)
			hipLaunchKernelGGL((pv_units<FSQ_HAS_UNSIGNED ? 0 : FSQ_UNROLL,
						    FSQ_HAS_UNSIGNED ? 0 : 256 / N>),
					   dim3((unsigned)h.pc.n_units), dim3(W), 0, 0, c, h.pc, q, p,
					   qk_flags_of());
		else
			hipLaunchKernelGGL((pv_units<0, 0>), dim3((unsigned)h.pc.n_units), dim3(W), 0, 0,
					   c, h.pc, q, p, qk_flags_of());
		HIP_OK(hipGetLastError());
		HIP_OK(hipDeviceSynchronize());
		HIP_OK(hipMemcpy(h.p_int8, p.p_int8, h.n_p_int8, hipMemcpyDeviceToHost));
		HIP_OK(hipMemcpy(h.p_scale, p.p_scale, h.n_p_scale * sizeof(float),
				 hipMemcpyDeviceToHost));
		HIP_OK(hipMemcpy(h.pv_acc, p.pv_acc, h.n_pv_acc * sizeof(int32_t),
				 hipMemcpyDeviceToHost));
		HIP_OK(hipMemcpy(h.out, p.out, h.n_out * sizeof(float), hipMemcpyDeviceToHost));
	}
	rc = fsp_dump("attn_mmac", &c, &g, acc, W, EC, scores, &h, argv[2]);
	if (!rc)
		printf("attn_mmac: %zu tiles%s of %s (%s), bugs 0x%x, written to %s\n", g.n_tiles,
		       h.pc.on ? " and their INT8 PV groups" : "", LMU(NAME), LMU(INSTRUCTION),
		       FSQ_BUGS, argv[2]);
	free(scores);
	free(acc);
	fsp_host_free(&h);
	fsg_free(&g);
	return rc;
}
