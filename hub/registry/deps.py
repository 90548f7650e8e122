"""The dependencies ``verihub install`` installs with an environment, verified like it.

pip is asked what it *would* install for the wheel's ``Requires-Dist`` (``pip install
--dry-run --report``, wheels only; nothing when it declares none); each
distribution it names must come from an index or a local wheel file (a direct URL, a VCS
reference or a source folder is refused), is downloaded alone (``--no-deps``) and checked by
:func:`hub.registry.wheels.verify_dependency` (``RECORD`` hashes, no ``.pth``, no second
metadata folder, no direct-URL dependency of its own) and against the hash pip's report gave.
Then pip installs exactly those files and the environment's wheel with ``--no-deps``: nothing
else is fetched after the check.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from hub.registry import sources
from hub.registry.sources import InstallError
from hub.registry.wheels import WheelError, refuse_direct_dependencies, verify_dependency

__all__ = ["fetch_dependencies"]


def _planned(report: dict[str, Any], own: str) -> list[tuple[str, str, str, str | None]]:
    """(name, version, url, sha256) of each distribution the report installs, but ``own``."""
    out = []
    for item in report.get("install") or []:
        meta = item.get("metadata") or {}
        name = str(meta.get("name", ""))
        if canonicalize_name(name) == canonicalize_name(own):
            continue
        info = item.get("download_info") or {}
        url = str(info.get("url", ""))
        if "vcs_info" in info or "dir_info" in info or item.get("is_direct"):
            raise InstallError(
                f"the dependency {name} would come from {url[:120]} (a direct URL, VCS or folder), "
                "not an index; refused, nothing was installed"
            )
        hashes = (info.get("archive_info") or {}).get("hashes") or {}
        out.append((name, str(meta.get("version", "")), url, hashes.get("sha256")))
    return out


def _requires(wheel: Path) -> list[str]:
    """The wheel's ``Requires-Dist`` lines (a direct URL among them is refused)."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            names = [n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            metadata = zf.read(names[0]) if len(names) == 1 else b""
    except (zipfile.BadZipFile, OSError) as exc:
        raise InstallError(f"{wheel.name} is not a valid wheel (zip) file") from exc
    try:
        return refuse_direct_dependencies(metadata, wheel.name)
    except WheelError as exc:
        raise InstallError(f"{exc}; nothing was installed") from exc


def fetch_dependencies(wheel: Path, distribution: str, dest: Path, pip_args: Sequence[str]) -> list[Path]:
    """Download and verify the wheels pip would install with ``wheel`` (see the module
    docstring) into ``dest``; raises :class:`InstallError` on any refusal."""
    requires = _requires(wheel)
    if not requires:
        return []
    dest.mkdir(parents=True, exist_ok=True)
    report = dest / "pip-report.json"
    plan = ["install", "--dry-run", "-q", "--only-binary", ":all:", "--report", str(report)]
    sources.run_pip([*plan, *pip_args, *requires], what=f"resolving the dependencies of {wheel.name}")
    wheels: list[Path] = []
    for name, version, url, sha256 in _planned(json.loads(report.read_text(encoding="utf-8")), distribution):
        folder = dest / canonicalize_name(name)
        sources.run_pip(
            ["download", "-q", "--no-deps", "--only-binary", ":all:", "-d", str(folder), *pip_args, url],
            what=f"downloading the dependency {name} {version}",
        )
        got = sorted(folder.glob("*.whl"))
        if len(got) != 1:
            raise InstallError(f"the dependency {name} {version} did not download as one wheel; refused")
        if sha256 is not None and hashlib.sha256(got[0].read_bytes()).hexdigest() != sha256:
            raise InstallError(f"the dependency {got[0].name} differs from the file pip resolved; refused")
        try:
            verify_dependency(str(got[0]))
        except WheelError as exc:
            raise InstallError(f"{exc}; nothing was installed") from exc
        wheels.append(got[0])
    return wheels
