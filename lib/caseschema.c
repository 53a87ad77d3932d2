/*
 * caseschema.c - every case file key as one row of schema[] (see
 * caseschema.h for the row and its hooks): the table, the defaults it
 * gives, the value keys it accepts (case_schema_keys, walked by
 * tests/test_caseschema.c) and docs/case-schema.md (case_schema_md, printed by
 * `fragsim show --schema`).
 *
 * It exists so that a key is added in one place: a row here gives the
 * loader (casefile.c) its allowed keys, type check, bounds and message,
 * `fragsim show` (caseprint.c) its line, and the doc its table row.
 * Adding a key: add the field to struct fs_case (sim/attn/case.h), a row
 * below in file order, a row in docs/case-keys.md (what it does to the
 * goldens), then `build/fragsim show --schema > docs/case-schema.md`;
 * the tests fail until all three agree.
 *
 * Example: the row
 *
 *   INT_("quant.clip", FC(clip), 1, 127, "127", "quantized values ...")
 *
 * makes `quant: {clip: 0}` fail with "quant.clip: must be between 1 and
 * 127, not 0", prints `  clip: 127` under `quant:` in show, and writes
 * "| `clip` | int | 1 to 127 | `127` | quantized values ... |" into the
 * doc's `quant:` table.
 *
 * Invariants: rows under one parent are contiguous in file order only by
 * convention, not by need (the walks filter by parent); every enum row's
 * def is one of its names; a row with a generic type has no print hook.
 */
#include "caseschema.h"

#include <assert.h>
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "yamldoc.h"

/* Enum spellings, in enum order: parsed, printed and documented from these. */
static const char *const mode_names[] = { "decode", "prefill", NULL };
static const char *const route_names[] = { "report", "strict", NULL };
static const char *const expect_names[] = { "match", "mismatch", NULL };
static const char *const placement_names[] = {
	"contiguous", "shuffled", "reversed", "table", NULL,
};
static const char *const kscale_names[] = {
	"per_token_head", "per_block32", "per_tensor", "per_head", NULL,
};
static const char *const vdtype_names[] = { "int8", "bf16", "f32", "q8_0", "q4_0", NULL };
static const char *const vscale_names[] = { "per_token_head", "per_channel", NULL };
static const char *const window_blocks_names[] = { "keep", "free", NULL };
static const char *const rows_names[] = { "replicated", "packed", NULL };
static const char *const pv_names[] = { "f32", "int8", NULL };
static const char *const regroup_names[] = { "lds", "v_permuted", NULL };
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

static int is_pow2(int64_t x)
{
	return x > 0 && (x & (x - 1)) == 0;
}

/* head_dim: whole 16-element chunks of the K cache's [D/16][BS][16]. */
static int is_mult16(int64_t x)
{
	return x % 16 == 0;
}

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
	  .parse = casefile_parse_version, .print = caseprint_version, .type_doc = "int",
	  .range_doc = "`1`", .doc = "schema version" },
	{ "name", KEY_STR, FC(name), .required = "", .after = casefile_after_name,
	  .range_doc = "1 to 127 of `A-Z a-z 0-9 . _ -`",
	  .doc = "case name, used in reports and as a filter" },
	{ "description", KEY_STR, FC(description), .def = "",
	  .doc = "free text" },
	{ "isa", KEY_STR, FC(isa), .def = "gfx936", .parse = casefile_parse_isa,
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

	{ "model", KEY_SECTION, .after = casefile_after_model,
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
	  .parse = casefile_parse_softmax_scale, .print = caseprint_softmax_scale,
	  .type_doc = "`auto` or number", .range_doc = "> 0",
	  .doc = "score scale; `auto` = 1/sqrt(head_dim)" },
	INT_("model.sliding_window", FC(sliding_window), 0, CASE_MAX_CONTEXT, "0",
	     "sliding window W in keys: a query at position p sees keys "
	     "p-W+1 .. p (itself and the W-1 before it); 0 = none; the INT8 "
	     "path refuses any window"),
	{ "model.alibi", KEY_BOOL, FC(alibi), .def = "false",
	  .doc = "ALiBi: each score gets `slope(q head) * (key - query position)`, "
		 "after the soft cap; the INT8 path refuses it" },
	{ "model.soft_cap", KEY_DOUBLE, FC(soft_cap), .lo = 0, .hi = DBL_MAX,
	  .def = "0", .after = casefile_after_soft_cap, .range_doc = "`0`, or 1e-06 to 1e+06",
	  .doc = "logits soft cap: each score `s` becomes `soft_cap * tanh(s / "
		 "soft_cap)`; 0 = none; the INT8 path refuses it" },

	{ "cache", KEY_SECTION,
	  .doc = "the paged KV cache; \"blocks needed\" is the sum over sequences "
		 "of ceil(context / block_size)" },
	{ "cache.block_size", KEY_INT, FC(block_size), .lo = 1, .hi = 1024,
	  .ok = is_pow2, .rule = "must be a power of two between 1 and 1024",
	  .def = "16", .doc = "tokens per physical block BS" },
	{ "cache.num_blocks", KEY_HOOK, .def = "auto", .parse = casefile_parse_num_blocks,
	  .print = caseprint_num_blocks, .type_doc = "`auto` or int",
	  .range_doc = "blocks needed (at least 1) to 4194304",
	  .doc = "physical blocks NB; `auto` = blocks needed + `spare_blocks`, at "
		 "least 1 (every context 0 still gets a pool of one poisoned block); past "
		 "65,536 blocks or 256 MiB of caches, when the blocks no table names "
		 "are most of the pool or over 256 MiB, only the named blocks are "
		 "stored (a sparse pool), the rest is poison at no cost" },
	{ "cache.spare_blocks", KEY_INT, FC(spare_blocks), .lo = 0, .hi = 1024,
	  .def = "2", .flags = KEY_NOPRINT, .after = casefile_after_spare_blocks,
	  .doc = "unused (poisoned) blocks; only with `num_blocks: auto` (`show` "
		 "prints it in num_blocks' comment)" },
	{ "cache.placement", KEY_ENUM, FC(placement), .names = placement_names,
	  .def = "shuffled",
	  .doc = "how the block tables are filled; `table` = given per sequence" },
	{ "cache.k_scale", KEY_ENUM, FC(k_scale), .names = kscale_names,
	  .def = "per_token_head", .after = casefile_after_k_scale,
	  .doc = "K scale granularity" },
	{ "cache.v_dtype", KEY_ENUM, FC(v_dtype), .names = vdtype_names,
	  .def = "int8", .after = casefile_after_v_dtype,
	  .doc = "V cache element type; `q8_0`, `q4_0`: llama.cpp's blocks of 32 "
		 "dims a token with one fp16 scale (their own scale and rounding, "
		 "not quant:'s), dequantized before the f32 PV" },
	{ "cache.v_scale", KEY_ENUM, FC(v_scale), .names = vscale_names,
	  .def = "per_token_head", .flags = KEY_QUIET, .after = casefile_after_v_scale,
	  .doc = "int8 V's scale granularity (`v_dtype: int8` only): `per_token_head`, "
		 "f32 [NB, BS, Hkv], one per (token, kv head) row; `per_channel`, f32 "
		 "[Hkv, D], one static scale per (kv head, dim) over every valid token "
		 "of the case (INT8 PV then quantizes P with the fixed scale 1/clip and "
		 "applies sV per output column after the product); `show` prints it "
		 "only when set" },
	{ "cache.shuffle_cache", KEY_BOOL, FC(shuffle_cache), .def = "false",
	  .doc = "pre-permuted K cache layout (route check)" },
	{ "cache.block_stride", KEY_INT, FC(block_stride), .lo = 0, .hi = 1 << 30,
	  .ok = is_mult16, .rule = "must be a multiple of 16 (one 128-bit load)",
	  .def = "0", .flags = KEY_QUIET, .after = casefile_after_block_stride,
	  .range_doc = "`0`, or kv_heads * head_dim * block_size to 2^30, a multiple of 16",
	  .doc = "elements from one block's start to the next in k_cache and v_cache "
		 "(padded pages, or K and V interleaved in one pool); the gap is "
		 "poison; 0 = dense, kv_heads * head_dim * block_size; `show` "
		 "prints it only when set" },
	{ "cache.window_blocks", KEY_ENUM, FC(window_free), .names = window_blocks_names,
	  .def = "keep", .flags = KEY_QUIET, .after = casefile_after_window_blocks,
	  .doc = "`free`: with a sliding window, the blocks wholly behind every "
		 "query's window are unmapped as vLLM frees them (block-table "
		 "entries -1, never written), so a kernel that reads them sees "
		 "poison; needs `model.sliding_window`; `show` prints it only when set" },

	{ "sequences", KEY_HOOK, .required = "", .parse = casefile_parse_sequences,
	  .print = caseprint_sequences, .type_doc = "list of mappings",
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
	  .def = "0", .after = casefile_after_segment,
	  .range_doc = "0 to 1048576, at most 1024 segments per context",
	  .doc = "keys per split-K segment, 0 = no split" },

	{ "kernel", KEY_HOOK, .parse = casefile_parse_kernel, .print = caseprint_kernel,
	  .type_doc = "mapping",
	  .doc = "what the kernel under test assumes; every default is the "
		 "correct kernel, every other value plants one bug class "
		 "(sim/attn/kernel.c); `decode_rows` is a layout, not a bug" },
	{ "kernel.decode_rows", KEY_ENUM, FC(decode_rows), .names = rows_names,
	  .def = "replicated", .after = casefile_after_decode_rows,
	  .doc = "which q head a decode row holds: `replicated` repeats the G heads "
		 "over all 16 rows, `packed` puts head i in row i and zero-pads "
		 "the rows past G; decode only" },

	{ "pv", KEY_SECTION, .flags = KEY_QUIET, .after = casefile_after_pv,
	  .doc = "the second product, P x V (sim/attn/pv_int8.c); `show` prints "
		 "it only when a key is not its default" },
	{ "pv.mode", KEY_ENUM, FC(pv_mode), .names = pv_names, .def = "f32",
	  .flags = KEY_QUIET,
	  .doc = "`f32`: P in f32 times dequantized V, key by key; `int8`: P "
		 "quantized per (row, group of the instruction's K keys) with V's "
		 "per-token scale folded in (`v_scale: per_channel`: with the fixed "
		 "scale 1/clip), times the INT8 V cache through the "
		 "QK instruction (needs `v_dtype: int8`); adds the goldens "
		 "`p_int8`, `p_scale`, `pv_acc`, `pv_tiles`" },
	{ "pv.regroup", KEY_ENUM, FC(pv_regroup), .names = regroup_names,
	  .def = "lds", .flags = KEY_QUIET,
	  .doc = "how P reaches PV's A operand (`mode: int8` only): `lds`, "
		 "through LDS in A order; `v_permuted`, left in the C "
		 "registers with V loaded in the matching key order" },

	{ "data", KEY_SECTION, .doc = "how the input tensors are made" },
	{ "data.seed", KEY_U64, FC(seed), .lo = 0, .hi = (double)INT64_MAX,
	  .def = "0", .range_doc = "0 to 2^63-1",
	  .doc = "seed of every generated tensor" },
	{ "data.q", KEY_HOOK, FC(q), .tmpl = "data.*", .parse = casefile_parse_tensor,
	  .print = caseprint_tensor, .type_doc = "mapping", .doc = "how Q is made" },
	{ "data.k", KEY_HOOK, FC(k), .tmpl = "data.*", .parse = casefile_parse_tensor,
	  .print = caseprint_tensor, .type_doc = "mapping", .doc = "how K is made" },
	{ "data.v", KEY_HOOK, FC(v), .tmpl = "data.*", .parse = casefile_parse_tensor,
	  .print = caseprint_tensor, .type_doc = "mapping", .doc = "how V is made" },
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
	  .parse = casefile_parse_outliers, .print = caseprint_outliers,
	  .type_doc = "list of int", .range_doc = "<= 16 distinct, each < head_dim",
	  .doc = "head-dim channels scaled up" },
	DBL_("data.*.outlier_scale", TN(outlier_scale), 1, 1e4, "10",
	     "multiplier of the outlier channels"),
	{ "data.*.npy", KEY_STR, TN(npy), .def = "", .parse = casefile_parse_npy,
	  .range_doc = "path",
	  .doc = "read the logical tensor from this .npy instead: q `[S,T,Hq,D]`, "
		 "k and v `[S,MAXCTX,Hkv,D]`; no other key may be given with it" },

	{ "check", KEY_SECTION, .after = casefile_after_check,
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

	{ "golden", KEY_HOOK, .names = golden_names, .def = "[inputs, acc, out]",
	  .parse = casefile_parse_golden,
	  .print = caseprint_golden, .type_doc = "list, or `all`",
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

const char *caseschema_name(const struct case_key *k)
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

const struct case_key *caseschema_next(const struct case_key *k,
				       const char *parent)
{
	for (k = k ? k + 1 : schema; k < schema + N_KEYS; k++)
		if (key_under(k, parent))
			return k;
	return NULL;
}

const struct case_key *caseschema_find(const char *path)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (strcmp(schema[i].path, path) == 0)
			return &schema[i];
	return NULL;
}

int caseschema_names(const char *parent, const char **out)
{
	int n = 0;

	for (size_t i = 0; i < N_KEYS; i++)
		if (key_under(&schema[i], parent)) {
			assert(n < CASESCHEMA_MAX_CHILDREN);
			out[n++] = caseschema_name(&schema[i]);
		}
	out[n] = NULL;
	return n;
}

static int enum_index(const char *const *names, const char *s)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

/* k's default into its field in base (the rows whose field is generic). */
void caseschema_default(const struct case_key *k, void *base)
{
	void *f = caseschema_field(base, k);
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

void caseschema_defaults(struct fs_case *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < N_KEYS; i++) {
		const struct case_key *k = &schema[i];

		if (!k->def && !(k->flags & KEY_NAN))
			continue;
		if (strncmp(k->path, "data.*.", 7) == 0) {
			caseschema_default(k, &c->q);
			caseschema_default(k, &c->k);
			caseschema_default(k, &c->v);
		} else if (strncmp(k->path, "sequences.", 10) != 0) {
			caseschema_default(k, c);
		}
	}
	c->softmax_scale_auto = 1;	/* softmax_scale: auto */
	c->golden = GOLD_INPUTS | GOLD_ACC | GOLD_OUT;	/* golden's def */
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
			n = add_key(out, cap, n, parent, caseschema_name(&schema[i]));
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
	fprintf(f, "| `%s` | %s | ", caseschema_name(k), type_doc(k));
	range_doc(f, k);
	fputs(" | ", f);
	default_doc(f, k);
	fprintf(f, " | %s |\n", k->doc);
}

/* kernel:'s bug keys: sim/attn/kernel.c's table, one row per key. */
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
	      "lib/caseschema.c; do not edit by hand: edit the table, then run\n"
	      "`build/fragsim show --schema > docs/case-schema.md`.\n"
	      "tests/test_caseschema.c fails when this file is not current. -->\n"
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

		if (k->tmpl && k != caseschema_find("data.q"))
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
