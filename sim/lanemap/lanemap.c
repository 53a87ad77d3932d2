/*
 * lanemap.c - validation and owner look-ups of lane maps (see lanemap.h).
 *
 * The forward table says what each register slot holds; the inverse says
 * who holds each matrix entry. Both are flat arrays, built once:
 *
 *   forward  slot = lane*elems + e   ->  (row, col)
 *   inverse  (row*cols + col)*replicas + r  ->  slot
 *
 * Example, gfx936 C (elems 4): lane 17 e 2 is slot 70 and holds C[1][9];
 * the inverse of entry (1, 9) is slot 70.
 *
 * Invariant after a successful lanemap_validate: the forward table is a
 * replicas-to-one map onto the whole matrix, so the inverse is total and
 * every look-up by entry or by slot succeeds.
 */
#include "lanemap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

static const struct {
	const char *name;
	int size;
} dtypes[] = {
	[LM_I8] = { "i8", 1 },	 [LM_U8] = { "u8", 1 },
	[LM_I32] = { "i32", 4 }, [LM_F16] = { "f16", 2 },
	[LM_BF16] = { "bf16", 2 }, [LM_F32] = { "f32", 4 },
};

int lm_dtype_size(enum lm_dtype t)
{
	return dtypes[t].size;
}

const char *lm_dtype_name(enum lm_dtype t)
{
	return dtypes[t].name;
}

int lm_dtype_parse(const char *s, enum lm_dtype *out)
{
	for (size_t i = 0; i < FS_ARRAY_LEN(dtypes); i++) {
		if (strcmp(s, dtypes[i].name) == 0) {
			*out = (enum lm_dtype)i;
			return 0;
		}
	}
	return -1;
}

const char *lm_operand_name(enum lm_operand op)
{
	return op == LM_A ? "A" : op == LM_B ? "B" : "C";
}

struct lanemap *lanemap_new(void)
{
	return calloc(1, sizeof(struct lanemap));
}

void lanemap_free(struct lanemap *lm)
{
	if (!lm)
		return;
	for (int i = 0; i < LM_NOPERANDS; i++)
		free(lm->op[i].owner);
	free(lm);
}

enum fs_rc lanemap_set_operand(struct lanemap *lm, enum lm_operand op,
			       enum lm_dtype type, int elems, int replicas,
			       struct fs_err *err)
{
	struct lanemap_operand *o = &lm->op[op];
	static const int dims[3][2] = { { 'm', 'k' }, { 'k', 'n' }, { 'm', 'n' } };
	int rows, cols;

	if (lm->wave != 32 && lm->wave != 64)
		return fs_fail(err, FS_EINPUT, "wave must be 32 or 64");
	if (lm->m < 1 || lm->m > LM_MAX_DIM || lm->n < 1 || lm->n > LM_MAX_DIM ||
	    lm->k < 1 || lm->k > LM_MAX_DIM)
		return fs_fail(err, FS_EINPUT, "m, n and k must be between 1 and %d",
			       LM_MAX_DIM);
	if (elems < 1 || elems > LM_MAX_ELEMS)
		return fs_fail(err, FS_EINPUT, "elements must be between 1 and %d",
			       LM_MAX_ELEMS);
	if (replicas < 1 || replicas > LM_MAX_REPLICAS)
		return fs_fail(err, FS_EINPUT, "replicas must be between 1 and %d",
			       LM_MAX_REPLICAS);
	rows = dims[op][0] == 'm' ? lm->m : lm->k;
	cols = dims[op][1] == 'k' ? lm->k : lm->n;
	o->type = type;
	o->elems = elems;
	o->replicas = replicas;
	o->rows = rows;
	o->cols = cols;
	free(o->owner);
	o->owner = NULL;
	lm->valid = 0;
	return FS_OK;
}

enum fs_rc lanemap_eval_expr(const struct lanemap *lm, int elems,
			     const char *src, int32_t *dst, struct fs_err *err)
{
	struct expr x;
	enum fs_rc rc = expr_compile(src, &x, err);

	for (int lane = 0; !rc && lane < lm->wave; lane++) {
		for (int e = 0; !rc && e < elems; e++) {
			int64_t v;

			rc = expr_eval(&x, lane, e, &v, err);
			/* A row or col past int32 would wrap in the table and
			 * validate as some other, wrong, entry. */
			if (!rc && (v < INT32_MIN || v > INT32_MAX))
				rc = fs_fail_at(err, FS_EINPUT, NULL, 0, 1,
						"value %lld out of range at lane=%d e=%d",
						(long long)v, lane, e);
			if (!rc)
				dst[lane * elems + e] = (int32_t)v;
		}
	}
	return rc;
}

/* The geometry lanemap_set_operand gave op, or FS_EINPUT without it. */
static enum fs_rc need_geometry(const struct lanemap *lm, enum lm_operand op,
				struct fs_err *err)
{
	if (lm->op[op].elems < 1 || (lm->wave != 32 && lm->wave != 64))
		return fs_fail(err, FS_EINPUT, "operand %s has no geometry yet "
			       "(set its type and elements first)", lm_operand_name(op));
	return FS_OK;
}

enum fs_rc lanemap_set_exprs(struct lanemap *lm, enum lm_operand op,
			     const char *row, const char *col,
			     struct fs_err *err)
{
	struct lanemap_operand *o = &lm->op[op];
	enum fs_rc rc = need_geometry(lm, op, err);
	struct fs_err e = { 0 };
	const char *which = "row";
	char where[64];

	if (rc)
		return rc;
	lm->valid = 0;
	rc = lanemap_eval_expr(lm, o->elems, row, o->row, &e);
	if (!rc)
		which = "col", rc = lanemap_eval_expr(lm, o->elems, col, o->col, &e);
	if (!rc)
		return FS_OK;
	if (err) {
		*err = e;
		snprintf(where, sizeof(where), "%s.%s: at column %d of the expression",
			 lm_operand_name(op), which, e.col);
		fs_err_prefix(err, where);
	}
	return rc;
}

enum fs_rc lanemap_set_table(struct lanemap *lm, enum lm_operand op,
			     const int32_t *row, const int32_t *col,
			     struct fs_err *err)
{
	struct lanemap_operand *o = &lm->op[op];
	enum fs_rc rc = need_geometry(lm, op, err);

	if (rc)
		return rc;
	lm->valid = 0;
	memcpy(o->row, row, (size_t)lm->wave * o->elems * sizeof(*row));
	memcpy(o->col, col, (size_t)lm->wave * o->elems * sizeof(*col));
	return FS_OK;
}

static void report_add(struct lm_report *rep, const struct lm_problem *p)
{
	rep->total++;
	rep->by_kind[p->op][p->kind]++;
	if (rep->n < LM_REPORT_MAX)
		rep->p[rep->n++] = *p;
}

/* Validate one operand; builds o->owner when it is valid. */
static enum fs_rc validate_operand(struct lanemap *lm, enum lm_operand op,
				  struct lm_report *rep)
{
	struct lanemap_operand *o = &lm->op[op];
	int slots = lm->wave * o->elems;
	int entries = o->rows * o->cols;
	int before = rep->total;
	int *count, *first;

	count = calloc((size_t)entries, sizeof(*count));
	first = malloc((size_t)entries * sizeof(*first));
	if (!count || !first) {
		free(count);
		free(first);
		return FS_ENOMEM;
	}
	for (int s = 0; s < slots; s++) {
		int r = o->row[s], c = o->col[s];
		struct lm_problem p = { .kind = LM_OUT_OF_RANGE, .op = op,
					.lane = s / o->elems, .e = s % o->elems,
					.row = r, .col = c };

		if (r < 0 || r >= o->rows || c < 0 || c >= o->cols) {
			p.bad = (r < 0 || r >= o->rows) ? 'r' : 'c';
			report_add(rep, &p);
			continue;
		}
		if (count[r * o->cols + c]++ == 0)
			first[r * o->cols + c] = s;
	}
	for (int i = 0; i < entries; i++) {
		struct lm_problem p = { .op = op, .row = i / o->cols,
					.col = i % o->cols, .count = count[i] };

		if (count[i] == o->replicas)
			continue;
		p.kind = count[i] == 0 ? LM_UNOWNED : LM_OWNED_WRONG;
		if (count[i]) {
			p.lane = first[i] / o->elems;
			p.e = first[i] % o->elems;
		}
		report_add(rep, &p);
	}
	free(count);
	free(first);
	if (rep->total != before)
		return FS_MISMATCH;

	free(o->owner);
	o->owner = malloc((size_t)entries * (size_t)o->replicas *
			  sizeof(*o->owner));
	if (!o->owner)
		return FS_ENOMEM;
	{
		int fill[LM_MAX_SLOTS];	/* replicas placed; entries <= slots */

		memset(fill, 0, (size_t)entries * sizeof(fill[0]));
		for (int s = 0; s < slots; s++) {
			int i = o->row[s] * o->cols + o->col[s];

			o->owner[i * o->replicas + fill[i]++] = (int16_t)s;
		}
	}
	return FS_OK;
}

enum fs_rc lanemap_validate(struct lanemap *lm, struct lm_report *rep)
{
	enum fs_rc worst = FS_OK;

	memset(rep, 0, sizeof(*rep));
	lm->valid = 0;
	for (int op = 0; op < LM_NOPERANDS; op++) {
		enum fs_rc rc = validate_operand(lm, (enum lm_operand)op, rep);

		if (rc == FS_ENOMEM)
			return rc;
		if (rc != FS_OK)
			worst = rc;
	}
	lm->valid = worst == FS_OK;
	return worst;
}

int lanemap_owners(const struct lanemap *lm, enum lm_operand op, int row,
		   int col, int *slots, int max)
{
	const struct lanemap_operand *o = &lm->op[op];
	int n = 0;

	if (row < 0 || row >= o->rows || col < 0 || col >= o->cols)
		return 0;
	if (o->owner) {
		for (int r = 0; r < o->replicas && n < max; r++)
			slots[n++] = o->owner[(row * o->cols + col) * o->replicas + r];
		return n;
	}
	/* Not validated (e.g. printing an invalid profile): scan. */
	for (int s = 0; s < lm->wave * o->elems && n < max; s++)
		if (o->row[s] == row && o->col[s] == col)
			slots[n++] = s;
	return n;
}

void lanemap_reg_byte(const struct lanemap *lm, enum lm_operand op, int e,
		      int *reg, int *byte)
{
	int size = lm_dtype_size(lm->op[op].type);

	*reg = e * size / 4;
	*byte = size >= 4 ? 0 : e * size % 4;
}
