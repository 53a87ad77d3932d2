/*
 * diffcase.h - a device dump against the simulation of its case: where
 * they differ, element by element, and which wrong assumption explains it.
 *
 * The expectation is the case as written, kernel: section included: a
 * dump that reproduces a case planting c_columns: contiguous matches that
 * case. Hypotheses are the expectation with one more thing changed:
 *   - one bug class of sim/attn/kernel.h planted (those the case does not
 *     already carry, that can change the case (kernel_bug_na) and that
 *     kernel_plant can express); page_walk counts twice, none (a
 *     sequence's blocks read as consecutive) and identity (the logical
 *     block index read as the physical block);
 *   - another builtin profile of the same shape as the hardware map
 *     under the case's kernel ("the hardware is really X");
 *   - the same profile as both kernel and hardware map ("the kernel was
 *     written and run for X": same scores, other register order);
 *   - when none of those matches exactly, two classes planted together
 *     (DIFF_PAIR_TOP): two bugs at once.
 *
 * Comparison rules: integers exactly; floats bit for bit (==) unless a
 * tolerance is given; NaN equals NaN only where the simulation has NaN,
 * and an infinity equals only the same infinity, whatever the tolerance.
 * A float tensor the dump holds as BF16 (d->bf16) is compared with the
 * simulation's value rounded to BF16 (nearest even), by the same rules.
 * Elements that do not exist are not compared: rows of query tokens past
 * a sequence's tokens, and accumulator slots whose key is at or past the
 * context (they hold whatever the kernel loaded).
 */
#ifndef DIFFCASE_H
#define DIFFCASE_H

#include "dump.h"
#include "runcase.h"

#define DIFF_MAX_SHOW 10000	/* --max bound */

struct diff_opts {
	double tol;		/* floats: equal when |got - want| <= tol; 0: == */
	int max_show;		/* mismatches annotated per tensor, 0..DIFF_MAX_SHOW */
};

/* Where one mismatch is. Fields that do not apply are -1. */
struct diff_loc {
	int ndim;
	size_t idx[5];		/* index into the dumped tensor */
	int s, t, qh, kvh;	/* sequence, query token, q head, kv head */
	int key, block, slot;	/* key token, and where the block table puts it */
	int dim, seg;		/* head-dim element, split-K segment */
	long tile;		/* the simulation's tile (acc_tiles row) */
	int kstep;		/* K-step: acc with per_block32, q_int8 */
	char operand;		/* 'C' (acc, scores) or 'A' (q_int8); 0 none */
	int lane, elem;		/* the operand's register slot holding it */
	int row, col;		/* the operand's matrix entry */
	double got, want;	/* dump, simulation; want NaN with no tile */
	int no_tile;		/* the hypothesis did not execute this tile */
	int unwritten;		/* got is the poison of an entry the kernel
				   never wrote (DIFF_POISON_*) */
};

/*
 * What a harness pre-fills its outputs with (tools/device/fragsim_dump.h,
 * FSD_POISON_*), so an entry the kernel never writes is seen as such:
 * an int32 past any INT8 tile's |acc| (1024 x 127 x 128 < 2^24), and a
 * quiet NaN whose payload no arithmetic produces. A poisoned score where
 * the simulation has -inf (a masked key, a tile a kernel may skip) is no
 * mismatch; anywhere else it is one, reported as unwritten.
 */
#define DIFF_POISON_I32 0x5a5a5a5a
#define DIFF_POISON_F32_BITS 0x7fe5a5a5u

struct diff_stat {
	int present;		/* the dump holds this tensor */
	int bf16;		/* as BF16: compared with the simulation rounded */
	long compared, mismatches;
	long unwritten;		/* of the mismatches: poison (never written) */
	double max_abs, max_rel;	/* over mismatches; inf for NaN/inf */
	int n_shown;
	struct diff_loc *shown;	/* the first max_show mismatches, dump order */
};

struct diff_report {
	struct diff_stat stat[DUMP_COUNT];	/* DUMP_ACC_TILES unused */
	long compared, mismatches;		/* over all tensors */
};

/*
 * Compare dump d with sim, the result of emulating some variant of the
 * case r->c on r->in (r->lm places the dumped registers). Fills rep;
 * diffcase_report_free() after. FS_OK, or FS_ENOMEM.
 */
enum fs_rc diffcase_compare(const struct runcase *r, const struct attn_result *sim,
			    const struct dump *d, const struct diff_opts *o,
			    struct diff_report *rep, struct fs_err *err);
void diffcase_report_free(struct diff_report *rep);

#define DIFF_MAX_HYP 192

/* Pairs of bug classes tried when no single hypothesis matches: the
 * DIFF_PAIR_TOP best classes that reproduce some entry the case as
 * written gets wrong, two by two (a two-bug dump's classes each
 * reproduce the entries the other leaves alone), and the best of them
 * with every other class (one bug downstream of another reproduces
 * nothing alone). */
#define DIFF_PAIR_TOP 8

struct diff_hyp {
	char name[256];		/* "kernel assumption c_columns=contiguous" */
	long matched;		/* elements the hypothesis reproduces */
	long fixed;		/* of them, entries the case as written gets wrong */
	int bug, bug2;		/* its classes (enum kern_bug); -1: none (a lane
				 * map, a row layout), bug2 -1: one class */
};

/* A hypothesis that applies but was not run, and why. */
struct diff_notrun {
	char name[256];
	char why[512];		/* "the emulation's output needs 20.1 GiB, over ..." */
};

struct diff_diagnosis {
	long compared;		/* elements per hypothesis (the same for all) */
	long expect_matched;	/* the case as written */
	int n;			/* hypotheses run, best first (stable order) */
	struct diff_hyp h[DIFF_MAX_HYP];
	int n_skipped;		/* hypotheses that do not apply to the case */
	char skipped[2048];	/* their names, comma separated; ", ..." when cut */
	int n_notrun;		/* hypotheses that apply but could not be run */
	struct diff_notrun notrun[DIFF_MAX_HYP];
};

/*
 * Emulate every hypothesis and rank it against the dump: every class,
 * row layout and lane map alone; and, when none matches exactly, pairs
 * of classes (DIFF_PAIR_TOP above), named "kernel assumptions A=x and
 * B=y together". No hypothesis
 * vanishes: one the case cannot express is listed in skipped (not
 * applicable); one over a size limit (FS_EBUDGET) in notrun with the
 * limit's text; out of memory or an internal error in any hypothesis
 * stops the diagnosis with that error, "hypothesis <name>: " before it
 * (a ranking that silently lacks a hypothesis could name the wrong bug).
 */
enum fs_rc diffcase_diagnose(const struct runcase *r, const struct dump *d,
			     const struct diff_opts *o, struct diff_diagnosis *dg,
			     struct fs_err *err);

/*
 * The single hypotheses of case r emulated once and kept, to diagnose
 * many dumps of one case (a test's matrix of planted bugs): the same
 * hypotheses, ranking and verdict as diffcase_diagnose, whose results
 * it would compute per dump; pairs are still emulated per dump. Holds
 * every hypothesis's result (memory: that many simulations of r), so
 * the CLI, which diagnoses one dump, does not use it.
 */
struct diff_hypset {
	int n;
	struct diff_hyp h[DIFF_MAX_HYP];	/* name, bug, bug2 */
	struct attn_result *res;		/* [DIFF_MAX_HYP], n used */
	struct diff_diagnosis notes;		/* skipped and not run */
};

enum fs_rc diffcase_hypset_build(const struct runcase *r, struct diff_hypset **hs,
				 struct fs_err *err);
enum fs_rc diffcase_diagnose_set(const struct runcase *r, const struct diff_hypset *hs,
				 const struct dump *d, const struct diff_opts *o,
				 struct diff_diagnosis *dg, struct fs_err *err);
void diffcase_hypset_free(struct diff_hypset *hs);

/*
 * "diagnosis: matches ... exactly (n/n elements)" (a class, a pair of
 * classes together, a lane map); else the closest single hypothesis and
 * its share of the entries the case as written gets wrong, "diagnosis:
 * no exact match; closest single is H: it reproduces f of the m
 * mismatching entries (p%; k/n elements)"; else "no hypothesis
 * reproduces the dump".
 */
void diffcase_verdict(const struct diff_diagnosis *dg, char *buf, size_t len);

#endif
