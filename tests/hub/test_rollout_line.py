"""A rollout's line in ``rollouts.jsonl`` is pydantic-core's JSON of the record, whichever encoder
wrote it: the fast one (orjson, on the records' fields) must give the same bytes for every rollout
it accepts, and hand everything else to pydantic-core."""

from __future__ import annotations

import dataclasses
import datetime
import enum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.env.types import Grade, Message, Rollout, RolloutError, Timing, ToolCall, Usage
from hub.run import records
from hub.run.records import read_records, rollout_line


def reference_line(rollout: Rollout) -> bytes:
    """What ``rollouts.jsonl`` held before the fast encoder: pydantic-core's JSON of the record
    (``completion`` left out when it is the last assistant message's text)."""
    derived = rollout.completion == next(
        (m.content or "" for m in reversed(rollout.messages) if m.role == "assistant"), ""
    )
    return rollout.model_dump_json(exclude={"completion"} if derived else None).encode() + b"\n"


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    ONE = 1


class Tag(str):
    """A subclass of str: orjson would write it itself; it must go to pydantic-core."""


@dataclasses.dataclass
class Point:
    x: int
    y: float


_text = st.text(max_size=16)  # any code point but lone surrogates (those have their own test)
_plain = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    _text,
)
_odd = st.one_of(  # values orjson refuses or would write differently: pydantic-core writes these
    st.integers(min_value=2**64, max_value=2**80),
    st.integers(min_value=-(2**80), max_value=-(2**63) - 1),
    st.frozensets(st.integers(0, 9), max_size=3),
    st.binary(max_size=6).filter(lambda b: b.isascii()),
    st.datetimes(timezones=st.none() | st.just(datetime.timezone.utc)),
    st.dates(),
    st.decimals(allow_nan=False, allow_infinity=False, places=3),
    st.just(Colour.RED),
    st.just(Level.ONE),
    _text.map(Tag),
    st.builds(Point, x=st.integers(-5, 5), y=st.floats(allow_nan=False)),
    st.dictionaries(st.integers(0, 9), st.integers(0, 9), min_size=1, max_size=2),
)
_values = st.recursive(
    _plain,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner, inner),
        st.dictionaries(_text, inner, max_size=3),
    ),
    max_leaves=10,
)
_messages = st.lists(
    st.builds(
        Message,
        role=st.sampled_from(["system", "user", "assistant", "tool"]),
        content=st.none() | _text,
        tool_calls=st.none()
        | st.tuples(st.builds(ToolCall, id=_text, name=_text, arguments=_text)).map(tuple),
        tool_call_id=st.none() | _text,
        name=st.none() | _text,
    ),
    max_size=4,
)
_grades = st.none() | st.builds(
    Grade.from_score,
    st.floats(0.0, 1.0),
    extracted=st.none() | _text,
    reason=_text,
)


@st.composite
def rollouts(draw: st.DrawFn, extra_values: st.SearchStrategy[Any] = _values) -> Rollout:
    messages = draw(_messages)
    fields: dict[str, Any] = {
        "task_id": draw(_text),
        "rollout_index": draw(st.integers(0, 2**40)),
        "messages": messages,
        "reward": draw(st.none() | st.floats(0.0, 1.0)),
        "passed": draw(st.booleans()),
        "grade": draw(_grades),
        "usage": Usage(prompt_tokens=draw(st.integers(0, 2**40)), completion_tokens=draw(st.integers(0, 9))),
        "timing": Timing(
            started_at=draw(st.floats(0, 2e9)),
            model_s=draw(st.floats(allow_nan=True)),
            total_s=draw(st.floats(0, 1e3)),
        ),
        "error": draw(st.none() | st.builds(RolloutError, kind=st.just("model"), message=_text)),
        "turns": draw(st.integers(0, 9)),
        "extra": draw(st.dictionaries(_text, extra_values, max_size=3)),
    }
    if draw(st.booleans()):  # a completion that is not the last answer's text: written out
        fields["completion"] = draw(_text)
    return Rollout(**fields)


@settings(max_examples=400, deadline=None)
@given(rollouts())
def test_the_line_is_pydantic_cores_json_of_the_record(rollout: Rollout) -> None:
    assert rollout_line(rollout) == reference_line(rollout)


@settings(max_examples=200, deadline=None)
@given(rollouts(extra_values=st.one_of(_values, _odd, st.lists(_odd, min_size=1, max_size=2))))
def test_values_only_pydantic_core_encodes_are_written_by_it(rollout: Rollout) -> None:
    assert rollout_line(rollout) == reference_line(rollout)


def test_the_fast_encoder_takes_the_usual_rollout() -> None:
    """The bytes above would be equal if the fast path never ran: it must take a plain rollout."""
    rollout = Rollout(
        task_id="t",
        rollout_index=0,
        messages=[Message(role="user", content="2 + 2?"), Message(role="assistant", content="4")],
        reward=1.0,
        passed=True,
        grade=Grade.correct(extracted="4"),
        timing=Timing(started_at=1.0, total_s=0.5),
        extra={"metrics": {"acc": [1.0, 1.0]}},
    )
    assert records._fast_line(rollout, derived=True) == reference_line(rollout)


@pytest.mark.parametrize(
    "odd",
    [2**70, {1: 2}, frozenset({1}), b"x", Tag("x"), Point(1, 2.0), datetime.date(2026, 1, 1)],
)
def test_the_fast_encoder_refuses_what_pydantic_core_writes_its_own_way(odd: Any) -> None:
    rollout = Rollout(
        task_id="t", rollout_index=0, messages=[], timing=Timing(started_at=0.0), extra={"x": odd}
    )
    with pytest.raises(TypeError):
        records._fast_line(rollout, derived=True)
    assert rollout_line(rollout) == reference_line(rollout)


def test_a_subclassed_record_goes_to_pydantic_core() -> None:
    class Noted(Message):
        note: str = "kept"

    rollout = Rollout(
        task_id="t",
        rollout_index=0,
        messages=[Noted(role="user", content="hi")],
        timing=Timing(started_at=0.0),
    )
    with pytest.raises(TypeError):
        records._fast_line(rollout, derived=True)
    assert rollout_line(rollout) == reference_line(rollout)


def test_lone_surrogates_are_replaced_and_the_line_reads_back(tmp_path: Any) -> None:
    rollout = Rollout(
        task_id="t",
        rollout_index=0,
        messages=[Message(role="assistant", content="a \ud800 b")],
        timing=Timing(started_at=0.0),
        extra={"note": "\udfff"},
    )
    line = rollout_line(rollout)
    path = tmp_path / "rollouts.jsonl"
    path.write_bytes(line)
    (back,) = read_records(path)
    assert back.messages[0].content == "a \ufffd b"
    assert back.completion == "a \ufffd b"
    assert back.extra == {"note": "\ufffd"}
