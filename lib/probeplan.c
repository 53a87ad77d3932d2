/*
 * probeplan.c - a probe plan and its dump as files (see probeplan.h for
 * the directory layout and the manifest).
 *
 * Write: the waves come from sim/lanemap/probe.c; here they become probe_a.npy
 * and probe_b.npy (their sha256 go into the manifest), profile.yaml (the
 * plan's profile as a table, so that a plan made from a profile file
 * still solves when the file is gone) and manifest.json, all inside one
 * lib/outdir.h directory that appears whole.
 *
 * Load: profile.yaml, validated; manifest.json says the kind (no plan
 * key: exhaustive) and must agree on isa and waves; the plan is made
 * again from both and probe_a/b.npy must be those bytes; then every
 * other member of the manifest must say what that plan is (wave,
 * digit_base, probe_slots, ..., each file's sha256 that of its bytes),
 * and no member may be unknown. So the bytes solve reads the dump
 * against are always ones fragsim made, and an edited or mismatched
 * plan is refused with the file, or the member, that differs.
 */
#include "probeplan.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "outdir.h"
#include "profile.h"
#include "readfile.h"
#include "sha256.h"
#include "yamldoc.h"

#define MANIFEST_MAX_BYTES (1u << 20)

static const char *const npy_names[] = { "probe_a.npy", "probe_b.npy", "probe_c.npy" };

struct lanemap *probeplan_profile(const char *what, enum fs_rc *rc,
				  struct fs_err *err)
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
		*rc = fs_fail(err, FS_EINPUT,
			      "%s: profile is not valid ('fragsim lanemap check %s' says why)",
			      lm->name, what);
	else
		*rc = fs_nomem(err, "the profile's inverse tables", 0);
	lanemap_free(lm);
	return NULL;
}

enum npy_dtype probeplan_dtype(const struct lanemap *lm, enum lm_operand op)
{
	return lm->op[op].type == LM_U8 ? NPY_U8 : NPY_I8;
}

void probeplan_shape(const struct lanemap *lm, int waves, enum lm_operand op,
		     size_t shape[3])
{
	shape[0] = (size_t)waves;
	shape[1] = (size_t)lm->wave;
	shape[2] = (size_t)lm->op[op].elems;
}

/* ---- a profile as YAML the loader reads back ---- */

/* A growing string; `failed` once an allocation failed. */
struct text {
	char *buf;
	size_t len, cap;
	int failed;
};

static void text_add(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		t->failed = 1;
		return;
	}
	if (t->len + (size_t)n + 1 > t->cap) {
		size_t cap = (t->len + (size_t)n + 1) * 2;
		char *p = realloc(t->buf, cap);

		if (!p) {
			t->failed = 1;
			return;
		}
		t->buf = p;
		t->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

static void yaml_quoted(struct text *t, const char *key, const char *s)
{
	text_add(t, "%s: \"", key);
	for (; *s; s++)
		text_add(t, "%s%c", *s == '"' || *s == '\\' ? "\\" : "", *s);
	text_add(t, "\"\n");
}

static void profile_text(struct text *t, const struct lanemap *lm)
{
	static const char *const keys[] = { "a", "b", "c" };

	text_add(t, "fragsim_profile: 1\n");
	yaml_quoted(t, "name", lm->name);
	yaml_quoted(t, "instruction", lm->instr);
	yaml_quoted(t, "description", lm->desc);
	yaml_quoted(t, "source", lm->source);
	text_add(t, "wave: %d\nm: %d\nn: %d\nk: %d\n", lm->wave, lm->m, lm->n, lm->k);
	for (int op = 0; op < LM_NOPERANDS; op++) {
		const struct lanemap_operand *o = &lm->op[op];

		text_add(t, "%s:\n  type: %s\n  elements: %d\n", keys[op],
			 lm_dtype_name(o->type), o->elems);
		if (o->replicas > 1)
			text_add(t, "  replicas: %d\n", o->replicas);
		text_add(t, "  table: |\n    lane,e,row,col\n");
		for (int s = 0; s < lm->wave * o->elems; s++)
			text_add(t, "    %d,%d,%d,%d\n", s / o->elems, s % o->elems,
				 o->row[s], o->col[s]);
	}
}

char *probeplan_profile_yaml(const struct lanemap *lm)
{
	struct text t = { 0 };

	profile_text(&t, lm);
	if (t.failed || !t.buf) {
		free(t.buf);
		return NULL;
	}
	return t.buf;
}

/* ---- writing ---- */

static void json_shape(struct json *j, const size_t *s)
{
	json_key(j, "shape");
	json_begin_array_compact(j);
	for (int d = 0; d < 3; d++)
		json_uint(j, s[d]);
	json_end_array(j);
}

static enum fs_rc write_manifest(const char *path, const struct lanemap *lm,
				 const struct probe_layout *pl, char sha[2][65],
				 struct fs_err *err)
{
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
	json_key_int(&j, "waves", pl->waves);
	json_key_int(&j, "digit_base", PROBE_BASE);
	if (pl->kind == PROBE_SHORT) {
		/* what a person debugging a harness needs to read the waves */
		json_key_string(&j, "plan", probe_kind_name(pl->kind));
		json_key(&j, "pair_values");
		json_begin_array_compact(&j);
		json_int(&j, 1);
		json_int(&j, PROBE_HI);
		json_end_array(&j);
		json_key(&j, "probe_slots");
		json_begin_array_compact(&j);
		for (int i = 0; i < pl->probes; i++)
			json_int(&j, pl->slot[i]);
		json_end_array(&j);
	}
	json_key(&j, "check_waves");
	json_begin_array_compact(&j);
	for (int i = 0; i < pl->checks; i++)
		json_string(&j, probe_check_name(i));
	json_end_array(&j);
	json_key(&j, "files");
	json_begin_array(&j);
	for (int op = 0; op < LM_NOPERANDS; op++) {
		size_t s[3];

		probeplan_shape(lm, pl->waves, (enum lm_operand)op, s);
		json_begin_object(&j);
		json_key_string(&j, "name", npy_names[op]);
		json_key_string(&j, "dtype", op == LM_C ? "int32" :
				npy_dtype_name(probeplan_dtype(lm, (enum lm_operand)op)));
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
	struct text t = { 0 };
	struct outdir_file f;
	enum fs_rc rc;

	text_add(&t, "# The profile this probe plan was made from (fragsim probe plan).\n");
	profile_text(&t, lm);
	if (t.failed) {
		free(t.buf);
		return fs_nomem(err, "the plan's manifest", 0);
	}
	rc = outdir_file_open(&f, path, err);
	if (!rc)
		rc = outdir_file_write(&f, t.buf, t.len, err);
	if (!rc)
		rc = outdir_file_commit(&f, err);
	free(t.buf);
	return rc;
}

enum fs_rc probeplan_write(const char *dir, const struct lanemap *lm,
			   const struct probe_layout *pl, struct fs_err *err)
{
	char path[OUTDIR_PATH_MAX], sha[2][65];
	size_t sa[3], sb[3];
	uint8_t *a, *b;
	struct outdir d;
	enum fs_rc rc;

	probeplan_shape(lm, pl->waves, LM_A, sa);
	probeplan_shape(lm, pl->waves, LM_B, sb);
	a = malloc(sa[0] * sa[1] * sa[2]);
	b = malloc(sb[0] * sb[1] * sb[2]);
	rc = a && b ? probe_plan(lm, pl, a, b, err)
		    : fs_nomem(err, "the probe plan", 0);
	if (!rc)
		rc = outdir_begin(&d, dir, err);
	if (!rc) {
		rc = outdir_path(&d, npy_names[LM_A], path, sizeof(path), err);
		if (!rc)
			rc = npy_write(path, probeplan_dtype(lm, LM_A), 3, sa, a, sha[0], err);
		if (!rc)
			rc = outdir_path(&d, npy_names[LM_B], path, sizeof(path), err);
		if (!rc)
			rc = npy_write(path, probeplan_dtype(lm, LM_B), 3, sb, b, sha[1], err);
		if (!rc)
			rc = outdir_path(&d, "profile.yaml", path, sizeof(path), err);
		if (!rc)
			rc = write_profile(path, lm, err);
		if (!rc)
			rc = outdir_path(&d, "manifest.json", path, sizeof(path), err);
		if (!rc)
			rc = write_manifest(path, lm, pl, sha, err);
		rc = rc ? (outdir_abort(&d), rc) : outdir_commit(&d, err);
	}
	free(a);
	free(b);
	return rc;
}

enum fs_rc probeplan_write_dump(const char *dir, const struct probeplan *p,
				const char *device, const int32_t *c,
				struct fs_err *err)
{
	char path[OUTDIR_PATH_MAX];
	struct outdir d;
	struct json j;
	size_t s[3];
	enum fs_rc rc = outdir_begin(&d, dir, err);

	if (rc)
		return rc;
	probeplan_shape(p->lm, p->layout.waves, LM_C, s);
	rc = outdir_path(&d, npy_names[LM_C], path, sizeof(path), err);
	if (!rc)
		rc = npy_write(path, NPY_I32, 3, s, c, NULL, err);
	if (!rc)
		rc = outdir_path(&d, "manifest.json", path, sizeof(path), err);
	if (!rc) {
		json_init_mem(&j, 1);
		json_begin_object(&j);
		json_key_string(&j, OUTDIR_MARK_KEY, OUTDIR_MARK_VALUE);
		json_key_int(&j, "fragsim_probe_dump", 1);
		json_key_string(&j, "device", "fragsim probe simulate");
		json_key_string(&j, "profile", device);
		json_key_string(&j, "plan", p->lm->name);
		json_end_object(&j);
		rc = json_save(&j, path, err);
		json_free(&j);
	}
	return rc ? (outdir_abort(&d), rc) : outdir_commit(&d, err);
}

/* ---- reading ---- */

void probeplan_free(struct probeplan *p)
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

/* The plan key: absent for an exhaustive plan (written before it existed). */
static enum fs_rc manifest_kind(struct ydoc *d, yaml_node_t *top, const int waves[2],
				enum probe_kind *kind, struct fs_err *err)
{
	static const char *const kinds[] = { "exhaustive", "short", NULL };
	yaml_node_t *n = ydoc_get(d, top, "plan");
	int k = PROBE_EXHAUSTIVE;
	enum fs_rc rc;

	_Static_assert(PROBE_EXHAUSTIVE == 0 && PROBE_SHORT == 1, "kinds[] order");
	if (n && (rc = ydoc_enum(d, n, "plan", kinds, &k, err)))
		return rc;
	if (waves[k] < 0)
		return ydoc_fail(err, d, n, "plan",
				 "'short', but profile.yaml is not linear over GF(2)");
	*kind = (enum probe_kind)k;
	return FS_OK;
}

enum fs_rc probeplan_manifest_check(const char *text, size_t len, const char *path,
				    const char *isa_name, const int waves[2],
				    enum probe_kind *kind, struct fs_err *err)
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
	if (!rc)
		rc = manifest_kind(&d, top, waves, kind, err);
	if (!rc && !(n = ydoc_get(&d, top, "waves")))
		rc = fs_fail_at(err, FS_EINPUT, path, 0, 0, "waves: missing");
	if (!rc)
		rc = ydoc_int(&d, n, "waves", waves[*kind], waves[*kind], &v, err);
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

/* dir/manifest.json, read into *text (malloc'ed, the caller frees it,
 * also on failure) and checked for kind, isa and waves. */
static enum fs_rc check_manifest(const char *dir, const struct lanemap *lm,
				 enum probe_kind *kind, char **text, size_t *len,
				 struct fs_err *err)
{
	struct probe_layout pl;
	int waves[2];
	char path[OUTDIR_PATH_MAX];
	enum fs_rc rc = join_path(path, sizeof(path), dir, "manifest.json", err);

	*text = NULL;

	if (rc)
		return rc;
	rc = probe_layout(lm, PROBE_EXHAUSTIVE, &pl, err);
	if (rc)
		return rc;
	waves[PROBE_EXHAUSTIVE] = pl.waves;
	waves[PROBE_SHORT] = probe_layout(lm, PROBE_SHORT, &pl, NULL) ? -1 : pl.waves;
	if ((rc = readfile(path, MANIFEST_MAX_BYTES, text, len, err)))
		return rc;
	return probeplan_manifest_check(*text, *len, path, lm->name, waves, kind, err);
}

/* The sha256 of dir/name's bytes as they are. */
static enum fs_rc file_sha(const char *dir, const char *name, char sha[65],
			   struct fs_err *err)
{
	char path[OUTDIR_PATH_MAX];
	char *bytes;
	size_t len;
	enum fs_rc rc = join_path(path, sizeof(path), dir, name, err);

	if (rc || (rc = readfile(path, (size_t)1 << 30, &bytes, &len, err)))
		return rc;
	sha256_hex(bytes, len, sha);
	free(bytes);
	return FS_OK;
}

/*
 * An .npy in dir that must have exactly this dtype and shape. When the
 * shape is that but for alt_waves waves, the message ends with why
 * (the other kind of plan has that many).
 */
static enum fs_rc read_exact(const char *dir, const char *name, enum npy_dtype dt,
			     const size_t *shape, size_t alt_waves, const char *why,
			     struct npy_array *arr, struct fs_err *err)
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
		int other = why && arr->dtype == dt && arr->ndim == 3 &&
			    arr->shape[0] == alt_waves && arr->shape[1] == shape[1] &&
			    arr->shape[2] == shape[2];

		rc = fs_fail_at(err, FS_EINPUT, path, 0, 0,
				"expected %s [%zu, %zu, %zu], found %s [%s]%s%s",
				npy_dtype_name(dt), shape[0], shape[1], shape[2],
				npy_dtype_name(arr->dtype), got, other ? ": " : "",
				other ? why : "");
		npy_free(arr);
	}
	return rc;
}

/* ---- the manifest, field by field, against the plan made again ---- */

/* Top-level key's node, or FS_EINPUT "key: missing" at path. */
static enum fs_rc need(struct ydoc *d, yaml_node_t *top, const char *key,
		       const char *path, yaml_node_t **n, struct fs_err *err)
{
	*n = ydoc_get(d, top, key);
	return *n ? FS_OK : fs_fail_at(err, FS_EINPUT, path, 0, 0, "%s: missing", key);
}

/* n (at key) is the integer want. */
static enum fs_rc want_int(struct ydoc *d, yaml_node_t *n, const char *key,
			   int64_t want, struct fs_err *err)
{
	int64_t v;
	enum fs_rc rc = ydoc_int(d, n, key, INT64_MIN, INT64_MAX, &v, err);

	if (!rc && v != want)
		rc = ydoc_fail(err, d, n, key, "%lld, but the plan profile.yaml makes "
			       "has %lld", (long long)v, (long long)want);
	return rc;
}

/* n (at key) is the string want. */
static enum fs_rc want_str(struct ydoc *d, yaml_node_t *n, const char *key,
			   const char *want, struct fs_err *err)
{
	char v[256];
	enum fs_rc rc = ydoc_str(d, n, key, v, sizeof(v), err);

	if (!rc && strcmp(v, want))
		rc = ydoc_fail(err, d, n, key, "'%s', but the plan profile.yaml makes "
			       "has '%s'", v, want);
	return rc;
}

/* n (at key) is the sequence of the n_want integers want. */
static enum fs_rc want_ints(struct ydoc *d, yaml_node_t *n, const char *key,
			    const int *want, int n_want, struct fs_err *err)
{
	char at[64];
	enum fs_rc rc = FS_OK;

	if (n->type != YAML_SEQUENCE_NODE || ydoc_seq_len(n) != n_want)
		return ydoc_fail(err, d, n, key, "must be a list of %d integers, as in "
				 "the plan profile.yaml makes", n_want);
	for (int i = 0; i < n_want && !rc; i++) {
		ydoc_path_index(at, sizeof(at), key, i);
		rc = want_int(d, ydoc_seq_item(d, n, i), at, want[i], err);
	}
	return rc;
}

/* files[op]: name, dtype, shape, and sha256 (A, B: of the file as it
 * is) or written_by (C). */
static enum fs_rc want_file(struct ydoc *d, yaml_node_t *f, int op,
			    const struct probeplan *p, const char *sha,
			    struct fs_err *err)
{
	static const char *const keys_ab[] = { "name", "dtype", "shape", "sha256", NULL };
	static const char *const keys_c[] = { "name", "dtype", "shape", "written_by", NULL };
	char at[64], key[80], got[80];
	int shape[3];
	size_t s[3];
	yaml_node_t *n;
	enum fs_rc rc;

	ydoc_path_index(at, sizeof(at), "files", op);
	if (f->type != YAML_MAPPING_NODE)
		return ydoc_fail(err, d, f, at, "must be a mapping");
	rc = ydoc_check_map(d, f, at, op == LM_C ? keys_c : keys_ab, err);
	probeplan_shape(p->lm, p->layout.waves, (enum lm_operand)op, s);
	for (int i = 0; i < 3; i++)
		shape[i] = (int)s[i];
	for (int k = 0; k < 4 && !rc; k++) {
		const char *name = (op == LM_C ? keys_c : keys_ab)[k];

		ydoc_path(key, sizeof(key), at, name);
		if (!(n = ydoc_get(d, f, name)))
			return ydoc_fail(err, d, f, at, "%s: missing", name);
		if (k == 0)
			rc = want_str(d, n, key, npy_names[op], err);
		else if (k == 1)
			rc = want_str(d, n, key, op == LM_C ? "int32" :
				      npy_dtype_name(probeplan_dtype(p->lm, (enum lm_operand)op)),
				      err);
		else if (k == 2)
			rc = want_ints(d, n, key, shape, 3, err);
		else if (op == LM_C)
			rc = want_str(d, n, key, "the device", err);
		else if (!(rc = ydoc_str(d, n, key, got, sizeof(got), err)) && strcmp(got, sha))
			rc = ydoc_fail(err, d, n, key, "'%s', but %s's bytes hash to '%s'",
				       got, npy_names[op], sha);
	}
	return rc;
}

/*
 * Every member of the plan's manifest against the plan made again from
 * profile.yaml (kind, isa and waves were checked before) and sha[op],
 * the sha256 of probe_a.npy and probe_b.npy as they are: a tampered
 * field is refused with its name and place, none is taken unchecked.
 */
static enum fs_rc verify_manifest(const char *text, size_t len, const char *path,
				  const struct probeplan *p, char sha[2][65],
				  struct fs_err *err)
{
	static const char *const keys[] = {
		OUTDIR_MARK_KEY, "fragsim_probe", "fragsim_version", "isa", "instruction",
		"wave", "waves", "digit_base", "plan", "pair_values", "probe_slots",
		"check_waves", "files", NULL,
	};
	const struct probe_layout *pl = &p->layout;
	const int pairs[2] = { 1, PROBE_HI };
	struct ydoc d;
	yaml_node_t *top, *n;
	char ver[64];
	enum fs_rc rc = ydoc_load(&d, text, len, path, err);

	if (rc)
		return rc;
	top = ydoc_root(&d);
	rc = ydoc_check_map(&d, top, "", keys, err);
	if (!rc && !(rc = need(&d, top, OUTDIR_MARK_KEY, path, &n, err)))
		rc = want_str(&d, n, OUTDIR_MARK_KEY, OUTDIR_MARK_VALUE, err);
	if (!rc && !(rc = need(&d, top, "fragsim_version", path, &n, err)))
		rc = ydoc_str(&d, n, "fragsim_version", ver, sizeof(ver), err);
	if (!rc && !(rc = need(&d, top, "instruction", path, &n, err)))
		rc = want_str(&d, n, "instruction", p->lm->instr, err);
	if (!rc && !(rc = need(&d, top, "wave", path, &n, err)))
		rc = want_int(&d, n, "wave", p->lm->wave, err);
	if (!rc && !(rc = need(&d, top, "digit_base", path, &n, err)))
		rc = want_int(&d, n, "digit_base", PROBE_BASE, err);
	if (!rc && pl->kind == PROBE_SHORT) {
		if (!(rc = need(&d, top, "pair_values", path, &n, err)))
			rc = want_ints(&d, n, "pair_values", pairs, 2, err);
		if (!rc && !(rc = need(&d, top, "probe_slots", path, &n, err)))
			rc = want_ints(&d, n, "probe_slots", pl->slot, pl->probes, err);
	} else if (!rc) {
		const char *extra = ydoc_get(&d, top, "pair_values") ? "pair_values" :
				    ydoc_get(&d, top, "probe_slots") ? "probe_slots" : NULL;

		if (extra)
			rc = ydoc_fail(err, &d, ydoc_get(&d, top, extra), extra,
				       "an exhaustive plan has none");
	}
	if (!rc && !(rc = need(&d, top, "check_waves", path, &n, err))) {
		if (n->type != YAML_SEQUENCE_NODE || ydoc_seq_len(n) != pl->checks)
			rc = ydoc_fail(err, &d, n, "check_waves", "must list the %d check "
				       "waves of the plan profile.yaml makes", pl->checks);
		for (int i = 0; i < pl->checks && !rc; i++) {
			char at[32];

			ydoc_path_index(at, sizeof(at), "check_waves", i);
			rc = want_str(&d, ydoc_seq_item(&d, n, i), at, probe_check_name(i), err);
		}
	}
	if (!rc && !(rc = need(&d, top, "files", path, &n, err))) {
		if (n->type != YAML_SEQUENCE_NODE || ydoc_seq_len(n) != LM_NOPERANDS)
			rc = ydoc_fail(err, &d, n, "files", "must list probe_a.npy, "
				       "probe_b.npy and probe_c.npy");
		for (int op = 0; op < LM_NOPERANDS && !rc; op++)
			rc = want_file(&d, ydoc_seq_item(&d, n, op), op, p,
				       op < 2 ? sha[op] : NULL, err);
	}
	ydoc_free(&d);
	return rc;
}

enum fs_rc probeplan_load(const char *dir, struct probeplan *p, struct fs_err *err)
{
	char path[OUTDIR_PATH_MAX], sha[2][65];
	enum probe_kind kind = PROBE_EXHAUSTIVE;
	char *manifest = NULL;
	size_t mlen = 0;
	enum fs_rc rc = join_path(path, sizeof(path), dir, "profile.yaml", err);

	memset(p, 0, sizeof(*p));
	if (rc)
		return rc;
	p->lm = probeplan_profile(path, &rc, err);
	if (!p->lm)
		return rc;
	rc = check_manifest(dir, p->lm, &kind, &manifest, &mlen, err);
	if (!rc)
		rc = probe_layout(p->lm, kind, &p->layout, err);
	if (rc) {
		free(manifest);
		return rc;
	}
	p->a = malloc((size_t)p->layout.waves * (size_t)(p->lm->wave * p->lm->op[LM_A].elems));
	p->b = malloc((size_t)p->layout.waves * (size_t)(p->lm->wave * p->lm->op[LM_B].elems));
	if (!p->a || !p->b)
		return fs_nomem(err, "the probe plan", 0);
	rc = probe_plan(p->lm, &p->layout, p->a, p->b, err);
	for (int op = 0; op < 2 && !rc; op++) {
		struct npy_array arr;
		size_t s[3];

		probeplan_shape(p->lm, p->layout.waves, (enum lm_operand)op, s);
		rc = read_exact(dir, npy_names[op], probeplan_dtype(p->lm, (enum lm_operand)op),
				s, 0, NULL, &arr, err);
		if (rc)
			break;
		if (memcmp(arr.data, op ? p->b : p->a, s[0] * s[1] * s[2]))
			rc = fs_fail(err, FS_EINPUT,
				     "%s/%s: not the plan profile.yaml makes (edited, or from "
				     "another plan?)", dir, npy_names[op]);
		npy_free(&arr);
		if (!rc)
			rc = file_sha(dir, npy_names[op], sha[op], err);
	}
	if (!rc && !(rc = join_path(path, sizeof(path), dir, "manifest.json", err)))
		rc = verify_manifest(manifest, mlen, path, p, sha, err);
	free(manifest);
	return rc;
}

enum fs_rc probeplan_read_dump(const char *dir, const struct probeplan *p,
			       struct npy_array *c, struct fs_err *err)
{
	int is_short = p->layout.kind == PROBE_SHORT;
	struct probe_layout other;
	size_t s[3], alt = 0;

	/* the dump of the other kind of plan for this profile is a likely
	 * mix-up since plans became short by default: say so */
	if (!probe_layout(p->lm, is_short ? PROBE_EXHAUSTIVE : PROBE_SHORT, &other, NULL))
		alt = (size_t)other.waves;
	probeplan_shape(p->lm, p->layout.waves, LM_C, s);
	return read_exact(dir, npy_names[LM_C], NPY_I32, s, alt,
			  is_short ? "an exhaustive plan's wave count, and this plan is "
				     "short (make it with --exhaustive)"
				   : "a short plan's wave count, and this plan is "
				     "exhaustive (make it without --exhaustive)",
			  c, err);
}
