#!/bin/sh
# deps.sh - make sure the build dependencies are present (make run/test).
# As root on Debian it installs what is missing; otherwise it says, in one
# line, what to install, and fails.
#   deps.sh          what make run and make test need
#   deps.sh bench    that, and what make bench's numpy baseline needs
set -u
pkgs=""
have_pc() { pkg-config --exists "$1" 2>/dev/null; }
command -v pkg-config >/dev/null 2>&1 || pkgs="$pkgs pkg-config"
command -v cc >/dev/null 2>&1 || pkgs="$pkgs gcc"
command -v make >/dev/null 2>&1 || pkgs="$pkgs make"
if command -v pkg-config >/dev/null 2>&1; then
	have_pc yaml-0.1 || pkgs="$pkgs libyaml-dev"
	have_pc cmocka || pkgs="$pkgs libcmocka-dev"
else
	pkgs="$pkgs libyaml-dev libcmocka-dev"
fi
# numpy: the Python golden loader's tests (tests/python/) load goldens with it.
/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1 || pkgs="$pkgs python3-numpy"
# make bench: numpy on Debian links the reference BLAS (libblas3) unless an
# optimised one is installed, and a baseline 10-20x too slow makes every
# "x numpy" figure meaningless. OpenBLAS registers itself as libblas.so.3.
if [ "${1:-}" = bench ] && command -v dpkg-query >/dev/null 2>&1 &&
   ! dpkg-query -W -f='${Status}' libopenblas0-pthread 2>/dev/null | grep -q 'ok installed'; then
	pkgs="$pkgs libopenblas0-pthread"
fi
[ -z "$pkgs" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "fragsim: installing$pkgs" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq $pkgs >/dev/null || {
		echo "fragsim: error: apt-get install$pkgs failed" >&2; exit 1; }
	exit 0
fi
echo "fragsim: error: missing$pkgs; install with: sudo apt-get install$pkgs" >&2
exit 1
