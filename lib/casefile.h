/*
 * casefile.h - case files (YAML, schema version 1) into a resolved
 * struct fs_case (sim/attn/case.h: the struct, no YAML), and back out as YAML.
 * casefile.c loads, caseprint.c prints, and both follow the one table of
 * keys in caseschema.c (docs/case-schema.md is generated from it).
 *
 * A case file, minimal:
 *
 *   fragsim: 1
 *   name: qwen35-27b-decode-4097
 *   sequences:
 *     - {context: 4097}
 *
 * Everything else has a default (docs/case-schema.md lists every key). The
 * loader rejects unknown keys, repeated keys, wrong types, out-of-range
 * values and inconsistent combinations, each as FS_EINPUT located at the
 * offending node:
 *
 *   case.yaml:7:16: cache.block_size: must be a power of two between 1 and 1024
 *
 * Relative paths in the file (an `isa:` ending in .yaml/.yml, and every
 * `data.*.npy`) are resolved against the case file's directory and stored
 * resolved, so the struct can be used from any working directory.
 */
#ifndef CASEFILE_H
#define CASEFILE_H

#include <stddef.h>
#include <stdio.h>

#include "../sim/attn/case.h"
#include "../sim/common/fs.h"

#define CASE_MAX_FILE_BYTES (1u << 20)	/* a case file */
#define CASE_MAX_BLOCKS (1 << 22)	/* cache.num_blocks */
#define CASE_MAX_KEYS_TOTAL (1 << 22)	/* sum of contexts over sequences */
#define CASE_MAX_QUERY_TOTAL (1 << 16)	/* sum of query tokens over sequences */

/* Does an isa: value name a profile file (.yaml, .yml), which the loader
 * resolves against the case's directory, rather than a builtin? */
int case_isa_is_file(const char *isa);

/*
 * Load and validate the case file at path; relative paths inside it are
 * resolved against path's directory. *c is treated as uninitialised. On
 * success the caller owns *c and releases it with case_free(). On failure
 * returns FS_EINPUT (FS_ENOMEM when out of memory), fills err and
 * leaves *c zeroed, owning nothing.
 */
enum fs_rc case_load_file(const char *path, struct fs_case *c,
			  struct fs_err *err);

/*
 * The same from text[0..len). `origin` names the text in errors and is
 * stored in c->file; `dir` is the directory relative paths are resolved
 * against (NULL, "" or "." leaves them as written).
 */
enum fs_rc case_load_text(const char *text, size_t len, const char *origin,
			  const char *dir, struct fs_case *c,
			  struct fs_err *err);

/*
 * Print c as a case file with every default filled in and every derived
 * value resolved (num_blocks as a number; auto softmax_scale with its
 * value in a comment). Loading the output (with dir NULL) gives back a
 * case equal to c, field for field, except c->file.
 */
void case_print(FILE *f, const struct fs_case *c);

/*
 * Every key path the loader accepts that holds a value (mappings left
 * out), from the schema table in caseschema.c: "model.head_dim", "data.q.scale"
 * (the data.* rows once per tensor), "kernel.c_columns" (kernel: bug keys
 * from sim/attn/kernel.c, each once). Fills out[0..cap) and returns the count,
 * or -1 when cap is too small. tests/test_caseschema.c walks them.
 */
#define CASE_KEY_PATH_MAX 64
int case_schema_keys(char (*out)[CASE_KEY_PATH_MAX], int cap);

/*
 * docs/case-schema.md: every key with its type, range, default and
 * meaning, as markdown generated from the same table (`fragsim show
 * --schema`).
 */
void case_schema_md(FILE *f);

/* The spellings the schema uses, for reports and manifests. */
const char *case_mode_name(enum case_mode m);
const char *case_placement_name(enum case_placement p);
const char *case_rounding_name(enum case_rounding r);
/* Name of golden bit i (enum case_golden is 1 << i), or NULL past the last. */
const char *case_golden_name(int bit);

#endif
