"""The grader protocol: an async callable from a response and a reference to a `Grade`."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from graders.grade import Grade

__all__ = ["Grader"]


@runtime_checkable
class Grader(Protocol):
    """Anything that grades a response against a task's reference answer.

    ``reference`` is the task's ``answer`` field as stored (a string, a list of aliases, or a
    mapping for structured tasks such as IFEval instructions). A grader must not raise for bad
    model output: bad output is an ``incorrect`` grade. It raises (or returns ``Grade.error``)
    only when the grader itself cannot work.
    """

    async def __call__(self, response: str, *, reference: Any) -> Grade: ...
