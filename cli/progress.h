/*
 * progress.h - what a long run or case says on stderr while it runs
 * (issue 25 points 8, 9): the stage, the share done and the time left.
 *
 *   terminal   one line, redrawn in place, cleared when the case ends:
 *              fragsim: NAME: reference 41% (26880 of 65536 rows), about 1 min 12 s left
 *   otherwise  one line per stage, as it starts once the threshold has
 *              passed (the stage running then gets its line then), with
 *              the share done when it is known and when it was printed:
 *              fragsim: NAME: emulation at 2.3 s, about 1 min 35 s left
 *              fragsim: NAME: reference at 8.7 s, about 1 min 29 s left
 *   --quiet    nothing
 *
 * Nothing shows before the case has run PROGRESS_AFTER seconds
 * (FRAGSIM_PROGRESS_AFTER overrides it, for tests and logs). The
 * prediction of a case that takes over a minute (runcase_predict) is a
 * note before its emulation starts, whatever the elapsed time; --quiet
 * silences it too. The library only counts (sim/common/progress.h);
 * this is the only code that prints it.
 */
#ifndef CLI_PROGRESS_H
#define CLI_PROGRESS_H

#include <pthread.h>
#include <stdio.h>

#include "../lib/runcase.h"

#define PROGRESS_AFTER 2.0	/* seconds before anything shows */
#ifndef PROGRESS_PREDICT_NOTE	/* -D...=0 at build time shows every prediction */
#define PROGRESS_PREDICT_NOTE 60.0	/* a case predicted longer says so */
#endif

enum progress_mode { PROGRESS_OFF, PROGRESS_TTY, PROGRESS_LINES };

struct progress {
	struct fs_progress p;		/* what the library counts */
	const struct runcase *r;	/* its name (set before the timer starts) */
	/* Copied from r under mu as the emulation starts, for the timer:
	 * the main thread writes r's while the inputs stage runs. */
	struct runcase_prediction pred;
	int emulate_only;
	unsigned dropped;
	enum progress_mode mode;
	int quiet;
	double after;			/* PROGRESS_AFTER or the environment's */
	double t0, t_stage;		/* start of the case, of the stage */
	int lined;			/* PROGRESS_LINES: stage whose line is out */
	int shown;			/* PROGRESS_TTY: a line is on screen */
	int running;			/* the timer thread was started */
	int stop;			/* under mu: the timer must end */
	pthread_t timer;
	pthread_mutex_t mu;		/* stderr and the fields above */
	pthread_cond_t cv;
};

/* Watch r (r->progress is set to g->p): mode from isatty(2) unless
 * quiet, then the timer thread for a terminal. */
void progress_start(struct progress *g, struct runcase *r, int quiet);
/* Stop the timer, clear a line on screen; r->progress is unset. */
void progress_stop(struct progress *g, struct runcase *r);

/*
 * A command's own line over many cases (mutate: the case and the class
 * it is at), in the modes above and after the same threshold: on a
 * terminal drawn over the last and cleared at the end; otherwise the
 * lines progress_line_say is told are lines, each printed; --quiet
 * nothing. No timer: the command says when it moves on.
 */
struct progress_line {
	enum progress_mode mode;
	double after, t0;
	int shown;			/* a drawn line is on the terminal */
};

void progress_line_start(struct progress_line *l, int quiet);
/* "fragsim: " TEXT ", at 1 min 2 s"; line: print it when not a terminal. */
void progress_line_say(struct progress_line *l, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void progress_line_stop(struct progress_line *l);

/* "42 s", "1 min 52 s", "2 h 05 min" into buf[32]. */
const char *progress_duration(double s, char buf[32]);

#endif
