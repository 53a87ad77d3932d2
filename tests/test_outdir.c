/*
 * test_outdir.c - lib/outdir.c: a directory appears whole on commit,
 * not at all on abort; a previous fragsim output (manifest.json) is
 * replaced; anything else is refused and left exactly as it was; the
 * single-file helpers leave nothing behind on failure.
 *
 * Each test works in its own scratch directory (testutil.h's fixture).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sim/common/fs.h"
#include "../lib/outdir.h"
#include "testutil.h"

/* A manifest.json as fragsim writes it: the mark, then anything. */
#define MARKED(x) "{\"tool\": \"fragsim\", \"x\": \"" x "\"}"

/* t->path: dir/out, the final directory most tests use */
static int tmp_setup(void **state)
{
	return tu_scratch_setup(state, "outdir", "out");
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Names in dir (not . and ..), sorted, joined by spaces. */
static const char *listing(const char *dir, char *buf, size_t len)
{
	char names[16][256];
	struct dirent *de;
	DIR *d = opendir(dir);
	size_t n = 0, used = 0;

	buf[0] = '\0';
	if (!d)
		return "(absent)";
	while ((de = readdir(d)) != NULL && n < 16)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			snprintf(names[n++], sizeof(names[0]), "%s", de->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_name);
	for (size_t i = 0; i < n; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 i ? " " : "", names[i]);
	return buf;
}

static void put_file(const char *path, const char *text)
{
	assert_int_equal(tu_put(path, text), 0);
}

static void put_in(const struct outdir *d, const char *name, const char *text)
{
	char p[OUTDIR_PATH_MAX];

	assert_int_equal(outdir_path(d, name, p, sizeof(p), NULL), FS_OK);
	put_file(p, text);
}

static void expect_text(const char *path, const char *want)
{
	char buf[256] = { 0 };
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_true(fread(buf, 1, sizeof(buf) - 1, f) > 0);
	fclose(f);
	assert_string_equal(buf, want);
}

static void test_commit_new(void **state)
{
	struct tu_scratch *t = *state;
	struct fs_err err;
	struct outdir d;
	char buf[256], p[300];

	assert_int_equal(outdir_begin(&d, t->path, &err), FS_OK);
	assert_int_equal(d.open, 1);
	put_in(&d, "q.npy", "q");
	put_in(&d, "manifest.json", "{}");
	/* Until commit the final name does not exist. */
	assert_string_equal(listing(t->path, buf, sizeof(buf)), "(absent)");
	assert_int_equal(outdir_commit(&d, &err), FS_OK);
	assert_int_equal(d.open, 0);
	assert_string_equal(listing(t->path, buf, sizeof(buf)), "manifest.json q.npy");
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");
	snprintf(p, sizeof(p), "%s/q.npy", t->path);
	expect_text(p, "q");
}

static void test_abort(void **state)
{
	struct tu_scratch *t = *state;
	char buf[256], p[OUTDIR_PATH_MAX];
	struct outdir d;

	assert_int_equal(outdir_begin(&d, t->path, NULL), FS_OK);
	put_in(&d, "a.npy", "a");
	/* A nested directory and a half-written temp file go too. */
	assert_int_equal(outdir_path(&d, "sub", p, sizeof(p), NULL), FS_OK);
	assert_int_equal(mkdir(p, 0777), 0);
	strcat(p, "/b.npy.tmp.1");
	put_file(p, "b");
	outdir_abort(&d);
	assert_int_equal(d.open, 0);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "");
	outdir_abort(&d);	/* twice is a no-op */
}

static void test_replace_previous_output(void **state)
{
	struct tu_scratch *t = *state;
	char buf[256], p[300];
	struct fs_err err;
	struct outdir d;

	assert_int_equal(mkdir(t->path, 0777), 0);
	snprintf(p, sizeof(p), "%s/manifest.json", t->path);
	put_file(p, "{\"tool\": \"fragsim\", \"files\": [{\"name\": \"stale.npy\"}]}");
	snprintf(p, sizeof(p), "%s/stale.npy", t->path);
	put_file(p, "stale");

	assert_int_equal(outdir_begin(&d, t->path, &err), FS_OK);
	put_in(&d, "manifest.json", MARKED("new"));
	assert_int_equal(outdir_commit(&d, &err), FS_OK);
	assert_string_equal(listing(t->path, buf, sizeof(buf)), "manifest.json");
	snprintf(p, sizeof(p), "%s/manifest.json", t->path);
	expect_text(p, MARKED("new"));
	/* Neither the temp dir nor the old copy is left beside it. */
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");
}

static void test_empty_dir_is_taken(void **state)
{
	struct tu_scratch *t = *state;
	struct outdir d;
	char buf[256];

	assert_int_equal(mkdir(t->path, 0777), 0);
	assert_int_equal(outdir_begin(&d, t->path, NULL), FS_OK);
	put_in(&d, "x.npy", "x");
	assert_int_equal(outdir_commit(&d, NULL), FS_OK);
	assert_string_equal(listing(t->path, buf, sizeof(buf)), "x.npy");
}

/* A directory of the user's is never replaced, at begin or at commit. */
static void test_refuse_foreign_dir(void **state)
{
	struct tu_scratch *t = *state;
	char buf[256], p[300];
	struct fs_err err;
	struct outdir d;

	assert_int_equal(mkdir(t->path, 0777), 0);
	snprintf(p, sizeof(p), "%s/notes.txt", t->path);
	put_file(p, "mine");
	assert_int_equal(outdir_begin(&d, t->path, &err), FS_EINPUT);
	assert_string_equal(err.file, t->path);
	assert_string_equal(err.msg, "exists and is not a fragsim output (no "
			    "manifest.json with \"tool\": \"fragsim\"); "
			    "refusing to replace it");
	assert_int_equal(d.open, 0);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");

	/* It appears while we work: commit refuses and cleans up. */
	assert_int_equal(unlink(p), 0);
	assert_int_equal(rmdir(t->path), 0);
	assert_int_equal(outdir_begin(&d, t->path, &err), FS_OK);
	put_in(&d, "manifest.json", "{}");
	assert_int_equal(mkdir(t->path, 0777), 0);
	put_file(p, "mine");
	assert_int_equal(outdir_commit(&d, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "refusing to replace it"));
	assert_int_equal(d.open, 0);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");
	assert_string_equal(listing(t->path, buf, sizeof(buf)), "notes.txt");
	expect_text(p, "mine");
}

static void test_refuse_file_and_symlink(void **state)
{
	struct tu_scratch *t = *state;
	struct fs_err err;
	struct outdir d;
	char link[200];

	put_file(t->path, "a file");
	assert_int_equal(outdir_begin(&d, t->path, &err), FS_EINPUT);
	assert_string_equal(err.msg, "exists and is not a directory");
	expect_text(t->path, "a file");

	snprintf(link, sizeof(link), "%s/link", t->dir);
	assert_int_equal(symlink(t->dir, link), 0);
	assert_int_equal(outdir_begin(&d, link, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "symbolic link"));
}

static void test_bad_final_names(void **state)
{
	struct tu_scratch *t = *state;
	char *longp = malloc(OUTDIR_PATH_MAX + 10);
	char slash[200], missing[200], buf[256];
	struct fs_err err;
	struct outdir d;

	assert_int_equal(outdir_begin(&d, "", &err), FS_EINPUT);
	assert_string_equal(err.msg, "empty output directory name");
	assert_int_equal(outdir_begin(&d, ".", &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "a name of its own"));
	assert_int_equal(outdir_begin(&d, "/", &err), FS_EINPUT);
	assert_int_equal(outdir_begin(&d, "a/..//", &err), FS_EINPUT);

	assert_non_null(longp);
	memset(longp, 'a', OUTDIR_PATH_MAX + 9);
	longp[OUTDIR_PATH_MAX + 9] = '\0';
	assert_int_equal(outdir_begin(&d, longp, &err), FS_EINPUT);
	assert_string_equal(err.msg, "path too long");
	/* Fits, but the ".<name>.fragsim-tmp.<pid>" sibling would not. */
	longp[OUTDIR_PATH_MAX - 3] = '\0';
	assert_int_equal(outdir_begin(&d, longp, &err), FS_EINPUT);
	assert_string_equal(err.msg, "path too long");
	free(longp);

	/* Missing parents are made (mkdir -p); a file among them is not a
	 * directory, and is named. */
	snprintf(missing, sizeof(missing), "%s/no/such/out", t->dir);
	assert_int_equal(outdir_begin(&d, missing, &err), FS_OK);
	outdir_abort(&d);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "no");
	snprintf(missing, sizeof(missing), "%s/no/such", t->dir);
	assert_string_equal(listing(missing, buf, sizeof(buf)), "");
	snprintf(missing, sizeof(missing), "%s/f", t->dir);
	put_file(missing, "a file");
	strcat(missing, "/sub/out");
	assert_int_equal(outdir_begin(&d, missing, &err), FS_EINPUT);
	assert_string_equal(err.msg, "is not a directory");
	missing[strlen(missing) - 8] = '\0';
	assert_string_equal(err.file, missing);
	unlink(missing);
	snprintf(missing, sizeof(missing), "%s/no", t->dir);
	assert_int_equal(tu_rmtree(missing), 0);

	/* Trailing slashes name the same directory. */
	snprintf(slash, sizeof(slash), "%s//", t->path);
	assert_int_equal(outdir_begin(&d, slash, &err), FS_OK);
	assert_string_equal(d.final, t->path);
	assert_int_equal(outdir_commit(&d, &err), FS_OK);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");
}

static void test_stale_temp_dir(void **state)
{
	struct tu_scratch *t = *state;
	char stale[200];
	struct fs_err err;
	struct outdir d;

	/* Our own pid: a live process, so not swept, and not reused. */
	snprintf(stale, sizeof(stale), "%s/.out.fragsim-tmp.%ld", t->dir,
		 (long)getpid());
	assert_int_equal(mkdir(stale, 0777), 0);
	assert_int_equal(outdir_begin(&d, t->path, &err), FS_EINPUT);
	assert_string_equal(err.file, stale);
	assert_non_null(strstr(err.msg, "already exists"));
	assert_int_equal(rmdir(stale), 0);	/* left alone, not deleted */
}

static void test_path_names(void **state)
{
	struct tu_scratch *t = *state;
	char p[OUTDIR_PATH_MAX], small[8];
	struct fs_err err;
	struct outdir d;

	memset(&d, 0, sizeof(d));
	assert_int_equal(outdir_path(&d, "a", p, sizeof(p), &err), FS_EINTERNAL);
	assert_int_equal(outdir_commit(&d, &err), FS_EINTERNAL);
	assert_int_equal(outdir_begin(&d, t->path, NULL), FS_OK);
	assert_int_equal(outdir_path(&d, "q.npy", p, sizeof(p), &err), FS_OK);
	assert_non_null(strstr(p, "/.out.fragsim-tmp."));
	assert_non_null(strstr(p, "/q.npy"));
	assert_int_equal(outdir_path(&d, "a/b", p, sizeof(p), &err), FS_EINPUT);
	assert_string_equal(err.msg, "'a/b' is not a plain file name");
	assert_int_equal(outdir_path(&d, "..", p, sizeof(p), &err), FS_EINPUT);
	assert_int_equal(outdir_path(&d, "", p, sizeof(p), &err), FS_EINPUT);
	assert_int_equal(outdir_path(&d, "q.npy", small, sizeof(small), &err),
			 FS_EINPUT);
	assert_non_null(strstr(err.msg, "path too long"));
	outdir_abort(&d);
}

static void test_file_commit_and_abort(void **state)
{
	struct tu_scratch *t = *state;
	struct outdir_file f;
	struct fs_err err;
	char p[200], buf[256];

	snprintf(p, sizeof(p), "%s/a.txt", t->dir);
	assert_int_equal(outdir_file_open(&f, p, &err), FS_OK);
	assert_int_equal(outdir_file_write(&f, "hello", 5, &err), FS_OK);
	assert_int_equal(outdir_file_write(&f, NULL, 0, &err), FS_OK);
	assert_int_equal(access(p, F_OK), -1);	/* not there until commit */
	assert_int_equal(outdir_file_commit(&f, &err), FS_OK);
	expect_text(p, "hello");
	/* Once closed, more calls are errors, not crashes. */
	assert_int_equal(outdir_file_write(&f, "x", 1, &err), FS_EINTERNAL);
	assert_int_equal(outdir_file_commit(&f, &err), FS_EINTERNAL);

	/* Replacing keeps the old content until the rename. */
	assert_int_equal(outdir_file_open(&f, p, &err), FS_OK);
	assert_int_equal(outdir_file_write(&f, "bye", 3, &err), FS_OK);
	expect_text(p, "hello");
	outdir_file_abort(&f);
	outdir_file_abort(&f);
	expect_text(p, "hello");
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "a.txt");

	/* A directory is refused at open: nothing is created. */
	assert_int_equal(outdir_file_open(&f, t->dir, &err), FS_EINPUT);
	assert_string_equal(err.file, t->dir);
	assert_string_equal(err.msg, "is a directory");
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "a.txt");
	/* A directory put there after open: commit's rename fails, and the
	 * temporary goes. */
	snprintf(p, sizeof(p), "%s/later", t->dir);
	assert_int_equal(outdir_file_open(&f, p, &err), FS_OK);
	assert_int_equal(mkdir(p, 0777), 0);
	assert_int_equal(outdir_file_commit(&f, &err), FS_EINPUT);
	assert_string_equal(err.file, p);
	assert_non_null(strstr(err.msg, "is no longer a regular file"));
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "a.txt later");
}

/* /dev/full as the temporary (via a symlink named like it): the
 * failure surfaces at write or at the flush inside commit. */
static void test_file_disk_full(void **state)
{
	struct tu_scratch *t = *state;
	char p[200], tmpname[240];
	struct outdir_file f;
	struct fs_err err;
	enum fs_rc rc;

	if (access("/dev/full", W_OK) != 0)
		skip();
	snprintf(p, sizeof(p), "%s/full.bin", t->dir);
	snprintf(tmpname, sizeof(tmpname), "%s.tmp.%ld", p, (long)getpid());
	assert_int_equal(symlink("/dev/full", tmpname), 0);
	assert_int_equal(outdir_file_open(&f, p, &err), FS_OK);
	rc = outdir_file_write(&f, "data", 4, &err);
	if (rc == FS_OK)
		rc = outdir_file_commit(&f, &err);
	assert_int_equal(rc, FS_EINTERNAL);
	assert_string_equal(err.file, p);
	assert_non_null(strstr(err.msg, "write failed: No space left on device"));
	assert_int_equal(access(p, F_OK), -1);
	assert_int_equal(access(tmpname, F_OK), -1);	/* link removed */
}

/*
 * Point 10: only a manifest.json fragsim wrote makes a directory
 * replaceable. Each of these holds one that is not (parsed, the mark is
 * not a top-level JSON string member "tool": "fragsim"): refused before
 * anything is created, by check and begin alike, and left untouched.
 */
static void test_refuse_unmarked_manifests(void **state)
{
	static const char *const foreign[] = {
		"{}\n",
		"{\"tool\": \"other\"}\n",
		"{\"tool\": \"fragsimx\"}\n",
		"{\"tool\": [\"fragsim\"]}\n",
		"{\"nested\": {\"tool\": \"fragsim\"}}\n",
		"{\"note\": \"\\\"tool\\\": \\\"fragsim\\\"\"}\n",	/* text only */
		"[\"tool\", \"fragsim\"]\n",
		"tool: fragsim\n",			/* YAML, not JSON */
		"{\"tool\": \"fragsim\"\n",		/* truncated */
		"\"tool\": \"fragsim\"\n",
		"",
	};
	struct tu_scratch *t = *state;
	char buf[256], p[300];
	struct fs_err err;
	struct outdir d;

	assert_int_equal(mkdir(t->path, 0777), 0);
	snprintf(p, sizeof(p), "%s/manifest.json", t->path);
	for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++) {
		put_file(p, foreign[i]);
		assert_int_equal(outdir_check(t->path, &err), FS_EINPUT);
		assert_non_null(strstr(err.msg, "is not a fragsim output"));
		assert_int_equal(outdir_begin(&d, t->path, &err), FS_EINPUT);
		assert_string_equal(err.file, t->path);
		assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");
		assert_string_equal(listing(t->path, buf, sizeof(buf)), "manifest.json");
		if (foreign[i][0])
			expect_text(p, foreign[i]);
	}
	/* The mark, among other members and pretty-printed, is enough. */
	put_file(p, "{\n  \"case\": \"x\",\n  \"tool\": \"fragsim\",\n  \"files\": []\n}\n");
	assert_int_equal(outdir_check(t->path, &err), FS_OK);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");
}

/*
 * Point 12: outdir_check does all of begin's checks and leaves nothing
 * but the parents it made: no temp directory, and the final name absent.
 */
static void test_check_first(void **state)
{
	struct tu_scratch *t = *state;
	char deep[200], buf[256], p[300];
	struct fs_err err;

	snprintf(deep, sizeof(deep), "%s/a/b/out", t->dir);
	assert_int_equal(outdir_check(deep, &err), FS_OK);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "a");
	snprintf(p, sizeof(p), "%s/a/b", t->dir);
	assert_string_equal(listing(p, buf, sizeof(buf)), "");

	put_file(t->path, "a file");
	assert_int_equal(outdir_check(t->path, &err), FS_EINPUT);
	assert_string_equal(err.msg, "exists and is not a directory");
	snprintf(p, sizeof(p), "%s/out/g", t->dir);
	assert_int_equal(outdir_check(p, &err), FS_EINPUT);
	assert_string_equal(err.msg, "is not a directory");
	assert_string_equal(err.file, t->path);
	assert_int_equal(unlink(t->path), 0);

	/* A parent we may not write to (root may write anywhere). */
	if (geteuid() != 0) {
		snprintf(p, sizeof(p), "%s/ro", t->dir);
		assert_int_equal(mkdir(p, 0555), 0);
		strcat(p, "/out");
		assert_int_equal(outdir_check(p, &err), FS_EINPUT);
		assert_non_null(strstr(err.msg, "cannot create a directory here"));
	}
}

/* A pid that is certainly not running: a child we have reaped. */
static long dead_pid(void)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return (long)pid;
}

static void make_tree(const char *dir, const char *file)
{
	char p[400];

	assert_int_equal(mkdir(dir, 0777), 0);
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	put_file(p, "x");
}

/*
 * The next run sweeps fragsim's own temp directories of dead processes
 * for the same output path, and nothing else: its own by the mark a
 * temp directory is made with, or by a fragsim manifest, never by the
 * name alone (a user's .out.fragsim-tmp.<dead pid> was deleted).
 */
static void test_sweep_stale(void **state)
{
	struct tu_scratch *t = *state;
	long dead = dead_pid(), dead2 = dead_pid();
	char p[300], q[400], buf[1024], want[1024];
	struct fs_err err;

	snprintf(p, sizeof(p), "%s/.out.fragsim-tmp.%ld", t->dir, dead);
	make_tree(p, "q.npy.tmp.1");				/* swept: marked */
	snprintf(q, sizeof(q), "%s/.fragsim-writing", p);
	put_file(q, "");
	/* An -old one beside an existing out is swept, not put back. */
	snprintf(p, sizeof(p), "%s/.out.fragsim-old.%ld", t->dir, dead);
	assert_int_equal(mkdir(t->path, 0777), 0);
	make_tree(p, "a.npy");					/* swept: an output */
	snprintf(q, sizeof(q), "%s/manifest.json", p);
	put_file(q, "{\"tool\": \"fragsim\", \"files\": [{\"name\": \"a.npy\"}]}");
	/* our names of a dead pid, neither marked nor an output: a user's */
	snprintf(p, sizeof(p), "%s/.out.fragsim-tmp.%ld", t->dir, dead2);
	make_tree(p, "mine");					/* kept */
	snprintf(p, sizeof(p), "%s/.out.fragsim-old.%ld", t->dir, dead2);
	make_tree(p, "manifest.json");				/* kept: not a manifest */
	snprintf(p, sizeof(p), "%s/.out.fragsim-tmp.%ld", t->dir, (long)getppid());
	make_tree(p, "a");					/* alive: kept */
	snprintf(p, sizeof(p), "%s/.other.fragsim-tmp.%ld", t->dir, dead);
	make_tree(p, "a");					/* other output */
	snprintf(p, sizeof(p), "%s/.out.fragsim-tmp.%ldx", t->dir, dead);
	make_tree(p, "a");					/* not our name */
	snprintf(p, sizeof(p), "%s/out.tmp.%ld", t->dir, dead);
	make_tree(p, "a");					/* not our name */

	assert_int_equal(outdir_check(t->path, &err), FS_OK);
	{
		/* what is left, in listing()'s name order (the pids decide it) */
		char names[7][256];
		size_t used = 0;

		snprintf(names[0], sizeof(names[0]), ".other.fragsim-tmp.%ld", dead);
		snprintf(names[1], sizeof(names[1]), ".out.fragsim-tmp.%ld", (long)getppid());
		snprintf(names[2], sizeof(names[2]), ".out.fragsim-tmp.%ldx", dead);
		snprintf(names[3], sizeof(names[3]), "out");
		snprintf(names[4], sizeof(names[4]), "out.tmp.%ld", dead);
		snprintf(names[5], sizeof(names[5]), ".out.fragsim-tmp.%ld", dead2);
		snprintf(names[6], sizeof(names[6]), ".out.fragsim-old.%ld", dead2);
		qsort(names, 7, sizeof(names[0]), cmp_name);
		for (size_t i = 0; i < 7; i++)
			used += (size_t)snprintf(want + used, sizeof(want) - used, "%s%s",
						 i ? " " : "", names[i]);
	}
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), want);
}

/*
 * A generation g of an output: a.npy, b.npy, c.npy holding "g<g>" and a
 * marked manifest.json naming it. Written by a child, so no cmocka
 * asserts: the exit status says what failed.
 */
static const char *const gen_names = "a.npy b.npy c.npy manifest.json";
#define GEN_MANIFEST "{\"tool\": \"fragsim\", \"gen\": \"g%d\", \"files\": " \
	"[{\"name\": \"a.npy\"}, {\"name\": \"b.npy\"}, {\"name\": \"c.npy\"}]}"

static int write_gen(const char *out, int g)
{
	static const char *const files[] = { "a.npy", "b.npy", "c.npy" };
	char p[OUTDIR_PATH_MAX], text[160];
	struct outdir_file f;
	struct outdir d;

	if (outdir_begin(&d, out, NULL))
		return 10;
	for (int i = 0; i < 4; i++) {
		if (i < 3)
			snprintf(text, sizeof(text), "g%d", g);
		else
			snprintf(text, sizeof(text), GEN_MANIFEST, g);
		if (outdir_path(&d, i < 3 ? files[i] : "manifest.json", p, sizeof(p), NULL) ||
		    outdir_file_open(&f, p, NULL) ||
		    outdir_file_write(&f, text, strlen(text), NULL) ||
		    outdir_file_commit(&f, NULL)) {
			outdir_abort(&d);
			return 11;
		}
	}
	return outdir_commit(&d, NULL) ? 12 : 0;
}

/* The generation out holds, whole (every file there, all of one
 * generation); -1 when absent. A torn directory fails the test. */
static int whole_gen(const char *out)
{
	char buf[256], p[300], want[160];
	int g = -1;

	if (!strcmp(listing(out, buf, sizeof(buf)), "(absent)"))
		return -1;
	assert_string_equal(buf, gen_names);
	snprintf(p, sizeof(p), "%s/a.npy", out);
	{
		FILE *f = fopen(p, "r");

		assert_non_null(f);
		assert_int_equal(fscanf(f, "g%d", &g), 1);
		fclose(f);
	}
	snprintf(want, sizeof(want), "g%d", g);
	snprintf(p, sizeof(p), "%s/b.npy", out);
	expect_text(p, want);
	snprintf(p, sizeof(p), "%s/c.npy", out);
	expect_text(p, want);
	snprintf(want, sizeof(want), GEN_MANIFEST, g);
	snprintf(p, sizeof(p), "%s/manifest.json", out);
	expect_text(p, want);
	return g;
}

/* Run write_gen(out, g) in a child with the given test hooks; returns
 * its wait status. */
static int child_gen(const char *out, int g, const char *crash, int no_exchange)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		if (crash)
			setenv("FRAGSIM_OUTDIR_CRASH", crash, 1);
		if (no_exchange)
			setenv("FRAGSIM_OUTDIR_NO_EXCHANGE", "1", 1);
		_exit(write_gen(out, g));
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

static void expect_signal(int st, int sig)
{
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), sig);
}

/*
 * Point 11: SIGKILL at each point of a replacement. With RENAME_EXCHANGE
 * the directory is the old generation or the new one, whole, at every
 * point; the next run sweeps what the killed one left.
 */
static void test_kill_during_exchange(void **state)
{
	struct tu_scratch *t = *state;
	char buf[256];

	assert_int_equal(child_gen(t->path, 1, NULL, 0), 0);
	assert_int_equal(whole_gen(t->path), 1);

	/* Killed with the new one written and synced, before the swap. */
	expect_signal(child_gen(t->path, 2, "written", 0), SIGKILL);
	assert_int_equal(whole_gen(t->path), 1);
	assert_int_not_equal(strcmp(listing(t->dir, buf, sizeof(buf)), "out"), 0);

	/* Killed right after the swap, the old one not yet removed. */
	expect_signal(child_gen(t->path, 3, "exchanged", 0), SIGKILL);
	assert_int_equal(whole_gen(t->path), 3);

	/* The next run sweeps both leftovers, and replaces again. */
	assert_int_equal(child_gen(t->path, 4, NULL, 0), 0);
	assert_int_equal(whole_gen(t->path), 4);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");
}

/*
 * The fallback where RENAME_EXCHANGE is missing: a kill between its two
 * renames leaves no out, but the old generation whole under its -old
 * name, and the next run (check or begin) renames it back first.
 */
static void test_kill_during_fallback(void **state)
{
	struct tu_scratch *t = *state;
	char buf[256];
	struct fs_err err;

	assert_int_equal(child_gen(t->path, 1, NULL, 1), 0);
	assert_int_equal(child_gen(t->path, 2, NULL, 1), 0);
	assert_int_equal(whole_gen(t->path), 2);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");

	expect_signal(child_gen(t->path, 3, "moved-aside", 1), SIGKILL);
	assert_int_equal(whole_gen(t->path), -1);
	assert_int_equal(outdir_check(t->path, &err), FS_OK);
	assert_int_equal(whole_gen(t->path), 2);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");

	expect_signal(child_gen(t->path, 4, "published", 1), SIGKILL);
	assert_int_equal(whole_gen(t->path), 4);
	assert_int_equal(child_gen(t->path, 5, NULL, 1), 0);
	assert_int_equal(whole_gen(t->path), 5);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");
}

/*
 * No hooks: a child rewrites the output over and over and is SIGKILLed
 * at a time of our choosing; every time, what is there is one
 * generation, whole.
 */
static void test_kill_anywhere(void **state)
{
	struct tu_scratch *t = *state;
	unsigned seed = 12345;
	int last = 0;

	assert_int_equal(child_gen(t->path, 0, NULL, 0), 0);
	for (int round = 0; round < 40; round++) {
		pid_t pid = fork();
		int st, g;

		assert_true(pid >= 0);
		if (pid == 0) {
			for (int i = 1;; i++)
				if (write_gen(t->path, 1000 * (round + 1) + i))
					_exit(1);
		}
		seed = seed * 1103515245u + 12345u;
		usleep(500 + (seed >> 8) % 20000);
		assert_int_equal(kill(pid, SIGKILL), 0);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		expect_signal(st, SIGKILL);
		g = whole_gen(t->path);
		assert_true(g >= last);		/* never older, never absent */
		last = g;
	}
}

/*
 * SIGTERM / SIGINT while the temp directory exists: it is removed, the
 * previous output stays, and the process still dies by the signal.
 */
static void test_signal_removes_temp(void **state)
{
	struct tu_scratch *t = *state;
	char buf[256], p[OUTDIR_PATH_MAX];
	pid_t pid;
	int st;

	assert_int_equal(child_gen(t->path, 1, NULL, 0), 0);
	expect_signal(child_gen(t->path, 2, "written:TERM", 0), SIGTERM);
	assert_int_equal(whole_gen(t->path), 1);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");

	/* ^C in the middle of writing a file: the write fails, the abort
	 * removes the directory and raises SIGINT again. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct outdir d;
		struct outdir_file f;

		if (outdir_begin(&d, t->path, NULL) ||
		    outdir_path(&d, "a.npy", p, sizeof(p), NULL) ||
		    outdir_file_open(&f, p, NULL) ||
		    outdir_file_write(&f, "half", 4, NULL))
			_exit(10);
		kill(getpid(), SIGINT);
		if (outdir_file_write(&f, "rest", 4, NULL) == FS_OK)
			_exit(11);
		outdir_abort(&d);
		_exit(12);	/* not reached: the abort raised SIGINT */
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	expect_signal(st, SIGINT);
	assert_int_equal(whole_gen(t->path), 1);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");

	/* SIGTERM between two files, none open: the next file is refused,
	 * the abort raises it. Before, SA_RESETHAND had put SIG_DFL back, the
	 * next file's arming took itself for the outermost and cleared the
	 * signal: the run went on, published its output and exited 0. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct outdir d;
		struct outdir_file f;

		if (outdir_begin(&d, t->path, NULL) ||
		    outdir_path(&d, "a.npy", p, sizeof(p), NULL) ||
		    outdir_file_open(&f, p, NULL) ||
		    outdir_file_write(&f, "whole", 5, NULL) ||
		    outdir_file_commit(&f, NULL))
			_exit(10);
		kill(getpid(), SIGTERM);
		if (outdir_path(&d, "b.npy", p, sizeof(p), NULL) ||
		    outdir_file_open(&f, p, NULL) ||
		    outdir_file_write(&f, "next", 4, NULL) ||
		    outdir_file_commit(&f, NULL)) {
			outdir_abort(&d);
			_exit(12);	/* not reached: the abort raised SIGTERM */
		}
		_exit(outdir_commit(&d, NULL) == FS_OK ? 13 : 14);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	expect_signal(st, SIGTERM);
	assert_int_equal(whole_gen(t->path), 1);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");
}

/* Write text to path through outdir_file_* (check, open, write, commit). */
static enum fs_rc write_file(const char *path, const char *text, struct fs_err *err)
{
	struct outdir_file f;
	enum fs_rc rc = outdir_file_check(path, err);

	if (!rc)
		rc = outdir_file_open(&f, path, err);
	if (!rc)
		rc = outdir_file_write(&f, text, strlen(text), err);
	if (!rc)
		rc = outdir_file_commit(&f, err);
	return rc;
}

/* path is (lstat) a character device numbered major:minor. */
static void expect_chardev(const char *path, unsigned major_no, unsigned minor_no)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(major(st.st_rdev), major_no);
	assert_int_equal(minor(st.st_rdev), minor_no);
}

/*
 * Issue 21 point 1: a character device is written in place, never
 * renamed over. Before, the JUnit file went to null.tmp.<pid> and was
 * renamed onto the node, which became a regular file (as root, the
 * system's /dev/null did). Private nodes made with mknod in the scratch
 * directory, never the system's: null (1:3, as /dev/null) takes the
 * bytes and stays a device; full (1:7, as /dev/full) fails the write
 * (proof the bytes went into the device, not a temporary); a link to
 * the null node is written through and stays a link. A block device, a
 * socket and a dangling link are refused by check and open, and left.
 */
static void test_file_devices_written_in_place(void **state)
{
	struct tu_scratch *t = *state;
	char null_p[100], full_p[100], blk_p[100], sock_p[100], link_p[100],
	     dang_p[100], buf[256];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct outdir_file f;
	struct fs_err err;
	struct stat st;
	int fd;

	if (geteuid() != 0) {
		printf("skipped: mknod needs root, device nodes not tested\n");
		skip();
	}
	snprintf(null_p, sizeof(null_p), "%s/null", t->dir);
	snprintf(full_p, sizeof(full_p), "%s/full", t->dir);
	snprintf(blk_p, sizeof(blk_p), "%s/blk", t->dir);
	snprintf(sock_p, sizeof(sock_p), "%s/sock", t->dir);
	snprintf(link_p, sizeof(link_p), "%s/link", t->dir);
	snprintf(dang_p, sizeof(dang_p), "%s/dangling", t->dir);
	if (mknod(null_p, S_IFCHR | 0666, makedev(1, 3)) != 0) {
		printf("skipped: mknod refused (%s), device nodes not tested\n",
		       strerror(errno));
		skip();
	}
	assert_int_equal(mknod(full_p, S_IFCHR | 0666, makedev(1, 7)), 0);
	/* loop device 255: never opened, the refusal comes first */
	assert_int_equal(mknod(blk_p, S_IFBLK | 0600, makedev(7, 255)), 0);
	assert_int_equal(symlink("null", link_p), 0);
	assert_int_equal(symlink("nowhere", dang_p), 0);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_true(strlen(sock_p) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, sock_p, strlen(sock_p) + 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);

	assert_int_equal(write_file(null_p, "<testsuites/>\n", &err), FS_OK);
	expect_chardev(null_p, 1, 3);
	assert_int_equal(write_file(link_p, "through the link\n", &err), FS_OK);
	assert_int_equal(lstat(link_p, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	expect_chardev(null_p, 1, 3);

	assert_int_equal(outdir_file_open(&f, full_p, &err), FS_OK);
	assert_int_equal(outdir_file_write(&f, "x", 1, &err), FS_OK);
	assert_int_equal(outdir_file_commit(&f, &err), FS_EINTERNAL);
	assert_string_equal(err.file, full_p);
	assert_string_equal(err.msg, "write failed: No space left on device");
	expect_chardev(full_p, 1, 7);

	assert_int_equal(outdir_file_check(blk_p, &err), FS_EINPUT);
	assert_string_equal(err.file, blk_p);
	assert_string_equal(err.msg, "is a block device; fragsim writes a regular "
			    "file (replaced whole), a character device or a FIFO "
			    "(written in place)");
	assert_int_equal(outdir_file_open(&f, blk_p, &err), FS_EINPUT);
	assert_int_equal(outdir_file_check(sock_p, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "is a socket;"));
	assert_int_equal(outdir_file_open(&f, sock_p, &err), FS_EINPUT);
	assert_int_equal(outdir_file_check(dang_p, &err), FS_EINPUT);
	assert_string_equal(err.msg, "is a symbolic link to nothing (No such file "
			    "or directory); name the file itself");
	assert_int_equal(outdir_file_open(&f, dang_p, &err), FS_EINPUT);
	close(fd);

	assert_int_equal(lstat(blk_p, &st), 0);
	assert_true(S_ISBLK(st.st_mode));
	assert_int_equal(lstat(sock_p, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(lstat(dang_p, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* No temporary left by any of them. */
	assert_string_equal(listing(t->dir, buf, sizeof(buf)),
			    "blk dangling full link null sock");
}

/*
 * A FIFO is written in place, to the reader at its other end; check
 * does not open it (a reader would see the end of the data), and it is
 * still a FIFO afterwards. A link to a regular file has its target
 * replaced whole; the link stays a link.
 */
static void test_file_fifo_and_link(void **state)
{
	struct tu_scratch *t = *state;
	char fifo[200], got[200], target[200], link_p[200], buf[256];
	struct fs_err err;
	struct stat st;
	pid_t pid;
	int st_w;

	snprintf(fifo, sizeof(fifo), "%s/pipe", t->dir);
	snprintf(got, sizeof(got), "%s/got.txt", t->dir);
	assert_int_equal(mkfifo(fifo, 0666), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {	/* the reader: cat pipe > got.txt */
		char b[256];
		int in = open(fifo, O_RDONLY), out;
		ssize_t n;

		out = open(got, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		if (in < 0 || out < 0)
			_exit(1);
		while ((n = read(in, b, sizeof(b))) > 0)
			if (write(out, b, (size_t)n) != n)
				_exit(2);
		_exit(n < 0 ? 3 : 0);
	}
	assert_int_equal(write_file(fifo, "<testsuites/>\n", &err), FS_OK);
	/* Renamed over, the FIFO would never see a writer: end the reader. */
	if (lstat(fifo, &st) != 0 || !S_ISFIFO(st.st_mode))
		kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st_w, 0), pid);
	assert_true(WIFEXITED(st_w));
	assert_int_equal(WEXITSTATUS(st_w), 0);
	expect_text(got, "<testsuites/>\n");
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));

	snprintf(target, sizeof(target), "%s/target.xml", t->dir);
	snprintf(link_p, sizeof(link_p), "%s/link.xml", t->dir);
	put_file(target, "old");
	assert_int_equal(symlink("target.xml", link_p), 0);
	assert_int_equal(write_file(link_p, "new", &err), FS_OK);
	assert_int_equal(lstat(link_p, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	expect_text(target, "new");
	assert_string_equal(listing(t->dir, buf, sizeof(buf)),
			    "got.txt link.xml pipe target.xml");
}

/*
 * The same through the command line, as the issue saw it as root:
 * `check --junit` and `run --report` on private nodes (never the
 * system's /dev/null): null takes the JUnit XML and stays a device,
 * full fails the report (exit 3, "No space left on device") and stays
 * a device; before, both became regular files.
 */
static void test_cli_outputs_on_devices(void **state)
{
	struct tu_scratch *t = *state;
	char null_p[100], full_p[100], buf[256];
	struct run_result r;

	if (geteuid() != 0) {
		printf("skipped: mknod needs root, device nodes not tested\n");
		skip();
	}
	snprintf(null_p, sizeof(null_p), "%s/null", t->dir);
	snprintf(full_p, sizeof(full_p), "%s/full", t->dir);
	if (mknod(null_p, S_IFCHR | 0666, makedev(1, 3)) != 0) {
		printf("skipped: mknod refused (%s), device nodes not tested\n",
		       strerror(errno));
		skip();
	}
	assert_int_equal(mknod(full_p, S_IFCHR | 0666, makedev(1, 7)), 0);
	r = tu_run("check cases/edge/one-token.yaml --junit %s", null_p);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	tu_free(&r);
	expect_chardev(null_p, 1, 3);
	r = tu_run("run cases/edge/one-token.yaml --report %s", full_p);
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.err, ": write failed: No space left on device"));
	tu_free(&r);
	expect_chardev(full_p, 1, 7);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "full null");
}

/*
 * Issue 21 point 13, the unit: a single file (no output directory
 * open) catches SIGINT as outdir_begin does. ^C between two writes: the
 * next write fails, the temporary is removed, the process dies by
 * SIGINT; an older file at the path stays. Before, SIGINT killed at once
 * and path.tmp.<pid> stayed.
 */
static void test_file_signal_removes_temp(void **state)
{
	struct tu_scratch *t = *state;
	char p[200], buf[256];
	pid_t pid;
	int st;

	snprintf(p, sizeof(p), "%s/j.xml", t->dir);
	put_file(p, "old");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct outdir_file f;

		if (outdir_file_open(&f, p, NULL) ||
		    outdir_file_write(&f, "half", 4, NULL))
			_exit(10);
		kill(getpid(), SIGINT);
		if (outdir_file_write(&f, "rest", 4, NULL) == FS_OK)
			_exit(11);
		_exit(12);	/* not reached: the failed write raised SIGINT */
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	expect_signal(st, SIGINT);
	expect_text(p, "old");
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "j.xml");
}

/*
 * Issue 21 point 2: a marked directory is replaced only when it holds
 * nothing but what its manifest lists (and fragsim's own temporary
 * names). Before, the mark alone was enough: a README a user added to a
 * golden, the case file being run, a .git or a src/ beside a one-line
 * manifest were deleted with the rest. The first foreign name, in strcmp
 * order, is named; check and begin refuse, nothing is touched.
 */
static void test_refuse_foreign_files_in_marked_dir(void **state)
{
	static const char *const listed =
		"{\"tool\": \"fragsim\", \"files\": [{\"name\": \"q.npy\"}, "
		"{\"name\": \"out.npy\"}]}";
	struct tu_scratch *t = *state;
	char p[300], want[400], buf[256];
	struct fs_err err;
	struct outdir d;

	assert_int_equal(mkdir(t->path, 0777), 0);
	snprintf(p, sizeof(p), "%s/manifest.json", t->path);
	put_file(p, listed);
	snprintf(p, sizeof(p), "%s/q.npy", t->path);
	put_file(p, "q");
	/* fragsim's own temporary of a listed name is its own too */
	snprintf(p, sizeof(p), "%s/out.npy.tmp.123", t->path);
	put_file(p, "half");
	assert_int_equal(outdir_check(t->path, &err), FS_OK);

	snprintf(p, sizeof(p), "%s/README.md", t->path);
	put_file(p, "my notes");
	snprintf(p, sizeof(p), "%s/my_case.yaml", t->path);
	put_file(p, "name: mine");
	snprintf(want, sizeof(want), "a fragsim output, but it holds 'README.md', which "
		 "its manifest.json does not list; refusing to replace it (move that "
		 "out, or give another directory)");
	assert_int_equal(outdir_check(t->path, &err), FS_EINPUT);
	assert_string_equal(err.file, t->path);
	assert_string_equal(err.msg, want);
	assert_int_equal(outdir_begin(&d, t->path, &err), FS_EINPUT);
	assert_string_equal(err.msg, want);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");
	assert_string_equal(listing(t->path, buf, sizeof(buf)),
			    "README.md manifest.json my_case.yaml out.npy.tmp.123 q.npy");

	/* a .git directory sorts first */
	snprintf(p, sizeof(p), "%s/.git", t->path);
	assert_int_equal(mkdir(p, 0777), 0);
	assert_int_equal(outdir_check(t->path, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "holds '.git',"));
	assert_int_equal(tu_rmtree(t->path), 0);

	/* src/ beside a one-line manifest that lists nothing */
	assert_int_equal(mkdir(t->path, 0777), 0);
	snprintf(p, sizeof(p), "%s/manifest.json", t->path);
	put_file(p, "{\"tool\": \"fragsim\"}\n");
	snprintf(p, sizeof(p), "%s/src", t->path);
	assert_int_equal(mkdir(p, 0777), 0);
	strcat(p, "/main.c");
	put_file(p, "int main;");
	assert_int_equal(outdir_check(t->path, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "holds 'src',"));
	assert_int_equal(tu_rmtree(t->path), 0);

	/* a listed name that is a directory, and a temporary name that is
	 * not fragsim's, are foreign too */
	assert_int_equal(mkdir(t->path, 0777), 0);
	snprintf(p, sizeof(p), "%s/manifest.json", t->path);
	put_file(p, listed);
	snprintf(p, sizeof(p), "%s/q.npy", t->path);
	assert_int_equal(mkdir(p, 0777), 0);
	assert_int_equal(outdir_check(t->path, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "holds 'q.npy',"));
	assert_int_equal(rmdir(p), 0);
	snprintf(p, sizeof(p), "%s/q.npy.tmp.12x", t->path);
	put_file(p, "x");
	assert_int_equal(outdir_check(t->path, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "holds 'q.npy.tmp.12x',"));
	assert_int_equal(unlink(p), 0);
	assert_int_equal(outdir_check(t->path, &err), FS_OK);

	/* A file put there while we work: commit refuses, leaves it. */
	assert_int_equal(outdir_begin(&d, t->path, &err), FS_OK);
	put_in(&d, "manifest.json", listed);
	snprintf(p, sizeof(p), "%s/late.txt", t->path);
	put_file(p, "late");
	assert_int_equal(outdir_commit(&d, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "holds 'late.txt',"));
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");
	expect_text(p, "late");
}

/*
 * Re-running over fragsim's own output still works for every kind of
 * golden (npy; safetensors, whose manifest lists tensors that live in
 * golden.safetensors; BF16), one replacing another; a README added to
 * the golden, and the case file being run put in it (`run
 * g/my_case.yaml --out g`, caught first by outdir_io_check, point 11),
 * are refused before the run, exit 2, the golden untouched.
 */
static void test_cli_rerun_over_own_goldens(void **state)
{
	static const char *const fmts[] = {
		"", "--format safetensors", "--format safetensors --bf16", "",
		"--format safetensors",
	};
	struct tu_scratch *t = *state;
	char buf[256];
	struct run_result r;

	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		r = tu_run("run cases/edge/one-token.yaml --out %s %s", t->path, fmts[i]);
		if (r.status != 0)
			fail_msg("run %s: exit %d: %s", fmts[i], r.status, r.err);
		tu_free(&r);
		r = tu_run("run cases/edge/one-token.yaml --out %s %s", t->path, fmts[i]);
		assert_int_equal(r.status, 0);
		tu_free(&r);
	}
	assert_string_equal(listing(t->path, buf, sizeof(buf)),
			    "golden.safetensors manifest.json");
	assert_int_equal(tu_sh("echo mine > %s/README.md", t->path), 0);
	r = tu_run("run cases/edge/one-token.yaml --out %s", t->path);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, ": a fragsim output, but it holds 'README.md', "
				      "which its manifest.json does not list"));
	assert_string_equal(r.out, "");		/* refused before the run */
	tu_free(&r);
	assert_int_equal(tu_sh("mv %s/README.md %s/my_case.yaml && cat "
			       "cases/edge/one-token.yaml > %s/my_case.yaml", t->path,
			       t->path, t->path), 0);
	r = tu_run("run %s/my_case.yaml --out %s", t->path, t->path);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--out is replaced whole, and the case file '"));
	assert_string_equal(r.out, "");
	tu_free(&r);
	assert_string_equal(listing(t->path, buf, sizeof(buf)),
			    "golden.safetensors manifest.json my_case.yaml");
}

/*
 * Issue 21 point 3: `--out` on a mount point ran the whole case, then
 * failed at the rename (exit 3, "Device or resource busy"). Now
 * outdir_check refuses it first, exit 2: a tmpfs mounted at out (with a
 * fragsim output in it, which would otherwise be replaced), and a bind
 * mount within one file system (same st_dev, told apart by the mount
 * id). `run --out` says so before it loads the case. As root, with
 * mount(2) permitted; else skipped with a message.
 */
static void test_mount_point_is_refused(void **state)
{
	static const char *const want =
		"is a mount point, which fragsim cannot replace (it renames a "
		"finished output into place); give a directory inside it";
	struct tu_scratch *t = *state;
	char p[300], src[200], inner[300];
	struct fs_err err, err_run, err_bind, err_in;
	enum fs_rc rc, rc_bind, rc_in;
	struct run_result r;

	assert_int_equal(mkdir(t->path, 0777), 0);
	if (mount("fragsim-test", t->path, "tmpfs", 0, "size=1m") != 0) {
		printf("skipped: mount refused (%s), mount points not tested\n",
		       strerror(errno));
		skip();
	}
	snprintf(p, sizeof(p), "%s/manifest.json", t->path);
	put_file(p, MARKED("on tmpfs"));
	rc = outdir_check(t->path, &err);
	snprintf(inner, sizeof(inner), "%s/g", t->path);
	rc_in = outdir_check(inner, &err_in);	/* inside it: fine */
	r = tu_run("run cases/edge/one-token.yaml --out %s", t->path);
	memset(&err_run, 0, sizeof(err_run));
	snprintf(err_run.msg, sizeof(err_run.msg), "%s", r.err);
	umount2(t->path, MNT_DETACH);

	snprintf(src, sizeof(src), "%s/src", t->dir);
	assert_int_equal(mkdir(src, 0777), 0);
	assert_int_equal(mount(src, t->path, NULL, MS_BIND, NULL), 0);
	rc_bind = outdir_check(t->path, &err_bind);
	umount2(t->path, MNT_DETACH);

	assert_int_equal(rc, FS_EINPUT);
	assert_string_equal(err.file, t->path);
	assert_string_equal(err.msg, want);
	assert_int_equal(rc_in, FS_OK);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	assert_non_null(strstr(err_run.msg, want));
	tu_free(&r);
	assert_int_equal(rc_bind, FS_EINPUT);
	assert_string_equal(err_bind.msg, want);
	/* Unmounted, the same directory is an ordinary (empty) one. */
	assert_int_equal(outdir_check(t->path, &err), FS_OK);
}

/*
 * Issue 21 point 11, the rule: no output is an input or another output,
 * and nothing read or written is inside an output directory (replaced
 * whole). Told by inode where both exist, by name made absolute and
 * free of links where not. An output inside an input directory is fine.
 */
static void test_io_check(void **state)
{
	struct tu_scratch *t = *state;
	char c[200], alias[200], link_p[200], plan[200], in_plan[200], junit[200];
	struct fs_err err;

	snprintf(c, sizeof(c), "%s/c.yaml", t->dir);
	snprintf(alias, sizeof(alias), "%s/./sub/../c.yaml", t->dir);
	snprintf(link_p, sizeof(link_p), "%s/l.yaml", t->dir);
	snprintf(plan, sizeof(plan), "%s/plan", t->dir);
	snprintf(in_plan, sizeof(in_plan), "%s/plan/d", t->dir);
	snprintf(junit, sizeof(junit), "%s/j.xml", t->dir);
	put_file(c, "name: c");
	assert_int_equal(symlink("c.yaml", link_p), 0);
	assert_int_equal(mkdir(plan, 0777), 0);
	snprintf(t->path, sizeof(t->path), "%s/sub", t->dir);
	assert_int_equal(mkdir(t->path, 0777), 0);
	{
		const struct outdir_io same[] = {
			{ "the case file", c, OUTDIR_READ },
			{ "--report", link_p, OUTDIR_WRITE_FILE },
		};
		assert_int_equal(outdir_io_check(same, 2, &err), FS_EINPUT);
		assert_string_equal(err.file, link_p);
		assert_string_equal(err.msg, "--report is also the case file, which this "
				    "command reads; give --report a path of its own");
	}
	{
		const struct outdir_io by_name[] = {
			{ "--junit", alias, OUTDIR_WRITE_FILE },
			{ "a case file", c, OUTDIR_READ },
		};
		assert_int_equal(outdir_io_check(by_name, 2, &err), FS_EINPUT);
		assert_non_null(strstr(err.msg, "--junit is also a case file"));
	}
	{
		/* neither exists: the same name */
		const struct outdir_io twice[] = {
			{ "--junit", junit, OUTDIR_WRITE_FILE },
			{ "--report", junit, OUTDIR_WRITE_FILE },
		};
		assert_int_equal(outdir_io_check(twice, 2, &err), FS_EINPUT);
		assert_string_equal(err.msg, "given as both --junit and --report; give "
				    "each output a path of its own");
	}
	{
		const struct outdir_io holds[] = {
			{ "the case file", c, OUTDIR_READ },
			{ "--out", t->dir, OUTDIR_WRITE_DIR },
		};
		assert_int_equal(outdir_io_check(holds, 2, &err), FS_EINPUT);
		assert_string_equal(err.file, t->dir);
		char want[400];

		snprintf(want, sizeof(want), "--out is replaced whole, and the case file "
			 "'%s' is inside it; give --out a directory of its own", c);
		assert_string_equal(err.msg, want);
	}
	{
		const struct outdir_io holds_out[] = {
			{ "--out", plan, OUTDIR_WRITE_DIR },
			{ "--report", in_plan, OUTDIR_WRITE_FILE },
		};
		assert_int_equal(outdir_io_check(holds_out, 2, &err), FS_EINPUT);
		assert_non_null(strstr(err.msg, "and --report '"));
	}
	{
		/* fine: an output inside an input directory; paths not given */
		const struct outdir_io fine[] = {
			{ "--plan", plan, OUTDIR_READ },
			{ "--out", in_plan, OUTDIR_WRITE_DIR },
			{ "--report", NULL, OUTDIR_WRITE_FILE },
			{ "--junit", junit, OUTDIR_WRITE_FILE },
			{ "a case file", c, OUTDIR_READ },
		};
		assert_int_equal(outdir_io_check(fine, 5, &err), FS_OK);
		assert_int_equal(outdir_io_check(fine, 0, &err), FS_OK);
	}
}

/* The rule through each command that reads and writes paths. */
static void test_cli_outputs_are_not_inputs(void **state)
{
	struct tu_scratch *t = *state;
	char c[200], buf[256];
	struct run_result r;

	snprintf(c, sizeof(c), "%s/c.yaml", t->dir);
	assert_int_equal(tu_sh("cp cases/edge/one-token.yaml %s", c), 0);
	r = tu_run("check %s --junit %s", c, c);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "c.yaml: --junit is also a case path, which this "
				      "command reads"));
	tu_free(&r);
	r = tu_run("check %s --junit %s/j.xml --report %s/j.xml", t->dir, t->dir, t->dir);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "given as both --junit and --report"));
	assert_string_equal(r.out, "");
	tu_free(&r);
	r = tu_run("run %s --out %s", c, t->dir);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--out is replaced whole, and the case file '"));
	tu_free(&r);
	r = tu_run("run %s --out %s --report %s/r.html", c, t->path, t->path);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--out is replaced whole, and --report '"));
	tu_free(&r);
	r = tu_run("mutate %s --report %s", c, c);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--report is also a case file"));
	tu_free(&r);
	r = tu_run("diff %s --dump %s --report %s", c, t->dir, c);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--report is also the case file"));
	tu_free(&r);
	/* nothing was written, and the case is the case */
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "c.yaml");
	assert_int_equal(tu_sh("cmp -s cases/edge/one-token.yaml %s", c), 0);
	/* fine: the junit file beside the cases it reads */
	r = tu_run("check %s --junit %s/j.xml", t->dir, t->dir);
	assert_int_equal(r.status, 0);
	tu_free(&r);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tmp_setup, tu_scratch_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_commit_new),
		T(test_abort),
		T(test_replace_previous_output),
		T(test_empty_dir_is_taken),
		T(test_refuse_foreign_dir),
		T(test_refuse_file_and_symlink),
		T(test_bad_final_names),
		T(test_stale_temp_dir),
		T(test_path_names),
		T(test_file_commit_and_abort),
		T(test_file_disk_full),
		T(test_refuse_unmarked_manifests),
		T(test_check_first),
		T(test_sweep_stale),
		T(test_kill_during_exchange),
		T(test_kill_during_fallback),
		T(test_kill_anywhere),
		T(test_signal_removes_temp),
		T(test_file_devices_written_in_place),
		T(test_file_fifo_and_link),
		T(test_cli_outputs_on_devices),
		T(test_file_signal_removes_temp),
		T(test_refuse_foreign_files_in_marked_dir),
		T(test_cli_rerun_over_own_goldens),
		T(test_mount_point_is_refused),
		T(test_io_check),
		T(test_cli_outputs_are_not_inputs),
	};

	return cmocka_run_group_tests_name("outdir", tests, NULL, NULL);
}
