/*
 * golden.h - the golden directory of a run (docs/design.md 3.3): .npy files (or
 * one golden.safetensors) and manifest.json, written into a temporary
 * directory and renamed into place, so a failed run leaves nothing.
 */
#ifndef GOLDEN_H
#define GOLDEN_H

#include "runcase.h"

/* GOLDEN_SAFETENSORS_BF16: safetensors with q and out stored as BF16. */
enum golden_format { GOLDEN_NPY, GOLDEN_SAFETENSORS, GOLDEN_SAFETENSORS_BF16 };

enum fs_rc golden_write(const struct runcase *r, const char *dir,
			enum golden_format fmt, struct fs_err *err);

/*
 * The tensors golden_write writes for r in format fmt, in its order:
 * each one's name (without .npy), its data bytes (the .npy header, the
 * safetensors header and the manifest aside) and its golden: group
 * (enum case_golden bit). Returns how many, at most GOLDEN_MAX_TENSORS.
 */
#define GOLDEN_MAX_TENSORS 24
struct golden_entry {
	const char *name;
	double bytes;
	unsigned group;
};
int golden_list(const struct runcase *r, enum golden_format fmt,
		struct golden_entry *e);

/* sha256 of a profile's tables: same map, same digest, whatever the YAML. */
void golden_profile_digest(const struct lanemap *lm, char hex[65]);

#endif
