/*
 * cmd_run.c - `fragsim run CASE`: emulate, check against the reference,
 * print a summary, and write goldens when asked and the checks hold.
 */
#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"
#include "options.h"
#include "threads.h"
#include "../lib/golden.h"
#include "../lib/json.h"
#include "../lib/outdir.h"
#include "htmlrep.h"
#include "progress.h"
#include "report.h"
#include "../lib/runcase.h"

struct run_args {
	const char *out, *format, *exec, *report;
	long threads;	/* 0: all cores */
	int json, emulate_only, bf16, quiet;
};

#define OPT_ARGS struct run_args
static const char *const formats[] = { "npy", "safetensors", NULL };

static const struct opt run_opts[] = {
	OPT_ARG("<case.yaml>", "the case to emulate and check"),
	OPT_STRING("--out", out, "<dir>",
	  "write golden tensors and manifest.json there (only\n"
	  "when every check holds; the directory appears whole)"),
	OPT_CHOICE("--format", format, "<fmt>", formats,
	  "with --out: npy, one .npy per tensor; safetensors,\n"
	  "one file", .def = "npy"),
	OPT_FLAG("--bf16", bf16,
	  "with --out --format safetensors: q and out as BF16\n"
	  "(out rounded to nearest even), as a vLLM kernel takes them"),
	OPT_INT("--threads", threads, "<n>", 1, THREADS_MAX,
	  "OpenMP threads; results do not depend on it", .def = "all cores"),
	OPT_FLAG("--json", json, "the summary as JSON"),
	OPT_FLAG("--emulate-only", emulate_only,
	  "run the emulation alone: no reference, no verdict;\n"
	  "--out then writes its tensors marked \"checked\": false\n"
	  "(a simulated device dump, or for timing the emulation)"),
	OPT_CHOICE("--exec", exec, "<e>", cli_exec_names,
	  "the executor: scalar is the per-lane specification;\n"
	  "portable, avx2, avx512 the fast path (same bytes);\n"
	  "auto the fastest this CPU runs", .def = "auto"),
	OPT_STRING("--report", report, "<file.html>",
	  "also write an HTML report: the case, figures, plots"),
	OPT_FLAG("--quiet", quiet,
	  "no progress on stderr (shown when a run takes over 2 s),\n"
	  "nor the note of a run predicted to take over a minute"),
	OPT_END(),
};
#undef OPT_ARGS

static const char *const run_synopsis[] = {
	"run <case.yaml> [--out <dir> [--format npy|safetensors] [--bf16]]",
	" [--threads <n>] [--json] [--emulate-only]",
	" [--exec auto|scalar|portable|avx2|avx512] [--report <file.html>]",
	" [--quiet]",
	NULL,
};

const struct opt_cmd cmd_run_spec = {
	.name = "run",
	.synopsis = run_synopsis,
	.opts = run_opts,
	.exit = "0 all checks hold, 1 mismatch, 2 bad input, 3 internal error",
};

int cmd_run(int argc, char **argv)
{
	struct run_args a = { .exec = "auto" };	/* .format: NULL until given */
	const char *path;
	enum attn_exec ex;
	enum golden_format fmt = GOLDEN_NPY;
	struct fs_err err = { 0 };
	struct runcase r;
	int n, bad;
	enum fs_rc rc;

	if ((n = opt_parse(&cmd_run_spec, &a, argc, argv, &bad)) < 0)
		return bad;
	if (n > 1)
		return opt_error(&cmd_run_spec, "unexpected argument '%s'", argv[1]);
	if (!n)
		return opt_error(&cmd_run_spec, "run: give a case file");
	path = argv[0];
	/* Options that say how goldens are written mean nothing without
	 * --out: refused, not accepted and ignored. */
	if (!a.out && (a.format || a.bf16))
		return opt_error(&cmd_run_spec, "%s needs --out (it says how the goldens are "
				 "written, and nothing is written without --out)",
				 a.format ? "--format" : "--bf16");
	if (a.format && !strcmp(a.format, "safetensors"))
		fmt = a.bf16 ? GOLDEN_SAFETENSORS_BF16 : GOLDEN_SAFETENSORS;
	else if (a.bf16)	/* numpy has no bfloat16: .npy could not say it */
		return opt_error(&cmd_run_spec, "--bf16 needs --format safetensors "
				 "(.npy has no bfloat16 dtype)");
	if (attn_exec_parse(a.exec, &ex))
		return FS_EINTERNAL;	/* cli_exec_names are attn_exec_parse's */
	if (a.threads)
		omp_set_num_threads((int)a.threads);
	/* A directory we could not write, or must not replace, is refused
	 * now, not after the run (docs/output-dir.md); so is an output
	 * that is, or would replace, what the run reads. */
	struct outdir_io io[] = {
		{ "the case file", path, OUTDIR_READ },
		{ "--out", a.out, OUTDIR_WRITE_DIR },
		{ "--report", a.report, OUTDIR_WRITE_FILE },
	};
	if ((rc = outdir_io_check(io, sizeof(io) / sizeof(io[0]), &err)) ||
	    (a.out && (rc = outdir_check(a.out, &err))) ||
	    (a.report && (rc = htmlrep_check(a.report, &err))))
		return cli_error(&err, rc);
	if ((rc = cli_case_not_dir("run", path)))
		return rc;
	rc = runcase_load(path, &r, &err);
	if (!rc) {
		struct progress g;

		r.emulate_only = a.emulate_only;
		r.exec = ex;
		progress_start(&g, &r, a.quiet);
		rc = runcase_exec(&r, &err);
		progress_stop(&g, &r);
	}
	if (rc) {
		runcase_free(&r);
		return cli_error(&err, rc);
	}
	if (a.json) {
		struct json j;

		json_init(&j, stdout, 1);
		report_json(&j, &r);
		json_finish(&j);
	} else {
		report_summary(stdout, &r);
	}
	if (a.report && (rc = htmlrep_save(a.report, htmlrep_run, &r, &err))) {
		runcase_free(&r);
		return cli_error(&err, rc);
	}
	rc = runcase_status(&r);
	if (a.out && rc == FS_OK && !r.c.expect_mismatch) {
		enum fs_rc wr = golden_write(&r, a.out, fmt, &err);

		if (wr) {
			runcase_free(&r);
			return cli_error(&err, wr);
		}
		if (!a.json)
			report_goldens(stdout, &r, fmt, a.out, a.emulate_only ?
				       "tensors (emulation only, not checked)" : "goldens");
	} else if (a.out) {
		const char *why = report_failure(&r);
		char reason[512];

		/* A failed threshold is no mapping bug: say which it is. */
		report_reason(&r, reason, sizeof(reason));
		if (!why)
			fprintf(stderr, "fragsim: goldens not written: the case plants a bug "
				"(expect: mismatch)\n");
		else if (!strcmp(why, "threshold"))
			fprintf(stderr, "fragsim: goldens not written: a quality threshold failed "
				"(%s); every exact comparison with the reference holds\n", reason);
		else
			fprintf(stderr, "fragsim: goldens not written: the emulation differs from "
				"the reference (%s)\n", reason);
	}
	rc = runcase_expected(&r);
	runcase_free(&r);
	return rc;
}
