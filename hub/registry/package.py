"""What identifies an environment package: its entry-point group and its content hash.

Every environment package declares ``[project.entry-points."verihub.environments"]``
(:data:`ENTRY_POINT_GROUP`); :func:`hash_tree` is the content hash that catalogues, installs,
checks and run records compare (relative paths and bytes, caches and bytecode left out).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["ENTRY_POINT_GROUP", "hash_tree"]

ENTRY_POINT_GROUP = "verihub.environments"


def hash_tree(root: Path) -> str:
    """sha256 of a file or folder: relative paths and contents, caches and bytecode left out."""
    digest = hashlib.sha256()
    files = (
        [root]
        if root.is_file()
        else sorted(
            p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
        )
    )
    for path in files:
        rel = path.name if root.is_file() else path.relative_to(root).as_posix()
        digest.update(rel.encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()
