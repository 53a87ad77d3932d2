#!/bin/sh
# layers.sh - tools/check_layers.py's must-fail cases: each plants one
# violation in a scratch copy of sim/*/, ref/, lib/, cli/ and include/ and
# wants exit 1 and the line `file:line: rule: ...`; a clean copy must
# pass, and what only looks like a violation (a comment, snprintf) must
# not be flagged.
# Usage: layers.sh   (make check-layers runs it; exit 1 on a failed case)
set -u
cd "$(dirname "$0")/.."
# the pyenv shim first on PATH costs a second a run
if [ -x /usr/bin/python3 ]; then py=/usr/bin/python3; else py=${PYTHON:-python3}; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fragsim-layers-XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
fails=0; n=0

fresh() {
	rm -rf "$tmp/t"
	for d in sim/common sim/lanemap sim/attn ref lib cli include; do
		mkdir -p "$tmp/t/$d" && cp $d/*.[ch] "$tmp/t/$d/" || return 1
	done
}

# plant FILE TEXT RULE [K]: append TEXT to FILE, want RULE at its line
# K (0: its first line).
plant() {
	n=$((n + 1))
	fresh
	line=1
	if [ -f "$tmp/t/$1" ]; then line=$(($(wc -l <"$tmp/t/$1") + 1)); fi
	line=$((line + ${4:-0}))
	printf '%s\n' "$2" >>"$tmp/t/$1"
	$py tools/check_layers.py "$tmp/t" >"$tmp/out" 2>&1
	st=$?
	if [ $st -ne 1 ] || ! grep -q "^$1:$line: $3: " "$tmp/out"; then
		echo "layers.sh: FAIL $3 in $1 not caught (exit $st):"
		cat "$tmp/out"
		fails=$((fails + 1))
	fi
}

# clean FILE TEXT: append TEXT to FILE, want exit 0.
clean() {
	n=$((n + 1))
	fresh
	printf '%s\n' "$2" >>"$tmp/t/$1"
	if ! $py tools/check_layers.py "$tmp/t" >"$tmp/out" 2>&1; then
		echo "layers.sh: FAIL flagged what is allowed in $1:"
		cat "$tmp/out"
		fails=$((fails + 1))
	fi
}

fn='void planted(void)
{'
clean sim/lanemap/mmac.c '/* a comment may say printf("x") and stdout */'
clean sim/lanemap/mmac.c "$fn
	char b[8];
	snprintf(b, sizeof(b), \"%d\", 1);
}"
clean cli/cmd_show.c "$fn
	printf(\"the CLI prints\\n\");
}"
plant sim/lanemap/mmac.c '#include "../ref/ref.h"' sim-includes-outside
plant sim/common/fs.h '#include "../lib/npy.h"' sim-includes-outside
plant sim/lanemap/gf2.c '#include "../attn/kernel.h"' lanemap-includes-attn
plant sim/common/gen.c '#include "../lanemap/lanemap.h"' common-includes-subsystem
plant ref/dot.c '#include "../lib/json.h"' ref-includes-lib-or-cli
plant ref/ref.c '#include "../sim/lanemap/lanemap.h"' ref-oracle-includes-sim
plant ref/compare.c '#include "../sim/attn/tile_fast.h"' ref-compare-includes-sim
# a new file of the oracle is held to the oracle's list
plant ref/new.c '#include "../sim/lanemap/lanemap.h"' ref-oracle-includes-sim
plant lib/npy.c '#include "cli.h"' library-includes-cli
plant lib/dump.c '#include "../cli/cmds.h"' library-includes-cli
plant sim/lanemap/probe.c '#include "../cli/report.h"' sim-includes-outside
plant lib/golden.c '#include "lmprint.h"' library-includes-cli
plant include/fragsim.h '#include "../sim/fs.h"' public-header-includes-project
plant include/fragsim.h '#define FRAGSIM_SAY(x) puts(x)' library-prints
clean include/fragsim.h '#include <stdio.h>'
plant sim/attn/quant.c "$fn
	fprintf(stderr, \"x\");
}" pure-does-io 2
plant ref/ref.c "$fn
	fwrite(\"x\", 1, 1, NULL);
}" pure-does-io 2
plant lib/npy.c "$fn
	puts(\"x\");
}" library-prints 2
# caseprint.c is excused; the loader next to it is not.
plant lib/casefile.c "$fn
	fputs(\"x\", stderr);
}" library-prints 2

if [ $fails -ne 0 ]; then
	echo "layers.sh: $fails of $n cases failed"
	exit 1
fi
echo "layers.sh: $n cases, the checker catches every planted violation"
