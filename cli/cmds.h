/* cmds.h - the fragsim commands, one cli/cmd_<name>.c each. */
#ifndef CMDS_H
#define CMDS_H

#include <stddef.h>

#include "../sim/fs.h"

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

/* probe's check of a plan's manifest.json (text, len, read from path)
 * against the plan's profile name and wave count; in memory for
 * tests/fuzz/fuzz_plan.c. FS_OK, or FS_EINPUT with err filled. */
enum fs_rc probe_manifest_check(const char *text, size_t len, const char *path,
				const char *isa_name, int waves,
				struct fs_err *err);

#endif
