"""``verihub install ID[@VERSION]`` and ``verihub uninstall ID``.

Verify first, then install exactly what was verified; no code of the package runs before that:

1. the catalogue entry is resolved to a source (a PyPI release, a git commit, a local folder, a
   wheel URL);
2. a source folder (a local folder, a git checkout, an sdist from PyPI) is refused when it holds a
   symbolic link or a hard-linked file (they could carry files from outside it into the wheel),
   copied without ``build/`` or ``*.egg-info``, and built into a wheel **inside the sandbox**
   (:func:`hub.sandbox.run`: no network, the copy its only writable folder), since building runs
   the package's ``setup.py``; a released wheel (PyPI or a URL) is downloaded, never built, and a
   PyPI release without a wheel is refused;
3. :func:`hub.registry.wheels.verify_wheel` reads the wheel as data: every file must be in its
   ``RECORD`` with the right hash, and nothing may lie outside the environment's import package and
   its metadata (no ``.pth``, no other top-level module, no ``.data`` scheme, no console script)
   unless the catalogue entry declares it in ``extra_files``; its content hash must equal the
   catalogue's ``content_hash``;
4. on any refusal nothing is installed; otherwise pip installs *that wheel file* (its declared
   dependencies come from the index as wheels only, ``--only-binary :all:``, and are not
   hash-checked);
5. after installing, the installed environment must resolve to the entry point verified in the
   wheel and its package is hashed again; on a mismatch it is uninstalled.

Nothing is ever built on the host: a PyPI release installs from its wheel only (pip runs an
sdist's ``setup.py`` just to read its metadata), a wheel source must name a ``.whl`` file, and
wheels are fetched over https with redirects guarded (:mod:`hub.registry.fetch`).

pip always runs in the current interpreter (``sys.executable -m pip``). ``unsafe=True``
(``--unsafe-no-sandbox``) builds without the sandbox where bubblewrap is missing.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
import zipfile
from collections.abc import Sequence
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
from hub.registry.fetch import download, redact
from hub.registry.wheels import MAX_WHEEL_BYTES, WheelCheck, WheelError, verify_wheel

__all__ = [
    "InstallError",
    "InstallResult",
    "build_wheel",
    "check_wheel",
    "install",
    "parse_spec",
    "refuse_links",
    "requirement_for",
    "resolve",
    "uninstall",
    "unpack_wheel",
    "wheel_package_hash",
]

_PIP_TIMEOUT_S = 900.0
_BUILD_TIMEOUT_S = 600.0
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
    entry_point: str = ""
    """The environment's entry-point target, as verified in the wheel and found once installed."""
    wheel_sha256: str = ""
    """sha256 of the wheel file that pip installed."""


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


def check_wheel(wheel: Path, env_id: str) -> WheelCheck:
    """:func:`hub.registry.wheels.verify_wheel` of an environment wheel, refusals as InstallError."""
    try:
        return verify_wheel(str(wheel), env_id=env_id)
    except WheelError as exc:
        raise InstallError(str(exc)) from exc


def wheel_package_hash(wheel: Path, env_id: str) -> str:
    """The content hash of a verified environment wheel (:func:`check_wheel`)."""
    return check_wheel(wheel, env_id).content_hash


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


def _fetch_wheel(entry: CatalogueEntry, tmp: Path, pip_args: Sequence[str], *, unsafe: bool) -> Path:
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
        _git(["clone", "--quiet", "--no-checkout", url, str(checkout)], what=f"cloning {url}")
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
        _pip(
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
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
    try:
        proc = subprocess.run(["git", *args], capture_output=True, text=True, timeout=_PIP_TIMEOUT_S, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InstallError(f"git failed while {what}: {exc}") from exc
    if proc.returncode != 0:
        raise InstallError(f"git failed while {what}: {(proc.stderr or proc.stdout).strip()[:300]}")


def install(
    spec: str,
    *,
    catalogue: Catalogue | None = None,
    pip_args: Sequence[str] = (),
    no_deps: bool = False,
    unsafe: bool = False,
) -> InstallResult:
    """Install ``ID[@VERSION]`` from the catalogue into the current environment (see the module doc).

    ``pip_args`` go to the pip calls that download (for example ``--index-url``) and install.
    """
    from hub.registry.entrypoints import package_hash

    entry = resolve(spec, catalogue)
    requirement = requirement_for(entry)
    with tempfile.TemporaryDirectory(prefix="verihub-install-") as tmp:
        wheel = _fetch_wheel(entry, Path(tmp), pip_args, unsafe=unsafe)
        try:
            checked = verify_wheel(str(wheel), env_id=entry.id, extra_files=entry.extra_files)
        except WheelError as exc:
            raise InstallError(f"{exc}; nothing was installed") from exc
        actual = checked.content_hash
        if entry.content_hash is not None and actual != entry.content_hash:
            raise InstallError(
                f"content hash mismatch for {entry.id}@{entry.version}: the catalogue ({entry.catalogue}) "
                f"says {entry.content_hash}, the package is {actual}; nothing was installed. The package "
                "changed since it was catalogued: ask its author, or update the catalogue if you trust it"
            )
        if checked.extra_hash != entry.extra_hash:
            raise InstallError(
                f"{entry.id}@{entry.version}: the declared extra files hash to {checked.extra_hash}, the "
                f"catalogue ({entry.catalogue}) says {entry.extra_hash}; nothing was installed"
            )
        # dependencies come as wheels only: pip would run an sdist's setup.py here to install it
        deps = ["--no-deps"] if no_deps else ["--only-binary", ":all:"]
        wheel_sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
        _pip(["install", "-q", *deps, *pip_args, str(wheel)], what=f"installing {wheel.name}")
    importlib.invalidate_caches()
    _check_installed_target(entry.id, checked.entry_point)
    if entry.content_hash is not None:
        installed_hash = package_hash(entry.id)
        if installed_hash != entry.content_hash:
            uninstall(entry.id)
            raise InstallError(
                f"{entry.id}: the installed package hashes to {installed_hash}, not {entry.content_hash}; "
                "it was uninstalled again (another distribution may provide the same id)"
            )
    return InstallResult(
        entry=entry,
        requirement=requirement,
        content_hash=actual,
        verified=entry.content_hash is not None,
        entry_point=checked.entry_point,
        wheel_sha256=wheel_sha256,
    )


def _check_installed_target(env_id: str, verified: str) -> None:
    """The installed environment must resolve to the entry point verified in the wheel (another
    distribution declaring the same id would otherwise decide what ``load_environment`` runs)."""
    from hub.registry.entrypoints import installed

    found = installed().get(env_id)
    if found is None or found.entry_point != verified:
        if found is not None:
            uninstall(env_id)
        raise InstallError(
            f"{env_id}: once installed, its entry point is {found.entry_point if found else 'missing'}, not "
            f"{verified} as verified in the wheel; it was uninstalled again (another distribution may "
            "declare the same id: `pip list` and remove it)"
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
