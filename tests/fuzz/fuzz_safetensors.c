/*
 * fuzz_safetensors.c - the safetensors reader and writer
 * (lib/safetensors.c). The raw input goes to the reader
 * (safetensors_decode), which must refuse it with a message or give
 * entries that lie inside the data and copy out whole. Then the input is
 * read as a little program of tensors and metadata to add; the header the
 * writer makes is read back with the YAML loader (JSON is YAML), and the
 * whole file through the reader: every name, value, dtype, shape and
 * offset must come back as given.
 *
 * Input, repeated until it runs out (a short record ends it):
 *   't' name '\0' dtype ndim shape[ndim]   a tensor; dtype and ndim are
 *                                          taken as given (bad ones must
 *                                          be refused), each dim % 4,
 *                                          data from a zeroed buffer
 *   'm' key '\0' value '\0'                a metadata entry
 * Names and values are kept to bytes 1..126: control characters, quotes
 * and backslashes all need escaping, while DEL and some non-ASCII
 * characters (U+2028, U+0085) are fine raw in JSON but refused or line
 * breaks in YAML, so the check-by-YAML would fail on them for the
 * loader's sake, not the writer's.
 */
#include "fuzz.h"

#include "../../lib/safetensors.h"
#include "../../lib/yamldoc.h"

#define MAX_ITEMS 16
#define MAX_STR 64

/* A string of bytes 1..126 ending at '\0'; its length, or -1. */
static int take_str(const uint8_t *data, size_t size, size_t *at, char *out)
{
	int n = 0;

	while (*at < size && data[*at] && n < MAX_STR) {
		if (data[*at] > 126)
			return -1;
		out[n++] = (char)data[(*at)++];
	}
	if (*at == size || data[*at])
		return -1;
	(*at)++;
	out[n] = '\0';
	return n;
}

/* n's value in the parsed header must be the unsigned integer want. */
static void check_uint(struct ydoc *d, yaml_node_t *n, size_t want)
{
	struct fs_err err;
	int64_t v;

	FUZZ_ASSERT(n && ydoc_int(d, n, "x", 0, INT64_MAX, &v, &err) == FS_OK);
	FUZZ_ASSERT((size_t)v == want);
}

static void check_header(struct safetensors *st, const char *text, size_t len)
{
	struct fs_err err;
	struct ydoc d;
	yaml_node_t *top, *n, *m;
	char s[MAX_STR + 1];

	FUZZ_ASSERT(len % 8 == 0);
	FUZZ_ASSERT(ydoc_load(&d, text, len, "header", &err) == FS_OK);
	top = ydoc_root(&d);
	FUZZ_ASSERT(top && top->type == YAML_MAPPING_NODE);
	FUZZ_ASSERT((size_t)(top->data.mapping.pairs.top - top->data.mapping.pairs.start) ==
		    st->ntensors + (st->nmeta > 0));
	for (size_t i = 0; i < st->nmeta; i++) {
		m = ydoc_get(&d, top, "__metadata__");
		FUZZ_ASSERT(m && m->type == YAML_MAPPING_NODE);
		n = ydoc_get(&d, m, st->meta[i].key);
		FUZZ_ASSERT(n && ydoc_str(&d, n, "v", s, sizeof(s), &err) == FS_OK);
		FUZZ_ASSERT(!strcmp(s, st->meta[i].value));
	}
	for (size_t i = 0; i < st->ntensors; i++) {
		const struct safetensors_tensor *t = &st->tensors[i];

		m = ydoc_get(&d, top, t->name);
		FUZZ_ASSERT(m && m->type == YAML_MAPPING_NODE);
		n = ydoc_get(&d, m, "dtype");
		FUZZ_ASSERT(n && ydoc_str(&d, n, "dtype", s, sizeof(s), &err) == FS_OK);
		FUZZ_ASSERT(!strcmp(s, safetensors_dtype_name(t->dtype)));
		n = ydoc_get(&d, m, "shape");
		FUZZ_ASSERT(n && ydoc_seq_len(n) == t->ndim);
		for (int k = 0; k < t->ndim; k++)
			check_uint(&d, ydoc_seq_item(&d, n, k), t->shape[k]);
		n = ydoc_get(&d, m, "data_offsets");
		FUZZ_ASSERT(n && ydoc_seq_len(n) == 2);
		/* the tensors tile the data area in order, no gaps */
		check_uint(&d, ydoc_seq_item(&d, n, 0), i ? st->tensors[i - 1].begin +
			   st->tensors[i - 1].nbytes : 0);
		check_uint(&d, ydoc_seq_item(&d, n, 1), t->begin + t->nbytes);
	}
	ydoc_free(&d);
}

/* The raw input as a file: refused with a message, or every entry inside
 * the data area and readable as an array of its shape. */
static void read_raw(const uint8_t *data, size_t size)
{
	struct safetensors_file f;
	struct fs_err err;

	err.msg[0] = '\0';
	if (safetensors_decode(data, size, "fuzz", &f, &err) != FS_OK) {
		FUZZ_ASSERT(err.msg[0]);
		return;
	}
	for (size_t i = 0; i < f.n; i++) {
		const struct safetensors_entry *e = &f.t[i];
		struct npy_array a;

		FUZZ_ASSERT(e->begin <= e->end && e->end <= f.data_len);
		FUZZ_ASSERT(safetensors_find(&f, e->name) == e);
		FUZZ_ASSERT(safetensors_get(&f, e->name, &a, &err) == FS_OK);
		FUZZ_ASSERT(a.count == e->count && a.ndim == e->ndim && a.dtype == e->dtype);
		npy_free(&a);
	}
	safetensors_file_free(&f);
}

/* The writer's file (header length, header, data) read back by the
 * reader gives the tensors and metadata as added. */
static void read_back(const struct safetensors *st, const char *text, size_t len)
{
	size_t n = 8 + len + st->data_bytes;
	unsigned char *buf = calloc(1, n ? n : 1);
	struct safetensors_file f;
	struct fs_err err;

	FUZZ_ASSERT(buf);
	for (int i = 0; i < 8; i++)
		buf[i] = (unsigned char)((uint64_t)len >> (8 * i));
	memcpy(buf + 8, text, len);
	FUZZ_ASSERT(safetensors_decode(buf, n, "fuzz", &f, &err) == FS_OK);
	FUZZ_ASSERT(f.n == st->ntensors && f.nmeta == st->nmeta);
	for (size_t i = 0; i < f.n; i++) {
		const struct safetensors_tensor *t = &st->tensors[i];

		FUZZ_ASSERT(!strcmp(f.t[i].name, t->name) && f.t[i].dtype == t->dtype);
		FUZZ_ASSERT(f.t[i].ndim == t->ndim && f.t[i].begin == t->begin);
		FUZZ_ASSERT(f.t[i].end - f.t[i].begin == t->nbytes);
		for (int k = 0; k < t->ndim; k++)
			FUZZ_ASSERT(f.t[i].shape[k] == t->shape[k]);
	}
	for (size_t i = 0; i < f.nmeta; i++)
		FUZZ_ASSERT(!strcmp(f.meta[i].key, st->meta[i].key) &&
			    !strcmp(f.meta[i].value, st->meta[i].value));
	safetensors_file_free(&f);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the largest tensor's data: 8 dims of at most 3, 8 bytes each */
	static const uint64_t zeros[3 * 3 * 3 * 3 * 3 * 3 * 3 * 3];
	char names[MAX_ITEMS][MAX_STR + 1], vals[MAX_ITEMS][MAX_STR + 1];
	struct safetensors st;
	struct fs_err err;
	size_t at = 0;
	char *text;
	size_t len;

	read_raw(data, size);
	safetensors_init(&st);
	for (int i = 0; i < MAX_ITEMS && at < size; i++) {
		uint8_t op = data[at++];

		if (op == 't') {
			size_t shape[NPY_MAX_DIMS + 1];
			int dt, nd;

			if (take_str(data, size, &at, names[i]) < 0 || size - at < 2)
				break;
			dt = data[at++] % (NPY_DTYPE_COUNT + 1);
			nd = data[at++] % (NPY_MAX_DIMS + 2);
			if (size - at < (size_t)nd)
				break;
			for (int k = 0; k < nd; k++)
				shape[k] = data[at++] % 4;
			err.msg[0] = '\0';
			if (safetensors_add(&st, names[i], (enum npy_dtype)dt, nd,
					    shape, zeros, &err))
				FUZZ_ASSERT(err.msg[0]);
		} else if (op == 'm') {
			if (take_str(data, size, &at, names[i]) < 0 ||
			    take_str(data, size, &at, vals[i]) < 0)
				break;
			err.msg[0] = '\0';
			if (safetensors_add_meta(&st, names[i], vals[i], &err))
				FUZZ_ASSERT(err.msg[0]);
		} else {
			break;
		}
	}
	FUZZ_ASSERT(safetensors_header(&st, &text, &len, &err) == FS_OK);
	check_header(&st, text, len);
	read_back(&st, text, len);
	free(text);
	safetensors_free(&st);
	return 0;
}
