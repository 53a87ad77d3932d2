/*
 * clock.h - monotonic seconds, for the stage timings that runs record
 * (runcase.c) and reports print (cli/). A header of its own so that the
 * library can time its stages without including the CLI.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <time.h>

static inline double clock_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
