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

/* sha256 of a profile's tables: same map, same digest, whatever the YAML. */
void golden_profile_digest(const struct lanemap *lm, char hex[65]);

#endif
