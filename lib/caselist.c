/*
 * caselist.c - case files under paths, sorted (caselist.h).
 *
 * Why visit by inode: `check DIR` used to follow a symlink to '.' 17
 * times (a depth cap of 16 was the only stop), running one case 17
 * times, and two such links made 2^17 paths; past the cap a real case
 * was skipped without a word. Now a directory already visited (the same
 * st_dev and st_ino, reached by any path) is not entered again, a file
 * already listed is not listed again, and there is no depth cap: a walk
 * that never re-enters a directory ends, and a path the system cannot
 * name (ENAMETOOLONG) is an error that names it.
 *
 * Entries are visited in name order, so which of two paths to one file
 * is kept does not depend on readdir's order.
 *
 * What a *.yaml found in a directory is (l->classify; `check`): cases
 * sit beside fragsim's other YAML (the profile `probe solve --yaml`
 * writes, a probe plan) and other tools' (a CI workflow.yml). Read by
 * its top-level keys:
 *
 *   fragsim_profile:            a lane-map profile      skipped, noted
 *   fragsim_probe:              a probe plan            skipped, noted
 *   tool: fragsim               an output manifest      skipped, noted
 *   fragsim:, or any case key   a case (a bad one is still an error)
 *     but name: and description:
 *   none of these, or not a     not fragsim's           skipped, noted
 *     mapping
 *
 * A file that does not parse, or cannot be read, is kept as a case, so
 * its error is reported: a broken case is never skipped. A file named
 * on the command line is taken as a case whatever it holds.
 */
#include "caselist.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "casefile.h"
#include "caseschema.h"
#include "readfile.h"
#include "yamldoc.h"

static int push(struct caselist *ps, const char *s)
{
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 64;
		char **np = realloc(ps->p, cap * sizeof(*np));

		if (!np)
			return -1;
		ps->p = np;
		ps->cap = cap;
	}
	ps->p[ps->n] = strdup(s);
	return ps->p[ps->n++] ? 0 : -1;
}

/* 1 if st was seen before, else 0 and remembered; -1 out of memory.
 * A linear scan: suites hold thousands of files, not millions. */
static int seen(struct caselist *l, const struct stat *st)
{
	for (size_t i = 0; i < l->nseen; i++)
		if (l->seen[i].dev == st->st_dev && l->seen[i].ino == st->st_ino)
			return 1;
	if (l->nseen == l->cap_seen) {
		size_t cap = l->cap_seen ? 2 * l->cap_seen : 64;
		struct caselist_id *n = realloc(l->seen, cap * sizeof(*n));

		if (!n)
			return -1;
		l->seen = n;
		l->cap_seen = cap;
	}
	l->seen[l->nseen].dev = st->st_dev;
	l->seen[l->nseen].ino = st->st_ino;
	l->nseen++;
	return 0;
}

static int is_yaml(const char *name)
{
	size_t n = strlen(name);

	return (n > 5 && !strcmp(name + n - 5, ".yaml")) ||
	       (n > 4 && !strcmp(name + n - 4, ".yml"));
}

static int fail(struct caselist *l, const char *path, const char *what)
{
	snprintf(l->why, sizeof(l->why), "%s: %s", path, what);
	return -2;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The visible names in dir, sorted; *n of them. NULL and -1/-2 in *rc. */
static char **list_dir(struct caselist *l, const char *path, size_t *n, int *rc)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d) {
		*rc = fail(l, path, strerror(errno));
		return NULL;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (*n == cap) {
			char **nv = realloc(v, (cap = cap ? 2 * cap : 32) * sizeof(*v));

			if (!nv)
				goto oom;
			v = nv;
		}
		if (!(v[*n] = strdup(e->d_name)))
			goto oom;
		++*n;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	*rc = 0;
	return v ? v : calloc(1, sizeof(*v));
oom:
	closedir(d);
	while (*n)
		free(v[--*n]);
	free(v);
	*rc = -1;
	return NULL;
}

/* A top-level key of a case that other YAML uses as well. */
static int generic_key(const char *k)
{
	return !strcmp(k, "name") || !strcmp(k, "description");
}

/* NULL if the YAML at path is (or may be) a case; else what it is. */
static const char *not_a_case(const char *path)
{
	const char *keys[CASESCHEMA_MAX_CHILDREN + 1], *what = "not a fragsim file (no case key)";
	struct fs_err err = { 0 };
	struct ydoc d = { 0 };
	yaml_node_t *top, *tool;
	char *buf = NULL;
	size_t len;

	if (readfile(path, CASE_MAX_FILE_BYTES, &buf, &len, &err) ||
	    ydoc_load(&d, buf, len, path, &err)) {
		free(buf);
		return NULL;	/* its error is the case's to report */
	}
	free(buf);
	top = ydoc_root(&d);
	if (!top || top->type != YAML_MAPPING_NODE) {
		ydoc_free(&d);
		return "not a fragsim file (not a mapping)";
	}
	tool = ydoc_get(&d, top, "tool");
	if (ydoc_get(&d, top, "fragsim")) {
		what = NULL;
	} else if (ydoc_get(&d, top, "fragsim_profile")) {
		what = "a lane-map profile (fragsim_profile:), not a case";
	} else if (ydoc_get(&d, top, "fragsim_probe")) {
		what = "a probe plan (fragsim_probe:), not a case";
	} else if (tool && tool->type == YAML_SCALAR_NODE &&
		   !strcmp((const char *)tool->data.scalar.value, "fragsim")) {
		what = "a fragsim output manifest (tool: fragsim), not a case";
	} else {
		caseschema_names("", keys);
		for (int i = 0; keys[i] && what; i++)
			if (!generic_key(keys[i]) && ydoc_get(&d, top, keys[i]))
				what = NULL;
	}
	ydoc_free(&d);
	return what;
}

static int excluded(const struct caselist *l, const char *rel)
{
	const char *base = strrchr(rel, '/');

	base = base ? base + 1 : rel;
	for (size_t i = 0; i < l->nexclude; i++)
		if (!fnmatch(l->exclude[i], rel, 0) || !fnmatch(l->exclude[i], base, 0))
			return 1;
	return 0;
}

static int push_skipped(struct caselist *l, const char *path, const char *why)
{
	size_t len = strlen(path) + strlen(why) + 3;
	char *s;

	if (l->nskipped == l->cap_skipped) {
		size_t cap = l->cap_skipped ? 2 * l->cap_skipped : 16;
		char **np = realloc(l->skipped, cap * sizeof(*np));

		if (!np)
			return -1;
		l->skipped = np;
		l->cap_skipped = cap;
	}
	if (!(s = malloc(len)))
		return -1;
	snprintf(s, len, "%s: %s", path, why);
	l->skipped[l->nskipped++] = s;
	return 0;
}

/* A *.yaml file found under a directory: listed, excluded or skipped. */
static int found(struct caselist *l, const char *path)
{
	const char *why;

	if (excluded(l, path + l->root_len)) {
		l->nexcluded++;
		return 0;
	}
	if (l->classify && (why = not_a_case(path)))
		return push_skipped(l, path, why);
	return push(l, path);
}

static int walk(struct caselist *l, const char *path, const struct stat *st)
{
	char **names, *sub = NULL;
	size_t n, i;
	int rc;

	if ((rc = seen(l, st))) {
		l->nrepeated += rc > 0;
		return rc < 0 ? -1 : 0;	/* a loop, or a second path */
	}
	if (!S_ISDIR(st->st_mode))
		return push(l, path);
	names = list_dir(l, path, &n, &rc);
	if (!names)
		return rc;
	for (i = 0; i < n && !rc; i++) {
		struct stat s2;
		size_t len = strlen(path) + strlen(names[i]) + 2;

		free(sub);
		if (!(sub = malloc(len))) {
			rc = -1;
			break;
		}
		snprintf(sub, len, "%s/%s", path, names[i]);
		if (stat(sub, &s2) != 0) {
			/* Not there (a dangling link) or not reachable: an
			 * error if it could be a case, else nothing to run. */
			if (is_yaml(names[i]) || errno == ENAMETOOLONG ||
			    errno == EACCES)
				rc = fail(l, sub, strerror(errno));
			continue;
		}
		if (S_ISDIR(s2.st_mode))
			rc = walk(l, sub, &s2);
		else if (is_yaml(names[i]) && !(rc = seen(l, &s2)))
			rc = found(l, sub);
		else if (rc > 0) {
			l->nrepeated++;
			rc = 0;	/* a second path to a file listed */
		}
	}
	free(sub);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

void caselist_free(struct caselist *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->p[i]);
	free(ps->p);
	free(ps->seen);
	for (size_t i = 0; i < ps->nskipped; i++)
		free(ps->skipped[i]);
	free(ps->skipped);
	memset(ps, 0, sizeof(*ps));
}

int caselist_add(struct caselist *l, const char *path)
{
	struct stat st;

	l->why[0] = '\0';
	if (stat(path, &st) != 0)
		return fail(l, path, strerror(errno));
	/* --exclude matches paths relative to the directory given */
	l->root_len = strlen(path) + 1;
	return walk(l, path, &st);
}

void caselist_sort(struct caselist *l)
{
	if (l->n)
		qsort(l->p, l->n, sizeof(*l->p), cmp_str);
}

/* The digits s[0..len) as a number in [1, INT_MAX]; -1 if not. */
static long digits(const char *s, size_t len)
{
	long v = 0;

	if (!len)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = 10 * v + (s[i] - '0');
		if (v > INT_MAX)
			return -1;
	}
	return v ? v : -1;
}

int caselist_shard_parse(const char *s, long *k, long *n)
{
	const char *slash = strchr(s, '/');
	long kk, nn;

	if (!slash)
		return -1;
	kk = digits(s, (size_t)(slash - s));
	nn = digits(slash + 1, strlen(slash + 1));
	if (kk < 0 || nn < 0 || kk > nn)
		return -1;
	*k = kk;
	*n = nn;
	return 0;
}

void caselist_shard(struct caselist *l, long k, long n)
{
	size_t kept = 0;

	for (size_t i = 0; i < l->n; i++) {
		if (i % (size_t)n == (size_t)(k - 1))
			l->p[kept++] = l->p[i];
		else
			free(l->p[i]);
	}
	l->n = kept;
}

/*
 * Unique case names. A case's `name:` names its JUnit testcase and its
 * --json entry, so two alike would be two results CI cannot tell apart.
 * Each listed file's top-level name is read with its line (a file that
 * does not read or parse, or has no scalar name, takes no part: running
 * it reports why), then sorted by name, list order breaking ties.
 */
struct caselist_name {
	char *name;
	size_t i;	/* index in the list */
	int line, col;
};

static int cmp_name(const void *a, const void *b)
{
	const struct caselist_name *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* The name of case file path into *out (NULL: none); -1 out of memory. */
static int read_name(const char *path, struct caselist_name *out)
{
	struct fs_err err = { 0 };
	struct ydoc d;
	yaml_node_t *v;
	char *text;
	size_t len;
	int rc = 0;

	out->name = NULL;
	if (readfile(path, 1u << 20, &text, &len, &err))
		return err.rc == FS_ENOMEM ? -1 : 0;
	if (!ydoc_load(&d, text, len, path, &err)) {
		v = ydoc_get(&d, ydoc_root(&d), "name");
		if (v && v->type == YAML_SCALAR_NODE) {
			out->name = strdup((const char *)v->data.scalar.value);
			out->line = ydoc_line(v);
			out->col = ydoc_col(v);
			rc = out->name ? 0 : -1;
		}
		ydoc_free(&d);
	} else if (err.rc == FS_ENOMEM) {
		rc = -1;
	}
	free(text);
	return rc;
}

int caselist_unique_names(struct caselist *l)
{
	struct caselist_name *v = calloc(l->n + 1, sizeof(*v));
	size_t n = 0;
	int rc = 0;

	l->why[0] = '\0';
	if (!v)
		return -1;
	for (size_t i = 0; i < l->n && !rc; i++) {
		rc = read_name(l->p[i], &v[n]);
		v[n].i = i;
		n += v[n].name != NULL;
	}
	if (!rc && n > 1)
		qsort(v, n, sizeof(*v), cmp_name);
	for (size_t i = 1; i < n && !rc; i++) {
		const struct caselist_name *a = &v[i - 1], *b = &v[i];

		if (strcmp(a->name, b->name))
			continue;
		snprintf(l->why, sizeof(l->why),
			 "%s:%d:%d: name: '%s' is also the name of %s:%d:%d; the "
			 "cases of a suite need names of their own (JUnit and --json "
			 "tell cases apart by name)", l->p[b->i], b->line, b->col,
			 b->name, l->p[a->i], a->line, a->col);
		rc = -2;
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	return rc;
}
