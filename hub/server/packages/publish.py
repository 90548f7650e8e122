"""Publishing a pushed bundle: unpack safely, verify, store the files, record the version.

Order of work, so that a crash at any point leaves nothing half-published: the upload is
unpacked and verified in a temporary folder; its files go into the content-addressed store
(each written to a temporary file and renamed); only then one database transaction adds the
environment (if new), the version, its files and its review job. A crash before the commit
leaves at most unreferenced blobs (:meth:`hub.server.core.storage.LocalStorage.sweep`).
"""

from __future__ import annotations

import email.parser
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion
from packaging.version import Version as Pep440
from sqlalchemy import or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from hub.registry import OWNER_RE, edit_distance, normalize
from hub.review import MANIFEST, Manifest, file_sha256, verify_submission
from hub.server.accounts import Principal, can_publish_as, get_owner
from hub.server.core import (
    PASSED,
    ArchiveError,
    EnvFile,
    Environment,
    HubProblem,
    Job,
    Limits,
    LocalStorage,
    Problem,
    Version,
    bump,
    check_sdist,
    check_wheel,
    unpack_upload,
    version_key,
    visible_envs,
)
from hub.server.packages.index import HUB_PREFIX, OWN_PROJECT
from hub.server.web import render_readme

__all__ = [
    "check_upstream_name",
    "PublishError",
    "Published",
    "check_env_id",
    "check_filenames",
    "check_requirements",
    "publish",
    "wheel_metadata",
]


class PublishError(HubProblem):
    """A push was refused."""


@dataclass(frozen=True)
class Published:
    """The outcome of a push: ``created`` is False when the same content was already there."""

    ref: str
    version: str
    created: bool
    flagged: str
    message: str


@dataclass(frozen=True)
class _Described:
    summary: str
    tags: str
    license: str


def wheel_metadata(wheel: Path) -> bytes:
    """The wheel's ``*.dist-info/METADATA`` (the PEP 658 metadata file)."""
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
        if len(names) != 1:
            raise PublishError(f"{wheel.name} has no single .dist-info/METADATA", Problem.UNPROCESSABLE)
        return zf.read(names[0])


def _pep440(text: str) -> Pep440:
    try:
        return Pep440(text)
    except InvalidVersion as exc:
        raise PublishError(f"{text!r} is not a PEP 440 version", Problem.UNPROCESSABLE) from exc


def check_filenames(wheel: str, sdist: str, distribution: str, version: str) -> None:
    """Both files' names must parse (PEP 427 wheel, PEP 625 sdist) to the manifest's distribution
    and version, so that an index can never offer a file as another version than was reviewed."""
    want_name, want_version = canonicalize_name(distribution), _pep440(version)
    try:
        wheel_name, wheel_version, _build, _tags = parse_wheel_filename(wheel)
    except InvalidWheelFilename as exc:
        raise PublishError(f"{wheel!r} is not a wheel file name: {exc}", Problem.UNPROCESSABLE) from exc
    try:
        if not sdist.endswith(".tar.gz"):  # PEP 625: an sdist is a .tar.gz
            raise InvalidSdistFilename(f"{sdist} does not end in .tar.gz")
        sdist_name, sdist_version = parse_sdist_filename(sdist)
    except InvalidSdistFilename as exc:
        raise PublishError(f"{sdist!r} is not an sdist file name: {exc}", Problem.UNPROCESSABLE) from exc
    for filename, name, ver in ((wheel, wheel_name, wheel_version), (sdist, sdist_name, sdist_version)):
        if canonicalize_name(name) != want_name or ver != want_version:
            raise PublishError(
                f"{filename} is not {distribution} {version} (the manifest's distribution and version)",
                Problem.UNPROCESSABLE,
            )


def check_requirements(requires: list[str]) -> None:
    """Refuse dependencies given as a direct URL or VCS reference (``name @ url``): pip would
    fetch them from wherever they point, never reviewed. Dependencies come from named indexes."""
    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement as exc:
            raise PublishError(
                f"Requires-Dist {line!r} does not parse: {exc}", Problem.UNPROCESSABLE
            ) from exc
        if req.url:
            raise PublishError(
                f"the dependency {req.name!r} is given as a direct URL ({line!r}); "
                "depend on a released distribution by name and version instead",
                Problem.UNPROCESSABLE,
            )


def check_entry_points(wheel: Path, version: str) -> None:
    """Every name the wheel declares in the environments' entry-point group must be a valid
    catalogue id (:func:`check_env_id`): capitals passed review but made the catalogue invalid."""
    from hub.registry import ENTRY_POINT_GROUP, EntryPointsError, parse_entry_points

    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/entry_points.txt")]
        if not names:
            return
        try:
            groups = parse_entry_points(zf.read(names[0]))
        except EntryPointsError as exc:
            raise PublishError(f"the wheel's entry_points.txt: {exc}", Problem.UNPROCESSABLE) from exc
    for group, entries in groups.items():
        if normalize(group) == normalize(ENTRY_POINT_GROUP):
            for name in entries:
                check_env_id(name, version)


def _look_alikes(session: Session, who: Principal, owner_id: int, project: str, env_id: str) -> str:
    """Why this name may impersonate another owner's environment ('' when it does not): the same
    id, or a distribution name or id one edit away. Only environments the pusher can see are
    compared, so the flag (shown on the new environment's page) never names a private one."""
    same, near = [], []
    for env in visible_envs(session, who):
        if env.owner_id == owner_id:
            continue
        if env.env_id == env_id:
            same.append(f"{env.owner.name}/{env.env_id}")
        elif edit_distance(project, env.project, cap=1) <= 1 or edit_distance(env_id, env.env_id, cap=1) == 1:
            near.append(f"{env.owner.name}/{env.env_id}")
    why = []
    if same:
        why.append(f"another owner publishes the same id: {', '.join(sorted(same))}")
    if near:
        why.append(f"name is one edit away from {', '.join(sorted(near))}")
    return "; ".join(why)


def check_env_id(env_id: str, version: str) -> None:
    """The environment id must be valid in a catalogue (the catalogue's own schema decides), so
    one push can never make the hub's catalogue unreadable."""
    from pydantic import ValidationError

    from hub.registry import CatalogueEntry

    try:
        CatalogueEntry.model_validate(
            {
                "id": env_id,
                "version": version,
                "install": {"kind": "wheel", "url": "https://hub.invalid/x.whl"},
            }
        )
    except ValidationError as exc:
        first = exc.errors()[0].get("msg", "invalid")
        raise PublishError(
            f"the environment id {env_id!r} is not valid in a catalogue: {first}", Problem.UNPROCESSABLE
        ) from exc


def _existing(session: Session, env_id: int, version: str, wheel_sha: str, manifest_sha: str) -> str:
    """'' when ``version`` is new, 'same' when it holds the same wheel (or manifest), else
    'different'. Versions are compared as PEP 440 versions (``0.1`` = ``0.1.0`` = ``0.1.0.0``) by
    their key, which the database also keeps unique: a push that races past this check is refused
    at commit (:func:`publish`)."""
    _pep440(version)
    row = session.scalars(
        select(Version).where(
            Version.environment_id == env_id,
            or_(Version.version_key == version_key(version), Version.version == version),
        )
    ).first()
    if row is None:
        return ""
    wheels = {f.sha256 for f in row.files if f.kind == "wheel"}
    if row.manifest_sha256 == manifest_sha or wheel_sha in wheels:
        return "same"
    return "different"


def _after_conflict(
    sessions: sessionmaker[Session],
    owner_id: int,
    env_id: str,
    version: str,
    wheel_sha: str,
    manifest_sha: str,
) -> tuple[str, str]:
    """What :func:`_existing` says once a concurrent push committed ('' when that push made the
    environment, not the version), and the environment's flag."""
    with sessions() as session:
        env = session.scalars(
            select(Environment).where(Environment.owner_id == owner_id, Environment.env_id == env_id)
        ).first()
        if env is None:
            return "", ""
        return _existing(session, env.id, version, wheel_sha, manifest_sha), env.flagged


def _refuse_other_content(ref: str, version: str) -> PublishError:
    return PublishError(
        f"{ref}@{version} already exists with different content; bump the version", Problem.CONFLICT
    )


_HTML = {"Accept": "text/html"}


def _upstream_has(upstream: str, project: str) -> bool:
    """Whether the upstream index lists ``project`` (PEP 503 page answers 200); raises
    :class:`PublishError` when it cannot tell."""
    from hub.registry import HTTPStatusError, InsecureURLError, open_url

    url = f"{upstream}{project}/"
    try:
        # the operator's URL: plain http is theirs to choose (pip is sent there too)
        with open_url(url, what="upstream index", timeout=10, allow_insecure=True, headers=_HTML) as resp:
            return resp.status == 200
    except HTTPStatusError as exc:
        if exc.status == 404:
            return False
        problem = f"it answered {exc.status}"
    except InsecureURLError as exc:
        problem = f"it could not be asked ({exc})"
    except OSError as exc:  # FetchError: no answer
        problem = f"it could not be reached ({exc})"
    raise PublishError(
        f"the upstream index {upstream} must be asked whether {project!r} is taken there, and {problem}; "
        f"push again later, or name the distribution {HUB_PREFIX}{project.removeprefix(HUB_PREFIX)}",
        Problem.CONFLICT,
    )


def check_upstream_name(project: str, upstream: str) -> None:
    """A new environment's distribution name may not be ``verihub`` (the hub's own), nor, unless it
    carries the hub's prefix ``verihub-`` (never looked up upstream), a name the upstream index
    has: pip, given only the hub's URL, must never mistake one for the other."""
    if project == OWN_PROJECT:
        raise PublishError(f"{project!r} is the hub's own distribution; rename yours", Problem.CONFLICT)
    if upstream and not project.startswith(HUB_PREFIX) and _upstream_has(upstream, project):
        raise PublishError(
            f"{project!r} exists on the upstream index {upstream}; name the distribution "
            f"{HUB_PREFIX}{project} (the hub's own prefix) so that installers cannot confuse the two",
            Problem.CONFLICT,
        )


def publish(
    sessions: sessionmaker[Session],
    storage: LocalStorage,
    limits: Limits,
    who: Principal,
    upload: Path,
    *,
    owner_name: str | None = None,
    private: bool = False,
    upstream: str = "",
) -> Published:
    """Publish the bundle archive ``upload`` as ``owner_name`` (default: the pusher). A new
    environment's name is checked against ``upstream`` (:func:`check_upstream_name`)."""
    owner_name = owner_name or who.name
    if not OWNER_RE.match(owner_name):
        raise PublishError(f"{owner_name!r} is not an owner name", Problem.INVALID)
    if not who.allows("push"):
        raise PublishError(
            f"this token's scope ({who.scope}) does not allow pushing; use a push token", Problem.FORBIDDEN
        )
    with sessions() as session:
        owner = get_owner(session, owner_name)
        if owner is None or not can_publish_as(session, who, owner):
            raise PublishError(f"you ({who.name}) may not publish under {owner_name!r}", Problem.FORBIDDEN)
        owner_id = owner.id
    with tempfile.TemporaryDirectory(dir=storage.tmp, prefix="push-") as tmp:
        root = unpack_upload(upload, Path(tmp) / "bundle", limits)
        wheels, sdists = sorted(root.glob("dist/*.whl")), sorted(root.glob("dist/*.tar.gz"))
        if not (root / MANIFEST).is_file() or len(wheels) != 1 or len(sdists) != 1:
            raise PublishError(
                "not a submission bundle: need manifest.json and one wheel and one sdist",
                Problem.UNPROCESSABLE,
            )
        check_wheel(wheels[0], limits)
        check_sdist(sdists[0], limits)
        found = verify_submission(root, rerun_check=False)
        if not found.ok:
            raise PublishError(
                "the bundle does not verify: " + "; ".join(found.problems[:5]), Problem.UNPROCESSABLE
            )
        manifest = Manifest.model_validate_json((root / MANIFEST).read_bytes())
        meta_bytes = wheel_metadata(wheels[0])
        meta = email.parser.BytesParser().parsebytes(meta_bytes)
        if normalize(str(meta["Name"])) != normalize(manifest.distribution) or str(meta["Version"]) != (
            manifest.version
        ):
            raise PublishError("the wheel's name or version differs from the manifest", Problem.UNPROCESSABLE)
        check_env_id(manifest.env_id, manifest.version)
        check_entry_points(wheels[0], manifest.version)
        check_filenames(wheels[0].name, sdists[0].name, manifest.distribution, manifest.version)
        check_requirements([str(r) for r in meta.get_all("Requires-Dist") or []])
        from hub.registry import wheel_package_hash

        content_hash = wheel_package_hash(wheels[0], manifest.env_id)
        blobs = {
            "bundle": (
                f"{normalize(manifest.distribution)}-{manifest.version}.bundle.tar.gz",
                storage.put_file(upload),
                upload.stat().st_size,
            ),
            "wheel": (wheels[0].name, storage.put_file(wheels[0]), wheels[0].stat().st_size),
            "sdist": (sdists[0].name, storage.put_file(sdists[0]), sdists[0].stat().st_size),
        }
        metadata_sha = storage.put_bytes(meta_bytes)
        readme = str(meta.get_payload() or "")
        readme_html = render_readme(readme)  # once, here: pages never render per request
        described = _Described(
            summary=str(meta.get("Summary") or ""),
            tags=",".join(t.strip() for t in str(meta.get("Keywords") or "").split(",") if t.strip()),
            license=str(meta.get("License") or meta.get("License-Expression") or ""),
        )
        manifest_sha = file_sha256(root / MANIFEST)
    project = normalize(manifest.distribution)
    ref = f"{owner_name}/{manifest.env_id}"
    with sessions() as session:
        known = session.scalar(
            select(Environment.id).where(
                Environment.owner_id == owner_id, Environment.env_id == manifest.env_id
            )
        )
    if known is None:
        check_upstream_name(project, upstream)
    try:
        with sessions() as session, session.begin():
            env = session.scalars(
                select(Environment).where(
                    Environment.owner_id == owner_id, Environment.env_id == manifest.env_id
                )
            ).first()
            if env is None:
                taken = session.scalars(select(Environment).where(Environment.project == project)).first()
                if taken is not None:
                    raise PublishError(
                        f"the distribution name {manifest.distribution!r} (normalised {project!r}) is "
                        "already taken; rename the distribution in pyproject.toml",
                        Problem.CONFLICT,
                    )
                env = Environment(
                    owner_id=owner_id,
                    env_id=manifest.env_id,
                    distribution=manifest.distribution,
                    project=project,
                    private=private,
                    flagged=_look_alikes(session, who, owner_id, project, manifest.env_id),
                    summary="",
                    tags="",
                    license="",
                )
                session.add(env)
            elif private and not env.private:
                raise PublishError(
                    f"{ref} is public, and a push does not change that; make it private first with "
                    f"`verihub visibility {ref} --private`, then push",
                    Problem.CONFLICT,
                )
            elif env.project != project:
                raise PublishError(
                    f"{ref} is published as {env.distribution!r}; the distribution name cannot change",
                    Problem.CONFLICT,
                )
            if not any(v.state == PASSED for v in env.versions):
                # until a version is reviewed the environment shows its pushed metadata; after
                # that, only a passed review changes it (hub.server.reviews.jobs)
                env.summary, env.tags, env.license = described.summary, described.tags, described.license
            session.flush()
            same = _existing(session, env.id, manifest.version, blobs["wheel"][1], manifest_sha)
            if same == "same":
                return Published(
                    ref, manifest.version, False, env.flagged, "this version is already published"
                )
            if same == "different":
                raise _refuse_other_content(ref, manifest.version)
            ver = Version(
                environment=env,
                version=manifest.version,
                manifest_sha256=manifest_sha,
                content_hash=content_hash,
                requires_python=str(meta.get("Requires-Python") or ""),
                readme=readme,
                readme_html=readme_html,
                summary=described.summary,
                tags=described.tags,
                license=described.license,
                report="",
                yank_reason="",
            )
            session.add(ver)
            for kind, (name, sha, size) in blobs.items():
                session.add(
                    EnvFile(
                        version=ver,
                        kind=kind,
                        filename=name,
                        sha256=sha,
                        size=size,
                        metadata_sha256=metadata_sha if kind == "wheel" else "",
                    )
                )
            session.add(Job(version=ver, worker=""))
            flagged = env.flagged
    except IntegrityError as exc:  # a concurrent push of the same version or name won
        raced, flag = _after_conflict(
            sessions, owner_id, manifest.env_id, manifest.version, blobs["wheel"][1], manifest_sha
        )
        if raced == "same":
            return Published(ref, manifest.version, False, flag, "this version is already published")
        if raced == "different":
            raise _refuse_other_content(ref, manifest.version) from exc
        raise PublishError(
            f"{ref}@{manifest.version}: a concurrent push won; this one was not stored", Problem.CONFLICT
        ) from exc
    bump(storage.root)
    return Published(ref, manifest.version, True, flagged, "published; review queued")


def copy_upload(src: Path, storage: LocalStorage) -> Path:
    """A private copy of a local bundle archive in the store's temporary folder."""
    fd, name = tempfile.mkstemp(dir=storage.tmp, prefix="upload-", suffix=".tar.gz")
    with open(fd, "wb") as out, src.open("rb") as fh:
        shutil.copyfileobj(fh, out)
    return Path(name)


__all__ += ["ArchiveError", "copy_upload"]
