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
from hub.env.errors import UsageError, VerihubError
from hub.registry.catalogue import Catalogue, CatalogueEntry, WheelSource
from hub.registry.install import InstallError, InstallResult, install
from hub.registry.names import parse_ref

__all__ = ["install_from_hub", "pick_version"]

_FILE_PATH = re.compile(r"/files/[0-9a-f]{64}/[A-Za-z0-9_.+-]+\.whl")
"""Where a hub serves a wheel (``hub.server.packages.api``: ``/files/SHA256/FILENAME``)."""


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
