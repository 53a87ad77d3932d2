// attn_sm80.cu - the QK^T half of a paged INT8 attention kernel on real
// NVIDIA tensor cores, one mma.sync.m16n8k32 .s8 per K-step, dumping its
// accumulators in register order for `fragsim diff`.
//
// The register layouts below are written from the PTX ISA text (section
// "Matrix Fragments for mma.m16n8k32", groupID = laneid >> 2,
// threadID_in_group = laneid % 4), not from fragsim's profile: the device
// is the witness, the profile is what it testifies about.
//
// Work: one warp per tile listed in acc_tiles (seq, head, row_base,
// token_base), exactly the tiles the emulation executed. Rows of a tile:
//   decode   row m = q head head*G + m % G of query token row_base
//   prefill  row m = query token row_base + m of q head `head`
// Keys kb + n go through the block table into the paged cache
// [NB][Hkv][D/16][BS][16]; a key past the table loads 0, as the emulated
// kernel does. Planted bugs (argv[3]) imitate broken kernels:
//   page_walk       logical block used as physical (block table ignored)
//   head_dim_half   only the first D/2 dims are loaded
//
// Inputs are raw little-endian files written by attn_run.py.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct Meta {
	int S, T, Hq, Hkv, D, BS, MAXB, NB, n_tiles, prefill;
	int page_walk_none, ksteps;
};

__device__ int8_t k_at(const Meta m, const int8_t *kc, const int32_t *bt,
		       const int32_t *lens, const int32_t *seq0, int s, int g,
		       int tok, int dim)
{
	int nblk = (lens[s] + m.BS - 1) / m.BS, bi = tok / m.BS, blk;

	if (tok < 0 || bi >= nblk)
		return 0;
	blk = m.page_walk_none ? seq0[s] + bi : bt[s * m.MAXB + bi];
	return kc[((((size_t)blk * m.Hkv + g) * (m.D / 16) + dim / 16) * m.BS +
		   tok % m.BS) * 16 + dim % 16];
}

__device__ int8_t q_at(const Meta m, const int8_t *q, const int32_t *lens,
		       int s, int t, int qh, int dim, int valid)
{
	(void)lens;
	if (!valid)
		return 0;
	return q[(((size_t)s * m.T + t) * m.Hq + qh) * m.D + dim];
}

__global__ void qk_tiles(const Meta m, const int8_t *q, const int8_t *kc,
			 const int32_t *bt, const int32_t *lens,
			 const int32_t *tlen, const int32_t *seq0,
			 const int32_t *tiles, int32_t *acc)
{
	int tile = blockIdx.x, lane = threadIdx.x;
	int group = lane >> 2, tig = lane & 3, G = m.Hq / m.Hkv;
	int s = tiles[tile * 4 + 0], head = tiles[tile * 4 + 1];
	int rb = tiles[tile * 4 + 2], kb = tiles[tile * 4 + 3];
	int g = m.prefill ? head / G : head;
	int32_t d[4] = { 0, 0, 0, 0 };

	for (int ks = 0; ks < m.ksteps; ks++) {
		uint32_t a[4] = { 0, 0, 0, 0 }, b[2] = { 0, 0 };

		// A: a_i, i = 0..15, four to a register, lowest byte first.
		for (int i = 0; i < 16; i++) {
			int row = (i < 4 || (i >= 8 && i < 12)) ? group : group + 8;
			int col = tig * 4 + (i & 3) + (i >= 8 ? 16 : 0);
			int t, qh, valid = 1;
			int8_t v;

			if (m.prefill) {
				t = rb + row, qh = head;
				valid = t < tlen[s];
			} else {
				t = rb, qh = head * G + row % G;
			}
			v = q_at(m, q, lens, s, t, qh, ks * 32 + col, valid);
			a[i / 4] |= (uint32_t)(uint8_t)v << (8 * (i % 4));
		}
		// B: b_i, i = 0..7; row is the reduction index, col the key.
		for (int i = 0; i < 8; i++) {
			int row = tig * 4 + (i & 3) + (i >= 4 ? 16 : 0), col = group;
			int8_t v = k_at(m, kc, bt, lens, seq0, s, g, kb + col,
					ks * 32 + row);

			b[i / 4] |= (uint32_t)(uint8_t)v << (8 * (i % 4));
		}
		asm volatile(
			"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
			"{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
			: "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
			: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]),
			  "r"(b[0]), "r"(b[1]));
	}
	for (int e = 0; e < 4; e++)
		acc[((size_t)tile * 32 + lane) * 4 + e] = d[e];
}

static std::vector<char> slurp(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "attn_sm80: cannot open %s\n", path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	std::vector<char> b((size_t)n);
	if (n && fread(b.data(), 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "attn_sm80: short read %s\n", path);
		exit(2);
	}
	fclose(f);
	return b;
}

template <class T> static T *upload(const std::vector<char> &h)
{
	void *p = nullptr;
	if (cudaMalloc(&p, h.size() ? h.size() : 1) != cudaSuccess ||
	    cudaMemcpy(p, h.data(), h.size(), cudaMemcpyHostToDevice) != cudaSuccess) {
		fprintf(stderr, "attn_sm80: cuda upload failed\n");
		exit(3);
	}
	return (T *)p;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: attn_sm80 RAWDIR OUTFILE [page_walk|head_dim_half]\n");
		return 2;
	}
	const char *dir = argv[1], *bug = argc > 3 ? argv[3] : "";
	std::vector<char> meta = slurp(dir, "meta.i32");
	Meta m;
	memcpy(&m, meta.data(), 10 * sizeof(int));
	m.page_walk_none = !strcmp(bug, "page_walk");
	m.ksteps = m.D / 32 / (!strcmp(bug, "head_dim_half") ? 2 : 1);

	int8_t *q = upload<int8_t>(slurp(dir, "q_int8.raw"));
	int8_t *kc = upload<int8_t>(slurp(dir, "k_cache.raw"));
	int32_t *bt = upload<int32_t>(slurp(dir, "block_table.raw"));
	int32_t *lens = upload<int32_t>(slurp(dir, "context_lens.raw"));
	int32_t *tlen = upload<int32_t>(slurp(dir, "tokens.raw"));
	int32_t *seq0 = upload<int32_t>(slurp(dir, "seq_block0.raw"));
	int32_t *tiles = upload<int32_t>(slurp(dir, "acc_tiles.raw"));
	size_t n = (size_t)m.n_tiles * 32 * 4;
	int32_t *acc = nullptr;
	cudaMalloc(&acc, n * sizeof(int32_t));

	qk_tiles<<<m.n_tiles, 32>>>(m, q, kc, bt, lens, tlen, seq0, tiles, acc);
	if (cudaDeviceSynchronize() != cudaSuccess) {
		fprintf(stderr, "attn_sm80: kernel failed: %s\n",
			cudaGetErrorString(cudaGetLastError()));
		return 3;
	}
	std::vector<int32_t> h(n);
	cudaMemcpy(h.data(), acc, n * sizeof(int32_t), cudaMemcpyDeviceToHost);
	FILE *f = fopen(argv[2], "wb");
	if (!f || fwrite(h.data(), sizeof(int32_t), n, f) != n || fclose(f)) {
		fprintf(stderr, "attn_sm80: cannot write %s\n", argv[2]);
		return 3;
	}
	printf("attn_sm80: %d tiles, %d K-steps, bug '%s'\n", m.n_tiles, m.ksteps, bug);
	return 0;
}
