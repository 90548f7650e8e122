"""The hub catalogue: environments verihub knows how to install, and where to get them.

A catalogue is a JSON document validated with pydantic::

    {"schema_version": 1,
     "environments": [
       {"id": "arith", "version": "0.1.0", "summary": "...", "tags": ["math"],
        "license": "Apache-2.0", "author": "...",
        "install": {"kind": "pypi", "name": "verihub-arith"},
        "content_hash": "sha256:..."}]}

``install`` is one of ``{"kind": "pypi", "name"}``, ``{"kind": "git", "url", "commit",
"subdirectory"?}``, ``{"kind": "path", "path"}`` (relative paths are relative to the catalogue
file) or ``{"kind": "wheel", "url"}``. ``content_hash`` is :func:`hub.registry.package.hash_tree` of the
environment's import package; ``verihub install`` refuses a package whose hash differs.

verihub ships ``hub/registry/catalogue.json``: the project's own environments, as ``path`` sources
relative to it (``../../environments/ID``, so they install from a verihub checkout) with their
content hashes. After changing an environment, regenerate the hashes (and versions) with
``python -m hub.registry.catalogue --refresh``; ``--check`` only reports stale entries. More catalogues
(a file path or an http(s)/file URL each) are listed in the user config file,
``$VERIHUB_CONFIG`` or ``~/.config/verihub/config.toml``::

    [hub]
    catalogues = ["/srv/lab-catalogue.json", "https://example.org/verihub.json"]

The shipped catalogue comes first; a later catalogue cannot shadow an (id, version) already
listed. A catalogue that cannot be read is reported in :attr:`Catalogue.problems`, never fatal.
"""

from __future__ import annotations

import json
import os
import re
import sys
import urllib.parse
import urllib.request
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from hub.env.errors import UsageError

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
    "config_path",
    "configured_catalogues",
    "load_catalogue",
    "parse_catalogue",
    "read_catalogue",
    "refresh_catalogue",
    "shipped_path",
    "source_info",
]

SCHEMA_VERSION = 1
SHIPPED_ORIGIN = "verihub (shipped)"
_ID = re.compile(r"^[a-z][a-z0-9_]*$")
_HASH = re.compile(r"^sha256:[0-9a-f]{64}$")
_FETCH_TIMEOUT_S = 10.0


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

    def merged(self, other: Catalogue) -> Catalogue:
        """This catalogue plus ``other``'s entries that do not collide with ours."""
        out = Catalogue(schema_version=SCHEMA_VERSION, environments=list(self.environments))
        out._problems = self._problems + other._problems
        have = {(e.id, e.version) for e in self.environments}
        for e in other.environments:
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


def read_catalogue(location: str) -> Catalogue:
    """Read a catalogue from a file path or an http(s)/file URL."""
    scheme = urllib.parse.urlparse(location).scheme
    if scheme in ("http", "https"):
        try:
            with urllib.request.urlopen(location, timeout=_FETCH_TIMEOUT_S) as resp:  # noqa: S310
                text = resp.read(16 * 1024 * 1024).decode("utf-8")
        except OSError as exc:
            raise UsageError(
                f"cannot fetch catalogue {location}: {exc}; check the URL in your config"
            ) from exc
        return parse_catalogue(text, origin=location)
    path = Path(urllib.parse.unquote(urllib.parse.urlparse(location).path) if scheme == "file" else location)
    path = path.expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(
            f"cannot read catalogue {path}: {exc.strerror}; fix the path in your config"
        ) from exc
    return parse_catalogue(text, origin=str(path), base_dir=path.resolve().parent)


def config_path() -> Path:
    """The user config file: ``$VERIHUB_CONFIG`` or ``~/.config/verihub/config.toml``."""
    env = os.environ.get("VERIHUB_CONFIG")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "verihub" / "config.toml"


def configured_catalogues(path: Path | None = None) -> list[str]:
    """Extra catalogue locations from the user config file (none when it does not exist)."""
    cfg = path if path is not None else config_path()
    if not cfg.is_file():
        return []
    data = _toml(cfg)
    cats = data.get("hub", {}).get("catalogues", [])
    if not isinstance(cats, list) or not all(isinstance(c, str) for c in cats):
        raise UsageError(f"{cfg}: [hub] catalogues must be a list of paths or URLs")
    base = cfg.resolve().parent
    out: list[str] = []
    for c in cats:
        is_url = urllib.parse.urlparse(c).scheme in ("http", "https", "file")
        out.append(c if is_url or Path(c).expanduser().is_absolute() else str(base / c))
    return out


def shipped_path() -> Path:
    """Where the shipped catalogue file is (``hub/registry/catalogue.json``)."""
    return Path(str(resources.files("hub.registry").joinpath("catalogue.json")))


def _shipped() -> Catalogue:
    path = shipped_path()
    return parse_catalogue(
        path.read_text(encoding="utf-8"), origin=SHIPPED_ORIGIN, base_dir=path.resolve().parent
    )


def load_catalogue(*, extra: Sequence[str] | None = None, use_config: bool = True) -> Catalogue:
    """The shipped catalogue merged with ``extra`` locations and those of the user config.

    Unreadable extra catalogues are recorded in :attr:`Catalogue.problems`, not raised, so that
    a broken URL never stops ``verihub eval``.
    """
    cat = _shipped()
    locations: list[str] = list(extra or ())
    if use_config:
        try:
            locations += configured_catalogues()
        except UsageError as exc:
            cat._problems.append(str(exc))
    for loc in locations:
        try:
            cat = cat.merged(read_catalogue(loc))
        except UsageError as exc:
            cat._problems.append(str(exc))
    return cat


def _toml(path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError as exc:
            raise UsageError(f"reading {path} on Python 3.10 needs `pip install tomli`") from exc
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {exc}; fix or remove it") from exc
    return data


def source_info(folder: Path) -> tuple[str, str, str]:
    """(environment id, version, content hash) of a package source folder.

    The hash is :func:`hub.registry.package.hash_tree` of the import package the entry point names, the
    same as :func:`hub.registry.entrypoints.package_hash` once installed (the wheel holds the same files).
    """
    from hub.registry.package import ENTRY_POINT_GROUP, hash_tree

    project = _toml(folder / "pyproject.toml").get("project", {})
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
    left alone. Used by ``python -m hub.registry.catalogue --refresh`` on the shipped catalogue.
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
        prog="python -m hub.registry.catalogue", description=__doc__.split("\n")[0]
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
            f"regenerate it: python -m hub.registry.catalogue --refresh {args.file or ''}".rstrip(),
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
