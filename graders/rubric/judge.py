"""Hardened LLM judging: the judge protocol, the strict verdict parser, and voting.

Defences, each pinned by tests (the prompt side is in :mod:`graders.rubric.prompt`):

- The judged text is untrusted: it sits between marker lines carrying a per-call nonce.
- The verdict is a **secret code** drawn per call and choice; a verdict naming a choice's label
  (``"yes"``) or an unknown code is a judge error, since the label may come from the judged text.
- The answer must be exactly one JSON object ``{"reason": "...", "verdict": "<code>"}``; anything
  around or beyond it is a judge error, and so is a reason or verdict copied from the judged text.
- A judge error is never a pass: the check gets status ``error`` (``timeout`` for a timeout).
- Voting: each judge model is asked ``samples`` times; ``majority`` takes the most voted choice
  (ties to the worse), ``min`` the worst vote. Any failed vote fails the check.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from graders.deadline import within
from graders.rubric.errors import VerdictError
from graders.rubric.prompt import JudgePrompt

__all__ = [
    "JudgeModel",
    "JudgeSampling",
    "JudgeVerdict",
    "Vote",
    "aggregate_votes",
    "ask_judge",
    "copied_from",
    "parse_verdict",
    "verdict_schema",
]


@dataclass(frozen=True)
class JudgeSampling:
    """Sampling for one judge call (the adapter maps it onto its client)."""

    temperature: float | None = 0.0
    max_tokens: int | None = 256
    seed: int | None = None
    verdicts: tuple[str, ...] = ()
    """This call's verdict codes. A model adapter may use them to constrain decoding to the
    verdict schema (see :func:`verdict_schema`); the answer is still parsed strictly either way."""


@runtime_checkable
class JudgeModel(Protocol):
    """A chat model used as a judge. ``messages`` are ``{"role", "content"}`` mappings
    (roles ``system`` and ``user``); returns the text of the answer. Raise on transport failure.
    ``hub.run.judge`` adapts hub's model clients to this protocol.
    """

    async def complete(self, messages: Sequence[Mapping[str, str]], *, sampling: JudgeSampling) -> str: ...


@dataclass(frozen=True)
class JudgeVerdict:
    """A judge answer that passed the strict parser."""

    reason: str
    code: str
    choice: str


@dataclass(frozen=True)
class Vote:
    """One judge call: a choice, or an error (``timed_out`` when it ran out of time)."""

    choice: str | None
    reason: str
    error: str | None = None
    timed_out: bool = False


def verdict_schema(verdicts: Sequence[str]) -> dict[str, Any]:
    """JSON schema of a verdict object: a reason, then one of ``verdicts`` (the call's codes)."""
    return {
        "type": "object",
        "properties": {"reason": {"type": "string"}, "verdict": {"type": "string", "enum": list(verdicts)}},
        "required": ["reason", "verdict"],
        "additionalProperties": False,
    }


def _pairs(pairs: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    return pairs  # keep every key, in order, so duplicates and order can be checked


def _no_constants(name: str) -> Any:
    raise VerdictError(f"the judge answer contains {name}, which is not JSON")


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def copied_from(fragment: str, text: str) -> bool:
    """True when ``fragment`` occurs verbatim in ``text`` as whole words (case and runs of
    whitespace ignored): ``"ok"`` is found in ``'"reason": "ok"'`` but not in ``"book"``."""
    needle = _normal(fragment)
    if not needle:
        return False
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", _normal(text)) is not None


def parse_verdict(text: str, prompt: JudgePrompt, *, max_chars: int = 4000) -> JudgeVerdict:
    """Parse a judge answer to ``prompt`` strictly; raise :class:`VerdictError` unless it is
    exactly the schema, its verdict one of the prompt's codes, and nothing copied from the text."""
    if len(text) > max_chars:
        raise VerdictError(f"the judge answer is longer than {max_chars} characters")
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise VerdictError("the judge answer is not a bare JSON object (text or a code fence around it)")
    try:
        parsed = json.loads(body, object_pairs_hook=_pairs, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise VerdictError(f"the judge answer is not one JSON object: {exc.msg}") from None
    except RecursionError:  # "[[[[...": nesting deeper than the decoder's recursion limit
        raise VerdictError("the judge answer nests too deeply to be a verdict object") from None
    if not isinstance(parsed, list):
        raise VerdictError("the judge answer is not a JSON object")
    keys = [k for k, _ in parsed]
    if keys != ["reason", "verdict"]:
        raise VerdictError(f'the judge answer must have exactly the keys "reason" then "verdict", got {keys}')
    reason, verdict = parsed[0][1], parsed[1][1]
    if not isinstance(reason, str) or not isinstance(verdict, str):
        raise VerdictError("reason and verdict must both be strings")
    if not reason.strip():
        raise VerdictError("the judge gave an empty reason")
    if copied_from(body, prompt.untrusted) or copied_from(reason, prompt.untrusted):
        raise VerdictError("the judge's answer is copied from the judged text, not a judgement of it")
    if verdict in prompt.choices and verdict not in prompt.codes:
        raise VerdictError(
            f"the verdict names the choice {verdict[:80]!r} instead of its secret code "
            "(a label can come from the judged text; a code cannot)"
        )
    choice = prompt.choice_of(verdict)
    if choice is None:
        raise VerdictError(f"verdict {verdict[:80]!r} is not one of this call's verdict codes")
    if verdict in prompt.untrusted:  # impossible by construction (codes are drawn absent from it)
        raise VerdictError("the verdict code occurs in the judged text")
    return JudgeVerdict(reason=reason.strip(), code=verdict, choice=choice)


async def ask_judge(
    judge: JudgeModel,
    prompt: JudgePrompt,
    *,
    sampling: JudgeSampling,
    timeout_s: float,
    max_chars: int,
) -> Vote:
    """One judge call turned into a :class:`Vote`; never raises for judge failures."""
    try:
        answer = await within(judge.complete(prompt.messages, sampling=sampling), timeout_s)
    except asyncio.TimeoutError:
        return Vote(None, "", error=f"the judge did not answer within {timeout_s:g}s", timed_out=True)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # any judge transport failure is a judge error, never a verdict
        detail = str(exc).splitlines()[0][:200] if str(exc) else ""
        return Vote(None, "", error=f"the judge call failed: {type(exc).__name__}: {detail}")
    if not isinstance(answer, str):
        return Vote(None, "", error=f"the judge returned a {type(answer).__name__}, not text")
    try:
        verdict = parse_verdict(answer, prompt, max_chars=max_chars)
    except VerdictError as exc:
        return Vote(None, "", error=f"malformed verdict: {exc}")
    except Exception as exc:  # a parser bug on odd judge text is still a judge error, never a verdict
        return Vote(None, "", error=f"malformed verdict: the parser raised {type(exc).__name__}")
    return Vote(verdict.choice, verdict.reason)


def aggregate_votes(
    votes: Sequence[Vote], choices: Sequence[str], how: Literal["majority", "min"] = "majority"
) -> int:
    """Index (into ``choices``, worst first) of the winning choice of valid ``votes``.

    ``majority``: the most voted choice; a tie goes to the worst of the tied choices. ``min``:
    the worst vote. Raises ``ValueError`` when a vote is missing or not a choice.
    """
    indices = []
    for vote in votes:
        if vote.choice is None or vote.choice not in choices:
            raise ValueError("aggregate_votes needs valid votes only")
        indices.append(list(choices).index(vote.choice))
    if not indices:
        raise ValueError("no votes to aggregate")
    if how == "min":
        return min(indices)
    counts = Counter(indices)
    top = max(counts.values())
    return min(i for i, n in counts.items() if n == top)
