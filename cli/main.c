/*
 * main.c - the fragsim command line: the table of commands
 * (cli/commands.c, one cli/cmd_<name>.c each), dispatched by name.
 *
 * The exit status is the command's result through fs_rc_exit (docs/
 * design.md 3.5): 0 all checks hold, 1 mismatch, 2 bad usage, bad input
 * or a limit the user can raise, 3 internal error or out of memory. A
 * failed write to stdout (a full disk, a closed pipe) is an internal
 * error: output that did not arrive must not look like success.
 *
 * Before a command runs, the OpenMP environment is checked (threads.c):
 * OMP_NUM_THREADS=100000 is exit 2, not a crash in the first parallel
 * region. And an exit main did not make - libgomp's exit(1) on a fatal
 * error of its own, "libgomp: Thread creation failed" - is exit 3, not
 * 1: 1 says the emulation disagrees with the reference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli.h"
#include "cmds.h"
#include "threads.h"

/* Set when main returns: the one state atexit can see (a handler takes
 * no argument). */
static volatile int main_returned;

static void exit_guard(void)
{
	if (main_returned)
		return;
	fputs("fragsim: error: the OpenMP runtime stopped fragsim (its message "
	      "is above)\n", stderr);
	_exit(FS_EINTERNAL);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: fragsim <command> [<args>]\n"
		   "       fragsim --version | --help\n\ncommands:\n");
	for (const struct fs_cmd *c = cli_commands(); c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
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

static int run(int argc, char **argv)
{
	const struct fs_cmd *c;
	struct fs_err err = { 0 };
	enum fs_rc rc;

	/* The error, and where to look: the command list would bury it. */
	if (argc < 2) {
		fprintf(stderr, "fragsim: error: missing command\n"
			"see 'fragsim --help' for the commands\n");
		return FS_EINPUT;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    (!strcmp(argv[1], "help") && argc == 2)) {
		usage(stdout);
		return finish(FS_OK);
	}
	if (!strcmp(argv[1], "--version")) {
		printf("fragsim %s\n", FRAGSIM_VERSION);
		return finish(FS_OK);
	}
	if ((c = cli_command(argv[1]))) {
		if ((rc = threads_init(&err)))
			return fs_rc_exit(cli_error(&err, rc));
		return fs_rc_exit(finish(c->fn(argc - 1, argv + 1)));
	}
	fprintf(stderr, "fragsim: error: unknown command '%s'\n"
		"see 'fragsim --help' for the commands\n", argv[1]);
	return FS_EINPUT;
}

int main(int argc, char **argv)
{
	int status;

	atexit(exit_guard);
#ifdef __GLIBC__
	/* glibc raises its mmap threshold each time a mapped block is freed,
	 * so one stage's freed per-thread scratch then stays in the threads'
	 * arenas and adds to the next stage's peak (prefill 1024 after 4096,
	 * full check at 16 threads: 152 MiB, over the bench's budget of 144;
	 * 141 with the threshold held at its default). Held, a block of 128
	 * KiB or more is mapped on its own and given back when freed. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	status = run(argc, argv);
	main_returned = 1;
	return status;
}
