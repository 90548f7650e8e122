"""Cached virtual environments for the tests of each verifiers release, never the main environment.

verifiers 0.3.x (classic API) and 0.4.x (``verifiers.v1``) cannot share an environment, so each
has its own venv with verihub (this checkout) installed; pytest runs check files inside it
(``tests/hub/legacy/checks_*.py`` for 0.3.1, ``tests/hub/v1/checks_v1.py`` for 0.4.0).

Layout, under ``~/.cache/verihub-test-venvs`` (``VERIHUB_TEST_VENVS`` overrides the folder):

- ``wheels-<name>-<key>/``: every wheel the requirements need (``pip wheel``, from PyPI, once).
  ``key`` hashes the Python version and the requirements, so it is shared by checkouts.
- ``<name>-<key>-<repo>/``: the venv, installed from that wheel folder with ``--no-index`` (so
  a venv can be made again offline once the wheels are there), plus this checkout and its
  environments as ``pip install --no-deps --no-build-isolation -e`` (offline too). ``repo``
  hashes the checkout's path: two checkouts never re-point each other's editable installs.

``name`` (``vf03``, ``vf04``) and the pinned verifiers release in the key keep the two releases
apart; a lock file per venv serialises test sessions that build or refresh the same one.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import tomllib

__all__ = ["REPO", "VF03", "VF04", "VENVS", "requirements", "run_checks", "venv_for"]

REPO = Path(__file__).resolve().parents[2]
VF03 = "verifiers==0.3.1"
VF04 = "verifiers==0.4.0"
VENVS: dict[str, tuple[str, tuple[str, ...]]] = {
    "vf03": (VF03, ("environments/arith",)),
    "vf04": (VF04, ("environments/arith", "tests/hub/v1/fixtures/guess_env")),
}
"""venv name -> (its verifiers pin, the verihub environments installed from this checkout: their
folders; ``guess_env`` is a multi-turn test fixture)."""


def requirements(name: str) -> list[str]:
    """The venv's verifiers pin, verihub's own dependencies (pyproject.toml) and pytest."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [VENVS[name][0], *project["dependencies"], "pytest==9.0.3", "pytest-asyncio==1.5.0"]


def _hash(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def _run(cmd: Sequence[str], timeout: float) -> None:
    proc = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:5])} failed: {(proc.stderr or proc.stdout)[-400:]}")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def venv_for(name: str, reqs: Sequence[str] | None = None) -> Path:
    """The venv's folder, made when missing and refreshed with this checkout; RuntimeError with
    pip's last lines when that fails (offline with no wheels yet, for example)."""
    reqs = list(reqs if reqs is not None else requirements(name))
    root = Path(os.environ.get("VERIHUB_TEST_VENVS", Path.home() / ".cache" / "verihub-test-venvs"))
    root.mkdir(parents=True, exist_ok=True)
    key = _hash(sys.version.split()[0], *sorted(reqs))
    wheels = root / f"wheels-{name}-{key}"
    venv = root / f"{name}-{key}-{_hash(str(REPO))}"
    python = str(venv / "bin" / "python")
    with _locked(root / f"{venv.name}.lock"):
        if not (venv / ".complete").exists():
            with _locked(root / f"{wheels.name}.lock"):
                if not (wheels / ".complete").exists():
                    pip = [sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check"]
                    _run([*pip, "-w", str(wheels), *reqs], timeout=1800)
                    (wheels / ".complete").write_text("\n".join(reqs))
            _run([sys.executable, "-m", "venv", "--clear", str(venv)], timeout=300)
            offline = ["--no-index", "--find-links", str(wheels), "--disable-pip-version-check"]
            _run([python, "-m", "pip", "install", "-q", *offline, *reqs], timeout=1800)
            (venv / ".complete").write_text("\n".join(reqs))
        editables = [
            arg for path in (REPO, *(REPO / folder for folder in VENVS[name][1])) for arg in ("-e", str(path))
        ]
        pip = [python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
        _run([*pip, *editables], timeout=600)
    return venv


def run_checks(venv: Path, files: Sequence[str], *, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """pytest on ``files`` (relative to the checkout) inside ``venv``, with only this checkout on
    the path and the venv's scripts first on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {
        "PYTHONPATH": str(REPO),
        "VIRTUAL_ENV": str(venv),
        "PATH": os.pathsep.join([str(venv / "bin"), env.get("PATH", "")]),
    }
    # the project's addopts ask for pytest-xdist, which these venvs do not have: run in one process
    cmd = [str(venv / "bin" / "python"), "-m", "pytest", *files, "-q", "-p", "no:cacheprovider"]
    cmd += ["-o", "addopts=-ra --import-mode=importlib"]
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


if __name__ == "__main__":  # build them ahead of the tests: python tests/hub/vf_venvs.py [vf03] [vf04]
    for wanted in sys.argv[1:] or list(VENVS):
        print(venv_for(wanted))
