/*
 * fuzz_profile.c - profile YAML into profile_load_text (lib/profile.c),
 * which compiles and evaluates each layout expression (sim/lanemap/expr.c) over
 * every lane and element, or reads tables; then lanemap_validate and the
 * printers fragsim lanemap uses (into memory).
 *
 * Promises checked: any text gives a lane map or an error with a
 * message, no crash (division by zero, shifts, overflow in expressions
 * included), no leak, no hang; a map that loads has a validation verdict
 * and prints as fragsim lanemap prints it.
 */
#include "fuzz.h"

#include "../../cli/lmprint.h"
#include "../../lib/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fs_err err = { 0 };
	struct lanemap *lm;
	struct lm_report *rep;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	enum fs_rc rc;

	/* A directory no file is in: a table: path resolves to nothing. */
	lm = profile_load_text((const char *)data, size, "fuzz.yaml",
			       "/nonexistent-fragsim-fuzz", &err);
	if (!lm) {
		FUZZ_ASSERT(err.msg[0]);
		return 0;
	}
	rep = malloc(sizeof(*rep));
	FUZZ_ASSERT(rep);
	rc = lanemap_validate(lm, rep);
	FUZZ_ASSERT(rc == FS_OK || rc == FS_MISMATCH);
	FUZZ_ASSERT((rc == FS_OK) == (rep->total == 0));
	f = open_memstream(&text, &len);
	FUZZ_ASSERT(f);
	lmprint_report(f, "fuzz", lm, rep, LMF_TEXT);
	lmprint_report(f, "fuzz", lm, rep, LMF_JSON);
	/* What fragsim lanemap prints, valid map or not. */
	lmprint_map(f, lm, 7, LMF_TEXT);
	lmprint_map(f, lm, 1, LMF_CSV);
	lmprint_lane(f, lm, 0, LMF_JSON);
	lmprint_lane(f, lm, lm->wave - 1, LMF_MD);
	if (lm->op[LM_C].rows > 0 && lm->op[LM_C].cols > 0)
		lmprint_entry(f, lm, LM_C, lm->op[LM_C].rows - 1, 0, LMF_TEXT);
	FUZZ_ASSERT(fclose(f) == 0);
	free(text);
	free(rep);
	lanemap_free(lm);
	return 0;
}
