"""The curriculum as an infinite verifiers 0.4.x (v1) taskset: tests/hub/v1/checks_v1_curriculum.py
run by pytest inside the cached verifiers 0.4.0 venv (tests/hub/vf_venvs.py). Skipped, saying
why, when the venv cannot be built (offline)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.hub.vf_venvs import run_checks, venv_for

pytestmark = [pytest.mark.slow, pytest.mark.vf_venv]


@pytest.fixture(scope="session")
def vf04_venv() -> Path:
    try:
        return venv_for("vf04")
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
        pytest.skip(f"cannot build the verifiers 0.4.0 test venv (PyPI unreachable?): {exc}")


def test_a_curriculum_drives_an_infinite_v1_taskset(vf04_venv: Path) -> None:
    proc = run_checks(vf04_venv, ["tests/hub/v1/checks_v1_curriculum.py"])
    tail = proc.stdout[-3000:] + proc.stderr[-1000:]
    assert proc.returncode == 0, tail
    match = re.search(r"(\d+) passed", proc.stdout)
    assert match and int(match.group(1)) == 2 and "skipped" not in proc.stdout, tail
