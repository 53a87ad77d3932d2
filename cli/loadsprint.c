/*
 * loadsprint.c - `fragsim lanemap loads`: where each lane's fragment
 * comes from in memory (sim/lmloads.h), as a table and a verdict:
 *
 *   lane  elems  key  dims    block  bytes       loads
 *      0  0..7     0  0..7        0  +0..+7      1 (8 B)
 *   ...
 *   64 lanes, 64 loads: every lane one aligned 8-byte load; this layout
 *   is shaped for this instruction
 *
 * or as JSON (one object per lane and run) for tools.
 */
#include "lmprint.h"

#include "../sim/lmloads.h"

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

void lmprint_loads(FILE *f, const struct lml_frag *fr, int q, enum lm_format fmt)
{
	/* A's rows are q heads (decode) or tokens (prefill); B's columns keys. */
	const char *keyword = q ? "row" : "key";

	if (fmt == LMF_JSON)
		json(f, fr, keyword);
	else
		text(f, fr, keyword);
}
