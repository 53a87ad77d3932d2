/*
 * case.c - case files into a resolved struct fs_case, and back (case.h).
 *
 * The only place that turns case text into a case. It exists so that
 * sim/, ref/ and every command see one validated struct with no defaults
 * left to guess: what is not in the file is filled in here, once.
 *
 * Every key is one row of schema[] below (redis's static_configs[] is the
 * model): its dotted path, its type, where it lands, its bounds, its
 * default as a file spells it, and a one-line doc. The rows drive the
 * defaults, the parse (unknown keys, types, bounds), `fragsim show`
 * and docs/case-schema.md (`fragsim show --schema`), so a key exists
 * in all four or in none:
 *
 *   path              type    lands in             bounds    default
 *   model.head_dim    int     fs_case.head_dim     16..1024  256
 *                             + rule: a multiple of 16
 *   cache.placement   enum    fs_case.placement    names[]   shuffled
 *   data.*.scale      double  case_tensor.scale    (0, 1e6]  1.0
 *
 * A row's parent is its path up to the last dot ("" for the top level);
 * the rows under one parent, in table order, are that mapping's allowed
 * keys, its print order and its doc table. `data.*` rows are relative to
 * a struct case_tensor and are used for data.q, data.k and data.v;
 * `sequences.*` rows to a struct case_seq; all others to struct fs_case.
 * What no table says (auto values, lists, the mode's sequence keys,
 * kernel: keys from sim/kernel.c, rules between keys) is a hook named in
 * the row: `parse` replaces the generic parse, `after` runs once the row
 * (a section: all its keys) is parsed, `print` replaces the generic print.
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

#include <assert.h>
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "readfile.h"
#include "yamldoc.h"

/* Enum spellings, in enum order: parsed, printed and documented from these. */
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

/* Enum fields are written through an int: they must be int-sized. */
_Static_assert(sizeof(enum case_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum case_placement) == sizeof(int), "enum size");
_Static_assert(sizeof(enum case_dist) == sizeof(int), "enum size");

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

struct loader {
	struct ydoc *d;
	struct fs_case *c;
	const char *dir;	/* resolves relative paths; may be NULL */
	struct fs_err *err;
	yaml_node_t *cache;	/* the cache: mapping, for num_blocks; or NULL */
};

enum key_type {
	KEY_SECTION,	/* a mapping: the rows whose parent it is */
	KEY_INT,	/* int in [lo, hi], and ok() when given */
	KEY_U64,	/* uint64_t in [lo, hi] (data.seed) */
	KEY_DOUBLE,	/* double in [lo, hi], (lo, hi] with KEY_LO_OPEN */
	KEY_BOOL,	/* int 0/1 */
	KEY_ENUM,	/* an int-sized enum, one of names[] */
	KEY_STR,	/* char[size] */
	KEY_HOOK,	/* no generic form: the row's parse and print hooks */
};

#define KEY_LO_OPEN (1u << 0)	/* double: lo itself is out of range */
#define KEY_NAN (1u << 1)	/* double: default NaN = "not checked" */
#define KEY_NOPRINT (1u << 2)	/* show prints it elsewhere (a comment) */

struct case_key;
/* v: the key's value node (a section: its mapping, NULL when absent);
 * map: the mapping v is in; p: v's key path; base: the struct of the
 * row's offsets. Returns FS_OK or fills L->err. */
typedef enum fs_rc key_hook(struct loader *L, const struct case_key *k,
			    yaml_node_t *map, yaml_node_t *v, const char *p,
			    void *base);
/* Print k's line(s) of c at indent; base as for key_hook. */
typedef void print_hook(FILE *f, const struct fs_case *c,
			const struct case_key *k, const void *base, int indent);

struct case_key {
	const char *path;	/* "model.head_dim"; "data.*.scale" */
	enum key_type type;
	size_t off, size;	/* the field in its struct (see the top) */
	double lo, hi;		/* int, double: the range, both ends in */
	const char *const *names;	/* enum: spellings, in enum order */
	int (*ok)(int64_t);	/* int: a rule beyond the range ... */
	const char *rule;	/* ... and its message ("must be ...") */
	const char *def;	/* the default as a file spells it */
	const char *required;	/* non-NULL: required, the missing-key note */
	unsigned flags;		/* KEY_* */
	key_hook *parse;	/* replaces the generic parse */
	key_hook *after;	/* runs after the row (section) is parsed */
	print_hook *print;	/* replaces the generic print */
	const char *tmpl;	/* section: its rows are under this path */
	const char *type_doc;	/* doc: the type, where not the generic one */
	const char *range_doc;	/* doc: the range, where not from the bounds */
	const char *doc;	/* one line: what the key means */
};

static int is_pow2(int64_t x)
{
	return x > 0 && (x & (x - 1)) == 0;
}

/* head_dim: whole 16-element chunks of the K cache's [D/16][BS][16]. */
static int is_mult16(int64_t x)
{
	return x % 16 == 0;
}

static key_hook parse_version, parse_isa, parse_softmax_scale, parse_num_blocks,
	parse_sequences, parse_kernel, parse_tensor, parse_outliers, parse_npy,
	parse_golden, after_name, after_model, after_soft_cap, after_spare_blocks,
	after_k_scale, after_decode_rows, after_segment;
static print_hook print_version, print_softmax_scale, print_num_blocks,
	print_sequences, print_kernel, print_tensor, print_outliers, print_golden;

#define FC(field) offsetof(struct fs_case, field), \
	sizeof(((struct fs_case *)0)->field)
#define SQ(field) offsetof(struct case_seq, field), \
	sizeof(((struct case_seq *)0)->field)
#define TN(field) offsetof(struct case_tensor, field), \
	sizeof(((struct case_tensor *)0)->field)
#define INT_(path, at, lo_, hi_, def_, doc_) \
	{ path, KEY_INT, at, .lo = lo_, .hi = hi_, .def = def_, .doc = doc_ }
#define DBL_(path, at, lo_, hi_, def_, doc_) \
	{ path, KEY_DOUBLE, at, .lo = lo_, .hi = hi_, .def = def_, .doc = doc_ }
#define ENUM_(path, at, names_, def_, doc_) \
	{ path, KEY_ENUM, at, .names = names_, .def = def_, .doc = doc_ }
#define THR(name, hi_, doc_) \
	{ "check." #name, KEY_DOUBLE, FC(check.name), .lo = 0, .hi = hi_, \
	  .flags = KEY_NAN, .doc = doc_ }

/* Every case key, in file order: see the top of this file. */
static const struct case_key schema[] = {
	{ "fragsim", KEY_HOOK, .required = " (the schema version: fragsim: 1)",
	  .parse = parse_version, .print = print_version, .type_doc = "int",
	  .range_doc = "`1`", .doc = "schema version" },
	{ "name", KEY_STR, FC(name), .required = "", .after = after_name,
	  .range_doc = "1 to 127 of `A-Z a-z 0-9 . _ -`",
	  .doc = "case name, used in reports and as a filter" },
	{ "description", KEY_STR, FC(description), .def = "",
	  .doc = "free text" },
	{ "isa", KEY_STR, FC(isa), .def = "gfx936", .parse = parse_isa,
	  .range_doc = "builtin name or `.yaml`/`.yml` path",
	  .doc = "lane-map profile (`fragsim lanemap list` shows the builtins)" },
	{ "mode", KEY_ENUM, FC(mode), .names = mode_names, .def = "decode",
	  .doc = "row mapping: GQA group rows (decode) or query-token rows (prefill)" },
	{ "route", KEY_ENUM, FC(route), .names = route_names, .def = "report",
	  .doc = "outside the INT8 path: report it and run anyway, or fail" },
	{ "expect", KEY_ENUM, FC(expect_mismatch), .names = expect_names,
	  .def = "match",
	  .doc = "`mismatch`: the case plants a bug (`kernel:`), and `check`/`run` "
		 "pass only when the check catches it; no goldens are written" },

	{ "model", KEY_SECTION, .after = after_model,
	  .doc = "the attention's shape" },
	INT_("model.q_heads", FC(q_heads), 1, CASE_MAX_HEADS, "24", "query heads Hq"),
	{ "model.kv_heads", KEY_INT, FC(kv_heads), .lo = 1, .hi = CASE_MAX_HEADS,
	  .def = "4", .range_doc = "1 to 256, divides `q_heads`",
	  .doc = "KV heads Hkv (GQA group = Hq / Hkv)" },
	{ "model.head_dim", KEY_INT, FC(head_dim), .lo = 16, .hi = CASE_MAX_HEAD_DIM,
	  .ok = is_mult16, .rule = "must be a multiple of 16 between 16 and 1024",
	  .def = "256",
	  .range_doc = "16 to 1024, a multiple of 16 (of 32 with `k_scale: per_block32`)",
	  .doc = "head dimension D; the last K-step is zero-padded when the "
		 "instruction's K does not divide it" },
	{ "model.softmax_scale", KEY_HOOK, .def = "auto",
	  .parse = parse_softmax_scale, .print = print_softmax_scale,
	  .type_doc = "`auto` or number", .range_doc = "> 0",
	  .doc = "score scale; `auto` = 1/sqrt(head_dim)" },
	INT_("model.sliding_window", FC(sliding_window), 0, CASE_MAX_CONTEXT, "0",
	     "window in keys, 0 = none (route check)"),
	{ "model.alibi", KEY_BOOL, FC(alibi), .def = "false",
	  .doc = "ALiBi: each score gets `slope(q head) * (key - query position)`, "
		 "after the soft cap; the INT8 path refuses it" },
	{ "model.soft_cap", KEY_DOUBLE, FC(soft_cap), .lo = 0, .hi = DBL_MAX,
	  .def = "0", .after = after_soft_cap, .range_doc = "`0`, or 1e-06 to 1e+06",
	  .doc = "logits soft cap: each score `s` becomes `soft_cap * tanh(s / "
		 "soft_cap)`; 0 = none; the INT8 path refuses it" },

	{ "cache", KEY_SECTION,
	  .doc = "the paged KV cache; \"blocks needed\" is the sum over sequences "
		 "of ceil(context / block_size)" },
	{ "cache.block_size", KEY_INT, FC(block_size), .lo = 1, .hi = 1024,
	  .ok = is_pow2, .rule = "must be a power of two between 1 and 1024",
	  .def = "16", .doc = "tokens per physical block BS" },
	{ "cache.num_blocks", KEY_HOOK, .def = "auto", .parse = parse_num_blocks,
	  .print = print_num_blocks, .type_doc = "`auto` or int",
	  .range_doc = "blocks needed to 4194304",
	  .doc = "physical blocks NB; `auto` = blocks needed + `spare_blocks`" },
	{ "cache.spare_blocks", KEY_INT, FC(spare_blocks), .lo = 0, .hi = 1024,
	  .def = "2", .flags = KEY_NOPRINT, .after = after_spare_blocks,
	  .doc = "unused (poisoned) blocks; only with `num_blocks: auto` (`show` "
		 "prints it in num_blocks' comment)" },
	{ "cache.placement", KEY_ENUM, FC(placement), .names = placement_names,
	  .def = "shuffled",
	  .doc = "how the block tables are filled; `table` = given per sequence" },
	{ "cache.k_scale", KEY_ENUM, FC(k_scale), .names = kscale_names,
	  .def = "per_token_head", .after = after_k_scale,
	  .doc = "K scale granularity" },
	ENUM_("cache.v_dtype", FC(v_dtype), vdtype_names, "int8", "V cache element type"),
	{ "cache.shuffle_cache", KEY_BOOL, FC(shuffle_cache), .def = "false",
	  .doc = "pre-permuted K cache layout (route check)" },

	{ "sequences", KEY_HOOK, .required = "", .parse = parse_sequences,
	  .print = print_sequences, .type_doc = "list of mappings",
	  .range_doc = "1 to 64 sequences; contexts add up to at most 4194304 keys, "
		       "query tokens to at most 65536",
	  .doc = "the batch; decode sequences take `context` and `tokens`, "
		 "prefill ones `history` and `chunk`" },
	{ "sequences.context", KEY_INT, SQ(context), .lo = 0, .hi = CASE_MAX_CONTEXT,
	  .required = "", .range_doc = "0 to 1048576 (decode only)",
	  .doc = "keys in the cache, new tokens included; 0 = a padded batch entry "
		 "(one query row that sees no key, output 0)" },
	{ "sequences.tokens", KEY_INT, SQ(tokens), .lo = 1, .hi = CASE_MAX_TOKENS,
	  .def = "1", .range_doc = "1 to min(max(context, 1), 8192) (decode only)",
	  .doc = "query tokens; they are the last `tokens` keys" },
	{ "sequences.history", KEY_INT, SQ(history), .lo = 0, .hi = CASE_MAX_CONTEXT,
	  .required = "", .range_doc = "0 to 1048576 (prefill only)",
	  .doc = "keys cached before the chunk" },
	{ "sequences.chunk", KEY_INT, SQ(tokens), .lo = 0, .hi = CASE_MAX_TOKENS,
	  .required = "", .range_doc = "0 to 8192 (prefill only)",
	  .doc = "query tokens (0: none, a padded entry; some sequence must have "
		 "one); context = history + chunk <= 1048576" },
	{ "sequences.blocks", KEY_HOOK, .type_doc = "list of int",
	  .range_doc = "ceil(context / block_size) distinct ids in [0, num_blocks)",
	  .doc = "the block table; required with `placement: table`, not allowed "
		 "otherwise; no id in two sequences" },

	{ "quant", KEY_SECTION, .doc = "int8 quantization of Q and K" },
	ENUM_("quant.rounding", FC(rounding), rounding_names,
	      "half_away_from_zero", "rounding mode of every int8 quantization"),
	INT_("quant.clip", FC(clip), 1, 127, "127",
	     "quantized values lie in [-clip, clip]; scale = absmax / clip"),

	{ "split_k", KEY_SECTION, .doc = "split-K (flash-decoding) segments" },
	{ "split_k.segment", KEY_INT, FC(segment), .lo = 0, .hi = CASE_MAX_CONTEXT,
	  .def = "0", .after = after_segment,
	  .range_doc = "0 to 1048576, at most 1024 segments per context",
	  .doc = "keys per split-K segment, 0 = no split" },

	{ "kernel", KEY_HOOK, .parse = parse_kernel, .print = print_kernel,
	  .type_doc = "mapping",
	  .doc = "what the kernel under test assumes; every default is the "
		 "correct kernel, every other value plants one bug class "
		 "(sim/kernel.c); `decode_rows` is a layout, not a bug" },
	{ "kernel.decode_rows", KEY_ENUM, FC(decode_rows), .names = rows_names,
	  .def = "replicated", .after = after_decode_rows,
	  .doc = "which q head a decode row holds: `replicated` repeats the G heads "
		 "over all 16 rows, `packed` puts head i in row i and zero-pads "
		 "the rows past G; decode only" },

	{ "data", KEY_SECTION, .doc = "how the input tensors are made" },
	{ "data.seed", KEY_U64, FC(seed), .lo = 0, .hi = (double)INT64_MAX,
	  .def = "0", .range_doc = "0 to 2^63-1",
	  .doc = "seed of every generated tensor" },
	{ "data.q", KEY_HOOK, FC(q), .tmpl = "data.*", .parse = parse_tensor,
	  .print = print_tensor, .type_doc = "mapping", .doc = "how Q is made" },
	{ "data.k", KEY_HOOK, FC(k), .tmpl = "data.*", .parse = parse_tensor,
	  .print = print_tensor, .type_doc = "mapping", .doc = "how K is made" },
	{ "data.v", KEY_HOOK, FC(v), .tmpl = "data.*", .parse = parse_tensor,
	  .print = print_tensor, .type_doc = "mapping", .doc = "how V is made" },
	ENUM_("data.*.dist", TN(dist), dist_names, "normal", "element distribution"),
	{ "data.*.scale", KEY_DOUBLE, TN(scale), .lo = 0, .hi = 1e6,
	  .flags = KEY_LO_OPEN, .def = "1",
	  .doc = "normal: std; uniform: half-width; sign: magnitude" },
	DBL_("data.*.mean", TN(mean), -1e6, 1e6, "0", "added to every element"),
	DBL_("data.*.zero_rows", TN(zero_rows), 0, 1, "0",
	     "fraction of (token, head) rows set to zero"),
	DBL_("data.*.constant_rows", TN(constant_rows), 0, 1, "0",
	     "fraction of rows set to one constant value"),
	{ "data.*.outlier_channels", KEY_HOOK, .def = "[]",
	  .parse = parse_outliers, .print = print_outliers,
	  .type_doc = "list of int", .range_doc = "<= 16 distinct, each < head_dim",
	  .doc = "head-dim channels scaled up" },
	DBL_("data.*.outlier_scale", TN(outlier_scale), 1, 1e4, "10",
	     "multiplier of the outlier channels"),
	{ "data.*.npy", KEY_STR, TN(npy), .def = "", .parse = parse_npy,
	  .range_doc = "path",
	  .doc = "read the logical tensor from this .npy instead: q `[S,T,Hq,D]`, "
		 "k and v `[S,MAXCTX,Hkv,D]`; no other key may be given with it" },

	{ "check", KEY_SECTION,
	  .doc = "thresholds on the comparison with the reference; an absent one "
		 "is not checked" },
	THR(out_cosine_min, 1, "least cosine similarity of out to the reference"),
	THR(out_max_abs_max, DBL_MAX, "largest absolute error of out"),
	THR(score_max_abs_max, DBL_MAX, "largest absolute error of a score"),
	THR(score_nmse_max, DBL_MAX, "normalized mean squared error of the scores"),
	THR(kld_mean_max, DBL_MAX, "mean KL divergence of the attention probabilities"),
	THR(kld_median_max, DBL_MAX, "median KL divergence"),
	THR(kld_p99_max, DBL_MAX, "99th-percentile KL divergence"),
	THR(top1_min, 1, "least rate of rows whose top-1 key is the reference's"),
	THR(rms_dp_max, DBL_MAX, "RMS of the probability differences"),
	INT_("check.buckets", FC(buckets), 1, CASE_MAX_BUCKETS, "4",
	     "key-position buckets the error metrics are reported in"),

	{ "golden", KEY_HOOK, .def = "[inputs, acc, out]", .parse = parse_golden,
	  .print = print_golden, .type_doc = "list, or `all`",
	  .range_doc = "`inputs`, `acc`, `scores`, `out`, `splitk`",
	  .doc = "golden tensors `fragsim run` writes; `[]` writes none" },
};
#undef FC
#undef SQ
#undef TN
#undef INT_
#undef DBL_
#undef ENUM_
#undef THR

#define N_KEYS FS_ARRAY_LEN(schema)
#define MAX_CHILDREN 32

/* The last component of k's path. */
static const char *key_name(const struct case_key *k)
{
	const char *dot = strrchr(k->path, '.');

	return dot ? dot + 1 : k->path;
}

/* Is k directly under parent ("" = the top level)? */
static int key_under(const struct case_key *k, const char *parent)
{
	const char *dot = strrchr(k->path, '.');
	size_t n = strlen(parent);

	if (!dot)
		return n == 0;
	return (size_t)(dot - k->path) == n && strncmp(k->path, parent, n) == 0;
}

/* The row of path, or NULL. */
static const struct case_key *key_find(const char *path)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (strcmp(schema[i].path, path) == 0)
			return &schema[i];
	return NULL;
}

/* The names of the rows under parent, NULL-terminated; returns the count. */
static int key_names(const char *parent, const char **out)
{
	int n = 0;

	for (size_t i = 0; i < N_KEYS; i++)
		if (key_under(&schema[i], parent)) {
			assert(n < MAX_CHILDREN);
			out[n++] = key_name(&schema[i]);
		}
	out[n] = NULL;
	return n;
}

static void *field(void *base, const struct case_key *k)
{
	return (char *)base + k->off;
}

static const void *cfield(const void *base, const struct case_key *k)
{
	return (const char *)base + k->off;
}

static int enum_index(const char *const *names, const char *s)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

/* k's default into its field in base (the rows whose field is generic). */
static void key_default(const struct case_key *k, void *base)
{
	void *f = field(base, k);
	int x;

	switch (k->type) {
	case KEY_INT:
		x = atoi(k->def);
		memcpy(f, &x, sizeof(x));
		break;
	case KEY_U64:
		*(uint64_t *)f = strtoull(k->def, NULL, 10);
		break;
	case KEY_DOUBLE:
		*(double *)f = k->flags & KEY_NAN ? NAN : strtod(k->def, NULL);
		break;
	case KEY_BOOL:
		*(int *)f = strcmp(k->def, "true") == 0;
		break;
	case KEY_ENUM:
		x = enum_index(k->names, k->def);
		assert(x >= 0);
		memcpy(f, &x, sizeof(x));
		break;
	case KEY_STR:
		snprintf((char *)f, k->size, "%s", k->def);
		break;
	case KEY_SECTION:
	case KEY_HOOK:
		break;
	}
}

/*
 * The schema's defaults, from the rows; num_blocks and softmax_scale are
 * resolved after the parse. The sequences' rows apply per item
 * (parse_sequences); fields no row names stay 0.
 */
static void set_defaults(struct fs_case *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < N_KEYS; i++) {
		const struct case_key *k = &schema[i];

		if (!k->def && !(k->flags & KEY_NAN))
			continue;
		if (strncmp(k->path, "data.*.", 7) == 0) {
			key_default(k, &c->q);
			key_default(k, &c->k);
			key_default(k, &c->v);
		} else if (strncmp(k->path, "sequences.", 10) != 0) {
			key_default(k, c);
		}
	}
	c->softmax_scale_auto = 1;	/* softmax_scale: auto */
	c->golden = GOLD_INPUTS | GOLD_ACC | GOLD_OUT;	/* golden's def */
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

/* Integer in [min, max] that also satisfies ok(); one message for both. */
static enum fs_rc parse_int_rule(struct loader *L, yaml_node_t *v,
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

/* ---- the generic parse ---------------------------------------------- */

static enum fs_rc parse_map(struct loader *L, yaml_node_t *map,
			    const char *rows, const char *p, void *base);

/* One row's value v (present) by its type, into base. */
static enum fs_rc parse_value(struct loader *L, const struct case_key *k,
			      yaml_node_t *v, const char *p, void *base)
{
	void *f = field(base, k);
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
static enum fs_rc parse_key(struct loader *L, const struct case_key *k,
			    yaml_node_t *map, const char *parent, void *base)
{
	yaml_node_t *v = map ? ydoc_get(L->d, map, key_name(k)) : NULL;
	char p[YDOC_PATH_MAX];
	enum fs_rc rc;

	ydoc_path(p, sizeof(p), parent, key_name(k));
	if (k->parse) {
		rc = k->parse(L, k, map, v, p, base);
		if (rc)
			return rc;	/* FS_EINTERNAL: out of memory */
	} else if (k->type == KEY_SECTION) {
		if (v && parse_map(L, v, k->path, p, base))
			return FS_EINPUT;
	} else if (!v) {
		if (k->required)
			return missing(L, map, parent, key_name(k), k->required);
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
static enum fs_rc parse_map(struct loader *L, yaml_node_t *map,
			    const char *rows, const char *p, void *base)
{
	const char *allowed[MAX_CHILDREN + 1];
	enum fs_rc rc;

	key_names(rows, allowed);
	if (ydoc_check_map(L->d, map, p, allowed, L->err))
		return FS_EINPUT;
	for (size_t i = 0; i < N_KEYS; i++)
		if (key_under(&schema[i], rows) &&
		    (rc = parse_key(L, &schema[i], map, p, base)))
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

static enum fs_rc parse_version(struct loader *L, const struct case_key *k,
				yaml_node_t *map, yaml_node_t *v, const char *p,
				void *base)
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

static enum fs_rc after_name(struct loader *L, const struct case_key *k,
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
static enum fs_rc parse_isa(struct loader *L, const struct case_key *k,
			    yaml_node_t *map, yaml_node_t *v, const char *p,
			    void *base)
{
	char tmp[CASE_PATH_MAX];
	char *isa = field(base, k);

	(void)map;
	if (!v)
		return FS_OK;
	if (ydoc_str(L->d, v, p, tmp, sizeof(tmp), L->err))
		return FS_EINPUT;
	if (!tmp[0])
		return ydoc_fail(L->err, L->d, v, p,
				 "must name a builtin profile or a profile .yaml file");
	if (ends_with(tmp, ".yaml") || ends_with(tmp, ".yml"))
		return resolve_path(L, v, p, tmp, isa, k->size);
	memcpy(isa, tmp, strlen(tmp) + 1);
	return FS_OK;
}

static enum fs_rc parse_softmax_scale(struct loader *L, const struct case_key *k,
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
static enum fs_rc after_soft_cap(struct loader *L, const struct case_key *k,
				 yaml_node_t *map, yaml_node_t *v, const char *p,
				 void *base)
{
	double cap = *(double *)field(base, k);

	(void)map;
	if (cap > 0 && (cap < 1e-6 || cap > 1e6))
		return ydoc_fail(L->err, L->d, v, p,
				 "must be 0 (none) or between 1e-06 and 1e+06, not %s",
				 (const char *)v->data.scalar.value);
	return FS_OK;
}

/* model: (given or not) kv_heads divides q_heads; auto softmax_scale. */
static enum fs_rc after_model(struct loader *L, const struct case_key *k,
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
static enum fs_rc parse_num_blocks(struct loader *L, const struct case_key *k,
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

static enum fs_rc after_spare_blocks(struct loader *L, const struct case_key *k,
				     yaml_node_t *cache, yaml_node_t *v,
				     const char *p, void *base)
{
	yaml_node_t *nb = ydoc_get(L->d, cache, "num_blocks");

	(void)v;
	(void)base;
	if (nb && !is_word(nb, "auto"))
		return ydoc_fail(L->err, L->d, key_node(L, cache, key_name(k)), p,
				 "only allowed with num_blocks: auto (num_blocks "
				 "is given at line %d)", ydoc_line(nb));
	return FS_OK;
}

static enum fs_rc after_k_scale(struct loader *L, const struct case_key *k,
				yaml_node_t *map, yaml_node_t *v, const char *p,
				void *base)
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

/* One sequence's sizes (not its block list). */
static enum fs_rc load_seq(struct loader *L, yaml_node_t *sn, int s)
{
	static const char *const decode_only[] = { "context", "tokens", NULL };
	static const char *const prefill_only[] = { "history", "chunk", NULL };
	const struct case_key *rk[] = {
		key_find("sequences.context"), key_find("sequences.tokens"),
		key_find("sequences.history"), key_find("sequences.chunk"),
	};
	const char *allowed[MAX_CHILDREN + 1];
	struct fs_case *c = L->c;
	struct case_seq *q = &c->seqs[s];
	int decode = c->mode == MODE_DECODE;
	const char *const *wrong = decode ? prefill_only : decode_only;
	char p[YDOC_PATH_MAX], kp[YDOC_PATH_MAX];
	yaml_node_t *k;

	ydoc_path_index(p, sizeof(p), "sequences", s);
	key_names("sequences", allowed);
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
		key_default(rk[1], q);
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
				 placement_names[c->placement]);
	}
	return FS_OK;
}

/* num_blocks: auto = needed + spare_blocks, or an integer >= needed. */
static enum fs_rc resolve_num_blocks(struct loader *L, yaml_node_t *top)
{
	struct fs_case *c = L->c;
	int needed = case_blocks_needed(c);
	yaml_node_t *cache = L->cache;
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

/*
 * placement: table: every sequence's block list. owner[b] = seq + 1.
 * Out of memory (FS_EINTERNAL) can only come from here.
 */
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

/* sequences: each item, the sums, then num_blocks and the block tables. */
static enum fs_rc parse_sequences(struct loader *L, const struct case_key *k,
				  yaml_node_t *top, yaml_node_t *v,
				  const char *p, void *base)
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
static enum fs_rc after_segment(struct loader *L, const struct case_key *k,
				yaml_node_t *map, yaml_node_t *v, const char *p,
				void *base)
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
static enum fs_rc after_decode_rows(struct loader *L, const struct case_key *k,
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
 * kernel: one key per bug class (sim/kernel.h's table), each spelled as
 * the correct value or the bug's; head_dim_loaded also takes a number.
 * And the rows under "kernel" (decode_rows), parsed first.
 */
static enum fs_rc parse_kernel(struct loader *L, const struct case_key *k,
			       yaml_node_t *top, yaml_node_t *m, const char *p,
			       void *base)
{
	const char *keys[BUG_COUNT + MAX_CHILDREN + 1];
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
	key_names(k->path, keys + nk);
	if (ydoc_check_map(L->d, m, p, keys, L->err))
		return FS_EINPUT;
	for (size_t i = 0; i < N_KEYS; i++)
		if (key_under(&schema[i], k->path) &&
		    parse_key(L, &schema[i], m, p, base))
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
static enum fs_rc parse_tensor(struct loader *L, const struct case_key *k,
			       yaml_node_t *data, yaml_node_t *m, const char *p,
			       void *base)
{
	const char *allowed[MAX_CHILDREN + 1];
	struct case_tensor *t = field(base, k);
	const struct case_key *npy = key_find("data.*.npy");

	(void)data;
	if (!m)
		return FS_OK;
	key_names(k->tmpl, allowed);
	if (ydoc_check_map(L->d, m, p, allowed, L->err))
		return FS_EINPUT;
	if (parse_key(L, npy, m, p, t))
		return FS_EINPUT;
	for (size_t i = 0; i < N_KEYS; i++)
		if (&schema[i] != npy && key_under(&schema[i], k->tmpl) &&
		    parse_key(L, &schema[i], m, p, t))
			return FS_EINPUT;
	return FS_OK;
}

static enum fs_rc parse_npy(struct loader *L, const struct case_key *k,
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
	snprintf(parent, sizeof(parent), "%.*s", (int)(strlen(p) - strlen(key_name(k)) - 1), p);
	/* Every other key of the tensor describes a generator. */
	for (size_t i = 0; i < N_KEYS; i++) {
		yaml_node_t *kn;

		if (&schema[i] == k || !key_under(&schema[i], "data.*") ||
		    !(kn = key_node(L, m, key_name(&schema[i]))))
			continue;
		ydoc_path(kp, sizeof(kp), parent, key_name(&schema[i]));
		return ydoc_fail(L->err, L->d, kn, kp,
				 "cannot be combined with npy (the tensor is read "
				 "from the file)");
	}
	if (resolve_path(L, v, p, tmp, t->npy, sizeof(t->npy)))
		return FS_EINPUT;
	/* the generator rows find nothing to parse: npy excludes them */
	return FS_OK;
}

static enum fs_rc parse_outliers(struct loader *L, const struct case_key *k,
				 yaml_node_t *m, yaml_node_t *v, const char *p,
				 void *base)
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

static enum fs_rc parse_golden(struct loader *L, const struct case_key *k,
			       yaml_node_t *top, yaml_node_t *v, const char *p,
			       void *base)
{
	struct fs_case *c = base;
	int n, x;

	(void)k;
	(void)top;
	if (!v)
		return FS_OK;
	if (is_word(v, "all")) {
		c->golden = (1u << (FS_ARRAY_LEN(golden_names) - 1)) - 1;
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
	struct loader L = { &d, c, dir, err, NULL };
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
	rc = parse_map(&L, ydoc_root(&d), "", "", c);
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

static void print_rows(FILE *f, const struct fs_case *c, const char *rows,
		       const void *base, int indent);

/* One row as "key: value" lines at indent, by its type or its hook. */
static void print_key(FILE *f, const struct fs_case *c, const struct case_key *k,
		      const void *base, int indent)
{
	const void *v = cfield(base, k);
	int x;

	if (k->flags & KEY_NOPRINT)
		return;
	if (k->print) {
		k->print(f, c, k, base, indent);
		return;
	}
	if (k->type == KEY_DOUBLE && isnan(*(const double *)v)) {
		fprintf(f, "%*s# %s: not checked\n", indent, "", key_name(k));
		return;
	}
	fprintf(f, "%*s%s:", indent, "", key_name(k));
	switch (k->type) {
	case KEY_SECTION:
		fputc('\n', f);
		print_rows(f, c, k->path, base, indent + 2);
		return;
	case KEY_INT:
		memcpy(&x, v, sizeof(x));
		fprintf(f, " %d", x);
		break;
	case KEY_U64:
		fprintf(f, " %llu", (unsigned long long)*(const uint64_t *)v);
		break;
	case KEY_DOUBLE:
		fputc(' ', f);
		print_double(f, *(const double *)v);
		break;
	case KEY_BOOL:
		fputs(*(const int *)v ? " true" : " false", f);
		break;
	case KEY_ENUM:
		memcpy(&x, v, sizeof(x));
		fprintf(f, " %s", k->names[x]);
		break;
	case KEY_STR:
		fputc(' ', f);
		print_str(f, (const char *)v);
		break;
	case KEY_HOOK:
		assert(0);	/* every hook row prints itself */
		break;
	}
	fputc('\n', f);
}

static void print_rows(FILE *f, const struct fs_case *c, const char *rows,
		       const void *base, int indent)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (key_under(&schema[i], rows))
			print_key(f, c, &schema[i], base, indent);
}

static void print_version(FILE *f, const struct fs_case *c,
			  const struct case_key *k, const void *base, int indent)
{
	(void)c;
	(void)base;
	fprintf(f, "%*s%s: 1\n", indent, "", key_name(k));
}

static void print_softmax_scale(FILE *f, const struct fs_case *c,
				const struct case_key *k, const void *base,
				int indent)
{
	(void)base;
	fprintf(f, "%*s%s: ", indent, "", key_name(k));
	if (c->softmax_scale_auto)
		fputs("auto  # ", f);
	print_double(f, c->softmax_scale);
	fputc('\n', f);
}

/* num_blocks as a number; spare_blocks lives in its comment. */
static void print_num_blocks(FILE *f, const struct fs_case *c,
			     const struct case_key *k, const void *base,
			     int indent)
{
	int needed = case_blocks_needed(c);

	(void)base;
	fprintf(f, "%*s%s: %d  # %d needed + %d spare\n", indent, "",
		key_name(k), c->num_blocks, needed, c->num_blocks - needed);
}

/* One flow mapping per sequence, in the mode's keys. */
static void print_sequences(FILE *f, const struct fs_case *c,
			    const struct case_key *k, const void *base,
			    int indent)
{
	(void)base;
	fprintf(f, "%*s%s:\n", indent, "", key_name(k));
	for (int s = 0; s < c->n_seqs; s++) {
		const struct case_seq *q = &c->seqs[s];

		if (c->mode == MODE_DECODE)
			fprintf(f, "%*s  - {context: %d, tokens: %d", indent, "",
				q->context, q->tokens);
		else
			fprintf(f, "%*s  - {history: %d, chunk: %d", indent, "",
				q->history, q->tokens);
		if (q->blocks) {
			fputs(", blocks: [", f);
			for (int i = 0; i < q->n_blocks; i++) {
				if (i && i % 16 == 0)
					fprintf(f, ",\n%*s      ", indent, "");
				else if (i)
					fputs(", ", f);
				fprintf(f, "%d", q->blocks[i]);
			}
			fputc(']', f);
		}
		fputs("}\n", f);
	}
}

/* The bug keys with the value planted (or the correct one), then rows. */
static void print_kernel(FILE *f, const struct fs_case *c,
			 const struct case_key *k, const void *base, int indent)
{
	unsigned bugs = kernel_bugs(&c->kernel, c->head_dim);

	fprintf(f, "%*s%s:\n", indent, "", key_name(k));
	for (int b = 0; b < BUG_COUNT; b++) {
		const struct kern_bug_info *bi = kernel_bug((enum kern_bug)b);
		const char *names[KERNEL_MAX_VALUES + 1];
		enum kern_bug as[KERNEL_MAX_VALUES + 1];
		int n = kernel_key_values((enum kern_bug)b, names, as), x = 0;

		if (!n)
			continue;	/* printed with the first class of its key */
		for (int i = 1; i < n; i++)
			if ((bugs >> as[i]) & 1)
				x = i;
		if (b == BUG_HEAD_DIM_LOADED && x)
			fprintf(f, "%*s  %s: %d\n", indent, "", bi->key,
				c->kernel.head_dim_loaded);
		else
			fprintf(f, "%*s  %s: %s\n", indent, "", bi->key, names[x]);
	}
	print_rows(f, c, k->path, base, indent + 2);
}

/* A tensor read from a file shows only npy; a generated one the rest. */
static void print_tensor(FILE *f, const struct fs_case *c,
			 const struct case_key *k, const void *base, int indent)
{
	const struct case_tensor *t = cfield(base, k);
	const struct case_key *npy = key_find("data.*.npy");

	fprintf(f, "%*s%s:\n", indent, "", key_name(k));
	if (t->npy[0]) {
		print_key(f, c, npy, t, indent + 2);
		return;
	}
	for (size_t i = 0; i < N_KEYS; i++)
		if (&schema[i] != npy && key_under(&schema[i], k->tmpl))
			print_key(f, c, &schema[i], t, indent + 2);
}

static void print_outliers(FILE *f, const struct fs_case *c,
			   const struct case_key *k, const void *base,
			   int indent)
{
	const struct case_tensor *t = base;

	(void)c;
	fprintf(f, "%*s%s: [", indent, "", key_name(k));
	for (int i = 0; i < t->n_outliers; i++)
		fprintf(f, "%s%d", i ? ", " : "", t->outliers[i]);
	fputs("]\n", f);
}

static void print_golden(FILE *f, const struct fs_case *c,
			 const struct case_key *k, const void *base, int indent)
{
	int first = 1;

	(void)base;
	fprintf(f, "%*s%s: [", indent, "", key_name(k));
	for (int i = 0; golden_names[i]; i++) {
		if (!(c->golden & (1u << i)))
			continue;
		fprintf(f, "%s%s", first ? "" : ", ", golden_names[i]);
		first = 0;
	}
	fputs("]\n", f);
}

void case_print(FILE *f, const struct fs_case *c)
{
	print_rows(f, c, "", c, 0);
}

/* ---- the schema, for tests and docs --------------------------------- */

/* Does any row sit under path (a mapping, not a value)? */
static int has_rows(const char *path)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (key_under(&schema[i], path))
			return 1;
	return 0;
}

/* The kernel: bug keys, each once (page_walk names two classes). */
static int kernel_keys(const char **out)
{
	const char *names[KERNEL_MAX_VALUES + 1];
	enum kern_bug as[KERNEL_MAX_VALUES + 1];
	int n = 0;

	for (int b = 0; b < BUG_COUNT; b++)
		if (kernel_key_values((enum kern_bug)b, names, as))
			out[n++] = kernel_bug((enum kern_bug)b)->key;
	return n;
}

static int add_key(char (*out)[CASE_KEY_PATH_MAX], int cap, int n,
		   const char *parent, const char *name)
{
	if (n < 0 || n >= cap)
		return -1;
	snprintf(out[n], CASE_KEY_PATH_MAX, "%s%s%s", parent, parent[0] ? "." : "",
		 name);
	return n + 1;
}

int case_schema_keys(char (*out)[CASE_KEY_PATH_MAX], int cap)
{
	const char *bugs[BUG_COUNT];
	int n = 0, nb = kernel_keys(bugs);

	for (size_t i = 0; i < N_KEYS; i++) {
		const struct case_key *k = &schema[i];

		if (k->type == KEY_SECTION || k->tmpl || has_rows(k->path) ||
		    strncmp(k->path, "data.*.", 7) == 0)
			continue;
		n = add_key(out, cap, n, "", k->path);
	}
	for (size_t i = 0; i < N_KEYS; i++)
		for (const char *t = "qkv"; *t && key_under(&schema[i], "data.*"); t++) {
			char parent[8];

			snprintf(parent, sizeof(parent), "data.%c", *t);
			n = add_key(out, cap, n, parent, key_name(&schema[i]));
		}
	for (int b = 0; b < nb; b++)
		n = add_key(out, cap, n, "kernel", bugs[b]);
	return n;
}

/* Markdown cell: the type of k. */
static const char *type_doc(const struct case_key *k)
{
	static const char *const words[] = {
		[KEY_SECTION] = "mapping", [KEY_INT] = "int", [KEY_U64] = "int",
		[KEY_DOUBLE] = "number", [KEY_BOOL] = "bool", [KEY_ENUM] = "enum",
		[KEY_STR] = "string", [KEY_HOOK] = "",
	};

	return k->type_doc ? k->type_doc : words[k->type];
}

/* Markdown cell: the range of k, from its bounds unless it says better. */
static void range_doc(FILE *f, const struct case_key *k)
{
	if (k->range_doc) {
		fputs(k->range_doc, f);
		return;
	}
	switch (k->type) {
	case KEY_INT:
	case KEY_U64:
		if (k->rule)	/* "must be a power of two ..." */
			fputs(k->rule + strlen("must be "), f);
		else
			fprintf(f, "%.0f to %.0f", k->lo, k->hi);
		break;
	case KEY_DOUBLE:
		if (k->flags & KEY_LO_OPEN)
			fprintf(f, "> %g", k->lo);
		else if (k->hi == DBL_MAX)
			fprintf(f, ">= %g", k->lo);
		else
			fprintf(f, "%g to %g", k->lo, k->hi);
		if ((k->flags & KEY_LO_OPEN) && k->hi != DBL_MAX)
			fprintf(f, ", <= %g", k->hi);
		break;
	case KEY_BOOL:
		fputs("`true`, `false`", f);
		break;
	case KEY_ENUM:
		for (int i = 0; k->names[i]; i++)
			fprintf(f, "%s`%s`", i ? ", " : "", k->names[i]);
		break;
	case KEY_STR:
		fprintf(f, "at most %zu bytes", k->size - 1);
		break;
	case KEY_SECTION:
	case KEY_HOOK:
		fputs("see below", f);
		break;
	}
}

static void default_doc(FILE *f, const struct case_key *k)
{
	if (k->required)
		fputs("required", f);
	else if (k->type == KEY_SECTION || k->tmpl || has_rows(k->path))
		fputs("see below", f);
	else if (k->flags & KEY_NAN)
		fputs("not checked", f);
	else if (k->def && k->def[0])
		fprintf(f, "`%s`", k->def);
	else if (k->def)
		fputs("`\"\"`", f);
	else
		fputs("none", f);
}

static void table_head(FILE *f)
{
	fputs("| key | type | range | default | meaning |\n"
	      "|---|---|---|---|---|\n", f);
}

static void row_doc(FILE *f, const struct case_key *k)
{
	fprintf(f, "| `%s` | %s | ", key_name(k), type_doc(k));
	range_doc(f, k);
	fputs(" | ", f);
	default_doc(f, k);
	fprintf(f, " | %s |\n", k->doc);
}

/* kernel:'s bug keys: sim/kernel.c's table, one row per key. */
static void kernel_doc(FILE *f)
{
	for (int b = 0; b < BUG_COUNT; b++) {
		const char *names[KERNEL_MAX_VALUES + 1];
		enum kern_bug as[KERNEL_MAX_VALUES + 1];
		int n = kernel_key_values((enum kern_bug)b, names, as);

		if (!n)
			continue;
		fprintf(f, "| `%s` | enum%s | ", kernel_bug((enum kern_bug)b)->key,
			b == BUG_HEAD_DIM_LOADED ? " or int" : "");
		for (int i = 0; i < n; i++)
			fprintf(f, "%s`%s`", i ? ", " : "", names[i]);
		if (b == BUG_HEAD_DIM_LOADED)
			fputs(", or 1 to head_dim", f);
		fprintf(f, " | `%s` | a bug: ", names[0]);
		for (int i = 1; i < n; i++)
			fprintf(f, "%s`%s`: %s", i > 1 ? "; " : "", names[i],
				kernel_bug(as[i])->what);
		fputs(" |\n", f);
	}
}

/* The section of rows under k, titled, after a sentence (doc). */
static void section_doc(FILE *f, const struct case_key *k, const char *title,
			const char *doc)
{
	fprintf(f, "\n## %s\n\n%c%s.\n\n", title, toupper((unsigned char)doc[0]),
		doc + 1);
	table_head(f);
	if (strcmp(k->path, "kernel") == 0)
		kernel_doc(f);
	for (size_t i = 0; i < N_KEYS; i++)
		if (key_under(&schema[i], k->tmpl ? k->tmpl : k->path))
			row_doc(f, &schema[i]);
}

void case_schema_md(FILE *f)
{
	fputs("# Case file schema\n"
	      "\n"
	      "<!-- generated by `fragsim show --schema` from the schema table in\n"
	      "tools/casefile.c; do not edit by hand: edit the table, then run\n"
	      "`build/fragsim show --schema > docs/case-schema.md`.\n"
	      "tests/test_keys.c fails when this file is not current. -->\n"
	      "\n"
	      "Every key of a case file (schema version 1): its type, the values\n"
	      "it takes, its default and what it means. The same table drives the\n"
	      "loader (unknown keys, types and ranges are errors at their\n"
	      "`file:line:col`) and `fragsim show`. Only `fragsim`, `name` and\n"
	      "`sequences` are required. Which keys change the golden tensors is\n"
	      "in docs/case-keys.md; every error class is in docs/bad-input.md.\n"
	      "\n"
	      "```console\n"
	      "$ fragsim show --schema | diff - docs/case-schema.md && echo current\n"
	      "current\n"
	      "```\n"
	      "\n"
	      "## Top level\n\n", f);
	table_head(f);
	for (size_t i = 0; i < N_KEYS; i++)
		if (key_under(&schema[i], ""))
			row_doc(f, &schema[i]);
	for (size_t i = 0; i < N_KEYS; i++) {
		const struct case_key *k = &schema[i];
		char title[YDOC_PATH_MAX + 16];

		if (k->tmpl && k != key_find("data.q"))
			continue;	/* data.k, data.v: the same rows */
		if (!k->tmpl && !has_rows(k->path))
			continue;
		if (k->tmpl)
			section_doc(f, k, "`data.q`, `data.k`, `data.v`",
				    "how each input tensor is made, every key "
				    "optional");
		else {
			snprintf(title, sizeof(title), "`%s:`", k->path);
			section_doc(f, k, title, k->doc);
		}
	}
}
