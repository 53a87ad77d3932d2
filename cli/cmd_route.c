/*
 * cmd_route.c - `fragsim route CASE`: would the dedicated INT8 path take
 * this case, and if not, every reason why.
 */
#include <stdio.h>

#include "../lib/runcase.h"
#include "cli.h"
#include "cmds.h"
#include "options.h"
#include "../sim/attn/route.h"

static const char *const route_synopsis[] = { "route <case.yaml>", NULL };

static const struct opt route_opts[] = {
	OPT_ARG("<case.yaml>", "the case to route"),
	OPT_END(),
};

const struct opt_cmd cmd_route_spec = {
	.name = "route",
	.synopsis = route_synopsis,
	.opts = route_opts,
	.about = "Say whether the case is inside the legal envelope of the INT8 path\n"
		 "(head_size 256, GQA 6:1, no sliding window, no shuffle cache, no\n"
		 "ALiBi, no soft cap; prefill also 24/4 heads).",
	.exit = "0 inside, 1 outside, 2 bad input",
};

int cmd_route(int argc, char **argv)
{
	struct runcase r;
	struct fs_err err = { 0 };
	const struct route_verdict *v = &r.route;
	int n, rc;

	if ((n = opt_parse(&cmd_route_spec, NULL, argc, argv, &rc)) < 0)
		return rc;
	if (n != 1)
		return opt_error(&cmd_route_spec, "route: takes one case file");
	if (runcase_load(argv[0], &r, &err)) {
		runcase_free(&r);
		return cli_error(&err, FS_EINPUT);
	}
	printf("%s: %s%s%s\n", r.c.name, v->inside ? "INT8 path: taken" :
	       "INT8 path: refused", v->pv[0] ? ", " : "", v->pv);
	for (int i = 0; i < v->n; i++)
		printf("  %s\n", v->reason[i]);
	rc = v->inside ? FS_OK : FS_MISMATCH;
	runcase_free(&r);
	return rc;
}
