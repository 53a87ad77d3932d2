/*
 * peak.c - the two ceilings `make bench` holds fragsim's timings against,
 * measured on this machine in the same invocation as the timings.
 *
 * A datasheet peak says little on a shared 2-core VM whose clock and
 * memory we do not know, so the bench measures:
 *
 *   int8 MAC/s   a register-only loop of independent 8-bit dot-product
 *                instructions: AVX-512 VNNI vpdpbusd (64 MACs each), or
 *                when the CPU lacks it AVX2 vpmaddubsw (32 MACs each,
 *                u8 x s8 pairs summed to s16: the pre-VNNI idiom)
 *   f64, f32 FMA/s  the same register-only loop of vfmadd on doubles and
 *                on floats (AVX-512 zmm, or AVX2 + FMA ymm): the ceiling
 *                of the reference's double passes (f64) and of numpy's
 *                and the emulation's float work (f32)
 *   read B/s     a streaming sum over a buffer far larger than the LLC,
 *                so every byte comes from DRAM
 *   gen ns       fragsim's input generator itself (sim/common/gen.c, compiled
 *                into this program): ns per generated value per thread,
 *                normal rows of 256, each thread its own rows (issue
 *                12's "at most 1.5 ns" bench row)
 *
 * each on 1..T OpenMP threads, or the listed counts only (PEAK_NO_VNNI=1 in the environment forces
 * the AVX2 kernel, to try the fallback on a VNNI machine). Output is one JSON object on stdout:
 *
 *   {"int8_isa": "avx512-vnni vpdpbusd", "int8_gmacs": {"1": 812.3, "2": 1620.1},
 *    "read_gbs": {"1": 21.4, "2": 30.2}, "read_buffer_mib": 1024,
 *    "gen_ns": {"1": 0.9, "2": 0.9}}
 *
 * Each figure is the best of a few repetitions: a ceiling, so noise from
 * other tenants should only ever lower it, never raise it.
 */
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The generator as fragsim builds it: one translation unit, no link to
 * the library (this program links alone). */
#include "../../sim/common/gen.c"

#define GEN_ROWS_PER_THREAD 32768	/* x 256 values, per repetition */

#define PEAK_ACC 12		/* independent accumulators (> latency x ports) */
#define PEAK_ITERS 10000000L	/* inner iterations per repetition */
#define PEAK_REPS 5

/* MACs per instruction, and the name printed with the figures. */
struct int8_kernel {
	const char *name;
	int macs_per_instr;
	int64_t (*run)(long iters, int seed);
};

/*
 * Twelve named accumulators, not an array: at -O2 GCC keeps an array in
 * memory and the loop measures store forwarding instead of the ALU.
 */
__attribute__((target("avx512f,avx512bw,avx512vnni")))
static int64_t run_vnni(long iters, int seed)
{
	__m512i a = _mm512_set1_epi8((char)(seed | 1)), b = _mm512_set1_epi8(3);
	/* Distinct starting values: equal chains would be merged into one. */
	__m512i c0 = _mm512_set1_epi32(0), c1 = _mm512_set1_epi32(1);
	__m512i c2 = _mm512_set1_epi32(2), c3 = _mm512_set1_epi32(3);
	__m512i c4 = _mm512_set1_epi32(4), c5 = _mm512_set1_epi32(5);
	__m512i c6 = _mm512_set1_epi32(6), c7 = _mm512_set1_epi32(7);
	__m512i c8 = _mm512_set1_epi32(8), c9 = _mm512_set1_epi32(9);
	__m512i c10 = _mm512_set1_epi32(10), c11 = _mm512_set1_epi32(11);

	for (long it = 0; it < iters; it++) {
		c0 = _mm512_dpbusd_epi32(c0, a, b);
		c1 = _mm512_dpbusd_epi32(c1, a, b);
		c2 = _mm512_dpbusd_epi32(c2, a, b);
		c3 = _mm512_dpbusd_epi32(c3, a, b);
		c4 = _mm512_dpbusd_epi32(c4, a, b);
		c5 = _mm512_dpbusd_epi32(c5, a, b);
		c6 = _mm512_dpbusd_epi32(c6, a, b);
		c7 = _mm512_dpbusd_epi32(c7, a, b);
		c8 = _mm512_dpbusd_epi32(c8, a, b);
		c9 = _mm512_dpbusd_epi32(c9, a, b);
		c10 = _mm512_dpbusd_epi32(c10, a, b);
		c11 = _mm512_dpbusd_epi32(c11, a, b);
		/* An opaque use of a, so the compiler cannot fold the chain. */
		__asm__ volatile("" : "+v"(a));
	}
	c0 = _mm512_add_epi32(_mm512_add_epi32(c0, c1), _mm512_add_epi32(c2, c3));
	c4 = _mm512_add_epi32(_mm512_add_epi32(c4, c5), _mm512_add_epi32(c6, c7));
	c8 = _mm512_add_epi32(_mm512_add_epi32(c8, c9), _mm512_add_epi32(c10, c11));
	return _mm512_reduce_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c0, c4), c8));
}

__attribute__((target("avx2")))
static int64_t run_avx2(long iters, int seed)
{
	__m256i b = _mm256_set1_epi8((char)(seed | 1));
	__m256i c0 = _mm256_set1_epi16(0), c1 = _mm256_set1_epi16(1);
	__m256i c2 = _mm256_set1_epi16(2), c3 = _mm256_set1_epi16(3);
	__m256i c4 = _mm256_set1_epi16(4), c5 = _mm256_set1_epi16(5);
	__m256i c6 = _mm256_set1_epi16(6), c7 = _mm256_set1_epi16(7);
	__m256i c8 = _mm256_set1_epi16(8), c9 = _mm256_set1_epi16(9);
	__m256i c10 = _mm256_set1_epi16(10), c11 = _mm256_set1_epi16(11);
	int16_t v[16];
	int64_t sum = 0;

	/* maddubs is the MAC; a real kernel widens its s16 result with
	 * vpmaddwd, a cost this ceiling leaves out (it stays a ceiling).
	 * Each chain feeds its own result back as the u8 operand: with a
	 * shared (a, b) the compiler would compute the product once. */
	for (long it = 0; it < iters; it++) {
		c0 = _mm256_maddubs_epi16(c0, b);
		c1 = _mm256_maddubs_epi16(c1, b);
		c2 = _mm256_maddubs_epi16(c2, b);
		c3 = _mm256_maddubs_epi16(c3, b);
		c4 = _mm256_maddubs_epi16(c4, b);
		c5 = _mm256_maddubs_epi16(c5, b);
		c6 = _mm256_maddubs_epi16(c6, b);
		c7 = _mm256_maddubs_epi16(c7, b);
		c8 = _mm256_maddubs_epi16(c8, b);
		c9 = _mm256_maddubs_epi16(c9, b);
		c10 = _mm256_maddubs_epi16(c10, b);
		c11 = _mm256_maddubs_epi16(c11, b);
		__asm__ volatile("" : "+x"(b));
	}
	c0 = _mm256_add_epi16(_mm256_add_epi16(c0, c1), _mm256_add_epi16(c2, c3));
	c4 = _mm256_add_epi16(_mm256_add_epi16(c4, c5), _mm256_add_epi16(c6, c7));
	c8 = _mm256_add_epi16(_mm256_add_epi16(c8, c9), _mm256_add_epi16(c10, c11));
	_mm256_storeu_si256((__m256i *)v, _mm256_add_epi16(_mm256_add_epi16(c0, c4), c8));
	for (int k = 0; k < 16; k++)
		sum += v[k];
	return sum;
}

/*
 * Fused multiply-adds on 12 independent chains, acc = acc * a + b: the
 * FMA units' ceiling (12 > 2 pipes x 4 cycles of latency). w is the
 * vector width in lanes of the element type; each returns the lanes'
 * sum so that nothing is dead.
 */
#define FMA12(T, F, ACC, A, B) do { \
		ACC##0 = F(ACC##0, A, B); ACC##1 = F(ACC##1, A, B); \
		ACC##2 = F(ACC##2, A, B); ACC##3 = F(ACC##3, A, B); \
		ACC##4 = F(ACC##4, A, B); ACC##5 = F(ACC##5, A, B); \
		ACC##6 = F(ACC##6, A, B); ACC##7 = F(ACC##7, A, B); \
		ACC##8 = F(ACC##8, A, B); ACC##9 = F(ACC##9, A, B); \
		ACC##10 = F(ACC##10, A, B); ACC##11 = F(ACC##11, A, B); \
	} while (0)

__attribute__((target("avx512f")))
static double fma_pd512(long iters, int seed)
{
	__m512d a = _mm512_set1_pd(0.999999), b = _mm512_set1_pd(1e-9 * (seed + 1));
	__m512d c0 = _mm512_set1_pd(0), c1 = _mm512_set1_pd(1), c2 = _mm512_set1_pd(2),
		c3 = _mm512_set1_pd(3), c4 = _mm512_set1_pd(4), c5 = _mm512_set1_pd(5),
		c6 = _mm512_set1_pd(6), c7 = _mm512_set1_pd(7), c8 = _mm512_set1_pd(8),
		c9 = _mm512_set1_pd(9), c10 = _mm512_set1_pd(10), c11 = _mm512_set1_pd(11);

	for (long it = 0; it < iters; it++) {
		FMA12(__m512d, _mm512_fmadd_pd, c, a, b);
		__asm__ volatile("" : "+v"(a));
	}
	c0 = _mm512_add_pd(_mm512_add_pd(c0, c1), _mm512_add_pd(c2, c3));
	c4 = _mm512_add_pd(_mm512_add_pd(c4, c5), _mm512_add_pd(c6, c7));
	c8 = _mm512_add_pd(_mm512_add_pd(c8, c9), _mm512_add_pd(c10, c11));
	return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(c0, c4), c8));
}

__attribute__((target("avx512f")))
static double fma_ps512(long iters, int seed)
{
	__m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-9f * (seed + 1));
	__m512 c0 = _mm512_set1_ps(0), c1 = _mm512_set1_ps(1), c2 = _mm512_set1_ps(2),
	       c3 = _mm512_set1_ps(3), c4 = _mm512_set1_ps(4), c5 = _mm512_set1_ps(5),
	       c6 = _mm512_set1_ps(6), c7 = _mm512_set1_ps(7), c8 = _mm512_set1_ps(8),
	       c9 = _mm512_set1_ps(9), c10 = _mm512_set1_ps(10), c11 = _mm512_set1_ps(11);

	for (long it = 0; it < iters; it++) {
		FMA12(__m512, _mm512_fmadd_ps, c, a, b);
		__asm__ volatile("" : "+v"(a));
	}
	c0 = _mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3));
	c4 = _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7));
	c8 = _mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11));
	return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c4), c8));
}

__attribute__((target("avx2,fma")))
static double fma_pd256(long iters, int seed)
{
	__m256d a = _mm256_set1_pd(0.999999), b = _mm256_set1_pd(1e-9 * (seed + 1));
	__m256d c0 = _mm256_set1_pd(0), c1 = _mm256_set1_pd(1), c2 = _mm256_set1_pd(2),
		c3 = _mm256_set1_pd(3), c4 = _mm256_set1_pd(4), c5 = _mm256_set1_pd(5),
		c6 = _mm256_set1_pd(6), c7 = _mm256_set1_pd(7), c8 = _mm256_set1_pd(8),
		c9 = _mm256_set1_pd(9), c10 = _mm256_set1_pd(10), c11 = _mm256_set1_pd(11);
	double o[4];

	for (long it = 0; it < iters; it++) {
		FMA12(__m256d, _mm256_fmadd_pd, c, a, b);
		__asm__ volatile("" : "+x"(a));
	}
	c0 = _mm256_add_pd(_mm256_add_pd(c0, c1), _mm256_add_pd(c2, c3));
	c4 = _mm256_add_pd(_mm256_add_pd(c4, c5), _mm256_add_pd(c6, c7));
	c8 = _mm256_add_pd(_mm256_add_pd(c8, c9), _mm256_add_pd(c10, c11));
	_mm256_storeu_pd(o, _mm256_add_pd(_mm256_add_pd(c0, c4), c8));
	return o[0] + o[1] + o[2] + o[3];
}

__attribute__((target("avx2,fma")))
static double fma_ps256(long iters, int seed)
{
	__m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-9f * (seed + 1));
	__m256 c0 = _mm256_set1_ps(0), c1 = _mm256_set1_ps(1), c2 = _mm256_set1_ps(2),
	       c3 = _mm256_set1_ps(3), c4 = _mm256_set1_ps(4), c5 = _mm256_set1_ps(5),
	       c6 = _mm256_set1_ps(6), c7 = _mm256_set1_ps(7), c8 = _mm256_set1_ps(8),
	       c9 = _mm256_set1_ps(9), c10 = _mm256_set1_ps(10), c11 = _mm256_set1_ps(11);
	float o[8];

	for (long it = 0; it < iters; it++) {
		FMA12(__m256, _mm256_fmadd_ps, c, a, b);
		__asm__ volatile("" : "+x"(a));
	}
	c0 = _mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3));
	c4 = _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7));
	c8 = _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11));
	_mm256_storeu_ps(o, _mm256_add_ps(_mm256_add_ps(c0, c4), c8));
	return o[0] + o[1] + o[2] + o[3] + o[4] + o[5] + o[6] + o[7];
}

struct fma_kernel {
	int lanes;	/* FMAs per instruction */
	double (*run)(long iters, int seed);
};

/* Best FMA/s over PEAK_REPS, nt threads at once. */
static double fma_rate(const struct fma_kernel *k, int nt, double *sink)
{
	double best = 0;

	for (int rep = 0; rep < PEAK_REPS; rep++) {
		double t0, t, s = 0;

		t0 = omp_get_wtime();
#pragma omp parallel num_threads(nt) reduction(+ : s)
		s += k->run(PEAK_ITERS, omp_get_thread_num() + rep);
		t = omp_get_wtime() - t0;
		*sink += s;
		if (t > 0 && (double)nt * PEAK_ITERS * PEAK_ACC * k->lanes / t > best)
			best = (double)nt * PEAK_ITERS * PEAK_ACC * k->lanes / t;
	}
	return best;
}

/* Best MAC/s over PEAK_REPS, all nt threads running the loop at once. */
static double int8_rate(const struct int8_kernel *k, int nt, int64_t *sink)
{
	double best = 0;

	for (int rep = 0; rep < PEAK_REPS; rep++) {
		double t0, t;
		int64_t s = 0;

		t0 = omp_get_wtime();
#pragma omp parallel num_threads(nt) reduction(+ : s)
		s += k->run(PEAK_ITERS, omp_get_thread_num() + rep);
		t = omp_get_wtime() - t0;
		*sink += s;
		if (t > 0) {
			double r = (double)nt * PEAK_ITERS * PEAK_ACC * k->macs_per_instr / t;

			if (r > best)
				best = r;
		}
	}
	return best;
}

__attribute__((target("avx2")))
static uint64_t sum_range(const uint64_t *p, size_t n)
{
	__m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
	size_t i = 0;
	uint64_t out[4], r = 0;

	for (; i + 16 <= n; i += 16) {
		s0 = _mm256_add_epi64(s0, _mm256_loadu_si256((const __m256i *)(p + i)));
		s1 = _mm256_add_epi64(s1, _mm256_loadu_si256((const __m256i *)(p + i + 4)));
		s2 = _mm256_add_epi64(s2, _mm256_loadu_si256((const __m256i *)(p + i + 8)));
		s3 = _mm256_add_epi64(s3, _mm256_loadu_si256((const __m256i *)(p + i + 12)));
	}
	s0 = _mm256_add_epi64(_mm256_add_epi64(s0, s1), _mm256_add_epi64(s2, s3));
	_mm256_storeu_si256((__m256i *)out, s0);
	for (; i < n; i++)
		r += p[i];
	return r + out[0] + out[1] + out[2] + out[3];
}

/* Best read bytes/s over PEAK_REPS passes of nt threads over buf. */
static double read_rate(const uint64_t *buf, size_t n, int nt, uint64_t *sink)
{
	double best = 0;

	for (int rep = 0; rep < PEAK_REPS; rep++) {
		double t0, t;
		uint64_t s = 0;

		t0 = omp_get_wtime();
#pragma omp parallel num_threads(nt) reduction(+ : s)
		{
			int id = omp_get_thread_num(), k = omp_get_num_threads();
			size_t lo = n * id / k, hi = n * (id + 1) / k;

			s += sum_range(buf + lo, hi - lo);
		}
		t = omp_get_wtime() - t0;
		*sink += s;
		if (t > 0 && n * 8.0 / t > best)
			best = n * 8.0 / t;
	}
	return best;
}

/* Best ns per generated value per thread, nt threads each making its own
 * GEN_ROWS_PER_THREAD rows of 256 normal values. */
static double gen_rate(int nt, float *sink)
{
	double best = 0;

	for (int rep = 0; rep < PEAK_REPS; rep++) {
		double t0, t;
		float s = 0;

		t0 = omp_get_wtime();
#pragma omp parallel num_threads(nt) reduction(+ : s)
		{
			float x[256], mult[256];
			uint64_t id = (uint64_t)omp_get_thread_num();

			for (int d = 0; d < 256; d++)
				mult[d] = 1.0f;
			for (int r = 0; r < GEN_ROWS_PER_THREAD; r++) {
				gen_row(gen_row_key(1, GEN_K, id, (uint64_t)r, 0), GEN_DIST_NORMAL,
					0.0f, 1.0f, mult, 256, x);
				s += x[r & 255];
			}
		}
		t = (omp_get_wtime() - t0) * 1e9 / (GEN_ROWS_PER_THREAD * 256.0);
		*sink += s;
		if (rep == 0 || t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	static const struct int8_kernel vnni = { "avx512-vnni vpdpbusd", 64, run_vnni };
	static const struct int8_kernel avx2 = { "avx2 vpmaddubsw (no VNNI)", 32, run_avx2 };
	const struct int8_kernel *k;
	int max_threads = argc > 1 ? atoi(argv[1]) : 2;
	int ts[256], nt = 0;	/* the thread counts measured */
	size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 1024, n;
	uint64_t *buf, sink = 0;
	int64_t isink = 0;
	float fsink = 0;

	if (max_threads < 1 || max_threads > 256 || mib < 64) {
		fputs("usage: peak [max_threads [buffer_mib >= 64 [counts,...]]]\n", stderr);
		return 2;
	}
	/* Every count 1..max_threads, or only those listed (the bench's). */
	if (argc > 3) {
		for (char *p = argv[3]; *p && nt < 256;) {
			long t = strtol(p, &p, 10);

			if (t < 1 || t > max_threads || (*p && *p != ',')) {
				fputs("peak: error: counts: 1..max_threads, comma separated\n",
				      stderr);
				return 2;
			}
			ts[nt++] = (int)t;
			if (*p)
				p++;
		}
	} else {
		for (int t = 1; t <= max_threads; t++)
			ts[nt++] = t;
	}
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx2")) {
		fputs("peak: error: needs at least AVX2\n", stderr);
		return 3;
	}
	k = __builtin_cpu_supports("avx512vnni") && !getenv("PEAK_NO_VNNI") ? &vnni : &avx2;
	n = mib * 1024 * 1024 / sizeof(*buf);
	buf = malloc(n * sizeof(*buf));
	if (!buf) {
		fprintf(stderr, "peak: error: cannot allocate %zu MiB\n", mib);
		return 3;
	}
	/* Touch every page in parallel, so first-touch faults are not timed
	 * and pages land near the threads that read them. */
#pragma omp parallel for num_threads(max_threads) schedule(static)
	for (size_t i = 0; i < n; i++)
		buf[i] = i;

	printf("{\"int8_isa\": \"%s\", \"int8_macs_per_instr\": %d, \"int8_gmacs\": {",
	       k->name, k->macs_per_instr);
	for (int i = 0; i < nt; i++)
		printf("%s\"%d\": %.1f", i ? ", " : "", ts[i], int8_rate(k, ts[i], &isink) / 1e9);
	{
		int wide = __builtin_cpu_supports("avx512f");
		struct fma_kernel pd = { wide ? 8 : 4, wide ? fma_pd512 : fma_pd256 };
		struct fma_kernel ps = { wide ? 16 : 8, wide ? fma_ps512 : fma_ps256 };
		double dsink = 0;

		if (!wide && !__builtin_cpu_supports("fma")) {
			fputs("peak: error: needs FMA for the FMA ceilings\n", stderr);
			return 3;
		}
		printf("}, \"fma_isa\": \"%s\", \"f64_gfma\": {",
		       wide ? "avx512f vfmadd zmm" : "avx2+fma vfmadd ymm");
		for (int i = 0; i < nt; i++)
			printf("%s\"%d\": %.1f", i ? ", " : "", ts[i],
			       fma_rate(&pd, ts[i], &dsink) / 1e9);
		printf("}, \"f32_gfma\": {");
		for (int i = 0; i < nt; i++)
			printf("%s\"%d\": %.1f", i ? ", " : "", ts[i],
			       fma_rate(&ps, ts[i], &dsink) / 1e9);
		isink ^= (int64_t)(dsink != 0);
	}
	printf("}, \"read_gbs\": {");
	for (int i = 0; i < nt; i++)
		printf("%s\"%d\": %.2f", i ? ", " : "", ts[i], read_rate(buf, n, ts[i], &sink) / 1e9);
	printf("}, \"gen_ns\": {");
	for (int i = 0; i < nt; i++)
		printf("%s\"%d\": %.3f", i ? ", " : "", ts[i], gen_rate(ts[i], &fsink));
	/* The sinks keep the loops alive; printing them is the cheapest use. */
	printf("}, \"read_buffer_mib\": %zu, \"sink\": %llu}\n", mib,
	       (unsigned long long)(sink ^ (uint64_t)isink ^ (uint64_t)(fsink != 0)));
	free(buf);
	if (fflush(stdout) || ferror(stdout))
		return 3;
	return 0;
}
