"""Names on the hub: PEP 503 normalisation, owner and id rules, look-alike detection."""

from __future__ import annotations

import re

__all__ = ["OWNER_RE", "RESERVED_NAMES", "edit_distance", "normalize", "parse_ref"]

OWNER_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,38}$")
_ENV_ID = re.compile(r"^[a-z][a-z0-9_]{0,99}$")
_VERSION = re.compile(r"^[0-9A-Za-z.+!_-]{1,64}$")

#: First path segments the server's own pages and APIs use; pages live at ``/{owner}``, so no
#: user or organisation may take one of these names.
RESERVED_NAMES = frozenset(
    {
        "admin",
        "api",
        "bounties",
        "files",
        "leaderboard",
        "login",
        "results",
        "runs",
        "settings",
        "sign-in",
        "sign-out",
        "sign-out-everywhere",
        "sign-up",
        "simple",
        "simple-unreviewed",
        "static",
    }
)


def normalize(name: str) -> str:
    """PEP 503: lowercase, runs of ``-``, ``_`` and ``.`` become one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def edit_distance(a: str, b: str, *, cap: int = 3) -> int:
    """Levenshtein distance, stopping early once it exceeds ``cap``."""
    if abs(len(a) - len(b)) > cap:
        return cap + 1
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if min(cur) > cap:
            return cap + 1
        prev = cur
    return prev[-1]


def parse_ref(ref: str) -> tuple[str, str, str | None]:
    """``owner/id[@version]`` -> (owner, id, version or None); ValueError says what is wrong."""
    name, _, version = ref.partition("@")
    owner, sep, env_id = name.partition("/")
    if not sep or not OWNER_RE.match(owner) or not _ENV_ID.match(env_id):
        raise ValueError(f"{ref!r} is not OWNER/ID[@VERSION] (for example verihub/arith@0.1.0)")
    if version and not _VERSION.match(version):
        raise ValueError(f"{version!r} is not a version")
    return owner, env_id, version or None
