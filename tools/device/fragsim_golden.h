/*
 * fragsim_golden.h - read what a device harness needs from a golden
 * directory (`fragsim run CASE --emulate-only --out DIR` with golden
 * [inputs, acc]): the quantized Q, the paged K cache and its scales, the
 * block table, the context lengths, the query positions and the tile list;
 * with pv.mode int8 also the paged V cache, its per-token scales and the
 * PV group list (pv_tiles), and P's rounding and clip from the manifest.
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
 * columns) are checked too.
 *
 * No case key is accepted and then ignored. The manifest carries the
 * case as fragsim read it, every key written out (its "case_yaml"), and
 * fsg_load walks every line of it against fsg_keys[] below: a key the
 * harnesses apply (soft cap, ALiBi, the sliding window, the K scale
 * granularities, the decode row layout, INT8 PV with its regroup, its
 * split-K segments and P's quantization), a key that cannot change what
 * they compute (how the inputs were made: the golden holds them), or a
 * key that must have the value the harnesses implement (the kernel:
 * bug keys: a harness runs the correct kernel and plants its own bugs).
 * Any other key or value - one a later fragsim added - refuses the
 * golden and names the key:
 *
 *   golden/manifest.json: case key cache.shuffle_cache is true: the
 *   harnesses load K in the plain paged layout; refusing the golden
 *   rather than ignoring the key
 */
#ifndef FRAGSIM_GOLDEN_H
#define FRAGSIM_GOLDEN_H

#include <math.h>
#include <stddef.h>
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

/* K scale granularity (cache: k_scale), by the k_scale.npy it makes. */
enum fsg_kscale {
	FSG_KS_TOKEN_HEAD,		/* [NB][BS][Hkv] */
	FSG_KS_TENSOR,			/* [1] */
	FSG_KS_BLOCK32,			/* [NB][BS][Hkv][D/32]: one per 32 dims */
};

/* pv.regroup (pv.mode int8): how P becomes the PV A operand. */
enum fsg_pv_regroup {
	FSG_PV_LDS,			/* written in C order to LDS, read in A order */
	FSG_PV_V_PERMUTED,		/* kept in the C registers, V permuted */
};

/* The golden's arrays, in fsg_load's order (g.a[]): the QK inputs, then
 * with pv.mode int8 V and the PV groups. */
#define FSG_N_QK_ARRAYS 8
#define FSG_N_ARRAYS 11

struct fsg_golden {
	int prefill;			/* mode: prefill (1) or decode (0) */
	/* From the manifest's case_yaml (the score modifiers in the order
	 * fragsim applies them: soft cap, then ALiBi, then the masks). */
	double soft_cap;		/* model: soft_cap; 0 = none */
	int alibi;			/* model: alibi */
	int window;			/* model: sliding_window; 0 = none */
	enum fsg_kscale kscale;		/* cache: k_scale */
	int packed_rows;		/* decode: the manifest's decode_rows is
					   "packed" (1) or "replicated" (0) */
	double softmax_scale;
	/* pv.mode int8 (the PV half): the regroup, split_k.segment (the
	 * softmax state's segments; 0 none), and P's quantization from the
	 * manifest's rounding and clip (quant:) */
	int pv_int8;
	enum fsg_pv_regroup pv_regroup;
	int segment;
	int clip, round_even;
	int v_not_int8;			/* cache.v_dtype is not int8 */
	int v_per_channel;		/* cache.v_scale is per_channel */
	char profile[64];		/* the lane map the goldens follow */
	int S, T, Hq, Hkv, D, G;	/* G = Hq / Hkv */
	int NB, BS, MAXB, MAXCTX;
	size_t n_tiles;
	int8_t *q_int8;			/* [S][T][Hq][D] */
	float *q_scale;			/* [S][T][Hq] */
	int8_t *k_cache;		/* [NB][Hkv][D/16][BS][16] */
	float *k_scale;			/* [NB][BS][Hkv], [1] per_tensor,
					   [NB][BS][Hkv][D/32] per_block32 (f16
					   in the golden, widened here) */
	int32_t *block_table;		/* [S][MAXB] */
	int32_t *context_lens;		/* [S] */
	int32_t *q_pos;			/* [S][T], -1 past a sequence's tokens */
	int32_t *acc_tiles;		/* [n_tiles][FSG_TILE_COLS] */
	int32_t *tokens;		/* [S] query tokens (derived from q_pos) */
	int32_t *seq_block0;		/* [S] first logical block of each
					   sequence counted over all sequences */
	float *alibi_slope;		/* [Hq] (fsg_alibi_slope), or NULL */
	/* pv.mode int8 only (NULL, 0 otherwise) */
	int8_t *v_cache;		/* [NB][Hkv][D][BS] */
	float *v_scale;			/* [NB][BS][Hkv] */
	int32_t *pv_tiles;		/* [n_groups][FSG_TILE_COLS]: the groups */
	size_t n_groups;
	struct fsg_array a[FSG_N_ARRAYS];	/* owners of the data above */
};

static inline int fsg_npy(const char *path, const char *descr, int ndim,
			  struct fsg_array *a, char *err, size_t errlen)
{
	unsigned char pre[10];
	char head[1024], *p;
	size_t hlen, esize = descr[2] == '1' ? 1 : descr[2] == '2' ? 2 : 4;
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

/* IEEE binary16 bits as a float (exact: every half is a float). */
static inline float fsg_half(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, e = h >> 10 & 0x1f, m = h & 0x3ff, bits;
	float f;

	if (e == 0x1f) {
		bits = sign | 0x7f800000u | m << 13;		/* inf, NaN */
	} else if (e) {
		bits = sign | (e + 112) << 23 | m << 13;	/* normal */
	} else if (m) {
		int shift = 0;					/* subnormal */

		while (!(m & 0x400))
			m <<= 1, shift++;
		bits = sign | (uint32_t)(113 - shift) << 23 | (m & 0x3ff) << 13;
	} else {
		bits = sign;
	}
	memcpy(&f, &bits, sizeof(f));
	return f;
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

/*
 * The case keys (fsg_keys[]): one row per key of the normalized case
 * text, by its path (section.key; data.q.dist; a trailing '*' matches a
 * prefix). What the harnesses do with it:
 *   FSG_APPLIED  read and honoured (from the tensors, the manifest, or
 *                the value itself: see fsg_case)
 *   FSG_INPUTS   cannot change acc or scores: it shapes inputs the golden
 *                already holds, or what fragsim checks and writes
 *   FSG_ONLY     honoured only at the values in `only` (space separated);
 *                any other value refuses the golden, with `why`
 */
enum fsg_use { FSG_APPLIED, FSG_INPUTS, FSG_ONLY };

struct fsg_key {
	const char *path;
	enum fsg_use use;
	const char *only;
	const char *why;
};

static const struct fsg_key fsg_keys[] = {
	{ "fragsim", FSG_INPUTS, NULL, NULL },
	{ "name", FSG_INPUTS, NULL, NULL },
	{ "description", FSG_INPUTS, NULL, NULL },
	{ "isa", FSG_APPLIED, NULL, NULL },		/* the profile name, checked */
	{ "mode", FSG_APPLIED, NULL, NULL },
	{ "route", FSG_INPUTS, NULL, NULL },
	{ "expect", FSG_INPUTS, NULL, NULL },
	{ "golden", FSG_INPUTS, NULL, NULL },
	{ "model.q_heads", FSG_APPLIED, NULL, NULL },	/* the tensors' shapes */
	{ "model.kv_heads", FSG_APPLIED, NULL, NULL },
	{ "model.head_dim", FSG_APPLIED, NULL, NULL },
	{ "model.softmax_scale", FSG_APPLIED, NULL, NULL },	/* the manifest's */
	{ "model.sliding_window", FSG_APPLIED, NULL, NULL },
	{ "model.alibi", FSG_APPLIED, NULL, NULL },
	{ "model.soft_cap", FSG_APPLIED, NULL, NULL },
	{ "cache.block_size", FSG_APPLIED, NULL, NULL },
	{ "cache.num_blocks", FSG_APPLIED, NULL, NULL },
	{ "cache.spare_blocks", FSG_APPLIED, NULL, NULL },
	{ "cache.placement", FSG_APPLIED, NULL, NULL },	/* the block table */
	{ "cache.k_scale", FSG_ONLY, "per_token_head per_tensor per_block32",
	  "the harnesses read K scales per (token, kv head), per tensor or per 32 dims" },
	/* V: not in QK^T; INT8 PV reads it as int8, which fragsim's pv.mode
	 * int8 requires (fsg_manifest checks) */
	{ "cache.v_dtype", FSG_INPUTS, NULL, NULL },
	/* written only when set: V's scales, not in QK^T either; the PV half
	 * reads them per (token, kv head), so fsg_manifest refuses
	 * per_channel with pv.mode int8 */
	{ "cache.v_scale", FSG_INPUTS, NULL, NULL },
	{ "cache.shuffle_cache", FSG_ONLY, "false",
	  "the harnesses load K in the plain paged layout" },
	/* written only when set (not 0): any value is a padded pool */
	{ "cache.block_stride", FSG_ONLY, "0",
	  "the harnesses address a dense pool (block b at b blocks' bytes)" },
	/* written only when free */
	{ "cache.window_blocks", FSG_ONLY, "keep",
	  "the harnesses walk every key's block; freed ones (-1 entries) they would read" },
	{ "sequences", FSG_APPLIED, NULL, NULL },	/* context_lens, q_pos, the table */
	/* Q comes quantized; INT8 PV quantizes P with the manifest's
	 * rounding and clip */
	{ "quant.rounding", FSG_APPLIED, NULL, NULL },
	{ "quant.clip", FSG_APPLIED, NULL, NULL },
	{ "quant.*", FSG_INPUTS, NULL, NULL },
	/* the softmax's segments: applied by INT8 PV (pv_tile.h), no
	 * softmax in QK^T alone */
	{ "split_k.segment", FSG_APPLIED, NULL, NULL },
	{ "kernel.decode_rows", FSG_APPLIED, NULL, NULL },
	/* written only when set: f32 (the harnesses run QK^T only) or int8
	 * (the PV half too, pv_tile.h; a harness without it refuses by
	 * name, fsg_pv_refuse) */
	{ "pv.mode", FSG_APPLIED, NULL, NULL },
	{ "pv.regroup", FSG_APPLIED, NULL, NULL },
	{ "kernel.c_columns", FSG_ONLY, "profile", NULL },
	{ "kernel.operand_order", FSG_ONLY, "qk", NULL },
	{ "kernel.head_dim_loaded", FSG_ONLY, "all", NULL },
	{ "kernel.scale_recovery", FSG_ONLY, "before_softmax", NULL },
	{ "kernel.k_scale_index", FSG_ONLY, "per_token", NULL },
	{ "kernel.gqa_map", FSG_ONLY, "divide", NULL },
	{ "kernel.tail_mask", FSG_ONLY, "column", NULL },
	{ "kernel.page_walk", FSG_ONLY, "block_table", NULL },
	{ "kernel.transpose", FSG_ONLY, "profile", NULL },
	{ "kernel.q_position", FSG_ONLY, "absolute", NULL },
	{ "kernel.split_merge", FSG_ONLY, "rescale", NULL },
	{ "kernel.pv_mask", FSG_ONLY, "correct", NULL },
	{ "kernel.mask_value", FSG_ONLY, "correct", NULL },
	{ "kernel.window_edge", FSG_ONLY, "correct", NULL },
	{ "kernel.soft_cap_apply", FSG_ONLY, "correct", NULL },
	{ "kernel.alibi_bias", FSG_ONLY, "correct", NULL },
	{ "kernel.exp_base", FSG_ONLY, "correct", NULL },
	{ "kernel.block_offset", FSG_ONLY, "pool", NULL },
	{ "kernel.k_scale_walk", FSG_ONLY, "block_table", NULL },
	{ "kernel.v_page_walk", FSG_ONLY, "block_table", NULL },
	{ "kernel.block_size_assumed", FSG_ONLY, "cache", NULL },
	{ "kernel.operand_load", FSG_ONLY, "direct", NULL },
	{ "kernel.c_rows", FSG_ONLY, "profile", NULL },
	{ "kernel.p_regroup", FSG_ONLY, "exchanged", NULL },
	{ "kernel.pv_group_max", FSG_ONLY, "per_group", NULL },
	{ "kernel.v_scale_apply", FSG_ONLY, "folded", NULL },
	{ "kernel.p_scale_index", FSG_ONLY, "per_row", NULL },
	{ "kernel.pv_rescale", FSG_ONLY, "applied", NULL },
	{ "data.*", FSG_INPUTS, NULL, NULL },
	{ "check.*", FSG_INPUTS, NULL, NULL },
};

#define FSG_KERNEL_WHY "the harnesses run the correct kernel (plant a bug with the harness's argument)"

/* The row of path, or NULL. */
static inline const struct fsg_key *fsg_key_of(const char *path)
{
	for (size_t i = 0; i < sizeof(fsg_keys) / sizeof(fsg_keys[0]); i++) {
		const char *k = fsg_keys[i].path;
		size_t n = strlen(k);

		if (k[n - 1] == '*' ? !strncmp(path, k, n - 1) : !strcmp(path, k))
			return &fsg_keys[i];
	}
	return NULL;
}

/* Is word v one of the space-separated words of list? */
static inline int fsg_one_of(const char *v, const char *list)
{
	size_t n = strlen(v);

	for (const char *p = list; *p; ) {
		const char *e = strchr(p, ' ');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == n && !strncmp(p, v, n))
			return 1;
		p += len + (e != NULL);
	}
	return 0;
}

/*
 * The manifest's "case_yaml" string, unescaped, into a malloc'ed buffer;
 * NULL when absent or malformed.
 */
static inline char *fsg_case_text(const char *m)
{
	const char *p = fsg_json_at(m, "case_yaml");
	char *t, *o;

	if (!p || *p != '"')
		return NULL;
	t = o = (char *)malloc(strlen(p) + 1);
	if (!t)
		return NULL;
	for (p++; *p && *p != '"'; p++) {
		if (*p != '\\') {
			*o++ = *p;
			continue;
		}
		switch (*++p) {
		case 'n': *o++ = '\n'; break;
		case 't': *o++ = '\t'; break;
		case 'r': *o++ = '\r'; break;
		case 'u': *o++ = '?', p += 4; break;	/* not in keys we read */
		case '\0': free(t); return NULL;
		default: *o++ = *p; break;
		}
	}
	if (*p != '"') {
		free(t);
		return NULL;
	}
	*o = '\0';
	return t;
}

/* The flow brackets ([ { minus ] }) a line opens, outside quotes and
 * comments: a long flow list (a sequence's blocks) is written over
 * several lines, its continuation lines no `key:` of their own. */
static inline int fsg_flow_delta(const char *p, size_t len)
{
	int d = 0;
	char quote = 0;

	for (size_t i = 0; i < len; i++) {
		if (quote) {
			if (p[i] == '\\' && quote == '"')
				i++;
			else if (p[i] == quote)
				quote = 0;
		} else if (p[i] == '"' || p[i] == '\'') {
			quote = p[i];
		} else if (p[i] == '#' && (i == 0 || p[i - 1] == ' ')) {
			break;
		} else if (p[i] == '[' || p[i] == '{') {
			d++;
		} else if (p[i] == ']' || p[i] == '}') {
			d--;
		}
	}
	return d;
}

/*
 * Walk the case text (YAML as fragsim writes it: two spaces an indent
 * level, one `key: value` a line, a flow list wrapped over lines, `# ...`
 * comments) key by key against fsg_keys[], and take the values the
 * harnesses apply into g. 0, or -1 with err naming the key.
 */
static inline int fsg_case(struct fsg_golden *g, const char *text, const char *path,
			   char *err, size_t errlen)
{
	char sect[3][48] = { "", "", "" };
	const char *line = text;
	int flow = 0;	/* brackets left open by the lines before */

	while (line && *line) {
		const char *nl = strchr(line, '\n'), *p = line;
		char key[48], val[128], full[160];
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		int ind = 0, n = 0, open = flow;
		const struct fsg_key *k;

		flow += fsg_flow_delta(line, len);
		if (open > 0) {
			line = nl ? nl + 1 : NULL;	/* inside a wrapped flow value */
			continue;
		}
		while (p < line + len && *p == ' ')
			p++, ind++;
		if (p == line + len || *p == '#' || *p == '-') {
			line = nl ? nl + 1 : NULL;	/* blank, comment, list item */
			continue;
		}
		while (p + n < line + len && p[n] != ':')
			n++;
		if (ind % 2 || ind / 2 > 2 || n == 0 || (size_t)n >= sizeof(key) ||
		    p + n == line + len) {
			snprintf(err, errlen, "%.600s: case_yaml: cannot read line '%.*s'", path,
				 (int)(len < 60 ? len : 60), line);
			return -1;
		}
		memcpy(key, p, (size_t)n), key[n] = '\0';
		p += n + 1;
		while (p < line + len && *p == ' ')
			p++;
		n = 0;
		while (p + n < line + len && p[n] != '#' && (size_t)n < sizeof(val) - 1)
			n++;
		while (n > 0 && p[n - 1] == ' ')
			n--;
		memcpy(val, p, (size_t)n), val[n] = '\0';
		snprintf(sect[ind / 2], sizeof(sect[0]), "%s", key);
		if (ind == 0)
			snprintf(full, sizeof(full), "%s", key);
		else if (ind == 2)
			snprintf(full, sizeof(full), "%s.%s", sect[0], key);
		else
			snprintf(full, sizeof(full), "%s.%s.%s", sect[0], sect[1], key);
		line = nl ? nl + 1 : NULL;
		if (!val[0] && ind < 4)
			continue;	/* a section header: its keys follow */
		k = fsg_key_of(full);
		if (!k) {
			snprintf(err, errlen,
				 "%.600s: case key %.160s is unknown to the harnesses (a newer fragsim?): refusing the golden rather than ignoring the key",
				 path, full);
			return -1;
		}
		if (k->use == FSG_ONLY && !fsg_one_of(val, k->only)) {
			snprintf(err, errlen,
				 "%.600s: case key %.160s is %.100s: %s; refusing the golden rather than ignoring the key",
				 path, full, val, k->why ? k->why : FSG_KERNEL_WHY);
			return -1;
		}
		if (!strcmp(full, "model.soft_cap"))
			g->soft_cap = strtod(val, NULL);
		else if (!strcmp(full, "model.alibi"))
			g->alibi = !strcmp(val, "true");
		else if (!strcmp(full, "model.sliding_window"))
			g->window = atoi(val);
		else if (!strcmp(full, "pv.mode"))
			g->pv_int8 = !strcmp(val, "int8");
		else if (!strcmp(full, "pv.regroup"))
			g->pv_regroup = !strcmp(val, "v_permuted") ? FSG_PV_V_PERMUTED : FSG_PV_LDS;
		else if (!strcmp(full, "split_k.segment"))
			g->segment = atoi(val);
		else if (!strcmp(full, "cache.v_dtype"))
			g->v_not_int8 = strcmp(val, "int8") != 0;
		else if (!strcmp(full, "cache.v_scale"))
			g->v_per_channel = !strcmp(val, "per_channel");
		else if (!strcmp(full, "cache.k_scale"))
			g->kscale = !strcmp(val, "per_tensor") ? FSG_KS_TENSOR :
				    !strcmp(val, "per_block32") ? FSG_KS_BLOCK32 :
				    FSG_KS_TOKEN_HEAD;
	}
	return 0;
}

/*
 * The ALiBi slope of q head h of H, rounded once to float: with n the
 * largest power of two <= H, head h < n has 2^(-8(h+1)/n) and head n + i
 * has 2^(-4(2i+1)/n), as in the ALiBi paper's reference code. Written
 * here from that formula, not from fragsim's code;
 * tests/test_fragsim_dump.c checks it gives fragsim's bits.
 */
static inline float fsg_alibi_slope(int h, int H)
{
	int n = 1;

	while (n * 2 <= H)
		n *= 2;
	if (h < n)
		return (float)exp2(-8.0 * (h + 1) / n);
	return (float)exp2(-4.0 * (2 * (h - n) + 1) / n);
}

static inline void fsg_free(struct fsg_golden *g)
{
	for (int i = 0; i < FSG_N_ARRAYS; i++)
		free(g->a[i].data);
	free(g->tokens);
	free(g->seq_block0);
	free(g->alibi_slope);
	memset(g, 0, sizeof(*g));
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
	{
		char *text = fsg_case_text(m);
		int rc;

		if (!text) {
			free(m);
			snprintf(err, errlen,
				 "%s: no case_yaml: the harnesses check every case key; write the golden again with this fragsim",
				 path);
			return -1;
		}
		rc = fsg_case(g, text, path, err, errlen);
		free(text);
		/* P's quantization (pv.mode int8): the manifest's rounding and
		 * clip, which are the case's quant: */
		p = fsg_json_at(m, "clip");
		g->clip = p ? atoi(p) : 0;
		p = fsg_json_at(m, "rounding");
		g->round_even = p && !strncmp(p, "\"half_to_even\"", 14);
		if (!rc && g->pv_int8 && (g->clip < 1 || g->clip > 127 || !p ||
					  (!g->round_even && strncmp(p, "\"half_away_from_zero\"", 21)))) {
			snprintf(err, errlen, "%s: pv.mode int8 needs the manifest's rounding and clip (1 to 127)",
				 path);
			rc = -1;
		}
		if (!rc && g->pv_int8 && g->v_not_int8) {	/* fragsim refuses it too */
			snprintf(err, errlen,
				 "%s: case key cache.v_dtype is not int8: INT8 PV multiplies the int8 V cache; refusing the golden rather than ignoring the key",
				 path);
			rc = -1;
		}
		if (!rc && g->pv_int8 && g->v_per_channel) {
			snprintf(err, errlen,
				 "%s: case key cache.v_scale is per_channel: this harness's INT8 PV folds a per-token V scale into P; refusing the golden rather than ignoring the key",
				 path);
			rc = -1;
		}
		free(m);
		return rc;
	}
}

/* Load a golden directory; 0, or -1 with err set and g empty. */
static inline int fsg_load(struct fsg_golden *g, const char *dir, char *err,
			   size_t errlen)
{
	static const struct { const char *name, *descr; int ndim; } f[FSG_N_ARRAYS] = {
		{ "q_int8", "|i1", 4 }, { "q_scale", "<f4", 3 },
		{ "k_cache", "|i1", 5 }, { "k_scale", "<f4", 3 },
		{ "block_table", "<i4", 2 }, { "context_lens", "<i4", 1 },
		{ "q_pos", "<i4", 2 }, { "acc_tiles", "<i4", 2 },
		/* pv.mode int8 */
		{ "v_cache", "|i1", 4 }, { "v_scale", "<f4", 3 }, { "pv_tiles", "<i4", 2 },
	};
	char path[1200];
	int nblk = 0;

	memset(g, 0, sizeof(*g));
	if (fsg_manifest(g, dir, err, errlen))
		return -1;
	/* A sparse pool (past 65,536 blocks or 256 MiB of caches, its tables
	 * leaving most of it unnamed: sim/attn/inputs.h) is written as
	 * stored: k_cache's rows are the blocks pool_blocks names, not
	 * blocks 0 .. NB - 1, which these harnesses index. */
	snprintf(path, sizeof(path), "%s/pool_blocks.npy", dir);
	{
		FILE *pf = fopen(path, "rb");

		if (pf) {
			fclose(pf);
			snprintf(err, errlen,
				 "%s: a sparse pool (only the blocks the tables name are stored, rows named by pool_blocks.npy): the harnesses address a dense pool",
				 dir);
			return -1;
		}
	}
	for (int i = 0; i < (g->pv_int8 ? FSG_N_ARRAYS : FSG_N_QK_ARRAYS); i++) {
		/* k_scale's rank follows its granularity (enum fsg_kscale) */
		int ndim = i != 3 ? f[i].ndim : g->kscale == FSG_KS_TENSOR ? 1 :
			   g->kscale == FSG_KS_BLOCK32 ? 4 : 3;

		snprintf(path, sizeof(path), "%s/%s.npy", dir, f[i].name);
		/* per_block32's scales are f16, as the kernel stores them */
		if (fsg_npy(path, i == 3 && g->kscale == FSG_KS_BLOCK32 ? "<f2" : f[i].descr,
			    ndim, &g->a[i], err, errlen)) {
			fsg_free(g);
			return -1;
		}
	}
	if (g->kscale == FSG_KS_BLOCK32) {
		/* widened to f32 once, on the host: the harnesses read floats */
		struct fsg_array *a = &g->a[3];
		float *w = (float *)malloc(a->count * sizeof(float) + 1);

		if (!w) {
			snprintf(err, errlen, "out of memory");
			fsg_free(g);
			return -1;
		}
		for (size_t j = 0; j < a->count; j++) {
			uint16_t h;

			memcpy(&h, (const char *)a->data + 2 * j, 2);
			w[j] = fsg_half(h);
		}
		free(a->data);
		a->data = w;
		memcpy(a->descr, "<f4", 4);
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
	if (g->pv_int8) {
		g->v_cache = (int8_t *)g->a[8].data;
		g->v_scale = (float *)g->a[9].data;
		g->pv_tiles = (int32_t *)g->a[10].data;
		g->n_groups = g->a[10].shape[0];
		if (g->a[8].shape[0] != (size_t)g->NB || g->a[8].shape[1] != (size_t)g->Hkv ||
		    g->a[8].shape[2] != (size_t)g->D || g->a[8].shape[3] != (size_t)g->BS ||
		    g->a[9].shape[0] != (size_t)g->NB || g->a[9].shape[1] != (size_t)g->BS ||
		    g->a[9].shape[2] != (size_t)g->Hkv || g->a[10].shape[1] != FSG_TILE_COLS) {
			snprintf(err, errlen,
				 "%s: v_cache [NB][Hkv][D][BS], v_scale [NB][BS][Hkv] (per token and kv head) and pv_tiles [n][%d] disagree with the golden's shapes",
				 dir, FSG_TILE_COLS);
			fsg_free(g);
			return -1;
		}
	}
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
	    (g->kscale == FSG_KS_TENSOR && g->a[3].count != 1) ||
	    (g->kscale != FSG_KS_TENSOR && (g->a[3].shape[0] != (size_t)g->NB ||
					    g->a[3].shape[1] != (size_t)g->BS ||
					    g->a[3].shape[2] != (size_t)g->Hkv)) ||
	    (g->kscale == FSG_KS_BLOCK32 && g->a[3].shape[3] * 32 != (size_t)g->D) ||
	    g->a[4].shape[0] != (size_t)g->S ||
	    g->a[5].shape[0] != (size_t)g->S) {
		snprintf(err, errlen, "%s: the golden's shapes disagree", dir);
		fsg_free(g);
		return -1;
	}
	g->G = g->Hq / g->Hkv;
	g->tokens = (int32_t *)calloc((size_t)g->S + 1, sizeof(int32_t));
	g->seq_block0 = (int32_t *)calloc((size_t)g->S + 1, sizeof(int32_t));
	g->alibi_slope = (float *)calloc((size_t)g->Hq + 1, sizeof(float));
	if (!g->tokens || !g->seq_block0 || !g->alibi_slope) {
		snprintf(err, errlen, "out of memory");
		fsg_free(g);
		return -1;
	}
	for (int h = 0; h < g->Hq && g->alibi; h++)
		g->alibi_slope[h] = fsg_alibi_slope(h, g->Hq);
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
