/*
 * lmloads.c - lane maps composed with memory layouts (lmloads.h).
 *
 * Pure: the layout is parsed from a string, offsets are row-major over
 * its factors, and a fragment is walked in element order, which is
 * register order (lanemap.h), so a run of consecutive addresses is what
 * one load instruction could fill into consecutive registers.
 */
#include "lmloads.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name, *list;
} named[] = {
	{ "paged16", "[NB, Hkv, D/16, BS, 16]" },
	{ "nhd", "[NB, BS, Hkv, D]" },
	{ "hnd", "[NB, Hkv, BS, D]" },
};

static const char *const axis_word[] = {
	[LML_BLOCK] = "NB", [LML_HEAD] = "Hkv", [LML_TOKEN] = "BS",
	[LML_DIM] = "D",
};

/* A decimal integer, the whole of s, 1..65536; 0 when s is not one. */
static int small_int(const char *s)
{
	long v = 0;

	if (!*s)
		return 0;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return 0;
		v = v * 10 + (*s - '0');
		if (v > 65536)
			return 0;
	}
	return (int)v;
}

static enum fs_rc parse_factor(const char *tok, struct lml_layout *out,
			       int *lo, struct fs_err *err)
{
	for (int a = LML_BLOCK; a <= LML_DIM; a++)
		if (strcmp(tok, axis_word[a]) == 0) {
			out->axis[out->n++] = (enum lml_axis)a;
			return FS_OK;
		}
	if (strncmp(tok, "D/", 2) == 0) {
		int n = small_int(tok + 2);

		if (!n)
			return fs_fail(err, FS_EINPUT, "layout: '%s': want D/n with n a positive integer", tok);
		if (out->split)
			return fs_fail(err, FS_EINPUT, "layout: D is split twice ('%s')", tok);
		out->split = n;
		out->axis[out->n++] = LML_DIM_HI;
		return FS_OK;
	}
	if (small_int(tok)) {
		*lo = small_int(tok);
		out->axis[out->n++] = LML_DIM_LO;
		return FS_OK;
	}
	return fs_fail(err, FS_EINPUT,
		       "layout: unknown factor '%s' (want NB, Hkv, BS, D, D/n and n)", tok);
}

enum fs_rc lml_parse(const char *s, int hkv, int bs, int d,
		     struct lml_layout *out, struct fs_err *err)
{
	char buf[96], *p, *save = NULL;
	int lo = 0, seen[LML_DIM_LO + 1] = { 0 };

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (strcmp(s, named[i].name) == 0)
			s = named[i].list;
	if (strlen(s) >= sizeof(buf))
		return fs_fail(err, FS_EINPUT, "layout: too long (at most %zu bytes)",
			       sizeof(buf) - 1);
	if (s[0] != '[' || s[strlen(s) - 1] != ']')
		return fs_fail(err, FS_EINPUT,
			       "layout: '%s': want a name (paged16, nhd, hnd) or a list like [NB, Hkv, D/16, BS, 16]", s);
	snprintf(buf, sizeof(buf), "%.*s", (int)strlen(s) - 2, s + 1);
	for (p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		char *end = p + strlen(p);
		enum fs_rc rc;

		while (isspace((unsigned char)*p))
			p++;
		while (end > p && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (out->n == LML_MAX_FACTORS)
			return fs_fail(err, FS_EINPUT, "layout: more than %d factors",
				       LML_MAX_FACTORS);
		rc = parse_factor(p, out, &lo, err);
		if (rc)
			return rc;
		if (seen[out->axis[out->n - 1]]++)
			return fs_fail(err, FS_EINPUT, "layout: '%s' appears twice", p);
	}
	if (out->n == 0 || out->axis[0] != LML_BLOCK)
		return fs_fail(err, FS_EINPUT, "layout: NB must come first (a block is one slab)");
	if (!seen[LML_HEAD] || !seen[LML_TOKEN])
		return fs_fail(err, FS_EINPUT, "layout: Hkv and BS must each appear once");
	if (seen[LML_DIM] == seen[LML_DIM_HI])
		return fs_fail(err, FS_EINPUT, "layout: want D, or D/n and n, once");
	if (seen[LML_DIM_HI] != seen[LML_DIM_LO] || lo != out->split)
		return fs_fail(err, FS_EINPUT, "layout: D/%d wants its %d as a factor too",
			       out->split, out->split);
	if (out->split && d % out->split)
		return fs_fail(err, FS_EINPUT, "layout: D/%d does not divide head_dim %d",
			       out->split, d);
	if (hkv < 1 || bs < 1 || d < 1)
		return fs_fail(err, FS_EINPUT, "layout: sizes must be positive");
	out->hkv = hkv;
	out->bs = bs;
	out->d = d;
	/* Normalised text: what a report prints back. */
	strcpy(out->text, "[");
	for (int i = 0; i < out->n; i++) {
		char f[16];

		if (out->axis[i] == LML_DIM_HI)
			snprintf(f, sizeof(f), "D/%d", out->split);
		else if (out->axis[i] == LML_DIM_LO)
			snprintf(f, sizeof(f), "%d", out->split);
		else
			snprintf(f, sizeof(f), "%s", axis_word[out->axis[i]]);
		strcat(out->text, i ? ", " : "");
		strcat(out->text, f);
	}
	strcat(out->text, "]");
	return FS_OK;
}

int64_t lml_offset(const struct lml_layout *l, int h, int t, int d)
{
	int64_t off = 0;

	for (int i = 1; i < l->n; i++) {	/* factor 0 is the block */
		int64_t size = 0, idx = 0;

		switch (l->axis[i]) {
		case LML_HEAD:   size = l->hkv; idx = h; break;
		case LML_TOKEN:  size = l->bs; idx = t; break;
		case LML_DIM:    size = l->d; idx = d; break;
		case LML_DIM_HI: size = l->d / l->split; idx = d / l->split; break;
		case LML_DIM_LO: size = l->split; idx = d % l->split; break;
		case LML_BLOCK:  break;
		}
		off = off * size + idx;
	}
	return off;
}

/* Aligned power-of-two pieces of at most LML_MAX_LOAD bytes. */
static int pieces(int64_t off, int bytes, int *widest)
{
	int n = 0;

	while (bytes > 0) {
		int p = LML_MAX_LOAD;

		while (p > bytes || off % p)
			p /= 2;
		if (p > *widest)
			*widest = p;
		off += p;
		bytes -= p;
		n++;
	}
	return n;
}

/* Where element e of a lane sits: block and offset, or -1 (no load). */
struct where {
	int block, key, dim;
	int64_t off;
};

typedef int (*where_fn)(const void *ctx, int row, int col, struct where *w);

static void walk(const struct lanemap_operand *o, int lanes, where_fn fn,
		 const void *ctx, struct lml_frag *out)
{
	memset(out, 0, sizeof(*out));
	out->lanes = lanes;
	out->elems = o->elems;
	out->size = 1;
	for (int lane = 0; lane < lanes; lane++) {
		struct lml_lane *L = &out->lane[lane];
		struct lml_run *r = NULL;

		for (int e = 0; e < o->elems; e++) {
			int slot = lane * o->elems + e;
			struct where w;

			if (!fn(ctx, o->row[slot], o->col[slot], &w)) {
				L->padded++;
				r = NULL;	/* a gap ends the run */
				continue;
			}
			if (r && w.block == r->block && w.off == r->off + r->bytes) {
				r->ne++;
				r->bytes++;
				continue;
			}
			r = &L->run[L->nrun++];
			*r = (struct lml_run){ .e0 = e, .ne = 1, .block = w.block,
					       .off = w.off, .bytes = 1,
					       .key = w.key, .dim = w.dim };
		}
		for (int i = 0; i < L->nrun; i++) {
			L->run[i].loads = pieces(L->run[i].off, L->run[i].bytes,
						 &out->widest);
			L->loads += L->run[i].loads;
		}
		out->loads += L->loads;
		out->lanes_one_load += L->loads == 1 && !L->padded;
	}
}

struct kctx {
	const struct lml_layout *l;
	int head, step, kdim;
};

/* B is K x N: row = k (dim within the step), col = n (key). */
static int k_where(const void *p, int k, int n, struct where *w)
{
	const struct kctx *c = p;
	int dim = c->step * c->kdim + k;

	if (dim >= c->l->d)
		return 0;	/* the zero-padded end of the last K-step */
	w->block = n / c->l->bs;
	w->key = n;
	w->dim = dim;
	w->off = lml_offset(c->l, c->head, n % c->l->bs, dim);
	return 1;
}

static enum fs_rc check_op(const struct lanemap *lm, enum lm_operand op,
			   int d, int step, struct fs_err *err)
{
	if (!lm->valid)
		return fs_fail(err, FS_EINPUT, "%s: not a valid lane map", lm->name);
	if (lm_dtype_size(lm->op[op].type) != 1)
		return fs_fail(err, FS_EINPUT, "%s: %s holds %s, not bytes", lm->name,
			       lm_operand_name(op), lm_dtype_name(lm->op[op].type));
	if (step < 0 || step * lm->k >= d)
		return fs_fail(err, FS_EINPUT, "K-step %d: head_dim %d has K-steps 0 to %d",
			       step, d, (d + lm->k - 1) / lm->k - 1);
	return FS_OK;
}

enum fs_rc lml_k_frag(const struct lanemap *lm, const struct lml_layout *l,
		      int head, int step, struct lml_frag *out,
		      struct fs_err *err)
{
	struct kctx c = { l, head, step, lm->k };
	enum fs_rc rc = check_op(lm, LM_B, l->d, step, err);

	if (rc)
		return rc;
	if (head < 0 || head >= l->hkv)
		return fs_fail(err, FS_EINPUT, "kv head %d: the cache has heads 0 to %d",
			       head, l->hkv - 1);
	walk(&lm->op[LM_B], lm->wave, k_where, &c, out);
	return FS_OK;
}

struct qctx {
	int q_heads, d, group, prefill, head, step, kdim;
};

/* A is M x K: row = m, col = k. */
static int q_where(const void *p, int m, int k, struct where *w)
{
	const struct qctx *c = p;
	int dim = c->step * c->kdim + k;

	if (dim >= c->d || (!c->prefill && m >= c->group))
		return 0;	/* padding, or a row past the GQA group */
	w->block = 0;
	w->key = m;
	w->dim = dim;
	w->off = c->prefill ?
		(int64_t)m * c->q_heads * c->d + (int64_t)c->head * c->d + dim :
		(int64_t)(c->head * c->group + m) * c->d + dim;
	return 1;
}

enum fs_rc lml_q_frag(const struct lanemap *lm, int q_heads, int d,
		      int group, int prefill, int head, int step,
		      struct lml_frag *out, struct fs_err *err)
{
	struct qctx c = { q_heads, d, group, prefill, head, step, lm->k };
	enum fs_rc rc = check_op(lm, LM_A, d, step, err);

	if (rc)
		return rc;
	if (group < 1 || q_heads < 1 || q_heads % group)
		return fs_fail(err, FS_EINPUT, "q heads %d in groups of %d", q_heads, group);
	if (head < 0 || head >= (prefill ? q_heads : q_heads / group))
		return fs_fail(err, FS_EINPUT, "head %d is out of range", head);
	walk(&lm->op[LM_A], lm->wave, q_where, &c, out);
	return FS_OK;
}
