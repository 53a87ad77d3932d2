/*
 * test_npy.c - lib/npy.c: exact header bytes (hand-written from the
 * format numpy documents), round trips for every dtype and rank, every
 * reader error path, write failures, and, when /usr/bin/python3 has
 * numpy, that np.load reads our files and np.save's bytes equal ours.
 *
 * Each test gets its own scratch directory (testutil.h's fixture),
 * removed afterwards.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sim/common/fs.h"
#include "../lib/npy.h"
#include "../lib/sha256.h"
#include "testutil.h"

/* t->path: dir/x.npy, the file most tests use */
static int tmp_setup(void **state)
{
	return tu_scratch_setup(state, "npy", "x.npy");
}

static size_t dir_entries(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void file_put(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static unsigned char *file_get(const char *path, size_t *n)
{
	unsigned char *b = malloc(1 << 16);
	FILE *f = fopen(path, "rb");

	assert_non_null(b);
	assert_non_null(f);
	*n = fread(b, 1, 1 << 16, f);
	fclose(f);
	return b;
}

/* Small integers as IEEE binary16 bits (exact below 2048). */
static uint16_t half_of_int(int v)
{
	unsigned a = (unsigned)(v < 0 ? -v : v), e = 0;

	if (!a)
		return 0;
	while ((a >> e) > 1)
		e++;
	return (uint16_t)((v < 0) << 15 | (e + 15) << 10 |
			  ((a << (10 - e)) & 0x3ff));
}

/* Element i is i*7 - 5 in the dtype (wrapping like a C cast, as numpy's
 * astype does): the same pattern the Python checks compute. */
static void fill(enum npy_dtype t, void *data, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		long v = (long)i * 7 - 5;

		switch (t) {
		case NPY_I8: ((int8_t *)data)[i] = (int8_t)v; break;
		case NPY_U8: ((uint8_t *)data)[i] = (uint8_t)v; break;
		case NPY_I16: ((int16_t *)data)[i] = (int16_t)v; break;
		case NPY_I32: ((int32_t *)data)[i] = (int32_t)v; break;
		case NPY_I64: ((int64_t *)data)[i] = v; break;
		case NPY_F16: ((uint16_t *)data)[i] = half_of_int((int)v); break;
		case NPY_F32: ((float *)data)[i] = (float)v; break;
		case NPY_F64: ((double *)data)[i] = (double)v; break;
		default: fail();
		}
	}
}

static void test_dtype_table(void **state)
{
	static const char *const descr[] = {
		"|i1", "|u1", "<i2", "<i4", "<i8", "<f2", "<f4", "<f8" };
	static const size_t size[] = { 1, 1, 2, 4, 8, 2, 4, 8 };

	(void)state;
	for (int t = 0; t < NPY_DTYPE_COUNT; t++) {
		assert_string_equal(npy_dtype_descr((enum npy_dtype)t), descr[t]);
		assert_int_equal(npy_dtype_size((enum npy_dtype)t), size[t]);
	}
	assert_string_equal(npy_dtype_name(NPY_F16), "float16");
	assert_string_equal(npy_dtype_name(NPY_U8), "uint8");
	assert_null(npy_dtype_name(NPY_DTYPE_COUNT));
	assert_null(npy_dtype_descr((enum npy_dtype)-1));
	assert_int_equal(npy_dtype_size(NPY_DTYPE_COUNT), 0);
}

/*
 * The format (numpy.lib.format): magic, version 1.0, HEADER_LEN u16 LE,
 * the dict with sorted keys, then spaces and '\n' up to a multiple of
 * 64. np.save (numpy >= 1.23) also leaves 21 - len(str(shape[0])) spaces
 * of growth room before the alignment padding.
 */
static void test_exact_header_2d(void **state)
{
	static const char want[] =
		"\x93NUMPY" "\x01\x00" "\x76\x00"
		"{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }"
		"                    "			/* 20 growth */
		"                                      "	/* 38 align */
		"\n";
	int32_t v[12];
	size_t shape[2] = { 3, 4 }, len;
	unsigned char *buf;

	(void)state;
	for (int i = 0; i < 12; i++)
		v[i] = i;
	assert_int_equal(sizeof(want) - 1, 128);
	assert_int_equal(npy_encode(NPY_I32, 2, shape, v, &buf, &len, NULL), FS_OK);
	assert_int_equal(len, 128 + 48);
	assert_memory_equal(buf, want, 128);
	assert_memory_equal(buf + 128, "\x00\x00\x00\x00\x01\x00\x00\x00", 8);
	assert_memory_equal(buf + 128, v, 48);
	free(buf);
}

static void test_exact_header_0d_1d(void **state)
{
	static const char want0[] =
		"\x93NUMPY" "\x01\x00" "\x76\x00"
		"{'descr': '<f8', 'fortran_order': False, 'shape': (), }"
		/* no growth room without an axis; 62 align */
		"                                                              "
		"\n";
	static const char want1[] =
		"\x93NUMPY" "\x01\x00" "\x76\x00"
		"{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }"
		"                    "			/* 20 growth */
		"                                        "	/* 40 align */
		"\n";
	double x = 1.5;
	uint8_t u[5] = { 0, 1, 2, 3, 4 };
	size_t five = 5, len;
	unsigned char *buf;

	(void)state;
	assert_int_equal(npy_encode(NPY_F64, 0, NULL, &x, &buf, &len, NULL), FS_OK);
	assert_int_equal(len, 136);
	assert_memory_equal(buf, want0, 128);
	assert_memory_equal(buf + 128, &x, 8);
	free(buf);
	assert_int_equal(npy_encode(NPY_U8, 1, &five, u, &buf, &len, NULL), FS_OK);
	assert_int_equal(len, 133);
	assert_memory_equal(buf, want1, 128);
	assert_memory_equal(buf + 128, u, 5);
	free(buf);
}

/* Every dtype at ranks 0, 1, 3 and an empty array: write, read, compare;
 * decode of the encoded bytes agrees; the digest is the file's. */
static void test_round_trip_all(void **state)
{
	static const struct { int ndim; size_t shape[3]; } shapes[] = {
		{ 0, { 0 } }, { 1, { 5 } }, { 3, { 2, 3, 4 } }, { 2, { 0, 3 } },
	};
	struct tu_scratch *t = *state;
	unsigned char want[24 * 8], *enc, *file;
	char sha[65], sha_file[65];
	struct npy_array a, b;
	struct fs_err err;

	for (int dt = 0; dt < NPY_DTYPE_COUNT; dt++) {
		for (size_t s = 0; s < FS_ARRAY_LEN(shapes); s++) {
			enum npy_dtype ty = (enum npy_dtype)dt;
			size_t count = 1, len, flen;

			for (int i = 0; i < shapes[s].ndim; i++)
				count *= shapes[s].shape[i];
			fill(ty, want, count);
			assert_int_equal(npy_write(t->path, ty, shapes[s].ndim,
						   shapes[s].shape, want, sha,
						   &err), FS_OK);
			assert_int_equal(npy_read(t->path, &a, &err), FS_OK);
			assert_int_equal(a.dtype, ty);
			assert_int_equal(a.ndim, shapes[s].ndim);
			assert_int_equal(a.count, count);
			assert_memory_equal(a.shape, shapes[s].shape,
					    sizeof(size_t) * (size_t)a.ndim);
			assert_memory_equal(a.data, want,
					    count * npy_dtype_size(ty));

			file = file_get(t->path, &flen);
			sha256_hex(file, flen, sha_file);
			assert_string_equal(sha, sha_file);
			assert_int_equal(flen % 64, (count * npy_dtype_size(ty)) % 64);
			assert_int_equal(npy_encode(ty, shapes[s].ndim,
						    shapes[s].shape, want, &enc,
						    &len, &err), FS_OK);
			assert_int_equal(len, flen);
			assert_memory_equal(enc, file, len);
			assert_int_equal(npy_decode(enc, len, "mem", &b, &err), FS_OK);
			assert_int_equal(b.count, a.count);
			assert_memory_equal(b.data, a.data,
					    count * npy_dtype_size(ty));
			free(enc);
			free(file);
			npy_free(&a);
			npy_free(&b);
		}
	}
	assert_int_equal(dir_entries(t->dir), 1);	/* no tmp left over */
	npy_free(&a);	/* twice is harmless */
}

static void test_write_bad_calls(void **state)
{
	struct tu_scratch *t = *state;
	size_t shape[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	size_t huge[2] = { (size_t)1 << 33, 3 };
	struct fs_err err;
	int32_t v = 0;

	assert_int_equal(npy_write(t->path, NPY_I32, 9, shape, &v, NULL, &err),
			 FS_EINTERNAL);
	assert_non_null(strstr(err.msg, "ndim 9"));
	assert_int_equal(npy_write(t->path, NPY_DTYPE_COUNT, 1, shape, &v, NULL,
				   &err), FS_EINTERNAL);
	assert_int_equal(npy_write(t->path, NPY_I32, 1, shape, NULL, NULL, &err),
			 FS_EINTERNAL);
	assert_int_equal(npy_write(t->path, NPY_I8, 2, huge, &v, NULL, &err),
			 FS_EINTERNAL);
	assert_non_null(strstr(err.msg, "over 2^34 bytes"));
	assert_int_equal(dir_entries(t->dir), 0);
}

static void test_write_no_dir(void **state)
{
	struct tu_scratch *t = *state;
	char p[200];
	struct fs_err err;
	size_t one = 1;
	int8_t v = 1;

	snprintf(p, sizeof(p), "%s/missing/x.npy", t->dir);
	assert_int_equal(npy_write(p, NPY_I8, 1, &one, &v, NULL, &err),
			 FS_EINTERNAL);
	assert_string_equal(err.file, p);
	assert_non_null(strstr(err.msg, "No such file or directory"));
}

/* A full disk, simulated by RLIMIT_FSIZE: write or close fails, and
 * neither the file nor its temporary survives. */
static void test_write_disk_full(void **state)
{
	struct tu_scratch *t = *state;
	struct rlimit old, lim;
	size_t n = 100000;
	struct fs_err err;
	enum fs_rc rc;
	int8_t *v = calloc(n, 1);

	assert_non_null(v);
	signal(SIGXFSZ, SIG_IGN);	/* EFBIG instead of a signal */
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 4096;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	rc = npy_write(t->path, NPY_I8, 1, &n, v, NULL, &err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(rc, FS_EINTERNAL);
	assert_string_equal(err.file, t->path);
	assert_non_null(strstr(err.msg, "write failed"));
	assert_int_equal(dir_entries(t->dir), 0);
	free(v);
}

/* ---- reader errors: hand-made files ---------------------------------- */

/* magic + version + length + dict text + '\n' + data bytes of 0xab. */
static size_t craft(unsigned char *buf, int major, const char *dict,
		    size_t ndata)
{
	size_t hoff = major == 1 ? 10 : 12, hlen = strlen(dict) + 1;

	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (unsigned char)major;
	buf[7] = 0;
	buf[8] = (unsigned char)(hlen & 0xff);
	buf[9] = (unsigned char)(hlen >> 8);
	if (major > 1)
		buf[10] = buf[11] = 0;
	memcpy(buf + hoff, dict, hlen - 1);
	buf[hoff + hlen - 1] = '\n';
	memset(buf + hoff + hlen, 0xab, ndata);
	return hoff + hlen + ndata;
}

static void expect_bad(struct tu_scratch *t, const void *bytes, size_t len,
		       const char *msg_part)
{
	struct npy_array a;
	struct fs_err err;

	file_put(t->path, bytes, len);
	memset(&err, 0, sizeof(err));
	assert_int_equal(npy_read(t->path, &a, &err), FS_EINPUT);
	if (!strstr(err.msg, msg_part))
		fail_msg("want '%s' in '%s'", msg_part, err.msg);
	assert_string_equal(err.file, t->path);
	assert_null(a.data);
	/* The in-memory decoder says the same. */
	assert_int_equal(npy_decode(bytes, len, "mem", &a, &err), FS_EINPUT);
	if (!strstr(err.msg, msg_part))
		fail_msg("decode: want '%s' in '%s'", msg_part, err.msg);
	assert_string_equal(err.file, "mem");
}

#define GOOD_I4 "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }"

static void test_read_bad_prefix(void **state)
{
	struct tu_scratch *t = *state;
	unsigned char b[256];
	size_t n = craft(b, 1, GOOD_I4, 8);

	expect_bad(t, "", 0, "bad magic");
	expect_bad(t, "\x93NUMPX\x01\x00", 8, "bad magic");
	expect_bad(t, "PK\x03\x04zipfile", 11, "bad magic");
	expect_bad(t, "\x93NUMPY\x01", 7, "truncated: no version");
	expect_bad(t, "\x93NUMPY\x01\x00\x10", 9, "truncated: no header length");
	expect_bad(t, "\x93NUMPY\x02\x00\x10\x00\x00", 11,
		   "truncated: no header length");
	b[6] = 4;
	expect_bad(t, b, n, "unsupported .npy version 4.0");
	b[6] = 1;
	b[7] = 1;
	expect_bad(t, b, n, "unsupported .npy version 1.1");
	b[7] = 0;
	b[8] = 0x3c;
	b[9] = 0xff;	/* HEADER_LEN 0xff3c: over numpy's 10000 */
	expect_bad(t, b, n, "header too long (65340 bytes, at most 10000)");
	b[9] = 0x10;	/* 0x103c: fits the cap, not the file */
	expect_bad(t, b, n, "truncated: header length says 4156 bytes");
}

static void test_read_bad_dict(void **state)
{
	static const struct { const char *dict, *msg; } cases[] = {
		{ "{'descr': '<i4', 'fortran_order': True, 'shape': (2,), }",
		  "fortran_order arrays are not supported" },
		{ "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
		  "big-endian dtype '>i4'" },
		{ "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
		  "unsupported dtype '<c8'" },
		{ "{'descr': '|i4', 'fortran_order': False, 'shape': (2,), }",
		  "unsupported dtype '|i4'" },
		{ "{'descr': 'int32', 'fortran_order': False, 'shape': (2,), }",
		  "unsupported dtype 'int32'" },
		{ "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,), }",
		  "structured dtypes are not supported" },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': (-2,), }",
		  "negative dimension" },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': (99999999999999999999999,), }",
		  "dimension too large" },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
		  "shape (4294967296, 4294967296) of int32 is over 2^34 bytes" },
		{ "{'descr': '|u1', 'fortran_order': False, 'shape': (17179869185,), }",
		  "over 2^34 bytes" },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': (2), }",
		  "shape (2) is not a tuple; a 1-d shape is written (2,)" },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': [2], }",
		  "shape must be a tuple" },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }",
		  "more than 8 dimensions" },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': (2 3), }",
		  "expected ',' or ')' in shape" },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': (2,,), }",
		  "expected a dimension or ')'" },
		{ "{'descr': '<i4', 'fortran_order': 0, 'shape': (2,), }",
		  "expected True or False" },
		{ "{'descr': '<i4', 'shape': (2,), }", "header has no 'fortran_order'" },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
		  "unknown key 'x'" },
		{ "{'descr': '<i4', 'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
		  "duplicate key 'descr'" },
		{ "{'descr' '<i4', 'fortran_order': False, 'shape': (2,), }",
		  "header byte 19: expected ':' after 'descr'" },
		{ "{'descr': '<i4' 'fortran_order': False, 'shape': (2,), }",
		  "expected ',' or '}'" },
		{ "{'descr: '<i4', 'fortran_order': False, 'shape': (2,), }",
		  "unknown key 'descr: '" },
		{ "{'descr': '<i\\x34', 'fortran_order': False, 'shape': (2,), }",
		  "escapes and newlines in strings are not supported" },
		{ "{'descr': '<i4, 'fortran_order': False, 'shape': (2,), }",
		  "unsupported dtype '<i4, '" },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), } x",
		  "unexpected text after the header dict" },
		{ "('descr', '<i4')", "header byte 10: expected '{'" },
		{ "", "expected '{'" },
		{ "{'descr': '<i4', 'fortran_order': False, 'shape': (2,)",
		  "expected ',' or '}'" },
	};
	struct tu_scratch *t = *state;
	unsigned char b[512];

	for (size_t i = 0; i < FS_ARRAY_LEN(cases); i++)
		expect_bad(t, b, craft(b, 1, cases[i].dict, 8), cases[i].msg);
}

/* '<i4\0 junk' used to read as '<i4': the string ended at the NUL. */
static void test_read_nul_in_descr(void **state)
{
	struct tu_scratch *t = *state;
	unsigned char b[512];
	size_t n = craft(b, 1, "{'descr': '<i4@junk', 'fortran_order': False, "
			 "'shape': (2,), }", 8);

	b[10 + 14] = 0;	/* the '@': header byte 24 */
	expect_bad(t, b, n, "header byte 24: control character 0x00 in a string");
	n = craft(b, 1, "{'descr@': '<i4', 'fortran_order': False, "
		  "'shape': (2,), }", 8);
	b[10 + 7] = 0;
	expect_bad(t, b, n, "header byte 17: control character 0x00");
}

static void test_read_bad_data_length(void **state)
{
	struct tu_scratch *t = *state;
	unsigned char b[5000];
	size_t shape[1] = { 1024 }, len;
	unsigned char *enc;
	int32_t *v = calloc(1024, 4);

	assert_non_null(v);
	expect_bad(t, b, craft(b, 1, GOOD_I4, 7),
		   "truncated: header says 8 bytes of data, file has 7");
	expect_bad(t, b, craft(b, 1, GOOD_I4, 0),
		   "truncated: header says 8 bytes of data, file has 0");
	expect_bad(t, b, craft(b, 1, GOOD_I4, 9),
		   "1 trailing bytes after the 8 bytes of data");
	/* A real file cut short, and one with junk appended. */
	assert_int_equal(npy_encode(NPY_I32, 1, shape, v, &enc, &len, NULL), FS_OK);
	expect_bad(t, enc, 228, "truncated: header says 4096 bytes of data, file has 100");
	memcpy(b, enc, len);
	b[len] = '\n';
	expect_bad(t, b, len + 1, "1 trailing bytes");
	free(enc);
	free(v);
}

static void test_read_not_a_file(void **state)
{
	struct tu_scratch *t = *state;
	struct npy_array a;
	struct fs_err err;
	char p[200];

	snprintf(p, sizeof(p), "%s/none.npy", t->dir);
	assert_int_equal(npy_read(p, &a, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "cannot open"));
	assert_string_equal(err.file, p);
	assert_int_equal(npy_read(t->dir, &a, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "not a regular file"));
	assert_null(a.data);
	/* A FIFO with no writer: fopen used to wait forever. The alarm
	 * turns a hang back into a failure. */
	snprintf(p, sizeof(p), "%s/fifo.npy", t->dir);
	assert_int_equal(mkfifo(p, 0600), 0);
	alarm(10);
	assert_int_equal(npy_read(p, &a, &err), FS_EINPUT);
	alarm(0);
	assert_non_null(strstr(err.msg, "not a regular file (a FIFO)"));
	unlink(p);
}

/* Every proper prefix of a valid file is rejected, and no single-byte
 * change to its prefix and header crashes the reader: each either still
 * parses (a digit for a digit) or is an FS_EINPUT. Run under ASan. */
static void test_decode_mutations(void **state)
{
	static const unsigned char subst[] = {
		0, ' ', '\'', '"', ',', ':', '(', ')', '{', '}', '-', '9', 'T',
		'\n', 0x80, 0xff,
	};
	size_t shape[3] = { 2, 3, 4 }, len;
	unsigned char *enc, *buf;
	struct npy_array a;
	struct fs_err err;
	int16_t v[24] = { 0 };

	(void)state;
	assert_int_equal(npy_encode(NPY_I16, 3, shape, v, &enc, &len, NULL), FS_OK);
	buf = malloc(len);
	assert_non_null(buf);
	for (size_t n = 0; n < len; n++) {
		memcpy(buf, enc, n);	/* a copy of exactly n bytes for ASan */
		assert_int_equal(npy_decode(buf, n, "cut", &a, &err), FS_EINPUT);
		assert_null(a.data);
	}
	for (size_t i = 0; i < 128; i++) {
		for (size_t k = 0; k < sizeof(subst); k++) {
			enum fs_rc rc;

			memcpy(buf, enc, len);
			buf[i] = subst[k];
			rc = npy_decode(buf, len, "flip", &a, &err);
			assert_true(rc == FS_OK || rc == FS_EINPUT);
			if (rc == FS_OK)
				assert_int_equal(a.count * npy_dtype_size(a.dtype),
						 len - 128);
			npy_free(&a);
		}
	}
	free(buf);
	free(enc);
}

/* What other writers produce: any key order, double quotes, tabs, no
 * trailing comma, '<i1', versions 2.0/3.0, no 64-byte alignment. */
static void test_read_lenient_spellings(void **state)
{
	static const struct { int major; const char *dict; enum npy_dtype t;
			      int ndim; size_t d0, d1; } cases[] = {
		{ 1, "{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<i4\"}",
		  NPY_I32, 1, 2, 0 },
		{ 1, "  {\t'descr':'<i1','fortran_order':False,'shape':( 2 , 4 , ) }  ",
		  NPY_I8, 2, 2, 4 },
		{ 1, "{'descr': '>u1', 'fortran_order': False, 'shape': (8,)}",
		  NPY_U8, 1, 8, 0 },
		{ 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
		  NPY_F32, 1, 2, 0 },
		{ 3, "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 4), }",
		  NPY_F16, 2, 1, 4 },
		{ 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
		  NPY_F64, 1, 1, 0 },
	};
	struct tu_scratch *t = *state;
	unsigned char b[512];
	struct npy_array a;
	struct fs_err err;

	for (size_t i = 0; i < FS_ARRAY_LEN(cases); i++) {
		file_put(t->path, b, craft(b, cases[i].major, cases[i].dict, 8));
		if (npy_read(t->path, &a, &err) != FS_OK)
			fail_msg("case %zu: %s", i, err.msg);
		assert_int_equal(a.dtype, cases[i].t);
		assert_int_equal(a.ndim, cases[i].ndim);
		assert_int_equal(a.shape[0], cases[i].d0);
		assert_int_equal(a.shape[1], cases[i].d1);
		assert_memory_equal(a.data, "\xab\xab\xab\xab\xab\xab\xab\xab", 8);
		npy_free(&a);
	}
}

/* ---- numpy itself ---------------------------------------------------- */

static const char py_check[] =
	"import io, sys\n"
	"import numpy as np\n"
	"mode, p, dt = sys.argv[1], sys.argv[2], sys.argv[3]\n"
	"shape = tuple(int(x) for x in sys.argv[4].split(',') if x)\n"
	"want = (np.arange(int(np.prod(shape))) * 7 - 5).astype(dt).reshape(shape)\n"
	"if mode == 'load':\n"
	"    a = np.load(p)\n"
	"    assert a.dtype == np.dtype(dt), a.dtype\n"
	"    assert a.shape == shape, a.shape\n"
	"    assert (a == want).all(), a\n"
	"    b = io.BytesIO()\n"
	"    np.save(b, a)\n"
	"    assert b.getvalue() == open(p, 'rb').read(), 'differs from np.save'\n"
	"elif mode == 'save':\n"
	"    np.save(p, want)\n"
	"elif mode == 'save2':\n"
	"    with open(p, 'wb') as f:\n"
	"        np.lib.format.write_array(f, want, version=(2, 0))\n"
	"elif mode == 'fortran':\n"
	"    np.save(p, np.asfortranarray(want))\n";

static int have_numpy(void)
{
	return system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

static int run_py(struct tu_scratch *t, const char *mode, const char *path,
		  enum npy_dtype dt, const char *shape)
{
	char script[128], cmd[600];
	int st;

	snprintf(script, sizeof(script), "%s/check.py", t->dir);
	file_put(script, py_check, sizeof(py_check) - 1);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s %s %s %s '%s'", script,
		 mode, path, npy_dtype_name(dt), shape);
	st = system(cmd);
	unlink(script);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_numpy_loads_ours(void **state)
{
	static const struct { int ndim; size_t shape[3]; const char *s; } shapes[] = {
		{ 0, { 0 }, "" }, { 1, { 5 }, "5" }, { 3, { 2, 3, 4 }, "2,3,4" },
		{ 2, { 0, 3 }, "0,3" },
	};
	struct tu_scratch *t = *state;
	unsigned char v[24 * 8];
	struct fs_err err;

	if (!have_numpy()) {
		print_message("numpy not importable by /usr/bin/python3; skipped\n");
		skip();
	}
	for (int dt = 0; dt < NPY_DTYPE_COUNT; dt++) {
		for (size_t s = 0; s < FS_ARRAY_LEN(shapes); s++) {
			fill((enum npy_dtype)dt, v, 24);
			assert_int_equal(npy_write(t->path, (enum npy_dtype)dt,
						   shapes[s].ndim, shapes[s].shape,
						   v, NULL, &err), FS_OK);
			if (run_py(t, "load", t->path, (enum npy_dtype)dt,
				   shapes[s].s))
				fail_msg("numpy rejects %s %s",
					 npy_dtype_name((enum npy_dtype)dt),
					 shapes[s].s);
		}
	}
}

static void test_we_load_numpys(void **state)
{
	static const char *const modes[] = { "save", "save2" };
	struct tu_scratch *t = *state;
	unsigned char want[24 * 8];
	struct npy_array a;
	struct fs_err err;

	if (!have_numpy()) {
		print_message("numpy not importable by /usr/bin/python3; skipped\n");
		skip();
	}
	for (int dt = 0; dt < NPY_DTYPE_COUNT; dt++) {
		for (size_t m = 0; m < FS_ARRAY_LEN(modes); m++) {
			assert_int_equal(run_py(t, modes[m], t->path,
						(enum npy_dtype)dt, "2,3,4"), 0);
			if (npy_read(t->path, &a, &err) != FS_OK)
				fail_msg("%s: %s", modes[m], err.msg);
			fill((enum npy_dtype)dt, want, 24);
			assert_int_equal(a.dtype, dt);
			assert_int_equal(a.ndim, 3);
			assert_int_equal(a.count, 24);
			assert_memory_equal(a.data, want,
					    24 * npy_dtype_size(a.dtype));
			npy_free(&a);
		}
	}
	assert_int_equal(run_py(t, "fortran", t->path, NPY_F32, "2,3,4"), 0);
	assert_int_equal(npy_read(t->path, &a, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "fortran_order"));
}

#define T(f) cmocka_unit_test_setup_teardown(f, tmp_setup, tu_scratch_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_dtype_table),
		T(test_exact_header_2d),
		T(test_exact_header_0d_1d),
		T(test_round_trip_all),
		T(test_write_bad_calls),
		T(test_write_no_dir),
		T(test_write_disk_full),
		T(test_read_bad_prefix),
		T(test_read_bad_dict),
		T(test_read_nul_in_descr),
		T(test_read_bad_data_length),
		T(test_read_not_a_file),
		T(test_decode_mutations),
		T(test_read_lenient_spellings),
		T(test_numpy_loads_ours),
		T(test_we_load_numpys),
	};

	return cmocka_run_group_tests_name("npy", tests, NULL, NULL);
}
