/*
 * safetensors.h - write and read the safetensors format: many named
 * tensors and string metadata in one file (`fragsim run --format
 * safetensors` writes it; `diff --dump` and a case's `npy:` key read it).
 *
 *   struct safetensors st;
 *   safetensors_init(&st);
 *   rc = safetensors_add_meta(&st, "manifest", manifest_json, err);
 *   rc = safetensors_add(&st, "q_int8", NPY_I8, 4, shape, q8, err);
 *   rc = safetensors_write(&st, "out/golden.safetensors", err);
 *   safetensors_free(&st);
 *
 * Names and metadata strings are copied; tensor data is not, and must
 * stay valid until safetensors_write returns. Tensors keep the order
 * they were added in, in the header and in the data. Builder misuse
 * (bad dtype, duplicate name, ...) and write failures are FS_EINTERNAL.
 */
#ifndef SAFETENSORS_H
#define SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/common/fs.h"
#include "npy.h"

/* Readers refuse larger headers (the reference reader: 100 MB). */
#define SAFETENSORS_MAX_HEADER ((size_t)100000000)

struct safetensors_tensor {
	char *name;			/* owned copy */
	enum npy_dtype dtype;		/* NPY_F32 when bf16 */
	int bf16;			/* stored as "BF16", 2 bytes each */
	int ndim;			/* 0..NPY_MAX_DIMS */
	size_t shape[NPY_MAX_DIMS];
	const void *data;		/* borrowed, nbytes long */
	size_t nbytes;
	size_t begin;			/* offset in the data area */
};

struct safetensors_meta {
	char *key, *value;		/* owned copies */
};

struct safetensors {
	struct safetensors_tensor *tensors;
	size_t ntensors, cap_tensors;
	struct safetensors_meta *meta;
	size_t nmeta, cap_meta;
	size_t data_bytes;		/* sum of nbytes: the data area */
};

void safetensors_init(struct safetensors *st);

/* Append a tensor; shape has ndim entries (NULL when ndim is 0). */
enum fs_rc safetensors_add(struct safetensors *st, const char *name,
			   enum npy_dtype dtype, int ndim, const size_t *shape,
			   const void *data, struct fs_err *err);

/* Append a "BF16" tensor: bits are BF16 values (safetensors_bf16_from_f32),
 * host order; written little endian like every tensor. */
enum fs_rc safetensors_add_bf16(struct safetensors *st, const char *name,
				int ndim, const size_t *shape,
				const uint16_t *bits, struct fs_err *err);

/* float32 -> BF16, round to nearest even (NaN stays NaN); and back,
 * exactly. */
uint16_t safetensors_bf16_from_f32(float f);
float safetensors_bf16_to_f32(uint16_t b);

/* Append a "__metadata__" pair; keys are unique. */
enum fs_rc safetensors_add_meta(struct safetensors *st, const char *key,
				const char *value, struct fs_err *err);

/* The header JSON, space-padded to a multiple of 8 bytes; free() it. */
enum fs_rc safetensors_header(const struct safetensors *st, char **text,
			      size_t *len, struct fs_err *err);

/* Write path.tmp.<pid> and rename it to path; on failure neither exists. */
enum fs_rc safetensors_write(const struct safetensors *st, const char *path,
			     struct fs_err *err);

/* "I8", "F32", ... or NULL outside the enum. */
const char *safetensors_dtype_name(enum npy_dtype dtype);

void safetensors_free(struct safetensors *st);

/* ---- reader ------------------------------------------------------------ */

/*
 *   struct safetensors_file f;
 *   rc = safetensors_read("out/golden.safetensors", &f, err);
 *   rc = safetensors_get(&f, "acc", &arr, err);   // a copy, npy_free it
 *   safetensors_file_free(&f);
 *
 * The reader is strict (see safetensors.c): the header is JSON with no
 * repeated key and nothing unknown, at most SAFETENSORS_MAX_HEADER
 * bytes; every tensor's dtype is one fragsim knows, its shape has at
 * most NPY_MAX_DIMS dimensions and its byte count matches its offsets;
 * the tensors tile the data area exactly (no gap, no overlap, no byte
 * after the last) and the data is at most NPY_MAX_DATA_BYTES. Every
 * error is FS_EINPUT with err->file the file.
 */
struct safetensors_entry {
	char *name;
	enum npy_dtype dtype;		/* BF16 reads as NPY_F32 */
	int bf16;			/* stored as "BF16": 2 bytes each */
	int ndim;
	size_t shape[NPY_MAX_DIMS];
	size_t count;			/* elements */
	size_t begin, end;		/* offsets in the data area */
};

struct safetensors_file {
	char origin[256];		/* for errors */
	unsigned char *buf;		/* owned copy of the file */
	const unsigned char *data;	/* the data area, in buf */
	size_t data_len;
	struct safetensors_entry *t;	/* in header order */
	size_t n;
	struct safetensors_meta *meta;	/* __metadata__, in header order */
	size_t nmeta;
};

/* Parse a whole file's bytes (copied; name goes into errors). */
enum fs_rc safetensors_decode(const void *buf, size_t len, const char *name,
			      struct safetensors_file *f, struct fs_err *err);
/* Read path (a regular file, see readfile_open) and decode it. */
enum fs_rc safetensors_read(const char *path, struct safetensors_file *f,
			    struct fs_err *err);
/* The entry named name, or NULL. */
const struct safetensors_entry *safetensors_find(const struct safetensors_file *f,
						 const char *name);
/* A copy of tensor name as an npy_array (BF16 widened to F32, exactly);
 * missing: FS_EINPUT listing names. */
enum fs_rc safetensors_get(const struct safetensors_file *f, const char *name,
			   struct npy_array *out, struct fs_err *err);
void safetensors_file_free(struct safetensors_file *f);

/*
 * One tensor by file name: "x.npy" (any name: npy_read), or
 * "FILE.safetensors:NAME", the tensor NAME in FILE (split at the last
 * ".safetensors:"). This is what a case's `npy:` key accepts.
 */
enum fs_rc tensor_read(const char *spec, struct npy_array *out,
		       struct fs_err *err);
/* Where the ".safetensors:" split of spec is (the ':'), or NULL. */
const char *tensor_spec_colon(const char *spec);

#endif
