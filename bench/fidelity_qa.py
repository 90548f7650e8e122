"""Fidelity of graders.qa against human answer-equivalence ratings on NQ-open.

Usage: python bench/fidelity_qa.py [PATH] [--fold 0|1|all] [--coarser-dates] [--allow-extra-names]
       [--show-errors]

PATH defaults to ``<shared data>/nq_open/test.jsonl``. Prints the accept rate on predictions that
raters judged definitely correct (exact match rejects all of them by construction), the reject
rate on those judged definitely incorrect, and the pass rate of the gold aliases themselves, with
the rules that accepted each (true passes and false passes by rule).

``--fold``: the questions are split in two halves by a hash of the question text (fold 0: even
first byte of its SHA-256, fold 1: odd), so rules can be tuned on one half and measured on the
other, in both directions. Without it both folds are reported, then the whole file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from pathlib import Path

from graders.qa import EquivalenceOptions, check
from hub.review.testing import shared_data_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path)
    parser.add_argument("--coarser-dates", action="store_true", help="accept '2014' for 'October 5, 2014'")
    parser.add_argument(
        "--allow-extra-names",
        action="store_true",
        help="accept any word around the gold: 'Jimmy Carter' for 'Carter' (and 'paris london')",
    )
    parser.add_argument("--show-errors", action="store_true", help="print false passes and false fails")
    parser.add_argument("--fold", choices=["0", "1", "all"], help="one half of the questions (default: each)")
    args = parser.parse_args(argv)
    path = args.path or shared_data_dir() / "nq_open" / "test.jsonl"
    options = EquivalenceOptions(coarser_dates=args.coarser_dates, no_extra_names=not args.allow_extra_names)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    folds = ["0", "1", "all"] if args.fold is None else [args.fold]
    print(f"file: {path} ({len(rows)} questions), {options}")
    for fold in folds:
        chosen = [r for r in rows if fold == "all" or str(fold_of(r["question"])) == fold]
        _report(f"fold {fold}", chosen, options, show_errors=args.show_errors)
    return 0


def fold_of(question: str) -> int:
    """0 or 1: which half a question belongs to (a hash of its text, stable across runs)."""
    return hashlib.sha256(question.encode("utf-8")).digest()[0] % 2


def _report(
    label: str, rows: list[dict[str, object]], options: EquivalenceOptions, *, show_errors: bool
) -> None:
    started = time.perf_counter()
    accepted = n_correct = rejected = n_incorrect = gold_ok = n_gold = 0
    rules: Counter[str] = Counter()
    false_rules: Counter[str] = Counter()
    for row in rows:
        answers = row["answer"]
        assert isinstance(answers, list)
        for pred in row.get("def_correct_predictions", []):  # type: ignore[attr-defined]
            verdict = check(pred, answers=answers, equivalence=options)
            n_correct += 1
            if verdict.passed:
                accepted += 1
                rules[verdict.rule or "?"] += 1
            elif show_errors:
                print(f"false fail: {pred!r} vs {answers}")
        for pred in row.get("def_incorrect_predictions", []):  # type: ignore[attr-defined]
            verdict = check(pred, answers=answers, equivalence=options)
            n_incorrect += 1
            if not verdict.passed:
                rejected += 1
            else:
                false_rules[verdict.rule or "?"] += 1
                if show_errors:
                    print(f"FALSE PASS: {pred!r} vs {answers} ({verdict.reason})")
        for alias in answers:
            n_gold += 1
            gold_ok += check(alias, answers=answers, equivalence=options).passed
    elapsed = time.perf_counter() - started
    print(f"== {label}: {len(rows)} questions ({elapsed:.1f}s)")
    accept_rate = 100 * accepted / max(1, n_correct)
    print(f"accept rate, def_correct_predictions:   {accepted}/{n_correct} = {accept_rate:.1f}%")
    reject_rate = 100 * rejected / max(1, n_incorrect)
    print(f"reject rate, def_incorrect_predictions: {rejected}/{n_incorrect} = {reject_rate:.2f}%")
    print(
        f"gold aliases accepted:                  {gold_ok}/{n_gold} = {100 * gold_ok / max(1, n_gold):.1f}%"
    )
    print("true passes by rule:  " + ", ".join(f"{k} {v}" for k, v in rules.most_common()))
    print("false passes by rule: " + (", ".join(f"{k} {v}" for k, v in false_rules.most_common()) or "none"))


if __name__ == "__main__":
    sys.exit(main())
