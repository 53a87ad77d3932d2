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

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Result codes (docs/design.md 3.5). The first four are their own exit
 * status; the two kinds after them keep their cause apart in the code and
 * in the text, and exit as fs_rc_exit() says: out of memory is no fault
 * of the input (3), a limit is one the user can change (2).
 */
enum fs_rc {
	FS_OK = 0,		/* all checks hold */
	FS_MISMATCH = 1,	/* a verification mismatch / profile invalid */
	FS_EINPUT = 2,		/* bad usage or bad input */
	FS_EINTERNAL = 3,	/* internal error: a failed write, an impossible state */
	FS_ENOMEM = 4,		/* an allocation failed: "out of memory: <what>, N bytes" */
	FS_EBUDGET = 5,		/* over a size limit the case or an option sets */
};

/* The process exit status of rc: 0, 1, 2 (input, budget), 3 (internal,
 * out of memory); anything else is 3. The one place that maps them. */
int fs_rc_exit(int rc);

struct fs_err {
	char file[256];	/* "" when the error has no file */
	int line;	/* 1-based; 0 when unknown */
	int col;	/* 1-based; 0 when unknown */
	char msg[768];	/* lowercase, no full stop, says what failed first */
	enum fs_rc rc;	/* the kind fs_fail* was given; FS_OK when unset */
};

/*
 * The kind of the error in err, for a function that returns NULL or -1
 * rather than an rc (a loader returning a pointer): err->rc when set,
 * else dflt.
 */
static inline enum fs_rc fs_err_rc(const struct fs_err *err, enum fs_rc dflt)
{
	return err && err->rc ? err->rc : dflt;
}

/* Fill err (if non-NULL) with a message and no location; returns rc. */
enum fs_rc fs_fail(struct fs_err *err, enum fs_rc rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Same, at file:line:col (line and col 1-based; file may be NULL). */
enum fs_rc fs_fail_at(struct fs_err *err, enum fs_rc rc, const char *file,
		      int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* FS_EINPUT at file:line:col for key path: "path: <message>" ("<message>"
 * when path is NULL or ""), the form of every case and profile error. */
enum fs_rc fs_vfail_key(struct fs_err *err, const char *file, int line, int col,
			const char *path, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));

/*
 * An allocation of `bytes` for `what` failed: FS_ENOMEM with "out of
 * memory: <what>, <bytes> bytes" (bytes 0: unknown, left out).
 */
enum fs_rc fs_nomem(struct fs_err *err, const char *what, size_t bytes);

/*
 * A size limit: FS_EBUDGET at file (NULL: none) with "<what> needs <need>,
 * over the limit of <limit> (<how>)", each size in the unit that reads
 * best (KiB to TiB, one decimal; in bytes when the two would read the
 * same); `how` names the limit and how to raise
 * it or shrink the case, e.g. "inputs are capped at 16 GiB; shrink the
 * case". need and limit are doubles so a silly case cannot overflow.
 */
enum fs_rc fs_budget(struct fs_err *err, const char *file, const char *what,
		     double need, double limit, const char *how);

/* "41.2 GiB", "3.0 MiB", "355.3 KiB", "12 bytes" into buf; returns buf. */
const char *fs_bytes_str(double bytes, char *buf, size_t len);

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
