/*
 * caseschema.h - the case file schema as one table of rows, shared by
 * the loader (casefile.c), the printer (caseprint.c) and the doc
 * generator (caseschema.c). Not for commands: they use casefile.h.
 *
 * One row per key (redis's static_configs[] is the model):
 *
 *   path              type    lands in             bounds    default
 *   model.head_dim    int     fs_case.head_dim     16..1024  256
 *                             + rule: a multiple of 16
 *   cache.placement   enum    fs_case.placement    names[]   shuffled
 *   data.*.scale      double  case_tensor.scale    (0, 1e6]  1
 *
 * A row's parent is its path up to the last dot ("" for the top level).
 * The rows under one parent, in table order, are that mapping's allowed
 * keys, its parse order, its print order and its doc table. Offsets are
 * into struct fs_case, except under "sequences" (struct case_seq) and
 * "data.*" (struct case_tensor, used for data.q, data.k and data.v).
 * What no row can say is a hook named in the row: `parse` replaces the
 * generic parse, `after` runs once the row (a section: all its rows) is
 * parsed, `print` replaces the generic print.
 */
#ifndef CASESCHEMA_H
#define CASESCHEMA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <yaml.h>

#include "casefile.h"

#define CASESCHEMA_MAX_CHILDREN 32	/* rows under one parent */

enum case_key_type {
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
#define KEY_QUIET (1u << 3)	/* int, enum: printed only when not 0 (the
				   enum's first name), so cases
				   without it print (and their golden
				   manifests embed) the bytes they did */

struct case_loader;	/* casefile.c's parse state */
struct case_key;

/*
 * v: the key's value node (a section: its mapping; NULL when absent);
 * map: the mapping v is in; p: v's key path, for messages; base: the
 * struct the row's offset is in. Returns FS_OK, or the error with the
 * loader's fs_err filled (FS_ENOMEM only for out of memory).
 */
typedef enum fs_rc case_key_hook(struct case_loader *L, const struct case_key *k,
				 yaml_node_t *map, yaml_node_t *v, const char *p,
				 void *base);
/* Print k's line(s) of c at indent; base as for case_key_hook. */
typedef void case_print_hook(FILE *f, const struct fs_case *c,
			     const struct case_key *k, const void *base,
			     int indent);

struct case_key {
	const char *path;	/* "model.head_dim"; "data.*.scale" */
	enum case_key_type type;
	size_t off, size;	/* the field in its struct (see the top) */
	double lo, hi;		/* int, double: the range, both ends in */
	const char *const *names;	/* enum, golden: spellings, in order */
	int (*ok)(int64_t);	/* int: a rule beyond the range ... */
	const char *rule;	/* ... and its message ("must be ...") */
	const char *def;	/* the default as a file spells it */
	const char *required;	/* non-NULL: required, the missing-key note */
	unsigned flags;		/* KEY_* */
	case_key_hook *parse;	/* replaces the generic parse */
	case_key_hook *after;	/* runs after the row (section) is parsed */
	case_print_hook *print;	/* replaces the generic print */
	const char *tmpl;	/* section: its rows are under this path */
	const char *type_doc;	/* doc: the type, where not the generic one */
	const char *range_doc;	/* doc: the range, where not from the bounds */
	const char *doc;	/* one line: what the key means */
};

/* The row after k (NULL: the first) under parent, in table order; NULL
 * past the last. */
const struct case_key *caseschema_next(const struct case_key *k,
				       const char *parent);
/* The row of path, or NULL. */
const struct case_key *caseschema_find(const char *path);
/* The last component of k's path. */
const char *caseschema_name(const struct case_key *k);
/* The names of the rows under parent into out[CASESCHEMA_MAX_CHILDREN
 * + 1], NULL-terminated; returns the count. */
int caseschema_names(const char *parent, const char **out);

/* k's field in base. */
static inline void *caseschema_field(void *base, const struct case_key *k)
{
	return (char *)base + k->off;
}

static inline const void *caseschema_cfield(const void *base,
					    const struct case_key *k)
{
	return (const char *)base + k->off;
}

/* k's default into its field in base (rows with a generic type). */
void caseschema_default(const struct case_key *k, void *base);
/*
 * Zero c, then every row's default; num_blocks and softmax_scale are
 * resolved after the parse, the sequences' rows apply per item.
 */
void caseschema_defaults(struct fs_case *c);

/* The hooks the rows name (casefile.c parses, caseprint.c prints). */
case_key_hook casefile_parse_version, casefile_parse_isa,
	casefile_parse_softmax_scale, casefile_parse_num_blocks,
	casefile_parse_sequences, casefile_parse_kernel, casefile_parse_tensor,
	casefile_parse_outliers, casefile_parse_npy, casefile_parse_golden,
	casefile_after_name, casefile_after_model, casefile_after_soft_cap,
	casefile_after_spare_blocks, casefile_after_k_scale,
	casefile_after_decode_rows, casefile_after_segment,
	casefile_after_block_stride, casefile_after_window_blocks,
	casefile_after_v_dtype, casefile_after_v_scale, casefile_after_pv,
	casefile_after_check;
case_print_hook caseprint_version, caseprint_softmax_scale,
	caseprint_num_blocks, caseprint_sequences, caseprint_kernel,
	caseprint_tensor, caseprint_outliers, caseprint_golden;

#endif
