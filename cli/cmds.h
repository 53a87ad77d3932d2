/* cmds.h - the fragsim commands, one cli/cmd_<name>.c each. */
#ifndef CMDS_H
#define CMDS_H

#include <stddef.h>

#include "../sim/fs.h"

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
