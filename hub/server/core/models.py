"""The hub's database schema (SQLAlchemy 2 declarative models).

Owners are users or organisations (one namespace: ``owner/id``); an organisation's members may
publish into it. Tokens are stored only as a salted scrypt hash (:mod:`hub.server.accounts.tokens`).
An environment has versions; each version has files (blobs in the artifact store, named by
sha256) and one review job. The schema is created and changed only by the Alembic migrations
in ``hub/server/core/migrations`` (``verihub hub migrate``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from packaging.utils import canonicalize_version
from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy import false as sql_false
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

__all__ = [
    "Base",
    "Bounty",
    "BountyEvent",
    "Correction",
    "EnvFile",
    "Environment",
    "HubEval",
    "Invitation",
    "Job",
    "Member",
    "Owner",
    "REGRADE_STATES",
    "RolloutLabel",
    "Run",
    "RunRollout",
    "Token",
    "Version",
    "WebSession",
    "utcnow",
    "version_key",
]

#: Review states of a version (and so of its job).
QUEUED, RUNNING, PASSED, FAILED = "queued", "running", "passed", "failed"
#: A review the hub could not judge (its host too slow), after the retries.
REVIEW_ERROR = "error"

#: Re-verification states of a pushed run (``Run.verify_state``): waiting for (or held by) a
#: worker, its sampled regrade agreed, a verdict differed, or the regrade could not be done.
PENDING, VERIFIED, UNVERIFIED, VERIFY_ERROR = "pending", "verified", "unverified", "error"
#: How the API names those states (``regrade_state``): what the re-verification checked, which
#: is that a sample of the pushed verdicts re-grade the same, not that a model produced them.
REGRADE_STATES = {
    PENDING: "pending",
    VERIFIED: "regraded_consistent",
    UNVERIFIED: "regraded_inconsistent",
    VERIFY_ERROR: "error",
}


def version_key(version: str) -> str:
    """The PEP 440 canonical form of ``version`` (``0.1``, ``0.1.0`` and ``0.1.0.0`` -> ``0.1``):
    versions of one environment are unique by it. A string that is not PEP 440 keys as itself."""
    return canonicalize_version(version, strip_trailing_zero=True)


def _version_key_default(ctx: Any) -> str:
    return version_key(str(ctx.get_current_parameters()["version"]))


def utcnow() -> dt.datetime:
    """Now, in UTC, without tzinfo (stored as naive UTC in every backend)."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


class Base(DeclarativeBase):
    """Declarative base of every hub table."""


class Owner(Base):
    """A user (``kind='user'``) or an organisation (``kind='org'``)."""

    __tablename__ = "owners"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(8))
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    is_reviewer: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sql_false())
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    #: argon2 hash of the user's web password ("" : none set, no browser sign-in)
    password_hash: Mapped[str] = mapped_column(Text, default="", server_default="")


class Member(Base):
    """User ``user_id`` belongs to organisation ``org_id``."""

    __tablename__ = "members"
    org_id: Mapped[int] = mapped_column(ForeignKey("owners.id"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("owners.id"), primary_key=True)


class Token(Base):
    """An API token: ``vh_<id>_<secret>``; only ``id`` is stored in clear."""

    __tablename__ = "tokens"
    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("owners.id"))
    scope: Mapped[str] = mapped_column(String(8))
    salt: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    user: Mapped[Owner] = relationship()


class Environment(Base):
    """``owner/env_id``, published as distribution ``distribution`` (unique once normalised)."""

    __tablename__ = "environments"
    __table_args__ = (UniqueConstraint("owner_id", "env_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("owners.id"))
    env_id: Mapped[str] = mapped_column(String(100))
    distribution: Mapped[str] = mapped_column(String(200))
    project: Mapped[str] = mapped_column(String(200), unique=True)  # PEP 503 normalised
    private: Mapped[bool] = mapped_column(Boolean, default=False)
    flagged: Mapped[str] = mapped_column(Text, default="")  # why a person should look at it
    summary: Mapped[str] = mapped_column(Text, default="")
    tags: Mapped[str] = mapped_column(Text, default="")  # comma separated
    license: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    owner: Mapped[Owner] = relationship()
    versions: Mapped[list[Version]] = relationship(back_populates="environment")


class Version(Base):
    """One pushed version: its bundle, review state and report, yank flag."""

    __tablename__ = "versions"
    __table_args__ = (
        UniqueConstraint("environment_id", "version"),
        UniqueConstraint("environment_id", "version_key", name="ux_versions_env_version_key"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environments.id"))
    version: Mapped[str] = mapped_column(String(64))
    #: :func:`version_key` of ``version``; unique per environment, so two pushes of one PEP 440
    #: version (``0.1`` and ``0.1.0``) cannot both land, even when they race
    version_key: Mapped[str] = mapped_column(String(80), default=_version_key_default, server_default="")
    manifest_sha256: Mapped[str] = mapped_column(String(80))
    content_hash: Mapped[str] = mapped_column(String(80))  # hash_tree of the import package
    requires_python: Mapped[str] = mapped_column(String(100), default="")
    readme: Mapped[str] = mapped_column(Text, default="")
    readme_html: Mapped[str] = mapped_column(Text, default="", server_default="")  # rendered at publish
    summary: Mapped[str] = mapped_column(Text, default="", server_default="")
    tags: Mapped[str] = mapped_column(Text, default="", server_default="")  # comma separated
    license: Mapped[str] = mapped_column(Text, default="", server_default="")
    state: Mapped[str] = mapped_column(String(8), default=QUEUED)
    report: Mapped[str] = mapped_column(Text, default="")
    # the verifier card the review measured on the package's label file (JSON), "" when none
    verifier_card: Mapped[str] = mapped_column(Text, default="", server_default="")
    yanked: Mapped[bool] = mapped_column(Boolean, default=False)
    yank_reason: Mapped[str] = mapped_column(Text, default="")
    uploaded_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    reviewed_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    # wheel and sdist downloads from /files/ (a number only: nothing about who downloaded)
    downloads: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    environment: Mapped[Environment] = relationship(back_populates="versions")
    files: Mapped[list[EnvFile]] = relationship(back_populates="version")


class EnvFile(Base):
    """A file of a version: ``wheel``, ``sdist`` or ``bundle`` (the uploaded archive)."""

    __tablename__ = "files"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id"))
    kind: Mapped[str] = mapped_column(String(8))
    filename: Mapped[str] = mapped_column(String(255))
    sha256: Mapped[str] = mapped_column(String(64))
    size: Mapped[int] = mapped_column(Integer)
    metadata_sha256: Mapped[str] = mapped_column(String(64), default="")  # wheels: METADATA blob
    version: Mapped[Version] = relationship(back_populates="files")


class Job(Base):
    """A review job. ``lease_until`` is pushed forward by the worker's heartbeat; a running job
    whose lease ran out (its worker died) is taken again."""

    __tablename__ = "jobs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id"), unique=True)
    state: Mapped[str] = mapped_column(String(8), default=QUEUED)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    worker: Mapped[str] = mapped_column(String(200), default="")
    lease_until: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    started_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    version: Mapped[Version] = relationship()


class Run(Base):
    """An evaluation run of one environment version: pushed (``verihub results push``), or, with
    ``origin`` ``hub``, run by the hub's worker against ``endpoint`` (:class:`HubEval`).

        ``owner`` is who pushed it: the authenticated user, never a name taken from the upload.
        ``entry`` and ``summary`` are JSON the server computed from the uploaded rollouts (the
        leaderboard's verification), not the uploaded summary. The run directory itself is kept as
        a blob in the artifact store (``archive_sha256``). Private runs are visible to their owner
        (and admins) only. ``verify_*`` is the re-verification queue: a worker claims a pending run
        (or one whose lease ran out), re-grades a sample of its rollouts with the version's own
        grader in the sandbox, and records ``verified`` or ``unverified`` with its report.
    """

    __tablename__ = "runs"
    __table_args__ = (
        UniqueConstraint("owner_id", "version_id", "run_sha256", name="ux_runs_owner_version_run"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    public_id: Mapped[str] = mapped_column(String(32), unique=True)  # random; used in URLs
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id"))
    owner_id: Mapped[int] = mapped_column(ForeignKey("owners.id"))
    model: Mapped[str] = mapped_column(String(200))
    label: Mapped[str] = mapped_column(String(200), default="")
    private: Mapped[bool] = mapped_column(Boolean, default=True)
    archive_sha256: Mapped[str] = mapped_column(String(64))
    run_sha256: Mapped[str] = mapped_column(String(64))  # identity of the run's content
    entry: Mapped[str] = mapped_column(Text)  # leaderboard BoardEntry, JSON
    summary: Mapped[str] = mapped_column(Text)  # recomputed hub.run Summary, JSON
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    verify_state: Mapped[str] = mapped_column(String(12), default=PENDING)
    verify_report: Mapped[str] = mapped_column(Text, default="")
    verify_attempts: Mapped[int] = mapped_column(Integer, default=0)
    verify_worker: Mapped[str] = mapped_column(String(200), default="")
    verify_lease_until: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    verified_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    config: Mapped[str] = mapped_column(Text, default="", server_default="")  # config.json ("": not stored)
    rollouts_stored: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sql_false())
    #: ``pushed`` (a user ran it and pushed it) or ``hub`` (the worker ran it against ``endpoint``)
    origin: Mapped[str] = mapped_column(String(8), default="pushed", server_default="pushed")
    endpoint: Mapped[str] = mapped_column(String(300), default="", server_default="")
    version: Mapped[Version] = relationship()
    owner: Mapped[Owner] = relationship()


class Bounty(Base):
    """A bounty: a specification (Markdown) and a reward, claimed, worked on and reviewed.

    ``state`` moves only through :data:`hub.server.bounties.workflow.TRANSITIONS`; every move is a
    :class:`BountyEvent`. ``version`` is the submitted environment version; the ``payout_*``
    fields are the record of the payment once an accepted bounty is paid.
    """

    __tablename__ = "bounties"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    spec: Mapped[str] = mapped_column(Text)  # Markdown
    #: ``spec`` rendered and sanitised once, when saved (pages show this, never render per request);
    #: '' for a bounty saved before the column existed: rendered and stored on its first view
    spec_html: Mapped[str] = mapped_column(Text, default="", server_default="")
    reward: Mapped[str] = mapped_column(String(200))  # free text: "500 EUR", "2000 GPU-hours"
    deadline: Mapped[dt.datetime] = mapped_column(DateTime)
    claim_days: Mapped[float] = mapped_column(Float, default=7.0)
    state: Mapped[str] = mapped_column(String(16))
    creator_id: Mapped[int] = mapped_column(ForeignKey("owners.id"))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    claimant_id: Mapped[int | None] = mapped_column(ForeignKey("owners.id"), nullable=True)
    claimed_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    claim_expires_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    version_id: Mapped[int | None] = mapped_column(ForeignKey("versions.id"), nullable=True)
    submitted_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    payout_amount: Mapped[str] = mapped_column(String(200), default="")
    payout_reference: Mapped[str] = mapped_column(Text, default="")
    payout_recipient_id: Mapped[int | None] = mapped_column(ForeignKey("owners.id"), nullable=True)
    payout_by_id: Mapped[int | None] = mapped_column(ForeignKey("owners.id"), nullable=True)
    payout_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    creator: Mapped[Owner] = relationship(foreign_keys=[creator_id])
    claimant: Mapped[Owner | None] = relationship(foreign_keys=[claimant_id])
    version: Mapped[Version | None] = relationship()
    payout_recipient: Mapped[Owner | None] = relationship(foreign_keys=[payout_recipient_id])
    payout_by: Mapped[Owner | None] = relationship(foreign_keys=[payout_by_id])
    events: Mapped[list[BountyEvent]] = relationship(order_by="BountyEvent.id")


class BountyEvent(Base):
    """One transition of a bounty: who (None: the hub itself), when, from and to which state."""

    __tablename__ = "bounty_events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bounty_id: Mapped[int] = mapped_column(ForeignKey("bounties.id"))
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("owners.id"), nullable=True)
    at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    action: Mapped[str] = mapped_column(String(16))
    from_state: Mapped[str] = mapped_column(String(16), default="")  # "" when created
    to_state: Mapped[str] = mapped_column(String(16))
    note: Mapped[str] = mapped_column(Text, default="")
    version_id: Mapped[int | None] = mapped_column(ForeignKey("versions.id"), nullable=True)
    actor: Mapped[Owner | None] = relationship()
    version: Mapped[Version | None] = relationship()


class RunRollout(Base):
    """One rollout of a pushed run, stored at ingestion so that run pages page through them.

    ``idx`` is the rollout's 0-based line number in the run's ``rollouts.jsonl`` (the order it was
    recorded in); ``(run_id, idx)`` is the key other tables refer to a rollout by. ``status`` is
    ``passed``, ``failed`` or ``errored``; ``transcript`` is the rollout's JSON line as pushed,
    zlib-compressed (:mod:`hub.server.results.rollout_store`).
    """

    __tablename__ = "rollouts"
    __table_args__ = (
        UniqueConstraint("run_id", "idx", name="ux_rollouts_run_idx"),
        # one index per order a page sorts by, each holding the columns a page filters on, so a
        # filtered page walks one index and reads no table row until its 50 are found
        Index("ix_rollouts_run_order", "run_id", "idx", "status", "reward"),
        Index("ix_rollouts_run_task", "run_id", "task_id", "rollout_index", "status", "reward"),
        Index("ix_rollouts_run_status", "run_id", "status", "idx", "reward"),
        Index("ix_rollouts_run_reward", "run_id", "reward", "idx", "status"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"))
    idx: Mapped[int] = mapped_column(Integer)
    task_id: Mapped[str] = mapped_column(Text)
    rollout_index: Mapped[int] = mapped_column(Integer)  # within its task
    status: Mapped[str] = mapped_column(String(8))
    error_kind: Mapped[str] = mapped_column(String(16), default="")
    reward: Mapped[float | None] = mapped_column(Float, nullable=True)
    passed: Mapped[bool] = mapped_column(Boolean, default=False)
    grade_status: Mapped[str] = mapped_column(String(16), default="")
    extracted: Mapped[str] = mapped_column(Text, default="")  # cut to a few hundred characters
    turns: Mapped[int] = mapped_column(Integer, default=0)
    n_messages: Mapped[int] = mapped_column(Integer, default=0)
    size: Mapped[int] = mapped_column(Integer, default=0)  # bytes of the JSON line
    transcript: Mapped[bytes] = mapped_column(LargeBinary)


class WebSession(Base):
    """A signed-in browser: ``id`` is the sha256 of the cookie's secret (never the secret)."""

    __tablename__ = "web_sessions"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("owners.id"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    last_seen_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime)
    user: Mapped[Owner] = relationship()


class Invitation(Base):
    """A single-use sign-up code: ``code_hash`` is the sha256 of the code (never the code)."""

    __tablename__ = "invitations"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    reviewer: Mapped[bool] = mapped_column(Boolean, default=False)
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("owners.id"), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime)
    used_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    used_by_id: Mapped[int | None] = mapped_column(ForeignKey("owners.id"), nullable=True)


class RolloutLabel(Base):
    """A person's verdict on one rollout of a pushed run: ``value`` is ``correct``, ``incorrect``,
    ``reward_hack`` or ``unclear``. Rows are never edited: a newer row for the same rollout
    supersedes the older ones for display, and all of them stay as the history.
    ``rollout`` is the rollout's 0-based line in the run's ``rollouts.jsonl``."""

    __tablename__ = "rollout_labels"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"), index=True)
    rollout: Mapped[int] = mapped_column(Integer)
    value: Mapped[str] = mapped_column(String(16))
    note: Mapped[str] = mapped_column(Text, default="", server_default="")
    author_id: Mapped[int] = mapped_column(ForeignKey("owners.id"))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    run: Mapped[Run] = relationship()
    author: Mapped[Owner] = relationship()


class Correction(Base):
    """A corrected copy of one rollout: its transcript with edited assistant turns (``messages``,
    JSON), graded by the version's own grader (``reward``, ``passed``, ``grade`` JSON; ``state``
    ``graded`` or ``error`` with ``error`` saying why), its parent rollout and its author. ``rerun``:
    the user and tool turns were made by re-running the environment on the edited actions."""

    __tablename__ = "corrections"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"), index=True)
    rollout: Mapped[int] = mapped_column(Integer)
    author_id: Mapped[int] = mapped_column(ForeignKey("owners.id"))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    messages: Mapped[str] = mapped_column(Text)
    note: Mapped[str] = mapped_column(Text, default="", server_default="")
    state: Mapped[str] = mapped_column(String(12))
    reward: Mapped[float | None] = mapped_column(Float, nullable=True)
    passed: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sql_false())
    grade: Mapped[str] = mapped_column(Text, default="", server_default="")
    error: Mapped[str] = mapped_column(Text, default="", server_default="")
    rerun: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sql_false())
    run: Mapped[Run] = relationship()
    author: Mapped[Owner] = relationship()


class HubEval(Base):
    """An evaluation an admin asked the hub to run: a version against a named OpenAI-compatible
    endpoint (``model`` at ``base_url``, no credentials). ``api_key_env`` names the worker's
    environment variable holding the key; the key itself is never stored. ``state`` is ``queued``
    (waiting for, or held by, a worker under ``worker``/``lease_until``), ``done`` (``run_id`` is
    the recorded run) or ``error`` (``report`` says why)."""

    __tablename__ = "hub_evals"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id"))
    requester_id: Mapped[int] = mapped_column(ForeignKey("owners.id"))
    model: Mapped[str] = mapped_column(String(200))
    base_url: Mapped[str] = mapped_column(String(300))
    api_key_env: Mapped[str] = mapped_column(String(100), default="", server_default="")
    num_tasks: Mapped[int | None] = mapped_column(Integer, nullable=True)
    rollouts: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    seed: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    state: Mapped[str] = mapped_column(String(12), default="queued", server_default="queued")
    report: Mapped[str] = mapped_column(Text, default="", server_default="")
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    worker: Mapped[str] = mapped_column(String(200), default="", server_default="")
    lease_until: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id"), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    version: Mapped[Version] = relationship()
    requester: Mapped[Owner] = relationship()
