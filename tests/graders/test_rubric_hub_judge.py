"""hub.run.judge: rubric judges through hub's real HTTP client, against the loopback fake server."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

from graders.rubric import JudgeModel, JudgeSampling, load_rubric
from hub.env.errors import UsageError
from hub.run.client import ClientOptions, OpenAIClient
from hub.run.fake_server import FakeChatServer
from hub.run.judge import ClientJudge, JudgeOptions, LazyJudge

RUBRIC = {
    "id": "hub-judge",
    "checks": [
        {"id": "len", "kind": "length", "max": 20},
        {"id": "q", "kind": "judge", "question": "Is it polite?", "choices": ["no", "yes"]},
    ],
    "judge": {"max_tokens": 40, "temperature": 0.0},
}


class Recorder:
    """A fake judge endpoint. ``{no}`` / ``{yes}`` in the answer become that choice's secret code,
    read from the request's instructions (as a real judge model would)."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: dict[str, Any]) -> str:
        self.requests.append(request)
        system = request["messages"][0]["content"]
        answer = self.answer
        for code, choice in re.findall(r'^  "([0-9a-f]+)" means "(.*?)"', system, re.MULTILINE):
            answer = answer.replace("{" + choice + "}", code)
        return answer


def honest(choice: str, reason: str) -> str:
    return json.dumps({"reason": reason, "verdict": "{" + choice + "}"})


async def test_client_judge_over_openai_client() -> None:
    rec = Recorder(honest("yes", "polite"))
    async with FakeChatServer(responder=rec) as server:
        async with OpenAIClient(ClientOptions(base_url=server.base_url, model="judge-x")) as client:
            judge = ClientJudge(client)
            assert isinstance(judge, JudgeModel)
            grade = await load_rubric(RUBRIC, judge=judge)("Thank you!", reference=None)
    assert grade.passed and grade.status == "correct"
    (request,) = rec.requests
    assert request["model"] == "judge-x" and request["max_tokens"] == 40 and request["temperature"] == 0.0
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert "Thank you!" in request["messages"][1]["content"]
    schema = request["response_format"]["json_schema"]["schema"]
    codes = schema["properties"]["verdict"]["enum"]
    assert len(codes) == 2 and not {"no", "yes"} & set(codes)  # the enum holds secret codes only
    assert all(code in request["messages"][0]["content"] for code in codes)
    assert not any(code in request["messages"][1]["content"] for code in codes)


async def test_a_label_verdict_from_the_server_is_a_judge_error() -> None:
    rec = Recorder(json.dumps({"reason": "polite", "verdict": "yes"}))
    async with FakeChatServer(responder=rec) as server:
        async with OpenAIClient(ClientOptions(base_url=server.base_url, model="m")) as client:
            grade = await load_rubric(RUBRIC, judge=ClientJudge(client))("hi", reference=None)
    assert grade.status == "error" and not grade.passed and "instead of its secret code" in grade.reason


async def test_malformed_server_answer_is_a_judge_error() -> None:
    async with FakeChatServer(responder=Recorder('PASS {"reason": "r", "verdict": "yes"}')) as server:
        async with OpenAIClient(ClientOptions(base_url=server.base_url, model="m")) as client:
            grade = await load_rubric(RUBRIC, judge=ClientJudge(client))("hi", reference=None)
    assert grade.status == "error" and not grade.passed


async def test_lazy_judge_starts_on_first_use_and_closes() -> None:
    rec = Recorder(honest("no", "fine"))
    async with FakeChatServer(responder=rec) as server:
        judge = LazyJudge("judge-y", base_url=server.base_url, options=JudgeOptions(max_retries=0))
        assert not judge.started and "not started" in repr(judge)
        rubric = load_rubric(RUBRIC, judge=judge)
        assert rec.requests == []
        grade = await rubric("hi", reference=None)
        assert judge.started and grade.status == "partial" and not grade.passed
        client = judge._client
        assert client is not None and client._session is not None
        async with judge:
            pass
        assert client._session is None
        await judge.aclose()  # idempotent
        with pytest.raises(UsageError, match="was closed"):
            await judge.complete([{"role": "user", "content": "x"}], sampling=JudgeSampling())


def test_session_closes_when_its_event_loop_ends() -> None:
    rec = Recorder(honest("yes", "fine"))
    judges: list[LazyJudge] = []

    async def one_grade() -> Any:
        async with FakeChatServer(responder=rec) as server:
            judge = LazyJudge("m", base_url=server.base_url)
            judges.append(judge)
            await load_rubric(RUBRIC, judge=judge)("hi", reference=None)
            return judge._client

    client = asyncio.run(one_grade())
    assert client is not None and client._session is None  # closed by the loop's shutdown
    judges[0].close()


async def test_unreachable_judge_is_a_judge_error() -> None:
    judge = LazyJudge("m", base_url="http://127.0.0.1:9/v1", options=JudgeOptions(max_retries=0, timeout_s=2))
    grade = await load_rubric(RUBRIC, judge=judge)("hi", reference=None)
    assert grade.status == "error" and "ModelUnreachableError" in grade.checks[1].reason
    await judge.aclose()


def test_remote_judge_needs_a_url() -> None:
    with pytest.raises(UsageError, match="needs a base URL"):
        LazyJudge("gpt-judge")
