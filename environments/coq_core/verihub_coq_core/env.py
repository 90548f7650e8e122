"""The multi-turn mode: submit a proof, read the kernel's errors and open goals, revise."""

from __future__ import annotations

from graders.grade import Grade
from graders.proof import ProofGrader, verdict_to_grade
from graders.proof.screen import extract_code
from hub import Message, MultiTurnEnv, Rollout, State, Step, Task

__all__ = ["ProofReviseEnv"]

_RETRY = "\n\nRevise the proof and reply with the complete corrected proof in a ```coq code block."


class ProofReviseEnv(MultiTurnEnv):
    """Each model turn is a full proof attempt; the reply is the checker's verdict and feedback.

    The episode ends when a proof is accepted; the runner cuts it at ``max_turns``. The grade is
    a fresh check of the last attempt (the feedback messages play no part in it).
    """

    grader: ProofGrader

    async def step(self, state: State, action: Message) -> Step:
        verdict = await self.grader.verdict(action.content or "", reference=state.task.answer)
        state.data.setdefault("verdicts", []).append(verdict.status)
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
