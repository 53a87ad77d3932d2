/*
 * test_diffmatrix.c - `fragsim diff` across the catalogue (issue 22
 * point 21), through the library: a dump made with any single class is
 * named exactly and alone, in decode and prefill, on gfx936, CDNA3 and
 * sm80; a dump of two bugs is named as the pair, or the closest single
 * class is given with its share of the mismatching entries.
 * test_diffcase.c has diff's command line, labels and bad dumps.
 */
#include <math.h>
#include <omp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../lib/diffcase.h"
#include "bugclasses.h"
#include "bugmodel.h"
#include "testutil.h"

/*
 * Issue 22 point 21: `fragsim diff` names a dump made with any single
 * class of the catalogue exactly, in decode and prefill, on gfx936,
 * CDNA3 16x16 and sm80 (mma.m16n8k32): the matrix class x {decode,
 * prefill} x {gfx936, cdna3, sm80}, in process through the library (the
 * CLI path is the same call; 264 runs of the binary would take minutes).
 *
 * Per map and mode, five small cases (8 q heads; decode over 2 kv heads,
 * two sequences on shuffled blocks of 8, one of 3 query tokens, contexts
 * that end inside a tile; prefill over 4 kv heads, chunks after history):
 * plain, then with a sliding window and split-K (a window of 10 keys,
 * so that a query sees no key of segment 0), a soft cap, ALiBi, padded
 * pages (cache.block_stride). A
 * class is tried on the first of them it applies to (kernel_bug_na);
 * one that applies to none is n/a there (c_columns on CDNA3, c_rows on
 * gfx936, the gqa values that need the other mode, ...).
 *
 * Where the dump comes from. tests/bugmodel.h, a model of the buggy
 * kernel in plain loops that calls nothing of sim/'s mapping, writes the
 * dump (scores and out, compared at --tol 1e-4) for the classes it
 * models, on the plain case: that dump is independent of the emulation,
 * and "matches exactly" says the emulation plants what the model's
 * kernel does (c_columns among them: it applies on gfx936 alone here,
 * and the model's belief is gfx936's, from its published layout; so are
 * tail_mask's and transpose's, in decode; operand_order in decode on
 * the 16x16 maps; scale_recovery after_softmax everywhere). For the rest
 * (split_merge; the softmax, mask, cap and ALiBi classes; block_offset;
 * the column classes where the model has no belief) the dump is the
 * emulation's own plant, bit for bit. There "matches exactly" cannot
 * fail, so what the test holds is the rest of the line: the class is
 * named alone, no other hypothesis reproduces the same dump, on every
 * map and mode it applies to, so the diagnosis can tell it from every
 * other class. Whether the plant is the bug is pinned elsewhere, by hand
 * or by an independent model: test_kernel.c (the column and row beliefs,
 * operand order, scales, by hand), test_softmax_bugs.c (the softmax,
 * mask and merge classes, a model of each on gfx936) and
 * tests/data/boff/model.py, bwrap/model.py (block_offset, numpy);
 * docs/bug-classes.md's table and test_bugclasses.c list, per class, the
 * test that names it from an independent model's dump. Ties the case cannot break are listed in
 * mx_ties with why.
 */
#define MX_VARIANTS 5

/* The model of class b on case r, if bugmodel.h has one: 1 and m set. */
static int mx_model(enum kern_bug b, const struct runcase *r, struct bugmodel *m, int *src)
{
	memset(m, 0, sizeof(*m));
	switch (b) {
	case BUG_PAGE_WALK: m->k_walk = m->ks_walk = m->v_walk = BM_PACKED; return 1;
	case BUG_PAGE_IDENTITY: m->k_walk = m->ks_walk = m->v_walk = BM_LOGICAL; return 1;
	case BUG_K_SCALE_WALK: m->ks_walk = BM_LOGICAL; return 1;
	case BUG_V_PAGE_WALK: m->v_walk = BM_LOGICAL; return 1;
	case BUG_BLOCK_SIZE: m->bs = 16; return 1;
	case BUG_SCALE_NO_K: m->no_sk = 1; return 1;
	case BUG_SCALE_NO_Q: m->no_sq = 1; return 1;
	case BUG_K_SCALE_FIRST: m->first_key = 1; return 1;
	case BUG_K_SCALE_INDEX: m->per_tile = 1; return 1;
	case BUG_GQA_MAP: m->gqa_modulo = 1; return 1;
	case BUG_GQA_KV_DIVIDE: m->kv_divide = 1; return 1;
	case BUG_GQA_GRID: m->grid = 1; return 1;
	case BUG_GQA_SPILL: m->spill = 1; return 1;
	case BUG_LOAD_SWAP_K: m->swap_halves = 1; return 1;
	case BUG_LOAD_UNSWIZZLED: m->unswizzled = 1; return 1;
	case BUG_HEAD_DIM_LOADED: m->half_dims = 1; return 1;
	case BUG_Q_POSITION: m->q_local = 1; return 1;
	case BUG_Q_CHUNK_KEYS: m->q_chunk_keys = 1; return 1;
	case BUG_Q_FUTURE: m->q_future = 1; return 1;
	case BUG_Q_OFF_BY_ONE: m->q_off_by_one = 1; return 1;
	case BUG_C_COLUMNS:
		/* gfx936 only, from its layout (lane L, register e holds column
		 * L/16 + 4e; the belief, 4 (L/16) + e): the score written at
		 * column n of a tile is the true column 4 (n % 4) + n / 4's */
		if (strcmp(r->lm->name, "gfx936"))
			return 0;
		for (int n = 0; n < 16; n++)
			src[n] = 4 * (n % 4) + n / 4;
		m->col_src = src;
		return 1;
	case BUG_TRANSPOSE:
	case BUG_TAIL_MASK:
		/* gfx936 decode, from the same layout: the workspace written in
		 * register order stores at column n the score of true column
		 * 4 (n % 4) + n / 4; the mask's test of the register index
		 * passes column n iff that column is inside the context */
		if (strcmp(r->lm->name, "gfx936") || r->c.mode != MODE_DECODE)
			return 0;
		for (int n = 0; n < 16; n++)
			src[n] = 4 * (n % 4) + n / 4;
		if (b == BUG_TRANSPOSE)
			m->sc_src = src;
		else
			m->mask_col = src;
		return 1;
	case BUG_OPERAND_ORDER:
		/* a 16x16 tile's C read transposed, decode (rows: the group's
		 * q heads): no lane map enters */
		if (r->c.mode != MODE_DECODE)
			return 0;
		m->kq = 1;
		return 1;
	case BUG_SCALE_RECOVERY: m->after_softmax = 1; return 1;
	case BUG_C_ROWS:
		/* CDNA3 16x16 only, worked from its published map in
		 * test_kernel.c: believed row p is true row 4 (p % 4) + p / 4 */
		if (strcmp(r->lm->name, "cdna3-mfma-i32-16x16x32-i8"))
			return 0;
		for (int p = 0; p < 16; p++)
			src[p] = 4 * (p % 4) + p / 4;
		m->row_src = src;
		return 1;
	default:
		return 0;
	}
}

static void mx_case_text(char *buf, size_t len, const char *isa, int prefill, int v)
{
	static const char *const model_extra[MX_VARIANTS] = {
		"", ", sliding_window: 10", ", soft_cap: 5.0", ", alibi: true", "" };
	int kv = prefill ? 4 : 2;
	char stride[64] = "";

	/* padded pages: blocks 1.5 blocks apart (kv x 32 dims x 8 slots) */
	if (v == 4)
		snprintf(stride, sizeof(stride), ", block_stride: %d", 3 * kv * 32 * 8 / 2);
	snprintf(buf, len,
		 "fragsim: 1\nname: mx\nisa: %s\n%s"
		 "model: {q_heads: 8, kv_heads: %d, head_dim: 32, softmax_scale: 0.125%s}\n"
		 "cache: {block_size: 8, placement: table, num_blocks: 16%s}\nsequences:\n%s%s"
		 "data: {seed: 8%s}\n",
		 isa, prefill ? "mode: prefill\n" : "", kv, model_extra[v], stride,
		 prefill ? "  - {history: 20, chunk: 12, blocks: [1, 5, 0, 4]}\n"
			   "  - {history: 11, chunk: 10, blocks: [2, 3, 6]}\n" :
			   "  - {context: 32, blocks: [1, 5, 0, 4]}\n"
			   "  - {context: 21, tokens: 3, blocks: [2, 3, 6]}\n",
		 v == 1 ? "split_k: {segment: 16}\n" : "", v == 2 ? ", q: {scale: 4.0}" : "");
}

/* scores and out of a result as an in-memory dump. */
static void mx_dump(struct dump *d, const struct runcase *r, float *scores, float *out)
{
	memset(d, 0, sizeof(*d));
	d->t[DUMP_SCORES] = (struct npy_array){ NPY_F32, 4,
		{ (size_t)r->in.S, (size_t)r->in.T, (size_t)r->in.Hq, (size_t)r->in.MAXCTX },
		(size_t)r->in.S * r->in.T * r->in.Hq * r->in.MAXCTX, scores };
	d->t[DUMP_OUT] = (struct npy_array){ NPY_F32, 4,
		{ (size_t)r->in.S, (size_t)r->in.T, (size_t)r->in.Hq, (size_t)r->in.D },
		(size_t)r->in.S * r->in.T * r->in.Hq * r->in.D, out };
}

/* The model's result, as float. */
static void mx_model_dump(const struct runcase *r, const struct bugmodel *m,
			  float **scores, float **out)
{
	size_t ns = (size_t)r->in.S * r->in.T * r->in.Hq * r->in.MAXCTX;
	size_t no = (size_t)r->in.S * r->in.T * r->in.Hq * r->in.D;
	double *sc = malloc(ns * sizeof(double)), *o = malloc(no * sizeof(double));

	*scores = malloc(ns * sizeof(float)), *out = malloc(no * sizeof(float));
	assert_non_null(sc && o && *scores && *out);
	bugmodel_run(r, m, sc, o);
	for (size_t i = 0; i < ns; i++)
		(*scores)[i] = (float)sc[i];
	for (size_t i = 0; i < no; i++)
		(*out)[i] = (float)o[i];
	free(sc), free(o);
}

/* The diagnosis of dump d of case r, at tolerance tol: through the
 * case's kept hypotheses hs, or, hs NULL, diffcase_diagnose's own. */
static void mx_verdict(const struct runcase *r, const struct diff_hypset *hs,
		       const struct dump *d, double tol, char *line, size_t len)
{
	struct diff_opts o = { tol, 0 };
	struct diff_diagnosis *dg = calloc(1, sizeof(*dg));
	struct fs_err err;

	assert_non_null(dg);
	if ((hs ? diffcase_diagnose_set(r, hs, d, &o, dg, &err) :
		  diffcase_diagnose(r, d, &o, dg, &err)) != FS_OK)
		fail_msg("%s", err.msg);
	diffcase_verdict(dg, line, len);
	free(dg);
}

static void mx_load(struct runcase *r, const char *text)
{
	char *path = tu_write_temp(".yaml", text);
	struct fs_err err;

	if (runcase_load(path, r, &err) != FS_OK || runcase_inputs(r, &err) != FS_OK ||
	    runcase_emulate(r, &r->c, NULL, &r->sim, &err) != FS_OK)
		fail_msg("%s\n%s", err.msg, text);
	r->have_sim = 1;
	unlink(path);
	free(path);
}

static void diff_names_every_class_on_three_maps(void **state)
{
	static const char *const maps[] = {
		"gfx936", "cdna3-mfma-i32-16x16x32-i8", "sm80-mma-m16n8k32-s8" };
	char fails[8192] = "";
	size_t nf = 0;
	int named = 0, by_model = 0, na = 0;
	int model_named[BUG_COUNT] = { 0 };	/* named from bugmodel.h's dump */

	double t0 = omp_get_wtime();

	(void)state;
	/* hundreds of tiny emulations: a team of threads would spend them
	 * in its barriers */
	omp_set_num_threads(1);
	for (size_t mi = 0; mi < FS_ARRAY_LEN(maps); mi++)
		for (int prefill = 0; prefill < 2; prefill++) {
			struct runcase r[MX_VARIANTS];
			struct diff_hypset *hs[MX_VARIANTS];
			int sampled = 0;

			for (int v = 0; v < MX_VARIANTS; v++) {
				char text[1024];
				struct fs_err err;

				mx_case_text(text, sizeof(text), maps[mi], prefill, v);
				mx_load(&r[v], text);
				if (diffcase_hypset_build(&r[v], &hs[v], &err) != FS_OK)
					fail_msg("%s", err.msg);
			}
			for (int b = 0; b < BUG_COUNT; b++) {
				const struct kern_bug_info *bi = kernel_bug((enum kern_bug)b);
				struct bugmodel m;
				struct dump d;
				struct attn_result dev;
				struct fs_err err;
				char line[1024], want[256], why[160];
				int v, src[16], modelled = 0;
				float *sc = NULL, *out = NULL;

				for (v = 0; v < MX_VARIANTS; v++) {
					struct fs_case c = r[v].c;

					if (!kernel_bug_na((enum kern_bug)b, &c, r[v].lm, why, sizeof(why)) &&
					    !kernel_plant(&c.kernel, (enum kern_bug)b, c.head_dim))
						break;
				}
				if (v == MX_VARIANTS) {
					na++;
					continue;
				}
				if (v == 0 && mx_model((enum kern_bug)b, &r[0], &m, src)) {
					modelled = 1;
					mx_model_dump(&r[0], &m, &sc, &out);
					mx_dump(&d, &r[0], sc, out);
				} else {
					struct fs_case c = r[v].c;

					assert_int_equal(kernel_plant(&c.kernel, (enum kern_bug)b, c.head_dim), 0);
					if (runcase_emulate(&r[v], &c, NULL, &dev, &err) != FS_OK)
						fail_msg("%s", err.msg);
					mx_dump(&d, &r[v], dev.scores, dev.out);
					/* the split-K states too: a merge bug may
					 * leave out's bytes as they were */
					if (dev.seg_max) {
						size_t n = (size_t)dev.S * dev.T * dev.Hq * dev.nseg;

						d.t[DUMP_SPLITK_MAX] = (struct npy_array){ NPY_F32, 4,
							{ (size_t)dev.S, (size_t)dev.T, (size_t)dev.Hq, (size_t)dev.nseg },
							n, dev.seg_max };
						d.t[DUMP_SPLITK_SUM] = d.t[DUMP_SPLITK_MAX];
						d.t[DUMP_SPLITK_SUM].data = dev.seg_sum;
						d.t[DUMP_SPLITK_OUT] = (struct npy_array){ NPY_F32, 5,
							{ (size_t)dev.S, (size_t)dev.T, (size_t)dev.Hq, (size_t)dev.nseg,
							  (size_t)dev.D }, n * (size_t)dev.D, dev.seg_out };
					}
				}
				mx_verdict(&r[v], hs[v], &d, modelled ? 1e-4 : 0.0, line, sizeof(line));
				/* the kept hypotheses are diffcase_diagnose's own:
				 * the same line, for one class per map and mode */
				if (!sampled++) {
					char line2[1024];

					mx_verdict(&r[v], NULL, &d, modelled ? 1e-4 : 0.0, line2, sizeof(line2));
					if (strcmp(line, line2))
						fail_msg("kept: '%s'\nper dump: '%s'", line, line2);
				}
				snprintf(want, sizeof(want), "diagnosis: matches kernel assumption %s=%s exactly (",
					 bi->key, bi->bad);
				if (strncmp(line, want, strlen(want)) || strstr(line, "; so do")) {
					int n = snprintf(fails + nf, sizeof(fails) - nf, "%s %s %s=%s (%s, case %d): %s\n",
							 maps[mi], prefill ? "prefill" : "decode", bi->key, bi->bad,
							 modelled ? "model" : "plant", v, line);

					if (n > 0 && nf + (size_t)n < sizeof(fails))
						nf += (size_t)n;
				} else {
					named++;
					by_model += modelled;
					model_named[b] += modelled;
				}
				if (modelled)
					free(sc), free(out);
				else
					attn_free(&dev);
			}
			for (int v = 0; v < MX_VARIANTS; v++) {
				diffcase_hypset_free(hs[v]);
				runcase_free(&r[v]);
			}
		}
	print_message("diff matrix: %d named alone (%d from the model's dumps), %d n/a, %.1f s\n",
		      named, by_model, na, omp_get_wtime() - t0);
	if (nf) {
		for (char *l = strtok(fails, "\n"); l; l = strtok(NULL, "\n"))
			print_message("%s\n", l);
		fail_msg("failures above");
	}
	/* tests/bugclasses.h's rows for this test: each class named from
	 * the model's dump, not the plant's, on some map and mode */
	for (size_t i = 0; i < FS_ARRAY_LEN(bugclass_models); i++) {
		int b;

		if (strcmp(bugclass_models[i].file, "test_diffmatrix.c"))
			continue;
		for (b = 0; b < BUG_COUNT; b++) {
			char cls[96];

			snprintf(cls, sizeof(cls), "%s=%s", kernel_bug((enum kern_bug)b)->key,
				 kernel_bug((enum kern_bug)b)->bad);
			if (!strcmp(cls, bugclass_models[i].cls))
				break;
		}
		if (b == BUG_COUNT || !model_named[b])
			fail_msg("%s: tests/bugclasses.h says this test names it from "
				 "bugmodel.h's dump, and it did not", bugclass_models[i].cls);
	}
}

/*
 * Two bugs at once, from bugmodel.h's dumps (scores and out, --tol 1e-4)
 * on a decode case of two sequences on shuffled blocks:
 *   - K scales and V both read at the logical block (k_scale_walk and
 *     v_page_walk, but K's bytes through the table, so not page_walk
 *     identity): no single class reproduces it, and the V walk alone
 *     reproduces none of its entries (the scale walk has moved every
 *     weight V meets); the pair is named, together, exactly;
 *   - the scale walk plus 5 entries of out changed by hand, a change no
 *     class makes: no pair matches, and the closest single class is the
 *     scale walk, which reproduces every mismatching entry but those 5.
 */
static void diff_names_two_bugs_or_the_closest(void **state)
{
	char text[1024], line[1024], want[256];
	struct runcase r;
	struct bugmodel m = { .ks_walk = BM_LOGICAL, .v_walk = BM_LOGICAL };
	struct dump d;
	float *sc, *out;
	long fixed, miss;

	(void)state;
	omp_set_num_threads(1);
	mx_case_text(text, sizeof(text), "gfx936", 0, 0);
	mx_load(&r, text);
	mx_model_dump(&r, &m, &sc, &out);
	mx_dump(&d, &r, sc, out);
	mx_verdict(&r, NULL, &d, 1e-4, line, sizeof(line));
	if (strncmp(line, "diagnosis: matches kernel assumptions k_scale_walk=identity and "
		    "v_page_walk=identity together exactly (", 98) || strstr(line, "so do"))
		fail_msg("got '%s'", line);
	free(sc), free(out);

	m.v_walk = BM_TABLE;
	mx_model_dump(&r, &m, &sc, &out);
	for (int i = 0; i < 5; i++)	/* rows of sequence 1, which has 3 tokens */
		out[(size_t)r.in.T * r.in.Hq * r.in.D + 41 * (size_t)i] += 1.0f;
	mx_dump(&d, &r, sc, out);
	mx_verdict(&r, NULL, &d, 1e-4, line, sizeof(line));
	snprintf(want, sizeof(want), "diagnosis: no exact match; closest single is kernel assumption "
		 "k_scale_walk=identity: it reproduces ");
	if (strncmp(line, want, strlen(want)) ||
	    sscanf(line + strlen(want), "%ld of the %ld mismatching entries", &fixed, &miss) != 2 ||
	    miss - fixed != 5)
		fail_msg("got '%s'", line);
	free(sc), free(out);
	runcase_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(diff_names_every_class_on_three_maps),
		cmocka_unit_test(diff_names_two_bugs_or_the_closest),
	};

	return cmocka_run_group_tests_name("diffmatrix", tests, NULL, NULL);
}
