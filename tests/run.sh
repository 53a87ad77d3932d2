#!/bin/sh
# run.sh - run every test binary, each a cmocka group, then one summary.
# Usage: run.sh BUILD_DIR TEST_BIN...   Exit status: number of failed groups.
build=$1; shift
failed=""; n=0
for t in "$@"; do
	n=$((n + 1))
	"$t" || failed="$failed $(basename "$t")"
done
echo "[==========] $n test group(s) run."
if [ -n "$failed" ]; then
	echo "[  FAILED  ] groups:$failed"
	exit 1
fi
echo "[  PASSED  ] all $n group(s)."
