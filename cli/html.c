/*
 * html.c - the frame of fragsim's HTML pages (see html.h). The style
 * sheet is inline so the file stands alone; pictures inside are <svg>
 * elements written by svg.c, whose own style sheet travels with each.
 */
#include "html.h"

#include "svg.h"

static const char style[] =
	"body{font-family:sans-serif;margin:16px;color:#202020;max-width:1800px}"
	"h1{font-size:20px}h2{font-size:16px;margin-top:24px}"
	"table{border-collapse:collapse;margin:8px 0}"
	"th,td{border:1px solid #c0c0c0;padding:2px 8px;text-align:left}"
	"td.n{text-align:right;font-family:monospace}"
	".ok{color:#006000}.bad{color:#c00000;font-weight:bold}"
	"figure{margin:8px 0;overflow-x:auto}"
	"figcaption,.caption{font-family:monospace;margin:4px 0}"
	"ul.samples{font-family:monospace}"
	"pre{background:#f4f4f4;padding:8px;overflow-x:auto}";

void html_begin(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<title>", f);
	svg_escape(f, title);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n", style);
}

void html_end(FILE *f)
{
	fputs("</body>\n</html>\n", f);
}
