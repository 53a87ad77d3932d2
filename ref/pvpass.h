/*
 * pvpass.h - the reference's PV passes, one (group, head-dim piece) per
 * call, called by ref_groups_compute (ref.c) inside its "omp for" loops.
 *
 * Each row's sums go over its visible keys in key order, one fused
 * multiply-add a term, exactly the plain loops' (ref.c's header): the
 * tiles only share loads between independent sums.
 */
#ifndef PVPASS_H
#define PVPASS_H

#include <stddef.h>

#include "ref.h"

#define REF_PV_KEYS 64		/* keys gathered at a time in the PV passes */
#define REF_PV_DIMS 128		/* head-dim elements per piece of a PV pass */
#define REF_PV_SLICES (REF_PV_DIMS / 32)	/* TILE_SLICE-wide slices */

/* Quantized PV, head-dim elements [d0, d1) (a multiple of 16, at most
 * REF_PV_DIMS): out and out_absd of every row of grp. */
void pvpass_quant(const struct fs_case *c, const struct fs_inputs *in,
		  const struct ref_group *grp, int d0, int d1);

/* Float-path PV, the same piece: out_f of every row of grp. */
void pvpass_float(const struct fs_case *c, const struct fs_inputs *in,
		  const struct ref_group *grp, int d0, int d1);

/* What these passes take from ref.c: where block blk starts in the
 * caches, the page of key j, the keys row (s, t) sees, and the master
 * thread's timer of a part of a stage (ref_sub_begin returns 0 on
 * another thread; ref_sub_end then adds nothing). */
size_t ref_blk0(const struct fs_inputs *in, int blk);
void ref_page(const struct fs_inputs *in, int s, int j, int *blk, int *slot);
void ref_range(const struct fs_case *c, const struct fs_inputs *in, int s,
	       int t, int *lo, int *hi);
double ref_sub_begin(void);
void ref_sub_end(enum ref_stage st, double t0);

#endif
