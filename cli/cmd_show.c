/*
 * cmd_show.c - `fragsim show CASE`: the resolved case, every default
 * filled in, as YAML that loads back to the same case. `fragsim show
 * --schema`: every key a case file takes, as the markdown of
 * docs/case-schema.md (both from the schema table in casefile.c).
 */
#include <stddef.h>
#include <stdio.h>

#include "../lib/casefile.h"
#include "cli.h"
#include "cmds.h"
#include "options.h"

struct show_args {
	int schema;
};

#define OPT_ARGS struct show_args
static const struct opt show_opts[] = {
	OPT_ARG("<case.yaml>", "the case to print"),
	OPT_FLAG("--schema", schema,
	  "print every key a case file takes (type, range,\n"
	  "default, meaning) as markdown: docs/case-schema.md"),
	OPT_END(),
};
#undef OPT_ARGS

static const char *const show_synopsis[] = {
	"show <case.yaml>",
	"show --schema",
	NULL,
};

const struct opt_cmd cmd_show_spec = {
	.name = "show",
	.synopsis = show_synopsis,
	.opts = show_opts,
	.about = "Print the case with every default filled in and every derived value\n"
		 "resolved (num_blocks, softmax_scale).",
	.exit = "0, or 2 on bad input",
};

int cmd_show(int argc, char **argv)
{
	struct show_args a = { 0 };
	struct fs_case c;
	struct fs_err err = { 0 };
	int n, rc;

	if ((n = opt_parse(&cmd_show_spec, &a, argc, argv, &rc)) < 0)
		return rc;
	if (a.schema && !n) {
		case_schema_md(stdout);
		return FS_OK;
	}
	if (n != 1 || a.schema)
		return opt_error(&cmd_show_spec, "show: takes one case file");
	if (case_load_file(argv[0], &c, &err))
		return cli_error(&err, FS_EINPUT);
	case_print(stdout, &c);
	case_free(&c);
	return FS_OK;
}
