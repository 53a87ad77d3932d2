/*
 * lanediff.c - entry-wise comparison of lane maps (see lanediff.h).
 *
 * Each candidate transform T is tested the same way: does X's owner list
 * of entry T(i, j) equal Y's owner list of entry (i, j) for every entry?
 * Owner lists compare as (lane, e) pairs, so maps whose operands have
 * different element counts still compare sensibly.
 *
 * Worked example, gfx936 vs gfx936-quad, operand C:
 *   gfx936 holds C[i][j] in lane i + 16*(j%4), element j/4
 *   quad   holds C[i][j] in lane 4*i + j%4,    element j/4
 * No row or column permutation maps one onto the other, but the lane
 * bijection l -> (l % 16) * 4 + l / 16 does: "lanes interleaved by 16".
 */
#include "lanediff.h"
#include "gf2.h"

#include <stdio.h>
#include <string.h>

struct side {
	const struct lanemap *lm;
	const struct lanemap_operand *o;
	int t;		/* viewed transposed: entry (r, c) is the map's (c, r) */
	int rows, cols;	/* of the view */
};

static struct side side_of(const struct lanemap *lm, enum lm_operand op, int t)
{
	struct side s = { lm, &lm->op[op], t, 0, 0 };

	s.rows = t ? s.o->cols : s.o->rows;
	s.cols = t ? s.o->rows : s.o->cols;
	return s;
}

/* Owner k of entry (r, c) as a (lane, e) pair packed in one int. */
static int owner(const struct side *s, int r, int c, int k)
{
	int i = s->t ? c * s->o->cols + r : r * s->o->cols + c;
	int slot = s->o->owner[i * s->o->replicas + k];

	return (slot / s->o->elems) << 16 | (slot % s->o->elems);
}

static int same_entry(const struct side *x, int xr, int xc,
		      const struct side *y, int yr, int yc)
{
	for (int k = 0; k < x->o->replicas; k++)
		if (owner(x, xr, xc, k) != owner(y, yr, yc, k))
			return 0;
	return 1;
}

/*
 * Name a permutation p of 0..n-1 where Y's index i is X's index p[i];
 * `noun` is "row", "column", "lane" or "element".
 */
static void name_perm(const int *p, int n, const char *noun, char *out,
		      size_t len)
{
	int ok;

	for (int sh = 1; sh < n; sh++) {
		ok = 1;
		for (int i = 0; i < n && ok; i++)
			ok = p[i] == (i + sh) % n;
		if (ok) {
			snprintf(out, len, "%ss rotated by %d: Y %s i is X %s (i + %d) %% %d",
				 noun, sh, noun, noun, sh, n);
			return;
		}
	}
	ok = 1;
	for (int i = 0; i < n && ok; i++)
		ok = p[i] == n - 1 - i;
	if (ok) {
		snprintf(out, len, "%ss reversed: Y %s i is X %s %d - i",
			 noun, noun, noun, n - 1);
		return;
	}
	for (int s = 2; s < n; s++) {
		if (n % s)
			continue;
		ok = 1;
		for (int i = 0; i < n && ok; i++)
			ok = p[i] == (i % s) * (n / s) + i / s;
		if (ok) {
			snprintf(out, len,
				 "%ss interleaved by %d: Y %s i is X %s %d*(i %% %d) + i / %d",
				 noun, s, noun, noun, n / s, s, s);
			return;
		}
	}
	for (int x = 1; x < n; x++) {
		ok = 1;
		for (int i = 0; i < n && ok; i++)
			ok = p[i] == (i ^ x);
		if (ok) {
			snprintf(out, len, "%ss XOR-swizzled: Y %s i is X %s i ^ %d",
				 noun, noun, noun, x);
			return;
		}
	}
	{
		size_t at = (size_t)snprintf(out, len, "%ss permuted: Y %s i is X %s [",
					     noun, noun, noun);

		for (int i = 0; i < n && at < len; i++)
			at += (size_t)snprintf(out + at, len - at, i ? " %d" : "%d", p[i]);
		if (at < len)
			snprintf(out + at, len - at, "][i]");
	}
}

/* Y row (or column) i equals X row p[i]? Fills p; 0 when no bijection. */
static int find_line_perm(const struct side *x, const struct side *y,
			  int by_row, int *p)
{
	int n = by_row ? x->rows : x->cols;
	int m = by_row ? x->cols : x->rows;
	int used[LM_MAX_DIM] = { 0 };

	for (int i = 0; i < n; i++) {
		p[i] = -1;
		for (int cand = 0; cand < n && p[i] < 0; cand++) {
			int eq = !used[cand];

			for (int j = 0; j < m && eq; j++)
				eq = by_row ? same_entry(x, cand, j, y, i, j)
					    : same_entry(x, j, cand, y, j, i);
			if (eq) {
				p[i] = cand;
				used[cand] = 1;
			}
		}
		if (p[i] < 0)
			return 0;
	}
	return 1;
}

/*
 * Is there a bijection f on lanes (which = 0) or on elements (which = 1)
 * with Y(i,j) = f(X(i,j)) everywhere? Fills f (indexed by X's value).
 */
static int find_slot_perm(const struct side *x, const struct side *y,
			  int which, int *f, int n)
{
	int used[LM_MAX_LANES > LM_MAX_ELEMS ? LM_MAX_LANES : LM_MAX_ELEMS];

	for (int i = 0; i < n; i++)
		f[i] = -1, used[i] = 0;
	for (int r = 0; r < x->rows; r++) {
		for (int c = 0; c < x->cols; c++) {
			for (int k = 0; k < x->o->replicas; k++) {
				int a = owner(x, r, c, k), b = owner(y, r, c, k);
				int fa = which ? (a & 0xffff) : a >> 16;
				int fb = which ? (b & 0xffff) : b >> 16;
				int keep_a = which ? a >> 16 : (a & 0xffff);
				int keep_b = which ? b >> 16 : (b & 0xffff);

				if (keep_a != keep_b)
					return 0;
				if (f[fa] < 0) {
					if (used[fb])
						return 0;
					f[fa] = fb;
					used[fb] = 1;
				} else if (f[fa] != fb) {
					return 0;
				}
			}
		}
	}
	return 1;
}

/* Name a row or column permutation of view x onto y, if one exists. */
static int line_perm_verdict(const struct side *x, const struct side *y,
			     const char *prefix, char *out, size_t len)
{
	int p[LM_MAX_DIM];
	size_t at = (size_t)snprintf(out, len, "%s", prefix);

	if (find_line_perm(x, y, 1, p)) {
		name_perm(p, x->rows, "row", out + at, len - at);
		return 1;
	}
	if (find_line_perm(x, y, 0, p)) {
		name_perm(p, x->cols, "column", out + at, len - at);
		return 1;
	}
	return 0;
}

static void compare_operand(const struct lanemap *lx, const struct lanemap *ly,
			    enum lm_operand op, struct lanediff_op *d)
{
	struct side x = side_of(lx, op, 0), y = side_of(ly, op, 0);
	struct side xt = side_of(lx, op, 1);
	int p[LM_MAX_DIM], f[LM_MAX_LANES > LM_MAX_ELEMS ? LM_MAX_LANES : LM_MAX_ELEMS];

	memset(d, 0, sizeof(*d));
	d->entries = y.rows * y.cols;
	if (x.rows != y.rows || x.cols != y.cols ||
	    x.o->replicas != y.o->replicas || lx->wave != ly->wave) {
		d->kind = LD_INCOMPARABLE;
		d->differ = d->entries;
		snprintf(d->verdict, sizeof(d->verdict),
			 "not comparable: %dx%d x%d in wave%d vs %dx%d x%d in wave%d",
			 x.rows, x.cols, x.o->replicas, lx->wave,
			 y.rows, y.cols, y.o->replicas, ly->wave);
		return;
	}
	for (int r = 0; r < y.rows; r++)
		for (int c = 0; c < y.cols; c++)
			d->differ += !same_entry(&x, r, c, &y, r, c);
	if (d->differ == 0) {
		d->kind = LD_IDENTICAL;
		snprintf(d->verdict, sizeof(d->verdict), "identical");
		return;
	}
	if (x.rows == x.cols) {
		int ok = 1;

		for (int r = 0; r < y.rows && ok; r++)
			for (int c = 0; c < y.cols && ok; c++)
				ok = same_entry(&xt, r, c, &y, r, c);
		if (ok) {
			d->kind = LD_TRANSPOSE;
			snprintf(d->verdict, sizeof(d->verdict), "transpose");
			return;
		}
	}
	if (line_perm_verdict(&x, &y, "", d->verdict, sizeof(d->verdict))) {
		d->kind = strncmp(d->verdict, "row", 3) ? LD_COLS : LD_ROWS;
		return;
	}
	if (x.o->elems == y.o->elems && find_slot_perm(&x, &y, 0, f, lx->wave)) {
		/* f maps X's lane to Y's; name it as "Y lane i is X lane p[i]". */
		for (int l = 0; l < lx->wave; l++)
			p[f[l]] = l;
		d->kind = LD_LANES;
		name_perm(p, lx->wave, "lane", d->verdict, sizeof(d->verdict));
		return;
	}
	if (x.o->elems == y.o->elems &&
	    find_slot_perm(&x, &y, 1, f, x.o->elems)) {
		for (int e = 0; e < x.o->elems; e++)
			p[f[e]] = e;
		d->kind = LD_ELEMS;
		name_perm(p, x.o->elems, "element", d->verdict,
			  sizeof(d->verdict));
		return;
	}
	/* A transpose composed with a row or column permutation, e.g. an
	 * MFMA C layout (one column per lane) against an MMAC one. */
	if (x.rows == x.cols &&
	    line_perm_verdict(&xt, &y, "transpose, then ", d->verdict,
			      sizeof(d->verdict))) {
		d->kind = LD_TRANSPOSE_PERM;
		return;
	}
	d->kind = LD_UNSTRUCTURED;
	snprintf(d->verdict, sizeof(d->verdict), "unstructured");
}

enum fs_rc lanediff_compare(const struct lanemap *x, const struct lanemap *y,
			    struct lanediff *d, struct fs_err *err)
{
	if (!x->valid || !y->valid)
		return fs_fail(err, FS_EINPUT, "%s: profile is not valid",
			       x->valid ? y->name : x->name);
	d->differ = 0;
	for (int op = 0; op < LM_NOPERANDS; op++) {
		struct gf2_map gx, gy;

		compare_operand(x, y, (enum lm_operand)op, &d->op[op]);
		d->differ += d->op[op].differ;
		gf2_of(x, (enum lm_operand)op, &gx);
		gf2_of(y, (enum lm_operand)op, &gy);
		gf2_relate(&gx, &gy, &d->op[op].rel);
		gf2_relation_text(&d->op[op].rel, d->op[op].bits, sizeof(d->op[op].bits));
	}
	return FS_OK;
}
