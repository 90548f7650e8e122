"""Fidelity of graders.qa against human answer-equivalence ratings on NQ-open.

Usage: python bench/fidelity_qa.py [PATH] [--coarser-dates] [--allow-extra-names] [--show-errors]

PATH defaults to ``<shared data>/nq_open/test.jsonl``. Prints the accept rate on predictions that
raters judged definitely correct (exact match rejects all of them by construction), the reject
rate on those judged definitely incorrect, and the pass rate of the gold aliases themselves.
"""

from __future__ import annotations

import argparse
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
    args = parser.parse_args(argv)
    path = args.path or shared_data_dir() / "nq_open" / "test.jsonl"
    options = EquivalenceOptions(coarser_dates=args.coarser_dates, no_extra_names=not args.allow_extra_names)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    started = time.perf_counter()
    accepted = n_correct = rejected = n_incorrect = gold_ok = n_gold = 0
    rules: Counter[str] = Counter()
    for row in rows:
        answers = row["answer"]
        for pred in row.get("def_correct_predictions", []):
            verdict = check(pred, answers=answers, equivalence=options)
            n_correct += 1
            if verdict.passed:
                accepted += 1
                rules[verdict.rule or "?"] += 1
            elif args.show_errors:
                print(f"false fail: {pred!r} vs {answers}")
        for pred in row.get("def_incorrect_predictions", []):
            verdict = check(pred, answers=answers, equivalence=options)
            n_incorrect += 1
            if not verdict.passed:
                rejected += 1
            elif args.show_errors:
                print(f"FALSE PASS: {pred!r} vs {answers} ({verdict.reason})")
        for alias in answers:
            n_gold += 1
            gold_ok += check(alias, answers=answers, equivalence=options).passed
    elapsed = time.perf_counter() - started
    print(f"file: {path} ({len(rows)} questions, {elapsed:.1f}s), {options}")
    print(
        f"accept rate, def_correct_predictions:   {accepted}/{n_correct} = {100 * accepted / n_correct:.1f}%"
    )
    reject_rate = 100 * rejected / n_incorrect
    print(f"reject rate, def_incorrect_predictions: {rejected}/{n_incorrect} = {reject_rate:.2f}%")
    print(f"gold aliases accepted:                  {gold_ok}/{n_gold} = {100 * gold_ok / n_gold:.1f}%")
    print("accepted def_correct by rule: " + ", ".join(f"{k} {v}" for k, v in rules.most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
