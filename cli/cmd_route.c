/*
 * cmd_route.c - `fragsim route CASE`: would the dedicated INT8 path take
 * this case, and if not, every reason why.
 */
#include <stdio.h>

#include "../lib/casefile.h"
#include "cli.h"
#include "cmds.h"
#include "../sim/route.h"

static const char usage[] =
	"usage: fragsim route <case.yaml>\n"
	"\n"
	"Say whether the case is inside the legal envelope of the INT8 path\n"
	"(head_size 256, GQA 6:1, no sliding window, no shuffle cache, no\n"
	"ALiBi, no soft cap; prefill also 24/4 heads). Exit 0 inside, 1 outside,\n"
	"2 bad input.\n";

int cmd_route(int argc, char **argv)
{
	struct route_verdict v;
	struct fs_case c;
	struct fs_err err = { 0 };

	if (cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return FS_OK;
	}
	if (argc != 2)
		return cli_usage_error(usage, "route: takes one case file");
	if (case_load_file(argv[1], &c, &err))
		return cli_error(&err, FS_EINPUT);
	route_check(&c, &v);
	printf("%s: %s\n", c.name, v.inside ? "INT8 path: taken" :
	       "INT8 path: refused");
	for (int i = 0; i < v.n; i++)
		printf("  %s\n", v.reason[i]);
	case_free(&c);
	return v.inside ? FS_OK : FS_MISMATCH;
}
