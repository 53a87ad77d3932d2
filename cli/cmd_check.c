/*
 * cmd_check.c - `fragsim check PATH...`: every *.yaml case under the
 * paths, in sorted order, one line each, then "N passed, N failed".
 * --shard K/N takes one shard of the suite (lib/caselist.c), so N CI
 * machines split it deterministically; --junit writes JUnit XML
 * (lib/junit.c) and --json one JSON document. docs/check-output.md is
 * the contract for both: every case of the shard appears, those that
 * could not be run included, so CI never has to infer a case from the
 * counts.
 *
 * Usage problems are found before any case runs: a path that does not
 * exist or holds no case, two cases of one name (across shards too), a
 * bad --shard, and a --junit file that cannot be created are exit 2 with
 * nothing run.
 *
 * A directory's *.yaml that is fragsim's but not a case (a profile, a
 * probe plan) or no case at all (a CI workflow) is skipped with a note,
 * never silently (lib/caselist.c has the rule); --exclude GLOB drops
 * files by name.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/caselist.h"
#include "../lib/clock.h"
#include "cli.h"
#include "cmds.h"
#include "ghfmt.h"
#include "../lib/json.h"
#include "../lib/junit.h"
#include "options.h"
#include "../lib/outdir.h"
#include "report.h"
#include "../lib/runcase.h"
#include "htmlrep.h"
#include "progress.h"

struct check_args {
	const char *junit, *shard, *exec, *report, *format;
	struct opt_list exclude;
	int json, quiet;
};

static const char *const check_formats[] = { "text", "github", NULL };

#define OPT_ARGS struct check_args
static const struct opt check_opts[] = {
	OPT_ARG("<path>", "a case file, or a directory searched for *.yaml"),
	OPT_STRING("--junit", junit, "<file>", "also write JUnit XML for CI systems"),
	OPT_STRING("--shard", shard, "<k>/<n>",
	  "run only cases k, k+n, k+2n, ... (1-based, sorted order)"),
	OPT_FLAG("--json", json,
	  "print one JSON document instead of lines: every case\n"
	  "(errors included), then the counts; docs/check-output.md"),
	OPT_CHOICE("--format", format, "<f>", check_formats,
	  "github: the lines, and under each case that did not\n"
	  "pass an ::error annotation (GitHub Actions, docs/ci.md)",
	  .def = "text"),
	OPT_CHOICE("--exec", exec, "<e>", cli_exec_names,
	  "the executor (see fragsim run -h)", .def = "auto"),
	OPT_STRING("--report", report, "<file.html>",
	  "also write an HTML report: a table linking each case"),
	OPT_LIST("--exclude", exclude, "<glob>",
	  "skip the *.yaml found under a directory whose path\n"
	  "(from that directory) or base name matches (fnmatch,\n"
	  "'*' matches '/' too); repeatable"),
	OPT_FLAG("--quiet", quiet,
	  "no progress on stderr (shown for a case that runs over\n"
	  "2 s), nor the note of a case predicted to take over a minute"),
	OPT_END(),
};
#undef OPT_ARGS

static const char *const check_synopsis[] = {
	"check <path>... [--junit <file>] [--shard <k>/<n>] [--json]",
	" [--format text|github] [--exec auto|scalar|portable|avx2|avx512]",
	" [--report <file.html>] [--exclude <glob>]... [--quiet]",
	NULL,
};

const struct opt_cmd cmd_check_spec = {
	.name = "check",
	.synopsis = check_synopsis,
	.opts = check_opts,
	.about = "A directory's *.yaml that is not a case is skipped with a note on\n"
		 "stderr: a lane-map profile (fragsim_profile:), a probe plan\n"
		 "(fragsim_probe:), an output manifest (tool: fragsim), or a YAML with\n"
		 "none of a case's keys (name: and description: aside). One with\n"
		 "fragsim: or another case key is a case, and an error if it is bad.",
	.exit = "0 all cases pass, 1 a case failed, 2 a case could not be run\n"
		"(or bad usage: a path with no case, two cases of one name,\n"
		"a bad --shard or --junit file)",
};

/* by enum junit_status */
static const char *const status_name[] = { "pass", "fail", "error" };

struct outcome {
	const char *path;	/* the case file, as listed (not owned) */
	char name[128];		/* the case's name; "" when it did not load */
	enum junit_status status;
	enum fs_rc error;	/* JUNIT_ERROR: its kind (input, limit, memory) */
	char reason[1200];	/* report_reason, or the error; "" for a plain pass */
	char *details;		/* JUnit body: report_details or the error (malloc) */
	const char *type;	/* JUNIT_FAIL: report_fail_type (static) */
	char *html;		/* --report: the case's section (malloc), or NULL */
	double seconds;
};

/* --report: the outcomes as htmlrep's table, each linking its section. */
static int write_report(const char *path, const struct outcome *o, size_t n,
			size_t npass, size_t nfail, size_t nerr)
{
	struct htmlrep_row *rows = calloc(n + 1, sizeof(*rows));
	struct htmlrep_table t = { "fragsim check", NULL, { "case", "file", "status", "reason" },
				   n, rows };
	struct fs_err err = { 0 };
	char summary[128];
	enum fs_rc rc;

	if (!rows)
		return cli_error(&err, fs_nomem(&err, "the report's rows", (n + 1) * sizeof(*rows)));
	snprintf(summary, sizeof(summary), "%zu passed, %zu failed, %zu could not be run",
		 npass, nfail, nerr);
	t.summary = summary;
	for (size_t i = 0; i < n; i++)
		rows[i] = (struct htmlrep_row){ { o[i].name[0] ? o[i].name : o[i].path, o[i].path,
						  status_name[o[i].status], o[i].reason },
						o[i].path, o[i].html, o[i].status != JUNIT_PASS };
	rc = htmlrep_save(path, htmlrep_table, &t, &err);
	free(rows);
	return rc ? cli_error(&err, rc) : 0;
}

/* The text a memory stream collected from fn(f, r), or NULL. */
static char *capture(void (*fn)(FILE *, const struct runcase *),
		     const struct runcase *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fn(f, r);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Load, run and judge one case into o (and its JSON entry into j). */
static void run_one(const char *path, enum attn_exec ex, struct json *j,
		    struct outcome *o, int html, int github, int quiet)
{
	struct fs_err err = { 0 };
	struct runcase r;
	double t0 = clock_seconds();
	enum fs_rc e;

	o->path = path;
	e = runcase_load(path, &r, &err);
	r.exec = ex;
	if (!e) {
		struct progress g;

		progress_start(&g, &r, quiet);
		e = runcase_exec(&r, &err);
		progress_stop(&g, &r);
	}
	o->seconds = clock_seconds() - t0;
	snprintf(o->name, sizeof(o->name), "%s", r.c.name);
	if (e) {
		o->status = JUNIT_ERROR;
		o->error = e;
		fs_err_str(&err, o->reason, sizeof(o->reason));
		o->details = strdup(o->reason);
	} else {
		o->status = runcase_expected(&r) == FS_OK ? JUNIT_PASS : JUNIT_FAIL;
		report_reason(&r, o->reason, sizeof(o->reason));
		if (o->status == JUNIT_FAIL) {
			o->details = capture(report_details, &r);
			o->type = report_fail_type(&r);
		}
		if (html)
			o->html = capture(htmlrep_case, &r);
	}
	if (j) {
		json_begin_object(j);
		json_key_string(j, "file", path);
		json_key_string(j, "case", o->name[0] ? o->name : NULL);
		json_key_string(j, "status", status_name[o->status]);
		json_key_string(j, "reason", o->reason);
		json_key_double(j, "seconds", o->seconds);
		if (e) {
			json_key(j, "error");
			json_begin_object(j);
			json_key_string(j, "file", err.file[0] ? err.file : NULL);
			json_key_int(j, "line", err.line);
			json_key_int(j, "col", err.col);
			json_key_string(j, "message", err.msg);
			json_end_object(j);
		} else {
			json_key(j, "result");
			report_json(j, &r);
		}
		json_end_object(j);
	} else if (e) {
		printf("%s: ERROR %s\n", path, o->reason);
		if (github)
			ghfmt_case(stdout, path, o->name, &err, NULL);
	} else {
		report_line(stdout, &r);
		if (github && o->status == JUNIT_FAIL)
			ghfmt_case(stdout, path, o->name, NULL,
				   o->details ? o->details : o->reason);
	}
	fflush(stdout);
	runcase_free(&r);
}

/* The cases under the n paths, sorted; one shard of them. 0 or the
 * exit status, the error printed. */
static int list_cases(char **paths, int n, long k, long nshard, struct caselist *ps)
{
	size_t noted = 0;

	for (int i = 0; i < n; i++) {
		size_t before = ps->n, skipped_before = ps->nskipped + ps->nexcluded;
		size_t repeated_before = ps->nrepeated;
		int rc = caselist_add(ps, paths[i]);

		if (rc == -1) {
			cli_usage_error(NULL, "out of memory: the list of cases");
			return FS_ENOMEM;
		}
		if (rc < 0)
			return cli_usage_error(NULL, "%s", ps->why);
		for (; noted < ps->nskipped; noted++)
			fprintf(stderr, "fragsim: note: %s; skipped\n", ps->skipped[noted]);
		/* a path given twice, or a case under a directory given too */
		if (ps->n == before && ps->nrepeated > repeated_before &&
		    ps->nskipped + ps->nexcluded == skipped_before) {
			fprintf(stderr, "fragsim: note: %s: listed already; each case "
				"runs once\n", paths[i]);
			continue;
		}
		if (ps->n == before)
			return cli_usage_error(NULL, "%s: no *.yaml case there%s", paths[i],
					       ps->nskipped + ps->nexcluded > skipped_before
					       ? " (only files skipped or excluded)" : "");
	}
	caselist_sort(ps);
	switch (caselist_unique_names(ps)) {
	case 0:
		break;
	case -1:
		cli_usage_error(NULL, "out of memory: the cases' names");
		return FS_ENOMEM;
	default:
		return cli_usage_error(NULL, "%s", ps->why);
	}
	caselist_shard(ps, k, nshard);
	return FS_OK;
}

/* The outcomes as JUnit cases, written to path (checked before). */
static int write_junit(const char *path, const struct outcome *o, size_t n,
		       time_t started, double seconds)
{
	struct junit_case *jc = calloc(n + 1, sizeof(*jc));
	struct outdir_file file = { 0 }, *f = &file;
	struct fs_err err = { 0 };
	enum fs_rc rc;

	if (!jc)
		return FS_EINTERNAL;
	/* Opened now, not before the suite: a ^C during the suite then
	 * leaves no temporary, and one during the write removes it. */
	if ((rc = outdir_file_open(f, path, &err))) {
		free(jc);
		return cli_error(&err, rc);
	}
	for (size_t i = 0; i < n; i++)
		jc[i] = (struct junit_case){ o[i].path, o[i].name, o[i].status,
					     o[i].reason, o[i].details, o[i].seconds, o[i].type };
	rc = junit_write(f, jc, n, started, seconds, &err);
	free(jc);
	return rc ? cli_error(&err, FS_EINTERNAL) : FS_OK;
}

/* --junit and --report may be no case file, path given or other output
 * (outdir_io_check). 0 or the exit status, the error printed. */
static int check_io(char **paths, int n, const struct caselist *ps,
		    const struct check_args *a)
{
	size_t m = (size_t)n + ps->n + 2, k = 0;
	struct outdir_io *io = calloc(m, sizeof(*io));
	struct fs_err err = { 0 };
	enum fs_rc rc;

	if (!io)
		return cli_error(&err, fs_nomem(&err, "the paths to compare", m * sizeof(*io)));
	io[k++] = (struct outdir_io){ "--junit", a->junit, OUTDIR_WRITE_FILE };
	io[k++] = (struct outdir_io){ "--report", a->report, OUTDIR_WRITE_FILE };
	for (int i = 0; i < n; i++)
		io[k++] = (struct outdir_io){ "a case path", paths[i], OUTDIR_READ };
	for (size_t i = 0; i < ps->n; i++)
		io[k++] = (struct outdir_io){ "a case file", ps->p[i], OUTDIR_READ };
	rc = outdir_io_check(io, k, &err);
	free(io);
	return rc ? cli_error(&err, rc) : FS_OK;
}

int cmd_check(int argc, char **argv)
{
	struct check_args a = { .exec = "auto", .format = "text" };
	enum attn_exec ex;
	struct caselist ps = { 0 };
	struct outcome *res = NULL;
	struct json j;
	long k = 1, nshard = 1;
	size_t npass = 0, nfail = 0, nerr = 0, nrun = 0;
	int n, rc;
	enum fs_rc err_rc = FS_EINPUT;	/* the errors' kind, once one is seen */
	time_t started = time(NULL);
	double t0 = clock_seconds();

	/* Usage errors first, then the directory walk, then the suite. */
	if ((n = opt_parse(&cmd_check_spec, &a, argc, argv, &rc)) < 0)
		return rc;
	if (!n)
		return opt_error(&cmd_check_spec, "check: give at least one path");
	if (a.json && !strcmp(a.format, "github"))
		return opt_error(&cmd_check_spec, "--format github annotates the lines, "
				 "which --json replaces: give one of them");
	if (attn_exec_parse(a.exec, &ex))
		return FS_EINTERNAL;	/* cli_exec_names are attn_exec_parse's */
	if (a.shard && caselist_shard_parse(a.shard, &k, &nshard))
		return opt_error(&cmd_check_spec, "--shard must be K/N with 1 <= K <= N, not '%s'",
				 a.shard);
	ps.classify = 1;
	ps.exclude = a.exclude.v;
	ps.nexclude = (size_t)a.exclude.n;
	rc = list_cases(argv, n, k, nshard, &ps);
	if (!rc && (a.junit || a.report))
		rc = check_io(argv, n, &ps, &a);
	if (!rc && a.report) {
		struct fs_err err = { 0 };
		enum fs_rc e = htmlrep_check(a.report, &err);

		if (e)
			rc = cli_error(&err, e);
	}
	if (!rc && a.junit) {
		struct fs_err err = { 0 };

		/* Checked now (a temporary created and removed) so that a
		 * path CI cannot write is found before the suite runs, not
		 * after; the file is opened once the suite is done. */
		enum fs_rc e = outdir_file_check(a.junit, &err);

		if (e)
			rc = cli_error(&err, e);
	}
	if (!rc && !(res = calloc(ps.n + 1, sizeof(*res)))) {
		struct fs_err err = { 0 };

		rc = cli_error(&err, fs_nomem(&err, "the cases' outcomes",
					      (ps.n + 1) * sizeof(*res)));
	}
	if (rc) {
		caselist_free(&ps);
		return rc;
	}
	if (a.json) {
		json_init(&j, stdout, 1);
		json_begin_object(&j);
		json_key_int(&j, "fragsim_check", 1);
		json_key(&j, "shard");
		json_begin_object(&j);
		json_key_int(&j, "k", k);
		json_key_int(&j, "n", nshard);
		json_end_object(&j);
		json_key(&j, "skipped");
		json_begin_array(&j);
		for (size_t i = 0; i < ps.nskipped; i++)
			json_string(&j, ps.skipped[i]);
		json_end_array(&j);
		json_key(&j, "cases");
		json_begin_array(&j);
	}
	for (size_t i = 0; i < ps.n; i++) {
		struct outcome *o = &res[nrun++];

		run_one(ps.p[i], ex, a.json ? &j : NULL, o, a.report != NULL,
			!strcmp(a.format, "github"), a.quiet);
		o->status == JUNIT_ERROR ? nerr++ : o->status == JUNIT_FAIL ? nfail++ : npass++;
	}
	if (a.json) {
		json_end_array(&j);
		json_key_int(&j, "total", (int64_t)nrun);
		json_key_int(&j, "passed", (int64_t)npass);
		json_key_int(&j, "failed", (int64_t)nfail);
		json_key_int(&j, "errors", (int64_t)nerr);
		json_end_object(&j);
		if (json_finish(&j))
			rc = cli_error(&j.err, FS_EINTERNAL);
	} else {
		printf("%zu passed, %zu failed", npass, nfail);
		if (nerr)
			printf(", %zu could not be run", nerr);
		putchar('\n');
	}
	if (a.junit && write_junit(a.junit, res, nrun, started, clock_seconds() - t0))
		rc = FS_EINTERNAL;
	if (a.report) {
		int r = write_report(a.report, res, nrun, npass, nfail, nerr);

		if (r)
			rc = r;
	}
	/* The errors' exit is the worst of their kinds: a case that ran out
	 * of memory (3) is not a bad case file (2). */
	for (size_t i = 0; i < nrun; i++)
		if (res[i].status == JUNIT_ERROR && fs_rc_exit(res[i].error) > fs_rc_exit(err_rc))
			err_rc = res[i].error;
	for (size_t i = 0; i < nrun; i++)
		free(res[i].details), free(res[i].html);
	caselist_free(&ps);
	free(res);
	if (rc)
		return rc;
	return nerr ? err_rc : nfail ? FS_MISMATCH : FS_OK;
}
