"""QA with an LLM judge: the rules first, a judge for what they cannot decide.

:class:`QAJudgeGrader` first reads the response with the deterministic layer
(:func:`graders.qa.check`): what it refuses *structurally* (no answer, several answers, a hedge,
an answer taken back) stays refused and no judge sees it; what its equivalence rules accept is
correct without a call. Only a clean single answer the rules do not accept goes to the judge
panel, under the rubric judges' hardened protocol (:mod:`graders.rubric.prompt`,
:mod:`graders.rubric.judge`); every sample of every judge must agree. A judge failure is an
``error`` grade, never a pass and never a silent 0.

:class:`OpenAIJudge` is a :class:`~graders.rubric.judge.JudgeModel` for any OpenAI-compatible
endpoint. Fidelity against the NQ-open human ratings is *unmeasured* (docs/graders-text.md,
"LLM-judge mode").
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from graders.grade import Grade
from graders.qa.check import DEFAULT_MAX_ANSWER_CHARS, QAVerdict, check
from graders.qa.equivalence import EquivalenceOptions, find_hedge, is_list
from graders.rubric.judge import JudgeModel, JudgeSampling, aggregate_votes, ask_judge
from graders.rubric.prompt import build_judge_messages
from graders.total import total

__all__ = ["JUDGE_QUESTION", "OpenAIJudge", "QAJudgeGrader", "Transport"]

JUDGE_QUESTION = (
    "The text is a model's final answer to a trivia question. Does it give the same answer as one of "
    "the reference answers (the same entity, date or quantity, in any wording; not a broader, "
    "narrower, partial or hedged answer)?"
)
_CHOICES = ("no", "yes")
# structural refusals of graders.qa.check: a judge must never overrule them
_JUDGEABLE = "no gold alias is equivalent"

Transport = Callable[[str, Mapping[str, str], Mapping[str, Any], float], Awaitable[Mapping[str, Any]]]
"""``(url, headers, json body, timeout_s) -> parsed JSON answer``; raises on transport failure."""


async def _aiohttp_post(
    url: str, headers: Mapping[str, str], body: Mapping[str, Any], timeout_s: float
) -> Mapping[str, Any]:
    import aiohttp

    timeout = aiohttp.ClientTimeout(total=timeout_s)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        async with session.post(url, json=dict(body), headers=dict(headers)) as answer:
            answer.raise_for_status()
            data = await answer.json(content_type=None)
    if not isinstance(data, Mapping):
        raise ValueError(f"the endpoint answered a {type(data).__name__}, not a JSON object")
    return data


class OpenAIJudge:
    """A judge model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    ``base_url``: e.g. ``http://127.0.0.1:8000/v1``. ``api_key``: sent as a bearer token when
    given. ``transport``: how a request is sent (default: ``aiohttp``); tests pass a fake.
    The verdict codes are passed as a JSON-schema response format when ``json_schema`` is True
    (servers that support structured output then constrain decoding to it).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        json_schema: bool = False,
        transport: Transport | None = None,
    ) -> None:
        self.model = model
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.json_schema = json_schema
        self.transport: Transport = transport or _aiohttp_post

    async def complete(self, messages: Sequence[Mapping[str, str]], *, sampling: JudgeSampling) -> str:
        body: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages]}
        if sampling.temperature is not None:
            body["temperature"] = sampling.temperature
        if sampling.max_tokens is not None:
            body["max_tokens"] = sampling.max_tokens
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        if self.json_schema and sampling.verdicts:
            from graders.rubric.judge import verdict_schema

            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "verdict", "schema": verdict_schema(sampling.verdicts)},
            }
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        data = await self.transport(self.url, headers, body, self.timeout_s)
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise ValueError(f"malformed chat completion: {json.dumps(data)[:200]}") from exc
        if not isinstance(content, str):
            raise ValueError(f"the completion's content is a {type(content).__name__}, not text")
        return content

    def __repr__(self) -> str:
        return f"OpenAIJudge({self.model!r}, base_url={self.url.removesuffix('/chat/completions')!r})"


class QAJudgeGrader:
    """Short-answer QA graded by the rules, with a judge panel for what they cannot decide.

    ``judge``: one :class:`~graders.rubric.judge.JudgeModel` or several (a panel). ``samples``:
    calls per judge (every vote must say "yes"). ``timeout_s``: per judge call.
    """

    def __init__(
        self,
        judge: JudgeModel | Sequence[JudgeModel],
        *,
        samples: int = 1,
        timeout_s: float = 60.0,
        max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS,
        equivalence: EquivalenceOptions | None = None,
    ) -> None:
        self.judges: tuple[JudgeModel, ...] = (judge,) if isinstance(judge, JudgeModel) else tuple(judge)
        if not self.judges or samples < 1:
            raise ValueError("QAJudgeGrader needs at least one judge and samples >= 1")
        self.samples = samples
        self.timeout_s = timeout_s
        self.max_answer_chars = max_answer_chars
        self.equivalence = equivalence or EquivalenceOptions()

    @total
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        aliases = [reference] if isinstance(reference, str) else reference
        if not isinstance(aliases, Sequence) or not all(isinstance(a, str) for a in aliases):
            return Grade.error(f"QA reference must be a list of gold aliases, got {type(reference).__name__}")
        if not any(a.strip() for a in aliases):
            return Grade.error("QA reference must hold at least one non-empty gold alias")
        verdict = check(
            response,
            answers=list(aliases),
            max_answer_chars=self.max_answer_chars,
            equivalence=self.equivalence,
        )
        if verdict.passed:
            return Grade.correct(extracted=verdict.extracted, reason=f"rules: {verdict.reason}")
        if verdict.reason != _JUDGEABLE:
            return Grade.incorrect(extracted=verdict.extracted, reason=f"rules: {verdict.reason}")
        hedge = find_hedge(verdict.extracted)
        if hedge is not None or is_list(verdict.extracted):
            why = f"a hedged answer ({hedge!r})" if hedge is not None else "a list of candidates"
            return Grade.incorrect(extracted=verdict.extracted, reason=f"rules: {why}; not judged")
        return await self._judge(verdict, list(aliases))

    async def _judge(self, verdict: QAVerdict, aliases: list[str]) -> Grade:
        calls = []
        for model in self.judges:
            for sample in range(self.samples):
                prompt = build_judge_messages(
                    question=JUDGE_QUESTION,
                    choices=_CHOICES,
                    response=verdict.extracted,
                    reference=aliases,
                    show_reference=True,
                )
                sampling = JudgeSampling(
                    temperature=0.0 if self.samples == 1 else 0.7,
                    max_tokens=256,
                    seed=sample,
                    verdicts=prompt.codes,
                )
                calls.append(
                    ask_judge(model, prompt, sampling=sampling, timeout_s=self.timeout_s, max_chars=4000)
                )
        votes = await asyncio.gather(*calls)
        failed = [v for v in votes if v.error is not None]
        if failed:
            reason = f"{len(failed)}/{len(votes)} judge votes failed: {failed[0].error}"[:400]
            return Grade.timeout(reason) if all(v.timed_out for v in failed) else Grade.error(reason)
        choice = _CHOICES[aggregate_votes(votes, _CHOICES, "min")]
        reason = f"judge: {choice}: {votes[0].reason}"[:500]
        if choice == "yes":
            return Grade.correct(extracted=verdict.extracted, reason=reason)
        return Grade.incorrect(extracted=verdict.extracted, reason=reason)
