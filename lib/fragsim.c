/*
 * fragsim.c - the public API (include/fragsim.h) as thin wrappers over
 * the library: lanemap_* and profile_* for lane maps, casefile and
 * runcase for cases and runs, golden for the golden directory.
 *
 *   struct fragsim_lanemap  ->  struct lanemap *       (sim/lanemap/lanemap.h)
 *   struct fragsim_case     ->  struct runcase          (lib/runcase.h)
 *                               + a fragsim_lanemap viewing runcase.lm
 *   struct fragsim_err      <-  struct fs_err, as "file:line:col: msg"
 *
 * Nothing here computes: a run through this API and `fragsim run` on the
 * same case give the same bytes. fragsim_case_build writes its fields as
 * a case file's text and loads that, so a case built in code gets the
 * very defaults and checks a case file gets.
 */
#include "../include/fragsim.h"

#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "casefile.h"
#include "golden.h"
#include "outdir.h"
#include "profile.h"
#include "../sim/attn/attn.h"
#include "runcase.h"

struct fragsim_lanemap {
	struct lanemap *lm;
};

struct fragsim_case {
	struct runcase r;
	struct fragsim_lanemap view;	/* r.lm, for fragsim_case_lanemap */
	int ran;			/* fragsim_run was called */
};

/* The public enums mirror the internal ones value for value. */
_Static_assert((int)FRAGSIM_EINTERNAL == (int)FS_EINTERNAL &&
	       (int)FRAGSIM_MISMATCH == (int)FS_MISMATCH &&
	       (int)FRAGSIM_ENOMEM == (int)FS_ENOMEM &&
	       (int)FRAGSIM_EBUDGET == (int)FS_EBUDGET, "fragsim_rc");

int fragsim_exit_status(enum fragsim_rc rc)
{
	return fs_rc_exit((int)rc);
}
_Static_assert((int)FRAGSIM_C == (int)LM_C && (int)FRAGSIM_F32 == (int)LM_F32 &&
	       (int)FRAGSIM_BF16 == (int)LM_BF16, "operand, dtype");
_Static_assert((int)FRAGSIM_EXEC_AVX512 == (int)ATTN_EXEC_AVX512 &&
	       (int)FRAGSIM_EXEC_SCALAR == (int)ATTN_EXEC_SCALAR, "exec");

/* Render e into the caller's error (if any); returns rc. */
static enum fragsim_rc give(struct fragsim_err *out, const struct fs_err *e,
			    enum fs_rc rc)
{
	if (out && rc)
		fs_err_str(e, out->msg, sizeof(out->msg));
	return (enum fragsim_rc)rc;
}

static enum fragsim_rc fail(struct fragsim_err *out, enum fs_rc rc,
			    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static enum fragsim_rc fail(struct fragsim_err *out, enum fs_rc rc,
			    const char *fmt, ...)
{
	va_list ap;

	if (out) {
		va_start(ap, fmt);
		vsnprintf(out->msg, sizeof(out->msg), fmt, ap);
		va_end(ap);
	}
	return (enum fragsim_rc)rc;
}

/* A NULL where the header allows none: FRAGSIM_EINPUT naming the
 * function and the argument, "fragsim_run: c is NULL". */
#define NEED(arg, err) do { \
		if (!(arg)) \
			return fail(err, FS_EINPUT, "%s: %s is NULL", __func__, #arg); \
	} while (0)

const char *fragsim_version(void)
{
	return FRAGSIM_VERSION;	/* -D from the file VERSION */
}

unsigned fragsim_version_number(void)
{
	unsigned v[3] = { 0, 0, 0 };

	sscanf(FRAGSIM_VERSION, "%u.%u.%u", &v[0], &v[1], &v[2]);
	return v[0] * 10000 + v[1] * 100 + v[2];
}

/* ---- lane maps ---- */

int fragsim_builtin_count(void)
{
	return profile_builtin_count();
}

const char *fragsim_builtin_name(int i)
{
	return i >= 0 && i < profile_builtin_count() ? profile_builtin_name(i) : NULL;
}

static struct fragsim_lanemap *wrap(struct lanemap *lm)
{
	struct fragsim_lanemap *w = lm ? malloc(sizeof(*w)) : NULL;

	if (w)
		w->lm = lm;
	else
		lanemap_free(lm);
	return w;
}

enum fragsim_rc fragsim_lanemap_load(const char *name_or_path,
				     struct fragsim_lanemap **out,
				     struct fragsim_err *err)
{
	struct fs_err e = { 0 };
	struct lanemap *lm;
	enum fragsim_rc rc;

	NEED(out, err);
	*out = NULL;
	NEED(name_or_path, err);
	lm = profile_resolve(name_or_path, &e);
	if (!lm)
		return give(err, &e, FS_EINPUT);
	*out = wrap(lm);
	if (!*out)
		return fail(err, FS_ENOMEM, "out of memory: the lane map");
	rc = fragsim_lanemap_validate(*out, err);
	if (rc) {
		fragsim_lanemap_free(*out);
		*out = NULL;
	}
	return rc;
}

enum fragsim_rc fragsim_lanemap_new(const char *name, int wave, int m, int n,
				    int k, struct fragsim_lanemap **out,
				    struct fragsim_err *err)
{
	struct lanemap *lm;

	NEED(out, err);
	*out = NULL;
	if (wave != 32 && wave != 64)
		return fail(err, FS_EINPUT, "wave must be 32 or 64, not %d", wave);
	if (m < 1 || m > LM_MAX_DIM || n < 1 || n > LM_MAX_DIM || k < 1 ||
	    k > LM_MAX_DIM)
		return fail(err, FS_EINPUT, "m, n and k must be between 1 and %d",
			    LM_MAX_DIM);
	if (!name || !*name || strlen(name) >= LM_NAME_MAX)
		return fail(err, FS_EINPUT, "name must have 1 to %d bytes",
			    LM_NAME_MAX - 1);
	/* as a profile file's name: printed as it is */
	for (size_t i = 0; name[i]; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return fail(err, FS_EINPUT, "name holds a control character (0x%02x "
				    "at character %zu)", (unsigned char)name[i], i + 1);
	lm = lanemap_new();
	if (!lm || !(*out = wrap(lm)))
		return fail(err, FS_ENOMEM, "out of memory: the lane map");
	snprintf(lm->name, sizeof(lm->name), "%s", name);
	lm->wave = wave, lm->m = m, lm->n = n, lm->k = k;
	return FRAGSIM_OK;
}

static enum fs_rc operand(struct lanemap *lm, enum fragsim_operand op,
			  enum fragsim_dtype type, int elems, int replicas,
			  struct fs_err *e)
{
	if ((unsigned)op >= LM_NOPERANDS)
		return fs_fail(e, FS_EINPUT, "no operand %d (A, B, C are 0, 1, 2)", (int)op);
	if ((unsigned)type > FRAGSIM_F32)
		return fs_fail(e, FS_EINPUT, "%s: no type %d", lm_operand_name((enum lm_operand)op),
			       (int)type);
	if (lanemap_set_operand(lm, (enum lm_operand)op, (enum lm_dtype)type,
				elems, replicas, e)) {
		fs_err_prefix(e, lm_operand_name((enum lm_operand)op));
		return FS_EINPUT;
	}
	return FS_OK;
}

enum fragsim_rc fragsim_lanemap_exprs(struct fragsim_lanemap *lm,
				      enum fragsim_operand op,
				      enum fragsim_dtype type, int elems,
				      int replicas, const char *row,
				      const char *col, struct fragsim_err *err)
{
	struct fs_err e = { 0 };
	enum fs_rc rc;

	NEED(lm, err);
	if ((rc = operand(lm->lm, op, type, elems, replicas, &e)))
		return give(err, &e, rc);
	if (!row || !col) {
		lm->lm->op[op].elems = 0;
		return fail(err, FS_EINPUT, "%s: give both row and col",
			    lm_operand_name((enum lm_operand)op));
	}
	rc = lanemap_set_exprs(lm->lm, (enum lm_operand)op, row, col, &e);
	if (rc)
		lm->lm->op[op].elems = 0;
	return give(err, &e, rc);
}

enum fragsim_rc fragsim_lanemap_table(struct fragsim_lanemap *lm,
				      enum fragsim_operand op,
				      enum fragsim_dtype type, int elems,
				      int replicas, const int32_t *row,
				      const int32_t *col,
				      struct fragsim_err *err)
{
	struct fs_err e = { 0 };
	enum fs_rc rc;

	NEED(lm, err);
	rc = operand(lm->lm, op, type, elems, replicas, &e);
	if (!rc && (!row || !col))
		rc = fs_fail(&e, FS_EINPUT, "%s: give both row and col tables",
			     lm_operand_name((enum lm_operand)op));
	if (!rc)
		rc = lanemap_set_table(lm->lm, (enum lm_operand)op, row, col, &e);
	if (rc && (unsigned)op < LM_NOPERANDS)
		lm->lm->op[op].elems = 0;	/* not given, after all */
	return give(err, &e, rc);
}

/* "A: lane 3 e 0 holds row 40, outside 0..15" and the like. */
static void describe(const struct lanemap *lm, const struct lm_problem *p,
		     char *buf, size_t len)
{
	const struct lanemap_operand *o = &lm->op[p->op];
	const char *name = lm_operand_name(p->op);

	if (p->kind == LM_OUT_OF_RANGE)
		snprintf(buf, len, "%s: lane %d e %d holds %s %d, outside 0..%d",
			 name, p->lane, p->e, p->bad == 'r' ? "row" : "col",
			 p->bad == 'r' ? p->row : p->col,
			 (p->bad == 'r' ? o->rows : o->cols) - 1);
	else if (p->kind == LM_UNOWNED)
		snprintf(buf, len, "%s[%d][%d] is held by no lane", name, p->row,
			 p->col);
	else
		snprintf(buf, len, "%s[%d][%d] is held %d times, not %d", name,
			 p->row, p->col, p->count, o->replicas);
}

enum fragsim_rc fragsim_lanemap_validate(struct fragsim_lanemap *lm,
					 struct fragsim_err *err)
{
	struct lm_report *rep;
	char first[200];
	enum fs_rc rc;

	NEED(lm, err);
	for (int op = 0; op < LM_NOPERANDS; op++)
		if (lm->lm->op[op].elems < 1)
			return fail(err, FS_MISMATCH, "%s: operand %s not given",
				    lm->lm->name, lm_operand_name((enum lm_operand)op));
	rep = malloc(sizeof(*rep));
	if (!rep)
		return fail(err, FS_ENOMEM, "out of memory: the validation report");
	rc = lanemap_validate(lm->lm, rep);
	if (rc == FS_MISMATCH) {
		describe(lm->lm, &rep->p[0], first, sizeof(first));
		fail(err, rc, "%s: not a valid lane map: %d problem%s, the first: %s",
		     lm->lm->name, rep->total, rep->total == 1 ? "" : "s", first);
	} else if (rc) {
		fail(err, rc, "out of memory: the lane map's inverse tables");
	}
	free(rep);
	return (enum fragsim_rc)rc;
}

int fragsim_lanemap_entry(const struct fragsim_lanemap *lm,
			  enum fragsim_operand op, int lane, int e, int *row,
			  int *col)
{
	const struct lanemap_operand *o;

	if (!lm || !row || !col || (unsigned)op >= LM_NOPERANDS)
		return -1;
	o = &lm->lm->op[op];
	if (o->elems < 1 || lane < 0 || lane >= lm->lm->wave || e < 0 ||
	    e >= o->elems)
		return -1;
	*row = o->row[lane * o->elems + e];
	*col = o->col[lane * o->elems + e];
	return 0;
}

void fragsim_lanemap_info(const struct fragsim_lanemap *lm,
			  struct fragsim_lanemap_info *out)
{
	const struct lanemap *l;

	if (!out)
		return;
	if (!lm) {
		memset(out, 0, sizeof(*out));
		return;
	}
	l = lm->lm;
	out->name = l->name;
	out->wave = l->wave, out->m = l->m, out->n = l->n, out->k = l->k;
	for (int op = 0; op < LM_NOPERANDS; op++) {
		out->elems[op] = l->op[op].elems;
		out->replicas[op] = l->op[op].replicas;
	}
	out->valid = l->valid;
}

void fragsim_lanemap_free(struct fragsim_lanemap *lm)
{
	if (!lm)
		return;
	lanemap_free(lm->lm);
	free(lm);
}

/* ---- cases ---- */

/* The steps of runcase_load after the case itself: lane map, route. */
static enum fragsim_rc finish_case(struct fragsim_case *fc,
				   struct fragsim_case **out,
				   struct fragsim_err *err)
{
	struct fs_err e = { 0 };
	enum fs_rc rc = runcase_finish(&fc->r, &e);

	if (rc) {
		fragsim_case_free(fc);
		return give(err, &e, rc);
	}
	fc->view.lm = fc->r.lm;
	*out = fc;
	return FRAGSIM_OK;
}

enum fragsim_rc fragsim_case_load(const char *path, struct fragsim_case **out,
				  struct fragsim_err *err)
{
	struct fragsim_case *fc;
	struct fs_err e = { 0 };
	enum fs_rc rc;

	NEED(out, err);
	*out = NULL;
	NEED(path, err);
	if (!(fc = calloc(1, sizeof(*fc))))
		return fail(err, FS_ENOMEM, "out of memory: the case");
	rc = case_load_file(path, &fc->r.c, &e);
	if (rc) {
		free(fc);
		return give(err, &e, rc);
	}
	return finish_case(fc, out, err);
}

enum fragsim_rc fragsim_case_parse(const char *text, size_t len,
				   const char *origin, const char *dir,
				   struct fragsim_case **out,
				   struct fragsim_err *err)
{
	struct fragsim_case *fc;
	struct fs_err e = { 0 };
	enum fs_rc rc;

	NEED(out, err);
	*out = NULL;
	if (!len)
		text = "";	/* an empty buffer, NULL or not: "empty document" */
	NEED(text, err);
	if (!(fc = calloc(1, sizeof(*fc))))
		return fail(err, FS_ENOMEM, "out of memory: the case");
	rc = case_load_text(text, len, origin ? origin : "<text>", dir, &fc->r.c, &e);
	if (rc) {
		free(fc);
		return give(err, &e, rc);
	}
	return finish_case(fc, out, err);
}

/* A YAML double-quoted scalar of s into buf; -1 on a control byte. */
static int quoted(char *buf, size_t len, const char *s)
{
	size_t n = 0;

	buf[n++] = '"';
	for (; *s && n + 3 < len; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return -1;
		if (*s == '"' || *s == '\\')
			buf[n++] = '\\';
		buf[n++] = *s;
	}
	if (*s)
		return -1;
	buf[n++] = '"';
	buf[n] = '\0';
	return 0;
}

/* Append to the case text; the caller checks for truncation at the end. */
static void add(char *buf, size_t len, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	*at += n > 0 ? (size_t)n : 0;
}

enum fragsim_rc fragsim_case_build(const struct fragsim_case_params *p,
				   struct fragsim_case **out,
				   struct fragsim_err *err)
{
	char text[4096], name[CASE_PATH_MAX + 8], isa[CASE_PATH_MAX + 8];
	size_t at = 0;

	NEED(out, err);
	*out = NULL;
	NEED(p, err);
	if (quoted(name, sizeof(name), p->name ? p->name : "case") ||
	    quoted(isa, sizeof(isa), p->isa ? p->isa : "gfx936"))
		return fail(err, FS_EINPUT, "name and isa must be printable and "
			    "shorter than %d bytes", CASE_PATH_MAX);
	if (p->prefill != 0 && p->prefill != 1)
		return fail(err, FS_EINPUT, "prefill must be 0 (decode) or 1 (prefill), not %d",
			    p->prefill);
	if (p->n_seqs < 1 || p->n_seqs > FRAGSIM_PARAMS_MAX_SEQS)
		return fail(err, FS_EINPUT, "n_seqs must be between 1 and %d, not %d",
			    FRAGSIM_PARAMS_MAX_SEQS, p->n_seqs);
	add(text, sizeof(text), &at, "fragsim: 1\nname: %s\nisa: %s\nmode: %s\n",
	    name, isa, p->prefill ? "prefill" : "decode");
	add(text, sizeof(text), &at, "model: {");
	if (p->q_heads)
		add(text, sizeof(text), &at, "q_heads: %d, ", p->q_heads);
	if (p->kv_heads)
		add(text, sizeof(text), &at, "kv_heads: %d, ", p->kv_heads);
	if (p->head_dim)
		add(text, sizeof(text), &at, "head_dim: %d, ", p->head_dim);
	add(text, sizeof(text), &at, "}\n");
	if (p->block_size)
		add(text, sizeof(text), &at, "cache: {block_size: %d}\n", p->block_size);
	add(text, sizeof(text), &at, "data: {seed: %llu}\nsequences:\n",
	    (unsigned long long)p->seed);
	for (int s = 0; s < p->n_seqs; s++) {
		int ctx = p->context[s], tok = p->tokens[s];

		/* the fields the caller set, named as they are */
		if (ctx < 0)
			return fail(err, FS_EINPUT, "context[%d]: must be at least 0, not %d",
				    s, ctx);
		if (tok < 0 || tok > ctx)
			return fail(err, FS_EINPUT, "tokens[%d]: must be between 0 and "
				    "context[%d] (%d), not %d", s, s, ctx, tok);
		if (!p->prefill && tok)
			add(text, sizeof(text), &at, "  - {context: %d, tokens: %d}\n",
			    ctx, tok);
		else if (!p->prefill)
			add(text, sizeof(text), &at, "  - {context: %d}\n", ctx);
		else
			add(text, sizeof(text), &at, "  - {history: %d, chunk: %d}\n",
			    ctx - (tok ? tok : ctx), tok ? tok : ctx);
	}
	if (at >= sizeof(text))
		return fail(err, FS_EINTERNAL, "case text too long");
	/* The text is ours: an error in it is named by its key, which is
	 * the field the caller set. */
	return fragsim_case_parse(text, at, "fragsim_case_build", NULL, out, err);
}

enum fragsim_rc fragsim_case_set_lanemap(struct fragsim_case *c,
					 const struct fragsim_lanemap *lm,
					 struct fragsim_err *err)
{
	struct fragsim_lanemap copy;
	enum fragsim_rc rc;

	NEED(c, err);
	NEED(lm, err);
	if (c->ran)
		return fail(err, FS_EINPUT, "the case has run: set its lane map before");
	copy.lm = lanemap_new();
	if (!copy.lm)
		return fail(err, FS_ENOMEM, "out of memory: the lane map");
	*copy.lm = *lm->lm;
	for (int op = 0; op < LM_NOPERANDS; op++)
		copy.lm->op[op].owner = NULL;	/* validate builds the copy's own */
	rc = fragsim_lanemap_validate(&copy, err);
	if (rc) {
		lanemap_free(copy.lm);
		return rc == FRAGSIM_MISMATCH ? FRAGSIM_EINPUT : rc;
	}
	/* The case against this map (8-bit signed A and B, i32 C, the
	 * case's rules), here: at run it was refused at the case's isa:
	 * key, which names another map. No place in the case: the map is
	 * the caller's. */
	{
		struct fs_case *cc = malloc(sizeof(*cc));
		struct fs_err e = { 0 };
		enum fs_rc fr;

		if (!cc) {
			lanemap_free(copy.lm);
			return fail(err, FS_ENOMEM, "out of memory: the case");
		}
		*cc = c->r.c;	/* shallow: only read */
		cc->n_at = 0;
		cc->file[0] = '\0';
		fr = attn_check_profile(cc, copy.lm, copy.lm, &e);
		free(cc);
		if (fr) {
			lanemap_free(copy.lm);
			return fail(err, fr, "fragsim_case_set_lanemap: %s",
				    strncmp(e.msg, "isa: ", 5) ? e.msg : e.msg + 5);
		}
	}
	lanemap_free(c->r.lm);
	c->r.lm = c->view.lm = copy.lm;
	return FRAGSIM_OK;
}

const char *fragsim_case_name(const struct fragsim_case *c)
{
	return c ? c->r.c.name : NULL;
}

const struct fragsim_lanemap *fragsim_case_lanemap(const struct fragsim_case *c)
{
	return c ? &c->view : NULL;
}

void fragsim_case_free(struct fragsim_case *c)
{
	if (!c)
		return;
	runcase_free(&c->r);
	free(c);
}

/* ---- running, comparing, goldens ---- */

enum fragsim_rc fragsim_run(struct fragsim_case *c, enum fragsim_exec exec,
			    int emulate_only, struct fragsim_err *err)
{
	struct fs_err e = { 0 };
	enum fs_rc rc;
	int threads;

	NEED(c, err);
	if (c->ran)
		return fail(err, FS_EINPUT, "%s: the case has run already", c->r.c.name);
	if ((unsigned)exec > FRAGSIM_EXEC_AVX512)
		return fail(err, FS_EINPUT, "no executor %d", (int)exec);
	c->ran = 1;
	c->r.emulate_only = !!emulate_only;
	c->r.exec = (enum attn_exec)exec;
	/* The program's thread count (OMP_NUM_THREADS=100000 is kept as it
	 * is, and starting such a team crashes inside libgomp): at most
	 * FRAGSIM_THREADS_MAX for this call, the program's setting after. */
	threads = omp_get_max_threads();
	if (threads > FRAGSIM_THREADS_MAX)
		omp_set_num_threads(FRAGSIM_THREADS_MAX);
	rc = runcase_exec(&c->r, &e);
	if (threads > FRAGSIM_THREADS_MAX)
		omp_set_num_threads(threads);
	if (rc)
		return give(err, &e, rc);
	/* the verdict fragsim run gives: an expect: mismatch case passes
	 * when a check caught its planted bug */
	rc = runcase_expected(&c->r);
	if (rc == FS_MISMATCH && c->r.c.expect_mismatch && !c->r.emulate_only)
		fail(err, rc, "%s: expected a mismatch; the planted bug went unseen",
		     c->r.c.name);
	else if (rc == FS_MISMATCH && !strcmp(runcase_failure(&c->r), "threshold"))
		fail(err, rc, "%s: a quality threshold failed; every exact comparison with "
		     "the reference holds", c->r.c.name);
	else if (rc == FS_MISMATCH)
		fail(err, rc, "%s: the emulation differs from the reference", c->r.c.name);
	return (enum fragsim_rc)rc;
}

enum fragsim_rc fragsim_summary(const struct fragsim_case *c,
				struct fragsim_summary *out)
{
	const struct runcase *r;
	const struct compare_report *p;
	const struct compare_quant *q;
	double nan = __builtin_nan("");

	if (!out)
		return FRAGSIM_EINPUT;
	memset(out, 0, sizeof(*out));
	if (!c)
		return FRAGSIM_EINPUT;
	r = &c->r, p = &r->cmp, q = &p->quant;
	if (!r->have_sim)
		return FRAGSIM_EINPUT;
	out->checked = r->have_cmp;
	out->expect_mismatch = r->c.expect_mismatch;
	out->out_cos_min = out->score_max_abs = out->kld_mean = out->top1 = nan;
	if (!r->have_cmp)
		return FRAGSIM_OK;
	out->rows = p->rows;
	out->mismatches = p->mismatches;
	out->failed_checks = p->n_failed;
	out->out_cos_min = q->out_cos_min;
	out->score_max_abs = q->score_max_abs;
	out->kld_mean = q->kld_mean;
	out->top1 = q->top1;
	for (int w = 0; w < CMP_NWHAT; w++) {
		const struct compare_stat *s = &p->stat[w];

		out->compared += s->compared;
		if (s->mismatches && !out->first[0])
			snprintf(out->first, sizeof(out->first),
				 "%s: sequence %d token %d q head %d: got %.9g, want %.9g",
				 compare_what_name((enum compare_what)w), s->first.s,
				 s->first.t, s->first.qh, s->first.got, s->first.want);
	}
	if (!out->first[0] && p->n_failed)
		snprintf(out->first, sizeof(out->first), "%s", p->failed[0].reason);
	return FRAGSIM_OK;
}

enum fragsim_rc fragsim_write_goldens(const struct fragsim_case *c,
				      const char *dir, int safetensors,
				      struct fragsim_err *err)
{
	struct fs_err e = { 0 };
	enum fs_rc rc;

	NEED(c, err);
	NEED(dir, err);
	if (!c->r.have_sim)
		return fail(err, FS_EINPUT, "%s: run the case first", c->r.c.name);
	if (!c->r.emulate_only && runcase_status(&c->r) != FS_OK)
		return fail(err, FS_MISMATCH, "goldens not written: %s",
			    !strcmp(runcase_failure(&c->r), "threshold") ?
			    "a quality threshold failed; every exact comparison with the reference holds" :
			    "the emulation differs from the reference");
	if (!c->r.emulate_only && c->r.c.expect_mismatch)
		return fail(err, FS_MISMATCH, "goldens not written: the case plants "
			    "a bug (expect: mismatch)");
	rc = outdir_check(dir, &e);
	if (!rc)
		rc = golden_write(&c->r, dir, safetensors ? GOLDEN_SAFETENSORS : GOLDEN_NPY, &e);
	return give(err, &e, rc);
}
