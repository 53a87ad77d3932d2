/*
 * safetensors.h - write the safetensors format: many named tensors and
 * string metadata in one file (`fragsim run --format safetensors`).
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

#include "../sim/fs.h"
#include "npy.h"

/* Readers refuse larger headers (the reference reader: 100 MB). */
#define SAFETENSORS_MAX_HEADER ((size_t)100000000)

struct safetensors_tensor {
	char *name;			/* owned copy */
	enum npy_dtype dtype;
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

#endif
