#!/bin/bash
# completion.sh - the man page and the bash completion against --help,
# through the binary only (tests/test_help.c runs it; make test).
# Usage: completion.sh FRAGSIM
#
# 1. Every command `fragsim --help` lists, and every option its `--help`
#    names, appears in that command's section of the rendered man page
#    and among the options the completion offers for the command (at
#    the command, or after one of the words it offers next: lanemap list).
# 2. man -l renders the page (groff -ww where man is absent; skipped with
#    a message when neither is installed).
# 3. The completion function, driven as bash drives it (COMP_WORDS,
#    COMP_CWORD), completes a command, an option, an option's value and
#    `--isa g<TAB>` to the builtin profiles whose names start with g,
#    written here by hand from profiles/*.yaml.
# Exit status: 0 all hold, 1 a check failed, 2 bad usage.
if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: completion.sh FRAGSIM" >&2
	exit 2
fi
fragsim=$1
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
bad=0
fail() {
	echo "completion.sh: FAIL: $*" >&2
	bad=1
}

"$fragsim" help --man >"$tmp/fragsim.1" || fail "help --man: exit $?"
"$fragsim" help --completion bash >"$tmp/fragsim.bash" || fail "help --completion: exit $?"
# shellcheck source=/dev/null
. "$tmp/fragsim.bash" || fail "the completion script does not load"

# The man page as text: man, else groff, else the roff with its
# escapes for '-' undone (and a note that it was not rendered).
if command -v man >/dev/null 2>&1; then
	MANWIDTH=200 man -l "$tmp/fragsim.1" 2>"$tmp/man.err" | sed 's/.\x08//g' >"$tmp/man.txt"
	[ -s "$tmp/man.txt" ] || fail "man -l rendered nothing: $(cat "$tmp/man.err")"
	[ -s "$tmp/man.err" ] && fail "man -l: $(cat "$tmp/man.err")"
elif command -v groff >/dev/null 2>&1; then
	groff -man -Tascii -rLL=200n "$tmp/fragsim.1" 2>"$tmp/man.err" | sed 's/.\x08//g' >"$tmp/man.txt"
	[ -s "$tmp/man.err" ] && fail "groff: $(cat "$tmp/man.err")"
else
	echo "completion.sh: skipped: neither man nor groff installed, the man page is read as roff"
	sed 's/\\-/-/g; s/\\f[BIR]//g' "$tmp/fragsim.1" >"$tmp/man.txt"
fi
if command -v groff >/dev/null 2>&1; then
	groff -man -ww -z "$tmp/fragsim.1" 2>"$tmp/groff.err"
	[ -s "$tmp/groff.err" ] && fail "groff -ww warns: $(cat "$tmp/groff.err")"
fi

# complete WORD... : what the completion offers for the last word.
complete_words() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	_fragsim
	printf '%s\n' "${COMPREPLY[@]}" | sort
}

commands=$("$fragsim" --help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p')
[ -n "$commands" ] || fail "fragsim --help lists no command"
for c in $commands; do
	help=$("$fragsim" "$c" --help) || fail "$c --help: exit $?"
	opts=$(echo "$help" | grep -o -- '--[a-z][a-z0-9-]*' | grep -vx -- --help | sort -u)
	# the command's section: from its heading to the next heading
	section=$(sed -n "/^   fragsim $c\$/,/^   fragsim [a-z]*\$\|^EXIT STATUS/p" "$tmp/man.txt")
	[ -n "$section" ] || fail "man page: no section 'fragsim $c'"
	offered=$(complete_words fragsim "$c" --)
	for sub in $(cd "$tmp" && complete_words fragsim "$c" ""); do
		offered="$offered $(complete_words fragsim "$c" "$sub" --)"
	done
	for o in $opts; do
		echo "$section" | grep -qE -- "^ +$o( |$)" || fail "man page, fragsim $c: no $o"
		echo "$offered" | grep -qx -- "$o" ||
			echo " $offered " | tr ' ' '\n' | grep -qx -- "$o" ||
			fail "completion, fragsim $c: $o not offered (offered: $(echo $offered))"
	done
done

# expect WANT WORD...: the completion of WORD... is exactly WANT.
expect() {
	want=$1
	shift
	got=$(cd "$tmp/empty" && complete_words "$@" | tr '\n' ' ' | sed 's/ $//')
	[ "$got" = "$want" ] || fail "complete '$*': got '$got', want '$want'"
}
mkdir "$tmp/empty"
expect "lanemap" fragsim lan
expect "check" fragsim ch
expect "--exec" fragsim run x.yaml --ex
expect "--emulate-only --exec" fragsim run --e
expect "scalar" fragsim run x.yaml --exec sc
expect "list loads" fragsim lanemap l
expect "--names" fragsim lanemap list --n
expect "gfx936 gfx936-article gfx936-quad" fragsim lanemap --isa g
expect "gfx936 gfx936-article gfx936-quad" fragsim probe plan --isa g
expect "sm80-mma-m16n8k16-s8 sm80-mma-m16n8k32-s8" fragsim lanemap diff gfx936 s
expect "json text" fragsim lanemap check --format ""
expect "plan" fragsim probe pl
expect "mutate" fragsim help mu
# a profile is a file too: --isa offers files after the names
touch "$tmp/empty/gx.yaml"
expect "gfx936 gfx936-article gfx936-quad gx.yaml" fragsim lanemap --isa g

[ $bad -eq 0 ] && echo "completion.sh: $(echo $commands | wc -w) commands: every option in man page and completion; completion driven"
exit $bad
