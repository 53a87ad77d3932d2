/*
 * dump.c - read and validate a device dump directory (dump.h).
 *
 * Why strict: a dump is compared element by element with the simulation,
 * and a diagnosis is drawn from the pattern of differences. A file of the
 * wrong dtype or shape would give a pattern that means nothing, so it is
 * refused with its name instead. Integers must come as integers: an acc
 * written as float32 could hold NaN or a rounded value, and no exact
 * comparison survives that. BF16 (safetensors only) is the one
 * exception to "the golden's dtype", for the float results a bf16 kernel
 * writes in bf16: out, scores, splitk_*. The dump remembers it, and diff
 * compares with the simulation's value rounded the same way.
 *
 * Example: a decode case with 17 keys and 4 kv heads executes 8 tiles; a
 * dump of the first kv head's two tiles is
 *   acc.npy       int32 (2, 64, 4)
 *   acc_tiles.npy int32 (2, 5) = [[0, 0, 0, 0, 0], [0, 0, 0, 16, 0]]
 * and is valid; a row [0, 0, 0, 32, 0] is not (no tile starts at key 32).
 * The 4-column form [[0, 0, 0, 0], [0, 0, 0, 16]] (no row_tile) is read
 * too, each row taking the row_tile of the one tile it names; with MQA
 * 32/1 (two row tiles per kv head) it names two, and is refused.
 */
#include "dump.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "safetensors.h"

static const struct {
	const char *name;
	enum npy_dtype dtype;
	int bf16_ok;		/* may be stored as BF16 instead */
} tensors[DUMP_COUNT] = {
	[DUMP_ACC] = { "acc", NPY_I32, 0 },
	[DUMP_ACC_TILES] = { "acc_tiles", NPY_I32, 0 },
	[DUMP_SCORES] = { "scores", NPY_F32, 1 },
	[DUMP_OUT] = { "out", NPY_F32, 1 },
	[DUMP_Q_INT8] = { "q_int8", NPY_I8, 0 },
	[DUMP_Q_SCALE] = { "q_scale", NPY_F32, 0 },
	[DUMP_SPLITK_MAX] = { "splitk_max", NPY_F32, 1 },
	[DUMP_SPLITK_SUM] = { "splitk_sum", NPY_F32, 1 },
	[DUMP_SPLITK_OUT] = { "splitk_out", NPY_F32, 1 },
	[DUMP_P_INT8] = { "p_int8", NPY_I8, 0 },
	[DUMP_P_SCALE] = { "p_scale", NPY_F32, 0 },
	[DUMP_PV_ACC] = { "pv_acc", NPY_I32, 0 },
	[DUMP_PV_TILES] = { "pv_tiles", NPY_I32, 0 },
};

const char *dump_name(enum dump_tensor t)
{
	return (unsigned)t < DUMP_COUNT ? tensors[t].name : NULL;
}

int dump_has(const struct dump *d, enum dump_tensor t)
{
	return d->t[t].data != NULL;
}

/* The name errors give a tensor: dir/acc.npy, or x.safetensors:acc. */
static void path_of(const struct dump *d, enum dump_tensor t, char *buf, size_t len)
{
	if (d->st[0])
		snprintf(buf, len, "%s:%s", d->st, tensors[t].name);
	else
		snprintf(buf, len, "%s/%s.npy", d->dir, tensors[t].name);
}

/* "[2, 64, 4]"; with any0 the first dimension is any number: "[n, 64, 4]". */
static void shape_str(const size_t *shape, int ndim, int any0, char *buf, size_t len)
{
	size_t o = 0;

	o += (size_t)snprintf(buf + o, len - o, "[");
	for (int i = 0; i < ndim && o < len; i++) {
		if (i == 0 && any0)
			o += (size_t)snprintf(buf + o, len - o, "n");
		else
			o += (size_t)snprintf(buf + o, len - o, "%s%zu", i ? ", " : "", shape[i]);
	}
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

/*
 * The shape tensor t must have for a case whose simulation is w; ndim 0
 * when the case cannot have it (split-K states without segments). For
 * acc and acc_tiles the leading dimension is the dump's own: *free_dim0.
 */
static int want_shape(enum dump_tensor t, const struct attn_result *w,
		      size_t *shape, int *free_dim0)
{
	size_t S = (size_t)w->S, T = (size_t)w->T, H = (size_t)w->Hq;
	size_t dims[5] = { S, T, H, 0, 0 };
	int n = 3;

	*free_dim0 = 0;
	switch (t) {
	case DUMP_ACC:
		*free_dim0 = 1;
		dims[0] = 0;
		n = 0;
		if (w->ksteps_in_acc > 1)
			dims[++n] = (size_t)w->ksteps_in_acc;
		dims[++n] = (size_t)w->wave;
		dims[++n] = (size_t)w->ec;
		n++;
		break;
	case DUMP_ACC_TILES:
		*free_dim0 = 1;
		dims[0] = 0, dims[1] = ATTN_TILE_COLS, n = 2;
		break;
	case DUMP_SCORES: dims[3] = (size_t)w->MAXCTX, n = 4; break;
	case DUMP_OUT:
	case DUMP_Q_INT8: dims[3] = (size_t)w->D, n = 4; break;
	case DUMP_Q_SCALE: break;
	case DUMP_SPLITK_MAX:
	case DUMP_SPLITK_SUM:
	case DUMP_SPLITK_OUT:
		if (!w->seg_max)
			return 0;
		dims[3] = (size_t)w->nseg, n = 4;
		if (t == DUMP_SPLITK_OUT)
			dims[4] = (size_t)w->D, n = 5;
		break;
	/* pv.mode int8: groups in any subset and order, as acc's tiles */
	case DUMP_P_INT8:
	case DUMP_P_SCALE:
	case DUMP_PV_ACC:
	case DUMP_PV_TILES:
		if (!w->pv_tiles)
			return 0;
		*free_dim0 = 1;
		dims[0] = 0;
		if (t == DUMP_P_INT8)
			dims[1] = (size_t)w->wave, dims[2] = (size_t)w->pv_ea, n = 3;
		else if (t == DUMP_P_SCALE)
			dims[1] = (size_t)w->rows, n = 2;
		else if (t == DUMP_PV_ACC)
			dims[1] = (size_t)w->pv_dt, dims[2] = (size_t)w->wave,
			dims[3] = (size_t)w->ec, n = 4;
		else
			dims[1] = ATTN_TILE_COLS, n = 2;
		break;
	case DUMP_COUNT: return 0;
	}
	memcpy(shape, dims, sizeof(dims));
	return n;
}

static enum fs_rc check_one(struct dump *d, enum dump_tensor t,
			    const struct attn_result *w, struct fs_err *err)
{
	const struct npy_array *a = &d->t[t];
	size_t shape[5];
	int free0, n = want_shape(t, w, shape, &free0), ok;
	char path[1200], ws[96], gs[160];

	path_of(d, t, path, sizeof(path));
	if (!n)
		return fs_fail_at(err, FS_EINPUT, path, 0, 0,
				  t >= DUMP_P_INT8 ? "the case's PV is f32 (pv.mode), so no %s" :
				  "the case has no split-K segments, so no %s",
				  tensors[t].name);
	/* A BF16 entry reads as float32: name what the file says. */
	if (a->dtype != tensors[t].dtype || (d->bf16[t] && !tensors[t].bf16_ok))
		return fs_fail_at(err, FS_EINPUT, path, 0, 0, "%s must be %s, not %s",
				  tensors[t].name, npy_dtype_name(tensors[t].dtype),
				  d->bf16[t] ? "BF16" : npy_dtype_name(a->dtype));
	if (free0)
		shape[0] = a->ndim > 0 ? a->shape[0] : 0;
	ok = a->ndim == n;
	for (int i = 0; ok && i < n; i++)
		ok = a->shape[i] == shape[i];
	/* acc_tiles without row_tile: check_tiles sees whether it will do */
	if (t == DUMP_ACC_TILES && a->ndim == 2 && a->shape[1] == ATTN_TILE_COLS - 1)
		ok = 1;
	if (!ok) {
		shape_str(shape, n, free0, ws, sizeof(ws));
		shape_str(a->shape, a->ndim, 0, gs, sizeof(gs));
		return fs_fail_at(err, FS_EINPUT, path, 0, 0,
				  "%s must have shape %s%s, not %s", tensors[t].name, ws,
				  t == DUMP_ACC_TILES ? " (or [n, 4] without row_tile)" : "",
				  gs);
	}
	return FS_OK;
}

/* Order of the first n coordinates of two tiles. */
static int row_cmp_n(const int32_t *a, const int32_t *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/*
 * The first index row of ix whose coordinates begin with xy[0 .. n-1],
 * and through *count how many rows do; ix is sorted, so they are adjacent.
 */
static size_t tile_prefix(const struct dump_tile_index *ix, const int32_t *xy,
			  int n, size_t *count)
{
	size_t lo = 0, hi = ix->n, end;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (row_cmp_n(&ix->rows[mid * (ATTN_TILE_COLS + 1)], xy, n) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < ix->n &&
	     !row_cmp_n(&ix->rows[end * (ATTN_TILE_COLS + 1)], xy, n); end++)
		;
	*count = end - lo;
	return lo;
}

/*
 * d->tiles from acc_tiles: copied, or for 4 columns each row completed
 * with the row_tile of the one simulated tile it names (none: not a tile
 * the case executes; several: a decode group of more than M q heads,
 * whose row tiles only row_tile tells apart).
 */
static enum fs_rc widen_tiles(struct dump *d, const struct attn_result *w,
			      const struct dump_tile_index *sim, const char *path,
			      struct fs_err *err)
{
	const struct npy_array *a = &d->t[DUMP_ACC_TILES];
	const int32_t *xy = a->data;
	int cols = (int)a->shape[1];

	d->tiles = malloc((d->n_tiles ? d->n_tiles : 1) * ATTN_TILE_COLS * sizeof(int32_t));
	if (!d->tiles)
		return fs_nomem(err, "the dump's tile table",
				(d->n_tiles ? d->n_tiles : 1) * ATTN_TILE_COLS * sizeof(int32_t));
	for (size_t i = 0; i < d->n_tiles; i++) {
		const int32_t *p = &xy[i * (size_t)cols];
		int32_t *to = &d->tiles[i * ATTN_TILE_COLS];
		size_t n, at;

		memcpy(to, p, (size_t)cols * sizeof(int32_t));
		if (cols == ATTN_TILE_COLS)
			continue;
		at = tile_prefix(sim, p, cols, &n);
		if (n > 1)
			return fs_fail_at(err, FS_EINPUT, path, 0, 0,
					  "row %zu (seq %d, head %d, row_base %d, token_base %d) names %zu row tiles of the case (a decode group of more than %d q heads); acc_tiles needs a fifth column, row_tile",
					  i, p[0], p[1], p[2], p[3], n, w->rows);
		/* none: -1, which no simulated tile has (reported below) */
		to[ATTN_TILE_COLS - 1] =
			n ? sim->rows[at * (ATTN_TILE_COLS + 1) + ATTN_TILE_COLS - 1] : -1;
	}
	return FS_OK;
}

/*
 * Is p, a tile the simulation does not execute, a key tile of one of
 * its row tiles (rows: the simulation's tiles with token_base 0), at a
 * multiple of N inside the sequence's context? A kernel whose mask or
 * causal bound is wrong runs such tiles (q_position: future): diff
 * compares them (the correct kernel's value is "no tile") and names the
 * class whose emulation runs them too.
 */
static int key_tile_of_a_row(const struct runcase *r, const struct dump_tile_index *rows,
			     const int32_t *p)
{
	int32_t q[ATTN_TILE_COLS];

	if (p[0] < 0 || p[0] >= r->c.n_seqs || p[3] < 0 || p[3] % r->lm->n ||
	    p[3] >= r->c.seqs[p[0]].context)
		return 0;
	memcpy(q, p, sizeof(q));
	q[3] = 0;
	return dump_tile_find(rows, q) >= 0;
}

/* Every dumped tile is one the simulation executes or a key tile of one
 * of its row tiles (key_tile_of_a_row), and each is named once. */
static enum fs_rc check_tiles(struct dump *d, const struct runcase *r,
			      struct fs_err *err)
{
	const struct attn_result *w = &r->sim;
	struct dump_tile_index sim, own, rows = { 0, NULL };
	int32_t *row0 = NULL;
	char path[1200];
	enum fs_rc rc;

	path_of(d, DUMP_ACC_TILES, path, sizeof(path));
	if (d->t[DUMP_ACC].shape[0] != d->t[DUMP_ACC_TILES].shape[0])
		return fs_fail_at(err, FS_EINPUT, path, 0, 0,
				  "acc_tiles has %zu rows but acc.npy has %zu tiles",
				  d->t[DUMP_ACC_TILES].shape[0], d->t[DUMP_ACC].shape[0]);
	d->n_tiles = d->t[DUMP_ACC_TILES].shape[0];
	rc = dump_tile_index_build(w->acc_tiles, w->n_tiles, &sim, err);
	if (rc)
		return rc;
	rc = widen_tiles(d, w, &sim, path, err);
	if (!rc)
		rc = dump_tile_index_build(d->tiles, d->n_tiles, &own, err);
	if (rc) {
		dump_tile_index_free(&sim);
		return rc;
	}
	/* the row tiles the case executes: its tiles at token_base 0 */
	if (w->n_tiles && !(row0 = malloc(w->n_tiles * ATTN_TILE_COLS * sizeof(int32_t))))
		rc = fs_nomem(err, "the dump's tile rows", w->n_tiles * ATTN_TILE_COLS * sizeof(int32_t));
	for (size_t i = 0; !rc && i < w->n_tiles; i++) {
		memcpy(&row0[i * ATTN_TILE_COLS], &w->acc_tiles[i * ATTN_TILE_COLS],
		       ATTN_TILE_COLS * sizeof(int32_t));
		row0[i * ATTN_TILE_COLS + 3] = 0;
	}
	if (!rc)
		rc = dump_tile_index_build(row0, w->n_tiles, &rows, err);
	for (size_t i = 0; i < d->n_tiles && !rc; i++) {
		const int32_t *p = &d->tiles[i * ATTN_TILE_COLS];
		long j = dump_tile_find(&own, p);
		char rt[32] = "";

		if (d->t[DUMP_ACC_TILES].shape[1] == ATTN_TILE_COLS)
			snprintf(rt, sizeof(rt), ", row_tile %d", p[4]);
		if (dump_tile_find(&sim, p) < 0 && !key_tile_of_a_row(r, &rows, p))
			rc = fs_fail_at(err, FS_EINPUT, path, 0, 0,
					"row %zu (seq %d, head %d, row_base %d, token_base %d%s) is not a tile the case executes, nor a key tile of one of its row tiles inside the context",
					i, p[0], p[1], p[2], p[3], rt);
		else if (j != (long)i)	/* j is the first row naming it */
			rc = fs_fail_at(err, FS_EINPUT, path, 0, 0,
					"rows %ld and %zu name the same tile (%d, %d, %d, %d, %d)",
					j, i, p[0], p[1], p[2], p[3], p[4]);
	}
	free(row0);
	dump_tile_index_free(&rows);
	dump_tile_index_free(&sim);
	dump_tile_index_free(&own);
	return rc;
}

/*
 * pv.mode int8: p_int8, p_scale and pv_acc need pv_tiles beside them,
 * with as many rows, and every pv_tiles row is one group the simulation
 * has, once.
 */
static enum fs_rc check_groups(struct dump *d, const struct attn_result *w,
			       struct fs_err *err)
{
	struct dump_tile_index sim, own;
	char path[1200];
	enum fs_rc rc = FS_OK;
	int any = 0;

	for (int t = DUMP_P_INT8; t < DUMP_PV_TILES; t++)
		any |= dump_has(d, (enum dump_tensor)t);
	path_of(d, DUMP_PV_TILES, path, sizeof(path));
	if (!any && !dump_has(d, DUMP_PV_TILES))
		return FS_OK;
	if (!dump_has(d, DUMP_PV_TILES) || !any)
		return fs_fail_at(err, FS_EINPUT, path, 0, 0, "%s", any ?
				  "p_int8, p_scale and pv_acc need pv_tiles.npy beside them (which group each row is)" :
				  "pv_tiles.npy without p_int8, p_scale or pv_acc");
	d->n_groups = d->t[DUMP_PV_TILES].shape[0];
	for (int t = DUMP_P_INT8; t < DUMP_PV_TILES; t++)
		if (dump_has(d, (enum dump_tensor)t) && d->t[t].shape[0] != d->n_groups)
			return fs_fail_at(err, FS_EINPUT, path, 0, 0,
					  "pv_tiles has %zu rows but %s has %zu groups",
					  d->n_groups, tensors[t].name, d->t[t].shape[0]);
	rc = dump_tile_index_build(w->pv_tiles, w->n_groups, &sim, err);
	if (rc)
		return rc;
	rc = dump_tile_index_build(d->t[DUMP_PV_TILES].data, d->n_groups, &own, err);
	for (size_t i = 0; i < d->n_groups && !rc; i++) {
		const int32_t *p = (const int32_t *)d->t[DUMP_PV_TILES].data + i * ATTN_TILE_COLS;
		long j = dump_tile_find(&own, p);

		if (dump_tile_find(&sim, p) < 0)
			rc = fs_fail_at(err, FS_EINPUT, path, 0, 0,
					"row %zu (seq %d, head %d, row_base %d, key_base %d, row_tile %d) is not a PV group the case runs",
					i, p[0], p[1], p[2], p[3], p[4]);
		else if (j != (long)i)
			rc = fs_fail_at(err, FS_EINPUT, path, 0, 0,
					"rows %ld and %zu name the same group (%d, %d, %d, %d, %d)",
					j, i, p[0], p[1], p[2], p[3], p[4]);
	}
	dump_tile_index_free(&sim);
	dump_tile_index_free(&own);
	return rc;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

/*
 * Which file of dir is the dump when it holds no dump .npy: its one
 * *.safetensors, into d->st. Two of them, or one beside dump .npy
 * files, would leave the choice to us: refused.
 */
static enum fs_rc find_safetensors(struct dump *d, int npys, struct fs_err *err)
{
	DIR *dp = opendir(d->dir);
	struct dirent *e;
	enum fs_rc rc = FS_OK;

	if (!dp)
		return fs_fail_at(err, FS_EINPUT, d->dir, 0, 0, "cannot read the "
				  "directory");
	while (!rc && (e = readdir(dp))) {
		if (e->d_name[0] == '.' || !ends_with(e->d_name, ".safetensors"))
			continue;
		if (npys)
			rc = fs_fail_at(err, FS_EINPUT, d->dir, 0, 0, "holds both "
					"dump .npy files and %s; keep one form",
					e->d_name);
		else if (d->st[0])
			rc = fs_fail_at(err, FS_EINPUT, d->dir, 0, 0, "holds more "
					"than one .safetensors (%s and %s); give "
					"--dump the file", strrchr(d->st, '/') + 1,
					e->d_name);
		else if ((size_t)snprintf(d->st, sizeof(d->st), "%s/%s", d->dir,
					  e->d_name) >= sizeof(d->st))
			rc = fs_fail_at(err, FS_EINPUT, d->dir, 0, 0,
					"dump path too long");
	}
	closedir(dp);
	return rc;
}

/* The dump tensors in d->st, each checked as a .npy would be. */
static enum fs_rc load_safetensors(struct dump *d, const struct attn_result *want,
				   int *found, struct fs_err *err)
{
	struct safetensors_file f;
	enum fs_rc rc = safetensors_read(d->st, &f, err);

	for (int t = 0; t < DUMP_COUNT && !rc; t++) {
		const struct safetensors_entry *e = safetensors_find(&f, tensors[t].name);

		if (!e)
			continue;	/* absent: not compared */
		d->bf16[t] = e->bf16;
		rc = safetensors_get(&f, tensors[t].name, &d->t[t], err);
		if (!rc)
			rc = check_one(d, (enum dump_tensor)t, want, err);
		++*found;
	}
	safetensors_file_free(&f);	/* safe after a failed read too */
	return rc;
}

enum fs_rc dump_load(const char *dir, const struct runcase *r, struct dump *d,
		     struct fs_err *err)
{
	const struct attn_result *want = &r->sim;
	struct stat st;
	enum fs_rc rc = FS_OK;
	int found = 0, file;

	memset(d, 0, sizeof(*d));
	file = stat(dir, &st) == 0 && S_ISREG(st.st_mode) &&
	       ends_with(dir, ".safetensors");
	if (!file && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
		return fs_fail_at(err, FS_EINPUT, dir, 0, 0,
				  "not a directory or a .safetensors file");
	if (strlen(dir) >= sizeof(d->dir))
		return fs_fail_at(err, FS_EINPUT, NULL, 0, 0, "dump path too long");
	strcpy(d->dir, dir);
	if (file)
		strcpy(d->st, dir);
	for (int t = 0; t < DUMP_COUNT && !rc && !file; t++) {
		char path[1200];

		path_of(d, (enum dump_tensor)t, path, sizeof(path));
		/* absent: not compared. A name that is there but cannot be
		 * read (a link to nothing, no permission) is an error: taken
		 * for absent, it left its tensor out and diff said "match". */
		if (lstat(path, &st) != 0) {
			if (errno == ENOENT)
				continue;
			rc = fs_fail_at(err, FS_EINPUT, path, 0, 0, "cannot inspect: %s",
					strerror(errno));
			break;
		}
		if (stat(path, &st) != 0) {
			rc = fs_fail_at(err, FS_EINPUT, path, 0, 0,
					"a link to nothing: %s (remove it to leave the "
					"tensor out)", strerror(errno));
			break;
		}
		rc = npy_read(path, &d->t[t], err);
		if (!rc)
			rc = check_one(d, (enum dump_tensor)t, want, err);
		found++;
	}
	if (!rc && !file)
		rc = find_safetensors(d, found, err);
	if (!rc && d->st[0])
		rc = load_safetensors(d, want, &found, err);
	if (!rc && !found)
		rc = fs_fail_at(err, FS_EINPUT, dir, 0, 0,
				"no dump tensors (acc.npy with acc_tiles.npy, scores.npy, out.npy, q_int8.npy, q_scale.npy, splitk_*.npy; pv.mode int8: p_int8.npy, p_scale.npy, pv_acc.npy with pv_tiles.npy)");
	if (!rc && dump_has(d, DUMP_ACC) != dump_has(d, DUMP_ACC_TILES)) {
		char path[1200];

		path_of(d, dump_has(d, DUMP_ACC) ? DUMP_ACC : DUMP_ACC_TILES, path,
			sizeof(path));
		rc = fs_fail_at(err, FS_EINPUT, path, 0, 0, "%s",
				dump_has(d, DUMP_ACC) ?
				"acc.npy needs acc_tiles.npy beside it (which tile each row is)" :
				"acc_tiles.npy without acc.npy");
	}
	if (!rc && dump_has(d, DUMP_ACC))
		rc = check_tiles(d, r, err);
	if (!rc)
		rc = check_groups(d, want, err);
	if (rc)
		dump_free(d);
	return rc;
}

void dump_free(struct dump *d)
{
	for (int t = 0; t < DUMP_COUNT; t++)
		npy_free(&d->t[t]);
	free(d->tiles);
	memset(d, 0, sizeof(*d));
}

/* Coordinates, then the index: a repeated tile finds its first row. */
static int row_cmp(const void *pa, const void *pb)
{
	return row_cmp_n(pa, pb, ATTN_TILE_COLS + 1);
}

enum fs_rc dump_tile_index_build(const int32_t *tiles, size_t n,
				 struct dump_tile_index *ix, struct fs_err *err)
{
	const int w = ATTN_TILE_COLS + 1;

	ix->n = n;
	ix->rows = malloc((n ? n : 1) * w * sizeof(int32_t));
	if (!ix->rows)
		return fs_nomem(err, "a tile index", (n ? n : 1) * w * sizeof(int32_t));
	for (size_t i = 0; i < n; i++) {
		memcpy(&ix->rows[i * w], &tiles[i * ATTN_TILE_COLS],
		       ATTN_TILE_COLS * sizeof(int32_t));
		ix->rows[i * w + ATTN_TILE_COLS] = (int32_t)i;
	}
	qsort(ix->rows, n, w * sizeof(int32_t), row_cmp);
	return FS_OK;
}

long dump_tile_find(const struct dump_tile_index *ix, const int32_t *xy)
{
	size_t n, at = tile_prefix(ix, xy, ATTN_TILE_COLS, &n);

	return n ? ix->rows[at * (ATTN_TILE_COLS + 1) + ATTN_TILE_COLS] : -1;
}

void dump_tile_index_free(struct dump_tile_index *ix)
{
	free(ix->rows);
	ix->rows = NULL;
	ix->n = 0;
}
