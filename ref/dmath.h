/*
 * dmath.h - the reference's exp, log and tanh, the same bits everywhere.
 *
 * Why not libm: glibc picks one of several builds of exp and log when
 * it loads (an FMA build on CPUs that have FMA, an SSE2 build on those
 * that do not), and they do not always agree in the last bit. The
 * reference's figures (probabilities, KLD, tolerances) then differed
 * between machines for the same case: run with the FMA builds masked
 * (GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F), 52 lines of the
 * shipped suite's --json reports changed. These functions use only
 * IEEE operations that round once (+ - * /, ldexp, frexp), in a
 * written order (-ffp-contract=off), so every x86-64 or AArch64 build
 * gives the same bits. Accuracy, measured by
 * tests/test_dmath.c against long double over each whole range: worst
 * 0.95 ulp (exp), 1.09 (exp2), 1.96 (expm1), 1.19 (log), 2.49 (tanh);
 * the test holds them to 3. A reference needs its bits fixed far more
 * than its last ulp: its tolerances are ~2^-22 relative.
 */
#ifndef DMATH_H
#define DMATH_H

/* e^x; +inf above 709.78, +0 below -745.14, NaN for NaN. */
double dm_exp(double x);

/* y[i] = dm_exp(x[i]) for i < n, the same bits, 8 lanes at a time where
 * the CPU has AVX-512 (x and y may be the same array). */
void dm_exp_n(const double *x, double *y, int n);

/* 2^x; exact when x is an integer in range. */
double dm_exp2(double x);

/* e^x - 1, accurate near 0 (what tanh needs). */
double dm_expm1(double x);

/* Natural log; -inf at +-0, NaN below 0 or for NaN, +inf at +inf. */
double dm_log(double x);

/* tanh; odd, +-1 beyond |x| 22, x itself below 2^-28. */
double dm_tanh(double x);

#endif
