/*
 * probe_int.h - what sim/lanemap/probe.c (plans, the solver) and sim/lanemap/probe_short.c
 * (the short plan's products) share inside the probe; not for callers.
 *
 * The solver's node numbering (probe.c's header): A slot sa is node sa,
 * B slot sb is sa_n + sb, C slot sc is sa_n + sb_n + sc. Its products
 * are grouped by C slot: t[first[sc] .. first[sc + 1]) all sum into sc.
 */
#ifndef PROBE_INT_H
#define PROBE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "probe.h"

/* One product: C slot c receives A slot a times B slot b. */
struct probe_term {
	int a, b, c;
};

struct probe_uf {
	int *up;	/* parent; a root points at itself */
};

struct probe_solver {
	const struct lanemap *plan, *anchor;
	const struct probe_layout *pl;
	const uint8_t *a, *b;	/* the plan's waves */
	const int32_t *c;	/* the device's answers */
	int sa, sb, sc, nodes;	/* slots of A, B, C; all three */
	int abits, bbits;	/* short: bits of an A and a B slot number */
	struct probe_term *t;	/* nt products, grouped by C slot */
	int nt;
	int *first;		/* [sc + 1]: terms of C slot s are t[first[s]..first[s+1]) */
	struct probe_uf rel[3];	/* rows, cols, k */
	uint8_t *used[3];	/* node takes part in the relation */
	int *cls[3];		/* node -> class index, -1 when not in one */
	int ncls[3];
	int *label[3];		/* class -> label */
	int as_signed;		/* 1 A, 2 B: a u8 operand of the plan read as
				   i8 (the device's reading, probe_solve) */
};

/* An 8-bit register value as the operand's type reads it. */
int32_t probe_load8(enum lm_dtype t, uint8_t v);

/* "A lane 1 e 1" for slot 9 of an 8-element A. */
/*
 * The first C slot of wave w whose answer is not what the products found
 * (s->t, s->first) predict: its index, with *got and *want; -1 when every
 * slot of the wave holds. Both plans' checks use it.
 */
int probe_wave_mismatch(const struct probe_solver *s, int w, int32_t *got,
			int64_t *want);
void probe_slot_name(const struct probe_solver *s, enum lm_operand op, int slot,
		     char *out, size_t len);

/*
 * Short plan (probe_short.c): the products from the pair waves, spanned
 * from A slot 0's first product, into s->t, s->nt and s->first (s->first
 * allocated, s->t not); *span_dim = log2(nt). FS_EINPUT with err saying
 * which wave and slot no linear map explains; FS_ENOMEM out of memory.
 */
enum fs_rc probe_short_terms(struct probe_solver *s, int *span_dim, struct fs_err *err);

/* Every wave of the plan, predicted from s->t, must be what came back. */
enum fs_rc probe_short_predict(const struct probe_solver *s, struct fs_err *err);

/* Append to err's message that a short plan reads linear devices only. */
void probe_short_suggest(struct fs_err *err);

#endif
