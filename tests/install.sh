#!/bin/sh
# install.sh - the installed library works as docs/library.md says:
# make install into a scratch DESTDIR, examples/hello.c compiled against
# the installed copy alone (pkg-config --static fragsim) and run from
# elsewhere; fragsim.h compiles as strict C99 and links from C++ (its
# extern "C"); make uninstall removes every file it installed.
# Usage: install.sh BUILD_DIR  (make test; CC and SAN as make has them,
# so an ASan build links its own runtime). Exit 1 on a failed check.
set -u
cd "$(dirname "$0")/.."
b=${1:?usage: install.sh BUILD_DIR}
cc=${CC:-cc}
san=${SAN:-}
# The C++ compiler of the same family: g++ cannot link clang's OpenMP.
case ${CXX:-} in
"") case $cc in *clang*) cxx=clang++ ;; *) cxx=c++ ;; esac ;;
*) cxx=$CXX ;;
esac
# Our make runs of its own: the caller's -j and -n are not theirs.
unset MAKEFLAGS MFLAGS MAKELEVEL
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fragsim-install-XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
fails=0; n=0

fail() {
	echo "install.sh: FAIL $*"
	fails=$((fails + 1))
}

dest=$tmp/dest
n=$((n + 1))
if ! make -s install BUILD="$b" DESTDIR="$dest" PREFIX=/usr >"$tmp/log" 2>&1; then
	fail "make install:"; head -5 "$tmp/log"
fi
for f in bin/fragsim lib/libfragsim.a include/fragsim.h \
	lib/pkgconfig/fragsim.pc share/doc/fragsim/README.md \
	share/doc/fragsim/docs/library.md share/doc/fragsim/examples/hello.c \
	share/man/man1/fragsim.1 share/bash-completion/completions/fragsim; do
	[ -f "$dest/usr/$f" ] || fail "make install did not install /usr/$f"
done
# The installed man page and completion are the binary's own (fragsim help).
"$b/fragsim" help --man | cmp -s - "$dest/usr/share/man/man1/fragsim.1" ||
	fail "the installed man page is not fragsim help --man's"
"$b/fragsim" help --completion bash |
	cmp -s - "$dest/usr/share/bash-completion/completions/fragsim" ||
	fail "the installed completion is not fragsim help --completion bash's"

# pkg-config finds the copy under DESTDIR as a sysroot: the .pc says
# prefix=/usr, as it will once packaged.
pc() {
	PKG_CONFIG_PATH=$dest/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest \
		${PKG_CONFIG:-pkg-config} "$@" fragsim
}
n=$((n + 1))
v=$(pc --modversion 2>&1)
[ "$v" = "$(cat VERSION)" ] || fail "pkg-config --modversion: '$v', VERSION: '$(cat VERSION)'"
flags=$(pc --cflags --libs --static) || fail "pkg-config --static fragsim failed"

# hello.c against the installed header and archive only, run elsewhere
# (the builtin profiles are inside the archive).
n=$((n + 1))
if $cc $san -std=c11 -Wall -Wextra -Werror -o "$tmp/hello" examples/hello.c \
	$flags >"$tmp/cc" 2>&1; then
	(cd "$tmp" && ./hello) >"$tmp/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "hello exited $rc: $(cat "$tmp/out")"
	grep -qx "fragsim $(cat VERSION), gfx936: wave64 16x16x32" "$tmp/out" ||
		fail "hello did not name the version and gfx936's shape: $(cat "$tmp/out")"
	grep -qx 'hello: 0 of [1-9][0-9]* elements differ; out cosine vs float 0\.9.*' \
		"$tmp/out" || fail "hello did not report a clean check: $(cat "$tmp/out")"
else
	fail "hello.c does not build against the installed copy:"; head -5 "$tmp/cc"
fi

# The header alone, as strict C99; from C++, compiled and linked.
n=$((n + 1))
echo '#include <fragsim.h>' >"$tmp/h.c"
if ! $cc -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only \
	-I"$dest/usr/include" "$tmp/h.c" >"$tmp/cc" 2>&1; then
	fail "fragsim.h is not self-contained C99:"; head -5 "$tmp/cc"
fi
if command -v "$cxx" >/dev/null 2>&1; then
	n=$((n + 1))
	printf '%s\n' '#include <fragsim.h>' '#include <cstdio>' \
		'int main() { std::puts(fragsim_version()); return 0; }' >"$tmp/x.cc"
	if $cxx $san -Wall -Wextra -Werror -o "$tmp/x" "$tmp/x.cc" $flags \
		>"$tmp/cc" 2>&1; then
		[ "$("$tmp/x")" = "$(cat VERSION)" ] || fail "the C++ program did not print VERSION"
	else
		fail "fragsim.h does not link from C++:"; head -5 "$tmp/cc"
	fi
fi

# Uninstall leaves no file behind (directories install created may stay).
n=$((n + 1))
make -s uninstall BUILD="$b" DESTDIR="$dest" PREFIX=/usr >"$tmp/log" 2>&1 ||
	fail "make uninstall: $(head -3 "$tmp/log")"
left=$(find "$dest" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"

if [ $fails -ne 0 ]; then
	echo "install.sh: $fails failure(s) in $n checks"
	exit 1
fi
echo "install.sh: $n checks of make install passed"
