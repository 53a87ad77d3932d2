#!/bin/sh
# check.sh - make hip-check: the HIP harnesses compile for CDNA3 (gfx940)
# with Debian's hipcc, without a GPU, and their assembly is what the
# kernel needs: one v_mfma_i32_16x16x32_i8 per K-step of the unrolled
# loop (D/32 = 8 for attn_mmac's qk_tiles<8>, 1 for probe_mmac), one in
# the loop of qk_tiles<0> (any head_dim), no scratch, and the register
# counts, printed. The gfx936 build needs DTK's hipcc: without
# it that part says so and is skipped.
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
check() {	# target mnemonic
	target=$1 mnemonic=$2
	sh "$here/build.sh" --asm "$target" "$build/hip/$target"
	for k in "probe_mmac probe 1" "attn_mmac qk_tiles<8> 8" "attn_mmac qk_tiles<0> 1" \
		"attn_mmac_c_columns qk_tiles<8> 8" "attn_mmac_c_columns qk_tiles<0> 1"; do
		set -- $k
		/usr/bin/python3 "$here/check_asm.py" "$build/hip/$target/$1.s" "$2" \
			"$mnemonic" "$3" "$target $1"
	done
}
check gfx940 v_mfma_i32_16x16x32_i8
# Does this hipcc know gfx936 (DTK's does, ROCm's does not)?
mkdir -p "$build/hip"
printf '__global__ void k(int *p) { *p = 0; }\n' > "$build/hip/probe-target.hip"
if $hipcc --offload-arch=gfx936 --cuda-device-only -S "$build/hip/probe-target.hip" \
	-o "$build/hip/probe-target.s" > "$build/hip/probe-target.log" 2>&1; then
	check gfx936 v_mmac_i32_16x16x32_i8
else
	echo "hip-check: gfx936: skipped, $($hipcc --version 2>/dev/null | grep -i -m1 'version' || echo hipcc) has no gfx936 target; DTK's hipcc builds it (docs/dcu.md)"
fi
echo "hip-check: OK"
