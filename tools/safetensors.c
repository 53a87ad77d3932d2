/*
 * safetensors.c - safetensors writer (see safetensors.h).
 *
 * Why: one file with every golden tensor and the manifest loads in one
 * call from Python (safetensors.numpy.load_file) or Rust, and is easy to
 * mmap; DESIGN.md 3 offers it as `--format safetensors`.
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

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "outdir.h"

static const char *const st_dtypes[NPY_DTYPE_COUNT] = {
	[NPY_I8] = "I8", [NPY_U8] = "U8", [NPY_I16] = "I16", [NPY_I32] = "I32",
	[NPY_I64] = "I64", [NPY_F16] = "F16", [NPY_F32] = "F32",
	[NPY_F64] = "F64",
};

const char *safetensors_dtype_name(enum npy_dtype dtype)
{
	return (unsigned)dtype < NPY_DTYPE_COUNT ? st_dtypes[dtype] : NULL;
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

enum fs_rc safetensors_add(struct safetensors *st, const char *name,
			   enum npy_dtype dtype, int ndim, const size_t *shape,
			   const void *data, struct fs_err *err)
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
	    fs_size_mul(count, npy_dtype_size(dtype), &nbytes) ||
	    fs_size_add(st->data_bytes, nbytes, &total))
		return fs_fail(err, FS_EINTERNAL, "safetensors: '%s' is too "
			       "large", name);
	if (nbytes && !data)
		return fs_fail(err, FS_EINTERNAL, "safetensors: '%s' has no "
			       "data", name);
	if (grow((void **)&st->tensors, st->ntensors, &st->cap_tensors,
		 sizeof(*st->tensors)))
		return fs_fail(err, FS_EINTERNAL, "safetensors: out of memory");
	t = &st->tensors[st->ntensors];
	memset(t, 0, sizeof(*t));
	t->name = strdup(name);
	if (!t->name)
		return fs_fail(err, FS_EINTERNAL, "safetensors: out of memory");
	t->dtype = dtype;
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
		return fs_fail(err, FS_EINTERNAL, "safetensors: out of memory");
	m = &st->meta[st->nmeta];
	m->key = strdup(key);
	m->value = strdup(value);
	if (!m->key || !m->value) {
		free(m->key);
		free(m->value);
		return fs_fail(err, FS_EINTERNAL, "safetensors: out of memory");
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
		json_key_string(&j, "dtype", st_dtypes[t->dtype]);
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
		return fs_fail(err, FS_EINTERNAL, "safetensors: out of memory");
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

void safetensors_free(struct safetensors *st)
{
	for (size_t i = 0; i < st->ntensors; i++)
		free(st->tensors[i].name);
	for (size_t i = 0; i < st->nmeta; i++) {
		free(st->meta[i].key);
		free(st->meta[i].value);
	}
	free(st->tensors);
	free(st->meta);
	safetensors_init(st);
}
