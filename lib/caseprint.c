/*
 * caseprint.c - a resolved case back out as a case file (case_print):
 * what `fragsim show` prints and the golden manifest embeds, so its
 * bytes are part of the goldens.
 *
 * The rows of caseschema.c in table order, each "key: value" at two
 * spaces per level; the hooks print what no row can: auto softmax_scale
 * with its value in a comment, num_blocks with the needed/spare split,
 * sequences as flow mappings in the mode's keys, kernel: bug keys, a
 * tensor read from a file as its npy alone, lists. An unset threshold is
 * a comment, so the output loads back as the same case:
 *
 *   model:
 *     q_heads: 24
 *     softmax_scale: auto  # 0.0625
 *   cache:
 *     num_blocks: 9  # 7 needed + 2 spare
 *   check:
 *     # out_cosine_min: not checked
 *
 * Doubles are the shortest of %.15g..%.17g that reads back exactly.
 */
#include "casefile.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "caseschema.h"

/* Shortest of %.15g..%.17g that reads back as exactly v. */
static void fmt_double(char *buf, size_t len, double v)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

static void print_double(FILE *f, double v)
{
	char buf[40];

	fmt_double(buf, sizeof(buf), v);
	fputs(buf, f);
}

/*
 * A string, plain when it cannot be read as anything else (letters,
 * digits, . _ / - and not starting with -), else double-quoted. Inside
 * the quotes, what a YAML reader would fold or refuse is escaped: ASCII
 * controls, the C1 controls U+0080..U+009F (NEL among them) and the line
 * and paragraph separators U+2028/U+2029. Other UTF-8 passes through.
 */
static void print_str(FILE *f, const char *s)
{
	int plain = s[0] != '\0' && s[0] != '-';

	for (const char *p = s; *p && plain; p++)
		plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
			(*p >= '0' && *p <= '9') || *p == '.' || *p == '_' ||
			*p == '/' || *p == '-';
	if (plain) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			fprintf(f, "\\x%02x", *++p);
		else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
			fputs(p[2] == 0xa8 ? "\\L" : "\\P", f);
			p += 2;
		} else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void print_rows(FILE *f, const struct fs_case *c, const char *rows,
		       const void *base, int indent);

/*
 * A quiet section (pv:) whose every row is quiet and 0, its default: not
 * printed, so a case without it prints (and its golden manifest embeds)
 * the bytes it did before the section existed.
 */
static int section_quiet(const struct case_key *sec, const void *base)
{
	for (const struct case_key *k = caseschema_next(NULL, sec->path); k;
	     k = caseschema_next(k, sec->path))
		if (!(k->flags & KEY_QUIET) || *(const int *)caseschema_cfield(base, k))
			return 0;
	return 1;
}

/* One row as "key: value" lines at indent, by its type or its hook. */
static void print_key(FILE *f, const struct fs_case *c, const struct case_key *k,
		      const void *base, int indent)
{
	const void *v = caseschema_cfield(base, k);
	int x;

	if (k->flags & KEY_NOPRINT)
		return;
	if ((k->flags & KEY_QUIET) && (k->type == KEY_INT || k->type == KEY_ENUM) &&
	    *(const int *)v == 0)
		return;
	if ((k->flags & KEY_QUIET) && k->type == KEY_SECTION && section_quiet(k, base))
		return;
	if (k->print) {
		k->print(f, c, k, base, indent);
		return;
	}
	if (k->type == KEY_DOUBLE && isnan(*(const double *)v)) {
		fprintf(f, "%*s# %s: not checked\n", indent, "", caseschema_name(k));
		return;
	}
	fprintf(f, "%*s%s:", indent, "", caseschema_name(k));
	switch (k->type) {
	case KEY_SECTION:
		fputc('\n', f);
		print_rows(f, c, k->path, base, indent + 2);
		return;
	case KEY_INT:
		memcpy(&x, v, sizeof(x));
		fprintf(f, " %d", x);
		break;
	case KEY_U64:
		fprintf(f, " %llu", (unsigned long long)*(const uint64_t *)v);
		break;
	case KEY_DOUBLE:
		fputc(' ', f);
		print_double(f, *(const double *)v);
		break;
	case KEY_BOOL:
		fputs(*(const int *)v ? " true" : " false", f);
		break;
	case KEY_ENUM:
		memcpy(&x, v, sizeof(x));
		fprintf(f, " %s", k->names[x]);
		break;
	case KEY_STR:
		fputc(' ', f);
		print_str(f, (const char *)v);
		break;
	case KEY_HOOK:
		assert(0);	/* every hook row prints itself */
		break;
	}
	fputc('\n', f);
}

static void print_rows(FILE *f, const struct fs_case *c, const char *rows,
		       const void *base, int indent)
{
	for (const struct case_key *k = caseschema_next(NULL, rows); k;
	     k = caseschema_next(k, rows))
		print_key(f, c, k, base, indent);
}

void caseprint_version(FILE *f, const struct fs_case *c,
		       const struct case_key *k, const void *base, int indent)
{
	(void)c;
	(void)base;
	fprintf(f, "%*s%s: 1\n", indent, "", caseschema_name(k));
}

void caseprint_softmax_scale(FILE *f, const struct fs_case *c,
			     const struct case_key *k, const void *base,
			     int indent)
{
	(void)base;
	fprintf(f, "%*s%s: ", indent, "", caseschema_name(k));
	if (c->softmax_scale_auto)
		fputs("auto  # ", f);
	print_double(f, c->softmax_scale);
	fputc('\n', f);
}

/* num_blocks as a number; spare_blocks lives in its comment. */
void caseprint_num_blocks(FILE *f, const struct fs_case *c,
			  const struct case_key *k, const void *base,
			  int indent)
{
	int needed = case_blocks_needed(c);

	(void)base;
	fprintf(f, "%*s%s: %d  # %d needed + %d spare\n", indent, "",
		caseschema_name(k), c->num_blocks, needed, c->num_blocks - needed);
}

/* One flow mapping per sequence, in the mode's keys. */
void caseprint_sequences(FILE *f, const struct fs_case *c,
			 const struct case_key *k, const void *base, int indent)
{
	(void)base;
	fprintf(f, "%*s%s:\n", indent, "", caseschema_name(k));
	for (int s = 0; s < c->n_seqs; s++) {
		const struct case_seq *q = &c->seqs[s];

		if (c->mode == MODE_DECODE)
			fprintf(f, "%*s  - {context: %d, tokens: %d", indent, "",
				q->context, q->tokens);
		else
			fprintf(f, "%*s  - {history: %d, chunk: %d", indent, "",
				q->history, q->tokens);
		if (q->blocks) {
			fputs(", blocks: [", f);
			for (int i = 0; i < q->n_blocks; i++) {
				if (i && i % 16 == 0)
					fprintf(f, ",\n%*s      ", indent, "");
				else if (i)
					fputs(", ", f);
				fprintf(f, "%d", q->blocks[i]);
			}
			fputc(']', f);
		}
		fputs("}\n", f);
	}
}

/* The bug keys with the value planted (or the correct one), then rows. */
void caseprint_kernel(FILE *f, const struct fs_case *c,
		      const struct case_key *k, const void *base, int indent)
{
	uint64_t bugs = kernel_bugs(&c->kernel, c->head_dim);

	fprintf(f, "%*s%s:\n", indent, "", caseschema_name(k));
	for (int b = 0; b < BUG_COUNT; b++) {
		const struct kern_bug_info *bi = kernel_bug((enum kern_bug)b);
		const char *names[KERNEL_MAX_VALUES + 1];
		enum kern_bug as[KERNEL_MAX_VALUES + 1];
		int n = kernel_key_values((enum kern_bug)b, names, as), x = 0;

		if (!n)
			continue;	/* printed with the first class of its key */
		for (int i = 1; i < n; i++)
			if ((bugs >> as[i]) & 1)
				x = i;
		/* A key added after the first twelve classes is printed only
		 * when planted, so a case without it prints (and its golden's
		 * manifest embeds) the bytes it did before the key existed. A
		 * value added to an old key (q_position: future) is printed
		 * with that key's first class, above. */
		if (b > BUG_SPLIT_MERGE && !x)
			continue;
		if (b == BUG_HEAD_DIM_LOADED && x)
			fprintf(f, "%*s  %s: %d\n", indent, "", bi->key,
				c->kernel.head_dim_loaded);
		else
			fprintf(f, "%*s  %s: %s\n", indent, "", bi->key, names[x]);
	}
	print_rows(f, c, k->path, base, indent + 2);
}

/* A tensor read from a file shows only npy; a generated one the rest. */
void caseprint_tensor(FILE *f, const struct fs_case *c,
		      const struct case_key *k, const void *base, int indent)
{
	const struct case_tensor *t = caseschema_cfield(base, k);
	const struct case_key *npy = caseschema_find("data.*.npy");

	fprintf(f, "%*s%s:\n", indent, "", caseschema_name(k));
	if (t->npy[0]) {
		print_key(f, c, npy, t, indent + 2);
		return;
	}
	for (const struct case_key *r = caseschema_next(NULL, k->tmpl); r;
	     r = caseschema_next(r, k->tmpl))
		if (r != npy)
			print_key(f, c, r, t, indent + 2);
}

void caseprint_outliers(FILE *f, const struct fs_case *c,
			const struct case_key *k, const void *base, int indent)
{
	const struct case_tensor *t = base;

	(void)c;
	fprintf(f, "%*s%s: [", indent, "", caseschema_name(k));
	for (int i = 0; i < t->n_outliers; i++)
		fprintf(f, "%s%d", i ? ", " : "", t->outliers[i]);
	fputs("]\n", f);
}

void caseprint_golden(FILE *f, const struct fs_case *c,
		      const struct case_key *k, const void *base, int indent)
{
	int first = 1;

	(void)base;
	fprintf(f, "%*s%s: [", indent, "", caseschema_name(k));
	for (int i = 0; k->names[i]; i++) {
		if (!(c->golden & (1u << i)))
			continue;
		fprintf(f, "%s%s", first ? "" : ", ", k->names[i]);
		first = 0;
	}
	fputs("]\n", f);
}

void case_print(FILE *f, const struct fs_case *c)
{
	print_rows(f, c, "", c, 0);
}
