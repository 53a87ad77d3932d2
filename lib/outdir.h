/*
 * outdir.h - output that appears whole or not at all: a directory
 * (outdir_*) and a single file (outdir_file_*), both written under a
 * temporary name next to the final one, fsync'ed, and renamed into place.
 * docs/output-dir.md describes the protocol, what a kill leaves and what
 * the next run sweeps.
 *
 *   struct outdir d;
 *   char p[OUTDIR_PATH_MAX];
 *   rc = outdir_check("out/golden", err);           // before the long work
 *   ...
 *   rc = outdir_begin(&d, "out/golden", err);       // out/.golden.fragsim-tmp.<pid>/
 *   rc = outdir_path(&d, "q.npy", p, sizeof(p), err);
 *   rc = npy_write(p, ...);                          // inside the temp dir
 *   rc = rc ? (outdir_abort(&d), rc) : outdir_commit(&d, err);
 *
 * The directory's manifest.json must carry OUTDIR_MARK_KEY:
 * OUTDIR_MARK_VALUE as a JSON string at its top level, and list in its
 * "files" array (each {"name": ...}) every file written beside it, but
 * those of its kind that outdir.c's outdir_extras names: that is how a
 * later run knows the directory is fragsim's own, holds nothing else,
 * and may be replaced.
 *
 * A file the same way (npy, json and safetensors writers use this):
 *
 *   struct outdir_file f;
 *   rc = outdir_file_open(&f, "x.json", err);        // x.json.tmp.<pid>
 *   if (!rc) rc = outdir_file_write(&f, buf, len, err);
 *   if (!rc) rc = outdir_file_commit(&f, err);       // fsync, rename to x.json
 *
 * Every outdir_file_* call that fails has already closed and removed the
 * temporary file, so the caller only returns rc; outdir_file_abort is for
 * a caller that fails for its own reasons between open and commit.
 *
 * Write-side failures (open, write, fsync, close, rename) are FS_EINTERNAL
 * with err->file = the final path; a final path the user must change
 * (exists and is not ours, too long, parent not a writable directory) is
 * FS_EINPUT.
 */
#ifndef OUTDIR_H
#define OUTDIR_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "../sim/common/fs.h"

#define OUTDIR_PATH_MAX 4096	/* bytes, NUL included */

/* The top-level manifest.json member that makes a directory fragsim's. */
#define OUTDIR_MARK_KEY "tool"
#define OUTDIR_MARK_VALUE "fragsim"

/* SIGINT, SIGTERM: 1 where the cleanup handler was installed (only over
 * SIG_DFL), with the action to put back. */
struct outdir_sigs {
	int armed[2];
	struct sigaction prev[2];
};

struct outdir {
	char final[OUTDIR_PATH_MAX];	/* where the directory appears */
	char parent[OUTDIR_PATH_MAX];	/* its parent ("." when none given) */
	char tmp[OUTDIR_PATH_MAX];	/* parent/.base.fragsim-tmp.<pid> */
	char old[OUTDIR_PATH_MAX];	/* parent/.base.fragsim-old.<pid> */
	int open;			/* 1 between begin and commit/abort */
	struct outdir_sigs sig;		/* armed from begin to commit/abort */
	/* Test hooks, from the environment at begin (docs/output-dir.md):
	 * FRAGSIM_OUTDIR_CRASH names a point of commit where the process
	 * raises a signal; FRAGSIM_OUTDIR_NO_EXCHANGE=1 takes the path for
	 * file systems without RENAME_EXCHANGE. NULL / 0 in normal runs. */
	const char *crash;
	int no_exchange;
};

/*
 * Everything outdir_begin checks, before the caller spends minutes
 * computing: sweeps what killed runs left for this path (see
 * outdir_begin), creates missing parent directories, proves the parent
 * writable by creating and removing the temp directory, and refuses a
 * final_dir that commit would refuse. Leaves no temp directory behind.
 */
enum fs_rc outdir_check(const char *final_dir, struct fs_err *err);

/*
 * Create the temp directory parent/.base.fragsim-tmp.<pid> (a sibling,
 * so the renames never cross a file system), after sweeping the temp
 * directories of dead fragsim processes for the same final_dir and
 * putting back a previous output a killed run had moved aside. Refuses
 * what commit would refuse. Trailing slashes are ignored. Until commit
 * or abort, SIGINT and SIGTERM (where they have the default action) are
 * caught: the next write fails and abort removes the temp directory,
 * then the signal is raised again. On failure d is not open.
 */
enum fs_rc outdir_begin(struct outdir *d, const char *final_dir,
			struct fs_err *err);

/* "<tmp>/<name>" into buf; name must be a plain file name (no '/'). */
enum fs_rc outdir_path(const struct outdir *d, const char *name, char *buf,
		       size_t len, struct fs_err *err);

/*
 * fsync every file in the temp directory and the directory, then publish
 * it as final_dir. An absent or empty final_dir is replaced by rename(2).
 * A previous fragsim output (manifest.json with the mark) is swapped
 * with the new one in one renameat2(RENAME_EXCHANGE), then removed; where
 * the file system cannot exchange, it is moved aside and the new one
 * renamed in (a kill between the two is repaired by the next run).
 * Anything else (a file, a symlink, a non-empty directory that is not
 * fragsim's) is refused with FS_EINPUT and the temp directory removed: a
 * user's files are never deleted. After the call d is closed.
 */
enum fs_rc outdir_commit(struct outdir *d, struct fs_err *err);

/* Remove the temp directory and all inside it; a no-op when not open. */
void outdir_abort(struct outdir *d);

struct outdir_file {
	FILE *fp;			/* on tmp (or path itself); NULL when closed */
	char path[OUTDIR_PATH_MAX];	/* the final name, as given */
	char dest[OUTDIR_PATH_MAX];	/* what the rename replaces: path, or
					 * the regular file a link at path names */
	char tmp[OUTDIR_PATH_MAX];	/* dest.tmp.<pid>; "" when none exists */
	int in_place;			/* 1: a character device or FIFO at path,
					 * written into, never renamed over */
	struct outdir_sigs sig;		/* armed while tmp exists */
};

/*
 * What may be at a single file's path (docs/output-dir.md, "Single
 * files"): nothing or a regular file (written as path.tmp.<pid>, renamed
 * over it); a symbolic link to a regular file (the target is replaced
 * the same way, the link kept); a character device or a FIFO, directly
 * or through a link (written in place: /dev/null, /dev/stdout, a pipe).
 * A block device, socket, directory or dangling link is refused with
 * FS_EINPUT naming path, by check and open alike; commit refuses to
 * rename over anything but a regular file put there meanwhile.
 */

/* Before the work that produces it: can path be written? The rules
 * above, and for a renamed file its directory must exist and take a new
 * file (one is created and removed). FS_EINPUT naming path otherwise. */
enum fs_rc outdir_file_check(const char *path, struct fs_err *err);

/* Until commit or abort, SIGINT and SIGTERM are caught as by
 * outdir_begin (where no output directory already caught them): the next
 * write or the commit fails, the temporary is removed and the signal
 * raised again, so a ^C never leaves path.tmp.<pid> behind. */
enum fs_rc outdir_file_open(struct outdir_file *f, const char *path,
			    struct fs_err *err);
/* Fails (and discards the file) once SIGINT/SIGTERM was caught while an
 * outdir is open, so a long write stops within one chunk. */
enum fs_rc outdir_file_write(struct outdir_file *f, const void *data,
			     size_t len, struct fs_err *err);
/* Flush, fsync, close (all checked: a full disk shows up here), rename,
 * fsync the directory that holds it. */
enum fs_rc outdir_file_commit(struct outdir_file *f, struct fs_err *err);
/* Close and remove the temporary file; a no-op when already closed. */
void outdir_file_abort(struct outdir_file *f);

/*
 * One path a command reads or writes, as the user named it, for
 * outdir_io_check. path NULL: not given, skipped.
 */
enum outdir_io_kind {
	OUTDIR_READ,		/* an input: a case, a plan, a dump, a profile */
	OUTDIR_WRITE_FILE,	/* a single output file (--junit, --report) */
	OUTDIR_WRITE_DIR,	/* an output directory, replaced whole (--out) */
};

struct outdir_io {
	const char *opt;	/* how it was given: "--out", "--plan", "the case" */
	const char *path;
	enum outdir_io_kind kind;
};

/*
 * Before any work: no output may be an input or another output (same
 * inode where both exist, else the same name once made absolute and
 * free of links), and no input or other output may be inside an output
 * directory, which is replaced whole: `probe simulate --plan P --out P`,
 * `run g/case.yaml --out g`, `check c.yaml --junit c.yaml`, `--report
 * g/r.html --out g`. An output inside an input directory is fine
 * (`check cases/ --junit cases/j.xml`). FS_EINPUT naming the output
 * and both options; FS_ENOMEM.
 */
enum fs_rc outdir_io_check(const struct outdir_io *io, size_t n,
			   struct fs_err *err);

#endif
