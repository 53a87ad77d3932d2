/*
 * readfile.c - whole-file reads with a size bound (see readfile.h).
 *
 * Input files (cases, profiles, tables) are small; the bound stops a
 * mistyped path to a multi-gigabyte file from exhausting memory.
 */
#include "readfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum fs_rc readfile(const char *path, size_t max, char **buf, size_t *len,
		    struct fs_err *err)
{
	struct stat st;
	FILE *f;
	char *b;
	size_t n;

	*buf = NULL;
	*len = 0;
	f = fopen(path, "rb");
	if (!f)
		return fs_fail_at(err, FS_EINPUT, path, 0, 0, "cannot open: %s",
				  strerror(errno));
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		fclose(f);
		return fs_fail_at(err, FS_EINPUT, path, 0, 0, "not a regular file");
	}
	if ((unsigned long long)st.st_size > max) {
		fclose(f);
		return fs_fail_at(err, FS_EINPUT, path, 0, 0,
				  "file too large (%lld bytes, at most %zu)",
				  (long long)st.st_size, max);
	}
	b = malloc((size_t)st.st_size + 1);
	if (!b) {
		fclose(f);
		return fs_fail_at(err, FS_EINTERNAL, path, 0, 0, "out of memory");
	}
	n = fread(b, 1, (size_t)st.st_size, f);
	if (ferror(f) || n != (size_t)st.st_size) {
		fclose(f);
		free(b);
		return fs_fail_at(err, FS_EINPUT, path, 0, 0, "read failed");
	}
	fclose(f);
	b[n] = '\0';
	*buf = b;
	*len = n;
	return FS_OK;
}
