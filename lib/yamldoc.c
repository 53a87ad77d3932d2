/*
 * yamldoc.c - libyaml documents with located, typed accessors (yamldoc.h).
 *
 * libyaml resolves no types: every scalar is text. The accessors here do
 * the resolution fragsim needs (integers, reals, booleans, enums) and
 * reject anything else at the scalar's own position, so a user always
 * sees which character of which file to fix.
 *
 * ydoc_load reads the text three times, each pass linear:
 *
 *   text --> bounds_check --> yaml_parser_load --> tree_check --> accessors
 *            events, counters  the node tree       every node once:
 *            depth <= 64,                          keys unique per mapping,
 *            anchors, aliases,                     no NUL in a scalar
 *            nodes with aliases expanded
 *
 * The first pass exists because libyaml's scanner costs O(depth) per
 * token (80000 nested '[' took 17 s to load), while its parser hands out
 * events as it goes, so counting levels on the events stops a deep file
 * at level 65 after a few hundred bytes. Example: "x: [[[[...]]]]" with
 * 500000 '[' is refused as "t.yaml:1:67: nested deeper than 64 levels".
 */
#include "yamldoc.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ydoc_line(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

int ydoc_col(const yaml_node_t *n)
{
	return (int)n->start_mark.column + 1;
}

/*
 * libyaml's syntax error at its problem mark. A tab where YAML wants
 * indentation gets libyaml's "found character that cannot start any
 * token", which does not say what is wrong with the file: when the
 * character at the mark is a tab, say that.
 */
static enum fs_rc syntax_error(yaml_parser_t *p, const char *origin, int context,
			       struct fs_err *err)
{
	yaml_mark_t m = p->problem_mark;
	const unsigned char *s = p->input.string.start;
	char ctx[160] = "";

	if (s && m.index < (size_t)(p->input.string.end - s) && s[m.index] == '\t')
		return fs_fail_at(err, FS_EINPUT, origin, (int)m.line + 1, (int)m.column + 1,
				  "invalid YAML: a tab in the indentation (YAML does not allow "
				  "tabs there; indent with spaces)");
	if (context && p->context)
		snprintf(ctx, sizeof(ctx), " %s", p->context);
	return fs_fail_at(err, FS_EINPUT, origin, (int)m.line + 1, (int)m.column + 1,
			  "invalid YAML: %s%s", p->problem ? p->problem : "parse error", ctx);
}

/*
 * A file holds one document: yaml_parser_load stops after the first, so
 * a second one (or a syntax error in it) would be silently ignored.
 */
static enum fs_rc no_second_document(yaml_parser_t *p, const struct ydoc *d,
				     struct fs_err *err)
{
	yaml_document_t extra;
	yaml_mark_t m;
	int more;

	if (!yaml_parser_load(p, &extra)) {
		if (p->error == YAML_MEMORY_ERROR)	/* libyaml's own allocation */
			return fs_nomem(err, "a YAML document", 0);
		return syntax_error(p, d->origin, 0, err);
	}
	more = yaml_document_get_root_node(&extra) != NULL;
	m = extra.start_mark;
	yaml_document_delete(&extra);
	if (more)
		return fs_fail_at(err, FS_EINPUT, d->origin, (int)m.line + 1,
				  (int)m.column + 1,
				  "more than one YAML document (one per file)");
	return FS_OK;
}

/* ---- the bounds pass --------------------------------------------------- */

/* An anchor and the nodes its subtree stands for, aliases expanded. */
struct anchor {
	char *name;
	uint64_t nodes;
	int done;		/* its node has ended: an alias may refer to it */
};

struct bounds {
	struct anchor a[YDOC_MAX_ANCHORS];
	int nanchors, naliases;
	uint64_t count[YDOC_MAX_DEPTH + 1];	/* nodes per open level */
	int anchor_of[YDOC_MAX_DEPTH + 1];	/* index in a, or -1 */
	int depth;
};

static enum fs_rc bounds_fail(struct fs_err *err, const char *origin,
			      yaml_mark_t m, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static enum fs_rc bounds_fail(struct fs_err *err, const char *origin,
			      yaml_mark_t m, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fs_fail_at(err, FS_EINPUT, origin, (int)m.line + 1,
			  (int)m.column + 1, "%s", msg);
}

/* Record a new anchor (NULL: none); *idx its slot or -1. */
static enum fs_rc bounds_anchor(struct bounds *b, const yaml_char_t *name,
				yaml_mark_t m, const char *origin, int *idx,
				struct fs_err *err)
{
	*idx = -1;
	if (!name)
		return FS_OK;
	if (b->nanchors == YDOC_MAX_ANCHORS)
		return bounds_fail(err, origin, m, "more than %d anchors "
				   "(fragsim's limit)", YDOC_MAX_ANCHORS);
	b->a[b->nanchors].name = strdup((const char *)name);
	if (!b->a[b->nanchors].name)
		return fs_fail(err, FS_ENOMEM, "out of memory: a YAML document");
	b->a[b->nanchors].nodes = 0;
	b->a[b->nanchors].done = 0;
	*idx = b->nanchors++;
	return FS_OK;
}

/* A finished node of n nodes (aliases expanded) at the current level. */
static enum fs_rc bounds_add(struct bounds *b, uint64_t n, yaml_mark_t m,
			     const char *origin, struct fs_err *err)
{
	uint64_t *c = &b->count[b->depth];

	*c = *c + n < *c ? UINT64_MAX : *c + n;
	if (*c > YDOC_MAX_NODES)
		return bounds_fail(err, origin, m, "more than %d nodes with "
				   "aliases expanded (fragsim's limit)",
				   YDOC_MAX_NODES);
	return FS_OK;
}

static enum fs_rc bounds_event(struct bounds *b, const yaml_event_t *e,
			       const char *origin, struct fs_err *err)
{
	const yaml_char_t *anchor = NULL;
	yaml_mark_t m = e->start_mark;
	enum fs_rc rc;
	int idx;

	switch (e->type) {
	case YAML_SCALAR_EVENT:
		rc = bounds_anchor(b, e->data.scalar.anchor, m, origin, &idx, err);
		if (rc)
			return rc;
		if (idx >= 0) {
			b->a[idx].nodes = 1;
			b->a[idx].done = 1;
		}
		return bounds_add(b, 1, m, origin, err);
	case YAML_ALIAS_EVENT:
		if (++b->naliases > YDOC_MAX_ALIASES)
			return bounds_fail(err, origin, m, "more than %d aliases "
					   "(fragsim's limit)", YDOC_MAX_ALIASES);
		for (idx = b->nanchors - 1; idx >= 0; idx--)
			if (!strcmp(b->a[idx].name,
				    (const char *)e->data.alias.anchor))
				break;
		if (idx < 0)
			return bounds_fail(err, origin, m, "alias '*%s' names no "
					   "anchor before it", e->data.alias.anchor);
		if (!b->a[idx].done)
			return bounds_fail(err, origin, m, "alias '*%s' is inside "
					   "the node it names", e->data.alias.anchor);
		return bounds_add(b, b->a[idx].nodes, m, origin, err);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		anchor = e->type == YAML_SEQUENCE_START_EVENT ?
			 e->data.sequence_start.anchor : e->data.mapping_start.anchor;
		if (b->depth == YDOC_MAX_DEPTH)
			return bounds_fail(err, origin, m, "nested deeper than %d "
					   "levels (fragsim's limit)",
					   YDOC_MAX_DEPTH);
		rc = bounds_anchor(b, anchor, m, origin, &idx, err);
		if (rc)
			return rc;
		b->depth++;
		b->count[b->depth] = 1;
		b->anchor_of[b->depth] = idx;
		return FS_OK;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT: {
		uint64_t n = b->count[b->depth];

		idx = b->anchor_of[b->depth];
		if (idx >= 0) {
			b->a[idx].nodes = n;
			b->a[idx].done = 1;
		}
		b->depth--;
		return bounds_add(b, n, m, origin, err);
	}
	default:
		return FS_OK;
	}
}

/*
 * Walk the event stream once with counters, before building any tree:
 * libyaml's scanner costs O(depth) per token, so 500000 nested '['
 * take minutes to load but are refused here at the 65th. Aliases are
 * counted as the nodes they stand for, so a "billion laughs" file is
 * refused before anything expands it.
 */
static enum fs_rc bounds_check(const char *text, size_t len,
			       const char *origin, struct fs_err *err)
{
	struct bounds *b = calloc(1, sizeof(*b));
	yaml_parser_t p;
	yaml_event_t e;
	enum fs_rc rc = FS_OK;
	int end = 0;

	if (!b || !yaml_parser_initialize(&p)) {
		free(b);
		return fs_fail(err, FS_ENOMEM, "out of memory: a YAML document");
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!rc && !end) {
		if (!yaml_parser_parse(&p, &e))
			break;	/* the loader reports syntax errors */
		end = e.type == YAML_STREAM_END_EVENT;
		rc = bounds_event(b, &e, origin, err);
		yaml_event_delete(&e);
	}
	for (int i = 0; i < b->nanchors; i++)
		free(b->a[i].name);
	free(b);
	yaml_parser_delete(&p);
	return rc;
}

/* ---- the tree checks ---------------------------------------------------- */

struct walk {
	const struct ydoc *d;
	unsigned char *seen;	/* per node id: visited already */
	struct fs_err *err;
};

static int cmp_key(const void *a, const void *b)
{
	const yaml_node_t *x = *(yaml_node_t *const *)a;
	const yaml_node_t *y = *(yaml_node_t *const *)b;
	int c = strcmp((const char *)x->data.scalar.value,
		       (const char *)y->data.scalar.value);

	if (c)
		return c;
	return x->start_mark.index < y->start_mark.index ? -1 :
	       x->start_mark.index > y->start_mark.index;
}

/*
 * No mapping repeats a key, anywhere: a reader that looks keys up takes
 * one of the two, and which one differs between readers (Python's json
 * keeps the last). Sorted, so a mapping of n keys costs n log n.
 */
static enum fs_rc unique_keys(struct walk *w, yaml_node_t *n, const char *path)
{
	yaml_document_t *doc = (yaml_document_t *)&w->d->doc;
	size_t k = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	yaml_node_t **keys;
	enum fs_rc rc = FS_OK;
	size_t m = 0;

	if (k < 2)
		return FS_OK;
	keys = malloc(k * sizeof(*keys));
	if (!keys)
		return fs_fail(w->err, FS_ENOMEM, "out of memory: a YAML document");
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	     p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *key = yaml_document_get_node(doc, p->key);

		if (key && key->type == YAML_SCALAR_NODE)
			keys[m++] = key;
	}
	qsort(keys, m, sizeof(*keys), cmp_key);
	for (size_t i = 1; i < m && !rc; i++)
		if (!strcmp((const char *)keys[i]->data.scalar.value,
			    (const char *)keys[i - 1]->data.scalar.value))
			rc = ydoc_fail(w->err, w->d, keys[i], path,
				       "key '%s' given twice (first at line %d)",
				       (const char *)keys[i]->data.scalar.value,
				       ydoc_line(keys[i - 1]));
	free(keys);
	return rc;
}

/* Depth is at most YDOC_MAX_DEPTH (bounds_check); each node once. */
static enum fs_rc walk_node(struct walk *w, int id, const char *path,
			    int is_key)
{
	yaml_document_t *doc = (yaml_document_t *)&w->d->doc;
	yaml_node_t *n = yaml_document_get_node(doc, id);
	char sub[YDOC_PATH_MAX];
	enum fs_rc rc;
	int i = 0;

	if (!n || w->seen[id - 1])
		return FS_OK;
	w->seen[id - 1] = 1;
	switch (n->type) {
	case YAML_SEQUENCE_NODE:
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++, i++) {
			ydoc_path_index(sub, sizeof(sub), path, i);
			if ((rc = walk_node(w, *it, sub, 0)))
				return rc;
		}
		return FS_OK;
	case YAML_MAPPING_NODE:
		if ((rc = unique_keys(w, n, path)))
			return rc;
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(doc, p->key);

			if (k && k->type == YAML_SCALAR_NODE)
				ydoc_path(sub, sizeof(sub), path,
					  (const char *)k->data.scalar.value);
			else
				ydoc_path(sub, sizeof(sub), path, "?");
			if ((rc = walk_node(w, p->key, path, 1)) ||
			    (rc = walk_node(w, p->value, sub, 0)))
				return rc;
		}
		return FS_OK;
	case YAML_SCALAR_NODE:
		/* C strings end at the NUL: "e\0 + 99" would read as "e". */
		if (strlen((const char *)n->data.scalar.value) !=
		    n->data.scalar.length)
			return ydoc_fail(w->err, w->d, n, path, "a NUL character "
					 "(\\0) inside a %s",
					 is_key ? "key" : "value");
		return FS_OK;
	default:
		return FS_OK;
	}
}

static enum fs_rc tree_check(const struct ydoc *d, struct fs_err *err)
{
	yaml_document_t *doc = (yaml_document_t *)&d->doc;
	size_t n = (size_t)(doc->nodes.top - doc->nodes.start);
	struct walk w = { d, calloc(n ? n : 1, 1), err };
	enum fs_rc rc;

	if (!w.seen)
		return fs_fail(err, FS_ENOMEM, "out of memory: a YAML document");
	rc = walk_node(&w, 1, "", 0);
	free(w.seen);
	return rc;
}

enum fs_rc ydoc_load(struct ydoc *d, const char *text, size_t len,
		     const char *origin, struct fs_err *err)
{
	yaml_parser_t p;
	enum fs_rc rc;
	int ok;

	memset(d, 0, sizeof(*d));
	snprintf(d->origin, sizeof(d->origin), "%s", origin);
	rc = bounds_check(text, len, d->origin, err);
	if (rc)
		return rc;
	if (!yaml_parser_initialize(&p))
		return fs_fail(err, FS_ENOMEM, "out of memory: a YAML document");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	ok = yaml_parser_load(&p, &d->doc);
	if (!ok && p.error == YAML_MEMORY_ERROR) {	/* libyaml's own allocation */
		yaml_parser_delete(&p);
		return fs_nomem(err, "a YAML document", 0);
	}
	if (!ok) {
		syntax_error(&p, d->origin, 1, err);
		yaml_parser_delete(&p);
		return FS_EINPUT;
	}
	d->loaded = 1;
	if (!yaml_document_get_root_node(&d->doc)) {
		yaml_parser_delete(&p);
		ydoc_free(d);
		return fs_fail_at(err, FS_EINPUT, origin, 1, 1, "empty document");
	}
	rc = no_second_document(&p, d, err);
	if (!rc)
		rc = tree_check(d, err);
	if (rc) {
		yaml_parser_delete(&p);
		ydoc_free(d);
		return rc;
	}
	yaml_parser_delete(&p);
	return FS_OK;
}

void ydoc_free(struct ydoc *d)
{
	if (d->loaded)
		yaml_document_delete(&d->doc);
	d->loaded = 0;
}

yaml_node_t *ydoc_root(struct ydoc *d)
{
	return yaml_document_get_root_node(&d->doc);
}

enum fs_rc ydoc_fail(struct fs_err *err, const struct ydoc *d,
		     const yaml_node_t *n, const char *path, const char *fmt, ...)
{
	enum fs_rc rc;
	va_list ap;

	va_start(ap, fmt);
	rc = fs_vfail_key(err, d->origin, ydoc_line(n), ydoc_col(n), path, fmt, ap);
	va_end(ap);
	return rc;
}

void ydoc_path(char *out, size_t len, const char *parent, const char *key)
{
	if (parent && *parent)
		snprintf(out, len, "%s.%s", parent, key);
	else
		snprintf(out, len, "%s", key);
}

void ydoc_path_index(char *out, size_t len, const char *parent, int i)
{
	snprintf(out, len, "%s[%d]", parent ? parent : "", i);
}

static const char *node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return "a scalar";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

enum fs_rc ydoc_check_map(const struct ydoc *d, yaml_node_t *n,
			  const char *path, const char *const *allowed,
			  struct fs_err *err)
{
	yaml_document_t *doc = (yaml_document_t *)&d->doc;

	if (n->type != YAML_MAPPING_NODE)
		return ydoc_fail(err, d, n, path, "expected a mapping, found %s",
				 node_kind(n));
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	     p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		const char *key;
		int known = 0;

		if (k->type != YAML_SCALAR_NODE)
			return ydoc_fail(err, d, k, path, "keys must be plain names");
		key = (const char *)k->data.scalar.value;
		for (const char *const *a = allowed; *a && !known; a++)
			known = strcmp(*a, key) == 0;
		if (!known) {
			char list[400] = "";
			size_t at = 0;

			for (const char *const *a = allowed; *a && at < sizeof(list); a++)
				at += (size_t)snprintf(list + at, sizeof(list) - at,
						       "%s%s", a == allowed ? "" : ", ", *a);
			return ydoc_fail(err, d, k, path,
					 "unknown key '%s' (expected one of: %s)",
					 key, list);
		}
		for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++) {
			yaml_node_t *k2 = yaml_document_get_node(doc, q->key);

			if (k2->type == YAML_SCALAR_NODE &&
			    strcmp((const char *)k2->data.scalar.value, key) == 0)
				return ydoc_fail(err, d, k, path,
						 "key '%s' given twice (first at line %d)",
						 key, ydoc_line(k2));
		}
	}
	return FS_OK;
}

yaml_node_t *ydoc_get(struct ydoc *d, yaml_node_t *n, const char *key)
{
	if (!n || n->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	     p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&d->doc, p->key);

		if (k->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)k->data.scalar.value, key) == 0)
			return yaml_document_get_node(&d->doc, p->value);
	}
	return NULL;
}

const char *ydoc_scalar(const struct ydoc *d, yaml_node_t *n, const char *path,
			struct fs_err *err)
{
	if (n->type != YAML_SCALAR_NODE) {
		ydoc_fail(err, d, n, path, "expected a value, found %s",
			  node_kind(n));
		return NULL;
	}
	return (const char *)n->data.scalar.value;
}

enum fs_rc ydoc_str(const struct ydoc *d, yaml_node_t *n, const char *path,
		    char *out, size_t len, struct fs_err *err)
{
	const char *s = ydoc_scalar(d, n, path, err);

	if (!s)
		return FS_EINPUT;
	if (strlen(s) >= len)
		return ydoc_fail(err, d, n, path, "too long (at most %zu characters)",
				 len - 1);
	memcpy(out, s, strlen(s) + 1);
	return FS_OK;
}

/*
 * Integers are decimal: [-+]?(0|[1-9][0-9]*). YAML 1.1 reads 010 as
 * octal 8 and YAML 1.2 as decimal 10, so a leading zero is refused
 * rather than read either way; 0x10 and 0o10 are refused with it.
 */
enum fs_rc ydoc_int(const struct ydoc *d, yaml_node_t *n, const char *path,
		    int64_t min, int64_t max, int64_t *out, struct fs_err *err)
{
	const char *s = ydoc_scalar(d, n, path, err), *p;
	char *end;
	long long v;

	if (!s)
		return FS_EINPUT;
	p = s + (*s == '-' || *s == '+');
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || *p < '0' ||
	    *p > '9' || p[strspn(p, "0123456789")] != '\0') {
		if (p[0] == '0' && p[1] && strchr("xXoObB", p[1]))
			return ydoc_fail(err, d, n, path, "'%s': integers are "
					 "decimal (hex, octal and binary are not "
					 "read)", s);
		return ydoc_fail(err, d, n, path, "expected an integer, found '%s'",
				 s);
	}
	if (p[0] == '0' && p[1])
		return ydoc_fail(err, d, n, path, "'%s': leading zeros are not "
				 "allowed (integers are decimal; YAML 1.1 would "
				 "read this as octal)", s);
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno == ERANGE || v < min || v > max)
		return ydoc_fail(err, d, n, path, "must be between %lld and "
				 "%lld, not %s", (long long)min, (long long)max,
				 s);
	*out = v;
	return FS_OK;
}

/* YAML 1.2 core schema's decimal float, without .inf and .nan:
 * [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static int decimal_number(const char *s)
{
	size_t digits;

	s += *s == '-' || *s == '+';
	digits = strspn(s, "0123456789");
	s += digits;
	if (*s == '.') {
		size_t frac = strspn(s + 1, "0123456789");

		s += 1 + frac;
		digits += frac;
	}
	if (!digits)
		return 0;
	if (*s == 'e' || *s == 'E') {
		s++;
		s += *s == '-' || *s == '+';
		if (!strspn(s, "0123456789"))
			return 0;
		s += strspn(s, "0123456789");
	}
	return *s == '\0';
}

/*
 * A finite decimal number. A subnormal (1e-310) is a number like any
 * other and is read as the nearest double; one too small for any double
 * (1e-400) or too large (1e400) is refused by name, not as "not a number".
 */
enum fs_rc ydoc_double(const struct ydoc *d, yaml_node_t *n, const char *path,
		       double min, double max, double *out, struct fs_err *err)
{
	const char *s = ydoc_scalar(d, n, path, err);
	char *end;
	double v;

	if (!s)
		return FS_EINPUT;
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || !decimal_number(s))
		return ydoc_fail(err, d, n, path, "expected a number, found '%s'", s);
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE && isinf(v))
		return ydoc_fail(err, d, n, path, "%s out of range (larger than "
				 "the largest double, %g)", s, DBL_MAX);
	if (errno == ERANGE && v == 0) {
		/* strtod says ERANGE for every underflow; only a total one is
		 * an error ("0.0" itself never gets here). */
		for (const char *c = s; *c && *c != 'e' && *c != 'E'; c++)
			if (*c >= '1' && *c <= '9')
				return ydoc_fail(err, d, n, path, "%s is too "
						 "small for a double (nonzero "
						 "values start at %g)", s,
						 4.9406564584124654e-324);
	}
	if (v < min || v > max)
		return ydoc_fail(err, d, n, path, "must be between %g and %g, not %s",
				 min, max, s);
	*out = v;
	return FS_OK;
}

enum fs_rc ydoc_bool(const struct ydoc *d, yaml_node_t *n, const char *path,
		     int *out, struct fs_err *err)
{
	static const char *const names[] = { "false", "true", NULL };

	return ydoc_enum(d, n, path, names, out, err);
}

enum fs_rc ydoc_enum(const struct ydoc *d, yaml_node_t *n, const char *path,
		     const char *const *names, int *out, struct fs_err *err)
{
	const char *s = ydoc_scalar(d, n, path, err);
	char list[400] = "";
	size_t at = 0;

	if (!s)
		return FS_EINPUT;
	for (int i = 0; names[i]; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return FS_OK;
		}
		if (at < sizeof(list))
			at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s",
					       i ? ", " : "", names[i]);
	}
	return ydoc_fail(err, d, n, path, "must be one of %s, not '%s'", list, s);
}

int ydoc_seq_len(yaml_node_t *n)
{
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return -1;
	return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
}

yaml_node_t *ydoc_seq_item(struct ydoc *d, yaml_node_t *n, int i)
{
	if (i < 0 || i >= ydoc_seq_len(n))
		return NULL;
	return yaml_document_get_node(&d->doc, n->data.sequence.items.start[i]);
}
