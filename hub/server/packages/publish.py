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

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from hub.registry.names import OWNER_RE, edit_distance, normalize
from hub.review.submit import MANIFEST, Manifest, file_sha256
from hub.review.verify import verify_submission
from hub.server.accounts.users import Principal, can_publish_as, get_owner
from hub.server.core.archive import ArchiveError, check_sdist, check_wheel, unpack_upload
from hub.server.core.cache import bump
from hub.server.core.config import Limits
from hub.server.core.models import EnvFile, Environment, Job, Version
from hub.server.core.problems import HubProblem, Problem
from hub.server.core.storage import LocalStorage

__all__ = ["PublishError", "Published", "publish", "wheel_metadata"]


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


def wheel_metadata(wheel: Path) -> bytes:
    """The wheel's ``*.dist-info/METADATA`` (the PEP 658 metadata file)."""
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
        if len(names) != 1:
            raise PublishError(f"{wheel.name} has no single .dist-info/METADATA", Problem.UNPROCESSABLE)
        return zf.read(names[0])


def _look_alikes(session: Session, owner_id: int, project: str, env_id: str) -> str:
    """Why this name may impersonate another owner's environment ('' when it does not)."""
    found = []
    for env in session.scalars(select(Environment).where(Environment.owner_id != owner_id)):
        if edit_distance(project, env.project, cap=1) == 1 or edit_distance(env_id, env.env_id, cap=1) == 1:
            found.append(f"{env.owner.name}/{env.env_id}")
    return f"name is one edit away from {', '.join(sorted(found))}" if found else ""


def _existing(session: Session, env: Environment, version: str, wheel_sha: str, manifest_sha: str) -> str:
    """'' when ``version`` is new, 'same' when it holds the same wheel (or manifest), else 'different'."""
    row = session.scalars(
        select(Version).where(Version.environment_id == env.id, Version.version == version)
    ).first()
    if row is None:
        return ""
    wheels = {f.sha256 for f in row.files if f.kind == "wheel"}
    if row.manifest_sha256 == manifest_sha or wheel_sha in wheels:
        return "same"
    return "different"


def publish(
    sessions: sessionmaker[Session],
    storage: LocalStorage,
    limits: Limits,
    who: Principal,
    upload: Path,
    *,
    owner_name: str | None = None,
    private: bool = False,
) -> Published:
    """Publish the bundle archive ``upload`` as ``owner_name`` (default: the pusher)."""
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
        from hub.registry.install import wheel_package_hash

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
        manifest_sha = file_sha256(root / MANIFEST)
    project = normalize(manifest.distribution)
    ref = f"{owner_name}/{manifest.env_id}"
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
                    flagged=_look_alikes(session, owner_id, project, manifest.env_id),
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
            env.summary = str(meta.get("Summary") or "")
            env.tags = ",".join(t.strip() for t in str(meta.get("Keywords") or "").split(",") if t.strip())
            env.license = str(meta.get("License") or meta.get("License-Expression") or "")
            session.flush()
            same = _existing(session, env, manifest.version, blobs["wheel"][1], manifest_sha)
            if same == "same":
                return Published(
                    ref, manifest.version, False, env.flagged, "this version is already published"
                )
            if same == "different":
                raise PublishError(
                    f"{ref}@{manifest.version} already exists with different content; bump the version",
                    Problem.CONFLICT,
                )
            ver = Version(
                environment=env,
                version=manifest.version,
                manifest_sha256=manifest_sha,
                content_hash=content_hash,
                requires_python=str(meta.get("Requires-Python") or ""),
                readme=readme,
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
