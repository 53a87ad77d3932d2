// probe_mmac.hip - answer a `fragsim probe plan` on an AMD GPU or a
// Hygon DCU: one wave per plan wave, each lane loads its A and B
// registers from probe_a.npy and probe_b.npy, one instruction with C = 0,
// each lane stores its C registers into probe_c.npy.
//
//   fragsim probe plan --isa gfx936 --out plan
//   probe_mmac plan dump              (built by build.sh for the target)
//   fragsim probe solve --plan plan --dump dump
//
// Only the instruction and the plan's register contents decide the
// answer: the lane map is used for nothing but the operand sizes and the
// profile's name, which must be the plan's. C is prefilled with
// 0x5a5a5a5a on the host and zeroed by each lane, so a lane that stores
// nothing cannot look like an answer. Exit status: 0 written, 2 bad
// input, 3 the GPU or the write failed.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmac.h"
#include "fragsim_dump.h"
#include "fragsim_golden.h"

#define W LMU(WAVE)
#define EA LMU(A_ELEMS)
#define EB LMU(B_ELEMS)
#define EC LMU(C_ELEMS)

static_assert(EA == 8 && EB == 8 && EC == 4 && W == 64,
	      "probe_mmac: a 16x16x32 INT8 instruction, wave64");

__global__ void probe(const long *a, const long *b, int *c)
{
	int wave = blockIdx.x, lane = threadIdx.x;
	fsq_v4i acc = { 0, 0, 0, 0 };

	acc = fsq_mmac(a[wave * W + lane], b[wave * W + lane], acc);
	for (int e = 0; e < EC; e++)
		c[(wave * W + lane) * EC + e] = acc[e];
}

#define HIP_OK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
	fprintf(stderr, "probe_mmac: %s: %s\n", #x, hipGetErrorString(e_)); \
	exit(3); } } while (0)

int main(int argc, char **argv)
{
	struct fsg_array pa, pb;
	struct fsd_writer w;
	char err[1400], path[1200], isa[64] = "";
	long *da, *db;
	int *dc, *c;
	size_t waves, shape[3];
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: probe_mmac PLAN DUMP\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/manifest.json", argv[1]);
	f = fopen(path, "rb");
	if (f) {
		char m[4096];
		size_t n = fread(m, 1, sizeof(m) - 1, f);
		const char *p;

		m[n] = '\0';
		fclose(f);
		p = fsg_json_at(m, "isa");
		if (p)
			sscanf(p, "\"%63[^\"]\"", isa);
	}
	if (strcmp(isa, LMU(NAME))) {
		fprintf(stderr, "probe_mmac: %s: the plan is for '%s', this build answers %s plans\n",
			path, isa, LMU(NAME));
		return 2;
	}
	snprintf(path, sizeof(path), "%s/probe_a.npy", argv[1]);
	if (fsg_npy(path, "|i1", 3, &pa, err, sizeof(err)))
		return fprintf(stderr, "probe_mmac: %s\n", err), 2;
	snprintf(path, sizeof(path), "%s/probe_b.npy", argv[1]);
	if (fsg_npy(path, "|i1", 3, &pb, err, sizeof(err)))
		return fprintf(stderr, "probe_mmac: %s\n", err), 2;
	waves = pa.shape[0];
	if (pa.shape[1] != W || pa.shape[2] != EA || pb.shape[0] != waves ||
	    pb.shape[1] != W || pb.shape[2] != EB)
		return fprintf(stderr, "probe_mmac: plan shapes are not [W, %d, %d]\n", W, EA), 2;
	c = (int *)malloc(waves * W * EC * sizeof(int));
	if (!c)
		return 3;
	HIP_OK(hipMalloc(&da, waves * W * 8));
	HIP_OK(hipMalloc(&db, waves * W * 8));
	HIP_OK(hipMalloc(&dc, waves * W * EC * sizeof(int)));
	HIP_OK(hipMemcpy(da, pa.data, waves * W * 8, hipMemcpyHostToDevice));
	HIP_OK(hipMemcpy(db, pb.data, waves * W * 8, hipMemcpyHostToDevice));
	HIP_OK(hipMemset(dc, 0x5a, waves * W * EC * sizeof(int)));
	hipLaunchKernelGGL(probe, dim3((unsigned)waves), dim3(W), 0, 0, da, db, dc);
	HIP_OK(hipGetLastError());
	HIP_OK(hipMemcpy(c, dc, waves * W * EC * sizeof(int), hipMemcpyDeviceToHost));
	shape[0] = waves, shape[1] = W, shape[2] = EC;
	if (fsd_begin(&w, argv[2]) || fsd_tensor(&w, "probe_c", FSD_I32, c, 3, shape) ||
	    fsd_commit(&w)) {
		fprintf(stderr, "probe_mmac: %s\n", w.error);
		fsd_abort(&w);
		return 3;
	}
	printf("probe_mmac: %zu waves of %s answered, %s/probe_c.npy written\n", waves,
	       LMU(INSTRUCTION), argv[2]);
	return 0;
}
