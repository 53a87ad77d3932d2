// attn_sm80.cu - the QK^T half of a paged INT8 attention kernel on real
// NVIDIA tensor cores, one mma.sync.m16n8k32 .s8 per K-step, one warp per
// tile, dumping acc, acc_tiles and scores through fragsim_dump.h for
// `fragsim diff`. The CUDA sibling of hip/attn_mmac.hip: the same golden
// reader (fragsim_golden.h), the same per-lane kernel logic (qk_tile.h:
// rows of a tile, block table walk, paged K address, scale recovery,
// masks, planted bugs), the same dump writer, and its lane map from the
// same generator; only the instruction is CUDA's own.
//
//   fragsim run CASE --emulate-only --out golden     (golden: [inputs, acc])
//   fragsim lanemap --isa sm80-mma-m16n8k32-s8 --format c >
//       gen/fragsim_lanemap_sm80_mma_m16n8k32_s8.h
//   nvcc -O2 -fmad=false -arch=sm_90 -Igen -Itools/device -o attn_sm80 tools/device/attn_sm80.cu
//   ./attn_sm80 golden dump [page_walk|head_dim_half]
//   fragsim diff CASE --dump dump
//
// (attn_run.py does the middle two.) The kernel places a lane's A and B
// bytes and reads its accumulators with the generated header's
// functions, so the kernel and the simulator use one map; the device is
// the witness: when the profile is wrong, the instruction multiplies
// other entries than the kernel meant and fragsim diff sees it. Another
// map (a probe's found.yaml): -DFSQ_LANEMAP='"its header"'
// -DFSQ_LM=fs_<name> -DFSQ_LMU=FS_<NAME>. A lane's 16 A bytes are two
// 4-dim runs per row on this map, so fragments are gathered byte by byte
// (qk_frag.h's 8-byte loads do not apply).
//
// Planted bugs (argv[3], the FSQ_BUG_* of qk_tile.h) imitate broken
// kernels, each a class fragsim diff names:
//   page_walk      a sequence's blocks taken as consecutive from its first
//                  (block table ignored): page_walk=none
//   head_dim_half  only the first D/2 dims of K loaded: head_dim_loaded=half
// qk_tile.h's third, c_columns, has no meaning here: on this map a lane's
// two accumulators of a row already are adjacent columns (fragsim diff
// says so too), so there is no wrong belief to plant.
// Exit status: 0 written, 2 bad input or usage, 3 the GPU or the write
// failed.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qk_tile.h"
#include "fragsim_dump.h"
#include "fragsim_golden.h"

#ifndef FSQ_LANEMAP
#define FSQ_LANEMAP "fragsim_lanemap_sm80_mma_m16n8k32_s8.h"
#define FSQ_LM fs_sm80_mma_m16n8k32_s8
#define FSQ_LMU FS_SM80_MMA_M16N8K32_S8
#endif
#include FSQ_LANEMAP

#define W LMU(WAVE)	/* warp */
#define M LMU(M)
#define N LMU(N)
#define K LMU(K)
#define EA LMU(A_ELEMS)	/* A bytes per lane: a0..a15 in four .b32 */
#define EB LMU(B_ELEMS)	/* B bytes per lane: b0..b7 in two .b32 */
#define EC LMU(C_ELEMS)	/* c0..c3 */

// The instruction's shape is fixed by the asm below; a map of another
// shape cannot feed it.
#if W != 32 || M != 16 || N != 8 || K != 32 || EA != 16 || EB != 8 || EC != 4
#error "the lane map is not of mma.m16n8k32 .s8 (warp 32, 16 A, 8 B, 4 C elements a lane)"
#endif

#include "pv_tile.h"

// Lane `lane`'s A and B registers for K-step ks of tile `tile`: element i
// of a lane is register i / 4, byte i % 4.
FSQ_HD void sm80_frags(const struct fsq_case *c, const struct fsq_bufs *b, int tile,
		       int lane, int ks, uint32_t a[EA / 4], uint32_t bk[EB / 4])
{
	int s = b->tiles[tile * FSQ_TILE_COLS], kb = b->tiles[tile * FSQ_TILE_COLS + 3];
	int g = fsq_row_of(c, b, tile, 0).g;

	for (int i = 0; i < EA / 4; i++)
		a[i] = 0;
	for (int i = 0; i < EB / 4; i++)
		bk[i] = 0;
	for (int i = 0; i < EA; i++) {
		struct fsq_row r = fsq_row_of(c, b, tile, LM(a_row)(lane, i));
		int8_t v = fsq_q(c, b, &r, ks * K + LM(a_col)(lane, i));

		a[LM(a_reg)(i)] |= (uint32_t)(uint8_t)v << (8 * LM(a_byte)(i));
	}
	for (int i = 0; i < EB; i++) {
		int8_t v = fsq_k(c, b, s, g, kb + LM(b_col)(lane, i), ks * K + LM(b_row)(lane, i));

		bk[LM(b_reg)(i)] |= (uint32_t)(uint8_t)v << (8 * LM(b_byte)(i));
	}
}

// Scale recovery of a lane's accumulators into the workspace, at their
// (row, column) in the C layout: d is the lane's [EC] in the tile's acc,
// K-step ks's at d[ks * W * EC] when the tile keeps one per K-step.
FSQ_HD void sm80_ws_put(const struct fsq_case *c, const struct fsq_bufs *b, int tile,
			int lane, const int32_t *d, float ws[M][N])
{
	int kb = b->tiles[tile * FSQ_TILE_COLS + 3];

	for (int e = 0; e < EC; e++) {
		int m = LM(c_row)(lane, e);
		int n = LM(c_col)(lane, e);
		struct fsq_row r = fsq_row_of(c, b, tile, m);

		ws[m][n] = fsq_score(c, b, &r, kb + n, &d[e], W * EC);
	}
}

// Keep K-step ks's accumulators d of a lane (per_block32: each K-step's
// own, restarted at 0) or, after the last K-step, the tile's sum.
FSQ_HD void sm80_acc_keep(const struct fsq_case *c, int32_t *tile_acc, int lane, int ks,
			  int32_t d[EC])
{
	if (c->ksteps_acc > 1) {
		for (int e = 0; e < EC; e++)
			tile_acc[((long)ks * W + lane) * EC + e] = d[e], d[e] = 0;
	} else if (ks == c->ksteps - 1) {
		for (int e = 0; e < EC; e++)
			tile_acc[(long)lane * EC + e] = d[e];
	}
}

// Workspace element i (row i / N, column i % N) into the scores, from the
// row that owns its q head.
FSQ_HD void sm80_ws_store(const struct fsq_case *c, const struct fsq_bufs *b, int tile,
			  int i, float ws[M][N])
{
	int m = i / N, n = i % N, kb = b->tiles[tile * FSQ_TILE_COLS + 3];
	struct fsq_row r = fsq_row_of(c, b, tile, m);

	if (r.primary && kb + n < c->MAXCTX)
		b->scores[fsq_score_index(c, &r, kb + n)] = ws[m][n];
}

#ifdef __CUDACC__
// d += A B for the warp: the one instruction, QK's and PV's.
__device__ static inline void sm80_mma(int32_t d[EC], const uint32_t a[EA / 4],
				       const uint32_t bk[EB / 4])
{
	asm volatile(
		"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
		"{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
		: "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
		: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(bk[0]), "r"(bk[1]));
}

__global__ void __launch_bounds__(W) qk_tiles(struct fsq_case c, struct fsq_bufs b)
{
	__shared__ float ws[M][N];
	int tile = blockIdx.x, lane = threadIdx.x;
	int32_t d[EC] = { 0, 0, 0, 0 };
	int32_t *tile_acc = &b.acc[(long)tile * c.ksteps_acc * W * EC];

	for (int ks = 0; ks < c.ksteps; ks++) {
		uint32_t a[EA / 4], bk[EB / 4];

		sm80_frags(&c, &b, tile, lane, ks, a, bk);
		sm80_mma(d, a, bk);
		sm80_acc_keep(&c, tile_acc, lane, ks, d);
	}
	// The transpose through shared memory into logical key order.
	for (int i = lane; i < M * N; i += W)
		ws[i / N][i % N] = -INFINITY;
	__syncthreads();
	sm80_ws_put(&c, &b, tile, lane, &tile_acc[lane * EC], ws);
	__syncthreads();
	for (int i = lane; i < M * N; i += W)
		sm80_ws_store(&c, &b, tile, i, ws);
}

// INT8 PV, one warp per PV unit (pv_tile.h's phases, the barriers
// where it says): q.tiles are the groups' QK tiles, GT a group.
__global__ void __launch_bounds__(W) pv_units(struct fsq_case c, struct fsp_case pc,
					      struct fsq_bufs q, struct fsp_bufs p)
{
	__shared__ struct fsp_lds lds;
	int u = blockIdx.x, lane = threadIdx.x;

	for (int j = p.unit_first[u]; j < p.unit_first[u + 1]; j++) {
		int gi = p.unit_groups[j];
		int8_t pq[FSP_GT * EC];
		uint32_t a[EA / 4];

		for (int t = 0; t < FSP_GT; t++) {
			int32_t d[EC] = { 0, 0, 0, 0 };
			int32_t *tile_acc = &p.qk_acc[((long)u * FSP_GT + t) * c.ksteps_acc * W * EC];

			for (int ks = 0; ks < c.ksteps; ks++) {
				uint32_t qa[EA / 4], kk[EB / 4];

				sm80_frags(&c, &q, gi * FSP_GT + t, lane, ks, qa, kk);
				sm80_mma(d, qa, kk);
				sm80_acc_keep(&c, tile_acc, lane, ks, d);
			}
		}
		fsp_scores(&c, &pc, &q, &p, u, gi, lane, &lds);
		__syncthreads();
		for (int m = lane; m < M; m += W)
			fsp_row(&c, &pc, &q, &p, u, gi, m, &lds);
		__syncthreads();
		fsp_pq(&c, &pc, &q, &p, gi, lane, &lds, pq);
		__syncthreads();
		fsp_a(&pc, &p, gi, lane, &lds, pq, a);
		for (int dt = 0; dt < pc.DT; dt++) {
			uint32_t vb[EB / 4];
			int32_t acc[EC] = { 0, 0, 0, 0 };

			fsp_b(&c, &q, &p, gi, lane, dt, vb);
			sm80_mma(acc, a, vb);
			fsp_o(&c, &pc, &p, u, gi, lane, dt, acc, &lds);
		}
		__syncthreads();
	}
	for (int m = lane; m < M; m += W)
		fsp_finish(&c, &pc, &q, &p, u, m);
}

#define CUDA_OK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "attn_sm80: %s: %s\n", #x, cudaGetErrorString(e_)); \
	exit(3); } } while (0)

// A device copy of n elements of host data.
template <typename T> static T *to_device(const T *h, size_t n)
{
	void *d;

	CUDA_OK(cudaMalloc(&d, n ? n * sizeof(T) : 1));
	CUDA_OK(cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice));
	return (T *)d;
}

// Run every tile on the GPU; b holds host pointers, acc [n][ksteps_acc]
// [W][EC] and b->scores (both poisoned) are filled, and with INT8 PV h's
// outputs. Returns the GPU's name for the log.
static const char *sm80_run(const struct fsq_case *c, const struct fsg_golden *g,
			    struct fsq_bufs *hb, int32_t *acc, size_t nacc, struct fsp_host *h)
{
	static cudaDeviceProp prop;
	size_t nscores = (size_t)c->S * c->T * c->Hq * c->MAXCTX;
	struct fsq_bufs b = *hb;

	b.q_int8 = to_device(g->q_int8, g->a[0].count);
	b.q_scale = to_device(g->q_scale, g->a[1].count);
	b.k_cache = to_device(g->k_cache, g->a[2].count);
	b.k_scale = to_device(g->k_scale, g->a[3].count);
	b.block_table = to_device(g->block_table, g->a[4].count);
	b.context_lens = to_device(g->context_lens, g->a[5].count);
	b.q_pos = to_device(g->q_pos, g->a[6].count);
	b.tiles = to_device(g->acc_tiles, g->a[7].count);
	b.tokens = to_device(g->tokens, (size_t)g->S);
	b.seq_block0 = to_device(g->seq_block0, (size_t)g->S);
	b.alibi_slope = to_device(g->alibi_slope, (size_t)g->Hq);
	b.scores = to_device(hb->scores, nscores);
	b.acc = to_device(acc, nacc);
	if (g->n_tiles)
		qk_tiles<<<(unsigned)g->n_tiles, W>>>(*c, b);
	CUDA_OK(cudaGetLastError());
	CUDA_OK(cudaDeviceSynchronize());
	CUDA_OK(cudaMemcpy(acc, b.acc, nacc * sizeof(int32_t), cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(hb->scores, b.scores, nscores * sizeof(float),
			   cudaMemcpyDeviceToHost));
	if (h->pc.on && h->pc.n_units) {
		struct fsq_bufs q = b;
		struct fsp_bufs p;

		memset(&p, 0, sizeof(p));
		q.tiles = to_device(h->tiles, h->n_tiles * FSQ_TILE_COLS);
		p.v_cache = to_device(g->v_cache, g->a[8].count);
		p.v_scale = to_device(g->v_scale, g->a[9].count);
		p.groups = to_device(g->pv_tiles, g->a[10].count);
		p.unit_first = to_device(h->unit_first, (size_t)h->pc.n_units + 1);
		p.unit_groups = to_device(h->unit_groups, h->n_groups);
		p.a_src = to_device(h->a_src, (size_t)W * EA);
		p.b_key = to_device(h->b_key, (size_t)W * EB);
		p.qk_acc = to_device(h->qk_acc, h->n_qk_acc);
		p.o = to_device(h->o, h->n_state * c->D);
		p.m = to_device(h->m, h->n_state);
		p.l = to_device(h->l, h->n_state);
		p.p_int8 = to_device(h->p_int8, h->n_p_int8);
		p.p_scale = to_device(h->p_scale, h->n_p_scale);
		p.pv_acc = to_device(h->pv_acc, h->n_pv_acc);
		p.out = to_device(h->out, h->n_out);
		pv_units<<<(unsigned)h->pc.n_units, W>>>(*c, h->pc, q, p);
		CUDA_OK(cudaGetLastError());
		CUDA_OK(cudaDeviceSynchronize());
		CUDA_OK(cudaMemcpy(h->p_int8, p.p_int8, h->n_p_int8, cudaMemcpyDeviceToHost));
		CUDA_OK(cudaMemcpy(h->p_scale, p.p_scale, h->n_p_scale * sizeof(float),
				   cudaMemcpyDeviceToHost));
		CUDA_OK(cudaMemcpy(h->pv_acc, p.pv_acc, h->n_pv_acc * sizeof(int32_t),
				   cudaMemcpyDeviceToHost));
		CUDA_OK(cudaMemcpy(h->out, p.out, h->n_out * sizeof(float), cudaMemcpyDeviceToHost));
	}
	CUDA_OK(cudaGetDeviceProperties(&prop, 0));
	return prop.name;
}
#else
// Without nvcc (c++ -x c++, no CUDA): the same lane code with the
// instruction done on the CPU as the PTX ISA defines it, D = A B + C,
// A's and B's elements read back from every lane's registers through
// the layout below. It is written from the PTX ISA text (section "Matrix
// Fragments for mma.m16n8k32", groupID = laneid >> 2, threadID_in_group
// = laneid % 4), not from fragsim's profile: it stands in for the
// hardware, so a wrong generated header makes this twin disagree with
// fragsim diff as the GPU would. It checks the host side, the shared
// logic and the header where no GPU is; only the GPU witnesses the
// hardware.

// A (row major M x K): a0..a3 row group, a4..a7 row group + 8, a8..a11
// row group, a12..a15 row group + 8; columns tig*4 + i%4, +16 from a8.
static int ptx_a_row(int lane, int i)
{
	return (lane >> 2) + ((i / 4) % 2) * 8;
}

static int ptx_a_col(int lane, int i)
{
	return (lane & 3) * 4 + (i & 3) + (i >= 8 ? 16 : 0);
}

// B (K x N, column major): b0..b3 rows tig*4 + i, b4..b7 16 more; column
// (the key) groupID.
static int ptx_b_row(int lane, int i)
{
	return (lane & 3) * 4 + (i & 3) + (i >= 4 ? 16 : 0);
}

static int ptx_b_col(int lane)
{
	return lane >> 2;
}

// C (M x N): c0, c1 row groupID, c2, c3 row groupID + 8; columns
// tig*2 + i%2.
static int ptx_c_row(int lane, int i)
{
	return (lane >> 2) + (i >= 2 ? 8 : 0);
}

static int ptx_c_col(int lane, int i)
{
	return (lane & 3) * 2 + (i & 1);
}

// D += A B for the warp, every lane's registers read back through the
// PTX layout above.
static void ptx_mma(const uint32_t a[W][EA / 4], const uint32_t bk[W][EB / 4], int32_t *d)
{
	static int32_t am[M][K], bm[K][N];

	for (int l = 0; l < W; l++) {
		for (int i = 0; i < EA; i++)
			am[ptx_a_row(l, i)][ptx_a_col(l, i)] =
				(int8_t)(uint8_t)(a[l][i / 4] >> (8 * (i % 4)));
		for (int i = 0; i < EB; i++)
			bm[ptx_b_row(l, i)][ptx_b_col(l)] =
				(int8_t)(uint8_t)(bk[l][i / 4] >> (8 * (i % 4)));
	}
	for (int l = 0; l < W; l++)
		for (int e = 0; e < EC; e++)
			for (int k = 0; k < K; k++)
				d[l * EC + e] += am[ptx_c_row(l, e)][k] * bm[k][ptx_c_col(l, e)];
}

// INT8 PV: pv_units's phases, each over the warp's lanes in turn.
static void sm80_pv_run(const struct fsq_case *c, const struct fsp_case *pc,
			const struct fsq_bufs *q, const struct fsp_bufs *p)
{
	static struct fsp_lds lds;
	static uint32_t a[W][EA / 4], bk[W][EB / 4];
	static int8_t pq[W][FSP_GT * EC];
	static int32_t d[W * EC];

	for (int u = 0; u < pc->n_units; u++) {
		for (int j = p->unit_first[u]; j < p->unit_first[u + 1]; j++) {
			int gi = p->unit_groups[j];

			for (int t = 0; t < FSP_GT; t++) {
				int32_t *tile_acc = &p->qk_acc[((size_t)u * FSP_GT + t) *
							       c->ksteps_acc * W * EC];

				memset(d, 0, sizeof(d));
				for (int ks = 0; ks < c->ksteps; ks++) {
					for (int l = 0; l < W; l++)
						sm80_frags(c, q, gi * FSP_GT + t, l, ks, a[l], bk[l]);
					ptx_mma(a, bk, d);
					for (int l = 0; l < W; l++)
						sm80_acc_keep(c, tile_acc, l, ks, &d[l * EC]);
				}
			}
			for (int l = 0; l < W; l++)
				fsp_scores(c, pc, q, p, u, gi, l, &lds);
			for (int m = 0; m < M; m++)
				fsp_row(c, pc, q, p, u, gi, m, &lds);
			for (int l = 0; l < W; l++)
				fsp_pq(c, pc, q, p, gi, l, &lds, pq[l]);
			for (int l = 0; l < W; l++)
				fsp_a(pc, p, gi, l, &lds, pq[l], a[l]);
			for (int dt = 0; dt < pc->DT; dt++) {
				for (int l = 0; l < W; l++)
					fsp_b(c, q, p, gi, l, dt, bk[l]);
				memset(d, 0, sizeof(d));
				ptx_mma(a, bk, d);
				for (int l = 0; l < W; l++)
					fsp_o(c, pc, p, u, gi, l, dt, &d[l * EC], &lds);
			}
		}
		for (int m = 0; m < M; m++)
			fsp_finish(c, pc, q, p, u, m);
	}
}

static const char *sm80_run(const struct fsq_case *c, const struct fsg_golden *g,
			    struct fsq_bufs *b, int32_t *acc, size_t nacc, struct fsp_host *h)
{
	static uint32_t a[W][EA / 4], bk[W][EB / 4];
	static int32_t d[W * EC];
	static float ws[M][N];

	(void)nacc;
	for (int tile = 0; tile < (int)g->n_tiles; tile++) {
		int32_t *tile_acc = &acc[(size_t)tile * c->ksteps_acc * W * EC];

		memset(d, 0, sizeof(d));
		for (int ks = 0; ks < c->ksteps; ks++) {
			for (int l = 0; l < W; l++)
				sm80_frags(c, b, tile, l, ks, a[l], bk[l]);
			ptx_mma(a, bk, d);
			for (int l = 0; l < W; l++)
				sm80_acc_keep(c, tile_acc, l, ks, &d[l * EC]);
		}
		for (int i = 0; i < M * N; i++)
			ws[i / N][i % N] = -INFINITY;
		for (int l = 0; l < W; l++)
			sm80_ws_put(c, b, tile, l, &tile_acc[l * EC], ws);
		for (int i = 0; i < M * N; i++)
			sm80_ws_store(c, b, tile, i, ws);
	}
	if (h->pc.on) {
		struct fsq_bufs q = *b;
		struct fsp_bufs p;

		q.tiles = h->tiles;
		fsp_host_bufs(&p, h, g);
		sm80_pv_run(c, &h->pc, &q, &p);
	}
	return "the CPU (built without nvcc)";
}
#endif

// The case as the kernel sees it, from the golden; 0, or 2 (bad input).
// Any head_dim runs (a multiple of 16: the last K-step zero-padded).
static int sm80_case(const struct fsg_golden *g, int bugs, struct fsq_case *c)
{
	if (strcmp(g->profile, LMU(NAME))) {
		fprintf(stderr, "attn_sm80: the golden's isa is %s; this harness runs %s\n",
			g->profile, LMU(NAME));
		return 2;
	}
	fsq_case_of(c, g, M, K, bugs);
	return 0;
}

int main(int argc, char **argv)
{
	struct fsg_golden g;
	struct fsq_case c;
	struct fsq_bufs b;
	struct fsp_host h;
	char err[1400];
	const char *where;
	size_t nscores, nacc;
	int32_t *acc;
	float *scores;
	int bugs, rc;

	// c_columns: no wrong belief to plant on this map (see the top).
	bugs = argc == 4 ? fsq_bug_of(argv[3]) : 0;
	if (argc < 3 || argc > 4 || bugs < 0 || bugs == FSQ_BUG_C_COLUMNS) {
		fprintf(stderr, "usage: attn_sm80 GOLDEN DUMP [none|page_walk|head_dim_half|p_regroup_none]\n");
		return 2;
	}
	if (fsg_load(&g, argv[1], err, sizeof(err)))
		return fprintf(stderr, "attn_sm80: %s\n", err), 2;
	if (sm80_case(&g, bugs, &c) || fsp_refuse("attn_sm80", &g, bugs, 1, NULL)) {
		fsg_free(&g);
		return 2;
	}
	rc = fsp_host_make(&h, &c, &g, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "attn_sm80: %s: %s\n", argv[1], rc == 2 ? err : "out of memory");
		fsg_free(&g);
		return rc;
	}
	if (fsq_outputs(&c, &g, W, EC, &acc, &scores, &nacc, &nscores)) {
		fprintf(stderr, "attn_sm80: out of memory\n");
		fsp_host_free(&h);
		fsg_free(&g);
		return 3;
	}
	fsq_host_bufs(&b, &g, scores);
	where = sm80_run(&c, &g, &b, acc, nacc, &h);
	rc = fsp_dump("attn_sm80", &c, &g, acc, W, EC, b.scores, &h, argv[2]);
	if (!rc && h.pc.on)
		printf("attn_sm80: %zu tiles and %zu PV groups (%d units, regroup %s) of %s on %s, bug %s, written to %s\n",
		       g.n_tiles, g.n_groups, h.pc.n_units,
		       g.pv_regroup == FSG_PV_V_PERMUTED ? "v_permuted" : "lds", LMU(NAME), where,
		       argc == 4 ? argv[3] : "none", argv[2]);
	else if (!rc)
		printf("attn_sm80: %zu tiles of %s on %s, bug %s, written to %s\n", g.n_tiles,
		       LMU(NAME), where, argc == 4 ? argv[3] : "none", argv[2]);
	free(b.scores);
	free(acc);
	fsp_host_free(&h);
	fsg_free(&g);
	return rc;
}
