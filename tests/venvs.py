"""Child virtualenvs for tests that start another interpreter.

``child_venv`` makes a virtualenv from the base installation of the running interpreter (venv
always builds on ``sys._base_executable``) and, with ``inherit``, a ``.pth`` file that adds this
checkout and the running interpreter's own site-packages, their ``.pth`` files (editable
installs) processed. The child then sees exactly the packages the tests run with, whether they
run in a virtualenv or in a system or pyenv Python; never the base interpreter's packages,
which ``--system-site-packages`` would show from inside a virtualenv.
"""

from __future__ import annotations

import site
import subprocess
import sys
import sysconfig
from pathlib import Path

__all__ = ["REPO", "child_venv", "running_site_dirs"]

REPO = Path(__file__).resolve().parents[1]


def running_site_dirs() -> list[str]:
    """The site-packages folders of the running interpreter, in its own order (user site last)."""
    dirs = [*site.getsitepackages(), sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
    if site.ENABLE_USER_SITE and Path(site.getusersitepackages()).is_dir():
        dirs.append(site.getusersitepackages())
    return list(dict.fromkeys(d for d in dirs if Path(d).is_dir()))


def child_venv(path: Path, *, inherit: bool = True, pip: bool = False) -> Path:
    """A virtualenv at ``path``; returns its ``python``. ``inherit``: it sees this checkout and the
    running interpreter's packages (else only the standard library and its own installs);
    ``pip``: pip is installed into it (``ensurepip``)."""
    cmd = [sys.executable, "-m", "venv", *([] if pip else ["--without-pip"]), str(path)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    python = path / "bin" / "python"
    if inherit:
        inner = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirs = running_site_dirs()
        # the folders as plain lines too: the sandbox binds the folders a .pth file names (it reads
        # paths, not code); the import line then processes the .pth files inside them (editables)
        lines = [
            str(REPO),
            *dirs,
            "import site; " + "; ".join(f"site.addsitedir({d!r})" for d in dirs),
        ]
        (Path(inner) / "_running_site.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return python
