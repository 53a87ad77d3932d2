/*
 * readfile.c - whole-file reads with a size bound (see readfile.h).
 *
 * Input files (cases, profiles, tables) are small; the bound stops a
 * mistyped path to a multi-gigabyte file from exhausting memory.
 */
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum fs_rc readfile_open(const char *path, FILE **fp, size_t *size,
			 struct fs_err *err)
{
	struct stat st;
	int fd, fl;

	*fp = NULL;
	*size = 0;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return fs_fail_at(err, FS_EINPUT, path, 0, 0, "cannot open: %s",
				  strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		const char *what = S_ISDIR(st.st_mode) ? "a directory" :
				   S_ISFIFO(st.st_mode) ? "a FIFO" :
				   S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ?
				   "a device" : S_ISSOCK(st.st_mode) ? "a socket" :
				   "not a regular file";

		close(fd);
		return fs_fail_at(err, FS_EINPUT, path, 0, 0,
				  "not a regular file (%s)", what);
	}
	/* Regular files never block; clear the flag all the same. */
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	*fp = fdopen(fd, "rb");
	if (!*fp) {
		close(fd);
		return fs_fail_at(err, FS_EINTERNAL, path, 0, 0, "cannot open: %s",
				  strerror(errno));
	}
	*size = (size_t)st.st_size;
	return FS_OK;
}

enum fs_rc readfile(const char *path, size_t max, char **buf, size_t *len,
		    struct fs_err *err)
{
	FILE *f;
	char *b;
	size_t n, size;
	enum fs_rc rc;

	*buf = NULL;
	*len = 0;
	rc = readfile_open(path, &f, &size, err);
	if (rc)
		return rc;
	if (size > max) {
		fclose(f);
		return fs_budget(err, path, "the file", (double)size, (double)max,
				 "fragsim reads at most that much of this kind of file; make it smaller");
	}
	b = malloc(size + 1);
	if (!b) {
		fclose(f);
		return fs_fail_at(err, FS_ENOMEM, path, 0, 0,
				  "out of memory: the file's bytes, %zu bytes", size + 1);
	}
	n = fread(b, 1, size, f);
	if (ferror(f) || n != size) {
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
