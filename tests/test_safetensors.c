/*
 * test_safetensors.c - lib/safetensors.c: write a file, then take it
 * apart here (N, the header text, the data_offsets, the data bytes);
 * the worked example of the module header byte for byte; builder
 * errors; and, when /usr/bin/python3 has numpy, an independent reader
 * (json + np.frombuffer) that rebuilds every tensor. The reader: what
 * was written reads back, every malformed header is refused by name,
 * and goldens written as safetensors diff as a match (a BF16 out at
 * BF16, an f32 one bit for bit; one ulp off is a mismatch either way).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sim/common/fs.h"
#include "../lib/safetensors.h"
#include "testutil.h"

/* t->path: dir/g.safetensors */
static int tmp_setup(void **state)
{
	return tu_scratch_setup(state, "st", "g.safetensors");
}

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = malloc(1 << 16);

	assert_non_null(f);
	assert_non_null(b);
	*n = fread(b, 1, 1 << 16, f);
	fclose(f);
	return b;
}

static uint64_t u64_le(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The tensors of the main test, and the header text they must give. */
static const double f64[2] = { 1.5, -2.0 };
static const int8_t q8[6] = { 1, 2, 3, 4, 5, 6 };
static const int32_t scalar = 42;
static const uint8_t u8[2] = { 0xfe, 0xff };

static const char want_header[] =
	"{\"__metadata__\":{\"format\":\"np\",\"manifest\":\"{\\\"a\\\": 1}\\n\"},"
	"\"f64\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,16]},"
	"\"q_int8\":{\"dtype\":\"I8\",\"shape\":[2,3],\"data_offsets\":[16,22]},"
	"\"scalar\":{\"dtype\":\"I32\",\"shape\":[],\"data_offsets\":[22,26]},"
	"\"empty\":{\"dtype\":\"F16\",\"shape\":[0],\"data_offsets\":[26,26]},"
	"\"u8\":{\"dtype\":\"U8\",\"shape\":[1,1,2],\"data_offsets\":[26,28]}}";

static void build(struct safetensors *st)
{
	size_t s2 = 2, s23[2] = { 2, 3 }, s0 = 0, s112[3] = { 1, 1, 2 };
	struct fs_err err;

	safetensors_init(st);
	assert_int_equal(safetensors_add_meta(st, "format", "np", &err), FS_OK);
	assert_int_equal(safetensors_add_meta(st, "manifest", "{\"a\": 1}\n",
					      &err), FS_OK);
	assert_int_equal(safetensors_add(st, "f64", NPY_F64, 1, &s2, f64, &err), FS_OK);
	assert_int_equal(safetensors_add(st, "q_int8", NPY_I8, 2, s23, q8, &err), FS_OK);
	assert_int_equal(safetensors_add(st, "scalar", NPY_I32, 0, NULL, &scalar,
					 &err), FS_OK);
	assert_int_equal(safetensors_add(st, "empty", NPY_F16, 1, &s0, NULL, &err),
			 FS_OK);
	assert_int_equal(safetensors_add(st, "u8", NPY_U8, 3, s112, u8, &err), FS_OK);
}

static void test_write_and_take_apart(void **state)
{
	struct tu_scratch *t = *state;
	static const struct { const void *p; size_t n; } data[] = {
		{ f64, 16 }, { q8, 6 }, { &scalar, 4 }, { NULL, 0 }, { u8, 2 },
	};
	struct safetensors st;
	struct fs_err err;
	size_t len, n, want_len = sizeof(want_header) - 1, end = 0;
	unsigned char *b;
	const char *h;
	int k = 0;

	build(&st);
	assert_int_equal(safetensors_write(&st, t->path, &err), FS_OK);
	safetensors_free(&st);

	b = slurp(t->path, &len);
	n = (size_t)u64_le(b);
	assert_int_equal(n % 8, 0);
	assert_true(n >= want_len && n < want_len + 8);
	assert_int_equal(len, 8 + n + 28);
	assert_memory_equal(b + 8, want_header, want_len);
	for (size_t i = want_len; i < n; i++)
		assert_int_equal(b[8 + i], ' ');

	/* The offsets, read from the text: they tile the data area in
	 * order, and each range holds the tensor's bytes. */
	h = (const char *)b + 8;
	while ((h = strstr(h, "\"data_offsets\":[")) && h < (char *)b + 8 + n) {
		unsigned long lo, hi;

		assert_int_equal(sscanf(h, "\"data_offsets\":[%lu,%lu]", &lo, &hi), 2);
		assert_int_equal(lo, end);
		assert_int_equal(hi - lo, data[k].n);
		if (data[k].n)
			assert_memory_equal(b + 8 + n + lo, data[k].p, data[k].n);
		end = hi;
		k++;
		h++;
	}
	assert_int_equal(k, 5);
	assert_int_equal(end, 28);
	free(b);
}

/* The example in safetensors.c's header comment, byte for byte. */
static void test_worked_example(void **state)
{
	static const unsigned char want[] =
		"\x38\0\0\0\0\0\0\0"
		"{\"a\":{\"dtype\":\"I8\",\"shape\":[3],\"data_offsets\":[0,3]}}   "
		"\x01\x02\x03";
	struct tu_scratch *t = *state;
	struct safetensors st;
	size_t three = 3, len;
	unsigned char *b;

	safetensors_init(&st);
	assert_int_equal(safetensors_add(&st, "a", NPY_I8, 1, &three,
					 "\x01\x02\x03", NULL), FS_OK);
	assert_int_equal(safetensors_write(&st, t->path, NULL), FS_OK);
	safetensors_free(&st);
	b = slurp(t->path, &len);
	assert_int_equal(len, sizeof(want) - 1);
	assert_memory_equal(b, want, len);
	free(b);
}

/*
 * float32 -> BF16 by hand (the float's top 16 bits, rounded to nearest
 * even): 1 + 2^-8 is 0x3f808000, exactly halfway between 0x3f80 and
 * 0x3f81, and goes to the even 0x3f80; 1 + 3*2^-8 (0x3f818000) to the
 * even 0x3f82; one ulp over the tie (0x3f808001) up to 0x3f81; the
 * largest float rounds to infinity; a NaN stays a NaN.
 */
static void test_bf16_rounding(void **state)
{
	static const struct { uint32_t f; uint16_t b; } cases[] = {
		{ 0x3f800000u, 0x3f80 }, { 0x3f808000u, 0x3f80 },
		{ 0x3f818000u, 0x3f82 }, { 0x3f808001u, 0x3f81 },
		{ 0x3f80ffffu, 0x3f81 }, { 0x80000000u, 0x8000 },
		{ 0xc0200000u, 0xc020 }, { 0x7f7fffffu, 0x7f80 },
		{ 0x7f800000u, 0x7f80 }, { 0x00000001u, 0x0000 },
	};
	uint32_t nan = 0x7f800001u;
	float f;

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(cases); i++) {
		memcpy(&f, &cases[i].f, sizeof(f));
		assert_int_equal(safetensors_bf16_from_f32(f), cases[i].b);
	}
	memcpy(&f, &nan, sizeof(f));
	assert_true((safetensors_bf16_from_f32(f) & 0x7fff) > 0x7f80);
	assert_true(safetensors_bf16_to_f32(0x3f81) == 1.0f + 1.0f / 128);
	assert_true(safetensors_bf16_to_f32(0xc020) == -2.5f);
}

/* A BF16 tensor byte for byte: [1.0, -2.5] is 0x3f80 0xc020, stored
 * little endian; the 55-byte header pads to 56. Read back as F32. */
static void test_bf16_write_read(void **state)
{
	static const unsigned char want[] =
		"\x38\0\0\0\0\0\0\0"
		"{\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]}} "
		"\x80\x3f\x20\xc0";
	struct tu_scratch *t = *state;
	const uint16_t bits[2] = { safetensors_bf16_from_f32(1.0f),
				   safetensors_bf16_from_f32(-2.5f) };
	struct safetensors st;
	struct safetensors_file f;
	struct npy_array a;
	struct fs_err err;
	size_t two = 2, len;
	unsigned char *b;

	safetensors_init(&st);
	assert_int_equal(safetensors_add_bf16(&st, "b", 1, &two, bits, NULL), FS_OK);
	assert_int_equal(safetensors_write(&st, t->path, NULL), FS_OK);
	safetensors_free(&st);
	b = slurp(t->path, &len);
	assert_int_equal(len, sizeof(want) - 1);
	assert_memory_equal(b, want, len);
	assert_int_equal(safetensors_decode(b, len, "w", &f, &err), FS_OK);
	assert_int_equal(f.t[0].bf16, 1);
	assert_int_equal(safetensors_get(&f, "b", &a, &err), FS_OK);
	assert_int_equal(a.dtype, NPY_F32);
	assert_int_equal(a.count, 2);
	assert_true(((float *)a.data)[0] == 1.0f && ((float *)a.data)[1] == -2.5f);
	npy_free(&a);
	safetensors_file_free(&f);
	free(b);
}

/* No tensors, no metadata: "{}" and six spaces, a valid empty file. */
static void test_empty(void **state)
{
	struct safetensors st;
	size_t len;
	char *h;

	(void)state;
	safetensors_init(&st);
	assert_int_equal(safetensors_header(&st, &h, &len, NULL), FS_OK);
	assert_int_equal(len, 8);
	assert_string_equal(h, "{}      ");
	free(h);
	safetensors_free(&st);
}

static void test_builder_errors(void **state)
{
	struct tu_scratch *t = *state;
	size_t shape[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	size_t huge[2] = { SIZE_MAX / 2, 3 };
	struct safetensors st;
	struct fs_err err;
	char p[200];
	int8_t v = 0;

	safetensors_init(&st);
	assert_int_equal(safetensors_add(&st, "a", NPY_I8, 1, shape, &v, &err), FS_OK);
	assert_int_equal(safetensors_add(&st, "a", NPY_I8, 1, shape, &v, &err),
			 FS_EINTERNAL);
	assert_string_equal(err.msg, "safetensors: duplicate tensor 'a'");
	assert_int_equal(safetensors_add(&st, "__metadata__", NPY_I8, 1, shape,
					 &v, &err), FS_EINTERNAL);
	assert_non_null(strstr(err.msg, "cannot name a tensor"));
	assert_int_equal(safetensors_add(&st, "", NPY_I8, 1, shape, &v, &err),
			 FS_EINTERNAL);
	assert_int_equal(safetensors_add(&st, "b", NPY_DTYPE_COUNT, 1, shape, &v,
					 &err), FS_EINTERNAL);
	assert_non_null(strstr(err.msg, "invalid dtype"));
	assert_int_equal(safetensors_add(&st, "b", NPY_I8, 9, shape, &v, &err),
			 FS_EINTERNAL);
	assert_non_null(strstr(err.msg, "ndim 9"));
	assert_int_equal(safetensors_add(&st, "b", NPY_I64, 2, huge, &v, &err),
			 FS_EINTERNAL);
	assert_non_null(strstr(err.msg, "too large"));
	assert_int_equal(safetensors_add(&st, "b", NPY_I8, 1, shape, NULL, &err),
			 FS_EINTERNAL);
	assert_non_null(strstr(err.msg, "no data"));
	assert_int_equal(safetensors_add_meta(&st, "k", "1", &err), FS_OK);
	assert_int_equal(safetensors_add_meta(&st, "k", "2", &err), FS_EINTERNAL);
	assert_non_null(strstr(err.msg, "duplicate metadata key 'k'"));
	assert_int_equal(st.ntensors, 1);
	assert_int_equal(st.nmeta, 1);

	/* A failed write leaves neither the file nor its temporary. */
	snprintf(p, sizeof(p), "%s/missing/g.safetensors", t->dir);
	assert_int_equal(safetensors_write(&st, p, &err), FS_EINTERNAL);
	assert_string_equal(err.file, p);
	safetensors_free(&st);
	assert_int_equal(access(t->path, F_OK), -1);
}

/* Many tensors: the builder's arrays grow, names stay copies. */
static void test_many_tensors(void **state)
{
	struct safetensors st;
	char name[16];
	size_t one = 1, len;
	int32_t v[100];
	char *h;

	(void)state;
	safetensors_init(&st);
	for (int i = 0; i < 100; i++) {
		v[i] = i;
		snprintf(name, sizeof(name), "t%d", i);
		assert_int_equal(safetensors_add(&st, name, NPY_I32, 1, &one,
						 &v[i], NULL), FS_OK);
	}
	assert_int_equal(st.data_bytes, 400);
	assert_string_equal(st.tensors[57].name, "t57");
	assert_int_equal(st.tensors[57].begin, 228);
	assert_int_equal(safetensors_header(&st, &h, &len, NULL), FS_OK);
	assert_non_null(strstr(h, "\"t99\":{\"dtype\":\"I32\",\"shape\":[1],"
			       "\"data_offsets\":[396,400]}}"));
	assert_int_equal(len % 8, 0);
	free(h);
	safetensors_free(&st);
}

static const char py_check[] =
	"import json, struct, sys\n"
	"import numpy as np\n"
	"b = open(sys.argv[1], 'rb').read()\n"
	"n = struct.unpack('<Q', b[:8])[0]\n"
	"h = json.loads(b[8:8 + n])\n"
	"assert list(h) == ['__metadata__', 'f64', 'q_int8', 'scalar', 'empty', 'u8']\n"
	"assert h.pop('__metadata__') == {'format': 'np', 'manifest': '{\"a\": 1}\\n'}\n"
	"data, end, got = b[8 + n:], 0, {}\n"
	"dt = {'F64': '<f8', 'I8': 'i1', 'I32': '<i4', 'F16': '<f2', 'U8': 'u1'}\n"
	"for k, v in h.items():\n"
	"    lo, hi = v['data_offsets']\n"
	"    assert lo == end, (k, lo, end)\n"
	"    end = hi\n"
	"    got[k] = np.frombuffer(data[lo:hi], dt[v['dtype']]).reshape(v['shape'])\n"
	"assert end == len(data)\n"
	"assert got['f64'].tolist() == [1.5, -2.0]\n"
	"assert got['q_int8'].tolist() == [[1, 2, 3], [4, 5, 6]]\n"
	"assert got['scalar'].shape == () and int(got['scalar']) == 42\n"
	"assert got['empty'].shape == (0,)\n"
	"assert got['u8'].tolist() == [[[254, 255]]]\n";

static void test_python_reads_it(void **state)
{
	struct tu_scratch *t = *state;
	struct safetensors st;
	char script[200];

	if (system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
		print_message("numpy not importable by /usr/bin/python3; skipped\n");
		skip();
	}
	build(&st);
	assert_int_equal(safetensors_write(&st, t->path, NULL), FS_OK);
	safetensors_free(&st);
	snprintf(script, sizeof(script), "%s/check.py", t->dir);
	assert_int_equal(tu_put(script, py_check), 0);
	assert_int_equal(tu_sh("/usr/bin/python3 %s %s", script, t->path), 0);
}

/* ---- reader ---------------------------------------------------------- */

/* 8-byte N, the header text, then ndata bytes 0, 1, 2, ... into buf. */
static size_t craft(unsigned char *buf, const char *header, size_t ndata)
{
	size_t n = strlen(header);

	for (int i = 0; i < 8; i++)
		buf[i] = (unsigned char)((uint64_t)n >> (8 * i));
	memcpy(buf + 8, header, n);
	for (size_t i = 0; i < ndata; i++)
		buf[8 + n + i] = (unsigned char)i;
	return 8 + n + ndata;
}

static void expect_refused(const void *bytes, size_t len, const char *want)
{
	struct safetensors_file f;
	struct fs_err err;

	memset(&err, 0, sizeof(err));
	assert_int_equal(safetensors_decode(bytes, len, "x.safetensors", &f, &err),
			 FS_EINPUT);
	if (!strstr(err.msg, want))
		fail_msg("want '%s' in '%s'", want, err.msg);
	assert_string_equal(err.file, "x.safetensors");
	assert_null(f.t);
	assert_null(f.buf);
}

/* What the writer wrote, the reader gives back: the hand-written
 * arrays above, by name, with their dtypes, shapes and metadata. */
static void test_read_back(void **state)
{
	struct tu_scratch *t = *state;
	struct safetensors st;
	struct safetensors_file f;
	struct npy_array a;
	struct fs_err err;

	build(&st);
	assert_int_equal(safetensors_write(&st, t->path, &err), FS_OK);
	safetensors_free(&st);
	assert_int_equal(safetensors_read(t->path, &f, &err), FS_OK);
	assert_int_equal(f.n, 5);
	assert_int_equal(f.nmeta, 2);
	assert_string_equal(f.meta[1].key, "manifest");
	assert_string_equal(f.meta[1].value, "{\"a\": 1}\n");
	assert_int_equal(safetensors_get(&f, "q_int8", &a, &err), FS_OK);
	assert_int_equal(a.dtype, NPY_I8);
	assert_int_equal(a.ndim, 2);
	assert_int_equal(a.shape[0], 2);
	assert_int_equal(a.shape[1], 3);
	assert_memory_equal(a.data, q8, 6);
	npy_free(&a);
	assert_int_equal(safetensors_get(&f, "f64", &a, &err), FS_OK);
	assert_true(((double *)a.data)[0] == 1.5 && ((double *)a.data)[1] == -2.0);
	npy_free(&a);
	assert_int_equal(safetensors_get(&f, "scalar", &a, &err), FS_OK);
	assert_int_equal(a.ndim, 0);
	assert_int_equal(a.count, 1);
	assert_int_equal(*(int32_t *)a.data, 42);
	npy_free(&a);
	assert_int_equal(safetensors_get(&f, "empty", &a, &err), FS_OK);
	assert_int_equal(a.count, 0);
	npy_free(&a);
	assert_int_equal(safetensors_get(&f, "nope", &a, &err), FS_EINPUT);
	assert_non_null(strstr(err.msg, "no tensor 'nope' (it has: f64, q_int8, "
			       "scalar, empty, u8)"));
	safetensors_file_free(&f);
	/* The FILE:NAME form, and a plain path for .npy. */
	{
		char spec[200];

		snprintf(spec, sizeof(spec), "%s:u8", t->path);
		assert_int_equal(tensor_read(spec, &a, &err), FS_OK);
		assert_int_equal(a.ndim, 3);
		assert_int_equal(((uint8_t *)a.data)[1], 0xff);
		npy_free(&a);
		snprintf(spec, sizeof(spec), "%s:", t->path);
		assert_int_equal(tensor_read(spec, &a, &err), FS_EINPUT);
		assert_non_null(strstr(err.msg, "no tensor name after"));
		assert_int_equal(tensor_read(t->path, &a, &err), FS_EINPUT);
		assert_non_null(strstr(err.msg, "not a .npy file"));
	}
}

/* The module header's worked example, read: "a", I8 [3], 01 02 03. */
static void test_read_worked_example(void **state)
{
	static const char hdr[] =
		"{\"a\":{\"dtype\":\"I8\",\"shape\":[3],\"data_offsets\":[0,3]}}   ";
	unsigned char b[128];
	size_t n;
	struct safetensors_file f;
	struct npy_array a;
	struct fs_err err;

	(void)state;
	n = craft(b, hdr, 0);
	b[n++] = 1, b[n++] = 2, b[n++] = 3;
	assert_int_equal(b[0], 0x38);
	assert_int_equal(safetensors_decode(b, n, "w", &f, &err), FS_OK);
	assert_int_equal(safetensors_get(&f, "a", &a, &err), FS_OK);
	assert_int_equal(a.count, 3);
	assert_memory_equal(a.data, "\x01\x02\x03", 3);
	npy_free(&a);
	safetensors_file_free(&f);
}

#define E(name, dt, shape, b, e) \
	"\"" name "\":{\"dtype\":\"" dt "\",\"shape\":" shape \
	",\"data_offsets\":[" #b "," #e "]}"

static void test_read_refuses(void **state)
{
	static const struct { const char *hdr; size_t ndata; const char *msg; } cases[] = {
		{ "[1]", 0, "the header must be a JSON object" },
		{ "{" E("a", "I8", "[3]", 0, 3) "," E("a", "I8", "[3]", 3, 6) "}", 6,
		  "key 'a' given twice" },
		{ "{" E("a", "F8_E4M3", "[1]", 0, 1) "}", 1,
		  "tensor 'a': unsupported dtype 'F8_E4M3'" },
		{ "{" E("a", "BF16", "[3]", 0, 3) "}", 3,
		  "tensor 'a': BF16 shape needs 6 bytes, data_offsets span 3" },
		{ "{" E("a", "I32", "[2]", 0, 4) "}", 4,
		  "tensor 'a': I32 shape needs 8 bytes, data_offsets span 4" },
		{ "{" E("a", "I8", "[4]", 0, 4) "," E("b", "I8", "[4]", 2, 6) "}", 6,
		  "tensor 'b' (bytes 2..6) overlaps 'a'" },
		{ "{" E("a", "I8", "[2]", 0, 2) "," E("b", "I8", "[2]", 3, 5) "}", 5,
		  "a gap of 1 bytes before tensor 'b'" },
		{ "{" E("a", "I8", "[2]", 0, 2) "}", 3, "1 bytes after the last tensor" },
		{ "{" E("a", "I8", "[4]", 0, 4) "}", 3,
		  "tensor 'a' ends at byte 4 of the data, which has 3" },
		{ "{" E("a", "I8", "[2]", 2, 0) "}", 2,
		  "data_offsets must be [begin, end] with begin <= end" },
		{ "{" E("a", "I8", "[-2]", 0, 2) "}", 2, "shape[0] must be a non-negative integer" },
		{ "{" E("a", "I8", "[1,1,1,1,1,1,1,1,1]", 0, 1) "}", 1,
		  "shape must be a list of at most 8 sizes" },
		{ "{\"a\":{\"dtype\":\"I8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":1}}", 1,
		  "tensor 'a': unknown key 'x'" },
		{ "{\"a\":{\"dtype\":\"I8\",\"shape\":[1]}}", 1, "tensor 'a': missing 'data_offsets'" },
		{ "{\"__metadata__\":{\"k\":1}}", 0, "__metadata__ 'k' must be a string" },
		{ "{\"a\\u0000b\":{}}", 0, "a NUL (\\u0000) in a string" },
		{ "{" E("a", "I8", "[1]", 0, 1) ",}", 1, "trailing comma before '}'" },
		{ "{" E("a", "I8", "[01]", 0, 1) "}", 1, "leading zeros are not JSON" },
		{ "{" E("a", "I8", "[1]", 0, 1) "} x", 1, "byte 62: text after the JSON value" },
		{ "{\"\":{}}", 0, "a tensor with an empty name" },
	};
	unsigned char b[512];

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(cases); i++)
		expect_refused(b, craft(b, cases[i].hdr, cases[i].ndata), cases[i].msg);
	expect_refused("\x10\0\0", 3, "truncated: 3 bytes");
	expect_refused("\x10\0\0\0\0\0\0\0{}", 10,
		       "truncated: header length says 16 bytes, the file has 2");
	expect_refused("\0\0\0\0\x01\0\0\0{}", 10, "header length 4294967296 is over");
}

/* Issue 21 point 14: data_offsets of [0, 2^64] were reported as "must
 * be [begin, end] with begin <= end", as if out of order; 2^64 is past
 * what 64 bits hold, so no file has such an offset. Each offset is now
 * judged alone first: past 2^64 - 1, or not a non-negative integer; an
 * order error shows the two. */
static void test_read_offsets_past_any_file(void **state)
{
	static const struct { const char *hdr; size_t ndata; const char *msg; } cases[] = {
		{ "{" E("a", "I8", "[2]", 0, 18446744073709551616) "}", 2,
		  "tensor 'a': data_offsets[1] 18446744073709551616 is past 2^64 - 1, "
		  "larger than any file" },
		{ "{" E("a", "I8", "[2]", 99999999999999999999999, 2) "}", 2,
		  "tensor 'a': data_offsets[0] 99999999999999999999999 is past 2^64 - 1" },
		{ "{" E("a", "I8", "[2]", 0, -1) "}", 2,
		  "tensor 'a': data_offsets[1] must be a non-negative integer" },
		{ "{" E("a", "I8", "[2]", 0, 1.5) "}", 2,
		  "tensor 'a': data_offsets[1] must be a non-negative integer" },
		{ "{" E("a", "I8", "[2]", 2, 0) "}", 2,
		  "data_offsets must be [begin, end] with begin <= end, not [2, 0]" },
	};
	unsigned char b[512];

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(cases); i++)
		expect_refused(b, craft(b, cases[i].hdr, cases[i].ndata), cases[i].msg);
}

/* Every proper prefix of a valid file is refused, and no single-byte
 * change anywhere crashes the reader: each decodes or is FS_EINPUT.
 * Run under ASan. */
static void test_read_mutations(void **state)
{
	static const unsigned char subst[] = {
		0, ' ', '"', '\\', ',', ':', '[', ']', '{', '}', '-', '9', 'e',
		0x80, 0xff,
	};
	struct tu_scratch *t = *state;
	struct safetensors st;
	struct safetensors_file f;
	unsigned char *b, *m;
	size_t n;

	build(&st);
	assert_int_equal(safetensors_write(&st, t->path, NULL), FS_OK);
	safetensors_free(&st);
	b = slurp(t->path, &n);
	m = malloc(n);
	assert_non_null(m);
	for (size_t len = 0; len < n; len++)
		assert_int_equal(safetensors_decode(b, len, "p", &f, NULL), FS_EINPUT);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < sizeof(subst); k++) {
			enum fs_rc rc;

			memcpy(m, b, n);
			m[i] = subst[k];
			rc = safetensors_decode(m, n, "m", &f, NULL);
			assert_true(rc == FS_OK || rc == FS_EINPUT);
			if (rc == FS_OK)
				safetensors_file_free(&f);
		}
	}
	free(m);
	free(b);
}

/* Deep nesting in the header is refused at the 65th level, fast. */
static void test_read_deep_header(void **state)
{
	size_t n = 500000, len;
	char *h = malloc(2 * n + 32);
	unsigned char *b = malloc(2 * n + 64);
	struct safetensors_file f;
	struct fs_err err;

	(void)state;
	len = (size_t)sprintf(h, "{\"__metadata__\":");
	memset(h + len, '[', n);
	memset(h + len + n, ']', n);
	strcpy(h + len + 2 * n, "}");
	assert_int_equal(safetensors_decode(b, craft(b, h, 0), "d", &f, &err),
			 FS_EINPUT);
	/* '{' is level 1, so the 64th '[' (file byte 8 + 16 + 63) is 65. */
	assert_non_null(strstr(err.msg, "byte 87: nested deeper than 64 levels"));
	free(h);
	free(b);
}

/* A FIFO is refused, not waited on (readfile_open). */
static void test_read_fifo(void **state)
{
	struct tu_scratch *t = *state;
	struct safetensors_file f;
	struct fs_err err;

	assert_int_equal(mkfifo(t->path, 0600), 0);
	alarm(10);
	assert_int_equal(safetensors_read(t->path, &f, &err), FS_EINPUT);
	alarm(0);
	assert_non_null(strstr(err.msg, "not a regular file (a FIFO)"));
}

/*
 * Goldens written as safetensors, read back as a dump: the diff says
 * match; one byte of acc changed in the file, and it says mismatch.
 */
static void test_round_trip_through_diff(void **state)
{
	struct tu_scratch *t = *state;
	const char *c = FRAGSIM_SRC "/cases/edge/constant-rows.yaml";
	char st_path[200];
	struct safetensors_file f;
	const struct safetensors_entry *e;
	struct fs_err err;
	FILE *fp;

	assert_int_equal(tu_sh("'%s' run '%s' --out %s/rt --format safetensors "
			       ">/dev/null", FRAGSIM_BIN, c, t->dir), 0);
	assert_int_equal(tu_sh("'%s' diff '%s' --dump %s/rt >/dev/null",
			       FRAGSIM_BIN, c, t->dir), 0);
	snprintf(st_path, sizeof(st_path), "%s/rt/golden.safetensors", t->dir);
	assert_int_equal(safetensors_read(st_path, &f, &err), FS_OK);
	e = safetensors_find(&f, "acc");
	assert_non_null(e);
	fp = fopen(st_path, "r+b");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, (long)((size_t)(f.data - f.buf) + e->begin), SEEK_SET), 0);
	assert_int_equal(fputc(0x55, fp), 0x55);
	assert_int_equal(fclose(fp), 0);
	safetensors_file_free(&f);
	assert_int_equal(tu_sh("'%s' diff '%s' --dump %s >/dev/null",
			       FRAGSIM_BIN, c, st_path), 1);
	/* Two .safetensors in the directory: fragsim will not pick one. */
	assert_int_equal(tu_sh("cp %s %s/rt/other.safetensors && '%s' diff "
			       "'%s' --dump %s/rt 2>%s/rt/err.txt", st_path, t->dir,
			       FRAGSIM_BIN, c, t->dir, t->dir), 2);
	assert_int_equal(tu_sh("grep -q 'holds more than one .safetensors' "
			       "%s/rt/err.txt", t->dir), 0);
}

/*
 * run --bf16: q and out are BF16 in the file, every other tensor keeps
 * its dtype; q (BF16-representable) reads back equal to the f32 golden.
 * diff --dump reads the file: acc matches bit for bit, and out too, at
 * BF16 (test_bf16_out_diff). --bf16 with .npy output is refused (exit
 * 2), naming the fix.
 */
static void test_bf16_golden(void **state)
{
	struct tu_scratch *t = *state;
	const char *c = FRAGSIM_SRC "/cases/edge/constant-rows.yaml";
	char path[200];
	struct safetensors_file fb, ff;
	struct npy_array qb, qf;
	struct fs_err err;

	assert_int_equal(tu_sh("'%s' run '%s' --out %s/b --format safetensors "
			       "--bf16 >/dev/null", FRAGSIM_BIN, c, t->dir), 0);
	assert_int_equal(tu_sh("'%s' run '%s' --out %s/f --format safetensors "
			       ">/dev/null", FRAGSIM_BIN, c, t->dir), 0);
	snprintf(path, sizeof(path), "%s/b/golden.safetensors", t->dir);
	assert_int_equal(safetensors_read(path, &fb, &err), FS_OK);
	snprintf(path, sizeof(path), "%s/f/golden.safetensors", t->dir);
	assert_int_equal(safetensors_read(path, &ff, &err), FS_OK);
	assert_int_equal(safetensors_find(&fb, "q")->bf16, 1);
	assert_int_equal(safetensors_find(&fb, "out")->bf16, 1);
	assert_int_equal(safetensors_find(&fb, "acc")->bf16, 0);
	assert_int_equal(safetensors_find(&fb, "acc")->dtype, NPY_I32);
	assert_int_equal(safetensors_find(&ff, "q")->bf16, 0);
	assert_int_equal(safetensors_get(&fb, "q", &qb, &err), FS_OK);
	assert_int_equal(safetensors_get(&ff, "q", &qf, &err), FS_OK);
	assert_int_equal(qb.count, qf.count);
	assert_memory_equal(qb.data, qf.data, qf.count * sizeof(float));
	npy_free(&qb);
	npy_free(&qf);
	safetensors_file_free(&fb);
	safetensors_file_free(&ff);
	assert_int_equal(tu_sh("'%s' diff '%s' --dump %s/b >%s/d.txt",
			       FRAGSIM_BIN, c, t->dir, t->dir), 0);
	assert_int_equal(tu_sh("grep -q '^acc .* 0 mismatches' %s/d.txt", t->dir), 0);
	assert_int_equal(tu_sh("'%s' run '%s' --out %s/n --bf16 >/dev/null "
			       "2>%s/e.txt", FRAGSIM_BIN, c, t->dir, t->dir), 2);
	assert_int_equal(tu_sh("grep -q 'bf16 needs --format safetensors' "
			       "%s/e.txt", t->dir), 0);
}

/*
 * Add one to the bits of element k of tensor name in the file at path
 * (width 2 for BF16, 4 for F32; little endian): the next value away
 * from zero, one ulp. Returns the bits it had.
 */
static uint32_t bump_ulp(const char *path, const char *name, size_t k, int width)
{
	struct safetensors_file f;
	const struct safetensors_entry *e;
	struct fs_err err;
	unsigned char b[4];
	uint32_t old = 0, v;
	long at;
	FILE *fp;

	assert_int_equal(safetensors_read(path, &f, &err), FS_OK);
	e = safetensors_find(&f, name);
	assert_non_null(e);
	assert_int_equal(e->bf16, width == 2);
	assert_true((k + 1) * (size_t)width <= e->end - e->begin);
	at = (long)((size_t)(f.data - f.buf) + e->begin + k * (size_t)width);
	safetensors_file_free(&f);
	fp = fopen(path, "r+b");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, at, SEEK_SET), 0);
	assert_int_equal(fread(b, 1, (size_t)width, fp), (size_t)width);
	for (int i = width - 1; i >= 0; i--)
		old = old << 8 | b[i];
	v = old + 1;
	for (int i = 0; i < width; i++)
		b[i] = (unsigned char)(v >> 8 * i);
	assert_int_equal(fseek(fp, at, SEEK_SET), 0);
	assert_int_equal(fwrite(b, 1, (size_t)width, fp), (size_t)width);
	assert_int_equal(fclose(fp), 0);
	return old;
}

static int count_of(const char *text, const char *what)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* `run case --format safetensors FLAGS` into t->dir/g; its golden
 * file's path in path[n]. */
static void golden_of(const struct tu_scratch *t, const char *c,
		      const char *flags, char *path, size_t n)
{
	assert_int_equal(tu_sh("'%s' run '%s' --out %s/g --format safetensors %s "
			       ">/dev/null", FRAGSIM_BIN, c, t->dir, flags), 0);
	snprintf(path, n, "%s/g/golden.safetensors", t->dir);
}

/* out[0,0,3,7]: one sequence, one decode token, 24 q heads of D = 256
 * (the case's defaults), so element 3 * 256 + 7 of the flat tensor. */
#define OUT_ELEM (3 * 256 + 7)
#define OUT_LABEL "out[0,0,3,7] got %.9g want %.9g | seq 0, token 0, q head 3, kv head 0, dim 7\n"

/*
 * A bf16 kernel's out. run --bf16 stores out as such a kernel does,
 * rounded to nearest even; diff compares it with the simulation's out
 * rounded the same way, so the file diffs clean (before, every rounded
 * element was a mismatch), and out's line says it was compared at BF16
 * (and only out's: acc is int32). One BF16 ulp up on out[0,0,3,7] is
 * then the one mismatch, labelled q head 3, kv head 0 (G = 24 / 4 = 6),
 * dim 7, got and want the two BF16 values.
 */
static void test_bf16_out_diff(void **state)
{
	struct tu_scratch *t = *state;
	const char *c = FRAGSIM_SRC "/cases/edge/constant-rows.yaml";
	const char *o;
	char path[200], want[300];
	struct run_result r;
	uint32_t old;

	golden_of(t, c, "--bf16", path, sizeof(path));
	r = tu_run("diff %s --dump %s", c, path);
	if (r.status != 0)
		fail_msg("exit %d\n%s%s", r.status, r.out, r.err);
	assert_non_null(strstr(r.out, "\nout       6144 compared, 0 mismatches "
			       "(compared at BF16: the simulation's rounded to nearest even)\n"));
	assert_int_equal(count_of(r.out, "BF16"), 1);
	assert_non_null(strstr(r.out, "\nverdict   match: "));
	tu_free(&r);

	r = tu_run("diff %s --dump %s --json", c, path);
	assert_int_equal(r.status, 0);
	o = strstr(r.out, "\"name\": \"out\"");
	assert_non_null(o);
	assert_non_null(strstr(o, "\"bf16\": true"));
	assert_true(strstr(o, "\"bf16\": true") < strstr(o, "\"compared\""));
	assert_int_equal(count_of(r.out, "\"bf16\""), 1);
	tu_free(&r);

	old = bump_ulp(path, "out", OUT_ELEM, 2);
	r = tu_run("diff %s --dump %s", c, path);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "\nout       6144 compared, 1 mismatches, max abs "));
	assert_non_null(strstr(r.out, " (compared at BF16: the simulation's rounded to nearest even)\n"));
	snprintf(want, sizeof(want), "          " OUT_LABEL,
		 tu_f32_from_bits((old + 1) << 16), tu_f32_from_bits(old << 16));
	if (!strstr(r.out, want))
		fail_msg("no '%s' in\n%s", want, r.out);
	assert_non_null(strstr(r.out, "\nverdict   mismatch: 1 of "));
	tu_free(&r);
}

/*
 * An f32 out is compared bit for bit, as before: one f32 ulp up on
 * out[0,0,3,7] is a mismatch, and nothing mentions BF16. Unless the low
 * 16 bits are 0x7fff or 0x8000 (a rounding tie on one side), both values
 * round to the same BF16, so a diff that rounded f32 outs would miss it.
 */
static void test_f32_out_stays_exact(void **state)
{
	struct tu_scratch *t = *state;
	const char *c = FRAGSIM_SRC "/cases/edge/constant-rows.yaml";
	char path[200], want[300];
	struct run_result r;
	uint32_t old;

	golden_of(t, c, "", path, sizeof(path));
	old = bump_ulp(path, "out", OUT_ELEM, 4);
	assert_true((old & 0xffff) != 0x7fff && (old & 0xffff) != 0x8000);
	r = tu_run("diff %s --dump %s", c, path);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "\nout       6144 compared, 1 mismatches, max abs "));
	snprintf(want, sizeof(want), "          " OUT_LABEL,
		 tu_f32_from_bits(old + 1), tu_f32_from_bits(old));
	if (!strstr(r.out, want))
		fail_msg("no '%s' in\n%s", want, r.out);
	assert_null(strstr(r.out, "BF16"));
	tu_free(&r);
}

/*
 * Only float results may come as BF16. An acc or q_int8 in BF16 could
 * hold rounded integers (as one in float32 could hold NaN), and
 * q_scale scales acc into scores, so the kernel's own f32 value is what
 * must be compared: each is refused, exit 2, naming the tensor and
 * what the file says. Before, a BF16 entry read as float32 and the
 * message said "not float32".
 */
static void test_bf16_refused_where_exact(void **state)
{
	static const struct {
		const char *name, *want;
	} cases[] = {
		{ "acc", "acc must be int32, not BF16" },
		{ "q_int8", "q_int8 must be int8, not BF16" },
		{ "q_scale", "q_scale must be float32, not BF16" },
	};
	struct tu_scratch *t = *state;
	const char *c = FRAGSIM_SRC "/cases/edge/constant-rows.yaml";
	const uint16_t one = 0x3f80;	/* 1.0 */
	const size_t n1 = 1;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct safetensors st;
		struct run_result r;
		char want[300];

		safetensors_init(&st);
		assert_int_equal(safetensors_add_bf16(&st, cases[i].name, 1, &n1, &one,
						      NULL), FS_OK);
		assert_int_equal(safetensors_write(&st, t->path, NULL), FS_OK);
		safetensors_free(&st);
		r = tu_run("diff %s --dump %s", c, t->path);
		snprintf(want, sizeof(want), "%s:%s: %s", t->path, cases[i].name,
			 cases[i].want);
		if (r.status != 2 || !strstr(r.err, want))
			fail_msg("exit %d, stderr '%s', want '%s'", r.status, r.err, want);
		tu_free(&r);
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, tmp_setup, tu_scratch_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_write_and_take_apart),
		T(test_worked_example),
		T(test_bf16_rounding),
		T(test_bf16_write_read),
		T(test_empty),
		T(test_builder_errors),
		T(test_many_tensors),
		T(test_python_reads_it),
		T(test_read_back),
		T(test_read_worked_example),
		T(test_read_refuses),
		T(test_read_offsets_past_any_file),
		T(test_read_mutations),
		T(test_read_deep_header),
		T(test_read_fifo),
		T(test_round_trip_through_diff),
		T(test_bf16_golden),
		T(test_bf16_out_diff),
		T(test_f32_out_stays_exact),
		T(test_bf16_refused_where_exact),
	};

	return cmocka_run_group_tests_name("safetensors", tests, NULL, NULL);
}
