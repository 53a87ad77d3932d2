#!/bin/sh
# run.sh - make hip-emu: the HIP harnesses on tinygrad's mock AMD GPU
# (docs/hip-emu.md). Builds the harnesses with hipcc for gfx940 (CDNA3,
# wave64, 16x16x32) and gfx1100 (RDNA3, wave32, 16x16x16) and this
# directory's libamdhip64.so.5, patches a copy of the tinygrad checkout,
# then runs on the emulator and checks each verdict:
#
#   probe short, probe exhaustive   probe_mmac answers the plan; probe
#                                   solve: device matches the profile
#   attn <case>                     attn_mmac on each cases/device/cdna3-*
#   attn pv-int8-hd128, p_regroup   INT8 PV (tests/data/dump_h/cdna3-pv-
#                                   int8-hd128.yaml): match; the planted
#                                   p_regroup_none refused by name (and
#                                   on RDNA3, with no device exp, INT8 PV)
#                                   golden; fragsim diff: match
#   c_columns, page_walk            planted bugs: diff says mismatch, names
#                                   page_walk; c_columns has no CDNA3 class
#   wrong map: probe, attn          a build on gfx936-quad's lane map
#                                   (FSQ_PROFILE): probe solve against
#                                   gfx936-quad sees C differ; diff names
#                                   the hardware map cdna3-mfma-...
#   rdna3 ...                       the same on RDNA3: the probe of
#                                   rdna3-wmma-i32-16x16x16-iu8-w32, attn on
#                                   each cases/device/rdna3-*, page_walk,
#                                   and a build on a C map blocked as on
#                                   RDNA4 (tools/device/hip/rdna3-wmma-c-
#                                   blocked-w32.yaml)
#   rdna3 unsigned probe            a plan with A and B unsigned (tools/
#                                   device/hip/rdna3-wmma-i32-16x16x16-u8-
#                                   w32.yaml): the emulator ignores iu8's
#                                   NEG_LO bits, and probe solve must say
#                                   "device reads unsigned operands as
#                                   signed"
#
#   tools/device/emu/run.sh BUILD_DIR TINYGRAD_DIR
#
# One line per run: its name, the verdict, the seconds, ok or FAIL.
# Exit status: 0 every verdict as expected, 1 one is not, 2 usage or the
# tinygrad checkout does not fit (patch_tinygrad.py says why), 3 a build
# failed. Environment: HIPCC, PYTHON (default /usr/bin/python3: its
# libpython3.11 is embedded, and it needs numpy for tinygrad),
# HIP_EMU_QUICK=1 skips the exhaustive probes.
set -eu
if [ $# -ne 2 ]; then
	echo "usage: tools/device/emu/run.sh BUILD_DIR TINYGRAD_DIR" >&2
	exit 2
fi
build=$1 tg=$2
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-/usr/bin/python3}
out=$build/hip-emu
fragsim=$build/fragsim
mkdir -p "$out/lib" "$out/runs"
"$py" "$here/patch_tinygrad.py" "$tg" "$out/tinygrad" || exit 2
pycfg=${py}-config
command -v "$pycfg" >/dev/null 2>&1 || pycfg=python3-config
# shellcheck disable=SC2046
if ! ${CC:-cc} -std=c11 -D_DEFAULT_SOURCE -O2 -Wall -Wextra -Werror -fPIC -shared \
	$("$pycfg" --includes) "$here/hip_emu.c" -o "$out/lib/libamdhip64.so.5" \
	-Wl,-soname,libamdhip64.so.5 -Wl,--version-script="$here/hip_emu.map" \
	$("$pycfg" --embed --ldflags); then
	echo "hip-emu: building libamdhip64.so.5 failed (needs libpython3.11-dev)" >&2
	exit 3
fi
hip=tools/device/hip
# build NAME TARGET [VAR=VALUE...]: build.sh into $out/NAME, its log kept
build() {
	n=$1 t=$2; shift 2
	if ! env FRAGSIM="$fragsim" "$@" sh $hip/build.sh "$t" "$out/$n" > "$out/build-$n.log" 2>&1; then
		cat "$out/build-$n.log" >&2
		exit 3
	fi
}
build gfx940 gfx940 "FSQ_MORE_BUGS=page_walk p_regroup_none"
build gfx940-quad gfx940 FSQ_PROFILE=gfx936-quad
build gfx1100 gfx1100 FSQ_MORE_BUGS=page_walk
build gfx1100-u8 gfx1100 FSQ_PROFILE=$hip/rdna3-wmma-i32-16x16x16-u8-w32.yaml
build gfx1100-blocked gfx1100 FSQ_PROFILE=$hip/rdna3-wmma-c-blocked-w32.yaml
FSQ_EMU_DIR=$here FSQ_EMU_TINYGRAD=$(cd "$out/tinygrad" && pwd)
LD_LIBRARY_PATH=$(cd "$out/lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FSQ_EMU_DIR FSQ_EMU_TINYGRAD LD_LIBRARY_PATH
bad=0
# verdict NAME LOG WANT_RC WANT_TEXT SECONDS: the run's line
verdict() {
	v=$(grep -E '^(device (matches|differs)|verdict )' "$2" | tail -n1 | sed 's/^verdict *//' || true)
	[ -n "$v" ] || v="no verdict: $(tail -n1 "$2")"
	# a refusal the run expects: the harness's message, not fragsim run's
	if [ "$3" = 2 ] && [ "$rc" = 2 ]; then
		v="refused: $(tail -n1 "$2" | sed "s|^[a-z_]*: .*/golden: ||; s|^[a-z_]*: ||" | cut -c1-100)..."
	fi
	dg=$(grep '^diagnosis: ' "$2" | tail -n1 | sed 's/^diagnosis: //; s/ (best: .*//' || true)
	case $dg in ''|'none needed') ;; *) v="$v; $dg" ;; esac
	if [ "$3" = "$rc" ] && grep -q -- "$4" "$2"; then
		printf 'hip-emu: %-30s %s (%ss) ok\n' "$1" "$v" "$5"
	else
		printf 'hip-emu: %-30s %s (rc %s, %ss) FAIL: expected rc %s and "%s" (%s)\n' "$1" "$v" \
			"$rc" "$5" "$3" "$4" "$2"
		bad=1
	fi
}
# step LOG CMD...: run, appending to LOG; rc the status of the last
step() {
	log=$1; shift
	rc=0
	"$@" >> "$log" 2>&1 || rc=$?
}
# probe NAME BIN ISA WANT_RC WANT_TEXT [--exhaustive]
probe() {
	d=$out/runs/$1 t0=$(date +%s)
	rm -rf "$d" && mkdir -p "$d"
	step "$d/log" "$fragsim" probe plan --isa "$3" --out "$d/plan" ${6:-}
	[ $rc = 0 ] && step "$d/log" "$2" "$d/plan" "$d/dump"
	[ $rc = 0 ] && step "$d/log" "$fragsim" probe solve --plan "$d/plan" --dump "$d/dump" --isa "$3"
	verdict "$1" "$d/log" "$4" "$5" $(($(date +%s) - t0))
}
# attn NAME BIN CASE WANT_RC WANT_TEXT [ISA]: ISA rewrites the case's isa
# (the kernel of a wrong-map build takes the golden of its own map; a
# profile file by its absolute path, as the case moves)
attn() {
	d=$out/runs/$1 t0=$(date +%s)
	rm -rf "$d" && mkdir -p "$d"
	case=$3
	if [ -n "${6:-}" ]; then
		sed "s|^isa: .*|isa: $6|" "$3" > "$d/case.yaml"
		case=$d/case.yaml
	fi
	step "$d/log" "$fragsim" run "$case" --emulate-only --out "$d/golden"
	[ $rc = 0 ] && step "$d/log" "$2" "$d/golden" "$d/dump"
	[ $rc = 0 ] && step "$d/log" "$fragsim" diff "$case" --dump "$d/dump"
	verdict "$1" "$d/log" "$4" "$5" $(($(date +%s) - t0))
}
isa=cdna3-mfma-i32-16x16x32-i8
echo "hip-emu: tinygrad $(cat "$out/tinygrad/COMMIT"), harnesses for gfx940 and gfx1100 in $out"
probe "probe short" "$out/gfx940/probe_mmac" $isa 0 "device matches $isa"
if [ "${HIP_EMU_QUICK:-0}" != 1 ]; then
	probe "probe exhaustive" "$out/gfx940/probe_mmac" $isa 0 "device matches $isa" --exhaustive
fi
for c in cases/device/cdna3-*.yaml; do
	n=$(basename "$c" .yaml)
	attn "attn $n" "$out/gfx940/attn_mmac" "$c" 0 "verdict *match: the dump is what the case computes"
done
# On CDNA3 a lane's 4 accumulators are 4 rows of one column: c_columns
# (the gfx936 article's bug) is not a class diff can name there
# (docs/dcu.md); page_walk is.
attn "c_columns prefill-chunk" "$out/gfx940/attn_mmac_c_columns" cases/device/cdna3-prefill-chunk.yaml \
	1 "diagnosis: no hypothesis reproduces the dump"
attn "page_walk decode-shuffled" "$out/gfx940/attn_mmac_page_walk" cases/device/cdna3-decode-shuffled.yaml \
	1 "diagnosis: matches kernel assumption page_walk=none"
# INT8 PV (pv_tile.h) at head_dim 128, the loop instance pv_units<0,0>
# (the unrolled one faults inside the emulator: docs/hip-emu.md); the
# planted p_regroup_none cannot feed CDNA3's C registers as A (a lane
# holds a column of C), so that build refuses the golden by name.
pv=tests/data/dump_h/cdna3-pv-int8-hd128.yaml
attn "attn pv-int8-hd128" "$out/gfx940/attn_mmac" $pv 0 "verdict *match: the dump is what the case computes"
attn "pv p_regroup_none refused" "$out/gfx940/attn_mmac_p_regroup_none" $pv 2 \
	"p_regroup_none on $isa: lane 0's C registers do not hold the row-0 entries"
# A kernel built on gfx936-quad's map (FSQ_PROFILE) on CDNA3: the probe
# sees the C map differ, diff names the map the instruction really has.
probe "wrong map: probe" "$out/gfx940-quad/probe_mmac" gfx936-quad 1 "device differs from gfx936-quad"
attn "wrong map: attn prefill" "$out/gfx940-quad/attn_mmac" cases/device/cdna3-prefill-chunk.yaml \
	1 "diagnosis: matches hardware map $isa (kernel written for gfx936-quad) exactly" gfx936-quad
# RDNA3 (gfx1100, wave32): the emulator's WMMA and the profile.
r3=rdna3-wmma-i32-16x16x16-iu8-w32
probe "rdna3 probe short" "$out/gfx1100/probe_mmac" $r3 0 "device matches $r3"
if [ "${HIP_EMU_QUICK:-0}" != 1 ]; then
	probe "rdna3 probe exhaustive" "$out/gfx1100/probe_mmac" $r3 0 "device matches $r3" --exhaustive
fi
# iu8 with A and B unsigned: the emulator ignores the NEG_LO bits that
# ask for it and reads signed bytes; the probe must show it.
probe "rdna3 unsigned probe" "$out/gfx1100-u8/probe_mmac" $hip/rdna3-wmma-i32-16x16x16-u8-w32.yaml 1 \
	"device reads unsigned operands as signed (A and B); the lane map is the same"
for c in cases/device/rdna3-*.yaml; do
	n=$(basename "$c" .yaml)
	attn "attn $n" "$out/gfx1100/attn_mmac" "$c" 0 "verdict *match: the dump is what the case computes"
done
attn "rdna3 page_walk decode" "$out/gfx1100/attn_mmac_page_walk" cases/device/rdna3-decode-shuffled.yaml \
	1 "diagnosis: matches kernel assumption page_walk=none"
# The RDNA3 build has no device exp (-nogpulib): INT8 PV refused by name.
attn "rdna3 pv-int8 refused" "$out/gfx1100/attn_mmac" $pv 2 \
	"case key pv.mode is int8: this build has no device library" $r3
blocked=$hip/rdna3-wmma-c-blocked-w32.yaml
probe "rdna3 wrong map: probe" "$out/gfx1100-blocked/probe_mmac" $blocked 1 \
	"device differs from rdna3-wmma-c-blocked-w32"
attn "rdna3 wrong map: attn decode" "$out/gfx1100-blocked/attn_mmac" cases/device/rdna3-decode-shuffled.yaml \
	1 "diagnosis: matches hardware map $r3 (kernel written for rdna3-wmma-c-blocked-w32) exactly" \
	"$(pwd)/$blocked"
if [ $bad = 0 ]; then
	echo "hip-emu: OK"
else
	echo "hip-emu: FAILED (logs under $out/runs)"
fi
exit $bad
