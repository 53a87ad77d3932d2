/*
 * test_safetensors.c - tools/safetensors.c: write a file, then take it
 * apart here (N, the header text, the data_offsets, the data bytes);
 * the worked example of the module header byte for byte; builder
 * errors; and, when /usr/bin/python3 has numpy, an independent reader
 * (json + np.frombuffer) that rebuilds every tensor.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sim/fs.h"
#include "../tools/safetensors.h"

struct tmp {
	char dir[64];
	char path[128];	/* dir/g.safetensors */
};

static int tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	strcpy(t->dir, "/tmp/fragsim-st-XXXXXX");
	if (!mkdtemp(t->dir)) {
		free(t);
		return -1;
	}
	snprintf(t->path, sizeof(t->path), "%s/g.safetensors", t->dir);
	*state = t;
	return 0;
}

static int tmp_teardown(void **state)
{
	struct tmp *t = *state;
	char p[200];

	unlink(t->path);
	snprintf(p, sizeof(p), "%s/check.py", t->dir);
	unlink(p);
	rmdir(t->dir);	/* fails, and the test shows it, if litter is left */
	free(t);
	return 0;
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
	struct tmp *t = *state;
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
	struct tmp *t = *state;
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
	struct tmp *t = *state;
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
	struct tmp *t = *state;
	struct safetensors st;
	char script[200], cmd[600];
	FILE *f;
	int rc;

	if (system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
		print_message("numpy not importable by /usr/bin/python3; skipped\n");
		skip();
	}
	build(&st);
	assert_int_equal(safetensors_write(&st, t->path, NULL), FS_OK);
	safetensors_free(&st);
	snprintf(script, sizeof(script), "%s/check.py", t->dir);
	f = fopen(script, "w");
	assert_non_null(f);
	assert_int_equal(fputs(py_check, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s %s", script, t->path);
	rc = system(cmd);
	assert_true(WIFEXITED(rc));
	assert_int_equal(WEXITSTATUS(rc), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tmp_setup, tmp_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_write_and_take_apart),
		T(test_worked_example),
		T(test_empty),
		T(test_builder_errors),
		T(test_many_tensors),
		T(test_python_reads_it),
	};

	return cmocka_run_group_tests_name("safetensors", tests, NULL, NULL);
}
