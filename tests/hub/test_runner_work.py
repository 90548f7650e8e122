"""The work a run does per task and per answer: a generated split is walked once to size and
hash it and the client keeps token totals without building records per answer."""

from __future__ import annotations

import gc
import importlib.util
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.env import grading
from hub.env.grading import TaskSelection
from hub.env.types import Grade, Message, Sampling, Task
from hub.registry.entrypoints import load_environment
from hub.run import client as client_module
from hub.run import evaluate as evaluate_module
from hub.run import runner as runner_module
from hub.run.client import ClientOptions, OpenAIClient
from hub.run.evaluate import prepare_run
from hub.run.fake_server import FakeChatServer


def test_a_generated_split_is_walked_once_to_size_and_hash_it(monkeypatch: pytest.MonkeyPatch) -> None:
    env = load_environment("arith")
    generated = 0
    original = env.tasks

    def counted(split: str = "test", *, seed: int = 0) -> Iterator[Task]:
        nonlocal generated
        for task in original(split, seed=seed):
            generated += 1
            yield task

    monkeypatch.setattr(env, "tasks", counted)
    monkeypatch.setattr(evaluate_module, "open_environment", lambda *a, **k: env)
    _, tasks, config = prepare_run(
        "arith",
        model="m",
        base_url="http://127.0.0.1:1/v1",
        num_tasks=7,
        rollouts=1,
        max_turns=None,
        seed=3,
        split="test",
        sampling=None,
        env_args=None,
        group_advantages=False,
    )
    assert generated == 7  # not once to count and again to hash
    assert config.num_tasks == 7
    assert config.tasks_sha256 == TaskSelection(env, split="test", seed=3, num_tasks=7).sha256()
    assert [t.id for t in tasks] == [t.id for t in TaskSelection(env, split="test", seed=3, num_tasks=7)]


@pytest.mark.parametrize("keep_bytes", [1 << 20, 100])
def test_a_small_selection_is_kept_after_its_hash(monkeypatch: pytest.MonkeyPatch, keep_bytes: int) -> None:
    env = load_environment("arith")
    calls = 0
    original = env.tasks

    def counted(split: str = "test", *, seed: int = 0) -> Iterable[Task]:
        nonlocal calls
        calls += 1
        return original(split, seed=seed)

    monkeypatch.setattr(env, "tasks", counted)
    monkeypatch.setattr(grading, "KEEP_TASK_BYTES", keep_bytes)
    selection = TaskSelection(env, split="test", seed=5, num_tasks=20)
    calls = 0
    digest = selection.sha256()
    first, second = list(selection), list(selection)
    kept = keep_bytes > 20 * 300  # arith's tasks hash to under 300 bytes each
    assert calls == (1 if kept else 3)  # the hash pass, and each later pass when not kept
    fresh = list(TaskSelection(env, split="test", seed=5, num_tasks=20))
    assert first == second == fresh and len(first) == 20
    assert selection.sha256() == digest


async def test_client_token_totals_add_up_over_requests() -> None:
    async with FakeChatServer() as server:
        options = ClientOptions(base_url=server.base_url, model="m")
        async with OpenAIClient(options) as client:
            for _ in range(3):
                c = await client.chat([Message(role="user", content="hi")], sampling=Sampling())
                assert c.attempts == 1
    assert (client.usage.prompt_tokens, client.usage.completion_tokens) == (30, 9)
    assert client.n_requests == 3


# -- the cheaper encodings give the same bytes -------------------------------------------------
_json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=12)
)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=6), inner, max_size=3),
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    prompt=st.one_of(
        st.text(max_size=30),
        st.lists(st.text(max_size=10), min_size=1, max_size=3).map(
            lambda texts: tuple(Message(role="user", content=t) for t in texts)
        ),
    ),
    answer=st.one_of(_json_values, st.just(Grade(score=1.0, passed=True, status="correct"))),
    metadata=st.dictionaries(st.text(max_size=8), _json_values, max_size=4),
)
def test_a_task_hashes_as_json_dumps_of_its_dump_would(
    prompt: Any, answer: Any, metadata: dict[str, Any]
) -> None:
    task = Task(id="t", prompt=prompt, answer=answer, metadata=metadata)
    expected = json.dumps(task.model_dump(mode="python"), sort_keys=True, default=repr).encode()
    assert grading.task_json(task) == expected


@pytest.mark.parametrize(
    "body",
    [
        {
            "model": "m",
            "messages": [{"role": "user", "content": "héllo \u2028 \U0001f600"}],
            "max_tokens": 16,
        },
        {"model": "m", "messages": [{"role": "user", "content": "lone \ud800 surrogate"}]},
        {
            "model": "m",
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
            "seed": 3,
        },
    ],
)
def test_a_request_body_is_the_json_of_its_fields(body: dict[str, Any]) -> None:
    assert json.loads(client_module._json_body(body)) == body


def test_the_media_type_of_a_content_type_ignores_case_and_parameters() -> None:
    assert client_module._media_type("Text/Event-Stream; charset=utf-8") == "text/event-stream"
    assert client_module._media_type("application/json") == "application/json"
    assert client_module._media_type(None) == ""


def test_a_run_collects_young_objects_less_often_and_restores_the_threshold_after() -> None:
    before = gc.get_threshold()
    with runner_module._fewer_young_collections():
        with runner_module._fewer_young_collections():  # two runs at once in one process
            assert gc.get_threshold()[0] >= 10_000
        assert gc.get_threshold()[0] >= 10_000  # the first run still goes
    assert gc.get_threshold() == before


def test_every_piece_the_instruction_bench_counts_runs() -> None:
    path = Path(__file__).resolve().parents[2] / "bench" / "bench_runner_pieces.py"
    spec = importlib.util.spec_from_file_location("bench_runner_pieces", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = {name: call() for name, call in module.pieces().items()}
    assert json.loads(results["request_body"]) == json.loads(results["json_dumps_body"])
    assert (
        results["parse_answer"].message.content
        == results["json_loads_answer"]["choices"][0]["message"]["content"]
    )
    assert results["line"].endswith(b"\n") and b'"completion"' not in results["line"]
