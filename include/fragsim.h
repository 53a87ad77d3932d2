/*
 * fragsim.h - the public API of libfragsim: emulate INT8 paged attention
 * on a GPU matrix instruction lane by lane, check it against the
 * reference, write goldens. docs/library.md walks through it.
 *
 * This header is all a program needs (it includes only the C standard
 * library). From 1.0 on, its functions and public structs keep their
 * meaning within a major version; the opaque ones may change at any
 * time. Link with `pkg-config --cflags --libs --static fragsim`.
 *
 *   lane map  which (lane, element) of a wave holds which matrix entry,
 *             per operand A (M x K), B (K x N), C (M x N): a builtin
 *             profile, a profile file, or built here from expressions
 *             of `lane` and `e` or from tables
 *   case      one attention workload (shape, cache, sequences, seed):
 *             a case file, YAML text, or a few fields set here
 *   run       inputs, the emulated kernel and the reference, compared
 *   goldens   the run's tensors as .npy (or safetensors) + manifest.json
 *
 * Errors are values: every function that can fail returns an enum
 * fragsim_rc and, given a non-NULL struct fragsim_err, fills it with one
 * line, "file:line:col: message" for input errors. Nothing here prints
 * or exits. A failed call leaves its out-parameters NULL or zeroed.
 * Results do not depend on the number of OpenMP threads.
 *
 * Pointers: each pointer argument must not be NULL unless its comment
 * says what NULL means; `err` may always be NULL (no message). A NULL
 * where none is allowed is FRAGSIM_EINPUT, "fragsim_run: c is NULL",
 * never a crash, and a call that returns no fragsim_rc says below what
 * it does with one (fragsim_case_name(NULL) is NULL).
 */
#ifndef FRAGSIM_H
#define FRAGSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header, kept equal to the source tree's file
 * VERSION (tests/test_fragsim_api.c fails when they differ). */
#define FRAGSIM_VERSION_MAJOR 0
#define FRAGSIM_VERSION_MINOR 2
#define FRAGSIM_VERSION_PATCH 0
#define FRAGSIM_VERSION_NUMBER \
	(FRAGSIM_VERSION_MAJOR * 10000 + FRAGSIM_VERSION_MINOR * 100 + \
	 FRAGSIM_VERSION_PATCH)
#define FRAGSIM_VERSION_STRING "0.2.0"

/* The version of the library linked in, "0.1.0": compare with the header's. */
const char *fragsim_version(void);
/* The same as FRAGSIM_VERSION_NUMBER computes it (0.1.0 is 100). */
unsigned fragsim_version_number(void);

/*
 * Result codes. The first four are also fragsim's exit status; out of
 * memory and a size limit keep their own kind (and text), and exit 3 and
 * 2 (fragsim_exit_status).
 */
enum fragsim_rc {
	FRAGSIM_OK = 0,		/* done; every check holds */
	FRAGSIM_MISMATCH = 1,	/* a verification mismatch; a lane map invalid */
	FRAGSIM_EINPUT = 2,	/* bad input: the message says which and where */
	FRAGSIM_EINTERNAL = 3,	/* a failed write, an impossible state */
	FRAGSIM_ENOMEM = 4,	/* an allocation failed: "out of memory: <what>" */
	FRAGSIM_EBUDGET = 5,	/* over a size limit the case can change */
};

/* The exit status fragsim would give rc: 0, 1, 2 (input, limit) or 3. */
int fragsim_exit_status(enum fragsim_rc rc);

/* One error, lowercase, no full stop, what failed first. */
#define FRAGSIM_ERR_MAX 1024
struct fragsim_err {
	char msg[FRAGSIM_ERR_MAX];
};

/* ------------------------------------------------------------------ */
/* Lane maps                                                           */
/* ------------------------------------------------------------------ */

struct fragsim_lanemap;	/* opaque */

enum fragsim_operand { FRAGSIM_A = 0, FRAGSIM_B = 1, FRAGSIM_C = 2 };
enum fragsim_dtype {
	FRAGSIM_I8, FRAGSIM_U8, FRAGSIM_I32, FRAGSIM_F16, FRAGSIM_BF16,
	FRAGSIM_F32,
};

/* The builtin profiles: count, and the name of the i-th ("gfx936"...);
 * fragsim_builtin_name returns NULL for i outside [0, count). */
int fragsim_builtin_count(void);
const char *fragsim_builtin_name(int i);

/*
 * A builtin profile by name, else a profile YAML file (a path with '/'
 * or ending in .yaml). The map is validated: FRAGSIM_MISMATCH, and no
 * map, when it is not (gfx936-article is the shipped example). Free with
 * fragsim_lanemap_free.
 */
enum fragsim_rc fragsim_lanemap_load(const char *name_or_path,
				     struct fragsim_lanemap **out,
				     struct fragsim_err *err);

/*
 * An empty map for a wave of 32 or 64 lanes and an M x N x K instruction
 * (each 1..256); `name` (up to 63 bytes, no control character) is what
 * manifests record. Give
 * each operand with fragsim_lanemap_exprs or fragsim_lanemap_table, then
 * fragsim_lanemap_validate.
 */
enum fragsim_rc fragsim_lanemap_new(const char *name, int wave, int m, int n,
				    int k, struct fragsim_lanemap **out,
				    struct fragsim_err *err);

/*
 * Operand op: `elems` elements of `type` per lane (1..64), each entry
 * held `replicas` times (1..8; 1 but for RDNA3 wave32), and which entry
 * (row, col) lane `lane` element `e` holds, as expressions over lane and
 * e with C's integer operators (+ - * / % & | ^ << >>, parentheses):
 *
 *   fragsim_lanemap_exprs(lm, FRAGSIM_A, FRAGSIM_I8, 8, 1,
 *                         "lane % 16", "8 * (lane / 16) + e", &err);
 *
 * A bad expression is FRAGSIM_EINPUT naming the operand, the column and
 * the problem; for C's col "lane / 16 + 4 * ee": "C.col: at column 17 of
 * the expression: unknown name 'ee' (names are lane and e)".
 */
enum fragsim_rc fragsim_lanemap_exprs(struct fragsim_lanemap *lm,
				      enum fragsim_operand op,
				      enum fragsim_dtype type, int elems,
				      int replicas, const char *row,
				      const char *col, struct fragsim_err *err);

/* The same from tables: lane l element e holds (row[l*elems + e],
 * col[l*elems + e]); each table has wave * elems entries. After a failed
 * call (either form) the operand is not given. */
enum fragsim_rc fragsim_lanemap_table(struct fragsim_lanemap *lm,
				      enum fragsim_operand op,
				      enum fragsim_dtype type, int elems,
				      int replicas, const int32_t *row,
				      const int32_t *col,
				      struct fragsim_err *err);

/*
 * Check that every operand is given, every (lane, e) in range and every
 * matrix entry held exactly `replicas` times. FRAGSIM_MISMATCH when not,
 * the message naming the operand not given, or the count and the first
 * problem.
 */
enum fragsim_rc fragsim_lanemap_validate(struct fragsim_lanemap *lm,
					 struct fragsim_err *err);

/* Entry (*row, *col) that lane `lane` element e of op holds: 0, or -1 when
 * lane or e is out of range, op not given, or lm, row or col NULL. */
int fragsim_lanemap_entry(const struct fragsim_lanemap *lm,
			  enum fragsim_operand op, int lane, int e, int *row,
			  int *col);

/* The shape of a map; elems[op] is 0 for an operand not given yet. */
struct fragsim_lanemap_info {
	const char *name;	/* valid while the map lives */
	int wave, m, n, k;
	int elems[3];		/* by enum fragsim_operand */
	int replicas[3];
	int valid;		/* 1 once fragsim_lanemap_validate passed */
};
/* lm NULL: *out zeroed (name NULL); out NULL: nothing. */
void fragsim_lanemap_info(const struct fragsim_lanemap *lm,
			  struct fragsim_lanemap_info *out);

/* Free a map; NULL is a no-op. */
void fragsim_lanemap_free(struct fragsim_lanemap *lm);

/* ------------------------------------------------------------------ */
/* Cases                                                               */
/* ------------------------------------------------------------------ */

struct fragsim_case;	/* opaque: the case, its lane map, inputs, results */

/*
 * Load a case file (docs/cases.md, docs/case-schema.md) and its lane map
 * (the case's isa:). Relative paths inside resolve against the file's
 * directory. Errors name file:line:col and the key. Free with
 * fragsim_case_free.
 */
enum fragsim_rc fragsim_case_load(const char *path, struct fragsim_case **out,
				  struct fragsim_err *err);

/* The same from YAML text[0..len): `origin` names it in errors (NULL:
 * "<text>"), `dir` resolves its relative paths (NULL: as written).
 * len 0 is an empty document, FRAGSIM_EINPUT; text may be NULL then. */
enum fragsim_rc fragsim_case_parse(const char *text, size_t len,
				   const char *origin, const char *dir,
				   struct fragsim_case **out,
				   struct fragsim_err *err);

/*
 * A case from a few fields; 0 or NULL leaves a field at the case file's
 * default (docs/case-schema.md). Sequence s has context[s] keys, the last
 * tokens[s] of which are its query tokens (decode: default 1; prefill:
 * the chunk, after context - tokens keys of history).
 */
#define FRAGSIM_PARAMS_MAX_SEQS 16
struct fragsim_case_params {
	const char *name;	/* default "case" */
	const char *isa;	/* builtin profile or path; default gfx936 */
	int prefill;		/* 0 decode, 1 prefill; anything else refused */
	int q_heads, kv_heads, head_dim;	/* default 24, 4, 256 */
	int block_size;		/* default 16 */
	uint64_t seed;		/* of every generated tensor; default 0 */
	int n_seqs;		/* 1..FRAGSIM_PARAMS_MAX_SEQS */
	int context[FRAGSIM_PARAMS_MAX_SEQS];
	int tokens[FRAGSIM_PARAMS_MAX_SEQS];
};

/* Validated like a case file; an error names the key, e.g.
 * "model.head_dim: must be a multiple of 16". */
enum fragsim_rc fragsim_case_build(const struct fragsim_case_params *p,
				   struct fragsim_case **out,
				   struct fragsim_err *err);

/*
 * Run the case under a copy of lm (validated, or validated here) instead
 * of its isa:'s map: the hardware follows lm. Before fragsim_run only.
 * FRAGSIM_EINPUT, here, for a map that is not valid or that the case
 * cannot run on (the kernel's i8 A and B and i32 C, and the rules
 * between a case and its instruction that fragsim_case_load checks).
 */
enum fragsim_rc fragsim_case_set_lanemap(struct fragsim_case *c,
					 const struct fragsim_lanemap *lm,
					 struct fragsim_err *err);

/* The case's name, and its lane map (owned by the case); NULL for a
 * NULL case. */
const char *fragsim_case_name(const struct fragsim_case *c);
const struct fragsim_lanemap *fragsim_case_lanemap(const struct fragsim_case *c);

/* Free a case and all it holds; NULL is a no-op. */
void fragsim_case_free(struct fragsim_case *c);

/* ------------------------------------------------------------------ */
/* Running, comparing, goldens                                         */
/* ------------------------------------------------------------------ */

/* The executor of the emulation; all give the same bytes. */
enum fragsim_exec {
	FRAGSIM_EXEC_AUTO,	/* the fastest this CPU runs */
	FRAGSIM_EXEC_SCALAR,	/* per lane: the specification */
	FRAGSIM_EXEC_PORTABLE,	/* the fast path in plain C */
	FRAGSIM_EXEC_AVX2,	/* FRAGSIM_EINPUT where the CPU lacks it */
	FRAGSIM_EXEC_AVX512,
};

/*
 * The most OpenMP threads fragsim_run starts. Threads are the program's
 * (OMP_NUM_THREADS, omp_set_num_threads, all cores by default); asked
 * for more, fragsim_run runs this many and gives the calling thread its
 * setting back on return.
 */
#define FRAGSIM_THREADS_MAX 1024

/*
 * Make the inputs (quantized Q, paged K/V caches, block tables), run the
 * emulated kernel with `exec`, and, unless emulate_only, the reference
 * and the comparison. Returns the verdict, as `fragsim run` gives it:
 * FRAGSIM_OK when every check holds (emulate_only: nothing was checked;
 * a case with expect: mismatch, when a check caught its planted bug),
 * FRAGSIM_MISMATCH when not (fragsim_summary has the comparison's own);
 * FRAGSIM_EINPUT for a case it cannot run. Once per case.
 */
enum fragsim_rc fragsim_run(struct fragsim_case *c, enum fragsim_exec exec,
			    int emulate_only, struct fragsim_err *err);

/* The comparison of a run, in brief; NaN where a figure was not computed. */
struct fragsim_summary {
	int checked;		/* 1 when the reference ran */
	int expect_mismatch;	/* the case plants a bug (expect: mismatch) */
	long rows;		/* attention rows compared */
	long compared;		/* elements compared, all tensors */
	long mismatches;	/* elements outside tolerance */
	int failed_checks;	/* check: thresholds not met */
	double out_cos_min;	/* output vs the float path: cosine, min */
	double score_max_abs;	/* max |score - float score| (INT8's cost) */
	double kld_mean;	/* KL(P_float || P_sim), nats, mean over rows */
	double top1;		/* same top-1 key, 0..1 */
	char first[256];	/* the first mismatch, "" when none */
};

/* Fill *out from the last fragsim_run; FRAGSIM_EINPUT before any, or
 * for c or out NULL (out, when given, zeroed). */
enum fragsim_rc fragsim_summary(const struct fragsim_case *c,
				struct fragsim_summary *out);

/*
 * Write the run's goldens into dir (docs/design.md 3): .npy files and
 * manifest.json, or one golden.safetensors; the directory appears whole
 * or not at all, and replaces only a fragsim directory. Refused with
 * FRAGSIM_MISMATCH when the run's checks failed or the case plants a bug.
 */
enum fragsim_rc fragsim_write_goldens(const struct fragsim_case *c,
				      const char *dir, int safetensors,
				      struct fragsim_err *err);

#ifdef __cplusplus
}
#endif

#endif
