/*
 * main.c - the fragsim command line: a table of commands, one file each
 * (cli/cmd_<name>.c), dispatched by name.
 *
 * The exit status is the command's result through fs_rc_exit (docs/
 * design.md 3.5): 0 all checks hold, 1 mismatch, 2 bad usage, bad input
 * or a limit the user can raise, 3 internal error or out of memory. A
 * failed write to stdout (a full disk, a closed pipe) is an internal
 * error: output that did not arrive must not look like success.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmds.h"

static const struct fs_cmd cmds[] = {
	{ "run",     cmd_run,     "emulate one case, check it against the reference, write goldens" },
	{ "check",   cmd_check,   "run every case under the given paths; one line each" },
	{ "diff",    cmd_diff,    "compare a device dump with the simulation; diagnose a mismatch" },
	{ "show",    cmd_show,    "print a case with every default filled in" },
	{ "route",   cmd_route,   "would the dedicated INT8 path take this case?" },
	{ "lanemap", cmd_lanemap, "print, query, check or diff the lane map of a matrix instruction" },
	{ "mutate",  cmd_mutate,  "plant each known kernel bug; does the suite catch it?" },
	{ "probe",   cmd_probe,   "plan a lane-map probe for a device, and solve its answers" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: fragsim <command> [<args>]\n"
		   "       fragsim --version | --help\n\ncommands:\n");
	for (size_t i = 0; i < FS_ARRAY_LEN(cmds); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\n'fragsim <command> --help' describes a command.\n"
		   "exit status: 0 ok, 1 mismatch or invalid, 2 bad usage or input, 3 internal error\n");
}

static int finish(int rc)
{
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
		fprintf(stderr, "fragsim: error: cannot write standard output\n");
		return FS_EINTERNAL;
	}
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "fragsim: error: missing command\n");
		usage(stderr);
		return FS_EINPUT;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return finish(FS_OK);
	}
	if (!strcmp(argv[1], "--version")) {
		printf("fragsim %s\n", FRAGSIM_VERSION);
		return finish(FS_OK);
	}
	for (size_t i = 0; i < FS_ARRAY_LEN(cmds); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return fs_rc_exit(finish(cmds[i].fn(argc - 1, argv + 1)));
	fprintf(stderr, "fragsim: error: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return FS_EINPUT;
}
