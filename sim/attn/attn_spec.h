/*
 * attn_spec.h - the scalar executor (attn_spec.c), the specification of
 * the emulated kernel. Called by the driver (attn.c) only; it calls
 * attn_common.c and sim/lanemap/mmac, never the driver or the fast executor.
 */
#ifndef ATTN_SPEC_H
#define ATTN_SPEC_H

#include "attn_int.h"

/*
 * A thread's scratch for units of at most nrt row tiles and nseg split-K
 * segments. Returns 0, or -1 out of memory (x then holds nothing).
 */
int attn_scratch_alloc(const struct kern *k, int nrt, int nseg,
		       struct scratch *x);
void attn_scratch_free(struct scratch *x);

/*
 * Run unit u on the scalar executor: its acc tiles from u->tile0, its
 * rows' scores, out, row_max/sum and split-K states into k->r. Adds the
 * replica rows that disagree with their primary to *replica_bad.
 * Returns 0, or -1 if the hardware map cannot be read (mmac).
 */
int attn_spec_unit(const struct kern *k, const struct unit *u,
		   struct scratch *x, long *replica_bad);

#endif
