/*
 * pvpass.c - the reference's two PV passes (see pvpass.h): the quantized
 * V for o and sum p |v|, and the float path's V for its o, over the rows
 * of a group, in register tiles of rows x 32 dims (ref/tile.c) whose
 * rows may see different runs of keys.
 *
 * Example (ref_segments): two rows of a tile see keys [0, 40) and
 * [0, 64) of a block of 64: the block is cut at 40, so keys [0, 40) go
 * to both rows in one call, then [40, 64) to the second alone; each row
 * adds its keys in order, and no row adds a key it does not see.
 */
#include "pvpass.h"

#include <assert.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "pool.h"
#include "tile.h"

_Static_assert(REF_PV_SLICES * TILE_SLICE == REF_PV_DIMS,
	       "a PV piece is whole TILE_SLICE slices");

/*
 * The rows of one PV tile over the keys [jb, jb + nk) of a block: row u
 * sees [a[u], b[u]) of them. Cut the block where any row's run starts
 * or ends; each piece is then seen whole by some of the rows, one call
 * for all of them, and the pieces go in key order, so each row still
 * adds its keys in order. seg[k] is piece k: keys [x, y), rows idx[0..nr).
 */
struct ref_seg {
	int x, y, nr;
	int idx[TILE_PVF_ROWS];
};

static int ref_segments(const int *a, const int *b, int nrow, struct ref_seg *seg)
{
	int cut[2 * TILE_PVF_ROWS], ncut = 0, nseg = 0;

	for (int u = 0; u < nrow; u++)
		if (a[u] < b[u]) {
			cut[ncut++] = a[u];
			cut[ncut++] = b[u];
		}
	for (int i = 1; i < ncut; i++)	/* insertion sort: at most 8 */
		for (int k = i; k > 0 && cut[k - 1] > cut[k]; k--) {
			int t = cut[k];

			cut[k] = cut[k - 1];
			cut[k - 1] = t;
		}
	for (int i = 0; i + 1 < ncut; i++) {
		struct ref_seg *sg = &seg[nseg];

		if (cut[i] == cut[i + 1])
			continue;
		sg->x = cut[i];
		sg->y = cut[i + 1];
		sg->nr = 0;
		for (int u = 0; u < nrow; u++)
			if (a[u] <= sg->x && b[u] >= sg->y)
				sg->idx[sg->nr++] = u;
		if (sg->nr)
			nseg++;
	}
	return nseg;
}

/* Rows [r0, r0 + nrow) of grp: what each sees of keys [jb, jb + nk). */
static void ref_tile_ranges(const struct fs_case *c, const struct fs_inputs *in,
			    const struct ref_group *grp, int r0, int nrow, int jb,
			    int nk, int *a, int *b)
{
	for (int u = 0; u < nrow; u++) {
		int lo, hi;

		ref_range(c, in, grp->s, grp->t[r0 + u], &lo, &hi);
		a[u] = lo > jb ? lo : jb;
		b[u] = hi < jb + nk ? hi : jb + nk;
	}
}

#ifdef __SSE2__
/*
 * dst[k * REF_PV_DIMS + e] = src[e * ss + k] for e, k < 16: the bytes of
 * 16 dims of a page's 16 slots ([d][slot]) as 16 keys' rows ([key][d]).
 * Byte (r, c) sits at bits r3 r2 r1 r0 c3 c2 c1 c0 of (register, byte);
 * one round of unpacks, register i with i + 8, rotates those 8 bits by
 * one, so four rounds give (c, r). Moves only: the plain loop's bytes.
 */
static void pv_t16(const int8_t *src, size_t ss, int8_t *dst)
{
	__m128i a[16], b[16];

	for (int e = 0; e < 16; e++)
		a[e] = _mm_loadu_si128((const __m128i *)(src + (size_t)e * ss));
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 8; i++) {
			b[2 * i] = _mm_unpacklo_epi8(a[i], a[i + 8]);
			b[2 * i + 1] = _mm_unpackhi_epi8(a[i], a[i + 8]);
		}
		for (int i = 0; i < 16; i++)
			a[i] = b[i];
	}
	for (int k = 0; k < 16; k++)
		_mm_storeu_si128((__m128i *)(dst + (size_t)k * REF_PV_DIMS), a[k]);
}
#endif

/*
 * Quantized PV, head-dim elements [d0, d1) (a multiple of 16): out and
 * out_absd of every row. REF_PV_KEYS keys at a time, each key's V made
 * once for every row that sees it: dequantized (the int8 times its
 * double scale, the key's or per_channel the dim's, is exact in double), in vb[slice][key][TILE_SLICE] so
 * that one slice of the block (16 KiB) stays in L1 while the rows go
 * over it two at a time (tile_pvq, |v| made in registers). vb is 64
 * KiB of stack, which an OpenMP thread's default stack holds.
 */
void pvpass_quant(const struct fs_case *c, const struct fs_inputs *in,
			 const struct ref_group *grp, int d0, int d1)
{
	int D = in->D, BS = in->BS, s = grp->s, g = grp->g, w = d1 - d0;
	double vb[REF_PV_SLICES][REF_PV_KEYS][TILE_SLICE];
	int8_t v8[REF_PV_KEYS][REF_PV_DIMS];

	assert(w % 16 == 0 && w <= REF_PV_DIMS);
	for (int i = 0; i < grp->rows; i++)
		for (int d = d0; d < d1; d++)
			grp->row[i].out[d] = grp->row[i].out_absd[d] = 0;
	for (int jb = grp->jlo; jb < grp->jhi; jb += REF_PV_KEYS) {
		int nk = grp->jhi - jb < REF_PV_KEYS ? grp->jhi - jb : REF_PV_KEYS;

		/* A page's V is [d][slot]: the keys of one page are copied
		 * out by rows of d (consecutive slots, consecutive bytes) into
		 * v8[key][d], then each key's bytes times its scale go to vb
		 * 16 at a time (tile_dequant). */
		for (int u = 0; u < nk;) {
			int blk, slot, run;
			size_t at;	/* V[j][g][d] is at + d * BS */

			ref_page(in, s, jb + u, &blk, &slot);
			run = BS - slot < nk - u ? BS - slot : nk - u;
			at = ref_blk0(in, blk) + ((size_t)g * D + d0) * BS + slot;
			if (c->v_dtype == VDT_INT8) {
				int e0 = 0;

#ifdef __SSE2__
				/* a run of 16 keys: 16 x 16 byte transposes
				 * (byte by byte it was most of this pass's
				 * own time) */
				if (run == 16)
					for (; e0 + 16 <= w; e0 += 16)
						pv_t16(in->v_cache_i8 + at + (size_t)e0 * BS,
						       (size_t)BS, &v8[u][e0]);
#endif
				for (int e = e0; e < w; e++) {
					const int8_t *src = in->v_cache_i8 + at + (size_t)e * BS;

					for (int k = 0; k < run; k++)
						v8[u + k][e] = src[k];
				}
				/* per_channel: v_scale_ch[g][d], no slot's */
				for (int k = 0; k < run && in->v_scale_ch; k++)
					for (int e = 0; e < w; e++)
						vb[e / TILE_SLICE][u + k][e % TILE_SLICE] =
							(double)v8[u + k][e] *
							in->v_scale_ch[(size_t)g * D + d0 + e];
				for (int k = 0; k < run && !in->v_scale_ch; k++) {
					double vs = in->v_scale[((size_t)blk * BS + slot + k) *
								in->Hkv + g];

					for (int e = 0; e < w; e += 16)
						tile_dequant(v8[u + k] + e, vs,
							     vb[e / TILE_SLICE][u + k] + e % TILE_SLICE);
				}
			} else if (c->v_dtype == VDT_Q8_0 || c->v_dtype == VDT_Q4_0) {
				/* llama.cpp's blocks, dequantized by ref/pool.c */
				for (int k = 0; k < run; k++)
					for (int e = 0; e < w; e++)
						vb[e / TILE_SLICE][u + k][e % TILE_SLICE] =
							ref_pool_vq(c, in, at + (size_t)e * BS + k,
								    ((size_t)blk * BS + slot + k) *
								    in->Hkv + g, d0 + e);
			} else {
				for (int k = 0; k < run; k++)
					for (int e = 0; e < w; e++)
						vb[e / TILE_SLICE][u + k][e % TILE_SLICE] =
							in->v_cache_f[at + (size_t)e * BS + k];
			}
			u += run;
		}
		for (int e = 0; e < w; e += TILE_SLICE) {
			int n = w - e < TILE_SLICE ? w - e : TILE_SLICE;

			for (int r0 = 0; r0 < grp->rows; r0 += TILE_PVQ_ROWS) {
				int nrow = grp->rows - r0 < TILE_PVQ_ROWS ? grp->rows - r0
									  : TILE_PVQ_ROWS;
				int a[TILE_PVQ_ROWS], b[TILE_PVQ_ROWS], nseg;
				struct ref_seg seg[2 * TILE_PVQ_ROWS];

				ref_tile_ranges(c, in, grp, r0, nrow, jb, nk, a, b);
				nseg = ref_segments(a, b, nrow, seg);
				for (int k = 0; k < nseg; k++) {
					const double *p[TILE_PVQ_ROWS];
					double *o[TILE_PVQ_ROWS], *oa[TILE_PVQ_ROWS];

					for (int q = 0; q < seg[k].nr; q++) {
						struct ref_row *r = &grp->row[r0 + seg[k].idx[q]];

						p[q] = r->prob + seg[k].x;
						o[q] = r->out + d0 + e;
						oa[q] = r->out_absd + d0 + e;
					}
					tile_pvq(seg[k].nr, seg[k].y - seg[k].x, n, p,
						 vb[e / TILE_SLICE][seg[k].x - jb], TILE_SLICE,
						 o, oa);
				}
			}
		}
	}
}

/*
 * Float-path PV, head-dim elements [d0, d1): out_f of every row, as
 * pvpass_quant, from the float V (kept, or made again by inputs_kv_get)
 * in double, the rows four at a time (tile_pvf).
 */
void pvpass_float(const struct fs_case *c, const struct fs_inputs *in,
			 const struct ref_group *grp, int d0, int d1)
{
	int s = grp->s, g = grp->g, w = d1 - d0;
	double vb[REF_PV_SLICES][REF_PV_KEYS][TILE_SLICE];
	float vfb[REF_PV_DIMS];
	uint64_t keys[REF_PV_KEYS];
	struct inputs_kv kv;	/* V's multipliers and stream key, once */

	assert(w % 16 == 0 && w <= REF_PV_DIMS);
	inputs_kv_init(&kv, c, in, 1);
	for (int i = 0; i < grp->rows; i++)
		for (int d = d0; d < d1; d++)
			grp->row[i].out_f[d] = 0;
	for (int jb = grp->jlo; jb < grp->jhi; jb += REF_PV_KEYS) {
		int nk = grp->jhi - jb < REF_PV_KEYS ? grp->jhi - jb : REF_PV_KEYS;

		double t0 = ref_sub_begin();

		inputs_kv_keys(&kv, s, jb, nk, g, keys);
		for (int u = 0; u < nk; u++) {
			const float *vf = inputs_kv_get(&kv, keys[u], s, jb + u, g, d0, w, vfb);

			/* slice by slice: a loop the compiler makes vector
			 * conversions of (with e / 32 and e % 32 in one loop it
			 * was scalar, the most of this pass's own time) */
			for (int e0 = 0; e0 < w; e0 += TILE_SLICE)
				for (int e = 0; e < TILE_SLICE && e0 + e < w; e++)
					vb[e0 / TILE_SLICE][u][e] = vf[e0 + e];
		}
		ref_sub_end(REF_STAGE_REGEN_V, t0);
		for (int e = 0; e < w; e += TILE_SLICE) {
			int n = w - e < TILE_SLICE ? w - e : TILE_SLICE;

			for (int r0 = 0; r0 < grp->rows; r0 += TILE_PVF_ROWS) {
				int nrow = grp->rows - r0 < TILE_PVF_ROWS ? grp->rows - r0
									  : TILE_PVF_ROWS;
				int a[TILE_PVF_ROWS], b[TILE_PVF_ROWS], nseg;
				struct ref_seg seg[2 * TILE_PVF_ROWS];

				ref_tile_ranges(c, in, grp, r0, nrow, jb, nk, a, b);
				nseg = ref_segments(a, b, nrow, seg);
				for (int k = 0; k < nseg; k++) {
					const double *p[TILE_PVF_ROWS];
					double *o[TILE_PVF_ROWS];

					for (int q = 0; q < seg[k].nr; q++) {
						struct ref_row *r = &grp->row[r0 + seg[k].idx[q]];

						p[q] = r->prob_f + seg[k].x;
						o[q] = r->out_f + d0 + e;
					}
					tile_pvf(seg[k].nr, seg[k].y - seg[k].x, n, p,
						 vb[e / TILE_SLICE][seg[k].x - jb], TILE_SLICE, o);
				}
			}
		}
	}
}
