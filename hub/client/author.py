"""An author's remote commands against a hub: a version's review state, yanking, visibility.

Each call goes to the hub one is logged in to (or ``--hub``) with the stored token (or ``--token``);
refusals come back as :class:`~hub.client.api.HubError` with the hub's message.
"""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import Callable
from typing import Any

from hub.client.api import hub_request
from hub.env import UsageError
from hub.registry import parse_ref

__all__ = ["FINISHED", "review_status", "set_visibility", "transfer", "wait_for_review", "yank"]

#: Review states after which nothing more happens to a version without a new push.
FINISHED = frozenset({"passed", "failed", "error"})


def _split(ref: str, *, need_version: bool = False) -> tuple[str, str, str | None]:
    try:
        owner, env_id, version = parse_ref(ref)
    except ValueError as exc:
        raise UsageError(f"{ref!r}: {exc}") from None
    if need_version and version is None:
        raise UsageError(f"{ref!r}: name the version, OWNER/ID@VERSION")
    return owner, env_id, version


def _path(owner: str, env_id: str, *rest: str) -> str:
    parts = [owner, env_id, *rest]
    return "/api/v1/envs/" + "/".join(urllib.parse.quote(p, safe="") for p in parts)


def review_status(hub: str, ref: str, *, token: str | None) -> dict[str, Any]:
    """The version ``ref`` names (the newest pushed one without ``@VERSION``), with its report."""
    owner, env_id, version = _split(ref)
    if version is None:
        info = hub_request(hub, _path(owner, env_id), token=token)
        if not info["versions"]:
            raise UsageError(f"{owner}/{env_id} has no versions yet; `verihub push` one")
        version = info["versions"][-1]["version"]
    answer: dict[str, Any] = hub_request(hub, _path(owner, env_id, str(version)), token=token)
    return answer


def wait_for_review(
    hub: str,
    ref: str,
    *,
    token: str | None,
    timeout_s: float = 3600.0,
    poll_s: float = 2.0,
    on_state: Callable[[str], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Poll :func:`review_status` until the review finishes (or ``timeout_s`` passes: UsageError)."""
    deadline = time.monotonic() + timeout_s
    seen = ""
    while True:
        status = review_status(hub, ref, token=token)
        if status["state"] != seen and on_state is not None:
            on_state(status["state"])
        seen = status["state"]
        if seen in FINISHED:
            return status
        if time.monotonic() > deadline:
            raise UsageError(f"the review of {ref} is still {seen} after {timeout_s:.0f} s; look later")
        sleep(poll_s)


def yank(hub: str, ref: str, reason: str, *, token: str | None) -> dict[str, Any]:
    """Yank ``OWNER/ID@VERSION`` (PEP 592): pip skips it unless pinned exactly."""
    owner, env_id, version = _split(ref, need_version=True)
    if not reason.strip():
        raise UsageError("give a reason: --reason TEXT (pip shows it to whoever pins the version)")
    answer: dict[str, Any] = hub_request(
        hub, _path(owner, env_id, str(version), "yank"), token=token, method="POST", query={"reason": reason}
    )
    return answer


def set_visibility(hub: str, ref: str, *, private: bool, token: str | None) -> dict[str, Any]:
    """Make ``OWNER/ID`` private (only its owners see it) or public."""
    owner, env_id, version = _split(ref)
    if version is not None:
        raise UsageError(f"{ref!r}: visibility belongs to the environment, not a version; drop @{version}")
    answer: dict[str, Any] = hub_request(
        hub,
        _path(owner, env_id, "visibility"),
        token=token,
        method="POST",
        query={"private": "1" if private else "0"},
    )
    return answer


def transfer(hub: str, ref: str, to: str, *, token: str | None) -> dict[str, Any]:
    """Move ``OWNER/ID`` to the organisation ``to`` (one must be a member); its new ``ref``."""
    owner, env_id, version = _split(ref)
    if version is not None:
        raise UsageError(f"{ref!r}: an environment moves with every version; drop @{version}")
    answer: dict[str, Any] = hub_request(
        hub, _path(owner, env_id, "transfer"), token=token, method="POST", query={"to": to}
    )
    return answer
