/*
 * json.c - streaming JSON writer (see json.h).
 *
 * Why: manifest.json, the safetensors header and `--format json` output
 * all need JSON that is valid whatever strings go in, and identical from
 * run to run; a writer that owns the separators gets both by design.
 *
 * State: a stack of open containers. Before an item (an array value or
 * an object key) the writer emits "," if the container has items, then
 * a newline and indent in pretty mode; a key emits ": " and the value
 * that follows it gets no separator.
 *
 *   calls                          pretty output
 *   begin_object                   {
 *     key "a", int 1                 "a": 1,
 *     key "s", begin_array_compact   "s": [2, 16],
 *       int 2, int 16, end_array
 *     key "e", begin_array           "e": []
 *       end_array
 *   end_object                     }
 *   finish                         (newline)
 *
 * Compact mode writes the same tokens with no whitespace at all:
 * {"a":1,"s":[2,16],"e":[]}.
 *
 * Invariants: depth <= JSON_MAX_DEPTH; want_value only inside an object;
 * once rc is set, nothing more is written.
 */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "outdir.h"

static void set_error(struct json *j, enum fs_rc rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_error(struct json *j, enum fs_rc rc, const char *fmt, ...)
{
	va_list ap;

	if (j->rc)
		return;		/* the first error is the useful one */
	j->rc = rc;
	memset(&j->err, 0, sizeof(j->err));
	va_start(ap, fmt);
	vsnprintf(j->err.msg, sizeof(j->err.msg), fmt, ap);
	va_end(ap);
}

static void put(struct json *j, const char *s, size_t n)
{
	if (j->rc || n == 0)
		return;
	if (j->fp) {
		if (fwrite(s, 1, n, j->fp) != n)
			set_error(j, FS_EINTERNAL, "json: write failed");
		return;
	}
	if (j->cap - j->len <= n) {	/* keep room for the NUL */
		size_t cap = j->cap ? j->cap : 256;
		char *b;

		while (cap - j->len <= n)
			if (fs_size_mul(cap, 2, &cap)) {
				set_error(j, FS_EINTERNAL, "json: text too large");
				return;
			}
		b = realloc(j->buf, cap);
		if (!b) {
			set_error(j, FS_EINTERNAL, "json: out of memory");
			return;
		}
		j->buf = b;
		j->cap = cap;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void put_str(struct json *j, const char *s)
{
	put(j, s, strlen(s));
}

static int one_line(const struct json *j)
{
	return !j->pretty || j->compact_from;
}

static void newline_indent(struct json *j, int depth)
{
	if (one_line(j))
		return;
	put(j, "\n", 1);
	for (int i = 0; i < depth; i++)
		put(j, "  ", 2);
}

/* Separators before an item; is_key says whether a key comes next. */
static void before(struct json *j, int is_key)
{
	if (j->rc)
		return;
	if (j->depth == 0) {
		if (is_key)
			set_error(j, FS_EINTERNAL, "json: key outside an object");
		else if (j->done)
			set_error(j, FS_EINTERNAL, "json: a second top-level value");
		return;
	}
	if (j->open[j->depth - 1] == '{') {
		if (!is_key && j->want_value) {
			j->want_value = false;	/* "key": was just written */
			return;
		}
		if (!is_key)
			set_error(j, FS_EINTERNAL, "json: value in an object "
				  "without a key");
		else if (j->want_value)
			set_error(j, FS_EINTERNAL, "json: key where a value "
				  "was due");
	} else if (is_key) {
		set_error(j, FS_EINTERNAL, "json: key inside an array");
	}
	if (j->rc)
		return;
	if (j->items[j->depth - 1]) {
		if (j->pretty && j->compact_from)
			put(j, ", ", 2);	/* one line, still readable */
		else
			put(j, ",", 1);
	}
	j->items[j->depth - 1] = true;
	newline_indent(j, j->depth);
}

/* After a complete value: at depth 0 the document is done. */
static void after(struct json *j)
{
	if (j->depth == 0)
		j->done = true;
}

static void begin(struct json *j, char open, int compact)
{
	before(j, 0);
	if (j->rc)
		return;
	if (j->depth == JSON_MAX_DEPTH) {
		set_error(j, FS_EINTERNAL, "json: nesting deeper than %d",
			  JSON_MAX_DEPTH);
		return;
	}
	put(j, &open, 1);
	j->open[j->depth] = open;
	j->items[j->depth] = false;
	j->depth++;
	if (compact && !j->compact_from)
		j->compact_from = j->depth;
}

static void end(struct json *j, char open)
{
	char close = open == '{' ? '}' : ']';

	if (j->rc)
		return;
	if (j->depth == 0) {
		set_error(j, FS_EINTERNAL, "json: '%c' with nothing open", close);
		return;
	}
	if (j->want_value) {
		set_error(j, FS_EINTERNAL, "json: '%c' where a value was due",
			  close);
		return;
	}
	if (j->open[j->depth - 1] != open) {
		set_error(j, FS_EINTERNAL, "json: '%c' closes an open %s", close,
			  open == '{' ? "array" : "object");
		return;
	}
	if (j->items[j->depth - 1])
		newline_indent(j, j->depth - 1);
	put(j, &close, 1);
	if (j->compact_from == j->depth)
		j->compact_from = 0;
	j->depth--;
	after(j);
}

void json_init(struct json *j, FILE *fp, int pretty)
{
	memset(j, 0, sizeof(*j));
	j->fp = fp;
	j->pretty = pretty != 0;
}

void json_init_mem(struct json *j, int pretty)
{
	json_init(j, NULL, pretty);
}

void json_begin_object(struct json *j) { begin(j, '{', 0); }
void json_end_object(struct json *j) { end(j, '{'); }
void json_begin_array(struct json *j) { begin(j, '[', 0); }
void json_begin_array_compact(struct json *j) { begin(j, '[', 1); }
void json_end_array(struct json *j) { end(j, '['); }

/* Bytes in the valid UTF-8 sequence at p[0..n), 0 if it is not one:
 * the shortest form of a scalar value (RFC 3629), nothing else. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	static const uint32_t min[4] = { 0, 0x80, 0x800, 0x10000 };
	unsigned c = p[0], need;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	need = c >= 0xc2 && c <= 0xdf ? 1 : (c & 0xf0) == 0xe0 ? 2 :
	       c >= 0xf0 && c <= 0xf4 ? 3 : 0;
	if (!need || need >= n)
		return 0;
	cp = c & (0x3fu >> need);
	for (unsigned k = 1; k <= need; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[k] & 0x3f);
	}
	if (cp < min[need] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return need + 1;
}

/* A string literal, for keys and values alike. Plain runs are written
 * in one put; each escape interrupts the run. */
static void quoted(struct json *j, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t start = 0, i = 0;

	put(j, "\"", 1);
	while (i < n) {
		unsigned c = p[i];
		size_t len = 0;
		const char *e;
		char esc[8];

		if (c >= 0x80)
			len = utf8_len(p + i, n - i);
		else if (c >= 0x20 && c != '"' && c != '\\')
			len = 1;
		if (len) {
			i += len;
			continue;
		}
		put(j, s + start, i - start);
		if (c >= 0x80) {
			e = "\\ufffd";	/* not UTF-8: U+FFFD, one per byte */
		} else {
			switch (c) {
			case '"': e = "\\\""; break;
			case '\\': e = "\\\\"; break;
			case '\b': e = "\\b"; break;
			case '\f': e = "\\f"; break;
			case '\n': e = "\\n"; break;
			case '\r': e = "\\r"; break;
			case '\t': e = "\\t"; break;
			default:
				snprintf(esc, sizeof(esc), "\\u%04x", c);
				e = esc;
			}
		}
		put_str(j, e);
		start = ++i;
	}
	put(j, s + start, i - start);
	put(j, "\"", 1);
}

void json_key(struct json *j, const char *key)
{
	before(j, 1);
	if (j->rc)
		return;
	quoted(j, key, strlen(key));
	put(j, j->pretty ? ": " : ":", j->pretty ? 2 : 1);
	j->want_value = true;
}

/* A scalar value: separators, the text, then maybe document end. */
static void scalar(struct json *j, const char *text, size_t n)
{
	before(j, 0);
	put(j, text, n);
	after(j);
}

void json_string_len(struct json *j, const char *s, size_t len)
{
	before(j, 0);
	if (j->rc)
		return;
	quoted(j, s, len);
	after(j);
}

void json_string(struct json *j, const char *s)
{
	if (s)
		json_string_len(j, s, strlen(s));
	else
		json_null(j);
}

void json_int(struct json *j, int64_t v)
{
	char b[32];

	scalar(j, b, (size_t)snprintf(b, sizeof(b), "%" PRId64, v));
}

void json_uint(struct json *j, uint64_t v)
{
	char b[32];

	scalar(j, b, (size_t)snprintf(b, sizeof(b), "%" PRIu64, v));
}

/* "1" reads back as an integer in most JSON readers; keep it a float. */
static size_t keep_float(char *b, size_t n)
{
	if (!strpbrk(b, ".eE")) {
		memcpy(b + n, ".0", 3);
		n += 2;
	}
	return n;
}

void json_double(struct json *j, double v)
{
	char b[40];
	int n = 0;

	if (!isfinite(v)) {
		json_null(j);
		return;
	}
	/* Fewest digits that read back exactly: 0.1, not 0.10000000000000001.
	 * 17 always does (DBL_DECIMAL_DIG). */
	for (int prec = 15; prec <= 17; prec++) {
		n = snprintf(b, sizeof(b), "%.*g", prec, v);
		if (strtod(b, NULL) == v)
			break;
	}
	scalar(j, b, keep_float(b, (size_t)n));
}

void json_float(struct json *j, float v)
{
	char b[40];
	int n = 0;

	if (!isfinite(v)) {
		json_null(j);
		return;
	}
	/* As json_double, for float: 9 digits always do (FLT_DECIMAL_DIG). */
	for (int prec = 6; prec <= 9; prec++) {
		n = snprintf(b, sizeof(b), "%.*g", prec, (double)v);
		if (strtof(b, NULL) == v)
			break;
	}
	scalar(j, b, keep_float(b, (size_t)n));
}

void json_bool(struct json *j, bool v)
{
	if (v)
		scalar(j, "true", 4);
	else
		scalar(j, "false", 5);
}

void json_null(struct json *j)
{
	scalar(j, "null", 4);
}

void json_key_string(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_string(j, s);
}

void json_key_int(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	json_int(j, v);
}

void json_key_uint(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_uint(j, v);
}

void json_key_double(struct json *j, const char *key, double v)
{
	json_key(j, key);
	json_double(j, v);
}

void json_key_float(struct json *j, const char *key, float v)
{
	json_key(j, key);
	json_float(j, v);
}

void json_key_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_bool(j, v);
}

enum fs_rc json_finish(struct json *j)
{
	if (j->finished)
		return j->rc;
	j->finished = true;
	if (j->depth)
		set_error(j, FS_EINTERNAL, "json: %d container(s) left open",
			  j->depth);
	else if (!j->done)
		set_error(j, FS_EINTERNAL, "json: no value written");
	if (j->pretty)
		put(j, "\n", 1);
	if (!j->rc && j->fp && (fflush(j->fp) != 0 || ferror(j->fp)))
		set_error(j, FS_EINTERNAL, "json: write failed");
	return j->rc;
}

const char *json_text(const struct json *j, size_t *len)
{
	if (len)
		*len = j->len;
	return j->buf ? j->buf : "";
}

void json_free(struct json *j)
{
	free(j->buf);
	j->buf = NULL;
	j->len = j->cap = 0;
}

enum fs_rc json_save(struct json *j, const char *path, struct fs_err *err)
{
	struct outdir_file f;
	enum fs_rc rc;

	if (j->fp)
		set_error(j, FS_EINTERNAL, "json_save: not a memory writer");
	else
		json_finish(j);
	if (j->rc)
		return fs_fail_at(err, j->rc, path, 0, 0, "%s", j->err.msg);
	rc = outdir_file_open(&f, path, err);
	if (!rc)
		rc = outdir_file_write(&f, j->buf, j->len, err);
	if (!rc)
		rc = outdir_file_commit(&f, err);
	return rc;
}
