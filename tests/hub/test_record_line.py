"""A rollout's line in ``rollouts.jsonl`` holds the same data as pydantic's own JSON of it.

The line is written by a plain JSON encoder for speed; these records must read back equal to
what ``model_dump_json`` would have written, and values it cannot write go to pydantic."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from hub.env.types import Check, Grade, Message, Rollout, RolloutError, Timing, ToolCall, Usage
from hub.run.records import rollout_line


def _rollout(**changes: Any) -> Rollout:
    fields: dict[str, Any] = {
        "task_id": "t-1",
        "rollout_index": 2,
        "messages": [
            Message(role="system", content="Be brief."),
            Message(role="user", content='Compute 2 + 2.\n\tReply: "Answer: <n>" \u00e9\u4e2d\x01'),
            Message(
                role="assistant",
                content=None,
                tool_calls=(ToolCall(id="c1", name="calc", arguments='{"x": 1}'),),
            ),
            Message(role="tool", content="4", tool_call_id="c1", name="calc"),
            Message(role="assistant", content="Answer: 4"),
        ],
        "usage": Usage(prompt_tokens=12, completion_tokens=5),
        "timing": Timing(
            started_at=1795783229.5852835, model_s=0.01, env_s=1e-7, grade_s=2.5e-5, total_s=3.0
        ),
        "turns": 2,
        "grade": Grade(
            score=0.5,
            passed=False,
            status="partial",
            extracted="4",
            reason="half",
            checks=(Check(name="a", score=1.0, passed=True), Check(name="b", score=0.0, passed=False)),
        ),
        "reward": 0.5,
        "extra": {
            "metrics": {"acc": [1.0, 2.0]},
            "tokens": [{"ids": (1, 2), "p": [-0.5, -1e-12]}],
            "n": None,
        },
    }
    fields.update(changes)
    return Rollout(**fields)


def _pydantic_line(r: Rollout) -> dict[str, Any]:
    derived = r.completion == r.messages[-1].content
    data: dict[str, Any] = json.loads(r.model_dump_json(exclude={"completion"} if derived else None))
    return data


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"completion": "not the last message"},
        {"grade": None, "reward": None, "error": RolloutError(kind="model", message="HTTP 500")},
        {"extra": {}, "truncated": True},
        {"extra": {"nested": {"deep": [[1, 2], {"k": True}]}, "big": 10**30}},
    ],
)
def test_the_line_holds_what_pydantic_writes(
    changes: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    r = _rollout(**changes)
    expected = _pydantic_line(r)

    def not_here(*args: object, **kwargs: object) -> str:
        raise AssertionError("plain records are written without pydantic's serializer")

    monkeypatch.setattr(Rollout, "model_dump_json", not_here)
    line = rollout_line(r)
    monkeypatch.undo()
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == expected
    assert Rollout.model_validate_json(line) == Rollout.model_validate_json(r.model_dump_json())


@pytest.mark.parametrize(
    "extra",
    [
        {"x": math.inf},  # pydantic writes null, a plain encoder would write Infinity
        {"x": b"bytes"},  # not JSON data: pydantic's own conversion
        {"x": {"set"}},
    ],
)
def test_values_a_plain_encoder_cannot_write_go_to_pydantic(extra: dict[Any, Any]) -> None:
    r = _rollout(extra=extra)
    line = rollout_line(r)
    assert json.loads(line) == _pydantic_line(r)


def test_a_lone_surrogate_is_replaced_not_lost() -> None:
    r = _rollout(messages=[Message(role="user", content="q"), Message(role="assistant", content="A\ud800")])
    back = Rollout.model_validate_json(rollout_line(r))
    assert back.completion == "A\ufffd"
