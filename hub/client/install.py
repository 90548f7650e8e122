"""``verihub install OWNER/ID[@VERSION] --hub URL``: resolve through the hub's API, then install the
reviewed wheel with the catalogue installer (download over https with redirects guarded, check the
file's sha256, verify the wheel with :func:`hub.registry.wheels.verify_wheel` and its content hash,
install exactly that wheel, check its entry point and hash it again once installed)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from hub.client.api import hub_request
from hub.env import UsageError, VerihubError
from hub.registry import Catalogue, CatalogueEntry, InstallError, InstallResult, WheelSource, parse_ref
from hub.registry.install import install

__all__ = ["AmbiguousIdError", "install_from_hub", "pick_version", "resolve_on_hub"]

_FILE_PATH = re.compile(r"/files/[0-9a-f]{64}/[A-Za-z0-9_.+-]+\.whl")
"""Where a hub serves a wheel (``hub.server.packages.api``: ``/files/SHA256/FILENAME``)."""
_VERSION_TEXT = re.compile(r"[A-Za-z0-9.+!_-]{1,64}")


def pick_version(info: dict[str, Any], version: str | None, *, allow_unreviewed: bool) -> dict[str, Any]:
    """The version to install: the one asked for, else the newest offered and not yanked."""
    ref = info["ref"]
    versions = info["versions"]
    if version is not None:
        found = [v for v in versions if v["version"] == version]
        if not found:
            have = ", ".join(v["version"] for v in versions) or "none"
            raise UsageError(f"{ref} has no version {version}; available: {have}")
        chosen = found[0]
    else:
        candidates = [
            v for v in versions if not v["yanked"] and (allow_unreviewed or v["version"] in info["offered"])
        ]
        if not candidates:
            raise UsageError(
                f"{ref} has no reviewed version yet (`verihub hub status {ref}`); "
                "--allow-unreviewed installs one anyway"
            )
        chosen = candidates[-1]
    if not allow_unreviewed and chosen["version"] not in info["offered"]:
        raise UsageError(
            f"{ref}@{chosen['version']} has not passed review (state: {chosen['state']}); "
            "--allow-unreviewed installs it anyway"
        )
    return dict(chosen)


class AmbiguousIdError(UsageError):
    """A bare environment id that more than one owner publishes; the message lists them."""


def resolve_on_hub(env_id: str, *, hub: str, token: str | None) -> str:
    """``OWNER/ID`` for a bare id on a hub, when exactly one owner (that the token may see)
    publishes it; otherwise a :class:`UsageError` that lists the owners and says what to type."""
    answer = hub_request(hub, f"/api/v1/resolve/{quote(env_id, safe='')}", token=token, timeout=30.0)
    found: dict[str, str] = {}  # ref -> newest reviewed version ('' if none), as far as they parse
    for c in answer.get("candidates", []) if isinstance(answer, dict) else []:
        ref, newest = str(c.get("ref", "")), str(c.get("offered") or "")
        try:
            if parse_ref(ref)[1] == env_id:
                found[ref] = newest if _VERSION_TEXT.fullmatch(newest) else ""
        except ValueError:
            continue
    refs = sorted(found)
    if len(refs) == 1:
        return refs[0]
    if not refs:
        raise UsageError(f"no environment {env_id!r} on {hub} that you can see; `verihub search` lists them")
    lines = [
        f"  {ref}" + (f"  (newest reviewed: {found[ref]})" if found[ref] else "  (no reviewed version)")
        for ref in refs
    ]
    raise AmbiguousIdError(
        f"{env_id!r} is published on {hub} by more than one owner; an id is unique only within its "
        "owner, so say which one:\n"
        + "\n".join(lines)
        + f"\nfor example: verihub install {refs[0]} --hub {hub}"
    )


def _with_token(url: str, token: str | None) -> str:
    if not token:
        return url
    parts = urlsplit(url)
    netloc = f"__token__:{quote(token, safe='')}@{parts.netloc}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def install_from_hub(
    ref: str,
    *,
    hub: str,
    token: str | None,
    allow_unreviewed: bool = False,
    no_deps: bool = False,
    pip_args: Sequence[str] = (),
    on_note: Callable[[str], None] | None = None,
) -> InstallResult:
    """Install ``OWNER/ID[@VERSION]`` from a hub: the wheel verified as :func:`install` does.

    A yanked version is installed only when pinned exactly, and ``on_note`` hears why it was yanked.
    """
    try:
        owner, env_id, version = parse_ref(ref)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    info = hub_request(hub, f"/api/v1/envs/{owner}/{env_id}", token=token)
    chosen = pick_version(info, version, allow_unreviewed=allow_unreviewed)
    if chosen["yanked"] and on_note is not None:
        why = chosen.get("yank_reason") or "no reason given"
        on_note(f"{owner}/{env_id}@{chosen['version']} is yanked ({why}); installing it: you pinned it")
    wheel = next((f for f in chosen["files"] if f["kind"] == "wheel"), None)
    if wheel is None:
        raise UsageError(f"{ref}@{chosen['version']} has no wheel on the hub")
    # the download carries the token: its URL must stay on the hub (no "@host", "//host", "..")
    if not _FILE_PATH.fullmatch(str(wheel["url"])) or not re.fullmatch(r"[0-9a-f]{64}", str(wheel["sha256"])):
        raise UsageError(f"the hub's answer names {str(wheel['url'])[:80]!r}, not a file on the hub; refused")
    # install() downloads the wheel itself (hub.registry.fetch: https or loopback http, redirects
    # guarded, the token sent as a header) and checks the #sha256 fragment; then it checks it with
    # hub.registry.wheels.verify_wheel (RECORD hashes, nothing outside the import package) and its
    # content hash against the one the hub recorded at push, installs that file, and hashes again.
    url = _with_token(f"{hub}{wheel['url']}#sha256={wheel['sha256']}", token)
    entry = CatalogueEntry(
        id=env_id,
        version=chosen["version"],
        summary=info.get("summary", ""),
        author=owner,
        license=info.get("license", ""),
        install=WheelSource(url=url),
        content_hash=chosen["content_hash"],
        catalogue=hub,
    )
    try:
        return install(
            f"{env_id}@{chosen['version']}",
            catalogue=Catalogue(environments=[entry]),
            pip_args=pip_args,
            no_deps=no_deps,
        )
    except VerihubError as exc:  # never echo the token that is part of the download URL
        if token and token in str(exc):
            raise InstallError(str(exc).replace(quote(token, safe=""), "***").replace(token, "***")) from None
        raise
