"""Reviewed data from a hub: an environment version's label file and its training records.

:func:`pull_labels` writes the label file ``verihub fidelity`` reads (one JSON line per labelled
rollout: ``task_id``, ``response``, ``reference`` when the hub knows it, ``label``, and where it
came from); :func:`pull_training` returns the labelled rollouts and corrected trajectories of a
version as SFT records with their provenance (``verihub export --sft --hub``). ``OWNER/ID``
without a version means the newest version the hub holds.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from pathlib import Path
from typing import Any

from hub.client.api import hub_request
from hub.env import UsageError
from hub.registry import parse_ref

__all__ = ["pull_labels", "pull_training", "resolve_version"]


def _quote(part: str) -> str:
    return urllib.parse.quote(part, safe="")


def resolve_version(hub: str, ref: str, *, token: str | None) -> tuple[str, str, str]:
    """(owner, id, version) of ``OWNER/ID[@VERSION]``; the newest version when none is given."""
    try:
        owner, env_id, version = parse_ref(ref)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if version is None:
        env = hub_request(hub, f"/api/v1/envs/{_quote(owner)}/{_quote(env_id)}", token=token)
        versions = [v["version"] for v in env.get("versions", [])]
        if not versions:
            raise UsageError(f"{owner}/{env_id} has no versions on {hub}")
        version = versions[-1]
    return owner, env_id, version


def _path(owner: str, env_id: str, version: str, what: str) -> str:
    return f"/api/v1/envs/{_quote(owner)}/{_quote(env_id)}/{_quote(version)}/{what}"


def pull_labels(hub: str, ref: str, *, token: str | None, out: Path) -> tuple[str, int]:
    """Write the version's label file to ``out``; returns (``OWNER/ID@VERSION``, lines written)."""
    owner, env_id, version = resolve_version(hub, ref, token=token)
    lines: list[dict[str, Any]] = hub_request(
        hub, _path(owner, env_id, version, "labels"), token=token, query={"format": "json"}
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    os.replace(tmp, out)
    return f"{owner}/{env_id}@{version}", len(lines)


def pull_training(hub: str, ref: str, *, token: str | None) -> list[dict[str, Any]]:
    """The version's labelled rollouts and graded corrections as SFT records with provenance."""
    owner, env_id, version = resolve_version(hub, ref, token=token)
    records: list[dict[str, Any]] = hub_request(hub, _path(owner, env_id, version, "training"), token=token)
    return records
