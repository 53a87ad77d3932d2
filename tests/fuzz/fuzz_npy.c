/*
 * fuzz_npy.c - .npy bytes into npy_decode (lib/npy.c), the reader
 * behind every dump tensor and given input.
 *
 * Promises checked: any bytes give an array or an error with a message;
 * an array is as large as its shape says; and what decodes, encoded
 * again (npy_encode) and decoded, is the same dtype, shape and bytes.
 */
#include "fuzz.h"

#include "../../lib/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fs_err err = { 0 };
	struct npy_array a, b;
	unsigned char *buf = NULL;
	size_t len = 0, count = 1;

	if (npy_decode(data, size, "fuzz.npy", &a, &err)) {
		FUZZ_ASSERT(err.msg[0] && !a.data);
		return 0;
	}
	FUZZ_ASSERT(a.ndim >= 0 && a.ndim <= NPY_MAX_DIMS);
	for (int i = 0; i < a.ndim; i++)
		count *= a.shape[i];
	FUZZ_ASSERT(count == a.count);
	FUZZ_ASSERT(npy_encode(a.dtype, a.ndim, a.shape, a.data, &buf, &len,
			       &err) == FS_OK);
	FUZZ_ASSERT(npy_decode(buf, len, "again.npy", &b, &err) == FS_OK);
	FUZZ_ASSERT(b.dtype == a.dtype && b.ndim == a.ndim && b.count == a.count);
	FUZZ_ASSERT(!memcmp(a.shape, b.shape, sizeof(a.shape)));
	FUZZ_ASSERT(!memcmp(a.data, b.data, a.count * npy_dtype_size(a.dtype)));
	free(buf);
	npy_free(&a);
	npy_free(&b);
	return 0;
}
