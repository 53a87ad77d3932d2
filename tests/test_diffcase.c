/*
 * test_diffcase.c - `fragsim diff`: the example dumps under tests/data/dumps
 * (each made by tests/data/dumps/make.sh from a case and a planted bug)
 * must get the diagnosis their expected.txt names, written by hand from
 * the plant; a clean dump passes; a dump of a kernel run on another
 * hardware map names that map; and every malformed dump is exit 2 with
 * the file's name.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../lib/diffcase.h"
#include "../lib/npy.h"
#include "../lib/profile.h"
#include "bugmodel.h"
#include "testutil.h"

#define DUMPS "tests/data/dumps"

static const char *const examples[] = {
	"clean", "c-columns", "page-walk", "page-walk-identity", "head-dim-half",
	"gqa-modulo", "split-merge", "q-position", "gfx936-quad",
};

/* The line of text starting with prefix, without its newline. */
static char *line_with(const char *text, const char *prefix)
{
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, prefix, strlen(prefix))) {
			size_t n = strcspn(p, "\n");
			char *l = malloc(n + 1);

			memcpy(l, p, n);
			l[n] = '\0';
			return l;
		}
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return strdup("");
}

static void examples_get_their_diagnosis(void **state)
{
	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(examples); i++) {
		char path[256], *want, *got;
		struct run_result r;

		snprintf(path, sizeof(path), "%s/%s/%s/expected.txt", FRAGSIM_SRC, DUMPS, examples[i]);
		want = tu_slurp(path);
		want[strcspn(want, "\n")] = '\0';
		r = tu_run("diff %s/%s/case.yaml --dump %s/%s", DUMPS, examples[i], DUMPS, examples[i]);
		got = line_with(r.out, "diagnosis:");
		if (strcmp(got, want))
			fail_msg("%s: got '%s', want '%s'\n%s%s", examples[i], got, want, r.out, r.err);
		assert_int_equal(r.status, strcmp(examples[i], "clean") ? 1 : 0);
		free(want);
		free(got);
		tu_free(&r);
	}
}

/* The labels of one mismatch, checked by hand: gfx936 holds C[0][1] in
 * lane 0 + 16 * (1 % 4) = 16, register 1 / 4 = 0. */
static void mismatches_are_labelled(void **state)
{
	struct run_result r = tu_run("diff %s/c-columns/case.yaml --dump %s/c-columns --max 3", DUMPS, DUMPS);

	(void)state;
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "acc       2560 compared, 0 mismatches\n"));
	assert_non_null(strstr(r.out, "scores    960 compared, "));
	assert_non_null(strstr(r.out, "          scores[0,0,0,1] got "));
	assert_non_null(strstr(r.out, "| seq 0, token 0, q head 0, kv head 0, key 1 (block "));
	assert_non_null(strstr(r.out, ", tile 0, C[0][1] lane 16 reg 0\n"));
	assert_non_null(strstr(r.out, "out       6144 compared, 6144 mismatches"));
	assert_non_null(strstr(r.out, "... 6141 more\n"));
	tu_free(&r);
	r = tu_run("diff %s/c-columns/case.yaml --dump %s/c-columns --json", DUMPS, DUMPS);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "\"status\": \"mismatch\""));
	assert_non_null(strstr(r.out, "\"diagnosis\": \"diagnosis: matches kernel assumption c_columns=contiguous exactly (9664/9664 elements)\""));
	tu_free(&r);
}

/* A copy of the clean dump in a fresh scratch directory; returns its
 * malloc'd path. */
static char *clean_copy(void)
{
	char *dir = malloc(64);

	assert_non_null(tu_scratch_new(dir, 64, "dump"));
	assert_int_equal(tu_sh("cp -r '%s/%s/clean/.' %s", FRAGSIM_SRC, DUMPS, dir), 0);
	return dir;
}

static void drop(char *dir)
{
	assert_int_equal(tu_scratch_free(dir), 0);
	free(dir);
}

/* Rewrite dir/name.npy with its data as another dtype or shape. */
static void rewrite(const char *dir, const char *name, enum npy_dtype dt, int ndim,
		    const size_t *shape)
{
	char path[300];
	struct npy_array a;
	struct fs_err err;
	void *buf;
	size_t n = 1;

	snprintf(path, sizeof(path), "%s/%s.npy", dir, name);
	assert_int_equal(npy_read(path, &a, &err), FS_OK);
	for (int i = 0; i < ndim; i++)
		n *= shape[i];
	buf = calloc(n, 8);
	for (size_t i = 0; i < n && i < a.count; i++) {
		double v = a.dtype == NPY_F32 ? ((float *)a.data)[i] :
			   a.dtype == NPY_I8 ? ((int8_t *)a.data)[i] : ((int32_t *)a.data)[i];

		if (dt == NPY_F32)
			((float *)buf)[i] = (float)v;
		else if (dt == NPY_F64)
			((double *)buf)[i] = v;
		else
			((int32_t *)buf)[i] = (int32_t)v;
	}
	assert_int_equal(npy_write(path, dt, ndim, shape, buf, NULL, &err), FS_OK);
	free(buf);
	npy_free(&a);
}

static void expect_input_error(const char *dir, const char *what)
{
	struct run_result r = tu_run("diff %s/clean/case.yaml --dump %s", DUMPS, dir);

	if (r.status != 2 || !strstr(r.err, what))
		fail_msg("status %d, stderr '%s', want '%s'", r.status, r.err, what);
	tu_free(&r);
}

static void malformed_dumps_are_input_errors(void **state)
{
	char *d, want[512];

	(void)state;
	d = clean_copy();
	assert_int_equal(tu_sh("truncate -s 1000 %s/acc.npy", d), 0);
	snprintf(want, sizeof(want), "fragsim: error: %s/acc.npy: ", d);
	expect_input_error(d, want);
	drop(d);

	d = clean_copy();
	rewrite(d, "scores", NPY_F64, 4, (size_t[]){ 1, 1, 24, 40 });
	snprintf(want, sizeof(want), "%s/scores.npy: scores must be float32, not float64", d);
	expect_input_error(d, want);
	drop(d);

	/* Integers given as floats: they could hold NaN or rounded values. */
	d = clean_copy();
	rewrite(d, "q_int8", NPY_F32, 4, (size_t[]){ 1, 1, 24, 256 });
	snprintf(want, sizeof(want), "%s/q_int8.npy: q_int8 must be int8, not float32", d);
	expect_input_error(d, want);
	drop(d);

	d = clean_copy();
	rewrite(d, "out", NPY_F32, 4, (size_t[]){ 1, 1, 24, 128 });
	snprintf(want, sizeof(want), "%s/out.npy: out must have shape [1, 1, 24, 256], not [1, 1, 24, 128]", d);
	expect_input_error(d, want);
	drop(d);

	d = clean_copy();
	rewrite(d, "acc", NPY_I32, 3, (size_t[]){ 12, 64, 2 });
	snprintf(want, sizeof(want), "%s/acc.npy: acc must have shape [n, 64, 4], not [12, 64, 2]", d);
	expect_input_error(d, want);
	drop(d);

	d = clean_copy();
	assert_int_equal(tu_sh("rm %s/acc_tiles.npy", d), 0);
	snprintf(want, sizeof(want), "%s/acc.npy: acc.npy needs acc_tiles.npy beside it", d);
	expect_input_error(d, want);
	drop(d);

	/* A tile at key 48 does not exist: the context is 40 keys. */
	d = clean_copy();
	{
		char path[300];
		struct npy_array a;
		struct fs_err err;

		snprintf(path, sizeof(path), "%s/acc_tiles.npy", d);
		assert_int_equal(npy_read(path, &a, &err), FS_OK);
		((int32_t *)a.data)[a.shape[1] * 2 + 3] = 48;	/* row 2, token_base */
		assert_int_equal(npy_write(path, NPY_I32, 2, a.shape, a.data, NULL, &err), FS_OK);
		npy_free(&a);
	}
	snprintf(want, sizeof(want), "%s/acc_tiles.npy: row 2 (seq 0, head 0, row_base 0, token_base 48, row_tile 0) is not a tile the case executes", d);
	expect_input_error(d, want);
	drop(d);

	/* A tensor whose name is a link to nothing is no absent tensor:
	 * taken for one, out was left out and diff said "match". */
	d = clean_copy();
	assert_int_equal(tu_sh("rm %s/out.npy && ln -s /nonexistent/out.npy %s/out.npy", d, d), 0);
	snprintf(want, sizeof(want), "fragsim: error: %s/out.npy: a link to nothing: ", d);
	expect_input_error(d, want);
	drop(d);

	d = clean_copy();
	assert_int_equal(tu_sh("rm %s/*.npy", d), 0);
	snprintf(want, sizeof(want), "%s: no dump tensors", d);
	expect_input_error(d, want);
	drop(d);
}

static void set_f32(const char *dir, const char *name, size_t i, float v, float add)
{
	char path[300];
	struct npy_array a;
	struct fs_err err;

	snprintf(path, sizeof(path), "%s/%s.npy", dir, name);
	assert_int_equal(npy_read(path, &a, &err), FS_OK);
	((float *)a.data)[i] = add != 0.0f ? ((float *)a.data)[i] + add : v;
	assert_int_equal(npy_write(path, NPY_F32, a.ndim, a.shape, a.data, NULL, &err), FS_OK);
	npy_free(&a);
}

/* Exact by default; --tol forgives small float differences, never a NaN
 * or an infinity the simulation does not have. */
static void tolerance_nan_and_inf(void **state)
{
	char *d = clean_copy();
	struct run_result r;

	(void)state;
	set_f32(d, "out", 5, 0.0f, 1e-4f);
	r = tu_run("diff %s/clean/case.yaml --dump %s", DUMPS, d);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "out       6144 compared, 1 mismatches"));
	assert_non_null(strstr(r.out, "out[0,0,0,5] got "));
	tu_free(&r);
	r = tu_run("diff %s/clean/case.yaml --dump %s --tol 1e-3", DUMPS, d);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "diagnosis: none needed"));
	tu_free(&r);
	set_f32(d, "scores", 0, NAN, 0.0f);
	set_f32(d, "scores", 1, -INFINITY, 0.0f);
	r = tu_run("diff %s/clean/case.yaml --dump %s --tol 1e30", DUMPS, d);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "scores    960 compared, 2 mismatches, max abs inf"));
	assert_non_null(strstr(r.out, "scores[0,0,0,0] got nan want "));
	assert_non_null(strstr(r.out, "scores[0,0,0,1] got -inf want "));
	assert_non_null(strstr(r.out, "diagnosis: no hypothesis reproduces the dump"));
	tu_free(&r);
	drop(d);
}

/*
 * A kernel written for gfx936 run on hardware whose C layout is really
 * gfx936-quad: run cannot make that dump (the kernel and hardware maps are
 * one there), so emulate it here and diagnose it through the library.
 */
static void hardware_map_hypothesis(void **state)
{
	struct runcase r;
	struct fs_err err;
	struct lanemap *quad;
	struct lm_report lr;
	struct attn_opts ao = { 0 };	/* exec auto, drop nothing */
	struct attn_result dev;
	struct dump d;
	struct diff_opts o = { 0.0, 0 };
	struct diff_report rep;
	struct diff_diagnosis *dg = calloc(1, sizeof(*dg));
	char line[1024];

	(void)state;
	assert_int_equal(runcase_load(FRAGSIM_SRC "/" DUMPS "/c-columns/case.yaml", &r, &err), FS_OK);
	assert_int_equal(runcase_inputs(&r, &err), FS_OK);
	assert_int_equal(runcase_emulate(&r, &r.c, NULL, &r.sim, &err), FS_OK);
	r.have_sim = 1;
	quad = profile_builtin("gfx936-quad", &err);
	assert_non_null(quad);
	assert_int_equal(lanemap_validate(quad, &lr), FS_OK);
	ao.hw = quad;
	assert_int_equal(runcase_emulate(&r, &r.c, &ao, &dev, &err), FS_OK);
	memset(&d, 0, sizeof(d));
	d.t[DUMP_SCORES] = (struct npy_array){ NPY_F32, 4, { 1, 1, 24, 40 }, 960, dev.scores };
	d.t[DUMP_OUT] = (struct npy_array){ NPY_F32, 4, { 1, 1, 24, 256 }, 6144, dev.out };
	assert_int_equal(diffcase_compare(&r, &r.sim, &d, &o, &rep, &err), FS_OK);
	assert_true(rep.mismatches > 0);
	diffcase_report_free(&rep);
	assert_int_equal(diffcase_diagnose(&r, &d, &o, dg, &err), FS_OK);
	diffcase_verdict(dg, line, sizeof(line));
	assert_string_equal(line, "diagnosis: matches hardware map gfx936-quad (kernel written for gfx936) exactly (7104/7104 elements)");
	free(dg);
	attn_free(&dev);
	lanemap_free(quad);
	runcase_free(&r);
}

/*
 * Dumps from real tensor cores (tests/data/device/README.md): an H200
 * running the case's QK^T with mma.m16n8k32 agrees with the emulation on
 * the sm80 map bit for bit, and the two device kernels with planted bugs
 * are named for the bug planted in them.
 */
static void real_device_dumps(void **state)
{
	static const struct {
		const char *kase, *dump, *diagnosis;
		int status;
	} d[] = {
		{ "sm80-decode-shuffled", "sm80-decode-shuffled", "diagnosis: none needed", 0 },
		{ "sm80-prefill-chunk", "sm80-prefill-chunk", "diagnosis: none needed", 0 },
		{ "sm80-decode-shuffled", "sm80-decode-shuffled.page_walk",
		  "diagnosis: matches kernel assumption page_walk=none exactly (8768/8768 elements)", 1 },
		{ "sm80-prefill-chunk", "sm80-prefill-chunk.head_dim_half",
		  "diagnosis: matches kernel assumption head_dim_loaded=half exactly (133848/133848 elements)", 1 },
		/* the fifth run: head_dim 80 with a window, 96 with a soft cap
		 * and ALiBi, K scales per 32 dims; outputs poisoned first */
		{ "sm80-decode-hd80-window", "sm80-decode-hd80-window", "diagnosis: none needed", 0 },
		{ "sm80-decode-hd80-window", "sm80-decode-hd80-window.page_walk",
		  "diagnosis: matches kernel assumption page_walk=none exactly (6860/6860 elements)", 1 },
		{ "sm80-prefill-hd96-cap-alibi", "sm80-prefill-hd96-cap-alibi", "diagnosis: none needed", 0 },
		{ "sm80-prefill-hd96-cap-alibi", "sm80-prefill-hd96-cap-alibi.head_dim_half",
		  "diagnosis: matches kernel assumption head_dim_loaded=half exactly (75660/75660 elements)", 1 },
		{ "sm80-decode-block32", "sm80-decode-block32", "diagnosis: none needed", 0 },
		{ "sm80-decode-block32", "sm80-decode-block32.page_walk",
		  "diagnosis: matches kernel assumption page_walk=none exactly (13024/13024 elements)", 1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		struct run_result r = tu_run("diff cases/device/%s.yaml --dump tests/data/device/%s",
					     d[i].kase, d[i].dump);

		if (r.status != d[i].status || !strstr(r.out, d[i].diagnosis))
			fail_msg("%s: exit %d\n%s%s", d[i].dump, r.status, r.out, r.err);
		tu_free(&r);
	}
}

/* dir/d: the dump `run --emulate-only` writes of case kase with the
 * kernel: line `kernel` added (a planted bug). */
static void dump_planted(const char *kase, const char *kernel, const char *dir)
{
	char planted[512], *ppath;
	struct run_result r;

	snprintf(planted, sizeof(planted), "%skernel: %s\n", kase, kernel);
	ppath = tu_write_temp(".yaml", planted);
	r = tu_run("run %s --emulate-only --out %s/d", ppath, dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	unlink(ppath);
	free(ppath);
}

/*
 * A mismatching dump of a case with block size 8 and tails: every
 * hypothesis is emulated, tail_mask among them, which reads K scales
 * outside the block table. diff used to abort there (exit 134); it must
 * name the bug planted in the dump (c_columns).
 */
static void diff_survives_reads_outside_the_table(void **state)
{
	static const char kase[] =
		"fragsim: 1\nname: tail-7-40\ncache: {block_size: 8, placement: shuffled}\n"
		"sequences:\n  - {context: 7}\n  - {context: 40}\ndata: {seed: 3}\n"
		"golden: [acc, scores, out]\n";
	char *dir = malloc(64), *path = tu_write_temp(".yaml", kase);
	struct run_result r;

	(void)state;
	assert_non_null(tu_scratch_new(dir, 64, "diff"));
	dump_planted(kase, "{c_columns: contiguous}", dir);
	r = tu_run("diff %s --dump %s/d", path, dir);
	if (r.status != 1 || !strstr(r.out, "diagnosis: matches kernel assumption c_columns=contiguous exactly"))
		fail_msg("exit %d\n%s%s", r.status, r.out, r.err);
	tu_free(&r);
	drop(dir);
	unlink(path);
	free(path);
}


/*
 * A kernel that runs key tiles its causal bound should skip (q_position:
 * future, found by a soak): its dump's acc_tiles lists tiles the correct
 * case does not execute. diff refused the dump ("is not a tile the case
 * executes") where it must compare those tiles and name the class; a
 * tile of no row tile of the case, or past the context, is still refused.
 */
static void diff_takes_tiles_a_bug_runs(void **state)
{
	static const char kase[] =
		"fragsim: 1\nname: extra-tiles\nmode: prefill\n"
		"model: {q_heads: 2, kv_heads: 1, head_dim: 64}\n"
		"sequences:\n  - {history: 0, chunk: 20}\ngolden: all\n";
	char want[512], *dir = malloc(64), *path = tu_write_temp(".yaml", kase);
	struct run_result r;

	(void)state;
	assert_non_null(tu_scratch_new(dir, 64, "extra"));
	dump_planted(kase, "{q_position: future}", dir);
	r = tu_run("diff %s --dump %s/d", path, dir);
	if (r.status != 1 || !strstr(r.out, "acc (8 tiles of 6)") ||
	    !strstr(r.out, "diagnosis: matches kernel assumption q_position=future exactly"))
		fail_msg("exit %d\n%s%s", r.status, r.out, r.err);
	tu_free(&r);
	/* token_base 32: past the context of 20, no tile a kernel can run */
	{
		char p[300];
		struct npy_array a;
		struct fs_err err;

		snprintf(p, sizeof(p), "%s/d/acc_tiles.npy", dir);
		assert_int_equal(npy_read(p, &a, &err), FS_OK);
		((int32_t *)a.data)[3] = 32;	/* row 0, token_base */
		assert_int_equal(npy_write(p, NPY_I32, 2, a.shape, a.data, NULL, &err), FS_OK);
		npy_free(&a);
	}
	r = tu_run("diff %s --dump %s/d", path, dir);
	snprintf(want, sizeof(want), "%s/d/acc_tiles.npy: row 0 (seq 0, head 0, row_base 0, "
		 "token_base 32, row_tile 0) is not a tile the case executes, nor a key tile "
		 "of one of its row tiles inside the context", dir);
	if (r.status != 2 || !strstr(r.err, want))
		fail_msg("exit %d\n%s", r.status, r.err);
	tu_free(&r);
	drop(dir);
	unlink(path);
	free(path);
}

static void usage_errors(void **state)
{
	struct run_result r = tu_run("diff %s/clean/case.yaml", DUMPS);

	(void)state;
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "give the dump directory with --dump"));
	tu_free(&r);
	r = tu_run("diff %s/clean/case.yaml --dump /nonexistent", DUMPS);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "/nonexistent: --dump: does not exist"));
	tu_free(&r);
	r = tu_run("diff %s/clean/case.yaml --dump %s/clean --tol -1", DUMPS, DUMPS);
	assert_int_equal(r.status, 2);
	tu_free(&r);
	r = tu_run("diff --help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage: fragsim diff"));
	tu_free(&r);
}

/* The numpy models are part of the suite: make test's deps install
 * python3-numpy (tools/deps.sh), so its absence is a failure that says
 * so, not a skip that would pass the class unnamed. */
static void require_numpy(void)
{
	if (tu_sh("/usr/bin/python3 -c 'import numpy' 2>/dev/null"))
		fail_msg("/usr/bin/python3 has no numpy: the block_offset models need it "
			 "(make test installs python3-numpy as root; else apt-get install python3-numpy)");
}

/*
 * block_offset: dense, named from a dump that fragsim did not write:
 * tests/data/boff/model.py (numpy, no sim/ code) recomputes the case's
 * QK^T tiles from its golden inputs with a block's start at block * one
 * dense block instead of block * the pool's stride. diff must name the
 * class exactly, and find the model's correct kernel (pool) equal.
 */
static void block_offset_named_from_an_independent_model(void **state)
{
	static const char *const kinds[2][2] = {
		{ "dense", "diagnosis: matches kernel assumption block_offset=dense exactly" },
		{ "pool", "diagnosis: none needed" },
	};
	char dir[64];

	(void)state;
	require_numpy();
	assert_non_null(tu_scratch_new(dir, 64, "boff"));
	assert_int_equal(tu_sh("cd '%s' && '%s' run tests/data/boff/case.yaml --emulate-only --out %s/golden >/dev/null",
			    FRAGSIM_SRC, FRAGSIM_BIN, dir), 0);
	for (int i = 0; i < 2; i++) {
		struct run_result r;

		assert_int_equal(tu_sh("cd '%s' && /usr/bin/python3 tests/data/boff/model.py %s/golden %s/%s %s",
				    FRAGSIM_SRC, dir, dir, kinds[i][0], kinds[i][0]), 0);
		r = tu_run("diff tests/data/boff/case.yaml --dump %s/%s", dir, kinds[i][0]);
		if (r.status != (i ? 0 : 1) || !strstr(r.out, kinds[i][1]))
			fail_msg("%s: exit %d, no '%s' in:\n%s%s", kinds[i][0], r.status, kinds[i][1],
				 r.out, r.err);
		tu_free(&r);
	}
	assert_int_equal(tu_scratch_free(dir), 0);
}

/*
 * block_offset int32 and u16, named from dumps that fragsim did not
 * write: tests/data/bwrap/model.py (numpy, no sim/ code) recomputes the
 * QK^T tiles of a sparse pool of 4,194,304 blocks from its golden
 * inputs (pool_blocks.npy naming the stored rows) with the block's byte
 * offset wrapped to int32, or its id cut to 16 bits. diff must name each
 * class exactly, and find the model's correct kernel (pool) equal.
 */
static void block_wrap_named_from_an_independent_model(void **state)
{
	static const char *const kinds[3][2] = {
		{ "int32", "diagnosis: matches kernel assumption block_offset=int32 exactly" },
		{ "u16", "diagnosis: matches kernel assumption block_offset=u16 exactly" },
		{ "pool", "diagnosis: none needed" },
	};
	char dir[64];

	(void)state;
	require_numpy();
	assert_non_null(tu_scratch_new(dir, 64, "bwrap"));
	assert_int_equal(tu_sh("cd '%s' && '%s' run tests/data/bwrap/case.yaml --emulate-only --out %s/golden >/dev/null",
			    FRAGSIM_SRC, FRAGSIM_BIN, dir), 0);
	for (int i = 0; i < 3; i++) {
		struct run_result r;

		assert_int_equal(tu_sh("cd '%s' && /usr/bin/python3 tests/data/bwrap/model.py %s/golden %s/%s %s",
				    FRAGSIM_SRC, dir, dir, kinds[i][0], kinds[i][0]), 0);
		r = tu_run("diff tests/data/bwrap/case.yaml --dump %s/%s", dir, kinds[i][0]);
		if (r.status != (i == 2 ? 0 : 1) || !strstr(r.out, kinds[i][1]))
			fail_msg("%s: exit %d, no '%s' in:\n%s%s", kinds[i][0], r.status, kinds[i][1],
				 r.out, r.err);
		tu_free(&r);
	}
	assert_int_equal(tu_scratch_free(dir), 0);
}

/*
 * h-bugs-b: a dump written by tests/bugmodel.h's plain-loop model of a
 * buggy kernel (no sim/ code), scores and out only, compared at
 * --tol 1e-4 (the model computes in double): `fragsim diff` must name
 * the class the model plants, exactly and alone.
 */
static struct run_result model_dump_diff(const char *case_text, const struct bugmodel *m,
					  const char *args);

static void model_dump_named(const char *case_text, const struct bugmodel *m,
			     const char *want)
{
	char line[256], *got;
	struct run_result res = model_dump_diff(case_text, m, "");

	got = line_with(res.out, "diagnosis:");
	snprintf(line, sizeof(line), "diagnosis: matches kernel assumption %s exactly (", want);
	if (res.status != 1 || strncmp(got, line, strlen(line)) || strstr(got, "; so do"))
		fail_msg("%s: got '%s'\n%s%s", want, got, res.out, res.err);
	free(got);
	tu_free(&res);
}

/* `fragsim diff ... --tol 1e-4 ARGS` of the model's dump (scores, out)
 * of case_text, written to a scratch directory removed after. */
static struct run_result model_dump_diff(const char *case_text, const struct bugmodel *m,
					  const char *args)
{
	char dir[64], path[128];
	struct runcase r;
	struct fs_err err;
	struct run_result res;
	size_t ns, no, shs[4], sho[4];
	double *sc, *out;
	float *f;

	assert_non_null(tu_scratch_new(dir, sizeof(dir), "model"));
	snprintf(path, sizeof(path), "%s/case.yaml", dir);
	tu_put(path, case_text);
	if (runcase_load(path, &r, &err) != FS_OK || runcase_inputs(&r, &err) != FS_OK)
		fail_msg("%s", err.msg);
	shs[0] = sho[0] = (size_t)r.in.S, shs[1] = sho[1] = (size_t)r.in.T;
	shs[2] = sho[2] = (size_t)r.in.Hq, shs[3] = (size_t)r.in.MAXCTX, sho[3] = (size_t)r.in.D;
	ns = shs[0] * shs[1] * shs[2] * shs[3], no = sho[0] * sho[1] * sho[2] * sho[3];
	sc = malloc(ns * sizeof(double)), out = malloc(no * sizeof(double));
	f = malloc((ns > no ? ns : no) * sizeof(float));
	assert_non_null(sc && out && f);
	bugmodel_run(&r, m, sc, out);
	for (size_t i = 0; i < ns; i++)
		f[i] = (float)sc[i];
	snprintf(path, sizeof(path), "%s/dump/scores.npy", dir);
	assert_int_equal(tu_sh("mkdir %s/dump", dir), 0);
	assert_int_equal(npy_write(path, NPY_F32, 4, shs, f, NULL, &err), FS_OK);
	for (size_t i = 0; i < no; i++)
		f[i] = (float)out[i];
	snprintf(path, sizeof(path), "%s/dump/out.npy", dir);
	assert_int_equal(npy_write(path, NPY_F32, 4, sho, f, NULL, &err), FS_OK);
	res = tu_run("diff %s/case.yaml --dump %s/dump --tol 1e-4 %s", dir, dir, args);
	free(sc), free(out), free(f);
	runcase_free(&r);
	assert_int_equal(tu_scratch_free(dir), 0);
	return res;
}

/* One sequence of 40 keys on blocks {4, 0, 2} of 7; a second, on {5, 1},
 * so that the logical blocks 0 and 1 belong to some sequence. */
static const char walk_case[] =
	"fragsim: 1\nname: model\nmodel: {q_heads: 8, kv_heads: 2, head_dim: 64, softmax_scale: 0.125}\n"
	"cache: {placement: table, num_blocks: 7}\n"
	"sequences:\n  - {context: 40, blocks: [4, 0, 2]}\n  - {context: 23, blocks: [5, 1]}\n"
	"data: {seed: 8}\n";

static void model_dumps_name_walks(void **state)
{
	struct bugmodel ks = { .ks_walk = BM_LOGICAL }, vw = { .v_walk = BM_LOGICAL };

	(void)state;
	model_dump_named(walk_case, &ks, "k_scale_walk=identity");
	model_dump_named(walk_case, &vw, "v_page_walk=identity");
}

/* Blocks of 8 keys, walked as blocks of 16 (tests/test_kernel.c works
 * the addresses of this table out). */
static void model_dump_names_block_size(void **state)
{
	struct bugmodel m = { .bs = 16 };

	(void)state;
	model_dump_named("fragsim: 1\nname: model\n"
			 "model: {q_heads: 8, kv_heads: 2, head_dim: 64, softmax_scale: 0.125}\n"
			 "cache: {block_size: 8, placement: table, num_blocks: 12}\n"
			 "sequences:\n  - {context: 40, blocks: [3, 0, 5, 1, 4]}\n"
			 "  - {context: 23, blocks: [2, 6, 7]}\ndata: {seed: 8}\n",
			 &m, "block_size_assumed=16");
}

static void model_dumps_name_scale_classes(void **state)
{
	struct bugmodel nk = { .no_sk = 1 }, nq = { .no_sq = 1 }, fk = { .first_key = 1 };

	(void)state;
	model_dump_named(walk_case, &nk, "scale_recovery=no_k_scale");
	model_dump_named(walk_case, &nq, "scale_recovery=no_q_scale");
	model_dump_named(walk_case, &fk, "k_scale_index=first_key");
}

/* kv_divide in decode (8 q heads over 2: unit 1 reads kv head 4 / 2 = 2,
 * past the last) and in prefill; grid_permuted in prefill, 8 q heads over
 * 4, where q heads 6 and 7 are never written. */
static void model_dumps_name_gqa_classes(void **state)
{
	static const char prefill[] =
		"fragsim: 1\nname: model\nmode: prefill\n"
		"model: {q_heads: 8, kv_heads: 4, head_dim: 64, softmax_scale: 0.125}\n"
		"cache: {placement: shuffled}\nsequences:\n  - {history: 10, chunk: 20}\n"
		"data: {seed: 8}\n";
	struct bugmodel kd = { .kv_divide = 1 }, gp = { .grid = 1 };

	(void)state;
	model_dump_named(walk_case, &kd, "gqa_map=kv_divide");
	model_dump_named(prefill, &kd, "gqa_map=kv_divide");
	model_dump_named(prefill, &gp, "gqa_map=grid_permuted");
	{
		struct bugmodel sp = { .spill = 1 };	/* 8 over 2: tile 0 reads kv head 0 */

		model_dump_named(walk_case, &sp, "gqa_map=spill");
	}
}

static void model_dumps_name_operand_loads(void **state)
{
	struct bugmodel sw = { .swap_halves = 1 }, un = { .unswizzled = 1 };

	(void)state;
	model_dump_named(walk_case, &sw, "operand_load=swap_k_halves");
	model_dump_named(walk_case, &un, "operand_load=unswizzled");
}

/* c_rows on CDNA3 16x16: believed row p gets true row 4*(p % 4) + p / 4
 * (tests/test_kernel.c works it out from the published map). */
static void model_dump_names_c_rows(void **state)
{
	int src[16];
	struct bugmodel m = { .row_src = src };

	(void)state;
	for (int p = 0; p < 16; p++)
		src[p] = 4 * (p % 4) + p / 4;
	model_dump_named("fragsim: 1\nname: model\nisa: cdna3-mfma-i32-16x16x32-i8\nmode: prefill\n"
			 "model: {q_heads: 4, kv_heads: 2, head_dim: 64, softmax_scale: 0.125}\n"
			 "cache: {placement: shuffled}\nsequences:\n  - {history: 10, chunk: 20}\n"
			 "data: {seed: 8}\n", &m, "c_rows=interleaved");
}

/*
 * Two bugs from the command line (tests/test_diffmatrix.c has the
 * library's side): bugmodel.h's dump of a kernel that reads the K
 * scales and V at the logical block, diagnosed as the pair, with the
 * pair's classes and its count in --json.
 */
static void model_dump_names_a_pair(void **state)
{
	struct bugmodel m = { .ks_walk = BM_LOGICAL, .v_walk = BM_LOGICAL };
	struct run_result res = model_dump_diff(walk_case, &m, "--json | /usr/bin/python3 -c '"
		"import json, sys; d = json.load(sys.stdin); h = d[\"hypotheses\"][0]; "
		"print(h[\"classes\"], h[\"matched\"] == h[\"compared\"], d[\"diagnosis\"][:80])'");

	(void)state;
	assert_int_equal(res.status, 0);
	assert_string_equal(res.out, "['k_scale_walk=identity', 'v_page_walk=identity'] True "
			    "diagnosis: matches kernel assumptions k_scale_walk=identity and v_page_walk=iden\n");
	tu_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(examples_get_their_diagnosis),
		cmocka_unit_test(mismatches_are_labelled),
		cmocka_unit_test(malformed_dumps_are_input_errors),
		cmocka_unit_test(tolerance_nan_and_inf),
		cmocka_unit_test(hardware_map_hypothesis),
		cmocka_unit_test(real_device_dumps),
		cmocka_unit_test(diff_survives_reads_outside_the_table),
		cmocka_unit_test(diff_takes_tiles_a_bug_runs),
		cmocka_unit_test(usage_errors),
		cmocka_unit_test(block_offset_named_from_an_independent_model),
		cmocka_unit_test(block_wrap_named_from_an_independent_model),
		/* h-bugs-b */
		cmocka_unit_test(model_dumps_name_walks),
		cmocka_unit_test(model_dump_names_block_size),
		cmocka_unit_test(model_dumps_name_scale_classes),
		cmocka_unit_test(model_dumps_name_gqa_classes),
		cmocka_unit_test(model_dumps_name_operand_loads),
		cmocka_unit_test(model_dump_names_c_rows),
		cmocka_unit_test(model_dump_names_a_pair),
	};

	return cmocka_run_group_tests_name("diff", tests, NULL, NULL);
}
