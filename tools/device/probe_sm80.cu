// probe_sm80.cu - answer a fragsim probe plan with NVIDIA's INT8 mma.sync
// (mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32, sm_80 and later; built
// with -DFS_MMA_K=16, mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32).
//
//   probe_sm80 WAVES a.bin b.bin c.bin
//
//   a.bin  int8  [WAVES][32][EA]   probe_a.npy's data: lane L's A elements
//   b.bin  int8  [WAVES][32][EB]   probe_b.npy's data
//   c.bin  int32 [WAVES][32][4]    written: lane L's C registers c0..c3
//   EA, EB: 16 and 8 for K 32 (profile sm80-mma-m16n8k32-s8), 8 and 4 for
//   K 16 (sm80-mma-m16n8k16-s8).
//
// One warp per wave: each lane loads its registers, the warp issues one
// mma with C = 0, each lane stores D. Nothing else: the probe is only
// worth anything if this program adds no layout of its own.
//
// Register packing. Profile sm80-mma-m16n8k32-s8 numbers a lane's
// elements e in register order: register e / 4, byte e % 4 (the PTX
// ISA's a0..a15, b0..b7 "low to high" in .b32 registers; c0..c3 are
// the four .s32 registers). So a lane's 16 A bytes, read as four
// little-endian 32-bit words, are exactly the registers a0..a3 (word r
// holds e = 4r .. 4r+3, e = 4r in bits 0..7); B likewise in two words;
// C is stored register by register. Both host and GPU are little-endian.
// Build: nvcc -arch=sm_90 -O2 -o probe_sm80 probe_sm80.cu
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#ifndef FS_MMA_K
#define FS_MMA_K 32
#endif
#if FS_MMA_K != 32 && FS_MMA_K != 16
#error "FS_MMA_K must be 32 or 16"
#endif
static const int LANES = 32, EA = FS_MMA_K / 2, EB = FS_MMA_K / 4, EC = 4;

#define CHECK(call)                                                          \
	do {                                                                 \
		cudaError_t e_ = (call);                                     \
		if (e_ != cudaSuccess) {                                     \
			fprintf(stderr, "probe_sm80: %s: %s\n", #call,       \
				cudaGetErrorString(e_));                     \
			exit(3);                                             \
		}                                                            \
	} while (0)

__global__ void probe_kernel(const uint32_t *a, const uint32_t *b, int32_t *c)
{
	size_t slot = (size_t)blockIdx.x * LANES + threadIdx.x;	// wave, lane
	const uint32_t *ra = a + slot * (EA / 4);
	const uint32_t *rb = b + slot * (EB / 4);
	int32_t d0, d1, d2, d3;
	const int32_t z = 0;

#if FS_MMA_K == 32
	asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
		     "{%10, %11, %12, %13};\n"
		     : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)
		     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]),
		       "r"(rb[0]), "r"(rb[1]),
		       "r"(z), "r"(z), "r"(z), "r"(z));
#else
	asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 "
		     "{%0, %1, %2, %3}, {%4, %5}, {%6}, "
		     "{%7, %8, %9, %10};\n"
		     : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)
		     : "r"(ra[0]), "r"(ra[1]), "r"(rb[0]),
		       "r"(z), "r"(z), "r"(z), "r"(z));
#endif
	c[slot * EC + 0] = d0;
	c[slot * EC + 1] = d1;
	c[slot * EC + 2] = d2;
	c[slot * EC + 3] = d3;
}

// Read exactly n bytes of path into a new buffer, or exit 2.
static void *read_exact(const char *path, size_t n)
{
	FILE *f = fopen(path, "rb");
	void *buf = malloc(n ? n : 1);
	long size;

	if (!f || !buf) {
		fprintf(stderr, "probe_sm80: cannot read %s\n", path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, 0, SEEK_SET);
	if (size != (long)n || fread(buf, 1, n, f) != n) {
		fprintf(stderr, "probe_sm80: %s: %ld bytes, expected %zu\n", path, size, n);
		exit(2);
	}
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: probe_sm80 WAVES a.bin b.bin c.bin\n");
		return 2;
	}
	long waves = strtol(argv[1], NULL, 10);
	if (waves < 1 || waves > 65535) {
		fprintf(stderr, "probe_sm80: WAVES must be 1..65535, not '%s'\n", argv[1]);
		return 2;
	}
	size_t slots = (size_t)waves * LANES;
	size_t na = slots * EA, nb = slots * EB, nc = slots * EC * sizeof(int32_t);
	void *ha = read_exact(argv[2], na), *hb = read_exact(argv[3], nb);
	int32_t *hc = (int32_t *)malloc(nc);
	cudaDeviceProp prop;
	int dev;

	CHECK(cudaGetDevice(&dev));
	CHECK(cudaGetDeviceProperties(&prop, dev));
	if (prop.major < 8) {
		fprintf(stderr, "probe_sm80: %s is sm_%d%d; mma .s8 needs sm_80+\n",
			prop.name, prop.major, prop.minor);
		return 2;
	}
	printf("%s (sm_%d%d)\n", prop.name, prop.major, prop.minor);

	uint32_t *da, *db;
	int32_t *dc;
	CHECK(cudaMalloc(&da, na));
	CHECK(cudaMalloc(&db, nb));
	CHECK(cudaMalloc(&dc, nc));
	CHECK(cudaMemcpy(da, ha, na, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(db, hb, nb, cudaMemcpyHostToDevice));
	CHECK(cudaMemset(dc, 0x5a, nc));	// a lane that stores nothing shows
	probe_kernel<<<(unsigned)waves, LANES>>>(da, db, dc);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaMemcpy(hc, dc, nc, cudaMemcpyDeviceToHost));

	FILE *f = fopen(argv[4], "wb");
	if (!f || fwrite(hc, 1, nc, f) != nc || fclose(f) != 0) {
		fprintf(stderr, "probe_sm80: cannot write %s\n", argv[4]);
		return 3;
	}
	CHECK(cudaFree(da));
	CHECK(cudaFree(db));
	CHECK(cudaFree(dc));
	free(ha);
	free(hb);
	free(hc);
	return 0;
}
