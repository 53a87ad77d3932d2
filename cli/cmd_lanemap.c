/*
 * cmd_lanemap.c - `fragsim lanemap`: list, print, query, check and diff
 * lane maps.
 *
 *   fragsim lanemap --isa gfx936 --matrix C         the C grid and lanes
 *   fragsim lanemap --isa gfx936 --entry 'C[3][10]' lane 35, register 2
 *   fragsim lanemap diff gfx936 gfx936-quad         C: lanes interleaved
 *   fragsim lanemap loads --isa gfx936              B's bytes in the cache
 *
 * Exit status: 0 valid / identical, 1 invalid / different, 2 bad input.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/lanemap/lanediff.h"
#include "cli.h"
#include "cmds.h"
#include "options.h"
#include "../lib/json.h"
#include "lmprint.h"
#include "lmsvg.h"
#include "../lib/profile.h"

/* Every form's options (each form's table names the ones it takes). */
struct lanemap_args {
	const char *isa, *matrix, *format, *lane, *entry;
	int names;
};

#define OPT_ARGS struct lanemap_args
static const char *const matrices[] = { "A", "B", "C", NULL };
/* lmprint_format's names, then the pictures lmsvg draws. */
static const char *const show_formats[] = {
	"text", "md", "csv", "json", "c", "basis", "basis-json", "svg", NULL
};
static const char *const report_formats[] = { "text", "json", NULL };
static const char *const diff_formats[] = { "text", "json", "svg", "html", NULL };

static const struct opt show_opts[] = {
	OPT_STRING("--isa", isa, "<name|file>",
	  "a builtin profile ('lanemap list') or a profile YAML", .flags = OPT_PROFILE),
	OPT_CHOICE("--matrix", matrix, NULL, matrices,
	  "only this operand", .def = "all three", .flags = OPT_ICASE),
	OPT_CHOICE("--format", format, "<fmt>", show_formats,
	  "text, md, csv or json;\n"
	  "c: the A, B and C maps as a C/C++/HIP/CUDA header;\n"
	  "basis, basis-json: each map as linear over GF(2);\n"
	  "svg: the grids as a picture, coloured by lane", .def = "text"),
	OPT_STRING("--lane", lane, "<L>", "everything lane L holds in A, B and C"),
	OPT_STRING("--entry", entry, "'X[r][c]'",
	  "which lanes and registers hold entry X[r][c]"),
	OPT_END(),
};

static const struct opt list_opts[] = {
	OPT_FLAG("--names", names, "names only, one per line"),
	OPT_END(),
};

static const struct opt check_opts[] = {
	OPT_ARG("<name|file>", "a builtin profile or a profile YAML"),
	OPT_CHOICE("--format", format, NULL, report_formats,
	  "the report as text or JSON", .def = "text"),
	OPT_END(),
};

static const struct opt diff_opts[] = {
	OPT_ARG("<x> <y>", "two profiles: builtin names or YAML files"),
	OPT_CHOICE("--format", format, NULL, diff_formats,
	  "the difference as text or JSON;\n"
	  "svg: both maps drawn side by side; html: the same in a page", .def = "text"),
	OPT_END(),
};
#undef OPT_ARGS

static const char *const show_synopsis[] = {
	"lanemap --isa <name|file> [--matrix A|B|C] [--format <fmt>]",
	"lanemap --isa <name|file> --format c > lanemap.h",
	"lanemap --isa <name|file> --format basis|basis-json [--matrix A|B|C]",
	"lanemap --isa <name|file> --format svg [--matrix A|B|C] > map.svg",
	"lanemap --isa <name|file> --lane <L> [--format <fmt>]",
	"lanemap --isa <name|file> --entry 'C[row][col]' [--format <fmt>]",
	NULL,
};
static const char *const list_synopsis[] = { "lanemap list [--names]", NULL };
static const char *const check_synopsis[] = {
	"lanemap check <name|file>... [--format text|json]", NULL
};
static const char *const diff_synopsis[] = {
	"lanemap diff <x> <y> [--format text|json|svg|html]", NULL
};

static const struct opt_cmd list_cmd = {
	.name = "list", .synopsis = list_synopsis, .opts = list_opts,
	.parent = &cmd_lanemap_spec,
};
static const struct opt_cmd check_cmd = {
	.name = "check", .synopsis = check_synopsis, .opts = check_opts,
	.parent = &cmd_lanemap_spec, .flags = OPT_PROFILE,
};
static const struct opt_cmd diff_cmd = {
	.name = "diff", .synopsis = diff_synopsis, .opts = diff_opts,
	.parent = &cmd_lanemap_spec, .flags = OPT_PROFILE,
};
static const struct opt_cmd *const subs[] = { &list_cmd, &check_cmd, &diff_cmd,
						&lanemap_loads_cmd, NULL };

const struct opt_cmd cmd_lanemap_spec = {
	.name = "lanemap",
	.synopsis = show_synopsis,
	.opts = show_opts,
	.exit = "0 valid or identical, 1 invalid or different, 2 bad input",
	.subs = subs,
};

/* Load and validate; prints the error. *rep filled when loaded. */
static struct lanemap *load(const char *what, struct lm_report *rep, int *rc)
{
	struct fs_err err = { 0 };
	struct lanemap *lm = profile_resolve(what, &err);

	if (!lm) {
		*rc = cli_error(&err, fs_err_rc(&err, err.msg[0] ? FS_EINPUT : FS_EINTERNAL));
		return NULL;
	}
	*rc = lanemap_validate(lm, rep);
	if (*rc == FS_ENOMEM) {
		fprintf(stderr, "fragsim: error: out of memory: the profile's inverse tables\n");
		lanemap_free(lm);
		return NULL;
	}
	return lm;
}

static int do_list(int argc, char **argv)
{
	struct lanemap_args a = { 0 };
	int n, rc;

	if ((n = opt_parse(&list_cmd, &a, argc, argv, &rc)) < 0)
		return rc;
	if (n)
		return opt_error(&list_cmd, "list: unexpected argument '%s'", argv[0]);
	for (int i = 0; i < profile_builtin_count(); i++) {
		struct fs_err err = { 0 };
		const char *name = profile_builtin_name(i);
		struct lanemap *lm;

		if (a.names) {
			printf("%s\n", name);
			continue;
		}
		lm = profile_builtin(name, &err);
		if (!lm)
			return cli_error(&err, FS_EINTERNAL);
		printf("%-34s %s\n", name, lm->desc);
		lanemap_free(lm);
	}
	return FS_OK;
}

static int do_check(int argc, char **argv)
{
	struct lanemap_args a = { .format = "text" };
	enum lm_format fmt;
	int worst = FS_OK, nfiles, rc;

	if ((nfiles = opt_parse(&check_cmd, &a, argc, argv, &rc)) < 0)
		return rc;
	if (!nfiles)
		return opt_error(&check_cmd, "check: give at least one profile");
	if (lmprint_format(a.format, &fmt))
		return FS_EINTERNAL;	/* report_formats are lmprint_format's */
	for (int i = 0; i < nfiles; i++) {
		struct lm_report rep;
		struct lanemap *lm;

		lm = load(argv[i], &rep, &rc);
		if (!lm) {
			worst = FS_EINPUT;
			continue;
		}
		lmprint_report(stdout, argv[i], lm, &rep, fmt);
		if (rc > worst)
			worst = rc;
		lanemap_free(lm);
	}
	return worst;
}

static void diff_text(const struct lanemap *x, const struct lanemap *y,
		      const struct lanediff *d)
{
	for (int op = 0; op < LM_NOPERANDS; op++) {
		const struct lanediff_op *o = &d->op[op];
		int slots[LMSVG_SAMPLES], n;
		char line[400];

		printf("%s: %d of %d entries differ: %s\n",
		       lm_operand_name((enum lm_operand)op), o->differ, o->entries,
		       o->verdict);
		if (o->differ && o->kind != LD_INCOMPARABLE)
			printf("   bits: %s\n", o->bits);
		/* A few (lane, element) slots that moved, as probe solve lists them. */
		n = lmsvg_diff_slots(x, y, (enum lm_operand)op, slots, LMSVG_SAMPLES);
		for (int i = 0; i < n && i < LMSVG_SAMPLES; i++) {
			lmsvg_slot_line(x, y, (enum lm_operand)op, slots[i], line, sizeof(line));
			printf("  %s\n", line);
		}
		if (n > LMSVG_SAMPLES)
			printf("  ... %d more\n", n - LMSVG_SAMPLES);
	}
	if (d->differ)
		printf("%s and %s differ in %d entries\n", x->name, y->name, d->differ);
	else
		printf("%s and %s are identical\n", x->name, y->name);
}

static void diff_json(const struct lanemap *x, const struct lanemap *y,
		      const struct lanediff *d)
{
	struct json j;

	json_init(&j, stdout, 1);
	json_begin_object(&j);
	json_key_string(&j, "x", x->name);
	json_key_string(&j, "y", y->name);
	json_key_int(&j, "differ", d->differ);
	json_key(&j, "operands");
	json_begin_array(&j);
	for (int op = 0; op < LM_NOPERANDS; op++) {
		json_begin_object(&j);
		json_key_string(&j, "matrix", lm_operand_name((enum lm_operand)op));
		json_key_int(&j, "entries", d->op[op].entries);
		json_key_int(&j, "differ", d->op[op].differ);
		json_key_string(&j, "verdict", d->op[op].verdict);
		json_key_string(&j, "bits", d->op[op].bits);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	json_finish(&j);
}

static int do_diff(int argc, char **argv)
{
	struct lanemap_args a = { .format = "text" };
	enum lm_format fmt;
	char **names = argv;
	struct lanemap *lm[2] = { NULL, NULL };
	struct lm_report rep;
	struct lanediff d;
	struct fs_err err = { 0 };
	char pic = 0;	/* 's' or 'h': the pictures as SVG or in a page */
	int n, rc;

	if ((n = opt_parse(&diff_cmd, &a, argc, argv, &rc)) < 0)
		return rc;
	if (n != 2)
		return opt_error(&diff_cmd, "diff: takes two profiles");
	if (!strcmp(a.format, "svg") || !strcmp(a.format, "html"))
		pic = a.format[0], fmt = LMF_TEXT;
	else if (lmprint_format(a.format, &fmt))
		return FS_EINTERNAL;	/* diff_formats are lmprint_format's, svg and html */
	for (int i = 0; i < 2 && rc == FS_OK; i++) {
		lm[i] = load(names[i], &rep, &rc);
		if (lm[i] && rc == FS_MISMATCH) {
			lmprint_report(stderr, names[i], lm[i], &rep, LMF_TEXT);
			rc = FS_EINPUT;
		}
	}
	if (rc == FS_OK) {
		rc = lanediff_compare(lm[0], lm[1], &d, &err);
		if (rc)
			cli_error(&err, rc);
	}
	if (rc == FS_OK) {
		if (pic)
			lmsvg_diff(stdout, lm[0], lm[1], &d, pic == 'h');
		else if (fmt == LMF_JSON)
			diff_json(lm[0], lm[1], &d);
		else
			diff_text(lm[0], lm[1], &d);
		rc = d.differ ? FS_MISMATCH : FS_OK;
	}
	lanemap_free(lm[0]);
	lanemap_free(lm[1]);
	return rc;
}

/* One "[ 12 ]" of an entry: the index through cli_int, so that an index
 * past INT_MAX is outside the matrix rather than wrapped (sscanf's %d
 * made C[4294967299][0] into C[3][0]). Advances *s; 0 ok. */
static int entry_index(const char **s, int *out)
{
	const char *p = *s, *close;
	char num[24];
	size_t n;
	long v;

	while (*p == ' ')
		p++;
	if (*p++ != '[')
		return -1;
	while (*p == ' ')
		p++;
	close = strchr(p, ']');
	if (!close)
		return -1;
	n = (size_t)(close - p);
	while (n && p[n - 1] == ' ')
		n--;
	if (n >= sizeof(num))
		return -1;
	memcpy(num, p, n);
	num[n] = '\0';
	if (cli_int(num, LONG_MIN, LONG_MAX, &v))
		return -1;
	/* Out of int's range is still outside any matrix: the caller says so. */
	*out = v < 0 ? -1 : v > INT_MAX ? INT_MAX : (int)v;
	*s = close + 1;
	return 0;
}

/* "C[3][10]" -> op, row, col; 0 ok. */
static int parse_entry(const char *s, enum lm_operand *op, int *row, int *col)
{
	char m;

	while (*s == ' ')
		s++;
	m = *s++;
	if (entry_index(&s, row) || entry_index(&s, col))
		return -1;
	while (*s == ' ')
		s++;
	if (*s)
		return -1;
	if (m == 'A' || m == 'a')
		*op = LM_A;
	else if (m == 'B' || m == 'b')
		*op = LM_B;
	else if (m == 'C' || m == 'c')
		*op = LM_C;
	else
		return -1;
	return 0;
}

static int do_show(int argc, char **argv)
{
	struct lanemap_args a = { 0 };
	const char *isa, *lane_s, *entry, *format;
	enum lm_format fmt = LMF_TEXT;
	struct lm_report rep;
	struct lanemap *lm;
	unsigned mask = 7;
	int n, rc, svg = 0;

	if ((n = opt_parse(&cmd_lanemap_spec, &a, argc, argv, &rc)) < 0)
		return rc;
	if (n)
		return opt_error(&cmd_lanemap_spec, "unexpected argument '%s'", argv[0]);
	isa = a.isa, lane_s = a.lane, entry = a.entry, format = a.format;
	if (!isa)
		return opt_error(&cmd_lanemap_spec, "--isa is required");
	if (format && !strcmp(format, "svg"))
		svg = 1;
	else if (format && lmprint_format(format, &fmt))
		return FS_EINTERNAL;	/* show_formats are lmprint_format's and svg */
	if (svg && (lane_s || entry))
		return opt_error(&cmd_lanemap_spec,
				 "--format svg draws whole operands: no --lane or --entry");
	if (fmt == LMF_C && (lane_s || entry || a.matrix))
		return opt_error(&cmd_lanemap_spec,
				 "--format c prints the whole map: no --matrix, --lane or --entry");
	if ((fmt == LMF_BASIS || fmt == LMF_BASIS_JSON) && (lane_s || entry))
		return opt_error(&cmd_lanemap_spec,
				 "--format %s describes whole operands: no --lane or --entry",
				 format);
	if (a.matrix)
		mask = 1u << (strchr("ABC", a.matrix[0] & ~0x20) - "ABC");
	if ((lane_s != NULL) + (entry != NULL) + (a.matrix != NULL) > 1)
		return opt_error(&cmd_lanemap_spec, "--matrix, --lane and --entry exclude each other");
	lm = load(isa, &rep, &rc);
	if (!lm)
		return rc;
	if (svg) {
		/* Only a valid map has an owner for every cell to draw. */
		if (rc == FS_OK)
			lmsvg_map(stdout, lm, mask);
		else
			fprintf(stderr, "fragsim: error: %s: invalid profile, no picture drawn\n",
				isa);
	} else if (fmt == LMF_C) {
		/* A header for kernels: an invalid map has no inverse to give. */
		if (rc == FS_OK)
			lmprint_c_header(stdout, lm, isa);
		else
			fprintf(stderr, "fragsim: error: %s: invalid profile, no header written\n",
				isa);
	} else if (fmt == LMF_BASIS || fmt == LMF_BASIS_JSON) {
		lmprint_basis(stdout, lm, mask, fmt);
	} else if (lane_s) {
		long lane;

		if (cli_int(lane_s, 0, lm->wave - 1, &lane)) {
			rc = opt_error(&cmd_lanemap_spec, "--lane must be between 0 and %d, not '%s'",
					     lm->wave - 1, lane_s);
			lanemap_free(lm);
			return rc;
		}
		lmprint_lane(stdout, lm, (int)lane, fmt);
	} else if (entry) {
		enum lm_operand op;
		int row, col;

		if (parse_entry(entry, &op, &row, &col)) {
			lanemap_free(lm);
			return opt_error(&cmd_lanemap_spec, "--entry must look like 'C[3][10]', not '%s'",
					       entry);
		}
		if (row < 0 || col < 0 || row >= lm->op[op].rows ||
		    col >= lm->op[op].cols) {
			rc = opt_error(&cmd_lanemap_spec, "--entry %s is outside the %dx%d matrix",
					     entry, lm->op[op].rows, lm->op[op].cols);
			lanemap_free(lm);
			return rc;
		}
		lmprint_entry(stdout, lm, op, row, col, fmt);
	} else {
		lmprint_map(stdout, lm, mask, fmt);
	}
	if (rc == FS_MISMATCH)
		lmprint_report(stderr, isa, lm, &rep, LMF_TEXT);
	lanemap_free(lm);
	return rc;
}

int cmd_lanemap(int argc, char **argv)
{
	if (argc < 2)
		return opt_error(&cmd_lanemap_spec, "lanemap: missing arguments");
	if (!strcmp(argv[1], "list"))
		return do_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return do_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "diff"))
		return do_diff(argc - 1, argv + 1);
	if (!strcmp(argv[1], "loads"))
		return do_loads(argc - 1, argv + 1);
	return do_show(argc, argv);
}
