/*
 * test_sha256.c - SHA-256 against the FIPS 180-4 example vectors, plus
 * lengths around the 55/56/64-byte padding boundaries (digests from
 * Python's hashlib) and chunked updates against the one-shot digest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../sim/common/fs.h"
#include "../lib/sha256.h"

static void check_hex(const char *msg, size_t len, const char *want)
{
	char hex[SHA256_HEX_LEN];

	sha256_hex(msg, len, hex);
	assert_string_equal(hex, want);
}

static void test_nist_empty(void **state)
{
	(void)state;
	check_hex("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	/* A NULL pointer with length 0 is a valid empty message. */
	check_hex(NULL, 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_nist_abc(void **state)
{
	(void)state;
	check_hex("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_nist_448_bits(void **state)
{
	static const char m[] =
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

	(void)state;
	assert_int_equal(strlen(m), 56);	/* 448 bits: length spills */
	check_hex(m, 56, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_nist_896_bits(void **state)
{
	static const char m[] =
		"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
		"hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";

	(void)state;
	check_hex(m, strlen(m), "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

static void test_nist_million_a(void **state)
{
	struct sha256 s;
	char chunk[1000], hex[SHA256_HEX_LEN];

	(void)state;
	memset(chunk, 'a', sizeof(chunk));
	sha256_init(&s);
	for (int i = 0; i < 1000; i++)
		sha256_update(&s, chunk, sizeof(chunk));
	sha256_final_hex(&s, hex);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* testcase: 55 fits the length in one block, 56..63 need a second one. */
static void test_padding_boundaries(void **state)
{
	static const struct { size_t n; const char *hex; } cases[] = {
		{ 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
		{ 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
		{ 63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34" },
		{ 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
		{ 65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0" },
		{ 119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb" },
		{ 120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c" },
		{ 128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e" },
	};
	char a[128];

	(void)state;
	memset(a, 'a', sizeof(a));
	for (size_t i = 0; i < FS_ARRAY_LEN(cases); i++)
		check_hex(a, cases[i].n, cases[i].hex);
}

/* Every split of a 200-byte message into two updates, and byte-at-a-time,
 * gives the one-shot digest: the buffering in update() is invisible. */
static void test_chunked_equals_oneshot(void **state)
{
	unsigned char m[200];
	char want[SHA256_HEX_LEN], got[SHA256_HEX_LEN];
	struct sha256 s;

	(void)state;
	for (size_t i = 0; i < sizeof(m); i++)
		m[i] = (unsigned char)(i * 37 + 11);
	sha256_hex(m, sizeof(m), want);
	for (size_t cut = 0; cut <= sizeof(m); cut++) {
		sha256_init(&s);
		sha256_update(&s, m, cut);
		sha256_update(&s, m + cut, sizeof(m) - cut);
		sha256_final_hex(&s, got);
		assert_string_equal(got, want);
	}
	sha256_init(&s);
	for (size_t i = 0; i < sizeof(m); i++)
		sha256_update(&s, m + i, 1);
	sha256_final_hex(&s, got);
	assert_string_equal(got, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nist_empty),
		cmocka_unit_test(test_nist_abc),
		cmocka_unit_test(test_nist_448_bits),
		cmocka_unit_test(test_nist_896_bits),
		cmocka_unit_test(test_nist_million_a),
		cmocka_unit_test(test_padding_boundaries),
		cmocka_unit_test(test_chunked_equals_oneshot),
	};

	return cmocka_run_group_tests_name("sha256", tests, NULL, NULL);
}
