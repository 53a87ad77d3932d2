#!/bin/sh
# run.sh - what make fuzz runs: each target in turn, one process, for
# SECONDS, from its seeds (written by regress_<target> --seeds), the
# committed corpus and crashes, and what earlier runs found.
# Usage: run.sh BUILD_DIR SECONDS TARGET...
# New inputs go to BUILD_DIR/fuzz/corpus/<target>/, a crash to
# BUILD_DIR/fuzz/crashes/<target>/ (and the run stops: exit status 1).
set -eu
build=$1; secs=$2; shift 2
# one fuzzer, one core: no OpenMP team inside it
export OMP_NUM_THREADS=1
# fuzz_dump unpacks each input into a directory under TMPDIR: memory is faster
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	export TMPDIR=/dev/shm
fi
for t in "$@"; do
	seeds=$build/fuzz/seeds/$t
	corpus=$build/fuzz/corpus/$t
	crashes=$build/fuzz/crashes/$t
	rm -rf "$seeds"
	mkdir -p "$seeds" "$corpus" "$crashes"
	"$build/tests/fuzz/regress_$t" --seeds "$seeds"
	dirs="$corpus $seeds"
	for d in "tests/fuzz/corpus/$t" "tests/fuzz/crashes/$t"; do
		if [ -d "$d" ]; then dirs="$dirs $d"; fi
	done
	dict=""
	if [ -f "tests/fuzz/$t.dict" ]; then dict="-dict=tests/fuzz/$t.dict"; fi
	echo "== fuzz_$t for ${secs}s: $dirs"
	# -timeout: an input that runs 10 s is a hang, which bad input must
	# never cause; -rss_limit_mb likewise for memory.
	"$build/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=4096 -print_final_stats=1 \
		-artifact_prefix="$crashes/" $dict $dirs
done
