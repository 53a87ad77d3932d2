#!/bin/sh
# run.sh FRAGSIM - the Python tests (tests/python/) under the Python that
# has numpy: pytest when it is installed, else test_golden.py's own
# runner (same tests, same skips). numpy is required (deps.sh installs
# python3-numpy); torch is optional (its test says skipped).
set -u
fs=$1
py=${NUMPY_PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import numpy' 2>/dev/null; then
	echo "tests/python: error: $py has no numpy (apt-get install python3-numpy)" >&2
	exit 1
fi
export FRAGSIM="$fs"
if "$py" -c 'import pytest' 2>/dev/null; then
	exec "$py" -m pytest -q -rs -p no:cacheprovider "$(dirname "$0")"
fi
exec "$py" "$(dirname "$0")/test_golden.py"
