/*
 * fuzz_plan.c - a probe plan's manifest.json into probe_manifest_check
 * (cli/cmd_probe.c), as fragsim probe solve and simulate read it, for
 * a plan of the builtin gfx936 profile (1027 waves). The plan's other
 * files are fuzzed where their readers are: profile.yaml by
 * fuzz_profile, probe_a.npy and probe_b.npy by fuzz_npy.
 *
 * Promises checked: any text is accepted or refused with a message, no
 * crash, no leak, no hang.
 */
#include "fuzz.h"

#include "../../cli/cmds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fs_err err = { 0 };

	if (probe_manifest_check((const char *)data, size, "plan/manifest.json",
				 "gfx936", 1027, &err))
		FUZZ_ASSERT(err.msg[0]);
	return 0;
}
