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

#endif
