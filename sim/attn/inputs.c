/*
 * inputs.c - every tensor of one run (see inputs.h): the logical Q, K, V
 * (generated or given, BF16-rounded), Q quantized per row, and K and V
 * quantized into a paged cache whose blocks are placed per the case.
 *
 * Logical layouts (row-major, "rows" are (seq, token, head)):
 *
 *   q [S][T][Hq][D]        T = max query tokens; t >= T_s is a zero row
 *   k [S][MAXCTX][Hkv][D]  token >= context_s is a zero row
 *   v [S][MAXCTX][Hkv][D]
 *
 * Paged layouts, for block size BS and NB physical blocks:
 *
 *   block_table [S][MAXB]           physical block of logical block b, -1 past
 *   k_cache     [NB][Hkv][D/16][BS][16]   int8
 *   k_scale     [NB][BS][Hkv]             f32 (per_token_head)
 *               [1]                       f32 (per_tensor)
 *               [Hkv]                     f32 (per_head)
 *   k_scale16   [NB][BS][Hkv][D/32]       f16 bits (per_block32)
 *   v_cache_i8  [NB][Hkv][D][BS]  + v_scale [NB][BS][Hkv]    (v int8)
 *                                 or v_scale_ch [Hkv][D]     (per_channel)
 *   v_cache_f   [NB][Hkv][D][BS]                              (bf16, f32)
 *   v_cache_i8  [NB][Hkv][D][BS]  + v_scale16 [NB][BS][Hkv][D/32] f16
 *                                             (q8_0, q4_0: quant.h)
 *
 * cache.block_stride BSTR puts block b of k_cache and v_cache at element
 * b * BSTR (dense: Hkv * D * BS), so each of the two is [NB][BSTR] with a
 * block's [Hkv][D/16][BS][16] or [Hkv][D][BS] at the start of its row and
 * poison after it. E.g. Hkv 1, D 32, BS 16: dense blocks are 512 bytes;
 * BSTR 1024 puts K[token 17][dim 5] of block 1 at 1024 + (0 * 16 + 1) * 16
 * + 5 = 1045 instead of 512 + 21 = 533.
 *
 * Worked example: BS 16, two sequences with contexts 20 and 5, one spare
 * block, so NB = 2 + 1 + 1 = 4 and MAXB = 2.
 *
 *   placement    seq 0     seq 1     spare
 *   contiguous   0, 1      2         3
 *   reversed     3, 2      1         0       (the pool walked downwards)
 *   shuffled     perm[0], perm[1]  perm[2]  perm[3]
 *
 *   contiguous: block_table = {{0, 1}, {2, -1}}. K of sequence 0, token
 *   17, kv head h, dim 37 is at block 1, slot 17 % 16 = 1, chunk 37 / 16
 *   = 2, lane 37 % 16 = 5: k_cache[1][h][2][1][5], scale k_scale[1][1][h].
 *   Slots 4..15 of block 1, 5..15 of block 2 and all of block 3 hold
 *   INPUTS_POISON (-128, which the quantizer never makes) and NaN scales.
 *
 * Sparse pools. A pool past INPUTS_DENSE_BLOCKS blocks or
 * INPUTS_DENSE_POOL_BYTES stores only the blocks the tables name, in
 * ascending physical order: a pool of 4,194,304 blocks whose one sequence
 * holds blocks {4194300, 7} stores NM = 2 blocks, pool_blocks = {7,
 * 4194300}, so physical block 4194300 is stored block 1 and every array
 * is [2][...]; physical block 4194301 reads as poison and costs nothing.
 * Shuffled placement still draws its permutation over the whole pool (4
 * bytes a block, freed once the table is made), so its blocks are those
 * of the dense pool.
 *
 * Generation. Element i (the flat logical index) of tensor X is
 *   mean + scale * draw(seed, GEN_X, i)   normal: gen_normal
 *                                         uniform: 2 u - 1
 *                                         sign: +-1 from the top bit
 * times outlier_scale on the case's outlier channels, rounded to f32 and
 * then to BF16. A row may instead be all zeros or one constant (no
 * outliers: a constant row stays constant); those choices come from
 * GEN_ROWS at index ((row * 3 + tensor) * 4 + k), k = 0 zero, 1 constant,
 * 2 the constant's draw, where tensor is 0 for Q, 1 for K, 2 for V, so Q,
 * K and V rows are chosen independently. Every element is computable on
 * its own from (seed, its flat index).
 *
 * Quantization is the absmax quantizer of quant.c: per (token, head) row
 * for Q, K (per_token_head) and V; per 32 elements with the scale first
 * rounded to f16 (per_block32: the stored scale is the one used); or one
 * scale over all valid K (per_tensor); or one over all valid K of each kv
 * head (per_head: the static per-head scale of FP8-style caches). Int8 V
 * per (token, head) row, or (v_scale per_channel) with one static scale
 * per (kv head, dim) over every valid V row, each element quantized by
 * its dim's scale: V of dim 3 that is 2.54 at its largest over the case
 * gets sV = 2.54 / 127 = 0.02, and 1.0 there stores round(1.0 / 0.02) = 50.
 */
#include "inputs.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "../common/gen.h"
#include "quant.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* `omp simd` asks for vector code. At -O1 with sanitizers (make asan,
 * make fuzz) clang cannot always give it and warns; the loop computes the
 * same either way, so that warning is not an error here (as in gen.c). */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

#define F16_NAN 0x7e00u

static float f32_nan(void)
{
	uint32_t u = 0x7fc00000u;	/* one fixed NaN: same bytes everywhere */
	float x;

	memcpy(&x, &u, sizeof(x));
	return x;
}

/* ---- validation and sizes -------------------------------------------- */

static enum fs_rc check_case(const struct fs_case *c, struct fs_err *err)
{
	if (c->n_seqs < 1 || c->n_seqs > CASE_MAX_SEQS)
		return fs_fail(err, FS_EINPUT, "case has %d sequences, not 1..%d",
			       c->n_seqs, CASE_MAX_SEQS);
	if (c->q_heads < 1 || c->q_heads > CASE_MAX_HEADS ||
	    c->kv_heads < 1 || c->kv_heads > CASE_MAX_HEADS)
		return fs_fail(err, FS_EINPUT, "q_heads %d or kv_heads %d is not in 1..%d",
			       c->q_heads, c->kv_heads, CASE_MAX_HEADS);
	if (c->head_dim < 16 || c->head_dim % 16 || c->head_dim > CASE_MAX_HEAD_DIM)
		return fs_fail(err, FS_EINPUT,
			       "head_dim %d is not a multiple of 16 (the K cache chunk) in 16..%d",
			       c->head_dim, CASE_MAX_HEAD_DIM);
	if (c->k_scale == KSCALE_PER_BLOCK32 && c->head_dim % 32)
		return fs_fail(err, FS_EINPUT,
			       "head_dim %d is not a multiple of 32, needed by per_block32 K scales",
			       c->head_dim);
	if (case_v_blocks(c->v_dtype) && c->head_dim % 32)
		return fs_fail(err, FS_EINPUT,
			       "head_dim %d is not a multiple of 32, needed by q8_0 and q4_0 V",
			       c->head_dim);
	if (c->v_scale == VSCALE_PER_CHANNEL && c->v_dtype != VDT_INT8)
		return fs_fail(err, FS_EINPUT,
			       "v_scale per_channel scales the int8 V cache; this V is not int8");
	if (c->block_size < 1 || c->block_size > CASE_MAX_CONTEXT ||
	    c->num_blocks < 1)
		return fs_fail(err, FS_EINPUT,
			       "block_size %d or num_blocks %d is out of range",
			       c->block_size, c->num_blocks);
	if (c->block_stride != 0 &&
	    (c->block_stride % 16 ||
	     (long)c->block_stride < (long)c->kv_heads * c->head_dim * c->block_size))
		return fs_fail(err, FS_EINPUT,
			       "block_stride %d is not 0 or a multiple of 16 of at least one block's %ld elements",
			       c->block_stride, (long)c->kv_heads * c->head_dim * c->block_size);
	if (c->clip < 1 || c->clip > 127)
		return fs_fail(err, FS_EINPUT, "clip %d is not in 1..127", c->clip);
	for (int s = 0; s < c->n_seqs; s++) {
		const struct case_seq *sq = &c->seqs[s];

		if (sq->context < 0 || sq->context > CASE_MAX_CONTEXT ||
		    sq->tokens < 0 || sq->tokens > CASE_MAX_TOKENS)
			return fs_fail(err, FS_EINPUT,
				       "sequence %d: context %d or tokens %d is out of range",
				       s, sq->context, sq->tokens);
	}
	if (c->placement != PLACE_TABLE &&
	    case_blocks_needed(c) > c->num_blocks)
		return fs_fail(err, FS_EINPUT,
			       "cache has %d blocks, the sequences need %d",
			       c->num_blocks, case_blocks_needed(c));
	return FS_OK;
}

/* Element counts of every tensor (see the layouts at the top). */
struct counts {
	size_t q;	/* S*T*Hq*D: q and q_int8 */
	size_t kv;	/* S*MAXCTX*Hkv*D: k and v */
	size_t rows;	/* S*T*Hq: q_scale */
	size_t cache;	/* NB*Hkv*D*BS (NB*BSTR when set): k_cache, v_cache_* */
	size_t slots;	/* NB*BS*Hkv: k_scale, v_scale */
	size_t k16;	/* NB*BS*Hkv*(D/32): k_scale16 */
	size_t table;	/* S*MAXB */
	size_t pos;	/* S*T */
};

/* Product of n int dims; -1 on overflow. */
static int count_of(size_t *out, int n, const int *dims)
{
	size_t d[4];

	assert(n <= 4);
	for (int i = 0; i < n; i++)
		d[i] = (size_t)dims[i];
	return fs_size_prod(d, n, SIZE_MAX, out);
}

/*
 * Count every tensor and the bytes of those this case allocates; -1 on
 * size_t overflow. *gib gets the same total in GiB, computed in double
 * so the message can say how far over the limit a case is.
 */
/* Add count elements of elem bytes to *bytes (checked) and *gib. */
static void add_bytes(size_t count, size_t elem, size_t *bytes, double *gib,
		      int *bad)
{
	size_t b;

	*gib += (double)count * (double)elem / (double)(1u << 30);
	if (fs_size_mul(count, elem, &b) || fs_size_add(*bytes, b, bytes))
		*bad = 1;
}

static int count_bytes(const struct fs_case *c, const struct fs_inputs *in,
		       struct counts *n, size_t *bytes, double *gib)
{
	const int qd[] = { in->S, in->T, in->Hq, in->D };
	const int kd[] = { in->S, in->MAXCTX, in->Hkv, in->D };
	/* the stored blocks only: a sparse pool's others cost nothing */
	const int cd[] = { in->NM, in->Hkv, in->D, in->BS };
	size_t pool;
	const int sd[] = { in->NM, in->BS, in->Hkv, in->D / 32 };
	const int td[] = { in->S, in->MAXB };
	int bad = 0;

	bad |= count_of(&n->q, 4, qd);
	bad |= count_of(&n->kv, 4, kd);
	bad |= count_of(&n->rows, 3, qd);
	bad |= count_of(&n->cache, 4, cd);
	/* a padded pool: NB rows of BSTR elements */
	if (in->BSTR && fs_size_mul((size_t)in->NM, in->BSTR, &pool) == 0)
		n->cache = pool;
	else if (in->BSTR)
		bad = 1;
	bad |= count_of(&n->slots, 3, sd);
	bad |= count_of(&n->k16, 4, sd);
	bad |= count_of(&n->table, 2, td);
	bad |= count_of(&n->pos, 2, qd);
	if (bad)
		return -1;

	*bytes = 0;
	*gib = 0.0;
	add_bytes(n->q, sizeof(float), bytes, gib, &bad);	/* q */
	add_bytes(n->kv, sizeof(float), bytes, gib, &bad);	/* k */
	add_bytes(n->kv, sizeof(float), bytes, gib, &bad);	/* v */
	add_bytes(n->q, 1, bytes, gib, &bad);			/* q_int8 */
	add_bytes(n->rows, sizeof(float), bytes, gib, &bad);	/* q_scale */
	add_bytes(n->cache, 1, bytes, gib, &bad);		/* k_cache */
	if (c->k_scale == KSCALE_PER_TOKEN_HEAD)
		add_bytes(n->slots, sizeof(float), bytes, gib, &bad);
	else if (c->k_scale == KSCALE_PER_TENSOR)
		add_bytes(1, sizeof(float), bytes, gib, &bad);
	else if (c->k_scale == KSCALE_PER_HEAD)
		add_bytes((size_t)in->Hkv, sizeof(float), bytes, gib, &bad);
	else
		add_bytes(n->k16, sizeof(uint16_t), bytes, gib, &bad);
	if (c->v_dtype == VDT_INT8) {
		add_bytes(n->cache, 1, bytes, gib, &bad);	/* v_cache_i8 */
		add_bytes(c->v_scale == VSCALE_PER_CHANNEL ? (size_t)in->Hkv * (size_t)in->D :
			  n->slots, sizeof(float), bytes, gib, &bad);
	} else if (case_v_blocks(c->v_dtype)) {
		add_bytes(n->cache, 1, bytes, gib, &bad);	/* v_cache_i8 */
		add_bytes(n->k16, sizeof(uint16_t), bytes, gib, &bad);	/* v_scale16 */
	} else {
		add_bytes(n->cache, sizeof(float), bytes, gib, &bad);
	}
	add_bytes(n->table, sizeof(int32_t), bytes, gib, &bad);
	add_bytes((size_t)in->S, sizeof(int32_t), bytes, gib, &bad);
	add_bytes(n->pos, sizeof(int32_t), bytes, gib, &bad);
	return bad ? -1 : 0;
}

/*
 * Arrays of 4 MiB or more go on 2 MiB pages where the system allows
 * (fs_advise_huge): decode streams K and V from shuffled 4 KiB blocks,
 * and filling them faults 512 times less often. calloc leaves fresh mmap
 * memory untouched, so the advice comes before the first fault.
 */
/* calloc that never asks for 0 bytes and records a failure in *bad. */
static void *alloc_n(size_t count, size_t elem, int *bad)
{
	void *p = calloc(count ? count : 1, elem);

	if (!p)
		*bad = 1;
	else if (count > 0)
		fs_advise_huge(p, count * elem);
	return p;
}

/* Pieces the poison fills are shared out in: the first touch of a fresh
 * page (the kernel zeroing it) then happens on every thread, not on one;
 * the caches' fill was the serial part of a long decode's input stage. */
#define FILL_PIECE ((size_t)1 << 20)

static void fill_f32(float *p, size_t n, float x)
{
	size_t np = (n + FILL_PIECE - 1) / FILL_PIECE;

#pragma omp parallel for schedule(static)
	for (size_t k = 0; k < np; k++)
		for (size_t i = k * FILL_PIECE; i < n && i < (k + 1) * FILL_PIECE; i++)
			p[i] = x;
}

static void fill_bytes(void *p, unsigned char x, size_t n)
{
	size_t np = (n + FILL_PIECE - 1) / FILL_PIECE;

#pragma omp parallel for schedule(static)
	for (size_t k = 0; k < np; k++)
		memset((unsigned char *)p + k * FILL_PIECE, x,
		       n - k * FILL_PIECE < FILL_PIECE ? n - k * FILL_PIECE : FILL_PIECE);
}

/* ---- block placement --------------------------------------------------- */

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/*
 * A sparse pool's stored blocks: the table's entries, ascending, into
 * in->pool_blocks [NM]. Two entries naming one block are the error the
 * dense pool's owner array reports, found here by the sort.
 */
static enum fs_rc store_blocks(struct fs_inputs *in, struct fs_err *err)
{
	int m = 0;

	for (size_t i = 0; i < (size_t)in->S * (size_t)in->MAXB; i++)
		if (in->block_table[i] >= 0)
			in->pool_blocks[m++] = in->block_table[i];
	assert(m == in->NM);
	qsort(in->pool_blocks, (size_t)m, sizeof(int32_t), cmp_i32);
	for (int i = 1; i < m; i++) {
		int32_t id = in->pool_blocks[i];
		int first = -1;

		if (id != in->pool_blocks[i - 1])
			continue;
		/* name the second use in table order, as the owner check does */
		for (int s = 0; s < in->S; s++)
			for (int b = 0; b < in->MAXB; b++) {
				if (in->block_table[(size_t)s * in->MAXB + b] != id)
					continue;
				if (first < 0) {
					first = s;
					continue;
				}
				return fs_fail(err, FS_EINPUT,
					       "sequence %d block %d: physical block %d is already used by sequence %d",
					       s, b, id, first);
			}
	}
	return FS_OK;
}

/*
 * Fill block_table. scratch holds a permutation (shuffled) and the owner
 * of each physical block, which catches a table that reuses or overruns
 * blocks (the other placements cannot, by design): NB ints each, and no
 * owners for a sparse pool (store_blocks checks it).
 */
static enum fs_rc place_blocks(const struct fs_case *c, struct fs_inputs *in,
			       int *scratch, struct fs_err *err)
{
	int NB = in->NB, *perm = scratch, *owner = in->pool_blocks ? NULL : scratch + NB;
	int next = 0;

	for (int i = 0; perm && i < NB; i++)
		perm[i] = i;
	for (int i = 0; owner && i < NB; i++)
		owner[i] = -1;
	if (c->placement == PLACE_SHUFFLED) {
		/* Fisher-Yates over the whole pool, so spares land anywhere. */
		for (int i = NB - 1; i > 0; i--) {
			uint64_t j = gen_u64(c->seed, GEN_BLOCKS, (uint64_t)i) %
				     (uint64_t)(i + 1);
			int t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
	}
	for (size_t i = 0; i < (size_t)in->S * (size_t)in->MAXB; i++)
		in->block_table[i] = -1;
	for (int s = 0; s < in->S; s++) {
		int nb = case_blocks_of(c, s);

		if (c->placement == PLACE_TABLE &&
		    (!c->seqs[s].blocks || c->seqs[s].n_blocks < nb))
			return fs_fail(err, FS_EINPUT,
				       "sequence %d: block table has %d blocks, context %d needs %d",
				       s, c->seqs[s].blocks ? c->seqs[s].n_blocks : 0,
				       c->seqs[s].context, nb);
		for (int b = 0; b < nb; b++) {
			int id;

			switch (c->placement) {
			case PLACE_REVERSED: id = NB - 1 - next++; break;
			case PLACE_TABLE: id = c->seqs[s].blocks[b]; break;
			case PLACE_SHUFFLED: id = perm[next++]; break;
			case PLACE_CONTIGUOUS:
			default: id = next++; break;
			}
			if (id < 0 || id >= NB)
				return fs_fail(err, FS_EINPUT,
					       "sequence %d block %d: physical block %d is not in 0..%d",
					       s, b, id, NB - 1);
			if (owner && owner[id] >= 0)
				return fs_fail(err, FS_EINPUT,
					       "sequence %d block %d: physical block %d is already used by sequence %d",
					       s, b, id, owner[id]);
			if (owner)
				owner[id] = s;
			in->block_table[(size_t)s * in->MAXB + b] = id;
		}
		/* window_blocks free: placed as with keep, then unmapped */
		for (int b = 0; b < inputs_blocks_freed(c, s); b++)
			in->block_table[(size_t)s * in->MAXB + b] = -1;
	}
	return in->pool_blocks ? store_blocks(in, err) : FS_OK;
}

/* ---- logical data ------------------------------------------------------ */

/* How one logical tensor is made: its spec, stream and per-channel
 * multipliers, or the given values. */
struct maker {
	const struct fs_case *c;
	const struct case_tensor *spec;
	uint64_t stream;
	enum gen_dist dist;
	const float *given;		/* [S][R][H][D] or NULL */
	float mult[CASE_MAX_HEAD_DIM];
};

static void maker_init(struct maker *m, const struct fs_case *c,
		       const struct case_tensor *spec, uint64_t stream,
		       const float *given)
{
	m->c = c, m->spec = spec, m->stream = stream;
	m->given = given;
	m->dist = spec->dist == DIST_UNIFORM ? GEN_DIST_UNIFORM :
		  spec->dist == DIST_SIGN ? GEN_DIST_SIGN : GEN_DIST_NORMAL;
	for (int d = 0; d < c->head_dim; d++)
		m->mult[d] = 1.0f;
	for (int i = 0; i < spec->n_outliers && i < CASE_MAX_OUTLIERS; i++)
		if (spec->outliers[i] >= 0 && spec->outliers[i] < c->head_dim)
			m->mult[spec->outliers[i]] = (float)spec->outlier_scale;
}

/*
 * Logical row (s, r, h) of a tensor with R rows per sequence and H heads
 * into x[D]: given values or the generator's (docs/generator.md),
 * BF16-rounded. A generated row is a pure function of (seed, tensor, s,
 * r, h), so it can be made on any thread, at any time, as often as
 * needed: the same bits.
 */
/* Dims d0 .. d0 + n - 1 of the generated row whose key is key: a zero
 * or constant row as the case's fractions choose, else the generator's
 * values (docs/generator.md). */
static void gen_part(const struct case_tensor *spec, enum gen_dist dist,
		     const float *mult, uint64_t key, int d0, int n, float *x)
{
	uint64_t choice;

	if (spec->zero_rows > 0 || spec->constant_rows > 0) {
		choice = gen_row_choice(key);
		if ((double)(choice >> 32) * 0x1.0p-32 < spec->zero_rows) {
			memset(x, 0, (size_t)n * sizeof(*x));
			return;
		}
		if ((double)(choice & 0xffffffffu) * 0x1.0p-32 < spec->constant_rows) {
			/* No outliers: a constant row stays constant. */
			float cv = quant_bf16_round((float)spec->mean + (float)spec->scale *
						    gen_row_draw0(key, dist));

			for (int i = 0; i < n; i++)
				x[i] = cv;
			return;
		}
	}
	gen_row_part(key, dist, (float)spec->mean, (float)spec->scale, mult, d0, n, x);
}

static void make_row_part(const struct maker *m, int s, int r, int h, int R,
			  int H, int d0, int n, float *x)
{
	const struct fs_case *c = m->c;
	int D = c->head_dim;

	if (m->given) {
		size_t base = (((size_t)s * (size_t)R + (size_t)r) * (size_t)H +
			       (size_t)h) * (size_t)D + (size_t)d0;

		for (int i = 0; i < n; i++)
			x[i] = quant_bf16_round(m->given[base + i]);
		return;
	}
	gen_part(m->spec, m->dist, m->mult,
		 gen_row_key(c->seed, m->stream, (uint64_t)s, (uint64_t)r, (uint64_t)h),
		 d0, n, x);
}

static void make_row(const struct maker *m, int s, int r, int h, int R, int H,
		     float *x)
{
	make_row_part(m, s, r, h, R, H, 0, m->c->head_dim, x);
}

/*
 * Fill the logical tensor x [S][R][H][D] (R rows per sequence, of which
 * valid[s] are real; the rest stay zero, x is zeroed already).
 */
static void make_logical(const struct maker *m, float *x, int R, int H,
			 const int *valid)
{
	int D = m->c->head_dim;

	for (int s = 0; s < m->c->n_seqs; s++)
#pragma omp parallel for schedule(static)
		for (int rh = 0; rh < valid[s] * H; rh++) {
			size_t row = ((size_t)s * (size_t)R + (size_t)(rh / H)) *
				     (size_t)H + (size_t)(rh % H);

			make_row(m, s, rh / H, rh % H, R, H, x + row * (size_t)D);
		}
}

/* ---- quantization into the caches -------------------------------------- */

static size_t slot_index(const struct fs_inputs *in, int blk, int slot, int h)
{
	return ((size_t)blk * (size_t)in->BS + (size_t)slot) * (size_t)in->Hkv +
	       (size_t)h;
}

/* k_cache offset of chunk c (16 dims) of (blk, slot, h). */
static size_t k_chunk(const struct fs_inputs *in, int blk, int slot, int h, int c)
{
	return (size_t)blk * inputs_block_elems(in) +
	       (((size_t)h * (size_t)(in->D / 16) + (size_t)c) * (size_t)in->BS +
		(size_t)slot) * 16;
}

/* Quantize one logical K row into the cache; tensor_scale for per_tensor
 * and per_head (the row's head's scale). */
static void put_k_row(const struct fs_case *c, struct fs_inputs *in,
		      const float *row, int blk, int slot, int h,
		      float tensor_scale)
{
	int D = in->D;
	size_t si = slot_index(in, blk, slot, h);
	int8_t q[CASE_MAX_HEAD_DIM];

	if (c->k_scale == KSCALE_PER_BLOCK32) {
		for (int kb = 0; kb < D / 32; kb++) {
			uint16_t h16 = quant_f32_to_f16(quant_scale(row + 32 * kb, 32, c->clip));
			float sc = quant_f16_to_f32(h16);

			in->k_scale16[si * (size_t)(D / 32) + (size_t)kb] = h16;
			for (int half = 0; half < 2; half++) {
				int ch = 2 * kb + half;

				quant_apply(row + 16 * ch, 16, sc, c->clip, c->rounding,
					    in->k_cache + k_chunk(in, blk, slot, h, ch));
			}
		}
		return;
	}
	if (c->k_scale == KSCALE_PER_TOKEN_HEAD) {
		tensor_scale = quant_scale(row, D, c->clip);
		in->k_scale[si] = tensor_scale;
	}
	/* One scale for the row: quantized in one call (element by element,
	 * so the same bytes as a call a chunk, without 16 calls' overhead),
	 * then its chunks moved to their places, BS * 16 bytes apart. */
	quant_apply(row, D, tensor_scale, c->clip, c->rounding, q);
	for (int ch = 0; ch < D / 16; ch++)
		memcpy(in->k_cache + k_chunk(in, blk, slot, h, ch), q + 16 * ch, 16);
}

/* Keys whose int8 V is stored together (put_v_run). */
#define FILL_RUN 16

/* Quantize one logical V row: its scale into the cache, its int8 values
 * into q[D] for put_v_run (int8 V); f32 V goes straight in. */
static void put_v_row(const struct fs_case *c, struct fs_inputs *in,
		      const float *row, int blk, int slot, int h, int8_t *q)
{
	int D = in->D;
	size_t base = (size_t)blk * inputs_block_elems(in) +
		      (size_t)h * (size_t)D * (size_t)in->BS;

	if (c->v_dtype == VDT_INT8 && c->v_scale == VSCALE_PER_CHANNEL) {
		quant_apply_each(row, D, &in->v_scale_ch[(size_t)h * (size_t)D], c->clip,
				 c->rounding, q);
	} else if (c->v_dtype == VDT_INT8) {
		float sc = quant_scale(row, D, c->clip);

		in->v_scale[slot_index(in, blk, slot, h)] = sc;
		quant_apply(row, D, sc, c->clip, c->rounding, q);
	} else if (case_v_blocks(c->v_dtype)) {
		uint16_t *d16 = &in->v_scale16[slot_index(in, blk, slot, h) * (size_t)(D / 32)];

		for (int kb = 0; kb < D / 32; kb++)
			(c->v_dtype == VDT_Q8_0 ? quant_q8_0_block : quant_q4_0_block)(
				row + 32 * kb, &d16[kb], q + 32 * kb);
	} else {
		for (int d = 0; d < D; d++)
			in->v_cache_f[base + (size_t)d * (size_t)in->BS + (size_t)slot] = row[d];
	}
}

#ifdef __SSE2__
/*
 * 16 x 16 bytes: dst[c * ds + r] = src[r * ss + c]. SSE2 is part of
 * x86-64, so no CPU check. The same step four times: row i interleaved
 * with row i + 8 (unpack of bytes, low and high halves) puts element
 * (r, c) into register 2 (r & 7) + c3, at byte 2 (c & 7) + r3. Written
 * as the 8 bits r3 r2 r1 r0 c3 c2 c1 c0 (register, byte), that is a
 * rotation left by one; four of them give c, r: the transpose. Moves
 * only, so the bytes are those of the plain loop.
 */
static void transpose16(const int8_t *src, size_t ss, int8_t *dst, size_t ds)
{
	__m128i a[16], b[16];

	for (int r = 0; r < 16; r++)
		a[r] = _mm_loadu_si128((const __m128i *)(src + r * ss));
	for (int step = 0; step < 4; step++) {
		for (int i = 0; i < 8; i++) {
			b[2 * i] = _mm_unpacklo_epi8(a[i], a[i + 8]);
			b[2 * i + 1] = _mm_unpackhi_epi8(a[i], a[i + 8]);
		}
		memcpy(a, b, sizeof(a));
	}
	for (int c = 0; c < 16; c++)
		_mm_storeu_si128((__m128i *)(dst + c * ds), a[c]);
}
#endif

/* The int8 V of n keys in slots slot0 .. of block blk, q[i] from
 * put_v_row: v_cache_i8[blk][h][d][slot], n consecutive bytes per d.
 * A whole run is a transpose of 16 x 16 byte blocks: byte by byte it
 * was a fifth of a long decode's input stage. */
static void put_v_run(const struct fs_case *c, struct fs_inputs *in, int blk,
		      int slot0, int n, int h, int8_t q[][CASE_MAX_HEAD_DIM])
{
	int D = in->D, d = 0;
	size_t base = ((size_t)blk * (size_t)in->Hkv + (size_t)h) * (size_t)D;
	int8_t *dst0;

	/* bf16 and f32 V have no int8 cache: v_cache_i8 is NULL, and even
	 * forming NULL + offset is undefined (clang's UBSan stops on it). */
	if (!case_v_bytes(c->v_dtype))
		return;
	dst0 = in->v_cache_i8 + base * (size_t)in->BS + (size_t)slot0;
#ifdef __SSE2__
	if (n == 16)
		for (; d + 16 <= D; d += 16)
			transpose16(&q[0][d], CASE_MAX_HEAD_DIM,
				    dst0 + (size_t)d * (size_t)in->BS, (size_t)in->BS);
#endif
	for (; d < D; d++) {
		int8_t *dst = dst0 + (size_t)d * (size_t)in->BS;

		for (int i = 0; i < n; i++)
			dst[i] = q[i][d];
	}
}

static void poison_caches(const struct fs_case *c, struct fs_inputs *in,
			  const struct counts *n)
{
	fill_bytes(in->k_cache, (unsigned char)INPUTS_POISON, n->cache);
	if (c->k_scale == KSCALE_PER_TOKEN_HEAD)
		fill_f32(in->k_scale, n->slots, f32_nan());
	if (c->k_scale == KSCALE_PER_BLOCK32)
		for (size_t i = 0; i < n->k16; i++)
			in->k_scale16[i] = F16_NAN;
	if (c->v_dtype == VDT_INT8) {
		fill_bytes(in->v_cache_i8, (unsigned char)INPUTS_POISON, n->cache);
		if (in->v_scale)	/* per_channel's scales have no slots */
			fill_f32(in->v_scale, n->slots, f32_nan());
	} else if (case_v_blocks(c->v_dtype)) {
		fill_bytes(in->v_cache_i8, (unsigned char)INPUTS_POISON, n->cache);
		for (size_t i = 0; i < n->k16; i++)
			in->v_scale16[i] = F16_NAN;
	} else {
		fill_f32(in->v_cache_f, n->cache, f32_nan());
	}
}

/*
 * Absmax over every valid K element (rows past a context are zero) of kv
 * head only (-1: of every head), from the logical K or, when it is not
 * kept, from rows made again.
 */
static float k_absmax(const struct fs_inputs *in, const struct fs_case *c,
		      const struct maker *mk, int only)
{
	float amax = 0.0f, buf[CASE_MAX_HEAD_DIM];

	for (int s = 0; s < in->S; s++)
		for (int j = 0; j < c->seqs[s].context; j++)
			for (int h = only < 0 ? 0 : only;
			     h < (only < 0 ? in->Hkv : only + 1); h++) {
				size_t row = ((size_t)s * (size_t)in->MAXCTX + (size_t)j) *
					     (size_t)in->Hkv + (size_t)h;
				const float *x = in->k ? in->k + row * (size_t)in->D : buf;
				float a;

				if (!in->k)
					make_row(mk, s, j, h, in->MAXCTX, in->Hkv, buf);
				/* absmax / 1 is exactly the absmax */
				a = quant_scale(x, in->D, 1);
				if (a > amax)
					amax = a;
			}
	return amax;
}

/* Keys of every sequence in one piece of v_chan_scales; at most
 * CHAN_PIECES pieces, so their partial maxima stay small. */
#define CHAN_KEYS 512
#define CHAN_PIECES 64

/* |x| into amax[h][d] as quant_scale takes it, on the bits: for
 * non-negative floats the integer order is the float order, and a NaN
 * counts 0 (never wins); integer max vectorises. Over the V rows of keys
 * [k0, k1) of all sequences in order, every kv head. */
static void v_chan_piece(const struct fs_inputs *in, const struct fs_case *c,
			 const struct maker *mk, long k0, long k1, uint32_t *amax)
{
	float buf[CASE_MAX_HEAD_DIM];
	long base = 0;
	int D = in->D;

	for (int s = 0; s < in->S; s++) {
		long ctx = c->seqs[s].context;

		for (long g = k0 > base ? k0 : base; g < k1 && g < base + ctx; g++)
			for (int h = 0; h < in->Hkv; h++) {
				int j = (int)(g - base);
				size_t row = ((size_t)s * (size_t)in->MAXCTX + (size_t)j) *
					     (size_t)in->Hkv + (size_t)h;
				const float *x = in->v ? in->v + row * (size_t)D : buf;
				uint32_t *am = amax + (size_t)h * (size_t)D;

				if (!in->v)
					make_row(mk, s, j, h, in->MAXCTX, in->Hkv, buf);
#pragma omp simd
				for (int d = 0; d < D; d++) {
					uint32_t a;

					memcpy(&a, &x[d], sizeof(a));
					a &= 0x7fffffffu;
					a = a > 0x7f800000u ? 0 : a;
					am[d] = a > am[d] ? a : am[d];
				}
			}
		base += ctx;
	}
}

/*
 * v_scale per_channel: sV[h][d] = absmax over every valid V row of kv
 * head h, dim d / clip, into in->v_scale_ch (a static scale, as a
 * deployment calibrates it; a dim zero everywhere gets 0 and stores 0).
 * The keys of all sequences are cut into pieces, each piece's maxima
 * taken on its own thread, then combined: a max does not depend on the
 * order, so neither does the result. Without memory for the pieces, one
 * pass on this thread gives the same maxima.
 */
static void v_chan_scales(const struct fs_inputs *in, const struct fs_case *c,
			  const struct maker *mk)
{
	size_t hd = (size_t)in->Hkv * (size_t)in->D;
	long keys = 0, per;
	int np;
	uint32_t *part, *amax;

	for (int s = 0; s < in->S; s++)
		keys += c->seqs[s].context;
	per = (keys + CHAN_PIECES - 1) / CHAN_PIECES;
	per = per < CHAN_KEYS ? CHAN_KEYS : per;
	np = (int)((keys + per - 1) / per);
	part = calloc((size_t)(np > 1 ? np + 1 : 1) * hd, sizeof(uint32_t));
	amax = part;	/* the maxima, piece 0's row when there are pieces */
	if (!part) {
		/* v_scale_ch is float-sized: it holds the bits until the end */
		amax = (uint32_t *)(void *)in->v_scale_ch;
		memset(amax, 0, hd * sizeof(uint32_t));
		v_chan_piece(in, c, mk, 0, keys, amax);
	} else if (np <= 1) {
		v_chan_piece(in, c, mk, 0, keys, amax);
	} else {
#pragma omp parallel for schedule(dynamic, 1)
		for (int i = 0; i < np; i++)
			v_chan_piece(in, c, mk, i * per, (i + 1) * per, part + (size_t)(i + 1) * hd);
		for (int i = 1; i <= np; i++)
			for (size_t e = 0; e < hd; e++)
				amax[e] = part[(size_t)i * hd + e] > amax[e] ? part[(size_t)i * hd + e] :
					  amax[e];
	}
	for (size_t e = 0; e < hd; e++) {
		float a;
		uint32_t b = amax[e];

		memcpy(&a, &b, sizeof(a));
		in->v_scale_ch[e] = a / (float)c->clip;
	}
	free(part);
}

/* mk[0], mk[1]: K's and V's makers, used when in->k, in->v are not kept. */
static void fill_inputs(const struct fs_case *c, struct fs_inputs *in,
			const struct maker *mk)
{
	int S = in->S, T = in->T, Hq = in->Hq, Hkv = in->Hkv, D = in->D;
	float tensor_scale = 0.0f, head_scale[CASE_MAX_HEADS];

	for (int s = 0; s < S; s++) {
		in->context_lens[s] = c->seqs[s].context;
		for (int t = 0; t < T; t++)
			in->q_pos[(size_t)s * T + t] = case_q_pos(c, s, t);
	}

	/* Q, per (s, t, qh) row; padding rows keep scale 0 and zeros. Rows
	 * are independent, so threads only share the work, not a result. */
	for (int s = 0; s < S; s++)
#pragma omp parallel for schedule(static)
		for (int th = 0; th < c->seqs[s].tokens * Hq; th++) {
			int t = th / Hq, h = th % Hq;
			size_t row = ((size_t)s * T + (size_t)t) * Hq + (size_t)h;
			const float *x = in->q + row * (size_t)D;
			float sc = quant_scale(x, D, c->clip);

			in->q_scale[row] = sc;
			quant_apply(x, D, sc, c->clip, c->rounding,
				    in->q_int8 + row * (size_t)D);
		}

	if (c->k_scale == KSCALE_PER_TENSOR) {
		tensor_scale = k_absmax(in, c, &mk[0], -1) / (float)c->clip;
		in->k_scale[0] = tensor_scale;
	}
	if (c->k_scale == KSCALE_PER_HEAD)
		for (int h = 0; h < Hkv; h++) {
			head_scale[h] = k_absmax(in, c, &mk[0], h) / (float)c->clip;
			in->k_scale[h] = head_scale[h];
		}
	if (in->v_scale_ch)
		v_chan_scales(in, c, &mk[1]);
	/* K and V rows by runs of up to FILL_RUN keys of one block, so that
	 * int8 V, stored [d][slot], is written FILL_RUN bytes at a time
	 * instead of one byte every block_size bytes. */
	for (int s = 0; s < S; s++) {
		int ctx = c->seqs[s].context, BS = in->BS;
		int runs_per_blk = (BS + FILL_RUN - 1) / FILL_RUN;
		int nrun = (ctx + BS - 1) / BS * runs_per_blk;

#pragma omp parallel for schedule(static)
		for (int run = 0; run < nrun; run++) {
			int lb = run / runs_per_blk, slot0 = run % runs_per_blk * FILL_RUN;
			int j0 = lb * BS + slot0;
			int n = ctx - j0 < FILL_RUN ? ctx - j0 : FILL_RUN;
			/* the stored block: the caches hold NM of them */
			int blk = inputs_block_at(in, in->block_table[(size_t)s * in->MAXB +
								      (size_t)lb]);
			int8_t vq[FILL_RUN][CASE_MAX_HEAD_DIM];
			float kb[CASE_MAX_HEAD_DIM], vb[CASE_MAX_HEAD_DIM];

			if (slot0 + n > BS)
				n = BS - slot0;
			if (blk < 0)
				continue;	/* freed (window_blocks): never written */
			for (int h = 0; h < Hkv; h++) {
				for (int i = 0; i < n; i++) {
					int j = j0 + i;
					size_t row = ((size_t)s * in->MAXCTX + (size_t)j) * Hkv +
						     (size_t)h;
					const float *kr = in->k ? in->k + row * (size_t)D : kb;
					const float *vr = in->v ? in->v + row * (size_t)D : vb;

					if (!in->k) {	/* caches only: rows made here */
						make_row(&mk[0], s, j, h, in->MAXCTX, Hkv, kb);
						make_row(&mk[1], s, j, h, in->MAXCTX, Hkv, vb);
					}
					put_k_row(c, in, kr, blk, slot0 + i, h,
						  c->k_scale == KSCALE_PER_HEAD ?
						  head_scale[h] : tensor_scale);
					put_v_row(c, in, vr, blk, slot0 + i, h, vq[i]);
				}
				if (in->BSTR) {
					/* put_v_run addresses a dense pool: hand
					 * it block blk alone, as block 0 */
					struct fs_inputs one = *in;

					/* int8 V only: with bf16 or f32 V the
					 * int8 cache is NULL, and no offset may
					 * be added to it (clang's UBSan) */
					if (in->v_cache_i8)
						one.v_cache_i8 = in->v_cache_i8 +
								 (size_t)blk * in->BSTR;
					put_v_run(c, &one, 0, slot0, n, h, vq);
				} else {
					put_v_run(c, in, blk, slot0, n, h, vq);
				}
			}
		}
	}
}

/* ---- the API ----------------------------------------------------------- */

enum fs_rc inputs_build(const struct fs_case *c, const struct inputs_given *g,
			struct fs_inputs *in, struct fs_err *err)
{
	struct counts n;
	int *valid = NULL, *scratch = NULL, bad = 0;
	struct maker *mk = NULL;	/* K, V, Q: big (the multipliers) */
	size_t bytes;
	double gib;
	enum fs_rc rc;

	memset(in, 0, sizeof(*in));
	rc = check_case(c, err);
	if (rc != FS_OK)
		return rc;
	in->S = c->n_seqs;
	in->T = case_tokens_max(c);
	in->Hq = c->q_heads;
	in->Hkv = c->kv_heads;
	in->D = c->head_dim;
	in->BS = c->block_size;
	in->NB = c->num_blocks;
	in->BSTR = (size_t)c->block_stride;
	in->MAXB = case_table_width(c);
	in->MAXCTX = case_context_max(c);
	in->NM = inputs_pool_stored(c);

	/* Size everything before allocating anything. */
	if (count_bytes(c, in, &n, &bytes, &gib)) {
		memset(in, 0, sizeof(*in));
		return fs_fail(err, FS_EBUDGET,
			       "the case needs more bytes than a size_t holds, over the limit of %zu GiB (INPUTS_MAX_BYTES caps a case's tensors; shrink the case)",
			       INPUTS_MAX_BYTES >> 30);
	}
	if (bytes > INPUTS_MAX_BYTES) {
		memset(in, 0, sizeof(*in));
		return fs_budget(err, NULL, "the case", gib * (double)(1u << 30),
				 (double)INPUTS_MAX_BYTES,
				 "INPUTS_MAX_BYTES caps a case's tensors; shrink the case");
	}

	in->q = alloc_n(n.q, sizeof(float), &bad);
	if (!g || !g->caches_only) {
		in->k = alloc_n(n.kv, sizeof(float), &bad);
		in->v = alloc_n(n.kv, sizeof(float), &bad);
	}
	in->q_int8 = alloc_n(n.q, 1, &bad);
	in->q_scale = alloc_n(n.rows, sizeof(float), &bad);
	in->k_cache = alloc_n(n.cache, 1, &bad);
	if (c->k_scale == KSCALE_PER_TOKEN_HEAD)
		in->k_scale = alloc_n(n.slots, sizeof(float), &bad);
	else if (c->k_scale == KSCALE_PER_TENSOR)
		in->k_scale = alloc_n(1, sizeof(float), &bad);
	else if (c->k_scale == KSCALE_PER_HEAD)
		in->k_scale = alloc_n((size_t)in->Hkv, sizeof(float), &bad);
	else
		in->k_scale16 = alloc_n(n.k16, sizeof(uint16_t), &bad);
	if (c->v_dtype == VDT_INT8) {
		in->v_cache_i8 = alloc_n(n.cache, 1, &bad);
		if (c->v_scale == VSCALE_PER_CHANNEL)
			in->v_scale_ch = alloc_n((size_t)in->Hkv * (size_t)in->D,
						 sizeof(float), &bad);
		else
			in->v_scale = alloc_n(n.slots, sizeof(float), &bad);
	} else if (case_v_blocks(c->v_dtype)) {
		in->v_cache_i8 = alloc_n(n.cache, 1, &bad);
		in->v_scale16 = alloc_n(n.k16, sizeof(uint16_t), &bad);
	} else {
		in->v_cache_f = alloc_n(n.cache, sizeof(float), &bad);
	}
	in->block_table = alloc_n(n.table, sizeof(int32_t), &bad);
	in->context_lens = alloc_n((size_t)in->S, sizeof(int32_t), &bad);
	in->q_pos = alloc_n(n.pos, sizeof(int32_t), &bad);
	if (inputs_pool_sparse(c))
		in->pool_blocks = alloc_n((size_t)in->NM, sizeof(int32_t), &bad);
	valid = alloc_n(2 * (size_t)in->S, sizeof(int), &bad);
	/* a permutation and owners (place_blocks); a sparse pool has no
	 * owners, and only shuffled placement a permutation */
	if (!in->pool_blocks)
		scratch = alloc_n(2 * (size_t)in->NB, sizeof(int), &bad);
	else if (c->placement == PLACE_SHUFFLED)
		scratch = alloc_n((size_t)in->NB, sizeof(int), &bad);
	mk = alloc_n(3, sizeof(*mk), &bad);
	if (bad) {
		rc = fs_nomem(err, "the case's tensors", bytes);
		goto fail;
	}

	rc = place_blocks(c, in, scratch, err);
	if (rc != FS_OK)
		goto fail;
	poison_caches(c, in, &n);

	for (int s = 0; s < in->S; s++) {
		valid[s] = c->seqs[s].tokens;
		valid[in->S + s] = c->seqs[s].context;
	}
	maker_init(&mk[0], c, &c->k, GEN_K, g ? g->k : NULL);
	maker_init(&mk[1], c, &c->v, GEN_V, g ? g->v : NULL);
	maker_init(&mk[2], c, &c->q, GEN_Q, g ? g->q : NULL);
	make_logical(&mk[2], in->q, in->T, in->Hq, valid);
	if (in->k) {
		make_logical(&mk[0], in->k, in->MAXCTX, in->Hkv, valid + in->S);
		make_logical(&mk[1], in->v, in->MAXCTX, in->Hkv, valid + in->S);
	}
	fill_inputs(c, in, mk);
	goto done;
fail:
	inputs_free(in);
done:
	free(valid);
	free(scratch);
	free(mk);
	return rc;
}

void inputs_free(struct fs_inputs *in)
{
	free(in->q);
	free(in->k);
	free(in->v);
	free(in->q_int8);
	free(in->q_scale);
	free(in->k_cache);
	free(in->k_scale);
	free(in->k_scale16);
	free(in->v_cache_i8);
	free(in->v_scale);
	free(in->v_scale_ch);
	free(in->v_scale16);
	free(in->v_cache_f);
	free(in->block_table);
	free(in->context_lens);
	free(in->q_pos);
	free(in->pool_blocks);
	memset(in, 0, sizeof(*in));
}

/* The dense pool's caches and scales, in bytes (double: a pool of
 * millions of blocks may pass size_t on no machine, but passes the
 * sparse limit long before). */
static double dense_pool_bytes(const struct fs_case *c)
{
	double blk = c->block_stride ? (double)c->block_stride :
		     (double)c->kv_heads * c->head_dim * c->block_size;
	double vb = case_v_bytes(c->v_dtype) ? 1.0 : 4.0;
	double slots = (double)c->block_size * c->kv_heads;

	return (double)c->num_blocks *
	       (blk * (1.0 + vb) + slots * (4.0 + (c->v_dtype == VDT_INT8 &&
						    c->v_scale == VSCALE_PER_TOKEN_HEAD ? 4.0 : 0.0)));
}

/* The blocks the tables name: every sequence's, less those freed. */
static int named_blocks(const struct fs_case *c)
{
	int n = 0;

	for (int s = 0; s < c->n_seqs; s++)
		n += case_blocks_of(c, s) - inputs_blocks_freed(c, s);
	return n;
}

/*
 * Past either limit, sparse only where the blocks no table names are most
 * of the pool or over INPUTS_DENSE_POOL_BYTES themselves: dense, a pool
 * then spends at most twice its named blocks' bytes and at most 256 MiB
 * on poison, and keeps the direct addressing (no search a block) and the
 * layout the device harnesses read. A long decode's default pool (its
 * blocks and two spares: Qwen3.5-27B over 131072 keys is 260 MiB with
 * its scales) is dense.
 */
int inputs_pool_sparse(const struct fs_case *c)
{
	double bytes = dense_pool_bytes(c), unnamed;

	if (c->num_blocks <= INPUTS_DENSE_BLOCKS && bytes <= INPUTS_DENSE_POOL_BYTES)
		return 0;
	unnamed = (double)(c->num_blocks - named_blocks(c));
	return unnamed > (double)c->num_blocks - unnamed ||
	       bytes * (unnamed / (double)c->num_blocks) > INPUTS_DENSE_POOL_BYTES;
}

int inputs_blocks_freed(const struct fs_case *c, int s)
{
	int behind;

	if (!c->window_free || c->sliding_window <= 0)
		return 0;
	behind = case_q_pos(c, s, 0) - c->sliding_window + 1;
	return behind > 0 ? behind / c->block_size : 0;
}

int inputs_pool_stored(const struct fs_case *c)
{
	return inputs_pool_sparse(c) ? named_blocks(c) : c->num_blocks;
}

const float *inputs_kv_row(const struct fs_case *c, const struct fs_inputs *in,
			   int which, int s, int j, int h, int d0, int n, float *buf)
{
	const float *kept = which ? in->v : in->k;
	struct maker m;

	assert(d0 >= 0 && n >= 0 && d0 + n <= in->D);
	if (kept)
		return kept + (((size_t)s * (size_t)in->MAXCTX + (size_t)j) *
			       (size_t)in->Hkv + (size_t)h) * (size_t)in->D + (size_t)d0;
	/* Only the dims asked for: the reference's PV takes a row in slices. */
	maker_init(&m, c, which ? &c->v : &c->k, which ? GEN_V : GEN_K, NULL);
	make_row_part(&m, s, j, h, in->MAXCTX, in->Hkv, d0, n, buf);
	return buf;
}

void inputs_kv_init(struct inputs_kv *kv, const struct fs_case *c,
		    const struct fs_inputs *in, int which)
{
	struct maker m;

	maker_init(&m, c, which ? &c->v : &c->k, which ? GEN_V : GEN_K, NULL);
	kv->c = c;
	kv->in = in;
	kv->kept = which ? in->v : in->k;
	kv->spec = m.spec;
	kv->dist = (int)m.dist;
	kv->key = gen_key(c->seed, m.stream);
	memcpy(kv->mult, m.mult, (size_t)c->head_dim * sizeof(float));
}

void inputs_kv_keys(const struct inputs_kv *kv, int s, int j0, int n, int h,
		    uint64_t *keys)
{
	/* gen_row_key's three rounds, the sequence's once for all n */
	uint64_t ks = gen_u64_key(kv->key, (uint64_t)s);

	for (int i = 0; i < n; i++)
		keys[i] = gen_u64_key(gen_u64_key(ks, (uint64_t)(j0 + i)), (uint64_t)h);
}

const float *inputs_kv_get(const struct inputs_kv *kv, uint64_t key, int s,
			   int j, int h, int d0, int n, float *buf)
{
	const struct fs_inputs *in = kv->in;

	assert(d0 >= 0 && n >= 0 && d0 + n <= in->D);
	if (kv->kept)
		return kv->kept + (((size_t)s * (size_t)in->MAXCTX + (size_t)j) *
				   (size_t)in->Hkv + (size_t)h) * (size_t)in->D +
		       (size_t)d0;
	gen_part(kv->spec, (enum gen_dist)kv->dist, kv->mult, key, d0, n, buf);
	return buf;
}

float inputs_k_scale(const struct fs_case *c, const struct fs_inputs *in,
		     int block, int slot, int h, int d)
{
	size_t si;

	/* h and d come from the kernel's own loop bounds; block and slot
	 * from a walk a buggy kernel may take anywhere. */
	assert(h >= 0 && h < in->Hkv && d >= 0 && d < in->D);
	if (c->k_scale == KSCALE_PER_TENSOR)
		return in->k_scale[0];
	if (c->k_scale == KSCALE_PER_HEAD)
		return in->k_scale[h];
	block = inputs_block_at(in, block);
	if (block < 0 || slot < 0 || slot >= in->BS)
		return f32_nan();
	si = slot_index(in, block, slot, h);
	if (c->k_scale == KSCALE_PER_BLOCK32)
		return quant_f16_to_f32(in->k_scale16[si * (size_t)(in->D / 32) +
						      (size_t)(d / 32)]);
	return in->k_scale[si];
}
