/*
 * cpu.h - which x86 vector extensions this CPU has: the one place fragsim
 * asks (sim/attn/tile_fast.c picks the emulator's vector kernels with it,
 * ref/dot.c the reference's). A header of basics like fs.h, with no
 * mapping code, so ref/ may include it and stay independent of sim/'s
 * kernel model.
 *
 * __builtin_cpu_supports reads bits that libgcc (or compiler-rt) fills
 * in a constructor at load time, so each test is one load and one AND:
 * cheap enough per call, and no global of ours. Code that runs before
 * that constructor (another constructor) calls cpu_init first.
 *
 * On a machine that is not x86 every feature is absent and callers run
 * their plain C builds.
 */
#ifndef CPU_H
#define CPU_H

#if defined(__x86_64__) || defined(__i386__)
#define CPU_X86 1
#endif

enum cpu_feature {
	CPU_AVX2,
	CPU_FMA,
	CPU_AVX512F,
	CPU_AVX512BW,
	CPU_AVX512VL,
	CPU_AVX512VNNI,
};

/* Fill the feature bits now (idempotent). */
static inline void cpu_init(void)
{
#ifdef CPU_X86
	__builtin_cpu_init();
#endif
}

/* 1 when this CPU has feature f, else 0. */
static inline int cpu_has(enum cpu_feature f)
{
#ifdef CPU_X86
	switch (f) {
	case CPU_AVX2:
		return __builtin_cpu_supports("avx2") != 0;
	case CPU_FMA:
		return __builtin_cpu_supports("fma") != 0;
	case CPU_AVX512F:
		return __builtin_cpu_supports("avx512f") != 0;
	case CPU_AVX512BW:
		return __builtin_cpu_supports("avx512bw") != 0;
	case CPU_AVX512VL:
		return __builtin_cpu_supports("avx512vl") != 0;
	case CPU_AVX512VNNI:
		return __builtin_cpu_supports("avx512vnni") != 0;
	}
#endif
	(void)f;
	return 0;
}

#endif
