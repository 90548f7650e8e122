"""Helpers of the label and correction tests: a seeded hub with a reviewer, label and correction
requests, the seeded runs' environment in-process, and a grader to inject for corrections.

``seed_with_reviewer(hub, tmp)`` seeds :mod:`results_seed`'s runs and adds ``rita``, a user with the
reviewer role (a push token ``rita`` and a read token ``rita_read``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_seed import seed  # noqa: E402

from graders.grade import Grade
from hub.env.environment import SingleTurnEnv
from hub.env.types import Rollout, Task
from hub.server.core.models import Run
from hub.server.results.corrections import GradeJob

__all__ = [
    "FakeGrader",
    "ServedHub",
    "correction_path",
    "label_path",
    "post",
    "post_label",
    "seed_with_reviewer",
    "stored_rollouts",
    "toy_env",
    "transcript",
]


@dataclass
class ServedHub:
    """The parts of the ``hub`` fixture these helpers use, for a hub made another way."""

    config: Any
    client: Any
    tokens: dict[str, str]

    def sessions(self) -> Any:
        return self.client.app.state.sessions

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}


def label_path(run_id: str, index: int) -> str:
    return f"/api/v1/runs/{run_id}/rollouts/{index}/labels"


def seed_with_reviewer(hub: Any, tmp: Path) -> tuple[Any, dict[str, str]]:
    """The result pages' runs, plus a reviewer (rita, push token) and her read token."""
    from hub.server.accounts.users import add_user, create_token
    from hub.server.admin import open_hub

    ids = seed(hub, tmp).ids
    with open_hub(hub.config) as s:
        add_user(s, "rita", reviewer=True)
        hub.tokens["rita"] = create_token(s, "rita", "push")
        hub.tokens["rita_read"] = create_token(s, "rita", "read")
    return hub, ids


def post_label(hub: Any, who: str | None, run_id: str, index: int, value: str, note: str = "") -> Any:
    headers = hub.auth(who) if who else {}
    return hub.client.post(label_path(run_id, index), json={"value": value, "note": note}, headers=headers)


def stored_rollouts(hub: Any, run_id: str) -> list[Rollout]:
    from hub.server.results.rollout_archive import rollout_lines

    with hub.sessions()() as s:
        run = s.query(Run).filter_by(public_id=run_id).one()
        return [Rollout.model_validate_json(x) for x in rollout_lines(hub.client.app.state.storage, run)]


async def _grader(response: str, *, reference: Any) -> Grade:
    return Grade.correct() if response.strip().endswith(str(reference)) else Grade.incorrect(reason="wrong")


def toy_env() -> SingleTurnEnv:
    """The seeded runs' environment: tasks t0..t7 whose answer is 42 (the runs answer 'Answer: 42')."""
    tasks = [Task(id=f"t{i}", prompt=f"Solve task t{i}.", answer="42") for i in range(8)]
    return SingleTurnEnv(id="toy", version="1.0.0", tasks=tasks, grader=_grader)


def correction_path(run_id: str, index: int) -> str:
    return f"/api/v1/runs/{run_id}/rollouts/{index}/corrections"


def transcript(hub: Any, run_id: str, index: int) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in stored_rollouts(hub, run_id)[index].messages]


class FakeGrader:
    """Passes a corrected answer that ends in 42 (and records what it was asked). A re-run replays
    like a deterministic single-turn environment (its own user turns, the edited actions), or is
    refused as the sandbox refuses a non-deterministic one when ``deterministic`` is False."""

    def __init__(self) -> None:
        self.jobs: list[GradeJob] = []
        self.deterministic = True

    def __call__(self, job: GradeJob) -> dict[str, Any]:
        self.jobs.append(job)
        messages = [m.model_dump(mode="json") for m in job.rollout.messages]
        if job.original is not None:
            if not self.deterministic:
                return {"state": "error", "grade": None, "error": "", "refused": "not deterministic"}
            acts = iter(job.actions)
            made = [next(acts) if m.role == "assistant" else m for m in job.original.messages]
            messages = [m.model_dump(mode="json") for m in made]
        ok = str(messages[-1].get("content") or "").strip().endswith("42")
        grade = {"score": 1.0 if ok else 0.0, "passed": ok, "status": "correct" if ok else "incorrect"}
        return {"state": "graded", "grade": grade, "error": "", "messages": messages}


def post(hub: Any, who: str | None, run_id: str, index: int, body: Any) -> Any:
    return hub.client.post(correction_path(run_id, index), json=body, headers=hub.auth(who) if who else {})
