#!/bin/sh
# deps.sh - make sure the build dependencies are present (make run/test).
# As root on Debian it installs what is missing; otherwise it says, in one
# line, what to install, and fails.
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
