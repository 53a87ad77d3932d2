/*
 * lmprint.h - lane maps as text for people and as CSV/JSON for tools:
 * the owner grid per matrix entry, the per-lane view, one lane, one
 * entry, and validation reports. Only cli/ prints.
 */
#ifndef LMPRINT_H
#define LMPRINT_H

#include <stdio.h>

#include "../sim/lanemap/lanemap.h"

enum lm_format { LMF_TEXT, LMF_MD, LMF_CSV, LMF_JSON, LMF_C, LMF_BASIS, LMF_BASIS_JSON };

/* Parse "text|md|csv|json|c|basis|basis-json"; 0 ok, -1 unknown. */
int lmprint_format(const char *s, enum lm_format *out);

/* The map of the operands in mask (bit 1 << op): grid and per-lane view. */
void lmprint_map(FILE *f, const struct lanemap *lm, unsigned mask,
		 enum lm_format fmt);
/* Everything lane holds, in A, B and C. */
void lmprint_lane(FILE *f, const struct lanemap *lm, int lane,
		  enum lm_format fmt);
/* Who holds entry (row, col) of op; returns the number of owners. */
int lmprint_entry(FILE *f, const struct lanemap *lm, enum lm_operand op,
		  int row, int col, enum lm_format fmt);
/* A validation report, one problem per line (text) or a JSON object. */
void lmprint_report(FILE *f, const char *label, const struct lanemap *lm,
		    const struct lm_report *rep, enum lm_format fmt);

/*
 * The map as a self-contained C/C++/HIP/CUDA header (--format c): forward
 * and inverse functions and tables per operand. lm must be valid (the
 * inverse tables exist only then). isa is what --isa said, for the
 * comment that says how the header was made.
 */
void lmprint_c_header(FILE *f, const struct lanemap *lm, const char *isa);

/*
 * The operands in mask as linear maps over GF(2) (sim/lanemap/gf2.h): each row
 * and column bit as an XOR of lane and element bits, and the bases;
 * LMF_BASIS text, LMF_BASIS_JSON JSON (lmbasis.c).
 */
void lmprint_basis(FILE *f, const struct lanemap *lm, unsigned mask, enum lm_format fmt);

#endif
