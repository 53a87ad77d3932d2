/*
 * fuzz_case.c - case YAML into the whole case loader, as fragsim run
 * reads it (runcase_load's steps without the file): case_load_text
 * (tools/case.c: keys, ranges, defaults, block tables, num_blocks
 * resolved), the profile it names (profile_resolve: a builtin name, or
 * a path, which here finds no file), lanemap_validate and route_check,
 * then the sizes every later stage derives from the case.
 *
 * Promises checked: any text gives a case or an error with a message,
 * no crash, no leak, no hang; a case that loads has the sizes the
 * emulator relies on (T, MAXCTX, blocks, G, segments) at least 1.
 */
#include "fuzz.h"

#include "../../sim/route.h"
#include "../../tools/case.h"
#include "../../tools/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fs_err err = { 0 };
	struct fs_case c;
	struct lanemap *lm;
	struct lm_report *rep;
	struct route_verdict rv;

	/* A directory no file is in: paths in the case resolve to nothing. */
	if (case_load_text((const char *)data, size, "fuzz.yaml",
			   "/nonexistent-fragsim-fuzz", &c, &err)) {
		FUZZ_ASSERT(err.msg[0]);
		return 0;
	}
	FUZZ_ASSERT(case_tokens_max(&c) >= 1);
	FUZZ_ASSERT(case_context_max(&c) >= 1);
	FUZZ_ASSERT(case_blocks_needed(&c) >= 1);
	FUZZ_ASSERT(case_group(&c) >= 1);
	for (int s = 0; s < c.n_seqs; s++)
		FUZZ_ASSERT(case_segments_of(&c, s) >= 1);
	lm = profile_resolve(c.isa, &err);
	if (lm) {
		rep = malloc(sizeof(*rep));
		FUZZ_ASSERT(rep);
		if (lanemap_validate(lm, rep) == FS_OK)
			route_check(&c, &rv);
		free(rep);
		lanemap_free(lm);
	}
	case_free(&c);
	return 0;
}
