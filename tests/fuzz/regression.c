/*
 * regression.c - run a fuzz target's LLVMFuzzerTestOneInput on files,
 * without libFuzzer, so that every seed, every corpus input and every
 * crash once found is replayed by make test with the normal compiler
 * (and under make asan with the sanitizers). Built once per target as
 * regress_<target>, with the target's seeds compiled in:
 *
 *   FUZZ_NAME   the target: case, profile, npy, safetensors, dump, plan
 *   FUZZ_SEEDS  directories of the repository holding its seed files,
 *               space separated, e.g. "cases tests/data"
 *   FUZZ_EXT    the seed files' suffix, e.g. ".yaml"
 *   FUZZ_PACK   1: the seeds are directories, one input per directory
 *               holding FUZZ_EXT files, packed as fuzz.h's archive
 *
 * Usage:
 *   regress_<target>                  seeds, tests/fuzz/corpus/<target>/
 *                                     and tests/fuzz/crashes/<target>/
 *   regress_<target> PATH...          these files (directories: every
 *                                     file under them) instead
 *   regress_<target> --seeds OUTDIR   write the seed inputs to OUTDIR
 *                                     (make fuzz starts from them)
 * Exit status 0 when every input ran; a target that finds a broken
 * promise aborts, so the failing input is the last one named with -v.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#ifndef FRAGSIM_SRC
#define FRAGSIM_SRC "."
#endif

struct replay {
	const char *seeds_out;	/* --seeds: where to write, else NULL */
	int verbose;
	long n;			/* inputs run (or written) */
	int failed;		/* a file could not be read or written */
};

static void input(struct replay *rp, const uint8_t *buf, size_t len,
		  const char *label)
{
	if (rp->verbose)
		fprintf(stderr, "regress_%s: %s\n", FUZZ_NAME, label);
	if (rp->seeds_out) {
		char path[1024];
		FILE *f;

		snprintf(path, sizeof(path), "%s/seed-%04ld", rp->seeds_out, rp->n);
		f = fopen(path, "wb");
		if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
			fprintf(stderr, "regress_%s: %s: cannot write\n", FUZZ_NAME, path);
			rp->failed = 1;
			return;
		}
	} else {
		LLVMFuzzerTestOneInput(buf, len);
	}
	rp->n++;
}

/* A whole file into *buf (appended at *len, grown as needed); 0 or -1. */
static int slurp(const char *path, uint8_t **buf, size_t *len, size_t *cap)
{
	FILE *f = fopen(path, "rb");
	size_t got;

	if (!f)
		return -1;
	do {
		if (*cap - *len < 65536) {
			uint8_t *p = realloc(*buf, *cap * 2 + 65536);

			if (!p) {
				fclose(f);
				return -1;
			}
			*buf = p;
			*cap = *cap * 2 + 65536;
		}
		got = fread(*buf + *len, 1, *cap - *len, f);
		*len += got;
	} while (got > 0);
	got = (size_t)ferror(f);
	fclose(f);
	return got ? -1 : 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir, sorted (the same order on every machine). */
static char **list(const char *dir, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	int cap = 0;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (*n == cap) {
			char **p = realloc(v, sizeof(*v) * (size_t)(cap = cap * 2 + 16));

			if (!p)
				break;
			v = p;
		}
		if (!(v[*n] = strdup(e->d_name)))
			break;
		(*n)++;
	}
	closedir(d);
	qsort(v, (size_t)*n, sizeof(*v), by_name);
	return v;
}

static int has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

/*
 * Every file under path (ext: only names ending so), one input each; or
 * with pack, one archive input per directory holding such files.
 */
static void walk(struct replay *rp, const char *path, const char *ext, int pack)
{
	struct stat st;
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	char **names;
	int n, packed = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "regress_%s: %s: %s\n", FUZZ_NAME, path, strerror(errno));
		rp->failed = 1;
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (slurp(path, &buf, &len, &cap) != 0) {
			fprintf(stderr, "regress_%s: %s: cannot read\n", FUZZ_NAME, path);
			rp->failed = 1;
		} else {
			input(rp, buf, len, path);
		}
		free(buf);
		return;
	}
	names = list(path, &n);
	for (int i = 0; i < n; i++) {
		char sub[1024];

		snprintf(sub, sizeof(sub), "%s/%s", path, names[i]);
		if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
			walk(rp, sub, ext, pack);
		} else if (has_suffix(names[i], ext)) {
			if (!pack) {
				walk(rp, sub, ext, pack);
				continue;
			}
			/* fuzz.h's archive: name "\n" size "\n" bytes */
			if (cap - len < 64) {
				uint8_t *p = realloc(buf, cap = cap * 2 + 65536);

				if (!p)
					break;
				buf = p;
			}
			len += (size_t)snprintf((char *)buf + len, 64, "%.32s\n%lld\n",
						names[i], (long long)st.st_size);
			if (slurp(sub, &buf, &len, &cap) != 0) {
				fprintf(stderr, "regress_%s: %s: cannot read\n", FUZZ_NAME, sub);
				rp->failed = 1;
			}
			packed++;
		}
	}
	if (packed)
		input(rp, buf, len, path);
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(buf);
}

/* The compiled-in seed directories, relative to the source tree. */
static void seeds(struct replay *rp)
{
	char roots[] = FUZZ_SEEDS, path[1024];

	for (char *r = strtok(roots, " "); r; r = strtok(NULL, " ")) {
		snprintf(path, sizeof(path), "%s/%s", FRAGSIM_SRC, r);
		walk(rp, path, FUZZ_EXT, FUZZ_PACK);
	}
}

int main(int argc, char **argv)
{
	struct replay rp = { 0 };
	long from_seeds, from_corpus;
	int i = 1;

	if (i < argc && !strcmp(argv[i], "-v"))
		rp.verbose = 1, i++;
	if (i + 1 < argc && !strcmp(argv[i], "--seeds")) {
		rp.seeds_out = argv[i + 1];
		seeds(&rp);
		return rp.failed;
	}
	if (i < argc) {
		for (; i < argc; i++)
			walk(&rp, argv[i], "", 0);
		fprintf(stderr, "regress_%s: %ld input(s) replayed\n", FUZZ_NAME, rp.n);
		return rp.failed;
	}
	seeds(&rp);
	from_seeds = rp.n;
	for (int k = 0; k < 2; k++) {
		char path[1024];
		struct stat st;

		snprintf(path, sizeof(path), "%s/tests/fuzz/%s/%s", FRAGSIM_SRC,
			 k ? "crashes" : "corpus", FUZZ_NAME);
		if (stat(path, &st) == 0)	/* absent: none yet */
			walk(&rp, path, "", 0);
		if (!k)
			from_corpus = rp.n - from_seeds;
	}
	printf("fuzz regression %s: %ld input(s) replayed (%ld seeds, %ld corpus, %ld crashes)%s\n",
	       FUZZ_NAME, rp.n, from_seeds, from_corpus, rp.n - from_seeds - from_corpus,
	       rp.failed ? ", some could not be read" : "");
	return rp.failed;
}
