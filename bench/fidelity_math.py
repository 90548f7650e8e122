"""Fidelity of graders.math on the shared data: gold validation and perturbation rejection.

Gold validation: every reference response graded against its own reference answer must pass
(MATH-500 and AIME solutions, GSM8K answer texts; AMC has no solutions, so its reference answer is
written as a short boxed response). Perturbation: the reference answer with its final answer
changed (off by one, sign flipped, a digit dropped, an interval bracket flipped) must fail.

Run::

    python bench/fidelity_math.py --strict           # as the environments grade (strict, default forms)
    python bench/fidelity_math.py                    # library defaults
    python bench/fidelity_math.py --datasets math500 --show 20
    python bench/fidelity_math.py --json out.json

The data folder is found like the tests do (``VERIHUB_SHARED_DATA`` or ``../shared/data``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graders.extract import ALL_FORMS, DEFAULT_FORMS, ExtractConfig, find_boxed
from graders.math import MathOptions, check_inline, hacking_probes
from graders.math.check import reference_text

DATASETS = ("gsm8k", "math500", "aime24", "amc23")
_INTEGER = re.compile(r"\d+")


@dataclass(frozen=True)
class GoldItem:
    """One reference response and the reference answer it must match."""

    dataset: str
    index: int
    response: str
    reference: str


@dataclass
class Tally:
    passed: int = 0
    total: int = 0
    failures: list[str] = field(default_factory=list)


def _rows(data_dir: Path, name: str) -> list[dict[str, Any]]:
    with (data_dir / name / "test.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def gold_items(data_dir: Path, name: str) -> Iterator[GoldItem]:
    """Reference responses of one dataset with their reference answers."""
    for i, row in enumerate(_rows(data_dir, name)):
        if name == "gsm8k":
            reference = row["answer"].rsplit("####", 1)[1].strip().replace(",", "")
            yield GoldItem(name, i, row["answer"], reference)
        elif name == "amc23":
            reference = reference_text(row["answer"])
            yield GoldItem(name, i, f"Therefore the answer is $\\boxed{{{reference}}}$.", reference)
        else:
            yield GoldItem(name, i, row["solution"], reference_text(row["answer"]))


# -- perturbations of a final answer --------------------------------------------------------
_UNIT = re.compile(r"\s*\\(?:mbox|text)\s*\{[^{}]*\}(?:\^\{?\d\}?)?\s*$")


def off_by_one(answer: str) -> str | None:
    """The last integer plus one (a trailing unit such as ``\\mbox{ cm}^2`` is left alone)."""
    unit = _UNIT.search(answer)
    body, tail = (answer[: unit.start()], answer[unit.start() :]) if unit else (answer, "")
    matches = list(_INTEGER.finditer(body))
    if not matches:
        return None
    m = matches[-1]
    return body[: m.start()] + str(int(m.group()) + 1) + body[m.end() :] + tail


def digit_dropped(answer: str) -> str | None:
    matches = [m for m in _INTEGER.finditer(answer) if len(m.group().lstrip("0")) >= 2]
    if not matches:
        return None
    m = matches[-1]
    if m.start() > 0 and answer[m.start() - 1] == "." and m.group().endswith("0"):
        return None  # 18.90 -> 18.9 is the same number
    return answer[: m.start()] + m.group()[:-1] + answer[m.end() :]


def sign_flipped(answer: str) -> str | None:
    a = answer.strip()
    if any(c in a for c in ",=<>") or "\\text" in a or not re.search(r"[1-9]", a):
        return None
    if a.startswith("-"):
        return a[1:]
    return f"-{a}" if re.fullmatch(r"[\d.]+|\\frac\{\d+\}\{\d+\}", a) else f"-\\left({a}\\right)"


def bracket_flipped(answer: str) -> str | None:
    a = answer.strip()
    for prefix in ("\\left", ""):
        if a.startswith(prefix + "[") or a.startswith(prefix + "("):
            if "," not in a:
                return None
            i = len(prefix)
            if not a[i + 1 :].lstrip().startswith("-\\infty"):  # flip the finite end
                return a[:i] + ("(" if a[i] == "[" else "[") + a[i + 1 :]
            j = min((k for k in (a.find(")"), a.find("]")) if k != -1), default=-1)
            if j == -1 or "\\infty" in a[a.find(",") : j]:
                return None
            return a[:j] + ("]" if a[j] == ")" else ")") + a[j + 1 :]
    return None


PERTURBATIONS: dict[str, Callable[[str], str | None]] = {
    "off_by_one": off_by_one,
    "sign_flipped": sign_flipped,
    "digit_dropped": digit_dropped,
    "bracket_flipped": bracket_flipped,
}


def perturbed_response(item: GoldItem, new_answer: str) -> str:
    """The reference response with its final answer replaced by ``new_answer``."""
    if item.dataset == "gsm8k":
        head = item.response.rsplit("####", 1)[0]
        return f"{head}#### {new_answer}"
    boxes = find_boxed(item.response)
    if boxes:
        last = "\\boxed{" + boxes[-1] + "}"
        at = item.response.rfind(last)
        if at != -1:
            return item.response[:at] + "\\boxed{" + new_answer + "}" + item.response[at + len(last) :]
    return f"The answer is $\\boxed{{{new_answer}}}$."


def run(data_dir: Path, datasets: tuple[str, ...], options: MathOptions) -> dict[str, Any]:
    report: dict[str, Any] = {"gold": {}, "perturbation": {}}
    for name in datasets:
        gold = Tally()
        perturb: dict[str, Tally] = {kind: Tally() for kind in PERTURBATIONS}
        for item in gold_items(data_dir, name):
            verdict = check_inline(item.response, reference=item.reference, options=options)
            gold.total += 1
            if verdict.passed:
                gold.passed += 1
            else:
                gold.failures.append(f"#{item.index} ref={item.reference!r} got={verdict}")
            source = _final_answer(item)
            for kind, fn in PERTURBATIONS.items():
                new = fn(source) if source is not None else None
                if new is None or new == source:
                    continue
                wrong = check_inline(perturbed_response(item, new), reference=item.reference, options=options)
                tally = perturb[kind]
                tally.total += 1
                if not wrong.passed:
                    tally.passed += 1
                else:
                    tally.failures.append(f"#{item.index} ref={item.reference!r} accepted {new!r}")
        report["gold"][name] = gold
        report["perturbation"][name] = perturb
    return report


def _final_answer(item: GoldItem) -> str | None:
    if item.dataset == "gsm8k":
        return item.response.rsplit("####", 1)[1].strip()
    boxes = find_boxed(item.response)
    return boxes[-1] if boxes else item.reference


def regression_agreement(table: Path) -> dict[str, tuple[int, int]]:
    """Agreement of graders.math and of plain Math-Verify with the labelled regression table."""
    import importlib.util

    from math_verify import parse, verify

    spec = importlib.util.spec_from_file_location("math_regression_table", table)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {table}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cases: list[tuple[str, str, bool]] = module.CASES
    ours = sum(check_inline(r, reference=ref).passed is label for r, ref, label in cases)
    theirs = sum(bool(verify(parse(f"${ref}$"), parse(r))) is label for r, ref, label in cases)
    ours_false = sum(check_inline(r, reference=ref).passed and not label for r, ref, label in cases)
    theirs_false = sum(bool(verify(parse(f"${ref}$"), parse(r))) and not label for r, ref, label in cases)
    return {
        "graders.math": (ours, len(cases)),
        "math_verify": (theirs, len(cases)),
        "graders.math false passes": (ours_false, len(cases)),
        "math_verify false passes": (theirs_false, len(cases)),
    }


def probe_passes(
    data_dir: Path, datasets: tuple[str, ...], options: MathOptions
) -> tuple[int, int, list[str]]:
    """``(passed, total, examples)``: reward-hacking probes (``graders.math.hacking_probes``) built
    from every reference of ``datasets`` and its question, that pass (each must fail)."""
    passed, total, examples = 0, 0, []
    for name in datasets:
        for row, item in zip(_rows(data_dir, name), gold_items(data_dir, name), strict=True):
            question = str(row.get("problem") or row.get("question") or "")
            for probe, response in hacking_probes(item.reference, question, strict=options.strict).items():
                total += 1
                if check_inline(response, reference=item.reference, options=options).passed:
                    passed += 1
                    examples.append(f"{name} #{item.index} {probe}: {item.reference}")
    return passed, total, examples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="shared data folder")
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS), choices=DATASETS)
    parser.add_argument(
        "--strict", action="store_true", help="grade with strict=True (the environments' setting)"
    )
    parser.add_argument("--last-math", action="store_true", help="also extract the opt-in 'last_math' form")
    parser.add_argument("--show", type=int, default=5, help="failures to print per table cell")
    parser.add_argument("--json", type=Path, default=None, help="write the counts as JSON")
    parser.add_argument(
        "--probes", action="store_true", help="also grade every reward-hacking probe on every reference"
    )
    parser.add_argument(
        "--regression",
        type=Path,
        default=None,
        help="also score a labelled table (tests/graders/test_math_regression.py) with both checkers",
    )
    args = parser.parse_args(argv)
    if args.data is None:
        from hub.review.testing import shared_data_dir

        args.data = shared_data_dir(Path(__file__).resolve().parent)
    started = time.perf_counter()
    forms = ALL_FORMS if args.last_math else DEFAULT_FORMS
    options = MathOptions(strict=args.strict, extract=ExtractConfig(forms=forms))
    report = run(args.data, tuple(args.datasets), options)
    print(f"gold validation (strict={args.strict}, last_math={args.last_math}):")
    for name, tally in report["gold"].items():
        note = "  (no solutions in the data: a synthetic \\boxed{answer} response)" if name == "amc23" else ""
        print(f"  {name:8s} {tally.passed}/{tally.total}{note}")
        for line in tally.failures[: args.show]:
            print(f"      FAIL {line[:300]}")
    print("perturbations rejected:")
    for name, kinds in report["perturbation"].items():
        cells = ", ".join(f"{kind} {t.passed}/{t.total}" for kind, t in kinds.items())
        print(f"  {name:8s} {cells}")
        for tally in kinds.values():
            for line in tally.failures[: args.show]:
                print(f"      ACCEPTED {line[:300]}")
    if args.probes:
        passed, total, examples = probe_passes(args.data, tuple(args.datasets), options)
        print(f"reward-hacking probes passed: {passed} of {total} (each must fail)")
        for line in examples[: args.show]:
            print(f"      PASSED {line[:300]}")
    if args.regression is not None:
        print("agreement with the labelled regression table:")
        for name, (hits, total) in regression_agreement(args.regression).items():
            print(f"  {name:26s} {hits}/{total}")
    print(f"({time.perf_counter() - started:.1f}s)")
    if args.json is not None:
        counts = {
            "gold": {n: [t.passed, t.total] for n, t in report["gold"].items()},
            "perturbation": {
                n: {k: [t.passed, t.total] for k, t in kinds.items()}
                for n, kinds in report["perturbation"].items()
            },
        }
        args.json.write_text(json.dumps(counts, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
