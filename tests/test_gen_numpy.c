/*
 * test_gen_numpy.c - the generator's numpy twin (tools/python/
 * fragsim_gen.py, written from docs/generator.md) regenerates the
 * inputs fragsim writes, bit for bit: Q exactly, K and V through their
 * int8 caches and scales. Two cases cover every distribution, mean,
 * scale, outliers, zero and constant rows, decode and prefill, shuffled
 * pages and both roundings. The twin is an independent implementation
 * (numpy, vectorised over a row, 64-bit keys in Python integers), so
 * agreement checks the C against the document, not against itself.
 *
 * numpy is in /usr/bin/python3 on the machines make test runs on; a
 * missing numpy fails the test rather than skipping it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>

#include "testutil.h"

#define NUMPY_PY "/usr/bin/python3"

static void regenerate(void **state, const char *name)
{
	struct tu_scratch *t = *state;

	assert_int_equal(tu_sh("cd '%s' && '%s' show tests/data/gen/%s.yaml > %s/%s.yaml",
			       FRAGSIM_SRC, FRAGSIM_BIN, name, t->dir, name), 0);
	assert_int_equal(tu_sh("cd '%s' && '%s' run tests/data/gen/%s.yaml --emulate-only "
			       "--out %s/%s >/dev/null", FRAGSIM_SRC, FRAGSIM_BIN, name,
			       t->dir, name), 0);
	assert_int_equal(tu_sh("cd '%s' && %s tools/python/fragsim_gen.py check %s/%s.yaml %s/%s",
			       FRAGSIM_SRC, NUMPY_PY, t->dir, name, t->dir, name), 0);
}

static void decode_inputs(void **state)
{
	regenerate(state, "decode");
}

static void prefill_inputs(void **state)
{
	regenerate(state, "prefill");
}

/* The checker can fail: another seed's inputs are not these. */
static void a_wrong_seed_is_caught(void **state)
{
	struct tu_scratch *t = *state;

	regenerate(state, "decode");
	assert_int_equal(tu_sh("sed 's/^  seed: 7$/  seed: 8/' %s/decode.yaml > %s/seed8.yaml && "
			       "grep -q '^  seed: 8$' %s/seed8.yaml", t->dir, t->dir, t->dir), 0);
	assert_int_equal(tu_sh("cd '%s' && %s tools/python/fragsim_gen.py check %s/seed8.yaml "
			       "%s/decode >/dev/null", FRAGSIM_SRC, NUMPY_PY, t->dir, t->dir), 1);
}

static int setup(void **state)
{
	return tu_scratch_setup(state, "gennp", "unused");
}

static int teardown(void **state)
{
	return tu_scratch_teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decode_inputs),
		cmocka_unit_test(prefill_inputs),
		cmocka_unit_test(a_wrong_seed_is_caught),
	};

	return cmocka_run_group_tests_name("gen_numpy", tests, setup, teardown);
}
