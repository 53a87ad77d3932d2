/*
 * options.h - a command's options as one table, in the style of git's
 * parse-options: each row says the option's type, its name, where its
 * value goes and its one-line help. One parser reads argv against the
 * table, and the same table renders `--help`, the man page and the bash
 * completion (cli/help.c), so no option can be parsed but undocumented.
 *
 *   struct run_args { const char *out; long threads; int json; };
 *   #define OPT_ARGS struct run_args
 *   static const struct opt run_opts[] = {
 *   	OPT_ARG("<case.yaml>", "the case"),
 *   	OPT_STRING("--out", out, "<dir>", "write goldens there"),
 *   	OPT_INT("--threads", threads, "<n>", 1, 1024, "OpenMP threads",
 *   		.def = "all cores"),
 *   	OPT_FLAG("--json", json, "the summary as JSON"),
 *   	OPT_END(),
 *   };
 *   #undef OPT_ARGS
 *   ...
 *   struct run_args a = { .threads = 0 };	// the defaults
 *   int n = opt_parse(&run_cmd, &a, argc, argv, &rc);
 *   if (n < 0)
 *   	return rc;				// help printed, or a usage error
 *
 * A value lives at an offset into the command's own args struct, so
 * the table is static const data that help can walk without running
 * the command, and a command's options are one struct, not loose
 * locals. Values: `--out DIR` or `--out=DIR`; a value may start with
 * '-' (`--tol -1` is an out-of-range tolerance, not a missing one).
 * `--` ends the options; every argument after it is positional. An
 * option given twice keeps its last value, as git and getopt do; an
 * OPTION_LIST (`--exclude`) keeps every value, in order.
 */
#ifndef OPTIONS_H
#define OPTIONS_H

#include <stddef.h>
#include <stdio.h>

enum opt_type {
	OPTION_END = 0,	/* ends a table */
	OPTION_FLAG,	/* --x: the int there becomes 1; takes no value */
	OPTION_STRING,	/* --x V: the const char * there becomes V */
	OPTION_CHOICE,	/* --x V, V one of choices: const char * = V as given */
	OPTION_INT,	/* --x N, N an integer in [min, max] (cli_int): long */
	OPTION_NUMBER,	/* --x F, a finite decimal >= fmin: double */
	OPTION_ARG,	/* a positional argument: help, man page; not parsed */
	OPTION_LIST,	/* --x V, repeatable: V appended to the struct opt_list */
};

#define OPT_LIST_MAX 64	/* values of one OPTION_LIST */

/* An OPTION_LIST's values, in the order given (pointers into argv). */
struct opt_list {
	const char *v[OPT_LIST_MAX];
	int n;
};

/* Row flags. */
#define OPT_ICASE	1u	/* OPTION_CHOICE: any letter case matches */
#define OPT_PROFILE	2u	/* the value is a profile: completion offers
				 * the builtin names, then files */
#define OPT_COMMANDS	4u	/* struct opt_cmd: positionals are commands */

struct opt {
	enum opt_type type;
	const char *name;	/* "--out"; for OPTION_ARG "<path>" */
	size_t off;		/* where the value goes in the args struct */
	const char *arg;	/* "<dir>"; NULL: the choices joined by '|' */
	const char *help;	/* lines, '\n' between, no final newline */
	const char *def;	/* shown as [default: def]; NULL: none */
	const char *const *choices;	/* OPTION_CHOICE: NULL-ended */
	long min, max;		/* OPTION_INT */
	double fmin;		/* OPTION_NUMBER */
	unsigned flags;
};

/*
 * The rows, as git writes them. Define OPT_ARGS as the command's args
 * struct before its table; FIELD names the member the value goes to,
 * and must have the row's type (int for a flag, const char * for a
 * string or a choice, long, double): another type does not compile.
 * What follows HELP is optional, more designated fields: .def = "npy"
 * (shown as [default: npy]), .flags = OPT_ICASE.
 */
#define OPT_FIELD(F, T) \
	(offsetof(OPT_ARGS, F) + 0 * sizeof(_Generic(((OPT_ARGS *)0)->F, T: 1)))
#define OPT_ARG(NAME, HELP) { .type = OPTION_ARG, .name = (NAME), .help = (HELP) }
#define OPT_FLAG(NAME, FIELD, HELP, ...) \
	{ .type = OPTION_FLAG, .name = (NAME), .off = OPT_FIELD(FIELD, int), \
	  .help = (HELP), __VA_ARGS__ }
#define OPT_STRING(NAME, FIELD, ARG, HELP, ...) \
	{ .type = OPTION_STRING, .name = (NAME), .off = OPT_FIELD(FIELD, const char *), \
	  .arg = (ARG), .help = (HELP), __VA_ARGS__ }
#define OPT_CHOICE(NAME, FIELD, ARG, CHOICES, HELP, ...) \
	{ .type = OPTION_CHOICE, .name = (NAME), .off = OPT_FIELD(FIELD, const char *), \
	  .arg = (ARG), .choices = (CHOICES), .help = (HELP), __VA_ARGS__ }
#define OPT_INT(NAME, FIELD, ARG, MIN, MAX, HELP, ...) \
	{ .type = OPTION_INT, .name = (NAME), .off = OPT_FIELD(FIELD, long), \
	  .arg = (ARG), .min = (MIN), .max = (MAX), .help = (HELP), __VA_ARGS__ }
#define OPT_NUMBER(NAME, FIELD, ARG, MIN, HELP, ...) \
	{ .type = OPTION_NUMBER, .name = (NAME), .off = OPT_FIELD(FIELD, double), \
	  .arg = (ARG), .fmin = (MIN), .help = (HELP), __VA_ARGS__ }
#define OPT_LIST(NAME, FIELD, ARG, HELP, ...) \
	{ .type = OPTION_LIST, .name = (NAME), .off = OPT_FIELD(FIELD, struct opt_list), \
	  .arg = (ARG), .help = (HELP), __VA_ARGS__ }
#define OPT_END() { .type = OPTION_END }

/*
 * One command, or one form of a command that has a word of its own
 * (`lanemap list`): a sub's parent renders the help, so `fragsim
 * lanemap check --help` shows every form of lanemap, as before.
 */
struct opt_cmd {
	const char *name;		/* "run"; a sub: "list" */
	const char *const *synopsis;	/* lines after "fragsim ", NULL-ended */
	const struct opt *opts;		/* OPT_END()-ended; NULL: none */
	const char *about;		/* text after the options; NULL: none */
	const char *exit;		/* what each exit status means */
	const struct opt_cmd *const *subs;	/* NULL-ended, or NULL */
	const struct opt_cmd *parent;	/* a sub's command; NULL */
	unsigned flags;			/* OPT_PROFILE: positionals are profiles;
					 * OPT_COMMANDS: fragsim's commands */
};

/*
 * Parse argv[1..argc) (argv[0] is the command's word) against cmd's
 * table into the struct at args, which holds the defaults. Returns the
 * number of positional arguments, moved to argv[0..n) in their order;
 * or -1 with *rc the command's exit status: FS_OK when -h or --help
 * (anywhere before `--`) printed cmd's help to stdout, FS_EINPUT when a
 * bad option printed "fragsim: error: ..." and where the help is to
 * stderr (opt_error).
 */
int opt_parse(const struct opt_cmd *cmd, void *args, int argc, char **argv,
	      int *rc);

/* "fragsim: error: <msg>" and "see 'fragsim <cmd> -h'" to stderr;
 * returns FS_EINPUT. */
int opt_error(const struct opt_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* cmd's help as `--help` prints it (its parent's when cmd is a sub). */
void opt_help(FILE *f, const struct opt_cmd *cmd);

/* The word an option's value is shown as: arg, or the choices "a|b|c"
 * into buf. */
const char *opt_argname(const struct opt *o, char *buf, size_t len);

#endif
