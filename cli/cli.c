/*
 * cli.c - option scanning and error printing shared by the commands.
 *
 * Commands scan their own argv with cli_opt/cli_flag rather than a global
 * getopt state, so a command is an ordinary function of (argc, argv).
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int cli_error(const struct fs_err *err, enum fs_rc rc)
{
	char buf[1200];

	fprintf(stderr, "fragsim: error: %s\n", fs_err_str(err, buf, sizeof(buf)));
	return rc;
}

int cli_usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	fputs("fragsim: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (usage)
		fputs(usage, stderr);
	return FS_EINPUT;
}

int cli_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n) != 0)
		return 0;
	if (a[n] == '=') {
		*val = a + n + 1;
		*i += 1;
		return 1;
	}
	if (a[n] != '\0')
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*val = argv[*i + 1];
	*i += 2;
	return 1;
}

int cli_flag(char **argv, int i, const char *name)
{
	return strcmp(argv[i], name) == 0;
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

int cli_int_arg(const char *usage, const char *opt, const char *s, long min,
		long max, long *out)
{
	if (!cli_int(s, min, max, out))
		return 0;
	return cli_usage_error(usage, "%s must be an integer from %ld to %ld, not '%s'",
			       opt, min, max, s);
}

int cli_number_arg(const char *usage, const char *opt, const char *s, double min,
		   double *out)
{
	const char *p = s + (*s == '-' || *s == '+');
	char *end;
	double v;

	/* A digit or '.' first rules out " 1", "inf", "nan" and "0x1p3";
	 * an overflow ("1e999") comes back as HUGE_VAL with ERANGE. */
	if (!isdigit((unsigned char)*p) && *p != '.')
		goto bad;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		goto bad;
	v = strtod(s, &end);
	if (end == s || *end || !isfinite(v) || !(v >= min))
		goto bad;
	*out = v;
	return 0;
bad:
	return cli_usage_error(usage, "%s must be a finite number >= %.9g, not '%s'",
			       opt, min, s);
}

int cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	return 0;
}
