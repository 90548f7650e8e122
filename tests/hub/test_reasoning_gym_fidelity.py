"""``verihub fidelity`` on a reasoning-gym scorer: a label file built by construction
(bench/fidelity_reasoning_gym.py) gives the confusion matrix and rates its scorer implies."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

import hub.cli
from hub.env.difficulty import wilson_interval

rg = pytest.importorskip(
    "reasoning_gym", reason="reasoning-gym is not installed (pip install 'verihub[reasoning-gym]')"
)

from hub.train.reasoning_gym import extract_answer  # noqa: E402

BENCH = Path(__file__).resolve().parents[2] / "bench" / "fidelity_reasoning_gym.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fidelity_reasoning_gym", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(BENCH.parent))  # as when run as a script: it imports the probe script's list
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH.parent))
    return module


@pytest.mark.parametrize("dataset", ["leg_counting", "number_sorting"])
def test_fidelity_counts_what_the_scorer_decides_on_a_constructed_label_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dataset: str
) -> None:
    path = tmp_path / f"{dataset}.jsonl"
    tasks = {t.id: t for t in _bench().label_file(dataset, 6, path)}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert {r["variant"] for r in rows if r["label"]} >= {"gold", "reasoning first", "answer tags"}
    assert {r["variant"] for r in rows if not r["label"]} >= {"cut short", "empty answer"}

    # the verdicts straight from the dataset's own scorer, without the environment or fidelity
    tp = fn = fp = tn = 0
    for row in rows:
        meta = tasks[row["task_id"]].metadata
        data = rg.create_dataset(dataset, seed=meta["rg_seed"], size=meta["rg_index"] + 1)
        entry = data[meta["rg_index"]]
        passed = data.score_answer(answer=extract_answer(row["response"]), entry=entry) == 1.0
        if row["variant"] == "gold":
            assert passed, row
        tp += row["label"] and passed
        fn += row["label"] and not passed
        fp += not row["label"] and passed
        tn += not row["label"] and not passed

    argv = ["fidelity", "reasoning-gym", "--env-arg", f"dataset={dataset}", "--labels", str(path), "--json"]
    with pytest.raises(SystemExit) as exc:
        hub.cli.main(argv)
    assert exc.value.code == 0
    card = json.loads(capsys.readouterr().out)
    assert (card["true_positive"], card["false_negative"], card["false_positive"], card["true_negative"]) == (
        tp,
        fn,
        fp,
        tn,
    )
    assert card["n"] == len(rows) and card["errors"] == 0
    assert card["accuracy"]["k"] == tp + tn
    assert tuple(card["false_positive_rate"]["ci95"]) == pytest.approx(wilson_interval(fp, fp + tn))
    assert tuple(card["false_negative_rate"]["ci95"]) == pytest.approx(wilson_interval(fn, tp + fn))
