/*
 * test_json.c - lib/json.c: exact text in compact and pretty modes,
 * escaping (controls, quotes, UTF-8 kept, bad UTF-8 replaced), numbers
 * (integers at their limits, shortest round-trip floats, NaN/Inf as
 * null), every misuse error, write failures, and atomic json_save.
 * The reader: values, strictness (repeated keys, NUL, bad UTF-8, JSON
 * that other parsers tolerate) and the depth bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sim/common/fs.h"
#include "../lib/json.h"
#include "testutil.h"

/* Finish j (memory mode), compare the text, free. */
static void expect_text(struct json *j, const char *want)
{
	if (json_finish(j) != FS_OK)
		fail_msg("json_finish: %s", j->err.msg);
	assert_string_equal(json_text(j, NULL), want);
	json_free(j);
}

static void expect_error(struct json *j, const char *msg_part)
{
	assert_int_equal(json_finish(j), FS_EINTERNAL);
	if (!strstr(j->err.msg, msg_part))
		fail_msg("want '%s' in '%s'", msg_part, j->err.msg);
	json_free(j);
}

/* The same small document, used by both modes. */
static void small_doc(struct json *j)
{
	json_begin_object(j);
	json_key_string(j, "name", "x");
	json_key(j, "shape");
	json_begin_array_compact(j);
	json_int(j, 2);
	json_int(j, 16);
	json_end_array(j);
	json_key(j, "files");
	json_begin_array(j);
	json_begin_object(j);
	json_key_int(j, "n", 1);
	json_key_bool(j, "ok", true);
	json_end_object(j);
	json_null(j);
	json_end_array(j);
	json_key(j, "empty");
	json_begin_object(j);
	json_end_object(j);
	json_key(j, "none");
	json_begin_array(j);
	json_end_array(j);
	json_end_object(j);
}

static void test_compact(void **state)
{
	struct json j;

	(void)state;
	json_init_mem(&j, 0);
	small_doc(&j);
	expect_text(&j, "{\"name\":\"x\",\"shape\":[2,16],\"files\":"
		    "[{\"n\":1,\"ok\":true},null],\"empty\":{},\"none\":[]}");
}

static void test_pretty(void **state)
{
	struct json j;

	(void)state;
	json_init_mem(&j, 1);
	small_doc(&j);
	expect_text(&j,
		    "{\n"
		    "  \"name\": \"x\",\n"
		    "  \"shape\": [2, 16],\n"
		    "  \"files\": [\n"
		    "    {\n"
		    "      \"n\": 1,\n"
		    "      \"ok\": true\n"
		    "    },\n"
		    "    null\n"
		    "  ],\n"
		    "  \"empty\": {},\n"
		    "  \"none\": []\n"
		    "}\n");
}

/* A compact array keeps everything inside it on one line; the pretty
 * layout resumes after it. */
static void test_compact_array_nesting(void **state)
{
	struct json j;

	(void)state;
	json_init_mem(&j, 1);
	json_begin_array(&j);
	json_begin_array_compact(&j);
	json_begin_object(&j);
	json_key_int(&j, "a", 1);
	json_key(&j, "b");
	json_begin_array(&j);
	json_int(&j, 2);
	json_end_array(&j);
	json_end_object(&j);
	json_begin_array_compact(&j);	/* nested compact: still one line */
	json_end_array(&j);
	json_end_array(&j);
	json_begin_array(&j);
	json_int(&j, 3);
	json_end_array(&j);
	json_end_array(&j);
	expect_text(&j,
		    "[\n"
		    "  [{\"a\": 1, \"b\": [2]}, []],\n"
		    "  [\n"
		    "    3\n"
		    "  ]\n"
		    "]\n");
}

static void test_scalar_documents(void **state)
{
	struct json j;

	(void)state;
	json_init_mem(&j, 0);
	json_int(&j, -7);
	expect_text(&j, "-7");
	json_init_mem(&j, 1);
	json_string(&j, "s");
	expect_text(&j, "\"s\"\n");
	json_init_mem(&j, 0);
	json_string(&j, NULL);
	expect_text(&j, "null");
}

static void test_escaping(void **state)
{
	static const char all_controls[] =
		"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
		"\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f";
	struct json j;

	(void)state;
	json_init_mem(&j, 0);
	json_string(&j, "q\"b\\s/ del\x7f tab\t");
	expect_text(&j, "\"q\\\"b\\\\s/ del\x7f tab\\t\"");

	json_init_mem(&j, 0);
	json_string(&j, all_controls);
	expect_text(&j, "\"\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007"
		    "\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f\\u0010\\u0011\\u0012"
		    "\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a"
		    "\\u001b\\u001c\\u001d\\u001e\\u001f\"");

	/* Embedded NUL through the length form; keys are escaped too. */
	json_init_mem(&j, 0);
	json_begin_object(&j);
	json_key(&j, "k\"\n");
	json_string_len(&j, "a\0b", 3);
	json_end_object(&j);
	expect_text(&j, "{\"k\\\"\\n\":\"a\\u0000b\"}");
}

static void test_utf8(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		/* valid: 2, 3 and 4 bytes, the largest scalar, U+2028 */
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e", NULL },
		{ "\xf4\x8f\xbf\xbf \xe2\x80\xa8 \xed\x9f\xbf", NULL },
		/* invalid, one \ufffd per bad byte */
		{ "a\xff" "b", "a\\ufffdb" },
		{ "\x80", "\\ufffd" },				/* lone continuation */
		{ "\xc0\xaf", "\\ufffd\\ufffd" },		/* overlong '/' */
		{ "\xe0\x80\xaf", "\\ufffd\\ufffd\\ufffd" },	/* overlong */
		{ "\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd" },	/* surrogate */
		{ "\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd" }, /* > 10FFFF */
		{ "\xf5\x80", "\\ufffd\\ufffd" },
		{ "x\xe2\x82", "x\\ufffd\\ufffd" },		/* cut short */
		{ "\xc3" "A", "\\ufffdA" },
	};
	char want[128];
	struct json j;

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(cases); i++) {
		snprintf(want, sizeof(want), "\"%s\"",
			 cases[i].out ? cases[i].out : cases[i].in);
		json_init_mem(&j, 0);
		json_string(&j, cases[i].in);
		expect_text(&j, want);
	}
}

static void test_integers(void **state)
{
	struct json j;

	(void)state;
	json_init_mem(&j, 0);
	json_begin_array(&j);
	json_int(&j, 0);
	json_int(&j, INT64_MIN);
	json_int(&j, INT64_MAX);
	json_uint(&j, UINT64_MAX);
	json_end_array(&j);
	expect_text(&j, "[0,-9223372036854775808,9223372036854775807,"
		    "18446744073709551615]");
}

static void test_doubles(void **state)
{
	static const struct { double v; const char *text; } cases[] = {
		{ 0.0, "0.0" }, { -0.0, "-0.0" }, { 1.0, "1.0" }, { -2.5, "-2.5" },
		{ 0.1, "0.1" }, { 0.0625, "0.0625" }, { 1e300, "1e+300" },
		{ 1e-7, "1e-07" }, { 123456789012345.0, "123456789012345.0" },
		{ 1e16, "1e+16" },
		/* 0.1 + 0.2 needs all 17 digits */
		{ 0.30000000000000004, "0.30000000000000004" },
		{ 1.0 / 3.0, "0.3333333333333333" },
		{ 5e-324, "4.94065645841247e-324" },	/* smallest denormal */
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
	};
	struct json j;

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(cases); i++) {
		json_init_mem(&j, 0);
		json_double(&j, cases[i].v);
		expect_text(&j, cases[i].text);
	}
}

static void test_floats(void **state)
{
	static const struct { float v; const char *text; } cases[] = {
		{ 0.1f, "0.1" }, { 1.0f, "1.0" }, { 0.0625f, "0.0625" },
		{ 1.0f / 3.0f, "0.33333334" }, { 16777216.0f, "16777216.0" },
		{ 3.4028235e38f, "3.4028235e+38" },
		{ 1e-45f, "1.4013e-45" },	/* %.6g is tried first */
		{ -1.5e-3f, "-0.0015" },
	};
	struct json j;

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(cases); i++) {
		json_init_mem(&j, 0);
		json_float(&j, cases[i].v);
		expect_text(&j, cases[i].text);
	}
}

/* Every printed value reads back to the same bits (xorshift patterns
 * over the whole range, denormals and huge values included). */
static void test_round_trip_property(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15u;
	struct json j;

	(void)state;
	for (int i = 0; i < 20000; i++) {
		double d;
		float f;
		uint32_t b32;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(&d, &x, 8);
		b32 = (uint32_t)(x >> 17);
		memcpy(&f, &b32, 4);
		if (isfinite(d)) {
			json_init_mem(&j, 0);
			json_double(&j, d);
			assert_int_equal(json_finish(&j), FS_OK);
			assert_true(strtod(json_text(&j, NULL), NULL) == d);
			json_free(&j);
		}
		if (isfinite(f)) {
			json_init_mem(&j, 0);
			json_float(&j, f);
			assert_int_equal(json_finish(&j), FS_OK);
			assert_true(strtof(json_text(&j, NULL), NULL) == f);
			json_free(&j);
		}
	}
}

/* JSON has no NaN or Infinity: null, for both widths. */
static void test_nonfinite_is_null(void **state)
{
	struct json j;

	(void)state;
	json_init_mem(&j, 0);
	json_begin_object(&j);
	json_key_double(&j, "nan", NAN);
	json_key_double(&j, "inf", INFINITY);
	json_key_double(&j, "ninf", -INFINITY);
	json_key_float(&j, "fnan", NAN);
	json_key_float(&j, "finf", -INFINITY);
	json_end_object(&j);
	expect_text(&j, "{\"nan\":null,\"inf\":null,\"ninf\":null,"
		    "\"fnan\":null,\"finf\":null}");
}

static void test_misuse(void **state)
{
	struct json j;

	(void)state;
	json_init_mem(&j, 0);
	json_begin_object(&j);
	json_int(&j, 1);
	expect_error(&j, "value in an object without a key");

	json_init_mem(&j, 0);
	json_begin_array(&j);
	json_key(&j, "k");
	expect_error(&j, "key inside an array");

	json_init_mem(&j, 0);
	json_key(&j, "k");
	expect_error(&j, "key outside an object");

	json_init_mem(&j, 0);
	json_begin_object(&j);
	json_key(&j, "a");
	json_key(&j, "b");
	expect_error(&j, "key where a value was due");

	json_init_mem(&j, 0);
	json_begin_object(&j);
	json_key(&j, "a");
	json_end_object(&j);
	expect_error(&j, "'}' where a value was due");

	json_init_mem(&j, 0);
	json_begin_array(&j);
	json_end_object(&j);
	expect_error(&j, "'}' closes an open array");

	json_init_mem(&j, 0);
	json_end_array(&j);
	expect_error(&j, "']' with nothing open");

	json_init_mem(&j, 0);
	json_int(&j, 1);
	json_int(&j, 2);
	expect_error(&j, "a second top-level value");

	json_init_mem(&j, 0);
	json_begin_array(&j);
	json_begin_object(&j);
	expect_error(&j, "2 container(s) left open");

	json_init_mem(&j, 0);
	expect_error(&j, "no value written");

	json_init_mem(&j, 0);
	for (int i = 0; i <= JSON_MAX_DEPTH; i++)
		json_begin_array(&j);
	expect_error(&j, "nesting deeper than 64");
}

/* After the first error nothing more is written and the message stays. */
static void test_errors_are_sticky(void **state)
{
	struct json j;

	(void)state;
	json_init_mem(&j, 0);
	json_begin_array(&j);
	json_key(&j, "k");
	json_int(&j, 1);
	json_end_array(&j);
	assert_int_equal(json_finish(&j), FS_EINTERNAL);
	assert_string_equal(json_text(&j, NULL), "[");
	assert_string_equal(j.err.msg, "json: key inside an array");
	assert_int_equal(json_finish(&j), FS_EINTERNAL);
	json_free(&j);
}

static void test_file_mode(void **state)
{
	char buf[64] = { 0 };
	struct json j;
	FILE *f = tmpfile();

	(void)state;
	assert_non_null(f);
	json_init(&j, f, 1);
	json_begin_object(&j);
	json_key_uint(&j, "n", 3);
	json_end_object(&j);
	assert_int_equal(json_finish(&j), FS_OK);
	rewind(f);
	assert_true(fread(buf, 1, sizeof(buf) - 1, f) > 0);
	assert_string_equal(buf, "{\n  \"n\": 3\n}\n");
	fclose(f);
	json_free(&j);	/* a no-op for a FILE* writer */
}

/* /dev/full: every write fails with ENOSPC, at the latest on flush. */
static void test_file_write_error(void **state)
{
	struct json j;
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	json_init(&j, f, 0);
	json_string(&j, "disk full");
	assert_int_equal(json_finish(&j), FS_EINTERNAL);
	assert_string_equal(j.err.msg, "json: write failed");
	fclose(f);
}

static void test_save_atomic(void **state)
{
	char dir[64], path[96], text[64] = { 0 };
	struct fs_err err;
	struct json j;
	FILE *f;

	(void)state;
	assert_non_null(tu_scratch_new(dir, sizeof(dir), "json"));
	snprintf(path, sizeof(path), "%s/m.json", dir);

	/* A broken document is not written at all. */
	json_init_mem(&j, 1);
	json_begin_object(&j);
	assert_int_equal(json_save(&j, path, &err), FS_EINTERNAL);
	assert_string_equal(err.file, path);
	assert_non_null(strstr(err.msg, "left open"));
	assert_int_equal(access(path, F_OK), -1);
	json_free(&j);

	json_init_mem(&j, 1);
	json_begin_object(&j);
	json_key_float(&j, "softmax_scale", 0.0625f);
	json_end_object(&j);
	assert_int_equal(json_save(&j, path, &err), FS_OK);
	json_free(&j);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_true(fread(text, 1, sizeof(text) - 1, f) > 0);
	fclose(f);
	assert_string_equal(text, "{\n  \"softmax_scale\": 0.0625\n}\n");

	/* A FILE* writer cannot be saved. */
	json_init(&j, stdout, 0);
	assert_int_equal(json_save(&j, path, &err), FS_EINTERNAL);
	assert_non_null(strstr(err.msg, "not a memory writer"));

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);	/* nothing else was left */
}

/* ---- reader ---------------------------------------------------------- */

static void parse_refused(const char *text, size_t len, const char *want)
{
	struct json_value *v = (struct json_value *)1;
	struct fs_err err;

	memset(&err, 0, sizeof(err));
	assert_int_equal(json_parse(text, len, "h.json", 0, &v, &err), FS_EINPUT);
	assert_null(v);
	if (!strstr(err.msg, want))
		fail_msg("'%.40s': want '%s' in '%s'", text, want, err.msg);
	assert_string_equal(err.file, "h.json");
}

#define REFUSED(text, want) parse_refused(text, strlen(text), want)

static void test_read_values(void **state)
{
	const char *t = " {\"a\": [1, -2.5e3, true, false, null],"
			" \"s\": \"x\\u00e9\\ud83d\\ude00\\n\\/\", \"o\": {}} ";
	struct json_value *v;
	const struct json_value *a, *str;
	struct fs_err err;
	uint64_t u;

	(void)state;
	assert_int_equal(json_parse(t, strlen(t), "h", 0, &v, &err), FS_OK);
	assert_int_equal(v->type, JSON_OBJECT);
	assert_int_equal(v->n, 3);
	a = json_member(v, "a");
	assert_non_null(a);
	assert_int_equal(a->n, 5);
	assert_int_equal(json_u64(&a->items[0], &u), 0);
	assert_int_equal(u, 1);
	assert_int_equal(json_u64(&a->items[1], &u), -1);	/* not a u64 */
	assert_string_equal(a->items[1].text, "-2.5e3");
	assert_int_equal(a->items[2].type, JSON_TRUE);
	assert_int_equal(a->items[4].type, JSON_NULL);
	str = json_member(v, "s");
	/* e-acute is C3 A9; U+1F600 is F0 9F 98 80. */
	assert_string_equal(str->text, "x\xc3\xa9\xf0\x9f\x98\x80\n/");
	assert_int_equal(json_member(v, "o")->n, 0);
	assert_null(json_member(v, "zz"));
	assert_int_equal(a->at, 7);	/* " {\"a\": [": the [ is byte 7 */
	json_value_free(v);
	/* 2^64 - 1 fits, 2^64 does not. */
	assert_int_equal(json_parse("18446744073709551615", 20, "h", 0, &v, &err), FS_OK);
	assert_int_equal(json_u64(v, &u), 0);
	assert_true(u == UINT64_MAX);
	json_value_free(v);
	assert_int_equal(json_parse("18446744073709551616", 20, "h", 0, &v, &err), FS_OK);
	assert_int_equal(json_u64(v, &u), -1);
	json_value_free(v);
}

static void test_read_refuses(void **state)
{
	(void)state;
	/* The second "a" starts at byte 17. */
	REFUSED("{\"a\": 1, \"b\": 2, \"a\": 3}", "byte 17: key 'a' given twice");
	REFUSED("{\"k\\u0000x\": 1}", "byte 3: a NUL (\\u0000) in a string");
	REFUSED("\"\xff\"", "byte 1: invalid UTF-8");
	REFUSED("\"\\ud800\"", "lone surrogate \\ud800");
	REFUSED("\"a\tb\"", "control character 0x09");
	REFUSED("\"\\x\"", "unknown escape '\\x'");
	REFUSED("[1,]", "trailing comma before ']'");
	REFUSED("[01]", "leading zeros are not JSON");
	REFUSED("[1.]", "expected a digit after '.'");
	REFUSED("{'a': 1}", "expected a key in quotes");
	REFUSED("[1] // c", "text after the JSON value");
	REFUSED("", "expected a value, found the end");
	REFUSED("\"abc", "unterminated string");
	REFUSED("[1 2]", "expected ',' or ']'");
	REFUSED("nul", "expected a value");
	parse_refused("[1]\0", 4, "byte 3: text after the JSON value");
}

/* 80000 and 500000 nested arrays: refused at level 65, in well under a
 * second, with the C stack bounded by the same 64 frames. */
static void test_read_depth(void **state)
{
	static const size_t levels[] = { 80000, 500000 };
	char ok[2 * JSON_READ_MAX_DEPTH];
	struct json_value *v;
	struct fs_err err;

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		char *t = malloc(2 * levels[i]);

		memset(t, '[', levels[i]);
		memset(t + levels[i], ']', levels[i]);
		parse_refused(t, 2 * levels[i], "byte 64: nested deeper than 64 levels");
		free(t);
	}
	/* The value cap: the array is value 1, so the 2^20-th "0" (at byte
	 * 1 + 2 * (2^20 - 1)) is one too many. */
	{
		size_t n = (size_t)JSON_READ_MAX_VALUES + 8;
		char *t = malloc(2 * n + 2);

		t[0] = '[';
		for (size_t k = 0; k < n; k++)
			memcpy(t + 1 + 2 * k, "0,", 2);
		t[2 * n] = ']';
		parse_refused(t, 2 * n + 1, "byte 2097151: more than 1048576 values");
		free(t);
	}
	memset(ok, '[', JSON_READ_MAX_DEPTH);
	memset(ok + JSON_READ_MAX_DEPTH, ']', JSON_READ_MAX_DEPTH);
	assert_int_equal(json_parse(ok, sizeof(ok), "h", 0, &v, &err), FS_OK);
	json_value_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_pretty),
		cmocka_unit_test(test_compact_array_nesting),
		cmocka_unit_test(test_scalar_documents),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_doubles),
		cmocka_unit_test(test_floats),
		cmocka_unit_test(test_round_trip_property),
		cmocka_unit_test(test_nonfinite_is_null),
		cmocka_unit_test(test_misuse),
		cmocka_unit_test(test_errors_are_sticky),
		cmocka_unit_test(test_file_mode),
		cmocka_unit_test(test_file_write_error),
		cmocka_unit_test(test_save_atomic),
		cmocka_unit_test(test_read_values),
		cmocka_unit_test(test_read_refuses),
		cmocka_unit_test(test_read_depth),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
