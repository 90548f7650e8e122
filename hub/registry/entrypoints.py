"""Finding environments: the ``verihub.environments`` entry-point group.

An environment package declares ``[project.entry-points."verihub.environments"] ID =
"package:load_environment"``. Listing reads names and distribution metadata only; the code of an
environment is imported only when that one is loaded.
"""

from __future__ import annotations

import difflib
import importlib.util
import inspect
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import Distribution, EntryPoint, entry_points
from pathlib import Path
from typing import Any

from hub.env import Environment, EnvironmentDefinitionError, UnknownEnvironmentError, UsageError, VerihubError
from hub.registry.catalogue import Catalogue, load_catalogue
from hub.registry.package import ENTRY_POINT_GROUP, hash_tree

__all__ = [
    "EnvInfo",
    "installed",
    "list_environments",
    "load_environment",
    "package_hash",
]


@dataclass(frozen=True)
class EnvInfo:
    """What is known about an environment without importing it."""

    id: str
    version: str
    summary: str
    installed: bool
    distribution: str | None = None
    entry_point: str | None = None
    install_hint: str | None = None


def _entry_points() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def installed() -> dict[str, EnvInfo]:
    """Installed environments by id (reads metadata only)."""
    out: dict[str, EnvInfo] = {}
    for name, ep in sorted(_entry_points().items()):
        dist = ep.dist
        out[name] = EnvInfo(
            id=name,
            version=dist.version if dist is not None else "unknown",
            summary=_meta(dist, "Summary"),
            installed=True,
            distribution=_meta(dist, "Name") or None,
            entry_point=ep.value,
        )
    return out


def _meta(dist: Distribution | None, field: str) -> str:
    if dist is None:
        return ""
    values = dist.metadata.get_all(field) or []
    return str(values[0]) if values else ""


def list_environments(catalogue: Catalogue | None = None) -> list[EnvInfo]:
    """Installed environments plus those the catalogue knows how to install."""
    found = installed()
    cat = catalogue if catalogue is not None else load_catalogue()
    for entry in cat.environments:
        if entry.id not in found:
            found[entry.id] = EnvInfo(
                id=entry.id,
                version=entry.version,
                summary=entry.summary,
                installed=False,
                install_hint=f"verihub install {entry.id}",
            )
    return [found[k] for k in sorted(found)]


def load_environment(env_id: str, **kwargs: Any) -> Environment:
    """Import and build environment ``env_id`` (only that one is imported)."""
    eps = _entry_points()
    ep = eps.get(env_id)
    if ep is None:
        raise _unknown(env_id, installed_ids=eps)
    try:
        factory = ep.load()
    except Exception as exc:
        raise EnvironmentDefinitionError(
            f"environment {env_id!r} is installed but its entry point {ep.value!r} fails to import: "
            f"{type(exc).__name__}: {exc}; reinstall it or report it to its author"
        ) from exc
    try:
        env = factory(**kwargs)
    except VerihubError:
        raise  # already says what to do
    except Exception as exc:
        raise _factory_error(env_id, factory, kwargs, exc) from exc
    if not isinstance(env, Environment):
        raise EnvironmentDefinitionError(
            f"load_environment of {env_id!r} returned {type(env).__name__}, not a verihub Environment"
        )
    env.id = env_id
    if ep.dist is not None:
        env.version = ep.dist.version
    return env


def _unknown(env_id: str, *, installed_ids: Iterable[str]) -> UnknownEnvironmentError:
    """The error for an id no installed entry point has: the install command when the catalogue
    knows the id, otherwise close matches among every known id."""
    cat = load_catalogue()
    if cat.get(env_id) is not None:
        return UnknownEnvironmentError(env_id, installable=f"verihub install {env_id}")
    known = sorted(set(installed_ids) | {e.id for e in cat.environments})
    return UnknownEnvironmentError(env_id, close=difflib.get_close_matches(env_id, known, n=3, cutoff=0.6))


def _factory_error(env_id: str, factory: Any, kwargs: dict[str, Any], exc: Exception) -> VerihubError:
    """A one-line error for a ``load_environment`` that raised: name the arguments given and
    those it accepts."""
    detail = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    accepts = _parameters(factory)
    if not kwargs:
        return EnvironmentDefinitionError(
            f"environment {env_id!r} failed to load ({detail}); it accepts ({accepts}): pass what it "
            "needs with --env-arg NAME=VALUE, or report the failure to its author"
        )
    given = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return UsageError(
        f"environment {env_id!r} rejected its arguments {given} ({detail}); it accepts "
        f"({accepts}): fix the --env-arg values"
    )


def _parameters(factory: Any) -> str:
    """``load_environment``'s parameters as written (``difficulty: int = 0``), for messages."""
    try:
        params = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        return "arguments its documentation lists"
    shown = []
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        text = p.name
        if p.annotation is not p.empty:
            ann = p.annotation
            text += f": {ann if isinstance(ann, str) else getattr(ann, '__name__', ann)}"
        if p.default is not p.empty:
            text += f" = {p.default!r}"
        shown.append(text)
    return ", ".join(shown) if shown else "no arguments"


def package_hash(env_id: str) -> str:
    """sha256 over the files of the import package providing ``env_id`` (stable across machines)."""
    ep = _entry_points().get(env_id)
    if ep is None:
        raise UnknownEnvironmentError(env_id)
    module = ep.value.split(":", 1)[0].split(".", 1)[0]
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise EnvironmentDefinitionError(f"cannot locate the package {module!r} of {env_id!r}")
    root = Path(spec.origin).parent if spec.submodule_search_locations else Path(spec.origin)
    return hash_tree(root)
