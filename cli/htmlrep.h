/*
 * htmlrep.h - `--report FILE.html` of run, check, diff and mutate: one
 * self-contained page (inline CSS and SVG, no script, nothing fetched),
 * written atomically. The commands hand over what they computed; this
 * file lays it out (plots in plot.c, frame in html.c).
 */
#ifndef HTMLREP_H
#define HTMLREP_H

#include <stdio.h>

#include "../lib/diffcase.h"
#include "../lib/runcase.h"

/* Before the work: can path be written? (lib/outdir.h's file check.) */
enum fs_rc htmlrep_check(const char *path, struct fs_err *err);
/*
 * fn(f, arg) into memory, then to path under a temporary name, synced
 * and renamed: a failure leaves the previous file whole. FS_EINTERNAL
 * with err filled on a failed write.
 */
enum fs_rc htmlrep_save(const char *path, void (*fn)(FILE *, const void *),
			const void *arg, struct fs_err *err);

/* One case: verdict, the case with its defaults, exact and quantization
 * figures, error by key position as plots. A <section>; run's page and
 * each of check's cases. */
void htmlrep_case(FILE *f, const struct runcase *r);
/* run's page (arg: const struct runcase *). */
void htmlrep_run(FILE *f, const void *arg);

/*
 * diff's page: counts per tensor, the diagnosis and ranked hypotheses,
 * heat maps of the mismatches by (lane, register) and (key, row), and
 * the case. rep and dg as the command computed them (dg NULL or unused
 * when nothing differs); the heat maps compare again listing every
 * mismatch (up to DIFF_MAX_SHOW per tensor). Saved as htmlrep_save does.
 */
enum fs_rc htmlrep_diff_save(const char *path, const struct runcase *r,
			     const char *dump_dir, const struct dump *d,
			     const struct diff_opts *o, const struct diff_report *rep,
			     const struct diff_diagnosis *dg, const char *verdict,
			     struct fs_err *err);

#define HTMLREP_COLS 5
struct htmlrep_row {
	const char *cell[HTMLREP_COLS];	/* NULL: empty */
	const char *file;		/* the case file cell[1] links to; NULL none */
	const char *section;		/* HTML of the row's own section; NULL none */
	int bad;			/* shown red */
};
struct htmlrep_table {
	const char *title, *summary;
	const char *head[HTMLREP_COLS];
	size_t n;
	const struct htmlrep_row *rows;
};
/* check's and mutate's page (arg: const struct htmlrep_table *): the
 * summary, the table (a row with a section links to it), the sections. */
void htmlrep_table(FILE *f, const void *arg);

#endif
