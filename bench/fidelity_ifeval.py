"""Fidelity of graders.ifeval against the reference implementation's verdicts.

Usage: python bench/fidelity_ifeval.py [PATH] [--show-disagreements]

PATH defaults to ``<shared data>/ifeval/gpt4_responses_with_reference_verdicts.jsonl``. Prints
per-instruction agreement (strict, loose), prompt-level accuracy of ours and of the reference,
and (with --show-disagreements) every instruction where the verdicts differ.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from graders.ifeval import check
from hub.review.testing import shared_data_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path)
    parser.add_argument("--show-disagreements", action="store_true")
    args = parser.parse_args(argv)
    path = args.path or shared_data_dir() / "ifeval" / "gpt4_responses_with_reference_verdicts.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    started = time.perf_counter()
    n_instr = agree_s = agree_l = 0
    ours_ps = ours_pl = ref_ps = ref_pl = 0
    disagreements: Counter[str] = Counter()
    for row in rows:
        verdict = check(
            row["response"],
            instruction_id_list=row["instruction_id_list"],
            kwargs=row["kwargs"],
            prompt=row["prompt"],
        )
        for i, iid in enumerate(row["instruction_id_list"]):
            n_instr += 1
            agree_s += verdict.strict[i] == row["strict"][i]
            agree_l += verdict.loose[i] == row["loose"][i]
            for mode, ours, ref in (
                ("strict", verdict.strict[i], row["strict"][i]),
                ("loose", verdict.loose[i], row["loose"][i]),
            ):
                if ours != ref:
                    disagreements[f"{iid} ({mode})"] += 1
                    if args.show_disagreements:
                        print(f"key={row['key']} {iid} {mode}: ours={ours} reference={ref}")
        ours_ps += verdict.prompt_strict
        ours_pl += verdict.prompt_loose
        ref_ps += all(row["strict"])
        ref_pl += all(row["loose"])
    elapsed = time.perf_counter() - started
    n = len(rows)
    print(f"file: {path} ({n} prompts, {n_instr} instructions, {elapsed:.1f}s)")
    print(f"per-instruction agreement, strict: {agree_s}/{n_instr} = {100 * agree_s / n_instr:.2f}%")
    print(f"per-instruction agreement, loose:  {agree_l}/{n_instr} = {100 * agree_l / n_instr:.2f}%")
    print(f"prompt-level accuracy, strict: ours {100 * ours_ps / n:.2f}%  reference {100 * ref_ps / n:.2f}%")
    print(f"prompt-level accuracy, loose:  ours {100 * ours_pl / n:.2f}%  reference {100 * ref_pl / n:.2f}%")
    for name, count in disagreements.most_common():
        print(f"  disagreement: {name}: {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
