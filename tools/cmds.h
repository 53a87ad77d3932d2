/* cmds.h - the fragsim commands, one tools/cmd_<name>.c each. */
#ifndef CMDS_H
#define CMDS_H

int cmd_lanemap(int argc, char **argv);

#endif
