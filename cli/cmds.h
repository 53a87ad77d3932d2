/* cmds.h - the fragsim commands, one cli/cmd_<name>.c each. */
#ifndef CMDS_H
#define CMDS_H

#include <stddef.h>

#include "../sim/common/fs.h"

struct fs_cmd;
struct opt_cmd;

/* Every command, in the order `fragsim --help` lists them, ended by a
 * row whose name is NULL (cli/commands.c). */
const struct fs_cmd *cli_commands(void);
/* The command called name, or NULL. */
const struct fs_cmd *cli_command(const char *name);

/* Each command's option table and help (options.h). */
extern const struct opt_cmd cmd_run_spec, cmd_check_spec, cmd_diff_spec,
	cmd_show_spec, cmd_route_spec, cmd_lanemap_spec, cmd_mutate_spec,
	cmd_probe_spec, cmd_help_spec;

int cmd_help(int argc, char **argv);
int cmd_lanemap(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_route(int argc, char **argv);
int cmd_mutate(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_diff(int argc, char **argv);

/* `lanemap loads` (cmd_loads.c): a subcommand of lanemap in a file of
 * its own. */
extern const struct opt_cmd lanemap_loads_cmd;
int do_loads(int argc, char **argv);

#endif
