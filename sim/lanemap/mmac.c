/*
 * mmac.c - the per-lane executor of one matrix instruction (see mmac.h).
 *
 * The hardware never sees matrices, only registers. So the executor first
 * reads A and B out of the lanes through the profile's inverse table (who
 * holds A[m][k]?), checking that replicas agree, then forms each C slot's
 * dot product and adds it to that slot's register:
 *
 *   lane L, element e of C holds C[i][j]  (forward table)
 *   c[L*ec + e] += sum_k A[i][k] * B[k][j]
 *
 * Reading through the profile is the point: a profile that puts an entry
 * in the wrong lane produces a different C, exactly as the chip would.
 */
#include "mmac.h"

#include <string.h>

static int32_t load8(enum lm_dtype t, uint8_t v)
{
	return t == LM_U8 ? (int32_t)v : (int32_t)(int8_t)v;
}

int mmac_read(const struct lanemap *lm, enum lm_operand op,
	      const uint8_t *regs, int32_t *mat, struct mmac_fault *fault)
{
	const struct lanemap_operand *o = &lm->op[op];
	int entries = o->rows * o->cols;

	for (int i = 0; i < entries; i++) {
		const int16_t *own = &o->owner[i * o->replicas];
		uint8_t v = regs[own[0]];

		for (int r = 1; r < o->replicas; r++) {
			if (regs[own[r]] == v)
				continue;
			if (fault) {
				fault->op = op;
				fault->row = i / o->cols;
				fault->col = i % o->cols;
				fault->slot0 = own[0];
				fault->slot1 = own[r];
				fault->v0 = load8(o->type, v);
				fault->v1 = load8(o->type, regs[own[r]]);
			}
			return -1;
		}
		mat[i] = load8(o->type, v);
	}
	return 0;
}

static int is_int8(enum lm_dtype t)
{
	return t == LM_I8 || t == LM_U8;
}

enum fs_rc mmac_exec(const struct lanemap *lm, const uint8_t *a,
		     const uint8_t *b, int32_t *c, struct mmac_fault *fault,
		     struct fs_err *err)
{
	const struct lanemap_operand *oc = &lm->op[LM_C];
	int32_t am[LM_MAX_SLOTS], bm[LM_MAX_SLOTS];

	if (!lm->valid)
		return fs_fail(err, FS_EINPUT, "%s: profile is not valid",
			       lm->name);
	if (!is_int8(lm->op[LM_A].type) || !is_int8(lm->op[LM_B].type) ||
	    oc->type != LM_I32)
		return fs_fail(err, FS_EINPUT,
			       "%s: the executor needs 8-bit A and B and i32 C",
			       lm->name);
	if (mmac_read(lm, LM_A, a, am, fault) || mmac_read(lm, LM_B, b, bm, fault))
		return fs_fail(err, FS_MISMATCH, "%s: replicas disagree",
			       lm->name);
	mmac_product(lm, am, bm, c);
	return FS_OK;
}

/*
 * A B as a matrix first, then each C slot adds its entry: a valid map
 * holds every entry at least once, so M N <= slots. Rows of B are
 * contiguous (the loop over n vectorizes), and a zero A entry adds
 * nothing: P's masked and underflowed keys, a group of one key. The sums
 * wrap mod 2^32 as the instruction's do, so their order does not matter.
 */
void mmac_product(const struct lanemap *lm, const int32_t *am,
		  const int32_t *bm, int32_t *c)
{
	const struct lanemap_operand *oc = &lm->op[LM_C];
	int slots = lm->wave * oc->elems, M = lm->m, N = lm->n, K = lm->k;
	uint32_t ab[LM_MAX_SLOTS];

	memset(ab, 0, (size_t)M * N * sizeof(ab[0]));
	for (int m = 0; m < M; m++) {
		uint32_t *row = &ab[m * N];

		for (int k = 0; k < K; k++) {
			uint32_t a = (uint32_t)am[m * K + k];
			const int32_t *brow = &bm[k * N];

			if (!a)
				continue;
			for (int n = 0; n < N; n++)
				row[n] += a * (uint32_t)brow[n];
		}
	}
	for (int s = 0; s < slots; s++)
		c[s] = (int32_t)((uint32_t)c[s] + ab[oc->row[s] * N + oc->col[s]]);
}

void mmac_scatter8(const struct lanemap *lm, enum lm_operand op,
		   const uint8_t *mat, uint8_t *regs)
{
	const struct lanemap_operand *o = &lm->op[op];

	for (int s = 0; s < lm->wave * o->elems; s++)
		regs[s] = mat[o->row[s] * o->cols + o->col[s]];
}

void mmac_scatter32(const struct lanemap *lm, enum lm_operand op,
		    const int32_t *mat, int32_t *regs)
{
	const struct lanemap_operand *o = &lm->op[op];

	for (int s = 0; s < lm->wave * o->elems; s++)
		regs[s] = mat[o->row[s] * o->cols + o->col[s]];
}

void mmac_gather32(const struct lanemap *lm, enum lm_operand op,
		   const int32_t *regs, int32_t *mat)
{
	const struct lanemap_operand *o = &lm->op[op];

	for (int s = 0; s < lm->wave * o->elems; s++)
		mat[o->row[s] * o->cols + o->col[s]] = regs[s];
}
