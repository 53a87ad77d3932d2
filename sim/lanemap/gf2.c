/*
 * gf2.c - the GF(2) view of a lane map (see gf2.h).
 *
 * The basis is read off the one-hot inputs (lane 1, 2, 4, ...; element
 * 1, 2, 4, ...) after removing f(0); then every slot is checked against
 * the XOR of its bits' basis vectors. At most 64 x 64 slots, so the
 * check is exhaustive rather than sampled: a map is called linear only
 * when the basis reproduces all of it.
 */
#include "gf2.h"

#include <stdio.h>

int gf2_log2(int n)
{
	int b = 0;

	if (n < 1 || (n & (n - 1)))
		return -1;
	while ((1 << b) < n)
		b++;
	return b;
}

static uint32_t slot_value(const struct lanemap_operand *o, int row_bits, int lane, int e)
{
	int s = lane * o->elems + e;

	return (uint32_t)o->row[s] | (uint32_t)o->col[s] << row_bits;
}

uint32_t gf2_apply(const struct gf2_map *g, int lane, int e)
{
	uint32_t x = (uint32_t)lane | (uint32_t)e << g->lane_bits, v = g->offset;

	for (int i = 0; i < g->lane_bits + g->elem_bits; i++)
		if (x >> i & 1)
			v ^= g->basis[i];
	return v;
}

void gf2_of(const struct lanemap *lm, enum lm_operand op, struct gf2_map *g)
{
	const struct lanemap_operand *o = &lm->op[op];
	int nin;

	*g = (struct gf2_map){ .kind = GF2_NOT_POW2, .bad_slot = -1 };
	g->lane_bits = gf2_log2(lm->wave);
	g->elem_bits = gf2_log2(o->elems);
	g->row_bits = gf2_log2(o->rows);
	g->col_bits = gf2_log2(o->cols);
	if (g->lane_bits < 0 || g->elem_bits < 0 || g->row_bits < 0 || g->col_bits < 0)
		return;
	nin = g->lane_bits + g->elem_bits;
	g->offset = slot_value(o, g->row_bits, 0, 0);
	for (int i = 0; i < nin; i++) {
		int lane = i < g->lane_bits ? 1 << i : 0;
		int e = i < g->lane_bits ? 0 : 1 << (i - g->lane_bits);

		g->basis[i] = slot_value(o, g->row_bits, lane, e) ^ g->offset;
	}
	g->kind = g->offset ? GF2_AFFINE : GF2_LINEAR;
	for (int s = 0; s < lm->wave * o->elems && g->kind != GF2_NONLINEAR; s++)
		if (slot_value(o, g->row_bits, s / o->elems, s % o->elems) !=
		    gf2_apply(g, s / o->elems, s % o->elems)) {
			g->kind = GF2_NONLINEAR;
			g->bad_slot = s;
		}
	if (g->kind != GF2_NONLINEAR)
		return;
	/* Which input bits fail the XOR rule f(x) ^ f(x ^ bit i) == basis[i]
	 * somewhere: those the map does not treat linearly. */
	for (uint32_t x = 0; x < 1u << nin; x++)
		for (int i = 0; i < nin; i++) {
			uint32_t y = x ^ 1u << i, lmask = (1u << g->lane_bits) - 1;
			uint32_t fx = slot_value(o, g->row_bits, (int)(x & lmask), (int)(x >> g->lane_bits));
			uint32_t fy = slot_value(o, g->row_bits, (int)(y & lmask), (int)(y >> g->lane_bits));

			if ((fx ^ fy) != g->basis[i])
				g->breaking |= 1u << i;
		}
}

/*
 * Inverse of the n x n GF(2) matrix whose column i is col[i]: inv[k] is
 * the preimage of unit vector k. 0, or -1 when singular. Gauss-Jordan on
 * rows (row r holds bit i when col[i] has bit r), the identity alongside.
 */
static int invert(const uint32_t *col, int n, uint32_t *inv)
{
	uint32_t row[GF2_MAX_IN], aug[GF2_MAX_IN];

	for (int r = 0; r < n; r++) {
		row[r] = 0;
		aug[r] = 1u << r;
		for (int i = 0; i < n; i++)
			row[r] |= (col[i] >> r & 1) << i;
	}
	for (int c = 0; c < n; c++) {
		int p = c;

		while (p < n && !(row[p] >> c & 1))
			p++;
		if (p == n)
			return -1;
		uint32_t t = row[p];

		row[p] = row[c], row[c] = t;
		t = aug[p], aug[p] = aug[c], aug[c] = t;
		for (int r = 0; r < n; r++)
			if (r != c && (row[r] >> c & 1)) {
				row[r] ^= row[c];
				aug[r] ^= aug[c];
			}
	}
	/* row is now the identity, so aug[r] is row r of the inverse. */
	for (int k = 0; k < n; k++) {
		inv[k] = 0;
		for (int r = 0; r < n; r++)
			inv[k] |= (aug[r] >> k & 1) << r;
	}
	return 0;
}

/* XOR of basis[i] over the set bits i of v. */
static uint32_t apply(const uint32_t *basis, int n, uint32_t v)
{
	uint32_t out = 0;

	for (int i = 0; i < n; i++)
		if (v >> i & 1)
			out ^= basis[i];
	return out;
}

/* A permutation matrix: every image one bit, no bit twice. */
static int is_permutation(const uint32_t *m, int n)
{
	uint32_t seen = 0;

	for (int i = 0; i < n; i++) {
		if (!m[i] || (m[i] & (m[i] - 1)) || (seen & m[i]))
			return 0;
		seen |= m[i];
	}
	return 1;
}

static void relation_kind(struct gf2_relation *r)
{
	uint32_t lanes = (1u << r->lane_bits) - 1, rows = (1u << r->row_bits) - 1;
	int identity = 1, lane_only = 1, elem_only = 1, transpose = 1;

	for (int i = 0; i < r->in_bits; i++) {
		identity &= r->slot[i] == 1u << i;
		if (r->slot[i] != 1u << i) {
			lane_only &= i < r->lane_bits && !(r->slot[i] & ~lanes);
			elem_only &= i >= r->lane_bits && !(r->slot[i] & lanes);
		}
	}
	for (int k = 0; k < r->out_bits; k++)
		transpose &= k < r->row_bits ? !(r->entry[k] & rows) : !(r->entry[k] & ~rows);
	if (identity)
		r->kind = GF2R_IDENTITY;	/* offsets alone: said by the text */
	else if (is_permutation(r->entry, r->out_bits) && transpose)
		r->kind = GF2R_TRANSPOSE;
	else if (!is_permutation(r->slot, r->in_bits))
		r->kind = GF2R_SWIZZLE;
	else
		r->kind = elem_only ? GF2R_PACKING : lane_only ? GF2R_LANES : GF2R_LANE_ELEM;
}

void gf2_relate(const struct gf2_map *x, const struct gf2_map *y, struct gf2_relation *r)
{
	uint32_t xc[GF2_MAX_IN], inv[GF2_MAX_IN];
	int idx[GF2_MAX_IN], n = 0, nin = x->lane_bits + x->elem_bits;

	*r = (struct gf2_relation){ .kind = GF2R_NONE };
	if ((x->kind != GF2_LINEAR && x->kind != GF2_AFFINE) ||
	    (y->kind != GF2_LINEAR && y->kind != GF2_AFFINE)) {
		snprintf(r->why, sizeof(r->why), "not both linear (or affine) over GF(2)");
		return;
	}
	if (x->lane_bits != y->lane_bits || x->elem_bits != y->elem_bits ||
	    x->row_bits != y->row_bits || x->col_bits != y->col_bits) {
		snprintf(r->why, sizeof(r->why), "different shapes");
		return;
	}
	r->lane_bits = x->lane_bits, r->in_bits = nin;
	r->row_bits = x->row_bits, r->out_bits = x->row_bits + x->col_bits;
	for (int i = 0; i < nin; i++) {
		if (!x->basis[i] != !y->basis[i]) {
			snprintf(r->why, sizeof(r->why), "the broadcast bits differ");
			return;
		}
		if (x->basis[i])
			idx[n] = i, xc[n++] = x->basis[i];
	}
	if (n != r->out_bits || invert(xc, n, inv)) {
		snprintf(r->why, sizeof(r->why), "X is not invertible on its bits");
		return;
	}
	/* inv[k] is over the compact inputs idx[]; spread it to real bits. */
	for (int k = 0; k < n; k++) {
		uint32_t v = 0;

		for (int j = 0; j < n; j++)
			v |= (inv[k] >> j & 1) << idx[j];
		inv[k] = v;
	}
	for (int i = 0; i < nin; i++)
		r->slot[i] = y->basis[i] ? apply(inv, n, y->basis[i]) : 1u << i;
	for (int k = 0; k < r->out_bits; k++)
		r->entry[k] = apply(y->basis, nin, inv[k]);
	r->slot_offset = apply(inv, n, y->offset ^ x->offset);
	r->entry_offset = apply(y->basis, nin, apply(inv, n, x->offset)) ^ y->offset;
	relation_kind(r);
}

/* "(l2, l3^e0, 1^l4, 0)": target bit k in [first, first + count) as the
 * XOR of the constant's bit k and the source bits i whose image m[i] has
 * bit k, named by name(i). */
static size_t bits_text(char *out, size_t len, const uint32_t *m, uint32_t offset, int first,
			int count, int nnames,
			void (*name)(int, const struct gf2_relation *, char *, size_t),
			const struct gf2_relation *r)
{
	size_t n = (size_t)snprintf(out, len, "(");

	for (int k = first; k < first + count && n < len; k++) {
		int terms = 0;

		if (k > first)
			n += (size_t)snprintf(out + n, len - n, ", ");
		if (offset >> k & 1 && n < len)
			n += (size_t)snprintf(out + n, len - n, "%s", terms++ ? "^1" : "1");
		for (int i = 0; i < nnames && n < len; i++)
			if (m[i] >> k & 1) {
				char s[16];

				name(i, r, s, sizeof(s));
				n += (size_t)snprintf(out + n, len - n, "%s%s", terms++ ? "^" : "", s);
			}
		if (!terms && n < len)
			n += (size_t)snprintf(out + n, len - n, "0");
	}
	if (n < len)
		n += (size_t)snprintf(out + n, len - n, ")");
	return n < len ? n : len - 1;
}

static void in_name(int i, const struct gf2_relation *r, char *s, size_t len)
{
	if (i < r->lane_bits)
		snprintf(s, len, "l%d", i);
	else
		snprintf(s, len, "e%d", i - r->lane_bits);
}

static void out_name(int k, const struct gf2_relation *r, char *s, size_t len)
{
	if (k < r->row_bits)
		snprintf(s, len, "r%d", k);
	else
		snprintf(s, len, "c%d", k - r->row_bits);
}

void gf2_relation_text(const struct gf2_relation *r, char *out, size_t len)
{
	static const char *const what[] = {
		[GF2R_IDENTITY] = "the same bits",
		[GF2R_TRANSPOSE] = "transpose (row and column bits exchanged)",
		[GF2R_PACKING] = "packing: element bits permuted (registers, bytes), lanes as they were",
		[GF2R_LANES] = "lane bits permuted",
		[GF2R_LANE_ELEM] = "lane and element bits exchanged",
		[GF2R_SWIZZLE] = "XOR swizzle",
	};
	size_t n;

	if (r->kind == GF2R_NONE) {
		snprintf(out, len, "no bit-level relation: %s", r->why);
		return;
	}
	if (r->slot_offset) {
		uint32_t lanes = (1u << r->lane_bits) - 1;

		n = (size_t)snprintf(out, len, "%s%slane ^ %u, element ^ %u: lane' = ",
				     r->kind == GF2R_IDENTITY ? "" : what[r->kind],
				     r->kind == GF2R_IDENTITY ? "" : ", then ",
				     r->slot_offset & lanes, r->slot_offset >> r->lane_bits);
	} else {
		n = (size_t)snprintf(out, len, "%s: lane' = ", what[r->kind]);
	}
	if (n < len)
		n += bits_text(out + n, len - n, r->slot, r->slot_offset, 0, r->lane_bits, r->in_bits,
			       in_name, r);
	if (n < len)
		n += (size_t)snprintf(out + n, len - n, "  e' = ");
	if (n < len)
		n += bits_text(out + n, len - n, r->slot, r->slot_offset, r->lane_bits,
			       r->in_bits - r->lane_bits, r->in_bits, in_name, r);
	if (n < len)
		n += (size_t)snprintf(out + n, len - n, "; entries: row' = ");
	if (n < len)
		n += bits_text(out + n, len - n, r->entry, r->entry_offset, 0, r->row_bits,
			       r->out_bits, out_name, r);
	if (n < len)
		n += (size_t)snprintf(out + n, len - n, "  col' = ");
	if (n < len)
		bits_text(out + n, len - n, r->entry, r->entry_offset, r->row_bits,
			  r->out_bits - r->row_bits, r->out_bits, out_name, r);
}

/* ---- spans ---- */

void gf2_span_init(struct gf2_span *s)
{
	*s = (struct gf2_span){ 0 };
}

uint64_t gf2_span_reduce(const struct gf2_span *s, uint64_t x)
{
	for (int b = GF2_SPAN_BITS - 1; b >= 0 && x; b--)
		if (x >> b & 1)
			x ^= s->pivot[b];
	return x;
}

int gf2_span_add(struct gf2_span *s, uint64_t x)
{
	int b = GF2_SPAN_BITS - 1;

	x = gf2_span_reduce(s, x);
	if (!x)
		return 0;
	/* reduced: x's top bit has no pivot yet */
	while (!(x >> b & 1))
		b--;
	s->pivot[b] = x;
	s->dim++;
	return 1;
}
