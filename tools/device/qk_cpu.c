/*
 * qk_cpu.c - the CPU twin of hip/attn_mmac.hip: the same per-lane kernel
 * logic (qk_tile.h), the same golden reader (fragsim_golden.h) and the
 * same dump writer (fragsim_dump.h), with the matrix instruction done by
 * plain loops over the generated lane map. It is what `make test` runs
 * (tests/test_fragsim_dump.c) to show that a dump written through
 * fragsim_dump.h is read by `fragsim diff`, matching or naming the bug,
 * and an example of dumping from a kernel test of your own.
 *
 *   fragsim lanemap --isa gfx936 --format c > gen/fragsim_lanemap_gfx936.h
 *   cc -std=c99 -Igen -Itools/device -DFSQ_LANEMAP='"fragsim_lanemap_gfx936.h"' \
 *      -DFSQ_LM=fs_gfx936 -DFSQ_LMU=FS_GFX936 tools/device/qk_cpu.c -lm -o qk_cpu
 *   ./qk_cpu GOLDEN DUMP [c_columns|page_walk|head_dim_half|p_regroup_none]
 *
 * A golden of pv.mode int8 runs the PV half too (pv_tile.h, the phases
 * of attn_mmac.hip's pv_units over the lanes in turn) and dumps p_int8,
 * p_scale, pv_acc, pv_tiles and out beside acc and scores.
 *
 * -DFSQ_GATHER gathers fragments byte by byte instead of the 8-byte
 * loads (qk_frag.h). The same file compiles as C++. Exit status: 0 written, 2 bad input or
 * usage, 3 failed to write.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fragsim_dump.h"
#include "fragsim_golden.h"
#include "qk_tile.h"

#ifndef FSQ_LANEMAP
#define FSQ_LANEMAP "fragsim_lanemap_gfx936.h"
#define FSQ_LM fs_gfx936
#define FSQ_LMU FS_GFX936
#endif
#include FSQ_LANEMAP

#define W LMU(WAVE)
#define M LMU(M)
#define N LMU(N)
#define K LMU(K)
#define EA LMU(A_ELEMS)
#define EB LMU(B_ELEMS)
#define EC LMU(C_ELEMS)

/* A lane's A and B fragments arrive as one 64-bit load (qk_frag.h): a
 * map whose fragment is wider (16 bytes a lane: CDNA4 16x16x64, RDNA3,
 * sm80) would lose its upper bytes and write a wrong dump, so it is
 * refused here, at the build (attn_mmac.hip loads such fragments in
 * 8-byte pieces). */
#if EA > 8 || EB > 8
#error "qk_cpu.c takes lane maps whose A and B fragments are at most 8 bytes a lane; this map's are wider (attn_mmac.hip and attn_sm80.cu load 16-byte fragments)"
#endif

#include "qk_frag.h"
#include "pv_tile.h"

/* The instruction: d += A x B for the wave, operands read through the
 * map. */
static void cpu_mmac(int8_t areg[W][EA], int8_t breg[W][EB], int32_t *d)
{
	static int32_t am[M][K], bm[K][N];

	for (int l = 0; l < W; l++) {
		for (int e = 0; e < EA; e++)
			am[LM(a_row)(l, e)][LM(a_col)(l, e)] = areg[l][e];
		for (int e = 0; e < EB; e++)
			bm[LM(b_row)(l, e)][LM(b_col)(l, e)] = breg[l][e];
	}
	for (int l = 0; l < W; l++)
		for (int e = 0; e < EC; e++) {
			int m = LM(c_row)(l, e), n = LM(c_col)(l, e);

			for (int k = 0; k < K; k++)
				d[l * EC + e] += am[m][k] * bm[k][n];
		}
}

/* K-steps of QK tile `tile` (a row of b->tiles) into acc [ksteps_acc]
 * [W][EC], per_block32 keeping each K-step's accumulator apart. */
static void qk_ksteps(const struct fsq_case *c, const struct fsq_bufs *b,
		      struct fsq_frag_flags fl, int tile, int32_t *acc)
{
	static int8_t areg[W][EA], breg[W][EB];

	memset(acc, 0, sizeof(int32_t) * W * EC * c->ksteps_acc);
	for (int ks = 0; ks < c->ksteps; ks++) {
		for (int l = 0; l < W; l++) {
			int64_t qa = fsq_load_a(c, b, tile, l, ks, fl);
			int64_t kv = fsq_load_b(c, b, tile, l, ks, fl);

			for (int e = 0; e < EA; e++)
				areg[l][e] = (int8_t)(uint8_t)(qa >> (8 * e));
			for (int e = 0; e < EB; e++)
				breg[l][e] = (int8_t)(uint8_t)(kv >> (8 * e));
		}
		cpu_mmac(areg, breg, &acc[(c->ksteps_acc > 1 ? ks : 0) * W * EC]);
	}
}

/* The bytes of registers r (EA or EB of them) as the instruction reads
 * them: element e is register e / 4, byte e % 4. */
static void cpu_bytes(const uint32_t *r, int n, int8_t *x)
{
	for (int e = 0; e < n; e++)
		x[e] = (int8_t)(uint8_t)(r[e / 4] >> (8 * (e % 4)));
}

/* INT8 PV (pv_tile.h): each phase over the wave's lanes in turn, as
 * hip/attn_mmac.hip's pv_units runs them between its barriers. */
static void pv_run(const struct fsq_case *c, const struct fsp_case *pc,
		   const struct fsq_bufs *q, const struct fsp_bufs *p, struct fsq_frag_flags fl)
{
	static struct fsp_lds lds;
	static int8_t pq[W][FSP_GT * EC], areg[W][EA], breg[W][EB];
	static uint32_t a[W][EA / 4], vb[EB / 4];
	static int32_t d[W * EC];

	for (int u = 0; u < pc->n_units; u++) {
		for (int j = p->unit_first[u]; j < p->unit_first[u + 1]; j++) {
			int gi = p->unit_groups[j];

			for (int t = 0; t < FSP_GT; t++)
				qk_ksteps(c, q, fl, gi * FSP_GT + t,
					  &p->qk_acc[((size_t)u * FSP_GT + t) * c->ksteps_acc * W * EC]);
			for (int l = 0; l < W; l++)
				fsp_scores(c, pc, q, p, u, gi, l, &lds);
			for (int m = 0; m < M; m++)
				fsp_row(c, pc, q, p, u, gi, m, &lds);
			for (int l = 0; l < W; l++)
				fsp_pq(c, pc, q, p, gi, l, &lds, pq[l]);
			for (int l = 0; l < W; l++) {
				fsp_a(pc, p, gi, l, &lds, pq[l], a[l]);
				cpu_bytes(a[l], EA, areg[l]);
			}
			for (int dt = 0; dt < pc->DT; dt++) {
				for (int l = 0; l < W; l++) {
					fsp_b(c, q, p, gi, l, dt, vb);
					cpu_bytes(vb, EB, breg[l]);
				}
				memset(d, 0, sizeof(d));
				cpu_mmac(areg, breg, d);
				for (int l = 0; l < W; l++)
					fsp_o(c, pc, p, u, gi, l, dt, &d[l * EC], &lds);
			}
		}
		for (int m = 0; m < M; m++)
			fsp_finish(c, pc, q, p, u, m);
	}
}

/* One tile: K-steps of "the instruction", then scores of primary rows. */
static void run_tile(const struct fsq_case *c, const struct fsq_bufs *b,
		     struct fsq_frag_flags fl, int tile, int32_t *acc)
{
	int kb = b->tiles[tile * FSQ_TILE_COLS + 3];
	static float ws[M][N];

	qk_ksteps(c, b, fl, tile, acc);
	/* Scale recovery, then the transpose through the workspace, as
	 * attn_mmac.hip does with its LDS. */
	for (int i = 0; i < M * N; i++)
		ws[i / N][i % N] = -INFINITY;
	for (int l = 0; l < W; l++)
		for (int e = 0; e < EC; e++) {
			int m = LM(c_row)(l, e);
			int n = fsq_belief_col(c, l, e, EC, LM(c_col)(l, e));
			struct fsq_row r = fsq_row_of(c, b, tile, m);

			ws[m][n] = fsq_score(c, b, &r, kb + n, &acc[l * EC + e], W * EC);
		}
	for (int i = 0; i < M * N; i++) {
		int m = i / N, n = i % N;
		struct fsq_row r = fsq_row_of(c, b, tile, m);

		if (r.primary && kb + n < c->MAXCTX)
			b->scores[fsq_score_index(c, &r, kb + n)] = ws[m][n];
	}
}

int main(int argc, char **argv)
{
	struct fsg_golden g;
	struct fsq_case c;
	struct fsq_bufs b;
	struct fsp_host h;
	size_t nscores, nacc;
	int32_t *acc;
	float *scores;
	char err[1400];
	struct fsq_frag_flags fl = fsq_frag_flags_of();
	int bugs = argc == 4 ? fsq_bug_of(argv[3]) : 0, rc;

	if (argc < 3 || argc > 4 || bugs < 0) {
		fprintf(stderr, "usage: qk_cpu GOLDEN DUMP [c_columns|page_walk|head_dim_half|p_regroup_none]\n");
		return 2;
	}
	if (fsg_load(&g, argv[1], err, sizeof(err))) {
		fprintf(stderr, "qk_cpu: %s\n", err);
		return 2;
	}
	if (strcmp(g.profile, LMU(NAME))) {
		fprintf(stderr, "qk_cpu: the golden's isa is %s; this build runs %s\n", g.profile,
			LMU(NAME));
		fsg_free(&g);
		return 2;
	}
	fsq_case_of(&c, &g, M, K, bugs);
	if (fsp_refuse("qk_cpu", &g, bugs, 1, NULL)) {
		fsg_free(&g);
		return 2;
	}
	rc = fsp_host_make(&h, &c, &g, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "qk_cpu: %s: %s\n", argv[1], rc == 2 ? err : "out of memory");
		fsg_free(&g);
		return rc;
	}
	if (fsq_outputs(&c, &g, W, EC, &acc, &scores, &nacc, &nscores)) {
		fprintf(stderr, "qk_cpu: out of memory\n");
		fsp_host_free(&h);
		fsg_free(&g);
		return 3;
	}
	fsq_host_bufs(&b, &g, scores);
#ifdef FSQ_GATHER
	fl.a_adjacent = fl.b_adjacent = 0;	/* the byte-by-byte loads */
#endif
	for (size_t i = 0; i < g.n_tiles; i++)
		run_tile(&c, &b, fl, (int)i, &acc[i * W * EC * c.ksteps_acc]);
	if (h.pc.on) {
		struct fsq_bufs q = b;
		struct fsp_bufs p;

		q.tiles = h.tiles;
		fsp_host_bufs(&p, &h, &g);
		pv_run(&c, &h.pc, &q, &p, fl);
	}
	rc = fsp_dump("qk_cpu", &c, &g, acc, W, EC, b.scores, &h, argv[2]);
	if (!rc)
		printf("qk_cpu: %zu tiles of %s, scores [%d, %d, %d, %d]%s, written to %s\n",
		       g.n_tiles, LMU(NAME), g.S, g.T, g.Hq, g.MAXCTX,
		       !h.pc.on ? "" : g.pv_regroup == FSG_PV_V_PERMUTED ?
		       ", INT8 PV (regroup v_permuted)" : ", INT8 PV (regroup lds)", argv[2]);
	free(b.scores);
	free(acc);
	fsp_host_free(&h);
	fsg_free(&g);
	return rc;
}
