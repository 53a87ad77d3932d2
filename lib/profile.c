/*
 * profile.c - lane-map profiles from YAML into lanemap tables (profile.h).
 *
 * The only place that turns text into a lanemap. Each operand's row and
 * col are either expressions (sim/lanemap/expr) evaluated at every (lane, e), or
 * a CSV table. Errors point at the character to fix, e.g. for
 *
 *   c: {type: i32, elements: 4, row: "lane % 16", col: "lane / 16 + 4 * ee"}
 *
 * the message is "gfx.yaml:12:67: c.col: at column 18 of the expression:
 * unknown name 'ee' (names are lane and e)".
 */
#include "profile.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "readfile.h"
#include "yamldoc.h"

#define PROFILE_MAX_BYTES (4u << 20)

static const char *const top_keys[] = {
	"fragsim_profile", "name", "instruction", "description", "source",
	"wave", "m", "n", "k", "a", "b", "c", NULL,
};
static const char *const operand_keys[] = {
	"type", "elements", "replicas", "row", "col", "table", "table_file", NULL,
};

struct loader {
	struct ydoc *d;
	struct lanemap *lm;
	const char *dir;	/* resolves table_file; may be NULL */
	struct fs_err *err;
};

static yaml_node_t *need(struct loader *L, yaml_node_t *map, const char *path,
			 const char *key)
{
	yaml_node_t *v = ydoc_get(L->d, map, key);

	if (!v)
		ydoc_fail(L->err, L->d, map, path, "missing key '%s'", key);
	return v;
}

static enum fs_rc get_int(struct loader *L, yaml_node_t *map, const char *path,
			  const char *key, int min, int max, int dflt, int *out)
{
	yaml_node_t *v = ydoc_get(L->d, map, key);
	char p[YDOC_PATH_MAX];
	int64_t x;

	if (!v) {
		if (dflt < min)
			return ydoc_fail(L->err, L->d, map, path, "missing key '%s'", key);
		*out = dflt;
		return FS_OK;
	}
	ydoc_path(p, sizeof(p), path, key);
	if (ydoc_int(L->d, v, p, min, max, &x, L->err))
		return FS_EINPUT;
	*out = (int)x;
	return FS_OK;
}

static enum fs_rc get_str(struct loader *L, yaml_node_t *map, const char *key,
			  int required, char *out, size_t len)
{
	yaml_node_t *v = ydoc_get(L->d, map, key);

	if (!v) {
		if (required)
			return ydoc_fail(L->err, L->d, map, NULL, "missing key '%s'", key);
		out[0] = '\0';
		return FS_OK;
	}
	if (ydoc_str(L->d, v, key, out, len, L->err))
		return FS_EINPUT;
	/* printed as it is in lists, reports and every case's line: a tab,
	 * a newline or an escape there would break lines or the terminal */
	for (size_t i = 0; out[i]; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			return ydoc_fail(L->err, L->d, v, key,
					 "holds a control character (0x%02x at character %zu); "
					 "the text is printed as it is", (unsigned char)out[i], i + 1);
	return FS_OK;
}

/* File column of character `col` (1-based) of an expression scalar. */
static int expr_file_col(const yaml_node_t *n, int col)
{
	yaml_scalar_style_t st = n->data.scalar.style;
	int quote = st == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
		    st == YAML_DOUBLE_QUOTED_SCALAR_STYLE;

	return ydoc_col(n) + quote + col - 1;
}

static int block_scalar(const yaml_node_t *n)
{
	return n->data.scalar.style == YAML_LITERAL_SCALAR_STYLE ||
	       n->data.scalar.style == YAML_FOLDED_SCALAR_STYLE;
}

/* Compile and evaluate one expression into dst[lane*elems + e]
 * (sim/lanemap/lanemap.c's builder), the error located in the file. */
static enum fs_rc eval_expr(struct loader *L, yaml_node_t *n, const char *path,
			    int elems, int32_t *dst)
{
	const char *src = ydoc_scalar(L->d, n, path, L->err);
	struct fs_err e = { 0 };
	int col;

	if (!src)
		return FS_EINPUT;
	if (lanemap_eval_expr(L->lm, elems, src, dst, &e) == FS_OK)
		return FS_OK;
	col = block_scalar(n) ? ydoc_col(n) : expr_file_col(n, e.col);
	return fs_fail_at(L->err, FS_EINPUT, L->d->origin, ydoc_line(n), col,
			  "%s: at column %d of the expression: %s", path, e.col,
			  e.msg);
}

/*
 * "lane,e,row,col": four decimal integers, commas, spaces and tabs
 * around them, a '\r' at the end allowed. 0, -1 malformed, -2 a number
 * past long (sscanf's %ld would be undefined behaviour there).
 */
static int csv_ints(const char *s, long v[4])
{
	for (int i = 0; i < 4; i++) {
		char *end;

		s += strspn(s, " \t");
		if (!((*s >= '0' && *s <= '9') ||
		      ((*s == '-' || *s == '+') && s[1] >= '0' && s[1] <= '9')))
			return -1;
		errno = 0;
		v[i] = strtol(s, &end, 10);
		if (errno == ERANGE)
			return -2;
		s = end + strspn(end, " \t");
		if (i < 3 && *s++ != ',')
			return -1;
	}
	return s[strspn(s, " \t\r")] ? -1 : 0;
}

/*
 * Parse CSV "lane,e,row,col" lines. `where`, `line0` and `col0` locate
 * the text in errors. per_line: text line k is file line line0 + k (a
 * file of its own has line0 0; a literal block scalar '|' has line0 on
 * the '|'). Otherwise (a plain, quoted or folded scalar, whose lines
 * YAML folds) every error is at line0:col0, the scalar's first
 * character, and names the table line.
 */
static enum fs_rc parse_table(struct loader *L, const char *text,
			      const char *where, int line0, int col0,
			      int per_line, const char *tpath, int elems,
			      int32_t *row, int32_t *col)
{
	int slots = L->lm->wave * elems;
	char *seen = calloc((size_t)slots, 1);
	const char *p = text;
	int lineno = 0, header_ok = 1;

	if (!seen)
		return fs_nomem(L->err, "a lane table's slots", (size_t)slots);
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char buf[256];
		long v[4];
		int got, fline;
		char path[YDOC_PATH_MAX + 32];

		lineno++;
		fline = per_line ? line0 + lineno : line0;
		if (per_line)
			snprintf(path, sizeof(path), "%s", tpath);
		else
			snprintf(path, sizeof(path), "%s: line %d of the table",
				 tpath, lineno);
		if (n >= sizeof(buf)) {
			free(seen);
			return fs_fail_at(L->err, FS_EINPUT, where, fline, col0,
					  "%s: line too long", path);
		}
		memcpy(buf, p, n);
		buf[n] = '\0';
		p = eol ? eol + 1 : p + n;
		if (buf[strspn(buf, " \t\r")] == '\0' || buf[strspn(buf, " \t")] == '#')
			continue;
		got = csv_ints(buf, v);
		if (got == -2) {
			free(seen);
			return fs_fail_at(L->err, FS_EINPUT, where, fline, col0,
					  "%s: a number out of range in '%s'", path, buf);
		}
		if (got) {
			if (header_ok && strstr(buf, "lane")) {
				header_ok = 0;
				continue;
			}
			free(seen);
			return fs_fail_at(L->err, FS_EINPUT, where, fline, col0,
					  "%s: expected 'lane,e,row,col' with four integers, found '%s'",
					  path, buf);
		}
		header_ok = 0;
		if (v[0] < 0 || v[0] >= L->lm->wave || v[1] < 0 || v[1] >= elems) {
			free(seen);
			return fs_fail_at(L->err, FS_EINPUT, where, fline, col0,
					  "%s: lane %ld e %ld outside wave%d x %d elements",
					  path, v[0], v[1], L->lm->wave, elems);
		}
		if (v[2] < INT32_MIN || v[2] > INT32_MAX || v[3] < INT32_MIN ||
		    v[3] > INT32_MAX) {
			free(seen);
			return fs_fail_at(L->err, FS_EINPUT, where, fline, col0,
					  "%s: row or col out of range", path);
		}
		if (seen[v[0] * elems + v[1]]++) {
			free(seen);
			return fs_fail_at(L->err, FS_EINPUT, where, fline, col0,
					  "%s: lane %ld e %ld given twice", path,
					  v[0], v[1]);
		}
		row[v[0] * elems + v[1]] = (int32_t)v[2];
		col[v[0] * elems + v[1]] = (int32_t)v[3];
	}
	for (int s = 0; s < slots; s++) {
		if (!seen[s]) {
			free(seen);
			return fs_fail_at(L->err, FS_EINPUT, where, line0,
					  col0, "%s: no entry for lane %d e %d", tpath,
					  s / elems, s % elems);
		}
	}
	free(seen);
	return FS_OK;
}

static enum fs_rc load_table(struct loader *L, yaml_node_t *map,
			     const char *path, struct lanemap_operand *o)
{
	yaml_node_t *t = ydoc_get(L->d, map, "table");
	yaml_node_t *tf = ydoc_get(L->d, map, "table_file");
	char p[YDOC_PATH_MAX];

	if (t) {
		const char *text;
		int literal;

		ydoc_path(p, sizeof(p), path, "table");
		text = ydoc_scalar(L->d, t, p, L->err);
		if (!text)
			return FS_EINPUT;
		/* A literal's text starts on the line after '|', one text
		 * line per file line; other styles fold lines. */
		literal = t->data.scalar.style == YAML_LITERAL_SCALAR_STYLE;
		return parse_table(L, text, L->d->origin, ydoc_line(t),
				   ydoc_col(t), literal, p, o->elems, o->row,
				   o->col);
	} else {
		char file[1024], *buf;
		const char *name;
		size_t len;
		enum fs_rc rc;

		ydoc_path(p, sizeof(p), path, "table_file");
		name = ydoc_scalar(L->d, tf, p, L->err);
		if (!name)
			return FS_EINPUT;
		if (name[0] == '/' || !L->dir)
			snprintf(file, sizeof(file), "%s", name);
		else
			snprintf(file, sizeof(file), "%s/%s", L->dir, name);
		rc = readfile(file, PROFILE_MAX_BYTES, &buf, &len, L->err);
		if (rc == FS_EINPUT) {
			/* at the key that names the file, as the profile's other
			 * errors are (it named the table file alone) */
			char msg[sizeof(L->err->msg)];

			snprintf(msg, sizeof(msg), "%s", L->err->msg);
			return ydoc_fail(L->err, L->d, tf, p, "%s: %s", file, msg);
		}
		if (rc) {
			fs_err_prefix(L->err, p);
			return rc;
		}
		/* The parser stops at a NUL; the lines after it would be lost. */
		if (strlen(buf) != len) {
			rc = fs_fail_at(L->err, FS_EINPUT, file, 0, 0, "%s: a NUL "
					"byte at offset %zu", p, strlen(buf));
			free(buf);
			return rc;
		}
		rc = parse_table(L, buf, file, 0, 0, 1, p, o->elems, o->row,
				 o->col);
		free(buf);
		return rc;
	}
}

static enum fs_rc load_operand(struct loader *L, yaml_node_t *top,
			       enum lm_operand op)
{
	static const char *const keys[] = { "a", "b", "c" };
	static const char *const types[] = { "i8", "u8", "i32", "f16", "bf16",
					      "f32", NULL };
	const char *path = keys[op];
	yaml_node_t *map = need(L, top, "", path), *row, *col, *tn;
	char p[YDOC_PATH_MAX];
	int type, elems = 0, replicas = 0, tables;	/* -O3 cannot see get_int sets them */
	struct fs_err e;

	if (!map)
		return FS_EINPUT;
	if (ydoc_check_map(L->d, map, path, operand_keys, L->err))
		return FS_EINPUT;
	tn = need(L, map, path, "type");
	if (!tn)
		return FS_EINPUT;
	ydoc_path(p, sizeof(p), path, "type");
	if (ydoc_enum(L->d, tn, p, types, &type, L->err) ||
	    get_int(L, map, path, "elements", 1, LM_MAX_ELEMS, 0, &elems) ||
	    get_int(L, map, path, "replicas", 1, LM_MAX_REPLICAS, 1, &replicas))
		return FS_EINPUT;
	if (lanemap_set_operand(L->lm, op, (enum lm_dtype)type, elems, replicas,
				&e))
		return ydoc_fail(L->err, L->d, map, path, "%s", e.msg);

	row = ydoc_get(L->d, map, "row");
	col = ydoc_get(L->d, map, "col");
	tables = !!ydoc_get(L->d, map, "table") + !!ydoc_get(L->d, map, "table_file");
	if (tables > 1 || (tables && (row || col)))
		return ydoc_fail(L->err, L->d, map, path,
				 "give either row and col, or table, or table_file");
	if (tables)
		return load_table(L, map, path, &L->lm->op[op]);
	if (!row || !col)
		return ydoc_fail(L->err, L->d, map, path, "missing key '%s'",
				 row ? "col" : "row");
	ydoc_path(p, sizeof(p), path, "row");
	if (eval_expr(L, row, p, elems, L->lm->op[op].row))
		return FS_EINPUT;
	ydoc_path(p, sizeof(p), path, "col");
	return eval_expr(L, col, p, elems, L->lm->op[op].col);
}

static enum fs_rc load_doc(struct loader *L)
{
	yaml_node_t *top = ydoc_root(L->d), *ver;
	struct lanemap *lm = L->lm;
	int v;

	if (ydoc_check_map(L->d, top, "", top_keys, L->err))
		return FS_EINPUT;
	ver = need(L, top, "", "fragsim_profile");
	if (!ver || get_int(L, top, "", "fragsim_profile", 1, 1, 0, &v))
		return FS_EINPUT;
	if (get_str(L, top, "name", 1, lm->name, sizeof(lm->name)))
		return FS_EINPUT;
	/* The name labels lists, reports and goldens and makes --format c's
	 * identifiers: a blank one names nothing. */
	if (lm->name[strspn(lm->name, " \t")] == '\0')
		return ydoc_fail(L->err, L->d, ydoc_get(L->d, top, "name"), "name",
				 "must not be empty");
	if (get_str(L, top, "instruction", 1, lm->instr, sizeof(lm->instr)) ||
	    get_str(L, top, "description", 0, lm->desc, sizeof(lm->desc)) ||
	    get_str(L, top, "source", 0, lm->source, sizeof(lm->source)))
		return FS_EINPUT;
	if (get_int(L, top, "", "wave", 32, 64, 0, &lm->wave) ||
	    get_int(L, top, "", "m", 1, LM_MAX_DIM, 0, &lm->m) ||
	    get_int(L, top, "", "n", 1, LM_MAX_DIM, 0, &lm->n) ||
	    get_int(L, top, "", "k", 1, LM_MAX_DIM, 0, &lm->k))
		return FS_EINPUT;
	if (lm->wave != 32 && lm->wave != 64)
		return ydoc_fail(L->err, L->d, ydoc_get(L->d, top, "wave"), "wave",
				 "must be 32 or 64");
	for (int op = 0; op < LM_NOPERANDS; op++)
		if (load_operand(L, top, (enum lm_operand)op))
			return FS_EINPUT;
	return FS_OK;
}

struct lanemap *profile_load_text(const char *text, size_t len,
				  const char *origin, const char *dir,
				  struct fs_err *err)
{
	struct ydoc d;
	struct loader L = { &d, NULL, dir, err };

	if (ydoc_load(&d, text, len, origin, err))
		return NULL;
	L.lm = lanemap_new();
	if (!L.lm) {
		ydoc_free(&d);
		fs_nomem(err, "a lane map", sizeof(struct lanemap));
		return NULL;
	}
	if (load_doc(&L)) {
		lanemap_free(L.lm);
		L.lm = NULL;
	}
	ydoc_free(&d);
	return L.lm;
}

struct lanemap *profile_load_file(const char *path, struct fs_err *err)
{
	char *buf, dir[1024];
	const char *slash = strrchr(path, '/');
	struct lanemap *lm;
	size_t len;

	if (readfile(path, PROFILE_MAX_BYTES, &buf, &len, err))
		return NULL;
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		snprintf(dir, sizeof(dir), ".");
	lm = profile_load_text(buf, len, path, dir, err);
	free(buf);
	return lm;
}

int profile_builtin_count(void)
{
	return (int)builtin_profile_count;
}

const char *profile_builtin_name(int i)
{
	return builtin_profile_texts[i].name;
}

struct lanemap *profile_builtin(const char *name, struct fs_err *err)
{
	for (size_t i = 0; i < builtin_profile_count; i++) {
		const struct profile_text *t = &builtin_profile_texts[i];

		if (strcmp(t->name, name) == 0)
			return profile_load_text(t->text, strlen(t->text), t->file,
						 NULL, err);
	}
	fs_fail(err, FS_EINPUT, "unknown builtin profile '%s'", name);
	return NULL;
}

/*
 * Does a word of a profile's name: or description: line (tok, n bytes)
 * name the target x? The same word ("gfx942"), one of its family that
 * differs in the last character ("gfx942" for "gfx940": the MI300's
 * three are one ISA), or a family prefix ending in a digit ("gfx12" for
 * "gfx1201"). So `isa: gfx942` is pointed at the profiles that say they
 * are gfx942's, from the profiles' own text, not a table kept here.
 */
static int names_target(const char *tok, size_t n, const char *x)
{
	size_t xn = strlen(x);

	if (n < 4 || !isalpha((unsigned char)tok[0]) || !isdigit((unsigned char)tok[n - 1]))
		return 0;
	if (n == xn)
		return !strncasecmp(tok, x, n - 1) && isalnum((unsigned char)x[n - 1]);
	return n < xn && !strncasecmp(tok, x, n) && isdigit((unsigned char)x[n]);
}

/* The value of `key: ` on a line of its own in a profile text, to its
 * end of line; *n its length. NULL if none. */
static const char *text_line(const char *text, const char *key, size_t *n)
{
	size_t kn = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, kn) && p[kn] == ':') {
			*n = strcspn(p + kn + 1, "\n");
			return p + kn + 1;
		}
	return NULL;
}

/* Whether builtin profile t says (in its name or description) that it
 * is target x's. */
static int builtin_for(const struct profile_text *t, const char *x)
{
	static const char *const keys[] = { "name", "description" };

	for (int k = 0; k < 2; k++) {
		size_t len, i = 0;
		const char *v = text_line(t->text, keys[k], &len);

		while (v && i < len) {
			size_t n = 0;

			while (i + n < len && (isalnum((unsigned char)v[i + n]) || v[i + n] == '_'))
				n++;
			if (n && names_target(v + i, n, x))
				return 1;
			i += n ? n : 1;
		}
	}
	return 0;
}

/* The unknown-name error, with the builtins that name the target. */
static void unknown_profile(const char *name, struct fs_err *err)
{
	char list[512];
	size_t used = 0;
	int found = 0;

	list[0] = '\0';
	for (size_t i = 0; i < builtin_profile_count && used < sizeof(list); i++)
		if (builtin_for(&builtin_profile_texts[i], name))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
						 found++ ? ", " : "", builtin_profile_texts[i].name);
	if (found)
		fs_fail(err, FS_EINPUT,
			"unknown profile '%s': a profile names an instruction, not a target; "
			"the builtin profile%s for %s: %s ('fragsim lanemap list' describes them)",
			name, found > 1 ? "s" : "", name, list);
	else
		fs_fail(err, FS_EINPUT,
			"unknown profile '%s' (not a builtin name nor a .yaml file; "
			"'fragsim lanemap list' shows the builtins)", name);
}

struct lanemap *profile_resolve(const char *name_or_path, struct fs_err *err)
{
	for (size_t i = 0; i < builtin_profile_count; i++)
		if (strcmp(builtin_profile_texts[i].name, name_or_path) == 0)
			return profile_builtin(name_or_path, err);
	if (!strchr(name_or_path, '/') && !strstr(name_or_path, ".yaml") &&
	    !strstr(name_or_path, ".yml")) {
		unknown_profile(name_or_path, err);
		return NULL;
	}
	return profile_load_file(name_or_path, err);
}
