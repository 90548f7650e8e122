"""verifiers 0.3.x (classic API) in verihub and verihub under the real 0.3.x ``vf-eval``:
tests/hub/legacy/checks_*.py run by pytest inside a cached venv with verifiers 0.3.1 and this
checkout of verihub (tests/hub/vf_venvs.py), never in the main environment. Skipped, saying why,
when the venv cannot be built (offline before its wheels were cached)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.hub.vf_venvs import run_checks, venv_for

pytestmark = [pytest.mark.vf_venv, pytest.mark.slow]


@pytest.fixture(scope="session")
def vf03_venv() -> Path:
    try:
        return venv_for("vf03")
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
        pytest.skip(f"cannot build the verifiers 0.3.1 test venv (PyPI unreachable?): {exc}")


def test_classic_verifiers_checks_pass_in_their_venv(vf03_venv: Path) -> None:
    proc = run_checks(
        vf03_venv,
        ["tests/hub/legacy/checks_verifiers_adapter.py", "tests/hub/legacy/checks_vf_eval_classic.py"],
    )
    tail = proc.stdout[-3000:] + proc.stderr[-1000:]
    assert proc.returncode == 0, tail
    match = re.search(r"(\d+) passed", proc.stdout)
    assert match and int(match.group(1)) >= 9 and "skipped" not in proc.stdout, tail


def test_the_venv_has_verifiers_0_3_1_not_0_4(vf03_venv: Path) -> None:
    out = subprocess.run(
        [str(vf03_venv / "bin" / "python"), "-c", "import verifiers; print(verifiers.__version__)"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.stdout.strip() == "0.3.1", out.stderr[-500:]
