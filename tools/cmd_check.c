/*
 * cmd_check.c - `fragsim check PATH...`: every *.yaml case under the
 * paths, in sorted order, one line each, then "N passed, N failed".
 * --shard K/N takes every N-th case starting at the K-th, so N CI
 * machines split a suite deterministically; --junit writes JUnit XML.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caselist.h"
#include "cli.h"
#include "cmds.h"
#include "json.h"
#include "outdir.h"
#include "report.h"
#include "runcase.h"

static const char usage[] =
	"usage: fragsim check <path>... [--junit <file>] [--shard <k>/<n>] [--json]\n"
	"                     [--exec auto|scalar|portable|avx2|avx512]\n"
	"\n"
	"  <path>            a case file, or a directory searched for *.yaml\n"
	"  --junit <file>    also write JUnit XML for CI systems\n"
	"  --shard <k>/<n>   run only cases k, k+n, k+2n, ... (1-based, sorted order)\n"
	"  --json            one JSON object per case, then a summary object\n"
	"  --exec <e>        the executor (see fragsim run -h)    [default: auto]\n"
	"\n"
	"exit status: 0 all cases pass, 1 a case failed, 2 a case could not be run\n";

static void xml_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
				fputc(*s, f);
		}
	}
}

struct outcome {
	const char *path;
	char name[128];
	int status;		/* 0 pass, 1 fail, 2 error */
	char message[600];
	double seconds;
};

static enum fs_rc write_junit(const char *file, const struct outcome *o, size_t n)
{
	struct outdir_file out;
	struct fs_err err = { 0 };
	char *buf = NULL;
	size_t len = 0, fails = 0, errors = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return FS_EINTERNAL;
	for (size_t i = 0; i < n; i++)
		fails += o[i].status == 1, errors += o[i].status == 2;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<testsuites>\n<testsuite name=\"fragsim\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\">\n",
		n, fails, errors);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "  <testcase classname=\"fragsim\" name=\"");
		xml_escape(f, o[i].name[0] ? o[i].name : o[i].path);
		fprintf(f, "\" file=\"");
		xml_escape(f, o[i].path);
		fprintf(f, "\" time=\"%.3f\"", o[i].seconds);
		if (o[i].status == 0) {
			fprintf(f, "/>\n");
			continue;
		}
		fprintf(f, ">\n    <%s message=\"", o[i].status == 1 ? "failure" : "error");
		xml_escape(f, o[i].message);
		fprintf(f, "\"/>\n  </testcase>\n");
	}
	fprintf(f, "</testsuite>\n</testsuites>\n");
	if (fclose(f) != 0) {
		free(buf);
		return FS_EINTERNAL;
	}
	if (outdir_file_open(&out, file, &err) ||
	    outdir_file_write(&out, buf, len, &err) ||
	    outdir_file_commit(&out, &err)) {
		outdir_file_abort(&out);
		free(buf);
		return cli_error(&err, FS_EINTERNAL);
	}
	free(buf);
	return FS_OK;
}

int cmd_check(int argc, char **argv)
{
	const char *junit = NULL, *shard = NULL, *exec = "auto", *v;
	enum attn_exec ex;
	struct caselist ps = { 0 };
	struct outcome *res;
	long k = 1, nshard = 1;
	size_t npass = 0, nfail = 0, nerr = 0, nrun = 0;
	int json = 0, rc = FS_OK, nargs = 0;
	struct json j;

	if (cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return FS_OK;
	}
	/* Options first, so that a usage error returns before any work. */
	for (int i = 1; i < argc;) {
		int got;

		if ((got = cli_opt(argc, argv, &i, "--junit", &v)) > 0)
			junit = v;
		else if (!got && (got = cli_opt(argc, argv, &i, "--shard", &v)) > 0)
			shard = v;
		else if (!got && (got = cli_opt(argc, argv, &i, "--exec", &v)) > 0)
			exec = v;
		else if (!got && cli_flag(argv, i, "--json"))
			json = 1, i++, got = 1;
		if (got < 0)
			return cli_usage_error(usage, "%s needs a value", argv[i]);
		if (got)
			continue;
		if (argv[i][0] == '-')
			return cli_usage_error(usage, "unknown option '%s'", argv[i]);
		nargs++;
		i++;
	}
	if (!nargs)
		return cli_usage_error(usage, "check: give at least one path");
	if (attn_exec_parse(exec, &ex))
		return cli_usage_error(usage, "--exec must be auto, scalar, portable, avx2 or avx512, not '%s'",
				       exec);
	if (shard) {
		char *slash = strchr(shard, '/');

		if (!slash || sscanf(shard, "%ld/%ld", &k, &nshard) != 2 || nshard < 1 ||
		    k < 1 || k > nshard)
			return cli_usage_error(usage, "--shard must be K/N with 1 <= K <= N, not '%s'",
					       shard);
	}
	for (int i = 1; i < argc;) {
		if (cli_opt(argc, argv, &i, "--junit", &v) > 0 ||
		    cli_opt(argc, argv, &i, "--shard", &v) > 0 ||
		    cli_opt(argc, argv, &i, "--exec", &v) > 0)
			continue;
		if (cli_flag(argv, i, "--json")) {
			i++;
			continue;
		}
		if (caselist_add(&ps, argv[i]) < 0) {
			caselist_free(&ps);
			return cli_usage_error(NULL, "%s: no such file or directory, or out of memory",
					       argv[i]);
		}
		i++;
	}
	if (junit) {
		/* A JUnit path we cannot write fails now, not after the suite. */
		struct fs_err err = { 0 };
		enum fs_rc e = outdir_file_check(junit, &err);

		if (e) {
			caselist_free(&ps);
			return cli_error(&err, e);
		}
	}
	caselist_sort(&ps);
	res = calloc(ps.n + 1, sizeof(*res));
	if (!res) {
		caselist_free(&ps);
		return FS_EINTERNAL;
	}
	if (json) {
		json_init(&j, stdout, 0);
		json_begin_array(&j);
	}
	for (size_t i = 0; i < ps.n; i++) {
		struct outcome *o = &res[nrun];
		struct fs_err err = { 0 };
		struct runcase r;
		double t0 = cli_seconds();
		enum fs_rc e;

		if ((long)(i % (size_t)nshard) != k - 1)
			continue;
		nrun++;
		o->path = ps.p[i];
		e = runcase_load(ps.p[i], &r, &err);
		r.exec = ex;
		if (!e)
			e = runcase_exec(&r, &err);
		o->seconds = cli_seconds() - t0;
		snprintf(o->name, sizeof(o->name), "%s", r.c.name);
		if (e) {
			char buf[1200];

			o->status = 2;
			snprintf(o->message, sizeof(o->message), "%s",
				 fs_err_str(&err, buf, sizeof(buf)));
			if (!json)
				printf("%s: ERROR %s\n", ps.p[i], o->message);
			nerr++;
		} else {
			o->status = runcase_expected(&r) == FS_OK ? 0 : 1;
			if (o->status) {
				char *line = NULL;
				size_t len = 0;
				FILE *f = open_memstream(&line, &len);

				if (f) {
					report_line(f, &r);
					fclose(f);
					snprintf(o->message, sizeof(o->message), "%s", line);
					free(line);
				}
			}
			if (json)
				report_json(&j, &r);
			else
				report_line(stdout, &r);
			o->status ? nfail++ : npass++;
		}
		fflush(stdout);
		runcase_free(&r);
	}
	if (json) {
		json_begin_object(&j);
		json_key_int(&j, "passed", (int64_t)npass);
		json_key_int(&j, "failed", (int64_t)nfail);
		json_key_int(&j, "errors", (int64_t)nerr);
		json_end_object(&j);
		json_end_array(&j);
		json_finish(&j);
		putchar('\n');
	} else {
		printf("%zu passed, %zu failed", npass, nfail);
		if (nerr)
			printf(", %zu could not be run", nerr);
		putchar('\n');
	}
	if (junit && write_junit(junit, res, nrun))
		rc = FS_EINTERNAL;
	caselist_free(&ps);
	free(res);
	if (rc)
		return rc;
	return nerr ? FS_EINPUT : nfail ? FS_MISMATCH : FS_OK;
}
