/*
 * contract.c - fragsim_dump.h's promises, checked from C and C++ alike:
 * bad calls fail with a message and leave nothing behind, a dump appears
 * whole under its name, an older dump is replaced, and a directory that
 * is not a dump is never replaced, acc_tiles rows are the five
 * coordinates given (row_tile last). Prints one line per check; exit 0 when
 * all hold. Usage: contract SCRATCH_DIR
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fragsim_dump.h"

static int failures;

static void check(int ok, const char *what, const char *detail)
{
	printf("%s: %s%s%s\n", what, ok ? "OK" : "FAIL",
	       detail && *detail ? " | " : "", detail && *detail ? detail : "");
	failures += !ok;
}

/* Does the .npy at path hold shape `shape` and end in the int32s want? */
static int npy_is(const char *path, const char *shape, const int32_t *want, size_t n)
{
	char buf[512];
	int32_t got[8];
	size_t len;
	FILE *f = fopen(path, "rb");

	if (!f)
		return 0;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	if (len < 10 + n * 4 || n > 8 || !strstr(buf + 10, shape))
		return 0;
	memcpy(got, buf + len - n * 4, n * 4);
	return !memcmp(got, want, n * 4);
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int main(int argc, char **argv)
{
	char dir[1024], path[1200];
	struct fsd_writer w;
	struct fsd_tile t = { 0, 1, 0, 16, 1 };
	const int32_t row[5] = { 0, 1, 0, 16, 1 };
	int32_t acc[64 * 4] = { 0 };
	float one = 1.0f;
	size_t shape1[1] = { 1 };
	FILE *f;

	if (argc != 2)
		return 2;
	snprintf(dir, sizeof(dir), "%s/d", argv[1]);

	check(fsd_begin(&w, dir) == 0, "begin", w.error);
	check(fsd_tensor(&w, "acc", FSD_I32, acc, 1, shape1) == -1 &&
	      strstr(w.error, "'acc' is not a dump tensor") != NULL,
	      "acc only through fsd_acc_tile", w.error);
	fsd_abort(&w);
	check(!exists(dir) && !exists(w.tmp), "abort leaves nothing", NULL);

	fsd_begin(&w, dir);
	check(fsd_tensor(&w, "scores", FSD_I32, acc, 1, shape1) == -1 &&
	      strstr(w.error, "scores must be float32, not int32") != NULL,
	      "dtype checked", w.error);
	fsd_abort(&w);

	fsd_begin(&w, dir);
	fsd_acc_tile(&w, &t, 64, 4, 1, acc);
	check(fsd_acc_tile(&w, &t, 32, 4, 1, acc) == -1 &&
	      strstr(w.error, "tile 1 is 1x32x4, the first was 1x64x4") != NULL,
	      "one geometry per dump", w.error);
	check(fsd_commit(&w) == -1 && !exists(dir), "a failed writer commits nothing", NULL);

	fsd_begin(&w, dir);
	check(fsd_commit(&w) == -1 && strstr(w.error, "nothing to dump") != NULL &&
	      !exists(dir), "an empty dump is refused", w.error);

	fsd_begin(&w, dir);
	fsd_acc_tile(&w, &t, 64, 4, 1, acc);
	fsd_tensor(&w, "q_scale", FSD_F32, &one, 1, shape1);
	check(fsd_commit(&w) == 0, "commit", w.error);
	snprintf(path, sizeof(path), "%s/acc_tiles.npy", dir);
	check(exists(path), "acc_tiles.npy written", NULL);
	check(npy_is(path, "'shape': (1, 5)", row, 5),
	      "acc_tiles row (seq, head, row_base, token_base, row_tile)", NULL);

	fsd_begin(&w, dir);
	fsd_tensor(&w, "q_scale", FSD_F32, &one, 1, shape1);
	check(fsd_commit(&w) == 0, "an older dump is replaced", w.error);
	check(!exists(path), "nothing of the older dump is left", NULL);

	snprintf(dir, sizeof(dir), "%s/notes", argv[1]);
	mkdir(dir, 0777);
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	f = fopen(path, "w");
	if (f)
		fclose(f);
	fsd_begin(&w, dir);
	fsd_tensor(&w, "q_scale", FSD_F32, &one, 1, shape1);
	check(fsd_commit(&w) == -1 && strstr(w.error, "holds no manifest.json") != NULL &&
	      exists(path), "a directory that is no dump is kept", w.error);
	return failures ? 1 : 0;
}
