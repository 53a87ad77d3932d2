/*
 * cmd_probe.c - `fragsim probe`: find a matrix instruction's lane map on a
 * device (the math is sim/probe.c; this file moves it through files).
 *
 *   fragsim probe plan --isa gfx936 --out plan/           what to run
 *   (device: per wave, load probe_a/probe_b, one instruction, store C)
 *   fragsim probe solve --plan plan/ --dump dump/         compare, exit 0/1
 *   fragsim probe solve --plan plan/ --dump dump/ --yaml  the map found
 *   fragsim probe simulate --plan plan/ --isa gfx936-quad --out dump/
 *                                                        a device in software
 *
 *   plan/                          dump/
 *     manifest.json  isa, waves,     probe_c.npy  int32 [W, LANES, EC]
 *                    files, digests  manifest.json  (simulate writes one)
 *     profile.yaml   the plan's profile as a table: solve needs nothing else
 *     probe_a.npy    int8 [W, LANES, EA]   (uint8 when the profile says u8)
 *     probe_b.npy    int8 [W, LANES, EB]
 *
 * Solve rebuilds the plan from profile.yaml and insists that probe_a/b
 * are those bytes: a dump can only be read against the plan it answers.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/lanediff.h"
#include "../sim/probe.h"
#include "cli.h"
#include "cmds.h"
#include "options.h"
#include "../lib/json.h"
#include "../lib/npy.h"
#include "../lib/outdir.h"
#include "../lib/profile.h"
#include "../lib/readfile.h"
#include "../lib/yamldoc.h"

struct probe_args {
	const char *isa, *out, *plan, *dump;
	int yaml;
};

#define OPT_ARGS struct probe_args
static const struct opt plan_opts[] = {
	OPT_STRING("--isa", isa, "<name|file>",
	  "the profile to probe", .flags = OPT_PROFILE),
	OPT_STRING("--out", out, "<dir>", "where the plan appears, whole"),
	OPT_END(),
};
static const struct opt solve_opts[] = {
	OPT_STRING("--plan", plan, "<dir>", "a directory written by 'probe plan'"),
	OPT_STRING("--dump", dump, "<dir>",
	  "holds probe_c.npy: int32 [waves, lanes, C elements]"),
	OPT_STRING("--isa", isa, "<name|file>",
	  "the profile to compare with and name labels after",
	  .def = "the plan's", .flags = OPT_PROFILE),
	OPT_FLAG("--yaml", yaml, "print the map found as a profile YAML"),
	OPT_END(),
};
static const struct opt simulate_opts[] = {
	OPT_STRING("--plan", plan, "<dir>", "a directory written by 'probe plan'"),
	OPT_STRING("--isa", isa, "<name|file>",
	  "the map the simulated device follows", .flags = OPT_PROFILE),
	OPT_STRING("--out", out, "<dir>", "where the simulated dump appears, whole"),
	OPT_END(),
};
#undef OPT_ARGS

static const char *const plan_synopsis[] = {
	"probe plan --isa <name|file> --out <dir>", NULL
};
static const char *const solve_synopsis[] = {
	"probe solve --plan <dir> --dump <dir> [--isa <name|file>] [--yaml]", NULL
};
static const char *const simulate_synopsis[] = {
	"probe simulate --plan <dir> --isa <name|file> --out <dir>", NULL
};

static const struct opt_cmd plan_cmd = {
	.name = "plan", .synopsis = plan_synopsis, .opts = plan_opts,
	.parent = &cmd_probe_spec,
};
static const struct opt_cmd solve_cmd = {
	.name = "solve", .synopsis = solve_synopsis, .opts = solve_opts,
	.parent = &cmd_probe_spec,
};
static const struct opt_cmd simulate_cmd = {
	.name = "simulate", .synopsis = simulate_synopsis, .opts = simulate_opts,
	.parent = &cmd_probe_spec,
};
static const struct opt_cmd *const subs[] = { &plan_cmd, &solve_cmd, &simulate_cmd, NULL };

const struct opt_cmd cmd_probe_spec = {
	.name = "probe",
	.exit = "0 the device matches, 1 it differs, 2 bad input or answers\n"
		"that no lane map explains, 3 internal error",
	.subs = subs,
};

#define MANIFEST_MAX_BYTES (1u << 20)
#define DIFF_SHOWN 8	/* differing slots listed per operand */

/* A profile, validated; NULL with err and *rc on failure. */
static struct lanemap *load_valid(const char *what, struct fs_err *err,
				  enum fs_rc *rc)
{
	struct lanemap *lm = profile_resolve(what, err);
	struct lm_report *rep;

	*rc = fs_err_rc(err, err->msg[0] ? FS_EINPUT : FS_EINTERNAL);
	if (!lm)
		return NULL;
	rep = malloc(sizeof(*rep));
	*rc = rep ? lanemap_validate(lm, rep) : FS_ENOMEM;
	free(rep);
	if (*rc == FS_OK)
		return lm;
	if (*rc == FS_MISMATCH)
		*rc = fs_fail(err, FS_EINPUT, "%s: profile is not valid ('fragsim lanemap check %s' says why)",
			lm->name, what);
	else
		*rc = fs_nomem(err, "the profile's inverse tables", 0);
	lanemap_free(lm);
	return NULL;
}

/* ---- a profile as YAML the loader reads back ---- */

static void yaml_quoted(FILE *f, const char *key, const char *s)
{
	fprintf(f, "%s: \"", key);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputs("\"\n", f);
}

/* Tables, not expressions: a found map need not have a formula. */
static void profile_yaml(FILE *f, const struct lanemap *lm)
{
	static const char *const keys[] = { "a", "b", "c" };

	fprintf(f, "fragsim_profile: 1\n");
	yaml_quoted(f, "name", lm->name);
	yaml_quoted(f, "instruction", lm->instr);
	yaml_quoted(f, "description", lm->desc);
	yaml_quoted(f, "source", lm->source);
	fprintf(f, "wave: %d\nm: %d\nn: %d\nk: %d\n", lm->wave, lm->m, lm->n, lm->k);
	for (int op = 0; op < LM_NOPERANDS; op++) {
		const struct lanemap_operand *o = &lm->op[op];

		fprintf(f, "%s:\n  type: %s\n  elements: %d\n", keys[op],
			lm_dtype_name(o->type), o->elems);
		if (o->replicas > 1)
			fprintf(f, "  replicas: %d\n", o->replicas);
		fprintf(f, "  table: |\n    lane,e,row,col\n");
		for (int s = 0; s < lm->wave * o->elems; s++)
			fprintf(f, "    %d,%d,%d,%d\n", s / o->elems, s % o->elems,
				o->row[s], o->col[s]);
	}
}

/* ---- plan ---- */

static enum npy_dtype npy_of(enum lm_dtype t)
{
	return t == LM_U8 ? NPY_U8 : NPY_I8;
}

static void shape3(size_t *s, int waves, const struct lanemap *lm, enum lm_operand op)
{
	s[0] = (size_t)waves;
	s[1] = (size_t)lm->wave;
	s[2] = (size_t)lm->op[op].elems;
}

static void json_shape(struct json *j, const size_t *s)
{
	json_key(j, "shape");
	json_begin_array_compact(j);
	for (int d = 0; d < 3; d++)
		json_uint(j, s[d]);
	json_end_array(j);
}

static enum fs_rc write_manifest(const char *path, const struct lanemap *lm,
				 int waves, char sha[2][65], struct fs_err *err)
{
	static const char *const names[] = { "probe_a.npy", "probe_b.npy", "probe_c.npy" };
	struct json j;
	enum fs_rc rc;

	json_init_mem(&j, 1);
	json_begin_object(&j);
	json_key_string(&j, OUTDIR_MARK_KEY, OUTDIR_MARK_VALUE);
	json_key_int(&j, "fragsim_probe", 1);
	json_key_string(&j, "fragsim_version", FRAGSIM_VERSION);
	json_key_string(&j, "isa", lm->name);
	json_key_string(&j, "instruction", lm->instr);
	json_key_int(&j, "wave", lm->wave);
	json_key_int(&j, "waves", waves);
	json_key_int(&j, "digit_base", PROBE_BASE);
	json_key(&j, "check_waves");
	json_begin_array_compact(&j);
	for (int i = 0; i < PROBE_CHECKS; i++)
		json_string(&j, probe_check_name(i));
	json_end_array(&j);
	json_key(&j, "files");
	json_begin_array(&j);
	for (int op = 0; op < LM_NOPERANDS; op++) {
		size_t s[3];

		shape3(s, waves, lm, (enum lm_operand)op);
		json_begin_object(&j);
		json_key_string(&j, "name", names[op]);
		json_key_string(&j, "dtype", op == LM_C ? "int32" :
				npy_dtype_name(npy_of(lm->op[op].type)));
		json_shape(&j, s);
		if (op == LM_C)
			json_key_string(&j, "written_by", "the device");
		else
			json_key_string(&j, "sha256", sha[op]);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	rc = json_save(&j, path, err);
	json_free(&j);
	return rc;
}

static enum fs_rc write_profile(const char *path, const struct lanemap *lm,
				struct fs_err *err)
{
	struct outdir_file f;
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	enum fs_rc rc;

	if (!m)
		return fs_nomem(err, "the probe plan", 0);
	fprintf(m, "# The profile this probe plan was made from (fragsim probe plan).\n");
	profile_yaml(m, lm);
	if (fclose(m) != 0) {
		free(text);
		return fs_nomem(err, "the probe plan", 0);
	}
	rc = outdir_file_open(&f, path, err);
	if (!rc)
		rc = outdir_file_write(&f, text, len, err);
	if (!rc)
		rc = outdir_file_commit(&f, err);
	free(text);
	return rc;
}

static int do_plan(const char *isa, const char *out)
{
	struct fs_err err = { 0 };
	enum fs_rc rc;
	struct lanemap *lm = load_valid(isa, &err, &rc);
	uint8_t *a = NULL, *b = NULL;
	char path[OUTDIR_PATH_MAX], sha[2][65];
	struct outdir d;
	size_t sa[3], sb[3], sc[3];
	int waves;

	if (!lm)
		return cli_error(&err, rc);
	waves = probe_waves(lm);
	shape3(sa, waves, lm, LM_A);
	shape3(sb, waves, lm, LM_B);
	shape3(sc, waves, lm, LM_C);
	a = malloc(sa[0] * sa[1] * sa[2]);
	b = malloc(sb[0] * sb[1] * sb[2]);
	rc = a && b ? probe_plan(lm, a, b, &err) : fs_nomem(&err, "the probe plan", 0);
	if (!rc)
		rc = outdir_begin(&d, out, &err);
	if (!rc) {
		rc = outdir_path(&d, "probe_a.npy", path, sizeof(path), &err);
		if (!rc)
			rc = npy_write(path, npy_of(lm->op[LM_A].type), 3, sa, a, sha[0], &err);
		if (!rc)
			rc = outdir_path(&d, "probe_b.npy", path, sizeof(path), &err);
		if (!rc)
			rc = npy_write(path, npy_of(lm->op[LM_B].type), 3, sb, b, sha[1], &err);
		if (!rc)
			rc = outdir_path(&d, "profile.yaml", path, sizeof(path), &err);
		if (!rc)
			rc = write_profile(path, lm, &err);
		if (!rc)
			rc = outdir_path(&d, "manifest.json", path, sizeof(path), &err);
		if (!rc)
			rc = write_manifest(path, lm, waves, sha, &err);
		rc = rc ? (outdir_abort(&d), rc) : outdir_commit(&d, &err);
	}
	if (!rc) {
		printf("plan      %s, %d waves (%d one-hot A slots x %d digits, %d checks)\n",
		       lm->name, waves, lm->wave * lm->op[LM_A].elems, PROBE_DIGITS,
		       PROBE_CHECKS);
		printf("inputs    probe_a.npy %s [%zu, %zu, %zu], probe_b.npy %s [%zu, %zu, %zu]\n",
		       npy_dtype_name(npy_of(lm->op[LM_A].type)), sa[0], sa[1], sa[2],
		       npy_dtype_name(npy_of(lm->op[LM_B].type)), sb[0], sb[1], sb[2]);
		printf("device    writes probe_c.npy int32 [%zu, %zu, %zu]: per wave, one %s, C from 0\n",
		       sc[0], sc[1], sc[2], lm->instr);
		printf("written   to %s\n", out);
	}
	free(a);
	free(b);
	lanemap_free(lm);
	return rc ? cli_error(&err, rc) : FS_OK;
}

/* ---- reading a plan and a dump back ---- */

struct plan {
	struct lanemap *lm;	/* the plan's profile (profile.yaml), validated */
	int waves;
	uint8_t *a, *b;		/* the plan, rebuilt and checked against the files */
};

static void plan_free(struct plan *p)
{
	lanemap_free(p->lm);
	free(p->a);
	free(p->b);
	memset(p, 0, sizeof(*p));
}

static enum fs_rc join_path(char *out, size_t len, const char *dir,
			    const char *name, struct fs_err *err)
{
	if ((size_t)snprintf(out, len, "%s/%s", dir, name) >= len)
		return fs_fail(err, FS_EINPUT, "%s: path too long", dir);
	return FS_OK;
}

/* The manifest says which profile and how many waves; check both. In
 * memory (text, len, read from path), for the fuzzer too (cmds.h). */
enum fs_rc probe_manifest_check(const char *text, size_t len, const char *path,
				const char *isa_name, int waves,
				struct fs_err *err)
{
	char isa[LM_NAME_MAX];
	struct ydoc d;
	yaml_node_t *top, *n;
	int64_t v;
	enum fs_rc rc = ydoc_load(&d, text, len, path, err);	/* JSON is YAML */

	if (rc)
		return rc;
	top = ydoc_root(&d);
	n = top && top->type == YAML_MAPPING_NODE ? ydoc_get(&d, top, "fragsim_probe") : NULL;
	if (!n)
		rc = fs_fail_at(err, FS_EINPUT, path, 0, 0,
				"not a probe plan manifest (no fragsim_probe key)");
	if (!rc)
		rc = ydoc_int(&d, n, "fragsim_probe", 1, 1, &v, err);
	if (!rc && !(n = ydoc_get(&d, top, "waves")))
		rc = fs_fail_at(err, FS_EINPUT, path, 0, 0, "waves: missing");
	if (!rc)
		rc = ydoc_int(&d, n, "waves", waves, waves, &v, err);
	if (!rc && !(n = ydoc_get(&d, top, "isa")))
		rc = fs_fail_at(err, FS_EINPUT, path, 0, 0, "isa: missing");
	if (!rc)
		rc = ydoc_str(&d, n, "isa", isa, sizeof(isa), err);
	if (!rc && strcmp(isa, isa_name))
		rc = ydoc_fail(err, &d, n, "isa", "'%s', but profile.yaml is '%s'",
			       isa, isa_name);
	ydoc_free(&d);
	return rc;
}

static enum fs_rc check_manifest(const char *dir, const struct plan *p,
				 struct fs_err *err)
{
	char path[OUTDIR_PATH_MAX];
	char *text;
	size_t len;
	enum fs_rc rc = join_path(path, sizeof(path), dir, "manifest.json", err);

	if (rc || (rc = readfile(path, MANIFEST_MAX_BYTES, &text, &len, err)))
		return rc;
	rc = probe_manifest_check(text, len, path, p->lm->name, p->waves, err);
	free(text);
	return rc;
}

/* An .npy in dir that must have exactly this dtype and shape. */
static enum fs_rc read_exact(const char *dir, const char *name, enum npy_dtype dt,
			     const size_t *shape, struct npy_array *arr,
			     struct fs_err *err)
{
	char path[OUTDIR_PATH_MAX];
	enum fs_rc rc = join_path(path, sizeof(path), dir, name, err);

	if (rc || (rc = npy_read(path, arr, err)))
		return rc;
	if (arr->dtype != dt || arr->ndim != 3 || arr->shape[0] != shape[0] ||
	    arr->shape[1] != shape[1] || arr->shape[2] != shape[2]) {
		char got[96] = "";
		size_t at = 0;

		for (int i = 0; i < arr->ndim && at < sizeof(got) - 24; i++)
			at += (size_t)snprintf(got + at, sizeof(got) - at, "%s%zu",
					       i ? ", " : "", arr->shape[i]);
		rc = fs_fail_at(err, FS_EINPUT, path, 0, 0,
				"expected %s [%zu, %zu, %zu], found %s [%s]",
				npy_dtype_name(dt), shape[0], shape[1], shape[2],
				npy_dtype_name(arr->dtype), got);
		npy_free(arr);
	}
	return rc;
}

static enum fs_rc plan_load(const char *dir, struct plan *p, struct fs_err *err)
{
	static const char *const names[2] = { "probe_a.npy", "probe_b.npy" };
	char path[OUTDIR_PATH_MAX];
	enum fs_rc rc = join_path(path, sizeof(path), dir, "profile.yaml", err);

	memset(p, 0, sizeof(*p));
	if (rc)
		return rc;
	p->lm = load_valid(path, err, &rc);
	if (!p->lm)
		return rc;
	p->waves = probe_waves(p->lm);
	rc = check_manifest(dir, p, err);
	if (rc)
		return rc;
	p->a = malloc((size_t)p->waves * (size_t)(p->lm->wave * p->lm->op[LM_A].elems));
	p->b = malloc((size_t)p->waves * (size_t)(p->lm->wave * p->lm->op[LM_B].elems));
	if (!p->a || !p->b)
		return fs_nomem(err, "the probe plan", 0);
	rc = probe_plan(p->lm, p->a, p->b, err);
	for (int op = 0; op < 2 && !rc; op++) {
		struct npy_array arr;
		size_t s[3];

		shape3(s, p->waves, p->lm, (enum lm_operand)op);
		rc = read_exact(dir, names[op], npy_of(p->lm->op[op].type), s, &arr, err);
		if (rc)
			break;
		if (memcmp(arr.data, op ? p->b : p->a, s[0] * s[1] * s[2]))
			rc = fs_fail(err, FS_EINPUT,
				     "%s/%s: not the plan profile.yaml makes (edited, or from "
				     "another plan?)", dir, names[op]);
		npy_free(&arr);
	}
	return rc;
}

/* ---- simulate ---- */

static int do_simulate(const char *plan_dir, const char *isa, const char *out)
{
	struct fs_err err = { 0 };
	struct plan p;
	struct lanemap *dev = NULL;
	int32_t *c = NULL;
	char path[OUTDIR_PATH_MAX];
	struct outdir d;
	size_t s[3];
	enum fs_rc rc = plan_load(plan_dir, &p, &err);

	if (!rc)
		dev = load_valid(isa, &err, &rc);
	if (!rc && probe_same_geometry(p.lm, dev, &err))
		rc = FS_EINPUT;
	if (!rc) {
		shape3(s, p.waves, p.lm, LM_C);
		c = malloc(s[0] * s[1] * s[2] * sizeof(*c));
		rc = c ? probe_device(dev, p.waves, p.a, p.b, c, &err)
		       : fs_nomem(&err, "the probe plan", 0);
	}
	if (!rc)
		rc = outdir_begin(&d, out, &err);
	if (!rc) {
		struct json j;

		rc = outdir_path(&d, "probe_c.npy", path, sizeof(path), &err);
		if (!rc)
			rc = npy_write(path, NPY_I32, 3, s, c, NULL, &err);
		if (!rc)
			rc = outdir_path(&d, "manifest.json", path, sizeof(path), &err);
		if (!rc) {
			json_init_mem(&j, 1);
			json_begin_object(&j);
			json_key_string(&j, OUTDIR_MARK_KEY, OUTDIR_MARK_VALUE);
			json_key_int(&j, "fragsim_probe_dump", 1);
			json_key_string(&j, "device", "fragsim probe simulate");
			json_key_string(&j, "profile", dev->name);
			json_key_string(&j, "plan", p.lm->name);
			json_end_object(&j);
			rc = json_save(&j, path, &err);
			json_free(&j);
		}
		rc = rc ? (outdir_abort(&d), rc) : outdir_commit(&d, &err);
	}
	if (!rc)
		printf("simulated %s answering a plan for %s: %d waves, probe_c.npy written to %s\n",
		       dev->name, p.lm->name, p.waves, out);
	free(c);
	lanemap_free(dev);
	plan_free(&p);
	return rc ? cli_error(&err, rc) : FS_OK;
}

/* ---- solve ---- */

/* "lanes 16-31" when whole lanes are unread, else the first few slots. */
static void print_unread(FILE *f, const struct lanemap *lm, enum lm_operand op,
			 const uint8_t *read)
{
	int el = lm->op[op].elems, whole = 1, shown = 0, n = 0;

	for (int l = 0; l < lm->wave; l++) {
		int r = 0;

		for (int e = 0; e < el; e++)
			r += read[l * el + e];
		whole &= r == 0 || r == el;
	}
	if (whole) {
		fprintf(f, "lanes");
		for (int l = 0; l < lm->wave; l++) {
			int end = l;

			if (read[l * el])
				continue;
			while (end + 1 < lm->wave && !read[(end + 1) * el])
				end++;
			fprintf(f, "%s %d", n++ ? "," : "", l);
			if (end > l)
				fprintf(f, "-%d", end);
			l = end;
		}
		return;
	}
	for (int s = 0; s < lm->wave * el; s++) {
		if (read[s])
			continue;
		if (shown++ == DIFF_SHOWN) {
			fprintf(f, " ...");
			break;
		}
		fprintf(f, "%slane %d e %d", shown > 1 ? ", " : "", s / el, s % el);
	}
}

static void print_found(FILE *f, const char *pre, const struct plan *p,
			const struct lanemap *anchor, const struct probe_result *r)
{
	const struct lanemap *lm = r->found;

	fprintf(f, "%sfound     %dx%dx%d (M x N x K): %d products; check waves %s, %s, %s hold\n",
		pre, lm->m, lm->n, lm->k, r->terms, probe_check_name(0),
		probe_check_name(1), probe_check_name(2));
	for (int op = 0; op < 2; op++) {
		fprintf(f, "%sread      %s: %d of %d slots", pre,
			lm_operand_name((enum lm_operand)op),
			r->slots[op] - r->unread[op], r->slots[op]);
		if (r->unread[op]) {
			fprintf(f, "; never read: ");
			print_unread(f, p->lm, (enum lm_operand)op, r->read[op]);
			fprintf(f, " (copies the device ignores: what they hold is not "
				   "observable, %s's entries are kept)", anchor->name);
		}
		fputc('\n', f);
	}
	fprintf(f, "%slabels    rows, columns and k named after %s (%d, %d, %d by vote); "
		   "renaming rows in A and C alike, columns in B and C, or k in A and B "
		   "changes no register, so no program can observe it\n",
		pre, anchor->name, r->labels_anchored[0], r->labels_anchored[1],
		r->labels_anchored[2]);
}

static void print_diff(const struct lanemap *anchor, const struct lanemap *found,
		       const struct lanediff *d)
{
	printf("compare   X = %s, Y = the device\n", anchor->name);
	for (int op = 0; op < LM_NOPERANDS; op++) {
		const struct lanemap_operand *x = &anchor->op[op], *y = &found->op[op];
		const char *name = lm_operand_name((enum lm_operand)op);
		int shown = 0;

		printf("%s: %d of %d entries differ: %s\n", name, d->op[op].differ,
		       d->op[op].entries, d->op[op].verdict);
		if (d->op[op].differ && d->op[op].kind != LD_INCOMPARABLE)
			printf("   bits: %s\n", d->op[op].bits);
		for (int s = 0; s < anchor->wave * x->elems; s++) {
			if (x->row[s] == y->row[s] && x->col[s] == y->col[s])
				continue;
			if (shown++ == DIFF_SHOWN) {
				printf("  ...\n");
				break;
			}
			printf("  %s lane %d e %d: device %s[%d][%d], %s %s[%d][%d]\n",
			       name, s / x->elems, s % x->elems, name, y->row[s], y->col[s],
			       anchor->name, name, x->row[s], x->col[s]);
		}
	}
	if (d->differ)
		printf("device differs from %s in %d entries\n", anchor->name, d->differ);
	else
		printf("device matches %s\n", anchor->name);
}

static int do_solve(const char *plan_dir, const char *dump_dir, const char *isa,
		    int yaml)
{
	struct fs_err err = { 0 };
	struct plan p;
	struct lanemap *anchor = NULL;
	struct npy_array c = { 0 };
	struct probe_result *res = calloc(1, sizeof(*res));
	struct lanediff d;
	size_t s[3];
	enum fs_rc rc = res ? plan_load(plan_dir, &p, &err)
			    : fs_nomem(&err, "the probe plan", 0);

	if (!rc && isa)
		anchor = load_valid(isa, &err, &rc);
	if (!rc && anchor && probe_same_geometry(p.lm, anchor, &err))
		rc = FS_EINPUT;
	if (!rc) {
		shape3(s, p.waves, p.lm, LM_C);
		rc = read_exact(dump_dir, "probe_c.npy", NPY_I32, s, &c, &err);
	}
	if (!rc) {
		rc = probe_solve(p.lm, anchor ? anchor : p.lm, p.a, p.b, c.data, res, &err);
		if (rc && err.file[0] == '\0')
			snprintf(err.file, sizeof(err.file), "%s/probe_c.npy", dump_dir);
	}
	if (!rc)
		rc = lanediff_compare(anchor ? anchor : p.lm, res->found, &d, &err);
	if (!rc) {
		const struct lanemap *an = anchor ? anchor : p.lm;

		if (yaml) {
			printf("# %s's lane map, as fragsim probe solve found it\n", p.lm->instr);
			print_found(stdout, "# ", &p, an, res);
			printf("# %s\n", d.differ ? "differs from the profile named above"
						  : "identical to the profile named above");
			profile_yaml(stdout, res->found);
		} else {
			printf("probe     plan for %s (%d waves), answers from %s, compared with %s\n",
			       p.lm->name, p.waves, dump_dir, an->name);
			print_found(stdout, "", &p, an, res);
			print_diff(an, res->found, &d);
		}
		rc = d.differ ? FS_MISMATCH : FS_OK;
	} else {
		cli_error(&err, rc);
	}
	if (res)
		lanemap_free(res->found);
	free(res);
	npy_free(&c);
	lanemap_free(anchor);
	plan_free(&p);
	return rc;
}

int cmd_probe(int argc, char **argv)
{
	struct probe_args a = { 0 };
	const struct opt_cmd *sub = NULL;
	int n, rc;

	for (int i = 0; argc > 1 && subs[i]; i++)
		if (!strcmp(argv[1], subs[i]->name))
			sub = subs[i];
	if (!sub) {
		if (argc > 1 && argv[1][0] != '-')
			return opt_error(&cmd_probe_spec, "probe: unknown subcommand '%s'", argv[1]);
		if (opt_parse(&cmd_probe_spec, NULL, argc, argv, &rc) < 0)
			return rc;	/* --help, or an option before the subcommand */
		return opt_error(&cmd_probe_spec, "probe: missing subcommand (plan, solve or simulate)");
	}
	if ((n = opt_parse(sub, &a, argc - 1, argv + 1, &rc)) < 0)
		return rc;
	if (n)
		return opt_error(sub, "unexpected argument '%s'", argv[1]);
	if (sub == &plan_cmd) {
		if (!a.isa || !a.out)
			return opt_error(sub, "plan takes --isa and --out");
		return do_plan(a.isa, a.out);
	}
	if (sub == &simulate_cmd) {
		if (!a.plan || !a.isa || !a.out)
			return opt_error(sub, "simulate takes --plan, --isa and --out");
		return do_simulate(a.plan, a.isa, a.out);
	}
	if (!a.plan || !a.dump)
		return opt_error(sub, "solve takes --plan and --dump, and may take --isa and --yaml");
	return do_solve(a.plan, a.dump, a.isa, a.yaml);
}
