#!/usr/bin/env bash
# The full test command (CI runs it through .ci/run): installs what the tests need (idempotent),
# lints (ruff, ruff format, mypy strict, the import graph), then runs every test, markers included,
# then the README's quickstart in fresh virtualenvs on the oldest and newest Python found.
#   bash scripts/test.sh [PYTEST ARGS]   in the current Python ($PYTHON, else python3)
#   bash scripts/test.sh --fresh         the same from a clone of the committed HEAD, in a new
#                                        virtualenv made from a base interpreter ($FRESH_PYTHON,
#                                        else /usr/bin/python3, else pyenv's)
# The fast part (no sandbox, PostgreSQL, browser, model, verifiers venv or slow test) runs on
# $TEST_WORKERS pytest-xdist workers (default 2); the marked part runs serially after it.
# While working, plain `pytest` runs the fast part alone (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
HEAVY="sandbox or postgres or browser or model or vf_venv or slow"

fresh() {
  # a base interpreter never used for the project: $FRESH_PYTHON, else the distribution's
  # (with venv and ensurepip), else pyenv's current one
  local base="${FRESH_PYTHON:-}"
  if [[ -z "$base" ]] && /usr/bin/python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    base=/usr/bin/python3
  fi
  if [[ -z "$base" ]] && command -v pyenv >/dev/null 2>&1; then
    base=$(pyenv which python3 2>/dev/null || true)
  fi
  [[ -n "$base" && -x "$base" ]] || { echo "no base interpreter: set FRESH_PYTHON=/path/to/python3" >&2; exit 1; }
  local tmp
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/verihub-fresh.XXXXXX")
  echo "fresh run in $tmp (kept for inspection; remove it when done)"
  echo "base interpreter: $base ($("$base" -c 'import sys; print(sys.version.split()[0])'))"
  echo "its packages (python -m pip list):"
  "$base" -m pip list --disable-pip-version-check 2>&1 | sed 's/^/  /' || echo "  (no pip in the base)"
  git clone -q --no-local . "$tmp/verihub"
  echo "cloned $(git rev-parse --short HEAD) (committed HEAD; uncommitted changes are not in the run)"
  "$base" -m venv "$tmp/venv"
  cd "$tmp/verihub"
  # the verifiers venvs of the tests are cached per checkout path: keep this run's apart too
  export VERIHUB_TEST_VENVS="${VERIHUB_TEST_VENVS:-$tmp/test-venvs}"
  PYTHON="$tmp/venv/bin/python" exec bash scripts/test.sh "$@"
}

if [[ "${1:-}" == "--fresh" ]]; then
  shift
  fresh "$@"
fi

bash scripts/install.sh --tests

echo "== lint: ruff check, ruff format --check, mypy (strict), import graph"
$PY -m ruff check .
$PY -m ruff format --check .
$PY -m mypy
$PY scripts/import_graph.py

run_pytest() {  # exit 5 (nothing collected) is a failure too, like any other non-zero status
  local rc=0
  $PY -m pytest "$@" || rc=$?
  if ((rc == 5)); then echo "pytest collected no tests: $*" >&2; fi
  return "$rc"
}

echo "== fast tests (not: $HEAVY), ${TEST_WORKERS:-2} workers"
run_pytest tests environments -q -m "not ($HEAVY)" -n "${TEST_WORKERS:-2}" --durations=10 "$@"
echo "== marked tests ($HEAVY), serially"
run_pytest tests environments -q -m "$HEAVY" -n 0 --durations=15 "$@"
if [[ "${QUICKSTART:-1}" != 0 ]]; then  # QUICKSTART=0 skips it (e.g. while iterating on tests)
  echo "== the README's quickstart on the oldest and newest Python found (scripts/quickstart.sh --matrix)"
  bash scripts/quickstart.sh --matrix
fi
