/*
 * cli.c - the integer parser and error printing shared by the commands.
 *
 * Commands read their argv through option tables (options.c) rather than
 * a global getopt state, so a command is an ordinary function of (argc,
 * argv).
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *const cli_exec_names[] = {
	"auto", "scalar", "portable", "avx2", "avx512", NULL
};

int cli_error(const struct fs_err *err, enum fs_rc rc)
{
	char buf[1200];

	fprintf(stderr, "fragsim: error: %s\n", fs_err_str(err, buf, sizeof(buf)));
	return rc;
}

void cli_verror(const char *fmt, va_list ap)
{
	fputs("fragsim: error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int cli_usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verror(fmt, ap);
	va_end(ap);
	if (usage)
		fputs(usage, stderr);
	return FS_EINPUT;
}

int cli_case_not_dir(const char *cmd, const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return FS_OK;
	if (strcmp(cmd, "run"))
		return cli_usage_error(NULL, "%s: is a directory; %s takes one case file",
				       path, cmd);
	return cli_usage_error(NULL, "%s: is a directory; run takes one case file "
			       "('fragsim check %s' runs every case under it)", path, path);
}

int cli_int(const char *s, long min, long max, long *out)
{
	const char *digits = s + (*s == '-');
	char *end;
	long v;

	/* strtol alone would take " 7", "+7" and "7junk" (with end unchecked),
	 * and clamp an overflow to LONG_MAX with only errno to say so. */
	if (!isdigit((unsigned char)*digits))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end || errno == ERANGE || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}
