#!/usr/bin/env bash
# The core test suite, the README's test command: installs the dev tools into .venv (made by quickstart.sh,
# or here) and runs every test not marked slow, in a few minutes on 2 cores. Extra arguments go to pytest.
# CI (.ci/run) runs this, then the slow tests, the installed wheel's tests and the RLlib and AgileRL venvs.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q "torch==2.13.0"   # the CPU build where the index serves it (README, Install)
python -m pip install -q -e ".[train,dev]"
# the example plugin game (examples/crazy_eights): tests/test_conformance.py runs it through every feature
python -m pip install -q --no-deps -e examples/crazy_eights
python -m pytest -q -n 2 -m "not slow" tests examples/crazy_eights/tests "$@"
