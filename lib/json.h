/*
 * json.h - a small streaming JSON writer, to a FILE* or into memory, and
 * a strict reader (at the end).
 *
 *   struct json j;
 *   json_init(&j, stdout, 1);            // 1: pretty, 2-space indent
 *   json_begin_object(&j);
 *   json_key_string(&j, "name", "qwen");
 *   json_key(&j, "shape");
 *   json_begin_array_compact(&j);        // [2, 16] on one line
 *   json_int(&j, 2);
 *   json_int(&j, 16);
 *   json_end_array(&j);
 *   json_end_object(&j);
 *   rc = json_finish(&j);                // FS_OK, or see j.err
 *
 * The writer places every comma, colon, newline and indent itself, so
 * a caller never emits a separator. Output depends only on the calls
 * made: same calls, same bytes.
 *
 * Errors are sticky: the first failure (a write error, out of memory,
 * or a call that would make invalid JSON, such as a value in an object
 * without a key) sets rc and err, and every later call does nothing.
 * The writer functions therefore return nothing; json_finish returns rc.
 *
 * Numbers: integers exactly; doubles and floats as the shortest of
 * %.15g/%.16g/%.17g (%.6g..%.9g for float) that reads back to the same
 * value, with ".0" added when the text would look like an integer; NaN
 * and +-Inf, which JSON cannot express, are written as null. Number
 * text assumes the C locale (fragsim never calls setlocale).
 *
 * Strings: '"', '\\' and control characters are escaped (\n, \t, ...,
 * other controls as \u00XX); valid UTF-8 passes through unchanged; a
 * byte that is not part of valid UTF-8 is written as \ufffd, so the
 * output is always valid JSON.
 */
#ifndef JSON_H
#define JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../sim/common/fs.h"

#define JSON_MAX_DEPTH 64

struct json {
	FILE *fp;		/* output; NULL in memory mode */
	char *buf;		/* memory mode: the text, NUL-terminated */
	size_t len, cap;	/* bytes in buf (no NUL), bytes allocated */
	int pretty;		/* 1: newlines and 2-space indent */
	int depth;		/* open containers, 0..JSON_MAX_DEPTH */
	int compact_from;	/* depth of the outermost one-line container, 0 none */
	char open[JSON_MAX_DEPTH];	/* '{' or '[' per open container */
	bool items[JSON_MAX_DEPTH];	/* the container has an item already */
	bool want_value;	/* a key was written; its value is next */
	bool done;		/* the top-level value is complete */
	bool finished;		/* json_finish ran; later calls return rc */
	enum fs_rc rc;		/* FS_OK until the first error */
	struct fs_err err;	/* the first error */
};

/* Write to fp (not closed by us); pretty 1 indents, 0 is compact. */
void json_init(struct json *j, FILE *fp, int pretty);
/* Write into a growable buffer: json_text() to read, json_free() after. */
void json_init_mem(struct json *j, int pretty);

void json_begin_object(struct json *j);
void json_end_object(struct json *j);
void json_begin_array(struct json *j);
/* An array written on one line even in pretty mode, nested values too. */
void json_begin_array_compact(struct json *j);
void json_end_array(struct json *j);

void json_key(struct json *j, const char *key);
void json_string(struct json *j, const char *s);	/* NULL: null */
void json_string_len(struct json *j, const char *s, size_t len);
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
void json_double(struct json *j, double v);
void json_float(struct json *j, float v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);

/* json_key followed by the value. */
void json_key_string(struct json *j, const char *key, const char *s);
void json_key_int(struct json *j, const char *key, int64_t v);
void json_key_uint(struct json *j, const char *key, uint64_t v);
void json_key_double(struct json *j, const char *key, double v);
void json_key_float(struct json *j, const char *key, float v);
void json_key_bool(struct json *j, const char *key, bool v);

/*
 * Check that exactly one complete value was written, end it with '\n' in
 * pretty mode (nothing in compact mode), flush a FILE* and check it.
 * Returns rc; on failure j->err says why. A second call only returns rc.
 */
enum fs_rc json_finish(struct json *j);

/* Memory mode: the text so far (NUL-terminated), *len bytes if len. */
const char *json_text(const struct json *j, size_t *len);
/* Free the memory-mode buffer; a no-op for a FILE* writer. */
void json_free(struct json *j);

/*
 * Memory mode: finish, then write the text to path atomically (path.tmp.
 * <pid>, then rename). The writer's own error, if any, is copied to err.
 * Does not free the buffer.
 */
enum fs_rc json_save(struct json *j, const char *path, struct fs_err *err);


/* ---- reader ------------------------------------------------------------ */

/*
 * A strict RFC 8259 reader into a tree, for the safetensors header:
 *
 *   struct json_value *v;
 *   rc = json_parse(text, len, "x.safetensors", 8, &v, err);
 *   const struct json_value *s = json_member(v, "shape");
 *   json_value_free(v);
 *
 * Refused, with "origin: byte N: ..." (N = base + offset in text):
 * nesting deeper than JSON_READ_MAX_DEPTH, more than
 * JSON_READ_MAX_VALUES values, a key given twice in one
 * object (readers disagree on which wins), a NUL (\u0000) or invalid
 * UTF-8 or a lone surrogate in a string, control characters, leading
 * zeros, trailing commas, comments, anything after the value but
 * whitespace. Works on any buffer (not NUL-terminated); fuzzable as is.
 */
#define JSON_READ_MAX_DEPTH 64
#define JSON_READ_MAX_VALUES (1 << 20)	/* tree nodes, ~70 bytes each */

enum json_type {
	JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING,
	JSON_ARRAY, JSON_OBJECT
};

struct json_value {
	enum json_type type;
	size_t at;			/* base + offset of its first byte */
	size_t key_at;			/* an object member: where its key starts */
	char *text;			/* STRING: decoded, NUL-free; NUMBER: as written */
	size_t len;			/* bytes in text */
	size_t n;			/* ARRAY and OBJECT: items */
	struct json_value *items;	/* n values */
	char **keys;			/* OBJECT: n keys, decoded */
};

enum fs_rc json_parse(const char *text, size_t len, const char *origin,
		      size_t base, struct json_value **out, struct fs_err *err);
void json_value_free(struct json_value *v);

/* OBJECT member by key, or NULL (also when v is not an object). */
const struct json_value *json_member(const struct json_value *v,
				     const char *key);
/* NUMBER that is a non-negative integer fitting uint64: 0, else -1. */
int json_u64(const struct json_value *v, uint64_t *out);

#endif
