/*
 * casefile.c - case files (YAML) into a resolved struct fs_case
 * (casefile.h): the loader. Its keys, types, bounds and defaults are the
 * rows of caseschema.c; this file walks them over the YAML tree and holds
 * the hooks for what no row says (auto values, lists, the mode's
 * sequence keys, kernel: keys of sim/attn/kernel.c, rules between keys).
 *
 * The only place that turns case text into a case. It exists so that
 * sim/, ref/ and every command see one validated struct with no defaults
 * left to guess: what is not in the file is filled in here, once.
 *
 * The walk is the table's order (later rows need earlier results):
 *
 *   top level        fragsim, name, description, isa, mode, route, expect
 *   model            heads, head_dim, softmax_scale (auto -> 1/sqrt(D))
 *   cache            block_size, placement, ... (num_blocks waits)
 *   sequences        context/tokens or history/chunk; sums; then
 *                    num_blocks (auto = needed + spare_blocks, or >=
 *                    needed) and, with placement: table, the block ids
 *   quant, split_k, kernel, data, check, golden
 *
 * In each mapping, unknown and repeated keys are refused first, then
 * the rows are read in table order, so of two bad keys the one whose row
 * comes first is named.
 *
 * Example: with block_size 16 and sequences {context: 4097} and
 * {history: 1000, chunk: 300}, the sequences need 257 + 82 = 339 blocks;
 * num_blocks: auto resolves to 341 (spare_blocks 2), and an explicit
 * num_blocks: 300 fails at its value with "must be at least 339".
 *
 * Invariants of a loaded case: every field is in its documented range;
 * kv_heads divides q_heads; history + tokens == context for every
 * sequence; num_blocks == blocks needed + spare_blocks; with
 * PLACE_TABLE every sequence owns exactly ceil(context / block_size)
 * distinct ids that no other sequence uses, and otherwise blocks is NULL;
 * a tensor with npy set has the default generator fields.
 */
#include "casefile.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "caseschema.h"
#include "readfile.h"
#include "yamldoc.h"

struct case_loader {
	struct ydoc *d;
	struct fs_case *c;
	const char *dir;	/* resolves relative paths; may be NULL */
	struct fs_err *err;
	yaml_node_t *cache;	/* the cache: mapping, for num_blocks; or NULL */
};

/* ---- located accessors on top of yamldoc ---------------------------- */

/* The key node (not the value) of key in mapping map, or NULL. */
static yaml_node_t *key_node(struct case_loader *L, yaml_node_t *map,
			     const char *key)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&L->d->doc, p->key);

		if (k->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)k->data.scalar.value, key) == 0)
			return k;
	}
	return NULL;
}

/* Keep where key path p's value v sits (fs_case.at), for the checks made
 * after the load (case_fail_key). Not the keys of list items (sequences
 * [i]): no such check names one, and 64 sequences would fill the table
 * before pv: and kernel: are parsed. */
static void keep_at(struct case_loader *L, const char *p, const yaml_node_t *v)
{
	struct fs_case *c = L->c;

	if (!v || c->n_at == CASE_AT_MAX || strchr(p, '[') ||
	    strlen(p) >= sizeof(c->at[0].path))
		return;
	snprintf(c->at[c->n_at].path, sizeof(c->at[0].path), "%s", p);
	c->at[c->n_at].line = ydoc_line(v);
	c->at[c->n_at].col = ydoc_col(v);
	c->n_at++;
}

static enum fs_rc missing(struct case_loader *L, yaml_node_t *map,
			  const char *parent, const char *key, const char *why)
{
	char p[YDOC_PATH_MAX];

	ydoc_path(p, sizeof(p), parent, key);
	return ydoc_fail(L->err, L->d, map, p, "missing required key%s", why);
}

/* A scalar spelled word (e.g. "auto"; quoted or not, like enum names)? */
static int is_word(const yaml_node_t *n, const char *word)
{
	return n->type == YAML_SCALAR_NODE &&
	       strcmp((const char *)n->data.scalar.value, word) == 0;
}

/* Integer in [min, max] that also satisfies ok(); one message for both. */
static enum fs_rc parse_int_rule(struct case_loader *L, yaml_node_t *v,
				 const char *p, const struct case_key *k,
				 int64_t *out)
{
	if (!k->ok)
		return ydoc_int(L->d, v, p, (int64_t)k->lo, (int64_t)k->hi, out,
				L->err);
	if (ydoc_int(L->d, v, p, INT64_MIN, INT64_MAX, out, L->err))
		return FS_EINPUT;
	if (*out < k->lo || *out > k->hi || !k->ok(*out))
		return ydoc_fail(L->err, L->d, v, p, "%s", k->rule);
	return FS_OK;
}

/*
 * A number in [lo, hi], or (lo, hi] with lo_open; hi == DBL_MAX means no
 * upper bound. Range errors say the range in words.
 */
static enum fs_rc parse_double(struct case_loader *L, yaml_node_t *v,
			       const char *p, double lo, double hi,
			       int lo_open, double *out)
{
	double x;

	if (ydoc_double(L->d, v, p, -DBL_MAX, DBL_MAX, &x, L->err))
		return FS_EINPUT;
	if ((lo_open ? x <= lo : x < lo) || x > hi) {
		const char *s = (const char *)v->data.scalar.value;

		if (hi == DBL_MAX)
			return ydoc_fail(L->err, L->d, v, p, "must be %s %g, not %s",
					 lo_open ? "greater than" : "at least", lo, s);
		return ydoc_fail(L->err, L->d, v, p, "must be %s %g and at most %g, not %s",
				 lo_open ? "greater than" : "at least", lo, hi, s);
	}
	*out = x;
	return FS_OK;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int case_isa_is_file(const char *isa)
{
	return ends_with(isa, ".yaml") || ends_with(isa, ".yml");
}

/* name, made relative to L->dir unless absolute, into out[len]. */
static enum fs_rc resolve_path(struct case_loader *L, yaml_node_t *v,
			       const char *p, const char *name, char *out,
			       size_t len)
{
	int w;

	if (name[0] == '/' || !L->dir || !L->dir[0] || strcmp(L->dir, ".") == 0)
		w = snprintf(out, len, "%s", name);
	else
		w = snprintf(out, len, "%s/%s", L->dir, name);
	if (w < 0 || (size_t)w >= len)
		return ydoc_fail(L->err, L->d, v, p,
				 "path too long (at most %zu characters after "
				 "resolving against the case directory)", len - 1);
	return FS_OK;
}

/* ---- the generic parse ---------------------------------------------- */

static enum fs_rc parse_map(struct case_loader *L, yaml_node_t *map,
			    const char *rows, const char *p, void *base);

/* One row's value v (present) by its type, into base. */
static enum fs_rc parse_value(struct case_loader *L, const struct case_key *k,
			      yaml_node_t *v, const char *p, void *base)
{
	void *f = caseschema_field(base, k);
	int64_t i;
	int x;

	switch (k->type) {
	case KEY_INT:
		if (parse_int_rule(L, v, p, k, &i))
			return FS_EINPUT;
		x = (int)i;
		memcpy(f, &x, sizeof(x));
		return FS_OK;
	case KEY_U64:
		if (ydoc_int(L->d, v, p, (int64_t)k->lo, INT64_MAX, &i, L->err))
			return FS_EINPUT;
		*(uint64_t *)f = (uint64_t)i;
		return FS_OK;
	case KEY_DOUBLE:
		return parse_double(L, v, p, k->lo, k->hi, !!(k->flags & KEY_LO_OPEN),
				    (double *)f);
	case KEY_BOOL:
		return ydoc_bool(L->d, v, p, (int *)f, L->err);
	case KEY_ENUM:
		if (ydoc_enum(L->d, v, p, k->names, &x, L->err))
			return FS_EINPUT;
		memcpy(f, &x, sizeof(x));
		return FS_OK;
	case KEY_STR:
		return ydoc_str(L->d, v, p, (char *)f, k->size, L->err);
	case KEY_SECTION:	/* parse_key's */
	case KEY_HOOK:		/* the row's parse */
		break;
	}
	assert(0);
	return FS_EINTERNAL;
}

/* One row under mapping map (path p is parent + its name). */
static enum fs_rc parse_key(struct case_loader *L, const struct case_key *k,
			    yaml_node_t *map, const char *parent, void *base)
{
	yaml_node_t *v = map ? ydoc_get(L->d, map, caseschema_name(k)) : NULL;
	char p[YDOC_PATH_MAX];
	enum fs_rc rc;

	ydoc_path(p, sizeof(p), parent, caseschema_name(k));
	keep_at(L, p, v);
	if (k->parse) {
		rc = k->parse(L, k, map, v, p, base);
		if (rc)
			return rc;	/* or FS_ENOMEM */
	} else if (k->type == KEY_SECTION) {
		if (v && parse_map(L, v, k->path, p, base))
			return FS_EINPUT;
	} else if (!v) {
		if (k->required)
			return missing(L, map, parent, caseschema_name(k), k->required);
		return FS_OK;
	} else if (parse_value(L, k, v, p, base)) {
		return FS_EINPUT;
	}
	/* a section's after runs whether or not it is given */
	if (k->after && (v || k->type == KEY_SECTION))
		return k->after(L, k, map, v, p, base);
	return FS_OK;
}

/*
 * Mapping map against the rows under `rows` (the table's parent path):
 * unknown and repeated keys first, then each row in table order. p is
 * the mapping's path in messages ("data.q" for the rows of "data.*").
 */
static enum fs_rc parse_map(struct case_loader *L, yaml_node_t *map,
			    const char *rows, const char *p, void *base)
{
	const char *allowed[CASESCHEMA_MAX_CHILDREN + 1];
	enum fs_rc rc;

	caseschema_names(rows, allowed);
	if (ydoc_check_map(L->d, map, p, allowed, L->err))
		return FS_EINPUT;
	for (const struct case_key *k = caseschema_next(NULL, rows); k;
	     k = caseschema_next(k, rows))
		if ((rc = parse_key(L, k, map, p, base)))
			return rc;
	return FS_OK;
}

/* ---- hooks: what the rows cannot say -------------------------------- */

static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > 127)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' ||
		      *s == '-'))
			return 0;
	return 1;
}

enum fs_rc casefile_parse_version(struct case_loader *L,
				  const struct case_key *k, yaml_node_t *map,
				  yaml_node_t *v, const char *p, void *base)
{
	int64_t ver;

	(void)base;
	if (!v)
		return missing(L, map, "", k->path, k->required);
	if (ydoc_int(L->d, v, p, INT64_MIN, INT64_MAX, &ver, L->err))
		return FS_EINPUT;
	if (ver != 1)
		return ydoc_fail(L->err, L->d, v, p,
				 "unsupported schema version %lld (this fragsim reads version 1)",
				 (long long)ver);
	return FS_OK;
}

enum fs_rc casefile_after_name(struct case_loader *L, const struct case_key *k,
			       yaml_node_t *map, yaml_node_t *v, const char *p,
			       void *base)
{
	(void)k;
	(void)map;
	if (!name_ok(((struct fs_case *)base)->name))
		return ydoc_fail(L->err, L->d, v, p,
				 "must be 1 to 127 characters from A-Z a-z 0-9 . _ -");
	return FS_OK;
}

/* isa: a builtin name as written, or a profile file resolved. */
enum fs_rc casefile_parse_isa(struct case_loader *L, const struct case_key *k,
			      yaml_node_t *map, yaml_node_t *v, const char *p,
			      void *base)
{
	char tmp[CASE_PATH_MAX];
	char *isa = caseschema_field(base, k);

	(void)map;
	if (!v)
		return FS_OK;
	if (ydoc_str(L->d, v, p, tmp, sizeof(tmp), L->err))
		return FS_EINPUT;
	if (!tmp[0])
		return ydoc_fail(L->err, L->d, v, p,
				 "must name a builtin profile or a profile .yaml file");
	if (case_isa_is_file(tmp))
		return resolve_path(L, v, p, tmp, isa, k->size);
	memcpy(isa, tmp, strlen(tmp) + 1);
	return FS_OK;
}

enum fs_rc casefile_parse_softmax_scale(struct case_loader *L,
					const struct case_key *k,
					yaml_node_t *map, yaml_node_t *v,
					const char *p, void *base)
{
	struct fs_case *c = base;
	double s;

	(void)k;
	(void)map;
	if (!v || is_word(v, "auto"))
		return FS_OK;
	if (ydoc_double(L->d, v, p, -DBL_MAX, DBL_MAX, &s, L->err))
		return FS_EINPUT;
	if (!(s > 0))
		return ydoc_fail(L->err, L->d, v, p,
				 "must be auto or a number greater than 0, not %s",
				 (const char *)v->data.scalar.value);
	c->softmax_scale_auto = 0;
	c->softmax_scale = s;
	return FS_OK;
}

/* The kernel holds the cap as an f32: far from 1 it nears f32's
 * underflow or overflow, where cap * tanh(s / cap) stops meaning it. */
enum fs_rc casefile_after_soft_cap(struct case_loader *L,
				   const struct case_key *k, yaml_node_t *map,
				   yaml_node_t *v, const char *p, void *base)
{
	double cap = *(double *)caseschema_field(base, k);

	(void)map;
	if (cap > 0 && (cap < 1e-6 || cap > 1e6))
		return ydoc_fail(L->err, L->d, v, p,
				 "must be 0 (none) or between 1e-06 and 1e+06, not %s",
				 (const char *)v->data.scalar.value);
	return FS_OK;
}

/* model: (given or not) kv_heads divides q_heads; auto softmax_scale. */
enum fs_rc casefile_after_model(struct case_loader *L, const struct case_key *k,
				yaml_node_t *map, yaml_node_t *m, const char *p,
				void *base)
{
	struct fs_case *c = base;
	yaml_node_t *v;

	(void)k;
	(void)map;
	(void)p;
	if (c->q_heads % c->kv_heads) {
		/* Defaults divide, so model is given; blame kv_heads if it is. */
		v = ydoc_get(L->d, m, "kv_heads");
		if (v)
			return ydoc_fail(L->err, L->d, v, "model.kv_heads",
					 "must divide q_heads (%d), not %d",
					 c->q_heads, c->kv_heads);
		return ydoc_fail(L->err, L->d, ydoc_get(L->d, m, "q_heads"),
				 "model.q_heads",
				 "must be a multiple of kv_heads (%d, the default), not %d",
				 c->kv_heads, c->q_heads);
	}
	if (c->softmax_scale_auto)
		c->softmax_scale = 1.0 / sqrt((double)c->head_dim);
	return FS_OK;
}

/* num_blocks waits for the sequences (resolve_num_blocks): keep cache:. */
enum fs_rc casefile_parse_num_blocks(struct case_loader *L,
				     const struct case_key *k,
				     yaml_node_t *cache, yaml_node_t *v,
				     const char *p, void *base)
{
	(void)k;
	(void)v;
	(void)p;
	(void)base;
	L->cache = cache;
	return FS_OK;
}

enum fs_rc casefile_after_spare_blocks(struct case_loader *L,
				       const struct case_key *k,
				       yaml_node_t *cache, yaml_node_t *v,
				       const char *p, void *base)
{
	yaml_node_t *nb = ydoc_get(L->d, cache, "num_blocks");

	(void)v;
	(void)base;
	if (nb && !is_word(nb, "auto"))
		return ydoc_fail(L->err, L->d, key_node(L, cache, caseschema_name(k)), p,
				 "only allowed with num_blocks: auto (num_blocks "
				 "is given at line %d)", ydoc_line(nb));
	return FS_OK;
}

enum fs_rc casefile_after_k_scale(struct case_loader *L,
				  const struct case_key *k, yaml_node_t *map,
				  yaml_node_t *v, const char *p, void *base)
{
	struct fs_case *c = base;

	(void)k;
	(void)map;
	if (c->k_scale == KSCALE_PER_BLOCK32 && c->head_dim % 32)
		return ydoc_fail(L->err, L->d, v, p,
				 "per_block32 needs a head_dim that is a multiple "
				 "of 32 (one fp16 scale per 32 elements), not %d",
				 c->head_dim);
	return FS_OK;
}

enum fs_rc casefile_after_v_dtype(struct case_loader *L,
				  const struct case_key *k, yaml_node_t *map,
				  yaml_node_t *v, const char *p, void *base)
{
	struct fs_case *c = base;

	(void)k;
	(void)map;
	if (case_v_blocks(c->v_dtype) && c->head_dim % 32)
		return ydoc_fail(L->err, L->d, v, p,
				 "%s needs a head_dim that is a multiple of 32 (one "
				 "fp16 scale per 32 elements), not %d",
				 c->v_dtype == VDT_Q8_0 ? "q8_0" : "q4_0", c->head_dim);
	return FS_OK;
}

/*
 * v_scale picks the scales of the int8 V cache; bf16 and f32 V have none,
 * and q8_0 and q4_0 carry their own fp16 scale per 32 dims (their format's,
 * not quant:'s): the key is refused with them, whatever its value.
 */
enum fs_rc casefile_after_v_scale(struct case_loader *L,
				  const struct case_key *k, yaml_node_t *map,
				  yaml_node_t *v, const char *p, void *base)
{
	struct fs_case *c = base;

	(void)k;
	(void)map;
	if (v && c->v_dtype != VDT_INT8)
		return ydoc_fail(L->err, L->d, v, p,
				 "applies to v_dtype int8 only; v_dtype %s %s",
				 c->v_dtype == VDT_BF16 ? "bf16" : c->v_dtype == VDT_F32 ? "f32" :
				 c->v_dtype == VDT_Q8_0 ? "q8_0" : "q4_0",
				 case_v_blocks(c->v_dtype) ?
				 "has its own fp16 scale per 32 dims of a token" :
				 "is stored unquantized, with no scale");
	return FS_OK;
}

enum fs_rc casefile_after_block_stride(struct case_loader *L,
				       const struct case_key *k, yaml_node_t *map,
				       yaml_node_t *v, const char *p, void *base)
{
	struct fs_case *c = base;
	long dense = (long)c->kv_heads * c->head_dim * c->block_size;

	(void)k;
	(void)map;
	if (v && c->block_stride != 0 && c->block_stride < dense)
		return ydoc_fail(L->err, L->d, v, p,
				 "must be 0 or at least one block's %ld elements "
				 "(kv_heads %d x head_dim %d x block_size %d), not %d",
				 dense, c->kv_heads, c->head_dim, c->block_size,
				 c->block_stride);
	return FS_OK;
}

enum fs_rc casefile_after_window_blocks(struct case_loader *L,
					const struct case_key *k, yaml_node_t *map,
					yaml_node_t *v, const char *p, void *base)
{
	struct fs_case *c = base;

	(void)k;
	(void)map;
	if (v && c->window_free && c->sliding_window <= 0)
		return ydoc_fail(L->err, L->d, v, p,
				 "free needs a sliding window (model.sliding_window), "
				 "and the case has none");
	return FS_OK;
}

/* One sequence's sizes (not its block list). */
static enum fs_rc load_seq(struct case_loader *L, yaml_node_t *sn, int s)
{
	static const char *const decode_only[] = { "context", "tokens", NULL };
	static const char *const prefill_only[] = { "history", "chunk", NULL };
	const struct case_key *rk[] = {
		caseschema_find("sequences.context"), caseschema_find("sequences.tokens"),
		caseschema_find("sequences.history"), caseschema_find("sequences.chunk"),
	};
	const char *allowed[CASESCHEMA_MAX_CHILDREN + 1];
	struct fs_case *c = L->c;
	struct case_seq *q = &c->seqs[s];
	int decode = c->mode == MODE_DECODE;
	const char *const *wrong = decode ? prefill_only : decode_only;
	char p[YDOC_PATH_MAX], kp[YDOC_PATH_MAX];
	yaml_node_t *k;

	ydoc_path_index(p, sizeof(p), "sequences", s);
	caseschema_names("sequences", allowed);
	if (ydoc_check_map(L->d, sn, p, allowed, L->err))
		return FS_EINPUT;
	for (int i = 0; wrong[i]; i++) {
		k = key_node(L, sn, wrong[i]);
		if (k) {
			ydoc_path(kp, sizeof(kp), p, wrong[i]);
			return ydoc_fail(L->err, L->d, k, kp,
					 decode ? "not a decode key (decode sequences take "
						  "context and tokens)"
						: "not a prefill key (prefill sequences take "
						  "history and chunk)");
		}
	}
	if (decode) {
		struct case_key tokens = *rk[1];

		if (parse_key(L, rk[0], sn, p, q))
			return FS_EINPUT;
		/* context 0: a padded batch entry, one query row that sees
		 * no key (q_pos -1); its output is 0 */
		caseschema_default(rk[1], q);
		tokens.hi = q->context < 1 ? 1 :
			    q->context < CASE_MAX_TOKENS ? q->context : CASE_MAX_TOKENS;
		if (parse_key(L, &tokens, sn, p, q))
			return FS_EINPUT;
		q->history = q->context - q->tokens;
	} else {
		if (!ydoc_get(L->d, sn, "history"))
			return missing(L, sn, p, "history", "");
		if (!ydoc_get(L->d, sn, "chunk"))
			return missing(L, sn, p, "chunk", "");
		if (parse_key(L, rk[2], sn, p, q) || parse_key(L, rk[3], sn, p, q))
			return FS_EINPUT;
		if (q->history + q->tokens > CASE_MAX_CONTEXT)
			return ydoc_fail(L->err, L->d, sn, p,
					 "history + chunk is %d keys, more than %d",
					 q->history + q->tokens, CASE_MAX_CONTEXT);
		q->context = q->history + q->tokens;
	}
	k = key_node(L, sn, "blocks");
	if (c->placement == PLACE_TABLE && !k)
		return missing(L, sn, p, "blocks", " (cache.placement is table)");
	if (c->placement != PLACE_TABLE && k) {
		ydoc_path(kp, sizeof(kp), p, "blocks");
		return ydoc_fail(L->err, L->d, k, kp,
				 "only allowed with cache.placement: table (placement is %s)",
				 caseschema_find("cache.placement")->names[c->placement]);
	}
	return FS_OK;
}

/* num_blocks: auto = needed + spare_blocks, or an integer >= needed. */
static enum fs_rc resolve_num_blocks(struct case_loader *L, yaml_node_t *top)
{
	struct fs_case *c = L->c;
	int needed = case_blocks_needed(c);
	/* a pool holds a block even when no sequence has a key (every
	 * context 0): an empty pool cannot be allocated */
	int least = needed > 0 ? needed : 1;
	yaml_node_t *cache = L->cache;
	yaml_node_t *v = cache ? ydoc_get(L->d, cache, "num_blocks") : NULL;
	int64_t nb;

	if (!v || is_word(v, "auto")) {
		nb = (int64_t)needed + c->spare_blocks;
		if (nb < least)
			nb = least;
		if (nb > CASE_MAX_BLOCKS)
			return ydoc_fail(L->err, L->d, v ? v : cache ? cache : top,
					 "cache.num_blocks",
					 "auto gives %lld blocks (%d needed + %d spare), "
					 "more than %d", (long long)nb, needed,
					 c->spare_blocks, CASE_MAX_BLOCKS);
	} else {
		if (ydoc_int(L->d, v, "cache.num_blocks", INT64_MIN, INT64_MAX,
			     &nb, L->err))
			return FS_EINPUT;
		if (nb < least)
			return ydoc_fail(L->err, L->d, v, "cache.num_blocks",
					 needed ? "must be at least %d (the blocks the sequences "
						  "need), not %lld" :
					 "must be at least %d (a pool holds a block, though "
					 "no sequence has a key), not %lld",
					 least, (long long)nb);
		if (nb > CASE_MAX_BLOCKS)
			return ydoc_fail(L->err, L->d, v, "cache.num_blocks",
					 "must be at most %d, not %lld",
					 CASE_MAX_BLOCKS, (long long)nb);
	}
	c->num_blocks = (int)nb;
	c->spare_blocks = c->num_blocks - needed;
	return FS_OK;
}

/*
 * placement: table: every sequence's block list. owner[b] = seq + 1.
 * Out of memory (FS_ENOMEM) can only come from here.
 */
static enum fs_rc load_tables(struct case_loader *L, yaml_node_t *seqs)
{
	struct fs_case *c = L->c;
	unsigned char *owner;
	enum fs_rc rc = FS_OK;

	if (c->placement != PLACE_TABLE)
		return FS_OK;
	owner = calloc((size_t)c->num_blocks, 1);
	if (!owner)
		return fs_nomem(L->err, "the block owners", (size_t)c->num_blocks);
	for (int s = 0; s < c->n_seqs && !rc; s++) {
		yaml_node_t *sn = ydoc_seq_item(L->d, seqs, s);
		yaml_node_t *v = ydoc_get(L->d, sn, "blocks");
		struct case_seq *q = &c->seqs[s];
		int want = case_blocks_of(c, s), n = ydoc_seq_len(v);
		char p[YDOC_PATH_MAX], ip[YDOC_PATH_MAX];

		snprintf(p, sizeof(p), "sequences[%d].blocks", s);
		if (n < 0) {
			rc = ydoc_fail(L->err, L->d, v, p, "expected a list of block ids");
			break;
		}
		if (n != want) {
			rc = ydoc_fail(L->err, L->d, v, p,
				       "must list exactly %d block ids "
				       "(ceil(context %d / block_size %d)), found %d",
				       want, q->context, c->block_size, n);
			break;
		}
		q->blocks = malloc((size_t)n * sizeof(*q->blocks));
		if (!q->blocks) {
			rc = fs_nomem(L->err, "a block list", (size_t)n * sizeof(*q->blocks));
			break;
		}
		q->n_blocks = n;
		for (int i = 0; i < n; i++) {
			yaml_node_t *item = ydoc_seq_item(L->d, v, i);
			int64_t b;

			ydoc_path_index(ip, sizeof(ip), p, i);
			rc = ydoc_int(L->d, item, ip, 0, c->num_blocks - 1, &b,
				      L->err);
			if (rc)
				break;
			if (owner[b] == s + 1) {
				rc = ydoc_fail(L->err, L->d, item, ip,
					       "block %lld is listed twice in this sequence",
					       (long long)b);
				break;
			}
			if (owner[b]) {
				rc = ydoc_fail(L->err, L->d, item, ip,
					       "block %lld is already used by sequences[%d]",
					       (long long)b, owner[b] - 1);
				break;
			}
			owner[b] = (unsigned char)(s + 1);
			q->blocks[i] = (int)b;
		}
	}
	free(owner);
	return rc;
}

/* sequences: each item, the sums, then num_blocks and the block tables. */
enum fs_rc casefile_parse_sequences(struct case_loader *L,
				    const struct case_key *k, yaml_node_t *top,
				    yaml_node_t *v, const char *p, void *base)
{
	struct fs_case *c = base;
	int64_t keys = 0, tokens = 0;
	int n;

	(void)k;
	if (!v)
		return missing(L, top, "", p, "");
	n = ydoc_seq_len(v);
	if (n < 0)
		return ydoc_fail(L->err, L->d, v, p, "expected a list of sequences");
	if (n < 1 || n > CASE_MAX_SEQS)
		return ydoc_fail(L->err, L->d, v, p,
				 "must list between 1 and %d sequences, found %d",
				 CASE_MAX_SEQS, n);
	c->n_seqs = n;
	for (int s = 0; s < n; s++) {
		if (load_seq(L, ydoc_seq_item(L->d, v, s), s))
			return FS_EINPUT;
		keys += c->seqs[s].context;
		tokens += c->seqs[s].tokens;
	}
	if (keys > CASE_MAX_KEYS_TOTAL)
		return ydoc_fail(L->err, L->d, v, p,
				 "contexts add up to %lld keys, more than %d",
				 (long long)keys, CASE_MAX_KEYS_TOTAL);
	/* prefill chunks of 0 (padded batch entries) have no rows; a case
	 * of nothing but those would emulate nothing */
	if (tokens == 0)
		return ydoc_fail(L->err, L->d, v, p,
				 "no sequence has a query token (every chunk is 0)");
	if (tokens > CASE_MAX_QUERY_TOTAL)
		return ydoc_fail(L->err, L->d, v, p,
				 "query tokens add up to %lld, more than %d",
				 (long long)tokens, CASE_MAX_QUERY_TOTAL);
	if (resolve_num_blocks(L, top))
		return FS_EINPUT;
	return load_tables(L, v);
}

/* The emulation holds at most CASE_MAX_SEGMENTS per context: refuse
 * here, at the key, not after the inputs are built. */
enum fs_rc casefile_after_segment(struct case_loader *L,
				  const struct case_key *k, yaml_node_t *map,
				  yaml_node_t *v, const char *p, void *base)
{
	struct fs_case *c = base;

	(void)k;
	(void)map;
	for (int s = 0; c->segment > 0 && s < c->n_seqs; s++)
		if (case_segments_of(c, s) > CASE_MAX_SEGMENTS)
			return ydoc_fail(L->err, L->d, v, p,
					 "%d cuts sequences[%d] (context %d) into %d "
					 "segments, more than %d; use at least %d",
					 c->segment, s, c->seqs[s].context,
					 case_segments_of(c, s), CASE_MAX_SEGMENTS,
					 (c->seqs[s].context + CASE_MAX_SEGMENTS - 1) /
						 CASE_MAX_SEGMENTS);
	return FS_OK;
}

/* Prefill rows are query tokens: packed would change nothing. */
enum fs_rc casefile_after_decode_rows(struct case_loader *L,
				      const struct case_key *k,
				      yaml_node_t *map, yaml_node_t *v,
				      const char *p, void *base)
{
	struct fs_case *c = base;

	(void)k;
	(void)map;
	if (c->decode_rows != ROWS_REPLICATED && c->mode != MODE_DECODE)
		return ydoc_fail(L->err, L->d, v, p,
				 "packed applies to decode only (prefill rows are "
				 "query tokens)");
	return FS_OK;
}

/*
 * pv: int8 multiplies the INT8 V cache through the instruction, so it
 * needs int8 V; regroup says how int8's P reaches the instruction, and
 * means nothing to f32 PV.
 */
enum fs_rc casefile_after_pv(struct case_loader *L, const struct case_key *k,
			     yaml_node_t *map, yaml_node_t *v, const char *p,
			     void *base)
{
	struct fs_case *c = base;
	char q[YDOC_PATH_MAX];

	(void)k;
	(void)map;
	if (!v)
		return FS_OK;
	if (c->pv_mode == PV_INT8 && c->v_dtype != VDT_INT8) {
		ydoc_path(q, sizeof(q), p, "mode");
		return ydoc_fail(L->err, L->d, ydoc_get(L->d, v, "mode"), q,
				 "int8 multiplies the INT8 V cache through the "
				 "instruction; cache.v_dtype is %s, not int8",
				 c->v_dtype == VDT_BF16 ? "bf16" : c->v_dtype == VDT_F32 ? "f32" :
				 c->v_dtype == VDT_Q8_0 ? "q8_0" : "q4_0");
	}
	if (c->pv_mode == PV_INT8 && (c->alibi || c->soft_cap > 0 ||
				      c->k_scale == KSCALE_PER_BLOCK32)) {
		ydoc_path(q, sizeof(q), p, "mode");
		return ydoc_fail(L->err, L->d, ydoc_get(L->d, v, "mode"), q,
				 "int8 is the INT8 path's second product; it refuses %s (as the route does)",
				 c->alibi ? "model.alibi" : c->soft_cap > 0 ? "model.soft_cap" :
				 "cache.k_scale per_block32 (its reference needs per-token K scales)");
	}
	if (c->pv_mode == PV_F32 && ydoc_get(L->d, v, "regroup")) {
		ydoc_path(q, sizeof(q), p, "regroup");
		return ydoc_fail(L->err, L->d, ydoc_get(L->d, v, "regroup"), q,
				 "applies to pv.mode int8 only (f32 PV reads P "
				 "from the workspace, not through the instruction)");
	}
	return FS_OK;
}

/*
 * A threshold is measured over the rows that see a key. A decode case
 * whose every context is 0 has none (prefill rows see their own key),
 * so there a threshold could only fail "not measured": refuse it at
 * its key instead of accepting what cannot be checked.
 */
enum fs_rc casefile_after_check(struct case_loader *L,
				const struct case_key *k, yaml_node_t *map,
				yaml_node_t *v, const char *p, void *base)
{
	struct fs_case *c = base;
	char q[YDOC_PATH_MAX];

	(void)map;
	if (!v || c->mode != MODE_DECODE)
		return FS_OK;
	for (int s = 0; s < c->n_seqs; s++)
		if (c->seqs[s].context > 0)
			return FS_OK;
	for (const struct case_key *t = caseschema_next(NULL, k->path); t;
	     t = caseschema_next(t, k->path)) {
		yaml_node_t *tv = ydoc_get(L->d, v, caseschema_name(t));

		if (!tv || !(t->flags & KEY_NAN))
			continue;
		ydoc_path(q, sizeof(q), p, caseschema_name(t));
		return ydoc_fail(L->err, L->d, tv, q,
				 "nothing to measure: no query of the case sees a "
				 "key (every context is 0), so a threshold could "
				 "only fail; leave it out or give a sequence a key");
	}
	return FS_OK;
}

/*
 * kernel: one key per bug class (sim/attn/kernel.h's table), each spelled as
 * the correct value or the bug's; head_dim_loaded also takes a number.
 * And the rows under "kernel" (decode_rows), parsed first.
 */
enum fs_rc casefile_parse_kernel(struct case_loader *L,
				 const struct case_key *k, yaml_node_t *top,
				 yaml_node_t *m, const char *p, void *base)
{
	const char *keys[BUG_COUNT + CASESCHEMA_MAX_CHILDREN + 1];
	const char *vals[KERNEL_MAX_VALUES + 1];
	enum kern_bug as0[KERNEL_MAX_VALUES + 1];
	struct fs_case *c = base;
	yaml_node_t *v;
	int nk = 0;

	(void)top;
	if (!m)
		return FS_OK;
	for (int b = 0; b < BUG_COUNT; b++)
		if (kernel_key_values((enum kern_bug)b, vals, as0))
			keys[nk++] = kernel_bug((enum kern_bug)b)->key;
	caseschema_names(k->path, keys + nk);
	if (ydoc_check_map(L->d, m, p, keys, L->err))
		return FS_EINPUT;
	for (const struct case_key *r = caseschema_next(NULL, k->path); r;
	     r = caseschema_next(r, k->path))
		if (parse_key(L, r, m, p, base))
			return FS_EINPUT;
	for (int b = 0; b < BUG_COUNT; b++) {
		const struct kern_bug_info *bi = kernel_bug((enum kern_bug)b);
		const char *names[KERNEL_MAX_VALUES + 1];
		enum kern_bug as[KERNEL_MAX_VALUES + 1];
		char kp[YDOC_PATH_MAX];
		const char *s;
		int x = 0;

		/* One key may name several classes (page_walk: none, identity). */
		if (!kernel_key_values((enum kern_bug)b, names, as))
			continue;
		v = ydoc_get(L->d, m, bi->key);
		if (!v)
			continue;
		ydoc_path(kp, sizeof(kp), p, bi->key);
		keep_at(L, kp, v);
		if (b == BUG_HEAD_DIM_LOADED && (s = ydoc_scalar(L->d, v, kp, NULL)) &&
		    s[0] >= '0' && s[0] <= '9') {
			int64_t n;

			if (ydoc_int(L->d, v, kp, 1, c->head_dim, &n, L->err))
				return FS_EINPUT;
			c->kernel.head_dim_loaded = n == c->head_dim ? 0 : (int)n;
			continue;
		}
		if (ydoc_enum(L->d, v, kp, names, &x, L->err))
			return FS_EINPUT;
		if (x && kernel_plant(&c->kernel, as[x], c->head_dim))
			return ydoc_fail(L->err, L->d, v, kp,
					 "cannot be planted with head_dim %d", c->head_dim);
	}
	return FS_OK;
}

/*
 * data.q, data.k, data.v: the rows of "data.*" on that tensor. npy goes
 * first: with a file, no generator key may be given.
 */
enum fs_rc casefile_parse_tensor(struct case_loader *L,
				 const struct case_key *k, yaml_node_t *data,
				 yaml_node_t *m, const char *p, void *base)
{
	const char *allowed[CASESCHEMA_MAX_CHILDREN + 1];
	struct case_tensor *t = caseschema_field(base, k);
	const struct case_key *npy = caseschema_find("data.*.npy");

	(void)data;
	if (!m)
		return FS_OK;
	caseschema_names(k->tmpl, allowed);
	if (ydoc_check_map(L->d, m, p, allowed, L->err))
		return FS_EINPUT;
	if (parse_key(L, npy, m, p, t))
		return FS_EINPUT;
	for (const struct case_key *r = caseschema_next(NULL, k->tmpl); r;
	     r = caseschema_next(r, k->tmpl))
		if (r != npy && parse_key(L, r, m, p, t))
			return FS_EINPUT;
	return FS_OK;
}

enum fs_rc casefile_parse_npy(struct case_loader *L, const struct case_key *k,
			      yaml_node_t *m, yaml_node_t *v, const char *p,
			      void *base)
{
	struct case_tensor *t = base;
	char tmp[CASE_PATH_MAX], kp[YDOC_PATH_MAX], parent[YDOC_PATH_MAX];

	if (!v)
		return FS_OK;
	if (ydoc_str(L->d, v, p, tmp, sizeof(tmp), L->err))
		return FS_EINPUT;
	if (!tmp[0])
		return FS_OK;
	snprintf(parent, sizeof(parent), "%.*s", (int)(strrchr(p, '.') - p), p);
	/* Every other key of the tensor describes a generator. */
	for (const struct case_key *r = caseschema_next(NULL, "data.*"); r;
	     r = caseschema_next(r, "data.*")) {
		yaml_node_t *kn;

		if (r == k || !(kn = key_node(L, m, caseschema_name(r))))
			continue;
		ydoc_path(kp, sizeof(kp), parent, caseschema_name(r));
		return ydoc_fail(L->err, L->d, kn, kp,
				 "cannot be combined with npy (the tensor is read "
				 "from the file)");
	}
	if (resolve_path(L, v, p, tmp, t->npy, sizeof(t->npy)))
		return FS_EINPUT;
	/* the generator rows find nothing to parse: npy excludes them */
	return FS_OK;
}

enum fs_rc casefile_parse_outliers(struct case_loader *L,
				   const struct case_key *k, yaml_node_t *m,
				   yaml_node_t *v, const char *p, void *base)
{
	struct case_tensor *t = base;
	int n;

	(void)k;
	(void)m;
	if (!v)
		return FS_OK;
	n = ydoc_seq_len(v);
	if (n < 0)
		return ydoc_fail(L->err, L->d, v, p,
				 "expected a list of head-dim channels");
	if (n > CASE_MAX_OUTLIERS)
		return ydoc_fail(L->err, L->d, v, p, "at most %d channels, found %d",
				 CASE_MAX_OUTLIERS, n);
	for (int i = 0; i < n; i++) {
		yaml_node_t *item = ydoc_seq_item(L->d, v, i);
		char ip[YDOC_PATH_MAX];
		int64_t ch;

		ydoc_path_index(ip, sizeof(ip), p, i);
		if (ydoc_int(L->d, item, ip, 0, L->c->head_dim - 1, &ch, L->err))
			return FS_EINPUT;
		for (int j = 0; j < i; j++)
			if (t->outliers[j] == ch)
				return ydoc_fail(L->err, L->d, item, ip,
						 "channel %lld is listed twice",
						 (long long)ch);
		t->outliers[i] = (int)ch;
	}
	t->n_outliers = n;
	return FS_OK;
}

enum fs_rc casefile_parse_golden(struct case_loader *L,
				 const struct case_key *k, yaml_node_t *top,
				 yaml_node_t *v, const char *p, void *base)
{
	const char *const *golden_names = k->names;
	struct fs_case *c = base;
	int n, x;

	(void)top;
	if (!v)
		return FS_OK;
	if (is_word(v, "all")) {
		for (n = 0; golden_names[n]; n++)
			c->golden |= 1u << n;
		return FS_OK;
	}
	n = ydoc_seq_len(v);
	if (n < 0)
		return ydoc_fail(L->err, L->d, v, p,
				 "must be a list of inputs, acc, scores, out, "
				 "splitk, or the word all");
	c->golden = 0;
	for (int i = 0; i < n; i++) {
		yaml_node_t *item = ydoc_seq_item(L->d, v, i);
		char ip[YDOC_PATH_MAX];

		ydoc_path_index(ip, sizeof(ip), p, i);
		if (ydoc_enum(L->d, item, ip, golden_names, &x, L->err))
			return FS_EINPUT;
		if (c->golden & (1u << x))
			return ydoc_fail(L->err, L->d, item, ip,
					 "'%s' is listed twice", golden_names[x]);
		c->golden |= 1u << x;
	}
	return FS_OK;
}

/* ---- loading -------------------------------------------------------- */

enum fs_rc case_load_text(const char *text, size_t len, const char *origin,
			  const char *dir, struct fs_case *c,
			  struct fs_err *err)
{
	struct ydoc d;
	struct case_loader L = { &d, c, dir, err, NULL };
	enum fs_rc rc;

	caseschema_defaults(c);
	if (len > CASE_MAX_FILE_BYTES)
		return fs_budget(err, origin, "the case file", (double)len,
				 CASE_MAX_FILE_BYTES, "CASE_MAX_FILE_BYTES in lib/casefile.h; "
				 "give large tensors as data: npy files");
	rc = ydoc_load(&d, text, len, origin, err);
	if (rc) {
		memset(c, 0, sizeof(*c));
		return rc;
	}
	snprintf(c->file, sizeof(c->file), "%s", origin);
	rc = parse_map(&L, ydoc_root(&d), "", "", c);
	/* Parents pass a failure up as FS_EINPUT; the kind is the one its
	 * origin recorded in err (out of memory is not bad input). */
	if (rc)
		rc = fs_err_rc(err, rc);
	ydoc_free(&d);
	if (rc) {
		case_free(c);
		memset(c, 0, sizeof(*c));
	}
	return rc;
}

enum fs_rc case_load_file(const char *path, struct fs_case *c,
			  struct fs_err *err)
{
	char *buf, dir[CASE_PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t len;
	enum fs_rc rc;

	memset(c, 0, sizeof(*c));
	rc = readfile(path, CASE_MAX_FILE_BYTES, &buf, &len, err);
	if (rc)
		return rc;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	rc = case_load_text(buf, len, path, dir, c, err);
	free(buf);
	return rc;
}
