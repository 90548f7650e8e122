"""``verihub install ID[@VERSION]`` and ``verihub uninstall ID``.

How the content hash is verified (verify first, then install exactly what was verified):

1. the catalogue entry is resolved to a pip requirement (``name==version``, ``git+URL@commit``,
   a local folder, or a wheel URL);
2. ``pip wheel --no-deps`` builds or downloads the environment's wheel into a temporary folder
   (a local folder is copied first, without ``build/`` or ``*.egg-info``, so nothing stale gets
   into the wheel and nothing is written into the source folder);
3. the wheel is unpacked and :func:`hub.registry.package.hash_tree` is computed over the import package
   that provides the ``verihub.environments`` entry point ``ID`` (the same files, and so the
   same hash, as :func:`hub.registry.entrypoints.package_hash` gives once installed);
4. on a mismatch nothing is installed; otherwise pip installs *that wheel file* (its declared
   dependencies come from the index as usual and are not hash-checked);
5. after installing, the installed package is hashed again; on a mismatch it is uninstalled.

pip always runs in the current interpreter (``sys.executable -m pip``).
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from configparser import ConfigParser
from dataclasses import dataclass
from pathlib import Path

from hub.env.errors import UsageError, VerihubError
from hub.registry.catalogue import (
    SHIPPED_ORIGIN,
    Catalogue,
    CatalogueEntry,
    GitSource,
    PathSource,
    PypiSource,
    WheelSource,
    load_catalogue,
)

__all__ = [
    "InstallError",
    "InstallResult",
    "install",
    "parse_spec",
    "requirement_for",
    "resolve",
    "uninstall",
    "unpack_wheel",
    "wheel_package_hash",
]

_PIP_TIMEOUT_S = 900.0
_BUILD_LEFTOVERS = shutil.ignore_patterns(
    "build", "dist", "*.egg-info", "__pycache__", "*.pyc", ".git", ".venv"
)


class InstallError(VerihubError):
    """pip failed, or the package is not what the catalogue says it is."""


@dataclass(frozen=True)
class InstallResult:
    """What ``install`` did."""

    entry: CatalogueEntry
    requirement: str
    content_hash: str
    verified: bool


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``"arith@0.1.0"`` -> ``("arith", "0.1.0")``; ``"arith"`` -> ``("arith", None)``."""
    env_id, sep, version = spec.partition("@")
    if not env_id or (sep and not version):
        raise UsageError(f"{spec!r} is not ID or ID@VERSION (for example arith or arith@0.1.0)")
    return env_id, version or None


def resolve(spec: str, catalogue: Catalogue | None = None) -> CatalogueEntry:
    """The catalogue entry for ``ID[@VERSION]``; errors name the versions that exist."""
    import difflib

    cat = catalogue if catalogue is not None else load_catalogue()
    env_id, version = parse_spec(spec)
    versions = cat.versions(env_id)
    if not versions:
        close = difflib.get_close_matches(env_id, sorted({e.id for e in cat.environments}), n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise UsageError(f"no environment {env_id!r} in the catalogue.{hint} Try `verihub search TEXT`.")
    entry = cat.get(env_id, version)
    if entry is None:
        have = ", ".join(e.version for e in versions)
        raise UsageError(f"{env_id} has no version {version} in the catalogue; available: {have}")
    return entry


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


def _pip(args: Sequence[str], *, what: str) -> str:
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


def unpack_wheel(wheel: Path, dest: Path) -> Path:
    """Extract ``wheel`` into ``dest`` (refusing paths that escape it); returns ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()
    try:
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                if not (root / name).resolve().is_relative_to(root):
                    raise InstallError(f"{wheel.name} contains an unsafe path {name!r}; refusing it")
            zf.extractall(root)
    except zipfile.BadZipFile as exc:
        raise InstallError(f"{wheel.name} is not a valid wheel (zip) file") from exc
    return dest


def wheel_package_hash(wheel: Path, env_id: str) -> str:
    """hash_tree of the import package providing entry point ``env_id`` inside ``wheel``."""
    from hub.registry.package import ENTRY_POINT_GROUP, hash_tree

    with tempfile.TemporaryDirectory(prefix="verihub-wheel-") as tmp:
        root = unpack_wheel(wheel, Path(tmp))
        eps = list(root.glob("*.dist-info/entry_points.txt"))
        if not eps:
            raise InstallError(f"{wheel.name} declares no entry points; it is not a verihub environment")
        parser = ConfigParser(delimiters=("=",))
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        parser.read(eps[0], encoding="utf-8")
        if not parser.has_option(ENTRY_POINT_GROUP, env_id):
            raise InstallError(f"{wheel.name} has no {ENTRY_POINT_GROUP} entry point named {env_id!r}")
        module = parser.get(ENTRY_POINT_GROUP, env_id).strip().split(":", 1)[0].split(".", 1)[0]
        target = root / module if (root / module).is_dir() else root / f"{module}.py"
        if not target.exists():
            raise InstallError(f"{wheel.name}: entry point module {module!r} is missing from the wheel")
        return hash_tree(target)


def install(
    spec: str,
    *,
    catalogue: Catalogue | None = None,
    pip_args: Sequence[str] = (),
    no_deps: bool = False,
) -> InstallResult:
    """Install ``ID[@VERSION]`` from the catalogue into the current environment.

    ``pip_args`` go to every pip call (for example ``--no-build-isolation``, ``--index-url``).
    """
    from hub.registry.entrypoints import package_hash

    entry = resolve(spec, catalogue)
    requirement = requirement_for(entry)
    with tempfile.TemporaryDirectory(prefix="verihub-install-") as tmp:
        source = requirement
        if isinstance(entry.install, PathSource):  # build a clean copy: no stale build/ in, none left
            source = str(Path(tmp) / "src")
            shutil.copytree(requirement, source, ignore=_BUILD_LEFTOVERS)
        out = str(Path(tmp) / "wheels")
        _pip(["wheel", "--no-deps", "-q", "-w", out, *pip_args, source], what=f"fetching {requirement}")
        wheels = sorted(Path(out).glob("*.whl"))
        if len(wheels) != 1:
            raise InstallError(f"expected one wheel for {requirement}, got {len(wheels)}")
        actual = wheel_package_hash(wheels[0], entry.id)
        if entry.content_hash is not None and actual != entry.content_hash:
            raise InstallError(
                f"content hash mismatch for {entry.id}@{entry.version}: the catalogue ({entry.catalogue}) "
                f"says {entry.content_hash}, the package is {actual}; nothing was installed. The package "
                "changed since it was catalogued: ask its author, or update the catalogue if you trust it"
            )
        deps = ["--no-deps"] if no_deps else []
        _pip(["install", "-q", *deps, *pip_args, str(wheels[0])], what=f"installing {wheels[0].name}")
    importlib.invalidate_caches()
    if entry.content_hash is not None:
        installed_hash = package_hash(entry.id)
        if installed_hash != entry.content_hash:
            uninstall(entry.id)
            raise InstallError(
                f"{entry.id}: the installed package hashes to {installed_hash}, not {entry.content_hash}; "
                "it was uninstalled again (another distribution may provide the same id)"
            )
    return InstallResult(
        entry=entry, requirement=requirement, content_hash=actual, verified=entry.content_hash is not None
    )


def uninstall(env_id: str) -> str:
    """Uninstall the distribution providing environment ``env_id``; returns its name."""
    from hub.registry.entrypoints import installed

    info = installed().get(env_id)
    if info is None:
        raise UsageError(f"environment {env_id!r} is not installed; see `verihub list`")
    if not info.distribution:
        raise InstallError(f"cannot tell which distribution provides {env_id!r}; uninstall it with pip")
    _pip(["uninstall", "-y", "-q", info.distribution], what=f"uninstalling {info.distribution}")
    importlib.invalidate_caches()
    return info.distribution
