/*
 * runcase.h - one case, start to finish: load the case and its profile,
 * load given .npy inputs, build the tensors, run the emulated kernel, run
 * the reference and compare. `fragsim run` and `fragsim check` both use it.
 */
#ifndef RUNCASE_H
#define RUNCASE_H

#include "../ref/compare.h"
#include "../sim/attn/attn.h"
#include "../sim/attn/case.h"
#include "../sim/attn/inputs.h"
#include "../sim/lanemap/lanemap.h"
#include "../sim/attn/route.h"
#include "../sim/common/progress.h"

/*
 * What a case is expected to take on this machine, stage by stage
 * (enum fs_stage), before its emulation starts (issue 25 point 9):
 * the case's work (tiles x K-steps for the emulation, visible row-key
 * pairs x head_dim for the reference, tiles for the exact accumulators)
 * times the seconds per unit that a smaller case of the same shape,
 * kernel and executor took just now on the same threads. sec[] of a
 * stage that will not run is 0; sec[FS_STAGE_INPUTS] is the measured
 * input stage.
 */
struct runcase_prediction {
	int made;		/* 0: the case is too small to be worth it, or
				 * the smaller case could not run */
	double sec[FS_STAGE_N];
	double total;		/* their sum */
	double calib_sec;	/* what measuring took */
	double work[FS_STAGE_N];	/* the case's units, as above */
};

struct runcase {
	struct fs_case c;
	struct lanemap *lm;
	struct fs_inputs in;
	struct attn_result sim;
	struct compare_report cmp;
	struct route_verdict route;
	double t_inputs, t_sim, t_ref;	/* seconds */
	int have_inputs, have_sim, have_cmp;
	int emulate_only;	/* set before exec: no reference, no verdict */
	enum attn_exec exec;	/* set before exec: the executor (0: auto) */
	unsigned dropped;	/* enum attn_drop bits: tensors not kept, so not checked */
	size_t keep_max;	/* set before exec: RUNCASE_CHECK_KEEP_MAX when 0 */
	size_t mem_avail;	/* set before inputs: bytes the case may use;
				 * 0: what runcase_memory_available() says */
	/* Set before exec: the stages and their counts for a watcher
	 * (sim/common/progress.h; the CLI prints them); NULL: none. */
	struct fs_progress *progress;
	int predict;		/* set before exec: runcase_predict after the inputs */
	struct runcase_prediction pred;	/* what it predicted (made 0: nothing) */
};

/*
 * Bytes of memory this process may still take (MemAvailable, lowered by a
 * cgroup v2 limit); 0 when unknown. runcase_inputs refuses, before any
 * allocation, a case whose estimated peak exceeds it (or r->mem_avail),
 * naming the largest tensor and the keys that drive it.
 */
double runcase_memory_available(void);

/* Load case file, profile and route verdict. FS_EINPUT on bad input
 * (an isa at its key); r is freeable (runcase_free) either way. */
enum fs_rc runcase_load(const char *path, struct runcase *r, struct fs_err *err);

/* runcase_load's steps after the case r->c: resolve and validate its
 * isa, the rules between the case and that profile
 * (attn_check_profile), the route verdict. */
enum fs_rc runcase_finish(struct runcase *r, struct fs_err *err);

/* Build inputs, emulate, compare. Returns FS_OK, or FS_EINPUT for a
 * strict route refusal; the verification verdict is runcase_status(). */
enum fs_rc runcase_exec(struct runcase *r, struct fs_err *err);

/* The steps of runcase_exec, for commands that emulate one case's inputs
 * many times (mutate, diff): build r->in (once); emulate case c (r->c, or
 * a copy with other kernel assumptions) under opts into *out; compare
 * *sim of case c with the reference into *rep (FS_MISMATCH is a verdict). */
enum fs_rc runcase_inputs(struct runcase *r, struct fs_err *err);
enum fs_rc runcase_emulate(const struct runcase *r, const struct fs_case *c,
			   const struct attn_opts *opts, struct attn_result *out,
			   struct fs_err *err);
enum fs_rc runcase_compare(const struct runcase *r, const struct fs_case *c,
			   const struct attn_result *sim,
			   struct compare_report *rep, struct fs_err *err);
/*
 * Fill r->pred (after runcase_inputs, before the emulation; runcase_exec
 * calls it when r->predict is set). Cases whose work is below both
 * RUNCASE_PREDICT_MIN_* run in seconds (a prefill check of 1e10 pairs x
 * dims took 4 s on one thread here, a decode's 25 s; an emulation of
 * 2e11 multiply-adds 8 s): nothing is measured for them (made 0), as
 * the measurement would cost them a few percent. Never fails the run:
 * a smaller case that cannot run leaves made 0.
 */
void runcase_predict(struct runcase *r);
#define RUNCASE_PREDICT_MIN_REF 1e10	/* visible row-key pairs x head_dim */
#define RUNCASE_PREDICT_MIN_EMUL 2e11	/* tiles x K-steps x M x N x K */

/* FS_OK when every check holds (or emulate_only: nothing was checked),
 * FS_MISMATCH otherwise. */
enum fs_rc runcase_status(const struct runcase *r);

/*
 * What failed when runcase_status() is FS_MISMATCH: "mismatch" (an exact
 * comparison with the reference differs: a mapping bug) or "threshold"
 * (every exact comparison holds; a check: quality threshold failed).
 * NULL when nothing failed or nothing was checked.
 */
const char *runcase_failure(const struct runcase *r);
/*
 * Tensors a checked run keeps although the case does not list them in
 * golden:, for the comparison alone: at most this many bytes together
 * (they are the "+ 64 MiB" of the memory budget in docs/performance.md).
 * Beyond it a tensor is not kept, and not checked.
 */
#define RUNCASE_CHECK_KEEP_MAX ((size_t)64 << 20)

/* runcase_status held to the case's expect: FS_OK when the verdict is the
 * expected one (a planted bug must be caught), FS_MISMATCH otherwise. */
enum fs_rc runcase_expected(const struct runcase *r);
void runcase_free(struct runcase *r);

#endif
