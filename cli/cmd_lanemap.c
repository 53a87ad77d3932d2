/*
 * cmd_lanemap.c - `fragsim lanemap`: list, print, query, check and diff
 * lane maps.
 *
 *   fragsim lanemap --isa gfx936 --matrix C         the C grid and lanes
 *   fragsim lanemap --isa gfx936 --entry 'C[3][10]' lane 35, register 2
 *   fragsim lanemap diff gfx936 gfx936-quad         C: lanes interleaved
 *
 * Exit status: 0 valid / identical, 1 invalid / different, 2 bad input.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/lanediff.h"
#include "cli.h"
#include "cmds.h"
#include "../lib/json.h"
#include "lmprint.h"
#include "lmsvg.h"
#include "../lib/profile.h"

static const char usage[] =
	"usage: fragsim lanemap --isa <name|file> [--matrix A|B|C] [--format <fmt>]\n"
	"       fragsim lanemap --isa <name|file> --format c > lanemap.h\n"
	"       fragsim lanemap --isa <name|file> --format basis|basis-json [--matrix A|B|C]\n"
	"       fragsim lanemap --isa <name|file> --lane <L> [--format <fmt>]\n"
	"       fragsim lanemap --isa <name|file> --entry 'C[row][col]' [--format <fmt>]\n"
	"       fragsim lanemap list [--names]\n"
	"       fragsim lanemap check <name|file>... [--format text|json]\n"
	"       fragsim lanemap --isa <name|file> --format svg [--matrix A|B|C] > map.svg\n"
	"       fragsim lanemap diff <x> <y> [--format text|json|svg|html]\n"
	"\n"
	"  --isa <name|file>   a builtin profile ('lanemap list') or a profile YAML\n"
	"  --matrix A|B|C      only this operand                [default: all three]\n"
	"  --format <fmt>      text, md, csv or json             [default: text];\n"
	"                      c: the A, B and C maps as a C/C++/HIP/CUDA header;\n"
	"                      basis, basis-json: each map as linear over GF(2);\n"
	"                      svg: the grids as a picture, coloured by lane\n"
	"  --lane <L>          everything lane L holds in A, B and C\n"
	"  --entry 'X[r][c]'   which lanes and registers hold entry X[r][c]\n"
	"  --names             list: names only, one per line\n"
	"\n"
	"exit status: 0 valid or identical, 1 invalid or different, 2 bad input\n";

/* Load and validate; prints the error. *rep filled when loaded. */
static struct lanemap *load(const char *what, struct lm_report *rep, int *rc)
{
	struct fs_err err = { 0 };
	struct lanemap *lm = profile_resolve(what, &err);

	if (!lm) {
		*rc = cli_error(&err, err.msg[0] ? FS_EINPUT : FS_EINTERNAL);
		return NULL;
	}
	*rc = lanemap_validate(lm, rep);
	if (*rc == FS_EINTERNAL) {
		fprintf(stderr, "fragsim: error: out of memory\n");
		lanemap_free(lm);
		return NULL;
	}
	return lm;
}

static int do_list(int argc, char **argv)
{
	int names = argc > 1 && cli_flag(argv, 1, "--names");

	if (argc > 1 + names)
		return cli_usage_error(usage, "list: unexpected argument '%s'",
				       argv[1 + names]);
	for (int i = 0; i < profile_builtin_count(); i++) {
		struct fs_err err = { 0 };
		const char *name = profile_builtin_name(i);
		struct lanemap *lm;

		if (names) {
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

/*
 * The arguments of check and diff: positionals into pos[] (at most max;
 * *n counts all of them) and --format text|json, or for diff (pic not
 * NULL) svg|html too: *pic is then 's' or 'h', else 0. 0, or an exit
 * status.
 */
static int scan_args(int argc, char **argv, const char *cmd, enum lm_format *fmt,
		     const char **pos, int max, int *n, char *pic)
{
	const char *v;

	*fmt = LMF_TEXT;
	*n = 0;
	if (pic)
		*pic = 0;
	for (int i = 1; i < argc;) {
		int r = cli_opt(argc, argv, &i, "--format", &v);

		if (r < 0)
			return cli_usage_error(usage, "--format needs a value");
		if (r > 0 && pic && (!strcmp(v, "svg") || !strcmp(v, "html"))) {
			*pic = v[0];
			continue;
		}
		if (r > 0) {
			if (pic)
				*pic = 0;
			if (lmprint_format(v, fmt) || (*fmt != LMF_TEXT && *fmt != LMF_JSON))
				return cli_usage_error(usage, pic ? "%s: --format must be text, json, svg or html"
							      : "%s: --format must be text or json", cmd);
			continue;
		}
		if (*n < max)
			pos[*n] = argv[i];
		(*n)++;
		i++;
	}
	return 0;
}

static int do_check(int argc, char **argv)
{
	const char **files = calloc((size_t)argc, sizeof(*files));
	enum lm_format fmt;
	int worst = FS_OK, nfiles, bad;

	if (!files)
		return FS_EINTERNAL;
	bad = scan_args(argc, argv, "check", &fmt, files, argc, &nfiles, NULL);
	if (bad || !nfiles) {
		free(files);
		return bad ? bad : cli_usage_error(usage, "check: give at least one profile");
	}
	for (int i = 0; i < nfiles; i++) {
		struct lm_report rep;
		struct lanemap *lm;
		int rc;

		lm = load(files[i], &rep, &rc);
		if (!lm) {
			worst = FS_EINPUT;
			continue;
		}
		lmprint_report(stdout, files[i], lm, &rep, fmt);
		if (rc > worst)
			worst = rc;
		lanemap_free(lm);
	}
	free(files);
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
	enum lm_format fmt;
	const char *names[2] = { NULL, NULL };
	struct lanemap *lm[2] = { NULL, NULL };
	struct lm_report rep;
	struct lanediff d;
	struct fs_err err = { 0 };
	char pic;
	int n, rc = scan_args(argc, argv, "diff", &fmt, names, 2, &n, &pic);

	if (rc)
		return rc;
	if (n != 2)
		return cli_usage_error(usage, "diff: takes two profiles");
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
	const char *isa = NULL, *matrix = NULL, *format = NULL, *lane_s = NULL,
		   *entry = NULL, *v;
	enum lm_format fmt = LMF_TEXT;
	struct lm_report rep;
	struct lanemap *lm;
	unsigned mask = 7;
	int rc, svg = 0;

	for (int i = 1; i < argc;) {
		int r;

		if ((r = cli_opt(argc, argv, &i, "--isa", &v)) > 0)
			isa = v;
		else if (r == 0 && (r = cli_opt(argc, argv, &i, "--matrix", &v)) > 0)
			matrix = v;
		else if (r == 0 && (r = cli_opt(argc, argv, &i, "--format", &v)) > 0)
			format = v;
		else if (r == 0 && (r = cli_opt(argc, argv, &i, "--lane", &v)) > 0)
			lane_s = v;
		else if (r == 0 && (r = cli_opt(argc, argv, &i, "--entry", &v)) > 0)
			entry = v;
		if (r < 0)
			return cli_usage_error(usage, "%s needs a value", argv[i]);
		if (r == 0)
			return cli_usage_error(usage, "unknown argument '%s'", argv[i]);
	}
	if (!isa)
		return cli_usage_error(usage, "--isa is required");
	if (format && !strcmp(format, "svg"))
		svg = 1;
	else if (format && lmprint_format(format, &fmt))
		return cli_usage_error(usage, "--format must be text, md, csv, json, c, basis, basis-json or svg, not '%s'",
				       format);
	if (svg && (lane_s || entry))
		return cli_usage_error(usage, "--format svg draws whole operands: no --lane or --entry");
	if (fmt == LMF_C && (lane_s || entry || matrix))
		return cli_usage_error(usage, "--format c prints the whole map: no --matrix, --lane or --entry");
	if ((fmt == LMF_BASIS || fmt == LMF_BASIS_JSON) && (lane_s || entry))
		return cli_usage_error(usage, "--format %s describes whole operands: no --lane or --entry",
				       format);
	if (matrix) {
		if (strlen(matrix) != 1 || !strchr("ABCabc", matrix[0]))
			return cli_usage_error(usage, "--matrix must be A, B or C, not '%s'",
					       matrix);
		mask = 1u << (strchr("ABC", matrix[0] & ~0x20) - "ABC");
	}
	if ((lane_s != NULL) + (entry != NULL) + (matrix != NULL) > 1)
		return cli_usage_error(usage, "--matrix, --lane and --entry exclude each other");
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
			rc = cli_usage_error(usage, "--lane must be between 0 and %d, not '%s'",
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
			return cli_usage_error(usage, "--entry must look like 'C[3][10]', not '%s'",
					       entry);
		}
		if (row < 0 || col < 0 || row >= lm->op[op].rows ||
		    col >= lm->op[op].cols) {
			rc = cli_usage_error(usage, "--entry %s is outside the %dx%d matrix",
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
	if (cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return FS_OK;
	}
	if (argc < 2)
		return cli_usage_error(usage, "lanemap: missing arguments");
	if (!strcmp(argv[1], "list"))
		return do_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return do_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "diff"))
		return do_diff(argc - 1, argv + 1);
	return do_show(argc, argv);
}
