/*
 * cmd_diff.c - `fragsim diff CASE --dump DIR`: what a kernel dumped from
 * a device against the simulation of its case, where they differ, and
 * which bug class or lane map explains the difference.
 *
 *   case      decode-40 (tests/data/dumps/c-columns/case.yaml)
 *   dump      tests/data/dumps/c-columns: acc (12 tiles), scores, out
 *   floats    bit for bit
 *   acc       2560 compared, 0 mismatches
 *   scores    960 compared, 684 mismatches, max abs 1.91, max rel 19.2
 *             scores[0,0,0,1] got 0.306 want -0.0127 | seq 0, token 0, ...
 *   verdict   mismatch: 2 of 3 tensors differ (1276 of 9664 elements)
 *   ...ranking...
 *   diagnosis: matches kernel assumption c_columns=contiguous exactly (...)
 *
 * The verdict compares with the case as written (its kernel: section
 * included); the diagnosis runs only when that does not match. A tensor
 * a .safetensors dump holds as BF16 says so at the end of its line:
 * "(compared at BF16: the simulation's rounded to nearest even)".
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cmds.h"
#include "options.h"
#include "../lib/diffcase.h"
#include "../lib/dump.h"
#include "../lib/json.h"
#include "../lib/runcase.h"
#include "../sim/attn/kernel.h"
#include "htmlrep.h"
#include "../lib/outdir.h"

#define SHOW_HYPOTHESES 5

struct diff_args {
	const char *dump, *report;
	double tol;
	long max;
	int json;
};

#define OPT_ARGS struct diff_args
static const struct opt diff_opts_table[] = {
	OPT_ARG("<case.yaml>", "the case the kernel ran"),
	OPT_STRING("--dump", dump, "<dir>",
	  "a directory of .npy files named as goldens are (acc.npy +\n"
	  "acc_tiles.npy, scores.npy, out.npy, q_int8.npy, q_scale.npy,\n"
	  "splitk_max/sum/out.npy); absent ones are skipped"),
	OPT_NUMBER("--tol", tol, "<abs>", 0.0,
	  "floats equal within this absolute difference; NaN and\n"
	  "infinities must still match exactly", .def = "0, bit for bit"),
	OPT_INT("--max", max, "<n>", 0, DIFF_MAX_SHOW,
	  "mismatches listed per tensor", .def = "8"),
	OPT_FLAG("--json", json, "the report as JSON"),
	OPT_STRING("--report", report, "<file.html>",
	  "also write an HTML report: heat maps of the mismatches"),
	OPT_END(),
};
#undef OPT_ARGS

static const char *const diff_synopsis[] = {
	"diff <case.yaml> --dump <dir> [--tol <abs>] [--max <n>] [--json]",
	" [--report <file.html>]",
	NULL,
};

const struct opt_cmd cmd_diff_spec = {
	.name = "diff",
	.synopsis = diff_synopsis,
	.opts = diff_opts_table,
	.about = "The expectation is the case as written, kernel: section included. On a\n"
		 "mismatch every bug class and every builtin lane map of the same shape is\n"
		 "emulated as a hypothesis and ranked by the dumped elements it reproduces.",
	.exit = "0 the dump matches, 1 mismatch (diagnosis printed), 2 bad input",
};

static void print_value(FILE *f, double v, int is_int)
{
	if (v != v)
		fputs("nan", f);
	else if (isinf(v))
		fputs(v < 0 ? "-inf" : "inf", f);
	else if (is_int)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.9g", v);
}

static void print_loc(FILE *f, const struct runcase *r, enum dump_tensor t,
		      const struct diff_loc *l)
{
	int is_int = t == DUMP_ACC || t == DUMP_Q_INT8 || t == DUMP_P_INT8 || t == DUMP_PV_ACC;

	fprintf(f, "          %s[", dump_name(t));
	for (int i = 0; i < l->ndim; i++)
		fprintf(f, "%s%zu", i ? "," : "", l->idx[i]);
	fputs("] got ", f);
	if (l->unwritten)
		fputs("unwritten", f);	/* the harness's poison: never stored */
	else
		print_value(f, l->got, is_int);
	fputs(" want ", f);
	if (l->no_tile)
		fputs("(no such tile)", f);
	else
		print_value(f, l->want, is_int);
	fprintf(f, " | seq %d, token %d, q head %d, kv head %d", l->s, l->t, l->qh, l->kvh);
	if (l->key >= 0) {
		fprintf(f, ", key %d", l->key);
		if (l->block >= 0)
			fprintf(f, " (block %d, slot %d)", l->block, l->slot);
		else
			fputs(" (past the block table)", f);
	}
	if (l->seg >= 0)
		fprintf(f, ", segment %d", l->seg);
	if (l->dim >= 0)
		fprintf(f, ", dim %d", l->dim);
	if (l->tile >= 0)
		fprintf(f, ", tile %ld", l->tile);
	if (l->kstep >= 0 && (t == DUMP_Q_INT8 || r->sim.ksteps_in_acc > 1))
		fprintf(f, ", k-step %d", l->kstep);
	if (l->operand) {
		int reg, byte;

		lanemap_reg_byte(r->lm, l->operand == 'A' ? LM_A : LM_C, l->elem, &reg, &byte);
		fprintf(f, ", %c[%d][%d] lane %d reg %d", l->operand, l->row, l->col,
			l->lane, reg);
		if (l->operand == 'A')
			fprintf(f, " byte %d", byte);
	}
	fputc('\n', f);
}

static void print_text(const struct runcase *r, const char *dir, const struct dump *d,
		       const struct diff_opts *o, const struct diff_report *rep,
		       const struct diff_diagnosis *dg, const char *verdict)
{
	int differ = 0, present = 0, absent = 0;

	printf("case      %s (%s)\n", r->c.name, r->c.file);
	printf("dump      %s:", dir);
	for (int t = 0; t < DUMP_COUNT; t++) {
		if (t == DUMP_ACC_TILES || t == DUMP_PV_TILES || !dump_has(d, (enum dump_tensor)t))
			continue;
		printf("%s %s", present++ ? "," : "", dump_name((enum dump_tensor)t));
		if (t == DUMP_ACC)
			printf(" (%zu tiles of %zu)", d->n_tiles, r->sim.n_tiles);
	}
	for (int t = 0; t < DUMP_COUNT; t++) {
		int splitk = t >= DUMP_SPLITK_MAX && t <= DUMP_SPLITK_OUT;
		int pv = t >= DUMP_P_INT8;

		if (t == DUMP_ACC_TILES || t == DUMP_PV_TILES || dump_has(d, (enum dump_tensor)t) ||
		    (splitk && !r->sim.seg_max) || (pv && !r->sim.pv_tiles))
			continue;
		printf("%s %s", absent++ ? "," : "; absent, not compared:",
		       dump_name((enum dump_tensor)t));
	}
	putchar('\n');
	if (o->tol > 0)
		printf("floats    equal within %g (--tol); NaN and infinities exactly\n", o->tol);
	else
		printf("floats    bit for bit\n");
	for (int t = 0; t < DUMP_COUNT; t++) {
		const struct diff_stat *st = &rep->stat[t];

		if (!st->present)
			continue;
		differ += st->mismatches > 0;
		printf("%-9s %ld compared, %ld mismatches", dump_name((enum dump_tensor)t),
		       st->compared, st->mismatches);
		if (st->unwritten)
			printf(" (%ld never written: the dump's poison)", st->unwritten);
		if (st->mismatches)
			printf(", max abs %.3g, max rel %.3g", st->max_abs, st->max_rel);
		/* "bit for bit" above then means against the rounded value */
		if (st->bf16)
			printf(" (compared at BF16: the simulation's rounded to nearest even)");
		putchar('\n');
		for (int i = 0; i < st->n_shown; i++)
			print_loc(stdout, r, (enum dump_tensor)t, &st->shown[i]);
		if (st->mismatches > st->n_shown && st->n_shown)
			printf("          ... %ld more\n", st->mismatches - st->n_shown);
	}
	if (!rep->mismatches) {
		printf("verdict   match: the dump is what the case computes\n");
		printf("%s\n", verdict);
		return;
	}
	printf("verdict   mismatch: %d of %d tensors differ (%ld of %ld elements)\n",
	       differ, present, rep->mismatches, rep->compared);
	printf("hypotheses, by the dumped elements each reproduces:\n");
	for (int i = 0; i < dg->n && i < SHOW_HYPOTHESES; i++)
		printf("  %7.3f%%  %ld/%ld  %s\n",
		       100.0 * (double)dg->h[i].matched / (double)dg->compared,
		       dg->h[i].matched, dg->compared, dg->h[i].name);
	printf("  %7.3f%%  %ld/%ld  (the case as written)\n",
	       100.0 * (double)dg->expect_matched / (double)dg->compared,
	       dg->expect_matched, dg->compared);
	if (dg->n > SHOW_HYPOTHESES)
		printf("  (%d more hypotheses tried)\n", dg->n - SHOW_HYPOTHESES);
	if (dg->n_skipped)
		printf("  not applicable to this case: %s\n", dg->skipped);
	for (int i = 0; i < dg->n_notrun; i++)
		printf("  not run: %s: %s\n", dg->notrun[i].name, dg->notrun[i].why);
	printf("%s\n", verdict);
}

static void json_loc(struct json *j, enum dump_tensor t, const struct diff_loc *l)
{
	static const char *const names[] = { "seq", "token", "q_head", "kv_head", "key",
					     "block", "slot", "dim", "segment", "kstep",
					     "lane", "elem", "row", "col" };
	int v[] = { l->s, l->t, l->qh, l->kvh, l->key, l->block, l->slot, l->dim,
		    l->seg, l->kstep, l->lane, l->elem, l->row, l->col };

	json_begin_object(j);
	json_key(j, "index");
	json_begin_array_compact(j);
	for (int i = 0; i < l->ndim; i++)
		json_uint(j, l->idx[i]);
	json_end_array(j);
	json_key_double(j, "got", l->got);	/* NaN and inf become null */
	json_key_double(j, "want", l->want);
	if (l->unwritten)
		json_key_bool(j, "unwritten", 1);
	for (size_t i = 0; i < FS_ARRAY_LEN(v); i++)
		if (v[i] >= 0)
			json_key_int(j, names[i], v[i]);
	if (l->tile >= 0)
		json_key_int(j, "tile", l->tile);
	if (l->operand)
		json_key_string(j, "operand", l->operand == 'A' ? "A" : "C");
	(void)t;
	json_end_object(j);
}

static int print_json(const struct runcase *r, const char *dir, const struct dump *d,
		      const struct diff_opts *o, const struct diff_report *rep,
		      const struct diff_diagnosis *dg, const char *verdict)
{
	struct json j;

	json_init(&j, stdout, 1);
	json_begin_object(&j);
	json_key_string(&j, "case", r->c.name);
	json_key_string(&j, "file", r->c.file);
	json_key_string(&j, "dump", dir);
	json_key_double(&j, "tol", o->tol);
	json_key_string(&j, "status", rep->mismatches ? "mismatch" : "match");
	json_key_int(&j, "compared", rep->compared);
	json_key_int(&j, "mismatches", rep->mismatches);
	json_key(&j, "tensors");
	json_begin_array(&j);
	for (int t = 0; t < DUMP_COUNT; t++) {
		const struct diff_stat *st = &rep->stat[t];

		if (!st->present)
			continue;
		json_begin_object(&j);
		json_key_string(&j, "name", dump_name((enum dump_tensor)t));
		if (t == DUMP_ACC)
			json_key_uint(&j, "tiles", d->n_tiles);
		if (st->bf16)	/* compared with the simulation rounded to BF16 */
			json_key_bool(&j, "bf16", 1);
		json_key_int(&j, "compared", st->compared);
		json_key_int(&j, "mismatches", st->mismatches);
		json_key_int(&j, "unwritten", st->unwritten);
		json_key_double(&j, "max_abs", st->max_abs);
		json_key_double(&j, "max_rel", st->max_rel);
		json_key(&j, "first");
		json_begin_array(&j);
		for (int i = 0; i < st->n_shown; i++)
			json_loc(&j, (enum dump_tensor)t, &st->shown[i]);
		json_end_array(&j);
		json_end_object(&j);
	}
	json_end_array(&j);
	if (rep->mismatches) {
		json_key_int(&j, "expectation_matched", dg->expect_matched);
		json_key(&j, "hypotheses");
		json_begin_array(&j);
		for (int i = 0; i < dg->n; i++) {
			json_begin_object(&j);
			json_key_string(&j, "name", dg->h[i].name);
			json_key_int(&j, "matched", dg->h[i].matched);
			json_key_int(&j, "compared", dg->compared);
			/* of the entries the case as written gets wrong */
			json_key_int(&j, "mismatches_reproduced", dg->h[i].fixed);
			json_key(&j, "classes");
			json_begin_array_compact(&j);
			for (int k = 0; k < 2; k++) {
				int b = k ? dg->h[i].bug2 : dg->h[i].bug;
				const struct kern_bug_info *bi = b >= 0 ? kernel_bug((enum kern_bug)b) : NULL;
				char kv[96];

				if (!bi)
					continue;
				snprintf(kv, sizeof(kv), "%s=%s", bi->key, bi->bad);
				json_string(&j, kv);
			}
			json_end_array(&j);
			json_end_object(&j);
		}
		json_end_array(&j);
		json_key_string(&j, "not_applicable", dg->skipped);
		json_key(&j, "not_run");
		json_begin_array(&j);
		for (int i = 0; i < dg->n_notrun; i++) {
			json_begin_object(&j);
			json_key_string(&j, "name", dg->notrun[i].name);
			json_key_string(&j, "reason", dg->notrun[i].why);
			json_end_object(&j);
		}
		json_end_array(&j);
	}
	json_key_string(&j, "diagnosis", verdict);
	json_end_object(&j);
	return json_finish(&j) ? FS_EINTERNAL : FS_OK;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_args a = { .tol = 0.0, .max = 8 };
	const char *path, *dir;
	struct diff_opts o = { 0 };
	struct fs_err err = { 0 };
	struct diff_diagnosis *dg = NULL;
	struct diff_report rep = { 0 };
	struct dump d = { 0 };
	struct runcase r;
	char verdict[1024];
	struct stat st;
	int n, bad;
	enum fs_rc rc;

	if ((n = opt_parse(&cmd_diff_spec, &a, argc, argv, &bad)) < 0)
		return bad;
	if (n > 1)
		return opt_error(&cmd_diff_spec, "unexpected argument '%s'", argv[1]);
	if (!n)
		return opt_error(&cmd_diff_spec, "diff: give a case file");
	if (!a.dump)
		return opt_error(&cmd_diff_spec, "diff: give the dump directory with --dump");
	path = argv[0];
	dir = a.dump;
	o.tol = a.tol;
	o.max_show = (int)a.max;

	if ((rc = cli_case_not_dir("diff", path)))
		return rc;
	/* A --dump that is not there is said so (the loader would call it
	 * "not a directory or a .safetensors file") */
	if (stat(dir, &st) != 0)
		return cli_usage_error(NULL, "%s: --dump: %s", dir,
				       errno == ENOENT ? "does not exist" : strerror(errno));
	{
		const struct outdir_io io[] = {
			{ "the case file", path, OUTDIR_READ },
			{ "--dump", dir, OUTDIR_READ },
			{ "--report", a.report, OUTDIR_WRITE_FILE },
		};

		if ((rc = outdir_io_check(io, sizeof(io) / sizeof(io[0]), &err)))
			return cli_error(&err, rc);
	}
	if (a.report && (rc = htmlrep_check(a.report, &err)))
		return cli_error(&err, rc);
	rc = runcase_load(path, &r, &err);	/* r is freeable even on failure */
	if (!rc)
		rc = runcase_inputs(&r, &err);
	if (!rc && !(rc = runcase_emulate(&r, &r.c, NULL, &r.sim, &err)))
		r.have_sim = 1;
	if (!rc)
		rc = dump_load(dir, &r, &d, &err);
	if (!rc)
		rc = diffcase_compare(&r, &r.sim, &d, &o, &rep, &err);
	if (!rc && !(dg = calloc(1, sizeof(*dg))))
		rc = fs_nomem(&err, "the diagnosis", sizeof(*dg));
	if (!rc && rep.mismatches)
		rc = diffcase_diagnose(&r, &d, &o, dg, &err);
	if (!rc) {
		if (rep.mismatches)
			diffcase_verdict(dg, verdict, sizeof(verdict));
		else
			snprintf(verdict, sizeof(verdict), "diagnosis: none needed");
		if (a.json)
			rc = print_json(&r, dir, &d, &o, &rep, dg, verdict);
		else
			print_text(&r, dir, &d, &o, &rep, dg, verdict);
		if (!rc && a.report && (rc = htmlrep_diff_save(a.report, &r, dir, &d, &o, &rep, dg,
							      verdict, &err)))
			cli_error(&err, rc);
		if (!rc && rep.mismatches)
			rc = FS_MISMATCH;
	} else {
		cli_error(&err, rc);
	}
	free(dg);
	diffcase_report_free(&rep);
	dump_free(&d);
	runcase_free(&r);
	return rc;
}
