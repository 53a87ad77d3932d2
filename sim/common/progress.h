/*
 * progress.h - how far a long computation is, as counters a watcher
 * reads: the stage, the units of it done, and how many it has.
 *
 * sim/ and ref/ must not print (STYLE.md 3), yet a prefill check of a
 * few thousand tokens runs for minutes and the user should see how far
 * it is (issue 25 point 8). So the workers only count: the library says
 * which stage runs (fs_progress_stage, from one thread at a time: the
 * caller's, or one of a team under "omp single"), the stage's code says
 * how many units it has and
 * bumps the count as units finish (fs_progress_add, from any thread, at
 * a coarse grain: a work unit of the emulation, a block of the
 * reference's rows), and the command line reads the counters from a
 * timer thread and prints (cli/progress.c).
 *
 *   stage       units                              bumped by
 *   inputs      none (0: the share is unknown)     -
 *   emulation   tiles of the work units            sim/attn/attn.c, per unit or piece
 *   reference   attention rows                     ref/compare.c, per chunk of a block
 *   exact acc   accumulator tiles                  ref/compare.c, per chunk of tiles
 *
 * Invariants: the counters only count; nothing a worker computes reads
 * them, so results are the same bytes with or without a watcher, for
 * any thread count. A NULL progress is allowed everywhere and costs a
 * branch. Relaxed atomics: a watcher may see done of the old stage with
 * the new stage for an instant, so it clamps the share to [0, 1].
 */
#ifndef FS_PROGRESS_H
#define FS_PROGRESS_H

#include <stdatomic.h>

enum fs_stage {
	FS_STAGE_NONE,		/* nothing started yet */
	FS_STAGE_INPUTS,	/* generating and quantizing Q, K, V; paging */
	FS_STAGE_EMULATION,	/* the emulated kernel (sim/) */
	FS_STAGE_REFERENCE,	/* the reference rows and their comparison */
	FS_STAGE_EXACT_ACC,	/* every accumulator against its exact product */
	FS_STAGE_DONE,		/* finished (or failed) */
	FS_STAGE_N
};

struct fs_progress {
	atomic_int stage;		/* enum fs_stage */
	atomic_llong done;		/* units of the stage finished */
	atomic_llong total;		/* units the stage has; 0: unknown */
	/* Called by fs_progress_stage after the stage changed, on the
	 * thread that changed it; NULL: none. The CLI notes when the stage
	 * began there, and prints the prediction as the emulation starts. */
	void (*on_stage)(struct fs_progress *p);
	void *ctx;			/* the watcher's */
};

/* A new stage with nothing done; total 0 until its code says. */
static inline void fs_progress_stage(struct fs_progress *p, enum fs_stage s)
{
	if (!p)
		return;
	atomic_store_explicit(&p->total, 0, memory_order_relaxed);
	atomic_store_explicit(&p->done, 0, memory_order_relaxed);
	atomic_store_explicit(&p->stage, (int)s, memory_order_release);
	if (p->on_stage)
		p->on_stage(p);
}

/* The units the current stage has (set once, before its first add). */
static inline void fs_progress_total(struct fs_progress *p, long long n)
{
	if (p)
		atomic_store_explicit(&p->total, n, memory_order_relaxed);
}

/* n more units done; any thread. */
static inline void fs_progress_add(struct fs_progress *p, long long n)
{
	if (p)
		atomic_fetch_add_explicit(&p->done, n, memory_order_relaxed);
}

#endif
