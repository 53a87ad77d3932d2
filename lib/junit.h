/*
 * junit.h - a suite's outcome as a JUnit XML file, for CI systems
 * (docs/check-output.md is the contract; `fragsim check --junit`).
 *
 *   <?xml version="1.0" encoding="UTF-8"?>
 *   <testsuites name="fragsim" tests="2" failures="1" errors="0" skipped="0" time="0.500">
 *   <testsuite name="fragsim" tests="2" ... timestamp="2026-12-01T04:00:00">
 *     <testcase classname="cases.edge" name="one-token" file="cases/edge/x.yaml" time="0.250"/>
 *     <testcase ...>
 *       <failure message="reason" type="mismatch">details</failure>
 *       (type: mismatch, threshold or uncaught; an error's: input)
 *     </testcase>
 *   </testsuite>
 *   </testsuites>
 *
 * The file is built in memory and written through an outdir_file the
 * caller opened before the suite ran (so a path CI cannot write fails
 * first), then renamed into place: a reader never sees half a file.
 */
#ifndef JUNIT_H
#define JUNIT_H

#include <stddef.h>
#include <time.h>

#include "outdir.h"
#include "../sim/common/fs.h"

enum junit_status { JUNIT_PASS, JUNIT_FAIL, JUNIT_ERROR };

struct junit_case {
	const char *file;	/* the case file as listed; classname from its directory */
	const char *name;	/* the case's name; NULL or "": the file */
	enum junit_status status;
	const char *message;	/* one line: why it failed ("" for a pass) */
	const char *details;	/* the element's body; NULL: message */
	double seconds;
	const char *type;	/* JUNIT_FAIL's type: "mismatch", "threshold",
				 * "uncaught"; NULL: "mismatch" */
};

/*
 * Write n cases as JUnit XML into f (opened by outdir_file_open) and
 * commit it: suite started at `started` (UTC in the file), took
 * `seconds`. Any text (paths, messages) may hold any bytes: the five
 * XML specials are escaped, control characters other than tab and
 * newline dropped, invalid UTF-8 written as U+FFFD, so the file is
 * well-formed. FS_OK; else FS_EINTERNAL with err filled and f discarded.
 */
enum fs_rc junit_write(struct outdir_file *f, const struct junit_case *c, size_t n,
		       time_t started, double seconds, struct fs_err *err);

#endif
