/*
 * cli.h - what every fragsim command shares: the command table entry,
 * option scanning, and error printing in one format.
 *
 *   fragsim: error: a.yaml:12:5: unknown key 'lanes'
 */
#ifndef CLI_H
#define CLI_H

#include <stdio.h>

#include "../sim/fs.h"

struct fs_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);	/* argv[0] is the command name */
	const char *summary;
};

/* Print "fragsim: error: <err>" to stderr; returns err's rc. */
int cli_error(const struct fs_err *err, enum fs_rc rc);
/* Print "fragsim: error: <msg>" to stderr; returns FS_EINPUT. */
int cli_usage_error(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * If argv[*i] is option `name` ("--isa VALUE" or "--isa=VALUE"), store its
 * value, advance *i past it and return 1; return -1 when the value is
 * missing; 0 when argv[*i] is another argument.
 */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **val);
/* Is argv[i] exactly flag `name`? */
int cli_flag(char **argv, int i, const char *name);
/*
 * The one parser of numbers on the command line. The whole of s must be
 * a decimal integer in [min, max]: an optional '-', then digits, nothing
 * before or after (no space, no '+', no "2junk"), and no overflow
 * ("99999999999999999999" is out of range, not LONG_MAX). 0 ok, -1 bad;
 * *out is set only on success.
 */
int cli_int(const char *s, long min, long max, long *out);
/*
 * cli_int for option opt: on failure prints "fragsim: error: <opt> must
 * be an integer from <min> to <max>, not '<s>'" and usage, and returns
 * FS_EINPUT; 0 on success.
 */
int cli_int_arg(const char *usage, const char *opt, const char *s, long min,
		long max, long *out);
/*
 * A finite decimal number >= min, the whole of s (strtod's syntax less
 * leading space, hex, inf and nan). Same failure as cli_int_arg:
 * "<opt> must be a finite number >= <min>, not '<s>'".
 */
int cli_number_arg(const char *usage, const char *opt, const char *s, double min,
		   double *out);
/* Does any argument ask for help (-h / --help)? */
int cli_wants_help(int argc, char **argv);

#endif
