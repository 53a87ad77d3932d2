/*
 * junit.c - JUnit XML for a suite's outcome (junit.h).
 *
 * The classname of a case is its directory with '/' as '.', so that CI
 * groups cases/edge/x.yaml under "cases.edge" ("." for a bare name or a
 * file at the root); leading "/" and "./" are dropped first.
 *
 * The text is built in a growing buffer (this library prints nothing,
 * so no stdio stream: tools/check_layers.py), then written in one call.
 */
#include "junit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buf {
	char *p;
	size_t n, cap;
	int oom;	/* an append failed: the text is incomplete */
};

static void put(struct buf *b, const char *s, size_t len)
{
	if (b->oom)
		return;
	if (b->n + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *np;

		while (cap < b->n + len + 1)
			cap *= 2;
		if (!(np = realloc(b->p, cap))) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, len);
	b->n += len;
	b->p[b->n] = '\0';
}

static void put_str(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void put_fmt(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put_fmt(struct buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	/* only numbers and fixed words come through here */
	put(b, tmp, n < 0 ? 0 : (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Text as XML character data or an attribute value: the five specials
 * escaped, control characters other than tab and newline dropped (XML
 * 1.0 has no way to write them), invalid UTF-8 bytes as U+FFFD. */
static void escape(struct buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned char c = *p;
		int n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
		      : (c & 0xf8) == 0xf0 ? 4 : 0;
		int ok = n > 0 && !(n == 2 && c < 0xc2) && !(n == 4 && c > 0xf4);

		for (int i = 1; ok && i < n; i++)
			ok = (p[i] & 0xc0) == 0x80;
		/* no overlong forms, no surrogates, nothing past U+10FFFF */
		if (ok && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) ||
			   (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90)))
			ok = 0;
		if (!ok) {
			put_str(b, "\xef\xbf\xbd");
			p++;
			continue;
		}
		if (n > 1) {
			put(b, (const char *)p, (size_t)n);
			p += n;
			continue;
		}
		switch (c) {
		case '<': put_str(b, "&lt;"); break;
		case '>': put_str(b, "&gt;"); break;
		case '&': put_str(b, "&amp;"); break;
		case '"': put_str(b, "&quot;"); break;
		case '\'': put_str(b, "&apos;"); break;
		default:
			if (c >= 0x20 || c == '\n' || c == '\t')
				put(b, (const char *)p, 1);
		}
		p++;
	}
}

static void classname(struct buf *b, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[1024];

	if (!slash) {
		put_str(b, ".");
		return;
	}
	while (*path == '/' || !strncmp(path, "./", 2))
		path += *path == '/' ? 1 : 2;
	if (path > slash) {
		put_str(b, ".");
		return;
	}
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	for (char *c = dir; *c; c++)
		if (*c == '/')
			*c = '.';
	escape(b, dir[0] ? dir : ".");
}

enum fs_rc junit_write(struct outdir_file *f, const struct junit_case *c, size_t n,
		       time_t started, double seconds, struct fs_err *err)
{
	struct buf b = { 0 };
	size_t fails = 0, errors = 0;
	char stamp[32];
	struct tm tm;
	enum fs_rc rc;

	for (size_t i = 0; i < n; i++)
		fails += c[i].status == JUNIT_FAIL, errors += c[i].status == JUNIT_ERROR;
	/* UTC, in the form the JUnit schema's timestamp takes (no zone). */
	gmtime_r(&started, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	/* check skips nothing it was given; cases of other shards are in
	 * their shard's file, so skipped is always 0 (and always present). */
	put_str(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	put_fmt(&b, "<testsuites name=\"fragsim\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"0\" time=\"%.3f\">\n",
	     n, fails, errors, seconds);
	put_fmt(&b, "<testsuite name=\"fragsim\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"0\" time=\"%.3f\" timestamp=\"%s\">\n",
	     n, fails, errors, seconds, stamp);
	for (size_t i = 0; i < n; i++) {
		const char *tag = c[i].status == JUNIT_FAIL ? "failure" : "error";

		put_str(&b, "  <testcase classname=\"");
		classname(&b, c[i].file);
		put_str(&b, "\" name=\"");
		escape(&b, c[i].name && c[i].name[0] ? c[i].name : c[i].file);
		put_str(&b, "\" file=\"");
		escape(&b, c[i].file);
		put_fmt(&b, "\" time=\"%.3f\"", c[i].seconds);
		if (c[i].status == JUNIT_PASS) {
			put_str(&b, "/>\n");
			continue;
		}
		put_fmt(&b, ">\n    <%s message=\"", tag);
		escape(&b, c[i].message ? c[i].message : "");
		put_str(&b, "\" type=\"");
		escape(&b, c[i].status != JUNIT_FAIL ? "input" : c[i].type ? c[i].type : "mismatch");
		put_str(&b, "\">");
		escape(&b, c[i].details ? c[i].details : c[i].message ? c[i].message : "");
		put_fmt(&b, "</%s>\n  </testcase>\n", tag);
	}
	put_str(&b, "</testsuite>\n</testsuites>\n");
	if (b.oom) {
		free(b.p);
		outdir_file_abort(f);
		return fs_nomem(err, "the JUnit XML", b.n);
	}
	rc = outdir_file_write(f, b.p, b.n, err);
	if (!rc)
		rc = outdir_file_commit(f, err);
	free(b.p);
	return rc;
}
