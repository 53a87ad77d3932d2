/*
 * lmsvg.c - lane maps as SVG pictures (see lmsvg.h), the way CuTe's
 * print_svg and the AMD Matrix Instruction Calculator draw them: the
 * matrix as a grid, each entry filled with its owner lane's colour
 * (svg.h: 16 hues x 4 lightness steps) and labelled
 *
 *   +--------+
 *   |   17   |   lane (bold)
 *   | e0 r0.0|   element, register.byte (register alone for 32-bit)
 *   +--------+
 *
 * with row numbers on the left and column numbers on top. For gfx936 A,
 * row 1 reads lanes 1 x8, 17 x8, 33 x8, 49 x8: lane 17 holds A[1][8..15].
 * Each cell is a <g class="cell"> whose <title> names the entry and every
 * owner ("A[1][8]: lane 17, element 0 (register 0, byte 0)"), so a
 * browser shows it on hover and a test can read it back. A replicated
 * entry shows its first owner and "+N".
 *
 * The diff picture puts X and Y side by side for each operand that
 * differs; entries whose owner sets differ are outlined in red and the
 * rest faded, under the verdict and bits lines of lanediff.
 *
 * Every picture fits a 1400 px window (FIT_W, which leaves an HTML
 * page's 16 px margins and a scrollbar): a diff whose grids side by side
 * would be wider (two 16-column grids are 1924 px with the margins)
 * puts Y's grid under X's, and a picture still wider (one 32-column
 * grid is 1822 px) is drawn at its size and shown scaled down
 * (svg_begin_fit), so its coordinates, and a test's reading of them,
 * are the same at any width.
 */
#include "lmsvg.h"

#include <string.h>

#include "html.h"
#include "svg.h"

enum {
	CW = 56, CH = 34,	/* a cell */
	RL = 30,		/* the row-number column */
	CN = 16,		/* the column-number row */
	HEAD = 22,		/* a grid's heading */
	MARGIN = 16, GAP = 40,
	LINE = 17,		/* a line of text */
	MIN_W = 800,
	FIT_W = 1344,		/* shown width at most: 1400 - 2 x 16 - 24 */
};

static const char *const axis[LM_NOPERANDS][2] = {
	{ "m", "k" }, { "k", "n" }, { "m", "n" },
};

static int grid_w(const struct lanemap *lm, enum lm_operand op)
{
	return RL + lm->op[op].cols * CW;
}

static int grid_h(const struct lanemap *lm, enum lm_operand op)
{
	return HEAD + CN + lm->op[op].rows * CH;
}

/* Text wrapped at spaces to at most `width` characters per line: the
 * number of lines; drawn from (x, y) down when f is not NULL. */
static int wrap(FILE *f, double x, double y, const char *cls, const char *s,
		int width)
{
	int n = 0;

	while (*s) {
		size_t len = strlen(s), cut = len;
		char line[1024];

		if ((int)len > width) {
			cut = (size_t)width;
			while (cut > (size_t)width / 2 && s[cut] != ' ')
				cut--;
			if (s[cut] != ' ')
				cut = (size_t)width;
		}
		if (cut >= sizeof(line))
			cut = sizeof(line) - 1;
		memcpy(line, s, cut);
		line[cut] = '\0';
		if (f)
			svg_text(f, x, y + n * LINE, cls, "%s", line);
		n++;
		s += cut;
		while (*s == ' ')
			s++;
	}
	return n;
}

/* "element 5 (register 1, byte 1)" of slot s's element. */
static void owner_words(const struct lanemap *lm, enum lm_operand op, int s,
			char *buf, size_t len)
{
	int e = s % lm->op[op].elems, reg, byte;

	lanemap_reg_byte(lm, op, e, &reg, &byte);
	snprintf(buf, len, "lane %d, element %d (register %d, byte %d)",
		 s / lm->op[op].elems, e, reg, byte);
}

/*
 * One operand's grid with its top-left corner at (x0, y0). differ, when
 * not NULL, marks entries (row * cols + col) to outline; the others fade.
 */
static void grid(FILE *f, const struct lanemap *lm, enum lm_operand op,
		 const char *heading, int x0, int y0, const unsigned char *differ)
{
	const struct lanemap_operand *o = &lm->op[op];
	int byte_type = lm_dtype_size(o->type) < 4, top = y0 + HEAD + CN;

	fprintf(f, "<g class=\"matrix\" data-matrix=\"%s\" data-rows=\"%d\" data-cols=\"%d\">\n",
		lm_operand_name(op), o->rows, o->cols);
	svg_text(f, x0, y0 + 15, "h2", "%s", heading);
	for (int c = 0; c < o->cols; c++)
		svg_text(f, x0 + RL + c * CW + CW / 2.0, y0 + HEAD + CN - 4, "num", "%d", c);
	for (int r = 0; r < o->rows; r++) {
		int y = top + r * CH;

		svg_text(f, x0 + RL / 2.0, y + CH / 2.0 + 4, "num", "%d", r);
		for (int c = 0; c < o->cols; c++) {
			int slots[LM_MAX_REPLICAS], x = x0 + RL + c * CW, reg, byte;
			int n = lanemap_owners(lm, op, r, c, slots, LM_MAX_REPLICAS);
			int lane = slots[0] / o->elems, e = slots[0] % o->elems;
			char fill[8], ink[8], words[96];

			if (n < 1)	/* a valid map holds every entry */
				continue;
			svg_lane_colour(lane, fill, ink);
			lanemap_reg_byte(lm, op, e, &reg, &byte);
			fprintf(f, "<g class=\"cell%s%s\"><title>%s[%d][%d]: ",
				ink[1] == 'f' ? " dk" : "",
				!differ ? "" : differ[r * o->cols + c] ? " differ" : " same",
				lm_operand_name(op), r, c);
			for (int i = 0; i < n; i++) {
				owner_words(lm, op, slots[i], words, sizeof(words));
				fprintf(f, "%s%s", i ? "; " : "", words);
			}
			fprintf(f, "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>",
				x, y, CW, CH, fill);
			fprintf(f, "<text class=\"lab\" x=\"%g\" y=\"%d\">%d%s</text>",
				x + CW / 2.0, y + 14, lane, n > 1 ? "+" : "");
			if (byte_type)
				fprintf(f, "<text class=\"sub\" x=\"%g\" y=\"%d\">e%d r%d.%d</text></g>\n",
					x + CW / 2.0, y + 28, e, reg, byte);
			else
				fprintf(f, "<text class=\"sub\" x=\"%g\" y=\"%d\">e%d r%d</text></g>\n",
					x + CW / 2.0, y + 28, e, reg);
		}
	}
	fputs("</g>\n", f);
}

static void heading(const struct lanemap *lm, enum lm_operand op, const char *who,
		    char *buf, size_t len)
{
	const struct lanemap_operand *o = &lm->op[op];

	snprintf(buf, len, "%s%s (%d x %d, %s): rows %s, columns %s", who,
		 lm_operand_name(op), o->rows, o->cols, lm_dtype_name(o->type),
		 axis[op][0], axis[op][1]);
}

static const char legend[] =
	"cell: owner lane (bold; + when held more than once), then element e and "
	"register r (.byte for 8-bit operands); colour: lane, hue from lane bits 0-3, "
	"lightness from bits 4-5; hover a cell for every owner";

void lmsvg_map(FILE *f, const struct lanemap *lm, unsigned mask)
{
	int w = MIN_W, h, chars, lines, y;
	char title[256], src[600], head[160];

	for (int op = 0; op < LM_NOPERANDS; op++)
		if (mask & 1u << op && 2 * MARGIN + grid_w(lm, (enum lm_operand)op) > w)
			w = 2 * MARGIN + grid_w(lm, (enum lm_operand)op);
	chars = (w - 2 * MARGIN) / 6;
	snprintf(title, sizeof(title), "%s: %s, wave%d, M=%d N=%d K=%d", lm->name,
		 lm->instr, lm->wave, lm->m, lm->n, lm->k);
	snprintf(src, sizeof(src), "source: %s", lm->source[0] ? lm->source : "(none given)");
	lines = wrap(NULL, 0, 0, "", src, chars) + wrap(NULL, 0, 0, "", legend, chars);
	h = MARGIN + 24 + lines * LINE + 8;
	for (int op = 0; op < LM_NOPERANDS; op++)
		if (mask & 1u << op)
			h += grid_h(lm, (enum lm_operand)op) + GAP / 2;
	svg_begin_fit(f, w, h, FIT_W, title, 1);
	svg_text(f, MARGIN, MARGIN + 14, "h1", "%s", title);
	y = MARGIN + 24 + 10;
	y += LINE * wrap(f, MARGIN, y, "note", src, chars);
	y += LINE * wrap(f, MARGIN, y, "note", legend, chars);
	y -= 4;
	for (int op = 0; op < LM_NOPERANDS; op++) {
		if (!(mask & 1u << op))
			continue;
		heading(lm, (enum lm_operand)op, "", head, sizeof(head));
		grid(f, lm, (enum lm_operand)op, head, MARGIN, y, NULL);
		y += grid_h(lm, (enum lm_operand)op) + GAP / 2;
	}
	svg_end(f);
}

/* Does entry (r, c) of op have different owners in x and y? */
static int entry_differs(const struct lanemap *x, const struct lanemap *y,
			 enum lm_operand op, int r, int c)
{
	int sx[LM_MAX_REPLICAS], sy[LM_MAX_REPLICAS];
	int nx = lanemap_owners(x, op, r, c, sx, LM_MAX_REPLICAS);
	int ny = lanemap_owners(y, op, r, c, sy, LM_MAX_REPLICAS);

	if (nx != ny)
		return 1;
	for (int i = 0; i < nx; i++)
		if (sx[i] / x->op[op].elems != sy[i] / y->op[op].elems ||
		    sx[i] % x->op[op].elems != sy[i] % y->op[op].elems)
			return 1;
	return 0;
}

int lmsvg_diff_slots(const struct lanemap *x, const struct lanemap *y,
		     enum lm_operand op, int *slots, int max)
{
	const struct lanemap_operand *a = &x->op[op], *b = &y->op[op];
	int n = 0;

	if (x->wave != y->wave || a->elems != b->elems)
		return 0;
	for (int s = 0; s < x->wave * a->elems; s++) {
		if (a->row[s] == b->row[s] && a->col[s] == b->col[s])
			continue;
		if (n < max)
			slots[n] = s;
		n++;
	}
	return n;
}

void lmsvg_slot_line(const struct lanemap *x, const struct lanemap *y,
		     enum lm_operand op, int s, char *buf, size_t len)
{
	const char *m = lm_operand_name(op);
	int el = x->op[op].elems;

	snprintf(buf, len, "%s lane %d e %d: %s %s[%d][%d], %s %s[%d][%d]", m, s / el,
		 s % el, x->name, m, x->op[op].row[s], x->op[op].col[s], y->name, m,
		 y->op[op].row[s], y->op[op].col[s]);
}

/* Operands drawn in a diff: those that differ. */
static int drawn(const struct lanediff *d, int op)
{
	return d->op[op].differ > 0;
}

static int max2(int a, int b)
{
	return a > b ? a : b;
}

/* X's and Y's grids of op: side by side, or Y under X (stacked). */
static int pair_w(const struct lanemap *x, const struct lanemap *y, enum lm_operand op,
		  int stacked)
{
	return stacked ? max2(grid_w(x, op), grid_w(y, op))
		       : grid_w(x, op) + GAP + grid_w(y, op);
}

static int pair_h(const struct lanemap *x, const struct lanemap *y, enum lm_operand op,
		  int stacked)
{
	return stacked ? grid_h(x, op) + GAP / 2 + grid_h(y, op)
		       : max2(grid_h(x, op), grid_h(y, op));
}

/* Whether a diff stacks its grids: when side by side, with the margins,
 * any operand drawn would be wider than FIT_W. */
static int stacks(const struct lanemap *x, const struct lanemap *y,
		  const struct lanediff *d)
{
	for (int op = 0; op < LM_NOPERANDS; op++)
		if (d->op[op].differ > 0 &&
		    2 * MARGIN + pair_w(x, y, (enum lm_operand)op, 0) > FIT_W)
			return 1;
	return 0;
}

/* X's and Y's grids of op from (x0, y0), differences marked. */
static void pair(FILE *f, const struct lanemap *x, const struct lanemap *y,
		 enum lm_operand op, int x0, int y0, int stacked)
{
	const struct lanemap_operand *a = &x->op[op], *b = &y->op[op];
	int same_shape = a->rows == b->rows && a->cols == b->cols;
	unsigned char mark[LM_MAX_DIM * LM_MAX_DIM];
	char head[200], who[LM_NAME_MAX + 8];

	if (same_shape)
		for (int r = 0; r < a->rows; r++)
			for (int c = 0; c < a->cols; c++)
				mark[r * a->cols + c] = (unsigned char)entry_differs(x, y, op, r, c);
	snprintf(who, sizeof(who), "X %s: ", x->name);
	heading(x, op, who, head, sizeof(head));
	grid(f, x, op, head, x0, y0, same_shape ? mark : NULL);
	snprintf(who, sizeof(who), "Y %s: ", y->name);
	heading(y, op, who, head, sizeof(head));
	if (stacked)
		grid(f, y, op, head, x0, y0 + grid_h(x, op) + GAP / 2, same_shape ? mark : NULL);
	else
		grid(f, y, op, head, x0 + grid_w(x, op) + GAP, y0, same_shape ? mark : NULL);
}

static void op_line(const struct lanediff *d, int op, char *buf, size_t len)
{
	snprintf(buf, len, "%s: %d of %d entries differ: %s",
		 lm_operand_name((enum lm_operand)op), d->op[op].differ,
		 d->op[op].entries, d->op[op].verdict);
}

static int has_bits(const struct lanediff *d, int op)
{
	return d->op[op].differ && d->op[op].kind != LD_INCOMPARABLE;
}

static void diff_svg(FILE *f, const struct lanemap *x, const struct lanemap *y,
		     const struct lanediff *d)
{
	int w = MIN_W, h, chars, y0, slots[LMSVG_SAMPLES], st = stacks(x, y, d);
	char title[256], line[700];

	for (int op = 0; op < LM_NOPERANDS; op++)
		if (drawn(d, op) && 2 * MARGIN + pair_w(x, y, (enum lm_operand)op, st) > w)
			w = 2 * MARGIN + pair_w(x, y, (enum lm_operand)op, st);
	chars = (w - 2 * MARGIN) / 7;
	snprintf(title, sizeof(title), "lanemap diff: X %s, Y %s: %d entries differ",
		 x->name, y->name, d->differ);
	/* Measure first: the height goes in the <svg> element. */
	h = MARGIN + 24 + 2 * LINE;
	for (int op = 0; op < LM_NOPERANDS; op++) {
		int n = lmsvg_diff_slots(x, y, (enum lm_operand)op, slots, LMSVG_SAMPLES);

		op_line(d, op, line, sizeof(line));
		h += LINE * wrap(NULL, 0, 0, "", line, chars) + 6;
		if (has_bits(d, op)) {
			snprintf(line, sizeof(line), "bits: %s", d->op[op].bits);
			h += LINE * wrap(NULL, 0, 0, "", line, chars);
		}
		if (drawn(d, op))
			h += pair_h(x, y, (enum lm_operand)op, st) + 8 +
			     LINE * (n < LMSVG_SAMPLES ? n : LMSVG_SAMPLES + 1) + GAP / 2;
	}
	svg_begin_fit(f, w, h, FIT_W, title, 1);
	svg_text(f, MARGIN, MARGIN + 14, "h1", "%s", title);
	svg_text(f, MARGIN, MARGIN + 24 + 10, "note", "X: %s; Y: %s; entries whose owners differ outlined in red, the others faded",
		 x->instr, y->instr);
	y0 = MARGIN + 24 + 2 * LINE + 8;
	for (int op = 0; op < LM_NOPERANDS; op++) {
		int n = lmsvg_diff_slots(x, y, (enum lm_operand)op, slots, LMSVG_SAMPLES);

		fprintf(f, "<g class=\"caption\" data-matrix=\"%s\">\n",
			lm_operand_name((enum lm_operand)op));
		op_line(d, op, line, sizeof(line));
		y0 += LINE * wrap(f, MARGIN, y0, "h2", line, chars) + 6;
		if (has_bits(d, op)) {
			snprintf(line, sizeof(line), "bits: %s", d->op[op].bits);
			y0 += LINE * wrap(f, MARGIN, y0, "note", line, chars);
		}
		fputs("</g>\n", f);
		if (!drawn(d, op))
			continue;
		pair(f, x, y, (enum lm_operand)op, MARGIN, y0 - 12, st);
		y0 += pair_h(x, y, (enum lm_operand)op, st) + 8;
		for (int i = 0; i < n && i < LMSVG_SAMPLES; i++) {
			lmsvg_slot_line(x, y, (enum lm_operand)op, slots[i], line, sizeof(line));
			svg_text(f, MARGIN, y0, "note", "%s", line);
			y0 += LINE;
		}
		if (n > LMSVG_SAMPLES) {
			svg_text(f, MARGIN, y0, "note", "... %d more", n - LMSVG_SAMPLES);
			y0 += LINE;
		}
		y0 += GAP / 2;
	}
	svg_end(f);
}

static void diff_html(FILE *f, const struct lanemap *x, const struct lanemap *y,
		      const struct lanediff *d)
{
	char title[256], line[700];
	int slots[LMSVG_SAMPLES], st = stacks(x, y, d);

	snprintf(title, sizeof(title), "lanemap diff: X %s, Y %s: %d entries differ",
		 x->name, y->name, d->differ);
	html_begin(f, title);
	fputs("<h1>", f);
	svg_escape(f, title);
	fputs("</h1>\n<p>X: ", f);
	svg_escapef(f, "%s (%s); Y: %s (%s)", x->name, x->instr, y->name, y->instr);
	fputs(". Entries whose owners differ are outlined in red, the others faded; "
	      "hover a cell for its owners.</p>\n", f);
	for (int op = 0; op < LM_NOPERANDS; op++) {
		enum lm_operand o = (enum lm_operand)op;
		int n = lmsvg_diff_slots(x, y, o, slots, LMSVG_SAMPLES);

		fprintf(f, "<section class=\"operand\" data-matrix=\"%s\">\n<h2>",
			lm_operand_name(o));
		op_line(d, op, line, sizeof(line));
		svg_escape(f, line);
		fputs("</h2>\n", f);
		if (!drawn(d, op)) {
			fputs("</section>\n", f);
			continue;
		}
		fputs("<figure>\n", f);
		snprintf(line, sizeof(line), "%s of %s and %s", lm_operand_name(o),
			 x->name, y->name);
		svg_begin_fit(f, pair_w(x, y, o, st), pair_h(x, y, o, st), FIT_W, line, 0);
		pair(f, x, y, o, 0, 0, st);
		svg_end(f);
		fputs("<figcaption>", f);
		svg_escape(f, d->op[op].verdict);
		if (has_bits(d, op)) {
			fputs("<br>bits: ", f);
			svg_escape(f, d->op[op].bits);
		}
		fputs("</figcaption>\n</figure>\n", f);
		if (n) {
			fputs("<ul class=\"samples\">\n", f);
			for (int i = 0; i < n && i < LMSVG_SAMPLES; i++) {
				lmsvg_slot_line(x, y, o, slots[i], line, sizeof(line));
				fputs("<li>", f);
				svg_escape(f, line);
				fputs("</li>\n", f);
			}
			if (n > LMSVG_SAMPLES)
				fprintf(f, "<li>... %d more</li>\n", n - LMSVG_SAMPLES);
			fputs("</ul>\n", f);
		}
		fputs("</section>\n", f);
	}
	fputs("<p class=\"caption\">", f);
	if (d->differ)
		svg_escapef(f, "%s and %s differ in %d entries", x->name, y->name, d->differ);
	else
		svg_escapef(f, "%s and %s are identical", x->name, y->name);
	fputs("</p>\n", f);
	html_end(f);
}

void lmsvg_diff(FILE *f, const struct lanemap *x, const struct lanemap *y,
		const struct lanediff *d, int html)
{
	if (html)
		diff_html(f, x, y, d);
	else
		diff_svg(f, x, y, d);
}
