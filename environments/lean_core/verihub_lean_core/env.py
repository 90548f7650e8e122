"""lean_core's multi-turn modes: revise-with-feedback, and tactic-by-tactic over REPL proof states."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from graders.grade import Grade
from graders.proof import (
    LeanReplChecker,
    ProofGrader,
    ProofPolicy,
    TacticSession,
    assemble_tactics,
    verdict_to_grade,
)
from graders.proof.errors import WorkerError
from graders.proof.screen import extract_code, forbidden_in
from hub import Message, MultiTurnEnv, Rollout, State, Step, Task

__all__ = ["ACCEPTED", "LeanReviseEnv", "LeanTacticEnv", "accepted_tactics"]

ACCEPTED = "Tactic accepted."
_RETRY = "\n\nRevise the proof and reply with the complete corrected proof in a ```lean code block."


class LeanReviseEnv(MultiTurnEnv):
    """Each turn is a full proof; the reply is Lean's verdict, errors and open goals. Graded by a
    fresh check of the last attempt."""

    grader: ProofGrader

    async def step(self, state: State, action: Message) -> Step:
        verdict = await self.grader.verdict(action.content or "", reference=state.task.answer)
        if verdict.proved:
            return Step(
                messages=(Message(role="user", content="Proof accepted."),),
                terminated=True,
                info={"verdict": verdict.status},
            )
        last = state.turn >= self.max_turns
        text = verdict.feedback() + ("" if last else _RETRY)
        return Step(
            messages=(Message(role="user", content=text),), truncated=last, info={"verdict": verdict.status}
        )

    async def grade(self, task: Task, rollout: Rollout) -> Grade:
        verdict = await self.grader.verdict(rollout.completion, reference=task.answer)
        return verdict_to_grade(verdict, extracted=extract_code(rollout.completion))


def accepted_tactics(messages: list[Message]) -> list[str]:
    """The tactics the environment accepted, read back from a transcript (its own replies)."""
    out: list[str] = []
    for msg, reply in zip(messages, messages[1:], strict=False):
        if msg.role == "assistant" and reply.role == "user" and (reply.content or "").startswith(ACCEPTED):
            out.append(extract_code(msg.content or ""))
    return out


def _goals(goals: tuple[str, ...]) -> str:
    return "\n\n".join(goals) if goals else "(no goals)"


class LeanTacticEnv(MultiTurnEnv):
    """One tactic per turn on the REPL's proof state; the reply is the new goals or the error.

    Closing the goals ends the episode, but the grade is a full check of the accepted tactics
    assembled into one proof, by the same checker as the single-turn mode.
    """

    grader: ProofGrader

    def __init__(
        self,
        *,
        tasks: Sequence[Task],
        grader: ProofGrader,
        checker: LeanReplChecker,
        step_timeout_s: float = 20.0,
        id: str | None = None,
        version: str | None = None,
        system_prompt: str | None = None,
        max_turns: int | None = None,
    ) -> None:
        super().__init__(
            tasks=tasks,
            grader=grader,
            id=id,
            version=version,
            system_prompt=system_prompt,
            max_turns=max_turns,
        )
        self.checker = checker
        self.step_timeout_s = step_timeout_s

    async def reset(self, task: Task) -> State:
        state = await super().reset(task)
        ref = task.answer
        session = TacticSession(
            self.checker.pool,
            ref["statement"],
            header=tuple(ref.get("imports") or ()),
            timeout=self.step_timeout_s,
        )
        opened = await session.start()
        if not opened.ok:
            raise WorkerError(f"could not open the statement in the Lean REPL: {opened.error}")
        state.data["session"] = session
        last = state.messages[-1]
        state.messages[-1] = Message(
            role="user", content=f"{last.content}\n\nCurrent goal:\n{_goals(opened.goals)}"
        )
        return state

    async def step(self, state: State, action: Message) -> Step:
        session: TacticSession = state.data["session"]
        tactic = extract_code(action.content or "")
        policy = ProofPolicy(allow_native_decide=bool(state.task.answer.get("allow_native_decide")))
        why = forbidden_in(tactic, "lean", policy)
        last = state.turn >= self.max_turns
        if why or not tactic:
            return Step(
                messages=(Message(role="user", content=f"Tactic rejected: {why or 'empty tactic'}"),),
                truncated=last,
            )
        try:
            result = await session.apply(tactic)
        except (asyncio.TimeoutError, WorkerError) as exc:
            text = f"Tactic failed: {'timed out' if isinstance(exc, asyncio.TimeoutError) else exc}"
            return Step(messages=(Message(role="user", content=text),), truncated=last)
        if not result.ok:
            text = f"Tactic failed: {result.error}"
            return Step(messages=(Message(role="user", content=text),), truncated=last)
        if result.completed:
            return Step(
                messages=(Message(role="user", content=f"{ACCEPTED} No goals remain."),), terminated=True
            )
        text = f"{ACCEPTED} Goals:\n{_goals(result.goals)}"
        return Step(messages=(Message(role="user", content=text),), truncated=last)

    async def grade(self, task: Task, rollout: Rollout) -> Grade:
        tactics = accepted_tactics(rollout.messages)
        if not tactics:
            return Grade.incorrect(reason="no tactic was accepted")
        script = assemble_tactics(task.answer["statement"], tactics)
        verdict = await self.grader.verdict(script, reference=task.answer)
        return verdict_to_grade(verdict, extracted=script)
