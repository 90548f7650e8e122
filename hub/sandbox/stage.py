"""Staged copies of a package: what the sandbox binds read-only at the package's place.

A stage is a folder holding an import package and its ``.dist-info`` (what a wheel installs),
copied so that the sandbox never sees the rest of site-packages or a source checkout.
:func:`stage_installed` makes one from an installed environment id (``verihub eval --sandbox``
and ``verihub check ID``); :func:`read_only_copy` makes any copy read-only and
:func:`make_writable` undoes that for clean-up.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
from importlib.metadata import entry_points
from pathlib import Path

__all__ = [
    "STAGE_PREFIX",
    "StageError",
    "links_outside",
    "make_writable",
    "read_only_copy",
    "stage_installed",
]

_GROUP = "verihub.environments"
STAGE_PREFIX = "verihub-stage-"
"""Every stage lives in ``mkdtemp(prefix=STAGE_PREFIX) / "stage"``: the check and an evaluation
bind the same kind of path (it shows in the sandbox's ``/proc/self/mountinfo``)."""


class StageError(ValueError):
    """The package cannot be staged; the message says why and what to do."""


def links_outside(root: Path) -> list[str]:
    """Symlinks under ``root`` that resolve outside it (or nowhere), as 'link -> target'."""
    base = os.path.realpath(root)
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                target = os.path.realpath(path)
                if not (target == base or target.startswith(base + os.sep)) or not os.path.exists(target):
                    found.append(f"{os.path.relpath(path, root)} -> {os.readlink(path)}")
    return found


def stage_installed(env_id: str, dest: Path) -> tuple[Path, str]:
    """Copy the installed environment ``env_id`` (import package and metadata) to ``dest``,
    read-only; returns the stage and the distribution's name."""
    ep = next((e for e in entry_points(group=_GROUP) if e.name == env_id), None)
    if ep is None:
        raise StageError(f"{env_id!r} is neither a folder nor an installed environment; see `verihub list`")
    module = ep.value.split(":", 1)[0].split(".", 1)[0]
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise StageError(f"cannot locate the package {module!r} of {env_id!r}; reinstall it")
    root = Path(spec.origin).parent if spec.submodule_search_locations else Path(spec.origin)
    links = links_outside(root) if root.is_dir() else []
    if links:
        raise StageError(f"{env_id!r}'s package has symlinks that lead outside it: {', '.join(links[:3])}")
    dist_path = getattr(ep.dist, "_path", None)
    if dist_path is None or not Path(str(dist_path)).is_dir():
        raise StageError(
            f"cannot find the metadata of {env_id!r}'s distribution; check it from its source folder"
        )
    tmp = dest.parent / (dest.name + ".tmp")
    tmp.mkdir(parents=True)
    if root.is_dir():
        shutil.copytree(root, tmp / root.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    else:
        shutil.copy2(root, tmp / root.name)
    shutil.copytree(Path(str(dist_path)), tmp / Path(str(dist_path)).name)
    stage = read_only_copy(tmp, dest)
    shutil.rmtree(tmp)
    return stage, str(ep.dist.metadata["Name"]) if ep.dist is not None else "?"


def read_only_copy(src: Path, dest: Path) -> Path:
    """Copy ``src`` (a folder or a file) to ``dest`` and make the copy read-only (world-readable,
    so the sandbox's unprivileged user can read it)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".git", "*.egg-info", "build", "dist")
    if src.is_dir():
        shutil.copytree(src, dest, ignore=ignore)
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
    paths = [dest, *dest.rglob("*")] if dest.is_dir() else [dest]
    for p in sorted(paths, key=lambda q: len(q.parts), reverse=True):
        mode = p.stat().st_mode
        p.chmod(
            (mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
            & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        )
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
