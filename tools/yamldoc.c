/*
 * yamldoc.c - libyaml documents with located, typed accessors (yamldoc.h).
 *
 * libyaml resolves no types: every scalar is text. The accessors here do
 * the resolution fragsim needs (integers, reals, booleans, enums) and
 * reject anything else at the scalar's own position, so a user always
 * sees which character of which file to fix.
 */
#include "yamldoc.h"

#include <errno.h>
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
		m = p->problem_mark;
		return fs_fail_at(err, FS_EINPUT, d->origin, (int)m.line + 1,
				  (int)m.column + 1, "invalid YAML: %s",
				  p->problem ? p->problem : "parse error");
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

enum fs_rc ydoc_load(struct ydoc *d, const char *text, size_t len,
		     const char *origin, struct fs_err *err)
{
	yaml_parser_t p;
	int ok;

	memset(d, 0, sizeof(*d));
	snprintf(d->origin, sizeof(d->origin), "%s", origin);
	if (!yaml_parser_initialize(&p))
		return fs_fail(err, FS_EINTERNAL, "yaml: out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	ok = yaml_parser_load(&p, &d->doc);
	if (!ok) {
		yaml_mark_t m = p.problem_mark;
		char ctx[160] = "";

		if (p.context)
			snprintf(ctx, sizeof(ctx), " %s", p.context);
		fs_fail_at(err, FS_EINPUT, d->origin, (int)m.line + 1,
			   (int)m.column + 1, "invalid YAML: %s%s",
			   p.problem ? p.problem : "parse error", ctx);
		yaml_parser_delete(&p);
		return FS_EINPUT;
	}
	d->loaded = 1;
	if (!yaml_document_get_root_node(&d->doc)) {
		yaml_parser_delete(&p);
		ydoc_free(d);
		return fs_fail_at(err, FS_EINPUT, origin, 1, 1, "empty document");
	}
	if (no_second_document(&p, d, err)) {
		yaml_parser_delete(&p);
		ydoc_free(d);
		return FS_EINPUT;
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
	char msg[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return FS_EINPUT;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (path && *path)
		return fs_fail_at(err, FS_EINPUT, d->origin, ydoc_line(n),
				  ydoc_col(n), "%s: %s", path, msg);
	return fs_fail_at(err, FS_EINPUT, d->origin, ydoc_line(n), ydoc_col(n),
			  "%s", msg);
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

enum fs_rc ydoc_int(const struct ydoc *d, yaml_node_t *n, const char *path,
		    int64_t min, int64_t max, int64_t *out, struct fs_err *err)
{
	const char *s = ydoc_scalar(d, n, path, err);
	char *end;
	long long v;

	if (!s)
		return FS_EINPUT;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (!*s || *end || errno == ERANGE || n->data.scalar.style !=
	    YAML_PLAIN_SCALAR_STYLE)
		return ydoc_fail(err, d, n, path, "expected an integer, found '%s'", s);
	if (v < min || v > max)
		return ydoc_fail(err, d, n, path, "must be between %lld and %lld, not %lld",
				 (long long)min, (long long)max, v);
	*out = v;
	return FS_OK;
}

enum fs_rc ydoc_double(const struct ydoc *d, yaml_node_t *n, const char *path,
		       double min, double max, double *out, struct fs_err *err)
{
	const char *s = ydoc_scalar(d, n, path, err);
	char *end;
	double v;

	if (!s)
		return FS_EINPUT;
	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno == ERANGE || !isfinite(v) ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return ydoc_fail(err, d, n, path, "expected a number, found '%s'", s);
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
