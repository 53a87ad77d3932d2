#!/bin/sh
# golden_listing.sh FRAGSIM DIR [CASES] - the bytes a change to ref/ must
# keep: every shipped case run with --out (its golden tensors and
# manifest) and --json (its report), timing fields dropped, each file's
# sha256 printed, one line per file, sorted. Two listings from two
# builds diff to nothing when the goldens and reports are unchanged:
#   sh tools/bench/golden_listing.sh old/fragsim /tmp/a > a.txt
#   sh tools/bench/golden_listing.sh build/fragsim /tmp/b > b.txt
#   diff a.txt b.txt && echo identical
# A case's exit status (0 pass, 1 mismatch) is listed too: a mutation
# case is meant to fail, and must keep failing the same way.
set -u
fs=$1 dir=$2 cases=${3:-cases}
rm -rf "$dir" && mkdir -p "$dir" || exit 2
find "$cases" -name '*.yaml' | sort | while read -r c; do
	n=$(echo "$c" | tr '/' '_')
	"$fs" run "$c" --out "$dir/$n.d" --json >"$dir/$n.json" 2>"$dir/$n.err"
	echo "$c rc=$?"
	# seconds_* are the only fields a run may change from build to build
	grep -v '"seconds_' "$dir/$n.json" >"$dir/$n.json.cmp"
	grep -v '"seconds_' "$dir/$n.d/manifest.json" >"$dir/$n.manifest.cmp" 2>/dev/null
	rm -f "$dir/$n.d/manifest.json" "$dir/$n.json"
done
(cd "$dir" && find . -type f ! -name '*.err' | sort | xargs sha256sum)
