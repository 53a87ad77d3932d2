/*
 * caselist.c - case files under paths, sorted (caselist.h).
 */
#include "caselist.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static int is_yaml(const char *name)
{
	size_t n = strlen(name);

	return (n > 5 && !strcmp(name + n - 5, ".yaml")) ||
	       (n > 4 && !strcmp(name + n - 4, ".yml"));
}

static int walk(const char *path, struct caselist *ps, int depth)
{
	struct stat st;
	DIR *d;
	struct dirent *e;

	if (stat(path, &st) != 0)
		return -2;
	if (!S_ISDIR(st.st_mode))
		return push(ps, path);
	if (depth > 16 || !(d = opendir(path)))
		return -2;
	while ((e = readdir(d))) {
		char sub[4096];
		struct stat s2;

		if (e->d_name[0] == '.')
			continue;
		/* A cut path would name some other file, or none. */
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >=
		    sizeof(sub)) {
			closedir(d);
			return -2;
		}
		if (stat(sub, &s2) != 0)
			continue;
		if (S_ISDIR(s2.st_mode)) {
			if (walk(sub, ps, depth + 1) == -1) {
				closedir(d);
				return -1;
			}
		} else if (is_yaml(e->d_name) && push(ps, sub)) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

void caselist_free(struct caselist *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->p[i]);
	free(ps->p);
	memset(ps, 0, sizeof(*ps));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int caselist_add(struct caselist *l, const char *path)
{
	return walk(path, l, 0);
}

void caselist_sort(struct caselist *l)
{
	if (l->n)
		qsort(l->p, l->n, sizeof(*l->p), cmp_str);
}
