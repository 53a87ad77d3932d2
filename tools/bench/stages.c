/*
 * stages.c - the reference's stage times, for `make bench`: runs one case
 * through the library (fragsim_run, the full check, as `fragsim run`
 * does) and prints, as one JSON object on stdout, the wall seconds of
 * the whole call and of each stage of ref/ (ref_stage_seconds):
 *
 *   {"case": "bench-...", "rc": 0, "seconds_run": 3.21,
 *    "ref": {"exact": 0.41, "qk_f": 0.52, "softmax": 0.30, "pv_q": 1.10,
 *            "pv_f": 0.61,
 *            "regen_k": 0.12, "regen_v": 0.13}}
 *
 * exact is the int32 products and quantized scores, qk_f the float
 * path's q . k, pv_q the quantized PV (o and sum p |v|), pv_f the float
 * path's PV; the float path is qk_f + pv_f. A case with pv.mode int8
 * runs the same passes (its out is held against the float path); its
 * own check, ref/pv_int8.c's Pq, pv_acc and out slack, is none of these
 * stages and falls in the bench's "compare and rest" (the run less the
 * stages). regen_k and regen_v are the
 * part of qk_f and pv_f (the master thread's) that made the float K and V
 * rows again instead of keeping them. The thread count is
 * OpenMP's (OMP_NUM_THREADS), as the bench sets it for every child.
 * Exit status: 0 the run finished (a mismatch verdict too: its timings
 * hold), 2 bad input, 3 otherwise.
 */
#include <stdio.h>
#include <time.h>

#include "../../include/fragsim.h"
#include "../../ref/ref.h"

int main(int argc, char **argv)
{
	static const char *const name[REF_NSTAGE] = {
		"exact", "qk_f", "softmax", "pv_q", "pv_f", "regen_k", "regen_v",
	};
	struct fragsim_case *c = NULL;
	struct fragsim_err err = { { 0 } };
	double st[REF_NSTAGE];
	struct timespec t0, t1;
	enum fragsim_rc rc;

	if (argc != 2) {
		fputs("usage: stages <case.yaml>\n", stderr);
		return 2;
	}
	rc = fragsim_case_load(argv[1], &c, &err);
	if (rc) {
		fprintf(stderr, "stages: %s\n", err.msg);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = fragsim_run(c, FRAGSIM_EXEC_AUTO, 0, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc && rc != FRAGSIM_MISMATCH) {
		fprintf(stderr, "stages: %s\n", err.msg);
		fragsim_case_free(c);
		return 3;
	}
	ref_stage_seconds(st);
	printf("{\"case\": \"%s\", \"rc\": %d, \"seconds_run\": %.6f, \"ref\": {",
	       fragsim_case_name(c), (int)rc,
	       (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
	for (int i = 0; i < REF_NSTAGE; i++)
		printf("%s\"%s\": %.6f", i ? ", " : "", name[i], st[i]);
	printf("}}\n");
	fragsim_case_free(c);
	return fflush(stdout) || ferror(stdout) ? 3 : 0;
}
