#!/bin/sh
# run.sh - run test binaries of one build, each a cmocka group (or a fuzz
# regression replay), then one summary.
# Usage: run.sh BUILD_DIR [TEST...]
#   TEST is a path, or a name found under BUILD_DIR/tests: test_npy,
#   regress_npy (tests/fuzz/). With no TEST: every test_* and
#   fuzz/regress_* binary there. A TEST outside BUILD_DIR is an error:
#   the binaries run BUILD_DIR/fragsim, so mixing builds tests nothing.
# Exit status: 0 all passed, 1 a group failed, 2 bad usage.
if [ $# -lt 1 ]; then
	echo "usage: run.sh BUILD_DIR [TEST...]" >&2
	exit 2
fi
build=${1%/}; shift
if [ ! -d "$build/tests" ] || [ ! -x "$build/fragsim" ]; then
	echo "run.sh: error: $build: no fragsim and tests/ there (make test BUILD=$build)" >&2
	exit 2
fi
if [ $# -eq 0 ]; then
	set -- "$build"/tests/test_* "$build"/tests/fuzz/regress_*
fi
tests=""
for t in "$@"; do
	case $t in
	*.o | *.d | *"*"*) continue ;;	# the globs' leftovers
	*/*) ;;
	regress_*) t=$build/tests/fuzz/$t ;;
	*) t=$build/tests/$t ;;
	esac
	case $t in
	"$build"/*) ;;
	*)
		echo "run.sh: error: $t is not under $build" >&2
		exit 2
		;;
	esac
	if [ ! -x "$t" ]; then
		echo "run.sh: error: $t: no such test binary" >&2
		exit 2
	fi
	tests="$tests $t"
done
failed=""; n=0
for t in $tests; do
	n=$((n + 1))
	"$t" || failed="$failed $(basename "$t")"
done
echo "[==========] $n test group(s) run."
if [ -n "$failed" ]; then
	echo "[  FAILED  ] groups:$failed"
	exit 1
fi
echo "[  PASSED  ] all $n group(s)."
