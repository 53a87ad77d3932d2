#!/bin/sh
# build.sh - the Makefile's hygiene, checked without touching a file:
#   - the build is up to date after make test (make -q), so nothing is
#     rebuilt for no reason (an intermediate object deleted, say);
#   - every command that compiles a .c (generated sources, fuzz and
#     bench objects included) tracks its headers (-MMD -MP);
#   - a changed header, VERSION, profile or embed.sh rebuilds what uses
#     it and not what does not (make -n -W FILE: "what if FILE changed");
#   - .PHONY names exactly the targets that are no file;
#   - tests/run.sh honours its BUILD_DIR argument;
#   - .gitignore covers what builds and tests leave; none of it committed.
# Usage: build.sh BUILD_DIR   (make check-build; BUILD_DIR built by make
# test). Exit 1 on a failed check, with what make would have done.
set -u
cd "$(dirname "$0")/.."
b=${1:?usage: build.sh BUILD_DIR}
b=${b%/}
# The checks run make themselves; the caller's flags (-j's jobserver,
# -n) are not theirs.
unset MAKEFLAGS MFLAGS MAKELEVEL
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fragsim-build-XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
fails=0; n=0

fail() {
	echo "build.sh: FAIL $*"
	fails=$((fails + 1))
}

bins="$b/fragsim"
for t in tests/test_*.c; do
	t=${t#tests/}
	bins="$bins $b/tests/${t%.c}"
done
regress=$(ls "$b"/tests/fuzz/regress_* 2>/dev/null | grep -v '\.[od]$')
bins="$bins $regress"

# 1. Up to date: a second make has nothing to do.
n=$((n + 1))
if ! make -q BUILD="$b" $bins 2>/dev/null; then
	fail "make -q: $b is not up to date after its build; make -n says:"
	make -n BUILD="$b" $bins | grep -e ' -o ' | head -5
fi

# 2. Every compile tracks dependencies: make -n -B prints every command;
# continuation lines joined, each compile of a .c needs -MMD and -MP.
n=$((n + 1))
make -n -B BUILD="$tmp/b" $(echo "$bins" | sed "s|$b/|$tmp/b/|g") \
	"$tmp/b/bench/peak" "$tmp/b/fuzz/fuzz_npy" >"$tmp/all" 2>&1
sed -e :a -e '/\\$/N; s/\\\n//; ta' "$tmp/all" |
	grep -e '-std=c11' | grep -E ' [^ ]+\.c( |$)' >"$tmp/cc"
if [ "$(wc -l <"$tmp/cc")" -lt 10 ]; then
	fail "make -n -B printed too few compiles:"; head -5 "$tmp/all"
fi
if grep -v -e '-MMD -MP' "$tmp/cc" >"$tmp/nodeps"; then
	fail "compiles without -MMD -MP:"
	sed 's/.* \([^ ]*\.c\)\( .*\|$\)/  \1/' "$tmp/nodeps"
fi

# 3. what_if FILE TARGET WANT NOT: if FILE changed, make rebuilds each
# object of WANT (space-separated, under BUILD_DIR) and none of NOT. The
# .d files name a header as its includer spelled it (lib/../sim/fs.h),
# and -W matches names, not files: every spelling is given.
what_if() {
	n=$((n + 1))
	set -- "$1" "$2" "$3" "$4" -W "$1"
	for d in sim ref lib cli tools tests; do set -- "$@" -W "$d/../$1"; done
	case $1 in sim/*/*)
		for d in sim/*/; do set -- "$@" -W "$d../${1#sim/}"; done ;;
	esac
	set -- "$@" -W "tests/fuzz/../../$1"
	file=$1; target=$2; want=$3; not=$4; shift 4
	if [ ! -e "$file" ]; then
		fail "$file is gone: build.sh names it, so name another"
		return
	fi
	make -n "$@" BUILD="$b" "$b/$target" >"$tmp/w" 2>&1
	for o in $want; do
		grep -q -e "\(-o \|> \)$b/$o\(\.tmp\)\?\( \|$\)" "$tmp/w" ||
			fail "a change of $file does not rebuild $b/$o"
	done
	for o in $not; do
		! grep -q -e "\(-o \|> \)$b/$o\(\.tmp\)\?\( \|$\)" "$tmp/w" ||
			fail "a change of $file rebuilds $b/$o, which does not use it"
	done
}
what_if sim/common/fs.h fragsim "sim/common/fs.o lib/npy.o cli/main.o fragsim" ""
what_if sim/common/fs.h tests/test_npy "tests/test_npy.o tests/test_npy" ""
what_if lib/npy.h tests/test_npy "lib/npy.o tests/test_npy.o" \
	"sim/lanemap/mmac.o lib/sha256.o"
what_if lib/npy.h tests/fuzz/regress_npy "tests/fuzz/fuzz_npy.o" \
	"tests/fuzz/regression_npy.o"
what_if tests/fuzz/fuzz.h tests/fuzz/regress_npy \
	"tests/fuzz/fuzz_npy.o tests/fuzz/regression_npy.o" ""
what_if tests/testutil.h tests/test_cli "tests/test_cli.o" "cli/cli.o"
what_if sim/lanemap/mmac.h fragsim "sim/lanemap/mmac.o" "lib/sha256.o lib/readfile.o"
what_if VERSION fragsim "cli/main.o lib/golden.o cli/lmprint.o fragsim" \
	"sim/lanemap/mmac.o lib/npy.o"
what_if tools/embed.sh fragsim "gen/builtin_profiles.c gen/builtin_profiles.o" ""
what_if profiles/gfx936.yaml fragsim "gen/builtin_profiles.o" "lib/profile.o"
what_if lib/profile.h fragsim "gen/builtin_profiles.o lib/profile.o" \
	"sim/lanemap/mmac.o"

# 4. .PHONY is exact: each name has a rule, and each rule whose name is
# a plain word (no file under the build) is listed.
n=$((n + 1))
phony=$(sed -n 's/^\.PHONY://p' Makefile | tr ' ' '\n' | sort -u | grep .)
words=$(grep -E '^[a-z][a-z-]*:' Makefile | sed 's/:.*//' | sort -u)
for p in $phony; do
	echo "$words" | grep -qx "$p" || fail ".PHONY: $p has no rule"
done
for w in $words; do
	echo "$phony" | grep -qx "$w" || fail "$w: a rule for no file, not in .PHONY"
done

# 5. tests/run.sh takes its tests from BUILD_DIR and refuses others.
n=$((n + 1))
out=$(sh tests/run.sh "$b" test_sha256 2>&1) ||
	fail "run.sh $b test_sha256: $out"
echo "$out" | grep -q '1 test group(s) run' ||
	fail "run.sh $b test_sha256 ran other than one group: $out"
sh tests/run.sh "$tmp/none" >/dev/null 2>&1
[ $? -eq 2 ] || fail "run.sh with a BUILD_DIR that has no build: not exit 2"
mkdir -p "$tmp/other/tests"
sh tests/run.sh "$tmp/other" "$b/tests/test_sha256" >/dev/null 2>&1
[ $? -eq 2 ] || fail "run.sh ran a test from another BUILD_DIR"

# 6. What a build, a test or Python leaves is ignored, and none of it is
# committed (outside a git checkout, a release tarball: skipped).
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	n=$((n + 1))
	for p in tools/__pycache__/x.cpython-311.pyc tests/x.pyc \
		tests/data/k.npy.tmp.4242 build/fragsim; do
		git check-ignore -q "$p" || fail ".gitignore does not cover $p"
	done
	git check-ignore -q lib/x.c && fail ".gitignore covers sources"
	if git ls-files | grep -E '(\.pyc|__pycache__/|\.tmp\.)' >"$tmp/junk"; then
		fail "committed: $(cat "$tmp/junk")"
	fi
fi

if [ $fails -ne 0 ]; then
	echo "build.sh: $fails failure(s) in $n checks"
	exit 1
fi
echo "build.sh: $n checks of the build's hygiene passed"
