/*
 * report.h - what `fragsim run` and `fragsim check` print about a case:
 * a one-line verdict, a summary block, and the same as JSON.
 */
#ifndef REPORT_H
#define REPORT_H

#include <stdio.h>

#include "../lib/json.h"
#include "../lib/runcase.h"

/* "name(mode=decode,ctx=4097,...): OK" or "...: FAIL reason". */
void report_line(FILE *f, const struct runcase *r);
/*
 * What report_line says after "FAIL " or "OK caught as expected: ": the
 * first mismatch, else the first failed check ("top-1 rate 0.9 <
 * top1_min 0.99"), or "expected a mismatch; the planted bug went unseen";
 * "" for a plain OK.
 */
void report_reason(const struct runcase *r, char *buf, size_t len);
/*
 * Why a checked run fails the reference: "mismatch" (a compared tensor
 * or a replica row differs: a mapping bug), "threshold" (every exact
 * comparison holds, a quality threshold of `check:` failed); NULL when
 * it matches or was not checked. report_verdict: that, or "match", or
 * "emulated" (--emulate-only). report_fail_type: a failing case's JUnit
 * type, report_failure's or "uncaught" (a planted bug went unseen).
 */
const char *report_failure(const struct runcase *r);
const char *report_verdict(const struct runcase *r);
const char *report_fail_type(const struct runcase *r);
/* report_line, then each compared tensor's mismatch count and first
 * mismatch, then every failed check, one per line (a JUnit failure body). */
void report_details(FILE *f, const struct runcase *r);
/* The summary block of `fragsim run`: a `golden` line names a group of
 * the default golden: set over REPORT_LARGE_GOLDEN bytes. */
#define REPORT_LARGE_GOLDEN (256.0 * (1 << 20))
/* "goldens   written to DIR (3.1 MiB):", then each tensor's data bytes
 * (enum golden_format fmt), wrapped under it; label is "goldens" or
 * what an emulation alone wrote. */
void report_goldens(FILE *f, const struct runcase *r, int fmt, const char *dir,
		    const char *label);
/* The summary block of `fragsim run`. */
void report_summary(FILE *f, const struct runcase *r);
/* Where a mismatch is, as a JSON object (block_slot may be NULL). */
void report_json_loc(struct json *j, const struct compare_loc *l,
		     const int block_slot[2]);
/* The run as one JSON object (the caller opens/closes the document). */
void report_json(struct json *j, const struct runcase *r);

#endif
