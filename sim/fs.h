/*
 * fs.h - the few plain types every fragsim module shares: result codes,
 * the error value, and overflow-checked size arithmetic.
 *
 * Errors are values (STYLE.md 3): a function that can fail returns an
 * enum fs_rc and, when given a non-NULL struct fs_err, fills it with a
 * message and, for input errors, the file:line:col it came from.
 * sim/ and ref/ never print; cli/ renders the error once, in main().
 */
#ifndef FS_H
#define FS_H

#include <stddef.h>
#include <stdint.h>

/* Result codes double as the process exit status (docs/design.md 3.5). */
enum fs_rc {
	FS_OK = 0,		/* all checks hold */
	FS_MISMATCH = 1,	/* a verification mismatch / profile invalid */
	FS_EINPUT = 2,		/* bad usage or bad input */
	FS_EINTERNAL = 3,	/* internal error, including failed writes */
};

struct fs_err {
	char file[256];	/* "" when the error has no file */
	int line;	/* 1-based; 0 when unknown */
	int col;	/* 1-based; 0 when unknown */
	char msg[768];	/* lowercase, no full stop, says what failed first */
};

/* Fill err (if non-NULL) with a message and no location; returns rc. */
enum fs_rc fs_fail(struct fs_err *err, enum fs_rc rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Same, at file:line:col (line and col 1-based; file may be NULL). */
enum fs_rc fs_fail_at(struct fs_err *err, enum fs_rc rc, const char *file,
		      int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Prefix err->msg with "prefix: " (e.g. a key path); keeps the location. */
void fs_err_prefix(struct fs_err *err, const char *prefix);

/* "file:line:col: msg", "file: msg" or "msg" into buf; returns buf. */
const char *fs_err_str(const struct fs_err *err, char *buf, size_t len);

/* Overflow-checked size arithmetic: 0 on success, -1 on overflow. */
static inline int fs_size_mul(size_t a, size_t b, size_t *out)
{
	return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

static inline int fs_size_add(size_t a, size_t b, size_t *out)
{
	return __builtin_add_overflow(a, b, out) ? -1 : 0;
}

/*
 * Ask for the whole 2 MiB pages inside [p, p + bytes) to be huge pages
 * (Linux THP in its "madvise" mode), for arrays of 4 MiB or more: before
 * the first touch, a fault per 2 MiB instead of per 4 KiB, and fewer TLB
 * misses when read in scattered 4 KiB blocks. Only advice: where it is
 * not taken (other systems, memory already touched) nothing changes.
 */
#define FS_HUGE_PAGE ((size_t)2 << 20)
void fs_advise_huge(void *p, size_t bytes);

/* Product of n dims with overflow and a cap; 0 ok, -1 overflow or > cap. */
int fs_size_prod(const size_t *dims, int n, size_t cap, size_t *out);

#define FS_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
