/*
 * caselist.h - the case files under some paths: a file is taken as it
 * is, a directory is searched (depth at most 16) for *.yaml and *.yml,
 * hidden entries skipped. The list is sorted, so every command that runs
 * a suite runs it in one order on every machine.
 */
#ifndef CASELIST_H
#define CASELIST_H

#include <stddef.h>

struct caselist {
	char **p;
	size_t n, cap;
};

/* Add path's cases to l. 0, -1 out of memory, -2 path not found. */
int caselist_add(struct caselist *l, const char *path);
void caselist_sort(struct caselist *l);
void caselist_free(struct caselist *l);

#endif
