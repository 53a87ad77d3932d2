/*
 * svg.h - the text primitives of fragsim's pictures (SVG) and reports
 * (HTML): escaping, the document frame, text, and the lane palette.
 * Only cli/ prints; what to draw is computed elsewhere.
 *
 * A standalone picture is
 *
 *   <?xml version="1.0" encoding="UTF-8"?>
 *   <svg xmlns="http://www.w3.org/2000/svg" width="W" height="H"
 *        viewBox="0 0 W H"><title>...</title><style>...</style> ... </svg>
 *
 * and the same <svg> element, less the XML declaration, sits inline in
 * an HTML report. Nothing here writes a script or a link out.
 */
#ifndef SVG_H
#define SVG_H

#include <stdio.h>

/* s with & < > " ' as entities (valid in XML text and attributes),
 * control characters but tab and newline as '?', and each byte that is
 * not part of valid UTF-8 as U+FFFD: the text is valid UTF-8 XML. */
void svg_escape(FILE *f, const char *s);
/* printf, then the result escaped; text longer than 1 KiB is cut. */
void svg_escapef(FILE *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Open an <svg> of w x h pixels with its <title> and the shared style
 * sheet (class names below); standalone adds the XML declaration.
 */
void svg_begin(FILE *f, int w, int h, const char *title, int standalone);
/*
 * The same, shown at most max_w pixels wide: a wider picture keeps its
 * w x h coordinates (the viewBox) and is scaled down by its width and
 * height attributes, the same factor both ways.
 */
void svg_begin_fit(FILE *f, int w, int h, int max_w, const char *title,
		   int standalone);
void svg_end(FILE *f);

/*
 * <text class="cls" x y>escaped text</text>. Classes of the style sheet:
 * h1 (a title), h2 (a heading), note (small grey), num (a row or column
 * number, centred), lab (a cell's first line), sub (its second line).
 */
void svg_text(FILE *f, double x, double y, const char *cls, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/*
 * The fill of lane `lane` as "#rrggbb", and a text colour readable on it
 * ("#000000" or "#ffffff"). 64 lanes, 16 hues x 4 lightness steps: the
 * low 4 bits of the lane, bit-reversed, pick the hue (so lanes 0 and 1
 * are half the wheel apart, 0 and 2 a quarter), bits 4-5 the lightness
 * (light for lanes 0-15, darkest for 48-63). Lanes past 63 wrap.
 */
void svg_lane_colour(int lane, char fill[8], char ink[8]);

#endif
