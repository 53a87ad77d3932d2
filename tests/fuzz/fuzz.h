/*
 * fuzz.h - what the fuzz targets (tests/fuzz/fuzz_<format>.c) share.
 *
 * Each target is one LLVMFuzzerTestOneInput: libFuzzer calls it under
 * make fuzz (clang, ASan + UBSan), and tests/fuzz/regression.c calls it
 * on every seed, corpus and crash file inside make test (any compiler).
 * A target returns 0 for any input; bad input must come back as an
 * error value. A broken promise (a crash, a leak, a round trip that
 * changes a byte) ends the process: FUZZ_ASSERT aborts, which libFuzzer
 * and the regression driver both report as a failure.
 *
 * Formats that are directories (a device dump) arrive as a small archive
 * of files, which fuzz_dir_unpack writes to a fresh directory under
 * $TMPDIR (or /tmp):
 *
 *   archive = { name "\n" size "\n" <size bytes> }*
 *
 * with name [a-z0-9_.]{1,32} not starting with '.', size decimal; e.g.
 * "acc.npy\n3\nabc" is one file acc.npy holding "abc". Anything else
 * (a bad name, a size past the end, a repeated name) is not an archive,
 * and the target skips the input.
 */
#ifndef FUZZ_H
#define FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond)                                                    \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: fuzz check failed: %s\n",    \
				__FILE__, __LINE__, #cond);                  \
			abort();                                             \
		}                                                            \
	} while (0)

#define FUZZ_MAX_FILES 16
#define FUZZ_NAME_MAX 32

struct fuzz_dir {
	char path[512];
	char names[FUZZ_MAX_FILES][FUZZ_NAME_MAX + 1];
	int n;
};

/* The files of the archive in a new directory d->path: 0, or -1 (not an
 * archive, or the directory could not be made; nothing is left behind). */
static inline int fuzz_dir_unpack(struct fuzz_dir *d, const uint8_t *data,
				  size_t size)
{
	const char *tmp = getenv("TMPDIR");
	size_t at = 0;

	memset(d, 0, sizeof(*d));
	snprintf(d->path, sizeof(d->path), "%s/fragsim-fuzz.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(d->path))
		return -1;
	while (at < size) {
		char *name = d->names[d->n], full[600];
		size_t len = 0, n = 0;
		FILE *f;
		int ok;

		if (d->n == FUZZ_MAX_FILES)
			goto bad;
		for (; at < size && data[at] != '\n'; at++, len++) {
			char c = (char)data[at];

			if (len == FUZZ_NAME_MAX ||
			    !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			      c == '_' || (c == '.' && len > 0)))
				goto bad;
			name[len] = c;
		}
		if (at == size || len == 0)
			goto bad;
		name[len] = '\0';
		for (int i = 0; i < d->n; i++)
			if (!strcmp(d->names[i], name))
				goto bad;
		for (at++, len = 0; at < size && data[at] != '\n'; at++, len++) {
			if (len == 9 || data[at] < '0' || data[at] > '9')
				goto bad;
			n = n * 10 + (size_t)(data[at] - '0');
		}
		if (at == size || len == 0 || n > size - at - 1)
			goto bad;
		at++;
		snprintf(full, sizeof(full), "%s/%s", d->path, name);
		f = fopen(full, "wb");
		if (!f)
			goto bad;
		d->n++;
		ok = fwrite(data + at, 1, n, f) == n;
		ok &= fclose(f) == 0;
		if (!ok)
			goto bad;
		at += n;
	}
	return 0;
bad:
	for (int i = 0; i < d->n; i++) {
		char full[600];

		snprintf(full, sizeof(full), "%s/%s", d->path, d->names[i]);
		unlink(full);
	}
	rmdir(d->path);
	return -1;
}

/* Remove what fuzz_dir_unpack made. */
static inline void fuzz_dir_remove(struct fuzz_dir *d)
{
	for (int i = 0; i < d->n; i++) {
		char full[600];

		snprintf(full, sizeof(full), "%s/%s", d->path, d->names[i]);
		unlink(full);
	}
	FUZZ_ASSERT(rmdir(d->path) == 0);
}

#endif
