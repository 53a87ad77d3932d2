/*
 * tile_fast.c - the one choice of vector kernels (tile_fast.h): each
 * build's table (tile_generic.c, tile_avx2.c, tile_avx512.c) is offered
 * when this CPU runs it (sim/common/cpu.h, the one place fragsim asks), and the
 * best is chosen once, at program start, as ggml's CPU backend scores
 * its builds once when it loads. Callers then go through a table of
 * function pointers: no instruction-set switch inside any kernel call.
 *
 * Thread safety. tile_best is the one global of sim/. It is written
 * once, by tile_select, a constructor: the loader runs it before main,
 * so before any thread exists, and nothing writes it after. Every later
 * read sees that value, so any thread may call tile_ops_best without a
 * lock. The tables themselves are const.
 *
 * Example: on a CPU with AVX-512 VNNI, tile_ops_best()->name is
 * "avx512-vnni", tile_ops_of(TILE_AVX2) is the AVX2 table, and all three
 * give the same bits (tests/test_attn_fast.c holds them to it).
 */
#include "tile_fast.h"

#include <stddef.h>

#include "../common/cpu.h"
#include "tile_isa.h"

static const struct tile_ops *tile_best;

const char *tile_isa_name(enum tile_isa isa)
{
	return isa == TILE_AVX512 ? "avx512-vnni" : isa == TILE_AVX2 ? "avx2" :
								   "portable";
}

const struct tile_ops *tile_ops_of(enum tile_isa isa)
{
	if (isa == TILE_AVX512)
		return cpu_has(CPU_AVX512F) && cpu_has(CPU_AVX512BW) &&
		       cpu_has(CPU_AVX512VL) && cpu_has(CPU_AVX512VNNI) ?
		       tile_avx512_ops() : NULL;
	if (isa == TILE_AVX2)
		/* FMA too: PV and the l update are fused (the spec's fmaf). */
		return cpu_has(CPU_AVX2) && cpu_has(CPU_FMA) ? tile_avx2_ops() : NULL;
	return isa == TILE_PORTABLE ? tile_generic_ops() : NULL;
}

/* Before main: libgcc's own constructor may not have run yet (cpu_init). */
__attribute__((constructor)) static void tile_select(void)
{
	cpu_init();
	tile_best = tile_ops_of(TILE_AVX512);
	if (!tile_best)
		tile_best = tile_ops_of(TILE_AVX2);
	if (!tile_best)
		tile_best = tile_generic_ops();
}

const struct tile_ops *tile_ops_best(void)
{
	return tile_best;
}
