"""Staged copies of a package: read-only for the sandbox, writable again for clean-up.

The sandbox itself is :mod:`hub.sandbox` (bubblewrap); this module only prepares the files.
"""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

__all__ = ["make_writable", "read_only_copy"]


def read_only_copy(src: Path, dest: Path) -> Path:
    """Copy ``src`` (a folder or a file) to ``dest`` and make the copy read-only."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".git", "*.egg-info", "build", "dist")
    if src.is_dir():
        shutil.copytree(src, dest, ignore=ignore)
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
    paths = [dest, *dest.rglob("*")] if dest.is_dir() else [dest]
    for p in sorted(paths, key=lambda q: len(q.parts), reverse=True):
        mode = p.stat().st_mode
        p.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return dest


def make_writable(path: Path) -> None:
    """Undo :func:`read_only_copy` so the copy can be deleted."""
    if not path.exists():
        return
    for p in [path, *path.rglob("*")] if path.is_dir() else [path]:
        try:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
        except OSError:
            pass
