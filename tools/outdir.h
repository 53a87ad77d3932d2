/*
 * outdir.h - output that appears whole or not at all: a directory
 * (outdir_*) and a single file (outdir_file_*), both written under a
 * temporary name next to the final one and renamed into place.
 *
 *   struct outdir d;
 *   char p[OUTDIR_PATH_MAX];
 *   rc = outdir_begin(&d, "out/golden", err);       // out/golden.tmp.<pid>/
 *   rc = outdir_path(&d, "q.npy", p, sizeof(p), err);
 *   rc = npy_write(p, ...);                          // inside the temp dir
 *   rc = rc ? (outdir_abort(&d), rc) : outdir_commit(&d, err);
 *
 * A file the same way (npy, json and safetensors writers use this):
 *
 *   struct outdir_file f;
 *   rc = outdir_file_open(&f, "x.json", err);        // x.json.tmp.<pid>
 *   if (!rc) rc = outdir_file_write(&f, buf, len, err);
 *   if (!rc) rc = outdir_file_commit(&f, err);       // rename to x.json
 *
 * Every outdir_file_* call that fails has already closed and removed the
 * temporary file, so the caller only returns rc; outdir_file_abort is for
 * a caller that fails for its own reasons between open and commit.
 *
 * Write-side failures (open, write, close, rename) are FS_EINTERNAL with
 * err->file = the final path; a final path the user must change (exists
 * and is not ours, too long, no parent directory) is FS_EINPUT.
 */
#ifndef OUTDIR_H
#define OUTDIR_H

#include <stddef.h>
#include <stdio.h>

#include "../sim/fs.h"

#define OUTDIR_PATH_MAX 4096	/* bytes, NUL included */

struct outdir {
	char final[OUTDIR_PATH_MAX];	/* where the directory appears */
	char tmp[OUTDIR_PATH_MAX];	/* final.tmp.<pid>, exists while open */
	int open;			/* 1 between begin and commit/abort */
};

/*
 * Create final_dir.tmp.<pid> (a sibling, so the rename never crosses a
 * file system). Refuses, before any work is done, a final_dir that commit
 * would refuse (see outdir_commit). Trailing slashes are ignored.
 * On failure nothing is created and d is not open.
 */
enum fs_rc outdir_begin(struct outdir *d, const char *final_dir,
			struct fs_err *err);

/* "<tmp>/<name>" into buf; name must be a plain file name (no '/'). */
enum fs_rc outdir_path(const struct outdir *d, const char *name, char *buf,
		       size_t len, struct fs_err *err);

/*
 * Rename the temp directory to final_dir. An absent or empty final_dir is
 * simply taken. A previous fragsim output (a directory holding
 * manifest.json) is replaced: renamed to final_dir.old.<pid>, the new one
 * renamed in, the old one removed. Anything else (a file, a symlink, a
 * non-empty directory without manifest.json) is refused with FS_EINPUT
 * and the temp directory is removed: we never delete a user's files.
 * After the call d is closed, whatever the result.
 */
enum fs_rc outdir_commit(struct outdir *d, struct fs_err *err);

/* Remove the temp directory and all inside it; a no-op when not open. */
void outdir_abort(struct outdir *d);

struct outdir_file {
	FILE *fp;			/* on tmp; NULL when closed */
	char path[OUTDIR_PATH_MAX];	/* the final name */
	char tmp[OUTDIR_PATH_MAX];	/* path.tmp.<pid> */
};

enum fs_rc outdir_file_open(struct outdir_file *f, const char *path,
			    struct fs_err *err);
enum fs_rc outdir_file_write(struct outdir_file *f, const void *data,
			     size_t len, struct fs_err *err);
/* Flush, close (both checked: a full disk shows up here), rename. */
enum fs_rc outdir_file_commit(struct outdir_file *f, struct fs_err *err);
/* Close and remove the temporary file; a no-op when already closed. */
void outdir_file_abort(struct outdir_file *f);

#endif
