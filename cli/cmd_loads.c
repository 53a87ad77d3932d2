/*
 * cmd_loads.c - `fragsim lanemap loads`: where each lane's fragment
 * comes from in memory (sim/lanemap/lmloads.h), as a table and a verdict:
 *
 *   fragsim lanemap loads --isa gfx936                      B from the cache
 *   fragsim lanemap loads --isa gfx936 --cache '[NB, Hkv, D, BS]'
 *   fragsim lanemap loads --isa gfx936 --q --mode prefill   A from Q
 *
 *   lane  elems   key  dims      block  bytes            loads
 *      0  0..7       0 0..7          0  +0..+7           1 (8 B)
 *   ...
 *   64 lanes load, 64 loads, the widest 8 B: every lane one aligned load
 *   (a vector load); this layout is shaped for this instruction
 *
 * or as JSON (one object per lane and run) for tools.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/lanemap/lmloads.h"
#include "cli.h"
#include "cmds.h"
#include "lmprint.h"
#include "options.h"
#include "../lib/profile.h"

struct loads_args {
	const char *isa, *cache, *mode, *format;
	long head_dim, block_size, kv_heads, q_heads, head, step;
	int q;
};

#define OPT_ARGS struct loads_args
static const char *const modes[] = { "decode", "prefill", NULL };
static const char *const formats[] = { "text", "json", NULL };

static const struct opt loads_opts[] = {
	OPT_STRING("--isa", isa, "<name|file>", "the instruction's profile",
	  .flags = OPT_PROFILE),
	OPT_STRING("--cache", cache, "<layout>",
	  "the K cache: paged16 = [NB, Hkv, D/16, BS, 16] (fragsim's),\n"
	  "nhd = [NB, BS, Hkv, D], hnd = [NB, Hkv, BS, D], or a list\n"
	  "of NB, Hkv, BS, D, D/n and n (not with --q)", .def = "paged16"),
	OPT_FLAG("--q", q, "the A fragment from Q [T, Hq, D] instead of B from K"),
	OPT_CHOICE("--mode", mode, NULL, modes,
	  "--q: A's rows are a GQA group's heads or query tokens", .def = "decode"),
	OPT_INT("--head-dim", head_dim, "<D>", 1, 4096, "head dimension", .def = "256"),
	OPT_INT("--block-size", block_size, "<BS>", 1, 65536,
	  "tokens per block (not with --q)", .def = "16"),
	OPT_INT("--kv-heads", kv_heads, "<H>", 1, 1024, "KV heads", .def = "4"),
	OPT_INT("--q-heads", q_heads, "<H>", 1, 4096, "query heads (--q)", .def = "24"),
	OPT_INT("--head", head, "<h>", 0, 4095,
	  "the kv head (decode: its group; prefill --q: the q head)", .def = "0"),
	OPT_INT("--step", step, "<s>", 0, 4095, "the K-step", .def = "0"),
	OPT_CHOICE("--format", format, NULL, formats, "text or json", .def = "text"),
	OPT_END(),
};
#undef OPT_ARGS

static const char *const loads_synopsis[] = {
	"lanemap loads --isa <name|file> [--cache <layout>] [--block-size <BS>]",
	" [--head-dim <D>] [--kv-heads <H>] [--head <h>] [--step <s>] [--format text|json]",
	"lanemap loads --isa <name|file> --q [--mode decode|prefill] [--q-heads <H>]",
	" [--head-dim <D>] [--kv-heads <H>] [--head <h>] [--step <s>] [--format text|json]",
	NULL,
};

const struct opt_cmd lanemap_loads_cmd = {
	.name = "loads", .synopsis = loads_synopsis, .opts = loads_opts,
	.parent = &cmd_lanemap_spec,
};

static void range(char *buf, size_t len, long a, long n)
{
	if (n == 1)
		snprintf(buf, len, "%ld", a);
	else
		snprintf(buf, len, "%ld..%ld", a, a + n - 1);
}

static void verdict(FILE *f, const struct lml_frag *fr)
{
	int held = 0;

	for (int l = 0; l < fr->lanes; l++)
		if (fr->lane[l].nrun)
			held++;
	fprintf(f, "%d lanes load, %d loads, the widest %d B: ", held, fr->loads,
		fr->widest);
	if (held && fr->lanes_one_load == held)
		fprintf(f, "every lane one aligned load (%s); this layout is shaped for this instruction\n",
			fr->widest >= 8 ? "a vector load" : "narrower than 8 B");
	else if (!held)
		fputs("no lane loads anything (all padding)\n", f);
	else
		fprintf(f, "%d of %d lanes need more than one load; this layout is not shaped for this instruction\n",
			held - fr->lanes_one_load, held);
}

static void text(FILE *f, const struct lml_frag *fr, const char *keyword)
{
	fprintf(f, "lane  elems   %-4s dims      block  bytes            loads\n", keyword);
	for (int l = 0; l < fr->lanes; l++) {
		const struct lml_lane *L = &fr->lane[l];

		if (!L->nrun)
			fprintf(f, "%4d  -       (nothing: %d padded element%s)\n", l,
				L->padded, L->padded == 1 ? "" : "s");
		for (int i = 0; i < L->nrun; i++) {
			const struct lml_run *r = &L->run[i];
			char e[48], d[48], b[48];

			range(e, sizeof(e), r->e0, r->ne);
			range(d, sizeof(d), r->dim, r->ne);
			snprintf(b, sizeof(b), "+%ld..+%ld", (long)r->off,
				 (long)r->off + r->bytes - 1);
			if (i)
				fprintf(f, "%4s  ", "");
			else
				fprintf(f, "%4d  ", l);
			fprintf(f, "%-7s %4d %-9s %5d  %-16s %d", e, r->key, d, r->block, b,
				r->loads);
			if (r->loads == 1)
				fprintf(f, " (%d B)", r->bytes);
			fputc('\n', f);
		}
	}
	verdict(f, fr);
}

static void json(FILE *f, const struct lml_frag *fr, const char *keyword)
{
	fprintf(f, "{\"loads\": %d, \"widest\": %d, \"lanes_one_load\": %d, \"lanes\": [",
		fr->loads, fr->widest, fr->lanes_one_load);
	for (int l = 0; l < fr->lanes; l++) {
		const struct lml_lane *L = &fr->lane[l];

		fprintf(f, "%s\n  {\"lane\": %d, \"padded\": %d, \"loads\": %d, \"runs\": [",
			l ? "," : "", l, L->padded, L->loads);
		for (int i = 0; i < L->nrun; i++) {
			const struct lml_run *r = &L->run[i];

			fprintf(f, "%s{\"e0\": %d, \"elements\": %d, \"%s\": %d, \"dim\": %d, \"block\": %d, \"offset\": %ld, \"bytes\": %d, \"loads\": %d}",
				i ? ", " : "", r->e0, r->ne, keyword, r->key, r->dim,
				r->block, (long)r->off, r->bytes, r->loads);
		}
		fputs("]}", f);
	}
	fputs("\n]}\n", f);
}

int do_loads(int argc, char **argv)
{
	/* --cache, --block-size (K only), --mode and --q-heads (--q only)
	 * stay NULL / 0 until given, so one given to the other view is an
	 * error, not accepted and ignored; their defaults are set below. */
	struct loads_args a = { .format = "text", .head_dim = 256, .kv_heads = 4 };
	struct fs_err err = { 0 };
	struct lm_report rep;
	struct lml_layout l;
	struct lml_frag *fr = NULL;
	struct lanemap *lm = NULL;
	int n, rc, prefill;

	if ((n = opt_parse(&lanemap_loads_cmd, &a, argc, argv, &rc)) < 0)
		return rc;
	if (n)
		return opt_error(&lanemap_loads_cmd, "unexpected argument '%s'", argv[1]);
	if (!a.isa)
		return opt_error(&lanemap_loads_cmd, "loads: give --isa");
	if (!a.q && (a.mode || a.q_heads))
		return opt_error(&lanemap_loads_cmd, "%s needs --q (it shapes A from Q; "
				 "without --q loads shows B from the K cache)",
				 a.mode ? "--mode" : "--q-heads");
	if (a.q && (a.cache || a.block_size))
		return opt_error(&lanemap_loads_cmd, "%s describes the K cache: not with --q "
				 "(A comes from Q [T, Hq, D])", a.cache ? "--cache" : "--block-size");
	if (!a.cache)
		a.cache = "paged16";
	if (!a.mode)
		a.mode = "decode";
	if (!a.block_size)
		a.block_size = 16;
	if (!a.q_heads)
		a.q_heads = 24;
	prefill = !strcmp(a.mode, "prefill");
	if (!(lm = profile_resolve(a.isa, &err)))
		return cli_error(&err, fs_err_rc(&err, FS_EINPUT));
	rc = lanemap_validate(lm, &rep);
	if (rc == FS_MISMATCH)
		rc = fs_fail(&err, FS_EINPUT, "%s: not a valid profile ('fragsim lanemap check %s' says why)",
			     lm->name, a.isa);
	else if (rc)
		rc = fs_nomem(&err, "the profile's inverse tables", 0);
	if (!rc && !(fr = malloc(sizeof(*fr))))
		rc = fs_nomem(&err, "the fragment table", sizeof(*fr));
	if (!rc && a.q)
		rc = a.q_heads % a.kv_heads ?
			fs_fail(&err, FS_EINPUT, "--q-heads %ld is not a multiple of --kv-heads %ld",
				a.q_heads, a.kv_heads) :
			lml_q_frag(lm, (int)a.q_heads, (int)a.head_dim,
				   (int)(a.q_heads / a.kv_heads), prefill, (int)a.head,
				   (int)a.step, fr, &err);
	else if (!rc && !(rc = lml_parse(a.cache, (int)a.kv_heads, (int)a.block_size,
					 (int)a.head_dim, &l, &err)))
		rc = lml_k_frag(lm, &l, (int)a.head, (int)a.step, fr, &err);
	if (!rc && !strcmp(a.format, "json"))
		json(stdout, fr, a.q ? "row" : "key");
	else if (!rc) {
		if (a.q)
			printf("%s %s: A (Q) of K-step %ld, %s %ld, from Q [T, Hq, D] (Hq %ld, D %ld), byte offsets from the first row\n",
			       lm->name, lm->instr, a.step, prefill ? "q head" : "kv head",
			       a.head, a.q_heads, a.head_dim);
		else
			printf("%s %s: B (K) of K-step %ld, kv head %ld, from the K cache %s (Hkv %ld, BS %ld, D %ld), byte offsets within a block\n",
			       lm->name, lm->instr, a.step, a.head, l.text, a.kv_heads,
			       a.block_size, a.head_dim);
		text(stdout, fr, a.q ? "row" : "key");
	}
	free(fr);
	lanemap_free(lm);
	return rc ? cli_error(&err, rc) : FS_OK;
}
