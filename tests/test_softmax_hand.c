/*
 * test_softmax_hand.c - the softmax and mask bug classes (issue 22) on
 * inputs small enough that every wrong value is worked by hand: the
 * formula of each class's out (and scores) is written here and computed
 * in double; the emulation with the class planted in the case's
 * kernel: section must give that number, and it must not be the
 * correct kernel's (test_softmax_bugs checks the same classes against
 * a loop model on generated data).
 *
 * The inputs, one sequence, one q head and one kv head, head_dim 16,
 * given as .npy files:
 *
 *   Q[t]  = (127, 0, ..., 0)          absmax 127: sQ = 127 / 127 = 1
 *   K[j]  = (a_j, 127, 0, ..., 0)     sK = 1, a_j = (5j mod 7) - 3 + 2 (j / 16)
 *   V[j]  = (j, 127, 0, ..., 0)       sV = 1
 *
 * so every int8 value is the float given, and with softmax_scale 2^-7
 * the score of key j is s_j = 127 a_j / 128, exact in float. a_j runs
 * over -3 .. 3 within a tile of 16 keys, 2 higher each tile, so split-K
 * segments of 16 have different maxima. A softmax over a set J of keys
 * gives out[0] = sum_J e^{s_j} j / sum_J e^{s_j} and out[1] = 127; the
 * other dims are 0. Slots of a block past the context hold poison
 * (NaN scales): where a class reads one, out is NaN.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../lib/npy.h"
#include "../lib/runcase.h"
#include "testutil.h"

#define D 16
#define REL 1e-6
#define MAXK 64

static int a_of(int j)
{
	return (5 * j) % 7 - 3 + 2 * (j / 16);
}

static double s_of(int j)
{
	return 127.0 * a_of(j) / 128.0;
}

/* One softmax: keys [lo, hi] with the logit x_j = f(s_j) given per key. */
struct soft {
	int n;
	double x[MAXK], v[MAXK], w[MAXK];	/* logit, V[j][0], weight */
};

static void add(struct soft *p, double x, double v)
{
	p->x[p->n] = x, p->v[p->n] = v, p->w[p->n] = 1.0;
	p->n++;
}

/* sum w e^x v / sum w e^x, base e or 2 */
static double soft_out(const struct soft *p, int base2)
{
	double m = -INFINITY, num = 0.0, den = 0.0;

	for (int i = 0; i < p->n; i++)
		if (p->x[i] > m)
			m = p->x[i];
	for (int i = 0; i < p->n; i++) {
		double e = base2 ? exp2(p->x[i] - m) : exp(p->x[i] - m);

		num += p->w[i] * e * p->v[i];
		den += p->w[i] * e;
	}
	return num / den;
}

/* The plain softmax over keys lo..hi, out[0]. */
static double range_out(int lo, int hi)
{
	struct soft p = { 0 };

	for (int j = lo; j <= hi; j++)
		add(&p, s_of(j), j);
	return soft_out(&p, 0);
}

struct hand {
	const char *dir;	/* the test's scratch directory (teardown removes it) */
	struct runcase r;
	int T, ctx;
};

static void put_npy(const char *dir, const char *name, size_t n1, const float *x)
{
	char path[128];
	size_t shape[4] = { 1, n1, 1, D };
	struct fs_err err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (npy_write(path, NPY_F32, 4, shape, x, NULL, &err) != FS_OK)
		fail_msg("%s", err.msg);
}

/*
 * Write the inputs and the case (model extra keys, the sequence line,
 * other sections) in a scratch directory and load it.
 */
static void load(struct hand *h, const char *model, int prefill, int hist, int n,
		 const char *rest)
{
	char text[1024], path[128];
	float *q, *k, *v;
	struct fs_err err;

	h->T = prefill ? n : 1;
	h->ctx = prefill ? hist + n : n;
	q = calloc((size_t)h->T * D, sizeof(float));
	k = calloc((size_t)h->ctx * D, sizeof(float));
	v = calloc((size_t)h->ctx * D, sizeof(float));
	for (int t = 0; t < h->T; t++)
		q[t * D] = 127.0f;
	for (int j = 0; j < h->ctx; j++) {
		k[j * D] = (float)a_of(j), k[j * D + 1] = 127.0f;
		v[j * D] = (float)j, v[j * D + 1] = 127.0f;
	}
	put_npy(h->dir, "q.npy", (size_t)h->T, q);
	put_npy(h->dir, "k.npy", (size_t)h->ctx, k);
	put_npy(h->dir, "v.npy", (size_t)h->ctx, v);
	free(q), free(k), free(v);
	if (prefill)
		snprintf(text, sizeof(text), "fragsim: 1\nname: hand\nmode: prefill\n"
			 "model: {q_heads: 1, kv_heads: 1, head_dim: %d, softmax_scale: 0.0078125%s}\n"
			 "sequences:\n  - {history: %d, chunk: %d}\n"
			 "data:\n  q: {npy: q.npy}\n  k: {npy: k.npy}\n  v: {npy: v.npy}\n%s",
			 D, model, hist, n, rest);
	else
		snprintf(text, sizeof(text), "fragsim: 1\nname: hand\n"
			 "model: {q_heads: 1, kv_heads: 1, head_dim: %d, softmax_scale: 0.0078125%s}\n"
			 "sequences:\n  - {context: %d}\n"
			 "data:\n  q: {npy: q.npy}\n  k: {npy: k.npy}\n  v: {npy: v.npy}\n%s",
			 D, model, n, rest);
	snprintf(path, sizeof(path), "%s/case.yaml", h->dir);
	assert_int_equal(tu_put(path, text), 0);
	memset(&h->r, 0, sizeof(h->r));
	if (runcase_load(path, &h->r, &err) != FS_OK || runcase_inputs(&h->r, &err) != FS_OK)
		fail_msg("%s", err.msg);
	h->r.emulate_only = 1;
	assert_int_equal(runcase_emulate(&h->r, &h->r.c, NULL, &h->r.sim, &err), FS_OK);
	h->r.have_sim = 1;
}

static void unload(struct hand *h)
{
	runcase_free(&h->r);
}

/* got equals want within REL relative (NaN where want is NaN, inf exact). */
static void near(double got, double want, const char *what, int t, int j)
{
	if (isnan(want) ? !isnan(got) :
	    isinf(want) ? got != want : !(fabs(got - want) <= REL * fabs(want)))
		fail_msg("%s[t %d][%d]: emulation %.9g, by hand %.9g", what, t, j, got, want);
}

/* The wrong value is not the correct one: by more than 1e-4 relative, or NaN. */
static void differs(double bad, double good, const char *what)
{
	if (!isnan(bad) && fabs(bad - good) <= 1e-4 * fabs(good))
		fail_msg("%s: the class's value %.9g is the correct %.9g", what, bad, good);
}

/* out[t][0] is want (NaN: every dim NaN), out[t][1] 127. */
static void out_is(const struct hand *h, int t, double want)
{
	const float *o = h->r.sim.out + (size_t)t * D;

	near(o[0], want, "out", t, 0);
	near(o[1], isnan(want) ? NAN : 127.0, "out", t, 1);
}

static double score(const struct hand *h, int t, int j)
{
	return h->r.sim.scores[(size_t)t * h->ctx + j];
}

/*
 * pv_mask none, decode of 20 keys: J = 0..19; the second tile's slots
 * 20..31 are past the context (poison, NaN V scale) and masked, p = 0
 * there, but the buggy PV adds 0 * NaN: out NaN. Correct: out[0] =
 * sum_{j<20} e^{s_j} j / sum e^{s_j}.
 */
static void pv_mask_none_by_hand(void **state)
{
	struct hand h;
	double good = range_out(0, 19);

	h.dir = ((struct tu_scratch *)*state)->dir;
	load(&h, "", 0, 0, 20, "");
	out_is(&h, 0, good);
	unload(&h);
	load(&h, "", 0, 0, 20, "kernel: {pv_mask: none}\n");
	out_is(&h, 0, NAN);
	unload(&h);
}

/*
 * mask_value, prefill of 4 tokens after 4 (context 8, one tile): token t
 * at p = 4 + t sees keys 0..p. finite: the scores of keys p+1..7 are
 * -65504, not -inf (the wrong value is in the scores); their p is
 * e^(-65504 - m) = 0 and PV skips them, so out is the correct sum_{j<=p}
 * e^{s_j} j / sum e^{s_j}. additive: a masked
 * key scores s + -inf = -inf, but slots 8..15 past the context have a
 * NaN K scale: NaN + -inf = NaN, the row's max and out NaN.
 */
static void mask_value_by_hand(void **state)
{
	struct hand h;

	h.dir = ((struct tu_scratch *)*state)->dir;
	load(&h, "", 1, 4, 4, "");
	for (int t = 0; t < 4; t++)
		for (int j = 5 + t; j < 8; j++)
			near(score(&h, t, j), -INFINITY, "scores", t, j);
	unload(&h);
	load(&h, "", 1, 4, 4, "kernel: {mask_value: finite}\n");
	for (int t = 0; t < 4; t++) {
		out_is(&h, t, range_out(0, 4 + t));
		for (int j = 0; j < 8; j++)
			near(score(&h, t, j), j <= 4 + t ? s_of(j) : -65504.0, "scores", t, j);
	}
	unload(&h);
	load(&h, "", 1, 4, 4, "kernel: {mask_value: additive}\n");
	for (int t = 0; t < 4; t++) {
		out_is(&h, t, NAN);
		for (int j = 0; j < 8; j++)
			near(score(&h, t, j), j <= 4 + t ? s_of(j) : -INFINITY, "scores", t, j);
	}
	unload(&h);
}

/*
 * window_edge, decode of 20 keys, window 4: the query at 19 sees 16..19.
 * inclusive: 15..19 (key 15, in tile 0, scores s_15 and tile 0 runs);
 * exclusive: 17..19 (key 16 scores -inf).
 */
static void window_edge_by_hand(void **state)
{
	struct hand h;
	double good = range_out(16, 19), inc = range_out(15, 19), exc = range_out(17, 19);

	h.dir = ((struct tu_scratch *)*state)->dir;
	differs(inc, good, "inclusive");
	differs(exc, good, "exclusive");
	load(&h, ", sliding_window: 4", 0, 0, 20, "");
	out_is(&h, 0, good);
	near(score(&h, 0, 15), -INFINITY, "scores", 0, 15);
	unload(&h);
	load(&h, ", sliding_window: 4", 0, 0, 20, "kernel: {window_edge: inclusive}\n");
	out_is(&h, 0, inc);
	near(score(&h, 0, 15), s_of(15), "scores", 0, 15);
	unload(&h);
	load(&h, ", sliding_window: 4", 0, 0, 20, "kernel: {window_edge: exclusive}\n");
	out_is(&h, 0, exc);
	near(score(&h, 0, 16), -INFINITY, "scores", 0, 16);
	near(score(&h, 0, 17), s_of(17), "scores", 0, 17);
	unload(&h);
}

/*
 * q_position, prefill of 4 tokens after 4: token t belongs at p = 4 + t
 * and sees 0..p. chunk_keys: 4..p (the history skipped); future: 0..7
 * (every token at the last position); off_by_one: 0..min(p + 1, 7);
 * tile_rounded: p = 16 (ceil(8/16) - ceil(4/16)) + t = t: 0..t.
 */
static void q_position_by_hand(void **state)
{
	static const char *const val[] = { "chunk_keys", "future", "off_by_one", "tile_rounded" };
	struct hand h;
	char k[64];

	h.dir = ((struct tu_scratch *)*state)->dir;
	load(&h, "", 1, 4, 4, "");
	for (int t = 0; t < 4; t++)
		out_is(&h, t, range_out(0, 4 + t));
	unload(&h);
	for (int b = 0; b < 4; b++) {
		snprintf(k, sizeof(k), "kernel: {q_position: %s}\n", val[b]);
		load(&h, "", 1, 4, 4, k);
		for (int t = 0; t < 4; t++) {
			int p = 4 + t, lo = b == 0 ? 4 : 0;
			int hi = b == 1 ? 7 : b == 2 ? (p + 1 < 7 ? p + 1 : 7) : b == 3 ? t : p;
			double want = range_out(lo, hi);

			out_is(&h, t, want);
			for (int j = 0; j < 8; j++)
				near(score(&h, t, j), j >= lo && j <= hi ? s_of(j) : -INFINITY,
				     "scores", t, j);
			if (b == 0 || b == 3 || t < 3)	/* the last token is at 7 */
				differs(want, range_out(0, p), val[b]);
		}
		unload(&h);
	}
}

/*
 * soft_cap_apply, cap c: the correct logit is c tanh(s_j / c).
 * dropped (decode of 20, c = 2): the logit s_j itself.
 * after_mask (prefill of 4 after 12, c = 2: context 16, one whole tile,
 * no poison): token t at p = 12 + t; the masked keys p+1..15 score -c,
 * and their V is read: out[0] = (sum_{j<=p} e^{c tanh(s_j/c)} j +
 * sum_{p<j<16} e^{-c} j) / (the same without j).
 * exp_tanh (decode of 20, c = 0.01): tanh from float exps, (e^y -
 * e^-y) / (e^y + e^-y), y = s_j / c; where |y| > 88.72 (every a_j != 0:
 * |y| >= 99) e^y is inf, inf / inf NaN: those scores and out NaN; a_j
 * = 0 scores 0.
 */
static void soft_cap_apply_by_hand(void **state)
{
	struct hand h;
	struct soft good = { 0 }, bad = { 0 };

	h.dir = ((struct tu_scratch *)*state)->dir;
	for (int j = 0; j < 20; j++) {
		add(&good, 2.0 * tanh(s_of(j) / 2.0), j);
		add(&bad, s_of(j), j);
	}
	differs(soft_out(&bad, 0), soft_out(&good, 0), "dropped");
	load(&h, ", soft_cap: 2.0", 0, 0, 20, "");
	out_is(&h, 0, soft_out(&good, 0));
	for (int j = 0; j < 20; j++)
		near(score(&h, 0, j), good.x[j], "scores", 0, j);
	unload(&h);
	load(&h, ", soft_cap: 2.0", 0, 0, 20, "kernel: {soft_cap_apply: dropped}\n");
	out_is(&h, 0, soft_out(&bad, 0));
	for (int j = 0; j < 20; j++)
		near(score(&h, 0, j), bad.x[j], "scores", 0, j);
	unload(&h);

	load(&h, ", soft_cap: 2.0", 1, 12, 4, "kernel: {soft_cap_apply: after_mask}\n");
	for (int t = 0; t < 4; t++) {
		int p = 12 + t;

		good.n = bad.n = 0;
		for (int j = 0; j < 16; j++) {
			if (j <= p)
				add(&good, 2.0 * tanh(s_of(j) / 2.0), j);
			add(&bad, j <= p ? 2.0 * tanh(s_of(j) / 2.0) : -2.0, j);
		}
		if (t < 3)
			differs(soft_out(&bad, 0), soft_out(&good, 0), "after_mask");
		out_is(&h, t, soft_out(&bad, 0));
		for (int j = 0; j < 16; j++)
			near(score(&h, t, j), bad.x[j], "scores", t, j);
	}
	unload(&h);

	load(&h, ", soft_cap: 0.01", 0, 0, 20, "kernel: {soft_cap_apply: exp_tanh}\n");
	out_is(&h, 0, NAN);
	for (int j = 0; j < 20; j++)
		near(score(&h, 0, j), a_of(j) ? NAN : 0.0, "scores", 0, j);
	unload(&h);
}

/*
 * alibi_bias, decode of 20 keys (query at 19), one head: slope 2^-8,
 * the correct logit s_j + (j - 19) / 256. ignored: s_j; sign_flipped:
 * s_j - (j - 19) / 256; no_log2e: s_j + (j - 19) ln 2 / 256; offset:
 * s_j + (j - 18) / 256, every logit 2^-8 higher: the scores are wrong,
 * out is the correct one (a softmax does not see a common shift).
 */
static void alibi_bias_by_hand(void **state)
{
	static const char *const val[] = { NULL, "ignored", "sign_flipped", "no_log2e", "offset" };
	struct hand h;
	char k[64];
	double good = 0.0, good_x[MAXK];

	h.dir = ((struct tu_scratch *)*state)->dir;
	for (int b = 0; b < 5; b++) {
		struct soft p = { 0 };

		for (int j = 0; j < 20; j++) {
			double bias = (j - 19) / 256.0;

			add(&p, b == 1 ? s_of(j) : b == 2 ? s_of(j) - bias :
				b == 3 ? s_of(j) + bias * log(2.0) :
				b == 4 ? s_of(j) + (j - 18) / 256.0 : s_of(j) + bias, j);
		}
		if (b == 0)
			good = soft_out(&p, 0), memcpy(good_x, p.x, sizeof(good_x));
		else if (b < 4)
			differs(soft_out(&p, 0), good, val[b]);
		else
			for (int j = 0; j < 20; j++)
				differs(p.x[j], good_x[j], val[b]);
		k[0] = 0;
		if (b)
			snprintf(k, sizeof(k), "kernel: {alibi_bias: %s}\n", val[b]);
		load(&h, ", alibi: true", 0, 0, 20, k);
		out_is(&h, 0, soft_out(&p, 0));
		for (int j = 0; j < 20; j++)
			near(score(&h, 0, j), p.x[j], "scores", 0, j);
		unload(&h);
	}
}

/*
 * exp_base exp2_no_log2e, decode of 20 keys: p_j = 2^(s_j - m), out[0]
 * = sum 2^{s_j} j / sum 2^{s_j}; the scores are the correct ones.
 */
static void exp_base_by_hand(void **state)
{
	struct hand h;
	struct soft p = { 0 };

	h.dir = ((struct tu_scratch *)*state)->dir;
	for (int j = 0; j < 20; j++)
		add(&p, s_of(j), j);
	differs(soft_out(&p, 1), soft_out(&p, 0), "exp2_no_log2e");
	load(&h, "", 0, 0, 20, "");
	out_is(&h, 0, soft_out(&p, 0));
	unload(&h);
	load(&h, "", 0, 0, 20, "kernel: {exp_base: exp2_no_log2e}\n");
	out_is(&h, 0, soft_out(&p, 1));
	for (int j = 0; j < 20; j++)
		near(score(&h, 0, j), s_of(j), "scores", 0, j);
	unload(&h);
}

/*
 * split_merge, segments of 16 keys.
 * no_rescale, decode of 40 keys: segments 0..15, 16..31, 32..39, their
 * maxima m_i = 127 (3 + 2i) / 128; out[0] = sum_i sum_{j in i}
 * e^{s_j - m_i} j / sum_i sum_{j in i} e^{s_j - m_i}.
 * Prefill of 40 tokens after 8 (context 48): token t at p = 8 + t;
 * segment 2 (keys 32..47) is empty for t < 24, segment 1 for t < 8.
 * empty_nan: those rows NaN. stale_lse: an empty segment takes the one
 * before it; for 8 <= t < 24 segment 1 counts twice: out[0] = (sum_{j<16}
 * e^{s_j} j + 2 sum_{16<=j<=p} e^{s_j} j) / (the same without j); for t
 * < 8 segment 0 three times, which is the correct value.
 */
static void split_merge_by_hand(void **state)
{
	struct hand h;
	struct soft p = { 0 };
	double num = 0.0, den = 0.0;

	h.dir = ((struct tu_scratch *)*state)->dir;
	for (int j = 0; j < 40; j++) {
		double m = 127.0 * (3 + 2 * (j / 16)) / 128.0;

		num += exp(s_of(j) - m) * j;
		den += exp(s_of(j) - m);
	}
	differs(num / den, range_out(0, 39), "no_rescale");
	load(&h, "", 0, 0, 40, "split_k: {segment: 16}\n");
	out_is(&h, 0, range_out(0, 39));
	unload(&h);
	load(&h, "", 1, 8, 40, "split_k: {segment: 16}\n");
	for (int t = 0; t < 40; t++)
		out_is(&h, t, range_out(0, 8 + t));
	unload(&h);
	load(&h, "", 0, 0, 40, "split_k: {segment: 16}\nkernel: {split_merge: no_rescale}\n");
	out_is(&h, 0, num / den);
	unload(&h);

	load(&h, "", 1, 8, 40, "split_k: {segment: 16}\nkernel: {split_merge: empty_nan}\n");
	for (int t = 0; t < 40; t++)
		out_is(&h, t, t < 24 ? NAN : range_out(0, 8 + t));
	unload(&h);

	load(&h, "", 1, 8, 40, "split_k: {segment: 16}\nkernel: {split_merge: stale_lse}\n");
	for (int t = 0; t < 40; t++) {
		double want = range_out(0, 8 + t);

		if (t >= 8 && t < 24) {
			p.n = 0;
			for (int j = 0; j <= 8 + t; j++) {
				add(&p, s_of(j), j);
				p.w[p.n - 1] = j < 16 ? 1.0 : 2.0;
			}
			differs(soft_out(&p, 0), want, "stale_lse");
			want = soft_out(&p, 0);
		}
		out_is(&h, t, want);
	}
	unload(&h);
}

static int setup(void **state)
{
	return tu_scratch_setup(state, "hand", "case.yaml");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(pv_mask_none_by_hand, setup, tu_scratch_teardown),
		cmocka_unit_test_setup_teardown(mask_value_by_hand, setup, tu_scratch_teardown),
		cmocka_unit_test_setup_teardown(window_edge_by_hand, setup, tu_scratch_teardown),
		cmocka_unit_test_setup_teardown(q_position_by_hand, setup, tu_scratch_teardown),
		cmocka_unit_test_setup_teardown(soft_cap_apply_by_hand, setup, tu_scratch_teardown),
		cmocka_unit_test_setup_teardown(alibi_bias_by_hand, setup, tu_scratch_teardown),
		cmocka_unit_test_setup_teardown(exp_base_by_hand, setup, tu_scratch_teardown),
		cmocka_unit_test_setup_teardown(split_merge_by_hand, setup, tu_scratch_teardown),
	};

	return cmocka_run_group_tests_name("softmax_hand", tests, NULL, NULL);
}
