"""`IFEvalGrader`: the IFEval checks as an async grader (reward = fraction followed, strict)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from graders.grade import Check, Grade
from graders.ifeval.checkers import InvalidInstructionError
from graders.ifeval.evaluate import DEFAULT_MAX_CHARS, check
from graders.total import total

__all__ = ["IFEvalGrader"]


class IFEvalGrader:
    """Grade a response against a task's IFEval instructions.

    ``reference`` is a mapping with ``instruction_id_list``, ``kwargs`` and ``prompt`` (an IFEval
    row). The score is the fraction of instructions followed in strict mode; ``passed`` means all
    were followed. Each instruction is a named :class:`~graders.grade.Check` whose reason also
    gives the loose verdict. A malformed reference is a grader error, never a zero.
    ``hardened=True`` reads every instruction on what a reader sees (see
    :func:`graders.ifeval.check`); the default is the reference implementation's verdicts.
    """

    def __init__(self, *, max_chars: int = DEFAULT_MAX_CHARS, hardened: bool = False) -> None:
        self.max_chars = max_chars
        self.hardened = hardened

    @total
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        if not isinstance(reference, Mapping):
            return Grade.error(f"IFEval reference must be a mapping, got {type(reference).__name__}")
        try:
            verdict = await asyncio.to_thread(
                check,
                response,
                instruction_id_list=list(reference["instruction_id_list"]),
                kwargs=list(reference["kwargs"]),
                prompt=str(reference.get("prompt", "")),
                max_chars=self.max_chars,
                hardened=self.hardened,
            )
        except (KeyError, InvalidInstructionError) as exc:
            return Grade.error(f"invalid IFEval reference: {exc}")
        checks = tuple(
            Check(
                name=f"{index}:{instruction_id}",
                score=1.0 if strict else 0.0,
                passed=strict,
                status="correct" if strict else "incorrect",
                reason=f"strict={'followed' if strict else 'not followed'}, "
                f"loose={'followed' if loose else 'not followed'}",
            )
            for index, (instruction_id, strict, loose) in enumerate(
                zip(verdict.instruction_ids, verdict.strict, verdict.loose, strict=True)
            )
        )
        return Grade.from_score(
            verdict.fraction_strict, passed=verdict.prompt_strict, reason=verdict.reason, checks=checks
        )
