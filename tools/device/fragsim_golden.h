/*
 * fragsim_golden.h - read what a device harness needs from a golden
 * directory (`fragsim run CASE --emulate-only --out DIR` with golden
 * [inputs, acc]): the quantized Q, the paged K cache and its scales, the
 * block table, the context lengths, the query positions and the tile list.
 * C99, C++ and HIP/CUDA host code; one file, no library. Shared by the
 * HIP harness (hip/attn_mmac.hip), the CUDA one (attn_sm80.cu) and the
 * CPU harness (qk_cpu.c), so all read a golden the same way.
 *
 *   struct fsg_golden g;
 *   char err[512];
 *
 *   if (fsg_load(&g, "golden", err, sizeof(err)))
 *           fprintf(stderr, "%s\n", err), exit(2);
 *   ... g.q_int8[((s * T + t) * Hq + qh) * D + d] ...
 *   fsg_free(&g);
 *
 * The .npy reader takes what fragsim writes (NumPy 1.0, little-endian,
 * C order) and checks each file's dtype and rank; shapes that must agree
 * between files (Q and the cache's D, the tile list's FSG_TILE_COLS
 * columns) are checked too. Everything else about the case is fragsim's
 * business.
 */
#ifndef FRAGSIM_GOLDEN_H
#define FRAGSIM_GOLDEN_H

#include <stddef.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FSG_MAX_DIMS 5
/* acc_tiles' columns: seq, head, row_base, token_base, row_tile. */
#define FSG_TILE_COLS 5

struct fsg_array {
	char descr[8];			/* "|i1", "<i4", "<f4" */
	int ndim;
	size_t shape[FSG_MAX_DIMS];
	size_t count;			/* elements */
	void *data;
};

struct fsg_golden {
	int prefill;			/* mode: prefill (1) or decode (0) */
	int packed_rows;		/* decode: the manifest's decode_rows is
					   "packed" (1) or "replicated" (0) */
	double softmax_scale;
	char profile[64];		/* the lane map the goldens follow */
	int S, T, Hq, Hkv, D, G;	/* G = Hq / Hkv */
	int NB, BS, MAXB, MAXCTX;
	size_t n_tiles;
	int8_t *q_int8;			/* [S][T][Hq][D] */
	float *q_scale;			/* [S][T][Hq] */
	int8_t *k_cache;		/* [NB][Hkv][D/16][BS][16] */
	float *k_scale;			/* [NB][BS][Hkv] */
	int32_t *block_table;		/* [S][MAXB] */
	int32_t *context_lens;		/* [S] */
	int32_t *q_pos;			/* [S][T], -1 past a sequence's tokens */
	int32_t *acc_tiles;		/* [n_tiles][FSG_TILE_COLS] */
	int32_t *tokens;		/* [S] query tokens (derived from q_pos) */
	int32_t *seq_block0;		/* [S] first logical block of each
					   sequence counted over all sequences */
	struct fsg_array a[8];		/* owners of the data above */
};

static inline int fsg_npy(const char *path, const char *descr, int ndim,
			  struct fsg_array *a, char *err, size_t errlen)
{
	unsigned char pre[10];
	char head[1024], *p;
	size_t hlen, esize = descr[2] == '1' ? 1 : 4;
	FILE *f = fopen(path, "rb");

	memset(a, 0, sizeof(*a));
	if (!f) {
		snprintf(err, errlen, "%s: cannot open", path);
		return -1;
	}
	if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY\x01\x00", 8) ||
	    (hlen = (size_t)pre[8] | (size_t)pre[9] << 8) >= sizeof(head) ||
	    fread(head, 1, hlen, f) != hlen) {
		fclose(f);
		snprintf(err, errlen, "%s: not a NumPy 1.0 file", path);
		return -1;
	}
	head[hlen] = '\0';
	p = strstr(head, "'descr': '");
	if (!p || strncmp(p + 10, descr, 3) || !strstr(head, "'fortran_order': False") ||
	    !(p = strstr(head, "'shape': ("))) {
		fclose(f);
		snprintf(err, errlen, "%s: must be %s in C order", path, descr);
		return -1;
	}
	memcpy(a->descr, descr, 4);
	p += 10;
	a->count = 1;
	while (*p != ')' && a->ndim < FSG_MAX_DIMS) {
		char *end;

		a->shape[a->ndim] = (size_t)strtoul(p, &end, 10);
		if (end == p)
			break;
		a->count *= a->shape[a->ndim++];
		p = end;
		while (*p == ',' || *p == ' ')
			p++;
	}
	if (a->ndim != ndim) {
		fclose(f);
		snprintf(err, errlen, "%s: must have %d dimensions", path, ndim);
		return -1;
	}
	a->data = malloc(a->count * esize + 1);
	if (!a->data || fread(a->data, esize, a->count, f) != a->count) {
		fclose(f);
		free(a->data);
		a->data = NULL;
		snprintf(err, errlen, "%s: truncated", path);
		return -1;
	}
	fclose(f);
	return 0;
}

/* The text after "key": in manifest text m (first occurrence), or NULL. */
static inline const char *fsg_json_at(const char *m, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(m, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	return p;
}

static inline void fsg_free(struct fsg_golden *g)
{
	for (int i = 0; i < 8; i++)
		free(g->a[i].data);
	free(g->tokens);
	free(g->seq_block0);
	memset(g, 0, sizeof(*g));
}

/*
 * Case features these harnesses do not implement, refused by name: the
 * manifest's case_yaml (the resolved case, one key a line, so a key is
 * found as "\n<indent>key: " in its JSON text) must give key the value
 * only (k_scale: per_token_head), or not carry key at all (only NULL).
 */
static inline int fsg_unsupported(const char *m, const char *path, char *err,
				  size_t errlen)
{
	static const struct { const char *key, *only; } f[] = {
		{ "\\n  k_scale: ", "per_token_head" },
		{ "\\n  block_stride: ", NULL },
	};
	const char *y = strstr(m, "\"case_yaml\":"), *p;

	for (size_t i = 0; y && i < sizeof(f) / sizeof(f[0]); i++) {
		char val[32] = "";

		p = strstr(y, f[i].key);
		if (!p)
			continue;
		p += strlen(f[i].key);
		if (f[i].only && !strncmp(p, f[i].only, strlen(f[i].only)) &&
		    (p[strlen(f[i].only)] == '\\' || p[strlen(f[i].only)] == ' '))
			continue;
		for (size_t n = 0; n < sizeof(val) - 1 && (isalnum((unsigned char)p[n]) || p[n] == '_'); n++)
			val[n] = p[n], val[n + 1] = '\0';
		if (f[i].only)
			snprintf(err, errlen, "%s: case %s%s: this harness reads %s%s only",
				 path, f[i].key + 4, val, f[i].key + 4, f[i].only);
		else
			snprintf(err, errlen, "%s: case %s%s: not implemented by this harness",
				 path, f[i].key + 4, val);
		return -1;
	}
	return 0;
}

static inline int fsg_manifest(struct fsg_golden *g, const char *dir, char *err,
			       size_t errlen)
{
	char path[1200], *m;
	const char *p;
	long n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open", path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	m = (char *)malloc((size_t)n + 1);
	if (!m || fread(m, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(m);
		snprintf(err, errlen, "%s: unreadable", path);
		return -1;
	}
	fclose(f);
	m[n] = '\0';
	if (fsg_unsupported(m, path, err, errlen)) {
		free(m);
		return -1;
	}
	p = fsg_json_at(m, "mode");
	g->prefill = p && !strncmp(p, "\"prefill\"", 9);
	if (!p || (!g->prefill && strncmp(p, "\"decode\"", 8))) {
		free(m);
		snprintf(err, errlen, "%s: no mode decode or prefill", path);
		return -1;
	}
	/* absent in goldens older than the key: replicated, then the only rows */
	p = fsg_json_at(m, "decode_rows");
	g->packed_rows = p && !strncmp(p, "\"packed\"", 8);
	if (p && !g->packed_rows && strncmp(p, "\"replicated\"", 12)) {
		free(m);
		snprintf(err, errlen, "%s: decode_rows is neither \"replicated\" nor \"packed\"",
			 path);
		return -1;
	}
	p = fsg_json_at(m, "softmax_scale");
	g->softmax_scale = p ? strtod(p, NULL) : 0.0;
	p = fsg_json_at(m, "profile");
	p = p ? fsg_json_at(p, "name") : NULL;
	if (!p || g->softmax_scale <= 0.0 || sscanf(p, "\"%63[^\"]\"", g->profile) != 1) {
		free(m);
		snprintf(err, errlen, "%s: no softmax_scale or profile name", path);
		return -1;
	}
	free(m);
	return 0;
}

/* Load a golden directory; 0, or -1 with err set and g empty. */
static inline int fsg_load(struct fsg_golden *g, const char *dir, char *err,
			   size_t errlen)
{
	static const struct { const char *name, *descr; int ndim; } f[8] = {
		{ "q_int8", "|i1", 4 }, { "q_scale", "<f4", 3 },
		{ "k_cache", "|i1", 5 }, { "k_scale", "<f4", 3 },
		{ "block_table", "<i4", 2 }, { "context_lens", "<i4", 1 },
		{ "q_pos", "<i4", 2 }, { "acc_tiles", "<i4", 2 },
	};
	char path[1200];
	int nblk = 0;

	memset(g, 0, sizeof(*g));
	if (fsg_manifest(g, dir, err, errlen))
		return -1;
	for (int i = 0; i < 8; i++) {
		snprintf(path, sizeof(path), "%s/%s.npy", dir, f[i].name);
		if (fsg_npy(path, f[i].descr, f[i].ndim, &g->a[i], err, errlen)) {
			fsg_free(g);
			return -1;
		}
	}
	g->q_int8 = (int8_t *)g->a[0].data;
	g->q_scale = (float *)g->a[1].data;
	g->k_cache = (int8_t *)g->a[2].data;
	g->k_scale = (float *)g->a[3].data;
	g->block_table = (int32_t *)g->a[4].data;
	g->context_lens = (int32_t *)g->a[5].data;
	g->q_pos = (int32_t *)g->a[6].data;
	g->acc_tiles = (int32_t *)g->a[7].data;
	g->S = (int)g->a[0].shape[0], g->T = (int)g->a[0].shape[1];
	g->Hq = (int)g->a[0].shape[2], g->D = (int)g->a[0].shape[3];
	g->NB = (int)g->a[2].shape[0], g->Hkv = (int)g->a[2].shape[1];
	g->BS = (int)g->a[2].shape[3], g->MAXB = (int)g->a[4].shape[1];
	g->n_tiles = g->a[7].shape[0];
	if (g->a[7].shape[1] != FSG_TILE_COLS) {
		/* A golden of a fragsim before row_tile: its rows cannot tell
		 * the row tiles of a decode group larger than M apart. */
		snprintf(err, errlen,
			 "%s/acc_tiles.npy: %zu columns, not %d (seq, head, row_base, token_base, row_tile); write the golden again with this fragsim",
			 dir, g->a[7].shape[1], FSG_TILE_COLS);
		fsg_free(g);
		return -1;
	}
	if (!g->Hkv || g->Hq % g->Hkv || g->a[2].shape[2] * 16 != (size_t)g->D ||
	    g->a[4].shape[0] != (size_t)g->S ||
	    g->a[5].shape[0] != (size_t)g->S) {
		snprintf(err, errlen, "%s: the golden's shapes disagree", dir);
		fsg_free(g);
		return -1;
	}
	g->G = g->Hq / g->Hkv;
	g->tokens = (int32_t *)calloc((size_t)g->S + 1, sizeof(int32_t));
	g->seq_block0 = (int32_t *)calloc((size_t)g->S + 1, sizeof(int32_t));
	if (!g->tokens || !g->seq_block0) {
		snprintf(err, errlen, "out of memory");
		fsg_free(g);
		return -1;
	}
	for (int s = 0; s < g->S; s++) {
		for (int t = 0; t < g->T; t++)
			g->tokens[s] += g->q_pos[s * g->T + t] >= 0;
		g->seq_block0[s] = nblk;
		nblk += (g->context_lens[s] + g->BS - 1) / g->BS;
		if (g->context_lens[s] > g->MAXCTX)
			g->MAXCTX = g->context_lens[s];
	}
	return 0;
}

#endif
