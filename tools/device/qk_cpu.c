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
 *   ./qk_cpu GOLDEN DUMP [c_columns|page_walk|head_dim_half]
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

#include "qk_frag.h"

/* One tile: K-steps of "the instruction", then scores of primary rows. */
static void run_tile(const struct fsq_case *c, const struct fsq_bufs *b,
		     struct fsq_frag_flags fl, int tile, int32_t *acc)
{
	int kb = b->tiles[tile * FSQ_TILE_COLS + 3];
	static int8_t areg[W][EA], breg[W][EB];
	static int32_t am[M][K], bm[K][N];
	static float ws[M][N];

	memset(acc, 0, sizeof(int32_t) * W * EC * c->ksteps_acc);
	for (int ks = 0; ks < c->ksteps; ks++) {
		/* per_block32 keeps each K-step's accumulator apart */
		int32_t *d = &acc[(c->ksteps_acc > 1 ? ks : 0) * W * EC];

		for (int l = 0; l < W; l++) {
			int64_t qa = fsq_load_a(c, b, tile, l, ks, fl);
			int64_t kv = fsq_load_b(c, b, tile, l, ks, fl);

			for (int e = 0; e < EA; e++)
				areg[l][e] = (int8_t)(uint8_t)(qa >> (8 * e));
			for (int e = 0; e < EB; e++)
				breg[l][e] = (int8_t)(uint8_t)(kv >> (8 * e));
		}
		/* The instruction: C += A x B, operands read through the map. */
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
	size_t nscores, nacc;
	int32_t *acc;
	float *scores;
	char err[1400];
	struct fsq_frag_flags fl = fsq_frag_flags_of();
	int bugs = argc == 4 ? fsq_bug_of(argv[3]) : 0, rc;

	if (argc < 3 || argc > 4 || bugs < 0) {
		fprintf(stderr, "usage: qk_cpu GOLDEN DUMP [c_columns|page_walk|head_dim_half]\n");
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
	if (fsq_outputs(&c, &g, W, EC, &acc, &scores, &nacc, &nscores)) {
		fprintf(stderr, "qk_cpu: out of memory\n");
		fsg_free(&g);
		return 3;
	}
	fsq_host_bufs(&b, &g, scores);
#ifdef FSQ_GATHER
	fl.a_adjacent = fl.b_adjacent = 0;	/* the byte-by-byte loads */
#endif
	for (size_t i = 0; i < g.n_tiles; i++)
		run_tile(&c, &b, fl, (int)i, &acc[i * W * EC * c.ksteps_acc]);
	rc = fsq_dump("qk_cpu", &c, &g, acc, W, EC, b.scores, argv[2]);
	if (!rc)
		printf("qk_cpu: %zu tiles of %s, scores [%d, %d, %d, %d], written to %s\n",
		       g.n_tiles, LMU(NAME), g.S, g.T, g.Hq, g.MAXCTX, argv[2]);
	free(b.scores);
	free(acc);
	fsg_free(&g);
	return rc;
}
