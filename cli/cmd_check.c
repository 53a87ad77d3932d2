/*
 * cmd_check.c - `fragsim check PATH...`: every *.yaml case under the
 * paths, in sorted order, one line each, then "N passed, N failed".
 * --shard K/N takes every N-th case starting at the K-th, so N CI
 * machines split a suite deterministically; --junit writes JUnit XML and
 * --json one JSON document. docs/check-output.md is the contract for
 * both: every case of the shard appears, those that could not be run
 * included, so CI never has to infer a case from the counts.
 *
 * Usage problems are found before any case runs: a path that does not
 * exist or holds no case, a bad --shard, and a --junit file that cannot
 * be created are exit 2 with nothing run.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "../lib/caselist.h"
#include "../lib/clock.h"
#include "cli.h"
#include "cmds.h"
#include "../lib/json.h"
#include "../lib/outdir.h"
#include "report.h"
#include "../lib/runcase.h"
#include "htmlrep.h"

static const char usage[] =
	"usage: fragsim check <path>... [--junit <file>] [--shard <k>/<n>] [--json]\n"
	"                     [--exec auto|scalar|portable|avx2|avx512] [--report <file.html>]\n"
	"\n"
	"  <path>            a case file, or a directory searched for *.yaml\n"
	"  --junit <file>    also write JUnit XML for CI systems\n"
	"  --shard <k>/<n>   run only cases k, k+n, k+2n, ... (1-based, sorted order)\n"
	"  --json            print one JSON document instead of lines: every case\n"
	"                    (errors included), then the counts; docs/check-output.md\n"
	"  --exec <e>        the executor (see fragsim run -h)    [default: auto]\n"
	"  --report <file>   also write an HTML report: a table linking each case\n"
	"\n"
	"exit status: 0 all cases pass, 1 a case failed, 2 a case could not be run\n"
	"(or bad usage: a path with no case, a bad --shard or --junit file)\n";

enum status { ST_PASS, ST_FAIL, ST_ERROR };

static const char *const status_name[] = { "pass", "fail", "error" };

struct outcome {
	const char *path;	/* the case file, as listed (not owned) */
	char name[128];		/* the case's name; "" when it did not load */
	enum status status;
	char reason[1200];	/* report_reason, or the error; "" for a plain pass */
	char *details;		/* JUnit body: report_details or the error (malloc) */
	char *html;		/* --report: the case's section (malloc), or NULL */
	double seconds;
};

/* Text as XML character data or an attribute value: the five specials
 * escaped, control characters other than tab and newline dropped (XML
 * 1.0 has no way to write them), invalid UTF-8 bytes as U+FFFD, so the
 * file is well-formed whatever a path or message holds. */
static void xml_escape(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned char c = *p;
		int n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
		      : (c & 0xf8) == 0xf0 ? 4 : 0;
		int ok = n > 0 && !(n == 2 && c < 0xc2) && !(n == 4 && c > 0xf4);

		for (int i = 1; ok && i < n; i++)
			ok = (p[i] & 0xc0) == 0x80;
		/* no overlong forms, no surrogates, nothing past U+10FFFF */
		if (ok && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) ||
			   (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90)))
			ok = 0;
		if (!ok) {
			fputs("\xef\xbf\xbd", f);
			p++;
			continue;
		}
		if (n > 1) {
			fwrite(p, 1, (size_t)n, f);
			p += n;
			continue;
		}
		switch (c) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if (c >= 0x20 || c == '\n' || c == '\t')
				fputc(c, f);
		}
		p++;
	}
}

/* The JUnit classname of a case: its directory with '/' as '.', so that
 * CI groups cases/edge/x.yaml under "cases.edge" ("." for a bare name). */
static void xml_classname(FILE *f, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[1024];

	if (!slash) {
		fputs(".", f);
		return;
	}
	while (*path == '/' || !strncmp(path, "./", 2))
		path += *path == '/' ? 1 : 2;
	if (path > slash) {
		fputs(".", f);
		return;
	}
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	for (char *c = dir; *c; c++)
		if (*c == '/')
			*c = '.';
	xml_escape(f, dir[0] ? dir : ".");
}

static enum fs_rc write_junit(struct outdir_file *out, const struct outcome *o,
			      size_t n, time_t started, double seconds)
{
	struct fs_err err = { 0 };
	char *buf = NULL, stamp[32];
	size_t len = 0, fails = 0, errors = 0;
	struct tm tm;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		outdir_file_abort(out);
		return FS_EINTERNAL;
	}
	for (size_t i = 0; i < n; i++)
		fails += o[i].status == ST_FAIL, errors += o[i].status == ST_ERROR;
	/* UTC, in the form the JUnit schema's timestamp takes (no zone). */
	gmtime_r(&started, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	/* check skips nothing it was given; cases of other shards are in
	 * their shard's file, so skipped is always 0 (and always present). */
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<testsuites name=\"fragsim\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"0\" time=\"%.3f\">\n"
		   "<testsuite name=\"fragsim\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"0\" time=\"%.3f\" timestamp=\"%s\">\n",
		n, fails, errors, seconds, n, fails, errors, seconds, stamp);
	for (size_t i = 0; i < n; i++) {
		const char *tag = o[i].status == ST_FAIL ? "failure" : "error";

		fprintf(f, "  <testcase classname=\"");
		xml_classname(f, o[i].path);
		fprintf(f, "\" name=\"");
		xml_escape(f, o[i].name[0] ? o[i].name : o[i].path);
		fprintf(f, "\" file=\"");
		xml_escape(f, o[i].path);
		fprintf(f, "\" time=\"%.3f\"", o[i].seconds);
		if (o[i].status == ST_PASS) {
			fprintf(f, "/>\n");
			continue;
		}
		fprintf(f, ">\n    <%s message=\"", tag);
		xml_escape(f, o[i].reason);
		fprintf(f, "\" type=\"%s\">", o[i].status == ST_FAIL ? "mismatch" : "input");
		xml_escape(f, o[i].details ? o[i].details : o[i].reason);
		fprintf(f, "</%s>\n  </testcase>\n", tag);
	}
	fprintf(f, "</testsuite>\n</testsuites>\n");
	if (fclose(f) != 0) {
		free(buf);
		outdir_file_abort(out);
		return FS_EINTERNAL;
	}
	if (outdir_file_write(out, buf, len, &err) || outdir_file_commit(out, &err)) {
		free(buf);
		return cli_error(&err, FS_EINTERNAL);
	}
	free(buf);
	return FS_OK;
}

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
		return cli_error(&err, fs_fail(&err, FS_EINTERNAL, "out of memory"));
	snprintf(summary, sizeof(summary), "%zu passed, %zu failed, %zu could not be run",
		 npass, nfail, nerr);
	t.summary = summary;
	for (size_t i = 0; i < n; i++)
		rows[i] = (struct htmlrep_row){ { o[i].name[0] ? o[i].name : o[i].path, o[i].path,
						  status_name[o[i].status], o[i].reason },
						o[i].path, o[i].html, o[i].status != ST_PASS };
	rc = htmlrep_save(path, htmlrep_table, &t, &err);
	free(rows);
	return rc ? cli_error(&err, rc) : 0;
}

/* "K/N" with 1 <= K <= N, each through cli_int (no "1/2junk", no
 * overflow); 0 ok. */
static int parse_shard(const char *s, long *k, long *n)
{
	const char *slash = strchr(s, '/');
	char head[24];

	if (!slash || (size_t)(slash - s) >= sizeof(head))
		return -1;
	memcpy(head, s, (size_t)(slash - s));
	head[slash - s] = '\0';
	if (cli_int(head, 1, INT_MAX, k) || cli_int(slash + 1, 1, INT_MAX, n))
		return -1;
	return *k <= *n ? 0 : -1;
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
		    struct outcome *o, int html)
{
	struct fs_err err = { 0 };
	struct runcase r;
	double t0 = clock_seconds();
	enum fs_rc e;

	o->path = path;
	e = runcase_load(path, &r, &err);
	r.exec = ex;
	if (!e)
		e = runcase_exec(&r, &err);
	o->seconds = clock_seconds() - t0;
	snprintf(o->name, sizeof(o->name), "%s", r.c.name);
	if (e) {
		o->status = ST_ERROR;
		fs_err_str(&err, o->reason, sizeof(o->reason));
		o->details = strdup(o->reason);
	} else {
		o->status = runcase_expected(&r) == FS_OK ? ST_PASS : ST_FAIL;
		report_reason(&r, o->reason, sizeof(o->reason));
		if (o->status == ST_FAIL)
			o->details = capture(report_details, &r);
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
	} else {
		report_line(stdout, &r);
	}
	fflush(stdout);
	runcase_free(&r);
}

/* Scan argv: options into the out-parameters, paths into ps. */
static int parse_args(int argc, char **argv, const char **junit, const char **shard,
		      const char **exec, const char **report, int *json, struct caselist *ps)
{
	int npaths = 0;

	/* Two passes: the first checks every option, so that a usage error
	 * returns before the directory walk; the second lists the cases. */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 1; i < argc;) {
			const char *v;
			int got;

			if ((got = cli_opt(argc, argv, &i, "--junit", &v)) > 0)
				*junit = v;
			else if (!got && (got = cli_opt(argc, argv, &i, "--shard", &v)) > 0)
				*shard = v;
			else if (!got && (got = cli_opt(argc, argv, &i, "--exec", &v)) > 0)
				*exec = v;
			else if (!got && (got = cli_opt(argc, argv, &i, "--report", &v)) > 0)
				*report = v;
			else if (!got && cli_flag(argv, i, "--json"))
				*json = 1, i++, got = 1;
			if (got < 0)
				return cli_usage_error(usage, "%s needs a value", argv[i]);
			if (got)
				continue;
			if (argv[i][0] == '-')
				return cli_usage_error(usage, "unknown option '%s'", argv[i]);
			if (pass == 1) {
				size_t before = ps->n;
				int rc = caselist_add(ps, argv[i]);

				if (rc == -1) {
					cli_usage_error(NULL, "out of memory");
					return FS_EINTERNAL;
				}
				if (rc < 0)
					return cli_usage_error(NULL, "%s", ps->why);
				if (ps->n == before)
					return cli_usage_error(NULL, "%s: no *.yaml case there", argv[i]);
			}
			npaths++;
			i++;
		}
		if (!npaths)
			return cli_usage_error(usage, "check: give at least one path");
	}
	return FS_OK;
}

int cmd_check(int argc, char **argv)
{
	const char *junit = NULL, *shard = NULL, *exec = "auto", *report = NULL;
	enum attn_exec ex;
	struct caselist ps = { 0 };
	struct outdir_file jf = { 0 };
	struct outcome *res = NULL;
	struct json j;
	long k = 1, nshard = 1;
	size_t npass = 0, nfail = 0, nerr = 0, nrun = 0;
	int json = 0, rc;
	time_t started = time(NULL);
	double t0 = clock_seconds();

	if (cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return FS_OK;
	}
	rc = parse_args(argc, argv, &junit, &shard, &exec, &report, &json, &ps);
	if (!rc && attn_exec_parse(exec, &ex))
		rc = cli_usage_error(usage, "--exec must be auto, scalar, portable, avx2 or avx512, not '%s'",
				     exec);
	if (!rc && shard && parse_shard(shard, &k, &nshard))
		rc = cli_usage_error(usage, "--shard must be K/N with 1 <= K <= N, not '%s'",
				     shard);
	if (!rc && report) {
		struct fs_err err = { 0 };
		enum fs_rc e = htmlrep_check(report, &err);

		if (e)
			rc = cli_error(&err, e);
	}
	if (!rc && junit) {
		struct fs_err err = { 0 };

		/* Checked and created now (under its temporary name) so that
		 * a path CI cannot write is found before the suite runs, not
		 * after; a directory there would only fail the final rename. */
		enum fs_rc e = outdir_file_check(junit, &err);

		if (!e)
			e = outdir_file_open(&jf, junit, &err);
		if (e)
			rc = cli_error(&err, e);
	}
	if (!rc) {
		caselist_sort(&ps);
		res = calloc(ps.n + 1, sizeof(*res));
		if (!res)
			rc = FS_EINTERNAL;
	}
	if (rc) {
		outdir_file_abort(&jf);
		caselist_free(&ps);
		return rc;
	}
	if (json) {
		json_init(&j, stdout, 1);
		json_begin_object(&j);
		json_key_int(&j, "fragsim_check", 1);
		json_key(&j, "shard");
		json_begin_object(&j);
		json_key_int(&j, "k", k);
		json_key_int(&j, "n", nshard);
		json_end_object(&j);
		json_key(&j, "cases");
		json_begin_array(&j);
	}
	for (size_t i = (size_t)(k - 1); i < ps.n; i += (size_t)nshard) {
		struct outcome *o = &res[nrun++];

		run_one(ps.p[i], ex, json ? &j : NULL, o, report != NULL);
		o->status == ST_ERROR ? nerr++ : o->status == ST_FAIL ? nfail++ : npass++;
	}
	if (json) {
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
	if (junit && write_junit(&jf, res, nrun, started, clock_seconds() - t0))
		rc = FS_EINTERNAL;
	if (report && write_report(report, res, nrun, npass, nfail, nerr))
		rc = FS_EINTERNAL;
	for (size_t i = 0; i < nrun; i++)
		free(res[i].details), free(res[i].html);
	caselist_free(&ps);
	free(res);
	if (rc)
		return rc;
	return nerr ? FS_EINPUT : nfail ? FS_MISMATCH : FS_OK;
}
