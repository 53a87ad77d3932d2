/*
 * test_pv_int8.c - the second product in INT8 (sim/attn/pv_int8.c,
 * ref/pv_int8.c). Expected values are worked by hand from the inputs
 * (never from the emulation), or the reference's:
 *
 *   - one lane's A bytes on gfx936 under both regroups, from a case
 *     whose P is uniform (K all zero, so every score is 0) and whose
 *     context (20 keys) masks keys 20..31 of the only group: a byte is
 *     127 where its key is visible and 0 where not, so the bytes show
 *     which keys a lane holds;
 *   - pv_acc of that case by hand: 127 * sum over visible keys of the
 *     INT8 V byte, read through the block table here;
 *   - pv_acc exact and p_int8 within one step of ref/pv_int8.c on the
 *     profiles, both regroups giving the same pv_acc and out bytes;
 *   - the refusals: v_permuted where a lane's C registers hold a column
 *     (CDNA3, RDNA3), int8 PV with float V;
 *   - a dump of p_int8, p_scale, pv_acc and pv_tiles written through
 *     tools/device/fragsim_dump.h, read back by `fragsim diff`;
 *   - V scaled per channel (cache.v_scale: per_channel): p_int8,
 *     p_scale, pv_acc and out of a four-value case worked by hand (the
 *     fixed P scale 1/127, the running max of an earlier group, sV per
 *     output column after the product, a zero channel), the f32 PV of
 *     the same case from both executors, the reference agreeing; the
 *     static calibration over every sequence, and the key refused with
 *     every other V type;
 *   - `fragsim diff` naming each INT8 PV class (p_regroup none,
 *     pv_rescale missing, pv_group_max per_tile, v_scale_apply
 *     after_product, p_scale_index per_tile) from an out.npy written by
 *     pv_model below, a plain-loop model of the INT8 PV kernel
 *     (bugmodel.h's cache readers, no sim/ code).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../lib/npy.h"
#include "../tools/device/fragsim_dump.h"
#include "../lib/runcase.h"
#include "../sim/attn/quant.h"
#include "bugmodel.h"
#include "testutil.h"

#define UNIFORM_CASE \
	"fragsim: 1\nname: pv-uniform\nisa: %s\n" \
	"model: {q_heads: 2, kv_heads: 1, head_dim: 32}\n" \
	"sequences:\n  - {context: 20}\n" \
	"pv: {mode: int8, regroup: %s}\n" \
	"data: {seed: 5, k: {zero_rows: 1.0}, v: {dist: sign}}\n"

static void run_text_err(const char *text, struct runcase *r, enum fs_rc want_exec,
			 struct fs_err *err)
{
	char *path = tu_write_temp(".yaml", text);

	assert_int_equal(runcase_load(path, r, err), FS_OK);
	assert_int_equal(runcase_exec(r, err), want_exec);
	free(path);
}

static void run_text(const char *text, struct runcase *r, enum fs_rc want_exec)
{
	struct fs_err err;

	run_text_err(text, r, want_exec, &err);
}

static void run_uniform(const char *isa, const char *regroup, struct runcase *r)
{
	char text[1024];

	snprintf(text, sizeof(text), UNIFORM_CASE, isa, regroup);
	run_text(text, r, FS_OK);
	assert_int_equal(runcase_status(r), FS_OK);
}

/*
 * gfx936, lane 17: C row 1, columns 1 + {0,4,8,12}. Under v_permuted its
 * A bytes are P[1] at keys 1 5 9 13 (tile 0) then 17 21 25 29 (tile 1):
 * visible through 19, so 127 x 5 then 0 x 3. Under lds the lane takes
 * A[1][8..15]: keys 8..15, all visible. Lane 33 (row 1, c0 2): keys 2 6
 * 10 14 18 22 26 30 (v_permuted: 127 x 5, 0 x 3); lds keys 16..23 (127 x
 * 4, 0 x 4).
 */
static void one_lane_regroup_by_hand(void **state)
{
	static const int8_t perm17[8] = { 127, 127, 127, 127, 127, 0, 0, 0 };
	static const int8_t lds17[8] = { 127, 127, 127, 127, 127, 127, 127, 127 };
	static const int8_t perm33[8] = { 127, 127, 127, 127, 127, 0, 0, 0 };
	static const int8_t lds33[8] = { 127, 127, 127, 127, 0, 0, 0, 0 };
	struct runcase a, b;

	(void)state;
	run_uniform("gfx936", "lds", &a);
	run_uniform("gfx936", "v_permuted", &b);
	assert_int_equal(a.sim.n_groups, 1);
	assert_int_equal(a.sim.pv_ea, 8);
	assert_memory_equal(&a.sim.p_int8[17 * 8], lds17, 8);
	assert_memory_equal(&b.sim.p_int8[17 * 8], perm17, 8);
	assert_memory_equal(&a.sim.p_int8[33 * 8], lds33, 8);
	assert_memory_equal(&b.sim.p_int8[33 * 8], perm33, 8);
	/* P = e^0 = 1, V = +-1 so sV = 1/127: sP = max P sV / 127 */
	for (int m = 0; m < 16; m++)
		assert_true(a.sim.p_scale[m] == (1.0f / 127.0f) / 127.0f);
	runcase_free(&a);
	runcase_free(&b);
}

/*
 * pv_acc of the uniform case: every row's Pq is 127 on keys 0..19, so
 * C[row][d] = 127 * sum_{j < 20} V[j][d], V's bytes read here through
 * the block table (v_cache [NB][Hkv][D][BS]). gfx936's C slot (L, e) is
 * row L % 16, column L / 16 + 4e of column tile dt.
 */
static void pv_acc_by_hand(void **state)
{
	struct runcase r;

	(void)state;
	run_uniform("gfx936", "v_permuted", &r);
	assert_int_equal(r.sim.pv_dt, 2);
	for (int dt = 0; dt < 2; dt++)
		for (int L = 0; L < 64; L++)
			for (int e = 0; e < 4; e++) {
				int d = dt * 16 + L / 16 + 4 * e;
				int32_t want = 0;

				for (int j = 0; j < 20; j++) {
					int blk = r.in.block_table[j / 16];

					want += 127 * r.in.v_cache_i8[((size_t)blk * 32 + d) * 16 + j % 16];
				}
				assert_int_equal(r.sim.pv_acc[(dt * 64 + L) * 4 + e], want);
			}
	runcase_free(&r);
}

/* The shipped INT8 PV cases: pv_acc exact, p_int8 within a step. */
static void shipped_cases_match_reference(void **state)
{
	static const char *const cases[] = {
		"cases/qwen35-27b/decode-pv-int8-v-permuted.yaml",
		"cases/qwen35-27b/prefill-pv-int8-v-permuted.yaml",
		"cases/edge/cdna3-pv-int8-decode.yaml",
		"cases/edge/sm80-pv-int8-decode.yaml",
		"cases/edge/sm80-pv-int8-prefill.yaml",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[1024];
		struct runcase r;
		struct fs_err err;
		const struct compare_stat *pa, *pq;

		snprintf(path, sizeof(path), "%s/%s", FRAGSIM_SRC, cases[i]);
		assert_int_equal(runcase_load(path, &r, &err), FS_OK);
		assert_int_equal(runcase_exec(&r, &err), FS_OK);
		pa = &r.cmp.stat[CMP_PV_ACC];
		pq = &r.cmp.stat[CMP_P_INT8];
		assert_true(pa->ran && pq->ran);
		assert_true(pa->compared > 0 && pq->compared > 0);
		assert_int_equal(pa->mismatches, 0);
		assert_int_equal(pq->mismatches, 0);
		assert_int_equal(r.cmp.stat[CMP_OUT].mismatches, 0);
		assert_int_equal(runcase_status(&r), FS_OK);
		runcase_free(&r);
	}
}

/* lds and v_permuted: the same pv_acc and out bytes, other p_int8. */
static void regroups_agree(void **state)
{
	static const char *const isas[] = { "gfx936", "sm80-mma-m16n8k32-s8" };
	const char *body =
		"fragsim: 1\nname: pv-both\nisa: %s\nmode: %s\n"
		"sequences:\n  - {%s}\nsplit_k: {segment: %d}\n"
		"pv: {mode: int8, regroup: %s}\ndata: {seed: 9}\n";

	(void)state;
	for (int i = 0; i < 2; i++)
		for (int pre = 0; pre < 2; pre++) {
			char ta[512], tb[512];
			const char *mode = pre ? "prefill" : "decode";
			const char *seq = pre ? "history: 50, chunk: 30" : "context: 333";
			struct runcase a, b;
			size_t rows, pn;

			snprintf(ta, sizeof(ta), body, isas[i], mode, seq, pre ? 0 : 128, "lds");
			snprintf(tb, sizeof(tb), body, isas[i], mode, seq, pre ? 0 : 128, "v_permuted");
			run_text(ta, &a, FS_OK);
			run_text(tb, &b, FS_OK);
			assert_int_equal(runcase_status(&a), FS_OK);
			assert_int_equal(runcase_status(&b), FS_OK);
			assert_int_equal(a.sim.n_groups, b.sim.n_groups);
			pn = a.sim.n_groups * a.sim.pv_dt * a.sim.wave * a.sim.ec;
			assert_memory_equal(a.sim.pv_acc, b.sim.pv_acc, pn * sizeof(int32_t));
			rows = (size_t)a.sim.S * a.sim.T * a.sim.Hq * a.sim.D;
			assert_memory_equal(a.sim.out, b.sim.out, rows * sizeof(float));
			assert_memory_not_equal(a.sim.p_int8, b.sim.p_int8,
						a.sim.n_groups * a.sim.wave * a.sim.pv_ea);
			runcase_free(&a);
			runcase_free(&b);
		}
}

/* INT8 PV changes out but not the QK half: acc and scores keep their bytes. */
static void qk_half_unchanged(void **state)
{
	const char *body = "fragsim: 1\nname: pv-qk\nsequences:\n  - {context: 200}\n"
			   "golden: all\n%s";
	char ta[256], tb[256];
	struct runcase a, b;

	(void)state;
	snprintf(ta, sizeof(ta), body, "");
	snprintf(tb, sizeof(tb), body, "pv: {mode: int8}\n");
	run_text(ta, &a, FS_OK);
	run_text(tb, &b, FS_OK);
	assert_int_equal(a.sim.n_tiles, b.sim.n_tiles);
	assert_null(a.sim.pv_acc);
	assert_non_null(b.sim.pv_acc);
	assert_memory_equal(a.sim.scores, b.sim.scores,
			    (size_t)a.sim.S * a.sim.T * a.sim.Hq * a.sim.MAXCTX * sizeof(float));
	assert_memory_not_equal(a.sim.out, b.sim.out,
				(size_t)a.sim.S * a.sim.T * a.sim.Hq * a.sim.D * sizeof(float));
	runcase_free(&a);
	runcase_free(&b);
}

static void refusals_name_the_reason(void **state)
{
	static const char *const isas[] = { "cdna3-mfma-i32-16x16x32-i8",
					    "rdna3-wmma-i32-16x16x16-iu8-w32" };
	const char *bf16 = "fragsim: 1\nname: pv-bf16\ncache: {v_dtype: bf16}\n"
			   "sequences:\n  - {context: 20}\npv: {mode: int8}\n";
	char *path = NULL;
	struct runcase r;
	struct fs_err err;

	(void)state;
	for (int i = 0; i < 2; i++) {
		char text[1024];

		/* at load: the plan needs the maps alone */
		snprintf(text, sizeof(text), UNIFORM_CASE, isas[i], "v_permuted");
		free(path);
		path = tu_write_temp(".yaml", text);
		assert_int_equal(runcase_load(path, &r, &err), FS_EINPUT);
		assert_non_null(strstr(err.msg, "pv.regroup: v_permuted"));
		assert_non_null(strstr(err.msg, "use regroup lds"));
		runcase_free(&r);
	}
	free(path);
	path = tu_write_temp(".yaml", bf16);
	assert_int_equal(runcase_load(path, &r, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "pv.mode"));
	assert_non_null(strstr(err.msg, "v_dtype is bf16"));
	runcase_free(&r);
	free(path);
}

/*
 * A plain-loop model of INT8 PV on gfx936, decode, no split-K, written
 * from docs/design.md 1.6 alone: per row, groups of 32 keys; the max
 * over the group, P = e^(s - m) in double, l = l alpha + sum P; P' = P
 * sV, sP = max P' / 127, Pq = round(P' / sP) (half away from zero); acc
 * = sum Pq V; O = O alpha + acc sP. Bugs:
 *   regroup_none  A column k holds the key lane L's C registers give it,
 *                 16 (e / 4) + c0 + 4 (e % 4) for k = 8 c0 + e, while V
 *                 is loaded for key k: P of one key times V of another
 *                 (past the context: the poisoned slot's bytes)
 *   no_rescale    O keeps its scale when the max grows
 *   group_max     pv_group_max per_tile: the P of the group's tile of 16
 *                 keys taken with the max so far (the row's, then its
 *                 tiles' in order), not the group's; l and O rescaled as
 *                 the correct kernel does, from the group's max
 *   v_after       v_scale_apply after_product: P' = P (no sV), and acc sP
 *                 times the V scale of the group's first key
 *   p_tile        p_scale_index per_tile: sP the largest P' of the tile's
 *                 rows (the q heads of one kv head), for every row
 */
struct pv_bugs {
	int regroup_none, no_rescale, group_max, v_after, p_tile;
};

static void pv_model(const struct runcase *r, const struct pv_bugs *bg, double *out)
{
	const struct fs_inputs *in = &r->in;
	int T = in->T, Hq = in->Hq, D = in->D, G = Hq / in->Hkv, BS = in->BS;
	double *m = malloc((size_t)G * sizeof(double)), *l = malloc((size_t)G * sizeof(double));
	double *P = malloc((size_t)G * 32 * sizeof(double)), *alpha = malloc((size_t)G * sizeof(double));
	double *sp = malloc((size_t)G * sizeof(double));

	assert_non_null(m && l && P && alpha && sp);
	for (int s = 0; s < in->S; s++)
		for (int g = 0; g < in->Hkv; g++) {
			int ctx = r->c.seqs[s].context, qp = in->q_pos[s * T];

			for (int i = 0; i < G; i++) {
				m[i] = -INFINITY, l[i] = 0;
				for (int d = 0; d < D; d++)
					out[((size_t)s * T * Hq + g * G + i) * D + d] = 0;
			}
			for (int kb = 0; kb < ctx; kb += 32) {
				double vs0 = bm_scale(r, in->v_scale, bm_block(r, s, kb, BM_TABLE, BS), g, kb, BS);
				double tile_sp = 0;

				for (int i = 0; i < G; i++) {
					size_t row = (size_t)s * T * Hq + g * G + i;
					const int8_t *q = &in->q_int8[row * D];
					double sc[32], mx = m[i], mt = m[i];

					for (int j = 0; j < 32; j++) {
						int key = kb + j, p = bm_block(r, s, key, BM_TABLE, BS);
						double acc = 0;

						sc[j] = -INFINITY;
						if (key >= ctx || key > qp)
							continue;
						for (int d = 0; d < D; d++)
							acc += q[d] * bm_kbyte(r, p, g, key, d, BS);
						sc[j] = acc * in->q_scale[row] *
							bm_scale(r, in->k_scale, p, g, key, BS) * r->c.softmax_scale;
						if (sc[j] > mx)
							mx = sc[j];
					}
					alpha[i] = m[i] == -INFINITY ? 0 : exp(m[i] - mx);
					l[i] *= alpha[i];
					sp[i] = 0;
					for (int j = 0; j < 32; j++) {
						int key = kb + j;
						double *pj = &P[i * 32 + j];

						/* per_tile: the running max of the tiles so far */
						if (bg->group_max && j % 16 == 0)
							for (int k = j; k < j + 16; k++)
								mt = sc[k] > mt ? sc[k] : mt;
						*pj = sc[j] == -INFINITY ? 0 :
						      exp(sc[j] - (bg->group_max ? mt : mx));
						l[i] += *pj;
						if (*pj > 0 && !bg->v_after)
							*pj *= bm_scale(r, in->v_scale,
									bm_block(r, s, key, BM_TABLE, BS), g, key, BS);
						if (*pj > sp[i])
							sp[i] = *pj;
					}
					if (sp[i] > tile_sp)
						tile_sp = sp[i];
					m[i] = mx;
				}
				for (int i = 0; i < G; i++) {
					double spi = (bg->p_tile ? tile_sp : sp[i]) / 127, pq[32];
					double *o = &out[((size_t)s * T * Hq + g * G + i) * D];

					for (int j = 0; j < 32; j++)
						pq[j] = spi > 0 ? floor(P[i * 32 + j] / spi + 0.5) : 0;
					for (int d = 0; d < D; d++) {
						double acc = 0;

						for (int k = 0; k < 32; k++) {
							int held = bg->regroup_none ?
								   16 * (k % 8 / 4) + k / 8 + 4 * (k % 4) : k;
							int key = kb + k;

							/* a key past the context reads the slot as it
							 * lies (poison): regroup_none pairs it with a
							 * visible key's P */
							if (pq[held] == 0)
								continue;
							acc += pq[held] * bm_vbyte(r, bm_block(r, s, key, BM_TABLE, BS),
										   g, key, d, BS);
						}
						o[d] = (bg->no_rescale ? o[d] : o[d] * alpha[i]) +
						       acc * spi * (bg->v_after ? vs0 : 1.0);
					}
				}
			}
			for (int i = 0; i < G; i++)
				for (int d = 0; d < D; d++)
					out[((size_t)s * T * Hq + g * G + i) * D + d] /= l[i];
		}
	free(m), free(l), free(P), free(alpha), free(sp);
}

/* diff names the class behind the model's out.npy, exactly and alone. */
static void model_dump_named(const struct pv_bugs *bg, const char *want)
{
	static const char text[] =
		"fragsim: 1\nname: pv-model\nmodel: {q_heads: 8, kv_heads: 2, head_dim: 64}\n"
		"cache: {placement: shuffled}\nsequences:\n  - {context: 100}\n"
		"pv: {mode: int8}\ndata: {seed: 12}\n";
	char dir[64], path[128], line[256];
	struct runcase r;
	struct fs_err err;
	struct run_result res;
	size_t sh[4], n;
	double *out;
	float *f;
	const char *got;

	assert_non_null(tu_scratch_new(dir, sizeof(dir), "pvmodel"));
	snprintf(path, sizeof(path), "%s/case.yaml", dir);
	tu_put(path, text);
	if (runcase_load(path, &r, &err) != FS_OK || runcase_inputs(&r, &err) != FS_OK)
		fail_msg("%s", err.msg);
	sh[0] = (size_t)r.in.S, sh[1] = (size_t)r.in.T, sh[2] = (size_t)r.in.Hq, sh[3] = (size_t)r.in.D;
	n = sh[0] * sh[1] * sh[2] * sh[3];
	out = malloc(n * sizeof(double));
	f = malloc(n * sizeof(float));
	assert_non_null(out && f);
	pv_model(&r, bg, out);
	for (size_t i = 0; i < n; i++)
		f[i] = (float)out[i];
	assert_int_equal(tu_sh("mkdir %s/dump", dir), 0);
	snprintf(path, sizeof(path), "%s/dump/out.npy", dir);
	assert_int_equal(npy_write(path, NPY_F32, 4, sh, f, NULL, &err), FS_OK);
	res = tu_run("diff %s/case.yaml --dump %s/dump --tol 1e-4", dir, dir);
	got = strstr(res.out, "diagnosis:");
	snprintf(line, sizeof(line), "diagnosis: matches %s exactly (", want);
	if (res.status != (want[0] == 't' ? 0 : 1) || !got || strncmp(got, line, strlen(line)) ||
	    strstr(got, "; so do"))
		fail_msg("%s: %s%s", want, got ? got : res.out, res.err);
	tu_free(&res);
	free(out), free(f);
	runcase_free(&r);
	assert_int_equal(tu_scratch_free(dir), 0);
}

/*
 * fragsim_dump.h writes the four INT8 PV tensors under their names; diff
 * reads them back. The values are the planted v_scale_apply kernel's
 * (its emulation: this tests the writer and the reader, the models above
 * test the naming), of every other group only, so the groups are found
 * by their pv_tiles rows, not by position.
 */
static void dump_header_writes_pv_tensors(void **state)
{
	static const char text[] =
		"fragsim: 1\nname: pv-fsd\nmodel: {q_heads: 8, kv_heads: 2, head_dim: 64}\n"
		"sequences:\n  - {context: 90}\npv: {mode: int8}\ndata: {seed: 4}\n";
	char dir[64], path[128], out[160];
	struct runcase r;
	struct fs_err err;
	struct fsd_writer w;
	struct run_result res;
	size_t n, ea, dt, W, EC, M;
	int8_t *pi;
	float *ps;
	int32_t *pa, *pt;

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "pvfsd"));
	snprintf(path, sizeof(path), "%s/case.yaml", dir);
	tu_put(path, text);
	snprintf(out, sizeof(out), "%s/planted.yaml", dir);
	{
		char planted[512];

		snprintf(planted, sizeof(planted), "%skernel: {v_scale_apply: after_product}\n", text);
		tu_put(out, planted);
	}
	assert_int_equal(runcase_load(out, &r, &err), FS_OK);
	r.emulate_only = 1;
	assert_int_equal(runcase_exec(&r, &err), FS_OK);
	n = (r.sim.n_groups + 1) / 2, W = (size_t)r.sim.wave, ea = (size_t)r.sim.pv_ea;
	dt = (size_t)r.sim.pv_dt, EC = (size_t)r.sim.ec, M = (size_t)r.sim.rows;
	pi = malloc(n * W * ea), ps = malloc(n * M * sizeof(float));
	pa = malloc(n * dt * W * EC * sizeof(int32_t)), pt = malloc(n * 5 * sizeof(int32_t));
	assert_non_null(pi && ps && pa && pt);
	for (size_t i = 0; i < n; i++) {	/* groups 2i: in reverse order */
		size_t g = 2 * (n - 1 - i);

		memcpy(&pi[i * W * ea], &r.sim.p_int8[g * W * ea], W * ea);
		memcpy(&ps[i * M], &r.sim.p_scale[g * M], M * sizeof(float));
		memcpy(&pa[i * dt * W * EC], &r.sim.pv_acc[g * dt * W * EC],
		       dt * W * EC * sizeof(int32_t));
		memcpy(&pt[i * 5], &r.sim.pv_tiles[g * 5], 5 * sizeof(int32_t));
	}
	snprintf(out, sizeof(out), "%s/dump", dir);
	if (fsd_begin(&w, out) ||
	    fsd_tensor(&w, "p_int8", FSD_I8, pi, 3, (size_t[3]){ n, W, ea }) ||
	    fsd_tensor(&w, "p_scale", FSD_F32, ps, 2, (size_t[2]){ n, M }) ||
	    fsd_tensor(&w, "pv_acc", FSD_I32, pa, 4, (size_t[4]){ n, dt, W, EC }) ||
	    fsd_tensor(&w, "pv_tiles", FSD_I32, pt, 2, (size_t[2]){ n, 5 }) ||
	    fsd_commit(&w)) {
		fsd_abort(&w);
		fail_msg("%s", w.error);
	}
	res = tu_run("diff %s --dump %s", path, out);
	assert_int_equal(res.status, 1);
	assert_non_null(strstr(res.out, "dump      "));
	assert_non_null(strstr(res.out, ": p_int8, p_scale, pv_acc;"));
	assert_non_null(strstr(res.out, "diagnosis: matches kernel assumption v_scale_apply=after_product exactly ("));
	tu_free(&res);
	free(pi), free(ps), free(pa), free(pt);
	runcase_free(&r);
	assert_int_equal(tu_scratch_free(dir), 0);
}

/* Every other refusal of the INT8 PV keys and files names its cause. */
static void more_refusals(void **state)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "fragsim: 1\nname: a\nsequences:\n  - {context: 20}\npv: {regroup: lds}\n",
		  "pv.regroup: applies to pv.mode int8 only" },
		{ "fragsim: 1\nname: a\nmodel: {alibi: true}\nsequences:\n  - {context: 20}\n"
		  "pv: {mode: int8}\n", "pv.mode: int8 is the INT8 path's second product; it refuses model.alibi" },
		{ "fragsim: 1\nname: a\nmodel: {soft_cap: 30}\nsequences:\n  - {context: 20}\n"
		  "pv: {mode: int8}\n", "it refuses model.soft_cap" },
		{ "fragsim: 1\nname: a\ncache: {k_scale: per_block32}\nsequences:\n  - {context: 20}\n"
		  "pv: {mode: int8}\n", "it refuses cache.k_scale per_block32" },
		{ "fragsim: 1\nname: a\npv: {mode: int4}\nsequences:\n  - {context: 20}\n",
		  "pv.mode: must be one of f32, int8" },
		/* CDNA3 32x32x16: a group of K = 16 keys is half a 32-key QK
		 * tile (refused at load: the plan needs the maps alone) */
		{ "fragsim: 1\nname: a\nisa: cdna3-mfma-i32-32x32x16-i8\n"
		  "sequences:\n  - {context: 40}\npv: {mode: int8}\n",
		  "pv.mode: int8 on isa cdna3-mfma-i32-32x32x16-i8: a group of K = 16 keys" },
	};
	char dir[64], path[128];
	struct runcase r;
	struct fs_err err;
	struct run_result res;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *p = tu_write_temp(".yaml", bad[i].text);

		assert_int_equal(runcase_load(p, &r, &err), FS_EINPUT);
		if (!strstr(err.msg, bad[i].want))
			fail_msg("want '%s', got '%s'", bad[i].want, err.msg);
		runcase_free(&r);
		free(p);
	}
	/* dumps: pv_acc without pv_tiles; PV files for an f32-PV case */
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "pvbad"));
	snprintf(path, sizeof(path), "%s/int8.yaml", dir);
	tu_put(path, "fragsim: 1\nname: a\nsequences:\n  - {context: 40}\npv: {mode: int8}\n");
	snprintf(path, sizeof(path), "%s/f32.yaml", dir);
	tu_put(path, "fragsim: 1\nname: a\nsequences:\n  - {context: 40}\n");
	assert_int_equal(tu_sh("cd %s && %s run int8.yaml --emulate-only --out g > /dev/null && "
			       "mkdir d && cp g/pv_acc.npy d/ && mkdir e && cp g/pv_acc.npy g/pv_tiles.npy e/",
			       dir, FRAGSIM_BIN), 0);
	res = tu_run("diff %s/int8.yaml --dump %s/d", dir, dir);
	assert_int_equal(res.status, 2);
	assert_non_null(strstr(res.err, "need pv_tiles.npy beside them"));
	tu_free(&res);
	res = tu_run("diff %s/f32.yaml --dump %s/e", dir, dir);
	assert_int_equal(res.status, 2);
	assert_non_null(strstr(res.err, "the case's PV is f32 (pv.mode), so no pv_acc"));
	tu_free(&res);
	assert_int_equal(tu_scratch_free(dir), 0);
}

static void model_dumps_name_pv_classes(void **state)
{
	(void)state;
	model_dump_named(&(struct pv_bugs){ .regroup_none = 1 }, "kernel assumption p_regroup=none");
	model_dump_named(&(struct pv_bugs){ .no_rescale = 1 }, "kernel assumption pv_rescale=missing");
	model_dump_named(&(struct pv_bugs){ .group_max = 1 }, "kernel assumption pv_group_max=per_tile");
	model_dump_named(&(struct pv_bugs){ .v_after = 1 }, "kernel assumption v_scale_apply=after_product");
	model_dump_named(&(struct pv_bugs){ .p_tile = 1 }, "kernel assumption p_scale_index=per_tile");
}

/*
 * V scaled per channel (cache.v_scale: per_channel), worked by hand on
 * gfx936: one q head and one kv head, head_dim 16, decode of 40 keys,
 * given as .npy files (BF16-exact):
 *
 *   Q     = (127, 0, ..., 0)                 sQ = 1
 *   K[j]  = (a_j, 127, 0, ..., 0)            sK = 1, a_j = 0 for j < 32,
 *                                            -1 for j >= 32
 *   V[j]  = (2 c_j, e_j / 2, 0, ..., 0)      c_0 = 127, else (j % 7) - 3;
 *                                            e_5 = -127, else j % 3
 *
 * Calibration: dim 0's absmax is 254, so sV[0] = 254 / 127 = 2 and Vq =
 * c_j; dim 1's is 63.5, sV[1] = 0.5 and Vq = e_j; dims 2..15 are zero in
 * every token: scale 0, bytes 0. softmax_scale 2^-7: s_j = 127 a_j / 128,
 * so 0 on keys 0..31 and -0.9921875 on 32..39.
 *
 * Group 0 (keys 0..31): the max is 0, P = 1, l = 32; Pq = round(127 * 1)
 * = 127 on every key. Group 1 (keys 32..63, 40.. past the context): its
 * best score -0.9921875 is below the running max 0, so alpha = 1 and P =
 * e^-0.9921875 = 0.3707..., Pq = round(127 * 0.3707) = round(47.08) = 47
 * (the per-token path would rescale it to 127), 0 past the context;
 * l = 32 + 8 P. p_scale is the fixed 1/127 for every row.
 *
 * pv_acc, from the sums of Vq: sum_{j<32} c_j = 127 - 3 = 124 (c_1..c_28
 * are four cycles of -2 -1 0 1 2 3 -3, summing 0; c_29..c_31 = -2 -1 0);
 * sum_{32..39} c_j = 1 2 3 -3 -2 -1 0 1 = 1; sum_{j<32} e_j = 31 - 2 - 127
 * = -98; sum_{32..39} e_j = 2 0 1 2 0 1 2 0 = 8. So dim 0: 127 * 124 =
 * 15748 then 47 * 1 = 47; dim 1: 127 * -98 = -12446 then 47 * 8 = 376.
 *
 * out[d] = sV[d] (acc_0[d] + acc_1[d]) (1/127) / l: dim 0 = 2 (124 +
 * 47/127) / (32 + 8 P), dim 1 = 0.5 (-98 + 376/127) / (32 + 8 P), dims
 * 2..15 are 0. The f32 PV of the same case: 2 (124 + P) / (32 + 8 P) and
 * 0.5 (-98 + 8 P) / (32 + 8 P), from either executor.
 */
/* q.npy [1][1][1][D], k.npy and v.npy [1][ctx][1][D] into dir: the
 * logical tensors of a one-head, one-sequence case worked by hand. */
static void put_qkv(const char *dir, int D, int ctx, const float *q, const float *k,
		    const float *v)
{
	size_t sq[4] = { 1, 1, 1, (size_t)D }, sk[4] = { 1, (size_t)ctx, 1, (size_t)D };
	const float *x[3] = { q, k, v };
	static const char *const name[3] = { "q", "k", "v" };
	char path[160];
	struct fs_err err;

	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s.npy", dir, name[i]);
		assert_int_equal(npy_write(path, NPY_F32, 4, i ? sk : sq, x[i], NULL, &err), FS_OK);
	}
}

#define CH_D 16
#define CH_CTX 40

static int ch_c(int j) { return j == 0 ? 127 : j % 7 - 3; }
static int ch_e(int j) { return j == 5 ? -127 : j % 3; }

static void ch_load(const char *dir, const char *pv, enum attn_exec exec,
		    struct runcase *r)
{
	float q[CH_D] = { 127.0f }, k[CH_CTX * CH_D] = { 0 }, v[CH_CTX * CH_D] = { 0 };
	char path[160], text[640];
	struct fs_err err;

	for (int j = 0; j < CH_CTX; j++) {
		k[j * CH_D] = j < 32 ? 0.0f : -1.0f, k[j * CH_D + 1] = 127.0f;
		v[j * CH_D] = 2.0f * (float)ch_c(j), v[j * CH_D + 1] = 0.5f * (float)ch_e(j);
	}
	put_qkv(dir, CH_D, CH_CTX, q, k, v);
	snprintf(text, sizeof(text),
		 "fragsim: 1\nname: pv-channel-hand\n"
		 "model: {q_heads: 1, kv_heads: 1, head_dim: %d, softmax_scale: 0.0078125}\n"
		 "cache: {v_scale: per_channel}\nsequences:\n  - {context: %d}\n"
		 "pv: {mode: %s}\n"
		 "data:\n  q: {npy: q.npy}\n  k: {npy: k.npy}\n  v: {npy: v.npy}\n"
		 "golden: all\n", CH_D, CH_CTX, pv);
	snprintf(path, sizeof(path), "%s/case-%s.yaml", dir, pv);
	assert_int_equal(tu_put(path, text), 0);
	assert_int_equal(runcase_load(path, r, &err), FS_OK);
	r->exec = exec;
	if (runcase_exec(r, &err) != FS_OK)
		fail_msg("%s", err.msg);
}

static void ch_near(double got, double want, const char *what)
{
	if (!(fabs(got - want) <= 1e-6 * fabs(want)))
		fail_msg("%s: emulation %.9g, by hand %.9g", what, got, want);
}

static void v_per_channel_by_hand(void **state)
{
	double P = exp(-0.9921875), l = 32.0 + 8.0 * P;
	struct runcase r, f[2];
	char dir[128];

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "pvchan"));
	ch_load(dir, "int8", ATTN_EXEC_AUTO, &r);
	assert_null(r.in.v_scale);
	assert_true(r.in.v_scale_ch[0] == 2.0f && r.in.v_scale_ch[1] == 0.5f);
	for (int d = 2; d < CH_D; d++)
		assert_true(r.in.v_scale_ch[d] == 0.0f);
	assert_int_equal(r.sim.n_groups, 2);
	/* lds: lane L holds A row L % 16, keys 8 (L / 16) + e */
	for (int L = 0; L < 64; L++)
		for (int e = 0; e < 8; e++) {
			assert_int_equal(r.sim.p_int8[L * 8 + e], 127);
			assert_int_equal(r.sim.p_int8[(64 + L) * 8 + e], L < 16 ? 47 : 0);
		}
	for (int m = 0; m < 32; m++)
		assert_true(r.sim.p_scale[m] == 1.0f / 127.0f);
	/* C slot (L, e): row L % 16, column L / 16 + 4 e */
	for (int g = 0; g < 2; g++)
		for (int L = 0; L < 64; L++)
			for (int e = 0; e < 4; e++) {
				int col = L / 16 + 4 * e;
				int32_t want = col == 0 ? (g ? 47 : 15748) : col == 1 ? (g ? 376 : -12446) : 0;

				assert_int_equal(r.sim.pv_acc[(g * 64 + L) * 4 + e], want);
			}
	ch_near(r.sim.out[0], 2.0 * (124.0 + 47.0 / 127.0) / l, "int8 out[0]");
	ch_near(r.sim.out[1], 0.5 * (-98.0 + 376.0 / 127.0) / l, "int8 out[1]");
	for (int d = 2; d < CH_D; d++)
		assert_true(r.sim.out[d] == 0.0f);
	/* the reference: pv_acc exact, its own Pq the same, out in bound */
	assert_int_equal(r.cmp.stat[CMP_PV_ACC].mismatches, 0);
	assert_int_equal(r.cmp.stat[CMP_P_INT8].mismatches, 0);
	assert_int_equal(r.cmp.p_int8_one_step, 0);
	assert_true(r.cmp.stat[CMP_P_INT8].compared > 0);
	assert_int_equal(runcase_status(&r), FS_OK);
	runcase_free(&r);

	ch_load(dir, "f32", ATTN_EXEC_SCALAR, &f[0]);
	ch_load(dir, "f32", ATTN_EXEC_AUTO, &f[1]);
	for (int i = 0; i < 2; i++) {
		ch_near(f[i].sim.out[0], 2.0 * (124.0 + P) / l, "f32 out[0]");
		ch_near(f[i].sim.out[1], 0.5 * (-98.0 + 8.0 * P) / l, "f32 out[1]");
		assert_int_equal(runcase_status(&f[i]), FS_OK);
	}
	assert_memory_equal(f[0].sim.out, f[1].sim.out, CH_D * sizeof(float));
	runcase_free(&f[0]);
	runcase_free(&f[1]);
	assert_int_equal(tu_scratch_free(dir), 0);
}

/*
 * The static calibration spans every sequence: sV[h][d] is the absmax
 * over both sequences' valid V rows (the logical V, inputs_kv_row) / clip,
 * and every stored byte is that row's element over its dim's scale
 * (the shared quantizer, quant.c). The key is refused with every V type
 * that is not int8, at its line and column.
 */
static void v_per_channel_calibration_and_refusals(void **state)
{
	static const char *const vt[] = { "bf16", "f32", "q8_0", "q4_0" };
	const char *body = "fragsim: 1\nname: pv-chan-cal\n"
			   "model: {q_heads: 4, kv_heads: 2, head_dim: 32}\n"
			   "cache: {v_scale: per_channel}\n"
			   "sequences:\n  - {context: 10}\n  - {context: 37}\n"
			   "quant: {clip: 100}\ndata: {seed: 3, v: {outlier_channels: [4]}}\n";
	struct runcase r;
	struct fs_err err;
	char *path;

	(void)state;
	run_text(body, &r, FS_OK);
	for (int h = 0; h < 2; h++)
		for (int d = 0; d < 32; d++) {
			float amax = 0.0f, buf[32];

			for (int s = 0; s < 2; s++)
				for (int j = 0; j < r.c.seqs[s].context; j++) {
					float x = fabsf(inputs_kv_row(&r.c, &r.in, 1, s, j, h, d, 1, buf)[0]);

					amax = x > amax ? x : amax;
				}
			assert_true(r.in.v_scale_ch[h * 32 + d] == amax / 100.0f);
			for (int s = 0; s < 2; s++)
				for (int j = 0; j < r.c.seqs[s].context; j++) {
					int blk = r.in.block_table[s * r.in.MAXB + j / 16];
					int8_t want;

					quant_apply(inputs_kv_row(&r.c, &r.in, 1, s, j, h, d, 1, buf),
						    1, amax / 100.0f, 100, ROUND_HALF_AWAY, &want);
					assert_int_equal(r.in.v_cache_i8[(((size_t)blk * 2 + h) * 32 + d) * 16 +
									 j % 16], want);
				}
		}
	assert_int_equal(runcase_status(&r), FS_OK);
	runcase_free(&r);
	for (int i = 0; i < 4; i++) {
		char text[512];

		snprintf(text, sizeof(text), "fragsim: 1\nname: x\nmodel: {head_dim: 64}\n"
			 "cache: {v_dtype: %s, v_scale: per_channel}\n"
			 "sequences:\n  - {context: 20}\n", vt[i]);
		path = tu_write_temp(".yaml", text);
		assert_int_equal(runcase_load(path, &r, &err), FS_EINPUT);
		assert_int_equal(err.line, 4);
		assert_non_null(strstr(err.msg, "cache.v_scale"));
		assert_non_null(strstr(err.msg, "applies to v_dtype int8 only"));
		assert_non_null(strstr(err.msg, vt[i]));
		free(path);
	}
}

/* The shipped per-channel cases: pv_acc exact, p_int8 within a step. */
static void v_per_channel_shipped_cases(void **state)
{
	static const char *const cases[] = {
		"cases/edge/v-per-channel-decode.yaml",
		"cases/edge/cdna3-v-per-channel-prefill.yaml",
		"cases/edge/sm80-v-per-channel-decode.yaml",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[1024];
		struct runcase r;
		struct fs_err err;

		snprintf(path, sizeof(path), "%s/%s", FRAGSIM_SRC, cases[i]);
		assert_int_equal(runcase_load(path, &r, &err), FS_OK);
		assert_int_equal(r.c.v_scale, VSCALE_PER_CHANNEL);
		assert_int_equal(runcase_exec(&r, &err), FS_OK);
		assert_true(r.cmp.stat[CMP_PV_ACC].compared > 0);
		assert_int_equal(r.cmp.stat[CMP_PV_ACC].mismatches, 0);
		assert_int_equal(r.cmp.stat[CMP_P_INT8].mismatches, 0);
		assert_int_equal(r.cmp.stat[CMP_OUT].mismatches, 0);
		assert_int_equal(runcase_status(&r), FS_OK);
		runcase_free(&r);
	}
}

/*
 * INT8 PV over a sparse pool whose kernel reads V from blocks the pool
 * does not store (v_page_walk identity: logical blocks 0..4; block_offset
 * u16: ids cut to 16 bits): such a V column reads as poison, and one that
 * leaves its stored block is gathered element by element, as f32 PV
 * reads it. B's bytes were read at d * BS past the one poison byte such
 * a column points at (AddressSanitizer: a global-buffer-overflow in
 * group_product, make asan). Each planted case is caught.
 */
static void sparse_pool_unstored_v_read_as_poison(void **state)
{
	static const char *const bugs[] = { "v_page_walk: identity", "block_offset: u16" };

	(void)state;
	for (int i = 0; i < 2; i++) {
		char text[512];
		struct runcase r;
		struct fs_err err;

		snprintf(text, sizeof(text), "fragsim: 1\nname: pv-sparse-poison\nexpect: mismatch\n"
			 "cache: {block_size: 16, placement: table, num_blocks: 4194304}\n"
			 "sequences:\n  - {context: 70, blocks: [4194300, 1, 262145, 131073, 65537]}\n"
			 "pv: {mode: int8}\nkernel: {%s}\n"
			 "golden: [acc, scores, out]\ndata: {seed: 21}\n", bugs[i]);
		run_text_err(text, &r, FS_OK, &err);
		assert_int_equal(runcase_status(&r), FS_MISMATCH);
		assert_int_equal(runcase_expected(&r), FS_OK);
		runcase_free(&r);
	}
}

/*
 * A group far below the running max (ref/pv_int8.c pv_range). Q = 127
 * e0 (sQ 1); K row 0 = 127 e0, every other K row 127 e1 (sK 1): key 0
 * scores 16129 scale, every other key 0. V rows e0 (sV 1/127 each).
 * Group 0 (keys 0..31) holds the max; group 1 (keys 32..39) scores 0.
 *
 * scale 0.0125: key 0 scores 201.6, group 1's P = e^-201.6 is below
 * f32's smallest subnormal (2^-149 = e^-103.3), so a correct kernel's P
 * is 0 there, its sP 0 and every Pq 0, where the exact ratio P' / max P'
 * is 1 (Pq 127): the reference accepts the 0s (it reported "got 0 want
 * 127" on each before). scale 0.0003: key 0 scores 4.84, group 1's P =
 * e^-4.84 is normal, every Pq of group 1 is round(127 x 1) = 127, and a
 * golden holding 0 there is a mismatch.
 */
#define UF_D 16
#define UF_CTX 40

static void uf_load(const char *dir, double scale, struct runcase *r)
{
	float q[UF_D] = { 127.0f }, k[UF_CTX * UF_D] = { 0 }, v[UF_CTX * UF_D] = { 0 };
	char path[160], text[640];
	struct fs_err err;

	for (int j = 0; j < UF_CTX; j++)
		k[j * UF_D + (j > 0)] = 127.0f, v[j * UF_D] = 1.0f;
	put_qkv(dir, UF_D, UF_CTX, q, k, v);
	snprintf(text, sizeof(text),
		 "fragsim: 1\nname: pv-underflow\n"
		 "model: {q_heads: 1, kv_heads: 1, head_dim: %d, softmax_scale: %g}\n"
		 "sequences:\n  - {context: %d}\npv: {mode: int8}\n"
		 "data:\n  q: {npy: q.npy}\n  k: {npy: k.npy}\n  v: {npy: v.npy}\n"
		 "golden: all\n", UF_D, scale, UF_CTX);
	snprintf(path, sizeof(path), "%s/case.yaml", dir);
	assert_int_equal(tu_put(path, text), 0);
	assert_int_equal(runcase_load(path, r, &err), FS_OK);
	if (runcase_exec(r, &err) != FS_OK)
		fail_msg("%s", err.msg);
}

static void underflow_below_the_running_max(void **state)
{
	struct runcase r;
	struct compare_report rep;
	struct fs_err err;
	size_t ga = (size_t)64 * 8;	/* one group's A bytes: 64 lanes x 8 */
	char dir[128];

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "pvunder"));
	uf_load(dir, 0.0125, &r);
	assert_int_equal(r.sim.n_groups, 2);
	for (size_t i = 0; i < ga; i++)
		assert_int_equal(r.sim.p_int8[ga + i], 0);
	for (int m = 0; m < 16; m++)
		assert_true(r.sim.p_scale[16 + m] == 0.0f);
	assert_true(r.cmp.stat[CMP_P_INT8].compared > 0);
	assert_int_equal(r.cmp.stat[CMP_P_INT8].mismatches, 0);
	assert_int_equal(r.cmp.stat[CMP_PV_ACC].mismatches, 0);
	assert_int_equal(runcase_status(&r), FS_OK);
	runcase_free(&r);

	uf_load(dir, 0.0003, &r);
	assert_int_equal(runcase_status(&r), FS_OK);
	/* row 0 of group 1: lanes 0, 16 hold A row 0 keys 0..7, 8..15 (lds);
	 * keys 32..39 are its first 8 */
	for (int e = 0; e < 8; e++)
		assert_int_equal(r.sim.p_int8[ga + e], 127);
	memset(&r.sim.p_int8[ga], 0, ga);
	assert_int_equal(runcase_compare(&r, &r.c, &r.sim, &rep, &err), FS_MISMATCH);
	assert_true(rep.stat[CMP_P_INT8].mismatches >= 8);
	assert_true(rep.stat[CMP_P_INT8].first.want == 127);
	assert_true(rep.stat[CMP_P_INT8].first.got == 0);
	runcase_free(&r);
	assert_int_equal(tu_scratch_free(dir), 0);
}

/*
 * V per_channel quantizes under the row's running max from its segment's
 * start, which the reference takes from a table made in one pass over K
 * (ref/pv_int8.c, pv_maxima). Here a row spans more groups than a check
 * chunk holds (64), a segment of 3000 keys ends inside a group (groups
 * restart at 3000), and the K scale spreads the scores so that a group's
 * own max is not the running max: the correct kernel must match. It
 * fails when the table forgets the groups more than a chunk back, or
 * carries a max over a segment's start (p_int8 mismatches).
 */
static void running_max_across_chunks(void **state)
{
	struct runcase r;

	(void)state;
	run_text("fragsim: 1\nname: pv-running-max\nisa: gfx936\n"
		 "model: {q_heads: 2, kv_heads: 1, head_dim: 32}\n"
		 "cache: {v_scale: per_channel}\n"
		 "sequences:\n  - {context: 4200}\n"
		 "pv: {mode: int8}\nsplit_k: {segment: 3000}\n"
		 "data: {seed: 11, k: {scale: 30}}\n", &r, FS_OK);
	assert_true(r.sim.n_groups > 2 * 64);
	assert_true(r.cmp.stat[CMP_P_INT8].compared > 0);
	assert_int_equal(r.cmp.stat[CMP_P_INT8].mismatches, 0);
	assert_int_equal(r.cmp.stat[CMP_PV_ACC].mismatches, 0);
	assert_int_equal(runcase_status(&r), FS_OK);
	runcase_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_lane_regroup_by_hand),
		cmocka_unit_test(pv_acc_by_hand),
		cmocka_unit_test(shipped_cases_match_reference),
		cmocka_unit_test(regroups_agree),
		cmocka_unit_test(qk_half_unchanged),
		cmocka_unit_test(refusals_name_the_reason),
		cmocka_unit_test(more_refusals),
		cmocka_unit_test(dump_header_writes_pv_tensors),
		cmocka_unit_test(model_dumps_name_pv_classes),
		cmocka_unit_test(v_per_channel_by_hand),
		cmocka_unit_test(v_per_channel_calibration_and_refusals),
		cmocka_unit_test(v_per_channel_shipped_cases),
		cmocka_unit_test(sparse_pool_unstored_v_read_as_poison),
		cmocka_unit_test(underflow_below_the_running_max),
		cmocka_unit_test(running_max_across_chunks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
