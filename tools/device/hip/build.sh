#!/bin/sh
# build.sh - build the HIP harnesses for one GPU target.
#
#   tools/device/hip/build.sh [--asm] TARGET OUTDIR
#
# TARGET is gfx936 or gfx928 (Hygon DCU, DTK's hipcc), gfx940, gfx941,
# gfx942 (MI300, ROCm's hipcc) or gfx1100-gfx1103, gfx1150, gfx1151
# (RDNA3: wave32, or wave64 with FSQ_WAVE64=1; built with -nogpulib, as
# Debian's hipcc has no gfx11 device library and the harnesses need none).
# Writes the lane-map headers for the target (fragsim lanemap --format c)
# into OUTDIR/gen, then
#   OUTDIR/probe_mmac              answers a fragsim probe plan
#   OUTDIR/attn_mmac               the QK^T tiles of a golden, dumped
#   OUTDIR/attn_mmac_c_columns     the same with the contiguous-columns bug
#   OUTDIR/attn_mmac_BUG           with FSQ_MORE_BUGS="page_walk head_dim_half
#                                  p_regroup_none" (any of them), that bug
#                                  planted (p_regroup_none: INT8 PV's C
#                                  registers fed as A, pv_tile.h)
# With --asm, the device assembly only (OUTDIR/*.s, no GPU runtime needed).
# Environment: FRAGSIM (default build/fragsim), HIPCC (default hipcc),
# FSQ_PROFILE (a profile name or YAML to use instead of the target's
# builtin one, e.g. gfx936-quad or the found.yaml of probe solve --yaml),
# HIPFLAGS (added to every hipcc call, e.g. -DFSQ_MMAC_ASM for the
# article's inline assembly on gfx936), FSQ_WAVE64=1 (RDNA3 targets: wave64,
# the -w64 lane map). Run from the repository root.
set -eu
asm=0
if [ "${1:-}" = --asm ]; then asm=1; shift; fi
if [ $# -ne 2 ]; then
	echo "usage: tools/device/hip/build.sh [--asm] TARGET OUTDIR" >&2
	exit 2
fi
target=$1 out=$2
fragsim=${FRAGSIM:-build/fragsim}
hipcc=${HIPCC:-hipcc}
case $target in
gfx936|gfx928) define=FSQ_TARGET_GFX936 ;;
gfx940|gfx941|gfx942) define=FSQ_TARGET_CDNA3 ;;
gfx1100|gfx1101|gfx1102|gfx1103|gfx1150|gfx1151)
	# -nogpulib: Debian's hipcc has no gfx11 device library (mmac.h).
	# -mcumode: a workgroup's waves share one L0, so the barrier's
	# acquire needs no buffer_gl0_inv (WGP mode's), an encoding
	# tinygrad's RDNA3 decoder lacks (docs/hip-emu.md); the harnesses'
	# workgroups are one wave either way. The unroll threshold: LLVM 15's
	# default stops qk_tiles<16>'s full unroll at 8 K-steps, two trips.
	define="FSQ_TARGET_RDNA3 -DFSQ_NOGPULIB -nogpulib -mcumode -mllvm -pragma-unroll-threshold=65536"
	[ "${FSQ_WAVE64:-0}" = 1 ] && define="$define -DFSQ_WAVE64 -mwavefrontsize64" ;;
*) echo "build.sh: unknown target '$target' (gfx936, gfx928, gfx940, gfx941, gfx942, gfx1100-gfx1103, gfx1150, gfx1151)" >&2
   exit 2 ;;
esac
here=$(dirname "$0")
mkdir -p "$out/gen"
for p in gfx936 gfx936-quad cdna3-mfma-i32-16x16x32-i8 rdna3-wmma-i32-16x16x16-iu8-w32 \
	rdna3-wmma-i32-16x16x16-iu8-w64; do
	h=$out/gen/fragsim_lanemap_$(echo "$p" | tr '-' '_').h
	"$fragsim" lanemap --isa "$p" --format c > "$h.tmp"
	mv "$h.tmp" "$h"
done
# -ffp-contract=off: the score recovery is fragsim's separate f32 roundings
# (qk_tile.h), never one fused multiply-add.
flags="--offload-arch=$target -O3 -ffp-contract=off -D$define -I$out/gen -I$here/.. -I$here ${HIPFLAGS:-}"
custom=
if [ -n "${FSQ_PROFILE:-}" ]; then
	h=$out/gen/fragsim_lanemap_custom.h
	"$fragsim" lanemap --isa "$FSQ_PROFILE" --format c > "$h.tmp"
	mv "$h.tmp" "$h"
	# FS_<NAME>_NAME gives the header's prefixes.
	upper=$(sed -n 's/^#define \(FS_[A-Z0-9_]*\)_NAME .*/\1/p' "$h")
	lower=$(echo "$upper" | tr 'A-Z' 'a-z')
	flags="$flags -DFSQ_LM=$lower -DFSQ_LMU=$upper"
	custom=-DFSQ_LANEMAP=\"fragsim_lanemap_custom.h\"
fi
if [ $asm = 1 ]; then
	flags="$flags --cuda-device-only -S"
	ext=.s
else
	ext=
fi
# hipcc's driver warns about link flags it does not use in -S mode; the
# log keeps them out of sight unless the compile fails.
compile() {
	if ! $hipcc $flags ${custom:+"$custom"} "$@" > "$out/hipcc.log" 2>&1; then
		grep -v "clang: warning: .*unused" "$out/hipcc.log" >&2
		exit 1
	fi
}
compile "$here/probe_mmac.hip" -o "$out/probe_mmac$ext"
compile "$here/attn_mmac.hip" -o "$out/attn_mmac$ext"
compile -DFSQ_BUGS=FSQ_BUG_C_COLUMNS "$here/attn_mmac.hip" -o "$out/attn_mmac_c_columns$ext"
more=
for b in ${FSQ_MORE_BUGS:-}; do
	case $b in
	page_walk) m=FSQ_BUG_PAGE_WALK ;;
	head_dim_half) m=FSQ_BUG_HEAD_DIM_HALF ;;
	p_regroup_none) m=FSQ_BUG_P_REGROUP_NONE ;;
	*) echo "build.sh: FSQ_MORE_BUGS: unknown bug '$b' (page_walk, head_dim_half, p_regroup_none)" >&2
	   exit 2 ;;
	esac
	compile -DFSQ_BUGS=$m "$here/attn_mmac.hip" -o "$out/attn_mmac_$b$ext"
	more="$more, attn_mmac_$b"
done
echo "built probe_mmac, attn_mmac, attn_mmac_c_columns$more for $target in $out"
