/*
 * probe.c - plan the lane-map probe, simulate a device, solve its answers
 * (see probe.h for the plan's layout and what is observable).
 *
 * Solve works on register slots only. Node numbering for the three
 * union-find structures: A slot sa is node sa, B slot sb is SA + sb, C
 * slot sc is SA + SB + sc. A product (sa, sb, sc) joins
 *
 *   rows:  sa ~ sc      (A's row is C's row)
 *   cols:  sb ~ sc      (B's column is C's column)
 *   k:     sa ~ sb      (A's k is B's k)
 *
 * and the classes are the rows, columns and k of the device's map. What
 * makes them a matrix product, and not just any graph, is checked: every
 * C slot has exactly one product per k class, the check waves come out
 * as predicted, and the named map validates as a lane map.
 *
 * Example, gfx936 on a gfx936 device: 512 A slots are each read by 16 C
 * slots (one row of C); 8192 products = 16*16*32; 16 row classes, 16
 * column classes, 32 k classes; the votes give every class the label
 * the profile gives it, and the found map equals gfx936.
 *
 * The short plan gets the same products another way (probe_short.c): the
 * pair waves name, for slot 0 and each power-of-two A slot, the (B slot,
 * C slot) each feeds; packed as bits (A slot | B slot << ab | C slot <<
 * ab + bb) and taken relative to the first product of slot 0, they span
 * a subspace, and the products are that subspace shifted back. gfx936:
 * slot 0 feeds 16 C slots, each power-of-two slot 16 more, and the span
 * has dimension 13, 2^13 = 8192 products. From there on solve is the
 * same, after one more check (probe_short_predict): the products predict
 * every wave of the plan, one-hot and check waves alike, exactly.
 */
#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gf2.h"
#include "mmac.h"
#include "probe_int.h"

_Static_assert(PROBE_BASE * PROBE_BASE >= LM_MAX_SLOTS,
	       "two digits must number every B slot");
_Static_assert((long long)LM_MAX_DIM * 255 * 255 < 2147483647LL,
	       "a check wave's C must fit in int32");

enum { CHECK_ONES, CHECK_EXTREME, CHECK_RANDOM };


static const char *const check_names[PROBE_SHORT_CHECKS] = {
	"ones", "extreme", "random", "random2", "random3", "random4",
};
_Static_assert(PROBE_SHORT_CHECKS == 6, "one name per short check wave");

const char *probe_check_name(int i)
{
	return i >= 0 && i < PROBE_SHORT_CHECKS ? check_names[i] : "?";
}

const char *probe_kind_name(enum probe_kind kind)
{
	return kind == PROBE_SHORT ? "short" : "exhaustive";
}

static int slots_of(const struct lanemap *lm, enum lm_operand op)
{
	return lm->wave * lm->op[op].elems;
}

static int is_int8(enum lm_dtype t)
{
	return t == LM_I8 || t == LM_U8;
}

int32_t probe_load8(enum lm_dtype t, uint8_t v)
{
	return t == LM_U8 ? (int32_t)v : (int32_t)(int8_t)v;
}

static enum fs_rc integer_typed(const struct lanemap *lm, struct fs_err *err)
{
	if (is_int8(lm->op[LM_A].type) && is_int8(lm->op[LM_B].type) &&
	    lm->op[LM_C].type == LM_I32)
		return FS_OK;
	return fs_fail(err, FS_EINPUT, "%s: the probe needs 8-bit A and B and i32 C",
		       lm->name);
}

enum fs_rc probe_same_geometry(const struct lanemap *x, const struct lanemap *y,
			       struct fs_err *err)
{
	if (integer_typed(x, err) || integer_typed(y, err))
		return FS_EINPUT;
	if (x->wave != y->wave)
		return fs_fail(err, FS_EINPUT, "%s has %d lanes, %s has %d", x->name,
			       x->wave, y->name, y->wave);
	for (int op = 0; op < LM_NOPERANDS; op++) {
		if (x->op[op].elems == y->op[op].elems)
			continue;
		return fs_fail(err, FS_EINPUT, "%s holds %d %s elements per lane, %s %d",
			       x->name, x->op[op].elems, lm_operand_name((enum lm_operand)op),
			       y->name, y->op[op].elems);
	}
	return FS_OK;
}

/* splitmix64: the random wave must be the same on every machine. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static const char *gf2_kind_text(enum gf2_kind k)
{
	switch (k) {
	case GF2_LINEAR:
		return "linear over GF(2)";
	case GF2_AFFINE:
		return "affine over GF(2), not linear";
	case GF2_NONLINEAR:
		return "not linear over GF(2)";
	case GF2_NOT_POW2:
		break;
	}
	return "not of power-of-two sizes, so not linear over GF(2)";
}

enum probe_kind probe_default_kind(const struct lanemap *lm, char *why, size_t len)
{
	for (int op = 0; op < LM_NOPERANDS; op++) {
		struct gf2_map g;

		gf2_of(lm, (enum lm_operand)op, &g);
		if (g.kind == GF2_LINEAR)
			continue;
		if (why)
			snprintf(why, len, "%s is %s", lm_operand_name((enum lm_operand)op),
				 gf2_kind_text(g.kind));
		return PROBE_EXHAUSTIVE;
	}
	if (why && len)
		why[0] = '\0';
	return PROBE_SHORT;
}

static int bit_count(unsigned x)
{
	int n = 0;

	for (; x; x &= x - 1)
		n++;
	return n;
}

/* Mixes have 3 or more bits set: an XOR of at least three basis slots. */
#define MIX_BITS 3

enum fs_rc probe_layout(const struct lanemap *lm, enum probe_kind kind,
			struct probe_layout *pl, struct fs_err *err)
{
	int sa = slots_of(lm, LM_A), bits = gf2_log2(sa);
	uint64_t seed = PROBE_SEED + 1;	/* not the random waves' stream */
	char why[128];

	memset(pl, 0, sizeof(*pl));
	pl->kind = kind;
	if (!lm->valid)
		return fs_fail(err, FS_EINPUT, "%s: profile is not valid", lm->name);
	if (integer_typed(lm, err))
		return FS_EINPUT;
	if (kind == PROBE_EXHAUSTIVE) {
		pl->onehot = PROBE_DIGITS * sa;
		pl->checks = PROBE_CHECKS;
		pl->waves = pl->onehot + pl->checks;
		return FS_OK;
	}
	if (probe_default_kind(lm, why, sizeof(why)) != PROBE_SHORT)
		return fs_fail(err, FS_EINPUT,
			       "%s: %s, and a short plan reads linear maps only "
			       "(plan with --exhaustive)", lm->name, why);
	/* linear: sa is a power of two, and a wave has 32 or more slots */
	if (bits < MIX_BITS + 2)
		return fs_fail(err, FS_EINPUT, "%s: %d A slots are too few for a short plan",
			       lm->name, sa);
	pl->slot[pl->probes++] = 0;
	for (int i = 0; i < bits; i++)
		pl->slot[pl->probes++] = 1 << i;
	pl->basis = pl->probes;
	while (pl->probes < pl->basis + PROBE_MIXES) {
		int x = (int)(next_rand(&seed) % (uint64_t)sa), dup = 0;

		for (int j = pl->basis; j < pl->probes; j++)
			dup |= pl->slot[j] == x;
		if (!dup && bit_count((unsigned)x) >= MIX_BITS)
			pl->slot[pl->probes++] = x;
	}
	pl->onehot = PROBE_DIGITS * ((pl->probes + 1) / 2);
	pl->checks = PROBE_SHORT_CHECKS;
	pl->waves = pl->onehot + pl->checks;
	return FS_OK;
}

/* B of a one-hot wave: slot sb holds digit d of sb, plus 1 (never 0). */
static void fill_digits(uint8_t *wb, int sb_n, int d)
{
	int div = d ? PROBE_BASE : 1;

	for (int sb = 0; sb < sb_n; sb++)
		wb[sb] = (uint8_t)(sb / div % PROBE_BASE + 1);
}

enum fs_rc probe_plan(const struct lanemap *lm, const struct probe_layout *pl,
		      uint8_t *a, uint8_t *b, struct fs_err *err)
{
	int sa_n = slots_of(lm, LM_A), sb_n = slots_of(lm, LM_B);
	uint8_t mat[LM_MAX_SLOTS];
	uint64_t seed = PROBE_SEED;
	uint8_t *wa, *wb;

	if (!lm->valid)
		return fs_fail(err, FS_EINPUT, "%s: profile is not valid", lm->name);
	if (integer_typed(lm, err))
		return FS_EINPUT;
	for (int w = 0; w < pl->onehot; w++) {
		int m = w / PROBE_DIGITS, d = w % PROBE_DIGITS;

		wa = &a[(size_t)w * (size_t)sa_n];
		wb = &b[(size_t)w * (size_t)sb_n];
		memset(wa, 0, (size_t)sa_n);
		if (pl->kind == PROBE_EXHAUSTIVE) {
			wa[m] = 1;
		} else {
			wa[pl->slot[2 * m]] = 1;
			if (2 * m + 1 < pl->probes)
				wa[pl->slot[2 * m + 1]] = PROBE_HI;
		}
		fill_digits(wb, sb_n, d);
	}
	for (int i = 0; i < pl->checks; i++) {
		int w = pl->onehot + i;
		int u8a = lm->op[LM_A].type == LM_U8, u8b = lm->op[LM_B].type == LM_U8;

		wa = &a[(size_t)w * (size_t)sa_n];
		wb = &b[(size_t)w * (size_t)sb_n];
		if (i == CHECK_ONES) {
			memset(wa, 1, (size_t)sa_n);
			memset(wb, 1, (size_t)sb_n);
		} else if (i == CHECK_EXTREME) {
			/* -128 * 127: the sign of every product shows */
			memset(wa, u8a ? 0xff : 0x80, (size_t)sa_n);
			memset(wb, u8b ? 0xff : 0x7f, (size_t)sb_n);
		} else {
			int na = lm->op[LM_A].rows * lm->op[LM_A].cols;
			int nb = lm->op[LM_B].rows * lm->op[LM_B].cols;

			for (int e = 0; e < na; e++)
				mat[e] = (uint8_t)next_rand(&seed);
			mmac_scatter8(lm, LM_A, mat, wa);
			for (int e = 0; e < nb; e++)
				mat[e] = (uint8_t)next_rand(&seed);
			mmac_scatter8(lm, LM_B, mat, wb);
		}
	}
	return FS_OK;
}

/* Copy each entry's lowest slot onto its other replicas. */
static void first_copy(const struct lanemap *lm, enum lm_operand op, uint8_t *regs)
{
	const struct lanemap_operand *o = &lm->op[op];

	for (int i = 0; i < o->rows * o->cols; i++)
		for (int r = 1; r < o->replicas; r++)
			regs[o->owner[i * o->replicas + r]] =
				regs[o->owner[i * o->replicas]];
}

enum fs_rc probe_device(const struct lanemap *dev, int waves,
			const uint8_t *a, const uint8_t *b, int32_t *c,
			struct fs_err *err)
{
	int sa_n = slots_of(dev, LM_A), sb_n = slots_of(dev, LM_B);
	int sc_n = slots_of(dev, LM_C);
	uint8_t ra[LM_MAX_SLOTS], rb[LM_MAX_SLOTS];

	if (!dev->valid)
		return fs_fail(err, FS_EINPUT, "%s: profile is not valid", dev->name);
	for (int w = 0; w < waves; w++) {
		int32_t *wc = &c[(size_t)w * (size_t)sc_n];
		enum fs_rc rc;

		memcpy(ra, &a[(size_t)w * (size_t)sa_n], (size_t)sa_n);
		memcpy(rb, &b[(size_t)w * (size_t)sb_n], (size_t)sb_n);
		first_copy(dev, LM_A, ra);
		first_copy(dev, LM_B, rb);
		memset(wc, 0, (size_t)sc_n * sizeof(*wc));
		rc = mmac_exec(dev, ra, rb, wc, NULL, err);
		if (rc)
			return rc;
	}
	return FS_OK;
}

/* ---- solve ---- */

static int uf_find(struct probe_uf *u, int x)
{
	while (u->up[x] != x) {
		u->up[x] = u->up[u->up[x]];
		x = u->up[x];
	}
	return x;
}

static void uf_join(struct probe_uf *u, int x, int y)
{
	x = uf_find(u, x);
	y = uf_find(u, y);
	/* the smaller node is the root: classes are numbered in slot order */
	if (x < y)
		u->up[y] = x;
	else if (y < x)
		u->up[x] = y;
}

enum { REL_ROW, REL_COL, REL_K };
static const char *const rel_names[3] = { "rows", "columns", "k indices" };

void probe_slot_name(const struct probe_solver *s, enum lm_operand op, int slot,
		      char *out, size_t len)
{
	int el = s->plan->op[op].elems;

	snprintf(out, len, "%s lane %d e %d", lm_operand_name(op), slot / el,
		 slot % el);
}

/* The one-hot waves: how many products, then the products themselves. */
static enum fs_rc read_terms(struct probe_solver *s, int store, struct fs_err *err)
{
	int per_c[LM_MAX_SLOTS] = { 0 };
	char where[64];

	s->nt = 0;
	for (int sa = 0; sa < s->sa; sa++) {
		const int32_t *c0 = &s->c[(size_t)(PROBE_DIGITS * sa) * (size_t)s->sc];
		const int32_t *c1 = c0 + s->sc;

		for (int sc = 0; sc < s->sc; sc++) {
			int32_t v0 = c0[sc], v1 = c1[sc];
			int sb;

			if (v0 == 0 && v1 == 0)
				continue;
			if (v0 < 1 || v0 > PROBE_BASE || v1 < 1 || v1 > PROBE_BASE) {
				int bad = v0 < 1 || v0 > PROBE_BASE ? 0 : 1;

				probe_slot_name(s, LM_C, sc, where, sizeof(where));
				return fs_fail(err, FS_EINPUT,
					       "no lane map explains the dump: wave %d, %s holds %d, "
					       "not 0 and not one B value 1..%d",
					       PROBE_DIGITS * sa + bad, where, bad ? v1 : v0,
					       PROBE_BASE);
			}
			sb = (v0 - 1) + PROBE_BASE * (v1 - 1);
			if (sb >= s->sb) {
				probe_slot_name(s, LM_C, sc, where, sizeof(where));
				return fs_fail(err, FS_EINPUT,
					       "no lane map explains the dump: waves %d and %d, %s "
					       "names B slot %d of %d", PROBE_DIGITS * sa,
					       PROBE_DIGITS * sa + 1, where, sb, s->sb);
			}
			if (++per_c[sc] > LM_MAX_DIM) {
				probe_slot_name(s, LM_C, sc, where, sizeof(where));
				return fs_fail(err, FS_EINPUT,
					       "no lane map explains the dump: %s sums more than "
					       "%d products", where, LM_MAX_DIM);
			}
			if (store) {
				/* by C slot: first[] was advanced as a fill cursor */
				s->t[s->first[sc]++] = (struct probe_term){ sa, sb, sc };
			}
			s->nt++;
		}
	}
	if (!store) {
		int at = 0;

		for (int sc = 0; sc < s->sc; sc++) {
			s->first[sc] = at;
			at += per_c[sc];
		}
		s->first[s->sc] = at;
	}
	return FS_OK;
}

static enum fs_rc collect_terms(struct probe_solver *s, struct fs_err *err)
{
	enum fs_rc rc = read_terms(s, 0, err);

	if (rc)
		return rc;
	if (s->nt == 0)
		return fs_fail(err, FS_EINPUT,
			       "no lane map explains the dump: no C slot is ever written "
			       "(every one-hot wave came back 0)");
	s->t = malloc((size_t)s->nt * sizeof(*s->t));
	if (!s->t)
		return FS_ENOMEM;
	rc = read_terms(s, 1, err);
	/* the fill advanced first[sc] to the start of sc + 1: shift back */
	memmove(&s->first[1], &s->first[0], (size_t)s->sc * sizeof(int));
	s->first[0] = 0;
	return rc;
}

/*
 * Classes of one relation, numbered in node order: the root of a class is
 * its smallest node (uf_join), so it is met, and numbered, first.
 */
static enum fs_rc number_classes(struct probe_solver *s, int r, struct fs_err *err)
{
	int n = 0;

	for (int x = 0; x < s->nodes; x++) {
		int root;

		s->cls[r][x] = -1;
		if (!s->used[r][x])
			continue;
		root = uf_find(&s->rel[r], x);
		s->cls[r][x] = root == x ? n++ : s->cls[r][root];
	}
	s->ncls[r] = n;
	if (n > LM_MAX_DIM)
		return fs_fail(err, FS_EINPUT,
			       "no lane map explains the dump: %d %s, more than %d",
			       n, rel_names[r], LM_MAX_DIM);
	return FS_OK;
}

/* Node numbers of a B and a C slot (A slots are their own number). */
static int node_b(const struct probe_solver *s, int sb)
{
	return s->sa + sb;
}

static int node_c(const struct probe_solver *s, int sc)
{
	return s->sa + s->sb + sc;
}

static void join(struct probe_solver *s, int r, int x, int y)
{
	s->used[r][x] = s->used[r][y] = 1;
	uf_join(&s->rel[r], x, y);
}

static enum fs_rc build_classes(struct probe_solver *s, struct fs_err *err)
{
	enum fs_rc rc = FS_OK;

	for (int i = 0; i < s->nt; i++) {
		const struct probe_term *t = &s->t[i];

		join(s, REL_ROW, t->a, node_c(s, t->c));
		join(s, REL_COL, node_b(s, t->b), node_c(s, t->c));
		join(s, REL_K, t->a, node_b(s, t->b));
	}
	for (int r = 0; r < 3 && !rc; r++)
		rc = number_classes(s, r, err);
	return rc;
}

/* A matrix product sums, in every C slot, one product per k. */
static enum fs_rc check_products(struct probe_solver *s, struct fs_err *err)
{
	int seen[LM_MAX_DIM];	/* k class -> index of the term that used it */
	int nk = s->ncls[REL_K];
	char where[64], w1[64], w2[64];

	for (int sc = 0; sc < s->sc; sc++) {
		int n = s->first[sc + 1] - s->first[sc];

		probe_slot_name(s, LM_C, sc, where, sizeof(where));
		if (n == 0)
			return fs_fail(err, FS_EINPUT,
				       "no lane map explains the dump: %s is never written "
				       "(no one-hot A slot reaches it)", where);
		for (int k = 0; k < nk; k++)
			seen[k] = -1;
		for (int i = s->first[sc]; i < s->first[sc + 1]; i++) {
			int k = s->cls[REL_K][s->t[i].a];

			if (seen[k] >= 0) {
				probe_slot_name(s, LM_A, s->t[seen[k]].a, w1, sizeof(w1));
				probe_slot_name(s, LM_A, s->t[i].a, w2, sizeof(w2));
				return fs_fail(err, FS_EINPUT,
					       "no lane map explains the dump: %s sums %s and %s, "
					       "which share a k index", where, w1, w2);
			}
			seen[k] = i;
		}
		if (n != nk)
			return fs_fail(err, FS_EINPUT,
				       "no lane map explains the dump: %s sums %d products, "
				       "the others make K = %d", where, n, nk);
	}
	return FS_OK;
}

int probe_wave_mismatch(const struct probe_solver *s, int w, int32_t *got,
			int64_t *want)
{
	enum lm_dtype ta = s->as_signed & 1 ? LM_I8 : s->plan->op[LM_A].type;
	enum lm_dtype tb = s->as_signed & 2 ? LM_I8 : s->plan->op[LM_B].type;
	const uint8_t *wa = &s->a[(size_t)w * (size_t)s->sa];
	const uint8_t *wb = &s->b[(size_t)w * (size_t)s->sb];
	const int32_t *wc = &s->c[(size_t)w * (size_t)s->sc];

	for (int sc = 0; sc < s->sc; sc++) {
		int64_t sum = 0;

		for (int j = s->first[sc]; j < s->first[sc + 1]; j++)
			sum += (int64_t)probe_load8(ta, wa[s->t[j].a]) *
				probe_load8(tb, wb[s->t[j].b]);
		if (sum != wc[sc]) {
			*got = wc[sc];
			*want = sum;
			return sc;
		}
	}
	return -1;
}

/* The check waves, predicted from the products found, must match exactly. */
static enum fs_rc check_waves(struct probe_solver *s, struct fs_err *err)
{
	char where[64];

	for (int i = 0; i < PROBE_CHECKS; i++) {
		int w = PROBE_DIGITS * s->sa + i, sc;
		int32_t got;
		int64_t want;

		if ((sc = probe_wave_mismatch(s, w, &got, &want)) < 0)
			continue;
		probe_slot_name(s, LM_C, sc, where, sizeof(where));
		return fs_fail(err, FS_EINPUT,
			       "no lane map explains the dump: check wave %d (%s), %s "
			       "holds %d, the products found predict %lld", w,
			       probe_check_name(i), where, got, (long long)want);
	}
	return FS_OK;
}

/* The plan's prediction of every wave from the products found. */
static enum fs_rc check_answers(struct probe_solver *s, int is_short, struct fs_err *err)
{
	return is_short ? probe_short_predict(s, err) : check_waves(s, err);
}

/*
 * The answers failed their prediction (rc): is it the signedness? The
 * one-hot waves hold bytes below 128, read alike signed or unsigned, so
 * the products are found either way; the check waves hold bytes of 128
 * and more. A device that reads the plan's unsigned (u8) A or B as
 * signed (RDNA3's iu8 with its NEG bits ignored, as tinygrad's emulator
 * does) fails them, and under that reading holds them all. Try each u8
 * operand read as i8, then both: the first reading under which every
 * wave holds is the device's (s->as_signed), and FS_OK; else rc, err
 * as the first failure left it.
 */
static enum fs_rc check_signedness(struct probe_solver *s, int is_short, enum fs_rc rc,
				   struct fs_err *err)
{
	int u = (s->plan->op[LM_A].type == LM_U8) | (s->plan->op[LM_B].type == LM_U8) << 1;

	if (rc != FS_EINPUT || !u)
		return rc;
	for (int m = 1; m <= 3; m++) {
		struct fs_err quiet = { 0 };

		if ((m & u) != m)
			continue;
		s->as_signed = m;
		if (check_answers(s, is_short, &quiet) == FS_OK) {
			if (err)
				memset(err, 0, sizeof(*err));
			return FS_OK;
		}
	}
	s->as_signed = 0;
	return rc;
}

/* The anchor's label of node x in relation r. */
static int anchor_label(const struct probe_solver *s, int r, int x)
{
	const struct lanemap *m = s->anchor;

	if (x < s->sa)
		return r == REL_ROW ? m->op[LM_A].row[x] : m->op[LM_A].col[x];
	if (x < s->sa + s->sb) {
		x -= s->sa;
		return r == REL_COL ? m->op[LM_B].col[x] : m->op[LM_B].row[x];
	}
	x -= s->sa + s->sb;
	return r == REL_ROW ? m->op[LM_C].row[x] : m->op[LM_C].col[x];
}

/*
 * Name the classes of relation r: the (class, label) pair with the most
 * votes first, ties to the smaller class then label; classes left without
 * votes take the smallest free labels in class order. Labels stay below
 * the class count, so the found map's dimensions are the class counts.
 */
static enum fs_rc assign_labels(struct probe_solver *s, int r, struct probe_result *res)
{
	int n = s->ncls[r];
	int *votes = calloc((size_t)n * (size_t)n, sizeof(int));
	uint8_t cls_done[LM_MAX_DIM] = { 0 }, lab_done[LM_MAX_DIM] = { 0 };
	int next = 0;

	if (!votes)
		return FS_ENOMEM;
	for (int x = 0; x < s->nodes; x++) {
		int c = s->cls[r][x], l;

		if (c < 0)
			continue;
		l = anchor_label(s, r, x);
		if (l >= 0 && l < n)
			votes[c * n + l]++;
	}
	for (;;) {
		int best = 0, bc = -1, bl = -1;

		for (int c = 0; c < n; c++) {
			if (cls_done[c])
				continue;
			for (int l = 0; l < n; l++)
				if (!lab_done[l] && votes[c * n + l] > best)
					best = votes[c * n + l], bc = c, bl = l;
		}
		if (bc < 0)
			break;
		s->label[r][bc] = bl;
		cls_done[bc] = lab_done[bl] = 1;
		res->labels_anchored[r]++;
	}
	for (int c = 0; c < n; c++) {
		if (cls_done[c])
			continue;
		while (lab_done[next])
			next++;
		s->label[r][c] = next;
		lab_done[next] = 1;
	}
	free(votes);
	return FS_OK;
}

static enum fs_rc explain_invalid(const struct lanemap *lm, const struct lm_report *rep,
				  struct fs_err *err)
{
	const struct lm_problem *p = &rep->p[0];
	const char *op = lm_operand_name(p->op);

	if (p->kind == LM_OUT_OF_RANGE)
		return fs_fail(err, FS_EINPUT,
			       "no lane map explains the dump: %s lane %d e %d (never read) "
			       "keeps the anchor's %s[%d][%d], outside the %dx%d found",
			       op, p->lane, p->e, op, p->row, p->col,
			       lm->op[p->op].rows, lm->op[p->op].cols);
	if (p->kind == LM_UNOWNED)
		return fs_fail(err, FS_EINPUT,
			       "no lane map explains the dump: no slot holds %s[%d][%d]",
			       op, p->row, p->col);
	return fs_fail(err, FS_EINPUT,
		       "no lane map explains the dump: %s[%d][%d] is held %d times "
		       "(first by lane %d e %d), other entries %d times",
		       op, p->row, p->col, p->count, p->lane, p->e,
		       lm->op[p->op].replicas);
}

/* Labels of A/B slot x: read slots from their classes, unread ones kept. */
static void label_slot(const struct probe_solver *s, enum lm_operand op, int slot,
		       int *row, int *col)
{
	const struct lanemap_operand *ao = &s->anchor->op[op];
	int x = op == LM_A ? slot : op == LM_B ? node_b(s, slot) : node_c(s, slot);
	int rrow = op == LM_B ? REL_K : REL_ROW, rcol = op == LM_A ? REL_K : REL_COL;
	int cr = s->cls[rrow][x], cc = s->cls[rcol][x];

	if (cr < 0 || cc < 0) {
		*row = ao->row[slot];
		*col = ao->col[slot];
		return;
	}
	*row = s->label[rrow][cr];
	*col = s->label[rcol][cc];
}

static enum fs_rc build_map(struct probe_solver *s, struct probe_result *res,
			    struct fs_err *err)
{
	const struct lanemap *p = s->plan;
	struct lanemap *lm = lanemap_new();
	struct lm_report *rep = malloc(sizeof(*rep));
	enum fs_rc rc = FS_OK;

	if (!lm || !rep) {
		lanemap_free(lm);
		free(rep);
		return FS_ENOMEM;
	}
	snprintf(lm->name, sizeof(lm->name), "%.50s-probed", s->anchor->name);
	snprintf(lm->instr, sizeof(lm->instr), "%s", p->instr);
	snprintf(lm->desc, sizeof(lm->desc), "%.200s as found by fragsim probe",
		 p->instr);
	snprintf(lm->source, sizeof(lm->source),
		 "fragsim probe solve: a device's answers to a plan for %.60s; "
		 "labels anchored to %.60s", p->name, s->anchor->name);
	lm->wave = p->wave;
	lm->m = s->ncls[REL_ROW];
	lm->n = s->ncls[REL_COL];
	lm->k = s->ncls[REL_K];
	for (int op = 0; op < LM_NOPERANDS && !rc; op++) {
		const struct lanemap_operand *po = &p->op[op];
		int slots = p->wave * po->elems, entries, replicas;
		/* what the device read: i8 for a u8 it took as signed */
		enum lm_dtype type = op < 2 && s->as_signed >> op & 1 ? LM_I8 : po->type;

		rc = lanemap_set_operand(lm, (enum lm_operand)op, type, po->elems, 1, err);
		if (rc)
			break;
		entries = lm->op[op].rows * lm->op[op].cols;
		replicas = slots / entries;
		if (replicas * entries != slots || replicas > LM_MAX_REPLICAS) {
			rc = fs_fail(err, FS_EINPUT,
				     "no lane map explains the dump: %d %s slots cannot hold "
				     "a %dx%d matrix a whole number of times", slots,
				     lm_operand_name((enum lm_operand)op), lm->op[op].rows,
				     lm->op[op].cols);
			break;
		}
		rc = lanemap_set_operand(lm, (enum lm_operand)op, type, po->elems, replicas,
					 err);
		for (int x = 0; x < slots && !rc; x++)
			label_slot(s, (enum lm_operand)op, x, &lm->op[op].row[x],
				   &lm->op[op].col[x]);
	}
	if (!rc) {
		rc = lanemap_validate(lm, rep);
		if (rc == FS_MISMATCH)
			rc = explain_invalid(lm, rep, err);
	}
	free(rep);
	if (rc) {
		lanemap_free(lm);
		return rc;
	}
	res->found = lm;
	return FS_OK;
}

static void solver_free(struct probe_solver *s)
{
	free(s->t);
	free(s->first);
	for (int r = 0; r < 3; r++) {
		free(s->rel[r].up);
		free(s->used[r]);
		free(s->cls[r]);
		free(s->label[r]);
	}
}

static enum fs_rc solver_init(struct probe_solver *s)
{
	s->first = calloc((size_t)s->sc + 1, sizeof(int));
	if (!s->first)
		return FS_ENOMEM;
	for (int r = 0; r < 3; r++) {
		s->rel[r].up = malloc((size_t)s->nodes * sizeof(int));
		s->used[r] = calloc((size_t)s->nodes, 1);
		s->cls[r] = malloc((size_t)s->nodes * sizeof(int));
		s->label[r] = malloc((size_t)s->nodes * sizeof(int));
		if (!s->rel[r].up || !s->used[r] || !s->cls[r] || !s->label[r])
			return FS_ENOMEM;
		for (int x = 0; x < s->nodes; x++)
			s->rel[r].up[x] = x;
	}
	return FS_OK;
}

enum fs_rc probe_solve(const struct lanemap *plan, const struct probe_layout *pl,
		       const struct lanemap *anchor, const uint8_t *a,
		       const uint8_t *b, const int32_t *c,
		       struct probe_result *res, struct fs_err *err)
{
	struct probe_solver s = { .plan = plan, .anchor = anchor, .pl = pl, .a = a, .b = b,
			    .c = c };
	int is_short = pl->kind == PROBE_SHORT;
	enum fs_rc rc;

	memset(res, 0, sizeof(*res));
	if (!plan->valid || !anchor->valid)
		return fs_fail(err, FS_EINPUT, "%s: profile is not valid",
			       plan->valid ? anchor->name : plan->name);
	if (probe_same_geometry(plan, anchor, err))
		return FS_EINPUT;
	s.sa = slots_of(plan, LM_A);
	s.sb = slots_of(plan, LM_B);
	s.sc = slots_of(plan, LM_C);
	s.abits = gf2_log2(s.sa);
	s.bbits = gf2_log2(s.sb);
	s.nodes = s.sa + s.sb + s.sc;
	if (is_short && (s.abits < 0 || s.bbits < 0 || gf2_log2(s.sc) < 0))
		return fs_fail(err, FS_EINPUT, "%s: a short plan needs power-of-two slot counts",
			       plan->name);
	rc = solver_init(&s);
	if (!rc)
		rc = is_short ? probe_short_terms(&s, &res->span_dim, err)
			      : collect_terms(&s, err);
	if (!rc && is_short)
		rc = check_signedness(&s, 1, probe_short_predict(&s, err), err);
	if (!rc)
		rc = build_classes(&s, err);
	if (!rc)
		rc = check_products(&s, err);
	if (!rc && !is_short)
		rc = check_signedness(&s, 0, check_waves(&s, err), err);
	for (int r = 0; r < 3 && !rc; r++)
		rc = assign_labels(&s, r, res);
	if (!rc)
		rc = build_map(&s, res, err);
	if (!rc) {
		res->terms = s.nt;
		res->read_signed = s.as_signed;
		res->slots[LM_A] = s.sa;
		res->slots[LM_B] = s.sb;
		res->slots[LM_C] = s.sc;
		for (int x = 0; x < s.sa; x++) {
			res->read[LM_A][x] = s.used[REL_ROW][x];
			res->unread[LM_A] += !s.used[REL_ROW][x];
		}
		for (int x = 0; x < s.sb; x++) {
			res->read[LM_B][x] = s.used[REL_COL][node_b(&s, x)];
			res->unread[LM_B] += !s.used[REL_COL][node_b(&s, x)];
		}
	}
	if (rc == FS_ENOMEM)
		fs_nomem(err, "the probe solver's tables", 0);
	else if (rc == FS_EINPUT && is_short)
		probe_short_suggest(err);
	solver_free(&s);
	return rc;
}
