/*
 * threads.h - how many OpenMP threads fragsim runs: the OpenMP
 * environment checked before any parallel region, the default bounded
 * (threads.c says why and how).
 */
#ifndef THREADS_H
#define THREADS_H

#include "../sim/common/fs.h"

/* The most threads fragsim runs: --threads, OMP_NUM_THREADS, the
 * default of all cores (the library's FRAGSIM_THREADS_MAX). */
#define THREADS_MAX 1024
/* The least OMP_STACKSIZE fragsim takes, bytes (threads.c says why). */
#define THREADS_STACK_MIN (1024.0 * 1024.0)

/*
 * Check OMP_NUM_THREADS, OMP_THREAD_LIMIT and OMP_STACKSIZE as OpenMP
 * reads them, and bound the default thread count (all cores) to
 * THREADS_MAX. FS_EINPUT, naming the variable and its value, for one
 * fragsim must not run with; nothing is changed then. Call before any
 * parallel region.
 */
enum fs_rc threads_init(struct fs_err *err);

#endif
