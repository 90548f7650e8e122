"""Verifying an environment's wheel before pip sees it.

A wheel is untrusted throughout, so :func:`verify_wheel` reads it as data (never importing or
building anything) and refuses members outside ``RECORD`` or escaping the archive; anything
outside the import package and its one ``.dist-info`` (a ``.pth``, other modules, ``.data/``
schemes, scripts) unless the catalogue entry declares it (``extra_files``); bytecode, declared or
not; an ``entry_points.txt`` outside the subset every reader reads alike
(:mod:`hub.registry.entry_points_txt`) or with plugin groups; mismatched or second metadata
folders; archives over :data:`MAX_WHEEL_BYTES` or :data:`MAX_RATIO`; and direct-URL dependencies
(``name @ URL``), which :func:`verify_dependency` also checks in each dependency wheel. Each
rule: docs/bounties.md, "Installing".

So :attr:`WheelCheck.content_hash` (:func:`hub.registry.package.hash_tree` of the import package)
covers every file installed outside the metadata; extra files go into :attr:`WheelCheck.extra_hash`.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import stat
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from hub.env import VerihubError
from hub.registry.entry_points_txt import EntryPointsError, parse_entry_points
from hub.registry.package import ENTRY_POINT_GROUP

__all__ = [
    "MAX_RATIO",
    "MAX_WHEEL_BYTES",
    "WheelCheck",
    "WheelError",
    "refuse_direct_dependencies",
    "verify_dependency",
    "verify_wheel",
]

MAX_WHEEL_BYTES = 256 * 1024 * 1024
"""Unpacked size cap of an environment wheel."""
MAX_RATIO = 200
"""Largest accepted compression ratio of one member (a zip bomb compresses far more)."""
_SCRIPT_GROUPS = ("console_scripts", "gui_scripts")


class WheelError(VerihubError):
    """The wheel is not a well-formed verihub environment wheel, or carries files it may not."""


@dataclass(frozen=True)
class WheelCheck:
    """What :func:`verify_wheel` established about a wheel."""

    env_id: str
    distribution: str
    version: str
    import_package: str
    entry_point: str
    """The environment's entry-point target (``package.module:attribute``)."""
    entry_points: tuple[tuple[str, str, str], ...]
    """Every entry point the wheel declares, as sorted (group, name, target)."""
    content_hash: str
    """``hash_tree`` of the import package (comparable with catalogue ``content_hash``)."""
    extra_files: tuple[str, ...]
    """Declared files outside the import package (empty for an ordinary environment)."""
    extra_hash: str | None
    """sha256 over the declared extra files (paths and bytes), or None when there are none."""


def _b64_sha256(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _tree_hash(files: Sequence[tuple[str, bytes]]) -> str:
    """The hash_tree of files given as (path relative to the tree's root, bytes)."""
    digest = hashlib.sha256()
    for rel, data in sorted(files, key=lambda item: tuple(item[0].split("/"))):  # as hash_tree orders paths
        digest.update(rel.encode() + b"\0")
        digest.update(data)
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


def _is_bytecode(parts: tuple[str, ...]) -> bool:
    return "__pycache__" in parts or parts[-1].endswith((".pyc", ".pyo"))


def _is_metadata(top: str) -> bool:
    return top.endswith((".dist-info", ".egg-info", ".egg-link"))


def verify_wheel(path: str, *, env_id: str | None, extra_files: Sequence[str] = ()) -> WheelCheck:
    """Check ``path`` (a ``.whl`` file) as described in the module docstring; raise :class:`WheelError`.

    ``env_id``: the environment the wheel must provide; None takes the one it declares.

    ``extra_files``: glob patterns (relative to site-packages, ``/``-separated) the catalogue entry
    declares for files outside the import package, e.g. ``["verihub_x_data/*"]``.
    """
    name, dist, version, dist_info, contents = _read_checked(path)
    try:
        groups = parse_entry_points(contents.get(f"{dist_info}/entry_points.txt", b""))
    except EntryPointsError as exc:
        raise WheelError(f"{name}: entry_points.txt is refused: {exc}") from exc
    if env_id is None:  # the one environment the wheel declares (more are refused below)
        env_id = next(iter(groups.get(ENTRY_POINT_GROUP, {})), "")
    target = _entry_target(groups, env_id, name)
    package = target.split(":", 1)[0].split(".", 1)[0]
    _refuse_scripts(groups, extra_files, name)
    pkg_files: list[tuple[str, bytes]] = []
    extras: list[tuple[str, bytes]] = []
    for member, data in contents.items():
        parts = PurePosixPath(member).parts
        if _is_bytecode(parts):
            raise WheelError(
                f"{name} carries the bytecode {member!r}; refused: Python could run it instead of the "
                "reviewed source, and the content hash leaves bytecode out. Build the wheel from source"
            )
        if parts[0] == dist_info:
            continue
        if _is_metadata(parts[0]):
            raise WheelError(
                f"{name} carries a second metadata folder {parts[0]!r} beside {dist_info}; refused, "
                "declared or not (its entry points would be read too)"
            )
        if parts[0] == package and len(parts) > 1:
            pkg_files.append(("/".join(parts[1:]), data))
        elif member == f"{package}.py":
            pkg_files.append((member, data))
        elif any(fnmatch(member, pattern) for pattern in extra_files):
            extras.append((member, data))
        else:
            kind = _kind(parts, dist_info)
            raise WheelError(
                f"{name} installs {member!r} ({kind}) outside its import package {package!r}; refused. "
                "A wheel may only hold its environment's package and metadata, unless its catalogue "
                "entry declares the file in extra_files"
            )
    if not pkg_files:
        raise WheelError(f"{name}: entry point module {package!r} is missing from the wheel")
    return WheelCheck(
        env_id=env_id,
        distribution=dist,
        version=version,
        import_package=package,
        entry_point=target,
        entry_points=tuple(sorted((g, n, t) for g, names in groups.items() for n, t in names.items())),
        content_hash=_tree_hash(pkg_files),
        extra_files=tuple(sorted(m for m, _ in extras)),
        extra_hash=_tree_hash(extras) if extras else None,
    )


def refuse_direct_dependencies(metadata: bytes, name: str) -> list[str]:
    """The ``Requires-Dist`` lines of ``metadata``; raises :class:`WheelError` on one that is
    not a plain requirement or names a URL (``pkg @ https://...``, ``pkg @ git+...``)."""
    head = metadata.decode("utf-8", "replace").replace("\r\n", "\n").split("\n\n", 1)[0]
    lines = [
        ln.split(":", 1)[1].strip() for ln in head.splitlines() if ln.lower().startswith("requires-dist:")
    ]
    for line in lines:
        try:
            req = Requirement(line)
        except InvalidRequirement as exc:
            raise WheelError(
                f"{name}: the dependency {line[:120]!r} is not a valid requirement ({exc})"
            ) from exc
        if req.url is not None:
            raise WheelError(
                f"{name}: the dependency {req.name} comes from a direct URL or VCS reference "
                f"({req.url[:120]!r}); refused: pip would install it unreviewed. Depend on a "
                "released distribution by name"
            )
    return lines


def verify_dependency(path: str) -> str:
    """Check a dependency's wheel (not an environment) before ``verihub install`` hands it to
    pip: ``RECORD`` complete and right, metadata its own, no direct-URL dependency of its own,
    and nothing that runs at interpreter start: no ``.pth`` file anywhere site-packages would
    read one (top level, or a ``.data`` scheme's ``purelib``/``platlib``). Returns its name."""
    name, dist, _version, dist_info, contents = _read_checked(path)
    for member in contents:
        parts = PurePosixPath(member).parts
        site_level = len(parts) == 1 or (
            len(parts) == 3 and parts[0].endswith(".data") and parts[1] in ("purelib", "platlib")
        )
        if site_level and parts[-1].endswith(".pth"):
            raise WheelError(
                f"{name} installs {member!r}, a .pth file run at every interpreter start; refused"
            )
        if _is_metadata(parts[0]) and parts[0] != dist_info:
            raise WheelError(f"{name} carries a second metadata folder {parts[0]!r}; refused")
    return dist


def _read_checked(path: str) -> tuple[str, str, str, str, dict[str, bytes]]:
    """Read a wheel as data and run the checks every wheel passes: a wheel file name, safe and
    unique members within the size caps, one ``.dist-info`` named as the file, ``RECORD``
    complete and right, and no direct-URL dependency. Returns (file name, distribution,
    version, ``.dist-info`` folder, member bytes by name)."""
    name = PurePosixPath(str(path)).name
    try:
        dist, version, _build, _tags = parse_wheel_filename(name)
    except InvalidWheelFilename as exc:
        raise WheelError(f"{name} is not a wheel file name ({exc})") from exc
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise WheelError(f"{name} is not a valid wheel (zip) file") from exc
    with zf:
        members = _members(zf, name)
        dist_info = _dist_info(members, name)
        record = _record(zf, dist_info, name)
        contents = {m: zf.read(m) for m in members}
    _check_record(contents, record, dist_info, name)
    _check_metadata_name(contents, dist_info, dist, version, name)
    refuse_direct_dependencies(contents.get(f"{dist_info}/METADATA", b""), name)
    return name, str(dist), str(version), dist_info, contents


def _kind(parts: tuple[str, ...], dist_info: str) -> str:
    if parts[0].endswith(".data"):
        return "a .data scheme: scripts, headers or data installed outside site-packages"
    if parts[-1].endswith(".pth"):
        return "a .pth file, run at every interpreter start"
    if len(parts) == 1:
        return "a top-level module"
    if parts[0].endswith(".dist-info"):
        return f"a second metadata folder beside {dist_info}"
    return "another top-level package"


def _members(zf: zipfile.ZipFile, name: str) -> list[str]:
    seen: set[str] = set()
    total = 0
    out: list[str] = []
    for info in zf.infolist():
        member = info.filename
        pure = PurePosixPath(member)
        if (
            member.startswith("/")
            or "\\" in member
            or ".." in pure.parts
            or (pure.parts and ":" in pure.parts[0])
        ):
            raise WheelError(f"{name} contains an unsafe path {member!r}; refused")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise WheelError(f"{name} contains a symbolic link {member!r}; refused")
        if member in seen:
            raise WheelError(f"{name} contains {member!r} twice; refused")
        seen.add(member)
        if info.is_dir():
            continue
        total += info.file_size
        if total > MAX_WHEEL_BYTES:
            raise WheelError(f"{name} unpacks to more than {MAX_WHEEL_BYTES:,} bytes; refused")
        if info.file_size > 1024 * 1024 and info.file_size > MAX_RATIO * max(1, info.compress_size):
            raise WheelError(f"{name}: {member!r} is compressed more than {MAX_RATIO}:1 (a zip bomb?)")
        out.append(member)
    return out


def _dist_info(members: Sequence[str], name: str) -> str:
    folders = {PurePosixPath(m).parts[0] for m in members if PurePosixPath(m).parts[0].endswith(".dist-info")}
    if len(folders) != 1:
        raise WheelError(f"{name} must hold exactly one .dist-info (metadata) folder, found {len(folders)}")
    return folders.pop()


def _record(zf: zipfile.ZipFile, dist_info: str, name: str) -> dict[str, str]:
    try:
        text = zf.read(f"{dist_info}/RECORD").decode("utf-8")
    except KeyError as exc:
        raise WheelError(f"{name} has no {dist_info}/RECORD") from exc
    out: dict[str, str] = {}
    for row in csv.reader(io.StringIO(text)):
        if not row:
            continue
        out[row[0]] = row[1] if len(row) > 1 else ""
    return out


def _check_record(contents: dict[str, bytes], record: dict[str, str], dist_info: str, name: str) -> None:
    unsigned = {f"{dist_info}/RECORD", f"{dist_info}/RECORD.jws", f"{dist_info}/RECORD.p7s"}
    for member, data in contents.items():
        if member in unsigned:
            continue
        expected = record.get(member)
        if expected is None:
            raise WheelError(f"{name}: {member!r} is not listed in RECORD; refused")
        if expected and expected != _b64_sha256(data):
            raise WheelError(f"{name}: {member!r} does not match its RECORD hash; refused")
    missing = [m for m in record if m not in contents and m not in unsigned]
    if missing:
        raise WheelError(f"{name}: RECORD lists {missing[0]!r}, which the wheel does not hold")


def _check_metadata_name(
    contents: dict[str, bytes], dist_info: str, dist: str, version: Version, name: str
) -> None:
    """The .dist-info folder and METADATA must name the distribution the file name does."""
    folder_name, _, folder_version = dist_info[: -len(".dist-info")].partition("-")
    try:
        same_version = Version(folder_version) == version
    except InvalidVersion:
        same_version = False
    if canonicalize_name(folder_name) != canonicalize_name(dist) or not same_version:
        raise WheelError(
            f"{name}: its metadata folder {dist_info!r} does not match the wheel's name; refused"
        )
    metadata = contents.get(f"{dist_info}/METADATA", b"").decode("utf-8", "replace")
    names = [ln[5:].strip() for ln in metadata.split("\n\n", 1)[0].splitlines() if ln.startswith("Name:")]
    if len(names) != 1 or canonicalize_name(names[0]) != canonicalize_name(dist):
        raise WheelError(f"{name}: METADATA names {names or 'no distribution'}, not {dist}; refused")


def _entry_target(groups: dict[str, dict[str, str]], env_id: str, name: str) -> str:
    """The environment's entry-point target, after refusing every other use of entry points."""
    ours = groups.get(ENTRY_POINT_GROUP, {})
    if env_id not in ours:
        raise WheelError(f"{name} has no {ENTRY_POINT_GROUP} entry point named {env_id!r}")
    others = sorted(set(ours) - {env_id})
    if others:
        raise WheelError(
            f"{name} registers other environments too ({', '.join(others)}); refused: a wheel provides "
            f"the one environment it is catalogued as ({env_id})"
        )
    plugins = sorted(set(groups) - {ENTRY_POINT_GROUP, *_SCRIPT_GROUPS})
    if plugins:
        raise WheelError(
            f"{name} declares entry points in {', '.join(plugins)}, plugin hooks other programs load; "
            "refused: an environment wheel declares its environment (and declared scripts) only"
        )
    target = ours[env_id]
    if ":" not in target:
        raise WheelError(f"{name}: entry point {env_id!r} must be 'module:attribute', not {target!r}")
    return target


def _refuse_scripts(groups: dict[str, dict[str, str]], extra_files: Sequence[str], name: str) -> None:
    for group in _SCRIPT_GROUPS:
        for script in groups.get(group, {}):
            if not any(fnmatch(f"scripts/{script}", pattern) for pattern in extra_files):
                raise WheelError(
                    f"{name} installs the program {script!r} ({group}) on the PATH; refused unless its "
                    f"catalogue entry declares scripts/{script} in extra_files"
                )
