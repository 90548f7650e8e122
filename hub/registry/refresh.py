"""Keeping a catalogue's versions and content hashes in step with the source folders it lists.

    python -m hub.registry.refresh --refresh [FILE]   rewrite stale hashes and versions
    python -m hub.registry.refresh --check [FILE]     exit 1 when an entry is stale

FILE defaults to the shipped catalogue (``hub/registry/catalogue.json``); only ``path`` sources
are refreshed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from hub.env import UsageError
from hub.registry.catalogue import shipped_path
from hub.registry.config import read_config
from hub.registry.package import ENTRY_POINT_GROUP, hash_tree

__all__ = ["refresh_catalogue", "source_info"]


def source_info(folder: Path) -> tuple[str, str, str]:
    """(environment id, version, content hash) of a package source folder.

    The hash is :func:`hub.registry.package.hash_tree` of the import package the entry point names, the
    same as :func:`hub.registry.entrypoints.package_hash` once installed (the wheel holds the same files).
    """

    project = read_config(folder / "pyproject.toml").get("project", {})
    eps = project.get("entry-points", {}).get(ENTRY_POINT_GROUP, {})
    if len(eps) != 1:
        raise UsageError(f"{folder}/pyproject.toml must declare one {ENTRY_POINT_GROUP} entry point")
    ((env_id, value),) = eps.items()
    module = str(value).split(":", 1)[0].split(".", 1)[0]
    for base in (folder, folder / "src"):
        for target in (base / module, base / f"{module}.py"):
            if target.exists():
                return str(env_id), str(project.get("version", "")), hash_tree(target)
    raise UsageError(f"{folder}: the entry point's module {module!r} is not in the folder")


def refresh_catalogue(path: Path | None = None, *, write: bool = True) -> list[str]:
    """Update the hash and version of every ``path`` entry of a catalogue file from its source.

    Returns what changed (or, with ``write=False``, what is stale) as lines; other sources are
    left alone. Used by ``python -m hub.registry.refresh --refresh`` on the shipped catalogue.
    """
    path = path or shipped_path()
    raw = json.loads(path.read_text(encoding="utf-8"))
    changes: list[str] = []
    for entry in raw.get("environments", []):
        src = entry.get("install", {})
        if src.get("kind") != "path":
            continue
        folder = Path(src["path"]).expanduser()
        folder = folder if folder.is_absolute() else path.resolve().parent / folder
        env_id, version, digest = source_info(folder)
        for key, value in (("id", env_id), ("version", version), ("content_hash", digest)):
            if entry.get(key) != value:
                changes.append(f"{entry.get('id')}: {key} {entry.get(key)} -> {value}")
                entry[key] = value
    if write and changes:
        path.write_text(json.dumps(raw, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return changes


def _main(argv: Sequence[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m hub.registry.refresh", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--refresh", action="store_true", help="rewrite stale hashes and versions")
    parser.add_argument("--check", action="store_true", help="exit 1 when an entry is stale")
    parser.add_argument("file", nargs="?", type=Path, help="catalogue file (default: the shipped one)")
    args = parser.parse_args(list(argv))
    if args.refresh == args.check:
        parser.error("give one of --refresh or --check")
    changes = refresh_catalogue(args.file, write=args.refresh)
    print("\n".join([*changes, f"{args.file or shipped_path()}: {len(changes)} stale fields"]))
    if args.check and changes:
        print(
            f"regenerate it: python -m hub.registry.refresh --refresh {args.file or ''}".rstrip(),
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
