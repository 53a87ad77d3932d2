/*
 * cmd_show.c - `fragsim show CASE`: the resolved case, every default
 * filled in, as YAML that loads back to the same case. `fragsim show
 * --schema`: every key a case file takes, as the markdown of
 * docs/case-schema.md (both from the schema table in casefile.c).
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../lib/casefile.h"
#include "../lib/runcase.h"
#include "cli.h"
#include "cmds.h"
#include "options.h"

struct show_args {
	int schema;
};

#define OPT_ARGS struct show_args
static const struct opt show_opts[] = {
	OPT_ARG("<case.yaml>", "the case to print"),
	OPT_FLAG("--schema", schema,
	  "print every key a case file takes (type, range,\n"
	  "default, meaning) as markdown: docs/case-schema.md"),
	OPT_END(),
};
#undef OPT_ARGS

static const char *const show_synopsis[] = {
	"show <case.yaml>",
	"show --schema",
	NULL,
};

const struct opt_cmd cmd_show_spec = {
	.name = "show",
	.synopsis = show_synopsis,
	.opts = show_opts,
	.about = "Print the case with every default filled in and every derived value\n"
		 "resolved (num_blocks, softmax_scale).",
	.exit = "0, or 2 on bad input",
};

/*
 * The loader resolved a relative path against the case's directory,
 * which leaves it relative to the working directory: shown that way, a
 * case saved anywhere else would read another file. Shown absolute, it
 * loads back from wherever it is saved.
 */
static int absolute(char *path, size_t len, const char *key, const char *file)
{
	char cwd[PATH_MAX], buf[2 * PATH_MAX];
	int w;

	if (!path[0] || path[0] == '/')
		return 0;
	if (!getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "fragsim: error: %s: %s: cannot name the working "
			"directory to show the path absolute\n", file, key);
		return -1;
	}
	w = snprintf(buf, sizeof(buf), "%s%s%s", cwd, cwd[1] ? "/" : "", path);	/* "/" alone */
	if (w < 0 || (size_t)w >= len) {
		fprintf(stderr, "fragsim: error: %s: %s: path too long made absolute "
			"(at most %zu characters)\n", file, key, len - 1);
		return -1;
	}
	memcpy(path, buf, (size_t)w + 1);
	return 0;
}

int cmd_show(int argc, char **argv)
{
	struct show_args a = { 0 };
	struct runcase r;
	struct fs_case *c = &r.c;
	struct fs_err err = { 0 };
	int n, rc;

	if ((n = opt_parse(&cmd_show_spec, &a, argc, argv, &rc)) < 0)
		return rc;
	if (a.schema && !n) {
		case_schema_md(stdout);
		return FS_OK;
	}
	if (n != 1 || a.schema)
		return opt_error(&cmd_show_spec, "show: takes one case file");
	/* the case with its profile: what run refuses, show refuses */
	if ((rc = runcase_load(argv[0], &r, &err))) {
		runcase_free(&r);
		return cli_error(&err, rc);
	}
	rc = FS_OK;
	if ((case_isa_is_file(c->isa) && absolute(c->isa, sizeof(c->isa), "isa", c->file)) ||
	    absolute(c->q.npy, sizeof(c->q.npy), "data.q.npy", c->file) ||
	    absolute(c->k.npy, sizeof(c->k.npy), "data.k.npy", c->file) ||
	    absolute(c->v.npy, sizeof(c->v.npy), "data.v.npy", c->file))
		rc = FS_EINPUT;
	else
		case_print(stdout, c);
	runcase_free(&r);
	return rc;
}
