/*
 * case.c - sizes derived from a resolved case (see case.h). They live
 * here, once, so that sim/, ref/, lib/ and cli/ cannot disagree on them.
 */
#include "case.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int case_tokens_max(const struct fs_case *c)
{
	int t = 0;

	for (int s = 0; s < c->n_seqs; s++)
		if (c->seqs[s].tokens > t)
			t = c->seqs[s].tokens;
	return t;
}

int case_context_max(const struct fs_case *c)
{
	int m = 0;

	for (int s = 0; s < c->n_seqs; s++)
		if (c->seqs[s].context > m)
			m = c->seqs[s].context;
	return m;
}

int case_blocks_of(const struct fs_case *c, int s)
{
	return (c->seqs[s].context + c->block_size - 1) / c->block_size;
}

int case_table_width(const struct fs_case *c)
{
	int w = 0;

	for (int s = 0; s < c->n_seqs; s++)
		if (case_blocks_of(c, s) > w)
			w = case_blocks_of(c, s);
	return w;
}

int case_blocks_needed(const struct fs_case *c)
{
	int n = 0;

	for (int s = 0; s < c->n_seqs; s++)
		n += case_blocks_of(c, s);
	return n;
}

int case_q_pos(const struct fs_case *c, int s, int t)
{
	if (t >= c->seqs[s].tokens)
		return -1;
	return c->seqs[s].history + t;
}

int case_group(const struct fs_case *c)
{
	return c->q_heads / c->kv_heads;
}

int case_segments_of(const struct fs_case *c, int s)
{
	if (c->segment <= 0)
		return 1;
	return (c->seqs[s].context + c->segment - 1) / c->segment;
}

int case_segments_max(const struct fs_case *c)
{
	int m = 1;

	for (int s = 0; s < c->n_seqs; s++)
		if (case_segments_of(c, s) > m)
			m = case_segments_of(c, s);
	return m;
}

void case_free(struct fs_case *c)
{
	for (int s = 0; s < c->n_seqs; s++) {
		free(c->seqs[s].blocks);
		c->seqs[s].blocks = NULL;
	}
}

const struct case_at *case_key_at(const struct fs_case *c, const char *path)
{
	for (int i = 0; i < c->n_at; i++)
		if (strcmp(c->at[i].path, path) == 0)
			return &c->at[i];
	return NULL;
}

enum fs_rc case_fail_key(struct fs_err *err, const struct fs_case *c,
			 const char *path, const char *fmt, ...)
{
	const struct case_at *at = case_key_at(c, path);
	int line = at ? at->line : 0, col = at ? at->col : 0;
	enum fs_rc rc;
	va_list ap;

	va_start(ap, fmt);
	rc = fs_vfail_key(err, c->file[0] ? c->file : NULL, line, col, path, fmt, ap);
	va_end(ap);
	return rc;
}
