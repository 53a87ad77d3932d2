/*
 * npy.c - NumPy .npy reader and writer (see npy.h).
 *
 * Why: goldens must load with a plain np.load() on the device-test side,
 * and device dumps come back the same way; hand-rolling the format keeps
 * fragsim free of Python and lets the reader be strict about what it
 * accepts (numpy's own reader eval()s a Python literal).
 *
 * Layout (numpy/lib/format.py, NEP 1):
 *
 *   0      6  7  8         10 (12 for versions 2.0 and 3.0)
 *   | \x93NUMPY | maj | min | HEADER_LEN u16 LE (u32 LE) | header | data |
 *
 *   header = a Python dict literal, padded with spaces and ending in '\n'
 *            so that the data starts at a multiple of 64 bytes
 *   data   = the elements in C order, little-endian
 *
 * Worked example: int32, shape (3, 4) (np.arange(12).reshape(3, 4)):
 *
 *   93 4e 55 4d 50 59 01 00 76 00      \x93NUMPY, 1.0, HEADER_LEN 0x76
 *   {'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }
 *   58 spaces, '\n'                    10 + 118 = 128 = 2 * 64
 *   00 00 00 00 01 00 00 00 ...        0, 1, ... 11 as <i4
 *
 * Of the 58 spaces, 20 are numpy's growth room (GROWTH_AXIS_MAX_DIGITS =
 * 21 minus the digits of shape[0], so the header can be rewritten in
 * place when the array grows) and 38 the alignment padding, at least one
 * (numpy pads 64 - (10 + len) % 64, never 0). Keys are sorted as numpy
 * sorts them, so a file we write is byte-identical to np.save's.
 *
 * The reader accepts any key order, either quote, any whitespace and
 * trailing commas, and rejects everything else: other keys, Fortran
 * order, big-endian or unknown descr, a shape that is not a tuple of
 * non-negative integers, more than NPY_MAX_DATA_BYTES of data, and a
 * file whose length is not exactly header + data.
 */
#include "npy.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "outdir.h"
#include "readfile.h"
#include "sha256.h"

/* Data is copied as bytes in both directions; a big-endian host would
 * need swaps, and no fragsim host is one. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c assumes a little-endian host"
#endif

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6
#define ALIGN 64
#define GROWTH_DIGITS 21	/* numpy's GROWTH_AXIS_MAX_DIGITS */
#define HEADER_BUF 512		/* > 10 + 51 + 8 * 22 + 4 + 21 + 64 */

static const struct {
	const char *descr;
	const char *name;
	size_t size;
} dtypes[NPY_DTYPE_COUNT] = {
	[NPY_I8] = { "|i1", "int8", 1 },
	[NPY_U8] = { "|u1", "uint8", 1 },
	[NPY_I16] = { "<i2", "int16", 2 },
	[NPY_I32] = { "<i4", "int32", 4 },
	[NPY_I64] = { "<i8", "int64", 8 },
	[NPY_F16] = { "<f2", "float16", 2 },
	[NPY_F32] = { "<f4", "float32", 4 },
	[NPY_F64] = { "<f8", "float64", 8 },
};

static int dtype_ok(enum npy_dtype t)
{
	return (unsigned)t < NPY_DTYPE_COUNT;
}

const char *npy_dtype_name(enum npy_dtype dtype)
{
	return dtype_ok(dtype) ? dtypes[dtype].name : NULL;
}

const char *npy_dtype_descr(enum npy_dtype dtype)
{
	return dtype_ok(dtype) ? dtypes[dtype].descr : NULL;
}

size_t npy_dtype_size(enum npy_dtype dtype)
{
	return dtype_ok(dtype) ? dtypes[dtype].size : 0;
}

/* "(3, 4)", "(5,)" or "()": Python's repr of the shape tuple. */
static void shape_str(char *buf, size_t len, int ndim, const size_t *shape)
{
	size_t n = (size_t)snprintf(buf, len, "(");

	for (int i = 0; i < ndim && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%zu", i ? ", " : "",
				      shape[i]);
	if (n < len)
		snprintf(buf + n, len - n, ndim == 1 ? ",)" : ")");
}

/* ---- writer ---------------------------------------------------------- */

/* Header (magic to '\n') into buf[HEADER_BUF]; data byte count too. */
static enum fs_rc header_build(enum npy_dtype dtype, int ndim,
			       const size_t *shape, const void *data,
			       char *buf, size_t *hdr_len, size_t *nbytes,
			       struct fs_err *err)
{
	char shp[HEADER_BUF];
	size_t count, n, hlen, pad;
	int growth = 0;

	if (!dtype_ok(dtype))
		return fs_fail(err, FS_EINTERNAL, "npy: invalid dtype %d",
			       (int)dtype);
	if (ndim < 0 || ndim > NPY_MAX_DIMS)
		return fs_fail(err, FS_EINTERNAL, "npy: ndim %d not in 0..%d",
			       ndim, NPY_MAX_DIMS);
	shape_str(shp, sizeof(shp), ndim, shape);
	/* The reader's cap applies here too: never write what we can't read. */
	if (fs_size_prod(shape, ndim, NPY_MAX_DATA_BYTES / dtypes[dtype].size,
			 &count))
		return fs_fail(err, FS_EINTERNAL,
			       "npy: shape %s of %s is over 2^34 bytes", shp,
			       dtypes[dtype].name);
	*nbytes = count * dtypes[dtype].size;
	if (*nbytes && !data)
		return fs_fail(err, FS_EINTERNAL, "npy: no data for shape %s", shp);

	n = (size_t)snprintf(buf + 10, HEADER_BUF - 10,
			     "{'descr': '%s', 'fortran_order': False, "
			     "'shape': %s, }", dtypes[dtype].descr, shp);
	if (ndim > 0)
		growth = GROWTH_DIGITS - snprintf(NULL, 0, "%zu", shape[0]);
	hlen = n + (size_t)growth + 1;	/* + '\n' */
	pad = ALIGN - (10 + hlen) % ALIGN;
	assert(10 + hlen + pad <= HEADER_BUF && hlen + pad <= 0xffff);
	memset(buf + 10 + n, ' ', (size_t)growth + pad);
	buf[10 + hlen + pad - 1] = '\n';

	memcpy(buf, MAGIC, MAGIC_LEN);
	buf[6] = 1;	/* version 1.0: a u16 length is plenty for 8 dims */
	buf[7] = 0;
	buf[8] = (char)((hlen + pad) & 0xff);
	buf[9] = (char)((hlen + pad) >> 8);
	*hdr_len = 10 + hlen + pad;
	return FS_OK;
}

enum fs_rc npy_write(const char *path, enum npy_dtype dtype, int ndim,
		     const size_t *shape, const void *data, char sha256_hex[65],
		     struct fs_err *err)
{
	char hdr[HEADER_BUF];
	size_t hdr_len, nbytes;
	struct outdir_file f;
	enum fs_rc rc;

	rc = header_build(dtype, ndim, shape, data, hdr, &hdr_len, &nbytes, err);
	if (rc)
		return rc;
	rc = outdir_file_open(&f, path, err);
	if (!rc)
		rc = outdir_file_write(&f, hdr, hdr_len, err);
	if (!rc)
		rc = outdir_file_write(&f, data, nbytes, err);
	if (!rc)
		rc = outdir_file_commit(&f, err);
	if (!rc && sha256_hex) {
		struct sha256 s;

		sha256_init(&s);
		sha256_update(&s, hdr, hdr_len);
		sha256_update(&s, data, nbytes);
		sha256_final_hex(&s, sha256_hex);
	}
	return rc;
}

enum fs_rc npy_encode(enum npy_dtype dtype, int ndim, const size_t *shape,
		      const void *data, unsigned char **buf, size_t *len,
		      struct fs_err *err)
{
	char hdr[HEADER_BUF];
	size_t hdr_len, nbytes;
	enum fs_rc rc;

	*buf = NULL;
	*len = 0;
	rc = header_build(dtype, ndim, shape, data, hdr, &hdr_len, &nbytes, err);
	if (rc)
		return rc;
	*buf = malloc(hdr_len + nbytes);
	if (!*buf)
		return fs_fail(err, FS_ENOMEM, "out of memory: an npy file's bytes, %zu bytes",
			       hdr_len + nbytes);
	memcpy(*buf, hdr, hdr_len);
	if (nbytes)
		memcpy(*buf + hdr_len, data, nbytes);
	*len = hdr_len + nbytes;
	return FS_OK;
}

/* ---- reader ---------------------------------------------------------- */

/* What the header says, before any data is read. */
struct npy_header {
	size_t data_off;	/* file offset of the first data byte */
	enum npy_dtype dtype;
	int ndim;
	size_t shape[NPY_MAX_DIMS];
	size_t count, nbytes;
};

/* A cursor over the header text; offsets in messages are file offsets. */
struct cursor {
	const char *s;
	size_t n, i;
	size_t base;		/* file offset of s[0] */
	const char *file;
	struct fs_err *err;
};

static enum fs_rc cur_fail(struct cursor *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static enum fs_rc cur_fail(struct cursor *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fs_fail_at(c->err, FS_EINPUT, c->file, 0, 0,
			  "header byte %zu: %s", c->base + c->i, msg);
}

static void cur_ws(struct cursor *c)
{
	while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' ||
			       c->s[c->i] == '\r' || c->s[c->i] == '\n'))
		c->i++;
}

/* Is the next character ch? (never true at the end) */
static int cur_is(const struct cursor *c, char ch)
{
	return c->i < c->n && c->s[c->i] == ch;
}

/* A '...' or "..." literal without escapes into out[cap]. */
static enum fs_rc parse_str(struct cursor *c, char *out, size_t cap)
{
	char q;
	size_t len = 0;

	if (!cur_is(c, '\'') && !cur_is(c, '"'))
		return cur_fail(c, "expected a quoted string");
	q = c->s[c->i++];
	for (; c->i < c->n && c->s[c->i] != q; c->i++) {
		if (c->s[c->i] == '\\' || c->s[c->i] == '\n')
			return cur_fail(c, "escapes and newlines in strings "
					"are not supported");
		/* A NUL would end the C string: '<i4\0junk' read as '<i4'. */
		if ((unsigned char)c->s[c->i] < 0x20)
			return cur_fail(c, "control character 0x%02x in a string",
					(unsigned char)c->s[c->i]);
		if (len + 1 >= cap)
			return cur_fail(c, "string longer than %zu bytes",
					cap - 1);
		out[len++] = c->s[c->i];
	}
	if (c->i >= c->n)
		return cur_fail(c, "unterminated string");
	c->i++;
	out[len] = '\0';
	return FS_OK;
}

static enum fs_rc parse_descr(struct cursor *c, enum npy_dtype *dtype)
{
	char s[32];
	enum fs_rc rc;

	if (cur_is(c, '['))
		return cur_fail(c, "structured dtypes are not supported");
	rc = parse_str(c, s, sizeof(s));
	if (rc)
		return rc;
	for (int t = 0; t < NPY_DTYPE_COUNT; t++) {
		const char *d = dtypes[t].descr;

		if (strlen(s) != 3 || strcmp(s + 1, d + 1))
			continue;
		/* One byte has no byte order: numpy writes '|', any is fine. */
		if (s[0] == d[0] || (dtypes[t].size == 1 && strchr("<>=", s[0]))) {
			*dtype = (enum npy_dtype)t;
			return FS_OK;
		}
		if (s[0] == '>')
			return fs_fail_at(c->err, FS_EINPUT, c->file, 0, 0,
					  "big-endian dtype '%s' is not "
					  "supported; save with '<%s'", s, s + 1);
		break;
	}
	return fs_fail_at(c->err, FS_EINPUT, c->file, 0, 0,
			  "unsupported dtype '%s' (fragsim reads |i1 |u1 <i2 "
			  "<i4 <i8 <f2 <f4 <f8)", s);
}

static enum fs_rc parse_bool(struct cursor *c, int *v)
{
	if (c->n - c->i >= 4 && !memcmp(c->s + c->i, "True", 4)) {
		c->i += 4;
		*v = 1;
	} else if (c->n - c->i >= 5 && !memcmp(c->s + c->i, "False", 5)) {
		c->i += 5;
		*v = 0;
	} else {
		return cur_fail(c, "expected True or False");
	}
	return FS_OK;
}

/* A tuple of non-negative integers: "()", "(5,)", "(3, 4)", "(3, 4,)". */
static enum fs_rc parse_shape(struct cursor *c, struct npy_header *h)
{
	if (!cur_is(c, '('))
		return cur_fail(c, "shape must be a tuple such as (3, 4)");
	c->i++;
	cur_ws(c);
	h->ndim = 0;
	while (!cur_is(c, ')')) {
		size_t d = 0;
		int digits = 0, comma;

		if (cur_is(c, '-'))
			return cur_fail(c, "negative dimension in shape");
		for (; c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9';
		     c->i++, digits++)
			if (fs_size_mul(d, 10, &d) ||
			    fs_size_add(d, (size_t)(c->s[c->i] - '0'), &d))
				return cur_fail(c, "dimension too large");
		if (!digits)
			return cur_fail(c, "expected a dimension or ')'");
		if (h->ndim == NPY_MAX_DIMS)
			return cur_fail(c, "more than %d dimensions",
					NPY_MAX_DIMS);
		h->shape[h->ndim++] = d;
		cur_ws(c);
		comma = cur_is(c, ',');
		if (comma) {
			c->i++;
			cur_ws(c);
		} else if (!cur_is(c, ')')) {
			return cur_fail(c, "expected ',' or ')' in shape");
		}
		/* Python: (5) is the int 5, not a tuple. */
		if (!comma && h->ndim == 1)
			return cur_fail(c, "shape (%zu) is not a tuple; a 1-d "
					"shape is written (%zu,)", d, d);
	}
	c->i++;
	return FS_OK;
}

/* The dict: exactly the keys descr, fortran_order, shape, in any order. */
static enum fs_rc parse_dict(struct cursor *c, struct npy_header *h)
{
	int seen[3] = { 0, 0, 0 }, fortran = 0;
	static const char *const keys[3] = { "descr", "fortran_order", "shape" };
	enum fs_rc rc;

	cur_ws(c);
	if (!cur_is(c, '{'))
		return cur_fail(c, "expected '{'");
	c->i++;
	for (cur_ws(c); !cur_is(c, '}'); cur_ws(c)) {
		char key[32];
		int k;

		rc = parse_str(c, key, sizeof(key));
		if (rc)
			return rc;
		for (k = 0; k < 3 && strcmp(key, keys[k]); k++)
			;
		if (k == 3)
			return cur_fail(c, "unknown key '%s'", key);
		if (seen[k]++)
			return cur_fail(c, "duplicate key '%s'", key);
		cur_ws(c);
		if (!cur_is(c, ':'))
			return cur_fail(c, "expected ':' after '%s'", key);
		c->i++;
		cur_ws(c);
		rc = k == 0 ? parse_descr(c, &h->dtype) :
		     k == 1 ? parse_bool(c, &fortran) : parse_shape(c, h);
		if (rc)
			return rc;
		cur_ws(c);
		if (cur_is(c, ','))
			c->i++;
		else if (!cur_is(c, '}'))
			return cur_fail(c, "expected ',' or '}'");
	}
	c->i++;
	for (int k = 0; k < 3; k++)
		if (!seen[k])
			return fs_fail_at(c->err, FS_EINPUT, c->file, 0, 0,
					  "header has no '%s'", keys[k]);
	if (fortran)
		return fs_fail_at(c->err, FS_EINPUT, c->file, 0, 0,
				  "fortran_order arrays are not supported; "
				  "save np.ascontiguousarray(a)");
	/* Padding is spaces and the final '\n'; anything else is not ours. */
	cur_ws(c);
	if (c->i < c->n)
		return cur_fail(c, "unexpected text after the header dict");
	return FS_OK;
}

/*
 * Magic, version and header length from the first avail (<= 12) bytes:
 * *hoff is where the header text starts, *hlen its length, checked to
 * fit in total, the whole file length.
 */
static enum fs_rc prefix_parse(const unsigned char *p, size_t avail,
			       size_t total, const char *file, size_t *hoff,
			       size_t *hlen, struct fs_err *err)
{
	if (avail < MAGIC_LEN || memcmp(p, MAGIC, MAGIC_LEN))
		return fs_fail_at(err, FS_EINPUT, file, 0, 0,
				  "not a .npy file (bad magic)");
	if (avail < 8)
		return fs_fail_at(err, FS_EINPUT, file, 0, 0,
				  "truncated: no version after the magic");
	if (p[6] < 1 || p[6] > 3 || p[7] != 0)
		return fs_fail_at(err, FS_EINPUT, file, 0, 0,
				  "unsupported .npy version %d.%d (fragsim reads "
				  "1.0, 2.0 and 3.0)", p[6], p[7]);
	*hoff = p[6] == 1 ? 10 : 12;
	if (avail < *hoff)
		return fs_fail_at(err, FS_EINPUT, file, 0, 0,
				  "truncated: no header length");
	*hlen = (size_t)p[8] | (size_t)p[9] << 8;
	if (p[6] > 1)
		*hlen |= (size_t)p[10] << 16 | (size_t)p[11] << 24;
	if (*hlen > NPY_MAX_HEADER)
		return fs_fail_at(err, FS_EINPUT, file, 0, 0,
				  "header too long (%zu bytes, at most %d)",
				  *hlen, NPY_MAX_HEADER);
	if (*hlen > total - *hoff)
		return fs_fail_at(err, FS_EINPUT, file, 0, 0,
				  "truncated: header length says %zu bytes, "
				  "file has %zu after the prefix", *hlen,
				  total - *hoff);
	return FS_OK;
}

/* Parse the header text and check the data length against the file's. */
static enum fs_rc header_parse(const char *text, size_t hoff, size_t hlen,
			       size_t total, const char *file,
			       struct npy_header *h, struct fs_err *err)
{
	struct cursor c = { text, hlen, 0, hoff, file, err };
	char shp[HEADER_BUF];
	size_t have;
	enum fs_rc rc;

	memset(h, 0, sizeof(*h));
	rc = parse_dict(&c, h);
	if (rc)
		return rc;
	h->data_off = hoff + hlen;
	if (fs_size_prod(h->shape, h->ndim,
			 NPY_MAX_DATA_BYTES / dtypes[h->dtype].size, &h->count)) {
		shape_str(shp, sizeof(shp), h->ndim, h->shape);
		return fs_fail_at(err, FS_EINPUT, file, 0, 0,
				  "shape %s of %s is over 2^34 bytes", shp,
				  dtypes[h->dtype].name);
	}
	h->nbytes = h->count * dtypes[h->dtype].size;
	have = total - h->data_off;
	if (have < h->nbytes)
		return fs_fail_at(err, FS_EINPUT, file, 0, 0,
				  "truncated: header says %zu bytes of data, "
				  "file has %zu", h->nbytes, have);
	if (have > h->nbytes)
		return fs_fail_at(err, FS_EINPUT, file, 0, 0,
				  "%zu trailing bytes after the %zu bytes of "
				  "data", have - h->nbytes, h->nbytes);
	return FS_OK;
}

/* Fill out from h, taking ownership of data. */
static void array_set(struct npy_array *out, const struct npy_header *h,
		      void *data)
{
	out->dtype = h->dtype;
	out->ndim = h->ndim;
	memcpy(out->shape, h->shape, sizeof(out->shape));
	out->count = h->count;
	out->data = data;
}

static enum fs_rc oom(struct fs_err *err, const char *file, size_t n)
{
	return fs_fail_at(err, FS_ENOMEM, file, 0, 0,
			  "out of memory: the file's bytes, %zu bytes", n);
}

enum fs_rc npy_decode(const void *buf, size_t len, const char *name,
		      struct npy_array *out, struct fs_err *err)
{
	const unsigned char *p = buf;
	struct npy_header h;
	size_t hoff = 0, hlen = 0;	/* -O3 cannot see prefix_parse sets them */
	enum fs_rc rc;
	void *data;

	memset(out, 0, sizeof(*out));
	rc = prefix_parse(p, len < 12 ? len : 12, len, name, &hoff, &hlen, err);
	if (!rc)
		rc = header_parse((const char *)p + hoff, hoff, hlen, len, name,
				  &h, err);
	if (rc)
		return rc;
	data = malloc(h.nbytes ? h.nbytes : 1);
	if (!data)
		return oom(err, name, h.nbytes);
	if (h.nbytes)
		memcpy(data, p + h.data_off, h.nbytes);
	array_set(out, &h, data);
	return FS_OK;
}

enum fs_rc npy_read(const char *path, struct npy_array *out,
		    struct fs_err *err)
{
	unsigned char prefix[12];
	char *text = NULL;
	void *data = NULL;
	struct npy_header h;
	size_t hoff = 0, hlen = 0, total, got;
	enum fs_rc rc;
	FILE *f;

	memset(out, 0, sizeof(*out));
	/* The length decides truncated vs trailing before any data read. */
	rc = readfile_open(path, &f, &total, err);
	if (rc)
		return rc;
	got = fread(prefix, 1, total < 12 ? total : 12, f);
	rc = prefix_parse(prefix, got, total, path, &hoff, &hlen, err);
	if (rc)
		goto out;
	text = malloc(hlen ? hlen : 1);
	if (!text) {
		rc = oom(err, path, hlen);
		goto out;
	}
	if (fseek(f, (long)hoff, SEEK_SET) != 0 ||
	    fread(text, 1, hlen, f) != hlen) {
		rc = fs_fail_at(err, FS_EINPUT, path, 0, 0,
				"read failed in the header");
		goto out;
	}
	rc = header_parse(text, hoff, hlen, total, path, &h, err);
	if (rc)
		goto out;
	data = malloc(h.nbytes ? h.nbytes : 1);
	if (!data) {
		rc = oom(err, path, h.nbytes);
		goto out;
	}
	/* A file that shrank since fstat is still a truncated file. */
	if (fread(data, 1, h.nbytes, f) != h.nbytes) {
		rc = fs_fail_at(err, FS_EINPUT, path, 0, 0,
				"truncated: read failed in the data");
		goto out;
	}
	array_set(out, &h, data);
	data = NULL;
out:
	free(data);
	free(text);
	fclose(f);
	return rc;
}

void npy_free(struct npy_array *a)
{
	if (!a)
		return;
	free(a->data);
	memset(a, 0, sizeof(*a));
}
