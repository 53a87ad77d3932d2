/*
 * fuzz_plan.c - a probe plan's manifest.json into probeplan_manifest_check
 * (lib/probeplan.c), as fragsim probe solve and simulate read it, for a
 * plan of the builtin gfx936 profile (1027 waves exhaustive, 22 short).
 * The plan's other files are fuzzed where their readers are:
 * profile.yaml by fuzz_profile, probe_a.npy and probe_b.npy by fuzz_npy.
 *
 * Promises checked: any text is accepted or refused with a message, no
 * crash, no leak, no hang; an accepted one names a kind.
 */
#include "fuzz.h"

#include "../../lib/probeplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int waves[2] = { 1027, 22 };
	struct fs_err err = { 0 };
	enum probe_kind kind = (enum probe_kind)-1;

	if (probeplan_manifest_check((const char *)data, size, "plan/manifest.json",
				     "gfx936", waves, &kind, &err))
		FUZZ_ASSERT(err.msg[0]);
	else
		FUZZ_ASSERT(kind == PROBE_EXHAUSTIVE || kind == PROBE_SHORT);
	return 0;
}
