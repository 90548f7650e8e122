"""graders.ifeval against the reference implementation's verdicts on GPT-4 responses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graders.ifeval import check
from hub.review.testing import shared_data_dir


@pytest.fixture(scope="module")
def agreement() -> dict[str, Any]:
    try:
        path: Path = shared_data_dir() / "ifeval" / "gpt4_responses_with_reference_verdicts.jsonl"
    except FileNotFoundError:
        pytest.skip("shared test data not available")
    if not path.exists():
        pytest.skip(f"{path} missing")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    n = agree_strict = agree_loose = ours_prompt = ref_prompt = ours_prompt_loose = ref_prompt_loose = 0
    for row in rows:
        verdict = check(
            row["response"],
            instruction_id_list=row["instruction_id_list"],
            kwargs=row["kwargs"],
            prompt=row["prompt"],
        )
        n += len(row["strict"])
        agree_strict += sum(a == b for a, b in zip(verdict.strict, row["strict"], strict=True))
        agree_loose += sum(a == b for a, b in zip(verdict.loose, row["loose"], strict=True))
        ours_prompt += verdict.prompt_strict
        ref_prompt += all(row["strict"])
        ours_prompt_loose += verdict.prompt_loose
        ref_prompt_loose += all(row["loose"])
    return {
        "strict": agree_strict / n,
        "loose": agree_loose / n,
        "prompt_gap": abs(ours_prompt - ref_prompt) / len(rows),
        "prompt_gap_loose": abs(ours_prompt_loose - ref_prompt_loose) / len(rows),
    }


def test_per_instruction_agreement(agreement: dict[str, Any]) -> None:
    assert agreement["strict"] >= 0.995
    assert agreement["loose"] >= 0.995


def test_prompt_level_accuracy_matches_reference(agreement: dict[str, Any]) -> None:
    assert agreement["prompt_gap"] <= 0.005
    assert agreement["prompt_gap_loose"] <= 0.005
