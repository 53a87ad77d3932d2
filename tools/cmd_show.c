/*
 * cmd_show.c - `fragsim show CASE`: the resolved case, every default
 * filled in, as YAML that loads back to the same case.
 */
#include <stdio.h>
#include <string.h>

#include "case.h"
#include "cli.h"
#include "cmds.h"

static const char usage[] =
	"usage: fragsim show <case.yaml>\n"
	"\n"
	"Print the case with every default filled in and every derived value\n"
	"resolved (num_blocks, softmax_scale). Exit 0, or 2 on bad input.\n";

int cmd_show(int argc, char **argv)
{
	struct fs_case c;
	struct fs_err err = { 0 };

	if (cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
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
