/*
 * test_fragsim_dump.c - tools/device/fragsim_dump.h, used as a kernel test
 * would use it: the CPU harness tools/device/qk_cpu.c (built once as C99
 * and once as C++) reads a golden written by `fragsim run`, runs the QK^T
 * tiles of the case and dumps acc, acc_tiles and scores through the
 * header; `fragsim diff` must find the correct dump equal (exit 0) and
 * name the bug planted in a wrong one (exit 1, "matches kernel
 * assumption ... exactly"). The expectations are fragsim's bug classes as
 * documented, not captured output. tests/data/dump_h/contract.c checks
 * the header's own promises (bad calls, atomic replace), also in both
 * languages. tests/data/dump_h/probe_cpu.c answers a probe plan as a
 * simulated gfx936-quad device would and writes probe_c.npy through the
 * header: probe solve must find it differs from gfx936 and matches
 * gfx936-quad (the worked example of probe in docs/cli.md). An MQA decode case (32
 * q heads over 1 kv head: two 16-row tiles per kv head, told apart by
 * acc_tiles' row_tile) goes through the same harness and must match too,
 * as must a decode case whose kernel packs its q-head groups (kernel:
 * decode_rows: packed), which the harness reads from the golden's
 * manifest and writes into the dump's. tools/device/attn_sm80.cu, the
 * CUDA harness, built without nvcc does the instruction on the CPU by
 * the PTX text while its kernel side uses the generated header: a dump
 * must match, a planted bug must be named, and a kernel built from a
 * wrong map of the instruction must be caught by name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "testutil.h"
#include "casekeys.h"
#include "../sim/attn/logit.h"
#include "../tools/device/fragsim_golden.h"

#include <math.h>

#define FSQ_WALK_MAX_HEADS 256

struct fixture {
	char dir[64];		/* scratch: gen/, golden-*, dumps, binaries */
	int have_cxx;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	if (!tu_scratch_new(f->dir, sizeof(f->dir), "dumph"))
		return -1;
	f->have_cxx = tu_sh("command -v %s >/dev/null 2>&1", FRAGSIM_CXX) == 0;
	/* The lane map as code, and the two goldens. */
	if (tu_sh("mkdir -p %s/gen && '%s' lanemap --isa gfx936 --format c > %s/gen/fragsim_lanemap_gfx936.h",
	       f->dir, FRAGSIM_BIN, f->dir) ||
	    tu_sh("'%s' lanemap --isa gfx936-quad --format c > %s/gen/fragsim_lanemap_gfx936_quad.h",
	       FRAGSIM_BIN, f->dir) ||
	    tu_sh("cd '%s' && '%s' run tests/data/dump_h/decode.yaml --emulate-only --out %s/golden-decode >/dev/null",
	       FRAGSIM_SRC, FRAGSIM_BIN, f->dir) ||
	    tu_sh("cd '%s' && '%s' run tests/data/dump_h/prefill.yaml --emulate-only --out %s/golden-prefill >/dev/null",
	       FRAGSIM_SRC, FRAGSIM_BIN, f->dir) ||
	    tu_sh("cd '%s' && '%s' run tests/data/dump_h/decode-mqa.yaml --emulate-only --out %s/golden-decode-mqa >/dev/null",
	       FRAGSIM_SRC, FRAGSIM_BIN, f->dir) ||
	    tu_sh("cd '%s' && '%s' run tests/data/dump_h/decode-packed.yaml --emulate-only --out %s/golden-decode-packed >/dev/null",
	       FRAGSIM_SRC, FRAGSIM_BIN, f->dir))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int rc = tu_scratch_free(f->dir);

	free(f);
	return rc;
}

/* Build a program from FRAGSIM_SRC/src with compiler cc into dir/out. */
static int build(const struct fixture *f, const char *cc, const char *src,
		 const char *out)
{
	return tu_sh("cd '%s' && %s -Wall -Wextra -Werror -O1 -ffp-contract=off -I%s/gen -Itools/device "
		  "-DFSQ_LANEMAP='\"fragsim_lanemap_gfx936.h\"' -DFSQ_LM=fs_gfx936 -DFSQ_LMU=FS_GFX936 "
		  "%s -o %s/%s -lm", FRAGSIM_SRC, cc, f->dir, src, f->dir, out);
}

/* Dump case `mode` with harness `bin` (planting bug, "" for none), diff. */
static struct run_result dump_and_diff(const struct fixture *f, const char *bin,
				       const char *mode, const char *bug)
{
	char dump[256];

	snprintf(dump, sizeof(dump), "%s/dump-%s-%s-%s", f->dir, bin, mode,
		 bug[0] ? bug : "clean");
	assert_int_equal(tu_sh("%s/%s %s/golden-%s %s %s >/dev/null", f->dir, bin, f->dir,
			    mode, dump, bug), 0);
	return tu_run("diff tests/data/dump_h/%s.yaml --dump %s", mode, dump);
}

static void harness(void **state, const char *bin)
{
	static const struct {
		const char *bug, *diagnosis;
	} bugs[] = {
		{ "", "diagnosis: none needed" },
		{ "c_columns", "diagnosis: matches kernel assumption c_columns=contiguous exactly" },
		{ "page_walk", "diagnosis: matches kernel assumption page_walk=none exactly" },
		{ "head_dim_half", "diagnosis: matches kernel assumption head_dim_loaded=half exactly" },
	};
	static const char *const modes[] = { "decode", "prefill" };
	struct fixture *f = *state;

	for (size_t m = 0; m < 2; m++)
		for (size_t i = 0; i < sizeof(bugs) / sizeof(bugs[0]); i++) {
			struct run_result r = dump_and_diff(f, bin, modes[m], bugs[i].bug);

			if (!strstr(r.out, bugs[i].diagnosis))
				fail_msg("%s %s %s: no '%s' in:\n%s%s", bin, modes[m],
					 bugs[i].bug, bugs[i].diagnosis, r.out, r.err);
			assert_int_equal(r.status, bugs[i].bug[0] ? 1 : 0);
			/* The dump holds what the header was given, no more. */
			assert_non_null(strstr(r.out, "absent, not compared: out, q_int8, q_scale"));
			tu_free(&r);
		}
}

static void c_harness_dumps_and_diff_names_the_bug(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(build(f, FRAGSIM_CC " -std=c99 -pedantic", "tools/device/qk_cpu.c",
			       "qk_c"), 0);
	harness(state, "qk_c");
}

static void cxx_harness_dumps_and_diff_names_the_bug(void **state)
{
	struct fixture *f = *state;

	if (!f->have_cxx)
		skip();
	/* Also the byte-by-byte fragment loads, the C build has the 8-byte ones. */
	assert_int_equal(build(f, FRAGSIM_CXX " -x c++ -pedantic -DFSQ_GATHER", "tools/device/qk_cpu.c",
			       "qk_cxx"), 0);
	harness(state, "qk_cxx");
}

/*
 * A decode group of 32 q heads fills two row tiles of 16 rows per kv
 * head; row r of row tile 1 is q head 16 + r. A harness that took every
 * tile's rows as heads 0..15 would leave heads 16..31 without scores and
 * give row tile 1 the wrong accumulators, and diff would say so.
 */
static void mqa_group_over_16_rows_dumps_and_matches(void **state)
{
	struct fixture *f = *state;
	struct run_result r;

	assert_int_equal(build(f, FRAGSIM_CC " -std=c99 -pedantic", "tools/device/qk_cpu.c",
			       "qk_mqa"), 0);
	r = dump_and_diff(f, "qk_mqa", "decode-mqa", "");
	if (r.status != 0 || !strstr(r.out, "diagnosis: none needed"))
		fail_msg("exit %d:\n%s%s", r.status, r.out, r.err);
	tu_free(&r);
	r = dump_and_diff(f, "qk_mqa", "decode-mqa", "c_columns");
	if (r.status != 1 ||
	    !strstr(r.out, "diagnosis: matches kernel assumption c_columns=contiguous exactly"))
		fail_msg("exit %d:\n%s%s", r.status, r.out, r.err);
	tu_free(&r);
}

/* Packed rows: q head g*G + m in row m < G, zero rows after. */
static void packed_decode_rows_dump_and_match(void **state)
{
	static const char *const bugs[][2] = {
		{ "", "diagnosis: none needed" },
		{ "c_columns", "diagnosis: matches kernel assumption c_columns=contiguous exactly" },
		{ "page_walk", "diagnosis: matches kernel assumption page_walk=none exactly" },
	};
	struct fixture *f = *state;
	char path[256], *manifest;

	assert_int_equal(build(f, FRAGSIM_CC " -std=c99 -pedantic", "tools/device/qk_cpu.c",
			       "qk_packed"), 0);
	for (size_t i = 0; i < sizeof(bugs) / sizeof(bugs[0]); i++) {
		struct run_result r = dump_and_diff(f, "qk_packed", "decode-packed", bugs[i][0]);

		if (r.status != (i ? 1 : 0) || !strstr(r.out, bugs[i][1]))
			fail_msg("%s: exit %d:\n%s%s", bugs[i][0], r.status, r.out, r.err);
		tu_free(&r);
	}
	snprintf(path, sizeof(path), "%s/dump-qk_packed-decode-packed-clean/manifest.json", f->dir);
	manifest = tu_slurp(path);
	assert_non_null(strstr(manifest, "\"decode_rows\": \"packed\""));
	free(manifest);
}

/* attn_sm80.cu without nvcc, on the header of map (a builtin or YAML). */
static int build_sm80(const struct fixture *f, const char *map, const char *out)
{
	if (tu_sh("'%s' lanemap --isa %s/%s --format c > %s/gen/%s.h", FRAGSIM_BIN, FRAGSIM_SRC,
	       map, f->dir, out))
		return -1;
	return tu_sh("cd '%s' && %s -x c++ -pedantic -Wall -Wextra -Werror -O1 -ffp-contract=off -I%s/gen -Itools/device "
		  "-DFSQ_LANEMAP='\"%s.h\"' -DFSQ_LM=%s -DFSQ_LMU=%s tools/device/attn_sm80.cu "
		  "-o %s/%s -lm", FRAGSIM_SRC, FRAGSIM_CXX, f->dir, out,
		  strstr(map, "swapped") ? "fs_sm80_c_pairs_swapped" : "fs_sm80_mma_m16n8k32_s8",
		  strstr(map, "swapped") ? "FS_SM80_C_PAIRS_SWAPPED" : "FS_SM80_MMA_M16N8K32_S8",
		  f->dir, out);
}

static void cuda_harness_without_nvcc_matches_and_names_the_bug(void **state)
{
	static const char *const bugs[][2] = {
		{ "none", "diagnosis: none needed" },
		{ "page_walk", "diagnosis: matches kernel assumption page_walk=none exactly" },
		{ "head_dim_half", "diagnosis: matches kernel assumption head_dim_loaded=half exactly" },
	};
	struct fixture *f = *state;

	if (!f->have_cxx)
		skip();
	assert_int_equal(build_sm80(f, "profiles/sm80-mma-m16n8k32-s8.yaml", "attn_sm80"), 0);
	assert_int_equal(tu_sh("cd '%s' && '%s' run cases/device/sm80-decode-g8-bs1.yaml --emulate-only "
			    "--out %s/golden-sm80 >/dev/null", FRAGSIM_SRC, FRAGSIM_BIN, f->dir), 0);
	for (size_t i = 0; i < sizeof(bugs) / sizeof(bugs[0]); i++) {
		struct run_result r;

		assert_int_equal(tu_sh("%s/attn_sm80 %s/golden-sm80 %s/sm80-%s %s >/dev/null", f->dir,
				    f->dir, f->dir, bugs[i][0], bugs[i][0]), 0);
		r = tu_run("diff cases/device/sm80-decode-g8-bs1.yaml --dump %s/sm80-%s", f->dir,
			   bugs[i][0]);
		if (r.status != (i ? 1 : 0) || !strstr(r.out, bugs[i][1]))
			fail_msg("%s: exit %d:\n%s%s", bugs[i][0], r.status, r.out, r.err);
		tu_free(&r);
	}
	/* No wrong belief about C columns to plant on this map: refused. */
	assert_int_equal(tu_sh("%s/attn_sm80 %s/golden-sm80 %s/sm80-cc c_columns 2>/dev/null", f->dir,
			    f->dir, f->dir), 2);
}

/*
 * The kernel side reads the generated header: built from a wrong map
 * (a lane's two C columns exchanged), its scores land under the wrong
 * keys, and diff names the map the stand-in hardware really has.
 */
static void cuda_harness_on_a_wrong_map_is_caught(void **state)
{
	struct fixture *f = *state;
	struct run_result r;

	if (!f->have_cxx)
		skip();
	assert_int_equal(build_sm80(f, "tests/data/dump_h/sm80-c-pairs-swapped.yaml", "attn_wrong"),
			 0);
	assert_int_equal(tu_sh("cd '%s' && '%s' run tests/data/dump_h/sm80-wrong-map.yaml --emulate-only "
			    "--out %s/golden-wrong >/dev/null && %s/attn_wrong %s/golden-wrong "
			    "%s/dump-wrong >/dev/null", FRAGSIM_SRC, FRAGSIM_BIN, f->dir, f->dir, f->dir,
			    f->dir), 0);
	r = tu_run("diff tests/data/dump_h/sm80-wrong-map.yaml --dump %s/dump-wrong", f->dir);
	if (r.status != 1 ||
	    !strstr(r.out, "diagnosis: matches hardware map sm80-mma-m16n8k32-s8 (kernel written for "
			   "sm80-c-pairs-swapped) exactly"))
		fail_msg("exit %d:\n%s%s", r.status, r.out, r.err);
	tu_free(&r);
	/* Against the PTX map's case (same inputs): the instruction was fed
	 * right, so acc agrees, but the scores went to the swapped keys. A
	 * kernel side with its own copy of the map would match here. */
	r = tu_run("diff cases/device/sm80-decode-g8-bs1.yaml --dump %s/dump-wrong", f->dir);
	if (r.status != 1 || !strstr(r.out, "acc       3392 compared, 0 mismatches") ||
	    !strstr(r.out, "scores    3072 compared, 1696 mismatches"))
		fail_msg("exit %d:\n%s%s", r.status, r.out, r.err);
	tu_free(&r);
}

/*
 * attn_run.py, the driver a GPU user runs: it writes the header with
 * fragsim (or takes --lanemap) before it builds. nvcc's stand-in builds
 * for the CPU, so the flow is the GPU's but for the instruction.
 */
static void attn_run_builds_on_the_generated_header(void **state)
{
	struct fixture *f = *state;
	struct run_result r;

	if (!f->have_cxx || tu_sh("command -v python3 >/dev/null 2>&1"))
		skip();
	assert_int_equal(tu_sh("cd '%s' && '%s' run cases/device/sm80-decode-g8-bs1.yaml --emulate-only "
			    "--out %s/golden-run >/dev/null", FRAGSIM_SRC, FRAGSIM_BIN, f->dir), 0);
	assert_int_equal(tu_sh("cd '%s' && NVCC=tests/data/dump_h/nvcc-cpu CXX='%s' FRAGSIM='%s' "
			    "python3 tools/device/attn_run.py %s/golden-run %s/run-hd "
			    "--bug head_dim_half >/dev/null", FRAGSIM_SRC, FRAGSIM_CXX, FRAGSIM_BIN,
			    f->dir, f->dir), 0);
	r = tu_run("diff cases/device/sm80-decode-g8-bs1.yaml --dump %s/run-hd", f->dir);
	if (r.status != 1 ||
	    !strstr(r.out, "diagnosis: matches kernel assumption head_dim_loaded=half exactly"))
		fail_msg("exit %d:\n%s%s", r.status, r.out, r.err);
	tu_free(&r);
	/* Without fragsim: a header written elsewhere; a non-header refused. */
	assert_int_equal(tu_sh("'%s' lanemap --isa sm80-mma-m16n8k32-s8 --format c > %s/lm.h && "
			    "cd '%s' && NVCC=tests/data/dump_h/nvcc-cpu CXX='%s' FRAGSIM=/nonexistent "
			    "python3 tools/device/attn_run.py %s/golden-run %s/run-lm --lanemap %s/lm.h "
			    ">/dev/null", FRAGSIM_BIN, f->dir, FRAGSIM_SRC, FRAGSIM_CXX, f->dir, f->dir,
			    f->dir), 0);
	r = tu_run("diff cases/device/sm80-decode-g8-bs1.yaml --dump %s/run-lm", f->dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	assert_int_equal(tu_sh("cd '%s' && python3 tools/device/attn_run.py %s/golden-run %s/run-x "
			    "--lanemap tests/data/dump_h/decode.yaml 2>/dev/null", FRAGSIM_SRC, f->dir,
			    f->dir), 2);
	assert_int_equal(tu_sh("cd '%s' && FRAGSIM=/nonexistent python3 tools/device/attn_run.py "
			    "%s/golden-run %s/run-x 2>/dev/null", FRAGSIM_SRC, f->dir, f->dir), 3);
	assert_int_equal(tu_sh("test -e %s/run-x", f->dir), 1);
}

/* A golden of a fragsim before row_tile: acc_tiles (1, 4). */
static void four_column_golden_is_refused_by_name(void **state)
{
	static const char head[] = "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 4), }";
	const int32_t row[4] = { 0, 0, 0, 0 };
	struct fixture *f = *state;
	unsigned char magic[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0 };
	char path[256], pad[128];
	size_t len = strlen(head), hlen = (10 + len + 1 + 63) / 64 * 64 - 10;
	FILE *fp;

	assert_int_equal(build(f, FRAGSIM_CC " -std=c99 -pedantic", "tools/device/qk_cpu.c",
			       "qk_old"), 0);
	assert_int_equal(tu_sh("rm -rf %s/golden-old && cp -r %s/golden-decode %s/golden-old",
			    f->dir, f->dir, f->dir), 0);
	snprintf(path, sizeof(path), "%s/golden-old/acc_tiles.npy", f->dir);
	fp = fopen(path, "wb");
	assert_non_null(fp);
	/* NumPy 1.0: magic, version, header length, the header padded with
	 * spaces and a '\n' so the data starts at a multiple of 64. */
	magic[8] = (unsigned char)hlen;
	memset(pad, ' ', sizeof(pad));
	pad[hlen - len - 1] = '\n';
	fwrite(magic, 1, sizeof(magic), fp);
	fwrite(head, 1, len, fp);
	fwrite(pad, 1, hlen - len, fp);
	fwrite(row, sizeof(row), 1, fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(tu_sh("%s/qk_old %s/golden-old %s/dump-old 2> %s/old.err", f->dir, f->dir,
			    f->dir, f->dir), 2);
	snprintf(path, sizeof(path), "%s/old.err", f->dir);
	{
		char *err = tu_slurp(path);

		if (!strstr(err, "golden-old/acc_tiles.npy: 4 columns, not 5 (seq, head, row_base, token_base, row_tile)"))
			fail_msg("%s", err);
		free(err);
	}
}

/*
 * Case features the harnesses do not implement are refused by name from
 * the manifest (fsg_unsupported), not read as if they were the layout
 * the harness knows: a per_head K scale is f32 [Hkv], which the harness
 * would index as [NB][BS][Hkv].
 */
static void unsupported_case_features_are_refused_by_name(void **state)
{
	static const struct { const char *cache, *msg; } cases[] = {
		{ "{k_scale: per_head}", "case key cache.k_scale is per_head: the harnesses read K scales per (token, kv head), per tensor or per 32 dims" },
		{ "{block_stride: 24576}", "case key cache.block_stride is 24576: the harnesses address a dense pool" },
		/* past 65,536 blocks: stored sparse, rows named by pool_blocks */
		{ "{placement: reversed, num_blocks: 70000}", "a sparse pool (only the blocks the tables name are stored, rows named by pool_blocks.npy): the harnesses address a dense pool" },
		/* the PV half folds a per-token V scale into P; [Hkv, D] scales
		 * read as [NB][BS][Hkv] would be wrong values, not an error */
		{ "{v_scale: per_channel}\\npv: {mode: int8}", "case key cache.v_scale is per_channel: this harness's INT8 PV folds a per-token V scale into P" },
	};
	struct fixture *f = *state;

	assert_int_equal(build(f, FRAGSIM_CC " -std=c99 -pedantic", "tools/device/qk_cpu.c",
			       "qk_feat"), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[256], *err;

		snprintf(path, sizeof(path), "%s/feat.yaml", f->dir);
		tu_put(path, "fragsim: 1\nname: feat\nmode: decode\n");
		assert_int_equal(tu_sh("printf 'cache: %s\\nsequences:\\n  - {context: 40}\\n"
				    "golden: [inputs, acc]\\n' >> %s", cases[i].cache, path), 0);
		assert_int_equal(tu_sh("rm -rf %s/golden-feat && '%s' run %s --emulate-only --out %s/golden-feat >/dev/null",
				    f->dir, FRAGSIM_BIN, path, f->dir), 0);
		assert_int_equal(tu_sh("%s/qk_feat %s/golden-feat %s/dump-feat 2> %s/feat.err", f->dir,
				    f->dir, f->dir, f->dir), 2);
		snprintf(path, sizeof(path), "%s/feat.err", f->dir);
		err = tu_slurp(path);
		if (!strstr(err, cases[i].msg))
			fail_msg("%s: no '%s' in: %s", cases[i].cache, cases[i].msg, err);
		free(err);
		assert_int_equal(tu_sh("test -e %s/dump-feat", f->dir), 1);
	}
}

static void header_contract(void **state)
{
	struct fixture *f = *state;
	const char *cc[2] = { FRAGSIM_CC " -std=c99 -pedantic", FRAGSIM_CXX " -x c++ -pedantic" };

	for (int i = 0; i < 1 + f->have_cxx; i++) {
		char out[128];

		tu_sh("rm -rf %s/contract && mkdir %s/contract", f->dir, f->dir);
		assert_int_equal(build(f, cc[i], "tests/data/dump_h/contract.c", "contract-bin"), 0);
		snprintf(out, sizeof(out), "%s/contract.txt", f->dir);
		if (tu_sh("%s/contract-bin %s/contract > %s", f->dir, f->dir, out)) {
			char *text = tu_slurp(out);

			fail_msg("%s:\n%s", cc[i], text);
		}
	}
}

/*
 * One harness on one changed case of docs/case-keys.md: it must either
 * run and match (`fragsim diff` exit 0) or refuse the golden (exit 2)
 * naming the key. Returns 1 when it ran, 0 when it refused, -1 when
 * fragsim itself refuses the case on this harness's isa (operand_order
 * kq on a 16x8 tile): no golden, nothing for a harness to honour.
 */
/* Does err name key, or a key the row's setup cells set ("p=v; p=v")? A
 * refusal may be of the setup (kernel.block_offset needs a block_stride,
 * which the harnesses refuse first). */
static int names_key(const char *err, const char *key, const char *setup)
{
	char p[80];

	if (strstr(err, strncmp(key, "data.", 5) ? key : "data."))
		return 1;
	for (const char *c = setup; c && *c; ) {
		const char *eq = strchr(c, '='), *end = strchr(c, ';');
		size_t n;

		if (!eq)
			break;
		while (*c == ' ')
			c++;
		n = (size_t)(eq - c) < sizeof(p) - 1 ? (size_t)(eq - c) : sizeof(p) - 1;
		memcpy(p, c, n), p[n] = '\0';
		if (n && strstr(err, p))
			return 1;
		c = end ? end + 1 : eq + strlen(eq);
	}
	return 0;
}

static int harness_on_key(const struct fixture *f, const char *bin, const char *dir,
			  const char *key, const char *setup, const char *cpath)
{
	struct run_result r;
	int rc;

	r = tu_run("run %s --emulate-only --out %s/g", cpath, dir);
	if (r.status == 2 && strstr(r.err, strrchr(key, '.') ? strrchr(key, '.') + 1 : key)) {
		tu_free(&r);
		return -1;
	}
	if (r.status)
		fail_msg("%s: fragsim run: exit %d: %s", key, r.status, r.err);
	tu_free(&r);
	rc = tu_sh("%s/%s %s/g %s/d >/dev/null 2>%s/err", f->dir, bin, dir, dir, dir);
	if (rc == 2) {
		char p[400], *err;

		snprintf(p, sizeof(p), "%s/err", dir);
		err = tu_slurp(p);
		/* data.*.x: the refusal names data.q.x, data.k.x or data.v.x */
		if (!names_key(err, key, setup))
			fail_msg("%s: %s refused the golden without naming the key: %s", key, bin, err);
		free(err);
		return 0;
	}
	if (rc)
		fail_msg("%s: %s: exit %d", key, bin, rc);
	r = tu_run("diff %s --dump %s/d", cpath, dir);
	if (r.status || !strstr(r.out, "verdict   match"))
		fail_msg("%s: %s ran but its dump does not match: exit %d\n%s%s", key, bin,
			 r.status, r.out, r.err);
	tu_free(&r);
	return 1;
}

/*
 * No case feature is accepted and then ignored by a device harness: every
 * key docs/case-keys.md changes the goldens with, applied to its base
 * case, goes through the CPU harness (qk_cpu.c, gfx936) and the CUDA
 * harness's CPU twin (attn_sm80.cu, sm80), which share fragsim_golden.h's
 * key table and qk_tile.h's score recovery. Each runs and matches or
 * refuses by name; the features the harnesses claim (soft cap, ALiBi,
 * the window, the K scale granularities, head dims, decode rows) must
 * run.
 */
static void harnesses_walk_every_case_key(void **state)
{
	static const char *const must_run[] = {
		"model.soft_cap", "model.alibi", "model.sliding_window", "model.head_dim",
		"cache.k_scale", "kernel.decode_rows", "cache.placement", "mode",
		"pv.mode", "pv.regroup", "split_k.segment", "quant.rounding", "quant.clip",
	};
	static const struct {
		const char *bin, *isa;
	} hs[] = { { "qk_walk", "gfx936" }, { "sm80_walk", "sm80-mma-m16n8k32-s8" } };
	struct fixture *f = *state;
	static struct doc d;
	char dir[300], cpath[400];
	int ran = 0, refused = 0;

	doc_load(&d);
	assert_int_equal(build(f, FRAGSIM_CC " -std=c99 -pedantic", "tools/device/qk_cpu.c",
			       "qk_walk"), 0);
	if (f->have_cxx)
		assert_int_equal(build_sm80(f, "profiles/sm80-mma-m16n8k32-s8.yaml", "sm80_walk"), 0);
	snprintf(dir, sizeof(dir), "%s/walk", f->dir);
	snprintf(cpath, sizeof(cpath), "%s/case.yaml", dir);
	assert_int_equal(tu_sh("mkdir -p %s", dir), 0);
	{
		/* data.*.npy=*.npy reads these (the shapes of the base case) */
		int dims[3][4] = { { 1, 2, 4, 64 }, { 1, 40, 2, 64 }, { 1, 40, 2, 64 } };

		for (int i = 0; i < 3; i++) {
			char p[400];

			snprintf(p, sizeof(p), "%s/%c.npy", dir, "qkv"[i]);
			write_npy(p, dims[i], 4, 5 + 2 * i);
		}
	}
	for (size_t h = 0; h < (f->have_cxx ? 2u : 1u); h++)
		for (int i = 0; i < d.n; i++) {
			const struct row *row = &d.rows[i];
			const char *stars = strstr(row->key, "data.*") ? "qkv" : "-";

			if (!row->yes)
				continue;
			for (const char *st = stars; *st; st++) {
				struct caseset cs = { .n = 0 };
				char isa[120], key[80];
				int r;

				snprintf(isa, sizeof(isa), "isa=%s", hs[h].isa);
				apply(&cs, d.base, 0);
				apply(&cs, isa, 0);
				apply(&cs, row->setup, *st == '-' ? 0 : *st);
				apply(&cs, row->change, *st == '-' ? 0 : *st);
				write_case(&cs, cpath);
				snprintf(key, sizeof(key), "%s", row->key);
				if (*st != '-')
					key[5] = *st;
				r = harness_on_key(f, hs[h].bin, dir, key, row->setup, cpath);
				ran += r == 1, refused += r == 0;
				for (size_t m = 0; m < sizeof(must_run) / sizeof(must_run[0]); m++)
					if (!r && !strcmp(key, must_run[m]))
						fail_msg("%s: %s refuses %s, which it claims to apply",
							 key, hs[h].bin, row->change);
			}
		}
	print_message("harnesses: %d changed cases ran and matched, %d refused by name\n", ran,
		      refused);
	assert_true(ran > 0 && refused > 0);
}

/* K scales per 32 dims (f16 in the golden, one accumulator per K-step):
 * the CPU harness and the CUDA harness's CPU twin run them and match. */
static void per_block32_runs_and_matches(void **state)
{
	static const struct {
		const char *bin, *src, *cs;
	} runs[] = {
		{ "qk_b32", "qk_cpu", "cases/edge/k-scale-per_block32.yaml" },
		{ "sm80_b32", "attn_sm80", "cases/device/sm80-decode-block32.yaml" },
	};
	struct fixture *f = *state;
	char hd32[300];

	/* head_dim 32: one K-step, whose score is still (acc sK) sQ scale in
	 * fragsim's order, not acc sQ sK scale (a soak found 7 of 16 scores
	 * an ulp off on every harness) */
	assert_int_equal(build(f, FRAGSIM_CC " -std=c99 -pedantic", "tools/device/qk_cpu.c",
			       "qk_b32"), 0);
	if (f->have_cxx)
		assert_int_equal(build_sm80(f, "profiles/sm80-mma-m16n8k32-s8.yaml", "sm80_b32"), 0);
	for (size_t i = 0; i < (f->have_cxx ? 2u : 1u); i++) {
		char text[300];

		snprintf(hd32, sizeof(hd32), "%s/b32-hd32-%s.yaml", f->dir, runs[i].src);
		snprintf(text, sizeof(text), "fragsim: 1\nname: b32-hd32\nisa: %s\n"
			 "model: {q_heads: 1, kv_heads: 1, head_dim: 32}\n"
			 "cache: {k_scale: per_block32}\nsequences:\n  - {context: 16}\n"
			 "golden: all\n", i ? "sm80-mma-m16n8k32-s8" : "gfx936");
		tu_put(hd32, text);
		for (int h = 0; h < 2; h++) {
			const char *cs = h ? hd32 : runs[i].cs;
			struct run_result r;

			assert_int_equal(tu_sh("cd '%s' && rm -rf %s/g-%s %s/d-%s && '%s' run %s --emulate-only --out %s/g-%s >/dev/null && "
					    "%s/%s %s/g-%s %s/d-%s >/dev/null", FRAGSIM_SRC, f->dir, runs[i].bin,
					    f->dir, runs[i].bin, FRAGSIM_BIN, cs, f->dir, runs[i].bin, f->dir,
					    runs[i].bin, f->dir, runs[i].bin, f->dir, runs[i].bin), 0);
			r = tu_run("diff %s --dump %s/d-%s", cs, f->dir, runs[i].bin);
			if (r.status || !strstr(r.out, "verdict   match") ||
			    (h && !strstr(r.out, "scores")))
				fail_msg("%s on %s: exit %d\n%s%s", runs[i].bin, cs, r.status, r.out, r.err);
			tu_free(&r);
		}
	}
}

/* A block table longer than a line: fragsim's case text wraps the flow
 * list, and the harnesses' walk reads past its continuation line (it
 * refused the golden with "cannot read line", naming no key; found by a
 * soak of random cases). */
static void wrapped_block_table_is_read(void **state)
{
	struct fixture *f = *state;
	char cs[300];
	struct run_result r;

	snprintf(cs, sizeof(cs), "%s/wrap.yaml", f->dir);
	tu_put(cs, "fragsim: 1\nname: table-wrap\ndescription: \"brackets [ { in quotes\"\n"
	       "model: {q_heads: 2, kv_heads: 1, head_dim: 32}\n"
	       "cache: {block_size: 1, placement: table, num_blocks: 24}\n"
	       "sequences:\n  - {context: 24, blocks: [20, 11, 23, 17, 21, 13, 5, 10, 9, 6, 0, 7, 1, "
	       "19, 16, 12, 22, 14, 15, 3, 8, 2, 18, 4]}\nsplit_k: {segment: 8}\n"
	       "golden: [inputs, acc]\n");
	assert_int_equal(build(f, FRAGSIM_CC " -std=c99 -pedantic", "tools/device/qk_cpu.c", "qk_wrap"),
			 0);
	assert_int_equal(tu_sh("rm -rf %s/g-wrap && '%s' run %s --emulate-only --out %s/g-wrap >/dev/null && "
			    "grep -q '12,\\\\n  *22, 14' %s/g-wrap/manifest.json && "
			    "%s/qk_wrap %s/g-wrap %s/d-wrap >/dev/null", f->dir, FRAGSIM_BIN, cs, f->dir,
			    f->dir, f->dir, f->dir, f->dir), 0);
	r = tu_run("diff %s --dump %s/d-wrap", cs, f->dir);
	if (r.status || !strstr(r.out, "verdict   match"))
		fail_msg("exit %d\n%s%s", r.status, r.out, r.err);
	tu_free(&r);
}

/* A key the harnesses do not know (a later fragsim's) refuses the golden:
 * the walk above cannot see a key the table of docs/case-keys.md lacks. */
static void unknown_case_key_is_refused(void **state)
{
	struct fixture *f = *state;
	char err[400], *text;

	assert_int_equal(build(f, FRAGSIM_CC " -std=c99 -pedantic", "tools/device/qk_cpu.c",
			       "qk_unknown"), 0);
	assert_int_equal(tu_sh("cp -r %s/golden-decode %s/golden-unknown && "
			    "sed -i 's/\\\\ncache:\\\\n/\\\\ncache:\\\\n  page_stride: 2\\\\n/' "
			    "%s/golden-unknown/manifest.json", f->dir, f->dir, f->dir), 0);
	assert_int_equal(tu_sh("%s/qk_unknown %s/golden-unknown %s/d-unknown 2>%s/unknown.err",
			    f->dir, f->dir, f->dir, f->dir), 2);
	snprintf(err, sizeof(err), "%s/unknown.err", f->dir);
	text = tu_slurp(err);
	if (!strstr(text, "case key cache.page_stride is unknown to the harnesses"))
		fail_msg("%s", text);
	free(text);
}

/* The harnesses' ALiBi slopes (fragsim_golden.h, from the paper's
 * formula) are fragsim's bits, for every head count fragsim takes. */
static void harness_alibi_slopes_are_fragsims(void **state)
{
	(void)state;
	for (int H = 1; H <= FSQ_WALK_MAX_HEADS; H++)
		for (int h = 0; h < H; h++) {
			float want = logit_alibi_slope(h, H), got = fsg_alibi_slope(h, H);

			if (memcmp(&got, &want, sizeof(got)))
				fail_msg("H %d h %d: %a, fragsim %a", H, h, (double)got, (double)want);
		}
}

/*
 * A kernel that never writes part of its output: the harness pre-fills
 * with the dump's poison, so diff reports those entries as unwritten, not
 * as wrong values or as masked keys. Here one tile's accumulators are
 * put back to poison after the run.
 */
static void unwritten_entries_are_named(void **state)
{
	struct fixture *f = *state;
	struct run_result r;

	assert_int_equal(build(f, FRAGSIM_CC " -std=c99 -pedantic", "tools/device/qk_cpu.c",
			       "qk_poison"), 0);
	assert_int_equal(tu_sh("%s/qk_poison %s/golden-decode %s/d-poison >/dev/null", f->dir,
			    f->dir, f->dir), 0);
	/* acc.npy: the first tile's 256 int32 after the 128-byte header */
	assert_int_equal(tu_sh("python3 -c \"import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); "
			    "b[128:128+1024]=bytes([0x5a])*1024; open(p,'wb').write(b)\" %s/d-poison/acc.npy",
			    f->dir), 0);
	r = tu_run("diff tests/data/dump_h/decode.yaml --dump %s/d-poison", f->dir);
	if (r.status != 1 || !strstr(r.out, "never written: the dump's poison") ||
	    !strstr(r.out, "got unwritten want"))
		fail_msg("exit %d:\n%s%s", r.status, r.out, r.err);
	tu_free(&r);
}

/* A dump whose parent directories do not exist yet: made, as --out does. */
static void dump_parents_are_made(void **state)
{
	struct fixture *f = *state;
	struct run_result r;

	assert_int_equal(build(f, FRAGSIM_CC " -std=c99 -pedantic", "tools/device/qk_cpu.c",
			       "qk_parents"), 0);
	assert_int_equal(tu_sh("%s/qk_parents %s/golden-decode %s/no/such/dir/dump >/dev/null",
			    f->dir, f->dir, f->dir), 0);
	r = tu_run("diff tests/data/dump_h/decode.yaml --dump %s/no/such/dir/dump", f->dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
	/* A parent that is a file: named. */
	assert_int_equal(tu_sh("touch %s/afile && %s/qk_parents %s/golden-decode %s/afile/dump "
			    "2>%s/parents.err; test $? = 3 && grep -q 'afile: not a directory' %s/parents.err",
			    f->dir, f->dir, f->dir, f->dir, f->dir, f->dir), 0);
}

/*
 * INT8 PV (tools/device/pv_tile.h) on the harnesses' CPU twins: the CUDA
 * harness's (sm80, the instruction by the PTX text) and qk_cpu.c
 * (gfx936 and CDNA3, the instruction by the lane map). A correct dump
 * matches in every tensor, p_int8, p_scale, pv_acc and out among them,
 * with either regroup, split-K and half_to_even rounding; the planted
 * p_regroup_none is named exactly; where the map cannot keep P in its C
 * registers (CDNA3), the plant is refused by name, as fragsim refuses
 * v_permuted there.
 */
static void int8_pv_matches_and_names_p_regroup_none(void **state)
{
	static const char *const extra[][2] = {
		/* tests/data/dump_h/sm80-pv-int8-splitk.yaml with the other
		 * regroup, and a sequence of no keys */
		{ "sm80-split", "isa: sm80-mma-m16n8k32-s8\nmodel: {q_heads: 8, kv_heads: 2, head_dim: 64, sliding_window: 50}\n"
		  "split_k: {segment: 48}\nsequences:\n  - {context: 170}\n  - {context: 0}\n  - {context: 33}\n"
		  "quant: {rounding: half_to_even, clip: 100}\ndata: {seed: 5}\n" },
		/* gfx936 decode, 16 column tiles a group; a sequence with no
		 * keys has no PV group, yet its out rows are 0 (a soak found
		 * them left poisoned) */
		{ "gfx936-decode", "isa: gfx936\nmodel: {q_heads: 24, kv_heads: 4, head_dim: 256}\n"
		  "cache: {placement: shuffled}\nsequences:\n  - {context: 300}\n  - {context: 0}\n  - {context: 37}\n"
		  "data: {seed: 7}\n" },
		/* gfx936 chunked prefill with split-K, head_dim 80 */
		{ "gfx936-prefill", "isa: gfx936\nmode: prefill\nmodel: {q_heads: 4, kv_heads: 2, head_dim: 80}\n"
		  "split_k: {segment: 40}\nsequences:\n  - {history: 70, chunk: 21}\ndata: {seed: 6}\n" },
	};
	static const struct {
		const char *bin, *cs, *regroup;	/* regroup: NULL = the case's own */
	} runs[] = {
		{ "sm80_pv", "cases/edge/sm80-pv-int8-decode.yaml", NULL },
		{ "sm80_pv", "cases/edge/sm80-pv-int8-prefill.yaml", NULL },
		{ "sm80_pv", "tests/data/dump_h/sm80-pv-int8-splitk.yaml", NULL },	/* lds */
		{ "sm80_pv", "sm80-split", "v_permuted" },
		{ "sm80_pv", "tests/data/dump_h/sm80-pv-int8-mqa.yaml", NULL },	/* v_permuted */
		{ "qk_pv", "gfx936-decode", "lds" },
		{ "qk_pv", "gfx936-decode", "v_permuted" },
		{ "qk_pv", "gfx936-prefill", "lds" },
		{ "qk_pv", "gfx936-prefill", "v_permuted" },
		{ "qk_pv_cdna3", "cases/edge/cdna3-pv-int8-decode.yaml", NULL },
	};
	struct fixture *f = *state;

	assert_int_equal(build(f, FRAGSIM_CC " -std=c99 -pedantic", "tools/device/qk_cpu.c", "qk_pv"),
			 0);
	assert_int_equal(tu_sh("'%s' lanemap --isa cdna3-mfma-i32-16x16x32-i8 --format c > %s/gen/cdna3.h && "
			    "cd '%s' && %s -std=c99 -pedantic -Wall -Wextra -Werror -O1 -ffp-contract=off "
			    "-I%s/gen -Itools/device -DFSQ_LANEMAP='\"cdna3.h\"' "
			    "-DFSQ_LM=fs_cdna3_mfma_i32_16x16x32_i8 -DFSQ_LMU=FS_CDNA3_MFMA_I32_16X16X32_I8 "
			    "tools/device/qk_cpu.c -o %s/qk_pv_cdna3 -lm", FRAGSIM_BIN, f->dir, FRAGSIM_SRC,
			    FRAGSIM_CC, f->dir, f->dir), 0);
	if (f->have_cxx)
		assert_int_equal(build_sm80(f, "profiles/sm80-mma-m16n8k32-s8.yaml", "sm80_pv"), 0);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		char cs[400];
		struct run_result r;

		if (!f->have_cxx && !strcmp(runs[i].bin, "sm80_pv"))
			continue;
		if (runs[i].regroup) {
			for (size_t e = 0; e < sizeof(extra) / sizeof(extra[0]); e++)
				if (!strcmp(extra[e][0], runs[i].cs)) {
					char text[1200];

					snprintf(cs, sizeof(cs), "%s/pv-%zu.yaml", f->dir, i);
					snprintf(text, sizeof(text),
						 "fragsim: 1\nname: pv-%s-%s\n%spv: {mode: int8, regroup: %s}\n",
						 extra[e][0], runs[i].regroup, extra[e][1], runs[i].regroup);
					tu_put(cs, text);
				}
		} else {
			snprintf(cs, sizeof(cs), "%s/%s", FRAGSIM_SRC, runs[i].cs);
		}
		assert_int_equal(tu_sh("rm -rf %s/g-pv && '%s' run %s --emulate-only --out %s/g-pv >/dev/null",
				    f->dir, FRAGSIM_BIN, cs, f->dir), 0);
		assert_int_equal(tu_sh("rm -rf %s/d-pv && %s/%s %s/g-pv %s/d-pv >/dev/null", f->dir,
				    f->dir, runs[i].bin, f->dir, f->dir), 0);
		r = tu_run("diff %s --dump %s/d-pv", cs, f->dir);
		if (r.status || !strstr(r.out, "verdict   match") ||
		    !strstr(r.out, "scores, out, p_int8, p_scale, pv_acc;"))
			fail_msg("%s on %s (%s): exit %d\n%s%s", runs[i].bin, runs[i].cs,
				 runs[i].regroup ? runs[i].regroup : "its regroup", r.status, r.out, r.err);
		tu_free(&r);
		if (strstr(runs[i].bin, "cdna3")) {
			char p[300], *err;

			assert_int_equal(tu_sh("%s/%s %s/g-pv %s/d-pv2 p_regroup_none 2>%s/pv.err", f->dir,
					    runs[i].bin, f->dir, f->dir, f->dir), 2);
			snprintf(p, sizeof(p), "%s/pv.err", f->dir);
			err = tu_slurp(p);
			if (!strstr(err, "p_regroup_none on cdna3-mfma-i32-16x16x32-i8: lane 0's C registers do not hold the row-0 entries"))
				fail_msg("cdna3 p_regroup_none: %s", err);
			free(err);
			continue;
		}
		assert_int_equal(tu_sh("rm -rf %s/d-pv && %s/%s %s/g-pv %s/d-pv p_regroup_none >/dev/null",
				    f->dir, f->dir, runs[i].bin, f->dir, f->dir), 0);
		r = tu_run("diff %s --dump %s/d-pv", cs, f->dir);
		if (r.status != 1 || !strstr(r.out, "diagnosis: matches kernel assumption p_regroup=none exactly"))
			fail_msg("%s on %s, p_regroup_none: exit %d\n%s%s", runs[i].bin, runs[i].cs,
				 r.status, r.out, r.err);
		tu_free(&r);
		/* page_walk plants the walk that ignores the table for V and
		 * its scales too, as fragsim's class reads them (an H100 run of
		 * random shapes found V left on the table: no exact match) */
		assert_int_equal(tu_sh("rm -rf %s/d-pv && %s/%s %s/g-pv %s/d-pv page_walk >/dev/null",
				    f->dir, f->dir, runs[i].bin, f->dir, f->dir), 0);
		r = tu_run("diff %s --dump %s/d-pv", cs, f->dir);
		if (!strstr(r.out, "diagnosis: matches kernel assumption page_walk=none exactly") &&
		    !strstr(r.out, "verdict   match"))
			fail_msg("%s on %s, page_walk: exit %d\n%s%s", runs[i].bin, runs[i].cs,
				 r.status, r.out, r.err);
		tu_free(&r);
	}
	/* The plant needs INT8 PV, and c_columns is QK's alone. */
	assert_int_equal(tu_sh("%s/qk_pv %s/golden-decode %s/d-pv3 p_regroup_none 2>/dev/null", f->dir,
			    f->dir, f->dir), 2);
}

static void probe_answer_through_the_header(void **state)
{
	struct fixture *f = *state;
	struct run_result r;

	assert_int_equal(tu_sh("cd '%s' && %s -std=c99 -pedantic -Wall -Wextra -Werror -I%s/gen -Itools/device "
			    "-DFSQ_LANEMAP='\"fragsim_lanemap_gfx936_quad.h\"' -DFSQ_LM=fs_gfx936_quad "
			    "-DFSQ_LMU=FS_GFX936_QUAD tests/data/dump_h/probe_cpu.c -o %s/probe_cpu",
			    FRAGSIM_SRC, FRAGSIM_CC, f->dir, f->dir), 0);
	assert_int_equal(tu_sh("'%s' probe plan --isa gfx936 --out %s/plan >/dev/null && %s/probe_cpu %s/plan %s/probe",
			    FRAGSIM_BIN, f->dir, f->dir, f->dir, f->dir), 0);
	r = tu_run("probe solve --plan %s/plan --dump %s/probe", f->dir, f->dir);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "C: 240 of 256 entries differ: lanes interleaved by 4"));
	tu_free(&r);
	r = tu_run("probe solve --plan %s/plan --dump %s/probe --isa gfx936-quad", f->dir, f->dir);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "device matches gfx936-quad"));
	tu_free(&r);
}

/* qk_cpu.c on a map with 16-byte fragments (CDNA4 16x16x64) is refused
 * at the build, naming why: its 64-bit loads would drop half of each
 * fragment and write a wrong dump (a soak built it and got one). */
static void wide_fragment_map_is_refused_at_build(void **state)
{
	struct fixture *f = *state;
	char p[300], *err;

	assert_int_not_equal(tu_sh("'%s' lanemap --isa cdna4-mfma-i32-16x16x64-i8 --format c > %s/gen/cdna4.h && "
				"cd '%s' && %s -std=c99 -I%s/gen -Itools/device -DFSQ_LANEMAP='\"cdna4.h\"' "
				"-DFSQ_LM=fs_cdna4_mfma_i32_16x16x64_i8 -DFSQ_LMU=FS_CDNA4_MFMA_I32_16X16X64_I8 "
				"tools/device/qk_cpu.c -o %s/qk_cdna4 -lm 2>%s/cdna4.err", FRAGSIM_BIN, f->dir,
				FRAGSIM_SRC, FRAGSIM_CC, f->dir, f->dir, f->dir), 0);
	snprintf(p, sizeof(p), "%s/cdna4.err", f->dir);
	err = tu_slurp(p);
	assert_non_null(err);
	if (!strstr(err, "fragments are at most 8 bytes a lane"))
		fail_msg("%s", err);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(c_harness_dumps_and_diff_names_the_bug),
		cmocka_unit_test(cxx_harness_dumps_and_diff_names_the_bug),
		cmocka_unit_test(mqa_group_over_16_rows_dumps_and_matches),
		cmocka_unit_test(packed_decode_rows_dump_and_match),
		cmocka_unit_test(cuda_harness_without_nvcc_matches_and_names_the_bug),
		cmocka_unit_test(cuda_harness_on_a_wrong_map_is_caught),
		cmocka_unit_test(attn_run_builds_on_the_generated_header),
		cmocka_unit_test(four_column_golden_is_refused_by_name),
		cmocka_unit_test(unsupported_case_features_are_refused_by_name),
		cmocka_unit_test(header_contract),
		cmocka_unit_test(probe_answer_through_the_header),
		cmocka_unit_test(harnesses_walk_every_case_key),
		cmocka_unit_test(unknown_case_key_is_refused),
		cmocka_unit_test(per_block32_runs_and_matches),
		cmocka_unit_test(harness_alibi_slopes_are_fragsims),
		cmocka_unit_test(unwritten_entries_are_named),
		cmocka_unit_test(dump_parents_are_made),
		cmocka_unit_test(int8_pv_matches_and_names_p_regroup_none),
		cmocka_unit_test(wrapped_block_table_is_read),
		cmocka_unit_test(wide_fragment_map_is_refused_at_build),
	};

	return cmocka_run_group_tests_name("dump_h", tests, setup, teardown);
}
