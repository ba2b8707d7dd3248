#!/usr/bin/env bash
# The project's one test command (README, .ci/run): makes .venv if needed, installs the project with its
# test extras, then lints (ruff), type-checks (mypy --strict) and runs the tests (pytest). Extra
# arguments go to pytest, e.g. `bash scripts/test.sh -k manifests` or `bash scripts/test.sh tests/test_pep440.py`.
# `bash scripts/test.sh --quick [ARGS]` is the inner loop: the main tier without the tests marked `slow` (real
# torch wheels, real package installs, executed fixes) and without the XLA tier.
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=0
if [ "${1:-}" = "--quick" ]; then
    QUICK=1
    shift
fi
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
.venv/bin/ruff check neurondoctor scripts tests
.venv/bin/mypy

# pytest exits 5 when a tier selects nothing (`-k manifests` has no XLA test): that tier is not a failure. The
# command fails when a tier fails, and exits 5 only when neither tier selected anything.
# The main tier runs on every core (pytest-xdist, a test file per worker: NEURONDOCTOR_TEST_WORKERS=0 runs it in
# one process). The XLA tier (torch 2.9.0 + torch-xla 2.9.0, cached per machine) is one process that spends much
# of its time fetching and importing: it runs beside the main tier, its output kept in a file and printed after
# the main tier's (NEURONDOCTOR_XLA_AFTER=1 runs it after, as before).
main_marks="not xla"
if [ "$QUICK" = 1 ]; then
    main_marks="not xla and not slow"
fi
xla=0
xla_log=""
xla_pid=""
if [ "$QUICK" = 0 ] && [ "${NEURONDOCTOR_XLA_AFTER:-0}" != 1 ]; then
    xla_log="$(mktemp -t nd-xla-tier.XXXXXX)"
    trap 'rm -f "$xla_log"; [ -n "$xla_pid" ] && kill "$xla_pid" 2>/dev/null || true' EXIT
    .venv/bin/python -m pytest -m xla "$@" >"$xla_log" 2>&1 &
    xla_pid=$!
fi
main=0
.venv/bin/python -m pytest -m "$main_marks" -n "${NEURONDOCTOR_TEST_WORKERS:-auto}" --dist loadfile "$@" \
    || main=$?
if [ "$QUICK" = 1 ]; then
    exit "$main"
fi
if [ -n "$xla_pid" ]; then
    wait "$xla_pid" || xla=$?
    xla_pid=""
    echo "---- XLA tier (ran beside the main tier) ----"
    cat "$xla_log"
else
    if [ "$main" != 0 ] && [ "$main" != 5 ]; then
        exit "$main"
    fi
    .venv/bin/python -m pytest -m xla "$@" || xla=$?
fi
if [ "$main" != 0 ] && [ "$main" != 5 ]; then
    exit "$main"
fi
if [ "$xla" != 0 ] && [ "$xla" != 5 ]; then
    exit "$xla"
fi
if [ "$main" = 5 ] && [ "$xla" = 5 ]; then
    exit 5
fi
exit 0
