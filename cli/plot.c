/*
 * plot.c - bar charts and heat maps as SVG (see plot.h). Plain shapes
 * with a <title> on each bar or cell, so a browser shows the number on
 * hover and a test can count them: <rect class="bar"> per bucket,
 * <rect class="heat"> per cell.
 *
 *   score max|err|
 *   0.301 |##
 *         |##  ##  ##  ##
 *       0 +----------------
 *          0  1025 2049 3073   key position
 */
#include "plot.h"

#include <math.h>

#include "svg.h"

enum { PW = 640, PH = 220, PL = 64, PR = 16, PT = 28, PB = 40 };

void plot_bars(FILE *f, const char *name, const char *title, const char *ylabel,
	       int n, const int *lo, const int *hi, const double *y)
{
	double max = 0, bw = n > 0 ? (double)(PW - PL - PR) / n : 0;
	int base = PH - PB;

	for (int i = 0; i < n; i++)
		if (y[i] == y[i] && y[i] > max)
			max = y[i];
	svg_begin(f, PW, PH, title, 0);
	fprintf(f, "<g class=\"plot\" data-plot=\"%s\">\n", name);
	svg_text(f, PL, 16, "h2", "%s", title);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#404040\"/>\n",
		PL, PT, PL, base);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#404040\"/>\n",
		PL, base, PW - PR, base);
	svg_text(f, 4, PT + 10, "note", "%.3g", max);
	svg_text(f, 4, base, "note", "0");
	svg_text(f, 4, PT + 26, "note", "%s", ylabel);
	for (int i = 0; i < n; i++) {
		double v = y[i] == y[i] ? y[i] : 0, h = max > 0 ? v / max * (base - PT) : 0;
		double x = PL + i * bw;

		fprintf(f, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			"fill=\"#4a78c0\"><title>keys [%d, %d): ", x + 1, base - h,
			bw > 2 ? bw - 2 : bw, h, lo[i], hi[i]);
		if (y[i] == y[i])
			fprintf(f, "%.6g", y[i]);
		else
			fputs("no data", f);
		fputs("</title></rect>\n", f);
		/* A key label under every bar when few, else every fourth. */
		if (n <= 8 || i % 4 == 0)
			svg_text(f, x + 2, base + 14, "note", "%d", lo[i]);
	}
	svg_text(f, PL, PH - 6, "note", "key position (bucket start); hover a bar for its value");
	fputs("</g>\n", f);
	svg_end(f);
}

void plot_heat(FILE *f, const char *name, const char *title, const struct heatmap *h,
	       const char *row_axis, const char *col_axis)
{
	int cw = h->cols > 32 ? 10 : h->cols > 8 ? 18 : 40, ch = h->rows > 32 ? 8 : 14;
	int w = PL + h->cols * cw + PR, hh = PT + 16 + h->rows * ch + PB;

	if (w < PW)
		w = PW;
	svg_begin(f, w, hh, title, 0);
	fprintf(f, "<g class=\"plot\" data-plot=\"%s\">\n", name);
	svg_text(f, PL, 16, "h2", "%s", title);
	svg_text(f, PL, PT + 10, "note", "%s ->, %d per column; max %ld", col_axis,
		 h->col_step, h->max);
	for (int r = 0; r < h->rows; r++) {
		int y = PT + 16 + r * ch;

		if (h->rows <= 16 || r % 8 == 0)
			svg_text(f, 4, y + ch - 1, "note", "%d", r * h->row_step);
		for (int c = 0; c < h->cols; c++) {
			long n = h->count[r * h->cols + c];
			/* White to dark red: sqrt, so a few mismatches still show. */
			double t = h->max ? sqrt((double)n / (double)h->max) : 0;
			int g = (int)lround(255 - 215 * t), red = (int)lround(255 - 75 * t);

			fprintf(f, "<rect class=\"heat\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
				"fill=\"#%02x%02x%02x\" stroke=\"#e0e0e0\" stroke-width=\"0.5\">"
				"<title>%s %d, %s %d: %ld</title></rect>\n",
				PL + c * cw, y, cw, ch, red, g, g, row_axis, r * h->row_step,
				col_axis, c * h->col_step, n);
		}
	}
	for (int c = 0; c < h->cols; c++)
		if (h->cols <= 16 || c % 8 == 0)
			svg_text(f, PL + c * cw + 1, PT + 16 + h->rows * ch + 12, "note", "%d",
				 c * h->col_step);
	svg_text(f, 4, hh - 22, "note", "rows: %s, %d per row", row_axis, h->row_step);
	svg_text(f, 4, hh - 6, "note", "%ld of %ld listed mismatches placed", h->placed, h->seen);
	fputs("</g>\n", f);
	svg_end(f);
}
