#!/usr/bin/env bash
# The project's one test command (README, .ci/run): makes .venv if needed, installs the project with its
# test extras, then lints (ruff), type-checks (mypy --strict) and runs the tests (pytest). Extra
# arguments go to pytest, e.g. `bash scripts/test.sh -k manifests`.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
.venv/bin/ruff check neurondoctor scripts tests
.venv/bin/mypy
# The main tier runs on every core (pytest-xdist, a test file per worker: NEURONDOCTOR_TEST_WORKERS=0 runs it in
# one process). The XLA tier (torch 2.9.0 + torch-xla 2.9.0, cached per machine) runs last, in one process, after
# everything else passed.
.venv/bin/python -m pytest -m "not xla" -n "${NEURONDOCTOR_TEST_WORKERS:-auto}" --dist loadfile "$@"
exec .venv/bin/python -m pytest -m xla "$@"
