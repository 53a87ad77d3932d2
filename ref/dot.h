/*
 * dot.h - the reference's one-pair int8 dot product, vectorized without
 * changing a bit: an int32 sum is exact in any order, so ref.c can be
 * read as the plain loop, and dot.c is checked against it
 * (tests/test_dot.c does). The double sums are ref/tile.h's.
 */
#ifndef DOT_H
#define DOT_H

#include <stddef.h>
#include <stdint.h>

/* sum_{i < n} a[i] * b[i] in int32; n a multiple of 32 (exact:
 * |a[i] * b[i]| <= 2^14, n <= 1024, so no partial sum overflows). */
int32_t dot_i8(const int8_t *a, const int8_t *b, int n);

#endif
