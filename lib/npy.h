/*
 * npy.h - NumPy .npy files: write format 1.0, read 1.0/2.0/3.0;
 * little-endian, C order, the eight dtypes goldens use.
 *
 *   size_t shape[2] = { 3, 4 };
 *   int32_t v[12];
 *   char sha[65];
 *   rc = npy_write("out/x.npy", NPY_I32, 2, shape, v, sha, err);
 *
 *   struct npy_array a;
 *   rc = npy_read("dump/x.npy", &a, err);   // a.dtype, a.shape, a.data
 *   npy_free(&a);
 *
 * The writer produces the bytes np.save produces for the same array.
 * The reader checks the format and nothing more: whether an int32 file
 * is what the caller wanted is the caller's check. Every reader error is
 * FS_EINPUT with err->file = the path; writer errors are FS_EINTERNAL
 * (a failed write, or a call no caller should make, e.g. ndim 9).
 */
#ifndef NPY_H
#define NPY_H

#include <stddef.h>

#include "../sim/common/fs.h"

#define NPY_MAX_DIMS 8
#define NPY_MAX_DATA_BYTES ((size_t)1 << 34)	/* 16 GiB, both directions */
#define NPY_MAX_HEADER 10000	/* header bytes read; numpy's own limit */

enum npy_dtype {
	NPY_I8,		/* '|i1' int8 */
	NPY_U8,		/* '|u1' uint8 */
	NPY_I16,	/* '<i2' int16 */
	NPY_I32,	/* '<i4' int32 */
	NPY_I64,	/* '<i8' int64 */
	NPY_F16,	/* '<f2' float16 (IEEE binary16 bits in a uint16_t) */
	NPY_F32,	/* '<f4' float32 */
	NPY_F64,	/* '<f8' float64 */
	NPY_DTYPE_COUNT
};

struct npy_array {
	enum npy_dtype dtype;
	int ndim;			/* 0..NPY_MAX_DIMS; 0 is a scalar */
	size_t shape[NPY_MAX_DIMS];	/* shape[ndim..] are 0 */
	size_t count;			/* elements: product of shape, 1 if ndim 0 */
	void *data;			/* count * npy_dtype_size(dtype) bytes, C order */
};

/* numpy's name ("int32"), or NULL for a value outside the enum. */
const char *npy_dtype_name(enum npy_dtype dtype);
/* The header descr ("<i4"), or NULL. */
const char *npy_dtype_descr(enum npy_dtype dtype);
/* Bytes per element, or 0. */
size_t npy_dtype_size(enum npy_dtype dtype);

/*
 * Write data (count elements, C order, host little-endian) to path via
 * path.tmp.<pid> and a rename: on failure neither exists afterwards.
 * sha256_hex (nullable) receives the digest of the whole file.
 */
enum fs_rc npy_write(const char *path, enum npy_dtype dtype, int ndim,
		     const size_t *shape, const void *data, char sha256_hex[65],
		     struct fs_err *err);

/* The same bytes in a malloc'd buffer (*buf, *len); free() it. */
enum fs_rc npy_encode(enum npy_dtype dtype, int ndim, const size_t *shape,
		      const void *data, unsigned char **buf, size_t *len,
		      struct fs_err *err);

/* Read and check a whole file; on failure *out is empty (data NULL). */
enum fs_rc npy_read(const char *path, struct npy_array *out,
		    struct fs_err *err);

/* The same from memory; name (nullable) goes into err->file. Copies. */
enum fs_rc npy_decode(const void *buf, size_t len, const char *name,
		      struct npy_array *out, struct fs_err *err);

/* Free a->data and empty a; safe on an empty or failed array. */
void npy_free(struct npy_array *a);

#endif
