"""Model errors that stop a run, bounded Retry-After, and --retry-errors."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from graders.exact import ExactGrader
from hub import SingleTurnEnv
from hub.env.errors import ModelConfigError, ModelError
from hub.env.types import Message, Sampling
from hub.run.client import ClientOptions, OpenAIClient
from hub.run.fake_server import FakeChatServer
from hub.run.rundir import FAILED_FILE, RunConfig, RunDir
from hub.run.runner import Runner
from tests.conftest import correct_responder, make_tasks

MSGS = [Message(role="user", content="What is 1 + 1?")]
Handler = Callable[[web.Request], Any]


@asynccontextmanager
async def serve(handler: Handler) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


def _opts(url: str, **kw: Any) -> ClientOptions:
    return ClientOptions(base_url=url, model="m", backoff_base_s=0.01, backoff_max_s=0.02, **kw)


@pytest.mark.parametrize(
    ("status", "body", "fatal"),
    [
        (404, {"error": {"message": "The model `m` does not exist."}}, True),
        (400, {"error": {"message": "temperature must be <= 2"}}, True),
        (422, {"detail": "unknown field top_k"}, True),
        (400, {"error": {"message": "This model's maximum context length is 2048 tokens"}}, False),
        (413, {"error": {"message": "payload too large"}}, False),
    ],
)
async def test_client_errors_that_no_retry_can_fix(status: int, body: dict[str, Any], fatal: bool) -> None:
    """Run-wide refusals stop the run with the server's own message; per-request ones do not."""
    calls = 0

    async def reply(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        return web.json_response(body, status=status)

    async with serve(reply) as url, OpenAIClient(_opts(url)) as client:
        expected = ModelConfigError if fatal else ModelError
        with pytest.raises(expected) as info:
            await client.chat(MSGS, sampling=Sampling())
    assert isinstance(info.value, ModelConfigError) == fatal
    message = json.dumps(body).split('": "')[-1].rstrip('"}')
    assert message in str(info.value) and "{" not in str(info.value)  # the message, not the JSON
    assert calls == 1  # never retried


async def test_retry_after_is_bounded_by_the_request_timeout() -> None:
    """A server asking to come back in an hour is retried after at most the timeout (0.5 s)."""
    async with FakeChatServer(schedule=["429", "ok"], retry_after_s=3600) as srv:
        async with OpenAIClient(_opts(srv.base_url, timeout_s=0.5)) as client:
            t0 = time.perf_counter()
            c = await asyncio.wait_for(client.chat(MSGS, sampling=Sampling()), 60)  # not 3600 s
            waited = time.perf_counter() - t0
    assert c.attempts == 2
    assert waited >= 0.45


async def test_an_unknown_model_mid_run_stops_early_with_a_resume_hint(
    config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    """The endpoint answers 4 requests, then says the model is gone: the run stops at once
    (not one error per remaining rollout), keeps what finished, and says how to go on."""
    served = 0

    async def reply(request: web.Request) -> web.Response:
        nonlocal served
        served += 1
        if served > 4:
            return web.json_response({"error": {"message": "model m was unloaded"}}, status=404)
        data = await request.json()
        text = correct_responder(data)
        return web.json_response(
            {"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
        )

    env = SingleTurnEnv(id="toy", version="1.0.0", tasks=make_tasks(10), grader=ExactGrader())
    config = config_factory(num_tasks=10, rollouts=4)
    rd = RunDir(tmp_path)
    rd.create(config)
    async with serve(reply) as url, OpenAIClient(_opts(url)) as client:
        runner = Runner(env=env, client=client, config=config, rundir=rd, concurrency=1)
        with pytest.raises(ModelConfigError) as info:
            await runner.run(list(env.tasks("test")))
    text = str(info.value)
    assert "model m was unloaded" in text
    assert "4 of 40 rollouts are saved" in text and f"verihub eval --resume {tmp_path}" in text
    assert served == 5
    saved = list(rd.iter_rollouts())
    assert len(saved) == 4 and all(r.error is None for r in saved)


# -- --retry-errors ------------------------------------------------------------------------------
async def _run(env: SingleTurnEnv, server: FakeChatServer, config: RunConfig, rd: RunDir, **kw: Any) -> Any:
    opts = ClientOptions(
        base_url=server.base_url, model="fake", backoff_base_s=0.01, backoff_max_s=0.02, max_retries=0
    )
    async with OpenAIClient(opts) as client:
        runner = Runner(env=env, client=client, config=config, rundir=rd, concurrency=1, **kw)
        return await runner.run(list(env.tasks("test")))


async def test_retry_errors_reruns_failed_rollouts_and_keeps_the_attempts(
    config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    env = SingleTurnEnv(id="toy", version="1.0.0", tasks=make_tasks(6), grader=ExactGrader())
    config = config_factory(rollouts=2)
    rd = RunDir(tmp_path)
    rd.create(config)
    async with FakeChatServer(responder=correct_responder, schedule=["ok", "500", "ok"]) as bad:
        first = await _run(env, bad, config, rd)
    assert first.n_errors == 4
    failed_keys = {(r.task_id, r.rollout_index) for r in rd.iter_rollouts() if r.error is not None}
    async with FakeChatServer(responder=correct_responder) as good:
        plain = await _run(env, good, config, rd)  # a plain resume leaves them as they are
        assert plain.n_errors == 4
        summary = await _run(env, good, config, rd, retry_errors=True)
    assert summary.n_errors == 0 and summary.n_rollouts == 12
    records = list(rd.iter_rollouts())
    assert Counter((r.task_id, r.rollout_index) for r in records) == Counter(
        {(f"t{i}", j): 1 for i in range(6) for j in range(2)}
    )
    retried = {(r.task_id, r.rollout_index): r.extra.get("failed_attempts") for r in records}
    for key, attempts in retried.items():
        if key in failed_keys:
            assert attempts and attempts[0]["error"]["kind"] == "model"
            assert "HTTP 500" in attempts[0]["error"]["message"]
        else:
            assert attempts is None
    audit = [json.loads(line) for line in (tmp_path / FAILED_FILE).read_text().splitlines()]
    assert {(a["task_id"], a["rollout_index"]) for a in audit} == failed_keys
    assert all(a["error"]["kind"] == "model" for a in audit)


def test_retry_errors_needs_resume(tmp_path: Path) -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "hub", "eval", "arith", "-m", "x", "--base-url", "http://127.0.0.1:1/v1"]
        + ["--retry-errors", "--out", str(tmp_path / "r")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1 and "--retry-errors needs --resume" in result.stderr
