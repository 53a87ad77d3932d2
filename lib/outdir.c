/*
 * outdir.c - output directories and files that appear whole or not at all.
 *
 * Why: docs/design.md 3.4 says a failed run leaves no half-written golden behind.
 * A device test that finds manifest.json must be able to trust every file
 * it lists, whatever happened to the run that wrote it: an error, ^C, a
 * SIGKILL, a power cut. docs/output-dir.md is the user's view of this.
 *
 *   outdir_begin("out/g")      files written            outdir_commit()
 *
 *   out/.g.fragsim-tmp.4242/   out/.g.fragsim-tmp.4242/  out/g/
 *                              |- q.npy                  |- q.npy
 *                              |- k.npy.tmp.4242         |- k.npy
 *                              '- manifest.json          '- manifest.json
 *
 * Publishing. Every file is fsync'ed, then the temp directory, so what
 * the rename publishes is on disk. Then:
 *   - out/g absent or empty: rename(2) the temp directory onto it.
 *   - out/g a previous fragsim output: renameat2(RENAME_EXCHANGE) swaps
 *     the two names in one step; the old output, now under the temp
 *     name, is then removed. At every instant out/g is the old output or
 *     the new one, whole: a kill before the swap leaves the old one, a
 *     kill after it the new one, plus a temp directory the next run to
 *     out/g sweeps.
 *   - a file system without RENAME_EXCHANGE (EINVAL, ENOSYS: NFS, old
 *     kernels): out/g is renamed to out/.g.fragsim-old.<pid>, the new one
 *     renamed in, the old one removed. Between the two renames out/g does
 *     not exist; a kill there leaves the old output whole under its
 *     -old name, and the next run to out/g renames it back before
 *     anything else. Nothing better is possible there: rename(2) will not
 *     replace a non-empty directory.
 * Rejected alternatives: publishing through a symlink (out/g -> a
 * versioned directory) turns the user's directory into a link, which
 * copies, rsync and `--out` itself treat differently, and leaves the
 * versions to collect; keeping the old one "until the new one is in
 * place" is the fallback above, since one name cannot hold both.
 *
 * Whose directory. Only a directory whose manifest.json is a JSON object
 * with "tool": "fragsim" at its top level (parsed, not searched for),
 * and that holds nothing but the regular files that manifest gives it
 * (its "files" names, its kind's extras: outdir_extras) and fragsim's
 * temporaries of them, is replaced; an empty one is taken; anything else is refused before any
 * work (outdir_check) and again at commit, and after the swap the old
 * side is checked once more, so a directory put there meanwhile is
 * swapped back, not deleted.
 *
 * Killed runs. Temp names carry the pid: parent/.g.fragsim-tmp.<pid> and
 * parent/.g.fragsim-old.<pid>. Each begin (and check) for out/g first
 * renames back an -old directory of a dead pid when out/g is missing,
 * then removes the -tmp and -old directories of dead pids (kill(pid, 0)
 * says ESRCH) that are fragsim's: marked (OUTDIR_TMP_MARK, made first in
 * every temp directory) or a fragsim output. Other names, unmarked
 * directories of those names, and live pids are never touched.
 *
 * Worked example: "out/g/" with out/g holding only notes.txt is refused
 * at begin with FS_EINPUT "exists and is not a fragsim output ..." and
 * nothing is created.
 *
 * Invariants: the temp directory is a sibling of the final one (same file
 * system, so the renames are atomic); we only ever delete trees we
 * created, trees whose manifest carries the mark and lists all they
 * hold, and fragsim temp names of dead processes.
 */
#include "outdir.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "readfile.h"
#include "yamldoc.h"

#if defined(__linux__) && defined(SYS_statx)
#include <linux/stat.h>		/* struct statx, STATX_MNT_ID */
#endif

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)	/* <linux/fs.h> */
#endif

#define OUTDIR_MANIFEST_MAX ((size_t)64 << 20)	/* larger: not ours */
#define OUTDIR_WRITE_CHUNK ((size_t)8 << 20)	/* a signal waits one chunk */
#define OUTDIR_SWEEP_MAX 64	/* stale temp dirs handled per run */
/* Made first in every temp directory and removed just before it is
 * published: a dead pid's -tmp or -old directory is swept only when it
 * holds this or is a fragsim output (dir_is_ours), never for its name
 * alone (a soak's directory named .g.fragsim-tmp.<dead pid> was deleted). */
#define OUTDIR_TMP_MARK ".fragsim-writing"

/*
 * The signal caught while a temp directory exists (0: none). The one
 * static variable in lib/: a signal handler receives only the signal
 * number, so what it writes must live at file scope, and a
 * volatile sig_atomic_t is the only object C lets a handler write.
 * The handler stores the number and nothing else; the writer polls it
 * between chunks and outdir_abort raises the signal again once the temp
 * directory is gone. Everything else (the previous actions) is in
 * struct outdir.
 */
static volatile sig_atomic_t outdir_caught;

static const int outdir_sigs[2] = { SIGINT, SIGTERM };

static void outdir_on_signal(int sig)
{
	outdir_caught = sig;
}

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

/*
 * fsync a file or directory. EINVAL and ENOTSUP mean the file system has
 * no durability to offer (some FUSE and special files): not an error.
 */
static int sync_path(const char *path, int is_dir)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | (is_dir ? O_DIRECTORY : 0));
	int rc, e;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	e = errno;
	close(fd);
	if (rc != 0 && (e == EINVAL || e == ENOTSUP))
		rc = 0;
	errno = e;
	return rc;
}

/* What walk_tree does to one entry after its children (st: its lstat). */
typedef int (*walk_fn)(const char *path, const struct stat *st);

/*
 * Post-order walk of path without following symlinks: every entry below
 * a directory is visited before the directory itself, so removing works
 * (rm -r) and so does syncing the files before the directory that names
 * them. depth bounds the recursion. The first failure stops the walk.
 */
static int walk_tree(const char *path, int depth, walk_fn fn)
{
	char child[OUTDIR_PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *dir;
	int rc = 0;

	if (lstat(path, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return fn(path, &st);
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
			rc = walk_tree(child, depth + 1, fn);
		}
	}
	closedir(dir);
	return rc ? rc : fn(path, &st);
}

static int remove_one(const char *path, const struct stat *st)
{
	return S_ISDIR(st->st_mode) ? rmdir(path) : unlink(path);
}

/* Regular files and directories are synced; links and the rest are not
 * what we publish. */
static int sync_one(const char *path, const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return sync_path(path, 1);
	return S_ISREG(st->st_mode) ? sync_path(path, 0) : 0;
}

/* rm -r without following symlinks; a missing path is not an error. */
static int remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	return walk_tree(path, 0, remove_one);
}

/* A fragsim output (flat, dir_is_ours) removed with its manifest last:
 * killed halfway, what is left is still a marked output the next run's
 * sweep may take. */
static int remove_output(const char *path)
{
	char sub[OUTDIR_PATH_MAX];
	struct dirent *de;
	DIR *dir = opendir(path);
	int rc = 0;

	if (!dir)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(dir)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, "manifest.json"))
			continue;
		if (path_fmt(sub, sizeof(sub), "%s/%s", path, de->d_name) || remove_tree(sub))
			rc = -1;
	}
	closedir(dir);
	if (path_fmt(sub, sizeof(sub), "%s/manifest.json", path) ||
	    (unlink(sub) != 0 && errno != ENOENT) || rmdir(path) != 0)
		rc = -1;
	return rc;
}

/* Does dir hold the mark of a temp directory being written? */
static int has_tmp_mark(const char *dir)
{
	char p[OUTDIR_PATH_MAX];
	struct stat st;

	return !path_fmt(p, sizeof(p), "%s/%s", dir, OUTDIR_TMP_MARK) &&
	       lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* fsync every regular file under path, the directories, then path. */
static int sync_tree(const char *path)
{
	return walk_tree(path, 0, sync_one);
}

/* The directory part of path ("." when none) into buf. */
static void parent_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		path_fmt(buf, len, ".");
	else if (slash == path)
		path_fmt(buf, len, "/");
	else
		path_fmt(buf, len, "%.*s", (int)(slash - path), path);
}

/*
 * The files a fragsim output holds besides manifest.json and the names
 * its "files" array lists, by the top-level manifest member that says
 * the kind (value NULL: present at all). A golden in safetensors format
 * lists its tensors, which live in golden.safetensors (lib/golden.c); a
 * probe plan keeps its profile beside the waves, a probe dump is one
 * file (lib/probeplan.c). A new kind of output that writes another file
 * adds a row here, or its next --out over itself is refused.
 */
static const struct {
	const char *key, *value, *file;
} outdir_extras[] = {
	{ "format", "safetensors", "golden.safetensors" },
	{ "fragsim_probe", NULL, "profile.yaml" },
	{ "fragsim_probe_dump", NULL, "probe_c.npy" },
};

#define OUTDIR_OWN_MAX 64	/* names a manifest may give its directory */

/* What a marked manifest says its directory holds. */
struct own_names {
	char name[OUTDIR_OWN_MAX][NAME_MAX + 1];
	int n;
};

static void own_add(struct own_names *o, const char *s, size_t len)
{
	if (o->n < OUTDIR_OWN_MAX && len > 0 && len <= NAME_MAX &&
	    !memchr(s, '/', len)) {
		memcpy(o->name[o->n], s, len);
		o->name[o->n++][len] = '\0';
	}
}

static int scalar_is(const yaml_node_t *v, const char *s)
{
	return v && v->type == YAML_SCALAR_NODE && v->data.scalar.length == strlen(s) &&
	       !memcmp(v->data.scalar.value, s, v->data.scalar.length);
}

/* manifest.json, the "files" entries' names, the kind's extras. */
static void own_collect(struct ydoc *doc, yaml_node_t *root, struct own_names *o)
{
	yaml_node_t *files = ydoc_get(doc, root, "files");

	o->n = 0;
	own_add(o, "manifest.json", strlen("manifest.json"));
	for (int i = 0; files && i < ydoc_seq_len(files); i++) {
		yaml_node_t *it = ydoc_seq_item(doc, files, i);
		yaml_node_t *nm = it && it->type == YAML_MAPPING_NODE ?
					  ydoc_get(doc, it, "name") : NULL;

		if (nm && nm->type == YAML_SCALAR_NODE)
			own_add(o, (const char *)nm->data.scalar.value,
				nm->data.scalar.length);
	}
	for (size_t i = 0; i < sizeof(outdir_extras) / sizeof(outdir_extras[0]); i++) {
		yaml_node_t *v = ydoc_get(doc, root, outdir_extras[i].key);

		if (v && (!outdir_extras[i].value || scalar_is(v, outdir_extras[i].value)))
			own_add(o, outdir_extras[i].file, strlen(outdir_extras[i].file));
	}
}

/*
 * Is manifest a manifest.json fragsim wrote? It must parse as a JSON
 * object (libyaml reads JSON; a flow mapping) whose top-level
 * OUTDIR_MARK_KEY is the double-quoted string OUTDIR_MARK_VALUE. A file
 * that merely mentions fragsim, or YAML that says `tool: fragsim`, is not.
 * When it is, o gets the names it gives its directory.
 */
static int manifest_is_ours(const char *manifest, struct own_names *o)
{
	struct fs_err scratch;
	struct stat st;
	struct ydoc doc;
	yaml_node_t *root, *v;
	char *text;
	size_t len;
	int ours = 0;

	if (lstat(manifest, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	if (readfile(manifest, OUTDIR_MANIFEST_MAX, &text, &len, &scratch))
		return 0;
	if (ydoc_load(&doc, text, len, manifest, &scratch) == FS_OK) {
		root = ydoc_root(&doc);
		v = root && root->type == YAML_MAPPING_NODE &&
		    root->data.mapping.style == YAML_FLOW_MAPPING_STYLE ?
			    ydoc_get(&doc, root, OUTDIR_MARK_KEY) : NULL;
		ours = scalar_is(v, OUTDIR_MARK_VALUE) &&
		       v->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
		if (ours)
			own_collect(&doc, root, o);
		ydoc_free(&doc);
	}
	free(text);
	return ours;
}

/* name is one of o's, or one of o's with fragsim's ".tmp.<digits>". */
static int name_is_own(const struct own_names *o, const char *name)
{
	for (int i = 0; i < o->n; i++) {
		size_t n = strlen(o->name[i]);
		const char *t = name + n;

		if (strncmp(name, o->name[i], n))
			continue;
		if (!*t)
			return 1;
		if (!strncmp(t, ".tmp.", 5) && t[5] && strspn(t + 5, "0123456789") ==
							    strlen(t + 5))
			return 1;
	}
	return 0;
}

enum ownership { OWN_NOT_OURS, OWN_FOREIGN, OWN_OURS };

/*
 * Whose is dir? OWN_NOT_OURS without a marked manifest.json; OWN_FOREIGN
 * when it is marked but holds an entry the manifest does not give it (a
 * README, the case file, .git, a directory): the first such name, in
 * strcmp order so the message is the same on every file system, goes
 * to foreign; OWN_OURS when it holds nothing else (each own name a
 * regular file), so replacing it loses nothing.
 */
static enum ownership dir_owner(const char *dir, char *foreign, size_t len)
{
	char manifest[OUTDIR_PATH_MAX], entry[OUTDIR_PATH_MAX];
	struct own_names own_buf, *o = &own_buf;	/* 16 KiB: no malloc to fail */
	enum ownership own = OWN_NOT_OURS;
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (foreign && len)
		foreign[0] = '\0';
	if (path_fmt(manifest, sizeof(manifest), "%s/manifest.json", dir) ||
	    !manifest_is_ours(manifest, o) || !(d = opendir(dir)))
		return own;
	own = OWN_OURS;
	while ((de = readdir(d)) != NULL) {
		const char *nm = de->d_name;

		if (!strcmp(nm, ".") || !strcmp(nm, ".."))
			continue;
		if (name_is_own(o, nm) &&
		    !path_fmt(entry, sizeof(entry), "%s/%s", dir, nm) &&
		    lstat(entry, &st) == 0 && S_ISREG(st.st_mode))
			continue;
		if (own == OWN_OURS || (foreign && strcmp(nm, foreign) < 0))
			if (foreign)
				path_fmt(foreign, len, "%s", nm);
		own = OWN_FOREIGN;
	}
	closedir(d);
	return own;
}

static int dir_is_ours(const char *dir)
{
	return dir_owner(dir, NULL, 0) == OWN_OURS;
}

enum existing { EX_ABSENT, EX_EMPTY, EX_FRAGSIM };

/*
 * Is dir where a file system is mounted (a mount, a bind mount), not an
 * ordinary entry of parent? rename(2) cannot replace it (EBUSY), and
 * RENAME_EXCHANGE cannot move it, so the run would compute for minutes
 * and then fail. The mount ids differ (statx, Linux 5.8), or where the
 * kernel gives none, the devices: a bind mount within one file system
 * is seen by the first only.
 */
static int is_mount_point(const char *dir, const char *parent)
{
	struct stat a, b;

#if defined(__linux__) && defined(SYS_statx) && defined(STATX_MNT_ID)
	struct statx x, y;

	if (syscall(SYS_statx, AT_FDCWD, dir, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &x) == 0 &&
	    syscall(SYS_statx, AT_FDCWD, parent, 0, STATX_MNT_ID, &y) == 0 &&
	    (x.stx_mask & y.stx_mask & STATX_MNT_ID))
		return x.stx_mnt_id != y.stx_mnt_id;
#endif
	return lstat(dir, &a) == 0 && stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

/* What is at final now; anything we must not replace is an FS_EINPUT. */
static enum fs_rc inspect(const char *final, enum existing *ex,
			  struct fs_err *err)
{
	char foreign[NAME_MAX + 1], parent[OUTDIR_PATH_MAX];
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
	parent_of(final, parent, sizeof(parent));
	if (is_mount_point(final, parent))
		return fs_fail_at(err, FS_EINPUT, final, 0, 0,
				  "is a mount point, which fragsim cannot replace (it "
				  "renames a finished output into place); give a "
				  "directory inside it");
	switch (dir_owner(final, foreign, sizeof(foreign))) {
	case OWN_OURS:
		*ex = EX_FRAGSIM;
		return FS_OK;
	case OWN_FOREIGN:
		return fs_fail_at(err, FS_EINPUT, final, 0, 0,
				  "a fragsim output, but it holds '%s', which its "
				  "manifest.json does not list; refusing to replace "
				  "it (move that out, or give another directory)",
				  foreign);
	case OWN_NOT_OURS:
		break;
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
				  "exists and is not a fragsim output (no manifest.json "
				  "with \"" OUTDIR_MARK_KEY "\": \"" OUTDIR_MARK_VALUE
				  "\"); refusing to replace it");
	*ex = EX_EMPTY;
	return FS_OK;
}

/* d->final (trailing slashes stripped), d->parent, d->tmp, d->old. */
static enum fs_rc set_names(struct outdir *d, const char *final_dir,
			    struct fs_err *err)
{
	size_t n = strlen(final_dir);
	const char *base, *sep;

	/* "out/" and "out" are the same directory; strip the slashes
	 * (but keep "/" itself, refused below as nameless). */
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
	parent_of(d->final, d->parent, sizeof(d->parent));
	sep = d->parent[strlen(d->parent) - 1] == '/' ? "" : "/";
	if (path_fmt(d->tmp, sizeof(d->tmp), "%s%s.%s.fragsim-tmp.%ld", d->parent,
		     sep, base, (long)getpid()) ||
	    path_fmt(d->old, sizeof(d->old), "%s%s.%s.fragsim-old.%ld", d->parent,
		     sep, base, (long)getpid()) ||
	    strlen(strrchr(d->old, '/') + 1) > NAME_MAX)
		return fs_fail_at(err, FS_EINPUT, d->final, 0, 0, "path too long");
	return FS_OK;
}

/* mkdir -p parent; a component that exists and is no directory is an
 * input error naming it. */
static enum fs_rc make_parents(const char *parent, struct fs_err *err)
{
	char p[OUTDIR_PATH_MAX];
	struct stat st;

	if (path_fmt(p, sizeof(p), "%s", parent))
		return fs_fail_at(err, FS_EINPUT, parent, 0, 0, "path too long");
	for (char *s = p + 1;; s++) {
		char c = *s;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (stat(p, &st) != 0) {
			if (errno != ENOENT || (mkdir(p, 0777) != 0 && errno != EEXIST))
				return fs_fail_at(err, FS_EINPUT, p, 0, 0,
						  "cannot create directory: %s",
						  strerror(errno));
		} else if (!S_ISDIR(st.st_mode)) {
			return fs_fail_at(err, FS_EINPUT, p, 0, 0,
					  "is not a directory");
		}
		*s = c;
		if (!c)
			return FS_OK;
	}
}

/* The pid in name when it is ".<base>.fragsim-<kind>.<digits>", else 0. */
static long temp_pid(const char *name, const char *base, const char *kind)
{
	size_t bl = strlen(base), kl = strlen(kind);
	const char *p = name + 1 + bl;
	char *end;
	long pid;

	if (name[0] != '.' || strncmp(name + 1, base, bl) ||
	    strncmp(p, ".fragsim-", 9) || strncmp(p + 9, kind, kl) ||
	    p[9 + kl] != '.' || !isdigit((unsigned char)p[10 + kl]))
		return 0;
	errno = 0;
	pid = strtol(p + 10 + kl, &end, 10);
	return *end || errno || pid <= 0 ? 0 : pid;
}

static int pid_dead(long pid)
{
	return pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/*
 * What killed runs left for d->final: an -old directory of a dead pid is
 * renamed back when final is missing (a kill between the fallback's two
 * renames); the other -tmp and -old directories of dead pids are removed.
 * Best effort: a failure here surfaces as the checks that follow.
 */
static void sweep(const struct outdir *d)
{
	char names[OUTDIR_SWEEP_MAX][NAME_MAX + 1], path[OUTDIR_PATH_MAX];
	const char *base = strrchr(d->final, '/');
	int is_old[OUTDIR_SWEEP_MAX], n = 0, restored = -1;
	struct dirent *de;
	struct stat st;
	DIR *dir;

	base = base ? base + 1 : d->final;
	dir = opendir(d->parent);
	if (!dir)
		return;
	while (n < OUTDIR_SWEEP_MAX && (de = readdir(dir)) != NULL) {
		long tp = temp_pid(de->d_name, base, "tmp");
		long op = temp_pid(de->d_name, base, "old");

		if ((tp && pid_dead(tp)) || (op && pid_dead(op))) {
			is_old[n] = op != 0;
			path_fmt(names[n++], sizeof(names[0]), "%s", de->d_name);
		}
	}
	closedir(dir);
	for (int i = 0; i < n; i++) {
		const char *sep = d->parent[strlen(d->parent) - 1] == '/' ? "" : "/";

		if (path_fmt(path, sizeof(path), "%s%s%s", d->parent, sep, names[i]) ||
		    lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		if (is_old[i] && restored < 0 && lstat(d->final, &st) != 0 &&
		    errno == ENOENT && dir_is_ours(path) &&
		    rename(path, d->final) == 0) {
			restored = i;
			continue;
		}
		/* ours by its mark or its manifest, not by its name */
		if (has_tmp_mark(path))
			remove_tree(path);
		else if (dir_is_ours(path))
			remove_output(path);
	}
}

/* Names, parents, sweep, then what is at final: all of begin but the
 * temp directory. */
static enum fs_rc prepare(struct outdir *d, const char *final_dir,
			  struct fs_err *err)
{
	enum existing ex;
	enum fs_rc rc;

	memset(d, 0, sizeof(*d));
	rc = set_names(d, final_dir, err);
	if (!rc)
		rc = make_parents(d->parent, err);
	if (rc)
		return rc;
	sweep(d);
	return inspect(d->final, &ex, err);
}

static enum fs_rc make_tmp(const struct outdir *d, struct fs_err *err)
{
	char mark[OUTDIR_PATH_MAX];
	int fd;

	if (mkdir(d->tmp, 0777) == 0) {
		if (path_fmt(mark, sizeof(mark), "%s/%s", d->tmp, OUTDIR_TMP_MARK) ||
		    (fd = open(mark, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) < 0) {
			rmdir(d->tmp);
			return fs_fail_at(err, FS_EINPUT, d->parent, 0, 0,
					  "cannot write in a directory made here: %s",
					  strerror(errno));
		}
		close(fd);
		return FS_OK;
	}
	if (errno == EEXIST)
		return fs_fail_at(err, FS_EINPUT, d->tmp, 0, 0,
				  "already exists (this process left it?); "
				  "remove it and retry");
	return fs_fail_at(err, FS_EINPUT, d->parent, 0, 0,
			  "cannot create a directory here: %s", strerror(errno));
}

enum fs_rc outdir_check(const char *final_dir, struct fs_err *err)
{
	struct outdir d;
	enum fs_rc rc = prepare(&d, final_dir, err);

	if (!rc)
		rc = make_tmp(&d, err);
	if (!rc)
		remove_tree(d.tmp);	/* the mark and the directory */
	return rc;
}

/*
 * Catch SIGINT and SIGTERM where they would kill us outright; a caller's
 * own handler or SIG_IGN (nohup) is left alone, and so is ours: a file
 * written inside an open output directory finds the directory's handler
 * installed, arms nothing, and leaves the signal for the directory's
 * abort to raise. Nor does anything arm while a signal is caught and
 * not yet raised again: SA_RESETHAND has put SIG_DFL back by then, which
 * looked like an outermost arming, and one arming there cleared the
 * caught signal (a SIGTERM between two files of a directory was lost,
 * and the new output published). outdir_caught is only ever cleared by
 * the outermost disarm, just before it raises the signal.
 */
static void arm(struct outdir_sigs *g)
{
	struct sigaction sa;
	int dfl[2];

	g->armed[0] = g->armed[1] = 0;
	if (outdir_caught)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = outdir_on_signal;
	sigemptyset(&sa.sa_mask);
	/* A second ^C kills at once; the next run sweeps what it leaves. */
	sa.sa_flags = SA_RESTART | SA_RESETHAND;
	for (int i = 0; i < 2; i++)
		dfl[i] = sigaction(outdir_sigs[i], NULL, &g->prev[i]) == 0 &&
			 !(g->prev[i].sa_flags & SA_SIGINFO) &&
			 g->prev[i].sa_handler == SIG_DFL;
	for (int i = 0; i < 2; i++)
		g->armed[i] = dfl[i] && sigaction(outdir_sigs[i], &sa, NULL) == 0;
}

/* Put the actions back; a signal caught meanwhile is raised again, now
 * that no temporary is left, so the process ends as it asked. One that
 * armed nothing raises nothing. */
static void disarm(struct outdir_sigs *g)
{
	int sig, any = g->armed[0] || g->armed[1];

	for (int i = 0; i < 2; i++)
		if (g->armed[i])
			sigaction(outdir_sigs[i], &g->prev[i], NULL);
	g->armed[0] = g->armed[1] = 0;
	if (!any)
		return;
	sig = outdir_caught;
	outdir_caught = 0;
	if (sig)
		raise(sig);
}

/* Test hook: raise the signal crash (FRAGSIM_OUTDIR_CRASH) names at point. */
static void crash_at(const char *crash, const char *point)
{
	size_t n = strlen(point);
	const char *s;

	if (!crash || strncmp(crash, point, n))
		return;
	s = crash + n;
	if (!*s)
		raise(SIGKILL);
	else if (!strcmp(s, ":TERM"))
		raise(SIGTERM);
	else if (!strcmp(s, ":INT"))
		raise(SIGINT);
}

static void crash_point(const struct outdir *d, const char *point)
{
	crash_at(d->crash, point);
}

enum fs_rc outdir_begin(struct outdir *d, const char *final_dir,
			struct fs_err *err)
{
	const char *ne = getenv("FRAGSIM_OUTDIR_NO_EXCHANGE");
	enum fs_rc rc = prepare(d, final_dir, err);

	if (!rc)
		rc = make_tmp(d, err);
	if (rc) {
		d->open = 0;
		return rc;
	}
	d->crash = getenv("FRAGSIM_OUTDIR_CRASH");
	d->no_exchange = ne && !strcmp(ne, "1");
	arm(&d->sig);
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

static int exchange(const char *a, const char *b)
{
#if defined(__linux__) && defined(SYS_renameat2)
	return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b,
			    RENAME_EXCHANGE);
#else
	(void)a, (void)b;
	errno = ENOSYS;
	return -1;
#endif
}

/* Close d after a failure of commit: the temp directory goes. */
static enum fs_rc fail_commit(struct outdir *d, enum fs_rc rc)
{
	outdir_abort(d);
	return rc;
}

/* The published directory's name is durable once its parent is synced. */
static enum fs_rc sync_parent(const struct outdir *d, struct fs_err *err)
{
	if (sync_path(d->parent, 1) != 0)
		return fs_fail_at(err, FS_EINTERNAL, d->final, 0, 0,
				  "published, but syncing '%s' failed: %s",
				  d->parent, strerror(errno));
	return FS_OK;
}

/* Remove the previous output, now at gone; d is closed. */
static enum fs_rc drop_old(struct outdir *d, const char *gone,
			   struct fs_err *err)
{
	enum fs_rc rc = FS_OK;

	/* The new output is in place; a leftover old copy is still worth
	 * an error, since the user would otherwise find it by surprise. */
	if (remove_output(gone) != 0)
		rc = fs_fail_at(err, FS_EINTERNAL, gone, 0, 0,
				"new output committed, but the previous one "
				"could not be removed: %s", strerror(errno));
	d->open = 0;
	disarm(&d->sig);
	return rc;
}

/* final is fragsim's: swap it with tmp in one step, then drop it. */
static enum fs_rc publish_exchange(struct outdir *d, struct fs_err *err)
{
	enum fs_rc rc;

	/* The old output is under the temp name now. Was it still ours?
	 * Something put at final since inspect() is swapped back. */
	if (!dir_is_ours(d->tmp)) {
		rc = fs_fail_at(err, FS_EINPUT, d->final, 0, 0,
				"replaced by something that is not a fragsim "
				"output while we worked; left as it was");
		if (exchange(d->tmp, d->final) == 0) {
			outdir_abort(d);
			return rc;
		}
		/* Not ours to delete: leave it under the temp name, say where. */
		d->open = 0;
		disarm(&d->sig);
		return fs_fail_at(err, FS_EINTERNAL, d->final, 0, 0,
				  "replaced while we worked, and could not be "
				  "put back: it is at '%s'", d->tmp);
	}
	rc = sync_parent(d, err);
	crash_point(d, "exchanged");
	if (rc) {
		drop_old(d, d->tmp, NULL);
		return rc;
	}
	return drop_old(d, d->tmp, err);
}

/* No RENAME_EXCHANGE here: old aside, new in, old out. */
static enum fs_rc publish_aside(struct outdir *d, struct fs_err *err)
{
	enum fs_rc rc;

	if (rename(d->final, d->old) != 0)
		return fail_commit(d, fs_fail_at(err, FS_EINTERNAL, d->final, 0, 0,
						  "cannot move the previous output aside: %s",
						  strerror(errno)));
	if (!dir_is_ours(d->old)) {
		rc = fs_fail_at(err, FS_EINPUT, d->final, 0, 0,
				"replaced by something that is not a fragsim "
				"output while we worked; left as it was");
		if (rename(d->old, d->final) != 0)
			rc = fs_fail_at(err, FS_EINTERNAL, d->final, 0, 0,
					"replaced while we worked, and could not be "
					"put back: it is at '%s'", d->old);
		return fail_commit(d, rc);
	}
	crash_point(d, "moved-aside");
	if (rename(d->tmp, d->final) != 0) {
		rc = fs_fail_at(err, FS_EINTERNAL, d->final, 0, 0,
				"cannot rename '%s' into place: %s", d->tmp,
				strerror(errno));
		/* Put the previous output back: better stale than gone. */
		(void)rename(d->old, d->final);
		return fail_commit(d, rc);
	}
	rc = sync_parent(d, err);
	crash_point(d, "published");
	if (rc) {
		drop_old(d, d->old, NULL);
		return rc;
	}
	return drop_old(d, d->old, err);
}

enum fs_rc outdir_commit(struct outdir *d, struct fs_err *err)
{
	char path[OUTDIR_PATH_MAX];
	enum existing ex;
	enum fs_rc rc;

	if (!d->open)
		return fs_fail(err, FS_EINTERNAL, "outdir_commit: directory not open");
	/* The mark goes: what is published holds only what the manifest
	 * lists. Killed from here on, the directory is a whole output the
	 * sweep knows by its manifest. */
	if (path_fmt(path, sizeof(path), "%s/%s", d->tmp, OUTDIR_TMP_MARK) ||
	    (unlink(path) != 0 && errno != ENOENT))
		return fail_commit(d, fs_fail_at(err, FS_EINTERNAL, d->final, 0, 0,
						 "cannot remove '%s': %s", path,
						 strerror(errno)));
	/* What the rename publishes must be on disk first (each file, and
	 * the directory that names them), or a power cut after it could
	 * leave the new names over empty files. */
	if (sync_tree(d->tmp) != 0)
		return fail_commit(d, fs_fail_at(err, FS_EINTERNAL, d->final, 0, 0,
						 "cannot sync '%s': %s", d->tmp,
						 strerror(errno)));
	crash_point(d, "written");
	if (outdir_caught)	/* abort raises it again */
		return fail_commit(d, fs_fail(err, FS_EINTERNAL, "interrupted"));
	/* Again: the world may have changed since begin. */
	rc = inspect(d->final, &ex, err);
	if (rc)
		return fail_commit(d, rc);
	if (ex == EX_FRAGSIM && !d->no_exchange) {
		if (exchange(d->tmp, d->final) == 0)
			return publish_exchange(d, err);
		if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
			return fail_commit(d, fs_fail_at(err, FS_EINTERNAL, d->final, 0, 0,
							 "cannot swap '%s' into place: %s",
							 d->tmp, strerror(errno)));
	}
	if (ex == EX_FRAGSIM)
		return publish_aside(d, err);
	/* rename(2) replaces an empty directory in one step, and fails on a
	 * directory someone filled since inspect(). */
	if (rename(d->tmp, d->final) != 0)
		return fail_commit(d, fs_fail_at(err, FS_EINTERNAL, d->final, 0, 0,
						 "cannot rename '%s' into place: %s",
						 d->tmp, strerror(errno)));
	d->open = 0;
	rc = sync_parent(d, err);
	disarm(&d->sig);
	return rc;
}

void outdir_abort(struct outdir *d)
{
	if (!d->open)
		return;
	remove_tree(d->tmp);
	d->open = 0;
	disarm(&d->sig);
}

/* ---- outputs against inputs ---- */

/*
 * path made absolute and free of links where it exists: realpath of
 * path, else of its parent with the last name appended, else the path
 * joined to the working directory as given. -1 when it does not fit.
 */
static int canon(const char *path, char *out, size_t len)
{
	char parent[OUTDIR_PATH_MAX], real[PATH_MAX], cwd[PATH_MAX], p[OUTDIR_PATH_MAX];
	const char *base;
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (path_fmt(p, sizeof(p), "%.*s", (int)n, path))
		return -1;
	if (realpath(p, real))
		return path_fmt(out, len, "%s", real);
	parent_of(p, parent, sizeof(parent));
	base = strrchr(p, '/');
	base = base ? base + 1 : p;
	if (realpath(parent, real))
		return path_fmt(out, len, "%s%s%s", real,
				real[strlen(real) - 1] == '/' ? "" : "/", base);
	if (p[0] == '/')
		return path_fmt(out, len, "%s", p);
	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	return path_fmt(out, len, "%s/%s", cwd, p);
}

/* a and b are one file or directory: the same inode where both exist,
 * else the same canonical name. */
static int io_same(const char *a, const char *ca, const char *b, const char *cb)
{
	struct stat sa, sb;

	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	return !strcmp(ca, cb);
}

/* Is x (canonical cx) strictly inside directory d (canonical cd)? By
 * name, and where d exists by inode too: each directory above x is
 * compared with d, so a second name for d (a bind mount) is seen. */
static int io_inside(const char *d, const char *cd, const char *cx)
{
	char up[OUTDIR_PATH_MAX];
	struct stat sd, su;
	size_t n = strlen(cd);

	if (!strncmp(cx, cd, n) && (cx[n] == '/' || (n == 1 && cd[0] == '/')) && cx[n])
		return 1;
	if (stat(d, &sd) != 0 || !S_ISDIR(sd.st_mode) ||
	    path_fmt(up, sizeof(up), "%s", cx))
		return 0;
	for (char *slash = strrchr(up, '/'); slash && slash > up; slash = strrchr(up, '/')) {
		*slash = '\0';
		if (stat(up, &su) == 0 && su.st_dev == sd.st_dev && su.st_ino == sd.st_ino)
			return 1;
	}
	return 0;
}

enum fs_rc outdir_io_check(const struct outdir_io *io, size_t n, struct fs_err *err)
{
	char (*c)[OUTDIR_PATH_MAX] = calloc(n ? n : 1, sizeof(*c));

	if (!c)
		return fs_nomem(err, "the paths to compare", n * sizeof(*c));
	for (size_t i = 0; i < n; i++)
		if (io[i].path && canon(io[i].path, c[i], sizeof(c[i])))
			c[i][0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const struct outdir_io *o = &io[i];

		if (!o->path || o->kind == OUTDIR_READ || !c[i][0])
			continue;
		for (size_t k = 0; k < n; k++) {
			const struct outdir_io *x = &io[k];
			enum fs_rc rc = FS_OK;

			if (k == i || !x->path || !c[k][0])
				continue;
			if (io_same(o->path, c[i], x->path, c[k]))
				rc = x->kind == OUTDIR_READ ?
				     fs_fail_at(err, FS_EINPUT, o->path, 0, 0,
						"%s is also %s, which this command "
						"reads; give %s a path of its own",
						o->opt, x->opt, o->opt) :
				     k < i ? FS_OK :	/* said once, by the first */
				     fs_fail_at(err, FS_EINPUT, o->path, 0, 0,
						"given as both %s and %s; give each "
						"output a path of its own", o->opt, x->opt);
			else if (o->kind == OUTDIR_WRITE_DIR && io_inside(o->path, c[i], c[k]))
				rc = fs_fail_at(err, FS_EINPUT, o->path, 0, 0,
						"%s is replaced whole, and %s '%s' is "
						"inside it; give %s a directory of its own",
						o->opt, x->opt, x->path, o->opt);
			if (rc) {
				free(c);
				return rc;
			}
		}
	}
	free(c);
	return FS_OK;
}

/*
 * Where a single file goes, decided from what is at path now (lstat,
 * then stat through a link). Only a regular file, or nothing, is
 * replaced by a rename; a character device (/dev/null, a tty) or a FIFO
 * is what a user passing one means to write into, so it is written in
 * place; a symbolic link to a regular file has its target replaced (the
 * link stays a link), one to a device or FIFO is written through. Block
 * devices, sockets, directories and dangling links are refused: a rename
 * would put a regular file where the system keeps something else.
 * dest gets the rename's destination (path, or the link's resolved
 * target). FS_EINPUT naming path otherwise.
 */
enum file_how { FILE_RENAME, FILE_IN_PLACE };

static enum fs_rc file_target(const char *path, enum file_how *how, char *dest,
			      size_t len, struct fs_err *err)
{
	char real[PATH_MAX];
	struct stat st;
	const char *what;

	if (!*path)
		return fs_fail(err, FS_EINPUT, "empty output file name");
	*how = FILE_RENAME;
	if (path_fmt(dest, len, "%s", path))
		return fs_fail_at(err, FS_EINPUT, path, 0, 0, "path too long");
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return FS_OK;
		return fs_fail_at(err, FS_EINPUT, path, 0, 0, "cannot inspect: %s",
				  strerror(errno));
	}
	if (S_ISLNK(st.st_mode)) {
		if (stat(path, &st) != 0)
			return fs_fail_at(err, FS_EINPUT, path, 0, 0,
					  "is a symbolic link to nothing (%s); "
					  "name the file itself", strerror(errno));
		if (S_ISREG(st.st_mode)) {
			if (!realpath(path, real) || path_fmt(dest, len, "%s", real))
				return fs_fail_at(err, FS_EINPUT, path, 0, 0,
						  "cannot resolve the link: %s",
						  strerror(errno));
			return FS_OK;
		}
	}
	if (S_ISREG(st.st_mode))
		return FS_OK;
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		*how = FILE_IN_PLACE;
		return FS_OK;
	}
	what = S_ISDIR(st.st_mode) ? "a directory" :
	       S_ISBLK(st.st_mode) ? "a block device" :
	       S_ISSOCK(st.st_mode) ? "a socket" : "not a regular file";
	if (S_ISDIR(st.st_mode))
		return fs_fail_at(err, FS_EINPUT, path, 0, 0, "is a directory");
	return fs_fail_at(err, FS_EINPUT, path, 0, 0,
			  "is %s; fragsim writes a regular file (replaced whole), "
			  "a character device or a FIFO (written in place)", what);
}

/* Close and unlink tmp after a failure (an in-place file has none);
 * then a signal caught meanwhile ends the process. */
static void file_discard(struct outdir_file *f)
{
	if (f->fp)
		fclose(f->fp);
	f->fp = NULL;
	if (f->tmp[0])
		unlink(f->tmp);
	f->tmp[0] = '\0';
	disarm(&f->sig);
}

enum fs_rc outdir_file_check(const char *path, struct fs_err *err)
{
	char tmp[OUTDIR_PATH_MAX], dest[OUTDIR_PATH_MAX];
	enum file_how how;
	enum fs_rc rc = file_target(path, &how, dest, sizeof(dest), err);
	int fd;

	if (rc)
		return rc;
	if (how == FILE_IN_PLACE) {
		/* Not opened: a FIFO's reader would see the end of the data. */
		if (access(path, W_OK) != 0)
			return fs_fail_at(err, FS_EINPUT, path, 0, 0,
					  "cannot be written: %s", strerror(errno));
		return FS_OK;
	}
	if (path_fmt(tmp, sizeof(tmp), "%s.tmp.%ld", dest, (long)getpid()))
		return fs_fail_at(err, FS_EINPUT, path, 0, 0, "path too long");
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0)
		return fs_fail_at(err, FS_EINPUT, path, 0, 0, "cannot be written: %s",
				  strerror(errno));
	close(fd);
	unlink(tmp);
	return FS_OK;
}

/* Written in place: opened as it is (a FIFO waits for its reader, as a
 * shell's redirection does), never created, and checked once open to
 * be the device or FIFO that was there. */
static enum fs_rc file_open_in_place(struct outdir_file *f, struct fs_err *err)
{
	struct stat st;
	int fd = open(f->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return fs_fail_at(err, FS_EINPUT, f->path, 0, 0,
				  "cannot be written: %s", strerror(errno));
	if (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
		close(fd);
		return fs_fail_at(err, FS_EINPUT, f->path, 0, 0,
				  "changed while it was opened; left as it is");
	}
	f->fp = fdopen(fd, "wb");
	if (!f->fp) {
		close(fd);
		return fs_fail_at(err, FS_EINTERNAL, f->path, 0, 0, "cannot open: %s",
				  strerror(errno));
	}
	return FS_OK;
}

enum fs_rc outdir_file_open(struct outdir_file *f, const char *path,
			    struct fs_err *err)
{
	enum file_how how;
	enum fs_rc rc;

	f->fp = NULL;
	f->tmp[0] = '\0';
	f->in_place = 0;
	memset(&f->sig, 0, sizeof(f->sig));
	if (path_fmt(f->path, sizeof(f->path), "%s", path))
		return fs_fail_at(err, FS_EINPUT, path, 0, 0, "path too long");
	rc = file_target(path, &how, f->dest, sizeof(f->dest), err);
	if (rc)
		return rc;
	if (how == FILE_IN_PLACE) {
		f->in_place = 1;
		return file_open_in_place(f, err);
	}
	if (path_fmt(f->tmp, sizeof(f->tmp), "%s.tmp.%ld", f->dest,
		     (long)getpid())) {
		f->tmp[0] = '\0';
		return fs_fail_at(err, FS_EINPUT, path, 0, 0, "path too long");
	}
	/* A signal caught before this file (between two files of an open
	 * directory): nothing more is written; the caller's abort raises it. */
	if (outdir_caught)
		return fs_fail_at(err, FS_EINTERNAL, path, 0, 0,
				  "interrupted by signal %d", (int)outdir_caught);
	/* Armed before the temporary exists: a ^C from here on removes it
	 * (the next write or the commit fails, the discard unlinks it and
	 * raises the signal again), as outdir_begin does for a directory. */
	arm(&f->sig);
	f->fp = fopen(f->tmp, "wb");
	if (!f->fp) {
		rc = fs_fail_at(err, FS_EINTERNAL, path, 0, 0,
				"cannot create '%s': %s", f->tmp, strerror(errno));
		f->tmp[0] = '\0';
		disarm(&f->sig);
		return rc;
	}
	return FS_OK;
}

enum fs_rc outdir_file_write(struct outdir_file *f, const void *data,
			     size_t len, struct fs_err *err)
{
	const char *p = data;

	if (!f->fp)
		return fs_fail_at(err, FS_EINTERNAL, f->path, 0, 0,
				  "write after the file was closed");
	/* In chunks, so a ^C during a gigabyte tensor is seen promptly. */
	while (len) {
		size_t n = len < OUTDIR_WRITE_CHUNK ? len : OUTDIR_WRITE_CHUNK;
		enum fs_rc rc;

		if (outdir_caught) {
			rc = fs_fail_at(err, FS_EINTERNAL, f->path, 0, 0,
					"interrupted by signal %d", (int)outdir_caught);
		} else if (fwrite(p, 1, n, f->fp) != n) {
			rc = fs_fail_at(err, FS_EINTERNAL, f->path, 0, 0,
					"write failed: %s", strerror(errno));
		} else {
			p += n;
			len -= n;
			continue;
		}
		file_discard(f);
		return rc;
	}
	return FS_OK;
}

/* Before the rename: dest must still be a regular file or absent, so
 * that nothing put there meanwhile (a device, a FIFO, a directory, a
 * link) is replaced. */
static enum fs_rc file_still_replaceable(const struct outdir_file *f,
					 struct fs_err *err)
{
	struct stat st;

	if (lstat(f->dest, &st) != 0 ? errno == ENOENT : S_ISREG(st.st_mode))
		return FS_OK;
	return fs_fail_at(err, FS_EINPUT, f->path, 0, 0,
			  "is no longer a regular file (replaced while we worked); "
			  "left as it is");
}

enum fs_rc outdir_file_commit(struct outdir_file *f, struct fs_err *err)
{
	char dir[OUTDIR_PATH_MAX];
	enum fs_rc rc;
	int e = 0;

	if (!f->fp)
		return fs_fail_at(err, FS_EINTERNAL, f->path, 0, 0,
				  "commit after the file was closed");
	/* stdio buffers: the disk-full error may only surface here, so
	 * flush, fsync and close are checked, each keeping the first errno.
	 * fsync before the rename: the name must never point at data that
	 * is not on disk yet. A FIFO or a device has no fsync (EINVAL). */
	if (fflush(f->fp) != 0)
		e = errno;
	else if (ferror(f->fp))
		e = EIO;
	else if (fsync(fileno(f->fp)) != 0 && errno != EINVAL && errno != ENOTSUP)
		e = errno;
	if (fclose(f->fp) != 0 && !e)
		e = errno;
	f->fp = NULL;
	if (e) {
		rc = fs_fail_at(err, FS_EINTERNAL, f->path, 0, 0,
				"write failed: %s", strerror(e));
		file_discard(f);
		return rc;
	}
	if (f->in_place)
		return FS_OK;
	crash_at(getenv("FRAGSIM_OUTDIR_CRASH"), "file-written");
	if (outdir_caught) {
		rc = fs_fail_at(err, FS_EINTERNAL, f->path, 0, 0,
				"interrupted by signal %d", (int)outdir_caught);
		file_discard(f);
		return rc;
	}
	if ((rc = file_still_replaceable(f, err))) {
		file_discard(f);
		return rc;
	}
	if (rename(f->tmp, f->dest) != 0) {
		rc = fs_fail_at(err, FS_EINTERNAL, f->path, 0, 0,
				"cannot rename '%s' into place: %s", f->tmp,
				strerror(errno));
		file_discard(f);
		return rc;
	}
	f->tmp[0] = '\0';
	disarm(&f->sig);	/* the file is whole: a signal may end us now */
	parent_of(f->dest, dir, sizeof(dir));
	if (sync_path(dir, 1) != 0)
		return fs_fail_at(err, FS_EINTERNAL, f->path, 0, 0,
				  "written, but syncing '%s' failed: %s", dir,
				  strerror(errno));
	return FS_OK;
}

void outdir_file_abort(struct outdir_file *f)
{
	if (f->fp)
		file_discard(f);
}
