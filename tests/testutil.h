/*
 * testutil.h - helpers shared by the cmocka tests: run the fragsim binary
 * and capture what it prints, temporary files, and a seeded generator
 * for random test inputs (a test's randomness must be repeatable).
 *
 * Header-only so each test binary stays one file plus the library.
 */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return path;
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
