/*
 * mutneeds.c - what a case needs to show a bug class, for `fragsim
 * mutate`'s survivors (mutneeds.h): each class's needs, each case's, and
 * the sentences a survivor's line and --json's "exposed_by" say.
 */
#include "mutneeds.h"

#include <stdio.h>
#include <string.h>

#include "../lib/runcase.h"

/*
 * What a case needs to show a class, for the survivor's line: "SURVIVED
 * 2 case(s): no context in the suite ends inside a 16-key tile". A class
 * that applies to a case (kernel_bug_na) can still leave it bit for bit
 * unchanged: tail_mask on contexts that all end on a tile boundary, a
 * page walk on pages that lie where the walk guesses. Those are the
 * suite's weaknesses, and each is a property of a case, computed here
 * from its shape and block tables (never from a run):
 *
 *   need               a case has it when               the survivor says
 *   NEED_TAIL          some context % N != 0            no context ... ends
 *                                                       inside an N-key tile
 *   NEED_EDGE          a query's last or first visible  ... nor does a causal
 *                      key is not at a tile edge        or window edge
 *   NEED_PAGES_MOVED   a block table entry is not       no sequence has a page
 *                      first(s) + b (kern_walk)         away from ...
 *   NEED_NOT_IDENTITY  an entry of row s is not b       no sequence has a
 *                                                       logical block ...
 *   NEED_HISTORY       a sequence has keys before its   no sequence has history
 *                      first query token
 *   NEED_TILE_OFFSET   N (ceil(ctx/N) - ceil(T/N))      ...
 *                      is not the history
 *   NEED_WINDOW_BITES  a query has keys behind its      no query has keys behind
 *                      sliding window                   its window
 *   NEED_POOL_2GIB     a block the tables name starts   no pool past 2 GiB
 *                      2 GiB or more into the pool
 *   NEED_POOL_64K      a block id the tables name       no pool past 65,536
 *                      passes 65,535                    blocks
 *   NEED_ROW_MOVED     c_rows' belief moves an entry    no query in the suite
 *                      into a row of another query      sits in a C row ...
 *   NEED_SPLIT_SEEN    a query sees keys of two         no query in the suite
 *                      split-K segments                 sees keys of two ...
 *   NEED_SHOWN_MASK    a masked key inside a tile,      no masked key in the
 *                      below the longest context        suite lies ... shown
 *                      (scores are written up to it)
 *   NEED_V_NAN         a masked slot whose V reads as   no masked slot ... reads
 *                      NaN: NEED_TAIL, or with int8 V   as NaN
 *                      per channel and f32 PV a tile
 *                      reaching past its blocks
 *   NEED_TWO_IN_TILE   a query that sees two keys of    no query in the suite
 *                      one tile                         sees two keys of one tile
 *   NEED_TWO_SEEN      a query that sees two keys       no query ... two keys
 *   NEED_HISTORY_SEEN  a query that sees a key before   no query sees a key
 *                      its chunk                        before its chunk
 *   NEED_BLOCK_PAST0   a table naming a block past 0    no table names a block
 *                      in a tile that runs              other than block 0
 *   NEED_EDGE_MOVED    an edge (NEED_EDGE) at a column  every edge ... falls
 *                      the adjacent-column belief       where the belief masks
 *                      moves (kernel_contiguous_edges)  the same slots
 *   NEED_OFF_GROUP     a query that sees a key other    no query sees a key
 *                      than its K-key group's first     other than the first
 *   NEED_P_MOVED       ... a key whose P p_regroup none no query sees a key
 *                      moves (kernel_regroup_none_moves) whose P ... moves
 *   NEED_GROUP_ROWS    two query rows of a tile, one    no tile has two query
 *                      seeing two keys of a group       rows with one ...
 *   NEED_TILES_IN_GROUP a query that sees keys of two   no query sees keys of
 *                      QK tiles of one group            two QK tiles of one ...
 *   NEED_TWO_GROUPS    a query that sees keys of two    no query sees keys of
 *                      groups of one split-K segment    two ... groups
 *
 * Tiles and groups count from each split-K segment's start, as the
 * kernel's do: a segment of one key is one key in a tile and a group.
 *
 * A sequence with no query token (a prefill entry of chunk 0) runs no
 * tile: it has none of these.
 *
 * N is the keys of the case's tile (its lane map's n), K of a PV group
 * (its k). class_needs[] has one row per class, beside kernel.c's class
 * table: a new class adds its row here (NEEDS(0) when any case it applies to shows it). A survivor
 * whose needs some tried case has all of is reported as such: the suite
 * has the kind of case and its checks still pass (the bug leaves what is
 * compared within the thresholds there: tail_mask on a context one key
 * into a tile, where the believed and the true column agree). `--json` gives every class's "exposed_by" and a
 * survivor's "hint"; tests/test_kernel.c wants a row for every class.
 */
enum need {
	NEED_TAIL,
	NEED_EDGE,
	NEED_PAGES_MOVED,
	NEED_NOT_IDENTITY,
	NEED_HISTORY,
	NEED_TILE_OFFSET,
	NEED_WINDOW_BITES,
	NEED_POOL_2GIB,
	NEED_POOL_64K,
	NEED_ROW_MOVED,
	NEED_SHOWN_MASK,
	NEED_SPLIT_SEEN,
	NEED_V_NAN,
	NEED_TWO_IN_TILE,
	NEED_TWO_SEEN,
	NEED_HISTORY_SEEN,
	NEED_BLOCK_PAST0,
	NEED_EDGE_MOVED,
	NEED_OFF_GROUP,
	NEED_GROUP_ROWS,
	NEED_TILES_IN_GROUP,
	NEED_TWO_GROUPS,
	NEED_P_MOVED,
	NEED_KEY_SEEN,
	NEED_COUNT
};

#define NEED(n) (1u << (n))

enum need_per { PER_NONE, PER_TILE, PER_GROUP };

struct need_info {
	const char *has;	/* what a case that shows the class has */
	const char *lacks;	/* the sentence for a suite without it */
	enum need_per per;	/* both take (%d) the tile's keys N, or the
				 * PV group's K */
	unsigned refines;	/* NEED() of the need it narrows: a suite
				 * lacking that one is told that one */
};

static const struct need_info needs[NEED_COUNT] = {
	/* every class's, unwritten in class_needs: where no query sees a
	 * key no tile runs, and the hint says that alone */
	[NEED_KEY_SEEN] = { "a query that sees a key",
		"no query in the suite sees a key (every context 0: no tile runs, so no planted belief changes what is compared)", PER_NONE, 0 },
	[NEED_TAIL] = { "a context that ends inside a %d-key tile",
		"no context in the suite ends inside a %d-key tile", PER_TILE, 0 },
	[NEED_EDGE] = { "a context, causal, window or split-K segment edge inside a %d-key tile",
		"no context in the suite ends inside a %d-key tile, nor does a causal, window or split-K segment edge fall inside one (tiles count from each segment's start)", PER_TILE, 0 },
	[NEED_PAGES_MOVED] = { "a sequence with a page away from where a packed cache puts it",
		"no sequence in the suite has a page away from where a packed, contiguous cache puts it (first block + b)", PER_NONE, 0 },
	[NEED_NOT_IDENTITY] = { "a sequence whose logical block b is not physical block b",
		"no sequence in the suite has a logical block other than its physical block", PER_NONE, 0 },
	[NEED_HISTORY] = { "a sequence with keys before its first query token",
		"no sequence in the suite has keys before its first query token", PER_NONE, 0 },
	[NEED_TILE_OFFSET] = { "a history other than N (ceil(context/N) - ceil(tokens/N)) on %d-key tiles",
		"no sequence in the suite has a history other than N (ceil(context/N) - ceil(tokens/N)) on %d-key tiles", PER_TILE, 0 },
	[NEED_WINDOW_BITES] = { "a query with keys behind its sliding window",
		"no query in the suite has keys behind its sliding window", PER_NONE, 0 },
	[NEED_POOL_2GIB] = { "a pool past 2 GiB, with a block the tables name starting past it",
		"no pool past 2 GiB (no block the tables name starts 2 GiB or more into its pool)", PER_NONE, 0 },
	[NEED_POOL_64K] = { "a pool past 65,536 blocks, with a block id past 65,535 in a table",
		"no pool past 65,536 blocks (no block id past 65,535 in a table)", PER_NONE, 0 },
	[NEED_ROW_MOVED] = { "a query in a C row the interleaved belief moves (a prefill chunk longer than the rows it keeps in place)",
		"no query in the suite sits in a C row the interleaved belief moves (prefill chunks of one token: CDNA3 and RDNA4 keep row 0 in place)", PER_NONE, 0 },
	[NEED_SHOWN_MASK] = { "a masked key in a %d-key tile below the longest context (a causal or window edge, or a shorter context, inside a tile)",
		"no masked key in the suite lies in a %d-key tile below the longest context, where scores are written (a causal or window edge inside a tile, or a shorter context ending inside one)", PER_TILE, 0 },
	[NEED_SPLIT_SEEN] = { "a query that sees keys of two split-K segments",
		"no query in the suite sees keys of two split-K segments (a sliding window inside one segment leaves nothing to merge)", PER_NONE, 0 },
	[NEED_V_NAN] = { "a masked slot whose V reads as NaN, in a %d-key tile that runs",
		"no masked slot in the suite reads its V as NaN in a %d-key tile that runs (a context ending inside a tile; with int8 V per channel and f32 PV, whose poisoned bytes are finite, a tile reaching past the sequence's blocks)", PER_TILE, 0 },
	[NEED_TWO_IN_TILE] = { "a query that sees two keys of one %d-key tile",
		"no query in the suite sees two keys of one %d-key tile (a context, split-K segment or window of one key: with one key in a tile no column, scale or swizzle belief moves a visible one)", PER_TILE, 0 },
	[NEED_TWO_SEEN] = { "a query that sees two keys or more",
		"no query in the suite sees two keys or more (one key a row: its P is 1 in any base, and ALiBi's bias is 0 at the query's own key)", PER_NONE, 0 },
	[NEED_HISTORY_SEEN] = { "a query that sees a key before its chunk",
		"no query in the suite sees a key before its chunk (no history, or a window of one key)", PER_NONE, 0 },
	[NEED_BLOCK_PAST0] = { "a table naming a block other than block 0 in a tile that runs",
		"no table in the suite names a block other than block 0 where a tile runs (a dense and a strided pool both start block 0 at 0)", PER_NONE, 0 },
	[NEED_EDGE_MOVED] = { "a context, causal, window or split-K segment edge inside a %d-key tile at a column where the adjacent-column belief masks other slots",
		"every context, causal, window or split-K segment edge in the suite inside a %d-key tile falls at a column where the adjacent-column belief masks the same slots (one key into a tile, as split-K segments of one key make: the belief keeps column 0 in place)", PER_TILE,
		NEED(NEED_EDGE) },
	[NEED_OFF_GROUP] = { "a query that sees a key other than the first of its %d-key PV group",
		"no query in the suite sees a key other than the first of its %d-key PV group (groups count from each split-K segment's start: with segments of one key each group's one key is its first, whose place and V scale no belief gets wrong)", PER_GROUP, 0 },
	[NEED_GROUP_ROWS] = { "a tile of two query rows, one of them seeing two keys of one %d-key PV group",
		"no tile in the suite has two query rows with one seeing two keys of one %d-key PV group (with one key a group every row's largest P' is that key's V scale; a prefill chunk of one token has one row a tile)", PER_GROUP, 0 },
	[NEED_TILES_IN_GROUP] = { "a query that sees keys of two QK tiles of one %d-key PV group",
		"no query in the suite sees keys of two QK tiles of one %d-key PV group (a split-K segment, window or context inside one tile of each group)", PER_GROUP, 0 },
	[NEED_TWO_GROUPS] = { "a query that sees keys of two %d-key PV groups of one split-K segment",
		"no query in the suite sees keys of two %d-key PV groups of one split-K segment (the running max is set by a segment's first group and never rescaled after it)", PER_GROUP, 0 },
	[NEED_P_MOVED] = { "a query that sees a key of a %d-key PV group whose P the C registers hold where the A operand reads another key",
		"no query in the suite sees a key of a %d-key PV group whose P the C registers hold where the A operand reads another key (groups count from each split-K segment's start; on gfx936 keys 0 and 31 of a group stay in place)", PER_GROUP,
		NEED(NEED_OFF_GROUP) },
};

struct class_need {
	unsigned needs;		/* NEED() bits, all of them in one case */
	int listed;		/* the row exists */
};
#define NEEDS(bits) { (bits), 1 }

static const struct class_need class_needs[BUG_COUNT] = {
	[BUG_C_COLUMNS] = NEEDS(NEED(NEED_TWO_IN_TILE)),
	[BUG_OPERAND_ORDER] = NEEDS(0),
	[BUG_HEAD_DIM_LOADED] = NEEDS(0),
	[BUG_SCALE_RECOVERY] = NEEDS(0),
	[BUG_K_SCALE_INDEX] = NEEDS(NEED(NEED_TWO_IN_TILE)),
	[BUG_GQA_MAP] = NEEDS(0),
	/* an edge the belief moves a slot across (kernel_contiguous_edges) */
	[BUG_TAIL_MASK] = NEEDS(NEED(NEED_EDGE) | NEED(NEED_EDGE_MOVED)),
	[BUG_PAGE_WALK] = NEEDS(NEED(NEED_PAGES_MOVED)),
	[BUG_PAGE_IDENTITY] = NEEDS(NEED(NEED_NOT_IDENTITY)),
	[BUG_TRANSPOSE] = NEEDS(NEED(NEED_TWO_IN_TILE)),
	/* q = t within the chunk: the absolute position when no history */
	[BUG_Q_POSITION] = NEEDS(NEED(NEED_HISTORY)),
	[BUG_SPLIT_MERGE] = NEEDS(NEED(NEED_SPLIT_SEEN)),
	/* a poisoned slot past the context, in a tile that runs */
	[BUG_PV_MASK] = NEEDS(NEED(NEED_V_NAN)),
	/* a masked key whose score the scores show: past the longest
	 * context none is written, and exp(-65504 - m) is 0 as exp(-inf) */
	[BUG_MASK_FINITE] = NEEDS(NEED(NEED_SHOWN_MASK)),
	/* a NaN K scale past the context, in a tile that runs */
	[BUG_MASK_ADDITIVE] = NEEDS(NEED(NEED_TAIL)),
	[BUG_WINDOW_INCLUSIVE] = NEEDS(NEED(NEED_WINDOW_BITES)),
	[BUG_WINDOW_EXCLUSIVE] = NEEDS(NEED(NEED_WINDOW_BITES)),
	[BUG_Q_CHUNK_KEYS] = NEEDS(NEED(NEED_HISTORY_SEEN)),
	[BUG_Q_FUTURE] = NEEDS(0),
	[BUG_Q_OFF_BY_ONE] = NEEDS(0),
	[BUG_Q_TILE_ROUNDED] = NEEDS(NEED(NEED_TILE_OFFSET)),
	[BUG_CAP_DROPPED] = NEEDS(0),
	[BUG_CAP_AFTER_MASK] = NEEDS(NEED(NEED_EDGE)),
	[BUG_CAP_EXP_TANH] = NEEDS(0),
	[BUG_ALIBI_IGNORED] = NEEDS(NEED(NEED_TWO_SEEN)),	/* bias 0 at k = q */
	[BUG_ALIBI_SIGN] = NEEDS(NEED(NEED_TWO_SEEN)),	/* bias 0 at k = q */
	[BUG_ALIBI_NO_LOG2E] = NEEDS(NEED(NEED_TWO_SEEN)),	/* bias 0 at k = q */
	[BUG_ALIBI_OFFSET] = NEEDS(0),
	[BUG_EXP2_NO_LOG2E] = NEEDS(NEED(NEED_TWO_SEEN)),
	[BUG_MERGE_EMPTY_NAN] = NEEDS(0),
	[BUG_MERGE_STALE_LSE] = NEEDS(0),
	[BUG_BLOCK_OFFSET] = NEEDS(NEED(NEED_BLOCK_PAST0)),
	[BUG_K_SCALE_WALK] = NEEDS(NEED(NEED_NOT_IDENTITY)),
	[BUG_V_PAGE_WALK] = NEEDS(NEED(NEED_NOT_IDENTITY)),
	[BUG_BLOCK_SIZE] = NEEDS(0),
	[BUG_SCALE_NO_K] = NEEDS(0),
	[BUG_SCALE_NO_Q] = NEEDS(0),
	[BUG_K_SCALE_FIRST] = NEEDS(NEED(NEED_TWO_IN_TILE)),
	[BUG_GQA_KV_DIVIDE] = NEEDS(0),
	[BUG_GQA_GRID] = NEEDS(0),
	[BUG_GQA_SPILL] = NEEDS(0),
	[BUG_LOAD_SWAP_K] = NEEDS(0),
	[BUG_LOAD_UNSWIZZLED] = NEEDS(NEED(NEED_TWO_IN_TILE)),
	/* a prefill row the belief moves (decode: kernel_bug_na) */
	[BUG_C_ROWS] = NEEDS(NEED(NEED_ROW_MOVED)),
	/* pv8: INT8 PV; kernel_bug_na says where the shape hides them. A
	 * group of K keys counts from its split-K segment's start, so one
	 * visible key there is key 0: P is 1 where every regroup puts it,
	 * its own V scale is the group's first, its P' the row's max */
	[BUG_P_REGROUP_NONE] = NEEDS(NEED(NEED_OFF_GROUP) | NEED(NEED_P_MOVED)),
	[BUG_PV_GROUP_MAX] = NEEDS(NEED(NEED_TILES_IN_GROUP)),
	[BUG_V_SCALE_APPLY] = NEEDS(NEED(NEED_OFF_GROUP)),
	[BUG_P_SCALE_INDEX] = NEEDS(NEED(NEED_GROUP_ROWS)),
	[BUG_PV_RESCALE] = NEEDS(NEED(NEED_TWO_GROUPS)),
	[BUG_BLOCK_OFFSET_INT32] = NEEDS(NEED(NEED_POOL_2GIB)),
	[BUG_BLOCK_OFFSET_U16] = NEEDS(NEED(NEED_POOL_64K)),
};

/* Is the edge key e (a first masked or first visible key) inside a
 * tile of N keys, not on its boundary? */
static int inside_tile(long e, int N)
{
	return e > 0 && e % N != 0;
}

/* Do keys [lo, hi) hold two of one run of R keys (runs from 0)? Key j
 * shares key j - 1's run unless a run starts at j; with R of 2 or more
 * no two keys in a row both start runs, so three keys always hold such
 * a pair. */
static int two_in_run(long lo, long hi, int R)
{
	return R > 1 && hi - lo >= 2 && (hi - lo > 2 || (lo + 1) % R != 0);
}

/* Do keys [lo, hi) reach two tiles of N keys inside one group of K
 * (both from 0)? Only the first and the last group they touch can be
 * partial; one between them holds all of its tiles. */
static int tiles_in_group(long lo, long hi, int N, int K)
{
	long g0 = lo / K, g1 = (hi - 1) / K;

	if (K / N < 2)
		return 0;
	if (g0 == g1)
		return lo / N != (hi - 1) / N;
	return g1 - g0 >= 2 || lo / N != ((g0 + 1) * K - 1) / N ||
	       g1 * K / N != (hi - 1) / N;
}

/* A lane map's sizes and what its beliefs move, for the needs. */
struct need_maps {
	int N, K;				/* a tile's keys, a PV group's */
	unsigned char edge[LM_MAX_DIM + 1];	/* kernel_contiguous_edges */
	unsigned char pmove[LM_MAX_DIM];	/* kernel_regroup_none_moves */
};

/* The needs of a query's keys [lo, hi) of one split-K segment, counted
 * from the segment's start (its tiles of N keys and PV groups of K start
 * there): rows says its tile has another query row (GROUP_ROWS); the
 * edges are its first key (keys of its tile before it are masked) and
 * the key past its last (a context, causal or segment end). */
static unsigned span_needs(long lo, long hi, int rows, const struct need_maps *m)
{
	int N = m->N, K = m->K;
	unsigned has = 0;

	if (two_in_run(lo, hi, N))
		has |= NEED(NEED_TWO_IN_TILE);
	if (two_in_run(lo, hi, K) && rows)
		has |= NEED(NEED_GROUP_ROWS);
	if (hi - lo >= 2 || lo % K)
		has |= NEED(NEED_OFF_GROUP);
	if (tiles_in_group(lo, hi, N, K))
		has |= NEED(NEED_TILES_IN_GROUP);
	if (lo / K != (hi - 1) / K)
		has |= NEED(NEED_TWO_GROUPS);
	for (int i = 0; i < 2; i++) {
		int e = (int)((i ? hi : lo) % N);

		if (e)
			has |= NEED(NEED_EDGE) | (m->edge[e] ? NEED(NEED_EDGE_MOVED) : 0);
	}
	for (long j = lo; j < hi && j < lo + K; j++)	/* K keys: every offset */
		if (m->pmove[j % K])
			return has | NEED(NEED_P_MOVED);
	return has;
}

/* The needs of a query that sees keys a .. p, in split-K segments of Z
 * keys (0: one segment): its first and last segment, and one between
 * them (they are all whole, so all alike). */
static unsigned view_needs(long a, long p, int Z, int rows, const struct need_maps *m)
{
	long fa = Z > 0 ? a / Z : 0, la = Z > 0 ? p / Z : 0;
	unsigned has;

	if (Z == 0)
		return span_needs(a, p + 1, rows, m);
	has = span_needs(a - fa * Z, (la > fa ? Z : p + 1 - fa * Z), rows, m);
	if (la > fa)
		has |= span_needs(0, p + 1 - la * Z, rows, m);
	if (la - fa >= 2)
		has |= span_needs(0, Z, rows, m);
	return has;
}

unsigned needs_of_case(const struct runcase *r)
{
	const struct fs_case *c = &r->c;
	const struct fs_inputs *in = &r->in;
	long stride = c->block_stride ? c->block_stride :
		      (long)c->kv_heads * c->head_dim * c->block_size;
	int N = r->lm->n, M = r->lm->m, W = c->sliding_window;
	int first = 0, Z = c->segment, decode = c->mode == MODE_DECODE;
	/* int8 V per channel has finite poison: f32 PV reads NaN only
	 * past a sequence's blocks (kernel.c's pv_mask_na) */
	int v_finite = c->v_dtype == VDT_INT8 && c->v_scale == VSCALE_PER_CHANNEL;
	struct need_maps m = { .N = N, .K = r->lm->k };
	unsigned has = 0;

	/* all 0 where the belief cannot be held or the class planted */
	kernel_contiguous_edges(r->lm, m.edge);
	kernel_regroup_none_moves(r->lm, m.pmove);
	for (int s = 0; s < c->n_seqs; s++) {
		const struct case_seq *q = &c->seqs[s];
		int h = q->context - q->tokens, nb = case_blocks_of(c, s);
		long last_lo = Z > 0 && q->context > 0 ? (long)(q->context - 1) / Z * Z : 0;
		/* The blocks a walk can get wrong visibly: those of the tiles
		 * that run, from the one holding the first key a query sees
		 * (tiles count from their split-K segment's start); the
		 * blocks wholly behind every window are never read. */
		long lo = W > 0 && h - W + 1 > 0 ? (long)h - W + 1 : 0;
		long seg_lo = Z > 0 ? lo / Z * Z : 0;
		long tile_lo = seg_lo + (lo - seg_lo) / N * N;

		if (q->tokens == 0) {	/* no tile runs */
			first += nb;
			continue;
		}
		/* the last tile of the last segment reaches past the context */
		if (q->context > 0 && inside_tile(q->context - last_lo, N)) {
			has |= NEED(NEED_TAIL);
			if (!v_finite || c->pv_mode != PV_F32 ||
			    last_lo + (q->context - last_lo + N - 1) / N * N > (long)nb * c->block_size)
				has |= NEED(NEED_V_NAN);
		}
		if (h > 0 && W != 1)
			has |= NEED(NEED_HISTORY_SEEN);
		for (int t = 0; t < q->tokens; t++) {
			long p = (long)h + t, a = W > 0 && p - W + 1 > 0 ? p - W + 1 : 0;
			long pz = Z > 0 ? p / Z * Z : 0, az = Z > 0 ? a / Z * Z : 0;
			/* another query row in its tile: decode's q heads of a
			 * GQA group, prefill's token t - 1 (it sees one key
			 * less, or its window one more: a key of each group
			 * this one sees two of) */
			int rows = decode ? case_group(c) > 1 : t % M != 0;
			int window_edge = inside_tile(a - az, N);

			if (p >= a)	/* a >= 0: a context 0 has p = -1 */
				has |= NEED(NEED_KEY_SEEN);
			if (p > a)
				has |= NEED(NEED_TWO_SEEN);
			has |= view_needs(a, p, Z, rows, &m);
			if ((inside_tile(p + 1 - pz, N) && p + 1 < in->MAXCTX) || window_edge)
				has |= NEED(NEED_SHOWN_MASK);
			if (a > 0)
				has |= NEED(NEED_WINDOW_BITES);
			if (Z > 0 && a / Z != p / Z)
				has |= NEED(NEED_SPLIT_SEEN);
		}
		if (h > 0)
			has |= NEED(NEED_HISTORY);
		if ((long)N * ((q->context + N - 1) / N - (q->tokens + N - 1) / N) != h)
			has |= NEED(NEED_TILE_OFFSET);
		for (int b = 0; b < nb && b < in->MAXB; b++) {
			int p = in->block_table[(size_t)s * in->MAXB + b];

			if ((long)(b + 1) * c->block_size <= tile_lo)
				continue;
			if (p != first + b)
				has |= NEED(NEED_PAGES_MOVED);
			if (p != b)
				has |= NEED(NEED_NOT_IDENTITY);
			if (p > 0)
				has |= NEED(NEED_BLOCK_PAST0);
			if (p >= 0 && (double)p * (double)stride >= 2147483648.0)
				has |= NEED(NEED_POOL_2GIB);
			if (p > 65535)
				has |= NEED(NEED_POOL_64K);
		}
		first += nb;
	}
	if (kernel_interleaved_moves_read(c, r->lm))
		has |= NEED(NEED_ROW_MOVED);
	return has;
}

/* One of the cases' sizes (tile_n, group_k) meets another: v; -1 mixed. */
static void note_size(int *at, int v)
{
	if (*at == 0)
		*at = v;
	else if (*at != v)
		*at = -1;
}

void needs_note(struct need_seen *o, int b, unsigned has, const struct lanemap *lm)
{
	unsigned want = class_needs[b].needs | NEED(NEED_KEY_SEEN);

	o->seen |= has;
	o->complete |= (has & want) == want;
	note_size(&o->tile_n, lm->n);
	note_size(&o->group_k, lm->k);
}

/* Need i's text (has or lacks) for o's tiles and groups (0 or -1: the
 * cases' lane maps differ, N or K said). */
static void need_text(char *buf, size_t len, int i, int lacks, const struct need_seen *o)
{
	const struct need_info *ni = &needs[i];
	const char *fmt = lacks ? ni->lacks : ni->has;
	int n = ni->per == PER_GROUP ? o->group_k : o->tile_n;

	if (ni->per == PER_NONE) {
		snprintf(buf, len, "%s", fmt);
		return;
	}
	if (n > 0) {
		snprintf(buf, len, fmt, n);
		return;
	}
	/* the cases' lane maps differ: say N (K), the tile's (group's) keys */
	{
		char f2[600];
		const char *pct = strstr(fmt, "%d");
		size_t at = (size_t)(pct - fmt);

		snprintf(f2, sizeof(f2), "%.*s%s%s", (int)at, fmt,
			 ni->per == PER_GROUP ? "K" : "N", pct + 2);
		snprintf(buf, len, "%s", f2);
	}
}

void needs_exposed_by(char *buf, size_t len, int b, const struct need_seen *o)
{
	unsigned want = class_needs[b].needs, narrowed = 0;
	size_t at = 0;

	if (!class_needs[b].listed) {
		snprintf(buf, len, "unknown: cli/mutneeds.c's class_needs has no row for it");
		return;
	}
	if (!want) {
		snprintf(buf, len, "any case it applies to");
		return;
	}
	buf[0] = '\0';
	for (int i = 0; i < NEED_COUNT; i++)	/* say the narrower need only */
		if (want & NEED(i))
			narrowed |= needs[i].refines;
	for (int i = 0; i < NEED_COUNT && at < len; i++) {
		char t[400];

		if (!(want & NEED(i)) || (narrowed & NEED(i)))
			continue;
		need_text(t, sizeof(t), i, 0, o);
		at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", and " : "", t);
	}
}

void needs_hint(char *buf, size_t len, int b, const struct need_seen *o)
{
	unsigned want = class_needs[b].needs, missing = (want | NEED(NEED_KEY_SEEN)) & ~o->seen;
	size_t at = 0;

	if (missing & NEED(NEED_KEY_SEEN))	/* nothing else can matter */
		missing = NEED(NEED_KEY_SEEN);

	buf[0] = '\0';
	if (!class_needs[b].listed) {
		needs_exposed_by(buf, len, b, o);
	} else if (missing) {
		for (int i = 0; i < NEED_COUNT && at < len; i++) {
			char t[600];

			if (!(missing & NEED(i)) || (missing & needs[i].refines))
				continue;
			need_text(t, sizeof(t), i, 1, o);
			at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? "; " : "", t);
		}
	} else if (want && !o->complete) {
		char t[600];

		needs_exposed_by(t, sizeof(t), b, o);
		snprintf(buf, len, "no case in the suite has all of: %s", t);
	} else {
		char t[600];

		needs_exposed_by(t, sizeof(t), b, o);
		snprintf(buf, len, "a case it ran on has what shows it (%s), yet passes its checks: there the bug leaves what is compared within the thresholds",
			 t);
	}
}
