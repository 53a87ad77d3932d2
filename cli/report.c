/*
 * report.c - case verdicts for people and for CI (see report.h).
 *
 * One line per case, as test-backend-ops prints it, the reason first:
 *   qwen35-27b-decode-4097(decode,S=1,ctx=4097,bs=16,shuffled,gfx936): OK
 *   edge-zero-q(decode,...): FAIL acc: 3 of 4096 mismatch, first at tile 0 lane 17 e 2
 */
#include "report.h"

#include "../lib/casefile.h"
#include "../lib/golden.h"
#include "mutneeds.h"

#include <math.h>
#include <string.h>


static void vars(FILE *f, const struct runcase *r)
{
	const struct fs_case *c = &r->c;

	fprintf(f, "%s(%s,S=%d,ctx=%d,bs=%d,%s,%s)", c->name,
		case_mode_name(c->mode), c->n_seqs,
		case_context_max(c), c->block_size, case_placement_name(c->placement),
		r->lm ? r->lm->name : c->isa);
}

/* "96 B", "24.0 KiB", "1.5 GiB" */
static const char *bytes_h(double b, char buf[32])
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	if (b < 1024) {
		snprintf(buf, 32, "%.0f B", b);
		return buf;
	}
	b /= 1024;
	while (u < 3 && b >= 1024)
		b /= 1024, u++;
	snprintf(buf, 32, "%.1f %s", b, unit[u]);
	return buf;
}

/*
 * The tensors a checked run did not keep, hence did not check, as a
 * list of words ("scores (and probs) and acc") and as the golden: names
 * that keep them ("`scores` and `acc`"); 0 when it checked everything.
 */
static int unchecked(const struct runcase *r, char *what, size_t wl, char *names, size_t nl)
{
	static const char *const word[] = { "scores (and probs)", "acc", "split-K states" };
	static const char *const word_pv = "acc (and INT8 PV's p_int8 and pv_acc)";
	static const char *const key[] = { "scores", "acc", "splitk" };
	int n = 0, k = 0;

	if (r->emulate_only || !r->dropped)
		return 0;
	for (int i = 0; i < 3; i++)
		n += (r->dropped >> i) & 1;
	what[0] = names[0] = '\0';
	for (int i = 0; i < 3; i++) {
		const char *sep;

		if (!(r->dropped & (1u << i)))
			continue;
		sep = !k ? "" : k == n - 1 ? " and " : ", ";
		snprintf(what + strlen(what), wl - strlen(what), "%s%s", sep,
			 i == 1 && r->c.pv_mode == PV_INT8 ? word_pv : word[i]);
		snprintf(names + strlen(names), nl - strlen(names), "%s`%s`", sep, key[i]);
		k++;
	}
	return n;
}

/* Tensor w's mismatch count and first location, in a few words. */
static void stat_reason(const struct compare_report *p, int w, char *buf, size_t len)
{
	const struct compare_stat *st = &p->stat[w];
	const struct compare_loc *l = &st->first;

	if (w == CMP_ACC)
		snprintf(buf, len,
			 "%s: %ld of %ld mismatch, first at tile %ld lane %d e %d (C[%d][%d], s=%d t=%d q_head=%d key=%d): got %.0f want %.0f",
			 compare_what_name((enum compare_what)w), st->mismatches,
			 st->compared, l->tile, l->lane, l->elem, l->row, l->col,
			 l->s, l->t, l->qh, l->key, l->got, l->want);
	else
		snprintf(buf, len,
			 "%s: %ld of %ld mismatch, first at s=%d t=%d q_head=%d key=%d dim=%d: got %.9g want %.9g (tol %.3g)",
			 compare_what_name((enum compare_what)w), st->mismatches,
			 st->compared, l->s, l->t, l->qh, l->key, l->dim, l->got,
			 l->want, l->tol);
}

/* The first reason the run differs from the reference, in a few words. */
static void reason(const struct runcase *r, char *buf, size_t len)
{
	const struct compare_report *p = &r->cmp;

	for (int w = 0; w < CMP_NWHAT; w++) {
		if (p->stat[w].mismatches) {
			stat_reason(p, w, buf, len);
			return;
		}
	}
	if (p->replica_mismatch || r->sim.replica_mismatch) {
		snprintf(buf, len, "%ld replica rows disagree with their primary row",
			 p->replica_mismatch + r->sim.replica_mismatch);
		return;
	}
	if (p->n_failed) {
		/* compare.c's text names the key: "top-1 rate 0.9 < top1_min 0.99" */
		snprintf(buf, len, "%s", p->failed[0].reason);
		return;
	}
	snprintf(buf, len, "ok");
}

/*
 * An expect: mismatch case that matched: for each planted class, what
 * mutate would say of it (mutneeds.c: the need the case lacks, or that
 * it has them and the bug stays within the thresholds).
 */
static void unseen_reason(const struct runcase *r, char *buf, size_t len)
{
	uint64_t bugs = kernel_bugs(&r->c.kernel, r->c.head_dim);
	unsigned has = r->have_inputs ? needs_of_case(r) : 0;
	size_t at;
	int first = 1;

	if (!bugs) {
		snprintf(buf, len, "expected a mismatch, but kernel: plants no bug");
		return;
	}
	at = (size_t)snprintf(buf, len, "expected a mismatch; the planted bug went unseen");
	for (int b = 0; b < BUG_COUNT && at < len; b++) {
		const struct kern_bug_info *bi = kernel_bug((enum kern_bug)b);
		struct need_seen ns = { 0, 0, 0, 0 };
		char h[800];

		if (!(bugs >> b & 1))
			continue;
		needs_note(&ns, b, has, r->lm);
		needs_hint(h, sizeof(h), b, &ns);
		at += (size_t)snprintf(buf + at, len - at, "%s %s=%s: %s", first ? ":" : ";",
				       bi->key, bi->bad, h);
		first = 0;
	}
}

void report_reason(const struct runcase *r, char *buf, size_t len)
{
	if (r->emulate_only) {
		snprintf(buf, len, "emulated, not checked");
		return;
	}
	if (r->c.expect_mismatch && runcase_status(r) == FS_OK) {
		unseen_reason(r, buf, len);
		return;
	}
	if (runcase_status(r) == FS_OK) {
		snprintf(buf, len, "%s", "");
		return;
	}
	reason(r, buf, len);
}

const char *report_failure(const struct runcase *r)
{
	return runcase_failure(r);
}

const char *report_verdict(const struct runcase *r)
{
	const char *f = report_failure(r);

	return r->emulate_only ? "emulated" : f ? f : "match";
}

const char *report_fail_type(const struct runcase *r)
{
	const char *f = report_failure(r);

	return f ? f : "uncaught";
}

void report_details(FILE *f, const struct runcase *r)
{
	const struct compare_report *p = &r->cmp;
	char why[512];

	report_line(f, r);
	for (int w = 0; w < CMP_NWHAT; w++) {
		if (!p->stat[w].mismatches)
			continue;
		stat_reason(p, w, why, sizeof(why));
		fprintf(f, "%s\n", why);
	}
	if (p->replica_mismatch || r->sim.replica_mismatch)
		fprintf(f, "%ld replica rows disagree with their primary row\n",
			p->replica_mismatch + r->sim.replica_mismatch);
	for (int i = 0; i < p->n_failed; i++)
		fprintf(f, "check FAIL %s\n", p->failed[i].reason);
}

void report_line(FILE *f, const struct runcase *r)
{
	char why[512], what[96], names[96];

	vars(f, r);
	report_reason(r, why, sizeof(why));
	if (r->emulate_only)
		fprintf(f, ": %s\n", why);
	else if (runcase_expected(r) != FS_OK)
		fprintf(f, ": FAIL %s\n", why);
	else if (r->c.expect_mismatch)
		fprintf(f, ": OK caught as expected: %s\n", why);
	else if (unchecked(r, what, sizeof(what), names, sizeof(names)))
		fprintf(f, ": OK, but %s not checked (too large to keep); add %s to "
			"`golden:` to check them\n", what, names);
	else
		fprintf(f, ": OK\n");
}

/*
 * A golden: group of the default set ([inputs, acc, out]) whose tensors
 * take over REPORT_LARGE_GOLDEN bytes: which, and the golden: list that
 * leaves it out. Listed tensors are kept through the run, so they cost
 * memory and time with or without --out (issue 25: a prefill of 2048
 * over 8192 took 20.7 s and 2.5 GB with the default list, 6.0 s and 99
 * MB with [inputs, out], and nothing said why).
 */
static void report_large_goldens(FILE *f, const struct runcase *r)
{
	static const unsigned groups[] = { GOLD_INPUTS, GOLD_ACC, GOLD_OUT };
	struct golden_entry e[GOLDEN_MAX_TENSORS];
	int n = golden_list(r, GOLDEN_NPY, e);
	unsigned large = 0;
	char h[32], list[128] = "";

	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		double b = 0;

		for (int i = 0; i < n; i++)
			if (e[i].group == groups[g])
				b += e[i].bytes;
		if (b <= REPORT_LARGE_GOLDEN)
			continue;
		fprintf(f, "golden    %s takes %s (", case_golden_name(__builtin_ctz(groups[g])),
			bytes_h(b, h));
		for (int i = 0, k = 0; i < n; i++)
			if (e[i].group == groups[g])
				fprintf(f, "%s%s", k++ ? ", " : "", e[i].name);
		fprintf(f, "), over %d MiB\n", (int)(REPORT_LARGE_GOLDEN / (1 << 20)));
		large |= groups[g];
	}
	if (!large)
		return;
	for (int b = 0; case_golden_name(b); b++)
		if ((r->c.golden & (1u << b)) && !(large & (1u << b)))
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 list[0] ? ", " : "", case_golden_name(b));
	fprintf(f, "          golden: [%s] leaves it out (the default is [inputs, acc, out])\n",
		list);
}

void report_summary(FILE *f, const struct runcase *r)
{
	const struct fs_case *c = &r->c;
	const struct compare_report *p = &r->cmp;
	const struct compare_quant *q = &p->quant;

	fprintf(f, "case      %s (%s)\n", c->name, c->file);
	fprintf(f, "isa       %s: %s, wave%d, %dx%dx%d\n", r->lm->name, r->lm->instr,
		r->lm->wave, r->lm->m, r->lm->n, r->lm->k);
	fprintf(f, "route     %s%s%s", r->route.inside ? "INT8 path: taken" : "INT8 path: refused",
		r->route.pv[0] ? ", " : "", r->route.pv);
	for (int i = 0; i < r->route.n; i++)
		fprintf(f, "%s%s", i ? "; " : " (", r->route.reason[i]);
	fprintf(f, "%s\n", r->route.n ? ")" : "");
	fprintf(f, "shape     %s, %d sequence(s), q_heads %d, kv_heads %d, head_dim %d, "
		"block_size %d, %d blocks, softmax_scale %.9g\n",
		case_mode_name(c->mode), c->n_seqs, c->q_heads,
		c->kv_heads, c->head_dim, c->block_size, c->num_blocks, c->softmax_scale);
	fprintf(f, "tiles     %zu executed (%d rows each, %d distinct q rows = %.1f%%)\n",
		r->sim.n_tiles, r->sim.rows, r->sim.distinct_rows,
		100.0 * r->sim.distinct_rows / r->sim.rows);
	if (r->emulate_only)
		goto timing;
	fprintf(f, "exact     ");
	for (int w = 0; w < CMP_NWHAT; w++) {
		const struct compare_stat *st = &p->stat[w];

		if (!st->ran)
			continue;
		fprintf(f, "%s %ld/%ld%s", compare_what_name((enum compare_what)w),
			st->compared - st->mismatches, st->compared,
			w + 1 < CMP_NWHAT ? "  " : "");
	}
	{
		char what[96], names[96];

		if (unchecked(r, what, sizeof(what), names, sizeof(names)))
			fprintf(f, "\nunchecked %s: not kept, larger than the %zu MiB a check "
				"keeps beyond golden:; add %s to `golden:` to check them",
				what, RUNCASE_CHECK_KEEP_MAX >> 20, names);
	}
	/* every context 0: a line of NaNs would read as a broken metric */
	if (q->rows == 0)
		fprintf(f, "\nquant     not measured: no query sees a key\n");
	else
		fprintf(f, "\nquant     score max|err| %.3g, nmse %.3g; out cos min %.6f mean %.6f, max|err| %.3g\n"
			"          KLD mean %.3g median %.3g p99 %.3g; top-1 %.2f%%; RMS dp %.3g\n",
			q->score_max_abs, q->score_nmse, q->out_cos_min, q->out_cos_mean,
			q->out_max_abs, q->kld_mean, q->kld_median, q->kld_p99,
			100.0 * q->top1, q->rms_dp);
	/* a bucket narrower than a key (a context shorter than check.buckets)
	 * holds none: not printed (JSON keeps every bucket) */
	for (int b = 0; b < q->n_buckets; b++)
		if (q->bucket[b].keys)
			fprintf(f, "          keys [%d, %d): score max|err| %.3g, RMS dp %.3g (%ld keys)\n",
				q->bucket[b].lo, q->bucket[b].hi, q->bucket[b].score_max_abs,
				q->bucket[b].rms_dp, q->bucket[b].keys);
	/* pv.mode int8: the second product's quantization alone */
	if (r->c.pv_mode == PV_INT8 && q->rows > 0) {
		fprintf(f, "          INT8 PV vs f32 PV: out cos min %.6f, nmse %.3g, max|err| %.3g\n",
			q->pv_cos_min, q->pv_nmse, q->pv_max_abs);
		for (int b = 0; b < q->n_buckets; b++)
			if (q->bucket[b].pv_rows)
				fprintf(f, "          queries at [%d, %d): PV nmse %.3g, max|err| %.3g (%ld rows)\n",
					q->bucket[b].lo, q->bucket[b].hi, q->bucket[b].pv_nmse,
					q->bucket[b].pv_max_abs, q->bucket[b].pv_rows);
	}
	for (int i = 0; i < p->n_failed; i++)
		fprintf(f, "check     FAIL %s\n", p->failed[i].reason);
timing:
	report_large_goldens(f, r);
	fprintf(f, "time      inputs %.3f s, emulation %.3f s (%s), reference %.3f s\n",
		r->t_inputs, r->t_sim, r->sim.exec ? r->sim.exec : "-", r->t_ref);
	fprintf(f, "verdict   ");
	report_line(f, r);
}

void report_json_loc(struct json *j, const struct compare_loc *l,
		     const int block_slot[2])
{
	json_begin_object(j);
	json_key_int(j, "s", l->s);
	json_key_int(j, "t", l->t);
	json_key_int(j, "q_head", l->qh);
	json_key_int(j, "key", l->key);
	if (block_slot) {
		json_key_int(j, "block", block_slot[0]);
		json_key_int(j, "slot", block_slot[1]);
	}
	json_key_int(j, "dim", l->dim);
	json_key_int(j, "seg", l->seg);
	json_key_int(j, "tile", l->tile);
	json_key_int(j, "kstep", l->kstep);
	json_key_int(j, "lane", l->lane);
	json_key_int(j, "e", l->elem);
	json_key_int(j, "row", l->row);
	json_key_int(j, "col", l->col);
	json_key_double(j, "got", l->got);
	json_key_double(j, "want", l->want);
	json_key_double(j, "tol", l->tol);
	json_end_object(j);
}

static void json_stat(struct json *j, const struct compare_stat *st)
{
	json_begin_object(j);
	json_key_int(j, "compared", st->compared);
	json_key_int(j, "mismatches", st->mismatches);
	json_key_double(j, "max_abs_err", st->max_abs_err);
	if (st->mismatches) {
		json_key(j, "first");
		report_json_loc(j, &st->first, NULL);
	}
	json_end_object(j);
}

void report_json(struct json *j, const struct runcase *r)
{
	const struct compare_report *p = &r->cmp;
	const struct compare_quant *q = &p->quant;
	char why[512];

	json_begin_object(j);
	json_key_string(j, "case", r->c.name);
	json_key_string(j, "file", r->c.file);
	json_key_string(j, "isa", r->lm ? r->lm->name : r->c.isa);
	json_key_string(j, "mode", case_mode_name(r->c.mode));
	json_key_bool(j, "checked", !r->emulate_only);
	json_key_bool(j, "ok", runcase_expected(r) == FS_OK);
	json_key_bool(j, "expect_mismatch", r->c.expect_mismatch);
	report_reason(r, why, sizeof(why));
	json_key_string(j, "reason", why);
	json_key_bool(j, "matched_reference", runcase_status(r) == FS_OK);
	json_key_string(j, "verdict", report_verdict(r));
	json_key_bool(j, "int8_path", r->route.inside);
	json_key(j, "route_reasons");
	json_begin_array(j);
	for (int i = 0; i < r->route.n; i++)
		json_string(j, r->route.reason[i]);
	json_end_array(j);
	json_key_uint(j, "tiles", r->sim.n_tiles);
	json_key_int(j, "rows", r->sim.rows);
	json_key_int(j, "distinct_rows", r->sim.distinct_rows);
	json_key_string(j, "exec", r->sim.exec ? r->sim.exec : "");
	json_key(j, "exact");
	json_begin_object(j);
	for (int w = 0; w < CMP_NWHAT; w++) {
		if (!p->stat[w].ran)
			continue;
		json_key(j, compare_what_name((enum compare_what)w));
		json_stat(j, &p->stat[w]);
	}
	json_end_object(j);
	json_key(j, "quant");
	json_begin_object(j);
	json_key_double(j, "score_max_abs", q->score_max_abs);
	json_key_double(j, "score_nmse", q->score_nmse);
	json_key_double(j, "out_cos_min", q->out_cos_min);
	json_key_double(j, "out_cos_mean", q->out_cos_mean);
	json_key_double(j, "out_max_abs", q->out_max_abs);
	json_key_double(j, "kld_mean", q->kld_mean);
	json_key_double(j, "kld_median", q->kld_median);
	json_key_double(j, "kld_p99", q->kld_p99);
	json_key_double(j, "top1", q->top1);
	json_key_double(j, "rms_dp", q->rms_dp);
	if (r->c.pv_mode == PV_INT8) {	/* the second product alone */
		json_key_double(j, "pv_out_cos_min", q->pv_cos_min);
		json_key_double(j, "pv_out_nmse", q->pv_nmse);
		json_key_double(j, "pv_out_max_abs", q->pv_max_abs);
	}
	json_key(j, "buckets");
	json_begin_array(j);
	for (int b = 0; b < q->n_buckets; b++) {
		json_begin_object(j);
		json_key_int(j, "lo", q->bucket[b].lo);
		json_key_int(j, "hi", q->bucket[b].hi);
		json_key_int(j, "keys", q->bucket[b].keys);
		json_key_double(j, "score_max_abs", q->bucket[b].score_max_abs);
		json_key_double(j, "rms_dp", q->bucket[b].rms_dp);
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
	json_key(j, "unchecked");
	json_begin_array_compact(j);
	if (!r->emulate_only && (r->dropped & ATTN_DROP_SCORES))
		json_string(j, "scores");
	if (!r->emulate_only && (r->dropped & ATTN_DROP_ACC))
		json_string(j, "acc");
	if (!r->emulate_only && (r->dropped & ATTN_DROP_ACC) && r->c.pv_mode == PV_INT8) {
		json_string(j, "p_int8");
		json_string(j, "pv_acc");
	}
	if (!r->emulate_only && (r->dropped & ATTN_DROP_SPLITK))
		json_string(j, "splitk");
	json_end_array(j);
	json_key(j, "failed_checks");
	json_begin_array(j);
	for (int i = 0; i < p->n_failed; i++)
		json_string(j, p->failed[i].reason);
	json_end_array(j);
	json_key_double(j, "seconds_inputs", r->t_inputs);
	json_key_double(j, "seconds_emulation", r->t_sim);
	json_key_double(j, "seconds_reference", r->t_ref);
	json_end_object(j);
}

void report_goldens(FILE *f, const struct runcase *r, int fmt, const char *dir,
		    const char *label)
{
	struct golden_entry e[GOLDEN_MAX_TENSORS];
	int n = golden_list(r, (enum golden_format)fmt, e), col;
	double total = 0;
	char h[32];

	for (int i = 0; i < n; i++)
		total += e[i].bytes;
	fprintf(f, "%s   written to %s (%s):", label, dir, bytes_h(total, h));
	col = 101;	/* the first tensor on a line of its own */
	for (int i = 0; i < n; i++) {
		char item[96];
		int len = snprintf(item, sizeof(item), "%s %s%s", e[i].name,
				   bytes_h(e[i].bytes, h), i + 1 < n ? "," : "");

		if (col + 1 + len > 100) {
			fprintf(f, "\n         ");
			col = 9;
		}
		fprintf(f, " %s", item);
		col += 1 + len;
	}
	fputc('\n', f);
}
