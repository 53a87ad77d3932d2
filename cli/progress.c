/*
 * progress.c - the progress of one case on stderr (see progress.h).
 *
 * Two threads touch it: the one running the case, which calls on_stage
 * through the library (sim/common/progress.h) as each stage starts, and
 * the timer, which wakes every PROGRESS_TICK seconds. Once the case has
 * run PROGRESS_AFTER seconds, each stage shows as it starts (a log's
 * line for it; the terminal's line redrawn), the stage running when the
 * threshold passes shows then, and the timer redraws the terminal's
 * line with the share done. Both print under mu, so a line is never cut by
 * another. The counters are read without the lock (atomics): a reading
 * may pair the new stage with the old count for an instant, hence the
 * share clamped to 1.
 *
 * The time left: the current stage's rate so far (elapsed x undone /
 * done, once it has run PROGRESS_MIN_RATE seconds), else its predicted
 * seconds less the elapsed; plus the predicted seconds of the stages
 * still to come. Without a prediction (a case too small to measure, see
 * runcase_predict) the later stages are unknown and the line says the
 * time left "in this stage".
 */
#include "progress.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "../lib/clock.h"

#define PROGRESS_TICK 0.25	/* seconds between redraws */
#define PROGRESS_MIN_RATE 0.5	/* seconds of a stage before its rate counts */

/* by enum fs_stage */
static const char *const stage_name[FS_STAGE_N] = {
	"starting", "inputs", "emulation", "reference", "exact acc", "done",
};
static const char *const stage_unit[FS_STAGE_N] = {
	NULL, NULL, "tiles", "rows", "tiles", NULL,
};

const char *progress_duration(double s, char buf[32])
{
	long n = lround(s);

	if (s < 9.95)
		snprintf(buf, 32, "%.1f s", s < 0 ? 0.0 : s);
	else if (n < 60)
		snprintf(buf, 32, "%ld s", n);
	else if (n < 3600)
		snprintf(buf, 32, "%ld min %ld s", n / 60, n % 60);
	else
		snprintf(buf, 32, "%ld h %02ld min", n / 3600, (n % 3600) / 60);
	return buf;
}

/* Will stage s run in this case? (the emulation always does) */
static int stage_runs(const struct progress *g, int s)
{
	if (s == FS_STAGE_REFERENCE)
		return !g->emulate_only;
	if (s == FS_STAGE_EXACT_ACC)
		return !g->emulate_only && !(g->dropped & ATTN_DROP_ACC);
	return s == FS_STAGE_EMULATION;
}

/*
 * Seconds left, or -1 when unknown; *whole: 1 when it covers the whole
 * case, 0 when only the current stage (the later ones not predicted).
 */
static double time_left(const struct progress *g, int stage, long long done,
			long long total, double now, int *whole)
{
	const struct runcase_prediction *p = &g->pred;
	double in_stage = now - g->t_stage, left = -1, later = 0;

	*whole = 1;
	if (total > 0 && done > 0 && in_stage >= PROGRESS_MIN_RATE)
		left = in_stage * (double)(total - done) / (double)done;
	else if (p->made && p->sec[stage] > 0)
		left = p->sec[stage] > in_stage ? p->sec[stage] - in_stage : 0;
	for (int s = stage + 1; s < FS_STAGE_DONE; s++) {
		if (!stage_runs(g, s))
			continue;
		if (!p->made)
			*whole = 0;
		else
			later += p->sec[s];
	}
	if (left < 0)
		return *whole && p->made && later > 0 ? later : -1;
	return left + later;
}

/* The line for the current stage, without "\r" or "\n". */
static void describe(const struct progress *g, char *buf, size_t len)
{
	double now = clock_seconds();
	int stage = atomic_load_explicit(&g->p.stage, memory_order_acquire);
	long long done = atomic_load_explicit(&g->p.done, memory_order_relaxed);
	long long total = atomic_load_explicit(&g->p.total, memory_order_relaxed);
	const char *unit = stage >= 0 && stage < FS_STAGE_N ? stage_unit[stage] : NULL;
	size_t n;
	double left;
	int whole;
	char d[32];

	if (stage < 0 || stage >= FS_STAGE_N)
		stage = FS_STAGE_NONE;
	if (done > total)
		done = total;
	n = (size_t)snprintf(buf, len, "fragsim: %s: %s", g->r->c.name, stage_name[stage]);
	if (n < len && unit && total > 0)
		n += (size_t)snprintf(buf + n, len - n, " %d%% (%lld of %lld %s)",
				      (int)(100.0 * (double)done / (double)total), done,
				      total, unit);
	if (n < len && g->mode == PROGRESS_LINES)
		n += (size_t)snprintf(buf + n, len - n, " at %s",
				      progress_duration(now - g->t0, d));
	left = time_left(g, stage, done, total, now, &whole);
	if (n < len && left >= 0)
		snprintf(buf + n, len - n, ", about %s left%s", progress_duration(left, d),
			 whole ? "" : " in this stage");
}

/* Columns of the terminal on stderr; 80 when it does not say. */
static int columns(void)
{
	struct winsize ws;

	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		return ws.ws_col;
	return 80;
}

/* Draw line over the terminal's last, cut to fit one row (line is
 * written to). */
static void tty_draw(char *line)
{
	int w = columns() - 1;

	if ((int)strlen(line) > w)
		line[w] = '\0';
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
}

/* Clear the drawn line: the terminal holds no progress afterwards. */
static void tty_clear(void)
{
	fprintf(stderr, "\r\033[K");
	fflush(stderr);
}

/* Under mu: redraw the terminal's line. */
static void redraw(struct progress *g)
{
	char line[512];

	describe(g, line, sizeof(line));
	tty_draw(line);
	g->shown = 1;
}

/* Under mu: the stage's one line, once per stage, past the threshold. */
static void line_once(struct progress *g, int stage)
{
	char line[512];

	if (g->lined == stage)
		return;
	g->lined = stage;
	describe(g, line, sizeof(line));
	fprintf(stderr, "%s\n", line);
	fflush(stderr);
}

/* A note when the prediction says over a minute (before the emulation). */
static void predict_note(const struct progress *g)
{
	const struct runcase_prediction *p = &g->pred;
	char t[32], e[32], rf[32], a[32];

	if (!p->made || p->total <= PROGRESS_PREDICT_NOTE)
		return;
	fprintf(stderr, "fragsim: note: %s: predicted to take about %s here "
		"(emulation %s", g->r->c.name, progress_duration(p->total, t),
		progress_duration(p->sec[FS_STAGE_EMULATION], e));
	if (p->sec[FS_STAGE_REFERENCE] > 0)
		fprintf(stderr, ", reference %s",
			progress_duration(p->sec[FS_STAGE_REFERENCE], rf));
	if (p->sec[FS_STAGE_EXACT_ACC] > 0)
		fprintf(stderr, ", exact acc %s",
			progress_duration(p->sec[FS_STAGE_EXACT_ACC], a));
	fprintf(stderr, "), from the rates of a smaller case of its shape, timed "
		"just now in %.2f s%s\n", p->calib_sec, g->emulate_only ? "" :
		"; --emulate-only runs the emulation alone");
	fflush(stderr);
}

static void on_stage(struct fs_progress *fp)
{
	struct progress *g = fp->ctx;
	int stage = atomic_load_explicit(&fp->stage, memory_order_acquire);
	double now = clock_seconds();

	pthread_mutex_lock(&g->mu);
	g->t_stage = now;
	if (stage == FS_STAGE_EMULATION) {
		g->pred = g->r->pred;
		g->emulate_only = g->r->emulate_only;
		g->dropped = g->r->dropped;
	}
	if (stage == FS_STAGE_EMULATION && !g->quiet) {
		if (g->shown)
			fprintf(stderr, "\r\033[K"), g->shown = 0;
		predict_note(g);
	}
	/* Past the threshold a stage shows as it starts: its line in a log,
	 * the terminal's line redrawn (the timer adds the share done). */
	if (stage != FS_STAGE_DONE && now - g->t0 >= g->after) {
		if (g->mode == PROGRESS_LINES)
			line_once(g, stage);
		else if (g->mode == PROGRESS_TTY)
			redraw(g);
	}
	pthread_mutex_unlock(&g->mu);
}

static void *timer_main(void *arg)
{
	struct progress *g = arg;
	int stage;

	pthread_mutex_lock(&g->mu);
	while (!g->stop) {
		struct timespec ts;

		/* pthread_cond_timedwait takes CLOCK_REALTIME; an early wake
		 * only redraws sooner */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)(PROGRESS_TICK * 1e9);
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&g->cv, &g->mu, &ts);
		if (g->stop || clock_seconds() - g->t0 < g->after)
			continue;
		stage = atomic_load_explicit(&g->p.stage, memory_order_acquire);
		if (stage == FS_STAGE_NONE || stage == FS_STAGE_DONE)
			continue;
		if (g->mode == PROGRESS_TTY)
			redraw(g);
		else
			line_once(g, stage);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

/* FRAGSIM_PROGRESS_AFTER: seconds, a finite number >= 0; else the default. */
static double threshold(void)
{
	const char *s = getenv("FRAGSIM_PROGRESS_AFTER");
	char *end;
	double v;

	if (!s || !*s)
		return PROGRESS_AFTER;
	v = strtod(s, &end);
	return *end || !(v >= 0) || !isfinite(v) ? PROGRESS_AFTER : v;
}

void progress_start(struct progress *g, struct runcase *r, int quiet)
{
	memset(g, 0, sizeof(*g));
	g->r = r;
	g->quiet = quiet;
	g->mode = quiet ? PROGRESS_OFF : isatty(2) ? PROGRESS_TTY : PROGRESS_LINES;
	g->after = threshold();
	g->t0 = g->t_stage = clock_seconds();
	g->lined = -1;
	g->p.on_stage = on_stage;
	g->p.ctx = g;
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	r->progress = &g->p;
	r->predict = !quiet;
	/* The timer for a terminal; for a pipe, to give the stage that is
	 * running when the threshold passes its line. No thread, no
	 * progress: the case runs as before. */
	if (g->mode != PROGRESS_OFF)
		g->running = pthread_create(&g->timer, NULL, timer_main, g) == 0;
}

void progress_stop(struct progress *g, struct runcase *r)
{
	pthread_mutex_lock(&g->mu);
	g->stop = 1;
	pthread_cond_signal(&g->cv);
	pthread_mutex_unlock(&g->mu);
	if (g->running)
		pthread_join(g->timer, NULL);
	if (g->shown)
		tty_clear();
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	r->progress = NULL;
}

void progress_line_start(struct progress_line *l, int quiet)
{
	memset(l, 0, sizeof(*l));
	l->mode = quiet ? PROGRESS_OFF : isatty(2) ? PROGRESS_TTY : PROGRESS_LINES;
	l->after = threshold();
	l->t0 = clock_seconds();
}

void progress_line_say(struct progress_line *l, int line, const char *fmt, ...)
{
	double t = clock_seconds() - l->t0;
	char text[512], d[32];
	va_list ap;

	if (l->mode == PROGRESS_OFF || t < l->after || (l->mode == PROGRESS_LINES && !line))
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (l->mode == PROGRESS_LINES) {
		fprintf(stderr, "fragsim: %s, at %s\n", text, progress_duration(t, d));
		fflush(stderr);
	} else {
		char row[600];

		snprintf(row, sizeof(row), "fragsim: %s, at %s", text, progress_duration(t, d));
		tty_draw(row);
		l->shown = 1;
	}
}

void progress_line_stop(struct progress_line *l)
{
	if (l->shown)
		tty_clear();
	l->shown = 0;
}
