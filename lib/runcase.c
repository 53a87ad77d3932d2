/*
 * runcase.c - the pipeline of one case (see runcase.h):
 *
 *   case.yaml -> fs_case -> profile -> [given .npy] -> fs_inputs
 *             -> { sim: attn_run, ref: compare_run } -> verdict
 *
 * Given inputs are read here, in lib/, so that sim/ never touches a
 * file: a logical Q must be [S, T, Hq, D], K and V [S, MAXCTX, Hkv, D],
 * as float32, float16 or float64.
 */
#include "runcase.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "casefile.h"
#include "clock.h"
#include "npy.h"
#include "profile.h"
#include "safetensors.h"
#include "../sim/attn/quant.h"

/* err, from resolving case c's isa, as the case's error: at the isa
 * key's place (an unknown name, a profile file that cannot be opened),
 * or the profile file's own place with "isa: " before it (its syntax).
 * FS_ENOMEM stays itself. */
static enum fs_rc isa_fail(struct fs_err *err, const struct fs_case *c)
{
	char msg[sizeof(err->file) + sizeof(err->msg) + 2];
	enum fs_rc rc = fs_err_rc(err, FS_EINPUT);

	if (rc == FS_ENOMEM)
		return rc;
	if (err->line > 0) {	/* a place in the profile file: say that */
		fs_err_prefix(err, "isa");
		return FS_EINPUT;
	}
	snprintf(msg, sizeof(msg), "%s%s%s", err->file, err->file[0] ? ": " : "", err->msg);
	return case_fail_key(err, c, "isa", "%s", msg);
}

enum fs_rc runcase_finish(struct runcase *r, struct fs_err *err)
{
	struct lm_report *rep;
	enum fs_rc rc;

	r->lm = profile_resolve(r->c.isa, err);
	if (!r->lm)
		return isa_fail(err, &r->c);
	/* the report (2 KiB) off the stack: a library caller's thread may
	 * have little */
	if (!(rep = malloc(sizeof(*rep))))
		return fs_nomem(err, "the validation report", sizeof(*rep));
	rc = lanemap_validate(r->lm, rep);
	free(rep);
	if (rc == FS_MISMATCH)
		return case_fail_key(err, &r->c, "isa",
				     "profile %s is not valid (see 'fragsim lanemap check %s')",
				     r->lm->name, r->c.isa);
	if (rc)
		return fs_nomem(err, "the profile's inverse tables", 0);
	rc = attn_check_profile(&r->c, r->lm, r->lm, err);
	if (rc)
		return rc;
	route_check(&r->c, &r->route);
	return FS_OK;
}

enum fs_rc runcase_load(const char *path, struct runcase *r, struct fs_err *err)
{
	enum fs_rc rc;

	memset(r, 0, sizeof(*r));
	rc = case_load_file(path, &r->c, err);
	if (rc)
		return rc;
	return runcase_finish(r, err);
}

/*
 * Whether the logical f32 K and V are kept: only for a check whose K or
 * V was given. An emulation reads only the caches, and the reference
 * makes generated rows again (inputs_kv_row): the f32 copies would be 4x
 * the int8 caches, most of a long context's memory.
 */
static int runcase_keeps_kv(const struct runcase *r)
{
	return !r->emulate_only && (r->c.k.npy[0] || r->c.v.npy[0]);
}

/* A given logical tensor as f32 of the expected shape; NULL on error. */
static float *load_given(const struct fs_case *c, const char *path, const size_t *shape,
			 const char *what, struct fs_err *err)
{
	struct npy_array a;
	float *out;
	enum fs_rc rc;

	if ((rc = tensor_read(path, &a, err))) {	/* x.npy or x.safetensors:name */
		char inner[sizeof(err->file) + sizeof(err->msg) + 32];

		/* Name the case and the key that names the file (a missing
		 * file said only "x.npy: cannot open"); out of memory stays
		 * as it is. */
		if (fs_err_rc(err, rc) == FS_EINPUT) {
			fs_err_str(err, inner, sizeof(inner));
			case_fail_key(err, c, what, "%s", inner);
		}
		return NULL;
	}
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
		fs_nomem(err, what, a.count * sizeof(float) + 1);
	npy_free(&a);
	return out;
}

static unsigned keep_plan(const struct runcase *r);
static enum fs_rc memory_check(const struct runcase *r, struct fs_err *err);

enum fs_rc runcase_inputs(struct runcase *r, struct fs_err *err)
{
	const struct fs_case *c = &r->c;
	size_t qs[4] = { (size_t)c->n_seqs, (size_t)case_tokens_max(c),
			 (size_t)c->q_heads, (size_t)c->head_dim };
	size_t ks[4] = { (size_t)c->n_seqs, (size_t)case_context_max(c),
			 (size_t)c->kv_heads, (size_t)c->head_dim };
	struct inputs_given g = { NULL, NULL, NULL, !runcase_keeps_kv(r) };
	float *given[3] = { NULL, NULL, NULL };
	enum fs_rc rc = FS_OK;
	double t0;

	rc = memory_check(r, err);
	if (rc)
		return rc;
	t0 = clock_seconds();
	if (c->q.npy[0] && !(given[0] = load_given(c, c->q.npy, qs, "data.q.npy", err)))
		rc = fs_err_rc(err, FS_EINPUT);
	if (!rc && c->k.npy[0] && !(given[1] = load_given(c, c->k.npy, ks, "data.k.npy", err)))
		rc = fs_err_rc(err, FS_EINPUT);
	if (!rc && c->v.npy[0] && !(given[2] = load_given(c, c->v.npy, ks, "data.v.npy", err)))
		rc = fs_err_rc(err, FS_EINPUT);
	g.q = given[0], g.k = given[1], g.v = given[2];
	if (!rc)
		rc = inputs_build(c, &g, &r->in, err);
	for (int i = 0; i < 3; i++)
		free(given[i]);
	if (rc)
		return rc;
	r->have_inputs = 1;
	r->t_inputs = clock_seconds() - t0;
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
	return compare_run_progress(c, r->lm, &r->in, sim, r->progress, rep, err);
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

/* Upper bounds of the tiles the kernel executes, and of the bytes of
 * its scores, accumulators and split-K states (doubles: no overflow). */
static double out_sizes(const struct runcase *r, double need[3])
{
	const struct fs_case *c = &r->c;
	const struct lanemap *lm = r->lm;
	double rows = (double)c->n_seqs * case_tokens_max(c) * c->q_heads;
	double ktiles = (double)((case_context_max(c) + lm->n - 1) / lm->n), tiles;

	if (c->mode == MODE_DECODE)
		tiles = (double)c->n_seqs * case_tokens_max(c) * c->kv_heads *
			((case_group(c) + lm->m - 1) / lm->m) * ktiles;
	else
		tiles = (double)c->n_seqs * c->q_heads *
			((case_tokens_max(c) + lm->m - 1) / lm->m) * ktiles;
	need[0] = rows * case_context_max(c) * sizeof(float);
	need[1] = tiles * ((double)lm->wave * lm->op[LM_C].elems *
			   (c->k_scale == KSCALE_PER_BLOCK32 ? c->head_dim / lm->k : 1) + 4) *
		  sizeof(int32_t);
	/* INT8 PV keeps its tensors with acc: per group of K keys (N / K of
	 * the QK tiles) pv_acc is M x head_dim int32, p_int8 the wave's A
	 * bytes, p_scale M floats, pv_tiles 5 ints; at long contexts pv_acc
	 * is most of a check's memory */
	if (c->pv_mode == PV_INT8)
		need[1] += tiles * lm->n / lm->k *
			   ((double)lm->m * c->head_dim * sizeof(int32_t) +
			    (double)lm->wave * lm->op[LM_A].elems + lm->m * sizeof(float) +
			    5 * sizeof(int32_t));
	need[2] = case_segments_max(c) > 1 ?
		  rows * case_segments_max(c) * ((double)c->head_dim + 2) * sizeof(float) : 0;
	return tiles;
}

static unsigned keep_plan(const struct runcase *r)
{
	const struct fs_case *c = &r->c;
	double need[3], used = 0;
	static const unsigned bit[3] = { ATTN_DROP_SCORES, ATTN_DROP_ACC, ATTN_DROP_SPLITK };
	static const unsigned gold[3] = { GOLD_SCORES, GOLD_ACC, GOLD_SPLITK };
	size_t keep_max = r->keep_max ? r->keep_max : RUNCASE_CHECK_KEEP_MAX;
	unsigned drop = 0;

	out_sizes(r, need);
	for (int i = 0; i < 3; i++) {
		if (c->golden & gold[i])
			continue;
		if (i == 0 && !r->emulate_only && needs_scores(&c->check))
			continue;	/* a threshold the user set reads them */
		if (r->emulate_only || used + need[i] > (double)keep_max)
			drop |= bit[i];
		else
			used += need[i];
	}
	return drop;
}

/*
 * Memory, before any allocation (issue: a case that cannot fit must say
 * so at once, not after minutes, nor by a crash). Every allocation that
 * grows with the case is estimated from the case alone, as runcase_inputs
 * (sim/attn/inputs.c), attn_run_opts (sim/attn/attn.c's outputs) and compare_run
 * (ref/compare.c's block of rows) will make it, with the keys that drive
 * it. The peak is the larger of two phases: building the inputs (given
 * .npy copies alive) and emulating + comparing (given copies freed).
 * Doubles: a silly case must not overflow the estimate. A case over
 * inputs_build's cap (INPUTS_MAX_BYTES) or over the memory available is
 * refused, naming its largest tensor:
 *
 *   a.yaml: needs 32.0 TiB, 32.0 TiB of it for the scores (sequences 4 x
 *   tokens 8192 x q_heads 256 x context 1048576 x 4 bytes); this machine
 *   has 22.9 GiB available
 */
struct need {
	const char *what;
	double bytes;
	char keys[200];
};

#define RUNCASE_NEEDS 12

/* "41.2 GiB", "3.0 MiB", "355.3 KiB" */
static const char *human(double bytes, char buf[32])
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	bytes /= 1024;
	while (u < 3 && bytes >= 1024)
		bytes /= 1024, u++;
	snprintf(buf, 32, "%.1f %s", bytes, unit[u]);
	return buf;
}

static void need_add(struct need *n, int *k, const char *what, double bytes,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void need_add(struct need *n, int *k, const char *what, double bytes,
		     const char *fmt, ...)
{
	va_list ap;

	assert(*k < RUNCASE_NEEDS);
	n[*k].what = what;
	n[*k].bytes = bytes;
	va_start(ap, fmt);
	vsnprintf(n[*k].keys, sizeof(n[*k].keys), fmt, ap);
	va_end(ap);
	(*k)++;
}

/* Size of a given .npy (its data is read whole before the f32 copy). */
static double file_bytes(const char *path)
{
	struct stat st;

	return path[0] && stat(path, &st) == 0 ? (double)st.st_size : 0;
}

/*
 * The estimate, phase by phase; returns the peak, *top its largest item.
 * *cap gets what inputs_build weighs against INPUTS_MAX_BYTES (it counts
 * the logical K and V even when an emulation alone does not allocate
 * them), *cap_top its largest item.
 */
static double memory_need(const struct runcase *r, struct need *top,
			  double *cap, struct need *cap_top)
{
	const struct fs_case *c = &r->c;
	const struct case_tensor *given[3] = { &c->q, &c->k, &c->v };
	static const char *const given_name[3] = { "data.q.npy", "data.k.npy", "data.v.npy" };
	struct need a[RUNCASE_NEEDS], b[RUNCASE_NEEDS], kv;
	int na = 0, nb = 0, one = 0, n_inputs, S = c->n_seqs, T = case_tokens_max(c), X = case_context_max(c);
	int Hq = c->q_heads, Hkv = c->kv_heads, D = c->head_dim, vb = case_v_bytes(c->v_dtype) ? 1 : 4;
	double rows = (double)S * T * Hq, out[3], raw = 0, pa = 0, pb = 0, brows, tiles;
	unsigned drop = keep_plan(r);
	int nstored = inputs_pool_stored(c);

	/* Phase a: the inputs, and the given tensors they are built from. */
	need_add(a, &na, "the query (q f32, q_int8)", rows * D * 5,
		 "sequences %d x tokens %d x q_heads %d x head_dim %d x 5 bytes", S, T, Hq, D);
	need_add(&kv, &one, "the logical K and V", 2.0 * S * X * Hkv * D * 4,
		 "sequences %d x context %d x kv_heads %d x head_dim %d x 4 bytes x 2",
		 S, X, Hkv, D);
	if (runcase_keeps_kv(r))	/* else only the caches (ref regenerates) */
		a[na++] = kv;
	/* Only the stored blocks: a sparse pool's others cost nothing
	 * (inputs_pool_stored; a dense pool stores num_blocks). */
	if (inputs_pool_sparse(c))
		need_add(a, &na, "the K and V caches", (double)nstored * c->block_size * Hkv * D * (1 + vb),
			 "%d blocks the tables name (of cache.num_blocks %d, a sparse pool) x block_size %d x kv_heads %d x head_dim %d x %d bytes",
			 nstored, c->num_blocks, c->block_size, Hkv, D, 1 + vb);
	else
		need_add(a, &na, "the K and V caches", (double)nstored * c->block_size * Hkv * D * (1 + vb),
			 "cache.num_blocks %d x block_size %d x kv_heads %d x head_dim %d x %d bytes",
			 c->num_blocks, c->block_size, Hkv, D, 1 + vb);
	{
		double slots = (double)nstored * c->block_size * Hkv;
		double ks = c->k_scale == KSCALE_PER_TENSOR ? 4.0 / slots :
			    c->k_scale == KSCALE_PER_HEAD ? 4.0 * Hkv / slots :
			    c->k_scale == KSCALE_PER_BLOCK32 ? (D / 32) * 2.0 : 4.0;

		/* V's scales: f32 a slot (int8), fp16 per 32 dims (q8_0, q4_0),
		 * or per_channel f32 per (kv head, dim), none a slot */
		double vs = c->v_dtype == VDT_INT8 && c->v_scale == VSCALE_PER_CHANNEL ?
			    4.0 * Hkv * D / slots :
			    c->v_dtype == VDT_INT8 ? 4.0 : case_v_blocks(c->v_dtype) ? (D / 32) * 2.0 : 0.0;

		need_add(a, &na, "the scales and tables",
			 slots * (ks + vs) + rows * 4 +
				 (double)S * (case_table_width(c) + T + 1) * 4,
			 "%s %d x block_size %d x kv_heads %d scales, "
			 "and sequences %d x tokens %d x q_heads %d",
			 inputs_pool_sparse(c) ? "stored blocks" : "cache.num_blocks",
			 nstored, c->block_size, Hkv, S, T, Hq);
	}
	n_inputs = na;
	/* The cap counts the logical K and V, allocated or not. */
	*cap = runcase_keeps_kv(r) ? 0 : kv.bytes;
	*cap_top = kv;
	for (int i = 0; i < n_inputs; i++) {
		*cap += a[i].bytes;
		if (a[i].bytes > cap_top->bytes)
			*cap_top = a[i];
	}
	for (int i = 0; i < 3; i++) {
		double n = i == 0 ? rows * D : (double)S * X * Hkv * D;

		if (!given[i]->npy[0])
			continue;
		need_add(a, &na, given_name[i], n * 4,
			 "its elements as float32: %s %d x %d x %d x %d x 4 bytes",
			 i == 0 ? "sequences x tokens x q_heads x head_dim" :
				  "sequences x context x kv_heads x head_dim",
			 S, i == 0 ? T : X, i == 0 ? Hq : Hkv, D);
		if (file_bytes(given[i]->npy) > raw)
			raw = file_bytes(given[i]->npy);
	}
	if (raw > 0)
		need_add(a, &na, "a given .npy file while it is read", raw,
			 "the file's size");

	/* Phase b: the inputs stay (all but the given copies), plus the
	 * emulation's outputs and the reference's block of rows. */
	for (int i = 0; i < n_inputs; i++)
		b[nb++] = a[i];
	tiles = out_sizes(r, out);
	need_add(b, &nb, "the output", rows * (D + 2) * 4,
		 "sequences %d x tokens %d x q_heads %d x (head_dim %d + 2) x 4 bytes",
		 S, T, Hq, D);
	if (!(drop & ATTN_DROP_SCORES))
		need_add(b, &nb, "the scores", out[0],
			 "sequences %d x tokens %d x q_heads %d x context %d x 4 bytes",
			 S, T, Hq, X);
	if (!(drop & ATTN_DROP_ACC))
		need_add(b, &nb, "the accumulators", out[1],
			 "%.0f tiles of %d keys over context %d x (wave %d x C registers + 4) x 4 bytes",
			 tiles, r->lm->n, X, r->lm->wave);
	if (!(drop & ATTN_DROP_SPLITK) && out[2] > 0)
		need_add(b, &nb, "the split-K states", out[2],
			 "sequences %d x tokens %d x q_heads %d x %d segments (split_k.segment %d) "
			 "x (head_dim %d + 2) x 4 bytes",
			 S, T, Hq, case_segments_max(c), c->segment, D);
	if (!r->emulate_only) {
		/* ref/compare.c: a block of about 2^21 keys / context rows
		 * (compare_block_rows), of 4 x context + 3 x head_dim doubles. */
		brows = (double)compare_block_rows((long)rows, X, Hkv > 0 ? Hq / Hkv : 1,
						   NULL);
		need_add(b, &nb, "the reference's rows", brows * (4.0 * X + 3.0 * D) * 8,
			 "%.0f rows x (4 x context %d + 3 x head_dim %d) x 8 bytes", brows, X, D);
		/* ref/pv_int8.c's running maxima, where it checks p_int8: a
		 * double per row and group of the instruction's K keys from each
		 * split-K segment's start */
		if (c->pv_mode == PV_INT8 && !(drop & ATTN_DROP_ACC)) {
			double groups = (double)(X + r->lm->k - 1) / r->lm->k + case_segments_max(c);

			need_add(b, &nb, "the reference's running maxima", rows * groups * 8,
				 "sequences %d x tokens %d x q_heads %d x %.0f groups of %d keys x 8 bytes",
				 S, T, Hq, groups, r->lm->k);
		}
	}
	for (int i = 0; i < na; i++)
		pa += a[i].bytes;
	for (int i = 0; i < nb; i++)
		pb += b[i].bytes;
	{
		const struct need *ph = pa > pb ? a : b;
		int n = pa > pb ? na : nb;

		*top = ph[0];
		for (int i = 1; i < n; i++)
			if (ph[i].bytes > top->bytes)
				*top = ph[i];
	}
	return pa > pb ? pa : pb;
}

/* A "Key: N kB" line of /proc/meminfo, in bytes; -1 when absent. */
static double meminfo(const char *key)
{
	char line[256];
	double v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':') {
			v = strtod(line + strlen(key) + 1, NULL) * 1024;
			break;
		}
	if (f)
		fclose(f);
	return v;
}

/* A number in a one-line file (cgroup v2); -1 when absent or "max". */
static double file_number(const char *path)
{
	char buf[64] = "";
	char *end;
	double v;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	v = strtod(buf, &end);
	return end == buf ? -1 : v;
}

/* Bytes this process may still take: MemAvailable (else the free pages),
 * lowered to what a cgroup v2 memory.max leaves; 0 when unknown. */
double runcase_memory_available(void)
{
	double avail = meminfo("MemAvailable"), max, cur;

	if (avail < 0) {
		long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);

		avail = pages > 0 && size > 0 ? (double)pages * size : 0;
	}
	max = file_number("/sys/fs/cgroup/memory.max");
	cur = file_number("/sys/fs/cgroup/memory.current");
	if (max >= 0 && cur >= 0 && (avail <= 0 || max - cur < avail))
		avail = max > cur ? max - cur : 1;
	return avail;
}

static enum fs_rc memory_check(const struct runcase *r, struct fs_err *err)
{
	double avail = r->mem_avail ? (double)r->mem_avail : runcase_memory_available();
	struct need top, cap_top;
	char h[32], how[512];
	double need, cap;

	need = memory_need(r, &top, &cap, &cap_top);
	/* inputs_build would refuse it, but only after reading given .npy */
	if (cap > (double)INPUTS_MAX_BYTES) {
		snprintf(how, sizeof(how), "the input tensors' cap, INPUTS_MAX_BYTES in "
			 "sim/attn/inputs.h; %s of it for %s: %s; shrink the case",
			 human(cap_top.bytes, h), cap_top.what, cap_top.keys);
		return fs_budget(err, r->c.file, "the case", cap,
				 (double)INPUTS_MAX_BYTES, how);
	}
	if (avail <= 0 || need <= avail)
		return FS_OK;	/* unknown: the allocations will say */
	snprintf(how, sizeof(how), "the memory this machine has available; %s of it "
		 "for %s: %s; shrink the case, or free memory (MemAvailable, a "
		 "cgroup's memory.max)", human(top.bytes, h), top.what, top.keys);
	return fs_budget(err, r->c.file, "the case", need, avail, how);
}

enum fs_rc runcase_exec(struct runcase *r, struct fs_err *err)
{
	struct attn_opts opts = { .exec = ATTN_EXEC_AUTO };
	enum fs_rc rc;
	double t0;

	if (r->c.route == ROUTE_STRICT && !r->route.inside)
		return case_fail_key(err, &r->c, "route",
				     "strict, and the case is outside the INT8 path: %s",
				     r->route.reason[0]);
	fs_progress_stage(r->progress, FS_STAGE_INPUTS);
	rc = runcase_inputs(r, err);
	if (rc)
		goto done;

	opts.exec = r->exec;
	opts.drop = r->dropped = keep_plan(r);
	opts.progress = r->progress;
	if (r->predict)
		runcase_predict(r);
	t0 = clock_seconds();
	fs_progress_stage(r->progress, FS_STAGE_EMULATION);
	rc = runcase_emulate(r, &r->c, &opts, &r->sim, err);
	if (rc)
		goto done;
	r->have_sim = 1;
	r->t_sim = clock_seconds() - t0;
	if (r->emulate_only)
		goto done;

	t0 = clock_seconds();
	fs_progress_stage(r->progress, FS_STAGE_REFERENCE);
	rc = runcase_compare(r, &r->c, &r->sim, &r->cmp, err);
	if (rc && rc != FS_MISMATCH)
		goto done;	/* a mismatch is a verdict, in r->cmp */
	rc = FS_OK;
	r->have_cmp = 1;
	r->t_ref = clock_seconds() - t0;
done:
	fs_progress_stage(r->progress, FS_STAGE_DONE);
	return rc;
}

/*
 * The prediction (runcase.h). Work in units whose cost per unit does
 * not depend on the case's length: the emulation's tiles (out_sizes'
 * bound, for the calibration case as for this one) x K-steps x the
 * instruction's M x N x K; the reference's visible (row, key) pairs x
 * head_dim (each pair is a dot product, a softmax term and a PV term);
 * the exact accumulators' tiles. The smaller case keeps what makes the
 * cost per unit: mode, heads, head_dim, block size and placement (a
 * block table becomes a shuffle: the same gathers), scales, V dtype,
 * split-K segment, kernel assumptions, executor and threads; it has 4
 * sequences of at most 2048 keys (decode) or one of at most 32 tokens
 * after 2016 (prefill), generated inputs. Short contexts would not do:
 * a row's fixed costs weigh more there (a prefill of 64 tokens after
 * 448 took 1.7x the seconds per pair of 1024 after 4096). It takes
 * 0.1-0.7 s on a 2-core machine, hence RUNCASE_PREDICT_MIN_*.
 * Its stages are timed through its own progress counters.
 */
struct stamps {
	struct fs_progress p;
	double t[FS_STAGE_N];	/* when each stage started; 0: never */
};

static void stamp_stage(struct fs_progress *p)
{
	struct stamps *st = p->ctx;
	int s = atomic_load_explicit(&p->stage, memory_order_relaxed);

	if (s >= 0 && s < FS_STAGE_N)
		st->t[s] = clock_seconds();
}

/* Visible (row, key) pairs x head_dim of the reference. */
static double ref_work(const struct fs_case *c)
{
	double w = 0;

	for (int s = 0; s < c->n_seqs; s++)
		for (int t = 0; t < c->seqs[s].tokens; t++) {
			double keys = case_q_pos(c, s, t) + 1.0;

			if (c->sliding_window > 0 && keys > c->sliding_window)
				keys = c->sliding_window;
			w += keys;
		}
	return w * c->q_heads * c->head_dim;
}

static double emul_work(const struct runcase *r, double *tiles)
{
	double need[3];
	const struct lanemap *lm = r->lm;

	*tiles = out_sizes(r, need);
	return *tiles * ((r->c.head_dim + lm->k - 1) / lm->k) * (double)lm->m * lm->n * lm->k;
}

/* The smaller case of r's shape (see above). */
static void calib_case(const struct fs_case *c, struct fs_case *m)
{
	*m = *c;
	if (c->mode == MODE_DECODE) {
		int ctx = c->seqs[0].context < 2048 ? c->seqs[0].context : 2048;
		int tok = c->seqs[0].tokens < 2 ? c->seqs[0].tokens : 2;

		m->n_seqs = 4;
		for (int s = 0; s < m->n_seqs; s++)
			m->seqs[s] = (struct case_seq){ ctx, ctx - tok, tok, NULL, 0 };
	} else {
		int tok = c->seqs[0].tokens < 32 ? c->seqs[0].tokens : 32;
		int hist = c->seqs[0].history < 2016 ? c->seqs[0].history : 2016;

		m->n_seqs = 1;
		m->seqs[0] = (struct case_seq){ hist + tok, hist, tok, NULL, 0 };
	}
	for (int s = m->n_seqs; s < CASE_MAX_SEQS; s++)
		m->seqs[s] = (struct case_seq){ 0 };
	if (m->placement == PLACE_TABLE)
		m->placement = PLACE_SHUFFLED;
	m->spare_blocks = c->spare_blocks < 64 ? c->spare_blocks : 64;
	m->num_blocks = case_blocks_needed(m) + m->spare_blocks;
	m->q.npy[0] = m->k.npy[0] = m->v.npy[0] = '\0';
}

void runcase_predict(struct runcase *r)
{
	struct runcase_prediction *p = &r->pred;
	struct runcase m;
	struct stamps st;
	struct fs_err err = { 0 };
	double tiles, mtiles, w_emul, w_ref, m_emul, m_ref, t0 = clock_seconds(), end;
	enum fs_rc rc;

	memset(p, 0, sizeof(*p));
	w_emul = emul_work(r, &tiles);
	w_ref = r->emulate_only ? 0 : ref_work(&r->c);
	if (w_emul < RUNCASE_PREDICT_MIN_EMUL && w_ref < RUNCASE_PREDICT_MIN_REF)
		return;
	memset(&m, 0, sizeof(m));
	memset(&st, 0, sizeof(st));
	calib_case(&r->c, &m.c);
	m.lm = r->lm;	/* borrowed: freed by r */
	m.route = r->route;
	m.emulate_only = r->emulate_only;
	m.exec = r->exec;
	/* The same tensors kept as this case (a kept tensor is compared,
	 * which costs per pair): those it keeps listed, nothing else. */
	m.keep_max = 1;
	m.c.golden = r->c.golden;
	if (!(r->dropped & ATTN_DROP_SCORES))
		m.c.golden |= GOLD_SCORES;
	if (!(r->dropped & ATTN_DROP_ACC))
		m.c.golden |= GOLD_ACC;
	if (!(r->dropped & ATTN_DROP_SPLITK))
		m.c.golden |= GOLD_SPLITK;
	m.mem_avail = r->mem_avail;
	st.p.on_stage = stamp_stage;
	st.p.ctx = &st;
	m.progress = &st.p;
	rc = runcase_exec(&m, &err);
	end = st.t[FS_STAGE_DONE];
	if (!rc && m.have_sim && (m.emulate_only || m.have_cmp)) {
		m_emul = emul_work(&m, &mtiles);
		m_ref = ref_work(&m.c);
		p->work[FS_STAGE_EMULATION] = w_emul;
		p->sec[FS_STAGE_EMULATION] = (st.t[m.emulate_only ? FS_STAGE_DONE :
						 FS_STAGE_REFERENCE] -
					      st.t[FS_STAGE_EMULATION]) * w_emul / m_emul;
		if (!r->emulate_only && m_ref > 0) {
			double acc0 = st.t[FS_STAGE_EXACT_ACC] > 0 ? st.t[FS_STAGE_EXACT_ACC] : end;

			p->work[FS_STAGE_REFERENCE] = w_ref;
			p->sec[FS_STAGE_REFERENCE] = (acc0 - st.t[FS_STAGE_REFERENCE]) * w_ref / m_ref;
			if (!(r->dropped & ATTN_DROP_ACC) && st.t[FS_STAGE_EXACT_ACC] > 0) {
				p->work[FS_STAGE_EXACT_ACC] = tiles;
				p->sec[FS_STAGE_EXACT_ACC] = (end - acc0) * tiles / mtiles;
			}
		}
		p->sec[FS_STAGE_INPUTS] = r->t_inputs;
		for (int s = 0; s < FS_STAGE_N; s++)
			p->total += p->sec[s];
		p->made = 1;
	}
	if (m.have_sim)
		attn_free(&m.sim);
	if (m.have_inputs)
		inputs_free(&m.in);
	p->calib_sec = clock_seconds() - t0;
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

const char *runcase_failure(const struct runcase *r)
{
	const struct compare_report *p = &r->cmp;

	if (r->emulate_only || runcase_status(r) == FS_OK)
		return NULL;
	for (int w = 0; w < CMP_NWHAT; w++)
		if (p->stat[w].mismatches)
			return "mismatch";
	if (p->replica_mismatch || r->sim.replica_mismatch)
		return "mismatch";
	return p->n_failed ? "threshold" : "mismatch";
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
