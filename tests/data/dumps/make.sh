#!/bin/sh
# make.sh - regenerate the example device dumps that tests/test_diffcase.c
# diagnoses. Each <name>/ holds
#   case.yaml     what the device is supposed to compute (the expectation
#                 of `fragsim diff`)
#   plant.yaml    what the simulated device does instead: a kernel:
#                 section planting one bug class, or another isa:
#   expected.txt  the diagnosis line, written by hand from plant.yaml
#                 (element counts worked out from the case's shape)
#   *.npy         the dump: case.yaml + plant.yaml run with
#                 `fragsim run --emulate-only --out`, only the tensors a
#                 device dump has (no manifest: it would name a temp path)
#
# usage: sh tests/data/dumps/make.sh [path/to/fragsim]   (after make)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../../build/fragsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in "$here"/*/; do
	[ -f "$d/plant.yaml" ] || continue
	cat "$d/case.yaml" "$d/plant.yaml" > "$tmp/case.yaml"
	rm -rf "$tmp/out"
	"$bin" run "$tmp/case.yaml" --emulate-only --out "$tmp/out" >/dev/null
	rm -f "$d"/*.npy
	for f in acc acc_tiles scores out q_int8 q_scale splitk_max splitk_sum splitk_out; do
		if [ -f "$tmp/out/$f.npy" ]; then
			cp "$tmp/out/$f.npy" "$d/"
		fi
	done
	echo "$(basename "$d"): $(cd "$d" && ls *.npy | tr '\n' ' ')"
done
