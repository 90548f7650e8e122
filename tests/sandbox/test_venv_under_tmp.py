"""A virtualenv under /tmp (which the sandbox replaces with its own) still runs the sandbox.

The virtualenv sees the running interpreter's packages (``--system-site-packages``), and a
``.pth`` file in it adds a folder, also under /tmp, holding the only copy of the package's build
backend. The sandboxed build and the check must find it there: the sandbox binds the
interpreter's site-packages and the folders their ``.pth`` files add, wherever they are.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path

import pytest

from hub.sandbox import unavailable_reason
from tests.venvs import child_venv

pytestmark = [
    pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason())),
    pytest.mark.sandbox,
    pytest.mark.slow,
]

ECHO = Path(__file__).parent / "envs" / "echo_turns"
BACKEND = "from setuptools.build_meta import *  # noqa: F403\n"
CHECK = """
import json, sys
from hub.review.check import CheckOptions, Limits, check
opts = CheckOptions(num_tasks=10, gold_tasks=8, probe_tasks=2, grade_timeout_s=2.0, limits=Limits(wall_s=90))
report = check(sys.argv[1], options=opts)
print(json.dumps({r.name: [r.status, r.reason] for r in report.results}))
"""


def test_check_and_build_from_a_virtualenv_under_tmp(tmp_path: Path) -> None:
    root = Path(tempfile.mkdtemp(prefix="verihub-venv-", dir="/tmp"))
    try:
        venv = root / "venv"
        py = child_venv(venv)  # sees the running interpreter's packages, whatever that interpreter is
        extra = root / "extra"
        extra.mkdir()
        (extra / "tmp_only_backend.py").write_text(BACKEND)
        site = subprocess.run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        assert site.startswith(str(root)) and site != sysconfig.get_path("purelib")
        (Path(site) / "extra.pth").write_text(f"{extra}\n")
        pkg = tmp_path / "pkg"
        shutil.copytree(ECHO, pkg)
        toml = (pkg / "pyproject.toml").read_text()
        (pkg / "pyproject.toml").write_text(toml.replace('"setuptools.build_meta"', '"tmp_only_backend"'))
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        proc = subprocess.run(
            [str(py), "-c", CHECK, str(pkg)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        results = json.loads(proc.stdout.strip().splitlines()[-1])
        assert results["installs"][0] == "pass", results["installs"]
        assert results["loads"][0] == "pass", results["loads"]
    finally:
        shutil.rmtree(root, ignore_errors=True)
