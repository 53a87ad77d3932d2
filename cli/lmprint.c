/*
 * lmprint.c - render lane maps (see lmprint.h).
 *
 * The grid answers "who holds this entry?" the way the AMD Matrix
 * Instruction Calculator and CuTe's print_layout do: the matrix drawn
 * with its owner in each cell. For gfx936 C, the top-left corner reads
 *
 *   C        0     1     2     3     4
 *   0      0:0  16:0  32:0  48:0   0:1      cell = lane:reg
 *   1      1:0  17:0  33:0  49:0   1:1
 *
 * so lane 0 holds columns 0, 4, 8, 12 of row 0 in registers 0..3. For
 * 8-bit operands the cell is lane:reg.byte. A replicated entry shows its
 * first owner and a '+'.
 *
 * The per-lane view answers the other question, "what does this lane
 * hold?", one line per lane. CSV is one line per (operand, lane, element)
 * under the header matrix,lane,e,reg,byte,row,col.
 */
#include "lmprint.h"

#include <string.h>

#include "../lib/json.h"
#include "../lib/sha256.h"

#define LMPRINT_TEXT_PROBLEMS 8

static const char *const fmt_names[] = { "text", "md", "csv", "json", "c", "basis", "basis-json" };

int lmprint_format(const char *s, enum lm_format *out)
{
	for (size_t i = 0; i < FS_ARRAY_LEN(fmt_names); i++) {
		if (!strcmp(s, fmt_names[i])) {
			*out = (enum lm_format)i;
			return 0;
		}
	}
	return -1;
}

static int is_byte_type(const struct lanemap *lm, enum lm_operand op)
{
	return lm_dtype_size(lm->op[op].type) < 4;
}

/* "lane:reg" or "lane:reg.byte" of slot s, with '+' when replicated. */
static void cell(const struct lanemap *lm, enum lm_operand op, int s,
		 int replicated, char *out, size_t len)
{
	const struct lanemap_operand *o = &lm->op[op];
	int reg, byte;

	lanemap_reg_byte(lm, op, s % o->elems, &reg, &byte);
	if (is_byte_type(lm, op))
		snprintf(out, len, "%d:%d.%d%s", s / o->elems, reg, byte,
			 replicated ? "+" : "");
	else
		snprintf(out, len, "%d:%d%s", s / o->elems, reg,
			 replicated ? "+" : "");
}

static void print_grid(FILE *f, const struct lanemap *lm, enum lm_operand op,
		       enum lm_format fmt)
{
	const struct lanemap_operand *o = &lm->op[op];
	const char *name = lm_operand_name(op);
	int w = 1;
	char buf[32];

	/* Width of the widest cell, so columns line up. */
	for (int s = 0; s < lm->wave * o->elems; s++) {
		cell(lm, op, s, o->replicas > 1, buf, sizeof(buf));
		if ((int)strlen(buf) > w)
			w = (int)strlen(buf);
	}
	fprintf(f, fmt == LMF_MD ? "\n**%s** (%d x %d, %s), cell = %s%s\n\n"
				 : "%s (%d x %d, %s), cell = %s%s\n",
		name, o->rows, o->cols, lm_dtype_name(o->type),
		is_byte_type(lm, op) ? "lane:reg.byte" : "lane:reg",
		o->replicas > 1 ? ", + = replicated" : "");
	if (fmt == LMF_MD) {
		fprintf(f, "| %s |", name);
		for (int c = 0; c < o->cols; c++)
			fprintf(f, " %d |", c);
		fprintf(f, "\n|---|");
		for (int c = 0; c < o->cols; c++)
			fprintf(f, "---|");
		fputc('\n', f);
	} else {
		fprintf(f, "%4s", name);
		for (int c = 0; c < o->cols; c++)
			fprintf(f, " %*d", w, c);
		fputc('\n', f);
	}
	for (int r = 0; r < o->rows; r++) {
		fprintf(f, fmt == LMF_MD ? "| %d |" : "%4d", r);
		for (int c = 0; c < o->cols; c++) {
			int slots[LM_MAX_REPLICAS];
			int n = lanemap_owners(lm, op, r, c, slots, LM_MAX_REPLICAS);

			if (n == 0)
				snprintf(buf, sizeof(buf), "-");
			else
				cell(lm, op, slots[0], n > 1, buf, sizeof(buf));
			if (fmt == LMF_MD)
				fprintf(f, " %s |", buf);
			else
				fprintf(f, " %*s", w, buf);
		}
		fputc('\n', f);
	}
}

static void print_lanes(FILE *f, const struct lanemap *lm, enum lm_operand op,
			enum lm_format fmt)
{
	const struct lanemap_operand *o = &lm->op[op];
	const char *name = lm_operand_name(op);

	if (fmt == LMF_MD)
		fprintf(f, "\n| lane | %s by element (e = 0..%d) |\n|---|---|\n", name,
			o->elems - 1);
	else
		fprintf(f, "\nlane  %s by element (e = 0..%d)\n", name, o->elems - 1);
	for (int l = 0; l < lm->wave; l++) {
		fprintf(f, fmt == LMF_MD ? "| %d |" : "%4d ", l);
		for (int e = 0; e < o->elems; e++) {
			int s = l * o->elems + e;

			fprintf(f, " [%d][%d]", o->row[s], o->col[s]);
		}
		fprintf(f, fmt == LMF_MD ? " |\n" : "\n");
	}
}

static void csv_rows(FILE *f, const struct lanemap *lm, enum lm_operand op,
		     int lane)
{
	const struct lanemap_operand *o = &lm->op[op];

	for (int l = 0; l < lm->wave; l++) {
		if (lane >= 0 && l != lane)
			continue;
		for (int e = 0; e < o->elems; e++) {
			int s = l * o->elems + e, reg, byte;

			lanemap_reg_byte(lm, op, e, &reg, &byte);
			fprintf(f, "%s,%d,%d,%d,%d,%d,%d\n", lm_operand_name(op), l, e,
				reg, byte, o->row[s], o->col[s]);
		}
	}
}

/* {"matrix": "C", "rows":..., "slots": [[lane, e, reg, byte, row, col], ...]} */
static void lmjson_operand(struct json *j, const struct lanemap *lm,
			 enum lm_operand op, int lane)
{
	const struct lanemap_operand *o = &lm->op[op];

	json_begin_object(j);
	json_key_string(j, "matrix", lm_operand_name(op));
	json_key_string(j, "type", lm_dtype_name(o->type));
	json_key_int(j, "rows", o->rows);
	json_key_int(j, "cols", o->cols);
	json_key_int(j, "elements", o->elems);
	json_key_int(j, "replicas", o->replicas);
	json_key(j, "slots");
	json_begin_array(j);
	for (int l = 0; l < lm->wave; l++) {
		if (lane >= 0 && l != lane)
			continue;
		for (int e = 0; e < o->elems; e++) {
			int s = l * o->elems + e, reg, byte;

			lanemap_reg_byte(lm, op, e, &reg, &byte);
			json_begin_object(j);
			json_key_int(j, "lane", l);
			json_key_int(j, "e", e);
			json_key_int(j, "reg", reg);
			json_key_int(j, "byte", byte);
			json_key_int(j, "row", o->row[s]);
			json_key_int(j, "col", o->col[s]);
			json_end_object(j);
		}
	}
	json_end_array(j);
	json_end_object(j);
}

static void lmjson_head(struct json *j, const struct lanemap *lm)
{
	json_key_string(j, "profile", lm->name);
	json_key_string(j, "instruction", lm->instr);
	json_key_int(j, "wave", lm->wave);
	json_key_int(j, "m", lm->m);
	json_key_int(j, "n", lm->n);
	json_key_int(j, "k", lm->k);
}

static void lmjson_map(FILE *f, const struct lanemap *lm, unsigned mask, int lane)
{
	struct json j;

	json_init(&j, f, 1);
	json_begin_object(&j);
	lmjson_head(&j, lm);
	if (lane >= 0)
		json_key_int(&j, "lane", lane);
	json_key(&j, "operands");
	json_begin_array(&j);
	for (int op = 0; op < LM_NOPERANDS; op++)
		if (mask & (1u << op))
			lmjson_operand(&j, lm, (enum lm_operand)op, lane);
	json_end_array(&j);
	json_end_object(&j);
	json_finish(&j);
}

void lmprint_map(FILE *f, const struct lanemap *lm, unsigned mask,
		 enum lm_format fmt)
{
	if (fmt == LMF_JSON) {
		lmjson_map(f, lm, mask, -1);
		return;
	}
	if (fmt == LMF_CSV) {
		fprintf(f, "matrix,lane,e,reg,byte,row,col\n");
		for (int op = 0; op < LM_NOPERANDS; op++)
			if (mask & (1u << op))
				csv_rows(f, lm, (enum lm_operand)op, -1);
		return;
	}
	fprintf(f, fmt == LMF_MD ? "## %s: %s, wave%d, M=%d N=%d K=%d\n"
				 : "%s: %s, wave%d, M=%d N=%d K=%d\n",
		lm->name, lm->instr, lm->wave, lm->m, lm->n, lm->k);
	if (lm->source[0])
		fprintf(f, "source: %s\n", lm->source);
	for (int op = 0; op < LM_NOPERANDS; op++) {
		if (!(mask & (1u << op)))
			continue;
		fputc('\n', f);
		print_grid(f, lm, (enum lm_operand)op, fmt);
		print_lanes(f, lm, (enum lm_operand)op, fmt);
	}
}

void lmprint_lane(FILE *f, const struct lanemap *lm, int lane,
		  enum lm_format fmt)
{
	if (fmt == LMF_JSON) {
		lmjson_map(f, lm, 7, lane);
		return;
	}
	if (fmt == LMF_CSV) {
		fprintf(f, "matrix,lane,e,reg,byte,row,col\n");
		for (int op = 0; op < LM_NOPERANDS; op++)
			csv_rows(f, lm, (enum lm_operand)op, lane);
		return;
	}
	fprintf(f, "%s lane %d holds:\n", lm->name, lane);
	for (int op = 0; op < LM_NOPERANDS; op++) {
		const struct lanemap_operand *o = &lm->op[op];

		for (int e = 0; e < o->elems; e++) {
			int s = lane * o->elems + e, reg, byte;

			lanemap_reg_byte(lm, (enum lm_operand)op, e, &reg, &byte);
			fprintf(f, fmt == LMF_MD ? "- %s e%d (reg %d, byte %d) = %s[%d][%d]\n"
						 : "  %s e%-2d reg %d byte %d  %s[%d][%d]\n",
				lm_operand_name((enum lm_operand)op), e, reg, byte,
				lm_operand_name((enum lm_operand)op), o->row[s], o->col[s]);
		}
	}
}

int lmprint_entry(FILE *f, const struct lanemap *lm, enum lm_operand op,
		  int row, int col, enum lm_format fmt)
{
	const struct lanemap_operand *o = &lm->op[op];
	int slots[LM_MAX_SLOTS];
	int n = lanemap_owners(lm, op, row, col, slots, LM_MAX_SLOTS);
	const char *name = lm_operand_name(op);
	struct json j;

	if (fmt == LMF_JSON) {
		json_init(&j, f, 1);
		json_begin_object(&j);
		lmjson_head(&j, lm);
		json_key_string(&j, "matrix", name);
		json_key_int(&j, "row", row);
		json_key_int(&j, "col", col);
		json_key(&j, "owners");
		json_begin_array(&j);
	} else if (fmt == LMF_CSV) {
		fprintf(f, "matrix,lane,e,reg,byte,row,col\n");
	}
	for (int i = 0; i < n; i++) {
		int lane = slots[i] / o->elems, e = slots[i] % o->elems, reg, byte;

		lanemap_reg_byte(lm, op, e, &reg, &byte);
		if (fmt == LMF_JSON) {
			json_begin_object(&j);
			json_key_int(&j, "lane", lane);
			json_key_int(&j, "e", e);
			json_key_int(&j, "reg", reg);
			json_key_int(&j, "byte", byte);
			json_end_object(&j);
		} else if (fmt == LMF_CSV) {
			fprintf(f, "%s,%d,%d,%d,%d,%d,%d\n", name, lane, e, reg, byte,
				row, col);
		} else {
			fprintf(f, "%s[%d][%d] is held by lane %d, element %d (register %d, byte %d)\n",
				name, row, col, lane, e, reg, byte);
		}
	}
	if (fmt == LMF_JSON) {
		json_end_array(&j);
		json_end_object(&j);
		json_finish(&j);
	} else if (n == 0 && fmt != LMF_CSV) {
		fprintf(f, "%s[%d][%d] is held by no lane\n", name, row, col);
	}
	return n;
}

static const char *const kind_names[] = {
	[LM_OUT_OF_RANGE] = "out of range",
	[LM_UNOWNED] = "owned by nobody",
	[LM_OWNED_WRONG] = "owned the wrong number of times",
};

static void problem_text(const struct lanemap *lm, const struct lm_problem *p,
			 char *out, size_t len)
{
	const struct lanemap_operand *o = &lm->op[p->op];
	const char *name = lm_operand_name(p->op);
	int reg, byte;

	switch (p->kind) {
	case LM_OUT_OF_RANGE:
		lanemap_reg_byte(lm, p->op, p->e, &reg, &byte);
		snprintf(out, len, "%s lane %d e %d (reg %d, byte %d): %s = %d, outside 0..%d",
			 name, p->lane, p->e, reg, byte, p->bad == 'r' ? "row" : "col",
			 p->bad == 'r' ? p->row : p->col,
			 (p->bad == 'r' ? o->rows : o->cols) - 1);
		break;
	case LM_UNOWNED:
		snprintf(out, len, "%s[%d][%d]: held by no lane", name, p->row, p->col);
		break;
	case LM_OWNED_WRONG:
		snprintf(out, len, "%s[%d][%d]: held %d times (expected %d), first by lane %d e %d",
			 name, p->row, p->col, p->count, o->replicas, p->lane, p->e);
		break;
	}
}

void lmprint_report(FILE *f, const char *label, const struct lanemap *lm,
		    const struct lm_report *rep, enum lm_format fmt)
{
	char line[256];

	if (fmt == LMF_JSON) {
		struct json j;

		json_init(&j, f, 1);
		json_begin_object(&j);
		json_key_string(&j, "file", label);
		json_key_string(&j, "profile", lm->name);
		json_key_bool(&j, "valid", rep->total == 0);
		json_key_int(&j, "problems", rep->total);
		json_key(&j, "first");
		json_begin_array(&j);
		for (int i = 0; i < rep->n; i++) {
			problem_text(lm, &rep->p[i], line, sizeof(line));
			json_string(&j, line);
		}
		json_end_array(&j);
		json_end_object(&j);
		json_finish(&j);
		return;
	}
	if (rep->total == 0) {
		fprintf(f, "%s: valid: %s, wave%d, A %dx%d %s x%d, B %dx%d %s x%d, C %dx%d %s x%d per lane\n",
			label, lm->instr, lm->wave,
			lm->op[LM_A].rows, lm->op[LM_A].cols, lm_dtype_name(lm->op[LM_A].type), lm->op[LM_A].elems,
			lm->op[LM_B].rows, lm->op[LM_B].cols, lm_dtype_name(lm->op[LM_B].type), lm->op[LM_B].elems,
			lm->op[LM_C].rows, lm->op[LM_C].cols, lm_dtype_name(lm->op[LM_C].type), lm->op[LM_C].elems);
		return;
	}
	fprintf(f, "%s: invalid: %d problem%s", label, rep->total,
		rep->total == 1 ? "" : "s");
	for (int op = 0; op < LM_NOPERANDS; op++)
		for (int k = 0; k < 3; k++)
			if (rep->by_kind[op][k])
				fprintf(f, "; %s: %d %s", lm_operand_name((enum lm_operand)op),
					rep->by_kind[op][k], kind_names[k]);
	fputc('\n', f);
	/* The first few say what is wrong; --format json has more. */
	for (int i = 0; i < rep->n && i < LMPRINT_TEXT_PROBLEMS; i++) {
		problem_text(lm, &rep->p[i], line, sizeof(line));
		fprintf(f, "  %s\n", line);
	}
	if (rep->total > LMPRINT_TEXT_PROBLEMS)
		fprintf(f, "  ... and %d more\n", rep->total - LMPRINT_TEXT_PROBLEMS);
}

/*
 * --format c: the map as a self-contained header for kernels and host
 * code. Identifiers come from the profile name, one-to-one:
 *
 *   gfx936-quad    fs_gfx936_quad             a plain name: lower-case
 *                                             letters and digits, single
 *                                             '-' between them
 *   My.map v2      fs_my_map_v2_hd60f0d66     anything else: each run of
 *                                             other characters one '_',
 *                                             lower case, then "_h" and
 *                                             8 hex digits of SHA-256(name)
 *
 * (macros are the same upper case: FS_GFX936_QUAD_M). A plain name whose
 * last part is h + 8 hex digits ("x-h0123abcd") takes the second form
 * too, so an identifier ends in h + 8 hex digits exactly when it is
 * hashed: plain names map one-to-one, and "a-b", "a_b", "a.b", "A-B" get
 * four prefixes and four include guards (before, all were fs_a_b and one
 * guard, and a second header included was silently empty). The hashed
 * form's digits collide for two given names with probability 2^-32.
 */
static int c_hex_part(const char *s, size_t n)
{
	if (n != 9 || s[0] != 'h')
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int c_plain_name(const char *name)
{
	const char *last = name;
	size_t n = strlen(name);

	if (n == 0 || name[0] == '-' || name[n - 1] == '-' || strstr(name, "--"))
		return 0;
	for (const char *p = name; *p; p++) {
		if (*p == '-')
			last = p + 1;
		else if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
			return 0;
	}
	return !c_hex_part(last, strlen(last));
}

static char c_alnum(char ch, int upper)
{
	if (ch >= 'A' && ch <= 'Z' && !upper)
		return (char)(ch - 'A' + 'a');
	if (ch >= 'a' && ch <= 'z' && upper)
		return (char)(ch - 'a' + 'A');
	if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9'))
		return ch;
	return 0;
}

/* The identifier part (no "fs_") of name; out holds LM_C_ID_MAX. */
#define LM_C_ID_MAX (LM_NAME_MAX + 16)
static void c_ident(const char *name, int upper, char *out)
{
	size_t n = 0;
	int gap = 0;

	for (const char *p = name; *p && n + 1 < LM_NAME_MAX; p++) {
		char ch = c_alnum(*p, upper);

		if (!ch) {
			gap = n > 0;
			continue;
		}
		if (gap)
			out[n++] = '_';
		gap = 0;
		out[n++] = ch;
	}
	out[n] = '\0';
	if (!c_plain_name(name)) {
		char hex[SHA256_HEX_LEN];

		sha256_hex(name, strlen(name), hex);
		snprintf(out + n, LM_C_ID_MAX - n, "%s%c%.8s", n ? "_" : "",
			 upper ? 'H' : 'h', hex);
		if (upper)
			for (char *p = out + n; *p; p++)
				if (*p >= 'a' && *p <= 'f')
					*p = (char)(*p - 'a' + 'A');
	}
}

/*
 * A profile's text inside a C comment: control characters become
 * spaces, and "*" "/", "/" "*" and "??" get a space between them, so
 * nothing ends the comment, opens one (-Wcomment) or forms a trigraph;
 * a trailing backslash gets a space, so it splices no line. What follows
 * in the header is never '/' nor '*'.
 */
static void c_comment_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		fputc(ch < 0x20 || ch == 0x7f ? ' ' : ch, f);
		if ((s[0] == '*' && s[1] == '/') || (s[0] == '/' && s[1] == '*') ||
		    (s[0] == '?' && s[1] == '?') || (s[0] == '\\' && !s[1]))
			fputc(' ', f);
	}
}

/* A profile's text as a C string literal: '?' as \? so "??/" is no
 * trigraph (C99, C++11 and before, or -trigraphs). */
static void c_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\' || *s == '?')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fprintf(f, "\\%03o", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* "static const short NAME[N] = { ... };", 16 numbers a line. */
static void c_table(FILE *f, const char *qual, const char *id, const char *what,
		    const int32_t *v, int n, const int16_t *v16)
{
	fprintf(f, "%sconst short %s_%s[%d] = {", qual, id, what, n);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%d%s", i % 16 ? " " : "\n\t", v ? (int)v[i] : (int)v16[i],
			i + 1 < n ? "," : "\n");
	fprintf(f, "};\n");
}

static void c_operand_tables(FILE *f, const struct lanemap *lm, const char *id,
			     const char *qual, const char *suffix)
{
	char what[32];

	for (int op = 0; op < LM_NOPERANDS; op++) {
		const struct lanemap_operand *o = &lm->op[op];
		char m = (char)("abc"[op]);

		snprintf(what, sizeof(what), "%c_row%s", m, suffix);
		c_table(f, qual, id, what, o->row, lm->wave * o->elems, NULL);
		snprintf(what, sizeof(what), "%c_col%s", m, suffix);
		c_table(f, qual, id, what, o->col, lm->wave * o->elems, NULL);
		snprintf(what, sizeof(what), "%c_owner%s", m, suffix);
		c_table(f, qual, id, what, NULL, o->rows * o->cols * o->replicas,
			o->owner);
	}
}

static void c_operand_functions(FILE *f, const struct lanemap *lm,
				const char *id, const char *ID)
{
	for (int op = 0; op < LM_NOPERANDS; op++) {
		const struct lanemap_operand *o = &lm->op[op];
		char m = (char)("abc"[op]), M = (char)("ABC"[op]);
		int size = lm_dtype_size(o->type);

		fprintf(f, "\n/* %c: %d x %d %s, %d elements per lane, each entry held %d time%s. */\n",
			M, o->rows, o->cols, lm_dtype_name(o->type), o->elems,
			o->replicas, o->replicas == 1 ? "" : "s");
		fprintf(f, "#define %s_%c_ROWS %d\n#define %s_%c_COLS %d\n"
			   "#define %s_%c_ELEMS %d\n#define %s_%c_REPLICAS %d\n"
			   "#define %s_%c_ELEM_BYTES %d\n",
			ID, M, o->rows, ID, M, o->cols, ID, M, o->elems, ID, M,
			o->replicas, ID, M, size);
		fprintf(f, "FRAGSIM_LM_FN int %s_%c_row(int lane, int e)\n"
			   "{ return FRAGSIM_LM_TAB(%s_%c_row)[lane * %d + e]; }\n",
			id, m, id, m, o->elems);
		fprintf(f, "FRAGSIM_LM_FN int %s_%c_col(int lane, int e)\n"
			   "{ return FRAGSIM_LM_TAB(%s_%c_col)[lane * %d + e]; }\n",
			id, m, id, m, o->elems);
		fprintf(f, "FRAGSIM_LM_FN int %s_%c_lane(int row, int col, int r)\n"
			   "{ return FRAGSIM_LM_TAB(%s_%c_owner)[(row * %d + col) * %d + r] / %d; }\n",
			id, m, id, m, o->cols, o->replicas, o->elems);
		fprintf(f, "FRAGSIM_LM_FN int %s_%c_elem(int row, int col, int r)\n"
			   "{ return FRAGSIM_LM_TAB(%s_%c_owner)[(row * %d + col) * %d + r] %% %d; }\n",
			id, m, id, m, o->cols, o->replicas, o->elems);
		fprintf(f, "FRAGSIM_LM_FN int %s_%c_reg(int e) { return e * %d / 4; }\n",
			id, m, size);
		fprintf(f, "FRAGSIM_LM_FN int %s_%c_byte(int e) { return %s; }\n",
			id, m, size >= 4 ? "(void)e, 0" : size == 2 ? "e * 2 % 4" : "e % 4");
	}
}

void lmprint_c_header(FILE *f, const struct lanemap *lm, const char *isa)
{
	char id[LM_C_ID_MAX + 3] = "fs_", ID[LM_C_ID_MAX + 3] = "FS_";

	c_ident(lm->name, 0, id + 3);
	c_ident(lm->name, 1, ID + 3);
	fprintf(f, "/*\n * Lane map of the fragsim profile '");
	c_comment_text(f, lm->name);
	fprintf(f, "', generated by\n *   fragsim lanemap --isa ");
	c_comment_text(f, isa);
	fprintf(f, " --format c\n * (fragsim %s). Regenerate rather than edit.\n *\n", FRAGSIM_VERSION);
	fprintf(f, " * instruction  ");
	c_comment_text(f, lm->instr);
	fprintf(f, ", wave%d, M=%d N=%d K=%d\n * description  ", lm->wave, lm->m, lm->n, lm->k);
	c_comment_text(f, lm->desc);
	fprintf(f, "\n * source       ");
	c_comment_text(f, lm->source[0] ? lm->source : "(none given)");
	fprintf(f, "\n *\n"
		" * A is M x K (row m, col k), B is K x N (row k, col n), C is M x N.\n"
		" * Element e of a lane is in register %s_X_reg(e), byte %s_X_byte(e).\n"
		" *   %s_X_row(lane, e), %s_X_col(lane, e)   the entry that lane, e holds\n"
		" *   %s_X_lane(row, col, r), %s_X_elem(row, col, r)\n"
		" *       its r-th holder, r = 0 .. %s_X_REPLICAS - 1, in increasing\n"
		" *       lane order (r = 0 unless the operand is replicated)\n"
		" * for X = a, b, c; the tables behind them are %s_X_row_tab and\n"
		" * %s_X_col_tab [lane * ELEMS + e] and %s_X_owner_tab\n"
		" * [(row * COLS + col) * REPLICAS + r] = lane * ELEMS + e. Arguments\n"
		" * are not range-checked, like array indices.\n"
		" *\n"
		" * C99, C++, and HIP or CUDA (host and device: the functions are\n"
		" * __host__ __device__ there, and device code reads a __constant__\n"
		" * copy of the tables).\n */\n",
		id, id, id, id, id, id, ID, id, id, id);
	fprintf(f, "#ifndef FRAGSIM_LANEMAP_%s_H\n#define FRAGSIM_LANEMAP_%s_H\n\n",
		ID + 3, ID + 3);
	fprintf(f, "#ifndef FRAGSIM_LM_FN\n"
		"#if defined(__CUDACC__) || defined(__HIP__) || defined(__HIPCC__)\n"
		"#define FRAGSIM_LM_FN static inline __host__ __device__\n"
		"#define FRAGSIM_LM_GPU 1\n"
		"#else\n"
		"#define FRAGSIM_LM_FN static inline\n"
		"#endif\n"
		"#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)\n"
		"#define FRAGSIM_LM_TAB(t) t##_dtab\n"
		"#else\n"
		"#define FRAGSIM_LM_TAB(t) t##_tab\n"
		"#endif\n"
		"#endif\n\n");
	fprintf(f, "#define %s_NAME ", ID);
	c_string(f, lm->name);
	fprintf(f, "\n#define %s_INSTRUCTION ", ID);
	c_string(f, lm->instr);
	fprintf(f, "\n#define %s_WAVE %d\n#define %s_M %d\n#define %s_N %d\n#define %s_K %d\n\n",
		ID, lm->wave, ID, lm->m, ID, lm->n, ID, lm->k);
	c_operand_tables(f, lm, id, "static ", "_tab");
	fprintf(f, "\n#ifdef FRAGSIM_LM_GPU\n");
	c_operand_tables(f, lm, id, "static __constant__ ", "_dtab");
	fprintf(f, "#endif\n");
	c_operand_functions(f, lm, id, ID);
	fprintf(f, "\n#endif\n");
}
