/*
 * test_outdir.c - tools/outdir.c: a directory appears whole on commit,
 * not at all on abort; a previous fragsim output (manifest.json) is
 * replaced; anything else is refused and left exactly as it was; the
 * single-file helpers leave nothing behind on failure.
 *
 * Each test works in its own mkdtemp directory under /tmp (state).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../sim/fs.h"
#include "../tools/outdir.h"

struct tmp {
	char dir[64];
	char out[128];	/* dir/out: the final directory most tests use */
};

static void rm_rf(const char *path)
{
	char child[512];
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (lstat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	d = opendir(path);
	while (d && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, de->d_name);
		rm_rf(child);
	}
	if (d)
		closedir(d);
	rmdir(path);
}

static int tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	strcpy(t->dir, "/tmp/fragsim-outdir-XXXXXX");
	if (!mkdtemp(t->dir)) {
		free(t);
		return -1;
	}
	snprintf(t->out, sizeof(t->out), "%s/out", t->dir);
	*state = t;
	return 0;
}

static int tmp_teardown(void **state)
{
	struct tmp *t = *state;

	rm_rf(t->dir);
	free(t);
	return 0;
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
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static void put_in(const struct outdir *d, const char *name, const char *text)
{
	char p[OUTDIR_PATH_MAX];

	assert_int_equal(outdir_path(d, name, p, sizeof(p), NULL), FS_OK);
	put_file(p, text);
}

static void expect_text(const char *path, const char *want)
{
	char buf[64] = { 0 };
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_true(fread(buf, 1, sizeof(buf) - 1, f) > 0);
	fclose(f);
	assert_string_equal(buf, want);
}

static void test_commit_new(void **state)
{
	struct tmp *t = *state;
	struct fs_err err;
	struct outdir d;
	char buf[256], p[300];

	assert_int_equal(outdir_begin(&d, t->out, &err), FS_OK);
	assert_int_equal(d.open, 1);
	put_in(&d, "q.npy", "q");
	put_in(&d, "manifest.json", "{}");
	/* Until commit the final name does not exist. */
	assert_string_equal(listing(t->out, buf, sizeof(buf)), "(absent)");
	assert_int_equal(outdir_commit(&d, &err), FS_OK);
	assert_int_equal(d.open, 0);
	assert_string_equal(listing(t->out, buf, sizeof(buf)), "manifest.json q.npy");
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");
	snprintf(p, sizeof(p), "%s/q.npy", t->out);
	expect_text(p, "q");
}

static void test_abort(void **state)
{
	struct tmp *t = *state;
	char buf[256], p[OUTDIR_PATH_MAX];
	struct outdir d;

	assert_int_equal(outdir_begin(&d, t->out, NULL), FS_OK);
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
	struct tmp *t = *state;
	char buf[256], p[300];
	struct fs_err err;
	struct outdir d;

	assert_int_equal(mkdir(t->out, 0777), 0);
	snprintf(p, sizeof(p), "%s/manifest.json", t->out);
	put_file(p, "old");
	snprintf(p, sizeof(p), "%s/stale.npy", t->out);
	put_file(p, "stale");

	assert_int_equal(outdir_begin(&d, t->out, &err), FS_OK);
	put_in(&d, "manifest.json", "new");
	assert_int_equal(outdir_commit(&d, &err), FS_OK);
	assert_string_equal(listing(t->out, buf, sizeof(buf)), "manifest.json");
	snprintf(p, sizeof(p), "%s/manifest.json", t->out);
	expect_text(p, "new");
	/* Neither the temp dir nor the old copy is left beside it. */
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");
}

static void test_empty_dir_is_taken(void **state)
{
	struct tmp *t = *state;
	struct outdir d;
	char buf[256];

	assert_int_equal(mkdir(t->out, 0777), 0);
	assert_int_equal(outdir_begin(&d, t->out, NULL), FS_OK);
	put_in(&d, "x.npy", "x");
	assert_int_equal(outdir_commit(&d, NULL), FS_OK);
	assert_string_equal(listing(t->out, buf, sizeof(buf)), "x.npy");
}

/* A directory of the user's is never replaced, at begin or at commit. */
static void test_refuse_foreign_dir(void **state)
{
	struct tmp *t = *state;
	char buf[256], p[300];
	struct fs_err err;
	struct outdir d;

	assert_int_equal(mkdir(t->out, 0777), 0);
	snprintf(p, sizeof(p), "%s/notes.txt", t->out);
	put_file(p, "mine");
	assert_int_equal(outdir_begin(&d, t->out, &err), FS_EINPUT);
	assert_string_equal(err.file, t->out);
	assert_string_equal(err.msg, "exists, is not empty and holds no "
			    "manifest.json; refusing to replace it");
	assert_int_equal(d.open, 0);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");

	/* It appears while we work: commit refuses and cleans up. */
	assert_int_equal(unlink(p), 0);
	assert_int_equal(rmdir(t->out), 0);
	assert_int_equal(outdir_begin(&d, t->out, &err), FS_OK);
	put_in(&d, "manifest.json", "{}");
	assert_int_equal(mkdir(t->out, 0777), 0);
	put_file(p, "mine");
	assert_int_equal(outdir_commit(&d, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "refusing to replace it"));
	assert_int_equal(d.open, 0);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");
	assert_string_equal(listing(t->out, buf, sizeof(buf)), "notes.txt");
	expect_text(p, "mine");
}

static void test_refuse_file_and_symlink(void **state)
{
	struct tmp *t = *state;
	struct fs_err err;
	struct outdir d;
	char link[200];

	put_file(t->out, "a file");
	assert_int_equal(outdir_begin(&d, t->out, &err), FS_EINPUT);
	assert_string_equal(err.msg, "exists and is not a directory");
	expect_text(t->out, "a file");

	snprintf(link, sizeof(link), "%s/link", t->dir);
	assert_int_equal(symlink(t->dir, link), 0);
	assert_int_equal(outdir_begin(&d, link, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "symbolic link"));
}

static void test_bad_final_names(void **state)
{
	struct tmp *t = *state;
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
	/* Fits, but the ".tmp.<pid>" sibling name would not. */
	longp[OUTDIR_PATH_MAX - 3] = '\0';
	assert_int_equal(outdir_begin(&d, longp, &err), FS_EINPUT);
	assert_string_equal(err.msg, "path too long");
	free(longp);

	snprintf(missing, sizeof(missing), "%s/no/such/out", t->dir);
	assert_int_equal(outdir_begin(&d, missing, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "cannot create directory"));

	/* Trailing slashes name the same directory. */
	snprintf(slash, sizeof(slash), "%s//", t->out);
	assert_int_equal(outdir_begin(&d, slash, &err), FS_OK);
	assert_string_equal(d.final, t->out);
	assert_int_equal(outdir_commit(&d, &err), FS_OK);
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "out");
}

static void test_stale_temp_dir(void **state)
{
	struct tmp *t = *state;
	char stale[200];
	struct fs_err err;
	struct outdir d;

	snprintf(stale, sizeof(stale), "%s.tmp.%ld", t->out, (long)getpid());
	assert_int_equal(mkdir(stale, 0777), 0);
	assert_int_equal(outdir_begin(&d, t->out, &err), FS_EINPUT);
	assert_string_equal(err.file, stale);
	assert_non_null(strstr(err.msg, "already exists"));
	assert_int_equal(rmdir(stale), 0);	/* left alone, not deleted */
}

static void test_path_names(void **state)
{
	struct tmp *t = *state;
	char p[OUTDIR_PATH_MAX], small[8];
	struct fs_err err;
	struct outdir d;

	memset(&d, 0, sizeof(d));
	assert_int_equal(outdir_path(&d, "a", p, sizeof(p), &err), FS_EINTERNAL);
	assert_int_equal(outdir_commit(&d, &err), FS_EINTERNAL);
	assert_int_equal(outdir_begin(&d, t->out, NULL), FS_OK);
	assert_int_equal(outdir_path(&d, "q.npy", p, sizeof(p), &err), FS_OK);
	assert_non_null(strstr(p, "/out.tmp."));
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
	struct tmp *t = *state;
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

	/* Renaming onto a directory fails and removes the temporary. */
	assert_int_equal(outdir_file_open(&f, t->dir, &err), FS_OK);
	assert_int_equal(outdir_file_commit(&f, &err), FS_EINTERNAL);
	assert_string_equal(err.file, t->dir);
	assert_non_null(strstr(err.msg, "cannot rename"));
	assert_string_equal(listing(t->dir, buf, sizeof(buf)), "a.txt");
}

/* /dev/full as the temporary (via a symlink named like it): the
 * failure surfaces at write or at the flush inside commit. */
static void test_file_disk_full(void **state)
{
	struct tmp *t = *state;
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

#define T(f) cmocka_unit_test_setup_teardown(f, tmp_setup, tmp_teardown)

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
	};

	return cmocka_run_group_tests_name("outdir", tests, NULL, NULL);
}
