/*
 * cmd_run.c - `fragsim run CASE`: emulate, check against the reference,
 * print a summary, and write goldens when asked and the checks hold.
 */
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"
#include "../lib/golden.h"
#include "../lib/json.h"
#include "../lib/outdir.h"
#include "htmlrep.h"
#include "report.h"
#include "../lib/runcase.h"

static const char usage[] =
	"usage: fragsim run <case.yaml> [--out <dir>] [--format npy|safetensors]\n"
	"                   [--threads <n>] [--json] [--emulate-only]\n"
	"                   [--exec auto|scalar|portable|avx2|avx512] [--report <file.html>]\n"
	"\n"
	"  --out <dir>        write golden tensors and manifest.json there (only\n"
	"                     when every check holds; the directory appears whole)\n"
	"  --format <fmt>     npy: one .npy per tensor; safetensors: one file\n"
	"                                                      [default: npy]\n"
	"  --threads <n>      OpenMP threads; results do not depend on it\n"
	"                                                      [default: all cores]\n"
	"  --json             the summary as JSON\n"
	"  --emulate-only     run the emulation alone: no reference, no verdict;\n"
	"                     --out then writes its tensors marked \"checked\": false\n"
	"                     (a simulated device dump, or for timing the emulation)\n"
	"  --exec <e>         the executor: scalar is the per-lane specification;\n"
	"                     portable, avx2, avx512 the fast path (same bytes);\n"
	"                     auto the fastest this CPU runs       [default: auto]\n"
	"  --report <file>    also write an HTML report: the case, figures, plots\n"
	"\n"
	"exit status: 0 all checks hold, 1 mismatch, 2 bad input, 3 internal error\n";

int cmd_run(int argc, char **argv)
{
	const char *path = NULL, *out = NULL, *format = "npy", *threads = NULL, *v;
	const char *exec = "auto", *report = NULL;
	enum attn_exec ex;
	enum golden_format fmt = GOLDEN_NPY;
	struct fs_err err = { 0 };
	struct runcase r;
	int json = 0, tty = isatty(2), emulate_only = 0;
	enum fs_rc rc;

	if (cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return FS_OK;
	}
	for (int i = 1; i < argc;) {
		int got;

		if ((got = cli_opt(argc, argv, &i, "--out", &v)) > 0)
			out = v;
		else if (!got && (got = cli_opt(argc, argv, &i, "--format", &v)) > 0)
			format = v;
		else if (!got && (got = cli_opt(argc, argv, &i, "--threads", &v)) > 0)
			threads = v;
		else if (!got && (got = cli_opt(argc, argv, &i, "--exec", &v)) > 0)
			exec = v;
		else if (!got && (got = cli_opt(argc, argv, &i, "--report", &v)) > 0)
			report = v;
		else if (!got && cli_flag(argv, i, "--json"))
			json = 1, i++, got = 1;
		else if (!got && cli_flag(argv, i, "--emulate-only"))
			emulate_only = 1, i++, got = 1;
		if (got < 0)
			return cli_usage_error(usage, "%s needs a value", argv[i]);
		if (got)
			continue;
		if (argv[i][0] == '-' || path)
			return cli_usage_error(usage, "unexpected argument '%s'", argv[i]);
		path = argv[i++];
	}
	if (!path)
		return cli_usage_error(usage, "run: give a case file");
	if (!strcmp(format, "safetensors"))
		fmt = GOLDEN_SAFETENSORS;
	else if (strcmp(format, "npy"))
		return cli_usage_error(usage, "--format must be npy or safetensors, not '%s'",
				       format);
	if (attn_exec_parse(exec, &ex))
		return cli_usage_error(usage, "--exec must be auto, scalar, portable, avx2 or avx512, not '%s'",
				       exec);
	if (threads) {
		long n;

		if (cli_int_arg(usage, "--threads", threads, 1, 1024, &n))
			return FS_EINPUT;
		omp_set_num_threads((int)n);
	}
	/* A directory we could not write, or must not replace, is refused
	 * now, not after the run (docs/output-dir.md). */
	if ((out && (rc = outdir_check(out, &err))) || (report && (rc = htmlrep_check(report, &err))))
		return cli_error(&err, rc);
	rc = runcase_load(path, &r, &err);
	if (!rc) {
		if (tty)
			fprintf(stderr, "fragsim: running %s ...\n", r.c.name);
		r.emulate_only = emulate_only;
		r.exec = ex;
		rc = runcase_exec(&r, &err);
	}
	if (rc) {
		runcase_free(&r);
		return cli_error(&err, rc);
	}
	if (json) {
		struct json j;

		json_init(&j, stdout, 1);
		report_json(&j, &r);
		json_finish(&j);
	} else {
		report_summary(stdout, &r);
	}
	if (report && (rc = htmlrep_save(report, htmlrep_run, &r, &err))) {
		runcase_free(&r);
		return cli_error(&err, rc);
	}
	rc = runcase_status(&r);
	if (out && rc == FS_OK && !r.c.expect_mismatch) {
		enum fs_rc wr = golden_write(&r, out, fmt, &err);

		if (wr) {
			runcase_free(&r);
			return cli_error(&err, wr);
		}
		if (!json)
			printf("%s   written to %s\n",
			       emulate_only ? "tensors (emulation only, not checked)" : "goldens", out);
	} else if (out) {
		fprintf(stderr, "fragsim: goldens not written: %s\n",
			rc == FS_OK ? "the case plants a bug (expect: mismatch)" :
				      "the emulation disagrees with the reference");
	}
	rc = runcase_expected(&r);
	runcase_free(&r);
	return rc;
}
