/*
 * fuzz_case.c - case YAML into the whole case loader, as fragsim run
 * reads it (runcase_load's steps without the file): case_load_text
 * (lib/casefile.c and lib/caseschema.c: keys, ranges, defaults, block tables, num_blocks
 * resolved), the profile it names (profile_resolve: a builtin name, or
 * a path, which here finds no file), lanemap_validate and route_check;
 * then, for a small case, the run itself: inputs, the emulation on the
 * scalar executor (the specification), the reference and the
 * comparison, and the emulation again on the fast path.
 *
 * Promises checked: any text gives a case or an error with a message,
 * no crash, no leak, no hang; a loaded case has the sizes the emulator
 * relies on (T, MAXCTX, blocks, G, segments) at least 1; a small case
 * runs (or is refused by its route) without an internal error, and the
 * fast path gives the scalar executor's bytes (any NaN equals any NaN:
 * the sign of inf - inf's NaN follows the compiler's operand order).
 */
#include "fuzz.h"

#include "../../sim/attn/route.h"
#include "../../lib/casefile.h"
#include "../../lib/profile.h"
#include "../../lib/runcase.h"

/* Small enough to run at fuzzing speed: the work is keys x q heads x D. */
static int small(const struct fs_case *c)
{
	long keys = 0;

	for (int s = 0; s < c->n_seqs; s++)
		keys += (long)c->seqs[s].context * c->seqs[s].tokens;
	return keys * c->q_heads * c->head_dim <= (1L << 16) &&
	       c->num_blocks <= 4096 && !c->q.npy[0] && !c->k.npy[0] &&
	       !c->v.npy[0];
}

static void same_floats(const float *a, const float *b, size_t n)
{
	if (!a || !b) {
		FUZZ_ASSERT(a == b);
		return;
	}
	for (size_t i = 0; i < n; i++)
		FUZZ_ASSERT(!memcmp(&a[i], &b[i], sizeof(float)) ||
			    (a[i] != a[i] && b[i] != b[i]));
}

/* r, its case and profile loaded: run it, then on the fast path. */
static void run(struct runcase *r)
{
	struct attn_opts fast = { .exec = ATTN_EXEC_AUTO };
	struct fs_err err = { 0 };
	struct attn_result f;
	enum fs_rc rc;
	size_t rows;

	r->exec = ATTN_EXEC_SCALAR;
	rc = runcase_exec(r, &err);
	if (rc) {
		FUZZ_ASSERT(rc == FS_EINPUT && err.msg[0]);
		return;
	}
	FUZZ_ASSERT(runcase_status(r) != FS_EINTERNAL);
	fast.drop = r->dropped;
	memset(&f, 0, sizeof(f));
	FUZZ_ASSERT(runcase_emulate(r, &r->c, &fast, &f, &err) == FS_OK);
	rows = (size_t)f.S * (size_t)f.T * (size_t)f.Hq;
	same_floats(r->sim.out, f.out, rows * (size_t)f.D);
	same_floats(r->sim.scores, f.scores, rows * (size_t)f.MAXCTX);
	FUZZ_ASSERT(r->sim.n_tiles == f.n_tiles || !f.acc);
	attn_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fs_err err = { 0 };
	struct runcase r;
	struct lm_report *rep;

	memset(&r, 0, sizeof(r));
	/* A directory no file is in: paths in the case resolve to nothing. */
	if (case_load_text((const char *)data, size, "fuzz.yaml",
			   "/nonexistent-fragsim-fuzz", &r.c, &err)) {
		FUZZ_ASSERT(err.msg[0]);
		return 0;
	}
	FUZZ_ASSERT(case_tokens_max(&r.c) >= 1);
	/* Decode sequences of context 0 (padded batch entries) have no key,
	 * no block and, under split-K, no segment. */
	FUZZ_ASSERT(case_context_max(&r.c) >= 0);
	FUZZ_ASSERT(case_blocks_needed(&r.c) >= 0);
	FUZZ_ASSERT(case_group(&r.c) >= 1);
	for (int s = 0; s < r.c.n_seqs; s++)
		FUZZ_ASSERT(case_segments_of(&r.c, s) >= (r.c.seqs[s].context > 0));
	r.lm = profile_resolve(r.c.isa, &err);
	rep = malloc(sizeof(*rep));
	FUZZ_ASSERT(rep);
	if (r.lm && lanemap_validate(r.lm, rep) == FS_OK) {
		route_check(&r.c, &r.route);
		if (small(&r.c))
			run(&r);
	}
	free(rep);
	runcase_free(&r);
	return 0;
}
