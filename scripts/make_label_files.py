"""Write label files for ``verihub fidelity`` from the labelled public data in the shared folder.

Usage: python scripts/make_label_files.py [--data DIR] [--out DIR] [--only ENV] [--limit N]
       python scripts/make_label_files.py --packaged

``--packaged`` writes the label files the shipped procedural environments carry in their
packages (``environments/{arith,textops}/verihub_*/labels.jsonl``): responses written for the
environment's own test tasks, labelled by construction (see :func:`arith_labels`,
:func:`textops_labels`); the hub's review measures the version's grader on them.

``--data``: the shared data folder (default ``$VERIHUB_SHARED_DATA``, else ``../shared/data``).
``--out``: where ``gsm8k.jsonl``, ``ifeval.jsonl`` and ``nq_open.jsonl`` are written (default
``build/labels``, which git ignores: the repository holds no copy of public datasets).

- gsm8k: OpenAI's published model solutions (``gsm8k_labelled/model_solutions.jsonl``, four per
  question), each labelled with its published ``is_correct``, on the GSM8K test task of its question.
- ifeval: GPT-4's published responses, labelled true when the reference implementation's strict
  verdicts say every instruction was followed.
- nq_open: model predictions rated by people, ``def_correct`` as true and ``def_incorrect`` as
  false; ``poss_correct`` ones are left out (counted in the output).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ENVS = ("gsm8k", "ifeval", "nq_open")
SOLVERS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for text in handle:
            if text.strip():
                yield json.loads(text)


def gsm8k_labels(data: Path, notes: list[str]) -> Iterator[dict[str, Any]]:
    """Labelled model solutions on the task ids of the GSM8K test split (``gsm8k-test-NNNN``)."""
    index = {row["question"].strip(): i for i, row in enumerate(_rows(data / "gsm8k" / "test.jsonl"))}
    missing = 0
    for row in _rows(data / "gsm8k_labelled" / "model_solutions.jsonl"):
        i = index.get(row["question"].strip())
        if i is None:
            missing += 1
            continue
        for solver in SOLVERS:
            item = row[solver]
            yield {
                "task_id": f"gsm8k-test-{i:04d}",
                "response": item["solution"],
                "label": bool(item["is_correct"]),
            }
    notes.append(f"gsm8k: {missing} labelled questions not in the test split, left out")


def ifeval_labels(data: Path, notes: list[str]) -> Iterator[dict[str, Any]]:
    """GPT-4 responses; label: every instruction followed by the reference's strict verdicts."""
    for row in _rows(data / "ifeval" / "gpt4_responses_with_reference_verdicts.jsonl"):
        yield {"task_id": f"ifeval-{row['key']}", "response": row["response"], "label": all(row["strict"])}


def nq_open_labels(data: Path, notes: list[str]) -> Iterator[dict[str, Any]]:
    """Human-rated predictions on the environment's own task ids (made by its ``make_tasks``)."""
    from verihub_nq_open import make_tasks

    rows = list(_rows(data / "nq_open" / "test.jsonl"))
    possible = 0
    for row, task in zip(rows, make_tasks(rows), strict=True):
        for pred in row.get("def_correct_predictions", []):
            yield {"task_id": task.id, "response": pred, "label": True}
        for pred in row.get("def_incorrect_predictions", []):
            yield {"task_id": task.id, "response": pred, "label": False}
        possible += len(row.get("poss_correct_predictions", []))
    notes.append(f"nq_open: {possible} 'possibly correct' predictions left out")


def _arith_responses(expr: str, value: int) -> Iterator[tuple[str, bool]]:
    """Honest answers in the usual forms (true) and wrong or hedged ones (false)."""
    v, shown = value, f"{value:,}" if abs(value) >= 1000 else str(value)
    yield f"Answer: {v}", True
    yield f"{expr} = {v}\nAnswer: {v}", True
    yield f"Let me work it out step by step.\n{expr} = {v}\n\\boxed{{{v}}}", True
    yield f"The result is {shown}.\n#### {v}", True
    yield f"Answer: **{v}**", True
    yield f"Answer: {v}\nHope this helps!", True
    yield f"Answer: {v + 1}", False
    yield f"Answer: {-v if v else 1}", False
    yield f"Answer: {v} or {v + 1}", False
    yield f"\\boxed{{{v + 10}}}\nAnswer: {v}", False
    yield f"Answer: {expr}", False
    yield f"Answer: {v}\nWait, actually it's {v + 2}.", False
    yield "I am not sure how to compute this.", False
    yield f"Answer: {v}.5", False


def arith_labels(n_tasks: int = 40) -> Iterator[dict[str, Any]]:
    """Responses to the first ``n_tasks`` arith test tasks (seed 0, every level), labelled by
    construction: the honest forms of the right value are right; another value, a hedge between
    two values, an unevaluated expression, a later correction, no answer and a decimal are wrong.
    Lines give the prompt and the reference (arith's tasks are generated, not listed)."""
    from itertools import islice

    from verihub_arith import generate

    for task in islice(generate("test", 0), n_tasks):
        expr = str(task.metadata["expression"])
        for response, label in _arith_responses(expr, int(str(task.answer))):
            yield {"prompt": task.prompt, "reference": task.answer, "response": response, "label": label}


def _textops_wrong(op: str, word: str, answer: str) -> str:
    """A plausible mistake: the word left as it was, the other end's letter, one more."""
    if op in ("length", "count"):
        return str(int(answer) + 1)
    if op in ("first", "last"):
        other = word[-1] if op == "first" else word[0]
        return other if other != answer.lower() else "q" if answer.lower() != "q" else "z"
    return word if word != answer else word + "a"  # upper, reverse, sort: not done


def textops_labels(n_tasks: int = 40) -> Iterator[dict[str, Any]]:
    """Responses to the first ``n_tasks`` textops test tasks (seed 0, every level), by task id,
    labelled by construction: the answer in the usual forms (a letter in either case) is right;
    a mistake, a hedge, a box with the mistake, a later correction and no answer are wrong."""
    import re
    from itertools import islice

    from verihub_textops import generate

    for task in islice(generate("test", 0), n_tasks):
        a, op = str(task.answer), str(task.metadata["operation"])
        word = re.findall(r"'([a-z]+)'", str(task.prompt))[-1]
        b = _textops_wrong(op, word, a)
        forms = [
            (f"Answer: {a}", True),
            (f"\\boxed{{{a}}}", True),
            (f'The answer is "{a}".', True),
            (f"#### {a}", True),
            (f"Answer: **{a}**", True),
            (f"Answer: {b}", False),
            (f"Answer: {a} or {b}", False),
            (f"\\boxed{{{b}}}\nAnswer: {a}", False),
            (f"Answer: {a}\nWait, actually it's {b}.", False),
            ("I cannot tell.", False),
        ]
        if op in ("first", "last"):
            forms.append((f"Answer: {a.swapcase()}", True))
        for response, label in forms:
            yield {"task_id": task.id, "response": response, "label": label}


PACKAGED = {
    "arith": Path("environments/arith/verihub_arith/labels.jsonl"),
    "textops": Path("environments/textops/verihub_textops/labels.jsonl"),
}
"""The label files shipped inside environment packages, by environment id."""

MAKERS = {"gsm8k": gsm8k_labels, "ifeval": ifeval_labels, "nq_open": nq_open_labels}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, help="shared data folder")
    parser.add_argument("--out", type=Path, default=Path("build/labels"), help="output folder")
    parser.add_argument("--only", choices=ENVS, action="append", help="one environment (repeatable)")
    parser.add_argument("--limit", type=int, help="first N labelled responses per file")
    parser.add_argument("--packaged", action="store_true", help="write the packages' own label files")
    args = parser.parse_args(argv)
    if args.packaged:
        for env_id, path in PACKAGED.items():
            rows = list(arith_labels() if env_id == "arith" else textops_labels())
            with path.open("w", encoding="utf-8") as out:
                out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
            right = sum(row["label"] for row in rows)
            print(f"{path}: {len(rows)} lines ({right} true, {len(rows) - right} false)")
        return 0
    if args.data is None:
        from hub.review.testing import shared_data_dir

        args.data = shared_data_dir()
    args.out.mkdir(parents=True, exist_ok=True)
    for env_id in args.only or ENVS:
        notes: list[str] = []
        path = args.out / f"{env_id}.jsonl"
        counts = {True: 0, False: 0}
        with path.open("w", encoding="utf-8") as out:
            for n, item in enumerate(MAKERS[env_id](args.data, notes)):
                if args.limit is not None and n >= args.limit:
                    break
                counts[item["label"]] += 1
                out.write(json.dumps(item, ensure_ascii=False) + "\n")
        print(f"{path}: {counts[True] + counts[False]} lines ({counts[True]} true, {counts[False]} false)")
        for note in notes:
            print(f"  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
