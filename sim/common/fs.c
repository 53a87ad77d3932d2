/*
 * fs.c - error values and checked sizes (see fs.h).
 *
 * Formatting a message is not I/O: vsnprintf writes into the caller's
 * struct, so sim/ stays free of printing while still explaining failures.
 */
#include "fs.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static void err_vset(struct fs_err *err, enum fs_rc rc, const char *file,
		     int line, int col, const char *fmt, va_list ap)
{
	err->rc = rc;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	err->col = col;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

enum fs_rc fs_fail(struct fs_err *err, enum fs_rc rc, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return rc;
	va_start(ap, fmt);
	err_vset(err, rc, NULL, 0, 0, fmt, ap);
	va_end(ap);
	return rc;
}

enum fs_rc fs_fail_at(struct fs_err *err, enum fs_rc rc, const char *file,
		      int line, int col, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return rc;
	va_start(ap, fmt);
	err_vset(err, rc, file, line, col, fmt, ap);
	va_end(ap);
	return rc;
}

enum fs_rc fs_vfail_key(struct fs_err *err, const char *file, int line, int col,
			const char *path, const char *fmt, va_list ap)
{
	char msg[sizeof(err->msg)];

	if (!err)
		return FS_EINPUT;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (path && *path)
		return fs_fail_at(err, FS_EINPUT, file, line, col, "%s: %s", path, msg);
	return fs_fail_at(err, FS_EINPUT, file, line, col, "%s", msg);
}

int fs_rc_exit(int rc)
{
	switch (rc) {
	case FS_OK:
	case FS_MISMATCH:
	case FS_EINPUT:
		return rc;
	case FS_EBUDGET:
		return FS_EINPUT;
	default:	/* FS_EINTERNAL, FS_ENOMEM, anything unknown */
		return FS_EINTERNAL;
	}
}

const char *fs_bytes_str(double bytes, char *buf, size_t len)
{
	static const char *unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, len, "%.0f bytes", bytes);
		return buf;
	}
	while (v >= 1024 && u < 3)
		v /= 1024, u++;
	snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}

enum fs_rc fs_nomem(struct fs_err *err, const char *what, size_t bytes)
{
	if (bytes)
		return fs_fail(err, FS_ENOMEM, "out of memory: %s, %zu bytes",
			       what, bytes);
	return fs_fail(err, FS_ENOMEM, "out of memory: %s", what);
}

enum fs_rc fs_budget(struct fs_err *err, const char *file, const char *what,
		     double need, double limit, const char *how)
{
	char n[32], l[32];

	/* Just over: "1.0 MiB, over the limit of 1.0 MiB" says nothing */
	if (!strcmp(fs_bytes_str(need, n, sizeof(n)), fs_bytes_str(limit, l, sizeof(l)))) {
		snprintf(n, sizeof(n), "%.0f bytes", need);
		snprintf(l, sizeof(l), "%.0f bytes", limit);
	}
	return fs_fail_at(err, FS_EBUDGET, file, 0, 0,
			  "%s needs %s, over the limit of %s (%s)", what, n, l, how);
}

void fs_err_prefix(struct fs_err *err, const char *prefix)
{
	size_t cap = sizeof(err->msg), pl, ml;

	if (!err || !prefix || !*prefix)
		return;
	pl = strlen(prefix);
	if (pl + 3 > cap)
		pl = cap - 3;
	ml = strlen(err->msg);
	if (pl + 2 + ml + 1 > cap)
		ml = cap - pl - 3;
	memmove(err->msg + pl + 2, err->msg, ml);
	memcpy(err->msg, prefix, pl);
	memcpy(err->msg + pl, ": ", 2);
	err->msg[pl + 2 + ml] = '\0';
}

const char *fs_err_str(const struct fs_err *err, char *buf, size_t len)
{
	if (!err->file[0])
		snprintf(buf, len, "%s", err->msg);
	else if (err->line <= 0)
		snprintf(buf, len, "%s: %s", err->file, err->msg);
	else if (err->col <= 0)
		snprintf(buf, len, "%s:%d: %s", err->file, err->line, err->msg);
	else
		snprintf(buf, len, "%s:%d:%d: %s", err->file, err->line,
			 err->col, err->msg);
	return buf;
}

int fs_size_prod(const size_t *dims, int n, size_t cap, size_t *out)
{
	size_t p = 1;

	for (int i = 0; i < n; i++)
		if (fs_size_mul(p, dims[i], &p))
			return -1;
	if (p > cap)
		return -1;
	*out = p;
	return 0;
}

void fs_advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	uintptr_t a = ((uintptr_t)p + FS_HUGE_PAGE - 1) & ~(uintptr_t)(FS_HUGE_PAGE - 1);
	uintptr_t e = ((uintptr_t)p + bytes) & ~(uintptr_t)(FS_HUGE_PAGE - 1);

	if (bytes >= 2 * FS_HUGE_PAGE && e > a)
		(void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
	(void)p, (void)bytes;
#endif
}
