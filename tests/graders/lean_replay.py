"""REPLAY STAND-IN for the Lean REPL: serves recorded real answers, runs no Lean at all.

This is not Lean. It answers each JSON command (blank-line separated, on stdin) with the
answer the real ``leanprover-community/repl`` gave to the same command in the recorded
transcripts of ``../shared/data/lean_repl/`` (``NAME.in`` / ``NAME.expected.out``), verbatim,
so the protocol layer of :mod:`graders.proof.lean_repl` is tested against real output.

Matching: a command matches a recorded one when they are equal as JSON except for the ``env``
number (a checker's base environment is numbered differently from the recording session).
Repeated commands get their recorded answers in order. Options:

- ``--extra FILE``: extra ``[command, answer]`` pairs, SYNTHESISED by a test in the REPL's
  format for commands the recordings do not cover (the checker's re-check commands: the
  prelude that elaborates the statement, the check theorem and its ``#print axioms``); a test
  must label them as synthesised;
- ``--hang-on TEXT``: never answer a command containing TEXT (stands in for a proof that loops
  forever, to test the wall-clock kill);
- an unmatched command gets ``{"message": "replay stand-in: no recorded answer ..."}``.

Usage: ``python lean_replay.py --dir DIR [--extra FILE] [--hang-on TEXT] [NAME ...]``
(no NAME: every transcript in DIR).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

__all__ = ["load_pairs", "main", "split_chunks"]


def split_chunks(text: str) -> list[str]:
    """Blank-line separated chunks (the REPL's framing)."""
    return [c.strip() for c in re.split(r"\n\s*\n", text) if c.strip()]


def _key(command: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in command.items() if k != "env"}, sort_keys=True, ensure_ascii=False)


def load_pairs(directory: Path, names: list[str]) -> list[tuple[dict[str, Any], str]]:
    """(command, recorded answer text) pairs of the named transcripts (all when ``names`` is empty)."""
    if not names:
        names = sorted(p.name[: -len(".expected.out")] for p in directory.glob("*.expected.out"))
    pairs: list[tuple[dict[str, Any], str]] = []
    for name in names:
        cmds = split_chunks((directory / f"{name}.in").read_text(encoding="utf-8"))
        outs = split_chunks((directory / f"{name}.expected.out").read_text(encoding="utf-8"))
        for cmd, out in zip(cmds, outs, strict=False):  # a transcript may end early
            try:
                pairs.append((json.loads(cmd), out))
            except json.JSONDecodeError:
                continue  # a few recordings hold raw control characters; not replayable
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Replay stand-in for the Lean REPL (recorded answers).")
    parser.add_argument("--dir", required=True, type=Path)
    parser.add_argument("--extra", type=Path)
    parser.add_argument("--hang-on", action="append", default=[])
    parser.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    table: dict[str, deque[str]] = {}
    pairs = load_pairs(args.dir, args.names)
    if args.extra:
        pairs += [(c, json.dumps(a)) for c, a in json.loads(args.extra.read_text(encoding="utf-8"))]
    for cmd, out in pairs:
        table.setdefault(_key(cmd), deque()).append(out)
    buf: list[str] = []
    for line in sys.stdin:
        if line.strip():
            buf.append(line)
            continue
        if not buf:
            continue
        raw, buf = "".join(buf), []
        try:
            command = json.loads(raw)
        except json.JSONDecodeError:
            answer = json.dumps({"message": "replay stand-in: could not parse the command"})
        else:
            text = json.dumps(command, ensure_ascii=False)
            if any(h in text for h in args.hang_on):
                while True:  # stands in for a looping proof: never answers
                    time.sleep(3600)
            answers = table.get(_key(command))
            if answers:
                answer = answers.popleft() if len(answers) > 1 else answers[0]
            else:
                answer = json.dumps({"message": "replay stand-in: no recorded answer for this command"})
        sys.stdout.write(answer + "\n\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
