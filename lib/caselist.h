/*
 * caselist.h - the case files under some paths: a file is taken as it
 * is, a directory is searched at any depth for *.yaml and *.yml, hidden
 * entries skipped. Each file and directory is visited once, by device
 * and inode, so a symlink to '.' or to an ancestor neither repeats
 * cases nor loops. The list is sorted, so every command that runs a
 * suite runs it in one order on every machine.
 */
#ifndef CASELIST_H
#define CASELIST_H

#include <stddef.h>
#include <sys/types.h>

struct caselist_id {
	dev_t dev;
	ino_t ino;
};

struct caselist {
	char **p;
	size_t n, cap;
	struct caselist_id *seen;	/* files and directories visited */
	size_t nseen, cap_seen;
	char why[1024];			/* after -2: "path: what failed" */
	/* Set by the caller before caselist_add (zero: every *.yaml found
	 * is a case, nothing excluded). classify: a *.yaml found under a
	 * directory that is not a case (a profile, a probe plan, a manifest,
	 * a YAML with no case key: caselist.c) goes to skipped as "path:
	 * what it is" instead. exclude: fnmatch(3) patterns, no flags (so
	 * '*' matches '/'), each tried on a found file's path relative to
	 * the directory given and on its base name; a match is not listed,
	 * only counted in nexcluded. A file given as a path is always
	 * listed. */
	int classify;
	const char *const *exclude;
	size_t nexclude;
	char **skipped;			/* "path: what it is", walk order */
	size_t nskipped, cap_skipped, nexcluded;
	size_t nrepeated;		/* files and directories met again (a
					 * second path, a path given twice) */
	size_t root_len;		/* the directory being walked, and '/' */
};

/*
 * Add path's cases to l. 0; -1 out of memory; -2 an error that would
 * otherwise drop cases silently, said in l->why: path not found, a
 * directory that cannot be read, a *.yaml entry that cannot be stat'ed
 * (a dangling link), a path too long for the system.
 */
int caselist_add(struct caselist *l, const char *path);
void caselist_sort(struct caselist *l);

/*
 * Sharding, so N CI machines split a suite deterministically: shard K of
 * N runs cases K, K+N, K+2N, ... (1-based) of the sorted list.
 * caselist_shard_parse reads "K/N", both plain decimal digits (no sign,
 * space or junk, nothing past INT_MAX) with 1 <= K <= N: 0, else -1 with
 * *k and *n unchanged. caselist_shard keeps shard k of n of l, in order.
 */
int caselist_shard_parse(const char *s, long *k, long *n);
void caselist_shard(struct caselist *l, long k, long n);
void caselist_free(struct caselist *l);

/*
 * Two cases of l with one top-level `name:` (CI would get two results
 * alike): 0 when every name is its own; -2 with l->why "b.yaml:3:7:
 * name: 'x' is also the name of a.yaml:2:7; ..." for the first pair in
 * name order; -1 out of memory. Files that do not parse are left to the
 * run, which reports them. Reads every file: call it on the whole suite,
 * before caselist_shard, so shards never share a name either.
 */
int caselist_unique_names(struct caselist *l);

#endif
