/*
 * attn_spec.h - the scalar executor (attn_spec.c), the specification of
 * the emulated kernel. Called by the driver (attn.c) only; it calls
 * attn_common.c and sim/lanemap/mmac, never the driver or the fast executor.
 */
#ifndef ATTN_SPEC_H
#define ATTN_SPEC_H

#include "attn_int.h"
#include "../common/slab.h"

/*
 * Carve a thread's scratch for units of at most nrt row tiles and nseg
 * split-K segments from s (slab.h: on an empty slab, count only).
 * Returns 0, or -1 when s is too small.
 */
int attn_scratch_carve(const struct kern *k, int nrt, int nseg, struct scratch *x,
		       struct slab *s);

/*
 * Run unit u on the scalar executor: its acc tiles from u->tile0, its
 * rows' scores, out, row_max/sum and split-K states into k->r. Adds the
 * replica rows that disagree with their primary to *replica_bad.
 * Returns 0, or -1 if the hardware map cannot be read (mmac).
 */
int attn_spec_unit(const struct kern *k, const struct unit *u,
		   struct scratch *x, long *replica_bad);

/*
 * The pieces of a unit that the INT8 PV executor (pv_int8.c) shares with
 * attn_spec_unit, so that its QK half is this file's, byte for byte:
 * which operand Q and K are (operand_order), the unit's rows and Q's
 * operand for every K-step of its row tiles
 * (x->rows, x->am; -1 if the map cannot be read), a segment's row states
 * reset to no key seen, K's registers for K-step ks of the tile at key
 * kb, Q's for K-step ks of a row tile, the scores of a tile from its C registers into the
 * workspace ws[m * N + n] (ps: scale_recovery after_softmax's sQ sK), the
 * workspace into scores, whether a workspace value is a masked key's, and
 * the merge of the unit's rows with the replica check.
 */
enum lm_operand attn_spec_q_operand(const struct kern *k);
enum lm_operand attn_spec_k_operand(const struct kern *k);
int attn_spec_unit_q(const struct kern *k, const struct unit *u,
		     struct scratch *x);
void attn_spec_seg_reset(const struct kern *k, struct rstate *st, int R);
void attn_spec_load_k(const struct kern *k, const struct unit *u, int kb,
		      int ks, uint8_t *reg);
void attn_spec_load_q(const struct kern *k, const struct row *rows, int ks,
		      uint8_t *reg);
void attn_spec_recover(const struct kern *k, const struct unit *u,
		       const struct row *rows, const int32_t *creg, int kb,
		       int seg_end, float *ws, float *ps);
void attn_spec_store_scores(const struct kern *k, const struct unit *u,
			    const struct row *rows, int kb, const float *ws);
int attn_spec_masked(const struct kern *k, float v);
void attn_spec_finish(const struct kern *k, const struct unit *u,
		      struct scratch *x, long *replica_bad);

#endif
