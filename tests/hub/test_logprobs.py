"""--logprobs: token ids and log-probabilities recorded per answer and carried by export."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from hub.run.completions import _token_logprobs
from hub.run.evaluate import evaluate
from hub.run.rundir import RunDir
from hub.train.export import export_run


@asynccontextmanager
async def token_server(asked: list[bool]) -> AsyncIterator[str]:
    """Answers arith level-1 tasks right every other request, with llama.cpp-style logprobs (ids)."""

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        asked.append(bool(body.get("logprobs")))
        a, op, b = re.search(r"(-?\d+) ([-+*]) (-?\d+)", body["messages"][-1]["content"]).groups()  # type: ignore[union-attr]
        value = {"+": int(a) + int(b), "-": int(a) - int(b), "*": int(a) * int(b)}[op] + len(asked) % 2
        text = f"Answer: {value}"
        pieces = ["Answer", ":", " ", str(value)]
        content = [
            {"id": 100 + i, "token": t, "logprob": -0.25 * i, "bytes": list(t.encode())}
            for i, t in enumerate(pieces)
        ]
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop",
        }
        if body.get("logprobs"):
            choice["logprobs"] = {"content": content}
        return web.json_response({"choices": [choice], "usage": {"prompt_tokens": 5, "completion_tokens": 4}})

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"data": []})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("logprobs", [True, False])
def test_tokens_are_recorded_and_exported(logprobs: bool, tmp_path: Path) -> None:
    asked: list[bool] = []

    async def go() -> None:
        async with token_server(asked) as url:
            await evaluate(
                "arith", model="m", base_url=url, out=tmp_path / "run", num_tasks=6, rollouts=2,
                env_args={"difficulty": 1}, logprobs=logprobs,
            )  # fmt: skip

    asyncio.run(go())
    assert asked and all(a == logprobs for a in asked)
    rollouts = list(RunDir(tmp_path / "run").iter_rollouts())
    assert json.loads((tmp_path / "run" / "config.json").read_text())["logprobs"] is logprobs
    if not logprobs:
        assert all("tokens" not in r.extra for r in rollouts)
        return
    for r in rollouts:
        [turn] = r.extra["tokens"]
        assert turn["message_index"] == 1 and r.messages[1].role == "assistant"
        assert turn["tokens"] == ["Answer", ":", " ", r.completion.split()[-1]]
        assert turn["token_ids"] == [100, 101, 102, 103]
        assert turn["logprobs"] == [0.0, -0.25, -0.5, -0.75]
    n = export_run(tmp_path / "run", out=tmp_path / "sft.jsonl")
    records = [json.loads(line) for line in (tmp_path / "sft.jsonl").read_text().splitlines()]
    assert n == len(records) == 12 and all(
        rec["tokens"][0]["token_ids"] == [100, 101, 102, 103] for rec in records
    )
    export_run(tmp_path / "run", out=tmp_path / "pairs.jsonl", pairs=True)
    pairs = [json.loads(line) for line in (tmp_path / "pairs.jsonl").read_text().splitlines()]
    assert all(p["chosen_tokens"][0]["tokens"][:2] == ["Answer", ":"] for p in pairs)
    import datasets

    export_run(tmp_path / "run", out=tmp_path / "hf", fmt="hf")
    ds = datasets.load_from_disk(str(tmp_path / "hf"))
    assert ds[0]["tokens"][0]["logprobs"] == [0.0, -0.25, -0.5, -0.75]


def test_token_ids_from_vllm_forms_and_garbage() -> None:
    entry = [{"token": "token_id:7", "logprob": -1.0}, {"token": "token_id:9", "logprob": -2.0}]
    assert _token_logprobs({"logprobs": {"content": entry}})["token_ids"] == [7, 9]  # type: ignore[index]
    plain = [{"token": "a", "logprob": -1.0}, {"token": "b", "logprob": -2.0}]
    assert _token_logprobs({"logprobs": {"content": plain}, "token_ids": [3, 4]})["token_ids"] == [3, 4]  # type: ignore[index]
    assert _token_logprobs({"logprobs": {"content": plain}})["token_ids"] is None  # type: ignore[index]
    assert _token_logprobs({"logprobs": {"content": [{"token": "a", "logprob": "nan"}]}}) is None
    assert _token_logprobs({"logprobs": {"content": [{"token": "a", "logprob": float("inf")}]}}) is None
    assert _token_logprobs({"logprobs": None}) is None and _token_logprobs({}) is None
