/*
 * probe_short.c - the products of a short probe plan, read from linearity
 * (the plan's layout is in probe.h; the rest of solve is probe.c's).
 *
 * Each pair wave holds, in C slot sc, b1 + 101 * b2: the B values (1..100,
 * 0 when not fed) that its two lit A slots meet there. The two waves of a
 * pair give both base-100 digits, so each (A slot, B slot, C slot) that
 * the device computed is read back. Packed as one bit vector,
 *
 *   v = A slot | B slot << ab | C slot << (ab + bb)
 *
 * (ab, bb: bits of an A and a B slot number), the products of a linear
 * device are a subspace shifted by one of them. The products of A slot 0
 * and the power-of-two A slots, taken relative to the first product of
 * slot 0, span it; listing origin ^ span gives every product.
 *
 * Example, gfx936: slot 0 feeds C row 0, 16 products; with the 9
 * power-of-two slots the span has dimension 13, 8192 products = 16 x 16
 * x 32. Then every wave of the plan is predicted from them and compared
 * exactly: the mixes (slots whose products only linearity predicts) and
 * the check waves are where a device that is not linear shows.
 *
 * Invariant: a C slot sums at most LM_MAX_DIM products, so a span larger
 * than sc * LM_MAX_DIM is refused before it is listed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gf2.h"
#include "probe_int.h"

/* PROBE_HI and PROBE_BASE in messages */
#define PROBE_TEXT_(x) #x
#define PROBE_TEXT(x) PROBE_TEXT_(x)
#define PROBE_HI_TEXT PROBE_TEXT(PROBE_HI)
#define PROBE_BASE_TEXT PROBE_TEXT(PROBE_BASE)

/* A product the pair waves show: probe j's A slot feeds C slot c with B slot b. */
struct seen {
	int probe, b, c;
};

/* A product as one bit vector: A slot | B slot << ab | C slot << ab + bb. */
static uint64_t pack(const struct probe_solver *s, int a, int b, int c)
{
	return (uint64_t)a | (uint64_t)b << s->abits |
	       (uint64_t)c << (s->abits + s->bbits);
}

static struct probe_term unpack(const struct probe_solver *s, uint64_t v)
{
	return (struct probe_term){
		.a = (int)(v & ((1u << s->abits) - 1)),
		.b = (int)(v >> s->abits & ((1u << s->bbits) - 1)),
		.c = (int)(v >> (s->abits + s->bbits)),
	};
}

/* What wave w of a short plan lights, for messages. */
static void wave_name(const struct probe_solver *s, int w, char *out, size_t len)
{
	const struct probe_layout *pl = s->pl;
	int m = w / PROBE_DIGITS;
	char x0[64], x1[64] = "";

	if (w >= pl->onehot) {
		snprintf(out, len, "check wave %d (%s)", w, probe_check_name(w - pl->onehot));
		return;
	}
	probe_slot_name(s, LM_A, pl->slot[2 * m], x0, sizeof(x0));
	if (2 * m + 1 < pl->probes)
		probe_slot_name(s, LM_A, pl->slot[2 * m + 1], x1, sizeof(x1));
	snprintf(out, len, "wave %d (%s = 1%s%s%s, B digit %d)", w, x0, x1[0] ? ", " : "",
		 x1, x1[0] ? " = " PROBE_HI_TEXT : "", w % PROBE_DIGITS);
}

/*
 * The pair waves: each C value is b1 + PROBE_HI * b2, b1 and b2 the B
 * values (1..PROBE_BASE, 0 when not fed) the wave's two probes meet there.
 * The digits of both waves of a pair name the B slot.
 */
static enum fs_rc short_read(const struct probe_solver *s, struct seen *out, int *n,
			     struct fs_err *err)
{
	const struct probe_layout *pl = s->pl;
	char where[64], wave[160];

	*n = 0;
	for (int m = 0; 2 * m < pl->probes; m++) {
		int two = 2 * m + 1 < pl->probes;
		int32_t top = two ? PROBE_BASE + PROBE_HI * PROBE_BASE : PROBE_BASE;
		const int32_t *c[PROBE_DIGITS];

		for (int d = 0; d < PROBE_DIGITS; d++)
			c[d] = &s->c[(size_t)(PROBE_DIGITS * m + d) * (size_t)s->sc];
		for (int sc = 0; sc < s->sc; sc++) {
			for (int d = 0; d < PROBE_DIGITS; d++) {
				if (c[d][sc] >= 0 && c[d][sc] <= top)
					continue;
				probe_slot_name(s, LM_C, sc, where, sizeof(where));
				wave_name(s, PROBE_DIGITS * m + d, wave, sizeof(wave));
				return fs_fail(err, FS_EINPUT,
					       "no linear lane map explains the dump: %s, %s holds %d, "
					       "not %s", wave, where, c[d][sc],
					       two ? "b1 + " PROBE_HI_TEXT " * b2 with B values b1, b2 "
						     "in 0.." PROBE_BASE_TEXT
						   : "0 and not one B value 1.." PROBE_BASE_TEXT);
			}
			for (int h = 0; h <= two; h++) {
				int dg[PROBE_DIGITS], lit = 0, sb = 0, unit = 1;

				for (int d = 0; d < PROBE_DIGITS; d++) {
					dg[d] = h ? c[d][sc] / PROBE_HI : c[d][sc] % PROBE_HI;
					lit += dg[d] != 0;
					sb += (dg[d] - 1) * unit;
					unit *= PROBE_BASE;
				}
				if (!lit)
					continue;
				probe_slot_name(s, LM_C, sc, where, sizeof(where));
				probe_slot_name(s, LM_A, pl->slot[2 * m + h], wave, sizeof(wave));
				if (lit < PROBE_DIGITS)
					return fs_fail(err, FS_EINPUT,
						       "no linear lane map explains the dump: waves %d "
						       "and %d, %s reads B digits %d and %d for %s: "
						       "a product has both", PROBE_DIGITS * m,
						       PROBE_DIGITS * m + 1, where, dg[0], dg[1], wave);
				if (sb >= s->sb)
					return fs_fail(err, FS_EINPUT,
						       "no linear lane map explains the dump: waves %d "
						       "and %d, %s names B slot %d of %d for %s",
						       PROBE_DIGITS * m, PROBE_DIGITS * m + 1, where,
						       sb, s->sb, wave);
				out[(*n)++] = (struct seen){ 2 * m + h, sb, sc };
			}
		}
	}
	return FS_OK;
}

/*
 * The span of the basis probes' products, relative to the first product
 * of A slot 0. A matrix product sums at most LM_MAX_DIM products in each
 * C slot: a span larger than that is refused before it is listed.
 */
static enum fs_rc short_span(struct probe_solver *s, const struct seen *v, int n,
			     struct gf2_span *span, uint64_t *origin,
			     struct fs_err *err)
{
	int i0 = 0, max_dim = gf2_log2(s->sc) + 8;

	_Static_assert(LM_MAX_DIM == 1 << 8, "max_dim: sc * LM_MAX_DIM products");
	while (i0 < n && v[i0].probe != 0)
		i0++;
	if (i0 == n)
		return fs_fail(err, FS_EINPUT,
			       "no linear lane map explains the dump: A lane 0 e 0 feeds "
			       "no C slot (waves 0 and 1), and the short plan measures "
			       "every product from it");
	*origin = pack(s, s->pl->slot[0], v[i0].b, v[i0].c);
	gf2_span_init(span);
	for (int i = 0; i < n; i++) {
		if (v[i].probe >= s->pl->basis)
			continue;
		gf2_span_add(span, pack(s, s->pl->slot[v[i].probe], v[i].b, v[i].c) ^ *origin);
		if (span->dim > max_dim)
			return fs_fail(err, FS_EINPUT,
				       "no linear lane map explains the dump: the products of "
				       "A slot 0 and the power-of-two A slots span more than "
				       "2^%d, more than %d C slots can sum", max_dim, s->sc);
	}
	return FS_OK;
}

/*
 * The n = 2^dim products, origin ^ (an element of the span), one each, in
 * Gray-code order: element i differs from element i - 1 by the pivot of
 * i's lowest set bit.
 */
static struct probe_term nth_term(const struct probe_solver *s, const uint64_t *piv, int i,
			    uint64_t *v)
{
	if (i > 0)
		*v ^= piv[__builtin_ctz((unsigned)i)];
	return unpack(s, *v);
}

/* The products: the span shifted back to the origin, grouped by C slot. */
enum fs_rc probe_short_terms(struct probe_solver *s, int *span_dim, struct fs_err *err)
{
	struct seen *v = malloc((size_t)s->pl->probes * (size_t)s->sc * sizeof(*v));
	int per_c[LM_MAX_SLOTS] = { 0 }, n = 0, dim = 0;
	uint64_t piv[GF2_SPAN_BITS], origin = 0, at;
	struct gf2_span span;
	char where[64];
	enum fs_rc rc;

	if (!v)
		return FS_ENOMEM;
	rc = short_read(s, v, &n, err);
	if (!rc)
		rc = short_span(s, v, n, &span, &origin, err);
	free(v);
	if (rc)
		return rc;
	for (int b = 0; b < GF2_SPAN_BITS; b++)
		if (span.pivot[b])
			piv[dim++] = span.pivot[b];
	s->nt = 1 << dim;
	s->t = malloc((size_t)s->nt * sizeof(*s->t));
	if (!s->t)
		return FS_ENOMEM;
	at = origin;
	for (int i = 0; i < s->nt; i++) {
		struct probe_term t = nth_term(s, piv, i, &at);

		if (++per_c[t.c] > LM_MAX_DIM) {
			probe_slot_name(s, LM_C, t.c, where, sizeof(where));
			return fs_fail(err, FS_EINPUT,
				       "no linear lane map explains the dump: the span of the "
				       "products found has %s sum more than %d", where,
				       LM_MAX_DIM);
		}
	}
	for (int sc = 0, sum = 0; sc <= s->sc; sc++) {
		s->first[sc] = sum;
		sum += sc < s->sc ? per_c[sc] : 0;
	}
	/* fill by C slot, with per_c as the cursor */
	for (int sc = 0; sc < s->sc; sc++)
		per_c[sc] = s->first[sc];
	at = origin;
	for (int i = 0; i < s->nt; i++) {
		struct probe_term t = nth_term(s, piv, i, &at);

		s->t[per_c[t.c]++] = t;
	}
	*span_dim = dim;
	return FS_OK;
}

/* Every wave of the plan, predicted from the products, must be what came back. */
enum fs_rc probe_short_predict(const struct probe_solver *s, struct fs_err *err)
{
	char where[64], wave[160];

	for (int w = 0; w < s->pl->waves; w++) {
		int32_t got;
		int64_t want;
		int sc = probe_wave_mismatch(s, w, &got, &want);

		if (sc < 0)
			continue;
		probe_slot_name(s, LM_C, sc, where, sizeof(where));
		wave_name(s, w, wave, sizeof(wave));
		return fs_fail(err, FS_EINPUT,
			       "no linear lane map explains the dump: %s, %s holds %d, "
			       "the span of the products found predicts %lld", wave,
			       where, got, (long long)want);
	}
	return FS_OK;
}

/* A short plan cannot tell a device that is not linear from a bad dump. */
void probe_short_suggest(struct fs_err *err)
{
	size_t n;

	if (!err)
		return;
	n = strlen(err->msg);
	snprintf(err->msg + n, sizeof(err->msg) - n,
		 "; a short plan reads linear devices only: plan again with --exhaustive");
}
