/*
 * safetensors.c - safetensors writer and reader (see safetensors.h).
 *
 * Why: one file with every golden tensor and the manifest loads in one
 * call from Python (safetensors.numpy.load_file) or Rust, and is easy to
 * mmap; docs/design.md 3.3 offers it as `--format safetensors`.
 *
 * Layout (github.com/huggingface/safetensors, "Format"):
 *
 *   | N: u64 LE | header: N bytes of JSON, space-padded | data area |
 *
 *   header = {"__metadata__": {"k": "v", ...},
 *             "<name>": {"dtype": "I8", "shape": [2, 3],
 *                        "data_offsets": [begin, end]}, ...}
 *
 * Offsets are relative to the start of the data area; the tensors tile
 * it with no gaps, as readers require. We write the header compact, keys
 * in insertion order (__metadata__ first, omitted when empty), and pad
 * it with spaces so that N is a multiple of 8, as the reference writer
 * does.
 *
 * Worked example: one tensor "a", I8, shape [3], bytes 01 02 03. The
 * header {"a":{"dtype":"I8","shape":[3],"data_offsets":[0,3]}} is 53
 * bytes, padded with 3 spaces to N = 56 = 0x38:
 *
 *   38 00 00 00 00 00 00 00 | {"a":...}}    | 01 02 03
 *   N                       | 56 bytes      | data area, 3 bytes
 *
 * The data area is not aligned per tensor: data follows insertion order,
 * so a caller that wants every tensor naturally aligned for mmap adds
 * the wider dtypes first (8 + N is a multiple of 8, so the first tensor
 * always is).
 */
#include "safetensors.h"

#include <stdarg.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "outdir.h"
#include "readfile.h"

static const char *const st_dtypes[NPY_DTYPE_COUNT] = {
	[NPY_I8] = "I8", [NPY_U8] = "U8", [NPY_I16] = "I16", [NPY_I32] = "I32",
	[NPY_I64] = "I64", [NPY_F16] = "F16", [NPY_F32] = "F32",
	[NPY_F64] = "F64",
};

const char *safetensors_dtype_name(enum npy_dtype dtype)
{
	return (unsigned)dtype < NPY_DTYPE_COUNT ? st_dtypes[dtype] : NULL;
}

/*
 * BF16 is the top 16 bits of a float32 (bfloat16, as torch and the
 * safetensors spec define it). Rounding to nearest, ties to even: add
 * 0x7fff plus the kept part's lowest bit, then drop the low half; a NaN
 * stays a (quiet) NaN instead of rounding into infinity.
 */
uint16_t safetensors_bf16_from_f32(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x0040u);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

float safetensors_bf16_to_f32(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* Bytes per element as stored: BF16 is 2 whatever dtype says. */
static size_t elem_size(enum npy_dtype dtype, int bf16)
{
	return bf16 ? 2 : npy_dtype_size(dtype);
}

void safetensors_init(struct safetensors *st)
{
	memset(st, 0, sizeof(*st));
}

/* Room for one more element of size sz in *arr (n used, *cap slots). */
static int grow(void **arr, size_t n, size_t *cap, size_t sz)
{
	size_t ncap = *cap ? *cap * 2 : 8, bytes;
	void *p;

	if (n < *cap)
		return 0;
	if (fs_size_mul(ncap, sz, &bytes))
		return -1;
	p = realloc(*arr, bytes);
	if (!p)
		return -1;
	*arr = p;
	*cap = ncap;
	return 0;
}

static enum fs_rc add_tensor(struct safetensors *st, const char *name,
			     enum npy_dtype dtype, int bf16, int ndim,
			     const size_t *shape, const void *data,
			     struct fs_err *err)
{
	struct safetensors_tensor *t;
	size_t count, nbytes, total;

	if (!safetensors_dtype_name(dtype))
		return fs_fail(err, FS_EINTERNAL, "safetensors: invalid dtype %d",
			       (int)dtype);
	if (!name[0] || !strcmp(name, "__metadata__"))
		return fs_fail(err, FS_EINTERNAL, "safetensors: '%s' cannot "
			       "name a tensor", name);
	if (ndim < 0 || ndim > NPY_MAX_DIMS)
		return fs_fail(err, FS_EINTERNAL, "safetensors: '%s': ndim %d "
			       "not in 0..%d", name, ndim, NPY_MAX_DIMS);
	for (size_t i = 0; i < st->ntensors; i++)
		if (!strcmp(st->tensors[i].name, name))
			return fs_fail(err, FS_EINTERNAL, "safetensors: "
				       "duplicate tensor '%s'", name);
	if (fs_size_prod(shape, ndim, SIZE_MAX, &count) ||
	    fs_size_mul(count, elem_size(dtype, bf16), &nbytes) ||
	    fs_size_add(st->data_bytes, nbytes, &total))
		return fs_fail(err, FS_EINTERNAL, "safetensors: '%s' is too "
			       "large", name);
	if (nbytes && !data)
		return fs_fail(err, FS_EINTERNAL, "safetensors: '%s' has no "
			       "data", name);
	if (grow((void **)&st->tensors, st->ntensors, &st->cap_tensors,
		 sizeof(*st->tensors)))
		return fs_fail(err, FS_ENOMEM, "out of memory: a safetensors file");
	t = &st->tensors[st->ntensors];
	memset(t, 0, sizeof(*t));
	t->name = strdup(name);
	if (!t->name)
		return fs_fail(err, FS_ENOMEM, "out of memory: a safetensors file");
	t->dtype = dtype;
	t->bf16 = bf16;
	t->ndim = ndim;
	if (ndim)
		memcpy(t->shape, shape, sizeof(*shape) * (size_t)ndim);
	t->data = data;
	t->nbytes = nbytes;
	t->begin = st->data_bytes;
	st->data_bytes = total;
	st->ntensors++;
	return FS_OK;
}

enum fs_rc safetensors_add(struct safetensors *st, const char *name,
			   enum npy_dtype dtype, int ndim, const size_t *shape,
			   const void *data, struct fs_err *err)
{
	return add_tensor(st, name, dtype, 0, ndim, shape, data, err);
}

enum fs_rc safetensors_add_bf16(struct safetensors *st, const char *name,
				int ndim, const size_t *shape,
				const uint16_t *bits, struct fs_err *err)
{
	return add_tensor(st, name, NPY_F32, 1, ndim, shape, bits, err);
}

enum fs_rc safetensors_add_meta(struct safetensors *st, const char *key,
				const char *value, struct fs_err *err)
{
	struct safetensors_meta *m;

	for (size_t i = 0; i < st->nmeta; i++)
		if (!strcmp(st->meta[i].key, key))
			return fs_fail(err, FS_EINTERNAL, "safetensors: "
				       "duplicate metadata key '%s'", key);
	if (grow((void **)&st->meta, st->nmeta, &st->cap_meta,
		 sizeof(*st->meta)))
		return fs_fail(err, FS_ENOMEM, "out of memory: a safetensors file");
	m = &st->meta[st->nmeta];
	m->key = strdup(key);
	m->value = strdup(value);
	if (!m->key || !m->value) {
		free(m->key);
		free(m->value);
		return fs_fail(err, FS_ENOMEM, "out of memory: a safetensors file");
	}
	st->nmeta++;
	return FS_OK;
}

enum fs_rc safetensors_header(const struct safetensors *st, char **text,
			      size_t *len, struct fs_err *err)
{
	struct json j;
	size_t n, pad;
	char *out;

	*text = NULL;
	*len = 0;
	json_init_mem(&j, 0);
	json_begin_object(&j);
	if (st->nmeta) {
		json_key(&j, "__metadata__");
		json_begin_object(&j);
		for (size_t i = 0; i < st->nmeta; i++)
			json_key_string(&j, st->meta[i].key, st->meta[i].value);
		json_end_object(&j);
	}
	for (size_t i = 0; i < st->ntensors; i++) {
		const struct safetensors_tensor *t = &st->tensors[i];

		json_key(&j, t->name);
		json_begin_object(&j);
		json_key_string(&j, "dtype", t->bf16 ? "BF16" : st_dtypes[t->dtype]);
		json_key(&j, "shape");
		json_begin_array(&j);
		for (int d = 0; d < t->ndim; d++)
			json_uint(&j, t->shape[d]);
		json_end_array(&j);
		json_key(&j, "data_offsets");
		json_begin_array(&j);
		json_uint(&j, t->begin);
		json_uint(&j, t->begin + t->nbytes);
		json_end_array(&j);
		json_end_object(&j);
	}
	json_end_object(&j);
	if (json_finish(&j)) {
		enum fs_rc rc = fs_fail(err, j.rc, "safetensors: %s", j.err.msg);

		json_free(&j);
		return rc;
	}
	n = j.len;
	pad = (8 - n % 8) % 8;
	if (n + pad > SAFETENSORS_MAX_HEADER) {
		json_free(&j);
		return fs_fail(err, FS_EINTERNAL, "safetensors: header of %zu "
			       "bytes is over the %zu readers accept", n + pad,
			       SAFETENSORS_MAX_HEADER);
	}
	out = realloc(j.buf, n + pad + 1);
	if (!out) {
		json_free(&j);
		return fs_fail(err, FS_ENOMEM, "out of memory: a safetensors file");
	}
	memset(out + n, ' ', pad);
	out[n + pad] = '\0';
	*text = out;
	*len = n + pad;
	return FS_OK;
}

enum fs_rc safetensors_write(const struct safetensors *st, const char *path,
			     struct fs_err *err)
{
	unsigned char nle[8];
	struct outdir_file f;
	size_t hlen;
	char *hdr;
	enum fs_rc rc;

	rc = safetensors_header(st, &hdr, &hlen, err);
	if (rc) {
		/* Name the file the error is about, keep the message. */
		if (err)
			snprintf(err->file, sizeof(err->file), "%s", path);
		return rc;
	}
	for (int i = 0; i < 8; i++)
		nle[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
	rc = outdir_file_open(&f, path, err);
	if (!rc)
		rc = outdir_file_write(&f, nle, sizeof(nle), err);
	if (!rc)
		rc = outdir_file_write(&f, hdr, hlen, err);
	for (size_t i = 0; !rc && i < st->ntensors; i++)
		rc = outdir_file_write(&f, st->tensors[i].data,
				       st->tensors[i].nbytes, err);
	if (!rc)
		rc = outdir_file_commit(&f, err);
	free(hdr);
	return rc;
}

/* The metadata pairs the writer and the reader both own. */
static void meta_free(struct safetensors_meta *meta, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(meta[i].key);
		free(meta[i].value);
	}
	free(meta);
}

void safetensors_free(struct safetensors *st)
{
	for (size_t i = 0; i < st->ntensors; i++)
		free(st->tensors[i].name);
	free(st->tensors);
	meta_free(st->meta, st->nmeta);
	safetensors_init(st);
}

/* ---- reader ------------------------------------------------------------ */

/*
 * Why strict: the reference reader (safetensors' Rust crate) refuses a
 * header whose offsets leave a gap, overlap or run past the data, and
 * so does this one; on top, a repeated key (which the crate's serde
 * would resolve one way and Python's json another), an unknown key in
 * a tensor entry, and a dtype fragsim has no use for are errors, since
 * a tensor read wrongly is a wrong answer downstream.
 */

static enum fs_rc st_fail(struct fs_err *err, const char *file,
			  const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum fs_rc st_fail(struct fs_err *err, const char *file,
			  const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fs_fail_at(err, FS_EINPUT, file, 0, 0, "%s", msg);
}

/* A BF16 entry reads as F32 (exactly: see safetensors_bf16_to_f32). */
static int dtype_by_name(const char *s, enum npy_dtype *out, int *bf16)
{
	*bf16 = !strcmp(s, "BF16");
	if (*bf16) {
		*out = NPY_F32;
		return 0;
	}
	for (int t = 0; t < NPY_DTYPE_COUNT; t++)
		if (!strcmp(s, st_dtypes[t])) {
			*out = (enum npy_dtype)t;
			return 0;
		}
	return -1;
}

/* One "name": {"dtype", "shape", "data_offsets"} entry into e. */
static enum fs_rc entry_parse(const char *file, const char *name,
			      const struct json_value *v,
			      struct safetensors_entry *e, struct fs_err *err)
{
	const struct json_value *dt, *sh, *off;
	uint64_t b, x;
	size_t nbytes;

	if (v->type != JSON_OBJECT)
		return st_fail(err, file, "byte %zu: tensor '%s': expected an "
			       "object with dtype, shape and data_offsets",
			       v->at, name);
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->keys[i], "dtype") && strcmp(v->keys[i], "shape") &&
		    strcmp(v->keys[i], "data_offsets"))
			return st_fail(err, file, "byte %zu: tensor '%s': unknown "
				       "key '%s' (expected dtype, shape, "
				       "data_offsets)", v->items[i].at, name,
				       v->keys[i]);
	dt = json_member(v, "dtype");
	sh = json_member(v, "shape");
	off = json_member(v, "data_offsets");
	if (!dt || !sh || !off)
		return st_fail(err, file, "byte %zu: tensor '%s': missing '%s'",
			       v->at, name, !dt ? "dtype" : !sh ? "shape" :
			       "data_offsets");
	if (dt->type != JSON_STRING || dtype_by_name(dt->text, &e->dtype, &e->bf16))
		return st_fail(err, file, "byte %zu: tensor '%s': unsupported "
			       "dtype %s%s%s (fragsim reads I8 U8 I16 I32 I64 "
			       "F16 BF16 F32 F64)", dt->at, name,
			       dt->type == JSON_STRING ? "'" : "",
			       dt->type == JSON_STRING ? dt->text : "(not a string)",
			       dt->type == JSON_STRING ? "'" : "");
	if (sh->type != JSON_ARRAY || sh->n > NPY_MAX_DIMS)
		return st_fail(err, file, "byte %zu: tensor '%s': shape must be "
			       "a list of at most %d sizes", sh->at, name,
			       NPY_MAX_DIMS);
	e->ndim = (int)sh->n;
	for (size_t i = 0; i < sh->n; i++) {
		if (json_u64(&sh->items[i], &x) || x > SIZE_MAX)
			return st_fail(err, file, "byte %zu: tensor '%s': shape[%zu] "
				       "must be a non-negative integer",
				       sh->items[i].at, name, i);
		e->shape[i] = (size_t)x;
	}
	if (off->type != JSON_ARRAY || off->n != 2)
		return st_fail(err, file, "byte %zu: tensor '%s': data_offsets "
			       "must be [begin, end] with begin <= end", off->at,
			       name);
	/* Each offset by itself first: [0, 2^64] is a size past any file,
	 * not offsets out of order (which it was reported as). */
	for (int i = 0; i < 2; i++) {
		const struct json_value *o = &off->items[i];
		uint64_t *dst = i ? &x : &b;

		size_t nd = 0;

		if (!json_u64(o, dst) && *dst <= SIZE_MAX)
			continue;
		while (o->type == JSON_NUMBER && nd < o->len && o->text[nd] >= '0' &&
		       o->text[nd] <= '9')
			nd++;
		if (o->type == JSON_NUMBER && nd && nd == o->len)
			return st_fail(err, file, "byte %zu: tensor '%s': data_offsets[%d] "
				       "%.*s is past %s, larger than any file", o->at, name, i,
				       o->len > 40 ? 40 : (int)o->len, o->text,
				       SIZE_MAX == UINT64_MAX ? "2^64 - 1" : "SIZE_MAX");
		return st_fail(err, file, "byte %zu: tensor '%s': data_offsets[%d] must "
			       "be a non-negative integer", o->at, name, i);
	}
	if (b > x)
		return st_fail(err, file, "byte %zu: tensor '%s': data_offsets "
			       "must be [begin, end] with begin <= end, not [%" PRIu64
			       ", %" PRIu64 "]", off->at, name, b, x);
	e->begin = (size_t)b;
	e->end = (size_t)x;
	if (fs_size_prod(e->shape, e->ndim, NPY_MAX_DATA_BYTES /
			 elem_size(e->dtype, e->bf16), &e->count))
		return st_fail(err, file, "byte %zu: tensor '%s': shape is over "
			       "2^34 bytes", sh->at, name);
	nbytes = e->count * elem_size(e->dtype, e->bf16);
	if (nbytes != e->end - e->begin)
		return st_fail(err, file, "byte %zu: tensor '%s': %s shape "
			       "needs %zu bytes, data_offsets span %zu", off->at,
			       name, e->bf16 ? "BF16" : st_dtypes[e->dtype], nbytes,
			       e->end - e->begin);
	return FS_OK;
}

static int cmp_begin(const void *a, const void *b)
{
	const struct safetensors_entry *x = *(const struct safetensors_entry *const *)a;
	const struct safetensors_entry *y = *(const struct safetensors_entry *const *)b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Sorted by begin, each tensor starts where the one before ends, and
 * the last ends at the data area's end: no gap, overlap or tail. */
static enum fs_rc check_tiling(const struct safetensors_file *f,
			       struct fs_err *err)
{
	const struct safetensors_entry **by = malloc((f->n ? f->n : 1) * sizeof(*by));
	size_t at = 0;
	enum fs_rc rc = FS_OK;

	if (!by)
		return fs_fail_at(err, FS_ENOMEM, f->origin, 0, 0, "out of memory: the file's tables");
	for (size_t i = 0; i < f->n; i++)
		by[i] = &f->t[i];
	qsort(by, f->n, sizeof(*by), cmp_begin);
	for (size_t i = 0; i < f->n && !rc; i++) {
		if (by[i]->begin < at)
			rc = st_fail(err, f->origin, "tensor '%s' (bytes %zu..%zu) "
				     "overlaps '%s'", by[i]->name, by[i]->begin,
				     by[i]->end, by[i - 1]->name);
		else if (by[i]->begin > at)
			rc = st_fail(err, f->origin, "a gap of %zu bytes before "
				     "tensor '%s' in the data", by[i]->begin - at,
				     by[i]->name);
		else if (by[i]->end > f->data_len)
			rc = st_fail(err, f->origin, "tensor '%s' ends at byte %zu "
				     "of the data, which has %zu", by[i]->name,
				     by[i]->end, f->data_len);
		at = by[i]->end;
	}
	if (!rc && at != f->data_len)
		rc = st_fail(err, f->origin, "%zu bytes after the last tensor",
			     f->data_len - at);
	free(by);
	return rc;
}

static enum fs_rc meta_parse(struct safetensors_file *f,
			     const struct json_value *v, struct fs_err *err)
{
	if (v->type != JSON_OBJECT)
		return st_fail(err, f->origin, "byte %zu: __metadata__ must be "
			       "an object of strings", v->at);
	f->meta = calloc(v->n ? v->n : 1, sizeof(*f->meta));
	if (!f->meta)
		return fs_fail_at(err, FS_ENOMEM, f->origin, 0, 0, "out of memory: the file's tables");
	for (size_t i = 0; i < v->n; i++) {
		if (v->items[i].type != JSON_STRING)
			return st_fail(err, f->origin, "byte %zu: __metadata__ "
				       "'%s' must be a string", v->items[i].at,
				       v->keys[i]);
		f->meta[i].key = strdup(v->keys[i]);
		f->meta[i].value = strdup(v->items[i].text);
		f->nmeta++;
		if (!f->meta[i].key || !f->meta[i].value)
			return fs_fail_at(err, FS_ENOMEM, f->origin, 0, 0,
					  "out of memory: the file's tables");
	}
	return FS_OK;
}

static enum fs_rc header_load(struct safetensors_file *f, const char *text,
			      size_t hlen, struct fs_err *err)
{
	struct json_value *root;
	enum fs_rc rc;

	/* The reference writer starts the header with '{' and pads with
	 * spaces; json_parse takes care of the padding. */
	if (!hlen || text[0] != '{')
		return st_fail(err, f->origin, "byte 8: the header must be a "
			       "JSON object");
	rc = json_parse(text, hlen, f->origin, 8, &root, err);
	if (rc)
		return rc;
	f->t = calloc(root->n ? root->n : 1, sizeof(*f->t));
	if (!f->t)
		rc = fs_fail_at(err, FS_ENOMEM, f->origin, 0, 0, "out of memory: the file's tables");
	for (size_t i = 0; i < root->n && !rc; i++) {
		const char *name = root->keys[i];

		if (!strcmp(name, "__metadata__")) {
			rc = meta_parse(f, &root->items[i], err);
			continue;
		}
		if (!name[0]) {
			rc = st_fail(err, f->origin, "byte %zu: a tensor with an "
				     "empty name", root->items[i].at);
			break;
		}
		rc = entry_parse(f->origin, name, &root->items[i], &f->t[f->n], err);
		if (!rc && !(f->t[f->n].name = strdup(name)))
			rc = fs_fail_at(err, FS_ENOMEM, f->origin, 0, 0,
					"out of memory: the file's tables");
		if (!rc)
			f->n++;
	}
	json_value_free(root);
	return rc;
}

/* Decode buf[0..len), which f takes over (freed on failure too). */
static enum fs_rc decode_owned(unsigned char *buf, size_t len, const char *name,
			       struct safetensors_file *f, struct fs_err *err)
{
	uint64_t hlen = 0;
	enum fs_rc rc;

	memset(f, 0, sizeof(*f));
	snprintf(f->origin, sizeof(f->origin), "%s", name ? name : "");
	f->buf = buf;
	if (len < 8) {
		rc = st_fail(err, f->origin, "truncated: %zu bytes, not even the "
			     "8-byte header length", len);
		goto out;
	}
	for (int i = 0; i < 8; i++)
		hlen |= (uint64_t)buf[i] << (8 * i);
	if (hlen > SAFETENSORS_MAX_HEADER)
		rc = st_fail(err, f->origin, "header length %llu is over the %zu "
			     "bytes readers accept", (unsigned long long)hlen,
			     SAFETENSORS_MAX_HEADER);
	else if (hlen > len - 8)
		rc = st_fail(err, f->origin, "truncated: header length says %llu "
			     "bytes, the file has %zu after the length",
			     (unsigned long long)hlen, len - 8);
	else if (len - 8 - hlen > NPY_MAX_DATA_BYTES)
		rc = st_fail(err, f->origin, "%zu bytes of data, over fragsim's "
			     "2^34", len - 8 - (size_t)hlen);
	else
		rc = FS_OK;
	if (rc)
		goto out;
	f->data = buf + 8 + hlen;
	f->data_len = len - 8 - (size_t)hlen;
	rc = header_load(f, (const char *)buf + 8, (size_t)hlen, err);
	if (!rc)
		rc = check_tiling(f, err);
out:
	if (rc)
		safetensors_file_free(f);
	return rc;
}

enum fs_rc safetensors_decode(const void *buf, size_t len, const char *name,
			      struct safetensors_file *f, struct fs_err *err)
{
	unsigned char *copy = malloc(len ? len : 1);

	memset(f, 0, sizeof(*f));
	if (!copy)
		return fs_fail_at(err, FS_ENOMEM, name, 0, 0,
				  "out of memory: the file's bytes, %zu bytes", len);
	if (len)
		memcpy(copy, buf, len);
	return decode_owned(copy, len, name, f, err);
}

enum fs_rc safetensors_read(const char *path, struct safetensors_file *f,
			    struct fs_err *err)
{
	size_t size;
	FILE *fp;
	unsigned char *b;
	enum fs_rc rc;

	memset(f, 0, sizeof(*f));
	rc = readfile_open(path, &fp, &size, err);
	if (rc)
		return rc;
	if (size > 8 + SAFETENSORS_MAX_HEADER + NPY_MAX_DATA_BYTES) {
		fclose(fp);
		return st_fail(err, path, "file too large (%zu bytes)", size);
	}
	b = malloc(size ? size : 1);
	if (!b) {
		fclose(fp);
		return fs_fail_at(err, FS_ENOMEM, path, 0, 0,
				  "out of memory: the file's bytes, %zu bytes", size);
	}
	if (fread(b, 1, size, fp) != size) {
		fclose(fp);
		free(b);
		return st_fail(err, path, "read failed");
	}
	fclose(fp);
	return decode_owned(b, size, path, f, err);
}

const struct safetensors_entry *safetensors_find(const struct safetensors_file *f,
						 const char *name)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->t[i].name, name))
			return &f->t[i];
	return NULL;
}

enum fs_rc safetensors_get(const struct safetensors_file *f, const char *name,
			   struct npy_array *out, struct fs_err *err)
{
	const struct safetensors_entry *e = safetensors_find(f, name);
	size_t nbytes;

	memset(out, 0, sizeof(*out));
	if (!e) {
		char list[400] = "";
		size_t at = 0;

		for (size_t i = 0; i < f->n && at < sizeof(list); i++)
			at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s",
					       i ? ", " : "", f->t[i].name);
		return st_fail(err, f->origin, "no tensor '%s' (it has: %s)", name,
			       f->n ? list : "none");
	}
	nbytes = e->count * npy_dtype_size(e->dtype);
	out->data = malloc(nbytes ? nbytes : 1);
	if (!out->data)
		return fs_fail_at(err, FS_ENOMEM, f->origin, 0, 0,
				  "out of memory: a tensor's data, %zu bytes", nbytes);
	if (e->bf16) {
		float *o = out->data;
		const unsigned char *p = f->data + e->begin;

		/* little endian in the file, whatever the host */
		for (size_t i = 0; i < e->count; i++)
			o[i] = safetensors_bf16_to_f32((uint16_t)(p[2 * i] |
								  p[2 * i + 1] << 8));
	} else {
		memcpy(out->data, f->data + e->begin, nbytes);
	}
	out->dtype = e->dtype;
	out->ndim = e->ndim;
	memcpy(out->shape, e->shape, sizeof(out->shape));
	out->count = e->count;
	return FS_OK;
}

void safetensors_file_free(struct safetensors_file *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->t[i].name);
	free(f->t);
	meta_free(f->meta, f->nmeta);
	free(f->buf);
	memset(f, 0, sizeof(*f));
}

const char *tensor_spec_colon(const char *spec)
{
	static const char ext[] = ".safetensors:";
	const char *hit = NULL;

	for (const char *p = strstr(spec, ext); p; p = strstr(p + 1, ext))
		hit = p;
	return hit ? hit + sizeof(ext) - 2 : NULL;
}

enum fs_rc tensor_read(const char *spec, struct npy_array *out,
		       struct fs_err *err)
{
	const char *colon = tensor_spec_colon(spec);
	struct safetensors_file f;
	char path[4096];
	enum fs_rc rc;

	if (!colon)
		return npy_read(spec, out, err);
	memset(out, 0, sizeof(*out));
	if ((size_t)(colon - spec) >= sizeof(path))
		return st_fail(err, spec, "path too long");
	memcpy(path, spec, (size_t)(colon - spec));
	path[colon - spec] = '\0';
	if (!colon[1])
		return st_fail(err, spec, "no tensor name after '%s:'", path);
	rc = safetensors_read(path, &f, err);
	if (rc)
		return rc;
	rc = safetensors_get(&f, colon + 1, out, err);
	safetensors_file_free(&f);
	return rc;
}
