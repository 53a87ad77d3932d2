/*
 * slab.h - carve one allocation into a thread's scratch arrays.
 *
 * A thread's scratch (sim/attn/attn.c's team) is some forty small
 * arrays. Allocated one malloc each on the calling thread, their chunk
 * headers and first writes fault in every page of the team's scratch
 * from that one thread, before the team starts: on the 16-core host 186
 * page faults (f32 PV) and 320 (INT8 PV), 0.3-0.7 ms of an 8 ms decode
 * at 16 threads, serial (issue 23 point 14). Carved from one block,
 * each thread's part is first written by the thread that uses it, in
 * parallel, and the caller's only cost is one allocation.
 *
 * A carve function takes a slab and calls slab_take for each array in a
 * fixed order. Run once on an empty slab (base NULL), it only counts:
 * slab_take returns NULL, the function writes nothing, and s->used is
 * the bytes it needs. Run again on a block of at least that many bytes,
 * it gets the same offsets, hence the same layout. Arrays start on
 * SLAB_ALIGN bytes (a cache line, so that no two arrays of different
 * threads share one when the block's parts are SLAB_ALIGN-aligned).
 */
#ifndef FS_SLAB_H
#define FS_SLAB_H

#include <stddef.h>

#define SLAB_ALIGN 64

/*
 * Under AddressSanitizer each array is followed by a poisoned gap, so
 * that a write past one array into the next is still reported, as it
 * was when each had its own malloc (make asan, both compilers).
 */
#if defined(__SANITIZE_ADDRESS__)
#define SLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_ASAN 1
#endif
#endif
#ifdef SLAB_ASAN
#include <sanitizer/asan_interface.h>
#define SLAB_REDZONE SLAB_ALIGN
#define SLAB_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define SLAB_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define SLAB_REDZONE 0
#define SLAB_POISON(p, n) ((void)(p), (void)(n))
#define SLAB_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

struct slab {
	char *base;	/* NULL: count only */
	size_t used, cap;
};

/* n bytes, SLAB_ALIGN-aligned; NULL when counting or past the cap
 * (the counting pass sized the block, so a carve never gets NULL) */
static inline void *slab_take(struct slab *s, size_t n)
{
	size_t at = (s->used + SLAB_ALIGN - 1) & ~(size_t)(SLAB_ALIGN - 1);

	s->used = at + n + SLAB_REDZONE;
	if (!s->base || s->used > s->cap)
		return NULL;
	SLAB_POISON(s->base + at + n, SLAB_REDZONE);
	return s->base + at;
}

#endif
