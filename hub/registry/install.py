"""``verihub install ID[@VERSION]`` and ``verihub uninstall ID``.

Verify first, then install exactly what was verified; no code of the package runs before that:
the catalogue entry becomes one wheel file (:func:`hub.registry.sources.fetch_wheel`: built
**inside the sandbox** or downloaded, never built on the host); :func:`hub.registry.wheels.verify_wheel`
reads it as data and its content hash and entry point must match the catalogue's; its import
package may not belong to another distribution or shadow an importable module; its dependencies
are resolved by pip as wheels only and each verified too (:mod:`hub.registry.deps`); only then
does pip install *those wheel files* with ``--no-deps``. Afterwards the environment must resolve
to the verified entry point and its package is hashed again; on a mismatch it is uninstalled.
On any refusal nothing is installed. The rules in full: docs/bounties.md, "Installing".

``unsafe=True`` (``--unsafe-no-sandbox``) builds without the sandbox where bubblewrap is missing.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name

from hub.env import UsageError
from hub.registry import sources
from hub.registry.catalogue import Catalogue, CatalogueEntry, load_catalogue
from hub.registry.deps import fetch_dependencies
from hub.registry.sources import InstallError, build_wheel, refuse_links, requirement_for
from hub.registry.wheels import WheelCheck, WheelError, verify_wheel

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
        wheel = sources.fetch_wheel(entry, Path(tmp), pip_args, unsafe=unsafe)
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
        if entry.entry_point is not None and checked.entry_point != entry.entry_point:
            raise InstallError(
                f"{entry.id}@{entry.version}: the wheel's entry point is {checked.entry_point}, but the "
                f"catalogue ({entry.catalogue}) pins the entry point {entry.entry_point}; nothing was "
                "installed"
            )
        if checked.extra_hash != entry.extra_hash:
            raise InstallError(
                f"{entry.id}@{entry.version}: the declared extra files hash to {checked.extra_hash}, the "
                f"catalogue ({entry.catalogue}) says {entry.extra_hash}; nothing was installed"
            )
        wheel_sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
        _refuse_taking_over(checked)
        # dependencies come as wheels only (pip would run an sdist's setup.py here), each verified
        deps = (
            [] if no_deps else fetch_dependencies(wheel, checked.distribution, Path(tmp) / "deps", pip_args)
        )
        files = [str(p) for p in [*deps, wheel]]
        sources.run_pip(["install", "-q", "--no-deps", *pip_args, *files], what=f"installing {wheel.name}")
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


def _refuse_taking_over(checked: WheelCheck) -> None:
    """The wheel's import package must be new here or already this distribution's own."""
    from importlib.metadata import packages_distributions

    from hub.registry.entrypoints import installed

    package, mine = checked.import_package, canonicalize_name(checked.distribution)
    owners = sorted({canonicalize_name(d) for d in packages_distributions().get(package, [])} - {mine})
    if owners:
        raise InstallError(
            f"{checked.distribution} would install the package {package!r}, which belongs to "
            f"{', '.join(owners)}; refused (pip would overwrite that distribution's files); nothing "
            "was installed"
        )
    where = _importable(package)
    current = installed().get(checked.env_id)
    ours = current is not None and canonicalize_name(current.distribution or "") == mine
    if where is not None and not ours:
        raise InstallError(
            f"{checked.distribution} would install the package {package!r}, which is already importable "
            f"from {where}; refused (it would shadow or be shadowed by it); nothing was installed"
        )


def _importable(package: str) -> str | None:
    """Where ``package`` would be imported from now (asking the finders, not ``sys.modules``, so
    that a module imported before an uninstall does not count), or None."""
    importlib.invalidate_caches()
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        try:
            spec = find(package, None) if find is not None else None
        except Exception:  # a third-party finder may fail in any way; it then has no answer
            spec = None
        if spec is not None:
            return str(spec.origin or "a namespace or built-in module")
    return None


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
    sources.run_pip(["uninstall", "-y", "-q", info.distribution], what=f"uninstalling {info.distribution}")
    importlib.invalidate_caches()
    return info.distribution
