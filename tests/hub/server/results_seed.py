"""Pushed runs for the result-page tests, inserted straight into the database (no push API, no model).

``seed(hub, tmp)`` publishes ``alice/toy`` 1.0.0 and 1.1.0 (public) and ``bob/secret`` 1.0.0
(private), and adds runs built with :func:`leaderboard.testing.write_run`, verified by
:func:`leaderboard.verify_run` and made entries by :func:`leaderboard.entry_from_run`, exactly as
the server stores them (environment hash = the version's content hash, the run directory kept as
a ``.tar.gz`` blob):

============  =========  ======  ===========================  ========  ===========================
run           version    pusher  model (label)                private   notes
============  =========  ======  ===========================  ========  ===========================
``strong``    1.0.0      alice   model-a                      no        mean .875, verified
``tied``      1.0.0      alice   model-c ("c, tuned")         no        mean .844, ties ``strong``
``weak``      1.0.0      bob     model-b                      no        mean .125, unverified
``nodefault`` 1.0.0      alice   model-a, temperature unset   no        other settings, pending
``newer``     1.1.0      alice   model-a                      no        other version, 10 days later
``hidden``    1.0.0      bob     model-hidden                 yes       bob's private run
``secret``    1.0.0      bob     model-secret                 no        of bob's private environment
============  =========  ======  ===========================  ========  ===========================
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hub.client.runpack import pack_run
from hub.env import Sampling
from hub.server.core.models import PASSED, Environment, Owner, Run, Version
from leaderboard import entry_from_run, verify_run
from leaderboard.testing import fake_env_hash, write_run

__all__ = ["Seeded", "seed"]

STRONG = (
    (1, 1, 1, 1),
    (1, 1, 1, 1),
    (1, 1, 1, 1),
    (1, 1, 1, 1),
    (1, 1, 1, 0),
    (1, 1, 1, 0),
    (1, 1, 0, 0),
    (1, 1, 1, 1),
)
TIED = (
    (1, 1, 1, 1),
    (1, 1, 1, 1),
    (1, 1, 1, 0),
    (1, 1, 1, 1),
    (1, 1, 1, 0),
    (1, 1, 1, 1),
    (1, 1, 0, 0),
    (1, 1, 1, 0),
)
WEAK = (
    (0, 0, 0, 0),
    (0, 0, 0, 0),
    (1, 0, 0, 0),
    (0, 0, 0, 0),
    (1, 0, 0, 0),
    (0, 0, 0, 0),
    (0, 0, 0, 0),
    (1, 1, 0, 0),
)
DAY = 86_400


@dataclass
class Seeded:
    """Public ids of the seeded runs by their name in the module table."""

    ids: dict[str, str]


def _env(
    session: Any, owner: str, env_id: str, versions: list[str], *, private: bool = False
) -> list[Version]:
    who = session.query(Owner).filter_by(name=owner).one()
    env = Environment(
        owner_id=who.id,
        env_id=env_id,
        distribution=f"{owner}-{env_id}",
        project=f"{owner}-{env_id}",
        private=private,
        summary=f"{env_id} for the result pages",
    )
    session.add(env)
    session.flush()
    out = []
    for v in versions:
        row = Version(
            environment_id=env.id,
            version=v,
            manifest_sha256="0" * 64,
            content_hash=fake_env_hash(env_id, v),
            state=PASSED,
        )
        session.add(row)
        out.append(row)
    session.flush()
    return out


def _run(
    session: Any,
    storage: Any,
    tmp: Path,
    name: str,
    version: Version,
    pusher: str,
    model: str,
    rewards: Any,
    *,
    label: str = "",
    private: bool = False,
    state: str = "verified",
    report: str = "",
    sampling: Sampling | None = None,
    later: float = 0.0,
) -> str:
    env = version.environment
    path = write_run(
        tmp / name,
        env_id=env.env_id,
        env_version=version.version,
        model=model,
        rewards=[[float(x) for x in row] for row in rewards],
        env_hash=version.content_hash,
        sampling=sampling,
    )
    verified = verify_run(path)
    entry = entry_from_run(verified, owner=pusher, label=label or None)
    # write_run starts every run at one instant; a run ``later`` seconds on, as the server stores it
    entry = entry.model_copy(update={"created_at": entry.created_at + later})
    archive = pack_run(path, tmp / f"{name}.tar.gz")  # as `verihub results push` sends it
    who = session.query(Owner).filter_by(name=pusher).one()
    public_id = f"r{name}0123"
    session.add(
        Run(
            public_id=public_id,
            version_id=version.id,
            owner_id=who.id,
            model=model,
            label=label,
            private=private,
            archive_sha256=storage.put_file(archive),
            run_sha256=(entry.content_sha256 or "x").removeprefix("sha256:"),  # as the server stores it
            entry=entry.model_dump_json(),
            summary=verified.summary.model_dump_json(),
            verify_state=state,
            verify_report=report,
        )
    )
    return public_id


def seed(hub: Any, tmp: Path) -> Seeded:
    storage = hub.client.app.state.storage
    ids: dict[str, str] = {}
    with hub.sessions()() as session:
        v100, v110 = _env(session, "alice", "toy", ["1.0.0", "1.1.0"])
        (secret,) = _env(session, "bob", "secret", ["1.0.0"], private=True)
        ids["strong"] = _run(session, storage, tmp, "strong", v100, "alice", "model-a", STRONG)
        ids["tied"] = _run(session, storage, tmp, "tied", v100, "alice", "model-c", TIED, label="c, tuned")
        report = json.dumps(  # the shape hub.server.results.reverify_child writes
            {
                "share": 1.0,
                "total": 8,
                "sampled": 8,
                "graded": 8,
                "n_differ": 2,
                "error": None,
                "differ": ["t2#0: recorded passed=True reward=1.0, regraded passed=False reward=0"],
            }
        )
        ids["weak"] = _run(
            session, storage, tmp, "weak", v100, "bob", "model-b", WEAK, state="unverified", report=report
        )
        ids["nodefault"] = _run(
            session,
            storage,
            tmp,
            "nodefault",
            v100,
            "alice",
            "model-a",
            WEAK,
            state="pending",
            sampling=Sampling(max_tokens=64),
        )
        ids["newer"] = _run(session, storage, tmp, "newer", v110, "alice", "model-a", TIED, later=10 * DAY)
        ids["hidden"] = _run(
            session,
            storage,
            tmp,
            "hidden",
            v100,
            "bob",
            "model-hidden",
            STRONG,
            private=True,
            state="error",
            report=json.dumps({"error": "sandbox timed out"}),
        )
        ids["secret"] = _run(session, storage, tmp, "secret", secret, "bob", "model-secret", STRONG)
        session.commit()
    return Seeded(ids)
