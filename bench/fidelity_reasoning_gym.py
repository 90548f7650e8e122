"""reasoning-gym's scorers measured by ``verihub fidelity`` on label files built by construction.

For each dataset, ``--tasks`` test tasks (seed 0, the dataset's default configuration) and, per
task, responses known to be right and known to be wrong:

- right: the reference as the adapter asks for it (``Answer: <ref>``), with reasoning before it,
  with extra spaces and a full stop, in ``<answer>`` tags, and variants a reader accepts for the
  dataset (a number with its unit, hex digits in upper case, a lower-case decryption, a list
  without spaces after its commas);
- wrong: another task's reference, the number off by one, the reference cut short, one letter
  changed, two neighbouring items or letters swapped, an empty answer.

A variant equal to the reference after trimming is dropped, as is a wrong one that a reader
could take for right (another task with the same answer). The files are written to ``--out``
(``NAME.jsonl``: task_id, response, label, variant) and graded with :func:`hub.review.fidelity.measure`,
exactly what ``verihub fidelity reasoning-gym --env-arg dataset=NAME --labels DIR/NAME.jsonl``
prints. The table gives accuracy, false-positive and false-negative rates (Wilson 95%), and
the variants behind the errors, and the wrong responses the scorer gives a non-zero score
(partial credit: not a pass, but reward to a trainer that uses the score).

    python bench/fidelity_reasoning_gym.py --tasks 40 --out /tmp/rg-labels
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from probe_reasoning_gym import DATASETS  # the same ten datasets as the probes (bench/ is on the path)

from hub.env.types import Rollout, Task, Timing
from hub.review.fidelity import FidelityReport, measure, read_labels
from hub.train.reasoning_gym import ReasoningGymEnv

__all__ = ["label_file", "main", "responses"]

_INT = re.compile(r"-?\d+")


def _swap(items: list[str]) -> list[str] | None:
    """The first two neighbouring items that differ, swapped."""
    for i in range(len(items) - 1):
        if items[i] != items[i + 1]:
            return [*items[:i], items[i + 1], items[i], *items[i + 2 :]]
    return None


def _letter_changed(text: str) -> str | None:
    for i, ch in enumerate(text):
        if ch.isalpha():
            new = "b" if ch.lower() == "a" else "a"
            return text[:i] + (new.upper() if ch.isupper() else new) + text[i + 1 :]
    return None


def _right(dataset: str, ref: str) -> Iterator[tuple[str, str]]:
    yield "gold", f"Answer: {ref}"
    yield "reasoning first", f"Let me work through it step by step.\nSo the result is clear.\nAnswer: {ref}"
    yield "spaces and full stop", f"Answer:   {ref}.  " if _INT.fullmatch(ref) else f"Answer:   {ref}   \n"
    yield "answer tags", f"<answer>{ref}</answer>"
    if dataset == "leg_counting":
        yield "with its unit", f"Answer: {ref} legs"
    if dataset == "base_conversion" and ref.upper() != ref:
        yield "upper-case digits", f"Answer: {ref.upper()}"
    if dataset == "caesar_cipher":
        yield "lower case", f"Answer: {ref.lower()}"
    if dataset == "word_sorting":
        yield "no space after commas", f"Answer: {ref.replace(', ', ',')}"
    if dataset == "number_sorting":
        yield "no spaces in the list", f"Answer: {ref.replace(' ', '')}"


def _wrong(ref: str, other: str) -> Iterator[tuple[str, str]]:
    if other.strip() != ref.strip():
        yield "another task's answer", f"Answer: {other}"
    if _INT.fullmatch(ref):
        yield "off by one", f"Answer: {int(ref) + 1}"
        yield "sign flipped" if ref != "0" else "off by two", f"Answer: {-int(ref) if ref != '0' else 2}"
    numbers = list(_INT.finditer(ref))
    if numbers and not _INT.fullmatch(ref):
        last = numbers[-1]
        yield (
            "one number off by one",
            f"Answer: {ref[: last.start()]}{int(last.group()) + 1}{ref[last.end() :]}",
        )
    if len(ref) > 1:
        yield "cut short", f"Answer: {ref[: max(1, len(ref) // 2)]}"
    changed = _letter_changed(ref)
    if changed is not None and changed != ref:
        yield "one letter changed", f"Answer: {changed}"
    items = ref.split(", ") if ", " in ref else list(ref)
    swapped = _swap(items)
    if swapped is not None and len(items) > 1:
        joined = ", ".join(swapped) if ", " in ref else "".join(swapped)
        yield "two neighbours swapped", f"Answer: {joined}"
    yield "empty answer", "Answer: "


def responses(dataset: str, tasks: list[Task]) -> Iterator[dict[str, object]]:
    """The labelled lines for ``tasks`` (see the module docstring)."""
    for i, task in enumerate(tasks):
        ref = str(task.answer)
        other = str(tasks[(i + 1) % len(tasks)].answer)
        for variant, text in _right(dataset, ref):
            yield {"task_id": task.id, "response": text, "label": True, "variant": variant}
        for variant, text in _wrong(ref, other):
            yield {"task_id": task.id, "response": text, "label": False, "variant": variant}


def label_file(dataset: str, n: int, path: Path) -> list[Task]:
    """Write the label file of ``n`` test tasks of ``dataset`` to ``path``; returns the tasks."""
    env = ReasoningGymEnv(dataset)
    tasks = list(itertools.islice(env.tasks("test", seed=0), n))
    with path.open("w", encoding="utf-8") as fh:
        for row in responses(dataset, tasks):
            fh.write(json.dumps(row) + "\n")
    return tasks


async def _scores(env: ReasoningGymEnv, tasks: dict[str, Task], rows: list[dict[str, object]]) -> list[float]:
    out = []
    for row in rows:
        task = tasks[str(row["task_id"])]
        text = str(row["response"])
        rollout = Rollout(
            task_id=task.id, rollout_index=0, messages=[], completion=text, timing=Timing(started_at=0)
        )
        out.append((await env.grade(task, rollout)).score)
    return out


def _measure(
    dataset: str, n: int, out: Path
) -> tuple[FidelityReport, Counter[str], dict[str, list[float]], int]:
    path = out / f"{dataset}.jsonl"
    tasks = label_file(dataset, n, path)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    env = ReasoningGymEnv(dataset)
    report = asyncio.run(measure(env, read_labels(path), source=str(path), examples=len(rows)))
    variants = Counter(
        f"{'FP' if e.kind == 'false_positive' else 'FN'} {rows[e.line - 1]['variant']}"
        for e in report.examples
    )
    scores = asyncio.run(_scores(env, {t.id: t for t in tasks}, rows))
    partial: dict[str, list[float]] = {}
    for row, score in zip(rows, scores, strict=True):
        if not row["label"] and score > 0:
            partial.setdefault(str(row["variant"]), []).append(score)
    return report, variants, partial, sum(1 for row in rows if not row["label"])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--datasets", nargs="*", default=DATASETS)
    parser.add_argument("--out", type=Path, default=Path("rg-labels"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    print(
        "| dataset | lines | accuracy | FPR (wrong passed) | FNR (right refused) "
        "| errors by variant | wrong but score > 0 (variant: count, highest score) |"
    )
    print("| --- | ---: | --- | --- | --- | --- | --- |")
    for name in args.datasets:
        report, variants, partial, wrong = _measure(name, args.tasks, args.out)
        shown = ", ".join(f"{k} ({v})" for k, v in sorted(variants.items())) or "none"
        credit = ", ".join(f"{k}: {len(v)}, {max(v):.2f}" for k, v in sorted(partial.items()))
        credit = f"{sum(len(v) for v in partial.values())}/{wrong}" + (f" ({credit})" if credit else "")
        print(
            f"| {name} | {report.n} | {report.accuracy.text()} | {report.false_positive_rate.text()} | "
            f"{report.false_negative_rate.text()} | {shown} | {credit} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
