"""Verifying an environment's wheel before pip sees it.

A wheel is a zip that pip unpacks into site-packages. Everything in it is untrusted, so
:func:`verify_wheel` reads it as data (never importing or building anything) and refuses:

- members that are absolute, climb out (``..``), are symlinks, repeat, or are not in the wheel's
  ``RECORD`` (and ``RECORD`` lines whose files are missing or whose sha256 differs);
- files outside the environment's import package and its one ``.dist-info`` folder: a top-level
  ``.pth`` (code run at every interpreter start), other top-level modules or packages, and the
  ``NAME-VERSION.data/`` schemes (scripts, headers, data installed elsewhere), unless the
  catalogue entry declares them (``extra_files``);
- ``console_scripts``/``gui_scripts`` entry points (programs installed on the PATH), unless declared;
- archives over :data:`MAX_WHEEL_BYTES` unpacked, or compressed more than :data:`MAX_RATIO` to 1.

The content hash (:attr:`WheelCheck.content_hash`) is :func:`hub.registry.package.hash_tree` of the
import package, the same value :func:`hub.registry.entrypoints.package_hash` gives once installed.
Because nothing else may be in the wheel, it covers every file the wheel installs outside its
metadata; declared extra files are hashed into it too (:attr:`WheelCheck.extra_hash`).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import stat
import zipfile
from collections.abc import Sequence
from configparser import ConfigParser
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import PurePosixPath

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from hub.env.errors import VerihubError
from hub.registry.package import ENTRY_POINT_GROUP

__all__ = ["MAX_RATIO", "MAX_WHEEL_BYTES", "WheelCheck", "WheelError", "verify_wheel"]

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


def _is_cache(parts: tuple[str, ...]) -> bool:
    return "__pycache__" in parts or parts[-1].endswith(".pyc")


def verify_wheel(path: str, *, env_id: str, extra_files: Sequence[str] = ()) -> WheelCheck:
    """Check ``path`` (a ``.whl`` file) as described in the module docstring; raise :class:`WheelError`.

    ``extra_files``: glob patterns (relative to site-packages, ``/``-separated) the catalogue entry
    declares for files outside the import package, e.g. ``["verihub_x_data/*"]``.
    """
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
    entry_points = contents.get(f"{dist_info}/entry_points.txt", b"").decode("utf-8", "replace")
    package = _entry_package(entry_points, env_id, name)
    _refuse_scripts(entry_points, extra_files, name)
    pkg_files: list[tuple[str, bytes]] = []
    extras: list[tuple[str, bytes]] = []
    for member, data in contents.items():
        parts = PurePosixPath(member).parts
        if parts[0] == dist_info:
            continue
        if parts[0] == package and len(parts) > 1:
            if not _is_cache(parts):
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
        version=str(version),
        import_package=package,
        content_hash=_tree_hash(pkg_files),
        extra_files=tuple(sorted(m for m, _ in extras)),
        extra_hash=_tree_hash(extras) if extras else None,
    )


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
        raise WheelError(f"{name} must hold exactly one .dist-info folder, found {len(folders)}")
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


def _parser(text: str) -> ConfigParser:
    parser = ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    return parser


def _entry_package(entry_points: str, env_id: str, name: str) -> str:
    try:
        parser = _parser(entry_points)
    except Exception as exc:  # configparser raises several unrelated error types
        raise WheelError(f"{name}: entry_points.txt cannot be read ({type(exc).__name__})") from exc
    if not parser.has_option(ENTRY_POINT_GROUP, env_id):
        raise WheelError(f"{name} has no {ENTRY_POINT_GROUP} entry point named {env_id!r}")
    module = parser.get(ENTRY_POINT_GROUP, env_id).strip().split(":", 1)[0].split(".", 1)[0].strip()
    if not module.isidentifier():
        raise WheelError(f"{name}: entry point {env_id!r} names no importable module ({module!r})")
    return module


def _refuse_scripts(entry_points: str, extra_files: Sequence[str], name: str) -> None:
    parser = _parser(entry_points)
    for group in _SCRIPT_GROUPS:
        if not parser.has_section(group):
            continue
        for script in parser.options(group):
            if not any(fnmatch(f"scripts/{script}", pattern) for pattern in extra_files):
                raise WheelError(
                    f"{name} installs the program {script!r} ({group}) on the PATH; refused unless its "
                    f"catalogue entry declares scripts/{script} in extra_files"
                )
