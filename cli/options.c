/*
 * options.c - the option table's parser and its `--help` (options.h).
 *
 * Help, for a table of two rows and a positional:
 *
 *   usage: fragsim diff <case.yaml> --dump <dir> [--max <n>]
 *
 *     <case.yaml>     the case the device ran
 *     --dump <dir>    the dumped .npy files
 *     --max <n>       mismatches listed per tensor  [default: 8]
 *
 *   exit status: 0 the dump matches, 1 mismatch, 2 bad input
 *
 * The left column is as wide as the widest row (at most HELP_COL); a
 * row wider than that puts its help on the next line. A command with
 * subs lists each sub's options under "<sub>:" after its own.
 *
 * A usage error prints its one line and where the help is, not the
 * help itself:
 *
 *   fragsim: error: --shard must be K/N with 1 <= K <= N, not '1/2junk'
 *   see 'fragsim check -h'
 *
 * Every value is checked where it is read, so a command sees only
 * values its table allows: an integer through cli_int (no "2junk", no
 * overflow), a number through the same strictness, a choice against
 * its list. The error texts are those the commands printed before the
 * tables (tests/test_cli.c pins them): "--threads must be an integer
 * from 1 to 1024, not '2x'", "--exec must be auto, scalar, portable,
 * avx2 or avx512, not 'x'", "--out needs a value".
 */
#include "options.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../sim/common/fs.h"
#include "cli.h"

#define HELP_COL 24	/* the widest left column before help wraps */

const char *opt_argname(const struct opt *o, char *buf, size_t len)
{
	size_t used = 0;

	if (o->arg || o->type != OPTION_CHOICE)
		return o->arg ? o->arg : "";
	buf[0] = '\0';
	for (int i = 0; o->choices[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "|" : "",
					 o->choices[i]);
	return buf;
}

/* The left column of a row: "--out <dir>", "<path>". */
static int left(const struct opt *o, char *buf, size_t len)
{
	char arg[128];
	const char *a = opt_argname(o, arg, sizeof(arg));

	return snprintf(buf, len, "%s%s%s", o->name, *a ? " " : "", a);
}

static int widest(const struct opt *o, int w)
{
	char buf[160];

	for (; o && o->type != OPTION_END; o++) {
		int n = left(o, buf, sizeof(buf));

		if (n > w && n <= HELP_COL)
			w = n;
	}
	return w;
}

static void help_rows(FILE *f, const struct opt *o, int w)
{
	char buf[160];

	for (; o && o->type != OPTION_END; o++) {
		const char *h = o->help, *eol;
		int n = left(o, buf, sizeof(buf));

		fprintf(f, "  %s", buf);
		if (n > w)
			fprintf(f, "\n  %*s", w, "");
		else
			fprintf(f, "%*s", w - n, "");
		/* each line of help at the column, the default after the last
		 * (or under it, past 79 columns) */
		for (;;) {
			eol = strchr(h, '\n');
			n = eol ? (int)(eol - h) : (int)strlen(h);
			fprintf(f, "  %.*s", n, h);
			if (!eol)
				break;
			fprintf(f, "\n  %*s", w, "");
			h = eol + 1;
		}
		if (o->def && 2 + w + 2 + n + 13 + (int)strlen(o->def) > 79)
			fprintf(f, "\n  %*s  [default: %s]", w, "", o->def);
		else if (o->def)
			fprintf(f, "  [default: %s]", o->def);
		fputc('\n', f);
	}
}

/* Synopsis lines: a line that starts with a space continues the form
 * above it, aligned after "fragsim <command> ". */
static void synopsis(FILE *f, const struct opt_cmd *c, int *first)
{
	for (int i = 0; c->synopsis && c->synopsis[i]; i++) {
		const char *s = c->synopsis[i];

		if (*s == ' ')
			fprintf(f, "%*s%s\n", (int)(strlen("usage: fragsim  ") + strlen(c->name)), "",
				s + strspn(s, " "));
		else
			fprintf(f, "%s fragsim %s\n", *first ? "usage:" : "      ", s);
		*first = 0;
	}
}

void opt_help(FILE *f, const struct opt_cmd *cmd)
{
	const struct opt_cmd *c = cmd->parent ? cmd->parent : cmd;
	int first = 1, w = widest(c->opts, 0);

	synopsis(f, c, &first);
	for (int i = 0; c->subs && c->subs[i]; i++) {
		synopsis(f, c->subs[i], &first);
		w = widest(c->subs[i]->opts, w);
	}
	if (c->opts && c->opts->type != OPTION_END) {
		fputc('\n', f);
		help_rows(f, c->opts, w);
	}
	for (int i = 0; c->subs && c->subs[i]; i++) {
		if (!c->subs[i]->opts || c->subs[i]->opts->type == OPTION_END)
			continue;
		fprintf(f, "\n%s %s:\n", c->name, c->subs[i]->name);
		help_rows(f, c->subs[i]->opts, w);
	}
	if (c->about)
		fprintf(f, "\n%s\n", c->about);
	/* later lines of the exit status under its first word */
	fputs("\nexit status: ", f);
	for (const char *s = c->exit; *s; s++)
		if (*s == '\n')
			fputs("\n             ", f);
		else
			fputc(*s, f);
	fputc('\n', f);
}

int opt_error(const struct opt_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verror(fmt, ap);
	va_end(ap);
	/* Where to look, not the whole help: forty lines of it after the
	 * error buried the one line that says what is wrong. */
	if (cmd->parent)
		fprintf(stderr, "see 'fragsim %s %s -h'\n", cmd->parent->name, cmd->name);
	else
		fprintf(stderr, "see 'fragsim %s -h'\n", cmd->name);
	return FS_EINPUT;
}

/* A finite decimal >= min, the whole of s: strtod's syntax less leading
 * space, hex, inf and nan. 0 ok, -1 bad. */
static int number(const char *s, double min, double *out)
{
	const char *p = s + (*s == '-' || *s == '+');
	char *end;
	double v;

	/* A digit or '.' first rules out " 1", "inf", "nan" and "0x1p3";
	 * an overflow ("1e999") comes back as HUGE_VAL, which is not
	 * finite. */
	if (!isdigit((unsigned char)*p) && *p != '.')
		return -1;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return -1;
	v = strtod(s, &end);
	if (end == s || *end || !isfinite(v) || !(v >= min))
		return -1;
	*out = v;
	return 0;
}

/* "--exec must be auto, scalar, portable, avx2 or avx512, not 'x'" */
static int bad_choice(const struct opt_cmd *cmd, const struct opt *o, const char *v)
{
	char list[256];
	size_t used = 0;

	list[0] = '\0';
	for (int i = 0; o->choices[i] && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
					 !i ? "" : o->choices[i + 1] ? ", " : " or ",
					 o->choices[i]);
	return opt_error(cmd, "%s must be %s, not '%s'", o->name, list, v);
}

/* Store v (NULL for a flag) as o says; 0 or an exit status. */
static int store(const struct opt_cmd *cmd, const struct opt *o, char *args,
		 const char *v)
{
	long l;
	double d;
	int i;

	switch (o->type) {
	case OPTION_FLAG:
		*(int *)(args + o->off) = 1;
		return 0;
	case OPTION_STRING:
		*(const char **)(args + o->off) = v;
		return 0;
	case OPTION_CHOICE:
		for (i = 0; o->choices[i]; i++)
			if ((o->flags & OPT_ICASE) ? !strcasecmp(v, o->choices[i])
						   : !strcmp(v, o->choices[i]))
				break;
		if (!o->choices[i])
			return bad_choice(cmd, o, v);
		*(const char **)(args + o->off) = v;
		return 0;
	case OPTION_INT:
		if (cli_int(v, o->min, o->max, &l))
			return opt_error(cmd, "%s must be an integer from %ld to %ld, not '%s'",
					 o->name, o->min, o->max, v);
		*(long *)(args + o->off) = l;
		return 0;
	case OPTION_NUMBER:
		if (number(v, o->fmin, &d))
			return opt_error(cmd, "%s must be a finite number >= %.9g, not '%s'",
					 o->name, o->fmin, v);
		*(double *)(args + o->off) = d;
		return 0;
	case OPTION_LIST: {
		struct opt_list *ls = (struct opt_list *)(void *)(args + o->off);

		if (ls->n >= OPT_LIST_MAX)
			return opt_error(cmd, "%s given more than %d times", o->name,
					 OPT_LIST_MAX);
		ls->v[ls->n++] = v;
		return 0;
	}
	case OPTION_END:
	case OPTION_ARG:
		break;
	}
	return FS_EINTERNAL;	/* a row the parser cannot match */
}

static const struct opt *find(const struct opt *o, const char *a, size_t len)
{
	for (; o && o->type != OPTION_END; o++)
		if (o->type != OPTION_ARG && strlen(o->name) == len && !strncmp(o->name, a, len))
			return o;
	return NULL;
}

int opt_parse(const struct opt_cmd *cmd, void *args, int argc, char **argv,
	      int *rc)
{
	int n = 0;

	/* -h reads no files and checks no other argument (STYLE.md 6). */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			opt_help(stdout, cmd);
			*rc = FS_OK;
			return -1;
		}
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		const char *eq = strchr(a, '='), *v = NULL;
		size_t len = eq ? (size_t)(eq - a) : strlen(a);
		const struct opt *o;

		if (!strcmp(a, "--")) {
			while (++i < argc)
				argv[n++] = argv[i];
			break;
		}
		if (a[0] != '-' || !a[1]) {
			argv[n++] = a;	/* n < i: the word argv[0] is gone */
			continue;
		}
		if (!(o = find(cmd->opts, a, len))) {
			*rc = opt_error(cmd, "unknown option '%s'", a);
			return -1;
		}
		if (o->type == OPTION_FLAG && eq) {
			*rc = opt_error(cmd, "%s takes no value, not '%s'", o->name, eq + 1);
			return -1;
		}
		if (o->type != OPTION_FLAG) {
			if (!eq && i + 1 >= argc) {
				*rc = opt_error(cmd, "%s needs a value", o->name);
				return -1;
			}
			v = eq ? eq + 1 : argv[++i];
		}
		if ((*rc = store(cmd, o, args, v)))
			return -1;
	}
	*rc = FS_OK;
	return n;
}
