"""Rubric files: JSON and YAML load to the same spec; every bad field is named in the error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graders.rubric import (
    RubricError,
    RubricFormatError,
    UnknownGraderError,
    load_rubric,
    load_rubric_spec,
    parse_rubric_spec,
)

YAML = """\
format: 1
id: demo
pass_threshold: 0.75
judge:
  samples: 3
checks:
  - id: has-title
    kind: regex
    pattern: '^# '
    multiline: true
  - id: tone
    kind: judge
    question: Is it polite?
    choices: ["no", "somewhat", "yes"]
    weight: 2
"""


def base(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"id": "r", "checks": [{"id": "c", "kind": "contains", "text": "x"}]}
    data.update(over)
    return data


def problems(data: Any) -> str:
    with pytest.raises(RubricFormatError) as info:
        parse_rubric_spec(data, source="r.yaml")
    return str(info.value)


def test_yaml_and_json_agree(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text(YAML)
    spec = load_rubric_spec(tmp_path / "r.yaml")
    import yaml

    (tmp_path / "r.json").write_text(json.dumps(yaml.safe_load(YAML)))
    assert load_rubric_spec(tmp_path / "r.json") == spec
    assert spec.total_weight == 3 and spec.judge.samples == 3
    assert spec.judge_checks()[0].choice_scores() == (0.0, 0.5, 1.0)


@pytest.mark.parametrize(
    ("check", "expected"),
    [
        (
            {"id": "c", "kind": "regex", "pattern": "("},
            "checks[0] (id 'c').pattern: invalid regular expression",
        ),
        ({"id": "c", "kind": "nope"}, "(id 'c'): unknown kind 'nope'; use one of: regex, contains, length"),
        ({"id": "c"}, "(id 'c'): a check needs a kind: one of regex, contains"),
        ({"id": "c", "kind": "judge", "question": "q", "choices": ["yes"]}, "(id 'c').choices"),
        ({"id": "c", "kind": "judge", "question": "q", "choices": ["a", "a"]}, "choices must be distinct"),
        (
            {"id": "c", "kind": "judge", "question": "q", "choices": ["a", "b"], "scores": [1, 0]},
            "scores [1, 0] must increase strictly",
        ),
        (
            {"id": "c", "kind": "judge", "question": "q", "choices": ["a", "b"], "scores": [0, 0.5, 1]},
            "scores has 3 entries but choices has 2",
        ),
        ({"id": "c", "kind": "length"}, "needs min, max or both"),
        ({"id": "c", "kind": "length", "min": 5, "max": 2}, "min (5) is greater than max (2)"),
        (
            {"id": "c", "kind": "contains", "text": "x", "wieght": 2},
            "checks[0] (id 'c').wieght: unknown field; did you mean 'weight'?",
        ),
        ({"id": "c", "kind": "contains", "text": ""}, "empty strings always match"),
        (
            {"id": "c", "kind": "function", "function": "os.system"},
            "(id 'c').function: 'os.system' is not an import path; write it as 'package.module:function'",
        ),
        (
            {"id": "bad id!", "kind": "contains", "text": "x"},
            "checks[0] (id 'bad id!').id: 'bad id!' is not a valid id: use 1-64 letters",
        ),
        ({"kind": "contains", "text": "x"}, "checks[0].id: Field required"),
    ],
)
def test_bad_checks_are_named(check: dict[str, Any], expected: str) -> None:
    message = problems(base(checks=[check]))
    assert expected in message, message
    assert message.startswith("r.yaml is not a valid rubric") and "docs/rubrics.md" in message
    # one line per real problem: no raw patterns, no pydantic prefixes, no knock-on errors
    assert message.count("\n  - ") == 1, message
    assert "Value error" not in message and "^[" not in message and "at least 1 item" not in message


@pytest.mark.parametrize("scores", [[0, 0], [0.5, 0.5], [0, 1, 1], [0, 0, 1], [1, 0.5, 0]])
def test_judge_scores_must_increase_strictly(scores: list[float]) -> None:
    choices = ["bad", "ok", "good"][: len(scores)] if len(scores) == 3 else ["no", "yes"]
    check = {"id": "c", "kind": "judge", "question": "q", "choices": choices, "scores": scores}
    message = problems(base(checks=[check]))
    assert "must increase strictly" in message and "only the best one passes" in message
    fixed = [0.0, 0.4, 0.9] if len(scores) == 3 else [0.2, 1.0]
    spec = parse_rubric_spec(base(checks=[{**check, "scores": fixed}]))
    assert spec.judge_checks()[0].choice_scores() == tuple(fixed)


def test_several_bad_checks_give_one_line_each() -> None:
    checks = [
        {"id": "a", "kind": "length"},
        {"id": "b", "kind": "function", "function": "pkg.mod.func"},
        {"id": "c", "kind": "contains", "text": "x"},
    ]
    message = problems(base(checks=checks, treshold=1, judge={"sample": 2}))
    lines = [line for line in message.splitlines() if line.startswith("  - ")]
    assert lines == [
        "  - checks[0] (id 'a'): a length check needs min, max or both",
        "  - checks[1] (id 'b').function: 'pkg.mod.func' is not an import path; "
        "write it as 'package.module:function'",
        "  - judge.sample: unknown field; did you mean 'samples'?",
        "  - treshold: unknown field; did you mean 'pass_threshold'?",
    ], message


def test_rubric_level_errors() -> None:
    two = [{"id": "a", "kind": "contains", "text": "x"}, {"id": "a", "kind": "contains", "text": "y"}]
    assert "duplicate check id 'a'" in problems(base(checks=two))
    zero = [{"id": "a", "kind": "contains", "text": "x", "weight": 0}]
    assert "weights of the checks sum to 0" in problems(base(checks=zero))
    assert "checks: a rubric needs at least one check" in problems(base(checks=[]))
    assert "checks: must be a list of checks, got str" in problems(base(checks="abc"))
    assert "checks[0]: a check must be a mapping with an id and a kind" in problems(base(checks=["x"]))
    assert "pass_threshold" in problems(base(pass_threshold=2))
    assert "judge.samples" in problems(base(judge={"samples": 0}))
    assert "the top level must be a mapping" in problems(["not", "a", "mapping"])
    message = problems(base(checks=[{"id": "a", "kind": "length"}, {"id": "b", "kind": "regex"}]))
    assert "checks[0] (id 'a')" in message and "checks[1] (id 'b').pattern: Field required" in message


def test_file_errors(tmp_path: Path) -> None:
    dup = tmp_path / "dup.yaml"
    dup.write_text("id: a\nid: b\nchecks: []\n")
    with pytest.raises(RubricFormatError, match="duplicate key 'id'"):
        load_rubric_spec(dup)
    dup_json = tmp_path / "dup.json"
    dup_json.write_text('{"id": "a", "id": "b"}')
    with pytest.raises(RubricFormatError, match="duplicate key 'id'"):
        load_rubric_spec(dup_json)
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: [unclosed\n")
    with pytest.raises(RubricFormatError, match="invalid YAML"):
        load_rubric_spec(bad)
    with pytest.raises(RubricFormatError, match="unknown file type '.toml'"):
        load_rubric_spec(tmp_path / "r.toml")
    with pytest.raises(RubricFormatError, match="cannot read the file"):
        load_rubric_spec(tmp_path / "missing.yaml")


def test_yaml_is_loaded_safely(tmp_path: Path) -> None:
    evil = tmp_path / "evil.yaml"
    evil.write_text("id: !!python/object/apply:os.system ['echo pwned']\nchecks: []\n")
    with pytest.raises(RubricFormatError, match="invalid YAML"):
        load_rubric_spec(evil)


def test_references_resolved_on_load() -> None:
    with pytest.raises(UnknownGraderError, match="Did you mean 'exact'"):
        load_rubric(base(checks=[{"id": "g", "kind": "grader", "grader": "exakt"}]))
    with pytest.raises(RubricError, match="cannot import 'no_such_pkg.mod'"):
        load_rubric(base(checks=[{"id": "f", "kind": "function", "function": "no_such_pkg.mod:f"}]))
    with pytest.raises(RubricError, match="has no attribute 'nope'"):
        load_rubric(base(checks=[{"id": "f", "kind": "function", "function": "json:nope"}]))
    with pytest.raises(RubricError, match="cannot build grader 'exact'"):
        load_rubric(base(checks=[{"id": "g", "kind": "grader", "grader": "exact", "options": {"bogus": 1}}]))
    judged = base(checks=[{"id": "j", "kind": "judge", "question": "q", "choices": ["no", "yes"]}])
    with pytest.raises(RubricError, match=r"has judge checks \(j\) but no judge model"):
        load_rubric(judged)


def test_specs_are_frozen() -> None:
    spec = parse_rubric_spec(base())
    with pytest.raises(Exception, match="frozen"):
        setattr(spec, "id", "other")  # noqa: B010 - frozen models refuse it
