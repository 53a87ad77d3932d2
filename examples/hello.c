/* hello.c - libfragsim in brief: a small decode case on the builtin
 * gfx936 lane map, emulated and checked against the reference. */
#include <stdio.h>
#include <fragsim.h>

int main(void)
{
	struct fragsim_case_params p = { .name = "hello", .isa = "gfx936",
		.q_heads = 6, .kv_heads = 1, .n_seqs = 2, .context = { 100, 33 } };
	struct fragsim_lanemap_info lm;
	struct fragsim_summary s;
	struct fragsim_err err;
	struct fragsim_case *c;
	int rc = fragsim_case_build(&p, &c, &err);

	if (!rc)
		rc = fragsim_run(c, FRAGSIM_EXEC_AUTO, 0, &err);
	if (rc > FRAGSIM_MISMATCH) {
		fprintf(stderr, "hello: %s\n", err.msg);
		return rc;
	}
	fragsim_lanemap_info(fragsim_case_lanemap(c), &lm);
	fragsim_summary(c, &s);
	printf("fragsim %s, %s: wave%d %dx%dx%d\n", fragsim_version(), lm.name,
	       lm.wave, lm.m, lm.n, lm.k);
	printf("%s: %ld of %ld elements differ; out cosine vs float %.4f\n",
	       fragsim_case_name(c), s.mismatches, s.compared, s.out_cos_min);
	fragsim_case_free(c);
	return rc;
}
