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

#include "../sim/attn/kernel.h"
#include "../lib/casefile.h"
#include "testutil.h"

#include "casekeys.h"

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
