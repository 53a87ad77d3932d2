#!/bin/sh
# compilers.sh A B - the shipped suite through two builds of fragsim
# (.ci/run: gcc's build/fragsim and clang's build-clang/fragsim). Every
# golden byte and every number of every --json report must be the same:
# "same case, same bytes" holds across compilers too (docs/design.md,
# Determinism). Times are left out of the reports; the mutation cases,
# which exit 1 by design, are compared all the same.
set -eu
a=$1
b=$2
tmp=$(mktemp -d /tmp/fragsim-compilers-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/a" "$tmp/b"
n=0
for f in $(find cases -name '*.yaml' | sort); do
	name=$(echo "$f" | tr / _)
	for x in a b; do
		if [ $x = a ]; then bin=$a; else bin=$b; fi
		"$bin" run "$f" --emulate-only --out "$tmp/$x/$name" >/dev/null 2>&1 || true
		"$bin" run "$f" --json 2>/dev/null | grep -v '"seconds_' \
			>"$tmp/$x/$name.json" || true
	done
	n=$((n + 1))
done
if ! diff -r "$tmp/a" "$tmp/b" >"$tmp/diff"; then
	head -20 "$tmp/diff"
	echo "compilers.sh: $a and $b give different bytes"
	exit 1
fi
echo "compilers.sh: $n cases, goldens and reports the same from $a and $b"
