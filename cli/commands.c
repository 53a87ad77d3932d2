/*
 * commands.c - the table of fragsim's commands, one cli/cmd_<name>.c
 * each: main() dispatches through it, and `fragsim help` walks it to
 * write the man page and the bash completion (cli/help.c), so a
 * command added here is documented everywhere at once.
 */
#include <stddef.h>
#include <string.h>

#include "cli.h"
#include "cmds.h"

static const struct fs_cmd cmds[] = {
	{ "run",     cmd_run,     "emulate one case, check it against the reference, write goldens",
	  &cmd_run_spec },
	{ "check",   cmd_check,   "run every case under the given paths; one line each",
	  &cmd_check_spec },
	{ "diff",    cmd_diff,    "compare a device dump with the simulation; diagnose a mismatch",
	  &cmd_diff_spec },
	{ "show",    cmd_show,    "print a case with every default filled in", &cmd_show_spec },
	{ "route",   cmd_route,   "would the dedicated INT8 path take this case?",
	  &cmd_route_spec },
	{ "lanemap", cmd_lanemap, "print, query, check or diff the lane map of a matrix instruction",
	  &cmd_lanemap_spec },
	{ "mutate",  cmd_mutate,  "plant each known kernel bug; does the suite catch it?",
	  &cmd_mutate_spec },
	{ "probe",   cmd_probe,   "plan a lane-map probe for a device, and solve its answers",
	  &cmd_probe_spec },
	{ "help",    cmd_help,    "a command's help; the man page; the bash completion",
	  &cmd_help_spec },
	{ NULL, NULL, NULL, NULL },
};

const struct fs_cmd *cli_commands(void)
{
	return cmds;
}

const struct fs_cmd *cli_command(const char *name)
{
	for (const struct fs_cmd *c = cmds; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}
