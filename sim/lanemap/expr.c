/*
 * expr.c - compile and evaluate lane-map expressions (see expr.h).
 *
 * Profiles describe a lane map with one formula per index rather than a
 * 4096-entry table, so the formula language must be small, exact and
 * safe on hostile input: a recursive-descent parser turns the source into
 * postfix code once, and a stack machine runs it per (lane, e) with every
 * int64 fault reported instead of wrapping or trapping.
 *
 *   "8 * (lane / 16) + e"        columns: 8@1 *@3 (@5 lane@6 /@11 16@13
 *                                         +@17 e@19
 *   code:  NUM 8, LANE, NUM 16, DIV, MUL, E, ADD   (each with its column)
 *   lane=37 e=2:  [8] [8 37] [8 37 16] [8 2] [16] [16 2] [18]  -> 18
 *
 * Invariants: the parser's C recursion is bounded by EXPR_MAX_DEPTH (only
 * '(' and unary signs recurse back to the top); every instruction carries
 * its token's 1-based column; compiled code pushes at most n values and
 * leaves exactly one, so the eval stack fits in EXPR_MAX_CODE slots.
 */
#include "expr.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Every error here is bad input at a 1-based column of src. */
#define EXPR_FAIL(err, col, ...) \
	fs_fail_at((err), FS_EINPUT, NULL, 0, (col), __VA_ARGS__)

/* Single-character tokens are their own character; NUL never is one. */
enum { TOK_END = 256, TOK_NUM, TOK_LANE, TOK_E, TOK_SHL, TOK_SHR };

struct expr_tok {
	int kind;
	int pos;	/* 0-based offset in src; column is pos + 1 */
	int len;
	int64_t num;	/* TOK_NUM only */
};

struct expr_parser {
	const char *src;
	struct expr_tok tok;	/* the lookahead */
	int depth;		/* '(' and unary nesting, <= EXPR_MAX_DEPTH */
	struct expr *out;
	struct fs_err *err;
};

/* Binary operators by precedence level, lowest first, as in expr.h. */
#define EXPR_LEVELS 6
static const struct {
	int tok;
	enum expr_opcode op;
} expr_binops[EXPR_LEVELS][3] = {
	{ { '|', EXPR_OR } },
	{ { '^', EXPR_XOR } },
	{ { '&', EXPR_AND } },
	{ { TOK_SHL, EXPR_SHL }, { TOK_SHR, EXPR_SHR } },
	{ { '+', EXPR_ADD }, { '-', EXPR_SUB } },
	{ { '*', EXPR_MUL }, { '/', EXPR_DIV }, { '%', EXPR_MOD } },
};

static const char *const expr_sym[] = {
	[EXPR_ADD] = "+", [EXPR_SUB] = "-", [EXPR_MUL] = "*", [EXPR_DIV] = "/",
	[EXPR_MOD] = "%", [EXPR_AND] = "&", [EXPR_OR] = "|", [EXPR_XOR] = "^",
	[EXPR_SHL] = "<<", [EXPR_SHR] = ">>",
};

/* ASCII only: <ctype.h> follows the locale, and profiles must not. */
static int expr_is_digit(int c) { return c >= '0' && c <= '9'; }
static int expr_is_word(int c)
{
	return expr_is_digit(c) || c == '_' || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

/* "<what> ')'" or "<what> end of input", at the lookahead token. */
static enum fs_rc expr_fail_tok(struct expr_parser *p, const char *what)
{
	const struct expr_tok *t = &p->tok;

	if (t->kind == TOK_END)
		return EXPR_FAIL(p->err, t->pos + 1, "%s end of input", what);
	return EXPR_FAIL(p->err, t->pos + 1, "%s '%.*s'", what, t->len,
			 p->src + t->pos);
}

/* Value of the word at t (digits, maybe 0x); the whole word must be valid. */
static enum fs_rc expr_number(struct expr_parser *p, struct expr_tok *t)
{
	const char *s = p->src + t->pos;
	int hex = t->len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	int base = hex ? 16 : 10;

	/* C readers take 010 for octal 8; refuse rather than silently say 10. */
	if (t->len > 1 && s[0] == '0' && !hex)
		goto bad;
	t->num = 0;
	for (int i = hex ? 2 : 0; i < t->len; i++) {
		int c = s[i] | 0x20, d;	/* folds A-F onto a-f */

		if (expr_is_digit(s[i]))
			d = s[i] - '0';
		else if (hex && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			goto bad;
		if (__builtin_mul_overflow(t->num, base, &t->num) ||
		    __builtin_add_overflow(t->num, d, &t->num))
			return EXPR_FAIL(p->err, t->pos + 1, "number too large");
	}
	return FS_OK;
bad:
	return EXPR_FAIL(p->err, t->pos + 1, "invalid number '%.*s'", t->len, s);
}

/* Read the token after p->tok into p->tok. */
static enum fs_rc expr_lex(struct expr_parser *p)
{
	const char *s = p->src;
	struct expr_tok *t = &p->tok;
	int i = t->pos + t->len;
	unsigned char c;

	while (s[i] && strchr(" \t\n\r\v\f", s[i]))
		i++;
	*t = (struct expr_tok){ .kind = (unsigned char)s[i], .pos = i, .len = 1 };
	if (!s[i]) {
		*t = (struct expr_tok){ .kind = TOK_END, .pos = i };
	} else if (expr_is_word(s[i])) {
		while (expr_is_word(s[i + t->len]))
			t->len++;
		if (expr_is_digit(s[i])) {
			t->kind = TOK_NUM;
			return expr_number(p, t);
		}
		if (t->len == 4 && !memcmp(s + i, "lane", 4))
			t->kind = TOK_LANE;
		else if (t->len == 1 && s[i] == 'e')
			t->kind = TOK_E;
		else
			return EXPR_FAIL(p->err, i + 1, "unknown name '%.*s' "
					 "(names are lane and e)", t->len, s + i);
	} else if ((s[i] == '<' || s[i] == '>') && s[i + 1] == s[i]) {
		t->kind = s[i] == '<' ? TOK_SHL : TOK_SHR;
		t->len = 2;
	} else if (!strchr("()+-*/%&|^", s[i])) {
		c = s[i];
		if (c <= ' ' || c >= 0x7f)
			return EXPR_FAIL(p->err, i + 1,
					 "unexpected character '\\x%02x'", c);
		return EXPR_FAIL(p->err, i + 1, "unexpected character '%c'%s", c,
				 c == '<' || c == '>' ?
				 " (shifts are << and >>)" : "");
	}
	return FS_OK;
}

static enum fs_rc expr_emit(struct expr_parser *p, enum expr_opcode op,
			    int64_t num, int pos)
{
	if (p->out->n == EXPR_MAX_CODE)
		return EXPR_FAIL(p->err, pos + 1, "expression too long "
				 "(over %d operations)", EXPR_MAX_CODE);
	p->out->code[p->out->n++] = (struct expr_op){ op, num, pos + 1 };
	return FS_OK;
}

static enum fs_rc expr_binary(struct expr_parser *p, int level);

static enum fs_rc expr_unary(struct expr_parser *p)
{
	struct expr_tok t = p->tok;
	enum fs_rc rc;

	if (t.kind == TOK_NUM || t.kind == TOK_LANE || t.kind == TOK_E) {
		rc = expr_emit(p, t.kind == TOK_NUM ? EXPR_NUM :
			       t.kind == TOK_LANE ? EXPR_LANE : EXPR_E,
			       t.num, t.pos);
		return rc ? rc : expr_lex(p);
	}
	if (t.kind != '-' && t.kind != '+' && t.kind != '(')
		return expr_fail_tok(p, "unexpected");
	if (p->depth == EXPR_MAX_DEPTH)
		return EXPR_FAIL(p->err, t.pos + 1, "nesting deeper than %d",
				 EXPR_MAX_DEPTH);
	p->depth++;
	if ((rc = expr_lex(p)))
		return rc;
	if (t.kind == '(') {
		if ((rc = expr_binary(p, 0)))
			return rc;
		if (p->tok.kind != ')')
			return EXPR_FAIL(p->err, p->tok.pos + 1, "expected ')' "
					 "to close '(' at column %d", t.pos + 1);
		rc = expr_lex(p);
	} else {
		rc = expr_unary(p);
		if (!rc && t.kind == '-')
			rc = expr_emit(p, EXPR_NEG, 0, t.pos);
	}
	p->depth--;
	return rc;
}

/* One precedence level: left-associative, operands from the next level. */
static enum fs_rc expr_binary(struct expr_parser *p, int level)
{
	enum fs_rc rc;

	if (level == EXPR_LEVELS)
		return expr_unary(p);
	if ((rc = expr_binary(p, level + 1)))
		return rc;
	for (;;) {
		struct expr_tok t = p->tok;
		int i = 0;

		while (i < 3 && expr_binops[level][i].tok != t.kind)
			i++;
		if (i == 3)
			return FS_OK;
		if ((rc = expr_lex(p)) || (rc = expr_binary(p, level + 1)) ||
		    (rc = expr_emit(p, expr_binops[level][i].op, 0, t.pos)))
			return rc;
	}
}

enum fs_rc expr_compile(const char *src, struct expr *out, struct fs_err *err)
{
	struct expr_parser p = { .src = src, .out = out, .err = err };
	enum fs_rc rc;
	size_t len = 0;

	assert(src && out);
	out->n = 0;
	while (len <= EXPR_MAX_SRC && src[len])
		len++;
	if (len > EXPR_MAX_SRC)
		return EXPR_FAIL(err, EXPR_MAX_SRC + 1, "expression longer "
				 "than %d characters", EXPR_MAX_SRC);
	if ((rc = expr_lex(&p)))
		return rc;
	if (p.tok.kind == TOK_END)
		return EXPR_FAIL(err, p.tok.pos + 1, "empty expression");
	rc = expr_binary(&p, 0);
	if (!rc && p.tok.kind != TOK_END)
		rc = expr_fail_tok(&p, p.tok.kind == ')' ? "unexpected"
						       : "trailing input");
	if (rc)
		out->n = 0;
	return rc;
}

/* a op b into *r; on a fault returns its description (maybe in buf). */
static const char *expr_apply(enum expr_opcode op, int64_t a, int64_t b,
			      int64_t *r, char *buf, size_t len)
{
	switch (op) {
	case EXPR_ADD: if (__builtin_add_overflow(a, b, r)) goto overflow; break;
	case EXPR_SUB: if (__builtin_sub_overflow(a, b, r)) goto overflow; break;
	case EXPR_MUL: if (__builtin_mul_overflow(a, b, r)) goto overflow; break;
	case EXPR_AND: *r = a & b; break;
	case EXPR_OR: *r = a | b; break;
	case EXPR_XOR: *r = a ^ b; break;
	case EXPR_DIV:
	case EXPR_MOD:
		if (b == 0)
			return op == EXPR_DIV ? "division by zero" : "modulo by zero";
		/* MIN % -1 is 0, but C leaves it undefined and x86 traps. */
		if (a == INT64_MIN && b == -1) {
			if (op == EXPR_DIV)
				goto overflow;
			*r = 0;
		} else {
			*r = op == EXPR_DIV ? a / b : a % b;
		}
		break;
	case EXPR_SHL:
	case EXPR_SHR:
		/* C leaves these undefined or implementation-defined. */
		if (b < 0 || b > 62) {
			snprintf(buf, len, "shift count %" PRId64 " outside [0, 62]",
				 b);
			return buf;
		}
		if (a < 0) {
			snprintf(buf, len, "shift of negative value %" PRId64, a);
			return buf;
		}
		if (op == EXPR_SHL && a > INT64_MAX >> b)
			goto overflow;
		*r = op == EXPR_SHL ? a << b : a >> b;
		break;
	default:
		assert(!"not a binary opcode");
	}
	return NULL;
overflow:
	snprintf(buf, len, "overflow in %" PRId64 " %s %" PRId64, a,
		 expr_sym[op], b);
	return buf;
}

enum fs_rc expr_eval(const struct expr *x, int64_t lane, int64_t e,
		     int64_t *out, struct fs_err *err)
{
	int64_t st[EXPR_MAX_CODE];
	int sp = 0;
	char buf[96];

	assert(x->n >= 1 && x->n <= EXPR_MAX_CODE);
	for (int i = 0; i < x->n; i++) {
		const struct expr_op *o = &x->code[i];
		const char *fault = NULL;

		switch (o->op) {
		case EXPR_NUM: st[sp++] = o->num; break;
		case EXPR_LANE: st[sp++] = lane; break;
		case EXPR_E: st[sp++] = e; break;
		case EXPR_NEG:
			assert(sp >= 1);
			if (st[sp - 1] != INT64_MIN)
				st[sp - 1] = -st[sp - 1];
			else
				fault = "overflow in -(-9223372036854775808)";
			break;
		default:
			assert(sp >= 2);
			fault = expr_apply(o->op, st[sp - 2], st[sp - 1],
					   &st[sp - 2], buf, sizeof(buf));
			sp--;
		}
		if (fault)
			return EXPR_FAIL(err, o->col, "%s at lane=%" PRId64
					 " e=%" PRId64, fault, lane, e);
	}
	assert(sp == 1);
	*out = st[0];
	return FS_OK;
}
