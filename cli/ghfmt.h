/*
 * ghfmt.h - GitHub Actions workflow commands, for `check --format
 * github`: one line per failed case that GitHub reads from a step's
 * stdout and shows as an annotation on the file, in the run's summary
 * and on a pull request's diff:
 *
 *   ::error file=suite/bad.yaml,line=3,col=12,title=fragsim check%3A suite/bad.yaml::sequences: expected a list of sequences
 *
 * GitHub's escaping (its toolkit's command.ts, and the "Workflow
 * commands for GitHub Actions" page): in the message '%', CR and LF are
 * %25, %0D and %0A; in a property value ':' and ',' also, as %3A and
 * %2C, since they end a value. So a message of many lines is one line.
 */
#ifndef GHFMT_H
#define GHFMT_H

#include <stdio.h>

#include "../sim/common/fs.h"

/* s escaped as a command's message (% CR LF). */
void ghfmt_data(FILE *f, const char *s);
/* s escaped as a property value (% CR LF : ,). */
void ghfmt_prop(FILE *f, const char *s);

/*
 * "::error file=F,line=L,col=C,title=T::MSG\n"; a property is left out
 * when file or title is NULL or "", or line or col is 0 or less.
 * Trailing newlines of msg are dropped (they would be a blank %0A).
 */
void ghfmt_error(FILE *f, const char *file, int line, int col,
		 const char *title, const char *msg);

/*
 * The annotation of a case of `check` that did not pass, titled
 * "fragsim check: NAME" (its path when name is ""): one that could not
 * be run at err's file:line:col (the case file when err has none), with
 * err's message; one that failed at line 1 of path, with msg (the
 * details: its line, then each tensor's first mismatch).
 */
void ghfmt_case(FILE *f, const char *path, const char *name,
		const struct fs_err *err, const char *msg);

#endif
