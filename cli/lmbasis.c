/*
 * lmbasis.c - `lanemap --format basis|basis-json`: a lane map as linear
 * maps over GF(2) (sim/lanemap/gf2.h), for people and for tools.
 *
 * Text gives each output bit as the XOR of the input bits that feed it,
 * the way layout people write bit permutations:
 *
 *   row = (l0, l1, l2, l3)  col = (l4, l5, e2)
 *
 * reads "row bit 0 is lane bit 0, ..., column bit 2 is element bit 2",
 * and then the same map as Triton's LinearLayout bases: the (row, col)
 * image of each one-hot lane and element.
 */
#include <string.h>

#include "../lib/json.h"
#include "lmprint.h"
#include "../sim/lanemap/gf2.h"

static const char *const kind_names[] = {
	[GF2_LINEAR] = "linear", [GF2_AFFINE] = "affine",
	[GF2_NONLINEAR] = "not linear", [GF2_NOT_POW2] = "not a power of two",
};

/* "l3" or "e1": the name of input bit i. */
static void in_name(const struct gf2_map *g, int i, char *out, size_t len)
{
	if (i < g->lane_bits)
		snprintf(out, len, "l%d", i);
	else
		snprintf(out, len, "e%d", i - g->lane_bits);
}

/* Output bit k as "l0^e2", "1^l3" (affine) or "0". */
static void out_bit(const struct gf2_map *g, int k, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	if (g->offset >> k & 1)
		n += (size_t)snprintf(out + n, len - n, "1");
	for (int i = 0; i < g->lane_bits + g->elem_bits && n < len; i++) {
		char name[16];

		if (!(g->basis[i] >> k & 1))
			continue;
		in_name(g, i, name, sizeof(name));
		n += (size_t)snprintf(out + n, len - n, "%s%s", n ? "^" : "", name);
	}
	if (!n)
		snprintf(out, len, "0");
}

/* Input bits whose basis vector is 0: lanes or elements that differ only
 * there hold the same entry (replication, broadcast). */
static uint32_t free_bits(const struct gf2_map *g)
{
	uint32_t m = 0;

	for (int i = 0; i < g->lane_bits + g->elem_bits; i++)
		if (!g->basis[i])
			m |= 1u << i;
	return m;
}

/* How many element bits pick the byte within a register. */
static int byte_bits(const struct lanemap *lm, enum lm_operand op)
{
	int size = lm_dtype_size(lm->op[op].type);

	return size >= 4 ? 0 : gf2_log2(4 / size);
}

/* "; element e0..e2 (e0 e1: byte in the register, e2: register)" */
static void elem_legend(FILE *f, int bb, int eb)
{
	fprintf(f, "; element e0..e%d (", eb - 1);
	for (int j = 0; j < eb; j++) {
		int last = j == bb - 1 || j == eb - 1;

		fprintf(f, "e%d%s", j, !last ? " " : j == bb - 1 ? ": byte in the register" : ": register");
		if (last && j < eb - 1)
			fputs(", ", f);
	}
	fputc(')', f);
}

static void text_bits(FILE *f, const char *what, const struct gf2_map *g, int first,
		      int count)
{
	fprintf(f, "%s = (", what);
	for (int k = 0; k < count; k++) {
		char s[128];

		out_bit(g, first + k, s, sizeof(s));
		fprintf(f, "%s%s", k ? ", " : "", s);
	}
	fputc(')', f);
}

static void text_mask(FILE *f, const struct gf2_map *g, uint32_t m)
{
	int n = 0;

	for (int i = 0; i < g->lane_bits + g->elem_bits; i++)
		if (m >> i & 1) {
			char name[16];

			in_name(g, i, name, sizeof(name));
			fprintf(f, "%s%s", n++ ? " " : "", name);
		}
}

static void text_operand(FILE *f, const struct lanemap *lm, enum lm_operand op)
{
	const struct lanemap_operand *o = &lm->op[op];
	struct gf2_map g;
	int bb = byte_bits(lm, op);

	gf2_of(lm, op, &g);
	fprintf(f, "\n%s %dx%d %s, %d elements a lane: %s\n", lm_operand_name(op), o->rows,
		o->cols, lm_dtype_name(o->type), o->elems, kind_names[g.kind]);
	if (g.kind == GF2_NOT_POW2) {
		fprintf(f, "  wave %d, %d elements, %dx%d: every size must be a power of two\n",
			lm->wave, o->elems, o->rows, o->cols);
		return;
	}
	if (g.kind == GF2_NONLINEAR) {
		int s = g.bad_slot, lane = s / o->elems, e = s % o->elems;
		uint32_t want = gf2_apply(&g, lane, e);

		fprintf(f, "  lane %d element %d holds %s[%d][%d]; the XOR of its bits' one-hot images gives %s[%d][%d]\n",
			lane, e, lm_operand_name(op), o->row[s], o->col[s], lm_operand_name(op),
			gf2_row(&g, want), gf2_col(&g, want));
		fputs("  bits that break linearity: ", f);
		text_mask(f, &g, g.breaking);
		fputc('\n', f);
		return;
	}
	fputs("  ", f);
	text_bits(f, "row", &g, 0, g.row_bits);
	fputs("  ", f);
	text_bits(f, "col", &g, g.row_bits, g.col_bits);
	fputc('\n', f);
	fprintf(f, "  inputs: lane l0..l%d", g.lane_bits - 1);
	if (g.elem_bits)
		elem_legend(f, bb < g.elem_bits ? bb : g.elem_bits, g.elem_bits);
	fputc('\n', f);
	fputs("  bases: lane", f);
	for (int i = 0; i < g.lane_bits + g.elem_bits; i++) {
		if (i == g.lane_bits)
			fputs("  element", f);
		fprintf(f, " (%d,%d)", gf2_row(&g, g.basis[i]), gf2_col(&g, g.basis[i]));
	}
	fputc('\n', f);
	if (g.kind == GF2_AFFINE)
		fprintf(f, "  offset: (%d,%d), XORed into every entry\n", gf2_row(&g, g.offset),
			gf2_col(&g, g.offset));
	if (free_bits(&g)) {
		fputs("  broadcast: ", f);
		text_mask(f, &g, free_bits(&g));
		fputs(" (lanes or elements differing only there hold the same entry)\n", f);
	}
}

static void json_bits(struct json *j, const char *key, const struct gf2_map *g, int first,
		      int count)
{
	json_key(j, key);
	json_begin_array_compact(j);
	for (int k = 0; k < count; k++) {
		char s[128];

		out_bit(g, first + k, s, sizeof(s));
		json_string(j, s);
	}
	json_end_array(j);
}

static void json_mask(struct json *j, const char *key, const struct gf2_map *g, uint32_t m)
{
	json_key(j, key);
	json_begin_array_compact(j);
	for (int i = 0; i < g->lane_bits + g->elem_bits; i++)
		if (m >> i & 1) {
			char name[16];

			in_name(g, i, name, sizeof(name));
			json_string(j, name);
		}
	json_end_array(j);
}

static void json_vectors(struct json *j, const char *key, const struct gf2_map *g, int first,
			 int count)
{
	json_key(j, key);
	json_begin_array_compact(j);
	for (int i = first; i < first + count; i++) {
		json_begin_array_compact(j);
		json_int(j, gf2_row(g, g->basis[i]));
		json_int(j, gf2_col(g, g->basis[i]));
		json_end_array(j);
	}
	json_end_array(j);
}

static void json_operand(struct json *j, const struct lanemap *lm, enum lm_operand op)
{
	struct gf2_map g;

	gf2_of(lm, op, &g);
	json_begin_object(j);
	json_key_string(j, "matrix", lm_operand_name(op));
	json_key_string(j, "kind", g.kind == GF2_NONLINEAR ? "nonlinear" :
				   g.kind == GF2_NOT_POW2 ? "not_pow2" : kind_names[g.kind]);
	if (g.kind != GF2_NOT_POW2) {
		json_key_int(j, "lane_bits", g.lane_bits);
		json_key_int(j, "elem_bits", g.elem_bits);
		json_key_int(j, "row_bits", g.row_bits);
		json_key_int(j, "col_bits", g.col_bits);
		json_key_int(j, "byte_bits", byte_bits(lm, op));
	}
	if (g.kind == GF2_LINEAR || g.kind == GF2_AFFINE) {
		json_bits(j, "row", &g, 0, g.row_bits);
		json_bits(j, "col", &g, g.row_bits, g.col_bits);
		json_key(j, "bases");
		json_begin_object(j);
		json_vectors(j, "lane", &g, 0, g.lane_bits);
		json_vectors(j, "element", &g, g.lane_bits, g.elem_bits);
		json_end_object(j);
		json_key(j, "offset");
		json_begin_array_compact(j);
		json_int(j, gf2_row(&g, g.offset));
		json_int(j, gf2_col(&g, g.offset));
		json_end_array(j);
		json_mask(j, "broadcast", &g, free_bits(&g));
	}
	if (g.kind == GF2_NONLINEAR) {
		json_mask(j, "breaking", &g, g.breaking);
		json_key_int(j, "first_bad_lane", g.bad_slot / lm->op[op].elems);
		json_key_int(j, "first_bad_element", g.bad_slot % lm->op[op].elems);
	}
	json_end_object(j);
}

void lmprint_basis(FILE *f, const struct lanemap *lm, unsigned mask, enum lm_format fmt)
{
	if (fmt == LMF_BASIS_JSON) {
		struct json j;

		json_init(&j, f, 1);
		json_begin_object(&j);
		json_key_string(&j, "profile", lm->name);
		json_key_string(&j, "instruction", lm->instr);
		json_key_int(&j, "wave", lm->wave);
		json_key(&j, "operands");
		json_begin_array(&j);
		for (int op = 0; op < LM_NOPERANDS; op++)
			if (mask & (1u << op))
				json_operand(&j, lm, (enum lm_operand)op);
		json_end_array(&j);
		json_end_object(&j);
		json_finish(&j);
		return;
	}
	fprintf(f, "%s: %s, wave%d, M=%d N=%d K=%d, over GF(2)\n", lm->name, lm->instr,
		lm->wave, lm->m, lm->n, lm->k);
	for (int op = 0; op < LM_NOPERANDS; op++)
		if (mask & (1u << op))
			text_operand(f, lm, (enum lm_operand)op);
}
