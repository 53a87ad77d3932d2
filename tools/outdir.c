/*
 * outdir.c - output directories and files that appear whole or not at all.
 *
 * Why: DESIGN.md 3 says a failed run leaves no half-written golden behind.
 * A device test that finds manifest.json must be able to trust every file
 * it lists, so files are written under a temporary name and a directory
 * is built beside its final name, then renamed in one step.
 *
 *   outdir_begin("out/g")     files written          outdir_commit()
 *
 *   out/g.tmp.4242/           out/g.tmp.4242/         out/g/
 *                             |- q.npy                |- q.npy
 *                             |- k.npy.tmp.4242       |- k.npy
 *                             '- manifest.json        '- manifest.json
 *
 *   replacing a previous output (it holds manifest.json):
 *     rename out/g -> out/g.old.4242, rename out/g.tmp.4242 -> out/g,
 *     remove out/g.old.4242
 *
 * Worked example: "out/g/" with out/g holding only notes.txt is refused
 * at begin with FS_EINPUT "exists, is not empty and holds no
 * manifest.json; refusing to replace it" and nothing is created.
 *
 * Invariants: tmp names carry our pid, so two runs never share one; the
 * temp directory is a sibling of the final one (same file system, so
 * rename(2) is atomic); we only ever delete trees we created or trees
 * that hold manifest.json.
 */
#include "outdir.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* snprintf into buf, 0 if it fit, -1 if it was truncated. */
static int path_fmt(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int path_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* rm -r without following symlinks; depth bounds the recursion. */
static int remove_tree(const char *path, int depth)
{
	char child[OUTDIR_PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *dir;
	int rc = 0;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	if (depth > 32) {
		errno = ELOOP;
		return -1;
	}
	dir = opendir(path);
	if (!dir)
		return -1;
	while (rc == 0 && (de = readdir(dir)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (path_fmt(child, sizeof(child), "%s/%s", path, de->d_name)) {
			errno = ENAMETOOLONG;
			rc = -1;
		} else {
			rc = remove_tree(child, depth + 1);
		}
	}
	closedir(dir);
	return rc ? rc : rmdir(path);
}

enum existing { EX_ABSENT, EX_EMPTY, EX_FRAGSIM };

/* What is at final now; anything we must not replace is an FS_EINPUT. */
static enum fs_rc inspect(const char *final, enum existing *ex,
			  struct fs_err *err)
{
	char manifest[OUTDIR_PATH_MAX];
	struct stat st;
	struct dirent *de;
	DIR *dir;
	int empty = 1;

	if (lstat(final, &st) != 0) {
		if (errno == ENOENT) {
			*ex = EX_ABSENT;
			return FS_OK;
		}
		return fs_fail_at(err, FS_EINPUT, final, 0, 0,
				  "cannot inspect: %s", strerror(errno));
	}
	if (S_ISLNK(st.st_mode))
		return fs_fail_at(err, FS_EINPUT, final, 0, 0,
				  "is a symbolic link; name the directory itself");
	if (!S_ISDIR(st.st_mode))
		return fs_fail_at(err, FS_EINPUT, final, 0, 0,
				  "exists and is not a directory");
	if (path_fmt(manifest, sizeof(manifest), "%s/manifest.json", final))
		return fs_fail_at(err, FS_EINPUT, final, 0, 0, "path too long");
	if (lstat(manifest, &st) == 0 && S_ISREG(st.st_mode)) {
		*ex = EX_FRAGSIM;
		return FS_OK;
	}
	dir = opendir(final);
	if (!dir)
		return fs_fail_at(err, FS_EINPUT, final, 0, 0,
				  "cannot list: %s", strerror(errno));
	while (empty && (de = readdir(dir)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = 0;
	closedir(dir);
	if (!empty)
		return fs_fail_at(err, FS_EINPUT, final, 0, 0,
				  "exists, is not empty and holds no manifest.json; "
				  "refusing to replace it");
	*ex = EX_EMPTY;
	return FS_OK;
}

enum fs_rc outdir_begin(struct outdir *d, const char *final_dir,
			struct fs_err *err)
{
	size_t n = strlen(final_dir);
	const char *base;
	enum existing ex;
	enum fs_rc rc;

	d->open = 0;
	d->final[0] = d->tmp[0] = '\0';
	/* "out/" and "out" are the same directory; "out/.tmp.1" is not
	 * a sibling of it, so strip the slashes (but keep "/" itself). */
	while (n > 1 && final_dir[n - 1] == '/')
		n--;
	if (n == 0)
		return fs_fail(err, FS_EINPUT, "empty output directory name");
	if (n >= sizeof(d->final))
		return fs_fail_at(err, FS_EINPUT, final_dir, 0, 0, "path too long");
	memcpy(d->final, final_dir, n);
	d->final[n] = '\0';
	base = strrchr(d->final, '/');
	base = base ? base + 1 : d->final;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return fs_fail_at(err, FS_EINPUT, d->final, 0, 0,
				  "give the output directory a name of its own");
	if (path_fmt(d->tmp, sizeof(d->tmp), "%s.tmp.%ld", d->final,
		     (long)getpid()))
		return fs_fail_at(err, FS_EINPUT, d->final, 0, 0, "path too long");
	/* Refuse now rather than after minutes of simulation. */
	rc = inspect(d->final, &ex, err);
	if (rc)
		return rc;
	if (mkdir(d->tmp, 0777) != 0) {
		if (errno == EEXIST)
			return fs_fail_at(err, FS_EINPUT, d->tmp, 0, 0,
					  "already exists (left by a crashed "
					  "run?); remove it and retry");
		return fs_fail_at(err, FS_EINPUT, d->tmp, 0, 0,
				  "cannot create directory: %s", strerror(errno));
	}
	d->open = 1;
	return FS_OK;
}

enum fs_rc outdir_path(const struct outdir *d, const char *name, char *buf,
		       size_t len, struct fs_err *err)
{
	if (!d->open)
		return fs_fail(err, FS_EINTERNAL, "outdir_path: directory not open");
	if (!*name || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return fs_fail_at(err, FS_EINPUT, d->final, 0, 0,
				  "'%s' is not a plain file name", name);
	if (path_fmt(buf, len, "%s/%s", d->tmp, name))
		return fs_fail_at(err, FS_EINPUT, d->final, 0, 0,
				  "path too long for '%s'", name);
	return FS_OK;
}

enum fs_rc outdir_commit(struct outdir *d, struct fs_err *err)
{
	char old[OUTDIR_PATH_MAX];
	enum existing ex;
	enum fs_rc rc;

	if (!d->open)
		return fs_fail(err, FS_EINTERNAL, "outdir_commit: directory not open");
	/* Again: the world may have changed since begin. */
	rc = inspect(d->final, &ex, err);
	if (rc) {
		outdir_abort(d);
		return rc;
	}
	if (ex != EX_FRAGSIM) {
		/* rename(2) replaces an empty directory in one step. */
		if (rename(d->tmp, d->final) != 0) {
			rc = fs_fail_at(err, FS_EINTERNAL, d->final, 0, 0,
					"cannot rename '%s' into place: %s",
					d->tmp, strerror(errno));
			outdir_abort(d);
			return rc;
		}
		d->open = 0;
		return FS_OK;
	}
	if (path_fmt(old, sizeof(old), "%s.old.%ld", d->final, (long)getpid())) {
		outdir_abort(d);
		return fs_fail_at(err, FS_EINPUT, d->final, 0, 0, "path too long");
	}
	if (rename(d->final, old) != 0) {
		rc = fs_fail_at(err, FS_EINTERNAL, d->final, 0, 0,
				"cannot move the previous output aside: %s",
				strerror(errno));
		outdir_abort(d);
		return rc;
	}
	if (rename(d->tmp, d->final) != 0) {
		rc = fs_fail_at(err, FS_EINTERNAL, d->final, 0, 0,
				"cannot rename '%s' into place: %s", d->tmp,
				strerror(errno));
		/* Put the previous output back: better stale than gone. */
		(void)rename(old, d->final);
		outdir_abort(d);
		return rc;
	}
	d->open = 0;
	/* The new output is in place; a leftover old copy is still worth
	 * an error, since the user would otherwise find it by surprise. */
	if (remove_tree(old, 0) != 0)
		return fs_fail_at(err, FS_EINTERNAL, old, 0, 0,
				  "new output committed, but the previous one "
				  "could not be removed: %s", strerror(errno));
	return FS_OK;
}

void outdir_abort(struct outdir *d)
{
	if (!d->open)
		return;
	remove_tree(d->tmp, 0);
	d->open = 0;
}

/* Close and unlink tmp after a failure. */
static void file_discard(struct outdir_file *f)
{
	if (f->fp)
		fclose(f->fp);
	f->fp = NULL;
	unlink(f->tmp);
}

enum fs_rc outdir_file_open(struct outdir_file *f, const char *path,
			    struct fs_err *err)
{
	f->fp = NULL;
	f->tmp[0] = '\0';
	if (path_fmt(f->path, sizeof(f->path), "%s", path) ||
	    path_fmt(f->tmp, sizeof(f->tmp), "%s.tmp.%ld", path,
		     (long)getpid()))
		return fs_fail_at(err, FS_EINPUT, path, 0, 0, "path too long");
	f->fp = fopen(f->tmp, "wb");
	if (!f->fp)
		return fs_fail_at(err, FS_EINTERNAL, path, 0, 0,
				  "cannot create '%s': %s", f->tmp,
				  strerror(errno));
	return FS_OK;
}

enum fs_rc outdir_file_write(struct outdir_file *f, const void *data,
			     size_t len, struct fs_err *err)
{
	if (!f->fp)
		return fs_fail_at(err, FS_EINTERNAL, f->path, 0, 0,
				  "write after the file was closed");
	if (len && fwrite(data, 1, len, f->fp) != len) {
		enum fs_rc rc = fs_fail_at(err, FS_EINTERNAL, f->path, 0, 0,
					   "write failed: %s", strerror(errno));

		file_discard(f);
		return rc;
	}
	return FS_OK;
}

enum fs_rc outdir_file_commit(struct outdir_file *f, struct fs_err *err)
{
	enum fs_rc rc;
	int e = 0;

	if (!f->fp)
		return fs_fail_at(err, FS_EINTERNAL, f->path, 0, 0,
				  "commit after the file was closed");
	/* stdio buffers: the disk-full error may only surface here, so
	 * flush and close are checked, each keeping the first errno. */
	if (fflush(f->fp) != 0)
		e = errno;
	else if (ferror(f->fp))
		e = EIO;
	if (fclose(f->fp) != 0 && !e)
		e = errno;
	f->fp = NULL;
	if (e) {
		rc = fs_fail_at(err, FS_EINTERNAL, f->path, 0, 0,
				"write failed: %s", strerror(e));
		unlink(f->tmp);
		return rc;
	}
	if (rename(f->tmp, f->path) != 0) {
		rc = fs_fail_at(err, FS_EINTERNAL, f->path, 0, 0,
				"cannot rename '%s' into place: %s", f->tmp,
				strerror(errno));
		unlink(f->tmp);
		return rc;
	}
	return FS_OK;
}

void outdir_file_abort(struct outdir_file *f)
{
	if (f->fp)
		file_discard(f);
}
