#!/bin/sh
# check.sh - make hip-check: the HIP harnesses compile with Debian's
# hipcc, without a GPU, and their assembly is what the kernel needs, for
# CDNA3 (gfx940: v_mfma_i32_16x16x32_i8, wave64) and RDNA3 (gfx1100:
# v_wmma_i32_16x16x16_iu8, wave32 and, with FSQ_WAVE64, wave64): one
# instruction per K-step of the unrolled loop (D/K for attn_mmac's
# qk_tiles<256/K>: 8 on CDNA3, 16 on RDNA3; 1 for probe_mmac), one in the
# loop of qk_tiles<0> (any head_dim), no scratch, and the register
# counts, printed. INT8 PV (pv_units, pv_tile.h) the same way: at head
# dim 256 pv_units<8,16> issues per group 2 QK tiles x 8 K-steps and 16
# PV column tiles, 32 instructions, of which exactly 16 start from C = 0
# and read one A operand (P, shared by the column tiles: check_asm.py
# --pv, on gfx940; DTK's gfx936 assembly is not seen here);
# pv_units<0,0> (any head_dim) one per QK tile in the K-step loop and
# one in the column-tile loop: 3 on CDNA3 and gfx936 (2 QK tiles a
# group), 2 on RDNA3 (16-key groups, one QK tile; RDNA3 has only the
# loop form). The planted p_regroup_none build (attn_mmac_p_regroup_none)
# is checked alike. On RDNA3 also the iu8 signedness each probe kernel asks
# for: probe<UA,UB> reads A (B) unsigned when UA (UB) is 1, which clears
# its NEG_LO bit (neg_lo:[1,1,0] is both signed; LLVM prints no neg_lo
# when both are clear), and the attention kernels read signed bytes. The
# gfx936 build needs DTK's hipcc: without it that part says so and is
# skipped.
#
#   tools/device/hip/check.sh BUILD_DIR        (BUILD_DIR/fragsim exists)
set -eu
build=$1
here=$(dirname "$0")
hipcc=${HIPCC:-hipcc}
export FRAGSIM="$build/fragsim"
if ! command -v "$hipcc" >/dev/null 2>&1; then
	echo "hip-check: no hipcc (Debian: apt-get install hipcc)" >&2
	exit 1
fi
# asm DIR FILE KERNEL COUNT [CHECK_ASM OPTIONS]: one kernel of $build/hip/DIR
asm() {
	d=$1 f=$2 k=$3 n=$4
	shift 4
	/usr/bin/python3 "$here/check_asm.py" "$build/hip/$d/$f.s" "$k" "$mnemonic" "$n" "$d $f" "$@"
}
# check TARGET DIR MNEMONIC UNROLL PROBE [CHECK_ASM OPTIONS]: build.sh --asm
# into $build/hip/DIR, then each kernel: PROBE is the probe kernel's
# instance, UNROLL the unrolled attention kernel's K-steps, the options
# apply to every kernel.
check() {
	target=$1 dir=$2 mnemonic=$3 unroll=$4 probe=$5
	shift 5
	FSQ_MORE_BUGS=p_regroup_none sh "$here/build.sh" --asm "$target" "$build/hip/$dir"
	asm "$dir" probe_mmac "$probe" 1 "$@"
	for f in attn_mmac attn_mmac_c_columns attn_mmac_p_regroup_none; do
		asm "$dir" $f "qk_tiles<$unroll>" "$unroll" "$@"
		asm "$dir" $f "qk_tiles<0>" 1 "$@"
		if [ "$unroll" = 8 ]; then
			# --pv reads C = 0 as the literal LLVM prints for
			# MFMA (checked on gfx940); DTK's v_mmac is not seen
			# here, so gfx936 counts the 32 alone
			if [ "$target" = gfx936 ]; then
				asm "$dir" $f "pv_units<8,16>" 32 "$@"
			else
				asm "$dir" $f "pv_units<8,16>" 32 "$@" --pv 16
			fi
			asm "$dir" $f "pv_units<0,0>" 3 "$@"
		else
			asm "$dir" $f "pv_units<0,0>" 2 "$@"
		fi
	done
}
check gfx940 gfx940 v_mfma_i32_16x16x32_i8 8 "probe<0,0>"
for w in 32 64; do
	d=gfx1100 wave=0
	[ $w = 64 ] && d=gfx1100-w64 wave=1
	export FSQ_WAVE64=$wave
	check gfx1100 $d v_wmma_i32_16x16x16_iu8 16 "probe<0,0>" --with "neg_lo:[1,1,0]"
	asm $d probe_mmac "probe<1,1>" 1 --without neg_lo
	asm $d probe_mmac "probe<1,0>" 1 --with "neg_lo:[0,1,0]"
	asm $d probe_mmac "probe<0,1>" 1 --with "neg_lo:[1,0,0]"
done
export FSQ_WAVE64=0
# Does this hipcc know gfx936 (DTK's does, ROCm's does not)?
mkdir -p "$build/hip"
printf '__global__ void k(int *p) { *p = 0; }\n' > "$build/hip/probe-target.hip"
if $hipcc --offload-arch=gfx936 --cuda-device-only -S "$build/hip/probe-target.hip" \
	-o "$build/hip/probe-target.s" > "$build/hip/probe-target.log" 2>&1; then
	check gfx936 gfx936 v_mmac_i32_16x16x32_i8 8 "probe<0,0>"
else
	echo "hip-check: gfx936: skipped, $($hipcc --version 2>/dev/null | grep -i -m1 'version' || echo hipcc) has no gfx936 target; DTK's hipcc builds it (docs/dcu.md)"
fi
echo "hip-check: OK"
