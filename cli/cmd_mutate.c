/*
 * cmd_mutate.c - `fragsim mutate PATH...`: does the suite catch every
 * bug class? For each class (sim/attn/kernel.h) the cases run with that wrong
 * assumption planted, cheapest case first, until one of them fails its
 * check; the class is then caught, and the first mismatch says where.
 * A class no case catches survives, and the exit status is 1; its line
 * says what kind of case would catch it, from the properties no case of
 * the suite has (mutneeds.c): "SURVIVED 2 case(s): no context in
 * the suite ends inside a 16-key tile".
 *
 * This is SQLite's fault injection turned on our own checks: a checker
 * that never saw a known-bad input has not been shown to check anything.
 *
 * Cases that carry a kernel: section of their own describe a buggy
 * kernel already and are skipped. A class that cannot apply to a case,
 * or cannot be seen in it, is not tried there: kernel_bug_na decides
 * that from the case's shape (model, cache, instruction) before
 * anything runs, and gives the reason. A class that applies to no case
 * is reported "n/a" with that reason; it neither survives nor fails the
 * run. Example: gqa_map on a suite whose cases all have one kv head.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/caselist.h"
#include "cli.h"
#include "cmds.h"
#include "options.h"
#include "../lib/json.h"
#include "htmlrep.h"
#include "../lib/outdir.h"
#include "mutneeds.h"
#include "progress.h"
#include "report.h"
#include "../lib/runcase.h"

struct mutate_args {
	const char *report;
	int json;
	int quiet;
};

#define OPT_ARGS struct mutate_args
static const struct opt mutate_opts[] = {
	OPT_ARG("<path>", "a case file, or a directory searched for *.yaml"),
	OPT_FLAG("--json", json,
	  "the verdict per bug class as JSON"),
	OPT_STRING("--report", report, "<file.html>",
	  "also write an HTML report: a table linking each case"),
	OPT_FLAG("--quiet", quiet,
	  "no progress on stderr (shown past 2 s: the case\n"
	  "and the class it is at)"),
	OPT_END(),
};
#undef OPT_ARGS

static const char *const mutate_synopsis[] = { "mutate <path>... [--json] [--report <file.html>] [--quiet]", NULL };

const struct opt_cmd cmd_mutate_spec = {
	.name = "mutate",
	.synopsis = mutate_synopsis,
	.opts = mutate_opts,
	.about = "For each bug class the kernel: section can plant, run the cases with it\n"
		 "until one fails its check.",
	.exit = "0 every class caught (or not applicable), 1 a class survives the\n"
		"suite, 2 bad input",
};

enum verdict { V_SURVIVED, V_CAUGHT, V_NA };

struct outcome {
	enum verdict v;
	int tried;			/* cases it ran on */
	const char *casefile;		/* the case that caught it */
	char casename[128];
	enum compare_what what;		/* first tensor that mismatched */
	int what_ok;			/* 0: caught by a threshold or replica check */
	struct compare_loc loc;
	int block, slot;		/* the key's physical block and slot; -1 */
	char reason[200];		/* threshold or replica message */
	int na;				/* cases it does not apply to */
	int na_mixed;			/* they gave different reasons */
	char na_reason[200];		/* the first such case's reason */
	char na_case[128];		/* and its name */
	struct need_seen ns;		/* the needs of the cases it ran on */
};

struct job {
	const char *path;
	double cost;
};

/* Keys x rows: cheap cases first, so most classes fall to a small case. */
static int job_cmp(const void *a, const void *b)
{
	const struct job *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return strcmp(x->path, y->path);
}

static double case_cost(const struct fs_case *c)
{
	double cost = 0.0;

	for (int s = 0; s < c->n_seqs; s++)
		cost += (double)c->seqs[s].context * c->seqs[s].tokens;
	return cost * c->q_heads * c->head_dim;
}

/*
 * For a score-level mismatch, the C entry and register slot that held the
 * key's score on the true map: row m of the tile (decode: the q head's
 * place in its GQA group; prefill: the query token's place in its row
 * tile), column n = the key's offset in its tile of N keys, tiles counted
 * from the start of the key's split-K segment.
 */
static void locate_slot(const struct runcase *r, struct compare_loc *l)
{
	const struct fs_case *c = &r->c;
	int M = r->lm->m, N = r->lm->n, lo, slot;

	if (l->lane >= 0 || l->key < 0 || l->qh < 0 || l->t < 0)
		return;
	lo = c->segment > 0 ? l->key / c->segment * c->segment : 0;
	l->row = c->mode == MODE_DECODE ? l->qh % case_group(c) % M : l->t % M;
	l->col = (l->key - lo) % N;
	if (lanemap_owners(r->lm, LM_C, l->row, l->col, &slot, 1) < 1)
		return;
	l->lane = slot / r->lm->op[LM_C].elems;
	l->elem = slot % r->lm->op[LM_C].elems;
}

/* Fill o from a failing report. */
static void record(const struct runcase *r, const char *path,
		   const struct compare_report *rep, struct outcome *o)
{
	o->v = V_CAUGHT;
	o->casefile = path;
	snprintf(o->casename, sizeof(o->casename), "%s", r->c.name);
	o->block = o->slot = -1;
	for (int w = 0; w < CMP_NWHAT; w++) {
		const struct compare_loc *l = &rep->stat[w].first;

		if (!rep->stat[w].mismatches)
			continue;
		o->what = (enum compare_what)w;
		o->what_ok = 1;
		o->loc = *l;
		locate_slot(r, &o->loc);
		if (l->s >= 0 && l->key >= 0 && l->key < case_context_max(&r->c) &&
		    l->key / r->c.block_size < case_blocks_of(&r->c, l->s)) {
			o->block = r->in.block_table[l->s * r->in.MAXB +
						     l->key / r->c.block_size];
			o->slot = l->key % r->c.block_size;
		}
		return;
	}
	if (rep->n_failed)
		snprintf(o->reason, sizeof(o->reason), "check %s", rep->failed[0].reason);
	else
		snprintf(o->reason, sizeof(o->reason), "%ld replica rows disagree",
			 rep->replica_mismatch);
}

/* Why class o (b) survived (needs_hint), and of how many cases when it
 * does not apply to some. */
static void survivor_hint(char *buf, size_t len, int b, const struct outcome *o)
{
	size_t at;

	needs_hint(buf, len, b, &o->ns);
	at = strlen(buf);
	if (o->na && at < len)
		snprintf(buf + at, len - at, " (of the %d case(s) it applies to)", o->tried);
}

/* Note that class o does not apply to case name, for reason why. */
static void note_na(struct outcome *o, const char *name, const char *why)
{
	if (!o->na++) {
		snprintf(o->na_reason, sizeof(o->na_reason), "%s", why);
		snprintf(o->na_case, sizeof(o->na_case), "%s", name);
	} else if (strcmp(o->na_reason, why)) {
		o->na_mixed = 1;
	}
}

/*
 * Run every still-surviving class that applies on one case. Returns
 * FS_OK, or an input/internal error for the case itself.
 */
/* Where the run is, for its progress line: case i (from 0) of n, with
 * `pending` classes not yet caught. */
struct mutate_at {
	struct progress_line *pl;
	size_t i, n;
	int pending;
};

/*
 * Emulate case c (r->c, or a copy with a planted bug) on r's inputs and
 * compare: *fails when a check fails (rep holds why). The case as written
 * is run so first: one that fails with no bug planted would look as if
 * it caught every class (a soak found an unmeetable threshold "catching"
 * classes that change no bit), so it is not used.
 */
static enum fs_rc check_once(struct runcase *r, const struct fs_case *c,
			     struct compare_report *rep, int *fails, struct fs_err *err)
{
	struct attn_result sim;
	enum fs_rc rc = runcase_emulate(r, c, NULL, &sim, err);

	*fails = 0;
	if (rc)
		return rc;
	rc = runcase_compare(r, c, &sim, rep, err);
	if (rc == FS_MISMATCH || (!rc && sim.replica_mismatch)) {
		*fails = 1;
		rc = FS_OK;
	}
	attn_free(&sim);
	return rc;
}

static enum fs_rc mutate_case(const char *path, struct outcome *out,
			      int *applies_any, const struct mutate_at *at,
			      size_t *failing, struct fs_err *err)
{
	struct runcase r;
	enum fs_rc rc = runcase_load(path, &r, err);
	int todo[BUG_COUNT] = { 0 }, any = 0;
	unsigned has = 0;

	if (rc)
		return rc;
	if (!kernel_is_default(&r.c.kernel) ||
	    (r.c.route == ROUTE_STRICT && !r.route.inside)) {
		runcase_free(&r);
		return FS_OK;
	}
	/* Which classes apply, from the shape alone: no inputs built for a
	 * case that has nothing left to try. */
	for (int b = 0; b < BUG_COUNT; b++) {
		char why[160];
		const char *na;

		if (out[b].v == V_CAUGHT)
			continue;
		na = kernel_bug_na((enum kern_bug)b, &r.c, r.lm, why, sizeof(why));
		if (na)
			note_na(&out[b], r.c.name, na);
		else
			any = todo[b] = 1;
	}
	if (any) {
		progress_line_say(at->pl, 1, "mutate: case %zu of %zu (%s), %d class(es) not caught yet",
				  at->i + 1, at->n, r.c.name, at->pending);
		rc = runcase_inputs(&r, err);
	}
	if (any && !rc) {
		struct compare_report rep;
		int fails;

		rc = check_once(&r, &r.c, &rep, &fails, err);
		if (!rc && fails) {
			progress_line_stop(at->pl);	/* the note on a line of its own */
			fprintf(stderr, "fragsim: note: %s: fails its checks with no bug "
				"planted ('fragsim check %s' says why); not used\n",
				r.c.name, path);
			(*failing)++;
			any = 0;
		}
	}
	if (any && !rc)
		has = needs_of_case(&r);
	for (int b = 0; any && !rc && b < BUG_COUNT; b++) {
		const struct kern_bug_info *bi;
		struct fs_case mc;
		struct compare_report rep;
		int caught;

		if (!todo[b])
			continue;
		mc = r.c;	/* shallow: shares the block tables, freed once */
		if (kernel_plant(&mc.kernel, (enum kern_bug)b, mc.head_dim)) {
			note_na(&out[b], r.c.name, "the bug cannot be planted in this case");
			continue;
		}
		applies_any[b] = 1;
		out[b].tried++;
		/* the terminal's line: what it plants first, a narrow one cuts
		 * the rest */
		bi = kernel_bug((enum kern_bug)b);
		progress_line_say(at->pl, 0, "mutate: case %zu of %zu, %s=%s, %d class(es) not caught yet, %s",
				  at->i + 1, at->n, bi->key, bi->bad, at->pending, r.c.name);
		needs_note(&out[b].ns, b, has, r.lm);
		rc = check_once(&r, &mc, &rep, &caught, err);
		if (rc)
			break;
		if (caught)
			record(&r, path, &rep, &out[b]);
	}
	runcase_free(&r);
	return rc;
}

/* Why a class applies to no case: the first case's reason, and a note
 * when other cases had other reasons. */
static void na_text(const struct outcome *o, char *buf, size_t len)
{
	if (o->na_mixed)
		snprintf(buf, len, "%s (case %s; other cases give other reasons)",
			 o->na_reason, o->na_case);
	else
		snprintf(buf, len, "%s", o->na_reason);
}

static void print_where(FILE *f, const struct outcome *o)
{
	const struct compare_loc *l = &o->loc;

	if (!o->what_ok) {
		fprintf(f, "%s", o->reason);
		return;
	}
	fprintf(f, "%s s=%d t=%d q_head=%d", compare_what_name(o->what), l->s, l->t, l->qh);
	if (l->key >= 0)
		fprintf(f, " key=%d", l->key);
	if (o->block >= 0)
		fprintf(f, " (block %d slot %d)", o->block, o->slot);
	if (l->dim >= 0)
		fprintf(f, " dim=%d", l->dim);
	if (l->seg >= 0)
		fprintf(f, " segment=%d", l->seg);
	if (l->lane >= 0)
		fprintf(f, " lane %d e %d C[%d][%d]", l->lane, l->elem, l->row, l->col);
	if (l->lane >= 0 && l->kstep >= 0)
		fprintf(f, " k-step %d", l->kstep);
}

static void json_outcome(struct json *j, int b, const struct outcome *o)
{
	const struct kern_bug_info *bi = kernel_bug((enum kern_bug)b);

	json_begin_object(j);
	json_key_string(j, "bug", bi->key);
	json_key_string(j, "value", bi->bad);
	json_key_string(j, "verdict", o->v == V_CAUGHT ? "caught" :
				      o->v == V_NA ? "not_applicable" : "survived");
	json_key_int(j, "cases_tried", o->tried);
	json_key_int(j, "cases_not_applicable", o->na);
	{
		char t[600];

		needs_exposed_by(t, sizeof(t), b, &o->ns);
		json_key_string(j, "exposed_by", t);
	}
	if (o->v == V_NA) {
		char why[400];

		na_text(o, why, sizeof(why));
		json_key_string(j, "reason", why);
	}
	if (o->v == V_SURVIVED) {
		char hint[1200];

		survivor_hint(hint, sizeof(hint), b, o);
		json_key_string(j, "hint", hint);
	}
	if (o->v == V_CAUGHT) {
		json_key_string(j, "case", o->casename);
		json_key_string(j, "file", o->casefile);
		json_key_string(j, "check", o->what_ok ? compare_what_name(o->what) : o->reason);
		if (o->what_ok) {
			int bs[2] = { o->block, o->slot };

			json_key(j, "first");
			report_json_loc(j, &o->loc, bs);
		}
	}
	json_end_object(j);
}

/* --report: one row per class, linking the case that caught it. */
static enum fs_rc write_report(const char *path, const struct outcome *out,
			       const char *summary, struct fs_err *err)
{
	struct htmlrep_row rows[BUG_COUNT];
	char name[BUG_COUNT][64], *what[BUG_COUNT] = { 0 };
	struct htmlrep_table t = { "fragsim mutate", summary,
				   { "bug class", "caught by", "verdict", "where" }, BUG_COUNT, rows };
	enum fs_rc rc;

	for (int b = 0; b < BUG_COUNT; b++) {
		const struct outcome *o = &out[b];
		size_t len;
		FILE *f = open_memstream(&what[b], &len);

		snprintf(name[b], sizeof(name[b]), "%s=%s", kernel_bug((enum kern_bug)b)->key,
			 kernel_bug((enum kern_bug)b)->bad);
		if (f && o->v == V_CAUGHT)
			print_where(f, o);
		else if (f && o->v == V_NA)
			fputs(o->na_reason, f);
		else if (f) {
			char hint[1200];

			survivor_hint(hint, sizeof(hint), b, o);
			fputs(hint, f);
		}
		if (f)
			fclose(f);
		rows[b] = (struct htmlrep_row){ { name[b], o->v == V_CAUGHT ? o->casefile : NULL,
						  o->v == V_CAUGHT ? "caught" : o->v == V_NA ? "n/a" : "SURVIVED",
						  what[b] }, o->v == V_CAUGHT ? o->casefile : NULL, NULL,
						o->v == V_SURVIVED };
	}
	rc = htmlrep_save(path, htmlrep_table, &t, err);
	for (int b = 0; b < BUG_COUNT; b++)
		free(what[b]);
	return rc;
}

int cmd_mutate(int argc, char **argv)
{
	struct caselist ps = { 0 };
	struct outcome out[BUG_COUNT];
	struct progress_line pl;
	struct mutate_args a = { 0 };
	int applies[BUG_COUNT] = { 0 }, nargs, survived = 0, na = 0, bad;
	size_t failing = 0;	/* cases that fail with no bug planted */
	struct job *jobs = NULL;
	struct fs_err err = { 0 };
	enum fs_rc rc = FS_OK;

	if ((nargs = opt_parse(&cmd_mutate_spec, &a, argc, argv, &bad)) < 0)
		return bad;
	if (!nargs)
		return opt_error(&cmd_mutate_spec, "mutate: give at least one path");
	if (a.report && (rc = htmlrep_check(a.report, &err)))
		return cli_error(&err, rc);
	for (int i = 0; i < nargs; i++) {
		int got = caselist_add(&ps, argv[i]);

		if (got == -1) {
			caselist_free(&ps);
			cli_usage_error(NULL, "out of memory: the list of cases");
			return FS_ENOMEM;
		}
		if (got < 0) {
			cli_usage_error(NULL, "%s", ps.why);
			caselist_free(&ps);
			return FS_EINPUT;
		}
	}
	caselist_sort(&ps);
	/* --report may be none of the cases (outdir_io_check). */
	for (size_t i = 0; a.report && !rc && i < ps.n; i++) {
		const struct outdir_io io[] = {
			{ "--report", a.report, OUTDIR_WRITE_FILE },
			{ "a case file", ps.p[i], OUTDIR_READ },
		};

		rc = outdir_io_check(io, 2, &err);
	}
	if (rc) {
		caselist_free(&ps);
		return cli_error(&err, rc);
	}

	/* Cost each case from its file alone (no inputs built yet). */
	jobs = calloc(ps.n + 1, sizeof(*jobs));
	for (size_t i = 0; jobs && !rc && i < ps.n; i++) {
		struct runcase r;

		rc = runcase_load(ps.p[i], &r, &err);
		if (!rc) {
			jobs[i].path = ps.p[i];
			jobs[i].cost = case_cost(&r.c);
			runcase_free(&r);
		}
	}
	if (!jobs)
		rc = fs_nomem(&err, "the mutation jobs", 0);
	if (!rc)
		qsort(jobs, ps.n, sizeof(*jobs), job_cmp);

	memset(out, 0, sizeof(out));
	progress_line_start(&pl, a.quiet);
	for (size_t i = 0; !rc && i < ps.n; i++) {
		struct mutate_at at = { &pl, i, ps.n, 0 };

		for (int b = 0; b < BUG_COUNT; b++)
			at.pending += out[b].v != V_CAUGHT;
		if (!at.pending)
			break;
		rc = mutate_case(jobs[i].path, out, applies, &at, &failing, &err);
	}
	progress_line_stop(&pl);
	if (rc) {
		free(jobs);
		caselist_free(&ps);
		return cli_error(&err, rc);
	}
	for (int b = 0; b < BUG_COUNT; b++) {
		if (out[b].v != V_CAUGHT && !applies[b]) {
			out[b].v = V_NA;
			if (!out[b].na)	/* every case skipped */
				snprintf(out[b].na_reason, sizeof(out[b].na_reason), "%s",
					 failing ? "no case that passes its checks as written, "
						   "without a kernel: section of its own, runs on the route" :
					 "no case without a kernel: section of its own runs on the route");
		}
		survived += out[b].v == V_SURVIVED;
		na += out[b].v == V_NA;
	}

	if (a.json) {
		struct json j;

		json_init(&j, stdout, 1);
		json_begin_object(&j);
		json_key_int(&j, "cases", (int64_t)ps.n);
		json_key_int(&j, "cases_failing", (int64_t)failing);
		json_key_int(&j, "survived", survived);
		json_key_int(&j, "applicable", BUG_COUNT - na);
		json_key_int(&j, "not_applicable", na);
		json_key(&j, "classes");
		json_begin_array(&j);
		for (int b = 0; b < BUG_COUNT; b++)
			json_outcome(&j, b, &out[b]);
		json_end_array(&j);
		json_end_object(&j);
		rc = json_finish(&j);
	} else {
		for (int b = 0; b < BUG_COUNT; b++) {
			const struct kern_bug_info *bi = kernel_bug((enum kern_bug)b);
			char name[64];

			snprintf(name, sizeof(name), "%s=%s", bi->key, bi->bad);
			printf("%-30s ", name);
			if (out[b].v == V_CAUGHT) {
				printf("caught by %s: ", out[b].casename);
				print_where(stdout, &out[b]);
				putchar('\n');
			} else if (out[b].v == V_NA) {
				char why[400];

				na_text(&out[b], why, sizeof(why));
				printf("n/a: %s\n", why);
			} else {
				char hint[1200];

				survivor_hint(hint, sizeof(hint), b, &out[b]);
				printf("SURVIVED %d case(s): %s\n", out[b].tried, hint);
			}
		}
	}
	{
		char summary[200], tail[80] = "";

		if (failing)
			snprintf(tail, sizeof(tail), "; %zu failing with no bug planted, not used",
				 failing);
		snprintf(summary, sizeof(summary), "%d of %d applicable bug classes survive %zu case(s), %d not applicable%s",
			 survived, BUG_COUNT - na, ps.n, na, tail);
		if (!a.json)
			printf("%s\n", summary);
		if (!rc && a.report && (rc = write_report(a.report, out, summary, &err)))
			cli_error(&err, rc);
	}
	free(jobs);
	caselist_free(&ps);
	if (rc)
		return rc;
	return survived ? FS_MISMATCH : FS_OK;
}
