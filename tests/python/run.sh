#!/bin/sh
# run.sh FRAGSIM - the Python tests (tests/python/test_*.py) under the
# Python that has numpy: pytest when it is installed, else each file's
# own runner (same tests, same skips). numpy is required (deps.sh
# installs python3-numpy); torch is optional (its test says skipped).
set -u
fs=$1
py=${NUMPY_PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import numpy' 2>/dev/null; then
	echo "tests/python: error: $py has no numpy (apt-get install python3-numpy)" >&2
	exit 1
fi
export FRAGSIM="$fs"
dir=$(dirname "$0")
if "$py" -c 'import pytest' 2>/dev/null; then
	exec "$py" -m pytest -q -rs -p no:cacheprovider "$dir"
fi
rc=0
for t in "$dir"/test_*.py; do
	"$py" "$t" || rc=1
done
exit $rc
