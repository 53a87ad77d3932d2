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
