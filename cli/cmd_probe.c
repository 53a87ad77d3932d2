/*
 * cmd_probe.c - `fragsim probe`: find a matrix instruction's lane map on a
 * device. The math is sim/lanemap/probe.c, the plan and dump files are
 * lib/probeplan.c; this file reads the options and prints.
 *
 *   fragsim probe plan --isa gfx936 --out plan/           what to run
 *   (device: per wave, load probe_a/probe_b, one instruction, store C)
 *   fragsim probe solve --plan plan/ --dump dump/         compare, exit 0/1
 *   fragsim probe solve --plan plan/ --dump dump/ --yaml  the map found
 *   fragsim probe simulate --plan plan/ --isa gfx936-quad --out dump/
 *                                                        a device in software
 *
 * A plan is short (22 waves for gfx936) when the profile's maps are all
 * linear over GF(2), else, or with --exhaustive, exhaustive (1027).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../sim/lanemap/lanediff.h"
#include "../sim/lanemap/probe.h"
#include "cli.h"
#include "cmds.h"
#include "options.h"
#include "../lib/npy.h"
#include "../lib/outdir.h"
#include "../lib/probeplan.h"

struct probe_args {
	const char *isa, *out, *plan, *dump;
	int yaml, exhaustive;
};

#define OPT_ARGS struct probe_args
static const struct opt plan_opts[] = {
	OPT_STRING("--isa", isa, "<name|file>",
	  "the profile to probe", .flags = OPT_PROFILE),
	OPT_STRING("--out", out, "<dir>", "where the plan appears, whole"),
	OPT_FLAG("--exhaustive", exhaustive,
	  "light every A slot alone (2 x slots + 3 waves), for a\n"
	  "device that may not be linear [default: a short plan\n"
	  "when the profile's maps are linear over GF(2)]"),
	OPT_END(),
};
static const struct opt solve_opts[] = {
	OPT_STRING("--plan", plan, "<dir>", "a directory written by 'probe plan'"),
	OPT_STRING("--dump", dump, "<dir>",
	  "holds probe_c.npy: int32 [waves, lanes, C elements]"),
	OPT_STRING("--isa", isa, "<name|file>",
	  "the profile to compare with and name labels after",
	  .def = "the plan's", .flags = OPT_PROFILE),
	OPT_FLAG("--yaml", yaml, "print the map found as a profile YAML"),
	OPT_END(),
};
static const struct opt simulate_opts[] = {
	OPT_STRING("--plan", plan, "<dir>", "a directory written by 'probe plan'"),
	OPT_STRING("--isa", isa, "<name|file>",
	  "the map the simulated device follows", .flags = OPT_PROFILE),
	OPT_STRING("--out", out, "<dir>", "where the simulated dump appears, whole"),
	OPT_END(),
};
#undef OPT_ARGS

static const char *const plan_synopsis[] = {
	"probe plan --isa <name|file> --out <dir> [--exhaustive]", NULL
};
static const char *const solve_synopsis[] = {
	"probe solve --plan <dir> --dump <dir> [--isa <name|file>] [--yaml]", NULL
};
static const char *const simulate_synopsis[] = {
	"probe simulate --plan <dir> --isa <name|file> --out <dir>", NULL
};

static const struct opt_cmd plan_cmd = {
	.name = "plan", .synopsis = plan_synopsis, .opts = plan_opts,
	.parent = &cmd_probe_spec,
};
static const struct opt_cmd solve_cmd = {
	.name = "solve", .synopsis = solve_synopsis, .opts = solve_opts,
	.parent = &cmd_probe_spec,
};
static const struct opt_cmd simulate_cmd = {
	.name = "simulate", .synopsis = simulate_synopsis, .opts = simulate_opts,
	.parent = &cmd_probe_spec,
};
static const struct opt_cmd *const subs[] = { &plan_cmd, &solve_cmd, &simulate_cmd, NULL };

const struct opt_cmd cmd_probe_spec = {
	.name = "probe",
	.exit = "0 the device matches, 1 it differs, 2 bad input or answers\n"
		"that no lane map explains (a short plan's: plan again with\n"
		"--exhaustive), 3 internal error",
	.subs = subs,
};

#define DIFF_SHOWN 8	/* differing slots listed per operand */

/* --isa as an input: only when it names a file (a builtin name is none). */
static const char *isa_file(const char *isa)
{
	struct stat st;

	return isa && stat(isa, &st) == 0 && S_ISREG(st.st_mode) ? isa : NULL;
}

/*
 * --out may be no input and hold none (`simulate --plan P --out P`
 * would replace the plan it reads): outdir_io_check. 0 or the exit
 * status, the error printed.
 */
static int check_out(const char *plan, const char *isa, const char *out)
{
	const struct outdir_io io[] = {
		{ "--plan", plan, OUTDIR_READ },
		{ "--isa", isa_file(isa), OUTDIR_READ },
		{ "--out", out, OUTDIR_WRITE_DIR },
	};
	struct fs_err err = { 0 };
	enum fs_rc rc = outdir_io_check(io, sizeof(io) / sizeof(io[0]), &err);

	return rc ? cli_error(&err, rc) : FS_OK;
}

/* ---- plan ---- */

static void print_plan(const struct lanemap *lm, const struct probe_layout *pl,
		       const char *why, const char *out)
{
	size_t sa[3], sb[3], sc[3];

	probeplan_shape(lm, pl->waves, LM_A, sa);
	probeplan_shape(lm, pl->waves, LM_B, sb);
	probeplan_shape(lm, pl->waves, LM_C, sc);
	if (pl->kind == PROBE_SHORT)
		printf("plan      %s, %d waves, short: %d one-hot A probes (slot 0, %d "
		       "power-of-two slots, %d mixes) two a wave x %d digits, %d checks\n",
		       lm->name, pl->waves, pl->probes, pl->basis - 1,
		       pl->probes - pl->basis, PROBE_DIGITS, pl->checks);
	else
		printf("plan      %s, %d waves (%d one-hot A slots x %d digits, %d checks)\n",
		       lm->name, pl->waves, lm->wave * lm->op[LM_A].elems, PROBE_DIGITS,
		       pl->checks);
	if (why)
		printf("why       exhaustive: %s; a short plan reads linear maps only\n", why);
	printf("inputs    probe_a.npy %s [%zu, %zu, %zu], probe_b.npy %s [%zu, %zu, %zu]\n",
	       npy_dtype_name(probeplan_dtype(lm, LM_A)), sa[0], sa[1], sa[2],
	       npy_dtype_name(probeplan_dtype(lm, LM_B)), sb[0], sb[1], sb[2]);
	printf("device    writes probe_c.npy int32 [%zu, %zu, %zu]: per wave, one %s, C from 0\n",
	       sc[0], sc[1], sc[2], lm->instr);
	printf("written   to %s\n", out);
}

static int do_plan(const char *isa, const char *out, int exhaustive)
{
	struct fs_err err = { 0 };
	enum fs_rc rc;
	struct lanemap *lm = probeplan_profile(isa, &rc, &err);
	enum probe_kind kind = PROBE_EXHAUSTIVE;
	struct probe_layout pl;
	char why[128] = "";

	if (!lm)
		return cli_error(&err, rc);
	if (!exhaustive)
		kind = probe_default_kind(lm, why, sizeof(why));
	rc = probe_layout(lm, kind, &pl, &err);
	if (!rc)
		rc = probeplan_write(out, lm, &pl, &err);
	if (!rc)
		print_plan(lm, &pl, why[0] ? why : NULL, out);
	lanemap_free(lm);
	return rc ? cli_error(&err, rc) : FS_OK;
}

/* ---- simulate ---- */

static int do_simulate(const char *plan_dir, const char *isa, const char *out)
{
	struct fs_err err = { 0 };
	struct probeplan p;
	struct lanemap *dev = NULL;
	int32_t *c = NULL;
	size_t s[3];
	enum fs_rc rc = probeplan_load(plan_dir, &p, &err);

	if (!rc)
		dev = probeplan_profile(isa, &rc, &err);
	if (!rc && probe_same_geometry(p.lm, dev, &err))
		rc = FS_EINPUT;
	if (!rc) {
		probeplan_shape(p.lm, p.layout.waves, LM_C, s);
		c = malloc(s[0] * s[1] * s[2] * sizeof(*c));
		rc = c ? probe_device(dev, p.layout.waves, p.a, p.b, c, &err)
		       : fs_nomem(&err, "the simulated answers", s[0] * s[1] * s[2] * sizeof(*c));
	}
	if (!rc)
		rc = probeplan_write_dump(out, &p, dev->name, c, &err);
	if (!rc)
		printf("simulated %s answering a %splan for %s: %d waves, probe_c.npy written to %s\n",
		       dev->name, p.layout.kind == PROBE_SHORT ? "short " : "", p.lm->name,
		       p.layout.waves, out);
	free(c);
	lanemap_free(dev);
	probeplan_free(&p);
	return rc ? cli_error(&err, rc) : FS_OK;
}

/* ---- solve ---- */

/* "lanes 16-31" when whole lanes are unread, else the first few slots. */
static void print_unread(FILE *f, const struct lanemap *lm, enum lm_operand op,
			 const uint8_t *read)
{
	int el = lm->op[op].elems, whole = 1, shown = 0, n = 0;

	for (int l = 0; l < lm->wave; l++) {
		int r = 0;

		for (int e = 0; e < el; e++)
			r += read[l * el + e];
		whole &= r == 0 || r == el;
	}
	if (whole) {
		fprintf(f, "lanes");
		for (int l = 0; l < lm->wave; l++) {
			int end = l;

			if (read[l * el])
				continue;
			while (end + 1 < lm->wave && !read[(end + 1) * el])
				end++;
			fprintf(f, "%s %d", n++ ? "," : "", l);
			if (end > l)
				fprintf(f, "-%d", end);
			l = end;
		}
		return;
	}
	for (int s = 0; s < lm->wave * el; s++) {
		if (read[s])
			continue;
		if (shown++ == DIFF_SHOWN) {
			fprintf(f, " ...");
			break;
		}
		fprintf(f, "%slane %d e %d", shown > 1 ? ", " : "", s / el, s % el);
	}
}

/* "A", "B" or "A and B": the operands of a read_signed mask. */
static const char *signed_names(int read_signed)
{
	return read_signed == 3 ? "A and B" : read_signed == 1 ? "A" : "B";
}

static void print_found(FILE *f, const char *pre, const struct probeplan *p,
			const struct lanemap *anchor, const struct probe_result *r)
{
	const struct lanemap *lm = r->found;
	const struct probe_layout *pl = &p->layout;

	if (pl->kind == PROBE_SHORT) {
		fprintf(f, "%slinear    yes: the products of A slot 0 and the %d power-of-two "
			   "A slots span %d (2^%d); the %d mixes and %d check waves hold what "
			   "they predict\n", pre, pl->basis - 1, r->terms, r->span_dim,
			pl->probes - pl->basis, pl->checks);
		fprintf(f, "%sfound     %dx%dx%d (M x N x K): %d products\n", pre, lm->m,
			lm->n, lm->k, r->terms);
	} else {
		fprintf(f, "%sfound     %dx%dx%d (M x N x K): %d products; check waves %s, %s, %s hold\n",
			pre, lm->m, lm->n, lm->k, r->terms, probe_check_name(0),
			probe_check_name(1), probe_check_name(2));
	}
	for (int op = 0; op < 2; op++) {
		fprintf(f, "%sread      %s: %d of %d slots", pre,
			lm_operand_name((enum lm_operand)op),
			r->slots[op] - r->unread[op], r->slots[op]);
		if (r->unread[op]) {
			fprintf(f, "; never read: ");
			print_unread(f, p->lm, (enum lm_operand)op, r->read[op]);
			fprintf(f, " (copies the device ignores: what they hold is not "
				   "observable, %s's entries are kept)", anchor->name);
		}
		fputc('\n', f);
	}
	if (r->read_signed)
		fprintf(f, "%ssigned    %s: the plan's bytes are unsigned (u8), and the check waves "
			   "hold only as their signed (i8) reading; the device ignores the "
			   "operands' signedness (on RDNA3's iu8: its NEG_LO bits)\n", pre,
			signed_names(r->read_signed));
	fprintf(f, "%slabels    rows, columns and k named after %s (%d, %d, %d by vote); "
		   "renaming rows in A and C alike, columns in B and C, or k in A and B "
		   "changes no register, so no program can observe it\n",
		pre, anchor->name, r->labels_anchored[0], r->labels_anchored[1],
		r->labels_anchored[2]);
}

/*
 * How the device reads A and B against the profile an it is compared
 * with: found's types are the device's (the plan's, or i8 where the
 * answers hold only as signed readings of the plan's u8 bytes). Into
 * buf, "" when both agree: "reads unsigned operands as signed (A and
 * B)", or "... signed operands as unsigned ...", each where it applies.
 * Signedness is no entry of the map, so lanediff does not see it: a
 * device read as u8 "matched" an i8 profile whose entries it shares.
 */
static int sign_text(const struct lanemap *an, const struct lanemap *found, char *buf,
		     size_t len)
{
	int to_signed = 0, to_unsigned = 0;
	size_t at = 0;

	buf[0] = '\0';
	for (int op = LM_A; op <= LM_B; op++) {
		enum lm_dtype x = an->op[op].type, y = found->op[op].type;

		to_signed |= (x == LM_U8 && y == LM_I8) << op;
		to_unsigned |= (x == LM_I8 && y == LM_U8) << op;
	}
	if (to_signed)
		at += (size_t)snprintf(buf, len, "device reads unsigned operands as signed (%s)",
				       signed_names(to_signed));
	if (to_unsigned && at < len)
		snprintf(buf + at, len - at, "%sdevice reads signed operands as unsigned (%s)",
			 at ? ", " : "", signed_names(to_unsigned));
	return to_signed | to_unsigned;
}

static void print_diff(const struct lanemap *anchor, const struct lanemap *found,
		       const struct lanediff *d)
{
	char sign[160];
	int signs = sign_text(anchor, found, sign, sizeof(sign));

	printf("compare   X = %s, Y = the device\n", anchor->name);
	for (int op = 0; op < LM_NOPERANDS; op++) {
		const struct lanemap_operand *x = &anchor->op[op], *y = &found->op[op];
		const char *name = lm_operand_name((enum lm_operand)op);
		int shown = 0;

		printf("%s: %d of %d entries differ: %s\n", name, d->op[op].differ,
		       d->op[op].entries, d->op[op].verdict);
		if (d->op[op].differ && d->op[op].kind != LD_INCOMPARABLE)
			printf("   bits: %s\n", d->op[op].bits);
		for (int s = 0; s < anchor->wave * x->elems; s++) {
			if (x->row[s] == y->row[s] && x->col[s] == y->col[s])
				continue;
			if (shown++ == DIFF_SHOWN) {
				printf("  ...\n");
				break;
			}
			printf("  %s lane %d e %d: device %s[%d][%d], %s %s[%d][%d]\n",
			       name, s / x->elems, s % x->elems, name, y->row[s], y->col[s],
			       anchor->name, name, x->row[s], x->col[s]);
		}
	}
	/* Signedness is no entry of the map: said on its own, and a
	 * difference even when every entry agrees. */
	if (signs && d->differ)
		printf("device differs from %s: %s, and in %d entries\n", anchor->name, sign,
		       d->differ);
	else if (signs)
		printf("device differs from %s: %s; the lane map is the same\n", anchor->name,
		       sign);
	else if (d->differ)
		printf("device differs from %s in %d entries\n", anchor->name, d->differ);
	else
		printf("device matches %s\n", anchor->name);
}

static int do_solve(const char *plan_dir, const char *dump_dir, const char *isa,
		    int yaml)
{
	struct fs_err err = { 0 };
	struct probeplan p;
	struct lanemap *anchor = NULL;
	struct npy_array c = { 0 };
	struct probe_result *res = calloc(1, sizeof(*res));
	struct lanediff d;
	char *text = NULL;
	enum fs_rc rc = res ? probeplan_load(plan_dir, &p, &err)
			    : fs_nomem(&err, "the probe result", sizeof(*res));

	if (!rc && isa)
		anchor = probeplan_profile(isa, &rc, &err);
	if (!rc && anchor && probe_same_geometry(p.lm, anchor, &err))
		rc = FS_EINPUT;
	if (!rc)
		rc = probeplan_read_dump(dump_dir, &p, &c, &err);
	if (!rc) {
		rc = probe_solve(p.lm, &p.layout, anchor ? anchor : p.lm, p.a, p.b, c.data,
				 res, &err);
		if (rc && err.file[0] == '\0')
			snprintf(err.file, sizeof(err.file), "%s/probe_c.npy", dump_dir);
	}
	if (!rc)
		rc = lanediff_compare(anchor ? anchor : p.lm, res->found, &d, &err);
	if (!rc && yaml && !(text = probeplan_profile_yaml(res->found)))
		rc = fs_nomem(&err, "the found map as YAML", 0);
	if (!rc) {
		const struct lanemap *an = anchor ? anchor : p.lm;
		char sign[160];
		int signs = sign_text(an, res->found, sign, sizeof(sign));

		if (yaml) {
			printf("# %s's lane map, as fragsim probe solve found it\n", p.lm->instr);
			print_found(stdout, "# ", &p, an, res);
			if (signs)
				printf("# differs from the profile named above: %s%s\n", sign,
				       d.differ ? ", and its lane map differs" : "");
			else
				printf("# %s\n", d.differ ? "differs from the profile named above"
							  : "identical to the profile named above");
			fputs(text, stdout);
		} else {
			printf("probe     %splan for %s (%d waves), answers from %s, compared with %s\n",
			       p.layout.kind == PROBE_SHORT ? "short " : "", p.lm->name,
			       p.layout.waves, dump_dir, an->name);
			print_found(stdout, "", &p, an, res);
			print_diff(an, res->found, &d);
		}
		rc = d.differ || signs ? FS_MISMATCH : FS_OK;
	} else {
		cli_error(&err, rc);
	}
	if (res)
		lanemap_free(res->found);
	free(res);
	free(text);
	npy_free(&c);
	lanemap_free(anchor);
	probeplan_free(&p);
	return rc;
}

int cmd_probe(int argc, char **argv)
{
	struct probe_args a = { 0 };
	const struct opt_cmd *sub = NULL;
	int n, rc;

	for (int i = 0; argc > 1 && subs[i]; i++)
		if (!strcmp(argv[1], subs[i]->name))
			sub = subs[i];
	if (!sub) {
		if (argc > 1 && argv[1][0] != '-')
			return opt_error(&cmd_probe_spec, "probe: unknown subcommand '%s'", argv[1]);
		if (opt_parse(&cmd_probe_spec, NULL, argc, argv, &rc) < 0)
			return rc;	/* --help, or an option before the subcommand */
		return opt_error(&cmd_probe_spec, "probe: missing subcommand (plan, solve or simulate)");
	}
	if ((n = opt_parse(sub, &a, argc - 1, argv + 1, &rc)) < 0)
		return rc;
	if (n)
		return opt_error(sub, "unexpected argument '%s'", argv[1]);
	if (sub == &plan_cmd) {
		if (!a.isa || !a.out)
			return opt_error(sub, "plan takes --isa and --out, and may take --exhaustive");
		return check_out(NULL, a.isa, a.out) ? FS_EINPUT
						     : do_plan(a.isa, a.out, a.exhaustive);
	}
	if (sub == &simulate_cmd) {
		if (!a.plan || !a.isa || !a.out)
			return opt_error(sub, "simulate takes --plan, --isa and --out");
		return check_out(a.plan, a.isa, a.out) ? FS_EINPUT
						       : do_simulate(a.plan, a.isa, a.out);
	}
	if (!a.plan || !a.dump)
		return opt_error(sub, "solve takes --plan and --dump, and may take --isa and --yaml");
	return do_solve(a.plan, a.dump, a.isa, a.yaml);
}
