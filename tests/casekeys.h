/*
 * casekeys.h - docs/case-keys.md as the tests read it, and the case
 * files they write from it: test_caseschema.c walks every key through
 * the loader and the goldens, test_fragsim_dump.c through the device
 * harnesses. One reader, so the two walks read the table the same way.
 *
 *   struct doc d;
 *   doc_load(&d);                          base case and one row per key
 *   apply(&cs, d.base, 0); apply(&cs, row->setup, star); ...
 *   run_into(&cs, dir, "a", key);          fragsim run --emulate-only --out dir/a
 *
 * Include after cmocka.h and testutil.h, in one test file each (static
 * functions; a file that uses only some of them marks the rest unused).
 */
#ifndef FRAGSIM_TESTS_CASEKEYS_H
#define FRAGSIM_TESTS_CASEKEYS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/casefile.h"
#include "testutil.h"

#define MAX_ROWS 128
#define MAX_ASSIGN 48

struct row {
	char key[80];
	int yes;
	char setup[400], change[400], why[400];
};

struct doc {
	char base[400];
	struct row rows[MAX_ROWS];
	int n;
};

/* A case as ordered assignments path=value. */
struct assign {
	char path[80], value[120];
};

struct caseset {
	struct assign a[MAX_ASSIGN];
	int n;
};

/* Copy s[0..n) trimmed of spaces and backticks into out. */
static inline void cell_copy(char *out, size_t cap, const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '`'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '`'))
		n--;
	if (n >= cap)
		n = cap - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

static inline void doc_load(struct doc *d)
{
	char path[1024], *text, *line, *save = NULL;

	memset(d, 0, sizeof(*d));
	snprintf(path, sizeof(path), "%s/docs/case-keys.md", FRAGSIM_SRC);
	text = tu_slurp(path);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *cell[6];
		int nc = 0;

		if (!strncmp(line, "Base: `", 7)) {
			cell_copy(d->base, sizeof(d->base), line + 6, strlen(line + 6));
			continue;
		}
		if (strncmp(line, "| `", 3))
			continue;
		for (char *p = line; *p && nc < 6; p++)
			if (*p == '|')
				cell[nc++] = p + 1;
		assert_int_equal(nc, 6);
		assert_true(d->n < MAX_ROWS);
		{
			struct row *r = &d->rows[d->n++];
			char g[8];

			cell_copy(r->key, sizeof(r->key), cell[0], (size_t)(cell[1] - 1 - cell[0]));
			cell_copy(g, sizeof(g), cell[1], (size_t)(cell[2] - 1 - cell[1]));
			if (strcmp(g, "yes") && strcmp(g, "no"))
				fail_msg("docs/case-keys.md: %s: goldens must be yes or no, not '%s'",
					 r->key, g);
			r->yes = !strcmp(g, "yes");
			cell_copy(r->setup, sizeof(r->setup), cell[2], (size_t)(cell[3] - 1 - cell[2]));
			cell_copy(r->change, sizeof(r->change), cell[3], (size_t)(cell[4] - 1 - cell[3]));
			cell_copy(r->why, sizeof(r->why), cell[4], (size_t)(cell[5] - 1 - cell[4]));
		}
	}
	free(text);
	assert_true(d->base[0] != '\0');
}

/* Apply "p=v; p=v" to cs, '*' in it replaced by star (0: none). */
static inline void apply(struct caseset *cs, const char *cells, char star)
{
	char buf[400], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", cells);
	for (char *p = buf; *p; p++)
		if (*p == '*' && star)
			*p = star;
	for (tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(tok, '='), path[80], value[120];
		int i;

		while (*tok == ' ')
			tok++;
		if (!*tok)
			continue;
		assert_non_null(eq);
		cell_copy(path, sizeof(path), tok, (size_t)(eq - tok));
		cell_copy(value, sizeof(value), eq + 1, strlen(eq + 1));
		for (i = 0; i < cs->n && strcmp(cs->a[i].path, path); i++)
			;
		if (!value[0]) {
			if (i < cs->n) {
				memmove(&cs->a[i], &cs->a[i + 1],
					(size_t)(cs->n - i - 1) * sizeof(cs->a[0]));
				cs->n--;
			}
			continue;
		}
		if (i == cs->n) {
			assert_true(cs->n < MAX_ASSIGN);
			cs->n++;
			snprintf(cs->a[i].path, sizeof(cs->a[i].path), "%s", path);
		}
		snprintf(cs->a[i].value, sizeof(cs->a[i].value), "%s", value);
	}
}

/* Is p a prefix of path at a '.' boundary (or equal)? */
static inline int under(const char *path, const char *p)
{
	size_t n = strlen(p);

	return !n || (!strncmp(path, p, n) && (path[n] == '.' || path[n] == '\0'));
}

/* The entries under prefix p as a flow mapping "{a: 1, b: {c: 2}}". */
static inline void emit_flow(FILE *f, const struct caseset *cs, const char *p)
{
	int first = 1;
	size_t n = strlen(p);

	fputc('{', f);
	for (int i = 0; i < cs->n; i++) {
		const char *rest = cs->a[i].path + n + (n ? 1 : 0), *dot;
		char comp[80], sub[160];
		int seen = 0;

		if (!under(cs->a[i].path, p) || !strcmp(cs->a[i].path, p))
			continue;
		dot = strchr(rest, '.');
		cell_copy(comp, sizeof(comp), rest, dot ? (size_t)(dot - rest) : strlen(rest));
		snprintf(sub, sizeof(sub), "%s%s%s", p, n ? "." : "", comp);
		for (int j = 0; j < i; j++)
			seen |= under(cs->a[j].path, sub);
		if (seen)
			continue;
		fprintf(f, "%s%s: ", first ? "" : ", ", comp);
		first = 0;
		if (dot)
			emit_flow(f, cs, sub);
		else
			fputs(cs->a[i].value, f);
	}
	fputc('}', f);
}

/* The case as YAML: top-level keys in order, sections as flow maps. */
static inline void write_case(const struct caseset *cs, const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	for (int i = 0; i < cs->n; i++) {
		const char *dot = strchr(cs->a[i].path, '.');
		char top[80];
		int seen = 0;

		cell_copy(top, sizeof(top), cs->a[i].path,
			  dot ? (size_t)(dot - cs->a[i].path) : strlen(cs->a[i].path));
		for (int j = 0; j < i; j++)
			seen |= under(cs->a[j].path, top);
		if (seen)
			continue;
		if (!dot) {
			fprintf(f, "%s: %s\n", top, cs->a[i].value);
		} else if (!strcmp(top, "sequences")) {
			fputs("sequences:\n  - ", f);
			emit_flow(f, cs, top);
			fputc('\n', f);
		} else {
			fprintf(f, "%s: ", top);
			emit_flow(f, cs, top);
			fputc('\n', f);
		}
	}
	fclose(f);
}

/* A .npy file of f32 with the given shape, values v(i) small multiples
 * of 1/4 (BF16-exact), different from anything generated. */
static inline void write_npy(const char *path, const int *shape, int nd, int mul)
{
	char hdr[128];
	size_t n = 1, len;
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	len = (size_t)snprintf(hdr, sizeof(hdr),
			       "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d, %d, %d), }",
			       shape[0], shape[1], shape[2], shape[3]);
	while ((10 + len + 1) % 64)
		hdr[len++] = ' ';
	hdr[len++] = '\n';
	fwrite("\x93NUMPY\x01\x00", 1, 8, f);
	fputc((int)(len & 0xff), f);
	fputc((int)(len >> 8), f);
	fwrite(hdr, 1, len, f);
	for (int i = 0; i < nd; i++)
		n *= (size_t)shape[i];
	for (size_t i = 0; i < n; i++) {
		float v = (float)((int)(i * (size_t)mul % 13) - 6) / 4.0f;

		fwrite(&v, sizeof(v), 1, f);
	}
	fclose(f);
}

static inline int same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int same = fa && fb, ca, cb;

	while (same) {
		ca = fgetc(fa);
		cb = fgetc(fb);
		if (ca != cb)
			same = 0;
		if (ca == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/* Do directories a and b hold the same files, manifest.json aside? */
static inline int same_goldens(const char *a, const char *b)
{
	const char *dirs[2] = { a, b };
	int same = 1;

	for (int k = 0; k < 2 && same; k++) {
		DIR *d = opendir(dirs[k]);
		struct dirent *e;

		assert_non_null(d);
		while (same && (e = readdir(d))) {
			char pa[1024], pb[1024];

			if (e->d_name[0] == '.' || !strcmp(e->d_name, "manifest.json"))
				continue;
			snprintf(pa, sizeof(pa), "%s/%s", a, e->d_name);
			snprintf(pb, sizeof(pb), "%s/%s", b, e->d_name);
			same = same_file(pa, pb);
		}
		closedir(d);
	}
	return same;
}

/* Run the case cs in dir into dir/out; fail the test if it does not. */
static inline void run_into(const struct caseset *cs, const char *dir, const char *out,
		     const char *what)
{
	char cpath[512];
	struct run_result r;

	snprintf(cpath, sizeof(cpath), "%s/case.yaml", dir);
	write_case(cs, cpath);
	r = tu_run("run %s --emulate-only --out %s/%s", cpath, dir, out);
	if (r.status) {
		char *text = tu_slurp(cpath);

		fail_msg("%s: exit %d: %s\n%s", what, r.status, r.err, text);
	}
	tu_free(&r);
}

/* The doc row of accepted key path (data.q.x is data.*.x), or NULL. */
static inline const struct row *row_of_key(const struct doc *d, const char *path, char *star)
{
	char key[80];

	snprintf(key, sizeof(key), "%.79s", path);
	*star = 0;
	if (!strncmp(key, "data.", 5) && strchr("qkv", key[5]) && key[6] == '.') {
		*star = key[5];
		key[5] = '*';
	}
	for (int i = 0; i < d->n; i++)
		if (!strcmp(d->rows[i].key, key))
			return &d->rows[i];
	return NULL;
}

/* Every key path the loader accepts (mappings left out): the schema. */
static inline int accepted_keys(char (*out)[CASE_KEY_PATH_MAX], int cap)
{
	int n = case_schema_keys(out, cap);

	assert_true(n > 0);
	return n;
}

#endif
