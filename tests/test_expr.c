/*
 * test_expr.c - cmocka tests for sim/lanemap/expr.c, the lane-map formula language.
 *
 * Every expected value is computed by hand (or, for the sweep, by the same
 * formula written as C), never by calling expr_eval on another input.
 * Each case table row is one check; a failure names its source string:
 *
 *   { "1 << 2 + 1", 0, 0, 8 }      '+' binds tighter than '<<'
 *   { "lane $ 3", 6, "unexpected character '$'" }
 *
 * Every error message expr.c can produce appears in a table below, with
 * its exact column.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../sim/lanemap/expr.h"

struct value_case {
	const char *src;
	int64_t lane, e, want;
};

struct compile_error_case {
	const char *src;
	int col;
	const char *msg;
};

struct eval_error_case {
	const char *src;
	int64_t lane, e;
	int col;
	const char *msg;
};

static void check_value(const char *src, int64_t lane, int64_t e, int64_t want)
{
	struct expr x;
	struct fs_err err = { 0 };
	int64_t got = 0;

	if (expr_compile(src, &x, &err) != FS_OK)
		fail_msg("\"%s\": compile: col %d: %s", src, err.col, err.msg);
	if (expr_eval(&x, lane, e, &got, &err) != FS_OK)
		fail_msg("\"%s\": eval: col %d: %s", src, err.col, err.msg);
	if (got != want)
		fail_msg("\"%s\" at lane=%lld e=%lld: got %lld, want %lld", src,
			 (long long)lane, (long long)e, (long long)got,
			 (long long)want);
}

static void check_error(const char *src, const struct fs_err *err,
			int col, const char *msg)
{
	if (err->col != col || strcmp(err->msg, msg) != 0)
		fail_msg("\"%.40s\": got col %d \"%s\", want col %d \"%s\"", src,
			 err->col, err->msg, col, msg);
	assert_string_equal(err->file, "");
	assert_int_equal(err->line, 0);
}

static const struct value_case precedence_cases[] = {
	/* each row tells the right grouping from the wrong one */
	{ "1 + 2 * 3", 0, 0, 7 },
	{ "(1 + 2) * 3", 0, 0, 9 },
	{ "8 - 3 - 2", 0, 0, 3 },
	{ "2 - 3 + 4", 0, 0, 3 },
	{ "64 / 4 / 2", 0, 0, 8 },
	{ "12 / 4 * 3", 0, 0, 9 },
	{ "100 % 7 % 3", 0, 0, 2 },
	{ "7 % 4 * 3", 0, 0, 9 },
	{ "2 * 7 % 4", 0, 0, 2 },
	{ "1 << 2 + 1", 0, 0, 8 },
	{ "1 + 2 << 1", 0, 0, 6 },
	{ "1 << 2 << 3", 0, 0, 32 },
	{ "256 >> 2 >> 1", 0, 0, 32 },
	{ "1 << 4 >> 2", 0, 0, 4 },
	{ "3 & 1 << 2", 0, 0, 0 },
	{ "6 & 3 | 8", 0, 0, 10 },
	{ "8 | 6 & 3", 0, 0, 10 },
	{ "5 ^ 1 & 3", 0, 0, 4 },
	{ "3 ^ 1 | 1", 0, 0, 3 },
	{ "1 | 3 ^ 3", 0, 0, 1 },
	{ "12 & 10 & 9", 0, 0, 8 },
	{ "1 | 2 | 4", 0, 0, 7 },
	{ "7 ^ 1 ^ 2", 0, 0, 4 },
	/* truncation toward zero, as in C */
	{ "-7 / 2", 0, 0, -3 },
	{ "-7 % 2", 0, 0, -1 },
	{ "7 / -2", 0, 0, -3 },
	{ "7 % -2", 0, 0, 1 },
	{ "-7 / -2", 0, 0, 3 },
	{ "-7 % -2", 0, 0, -1 },
	/* unary signs bind tighter than any binary operator */
	{ "- 2 * 3", 0, 0, -6 },
	{ "-2 * -3", 0, 0, 6 },
	{ "2 - -3", 0, 0, 5 },
	{ "2--3", 0, 0, 5 },
	{ "- - 3", 0, 0, 3 },
	{ "-+-+3", 0, 0, 3 },
	{ "+3", 0, 0, 3 },
	{ "-(2 + 3)", 0, 0, -5 },
	{ "-1 & 0xff", 0, 0, 255 },
	{ "-1 ^ 5", 0, 0, -6 },
	{ "-0 + 0", 0, 0, 0 },
};

static const struct value_case operand_cases[] = {
	{ "lane / 16 + 4 * e", 37, 2, 10 },
	{ "8 * (lane / 16) + e", 37, 2, 18 },
	{ "lane % 16", 37, 0, 5 },
	{ "(lane >> 4) << 3 | e & 7", 37, 13, 21 },
	{ "e", 0, 63, 63 },
	{ "lane", 63, 0, 63 },
	{ "lane*e", -3, 5, -15 },
	{ "0", 0, 0, 0 },
	{ "0x10", 0, 0, 16 },
	{ "0XfF", 0, 0, 255 },
	{ "0x7fffffffffffffff", 0, 0, INT64_MAX },
	{ "9223372036854775807", 0, 0, INT64_MAX },
	{ "-0x7fffffffffffffff - 1", 0, 0, INT64_MIN },
	{ "1 << 62", 0, 0, (int64_t)1 << 62 },
	{ "3 << 61", 0, 0, (int64_t)3 << 61 },
	{ "0 << 62", 0, 0, 0 },
	{ "0x7fffffffffffffff >> 62", 0, 0, 1 },
	{ "5 >> 0", 0, 0, 5 },
	/* the quotient overflows, the remainder does not */
	{ "(-0x7fffffffffffffff - 1) % -1", 0, 0, 0 },
	{ "lane % -1", INT64_MIN, 0, 0 },
	{ " \t lane\n*\r2 \v\f", 5, 0, 10 },
	{ "lane*2", 5, 0, 10 },
	{ "((((lane))))", 9, 0, 9 },
};

static void test_precedence(void **state)
{
	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(precedence_cases); i++) {
		const struct value_case *c = &precedence_cases[i];

		check_value(c->src, c->lane, c->e, c->want);
	}
}

static void test_operands(void **state)
{
	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(operand_cases); i++) {
		const struct value_case *c = &operand_cases[i];

		check_value(c->src, c->lane, c->e, c->want);
	}
}

/* The header's example compiles to the postfix code drawn in expr.c. */
static void test_code_layout(void **state)
{
	static const struct expr_op want[] = {
		{ EXPR_NUM, 8, 1 }, { EXPR_LANE, 0, 6 }, { EXPR_NUM, 16, 13 },
		{ EXPR_DIV, 0, 11 }, { EXPR_MUL, 0, 3 }, { EXPR_E, 0, 19 },
		{ EXPR_ADD, 0, 17 },
	};
	struct expr x;
	struct fs_err err;

	(void)state;
	assert_int_equal(expr_compile("8 * (lane / 16) + e", &x, &err), FS_OK);
	assert_int_equal(x.n, FS_ARRAY_LEN(want));
	for (int i = 0; i < x.n; i++) {
		assert_int_equal(x.code[i].op, want[i].op);
		assert_int_equal(x.code[i].num, want[i].num);
		assert_int_equal(x.code[i].col, want[i].col);
	}
}

/* Real lane-map formulas over a whole wave, against the same C formula. */
static void test_sweep(void **state)
{
	struct expr row, col, mix;
	struct fs_err err;

	(void)state;
	assert_int_equal(expr_compile("lane % 16", &row, &err), FS_OK);
	assert_int_equal(expr_compile("8 * (lane / 16) + e", &col, &err), FS_OK);
	assert_int_equal(expr_compile("(lane >> 4) << 3 | e & 7 ^ lane", &mix,
				      &err), FS_OK);
	for (int64_t lane = 0; lane < 64; lane++) {
		for (int64_t e = 0; e < 16; e++) {
			int64_t r, c, m;

			assert_int_equal(expr_eval(&row, lane, e, &r, &err), FS_OK);
			assert_int_equal(expr_eval(&col, lane, e, &c, &err), FS_OK);
			assert_int_equal(expr_eval(&mix, lane, e, &m, &err), FS_OK);
			assert_int_equal(r, lane % 16);
			assert_int_equal(c, 8 * (lane / 16) + e);
			assert_int_equal(m, ((lane >> 4) << 3) | ((e & 7) ^ lane));
		}
	}
}

static const struct compile_error_case compile_error_cases[] = {
	{ "", 1, "empty expression" },
	{ "   ", 4, "empty expression" },
	{ "lane % (16", 11, "expected ')' to close '(' at column 8" },
	{ "(1 2)", 4, "expected ')' to close '(' at column 1" },
	{ "((1)", 5, "expected ')' to close '(' at column 1" },
	{ "lane $ 3", 6, "unexpected character '$'" },
	{ "1.5", 2, "unexpected character '.'" },
	{ "1 + \x01", 5, "unexpected character '\\x01'" },
	{ "\xc3\xa9", 1, "unexpected character '\\xc3'" },
	{ "1 < 2", 3, "unexpected character '<' (shifts are << and >>)" },
	{ "1 <<< 2", 5, "unexpected character '<' (shifts are << and >>)" },
	{ "8 > 1", 3, "unexpected character '>' (shifts are << and >>)" },
	{ "lan", 1, "unknown name 'lan' (names are lane and e)" },
	{ "2 * lanes", 5, "unknown name 'lanes' (names are lane and e)" },
	{ "E", 1, "unknown name 'E' (names are lane and e)" },
	{ "_", 1, "unknown name '_' (names are lane and e)" },
	{ ")", 1, "unexpected ')'" },
	{ "1 + 2)", 6, "unexpected ')'" },
	{ "()", 2, "unexpected ')'" },
	{ "1 +", 4, "unexpected end of input" },
	{ "-", 2, "unexpected end of input" },
	{ "(", 2, "unexpected end of input" },
	{ "* 2", 1, "unexpected '*'" },
	{ "1 + * 2", 5, "unexpected '*'" },
	{ "1 << >> 2", 6, "unexpected '>>'" },
	{ "1 2", 3, "trailing input '2'" },
	{ "lane e", 6, "trailing input 'e'" },
	{ "(1) (2)", 5, "trailing input '('" },
	{ "9223372036854775808", 1, "number too large" },
	{ "1 + 0x8000000000000000", 5, "number too large" },
	{ "-9223372036854775808", 2, "number too large" },
	{ "0x", 1, "invalid number '0x'" },
	{ "0xg1", 1, "invalid number '0xg1'" },
	{ "12ab", 1, "invalid number '12ab'" },
	{ "2e", 1, "invalid number '2e'" },
	{ "010", 1, "invalid number '010'" },
};

static void test_compile_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(compile_error_cases); i++) {
		const struct compile_error_case *c = &compile_error_cases[i];
		struct expr x;
		struct fs_err err;

		memset(&x, 0x5a, sizeof(x));
		if (expr_compile(c->src, &x, &err) != FS_EINPUT)
			fail_msg("\"%s\": compiled, want \"%s\"", c->src, c->msg);
		check_error(c->src, &err, c->col, c->msg);
		assert_int_equal(x.n, 0);
	}
}

/* A NULL err is allowed: the return code alone reports the failure. */
static void test_null_err(void **state)
{
	struct expr x;
	int64_t got;

	(void)state;
	assert_int_equal(expr_compile("lan", &x, NULL), FS_EINPUT);
	assert_int_equal(expr_compile("1 / e", &x, NULL), FS_OK);
	assert_int_equal(expr_eval(&x, 0, 0, &got, NULL), FS_EINPUT);
}

/* Source length, code length and nesting are capped, each at its edge. */
static void test_limits(void **state)
{
	char src[2048];
	struct expr x;
	struct fs_err err;
	int n;

	(void)state;
	memset(src, ' ', EXPR_MAX_SRC);
	src[0] = '1';
	src[EXPR_MAX_SRC] = '\0';
	check_value(src, 0, 0, 1);
	src[EXPR_MAX_SRC] = ' ';
	src[EXPR_MAX_SRC + 1] = '\0';
	assert_int_equal(expr_compile(src, &x, &err), FS_EINPUT);
	check_error("513 chars", &err, 513, "expression longer than 512 characters");

	/* k ones joined by '+' make 2k-1 instructions: 64 fit, 65 do not */
	for (n = 0; n < 64; n++)
		memcpy(src + 2 * n, "1+", 2);
	src[2 * 64 - 1] = '\0';
	check_value(src, 0, 0, 64);
	assert_int_equal(expr_compile(src, &x, &err), FS_OK);
	assert_int_equal(x.n, EXPR_MAX_CODE - 1);
	memcpy(src + 2 * 64 - 1, "+1", 3);
	assert_int_equal(expr_compile(src, &x, &err), FS_EINPUT);
	check_error("1+ x65", &err, 128, "expression too long (over 128 operations)");

	/* 32 levels of '(' or '-' are fine, the 33rd is refused */
	n = 0;
	for (int i = 0; i < EXPR_MAX_DEPTH; i++)
		src[n++] = '(';
	src[n++] = '7';
	for (int i = 0; i < EXPR_MAX_DEPTH; i++)
		src[n++] = ')';
	src[n] = '\0';
	check_value(src, 0, 0, 7);
	memset(src, '-', EXPR_MAX_DEPTH);
	strcpy(src + EXPR_MAX_DEPTH, "7");
	check_value(src, 0, 0, 7);
	strcpy(src + EXPR_MAX_DEPTH, "-7");
	assert_int_equal(expr_compile(src, &x, &err), FS_EINPUT);
	check_error("33 '-'", &err, 33, "nesting deeper than 32");
	memset(src, '(', 200);
	strcpy(src + 200, "1");
	memset(src + 201, ')', 200);
	src[401] = '\0';
	assert_int_equal(expr_compile(src, &x, &err), FS_EINPUT);
	check_error("200 '('", &err, 33, "nesting deeper than 32");
	/* 1000 '(' is stopped by the length cap before any recursion */
	memset(src, '(', 1000);
	src[1000] = '\0';
	assert_int_equal(expr_compile(src, &x, &err), FS_EINPUT);
	check_error("1000 '('", &err, 513, "expression longer than 512 characters");
}

static const struct eval_error_case eval_error_cases[] = {
	{ "lane / e", 3, 0, 6, "division by zero at lane=3 e=0" },
	{ "lane % e", 3, 0, 6, "modulo by zero at lane=3 e=0" },
	{ "1 / 1 + 2 / e", 0, 0, 11, "division by zero at lane=0 e=0" },
	{ "0x7fffffffffffffff + 1", 0, 0, 20,
	  "overflow in 9223372036854775807 + 1 at lane=0 e=0" },
	{ "-0x7fffffffffffffff - 2", 0, 0, 21,
	  "overflow in -9223372036854775807 - 2 at lane=0 e=0" },
	{ "0x100000000 * 0x80000000", 0, 0, 13,
	  "overflow in 4294967296 * 2147483648 at lane=0 e=0" },
	{ "(-0x7fffffffffffffff - 1) / -1", 0, 0, 27,
	  "overflow in -9223372036854775808 / -1 at lane=0 e=0" },
	{ "lane / -1", INT64_MIN, 7, 6,
	  "overflow in -9223372036854775808 / -1 at lane=-9223372036854775808 e=7" },
	{ "-lane", INT64_MIN, 0, 1,
	  "overflow in -(-9223372036854775808) at lane=-9223372036854775808 e=0" },
	{ "1 << 63", 0, 0, 3, "shift count 63 outside [0, 62] at lane=0 e=0" },
	{ "1 >> -1", 0, 0, 3, "shift count -1 outside [0, 62] at lane=0 e=0" },
	{ "1 << e", 0, -1, 3, "shift count -1 outside [0, 62] at lane=0 e=-1" },
	{ "-1 << 2", 0, 0, 4, "shift of negative value -1 at lane=0 e=0" },
	{ "-8 >> 1", 0, 0, 4, "shift of negative value -8 at lane=0 e=0" },
	{ "2 << 62", 0, 0, 3, "overflow in 2 << 62 at lane=0 e=0" },
	{ "4 << 61", 0, 0, 3, "overflow in 4 << 61 at lane=0 e=0" },
	{ "0x7fffffffffffffff << 1", 0, 0, 20,
	  "overflow in 9223372036854775807 << 1 at lane=0 e=0" },
};

static void test_eval_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(eval_error_cases); i++) {
		const struct eval_error_case *c = &eval_error_cases[i];
		struct expr x;
		struct fs_err err;
		int64_t got = 12345;

		if (expr_compile(c->src, &x, &err) != FS_OK)
			fail_msg("\"%s\": compile: %s", c->src, err.msg);
		if (expr_eval(&x, c->lane, c->e, &got, &err) != FS_EINPUT)
			fail_msg("\"%s\": evaluated to %lld, want \"%s\"", c->src,
				 (long long)got, c->msg);
		check_error(c->src, &err, c->col, c->msg);
		assert_int_equal(got, 12345);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_operands),
		cmocka_unit_test(test_code_layout),
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_compile_errors),
		cmocka_unit_test(test_null_err),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_eval_errors),
	};

	return cmocka_run_group_tests_name("expr", tests, NULL, NULL);
}
