// probe_mmac.hip - answer a `fragsim probe plan` on an AMD GPU or a
// Hygon DCU: one wave per plan wave, each lane loads its A and B
// registers from probe_a.npy and probe_b.npy, one instruction with C = 0,
// each lane stores its C registers into probe_c.npy. Any shape the
// build's lane map has (mmac.h): wave64 or wave32, 8 or 16 bytes of A and
// B and 4 or 8 C registers a lane (16x16x32 on gfx936 and CDNA3,
// 16x16x16 on RDNA3).
//
//   fragsim probe plan --isa gfx936 --out plan
//   probe_mmac plan dump              (built by build.sh for the target)
//   fragsim probe solve --plan plan --dump dump
//
// Only the instruction and the plan's register contents decide the
// answer: the lane map is used for nothing but the operand sizes and the
// profile's name, which must be the plan's. A plan whose A or B is u8
// (probe_a.npy |u1: a profile with type u8) runs the instruction with
// that operand unsigned, which only RDNA3's iu8 can; elsewhere it is
// refused. C is prefilled with
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

// UA, UB: the plan's A, B are unsigned (one kernel per pair the target's
// instruction can read).
template <int UA, int UB>
__global__ void __launch_bounds__(W) probe(const fsq_ab *a, const fsq_ab *b, int *c)
{
	int wave = fsq_bid(), lane = fsq_tid();
	fsq_acc acc = {};

	acc = fsq_mmac_u<UA, UB>(a[wave * W + lane], b[wave * W + lane], acc);
	for (int e = 0; e < EC; e++)
		c[(wave * W + lane) * EC + e] = acc[e];
}

#define HIP_OK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
	fprintf(stderr, "probe_mmac: %s: %s\n", #x, hipGetErrorString(e_)); \
	exit(3); } } while (0)

// probe_a.npy or probe_b.npy of the plan: int8 or uint8 [waves, W, E];
// *unsigned_ set for uint8. 0, or 2 with the reason printed.
static int load_operand(const char *dir, const char *name, struct fsg_array *a,
			int *unsigned_)
{
	char path[1200], err[1400], err_u[1400];

	snprintf(path, sizeof(path), "%s/%s.npy", dir, name);
	*unsigned_ = 0;
	if (!fsg_npy(path, "|i1", 3, a, err, sizeof(err)))
		return 0;
	if (!fsg_npy(path, "|u1", 3, a, err_u, sizeof(err_u)))
		return *unsigned_ = 1, 0;
	if (strstr(err, "must be |i1"))	/* neither: name both */
		fprintf(stderr, "probe_mmac: %s: must be |i1 or |u1 in C order\n", path);
	else
		fprintf(stderr, "probe_mmac: %s\n", err);
	return 2;
}

int main(int argc, char **argv)
{
	struct fsg_array pa, pb;
	struct fsd_writer w;
	char path[1200], isa[64] = "";
	fsq_ab *da, *db;
	int *dc, *c, ua, ub;
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
	if (load_operand(argv[1], "probe_a", &pa, &ua) || load_operand(argv[1], "probe_b", &pb, &ub))
		return 2;
	if ((ua || ub) && !FSQ_HAS_UNSIGNED) {
		fprintf(stderr, "probe_mmac: %s: the plan's %s unsigned; %s reads signed bytes only\n",
			argv[1], ua && ub ? "A and B are" : ua ? "A is" : "B is", LMU(INSTRUCTION));
		return 2;
	}
	waves = pa.shape[0];
	if (pa.shape[1] != W || pa.shape[2] != EA || pb.shape[0] != waves ||
	    pb.shape[1] != W || pb.shape[2] != EB)
		return fprintf(stderr, "probe_mmac: plan shapes are not [W, %d, %d]\n", W, EA), 2;
	c = (int *)malloc(waves * W * EC * sizeof(int));
	if (!c)
		return 3;
	HIP_OK(hipMalloc(&da, waves * W * EA));
	HIP_OK(hipMalloc(&db, waves * W * EB));
	HIP_OK(hipMalloc(&dc, waves * W * EC * sizeof(int)));
	HIP_OK(hipMemcpy(da, pa.data, waves * W * EA, hipMemcpyHostToDevice));
	HIP_OK(hipMemcpy(db, pb.data, waves * W * EB, hipMemcpyHostToDevice));
	HIP_OK(hipMemset(dc, 0x5a, waves * W * EC * sizeof(int)));
	if (!ua && !ub)
		hipLaunchKernelGGL((probe<0, 0>), dim3((unsigned)waves), dim3(W), 0, 0, da, db, dc);
#if FSQ_HAS_UNSIGNED
	else if (ua && ub)
		hipLaunchKernelGGL((probe<1, 1>), dim3((unsigned)waves), dim3(W), 0, 0, da, db, dc);
	else if (ua)
		hipLaunchKernelGGL((probe<1, 0>), dim3((unsigned)waves), dim3(W), 0, 0, da, db, dc);
	else
		hipLaunchKernelGGL((probe<0, 1>), dim3((unsigned)waves), dim3(W), 0, 0, da, db, dc);
#endif
	HIP_OK(hipGetLastError());
	HIP_OK(hipMemcpy(c, dc, waves * W * EC * sizeof(int), hipMemcpyDeviceToHost));
	shape[0] = waves, shape[1] = W, shape[2] = EC;
	if (fsd_begin(&w, argv[2]) || fsd_tensor(&w, "probe_c", FSD_I32, c, 3, shape) ||
	    fsd_commit(&w)) {
		fprintf(stderr, "probe_mmac: %s\n", w.error);
		fsd_abort(&w);
		return 3;
	}
	printf("probe_mmac: %zu waves of %s%s answered, %s/probe_c.npy written\n", waves,
	       LMU(INSTRUCTION), ua && ub ? " (A and B unsigned)" : ua ? " (A unsigned)" :
	       ub ? " (B unsigned)" : "", argv[2]);
	return 0;
}
