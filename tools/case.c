/*
 * case.c - case files into a resolved struct fs_case, and back (case.h).
 *
 * The only place that turns case text into a case. It exists so that
 * sim/, ref/ and every command see one validated struct with no defaults
 * left to guess: what is not in the file is filled in here, once.
 *
 * The walk, in order (later steps need earlier results):
 *
 *   set_defaults     the whole struct, from the schema's defaults
 *   top level        fragsim, name, description, isa, mode, route, expect
 *   model            heads, head_dim, softmax_scale (auto -> 1/sqrt(D))
 *   cache            block_size, placement, ... (num_blocks waits)
 *   sequences        context/tokens or history/chunk; sums
 *   num_blocks       auto = needed + spare_blocks, or >= needed
 *   block tables     placement: table only: ids in [0, num_blocks), unique
 *   quant, split_k, kernel, data, check, golden
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
#include "case.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "readfile.h"
#include "yamldoc.h"

static const char *const top_keys[] = {
	"fragsim", "name", "description", "isa", "mode", "route", "expect", "model",
	"cache", "sequences", "quant", "split_k", "kernel", "data", "check",
	"golden", NULL,
};
/* kernel: keys that are layouts, not bugs (the bug keys: sim/kernel.c). */
static const char *const layout_keys[] = { "decode_rows", NULL };
static const char *const model_keys[] = {
	"q_heads", "kv_heads", "head_dim", "softmax_scale", "sliding_window",
	"alibi", "soft_cap", NULL,
};
static const char *const cache_keys[] = {
	"block_size", "num_blocks", "spare_blocks", "placement", "k_scale",
	"v_dtype", "shuffle_cache", NULL,
};
static const char *const seq_keys[] = {
	"context", "tokens", "history", "chunk", "blocks", NULL,
};
static const char *const quant_keys[] = { "rounding", "clip", NULL };
static const char *const split_keys[] = { "segment", NULL };
static const char *const data_keys[] = { "seed", "q", "k", "v", NULL };
/* The generator keys: everything but npy (the last one). */
static const char *const tensor_keys[] = {
	"dist", "scale", "mean", "zero_rows", "constant_rows",
	"outlier_channels", "outlier_scale", "npy", NULL,
};
static const char *const check_keys[] = {
	"out_cosine_min", "out_max_abs_max", "score_max_abs_max",
	"score_nmse_max", "kld_mean_max", "kld_median_max", "kld_p99_max",
	"top1_min", "rms_dp_max", "buckets", NULL,
};

/* The tables above, by mapping, for tests/test_keys.c (case.h). */
static const struct case_keyset keysets[] = {
	{ "", top_keys }, { "model", model_keys }, { "cache", cache_keys },
	{ "sequences", seq_keys }, { "quant", quant_keys },
	{ "split_k", split_keys }, { "data", data_keys },
	{ "data.q", tensor_keys }, { "data.k", tensor_keys },
	{ "data.v", tensor_keys }, { "check", check_keys },
	{ "kernel", layout_keys }, { NULL, NULL },
};

const struct case_keyset *case_keysets(void)
{
	return keysets;
}

/* Enum spellings, in enum order: parsed and printed from these. */
static const char *const mode_names[] = { "decode", "prefill", NULL };
static const char *const route_names[] = { "report", "strict", NULL };
static const char *const expect_names[] = { "match", "mismatch", NULL };
static const char *const placement_names[] = {
	"contiguous", "shuffled", "reversed", "table", NULL,
};
static const char *const kscale_names[] = {
	"per_token_head", "per_block32", "per_tensor", NULL,
};
static const char *const vdtype_names[] = { "int8", "bf16", "f32", NULL };
static const char *const rows_names[] = { "replicated", "packed", NULL };
static const char *const rounding_names[] = {
	"half_away_from_zero", "half_to_even", NULL,
};
static const char *const dist_names[] = { "normal", "uniform", "sign", NULL };
/* Bit i of enum case_golden is golden_names[i]. */
static const char *const golden_names[] = {
	"inputs", "acc", "scores", "out", "splitk", NULL,
};

const char *case_mode_name(enum case_mode m)
{
	return mode_names[m];
}

const char *case_placement_name(enum case_placement p)
{
	return placement_names[p];
}

const char *case_rounding_name(enum case_rounding r)
{
	return rounding_names[r];
}

const char *case_golden_name(int bit)
{
	return bit >= 0 && bit < (int)FS_ARRAY_LEN(golden_names) - 1 ?
	       golden_names[bit] : NULL;
}

/* check: thresholds; *_min ones are rates in [0, 1], *_max ones >= 0. */
struct threshold {
	const char *key;
	size_t off;	/* of the double in struct case_check */
	double lo, hi;
};
#define THR(name, lo, hi) { #name, offsetof(struct case_check, name), lo, hi }
static const struct threshold thresholds[] = {
	THR(out_cosine_min, 0, 1),
	THR(out_max_abs_max, 0, DBL_MAX),
	THR(score_max_abs_max, 0, DBL_MAX),
	THR(score_nmse_max, 0, DBL_MAX),
	THR(kld_mean_max, 0, DBL_MAX),
	THR(kld_median_max, 0, DBL_MAX),
	THR(kld_p99_max, 0, DBL_MAX),
	THR(top1_min, 0, 1),
	THR(rms_dp_max, 0, DBL_MAX),
};
#undef THR

struct loader {
	struct ydoc *d;
	struct fs_case *c;
	const char *dir;	/* resolves relative paths; may be NULL */
	struct fs_err *err;
};

static void tensor_defaults(struct case_tensor *t)
{
	memset(t, 0, sizeof(*t));
	t->dist = DIST_NORMAL;
	t->scale = 1.0;
	t->outlier_scale = 10.0;
}

/* The schema's defaults; num_blocks and softmax_scale are resolved later. */
static void set_defaults(struct fs_case *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->isa, sizeof(c->isa), "gfx936");
	c->mode = MODE_DECODE;
	c->route = ROUTE_REPORT;
	c->q_heads = 24;
	c->kv_heads = 4;
	c->head_dim = 256;
	c->softmax_scale_auto = 1;
	c->block_size = 16;
	c->spare_blocks = 2;
	c->placement = PLACE_SHUFFLED;
	c->k_scale = KSCALE_PER_TOKEN_HEAD;
	c->v_dtype = VDT_INT8;
	c->rounding = ROUND_HALF_AWAY;
	c->clip = 127;
	tensor_defaults(&c->q);
	tensor_defaults(&c->k);
	tensor_defaults(&c->v);
	for (size_t i = 0; i < FS_ARRAY_LEN(thresholds); i++)
		*(double *)((char *)&c->check + thresholds[i].off) = NAN;
	c->golden = GOLD_INPUTS | GOLD_ACC | GOLD_OUT;
	c->buckets = 4;
}

/* ---- located accessors on top of yamldoc ---------------------------- */

/* The key node (not the value) of key in mapping map, or NULL. */
static yaml_node_t *key_node(struct loader *L, yaml_node_t *map,
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

static enum fs_rc missing(struct loader *L, yaml_node_t *map,
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

/* Optional mapping under key, checked against allowed; *out NULL if absent. */
static enum fs_rc sub_map(struct loader *L, yaml_node_t *map,
			  const char *parent, const char *key,
			  const char *const *allowed, yaml_node_t **out)
{
	char p[YDOC_PATH_MAX];

	*out = ydoc_get(L->d, map, key);
	if (!*out)
		return FS_OK;
	ydoc_path(p, sizeof(p), parent, key);
	return ydoc_check_map(L->d, *out, p, allowed, L->err);
}

/* Optional integer: *out keeps its default when key is absent. */
static enum fs_rc opt_i64(struct loader *L, yaml_node_t *map,
			  const char *parent, const char *key, int64_t min,
			  int64_t max, int64_t *out)
{
	yaml_node_t *v = ydoc_get(L->d, map, key);
	char p[YDOC_PATH_MAX];

	if (!v)
		return FS_OK;
	ydoc_path(p, sizeof(p), parent, key);
	return ydoc_int(L->d, v, p, min, max, out, L->err);
}

static enum fs_rc opt_int(struct loader *L, yaml_node_t *map,
			  const char *parent, const char *key, int min, int max,
			  int *out)
{
	int64_t x = *out;

	if (opt_i64(L, map, parent, key, min, max, &x))
		return FS_EINPUT;
	*out = (int)x;
	return FS_OK;
}

/* Optional integer in [min, max] that also satisfies ok(); one message. */
static enum fs_rc opt_int_rule(struct loader *L, yaml_node_t *map,
			       const char *parent, const char *key, int min,
			       int max, int (*ok)(int64_t), const char *rule,
			       int *out)
{
	yaml_node_t *v = ydoc_get(L->d, map, key);
	char p[YDOC_PATH_MAX];
	int64_t x;

	if (!v)
		return FS_OK;
	ydoc_path(p, sizeof(p), parent, key);
	if (ydoc_int(L->d, v, p, INT64_MIN, INT64_MAX, &x, L->err))
		return FS_EINPUT;
	if (x < min || x > max || !ok(x))
		return ydoc_fail(L->err, L->d, v, p, "%s", rule);
	*out = (int)x;
	return FS_OK;
}

static int is_pow2(int64_t x)
{
	return x > 0 && (x & (x - 1)) == 0;
}

/* head_dim: whole 16-element chunks of the K cache's [D/16][BS][16]. */
static int is_mult16(int64_t x)
{
	return x % 16 == 0;
}

/*
 * A number in [lo, hi], or (lo, hi] with lo_open; hi == DBL_MAX means no
 * upper bound. Range errors say the range in words.
 */
static enum fs_rc parse_double(struct loader *L, yaml_node_t *v,
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

static enum fs_rc opt_double(struct loader *L, yaml_node_t *map,
			     const char *parent, const char *key, double lo,
			     double hi, int lo_open, double *out)
{
	yaml_node_t *v = ydoc_get(L->d, map, key);
	char p[YDOC_PATH_MAX];

	if (!v)
		return FS_OK;
	ydoc_path(p, sizeof(p), parent, key);
	return parse_double(L, v, p, lo, hi, lo_open, out);
}

static enum fs_rc opt_bool(struct loader *L, yaml_node_t *map,
			   const char *parent, const char *key, int *out)
{
	yaml_node_t *v = ydoc_get(L->d, map, key);
	char p[YDOC_PATH_MAX];

	if (!v)
		return FS_OK;
	ydoc_path(p, sizeof(p), parent, key);
	return ydoc_bool(L->d, v, p, out, L->err);
}

/* Optional enum into an int (the caller casts to its enum type). */
static enum fs_rc opt_enum(struct loader *L, yaml_node_t *map,
			   const char *parent, const char *key,
			   const char *const *names, int *out)
{
	yaml_node_t *v = ydoc_get(L->d, map, key);
	char p[YDOC_PATH_MAX];

	if (!v)
		return FS_OK;
	ydoc_path(p, sizeof(p), parent, key);
	return ydoc_enum(L->d, v, p, names, out, L->err);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* name, made relative to L->dir unless absolute, into out[len]. */
static enum fs_rc resolve_path(struct loader *L, yaml_node_t *v,
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

/* ---- sections ------------------------------------------------------- */

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

static enum fs_rc load_top(struct loader *L, yaml_node_t *top)
{
	struct fs_case *c = L->c;
	yaml_node_t *v;
	char tmp[CASE_PATH_MAX];
	int64_t ver;
	int x;

	v = ydoc_get(L->d, top, "fragsim");
	if (!v)
		return missing(L, top, "", "fragsim", " (the schema version: fragsim: 1)");
	if (ydoc_int(L->d, v, "fragsim", INT64_MIN, INT64_MAX, &ver, L->err))
		return FS_EINPUT;
	if (ver != 1)
		return ydoc_fail(L->err, L->d, v, "fragsim",
				 "unsupported schema version %lld (this fragsim reads version 1)",
				 (long long)ver);

	v = ydoc_get(L->d, top, "name");
	if (!v)
		return missing(L, top, "", "name", "");
	if (ydoc_str(L->d, v, "name", c->name, sizeof(c->name), L->err))
		return FS_EINPUT;
	if (!name_ok(c->name))
		return ydoc_fail(L->err, L->d, v, "name",
				 "must be 1 to 127 characters from A-Z a-z 0-9 . _ -");

	v = ydoc_get(L->d, top, "description");
	if (v && ydoc_str(L->d, v, "description", c->description,
			  sizeof(c->description), L->err))
		return FS_EINPUT;

	v = ydoc_get(L->d, top, "isa");
	if (v) {
		if (ydoc_str(L->d, v, "isa", tmp, sizeof(tmp), L->err))
			return FS_EINPUT;
		if (!tmp[0])
			return ydoc_fail(L->err, L->d, v, "isa",
					 "must name a builtin profile or a profile .yaml file");
		if (ends_with(tmp, ".yaml") || ends_with(tmp, ".yml")) {
			if (resolve_path(L, v, "isa", tmp, c->isa, sizeof(c->isa)))
				return FS_EINPUT;
		} else {
			memcpy(c->isa, tmp, strlen(tmp) + 1);
		}
	}

	x = (int)c->mode;
	if (opt_enum(L, top, "", "mode", mode_names, &x))
		return FS_EINPUT;
	c->mode = (enum case_mode)x;
	x = (int)c->route;
	if (opt_enum(L, top, "", "route", route_names, &x))
		return FS_EINPUT;
	c->route = (enum case_route)x;
	x = c->expect_mismatch;
	if (opt_enum(L, top, "", "expect", expect_names, &x))
		return FS_EINPUT;
	c->expect_mismatch = x;
	return FS_OK;
}

static enum fs_rc load_model(struct loader *L, yaml_node_t *top)
{
	struct fs_case *c = L->c;
	yaml_node_t *m, *v;

	if (sub_map(L, top, "", "model", model_keys, &m))
		return FS_EINPUT;
	if (m) {
		if (opt_int(L, m, "model", "q_heads", 1, CASE_MAX_HEADS, &c->q_heads) ||
		    opt_int(L, m, "model", "kv_heads", 1, CASE_MAX_HEADS, &c->kv_heads) ||
		    opt_int_rule(L, m, "model", "head_dim", 16, CASE_MAX_HEAD_DIM, is_mult16,
				 "must be a multiple of 16 between 16 and 1024",
				 &c->head_dim) ||
		    opt_int(L, m, "model", "sliding_window", 0, CASE_MAX_CONTEXT,
			    &c->sliding_window) ||
		    opt_bool(L, m, "model", "alibi", &c->alibi) ||
		    opt_double(L, m, "model", "soft_cap", 0, DBL_MAX, 0, &c->soft_cap))
			return FS_EINPUT;
		/* The kernel holds the cap as an f32: far from 1 it nears f32's
		 * underflow or overflow, where cap * tanh(s / cap) stops meaning it. */
		v = ydoc_get(L->d, m, "soft_cap");
		if (c->soft_cap > 0 && (c->soft_cap < 1e-6 || c->soft_cap > 1e6))
			return ydoc_fail(L->err, L->d, v, "model.soft_cap",
					 "must be 0 (none) or between 1e-06 and 1e+06, not %s",
					 (const char *)v->data.scalar.value);
		v = ydoc_get(L->d, m, "softmax_scale");
		if (v && !is_word(v, "auto")) {
			double s;

			if (ydoc_double(L->d, v, "model.softmax_scale", -DBL_MAX,
					DBL_MAX, &s, L->err))
				return FS_EINPUT;
			if (!(s > 0))
				return ydoc_fail(L->err, L->d, v, "model.softmax_scale",
						 "must be auto or a number greater than 0, not %s",
						 (const char *)v->data.scalar.value);
			c->softmax_scale_auto = 0;
			c->softmax_scale = s;
		}
	}
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

/* cache: everything but num_blocks, which needs the sequences. */
static enum fs_rc load_cache(struct loader *L, yaml_node_t *top,
			     yaml_node_t **cache)
{
	struct fs_case *c = L->c;
	yaml_node_t *m, *nb, *sb;
	int x;

	if (sub_map(L, top, "", "cache", cache_keys, &m))
		return FS_EINPUT;
	*cache = m;
	if (!m)
		return FS_OK;
	if (opt_int_rule(L, m, "cache", "block_size", 1, 1024, is_pow2,
			 "must be a power of two between 1 and 1024",
			 &c->block_size) ||
	    opt_int(L, m, "cache", "spare_blocks", 0, 1024, &c->spare_blocks) ||
	    opt_bool(L, m, "cache", "shuffle_cache", &c->shuffle_cache))
		return FS_EINPUT;
	nb = ydoc_get(L->d, m, "num_blocks");
	sb = key_node(L, m, "spare_blocks");
	if (nb && !is_word(nb, "auto") && sb)
		return ydoc_fail(L->err, L->d, sb, "cache.spare_blocks",
				 "only allowed with num_blocks: auto (num_blocks "
				 "is given at line %d)", ydoc_line(nb));
	x = (int)c->placement;
	if (opt_enum(L, m, "cache", "placement", placement_names, &x))
		return FS_EINPUT;
	c->placement = (enum case_placement)x;
	x = (int)c->k_scale;
	if (opt_enum(L, m, "cache", "k_scale", kscale_names, &x))
		return FS_EINPUT;
	c->k_scale = (enum case_kscale)x;
	if (c->k_scale == KSCALE_PER_BLOCK32 && c->head_dim % 32)
		return ydoc_fail(L->err, L->d, ydoc_get(L->d, m, "k_scale"),
				 "cache.k_scale", "per_block32 needs a head_dim that is a "
				 "multiple of 32 (one fp16 scale per 32 elements), not %d",
				 c->head_dim);
	x = (int)c->v_dtype;
	if (opt_enum(L, m, "cache", "v_dtype", vdtype_names, &x))
		return FS_EINPUT;
	c->v_dtype = (enum case_vdtype)x;
	return FS_OK;
}

/* One sequence's sizes (not its block list). */
static enum fs_rc load_seq(struct loader *L, yaml_node_t *sn, int s)
{
	static const char *const decode_only[] = { "context", "tokens", NULL };
	static const char *const prefill_only[] = { "history", "chunk", NULL };
	struct fs_case *c = L->c;
	struct case_seq *q = &c->seqs[s];
	int decode = c->mode == MODE_DECODE;
	const char *const *wrong = decode ? prefill_only : decode_only;
	char p[YDOC_PATH_MAX], kp[YDOC_PATH_MAX];
	yaml_node_t *k;

	ydoc_path_index(p, sizeof(p), "sequences", s);
	if (ydoc_check_map(L->d, sn, p, seq_keys, L->err))
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
		if (!ydoc_get(L->d, sn, "context"))
			return missing(L, sn, p, "context", "");
		if (opt_int(L, sn, p, "context", 0, CASE_MAX_CONTEXT, &q->context))
			return FS_EINPUT;
		/* context 0: a padded batch entry, one query row that sees
		 * no key (q_pos -1); its output is 0 */
		q->tokens = 1;
		if (opt_int(L, sn, p, "tokens", 1,
			    q->context < 1 ? 1 :
			    q->context < CASE_MAX_TOKENS ? q->context : CASE_MAX_TOKENS,
			    &q->tokens))
			return FS_EINPUT;
		q->history = q->context - q->tokens;
	} else {
		if (!ydoc_get(L->d, sn, "history"))
			return missing(L, sn, p, "history", "");
		if (!ydoc_get(L->d, sn, "chunk"))
			return missing(L, sn, p, "chunk", "");
		if (opt_int(L, sn, p, "history", 0, CASE_MAX_CONTEXT, &q->history) ||
		    opt_int(L, sn, p, "chunk", 0, CASE_MAX_TOKENS, &q->tokens))
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
				 placement_names[c->placement]);
	}
	return FS_OK;
}

static enum fs_rc load_sequences(struct loader *L, yaml_node_t *top,
				 yaml_node_t **seqs)
{
	struct fs_case *c = L->c;
	yaml_node_t *v = ydoc_get(L->d, top, "sequences");
	int64_t keys = 0, tokens = 0;
	int n;

	*seqs = v;
	if (!v)
		return missing(L, top, "", "sequences", "");
	n = ydoc_seq_len(v);
	if (n < 0)
		return ydoc_fail(L->err, L->d, v, "sequences",
				 "expected a list of sequences");
	if (n < 1 || n > CASE_MAX_SEQS)
		return ydoc_fail(L->err, L->d, v, "sequences",
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
		return ydoc_fail(L->err, L->d, v, "sequences",
				 "contexts add up to %lld keys, more than %d",
				 (long long)keys, CASE_MAX_KEYS_TOTAL);
	/* prefill chunks of 0 (padded batch entries) have no rows; a case
	 * of nothing but those would emulate nothing */
	if (tokens == 0)
		return ydoc_fail(L->err, L->d, v, "sequences",
				 "no sequence has a query token (every chunk is 0)");
	if (tokens > CASE_MAX_QUERY_TOTAL)
		return ydoc_fail(L->err, L->d, v, "sequences",
				 "query tokens add up to %lld, more than %d",
				 (long long)tokens, CASE_MAX_QUERY_TOTAL);
	return FS_OK;
}

/* num_blocks: auto = needed + spare_blocks, or an integer >= needed. */
static enum fs_rc resolve_num_blocks(struct loader *L, yaml_node_t *top,
				     yaml_node_t *cache)
{
	struct fs_case *c = L->c;
	int needed = case_blocks_needed(c);
	yaml_node_t *v = cache ? ydoc_get(L->d, cache, "num_blocks") : NULL;
	int64_t nb;

	if (!v || is_word(v, "auto")) {
		nb = (int64_t)needed + c->spare_blocks;
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
		if (nb < needed)
			return ydoc_fail(L->err, L->d, v, "cache.num_blocks",
					 "must be at least %d (the blocks the sequences "
					 "need), not %lld", needed, (long long)nb);
		if (nb > CASE_MAX_BLOCKS)
			return ydoc_fail(L->err, L->d, v, "cache.num_blocks",
					 "must be at most %d, not %lld",
					 CASE_MAX_BLOCKS, (long long)nb);
	}
	c->num_blocks = (int)nb;
	c->spare_blocks = c->num_blocks - needed;
	return FS_OK;
}

/* placement: table: every sequence's block list. owner[b] = seq + 1. */
static enum fs_rc load_tables(struct loader *L, yaml_node_t *seqs)
{
	struct fs_case *c = L->c;
	unsigned char *owner;
	enum fs_rc rc = FS_OK;

	if (c->placement != PLACE_TABLE)
		return FS_OK;
	owner = calloc((size_t)c->num_blocks, 1);
	if (!owner)
		return fs_fail(L->err, FS_EINTERNAL, "out of memory");
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
			rc = fs_fail(L->err, FS_EINTERNAL, "out of memory");
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

static enum fs_rc load_tensor(struct loader *L, yaml_node_t *data,
			      const char *key, struct case_tensor *t)
{
	yaml_node_t *m, *v;
	char p[YDOC_PATH_MAX], kp[YDOC_PATH_MAX], tmp[CASE_PATH_MAX];
	int x;

	snprintf(p, sizeof(p), "data.%s", key);
	if (sub_map(L, data, "data", key, tensor_keys, &m))
		return FS_EINPUT;
	if (!m)
		return FS_OK;
	v = ydoc_get(L->d, m, "npy");
	if (v) {
		ydoc_path(kp, sizeof(kp), p, "npy");
		if (ydoc_str(L->d, v, kp, tmp, sizeof(tmp), L->err))
			return FS_EINPUT;
		if (tmp[0]) {
			/* All keys but the last ("npy") describe a generator. */
			for (int i = 0; tensor_keys[i + 1]; i++) {
				yaml_node_t *k = key_node(L, m, tensor_keys[i]);

				if (!k)
					continue;
				ydoc_path(kp, sizeof(kp), p, tensor_keys[i]);
				return ydoc_fail(L->err, L->d, k, kp,
						 "cannot be combined with npy (the "
						 "tensor is read from the file)");
			}
			ydoc_path(kp, sizeof(kp), p, "npy");
			if (resolve_path(L, v, kp, tmp, t->npy, sizeof(t->npy)))
				return FS_EINPUT;
			return FS_OK;
		}
	}
	x = (int)t->dist;
	if (opt_enum(L, m, p, "dist", dist_names, &x))
		return FS_EINPUT;
	t->dist = (enum case_dist)x;
	if (opt_double(L, m, p, "scale", 0, 1e6, 1, &t->scale) ||
	    opt_double(L, m, p, "mean", -1e6, 1e6, 0, &t->mean) ||
	    opt_double(L, m, p, "zero_rows", 0, 1, 0, &t->zero_rows) ||
	    opt_double(L, m, p, "constant_rows", 0, 1, 0, &t->constant_rows) ||
	    opt_double(L, m, p, "outlier_scale", 1, 1e4, 0, &t->outlier_scale))
		return FS_EINPUT;
	v = ydoc_get(L->d, m, "outlier_channels");
	if (v) {
		int n = ydoc_seq_len(v);

		ydoc_path(kp, sizeof(kp), p, "outlier_channels");
		if (n < 0)
			return ydoc_fail(L->err, L->d, v, kp,
					 "expected a list of head-dim channels");
		if (n > CASE_MAX_OUTLIERS)
			return ydoc_fail(L->err, L->d, v, kp,
					 "at most %d channels, found %d",
					 CASE_MAX_OUTLIERS, n);
		for (int i = 0; i < n; i++) {
			yaml_node_t *item = ydoc_seq_item(L->d, v, i);
			char ip[YDOC_PATH_MAX];
			int64_t ch;

			ydoc_path_index(ip, sizeof(ip), kp, i);
			if (ydoc_int(L->d, item, ip, 0, L->c->head_dim - 1, &ch,
				     L->err))
				return FS_EINPUT;
			for (int j = 0; j < i; j++)
				if (t->outliers[j] == ch)
					return ydoc_fail(L->err, L->d, item, ip,
							 "channel %lld is listed twice",
							 (long long)ch);
			t->outliers[i] = (int)ch;
		}
		t->n_outliers = n;
	}
	return FS_OK;
}

/*
 * kernel: one key per bug class (sim/kernel.h), each spelled as the
 * correct value or the bug's; head_dim_loaded also takes a number. And
 * the layout keys (layout_keys): decode_rows.
 */
static enum fs_rc load_kernel(struct loader *L, yaml_node_t *top)
{
	const char *keys[BUG_COUNT + FS_ARRAY_LEN(layout_keys)];
	const char *vals[KERNEL_MAX_VALUES + 1];
	enum kern_bug as0[KERNEL_MAX_VALUES + 1];
	struct fs_case *c = L->c;
	yaml_node_t *m, *v;
	int nk = 0;

	for (int b = 0; b < BUG_COUNT; b++)
		if (kernel_key_values((enum kern_bug)b, vals, as0))
			keys[nk++] = kernel_bug((enum kern_bug)b)->key;
	for (size_t i = 0; layout_keys[i]; i++)
		keys[nk++] = layout_keys[i];
	keys[nk] = NULL;
	if (sub_map(L, top, "", "kernel", keys, &m))
		return FS_EINPUT;
	if (m && (v = ydoc_get(L->d, m, "decode_rows"))) {
		int x = 0;

		if (ydoc_enum(L->d, v, "kernel.decode_rows", rows_names, &x, L->err))
			return FS_EINPUT;
		/* Prefill rows are query tokens: packed would change nothing. */
		if (x && c->mode != MODE_DECODE)
			return ydoc_fail(L->err, L->d, v, "kernel.decode_rows",
					 "packed applies to decode only (prefill rows are "
					 "query tokens)");
		c->decode_rows = (enum case_rows)x;
	}
	for (int b = 0; m && b < BUG_COUNT; b++) {
		const struct kern_bug_info *bi = kernel_bug((enum kern_bug)b);
		const char *names[KERNEL_MAX_VALUES + 1];
		enum kern_bug as[KERNEL_MAX_VALUES + 1];
		char p[YDOC_PATH_MAX];
		const char *s;
		int x = 0;

		/* One key may name several classes (page_walk: none, identity). */
		if (!kernel_key_values((enum kern_bug)b, names, as))
			continue;
		v = ydoc_get(L->d, m, bi->key);
		if (!v)
			continue;
		ydoc_path(p, sizeof(p), "kernel", bi->key);
		if (b == BUG_HEAD_DIM_LOADED && (s = ydoc_scalar(L->d, v, p, NULL)) &&
		    s[0] >= '0' && s[0] <= '9') {
			int64_t n;

			if (ydoc_int(L->d, v, p, 1, c->head_dim, &n, L->err))
				return FS_EINPUT;
			c->kernel.head_dim_loaded = n == c->head_dim ? 0 : (int)n;
			continue;
		}
		if (ydoc_enum(L->d, v, p, names, &x, L->err))
			return FS_EINPUT;
		if (x && kernel_plant(&c->kernel, as[x], c->head_dim))
			return ydoc_fail(L->err, L->d, v, p,
					 "cannot be planted with head_dim %d", c->head_dim);
	}
	return FS_OK;
}

static enum fs_rc load_rest(struct loader *L, yaml_node_t *top)
{
	struct fs_case *c = L->c;
	yaml_node_t *m, *v;
	int64_t seed;
	int x;

	if (sub_map(L, top, "", "quant", quant_keys, &m))
		return FS_EINPUT;
	if (m) {
		x = (int)c->rounding;
		if (opt_enum(L, m, "quant", "rounding", rounding_names, &x) ||
		    opt_int(L, m, "quant", "clip", 1, 127, &c->clip))
			return FS_EINPUT;
		c->rounding = (enum case_rounding)x;
	}

	if (sub_map(L, top, "", "split_k", split_keys, &m))
		return FS_EINPUT;
	if (m && opt_int(L, m, "split_k", "segment", 0, CASE_MAX_CONTEXT,
			 &c->segment))
		return FS_EINPUT;
	/* The emulation holds at most CASE_MAX_SEGMENTS per context: refuse
	 * here, at the key, not after the inputs are built. */
	for (int s = 0; c->segment > 0 && s < c->n_seqs; s++)
		if (case_segments_of(c, s) > CASE_MAX_SEGMENTS)
			return ydoc_fail(L->err, L->d, ydoc_get(L->d, m, "segment"),
					 "split_k.segment",
					 "%d cuts sequences[%d] (context %d) into %d "
					 "segments, more than %d; use at least %d",
					 c->segment, s, c->seqs[s].context,
					 case_segments_of(c, s), CASE_MAX_SEGMENTS,
					 (c->seqs[s].context + CASE_MAX_SEGMENTS - 1) /
						 CASE_MAX_SEGMENTS);

	if (load_kernel(L, top))
		return FS_EINPUT;

	if (sub_map(L, top, "", "data", data_keys, &m))
		return FS_EINPUT;
	if (m) {
		seed = 0;
		if (opt_i64(L, m, "data", "seed", 0, INT64_MAX, &seed))
			return FS_EINPUT;
		c->seed = (uint64_t)seed;
		if (load_tensor(L, m, "q", &c->q) ||
		    load_tensor(L, m, "k", &c->k) ||
		    load_tensor(L, m, "v", &c->v))
			return FS_EINPUT;
	}

	if (sub_map(L, top, "", "check", check_keys, &m))
		return FS_EINPUT;
	if (m) {
		for (size_t i = 0; i < FS_ARRAY_LEN(thresholds); i++) {
			const struct threshold *t = &thresholds[i];

			if (opt_double(L, m, "check", t->key, t->lo, t->hi, 0,
				       (double *)((char *)&c->check + t->off)))
				return FS_EINPUT;
		}
		if (opt_int(L, m, "check", "buckets", 1, CASE_MAX_BUCKETS,
			    &c->buckets))
			return FS_EINPUT;
	}

	v = ydoc_get(L->d, top, "golden");
	if (v) {
		int n = ydoc_seq_len(v);

		if (is_word(v, "all")) {
			c->golden = (1u << (FS_ARRAY_LEN(golden_names) - 1)) - 1;
			return FS_OK;
		}
		if (n < 0)
			return ydoc_fail(L->err, L->d, v, "golden",
					 "must be a list of inputs, acc, scores, out, "
					 "splitk, or the word all");
		c->golden = 0;
		for (int i = 0; i < n; i++) {
			yaml_node_t *item = ydoc_seq_item(L->d, v, i);
			char ip[YDOC_PATH_MAX];

			ydoc_path_index(ip, sizeof(ip), "golden", i);
			if (ydoc_enum(L->d, item, ip, golden_names, &x, L->err))
				return FS_EINPUT;
			if (c->golden & (1u << x))
				return ydoc_fail(L->err, L->d, item, ip,
						 "'%s' is listed twice", golden_names[x]);
			c->golden |= 1u << x;
		}
	}
	return FS_OK;
}

static enum fs_rc load_doc(struct loader *L)
{
	yaml_node_t *top = ydoc_root(L->d), *cache, *seqs;
	enum fs_rc rc;

	if (ydoc_check_map(L->d, top, "", top_keys, L->err) ||
	    load_top(L, top) ||
	    load_model(L, top) ||
	    load_cache(L, top, &cache) ||
	    load_sequences(L, top, &seqs) ||
	    resolve_num_blocks(L, top, cache))
		return FS_EINPUT;
	/* Out of memory (FS_EINTERNAL) can only come from here. */
	rc = load_tables(L, seqs);
	if (rc)
		return rc;
	return load_rest(L, top);
}

enum fs_rc case_load_text(const char *text, size_t len, const char *origin,
			  const char *dir, struct fs_case *c,
			  struct fs_err *err)
{
	struct ydoc d;
	struct loader L = { &d, c, dir, err };
	enum fs_rc rc;

	set_defaults(c);
	if (len > CASE_MAX_FILE_BYTES)
		return fs_fail_at(err, FS_EINPUT, origin, 0, 0,
				  "case file too large (%zu bytes, at most %u)",
				  len, CASE_MAX_FILE_BYTES);
	if (ydoc_load(&d, text, len, origin, err)) {
		memset(c, 0, sizeof(*c));
		return FS_EINPUT;
	}
	snprintf(c->file, sizeof(c->file), "%s", origin);
	rc = load_doc(&L);
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

/* ---- printing ------------------------------------------------------- */

/* Shortest of %.15g..%.17g that reads back as exactly v. */
static void fmt_double(char *buf, size_t len, double v)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

static void print_double(FILE *f, double v)
{
	char buf[40];

	fmt_double(buf, sizeof(buf), v);
	fputs(buf, f);
}

/*
 * A string, plain when it cannot be read as anything else (letters,
 * digits, . _ / - and not starting with -), else double-quoted. Inside
 * the quotes, what a YAML reader would fold or refuse is escaped: ASCII
 * controls, the C1 controls U+0080..U+009F (NEL among them) and the line
 * and paragraph separators U+2028/U+2029. Other UTF-8 passes through.
 */
static void print_str(FILE *f, const char *s)
{
	int plain = s[0] != '\0' && s[0] != '-';

	for (const char *p = s; *p && plain; p++)
		plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
			(*p >= '0' && *p <= '9') || *p == '.' || *p == '_' ||
			*p == '/' || *p == '-';
	if (plain) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			fprintf(f, "\\x%02x", *++p);
		else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
			fputs(p[2] == 0xa8 ? "\\L" : "\\P", f);
			p += 2;
		} else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void print_tensor(FILE *f, const char *key, const struct case_tensor *t)
{
	fprintf(f, "  %s:\n", key);
	if (t->npy[0]) {
		fputs("    npy: ", f);
		print_str(f, t->npy);
		fputc('\n', f);
		return;
	}
	fprintf(f, "    dist: %s\n    scale: ", dist_names[t->dist]);
	print_double(f, t->scale);
	fputs("\n    mean: ", f);
	print_double(f, t->mean);
	fputs("\n    zero_rows: ", f);
	print_double(f, t->zero_rows);
	fputs("\n    constant_rows: ", f);
	print_double(f, t->constant_rows);
	fputs("\n    outlier_channels: [", f);
	for (int i = 0; i < t->n_outliers; i++)
		fprintf(f, "%s%d", i ? ", " : "", t->outliers[i]);
	fputs("]\n    outlier_scale: ", f);
	print_double(f, t->outlier_scale);
	fputc('\n', f);
}

static void print_seq(FILE *f, const struct fs_case *c, int s)
{
	const struct case_seq *q = &c->seqs[s];

	if (c->mode == MODE_DECODE)
		fprintf(f, "  - {context: %d, tokens: %d", q->context, q->tokens);
	else
		fprintf(f, "  - {history: %d, chunk: %d", q->history, q->tokens);
	if (q->blocks) {
		fputs(", blocks: [", f);
		for (int i = 0; i < q->n_blocks; i++) {
			if (i && i % 16 == 0)
				fputs(",\n      ", f);
			else if (i)
				fputs(", ", f);
			fprintf(f, "%d", q->blocks[i]);
		}
		fputc(']', f);
	}
	fputs("}\n", f);
}

void case_print(FILE *f, const struct fs_case *c)
{
	int needed = case_blocks_needed(c), first = 1;

	fputs("fragsim: 1\nname: ", f);
	print_str(f, c->name);
	fputs("\ndescription: ", f);
	print_str(f, c->description);
	fputs("\nisa: ", f);
	print_str(f, c->isa);
	fprintf(f, "\nmode: %s\nroute: %s\nexpect: %s\n", mode_names[c->mode],
		route_names[c->route], expect_names[c->expect_mismatch]);

	fprintf(f, "model:\n  q_heads: %d\n  kv_heads: %d\n  head_dim: %d\n",
		c->q_heads, c->kv_heads, c->head_dim);
	fputs("  softmax_scale: ", f);
	if (c->softmax_scale_auto)
		fputs("auto  # ", f);
	print_double(f, c->softmax_scale);
	fprintf(f, "\n  sliding_window: %d\n  alibi: %s\n  soft_cap: ",
		c->sliding_window, c->alibi ? "true" : "false");
	print_double(f, c->soft_cap);

	fprintf(f, "\ncache:\n  block_size: %d\n"
		"  num_blocks: %d  # %d needed + %d spare\n",
		c->block_size, c->num_blocks, needed, c->num_blocks - needed);
	fprintf(f, "  placement: %s\n  k_scale: %s\n  v_dtype: %s\n"
		"  shuffle_cache: %s\n", placement_names[c->placement],
		kscale_names[c->k_scale], vdtype_names[c->v_dtype],
		c->shuffle_cache ? "true" : "false");

	fputs("sequences:\n", f);
	for (int s = 0; s < c->n_seqs; s++)
		print_seq(f, c, s);

	fprintf(f, "quant:\n  rounding: %s\n  clip: %d\n",
		rounding_names[c->rounding], c->clip);
	fprintf(f, "split_k:\n  segment: %d\n", c->segment);
	fputs("kernel:\n", f);
	for (int b = 0; b < BUG_COUNT; b++) {
		const struct kern_bug_info *bi = kernel_bug((enum kern_bug)b);
		const char *names[KERNEL_MAX_VALUES + 1];
		enum kern_bug as[KERNEL_MAX_VALUES + 1];
		int n = kernel_key_values((enum kern_bug)b, names, as), x = 0;

		if (!n)
			continue;	/* printed with the first class of its key */
		for (int i = 1; i < n; i++)
			if ((kernel_bugs(&c->kernel, c->head_dim) >> as[i]) & 1)
				x = i;
		if (b == BUG_HEAD_DIM_LOADED && x)
			fprintf(f, "  %s: %d\n", bi->key, c->kernel.head_dim_loaded);
		else
			fprintf(f, "  %s: %s\n", bi->key, names[x]);
	}
	fprintf(f, "  decode_rows: %s\n", rows_names[c->decode_rows]);
	fprintf(f, "data:\n  seed: %llu\n", (unsigned long long)c->seed);
	print_tensor(f, "q", &c->q);
	print_tensor(f, "k", &c->k);
	print_tensor(f, "v", &c->v);

	fputs("check:\n", f);
	for (size_t i = 0; i < FS_ARRAY_LEN(thresholds); i++) {
		double v = *(const double *)((const char *)&c->check +
					     thresholds[i].off);

		if (isnan(v)) {
			fprintf(f, "  # %s: not checked\n", thresholds[i].key);
			continue;
		}
		fprintf(f, "  %s: ", thresholds[i].key);
		print_double(f, v);
		fputc('\n', f);
	}
	fprintf(f, "  buckets: %d\n", c->buckets);

	fputs("golden: [", f);
	for (int i = 0; golden_names[i]; i++) {
		if (!(c->golden & (1u << i)))
			continue;
		fprintf(f, "%s%s", first ? "" : ", ", golden_names[i]);
		first = 0;
	}
	fputs("]\n", f);
}
