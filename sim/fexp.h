/*
 * fexp.h - the one exponential every emulated path uses.
 *
 * glibc's expf may differ between versions and machines in the last bit;
 * a golden tensor must not. fs_expf uses only IEEE double additions and
 * multiplications (built with -ffp-contract=off, so no FMA sneaks in) and
 * rounds once to float, so its bits are the same everywhere. Its error is
 * within 0.5 ulp of float plus ~1e-16 relative: almost always the
 * correctly rounded value.
 */
#ifndef FEXP_H
#define FEXP_H

float fs_expf(float x);

#endif
