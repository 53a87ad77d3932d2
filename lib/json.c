/*
 * json.c - streaming JSON writer and strict reader (see json.h).
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
 *
 * The reader (json_parse, at the end) is the other direction, for the
 * safetensors header: strict RFC 8259 into a tree. Example:
 * {"a": [1, 2]} gives an OBJECT (keys "a") whose item is an ARRAY of two
 * NUMBERs, "1" and "2" as written; {"a": 1, "a": 2} is refused at byte
 * 9 ("key 'a' given twice").
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
			set_error(j, FS_ENOMEM, "out of memory: a JSON value");
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

/* ---- reader ------------------------------------------------------------ */

/*
 * Recursive descent over text[0..len), one function per grammar rule;
 * depth is counted on the way down, so the C stack stays bounded by
 * JSON_READ_MAX_DEPTH frames whatever the input.
 */
struct jreader {
	const char *s;
	size_t n, i, base;
	size_t values;		/* parsed so far, at most JSON_READ_MAX_VALUES */
	const char *origin;
	struct fs_err *err;
};

static enum fs_rc jr_fail(struct jreader *r, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum fs_rc jr_fail(struct jreader *r, size_t at, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fs_fail_at(r->err, FS_EINPUT, r->origin, 0, 0, "byte %zu: %s",
			  r->base + at, msg);
}

static void jr_ws(struct jreader *r)
{
	while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\t' ||
			       r->s[r->i] == '\n' || r->s[r->i] == '\r'))
		r->i++;
}

static int jr_hex4(const char *p, uint32_t *out)
{
	*out = 0;
	for (int k = 0; k < 4; k++) {
		char c = p[k];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ?
			c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			return -1;
		*out = *out << 4 | (uint32_t)d;
	}
	return 0;
}

static size_t utf8_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string at r->i (the '"'): decoded into a malloc'd *out, *olen bytes.
 * Decoded text is never longer than the escaped text. */
static enum fs_rc jr_string(struct jreader *r, char **out, size_t *olen)
{
	size_t start = r->i++, o = 0, end = r->i;
	char *b;

	/* Size the buffer by the escaped text up to the closing quote. */
	while (end < r->n && r->s[end] != '"')
		end += r->s[end] == '\\' ? 2 : 1;
	b = malloc(end - start + 1);
	if (!b)
		return fs_fail(r->err, FS_ENOMEM, "out of memory: a JSON value");
	for (;;) {
		unsigned char c;
		uint32_t cp, lo;
		size_t k;

		if (r->i >= r->n) {
			free(b);
			return jr_fail(r, start, "unterminated string");
		}
		c = (unsigned char)r->s[r->i];
		if (c == '"')
			break;
		if (c < 0x20) {
			free(b);
			return jr_fail(r, r->i, "control character 0x%02x in a string", c);
		}
		if (c >= 0x80) {
			k = utf8_len((const unsigned char *)r->s + r->i, r->n - r->i);
			if (!k) {
				free(b);
				return jr_fail(r, r->i, "invalid UTF-8 in a string");
			}
			memcpy(b + o, r->s + r->i, k);
			o += k;
			r->i += k;
			continue;
		}
		if (c != '\\') {
			b[o++] = (char)c;
			r->i++;
			continue;
		}
		if (r->i + 1 >= r->n) {
			free(b);
			return jr_fail(r, start, "unterminated string");
		}
		c = (unsigned char)r->s[r->i + 1];
		r->i += 2;
		switch (c) {
		case '"': case '\\': case '/': b[o++] = (char)c; continue;
		case 'b': b[o++] = '\b'; continue;
		case 'f': b[o++] = '\f'; continue;
		case 'n': b[o++] = '\n'; continue;
		case 'r': b[o++] = '\r'; continue;
		case 't': b[o++] = '\t'; continue;
		case 'u': break;
		default:
			free(b);
			return jr_fail(r, r->i - 2, "unknown escape '\\%c'", c);
		}
		if (r->n - r->i < 4 || jr_hex4(r->s + r->i, &cp)) {
			free(b);
			return jr_fail(r, r->i - 2, "\\u needs four hex digits");
		}
		r->i += 4;
		if (cp >= 0xd800 && cp <= 0xdbff && r->n - r->i >= 6 &&
		    r->s[r->i] == '\\' && r->s[r->i + 1] == 'u' &&
		    !jr_hex4(r->s + r->i + 2, &lo) && lo >= 0xdc00 && lo <= 0xdfff) {
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			r->i += 6;
		} else if (cp >= 0xd800 && cp <= 0xdfff) {
			free(b);
			return jr_fail(r, r->i - 6, "lone surrogate \\u%04x", (unsigned)cp);
		}
		/* C strings end at a NUL: "a\u0000b" would read as "a". */
		if (cp == 0) {
			free(b);
			return jr_fail(r, r->i - 6, "a NUL (\\u0000) in a string");
		}
		o += utf8_put(b + o, cp);
	}
	r->i++;
	b[o] = '\0';
	*out = b;
	*olen = o;
	return FS_OK;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)? as written. */
static enum fs_rc jr_number(struct jreader *r, struct json_value *v)
{
	size_t start = r->i;
	const char *s = r->s;

#define DIGITS(r) ((r)->i < (r)->n && s[(r)->i] >= '0' && s[(r)->i] <= '9')
	if (r->i < r->n && s[r->i] == '-')
		r->i++;
	if (!DIGITS(r))
		return jr_fail(r, start, "expected a value");
	if (s[r->i] == '0' && r->i + 1 < r->n && s[r->i + 1] >= '0' &&
	    s[r->i + 1] <= '9')
		return jr_fail(r, start, "leading zeros are not JSON");
	while (DIGITS(r))
		r->i++;
	if (r->i < r->n && s[r->i] == '.') {
		r->i++;
		if (!DIGITS(r))
			return jr_fail(r, r->i, "expected a digit after '.'");
		while (DIGITS(r))
			r->i++;
	}
	if (r->i < r->n && (s[r->i] == 'e' || s[r->i] == 'E')) {
		r->i++;
		if (r->i < r->n && (s[r->i] == '+' || s[r->i] == '-'))
			r->i++;
		if (!DIGITS(r))
			return jr_fail(r, r->i, "expected a digit in the exponent");
		while (DIGITS(r))
			r->i++;
	}
#undef DIGITS
	v->type = JSON_NUMBER;
	v->len = r->i - start;
	v->text = malloc(v->len + 1);
	if (!v->text)
		return fs_fail(r->err, FS_ENOMEM, "out of memory: a JSON value");
	memcpy(v->text, s + start, v->len);
	v->text[v->len] = '\0';
	return FS_OK;
}

static void value_clear(struct json_value *v)
{
	for (size_t i = 0; i < v->n; i++) {
		value_clear(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->text);
	memset(v, 0, sizeof(*v));
}


/* Keys of one object, by index order: sorted copy, neighbours compared. */
struct keyref {
	const char *k;
	size_t len, i;
};

static int cmp_keyref(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	size_t m = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->k, y->k, m);

	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static enum fs_rc jr_unique(struct jreader *r, const struct json_value *v)
{
	struct keyref *ks;
	enum fs_rc rc = FS_OK;

	if (v->n < 2)
		return FS_OK;
	ks = malloc(v->n * sizeof(*ks));
	if (!ks)
		return fs_fail(r->err, FS_ENOMEM, "out of memory: a JSON value");
	for (size_t i = 0; i < v->n; i++) {
		ks[i].k = v->keys[i];
		ks[i].len = strlen(v->keys[i]);
		ks[i].i = i;
	}
	qsort(ks, v->n, sizeof(*ks), cmp_keyref);
	for (size_t i = 1; i < v->n && !rc; i++)
		if (ks[i].len == ks[i - 1].len &&
		    !memcmp(ks[i].k, ks[i - 1].k, ks[i].len))
			rc = fs_fail_at(r->err, FS_EINPUT, r->origin, 0, 0,
					"byte %zu: key '%s' given twice",
					v->items[ks[i].i].key_at, ks[i].k);
	free(ks);
	return rc;
}

static enum fs_rc jr_value(struct jreader *r, struct json_value *v, int depth);

/* Items of an array or members of an object, after the opening bracket. */
static enum fs_rc jr_items(struct jreader *r, struct json_value *v, int depth,
			   int object)
{
	size_t cap = 0;
	char close = object ? '}' : ']';
	enum fs_rc rc;

	jr_ws(r);
	if (r->i < r->n && r->s[r->i] == close) {
		r->i++;
		return FS_OK;
	}
	for (;;) {
		char *key = NULL;
		size_t klen, key_at;

		jr_ws(r);
		key_at = r->base + r->i;
		if (object) {
			if (r->i >= r->n || r->s[r->i] != '"')
				return jr_fail(r, r->i, "expected a key in quotes");
			if ((rc = jr_string(r, &key, &klen)))
				return rc;
			jr_ws(r);
			if (r->i >= r->n || r->s[r->i] != ':') {
				free(key);
				return jr_fail(r, r->i, "expected ':' after a key");
			}
			r->i++;
			jr_ws(r);
		}
		if (v->n == cap) {
			size_t nc = cap ? 2 * cap : 4;
			struct json_value *ni = realloc(v->items, nc * sizeof(*ni));
			char **nk = NULL;

			if (ni)
				v->items = ni;
			if (ni && object && !(nk = realloc(v->keys, nc * sizeof(*nk))))
				ni = NULL;
			if (!ni) {
				free(key);
				return fs_fail(r->err, FS_ENOMEM, "out of memory: a JSON value");
			}
			if (object)
				v->keys = nk;
			cap = nc;
		}
		memset(&v->items[v->n], 0, sizeof(v->items[v->n]));
		v->items[v->n].key_at = key_at;
		if (object)
			v->keys[v->n] = key;
		v->n++;
		if ((rc = jr_value(r, &v->items[v->n - 1], depth)))
			return rc;
		jr_ws(r);
		if (r->i < r->n && r->s[r->i] == ',') {
			r->i++;
			jr_ws(r);
			if (r->i < r->n && r->s[r->i] == close)
				return jr_fail(r, r->i, "trailing comma before '%c'",
					       close);
			continue;
		}
		if (r->i < r->n && r->s[r->i] == close) {
			r->i++;
			return object ? jr_unique(r, v) : FS_OK;
		}
		return jr_fail(r, r->i, "expected ',' or '%c'", close);
	}
}

static enum fs_rc jr_value(struct jreader *r, struct json_value *v, int depth)
{
	static const struct { const char *w; enum json_type t; } words[] = {
		{ "null", JSON_NULL }, { "false", JSON_FALSE }, { "true", JSON_TRUE },
	};
	char c;

	jr_ws(r);
	v->at = r->base + r->i;
	if (r->i >= r->n)
		return jr_fail(r, r->i, "expected a value, found the end");
	/* A tree node is ~70 bytes: 100 MB of "0," would need 3.5 GB. */
	if (++r->values > JSON_READ_MAX_VALUES)
		return jr_fail(r, r->i, "more than %d values (fragsim's limit)",
			       JSON_READ_MAX_VALUES);
	c = r->s[r->i];
	if (c == '{' || c == '[') {
		if (depth == JSON_READ_MAX_DEPTH)
			return jr_fail(r, r->i, "nested deeper than %d levels",
				       JSON_READ_MAX_DEPTH);
		r->i++;
		v->type = c == '{' ? JSON_OBJECT : JSON_ARRAY;
		return jr_items(r, v, depth + 1, c == '{');
	}
	if (c == '"') {
		v->type = JSON_STRING;
		return jr_string(r, &v->text, &v->len);
	}
	for (size_t k = 0; k < FS_ARRAY_LEN(words); k++) {
		size_t wl = strlen(words[k].w);

		if (r->n - r->i >= wl && !memcmp(r->s + r->i, words[k].w, wl)) {
			v->type = words[k].t;
			r->i += wl;
			return FS_OK;
		}
	}
	return jr_number(r, v);
}

enum fs_rc json_parse(const char *text, size_t len, const char *origin,
		      size_t base, struct json_value **out, struct fs_err *err)
{
	struct jreader r = { text, len, 0, base, 0, origin, err };
	struct json_value *v = calloc(1, sizeof(*v));
	enum fs_rc rc;

	*out = NULL;
	if (!v)
		return fs_fail(err, FS_ENOMEM, "out of memory: a JSON value");
	rc = jr_value(&r, v, 0);
	if (!rc) {
		jr_ws(&r);
		if (r.i < r.n)
			rc = jr_fail(&r, r.i, "text after the JSON value");
	}
	if (rc) {
		json_value_free(v);
		return rc;
	}
	*out = v;
	return FS_OK;
}

void json_value_free(struct json_value *v)
{
	if (!v)
		return;
	value_clear(v);
	free(v);
}

const struct json_value *json_member(const struct json_value *v,
				     const char *key)
{
	if (!v || v->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], key))
			return &v->items[i];
	return NULL;
}

int json_u64(const struct json_value *v, uint64_t *out)
{
	uint64_t x = 0;

	if (!v || v->type != JSON_NUMBER || !v->len)
		return -1;
	for (size_t i = 0; i < v->len; i++) {
		unsigned d = (unsigned char)v->text[i] - '0';

		if (d > 9 || x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}
