/*
 * yamldoc.h - a YAML document (libyaml's loader) with checked accessors.
 *
 * Profiles and cases are small, so each is loaded whole with
 * yaml_parser_load and walked as a node tree. Every accessor that can
 * fail names the node's file:line:col and its key path, e.g.
 *
 *   case.yaml:7:16: cache.block_size: must be a power of two between 1 and 1024
 *
 * libyaml's marks count from zero; ours count from one.
 */
#ifndef YAMLDOC_H
#define YAMLDOC_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "../sim/common/fs.h"

#define YDOC_PATH_MAX 128

/*
 * Limits checked on the event stream before any tree is built (see
 * ydoc_load): fragsim's inputs nest 4 levels deep and use few anchors.
 */
#define YDOC_MAX_DEPTH 64		/* nested sequences and mappings */
#define YDOC_MAX_ANCHORS 1024
#define YDOC_MAX_ALIASES 1024
#define YDOC_MAX_NODES (1 << 22)	/* nodes, every alias expanded */

struct ydoc {
	yaml_document_t doc;
	int loaded;
	char origin[256];	/* file name used in errors */
};

/*
 * Parse text (one document; an empty text is an error). Refused before
 * the tree is built: nesting over YDOC_MAX_DEPTH, too many anchors or
 * aliases, more than YDOC_MAX_NODES nodes counting each alias as the
 * nodes it names, an alias inside its own anchor. Refused after: a key
 * given twice in any mapping, a NUL character in any scalar. Errors are
 * at the offending node: "origin:line:col: key.path: message".
 */
enum fs_rc ydoc_load(struct ydoc *d, const char *text, size_t len,
		     const char *origin, struct fs_err *err);
void ydoc_free(struct ydoc *d);
yaml_node_t *ydoc_root(struct ydoc *d);

/*
 * FS_EINPUT located at node n: "origin:line:col: path: message" (path may
 * be NULL or empty).
 */
enum fs_rc ydoc_fail(struct fs_err *err, const struct ydoc *d,
		     const yaml_node_t *n, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/*
 * n must be a mapping whose keys are plain scalars, none repeated, each in
 * `allowed` (NULL-terminated). Unknown keys are errors that list the
 * allowed ones.
 */
enum fs_rc ydoc_check_map(const struct ydoc *d, yaml_node_t *n,
			  const char *path, const char *const *allowed,
			  struct fs_err *err);

/* Value of key in mapping n, or NULL. */
yaml_node_t *ydoc_get(struct ydoc *d, yaml_node_t *n, const char *key);

/* "parent.key" (or "key" at the top) into out. */
void ydoc_path(char *out, size_t len, const char *parent, const char *key);
/* "parent[i]" into out. */
void ydoc_path_index(char *out, size_t len, const char *parent, int i);

/* Scalar text, or NULL with an error when n is not a scalar. */
const char *ydoc_scalar(const struct ydoc *d, yaml_node_t *n, const char *path,
			struct fs_err *err);
enum fs_rc ydoc_str(const struct ydoc *d, yaml_node_t *n, const char *path,
		    char *out, size_t len, struct fs_err *err);
enum fs_rc ydoc_int(const struct ydoc *d, yaml_node_t *n, const char *path,
		    int64_t min, int64_t max, int64_t *out, struct fs_err *err);
enum fs_rc ydoc_double(const struct ydoc *d, yaml_node_t *n, const char *path,
		       double min, double max, double *out, struct fs_err *err);
enum fs_rc ydoc_bool(const struct ydoc *d, yaml_node_t *n, const char *path,
		     int *out, struct fs_err *err);
/* One of names[] (NULL-terminated); *out = its index. */
enum fs_rc ydoc_enum(const struct ydoc *d, yaml_node_t *n, const char *path,
		     const char *const *names, int *out, struct fs_err *err);

/* Sequence items: count and i-th node (NULL if n is not a sequence). */
int ydoc_seq_len(yaml_node_t *n);
yaml_node_t *ydoc_seq_item(struct ydoc *d, yaml_node_t *n, int i);

/* 1-based line and column of n's first character. */
int ydoc_line(const yaml_node_t *n);
int ydoc_col(const yaml_node_t *n);

#endif
