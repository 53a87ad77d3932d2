/*
 * fragsim_dump.h - write a dump directory that `fragsim diff` reads, from
 * the host code of any kernel test (C99, C++, HIP or CUDA host code; one
 * file, no library, POSIX for mkdir/rename). docs/dump-format.md is the
 * contract this header writes.
 *
 *   struct fsd_writer w;
 *   struct fsd_tile t = { seq, head, row_base, key_base, row_tile };
 *
 *   if (fsd_begin(&w, "dump") ||                        dump.tmp.PID/
 *       fsd_acc_tile(&w, &t, 64, 4, 1, acc_of_tile) ||  (once per tile)
 *       fsd_tensor(&w, "scores", FSD_F32, s, 4, shape) ||   scores.npy
 *       fsd_commit(&w))                                 -> dump/
 *           fprintf(stderr, "%s\n", w.error), fsd_abort(&w);
 *
 * acc_of_tile is what the instruction left in the wave's accumulator
 * registers after the tile's K-steps, in register order: [wave][EC]
 * int32 (lane-major, lane L's element e at L * EC + e), or [ksteps][wave]
 * [EC] for a kernel that keeps one accumulator per K-step. fsd_commit
 * writes acc.npy [n][(ksteps)][wave][EC] and acc_tiles.npy int32 [n][5]
 * (one row per fsd_acc_tile call, in call order), the tensors given to
 * fsd_tensor, and manifest.json, all in DIR.tmp.PID, then renames that
 * directory to DIR: a failed or killed test leaves no half dump behind.
 * A previous dump at DIR (it holds manifest.json) is replaced; any other
 * non-empty DIR is refused. DIR's missing parent directories are created,
 * as `fragsim run --out` creates them.
 *
 * Poison: fill every output buffer with fsd_poison_i32 / fsd_poison_f32
 * before the kernel runs, so an entry the kernel never writes reaches the
 * dump as FSD_POISON_I32 (0x5a5a5a5a, past any |acc| an INT8 tile can
 * reach: 1024 dims x 127 x 128 < 2^24) or the NaN FSD_POISON_F32
 * (0x7fe5a5a5, a quiet NaN with a payload no arithmetic produces), and `fragsim diff`
 * reports it as unwritten instead of as a wrong value - or, worse, as
 * the -inf of a masked key that a -inf pre-fill would fake.
 *
 * INT8 PV (pv.mode: int8): a kernel's p_int8 [g][wave][EA] int8,
 * p_scale [g][M] f32, pv_acc [g][D/N][wave][EC] int32 and pv_tiles
 * [g][5] int32 (one fsd_tile_row per group, key_base its first key) go
 * through fsd_tensor under those names (docs/dump-format.md).
 *
 * Every function returns 0, or -1 with w->error saying what failed (and
 * later calls on that writer fail too). Only fsd_abort and fsd_commit
 * release the writer's memory.
 */
#ifndef FRAGSIM_DUMP_H
#define FRAGSIM_DUMP_H

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "fragsim_dump.h writes .npy data as the host's bytes: little-endian only"
#endif

#define FSD_MAX_DIMS 5
#define FSD_MAX_FILES 16	/* every dump tensor, INT8 PV's four too, and the manifest */
#define FSD_TILE_COORDS 5

enum fsd_dtype { FSD_I8, FSD_I32, FSD_F32 };

/* The unwritten-entry patterns (docs/dump-format.md, "Poison"). */
#define FSD_POISON_I32 0x5a5a5a5a
#define FSD_POISON_F32_BITS 0x7fe5a5a5u

static inline void fsd_poison_i32(int32_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = FSD_POISON_I32;
}

static inline void fsd_poison_f32(float *p, size_t n)
{
	uint32_t bits = FSD_POISON_F32_BITS;

	for (size_t i = 0; i < n; i++)
		memcpy(&p[i], &bits, sizeof(bits));
}

/*
 * The tile a kernel computed, in the kernel's own terms. This struct and
 * fsd_tile_row are the only places that know the acc_tiles layout.
 */
struct fsd_tile {
	int seq;	/* sequence of the case, 0-based, in case order */
	int head;	/* decode: the kv head whose q-head group fills the
			   rows; prefill: the q head (rows are query tokens) */
	int row_base;	/* prefill: query token of row 0 (index within the
			   sequence's chunk); decode: the query token (0 for
			   a one-token decode step) */
	int key_base;	/* logical key token of column 0 (before the block
			   table): 0, 16, 32, ... */
	int row_tile;	/* which M-row tile of the head's rows: decode row m
			   is q head head*G + (M*row_tile + m) % G, so a
			   group of G > M q heads (MQA 32/1) takes ceil(G/M) row
			   tiles per kv head, 0 when G <= M (a packed kernel,
			   kernel: decode_rows: packed, holds q head
			   head*G + M*row_tile + m while that is < G and zero
			   padding rows after); prefill: row_base / M */
};

/* The acc_tiles.npy row of tile t: (seq, head, row_base, token_base,
 * row_tile). */
static inline void fsd_tile_row(const struct fsd_tile *t,
				int32_t row[FSD_TILE_COORDS])
{
	row[0] = t->seq;
	row[1] = t->head;
	row[2] = t->row_base;
	row[3] = t->key_base;
	row[4] = t->row_tile;
}

struct fsd_file {
	char name[32];		/* "scores", without .npy */
	enum fsd_dtype dtype;
	int ndim;
	size_t shape[FSD_MAX_DIMS];
};

struct fsd_writer {
	char dir[1024];		/* the final directory */
	char tmp[1100];		/* where files go until fsd_commit */
	int wave, ec, ksteps;	/* acc geometry, set by the first tile */
	int32_t *acc;		/* [n_tiles][ksteps][wave][ec] */
	int32_t *tiles;		/* [n_tiles][FSD_TILE_COORDS] */
	size_t n_tiles, cap;
	int nfiles;
	struct fsd_file files[FSD_MAX_FILES];
	int failed;
	int packed_rows;	/* set after fsd_begin: 1 when decode rows are
				   packed (kernel: decode_rows: packed), for the
				   manifest's "decode_rows" */
	char error[1400];
};

static inline int fsd_fail(struct fsd_writer *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->error, sizeof(w->error), fmt, ap);
	va_end(ap);
	w->failed = 1;
	return -1;
}

/* The tensors fragsim diff (and probe solve) read besides acc, and their dtypes. */
static inline int fsd_known(const char *name, enum fsd_dtype *dtype)
{
	static const char *const f32[] = { "scores", "out", "q_scale", "splitk_max",
					   "splitk_sum", "splitk_out", "p_scale" };
	/* pv.mode int8: the groups' accumulators and coordinates */
	static const char *const i32[] = { "pv_acc", "pv_tiles" };

	for (size_t i = 0; i < sizeof(f32) / sizeof(f32[0]); i++)
		if (!strcmp(name, f32[i])) {
			*dtype = FSD_F32;
			return 1;
		}
	for (size_t i = 0; i < sizeof(i32) / sizeof(i32[0]); i++)
		if (!strcmp(name, i32[i])) {
			*dtype = FSD_I32;
			return 1;
		}
	if (!strcmp(name, "q_int8") || !strcmp(name, "p_int8")) {
		*dtype = FSD_I8;
		return 1;
	}
	if (!strcmp(name, "probe_c")) {	/* for fragsim probe solve */
		*dtype = FSD_I32;
		return 1;
	}
	return 0;
}

static inline const char *fsd_dtype_name(enum fsd_dtype t)
{
	return t == FSD_I8 ? "int8" : t == FSD_I32 ? "int32" : "float32";
}

static inline size_t fsd_dtype_size(enum fsd_dtype t)
{
	return t == FSD_I8 ? 1 : 4;
}

/*
 * tmp/name.npy: NumPy format 1.0, C order, little-endian. The header
 * dict is padded with spaces and ends in '\n' so the data starts at a
 * multiple of 64 bytes, as numpy writes it.
 */
static inline int fsd_npy(struct fsd_writer *w, const char *name,
			  enum fsd_dtype dtype, const void *data, int ndim,
			  const size_t *shape)
{
	static const char *const descr[] = { "|i1", "<i4", "<f4" };
	char path[1200], head[512];
	size_t n = 1, len;
	unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0 };
	FILE *f;
	int o, ok;

	o = snprintf(head, sizeof(head), "{'descr': '%s', 'fortran_order': False, 'shape': (",
		     descr[dtype]);
	for (int i = 0; i < ndim; i++) {
		o += snprintf(head + o, sizeof(head) - (size_t)o, "%s%zu", i ? ", " : "",
			      shape[i]);
		n *= shape[i];
	}
	o += snprintf(head + o, sizeof(head) - (size_t)o, "%s), }", ndim == 1 ? "," : "");
	len = (size_t)o;
	while ((10 + len + 1) % 64)
		head[len++] = ' ';
	head[len++] = '\n';
	pre[8] = (unsigned char)(len & 0xff);
	pre[9] = (unsigned char)(len >> 8);
	snprintf(path, sizeof(path), "%s/%s.npy", w->tmp, name);
	f = fopen(path, "wb");
	if (!f)
		return fsd_fail(w, "fragsim_dump: %s: %s", path, strerror(errno));
	ok = fwrite(pre, 1, 10, f) == 10 && fwrite(head, 1, len, f) == len &&
	     (n == 0 || fwrite(data, fsd_dtype_size(dtype), n, f) == n);
	if (fclose(f) != 0 || !ok)
		return fsd_fail(w, "fragsim_dump: %s: write failed", path);
	if (w->nfiles == FSD_MAX_FILES)
		return fsd_fail(w, "fragsim_dump: more than %d files", FSD_MAX_FILES);
	snprintf(w->files[w->nfiles].name, sizeof(w->files[0].name), "%s", name);
	w->files[w->nfiles].dtype = dtype;
	w->files[w->nfiles].ndim = ndim;
	memcpy(w->files[w->nfiles].shape, shape, (size_t)ndim * sizeof(*shape));
	w->nfiles++;
	return 0;
}

/*
 * Create the missing parents of path (not path itself), like mkdir -p of
 * its dirname: 0, or -1 with w->error naming the directory that could
 * not be made.
 */
static inline int fsd_parents(struct fsd_writer *w, const char *path)
{
	char p[1024];
	struct stat st;

	snprintf(p, sizeof(p), "%s", path);
	for (char *q = p + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = '\0';
		if (stat(p, &st) != 0 && mkdir(p, 0777) != 0 && errno != EEXIST) {
			int e = errno;

			return fsd_fail(w, "fragsim_dump: cannot create the dump's parent directory %s: %s",
					p, strerror(e));
		}
		if (stat(p, &st) == 0 && !S_ISDIR(st.st_mode))
			return fsd_fail(w, "fragsim_dump: %s: not a directory (a parent of the dump %s)",
					p, path);
		*q = '/';
	}
	return 0;
}

/* Start a dump that will appear at dir when committed. */
static inline int fsd_begin(struct fsd_writer *w, const char *dir)
{
	memset(w, 0, sizeof(*w));
	if (strlen(dir) >= sizeof(w->dir) - 32)
		return fsd_fail(w, "fragsim_dump: %s: path too long", dir);
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	if (fsd_parents(w, dir))
		return -1;
	snprintf(w->tmp, sizeof(w->tmp), "%s.tmp.%ld", dir, (long)getpid());
	if (mkdir(w->tmp, 0777) != 0) {
		int e = errno;

		fsd_fail(w, "fragsim_dump: %s: %s", w->tmp, strerror(e));
		w->tmp[0] = '\0';	/* not ours: fsd_abort must leave it */
		return -1;
	}
	return 0;
}

/*
 * Add one tile: acc is [ksteps][wave][ec] int32 in register order
 * (ksteps 1 unless the kernel keeps one accumulator per K-step). Every
 * tile of a dump has the same geometry.
 */
static inline int fsd_acc_tile(struct fsd_writer *w, const struct fsd_tile *t,
			       int wave, int ec, int ksteps, const int32_t *acc)
{
	size_t per;

	if (w->failed)
		return -1;
	if (wave <= 0 || ec <= 0 || ksteps <= 0)
		return fsd_fail(w, "fragsim_dump: tile geometry wave %d, ec %d, ksteps %d",
				wave, ec, ksteps);
	if (w->n_tiles && (wave != w->wave || ec != w->ec || ksteps != w->ksteps))
		return fsd_fail(w, "fragsim_dump: tile %zu is %dx%dx%d, the first was %dx%dx%d",
				w->n_tiles, ksteps, wave, ec, w->ksteps, w->wave, w->ec);
	w->wave = wave, w->ec = ec, w->ksteps = ksteps;
	per = (size_t)ksteps * (size_t)wave * (size_t)ec;
	if (w->n_tiles == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		int32_t *a = (int32_t *)realloc(w->acc, cap * per * sizeof(int32_t));
		int32_t *x;

		if (a)
			w->acc = a;
		x = a ? (int32_t *)realloc(w->tiles, cap * FSD_TILE_COORDS * sizeof(int32_t)) : NULL;
		if (!x)
			return fsd_fail(w, "fragsim_dump: out of memory");
		w->tiles = x;
		w->cap = cap;
	}
	memcpy(w->acc + w->n_tiles * per, acc, per * sizeof(int32_t));
	fsd_tile_row(t, w->tiles + w->n_tiles * FSD_TILE_COORDS);
	w->n_tiles++;
	return 0;
}

/* Write a whole tensor under its golden name (docs/dump-format.md). */
static inline int fsd_tensor(struct fsd_writer *w, const char *name,
			     enum fsd_dtype dtype, const void *data, int ndim,
			     const size_t *shape)
{
	enum fsd_dtype want;

	if (w->failed)
		return -1;
	if (!fsd_known(name, &want))
		return fsd_fail(w, "fragsim_dump: '%s' is not a dump tensor (acc goes through fsd_acc_tile)",
				name);
	if (dtype != want)
		return fsd_fail(w, "fragsim_dump: %s must be %s, not %s", name,
				fsd_dtype_name(want), fsd_dtype_name(dtype));
	if (ndim < 1 || ndim > FSD_MAX_DIMS)
		return fsd_fail(w, "fragsim_dump: %s: %d dimensions", name, ndim);
	for (int i = 0; i < w->nfiles; i++)
		if (!strcmp(w->files[i].name, name))
			return fsd_fail(w, "fragsim_dump: %s written twice", name);
	return fsd_npy(w, name, dtype, data, ndim, shape);
}

/* Remove a flat directory of files (a dump, ours or an older one). */
static inline int fsd_rmdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[1400];

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		/* a name that does not fit is not ours: left, and rmdir fails */
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < sizeof(path))
			unlink(path);
	}
	closedir(d);
	return rmdir(dir);
}

static inline void fsd_release(struct fsd_writer *w)
{
	free(w->acc);
	free(w->tiles);
	w->acc = NULL;
	w->tiles = NULL;
	w->n_tiles = w->cap = 0;
}

/* Give up: remove the temporary directory, release memory. */
static inline void fsd_abort(struct fsd_writer *w)
{
	if (w->tmp[0])
		fsd_rmdir(w->tmp);
	w->tmp[0] = '\0';
	fsd_release(w);
}

static inline int fsd_manifest(struct fsd_writer *w)
{
	char path[1200];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/manifest.json", w->tmp);
	f = fopen(path, "w");
	if (!f)
		return fsd_fail(w, "fragsim_dump: %s: %s", path, strerror(errno));
	fprintf(f, "{\n  \"fragsim_dump\": 1,\n  \"writer\": \"tools/device/fragsim_dump.h\",\n");
	fprintf(f, "  \"acc_tiles_columns\": [\"seq\", \"head\", \"row_base\", \"token_base\", \"row_tile\"],\n");
	/* For people: diff follows the case's kernel: decode_rows. */
	fprintf(f, "  \"decode_rows\": \"%s\",\n", w->packed_rows ? "packed" : "replicated");
	fprintf(f, "  \"files\": [");
	for (int i = 0; i < w->nfiles; i++) {
		const struct fsd_file *x = &w->files[i];

		fprintf(f, "%s\n    {\"name\": \"%s.npy\", \"dtype\": \"%s\", \"shape\": [",
			i ? "," : "", x->name, fsd_dtype_name(x->dtype));
		for (int d = 0; d < x->ndim; d++)
			fprintf(f, "%s%zu", d ? ", " : "", x->shape[d]);
		fprintf(f, "]}");
	}
	fprintf(f, "\n  ]\n}\n");
	ok = !ferror(f);
	if (fclose(f) != 0 || !ok)
		return fsd_fail(w, "fragsim_dump: %s: write failed", path);
	return 0;
}

/*
 * Write acc.npy, acc_tiles.npy (when tiles were added) and manifest.json,
 * then rename the temporary directory to its final name. On failure the
 * temporary directory is removed and the final one left as it was.
 */
static inline int fsd_commit(struct fsd_writer *w)
{
	char old[1200], mf[1200];
	struct stat st;
	int rc = 0;

	if (!w->failed && w->n_tiles) {
		size_t sa[4], st4[2] = { w->n_tiles, FSD_TILE_COORDS };
		int n = 0;

		sa[n++] = w->n_tiles;
		if (w->ksteps > 1)
			sa[n++] = (size_t)w->ksteps;
		sa[n++] = (size_t)w->wave;
		sa[n++] = (size_t)w->ec;
		if (!fsd_npy(w, "acc", FSD_I32, w->acc, n, sa))
			fsd_npy(w, "acc_tiles", FSD_I32, w->tiles, 2, st4);
	}
	if (!w->failed && !w->nfiles)
		fsd_fail(w, "fragsim_dump: nothing to dump (no tile, no tensor)");
	if (!w->failed)
		fsd_manifest(w);
	old[0] = '\0';
	if (!w->failed && rename(w->tmp, w->dir) != 0) {
		/* DIR exists: replace it only if it is a dump (manifest.json). */
		snprintf(mf, sizeof(mf), "%s/manifest.json", w->dir);
		snprintf(old, sizeof(old), "%s.old.%ld", w->dir, (long)getpid());
		if (stat(mf, &st) != 0)
			fsd_fail(w, "fragsim_dump: %s exists, is not empty and holds no manifest.json; refusing to replace it",
				 w->dir);
		else if (rename(w->dir, old) != 0)
			fsd_fail(w, "fragsim_dump: %s: %s", w->dir, strerror(errno));
		else if (rename(w->tmp, w->dir) != 0) {
			fsd_fail(w, "fragsim_dump: %s: %s", w->dir, strerror(errno));
			rename(old, w->dir);	/* put the older dump back */
			old[0] = '\0';
		}
	}
	if (w->failed) {
		rc = -1;
		fsd_abort(w);
	} else {
		if (old[0])
			fsd_rmdir(old);
		w->tmp[0] = '\0';
		fsd_release(w);
	}
	return rc;
}

#endif
