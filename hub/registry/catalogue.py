"""The hub catalogue: environments verihub knows how to install, and where to get them.

A catalogue is a JSON document (schema version 1) validated with pydantic: entries with an id,
version, an ``install`` source (``pypi``, ``git``, ``path`` or ``wheel``), a ``content_hash``
(:func:`hub.registry.package.hash_tree`) and an optional pinned ``entry_point``. Entry points:
:func:`load_catalogue` (the shipped ``catalogue.json``, then those of the user config file) and
:class:`Catalogue`. The format and the shipped catalogue: docs/writing-an-environment.md, "Publish
in a catalogue"; the config file: docs/configuration.md.

Rules (docs/bounties.md, "Installing"): an id belongs to the catalogue that lists it first unless
``[hub.pins]`` gives it to another; plain-http catalogues and redirects off https are refused
(:mod:`hub.registry.fetch`); a catalogue fetched over http(s) may not install from this machine's
files (:func:`without_local_sources`); ``URL#sha256=HEX`` pins a catalogue's bytes. A catalogue that
cannot be read, and every entry left out, is reported in :attr:`Catalogue.problems`, never fatal.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from hub.env import UsageError
from hub.registry.config import configured_catalogues, configured_pins, is_loopback, split_pin
from hub.registry.fetch import open_url

__all__ = [
    "SCHEMA_VERSION",
    "SHIPPED_ORIGIN",
    "Catalogue",
    "CatalogueEntry",
    "GitSource",
    "InstallSource",
    "PathSource",
    "PypiSource",
    "WheelSource",
    "load_catalogue",
    "parse_catalogue",
    "read_catalogue",
    "shipped_path",
    "without_local_sources",
]

SCHEMA_VERSION = 1
SHIPPED_ORIGIN = "verihub (shipped)"
_ID = re.compile(r"^[a-z][a-z0-9_]*$")
_HASH = re.compile(r"^sha256:[0-9a-f]{64}$")
_FETCH_TIMEOUT_S = 10.0
#: Where a verihub hub serves its catalogue document (public environments, reviewed versions).


class PypiSource(BaseModel):
    """A distribution on a package index (``pip install NAME==VERSION``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["pypi"] = "pypi"
    name: str = Field(description="Distribution name, e.g. verihub-arith.")

    def describe(self) -> str:
        return f"pypi:{self.name}"


class GitSource(BaseModel):
    """A git repository pinned to one commit."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["git"] = "git"
    url: str = Field(description="Repository URL (https://...).")
    commit: str = Field(pattern=r"^[0-9a-f]{7,40}$", description="Commit hash (never a branch).")
    subdirectory: str | None = Field(default=None, description="Folder of the package in the repository.")

    def describe(self) -> str:
        sub = f"#{self.subdirectory}" if self.subdirectory else ""
        return f"git:{self.url}@{self.commit}{sub}"


class PathSource(BaseModel):
    """A local folder holding the package (``pyproject.toml`` at its top)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["path"] = "path"
    path: str = Field(description="Folder; relative paths are relative to the catalogue file.")

    def describe(self) -> str:
        return f"path:{self.path}"


class WheelSource(BaseModel):
    """A built wheel (an http(s) or file URL, or a local file path)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["wheel"] = "wheel"
    url: str = Field(description="Where the .whl file is.")

    def describe(self) -> str:
        return f"wheel:{self.url}"


InstallSource = Annotated[PypiSource | GitSource | PathSource | WheelSource, Field(discriminator="kind")]


class CatalogueEntry(BaseModel):
    """One released version of one environment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Environment id (the entry-point name).")
    version: str = Field(description="Version of the distribution this entry installs.")
    summary: str = ""
    tags: tuple[str, ...] = ()
    license: str = Field(default="", description="SPDX licence of the environment (code and data).")
    author: str = ""
    install: InstallSource = Field(description="Where to install it from.")
    content_hash: str | None = Field(default=None, description="sha256:... of the import package.")
    entry_point: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$",
        description="The environment's entry-point target (package.module:attribute); when given, a "
        "wheel whose entry point names another target is refused (the content hash does not cover it).",
    )
    extra_files: tuple[str, ...] = Field(
        default=(),
        description="Glob patterns of files the wheel may install outside its import package "
        "(``scripts/NAME`` for a console script); anything else undeclared is refused.",
    )
    extra_hash: str | None = Field(
        default=None,
        description="sha256:... over the declared extra files (paths and bytes); required with extra_files.",
    )
    catalogue: str = Field(default="", description="Which catalogue listed it (filled in on load).")

    @model_validator(mode="before")
    @classmethod
    def _legacy_source(cls, data: Any) -> Any:
        # Schema 1 drafts wrote ``"source": "dist-name"``; read it as a PyPI source.
        if isinstance(data, dict) and "source" in data and "install" not in data:
            data = dict(data)
            data["install"] = {"kind": "pypi", "name": data.pop("source")}
        return data

    @model_validator(mode="after")
    def _check(self) -> CatalogueEntry:
        if not _ID.match(self.id):
            raise ValueError(f"id {self.id!r} must be lowercase letters, digits and underscores")
        if self.content_hash is not None and not _HASH.match(self.content_hash):
            raise ValueError("content_hash must look like sha256:<64 hex digits>")
        if self.extra_files and (self.extra_hash is None or not _HASH.match(self.extra_hash)):
            raise ValueError(
                "extra_files needs extra_hash (sha256:<64 hex digits>) so the extra files are pinned too"
            )
        return self

    @property
    def source(self) -> str:
        """Where it installs from, in one line (for display)."""
        return self.install.describe()

    def matches(self, text: str) -> bool:
        """Case-insensitive search over id, summary, tags, author and licence."""
        hay = " ".join((self.id, self.summary, " ".join(self.tags), self.author, self.license)).casefold()
        return all(word in hay for word in text.casefold().split())


def _version_key(version: str) -> tuple[Any, ...]:
    try:
        from packaging.version import Version

        return (1, Version(version))
    except Exception:  # not PEP 440: order as text, below every valid version
        return (0, version)


class Catalogue(BaseModel):
    """A list of catalogue entries; an id may appear once per version."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    environments: list[CatalogueEntry] = Field(default_factory=list)
    _problems: list[str] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _check(self) -> Catalogue:
        if self.schema_version > SCHEMA_VERSION:
            raise ValueError(
                f"catalogue schema_version {self.schema_version} is newer than this verihub reads "
                f"({SCHEMA_VERSION}); upgrade verihub"
            )
        seen: set[tuple[str, str]] = set()
        for e in self.environments:
            if (e.id, e.version) in seen:
                raise ValueError(f"{e.id}@{e.version} is listed twice")
            seen.add((e.id, e.version))
        return self

    @property
    def problems(self) -> list[str]:
        """Catalogues that could not be read, and entries that were shadowed."""
        return list(self._problems)

    def versions(self, env_id: str) -> list[CatalogueEntry]:
        """Entries of ``env_id``, newest version first."""
        found = [e for e in self.environments if e.id == env_id]
        return sorted(found, key=lambda e: _version_key(e.version), reverse=True)

    def get(self, env_id: str, version: str | None = None) -> CatalogueEntry | None:
        """The entry of ``env_id`` at ``version`` (the newest when None), or None."""
        for e in self.versions(env_id):
            if version is None or e.version == version:
                return e
        return None

    def search(self, text: str) -> list[CatalogueEntry]:
        """Newest entry of each environment matching every word of ``text``."""
        ids = sorted({e.id for e in self.environments})
        newest = [self.get(i) for i in ids]
        return [e for e in newest if e is not None and e.matches(text)]

    def owner(self, env_id: str) -> str | None:
        """The catalogue that owns ``env_id`` (the first one that listed it), or None."""
        return next((e.catalogue for e in self.environments if e.id == env_id), None)

    def merged(self, other: Catalogue, *, pins: Mapping[str, str] | None = None) -> Catalogue:
        """This catalogue plus ``other``'s entries for ids it owns (or that ``pins`` give it).

        ``pins`` maps an environment id to the catalogue location that alone may list it.
        """
        pinned = dict(pins or {})
        out = Catalogue(schema_version=SCHEMA_VERSION, environments=list(self.environments))
        out._problems = self._problems + other._problems
        have = {(e.id, e.version) for e in self.environments}
        for e in other.environments:
            owner = out.owner(e.id)
            if pinned.get(e.id) == e.catalogue and owner not in (None, e.catalogue):
                out.environments = [x for x in out.environments if x.id != e.id]  # the pin wins
                have = {(x.id, x.version) for x in out.environments}
                out._problems.append(f"{e.id}: pinned to {e.catalogue}; entries from {owner} dropped")
                owner = None
            if owner is not None and owner != e.catalogue:
                out._problems.append(
                    f"{e.id}@{e.version} from {e.catalogue} ignored: {e.id} belongs to {owner}; "
                    f'pin it in the config ([hub.pins] {e.id} = "{e.catalogue}") if you trust that catalogue'
                )
                continue
            if e.id in pinned and pinned[e.id] != e.catalogue:
                out._problems.append(
                    f"{e.id}@{e.version} from {e.catalogue} ignored: pinned to {pinned[e.id]}"
                )
                continue
            if (e.id, e.version) in have:
                out._problems.append(f"{e.id}@{e.version} from {e.catalogue} ignored: already listed")
                continue
            out.environments.append(e)
            have.add((e.id, e.version))
        return out


def parse_catalogue(text: str, *, origin: str, base_dir: Path | None = None) -> Catalogue:
    """Validate catalogue JSON; relative ``path`` sources are resolved against ``base_dir``."""
    try:
        raw = json.loads(text)
        cat = Catalogue.model_validate(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(f"catalogue {origin} is not valid JSON (line {exc.lineno}: {exc.msg})") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise UsageError(
            f"catalogue {origin} does not follow the catalogue schema ({exc.error_count()} problems; "
            f"first at {loc}: {first['msg']}); see docs/writing-an-environment.md"
        ) from exc
    fixed: list[CatalogueEntry] = []
    for e in cat.environments:
        update: dict[str, Any] = {"catalogue": origin}
        if (
            isinstance(e.install, PathSource)
            and base_dir is not None
            and not Path(e.install.path).is_absolute()
        ):
            update["install"] = PathSource(path=str((base_dir / e.install.path).resolve()))
        fixed.append(e.model_copy(update=update))
    cat.environments = fixed
    return cat


def read_catalogue(location: str, *, allow_insecure: bool = False) -> Catalogue:
    """Read a catalogue from a file path or an http(s)/file URL (see the module docstring)."""
    where, digest = split_pin(location)
    parsed = urllib.parse.urlparse(where)
    scheme = parsed.scheme
    if scheme == "http" and not allow_insecure and not is_loopback(parsed.hostname):
        raise UsageError(
            f"catalogue {where} is plain http, which anyone on the path can change; use https, "
            "or pass --allow-insecure if you accept that"
        )
    if scheme in ("http", "https"):
        try:
            with open_url(
                where, what="catalogue", timeout=_FETCH_TIMEOUT_S, allow_insecure=allow_insecure
            ) as resp:
                data = resp.read(16 * 1024 * 1024)
        except OSError as exc:  # hub.registry.fetch's errors are OSErrors
            raise UsageError(f"cannot fetch catalogue {where}: {exc}; check the URL in your config") from exc
        _check_pin(where, data, digest)
        return without_local_sources(parse_catalogue(data.decode("utf-8", "replace"), origin=where))
    path = Path(urllib.parse.unquote(parsed.path) if scheme == "file" else where)
    path = path.expanduser()
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(
            f"cannot read catalogue {path}: {exc.strerror}; fix the path in your config"
        ) from exc
    _check_pin(str(path), data, digest)
    return parse_catalogue(data.decode("utf-8", "replace"), origin=str(path), base_dir=path.resolve().parent)


def _network_url(url: str) -> bool:
    if re.fullmatch(r"[A-Za-z0-9_.-]+@[A-Za-z0-9.-]+:[^:/].*", url):  # git's scp-like ssh form
        return True
    parts = urllib.parse.urlsplit(url.removeprefix("git+"))
    return parts.scheme in ("https", "http", "ssh") and bool(parts.hostname)


def without_local_sources(cat: Catalogue) -> Catalogue:
    """``cat`` without the entries that install from this machine (a ``path`` source, a wheel or
    git URL that is not a network URL, or, for a catalogue off loopback, a loopback URL); each one
    left out is named in ``problems``."""
    kept: list[CatalogueEntry] = []
    for e in cat.environments:
        src = e.install
        remote_origin = not is_loopback(urllib.parse.urlsplit(e.catalogue).hostname)
        url = src.url if isinstance(src, (WheelSource, GitSource)) else ""
        local = isinstance(src, PathSource) or (
            isinstance(src, (WheelSource, GitSource))
            and (
                not _network_url(url)
                or (remote_origin and is_loopback(urllib.parse.urlsplit(url.removeprefix("git+")).hostname))
            )
        )
        if local:
            cat._problems.append(
                f"{e.id}@{e.version} from {e.catalogue} ignored: a catalogue fetched over the network "
                f"may not install from this machine's files or services ({src.describe()})"
            )
        else:
            kept.append(e)
    cat.environments = kept
    return cat


def _check_pin(where: str, data: bytes, digest: str | None) -> None:
    if digest is not None and hashlib.sha256(data).hexdigest() != digest:
        raise UsageError(
            f"catalogue {where} does not match its pinned sha256 ({digest[:12]}...); it changed since "
            "you pinned it: check it, then update the pin in your config"
        )


def shipped_path() -> Path:
    """Where the shipped catalogue file is (``hub/registry/catalogue.json``)."""
    return Path(str(resources.files("hub.registry").joinpath("catalogue.json")))


def _shipped() -> Catalogue:
    path = shipped_path()
    return parse_catalogue(
        path.read_text(encoding="utf-8"), origin=SHIPPED_ORIGIN, base_dir=path.resolve().parent
    )


def load_catalogue(
    *, extra: Sequence[str] | None = None, use_config: bool = True, allow_insecure: bool = False
) -> Catalogue:
    """The shipped catalogue merged with ``extra`` locations and those of the user config.

    Unreadable or refused catalogues are recorded in :attr:`Catalogue.problems`, not raised, so
    that a broken URL never stops ``verihub eval``. Origins and pins: see the module docstring.
    """
    cat = _shipped()
    locations: list[str] = list(extra or ())
    pins: dict[str, str] = {}
    if use_config:
        try:
            locations += configured_catalogues()
            pins = configured_pins()
        except UsageError as exc:
            cat._problems.append(str(exc))
    for loc in locations:
        try:
            cat = cat.merged(read_catalogue(loc, allow_insecure=allow_insecure), pins=pins)
        except UsageError as exc:
            cat._problems.append(str(exc))
    return cat
