/*
 * mutneeds.h - what a case needs to show a bug class, for `fragsim
 * mutate`'s survivors: "SURVIVED 2 case(s): no context in the suite ends
 * inside a 16-key tile". A class that applies to a case (kernel_bug_na)
 * can still leave it bit for bit unchanged; what it needs is a property
 * of a case's shape and block tables, computed without running it.
 * mutneeds.c's head has the table of needs.
 */
#ifndef MUTNEEDS_H
#define MUTNEEDS_H

#include <stddef.h>

struct runcase;
struct lanemap;

/* What the cases a class ran on had, summed by needs_note. */
struct need_seen {
	unsigned seen;		/* needs some case it ran on has */
	int complete;		/* a case it ran on had all its needs */
	int tile_n;		/* N of the cases it ran on; -1 mixed */
	int group_k;		/* and their PV group's K; -1 mixed */
};

/* The needs (bits) case r has; its inputs are built. */
unsigned needs_of_case(const struct runcase *r);

/* Class b (enum kern_bug) ran on a case with needs `has` on map lm. */
void needs_note(struct need_seen *ns, int b, unsigned has, const struct lanemap *lm);

/* What a case that shows class b has ("exposed_by"), in the sizes of
 * ns's cases (N or K where their maps differ). */
void needs_exposed_by(char *buf, size_t len, int b, const struct need_seen *ns);

/* Why class b survived cases ns: the needs none of them has, or that no
 * case had them all, or that one had and still passed its checks. */
void needs_hint(char *buf, size_t len, int b, const struct need_seen *ns);

#endif
