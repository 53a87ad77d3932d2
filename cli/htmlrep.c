/*
 * htmlrep.c - the HTML reports (see htmlrep.h).
 *
 * A run's page, top to bottom: the verdict; the exact checks per tensor;
 * the quantization figures; the error by key position as two bar charts
 * (ref/'s buckets: score max|err| and RMS dp per bucket of key
 * positions); the case as fragsim read it, every default filled in
 * (case_print, as `fragsim show` prints it), folded in a <details>; the
 * text summary without its timings, so the same case gives the same
 * page.
 *
 * diff's page adds where the mismatches are: counts per (lane, register)
 * of C, where a lane-map bug shows as stripes, and per (key, attention
 * row), where a page-walk or mask bug shows as columns or a triangle,
 * under the diagnosis and the ranked hypotheses.
 */
#include "htmlrep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/casefile.h"
#include "../lib/heatmap.h"
#include "../lib/outdir.h"
#include "html.h"
#include "plot.h"
#include "report.h"
#include "svg.h"

enum fs_rc htmlrep_check(const char *path, struct fs_err *err)
{
	return outdir_file_check(path, err);
}

enum fs_rc htmlrep_save(const char *path, void (*fn)(FILE *, const void *),
			const void *arg, struct fs_err *err)
{
	struct outdir_file out = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	enum fs_rc rc;

	if (!f)
		return fs_nomem(err, "the HTML report", 0);
	fn(f, arg);
	if (fclose(f)) {
		free(buf);
		return fs_nomem(err, "the HTML report", len);
	}
	rc = outdir_file_open(&out, path, err);
	if (!rc)
		rc = outdir_file_write(&out, buf, len, err);
	if (!rc)
		rc = outdir_file_commit(&out, err);
	else
		outdir_file_abort(&out);
	free(buf);
	return rc;
}

static void tag_text(FILE *f, const char *tag, const char *text)
{
	fprintf(f, "<%s>", tag);
	svg_escape(f, text);
	fprintf(f, "</%s>", tag);
}

/* A number cell: NaN as "n/a". */
static void num_cell(FILE *f, double v)
{
	if (v != v)
		fputs("<td class=\"n\">n/a</td>", f);
	else
		fprintf(f, "<td class=\"n\">%.6g</td>", v);
}

/* The text of fn(r), as <pre>, without the lines that start with skip. */
static void pre_of(FILE *f, void (*fn)(FILE *, const struct runcase *),
		   const struct runcase *r, const char *skip)
{
	char *buf = NULL, *line;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return;
	fn(m, r);
	if (fclose(m)) {
		free(buf);
		return;
	}
	fputs("<pre>", f);
	for (line = buf; line && *line;) {
		char *eol = strchr(line, '\n');

		if (eol)
			*eol = '\0';
		if (!skip || strncmp(line, skip, strlen(skip))) {
			svg_escape(f, line);
			fputc('\n', f);
		}
		line = eol ? eol + 1 : NULL;
	}
	fputs("</pre>\n", f);
	free(buf);
}

static void print_case(FILE *f, const struct runcase *r)
{
	case_print(f, &r->c);
}

static void exact_table(FILE *f, const struct compare_report *rep)
{
	fputs("<table class=\"exact\"><tr><th>tensor</th><th>compared</th><th>mismatches</th>"
	      "<th>max |got - want|</th><th>max error / tolerance</th></tr>\n", f);
	for (int w = 0; w < CMP_NWHAT; w++) {
		const struct compare_stat *s = &rep->stat[w];

		if (!s->ran)
			continue;
		fprintf(f, "<tr%s><td>%s</td><td class=\"n\">%ld</td><td class=\"n\">%ld</td>",
			s->mismatches ? " class=\"bad\"" : "",
			compare_what_name((enum compare_what)w), s->compared, s->mismatches);
		num_cell(f, s->max_abs_err);
		num_cell(f, s->max_err_tol);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void quant_table(FILE *f, const struct compare_quant *q)
{
	static const char *const names[] = {
		"score max |err|", "score NMSE", "out cosine, min", "out cosine, mean",
		"out max |err|", "KL divergence, mean (nats)", "KL divergence, median",
		"KL divergence, p99", "top-1 agreement", "RMS of dp",
	};
	double v[] = { q->score_max_abs, q->score_nmse, q->out_cos_min, q->out_cos_mean,
		       q->out_max_abs, q->kld_mean, q->kld_median, q->kld_p99, q->top1,
		       q->rms_dp };

	fprintf(f, "<table class=\"quant\"><tr><th>INT8 against the float path "
		"(%ld rows, %ld keys)</th><th>value</th></tr>\n", q->rows, q->keys);
	for (size_t i = 0; i < FS_ARRAY_LEN(v); i++) {
		fputs("<tr>", f);
		tag_text(f, "td", names[i]);
		num_cell(f, v[i]);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void bucket_plots(FILE *f, const struct compare_quant *q)
{
	int lo[CASE_MAX_BUCKETS], hi[CASE_MAX_BUCKETS];
	double smax[CASE_MAX_BUCKETS], rms[CASE_MAX_BUCKETS];
	int n = q->n_buckets;

	if (n <= 0)
		return;
	for (int i = 0; i < n; i++) {
		lo[i] = q->bucket[i].lo;
		hi[i] = q->bucket[i].hi;
		smax[i] = q->bucket[i].keys ? q->bucket[i].score_max_abs : NAN;
		rms[i] = q->bucket[i].keys ? q->bucket[i].rms_dp : NAN;
	}
	fputs("<figure>\n", f);
	plot_bars(f, "score_max_abs", "score max |s_int8 - s_float| by key position",
		  "max|err|", n, lo, hi, smax);
	plot_bars(f, "rms_dp", "RMS of p_int8 - p_float by key position", "RMS dp",
		  n, lo, hi, rms);
	fputs("<figcaption>error by key position: the INT8 path against the float "
	      "reference, per bucket of key positions</figcaption>\n</figure>\n", f);
}

void htmlrep_case(FILE *f, const struct runcase *r)
{
	char reason[1200];
	int ok = runcase_expected(r) == FS_OK;

	fputs("<section class=\"case\">\n", f);
	tag_text(f, "h2", r->c.name);
	report_reason(r, reason, sizeof(reason));
	fprintf(f, "\n<p class=\"verdict %s\">", ok ? "ok" : "bad");
	svg_escapef(f, "%s%s%s", r->emulate_only ? "emulated only, not checked" :
			   ok ? "OK" : "FAIL", reason[0] ? ": " : "", reason);
	fputs("</p>\n<p>file: ", f);
	svg_escape(f, r->c.file);
	fputs("</p>\n", f);
	if (r->have_cmp && !r->emulate_only) {
		fputs("<h3>Exact checks</h3>\n", f);
		exact_table(f, &r->cmp);
		fputs("<h3>Quantization</h3>\n", f);
		quant_table(f, &r->cmp.quant);
		if (r->cmp.n_failed) {
			fputs("<ul class=\"failed\">\n", f);
			for (int i = 0; i < r->cmp.n_failed; i++)
				tag_text(f, "li", r->cmp.failed[i].reason);
			fputs("</ul>\n", f);
		}
		bucket_plots(f, &r->cmp.quant);
	}
	/* Long (60 lines): folded, which HTML does without a script. */
	fputs("<details><summary>The case, every default filled in</summary>\n", f);
	pre_of(f, print_case, r, NULL);
	fputs("</details>\n<h3>Summary</h3>\n", f);
	pre_of(f, report_summary, r, "time ");
	fputs("</section>\n", f);
}

void htmlrep_run(FILE *f, const void *arg)
{
	const struct runcase *r = arg;
	char title[200];

	snprintf(title, sizeof(title), "fragsim run: %s", r->c.name);
	html_begin(f, title);
	tag_text(f, "h1", title);
	fputc('\n', f);
	htmlrep_case(f, r);
	html_end(f);
}

static void hypotheses(FILE *f, const struct diff_diagnosis *dg)
{
	fputs("<table class=\"hypotheses\"><tr><th>hypothesis</th><th>elements it reproduces</th>"
	      "<th>%</th></tr>\n", f);
	for (int i = 0; i < dg->n; i++) {
		fputs("<tr>", f);
		tag_text(f, "td", dg->h[i].name);
		fprintf(f, "<td class=\"n\">%ld/%ld</td>", dg->h[i].matched, dg->compared);
		num_cell(f, 100.0 * (double)dg->h[i].matched / (double)dg->compared);
		fputs("</tr>\n", f);
	}
	fprintf(f, "<tr><td>(the case as written)</td><td class=\"n\">%ld/%ld</td>",
		dg->expect_matched, dg->compared);
	num_cell(f, 100.0 * (double)dg->expect_matched / (double)dg->compared);
	fputs("</tr>\n</table>\n", f);
}

struct diff_page {
	const struct runcase *r;
	const char *dump_dir;
	const struct diff_report *rep, *all;
	const struct diff_diagnosis *dg;
	const char *verdict;
};

static void diff_page(FILE *f, const void *arg)
{
	const struct diff_page *a = arg;
	struct heatmap *h = malloc(sizeof(*h));
	char title[300];

	snprintf(title, sizeof(title), "fragsim diff: %s against %s", a->r->c.name,
		 a->dump_dir);
	html_begin(f, title);
	tag_text(f, "h1", title);
	fprintf(f, "\n<p class=\"verdict %s\">", a->rep->mismatches ? "bad" : "ok");
	if (a->rep->mismatches)
		svg_escapef(f, "mismatch: %ld of %ld elements differ", a->rep->mismatches,
			    a->rep->compared);
	else
		svg_escapef(f, "match: the dump is what the case computes (%ld elements)",
			    a->rep->compared);
	fputs("</p>\n<p class=\"diagnosis caption\">", f);
	svg_escape(f, a->verdict);
	fputs("</p>\n<table class=\"tensors\"><tr><th>tensor</th><th>compared</th>"
	      "<th>mismatches</th><th>max abs</th><th>max rel</th></tr>\n", f);
	for (int t = 0; t < DUMP_COUNT; t++) {
		const struct diff_stat *st = &a->rep->stat[t];

		if (!st->present)
			continue;
		fprintf(f, "<tr%s><td>%s%s</td><td class=\"n\">%ld</td><td class=\"n\">%ld</td>",
			st->mismatches ? " class=\"bad\"" : "", dump_name((enum dump_tensor)t),
			st->bf16 ? " (at BF16)" : "", st->compared, st->mismatches);
		num_cell(f, st->mismatches ? st->max_abs : 0);
		num_cell(f, st->mismatches ? st->max_rel : 0);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	if (a->dg && a->rep->mismatches) {
		fputs("<h2>Hypotheses, by the dumped elements each reproduces</h2>\n", f);
		hypotheses(f, a->dg);
	}
	if (h && a->rep->mismatches) {
		fputs("<h2>Where the mismatches are</h2>\n<figure>\n", f);
		heatmap_lane_reg(h, a->all, a->r->lm);
		plot_heat(f, "lane_reg", "mismatches of C by lane and register", h, "lane",
			  "register");
		heatmap_key_row(h, a->all, &a->r->c);
		plot_heat(f, "key_row", "mismatches by key and attention row", h,
			  "row (s, t, q head)", "key");
		fputs("<figcaption>", f);
		svg_escape(f, a->verdict);
		fputs("</figcaption>\n</figure>\n", f);
	}
	free(h);
	fputs("<details><summary>The case, every default filled in</summary>\n", f);
	pre_of(f, print_case, a->r, NULL);
	fputs("</details>\n", f);
	html_end(f);
}

enum fs_rc htmlrep_diff_save(const char *path, const struct runcase *r,
			     const char *dump_dir, const struct dump *d,
			     const struct diff_opts *o, const struct diff_report *rep,
			     const struct diff_diagnosis *dg, const char *verdict,
			     struct fs_err *err)
{
	struct diff_opts every = *o;
	struct diff_report all = { 0 };
	struct diff_page page = { r, dump_dir, rep, &all, dg, verdict };
	enum fs_rc rc;

	every.max_show = DIFF_MAX_SHOW;
	rc = diffcase_compare(r, &r->sim, d, &every, &all, err);
	if (!rc)
		rc = htmlrep_save(path, diff_page, &page, err);
	diffcase_report_free(&all);
	return rc;
}

/* <a href="file:///abs/path">: a link that works wherever the report
 * is moved on this machine (a path as given is relative to where the
 * command ran). Characters a URL cannot hold raw are %-encoded. */
static void link_file(FILE *f, const char *path)
{
	char *abs = realpath(path, NULL);

	fputs("<a href=\"file://", f);
	for (const unsigned char *p = (const unsigned char *)(abs ? abs : path); *p; p++) {
		if (*p <= ' ' || *p >= 0x7f || strchr("\"#%&'<>?", *p))
			fprintf(f, "%%%02X", *p);
		else
			fputc(*p, f);
	}
	fputs("\">", f);
	free(abs);
}

void htmlrep_table(FILE *f, const void *arg)
{
	const struct htmlrep_table *t = arg;

	html_begin(f, t->title);
	tag_text(f, "h1", t->title);
	fputc('\n', f);
	tag_text(f, "p", t->summary);
	fputs("\n<table class=\"cases\"><tr>", f);
	for (int c = 0; c < HTMLREP_COLS && t->head[c]; c++)
		tag_text(f, "th", t->head[c]);
	fputs("</tr>\n", f);
	for (size_t i = 0; i < t->n; i++) {
		const struct htmlrep_row *row = &t->rows[i];

		fprintf(f, "<tr%s>", row->bad ? " class=\"bad\"" : "");
		for (int c = 0; c < HTMLREP_COLS && t->head[c]; c++) {
			/* cell 0 links to the row's section, cell 1 to its file
			 * (relative, as given: no network, nothing fetched). */
			const char *href = c == 0 && row->section ? "#" : c == 1 ? row->file : NULL;

			fputs("<td>", f);
			if (href && *href == '#') {
				fprintf(f, "<a href=\"#row-%zu\">", i);
			} else if (href) {
				link_file(f, href);
			}
			svg_escape(f, row->cell[c] ? row->cell[c] : "");
			if (href)
				fputs("</a>", f);
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].section)
			fprintf(f, "<div id=\"row-%zu\">\n%s</div>\n", i, t->rows[i].section);
	html_end(f);
}
