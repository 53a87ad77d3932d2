/*
 * runcase.c - the pipeline of one case (see runcase.h):
 *
 *   case.yaml -> fs_case -> profile -> [given .npy] -> fs_inputs
 *             -> { sim: attn_run, ref: compare_run } -> verdict
 *
 * Given inputs are read here, in tools/, so that sim/ never touches a
 * file: a logical Q must be [S, T, Hq, D], K and V [S, MAXCTX, Hkv, D],
 * as float32, float16 or float64.
 */
#include "runcase.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "cli.h"
#include "npy.h"
#include "profile.h"
#include "safetensors.h"
#include "../sim/quant.h"

enum fs_rc runcase_load(const char *path, struct runcase *r, struct fs_err *err)
{
	struct lm_report rep;
	enum fs_rc rc;

	memset(r, 0, sizeof(*r));
	rc = case_load_file(path, &r->c, err);
	if (rc)
		return rc;
	r->lm = profile_resolve(r->c.isa, err);
	if (!r->lm) {
		fs_err_prefix(err, "isa");
		return FS_EINPUT;
	}
	rc = lanemap_validate(r->lm, &rep);
	if (rc == FS_MISMATCH)
		return fs_fail_at(err, FS_EINPUT, r->c.file, 0, 0,
				  "isa: profile %s is not valid (see 'fragsim lanemap check %s')",
				  r->lm->name, r->c.isa);
	if (rc)
		return fs_fail(err, rc, "out of memory");
	route_check(&r->c, &r->route);
	return FS_OK;
}

/* A given logical tensor as f32 of the expected shape; NULL on error. */
static float *load_given(const char *path, const size_t *shape, const char *what,
			 struct fs_err *err)
{
	struct npy_array a;
	float *out;

	if (tensor_read(path, &a, err))	/* x.npy or x.safetensors:name */
		return NULL;
	if (a.ndim != 4 || a.shape[0] != shape[0] || a.shape[1] != shape[1] ||
	    a.shape[2] != shape[2] || a.shape[3] != shape[3]) {
		fs_fail_at(err, FS_EINPUT, path, 0, 0,
			   "%s must have shape [%zu, %zu, %zu, %zu]", what, shape[0],
			   shape[1], shape[2], shape[3]);
		npy_free(&a);
		return NULL;
	}
	if (a.dtype != NPY_F32 && a.dtype != NPY_F16 && a.dtype != NPY_F64) {
		fs_fail_at(err, FS_EINPUT, path, 0, 0,
			   "%s must be float32, float16 or float64, not %s", what,
			   npy_dtype_name(a.dtype));
		npy_free(&a);
		return NULL;
	}
	out = malloc(a.count * sizeof(float) + 1);
	for (size_t i = 0; out && i < a.count; i++) {
		float v = a.dtype == NPY_F32 ? ((const float *)a.data)[i] :
			  a.dtype == NPY_F64 ? (float)((const double *)a.data)[i] :
			  quant_f16_to_f32(((const uint16_t *)a.data)[i]);

		if (v != v || v - v != 0.0f) {
			fs_fail_at(err, FS_EINPUT, path, 0, 0,
				   "%s element %zu is not finite", what, i);
			free(out);
			out = NULL;
		} else {
			out[i] = v;
		}
	}
	if (!out && !err->msg[0])
		fs_fail(err, FS_EINTERNAL, "out of memory");
	npy_free(&a);
	return out;
}

enum fs_rc runcase_inputs(struct runcase *r, struct fs_err *err)
{
	const struct fs_case *c = &r->c;
	size_t qs[4] = { (size_t)c->n_seqs, (size_t)case_tokens_max(c),
			 (size_t)c->q_heads, (size_t)c->head_dim };
	size_t ks[4] = { (size_t)c->n_seqs, (size_t)case_context_max(c),
			 (size_t)c->kv_heads, (size_t)c->head_dim };
	struct inputs_given g = { NULL, NULL, NULL, r->emulate_only };
	float *given[3] = { NULL, NULL, NULL };
	enum fs_rc rc = FS_OK;
	double t0;

	t0 = cli_seconds();
	if (c->q.npy[0] && !(given[0] = load_given(c->q.npy, qs, "data.q.npy", err)))
		rc = FS_EINPUT;
	if (!rc && c->k.npy[0] && !(given[1] = load_given(c->k.npy, ks, "data.k.npy", err)))
		rc = FS_EINPUT;
	if (!rc && c->v.npy[0] && !(given[2] = load_given(c->v.npy, ks, "data.v.npy", err)))
		rc = FS_EINPUT;
	g.q = given[0], g.k = given[1], g.v = given[2];
	if (!rc)
		rc = inputs_build(c, &g, &r->in, err);
	for (int i = 0; i < 3; i++)
		free(given[i]);
	if (rc)
		return rc;
	r->have_inputs = 1;
	r->t_inputs = cli_seconds() - t0;
	return FS_OK;
}

enum fs_rc runcase_emulate(const struct runcase *r, const struct fs_case *c,
			   const struct attn_opts *opts, struct attn_result *out,
			   struct fs_err *err)
{
	return attn_run_opts(c, r->lm, opts, &r->in, out, err);
}

enum fs_rc runcase_compare(const struct runcase *r, const struct fs_case *c,
			   const struct attn_result *sim,
			   struct compare_report *rep, struct fs_err *err)
{
	return compare_run(c, r->lm, &r->in, sim, rep, err);
}

/*
 * What the emulation need not keep (enum attn_drop). Streaming: the score
 * matrix, the accumulators and the split-K states grow with context x
 * rows, so an emulation alone keeps only those the case lists in golden:.
 * A checked run also keeps unlisted ones for the comparison, in the order
 * that checks most (scores, then acc, then split-K), while together they
 * fit RUNCASE_CHECK_KEEP_MAX; sizes are upper bounds taken from the case.
 * Scores are kept whatever their size when a check: threshold reads them
 * (KL divergence, top-1, score errors): the user asked for that check.
 */
/* Does a threshold of check: need the sim's scores (all but out's)? */
static int needs_scores(const struct case_check *k)
{
	return !isnan(k->score_max_abs_max) || !isnan(k->score_nmse_max) ||
	       !isnan(k->kld_mean_max) || !isnan(k->kld_median_max) ||
	       !isnan(k->kld_p99_max) || !isnan(k->top1_min) || !isnan(k->rms_dp_max);
}

static unsigned keep_plan(const struct runcase *r)
{
	const struct fs_case *c = &r->c;
	const struct lanemap *lm = r->lm;
	size_t rows = (size_t)c->n_seqs * case_tokens_max(c) * c->q_heads;
	size_t ktiles = ((size_t)case_context_max(c) + lm->n - 1) / lm->n, tiles;
	size_t need[3], used = 0;
	static const unsigned bit[3] = { ATTN_DROP_SCORES, ATTN_DROP_ACC, ATTN_DROP_SPLITK };
	static const unsigned gold[3] = { GOLD_SCORES, GOLD_ACC, GOLD_SPLITK };
	size_t keep_max = r->keep_max ? r->keep_max : RUNCASE_CHECK_KEEP_MAX;
	unsigned drop = 0;

	if (c->mode == MODE_DECODE)
		tiles = (size_t)c->n_seqs * case_tokens_max(c) * c->kv_heads *
			((case_group(c) + lm->m - 1) / lm->m) * ktiles;
	else
		tiles = (size_t)c->n_seqs * c->q_heads *
			((case_tokens_max(c) + lm->m - 1) / lm->m) * ktiles;
	need[0] = rows * case_context_max(c) * sizeof(float);
	need[1] = tiles * ((size_t)lm->wave * lm->op[LM_C].elems *
			   (c->k_scale == KSCALE_PER_BLOCK32 ? c->head_dim / lm->k : 1) + 4) *
		  sizeof(int32_t);
	need[2] = case_segments_max(c) > 1 ?
		  rows * case_segments_max(c) * ((size_t)c->head_dim + 2) * sizeof(float) : 0;
	for (int i = 0; i < 3; i++) {
		if (c->golden & gold[i])
			continue;
		if (i == 0 && !r->emulate_only && needs_scores(&c->check))
			continue;	/* a threshold the user set reads them */
		if (r->emulate_only || used + need[i] > keep_max)
			drop |= bit[i];
		else
			used += need[i];
	}
	return drop;
}

enum fs_rc runcase_exec(struct runcase *r, struct fs_err *err)
{
	struct attn_opts opts = { NULL, ATTN_EXEC_AUTO, 0 };
	enum fs_rc rc;
	double t0;

	if (r->c.route == ROUTE_STRICT && !r->route.inside)
		return fs_fail_at(err, FS_EINPUT, r->c.file, 0, 0,
				  "route: strict, and the case is outside the INT8 path: %s",
				  r->route.reason[0]);
	rc = runcase_inputs(r, err);
	if (rc)
		return rc;

	opts.exec = r->exec;
	opts.drop = r->dropped = keep_plan(r);
	t0 = cli_seconds();
	rc = runcase_emulate(r, &r->c, &opts, &r->sim, err);
	if (rc)
		return rc;
	r->have_sim = 1;
	r->t_sim = cli_seconds() - t0;
	if (r->emulate_only)
		return FS_OK;

	t0 = cli_seconds();
	rc = runcase_compare(r, &r->c, &r->sim, &r->cmp, err);
	if (rc && rc != FS_MISMATCH)
		return rc;	/* a mismatch is a verdict, in r->cmp */
	r->have_cmp = 1;
	r->t_ref = cli_seconds() - t0;
	return FS_OK;
}

enum fs_rc runcase_status(const struct runcase *r)
{
	const struct compare_report *p = &r->cmp;

	if (r->emulate_only && r->have_sim)
		return FS_OK;
	if (!r->have_cmp)
		return FS_EINTERNAL;
	if (p->mismatches || p->n_failed || p->replica_mismatch ||
	    r->sim.replica_mismatch)
		return FS_MISMATCH;
	return FS_OK;
}

enum fs_rc runcase_expected(const struct runcase *r)
{
	enum fs_rc rc = runcase_status(r);

	if (!r->c.expect_mismatch || r->emulate_only)
		return rc;
	return rc == FS_MISMATCH ? FS_OK : FS_MISMATCH;
}

void runcase_free(struct runcase *r)
{
	if (r->have_sim)
		attn_free(&r->sim);
	if (r->have_inputs)
		inputs_free(&r->in);
	lanemap_free(r->lm);
	case_free(&r->c);
	memset(r, 0, sizeof(*r));
}
