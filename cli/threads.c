/*
 * threads.c - how many OpenMP threads fragsim runs, decided before the
 * first parallel region.
 *
 * libgomp reads OMP_NUM_THREADS once, when it is loaded (before main):
 * a value it cannot parse ("abc", "0", "-1", "") it reports with
 * "libgomp: Invalid value for environment variable OMP_NUM_THREADS" and
 * drops, so the default is used; a value it can parse it keeps, however
 * large. Nothing fails then. The first parallel region starts the team:
 * 100000 threads end in SIGSEGV inside libgomp, 40000 in "libgomp:
 * Thread creation failed" and exit(1), which is fragsim's mismatch code.
 *
 * So the command line checks the environment here, before any command
 * runs, with the bounds --threads has:
 *
 *   OMP_NUM_THREADS   unset, or OpenMP's list of positive integers
 *                     ("4", "4,2"; blanks around each allowed), each
 *                     from 1 to THREADS_MAX. fragsim runs one level of
 *                     threads, so the first is its thread count; the
 *                     others are for nested regions, which it has none
 *                     of. Anything else is exit 2, even a value libgomp
 *                     dropped with its warning: the user asked for a
 *                     thread count and would not get it.
 *   OMP_THREAD_LIMIT  unset, or a positive integer up to LONG_MAX: a
 *                     cap, harmless at any size libgomp takes; "0",
 *                     "abc" or past LONG_MAX (libgomp's warning, then
 *                     ignored) is exit 2.
 *   OMP_STACKSIZE     unset, or OpenMP's size (a number, then B, K, M
 *                     or G, K when none) of at least THREADS_STACK_MIN:
 *                     a worker's stack of 96K overflowed on the shipped
 *                     suite (SIGSEGV), 128K held; 1M leaves room for
 *                     -O1 and sanitizer builds. Too large a stack is
 *                     the runtime's failure to create the thread.
 *   neither           all cores, as OpenMP counts them, but at most
 *                     THREADS_MAX: a 2048-core host runs 1024 threads.
 *
 *   OMP_NUM_THREADS=100000 fragsim run x.yaml
 *   fragsim: error: OMP_NUM_THREADS must be an integer from 1 to 1024
 *            (or a list of them, as 4,2), not '100000'
 *
 * --threads (fragsim run) then sets the count for the command; results
 * never depend on it. What OpenMP does beyond this (thread binding, its
 * own variables GOMP_STACKSIZE, KMP_STACKSIZE) is left to it; a fatal
 * error of libgomp's exits through main.c's guard, as exit 3.
 */
#include "threads.h"

#include "../include/fragsim.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(THREADS_MAX == FRAGSIM_THREADS_MAX, "the library's bound");

/* One decimal integer of a list in s, blanks around it: its value, and
 * *end past it (at ',' or the end); -1 when there is none or it is out
 * of [1, max]. */
static long item(const char *s, long max, const char **end)
{
	char *e;
	long v;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &e, 10);
	if (errno == ERANGE || v < 1 || v > max)
		return -1;
	while (isspace((unsigned char)*e))
		e++;
	*end = e;
	return v;
}

/* 0 when s is a list of items (one when !list), each in [1, max]. */
static int check_list(const char *s, long max, int list)
{
	const char *end;

	for (;;) {
		if (item(s, max, &end) < 0)
			return -1;
		if (!*end)
			return 0;
		if (!list || *end != ',')
			return -1;
		s = end + 1;
	}
}

/* OMP_STACKSIZE's bytes: blanks, a decimal number, blanks, a unit B, K,
 * M or G in either case (K when none), blanks; -1 when it is not that. */
static double stack_bytes(const char *s)
{
	static const char units[] = "bkmg";
	const char *u;
	double v;
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = (double)strtoull(s, &e, 10);
	if (errno == ERANGE)
		return -1;
	while (isspace((unsigned char)*e))
		e++;
	v *= 1024;	/* K when no unit */
	if (*e && (u = strchr(units, tolower((unsigned char)*e)))) {
		v = v / 1024 * (double)(1ull << (10 * (u - units)));
		e++;
	}
	while (isspace((unsigned char)*e))
		e++;
	return *e ? -1 : v;
}

/* The value as the message quotes it: at most 40 bytes, each byte that
 * is not printable ASCII as '?'. */
static const char *shown(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	for (; *s && n + 4 < len && n < 40; s++)
		buf[n++] = *s >= 0x20 && *s < 0x7f ? *s : '?';
	if (*s)
		buf[n++] = '.', buf[n++] = '.', buf[n++] = '.';
	buf[n] = '\0';
	return buf;
}

enum fs_rc threads_init(struct fs_err *err)
{
	const char *nt = getenv("OMP_NUM_THREADS");
	const char *tl = getenv("OMP_THREAD_LIMIT");
	const char *st = getenv("OMP_STACKSIZE");
	char buf[48];

	if (nt && check_list(nt, THREADS_MAX, 1))
		return fs_fail(err, FS_EINPUT, "OMP_NUM_THREADS must be an integer "
			       "from 1 to %d (or a list of them, as 4,2), not '%s'",
			       THREADS_MAX, shown(nt, buf, sizeof(buf)));
	if (tl && check_list(tl, LONG_MAX, 0))
		return fs_fail(err, FS_EINPUT, "OMP_THREAD_LIMIT must be a positive "
			       "integer up to %ld (libgomp ignores a larger one), not '%s'",
			       LONG_MAX, shown(tl, buf, sizeof(buf)));
	if (st && stack_bytes(st) < THREADS_STACK_MIN)
		return fs_fail(err, FS_EINPUT, "OMP_STACKSIZE must be a size of 1M or "
			       "more (fragsim's threads need it), not '%s'",
			       shown(st, buf, sizeof(buf)));
	/* The default, all cores: omp_get_max_threads reads the setting
	 * and starts no thread. */
	if (!nt && omp_get_max_threads() > THREADS_MAX)
		omp_set_num_threads(THREADS_MAX);
	return FS_OK;
}
