/*
 * plot.h - the two plots of fragsim's HTML reports, drawn as inline SVG
 * (svg.h): a bar chart of a value per key-position bucket, and a heat
 * map of mismatch counts (lib/heatmap.h).
 */
#ifndef PLOT_H
#define PLOT_H

#include <stdio.h>

#include "../lib/heatmap.h"

/*
 * Bars: value y[i] over the key positions [lo[i], hi[i]), i < n; NaN
 * draws no bar. `name` goes in data-plot, for tests; title above it.
 */
void plot_bars(FILE *f, const char *name, const char *title, const char *ylabel,
	       int n, const int *lo, const int *hi, const double *y);

/* The heat map, white (0) to dark red (h->max); axes named. */
void plot_heat(FILE *f, const char *name, const char *title, const struct heatmap *h,
	       const char *row_axis, const char *col_axis);

#endif
