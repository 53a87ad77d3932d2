/*
 * test_runcase.c - the main job end to end: the shipped suite through
 * `fragsim check`, goldens that numpy can load and whose digests match,
 * byte-identical goldens for 1 and 3 threads, the route, show, JUnit and
 * sharding, and the input errors a user will make.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../lib/runcase.h"
#include "testutil.h"

static int have_numpy(void)
{
	return system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") == 0;
}

static void shipped_suite_passes(void **state)
{
	struct run_result r = tu_run("check cases/qwen35-27b cases/edge --junit /tmp/fragsim-junit-%d.xml",
				     (int)getpid());
	char path[64], *xml;

	(void)state;
	if (r.status != 0)
		fail_msg("fragsim check failed:\n%s%s", r.out, r.err);
	assert_non_null(strstr(r.out, " passed, 0 failed\n"));
	assert_non_null(strstr(r.out, "qwen35-27b-decode-4097-shuffled(decode,S=1,ctx=4097,bs=16,shuffled,gfx936): OK\n"));
	snprintf(path, sizeof(path), "/tmp/fragsim-junit-%d.xml", (int)getpid());
	xml = tu_slurp(path);
	assert_non_null(strstr(xml, "<testsuite name=\"fragsim\""));
	assert_non_null(strstr(xml, "failures=\"0\" errors=\"0\""));
	assert_non_null(strstr(xml, "name=\"qwen35-27b-prefill-128\""));
	free(xml);
	unlink(path);
	tu_free(&r);
}

static int count_ok(const char *s)
{
	int n = 0;

	while ((s = strstr(s, ": OK\n"))) {
		n++;
		s++;
	}
	return n;
}

static void shards_partition_the_suite(void **state)
{
	struct run_result a = tu_run("check cases/edge --shard 1/2");
	struct run_result b = tu_run("check cases/edge --shard 2/2");
	struct run_result all = tu_run("check cases/edge");

	(void)state;
	assert_int_equal(a.status, 0);
	assert_int_equal(b.status, 0);
	assert_int_equal(count_ok(a.out) + count_ok(b.out), count_ok(all.out));
	assert_true(count_ok(a.out) >= count_ok(all.out) / 2);
	tu_free(&a);
	tu_free(&b);
	tu_free(&all);
	a = tu_run("check cases/edge --shard 3/2");
	assert_int_equal(a.status, 2);
	tu_free(&a);
}

/* Quantizing K with one scale for the whole tensor must cost more than
 * one scale per token and head, on the same data. */
static void per_tensor_k_scale_shows_larger_error(void **state)
{
	struct runcase tok, ten;
	struct fs_err err;

	(void)state;
	assert_int_equal(runcase_load(FRAGSIM_SRC "/cases/edge/k-scale-per_token_head.yaml", &tok, &err), FS_OK);
	assert_int_equal(runcase_exec(&tok, &err), FS_OK);
	assert_int_equal(runcase_load(FRAGSIM_SRC "/cases/edge/k-scale-per_tensor.yaml", &ten, &err), FS_OK);
	assert_int_equal(runcase_exec(&ten, &err), FS_OK);
	assert_int_equal(runcase_status(&tok), FS_OK);
	assert_int_equal(runcase_status(&ten), FS_OK);
	assert_true(ten.cmp.quant.score_nmse > 2.0 * tok.cmp.quant.score_nmse);
	assert_true(ten.cmp.quant.kld_mean > tok.cmp.quant.kld_mean);
	assert_true(ten.cmp.quant.out_cos_mean < tok.cmp.quant.out_cos_mean);
	runcase_free(&tok);
	runcase_free(&ten);
}

static void decode_distinct_rows(void **state)
{
	struct runcase r;
	struct fs_err err;

	(void)state;
	assert_int_equal(runcase_load(FRAGSIM_SRC "/cases/qwen35-27b/decode-17.yaml", &r, &err), FS_OK);
	assert_int_equal(runcase_exec(&r, &err), FS_OK);
	assert_int_equal(r.sim.rows, 16);
	assert_int_equal(r.sim.distinct_rows, 6);	/* 37.5 % */
	assert_int_equal(r.sim.replica_mismatch, 0);
	/* 17 keys: tiles at 0 and 16, for each of 4 kv heads. */
	assert_int_equal(r.sim.n_tiles, 8);
	runcase_free(&r);
}

/*
 * The tests that write goldens write them under a scratch directory of
 * their own (t->dir), which the teardown removes: two make test runs on
 * one machine share no path, and none removes another's files. --out
 * names a subdirectory not made yet, as a user's would be.
 */
static int scratch_setup(void **state)
{
	return tu_scratch_setup(state, "runcase", "out");
}

static void goldens_identical_for_any_thread_count(void **state)
{
	const char *c = "cases/qwen35-27b/decode-multi-seq.yaml";
	struct tu_scratch *t = *state;
	struct run_result a, b;

	a = tu_run("run %s --threads 1 --out %s/g1", c, t->dir);
	b = tu_run("run %s --threads 3 --out %s/g3", c, t->dir);
	assert_int_equal(a.status, 0);
	assert_int_equal(b.status, 0);
	assert_int_equal(tu_sh("diff -r %s/g1 %s/g3 >/dev/null", t->dir, t->dir), 0);
	tu_free(&a);
	tu_free(&b);
}

static void goldens_load_with_numpy(void **state)
{
	struct tu_scratch *t = *state;
	struct run_result r;

	if (!have_numpy())
		skip();		/* prints that the test was skipped */
	r = tu_run("run cases/qwen35-27b/decode-17.yaml --out %s", t->path);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	/* Every file in the manifest loads, has its dtype and shape, and its
	 * sha256; acc_tiles' last tile starts at key 16; the tail key 17..31
	 * of the scores is -inf. */
	assert_int_equal(tu_sh(
		"/usr/bin/python3 - <<'PY'\n"
		"import json, hashlib, numpy as np, math\n"
		"d = '%s/'\n"
		"m = json.load(open(d + 'manifest.json'))\n"
		"assert m['mode'] == 'decode' and m['profile']['name'] == 'gfx936'\n"
		"assert abs(m['softmax_scale'] - 1/16) < 1e-12\n"
		"for f in m['files']:\n"
		"    a = np.load(d + f['name'])\n"
		"    assert str(a.dtype) == f['dtype'], f\n"
		"    assert list(a.shape) == f['shape'], f\n"
		"    assert hashlib.sha256(open(d + f['name'], 'rb').read()).hexdigest() == f['sha256'], f\n"
		"t = np.load(d + 'acc_tiles.npy'); assert t.shape == (8, 5) and t[-1][3] == 16\n"
		"s = np.load(d + 'scores.npy'); assert s.shape == (1, 1, 24, 17)\n"
		"assert np.isfinite(s).all()\n"
		"q = np.load(d + 'q_int8.npy'); assert q.dtype == np.int8 and np.abs(q).max() == 127\n"
		"bt = np.load(d + 'block_table.npy'); kc = np.load(d + 'k_cache.npy')\n"
		"assert (kc[bt[0][1], :, :, 1:, :] == -128).all()  # slots past key 16: poison\n"
		"PY\n", t->path), 0);
}

static void safetensors_golden(void **state)
{
	struct tu_scratch *t = *state;
	struct run_result r;
	char p[160];

	r = tu_run("run cases/qwen35-27b/decode-1.yaml --format safetensors --out %s", t->path);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	snprintf(p, sizeof(p), "%s/golden.safetensors", t->path);
	assert_int_equal(access(p, R_OK), 0);
	snprintf(p, sizeof(p), "%s/manifest.json", t->path);
	assert_int_equal(access(p, R_OK), 0);
	snprintf(p, sizeof(p), "%s/q.npy", t->path);
	assert_int_not_equal(access(p, R_OK), 0);
}

static char *temp_case(const char *body)
{
	char text[4096];

	snprintf(text, sizeof(text), "fragsim: 1\nname: t\n%s", body);
	return tu_write_temp(".yaml", text);
}

static void failing_checks_write_no_goldens(void **state)
{
	char *p = temp_case("sequences:\n  - {context: 40}\ncheck: {out_cosine_min: 1.0}\n");
	struct tu_scratch *t = *state;
	struct run_result r;

	/* t->path does not exist yet: a failing run must not make it */
	r = tu_run("run %s --out %s", p, t->path);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "FAIL out cosine"));
	assert_non_null(strstr(r.err, "goldens not written"));
	assert_int_not_equal(access(t->path, F_OK), 0);
	tu_free(&r);
	unlink(p);
	free(p);
}

static void route_and_strict(void **state)
{
	struct run_result r = tu_run("route cases/edge/head-dim-64-gqa4.yaml");
	char *p;

	(void)state;
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "INT8 path: refused"));
	assert_non_null(strstr(r.out, "head_size 64, the INT8 path needs 256"));
	assert_non_null(strstr(r.out, "GQA ratio 8:2, the INT8 path needs 6:1"));
	tu_free(&r);
	r = tu_run("route cases/qwen35-27b/prefill-128.yaml");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "INT8 path: taken"));
	tu_free(&r);
	p = temp_case("route: strict\nmodel: {head_dim: 128}\nsequences:\n  - {context: 40}\n");
	r = tu_run("run %s", p);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "route: strict, and the case is outside the INT8 path: head_size 128"));
	tu_free(&r);
	unlink(p);
	free(p);
}

static void show_fills_defaults(void **state)
{
	char *p = temp_case("sequences:\n  - {context: 40}\n");
	struct run_result r = tu_run("show %s", p);

	(void)state;
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "block_size: 16"));
	assert_non_null(strstr(r.out, "q_heads: 24"));
	assert_non_null(strstr(r.out, "placement: shuffled"));
	assert_non_null(strstr(r.out, "num_blocks: 5"));	/* 3 needed + 2 spare */
	tu_free(&r);
	unlink(p);
	free(p);
}

static void bad_case_is_exit_2_with_location(void **state)
{
	char *p = temp_case("cache: {block_size: 12}\nsequences:\n  - {context: 40}\n");
	struct run_result r = tu_run("run %s", p);
	char want[512];

	(void)state;
	assert_int_equal(r.status, 2);
	snprintf(want, sizeof(want), "fragsim: error: %s:3:21: cache.block_size: must be a power of two between 1 and 1024", p);
	if (strncmp(r.err, want, strlen(want)))
		fail_msg("stderr '%s'", r.err);
	tu_free(&r);
	r = tu_run("check %s", p);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "ERROR"));
	tu_free(&r);
	unlink(p);
	free(p);
	r = tu_run("run /nonexistent.yaml");
	assert_int_equal(r.status, 2);
	tu_free(&r);
}

/*
 * Checks that need the profile (or come after the load) name the file,
 * the line and column of the key, and the key, as the loader's do: the
 * messages once read "k_scale per_block32 needs ..." with no file at all.
 * Those that need no input are made at load, so `show` and `route`
 * refuse them too (they exited 0 on an unknown isa).
 * Positions worked by hand from the texts below (temp_case puts two
 * lines before each).
 */
static void late_checks_name_file_line_key(void **state)
{
	static const struct {
		const char *body, *want;
		int run_only;	/* 0: show and route refuse it too, at load */
	} bad[] = {
		{ "isa: sm80-mma-m16n8k16-s8\ncache: {k_scale: per_block32}\nsequences:\n  - {context: 40}\n",
		  ":4:18: cache.k_scale: per_block32 needs a K-step of 32 head-dim elements; isa sm80-mma-m16n8k16-s8 has K = 16", 0 },
		{ "isa: cdna3-mfma-i32-16x16x32-i8\nsequences:\n  - {context: 40}\npv: {mode: int8, regroup: v_permuted}\n",
		  ":6:27: pv.regroup: v_permuted on isa cdna3-mfma-i32-16x16x32-i8: lane 0's C registers do not hold the row-0 entries", 0 },
		{ "isa: cdna3-mfma-i32-32x32x16-i8\nsequences:\n  - {context: 40}\npv: {mode: int8}\n",
		  ":6:12: pv.mode: int8 on isa cdna3-mfma-i32-32x32x16-i8: a group of K = 16 keys must be whole QK tiles of N = 32 keys", 0 },
		{ "sequences:\n  - {context: 16}\nkernel: {gqa_map: grid_permuted}\n",
		  ":5:19: kernel.gqa_map: grid_permuted is a prefill grid", 0 },
		{ "route: strict\nmodel: {head_dim: 128}\nsequences:\n  - {context: 40}\n",
		  ":3:8: route: strict, and the case is outside the INT8 path: head_size 128", 1 },
		{ "isa: gfx936-article\nsequences:\n  - {context: 40}\n",
		  ":3:6: isa: profile gfx936-article is not valid (see 'fragsim lanemap check gfx936-article')", 0 },
		{ "sequences:\n  - {context: 40}\ndata: {k: {npy: /nonexistent/k.npy}}\n",
		  ":5:17: data.k.npy: ", 1 },
		{ "isa: sm80-mma-m16n8k16-s8\nsequences:\n  - {context: 40}\nkernel: {operand_order: kq}\n",
		  ":6:25: kernel.operand_order: kq needs a square tile with A and B of one type; isa sm80-mma-m16n8k16-s8 is 16x8", 0 },
		/* an isa that resolves to no profile (a soak found these with
		 * no file, line or key) */
		{ "isa: gfx942\nsequences:\n  - {context: 40}\n",
		  ":3:6: isa: unknown profile 'gfx942': a profile names an instruction, not a target; the builtin profiles for gfx942: cdna3-mfma-i32-16x16x32-i8", 0 },
		{ "isa: /nonexistent/p.yaml\nsequences:\n  - {context: 40}\n",
		  ":3:6: isa: /nonexistent/p.yaml: cannot open: ", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *p = temp_case(bad[i].body), want[512];

		snprintf(want, sizeof(want), "fragsim: error: %s%s", p, bad[i].want);
		/* what needs no input is refused at load: by show and route too */
		for (int c = 0; c < (bad[i].run_only ? 1 : 3); c++) {
			static const char *const cmd[3] = { "run", "show", "route" };
			struct run_result r = tu_run("%s %s", cmd[c], p);

			if (r.status != 2 || strncmp(r.err, want, strlen(want)) || (c && r.out[0]))
				fail_msg("case %zu, %s: exit %d, stdout '%s', stderr '%s', want '%s'",
					 i, cmd[c], r.status, r.out, r.err, want);
			tu_free(&r);
		}
		unlink(p);
		free(p);
	}
	/* 64 sequences (the most) before pv: their keys are not kept, so
	 * pv.mode's place still is (line 3 + 64 + 2) */
	{
		char body[4096] = "isa: cdna3-mfma-i32-32x32x16-i8\nsequences:\n", want[512], *p;
		struct run_result r;

		for (int s = 0; s < 64; s++)
			strcat(body, "  - {context: 40, tokens: 1}\n");
		strcat(body, "pv: {mode: int8}\n");
		p = temp_case(body);
		r = tu_run("run %s", p);
		snprintf(want, sizeof(want), "fragsim: error: %s:69:12: pv.mode: int8 on isa", p);
		if (r.status != 2 || strncmp(r.err, want, strlen(want)))
			fail_msg("exit %d, stderr '%s', want '%s'", r.status, r.err, want);
		tu_free(&r);
		unlink(p);
		free(p);
	}
}

/* Real tensors: a case may name a logical Q as .npy. Feeding back the q.npy
 * a run wrote must give the same quantized Q; a Q of the wrong shape is an
 * input error that names the file. */
static void given_npy_inputs(void **state)
{
	struct tu_scratch *t = *state;
	struct run_result r;
	char body[512], want[256], *p;

	r = tu_run("run cases/qwen35-27b/decode-17.yaml --out %s/gq1", t->dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	snprintf(body, sizeof(body),
		 "cache: {block_size: 16, placement: shuffled}\nsequences:\n  - {context: 17}\n"
		 "data: {seed: 17, q: {npy: %s/gq1/q.npy}}\ngolden: [inputs]\n", t->dir);
	p = temp_case(body);
	r = tu_run("run %s --out %s/gq2", p, t->dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	assert_int_equal(tu_sh("cmp -s %s/gq1/q_int8.npy %s/gq2/q_int8.npy", t->dir, t->dir), 0);
	assert_int_equal(tu_sh("cmp -s %s/gq1/q_scale.npy %s/gq2/q_scale.npy", t->dir, t->dir), 0);
	unlink(p);
	free(p);
	snprintf(body, sizeof(body),
		 "sequences:\n  - {context: 17}\ndata: {q: {npy: %s/gq1/scores.npy}}\n", t->dir);
	p = temp_case(body);
	r = tu_run("run %s", p);
	assert_int_equal(r.status, 2);
	/* the message names the file as the case gave it */
	snprintf(want, sizeof(want),
		 "%s/gq1/scores.npy: data.q.npy must have shape [1, 1, 24, 256]", t->dir);
	assert_non_null(strstr(r.err, want));
	tu_free(&r);
	unlink(p);
	free(p);
}

/*
 * Streaming: a checked run keeps tensors the case does not list only
 * within a byte budget, scores first. This case (golden [out], decode of
 * 300 keys) needs 28800 B of scores and 19 tiles x 1040 B of acc: with
 * room for the scores alone, acc is not kept and not checked, and the
 * verdict stands on the rest.
 */
static void unlisted_tensors_kept_within_budget(void **state)
{
	char *path = tu_write_temp(".yaml",
		"fragsim: 1\nname: budget\nsequences:\n  - {context: 300}\n"
		"data: {seed: 4}\ngolden: [out]\n");
	struct runcase r;
	struct fs_err err;

	(void)state;
	assert_int_equal(runcase_load(path, &r, &err), FS_OK);
	r.keep_max = 24 * 300 * 4 + 100;
	assert_int_equal(runcase_exec(&r, &err), FS_OK);
	assert_int_equal(r.dropped, ATTN_DROP_ACC);	/* no split-K here */
	assert_null(r.sim.acc);
	assert_non_null(r.sim.scores);
	assert_false(r.cmp.stat[CMP_ACC].ran);
	assert_true(r.cmp.stat[CMP_SCORES].ran && r.cmp.stat[CMP_OUT].ran);
	assert_int_equal(runcase_status(&r), FS_OK);
	runcase_free(&r);

	assert_int_equal(runcase_load(path, &r, &err), FS_OK);
	r.keep_max = 1;		/* nothing fits: out and row stats alone */
	assert_int_equal(runcase_exec(&r, &err), FS_OK);
	assert_null(r.sim.scores);
	assert_false(r.cmp.stat[CMP_SCORES].ran || r.cmp.stat[CMP_PROBS].ran);
	assert_int_equal(runcase_status(&r), FS_OK);
	runcase_free(&r);
	unlink(path);
	free(path);

	/* A threshold on the KL divergence reads the scores: kept anyway. */
	path = tu_write_temp(".yaml",
		"fragsim: 1\nname: budget\nsequences:\n  - {context: 300}\n"
		"data: {seed: 4}\ngolden: [out]\ncheck: {kld_mean_max: 0.01}\n");
	assert_int_equal(runcase_load(path, &r, &err), FS_OK);
	r.keep_max = 1;
	assert_int_equal(runcase_exec(&r, &err), FS_OK);
	assert_non_null(r.sim.scores);
	assert_int_equal(r.dropped, ATTN_DROP_ACC);
	assert_int_equal(runcase_status(&r), FS_OK);
	runcase_free(&r);
	unlink(path);
	free(path);
}

/*
 * INT8 PV keeps p_int8, p_scale, pv_acc and pv_tiles with acc, and they
 * count in the budget: per group of 32 keys (half of gfx936's QK tiles)
 * pv_acc alone is 16 rows x head_dim int32. With room for the scores and
 * acc alone (28800 B, and 76 tiles, 4 kv heads x 19, of 1040 B), f32 PV
 * keeps acc;
 * INT8 PV cannot keep its PV tensors with it, so acc and they are not
 * kept, and not checked: the JSON says all three.
 */
static void int8_pv_tensors_counted_in_budget(void **state)
{
	static const char *const pv[] = { "", "pv: {mode: int8}\n" };
	struct runcase r;
	struct fs_err err;

	(void)state;
	for (int i = 0; i < 2; i++) {
		char text[256], *path;

		snprintf(text, sizeof(text),
			 "fragsim: 1\nname: budget\nsequences:\n  - {context: 300}\n"
			 "data: {seed: 4}\ngolden: [out]\n%s", pv[i]);
		path = tu_write_temp(".yaml", text);
		assert_int_equal(runcase_load(path, &r, &err), FS_OK);
		r.keep_max = 24 * 300 * 4 + 76 * 1040 + 100;
		assert_int_equal(runcase_exec(&r, &err), FS_OK);
		assert_int_equal(r.dropped, i ? ATTN_DROP_ACC : 0u);
		assert_true(i ? !r.sim.pv_acc && !r.cmp.stat[CMP_ACC].ran :
			    r.cmp.stat[CMP_ACC].ran);
		runcase_free(&r);
		unlink(path);
		free(path);
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, scratch_setup, tu_scratch_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shipped_suite_passes),
		cmocka_unit_test(int8_pv_tensors_counted_in_budget),
		cmocka_unit_test(shards_partition_the_suite),
		cmocka_unit_test(per_tensor_k_scale_shows_larger_error),
		cmocka_unit_test(decode_distinct_rows),
		T(goldens_identical_for_any_thread_count),
		T(goldens_load_with_numpy),
		T(safetensors_golden),
		T(failing_checks_write_no_goldens),
		cmocka_unit_test(route_and_strict),
		cmocka_unit_test(show_fills_defaults),
		cmocka_unit_test(bad_case_is_exit_2_with_location),
		cmocka_unit_test(late_checks_name_file_line_key),
		T(given_npy_inputs),
		cmocka_unit_test(unlisted_tensors_kept_within_budget),
	};

	return cmocka_run_group_tests_name("run", tests, NULL, NULL);
}
