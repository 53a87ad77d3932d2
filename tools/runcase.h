/*
 * runcase.h - one case, start to finish: load the case and its profile,
 * load given .npy inputs, build the tensors, run the emulated kernel, run
 * the reference and compare. `fragsim run` and `fragsim check` both use it.
 */
#ifndef RUNCASE_H
#define RUNCASE_H

#include "../ref/compare.h"
#include "../sim/attn.h"
#include "../sim/case.h"
#include "../sim/inputs.h"
#include "../sim/lanemap.h"
#include "../sim/route.h"

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
};

/* Load case file, profile and route verdict. FS_EINPUT on bad input. */
enum fs_rc runcase_load(const char *path, struct runcase *r, struct fs_err *err);
/* Build inputs, emulate, compare. Returns FS_OK, or FS_EINPUT for a
 * strict route refusal; the verification verdict is runcase_status(). */
enum fs_rc runcase_exec(struct runcase *r, struct fs_err *err);
/* FS_OK when every check holds (or emulate_only: nothing was checked),
 * FS_MISMATCH otherwise. */
enum fs_rc runcase_status(const struct runcase *r);
void runcase_free(struct runcase *r);

#endif
