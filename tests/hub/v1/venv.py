"""A cached virtual environment with verifiers 0.4.x and verihub (from this checkout) for the v1
tests, which must not run in the main environment (it holds verifiers 0.3.x).

The venv lives in ``~/.cache/verihub-test-venvs/vf04-<hash>`` (``VERIHUB_TEST_VENVS`` overrides
the folder), keyed by a hash of the requirements and the Python version, so it is built once
(minutes, from PyPI) and reused. verihub is installed into it with ``pip install --no-deps -e``
from the checkout under test (with the ``arith`` environment), so its entry points
(``verifiers-v1``, ``arith``) are this checkout's.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import tomllib

__all__ = ["REPO", "VF04", "requirements", "venv_for"]

REPO = Path(__file__).resolve().parents[3]
VF04 = "verifiers==0.4.0"
ENVIRONMENTS = ("arith",)  # verihub environments installed (editable, from this checkout) in the venv


def requirements() -> list[str]:
    """verifiers 0.4.0, verihub's own dependencies (from pyproject.toml) and pytest, which runs
    the v1 tests inside the venv."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [VF04, *project["dependencies"], "pytest==9.0.3", "pytest-asyncio==1.5.0"]


def venv_for(reqs: list[str]) -> Path:
    """The venv's folder, created and filled when missing; raises RuntimeError with pip's last
    lines when that fails (offline, for example)."""
    root = Path(os.environ.get("VERIHUB_TEST_VENVS", Path.home() / ".cache" / "verihub-test-venvs"))
    key = hashlib.sha256("\n".join([sys.version.split()[0], *sorted(reqs)]).encode()).hexdigest()[:12]
    venv = root / f"vf04-{key}"
    python = venv / "bin" / "python"
    if not (venv / ".complete").exists():
        root.mkdir(parents=True, exist_ok=True)
        steps = [
            [sys.executable, "-m", "venv", "--clear", str(venv)],
            [str(python), "-m", "pip", "install", "-q", *reqs],
        ]
        for cmd in steps:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
            if proc.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd[:4])} failed: {(proc.stderr or proc.stdout)[-400:]}")
        (venv / ".complete").write_text("\n".join(reqs))
    editables = [
        arg
        for path in (REPO, *(REPO / "environments" / e for e in ENVIRONMENTS))
        for arg in ("-e", str(path))
    ]
    proc = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", *editables],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"pip install -e {REPO} failed: {(proc.stderr or proc.stdout)[-400:]}")
    return venv


if __name__ == "__main__":  # build it ahead of the tests: python tests/hub/v1/venv.py
    print(venv_for(requirements()))
