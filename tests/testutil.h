/*
 * testutil.h - helpers shared by the cmocka tests: run the fragsim binary
 * and capture what it prints, run a shell command, temporary files, one
 * scratch directory per test (tu_scratch_new / tu_scratch_free), and a
 * seeded generator for random test inputs (a test's randomness must be
 * repeatable). tests/README.md says when to use which.
 *
 * Header-only so each test binary stays one file plus the library. The
 * helpers assert nothing (cmocka need not be included first): they
 * return a status the test asserts on.
 */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The compilers the header tests (test_fragsim_dump, test_lmprint) build
 * kernel-side code with; the Makefile passes make's CC and CXX. */
#ifndef FRAGSIM_CC
#define FRAGSIM_CC "cc"
#endif
#ifndef FRAGSIM_CXX
#define FRAGSIM_CXX "c++"
#endif

struct run_result {
	int status;	/* exit status, or 128+signal */
	char *out;	/* stdout, NUL-terminated */
	char *err;	/* stderr, NUL-terminated */
};

static inline char *tu_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long n;

	if (!f)
		return strdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)n + 1);
	if (fread(b, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	b[n] = '\0';
	fclose(f);
	return b;
}

/* The bits of a float and back (memcpy: no aliasing games). */
static inline uint32_t tu_f32_bits(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof(u));
	return u;
}

static inline float tu_f32_from_bits(uint32_t u)
{
	float x;

	memcpy(&x, &u, sizeof(x));
	return x;
}

/*
 * What the helpers below make in /tmp (tu_write_temp's files,
 * tu_scratch_new's directories) is removed when the test binary exits,
 * so a test that fails halfway, or forgets to clean up, leaves nothing
 * behind. Only by the process that made them: a forked child that
 * exits must not take its parent's files.
 */
#define TU_MAX_LEFTOVERS 4096
static char *tu_leftover[TU_MAX_LEFTOVERS];
static int tu_nleftover;
static pid_t tu_leftover_pid;
static inline void tu_leftovers_clean(void);

static inline void tu_leftover_add(const char *path)
{
	if (tu_nleftover == 0) {
		tu_leftover_pid = getpid();
		atexit(tu_leftovers_clean);
	}
	if (tu_nleftover < TU_MAX_LEFTOVERS)
		tu_leftover[tu_nleftover++] = strdup(path);
}

/* Run `FRAGSIM_BIN <args>` through the shell (args is shell text). */
static inline struct run_result tu_run(const char *fmt, ...)
{
	char args[4096], cmd[8192], outp[64], errp[64];
	struct run_result r;
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(outp, sizeof(outp), "/tmp/fragsim-test-%d.out", (int)getpid());
	snprintf(errp, sizeof(errp), "/tmp/fragsim-test-%d.err", (int)getpid());
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' %s >%s 2>%s", FRAGSIM_SRC,
		 FRAGSIM_BIN, args, outp, errp);
	st = system(cmd);
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r.out = tu_slurp(outp);
	r.err = tu_slurp(errp);
	unlink(outp);
	unlink(errp);
	return r;
}

static inline void tu_free(struct run_result *r)
{
	free(r->out);
	free(r->err);
}

/* Write text to a fresh temporary file; returns its malloc'd path. */
static inline char *tu_write_temp(const char *suffix, const char *text)
{
	char *path = malloc(256);
	int fd;
	FILE *f;

	snprintf(path, 256, "/tmp/fragsim-test-XXXXXX%s", suffix);
	fd = mkstemps(path, (int)strlen(suffix));
	if (fd < 0)
		return NULL;
	tu_leftover_add(path);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

/* Run a shell command made from fmt; its exit status, or 128+signal. */
static inline int tu_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Write text to path (created or truncated); 0, or -1 if it failed. */
static inline int tu_put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int bad;

	if (!f)
		return -1;
	bad = fputs(text, f) < 0;
	return fclose(f) != 0 || bad ? -1 : 0;
}

/*
 * Remove path and everything under it, as rm -rf would, without a
 * shell (a path is never command text) and without following a
 * symbolic link: a link is removed, not what it points to. 0 when
 * nothing is left (a missing path included), -1 otherwise.
 */
static inline int tu_rmtree(const char *path)
{
	struct stat st;
	struct dirent *e;
	DIR *d;
	int rc = 0;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		size_t n = strlen(path) + strlen(e->d_name) + 2;
		char *sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		sub = malloc(n);
		if (!sub) {
			rc = -1;
			break;
		}
		snprintf(sub, n, "%s/%s", path, e->d_name);
		if (tu_rmtree(sub) != 0)
			rc = -1;
		free(sub);
	}
	closedir(d);
	return rmdir(path) != 0 ? -1 : rc;
}

/*
 * A fresh, empty scratch directory /tmp/fragsim-TAG-XXXXXX, its path in
 * dir[n]; dir, or NULL if it could not be made (n too small included).
 * Under /tmp, not $TMPDIR: tests put the path into shell commands, and
 * /tmp/fragsim-TAG-XXXXXX needs no quoting. tu_scratch_free removes it
 * and all in it; a test that wants to show it left nothing behind calls
 * rmdir(dir) instead and asserts that.
 */
static inline char *tu_scratch_new(char *dir, size_t n, const char *tag)
{
	if (strlen(tag) + sizeof("/tmp/fragsim--XXXXXX") > n)
		return NULL;
	snprintf(dir, n, "/tmp/fragsim-%s-XXXXXX", tag);
	if (!mkdtemp(dir))
		return NULL;
	tu_leftover_add(dir);
	return dir;
}

static inline int tu_scratch_free(const char *dir)
{
	/* only what tu_scratch_new makes: a wrong pointer removes nothing */
	if (strncmp(dir, "/tmp/fragsim-", 13) != 0 || strstr(dir, "/.."))
		return -1;
	return tu_rmtree(dir);
}

static inline void tu_leftovers_clean(void)
{
	if (getpid() != tu_leftover_pid)
		return;
	for (int i = 0; i < tu_nleftover; i++) {
		struct stat st;

		if (tu_leftover[i] && lstat(tu_leftover[i], &st) == 0)
			(void)(S_ISDIR(st.st_mode) ? tu_scratch_free(tu_leftover[i])
						   : unlink(tu_leftover[i]));
		free(tu_leftover[i]);
	}
	tu_nleftover = 0;
}

/*
 * The same as a cmocka fixture, one scratch directory per test:
 *
 *	static int setup(void **state)
 *	{
 *		return tu_scratch_setup(state, "npy", "x.npy");
 *	}
 *	... cmocka_unit_test_setup_teardown(f, setup, tu_scratch_teardown)
 *
 * and the test reads struct tu_scratch *t = *state: t->dir, and t->path,
 * the file dir/NAME that most of its tests write.
 */
struct tu_scratch {
	char dir[64];
	char path[128];		/* dir/NAME */
};

static inline int tu_scratch_setup(void **state, const char *tag, const char *name)
{
	struct tu_scratch *t = calloc(1, sizeof(*t));

	if (!t || !tu_scratch_new(t->dir, sizeof(t->dir), tag)) {
		free(t);
		return -1;
	}
	snprintf(t->path, sizeof(t->path), "%s/%s", t->dir, name);
	*state = t;
	return 0;
}

static inline int tu_scratch_teardown(void **state)
{
	struct tu_scratch *t = *state;
	int rc = tu_scratch_free(t->dir);

	free(t);
	return rc;
}

/* splitmix64: small, seeded, good enough for test inputs. */
static inline uint64_t tu_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
