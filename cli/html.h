/*
 * html.h - the frame of fragsim's HTML pages (lanemap diff --format html,
 * --report FILE.html): one self-contained file, inline CSS and SVG, no
 * script, nothing fetched. Text goes through svg_escape (svg.h).
 */
#ifndef HTML_H
#define HTML_H

#include <stdio.h>

/* <!DOCTYPE html>, <head> with charset, <title> and the style sheet, <body>. */
void html_begin(FILE *f, const char *title);
/* </body></html> */
void html_end(FILE *f);

#endif
