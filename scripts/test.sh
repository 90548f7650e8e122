#!/usr/bin/env bash
# The test command: installs what the tests need (idempotent), then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --tests
exec ${PYTHON:-python3} -m pytest tests environments -q --durations=15 "$@"
