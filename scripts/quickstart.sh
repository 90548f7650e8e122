#!/usr/bin/env bash
# The README's quickstart (its first command), from a clone of the committed HEAD, in a new
# virtualenv made from each interpreter given, as a newcomer on that Python would run it.
#   bash scripts/quickstart.sh PYTHON...      e.g. ~/.pyenv/versions/3.10.13/bin/python
#   bash scripts/quickstart.sh --matrix       the oldest and newest Python >= 3.10 found on this
#                                             machine (PATH's python3.X and pyenv's versions)
# Fails when the install or the evaluation fails, or when the run leaves no summary.
set -euo pipefail
cd "$(dirname "$0")/.."

find_interpreters() {  # prints "minor path" for every CPython 3.10+ found, one per minor version
  local cand minor
  {
    for cand in python3.1{0,1,2,3,4,5}; do command -v "$cand" 2>/dev/null || true; done
    ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python 2>/dev/null || true
  } | while read -r cand; do
    minor=$("$cand" -c 'import sys; print(sys.version_info[1] if sys.version_info >= (3, 10) else "")' 2>/dev/null) || continue
    [[ -n "$minor" ]] && "$cand" -c 'import venv, ensurepip' 2>/dev/null && echo "$minor $cand"
  done | sort -n -k1,1 -u
}

quickstart() {
  local base=$1 tmp
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/verihub-quickstart.XXXXXX")
  echo "== quickstart with $base ($("$base" -c 'import sys; print(sys.version.split()[0])')) in $tmp"
  git clone -q --no-local . "$tmp/verihub"
  "$base" -m venv "$tmp/venv"
  (cd "$tmp/verihub" && PYTHON="$tmp/venv/bin/python" bash scripts/install.sh)
  mkdir "$tmp/work"
  # the README's command, as written there
  (cd "$tmp/work" && "$tmp/venv/bin/verihub" eval textops --model local:smollm2 --num-tasks 20 \
    --rollouts 4 --env-arg difficulty=1)
  local summaries
  summaries=$(find "$tmp/work/runs" -name summary.json | wc -l)
  if ((summaries != 1)); then
    echo "quickstart with $base left $summaries run summaries, expected 1" >&2
    return 1
  fi
  rm -rf "$tmp"
}

if [[ "${1:-}" == "--matrix" ]]; then
  mapfile -t found < <(find_interpreters)
  if ((${#found[@]} == 0)); then
    echo "quickstart matrix: no Python >= 3.10 with venv found; nothing to run" >&2
    exit 0
  fi
  picks=("${found[0]#* }")
  ((${#found[@]} > 1)) && picks+=("${found[-1]#* }")
  set -- "${picks[@]}"
fi
(($# > 0)) || { echo "usage: bash scripts/quickstart.sh PYTHON... | --matrix" >&2; exit 2; }
for py in "$@"; do quickstart "$py"; done
echo "quickstart passed on: $*"
