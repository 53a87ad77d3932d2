/*
 * route.c - the INT8 path's envelope (see route.h). Each rule is one line,
 * so a refused case lists every reason at once, e.g. for head_dim 128 and
 * GQA 4:1 in prefill:
 *   head_size 128, the INT8 path needs 256
 *   GQA ratio 4, the INT8 path needs 6
 *   prefill needs 24 q heads / 4 kv heads, not 16 / 4
 */
#include "route.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void refuse(struct route_verdict *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void refuse(struct route_verdict *v, const char *fmt, ...)
{
	va_list ap;

	if (v->n >= ROUTE_MAX_REASONS)
		return;
	va_start(ap, fmt);
	vsnprintf(v->reason[v->n++], sizeof(v->reason[0]), fmt, ap);
	va_end(ap);
}

void route_check(const struct fs_case *c, struct route_verdict *v)
{
	memset(v, 0, sizeof(*v));
	if (c->head_dim != 256)
		refuse(v, "head_size %d, the INT8 path needs 256", c->head_dim);
	if (c->q_heads % c->kv_heads || case_group(c) != 6)
		refuse(v, "GQA ratio %d:%d, the INT8 path needs 6:1", c->q_heads,
		       c->kv_heads);
	if (c->sliding_window)
		refuse(v, "sliding window %d, the INT8 path needs none",
		       c->sliding_window);
	if (c->shuffle_cache)
		refuse(v, "shuffle cache (pre-permuted K layout), the INT8 path reads the plain paged layout");
	if (c->k_scale != KSCALE_PER_TOKEN_HEAD)
		refuse(v, "K scale %s, the INT8 path uses one f32 scale per token and kv head",
		       c->k_scale == KSCALE_PER_BLOCK32 ? "per 32-element block" :
		       c->k_scale == KSCALE_PER_HEAD ? "per kv head" : "per tensor");
	if (c->mode == MODE_PREFILL) {
		if (c->q_heads != 24 || c->kv_heads != 4)
			refuse(v, "prefill needs 24 q heads / 4 kv heads, not %d / %d",
			       c->q_heads, c->kv_heads);
	}
	/* Decode too: the article's kernels (both modes) add no ALiBi bias
	 * and apply no soft cap; fragsim emulates both for other kernels. */
	if (c->alibi)
		refuse(v, "ALiBi, the INT8 path adds no position bias");
	if (c->soft_cap > 0)
		refuse(v, "logits soft cap %g, the INT8 path applies none",
		       c->soft_cap);
	if (c->pv_mode == PV_INT8)
		snprintf(v->pv, sizeof(v->pv), "PV in INT8 (regroup %s)",
			 c->pv_regroup == PV_REGROUP_LDS ? "lds" : "v_permuted");
	v->inside = v->n == 0;
}
