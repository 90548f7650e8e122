"""verifiers 0.4.x (v1) in verihub: tests/hub/v1/checks_v1.py run by pytest inside a cached venv
with verifiers 0.4.0 and this checkout of verihub (tests/hub/v1/venv.py), never in the main
environment (which holds verifiers 0.3.x). Skipped, saying why, when the venv cannot be built
(offline)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.hub.v1.venv import REPO, requirements, venv_for

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def vf04_venv() -> Path:
    try:
        return venv_for(requirements())
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
        pytest.skip(f"cannot build the verifiers 0.4.0 test venv (PyPI unreachable?): {exc}")


def test_v1_tasksets_run_in_verihub(vf04_venv: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run(
        [
            str(vf04_venv / "bin" / "python"),
            "-m",
            "pytest",
            "tests/hub/v1/checks_v1.py",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    tail = proc.stdout[-3000:] + proc.stderr[-1000:]
    assert proc.returncode == 0, tail
    match = re.search(r"(\d+) passed", proc.stdout)
    assert match and int(match.group(1)) >= 9 and "skipped" not in proc.stdout, tail
