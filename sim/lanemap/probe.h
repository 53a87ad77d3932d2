/*
 * probe.h - find a matrix instruction's lane map on real hardware: the
 * register contents to run (plan) and the map read back from C (solve).
 *
 * The device runs the instruction once per wave w, C starting at zero:
 *   a[w][lane*EA + e], b[w][lane*EB + e]  ->  c[w][lane*EC + e]
 * Only register slots are observable, never matrix labels. What a run can
 * show is the set of products: C slot sc receives A slot sa times B slot
 * sb. Every lane map is a way of naming those triples with rows, columns
 * and a reduction index k; solve finds the triples and names them.
 *
 * The exhaustive plan (W = 2 * LANES*EA + 3 waves):
 *
 *   wave 2*sa + d    A: slot sa = 1, every other A slot 0
 *   (sa < LANES*EA)  B: slot sb = digit d of sb in base 100, plus 1
 *                    (1..100: never 0, so "not paired" reads as 0)
 *                    C: slot sc = B value of the slot paired with sa for
 *                    sc, or 0 when sa does not feed sc
 *   wave 2*SA        "ones":    A and B all 1          C = K everywhere
 *   wave 2*SA + 1    "extreme": A = -128 (u8: 255), B = 127 (u8: 255)
 *   wave 2*SA + 2    "random":  a seeded random A and B, scattered by the
 *                    plan's profile so that its replicas agree
 *
 * Example, gfx936 (A 64x8, B 64x8, C 64x4): wave 2*9 + 1 lights A lane 1
 * e 1 = A[1][1]. C row 1 lights up: lane 17 e 0 is C[1][1] and receives
 * B[1][1], which is B slot 1*8 + 1 = 9 (lane 1 e 1), so it reads
 * 9 / 100 + 1 = 1 in this wave (digit 1) and 9 % 100 + 1 = 10 in wave
 * 2*9 (digit 0). Two waves name any of up to 10000 B slots.
 *
 * No aliasing, no overflow: in a one-hot wave a C slot that pairs once
 * holds one B value in 1..100; a device that summed two products would
 * show as a disagreement with the check waves, which solve predicts from
 * the triples and compares exactly. A check wave's |C| is at most
 * K * 255 * 255 <= 256 * 65025 < 2^31.
 *
 * Labels. Row, column and k labels are names: renaming A's and C's rows
 * alike (B's and C's columns, A's and B's k) changes no register, so no
 * program can observe it. Solve anchors each class to the label that
 * most of its slots carry in a given profile (greedy, largest vote
 * first), so that a device that agrees up to such a renaming is reported
 * identical, and differences show where they are observable.
 *
 * Replicas. A profile may hold an entry in several slots (RDNA3 WMMA A
 * and B). A device reads one copy, or different copies for different C
 * slots; the one-hot waves light each slot alone, so solve sees which
 * slots are read. A slot never read holds an entry nobody can observe:
 * solve reports it and keeps the anchor profile's entry for it. The
 * simulated device (probe_device) reads, for every entry, its lowest
 * slot (owner[0]) and ignores the other copies.
 *
 * The short plan (W = 2 * ceil(P / 2) + 6 waves, P one-hot probes), for
 * a profile whose three maps are linear over GF(2) (sim/lanemap/gf2.h). On such
 * a device the products (sa, sb, sc), each slot number read as a bit
 * vector, form a linear subspace: C slot sc sums A[r][k] B[k][n] exactly
 * when A's row and k bits, B's k and column bits and C's row and column
 * bits agree, and each of those is an XOR of slot bits. So the products
 * of A slot 0 and of each power-of-two A slot span them all.
 *
 *   probes        slot 0, slots 1, 2, 4, ... SA/2 (the basis), then
 *                 PROBE_MIXES random slots with 3 or more bits set (an
 *                 XOR of basis slots: what linearity predicts is checked)
 *   wave 2*m + d  probes 2m and 2m + 1 lit with A = 1 and A = PROBE_HI
 *                 (101); B as in the exhaustive plan (digit d, plus 1).
 *                 C = b1 + 101 * b2 with b1, b2 in 0..100: both read back
 *   checks        ones, extreme, then PROBE_RANDOMS random waves
 *
 * gfx936: 1 + 9 + 6 = 16 probes, 8 pairs x 2 digits + 6 checks = 22
 * waves instead of 1027. Solve reads the probes' products, spans them
 * from the first product of slot 0, and insists that the span predicts
 * every wave of the plan exactly: a device that is not linear (or a dump
 * edited anywhere) shows up as a wave that differs, and the answer is
 * to run the exhaustive plan, which assumes nothing.
 */
#ifndef PROBE_H
#define PROBE_H

#include <stdint.h>

#include "gf2.h"
#include "lanemap.h"

#define PROBE_BASE 100		/* digit base of a B slot's number */
#define PROBE_DIGITS 2		/* PROBE_BASE^2 >= LM_MAX_SLOTS */
#define PROBE_CHECKS 3		/* exhaustive: ones, extreme, random */
#define PROBE_SEED 0x70726f6265ull	/* "probe": the random wave's seed */
#define PROBE_HI 101		/* short: A value of a wave's second probe */
#define PROBE_MIXES 6		/* short: probes at XORs of basis slots */
#define PROBE_RANDOMS 4		/* short: random check waves */
#define PROBE_SHORT_CHECKS (2 + PROBE_RANDOMS)
#define PROBE_MAX_PROBES (1 + GF2_MAX_IN + PROBE_MIXES)

enum probe_kind {
	PROBE_EXHAUSTIVE,	/* every A slot lit alone: any valid map */
	PROBE_SHORT,		/* the basis and a few mixes: linear maps */
};

/* What the waves of a plan are. */
struct probe_layout {
	enum probe_kind kind;
	int waves;		/* one-hot waves, then the check waves */
	int onehot;		/* waves before the first check wave */
	int checks;		/* PROBE_CHECKS or PROBE_SHORT_CHECKS */
	/* short only: probe j lights A slot slot[j] with 1 (j even) or
	 * PROBE_HI (j odd) in waves PROBE_DIGITS * (j / 2) + d */
	int probes;		/* basis + PROBE_MIXES */
	int basis;		/* slot 0 and the power-of-two slots come first */
	int slot[PROBE_MAX_PROBES];
};

/*
 * The layout of a plan of this kind for lm (validated, 8-bit A and B,
 * i32 C). FS_EINPUT with err saying why: a short plan needs every
 * operand linear over GF(2).
 */
enum fs_rc probe_layout(const struct lanemap *lm, enum probe_kind kind,
			struct probe_layout *pl, struct fs_err *err);

/*
 * The kind a plan for lm gets unless asked: short when all three maps
 * are linear over GF(2), else exhaustive, with why (if non-NULL, "C is
 * not linear over GF(2)") in why[len].
 */
enum probe_kind probe_default_kind(const struct lanemap *lm, char *why, size_t len);

/* "short" or "exhaustive". */
const char *probe_kind_name(enum probe_kind kind);

/* Name of check wave i: "ones", "extreme", "random", "random2", ... */
const char *probe_check_name(int i);

/*
 * Can a plan made for x run on a device that follows y? Same wave, same
 * elements per lane for A, B and C, 8-bit A and B, i32 C. FS_OK when
 * yes, else FS_EINPUT with err saying what differs.
 */
enum fs_rc probe_same_geometry(const struct lanemap *x, const struct lanemap *y,
			       struct fs_err *err);

/*
 * Fill the plan: a[W * lanes*EA], b[W * lanes*EB] (8-bit, two's complement
 * for i8), W = pl->waves, pl from probe_layout(lm). FS_EINPUT when lm is
 * not valid or not 8-bit A/B and i32 C.
 */
enum fs_rc probe_plan(const struct lanemap *lm, const struct probe_layout *pl,
		      uint8_t *a, uint8_t *b, struct fs_err *err);

/*
 * The simulated device: run each of `waves` waves through mmac_exec under
 * dev (validated), after copying every entry's lowest slot onto its other
 * replicas (a device reads one copy). c[waves * lanes*EC] is overwritten.
 */
enum fs_rc probe_device(const struct lanemap *dev, int waves,
			const uint8_t *a, const uint8_t *b, int32_t *c,
			struct fs_err *err);

struct probe_result {
	struct lanemap *found;	/* the device's map, validated; caller frees */
	int terms;		/* products seen: M*N*K for a real instruction */
	int slots[LM_NOPERANDS];	/* lanes * elements */
	int unread[2];		/* A, B slots no product reads */
	uint8_t read[2][LM_MAX_SLOTS];	/* 1: slot is read (A, B) */
	int labels_anchored[3];	/* rows, cols, k whose label came from votes */
	int span_dim;		/* short: the products are 2^span_dim */
	int read_signed;	/* 1 A, 2 B: operands the plan has unsigned
				   (u8) that the device read as signed: the
				   check waves hold only so (found has i8) */
};

/*
 * Read the device's answers c for the plan laid out by pl and made from
 * `plan` (a, b as probe_plan wrote them), and name them with labels
 * anchored to `anchor` (same geometry). FS_OK with res->found set (and
 * res->read_signed when the answers hold only with the plan's unsigned
 * operands read as signed: the device ignores their signedness);
 * FS_EINPUT with err saying which wave and slot no lane map explains (for
 * a short plan: no linear map, and to plan again with --exhaustive);
 * FS_ENOMEM on out of memory. res->found is NULL after any failure.
 */
enum fs_rc probe_solve(const struct lanemap *plan, const struct probe_layout *pl,
		       const struct lanemap *anchor, const uint8_t *a,
		       const uint8_t *b, const int32_t *c,
		       struct probe_result *res, struct fs_err *err);

#endif
