/*
 * fuzz_dump.c - a device dump directory into dump_load (lib/dump.c)
 * and diffcase_compare (lib/diffcase.c), as fragsim diff reads one:
 * the input is an archive of the directory's files (fuzz.h), unpacked
 * into a fresh directory; the dump is read against the simulation of
 * tests/data/dumps/clean/case.yaml (decode, 40 keys on shuffled pages),
 * computed once.
 *
 * Promises checked: any files give a dump or an error with a message,
 * no crash, no leak, no hang; a dump that loads compares with the
 * simulation (NaN, infinities and any tile list included), and compares
 * no more elements than it holds.
 */
#include "fuzz.h"

#include "../../lib/diffcase.h"
#include "../../lib/dump.h"
#include "../../lib/runcase.h"

#ifndef FRAGSIM_SRC
#define FRAGSIM_SRC "."
#endif

/* The simulation the dumps are read against: made once, kept. */
static const struct runcase *simulation(void)
{
	static struct runcase r;
	static int ready;
	struct fs_err err = { 0 };

	if (!ready) {
		FUZZ_ASSERT(runcase_load(FRAGSIM_SRC "/tests/data/dumps/clean/case.yaml",
					 &r, &err) == FS_OK);
		FUZZ_ASSERT(runcase_inputs(&r, &err) == FS_OK);
		FUZZ_ASSERT(runcase_emulate(&r, &r.c, NULL, &r.sim, &err) == FS_OK);
		r.have_sim = 1;
		ready = 1;
	}
	return &r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct runcase *r = simulation();
	const struct diff_opts o = { 0.0, 4 };
	struct fs_err err = { 0 };
	struct diff_report rep;
	struct fuzz_dir dir;
	struct dump d;
	long held = 0;

	if (fuzz_dir_unpack(&dir, data, size))
		return 0;
	if (dump_load(dir.path, r, &d, &err)) {
		FUZZ_ASSERT(err.msg[0]);
		fuzz_dir_remove(&dir);
		return 0;
	}
	memset(&rep, 0, sizeof(rep));
	FUZZ_ASSERT(diffcase_compare(r, &r->sim, &d, &o, &rep, &err) == FS_OK);
	for (int t = 0; t < DUMP_COUNT; t++)
		if (t != DUMP_ACC_TILES && dump_has(&d, (enum dump_tensor)t))
			held += (long)d.t[t].count;
	FUZZ_ASSERT(rep.compared <= held && rep.mismatches <= rep.compared);
	diffcase_report_free(&rep);
	dump_free(&d);
	fuzz_dir_remove(&dir);
	return 0;
}
