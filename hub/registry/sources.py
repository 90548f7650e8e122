"""Turning a catalogue entry's source into one wheel file, without running its code on the host.

- a source folder (a ``path`` entry, a git checkout) is refused when it holds a symbolic link or a
  hard-linked file (they could carry files from outside it into the wheel), copied without
  ``build/`` or ``*.egg-info``, and built into a wheel **inside the sandbox**
  (:func:`hub.sandbox.run`: no network, the copy its only writable folder), since building runs
  the package's ``setup.py``;
- a PyPI release is downloaded as a wheel only: pip would run an sdist's ``setup.py`` here to
  read its metadata, so a release without a wheel is refused;
- a ``wheel`` source must name a ``.whl`` file; an https one is fetched by
  :func:`hub.registry.fetch.download` (redirects guarded, ``#sha256=`` checked), a local one copied;
- git runs with ``--`` before the URL and only the https, http, ssh, git and file protocols.

pip always runs in the current interpreter (``sys.executable -m pip``, :func:`run_pip`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import urllib.parse
from collections.abc import Sequence
from pathlib import Path

from hub.env import UsageError, VerihubError
from hub.registry.catalogue import (
    SHIPPED_ORIGIN,
    CatalogueEntry,
    GitSource,
    PathSource,
    PypiSource,
    WheelSource,
)
from hub.registry.fetch import download, redact
from hub.registry.wheels import MAX_WHEEL_BYTES

__all__ = ["InstallError", "build_wheel", "fetch_wheel", "refuse_links", "requirement_for", "run_pip"]

_PIP_TIMEOUT_S = 900.0
_BUILD_TIMEOUT_S = 600.0
_BUILD_LEFTOVERS = shutil.ignore_patterns(
    "build", "dist", "*.egg-info", "__pycache__", "*.pyc", ".git", ".venv"
)


class InstallError(VerihubError):
    """pip failed, or the package is not what the catalogue says it is."""


def requirement_for(entry: CatalogueEntry) -> str:
    """The pip requirement that installs ``entry``."""
    src = entry.install
    if isinstance(src, PypiSource):
        return f"{src.name}=={entry.version}"
    if isinstance(src, GitSource):
        sub = f"#subdirectory={src.subdirectory}" if src.subdirectory else ""
        url = src.url if src.url.startswith("git+") else f"git+{src.url}"
        return f"{url}@{src.commit}{sub}"
    if isinstance(src, PathSource):
        path = Path(src.path).expanduser()
        if not path.is_dir() and entry.catalogue == SHIPPED_ORIGIN:
            raise UsageError(
                f"{entry.id}: the shipped catalogue installs verihub's own environments from a source "
                f"checkout, and {path} does not exist here; clone the verihub repository, "
                "`pip install -e .` in it, and run `verihub install` again"
            )
        if not (path / "pyproject.toml").is_file() and not (path / "setup.py").is_file():
            raise UsageError(f"{entry.id}: {path} is not a Python package folder (no pyproject.toml)")
        return str(path.resolve())
    if isinstance(src, WheelSource):
        return src.url
    raise AssertionError(f"unknown source {src!r}")  # pragma: no cover


def run_pip(args: Sequence[str], *, what: str) -> str:
    """Run ``python -m pip ARGS`` in this interpreter; its last error line as InstallError."""
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise InstallError(f"pip timed out while {what}; check your network or index") from exc
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        last = next((ln for ln in reversed(lines) if "ERROR" in ln), lines[-1] if lines else "no output")
        raise InstallError(f"pip failed while {what}: {last.strip()}")
    return proc.stdout


def refuse_links(root: Path) -> None:
    """Raise :class:`InstallError` when ``root`` holds a symbolic link or a hard-linked file."""
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            raise InstallError(
                f"{path} is a symbolic link; verihub refuses sources with links (they can pull files "
                "from outside the package into it): replace it with the file itself"
            )
        if path.is_file() and path.stat().st_nlink > 1:
            raise InstallError(
                f"{path} is hard-linked elsewhere; refusing it (copy the file instead of linking it)"
            )


def build_wheel(source: Path, out: Path, *, unsafe: bool = False) -> Path:
    """Build the wheel of an untrusted source folder inside the sandbox; returns the wheel.

    ``source`` must be a private copy inside ``out``'s parent (the sandbox's one writable folder).
    """
    from hub.sandbox import SandboxUnavailableError, run

    out.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
    argv += ["--disable-pip-version-check", "-q", "-w", str(out), str(source)]
    try:
        proc = run(
            argv, rw_dir=out.parent, network=False, timeout_s=_BUILD_TIMEOUT_S, cwd=out.parent, unsafe=unsafe
        )
    except SandboxUnavailableError as exc:
        raise InstallError(
            f"{exc}; building an environment runs its code, so verihub builds only in the sandbox"
        ) from exc
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        last = next((ln for ln in reversed(lines) if "rror" in ln), lines[-1] if lines else "no output")
        raise InstallError(
            f"building the wheel of {source.name} in the sandbox failed: {last.strip()[:300]} (the build has "
            "no network: its build backend must be installed here, e.g. `pip install setuptools wheel`)"
        )
    wheels = sorted(out.glob("*.whl"))
    if len(wheels) != 1:
        raise InstallError(f"expected one wheel from {source.name}, got {len(wheels)}")
    return wheels[0]


def fetch_wheel(entry: CatalogueEntry, tmp: Path, pip_args: Sequence[str], *, unsafe: bool) -> Path:
    """The entry's wheel: downloaded when released as one, else built from source in the sandbox."""
    src = entry.install
    requirement = requirement_for(entry)
    out = tmp / "wheels"
    if isinstance(src, PathSource):
        folder = Path(requirement)
        refuse_links(folder)
        copy = tmp / "src"
        shutil.copytree(folder, copy, ignore=_BUILD_LEFTOVERS, symlinks=True)
        return build_wheel(copy, out, unsafe=unsafe)
    if isinstance(src, GitSource):
        checkout = tmp / "git"
        url = src.url[4:] if src.url.startswith("git+") else src.url
        _git(["clone", "--quiet", "--no-checkout", "--", url, str(checkout)], what=f"cloning {url}")
        _git(["-C", str(checkout), "checkout", "--quiet", src.commit], what=f"checking out {src.commit}")
        shutil.rmtree(checkout / ".git", ignore_errors=True)
        folder = checkout / src.subdirectory if src.subdirectory else checkout
        refuse_links(folder)
        return build_wheel(folder, out, unsafe=unsafe)
    if isinstance(src, WheelSource):
        return _wheel_file(src.url, out)
    # PyPI: a released wheel only. pip prepares an sdist's metadata to download it, which runs the
    # sdist's setup.py on this machine, so verihub never asks pip for one.
    try:
        run_pip(
            ["download", "--no-deps", "--only-binary", ":all:", "-q", "-d", str(out), *pip_args, requirement],
            what=f"downloading {requirement}",
        )
    except InstallError as exc:
        raise InstallError(
            f"{exc}. verihub installs PyPI releases from wheels only (downloading an sdist would run its "
            "setup.py here): ask the author to publish a wheel, or catalogue the source as a git or "
            "path entry, which verihub builds in the sandbox"
        ) from exc
    wheels = sorted(out.glob("*.whl"))
    if len(wheels) != 1:
        raise InstallError(f"expected one wheel for {requirement}, got {len(wheels)}")
    return wheels[0]


def _wheel_file(url: str, out: Path) -> Path:
    """A wheel source's file: fetched over https (:func:`hub.registry.fetch.download`, redirects
    guarded, ``#sha256=`` checked) or copied from a local path or ``file:`` URL."""
    parsed = urllib.parse.urlsplit(url)
    if not parsed.path.endswith(".whl"):
        raise InstallError(
            f"{redact(url)} does not name a .whl file; a wheel source must be a built wheel (pip would "
            "build anything else on this machine, running its code)"
        )
    out.mkdir(parents=True, exist_ok=True)
    if parsed.scheme in ("http", "https"):
        try:
            return download(url, out, what="wheel", timeout=_PIP_TIMEOUT_S, max_bytes=MAX_WHEEL_BYTES)
        except UsageError as exc:
            raise InstallError(f"{exc}; nothing was installed") from exc
    if parsed.scheme not in ("", "file"):
        raise InstallError(f"{redact(url)}: a wheel source is an https URL, a file: URL or a path")
    local = Path(urllib.parse.unquote(parsed.path)).expanduser()
    copy = out / local.name
    try:
        shutil.copyfile(local, copy)
    except OSError as exc:
        raise InstallError(f"cannot read the wheel {local}: {exc.strerror}") from exc
    pinned = parsed.fragment.removeprefix("sha256=")
    if parsed.fragment.startswith("sha256=") and hashlib.sha256(copy.read_bytes()).hexdigest() != pinned:
        raise InstallError(f"{local} does not match the sha256 in its URL; nothing was installed")
    return copy


def _git(args: Sequence[str], *, what: str) -> None:
    env = {
        **os.environ,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_ALLOW_PROTOCOL": "https:http:ssh:git:file",  # never ext:: (runs a command)
    }
    try:
        proc = subprocess.run(["git", *args], capture_output=True, text=True, timeout=_PIP_TIMEOUT_S, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InstallError(f"git failed while {what}: {exc}") from exc
    if proc.returncode != 0:
        raise InstallError(f"git failed while {what}: {(proc.stderr or proc.stdout).strip()[:300]}")
