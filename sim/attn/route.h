/*
 * route.h - is a case inside the legal envelope of the dedicated INT8
 * path? (docs/design.md 1.5: head_size 256, GQA ratio 6, no sliding window, no
 * shuffle cache, no ALiBi, no soft cap; prefill also 24 q / 4 kv heads.)
 * pv.mode int8 takes the same envelope: its own conditions (INT8 V, no
 * ALiBi or soft cap, per-token K scales) are the loader's, and a profile
 * a regroup cannot run on is the emulation's refusal; the verdict names
 * the second product the path runs.
 * A real deployment refuses anything else rather than running it with a
 * wrong mapping; fragsim runs it anyway, unless the case says strict.
 */
#ifndef ROUTE_H
#define ROUTE_H

#include "case.h"

#define ROUTE_MAX_REASONS 12

struct route_verdict {
	int inside;		/* 1: the INT8 path would be taken */
	int n;			/* reasons it would not */
	char reason[ROUTE_MAX_REASONS][128];
	/* pv.mode int8: which second product the path runs, e.g. "PV in INT8
	 * (regroup lds)"; "" for f32 PV, so f32 verdicts read as before */
	char pv[64];
};

void route_check(const struct fs_case *c, struct route_verdict *v);

#endif
