/*
 * test_caseschema.c - no case key is accepted and then ignored.
 *
 * The keys come from the schema table that drives the loader
 * (case_schema_keys(), which includes the kernel: keys of kernel_bug()),
 * so a key added later is walked without touching this file. Each must have a row in docs/case-keys.md: a "no"
 * row says why the key changes no golden tensor; a "yes" row is run, the
 * base case with the row's setup and then with its change as well, both
 * through `fragsim run --emulate-only --out`, and the golden files (all
 * but manifest.json) must differ. The doc and the test cannot drift: a
 * row for a key the loader does not know fails too.
 *
 * Example: the row `model.soft_cap | yes | | model.soft_cap=0.5` runs the
 * base case (q_heads 4, kv_heads 2, head_dim 64, 40 keys, 2 tokens) and
 * the same with `model: {..., soft_cap: 0.5}`; before soft_cap was
 * emulated, the two wrote the same bytes and this test failed.
 *
 * The same keys must each have a row in docs/case-schema.md, which must
 * be what `fragsim show --schema` prints, byte for byte (so the doc is
 * regenerated whenever the table changes).
 *
 * Also here: the soft_cap range error, and the route refusing soft cap and
 * ALiBi in decode as well as prefill.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/kernel.h"
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
static void cell_copy(char *out, size_t cap, const char *s, size_t n)
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

static void doc_load(struct doc *d)
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
static void apply(struct caseset *cs, const char *cells, char star)
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
static int under(const char *path, const char *p)
{
	size_t n = strlen(p);

	return !n || (!strncmp(path, p, n) && (path[n] == '.' || path[n] == '\0'));
}

/* The entries under prefix p as a flow mapping "{a: 1, b: {c: 2}}". */
static void emit_flow(FILE *f, const struct caseset *cs, const char *p)
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
static void write_case(const struct caseset *cs, const char *path)
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
static void write_npy(const char *path, const int *shape, int nd, int mul)
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

static int same_file(const char *a, const char *b)
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
static int same_goldens(const char *a, const char *b)
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
static void run_into(const struct caseset *cs, const char *dir, const char *out,
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
static const struct row *row_of_key(const struct doc *d, const char *path, char *star)
{
	char key[80];

	snprintf(key, sizeof(key), "%s", path);
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
static int accepted_keys(char (*out)[CASE_KEY_PATH_MAX], int cap)
{
	int n = case_schema_keys(out, cap);

	assert_true(n > 0);
	return n;
}

static void every_key_changes_goldens_or_says_why(void **state)
{
	static char keys[160][CASE_KEY_PATH_MAX];
	static struct doc d;
	char dir[] = "/tmp/fragsim-keys-XXXXXX", p[600];
	int nkeys, yes = 0, dims[3][4] = { { 1, 2, 4, 64 }, { 1, 40, 2, 64 }, { 1, 40, 2, 64 } };

	(void)state;
	doc_load(&d);
	nkeys = accepted_keys(keys, 160);
	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%c.npy", dir, "qkv"[i]);
		write_npy(p, dims[i], 4, 5 + 2 * i);
	}
	for (int i = 0; i < nkeys; i++) {
		char star;
		const struct row *r = row_of_key(&d, keys[i], &star);
		struct caseset base = { .n = 0 }, changed;

		if (!r)
			fail_msg("key '%s' is accepted by the loader but has no row in docs/case-keys.md",
				 keys[i]);
		if (!r->yes) {
			if (strlen(r->why) < 10)
				fail_msg("docs/case-keys.md: %s changes no golden but does not say why",
					 r->key);
			continue;
		}
		if (!r->change[0])
			fail_msg("docs/case-keys.md: %s: a yes row needs a change", r->key);
		apply(&base, d.base, 0);
		apply(&base, r->setup, star);
		changed = base;
		apply(&changed, r->change, star);
		run_into(&base, dir, "a", keys[i]);
		run_into(&changed, dir, "b", keys[i]);
		snprintf(p, sizeof(p), "%s/a", dir);
		{
			char q[600];

			snprintf(q, sizeof(q), "%s/b", dir);
			if (same_goldens(p, q))
				fail_msg("%s: changing it (%s) leaves the goldens the same bytes: accepted and ignored",
					 keys[i], r->change);
		}
		yes++;
	}
	/* The other way: every row names a key the loader accepts. */
	for (int j = 0; j < d.n; j++) {
		int found = 0;

		for (int i = 0; i < nkeys && !found; i++) {
			char star;

			found = row_of_key(&d, keys[i], &star) == &d.rows[j];
		}
		if (!found)
			fail_msg("docs/case-keys.md has a row for '%s', which the loader does not accept",
				 d.rows[j].key);
	}
	assert_true(yes > 40);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	assert_int_equal(system(p), 0);
}

/*
 * docs/case-schema.md is `fragsim show --schema`, byte for byte: a key
 * added to the table without regenerating the doc fails here.
 */
static void schema_doc_is_current(void **state)
{
	char path[1024], *doc;
	struct run_result r;

	(void)state;
	snprintf(path, sizeof(path), "%s/docs/case-schema.md", FRAGSIM_SRC);
	doc = tu_slurp(path);
	r = tu_run("show --schema");
	assert_int_equal(r.status, 0);
	if (strcmp(r.out, doc))
		fail_msg("docs/case-schema.md is not what `fragsim show --schema` prints: "
			 "regenerate it (build/fragsim show --schema > docs/case-schema.md)");
	tu_free(&r);
	free(doc);
}

/*
 * Read as a user would: each accepted key has a row `| `name` |` in the
 * table under its mapping's heading ("## Top level", "## `model:`",
 * "## `data.q`, `data.k`, `data.v`"). Checks the generator's sections
 * against the loader's keys, not against itself.
 */
static void schema_doc_lists_every_key(void **state)
{
	static char keys[160][CASE_KEY_PATH_MAX];
	char path[1024], *doc;
	int n;

	(void)state;
	snprintf(path, sizeof(path), "%s/docs/case-schema.md", FRAGSIM_SRC);
	doc = tu_slurp(path);
	n = accepted_keys(keys, 160);
	for (int i = 0; i < n; i++) {
		const char *dot = strrchr(keys[i], '.'), *sec, *end;
		char head[96], row[96];

		if (!dot)
			snprintf(head, sizeof(head), "\n## Top level\n");
		else if (!strncmp(keys[i], "data.", 5) && dot - keys[i] == 6)
			snprintf(head, sizeof(head), "\n## `data.q`, `data.k`, `data.v`\n");
		else
			snprintf(head, sizeof(head), "\n## `%.*s:`\n", (int)(dot - keys[i]),
				 keys[i]);
		snprintf(row, sizeof(row), "\n| `%.*s` |", CASE_KEY_PATH_MAX,
			 dot ? dot + 1 : keys[i]);
		sec = strstr(doc, head);
		if (!sec)
			fail_msg("docs/case-schema.md: no section %s for %s", head + 1, keys[i]);
		end = strstr(sec + 1, "\n## ");
		sec = strstr(sec, row);
		if (!sec || (end && sec > end))
			fail_msg("docs/case-schema.md: %s has no row in its section", keys[i]);
	}
	free(doc);
}

static void soft_cap_range(void **state)
{
	static const struct {
		const char *v, *msg;
	} bad[] = {
		{ "1e-9", "4:13: model.soft_cap: must be 0 (none) or between 1e-06 and 1e+06, not 1e-9" },
		{ "2e6", "4:13: model.soft_cap: must be 0 (none) or between 1e-06 and 1e+06, not 2e6" },
		{ "-1", "4:13: model.soft_cap: must be at least 0, not -1" },
	};
	char text[256], *path;
	struct run_result r;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
			 "fragsim: 1\nname: x\nmodel:\n  soft_cap: %s\nsequences:\n  - {context: 3}\n",
			 bad[i].v);
		path = tu_write_temp(".yaml", text);
		r = tu_run("show %s", path);
		assert_int_equal(r.status, 2);
		if (!strstr(r.err, bad[i].msg))
			fail_msg("soft_cap %s: %s", bad[i].v, r.err);
		tu_free(&r);
		unlink(path);
		free(path);
	}
}

/* A decode case inside the INT8 path but for soft cap or ALiBi. */
static void route_refuses_soft_cap_and_alibi(void **state)
{
	static const struct {
		const char *model, *reason;
	} cases[] = {
		{ "soft_cap: 30", "logits soft cap 30, the INT8 path applies none" },
		{ "alibi: true", "ALiBi, the INT8 path adds no position bias" },
	};
	char text[256], *path;
	struct run_result r;

	(void)state;
	r = tu_run("route cases/qwen35-27b/decode-17.yaml");
	assert_int_equal(r.status, 0);
	tu_free(&r);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int prefill = 0; prefill < 2; prefill++) {
			snprintf(text, sizeof(text),
				 "fragsim: 1\nname: x\nmode: %s\nmodel: {%s}\nsequences:\n  - {%s}\n",
				 prefill ? "prefill" : "decode", cases[i].model,
				 prefill ? "history: 0, chunk: 3" : "context: 3");
			path = tu_write_temp(".yaml", text);
			r = tu_run("route %s", path);
			assert_int_equal(r.status, 1);
			if (!strstr(r.out, cases[i].reason) && !strstr(r.err, cases[i].reason))
				fail_msg("%s: %s%s", text, r.out, r.err);
			tu_free(&r);
			unlink(path);
			free(path);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_key_changes_goldens_or_says_why),
		cmocka_unit_test(schema_doc_is_current),
		cmocka_unit_test(schema_doc_lists_every_key),
		cmocka_unit_test(soft_cap_range),
		cmocka_unit_test(route_refuses_soft_cap_and_alibi),
	};

	return cmocka_run_group_tests_name("keys", tests, NULL, NULL);
}
