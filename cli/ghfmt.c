/*
 * ghfmt.c - GitHub Actions workflow commands (ghfmt.h).
 *
 * A worked example: a failed case in "s/a,b.yaml" whose details are
 *
 *   fail(...): FAIL acc: 3 of 4 mismatch
 *   acc: 3 of 4 mismatch
 *
 * becomes one line, the comma in the path escaped as a property value
 * must be and the newline as any message's:
 *
 *   ::error file=s/a%2Cb.yaml,line=1,title=fragsim check%3A fail::fail(...): FAIL acc: 3 of 4 mismatch%0Aacc: 3 of 4 mismatch
 *
 * Nothing else is escaped: GitHub reads the rest as it is (UTF-8 and
 * all), and '=' inside a value is safe, as the value runs to ',' or "::".
 */
#include "ghfmt.h"

#include <string.h>

static void escape(FILE *f, const char *s, size_t n, int prop)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '%':
			fputs("%25", f);
			break;
		case '\r':
			fputs("%0D", f);
			break;
		case '\n':
			fputs("%0A", f);
			break;
		case ':':
			fputs(prop ? "%3A" : ":", f);
			break;
		case ',':
			fputs(prop ? "%2C" : ",", f);
			break;
		default:
			fputc(s[i], f);
		}
	}
}

void ghfmt_data(FILE *f, const char *s)
{
	escape(f, s, strlen(s), 0);
}

void ghfmt_prop(FILE *f, const char *s)
{
	escape(f, s, strlen(s), 1);
}

/* The separator before the next property: ' ' first, then ','. */
static void sep(FILE *f, int *n)
{
	fputc((*n)++ ? ',' : ' ', f);
}

void ghfmt_error(FILE *f, const char *file, int line, int col,
		 const char *title, const char *msg)
{
	size_t len = msg ? strlen(msg) : 0;
	int n = 0;

	fputs("::error", f);
	if (file && file[0]) {
		sep(f, &n);
		fputs("file=", f);
		ghfmt_prop(f, file);
	}
	if (line > 0) {
		sep(f, &n);
		fprintf(f, "line=%d", line);
	}
	if (col > 0) {
		sep(f, &n);
		fprintf(f, "col=%d", col);
	}
	if (title && title[0]) {
		sep(f, &n);
		fputs("title=", f);
		ghfmt_prop(f, title);
	}
	fputs("::", f);
	while (len && (msg[len - 1] == '\n' || msg[len - 1] == '\r'))
		len--;
	escape(f, msg ? msg : "", len, 0);
	fputc('\n', f);
}

void ghfmt_case(FILE *f, const char *path, const char *name,
		const struct fs_err *err, const char *msg)
{
	char title[512];

	snprintf(title, sizeof(title), "fragsim check: %s", name && name[0] ? name : path);
	if (err)
		ghfmt_error(f, err->file[0] ? err->file : path, err->line, err->col,
			    title, err->msg);
	else
		ghfmt_error(f, path, 1, 0, title, msg);
}
