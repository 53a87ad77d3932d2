/*
 * compare.h - the emulated kernel's result against the reference.
 *
 * Two questions, answered in one pass over the attention rows:
 *   1. Is the kernel right?  Every accumulator bit for bit; scores,
 *      probabilities, outputs and split-K states within tolerances that
 *      compare.c derives from the f32 roundings the kernel performs.
 *      Any difference beyond them is a mismatch, located exactly.
 *   2. What does INT8 cost?  The kernel's scores and outputs against the
 *      float reference (BF16-rounded inputs, double arithmetic), and the
 *      case's check: thresholds on those numbers.
 *
 * An attention row is (s, t, q head), row index (s*T + t)*Hq + qh; rows
 * with t >= T_s do not exist and are skipped. Nothing here allocates
 * into the report: it is plain values, safe to copy.
 */
#ifndef COMPARE_H
#define COMPARE_H

#include "../sim/attn/attn.h"
#include "../sim/attn/case.h"
#include "../sim/common/fs.h"
#include "../sim/attn/inputs.h"
#include "../sim/lanemap/lanemap.h"

/* What is compared, in the order compare_run checks it. */
enum compare_what {
	CMP_ACC,	/* int32 accumulators, register order: exact */
	CMP_SCORES,	/* recovered scores; masked and past-end keys exactly -inf */
	CMP_PROBS,	/* exp(s - row_max) / row_sum, from the sim's row stats */
	CMP_OUT,	/* attention output */
	CMP_SEG_MAX,	/* split-K segment max: exact */
	CMP_SEG_SUM,	/* split-K segment sum */
	CMP_P_INT8,	/* pv.mode int8: Pq within one step of ref/pv_int8.c's */
	CMP_PV_ACC,	/* pv.mode int8: PV accumulators, register order: exact */
	CMP_NWHAT
};

/* Where a mismatch is. Fields that do not apply are -1. */
struct compare_loc {
	int s, t, qh;		/* attention row: sequence, query token, q head */
	int key;		/* key token (acc, scores, probs) */
	int dim;		/* head-dim element (out) */
	int seg;		/* split-K segment (seg_max, seg_sum) */
	long tile;		/* acc: index into acc_tiles */
	int kstep;		/* acc: K-step within the tile (0 unless per_block32) */
	int lane, elem;		/* acc: register slot lane*EC + elem */
	int row, col;		/* acc: the C entry that slot holds */
	double got;		/* the sim's value */
	double want;		/* the reference value */
	double tol;		/* tolerance applied there; 0 = exact */
};

struct compare_stat {
	int ran;		/* 1 when the result held this tensor */
	long compared;		/* elements checked */
	long mismatches;	/* elements outside tolerance */
	double max_abs_err;	/* max |got - want|; NaN or a wrong inf count as +inf */
	double max_err_tol;	/* max |got - want| / tol; exact checks: 0 or +inf */
	struct compare_loc first;	/* when mismatches > 0: lowest tile or row,
					 * then lowest k-step, lane, elem, key or dim */
};

/* Quantization error in one key-position bucket [lo, hi). */
struct compare_bucket {
	int lo, hi;		/* key positions */
	long keys;		/* visible (row, key) pairs in the bucket */
	double score_max_abs;	/* max |s_sim - s_float| */
	double rms_dp;		/* sqrt(mean (p_sim - p_float)^2) */
	/* pv.mode int8, rows whose query sits in the bucket (its q_pos) */
	long pv_rows;
	double pv_nmse, pv_max_abs;	/* out against the f32-PV out */
};

/*
 * Quantization error: the sim's scores and out against the float path.
 * p_sim is the softmax (in double) of the sim's scores over visible keys.
 * A metric whose tensor the result lacks, or with no rows, is NaN.
 */
struct compare_quant {
	long rows;		/* rows with at least one visible key */
	long keys;		/* visible (row, key) pairs */
	double score_max_abs;	/* max |s_sim - s_float| */
	double score_nmse;	/* sum (s_sim - s_float)^2 / sum s_float^2 */
	double out_cos_min;	/* cosine of out_sim and out_float, over rows */
	double out_cos_mean;
	double out_max_abs;	/* max |out_sim - out_float| */
	double kld_mean;	/* KL(P_float || P_sim) per row, nats */
	double kld_median;	/* middle value; mean of the two middle ones */
	double kld_p99;		/* sorted[ceil(0.99 n) - 1] */
	double top1;		/* rows whose argmax key agrees (ties: lowest), 0..1 */
	double rms_dp;		/* sqrt(mean over visible (row, key) of dp^2) */
	/*
	 * pv.mode int8: what the second product's quantization costs, the
	 * sim's out against ref's out of the same quantized Q, K and V with
	 * P unquantized (what f32 PV computes); NaN with f32 PV.
	 */
	double pv_cos_min, pv_nmse, pv_max_abs;
	int n_buckets;		/* min(case buckets, CASE_MAX_BUCKETS) */
	struct compare_bucket bucket[CASE_MAX_BUCKETS];	/* equal width over [0, MAXCTX) */
};

/* One failed check: threshold, e.g. "out cosine 0.9971 < out_cosine_min 0.999". */
#define COMPARE_MAX_FAILS 9	/* one per field of struct case_check */
struct compare_fail {
	const char *name;	/* the check: key, static string */
	char reason[160];
};

struct compare_report {
	long rows;				/* attention rows compared */
	struct compare_stat stat[CMP_NWHAT];	/* by enum compare_what */
	long mismatches;			/* sum of stat[].mismatches */
	long replica_mismatch;			/* the sim's own count: must be 0 */
	long p_int8_one_step;			/* p_int8 entries one step from ref's */
	struct compare_quant quant;
	int n_failed;				/* thresholds not met */
	struct compare_fail failed[COMPARE_MAX_FAILS];
};

/* "acc", "scores", "probs", "out", "seg_max", "seg_sum". */
const char *compare_what_name(enum compare_what w);

/*
 * Compare r (the sim's result for case c on inputs in, under lane map lm)
 * with the reference and fill rep. Tensors r lacks (NULL) are not
 * compared (stat.ran 0). The report does not depend on the number of
 * OpenMP threads. lm is needed only when r->acc is given.
 *
 * Returns FS_OK when everything matches and every threshold holds,
 * FS_MISMATCH when not (rep says where); FS_EINPUT when r does not fit
 * the case (shapes, tile coordinates, K-steps) and FS_ENOMEM on out of
 * memory, both with err filled and rep zeroed.
 */
enum fs_rc compare_run(const struct fs_case *c, const struct lanemap *lm,
		       const struct fs_inputs *in, const struct attn_result *r,
		       struct compare_report *rep, struct fs_err *err);
/*
 * Rows of the reference computed together (one block, 4 x maxctx + 3 x
 * head_dim doubles each) out of rows, for a context of maxctx keys and
 * G q heads a kv head: about 2^21 row-key pairs, in whole chunks of 16
 * rows when that is at least 64 rows (*chunks 1), else in whole groups
 * of G where one fits (*chunks 0; a decode over 131072 keys: 12 rows,
 * 48 MiB). chunks may be NULL. What the memory estimate
 * (lib/runcase.c) counts.
 */
long compare_block_rows(long rows, int maxctx, int G, int *chunks);

/* compare_run, counting for a watcher (sim/common/progress.h): rows of
 * the reference done, then (stage FS_STAGE_EXACT_ACC) chunks of
 * accumulator tiles; prog only counts (NULL: none). */
struct fs_progress;
enum fs_rc compare_run_progress(const struct fs_case *c, const struct lanemap *lm,
				const struct fs_inputs *in, const struct attn_result *r,
				struct fs_progress *prog, struct compare_report *rep,
				struct fs_err *err);

#endif
