"""Core records and the environment API."""

from __future__ import annotations

import itertools

import pytest
from pydantic import ValidationError

from graders.exact import ExactGrader
from graders.grade import Grade
from hub import Message, SingleTurnEnv, Task, ToolCall
from hub.env.errors import EnvironmentDefinitionError, UnknownSplitError


def test_grade_keeps_errors_apart() -> None:
    assert Grade.error("boom").is_error and not Grade.incorrect().is_error
    with pytest.raises(ValidationError):
        Grade(score=1.0, passed=True, status="timeout")
    with pytest.raises(ValidationError):
        Grade(score=1.5, passed=True, status="correct")
    with pytest.raises(ValidationError, match="incorrect"):  # a grade cannot say wrong and count as solved
        Grade(score=0.0, passed=True, status="incorrect")
    g = Grade.from_score(0.5)
    assert g.status == "partial" and not g.passed
    assert Grade.from_score(1.0).status == "correct"


def test_task_messages_and_openai_format() -> None:
    t = Task(id="a", prompt="hi", answer="x")
    msgs = t.messages("be brief")
    assert [m.role for m in msgs] == ["system", "user"]
    call = Message(role="assistant", tool_calls=(ToolCall(id="c", name="f", arguments="{}"),))
    wire = call.to_openai()
    assert wire["tool_calls"][0]["function"]["name"] == "f" and wire["content"] is None


def test_task_is_frozen() -> None:
    t = Task(id="a", prompt="p")
    with pytest.raises(ValidationError):
        t.id = "b"  # type: ignore[misc]


def test_single_turn_env_splits_and_duplicates() -> None:
    env = SingleTurnEnv(id="e", tasks={"train": [Task(id="a", prompt="p")], "test": []}, grader=ExactGrader())
    assert env.splits == ("train", "test")
    with pytest.raises(UnknownSplitError, match="train, test"):
        env.tasks("dev")
    with pytest.raises(EnvironmentDefinitionError, match="duplicate"):
        SingleTurnEnv(
            id="e", tasks=[Task(id="a", prompt="p"), Task(id="a", prompt="q")], grader=ExactGrader()
        )


def test_generated_tasks_have_no_fixed_size() -> None:
    def source(split: str, seed: int):  # type: ignore[no-untyped-def]
        for i in itertools.count():
            yield Task(id=f"{seed}-{i}", prompt="p")

    env = SingleTurnEnv(id="gen", tasks=source, grader=ExactGrader())
    assert env.num_tasks("test") is None
    assert [t.id for t in itertools.islice(env.tasks("test", seed=3), 2)] == ["3-0", "3-1"]
