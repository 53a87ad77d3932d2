/*
 * expr.h - integer expressions over `lane` and `e`, the language in which
 * a profile says which matrix entry a (lane, element) holds.
 *
 *   row: "lane % 16"          col: "8 * (lane / 16) + e"
 *
 * Grammar (C precedence and associativity, lowest first):
 *   expr   := or
 *   or     := xor ( '|' xor )*
 *   xor    := and ( '^' and )*
 *   and    := shift ( '&' shift )*
 *   shift  := add ( ('<<' | '>>') add )*
 *   add    := mul ( ('+' | '-') mul )*
 *   mul    := unary ( ('*' | '/' | '%') unary )*
 *   unary  := '-' unary | '+' unary | '(' expr ')' | NUMBER | 'lane' | 'e'
 * NUMBER is decimal or 0x hex. Whitespace is ignored. Values are int64.
 * '/' and '%' truncate toward zero, as in C.
 *
 * Compilation never evaluates; evaluation never allocates. No code is
 * generated and nothing is eval'ed: compile produces postfix code for a
 * tiny stack machine.
 */
#ifndef EXPR_H
#define EXPR_H

#include <stdint.h>

#include "../common/fs.h"

#define EXPR_MAX_CODE 128	/* postfix instructions per expression */
#define EXPR_MAX_SRC 512	/* source characters per expression */
#define EXPR_MAX_DEPTH 32	/* parenthesis / unary nesting */

enum expr_opcode {
	EXPR_NUM, EXPR_LANE, EXPR_E, EXPR_NEG,
	EXPR_ADD, EXPR_SUB, EXPR_MUL, EXPR_DIV, EXPR_MOD,
	EXPR_AND, EXPR_OR, EXPR_XOR, EXPR_SHL, EXPR_SHR,
};

struct expr_op {
	enum expr_opcode op;
	int64_t num;	/* EXPR_NUM only */
	int col;	/* 1-based column of the token in the source */
};

struct expr {
	int n;
	struct expr_op code[EXPR_MAX_CODE];
};

/*
 * Compile src. On error returns FS_EINPUT with err->col set to the 1-based
 * column in src where the problem is (err->file empty, err->line 0), and
 * a message like "unexpected ')'" or "unknown name 'lan'".
 */
enum fs_rc expr_compile(const char *src, struct expr *out, struct fs_err *err);

/*
 * Evaluate at (lane, e). Division or modulo by zero, a shift count outside
 * [0, 62], a negative shifted value and int64 overflow are FS_EINPUT with
 * err->col at the operator's column and a message naming the values, e.g.
 * "division by zero at lane=3 e=0".
 */
enum fs_rc expr_eval(const struct expr *x, int64_t lane, int64_t e,
		     int64_t *out, struct fs_err *err);

#endif
