/*
 * probe_cpu.c - the CPU twin of tools/device/hip/probe_mmac.hip for
 * tests/test_fragsim_dump.c: read a probe plan with fragsim_golden.h, compute
 * each wave's C = A x B through the lane map compiled in (the "device"),
 * write probe_c.npy through fragsim_dump.h. Built with the generated
 * header of the map the simulated device has:
 *   -DFSQ_LANEMAP='"fragsim_lanemap_gfx936.h"' -DFSQ_LM=fs_gfx936 -DFSQ_LMU=FS_GFX936
 * Usage: probe_cpu PLAN DUMP. Exit status 0 written, 2 bad plan, 3 failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fragsim_dump.h"
#include "fragsim_golden.h"
#include FSQ_LANEMAP

#define FSQ_CAT_(a, b) a##_##b
#define FSQ_CAT(a, b) FSQ_CAT_(a, b)
#define LM(x) FSQ_CAT(FSQ_LM, x)
#define LMU(x) FSQ_CAT(FSQ_LMU, x)
#define W LMU(WAVE)
#define EA LMU(A_ELEMS)
#define EB LMU(B_ELEMS)
#define EC LMU(C_ELEMS)

int main(int argc, char **argv)
{
	struct fsg_array pa, pb;
	struct fsd_writer w;
	char err[1400], path[1200];
	static int32_t am[LMU(M)][LMU(K)], bm[LMU(K)][LMU(N)];
	int32_t *c;
	size_t waves, shape[3];

	if (argc != 3)
		return 2;
	snprintf(path, sizeof(path), "%s/probe_a.npy", argv[1]);
	if (fsg_npy(path, "|i1", 3, &pa, err, sizeof(err)))
		return fprintf(stderr, "probe_cpu: %s\n", err), 2;
	snprintf(path, sizeof(path), "%s/probe_b.npy", argv[1]);
	if (fsg_npy(path, "|i1", 3, &pb, err, sizeof(err)))
		return fprintf(stderr, "probe_cpu: %s\n", err), 2;
	waves = pa.shape[0];
	if (pa.shape[1] != W || pa.shape[2] != EA || pb.shape[1] != W || pb.shape[2] != EB)
		return fprintf(stderr, "probe_cpu: plan is not for this map\n"), 2;
	c = (int32_t *)calloc(waves * W * EC, sizeof(int32_t));
	if (!c)
		return 3;
	for (size_t v = 0; v < waves; v++) {
		const int8_t *a = (const int8_t *)pa.data + v * W * EA;
		const int8_t *b = (const int8_t *)pb.data + v * W * EB;

		for (int l = 0; l < W; l++) {
			for (int e = 0; e < EA; e++)
				am[LM(a_row)(l, e)][LM(a_col)(l, e)] = a[l * EA + e];
			for (int e = 0; e < EB; e++)
				bm[LM(b_row)(l, e)][LM(b_col)(l, e)] = b[l * EB + e];
		}
		for (int l = 0; l < W; l++)
			for (int e = 0; e < EC; e++)
				for (int k = 0; k < LMU(K); k++)
					c[(v * W + l) * EC + e] += am[LM(c_row)(l, e)][k] *
								   bm[k][LM(c_col)(l, e)];
	}
	shape[0] = waves, shape[1] = W, shape[2] = EC;
	if (fsd_begin(&w, argv[2]) || fsd_tensor(&w, "probe_c", FSD_I32, c, 3, shape) ||
	    fsd_commit(&w)) {
		fprintf(stderr, "probe_cpu: %s\n", w.error);
		fsd_abort(&w);
		return 3;
	}
	free(c);
	free(pa.data);
	free(pb.data);
	return 0;
}
