/*
 * test_softmax_bugs.c - the softmax and mask bug classes (issue 22:
 * pv_mask, mask_value, window_edge, the q_position values beside chunk,
 * soft_cap_apply, alibi_bias, exp_base, split_merge)
 * against a model of each buggy kernel written here, in plain loops over
 * the case's paged inputs, in double, sharing no code with sim/:
 *
 *   key j is visible to a query at p (history h, chunk of T tokens) iff
 *     j < context, j <= p (+1: off_by_one), j >= h (chunk_keys only),
 *     and, with a window W, j > p - W (- 1: inclusive, + 1: exclusive);
 *     p = h + t, or context - 1 (future), or 16 (ceil(ctx/16) -
 *     ceil(T/16)) + t (tile_rounded);
 *   a tile of 16 keys runs when some row of its row tile (decode: the
 *     row's own; prefill: the 16 query rows t / 16) sees one of its keys;
 *   in a tile that runs, a masked key's score is -inf (finite: -65504;
 *     additive: its score + -inf, NaN where its K scale is a poisoned
 *     slot's NaN), and a visible key's is q . k * sQ * sK * softmax_scale;
 *   a visible score is soft-capped, cap tanh(s / cap), then given the
 *     ALiBi bias slope (j - p), the slopes from the paper's rule (each
 *     with its bug: no cap, float exps for tanh, a masked key at -cap;
 *     no bias, -bias, bias ln 2, slope (j - p + 1));
 *   per split-K segment, p_j = e^(s_j - max) (exp_base: 2^), 0 for -inf;
 *     the segment's (m, l, o) with o = sum p_j v_j over the keys that
 *     are not masked (pv_mask none: every key of a tile that runs, so
 *     0 * NaN where the slot is poisoned); out = sum o_i e^(m_i - M) /
 *     sum l_i e^(m_i - M) over the segments that saw a key (empty_nan:
 *     all of them; stale_lse: an empty one read as the one before it;
 *     no_rescale: out = sum o_i / sum l_i, without the e^(m_i - M)).
 *
 * Each class is checked two ways: the emulation with it planted agrees
 * with the model (NaN where the model has NaN, within 1e-3 elsewhere),
 * and `fragsim diff`'s diagnosis of a dump the model wrote (scores and
 * out) names exactly that class and no other.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../lib/diffcase.h"
#include "../lib/runcase.h"
#include "testutil.h"

#define NK 16		/* gfx936: keys per tile and query rows per row tile */
#define TOL 1e-3

/* What the model's kernel does (kernel.h's enums, read here by hand). */
struct bug {
	int pv_all, mask, edge, qpos;
	int cap, alibi, exp2, merge;	/* soft_cap_apply, alibi_bias, exp_base, split_merge */
	int no_rescale;			/* split_merge no_rescale: weights e^(m_i - M) left out */
};

static void load_text(struct runcase *r, const char *text)
{
	char *path = tu_write_temp(".yaml", text);
	struct fs_err err;

	if (runcase_load(path, r, &err) != FS_OK || runcase_inputs(r, &err) != FS_OK)
		fail_msg("%s", err.msg);
	unlink(path);
	free(path);
}

/* Physical block of key j of sequence s; -1 past the table. */
static int m_block(const struct runcase *r, int s, int j)
{
	int b = j / r->in.BS, p;

	if (b >= r->in.MAXB)
		return -1;
	p = r->in.block_table[s * r->in.MAXB + b];
	return p >= 0 && p < r->in.NB ? p : -1;
}

static double m_kscale(const struct runcase *r, int s, int j, int g)
{
	int blk = m_block(r, s, j);

	if (r->c.k_scale == KSCALE_PER_TENSOR)
		return r->in.k_scale[0];
	if (blk < 0)
		return NAN;
	return r->in.k_scale[((size_t)blk * r->in.BS + j % r->in.BS) * r->in.Hkv + g];
}

/* q . k * sQ * sK * scale; a key past the sequence's blocks loads 0. */
static double m_score(const struct runcase *r, int s, int t, int qh, int j)
{
	const struct fs_inputs *in = &r->in;
	int g = qh / (in->Hq / in->Hkv), blk = m_block(r, s, j), D = in->D;
	int nblk = (r->c.seqs[s].context + in->BS - 1) / in->BS;
	size_t qi = ((size_t)s * in->T + t) * in->Hq + qh;
	double acc = 0.0;

	for (int d = 0; d < D; d++) {
		int kb = 0;

		if (j / in->BS < nblk)
			kb = blk < 0 ? -128 :
			     in->k_cache[((((size_t)blk * in->Hkv + g) * (D / 16) + d / 16) * in->BS +
					  j % in->BS) * 16 + d % 16];
		acc += (double)in->q_int8[qi * D + d] * kb;
	}
	return acc * in->q_scale[qi] * m_kscale(r, s, j, g) * r->c.softmax_scale;
}

static double m_v(const struct runcase *r, int s, int j, int g, int d)
{
	const struct fs_inputs *in = &r->in;
	int blk = m_block(r, s, j);

	if (blk < 0)
		return NAN;
	return in->v_cache_i8[(((size_t)blk * in->Hkv + g) * in->D + d) * in->BS + j % in->BS] *
	       (double)in->v_scale[((size_t)blk * in->BS + j % in->BS) * in->Hkv + g];
}

/* The query position the kernel takes for token t. */
static int m_qpos(const struct runcase *r, const struct bug *b, int s, int t)
{
	const struct case_seq *q = &r->c.seqs[s];

	if (b->qpos == KQPOS_FUTURE)
		return q->context - 1;
	if (b->qpos == KQPOS_TILE_ROUNDED)
		return NK * ((q->context + NK - 1) / NK - (q->tokens + NK - 1) / NK) + t;
	return q->context - q->tokens + t;
}

/* Visible to token t, keys below end (its segment's end). */
static int m_visible(const struct runcase *r, const struct bug *b, int s, int t, int j, int end)
{
	const struct case_seq *q = &r->c.seqs[s];
	int h = q->context - q->tokens, p = m_qpos(r, b, s, t), W = r->c.sliding_window;

	if (j >= end || j > p + (b->qpos == KQPOS_OFF_BY_ONE))
		return 0;
	if (b->qpos == KQPOS_CHUNK_KEYS && j < h)
		return 0;
	return !(W > 0 && j <= p - W - b->edge);
}

static int m_tile_runs(const struct runcase *r, const struct bug *b, int s, int t, int kb,
		       int end)
{
	int t0 = r->c.mode == MODE_DECODE ? t : t / NK * NK;
	int t1 = r->c.mode == MODE_DECODE ? t + 1 : t0 + NK;

	for (int u = t0; u < t1 && u < r->c.seqs[s].tokens; u++)
		for (int j = kb; j < kb + NK; j++)
			if (m_visible(r, b, s, u, j, end))
				return 1;
	return 0;
}

/* The ALiBi slope of head h of H, from the paper's rule (by hand). */
static double m_slope(int h, int H)
{
	int n = 1;

	while (n * 2 <= H)
		n *= 2;
	return h < n ? pow(2.0, -8.0 * (h + 1) / n) : pow(2.0, -4.0 * (2 * (h - n) + 1) / n);
}

/* Soft cap and ALiBi of a visible key's score, as the buggy kernel. */
static double m_logit(const struct runcase *r, const struct bug *b, double x, int qh, int dist)
{
	double cap = r->c.soft_cap, bias;

	if (cap > 0 && b->cap == KCAP_EXP_TANH) {
		float y = (float)(x / cap), e1 = expf(y), e2 = expf(-y);	/* inf past 88.7 */

		x = cap * (double)((e1 - e2) / (e1 + e2));
	} else if (cap > 0 && b->cap != KCAP_DROPPED) {
		x = cap * tanh(x / cap);
	}
	if (!r->c.alibi)
		return x;
	bias = m_slope(qh, r->c.q_heads) * dist;
	switch (b->alibi) {
	case KALIBI_IGNORED: return x;
	case KALIBI_SIGN_FLIPPED: return x - bias;
	case KALIBI_NO_LOG2E: return x + bias * log(2.0);
	case KALIBI_OFFSET: return x + m_slope(qh, r->c.q_heads) * (dist + 1);
	}
	return x + bias;
}

static double m_exp(const struct bug *b, double x)
{
	return b->exp2 ? exp2(x) : exp(x);
}

/*
 * The model's scores [S][T][Hq][MAXCTX] and out [S][T][Hq][D], float.
 * Per split-K segment (segments of split_k.segment keys, a multiple of
 * 16 here) the softmax state (m, l, o); then the merge.
 */
static void model(const struct runcase *r, const struct bug *b, float *scores, float *out)
{
	const struct fs_inputs *in = &r->in;
	int MX = in->MAXCTX, D = in->D, G = in->Hq / in->Hkv;
	double *w = malloc((size_t)(MX + NK) * sizeof(double));
	char *ran = malloc((size_t)(MX + NK));
	double *sm = malloc(64 * sizeof(double)), *sl = malloc(64 * sizeof(double));
	double *so = malloc((size_t)64 * D * sizeof(double));

	for (size_t i = 0; i < (size_t)in->S * in->T * in->Hq * MX; i++)
		scores[i] = -INFINITY;
	memset(out, 0, (size_t)in->S * in->T * in->Hq * D * sizeof(float));
	for (int s = 0; s < in->S; s++)
		for (int t = 0; t < r->c.seqs[s].tokens; t++)
			for (int qh = 0; qh < in->Hq; qh++) {
				size_t row = ((size_t)s * in->T + t) * in->Hq + qh;
				int ctx = r->c.seqs[s].context, seg = r->c.segment > 0 ? r->c.segment : ctx;
				int nseg = (ctx + seg - 1) / seg;
				double mx = -INFINITY, l = 0.0;

				assert_true(nseg <= 64);
				for (int g = 0; g < nseg; g++) {
					int lo = g * seg, hi = lo + seg < ctx ? lo + seg : ctx;
					int end = lo + (hi - lo + NK - 1) / NK * NK;
					double m = -INFINITY, ls = 0.0;

					for (int j = lo; j < end; j++) {
						ran[j] = m_tile_runs(r, b, s, t, lo + (j - lo) / NK * NK, hi);
						if (!ran[j])
							continue;
						if (m_visible(r, b, s, t, j, hi))
							w[j] = m_logit(r, b, m_score(r, s, t, qh, j), qh,
								       j - m_qpos(r, b, s, t));
						else if (b->cap == KCAP_AFTER_MASK && r->c.soft_cap > 0)
							w[j] = -r->c.soft_cap;
						else if (b->mask == KMASK_FINITE)
							w[j] = -65504.0;
						else if (b->mask == KMASK_ADDITIVE)
							w[j] = m_logit(r, b, m_score(r, s, t, qh, j), qh,
								       j - m_qpos(r, b, s, t)) + -INFINITY;
						else
							w[j] = -INFINITY;
						if (j < MX)
							scores[row * MX + j] = (float)w[j];
						if (w[j] > m)
							m = w[j];
					}
					sm[g] = m, sl[g] = 0.0;
					for (int d = 0; d < D; d++)
						so[(size_t)g * D + d] = 0.0;
					if (m == -INFINITY)
						continue;	/* the segment sees nothing */
					for (int j = lo; j < end; j++)
						if (ran[j])
							ls += w[j] == -INFINITY ? 0.0 : m_exp(b, w[j] - m);
					sl[g] = ls;
					for (int d = 0; d < D; d++) {
						double o = 0.0;

						for (int j = lo; j < end; j++) {
							int masked = w[j] == -INFINITY ||
								     (b->mask == KMASK_FINITE && w[j] == -65504.0);
							double p = w[j] == -INFINITY ? 0.0 : m_exp(b, w[j] - m);

							if (ran[j] && (!masked || b->pv_all))
								o += p * m_v(r, s, j, qh / G, d);
						}
						so[(size_t)g * D + d] = o;
					}
				}
				/* The merge: stale_lse reads an empty segment as the one
				 * before it (zeros before the first); empty_nan lets it in. */
				for (int g = 0; g < nseg; g++)
					if (b->merge == KMERGE_STALE_LSE && sm[g] == -INFINITY) {
						sm[g] = g ? sm[g - 1] : 0.0;
						sl[g] = g ? sl[g - 1] : 0.0;
						for (int d = 0; d < D; d++)
							so[(size_t)g * D + d] = g ? so[(size_t)(g - 1) * D + d] : 0.0;
					}
				for (int g = 0; g < nseg; g++)
					if (sm[g] > mx)
						mx = sm[g];
				for (int g = 0; g < nseg; g++)
					if (sm[g] != -INFINITY || b->merge == KMERGE_EMPTY_NAN)
						l += sl[g] == 0.0 && b->merge != KMERGE_EMPTY_NAN ? 0.0 :
						     sl[g] * (b->no_rescale ? 1.0 : m_exp(b, sm[g] - mx));
				for (int d = 0; d < D; d++) {
					double o = 0.0;

					for (int g = 0; g < nseg; g++) {
						if (sm[g] == -INFINITY && b->merge != KMERGE_EMPTY_NAN)
							continue;
						if (sl[g] == 0.0 && b->merge != KMERGE_EMPTY_NAN)
							continue;	/* stale zeros */
						o += so[(size_t)g * D + d] / sl[g] * sl[g] *
						     (b->no_rescale ? 1.0 : m_exp(b, sm[g] - mx));
					}
					out[row * D + d] = (float)(l == 0.0 ? 0.0 : o / l);
				}
			}
	free(w);
	free(ran);
	free(sm);
	free(sl);
	free(so);
}

/* a and b agree: NaN exactly where the model has NaN, else within TOL. */
static long agree(const float *sim, const float *mod, size_t n, const char *what)
{
	long nan = 0;

	for (size_t i = 0; i < n; i++) {
		if (isnan(mod[i]) || isnan(sim[i])) {
			if (!isnan(mod[i]) || !isnan(sim[i]))
				fail_msg("%s[%zu]: sim %g, model %g", what, i, sim[i], mod[i]);
			nan++;
		} else if (isinf(mod[i]) || isinf(sim[i])) {
			if (sim[i] != mod[i])
				fail_msg("%s[%zu]: sim %g, model %g", what, i, sim[i], mod[i]);
		} else if (fabs(sim[i] - mod[i]) > TOL) {
			fail_msg("%s[%zu]: sim %.9g, model %.9g", what, i, sim[i], mod[i]);
		}
	}
	return nan;
}

struct plant {
	enum kern_bug b;
	struct bug m;
	const char *yaml;	/* the case */
	int want_nan;		/* the model's out has NaN rows */
};

/*
 * One class: the emulation against the model, then the diagnosis of
 * the model's dump. The model must differ from the correct kernel's
 * model somewhere (scores or out), or the check would be vacuous.
 */
static void one_class(const struct plant *p)
{
	static const struct bug ok = { 0 };
	struct runcase r;
	struct fs_case c;
	struct fs_err err;
	struct attn_result sim;
	struct dump d;
	struct diff_opts o = { TOL, 0 };
	struct diff_diagnosis *dg = calloc(1, sizeof(*dg));
	size_t ns, no;
	float *ms, *mo, *cs, *co;
	long differ = 0, nan;
	char line[1024], want[256];

	load_text(&r, p->yaml);
	ns = (size_t)r.in.S * r.in.T * r.in.Hq * r.in.MAXCTX;
	no = (size_t)r.in.S * r.in.T * r.in.Hq * r.in.D;
	ms = malloc(ns * sizeof(float)), cs = malloc(ns * sizeof(float));
	mo = malloc(no * sizeof(float)), co = malloc(no * sizeof(float));
	model(&r, &p->m, ms, mo);
	model(&r, &ok, cs, co);
	for (size_t i = 0; i < ns; i++)
		differ += memcmp(&ms[i], &cs[i], sizeof(float)) != 0;
	for (size_t i = 0; i < no; i++)
		differ += !(fabsf(mo[i] - co[i]) <= TOL);
	if (!differ)
		fail_msg("%s: the model of the bug is the correct kernel's", kernel_bug(p->b)->bad);
	/* The correct kernel is the model's, too. */
	assert_int_equal(runcase_emulate(&r, &r.c, NULL, &r.sim, &err), FS_OK);
	r.have_sim = 1;
	agree(r.sim.scores, cs, ns, "correct scores");
	agree(r.sim.out, co, no, "correct out");
	c = r.c;
	assert_int_equal(kernel_plant(&c.kernel, p->b, c.head_dim), 0);
	assert_int_equal(runcase_emulate(&r, &c, NULL, &sim, &err), FS_OK);
	agree(sim.scores, ms, ns, "scores");
	nan = agree(sim.out, mo, no, "out");
	if (!nan != !p->want_nan)
		fail_msg("%s: %ld NaN outputs", kernel_bug(p->b)->bad, nan);
	attn_free(&sim);

	memset(&d, 0, sizeof(d));
	d.t[DUMP_SCORES] = (struct npy_array){ NPY_F32, 4,
		{ (size_t)r.in.S, (size_t)r.in.T, (size_t)r.in.Hq, (size_t)r.in.MAXCTX }, ns, ms };
	d.t[DUMP_OUT] = (struct npy_array){ NPY_F32, 4,
		{ (size_t)r.in.S, (size_t)r.in.T, (size_t)r.in.Hq, (size_t)r.in.D }, no, mo };
	assert_int_equal(diffcase_diagnose(&r, &d, &o, dg, &err), FS_OK);
	diffcase_verdict(dg, line, sizeof(line));
	snprintf(want, sizeof(want), "diagnosis: matches kernel assumption %s=%s exactly (",
		 kernel_bug(p->b)->key, kernel_bug(p->b)->bad);
	if (strncmp(line, want, strlen(want)) || strstr(line, "so do"))
		fail_msg("got '%s', want '%s...' alone", line, want);
	free(dg);
	free(ms), free(mo), free(cs), free(co);
	runcase_free(&r);
}

#define DECODE(extra, seqs) \
	"fragsim: 1\nname: sm\nmodel: {q_heads: 8, kv_heads: 2, head_dim: 64" extra "}\n" \
	seqs "data: {seed: 5}\n"
#define PREFILL(model_extra, cache, seqs) \
	"fragsim: 1\nname: sm\nmode: prefill\nmodel: {q_heads: 2, kv_heads: 1, head_dim: 64" \
	model_extra "}\ncache: {placement: shuffled" cache "}\n" seqs "data: {seed: 6}\n"

/*
 * pv_mask none: decode, contexts 20 and 32. Keys 20..31 of sequence 0
 * share its last tile and are poisoned (NaN V scale): 0 * NaN makes
 * every out of sequence 0 NaN, while sequence 1 (a whole tile) is
 * right. K scales per tensor, so mask_value additive (which NaNs the
 * same rows) is not a hypothesis.
 */
static void pv_mask_none(void **state)
{
	static const struct plant p = { BUG_PV_MASK, { .pv_all = 1 },
		"fragsim: 1\nname: sm\nmodel: {q_heads: 8, kv_heads: 2, head_dim: 64}\n"
		"cache: {k_scale: per_tensor, placement: shuffled}\n"
		"sequences:\n  - {context: 20}\n  - {context: 32}\ndata: {seed: 5}\n", 1 };

	(void)state;
	one_class(&p);
}

/*
 * mask_value finite: prefill of 24 tokens after 20 keys of history:
 * the keys a query's causal mask hides in a tile that runs score
 * -65504. mask_value additive: decode, contexts 20 and 40: keys 20..31
 * of sequence 0 (poisoned K scale) score NaN + -inf = NaN, and so does
 * its softmax sum.
 */
static void mask_value_finite_and_additive(void **state)
{
	static const struct plant p[] = {
		{ BUG_MASK_FINITE, { .mask = KMASK_FINITE },
		  PREFILL("", "", "sequences:\n  - {history: 20, chunk: 24}\n"), 0 },
		{ BUG_MASK_ADDITIVE, { .mask = KMASK_ADDITIVE },
		  DECODE("", "cache: {placement: shuffled}\n"
			 "sequences:\n  - {context: 20}\n  - {context: 40}\n"), 1 },
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(p); i++)
		one_class(&p[i]);
}

/* window_edge: a window of 8 keys, prefill of 24 tokens after 20. */
static void window_edge_inclusive_and_exclusive(void **state)
{
	static const struct plant p[] = {
		{ BUG_WINDOW_INCLUSIVE, { .edge = 1 },
		  PREFILL(", sliding_window: 8", "", "sequences:\n  - {history: 20, chunk: 24}\n"), 0 },
		{ BUG_WINDOW_EXCLUSIVE, { .edge = -1 },
		  PREFILL(", sliding_window: 8", "", "sequences:\n  - {history: 20, chunk: 24}\n"), 0 },
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(p); i++)
		one_class(&p[i]);
}

/*
 * The q_position values beside chunk, on a prefill of 24 tokens after
 * 20 keys of history (tile_rounded: 16 (ceil(44/16) - ceil(24/16)) =
 * 16, not 20), and tile_rounded in decode too (context 20: 16 (2 - 1)
 * = 16, not 19: keys 17..19 lost).
 */
static void q_position_values(void **state)
{
	static const struct plant p[] = {
		{ BUG_Q_CHUNK_KEYS, { .qpos = KQPOS_CHUNK_KEYS },
		  PREFILL("", "", "sequences:\n  - {history: 20, chunk: 24}\n"), 0 },
		{ BUG_Q_FUTURE, { .qpos = KQPOS_FUTURE },
		  PREFILL("", "", "sequences:\n  - {history: 20, chunk: 24}\n"), 0 },
		{ BUG_Q_OFF_BY_ONE, { .qpos = KQPOS_OFF_BY_ONE },
		  PREFILL("", "", "sequences:\n  - {history: 20, chunk: 24}\n"), 0 },
		{ BUG_Q_TILE_ROUNDED, { .qpos = KQPOS_TILE_ROUNDED },
		  PREFILL("", "", "sequences:\n  - {history: 20, chunk: 24}\n"), 0 },
		{ BUG_Q_TILE_ROUNDED, { .qpos = KQPOS_TILE_ROUNDED },
		  DECODE("", "cache: {placement: shuffled}\nsequences:\n  - {context: 20}\n"), 0 },
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(p); i++)
		one_class(&p[i]);
}

/*
 * soft_cap_apply on a prefill of 24 tokens after 20, cap 2: dropped (the
 * scores uncapped), after_mask (masked keys of a tile that runs at -2,
 * their V read: keys 44..47 past the context are poison, so out is
 * NaN), and exp_tanh with Q scaled so that |s / cap| passes
 * 88.7 (cap 0.01): inf / inf is NaN in the scores, and in out.
 */
static void soft_cap_apply_values(void **state)
{
	static const struct plant p[] = {
		{ BUG_CAP_DROPPED, { .cap = KCAP_DROPPED },
		  PREFILL(", soft_cap: 2.0", "", "sequences:\n  - {history: 20, chunk: 24}\n"), 0 },
		{ BUG_CAP_AFTER_MASK, { .cap = KCAP_AFTER_MASK },
		  PREFILL(", soft_cap: 2.0", "", "sequences:\n  - {history: 20, chunk: 24}\n"),  1 },
		{ BUG_CAP_EXP_TANH, { .cap = KCAP_EXP_TANH },
		  PREFILL(", soft_cap: 0.01", "", "sequences:\n  - {history: 20, chunk: 24}\n"), 1 },
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(p); i++)
		one_class(&p[i]);
}

/* alibi_bias, decode over 8 q heads (slopes 2^-1 .. 2^-8), context 40. */
static void alibi_bias_values(void **state)
{
	static const struct plant p[] = {
		{ BUG_ALIBI_IGNORED, { .alibi = KALIBI_IGNORED },
		  DECODE(", alibi: true", "sequences:\n  - {context: 40}\n"), 0 },
		{ BUG_ALIBI_SIGN, { .alibi = KALIBI_SIGN_FLIPPED },
		  DECODE(", alibi: true", "sequences:\n  - {context: 40}\n"), 0 },
		{ BUG_ALIBI_NO_LOG2E, { .alibi = KALIBI_NO_LOG2E },
		  DECODE(", alibi: true", "sequences:\n  - {context: 40}\n"), 0 },
		{ BUG_ALIBI_OFFSET, { .alibi = KALIBI_OFFSET },
		  DECODE(", alibi: true", "sequences:\n  - {context: 40}\n"), 0 },
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(p); i++)
		one_class(&p[i]);
}

/* exp_base exp2_no_log2e: p = 2^(s - m), decode of 40 keys; the scores
 * are the correct kernel's, out is not. */
static void exp_base_exp2(void **state)
{
	static const struct plant p = { BUG_EXP2_NO_LOG2E, { .exp2 = 1 },
		DECODE("", "sequences:\n  - {context: 40}\n"), 0 };

	(void)state;
	one_class(&p);
}

/*
 * split_merge on a prefill of 40 tokens after 8, segments of 16: query
 * t sees keys 0 .. 8 + t, so for t < 8 segments 1 and 2 are empty, for
 * t < 24 segment 2. empty_nan: those rows are NaN; stale_lse: the
 * empty segment is read as the one before it, counted twice.
 */
static void split_merge_values(void **state)
{
	static const struct plant p[] = {
		{ BUG_MERGE_EMPTY_NAN, { .merge = KMERGE_EMPTY_NAN },
		  PREFILL("", "", "sequences:\n  - {history: 8, chunk: 40}\nsplit_k: {segment: 16}\n"), 1 },
		{ BUG_MERGE_STALE_LSE, { .merge = KMERGE_STALE_LSE },
		  PREFILL("", "", "sequences:\n  - {history: 8, chunk: 40}\nsplit_k: {segment: 16}\n"), 0 },
		/* no_rescale: every segment's (o_i, l_i) summed as they are,
		 * out = sum o_i / sum l_i, each o_i and l_i relative to its own
		 * max; a decode over 3 segments, whose maxima differ */
		{ BUG_SPLIT_MERGE, { .no_rescale = 1 },
		  DECODE("", "sequences:\n  - {context: 40}\n  - {context: 48}\nsplit_k: {segment: 16}\n"), 0 },
	};

	(void)state;
	for (size_t i = 0; i < FS_ARRAY_LEN(p); i++)
		one_class(&p[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pv_mask_none),
		cmocka_unit_test(mask_value_finite_and_additive),
		cmocka_unit_test(window_edge_inclusive_and_exclusive),
		cmocka_unit_test(q_position_values),
		cmocka_unit_test(soft_cap_apply_values),
		cmocka_unit_test(alibi_bias_values),
		cmocka_unit_test(exp_base_exp2),
		cmocka_unit_test(split_merge_values),
	};

	return cmocka_run_group_tests_name("softmax_bugs", tests, NULL, NULL);
}
