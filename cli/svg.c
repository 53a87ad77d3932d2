/*
 * svg.c - SVG text primitives (see svg.h).
 *
 * The palette is why this file exists apart from the pictures: a lane
 * map has up to 64 owners and neighbouring lanes sit side by side (gfx936
 * C row 1 is lanes 1, 17, 33, 49, column 0 is lanes 0..15), so colours
 * must stay apart both ways. Hue comes from the lane's low 4 bits
 * bit-reversed (lane 0: 0 deg, 1: 180, 2: 90, 3: 270, ...), lightness
 * from bits 4-5 in four steps; lane 17 is lane 1's hue one step darker.
 * The conversion from HSL is done here, so the file carries plain #rrggbb
 * that every SVG reader understands.
 */
#include "svg.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0: no
 * overlong form, no surrogate, nothing past U+10FFFF, no cut sequence. */
static int utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];
	int n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
	      : (c & 0xf8) == 0xf0 ? 4 : 0;

	if (!n || (n == 2 && c < 0xc2) || (n == 4 && c > 0xf4))
		return 0;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;	/* also stops at the NUL */
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) ||
	    (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

void svg_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		int n = utf8_len((const unsigned char *)s);

		/* The pages say UTF-8: a byte that is not (a file name's
		 * Latin-1 e-acute) is U+FFFD, as junit.c writes it. */
		if (n != 1) {
			if (n)
				fwrite(s, 1, (size_t)n, f), s += n - 1;
			else
				fputs("\xef\xbf\xbd", f);
			continue;
		}
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			/* XML 1.0 has no control characters but tab and newlines. */
			if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n')
				fputc('?', f);
			else
				fputc(*s, f);
		}
	}
}

static void vescapef(FILE *f, const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	svg_escape(f, buf);
}

void svg_escapef(FILE *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vescapef(f, fmt, ap);
	va_end(ap);
}

/* One style sheet for pictures and reports: sizes in px, fonts generic. */
static const char style[] =
	"<style>"
	"text{font-family:sans-serif;font-size:12px;fill:#202020}"
	".h1{font-size:16px;font-weight:bold}"
	".h2{font-size:14px;font-weight:bold}"
	".note{font-size:11px;fill:#555555}"
	".num{font-family:monospace;font-size:11px;fill:#555555;text-anchor:middle}"
	".lab{font-family:monospace;font-size:12px;font-weight:bold;text-anchor:middle}"
	".sub{font-family:monospace;font-size:10px;text-anchor:middle}"
	".cell rect{stroke:#ffffff;stroke-width:1}"
	".dk text{fill:#ffffff}"
	".same{opacity:0.35}"
	".differ rect{stroke:#d00000;stroke-width:3}"
	"</style>\n";

void svg_begin(FILE *f, int w, int h, const char *title, int standalone)
{
	svg_begin_fit(f, w, h, w, title, standalone);
}

void svg_begin_fit(FILE *f, int w, int h, int max_w, const char *title,
		   int standalone)
{
	/* Shown size: h rounded up, so no row of the picture is lost. */
	int sw = w > max_w ? max_w : w;
	int sh = w > max_w ? (int)(((long long)h * max_w + w - 1) / w) : h;

	if (standalone)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\">\n<title>", sw, sh, w, h);
	svg_escape(f, title);
	fputs("</title>\n", f);
	fputs(style, f);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", w, h);
}

void svg_end(FILE *f)
{
	fputs("</svg>\n", f);
}

void svg_text(FILE *f, double x, double y, const char *cls, const char *fmt, ...)
{
	va_list ap;

	fprintf(f, "<text class=\"%s\" x=\"%g\" y=\"%g\">", cls, x, y);
	va_start(ap, fmt);
	vescapef(f, fmt, ap);
	va_end(ap);
	fputs("</text>\n", f);
}

static int bitrev4(int v)
{
	return (v & 1) << 3 | (v & 2) << 1 | (v & 4) >> 1 | (v & 8) >> 3;
}

static double hue_channel(double p, double q, double t)
{
	if (t < 0)
		t += 1;
	if (t > 1)
		t -= 1;
	if (t < 1.0 / 6)
		return p + (q - p) * 6 * t;
	if (t < 0.5)
		return q;
	if (t < 2.0 / 3)
		return p + (q - p) * (2.0 / 3 - t) * 6;
	return p;
}

void svg_lane_colour(int lane, char fill[8], char ink[8])
{
	static const double light[4] = { 0.86, 0.72, 0.58, 0.42 };
	double h = bitrev4(lane & 15) / 16.0, s = 0.75, l = light[(lane >> 4) & 3];
	double q = l < 0.5 ? l * (1 + s) : l + s - l * s, p = 2 * l - q;
	double rgb[3] = { hue_channel(p, q, h + 1.0 / 3), hue_channel(p, q, h),
			  hue_channel(p, q, h - 1.0 / 3) };
	int c[3];
	double lum;

	for (int i = 0; i < 3; i++)
		c[i] = (int)lround(rgb[i] * 255);
	snprintf(fill, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
	/* Relative luminance (sRGB weights, no gamma: good enough to pick
	 * black or white text). */
	lum = (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]) / 255;
	strcpy(ink, lum > 0.45 ? "#000000" : "#ffffff");
}
