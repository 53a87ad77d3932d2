/*
 * probeplan.h - a lane-map probe as files: the plan directory that
 * `fragsim probe plan` writes and a device harness reads, and the dump
 * directory the device (or `probe simulate`) answers with. What the waves
 * hold is sim/lanemap/probe.h; this is where they live on disk. Prints nothing.
 *
 *   plan/                                  dump/
 *     manifest.json  isa, waves, plan kind,  probe_c.npy    int32 [W, LANES, EC]
 *                    files and digests       manifest.json  (simulate writes one)
 *     profile.yaml   the plan's profile as a table: solve needs nothing else
 *     probe_a.npy    int8 [W, LANES, EA]   (uint8 when the profile says u8)
 *     probe_b.npy    int8 [W, LANES, EB]
 *
 * manifest.json (harnesses read isa and waves, and take W from the .npy):
 *
 *   {"tool": "fragsim", "fragsim_probe": 1, "fragsim_version": "0.1.0",
 *    "isa": "gfx936", "instruction": "v_mmac_i32_16x16x32_i8", "wave": 64,
 *    "waves": 22, "digit_base": 100,
 *    "plan": "short", "pair_values": [1, 101], "probe_slots": [0, 1, ...],
 *    "check_waves": ["ones", ...], "files": [...]}
 *
 * An exhaustive plan has no plan, pair_values or probe_slots keys, so it
 * stays byte for byte what fragsim wrote before short plans existed.
 * Loading rebuilds the plan from profile.yaml and the manifest's kind and
 * insists that probe_a/b are those bytes: a dump can only be read against
 * the plan it answers.
 */
#ifndef PROBEPLAN_H
#define PROBEPLAN_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/lanemap/probe.h"
#include "npy.h"

struct probeplan {
	struct lanemap *lm;		/* the plan's profile, validated */
	struct probe_layout layout;	/* which wave is which */
	uint8_t *a, *b;			/* [W * lanes * EA], [W * lanes * EB] */
};

/*
 * A profile (builtin name or YAML path), validated. NULL on failure with
 * *rc FS_EINPUT (not found, not valid: err says so) or FS_EINTERNAL.
 */
struct lanemap *probeplan_profile(const char *what, enum fs_rc *rc,
				  struct fs_err *err);

/* The .npy dtype of operand op (A, B) and the [W, lanes, elems] shape. */
enum npy_dtype probeplan_dtype(const struct lanemap *lm, enum lm_operand op);
void probeplan_shape(const struct lanemap *lm, int waves, enum lm_operand op,
		     size_t shape[3]);

/*
 * The plan for lm laid out by pl, written to dir whole or not at all
 * (lib/outdir.h: a directory fragsim wrote before is replaced).
 */
enum fs_rc probeplan_write(const char *dir, const struct lanemap *lm,
			   const struct probe_layout *pl, struct fs_err *err);

/*
 * Read the plan in dir back: profile.yaml, the manifest (kind, waves,
 * isa) and probe_a/b.npy, which must be the bytes the plan makes; then
 * every member of the manifest against that plan (sha256: of the files'
 * bytes), unknown members refused. On failure p holds nothing
 * (probeplan_free is still safe).
 */
enum fs_rc probeplan_load(const char *dir, struct probeplan *p, struct fs_err *err);
void probeplan_free(struct probeplan *p);

/*
 * A plan's manifest.json (text, len, read from path) against its
 * profile's name and the wave count of each kind (waves[PROBE_SHORT] < 0:
 * the profile cannot have a short plan). *kind is the plan's. In memory,
 * for the fuzzer too.
 */
enum fs_rc probeplan_manifest_check(const char *text, size_t len, const char *path,
				    const char *isa, const int waves[2],
				    enum probe_kind *kind, struct fs_err *err);

/* dir/probe_c.npy, which must be int32 [W, lanes, EC] for plan p. */
enum fs_rc probeplan_read_dump(const char *dir, const struct probeplan *p,
			       struct npy_array *c, struct fs_err *err);

/*
 * The answers c of a simulated device (profile name `device`) to plan p,
 * as a dump directory, whole or not at all.
 */
enum fs_rc probeplan_write_dump(const char *dir, const struct probeplan *p,
				const char *device, const int32_t *c,
				struct fs_err *err);

/*
 * lm as profile YAML that lib/profile.c loads back, with tables rather
 * than expressions (a found map need not have a formula). Malloc'ed,
 * NUL-terminated; NULL when out of memory.
 */
char *probeplan_profile_yaml(const struct lanemap *lm);

#endif
