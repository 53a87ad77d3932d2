/*
 * golden.c - write the golden tensors and manifest of a run (golden.h).
 *
 *   out/
 *     manifest.json        case echo, mode, softmax_scale, version, profile
 *                          name and digest, seed, rounding, every file with
 *                          dtype, shape and sha256
 *     q.npy q_int8.npy q_scale.npy k_cache.npy k_scale.npy v_cache.npy
 *     [v_scale.npy] [pool_blocks.npy] block_table.npy context_lens.npy
 *     q_pos.npy                                                  (inputs)
 *     acc.npy acc_tiles.npy                                      (acc)
 *     [p_int8.npy p_scale.npy pv_acc.npy pv_tiles.npy]  (acc, pv.mode int8)
 *     scores.npy                                                 (scores)
 *     out.npy                                                    (out)
 *     splitk_max.npy splitk_sum.npy splitk_out.npy               (splitk)
 *
 * With --format safetensors the tensors go into one golden.safetensors
 * whose __metadata__ holds the manifest (key "manifest"); manifest.json
 * is written as well. A file's sha256 is that of the .npy file, or of the
 * tensor's data bytes inside golden.safetensors.
 *
 * GOLDEN_SAFETENSORS_BF16 (`run --bf16`) stores q and out as BF16, the
 * dtype a vLLM-style kernel takes and gives: q is BF16-representable, so
 * exact; out is rounded to nearest even. The manifest says "bfloat16"
 * and the sha256 is of the BF16 bytes. Every other tensor is unchanged.
 */
#include "golden.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "casefile.h"
#include "json.h"
#include "npy.h"
#include "outdir.h"
#include "safetensors.h"
#include "sha256.h"

struct tensor {
	const char *name;	/* without .npy */
	enum npy_dtype dtype;
	int ndim;
	size_t shape[5];
	const void *data;
	uint16_t *bits;		/* BF16 copy of data (owned), or NULL */
	char sha[65];
	unsigned group;		/* its GOLD_* bit */
};

struct tlist {
	struct tensor t[GOLDEN_MAX_TENSORS];
	int n;
	unsigned groups;	/* GOLD_* bits of the groups with a file in t */
	unsigned cur;		/* the group add() is filling */
};

static void add(struct tlist *l, const char *name, enum npy_dtype dt,
		const void *data, int ndim, size_t d0, size_t d1, size_t d2,
		size_t d3, size_t d4)
{
	struct tensor *t = &l->t[l->n++];
	size_t dims[5] = { d0, d1, d2, d3, d4 };

	t->name = name;
	t->dtype = dt;
	t->ndim = ndim;
	t->data = data;
	t->bits = NULL;
	t->group = l->cur;
	memcpy(t->shape, dims, sizeof(dims));
}

static void collect(const struct runcase *r, struct tlist *l)
{
	const struct fs_case *c = &r->c;
	const struct fs_inputs *in = &r->in;
	const struct attn_result *a = &r->sim;
	size_t S = (size_t)in->S, T = (size_t)in->T, Hq = (size_t)in->Hq,
	       Hkv = (size_t)in->Hkv, D = (size_t)in->D, BS = (size_t)in->BS,
	       NB = (size_t)in->NM;	/* the stored blocks (a sparse pool: pool_blocks) */

	l->n = 0;
	l->cur = 0;
	l->groups = 0;
	if (c->golden & GOLD_INPUTS) {
		l->groups |= GOLD_INPUTS;
		l->cur = GOLD_INPUTS;
		add(l, "q", NPY_F32, in->q, 4, S, T, Hq, D, 0);
		add(l, "q_int8", NPY_I8, in->q_int8, 4, S, T, Hq, D, 0);
		add(l, "q_scale", NPY_F32, in->q_scale, 3, S, T, Hq, 0, 0);
		/* A padded pool (cache.block_stride) is written as it lies,
		 * [NB][BSTR]; a dense one in its logical shape. */
		if (in->BSTR)
			add(l, "k_cache", NPY_I8, in->k_cache, 2, NB, in->BSTR, 0, 0, 0);
		else
			add(l, "k_cache", NPY_I8, in->k_cache, 5, NB, Hkv, D / 16, BS, 16);
		if (c->k_scale == KSCALE_PER_BLOCK32)
			add(l, "k_scale", NPY_F16, in->k_scale16, 4, NB, BS, Hkv, D / 32, 0);
		else if (c->k_scale == KSCALE_PER_TENSOR)
			add(l, "k_scale", NPY_F32, in->k_scale, 1, 1, 0, 0, 0, 0);
		else if (c->k_scale == KSCALE_PER_HEAD)
			add(l, "k_scale", NPY_F32, in->k_scale, 1, Hkv, 0, 0, 0, 0);
		else
			add(l, "k_scale", NPY_F32, in->k_scale, 3, NB, BS, Hkv, 0, 0);
		if (case_v_bytes(c->v_dtype)) {
			if (in->BSTR)
				add(l, "v_cache", NPY_I8, in->v_cache_i8, 2, NB, in->BSTR, 0, 0, 0);
			else
				add(l, "v_cache", NPY_I8, in->v_cache_i8, 4, NB, Hkv, D, BS, 0);
			/* q8_0, q4_0: one fp16 scale per 32 dims of a slot */
			if (case_v_blocks(c->v_dtype))
				add(l, "v_scale", NPY_F16, in->v_scale16, 4, NB, BS, Hkv, D / 32, 0);
			else if (in->v_scale_ch)	/* per_channel: static, no block */
				add(l, "v_scale", NPY_F32, in->v_scale_ch, 2, Hkv, D, 0, 0, 0);
			else
				add(l, "v_scale", NPY_F32, in->v_scale, 3, NB, BS, Hkv, 0, 0);
		} else {
			if (in->BSTR)
				add(l, "v_cache", NPY_F32, in->v_cache_f, 2, NB, in->BSTR, 0, 0, 0);
			else
				add(l, "v_cache", NPY_F32, in->v_cache_f, 4, NB, Hkv, D, BS, 0);
		}
		/* A sparse pool (sim/attn/inputs.h) is written as stored:
		 * row m of every [NB] array above is physical block
		 * pool_blocks[m]; the others are poison and not written. */
		if (in->pool_blocks)
			add(l, "pool_blocks", NPY_I32, in->pool_blocks, 1, NB, 0, 0, 0, 0);
		add(l, "block_table", NPY_I32, in->block_table, 2, S, (size_t)in->MAXB, 0, 0, 0);
		add(l, "context_lens", NPY_I32, in->context_lens, 1, S, 0, 0, 0, 0);
		add(l, "q_pos", NPY_I32, in->q_pos, 2, S, T, 0, 0, 0);
	}
	if (c->golden & GOLD_ACC) {
		l->groups |= GOLD_ACC;
		l->cur = GOLD_ACC;
		if (a->ksteps_in_acc > 1)
			add(l, "acc", NPY_I32, a->acc, 4, a->n_tiles, (size_t)a->ksteps_in_acc,
			    (size_t)a->wave, (size_t)a->ec, 0);
		else
			add(l, "acc", NPY_I32, a->acc, 3, a->n_tiles, (size_t)a->wave,
			    (size_t)a->ec, 0, 0);
		add(l, "acc_tiles", NPY_I32, a->acc_tiles, 2, a->n_tiles, ATTN_TILE_COLS,
		    0, 0, 0);
		/* pv.mode int8: the second product's registers, per group */
		if (a->pv_acc) {
			add(l, "p_int8", NPY_I8, a->p_int8, 3, a->n_groups, (size_t)a->wave,
			    (size_t)a->pv_ea, 0, 0);
			add(l, "p_scale", NPY_F32, a->p_scale, 2, a->n_groups, (size_t)a->rows,
			    0, 0, 0);
			add(l, "pv_acc", NPY_I32, a->pv_acc, 4, a->n_groups, (size_t)a->pv_dt,
			    (size_t)a->wave, (size_t)a->ec, 0);
			add(l, "pv_tiles", NPY_I32, a->pv_tiles, 2, a->n_groups, ATTN_TILE_COLS,
			    0, 0, 0);
		}
	}
	if (c->golden & GOLD_SCORES) {
		l->groups |= GOLD_SCORES;
		l->cur = GOLD_SCORES;
		add(l, "scores", NPY_F32, a->scores, 4, S, T, Hq, (size_t)a->MAXCTX, 0);
	}
	if (c->golden & GOLD_OUT) {
		l->groups |= GOLD_OUT;
		l->cur = GOLD_OUT;
		add(l, "out", NPY_F32, a->out, 4, S, T, Hq, D, 0);
	}
	if ((c->golden & GOLD_SPLITK) && a->nseg > 1) {
		l->groups |= GOLD_SPLITK;
		l->cur = GOLD_SPLITK;
		add(l, "splitk_max", NPY_F32, a->seg_max, 4, S, T, Hq, (size_t)a->nseg, 0);
		add(l, "splitk_sum", NPY_F32, a->seg_sum, 4, S, T, Hq, (size_t)a->nseg, 0);
		add(l, "splitk_out", NPY_F32, a->seg_out, 5, S, T, Hq, (size_t)a->nseg, D);
	}
}

void golden_profile_digest(const struct lanemap *lm, char hex[65])
{
	struct sha256 h;
	int32_t head[4] = { lm->wave, lm->m, lm->n, lm->k };

	sha256_init(&h);
	sha256_update(&h, head, sizeof(head));
	for (int op = 0; op < LM_NOPERANDS; op++) {
		const struct lanemap_operand *o = &lm->op[op];
		int32_t g[3] = { (int32_t)o->type, o->elems, o->replicas };
		size_t n = (size_t)lm->wave * (size_t)o->elems;

		sha256_update(&h, g, sizeof(g));
		sha256_update(&h, o->row, n * sizeof(int32_t));
		sha256_update(&h, o->col, n * sizeof(int32_t));
	}
	sha256_final_hex(&h, hex);
}

static size_t count(const struct tensor *t)
{
	size_t n = 1;

	for (int i = 0; i < t->ndim; i++)
		n *= t->shape[i];
	return n;
}

static size_t nbytes(const struct tensor *t)
{
	return count(t) * (t->bits ? 2 : npy_dtype_size(t->dtype));
}

int golden_list(const struct runcase *r, enum golden_format fmt,
		struct golden_entry *e)
{
	struct tlist l;

	collect(r, &l);
	for (int i = 0; i < l.n; i++) {
		const struct tensor *t = &l.t[i];
		int bf16 = fmt == GOLDEN_SAFETENSORS_BF16 &&
			   (!strcmp(t->name, "q") || !strcmp(t->name, "out"));

		e[i].name = t->name;
		e[i].bytes = (double)count(t) * (bf16 ? 2 : npy_dtype_size(t->dtype));
		e[i].group = t->group;
	}
	return l.n;
}

/* q and out as BF16 (--bf16): the copies the file and the digests use. */
static enum fs_rc to_bf16(struct tlist *l, struct fs_err *err)
{
	for (int i = 0; i < l->n; i++) {
		struct tensor *t = &l->t[i];
		const float *f = t->data;
		size_t n = count(t);

		if (strcmp(t->name, "q") && strcmp(t->name, "out"))
			continue;
		t->bits = malloc((n ? n : 1) * sizeof(*t->bits));
		if (!t->bits)
			return fs_nomem(err, "the BF16 copy of a golden tensor",
					n * sizeof(*t->bits));
		for (size_t k = 0; k < n; k++)
			t->bits[k] = safetensors_bf16_from_f32(f[k]);
	}
	return FS_OK;
}

static char *case_yaml(const struct fs_case *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	case_print(f, c);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * The "vllm" object: what a vLLM-style paged-attention test passes, in
 * vLLM's names. vLLM flattens the query tokens of all sequences into
 * [num_tokens, Hq, D]; query_start_loc[s]..query_start_loc[s+1] are
 * sequence s's rows. Our real tokens are those with q_pos >= 0 (the
 * padding is -1), taken in (s, t) order, so the counts come from q_pos
 * alone and do not depend on threads or executor.
 */
static void manifest_vllm(const struct runcase *r, const struct tlist *l,
			  struct json *j)
{
	const struct fs_inputs *in = &r->in;
	int64_t total = 0;

	json_key(j, "vllm");
	json_begin_object(j);
	json_key_string(j, "seq_lens", "context_lens");
	json_key_string(j, "block_tables", "block_table");
	json_key(j, "query_start_loc");
	json_begin_array_compact(j);
	json_int(j, 0);
	for (int s = 0; s < in->S; s++) {
		for (int t = 0; t < in->T; t++)
			total += in->q_pos[(size_t)s * (size_t)in->T + (size_t)t] >= 0;
		json_int(j, total);
	}
	json_end_array(j);
	json_key_int(j, "num_tokens", total);
	for (int i = 0; i < 2; i++) {
		const char *from = i ? "out" : "q";

		if (i && !(l->groups & GOLD_OUT))
			continue;
		json_key(j, i ? "output" : "query");
		json_begin_object(j);
		json_key_string(j, "from", from);
		json_key_string(j, "layout", "[S,T,Hq,D] -> [num_tokens,Hq,D]: "
				"the tokens with q_pos >= 0, in (s, t) order");
		json_end_object(j);
	}
	json_end_object(j);
}

static enum fs_rc manifest(const struct runcase *r, const struct tlist *l,
			   enum golden_format fmt, struct json *j)
{
	const struct fs_case *c = &r->c;
	char digest[65], *yaml = case_yaml(c);

	if (!yaml)	/* open_memstream's buffer: the manifest's err says so */
		return fs_nomem(&j->err, "the case's YAML for manifest.json", 0);
	golden_profile_digest(r->lm, digest);
	json_begin_object(j);
	/* the mark that lets a later --out replace this directory */
	json_key_string(j, OUTDIR_MARK_KEY, OUTDIR_MARK_VALUE);
	json_key_string(j, "fragsim_version", FRAGSIM_VERSION);
	json_key_string(j, "case", c->name);
	json_key_string(j, "mode", case_mode_name(c->mode));
	/* which q head each decode row of acc holds (kernel: decode_rows) */
	if (c->mode == MODE_DECODE)
		json_key_string(j, "decode_rows",
				c->decode_rows == ROWS_PACKED ? "packed" : "replicated");
	json_key_double(j, "softmax_scale", c->softmax_scale);
	json_key_uint(j, "seed", c->seed);
	json_key_string(j, "rounding", case_rounding_name(c->rounding));
	json_key_int(j, "clip", c->clip);
	json_key(j, "profile");
	json_begin_object(j);
	json_key_string(j, "name", r->lm->name);
	json_key_string(j, "instruction", r->lm->instr);
	json_key_string(j, "digest", digest);
	json_end_object(j);
	json_key_bool(j, "int8_path", r->route.inside);
	/* false: written by --emulate-only, never compared with the reference */
	json_key_bool(j, "checked", !r->emulate_only);
	/* What was written, not what was asked: a case without split-K
	 * segments asks for splitk and gets no file. */
	json_key(j, "golden");
	json_begin_array_compact(j);
	for (int i = 0; case_golden_name(i); i++)
		if (l->groups & (1u << i))
			json_string(j, case_golden_name(i));
	json_end_array(j);
	json_key_string(j, "format", fmt == GOLDEN_NPY ? "npy" : "safetensors");
	json_key(j, "files");
	json_begin_array(j);
	for (int i = 0; i < l->n; i++) {
		const struct tensor *t = &l->t[i];
		char name[64];

		snprintf(name, sizeof(name), "%s%s", t->name,
			 fmt == GOLDEN_NPY ? ".npy" : "");
		json_begin_object(j);
		json_key_string(j, "name", name);
		json_key_string(j, "dtype", t->bits ? "bfloat16" : npy_dtype_name(t->dtype));
		json_key(j, "shape");
		json_begin_array_compact(j);
		for (int d = 0; d < t->ndim; d++)
			json_uint(j, t->shape[d]);
		json_end_array(j);
		json_key_string(j, "sha256", t->sha);
		json_end_object(j);
	}
	json_end_array(j);
	/* q_pos, q and the tables are the inputs group's */
	if (l->groups & GOLD_INPUTS)
		manifest_vllm(r, l, j);
	json_key_string(j, "case_yaml", yaml);
	json_end_object(j);
	free(yaml);
	return json_finish(j);
}

enum fs_rc golden_write(const struct runcase *r, const char *dir,
			enum golden_format fmt, struct fs_err *err)
{
	struct tlist l;
	struct outdir d;
	struct json j;
	char path[4096];
	enum fs_rc rc;

	collect(r, &l);
	rc = fmt == GOLDEN_SAFETENSORS_BF16 ? to_bf16(&l, err) : FS_OK;
	if (!rc)
		rc = outdir_begin(&d, dir, err);
	if (rc) {
		for (int i = 0; i < l.n; i++)
			free(l.t[i].bits);
		return rc;
	}
	json_init_mem(&j, 1);
	for (int i = 0; i < l.n && !rc; i++) {
		struct tensor *t = &l.t[i];
		char name[64];

		if (fmt != GOLDEN_NPY) {
			sha256_hex(t->bits ? (const void *)t->bits : t->data, nbytes(t),
				   t->sha);
			continue;
		}
		snprintf(name, sizeof(name), "%s.npy", t->name);
		rc = outdir_path(&d, name, path, sizeof(path), err);
		if (!rc)
			rc = npy_write(path, t->dtype, t->ndim, t->shape, t->data, t->sha, err);
	}
	if (!rc) {
		rc = manifest(r, &l, fmt, &j);
		if (rc)
			*err = j.err;
	}
	if (!rc && fmt != GOLDEN_NPY) {
		struct safetensors st;

		safetensors_init(&st);
		for (int i = 0; i < l.n && !rc; i++)
			rc = l.t[i].bits ?
			     safetensors_add_bf16(&st, l.t[i].name, l.t[i].ndim,
						  l.t[i].shape, l.t[i].bits, err) :
			     safetensors_add(&st, l.t[i].name, l.t[i].dtype, l.t[i].ndim,
					     l.t[i].shape, l.t[i].data, err);
		if (!rc)
			rc = safetensors_add_meta(&st, "manifest", json_text(&j, NULL), err);
		if (!rc)
			rc = outdir_path(&d, "golden.safetensors", path, sizeof(path), err);
		if (!rc)
			rc = safetensors_write(&st, path, err);
		safetensors_free(&st);
	}
	if (!rc)
		rc = outdir_path(&d, "manifest.json", path, sizeof(path), err);
	if (!rc)
		rc = json_save(&j, path, err);
	json_free(&j);
	for (int i = 0; i < l.n; i++)
		free(l.t[i].bits);
	if (!rc)
		rc = outdir_commit(&d, err);
	if (rc)
		outdir_abort(&d);
	return rc;
}
