/*
 * test_pv_fast.c - the fast executor of INT8 PV (sim/attn/pv_fast.c and
 * its kernels pvq, pvo, vquad in sim/attn/tile_*.c) against the scalar
 * per-lane executor (sim/attn/pv_int8.c), which is the spec:
 *   - pvq, pvo and vquad of every table this CPU runs agree with plain
 *     loops written here (int8 extremes, negative P, zero rows);
 *   - every shipped case with `pv: {mode: int8}` (found by a walk of
 *     cases/, so a new one is tested without an edit here), rewritten
 *     with `golden: all`, and generated shapes (split-K inside a group,
 *     split over the threads by segment and by unit,
 *     per-head K scales, head_dim 80, packed and replicated decode rows, two
 *     row tiles, several sequences, sm80 and CDNA3, v_permuted, blocks
 *     of 8 and 64, V per channel), give byte-identical goldens (acc,
 *     scores, out, split-K states, p_int8, p_scale, pv_acc, pv_tiles) on
 *     --exec scalar at 1 thread and on every fast table at 1 and 2;
 *   - a case that plants a bug runs on the scalar executor.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "../sim/attn/tile_fast.h"
#include "testutil.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint32_t rnd32(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

static int8_t rnd8(void)
{
	uint32_t r = rnd32();

	/* an eighth of the bytes at the extremes, where a sign trick breaks */
	return r % 8 == 0 ? (r & 8 ? -128 : 127) : (int8_t)(r >> 8);
}

static void kernels_match_plain_loops(void **state)
{
	enum { R = 16, K = 64, D = 256, LD = 16 };
	static int8_t a[R * K], b4[K * D], v[D * LD * 4], vq[K * D];
	static int32_t c[R * D], want[R * D];
	float o[R][D], og[R][D], alpha[R], sp[R], *orow[R];

	(void)state;
	for (int isa = TILE_PORTABLE; isa <= TILE_AVX512; isa++) {
		const struct tile_ops *ops = tile_ops_of((enum tile_isa)isa);

		if (!ops)
			continue;
		for (int iter = 0; iter < 40; iter++) {
			int k = 4 * (1 + (int)(rnd32() % (K / 4))), rows = 1 + (int)(rnd32() % R);
			int d = 16 * (1 + (int)(rnd32() % (D / 16))), nq = 1 + (int)(rnd32() % 16);
			uint16_t act = (uint16_t)rnd32();

			/* P >= 0 (the kernels' fast case) in a third of the
			 * runs, one negative byte in another third */
			for (int i = 0; i < R * K; i++)
				a[i] = iter % 5 == 0 && i / k == 1 ? 0 : rnd8();
			for (int i = 0; iter % 3 && i < R * K; i++)
				a[i] = (int8_t)(a[i] & 0x7f);
			if (iter % 3 == 2)
				a[rnd32() % (uint32_t)(rows * k)] = -1;
			for (int i = 0; i < K * D; i++)
				b4[i] = rnd8();
			ops->pvq(rows, k, d, a, b4, c);
			for (int r = 0; r < rows; r++)
				for (int x = 0; x < d; x++) {
					int32_t s = 0;

					for (int j = 0; j < k; j++)
						s += (int32_t)a[r * k + j] *
						     b4[((size_t)(j / 4) * d + x) * 4 + j % 4];
					want[r * d + x] = s;
				}
			if (memcmp(c, want, (size_t)rows * d * sizeof(int32_t)))
				fail_msg("%s: pvq R %d K %d D %d differs from the plain sum",
					 ops->name, rows, k, d);
			for (int r = 0; r < R; r++) {
				alpha[r] = (float)(rnd32() % 1000) / 1024.0f;
				sp[r] = (float)(rnd32() % 1000 + 1) / 65536.0f;
				orow[r] = o[r];
				for (int x = 0; x < D; x++)
					o[r][x] = og[r][x] = (float)((int)(rnd32() % 2001) - 1000) / 7.0f;
			}
			ops->pvo(rows, d, orow, act, alpha, sp, c);
			for (int r = 0; r < rows; r++)
				for (int x = 0; x < d && (act >> r & 1); x++) {
					float w = fmaf((float)c[r * d + x], sp[r], og[r][x] * alpha[r]);

					if (tu_f32_bits(w) != tu_f32_bits(o[r][x]))
						fail_msg("%s: pvo row %d d %d: %a, want %a", ops->name,
							 r, x, (double)o[r][x], (double)w);
				}
			for (int r = 0; r < rows; r++)
				if (!(act >> r & 1))
					assert_memory_equal(o[r], og[r], (size_t)d * sizeof(float));
			for (size_t i = 0; i < sizeof(v); i++)
				v[i] = rnd8();
			ops->vquad(v, LD * 4, d, nq, vq);
			for (int q = 0; q < nq; q++)
				for (int x = 0; x < d; x++)
					for (int i = 0; i < 4; i++)
						if (vq[((size_t)q * d + x) * 4 + i] !=
						    v[(size_t)x * LD * 4 + 4 * q + i])
							fail_msg("%s: vquad nq %d quad %d d %d byte %d",
								 ops->name, nq, q, x, i);
			/* a block's 16 keys, rows LD apart: the cases' layout
			 * (all four quads in half the runs: vquad's fast case) */
			nq = iter % 2 ? LD / 4 : 1 + (int)(rnd32() % (LD / 4));
			ops->vquad(v, LD, d, nq, vq);
			for (int q = 0; q < nq; q++)
				for (int x = 0; x < d; x++)
					for (int i = 0; i < 4; i++)
						if (vq[((size_t)q * d + x) * 4 + i] !=
						    v[(size_t)x * LD + 4 * q + i])
							fail_msg("%s: vquad ld %d nq %d quad %d d %d byte %d",
								 ops->name, LD, nq, q, x, i);
		}
	}
}

/* A score: mostly finite, some -inf (masked), a few NaN, +-0 and ties. */
static float rnd_score(void)
{
	uint32_t r = rnd32() % 64;

	if (r < 12)
		return -INFINITY;
	if (r == 12)
		return NAN;
	if (r == 13)
		return rnd32() & 1 ? 0.0f : -0.0f;
	if (r < 18)
		return 1.5f;
	return (float)((int)(rnd32() % 4001) - 2000) / 64.0f;
}

/*
 * gmax, gsum and gscale of every table against plain loops: each row's
 * scalar sequence (pv_fast.c's per-row steps), bit for bit, on random
 * slot orders, lane starts, masks and rows.
 */
static void group_kernels_match_plain_loops(void **state)
{
	enum { M = 16, GT = 2, GK = GT * TILE_KEYS };
	static float ws[GT * M * TILE_KEYS], ex[M * GK], p[M * GK], pw[M * GK], sv[GK];
	float mx[M], mw[M], sum[M], sw[M];

	(void)state;
	for (int iter = 0; iter < 200; iter++) {
		struct tile_order ord;
		int R = 1 + (int)(rnd32() % M);
		uint16_t act = (uint16_t)rnd32();

		for (int i = 0; i < TILE_KEYS; i++)
			ord.col[i] = (uint8_t)i;
		for (int i = TILE_KEYS - 1; i > 0; i--) {
			int j = (int)(rnd32() % (uint32_t)(i + 1));
			uint8_t t = ord.col[i];

			ord.col[i] = ord.col[j], ord.col[j] = t;
		}
		ord.brk = (uint16_t)(rnd32() | 1u);
		for (size_t i = 0; i < GT * M * TILE_KEYS; i++)
			ws[i] = rnd_score();
		/* a row whose largest score is a zero of either sign */
		for (int j = 0; iter % 3 == 1 && j < GK; j++)
			ws[((j / TILE_KEYS) * M + iter / 3 % M) * TILE_KEYS + j % TILE_KEYS] =
				rnd32() % 3 ? (rnd32() & 1 ? 0.0f : -0.0f) : -(float)(rnd32() % 9);
		for (int i = 0; i < M * GK; i++)
			ex[i] = (float)(rnd32() % 100000) / 65536.0f;
		/* a row of zero exps of both signs: P' all zero, whose max's
		 * sign only the key order decides */
		for (int j = 0; iter % 3 == 0 && j < GK; j++)
			ex[(iter / 3 % M) * GK + j] = rnd32() & 1 ? 0.0f : -0.0f;
		for (int j = 0; j < GK; j++)
			sv[j] = j == 5 && iter % 7 == 0 ? NAN : (float)(rnd32() % 1000 + 1) / 4096.0f;
		if (iter % 4 == 1)
			sv[9] = -sv[9];
		for (int isa = TILE_PORTABLE; isa <= TILE_AVX512; isa++) {
			const struct tile_ops *ops = tile_ops_of((enum tile_isa)isa);

			if (!ops)
				continue;
			/* gmax: v > mx in tile then slot order */
			for (int r = 0; r < M; r++)
				mx[r] = mw[r] = r % 3 ? -INFINITY : 0.25f;
			ops->gmax(R, GT, M, &ord, act, ws, mx);
			for (int r = 0; r < R; r++)
				for (int t = 0; act >> r & 1 && t < GT; t++)
					for (int i = 0; i < TILE_KEYS; i++) {
						float v = ws[(t * M + r) * TILE_KEYS + ord.col[i]];

						if (v > mw[r])
							mw[r] = v;
					}
			assert_memory_equal(mx, mw, sizeof(mx));
			/* gsum: P and each lane's part in slot order */
			memset(p, 0, sizeof(p));
			memset(pw, 0, sizeof(pw));
			for (int r = 0; r < M; r++)
				sum[r] = sw[r] = 0.0f;
			ops->gsum(R, GT, M, &ord, act, ws, ex, p, sum);
			for (int r = 0; r < R; r++)
				for (int t = 0; act >> r & 1 && t < GT; t++) {
					float part = 0.0f;

					for (int i = 0; i < TILE_KEYS; i++) {
						int n = ord.col[i], j = t * TILE_KEYS + n;

						if (ord.brk >> i & 1) {
							sw[r] += part;
							part = 0.0f;
						}
						pw[r * GK + j] = ws[(t * M + r) * TILE_KEYS + n] == -INFINITY ?
								 0.0f : ex[r * GK + j];
						part += pw[r * GK + j];
					}
					sw[r] += part;
				}
			assert_memory_equal(p, pw, sizeof(p));
			assert_memory_equal(sum, sw, sizeof(sum));
			/* gscale: P' in key order, the first largest (NaN taken) */
			for (int r = 0; r < M; r++)
				mx[r] = mw[r] = r % 4 == 0 ? -1.0f : r % 4 == 3 ? NAN : 0.0f;
			ops->gscale(R, GT, M, act, ws, sv, p, mx);
			for (int r = 0; r < R; r++)
				for (int j = 0; act >> r & 1 && j < GK; j++) {
					if (ws[((j / TILE_KEYS) * M + r) * TILE_KEYS + j % TILE_KEYS] ==
					    -INFINITY) {
						pw[r * GK + j] = 0.0f;
						continue;
					}
					pw[r * GK + j] *= sv[j];
					if (!(pw[r * GK + j] <= mw[r]))
						mw[r] = pw[r * GK + j];
				}
			assert_memory_equal(p, pw, sizeof(p));
			assert_memory_equal(mx, mw, sizeof(mx));
		}
	}
}

/* Exit status and the executor of a run of case c (its JSON's "exec"). */
static void run_exec(const char *c, const char *opts, char *exec, size_t n)
{
	struct run_result r = tu_run("run %s --emulate-only --json %s", c, opts);
	const char *e;

	if (r.status)
		fail_msg("%s %s: exit %d: %s", c, opts, r.status, r.err);
	e = strstr(r.out, "\"exec\": \"");
	assert_non_null(e);
	e += strlen("\"exec\": \"");
	snprintf(exec, n, "%.*s", (int)strcspn(e, "\""), e);
	tu_free(&r);
}

/*
 * Every .npy of a checked run (golden: all) on --exec scalar, 1 thread,
 * equals that of each fast table at 1 and 2 threads; the fast path must
 * serve the case (fast != 0) or must not (fast == 0).
 */
static void same_goldens(const char *c, int fast)
{
	static const char *const execs[] = { "auto", "portable", "avx2", "avx512" };
	char s[64], x[64], cmd[512], exec[32];
	struct run_result a;

	run_exec(c, "", exec, sizeof(exec));
	if (fast ? !strcmp(exec, "scalar") : !!strcmp(exec, "scalar"))
		fail_msg("%s: runs on %s, expected %s", c, exec, fast ? "a fast table" : "scalar");
	if (!fast)
		return;
	snprintf(s, sizeof(s), "/tmp/fragsim-pvfast-s.%d", (int)getpid());
	snprintf(x, sizeof(x), "/tmp/fragsim-pvfast-x.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", s, x);
	system(cmd);
	a = tu_run("run %s --exec scalar --threads 1 --out %s", c, s);
	if (a.status)
		fail_msg("%s --exec scalar: exit %d: %s", c, a.status, a.err);
	tu_free(&a);
	/* the INT8 PV goldens are there to compare */
	snprintf(cmd, sizeof(cmd), "test -f %s/pv_acc.npy && test -f %s/p_int8.npy && "
		 "test -f %s/pv_tiles.npy && test -f %s/p_scale.npy", s, s, s, s);
	assert_int_equal(system(cmd), 0);
	for (int i = 0; i < 4; i++) {
		if ((!strcmp(execs[i], "avx2") && !tile_ops_of(TILE_AVX2)) ||
		    (!strcmp(execs[i], "avx512") && !tile_ops_of(TILE_AVX512)))
			continue;
		for (int t = 1; t <= 2; t++) {
			snprintf(cmd, sizeof(cmd), "rm -rf %s", x);
			system(cmd);
			a = tu_run("run %s --exec %s --threads %d --out %s", c, execs[i], t, x);
			if (a.status)
				fail_msg("%s --exec %s --threads %d: exit %d: %s", c, execs[i], t,
					 a.status, a.err);
			tu_free(&a);
			snprintf(cmd, sizeof(cmd),
				 "cd %s && for f in *.npy; do cmp -s $f %s/$f || { echo $f; exit 1; }; done",
				 s, x);
			if (system(cmd))
				fail_msg("%s: --exec %s --threads %d differs from --exec scalar",
					 c, execs[i], t);
		}
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", s, x);
	system(cmd);
}

/* Case text t with its golden: line replaced by golden: all, in a temp file. */
static char *with_all_goldens(const char *t)
{
	size_t n = strlen(t);
	char *out = malloc(n + 32), *path;
	const char *p = t;
	size_t o = 0;

	while (*p) {
		size_t len = strcspn(p, "\n");

		if (strncmp(p, "golden:", 7)) {
			memcpy(&out[o], p, len);
			o += len;
			out[o++] = '\n';
		}
		p += len + (p[len] == '\n');
	}
	memcpy(&out[o], "golden: all\n", 13);
	path = tu_write_temp(".yaml", out);
	free(out);
	return path;
}

static int shipped_walk(const char *dir, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int bad = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[1024];
		struct stat sb;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &sb))
			continue;
		if (S_ISDIR(sb.st_mode)) {
			bad += shipped_walk(path, n);
		} else if (strlen(e->d_name) > 5 &&
			   !strcmp(e->d_name + strlen(e->d_name) - 5, ".yaml")) {
			char *t = tu_slurp(path), *tmp;

			if (!t || !strstr(t, "mode: int8")) {
				free(t);
				continue;
			}
			(*n)++;
			if (strstr(t, "expect: mismatch")) {
				/* a planted bug: the scalar executor */
				same_goldens(path, 0);
			} else {
				tmp = with_all_goldens(t);
				same_goldens(tmp, 1);
				unlink(tmp);
				free(tmp);
			}
			free(t);
		}
	}
	closedir(d);
	return bad;
}

static void shipped_cases(void **state)
{
	int n = 0;

	(void)state;
	shipped_walk("cases", &n);
	/* cases/edge 3, cases/mutations 5, cases/qwen35-27b 4 when written */
	assert_true(n >= 12);
}

static void generated_shapes(void **state)
{
	/* (the INT8 path refuses sliding windows, soft caps and ALiBi) */
	static const char *const shapes[] = {
		/* split-K segments of 40: a group of 32 keys crosses each end;
		 * two sequences */
		"mode: decode\nmodel: {q_heads: 12, kv_heads: 2, head_dim: 128}\n"
		"sequences:\n  - {context: 300}\n  - {context: 77}\nsplit_k: {segment: 40}\n"
		"pv: {mode: int8}\n",
		/* split-K with 16 units: the units over the threads (run_units),
		 * not their segments (pv_split) */
		"mode: decode\nmodel: {q_heads: 32, kv_heads: 8, head_dim: 64}\n"
		"sequences:\n  - {context: 130}\n  - {context: 200}\nsplit_k: {segment: 64}\n"
		"pv: {mode: int8}\n",
		/* decode rows packed: the rows past the group are zero */
		"mode: decode\nmodel: {q_heads: 12, kv_heads: 2, head_dim: 64}\n"
		"sequences:\n  - {context: 150}\nkernel: {decode_rows: packed}\npv: {mode: int8}\n",
		/* a group of 24 heads over two row tiles: no replica copies */
		"mode: decode\nmodel: {q_heads: 24, kv_heads: 1, head_dim: 64}\n"
		"sequences:\n  - {context: 70, tokens: 2}\npv: {mode: int8}\n",
		/* per-head K scales, two decode tokens */
		"mode: decode\nmodel: {q_heads: 8, kv_heads: 1, head_dim: 96}\n"
		"cache: {k_scale: per_head}\nsequences:\n  - {context: 100, tokens: 2}\n"
		"pv: {mode: int8}\n",
		/* head_dim 80: a padded last K-step */
		"mode: prefill\nmodel: {q_heads: 2, kv_heads: 1, head_dim: 80}\n"
		"sequences:\n  - {history: 40, chunk: 20}\npv: {mode: int8}\n",
		/* sm80: N = 8, four QK tiles a group */
		"isa: sm80-mma-m16n8k32-s8\nmode: prefill\nmodel: {q_heads: 4, kv_heads: 4, head_dim: 64}\n"
		"sequences:\n  - {history: 20, chunk: 33}\npv: {mode: int8}\n",
		/* CDNA3, G = M = 16 */
		"isa: cdna3-mfma-i32-16x16x32-i8\nmode: decode\nmodel: {q_heads: 32, kv_heads: 2, head_dim: 128}\n"
		"sequences:\n  - {context: 129}\npv: {mode: int8}\n",
		/* gfx936 v_permuted prefill, blocks of 8: a group spans 4 */
		"mode: prefill\nmodel: {q_heads: 2, kv_heads: 1, head_dim: 64}\n"
		"cache: {block_size: 8}\nsequences:\n  - {history: 9, chunk: 30}\n"
		"pv: {mode: int8, regroup: v_permuted}\n",
		/* blocks of 64, contiguous: a group inside one block */
		"mode: prefill\nmodel: {q_heads: 4, kv_heads: 2, head_dim: 128}\n"
		"cache: {block_size: 64, placement: contiguous}\nsequences:\n  - {history: 100, chunk: 17}\n"
		"pv: {mode: int8}\n",
		/* V per channel (P over 1/clip, sV in the epilogue), split-K
		 * decode and a v_permuted prefill over blocks of 8 */
		"mode: decode\nmodel: {q_heads: 12, kv_heads: 2, head_dim: 128}\n"
		"cache: {v_scale: per_channel}\nsequences:\n  - {context: 300}\n"
		"split_k: {segment: 40}\npv: {mode: int8}\n",
		"mode: prefill\nmodel: {q_heads: 2, kv_heads: 1, head_dim: 64}\n"
		"cache: {block_size: 8, v_scale: per_channel}\nsequences:\n  - {history: 9, chunk: 30}\n"
		"pv: {mode: int8, regroup: v_permuted}\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		char text[1024], *path;

		snprintf(text, sizeof(text), "fragsim: 1\nname: pv-fast-%zu\n%s"
			 "data: {seed: %zu}\ngolden: all\n", i, shapes[i], 11 + i);
		path = tu_write_temp(".yaml", text);
		same_goldens(path, 1);
		unlink(path);
		free(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kernels_match_plain_loops),
		cmocka_unit_test(group_kernels_match_plain_loops),
		cmocka_unit_test(shipped_cases),
		cmocka_unit_test(generated_shapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
