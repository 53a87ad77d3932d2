/*
 * cmd_show.c - `fragsim show CASE`: the resolved case, every default
 * filled in, as YAML that loads back to the same case. `fragsim show
 * --schema`: every key a case file takes, as the markdown of
 * docs/case-schema.md (both from the schema table in casefile.c).
 */
#include <stdio.h>
#include <string.h>

#include "../lib/casefile.h"
#include "cli.h"
#include "cmds.h"

static const char usage[] =
	"usage: fragsim show <case.yaml>\n"
	"   or: fragsim show --schema\n"
	"\n"
	"Print the case with every default filled in and every derived value\n"
	"resolved (num_blocks, softmax_scale). Exit 0, or 2 on bad input.\n"
	"\n"
	"    --schema    print every key a case file takes (type, range,\n"
	"                default, meaning) as markdown: docs/case-schema.md\n";

int cmd_show(int argc, char **argv)
{
	struct fs_case c;
	struct fs_err err = { 0 };

	if (cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return FS_OK;
	}
	if (argc == 2 && strcmp(argv[1], "--schema") == 0) {
		case_schema_md(stdout);
		return FS_OK;
	}
	if (argc != 2)
		return cli_usage_error(usage, "show: takes one case file");
	if (case_load_file(argv[1], &c, &err))
		return cli_error(&err, FS_EINPUT);
	case_print(stdout, &c);
	case_free(&c);
	return FS_OK;
}
