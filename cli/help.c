/*
 * help.c - `fragsim help`: a command's help, and the two documents
 * written from every command's option table (cli/commands.c walks them):
 *
 *   fragsim help run                  the same text as `fragsim run --help`
 *   fragsim help --man > fragsim.1    the man page (roff, man(7) macros)
 *   fragsim help --completion bash    a bash completion script
 *
 * Both documents come from the tables the parser reads, so an option
 * cannot be parsed yet missing from them; `make` writes them next to the
 * binary and `make install` installs them (docs/cli.md).
 *
 * The completion knows the builtin profile names (for --isa, and for the
 * profiles `lanemap check` and `lanemap diff` take) from this binary's
 * builtin table, written into the script when it is generated, rather
 * than by running `fragsim lanemap list --names` at each TAB: the
 * script is installed with the binary it came from, so the names are
 * the same, and a TAB then costs no process and works where fragsim is
 * not on PATH. Files are offered too, since a profile may be a file.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmds.h"
#include "options.h"
#include "../lib/profile.h"

struct help_args {
	int man;
	const char *completion;
};

static const char *const shells[] = { "bash", NULL };

#define OPT_ARGS struct help_args
static const struct opt help_opts[] = {
	OPT_ARG("<command>", "print that command's help (as <command> --help)"),
	OPT_FLAG("--man", man,
	  "write the man page, fragsim.1 (roff), to stdout"),
	OPT_CHOICE("--completion", completion, NULL, shells,
	  "write a completion script for that shell to stdout"),
	OPT_END(),
};
#undef OPT_ARGS

static const char *const help_synopsis[] = {
	"help [<command>]",
	"help --man > fragsim.1",
	"help --completion bash > fragsim.bash",
	NULL,
};

const struct opt_cmd cmd_help_spec = {
	.name = "help",
	.synopsis = help_synopsis,
	.opts = help_opts,
	.exit = "0, 2 bad usage",
	.flags = OPT_COMMANDS,
};

/* s as roff text: '\' as \e, '-' as \- (an ASCII minus, so an option
 * copied from the page works), a line starting with '.' or '\'' kept
 * from being read as a request; a '\n' in s starts a new input line. */
static void roff(FILE *f, const char *s)
{
	int bol = 1;

	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		bol = *s == '\n';
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

static void man_opts(FILE *f, const struct opt *o)
{
	char buf[160];

	for (; o && o->type != OPTION_END; o++) {
		const char *a = opt_argname(o, buf, sizeof(buf));

		fputs(".TP\n\\fB", f);
		roff(f, o->name);
		fputs("\\fR", f);
		if (*a) {
			fputs(" \\fI", f);
			roff(f, a);
			fputs("\\fR", f);
		}
		fputc('\n', f);
		roff(f, o->help);
		if (o->def) {
			fputs("\n[default: ", f);
			roff(f, o->def);
			fputc(']', f);
		}
		fputc('\n', f);
	}
}

static void man_synopsis(FILE *f, const struct opt_cmd *c)
{
	for (int i = 0; c->synopsis && c->synopsis[i]; i++) {
		const char *s = c->synopsis[i];

		if (*s == ' ')
			fputs("    ", f);
		else
			fputs("fragsim ", f);
		roff(f, s + strspn(s, " "));
		fputc('\n', f);
	}
}

static void man_command(FILE *f, const struct fs_cmd *cmd)
{
	const struct opt_cmd *c = cmd->spec;

	fprintf(f, ".SS \"fragsim %s\"\n", cmd->name);
	roff(f, cmd->summary);
	fputs(strchr(".?", cmd->summary[strlen(cmd->summary) - 1]) ? "\n" : ".\n", f);
	fputs(".PP\n.nf\n", f);
	man_synopsis(f, c);
	for (int i = 0; c->subs && c->subs[i]; i++)
		man_synopsis(f, c->subs[i]);
	fputs(".fi\n", f);
	if (c->about) {
		fputs(".PP\n", f);
		roff(f, c->about);
		fputc('\n', f);
	}
	man_opts(f, c->opts);
	for (int i = 0; c->subs && c->subs[i]; i++) {
		if (!c->subs[i]->opts || c->subs[i]->opts->type == OPTION_END)
			continue;
		fprintf(f, ".PP\n\\fBfragsim %s %s\\fR takes:\n", cmd->name, c->subs[i]->name);
		man_opts(f, c->subs[i]->opts);
	}
	fputs(".PP\nExit status: ", f);
	roff(f, c->exit);
	fputs(".\n", f);
}

static void man_page(FILE *f)
{
	fprintf(f, ".\\\" fragsim.1, written by `fragsim help --man` from the option tables\n"
		   ".TH FRAGSIM 1 \"\" \"fragsim %s\" \"User Commands\"\n"
		   ".nh\n.ad l\n", FRAGSIM_VERSION);
	fputs(".SH NAME\n"
	      "fragsim \\- emulate a GPU INT8 matrix instruction in paged attention kernels,\n"
	      "write goldens, check device dumps and name kernel bugs\n"
	      ".SH SYNOPSIS\n"
	      ".B fragsim\n.I command\n.RI [ args ]\n.br\n"
	      ".B fragsim\n.BR \\-\\-version \" | \" \\-\\-help\n"
	      ".SH DESCRIPTION\n"
	      "fragsim emulates the INT8 matrix instruction of an attention kernel lane by\n"
	      "lane (gfx936 \\fBv_mmac_i32_16x16x32_i8\\fR and the other builtin profiles),\n"
	      "runs the paged INT8 attention of a case file through it, checks the result\n"
	      "against an independent reference, and writes golden tensors for kernel\n"
	      "tests. It compares a dump taken on a device with the simulation and names\n"
	      "the kernel bug or lane map that explains a difference.\n"
	      ".PP\n"
	      "Every command takes \\fB\\-h\\fR or \\fB\\-\\-help\\fR. An option's value\n"
	      "follows it (\\fB\\-\\-out dir\\fR) or an equals sign (\\fB\\-\\-out=dir\\fR);\n"
	      "\\fB\\-\\-\\fR ends the options.\n"
	      ".SH COMMANDS\n", f);
	for (const struct fs_cmd *c = cli_commands(); c->name; c++)
		man_command(f, c);
	fputs(".SH \"EXIT STATUS\"\n"
	      ".TP\n.B 0\nall checks hold (valid, identical, matched)\n"
	      ".TP\n.B 1\na mismatch: the emulation and the reference, or a dump and the\n"
	      "simulation, differ; a profile is invalid; two lane maps differ\n"
	      ".TP\n.B 2\nbad usage or bad input; the message names the file, line and key\n"
	      ".TP\n.B 3\nan internal error, including a failed write to standard output\n"
	      ".SH FILES\n"
	      ".TP\n.I *.yaml\n"
	      "case files (\\fBfragsim_case\\fR) and lane-map profiles (\\fBfragsim_profile\\fR);\n"
	      "\\fBfragsim show \\-\\-schema\\fR lists every key a case takes\n"
	      ".TP\n.I DIR/manifest.json\n"
	      "the golden directory that \\fBfragsim run \\-\\-out DIR\\fR writes, whole or not at all\n"
	      ".TP\n.I /usr/local/share/doc/fragsim/README.md\n"
	      "the manual, under the installation prefix\n"
	      ".SH \"SEE ALSO\"\n"
	      "README.md and docs/cli.md in the fragsim sources;\n"
	      ".BR bash (1)\n"
	      "for the completion that \\fBfragsim help \\-\\-completion bash\\fR writes.\n", f);
}

/* The option names of a table, space-separated. */
static void words(FILE *f, const struct opt *o)
{
	for (int n = 0; o && o->type != OPTION_END; o++)
		if (o->type != OPTION_ARG)
			fprintf(f, "%s%s", n++ ? " " : "", o->name);
}

/* The case arms for one form ("lanemap/check"): its options, the
 * values of its options. */
static void bash_form(FILE *f, const char *key, const struct opt_cmd *c, const char *subwords)
{
	fprintf(f, "\t%s) opts=\"", key);
	words(f, c->opts);
	fprintf(f, "\"; subs=\"%s\"; args=%s ;;\n", subwords ? subwords : "",
		c->flags & OPT_PROFILE ? "profiles" : c->flags & OPT_COMMANDS ? "commands" : "files");
}

static void bash_values(FILE *f, const char *key, const struct opt *o)
{
	for (; o && o->type != OPTION_END; o++) {
		if (o->type == OPTION_ARG || o->type == OPTION_FLAG)
			continue;
		fprintf(f, "\t\"%s %s\") ", key, o->name);
		if (o->flags & OPT_PROFILE)
			fputs("_fragsim_profiles ;;\n", f);
		else if (o->type == OPTION_CHOICE) {
			fputs("COMPREPLY=($(compgen -W \"", f);
			for (int i = 0; o->choices[i]; i++)
				fprintf(f, "%s%s", i ? " " : "", o->choices[i]);
			fputs("\" -- \"$cur\")) ;;\n", f);
		} else	/* a file or a number: bash's default */
			fputs(";;\n", f);
	}
}

static void completion(FILE *f)
{
	const struct fs_cmd *cmds = cli_commands();
	char key[64], subwords[256];

	fprintf(f, "# bash completion for fragsim %s, written by `fragsim help --completion\n"
		   "# bash` from its option tables. Commands, each command's options, the\n"
		   "# values of options that take a fixed set, and the builtin profile names\n"
		   "# of this build (for --isa), then files.\n", FRAGSIM_VERSION);
	fputs("_fragsim_profiles()\n{\n"
	      "\tCOMPREPLY=($(compgen -W \"", f);
	for (int i = 0; i < profile_builtin_count(); i++)
		fprintf(f, "%s%s", i ? " " : "", profile_builtin_name(i));
	fputs("\" -- \"$cur\") $(compgen -f -- \"$cur\"))\n}\n\n", f);
	fputs("_fragsim()\n{\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "\tlocal cmd=${COMP_WORDS[1]} sub= opts= subs= args=files\n"
	      "\tlocal commands=\"", f);
	for (const struct fs_cmd *c = cmds; c->name; c++)
		fprintf(f, "%s%s", c == cmds ? "" : " ", c->name);
	fputs("\"\n\tCOMPREPLY=()\n"
	      "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$commands --help --version\" -- \"$cur\"))\n"
	      "\t\treturn\n\tfi\n", f);
	/* the subcommand word, where the command has them */
	fputs("\tcase $cmd in\n", f);
	for (const struct fs_cmd *c = cmds; c->name; c++) {
		const struct opt_cmd *s = c->spec;

		if (!s->subs)
			continue;
		fprintf(f, "\t%s) case ${COMP_WORDS[2]} in ", c->name);
		for (int i = 0; s->subs[i]; i++)
			fprintf(f, "%s%s", i ? "|" : "", s->subs[i]->name);
		fputs(") [ \"$COMP_CWORD\" -gt 2 ] && sub=${COMP_WORDS[2]} ;; esac ;;\n", f);
	}
	fputs("\tesac\n\tcase $cmd/$sub in\n", f);
	for (const struct fs_cmd *c = cmds; c->name; c++) {
		const struct opt_cmd *s = c->spec;
		size_t used = 0;

		subwords[0] = '\0';
		for (int i = 0; s->subs && s->subs[i]; i++)
			used += (size_t)snprintf(subwords + used, sizeof(subwords) - used, "%s%s",
						 i ? " " : "", s->subs[i]->name);
		snprintf(key, sizeof(key), "%s/", c->name);
		bash_form(f, key, s, subwords);
		for (int i = 0; s->subs && s->subs[i]; i++) {
			snprintf(key, sizeof(key), "%s/%s", c->name, s->subs[i]->name);
			bash_form(f, key, s->subs[i], NULL);
		}
	}
	fputs("\tesac\n\t# the value of the option before the cursor\n\tcase \"$cmd/$sub $prev\" in\n", f);
	for (const struct fs_cmd *c = cmds; c->name; c++) {
		const struct opt_cmd *s = c->spec;

		snprintf(key, sizeof(key), "%s/", c->name);
		bash_values(f, key, s->opts);
		for (int i = 0; s->subs && s->subs[i]; i++) {
			snprintf(key, sizeof(key), "%s/%s", c->name, s->subs[i]->name);
			bash_values(f, key, s->subs[i]->opts);
		}
	}
	fputs("\t*)\n"
	      "\t\tif [[ $cur == -* ]]; then\n"
	      "\t\t\tCOMPREPLY=($(compgen -W \"$opts --help\" -- \"$cur\"))\n"
	      "\t\telif [ -n \"$subs\" ] && [ \"$COMP_CWORD\" -eq 2 ]; then\n"
	      "\t\t\tCOMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n"
	      "\t\telif [ \"$args\" = profiles ]; then\n"
	      "\t\t\t_fragsim_profiles\n"
	      "\t\telif [ \"$args\" = commands ]; then\n"
	      "\t\t\tCOMPREPLY=($(compgen -W \"$commands\" -- \"$cur\"))\n"
	      "\t\tfi ;;\n"
	      "\tesac\n}\n"
	      "complete -o default -F _fragsim fragsim\n", f);
}

int cmd_help(int argc, char **argv)
{
	struct help_args a = { 0 };
	const struct fs_cmd *c;
	int n, rc;

	if ((n = opt_parse(&cmd_help_spec, &a, argc, argv, &rc)) < 0)
		return rc;
	if (n + a.man + (a.completion != NULL) != 1)
		return opt_error(&cmd_help_spec, "help: give one command, --man or --completion");
	if (a.man) {
		man_page(stdout);
		return FS_OK;
	}
	if (a.completion) {
		completion(stdout);
		return FS_OK;
	}
	if (!(c = cli_command(argv[0])))
		return opt_error(&cmd_help_spec, "help: unknown command '%s'", argv[0]);
	opt_help(stdout, c->spec);
	return FS_OK;
}
