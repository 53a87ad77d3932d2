/*
 * cli.h - what every fragsim command shares: the command table entry,
 * the strict integer parser, and error printing in one format (the
 * option tables are options.h).
 *
 *   fragsim: error: a.yaml:12:5: unknown key 'lanes'
 */
#ifndef CLI_H
#define CLI_H

#include <stdarg.h>
#include <stdio.h>

#include "../sim/common/fs.h"

struct opt_cmd;

struct fs_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);	/* argv[0] is the command name */
	const char *summary;
	const struct opt_cmd *spec;	/* its options and help (options.h) */
};

/* The executors --exec takes, in enum attn_exec's order, NULL-ended:
 * the names attn_exec_parse reads, for the option tables. */
extern const char *const cli_exec_names[];

/* Print "fragsim: error: <err>" to stderr; returns err's rc. */
int cli_error(const struct fs_err *err, enum fs_rc rc);
/* Print "fragsim: error: <msg>" to stderr; returns FS_EINPUT. */
/* "fragsim: error: <fmt...>\n" on stderr: the one error line. */
void cli_verror(const char *fmt, va_list ap);
int cli_usage_error(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A command that takes one case file, given a directory: 0 when path is
 * not one; else "fragsim: error: PATH: is a directory; CMD takes one
 * case file" (run adds "('fragsim check PATH' runs every case under
 * it)") and FS_EINPUT. Anything else wrong with path is the loader's to say.
 */
int cli_case_not_dir(const char *cmd, const char *path);

/*
 * The one parser of numbers on the command line. The whole of s must be
 * a decimal integer in [min, max]: an optional '-', then digits, nothing
 * before or after (no space, no '+', no "2junk"), and no overflow
 * ("99999999999999999999" is out of range, not LONG_MAX). 0 ok, -1 bad;
 * *out is set only on success.
 */
int cli_int(const char *s, long min, long max, long *out);
#endif
